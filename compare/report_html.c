/*
 * report_html.c - report.html: one self-contained page (no network, no
 * external files) with the verdict and summary, the first failing operator
 * with its inputs and the advice, an inline SVG plot of cosine similarity
 * and relative Euclidean distance against topological position (thresholds
 * drawn, failing nodes marked) and the table of rows with filters.
 *
 * Both plot panels use the same scale: the distance from a perfect match
 * (1 - cosine, or RED) divided by the threshold's distance, on
 * log10(1 + d): a perfect match sits on the top edge, the threshold at the
 * same height in both panels, and a tensor a thousand times past it still
 * fits. Tick labels are in the metric's own units.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_dtype.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void esc(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;"
    "color:#1d2733;background:#fafbfc}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}"
    ".meta{color:#5a6675;font-size:12px}.badge{display:inline-block;padding:3px 12px;"
    "border-radius:12px;font-weight:700;color:#fff;margin-right:10px}"
    ".PASS{background:#2e7d32}.FAIL{background:#c62828}.UNKNOWN{background:#b26a00}"
    ".GOLDEN_NOT_FINITE{background:#6a1b9a}.golden-bad{color:#6a1b9a;font-size:1.1em}"
    ".card{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:14px 18px;"
    "margin:12px 0}"
    "table{border-collapse:collapse;background:#fff}th,td{border:1px solid #dde3ea;"
    "padding:3px 7px;text-align:left;vertical-align:top}th{background:#eef2f6;position:sticky;"
    "top:0}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.err td{background:#fdecea}tr.ovf td{background:#f9d6d2}tr.first td{outline:2px solid "
    "#c62828}tr.side td{color:#6b7785}"
    ".counts td{border:none;padding:1px 14px 1px 0}ul{margin:6px 0 6px 18px;padding:0}"
    ".filters{margin:8px 0;display:flex;gap:14px;align-items:center;flex-wrap:wrap}"
    ".filters input[type=text]{width:260px;padding:3px 6px}"
    "svg text{font:11px system-ui,sans-serif;fill:#1d2733}.tableWrap{max-height:640px;"
    "overflow:auto;border:1px solid #dde3ea}code{background:#eef2f6;padding:0 3px}"
    "#rows{font-size:12px}#rows td{white-space:nowrap}#rows td.name,#rows td.why,#rows td.op{"
    "overflow:hidden;text-overflow:ellipsis}#rows td.name{max-width:140px}#rows td.gt{"
    "max-width:100px}#rows td.why{max-width:140px}#rows td.op{max-width:90px}"
    "td.crossed{color:#c62828;font-weight:700}";

static const char script[] =
    "(function(){var q=document.getElementById('f-text'),s=document.getElementById('f-status'),"
    "o=document.getElementById('f-output'),c=document.getElementById('f-count'),"
    "rows=document.querySelectorAll('#rows tbody tr');"
    "function apply(){var t=q.value.toLowerCase(),st=s.value,oo=o.checked,n=0;"
    "for(var i=0;i<rows.length;i++){var r=rows[i],d=r.dataset,ok=true;"
    "if(t&&d.names.indexOf(t)<0)ok=false;"
    "if(st==='error'&&d.error!=='1')ok=false;"
    "if(st==='compared'&&d.status!=='compared')ok=false;"
    "if(st==='oneside'&&['golden only','target only','fused away'].indexOf(d.status)<0)ok=false;"
    "if(st==='failed'&&d.status!=='failed')ok=false;"
    "if(oo&&d.output!=='1')ok=false;"
    "r.style.display=ok?'':'none';if(ok)n++;}"
    "c.textContent=n+' of '+rows.length+' rows';}"
    "q.addEventListener('input',apply);s.addEventListener('change',apply);"
    "o.addEventListener('change',apply);apply();})();";

/* ------------------------------------------------------------------ plot */

#define PW 1180.0 /* svg width */
#define ML 78.0   /* left margin */
#define MR 16.0
#define PH 190.0 /* panel height */
#define T1 34.0  /* top of panel 1 */
#define T2 (T1 + PH + 64.0)
#define SVG_H (T2 + PH + 46.0)

struct scale {
    double t;   /* the threshold's distance from a perfect match */
    double top; /* u at the panel's bottom edge */
};

static double to_u(double d, const struct scale *s)
{
    return log10(1.0 + fmax(d, 0) / s->t);
}

static double y_of(double u, const struct scale *s, double top)
{
    if (u > s->top)
        u = s->top;
    return top + u / s->top * PH;
}

/* The distance from a perfect match a metric shows. */
static double dist(const struct sg_compare_row *row, int panel)
{
    return panel == 0 ? 1.0 - row->m.cosine : row->m.red;
}

static void panel(FILE *out, const sg_compare_result *r, const size_t *idx, size_t n, int panel_no,
                  double top, ptrdiff_t first)
{
    const struct sg_thresholds *th = &r->thresholds;
    struct scale s = {.t = panel_no == 0 ? 1.0 - th->cosine : th->red};
    if (!(s.t > 0))
        s.t = 1e-6;
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        double d = dist(&r->rows[idx[k]], panel_no);
        if (isfinite(d))
            worst = fmax(worst, d);
    }
    s.top = fmax(to_u(worst, &s), log10(3.0)) * 1.08;
    double pw = PW - ML - MR;
    const char *title = panel_no == 0 ? "Cosine similarity" : "Relative Euclidean distance";
    fprintf(out, "<text x=\"%g\" y=\"%g\" style=\"font-weight:700;font-size:13px\">%s</text>\n", ML,
            top - 10, title);
    fprintf(
        out,
        "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#fff\" stroke=\"#b8c2cc\"/>\n",
        ML, top, pw, PH);
    /* Ticks in the metric's units. */
    static const double cos_ticks[] = {1.0, 0.999, 0.99, 0.9, 0.5, 0.0, -1.0};
    static const double red_ticks[] = {0.0, 0.01, 0.05, 0.1, 0.5, 1, 10, 100, 1000, 1e4, 1e6};
    const double *ticks = panel_no == 0 ? cos_ticks : red_ticks;
    size_t nt =
        panel_no == 0 ? sizeof cos_ticks / sizeof *cos_ticks : sizeof red_ticks / sizeof *red_ticks;
    double last_y = -100;
    for (size_t i = 0; i < nt; i++) {
        double d = panel_no == 0 ? 1.0 - ticks[i] : ticks[i];
        double u = to_u(d, &s);
        if (u > s.top)
            break;
        double y = y_of(u, &s, top);
        if (y - last_y < 13)
            continue;
        last_y = y;
        fprintf(out,
                "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eef1f4\"/>"
                "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                ML, ML + pw, y, y, ML - 6, y + 4, ticks[i]);
    }
    /* The threshold. */
    double thr = panel_no == 0 ? th->cosine : th->red;
    double ty = y_of(to_u(s.t, &s), &s, top);
    fprintf(out,
            "<line class=\"threshold\" x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#c62828\" stroke-dasharray=\"6 4\" stroke-width=\"1.4\"/>"
            "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\" style=\"fill:#c62828\">threshold "
            "%g</text>\n",
            ML, ML + pw, ty, ty, ML + pw - 4, ty - 4, thr);
    /* The first failing operator. */
    for (size_t k = 0; k < n; k++)
        if ((ptrdiff_t)idx[k] == first) {
            double x = ML + ((double)k + 0.5) * pw / (double)n;
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%g\" y2=\"%g\" stroke=\"#c62828\" "
                    "stroke-width=\"1\" opacity=\"0.6\"/>\n",
                    x, x, top, top + PH);
            if (panel_no == 0) {
                fprintf(out,
                        "<text x=\"%.1f\" y=\"%g\" style=\"fill:#c62828\"%s>first failing: ", x + 4,
                        top + 12, x > ML + pw * 0.7 ? " text-anchor=\"end\"" : "");
                esc(out, r->rows[first].target);
                fputs("</text>\n", out);
            }
        }
    /* The line through the finite points, then the points. */
    fputs("<polyline fill=\"none\" stroke=\"#7b93ad\" stroke-width=\"1\" points=\"", out);
    for (size_t k = 0; k < n; k++) {
        double d = dist(&r->rows[idx[k]], panel_no);
        if (isfinite(d))
            fprintf(out, "%.1f,%.1f ", ML + ((double)k + 0.5) * pw / (double)n,
                    y_of(to_u(d, &s), &s, top));
    }
    fputs("\"/>\n", out);
    for (size_t k = 0; k < n; k++) {
        const struct sg_compare_row *row = &r->rows[idx[k]];
        double d = dist(row, panel_no);
        double x = ML + ((double)k + 0.5) * pw / (double)n;
        bool nan = !isfinite(d);
        double y = nan ? top + PH : y_of(to_u(d, &s), &s, top);
        const char *cls = row->m.overflow ? "overflow" : row->is_error ? "fail" : "pass";
        if (nan)
            fprintf(out,
                    "<path class=\"point %s nan\" d=\"M%.1f %.1f l-4 -8 h8 z\" fill=\"%s\" "
                    "stroke=\"#7f0000\">",
                    cls, x, y, row->is_error ? "#c62828" : "#fff");
        else
            fprintf(out,
                    "<circle class=\"point %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"%s>",
                    cls, x, y, row->is_error ? "3.6" : "2.4", row->is_error ? "#c62828" : "#2f6fb0",
                    row->m.overflow ? " stroke=\"#3b0000\" stroke-width=\"1.5\"" : "");
        fputs("<title>", out);
        esc(out, row->target);
        char a[48];
        fprintf(out, " (position %u): %s %s%s</title>", row->position,
                panel_no == 0 ? "cosine" : "RED",
                sg__cmp_fmt(panel_no == 0 ? row->m.cosine : row->m.red, 6, a, sizeof a),
                row->m.overflow ? ", overflow" : "");
        fputs(nan ? "</path>\n" : "</circle>\n", out);
    }
    /* Ticks under the panel: the rows' numbers in the table (positions
     * repeat where a body's rows share their owner's). */
    size_t step = n > 12 ? (n + 11) / 12 : 1;
    for (size_t k = 0; k < n; k += step) {
        double x = ML + ((double)k + 0.5) * pw / (double)n;
        fprintf(out, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">#%zu</text>\n", x,
                top + PH + 14, idx[k]);
    }
}

static sg_status plot(FILE *out, const sg_compare_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        n += r->rows[i].status == SG_ROW_COMPARED;
    fprintf(out,
            "<svg id=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
            "viewBox=\"0 0 %g %g\" role=\"img\" aria-label=\"cosine similarity and relative "
            "Euclidean distance by topological position\">\n",
            PW, SVG_H, PW, SVG_H);
    if (n == 0) {
        fprintf(out, "<text x=\"%g\" y=\"%g\">No tensor could be compared.</text></svg>\n", ML,
                T1 + 20);
        return SG_OK;
    }
    size_t *idx = sg_malloc(n * sizeof *idx);
    if (!idx)
        return SG_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].status == SG_ROW_COMPARED)
            idx[k++] = i;
    panel(out, r, idx, n, 0, T1, r->analysis.first_fail);
    panel(out, r, idx, n, 1, T2, r->analysis.first_fail);
    fprintf(out,
            "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">rows in %s, numbered as in the "
            "table (compared tensors only; red: precision error, outlined: overflow, triangles: "
            "NaN)</text>\n",
            ML + (PW - ML - MR) / 2, SVG_H - 8,
            r->analysis.outputs_known ? "topological order" : "dump order");
    fputs("</svg>\n", out);
    sg_free(idx);
    return SG_OK;
}

/* ----------------------------------------------------------------- page */

static void metric_cells(FILE *out, const struct sg_compare_row *row)
{
    char cells[9][48];
    sg__cmp_metric_strings(row, cells);
    static const int shown[] = {0, 1, 3, 4, 6, 8}; /* cos, maxabs, RED, KL, RMSE, MRE */
    for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
        fprintf(out, "<td class=\"n\">%s</td>", cells[shown[k]]);
}

static void first_failing(FILE *out, const sg_compare_result *r)
{
    const struct sg_compare_analysis *an = &r->analysis;
    fputs("<section id=\"first-failing\"><h2>First failing operator</h2>\n", out);
    if (an->first_fail < 0) {
        fputs("<p>No tensor is in error.</p>", out);
    } else {
        const struct sg_compare_row *row = &r->rows[an->first_fail];
        fputs("<div class=\"card\"><p><b>", out);
        esc(out, row->target);
        fputs("</b> (", out);
        esc(out, row->op_type);
        fprintf(out, ") at position %u &mdash; cause: <b>%s</b>%s%s</p>", row->position,
                sg_cause_name(an->cause), an->overflow ? ", overflow (OverFlow=YES)" : "",
                an->fused ? ", fused op" : "");
        char crossed[512];
        if (*sg_metrics_crossed_text(&row->m, &r->thresholds, row->crossed, crossed,
                                     sizeof crossed)) {
            fputs("<p>crossed: <b>", out);
            esc(out, crossed);
            fprintf(out, "</b>%s</p>",
                    row->within_rounding ? " (within the target's rounding)" : "");
        }
        fputs("<p>Golden node(s): ", out);
        esc(out, row->golden);
        fputs("</p>\n<table><thead><tr><th>tensor</th><th>state</th><th>cosine</th>"
              "<th>max abs</th><th>RED</th><th>KL</th><th>RMSE</th><th>mean rel</th></tr>"
              "</thead><tbody>\n",
              out);
        for (size_t i = 0; i < an->n_inputs; i++) {
            const struct sg_compare_input *in = &an->inputs[i];
            fputs("<tr><td>input ", out);
            esc(out, in->value);
            fprintf(out, "</td><td>%s</td>", sg_input_state_name(in->state));
            if (in->row >= 0)
                metric_cells(out, &r->rows[in->row]);
            else
                fputs("<td colspan=\"6\"></td>", out);
            fputs("</tr>\n", out);
        }
        fputs("<tr class=\"err\"><td>output ", out);
        esc(out, row->golden_node ? row->golden_node : row->target);
        fprintf(out, ":%u</td><td>in error</td>", row->index);
        metric_cells(out, row);
        fputs("</tr></tbody></table>\n", out);
        if (an->n_hidden) {
            fputs("<p>Hidden behind it (fused or not dumped): ", out);
            for (size_t i = 0; i < an->n_hidden; i++) {
                if (i)
                    fputs(", ", out);
                esc(out, an->hidden[i]);
            }
            fputs("</p>\n", out);
        }
        fputs("</div>\n", out);
    }
    if (an->n_advice) {
        fputs("<h2>What to do</h2><ul id=\"advice\">\n", out);
        for (size_t i = 0; i < an->n_advice; i++) {
            fputs("<li>", out);
            esc(out, an->advice[i]);
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    if (an->n_notes) {
        fputs("<h2>Notes</h2><ul id=\"notes\">\n", out);
        for (size_t i = 0; i < an->n_notes; i++) {
            fputs("<li>", out);
            esc(out, an->notes[i]);
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    fputs("</section>\n", out);
}

static void lower_esc(FILE *out, const char *s)
{
    char buf[2];
    buf[1] = '\0';
    for (; s && *s; s++) {
        buf[0] = (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s;
        esc(out, buf);
    }
}

/* s for a narrow cell: as it is when at most `max` bytes, else its first
 * bytes, an ellipsis and its last ones (the end of a name tells nodes
 * apart: ".../attention/Softmax", "If_25::then_branch::Mul_93"). The full
 * name is the cell's tooltip. UTF-8 sequences are not split. */
static void esc_cut(FILE *out, const char *s, size_t max)
{
    size_t len = s ? strlen(s) : 0;
    if (len <= max) {
        esc(out, s);
        return;
    }
    size_t head = max / 3, tail = max - head - 1;
    while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
        head--;
    size_t from = len - tail;
    while (from < len && ((unsigned char)s[from] & 0xC0) == 0x80)
        from++;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)head, s);
    esc(out, buf);
    fputs("&hellip;", out);
    esc(out, s + from);
}

/* Characters of a name cell (NPUDump 140 px, GroundTruth 100 px, about
 * 6.5 px a character at the table's size). */
#define NAME_CHARS 19
#define GT_CHARS 13

static void table(FILE *out, const sg_compare_result *r)
{
    fputs("<section><h2>All tensors</h2>\n<div class=\"filters\">"
          "<label>name <input id=\"f-text\" type=\"text\" placeholder=\"filter by node or op "
          "name\"></label>"
          "<label>show <select id=\"f-status\"><option value=\"all\">all rows</option>"
          "<option value=\"error\">precision errors</option><option value=\"compared\">compared"
          "</option><option value=\"oneside\">on one side only</option><option value=\"failed\">"
          "not comparable</option></select></label>"
          "<label><input id=\"f-output\" type=\"checkbox\"> network outputs only</label>"
          "<span id=\"f-count\"></span></div>\n"
          "<div class=\"tableWrap\"><table id=\"rows\"><thead><tr><th>#</th><th>Error</th>"
          "<th>NPUDump</th><th>Cosine</th><th>RED</th><th>KL</th><th>RMSE</th><th>MeanRel</th>"
          "<th "
          "title=\"OverFlow\">Ovf</th><th>OpType</th><th>dtype</th><th>status</th><th>GroundTruth</"
          "th>"
          "<th>Shape</th><th>CompareFailReason</th></tr></thead><tbody>\n",
          out);
    /* The columns that decide come first, names are cut to fit (the full
     * text is the cell's tooltip): the table fits 1400 pixels. MaxAbs and
     * the position are in the CSV and JSON. */
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct sg_compare_row *row = &r->rows[i];
        bool err = row->is_error || row->mismatch;
        const char *cls = (ptrdiff_t)i == r->analysis.first_fail ? "err first"
                          : row->m.overflow                      ? "ovf"
                          : err                                  ? "err"
                          : row->status != SG_ROW_COMPARED       ? "side"
                                                                 : "";
        char crossed[512];
        sg_metrics_crossed_text(&row->m, &r->thresholds, row->crossed, crossed, sizeof crossed);
        fprintf(out,
                "<tr class=\"%s\" data-status=\"%s\" data-error=\"%d\" data-output=\"%d\" "
                "title=\"",
                cls, sg_compare_status_name(row->status), err, row->is_output);
        /* The tooltip: which test fired, and why a row is off. */
        esc(out, *crossed ? crossed : row->reason);
        fputs("\" data-names=\"", out);
        lower_esc(out, row->target);
        fputc(' ', out);
        lower_esc(out, row->golden);
        fputc(' ', out);
        lower_esc(out, row->op_type);
        fprintf(out, "\"><td class=\"n\">%zu</td><td>%s%s%s</td><td class=\"name\" title=\"", i,
                !err                   ? "NO"
                : row->within_rounding ? "rounding"
                                       : "YES",
                "", row->is_output ? " &middot; out" : "");
        esc(out, row->target);
        fputs("\">", out);
        esc_cut(out, row->target, NAME_CHARS);
        fputs("</td>", out);
        char cells[9][48];
        sg__cmp_metric_strings(row, cells);
        /* The metrics that decide, the crossed ones marked. */
        static const struct {
            int cell;
            unsigned bit;
        } decide[] = {{0, SG_CROSSED_COSINE},
                      {3, SG_CROSSED_RED},
                      {4, SG_CROSSED_KL},
                      {6, SG_CROSSED_RMSE},
                      {8, SG_CROSSED_MRE}};
        for (size_t k = 0; k < sizeof decide / sizeof *decide; k++)
            fprintf(out, "<td class=\"n%s\">%s</td>",
                    row->crossed & decide[k].bit ? " crossed" : "", cells[decide[k].cell]);
        char shape[1024];
        fprintf(out, "<td>%s</td><td class=\"op\" title=\"",
                row->status == SG_ROW_COMPARED ? (row->m.overflow ? "YES" : "NO") : "");
        esc(out, row->op_type);
        fputs("\">", out);
        esc(out, row->op_type);
        fprintf(out, "</td><td>%s</td><td>%s</td><td class=\"name gt\" title=\"",
                sg__cmp_dtype(row, true), sg_compare_status_name(row->status));
        esc(out, row->golden);
        fputs("\">", out);
        esc_cut(out, row->golden, GT_CHARS);
        /* The shape without blanks: "[1,1280,7,7]". */
        sg__cmp_shape(row, shape, sizeof shape);
        size_t k = 0;
        for (size_t q = 0; shape[q]; q++)
            if (shape[q] != ' ')
                shape[k++] = shape[q];
        shape[k] = '\0';
        fprintf(out, "</td><td>%s</td><td class=\"why\" title=\"", shape);
        esc(out, row->reason);
        fputs("\">", out);
        esc(out, row->reason);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></div></section>\n", out);
}

sg_status sg_compare_write_html(const sg_compare_result *r, time_t when, FILE *out)
{
    const struct sg_compare_analysis *an = &r->analysis;
    char ts[64];
    sg__cmp_time(when, ts, sizeof ts, false);
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            "<title>surgeon compare: %s</title><style>%s</style></head><body>\n",
            sg_verdict_name(an->verdict), css);
    fprintf(out, "<h1>surgeon compare</h1><div class=\"meta\">%s &middot; golden ", ts);
    esc(out, r->golden_dir);
    fputs(" &middot; target ", out);
    esc(out, r->target_dir);
    if (r->map_path) {
        fputs(" &middot; map ", out);
        esc(out, r->map_path);
    }
    if (r->model_label) {
        fputs(" &middot; model ", out);
        esc(out, r->model_label);
    }
    fputs("</div>\n", out);
    fprintf(out,
            "<section id=\"summary\"><div class=\"card\"><p><span class=\"badge %s\">%s</span>",
            sg_verdict_name(an->verdict), sg_verdict_name(an->verdict));
    esc(out, an->summary);
    fputs("</p><table class=\"counts\">", out);
    fprintf(out,
            "<tr><td>compared</td><td>%zu</td><td>precision errors</td><td>%zu</td>"
            "<td>overflow</td><td>%zu</td></tr>"
            "<tr><td>golden only</td><td>%zu</td><td>target only</td><td>%zu</td>"
            "<td>fused away</td><td>%zu</td></tr>"
            "<tr><td>not comparable</td><td>%zu</td><td>unreadable</td><td>%zu</td>"
            "<td>network outputs</td><td>%s</td></tr></table>",
            an->n_compared, an->n_errors, an->n_overflow, an->n_golden_only, an->n_target_only,
            an->n_fused_away, an->n_failed, an->n_unreadable,
            an->outputs_known ? sg_verdict_name(an->verdict) : "unknown (no model)");
    if (an->outputs_known)
        fprintf(out, "<p>network outputs: %zu, failing %zu, not compared %zu</p>", an->n_outputs,
                an->n_outputs_failed, an->n_outputs_missing);
    if (an->n_outputs_golden_nonfinite)
        fprintf(out,
                "<p class=\"golden-bad\"><b>The golden run is not finite:</b> %zu %s hold%s "
                "NaN/Inf in the reference run itself; the comparison proves nothing until it "
                "is fixed.</p>",
                an->n_outputs_golden_nonfinite,
                an->outputs_known ? "network output(s)" : "compared tensor(s)",
                an->n_outputs_golden_nonfinite == 1 ? "s" : "");
    fprintf(out,
            "<p class=\"meta\">thresholds: cosine &lt; %g, RED &gt; %g, KL &gt; %g, RMSE &gt; %g, "
            "mean relative error &gt; %g, or NaN/Inf on the target side only</p></div></section>\n",
            r->thresholds.cosine, r->thresholds.red, r->thresholds.kl, r->thresholds.rmse,
            r->thresholds.mre);
    first_failing(out, r);
    fputs("<section id=\"plots\"><h2>Along the network</h2>\n", out);
    if (plot(out, r))
        return SG_ENOMEM;
    fputs("</section>\n", out);
    table(out, r);
    fprintf(out, "<script>%s</script>\n</body></html>\n", script);
    return ferror(out) ? SG_EIO : SG_OK;
}
