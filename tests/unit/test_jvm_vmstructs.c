/* The vmStructs reader against a real JVM: the JavaThreads it finds must be
 * the JVM's real threads, including the five the test program named. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jvm_objects.h"
#include "services.h"

static bool in(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Threads of PID whose kernel name starts with PREFIX. */
static int named_threads(int pid, const char *prefix, int *tids, int max)
{
    char path[320], comm[32];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, prefix, strlen(prefix)) == 0)
            tids[n++] = atoi(e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* Starts ParkedThreads with FLAG and checks what the readers find in it. */
static void check_jvm(struct procmaps *maps, const char *dir, const char *flag)
{
    int in_pipe[2], out_pipe[2];
    if (!REQUIRE(pipe(in_pipe) == 0 && pipe(out_pipe) == 0, "%s: makes pipes", flag))
        return;
    pid_t java = fork();
    if (java == 0) {
        dup2(in_pipe[0], 0);
        dup2(out_pipe[1], 1);
        close(in_pipe[1]);
        close(out_pipe[0]);
        execlp("java", "java", "-Xmx64m", flag, "-cp", dir, "ParkedThreads", "5", (char *)NULL);
        _exit(127);
    }
    close(in_pipe[0]);
    close(out_pipe[1]);
    FILE *out = fdopen(out_pipe[0], "r");
    int pid = 0;
    if (!REQUIRE(fscanf(out, "ready %d", &pid) == 1 && pid == java, "%s: the JVM started (pid %d)", flag, pid)) {
        close(in_pipe[1]);
        fclose(out);
        waitpid(java, NULL, 0);
        return;
    }

    struct jvm j;
    int rc = jvm_open(&j, maps, java);
    CHECK(rc == 0, "reads the vmStructs table of a live JVM (%s)", rc ? j.error : j.libjvm);
    CHECK(j.nfields > 500, "the table has HotSpot's entries (%d)", j.nfields);
    uint64_t off, addr;
    CHECK(jvm_offset(&j, "JavaThread", "_threadObj", &off) && off > 0, "JavaThread::_threadObj is known");
    CHECK(jvm_offset(&j, "JavaThread", "_anchor", &off), "JavaThread::_anchor is known");
    CHECK(jvm_static(&j, "ThreadsSMRSupport", "_java_thread_list", &addr) && addr, "the threads list is static");
    CHECK(!jvm_offset(&j, "ThreadsSMRSupport", "_java_thread_list", &off), "a static is not an offset");
    CHECK(!jvm_offset(&j, "NoSuchType", "_x", &off), "unknown fields are reported as unknown");
    uint64_t size, threadobj = 0;
    jvm_offset(&j, "JavaThread", "_threadObj", &threadobj);
    CHECK(jvm_type_size(&j, "JavaThread", &size) && size > threadobj, "sizeof(JavaThread) is published (%llu)",
          (unsigned long long)size);
    CHECK(j.ntypes > 100 && !jvm_type_size(&j, "NoSuchType", &size), "the vmTypes table is read (%d types)",
          j.ntypes);

    int tids[512], parked[16];
    uint64_t threads[512];
    int n = jvm_java_threads(&j, tids, threads, 512);
    int np = named_threads(java, "parked-", parked, 16);
    CHECK(np == 5, "the kernel sees the 5 parked threads (%d)", np);
    CHECK(n >= 6, "walks the JavaThread list (%d threads)", n);
    bool all_real = n > 0, all_found = np == 5;
    char path[128];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/proc/%d/task/%d", java, tids[i]);
        all_real &= access(path, F_OK) == 0;
    }
    for (int i = 0; i < np; i++)
        all_found &= in(tids, n, parked[i]);
    CHECK(all_real, "every JavaThread found is a thread of the JVM");
    CHECK(all_found, "every parked-N thread is among the JavaThreads found");

    /* Each parked-N thread parks on the one ParkedThreads$Gate object; the
     * main thread (tid == pid) is not parked. */
    struct jvm_layout l;
    rc = jvm_layout_read(&j, &l);
    CHECK(rc == 0, "reads the object layout (%s)", rc ? j.error : "ok");
    uint64_t gate = 0;
    int gates = 0, same = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        uint64_t blocker = 0;
        char cls[256] = "";
        bool ok = jvm_park_blocker(&j, &l, threads[i], &blocker);
        if (tids[i] == java) {
            CHECK(ok && blocker == 0, "the main thread has no park blocker");
            continue;
        }
        if (!in(parked, np, tids[i]))
            continue;
        if (ok && blocker && jvm_object_class(&j, &l, blocker, cls, sizeof(cls)) &&
            strcmp(cls, "ParkedThreads$Gate") == 0)
            gates++;
        if (!gate)
            gate = blocker;
        same += blocker == gate;
    }
    CHECK(gates == 5, "all 5 parked threads' blockers are of class ParkedThreads$Gate (%d)", gates);
    CHECK(same == 5 && gate, "and they are one object (0x%llx)", (unsigned long long)gate);

    /* The JVM exits while the reader still holds it: reads fail cleanly. */
    close(in_pipe[1]);
    fclose(out);
    waitpid(java, NULL, 0);
    uint64_t gone[512];
    CHECK(jvm_java_threads(&j, tids, gone, 512) == -1, "reading an exited JVM fails without crashing");
    uint64_t b;
    CHECK(!jvm_park_blocker(&j, &l, threads[0], &b), "so does reading a blocker");
    jvm_close(&j);

}

int main(void)
{
    char dir[] = "/tmp/pt-jvmtest-XXXXXX", cmd[512];
    struct pt_services sv;
    if (!REQUIRE(mkdtemp(dir), "makes a directory in /tmp") ||
        !REQUIRE(services_open(&sv, NULL, NULL) == 0, "makes the symbol services"))
        return CHECK_DONE();
    snprintf(cmd, sizeof(cmd), "javac -d %s tools/workloads/ParkedThreads.java", dir);
    if (REQUIRE(system(cmd) == 0, "compiles ParkedThreads.java")) {
        check_jvm(sv.maps, dir, "-XX:+UseCompressedOops");
        check_jvm(sv.maps, dir, "-XX:-UseCompressedOops");
    }

    struct jvm self;
    CHECK(jvm_open(&self, sv.maps, getpid()) == -1, "a process without libjvm is not a JVM");
    jvm_close(&self);
    services_close(&sv);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    REQUIRE(system(cmd) == 0, "cleans up");
    return CHECK_DONE();
}
