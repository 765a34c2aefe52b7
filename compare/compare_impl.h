/*
 * compare_impl.h - what the files of compare/ share and tests may reach.
 * Not installed; nothing outside compare/ and tests/ includes it.
 */
#ifndef SG_COMPARE_IMPL_H
#define SG_COMPARE_IMPL_H

#include "sg_arena.h"
#include "sg_compare.h"
#include "sg_dumpname.h"

#include <stdbool.h>

/* metrics.c: use the portable kernels even where AVX2 is available (tests
 * check both give the same numbers; the benchmark times both). Returns the
 * previous setting. Not thread-safe. */
bool sg__metrics_force_generic(bool on);

/* metrics.c: n elements of a from element i as float32 into out; whether
 * the metrics take a dtype. */
void sg__metrics_to_f32(const struct sg_array *a, size_t i, size_t n, float *out);
bool sg__metrics_supported(int32_t dtype);

/* dumpset.c: an empty set for folder (or file) dir; NULL when out of
 * memory. Then files[0..n) filled by the caller are sorted and indexed by
 * sg__dumpset_index (SG_EDUP: an output twice; SG_ENOMEM). */
sg_dumpset *sg__dumpset_new(const char *dir);
sg_status sg__dumpset_index(sg_dumpset *ds, size_t n, struct sg_diag *diag);

/* compare.c: printf into an arena; NULL when out of memory. */
char *sg__cmp_printf(sg_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * analysis.c: fill r->analysis from r->rows (sorted). g, order, n: the
 * model's main graph and its topological order (node->mark holds each
 * node's position), or NULL/0 without a model; names: what dumps call its
 * nodes (sg_dump_names). SG_ENOMEM only.
 */
sg_status sg__compare_analyse(sg_compare_result *r, sg_graph *g, sg_node *const *order, uint32_t n,
                              const sg_dump_names *names, struct sg_diag *diag);

/* report.c: shared by the CSV, JSON and HTML writers. */
/* v with `decimals` decimals; "NaN", "inf", "-inf" for the others. */
const char *sg__cmp_fmt(double v, int decimals, char *buf, size_t size);
/* StandardDeviation: "(mean;std),(mean;std)", target first; "NaN" when not compared. */
const char *sg__cmp_stddev(const struct sg_compare_row *row, char *buf, size_t size);
/* Shape as "[1, 4, 16]"; "NaN" when unknown. */
const char *sg__cmp_shape(const struct sg_compare_row *row, char *buf, size_t size);
/* The dtype name of one side, "NaN" when it was not read. */
const char *sg__cmp_dtype(const struct sg_compare_row *row, bool target);
/* The nine metric cells of the CSV in order, "NaN" for rows not compared. */
void sg__cmp_metric_strings(const struct sg_compare_row *row, char cells[9][48]);
/* Local time: "20240131235959" (compact) or ISO 8601. */
void sg__cmp_time(time_t when, char *buf, size_t size, bool compact);

#endif
