/*
 * save.c - IR -> ONNX file: where each tensor goes, and atomic files.
 *
 * Each tensor is written inline, as a reference to its original external
 * file, or into a new external data file, per struct sg_save_opts. The
 * messages come from save_build.c and the bytes from save_emit.c. Output
 * files are written under temporary names and renamed only when everything
 * succeeded, so a failure never leaves a half-written model.
 */
#include "ir_impl.h"
#include "load_impl.h"
#include "save_impl.h"
#include "sg_alloc.h"
#include "sg_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_THRESHOLD 1024
#define EXT_ALIGN 64
#define WRITE_BUFFER (512u << 10) /* reused: small enough to stay in cache */

/* Does `dir_a` name the same folder as `dir_b`? */
static bool same_dir(const char *dir_a, const char *dir_b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!dir_a || !dir_b || !realpath(dir_a, ra) || !realpath(dir_b, rb))
        return false;
    return strcmp(ra, rb) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

struct layout {
    const char *data_name; /* new external file name (relative to out dir) */
    char *data_path;       /* full path of the new external file */
    bool same_folder;
};

static size_t tensor_bytes(const sg_tensor *t)
{
    if (sg_tensor_is_external(t))
        return t->ext_len;
    if (t->dtype == SG_DTYPE_STRING)
        return 0;
    if (t->has_raw)
        return t->raw_len;
    return sg_tensor_nbytes(t);
}

/* Decide each tensor's disposition. */
static void plan(struct sg__saver *S, const struct sg_save_opts *o, const struct layout *L,
                 bool spill)
{
    size_t threshold = o->size_threshold ? o->size_threshold : DEFAULT_THRESHOLD;
    bool data_name_is_kept = false;
    for (size_t i = 0; i < S->n_tensors; i++) {
        sg_tensor *t = S->tensors[i].t;
        if (sg_tensor_is_external(t) && t->ext_blob && t->ext_blob->path &&
            strcmp(t->ext_blob->path, L->data_name) == 0)
            data_name_is_kept = true;
    }
    for (size_t i = 0; i < S->n_tensors; i++) {
        struct sg__planned *pl = &S->tensors[i];
        sg_tensor *t = pl->t;
        size_t bytes = tensor_bytes(t);
        bool can_move = t->dtype != SG_DTYPE_STRING && sg_dtype_size(t->dtype) && !t->has_segment;
        pl->len = bytes;
        if (sg_tensor_is_external(t)) {
            if (o->ext_mode == SG_EXT_INLINE)
                pl->how = SG__KEEP_INLINE;
            else if (o->ext_mode == SG_EXT_AUTO && L->same_folder && !data_name_is_kept &&
                     t->ext_blob)
                pl->how = SG__KEEP_EXTERNAL;
            else if (o->ext_mode == SG_EXT_FILE && bytes < threshold)
                pl->how = SG__KEEP_INLINE;
            else
                pl->how = SG__NEW_EXTERNAL;
        } else if (can_move && bytes >= threshold &&
                   (o->ext_mode == SG_EXT_FILE || (o->ext_mode == SG_EXT_AUTO && spill))) {
            pl->how = SG__NEW_EXTERNAL;
        } else {
            pl->how = SG__KEEP_INLINE;
        }
    }
}

/* Rewrite the messages per plan; assign offsets in the new data file. */
static sg_status apply_plan(struct sg__saver *S, const struct layout *L, uint64_t *data_size)
{
    uint64_t off = 0;
    for (size_t i = 0; i < S->n_tensors; i++) {
        struct sg__planned *pl = &S->tensors[i];
        sg_tensor *t = pl->t;
        Onnx__TensorProto *p = pl->msg;
        switch (pl->how) {
        case SG__KEEP_EXTERNAL:
            sg__payload_typed(p, t);
            p->has_data_location = t->has_data_location;
            p->data_location = (Onnx__TensorProto__DataLocation)t->data_location;
            p->n_external_data = t->n_external;
            if (t->n_external &&
                !(p->external_data = sg__save_build_kvs(S, t->external, t->n_external)))
                return S->st = SG_ENOMEM;
            break;
        case SG__KEEP_INLINE:
            if (sg_tensor_is_external(t)) {
                sg__payload_clear(p);
                p->has_raw_data = 1;
                p->raw_data.data = (uint8_t *)t->ext_data;
                p->raw_data.len = t->ext_len;
            } else {
                sg__payload_typed(p, t);
                p->has_data_location = t->has_data_location;
                p->data_location = (Onnx__TensorProto__DataLocation)t->data_location;
            }
            break;
        case SG__NEW_EXTERNAL: {
            off = (off + EXT_ALIGN - 1) & ~(uint64_t)(EXT_ALIGN - 1);
            pl->offset = off;
            off += pl->len;
            sg__payload_clear(p);
            p->has_data_location = 1;
            p->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
            sg_kv kv[3];
            char *num = sg_arena_alloc(S->a, 48);
            if (!num)
                return S->st = SG_ENOMEM;
            snprintf(num, 24, "%" PRIu64, pl->offset);
            snprintf(num + 24, 24, "%zu", pl->len);
            kv[0] = (sg_kv){"location", L->data_name};
            kv[1] = (sg_kv){"offset", num};
            kv[2] = (sg_kv){"length", num + 24};
            if (!(p->external_data = sg__save_build_kvs(S, kv, 3)))
                return S->st = SG_ENOMEM;
            p->n_external_data = 3;
            break;
        }
        }
    }
    *data_size = off;
    return SG_OK;
}

/* Copy `len` bytes at `offset` of the file `src` to the end of fd, in the
 * kernel when it can (no page of the source is mapped into our memory). */
static int copy_range(const char *src, uint64_t offset, size_t len, int fd)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    loff_t off = (loff_t)offset;
    int err = 0;
    while (len) {
        ssize_t n = copy_file_range(in, &off, fd, NULL, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        len -= (size_t)n;
    }
    close(in);
    return err;
}

static sg_status write_data_file(struct sg__saver *S, const struct layout *L, char **tmp_out)
{
    char *tmp = NULL;
    int fd = sg__open_temp(L->data_path, &tmp, S->diag);
    if (fd < 0)
        return (sg_status)fd;
    struct sg__sink sink = {.fd = fd, .cap = WRITE_BUFFER};
    sink.buf = sg_malloc(sink.cap);
    static const uint8_t zeros[EXT_ALIGN];
    uint64_t written = 0;
    sg_status st = sink.buf ? SG_OK : SG_ENOMEM;
    for (size_t i = 0; i < S->n_tensors && !st && !sink.err; i++) {
        struct sg__planned *pl = &S->tensors[i];
        if (pl->how != SG__NEW_EXTERNAL)
            continue;
        if (pl->offset > written)
            sg__sink_append(&sink, zeros, (size_t)(pl->offset - written));
        sg_tensor *t = pl->t;
        if (sg_tensor_is_external(t) && t->ext_blob && t->ext_blob->real) {
            /* From another data file: let the kernel copy it. */
            sg__sink_flush(&sink);
            uint64_t at = (uint64_t)(t->ext_data - (const uint8_t *)t->ext_blob->data);
            int err = sink.err ? 0 : copy_range(t->ext_blob->real, at, t->ext_len, fd);
            if (err) {
                /* Filesystems without copy_file_range: write from the mapping. */
                if (err != EXDEV && err != ENOSYS && err != EOPNOTSUPP && err != EINVAL)
                    sink.err = err;
                else if (lseek(fd, (off_t)pl->offset, SEEK_SET) >= 0)
                    sg__sink_append(&sink, t->ext_data, t->ext_len);
                else
                    sink.err = errno;
            }
        } else {
            size_t n;
            const void *data = sg_tensor_data(S->m, t, &n, S->diag);
            if (!data)
                st = S->diag ? S->diag->status : SG_EINVAL;
            else
                sg__sink_append(&sink, data, n);
        }
        written = pl->offset + pl->len;
    }
    sg__sink_flush(&sink);
    sg_free(sink.buf);
    if (st == SG_ENOMEM)
        sg_diag_set(S->diag, st, "out of memory writing '%s'", L->data_path);
    if (!st && sink.err)
        st = sg_diag_set(S->diag, SG_EIO, "writing '%s': %s", L->data_path, strerror(sink.err));
    if (close(fd) != 0 && !st)
        st = sg_diag_set(S->diag, SG_EIO, "writing '%s': %s", L->data_path, strerror(errno));
    if (st) {
        unlink(tmp);
        sg_free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return SG_OK;
}

static sg_status write_model_file(struct sg__saver *S, Onnx__ModelProto *p,
                                  const struct sg__emit_plan *plan, const char *path,
                                  char **tmp_out, struct sg_diag *diag)
{
    char *tmp = NULL;
    int fd = sg__open_temp(path, &tmp, diag);
    if (fd < 0)
        return (sg_status)fd;
    struct sg__sink sink = {.fd = fd, .cap = WRITE_BUFFER};
    sink.buf = sg_malloc(sink.cap);
    sg_status st = SG_OK;
    if (!sink.buf) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    } else {
        sg__emit(S, p, plan, &sink);
        sg__sink_flush(&sink);
        if (sink.err)
            st = sg_diag_set(diag, SG_EIO, "writing '%s': %s", path, strerror(sink.err));
    }
    sg_free(sink.buf);
    if (close(fd) != 0 && !st)
        st = sg_diag_set(diag, SG_EIO, "writing '%s': %s", path, strerror(errno));
    if (st) {
        unlink(tmp);
        sg_free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return SG_OK;
}

static bool is_input_file(const sg_model *m, const char *path)
{
    struct stat a, b;
    if (!m->path || stat(m->path, &a) != 0 || stat(path, &b) != 0)
        return false;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

sg_status sg_model_save(sg_model *m, const char *path, const struct sg_save_opts *opts,
                        struct sg_diag *diag)
{
    static const struct sg_save_opts defaults = {0};
    const struct sg_save_opts *o = opts ? opts : &defaults;
    if (!o->overwrite_input && is_input_file(m, path))
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: refusing to overwrite the input model (use --in-place)", path);
    if (o->external_file && strchr(o->external_file, '/'))
        return sg_diag_set(diag, SG_EINVAL,
                           "external data file '%s' must be a file name beside the model",
                           o->external_file);

    struct sg__saver S = {m, sg_arena_create(), diag, SG_OK, NULL, 0, 0, NULL, sg_arena_create()};
    struct sg__emit_plan sizes = {0};
    struct layout L = {0};
    char *out_dir = sg__dirname(path);
    char *data_name = NULL, *tmp_data = NULL, *tmp_model = NULL;
    sg_status st = SG_OK;
    if (!S.a || !S.scratch || !out_dir) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    if (o->external_file) {
        data_name = sg_strdup(o->external_file);
    } else {
        size_t len = strlen(base_name(path)) + 6;
        if ((data_name = sg_malloc(len)))
            snprintf(data_name, len, "%s.data", base_name(path));
    }
    L.data_name = data_name;
    L.same_folder = same_dir(m->dir, out_dir);
    if (data_name) {
        size_t len = strlen(out_dir) + strlen(data_name) + 2;
        if ((L.data_path = sg_malloc(len)))
            snprintf(L.data_path, len, "%s/%s", out_dir, data_name);
    }
    if (!data_name || !L.data_path) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }

    Onnx__ModelProto *p = sg__save_build_model(&S);
    if (!p) {
        st =
            sg_diag_set(diag, S.st ? S.st : SG_ENOMEM, "%s: out of memory building the file", path);
        goto out;
    }
    uint64_t data_size = 0;
    plan(&S, o, &L, false);
    if ((st = apply_plan(&S, &L, &data_size)) || (st = sg__emit_measure(&S, p, &sizes)))
        goto nomem;
    if (sizes.total > SG_PROTO_LIMIT && o->ext_mode == SG_EXT_AUTO) {
        plan(&S, o, &L, true); /* move big tensors out to stay under protobuf's limit */
        sg__emit_plan_free(&sizes);
        if ((st = apply_plan(&S, &L, &data_size)) || (st = sg__emit_measure(&S, p, &sizes)))
            goto nomem;
    }
    if (sizes.total > SG_PROTO_LIMIT) {
        st = sg_diag_set(diag, SG_ETOOBIG,
                         "%s: the model would be %zu bytes, over protobuf's 2 GB limit; "
                         "save with external data",
                         path, sizes.total);
        goto out;
    }
    bool any_new = false;
    for (size_t i = 0; i < S.n_tensors; i++)
        any_new |= S.tensors[i].how == SG__NEW_EXTERNAL;
    if (any_new && (st = write_data_file(&S, &L, &tmp_data)))
        goto out;
    if ((st = write_model_file(&S, p, &sizes, path, &tmp_model, diag)))
        goto out;
    if (tmp_data && rename(tmp_data, L.data_path) != 0) {
        st = sg_diag_set(diag, SG_EIO, "%s: %s", L.data_path, strerror(errno));
        goto out;
    }
    sg_free(tmp_data);
    tmp_data = NULL;
    if (rename(tmp_model, path) != 0) {
        st = sg_diag_set(diag, SG_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    sg_free(tmp_model);
    tmp_model = NULL;
    goto out;
nomem:
    st = sg_diag_set(diag, st, "%s: out of memory", path);
out:
    if (tmp_data) {
        unlink(tmp_data);
        sg_free(tmp_data);
    }
    if (tmp_model) {
        unlink(tmp_model);
        sg_free(tmp_model);
    }
    sg__emit_plan_free(&sizes);
    sg_free(S.tensors);
    sg_free(L.data_path);
    sg_free(data_name);
    sg_free(out_dir);
    sg_arena_free(S.a);
    sg_arena_free(S.scratch);
    return st;
}

sg_status sg_model_save_buffer(sg_model *m, uint8_t **data, size_t *len, struct sg_diag *diag)
{
    *data = NULL;
    *len = 0;
    struct sg__saver S = {m, sg_arena_create(), diag, SG_OK, NULL, 0, 0, NULL, sg_arena_create()};
    struct sg__emit_plan sizes = {0};
    struct sg__sink sink = {.fd = -1, .grow = true};
    sg_status st = SG_OK;
    Onnx__ModelProto *p = S.a && S.scratch ? sg__save_build_model(&S) : NULL;
    if (!p || sg__emit_measure(&S, p, &sizes)) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory building the model");
        goto out;
    }
    if (sizes.total > SG_PROTO_LIMIT) {
        st = sg_diag_set(diag, SG_ETOOBIG, "the model is %zu bytes, over protobuf's 2 GB limit",
                         sizes.total);
        goto out;
    }
    sink.cap = sizes.total ? sizes.total : 1;
    if (!(sink.buf = sg_malloc(sink.cap))) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    sg__emit(&S, p, &sizes, &sink);
    if (sink.err) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        sg_free(sink.buf);
        goto out;
    }
    *data = sink.buf;
    *len = sink.used;
out:
    sg__emit_plan_free(&sizes);
    sg_free(S.tensors);
    sg_arena_free(S.a);
    sg_arena_free(S.scratch);
    return st;
}
