#include "links_close.h"

#include <pthread.h>

/* Threads closing links at once: enough that the closes of a run (a few
 * dozen at most) wait for one or two grace periods, not one each. */
#define CLOSERS 16

struct closing {
    struct bpf_link **const *links;
    int n;
    int next;   /* the next link to close, taken atomically */
};

static void *closer(void *arg)
{
    struct closing *c = arg;
    for (int i; (i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->n;) {
        bpf_link__destroy(*c->links[i]);
        *c->links[i] = NULL;
    }
    return NULL;
}

void links_close_all(struct bpf_link **links[], int n)
{
    struct closing c = {.links = links, .n = n};
    pthread_t threads[CLOSERS];
    int started = 0;
    for (; started < CLOSERS && started < n - 1; started++)
        if (pthread_create(&threads[started], NULL, closer, &c) != 0)
            break;
    closer(&c);   /* this thread closes too, and all of them if none started */
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}
