/* A binary's GNU build-id (NT_GNU_BUILD_ID): what names its separate debug
 * file, tells two paths to one binary apart from two binaries, and keys
 * its cached unwind table. */
#ifndef PT_BUILD_ID_H
#define PT_BUILD_ID_H
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 64    /* bytes; a SHA-1 build-id has 20 */

/* ELF's build-id, from its note sections or, when the section headers are
 * gone, its PT_NOTE segments, into ID (BUILD_ID_MAX bytes): its length, 0
 * when it has none. */
size_t build_id_read(Elf *elf, uint8_t *id);

/* ID (LEN bytes) as lower-case hex into OUT, which holds 2 * LEN + 1. */
void build_id_hex(const uint8_t *id, size_t len, char *out);

#endif
