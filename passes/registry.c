/*
 * registry.c - the table of passes. `surgeon passes`, spec and YAML lookups
 * all read it, so a pass is registered in exactly one place.
 */
#include "pass_impl.h"

#include <string.h>

static const struct sg_pass *const registry[] = {
    &sg_pass_insert_clip, &sg_pass_cast_around,     &sg_pass_set_input_shape,
    &sg_pass_set_batch,   &sg_pass_remove_identity, &sg_pass_eliminate_dead,
    &sg_pass_merge_casts, &sg_pass_unique_names,    &sg_pass_toposort,
    &sg_pass_rename,      &sg_pass_to_fp16,         &sg_pass_fold_constants,
    &sg_pass_fold_bn,     &sg_pass_infer_shapes,    &sg_pass_simplify,
};

const struct sg_pass *const *sg_pass_list(size_t *count)
{
    *count = sizeof registry / sizeof registry[0];
    return registry;
}

const struct sg_pass *sg_pass_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}
