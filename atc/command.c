/*
 * command.c - the ATC command line: build it, show it quoted, find `atc`,
 * run it (see sg_atc.h).
 */
#include "sg_atc.h"

#include "sg_alloc.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct argv_builder {
    char **v;
    size_t n, cap;
    bool oom;
};

static void push(struct argv_builder *b, char *s)
{
    if (!s) {
        b->oom = true;
        return;
    }
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        char **g = sg_realloc(b->v, cap * sizeof *g);
        if (!g) {
            sg_free(s);
            b->oom = true;
            return;
        }
        b->v = g;
        b->cap = cap;
    }
    b->v[b->n++] = s;
    b->v[b->n] = NULL;
}

static char *kv(const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 4;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "--%s=%s", key, value);
    return s;
}

void sg_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        sg_free(*p);
    sg_free(argv);
}

/* The option name of an extra argument "--name=value" / "--name", or an
 * empty span when it is not one. */
static size_t option_name(const char *arg, const char **name)
{
    *name = arg;
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    *name = arg + 2;
    const char *eq = strchr(*name, '=');
    return eq ? (size_t)(eq - *name) : strlen(*name);
}

static bool same_option(const char *a, size_t alen, const char *b)
{
    /* precision_mode and precision_mode_v2 exclude each other in ATC. */
    bool a_prec = (alen == 14 && strncmp(a, "precision_mode", 14) == 0) ||
                  (alen == 17 && strncmp(a, "precision_mode_v2", 17) == 0);
    bool b_prec = strcmp(b, "precision_mode") == 0 || strcmp(b, "precision_mode_v2") == 0;
    if (a_prec && b_prec)
        return true;
    return strlen(b) == alen && strncmp(a, b, alen) == 0;
}

struct fixed {
    const char *key, *value, *what;
};

static sg_status finish(struct argv_builder *b, const struct fixed *f, size_t n_fixed,
                        const char *const *extra, size_t n_extra, char ***out, struct sg_diag *diag)
{
    for (size_t i = 0; i < n_fixed; i++) {
        if (!f[i].value)
            continue;
        if (strpbrk(f[i].value, "\n\r")) {
            sg_argv_free(b->v);
            return sg_diag_set(diag, SG_EINVAL, "%s holds a line break", f[i].what);
        }
        push(b, kv(f[i].key, f[i].value));
    }
    for (size_t i = 0; i < n_extra; i++) {
        const char *name;
        size_t len = option_name(extra[i], &name);
        for (size_t k = 0; len && k < n_fixed; k++) {
            if (f[k].value && same_option(name, len, f[k].key)) {
                sg_argv_free(b->v);
                return sg_diag_set(diag, SG_EINVAL, "'%s' sets --%s, which %s sets already",
                                   extra[i], f[k].key, f[k].what);
            }
        }
        push(b, sg_strdup(extra[i]));
    }
    if (b->oom) {
        sg_argv_free(b->v);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    *out = b->v;
    return SG_OK;
}

static sg_status need(const char *value, const char *what, struct sg_diag *diag)
{
    if (!value || !*value)
        return sg_diag_set(diag, SG_EINVAL, "missing %s", what);
    return SG_OK;
}

sg_status sg_atc_command(const struct sg_atc_opts *o, char ***argv, struct sg_diag *diag)
{
    *argv = NULL;
    sg_status st;
    if ((st = need(o->model, "the model", diag)) || (st = need(o->output, "the output", diag)) ||
        (st = need(o->soc, "the SoC version", diag)))
        return st;
    if (o->log && !sg_atc_log_level_valid(o->log))
        return sg_diag_set(diag, SG_EINVAL,
                           "unknown log level '%s' (valid: debug, info, warning, error, null)",
                           o->log);
    const char *empty[] = {o->input_shape, o->keep_dtype, o->customize_dtypes, o->op_precision_mode,
                           o->fusion_switch};
    const char *empty_what[] = {"the input shape", "the keep_dtype file",
                                "the customize_dtypes file", "the op_precision_mode file",
                                "the fusion switch file"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
        if (empty[i] && !*empty[i])
            return sg_diag_set(diag, SG_EINVAL, "empty %s", empty_what[i]);
    struct fixed f[] = {
        {"framework", "5", "--framework"},
        {"model", o->model, "the model"},
        {"output", o->output, "the output"},
        {"soc_version", o->soc, "the SoC version"},
        {"input_shape", o->input_shape, "the input shape"},
        {o->precision ? o->precision->option : "precision_mode",
         o->precision ? o->precision->name : NULL, "the precision mode"},
        {"keep_dtype", o->keep_dtype, "the keep_dtype file"},
        {"customize_dtypes", o->customize_dtypes, "the customize_dtypes file"},
        {"op_precision_mode", o->op_precision_mode, "the op_precision_mode file"},
        {"fusion_switch_file", o->fusion_switch, "the fusion switch file"},
        {"log", o->log, "the log level"},
    };
    struct argv_builder b = {0};
    push(&b, sg_strdup("atc"));
    return finish(&b, f, sizeof f / sizeof f[0], o->extra, o->n_extra, argv, diag);
}

sg_status sg_atc_json_command(const char *om, const char *json, const char *const *extra,
                              size_t n_extra, char ***argv, struct sg_diag *diag)
{
    *argv = NULL;
    sg_status st;
    if ((st = need(om, "the compiled model (.om)", diag)) ||
        (st = need(json, "the JSON output", diag)))
        return st;
    struct fixed f[] = {
        {"mode", "1", "--mode"},
        {"om", om, "the compiled model"},
        {"json", json, "the JSON output"},
    };
    struct argv_builder b = {0};
    push(&b, sg_strdup("atc"));
    return finish(&b, f, sizeof f / sizeof f[0], extra, n_extra, argv, diag);
}

/* ------------------------------------------------------------ quoting */

/* Characters a shell word may hold unquoted. */
static bool plain(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                    "_-+./,:=@%",
                    *s))
            return false;
    return true;
}

struct strbuf {
    char *s;
    size_t n, cap;
    bool oom;
};

static void put(struct strbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *g = sg_realloc(b->s, cap);
        if (!g) {
            b->oom = true;
            return;
        }
        b->s = g;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static void put_quoted(struct strbuf *b, const char *s)
{
    put(b, "\"", 1);
    for (; *s; s++) {
        if (strchr("\"\\$`", *s))
            put(b, "\\", 1);
        put(b, s, 1);
    }
    put(b, "\"", 1);
}

char *sg_argv_format(char *const *argv)
{
    struct strbuf b = {0};
    put(&b, "", 0);
    for (size_t i = 0; argv[i]; i++) {
        const char *a = argv[i];
        if (i)
            put(&b, " ", 1);
        if (plain(a)) {
            put(&b, a, strlen(a));
            continue;
        }
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq) {
            /* --key=value: the key is plain if the whole was formed by us. */
            bool key_plain = true;
            for (const char *p = a; p < eq; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", *p))
                    key_plain = false;
            if (key_plain) {
                put(&b, a, (size_t)(eq - a) + 1);
                put_quoted(&b, eq + 1);
                continue;
            }
        }
        put_quoted(&b, a);
    }
    if (b.oom) {
        sg_free(b.s);
        return NULL;
    }
    return b.s;
}

/* ------------------------------------------------------ finding, running */

static bool executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

static char *join(const char *dir, size_t dlen, const char *rel)
{
    size_t n = dlen + strlen(rel) + 2;
    char *s = sg_malloc(n);
    if (s)
        snprintf(s, n, "%.*s/%s", (int)dlen, dir, rel);
    return s;
}

sg_status sg_atc_find(const char *path_env, const char *toolkit_home, char **found,
                      struct sg_diag *diag)
{
    *found = NULL;
    for (const char *p = path_env; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        /* An empty PATH entry means the current folder. */
        char *cand = len ? join(p, len, "atc") : sg_strdup("./atc");
        if (!cand)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        if (executable(cand)) {
            *found = cand;
            return SG_OK;
        }
        sg_free(cand);
        if (!colon)
            break;
        p = colon + 1;
    }
    const char *home =
        toolkit_home && *toolkit_home ? toolkit_home : "/usr/local/Ascend/ascend-toolkit/latest";
    static const char *const rel[] = {"bin/atc", "compiler/bin/atc", "atc/bin/atc"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char *cand = join(home, strlen(home), rel[i]);
        if (!cand)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        if (executable(cand)) {
            *found = cand;
            return SG_OK;
        }
        sg_free(cand);
    }
    return sg_diag_set(diag, SG_ENOTFOUND,
                       "atc not found: not on PATH, nor under %s (bin/, compiler/bin/, atc/bin/)%s",
                       home,
                       toolkit_home && *toolkit_home
                           ? ""
                           : "; set ASCEND_TOOLKIT_HOME or source the CANN toolkit's set_env.sh");
}

sg_status sg_atc_exec(const char *exe, char *const *argv, int *exit_code, struct sg_diag *diag)
{
    *exit_code = -1;
    pid_t pid;
    int err = posix_spawn(&pid, exe, NULL, NULL, argv, environ);
    if (err)
        return sg_diag_set(diag, SG_EIO, "cannot run %s: %s", exe, strerror(err));
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return sg_diag_set(diag, SG_EIO, "waiting for %s: %s", exe, strerror(errno));
    }
    if (WIFEXITED(status)) {
        *exit_code = WEXITSTATUS(status);
        return SG_OK;
    }
    if (WIFSIGNALED(status)) {
        *exit_code = 128 + WTERMSIG(status);
        return sg_diag_set(diag, SG_EIO, "%s was killed by signal %d (%s)", exe, WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    }
    return sg_diag_set(diag, SG_EIO, "%s ended with status 0x%x", exe, (unsigned)status);
}
