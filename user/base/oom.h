/* Out of memory where no caller could carry on sensibly (a report half
 * built, a table that must hold every blocker): one line saying what ran
 * out, then main's handler ends the run with status 2. The one way code
 * below main ends the process (docs/contributing.md, "Errors"). */
#ifndef PT_OOM_H
#define PT_OOM_H

/* Says "parktrace: out of memory for WHAT" and calls the handler; without
 * one (a unit test), aborts. */
_Noreturn void out_of_memory(const char *what);

/* HANDLER ends the process and does not return. */
void out_of_memory_handler(void (*handler)(void));

#endif
