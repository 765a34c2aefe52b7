/*
 * load.c - loading a model: map the file, decode it (decode.c) into the
 * IR, map its external data, and check what decoding alone cannot see
 * (cycles in graphs whose file order does not prove their absence).
 *
 * The file stays mapped for the model's lifetime: tensor payloads point
 * into it instead of being copied, so a model of weights costs its file
 * size once, and unchanged payloads are written back from the mapping.
 */
#include "decode_impl.h"
#include "ir_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"
#include "sg_io.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARENA_RESERVE_MAX ((size_t)1 << 30)
/* Model files up to this size are read into memory, bigger ones mapped. */
#define READ_MAX ((size_t)1 << 20)

/* Decode `source` (which m takes over) and finish the model. */
static sg_status load_source(sg_blob *source, const char *dir, const char *label,
                             const struct sg_load_opts *opts, sg_model **out, struct sg_diag *diag)
{
    static const struct sg_load_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    sg_model *m = sg_model_create();
    if (!m) {
        sg_blob_unref(source);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    }
    m->source = source;
    sg_status st = SG_OK;
    if (dir && !(m->dir = sg_strdup(dir))) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        goto fail;
    }
    /* The IR of a node-heavy file takes about ten times its size, one of
     * weights almost nothing (payloads stay in the file): one chunk of
     * that size, mostly left untouched, spares dozens of growing ones. */
    size_t len = source->size;
    sg_arena_reserve(m->arena,
                     len < ARENA_RESERVE_MAX / 12 ? 12 * len + (1u << 20) : ARENA_RESERVE_MAX);
    if ((st = sg__decode_model(m, source->data, len, diag)))
        goto fail_prefix;
    if (!opts->skip_external && m->has_external && (st = sg__resolve_external(m, diag)))
        goto fail_prefix;
    if (!opts->skip_verify && (st = sg__graph_check_loaded(m->graph, diag)))
        goto fail_prefix;
    *out = m;
    return SG_OK;
fail_prefix:
    sg_diag_prefix(diag, "%s", label);
fail:
    sg_model_free(m);
    return st;
}

sg_status sg_model_load_buffer(const void *data, size_t len, const char *dir, const char *label,
                               const struct sg_load_opts *opts, sg_model **out,
                               struct sg_diag *diag)
{
    if (!label)
        label = "(buffer)";
    *out = NULL;
    if (len == 0)
        return sg_diag_set(diag, SG_EPARSE, "%s: empty file, not an ONNX model", label);
    /* The caller's buffer is not ours to keep: the model gets a copy. */
    sg_blob *copy = sg_blob_create(len);
    if (!copy)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    memcpy(copy->data, data, len);
    return load_source(copy, dir, label, opts, out, diag);
}

sg_status sg_model_load(const char *path, const struct sg_load_opts *opts, sg_model **out,
                        struct sg_diag *diag)
{
    *out = NULL;
    struct stat sb;
    int fd = sg_file_open_read(path, &sb, diag);
    if (fd < 0)
        return (sg_status)fd;
    size_t len = (size_t)sb.st_size;
    if (len == 0) {
        close(fd);
        return sg_diag_set(diag, SG_EPARSE, "%s: empty file, not an ONNX model", path);
    }
    sg_blob *map;
    if (len <= READ_MAX) {
        /* Small files are read: a mapping would cost a munmap, which with
         * `optimize -j` threads running interrupts the other cores to
         * flush their TLBs, once per model of a batch. */
        map = sg_blob_create(len);
        if (!map) {
            close(fd);
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
        }
        int err = sg__read_fd(fd, map->data, len);
        if (err) {
            close(fd);
            sg_blob_unref(map);
            return sg_diag_set(diag, SG_EIO, "%s: cannot read: %s", path, strerror(err));
        }
        close(fd);
    } else {
        map = sg_calloc(1, sizeof *map);
        if (!map) {
            close(fd);
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
        }
        /* Populated: the decoder reads every byte once, front to back. */
        map->data = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        int err = errno;
        close(fd);
        if (map->data == MAP_FAILED) {
            sg_free(map);
            return sg_diag_set(diag, SG_EIO, "%s: cannot map: %s", path, strerror(err));
        }
        map->refs = 1;
        map->mapped = true;
        map->size = len;
    }
    char *dir = sg__dirname(path);
    if (!dir) {
        sg_blob_unref(map);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    sg_status st = load_source(map, dir, path, opts, out, diag);
    sg_free(dir);
    if (!st && !((*out)->path = sg_strdup(path))) {
        sg_model_free(*out);
        *out = NULL;
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    return st;
}
