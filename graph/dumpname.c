/* dumpname.c - dump file names (see sg_dumpname.h). */
#include "sg_dumpname.h"
#include "strmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sg_dump_sanitize(const char *node_name, char *buf, size_t size)
{
    size_t i = 0;
    if (!size)
        return buf;
    for (; node_name[i] && i + 1 < size; i++)
        buf[i] = (node_name[i] == '.' || node_name[i] == '/') ? '_' : node_name[i];
    buf[i] = '\0';
    return buf;
}

bool sg_dump_onnx_name(const char *node_name, bool input, uint32_t index, uint64_t timestamp_us,
                       char *buf, size_t size)
{
    char suffix[64];
    int sl = snprintf(suffix, sizeof suffix, ".%" PRIu32 ".%" PRIu64 ".npy", index, timestamp_us);
    const char *prefix = input ? "input_" : "";
    size_t pl = strlen(prefix);
    size_t nl = strlen(node_name);
    size_t limit = size - 1 < SG_DUMP_NAME_MAX ? size - 1 : SG_DUMP_NAME_MAX;
    if (pl + nl + (size_t)sl <= limit) {
        memcpy(buf, prefix, pl);
        sg_dump_sanitize(node_name, buf + pl, nl + 1);
        memcpy(buf + pl + nl, suffix, (size_t)sl + 1);
        return false;
    }
    /* Too long: keep a readable prefix and make it unique with a hash of
     * the full node name. */
    char hash[24];
    int hl = snprintf(hash, sizeof hash, "_%016" PRIx64, sg__strhash(node_name));
    size_t keep = limit - pl - (size_t)hl - (size_t)sl;
    memcpy(buf, prefix, pl);
    sg_dump_sanitize(node_name, buf + pl, keep + 1);
    memcpy(buf + pl + keep, hash, (size_t)hl);
    memcpy(buf + pl + keep + (size_t)hl, suffix, (size_t)sl + 1);
    return true;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Split off the last `want` dot-separated fields of s[0..len); fields[0] is
 * the last one. Returns the length of what precedes them, or -1. */
static long split_right(const char *s, size_t len, int want, const char **fields, size_t *field_len)
{
    size_t end = len;
    for (int k = 0; k < want; k++) {
        size_t i = end;
        while (i > 0 && s[i - 1] != '.')
            i--;
        if (i == 0)
            return -1;
        fields[k] = s + i;
        field_len[k] = end - i;
        end = i - 1;
    }
    return (long)end;
}

static bool ends_with_npy(const char *name, size_t *stem)
{
    size_t n = strlen(name);
    if (n < 5 || strcmp(name + n - 4, ".npy") != 0)
        return false;
    *stem = n - 4;
    return true;
}

bool sg_dump_parse_onnx(const char *file_name, struct sg_dump_onnx *out)
{
    size_t stem;
    if (!ends_with_npy(file_name, &stem))
        return false;
    const char *f[2];
    size_t fl[2];
    long head = split_right(file_name, stem, 2, f, fl);
    uint64_t ts, idx;
    if (head <= 0 || !parse_u64(f[0], fl[0], &ts) || !parse_u64(f[1], fl[1], &idx) ||
        idx > UINT32_MAX || (size_t)head > SG_DUMP_NAME_MAX)
        return false;
    /* Node names have no '.' after sanitising: more dots mean another format. */
    if (memchr(file_name, '.', (size_t)head))
        return false;
    memset(out, 0, sizeof *out);
    out->input = strncmp(file_name, "input_", 6) == 0 && head > 6;
    size_t skip = out->input ? 6 : 0;
    memcpy(out->node, file_name + skip, (size_t)head - skip);
    out->node[(size_t)head - skip] = '\0';
    out->index = (uint32_t)idx;
    out->timestamp = ts;
    return true;
}

bool sg_dump_device_name(const char *op_type, const char *op_name, uint64_t task, uint64_t stream,
                         uint64_t timestamp, bool input, uint32_t index, char *buf, size_t size)
{
    char name[SG_DUMP_NAME_MAX + 1];
    size_t i = 0;
    for (; op_name[i] && i < SG_DUMP_NAME_MAX; i++)
        name[i] = op_name[i] == '/' ? '_' : op_name[i];
    name[i] = '\0';
    int n = snprintf(buf, size, "%s.%s.%" PRIu64 ".%" PRIu64 ".%" PRIu64 ".%s.%" PRIu32 ".npy",
                     op_type, name, task, stream, timestamp, input ? "input" : "output", index);
    return n > 0 && (size_t)n < size && (size_t)n <= SG_DUMP_NAME_MAX;
}

bool sg_dump_parse_device(const char *file_name, struct sg_dump_device *out)
{
    size_t stem;
    if (!ends_with_npy(file_name, &stem))
        return false;
    const char *f[5];
    size_t fl[5];
    long head = split_right(file_name, stem, 5, f, fl);
    if (head <= 0)
        return false;
    bool input;
    if (fl[1] == 6 && memcmp(f[1], "output", 6) == 0)
        input = false;
    else if (fl[1] == 5 && memcmp(f[1], "input", 5) == 0)
        input = true;
    else
        return false;
    uint64_t idx, ts, stream, task;
    if (!parse_u64(f[0], fl[0], &idx) || idx > UINT32_MAX || !parse_u64(f[2], fl[2], &ts) ||
        !parse_u64(f[3], fl[3], &stream) || !parse_u64(f[4], fl[4], &task))
        return false;
    const char *dot = memchr(file_name, '.', (size_t)head);
    if (!dot)
        return false;
    size_t tl = (size_t)(dot - file_name);
    size_t nl = (size_t)head - tl - 1;
    if (tl == 0 || tl >= sizeof out->op_type || nl == 0 || nl > SG_DUMP_NAME_MAX)
        return false;
    memset(out, 0, sizeof *out);
    memcpy(out->op_type, file_name, tl);
    memcpy(out->op_name, dot + 1, nl);
    out->task = task;
    out->stream = stream;
    out->timestamp = ts;
    out->input = input;
    out->index = (uint32_t)idx;
    return true;
}
