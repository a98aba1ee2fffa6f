#include "fleet_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "writer.h"

/* parktrace's own CPU time and resident memory, for /metrics. */
static void self_cost(struct pt_write_opts *o)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        o->self_cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                        (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long size, resident;
    if (f && fscanf(f, "%lu %lu", &size, &resident) == 2)
        o->self_rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
    if (f)
        fclose(f);
}

static int render(struct fleet_snapshot *s, enum fleet_page page, const struct pt_model *m,
                  int (*write)(FILE *, const struct pt_model *, const struct pt_write_opts *),
                  const struct pt_write_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    int rc = write(f, m, o) < 0 ? -1 : 0;
    if (fclose(f))
        rc = -1;
    if (rc)
        free(buf);
    else
        fleet_snapshot_swap(s, page, buf, len);
    return rc;
}

int fleet_pages_render(struct fleet_snapshot *s, const struct pt_model *m, const struct self_values *self)
{
    struct pt_write_opts metrics = {.self = self}, mutex = {.locks_only = true, .since_start = true},
                         block = {.since_start = true};
    self_cost(&metrics);
    int rc = render(s, FLEET_METRICS, m, write_metrics, &metrics);
    rc |= render(s, FLEET_MUTEX, m, write_pprof, &mutex);
    rc |= render(s, FLEET_BLOCK, m, write_pprof, &block);
    return rc;
}
