/*
 * external.c - external tensor data: locating, confining and mapping files.
 *
 * A location is a path relative to the model's folder. It must not be
 * absolute, must not contain "..", and its resolved real path (symlinks
 * followed) must stay inside the folder. Each data file is mapped once,
 * read-only, and stays mapped until the model is freed, so that tensors
 * point into it and unchanged tensors can be saved without reading them.
 */
#include "ir_impl.h"
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *sg__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sg_strdup(".");
    if (slash == path)
        return sg_strdup("/");
    size_t len = (size_t)(slash - path);
    char *d = sg_malloc(len + 1);
    if (d) {
        memcpy(d, path, len);
        d[len] = '\0';
    }
    return d;
}

const char *sg__dims_str(const int64_t *dims, uint32_t rank)
{
    static _Thread_local char buf[256];
    size_t pos = 0;
    buf[pos++] = '[';
    for (uint32_t i = 0; i < rank && pos < sizeof buf - 24; i++)
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%" PRId64, i ? "," : "", dims[i]);
    if (pos < sizeof buf - 1)
        buf[pos++] = ']';
    buf[pos] = '\0';
    return buf;
}

/* The value of `key`; of a key given twice the last, as ONNX reads it
 * (onnx.external_data_helper sets the fields in order). */
static const char *kv_get(const sg_tensor *t, const char *key)
{
    const sg_tensor_extra *x = sg_tensor_get_extra(t);
    const char *value = NULL;
    for (size_t i = 0; i < x->n_external; i++)
        if (x->external[i].key && strcmp(x->external[i].key, key) == 0)
            value = x->external[i].value;
    return value;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Reject locations that are absolute or step out through "..". */
static bool location_is_confined(const char *loc)
{
    if (!*loc || loc[0] == '/')
        return false;
    const char *p = loc;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += len;
        while (*p == '/')
            p++;
    }
    return true;
}

static sg_blob *map_file(sg_model *m, const char *loc, struct sg_diag *diag, const char *tname)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", m->dir, loc) >= sizeof path) {
        sg_diag_set(diag, SG_ERANGE, "tensor '%s': external data path is too long", tname);
        return NULL;
    }
    char real[PATH_MAX], real_dir[PATH_MAX];
    if (!realpath(path, real)) {
        sg_diag_set(diag, SG_ENOTFOUND, "tensor '%s': external data file '%s': %s", tname, loc,
                    strerror(errno));
        return NULL;
    }
    if (!realpath(m->dir, real_dir)) {
        sg_diag_set(diag, SG_EIO, "model folder '%s': %s", m->dir, strerror(errno));
        return NULL;
    }
    size_t dl = strlen(real_dir);
    bool root = dl == 1; /* "/" */
    if (strncmp(real, real_dir, dl) != 0 || (!root && real[dl] != '/')) {
        sg_diag_set(diag, SG_EESCAPE,
                    "tensor '%s': external data location '%s' resolves outside the model folder",
                    tname, loc);
        return NULL;
    }
    for (size_t i = 0; i < m->n_mappings; i++)
        if (strcmp(m->mappings[i]->real, real) == 0)
            return m->mappings[i];

    struct stat sb;
    struct sg_diag od = {0};
    int fd = sg_file_open_read(real, &sb, &od);
    if (fd < 0) {
        /* od says "<real path>: why"; the message names the location. */
        const char *why = strstr(od.msg, ": ");
        sg_diag_set(diag, SG_EIO, "tensor '%s': external data file '%s'%s", tname, loc,
                    why ? why : "");
        return NULL;
    }
    sg_blob *b = sg_calloc(1, sizeof *b);
    sg_blob **grown = sg_realloc(m->mappings, (m->n_mappings + 1) * sizeof *grown);
    if (grown)
        m->mappings = grown;
    if (!b || !grown || !(b->path = sg_strdup(loc)) || !(b->real = sg_strdup(real))) {
        if (b) {
            sg_free(b->path);
            sg_free(b);
        }
        close(fd);
        sg_diag_set(diag, SG_ENOMEM, "out of memory");
        return NULL;
    }
    b->refs = 1;
    b->mapped = true;
    b->size = (size_t)sb.st_size;
    if (b->size) {
        b->data = mmap(NULL, b->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (b->data == MAP_FAILED) {
            sg_diag_set(diag, SG_EIO, "tensor '%s': cannot map '%s': %s", tname, loc,
                        strerror(errno));
            b->size = 0;
            b->data = NULL;
            sg_blob_unref(b);
            close(fd);
            return NULL;
        }
    }
    close(fd);
    m->mappings[m->n_mappings++] = b;
    return b;
}

static sg_status resolve_one(sg_tensor *t, void *ctx)
{
    struct {
        sg_model *m;
        struct sg_diag *diag;
    } *c = ctx;
    if (!sg_tensor_is_external(t))
        return SG_OK;
    const char *tname = t->name && *t->name ? t->name : "(unnamed)";
    const char *loc = kv_get(t, "location");
    if (!loc)
        return sg_diag_set(c->diag, SG_EPARSE, "tensor '%s' is external but has no location",
                           tname);
    if (!location_is_confined(loc))
        return sg_diag_set(c->diag, SG_EESCAPE,
                           "tensor '%s': external data location '%s' is outside the model folder",
                           tname, loc);
    if (!c->m->dir)
        return sg_diag_set(c->diag, SG_EINVAL,
                           "tensor '%s' has external data but the model has no folder", tname);
    uint64_t offset = 0, length = 0;
    const char *off_s = kv_get(t, "offset"), *len_s = kv_get(t, "length");
    if (off_s && !parse_u64(off_s, &offset))
        return sg_diag_set(c->diag, SG_EPARSE, "tensor '%s': bad external data offset '%s'", tname,
                           off_s);
    if (len_s && !parse_u64(len_s, &length))
        return sg_diag_set(c->diag, SG_EPARSE, "tensor '%s': bad external data length '%s'", tname,
                           len_s);
    sg_blob *b = map_file(c->m, loc, c->diag, tname);
    if (!b)
        return c->diag ? c->diag->status : SG_EIO;
    if (offset > b->size)
        return sg_diag_set(c->diag, SG_ERANGE,
                           "tensor '%s': external data offset %" PRIu64
                           " is past the end of '%s' (%zu bytes)",
                           tname, offset, loc, b->size);
    if (!len_s)
        length = b->size - offset;
    if (length > b->size - offset)
        return sg_diag_set(c->diag, SG_ERANGE,
                           "tensor '%s': external data [%" PRIu64 ", +%" PRIu64
                           ") runs past the end of '%s' (%zu bytes)",
                           tname, offset, length, loc, b->size);
    size_t want = sg_tensor_nbytes(t);
    int64_t numel = sg_tensor_numel(t);
    if (numel < 0)
        return sg_diag_set(c->diag, SG_ERANGE, "tensor '%s' has negative or overflowing dims",
                           tname);
    if (sg_dtype_bits(t->dtype) && want != length)
        return sg_diag_set(c->diag, SG_ESHAPE,
                           "tensor '%s' has %" PRIu64
                           " bytes of external data but dims %s need %zu",
                           tname, length, sg__dims_str(t->dims, t->rank), want);
    sg_tensor_extra *x = t->extra; /* set: t is external */
    x->ext_blob = b;
    x->ext_data = b->data ? (const uint8_t *)b->data + offset : (const uint8_t *)"";
    x->ext_len = (size_t)length;
    return SG_OK;
}

sg_status sg__resolve_external(sg_model *m, struct sg_diag *diag)
{
    struct {
        sg_model *m;
        struct sg_diag *diag;
    } c = {m, diag};
    return sg_model_for_each_tensor(m, resolve_one, &c);
}
