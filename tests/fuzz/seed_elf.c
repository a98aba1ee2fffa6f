/* Seed for the ELF readers: a few functions whose call-frame information
 * differs (a leaf, a frame-pointer frame with alloca, calls), compiled into a
 * tiny shared object by make fuzz rather than committed as a binary. */
#include <alloca.h>
#include <string.h>

int seed_leaf(int x);
int seed_alloca(int n);
int seed_caller(int n);

int seed_leaf(int x)
{
    return x * 3 + 1;
}

int seed_alloca(int n)
{
    char *buf = alloca((unsigned)n + 1);
    memset(buf, n, (unsigned)n + 1);
    return buf[n] + seed_leaf(n);
}

int seed_caller(int n)
{
    return seed_alloca(n) + seed_leaf(seed_alloca(n / 2));
}
