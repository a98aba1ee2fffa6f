/* `parktrace -- COMMAND`: starts the command held at a gate, so it is
 * traced from its first instruction. */
#ifndef PT_LAUNCH_H
#define PT_LAUNCH_H

/* Forks COMMAND, stopped before exec. Returns its PID or -1. */
int launch_prepare(char **command);
/* The file COMMAND's exec will run, as execvp finds it (a name without a
 * slash: the first executable regular file of that name on PATH), open
 * for reading; -1 when none. */
int launch_open_program(char *const *command);
/* Lets it exec. Returns 0 once COMMAND runs, or the errno of its failed
 * exec (the child is then reaped). */
int launch_release(void);
/* Kills a prepared command that will never be released. */
void launch_abort(void);

#endif
