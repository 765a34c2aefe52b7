/* textio.c - reading and atomically writing the small text files of fusion/. */
#include "fusion_impl.h"

#include "sg_alloc.h"
#include "sg_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sg_status sg__check_no_nul(const char *text, size_t len, const char *label, struct sg_diag *diag)
{
    const char *nul = memchr(text, '\0', len);
    if (!nul)
        return SG_OK;
    unsigned line = 1;
    for (const char *p = text; p < nul; p++)
        line += *p == '\n';
    return sg_diag_set(diag, SG_EPARSE, "%s:%u: NUL byte: this is not a text file", label, line);
}

sg_status sg__read_text(const char *path, size_t max, char **buf, size_t *len, struct sg_diag *diag)
{
    uint8_t *b;
    *buf = NULL;
    *len = 0;
    sg_status st = sg_file_read_all(path, max, &b, len, diag);
    if (st)
        return st;
    if ((st = sg__check_no_nul((char *)b, *len, path, diag))) {
        sg_free(b);
        *len = 0;
        return st;
    }
    *buf = (char *)b;
    return SG_OK;
}

sg_status sg__write_atomic(const char *path, sg__write_fn fn, const void *ctx, struct sg_diag *diag)
{
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    char *tmp = sg_malloc(n);
    if (!tmp)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    sg_status st = SG_OK;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        st = sg_diag_set(diag, SG_EIO, "%s: cannot create a file there: %s", path, strerror(errno));
        goto out_free;
    }
    /* mkstemp makes it 0600; a config file is as readable as any other. */
    mode_t mask = sg_file_umask();
    (void)fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        st = sg_diag_set(diag, SG_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        goto out_unlink;
    }
    st = fn(f, ctx, diag);
    if (st != SG_OK && diag && diag->status == SG_OK)
        sg_diag_set(diag, st, "%s: %s", path, sg_strerror(st));
    int write_err = ferror(f);
    if (fclose(f) != 0 || write_err) {
        if (st == SG_OK)
            st = sg_diag_set(diag, SG_EIO, "%s: write failed: %s", path,
                             errno ? strerror(errno) : "stream error");
    }
    if (st != SG_OK)
        goto out_unlink;
    if (rename(tmp, path) != 0) {
        st = sg_diag_set(diag, SG_EIO, "%s: cannot rename the temporary file into place: %s", path,
                         strerror(errno));
        goto out_unlink;
    }
    sg_free(tmp);
    return SG_OK;
out_unlink:
    unlink(tmp);
out_free:
    sg_free(tmp);
    return st;
}

int sg__next_line(const char *text, size_t len, size_t *pos, const char **start, const char **end)
{
    if (*pos >= len)
        return 0;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    const char *e = nl ? nl : text + len;
    *pos = (size_t)(e - text) + (nl ? 1 : 0);
    if (e > s && e[-1] == '\r')
        e--;
    *start = s;
    *end = e;
    return 1;
}

void sg__trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

unsigned sg__column(const char *line, const char *pos)
{
    unsigned col = 1;
    for (const char *p = line; p < pos; p++)
        if (((unsigned char)*p & 0xC0) != 0x80)
            col++;
    return col;
}
