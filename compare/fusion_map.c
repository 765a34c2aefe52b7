/*
 * fusion_map.c - the `atc --mode=1` JSON of a compiled model, reduced to
 * what the comparison needs: each compiled op, the ONNX nodes it came from
 * (_datadump_original_op_names), the fusion passes that made it (pass_name,
 * pass_name_ub) and, per output, the original node and output it stands for
 * when ATC says so (output_desc attrs _datadump_origin_name,
 * _datadump_origin_output_index).
 *
 * The JSON parser below is private to this file and only as large as this
 * needs (RFC 8259 values, line numbers for messages). When graph/ gains a
 * shared reader (sg_json_read.h), this file is the one place to switch.
 */
#include "compare_impl.h"
#include "sg_alloc.h"
#include "sg_arena.h"
#include "sg_tensorfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the parser */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
    enum jtype type;
    uint32_t line;
    bool b;
    double num;
    char *str;           /* J_STR: NUL-terminated (a \u0000 ends it early: names never hold one) */
    struct jval **items; /* J_ARR values, J_OBJ values */
    char **keys;         /* J_OBJ */
    size_t n;
};

struct parser {
    const char *p, *end;
    uint32_t line;
    int depth;
    sg_arena *arena;
    const char *label;
    struct sg_diag *diag;
    sg_status st;
};

#define MAX_DEPTH 256

static struct jval *fail(struct parser *ps, const char *what)
{
    if (!ps->st) {
        ps->st = SG_EPARSE;
        if (ps->p >= ps->end)
            sg_diag_set(ps->diag, SG_EPARSE, "%s:%u: %s (at end of file)", ps->label, ps->line,
                        what);
        else
            sg_diag_set(ps->diag, SG_EPARSE, "%s:%u: %s", ps->label, ps->line, what);
    }
    return NULL;
}

static struct jval *nomem(struct parser *ps)
{
    if (!ps->st) {
        ps->st = SG_ENOMEM;
        sg_diag_set(ps->diag, SG_ENOMEM, "%s: out of memory", ps->label);
    }
    return NULL;
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == '\n')
            ps->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
        ps->p++;
    }
}

static struct jval *new_val(struct parser *ps, enum jtype t)
{
    struct jval *v = sg_arena_calloc(ps->arena, 1, sizeof *v);
    if (!v)
        return nomem(ps);
    v->type = t;
    v->line = ps->line;
    return v;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string literal at ps->p (the opening quote); decoded into the arena. */
static char *parse_string(struct parser *ps)
{
    const char *q = ps->p + 1;
    /* The decoded form is never longer than the literal. */
    const char *close = q;
    while (close < ps->end && *close != '"') {
        if (*close == '\\')
            close++;
        close++;
    }
    if (close >= ps->end) {
        fail(ps, "unterminated string");
        return NULL;
    }
    char *out = sg_arena_alloc(ps->arena, (size_t)(close - q) + 1);
    if (!out) {
        nomem(ps);
        return NULL;
    }
    size_t n = 0;
    while (q < close) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20) {
            fail(ps, "control character in a string");
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            q++;
            continue;
        }
        q++;
        switch (*q) {
        case '"':
        case '\\':
        case '/':
            out[n++] = *q++;
            break;
        case 'b':
            out[n++] = '\b', q++;
            break;
        case 'f':
            out[n++] = '\f', q++;
            break;
        case 'n':
            out[n++] = '\n', q++;
            break;
        case 'r':
            out[n++] = '\r', q++;
            break;
        case 't':
            out[n++] = '\t', q++;
            break;
        case 'u': {
            int cp = close - q >= 5 ? hex4(q + 1) : -1;
            if (cp < 0) {
                fail(ps, "bad \\u escape");
                return NULL;
            }
            q += 5;
            unsigned u = (unsigned)cp;
            if (u >= 0xd800 && u < 0xdc00) {
                int lo = close - q >= 6 && q[0] == '\\' && q[1] == 'u' ? hex4(q + 2) : -1;
                if (lo < 0xdc00 || lo >= 0xe000) {
                    fail(ps, "lone surrogate in a \\u escape");
                    return NULL;
                }
                q += 6;
                u = 0x10000 + ((u - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
            } else if (u >= 0xdc00 && u < 0xe000) {
                fail(ps, "lone surrogate in a \\u escape");
                return NULL;
            }
            /* \uXXXX (6 bytes) -> at most 3; a pair (12) -> 4. */
            n += put_utf8(out + n, u);
            break;
        }
        default:
            fail(ps, "bad escape in a string");
            return NULL;
        }
    }
    out[n] = '\0';
    ps->p = close + 1;
    return out;
}

static struct jval *parse_value(struct parser *ps);

static struct jval *parse_container(struct parser *ps, bool object)
{
    struct jval *v = new_val(ps, object ? J_OBJ : J_ARR);
    if (!v)
        return NULL;
    if (++ps->depth > MAX_DEPTH)
        return fail(ps, "nesting too deep");
    ps->p++;
    size_t cap = 0;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
        ps->p++;
        ps->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a string key");
            if (!(key = parse_string(ps)))
                return NULL;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail(ps, "expected ':' after a key");
            ps->p++;
        }
        struct jval *item = parse_value(ps);
        if (!item)
            return NULL;
        if (v->n == cap) {
            size_t ncap = cap ? 2 * cap : 8;
            struct jval **items = sg_arena_grow(ps->arena, v->items, v->n, ncap, sizeof *items);
            char **keys =
                object ? sg_arena_grow(ps->arena, v->keys, v->n, ncap, sizeof *keys) : NULL;
            if (!items || (object && !keys))
                return nomem(ps);
            v->items = items;
            v->keys = keys;
            cap = ncap;
        }
        if (object)
            v->keys[v->n] = key;
        v->items[v->n++] = item;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
            ps->p++;
            ps->depth--;
            return v;
        }
        return fail(ps, object ? "expected ',' or '}' in an object"
                               : "expected ',' or ']' in an array");
    }
}

static bool match_word(struct parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static struct jval *parse_number(struct parser *ps)
{
    const char *s = ps->p;
    const char *q = s;
    if (q < ps->end && *q == '-')
        q++;
    if (q >= ps->end || *q < '0' || *q > '9')
        return fail(ps, "unexpected character");
    if (*q == '0')
        q++;
    else
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail(ps, "bad number");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= ps->end || *q < '0' || *q > '9')
            return fail(ps, "bad number");
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
    }
    char buf[64];
    size_t len = (size_t)(q - s);
    struct jval *v = new_val(ps, J_NUM);
    if (!v)
        return NULL;
    if (len >= sizeof buf) {
        v->num = 0; /* absurdly long literals: the value is never used */
    } else {
        memcpy(buf, s, len);
        buf[len] = '\0';
        v->num = strtod(buf, NULL);
    }
    ps->p = q;
    return v;
}

static struct jval *parse_value(struct parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "expected a value");
    switch (*ps->p) {
    case '{':
        return parse_container(ps, true);
    case '[':
        return parse_container(ps, false);
    case '"': {
        struct jval *v = new_val(ps, J_STR);
        if (v && !(v->str = parse_string(ps)))
            return NULL;
        return v;
    }
    case 't':
    case 'f':
    case 'n': {
        struct jval *v = new_val(ps, *ps->p == 'n' ? J_NULL : J_BOOL);
        if (!v)
            return NULL;
        if (match_word(ps, "true"))
            v->b = true;
        else if (!match_word(ps, "false") && !match_word(ps, "null"))
            return fail(ps, "unexpected word");
        return v;
    }
    default:
        return parse_number(ps);
    }
}

static const struct jval *get(const struct jval *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

/* ------------------------------------------------------ map extraction */

struct build {
    sg_arena *arena;
    const char *label;
    struct sg_diag *diag;
};

static sg_status type_error(struct build *b, const struct jval *at, const char *op,
                            const char *what)
{
    if (op)
        return sg_diag_set(b->diag, SG_EPARSE, "%s:%u: op '%s': %s", b->label, at->line, op, what);
    return sg_diag_set(b->diag, SG_EPARSE, "%s:%u: %s", b->label, at->line, what);
}

/* value {"list":{"s":[...]}} or {"s":"..."}: its strings into *out. */
static sg_status attr_strings(struct build *b, const struct jval *attr, const char *op,
                              const char *key, char ***out, size_t *n)
{
    const struct jval *value = get(attr, "value");
    *out = NULL;
    *n = 0;
    char msg[256];
    snprintf(msg, sizeof msg,
             "attr '%s' holds neither {\"list\":{\"s\":[strings]}} nor {\"s\":string}", key);
    if (!value || value->type != J_OBJ)
        return type_error(b, attr, op, msg);
    const struct jval *list = get(value, "list");
    const struct jval *s = list ? get(list, "s") : get(value, "s");
    if (list && list->type != J_OBJ)
        return type_error(b, list, op, msg);
    if (!s)
        return SG_OK; /* a list without "s" is empty */
    if (s->type == J_STR) {
        *out = sg_arena_alloc(b->arena, sizeof **out);
        if (!*out)
            return sg_diag_set(b->diag, SG_ENOMEM, "%s: out of memory", b->label);
        (*out)[0] = s->str;
        *n = 1;
        return SG_OK;
    }
    if (s->type != J_ARR)
        return type_error(b, s, op, msg);
    *out = sg_arena_calloc(b->arena, s->n ? s->n : 1, sizeof **out);
    if (!*out)
        return sg_diag_set(b->diag, SG_ENOMEM, "%s: out of memory", b->label);
    for (size_t i = 0; i < s->n; i++) {
        if (s->items[i]->type != J_STR)
            return type_error(b, s->items[i], op, msg);
        (*out)[i] = s->items[i]->str;
    }
    *n = s->n;
    return SG_OK;
}

static sg_status read_output_desc(struct build *b, const struct jval *descs,
                                  struct sg_fusion_op *op)
{
    if (descs->type != J_ARR)
        return type_error(b, descs, op->name, "\"output_desc\" is not an array");
    op->n_outputs = descs->n;
    op->out_orig = sg_arena_calloc(b->arena, descs->n ? descs->n : 1, sizeof *op->out_orig);
    op->out_index = sg_arena_calloc(b->arena, descs->n ? descs->n : 1, sizeof *op->out_index);
    if (!op->out_orig || !op->out_index)
        return sg_diag_set(b->diag, SG_ENOMEM, "%s: out of memory", b->label);
    for (size_t i = 0; i < descs->n; i++) {
        op->out_index[i] = -1;
        const struct jval *attrs = get(descs->items[i], "attr");
        if (!attrs)
            continue;
        if (attrs->type != J_ARR)
            return type_error(b, attrs, op->name, "output_desc \"attr\" is not an array");
        for (size_t k = 0; k < attrs->n; k++) {
            const struct jval *key = get(attrs->items[k], "key");
            const struct jval *value = get(attrs->items[k], "value");
            if (!key || key->type != J_STR)
                continue;
            if (strcmp(key->str, "_datadump_origin_name") == 0) {
                const struct jval *s = get(value, "s");
                if (!s || s->type != J_STR)
                    return type_error(b, attrs->items[k], op->name,
                                      "_datadump_origin_name is not {\"s\":string}");
                op->out_orig[i] = s->str[0] ? s->str : NULL;
            } else if (strcmp(key->str, "_datadump_origin_output_index") == 0) {
                const struct jval *v = get(value, "i");
                if (!v || v->type != J_NUM || v->num < 0 || v->num > 1e9)
                    return type_error(b, attrs->items[k], op->name,
                                      "_datadump_origin_output_index is not {\"i\":number}");
                op->out_index[i] = (int64_t)v->num;
            }
        }
    }
    return SG_OK;
}

static sg_status read_op(struct build *b, const struct jval *o, struct sg_fusion_op *op)
{
    if (o->type != J_OBJ)
        return type_error(b, o, NULL, "an op is not an object");
    const struct jval *name = get(o, "name"), *type = get(o, "type"), *attrs = get(o, "attr");
    if (!name || name->type != J_STR)
        return type_error(b, o, NULL, "an op has no \"name\" string");
    op->name = name->str;
    op->line = o->line;
    if (type && type->type != J_STR)
        return type_error(b, type, op->name, "\"type\" is not a string");
    op->type = type ? type->str : "";
    if (attrs && attrs->type != J_ARR)
        return type_error(b, attrs, op->name, "\"attr\" is not an array");
    for (size_t i = 0; attrs && i < attrs->n; i++) {
        const struct jval *a = attrs->items[i];
        const struct jval *key = get(a, "key");
        if (!key || key->type != J_STR)
            return type_error(b, a, op->name, "an attr has no \"key\" string");
        sg_status st = SG_OK;
        if (strcmp(key->str, "_datadump_original_op_names") == 0) {
            st = attr_strings(b, a, op->name, key->str, &op->orig, &op->n_orig);
        } else if (strcmp(key->str, "pass_name") == 0) {
            st = attr_strings(b, a, op->name, key->str, &op->passes, &op->n_passes);
        } else if (strcmp(key->str, "pass_name_ub") == 0) {
            char **s;
            size_t n;
            st = attr_strings(b, a, op->name, key->str, &s, &n);
            op->ub_pass = !st && n && s[0][0] ? s[0] : NULL;
        }
        if (st)
            return st;
    }
    const struct jval *descs = get(o, "output_desc");
    return descs ? read_output_desc(b, descs, op) : SG_OK;
}

sg_status sg_fusion_map_parse(const char *text, size_t len, const char *label, sg_fusion_map **out,
                              struct sg_diag *diag)
{
    *out = NULL;
    if (!label)
        label = "<map>";
    sg_fusion_map *map = sg_calloc(1, sizeof *map);
    sg_arena *arena = sg_arena_create();
    sg_status st = SG_OK;
    if (!map || !arena) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        goto out_free;
    }
    map->arena = arena;
    struct parser ps = {
        .p = text, .end = text + len, .line = 1, .arena = arena, .label = label, .diag = diag};
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        ps.p += 3;
    struct jval *root = parse_value(&ps);
    if (root) {
        skip_ws(&ps);
        if (ps.p < ps.end)
            fail(&ps, "text after the JSON value");
    }
    if (ps.st) {
        st = ps.st;
        goto out_free;
    }
    struct build b = {.arena = arena, .label = label, .diag = diag};
    const struct jval *graphs = get(root, "graph");
    if (!graphs || graphs->type != J_ARR) {
        st = type_error(&b, root, NULL,
                        "not an `atc --mode=1` JSON: no \"graph\" array at the top level");
        goto out_free;
    }
    size_t total = 0;
    for (size_t g = 0; g < graphs->n; g++) {
        const struct jval *ops = get(graphs->items[g], "op");
        if (graphs->items[g]->type != J_OBJ || (ops && ops->type != J_ARR)) {
            st = type_error(&b, graphs->items[g], NULL,
                            "a graph is not an object with an \"op\" array");
            goto out_free;
        }
        total += ops ? ops->n : 0;
    }
    map->ops = sg_arena_calloc(arena, total ? total : 1, sizeof *map->ops);
    map->path = sg_arena_strdup(arena, label);
    if (!map->ops || !map->path) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        goto out_free;
    }
    for (size_t g = 0; g < graphs->n; g++) {
        const struct jval *ops = get(graphs->items[g], "op");
        for (size_t i = 0; ops && i < ops->n; i++)
            if ((st = read_op(&b, ops->items[i], &map->ops[map->n_ops++])))
                goto out_free;
    }
    *out = map;
    return SG_OK;
out_free:
    sg_arena_free(arena);
    sg_free(map);
    return st;
}

sg_status sg_fusion_map_read(const char *path, sg_fusion_map **out, struct sg_diag *diag)
{
    uint8_t *data;
    size_t len;
    *out = NULL;
    sg_status st = sg_file_read_all(path, (size_t)1 << 32, &data, &len, diag);
    if (st)
        return st;
    st = sg_fusion_map_parse((const char *)data, len, path, out, diag);
    sg_free(data);
    return st;
}

void sg_fusion_map_free(sg_fusion_map *map)
{
    if (!map)
        return;
    sg_arena_free(map->arena);
    sg_free(map);
}
