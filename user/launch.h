/* `parktrace -- COMMAND`: starts the command held at a gate, so it is
 * traced from its first instruction. */
#ifndef PT_LAUNCH_H
#define PT_LAUNCH_H

/* Forks COMMAND, stopped before exec. Returns its PID or -1. */
int launch_prepare(char **command);
/* Lets it exec. Returns 0 once COMMAND runs, or the errno of its failed
 * exec (the child is then reaped). */
int launch_release(void);
/* Kills a prepared command that will never be released. */
void launch_abort(void);

#endif
