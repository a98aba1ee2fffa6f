/* Go programs found and read from outside (docs/go.md): each process the
 * runtime discovery looks at is checked once for Go build info; a Go
 * program's binary gets the goroutine park probes (once per file), and
 * the process its layout in the kernel. */
#ifndef PT_GO_TRACKER_H
#define PT_GO_TRACKER_H
#include <stdbool.h>
#include <stdint.h>

struct tracer;

struct go_tracker_stats {
    uint64_t processes;     /* Go processes whose parks are read */
    uint64_t unsupported;   /* Go processes whose layout is known neither way */
    uint64_t refused;       /* Go programs that could not be probed */
};

struct go_tracker;
struct go_tracker *go_tracker_new(struct tracer *t);
void go_tracker_free(struct go_tracker *gt);

/* Looks at process PID unless it still runs the program *LOOKED names
 * (its lowest mapping's device and inode, read off its maps' text; set
 * here): true when it is a Go program (read or not). A command's child is
 * parktrace until its exec, so a process is looked at again when its
 * program changes. */
bool go_tracker_look(struct go_tracker *gt, int pid, uint64_t *looked);

/* Looks at the program open at FD (COMM: its name, for messages) that
 * process PID is about to exec (a command held at its gate): a Go
 * program's probes and PID's layout are in place before its first
 * instruction, so that no park of its start (the goroutines that wait for
 * the whole run) goes unseen. */
void go_tracker_look_file(struct go_tracker *gt, int pid, int fd, const char *comm);

void go_tracker_stats(const struct go_tracker *gt, struct go_tracker_stats *s);

#endif
