/* json_read.c - strict JSON parser with line:column diagnostics (see sg_json_read.h). */
#include "sg_json_read.h"

#include "sg_alloc.h"
#include "sg_file.h"
#include "strmap.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Objects up to this many members are checked for duplicate keys pairwise;
 * larger ones through a hash map, so a huge object stays linear. */
#define SMALL_OBJECT 16

struct parser {
    const char *p, *end;
    const char *label;
    sg_arena *arena;
    uint32_t max_depth;
    /* Position tracking: the line of `p`, where that line starts, and a
     * cached column for `col_at` (positions are asked for in increasing
     * order, so counting code points stays linear overall). */
    uint32_t line;
    const char *line_start;
    const char *col_pos;
    uint32_t col;
    struct sg_diag *diag;
};

static uint32_t col_at(struct parser *P, const char *pos)
{
    if (P->col_pos < P->line_start || pos < P->col_pos) {
        P->col_pos = P->line_start;
        P->col = 1;
    }
    for (const char *q = P->col_pos; q < pos; q++)
        if (((unsigned char)*q & 0xC0) != 0x80)
            P->col++;
    P->col_pos = pos;
    return P->col;
}

/* Report an error at `pos` (which must be on the current line). */
__attribute__((format(printf, 3, 4))) static sg_status fail_at(struct parser *P, const char *pos,
                                                               const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_diag_set(P->diag, SG_EPARSE, "%s:%u:%u: %s", P->label, P->line, col_at(P, pos), msg);
}

static void skip_ws(struct parser *P)
{
    while (P->p < P->end) {
        char c = *P->p;
        if (c == '\n') {
            P->line++;
            P->line_start = P->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        P->p++;
    }
}

/* A short printable description of the character at p for messages. */
static const char *describe(const char *p, const char *end, char *buf, size_t size)
{
    if (p >= end)
        return "end of input";
    unsigned char c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

static sg_status parse_value(struct parser *P, uint32_t depth, struct sg_jval **out);

static struct sg_jval *new_value(struct parser *P, enum sg_jtype type, const char *start)
{
    struct sg_jval *v = sg_arena_calloc(P->arena, 1, sizeof *v);
    if (!v)
        return NULL;
    v->type = type;
    v->line = P->line;
    v->col = col_at(P, start);
    return v;
}

static sg_status oom(struct parser *P)
{
    return sg_diag_set(P->diag, SG_ENOMEM, "%s: out of memory while parsing JSON", P->label);
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
    if (end - p < 4)
        return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parse a string literal at P->p (which is '"'); the decoded text goes to
 * the arena. Decoded text is never longer than the literal. */
static sg_status parse_string(struct parser *P, const char **out, size_t *out_len)
{
    const char *start = P->p++;
    const char *q = P->p;
    /* First pass: find the closing quote and validate. */
    while (q < P->end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c == '\\') {
            if (q + 1 >= P->end)
                break;
            if (!strchr("\"\\/bfnrtu", q[1]) || q[1] == '\0')
                return fail_at(P, q,
                               "invalid escape in a string (valid: \\\" \\\\ \\/ \\b "
                               "\\f \\n \\r \\t \\uXXXX)");
            q += 2;
            continue;
        }
        if (c == '\n')
            return fail_at(P, q, "string not closed before the end of the line");
        if (c < 0x20)
            return fail_at(P, q, "control character (byte 0x%02x) in a string; escape it", c);
        if (c >= 0x80) {
            size_t n = sg__utf8_len((const unsigned char *)q, (const unsigned char *)P->end);
            if (!n)
                return fail_at(P, q, "invalid UTF-8 in a string");
            q += n;
            continue;
        }
        q++;
    }
    if (q >= P->end)
        return fail_at(P, start, "string not closed before the end of the input");
    char *buf = sg_arena_alloc(P->arena, (size_t)(q - P->p) + 1);
    if (!buf)
        return oom(P);
    size_t n = 0;
    const char *s = P->p;
    while (s < q) {
        if (*s != '\\') {
            buf[n++] = *s++;
            continue;
        }
        const char *esc = s;
        s++;
        switch (*s) {
        case '"':
        case '\\':
        case '/':
            buf[n++] = *s++;
            break;
        case 'b':
            buf[n++] = '\b', s++;
            break;
        case 'f':
            buf[n++] = '\f', s++;
            break;
        case 'n':
            buf[n++] = '\n', s++;
            break;
        case 'r':
            buf[n++] = '\r', s++;
            break;
        case 't':
            buf[n++] = '\t', s++;
            break;
        case 'u': {
            uint32_t cp;
            if (!hex4(s + 1, q, &cp))
                return fail_at(P, esc, "\\u must be followed by four hex digits");
            s += 5;
            if (cp >= 0xDC80 && cp <= 0xDCFF) {
                /* A byte that is not UTF-8 (a name as the model spells
                 * it), as surgeon's writer and Python's surrogateescape
                 * write it. */
                buf[n++] = (char)(cp - 0xDC00);
                break;
            }
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail_at(P, esc, "lone low surrogate \\u%04X in a string", (unsigned)cp);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (q - s < 6 || s[0] != '\\' || s[1] != 'u' || !hex4(s + 2, q, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail_at(P, esc, "high surrogate \\u%04X not followed by a low one",
                                   (unsigned)cp);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            }
            n += put_utf8(buf + n, cp);
            break;
        }
        default: /* rejected by the first pass */
            return fail_at(P, esc, "invalid escape in a string");
        }
    }
    buf[n] = '\0';
    P->p = q + 1;
    *out = buf;
    *out_len = n;
    return SG_OK;
}

static sg_status parse_number(struct parser *P, struct sg_jval *v)
{
    const char *s = P->p, *q = s;
    bool integral = true;
    if (q < P->end && *q == '-')
        q++;
    if (q >= P->end || *q < '0' || *q > '9')
        return fail_at(P, s, "invalid number: expected a digit");
    if (*q == '0') {
        q++;
        if (q < P->end && *q >= '0' && *q <= '9')
            return fail_at(P, s, "invalid number: leading zeros are not allowed");
    } else {
        while (q < P->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < P->end && *q == '.') {
        integral = false;
        q++;
        if (q >= P->end || *q < '0' || *q > '9')
            return fail_at(P, q, "invalid number: expected a digit after '.'");
        while (q < P->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < P->end && (*q == 'e' || *q == 'E')) {
        integral = false;
        q++;
        if (q < P->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= P->end || *q < '0' || *q > '9')
            return fail_at(P, q, "invalid number: expected a digit in the exponent");
        while (q < P->end && *q >= '0' && *q <= '9')
            q++;
    }
    char *tok = sg_arena_strndup(P->arena, s, (size_t)(q - s));
    if (!tok)
        return oom(P);
    errno = 0;
    v->num = strtod(tok, NULL);
    if (errno == ERANGE && isinf(v->num))
        return fail_at(P, s, "number out of range: %s", tok);
    if (integral) {
        errno = 0;
        long long ll = strtoll(tok, NULL, 10);
        if (errno == 0) {
            v->is_int = true;
            v->i = ll;
        }
    }
    P->p = q;
    return SG_OK;
}

static bool match_word(struct parser *P, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, w, n) != 0)
        return false;
    P->p += n;
    return true;
}

static sg_status parse_array(struct parser *P, uint32_t depth, struct sg_jval *v)
{
    size_t cap = 0;
    P->p++; /* '[' */
    skip_ws(P);
    if (P->p < P->end && *P->p == ']') {
        P->p++;
        return SG_OK;
    }
    for (;;) {
        struct sg_jval *item;
        sg_status st = parse_value(P, depth + 1, &item);
        if (st)
            return st;
        if (v->n_items == cap) {
            size_t c = cap ? cap * 2 : 8;
            struct sg_jval **g = sg_arena_grow(P->arena, v->items, v->n_items, c, sizeof *g);
            if (!g)
                return oom(P);
            v->items = g;
            cap = c;
        }
        v->items[v->n_items++] = item;
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            skip_ws(P);
            if (P->p < P->end && *P->p == ']')
                return fail_at(P, P->p, "trailing comma before ']'");
            continue;
        }
        if (P->p < P->end && *P->p == ']') {
            P->p++;
            return SG_OK;
        }
        char d[16];
        return fail_at(P, P->p, "expected ',' or ']' in an array, found %s",
                       describe(P->p, P->end, d, sizeof d));
    }
}

/* The earlier member with `key`, or NULL. Small objects are searched
 * pairwise; from SMALL_OBJECT members on, `map` (key -> index + 1) is kept. */
static const struct sg_jmember *find_dup(const struct sg_jval *v, struct sg__strmap *map,
                                         const char *key, sg_status *st)
{
    *st = SG_OK;
    if (v->n_members < SMALL_OBJECT) {
        for (size_t i = 0; i < v->n_members; i++)
            if (strcmp(v->members[i].key, key) == 0)
                return &v->members[i];
        return NULL;
    }
    if (map->count == 0)
        for (size_t i = 0; i < v->n_members; i++)
            if ((*st = sg__strmap_put(map, v->members[i].key, (void *)(uintptr_t)(i + 1))))
                return NULL;
    uintptr_t idx = (uintptr_t)sg__strmap_get(map, key);
    return idx ? &v->members[idx - 1] : NULL;
}

static sg_status parse_object(struct parser *P, uint32_t depth, struct sg_jval *v)
{
    struct sg__strmap map = {0};
    sg_status st = SG_OK;
    size_t cap = 0;
    char d[16];
    P->p++; /* '{' */
    skip_ws(P);
    if (P->p < P->end && *P->p == '}') {
        P->p++;
        return SG_OK;
    }
    for (;;) {
        if (P->p >= P->end || *P->p != '"') {
            st = fail_at(P, P->p, "expected a string key in an object, found %s",
                         describe(P->p, P->end, d, sizeof d));
            goto out;
        }
        struct sg_jmember m = {0};
        m.line = P->line;
        m.col = col_at(P, P->p);
        const char *key_pos = P->p;
        if ((st = parse_string(P, &m.key, &m.key_len)))
            goto out;
        if (strlen(m.key) != m.key_len) {
            st = fail_at(P, key_pos, "object key contains a NUL character");
            goto out;
        }
        const struct sg_jmember *dup = find_dup(v, &map, m.key, &st);
        if (st) {
            st = oom(P);
            goto out;
        }
        if (dup) {
            st = fail_at(P, key_pos, "duplicate key \"%s\" (first at line %u, column %u)", m.key,
                         dup->line, dup->col);
            goto out;
        }
        skip_ws(P);
        if (P->p >= P->end || *P->p != ':') {
            st = fail_at(P, P->p, "expected ':' after the object key, found %s",
                         describe(P->p, P->end, d, sizeof d));
            goto out;
        }
        P->p++;
        if ((st = parse_value(P, depth + 1, &m.value)))
            goto out;
        if (v->n_members == cap) {
            size_t c = cap ? cap * 2 : 8;
            struct sg_jmember *g = sg_arena_grow(P->arena, v->members, v->n_members, c, sizeof *g);
            if (!g) {
                st = oom(P);
                goto out;
            }
            v->members = g;
            cap = c;
        }
        v->members[v->n_members++] = m;
        if (map.count && sg__strmap_put(&map, m.key, (void *)(uintptr_t)v->n_members)) {
            st = oom(P);
            goto out;
        }
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            skip_ws(P);
            if (P->p < P->end && *P->p == '}') {
                st = fail_at(P, P->p, "trailing comma before '}'");
                goto out;
            }
            continue;
        }
        if (P->p < P->end && *P->p == '}') {
            P->p++;
            goto out;
        }
        st = fail_at(P, P->p, "expected ',' or '}' in an object, found %s",
                     describe(P->p, P->end, d, sizeof d));
        goto out;
    }
out:
    sg__strmap_free(&map);
    return st;
}

static sg_status parse_value(struct parser *P, uint32_t depth, struct sg_jval **out)
{
    skip_ws(P);
    char d[16];
    if (P->p >= P->end)
        return fail_at(P, P->p, "expected a value, found end of input");
    const char *start = P->p;
    char c = *P->p;
    enum sg_jtype type;
    switch (c) {
    case '{':
        type = SG_JSON_OBJECT;
        break;
    case '[':
        type = SG_JSON_ARRAY;
        break;
    case '"':
        type = SG_JSON_STRING;
        break;
    case 't':
    case 'f':
        type = SG_JSON_BOOL;
        break;
    case 'n':
        type = SG_JSON_NULL;
        break;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            type = SG_JSON_NUMBER;
            break;
        }
        if (c == '\'')
            return fail_at(P, start, "strings must use double quotes");
        if (c == '/')
            return fail_at(P, start, "comments are not allowed in JSON");
        return fail_at(P, start, "expected a value, found %s", describe(P->p, P->end, d, sizeof d));
    }
    if ((type == SG_JSON_OBJECT || type == SG_JSON_ARRAY) && depth >= P->max_depth)
        return sg_diag_set(P->diag, SG_ETOOBIG, "%s:%u:%u: nesting deeper than %u levels", P->label,
                           P->line, col_at(P, start), P->max_depth);
    struct sg_jval *v = new_value(P, type, start);
    if (!v)
        return oom(P);
    sg_status st = SG_OK;
    switch (type) {
    case SG_JSON_OBJECT:
        st = parse_object(P, depth, v);
        break;
    case SG_JSON_ARRAY:
        st = parse_array(P, depth, v);
        break;
    case SG_JSON_STRING:
        st = parse_string(P, &v->str, &v->len);
        break;
    case SG_JSON_NUMBER:
        st = parse_number(P, v);
        break;
    case SG_JSON_BOOL:
        if (match_word(P, "true"))
            v->b = true;
        else if (!match_word(P, "false"))
            st = fail_at(P, start, "expected true or false");
        break;
    case SG_JSON_NULL:
        if (!match_word(P, "null"))
            st = fail_at(P, start, "expected null");
        break;
    case SG_JSON_TYPE_COUNT:
        break;
    }
    if (st)
        return st;
    /* A literal or number must end at a delimiter ("truex", "12abc"). */
    if ((type == SG_JSON_BOOL || type == SG_JSON_NULL || type == SG_JSON_NUMBER) && P->p < P->end) {
        char e = *P->p;
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9') ||
            e == '_' || e == '.' || e == '+' || e == '-')
            return fail_at(P, P->p, "unexpected %s after a value",
                           describe(P->p, P->end, d, sizeof d));
    }
    *out = v;
    return SG_OK;
}

sg_status sg_json_parse(const char *text, size_t len, const char *label,
                        const struct sg_json_limits *limits, struct sg_jdoc **out,
                        struct sg_diag *diag)
{
    *out = NULL;
    if (!label)
        label = "<json>";
    size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : SG_JSON_DEFAULT_MAX_BYTES;
    uint32_t max_depth =
        limits && limits->max_depth ? limits->max_depth : SG_JSON_DEFAULT_MAX_DEPTH;
    if (len > max_bytes)
        return sg_diag_set(diag, SG_ETOOBIG, "%s: %zu bytes of JSON, more than the limit of %zu",
                           label, len, max_bytes);
    sg_arena *arena = sg_arena_create();
    if (!arena)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory while parsing JSON", label);
    struct sg_jdoc *doc = sg_arena_calloc(arena, 1, sizeof *doc);
    const char *lab = sg_arena_strdup(arena, label);
    if (!doc || !lab) {
        sg_arena_free(arena);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory while parsing JSON", label);
    }
    doc->arena = arena;
    doc->label = lab;
    struct parser P = {
        .p = text,
        .end = text + len,
        .label = lab,
        .arena = arena,
        .max_depth = max_depth,
        .line = 1,
        .line_start = text,
        .col_pos = text,
        .col = 1,
        .diag = diag,
    };
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        P.p += 3;
        P.line_start = P.col_pos = P.p;
    }
    skip_ws(&P);
    sg_status st;
    if (P.p >= P.end) {
        st = fail_at(&P, P.p, "no JSON value: the input is empty");
        goto fail;
    }
    if ((st = parse_value(&P, 0, &doc->root)))
        goto fail;
    skip_ws(&P);
    if (P.p < P.end) {
        char d[16];
        st = fail_at(&P, P.p, "unexpected %s after the JSON value",
                     describe(P.p, P.end, d, sizeof d));
        goto fail;
    }
    *out = doc;
    return SG_OK;
fail:
    sg_arena_free(arena);
    return st;
}

sg_status sg_json_parse_file(const char *path, const struct sg_json_limits *limits,
                             struct sg_jdoc **out, struct sg_diag *diag)
{
    *out = NULL;
    size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : SG_JSON_DEFAULT_MAX_BYTES;
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, max_bytes, &buf, &len, diag);
    if (st)
        return st;
    st = sg_json_parse((const char *)buf, len, path, limits, out, diag);
    sg_free(buf);
    return st;
}

void sg_jdoc_free(struct sg_jdoc *doc)
{
    if (doc)
        sg_arena_free(doc->arena);
}

const struct sg_jmember *sg_jval_member(const struct sg_jval *obj, const char *key)
{
    if (!obj || obj->type != SG_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n_members; i++)
        if (strcmp(obj->members[i].key, key) == 0)
            return &obj->members[i];
    return NULL;
}

const struct sg_jval *sg_jval_get(const struct sg_jval *obj, const char *key)
{
    const struct sg_jmember *m = sg_jval_member(obj, key);
    return m ? m->value : NULL;
}

const char *sg_jtype_name(enum sg_jtype type)
{
    static const char *const names[SG_JSON_TYPE_COUNT] = {
        [SG_JSON_NULL] = "null",     [SG_JSON_BOOL] = "boolean", [SG_JSON_NUMBER] = "number",
        [SG_JSON_STRING] = "string", [SG_JSON_ARRAY] = "array",  [SG_JSON_OBJECT] = "object",
    };
    return (unsigned)type < SG_JSON_TYPE_COUNT ? names[type] : "?";
}
