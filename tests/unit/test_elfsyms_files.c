/* The symbol tables' list of files stays bounded however many distinct
 * files are met (a user can write and map any number over a long run):
 * files no one holds are forgotten for room, held ones never are, and
 * files other users can write take at most half of it. The files are
 * real, minimal ELF files this test writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elfsyms.h"
#include "tiny_elf.h"

static char dir[] = "/tmp/pt-elfsyms-files-XXXXXX";

static struct elf_file *get(struct elfsyms *es, int i, mode_t mode)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/f%d", dir, i);
    if (!tiny_elf_write(path, mode, (uid_t)-1))
        return NULL;
    /* Kept until the end: a file deleted could give its inode to the
     * next, which would be the same file changed, not another. */
    return elfsyms_get_path(es, path);
}

static void remove_all(void)
{
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void)
{
    if (!REQUIRE(mkdtemp(dir), "temporary directory"))
        return CHECK_DONE();
    struct elfsyms *es = elfsyms_new();
    struct elfsyms_usage u;

    /* Held files, as a live process's maps hold theirs. */
    enum { HELD = 100 };
    struct elf_file *held[HELD];
    int got = 0;
    for (int i = 0; i < HELD; i++)
        if ((held[i] = get(es, i, 0644))) {
            elfsyms_hold(held[i]);
            got++;
        }
    if (!REQUIRE(got == HELD, "%d of %d files read", got, HELD))
        return CHECK_DONE();

    /* More files than the list holds, none held: each is read, and the
     * list stays within its bound. */
    enum { UNHELD = ELFSYMS_MAX_FILES + 1000 };
    int read = 0;
    size_t most = 0;
    for (int i = HELD; i < HELD + UNHELD; i++) {
        read += get(es, i, 0644) != NULL;
        elfsyms_usage(es, &u);
        most = u.files > most ? u.files : most;
    }
    CHECK(read == UNHELD, "every unheld file is read (%d of %d)", read, UNHELD);
    CHECK(most <= ELFSYMS_MAX_FILES, "files known at once stay within %d (%zu)", ELFSYMS_MAX_FILES, most);
    elfsyms_usage(es, &u);
    CHECK(u.bytes < (4u << 20), "their records cost little (%zu KiB)", u.bytes / 1024);

    /* The held ones were kept, whole: still found by their inode. */
    int intact = 0;
    for (int i = 0; i < HELD; i++)
        intact += held[i]->holds == 1 && held[i]->nloads == 1 && !held[i]->user_written;
    CHECK(intact == HELD, "held files are never forgotten (%d of %d intact)", intact, HELD);

    /* Files other users can write, all held (a user's live processes
     * mapping ever more of its own): refused past half the list, and
     * root's files are still read. */
    int user_read = 0;
    for (int i = 0; i < ELFSYMS_MAX_FILES; i++) {
        struct elf_file *ef = get(es, 1000000 + i, 0666);
        elfsyms_hold(ef);
        user_read += ef != NULL;
    }
    CHECK(user_read <= ELFSYMS_MAX_FILES / 2, "a user's files take at most half the list (%d)", user_read);
    CHECK(user_read >= ELFSYMS_MAX_FILES / 2 - HELD, "and up to it (%d)", user_read);
    elfsyms_usage(es, &u);
    CHECK(u.refused > 0, "the refused ones are counted (%zu)", u.refused);
    CHECK(get(es, 2000000, 0644) != NULL, "root's files are still read past a user's share");

    elfsyms_free(es);
    remove_all();
    return CHECK_DONE();
}
