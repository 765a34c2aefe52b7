/*
 * precision_files.c - ATC's keep_dtype, customize_dtypes and
 * op_precision_mode files: parse, validate, write (see sg_precision.h).
 */
#include "sg_precision.h"

#include "fusion_impl.h"
#include "sg_alloc.h"
#include "sg_dtype.h"
#include "strmap.h"

#include <string.h>
#include <strings.h>

static const char *const format_names[SG_PREC_FORMAT_COUNT] = {
    [SG_PREC_KEEP_DTYPE] = "keep_dtype",
    [SG_PREC_CUSTOMIZE_DTYPES] = "customize_dtypes",
    [SG_PREC_OP_PRECISION_MODE] = "op_precision_mode",
};

const char *sg_prec_format_name(enum sg_prec_format format)
{
    return (unsigned)format < SG_PREC_FORMAT_COUNT ? format_names[format] : "?";
}

const char *const sg_prec_modes[] = {
    "high_precision",
    "high_performance",
    "support_out_of_bound_index",
    "enable_float_32_execution",
    "enable_hi_float_32_execution",
    "keep_fp16",
    "super_performance",
    NULL,
};

const char *sg_prec_mode_find(const char *name, size_t len)
{
    for (const char *const *m = sg_prec_modes; *m; m++)
        if (strlen(*m) == len && memcmp(*m, name, len) == 0)
            return *m;
    return NULL;
}

/* ATC's dtype names; the first name of a code is the one written. */
static const struct {
    const char *name;
    int32_t code;
} dtypes[] = {
    {"float16", SG_DTYPE_FLOAT16},   {"float32", SG_DTYPE_FLOAT}, {"float", SG_DTYPE_FLOAT},
    {"bfloat16", SG_DTYPE_BFLOAT16}, {"double", SG_DTYPE_DOUBLE}, {"int8", SG_DTYPE_INT8},
    {"int16", SG_DTYPE_INT16},       {"int32", SG_DTYPE_INT32},   {"int64", SG_DTYPE_INT64},
    {"uint8", SG_DTYPE_UINT8},       {"uint16", SG_DTYPE_UINT16}, {"uint32", SG_DTYPE_UINT32},
    {"uint64", SG_DTYPE_UINT64},     {"bool", SG_DTYPE_BOOL},
};

const char *sg_prec_dtype_name(int32_t dtype)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].code == dtype)
            return dtypes[i].name;
    return NULL;
}

int32_t sg_prec_dtype_parse(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
            return dtypes[i].code;
    return -1;
}

/* ONNX op types that ATC's ONNX parser maps to a differently named op
 * (from the REGISTER_CUSTOM_OP mappings of its ONNX plugins). */
static const struct {
    const char *onnx, *atc;
} optype_aliases[] = {
    {"Softmax", "SoftmaxV2"}, {"MatMul", "BatchMatMulV2"},         {"Gemm", "MatMulV2"},
    {"Conv", "Conv2D"},       {"LayerNormalization", "LayerNorm"},
};

const char *sg_atc_optype_for_onnx(const char *onnx_type)
{
    for (size_t i = 0; i < sizeof optype_aliases / sizeof optype_aliases[0]; i++)
        if (strcmp(optype_aliases[i].onnx, onnx_type) == 0)
            return optype_aliases[i].atc;
    return NULL;
}

/* ------------------------------------------------------------- entries */

sg_prec_file *sg_prec_file_create(enum sg_prec_format format)
{
    if ((unsigned)format >= SG_PREC_FORMAT_COUNT)
        return NULL;
    sg_prec_file *f = sg_calloc(1, sizeof *f);
    if (f)
        f->format = format;
    return f;
}

static void entry_clear(struct sg_prec_entry *e)
{
    sg_free(e->name);
    sg_free(e->in);
    sg_free(e->out);
}

/* Entries by name, one map per target: a file of 100,000 lines is read in
 * linear time (each line is checked against the entries before it). Keys
 * are the entries' own names; values the entry index + 1. */
struct sg__prec_index {
    struct sg__strmap by_target[2];
};

void sg_prec_file_free(sg_prec_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_entries; i++)
        entry_clear(&f->entries[i]);
    if (f->index) {
        sg__strmap_free(&f->index->by_target[0]);
        sg__strmap_free(&f->index->by_target[1]);
        sg_free(f->index);
    }
    sg_free(f->entries);
    sg_free(f);
}

static bool is_ident(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

/* Why `name` cannot be an entry of this format, or NULL when it can. */
static const char *name_problem(enum sg_prec_format format, enum sg_prec_target target,
                                const char *name, size_t len)
{
    if (len == 0)
        return "an empty name";
    for (size_t i = 0; i < len; i++)
        if (name[i] == '\n' || name[i] == '\r' || name[i] == '\0')
            return "a name with a line break";
    if (name[0] == ' ' || name[0] == '\t' || name[len - 1] == ' ' || name[len - 1] == '\t')
        return "a name with leading or trailing blanks";
    /* Written first in a file it would be read as the file's byte-order
     * mark and dropped (found by tools/fuzz/fuzz_precision.c). */
    if (len >= 3 && memcmp(name, "\xEF\xBB\xBF", 3) == 0)
        return "a name starting with a byte-order mark (U+FEFF)";
    if (target == SG_PREC_OPTYPE)
        return is_ident(name, len) ? NULL
                                   : "an op type that is not an identifier (letters, digits, '_')";
    if (len >= 7 && memcmp(name, "OpType:", 7) == 0)
        return "a node name starting with \"OpType:\" (it would be read as a type)";
    if (format == SG_PREC_CUSTOMIZE_DTYPES && len >= 1 && name[len - 1] == ':')
        return "a node name ending in ':' (it would run into the \"::\" separator)";
    if (format == SG_PREC_OP_PRECISION_MODE && (memchr(name, '=', len) || name[0] == '['))
        return "a node name holding '=' or starting with '[' (ini syntax)";
    return NULL;
}

static long index_get(const sg_prec_file *f, enum sg_prec_target target, const char *name,
                      size_t len)
{
    if (!f->index || (unsigned)target > 1)
        return -1;
    void *v = sg__strmap_get_n(&f->index->by_target[target == SG_PREC_OPTYPE], name, len,
                               sg__strhash_n(name, len));
    return v ? (long)((uintptr_t)v - 1) : -1;
}

long sg_prec_file_find(const sg_prec_file *f, enum sg_prec_target target, const char *name)
{
    return f ? index_get(f, target, name, strlen(name)) : -1;
}

long sg_prec_file_find_n(const sg_prec_file *f, enum sg_prec_target target, const char *name,
                         size_t len)
{
    return f ? index_get(f, target, name, len) : -1;
}

/* The entry with this target and name, or NULL. */
static struct sg_prec_entry *find_entry(sg_prec_file *f, enum sg_prec_target target,
                                        const char *name, size_t len)
{
    long i = index_get(f, target, name, len);
    return i < 0 ? NULL : &f->entries[i];
}

/* Add an entry without payload (or return the existing one, *existed set). */
static struct sg_prec_entry *new_entry(sg_prec_file *f, enum sg_prec_target target,
                                       const char *name, size_t len, bool *existed)
{
    struct sg_prec_entry *e = find_entry(f, target, name, len);
    *existed = e != NULL;
    if (e)
        return e;
    if (f->n_entries == f->cap_entries) {
        size_t cap = f->cap_entries ? f->cap_entries * 2 : 16;
        struct sg_prec_entry *g = sg_realloc(f->entries, cap * sizeof *g);
        if (!g)
            return NULL;
        f->entries = g;
        f->cap_entries = cap;
    }
    if (!f->index && !(f->index = sg_calloc(1, sizeof *f->index)))
        return NULL;
    char *copy = sg_malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, name, len);
    copy[len] = '\0';
    if (sg__strmap_put(&f->index->by_target[target == SG_PREC_OPTYPE], copy,
                       (void *)(uintptr_t)(f->n_entries + 1))) {
        sg_free(copy);
        return NULL;
    }
    e = &f->entries[f->n_entries++];
    memset(e, 0, sizeof *e);
    e->target = target;
    e->name = copy;
    return e;
}

static sg_status check_add(const sg_prec_file *f, enum sg_prec_format want,
                           enum sg_prec_target target, const char *name, struct sg_diag *diag)
{
    if (f->format != want)
        return sg_diag_set(diag, SG_EINVAL, "cannot add a %s entry to a %s file",
                           sg_prec_format_name(want), sg_prec_format_name(f->format));
    if (target != SG_PREC_NODE && target != SG_PREC_OPTYPE)
        return sg_diag_set(diag, SG_EINVAL, "invalid entry target %d", (int)target);
    const char *why = name_problem(f->format, target, name, strlen(name));
    if (why)
        return sg_diag_set(diag, SG_EINVAL, "'%s': %s cannot be a %s entry", name, why,
                           sg_prec_format_name(f->format));
    return SG_OK;
}

sg_status sg_prec_file_add(sg_prec_file *f, enum sg_prec_target target, const char *name,
                           struct sg_diag *diag)
{
    sg_status st = check_add(f, SG_PREC_KEEP_DTYPE, target, name, diag);
    if (st)
        return st;
    bool existed;
    if (!new_entry(f, target, name, strlen(name), &existed))
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    return SG_OK;
}

static sg_status copy_dtypes(const int32_t *src, uint32_t n, int32_t **dst, struct sg_diag *diag)
{
    *dst = NULL;
    if (n == 0)
        return SG_OK;
    for (uint32_t i = 0; i < n; i++)
        if (!sg_prec_dtype_name(src[i]))
            return sg_diag_set(diag, SG_EINVAL, "dtype %s cannot be named in customize_dtypes",
                               sg_dtype_name(src[i]));
    *dst = sg_malloc(n * sizeof **dst);
    if (!*dst)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    memcpy(*dst, src, n * sizeof **dst);
    return SG_OK;
}

sg_status sg_prec_file_add_dtypes(sg_prec_file *f, enum sg_prec_target target, const char *name,
                                  const int32_t *in, uint32_t n_in, const int32_t *out,
                                  uint32_t n_out, struct sg_diag *diag)
{
    sg_status st = check_add(f, SG_PREC_CUSTOMIZE_DTYPES, target, name, diag);
    if (st)
        return st;
    if (n_in == 0 && n_out == 0)
        return sg_diag_set(diag, SG_EINVAL, "'%s': give input or output dtypes", name);
    if (n_in > SG_PREC_MAX_DTYPES || n_out > SG_PREC_MAX_DTYPES)
        return sg_diag_set(diag, SG_EINVAL, "'%s': more than %d dtypes", name, SG_PREC_MAX_DTYPES);
    int32_t *ci = NULL, *co = NULL;
    if ((st = copy_dtypes(in, n_in, &ci, diag)) || (st = copy_dtypes(out, n_out, &co, diag)))
        goto fail;
    bool existed;
    struct sg_prec_entry *e = new_entry(f, target, name, strlen(name), &existed);
    if (!e) {
        st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
        goto fail;
    }
    sg_free(e->in);
    sg_free(e->out);
    e->in = ci, e->n_in = n_in;
    e->out = co, e->n_out = n_out;
    e->line = 0;
    return SG_OK;
fail:
    sg_free(ci);
    sg_free(co);
    return st;
}

sg_status sg_prec_file_add_mode(sg_prec_file *f, enum sg_prec_target target, const char *name,
                                const char *mode, struct sg_diag *diag)
{
    sg_status st = check_add(f, SG_PREC_OP_PRECISION_MODE, target, name, diag);
    if (st)
        return st;
    const char *m = sg_prec_mode_find(mode, strlen(mode));
    if (!m)
        return sg_diag_set(diag, SG_EINVAL,
                           "unknown op precision mode '%s' (valid: high_precision, "
                           "high_performance, support_out_of_bound_index, "
                           "enable_float_32_execution, enable_hi_float_32_execution, keep_fp16, "
                           "super_performance)",
                           mode);
    bool existed;
    struct sg_prec_entry *e = new_entry(f, target, name, strlen(name), &existed);
    if (!e)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    e->mode = m;
    e->line = 0;
    return SG_OK;
}

/* -------------------------------------------------------------- parsing */

struct lexer {
    const char *label;
    unsigned line;
    const char *ls; /* start of the current line */
    struct sg_diag *diag;
};

__attribute__((format(printf, 4, 5))) static sg_status perr(const struct lexer *L, const char *pos,
                                                            sg_status st, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_diag_set(L->diag, st, "%s:%u:%u: %s", L->label, L->line, sg__column(L->ls, pos), msg);
}

static const char *find_str(const char *s, const char *e, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = s; p + n <= e; p++)
        if (memcmp(p, needle, n) == 0)
            return p;
    return NULL;
}

static const char *find_last_str(const char *s, const char *e, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = e - n; p >= s; p--)
        if (memcmp(p, needle, n) == 0)
            return p;
    return NULL;
}

/* Hints for a line that belongs to another of the three formats. */
static const char *other_format(enum sg_prec_format format, const char *s, const char *e)
{
    if (format != SG_PREC_CUSTOMIZE_DTYPES &&
        (find_str(s, e, ":InputDtype:") || find_str(s, e, ":OutputDtype:")))
        return " (this is customize_dtypes syntax)";
    if (format != SG_PREC_OP_PRECISION_MODE) {
        if (e - s >= 2 && *s == '[' && e[-1] == ']')
            return " (this is an op_precision_mode section)";
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (eq) {
            const char *vs = eq + 1, *ve = e;
            sg__trim(&vs, &ve);
            if (sg_prec_mode_find(vs, (size_t)(ve - vs)))
                return " (this is op_precision_mode syntax)";
        }
    }
    return "";
}

/* "OpType::" prefix handling shared by keep_dtype and customize_dtypes:
 * sets *is_type and *rest; rejects near misses. */
static sg_status optype_prefix(const struct lexer *L, enum sg_prec_format format, const char *s,
                               const char *e, bool *is_type, const char **rest)
{
    size_t len = (size_t)(e - s);
    *is_type = false;
    *rest = s;
    if (len >= 8 && memcmp(s, "OpType::", 8) == 0) {
        *is_type = true;
        *rest = s + 8;
        return SG_OK;
    }
    if (len >= 8 && strncasecmp(s, "optype::", 8) == 0)
        return perr(L, s, SG_EPARSE, "write \"OpType::\" exactly (it is case-sensitive)");
    if (len >= 7 && memcmp(s, "OpType:", 7) == 0)
        return perr(L, s, SG_EPARSE, "\"OpType:\" takes two colons: OpType::%.*s%s", (int)(len - 7),
                    s + 7, format == SG_PREC_KEEP_DTYPE ? "" : ":...");
    return SG_OK;
}

static sg_status parse_keep_line(sg_prec_file *f, const struct lexer *L, const char *s,
                                 const char *e)
{
    const char *hint = other_format(SG_PREC_KEEP_DTYPE, s, e);
    if (*hint)
        return perr(L, s, SG_EPARSE, "not a keep_dtype entry%s", hint);
    bool is_type;
    const char *rest;
    sg_status st = optype_prefix(L, SG_PREC_KEEP_DTYPE, s, e, &is_type, &rest);
    if (st)
        return st;
    if (is_type && !is_ident(rest, (size_t)(e - rest)))
        return perr(L, rest, SG_EPARSE,
                    rest == e ? "no op type after \"OpType::\""
                              : "op type \"%.*s\" is not an identifier (letters, digits, '_')",
                    (int)(e - rest), rest);
    const char *why =
        is_type ? NULL : name_problem(SG_PREC_KEEP_DTYPE, SG_PREC_NODE, rest, (size_t)(e - rest));
    if (why)
        return perr(L, rest, SG_EPARSE, "%s cannot be a keep_dtype entry", why);
    bool existed;
    struct sg_prec_entry *ent =
        new_entry(f, is_type ? SG_PREC_OPTYPE : SG_PREC_NODE, rest, (size_t)(e - rest), &existed);
    if (!ent)
        return sg_diag_set(L->diag, SG_ENOMEM, "%s: out of memory", L->label);
    if (!existed)
        ent->line = L->line;
    return SG_OK;
}

/* Parse "InputDtype:a,b,OutputDtype:c" in [s, e) into the entry. */
static sg_status parse_dtype_spec(const struct lexer *L, const char *s, const char *e, int32_t *in,
                                  uint32_t *n_in, int32_t *out, uint32_t *n_out)
{
    int side = -1; /* 0: input, 1: output */
    *n_in = *n_out = 0;
    const char *p = s;
    if (p == e)
        return perr(L, p, SG_EPARSE, "expected InputDtype:... or OutputDtype:... after the name");
    while (p <= e) {
        const char *comma = memchr(p, ',', (size_t)(e - p));
        const char *te = comma ? comma : e;
        const char *ts = p;
        const char *ds = ts;
        if (te - ts >= 11 && memcmp(ts, "InputDtype:", 11) == 0) {
            if (side != -1)
                return perr(L, ts, SG_EPARSE,
                            side == 0 ? "InputDtype given twice"
                                      : "InputDtype must come before OutputDtype");
            side = 0;
            ds = ts + 11;
        } else if (te - ts >= 12 && memcmp(ts, "OutputDtype:", 12) == 0) {
            if (side == 1)
                return perr(L, ts, SG_EPARSE, "OutputDtype given twice");
            side = 1;
            ds = ts + 12;
        } else if (side == -1) {
            return perr(L, ts, SG_EPARSE,
                        "expected InputDtype:... or OutputDtype:..., found \"%.*s\"",
                        (int)(te - ts), ts);
        }
        if (ds == te)
            return perr(L, ds, SG_EPARSE, "missing dtype");
        int32_t code = sg_prec_dtype_parse(ds, (size_t)(te - ds));
        if (code < 0)
            return perr(L, ds, SG_EPARSE,
                        "unknown dtype \"%.*s\" (valid: float16, float32, float, bfloat16, "
                        "double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool)",
                        (int)(te - ds), ds);
        uint32_t *n = side == 0 ? n_in : n_out;
        if (*n == SG_PREC_MAX_DTYPES)
            return perr(L, ds, SG_EPARSE, "more than %d dtypes", SG_PREC_MAX_DTYPES);
        (side == 0 ? in : out)[(*n)++] = code;
        if (!comma)
            break;
        p = comma + 1;
    }
    return SG_OK;
}

static sg_status parse_customize_line(sg_prec_file *f, const struct lexer *L, const char *s,
                                      const char *e, int32_t *in, int32_t *out)
{
    const char *hint = other_format(SG_PREC_CUSTOMIZE_DTYPES, s, e);
    if (*hint)
        return perr(L, s, SG_EPARSE, "not a customize_dtypes entry%s", hint);
    bool is_type;
    const char *rest;
    sg_status st = optype_prefix(L, SG_PREC_CUSTOMIZE_DTYPES, s, e, &is_type, &rest);
    if (st)
        return st;
    const char *ns = rest, *ne, *spec;
    if (is_type) {
        const char *colon = memchr(rest, ':', (size_t)(e - rest));
        ne = colon ? colon : e;
        if (!is_ident(ns, (size_t)(ne - ns)))
            return perr(L, ns, SG_EPARSE,
                        ns == ne ? "no op type after \"OpType::\""
                                 : "op type \"%.*s\" is not an identifier (letters, digits, '_')",
                        (int)(ne - ns), ns);
        if (!colon)
            return perr(L, e, SG_EPARSE, "expected OpType::%.*s:InputDtype:...,OutputDtype:...",
                        (int)(ne - ns), ns);
        spec = colon + 1;
    } else {
        const char *sep = find_last_str(s, e, "::");
        if (!sep)
            return perr(L, s, SG_EPARSE,
                        "expected NODE::InputDtype:...,OutputDtype:... or "
                        "OpType::TYPE:InputDtype:...,OutputDtype:...");
        ne = sep;
        spec = sep + 2;
        if (ns == ne)
            return perr(L, s, SG_EPARSE, "no node name before \"::\"");
        const char *why =
            name_problem(SG_PREC_CUSTOMIZE_DTYPES, SG_PREC_NODE, ns, (size_t)(ne - ns));
        if (why)
            return perr(L, ns, SG_EPARSE, "%s cannot be a customize_dtypes entry", why);
    }
    uint32_t n_in, n_out;
    if ((st = parse_dtype_spec(L, spec, e, in, &n_in, out, &n_out)))
        return st;
    enum sg_prec_target target = is_type ? SG_PREC_OPTYPE : SG_PREC_NODE;
    const struct sg_prec_entry *dup = find_entry(f, target, ns, (size_t)(ne - ns));
    if (dup)
        return perr(L, ns, SG_EPARSE, "%s\"%.*s\" given twice (first on line %u)",
                    is_type ? "OpType::" : "", (int)(ne - ns), ns, dup->line);
    bool existed;
    struct sg_prec_entry *ent = new_entry(f, target, ns, (size_t)(ne - ns), &existed);
    if (!ent || copy_dtypes(in, n_in, &ent->in, NULL) || copy_dtypes(out, n_out, &ent->out, NULL))
        return sg_diag_set(L->diag, SG_ENOMEM, "%s: out of memory", L->label);
    ent->n_in = n_in;
    ent->n_out = n_out;
    ent->line = L->line;
    return SG_OK;
}

static sg_status parse_mode_line(sg_prec_file *f, const struct lexer *L, const char *s,
                                 const char *e, enum sg_prec_target *section)
{
    if (*s == '[') {
        if (e[-1] != ']')
            return perr(L, s, SG_EPARSE, "section header without ']'");
        const char *ns = s + 1, *ne = e - 1;
        sg__trim(&ns, &ne);
        size_t n = (size_t)(ne - ns);
        if (n == 8 && memcmp(ns, "ByOpType", 8) == 0)
            *section = SG_PREC_OPTYPE;
        else if (n == 10 && memcmp(ns, "ByNodeName", 10) == 0)
            *section = SG_PREC_NODE;
        else
            return perr(L, ns, SG_EPARSE,
                        "unknown section [%.*s] (expected [ByOpType] or [ByNodeName])", (int)n, ns);
        return SG_OK;
    }
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (!eq) {
        const char *hint = other_format(SG_PREC_OP_PRECISION_MODE, s, e);
        return perr(L, s, SG_EPARSE, "expected NAME=MODE or a [section]%s", hint);
    }
    const char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
    sg__trim(&ks, &ke);
    sg__trim(&vs, &ve);
    if (ks == ke)
        return perr(L, s, SG_EPARSE, "no name before '='");
    if (*section == SG_PREC_OPTYPE && !is_ident(ks, (size_t)(ke - ks)))
        return perr(L, ks, SG_EPARSE,
                    "op type \"%.*s\" is not an identifier (letters, digits, '_'); node names "
                    "go under [ByNodeName]",
                    (int)(ke - ks), ks);
    const char *mode = sg_prec_mode_find(vs, (size_t)(ve - vs));
    if (!mode)
        return perr(L, vs, SG_EPARSE,
                    "unknown mode \"%.*s\" (valid: high_precision, high_performance, "
                    "support_out_of_bound_index, enable_float_32_execution, "
                    "enable_hi_float_32_execution, keep_fp16, super_performance)",
                    (int)(ve - vs), vs);
    const struct sg_prec_entry *dup = find_entry(f, *section, ks, (size_t)(ke - ks));
    if (dup)
        return perr(L, ks, SG_EPARSE, "\"%.*s\" given twice in [%s] (first on line %u)",
                    (int)(ke - ks), ks, *section == SG_PREC_OPTYPE ? "ByOpType" : "ByNodeName",
                    dup->line);
    bool existed;
    struct sg_prec_entry *ent = new_entry(f, *section, ks, (size_t)(ke - ks), &existed);
    if (!ent)
        return sg_diag_set(L->diag, SG_ENOMEM, "%s: out of memory", L->label);
    ent->mode = mode;
    ent->line = L->line;
    return SG_OK;
}

sg_status sg_prec_file_parse(enum sg_prec_format format, const char *text, size_t len,
                             const char *label, sg_prec_file **out, struct sg_diag *diag)
{
    *out = NULL;
    if (!label)
        label = sg_prec_format_name(format);
    if ((unsigned)format >= SG_PREC_FORMAT_COUNT)
        return sg_diag_set(diag, SG_EINVAL, "invalid precision file format %d", (int)format);
    if (len > SG__TEXT_MAX_BYTES)
        return sg_diag_set(diag, SG_ETOOBIG, "%s: %zu bytes, too large for a %s file", label, len,
                           sg_prec_format_name(format));
    sg_status st = sg__check_no_nul(text, len, label, diag);
    if (st)
        return st;
    sg_prec_file *f = sg_prec_file_create(format);
    int32_t *in = NULL, *outd = NULL;
    if (format == SG_PREC_CUSTOMIZE_DTYPES) {
        in = sg_malloc(SG_PREC_MAX_DTYPES * sizeof *in);
        outd = sg_malloc(SG_PREC_MAX_DTYPES * sizeof *outd);
    }
    if (!f || (format == SG_PREC_CUSTOMIZE_DTYPES && (!in || !outd))) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
        goto out;
    }
    struct lexer L = {.label = label, .diag = diag};
    enum sg_prec_target section = SG_PREC_OPTYPE; /* bare lines of the old ini form */
    size_t pos = 0;
    const char *le;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    while (sg__next_line(text, len, &pos, &L.ls, &le)) {
        L.line++;
        const char *s = L.ls, *e = le;
        sg__trim(&s, &e);
        if (s == e)
            continue;
        switch (format) {
        case SG_PREC_KEEP_DTYPE:
            st = parse_keep_line(f, &L, s, e);
            break;
        case SG_PREC_CUSTOMIZE_DTYPES:
            st = parse_customize_line(f, &L, s, e, in, outd);
            break;
        case SG_PREC_OP_PRECISION_MODE:
            st = parse_mode_line(f, &L, s, e, &section);
            break;
        case SG_PREC_FORMAT_COUNT:
            break;
        }
        if (st)
            goto out;
    }
out:
    sg_free(in);
    sg_free(outd);
    if (st) {
        sg_prec_file_free(f);
        return st;
    }
    *out = f;
    return SG_OK;
}

sg_status sg_prec_file_read(enum sg_prec_format format, const char *path, sg_prec_file **out,
                            struct sg_diag *diag)
{
    *out = NULL;
    char *buf;
    size_t len;
    sg_status st = sg__read_text(path, SG__TEXT_MAX_BYTES, &buf, &len, diag);
    if (st)
        return st;
    st = sg_prec_file_parse(format, buf, len, path, out, diag);
    sg_free(buf);
    return st;
}

/* -------------------------------------------------------------- writing */

static void print_dtypes(FILE *out, const char *key, const int32_t *d, uint32_t n)
{
    fputs(key, out);
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "," : "", sg_prec_dtype_name(d[i]));
}

sg_status sg_prec_file_print(const sg_prec_file *f, FILE *out)
{
    switch (f->format) {
    case SG_PREC_KEEP_DTYPE:
        for (size_t i = 0; i < f->n_entries; i++)
            fprintf(out, "%s%s\n", f->entries[i].target == SG_PREC_OPTYPE ? "OpType::" : "",
                    f->entries[i].name);
        break;
    case SG_PREC_CUSTOMIZE_DTYPES:
        for (size_t i = 0; i < f->n_entries; i++) {
            const struct sg_prec_entry *e = &f->entries[i];
            if (e->target == SG_PREC_OPTYPE)
                fprintf(out, "OpType::%s:", e->name);
            else
                fprintf(out, "%s::", e->name);
            if (e->n_in)
                print_dtypes(out, "InputDtype:", e->in, e->n_in);
            if (e->n_in && e->n_out)
                fputc(',', out);
            if (e->n_out)
                print_dtypes(out, "OutputDtype:", e->out, e->n_out);
            fputc('\n', out);
        }
        break;
    case SG_PREC_OP_PRECISION_MODE:
        for (int t = SG_PREC_OPTYPE; t >= SG_PREC_NODE; t--) {
            bool header = false;
            for (size_t i = 0; i < f->n_entries; i++) {
                const struct sg_prec_entry *e = &f->entries[i];
                if ((int)e->target != t)
                    continue;
                if (!header)
                    fputs(t == SG_PREC_OPTYPE ? "[ByOpType]\n" : "[ByNodeName]\n", out);
                header = true;
                fprintf(out, "%s=%s\n", e->name, e->mode);
            }
        }
        break;
    case SG_PREC_FORMAT_COUNT:
        break;
    }
    return ferror(out) ? SG_EIO : SG_OK;
}

static sg_status write_cb(FILE *out, const void *ctx, struct sg_diag *diag)
{
    (void)diag;
    return sg_prec_file_print(ctx, out);
}

sg_status sg_prec_file_write(const sg_prec_file *f, const char *path, struct sg_diag *diag)
{
    return sg__write_atomic(path, write_cb, f, diag);
}

/* ------------------------------------------------------ model matching */

/* Every node name and op type of a model (ATC's names of types too), for
 * matching all entries in one walk of the model instead of one per entry. */
struct model_names {
    struct sg__strmap nodes, types;
    sg_status st;
};

static sg_status collect_graph(sg_graph *g, void *ctx)
{
    struct model_names *mn = ctx;
    for (sg_node *n = g->first; n && !mn->st; n = n->next) {
        const char *alias = sg_atc_optype_for_onnx(n->op_type);
        if ((n->name && sg__strmap_put(&mn->nodes, n->name, n)) ||
            sg__strmap_put(&mn->types, n->op_type, n) ||
            (alias && sg__strmap_put(&mn->types, alias, n)))
            mn->st = SG_ENOMEM;
        else
            sg_node_for_each_subgraph(n, collect_graph, ctx);
    }
    return mn->st;
}

size_t sg_prec_file_unmatched(const sg_prec_file *f, const sg_model *m, bool *unmatched)
{
    struct model_names mn = {0};
    if (m->graph)
        collect_graph(m->graph, &mn);
    size_t count = 0;
    for (size_t i = 0; i < f->n_entries; i++) {
        const struct sg_prec_entry *e = &f->entries[i];
        /* Out of memory: every entry counts as found (no false warnings). */
        bool found = mn.st || sg__strmap_get(e->target == SG_PREC_NODE ? &mn.nodes : &mn.types,
                                             e->name) != NULL;
        unmatched[i] = !found;
        count += !found;
    }
    sg__strmap_free(&mn.nodes);
    sg__strmap_free(&mn.types);
    return count;
}
