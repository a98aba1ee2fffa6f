#ifndef PT_JVM_ATTACH_H
#define PT_JVM_ATTACH_H
#include <stddef.h>
int jvm_attach_command(int pid, const char *const args[3], char *out, size_t outlen, int timeout_ms, char *err, size_t errlen);
#endif
