#include "symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"
#include "procmaps.h"

/* From libstdc++'s C ABI. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Longer names come from a hostile or broken symbol table: the demangler's
 * recursion grows with its input, and a report has no use for them whole. */
#define MAX_NAME 1024

char *symbolize_demangle(const char *name)
{
    if (strnlen(name, MAX_NAME + 1) > MAX_NAME) {
        char *cut = malloc(MAX_NAME + 4);
        if (cut)
            snprintf(cut, MAX_NAME + 4, "%.*s...", MAX_NAME, name);
        return cut;
    }
    /* Debug symbol tables keep version suffixes: pthread_mutex_lock@@GLIBC_2.2.5. */
    const char *at = strchr(name, '@');
    if (at && at != name) {
        char *bare = strndup(name, (size_t)(at - name));
        char *out = symbolize_demangle(bare);
        free(bare);
        return out;
    }
    if (strncmp(name, "_Z", 2) == 0) {
        int status = 0;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    return strdup(name);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void symbolize_code(struct procmaps *maps, int pid, uint64_t addr, bool return_addr, struct pt_frame *f)
{
    uint64_t look = return_addr && addr ? addr - 1 : addr;
    struct pm_proc *p = procmaps_get(maps, pid);
    struct pm_map *m = procmaps_find(p, look);
    char buf[128];

    if (!m) {
        procmaps_refresh(p);
        m = procmaps_find(p, look);
    }
    f->module = m && m->path ? strdup(base_name(m->path)) : NULL;
    struct elf_file *ef = m ? procmaps_elf(p, m) : NULL;
    if (ef) {
        const struct elf_sym *s = elfsyms_lookup(ef, look - m->bias, true);
        if (s) {
            f->name = symbolize_demangle(s->name);
            return;
        }
        snprintf(buf, sizeof(buf), "[%s+0x%llx]", f->module,
                 (unsigned long long)(look - m->bias));
    } else if (m && m->path) {
        snprintf(buf, sizeof(buf), "[%s+0x%llx]", f->module,
                 (unsigned long long)(look - m->start + m->offset));
    } else {
        snprintf(buf, sizeof(buf), "[unknown]");
    }
    f->name = strdup(buf);
}

char *symbolize_data(struct procmaps *maps, int pid, uint64_t addr)
{
    uint64_t vaddr;
    struct elf_file *ef = procmaps_image_at(procmaps_get(maps, pid), addr, &vaddr);
    const struct elf_sym *s = ef ? elfsyms_lookup(ef, vaddr, false) : NULL;
    return s ? symbolize_demangle(s->name) : NULL;
}

void frame_free(struct pt_frame *f)
{
    free(f->name);
    free(f->module);
    f->name = f->module = NULL;
}

static bool has_prefix(const char *s, const char *const *prefixes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

bool frame_is_c_runtime(const struct pt_frame *f)
{
    static const char *const prefixes[] = {"libc.so", "libc-", "libpthread", "ld-linux",
                                           "libstdc++", "ld-musl", "libc.musl"};
    return f->module && has_prefix(f->module, prefixes, sizeof(prefixes) / sizeof(prefixes[0]));
}

bool frame_is_runtime(const struct pt_frame *f)
{
    static const char *const jdk[] = {"java.", "jdk.", "sun.", "["};
    /* Go's runtime and standard sync packages: no C symbol has a dot. */
    static const char *const go[] = {"runtime.", "sync.", "internal/"};
    if (!f->module)
        return false;
    if (strcmp(f->module, PT_JAVA_MODULE) == 0)
        return has_prefix(f->name, jdk, sizeof(jdk) / sizeof(jdk[0]));
    return frame_is_c_runtime(f) || strncmp(f->module, "libjvm.so", 9) == 0 ||
           (f->name && has_prefix(f->name, go, sizeof(go) / sizeof(go[0])));
}

