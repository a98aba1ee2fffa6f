/* parktrace: the event loop tying options, tracer, collector and reports
 * together. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect.h"
#include "fleet_pages.h"
#include "http_serve.h"
#include "listen_token.h"
#include "jvm_tracker.h"
#include "launch.h"
#include "live.h"
#include "loader.h"
#include "monotonic.h"
#include "oom.h"
#include "cli.h"
#include "output_file.h"
#include "preflight.h"
#include "procstatus.h"
#include "self_counters.h"
#include "selfstats.h"
#include "services.h"
#include "stack_maps.h"
#include "stacks.h"
#include "unwind_maps.h"
#include "unwind_tables.h"
#include "writer.h"

#define HOUSEKEEPING_NS 200000000ULL  /* unwind new stacks while their owners live */
#define NAMED_TICK_NS 50000000ULL     /* JVM discovery among -p/-- processes; recycling */
#define PT_NICE (-10)                 /* see main() */
#define LISTEN_EVERY_NS 10000000000ULL  /* --listen's pages renewed, without -i */

struct run {
    struct pt_options o;
    struct tracer t;
    /* The services the collector calls, made and freed here. */
    struct pt_services sv;         /* maps, symbols, unwind tables and unwinders */
    struct jvm_tracker *jvm;       /* JVMs found, and their classes and frames named */
    struct stacks *stacks;         /* the stack cache: the collector's, and the kernel's requests' */
    struct tracer_ready ready;     /* where those requests go */
    struct collector c;
    FILE *out;                     /* the reports: out_file's, or standard output */
    struct output_file out_file;
    struct output_file collapsed;
    struct output_file pprof;
    const struct pt_model *final;  /* the final report's, with the stacks --collapsed wants */
    bool write_failed;             /* ends the run: exit 2 */
    bool live;                     /* -i on a terminal: the live view */
    struct live lv;
    struct fleet_snapshot snap;    /* --listen: the pages served, renewed each interval */
    struct http_serve *http;
    char listen_token[LISTEN_TOKEN_MAX + 1];   /* --listen-token's */
    int child;
    bool launched;                 /* the command prepared, not yet released */
    bool outputs_open;             /* opened, neither finished nor discarded */
    int sfd, stats_fd;             /* the signals; --self-stats's BPF statistics */
    uint64_t started_ns;           /* main()'s first step: --self-stats' CPU share is over the whole life */
    struct self_steady steady;     /* --self-stats' steady state */
    bool pid_gone[PT_MAX_PIDS];
    uint64_t ticks;
    uint64_t housekeeping_every;   /* in ticks */
    char outbuf[1 << 20];          /* the reports' buffer: one write each */
};

/* --self-stats' spans: parktrace's life, the time it traced, and its
 * steady state's (up to now while the run goes on). */
static struct self_span self_span(const struct run *r)
{
    return self_span_at(r->started_ns, r->c.start_ns, &r->steady, monotonic_ns());
}

/* --listen's pages from M, with parktrace's own figures for /metrics. */
static void serve_pages(struct run *r, const struct pt_model *m)
{
    struct self_values self = {0};
    selfstats_read(&self, &r->t, &r->sv, r->stacks, r->jvm, self_span(r));
    collector_self_values(&r->c, &self);
    fleet_pages_render(&r->snap, m, &self);
}

/* Writes one report; false (with one line on stderr) when it could not be
 * written. The -o file takes its name before the first report that is not
 * the last one, so that it can be followed while it grows. */
static bool emit(struct run *r, enum pt_report_type type)
{
    if (type != PT_REPORT_FINAL && output_file_publish(&r->out_file)) {
        r->write_failed = true;
        return false;
    }
    /* The final model also holds what --collapsed writes at exit. */
    unsigned what = 0;
    if (type == PT_REPORT_FINAL && r->o.collapsed)
        what = MODEL_STACKS | (r->o.waker ? MODEL_WAKERS : 0);
    if (type == PT_REPORT_FINAL && r->o.pprof)
        what |= MODEL_STACKS;
    bool serve = r->http && type == PT_REPORT_INTERVAL;
    /* /debug/pprof/mutex charges lock waits to the stacks that woke them. */
    if (serve)
        what |= MODEL_STACKS | MODEL_WAKERS;
    const struct pt_model *m = collector_report(&r->c, type, what);
    const struct pt_write_opts wo = {0};
    /* Once the live view has stopped, its last interval is not shown. */
    int rc = r->o.format == PT_FORMAT_JSON            ? write_json(r->out, m, &wo)
             : r->live && type == PT_REPORT_INTERVAL ? live_draw(&r->lv, m)
                                                     : write_text(r->out, m, &wo);
    int err = errno;
    if (type == PT_REPORT_FINAL)
        r->final = m;
    if (serve)
        serve_pages(r, m);
    if (rc) {
        output_file_failed(&r->out_file, err);
        r->write_failed = true;
    }
    return !rc;
}

/* --listen without -i: the pages from a window of their own, not printed
 * (the final report covers the whole run either way). */
static void serve_window(struct run *r, enum pt_report_type type)
{
    serve_pages(r, collector_report(&r->c, type, MODEL_STACKS | MODEL_WAKERS));
}

/* The kernel's requests, handed to the services that answer them. */
static void ready_unwind(void *ctx, int tgid)
{
    unwind_tables_add_process(((struct run *)ctx)->sv.tables, tgid);
}

static void ready_stack(void *ctx, int tgid, int stack_id)
{
    stacks_name_kernel_stack(((struct run *)ctx)->stacks, tgid, stack_id);
}

/* A class new to a thread's blockers: named now, while its JVM runs (the
 * tracker keeps it for the blockers' naming). */
static void ready_klass(void *ctx, int tgid, uint64_t klass)
{
    char name[256], supers[512];
    jvm_tracker_class(((struct run *)ctx)->jvm, tgid, klass, name, sizeof(name), supers, sizeof(supers));
}

/* Java frames are named by the JVM tracker. */
static bool name_java_frame(void *ctx, int pid, uint64_t pc, uint64_t fp, const struct pt_sample *smp, char *out,
                            size_t len)
{
    return jvm_tracker_frame_name(ctx, pid, pc, fp, smp, out, len);
}

/* Reports processes named with -p that have exited; true when none is left. */
static bool pids_all_gone(struct run *r)
{
    int left = 0;
    for (int i = 0; i < r->o.npids; i++) {
        if (!r->pid_gone[i] && !procstatus_alive(r->o.pids[i])) {
            r->pid_gone[i] = true;
            fprintf(stderr, "parktrace: process %d exited\n", r->o.pids[i]);
        }
        left += !r->pid_gone[i];
    }
    return r->o.npids && !left;
}

static int open_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGWINCH);   /* the live view fits the terminal again */
    sigaddset(&set, SIGTSTP);    /* Ctrl-Z: the terminal is given back first */
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

static int open_ticker(uint64_t tick)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec its = {{0, (long)tick}, {0, (long)tick}};
    timerfd_settime(fd, 0, &its, NULL);
    return fd;
}

/* Takes one signal from SFD: false when it ends the run. */
static bool take_signal(struct run *r, int sfd)
{
    struct signalfd_siginfo si;
    if (read(sfd, &si, sizeof(si)) != sizeof(si))
        return true;
    if (si.ssi_signo == SIGUSR1)
        return emit(r, PT_REPORT_DUMP);
    if (si.ssi_signo == SIGTSTP)
        live_suspend(&r->lv);
    else if (si.ssi_signo == SIGWINCH)
        live_resized(&r->lv);
    else if (si.ssi_signo != SIGCHLD)
        return false;
    else if (r->child > 0 && waitpid(r->child, NULL, WNOHANG) == r->child)
        return false;
    return true;
}

/* Runs until a signal, the duration, the command's exit or the last -p
 * process's exit. */
static void loop(struct run *r, int sfd, int tfd)
{
    uint64_t start = r->c.start_ns, next_report = start + r->o.interval_ns;
    uint64_t next_serve = start + LISTEN_EVERY_NS;
    /* The live view's keys, then the unwind table builds under way: -1
     * (ignored by poll) when there are none. */
    struct pollfd fds[4 + UNWIND_BUILDS] = {{.fd = sfd, .events = POLLIN}, {.fd = tfd, .events = POLLIN},
                                            {.fd = tracer_sample_ready_fd(&r->t), .events = POLLIN},
                                            {.fd = -1, .events = POLLIN}, {.fd = -1, .events = POLLIN},
                                            {.fd = -1, .events = POLLIN}};
    int builds[UNWIND_BUILDS];

    for (;;) {
        fds[3].fd = r->live ? r->lv.key_fd : -1;
        unwind_tables_build_fds(r->sv.tables, builds);
        bool built = false;
        for (int k = 0; k < UNWIND_BUILDS; k++)
            fds[4 + k].fd = builds[k];
        if (poll(fds, 4 + UNWIND_BUILDS, -1) < 0 && errno != EINTR)
            return;
        for (int k = 0; k < UNWIND_BUILDS; k++)
            built |= fds[4 + k].fd >= 0 && (fds[4 + k].revents & (POLLIN | POLLHUP | POLLERR));
        if (built)
            unwind_tables_poll(r->sv.tables);
        if (fds[3].revents & (POLLIN | POLLHUP | POLLERR) && !live_keys(&r->lv)) {
            /* q stops the run as Ctrl-C does, which interrupts COMMAND too. */
            if (r->child > 0)
                kill(r->child, SIGINT);
            return;
        }
        /* First, while the thread that made a new stack still waits. */
        if (fds[2].revents & POLLIN) {
            tracer_sample_ready_drain(&r->t, &r->ready);
            collector_poll_samples(&r->c);
        }
        if ((fds[0].revents & POLLIN) && !take_signal(r, sfd))
            return;
        if (fds[1].revents & POLLIN) {
            uint64_t ticks;
            if (read(tfd, &ticks, sizeof(ticks)) < 0)
                continue;
            uint64_t now = monotonic_ns();
            self_steady_tick(&r->steady, r->c.start_ns, now);
            unwind_tables_poll(r->sv.tables);
            jvm_tracker_discover_named(r->jvm);
            if (++r->ticks % r->housekeeping_every)
                collector_recycle(&r->c);
            else
                collector_tick(&r->c);
            if (r->o.interval_ns && now >= next_report) {
                if (!emit(r, PT_REPORT_INTERVAL))
                    return;
                next_report += r->o.interval_ns;
                if (next_report <= now)
                    next_report = now + r->o.interval_ns;
            }
            if (r->http && !r->o.interval_ns && now >= next_serve) {
                serve_window(r, PT_REPORT_INTERVAL);
                next_serve = now + LISTEN_EVERY_NS;
            }
            if (r->o.duration_ns && now >= start + r->o.duration_ns)
                return;
            if (pids_all_gone(r))
                return;
        }
    }
}

/* Opens -o, --collapsed and --pprof before tracing, so that a bad path
 * fails first. */
static int open_outputs(struct run *r)
{
    r->out_file.f = stdout;
    r->out_file.path = "-";
    if (r->o.output && output_file_open(&r->out_file, r->o.output))
        return -1;
    if (r->o.collapsed && output_file_open(&r->collapsed, r->o.collapsed)) {
        output_file_discard(&r->out_file);
        return -1;
    }
    if (r->o.pprof && output_file_open(&r->pprof, r->o.pprof)) {
        output_file_discard(&r->collapsed);
        output_file_discard(&r->out_file);
        return -1;
    }
    r->out = r->out_file.f;
    /* A report leaves in one write (each ends with a flush): a traced
     * command sharing the output cannot cut into one of its lines. */
    setvbuf(r->out, r->outbuf, _IOFBF, sizeof(r->outbuf));
    return 0;
}

/* One file of the final model's stacks, written by WRITE and published. */
static void write_stacks_file(struct run *r, struct output_file *out,
                              int (*write)(FILE *, const struct pt_model *, const struct pt_write_opts *),
                              const struct pt_write_opts *wo)
{
    if (write(out->f, r->final, wo) < 0) {
        output_file_failed(out, errno);
        r->write_failed = true;
    } else if (output_file_close(out)) {
        r->write_failed = true;
    }
}

/* The last reports, then the stacks; 0, or -1 when any could not be
 * written. A file is published only whole. */
static int finish_outputs(struct run *r)
{
    if (!r->write_failed) {
        /* Close the last, partial window so the interval reports tile the run. */
        if (r->o.interval_ns && monotonic_ns() - r->c.window_start >= 1000000)
            emit(r, PT_REPORT_INTERVAL);
        if (!r->write_failed)
            emit(r, PT_REPORT_FINAL);
    }
    if (r->write_failed)
        output_file_discard(&r->out_file);
    else if (output_file_close(&r->out_file))
        r->write_failed = true;
    if (r->o.collapsed && !r->write_failed && r->final) {
        const struct pt_write_opts wo = {.count_value = r->o.collapsed_count, .waker = r->o.waker};
        if (write_collapsed(r->collapsed.f, r->final, &wo) < 0) {
            output_file_failed(&r->collapsed, errno);
            r->write_failed = true;
        } else if (output_file_close(&r->collapsed)) {
            r->write_failed = true;
        }
    }
    output_file_discard(&r->collapsed);   /* unless closed above */
    if (r->o.pprof && !r->write_failed && r->final)
        write_stacks_file(r, &r->pprof, write_pprof, &(struct pt_write_opts){0});
    output_file_discard(&r->pprof);
    return r->write_failed ? -1 : 0;
}

/* A run that never traced leaves no file behind. */
static void discard_outputs(struct run *r)
{
    output_file_discard(&r->pprof);
    output_file_discard(&r->collapsed);
    output_file_discard(&r->out_file);
}

/* Starts the command, held before its exec, and raises parktrace's
 * priority once the command keeps its own. 0, or -1 after one line. */
static int start_command(struct run *r)
{
    r->child = -1;
    if (r->o.command && (r->child = launch_prepare(r->o.command)) < 0) {
        fprintf(stderr, "parktrace: cannot start %s: %s\n", r->o.command[0], strerror(errno));
        return -1;
    }
    r->launched = r->child > 0;
    /* Ahead of the workloads for the little CPU it uses, as auditd is: on a
     * saturated machine a starved collector cannot recycle the kernel's
     * tables as fast as blockers come, and they fill and drop. After the
     * launch, so the traced command keeps its own priority. Best effort. */
    if (setpriority(PRIO_PROCESS, 0, PT_NICE) < 0 && errno != EACCES && errno != EPERM)
        fprintf(stderr, "parktrace: cannot raise its priority: %s\n", strerror(errno));
    return 0;
}

/* --listen: the server, started after the signals are blocked (its thread
 * inherits the mask). 0, or -1 after one line. */
static int start_server(struct run *r)
{
    if (!r->o.listen)
        return 0;
    fleet_snapshot_init(&r->snap);
    r->http = http_serve_start(&r->o.listen_addr, r->o.listen_len, r->o.listen,
                               r->o.listen_token ? r->listen_token : NULL, &r->snap);
    return r->http ? 0 : -1;
}

static void stop_server(struct run *r)
{
    if (!r->http)
        return;
    http_serve_stop(r->http);
    r->http = NULL;
    fleet_snapshot_free(&r->snap);
}

/* The program the command will exec, looked at before it runs (a Go
 * program's goroutines park from its first moments, some for good). */
static void look_at_command(struct run *r)
{
    int fd = r->child > 0 ? launch_open_program(r->o.command) : -1;
    if (fd < 0)
        return;
    const char *slash = strrchr(r->o.command[0], '/');
    jvm_tracker_look_program(r->jvm, r->child, fd, slash ? slash + 1 : r->o.command[0]);
    close(fd);
}

/* The programs loaded, the services, the JVMs, the stack cache and the
 * collector made, and the probes attached. 0, or -1 after one line. */
static int start_tracing(struct run *r)
{
    if (tracer_open(&r->t, &r->o, r->o.command != NULL))
        return -1;
    if (r->child > 0)
        tracer_add_pid(&r->t, r->child);
    struct unwind_maps um = unwind_maps_of(&r->t);
    if (services_open(&r->sv, r->o.unwind == PT_UNWIND_CFI ? &um : NULL, r->o.unwind_cache))
        return -1;
    if (!(r->jvm = jvm_tracker_new(&r->t, &r->o, &r->sv)))
        return -1;
    const struct stacks_java_namer namer = {.ctx = r->jvm, .name = name_java_frame};
    struct stack_maps sm = stack_maps_of(&r->t);
    if (!(r->stacks = stacks_new(&sm, &namer, &r->sv)))
        return -1;
    r->ready = (struct tracer_ready){.ctx = r, .unwind = ready_unwind, .stack = ready_stack, .klass = ready_klass};
    /* A named JVM is recognised first: building its unwind tables (libjvm's
     * take a few hundred ms) before would leave its parks of that time as
     * plain futex waits. */
    jvm_tracker_tick(r->jvm);
    /* Named processes get their unwind tables before their first wait. */
    for (int i = 0; i < r->o.npids; i++)
        unwind_tables_add_process(r->sv.tables, r->o.pids[i]);
    collector_init(&r->c, &r->t, &r->sv, r->stacks, r->jvm, &r->o);
    jvm_tracker_tick(r->jvm);
    look_at_command(r);
    if (tracer_attach(&r->t))
        return -1;
    collector_begin(&r->c);
    /* Named processes count their threads' alive time from the start. */
    for (int i = 0; i < r->o.npids; i++)
        csp_watch(&r->c.csp, r->o.pids[i], r->c.start_ns);
    if (r->o.command)
        csp_watch(&r->c.csp, r->child, r->c.start_ns);
    return 0;
}

/* Lets the command exec, now that it is traced. 0, or -1 after one line. */
static int release_command(struct run *r)
{
    if (!r->launched)
        return 0;
    r->launched = false;
    int exec_err = launch_release();
    if (exec_err)
        fprintf(stderr, "parktrace: cannot start %s: %s\n", r->o.command[0], strerror(exec_err));
    return exec_err ? -1 : 0;
}

/* Everything before the loop, in order, each step failing with one line
 * said: 0, 1 for a usage error, 2 for a runtime failure. */
static int start(struct run *r, int argc, char **argv)
{
    int rc = options_parse(argc, argv, &r->o);
    if (rc)
        return rc > 0 ? -1 : 1;   /* -1: help or version, all done */
    /* Read before anything starts, as root: the file is the secret. */
    if (r->o.listen_token && listen_token_read(r->o.listen_token, r->listen_token))
        return 1;
    if (preflight_pids(r->o.pids, r->o.npids) || preflight_privileges() || preflight_btf())
        return 2;
    if (open_outputs(r))
        return 2;
    r->outputs_open = true;
    r->live = r->o.interval_ns && r->out == stdout && r->o.format == PT_FORMAT_TEXT && isatty(STDOUT_FILENO);
    if (start_command(r))
        return 2;
    r->sfd = open_signals();
    if (start_server(r))
        return 2;
    r->stats_fd = r->o.self_stats ? selfstats_enable() : -1;
    if (start_tracing(r))
        return 2;
    /* Something to serve from the start (a dump: no window begins), read
     * before the command runs: its first page holds none of its waits. */
    if (r->http)
        serve_window(r, PT_REPORT_DUMP);
    if (release_command(r))
        return 2;
    return 0;
}

/* What the loop leaves: the server stopped, the final outputs written,
 * --self-stats. 0, or 2 when an output could not be written. */
static int finish(struct run *r)
{
    self_steady_end(&r->steady, monotonic_ns());
    /* The server goes first: it serves pages the collector's model made. */
    stop_server(r);
    int rc = finish_outputs(r) ? 2 : 0;
    r->outputs_open = false;
    if (r->o.self_stats) {
        selfstats_print(stderr, &r->t, &r->sv, r->stacks, r->jvm, self_span(r));
        collector_self_stats(&r->c, stderr);
    }
    /* After a failure, its one line is all that is said. */
    if (!rc && r->child > 0 && waitpid(r->child, NULL, WNOHANG) == 0)
        fprintf(stderr, "parktrace: %s (PID %d) is still running\n", r->o.command[0], r->child);
    return rc;
}

/* The one way out, whatever was made: a command never released is killed,
 * outputs never finished are discarded, and everything is freed. */
static void clean_up(struct run *r)
{
    if (r->launched)
        launch_abort();
    if (r->outputs_open)
        discard_outputs(r);
    stop_server(r);
    if (r->stats_fd >= 0)
        close(r->stats_fd);
    tracer_close(&r->t);
    collector_free(&r->c);
    jvm_tracker_free(r->jvm);
    stacks_free(r->stacks);
    services_close(&r->sv);
}

/* Out of memory below main (base/oom.h): the one line is said; the run
 * ends as a runtime failure, the terminal given back by its exit hook. */
static void end_out_of_memory(void)
{
    exit(2);
}

int main(int argc, char **argv)
{
    out_of_memory_handler(end_out_of_memory);
    struct run *r = calloc(1, sizeof(*r));
    if (!r) {
        fprintf(stderr, "parktrace: out of memory\n");
        return 2;
    }
    r->started_ns = monotonic_ns();
    r->sfd = r->stats_fd = -1;
    int rc = start(r, argc, argv);
    if (rc == 0) {
        /* A fast tick: named processes are watched for a JVM, and the blocker
         * table is recycled at each (a server making 10 000 lock objects a
         * second needs their slots back within a few tenths of a second). */
        uint64_t tick = NAMED_TICK_NS;
        r->housekeeping_every = HOUSEKEEPING_NS / tick;
        int tfd = open_ticker(tick);
        if (r->live)
            live_start(&r->lv, &r->o, r->out);
        loop(r, r->sfd, tfd);
        /* The terminal is given back before the final report is printed on it. */
        live_stop(&r->lv);
        rc = finish(r);
    }
    clean_up(r);
    free(r);
    return rc < 0 ? 0 : rc;
}
