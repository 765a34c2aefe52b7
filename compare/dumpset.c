/*
 * dumpset.c - a folder of tensor dumps: which file holds which output.
 *
 * msit nests dumps (<out>/<timestamp>/onnx/..., <out>/<timestamp>/<model>/
 * <id>/<step>/...), so the folder is searched recursively; directory
 * symlinks are not followed. File names are parsed with sg_dumpname.h; a
 * mapping.csv beside shortened names gives the full node names back. The
 * match key of a file is the node name as msit writes it into file names
 * ('.' and '/' as '_'), whichever form the file has, so that a golden ONNX
 * dump and a device dump of the same node meet.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_dumpname.h"
#include "sg_file.h"
#include "sg_npz.h"
#include "strmap.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 8

/* The loose-map value of a spelling several files share. */
static const struct sg_dump_file ambiguous;

struct scan {
    sg_dumpset *ds;
    sg_arena *arena;
    size_t n, cap; /* files[] so far: outputs and ONNX-form input dumps */
    struct sg_diag *diag;
};

/* "<index>:<key>" into the arena: the map key of an output. */
static char *slot_key(sg_arena *a, const char *key, uint32_t index)
{
    size_t kl = strlen(key);
    char *s = sg_arena_alloc(a, kl + 16);
    if (s)
        snprintf(s, kl + 16, "%" PRIu32 ":%s", index, key);
    return s;
}

/* Parse one CSV record of two fields (RFC 4180 quoting). */
static bool csv_two_fields(const char *line, char *f1, size_t s1, char *f2, size_t s2)
{
    char *out[2] = {f1, f2};
    size_t size[2] = {s1, s2};
    const char *p = line;
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p)
                    return false;
                if (*p == '"') {
                    if (p[1] != '"') {
                        p++;
                        break;
                    }
                    p++;
                }
                if (n + 1 >= size[k])
                    return false;
                out[k][n++] = *p++;
            }
        } else {
            while (*p && *p != ',' && *p != '\n' && *p != '\r') {
                if (n + 1 >= size[k])
                    return false;
                out[k][n++] = *p++;
            }
        }
        out[k][n] = '\0';
        if (k == 0) {
            if (*p != ',')
                return false;
            p++;
        }
    }
    return *p == '\0' || *p == '\n' || *p == '\r';
}

/* mapping.csv of one folder: file name -> node name, in the arena map. */
static sg_status read_mapping(struct scan *s, const char *dir, struct sg__strmap *names)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mapping.csv", dir);
    if (access(path, F_OK) != 0)
        return SG_OK;
    int fd = sg_file_open_read(path, NULL, s->diag); /* a FIFO must not hang compare */
    if (fd < 0)
        return (sg_status)fd;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", path);
    }
    enum { LINE = 16384, FILE_NAME = 4096, NODE = 8192 };
    char *line = sg_malloc(LINE + FILE_NAME + NODE);
    if (!line) {
        fclose(f);
        return sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", path);
    }
    char *file = line + LINE, *node = file + FILE_NAME;
    sg_status st = SG_OK;
    while (fgets(line, LINE, f)) {
        if (!csv_two_fields(line, file, FILE_NAME, node, NODE))
            continue; /* a header or a malformed line: nothing to map */
        char *k = sg_arena_strdup(s->arena, file), *v = sg_arena_strdup(s->arena, node);
        if (!k || !v || sg__strmap_put(names, k, v)) {
            st = sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", path);
            break;
        }
    }
    sg_free(line);
    fclose(f);
    return st;
}

static sg_status add_file(struct scan *s, const char *dir, const char *fname,
                          const struct sg__strmap *names)
{
    struct sg_dump_file f = {.member = -1};
    struct sg_dump_onnx on;
    struct sg_dump_device dv;
    const char *name;
    bool input;
    if (sg_dump_parse_onnx(fname, &on)) {
        const char *full = sg__strmap_get(names, fname);
        input = on.input;
        name = full ? full : on.node;
        f.index = on.index;
        f.timestamp = on.timestamp;
        if (input) {
            /* Keep the whole head (input_<node>) as key: see struct scan. */
            char head[SG_DUMP_NAME_MAX + 8];
            snprintf(head, sizeof head, "input_%s", on.node);
            f.key = sg_arena_strdup(s->arena, head);
        } else {
            f.key = sg_arena_strdup(s->arena, name);
        }
    } else if (sg_dump_parse_device(fname, &dv)) {
        const char *full = sg__strmap_get(names, fname);
        input = dv.input;
        name = full ? full : dv.op_name;
        f.device = true;
        f.index = dv.index;
        f.timestamp = dv.timestamp;
        f.key = sg_arena_strdup(s->arena, name);
        f.op_type = sg_arena_strdup(s->arena, dv.op_type);
    } else {
        s->ds->n_ignored++;
        return SG_OK;
    }
    size_t dl = strlen(dir), fl = strlen(fname);
    f.path = sg_arena_alloc(s->arena, dl + fl + 2);
    f.name = sg_arena_strdup(s->arena, name);
    if (!f.key || !f.path || !f.name || (f.device && !f.op_type))
        return sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", dir);
    memcpy(f.path, dir, dl);
    f.path[dl] = '/';
    memcpy(f.path + dl + 1, fname, fl + 1);
    f.input = input;
    if (input) {
        s->ds->n_inputs++;
        if (f.device)
            return SG_OK; /* device input dumps are never operator outputs */
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        void *grown = sg_realloc(s->ds->files, cap * sizeof *s->ds->files);
        if (!grown)
            return sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", dir);
        s->ds->files = grown;
        s->cap = cap;
    }
    s->ds->files[s->n++] = f;
    return SG_OK;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static sg_status walk(struct scan *s, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return sg_diag_set(s->diag, errno == ENOENT ? SG_ENOTFOUND : SG_EIO, "%s: %s", dir,
                           strerror(errno));
    struct sg__strmap names = {0};
    sg_status st = read_mapping(s, dir, &names);
    /* Sorted entries: the scan (and any error it reports) is reproducible. */
    char **entries = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = sg_realloc(entries, cap * sizeof *grown);
            if (!grown) {
                st = sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", dir);
                break;
            }
            entries = grown;
        }
        if (!(entries[n] = sg_strdup(e->d_name))) {
            st = sg_diag_set(s->diag, SG_ENOMEM, "%s: out of memory", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (!st && n)
        qsort(entries, n, sizeof *entries, cmp_names);
    for (size_t i = 0; !st && i < n; i++) {
        char path[4096];
        int pl = snprintf(path, sizeof path, "%s/%s", dir, entries[i]);
        if (pl < 0 || (size_t)pl >= sizeof path)
            continue;
        struct stat sb;
        if (lstat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (depth < MAX_DEPTH)
                st = walk(s, path, depth + 1);
            continue;
        }
        size_t len = strlen(entries[i]);
        if (len > 4 && strcmp(entries[i] + len - 4, ".npy") == 0)
            st = add_file(s, dir, entries[i], &names);
    }
    for (size_t i = 0; i < n; i++)
        sg_free(entries[i]);
    sg_free(entries);
    sg__strmap_free(&names);
    return st;
}

/* Outputs first, then input dumps; each in dump order. */
static int cmp_files(const void *a, const void *b)
{
    const struct sg_dump_file *x = a, *y = b;
    if (x->input != y->input)
        return x->input ? 1 : -1;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

sg_dumpset *sg__dumpset_new(const char *dir)
{
    sg_dumpset *ds = sg_calloc(1, sizeof *ds);
    struct sg__strmap *map = sg_calloc(1, sizeof *map), *loose = sg_calloc(1, sizeof *loose);
    sg_arena *arena = sg_arena_create();
    if (!ds || !map || !loose || !arena) {
        sg_free(ds);
        sg_free(map);
        sg_free(loose);
        sg_arena_free(arena);
        return NULL;
    }
    ds->arena = arena;
    ds->by_key = map;
    ds->by_loose = loose;
    if (!(ds->dir = sg_arena_strdup(arena, dir))) {
        sg_dumpset_free(ds);
        return NULL;
    }
    return ds;
}

sg_status sg__dumpset_index(sg_dumpset *ds, size_t n, struct sg_diag *diag)
{
    const char *dir = ds->dir;
    sg_arena *arena = ds->arena;
    struct sg__strmap *map = ds->by_key, *loose = ds->by_loose;
    sg_status st;
    if (n)
        qsort(ds->files, n, sizeof *ds->files, cmp_files);
    ds->n_files = 0;
    while (ds->n_files < n && !ds->files[ds->n_files].input)
        ds->n_files++;
    ds->n_input_files = n - ds->n_files;
    if ((st = sg__strmap_reserve(map, n)) || (st = sg__strmap_reserve(loose, n)))
        return sg_diag_set(diag, st, "%s: out of memory", dir);
    for (size_t i = 0; i < n; i++) {
        struct sg_dump_file *f = &ds->files[i];
        char *k = slot_key(arena, f->key, f->index);
        if (!k)
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", dir);
        const struct sg_dump_file *old = sg__strmap_get(map, k);
        if (old && !f->input)
            return sg_diag_set(diag, SG_EDUP,
                               "%s: output %" PRIu32 " of '%s' is dumped twice (%s and %s): "
                               "point at the folder of one run",
                               dir, f->index, f->name, old->path, f->path);
        /* An input dump is found by its whole name (input_<node>) unless an
         * output has that name: then it is a node called input_<...>. */
        if (!old)
            sg__strmap_put(map, k, f);
        if (f->input)
            continue;
        /* The name as a file spells it, for readers that know it only so:
         * unique, or ambiguous (several names spell alike). */
        size_t kl = strlen(k) + 1;
        char *lk = sg_arena_alloc(arena, kl);
        if (!lk)
            return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", dir);
        sg_dump_sanitize(k, lk, kl);
        const struct sg_dump_file *prev = sg__strmap_get(loose, lk);
        sg__strmap_put(loose, lk, prev ? (void *)&ambiguous : (void *)f);
    }
    return SG_OK;
}

sg_status sg_dumpset_scan(const char *dir, sg_dumpset **out, struct sg_diag *diag)
{
    *out = NULL;
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return sg_diag_set(diag, errno == ENOENT ? SG_ENOTFOUND : SG_EIO, "%s: %s", dir,
                           strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sg_diag_set(diag, SG_EINVAL, "%s: not a folder of dumps", dir);
    sg_dumpset *ds = sg__dumpset_new(dir);
    if (!ds)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", dir);
    struct scan s = {.ds = ds, .arena = ds->arena, .diag = diag};
    sg_status st;
    if ((st = walk(&s, dir, 0)))
        goto out_free;
    if (s.n == 0) {
        st = ds->n_ignored
                 ? sg_diag_set(diag, SG_ENOTFOUND,
                               "%s: %zu .npy files, none named like a dump "
                               "(<node>.<output>.<timestamp>.npy or "
                               "<OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy; "
                               "files named after tensors, as ONNX Runtime dumps are, need "
                               "--model)",
                               dir, ds->n_ignored)
                 : sg_diag_set(diag, SG_ENOTFOUND, "%s: no .npy dump files", dir);
        goto out_free;
    }
    if ((st = sg__dumpset_index(ds, s.n, diag)))
        goto out_free;
    ds->layout = "msit";
    *out = ds;
    return SG_OK;
out_free:
    sg_dumpset_free(ds);
    return st;
}

sg_status sg_dump_file_read(const sg_dumpset *ds, const struct sg_dump_file *f,
                            struct sg_array *out, struct sg_diag *diag)
{
    if (f->member >= 0 && ds->npz)
        return sg_npz_read(ds->npz, (size_t)f->member, out, diag);
    return sg_npy_read(f->path, out, diag);
}

void sg_dumpset_free(sg_dumpset *ds)
{
    if (!ds)
        return;
    sg__strmap_free(ds->by_key);
    sg_free(ds->by_key);
    sg__strmap_free(ds->by_loose);
    sg_free(ds->by_loose);
    sg_free(ds->files);
    sg_npz_free(ds->npz);
    sg_arena_free(ds->arena);
    sg_free(ds);
}

/* The file under map key "<index>:<key>" of map m, or NULL. */
static const struct sg_dump_file *lookup(const struct sg__strmap *m, const char *key,
                                         uint32_t index)
{
    char buf[1024];
    size_t kl = strlen(key);
    char *k = kl + 16 <= sizeof buf ? buf : sg_malloc(kl + 16);
    if (!k)
        return NULL;
    snprintf(k, kl + 16, "%" PRIu32 ":%s", index, key);
    const struct sg_dump_file *f = sg__strmap_get(m, k);
    if (k != buf)
        sg_free(k);
    return f;
}

const struct sg_dump_file *sg_dumpset_find(const sg_dumpset *ds, const char *key, uint32_t index)
{
    const struct sg_dump_file *f = lookup(ds->by_key, key, index);
    if (f)
        return f;
    /* As a file spells the name: when exactly one file does. */
    char buf[1024];
    size_t kl = strlen(key) + 1;
    char *k = kl + 16 <= sizeof buf ? buf : sg_malloc(kl + 16);
    if (!k)
        return NULL;
    memcpy(k, "", 1);
    int pl = snprintf(k, 16, "%" PRIu32 ":", index);
    sg_dump_sanitize(key, k + pl, kl);
    f = sg__strmap_get(ds->by_loose, k);
    if (k != buf)
        sg_free(k);
    return f == &ambiguous ? NULL : f;
}
