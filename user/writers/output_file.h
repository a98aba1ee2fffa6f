/* The files parktrace writes as root (-o, --collapsed), opened so that no
 * other user can point them elsewhere: see docs/security.md, "Output". */
#ifndef PT_OUTPUT_FILE_H
#define PT_OUTPUT_FILE_H
#include <stdbool.h>
#include <stdio.h>

struct output_file {
    FILE *f;
    const char *path;   /* as given; "-" is standard output */
    int dir;            /* its directory (O_PATH), or -1 */
    char *tmp;          /* the temporary name in DIR until published, else NULL */
};

/* Opens PATH for writing: "-" is standard output; its directory is reached
 * without following a link another user owns (root's own are followed:
 * /var/run, /dev/fd), and everything after is relative to it; a link is not followed
 * (unless root made it in a directory only root can write, as /dev/stdout);
 * another user's file in a sticky directory is refused; an existing device,
 * FIFO or socket is written in place, without waiting for a FIFO's reader;
 * a regular file is written under a temporary name in its directory until
 * output_file_publish. Returns 0, or -1 after one line on stderr. */
int output_file_open(struct output_file *o, const char *path);

/* Puts the temporary file in place under its name. Returns 0, or -1 after
 * one line on stderr. */
int output_file_publish(struct output_file *o);

/* Flushes, closes and publishes. Returns 0, or -1 after one line on stderr
 * when any write failed (the temporary file is then removed). */
int output_file_close(struct output_file *o);

/* Prints the one line for a failed write to O, with ERR (an errno). */
void output_file_failed(const struct output_file *o, int err);

/* Closes without publishing: a temporary file is removed. */
void output_file_discard(struct output_file *o);

/* Whether A and B name the same regular file, by device and inode, or, for
 * a file not there yet, by its directory's and the same last name. */
bool output_file_same(const char *a, const char *b);

#endif
