/*
 * save.c - IR -> ONNX file: where each tensor goes, and atomic files.
 *
 * Each tensor is written inline, as a reference to its original external
 * file, or into a new external data file, per struct sg_save_opts; the
 * bytes come from encode.c. Output
 * files are written under temporary names and renamed only when everything
 * succeeded, so a failure never leaves a half-written model.
 */
#include "ir_impl.h"
#include "load_impl.h"
#include "encode_impl.h"
#include "sg_alloc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
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

/* Does `dir_a` name the same folder as `dir_b`? (Same inode: two stats,
 * where realpath would read every component of both paths.) */
static bool same_dir(const char *dir_a, const char *dir_b)
{
    struct stat a, b;
    if (!dir_a || !dir_b || stat(dir_a, &a) != 0 || stat(dir_b, &b) != 0)
        return false;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
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
    /* Whether the output guard checks each file: not where --in-place
     * allows the model to replace its own files. */
    bool guard_model, guard_data;
};

static size_t tensor_bytes(const sg_tensor *t)
{
    if (sg_tensor_is_external(t))
        return t->extra->ext_len;
    if (t->dtype == SG_DTYPE_STRING)
        return 0;
    if (t->has_raw)
        return t->raw_len;
    return sg_tensor_nbytes(t);
}

struct saver {
    sg_model *m;
    struct sg_diag *diag;
    const struct sg_save_opts *o;
    const struct layout *L;
    bool spill;                    /* move big inline tensors out (2 GB limit) */
    bool data_name_is_kept;        /* an external tensor already lives in data_name */
    struct sg__tensor_plan *plans; /* every tensor of the model, in writing order */
    size_t n_plans, cap_plans;
    uint64_t data_end; /* next free offset in the new data file */
};

/* Is blob one of m's own data files? A tensor m shares with a model it
 * keeps (concat) lives in a file relative to that model's folder: its
 * bytes are copied, never referenced under m's folder. */
static bool own_mapping(const sg_model *m, const sg_blob *blob)
{
    for (size_t i = 0; i < m->n_mappings; i++)
        if (m->mappings[i] == blob)
            return true;
    return false;
}

/* Where tensor t goes; new external tensors get the next offset. */
static void decide(struct saver *S, struct sg__tensor_plan *pl)
{
    const struct sg_save_opts *o = S->o;
    size_t threshold = o->size_threshold ? o->size_threshold : DEFAULT_THRESHOLD;
    sg_tensor *t = pl->t;
    size_t bytes = tensor_bytes(t);
    bool can_move = t->dtype != SG_DTYPE_STRING && sg_dtype_bits(t->dtype) &&
                    !sg_tensor_get_extra(t)->has_segment;
    pl->len = bytes;
    if (sg_tensor_is_external(t)) {
        if (o->ext_mode == SG_EXT_INLINE)
            pl->how = SG__KEEP_INLINE;
        else if (o->ext_mode == SG_EXT_AUTO && S->L->same_folder && !S->data_name_is_kept &&
                 t->extra->ext_blob && own_mapping(S->m, t->extra->ext_blob))
            pl->how = SG__KEEP_EXTERNAL;
        else if (o->ext_mode == SG_EXT_FILE && bytes < threshold)
            pl->how = SG__KEEP_INLINE;
        else
            pl->how = SG__NEW_EXTERNAL;
    } else if (can_move && bytes >= threshold &&
               (o->ext_mode == SG_EXT_FILE || (o->ext_mode == SG_EXT_AUTO && S->spill))) {
        pl->how = SG__NEW_EXTERNAL;
    } else {
        pl->how = SG__KEEP_INLINE;
    }
    if (pl->how == SG__NEW_EXTERNAL) {
        S->data_end = (S->data_end + EXT_ALIGN - 1) & ~(uint64_t)(EXT_ALIGN - 1);
        pl->offset = S->data_end;
        S->data_end += pl->len;
    }
}

/* The encoder meets a tensor for the first time: give it a placement. */
static sg_status place(void *ctx, sg_tensor *t)
{
    struct saver *S = ctx;
    if (S->n_plans == S->cap_plans) {
        size_t cap = S->cap_plans ? S->cap_plans * 2 : 64;
        struct sg__tensor_plan *grown = sg_realloc(S->plans, cap * sizeof *grown);
        if (!grown)
            return SG_ENOMEM;
        S->plans = grown;
        S->cap_plans = cap;
    }
    struct sg__tensor_plan *pl = &S->plans[S->n_plans++];
    *pl = (struct sg__tensor_plan){t, SG__KEEP_INLINE, 0, 0};
    t->save_plan = (uint32_t)S->n_plans;
    decide(S, pl);
    return SG_OK;
}

/* Decide every placement again (after switching to spilling). */
static void replan(struct saver *S)
{
    S->data_end = 0;
    for (size_t i = 0; i < S->n_plans; i++)
        decide(S, &S->plans[i]);
}

/* Copy `len` bytes at `offset` of the file `src` to the end of fd, in the
 * kernel when it can (no page of the source is mapped into our memory). */
static int copy_range(const char *src, uint64_t offset, size_t len, int fd)
{
    int in = sg_file_open_read(src, NULL, NULL);
    if (in < 0)
        return EIO;
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

static sg_status write_data_file(struct saver *S, const struct layout *L, struct sg_file_temp *tmp)
{
    sg_status st = sg__file_temp_open(L->data_path, tmp, L->guard_data, S->diag);
    if (st)
        return st;
    int fd = tmp->fd;
    struct sg__sink sink = {.fd = fd, .cap = WRITE_BUFFER};
    sink.buf = sg_malloc(sink.cap);
    static const uint8_t zeros[EXT_ALIGN];
    uint64_t written = 0;
    st = sink.buf ? SG_OK : SG_ENOMEM;
    for (size_t i = 0; i < S->n_plans && !st && !sink.err; i++) {
        struct sg__tensor_plan *pl = &S->plans[i];
        if (pl->how != SG__NEW_EXTERNAL)
            continue;
        if (pl->offset > written)
            sg__sink_append(&sink, zeros, (size_t)(pl->offset - written));
        sg_tensor *t = pl->t;
        const sg_tensor_extra *x = sg_tensor_get_extra(t);
        if (sg_tensor_is_external(t) && x->ext_blob && x->ext_blob->real) {
            /* From another data file: let the kernel copy it. */
            sg__sink_flush(&sink);
            uint64_t at = (uint64_t)(x->ext_data - (const uint8_t *)x->ext_blob->data);
            int err = sink.err ? 0 : copy_range(x->ext_blob->real, at, x->ext_len, fd);
            if (err) {
                /* Filesystems without copy_file_range: write from the mapping. */
                if (err != EXDEV && err != ENOSYS && err != EOPNOTSUPP && err != EINVAL)
                    sink.err = err;
                else if (lseek(fd, (off_t)pl->offset, SEEK_SET) >= 0)
                    sg__sink_append(&sink, x->ext_data, x->ext_len);
                else
                    sink.err = errno;
            }
        } else {
            size_t n;
            const void *data = sg__tensor_stored(S->m, t, &n, S->diag);
            if (!data)
                st = S->diag && S->diag->status ? S->diag->status : SG_EINVAL;
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
    if (st)
        sg_file_temp_discard(tmp);
    return st;
}

static sg_status write_model_file(sg_model *m, struct sg__encoding *enc, const char *path,
                                  bool guard, struct sg_file_temp *tmp, struct sg_diag *diag)
{
    sg_status st = sg__file_temp_open(path, tmp, guard, diag);
    if (st)
        return st;
    int fd = tmp->fd;
    struct sg__sink sink = {.fd = fd, .cap = WRITE_BUFFER};
    sink.buf = sg_malloc(sink.cap);
    if (!sink.buf) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    } else {
        sg__encode_write(enc, m, &sink);
        sg__sink_flush(&sink);
        if (sink.err)
            st = sg_diag_set(diag, SG_EIO, "writing '%s': %s", path, strerror(sink.err));
    }
    sg_free(sink.buf);
    if (close(fd) != 0 && !st)
        st = sg_diag_set(diag, SG_EIO, "writing '%s': %s", path, strerror(errno));
    if (st)
        sg_file_temp_discard(tmp);
    return st;
}

/* Whether two paths name the same existing file (device and inode,
 * symlinks followed). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The external data file of m that `path` is, or NULL. */
static const char *mapped_file(const sg_model *m, const char *path)
{
    for (size_t i = 0; i < m->n_mappings; i++)
        if (m->mappings[i]->real && same_file(m->mappings[i]->real, path))
            return m->mappings[i]->path;
    return NULL;
}

/*
 * The rule on outputs, for what the model itself knows of its files
 * (sg_file_guard_check adds everything else the process read): the model
 * may not be written over the model's file, unless overwrite_input, nor
 * over one of its external data files, which the new model or the old one
 * still needs.
 */
static sg_status check_model_output(const sg_model *m, const char *path,
                                    const struct sg_save_opts *o, struct sg_diag *diag)
{
    if (!o->overwrite_input && same_file(m->path, path))
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: refusing to overwrite the input model (use --in-place)", path);
    const char *data = mapped_file(m, path);
    if (data)
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: refusing to write the model over its own external data file "
                           "'%s'; choose another output",
                           path, data);
    return SG_OK;
}

/* A new external data file is not the model being written, nor the input
 * model, nor (unless overwrite_input: then the old model goes with it) one
 * of the input model's data files. */
static sg_status check_data_output(const sg_model *m, const char *path, const char *data_path,
                                   const struct sg_save_opts *o, struct sg_diag *diag)
{
    /* data_path is in path's folder: the same name is the same file. */
    if (strcmp(base_name(path), base_name(data_path)) == 0 || same_file(path, data_path))
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: the external data file would be the model file itself; name "
                           "another --external-data file",
                           path);
    if (same_file(m->path, data_path))
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: refusing to write external data over the input model; name "
                           "another --external-data file",
                           data_path);
    const char *data;
    if (!o->overwrite_input && (data = mapped_file(m, data_path)))
        return sg_diag_set(diag, SG_EEXISTS,
                           "%s: refusing to overwrite '%s', the input model's external data "
                           "(use --in-place, or name another --external-data file)",
                           data_path, data);
    return SG_OK;
}

sg_status sg_model_save(sg_model *m, const char *path, const struct sg_save_opts *opts,
                        struct sg_diag *diag)
{
    static const struct sg_save_opts defaults = {0};
    const struct sg_save_opts *o = opts ? opts : &defaults;
    if (o->external_file && strchr(o->external_file, '/'))
        return sg_diag_set(diag, SG_EINVAL,
                           "external data file '%s' must be a file name beside the model",
                           o->external_file);

    struct saver S = {.m = m, .diag = diag, .o = o};
    struct sg__encoding enc = {0};
    struct layout L = {0};
    char *out_dir = sg__dirname(path);
    char *data_name = NULL;
    struct sg_file_temp tmp_data = {.handle = -1}, tmp_model = {.handle = -1};
    sg_status st = SG_OK;
    if (!out_dir) {
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
    if ((st = check_model_output(m, path, o, diag)))
        goto out;
    L.guard_model = !(o->overwrite_input && same_file(m->path, path));
    L.guard_data = !(o->overwrite_input && mapped_file(m, L.data_path));
    /* A data file named like the model (--external-data e.onnx -o e.onnx)
     * is refused even when nothing goes into it: it says the user meant
     * something else. */
    if (o->external_file && strcmp(o->external_file, base_name(path)) == 0) {
        st = check_data_output(m, path, L.data_path, o, diag);
        goto out;
    }
    S.L = &L;
    /* Keeping external tensors in a file we are about to replace is not
     * possible: then every external tensor moves into the new file. */
    S.data_name_is_kept = mapped_file(m, L.data_path) != NULL;
    if ((st = sg__encode_measure(&enc, m, &S.plans, place, &S, L.data_name)))
        goto nomem;
    if (enc.total > SG_PROTO_LIMIT && o->ext_mode == SG_EXT_AUTO) {
        S.spill = true; /* move big tensors out to stay under protobuf's limit */
        replan(&S);
        if ((st = sg__encode_measure(&enc, m, &S.plans, place, &S, L.data_name)))
            goto nomem;
    }
    if (enc.total > SG_PROTO_LIMIT) {
        st = sg_diag_set(diag, SG_ETOOBIG,
                         "%s: the model would be %zu bytes, over protobuf's 2 GB limit; "
                         "save with external data",
                         path, enc.total);
        goto out;
    }
    bool any_new = false;
    for (size_t i = 0; i < S.n_plans; i++)
        any_new |= S.plans[i].how == SG__NEW_EXTERNAL;
    if (any_new && ((st = check_data_output(m, path, L.data_path, o, diag)) ||
                    (st = write_data_file(&S, &L, &tmp_data))))
        goto out;
    if ((st = write_model_file(m, &enc, path, L.guard_model, &tmp_model, diag)))
        goto out;
    if (o->before_commit && (st = o->before_commit(o->before_commit_ctx, diag)))
        goto out;
    if (tmp_data.path && (st = sg__file_temp_commit(&tmp_data, L.data_path, L.guard_data, diag)))
        goto out;
    st = sg__file_temp_commit(&tmp_model, path, L.guard_model, diag);
    goto out;
nomem:
    st = sg_diag_set(diag, st, "%s: out of memory", path);
out:
    sg_file_temp_discard(&tmp_data);
    sg_file_temp_discard(&tmp_model);
    for (size_t i = 0; i < S.n_plans; i++)
        S.plans[i].t->save_plan = 0;
    sg__encode_free(&enc);
    sg_free(S.plans);
    sg_free(L.data_path);
    sg_free(data_name);
    sg_free(out_dir);
    return st;
}

sg_status sg_model_save_buffer(sg_model *m, uint8_t **data, size_t *len, struct sg_diag *diag)
{
    *data = NULL;
    *len = 0;
    struct sg__encoding enc = {0};
    struct sg__sink sink = {.fd = -1, .grow = true};
    sg_status st = SG_OK;
    if (sg__encode_measure(&enc, m, NULL, NULL, NULL, NULL)) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory measuring the model");
        goto out;
    }
    if (enc.total > SG_PROTO_LIMIT) {
        st = sg_diag_set(diag, SG_ETOOBIG, "the model is %zu bytes, over protobuf's 2 GB limit",
                         enc.total);
        goto out;
    }
    sink.cap = enc.total ? enc.total : 1;
    if (!(sink.buf = sg_malloc(sink.cap))) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    sg__encode_write(&enc, m, &sink);
    if (sink.err) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        sg_free(sink.buf);
        goto out;
    }
    *data = sink.buf;
    *len = sink.used;
out:
    sg__encode_free(&enc);
    return st;
}
