/*
 * sg_case.h - run an ONNX backend-test folder on the runtime and check its
 * outputs as any ONNX backend is checked.
 *
 * A case folder (../shared/FORMATS.md) holds model.onnx and
 * test_data_set_N/input_K.pb, output_K.pb. The backend rule: floating
 * outputs match when |got - want| <= atol + rtol * |want| (rtol 1e-3, atol
 * 1e-7, as onnx.backend.test), NaN matches NaN; integers, bools and
 * strings must be equal; shapes and dtypes must be equal.
 */
#ifndef SG_CASE_H
#define SG_CASE_H

#include "sg_runtime.h"

#include <stdbool.h>
#include <stddef.h>

#define SG_CASE_RTOL 1e-3
#define SG_CASE_ATOL 1e-7

/* Does got match want under the backend rule? On a mismatch, why says
 * where (element, both values, shapes). */
bool sg_rt_backend_match(const sg_rt_value *got, const sg_rt_value *want, char *why, size_t size);

/* Read a .pb test file holding a value of graph type t (tensor, sequence
 * or optional; ONNX 1.12's bfloat16-as-uint16 tensors are taken as
 * bfloat16 when t says so). */
sg_status sg_rt_value_read_pb(const char *path, const sg_type *t, sg_rt_value **out,
                              struct sg_diag *diag);

struct sg_case_result {
    size_t n_sets;    /* test_data_set_* folders run */
    size_t n_outputs; /* outputs compared, over all sets */
    bool pass;        /* every output of every set matched */
    char why[1024];   /* the first mismatch: set, output, element, values */
};

/*
 * Run every test_data_set_* of case folder `dir` on the runtime (opts may
 * be NULL: float32) and compare. A mismatch is not an error: SG_OK with
 * r->pass false and the reason in r->why. Errors (the folder, a file, the
 * model, the run) name the file or node: SG_EIO, SG_EPARSE, SG_EINVAL (no
 * data set, file counts that do not fit the model) and the runtime's.
 */
sg_status sg_rt_case_run(const char *dir, const struct sg_rt_opts *opts, struct sg_case_result *r,
                         struct sg_diag *diag);

#endif
