/*
 * fusion_impl.h - helpers shared by the files of fusion/ (not installed).
 */
#ifndef SG_FUSION_IMPL_H
#define SG_FUSION_IMPL_H

#include "sg_file.h"
#include "sg_status.h"

#include <stddef.h>
#include <stdio.h>

/* The largest text file (switch, keep_dtype, ...) we read: they are lists of
 * names, so anything bigger is not one. */
#define SG__TEXT_MAX_BYTES SG_SIDE_FILE_MAX

/* Read the file at `path` into a NUL-terminated sg_malloc'd buffer. Refuses
 * files over `max` bytes (SG_ETOOBIG) and files holding a NUL byte
 * (SG_EPARSE, naming the line). Statuses: SG_EIO, SG_ETOOBIG, SG_EPARSE, SG_ENOMEM. */
sg_status sg__read_text(const char *path, size_t max, char **buf, size_t *len,
                        struct sg_diag *diag);

/* Check a buffer for NUL bytes (label:line: error). */
sg_status sg__check_no_nul(const char *text, size_t len, const char *label, struct sg_diag *diag);

/* Write a file atomically (sg_file_write_atomic_with): fn writes the
 * content to a temporary file beside `path`, which is renamed over `path`
 * only when fn and every write succeeded. fn returns SG_OK or an error
 * status (then its diag message, if any, is kept). */
typedef sg_status (*sg__write_fn)(FILE *out, const void *ctx, struct sg_diag *diag);
sg_status sg__write_atomic(const char *path, sg__write_fn fn, const void *ctx,
                           struct sg_diag *diag);

/* One line of a text buffer: [start, end) without the newline and without a
 * trailing '\r'; advances *pos. Returns 0 at the end of the buffer. */
int sg__next_line(const char *text, size_t len, size_t *pos, const char **start, const char **end);

/* Trim spaces and tabs on both sides of [*s, *e). */
void sg__trim(const char **s, const char **e);

/* Column (1-based, in code points) of `pos` in the line starting at `line`. */
unsigned sg__column(const char *line, const char *pos);

#endif
