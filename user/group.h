/* --by class and --by site: rows of one process merged by the blocker's
 * class, or by the application frame that waited. */
#ifndef PT_GROUP_H
#define PT_GROUP_H
#include "options.h"
#include "model.h"

/* Merges R's rows in place. The merged row keeps the identity, first
 * thread and stack of its member with the most thread time. */
void group_rows(struct pt_model *r, enum pt_group by);

#endif
