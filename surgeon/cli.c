/* cli.c - messages and small parsers shared by the subcommands. */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_compare.h"
#include "sg_suggest.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("surgeon: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_error_about(const char *path, const char *msg)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':')
        cli_error("%s", msg);
    else
        cli_error("%s: %s", path, msg);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("surgeon: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage(const struct sg_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("surgeon: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "Try 'surgeon %s --help'.\n", cmd->name);
    return SG_EXIT_USAGE;
}

int cli_fail(const struct sg_diag *diag)
{
    if (diag->status != SG_OK)
        cli_error("%s", diag->msg[0] ? diag->msg : sg_strerror(diag->status));
    return SG_EXIT_FAIL;
}

const char *cli_did_you_mean(const struct sg_suggest *s, char *buf, size_t size)
{
    const char *best = sg_suggest_best(s);
    if (best)
        snprintf(buf, size, " (did you mean '%s'?)", best);
    else if (size)
        buf[0] = '\0';
    return buf;
}

int cli_unknown_option(const struct sg_command *cmd, const struct option *longopts, const char *arg)
{
    /* "--name=value" and "-name" are compared by their name. */
    char word[SG_SUGGEST_MAX_LEN + 1];
    const char *p = arg;
    while (*p == '-')
        p++;
    size_t len = strcspn(p, "=");
    bool named = len > 1 && len <= SG_SUGGEST_MAX_LEN;
    if (named) {
        memcpy(word, p, len);
        word[len] = '\0';
    }
    struct sg_suggest sg;
    sg_suggest_init(&sg, named ? word : "");
    for (size_t i = 0; named && longopts && longopts[i].name; i++)
        sg_suggest_offer(&sg, longopts[i].name);
    const char *best = named ? sg_suggest_best(&sg) : NULL;
    if (best)
        return cli_usage(cmd, "unknown option '%s' (did you mean '--%s'?)", arg, best);
    return cli_usage(cmd, "unknown option '%s'", arg);
}

bool cli_help_requested(const struct sg_command *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(cmd->usage, stdout);
            return true;
        }
    }
    return false;
}

bool cli_parse_loop_limit(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return false;
    *out = v ? (uint64_t)v : UINT64_MAX;
    return true;
}

bool cli_parse_threshold(const char *s, double lo, double hi, double *out)
{
    if (strcmp(s, "off") == 0) {
        *out = NAN; /* no comparison with NaN is true */
        return true;
    }
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

double *cli_threshold_field(struct sg_thresholds *t, const char *name, double *lo, double *hi)
{
    *lo = 0, *hi = INFINITY;
    if (strcmp(name, "cosine") == 0)
        return *lo = -1, *hi = 1, &t->cosine;
    if (strcmp(name, "red") == 0)
        return &t->red;
    if (strcmp(name, "kl") == 0)
        return &t->kl;
    if (strcmp(name, "rmse") == 0)
        return &t->rmse;
    if (strcmp(name, "mre") == 0)
        return &t->mre;
    if (strcmp(name, "rmse-relative") == 0)
        return &t->rmse_relative;
    if (strcmp(name, "mre-floor") == 0)
        return *hi = 1, &t->mre_floor;
    return NULL;
}

bool cli_parse_size(const char *s, unsigned long long *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mul = 1ull << 10, end++;
        break;
    case 'M':
        mul = 1ull << 20, end++;
        break;
    case 'G':
        mul = 1ull << 30, end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || (mul > 1 && v > ~0ull / mul))
        return false;
    *out = v * mul;
    return true;
}

const char *cli_human_bytes(unsigned long long n, char *buf, size_t size)
{
    static const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", n);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
    return buf;
}

bool cli_list_add(struct cli_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **g = sg_realloc(l->v, cap * sizeof *g);
        if (!g)
            return false;
        l->v = g;
        l->cap = cap;
    }
    char *copy = sg_strdup(s);
    if (!copy)
        return false;
    l->v[l->n++] = copy;
    return true;
}

bool cli_list_add_commas(struct cli_list *l, const char *s)
{
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return false;
        char *item = sg_malloc(len + 1);
        if (!item)
            return false;
        memcpy(item, p, len);
        item[len] = '\0';
        bool ok = cli_list_add(l, item);
        sg_free(item);
        if (!ok)
            return false;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

void cli_list_free(struct cli_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        sg_free(l->v[i]);
    sg_free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
