/* Bytes written gzip-compressed (zlib), for the pprof outputs. */
#ifndef PT_GZIP_OUT_H
#define PT_GZIP_OUT_H
#include <stddef.h>
#include <stdio.h>

/* Writes BUF gzip-compressed to F. 0, or -1 with errno set. */
int gzip_write(FILE *f, const void *buf, size_t len);

#endif
