/* The wait chains of a report (metrics.md, "Wait chains"): one line each
 * after the text report's rows, and the JSON report's "chains" array. */
#include <inttypes.h>

#include "duration.h"
#include "json.h"
#include "sanitize.h"
#include "writer.h"

/* What a link waits on, as the text shows it: the blocker's name where
 * it has one (a global), else its class. */
static const char *blocker_label(const struct pt_model_chain_link *l)
{
    return l->name ? l->name : l->cls ? l->cls : l->kind;
}

void write_chain_line(FILE *f, const struct pt_model_chain *ch)
{
    char d[24];
    fprintf(f, "  %9s %7" PRIu64 " waits  ", duration_format(ch->time_ns, d, sizeof(d)), ch->waits);
    for (int i = 0; i < ch->nlinks; i++) {
        const struct pt_model_chain_link *l = &ch->links[i];
        /* The process where the chain enters one. */
        if (!i || l->pid != ch->links[i - 1].pid) {
            sanitize_fputs(f, l->comm, 0, 0);
            fprintf(f, "[%d]:", l->pid);
        }
        sanitize_fputs(f, l->thread[0] ? l->thread : "(exited)", 0, 0);
        if (l->kind) {
            fputs(" -[", f);
            sanitize_fputs(f, blocker_label(l), 0, 0);
            fputs("]-> ", f);
        }
    }
    /* A cycle closes on its first link's thread. */
    if (ch->cycle && ch->nlinks)
        sanitize_fputs(f, ch->links[0].thread[0] ? ch->links[0].thread : "(exited)", 0, 0);
    fprintf(f, " (%s", ch->end);
    if (ch->end_frame) {
        fputs(": ", f);
        sanitize_fputs(f, ch->end_frame, 0, 0);
    }
    fputs(")\n", f);
}

void write_chains_text(FILE *f, const struct pt_model *m)
{
    if (!m->nchains && !m->totals.chains_unread)
        return;
    fprintf(f, "-- wait chains, by the waiting time they explain: who waited -[on what]-> its holder ... (how the last"
               " stood) --\n");
    for (int i = 0; i < m->nchains; i++)
        write_chain_line(f, &m->chains[i]);
    /* Their time is in no chain: the chains above are short of it. */
    if (m->totals.chains_unread)
        fprintf(f, "  %" PRIu64 " waits had no chain read, the chains' budget spent (a larger --stack-budget"
                   " raises it)\n", m->totals.chains_unread);
}

static void json_link(FILE *f, const struct pt_model_chain_link *l)
{
    fprintf(f, "{\"pid\":%d,\"comm\":", l->pid);
    json_string(f, l->comm);
    fputs(",\"thread\":", f);
    json_string(f, l->thread);
    fputs(",\"kind\":", f);
    json_string(f, l->kind);
    fputs(",\"class\":", f);
    json_string(f, l->kind ? l->cls : NULL);
    fputs(",\"id\":", f);
    if (l->kind)
        fprintf(f, "\"0x%" PRIx64 "\"", l->id);
    else
        fputs("null", f);
    fputs(",\"name\":", f);
    json_string(f, l->kind ? l->name : NULL);
    fputs(",\"top_frame\":", f);
    json_string(f, l->kind ? l->top_frame : NULL);
    fputc('}', f);
}

void write_chains_json(FILE *f, const struct pt_model *m)
{
    fputs(",\"chains\":[", f);
    for (int i = 0; i < m->nchains; i++) {
        const struct pt_model_chain *ch = &m->chains[i];
        fprintf(f, "%s{\"time_ns\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"cycle\":%s,\"links\":[", i ? "," : "",
                ch->time_ns, ch->waits, ch->cycle ? "true" : "false");
        for (int j = 0; j < ch->nlinks; j++) {
            if (j)
                fputc(',', f);
            json_link(f, &ch->links[j]);
        }
        fputs("],\"end\":", f);
        json_string(f, ch->end);
        fputs(",\"end_frame\":", f);
        json_string(f, ch->end_frame);
        fputc('}', f);
    }
    fputc(']', f);
}
