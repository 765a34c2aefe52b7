/* json_write.c - streaming JSON writer (see sg_json.h). */
#include "sg_json.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void sg_json_init(struct sg_json *j, FILE *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void newline(struct sg_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Separator and indentation before a value or a key. */
static void before_item(struct sg_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            fputc(',', j->out);
        j->need_comma[j->depth] = true;
        newline(j);
    }
}

static void open(struct sg_json *j, char c)
{
    before_item(j);
    fputc(c, j->out);
    if (j->depth < SG_JSON_MAX_DEPTH - 1)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_(struct sg_json *j, char c)
{
    bool had_items = j->need_comma[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had_items)
        newline(j);
    fputc(c, j->out);
    if (j->depth == 0 && j->pretty)
        fputc('\n', j->out);
}

void sg_json_object_begin(struct sg_json *j)
{
    open(j, '{');
}

void sg_json_object_end(struct sg_json *j)
{
    close_(j, '}');
}

void sg_json_array_begin(struct sg_json *j)
{
    open(j, '[');
}

void sg_json_array_end(struct sg_json *j)
{
    close_(j, ']');
}

void sg_json_write_escaped(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    fputc('"', out);
    while (p < end) {
        unsigned char c = *p;
        size_t n = c < 0x80 ? 1 : sg__utf8_len(p, end);
        if (!n) {
            /* Not UTF-8 (a model may name things with any bytes): the byte
             * as a lone low surrogate, Python's surrogateescape, which
             * json.loads accepts and surgeon's reader turns back into the
             * byte. The text stays valid JSON and loses nothing. */
            fprintf(out, "\\udc%02x", c);
            p++;
            continue;
        }
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\u%04x", c);
            else
                fwrite(p, 1, n, out);
        }
        p += n;
    }
    fputc('"', out);
}

void sg_json_key(struct sg_json *j, const char *key)
{
    before_item(j);
    sg_json_write_escaped(j->out, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = true;
}

void sg_json_string_n(struct sg_json *j, const char *s, size_t len)
{
    before_item(j);
    sg_json_write_escaped(j->out, s, len);
}

void sg_json_string(struct sg_json *j, const char *s)
{
    if (!s) {
        sg_json_null(j);
        return;
    }
    sg_json_string_n(j, s, strlen(s));
}

void sg_json_int(struct sg_json *j, int64_t v)
{
    before_item(j);
    fprintf(j->out, "%" PRId64, v);
}

void sg_json_double(struct sg_json *j, double v)
{
    before_item(j);
    if (isnan(v))
        fputs("\"NaN\"", j->out);
    else if (isinf(v))
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", j->out);
    else
        fprintf(j->out, "%.17g", v);
}

void sg_json_bool(struct sg_json *j, bool v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->out);
}

void sg_json_null(struct sg_json *j)
{
    before_item(j);
    fputs("null", j->out);
}
