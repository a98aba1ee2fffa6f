/* Java's name for a perf map name (perfmap_java_name): the names come from
 * a hostile perf map, cut to PERFMAP_NAME_MAX - 1 bytes. The first input
 * byte picks the output size, so short buffers are covered as well as the
 * one jvm_frames uses; the rest is the name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > PERFMAP_NAME_MAX)
        return 0;
    size_t outlen = data[0] % 64 ? data[0] % 64 : 512;
    /* Exactly-sized heap copies: ASan sees any read past either end. */
    char *in = malloc(size), *out = malloc(outlen);
    memcpy(in, data + 1, size - 1);
    in[size - 1] = '\0';
    perfmap_java_name(in, out, outlen);
    if (strnlen(out, outlen) == outlen)
        abort();   /* not terminated inside its buffer */
    perfmap_java_name(in, out, 0);
    free(in);
    free(out);
    return 0;
}
