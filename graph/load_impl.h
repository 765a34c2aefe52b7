/*
 * load_impl.h - helpers of the loader and saver (internal to graph/).
 */
#ifndef SG_LOAD_IMPL_H
#define SG_LOAD_IMPL_H

#include "sg_file.h"
#include "sg_ir.h"

#include <stddef.h>

/* Map the external data of every tensor of m (model folder m->dir). */
sg_status sg__resolve_external(sg_model *m, struct sg_diag *diag);

/* Folder part of a path ("." when none), sg_malloc'd. */
char *sg__dirname(const char *path);

/* "[2,3,4]" in a static per-thread buffer, for messages. */
const char *sg__dims_str(const int64_t *dims, uint32_t rank);

/* A temporary file beside `path` (same folder, so rename is atomic);
 * *tmp receives its name (sg_malloc'd), *handle its sg_cleanup handle.
 * Returns the fd, or on failure the negative status (SG_ENOMEM, SG_EIO;
 * diag set, which may be NULL). sg_file_temp_open is the checked form. */
int sg__open_temp(const char *path, char **tmp, int *handle, struct sg_diag *diag);

/* sg_file_temp_open / _commit, with the output guard only when `guard`:
 * the model saver checks itself what --in-place allows it to replace. */
sg_status sg__file_temp_open(const char *path, struct sg_file_temp *t, bool guard,
                             struct sg_diag *diag);
sg_status sg__file_temp_commit(struct sg_file_temp *t, const char *path, bool guard,
                               struct sg_diag *diag);

/* write(2) all of data, retrying on EINTR; SG_EIO with errno set on failure. */
sg_status sg__write_fd(int fd, const void *data, size_t len);

/* Read exactly len bytes from fd's position: 0, or the errno (EIO when
 * the file ends first). */
int sg__read_fd(int fd, void *buf, size_t len);

#endif
