/*
 * catalogue.c - the ATC fusion pass catalogue (see sg_fusion.h).
 *
 * One row per pass, from SG_FUSION_PASS_MAP, so the enum, the listing and
 * the name lookup cannot drift apart. Names are those ATC's graph and UB
 * fusion references and its fusion switch file use.
 */
#include "sg_suggest.h"
#include "sg_fusion.h"

#include <string.h>

static const struct sg_fusion_pass passes[] = {
#define SG__FP_ROW(id, name, kind, fuses, result)                                                  \
    {SG_FP_##id, name, SG_FUSION_##kind, fuses, result},
    SG_FUSION_PASS_MAP(SG__FP_ROW)
#undef SG__FP_ROW
};

_Static_assert(sizeof passes / sizeof passes[0] == SG_FUSION_PASS_COUNT,
               "one catalogue row per pass id");

const struct sg_fusion_pass *sg_fusion_pass_get(enum sg_fusion_pass_id id)
{
    return (unsigned)id < SG_FUSION_PASS_COUNT ? &passes[id] : NULL;
}

const struct sg_fusion_pass *sg_fusion_pass_find(const char *name)
{
    for (size_t i = 0; i < SG_FUSION_PASS_COUNT; i++)
        if (strcmp(passes[i].name, name) == 0)
            return &passes[i];
    return NULL;
}

const struct sg_fusion_pass *sg_fusion_pass_suggest(const char *name)
{
    struct sg_suggest sg;
    sg_suggest_init(&sg, name);
    for (size_t i = 0; i < SG_FUSION_PASS_COUNT; i++)
        sg_suggest_offer(&sg, passes[i].name);
    const char *best = sg_suggest_best(&sg);
    return best ? sg_fusion_pass_find(best) : NULL;
}

const char *sg_fusion_kind_name(enum sg_fusion_kind kind)
{
    return kind == SG_FUSION_UB ? "UBFusion" : "GraphFusion";
}

const char *sg_fusion_kind_word(enum sg_fusion_kind kind)
{
    return kind == SG_FUSION_UB ? "UB" : "graph";
}
