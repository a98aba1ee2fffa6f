/* The attach protocol's reply ("CODE\n" then the command's output), which a
 * JVM, or any process of the JVM's user listening on its socket, writes.
 * read_reply is static, so the whole command runs: the socket it would
 * connect to is replaced at link time (Makefile: FUZZ_WRAP_attach) by one end
 * of a socketpair whose other end already holds the reply and is shut for
 * writing, so the reply ends where the input does. The first input byte
 * picks the caller's output size (1 to 63, or 4096); the rest is the reply. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jvm_attach.h"

#define REPLY_MAX 65536   /* within a socketpair's buffer: no writer thread */

static int jvm_end = -1;   /* the fake JVM's end of the connection */
static const uint8_t *reply;
static size_t reply_len;

int __wrap_attach_socket_open(int pid, uint64_t start_time, int64_t deadline, char *err, size_t errlen);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int __wrap_attach_socket_open(int pid, uint64_t start_time, int64_t deadline, char *err, size_t errlen)
{
    (void)pid, (void)start_time, (void)deadline, (void)err, (void)errlen;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
        (reply_len && write(sv[1], reply, reply_len) != (ssize_t)reply_len) || shutdown(sv[1], SHUT_WR) != 0 ||
        fcntl(sv[0], F_SETFL, O_NONBLOCK) != 0)
        abort();
    jvm_end = sv[1];
    return sv[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > REPLY_MAX)
        return 0;
    reply = data + 1;
    reply_len = size - 1;
    size_t outlen = data[0] % 64 ? data[0] % 64 : 4096, errlen = 200;
    /* Exactly-sized heap buffers: ASan sees a write past either. */
    char *out = malloc(outlen), *err = malloc(errlen);
    static const char *const args[3] = {"jcmd", "Compiler.perfmap", NULL};
    jvm_attach_command(1, args, out, outlen, 1000, err, errlen);
    if (strnlen(out, outlen) == outlen || strnlen(err, errlen) == errlen)
        abort();   /* a result not terminated inside its buffer */
    close(jvm_end);
    jvm_end = -1;
    free(out);
    free(err);
    return 0;
}
