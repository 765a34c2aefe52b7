/*
 * inputs.h - the inputs of a run as the command line gives them (-i FILE,
 * -i NAME=FILE, --input-shape, --random SEED, --range LO,HI), shared by
 * `surgeon run` and the end-to-end `surgeon compare MODEL`.
 *
 * Options are recorded as given; cli_inputs_load reads the files or makes
 * the random values once the runtime says which inputs the model needs.
 */
#ifndef SG_CLI_INPUTS_H
#define SG_CLI_INPUTS_H

#include "cli.h"
#include "sg_runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One --input-shape entry: static dims only (the run needs sizes). */
struct cli_shape {
    char name[256];
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
};

struct cli_inputs {
    struct cli_list files; /* -i arguments as given: FILE or NAME=FILE */
    struct cli_shape *shapes;
    size_t n_shapes, cap_shapes;
    bool random, have_range;
    unsigned long long seed;
    double lo, hi; /* --range, default [0, 1) */
};

/* An empty set: no files, no shapes, no random, range [0, 1). */
void cli_inputs_init(struct cli_inputs *in);
void cli_inputs_free(struct cli_inputs *in);

/* Record one -i argument. False when out of memory. */
bool cli_inputs_add_file(struct cli_inputs *in, const char *arg);

/* Parse "x:1,3,224,224;y:4" (a name may hold ':'; the last one ends it).
 * False on bad syntax, a negative dim or out of memory. */
bool cli_inputs_add_shapes(struct cli_inputs *in, const char *text);

/* --random SEED (a decimal integer); false when it is not one. */
bool cli_inputs_set_seed(struct cli_inputs *in, const char *text);

/* --range LO,HI with LO < HI, both finite and HI - LO finite; false
 * otherwise. */
bool cli_inputs_set_range(struct cli_inputs *in, const char *text);

/* The shape-argument text of the usage errors above, for messages. */
#define CLI_INPUT_SHAPE_SYNTAX "\"x:1,3,224,224;y:4\""

/*
 * The value of every input rt needs (sg_rt_n_inputs), in its order, into
 * *values (sg_calloc'd array of new references; free with
 * cli_inputs_values_free): named -i files first, then positional ones in
 * model order, then random values for the rest when --random was given.
 * Errors name the input and the file: an --input-shape or -i NAME that is
 * no input of the model (SG_ENOTFOUND), an input given twice (SG_EDUP),
 * more files than inputs (SG_EINVAL), an input not given (SG_EUNDEF), and
 * the file readers' errors (wrong dtype, shape or size).
 */
sg_status cli_inputs_load(const struct cli_inputs *in, const sg_rt *rt, sg_rt_value ***values,
                          struct sg_diag *d);

/* Unref the n values and free the array. NULL is a no-op. */
void cli_inputs_values_free(sg_rt_value **values, uint32_t n);

#endif
