/* Detaching many BPF links at once. */
#ifndef PT_LINKS_CLOSE_H
#define PT_LINKS_CLOSE_H
#include <bpf/libbpf.h>

/* Destroys the N links of LINKS (NULLs skipped) and sets each to NULL.
 * Each close of a uprobe or tracepoint link waits for an RCU grace period
 * of its own; closed one after another on a loaded machine they took
 * seconds (Ctrl-C's exit 7 s, and 30 s in a benchmark). Closed from
 * several threads at once, the waits share their grace periods. */
void links_close_all(struct bpf_link **links[], int n);

#endif
