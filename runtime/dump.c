/*
 * dump.c - the dump writer (see sg_dump.h).
 */
#include "rt_impl.h"
#include "sg_alloc.h"
#include "sg_csv.h"
#include "sg_dump.h"
#include "sg_dumpname.h"
#include "sg_json.h"
#include "sg_mockom.h"
#include "strmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
    char *file; /* NULL: not written */
    char *node; /* the name used for the file */
    char *op_type;
    char *value; /* value name */
    uint32_t index;
    int32_t dtype, file_dtype;
    uint32_t rank;
    int64_t *dims;
    bool graph_output;
    bool is_input;
    int depth; /* 0: a main-graph node; else how deep in If/Loop/Scan bodies */
    char kind[32];
    uint64_t nan, inf;  /* NaN and +-Inf elements written (float tensors) */
    const sg_node *src; /* the node that made it (NULL for inputs); valid while the model is */
};

struct mapping {
    char *file;
    char *node;
};

/* The run of a body graph in progress: its iteration (since its owner last
 * finished) and an epoch that changes whenever a new run begins. */
struct body_run {
    uint64_t iteration;
    uint64_t epoch;
};

/* The last output observed of a node: in which epoch of its graph's run,
 * and which output. */
struct node_seen {
    uint64_t epoch;
    uint32_t index;
    bool any;
};

/* A tensor file waiting for the writer thread. The value is referenced
 * until the file is written (the runtime then cannot reuse its memory in
 * place); references are taken and dropped on the caller's thread only. */
struct job {
    struct job *next;
    char *path;
    sg_rt_value *v; /* referenced: the data written, unless conv */
    void *conv;     /* the dump's own conversion (dump_dtype), owned */
    struct sg_array a;
    size_t entry;      /* its entry in the writer's list */
    uint64_t nan, inf; /* NaN and +-Inf elements found while it was written */
};

/* Tensor files are written by a thread of the writer's own, so that the run
 * goes on while the kernel copies the bytes into files; at most
 * WRITE_AHEAD_BYTES wait at any time (the run blocks beyond that). */
#define WRITE_AHEAD_BYTES ((size_t)256 << 20)

struct writer {
    pthread_t thread;
    bool started, stop;
    bool inline_only; /* no thread could be started: files are written by the caller */
    pthread_mutex_t lock;
    pthread_cond_t work, done; /* a job was queued / a job was finished */
    struct job *head, *tail;   /* queued, oldest first */
    struct job *finished;      /* written (or dropped), for the caller to release */
    size_t pending_bytes;      /* queued and in progress */
    size_t pending_jobs;
    struct sg_diag err; /* the first write failure */
};

struct sg_dump {
    struct writer w;
    char *dir;
    enum sg_dump_mode mode;
    uint64_t last_ts;
    struct entry *e;
    size_t n, cap;
    struct mapping *map;
    size_t n_map, cap_map;
    size_t files;
    bool device;              /* device dump names */
    const sg_node *last_node; /* the node of the last observed output */
    uint64_t task;            /* its task number (device names) */
    sg_dump_names *names;     /* the names and file stems of the run's nodes */
    /* Which execution of each body is running (see body_iterations). */
    struct sg__ptrmap node_at, graph_at; /* node / body graph -> index below */
    struct node_seen *seen;
    size_t n_seen, cap_seen;
    struct body_run *runs;
    size_t n_runs, cap_runs;
};

sg_status sg_dump_create(const char *dir, enum sg_dump_mode mode, sg_dump **out,
                         struct sg_diag *diag)
{
    *out = NULL;
    if ((unsigned)mode >= SG_DUMP_MODE_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "unknown dump mode %d", (int)mode);
    sg_dump *d = sg_calloc(1, sizeof *d);
    if (!d || !(d->dir = sg_strdup(dir))) {
        sg_free(d);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    d->mode = mode;
    pthread_mutex_init(&d->w.lock, NULL);
    pthread_cond_init(&d->w.work, NULL);
    pthread_cond_init(&d->w.done, NULL);
    *out = d;
    return SG_OK;
}

/* ------------------------------------------------------------ the writer */

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->lock);
        struct job *j = w->head;
        if (!j)
            break; /* stopping, nothing left */
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        /* After a failure or when stopping, the rest is dropped: the run
         * fails and its folder goes. */
        bool write = !w->err.status && !w->stop;
        pthread_mutex_unlock(&w->lock);
        struct sg_diag diag = {0};
        sg_status st = write ? sg_npy_write_new(j->path, &j->a, &diag) : SG_OK;
        if (write)
            sg_array_count_nonfinite(&j->a, &j->nan, &j->inf);
        pthread_mutex_lock(&w->lock);
        if (st && !w->err.status)
            w->err = diag;
        w->pending_bytes -= j->a.nbytes;
        w->pending_jobs--;
        j->next = w->finished;
        w->finished = j;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void job_free(struct job *j)
{
    sg_rt_value_unref(j->v);
    sg_free(j->conv);
    sg_free(j->path);
    sg_free(j);
}

/* Release the finished jobs (their value references), noting what each
 * found in its entry of e[0..n); caller holds the lock. */
static void release_finished(struct writer *w, struct entry *e, size_t n)
{
    struct job *j = w->finished;
    w->finished = NULL;
    while (j) {
        struct job *next = j->next;
        if (j->entry < n) {
            e[j->entry].nan = j->nan;
            e[j->entry].inf = j->inf;
        }
        job_free(j);
        j = next;
    }
}

/* Queue j, waiting while too much is pending; starts the thread on first
 * use. Without a thread (it could not be created) the file is written
 * here. Takes ownership of j. */
static sg_status writer_queue(sg_dump *d, struct job *j, struct sg_diag *diag)
{
    struct writer *w = &d->w;
    if (!w->started && !w->inline_only) {
        w->started = pthread_create(&w->thread, NULL, writer_main, w) == 0;
        w->inline_only = !w->started; /* not tried again for every file */
    }
    if (w->inline_only) {
        sg_status st = sg_npy_write_new(j->path, &j->a, diag);
        if (!st && j->entry < d->n)
            sg_array_count_nonfinite(&j->a, &d->e[j->entry].nan, &d->e[j->entry].inf);
        job_free(j);
        return st;
    }
    pthread_mutex_lock(&w->lock);
    while (w->pending_jobs && w->pending_bytes + j->a.nbytes > WRITE_AHEAD_BYTES && !w->err.status)
        pthread_cond_wait(&w->done, &w->lock);
    release_finished(w, d->e, d->n);
    sg_status st = w->err.status;
    if (st) {
        *diag = w->err;
        pthread_mutex_unlock(&w->lock);
        job_free(j);
        return st;
    }
    j->next = NULL;
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    w->pending_bytes += j->a.nbytes;
    w->pending_jobs++;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    return SG_OK;
}

sg_status sg_dump_flush(sg_dump *d, struct sg_diag *diag)
{
    struct writer *w = &d->w;
    if (!w->started)
        return SG_OK;
    pthread_mutex_lock(&w->lock);
    while (w->pending_jobs)
        pthread_cond_wait(&w->done, &w->lock);
    release_finished(w, d->e, d->n);
    sg_status st = w->err.status;
    if (st)
        *diag = w->err;
    pthread_mutex_unlock(&w->lock);
    return st;
}

/* Stop the thread: what is queued is dropped, not written. */
static void writer_stop(struct writer *w)
{
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
        w->started = false;
    }
    release_finished(w, NULL, 0);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
}

static void entry_free(struct entry *e)
{
    sg_free(e->file);
    sg_free(e->node);
    sg_free(e->op_type);
    sg_free(e->value);
    sg_free(e->dims);
}

static uint64_t next_timestamp(sg_dump *d);

void sg_dump_set_device_names(sg_dump *d, bool on)
{
    d->device = on;
}

/* The device dump name of output `index` of n; true when the op name had
 * to be shortened (then listed in mapping.csv). */
static bool device_name(sg_dump *d, const sg_node *n, const char *node, uint32_t index, char *file,
                        size_t size)
{
    char type[128];
    sg_mockom_op_type(n, type, sizeof type);
    if (n != d->last_node) {
        d->last_node = n;
        d->task++;
    }
    uint64_t ts = next_timestamp(d);
    if (sg_dump_device_name(type, node, d->task, 0, ts, false, index, file, size))
        return false;
    /* Too long: a readable prefix of the name and a hash of all of it. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = node; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    char short_name[SG_DUMP_NAME_MAX + 1];
    snprintf(short_name, sizeof short_name, "%.120s_%016llx", node, (unsigned long long)h);
    sg_dump_device_name(type, short_name, d->task, 0, ts, false, index, file, size);
    return true;
}

void sg_dump_free(sg_dump *d)
{
    if (!d)
        return;
    writer_stop(&d->w);
    for (size_t i = 0; i < d->n; i++)
        entry_free(&d->e[i]);
    for (size_t i = 0; i < d->n_map; i++) {
        sg_free(d->map[i].file);
        sg_free(d->map[i].node);
    }
    sg_free(d->e);
    sg_free(d->map);
    sg_free(d->dir);
    sg_dump_names_free(d->names);
    sg__ptrmap_free(&d->node_at);
    sg__ptrmap_free(&d->graph_at);
    sg_free(d->seen);
    sg_free(d->runs);
    sg_free(d);
}

size_t sg_dump_count(const sg_dump *d)
{
    return d->files;
}

/* NaN and Inf of value v as the run saw it: its dump entry (a node output
 * or an input) through `by_value`, else its initializer's data; 0 when
 * neither says (taken as finite: no evidence otherwise). */
static void value_counts(const struct sg__strmap *by_value, const sg_value *v, uint64_t *nan,
                         uint64_t *inf)
{
    *nan = *inf = 0;
    const struct entry *f = sg__strmap_get(by_value, v->name);
    if (f) {
        *nan = f->nan;
        *inf = f->inf;
        return;
    }
    sg_value_count_nonfinite(v->graph ? v->graph->model : NULL, v, nan, inf);
}

void sg_dump_nonfinite(const sg_dump *d, struct sg_dump_nonfinite *out)
{
    memset(out, 0, sizeof *out);
    struct sg__strmap by_value = {0};
    bool map = true;
    for (size_t i = 0; i < d->n && map; i++)
        if (d->e[i].value && !sg__strmap_get(&by_value, d->e[i].value))
            map = sg__strmap_put(&by_value, d->e[i].value, &d->e[i]) == SG_OK;
    /* Where they began: the first node that makes NaN/Inf out of finite
     * inputs (an overflow, a division by zero), else (every NaN/Inf starts
     * from a constant's, such as a mask of -inf) the first that makes NaN
     * out of inputs without NaN, else the first that holds any. */
    const struct entry *from_finite = NULL, *nan_from_none = NULL, *first = NULL;
    for (size_t i = 0; i < d->n; i++) {
        const struct entry *e = &d->e[i];
        uint64_t bad = e->nan + e->inf;
        if (e->is_input) {
            if (bad && !out->input)
                out->input = e->value;
            continue;
        }
        if (!bad)
            continue;
        out->n_tensors++;
        if (e->graph_output) {
            out->n_outputs++;
            if (!out->output) {
                out->output = e->value;
                out->output_count = bad;
            }
        }
        if (!first)
            first = e;
        if (!map || !e->src || (from_finite && nan_from_none))
            continue;
        bool finite = true, no_nan = true;
        for (uint32_t k = 0; k < e->src->n_inputs; k++) {
            const sg_value *v = e->src->inputs[k];
            uint64_t nan, inf;
            if (!v)
                continue;
            value_counts(&by_value, v, &nan, &inf);
            finite &= nan + inf == 0;
            no_nan &= nan == 0;
        }
        if (finite && !from_finite)
            from_finite = e;
        if (e->nan && no_nan && !nan_from_none)
            nan_from_none = e;
    }
    sg__strmap_free(&by_value);
    const struct entry *o = from_finite ? from_finite : nan_from_none ? nan_from_none : first;
    if (o) {
        out->node = o->node;
        out->op_type = o->op_type;
        out->index = o->index;
        out->nan = o != from_finite && o == nan_from_none;
        out->from_finite = o == from_finite;
        out->count = out->nan ? o->nan : o->nan + o->inf;
    }
}

static uint64_t next_timestamp(sg_dump *d)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    if (us <= d->last_ts)
        us = d->last_ts + 1; /* unique even within one microsecond */
    d->last_ts = us;
    return us;
}

static char *dup_or_null(const char *s, bool *fail)
{
    if (!s)
        return NULL;
    char *p = sg_strdup(s);
    if (!p)
        *fail = true;
    return p;
}

static struct entry *new_entry(sg_dump *d)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        struct entry *grown = sg_realloc(d->e, cap * sizeof *grown);
        if (!grown)
            return NULL;
        d->e = grown;
        d->cap = cap;
    }
    struct entry *e = &d->e[d->n];
    memset(e, 0, sizeof *e);
    return e;
}

/*
 * The dtype a dump of `dtype` is written in: numpy has no bfloat16, float8
 * or float4, whose values float32 holds exactly, nor 4-bit integers, which
 * int8 / uint8 hold; every other type as it is. (Inputs keep their type,
 * as ml_dtypes writes it, so that they read back as the same input.)
 */
static int32_t dump_dtype(int32_t dtype)
{
    if (dtype == SG_DTYPE_BFLOAT16 || sg_dtype_is_float8(dtype) || dtype == SG_DTYPE_FLOAT4E2M1)
        return SG_DTYPE_FLOAT;
    if (dtype == SG_DTYPE_INT4)
        return SG_DTYPE_INT8;
    if (dtype == SG_DTYPE_UINT4)
        return SG_DTYPE_UINT8;
    return dtype;
}

/* Queue tensor v for dir/file as .npy (path is taken over); sets
 * e->file_dtype and counts the file. A value numpy cannot hold is skipped
 * (file stays NULL). `as_is`: in v's own dtype (an input), else in
 * dump_dtype's. */
static sg_status write_npy(sg_dump *d, char *path, const sg_rt_value *v, struct entry *e,
                           bool as_is, struct sg_diag *diag)
{
    if (v->kind != SG_RT_TENSOR || v->dtype == SG_DTYPE_STRING || !*sg_dtype_npy_descr(v->dtype)) {
        sg_free(path);
        return SG_OK;
    }
    struct job *j = sg_calloc(1, sizeof *j);
    if (!j) {
        sg_free(path);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    j->path = path;
    j->a = (struct sg_array){.dtype = v->dtype, .rank = v->rank, .data = v->data};
    memcpy(j->a.dims, v->dims, v->rank * sizeof *v->dims);
    j->a.nbytes = (size_t)v->numel * sg_rt_elem_size(v->dtype);
    int32_t to = as_is ? v->dtype : dump_dtype(v->dtype);
    if (to == SG_DTYPE_FLOAT && v->dtype != SG_DTYPE_FLOAT) {
        float *f = sg_malloc((size_t)v->numel * sizeof *f + 1);
        if (!(j->conv = f)) {
            job_free(j);
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        }
        for (int64_t i = 0; i < v->numel; i++)
            f[i] = (float)sg_rt_get_f64(v, i);
        j->a.dtype = SG_DTYPE_FLOAT;
        j->a.data = j->conv;
        j->a.nbytes = (size_t)v->numel * sizeof *f;
    } else if (to != v->dtype) {
        /* uint4 / int4: one byte each already, in the range of the wider type. */
        j->a.dtype = to;
        j->v = sg_rt_value_ref((sg_rt_value *)v);
    } else {
        /* The observer contract gives a const value; the reference only
         * keeps it alive (and not exclusive) until it is written. */
        j->v = sg_rt_value_ref((sg_rt_value *)v);
    }
    e->file_dtype = j->a.dtype;
    j->entry = (size_t)(e - d->e);
    sg_status st = writer_queue(d, j, diag);
    if (!st)
        d->files++;
    return st;
}

static sg_status fill_shape(struct entry *e, const sg_rt_value *v)
{
    e->dtype = v ? v->dtype : SG_DTYPE_UNDEFINED;
    snprintf(e->kind, sizeof e->kind, "%s",
             !v                          ? "none"
             : v->kind == SG_RT_SEQUENCE ? "sequence"
             : v->kind == SG_RT_OPTIONAL ? "optional"
                                         : "tensor");
    if (!v || v->kind != SG_RT_TENSOR)
        return SG_OK;
    e->rank = v->rank;
    e->dims = sg_malloc((v->rank + 1) * sizeof *e->dims);
    if (!e->dims)
        return SG_ENOMEM;
    memcpy(e->dims, v->dims, v->rank * sizeof *v->dims);
    return SG_OK;
}

/* The seen-state of node n and the run of body graph g (created on first
 * use); NULL when out of memory. */
static struct node_seen *seen_of(sg_dump *d, const sg_node *n)
{
    uint32_t k = sg__ptrmap_get(&d->node_at, n);
    if (k != UINT32_MAX)
        return &d->seen[k];
    if (d->n_seen == d->cap_seen) {
        size_t cap = d->cap_seen ? 2 * d->cap_seen : 64;
        struct node_seen *grown = sg_realloc(d->seen, cap * sizeof *grown);
        if (!grown)
            return NULL;
        d->seen = grown;
        d->cap_seen = cap;
    }
    if (sg__ptrmap_put(&d->node_at, n, (uint32_t)d->n_seen))
        return NULL;
    memset(&d->seen[d->n_seen], 0, sizeof *d->seen);
    return &d->seen[d->n_seen++];
}

static struct body_run *run_of(sg_dump *d, const sg_graph *g)
{
    uint32_t k = sg__ptrmap_get(&d->graph_at, g);
    if (k != UINT32_MAX)
        return &d->runs[k];
    if (d->n_runs == d->cap_runs) {
        size_t cap = d->cap_runs ? 2 * d->cap_runs : 16;
        struct body_run *grown = sg_realloc(d->runs, cap * sizeof *grown);
        if (!grown)
            return NULL;
        d->runs = grown;
        d->cap_runs = cap;
    }
    if (sg__ptrmap_put(&d->graph_at, g, (uint32_t)d->n_runs))
        return NULL;
    d->runs[d->n_runs] = (struct body_run){0, 1};
    return &d->runs[d->n_runs++];
}

static sg_status reset_body(sg_graph *g, void *ctx)
{
    struct body_run *r = run_of(ctx, g);
    if (!r)
        return SG_ENOMEM;
    r->iteration = 0;
    r->epoch++;
    return SG_OK;
}

/*
 * The iterations of the bodies around node n (outermost first, into iters,
 * room for SG_DUMP_MAX_NESTING), from the order outputs are observed in,
 * which the runtime keeps: a body runs its nodes in one order each time,
 * the owner's outputs come after its last run. So a body began a new run
 * when one of its nodes shows an output it already showed in this run, or
 * when a node of it that already finished in this run (an owner) runs its
 * body again; the iteration goes back to 0 once the owner finishes. The
 * observer notes both for every output (resets included), which is what
 * makes the names right for a body whose first node is itself an owner.
 */
#define SG_DUMP_MAX_NESTING 64
static sg_status body_iterations(sg_dump *d, const sg_node *n, uint32_t index, uint64_t *iters,
                                 uint32_t *n_iters)
{
    const sg_node *chain[SG_DUMP_MAX_NESTING + 1];
    uint32_t depth = 0;
    for (const sg_node *c = n; c && c->graph && c->graph->owner && depth < SG_DUMP_MAX_NESTING;
         c = c->graph->owner)
        chain[depth++] = c; /* chain[k] lies in a body; chain[k]'s owner is chain[k+1] */
    *n_iters = 0;
    /* Outermost first: an owner already finished in this run of its body
     * means that body started over. */
    for (uint32_t k = depth; k-- > 0;) {
        const sg_node *c = chain[k];
        struct body_run *r = run_of(d, c->graph);
        struct node_seen *s = seen_of(d, c);
        if (!r || !s)
            return SG_ENOMEM;
        bool again = k > 0 ? s->any && s->epoch == r->epoch /* an owner, running again */
                           : s->any && s->epoch == r->epoch && index <= s->index;
        if (again) {
            r->epoch++;
            r->iteration++;
        }
        if (k == 0) {
            s->any = true;
            s->epoch = r->epoch;
            s->index = index;
        }
    }
    for (uint32_t k = depth; k-- > 0;) {
        const sg_node *owner = chain[k]->graph->owner;
        bool it = strcmp(owner->op_type, "Loop") == 0 || strcmp(owner->op_type, "Scan") == 0 ||
                  strcmp(owner->op_type, "SequenceMap") == 0;
        if (it)
            iters[(*n_iters)++] = run_of(d, chain[k]->graph)->iteration;
    }
    return SG_OK;
}

/* An owner finished: its bodies start from iteration 0 next time (its own
 * place in its body's run was noted by body_iterations). */
static sg_status owner_done(sg_dump *d, const sg_node *n)
{
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a]->g || n->attrs[a]->n_graphs)
            return sg_node_for_each_subgraph((sg_node *)n, reset_body, d);
    return SG_OK;
}

void sg_dump_rt_opts(sg_dump *d, struct sg_rt_opts *opts)
{
    opts->on_output = sg_dump_observe;
    opts->observe_ctx = d;
    opts->observe_graph_outputs = d->mode == SG_DUMP_OUTPUTS;
    opts->observe_subgraphs = d->mode == SG_DUMP_ALL;
}

static sg_status observe_write(sg_dump *d, const sg_node *n, uint32_t index, const sg_rt_value *v,
                               int depth, bool is_output, const sg_value *out, const char *node,
                               const char *stem, bool listed, struct sg_diag *diag);

sg_status sg_dump_observe(const sg_node *n, uint32_t index, const sg_rt_value *v, int depth,
                          void *ctx, struct sg_diag *diag)
{
    sg_dump *d = ctx;
    const sg_value *out = index < n->n_outputs ? n->outputs[index] : NULL;
    bool is_output = depth == 0 && out && (out->flags & SG_VALUE_OUTPUT);
    if (d->mode == SG_DUMP_OUTPUTS && (depth != 0 || !is_output))
        return SG_OK;
    /* The names are made once, from the model of the first node seen. */
    if (!d->names && n->graph && n->graph->model) {
        sg_status st = sg_dump_names_create(n->graph->model, &d->names, diag);
        if (st)
            return st;
    }
    uint64_t iters[SG_DUMP_MAX_NESTING];
    uint32_t n_iters = 0;
    if (depth != 0) {
        if (!sg_dump_names_of(d->names, n))
            return SG_OK; /* inside the body of an op whose bodies are not dumped */
        if (body_iterations(d, n, index, iters, &n_iters))
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    if (d->mode == SG_DUMP_ALL && owner_done(d, n))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    if (!v)
        return SG_OK;
    bool listed = false;
    const char *node = sg_dump_names_of(d->names, n);
    const char *stem = sg_dump_names_stem(d->names, n, d->device, &listed);
    char *inst = NULL; /* a body node's instance name, then its stem */
    if (node && depth != 0) {
        /* Room for the iterations (20 digits and brackets each) and for a
         * stem's "_<k>". */
        size_t size = strlen(node) + 24 * (size_t)n_iters + 32;
        if (!(inst = sg_malloc(2 * size)))
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
        if (!sg_dump_names_instance(d->names, n, iters, d->device, inst, size, inst + size, size,
                                    &listed)) {
            sg_free(inst);
            return sg_diag_set(diag, SG_EINVAL, "%s: no dump name for this execution", node);
        }
        node = inst;
        stem = inst + size;
    }
    sg_status st = observe_write(d, n, index, v, depth, is_output, out, node, stem, listed, diag);
    sg_free(inst);
    return st;
}

/* Queue the file of output `index` of n, named node (stem in the file
 * name; listed: mapping.csv must give the name back), and note it. */
static sg_status observe_write(sg_dump *d, const sg_node *n, uint32_t index, const sg_rt_value *v,
                               int depth, bool is_output, const sg_value *out, const char *node,
                               const char *stem, bool listed, struct sg_diag *diag)
{
    if (!node)
        node = stem = n->name && *n->name ? n->name : n->op_type;
    char file[SG_DUMP_NAME_MAX + 1];
    bool mapped = d->device
                      ? device_name(d, n, stem, index, file, sizeof file)
                      : sg_dump_onnx_name(stem, false, index, next_timestamp(d), file, sizeof file);
    mapped |= listed;
    struct entry *e = new_entry(d);
    if (!e)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    bool fail = false;
    e->node = dup_or_null(node, &fail);
    e->op_type = dup_or_null(n->op_type, &fail);
    e->src = n;
    e->value = dup_or_null(out ? out->name : NULL, &fail);
    e->index = index;
    e->graph_output = is_output;
    e->depth = depth;
    e->file_dtype = SG_DTYPE_UNDEFINED;
    d->n++; /* from here on the entry is freed with the writer */
    if (fail || fill_shape(e, v))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    size_t len = strlen(d->dir) + strlen(file) + 2;
    char *path = sg_malloc(len);
    if (!path)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    snprintf(path, len, "%s/%s", d->dir, file);
    size_t before = d->files;
    sg_status st = write_npy(d, path, v, e, false, diag);
    if (st)
        return st;
    if (d->files > before && !(e->file = sg_strdup(file)))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    if (mapped && e->file) {
        if (d->n_map == d->cap_map) {
            size_t cap = d->cap_map ? d->cap_map * 2 : 8;
            struct mapping *grown = sg_realloc(d->map, cap * sizeof *grown);
            if (!grown)
                return sg_diag_set(diag, SG_ENOMEM, "out of memory");
            d->map = grown;
            d->cap_map = cap;
        }
        d->map[d->n_map].file = sg_strdup(file);
        d->map[d->n_map].node = sg_strdup(node);
        d->n_map++;
        if (!d->map[d->n_map - 1].file || !d->map[d->n_map - 1].node)
            return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    return SG_OK;
}

sg_status sg_dump_input(sg_dump *d, const char *name, const sg_rt_value *v, struct sg_diag *diag)
{
    char safe[SG_DUMP_NAME_MAX + 1], rel[SG_DUMP_NAME_MAX + 32];
    sg_dump_sanitize(name, safe, SG_DUMP_NAME_MAX - 16);
    /* Names that sanitize alike ("a.b", "a/b") must not share a file:
     * number the later ones. */
    for (unsigned n = 0;; n++) {
        if (n)
            snprintf(rel, sizeof rel, "inputs/%s_%u.npy", safe, n);
        else
            snprintf(rel, sizeof rel, "inputs/%s.npy", safe);
        bool clash = false;
        for (size_t i = 0; i < d->n; i++)
            clash |= d->e[i].is_input && d->e[i].file && strcmp(d->e[i].file, rel) == 0;
        if (!clash)
            break;
    }
    size_t len = strlen(d->dir) + sizeof rel + 2;
    char *path = sg_malloc(len);
    if (!path)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    snprintf(path, len, "%s/inputs", d->dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        sg_status st = sg_diag_set(diag, SG_EIO, "cannot create '%s': %s", path, strerror(errno));
        sg_free(path);
        return st;
    }
    snprintf(path, len, "%s/%s", d->dir, rel);
    struct entry *e = new_entry(d);
    if (!e) {
        sg_free(path);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    bool fail = false;
    e->value = dup_or_null(name, &fail);
    e->is_input = true;
    e->file_dtype = SG_DTYPE_UNDEFINED;
    d->n++;
    sg_status st = SG_OK;
    if (fail || fill_shape(e, v)) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
    } else {
        size_t before = d->files;
        st = write_npy(d, path, v, e, true, diag);
        path = NULL; /* taken by write_npy */
        if (!st && d->files > before) {
            d->files--; /* inputs are not dumps */
            if (!(e->file = sg_strdup(rel)))
                st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        }
    }
    sg_free(path);
    return st;
}

static void json_entry_common(struct sg_json *j, const struct entry *e)
{
    sg_json_key(j, "file");
    sg_json_string(j, e->file);
    sg_json_key(j, "kind");
    sg_json_string(j, e->kind);
    sg_json_key(j, "dtype");
    sg_json_string(j, sg_dtype_name(e->dtype));
    if (e->file && e->file_dtype != e->dtype) {
        sg_json_key(j, "file_dtype");
        sg_json_string(j, sg_dtype_name(e->file_dtype));
    }
    sg_json_key(j, "shape");
    if (e->dims) {
        sg_json_array_begin(j);
        for (uint32_t k = 0; k < e->rank; k++)
            sg_json_int(j, e->dims[k]);
        sg_json_array_end(j);
    } else {
        sg_json_null(j);
    }
}

/* Write dir/name through a temp file and rename. fn writes the content. */
static sg_status write_text(sg_dump *d, const char *name, void (*fn)(FILE *, void *), void *ctx,
                            struct sg_diag *diag)
{
    size_t len = strlen(d->dir) + strlen(name) + 16;
    char *path = sg_malloc(len), *tmp = sg_malloc(len);
    sg_status st = SG_OK;
    if (!path || !tmp) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(path, len, "%s/%s", d->dir, name);
    snprintf(tmp, len, "%s/.%s.tmp", d->dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        st = sg_diag_set(diag, SG_EIO, "cannot write '%s': %s", tmp, strerror(errno));
        goto out;
    }
    fn(f, ctx);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        st = sg_diag_set(diag, SG_EIO, "cannot write '%s': %s", path, strerror(errno));
        unlink(tmp);
    }
out:
    sg_free(path);
    sg_free(tmp);
    return st;
}

static void write_mapping(FILE *f, void *ctx)
{
    sg_dump *d = ctx;
    for (size_t i = 0; i < d->n_map; i++) {
        sg_csv_field(f, d->map[i].file);
        fputc(',', f);
        sg_csv_field(f, d->map[i].node);
        fputc('\n', f);
    }
}

struct manifest_ctx {
    sg_dump *d;
    const sg_rt *rt;
};

static void write_manifest(FILE *f, void *ctx)
{
    struct manifest_ctx *mc = ctx;
    sg_dump *d = mc->d;
    struct sg_json j;
    sg_json_init(&j, f, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "format");
    sg_json_string(&j, "surgeon-dump");
    sg_json_key(&j, "version");
    sg_json_int(&j, 1);
    sg_json_key(&j, "mode");
    sg_json_string(&j, d->mode == SG_DUMP_ALL ? "all" : "outputs");
    sg_json_key(&j, "tensors");
    sg_json_array_begin(&j);
    int64_t index = 0;
    for (size_t i = 0; i < d->n; i++) {
        const struct entry *e = &d->e[i];
        if (e->is_input)
            continue;
        sg_json_object_begin(&j);
        sg_json_key(&j, "index");
        sg_json_int(&j, index++);
        sg_json_key(&j, "node");
        sg_json_string(&j, e->node);
        sg_json_key(&j, "op_type");
        sg_json_string(&j, e->op_type);
        sg_json_key(&j, "output_index");
        sg_json_int(&j, e->index);
        sg_json_key(&j, "value");
        sg_json_string(&j, e->value);
        sg_json_key(&j, "depth");
        sg_json_int(&j, e->depth);
        json_entry_common(&j, e);
        sg_json_key(&j, "graph_output");
        sg_json_bool(&j, e->graph_output);
        sg_json_key(&j, "nan");
        sg_json_int(&j, (int64_t)e->nan);
        sg_json_key(&j, "inf");
        sg_json_int(&j, (int64_t)e->inf);
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_key(&j, "inputs");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < d->n; i++) {
        const struct entry *e = &d->e[i];
        if (!e->is_input)
            continue;
        sg_json_object_begin(&j);
        sg_json_key(&j, "name");
        sg_json_string(&j, e->value);
        json_entry_common(&j, e);
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_key(&j, "outputs");
    sg_json_array_begin(&j);
    for (uint32_t o = 0; mc->rt && o < sg_rt_n_outputs(mc->rt); o++) {
        const sg_value *gv = sg_rt_output_info(mc->rt, o);
        const char *file = NULL;
        for (size_t i = 0; i < d->n; i++)
            if (!d->e[i].is_input && d->e[i].graph_output && d->e[i].value &&
                strcmp(d->e[i].value, gv->name) == 0)
                file = d->e[i].file;
        sg_json_object_begin(&j);
        sg_json_key(&j, "name");
        sg_json_string(&j, gv->name);
        sg_json_key(&j, "file");
        sg_json_string(&j, file);
        sg_json_object_end(&j);
    }
    sg_json_array_end(&j);
    sg_json_object_end(&j);
}

sg_status sg_dump_finish(sg_dump *d, const sg_rt *rt, struct sg_diag *diag)
{
    sg_status st = sg_dump_flush(d, diag);
    if (st)
        return st;
    if (d->n_map && (st = write_text(d, "mapping.csv", write_mapping, d, diag)))
        return st;
    struct manifest_ctx mc = {d, rt};
    return write_text(d, "manifest.json", write_manifest, &mc, diag);
}
