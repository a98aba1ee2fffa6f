/* Checks made before loading anything, each failing with one line that
 * says what is wrong and how to fix it. */
#ifndef PT_PREFLIGHT_H
#define PT_PREFLIGHT_H

/* Returns 0, or -1 after printing the reason. */
int preflight_pids(const int *pids, int npids);
int preflight_privileges(void);
int preflight_btf(void);
/* Mounts tracefs when it is missing; syscall tracepoints need it. */
int preflight_tracefs(void);

#endif
