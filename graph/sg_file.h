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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Open `path` for reading without ever blocking: it is opened O_NONBLOCK (a
 * FIFO would otherwise wait for a writer forever), refused unless fstat
 * says it is a regular file ("<path>: not a regular file (a FIFO)"), then
 * made blocking again. Every reader of surgeon opens its files here, and
 * each file opened is noted as an input for the output guard below.
 * *sb (may be NULL) receives its stat. Returns the descriptor, or a
 * negative status (SG_EIO, "<path>: cannot open: <reason>") with diag set.
 */
int sg_file_open_read(const char *path, struct stat *sb, struct sg_diag *diag);

/* Read a whole regular file (through sg_file_open_read) into a new
 * sg_malloc'd buffer, NUL-terminated for convenience (*len excludes the
 * NUL). Refuses files over max_len (SG_ETOOBIG: "<path>: N bytes, more
 * than the M allowed"). Statuses: SG_EIO, SG_ETOOBIG, SG_ENOMEM. */
sg_status sg_file_read_all(const char *path, size_t max_len, uint8_t **data, size_t *len,
                           struct sg_diag *diag);

/* The largest side file read (a pipeline, a rename map, a fusion switch,
 * keep_dtype, customize_dtypes or op_precision_mode file): they are short
 * lists written by hand or by a script, so anything bigger is a mistake
 * (say, a model or /proc/kcore given for a list). */
#define SG_SIDE_FILE_MAX ((size_t)64 << 20)
/* The largest JSON map (atc --mode=1, or the mock's) read. */
#define SG_MAP_FILE_MAX ((size_t)1 << 30)

/*
 * The output guard: no output of a command may replace a file the command
 * reads (its model, external data, inputs, side files). Off until
 * sg_file_guard_enable (the CLI turns it on: there, one process is one
 * command; a program using the library decides for itself). When on, every
 * file opened by sg_file_open_read and every path given to
 * sg_file_guard_note is an input, and sg_file_guard_check (which every
 * writer of sg_file.h and the model saver call) refuses an output that is
 * the same file: same device and inode, symlinks followed, so another
 * spelling, a symlink or a hard link of an input is refused too.
 * Thread-safe.
 */
void sg_file_guard_enable(void);
bool sg_file_guard_enabled(void);

/* Note an input by path (a file read later, or by another program: the
 * model real ATC will read); a path that does not exist is ignored.
 * Note one already open by its stat. */
void sg_file_guard_note(const char *path);
void sg_file_guard_note_stat(const char *path, const struct stat *sb);

/* The path an input with this device and inode was noted under, or NULL
 * (also when the guard is off). The string lives as long as the process. */
const char *sg_file_guard_input(dev_t dev, ino_t ino);

/* SG_OK when writing `path` replaces no input (it does not exist, or is no
 * input, or the guard is off); else SG_EEXISTS, "refusing to write '<path>':
 * it is '<input>', which this command reads". */
sg_status sg_file_guard_check(const char *path, struct sg_diag *diag);

/*
 * A temporary file beside `path` (same folder, so rename(2) is atomic),
 * named "<path>.tmp.<pid>.XXXXXX" and entered in sg_cleanup.h's registry
 * while it exists: a signal removes it. sg_file_temp_open checks `path`
 * with the output guard first. Commit renames it over `path` (checked
 * again); discard removes it. Both release t; fd is the caller's to close
 * before either.
 */
struct sg_file_temp {
    int fd;
    char *path;
    int handle; /* sg_cleanup handle */
};
sg_status sg_file_temp_open(const char *path, struct sg_file_temp *t, struct sg_diag *diag);
sg_status sg_file_temp_commit(struct sg_file_temp *t, const char *path, struct sg_diag *diag);
void sg_file_temp_discard(struct sg_file_temp *t);

/* Write `len` bytes to path atomically. Errors name the file and errno's
 * text ("writing 'x.json': No space left on device"). */
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
