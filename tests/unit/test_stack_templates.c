/* The stack cache's copies of kernel-unwound stacks (templates) over a
 * long run: kept while a blocker names them, let go a minute after the last
 * one went, and loaded again from the kernel's table when needed again. A
 * real BPF map stands for the kernel's ustacks table; the frames are this
 * test's own functions, named from its own symbols. */
#include <bpf/bpf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/parktrace.h"
#include "check.h"
#include "monotonic.h"
#include "services.h"
#include "stack_maps.h"
#include "stacks.h"

#define SEC_NS 1000000000ULL

__attribute__((noinline)) int reserve_stock(int n) { return n * 3 + 1; }
__attribute__((noinline)) int restock_shelf(int n) { return n * 5 + 2; }
__attribute__((noinline)) int serve_order(int n) { return reserve_stock(n) + restock_shelf(n); }

static uint32_t gone_slot;
static bool slot_is_gone(void *ctx, uint32_t slot)
{
    (void)ctx;
    return slot == gone_slot;
}

static void forget_slot(struct stacks *s, uint32_t slot)
{
    gone_slot = slot;
    stacks_forget_slots(s, slot_is_gone, NULL, &slot, 1);
}

static size_t entries(struct stacks *s)
{
    size_t n, tmpl, bytes;
    stacks_usage(s, &n, &tmpl, &bytes);
    return n;
}

static size_t templates(struct stacks *s)
{
    size_t entries, tmpl, bytes;
    stacks_usage(s, &entries, &tmpl, &bytes);
    return tmpl;
}

/* Stores a two-frame stack, its leaf in FN, under ID. */
static int store(int fd, int id, void *fn)
{
    struct pt_ustack us;
    memset(&us, 0, sizeof(us));
    us.nr = 2;
    us.hash = (uint64_t)id;
    us.ip[0] = (uint64_t)(uintptr_t)fn + 4;
    us.ip[1] = (uint64_t)(uintptr_t)serve_order + 8;   /* a return address: named as pc - 1 */
    return bpf_map_update_elem(fd, &id, &us, BPF_ANY);
}

static bool leaf_is(const struct pt_stack *st, const char *name)
{
    return st->n >= 2 && st->frames[0].name && strcmp(st->frames[0].name, name) == 0;
}

int main(void)
{
    struct pt_services sv;
    if (!REQUIRE(services_open(&sv, NULL, NULL) == 0, "makes the symbol services"))
        goto done;
    int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "ustacks", 4, sizeof(struct pt_ustack), 64, NULL);
    if (fd < 0) {
        printf("SKIP %s: no BPF map (needs root)\n", __FILE__);
        check_skipped++;
        services_close(&sv);
        goto done;
    }
    const int a = PT_USTACK_ID | 5, b = PT_USTACK_ID | 6, me = getpid();
    REQUIRE(store(fd, a, reserve_stock) == 0 && store(fd, b, restock_shelf) == 0, "stores two stacks");
    struct stacks *s = stacks_new(&(struct stack_maps){.stacks_fd = -1, .ustacks_fd = fd, .samples_fd = -1, .times_fd = {-1, -1}}, NULL, &sv);

    /* Blocker 3 waits on path A, blocker 4 on path B. */
    const struct pt_stack *sa = stacks_resolve(s, 3, me, a), *sb = stacks_resolve(s, 4, me, b);
    CHECK(leaf_is(sa, "reserve_stock") && leaf_is(sb, "restock_shelf"), "each blocker's stack is named from its template");
    CHECK(templates(s) == 2, "one template per process and stack (%zu)", templates(s));
    CHECK(stacks_resolve(s, 9, me, a) == sa, "a second blocker on path A names from the same template");
    forget_slot(s, 9);

    uint64_t t0 = monotonic_ns();
    stacks_trim_templates(s, t0 + 120 * SEC_NS);
    CHECK(templates(s) == 2 && stacks_templates_trimmed(s) == 0,
          "templates that live blockers name stay, however old (%zu)", templates(s));

    /* Blocker 3 is recycled: A is named by no one from now. */
    forget_slot(s, 3);
    uint64_t t1 = monotonic_ns();
    stacks_trim_templates(s, t1 + 30 * SEC_NS);
    CHECK(templates(s) == 2, "a template unused for 30 s stays (%zu)", templates(s));
    stacks_trim_templates(s, t1 + 45 * SEC_NS);
    CHECK(templates(s) == 2, "a template unused for 45 s stays (%zu)", templates(s));
    stacks_trim_templates(s, t1 + 70 * SEC_NS);
    CHECK(templates(s) == 1 && stacks_templates_trimmed(s) == 1,
          "a template unused for a minute goes, the one blocker 4 names stays (%zu, %llu trimmed)", templates(s),
          (unsigned long long)stacks_templates_trimmed(s));
    CHECK(leaf_is(sb, "restock_shelf"), "blocker 4's stack still reads whole");

    /* Path A waits again, on a new blocker: loaded from the kernel's table. */
    const struct pt_stack *again = stacks_resolve(s, 5, me, a);
    CHECK(leaf_is(again, "reserve_stock") && !again->truncated && stacks_lost(s) == 0,
          "a stack needed again is loaded from the kernel's table");

    /* The kernel's table lets it go while a thread's cache may still give
     * its id: the template, unused, is the only copy left, kept as pcs. */
    forget_slot(s, 5);
    bpf_map_delete_elem(fd, &a);
    stacks_trim_templates(s, t1 + 200 * SEC_NS);
    CHECK(templates(s) == 2 && stacks_templates_compact(s) == 1,
          "an unused template the kernel no longer holds is kept, compact (%zu, %d compact)", templates(s),
          stacks_templates_compact(s));
    const struct pt_stack *kept = stacks_resolve(s, 6, me, a);
    CHECK(leaf_is(kept, "reserve_stock") && !kept->truncated && stacks_lost(s) == 0 &&
              stacks_templates_compact(s) == 0,
          "a compact template needed again is named again, nothing lost");

    /* Stored again by a walk: the kernel holds it, and the copy can go. */
    forget_slot(s, 6);
    store(fd, a, reserve_stock);
    stacks_trim_templates(s, t1 + 300 * SEC_NS);
    CHECK(templates(s) == 1 && stacks_templates_compact(s) == 0,
          "once the kernel holds it again, the unused template goes (%zu)", templates(s));

    /* Recycling finds a slot's entries by its own chain, which slots 16 384
     * apart share: only the recycled slot's go. */
    const uint32_t near = 40, far = 40 + 16384;
    const struct pt_stack *n1 = stacks_resolve(s, near, me, b), *f1 = stacks_resolve(s, far, me, b);
    stacks_canonical(s, near, me, b);
    stacks_canonical(s, far, me, b);
    size_t before = entries(s);
    forget_slot(s, near);
    CHECK(entries(s) == before - 1 && stacks_resolve(s, far, me, b) == f1 && leaf_is(f1, "restock_shelf"),
          "a recycled slot's entry goes, the one sharing its chain stays (%zu of %zu)", entries(s), before);
    CHECK(stacks_canonical(s, far, me, b) == b, "the slot that stays keeps its call-path mark");
    const struct pt_stack *n2 = stacks_resolve(s, near, me, b);
    CHECK(entries(s) == before && leaf_is(n2, "restock_shelf"), "the recycled slot's stack is named anew (%p, %p)",
          (const void *)n1, (const void *)n2);
    stacks_forget_process(s, me);
    CHECK(entries(s) == 0, "an exited process's entries all go, from their slots' chains too (%zu)", entries(s));
    forget_slot(s, far);
    CHECK(leaf_is(stacks_resolve(s, far, me, b), "restock_shelf"), "and its slots recycled after it are named anew");
    stacks_free(s);
    close(fd);

    /* Compact templates are bounded: past 8 192, the longest unused go. */
    enum { MANY = 8200 };
    fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "ustacks", 4, sizeof(struct pt_ustack), MANY + 8, NULL);
    s = stacks_new(&(struct stack_maps){.stacks_fd = -1, .ustacks_fd = fd, .samples_fd = -1, .times_fd = {-1, -1}}, NULL, &sv);
    bool stored = fd >= 0;
    for (int i = 0; i < MANY && stored; i++)
        stored = store(fd, PT_USTACK_ID | (100 + i), i & 1 ? reserve_stock : restock_shelf) == 0 &&
                 stacks_resolve(s, 100 + (uint32_t)i, me, PT_USTACK_ID | (100 + i))->n >= 2;
    if (REQUIRE(stored, "stores and names %d stacks", MANY)) {
        for (int i = 0; i < MANY; i++) {
            forget_slot(s, 100 + (uint32_t)i);
            int id = PT_USTACK_ID | (100 + i);
            bpf_map_delete_elem(fd, &id);
        }
        uint64_t t2 = monotonic_ns();
        stacks_trim_templates(s, t2 + 70 * SEC_NS);
        CHECK(stacks_templates_compact(s) == MANY, "%d unused templates the kernel let go are kept (%d)", MANY,
              stacks_templates_compact(s));
        stacks_trim_templates(s, t2 + 80 * SEC_NS);
        CHECK(stacks_templates_compact(s) == 8192 && templates(s) == 8192,
              "past 8 192 compact templates the longest unused go (%d)", stacks_templates_compact(s));
        const struct pt_stack *first = stacks_resolve(s, 1, me, PT_USTACK_ID | 100);
        const struct pt_stack *last = stacks_resolve(s, 2, me, PT_USTACK_ID | (100 + MANY - 1));
        CHECK(first->truncated && stacks_lost(s) == 1 && leaf_is(last, "reserve_stock"),
              "the first one let go reads cut short and counts as lost, the last one kept reads whole");
    }

    stacks_free(s);
    close(fd);
    services_close(&sv);
done:
    printf("DONE %s: %d passed, %d failed, %d skipped\n", __FILE__, check_passed, check_failed, check_skipped);
    return check_failed != 0;
}
