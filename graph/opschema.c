/* opschema.c - lookup in the generated operator arity table. */
#include "sg_opschema.h"

#include <stddef.h>
#include <string.h>

static const struct sg_op_schema schemas[] = {
#define SG_OP_SCHEMA(dom, op, since, min_in, max_in, min_out, max_out)                             \
    {dom, op, since, min_in, max_in, min_out, max_out},
#include "op_schemas.inc"
#undef SG_OP_SCHEMA
};

static const size_t n_schemas = sizeof schemas / sizeof schemas[0];

static int cmp_key(const char *dom, const char *op, const struct sg_op_schema *s)
{
    int c = strcmp(dom, s->domain);
    return c ? c : strcmp(op, s->op_type);
}

/* Index of the first entry of (dom, op), or n_schemas. */
static size_t lower_bound(const char *dom, const char *op)
{
    size_t lo = 0, hi = n_schemas;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(dom, op, &schemas[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const char *canon(const char *domain)
{
    return !domain || strcmp(domain, "ai.onnx") == 0 ? "" : domain;
}

const struct sg_op_schema *sg_op_schema_find(const char *domain, const char *op_type, int64_t opset)
{
    const char *dom = canon(domain);
    const struct sg_op_schema *best = NULL;
    for (size_t i = lower_bound(dom, op_type); i < n_schemas; i++) {
        if (cmp_key(dom, op_type, &schemas[i]) != 0)
            break;
        if (schemas[i].since_version <= opset)
            best = &schemas[i];
    }
    return best;
}

int sg_op_schema_known(const char *domain, const char *op_type)
{
    size_t i = lower_bound(canon(domain), op_type);
    return i < n_schemas && cmp_key(canon(domain), op_type, &schemas[i]) == 0;
}
