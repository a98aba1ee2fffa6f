/* What the kernel keeps of the Go programs parktrace reads: each one's
 * layout (go_layouts; its goroutines' records go with it at its exit, in
 * the kernel). The only code that touches that map; go_tracker.c asks it. */
#ifndef PT_GO_MAPS_H
#define PT_GO_MAPS_H
#include <stdbool.h>
#include "../bpf/parktrace.h"

struct tracer;

/* Go process PID's layout, for its parks to be read from now on: true
 * when PID had none (a process newly read, to be counted once). */
bool go_maps_set_layout(struct tracer *t, int pid, const struct pt_go_layout *l);

#endif
