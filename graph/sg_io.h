/*
 * sg_io.h - loading and saving ONNX models (the only protobuf-aware code).
 *
 * Loading maps the file, unpacks it into the model arena and converts it to
 * the IR; protobuf messages never escape. External data files are mapped
 * read-only and stay mapped: tensors point into them. Everything in the
 * ModelProto round-trips, including fields of newer ONNX versions.
 *
 * Saving writes to a temporary file in the destination folder and renames
 * it when complete, so a failure never leaves a half-written model.
 */
#ifndef SG_IO_H
#define SG_IO_H

#include "sg_ir.h"

#include <stddef.h>
#include <stdint.h>

struct sg_load_opts {
    bool skip_verify;   /* do not check the loaded graph for cycles and operator arity */
    bool skip_external; /* do not map external data (tensors stay unresolved) */
};

/*
 * Load the model at `path`. opts may be NULL (defaults). On success *out
 * owns the model (free with sg_model_free). On failure *out is NULL and
 * `diag` names the file and the offending node/tensor. Statuses: SG_EIO,
 * SG_EPARSE, SG_EUNDEF, SG_EDUP, SG_ECYCLE, SG_EARITY, SG_ESHAPE, SG_ERANGE,
 * SG_EESCAPE, SG_ENOTFOUND, SG_ENOMEM.
 */
sg_status sg_model_load(const char *path, const struct sg_load_opts *opts, sg_model **out,
                        struct sg_diag *diag);

/*
 * Load from memory. `dir` is the folder external data locations are relative
 * to, or NULL to refuse external data. `label` names the source in errors.
 * The buffer is not referenced after return.
 */
sg_status sg_model_load_buffer(const void *data, size_t len, const char *dir, const char *label,
                               const struct sg_load_opts *opts, sg_model **out,
                               struct sg_diag *diag);

enum sg_ext_mode {
    SG_EXT_AUTO,   /* keep external tensors external (in place when possible), inline the rest;
                      move tensors out when the file would pass 2 GB */
    SG_EXT_INLINE, /* everything inside the .onnx file (fails past 2 GB) */
    SG_EXT_FILE    /* tensors of at least size_threshold bytes go to `external_file` */
};

struct sg_save_opts {
    enum sg_ext_mode ext_mode;
    const char *external_file; /* file name (no folders) beside the output; NULL: "<out>.data" */
    size_t size_threshold;     /* SG_EXT_FILE and 2 GB spill: smaller tensors stay inline;
                                  0 means the default, 1024 bytes */
    bool overwrite_input;      /* allow writing over the file the model was loaded from */
    /* Called once every byte is in the temporary files, before they are
     * renamed into place: a status other than SG_OK abandons the save (the
     * temporary files are removed) and is returned. Lets a caller check the
     * model (sg_model_verify on another thread) while it is being written. */
    sg_status (*before_commit)(void *ctx, struct sg_diag *diag);
    void *before_commit_ctx;
};

/* The largest protobuf file we write: protobuf's own 2 GB limit. */
#define SG_PROTO_LIMIT ((uint64_t)2147483647)

/*
 * Save m to `path` per opts (NULL: SG_EXT_AUTO). Atomic: temp file + rename,
 * for the model and its data file. Refuses (SG_EEXISTS) to overwrite the
 * file m was loaded from unless opts->overwrite_input. External tensors
 * whose data is unchanged keep their original file when the output is in
 * the same folder; otherwise their bytes are copied to the new data file.
 */
sg_status sg_model_save(sg_model *m, const char *path, const struct sg_save_opts *opts,
                        struct sg_diag *diag);

/*
 * Serialize m into a new buffer (sg_malloc'd, caller frees with sg_free),
 * all tensors inline as they are (external tensors keep their references).
 */
sg_status sg_model_save_buffer(sg_model *m, uint8_t **data, size_t *len, struct sg_diag *diag);

#endif
