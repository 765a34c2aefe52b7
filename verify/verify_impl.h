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

/* Words of a command line a record gives the user to repeat a run
 * (words.c); `ok` goes false when out of memory and stays so. Start as
 * {.ok = true}. */
struct sg__words {
    char **v; /* NULL-terminated once a word is in */
    size_t n, cap;
    bool ok;
};

void sg__words_add(struct sg__words *w, const char *word); /* NULL: nothing */
/* opt and value, when value is not NULL */
void sg__words_opt(struct sg__words *w, const char *opt, const char *value);
/* opt and the n words joined by ',', when n > 0 */
void sg__words_list(struct sg__words *w, const char *opt, const char *const *v, size_t n);
/* --cosine ... --mre-floor for every threshold that is not the default */
void sg__words_thresholds(struct sg__words *w, const struct sg_thresholds *t);
/* The words quoted for a shell (sg_malloc'd; NULL when out of memory or
 * empty); the words are dropped, w can gather the next line. */
char *sg__words_join(struct sg__words *w);
void sg__words_free(struct sg__words *w);

#endif
