/*
 * compare_impl.h - what the files of compare/ share and tests may reach.
 * Not installed; nothing outside compare/ and tests/ includes it.
 */
#ifndef SG_COMPARE_IMPL_H
#define SG_COMPARE_IMPL_H

#include "sg_compare.h"

#include <stdbool.h>

/* metrics.c: use the portable kernels even where AVX2 is available (tests
 * check both give the same numbers; the benchmark times both). Returns the
 * previous setting. Not thread-safe. */
bool sg__metrics_force_generic(bool on);

#endif
