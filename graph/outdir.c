/* outdir.c - result folders written all or nothing (see sg_outdir.h). */
#include "sg_outdir.h"

#include "sg_alloc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "strmap.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIST_VERSION "surgeon-outdir 1 "
/* Our results are three folders deep at most; deeper is not ours. */
#define WALK_DEPTH 16

/* ------------------------------------------------------------- walking */

typedef sg_status (*visit_fn)(void *ctx, const char *rel, const struct stat *sb);

/* Call fn for every entry under dir (lstat, symlinks not followed), the
 * list file at the top excepted; rel is the path from the top. */
static sg_status walk(const char *dir, const char *rel, int depth, visit_fn fn, void *ctx,
                      struct sg_diag *diag)
{
    DIR *d = opendir(dir);
    if (!d)
        return sg_diag_set(diag, SG_EIO, "cannot read folder '%s': %s", dir, strerror(errno));
    sg_status st = SG_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || (depth == 0 && !strcmp(n, SG_OUTDIR_LIST)))
            continue;
        char path[PATH_MAX], sub[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, n) >= sizeof path ||
            (size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", n) >= sizeof sub) {
            st = sg_diag_set(diag, SG_ERANGE, "'%s/%s': path too long", dir, n);
            break;
        }
        struct stat sb;
        if (lstat(path, &sb) != 0) {
            st = sg_diag_set(diag, SG_EIO, "'%s': %s", path, strerror(errno));
            break;
        }
        if ((st = fn(ctx, sub, &sb)))
            break;
        if (S_ISDIR(sb.st_mode)) {
            if (depth + 1 >= WALK_DEPTH)
                st = sg_diag_set(diag, SG_ETOOBIG, "'%s': folders nested too deep", path);
            else
                st = walk(path, sub, depth + 1, fn, ctx, diag);
        }
    }
    closedir(d);
    return st;
}

/* "d <path>" / "f <path>", escaped, into buf. */
static void list_line(char *buf, size_t cap, const char *rel, bool is_dir)
{
    size_t o = 0;
    buf[o++] = is_dir ? 'd' : 'f';
    buf[o++] = ' ';
    for (const unsigned char *p = (const unsigned char *)rel; *p && o + 5 < cap; p++) {
        if (*p < 0x20 || *p == '\\')
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", *p);
        else
            buf[o++] = (char)*p;
    }
    buf[o] = '\0';
}

/* --------------------------------------------------------------- lists */

struct list_writer {
    const char *dir;
    const char *tag;
    struct sg_diag *diag;
    FILE *out;
};

static sg_status write_entry(void *ctx, const char *rel, const struct stat *sb)
{
    struct list_writer *w = ctx;
    char line[PATH_MAX * 4 + 8];
    list_line(line, sizeof line, rel, S_ISDIR(sb->st_mode));
    fprintf(w->out, "%s\n", line);
    return ferror(w->out) ? SG_EIO : SG_OK;
}

static sg_status write_list_body(FILE *out, void *ctx)
{
    struct list_writer *w = ctx;
    w->out = out;
    fprintf(out, "%s%s\n", LIST_VERSION, w->tag);
    struct sg_diag d = {0};
    sg_status st = walk(w->dir, "", 0, write_entry, w, &d);
    if (st && st != SG_EIO)
        sg_diag_set(w->diag, st, "%s", d.msg);
    return st;
}

static sg_status write_list(const char *dir, const char *tag, struct sg_diag *diag)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, SG_OUTDIR_LIST) >= sizeof path)
        return sg_diag_set(diag, SG_ERANGE, "'%s': path too long", dir);
    struct list_writer w = {dir, tag, diag, NULL};
    return sg_file_write_atomic_with(path, write_list_body, &w, diag);
}

struct checker {
    const char *out, *tag;
    struct sg__strmap listed; /* lines of the list */
    struct sg_diag *diag;
};

static sg_status check_entry(void *ctx, const char *rel, const struct stat *sb)
{
    struct checker *c = ctx;
    char line[PATH_MAX * 4 + 8];
    list_line(line, sizeof line, rel, S_ISDIR(sb->st_mode));
    if (!sg__strmap_get(&c->listed, line))
        return sg_diag_set(c->diag, SG_EEXISTS,
                           "'%s' holds '%s', which no earlier surgeon %s wrote; remove it or "
                           "choose another output folder",
                           c->out, rel, c->tag);
    return SG_OK;
}

static bool dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

enum state { ABSENT, EMPTY, EARLIER };

static sg_status state_of(const char *out, const char *tag, enum state *state, struct sg_diag *diag)
{
    struct stat sb;
    if (stat(out, &sb) != 0) {
        if (errno != ENOENT)
            return sg_diag_set(diag, SG_EIO, "'%s': %s", out, strerror(errno));
        *state = ABSENT;
        return SG_OK;
    }
    if (!S_ISDIR(sb.st_mode))
        return sg_diag_set(diag, SG_EEXISTS, "'%s' exists and is not a folder", out);
    if (dir_is_empty(out)) {
        *state = EMPTY;
        return SG_OK;
    }
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", out, SG_OUTDIR_LIST) >= sizeof path)
        return sg_diag_set(diag, SG_ERANGE, "'%s': path too long", out);
    struct stat lb;
    if (lstat(path, &lb) != 0 || !S_ISREG(lb.st_mode))
        return sg_diag_set(diag, SG_EEXISTS,
                           "'%s' exists and is not an earlier surgeon %s folder (it has no %s "
                           "list of what surgeon wrote); remove it or choose another output folder",
                           out, tag, SG_OUTDIR_LIST);
    uint8_t *text;
    size_t len;
    struct sg_diag rd = {0};
    /* (Noted as an input like every file read; the walks skip it.) */
    sg_status st = sg_file_read_all(path, SG_SIDE_FILE_MAX, &text, &len, &rd);
    if (st)
        return sg_diag_set(diag, st, "%s", rd.msg);
    struct checker c = {.out = out, .tag = tag, .diag = diag};
    char *s = (char *)text, *end = s + len;
    char *nl = memchr(s, '\n', len);
    size_t vl = strlen(LIST_VERSION);
    if (!nl || (size_t)(nl - s) < vl || memcmp(s, LIST_VERSION, vl) != 0) {
        st = sg_diag_set(diag, SG_EEXISTS,
                         "%s: not a list of surgeon's (remove '%s' or choose "
                         "another output folder)",
                         path, out);
        goto out;
    }
    *nl = '\0';
    if (strcmp(s + vl, tag) != 0) {
        st = sg_diag_set(diag, SG_EEXISTS,
                         "'%s' is the result of surgeon %s, not of surgeon %s; remove it or "
                         "choose another output folder",
                         out, s + vl, tag);
        goto out;
    }
    for (char *p = nl + 1; p < end && !st;) {
        char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e)
            e = end;
        *e = '\0';
        if (*p && sg__strmap_put(&c.listed, p, p))
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        p = e + 1;
    }
    if (!st)
        st = walk(out, "", 0, check_entry, &c, diag);
    if (!st)
        *state = EARLIER;
out:
    sg__strmap_free(&c.listed);
    sg_free(text);
    return st;
}

sg_status sg_outdir_check(const char *out, const char *tag, struct sg_diag *diag)
{
    enum state state;
    return state_of(out, tag, &state, diag);
}

/* ------------------------------------------------------------ lifecycle */

static void release(struct sg_outdir *od)
{
    sg_free(od->out);
    sg_free(od->tmp);
    sg_free(od->old);
    memset(od, 0, sizeof *od);
    od->h_tmp = od->h_out = od->h_old = -1;
}

sg_status sg_outdir_begin(struct sg_outdir *od, const char *out, const char *tag,
                          struct sg_diag *diag)
{
    memset(od, 0, sizeof *od);
    od->h_tmp = od->h_out = od->h_old = -1;
    od->tag = tag;
    if (!(od->out = sg_strdup(out)))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    for (size_t n = strlen(od->out); n > 1 && od->out[n - 1] == '/'; n--)
        od->out[n - 1] = '\0';
    sg_cleanup_stale_result(od->out);
    sg_status st = sg_outdir_check(od->out, tag, diag);
    if (st) {
        release(od);
        return st;
    }
    if (!(od->tmp = sg_cleanup_temp_name(od->out, ".", ".tmp."))) {
        release(od);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    if (!mkdtemp(od->tmp)) {
        st = sg_diag_set(diag, SG_EIO, "cannot create a folder beside '%s': %s", od->out,
                         strerror(errno));
        release(od);
        return st;
    }
    od->h_tmp = sg_cleanup_add(SG_CLEANUP_TREE, od->tmp, NULL);
    /* mkdtemp's 0700 is only for while it is private. */
    chmod(od->tmp, 0777 & ~sg_file_umask());
    return SG_OK;
}

sg_status sg_outdir_publish(struct sg_outdir *od, struct sg_diag *diag)
{
    if (od->published)
        return SG_OK;
    sg_status st = write_list(od->tmp, od->tag, diag);
    enum state state;
    if (st || (st = state_of(od->out, od->tag, &state, diag)))
        return st;
    if (state == EMPTY && rmdir(od->out) != 0)
        return sg_diag_set(diag, SG_EIO, "cannot replace '%s': %s", od->out, strerror(errno));
    if (state == EARLIER) {
        if (!(od->old = sg_cleanup_temp_name(od->out, "", ".old.")))
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        if (!mkdtemp(od->old)) {
            st = sg_diag_set(diag, SG_EIO, "cannot create a folder beside '%s': %s", od->out,
                             strerror(errno));
            sg_free(od->old);
            od->old = NULL;
            return st;
        }
        /* Entered before the move: a signal from here on puts it back. */
        od->h_old = sg_cleanup_add(SG_CLEANUP_RESTORE, od->old, od->out);
        if (rename(od->out, od->old) != 0) {
            st = sg_diag_set(diag, SG_EIO, "cannot move '%s' aside: %s", od->out, strerror(errno));
            rmdir(od->old);
            sg_cleanup_forget(od->h_old);
            od->h_old = -1;
            sg_free(od->old);
            od->old = NULL;
            return st;
        }
    }
    od->h_out = sg_cleanup_add(SG_CLEANUP_TREE, od->out, NULL);
    if (rename(od->tmp, od->out) != 0) {
        st = sg_diag_set(diag, SG_EIO, "cannot move the results to '%s': %s", od->out,
                         strerror(errno));
        sg_cleanup_forget(od->h_out);
        od->h_out = -1;
        if (od->old && rename(od->old, od->out) == 0) {
            sg_cleanup_forget(od->h_old);
            od->h_old = -1;
            sg_free(od->old);
            od->old = NULL;
        }
        return st;
    }
    sg_cleanup_forget(od->h_tmp);
    od->h_tmp = -1;
    od->published = true;
    return SG_OK;
}

sg_status sg_outdir_commit(struct sg_outdir *od, struct sg_diag *diag)
{
    bool again = od->published;
    sg_status st = sg_outdir_publish(od, diag);
    if (!st && again)
        st = write_list(od->out, od->tag, diag); /* files added since */
    if (st) {
        sg_outdir_abort(od);
        return st;
    }
    sg_cleanup_forget(od->h_out);
    od->h_out = -1;
    if (od->old) {
        sg_cleanup_set_kind(od->h_old, SG_CLEANUP_TREE);
        sg_cleanup_remove_tree(od->old);
        sg_cleanup_forget(od->h_old);
    }
    release(od);
    return SG_OK;
}

void sg_outdir_abort(struct sg_outdir *od)
{
    if (od->published) {
        sg_cleanup_remove_tree(od->out);
        sg_cleanup_forget(od->h_out);
        if (od->old && rename(od->old, od->out) == 0)
            sg_cleanup_forget(od->h_old);
    } else if (od->tmp) {
        sg_cleanup_remove_tree(od->tmp);
        sg_cleanup_forget(od->h_tmp);
    }
    release(od);
}
