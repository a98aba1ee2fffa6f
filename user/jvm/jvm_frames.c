#include "jvm_frames.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jvm_attach.h"
#include "monotonic.h"
#include "sanitize.h"

/* x86-64 HotSpot interpreter frames (frame_x86.hpp): below the saved rbp
 * come the sender's sp, the last sp, then the Method*. Not in vmStructs; a
 * wrong guess is caught by the checks in method_name. */
#define INTERP_METHOD_SLOT (-3)
/* Gaps between perf map requests: short for the first few, while a JVM
 * compiles most (a short-lived one may exit before a second is over), then
 * at most one a second, since each request makes the JVM write its whole map. */
#define PERFMAP_QUICK_REQUESTS 8
#define PERFMAP_QUICK_GAP_NS 250000000ULL
#define PERFMAP_GAP_NS 1000000000ULL
#define PERFMAP_MAX_FAILURES 3
/* A JVM answers in about 11 ms the first time: a JVM (or a fake) that does
 * not answer must not hold up the main loop for long. */
#define PERFMAP_TIMEOUT_MS 1000
/* Across all JVMs, after a request that took this long, none is made for
 * PERFMAP_SLOW_PAUSE times as long: many slow fakes cannot add up to more
 * than a tenth of the main loop's time. */
#define PERFMAP_SLOW_NS 50000000ULL
#define PERFMAP_SLOW_PAUSE 10

void jvm_frames_read_code_ranges(struct jvm_frames *f, const struct jvm *j)
{
    uint64_t a_code, a_lo, a_hi, o_buf, o_limit, queue, buf;
    int32_t limit;
    if (jvm_static(j, "AbstractInterpreter", "_code", &a_code) &&
        jvm_offset(j, "StubQueue", "_stub_buffer", &o_buf) &&
        jvm_offset(j, "StubQueue", "_buffer_limit", &o_limit) && procmem_u64(&j->mem, a_code, &queue) &&
        queue && procmem_u64(&j->mem, queue + o_buf, &buf) &&
        procmem_read(&j->mem, queue + o_limit, &limit, sizeof(limit)) && limit > 0) {
        f->interp_lo = buf;
        f->interp_hi = buf + (uint64_t)limit;
    }
    if (jvm_static(j, "CodeCache", "_low_bound", &a_lo) && jvm_static(j, "CodeCache", "_high_bound", &a_hi)) {
        procmem_u64(&j->mem, a_lo, &f->code_lo);
        procmem_u64(&j->mem, a_hi, &f->code_hi);
    }
}

void jvm_frames_open(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l)
{
    (void)l;
    memset(f, 0, sizeof(*f));
    f->method_slot = INTERP_METHOD_SLOT;
    jvm_frames_read_code_ranges(f, j);
    /* Unknown counts as off: the advice is then given rather than missed. */
    jvm_flag(j, "PreserveFramePointer", &f->preserve_fp);
    jvm_flag(j, "DisableAttachMechanism", &f->attach_disabled);
    f->ok = jvm_offset(j, "Method", "_constMethod", &f->const_method) &&
            jvm_offset(j, "ConstMethod", "_constants", &f->constants) &&
            jvm_offset(j, "ConstMethod", "_name_index", &f->name_index) &&
            jvm_offset(j, "ConstantPool", "_pool_holder", &f->pool_holder) &&
            jvm_type_size(j, "ConstantPool", &f->pool_size);
}

void jvm_frames_close(struct jvm_frames *f)
{
    for (int i = 0; i < JVM_METHOD_CACHE; i++)
        free(f->cache[i].name);
    perfmap_free(&f->perf);
    memset(f, 0, sizeof(*f));
}

/* "Class.method" of a Method*, read from the live JVM; every pointer is
 * checked, as a frame slot may hold anything. */
static bool method_name(const struct jvm_frames *f, const struct jvm *j, const struct jvm_layout *l,
                        uint64_t method, char *out, size_t len)
{
    uint64_t cm, cp, holder, sym;
    uint16_t idx, n;
    char cls[256], name[256];
    if (!method || method % 8 || !procmem_u64(&j->mem, method + f->const_method, &cm) || !cm ||
        !procmem_u64(&j->mem, cm + f->constants, &cp) || !cp ||
        !procmem_read(&j->mem, cm + f->name_index, &idx, sizeof(idx)) || idx == 0 ||
        !procmem_u64(&j->mem, cp + f->pool_holder, &holder) ||
        !jvm_klass_name(j, l, holder, cls, sizeof(cls)) ||
        !procmem_u64(&j->mem, cp + f->pool_size + (uint64_t)idx * 8, &sym) || !sym ||
        !procmem_read(&j->mem, sym + l->sym_length, &n, sizeof(n)) || n == 0 || n >= sizeof(name) ||
        !procmem_read(&j->mem, sym + l->sym_body, name, n))
        return false;
    name[n] = '\0';
    for (int i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20)
            return false;
    /* A hidden class (a lambda) ends in its address: drop it, so the frame
     * reads the same in every run. */
    char *hidden = strstr(cls, "+0x");
    if (hidden)
        *hidden = '\0';
    snprintf(out, len, "%s.%s", cls, name);
    return true;
}

static bool cached_method_name(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l, uint64_t method,
                               char *out, size_t len);

static bool interpreted_name(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l, uint64_t fp,
                             const struct pt_sample *smp, char *out, size_t len)
{
    uint64_t slot = fp + (uint64_t)(f->method_slot * 8), method;
    if (!fp || !f->ok)
        return false;
    if (smp && slot >= smp->sp && slot + 8 <= smp->sp + smp->len)
        memcpy(&method, smp->data + (slot - smp->sp), 8);
    else if (!procmem_u64(&j->mem, slot, &method))
        return false;
    return cached_method_name(f, j, l, method, out, len);
}

static bool cached_method_name(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l, uint64_t method,
                               char *out, size_t len)
{
    if (!f->ok)
        return false;
    struct jvm_method_name *c = &f->cache[(method >> 3) % JVM_METHOD_CACHE];
    if (c->method == method && c->name) {
        snprintf(out, len, "%s", c->name);
        return true;
    }
    if (!method_name(f, j, l, method, out, len))
        return false;
    free(c->name);
    c->method = method;
    c->name = strdup(out);
    return true;
}

/* The thread of PID whose name is NAME, or 0. */
static int thread_named(int pid, const char *name)
{
    char path[320], comm[32];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    int tid = 0;
    for (struct dirent *e; d && !tid && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, e->d_name);
        FILE *fp = fopen(path, "re");
        if (fp && fgets(comm, sizeof(comm), fp) && strncmp(comm, name, strlen(name)) == 0)
            tid = atoi(e->d_name);
        if (fp)
            fclose(fp);
    }
    if (d)
        closedir(d);
    return tid;
}

/* WHY may quote the JVM's reply, which its owner chose: it reaches root's
 * terminal only as printable characters. */
static void perfmap_failed(struct jvm_frames *f, int pid, const char *why, bool for_good)
{
    char clean[256];
    if (for_good)
        f->perf_failures = PERFMAP_MAX_FAILURES - 1;
    if (++f->perf_failures == PERFMAP_MAX_FAILURES) {
        sanitize_copy(clean, sizeof(clean), why, 200);
        fprintf(stderr, "parktrace: JVM %d: cannot get its perf map (%s); JIT-compiled frames stay unnamed\n",
                pid, clean);
    }
}

/* Asks the JVM for a fresh perf map, spaced as above and never for a JVM
 * that refuses attaching (SIGQUIT would make it print a thread dump), nor
 * where its map's path is not the JVM's own file (it would write through a
 * link another user planted, or into their file). */
static void refresh_perfmap(struct jvm_frames *f, const struct jvm *j)
{
    int pid = j->pid;
    uint64_t now = monotonic_ns();
    uint64_t gap = f->perf_requests < PERFMAP_QUICK_REQUESTS ? PERFMAP_QUICK_GAP_NS : PERFMAP_GAP_NS;
    if (f->attach_disabled || f->perf_failures >= PERFMAP_MAX_FAILURES ||
        (f->perf_requests && now - f->perf_asked_ns < gap) || (f->perf_paused_until && now < *f->perf_paused_until))
        return;
    f->perf_asked_ns = now;
    f->perf_requests++;
    char out[256], err[200];
    struct perfmap_made mine;
    int made = perfmap_prepare(pid, &mine, err, sizeof(err));
    if (made < 0) {
        perfmap_failed(f, pid, err, true);
        return;
    }
    bool listening = thread_named(pid, "Attach Listener") > 0;
    const char *const args[3] = {"jcmd", "Compiler.perfmap", NULL};
    uint64_t asked = monotonic_ns();
    int rc = jvm_attach_command_to(pid, j->start_time, args, out, sizeof(out), PERFMAP_TIMEOUT_MS, err,
                                   sizeof(err));
    uint64_t took = monotonic_ns() - asked;
    if (took >= PERFMAP_SLOW_NS && f->perf_paused_until)
        *f->perf_paused_until = monotonic_ns() + PERFMAP_SLOW_PAUSE * took;
    if (rc != 0) {
        perfmap_remove(&mine);
        /* A JVM that let the whole timeout pass holds up naming: once is enough. */
        perfmap_failed(f, pid, rc < 0 ? err : out, took >= PERFMAP_TIMEOUT_MS * 1000000ULL);
        return;
    }
    /* The listener thread this started is parktrace's doing, not the
     * program's: it is kept out of CSP's working time. */
    if (!listening && !f->listener_tid) {
        f->listener_tid = thread_named(pid, "Attach Listener");
        f->listener_since = now;
    }
    perfmap_free(&f->perf);
    if (perfmap_load(&f->perf, pid, err, sizeof(err)) != 0)
        perfmap_failed(f, pid, err, false);
    /* Leave no file behind that only parktrace asked for: it is in memory now. */
    perfmap_remove(&mine);
}

bool jvm_frames_name(struct jvm_frames *f, struct jvm *j, const struct jvm_layout *l, uint64_t pc,
                     uint64_t fp, const struct pt_sample *smp, char *out, size_t len)
{
    /* An interpreted frame the kernel walked, kept as its Method*. */
    if (pc & PT_FRAME_METHOD) {
        if (!cached_method_name(f, j, l, pc & ~PT_FRAME_METHOD, out, len))
            snprintf(out, len, "[interpreted]");
        return true;
    }
    if (!f->code_hi || pc < f->code_lo || pc >= f->code_hi)
        return false;
    if (pc >= f->interp_lo && pc < f->interp_hi) {
        if (!interpreted_name(f, j, l, fp, smp, out, len))
            snprintf(out, len, "[interpreted]");
        return true;
    }
    const struct perfmap_entry *e = perfmap_find(&f->perf, pc);
    if (!e && !f->gone) {
        refresh_perfmap(f, j);
        e = perfmap_find(&f->perf, pc);
    }
    if (e)
        perfmap_java_name(e->name, out, len);
    else
        snprintf(out, len, JVM_FRAME_UNNAMED);
    return true;
}
