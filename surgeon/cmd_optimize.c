/*
 * cmd_optimize.c - `surgeon optimize`: run a pipeline of passes over one
 * model or many (files and folders, mirrored under the output folder), in
 * parallel worker threads, one model per worker at a time. A model that
 * fails is reported and the others go on; results print in input order
 * whatever the number of workers, then a summary table.
 */
#include "cli.h"
#include "sg_alloc.h"
#include "sg_file.h"
#include "sg_io.h"
#include "sg_pass.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_optimize = {
    "optimize",
    "run a pipeline of rewrite passes over one model or folders of models",
    "usage: surgeon optimize IN... -o OUT [-c PIPELINE.yaml] [--pass NAME[:key=value,...]]...\n"
    "                        [-r] [-j N] [--evaluate] [--verify] [-q | -v]\n\n"
    "Run the passes in the order given (each -c adds all the steps of a YAML\n"
    "pipeline, each --pass one step) and save the result. IN may be model files\n"
    "and folders; with one model file OUT is the output file, otherwise OUT is a\n"
    "folder that mirrors the inputs (a folder's *.onnx files keep their relative\n"
    "paths, a file keeps its name). A model that fails is reported and the others\n"
    "go on. Outputs are written atomically and never over an input.\n\n"
    "  -o, --output OUT       output model or folder (not needed with --evaluate)\n"
    "  -c, --config FILE      YAML pipeline (schema in README.md)\n"
    "  -p, --pass SPEC        one pass: NAME or NAME:key=value,key=value\n"
    "  -r, --recursive        also take *.onnx files in subfolders of folder inputs\n"
    "  -j, --jobs N           models processed in parallel (default 1; 0: one per CPU)\n"
    "  --evaluate             change nothing: print which passes would change each model\n"
    "  --verify               verify the model after every pass (always before saving)\n"
    "  -q, --quiet            only the summary table\n"
    "  -v, --verbose          list every changed node (default: the first 10 per line)\n\n"
    "Exit status: 0 when every model is done, 1 when any failed, 2 on bad usage.\n"
    "'surgeon passes' lists the passes and their options.\n",
    run,
};

struct job {
    char *in, *out, *rel;
    /* results, written by the worker that took the job */
    bool done, ok;
    char error[SG_DIAG_MAX + 32];
    struct sg_run_report rep;
    size_t nodes_before, nodes_after;
    double seconds;
};

struct view {
    bool quiet, verbose, tty, evaluate;
    size_t failed;
};

struct batch {
    struct job *jobs;
    size_t n, cap;
    const struct sg_pipeline *pipeline;
    bool evaluate;
    /* A single model on a machine with a core to spare: verified on a
     * second thread while it is written. A batch keeps one thread per
     * model, as many at a time as -j says. */
    bool spare_core;
    pthread_mutex_t lock;
    size_t next;     /* next job to take */
    size_t finished; /* jobs done */
    size_t printed;  /* jobs whose results are printed (in input order) */
    struct view *view;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = sg_malloc(la + lb + 2);
    if (s) {
        memcpy(s, a, la);
        size_t k = la;
        if (la && a[la - 1] != '/')
            s[k++] = '/';
        memcpy(s + k, b, lb + 1);
    }
    return s;
}

static bool add_job(struct batch *b, const char *in, const char *rel)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        struct job *g = sg_realloc(b->jobs, cap * sizeof *g);
        if (!g)
            return false;
        b->jobs = g;
        b->cap = cap;
    }
    struct job *j = &b->jobs[b->n];
    memset(j, 0, sizeof *j);
    j->in = sg_strdup(in);
    j->rel = sg_strdup(rel);
    if (!j->in || !j->rel) {
        sg_free(j->in);
        sg_free(j->rel);
        return false;
    }
    b->n++;
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_onnx_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".onnx") == 0;
}

/* Add the *.onnx files of dir (relative paths from `prefix`), sorted. */
static bool scan_dir(struct batch *b, const char *dir, const char *prefix, bool recursive)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_error("cannot read folder '%s': %s", dir, strerror(errno));
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **g = sg_realloc(names, cap * sizeof *g);
            if (!g) {
                ok = false;
                break;
            }
            names = g;
        }
        if (!(names[n] = sg_strdup(e->d_name)))
            ok = false;
        else
            n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && ok; i++) {
        char *path = join(dir, names[i]);
        char *rel = *prefix ? join(prefix, names[i]) : sg_strdup(names[i]);
        struct stat st;
        if (!path || !rel)
            ok = false;
        else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (recursive)
                ok = scan_dir(b, path, rel, true);
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && has_onnx_suffix(names[i])) {
            ok = add_job(b, path, rel);
        }
        sg_free(path);
        sg_free(rel);
    }
    for (size_t i = 0; i < n; i++)
        sg_free(names[i]);
    sg_free(names);
    if (!ok)
        cli_error("out of memory listing '%s'", dir);
    return ok;
}

/* mkdir -p of the folder that will hold `path` (one stat when it exists,
 * as it does for all but the first model of a folder). */
static bool make_parents(const char *path, char *err, size_t errlen)
{
    char *p = sg_strdup(path);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    char *slash = strrchr(p, '/');
    struct stat st;
    if (!slash || slash == p) {
        sg_free(p);
        return true;
    }
    *slash = '\0';
    bool exists = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    *slash = '/';
    if (exists) {
        sg_free(p);
        return true;
    }
    bool ok = true;
    for (char *s = p + 1; *s && ok; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create folder '%s': %s", p, strerror(errno));
            ok = false;
        }
        *s = '/';
    }
    sg_free(p);
    return ok;
}

/* The verification of a rewritten model on a thread of its own, while the
 * model is being written (sg_save_opts.before_commit waits for it): the
 * verifier only writes the scratch marks, which the writer never reads. */
struct verify_job {
    sg_model *m;
    pthread_t thread;
    bool running;
    sg_status st;
    struct sg_diag d;
};

static void *verify_main(void *arg)
{
    struct verify_job *v = arg;
    v->st = sg_model_verify(v->m, &v->d);
    return NULL;
}

/* Start verifying v->m: on a thread of its own when `beside` and one can
 * be started, else right here. */
static void verify_start(struct verify_job *v, bool beside)
{
    v->running = beside && pthread_create(&v->thread, NULL, verify_main, v) == 0;
    if (!v->running)
        verify_main(v);
}

static sg_status verify_wait(void *arg, struct sg_diag *diag)
{
    struct verify_job *v = arg;
    if (v->running) {
        pthread_join(v->thread, NULL);
        v->running = false;
    }
    if (v->st)
        *diag = v->d;
    return v->st;
}

static void process(struct batch *b, struct job *j)
{
    double t0 = now();
    struct sg_diag d = {0};
    sg_model *m = NULL;
    sg_status st = sg_model_load(j->in, NULL, &m, &d);
    if (st) {
        snprintf(j->error, sizeof j->error, "%s", d.msg);
        goto out;
    }
    j->nodes_before = m->graph ? sg_graph_count_nodes(m->graph, true) : 0;
    j->rep.counts_only = b->view->quiet; /* -q prints no names */
    if ((st = sg_pipeline_run(b->pipeline, m, &j->rep, &d)) ||
        (b->evaluate && (st = sg_model_verify(m, &d)))) {
        snprintf(j->error, sizeof j->error, "%s", d.msg);
        goto out;
    }
    j->nodes_after = m->graph ? sg_graph_count_nodes(m->graph, true) : 0;
    if (!b->evaluate) {
        /* Always verified before it is saved; beside the writing, the
         * check decides whether the bytes are renamed into place. */
        struct verify_job v = {.m = m};
        struct sg_diag vd = {0};
        verify_start(&v, b->spare_core);
        if (!v.running && v.st) {
            snprintf(j->error, sizeof j->error, "%s", v.d.msg);
            goto out;
        }
        if (!make_parents(j->out, j->error, sizeof j->error)) {
            verify_wait(&v, &vd); /* joined before the model goes */
            goto out;
        }
        struct sg_save_opts so = {.before_commit = verify_wait, .before_commit_ctx = &v};
        st = sg_model_save(m, j->out, &so, &d);
        sg_status vst = verify_wait(&v, &vd);
        if (!st && vst) {
            st = vst;
            d = vd;
        }
        if (st) {
            snprintf(j->error, sizeof j->error, "%s", d.msg);
            goto out;
        }
    }
    j->ok = true;
out:
    sg_model_free(m);
    j->seconds = now() - t0;
}

static void print_job(struct view *v, const struct job *j)
{
    if (!j->ok) {
        cli_error("%s: %s", j->in, j->error);
        v->failed++;
        return;
    }
    if (v->quiet)
        return;
    if (v->evaluate)
        printf("%s: %zu change%s would be made\n", j->in, j->rep.changes,
               j->rep.changes == 1 ? "" : "s");
    else
        printf("%s -> %s: %zu change%s\n", j->in, j->out, j->rep.changes,
               j->rep.changes == 1 ? "" : "s");
    for (size_t i = 0; i < j->rep.n; i++) {
        if (v->evaluate && !j->rep.passes[i].changes)
            continue;
        sg_pass_report_print(&j->rep.passes[i], stdout, v->verbose ? 0 : 10);
    }
}

/* Take jobs until none is left. The thread that finishes a job prints the
 * results that are complete, in input order, and the progress line: no
 * thread waits on another, or wakes one on another core, per model. */
static void *worker(void *arg)
{
    struct batch *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        size_t k = b->next < b->n ? b->next++ : b->n;
        pthread_mutex_unlock(&b->lock);
        if (k >= b->n)
            return NULL;
        process(b, &b->jobs[k]);
        pthread_mutex_lock(&b->lock);
        b->jobs[k].done = true;
        b->finished++;
        if (b->view->tty)
            fputs("\r\033[K", stderr);
        for (; b->printed < b->n && b->jobs[b->printed].done; b->printed++)
            print_job(b->view, &b->jobs[b->printed]);
        fflush(stdout);
        if (b->view->tty && b->printed < b->n) {
            fprintf(stderr, "\r\033[K[%zu/%zu] %s", b->finished, b->n, b->jobs[b->printed].rel);
            fflush(stderr);
        }
        pthread_mutex_unlock(&b->lock);
    }
}

static void print_summary(struct batch *b, bool evaluate)
{
    size_t w = 5;
    for (size_t i = 0; i < b->n; i++)
        if (strlen(b->jobs[i].rel) > w)
            w = strlen(b->jobs[i].rel);
    if (w > 60)
        w = 60;
    printf("\n%-*s  %-6s  %7s  %-17s  %s\n", (int)w, "model", "status", "changes", "nodes",
           evaluate ? "time" : "time");
    size_t ok = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct job *j = &b->jobs[i];
        if (j->ok) {
            char nodes[48];
            snprintf(nodes, sizeof nodes, "%zu -> %zu", j->nodes_before, j->nodes_after);
            printf("%-*s  %-6s  %7zu  %-17s  %.2fs\n", (int)w, j->rel, "ok", j->rep.changes, nodes,
                   j->seconds);
            ok++;
        } else {
            printf("%-*s  %-6s  %7s  %-17s  %.2fs\n", (int)w, j->rel, "FAILED", "-", "-",
                   j->seconds);
        }
    }
    printf("%zu model%s: %zu ok, %zu failed%s\n", b->n, b->n == 1 ? "" : "s", ok, b->n - ok,
           evaluate ? " (evaluate: nothing written)" : "");
}

static int run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"config", required_argument, NULL, 'c'},
        {"pass", required_argument, NULL, 'p'},   {"recursive", no_argument, NULL, 'r'},
        {"jobs", required_argument, NULL, 'j'},   {"evaluate", no_argument, NULL, 'e'},
        {"verify", no_argument, NULL, 'V'},       {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},      {NULL, 0, NULL, 0},
    };
    struct sg_pipeline *p = NULL;
    struct batch b = {0};
    struct view view = {0};
    const char *out = NULL;
    bool recursive = false, verify = false;
    long jobs = 1;
    int rc = SG_EXIT_USAGE;
    struct sg_diag d = {0};
    if (sg_pipeline_create(&p)) {
        cli_error("out of memory");
        return SG_EXIT_FAIL;
    }
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:c:p:rj:qv", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'c':
            if (sg_pipeline_load_yaml(p, optarg, &d)) {
                cli_error("%s", d.msg);
                goto out;
            }
            break;
        case 'p':
            if (sg_pipeline_add_spec(p, optarg, &d)) {
                cli_usage(&sg_cmd_optimize, "--pass %s: %s", optarg, d.msg);
                goto out;
            }
            break;
        case 'r':
            recursive = true;
            break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || !*optarg || jobs < 0 || jobs > 256) {
                cli_usage(&sg_cmd_optimize, "bad -j '%s' (0 to 256)", optarg);
                goto out;
            }
            break;
        }
        case 'e':
            view.evaluate = b.evaluate = true;
            break;
        case 'V':
            verify = true;
            break;
        case 'q':
            view.quiet = true;
            break;
        case 'v':
            view.verbose = true;
            break;
        case ':':
            cli_usage(&sg_cmd_optimize, "option '%s' needs a value", argv[optind - 1]);
            goto out;
        default:
            cli_usage(&sg_cmd_optimize, "unknown option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (verify)
        p->verify = true;
    if (optind >= argc) {
        cli_usage(&sg_cmd_optimize, "missing IN");
        goto out;
    }
    if (!p->n_steps) {
        cli_usage(&sg_cmd_optimize, "no passes: give -c PIPELINE.yaml or --pass NAME");
        goto out;
    }
    if (!out && !b.evaluate) {
        cli_usage(&sg_cmd_optimize, "missing -o OUT");
        goto out;
    }
    /* Inputs: files keep their name, folders their *.onnx files' relative paths. */
    bool single_file = false;
    for (int i = optind; i < argc; i++) {
        struct stat st;
        const char *in = argv[i];
        if (stat(in, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!scan_dir(&b, in, "", recursive)) {
                rc = SG_EXIT_FAIL;
                goto out;
            }
        } else {
            const char *slash = strrchr(in, '/');
            if (!add_job(&b, in, slash ? slash + 1 : in)) {
                cli_error("out of memory");
                rc = SG_EXIT_FAIL;
                goto out;
            }
            single_file = argc - optind == 1;
        }
    }
    if (!b.n) {
        cli_error("no *.onnx models in the given folders%s", recursive ? "" : " (try -r)");
        rc = SG_EXIT_FAIL;
        goto out;
    }
    struct stat ost;
    bool out_is_dir =
        out && ((stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)) || out[strlen(out) - 1] == '/');
    for (size_t i = 0; i < b.n && out; i++) {
        struct job *j = &b.jobs[i];
        j->out = single_file && !out_is_dir ? sg_strdup(out) : join(out, j->rel);
        if (!j->out) {
            cli_error("out of memory");
            rc = SG_EXIT_FAIL;
            goto out;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(b.jobs[k].out, j->out) == 0) {
                cli_usage(&sg_cmd_optimize, "'%s' and '%s' would both be written to '%s'",
                          b.jobs[k].in, j->in, j->out);
                goto out;
            }
    }
    /* Every model of the batch is an input from the start: an output of
     * one may not replace another before it is read (the output guard). */
    for (size_t i = 0; i < b.n; i++)
        sg_file_guard_note(b.jobs[i].in);
    if (!jobs) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? cpus : 1;
    }
    if ((size_t)jobs > b.n)
        jobs = (long)b.n;
    b.spare_core = b.n == 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1;
    b.pipeline = p;
    view.tty = isatty(STDERR_FILENO);
    b.view = &view;
    pthread_mutex_init(&b.lock, NULL);
    if (view.tty && b.n) {
        fprintf(stderr, "[0/%zu] %s", b.n, b.jobs[0].rel);
        fflush(stderr);
    }
    /* This thread works too: jobs - 1 more (a thread that only waited
     * would be woken on the other core after every model). */
    pthread_t threads[256];
    long started = 0;
    for (; started < jobs - 1; started++)
        if (pthread_create(&threads[started], NULL, worker, &b) != 0)
            break;
    worker(&b);
    for (long t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    print_summary(&b, b.evaluate);
    rc = view.failed ? SG_EXIT_FAIL : SG_EXIT_OK;
    pthread_mutex_destroy(&b.lock);
out:
    for (size_t i = 0; i < b.n; i++) {
        sg_free(b.jobs[i].in);
        sg_free(b.jobs[i].out);
        sg_free(b.jobs[i].rel);
        sg_run_report_clear(&b.jobs[i].rep);
    }
    sg_free(b.jobs);
    sg_pipeline_free(p);
    return rc;
}
