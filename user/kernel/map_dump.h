/* Whole-map reads and deletes of the kernel's hash tables in batches of
 * thousands of entries per system call: a table of 65 536 entries read one
 * key at a time costs 130 000 system calls, too many for every report or
 * every recycling tick on a busy machine. */
#ifndef PT_MAP_DUMP_H
#define PT_MAP_DUMP_H
#include <stddef.h>
#include <stdint.h>

struct map_dump {
    void *keys, *vals;      /* n entries, keys and values side by side */
    uint32_t n;
    size_t keys_len, vals_len;   /* bytes allocated, kept from call to call */
};

/* Reads every entry of the hash map FD into D (its arrays grown as needed).
 * 0, or -1 with errno (D then holds what was read). */
int map_dump(int fd, size_t key_size, size_t val_size, struct map_dump *d);

/* Appends one entry to D (its arrays grown as needed). */
void map_dump_add(struct map_dump *d, const void *key, size_t key_size, const void *val, size_t val_size);

/* Deletes the N keys (KEY_SIZE bytes each) from FD; keys already gone are
 * skipped. The number deleted. */
uint32_t map_delete_keys(int fd, const void *keys, size_t key_size, uint32_t n);

void map_dump_free(struct map_dump *d);

#endif
