/*
 * shape_impl.h - what the shape inference files share (graph/shape*.c).
 *
 * Every value of the model being inferred has an `sh` record, reached by
 * value->mark (numbered by shape.c for the duration of one inference). A
 * dim is an int64: >= 0 a number, SH_UNK unknown, any other negative value
 * the symbol -(d + 1) of the context's symbol table.
 *
 * A rule (one per op type, table in shape_ops.c) reads its inputs' records
 * and sets its outputs' with sh_set_out; the element type is filled by the
 * driver from sg_node_output_dtype. A rule that finds bad input calls
 * sh_fail, which returns an error in strict mode and records a conflict
 * otherwise (the rule then returns and the outputs stay unknown).
 */
#ifndef SG_SHAPE_IMPL_H
#define SG_SHAPE_IMPL_H

#include "sg_arena.h"
#include "sg_dims.h"
#include "sg_shape.h"
#include "strmap.h"

#include <stdbool.h>
#include <stdint.h>

#define SH_UNK INT64_MIN
#define SH_MAX_VAL 1024 /* longest integer tensor followed by value */

static inline bool sh_num(int64_t d)
{
    return d >= 0;
}

static inline bool sh_sym(int64_t d)
{
    return d < 0 && d != SH_UNK;
}

/* dst[0..n) = src[0..n): src may be NULL when n is 0 (a scalar's dims). */
static inline void sh_dims_copy(int64_t *dst, const int64_t *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
}

enum sh_kind {
    SH_TENSOR = 0,
    SH_SEQ,   /* a sequence: rank and d are its elements' shape (join of them) */
    SH_OPAQUE /* an optional, a map, or a sequence of unknown elements: no shape */
};

struct sh {
    int8_t kind;
    int32_t dtype;
    int32_t rank; /* -1: unknown */
    int64_t *d;
    int32_t nval;  /* -1: value not known; else the element count of val */
    int64_t *val;  /* its elements as integers (vsym[k] == 0) */
    int64_t *vsym; /* NULL, or per element 0 (a number, in val) or a dim code
                    * (a symbol or SH_UNK: Shape of a symbolic dim) */
    bool done;     /* computed (or seeded) */
    bool shaped;   /* written back by the driver */
};

struct sh_ctx {
    sg_model *m;
    sg_arena *a; /* scratch for dims and values, freed after inference */
    struct sh *recs;
    size_t n_recs;
    int64_t opset;
    bool strict;
    struct sg_shape_result *res;
    struct sg_diag *diag;
    /* symbols */
    const char **syms;
    size_t n_syms, cap_syms;
    struct sg__strmap symmap; /* name -> index + 1 */
    uint64_t fresh;
    /* Node inferences so far, and the count past which loop bodies are
     * inferred once (nested loops would otherwise multiply the rounds). */
    uint64_t work, budget;
};

/* The record of v (a capture reads the value it stands for); NULL for an
 * omitted value. */
struct sh *sh_rec(struct sh_ctx *c, const sg_value *v);
/* Input i of n, NULL when absent. */
struct sh *sh_in(struct sh_ctx *c, const sg_node *n, uint32_t i);
/* Input i with a known rank, else NULL. */
struct sh *sh_in_ranked(struct sh_ctx *c, const sg_node *n, uint32_t i);

/* Set output i of n to `rank` dims (copied; rank < 0: unknown). */
sg_status sh_set_out(struct sh_ctx *c, const sg_node *n, uint32_t i, int rank, const int64_t *dims);
/* Set the value of output i (numel elements, copied; vsym may be NULL:
 * all numbers); its shape must be set. */
sg_status sh_set_val(struct sh_ctx *c, const sg_node *n, uint32_t i, int32_t numel,
                     const int64_t *val, const int64_t *vsym);
/* Output i is a sequence whose elements have `rank` dims (copied), or an
 * optional/opaque value (kind SH_OPAQUE). */
sg_status sh_set_kind(struct sh_ctx *c, const sg_node *n, uint32_t i, enum sh_kind kind, int rank,
                      const int64_t *dims);
/* The element type of output i where sg_node_output_dtype cannot tell. */
void sh_set_dtype(struct sh_ctx *c, const sg_node *n, uint32_t i, int32_t dtype);
/* Output i takes input j's shape. */
sg_status sh_copy_out(struct sh_ctx *c, const sg_node *n, uint32_t i, uint32_t j);

/* A fresh symbol (a data-dependent size). */
int64_t sh_fresh(struct sh_ctx *c);
/* The symbol named `name` (added when new); SH_UNK when out of memory. */
int64_t sh_symbol(struct sh_ctx *c, const char *name);
const char *sh_symname(const struct sh_ctx *c, int64_t d);

/* Bad input at n: SG_ESHAPE in strict mode (diag), else a conflict recorded
 * and SG_OK (SG_ENOMEM if it cannot be). The message is prefixed with the
 * node. */
sg_status sh_fail(struct sh_ctx *c, const sg_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "[2,'batch',?]" into buf. */
char *sh_fmt(const struct sh_ctx *c, const struct sh *s, char *buf, size_t size);
/* The same for raw dims. */
char *sh_fmt_dims(const struct sh_ctx *c, int rank, const int64_t *d, char *buf, size_t size);

/* Input i's value as integers when every element is a known number:
 * *vals points to the record's storage, *n its count. */
bool sh_in_ints(struct sh_ctx *c, const sg_node *n, uint32_t i, const int64_t **vals,
                int32_t *count);
/* Input i's value with numbers and dim codes: *vsym NULL or as in sh. */
bool sh_in_val(struct sh_ctx *c, const sg_node *n, uint32_t i, const int64_t **vals,
               const int64_t **vsym, int32_t *count);
/* Element k of a value as a dim (a number >= 0, a symbol, or SH_UNK for a
 * negative number). */
static inline int64_t sh_val_dim(const int64_t *val, const int64_t *vsym, int32_t k)
{
    return vsym && vsym[k] ? vsym[k] : val[k] >= 0 ? val[k] : SH_UNK;
}
/* Input i's constant values as doubles (Resize scales, Range bounds);
 * *vals is scratch memory of the context. */
bool sh_in_f64(struct sh_ctx *c, const sg_node *n, uint32_t i, const double **vals, size_t *count);
/* The ints attribute `name` (NULL and 0 when absent). */
const int64_t *sh_attr_ints(const sg_node *n, const char *name, size_t *count);
bool sh_has_attr(const sg_node *n, const char *name);
/* Normalise axis a of a rank-r tensor into [0, r) (r + 1 with `extra` for
 * Unsqueeze-like positions); false when out of range. */
bool sh_axis(int64_t a, int r, int64_t *out);

/* Two dims that must be equal (MatMul inner, Concat others, ...): the most
 * specific of the two, or false when both are different numbers. */
bool sh_unify(int64_t a, int64_t b, int64_t *out);
/* Multidirectional broadcast of a and b (numpy rule): false when two
 * numbers differ and neither is 1. */
bool sh_bcast_dim(int64_t a, int64_t b, int64_t *out);

/* s from a recorded type (tensor, sequence of tensors; others opaque). */
sg_status sh_seed_type(struct sh_ctx *c, struct sh *s, const sg_type *t);

/* The op rules. */
typedef sg_status (*sh_rule_fn)(struct sh_ctx *c, sg_node *n);
sh_rule_fn sh_rule_find(const char *op_type);

/* Infer the nodes of g (a subgraph whose inputs are seeded) in order. */
sg_status sh_infer_graph(struct sh_ctx *c, sg_graph *g);

/* Families (shape_elementwise.c, shape_conv.c, shape_tensor.c,
 * shape_reduce.c, shape_nn.c, shape_control.c, shape_seq.c, shape_misc.c). */
sg_status sh_same(struct sh_ctx *c, sg_node *n);
sg_status sh_bcast(struct sh_ctx *c, sg_node *n);
sg_status sh_where(struct sh_ctx *c, sg_node *n);
sg_status sh_expand(struct sh_ctx *c, sg_node *n);
sg_status sh_clip(struct sh_ctx *c, sg_node *n);
sg_status sh_cast(struct sh_ctx *c, sg_node *n);
sg_status sh_conv(struct sh_ctx *c, sg_node *n);
sg_status sh_conv_transpose(struct sh_ctx *c, sg_node *n);
sg_status sh_pool(struct sh_ctx *c, sg_node *n);
sg_status sh_global_pool(struct sh_ctx *c, sg_node *n);
sg_status sh_matmul(struct sh_ctx *c, sg_node *n);
sg_status sh_gemm(struct sh_ctx *c, sg_node *n);
sg_status sh_constant(struct sh_ctx *c, sg_node *n);
sg_status sh_shape(struct sh_ctx *c, sg_node *n);
sg_status sh_size(struct sh_ctx *c, sg_node *n);
sg_status sh_reshape(struct sh_ctx *c, sg_node *n);
sg_status sh_flatten(struct sh_ctx *c, sg_node *n);
sg_status sh_transpose(struct sh_ctx *c, sg_node *n);
sg_status sh_squeeze(struct sh_ctx *c, sg_node *n);
sg_status sh_unsqueeze(struct sh_ctx *c, sg_node *n);
sg_status sh_concat(struct sh_ctx *c, sg_node *n);
sg_status sh_split(struct sh_ctx *c, sg_node *n);
sg_status sh_slice(struct sh_ctx *c, sg_node *n);
sg_status sh_gather(struct sh_ctx *c, sg_node *n);
sg_status sh_gather_elements(struct sh_ctx *c, sg_node *n);
sg_status sh_gather_nd(struct sh_ctx *c, sg_node *n);
sg_status sh_tile(struct sh_ctx *c, sg_node *n);
sg_status sh_pad(struct sh_ctx *c, sg_node *n);
sg_status sh_constant_of_shape(struct sh_ctx *c, sg_node *n);
sg_status sh_range(struct sh_ctx *c, sg_node *n);
sg_status sh_nonzero(struct sh_ctx *c, sg_node *n);
sg_status sh_topk(struct sh_ctx *c, sg_node *n);
sg_status sh_depth_to_space(struct sh_ctx *c, sg_node *n);
sg_status sh_space_to_depth(struct sh_ctx *c, sg_node *n);
sg_status sh_resize(struct sh_ctx *c, sg_node *n);
sg_status sh_onehot(struct sh_ctx *c, sg_node *n);
sg_status sh_eyelike(struct sh_ctx *c, sg_node *n);
sg_status sh_fresh_1d(struct sh_ctx *c, sg_node *n);
sg_status sh_compress(struct sh_ctx *c, sg_node *n);
sg_status sh_unique(struct sh_ctx *c, sg_node *n);
sg_status sh_reduce(struct sh_ctx *c, sg_node *n);
sg_status sh_argminmax(struct sh_ctx *c, sg_node *n);
sg_status sh_batchnorm(struct sh_ctx *c, sg_node *n);
sg_status sh_layernorm(struct sh_ctx *c, sg_node *n);
sg_status sh_dropout(struct sh_ctx *c, sg_node *n);
sg_status sh_rnn(struct sh_ctx *c, sg_node *n);
sg_status sh_roialign(struct sh_ctx *c, sg_node *n);
sg_status sh_nms(struct sh_ctx *c, sg_node *n);
sg_status sh_dynquant(struct sh_ctx *c, sg_node *n);
sg_status sh_random(struct sh_ctx *c, sg_node *n);
sg_status sh_window(struct sh_ctx *c, sg_node *n);
sg_status sh_seq_construct(struct sh_ctx *c, sg_node *n);
sg_status sh_seq_empty(struct sh_ctx *c, sg_node *n);
sg_status sh_seq_insert(struct sh_ctx *c, sg_node *n);
sg_status sh_seq_keep(struct sh_ctx *c, sg_node *n);
sg_status sh_seq_at(struct sh_ctx *c, sg_node *n);
sg_status sh_scalar(struct sh_ctx *c, sg_node *n);
sg_status sh_split_to_seq(struct sh_ctx *c, sg_node *n);
sg_status sh_concat_from_seq(struct sh_ctx *c, sg_node *n);
sg_status sh_optional(struct sh_ctx *c, sg_node *n);
sg_status sh_optional_get(struct sh_ctx *c, sg_node *n);
sg_status sh_det(struct sh_ctx *c, sg_node *n);
sg_status sh_grid_sample(struct sh_ctx *c, sg_node *n);
sg_status sh_max_unpool(struct sh_ctx *c, sg_node *n);
sg_status sh_loss(struct sh_ctx *c, sg_node *n);
sg_status sh_dft(struct sh_ctx *c, sg_node *n);
sg_status sh_stft(struct sh_ctx *c, sg_node *n);
sg_status sh_mel(struct sh_ctx *c, sg_node *n);
sg_status sh_col2im(struct sh_ctx *c, sg_node *n);
sg_status sh_string_normalizer(struct sh_ctx *c, sg_node *n);
sg_status sh_tfidf(struct sh_ctx *c, sg_node *n);
sg_status sh_sequence_map(struct sh_ctx *c, sg_node *n);
sg_status sh_einsum(struct sh_ctx *c, sg_node *n);
sg_status sh_training(struct sh_ctx *c, sg_node *n);
sg_status sh_if(struct sh_ctx *c, sg_node *n);
sg_status sh_loop(struct sh_ctx *c, sg_node *n);
sg_status sh_scan(struct sh_ctx *c, sg_node *n);

#endif
