/* soc.c - the known Ascend SoC names and their overflow modes (sg_soc.h). */
#include "sg_soc.h"
#include "sg_suggest.h"

#include <strings.h>

#define TRAIN "Atlas training series"
#define A2 "Atlas A2 training/inference series"
#define A3 "Atlas A3 training/inference series"
#define INFER "Atlas inference series"
#define INFER_A2 "Atlas 200I/500 A2 inference products"

static const struct sg_soc socs[] = {
    {"Ascend910", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910A", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910B", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910ProA", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910ProB", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910PremiumA", TRAIN, SG_OVERFLOW_SATURATION},
    {"Ascend910B1", A2, SG_OVERFLOW_INF},
    {"Ascend910B2", A2, SG_OVERFLOW_INF},
    {"Ascend910B2C", A2, SG_OVERFLOW_INF},
    {"Ascend910B3", A2, SG_OVERFLOW_INF},
    {"Ascend910B4", A2, SG_OVERFLOW_INF},
    {"Ascend910B4-1", A2, SG_OVERFLOW_INF},
    {"Ascend910_93", A3, SG_OVERFLOW_INF},
    {"Ascend910_9391", A3, SG_OVERFLOW_INF},
    {"Ascend910_9392", A3, SG_OVERFLOW_INF},
    {"Ascend910_9381", A3, SG_OVERFLOW_INF},
    {"Ascend910_9382", A3, SG_OVERFLOW_INF},
    {"Ascend910_9372", A3, SG_OVERFLOW_INF},
    {"Ascend910_9362", A3, SG_OVERFLOW_INF},
    {"Ascend310", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P1", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P3", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P5", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P7", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P3vir01", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P3vir02", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P3vir04", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310P3vir08", INFER, SG_OVERFLOW_SATURATION},
    {"Ascend310B1", INFER_A2, SG_OVERFLOW_SATURATION},
    {"Ascend310B2", INFER_A2, SG_OVERFLOW_SATURATION},
    {"Ascend310B3", INFER_A2, SG_OVERFLOW_SATURATION},
    {"Ascend310B4", INFER_A2, SG_OVERFLOW_SATURATION},
};

#define N_SOCS (sizeof socs / sizeof socs[0])

const struct sg_soc *sg_soc_find(const char *name)
{
    for (size_t i = 0; name && i < N_SOCS; i++)
        if (strcasecmp(socs[i].name, name) == 0)
            return &socs[i];
    return NULL;
}

const struct sg_soc *sg_soc_at(size_t i)
{
    return i < N_SOCS ? &socs[i] : NULL;
}

const char *sg_soc_suggest(const char *name)
{
    struct sg_suggest sg;
    sg_suggest_init(&sg, name);
    for (size_t i = 0; i < N_SOCS; i++)
        sg_suggest_offer(&sg, socs[i].name);
    return sg_suggest_best(&sg);
}

enum sg_overflow sg_soc_overflow(const char *soc)
{
    const struct sg_soc *s = sg_soc_find(soc);
    return s ? s->mode : SG_OVERFLOW_DEFAULT;
}
