/* Looks like a JVM to parktrace, with hostile numbers in it: the trap an
 * unprivileged user can set for a root parktrace (tests/integration/
 * test_hardening_jvm.py). Copied to a file named libjvm.so and run from
 * there, it maps "libjvm.so" and exports what parktrace reads from HotSpot:
 * the vmStructs and vmTypes tables (our own layout, described by the
 * exported strides and offsets, as HotSpot describes its own) and the few
 * symbols read directly. Then it waits to be killed.
 *
 * usage: libjvm.so MODE
 *   valid    a one-thread JVM whose tables all read well
 *   heaps    a code-heap array of 2^31 - 1 entries in unmapped memory
 *   threads  a thread list of 65 536 readable entries (one real thread)
 *   names    a vmStructs table of 8191 entries whose names are unmapped
 *   attach   valid, but all its code is "JIT-compiled" and it takes attach
 *            requests (catches SIGQUIT) without ever opening a socket; it
 *            waits on a futex in a loop so that its stacks get named
 *   reply    the same, but with an attach socket that answers every
 *            request with an error carrying terminal escapes
 *   late     valid, but its two table pointers read 0 for its first
 *            1.5 s, as a real libjvm's do between its mapping and its
 *            relocation
 *   unset    valid, but its two table strides read 0 for its first 1.5 s,
 *            as a real libjvm's do between its relocation and its C++
 *            static initializers (STRIDE() is not a constant) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct field_entry {
    const char *type, *field, *type_string;
    int32_t is_static;
    uint64_t offset;
    void *address;
};

struct type_entry {
    const char *name, *super;
    int32_t is_oop, is_int, is_unsigned;
    uint64_t size;
};

/* The shapes the tables describe (offsets below). */
struct fake_thread {
    char pad[0x20];
    struct fake_osthread *osthread;   /* JavaThread::_osthread at 0x20 */
};
struct fake_osthread {
    char pad[8];
    int32_t tid;                      /* OSThread::_thread_id at 8 */
};
struct fake_list {
    char pad[8];
    uint32_t length;                  /* ThreadsList::_length at 8 */
    uint64_t *threads;                /* ThreadsList::_threads at 0x10 */
};
struct fake_array {
    int32_t len;                      /* GrowableArrayBase::_len at 0 */
    void *data;                       /* GrowableArray<int>::_data at 8 */
};
struct fake_heap {
    uint64_t low, low_boundary, high_boundary;   /* CodeHeap::_memory (a VirtualSpace) */
    char pad[0x18];
    uint64_t segmap_low;                          /* CodeHeap::_segmap at 0x30 */
    char pad2[0x28];
    int32_t log2_segment;                         /* at 0x60 */
};

static struct fake_osthread osthread;
static struct fake_thread thread = {.osthread = &osthread};
static struct fake_list list;
static struct fake_array heap_array;
static struct fake_heap heap;
static uint64_t one_thread[1];
static uint64_t zero64, code_low, code_high = UINT64_MAX;
static uint32_t zero32;

void *java_thread_list = &list;
void *code_heaps = &heap_array;

#define FIELD(t, f, off) {t, f, NULL, 0, off, NULL}
#define STATIC(t, f, addr) {t, f, NULL, 1, 0, addr}

static struct field_entry fields[8192] = {
    FIELD("JavaThread", "_threadObj", 0x10),
    FIELD("OopHandle", "_obj", 0),
    FIELD("Klass", "_name", 0x10),
    FIELD("Symbol", "_length", 4),
    FIELD("Symbol", "_body", 6),
    FIELD("oopDesc", "_metadata._compressed_klass", 8),
    FIELD("JavaThread", "_osthread", 0x20),
    FIELD("OSThread", "_thread_id", 8),
    FIELD("ThreadsList", "_length", 8),
    FIELD("ThreadsList", "_threads", 0x10),
    FIELD("GrowableArrayBase", "_len", 0),
    FIELD("GrowableArray<int>", "_data", 8),
    FIELD("CodeHeap", "_memory", 0),
    FIELD("CodeHeap", "_segmap", 0x30),
    FIELD("CodeHeap", "_log2_segment_size", 0x60),
    FIELD("VirtualSpace", "_low", 0),
    FIELD("VirtualSpace", "_low_boundary", 0),
    FIELD("VirtualSpace", "_high_boundary", 0x10),
    FIELD("CodeBlob", "_frame_size", 0x20),
    STATIC("ThreadsSMRSupport", "_java_thread_list", &java_thread_list),
    STATIC("CodeCache", "_heaps", &code_heaps),
    STATIC("CodeCache", "_low_bound", &code_low),
    STATIC("CodeCache", "_high_bound", &code_high),
    STATIC("CompressedOops", "_narrow_oop._base", &zero64),
    STATIC("CompressedOops", "_narrow_oop._shift", &zero32),
    STATIC("CompressedKlassPointers", "_narrow_klass._base", &zero64),
    STATIC("CompressedKlassPointers", "_narrow_klass._shift", &zero32),
};

static struct type_entry types[] = {
    {"JavaThread", "Thread", 0, 0, 0, 0x400},
    {"HeapBlock", NULL, 0, 0, 0, 16},
    {NULL, NULL, 0, 0, 0, 0},
};

/* What parktrace reads by symbol. */
struct field_entry *gHotSpotVMStructs = fields;
uint64_t gHotSpotVMStructEntryArrayStride = sizeof(struct field_entry);
uint64_t gHotSpotVMStructEntryTypeNameOffset = offsetof(struct field_entry, type);
uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(struct field_entry, field);
uint64_t gHotSpotVMStructEntryIsStaticOffset = offsetof(struct field_entry, is_static);
uint64_t gHotSpotVMStructEntryOffsetOffset = offsetof(struct field_entry, offset);
uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(struct field_entry, address);
struct type_entry *gHotSpotVMTypes = types;
uint64_t gHotSpotVMTypeEntryArrayStride = sizeof(struct type_entry);
uint64_t gHotSpotVMTypeEntryTypeNameOffset = offsetof(struct type_entry, name);
uint64_t gHotSpotVMTypeEntrySuperclassNameOffset = offsetof(struct type_entry, super);
uint64_t gHotSpotVMTypeEntrySizeOffset = offsetof(struct type_entry, size);
uint32_t park_blocker_offset __asm__("_ZN16java_lang_Thread20_park_blocker_offsetE") = 0x40;
bool UseCompressedOops = true, UseCompressedClassPointers = true;
/* Never asked for a perf map, so never sent SIGQUIT. */
bool DisableAttachMechanism = true;

static void ignore(int sig)
{
    (void)sig;
}

/* Timed futex waits, 10 ms each, for ever: waits with stacks to name. */
static void wait_forever(void)
{
    static uint32_t word;
    struct timespec ts = {0, 10000000};
    for (;;)
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* Serves /tmp/.java_pid<pid>: reads a request, replies with escapes. */
static void *serve(void *arg)
{
    int l = *(int *)arg;
    static const char reply[] = "-1\n\033]0;owned\007\033[2J\033[31mforged\n";
    for (;;) {
        int s = accept(l, NULL, NULL);
        char req[512];
        if (s < 0)
            continue;
        (void)!read(s, req, sizeof(req));
        (void)!write(s, reply, sizeof(reply) - 1);
        close(s);
    }
    return NULL;
}

static void listen_for_attach(void)
{
    static int l;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/.java_pid%d", getpid());
    l = socket(AF_UNIX, SOCK_STREAM, 0);
    pthread_t t;
    if (bind(l, (struct sockaddr *)&addr, sizeof(addr)) || listen(l, 4) || pthread_create(&t, NULL, serve, &l))
        exit(1);
}

/* An address nothing is mapped at. */
static void *unmapped(size_t len)
{
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    munmap(p, len);
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "valid";
    osthread.tid = getpid();
    one_thread[0] = (uint64_t)(uintptr_t)&thread;
    list = (struct fake_list){.length = 1, .threads = one_thread};
    heap = (struct fake_heap){.low = 0x100000, .high_boundary = 0x200000, .segmap_low = 0x300000,
                              .log2_segment = 7};
    static void *one_heap[1] = {&heap};
    heap_array = (struct fake_array){.len = 1, .data = one_heap};
    if (strcmp(mode, "heaps") == 0) {
        /* 16 GiB of entries from 64 KiB up: nothing of a PIE process is there. */
        heap_array = (struct fake_array){.len = INT32_MAX, .data = (void *)0x10000};
    } else if (strcmp(mode, "threads") == 0) {
        uint64_t *many = malloc(65536 * sizeof(*many));
        for (int i = 0; i < 65536; i++)
            many[i] = (uint64_t)(uintptr_t)&thread;
        list = (struct fake_list){.length = 65536, .threads = many};
    } else if (strcmp(mode, "names") == 0) {
        char *nowhere = unmapped(1 << 20);
        for (int i = 0; i < 8191; i++)
            fields[i] = (struct field_entry){nowhere, nowhere, NULL, 0, 0, NULL};
    } else if (strcmp(mode, "attach") == 0 || strcmp(mode, "reply") == 0) {
        DisableAttachMechanism = false;
        signal(SIGQUIT, ignore);
        if (strcmp(mode, "reply") == 0)
            listen_for_attach();
    } else if (strcmp(mode, "late") == 0) {
        gHotSpotVMStructs = NULL;
        gHotSpotVMTypes = NULL;
    } else if (strcmp(mode, "unset") == 0) {
        gHotSpotVMStructEntryArrayStride = 0;
        gHotSpotVMTypeEntryArrayStride = 0;
    } else if (strcmp(mode, "valid") != 0) {
        fprintf(stderr, "usage: libjvm.so valid|heaps|threads|names|attach|reply|late|unset\n");
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    if (strcmp(mode, "attach") == 0 || strcmp(mode, "reply") == 0)
        wait_forever();
    if (strcmp(mode, "late") == 0 || strcmp(mode, "unset") == 0) {
        /* Starting done: every table pointer and stride as a valid JVM's. */
        struct timespec later = {1, 500000000};
        nanosleep(&later, NULL);
        gHotSpotVMStructs = fields;
        gHotSpotVMTypes = types;
        gHotSpotVMStructEntryArrayStride = sizeof(struct field_entry);
        gHotSpotVMTypeEntryArrayStride = sizeof(struct type_entry);
    }
    for (;;)
        pause();
}
