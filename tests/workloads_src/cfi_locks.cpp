// cfi_locks.c in C++: two call paths into one std::mutex and a
// std::condition_variable wait, in namespaced member functions whose frames
// must come out demangled. Built by tests/integration/test_stacks.py.
//
// pipeline::producer_main() -> Stage::push_item()   (std::unique_lock, ~1 ms)
// pipeline::flusher_main()  -> Stage::drain_batch() (std::lock_guard, ~2 ms)
// pipeline::waiter_main()   -> Stage::await_batch() (condition_variable::wait)
// pipeline::notifier_main() signals the condition variable every 5 ms.
//
// usage: cfi_locks_cpp [-t THREADS>=2] [-s SECONDS] [-r REPORT.json]
// The report has the same shape as cfi_locks.c's.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

#define FRAME __attribute__((noinline, noclone))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

namespace pipeline {

struct PathStats {
    std::atomic<uint64_t> calls{0}, blocked{0}, blocked_ns{0};
};

static uint64_t now_ns()
{
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void sleep_us(long us)
{
    std::this_thread::sleep_for(std::chrono::microseconds(us));
}

class Stage {
public:
    FRAME void push_item(unsigned id);
    FRAME void drain_batch(unsigned id);
    FRAME bool await_batch();
    FRAME void notify_batch();
    FRAME void finish();

    std::mutex mu;                   // the one contended mutex
    std::mutex batch_mu;
    std::condition_variable batch_ready;
    int pending = 0;                 // under batch_mu
    std::atomic<bool> stop{false};
    PathStats push_stats, drain_stats;
    std::atomic<uint64_t> cond_waits{0}, cond_wait_ns{0};

private:
    // batch_mu is only ever taken by spinning on try_lock, so the only
    // futex waits on a mutex are the two counted paths into mu (and,
    // rarely, condition_variable::wait's re-lock of batch_mu).
    void spin_lock_batch()
    {
        while (!batch_mu.try_lock())
            std::this_thread::yield();
    }
};

void Stage::push_item(unsigned id)
{
    push_stats.calls++;
    std::unique_lock<std::mutex> lk(mu, std::try_to_lock);
    if (!lk.owns_lock()) {
        uint64_t t0 = now_ns();
        lk.lock();
        KEEP_FRAME();
        push_stats.blocked_ns += now_ns() - t0;
        push_stats.blocked++;
    }
    sleep_us(1000);
    (void)id;
    KEEP_FRAME();
}

void Stage::drain_batch(unsigned id)
{
    drain_stats.calls++;
    if (!mu.try_lock()) {
        uint64_t t0 = now_ns();
        mu.lock();
        KEEP_FRAME();
        drain_stats.blocked_ns += now_ns() - t0;
        drain_stats.blocked++;
    }
    std::lock_guard<std::mutex> g(mu, std::adopt_lock);
    sleep_us(2000);
    (void)id;
    KEEP_FRAME();
}

bool Stage::await_batch()
{
    spin_lock_batch();
    std::unique_lock<std::mutex> lk(batch_mu, std::adopt_lock);
    while (pending == 0 && !stop) {
        uint64_t t0 = now_ns();
        batch_ready.wait(lk);
        KEEP_FRAME();
        cond_wait_ns += now_ns() - t0;
        cond_waits++;
    }
    bool more = pending > 0 || !stop;
    pending = 0;
    KEEP_FRAME();
    return more;
}

// Signals after unlocking, so the woken waiter's re-lock finds batch_mu free.
void Stage::notify_batch()
{
    spin_lock_batch();
    pending++;
    batch_mu.unlock();
    batch_ready.notify_one();
    KEEP_FRAME();
}

void Stage::finish()
{
    spin_lock_batch();
    batch_ready.notify_all();
    batch_mu.unlock();
    KEEP_FRAME();
}

static bool mixed;     // -m: every thread takes both paths in turn, through 0-2 extra frames

// push_item or drain_batch (DRAIN) through DEPTH more frames of its own:
// six stacks per thread, more than its stack cache holds.
FRAME void via(unsigned depth, Stage *s, bool drain, unsigned id)
{
    if (depth)
        via(depth - 1, s, drain, id);
    else if (drain)
        s->drain_batch(id);
    else
        s->push_item(id);
    KEEP_FRAME();
}

FRAME void producer_main(Stage *s, unsigned id)
{
    for (unsigned i = 0; !s->stop; i++) {
        if (mixed)
            via(i / 2 % 3, s, i % 2, id);
        else
            s->push_item(id);
        sleep_us(500 + 150 * (long)id);
    }
    KEEP_FRAME();
}

FRAME void flusher_main(Stage *s, unsigned id)
{
    for (unsigned i = 0; !s->stop; i++) {
        if (mixed)
            via(i / 2 % 3, s, !(i % 2), id);
        else
            s->drain_batch(id);
        sleep_us(1000 + 150 * (long)id);
    }
    KEEP_FRAME();
}

FRAME void waiter_main(Stage *s)
{
    while (s->await_batch())
        KEEP_FRAME();
}

FRAME void notifier_main(Stage *s)
{
    while (!s->stop) {
        sleep_us(5000);
        s->notify_batch();
    }
    s->finish();
    KEEP_FRAME();
}

} // namespace pipeline

static void put_path(FILE *f, const char *fn, const char *thread, int threads, const pipeline::PathStats &s)
{
    std::fprintf(f, "{\"function\":\"%s\",\"thread\":\"%s\",\"threads\":%d,\"calls\":%llu,"
                    "\"blocked\":%llu,\"blocked_ns\":%llu}",
                 fn, thread, threads, (unsigned long long)s.calls, (unsigned long long)s.blocked,
                 (unsigned long long)s.blocked_ns);
}

static pipeline::Stage stage;

int main(int argc, char **argv)
{
    const char *report = nullptr;
    double seconds = 3;
    int nthreads = 6, c;
    while ((c = getopt(argc, argv, "t:s:r:m")) != -1) {
        switch (c) {
        case 't': nthreads = std::atoi(optarg); break;
        case 's': seconds = std::atof(optarg); break;
        case 'r': report = optarg; break;
        case 'm': pipeline::mixed = true; break;
        default:
            std::fprintf(stderr, "usage: %s [-t THREADS] [-s SECONDS] [-r REPORT] [-m]\n", argv[0]);
            return 1;
        }
    }
    if (nthreads < 2 || nthreads > 64 || seconds <= 0) {
        std::fprintf(stderr, "cfi_locks_cpp: bad arguments (2 <= THREADS <= 64, SECONDS > 0)\n");
        return 1;
    }
    int nproducers = nthreads / 2, nflushers = nthreads - nproducers;
    std::vector<std::thread> th;
    for (int i = 0; i < nproducers; i++)
        th.emplace_back(pipeline::producer_main, &stage, (unsigned)i);
    for (int i = 0; i < nflushers; i++)
        th.emplace_back(pipeline::flusher_main, &stage, (unsigned)i);
    th.emplace_back(pipeline::waiter_main, &stage);
    th.emplace_back(pipeline::notifier_main, &stage);
    pipeline::sleep_us((long)(seconds * 1e6));
    stage.stop = true;   // notifier_main's last notify_all wakes waiter_main
    for (auto &t : th)
        t.join();

    FILE *f = report ? std::fopen(report, "w") : stdout;
    if (!f) {
        std::perror(report);
        return 1;
    }
    std::fprintf(f, "{\"pid\":%d,\"threads\":%d,\"mutex\":{\"name\":\"stage\",\"addr\":\"%p\"},\"locks\":[",
                 getpid(), nthreads, (void *)&stage.mu);
    put_path(f, "pipeline::Stage::push_item", "pipeline::producer_main", nproducers, stage.push_stats);
    std::fputc(',', f);
    put_path(f, "pipeline::Stage::drain_batch", "pipeline::flusher_main", nflushers, stage.drain_stats);
    std::fprintf(f, "],\"cond\":{\"name\":\"batch_ready\",\"addr\":\"%p\",\"function\":\"pipeline::Stage::await_batch\","
                    "\"thread\":\"pipeline::waiter_main\",\"waits\":%llu,\"wait_ns\":%llu}}\n",
                 (void *)&stage.batch_ready, (unsigned long long)stage.cond_waits,
                 (unsigned long long)stage.cond_wait_ns);
    if (f != stdout && std::fclose(f)) {
        std::perror(report);
        return 1;
    }
    return 0;
}
