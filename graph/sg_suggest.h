/*
 * sg_suggest.h - "did you mean": the known name nearest to a mistyped one.
 *
 * Every place that refuses a name from a table (commands, options, passes
 * and their options, ATC fusion passes, SoC names) offers the table's names
 * to one sg_suggest and appends its answer to the error, so the rule for
 * "near enough" is the same everywhere. Distance is the optimal string
 * alignment distance (insert, delete, substitute, swap two neighbours),
 * ignoring case: `AutomaticUBFusion` is one step from nothing but
 * `AutomaticUbFusion`, `inspekt` one from `inspect`, `Ascend91OB` one from
 * `Ascend910B`. No allocation: names longer than SG_SUGGEST_MAX_LEN are
 * never near anything.
 */
#ifndef SG_SUGGEST_H
#define SG_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

enum { SG_SUGGEST_MAX_LEN = 128 };

/* The distance between a and b (bytes, ASCII case folded when nocase), or
 * SIZE_MAX when either is longer than SG_SUGGEST_MAX_LEN. */
size_t sg_edit_distance(const char *a, const char *b, bool nocase);

/* The search for the nearest name; zero-initialise, then sg_suggest_init. */
struct sg_suggest {
    const char *word; /* what was typed (borrowed) */
    const char *best; /* the nearest candidate so far (borrowed), or NULL */
    size_t dist;
};

/* Start a search for names near `word` (borrowed until the last call). */
void sg_suggest_init(struct sg_suggest *s, const char *word);

/* Offer one known name (borrowed; NULL is ignored). The first of equally
 * near names wins, so offer them in the order a user would want them. */
void sg_suggest_offer(struct sg_suggest *s, const char *name);

/* The nearest name when it is near enough to be what was meant (at most a
 * third of the word's length, at least one edit, or the same ignoring case),
 * else NULL. An exact match is never suggested (nothing was mistyped). */
const char *sg_suggest_best(const struct sg_suggest *s);

#endif
