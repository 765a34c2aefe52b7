/* textio.c - reading and atomically writing the small text files of fusion/. */
#include "fusion_impl.h"

#include "sg_alloc.h"
#include "sg_file.h"

#include <stdint.h>
#include <string.h>

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

struct write_call {
    sg__write_fn fn;
    const void *ctx;
    struct sg_diag *diag;
};

static sg_status call_writer(FILE *out, void *arg)
{
    const struct write_call *w = arg;
    return w->fn(out, w->ctx, w->diag);
}

sg_status sg__write_atomic(const char *path, sg__write_fn fn, const void *ctx, struct sg_diag *diag)
{
    struct write_call w = {fn, ctx, diag};
    return sg_file_write_atomic_with(path, call_writer, &w, diag);
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
