/*
 * sg_json_read.h - a small strict JSON parser (RFC 8259) building a DOM.
 *
 * Used for files users hand us (ATC fusion switch files) and files ATC
 * writes (the `atc --mode=1` JSON of a compiled model), so errors must say
 * where: every failure names the source and its line:column ("switch.cfg:3:17:
 * expected ':' after the object key"), and every value and object member
 * keeps the line:column where it starts, so callers can point at a bad value
 * too. Columns count characters (UTF-8 code points), from 1.
 *
 * Strict means: no comments, no trailing commas, no single quotes, no NaN,
 * strings must be valid UTF-8 with control characters escaped, lone
 * surrogates are rejected, duplicate keys in one object are an error, and
 * nothing but whitespace may follow the top-level value. A leading UTF-8
 * byte order mark is skipped. Size and nesting depth are limited.
 *
 * The whole document lives in one arena; sg_jdoc_free releases it.
 */
#ifndef SG_JSON_READ_H
#define SG_JSON_READ_H

#include "sg_arena.h"
#include "sg_status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sg_jtype {
    SG_JSON_NULL,
    SG_JSON_BOOL,
    SG_JSON_NUMBER,
    SG_JSON_STRING,
    SG_JSON_ARRAY,
    SG_JSON_OBJECT,
    SG_JSON_TYPE_COUNT
};

struct sg_jval;

/* One member of an object, in file order. */
struct sg_jmember {
    const char *key; /* NUL-terminated; keys never contain NUL */
    size_t key_len;
    uint32_t line, col; /* where the key starts */
    struct sg_jval *value;
};

struct sg_jval {
    enum sg_jtype type;
    uint32_t line, col;     /* where the value starts */
    bool b;                 /* BOOL */
    double num;             /* NUMBER */
    bool is_int;            /* NUMBER written without fraction or exponent, fits int64 */
    int64_t i;              /* NUMBER when is_int */
    const char *str;        /* STRING: decoded, NUL-terminated (may hold NUL from \u0000) */
    size_t len;             /* STRING: bytes, without the terminator */
    struct sg_jval **items; /* ARRAY */
    size_t n_items;
    struct sg_jmember *members; /* OBJECT */
    size_t n_members;
};

struct sg_jdoc {
    sg_arena *arena;
    struct sg_jval *root;
    const char *label; /* the source name used in messages (in the arena) */
};

/* Limits; a zero field means its default. */
#define SG_JSON_DEFAULT_MAX_BYTES ((size_t)1 << 31)
#define SG_JSON_DEFAULT_MAX_DEPTH 256u
struct sg_json_limits {
    size_t max_bytes;   /* larger input: SG_ETOOBIG */
    uint32_t max_depth; /* deeper nesting of arrays/objects: SG_ETOOBIG */
};

/*
 * Parse `len` bytes of `text` (need not be NUL-terminated; not referenced
 * after return). `label` names the source in messages (NULL: "<json>").
 * `limits` may be NULL. On success *out owns the document (sg_jdoc_free).
 * On failure *out is NULL and `diag` holds "label:line:col: what".
 * Statuses: SG_EPARSE, SG_ETOOBIG, SG_ENOMEM.
 */
sg_status sg_json_parse(const char *text, size_t len, const char *label,
                        const struct sg_json_limits *limits, struct sg_jdoc **out,
                        struct sg_diag *diag);

/* Read and parse the file at `path` (the label is the path). Adds SG_EIO
 * (cannot open/read; the message names the file and the reason). */
sg_status sg_json_parse_file(const char *path, const struct sg_json_limits *limits,
                             struct sg_jdoc **out, struct sg_diag *diag);

/* Free a document. NULL is a no-op. */
void sg_jdoc_free(struct sg_jdoc *doc);

/* The value of member `key` of an object, or NULL (absent, or `obj` is
 * NULL or not an object). Linear in the number of members. */
const struct sg_jval *sg_jval_get(const struct sg_jval *obj, const char *key);

/* The member for `key` (with its position), or NULL. */
const struct sg_jmember *sg_jval_member(const struct sg_jval *obj, const char *key);

/* "null", "boolean", "number", "string", "array", "object". */
const char *sg_jtype_name(enum sg_jtype type);

#endif
