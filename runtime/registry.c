/*
 * registry.c - the kernel tables of every family and the lookup by
 * (domain, op_type, opset, dtype) that the executor and --check share.
 */
#include "rt_impl.h"

#include <stdio.h>
#include <string.h>

#define SG_FAMILY(fam) extern const struct sg_kernel_family sg_kernels_##fam;
#include "kernels/families.inc"
#undef SG_FAMILY

const struct sg_kernel_family *const sg_kernel_families[] = {
#define SG_FAMILY(fam) &sg_kernels_##fam,
#include "kernels/families.inc"
#undef SG_FAMILY
    NULL,
};

const size_t sg_kernel_n_families = sizeof sg_kernel_families / sizeof sg_kernel_families[0] - 1;

static bool same_domain(const char *a, const char *b)
{
    if (!a || strcmp(a, "ai.onnx") == 0)
        a = "";
    if (!b || strcmp(b, "ai.onnx") == 0)
        b = "";
    return strcmp(a, b) == 0;
}

int sg_kernel_newest_opset(const char *domain)
{
    int newest = 0;
    for (size_t f = 0; f < sg_kernel_n_families; f++) {
        const struct sg_kernel_family *fam = sg_kernel_families[f];
        for (size_t i = 0; i < fam->count; i++)
            if (fam->kernels[i].since_version > newest &&
                same_domain(fam->kernels[i].domain, domain))
                newest = fam->kernels[i].since_version;
    }
    return newest;
}

const struct sg_kernel *sg_kernel_find(const char *domain, const char *op_type, int64_t opset,
                                       int32_t dtype, const char **why)
{
    int best = -1;
    for (size_t f = 0; f < sg_kernel_n_families; f++) {
        const struct sg_kernel_family *fam = sg_kernel_families[f];
        for (size_t i = 0; i < fam->count; i++) {
            const struct sg_kernel *e = &fam->kernels[i];
            if (e->since_version <= opset && e->since_version > best &&
                strcmp(e->op_type, op_type) == 0 && same_domain(e->domain, domain))
                best = e->since_version;
        }
    }
    if (best < 0) {
        if (why)
            *why = "no kernel";
        return NULL;
    }
    for (size_t f = 0; f < sg_kernel_n_families; f++) {
        const struct sg_kernel_family *fam = sg_kernel_families[f];
        for (size_t i = 0; i < fam->count; i++) {
            const struct sg_kernel *e = &fam->kernels[i];
            if (e->since_version != best || strcmp(e->op_type, op_type) != 0 ||
                !same_domain(e->domain, domain))
                continue;
            if (dtype == SG_DTYPE_UNDEFINED || e->types == SG_KT_ANY || e->type_input < 0 ||
                (dtype > 0 && dtype < 32 && (e->types & SG_KT(dtype))))
                return e;
        }
    }
    if (why)
        *why = "no kernel for this input type";
    return NULL;
}

bool sg_kernel_inputs_valid(const char *inputs)
{
    if (!inputs)
        return false;
    size_t n = strspn(inputs, "ro");
    if (!inputs[n])
        return true;
    return n > 0 && (inputs[n] == '+' || inputs[n] == '*') && !inputs[n + 1];
}

bool sg_kernel_inputs_fit(const struct sg_kernel *e, uint32_t n_in,
                          bool (*present)(const void *ctx, uint32_t i), const void *ctx, char *msg,
                          size_t size)
{
    const char *p = e->inputs;
    if (!p)
        return true;
    size_t letters = strspn(p, "ro");
    char rep = p[letters]; /* '+', '*' or 0 */
    /* Positions the pattern names once; a '*' letter may occur zero times. */
    size_t fixed = rep == '*' ? letters - 1 : letters, least = fixed;
    while (least && p[least - 1] != 'r')
        least--;
    for (uint32_t i = 0; i < n_in || i < fixed; i++) {
        char want = i < letters ? p[i] : rep ? p[letters - 1] : 0;
        bool given = i < n_in && present(ctx, i);
        if (!want) {
            if (!given)
                continue; /* '' past the pattern: nothing given */
            snprintf(msg, size, "takes at most %zu input%s, got %u", letters,
                     letters == 1 ? "" : "s", n_in);
            return false;
        }
        if (want == 'r' && !given) {
            if (i >= n_in)
                snprintf(msg, size, "needs at least %zu input%s, got %u", least,
                         least == 1 ? "" : "s", n_in);
            else
                snprintf(msg, size, "input %u is required but omitted (empty name)", i);
            return false;
        }
    }
    return true;
}
