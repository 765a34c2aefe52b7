/* outdir.c - result folders written all or nothing (see sg_outdir.h). */
#include "sg_outdir.h"
#include "sg_file.h"
#include "sg_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void sg_outdir_remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            empty = false;
    closedir(d);
    return empty;
}

enum sg_outdir_state sg_outdir_state(const char *out, const char *marker)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return errno == ENOENT ? SG_OUTDIR_ABSENT : SG_OUTDIR_OTHER;
    if (!S_ISDIR(st.st_mode))
        return SG_OUTDIR_OTHER;
    if (dir_is_empty(out))
        return SG_OUTDIR_EMPTY;
    char m[4096];
    int n = snprintf(m, sizeof m, "%s/%s", out, marker);
    if (n < 0 || (size_t)n >= sizeof m)
        return SG_OUTDIR_OTHER;
    return access(m, F_OK) == 0 ? SG_OUTDIR_EARLIER : SG_OUTDIR_OTHER;
}

char *sg_outdir_temp(const char *out)
{
    size_t len = strlen(out) + 32;
    char *tmp = sg_malloc(len);
    char *copy = sg_strdup(out), *dcopy = sg_strdup(out);
    if (!tmp || !copy || !dcopy) {
        sg_free(tmp);
        sg_free(copy);
        sg_free(dcopy);
        errno = ENOMEM;
        return NULL;
    }
    snprintf(tmp, len, "%s/.%s.tmp.XXXXXX", dirname(dcopy), basename(copy));
    sg_free(copy);
    sg_free(dcopy);
    if (!mkdtemp(tmp)) {
        int e = errno;
        sg_free(tmp);
        errno = e;
        return NULL;
    }
    mode_t mask = sg_file_umask();
    chmod(tmp, 0777 & ~mask); /* mkdtemp's 0700 is only for while it is private */
    return tmp;
}

bool sg_outdir_swap(const char *tmp, const char *out, const char *marker, char **old)
{
    *old = NULL;
    switch (sg_outdir_state(out, marker)) {
    case SG_OUTDIR_ABSENT:
        return rename(tmp, out) == 0;
    case SG_OUTDIR_EMPTY:
        if (rmdir(out) != 0)
            return false;
        return rename(tmp, out) == 0;
    case SG_OUTDIR_EARLIER:
        break;
    default:
        errno = EEXIST;
        return false;
    }
    size_t len = strlen(out) + 16;
    char *aside = sg_malloc(len);
    if (!aside) {
        errno = ENOMEM;
        return false;
    }
    snprintf(aside, len, "%s.old.XXXXXX", out);
    if (!mkdtemp(aside) || rename(out, aside) != 0) {
        int e = errno;
        rmdir(aside);
        sg_free(aside);
        errno = e;
        return false;
    }
    if (rename(tmp, out) != 0) {
        int e = errno;
        rename(aside, out);
        sg_free(aside);
        errno = e;
        return false;
    }
    *old = aside;
    return true;
}

void sg_outdir_commit(char *old)
{
    if (old)
        sg_outdir_remove_tree(old);
    sg_free(old);
}

void sg_outdir_rollback(const char *out, char *old)
{
    sg_outdir_remove_tree(out);
    if (old)
        rename(old, out);
    sg_free(old);
}
