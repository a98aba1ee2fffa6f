// SPDX-License-Identifier: GPL-2.0
/* parktrace kernel side: times futex waits and aggregates them per blocker.
 * Nothing is streamed; user space reads the maps each measurement interval.
 *
 * One object, one skeleton. This file holds the license and the loader's
 * settings; each job is a header, included so that every map is defined
 * before a later header uses it:
 *   slots.bpf.h        the blocker table and the accounting of waits
 *   futex.bpf.h        futex blockers: their keys and wait ops
 *   jvm.bpf.h          HotSpot: Java threads, park/monitor/wait blocker keys
 *   stacks.bpf.h       stack ids, the per-thread stack cache, waker notes
 *     unwind.bpf.h       the in-kernel CFI stack walker (native frames)
 *     budget.bpf.h       the stack budget, its odds and gaps
 *     unwind_java.bpf.h  its Java frames
 *   chains.bpf.h       wait chains: holders, and what they wait on
 *   go_uprobes.bpf.h   goroutine parks (kind go-park): uprobes in Go binaries
 *   lifetimes.bpf.h    exec, fork and exit: thread time alive for CSP, and
 *                      idle sleeps (its working time)
 *   sched.bpf.h        probe mode "sched" (default): the scheduler tracepoints
 *   syscalls.bpf.h     probe mode "syscalls": the futex system call tracepoints
 *   jvm_uprobes.bpf.h  the uprobes in HotSpot: Java thread starts, and probe
 *                      mode "uprobes" (Java parks at Unsafe_Park/Unsafe_Unpark) */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "parktrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Kernel constants vmlinux.h does not carry (macros), used by several
 * headers below: x86-64's futex syscall number and the kernel-thread flag. */
#define NR_FUTEX 202
#define PF_KTHREAD 0x00200000

/* Set by the loader before load. */
const volatile bool filter_tgids = false;
const volatile __u32 cgroup_filters = 0;      /* --cgroup paths in cgroup_filter */
const volatile __u32 self_tgid = 0;
const volatile __u64 threshold = 0;
const volatile __u32 max_slots = 1;
const volatile bool trace_futex = true;      /* --kinds */
const volatile bool trace_jvm_park = true;
const volatile bool park_uprobes = false;    /* --probes uprobes: parks timed at Unsafe_Park */
const volatile bool trace_jvm_monitor = true;
const volatile bool trace_jvm_wait = true;
const volatile bool trace_java = true;       /* any of the three Java kinds */
const volatile bool follow_children = false; /* -- COMMAND: trace its descendants */
const volatile bool cfi_unwind = true;       /* --unwind cfi: stacks from DWARF rows */
/* Stack walks (a stack the thread's cache does not hold) take at most
 * stack_budget_ns per CPU per second (0: --stacks all, no limit). */
const volatile __u64 stack_budget_ns = 0;
/* Filled by the loader (gap_tables.c) for the geometric gaps between
 * stacks taken (budget_sample): log2(1 + (i + 0.5) / 256) in Q16, and
 * -1 / ln(1 - 1/m) in Q16 for one wait in m taking its stack. */
const volatile __u32 gap_log2_frac[PT_GAP_FRAC];
const volatile __u32 gap_scale[PT_GAP_SCALES];
/* PARKTRACE_TIME_PARTS: every part of the hot programs timed (part_done);
 * not a single instruction without it. */
const volatile bool time_parts = false;
/* --self-stats: the hot programs' run times (run_hist), two clock reads in
 * one run of PT_RUN_EVERY; not a single instruction without it. */
const volatile bool time_runs = false;
/* --chains N, N > 0: wait chains are read (chains.bpf.h). */
const volatile bool trace_chains = false;

#include "slots.bpf.h"
#include "own_entries.bpf.h"
#include "wait_end.bpf.h"
#include "futex.bpf.h"
#include "jvm.bpf.h"
#include "stacks.bpf.h"
#include "end_stacks.bpf.h"
#include "chains.bpf.h"
#include "go_uprobes.bpf.h"
#include "lifetimes.bpf.h"
#include "sched.bpf.h"
#include "syscalls.bpf.h"
#include "jvm_uprobes.bpf.h"
