/* A JVM's class names by klass pointer, read from its memory once: a
 * server making 10 000 lock objects a second would otherwise read the same
 * few classes' names and superclasses (a dozen reads of /proc/PID/mem) for
 * every one. Bounded: past JVM_CLASSES_MAX classes the cache starts over. */
#ifndef PT_JVM_CLASSES_H
#define PT_JVM_CLASSES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JVM_CLASSES_MAX 4096

struct jvm_classes;

/* Copies KLASS's name and superclasses into NAME and SUPERS when cached. */
bool jvm_classes_get(const struct jvm_classes *c, uint64_t klass, char *name, size_t len, char *supers,
                     size_t slen);

/* Remembers them; *C is made on first use. */
void jvm_classes_put(struct jvm_classes **c, uint64_t klass, const char *name, const char *supers);

void jvm_classes_free(struct jvm_classes *c);

#endif
