/*
 * report.c - result_<timestamp>.csv in msit's columns and result.json with
 * the same rows plus the analysis; sg_compare_write_reports writes them and
 * report.html (report_html.c) atomically into a folder.
 *
 * CSV conventions (FORMATS.md): numbers with 6 decimals, NaN as "NaN" (an
 * infinity as "inf"/"-inf", as Python prints it); StandardDeviation as
 * "(mean;std),(mean;std)" with 3 decimals, target first; fields quoted only
 * when they hold a comma, a quote or a line break (Python's csv module).
 * Values not available are "NaN"; a side without a tensor is "*".
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_csv.h"
#include "sg_file.h"
#include "sg_dtype.h"
#include "sg_json.h"
#include "sg_tensorfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char sg_compare_csv_header[] =
    "Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,TensorIndex,Shape,OverFlow,"
    "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
    "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
    "MaxRelativeError,MeanRelativeError,CompareFailReason,IsNpuOps,IsOutputNode,"
    "IsPrecisionError";

const char *sg__cmp_fmt(double v, int decimals, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "NaN");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, "%.*f", decimals, v);
    return buf;
}

const char *sg__cmp_stddev(const struct sg_compare_row *row, char *buf, size_t size)
{
    if (row->status != SG_ROW_COMPARED || (row->m.flags & (SG_METRIC_BOOL | SG_METRIC_EMPTY))) {
        snprintf(buf, size, "NaN");
        return buf;
    }
    char a[48], b[48], c[48], d[48];
    snprintf(buf, size, "(%s;%s),(%s;%s)", sg__cmp_fmt(row->m.target_mean, 3, a, sizeof a),
             sg__cmp_fmt(row->m.target_std, 3, b, sizeof b),
             sg__cmp_fmt(row->m.golden_mean, 3, c, sizeof c),
             sg__cmp_fmt(row->m.golden_std, 3, d, sizeof d));
    return buf;
}

const char *sg__cmp_shape(const struct sg_compare_row *row, char *buf, size_t size)
{
    if (!row->has_shape) {
        snprintf(buf, size, "NaN");
        return buf;
    }
    size_t pos = (size_t)snprintf(buf, size, "[");
    for (uint32_t i = 0; i < row->rank && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, "%s%lld", i ? ", " : "",
                                (long long)row->dims[i]);
    if (pos < size)
        snprintf(buf + pos, size - pos, "]");
    return buf;
}

const char *sg__cmp_dtype(const struct sg_compare_row *row, bool target)
{
    /* The target side: the dtype the op wrote its output in (the map's),
     * which a dump converted to float32 no longer shows. */
    int32_t dt =
        target ? (row->compute_dtype ? row->compute_dtype : row->target_dtype) : row->golden_dtype;
    bool have = target ? row->target_file && dt : row->golden_file && dt;
    return have ? sg_dtype_name(dt) : "NaN";
}

/* "<op>:output:<i>", msit's TensorIndex. */
static void tensor_index(const struct sg_compare_row *row, char *buf, size_t size)
{
    const char *who = row->target_file || !row->golden_node ? row->target : row->golden_node;
    snprintf(buf, size, "%s:output:%" PRIu32, who, row->index);
}

void sg__cmp_metric_strings(const struct sg_compare_row *row, char cells[9][48])
{
    const double v[9] = {row->m.cosine, row->m.max_abs, row->m.accum_rel,
                         row->m.red,    row->m.kl,      row->m.mean_abs,
                         row->m.rmse,   row->m.max_rel, row->m.mean_rel};
    for (int k = 0; k < 9; k++)
        sg__cmp_fmt(row->status == SG_ROW_COMPARED ? v[k] : NAN, 6, cells[k], 48);
}

sg_status sg_compare_write_csv(const sg_compare_result *r, FILE *out)
{
    fprintf(out, "%s\n", sg_compare_csv_header);
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        char ti[1024], shape[1024], sd[256], cells[9][48];
        tensor_index(row, ti, sizeof ti);
        sg__cmp_shape(row, shape, sizeof shape);
        sg__cmp_stddev(row, sd, sizeof sd);
        sg__cmp_metric_strings(row, cells);
        bool compared = row->status == SG_ROW_COMPARED;
        fprintf(out, "%zu,", i);
        const char *fields[] = {
            row->op_type,
            row->target,
            sg__cmp_dtype(row, true),
            "NaN",
            row->golden,
            sg__cmp_dtype(row, false),
            ti,
            shape,
            compared ? (row->m.overflow ? "YES" : "NO") : "NaN",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            sd,
            cells[5],
            cells[6],
            cells[7],
            cells[8],
            row->reason,
            strcmp(row->golden, "*") == 0 ? "YES" : "NO",
            row->is_output ? "YES" : "NO",
            row->is_error || row->mismatch ? "YES" : "NO",
        };
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
            if (k)
                fputc(',', out);
            sg_csv_field(out, fields[k]);
        }
        fputc('\n', out);
    }
    return ferror(out) ? SG_EIO : SG_OK;
}

/* ------------------------------------------------------------------ JSON */

static void json_metrics(struct sg_json *j, const struct sg_compare_row *row)
{
    const struct sg_metrics *m = &row->m;
    bool c = row->status == SG_ROW_COMPARED;
    const char *names[9] = {
        "CosineSimilarity",          "MaxAbsoluteError",          "AccumulatedRelativeError",
        "RelativeEuclideanDistance", "KullbackLeiblerDivergence", "MeanAbsoluteError",
        "RootMeanSquareError",       "MaxRelativeError",          "MeanRelativeError"};
    const double v[9] = {m->cosine,   m->max_abs, m->accum_rel, m->red,     m->kl,
                         m->mean_abs, m->rmse,    m->max_rel,   m->mean_rel};
    for (int k = 0; k < 9; k++) {
        sg_json_key(j, names[k]);
        sg_json_double(j, c ? v[k] : NAN);
    }
}

static void json_row(struct sg_json *j, const sg_compare_result *r, size_t i)
{
    const struct sg_compare_row *row = &r->rows[i];
    char ti[1024], sd[256];
    tensor_index(row, ti, sizeof ti);
    sg__cmp_stddev(row, sd, sizeof sd);
    bool compared = row->status == SG_ROW_COMPARED;
    sg_json_object_begin(j);
    sg_json_key(j, "Index");
    sg_json_int(j, (int64_t)i);
    sg_json_key(j, "OpType");
    sg_json_string(j, row->op_type);
    sg_json_key(j, "NPUDump");
    sg_json_string(j, row->target);
    sg_json_key(j, "NPUDumpDataType");
    sg_json_string(j, sg__cmp_dtype(row, true));
    sg_json_key(j, "Address");
    sg_json_string(j, "NaN");
    sg_json_key(j, "GroundTruth");
    sg_json_string(j, row->golden);
    sg_json_key(j, "GroundTruthDataType");
    sg_json_string(j, sg__cmp_dtype(row, false));
    sg_json_key(j, "TensorIndex");
    sg_json_string(j, ti);
    sg_json_key(j, "Shape");
    if (row->has_shape) {
        sg_json_array_begin(j);
        for (uint32_t k = 0; k < row->rank; k++)
            sg_json_int(j, row->dims[k]);
        sg_json_array_end(j);
    } else {
        sg_json_null(j);
    }
    sg_json_key(j, "OverFlow");
    if (compared)
        sg_json_bool(j, row->m.overflow > 0);
    else
        sg_json_null(j);
    json_metrics(j, row);
    sg_json_key(j, "StandardDeviation");
    sg_json_string(j, sd);
    sg_json_key(j, "CompareFailReason");
    sg_json_string(j, row->reason);
    sg_json_key(j, "IsNpuOps");
    sg_json_bool(j, strcmp(row->golden, "*") == 0);
    sg_json_key(j, "IsOutputNode");
    sg_json_bool(j, row->is_output);
    sg_json_key(j, "IsPrecisionError");
    sg_json_bool(j, row->is_error || row->mismatch);
    /* Beyond the CSV columns. */
    sg_json_key(j, "status");
    sg_json_string(j, sg_compare_status_name(row->status));
    sg_json_key(j, "position");
    if (row->position == UINT32_MAX)
        sg_json_null(j);
    else
        sg_json_int(j, row->position);
    sg_json_key(j, "golden_node");
    sg_json_string(j, row->golden_node);
    sg_json_key(j, "output_index");
    sg_json_int(j, row->index);
    sg_json_key(j, "fused");
    sg_json_bool(j, row->fused);
    sg_json_key(j, "target_file_dtype");
    sg_json_string(j,
                   row->target_file && row->target_dtype ? sg_dtype_name(row->target_dtype) : NULL);
    char crossed[512];
    sg_metrics_crossed_text(&row->m, &r->thresholds, row->crossed, crossed, sizeof crossed);
    sg_json_key(j, "crossed");
    sg_json_string(j, crossed);
    sg_json_key(j, "within_rounding");
    sg_json_bool(j, row->within_rounding);
    if (row->has_rounding) {
        sg_json_key(j, "rounding");
        sg_json_object_begin(j);
        sg_json_key(j, "dtype");
        sg_json_string(j, sg_dtype_name(row->compute_dtype));
        sg_json_key(j, "CosineSimilarity");
        sg_json_double(j, row->rounding.cosine);
        sg_json_key(j, "RelativeEuclideanDistance");
        sg_json_double(j, row->rounding.red);
        sg_json_key(j, "KullbackLeiblerDivergence");
        sg_json_double(j, row->rounding.kl);
        sg_json_key(j, "RootMeanSquareError");
        sg_json_double(j, row->rounding.rmse);
        sg_json_key(j, "MeanRelativeError");
        sg_json_double(j, row->rounding.mean_rel);
        sg_json_object_end(j);
    }
    sg_json_key(j, "target_file");
    sg_json_string(j, row->target_file ? row->target_file->path : NULL);
    sg_json_key(j, "golden_file");
    sg_json_string(j, row->golden_file ? row->golden_file->path : NULL);
    sg_json_key(j, "elements");
    if (compared)
        sg_json_int(j, (int64_t)row->m.n);
    else
        sg_json_null(j);
    sg_json_key(j, "overflow_elements");
    if (compared)
        sg_json_int(j, (int64_t)row->m.overflow);
    else
        sg_json_null(j);
    sg_json_key(j, "severity");
    if (compared)
        sg_json_double(j, sg_metrics_severity(&row->m, &r->thresholds));
    else
        sg_json_null(j);
    sg_json_object_end(j);
}

static void json_strings(struct sg_json *j, const char *key, const char *const *list, size_t n)
{
    sg_json_key(j, key);
    sg_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        sg_json_string(j, list[i]);
    sg_json_array_end(j);
}

void sg__cmp_time(time_t when, char *buf, size_t size, bool compact)
{
    struct tm tm;
    localtime_r(&when, &tm);
    strftime(buf, size, compact ? "%Y%m%d%H%M%S" : "%Y-%m-%dT%H:%M:%S%z", &tm);
}

sg_status sg_compare_write_json(const sg_compare_result *r, time_t when, FILE *out)
{
    const struct sg_compare_analysis *an = &r->analysis;
    struct sg_json j;
    char ts[64];
    sg__cmp_time(when, ts, sizeof ts, false);
    sg_json_init(&j, out, true);
    sg_json_object_begin(&j);
    sg_json_key(&j, "tool");
    sg_json_string(&j, "surgeon compare");
    sg_json_key(&j, "format_version");
    sg_json_int(&j, 1);
    sg_json_key(&j, "created");
    sg_json_string(&j, ts);
    sg_json_key(&j, "golden_dir");
    sg_json_string(&j, r->golden_dir);
    sg_json_key(&j, "target_dir");
    sg_json_string(&j, r->target_dir);
    sg_json_key(&j, "map");
    sg_json_string(&j, r->map_path);
    sg_json_key(&j, "model");
    sg_json_string(&j, r->model_label);
    sg_json_key(&j, "thresholds");
    sg_json_object_begin(&j);
    sg_json_key(&j, "CosineSimilarity");
    sg_json_double(&j, r->thresholds.cosine);
    sg_json_key(&j, "RelativeEuclideanDistance");
    sg_json_double(&j, r->thresholds.red);
    sg_json_key(&j, "KullbackLeiblerDivergence");
    sg_json_double(&j, r->thresholds.kl);
    sg_json_key(&j, "RootMeanSquareError");
    sg_json_double(&j, r->thresholds.rmse);
    sg_json_key(&j, "MeanRelativeError");
    sg_json_double(&j, r->thresholds.mre);
    sg_json_key(&j, "RootMeanSquareError/std(golden)");
    sg_json_double(&j, r->thresholds.rmse_relative);
    sg_json_key(&j, "MeanRelativeErrorFloor");
    sg_json_double(&j, r->thresholds.mre_floor);
    sg_json_object_end(&j);

    sg_json_key(&j, "verdict");
    sg_json_string(&j, sg_verdict_name(an->verdict));
    sg_json_key(&j, "counts");
    sg_json_object_begin(&j);
    const struct {
        const char *k;
        size_t v;
    } counts[] = {
        {"rows", r->n_rows},
        {"compared", an->n_compared},
        {"precision_errors", an->n_errors},
        {"overflow", an->n_overflow},
        {"shape_mismatch", an->n_mismatch},
        {"not_comparable", an->n_failed},
        {"unreadable", an->n_unreadable},
        {"golden_only", an->n_golden_only},
        {"target_only", an->n_target_only},
        {"fused_away", an->n_fused_away},
        {"network_outputs", an->n_outputs},
        {"network_outputs_failed", an->n_outputs_failed},
        {"network_outputs_missing", an->n_outputs_missing},
        {"network_outputs_golden_not_finite", an->n_outputs_golden_nonfinite},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        sg_json_key(&j, counts[i].k);
        sg_json_int(&j, (int64_t)counts[i].v);
    }
    sg_json_object_end(&j);

    sg_json_key(&j, "analysis");
    sg_json_object_begin(&j);
    sg_json_key(&j, "outputs_known");
    sg_json_bool(&j, an->outputs_known);
    sg_json_key(&j, "summary");
    sg_json_string(&j, an->summary);
    sg_json_key(&j, "golden_not_finite");
    if (an->golden_nonfinite < 0) {
        sg_json_null(&j);
    } else {
        const struct sg_compare_row *row = &r->rows[an->golden_nonfinite];
        sg_json_object_begin(&j);
        sg_json_key(&j, "row");
        sg_json_int(&j, an->golden_nonfinite);
        sg_json_key(&j, "golden_node");
        sg_json_string(&j, row->golden_node ? row->golden_node : row->golden);
        sg_json_key(&j, "OpType");
        sg_json_string(&j, row->op_type);
        sg_json_key(&j, "position");
        sg_json_int(&j, row->position == UINT32_MAX ? -1 : (int64_t)row->position);
        sg_json_key(&j, "values");
        sg_json_int(&j, (int64_t)row->golden_nonfinite);
        sg_json_key(&j, "network_outputs");
        sg_json_int(&j, (int64_t)an->n_outputs_golden_nonfinite);
        sg_json_object_end(&j);
    }
    sg_json_key(&j, "first_failing");
    if (an->first_fail < 0) {
        sg_json_null(&j);
    } else {
        const struct sg_compare_row *row = &r->rows[an->first_fail];
        sg_json_object_begin(&j);
        sg_json_key(&j, "row");
        sg_json_int(&j, an->first_fail);
        sg_json_key(&j, "NPUDump");
        sg_json_string(&j, row->target);
        sg_json_key(&j, "GroundTruth");
        sg_json_string(&j, row->golden);
        sg_json_key(&j, "golden_node");
        sg_json_string(&j, row->golden_node);
        sg_json_key(&j, "OpType");
        sg_json_string(&j, row->op_type);
        sg_json_key(&j, "position");
        sg_json_int(&j, row->position == UINT32_MAX ? -1 : (int64_t)row->position);
        sg_json_key(&j, "cause");
        sg_json_string(&j, sg_cause_name(an->cause));
        sg_json_key(&j, "overflow");
        sg_json_bool(&j, an->overflow);
        sg_json_key(&j, "fused");
        sg_json_bool(&j, an->fused);
        if (row->op) {
            json_strings(&j, "fusion_passes", (const char *const *)row->op->passes,
                         row->op->n_passes);
            sg_json_key(&j, "ub_fusion_pass");
            sg_json_string(&j, row->op->ub_pass);
        }
        sg_json_key(&j, "input_severity");
        sg_json_double(&j, an->input_severity);
        sg_json_key(&j, "inputs");
        sg_json_array_begin(&j);
        for (size_t i = 0; i < an->n_inputs; i++) {
            const struct sg_compare_input *in = &an->inputs[i];
            sg_json_object_begin(&j);
            sg_json_key(&j, "value");
            sg_json_string(&j, in->value);
            sg_json_key(&j, "state");
            sg_json_string(&j, sg_input_state_name(in->state));
            sg_json_key(&j, "row");
            if (in->row < 0)
                sg_json_null(&j);
            else
                sg_json_int(&j, in->row);
            if (in->row >= 0)
                json_metrics(&j, &r->rows[in->row]);
            sg_json_object_end(&j);
        }
        sg_json_array_end(&j);
        json_strings(&j, "hidden_nodes", an->hidden, an->n_hidden);
        sg_json_key(&j, "undumped_nodes");
        sg_json_int(&j, (int64_t)an->n_undumped);
        sg_json_key(&j, "metrics");
        sg_json_object_begin(&j);
        json_metrics(&j, row);
        sg_json_object_end(&j);
        sg_json_object_end(&j);
    }
    json_strings(&j, "advice", an->advice, an->n_advice);
    json_strings(&j, "notes", an->notes, an->n_notes);
    sg_json_object_end(&j);

    sg_json_key(&j, "columns");
    sg_json_array_begin(&j);
    const char *h = sg_compare_csv_header;
    while (*h) {
        const char *comma = strchr(h, ',');
        size_t len = comma ? (size_t)(comma - h) : strlen(h);
        sg_json_string_n(&j, h, len);
        h += len + (comma != NULL);
    }
    sg_json_array_end(&j);
    sg_json_key(&j, "rows");
    sg_json_array_begin(&j);
    for (size_t i = 0; i < r->n_rows; i++)
        json_row(&j, r, i);
    sg_json_array_end(&j);
    sg_json_object_end(&j);
    return ferror(out) ? SG_EIO : SG_OK;
}

/* ----------------------------------------------------------------- files */

static sg_status make_dirs(const char *dir, struct sg_diag *diag)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path)
        return sg_diag_set(diag, SG_EINVAL, "bad output folder '%s'", dir);
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return sg_diag_set(diag, SG_EIO, "%s: %s", path, strerror(errno));
        path[i] = c;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return sg_diag_set(diag, SG_EIO, "%s: not a folder", dir);
    return SG_OK;
}

typedef sg_status (*writer_fn)(const sg_compare_result *r, time_t when, FILE *out);

static sg_status csv_writer(const sg_compare_result *r, time_t when, FILE *out)
{
    (void)when;
    return sg_compare_write_csv(r, out);
}

struct report_job {
    const sg_compare_result *r;
    time_t when;
    writer_fn fn;
};

static sg_status write_job(FILE *out, void *ctx)
{
    const struct report_job *j = ctx;
    return j->fn(j->r, j->when, out);
}

/* Stream one report atomically: a failure never leaves a half-written
 * report behind. */
static sg_status write_one(const sg_compare_result *r, time_t when, const char *path, writer_fn fn,
                           struct sg_diag *diag)
{
    struct report_job j = {r, when, fn};
    return sg_file_write_atomic_with(path, write_job, &j, diag);
}

sg_status sg_compare_write_reports(const sg_compare_result *r, const char *dir, time_t when,
                                   char **csv_path, struct sg_diag *diag)
{
    if (csv_path)
        *csv_path = NULL;
    sg_status st = make_dirs(dir, diag);
    if (st)
        return st;
    char ts[32], path[4200];
    sg__cmp_time(when, ts, sizeof ts, true);
    snprintf(path, sizeof path, "%s/result_%s.csv", dir, ts);
    if ((st = write_one(r, when, path, csv_writer, diag)))
        return st;
    if (csv_path && !(*csv_path = sg_strdup(path)))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/result.json", dir);
    if ((st = write_one(r, when, path, sg_compare_write_json, diag)))
        goto fail;
    snprintf(path, sizeof path, "%s/report.html", dir);
    if ((st = write_one(r, when, path, sg_compare_write_html, diag)))
        goto fail;
    return SG_OK;
fail:
    if (csv_path) {
        sg_free(*csv_path);
        *csv_path = NULL;
    }
    return st;
}
