/*
 * mock.c - running a mock OM (sg_mockom.h): the per-node float16 sides and
 * the overflow mode come from the model itself (see sg_rt_opts_mock in
 * sg_runtime.h). The fused ops are ordinary kernels (kernels/mock_fused.c).
 */
#include "rt_impl.h"
#include "sg_mockom.h"

static unsigned mock_sides(const sg_node *n, void *ctx)
{
    (void)ctx;
    unsigned bits = sg_mockom_node_fp16(n);
    return ((bits & SG_MOCKOM_FP16_IN) ? SG_RT_FP16_INPUTS : 0u) |
           ((bits & SG_MOCKOM_FP16_OUT) ? SG_RT_FP16_OUTPUTS : 0u);
}

sg_status sg_rt_opts_mock(const sg_model *m, struct sg_rt_opts *opts, struct sg_diag *diag)
{
    sg_status st = sg_mockom_check(m, diag);
    if (st)
        return st;
    opts->numerics = sg_mockom_saturates(m) ? SG_NUMERICS_FP16_SAT : SG_NUMERICS_FP16_INF;
    opts->fp16_sides = mock_sides;
    opts->fp16_sides_ctx = NULL;
    return SG_OK;
}
