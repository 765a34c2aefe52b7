/*
 * tensordump.c - golden dumps named by tensor (sg_dumpset_scan_tensors):
 * a folder of <tensor>.npy files or one .npz, as people dump ONNX Runtime
 * with every node output exposed as a graph output.
 *
 * Tensor names hold characters a file name cannot ('/') or that scripts
 * replace (':' of TensorFlow names, anything unusual); what users write is
 * the name with '/' as '_' (most), with ':' too, with every character but
 * A-Za-z0-9._- as '_', or msit's '.' and '/' as '_', sometimes with the
 * leading '_' of a torch name ("/conv1/Conv_output_0") dropped. Every
 * spelling of every node output of the model is indexed; a file stem is
 * looked up as it is. An .npz keeps names as given (np.savez keys), so its
 * members are looked up the same way and nearly always exactly.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_npz.h"
#include "strmap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A spelling two tensors share. */
static const int ambiguous;

struct out_ref {
    const sg_node *node;
    uint32_t index;
};

enum { SPELLINGS = 5 };

/* Spelling k of name into the arena (k = 0: as it is). */
static char *spell(sg_arena *a, const char *name, int k)
{
    char *s = sg_arena_strdup(a, name);
    for (char *p = s; s && k && *p; p++) {
        unsigned char c = (unsigned char)*p;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '-' || c == '.';
        if (c == '/' || (k == 2 && c == ':') || (k == 3 && !plain) || (k == 4 && c == '.'))
            *p = '_';
    }
    return s;
}

static sg_status index_name(sg_arena *a, struct sg__strmap *by, const char *spelled,
                            struct out_ref *ref)
{
    const void *old = sg__strmap_get(by, spelled);
    if (old == ref)
        return SG_OK;
    if (old) {
        const struct out_ref *o = old;
        bool same = o != (const void *)&ambiguous && o->node == ref->node && o->index == ref->index;
        return same ? SG_OK : sg__strmap_put(by, spelled, (void *)&ambiguous);
    }
    (void)a;
    return sg__strmap_put(by, spelled, ref);
}

/* Every spelling of every node output of g -> its node output. */
static sg_status index_outputs(sg_arena *a, const sg_graph *g, struct sg__strmap *by)
{
    for (const sg_node *n = g->first; n; n = n->next)
        for (uint32_t i = 0; i < n->n_outputs; i++) {
            const sg_value *v = n->outputs[i];
            if (!v || !v->name || !*v->name)
                continue;
            struct out_ref *ref = sg_arena_alloc(a, sizeof *ref);
            if (!ref)
                return SG_ENOMEM;
            ref->node = n;
            ref->index = i;
            for (int k = 0; k < SPELLINGS; k++) {
                char *s = spell(a, v->name, k);
                if (!s || index_name(a, by, s, ref))
                    return SG_ENOMEM;
                if (k && s[0] == '_' && s[1] && index_name(a, by, s + 1, ref))
                    return SG_ENOMEM;
            }
        }
    return SG_OK;
}

/* Add the file of tensor-name stem `stem` (path, or member of the npz). */
static sg_status add(sg_dumpset *ds, size_t *n, size_t *cap, const struct sg__strmap *by,
                     const sg_dump_names *names, const char *stem, const char *path, long member,
                     struct sg_diag *diag)
{
    const struct out_ref *ref = sg__strmap_get(by, stem);
    if (!ref || (const void *)ref == &ambiguous) {
        ds->n_unmatched++;
        return SG_OK;
    }
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        void *grown = sg_realloc(ds->files, c * sizeof *ds->files);
        if (!grown)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        ds->files = grown;
        *cap = c;
    }
    const char *name = sg_dump_names_of(names, ref->node);
    struct sg_dump_file *f = &ds->files[(*n)++];
    memset(f, 0, sizeof *f);
    f->member = member;
    f->index = ref->index;
    f->timestamp = ref->node->mark; /* no time in the name: the model's order */
    /* A member's path names it (rows list their files; each must be its own). */
    f->path = member < 0 ? sg_arena_strdup(ds->arena, path)
                         : sg__cmp_printf(ds->arena, "%s:%s.npy", path, stem);
    f->key = sg_arena_strdup(ds->arena, name ? name : "");
    f->name = f->key;
    if (!f->path || !f->key)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .npy files of folder dir (sorted names, for a reproducible set). */
static sg_status scan_folder(sg_dumpset *ds, const char *dir, size_t *n, size_t *cap,
                             const struct sg__strmap *by, const sg_dump_names *names,
                             struct sg_diag *diag)
{
    DIR *d = opendir(dir);
    if (!d)
        return sg_diag_set(diag, errno == ENOENT ? SG_ENOTFOUND : SG_EIO, "%s: %s", dir,
                           strerror(errno));
    char **list = NULL;
    size_t k = 0, kcap = 0;
    sg_status st = SG_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".npy") != 0)
            continue;
        if (k == kcap) {
            kcap = kcap ? 2 * kcap : 64;
            char **grown = sg_realloc(list, kcap * sizeof *grown);
            if (!grown) {
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
                break;
            }
            list = grown;
        }
        if (!(list[k] = sg_strdup(e->d_name))) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        k++;
    }
    closedir(d);
    if (!st && k)
        qsort(list, k, sizeof *list, cmp_str);
    for (size_t i = 0; i < k && !st; i++) {
        char path[4096], stem[4096];
        int pl = snprintf(path, sizeof path, "%s/%s", dir, list[i]);
        struct stat sb;
        if (pl < 0 || (size_t)pl >= sizeof path || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(list[i]) - 4), list[i]);
        st = add(ds, n, cap, by, names, stem, path, -1, diag);
    }
    for (size_t i = 0; i < k; i++)
        sg_free(list[i]);
    sg_free(list);
    return st;
}

sg_status sg_dumpset_scan_tensors(const char *path, const sg_model *m, const sg_dump_names *names,
                                  sg_dumpset **out, struct sg_diag *diag)
{
    *out = NULL;
    if (!m || !m->graph || !names)
        return sg_diag_set(diag, SG_EINVAL,
                           "%s: a dump named by tensor needs the model (--model) to find the "
                           "node behind each tensor",
                           path);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sg_diag_set(diag, errno == ENOENT ? SG_ENOTFOUND : SG_EIO, "%s: %s", path,
                           strerror(errno));
    bool npz = !S_ISDIR(sb.st_mode);
    if (npz && !sg_npz_is_path(path))
        return sg_diag_set(diag, SG_EINVAL, "%s: neither a folder of dumps nor an .npz", path);
    sg_dumpset *ds = sg__dumpset_new(path);
    if (!ds)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    struct sg__strmap by = {0};
    size_t n = 0, cap = 0, seen = 0;
    sg_status st = index_outputs(ds->arena, m->graph, &by);
    if (st) {
        st = sg_diag_set(diag, st, "out of memory");
        goto out_free;
    }
    if (npz) {
        if ((st = sg_npz_open(path, &ds->npz, diag)))
            goto out_free;
        seen = sg_npz_count(ds->npz);
        for (size_t i = 0; i < seen && !st; i++)
            st = add(ds, &n, &cap, &by, names, sg_npz_name(ds->npz, i), path, (long)i, diag);
    } else {
        st = scan_folder(ds, path, &n, &cap, &by, names, diag);
        seen = n + ds->n_unmatched;
    }
    if (st)
        goto out_free;
    if (n == 0) {
        st = sg_diag_set(diag, SG_ENOTFOUND,
                         "%s: %s of the %zu %s names a node output of the model (files are "
                         "<tensor>.npy, the tensor name with '/' as '_' or as is; .npz members "
                         "the tensor names)",
                         path, seen ? "none" : "no file", seen, npz ? "members" : ".npy files");
        goto out_free;
    }
    if ((st = sg__dumpset_index(ds, n, diag)))
        goto out_free;
    ds->layout = npz ? "npz" : "tensors";
    sg__strmap_free(&by);
    *out = ds;
    return SG_OK;
out_free:
    sg__strmap_free(&by);
    sg_dumpset_free(ds);
    return st;
}
