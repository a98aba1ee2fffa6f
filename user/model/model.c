#include "model.h"
#include "oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *model_type_name(enum pt_report_type t)
{
    return t == PT_REPORT_INTERVAL ? "interval" : t == PT_REPORT_FINAL ? "final" : "dump";
}

/* One more zeroed element of M's array FIELD (N used, CAP held). */
#define MODEL_ADD(m, field, n, cap)                                                \
    do {                                                                           \
        if ((m)->n == (m)->cap) {                                                  \
            int want_ = (m)->cap ? 2 * (m)->cap : 64;                              \
            void *p_ = realloc((m)->field, (size_t)want_ * sizeof(*(m)->field));   \
            if (!p_)                                                               \
                out_of_memory("the report");                                       \
            (m)->field = p_;                                                       \
            (m)->cap = want_;                                                      \
        }                                                                          \
        memset(&(m)->field[(m)->n], 0, sizeof(*(m)->field));                       \
        return &(m)->field[(m)->n++];                                              \
    } while (0)

struct pt_model_phase *model_add_phase(struct pt_model *m)
{
    MODEL_ADD(m, phases, nphases, phases_cap);
}

struct pt_model_stack *model_add_stack(struct pt_model *m)
{
    MODEL_ADD(m, stacks, nstacks, stacks_cap);
}

struct pt_model_waker *model_add_waker(struct pt_model *m)
{
    MODEL_ADD(m, wakers, nwakers, wakers_cap);
}

struct pt_model_process *model_add_process(struct pt_model *m)
{
    MODEL_ADD(m, procs, nprocs, procs_cap);
}

struct pt_model_chain *model_add_chain(struct pt_model *m)
{
    MODEL_ADD(m, chains, nchains, chains_cap);
}

double model_stack_sampled_pct(const struct pt_totals *t)
{
    if (!t->stack_time_ns)
        return 0;
    double sampled = (double)t->stack_sampled_ns, held = (double)(t->stack_time_ns - t->stack_unsampled_ns);
    return 100.0 * (sampled < held ? sampled : held) / (double)t->stack_time_ns;
}

double model_stack_samples_effective(const struct pt_totals *t)
{
    if (!t->stack_sampled_sq)
        return (double)t->stack_samples;
    double sum = (double)t->stack_sampled_ns / 1024.0;
    return sum * sum / (double)t->stack_sampled_sq;
}

void model_clear(struct pt_model *m)
{
    struct pt_model keep = {.phases = m->phases, .phases_cap = m->phases_cap, .stacks = m->stacks,
                            .stacks_cap = m->stacks_cap, .wakers = m->wakers, .wakers_cap = m->wakers_cap,
                            .procs = m->procs, .procs_cap = m->procs_cap, .chains = m->chains,
                            .chains_cap = m->chains_cap};
    *m = keep;
}

void model_free(struct pt_model *m)
{
    free(m->phases);
    free(m->stacks);
    free(m->wakers);
    free(m->procs);
    free(m->chains);
    memset(m, 0, sizeof(*m));
}
