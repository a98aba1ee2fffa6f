#include "procstatus.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The SECOND-th whitespace-separated number after a "Key:" prefix. */
static int field(const char *s, int second, unsigned long long *v)
{
    char *end;
    for (int i = 0; i < second; i++) {
        strtoull(s, &end, 10);
        if (end == s)
            return -1;
        s = end;
    }
    errno = 0;
    *v = strtoull(s, &end, 10);
    return end == s || errno ? -1 : 0;
}

int procstatus_read(int pid, struct procstatus *ps)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    unsigned long long v;
    int found = 0;
    /* Without an NSpid line (kernels before 4.1) the pid is the same everywhere. */
    ps->nspid = ps->tgid = pid;
    ps->nslevels = 0;
    ps->state = '?';
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "State:", 6) == 0) {
            const char *c = line + 6 + strspn(line + 6, " \t");
            ps->state = *c ? *c : '?';
        } else if (strncmp(line, "Tgid:", 5) == 0 && field(line + 5, 0, &v) == 0) {
            ps->tgid = (int)v;
        } else if (strncmp(line, "NSpid:", 6) == 0) {
            /* The last field is the innermost namespace, the one the process sees. */
            char *p = line + 6, *end;
            for (long n; (n = strtol(p, &end, 10)), end != p; p = end) {
                ps->nspid = (int)n;
                ps->nslevels++;
            }
        } else if (strncmp(line, "Uid:", 4) == 0 && field(line + 4, 1, &v) == 0) {
            ps->euid = (uid_t)v;
            found |= 1;
        } else if (strncmp(line, "Gid:", 4) == 0 && field(line + 4, 1, &v) == 0) {
            ps->egid = (gid_t)v;
            found |= 2;
        } else if (strncmp(line, "SigCgt:", 7) == 0) {
            ps->sigcgt = strtoull(line + 7, NULL, 16);
            found |= 4;
        }
    }
    free(line);
    fclose(f);
    if (found != 7) {
        errno = ESRCH;   /* a process that exited while its status was read */
        return -1;
    }
    return 0;
}

#define PF_EXITING 0x4ul

/* Field 22 of the stat file at PATH; EXITED: whether its state (field 3)
 * or its flags (field 9) say the task has exited or is exiting. */
static int stat_start_time(const char *path, uint64_t *start, bool *exited)
{
    char buf[1024];
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and ')': fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    *exited = p[0] == ' ' && (p[1] == 'Z' || p[1] == 'X');
    /* After ')' come field 3 (state) onwards; start time is field 22. */
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p)
            return -1;
        /* Field 9, the task's flags: PF_EXITING from the start of its exit,
         * before the kernel's exit tracepoint, and so before its state
         * says so. */
        if (field == 8 && (strtoul(p + 1, NULL, 10) & PF_EXITING))
            *exited = true;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p + 1, &end, 10);
    if (end == p + 1 || errno)
        return -1;
    *start = v;
    return 0;
}

int procstatus_start_time(int pid, uint64_t *start)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    bool exited;
    return stat_start_time(path, start, &exited);
}

int procstatus_thread_start_time(int pid, int tid, uint64_t *start)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
    bool exited;
    int rc = stat_start_time(path, start, &exited);
    return rc == 0 && exited ? 1 : rc;
}

int procstatus_thread_comm(int pid, int tid, char *out, size_t size)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    bool got = fgets(out, (int)size, f) != NULL;
    fclose(f);
    if (!got)
        return -1;
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

int procstatus_threads(int pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    /* procfs counts "." and ".." among a task directory's links. */
    if (stat(path, &st) != 0 || st.st_nlink < 3)
        return -1;
    return (int)(st.st_nlink - 2);
}

bool procstatus_gone(int pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

bool procstatus_alive(int pid)
{
    struct procstatus ps;
    if (pid <= 0 || procstatus_gone(pid) || procstatus_read(pid, &ps))
        return false;
    return ps.state != 'Z' && ps.state != 'X';
}

uint64_t procstatus_run_delay_ns(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
    FILE *f = fopen(path, "re");
    unsigned long long cpu, delay;
    int n = f ? fscanf(f, "%llu %llu", &cpu, &delay) : 0;
    if (f)
        fclose(f);
    return n == 2 ? delay : 0;
}
