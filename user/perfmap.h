#ifndef PT_PERFMAP_H
#define PT_PERFMAP_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
struct perfmap_entry { uint64_t start, end; char *name; };
struct perfmap { struct perfmap_entry *e; int n; };
int perfmap_load(struct perfmap *pm, int pid, char *err, size_t errlen);
const struct perfmap_entry *perfmap_find(const struct perfmap *pm, uint64_t pc);
void perfmap_free(struct perfmap *pm);
void perfmap_java_name(const char *perf_name, char *out, size_t len);
bool perfmap_exists(int pid);
void perfmap_remove(int pid);
#endif
