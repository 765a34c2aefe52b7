/*
 * encode_impl.h - the ONNX wire encoder (encode.c) and the output sink,
 * internal to graph/.
 */
#ifndef SG_ENCODE_IMPL_H
#define SG_ENCODE_IMPL_H

#include "sg_ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a tensor's payload goes when saving (decided by save.c). */
enum sg__disposition {
    SG__KEEP_STORED,   /* no plan: as it is in the IR */
    SG__KEEP_INLINE,   /* inside the model (an external tensor is brought in) */
    SG__KEEP_EXTERNAL, /* keep its external_data entries (original file) */
    SG__NEW_EXTERNAL   /* into the new data file at `offset` */
};

struct sg__tensor_plan {
    sg_tensor *t;
    enum sg__disposition how;
    uint64_t offset;
    size_t len;
};

/*
 * Where bytes go: a growing memory buffer (grow) or a file written through
 * a buffer, big payloads passed straight to write(2).
 */
struct sg__sink {
    int fd;
    uint8_t *buf;
    size_t used, cap;
    bool grow;
    int err; /* errno of the first failed write, or ENOMEM */
};

void sg__sink_append(struct sg__sink *s, const void *data, size_t len);
void sg__sink_flush(struct sg__sink *s);

/* A measured model: its total size, and the sizes of all its messages. */
struct sg__encoding {
    size_t total;
    void *priv;
};

/*
 * Placement of tensors: the encoder asks `place` for a tensor with no plan
 * yet (save_plan 0) the first time it meets it; place gives the tensor a
 * plan (sets save_plan to its index + 1 in *plans) or leaves it stored as
 * is. `plans` may move as place grows it. A NULL place stores everything as
 * is.
 */
typedef sg_status (*sg__place_fn)(void *ctx, sg_tensor *t);

/*
 * Size m, with tensors placed as described above and new external tensors
 * pointing at `data_file`. SG_ENOMEM when a table cannot grow.
 */
sg_status sg__encode_measure(struct sg__encoding *enc, const sg_model *m,
                             struct sg__tensor_plan *const *plans, sg__place_fn place, void *ctx,
                             const char *data_file);

/* Write m exactly as measured (nothing may change in between). */
void sg__encode_write(struct sg__encoding *enc, const sg_model *m, struct sg__sink *sink);

void sg__encode_free(struct sg__encoding *enc);

#endif
