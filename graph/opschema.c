/* opschema.c - lookup in the generated operator arity table. */
#include "sg_opschema.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static const struct sg_op_schema schemas[] = {
#define SG_OP_DOMAIN(dom, newest)
#define SG_OP_SCHEMA(dom, op, since, min_in, max_in, min_out, max_out)                             \
    {dom, op, since, min_in, max_in, min_out, max_out},
#include "op_schemas.inc"
#undef SG_OP_SCHEMA
#undef SG_OP_DOMAIN
};

static const struct domain_newest {
    const char *domain;
    int newest;
} domains[] = {
#define SG_OP_DOMAIN(dom, newest) {dom, newest},
#define SG_OP_SCHEMA(dom, op, since, min_in, max_in, min_out, max_out)
#include "op_schemas.inc"
#undef SG_OP_SCHEMA
#undef SG_OP_DOMAIN
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

int sg_op_schema_newest_opset(const char *domain)
{
    const char *dom = canon(domain);
    for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++)
        if (strcmp(domains[i].domain, dom) == 0)
            return domains[i].newest;
    return 0;
}

static const struct sg_op_schema *find_uncached(const char *dom, const char *op_type, int64_t opset)
{
    /* Past the release the table was made from, an op may have gained a
     * version with other counts: an older version's arity proves nothing. */
    if (opset > sg_op_schema_newest_opset(dom))
        return NULL;
    const struct sg_op_schema *best = NULL;
    for (size_t i = lower_bound(dom, op_type); i < n_schemas; i++) {
        if (cmp_key(dom, op_type, &schemas[i]) != 0)
            break;
        if (schemas[i].since_version <= opset)
            best = &schemas[i];
    }
    return best;
}

/* Lookups repeat the same few (op, opset) pairs for every node, so a small
 * per-thread cache in front of the binary search pays: a hit costs a hash
 * and two short compares. Misses (unknown ops) are remembered by their full
 * 64-bit key hash. */
#define CACHE_SLOTS 256

struct cache_slot {
    uint64_t key;
    int64_t opset;
    const struct sg_op_schema *schema; /* NULL: known to be absent */
    bool used;
};

static _Thread_local struct cache_slot cache[CACHE_SLOTS];

static uint64_t key_hash(const char *dom, const char *op)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)dom; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const unsigned char *p = (const unsigned char *)op; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ^ (h >> 31);
}

const struct sg_op_schema *sg_op_schema_find(const char *domain, const char *op_type, int64_t opset)
{
    const char *dom = canon(domain);
    uint64_t key = key_hash(dom, op_type) ^ ((uint64_t)opset * 0x9e3779b97f4a7c15ull);
    struct cache_slot *slot = &cache[key % CACHE_SLOTS];
    if (slot->used && slot->key == key && slot->opset == opset &&
        (!slot->schema ||
         (strcmp(slot->schema->op_type, op_type) == 0 && strcmp(slot->schema->domain, dom) == 0)))
        return slot->schema;
    const struct sg_op_schema *s = find_uncached(dom, op_type, opset);
    *slot = (struct cache_slot){key, opset, s, true};
    return s;
}

int sg_op_schema_known(const char *domain, const char *op_type)
{
    size_t i = lower_bound(canon(domain), op_type);
    return i < n_schemas && cmp_key(canon(domain), op_type, &schemas[i]) == 0;
}
