/*
 * sg_soc.h - the Ascend SoC names ATC's --soc_version takes, and what
 * float16 overflow gives on each.
 *
 * The overflow mode (Ascend's documentation of INF_NAN_MODE_ENABLE and
 * aclrtSetDeviceSatMode; ../shared/BACKGROUND.md):
 *   - Atlas training series (Ascend910, 910A, 910B, 910ProA, 910ProB,
 *     910PremiumA: the first Ascend 910) and Atlas inference series and
 *     200I/500 A2 (Ascend310, 310P*, 310B*): saturation only;
 *   - Atlas A2 and A3 (Ascend910B1..B4, Ascend910_93*): INF/NaN by default.
 * In saturation mode an overflow gives +-65504 in float16 and a NaN gives 0;
 * in INF/NaN mode results are IEEE 754's.
 *
 * Names compare ignoring case (ATC's own tables key them in lower case);
 * sg_soc_find returns the spelling ATC documents. A name not in the table
 * is not refused here: callers decide (the mock compiler needs an explicit
 * overflow mode for it; sg_soc_suggest offers the nearest known name).
 */
#ifndef SG_SOC_H
#define SG_SOC_H

#include <stddef.h>

enum sg_overflow {
    SG_OVERFLOW_DEFAULT = 0, /* the SoC's (sg_soc_overflow) */
    SG_OVERFLOW_INF,         /* float16 overflow gives +-inf (and NaN after) */
    SG_OVERFLOW_SATURATION,  /* overflow clamps at +-65504, NaN becomes 0 */
    SG_OVERFLOW_COUNT
};

struct sg_soc {
    const char *name;      /* as ATC documents it: "Ascend910B1" */
    const char *series;    /* "Atlas A2 training/inference series" */
    enum sg_overflow mode; /* its default overflow mode (never DEFAULT) */
};

/* The known SoC named `name` (ignoring case), or NULL. */
const struct sg_soc *sg_soc_find(const char *name);

/* The i-th known SoC (in the order they are listed), NULL past the end. */
const struct sg_soc *sg_soc_at(size_t i);

/* The known SoC name nearest to an unknown `name` when it looks mistyped
 * (sg_suggest.h), else NULL. */
const char *sg_soc_suggest(const char *name);

/* The default overflow mode of a known SoC; SG_OVERFLOW_DEFAULT (unknown)
 * for a name not in the table or NULL. */
enum sg_overflow sg_soc_overflow(const char *soc);

#endif
