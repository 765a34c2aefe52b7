/*
 * sg_csv.h - CSV fields as Python's csv module writes them, for the reports
 * (compare's result CSV, a dump's mapping.csv, single-op verdicts).
 */
#ifndef SG_CSV_H
#define SG_CSV_H

#include <stdio.h>

/* s as one field: as it is, or in double quotes (inner quotes doubled) when
 * it holds a comma, a quote or a line break ('\n' or '\r'). */
void sg_csv_field(FILE *f, const char *s);

#endif
