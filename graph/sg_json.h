/*
 * sg_json.h - a small streaming JSON writer.
 *
 * Used for `--json` outputs, reports and ATC-style maps. The writer tracks
 * nesting so callers never place commas themselves; strings are escaped
 * per RFC 8259 (control characters as \u00XX), and a byte that is not part
 * of well-formed UTF-8 is written as \udc80-\udcff (Python's
 * surrogateescape; surgeon's reader and json.loads turn it back into the
 * byte), so any name a model holds gives valid JSON.
 */
#ifndef SG_JSON_H
#define SG_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SG_JSON_MAX_DEPTH 64

struct sg_json {
    FILE *out;
    int depth;
    bool pretty;
    bool need_comma[SG_JSON_MAX_DEPTH];
    bool after_key;
};

/* Start writing to `out` (not owned). pretty: two-space indentation. */
void sg_json_init(struct sg_json *j, FILE *out, bool pretty);

void sg_json_object_begin(struct sg_json *j);
void sg_json_object_end(struct sg_json *j);
void sg_json_array_begin(struct sg_json *j);
void sg_json_array_end(struct sg_json *j);
/* The key of the next member inside an object. */
void sg_json_key(struct sg_json *j, const char *key);
void sg_json_string(struct sg_json *j, const char *s); /* NULL writes null */
void sg_json_string_n(struct sg_json *j, const char *s, size_t len);
void sg_json_int(struct sg_json *j, int64_t v);
/* Non-finite doubles are written as the strings "NaN", "Infinity", "-Infinity". */
void sg_json_double(struct sg_json *j, double v);
void sg_json_bool(struct sg_json *j, bool v);
void sg_json_null(struct sg_json *j);

/* Write s as a JSON string literal (with quotes) to out. */
void sg_json_write_escaped(FILE *out, const char *s, size_t len);

#endif
