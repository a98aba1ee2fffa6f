/* The options as data, read by every layer: the kinds' names and what the
 * kinds imply. The command line that fills them is user/cli.c. */
#include "options.h"

bool options_trace_java(const struct pt_options *o)
{
    return o->kinds & ((1u << PT_KIND_JVM_PARK) | (1u << PT_KIND_JVM_MONITOR) | (1u << PT_KIND_JVM_WAIT));
}

bool options_trace_go(const struct pt_options *o)
{
    return o->kinds & (1u << PT_KIND_GO_PARK);
}

bool options_trace_runtimes(const struct pt_options *o)
{
    return options_trace_java(o) || options_trace_go(o);
}

const char *const pt_kind_names[PT_KIND_COUNT] = {"futex", "jvm-park", "jvm-monitor", "jvm-wait", "go-park"};
