/*
 * exec.c - a model run on a target, outputs back in memory
 * (sg_verify_exec_run): what the bisection runs for each prefix and the
 * single-op compare for each case, so that both see the same targets:
 *
 *   mock   the mock compiler, then the mock OM with float16 emulation
 *   atc    the real atc, then the user's device command on the OM
 *   cmd    the user's command on the ONNX model
 *
 * A command gets the placeholders of ../shared/FORMATS.md: {model} the
 * ONNX file, {inputs} a folder of <input>.npy, {out} the folder to fill
 * with <output>.npy ('/' in names as '_'), and for atc {om} the compiled
 * model. It runs under /bin/sh in its own process group with its output
 * in DIR/target.log; past the timeout the group is killed.
 */
#define _POSIX_C_SOURCE 200809L
#include "sg_alloc.h"
#include "sg_atc.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_tensorfile.h"
#include "verify_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sg_status oom(struct sg_diag *d)
{
    return sg_diag_set(d, SG_ENOMEM, "out of memory");
}

const char *sg_verify_exec_name(enum sg_verify_exec_kind k)
{
    static const char *const names[SG_VERIFY_EXEC_COUNT] = {"mock", "atc", "cmd"};
    return (unsigned)k < SG_VERIFY_EXEC_COUNT ? names[k] : "?";
}

sg_status sg_verify_exec_parse(const char *target, struct sg_verify_exec *t, struct sg_diag *d)
{
    if (!target)
        return sg_diag_set(d, SG_EINVAL, "missing --target mock|atc|cmd:\"COMMAND\"");
    if (strcmp(target, "mock") == 0) {
        t->kind = SG_VERIFY_EXEC_MOCK;
    } else if (strcmp(target, "atc") == 0) {
        t->kind = SG_VERIFY_EXEC_ATC;
    } else if (strncmp(target, "cmd:", 4) == 0) {
        t->kind = SG_VERIFY_EXEC_CMD;
        t->command = target + 4;
    } else {
        return sg_diag_set(d, SG_EINVAL,
                           "unknown target '%s' (the targets are mock, atc and cmd:\"COMMAND\" "
                           "with {model}, {inputs} and {out})",
                           target);
    }
    return SG_OK;
}

/* Whether text holds placeholder p. */
static bool has(const char *text, const char *p)
{
    return text && strstr(text, p);
}

sg_status sg_verify_exec_check(const struct sg_verify_exec *t, struct sg_diag *d)
{
    if (!(t->timeout >= 0) || !isfinite(t->timeout))
        return sg_diag_set(d, SG_EINVAL, "bad --timeout (want seconds, 0: none)");
    if (t->kind == SG_VERIFY_EXEC_CMD) {
        if (!t->command || !*t->command)
            return sg_diag_set(d, SG_EINVAL, "--target cmd: needs a command after 'cmd:'");
        if (!has(t->command, "{out}"))
            return sg_diag_set(d, SG_EINVAL,
                               "the target command has no {out}: it must write each output of "
                               "{model} as {out}/<output>.npy");
        if (!has(t->command, "{model}"))
            return sg_diag_set(d, SG_EINVAL,
                               "the target command has no {model}: it must run the model it is "
                               "given");
        if (t->soc || t->precision || t->keep_dtype || t->fusion || t->overflow || t->n_keep_ops ||
            t->n_keep_nodes)
            return sg_diag_set(d, SG_EINVAL,
                               "compile options (--soc, --precision, --fusion, --keep...) go with "
                               "--target mock or atc; a cmd: target compiles as it likes");
        if (t->device_command)
            return sg_diag_set(d, SG_EINVAL, "--device-cmd goes with --target atc");
        return SG_OK;
    }
    if ((unsigned)t->kind >= SG_VERIFY_EXEC_COUNT)
        return sg_diag_set(d, SG_EINVAL, "unknown target kind %d", (int)t->kind);
    if (!t->soc)
        return sg_diag_set(d, SG_EINVAL,
                           "--target %s needs --soc SOC (e.g. Ascend910B1, Ascend310P3)",
                           sg_verify_exec_name(t->kind));
    if (t->kind == SG_VERIFY_EXEC_ATC && !t->device_command)
        return sg_diag_set(d, SG_EINVAL,
                           "--target atc compiles each model with the real atc, but an OM runs "
                           "only on an Ascend device: give --device-cmd \"COMMAND\" that runs "
                           "{om} on {inputs} and writes {out}/<output>.npy");
    if (t->kind == SG_VERIFY_EXEC_ATC && !has(t->device_command, "{out}"))
        return sg_diag_set(d, SG_EINVAL,
                           "the device command has no {out}: it must write each output as "
                           "{out}/<output>.npy");
    if (t->kind == SG_VERIFY_EXEC_MOCK && t->device_command)
        return sg_diag_set(d, SG_EINVAL, "--device-cmd goes with --target atc");
    if (t->kind == SG_VERIFY_EXEC_MOCK && t->timeout > 0)
        return sg_diag_set(d, SG_EINVAL,
                           "--timeout limits a command (cmd: or --device-cmd); the mock runs "
                           "here");
    struct sg_verify_compile_opts c = {.model = "model.onnx",
                                       .out = "model",
                                       .soc = t->soc,
                                       .precision = t->precision,
                                       .keep_dtype = t->keep_dtype,
                                       .fusion = t->fusion,
                                       .overflow = t->overflow,
                                       .keep_ops = t->keep_ops,
                                       .n_keep_ops = t->n_keep_ops,
                                       .keep_nodes = t->keep_nodes,
                                       .n_keep_nodes = t->n_keep_nodes,
                                       .compiler = t->kind == SG_VERIFY_EXEC_MOCK
                                                       ? SG_VERIFY_COMPILER_MOCK
                                                       : SG_VERIFY_COMPILER_ATC};
    return sg_verify_compile_check(&c, d);
}

/* ------------------------------------------------------ the command */

/* The file name of a tensor in {inputs} and {out}: '/' as '_'. */
static void file_name(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s.npy", name);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '_';
}

/* s quoted for sh ('...' with ' as '\''), appended to *buf. */
static bool append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = (*cap ? *cap : 256);
        while (c < *len + n + 1)
            c *= 2;
        char *g = sg_realloc(*buf, c);
        if (!g)
            return false;
        *buf = g;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

static bool append_quoted(char **buf, size_t *len, size_t *cap, const char *s)
{
    bool ok = append(buf, len, cap, "'", 1);
    for (; ok && *s; s++)
        ok = *s == '\'' ? append(buf, len, cap, "'\\''", 4) : append(buf, len, cap, s, 1);
    return ok && append(buf, len, cap, "'", 1);
}

char *sg_verify_exec_fill(const char *command, const char *model, const char *om,
                          const char *inputs, const char *out)
{
    static const char *const keys[] = {"{model}", "{inputs}", "{out}", "{om}"};
    const char *vals[] = {model, inputs, out, om};
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (!append(&buf, &len, &cap, "", 0))
        return NULL;
    for (const char *p = command; *p;) {
        size_t k = 0;
        while (k < 4 && !(vals[k] && strncmp(p, keys[k], strlen(keys[k])) == 0))
            k++;
        bool ok;
        if (k < 4) {
            ok = append_quoted(&buf, &len, &cap, vals[k]);
            p += strlen(keys[k]);
        } else {
            ok = append(&buf, &len, &cap, p, 1);
            p++;
        }
        if (!ok) {
            sg_free(buf);
            return NULL;
        }
    }
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The last line of the log, for a message ("" when empty). */
static void log_tail(const char *log, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') {
            line[strcspn(line, "\n")] = '\0';
            snprintf(buf, size, "%s", line);
        }
    fclose(f);
}

/* Run `line` with sh, output into `log`, at most `timeout` seconds (0: no
 * limit). */
static sg_status run_shell(const char *line, const char *log, double timeout, const char *what,
                           struct sg_diag *d)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return sg_diag_set(d, SG_EIO, "cannot create '%s': %s", log, strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        return sg_diag_set(d, SG_EIO, "cannot start the %s: %s", what, strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with the child's own call */
    close(fd);
    double start = now();
    int status = 0;
    bool timed_out = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, timeout > 0 ? WNOHANG : 0);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            kill(-pid, SIGKILL);
            return sg_diag_set(d, SG_EIO, "waiting for the %s: %s", what, strerror(errno));
        }
        if (timeout > 0 && now() - start > timeout) {
            timed_out = true;
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        if (r == 0) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    /* Whatever the shell left running in its group goes too. */
    kill(-pid, SIGKILL);
    char tail[512];
    log_tail(log, tail, sizeof tail);
    if (timed_out)
        return sg_diag_set(d, SG_EIO,
                           "the %s ran past --timeout %g s and was killed: %s (its "
                           "output: %s)",
                           what, timeout, line, log);
    if (WIFSIGNALED(status))
        return sg_diag_set(d, SG_EIO, "the %s was killed by signal %d: %s (its output: %s%s%s)",
                           what, WTERMSIG(status), line, log, *tail ? ": " : "", tail);
    if (WEXITSTATUS(status) != 0)
        return sg_diag_set(d, SG_EIO, "the %s failed with exit status %d: %s (its output: %s%s%s)",
                           what, WEXITSTATUS(status), line, log, *tail ? ": " : "", tail);
    return SG_OK;
}

/* ------------------------------------------------------------ a run */

static sg_status mkdir_in(const char *dir, const char *name, char **out, struct sg_diag *d)
{
    if (!(*out = sg__verify_join(dir, name)))
        return oom(d);
    if (mkdir(*out, 0777) != 0 && errno != EEXIST)
        return sg_diag_set(d, SG_EIO, "cannot create '%s': %s", *out, strerror(errno));
    return SG_OK;
}

/* The inputs as {inputs}/<name>.npy. */
static sg_status write_inputs(const struct sg_verify_values *in, const char *dir, struct sg_diag *d)
{
    for (uint32_t r = 0; r < in->n; r++) {
        char name[1024], *path;
        file_name(in->names[r], name, sizeof name);
        if (!(path = sg__verify_join(dir, name)))
            return oom(d);
        struct sg_array a = {0};
        sg_status st = sg_rt_tensor_to_array(in->values[r], &a, d);
        if (!st)
            st = sg_npy_write(path, &a, d);
        sg_array_free(&a);
        sg_free(path);
        if (st)
            return st;
    }
    return SG_OK;
}

/* The outputs of m from {out}/<name>.npy, in graph order. */
static sg_status read_outputs(sg_model *m, const char *dir, const char *what,
                              struct sg_verify_values *out, struct sg_diag *d)
{
    const sg_graph *g = m->graph;
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        const char *vn = g->outputs[i]->name;
        char name[1024], *path;
        file_name(vn, name, sizeof name);
        if (!(path = sg__verify_join(dir, name)))
            return oom(d);
        struct stat sb;
        if (stat(path, &sb) != 0) {
            sg_status st = sg_diag_set(d, SG_ENOTFOUND,
                                       "the %s exited 0 but wrote no %s (output '%s' of the "
                                       "model it was given)",
                                       what, path, vn);
            sg_free(path);
            return st;
        }
        struct sg_array a = {0};
        sg_rt_value *v = NULL;
        sg_status st = sg_npy_read(path, &a, d);
        if (!st)
            st = sg_rt_tensor_from_array(&a, &v, d);
        sg_array_free(&a);
        if (!st)
            st = sg__verify_values_add(out, vn, v, d);
        sg_rt_value_unref(v);
        if (st)
            sg_diag_prefix(d, "the %s's output %s", what, path);
        sg_free(path);
        if (st)
            return st;
    }
    return SG_OK;
}

/* The compiler's result lines name the step's temporary folder and repeat
 * for every step: only its notes, warnings and progress go through. */
static void quiet_info(void *ctx, enum sg_verify_event kind, const char *text)
{
    const struct sg_verify_events *ev = ctx;
    if (kind != SG_VERIFY_INFO && ev && ev->fn)
        ev->fn(ev->ctx, kind, text);
}

/* Compile `model` into DIR/model (.om, .json). */
static sg_status compile(const struct sg_verify_exec *t, const char *model, const char *dir,
                         const struct sg_verify_events *ev, char **om, struct sg_diag *d)
{
    char *prefix = sg__verify_join(dir, "model");
    if (!prefix)
        return oom(d);
    struct sg_verify_compile_opts c = {.model = model,
                                       .out = prefix,
                                       .soc = t->soc,
                                       .precision = t->precision,
                                       .keep_dtype = t->keep_dtype,
                                       .fusion = t->fusion,
                                       .overflow = t->overflow,
                                       .keep_ops = t->keep_ops,
                                       .n_keep_ops = t->n_keep_ops,
                                       .keep_nodes = t->keep_nodes,
                                       .n_keep_nodes = t->n_keep_nodes,
                                       .compiler = t->kind == SG_VERIFY_EXEC_MOCK
                                                       ? SG_VERIFY_COMPILER_MOCK
                                                       : SG_VERIFY_COMPILER_ATC,
                                       .log = t->kind == SG_VERIFY_EXEC_ATC ? "error" : NULL};
    struct sg_verify_events filtered = {.fn = quiet_info, .ctx = (void *)ev};
    sg_status st = sg_verify_compile(&c, &filtered, NULL, d);
    if (st) {
        sg_diag_prefix(d, "compiling %s with %s", model,
                       t->kind == SG_VERIFY_EXEC_MOCK ? "the mock compiler" : "atc");
        sg_free(prefix);
        return st;
    }
    size_t n = strlen(prefix) + 4;
    *om = sg_malloc(n);
    if (*om)
        snprintf(*om, n, "%s.om", prefix);
    sg_free(prefix);
    return *om ? SG_OK : oom(d);
}

static sg_status run_mock(const struct sg_verify_exec *t, const char *om_path, const char *dir,
                          const struct sg_verify_values *in, struct sg_verify_values *out,
                          struct sg_diag *d)
{
    sg_model *om = NULL;
    char *dumps = NULL;
    sg_status st = sg_model_load(om_path, NULL, &om, d);
    if (!st)
        st = mkdir_in(dir, "dumps", &dumps, d);
    if (!st) {
        struct sg_verify_values copy = *in; /* borrowed: sg_verify_run only reads it */
        struct sg_verify_run_opts ro = {.dump_dir = dumps,
                                        .dump = SG_DUMP_OUTPUTS,
                                        .threads = t->threads,
                                        .label = om_path,
                                        .max_loop_iterations = t->max_loop_iterations,
                                        .outputs = out};
        st = sg_verify_run(om, &ro, NULL, &copy, NULL, d);
    }
    sg_free(dumps);
    sg_model_free(om);
    return st;
}

sg_status sg_verify_exec_run(const struct sg_verify_exec *t, const char *model, sg_model *m,
                             const struct sg_verify_values *in, const char *dir,
                             const struct sg_verify_events *ev, struct sg_verify_values *out,
                             char **command, struct sg_diag *d)
{
    *command = NULL;
    char *om = NULL, *inputs = NULL, *outdir = NULL, *log = NULL;
    sg_status st = sg_verify_exec_check(t, d);
    if (st)
        return st;
    if (t->kind != SG_VERIFY_EXEC_CMD && (st = compile(t, model, dir, ev, &om, d)))
        goto out;
    if (t->kind == SG_VERIFY_EXEC_MOCK) {
        st = run_mock(t, om, dir, in, out, d);
        goto out;
    }
    const char *what = t->kind == SG_VERIFY_EXEC_CMD ? "target command" : "device command";
    if ((st = mkdir_in(dir, "inputs", &inputs, d)) || (st = mkdir_in(dir, "out", &outdir, d)) ||
        (st = write_inputs(in, inputs, d)))
        goto out;
    if (!(log = sg__verify_join(dir, "target.log")) ||
        !(*command =
              sg_verify_exec_fill(t->kind == SG_VERIFY_EXEC_CMD ? t->command : t->device_command,
                                  model, om, inputs, outdir))) {
        st = oom(d);
        goto out;
    }
    sg__verify_emit(ev, SG_VERIFY_NOTE, "running the %s: %s", what, *command);
    if ((st = run_shell(*command, log, t->timeout, what, d)))
        goto out;
    st = read_outputs(m, outdir, what, out, d);
out:
    if (st)
        sg_verify_values_clear(out);
    sg_free(om);
    sg_free(inputs);
    sg_free(outdir);
    sg_free(log);
    return st;
}
