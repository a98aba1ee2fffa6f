/* The fleet outputs' pure parts: /metrics' bounded series and escaped
 * labels (write_metrics.c), and --listen's ADDR:PORT (hostport.c). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hostport.h"
#include "writer.h"

#define NCOMMS 70
#define NCLASSES 12

static char *render(const struct pt_model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = write_metrics(f, m, &(struct pt_write_opts){.self_cpu_s = 1.5, .self_rss = 4096});
    fclose(f);
    if (rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* NCOMMS process names with NCLASSES classes each: the series stay within
 * 64 names of 8 classes each (plus "other"), and every wait is still
 * counted somewhere. */
static void bounded_series(void)
{
    static struct pt_model_stack st[NCOMMS * NCLASSES];
    static char classes[NCLASSES][16];
    struct pt_stack empty = {0};
    uint64_t total = 0;
    for (int c = 0; c < NCLASSES; c++)
        snprintf(classes[c], sizeof(classes[c]), "class%d", c);
    for (int p = 0; p < NCOMMS; p++)
        for (int c = 0; c < NCLASSES; c++) {
            struct pt_model_stack *s = &st[p * NCLASSES + c];
            snprintf(s->root, sizeof(s->root), "comm%d", p);
            s->stack = &empty;
            s->leaf = classes[c];
            s->kind = "futex";
            s->count = (uint64_t)(p + 1) * 100 + (uint64_t)c;
            s->ns = s->count * 1000;
            total += s->count;
        }
    struct pt_model m = {.has_stacks = true, .stacks = st, .nstacks = NCOMMS * NCLASSES};
    char *out = render(&m);
    if (!REQUIRE(out, "write_metrics failed"))
        return;
    int lines = 0, other_comm = 0;
    uint64_t sum = 0;
    for (char *l = strstr(out, "\nparktrace_waits_total{"); l; l = strstr(l + 1, "\nparktrace_waits_total{")) {
        lines++;
        other_comm += strncmp(l, "\nparktrace_waits_total{comm=\"other\"", 35) == 0;
        sum += strtoull(strchr(l, '}') + 2, NULL, 10);
    }
    CHECK(lines == 64 * 9 + 1, "64 names x (8 classes + other) + comm=other: %d series", lines);
    CHECK(other_comm == 1, "one series for the names past 64: %d", other_comm);
    CHECK(sum == total, "every wait counted once: %llu of %llu", (unsigned long long)sum,
          (unsigned long long)total);
    CHECK(strstr(out, "comm=\"comm69\"") && !strstr(out, "comm=\"comm0\""), "the heaviest names keep their series");
    CHECK(strstr(out, "class=\"class11\"") && !strstr(out, "comm=\"comm69\",container=\"\",kind=\"futex\",class=\"class0\""),
          "the heaviest classes keep theirs");
    free(out);
}

static void escaped_labels(void)
{
    struct pt_stack empty = {0};
    struct pt_model_stack st = {.root = "a\"b\\c\nd\xff", .stack = &empty, .leaf = "Lock$Sync", .kind = "jvm-park",
                                .count = 3, .ns = 1500000000};
    struct pt_row row = {.kind = "jvm-park", .comm = "a\"b\\c\nd\xff", .cls = "Lock$Sync",
                         .fig = {.parked_now = 2}, .has_csp = true, .csp = 0.25};
    struct pt_model m = {.has_stacks = true, .stacks = &st, .nstacks = 1, .rows = &row, .nrows = 1};
    char *out = render(&m);
    if (!REQUIRE(out, "write_metrics failed"))
        return;
    const char *labels = "{comm=\"a\\\"b\\\\c?d?\",container=\"\",kind=\"jvm-park\",class=\"Lock$Sync\",role=\"lock\"}";
    char want[512];
    snprintf(want, sizeof(want), "parktrace_waits_total%s 3\n", labels);
    CHECK(strstr(out, want) != NULL, "quote and backslash escaped, control and bad UTF-8 as '?'");
    snprintf(want, sizeof(want), "parktrace_wait_seconds_total%s 1.500000000\n", labels);
    CHECK(strstr(out, want) != NULL, "seconds");
    snprintf(want, sizeof(want), "parktrace_parked_threads%s 2\n", labels);
    CHECK(strstr(out, want) != NULL, "the row's waiting threads join the stack's series");
    snprintf(want, sizeof(want), "parktrace_critical_section_pressure%s 0.250000\n", labels);
    CHECK(strstr(out, want) != NULL, "CSP");
    CHECK(strstr(out, "process_cpu_seconds_total 1.500000\n") && strstr(out, "process_resident_memory_bytes 4096\n"),
          "parktrace's own cost");
    free(out);
}

/* One program in NCOMMS containers: a (comm, container) pair is a name
 * the bound counts, 64 of them shown, the rest container="other". */
static void containers_are_names(void)
{
    static struct pt_model_stack st[NCOMMS];
    static char ids[NCOMMS][72];
    struct pt_stack empty = {0};
    for (int p = 0; p < NCOMMS; p++) {
        snprintf(ids[p], sizeof(ids[p]), "%064d", p);
        st[p] = (struct pt_model_stack){.root = "java", .stack = &empty, .leaf = "Lock", .kind = "jvm-park",
                                        .container = ids[p], .count = (uint64_t)p + 1, .ns = ((uint64_t)p + 1) * 1000};
    }
    struct pt_model m = {.has_stacks = true, .stacks = st, .nstacks = NCOMMS};
    char *out = render(&m);
    if (!REQUIRE(out, "write_metrics failed"))
        return;
    int lines = 0, other = 0;
    for (char *l = strstr(out, "\nparktrace_waits_total{"); l; l = strstr(l + 1, "\nparktrace_waits_total{")) {
        lines++;
        other += strncmp(l, "\nparktrace_waits_total{comm=\"other\",container=\"other\"", 52) == 0;
    }
    CHECK(lines == 65 && other == 1, "70 containers of one program: 64 series and one of container=\"other\" "
                                     "(%d series, %d other)", lines, other);
    char heaviest[128];
    snprintf(heaviest, sizeof(heaviest), "comm=\"java\",container=\"%s\"", ids[NCOMMS - 1]);
    CHECK(strstr(out, heaviest) != NULL, "the heaviest container keeps its series");
    free(out);
}

static void addresses(void)
{
    struct sockaddr_storage sa;
    socklen_t len;
    CHECK(hostport_parse("127.0.0.1:9465", &sa, &len) == 0 && sa.ss_family == AF_INET &&
              ntohs(((struct sockaddr_in *)&sa)->sin_port) == 9465 && len == sizeof(struct sockaddr_in),
          "IPv4");
    CHECK(hostport_parse("[::1]:80", &sa, &len) == 0 && sa.ss_family == AF_INET6 &&
              ntohs(((struct sockaddr_in6 *)&sa)->sin6_port) == 80,
          "IPv6 in brackets");
    const char *bad[] = {"", ":1", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+80",
                         "127.0.0.1:80x", "localhost:80", "::1:80", "[::1]", "[127.0.0.1]:80", "1.2.3:80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(hostport_parse(bad[i], &sa, &len) == -1, "refused: '%s'", bad[i]);
}

int main(void)
{
    containers_are_names();
    bounded_series();
    escaped_labels();
    addresses();
    return CHECK_DONE();
}
