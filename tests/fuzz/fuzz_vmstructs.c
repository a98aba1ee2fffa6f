/* The JVM readers: any process that maps a file named libjvm.so is read as
 * a JVM, so its vmStructs and vmTypes tables, its thread list and every
 * object and Method* behind them are its own to forge. The input is that
 * process's memory from IMAGE_BASE on, read through procmem's own preads
 * from a sparse memfd holding it at that offset (reads past the input
 * fail, as unmapped memory does). The libjvm symbols the readers look up
 * are 8-byte slots at the start of the image, in the order of SYMBOLS; the
 * slots after them give a Klass*, a Method* and a frame pointer to decode.
 * The process's maps, its libjvm and /proc/PID/mem are replaced with these
 * fakes at link time (Makefile: FUZZ_WRAP_vmstructs); the process itself is
 * the fuzzer, so procstatus sees a live one. vmstructs_seed.py writes a
 * seed image with a consistent table, thread list and objects. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfsyms.h"
#include "jvm_frames.h"
#include "jvm_objects.h"
#include "procmaps.h"

#define IMAGE_BASE 0x1000u

static const char *const SYMBOLS[] = {
    "gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", "gHotSpotVMStructEntryTypeNameOffset",
    "gHotSpotVMStructEntryFieldNameOffset", "gHotSpotVMStructEntryIsStaticOffset",
    "gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset", "gHotSpotVMTypes",
    "gHotSpotVMTypeEntryArrayStride", "gHotSpotVMTypeEntryTypeNameOffset",
    "gHotSpotVMTypeEntrySuperclassNameOffset", "gHotSpotVMTypeEntrySizeOffset",
    "_ZN16java_lang_Thread20_park_blocker_offsetE", "UseCompressedOops", "UseCompressedClassPointers",
    "_ZN16java_lang_Thread13_eetop_offsetE", "PreserveFramePointer", "DisableAttachMechanism",
};
#define NSYMBOLS (sizeof(SYMBOLS) / sizeof(SYMBOLS[0]))
#define SLOT_KLASS (IMAGE_BASE + 8 * NSYMBOLS)
#define SLOT_METHOD (SLOT_KLASS + 8)
#define SLOT_FP (SLOT_KLASS + 16)

static int image = -1;   /* the memfd */
static struct elf_file libjvm;
static struct pm_map libjvm_map = {.start = 0x1000, .end = 0x2000, .exec = true, .path = "/fake/libjvm.so"};
static struct pm_proc proc = {.maps = &libjvm_map, .nmaps = 1};

struct pm_proc *__wrap_procmaps_get(struct procmaps *pm, int pid);
void __wrap_procmaps_refresh(struct pm_proc *p);
struct elf_file *__wrap_procmaps_elf(struct pm_proc *p, struct pm_map *m);
const struct elf_sym *__wrap_elfsyms_find(const struct elf_file *ef, const char *name);
int __wrap_procmem_open(struct procmem *m, int pid);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct pm_proc *__wrap_procmaps_get(struct procmaps *pm, int pid)
{
    (void)pm;
    proc.pid = pid;
    return &proc;
}

void __wrap_procmaps_refresh(struct pm_proc *p)
{
    (void)p;
}

struct elf_file *__wrap_procmaps_elf(struct pm_proc *p, struct pm_map *m)
{
    (void)p;
    m->bias = 0;
    return &libjvm;
}

const struct elf_sym *__wrap_elfsyms_find(const struct elf_file *ef, const char *name)
{
    static struct elf_sym sym;
    (void)ef;
    for (size_t i = 0; i < NSYMBOLS; i++)
        if (strcmp(name, SYMBOLS[i]) == 0) {
            sym = (struct elf_sym){.addr = IMAGE_BASE + 8 * i, .size = 8, .name = SYMBOLS[i]};
            return &sym;
        }
    return NULL;
}

int __wrap_procmem_open(struct procmem *m, int pid)
{
    m->pid = pid;
    m->fd = dup(image);
    return m->fd < 0 ? -1 : 0;
}

/* What the tracker and the namer do with a JVM once its layout is read. */
static void decode(struct jvm *j)
{
    int tids[64];
    uint64_t threads[64], klass = 0, method = 0, fp = 0, oop;
    char name[256], supers[512];
    int n = jvm_java_threads(j, tids, threads, 64);
    struct jvm_layout l;
    if (jvm_layout_read(j, &l) != 0)
        return;
    for (int i = 0; i < n; i++)
        if (jvm_park_blocker(j, &l, threads[i], &oop) && oop)
            jvm_object_class(j, &l, oop, name, sizeof(name));
    procmem_u64(&j->mem, SLOT_KLASS, &klass);
    procmem_u64(&j->mem, SLOT_METHOD, &method);
    procmem_u64(&j->mem, SLOT_FP, &fp);
    jvm_klass_name(j, &l, klass, name, sizeof(name));
    jvm_klass_supers(j, &l, klass, supers, sizeof(supers));
    static struct jvm_frames f;   /* too large for the stack */
    jvm_frames_open(&f, j, &l);
    jvm_frames_name(&f, j, &l, method | PT_FRAME_METHOD, 0, NULL, name, sizeof(name));
    /* Only an interpreter pc: other code-cache pcs would ask this process
     * for its perf map through the attach protocol. */
    if (f.interp_lo < f.interp_hi && f.interp_lo >= f.code_lo && f.interp_hi <= f.code_hi)
        jvm_frames_name(&f, j, &l, f.interp_lo, fp, NULL, name, sizeof(name));
    jvm_frames_close(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (image < 0 && (image = memfd_create("fuzz-jvm-image", MFD_CLOEXEC)) < 0)
        abort();
    if (ftruncate(image, 0) || (size && pwrite(image, data, size, IMAGE_BASE) != (ssize_t)size))
        abort();
    struct jvm j;
    if (jvm_open(&j, NULL, getpid()) == 0)
        decode(&j);
    jvm_close(&j);
    return 0;
}
