/*
 * sg_file.h - whole-file reads and atomic writes, for every module.
 *
 * Writers put the bytes in a temporary file beside the target (same folder,
 * so rename(2) is atomic) and rename it over the target only when all went
 * well: a failure never leaves a half-written file, and a reader never sees
 * one.
 */
#ifndef SG_FILE_H
#define SG_FILE_H

#include "sg_status.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Read a whole regular file into a new sg_malloc'd buffer, NUL-terminated for
 * convenience (*len excludes the NUL). Refuses files over max_len
 * (SG_ETOOBIG). Errors say "<path>: cannot open: ...", "<path>: not a
 * regular file", ... Statuses: SG_EIO, SG_ETOOBIG, SG_ENOMEM. */
sg_status sg_file_read_all(const char *path, size_t max_len, uint8_t **data, size_t *len,
                           struct sg_diag *diag);

/* Write `len` bytes to path atomically. */
sg_status sg_file_write_atomic(const char *path, const void *data, size_t len,
                               struct sg_diag *diag);

/* Write path atomically through `fn`, which writes to the FILE it is given
 * and returns its status (SG_ENOMEM is reported as out of memory, anything
 * else as a write error with errno's text). */
typedef sg_status (*sg_file_writer)(FILE *out, void *ctx);
sg_status sg_file_write_atomic_with(const char *path, sg_file_writer fn, void *ctx,
                                    struct sg_diag *diag);

/* The process umask, read once without changing it (setting it to read it
 * would, for a moment, give files other threads create the wrong mode). */
mode_t sg_file_umask(void);

#endif
