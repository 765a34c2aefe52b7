/*
 * verify_impl.h - what the files of verify/ share (not installed).
 */
#ifndef SG_VERIFY_IMPL_H
#define SG_VERIFY_IMPL_H

#include "sg_verify.h"

/* Send one event; fmt NULL sends a NULL text (PROGRESS: the step ended).
 * ev may be NULL. */
void sg__verify_emit(const struct sg_verify_events *ev, enum sg_verify_event kind, const char *fmt,
                     ...) __attribute__((format(printf, 3, 4)));

/* "a/b", sg_malloc'd (NULL when out of memory). */
char *sg__verify_join(const char *a, const char *b);

/* Append (name copied, v referenced) to values. SG_ENOMEM. */
sg_status sg__verify_values_add(struct sg_verify_values *values, const char *name, sg_rt_value *v,
                                struct sg_diag *diag);

#endif
