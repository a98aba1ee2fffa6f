#include "preflight.h"

#include "procstatus.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Each of PIDS a live process. kill(pid, 0) alone passes a thread's id
 * (whose process would then match nothing, silently) and a zombie. */
int preflight_pids(const int *pids, int npids)
{
    for (int i = 0; i < npids; i++) {
        struct procstatus ps;
        if (procstatus_read(pids[i], &ps)) {
            fprintf(stderr, "parktrace: no process with PID %d\n", pids[i]);
            return -1;
        }
        if (ps.tgid != pids[i]) {
            fprintf(stderr, "parktrace: %d is a thread of process %d: use -p %d\n", pids[i], ps.tgid, ps.tgid);
            return -1;
        }
        if (ps.state == 'Z') {
            fprintf(stderr, "parktrace: process %d has exited\n", pids[i]);
            return -1;
        }
    }
    return 0;
}

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
    return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int preflight_privileges(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) == 0 &&
        ((has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON)) || has_cap(d, CAP_SYS_ADMIN)))
        return 0;
    fprintf(stderr, "parktrace: needs root, or CAP_BPF and CAP_PERFMON (run it with sudo)\n");
    return -1;
}

int preflight_btf(void)
{
    /* The override lets tests exercise this check on a kernel that has BTF. */
    const char *path = getenv("PARKTRACE_BTF_PATH");
    if (!path)
        path = "/sys/kernel/btf/vmlinux";
    if (access(path, R_OK) == 0)
        return 0;
    fprintf(stderr,
            "parktrace: the kernel has no BTF (%s is missing); use a kernel built with "
            "CONFIG_DEBUG_INFO_BTF=y\n",
            path);
    return -1;
}

int preflight_tracefs(void)
{
    if (access("/sys/kernel/tracing/events/syscalls", F_OK) == 0 ||
        access("/sys/kernel/debug/tracing/events/syscalls", F_OK) == 0)
        return 0;
    if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
        access("/sys/kernel/tracing/events/syscalls", F_OK) == 0)
        return 0;
    fprintf(stderr,
            "parktrace: cannot find syscall tracepoints (mount -t tracefs tracefs "
            "/sys/kernel/tracing failed: %s; the kernel needs CONFIG_FTRACE_SYSCALLS)\n",
            strerror(errno));
    return -1;
}
