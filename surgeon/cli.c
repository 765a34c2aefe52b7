/* cli.c - messages and small parsers shared by the subcommands. */
#include "cli.h"

#include <ctype.h>
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
