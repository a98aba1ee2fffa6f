#include "gzip_out.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

int gzip_write(FILE *f, const void *buf, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    /* 15 + 16: a gzip header and trailer, not zlib's. */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    const unsigned char *in = buf;
    unsigned char out[65536];
    int rc = Z_OK;
    /* Fed in pieces: avail_in is an unsigned int. */
    while (rc != Z_STREAM_END) {
        if (!z.avail_in && len) {
            z.next_in = (unsigned char *)in;
            z.avail_in = len > (1u << 30) ? (1u << 30) : (unsigned)len;
            in += z.avail_in;
            len -= z.avail_in;
        }
        z.next_out = out;
        z.avail_out = sizeof(out);
        rc = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
        if (rc == Z_STREAM_ERROR)
            break;
        size_t have = sizeof(out) - z.avail_out;
        if (have && fwrite(out, 1, have, f) != have) {
            deflateEnd(&z);
            return -1;
        }
    }
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
