/*
 * space.c - Dropout (GridSample, which was here, is in grid.c).
 *
 * Dropout in inference mode is the identity with a mask of ones. In
 * training mode (opset 12 on, training_mode true and a nonzero ratio) the
 * mask keeps element i when u_i >= ratio, u_i being the i-th draw of
 * numpy's legacy generator (MT19937 seeded like np.random.seed(seed),
 * doubles like np.random.uniform), and scales kept elements by
 * 1 / (1 - ratio): the same numbers the ONNX test generator produces. A
 * node without a seed attribute seeds from a hash of its name, so two runs
 * agree. Before opset 12 there is no training input and Dropout always
 * runs in inference mode.
 */
#include "rt_impl.h"
#include "sg_dims.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ Dropout */

/* numpy's legacy MT19937 (mt19937_seed, mt19937_next32/next_double). */
struct mt {
    uint32_t key[624];
    int pos;
};

static void mt_seed(struct mt *m, uint32_t seed)
{
    for (int i = 0; i < 624; i++) {
        m->key[i] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
    m->pos = 624;
}

static uint32_t mt_next32(struct mt *m)
{
    if (m->pos == 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (m->key[i] & 0x80000000u) | (m->key[(i + 1) % 624] & 0x7fffffffu);
            m->key[i] = m->key[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        m->pos = 0;
    }
    uint32_t y = m->key[m->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_double(struct mt *m)
{
    uint32_t a = mt_next32(m) >> 5, b = mt_next32(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static sg_status run_dropout(struct sg_kctx *k)
{
    const sg_rt_value *X = sg_kin(k, 0);
    const sg_rt_value *R = k->opset >= 12 ? sg_kin(k, 1) : NULL;
    const sg_rt_value *T = k->opset >= 12 ? sg_kin(k, 2) : NULL;
    if ((R && (R->numel != 1 || !sg_dtype_is_float(R->dtype))) ||
        (T && (T->numel != 1 || T->dtype != SG_DTYPE_BOOL)))
        return sg_kfail(k, SG_ESHAPE,
                        "ratio %s must be a float scalar and training_mode %s a bool "
                        "scalar",
                        R ? sg_kshape(k, R) : "(none)", T ? sg_kshape(k, T) : "(none)");
    double ratio = R ? sg_rt_get_f64(R, 0) : sg_kattr_float(k, "ratio", 0.5f);
    bool training = T && ((const uint8_t *)T->data)[0] != 0 && ratio != 0;
    if (training && !(ratio > 0 && ratio < 1))
        return sg_kfail(k, SG_ERANGE, "ratio %g must be in [0, 1) in training mode", ratio);
    int32_t mdt = k->opset >= 10 ? SG_DTYPE_BOOL : X->dtype;
    sg_rt_value *M = NULL, *Y;
    sg_status st;
    if (!training) {
        if ((st = sg_kout_alias(k, 0, X, X->dims, X->rank)) || !sg_kout_wanted(k, 1) ||
            (st = sg_kout(k, 1, mdt, X->dims, X->rank, &M)))
            return st;
        for (int64_t i = 0; i < M->numel; i++)
            sg_rt_set_f64(M, i, 1);
        return SG_OK;
    }
    if ((st = sg_kout(k, 0, X->dtype, X->dims, X->rank, &Y)) ||
        (sg_kout_wanted(k, 1) && (st = sg_kout(k, 1, mdt, X->dims, X->rank, &M))))
        return st;
    uint32_t seed = 0;
    const sg_attr *a = sg_kattr(k, "seed");
    if (a && a->type == SG_ATTR_INT) {
        seed = (uint32_t)a->i;
    } else {
        uint32_t h = 2166136261u;
        for (const char *p = k->node->name ? k->node->name : ""; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        seed = h;
    }
    struct mt *m = sg_kscratch(k, sizeof *m);
    if (!m)
        return sg_kfail(k, SG_ENOMEM, "out of memory");
    mt_seed(m, seed);
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < X->numel; i++) {
        bool keep = mt_double(m) >= ratio;
        if (X->dtype == SG_DTYPE_FLOAT)
            ((float *)Y->data)[i] = keep ? ((const float *)X->data)[i] * (float)scale : 0.0f;
        else
            sg_rt_set_f64(Y, i, keep ? sg_rt_get_f64(X, i) * scale : 0);
        if (M)
            sg_rt_set_f64(M, i, keep);
    }
    return SG_OK;
}

#define FL SG_KT_FLOATS
/* One entry per line, as in the other families. */
/* clang-format off */
static const struct sg_kernel kernels[] = {
    {"", "Dropout", 1, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 6, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 7, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 10, 0, FL, 0, run_dropout, "r"},
    {"", "Dropout", 12, 0, FL, 0, run_dropout, "roo"},
    {"", "Dropout", 13, 0, FL, 0, run_dropout, "roo"},
};
/* clang-format on */
SG_KERNEL_FAMILY(space, kernels);
