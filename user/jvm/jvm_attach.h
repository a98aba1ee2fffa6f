/* HotSpot's dynamic attach protocol, what `jcmd PID COMMAND` speaks: a Unix
 * socket /tmp/.java_pid<N> that the JVM opens on request (a trigger file
 * and SIGQUIT). Used to ask a JVM for its perf map (Compiler.perfmap). */
#ifndef PT_JVM_ATTACH_H
#define PT_JVM_ATTACH_H
#include <stddef.h>
#include <stdint.h>

/* Runs one attach-listener command in JVM PID (host pid) and stores its output
 * (NUL-terminated, truncated to OUTLEN-1) in OUT. Returns the JVM's result code
 * (0 = success), or -1 with a one-line reason in ERR. Never blocks longer than
 * TIMEOUT_MS in total.
 * ARGS: the operation and up to two arguments, NULL for none, e.g.
 * {"jcmd", "Compiler.perfmap", NULL}. A command the JVM rejects (its code -1,
 * a Java exception) also returns -1, with the JVM's message in ERR and OUT.
 * The JVM is sent SIGQUIT at most once, and only if it catches SIGQUIT and
 * has no attach socket yet: the caller must know its attach mechanism is
 * enabled, or SIGQUIT prints a thread dump instead. */
int jvm_attach_command(int pid, const char *const args[3], char *out, size_t outlen,
                       int timeout_ms, char *err, size_t errlen);

/* The same for the process PID that started at START_TIME (clock ticks
 * since boot, procstatus_start_time): fails, and signals nothing, when PID
 * now names another process. */
int jvm_attach_command_to(int pid, uint64_t start_time, const char *const args[3], char *out, size_t outlen,
                          int timeout_ms, char *err, size_t errlen);

#endif
