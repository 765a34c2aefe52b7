/*
 * npy.c - numpy .npy files (format 1.0, 2.0, 3.0): read any byte order and
 * memory order into native little-endian C order; write 1.0 (2.0 when the
 * header is too long for 1.0), with the header padded to 64 bytes as numpy
 * does so that numpy and msit read our dumps unchanged.
 */
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_tensorfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

struct descr_entry {
    const char *code; /* without the byte-order character */
    int32_t dtype;
};

static const struct descr_entry descr_table[] = {
    {"b1", SG_DTYPE_BOOL},      {"i1", SG_DTYPE_INT8},        {"u1", SG_DTYPE_UINT8},
    {"i2", SG_DTYPE_INT16},     {"u2", SG_DTYPE_UINT16},      {"i4", SG_DTYPE_INT32},
    {"u4", SG_DTYPE_UINT32},    {"i8", SG_DTYPE_INT64},       {"u8", SG_DTYPE_UINT64},
    {"f2", SG_DTYPE_FLOAT16},   {"f4", SG_DTYPE_FLOAT},       {"f8", SG_DTYPE_DOUBLE},
    {"c8", SG_DTYPE_COMPLEX64}, {"c16", SG_DTYPE_COMPLEX128},
};

/* Header dict parsing: a python literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
struct header {
    char descr[16];
    bool fortran;
    bool have_descr, have_order, have_shape;
    uint32_t rank;
    int64_t dims[SG_MAX_RANK];
};

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parse a quoted python string into buf; returns the position after it. */
static const char *parse_str(const char *p, const char *end, char *buf, size_t size)
{
    if (p >= end || (*p != '\'' && *p != '"'))
        return NULL;
    char q = *p++;
    size_t n = 0;
    while (p < end && *p != q) {
        /* A NUL would end the C string early ('<f4\0junk' read as '<f4'):
         * no control byte belongs in a key or a dtype. */
        if (n + 1 >= size || (unsigned char)*p < 0x20 || *p == 0x7f)
            return NULL;
        buf[n++] = *p++;
    }
    if (p >= end)
        return NULL;
    buf[n] = '\0';
    return p + 1;
}

static const char *parse_shape(const char *p, const char *end, struct header *h)
{
    if (p >= end || *p != '(')
        return NULL;
    p++;
    h->rank = 0;
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == ')')
            return p + 1;
        if (p >= end || !isdigit((unsigned char)*p) || h->rank >= SG_MAX_RANK)
            return NULL;
        int64_t v = 0;
        while (p < end && isdigit((unsigned char)*p)) {
            if (v > (INT64_MAX - 9) / 10)
                return NULL;
            v = v * 10 + (*p++ - '0');
        }
        while (p < end && (*p == 'L' || *p == 'l'))
            p++; /* python 2 longs */
        h->dims[h->rank++] = v;
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p < end && *p == ')')
            return p + 1;
        else
            return NULL;
    }
}

static bool parse_header(const char *p, const char *end, struct header *h)
{
    memset(h, 0, sizeof *h);
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return false;
    p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == '}')
            break;
        char key[32];
        if (!(p = parse_str(p, end, key, sizeof key)))
            return false;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return false;
        p = skip_ws(p + 1, end);
        if (strcmp(key, "descr") == 0) {
            if (!(p = parse_str(p, end, h->descr, sizeof h->descr)))
                return false;
            h->have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (end - p >= 4 && memcmp(p, "True", 4) == 0) {
                h->fortran = true;
                p += 4;
            } else if (end - p >= 5 && memcmp(p, "False", 5) == 0) {
                p += 5;
            } else {
                return false;
            }
            h->have_order = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!(p = parse_shape(p, end, h)))
                return false;
            h->have_shape = true;
        } else {
            return false;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p++;
    }
    return h->have_descr && h->have_order && h->have_shape;
}

static void byteswap(uint8_t *data, size_t count, size_t width)
{
    for (size_t i = 0; i < count; i++) {
        uint8_t *e = data + i * width;
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            uint8_t t = e[a];
            e[a] = e[b];
            e[b] = t;
        }
    }
}

/* Fortran (column-major) order to C (row-major) order. */
static void *fortran_to_c(const uint8_t *src, const struct sg_array *a, size_t es)
{
    uint8_t *dst = sg_malloc(a->nbytes ? a->nbytes : 1);
    if (!dst)
        return NULL;
    int64_t numel = sg_array_numel(a);
    int64_t idx[SG_MAX_RANK] = {0};
    int64_t fstride[SG_MAX_RANK];
    int64_t s = 1;
    for (uint32_t k = 0; k < a->rank; k++) {
        fstride[k] = s;
        s *= a->dims[k];
    }
    for (int64_t c = 0; c < numel; c++) {
        int64_t f = 0;
        for (uint32_t k = 0; k < a->rank; k++)
            f += idx[k] * fstride[k];
        memcpy(dst + (size_t)c * es, src + (size_t)f * es, es);
        for (int k = (int)a->rank - 1; k >= 0; k--) {
            if (++idx[k] < a->dims[k])
                break;
            idx[k] = 0;
        }
    }
    return dst;
}

/*
 * A descr numpy does not know, which ml_dtypes writes (see sg_dtype.h):
 * "V2" is bfloat16, "V1" any of the 1-byte float8 types and the 4-bit types
 * held one per byte, "f1" float8_e5m2. The type is `expect` when it is one
 * the descr can hold: SG_ENOTFOUND for another descr, SG_ETYPE when the
 * expected type does not fit (or none is expected).
 */
static sg_status ml_dtypes_descr(const char *code, int32_t expect, int32_t *dtype)
{
    bool fits;
    if (strcmp(code, "V2") == 0)
        fits = expect == SG_DTYPE_BFLOAT16;
    else if (strcmp(code, "V1") == 0)
        fits = sg_dtype_is_float8(expect) || sg_dtype_is_4bit(expect);
    else if (strcmp(code, "f1") == 0)
        fits = expect == SG_DTYPE_FLOAT8E5M2;
    else
        return SG_ENOTFOUND;
    if (!fits)
        return SG_ETYPE;
    *dtype = expect;
    return SG_OK;
}

sg_status sg_npy_read_buffer(const void *buf, size_t len, const char *label, struct sg_array *out,
                             struct sg_diag *diag)
{
    return sg_npy_read_buffer_as(buf, len, label, SG_DTYPE_UNDEFINED, out, diag);
}

sg_status sg_npy_read_buffer_as(const void *buf, size_t len, const char *label, int32_t expect,
                                struct sg_array *out, struct sg_diag *diag)
{
    const uint8_t *p = buf;
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(p, npy_magic, 6) != 0)
        return sg_diag_set(diag, SG_EPARSE, "%s: not a .npy file (bad magic)", label);
    uint8_t major = p[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return sg_diag_set(diag, SG_EPARSE, "%s: truncated .npy header", label);
        hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
        start = 12;
    } else {
        return sg_diag_set(diag, SG_EUNSUPPORTED, "%s: .npy format version %u is not supported",
                           label, major);
    }
    if (hlen > len - start)
        return sg_diag_set(diag, SG_EPARSE, "%s: truncated .npy header", label);
    struct header h;
    if (!parse_header((const char *)p + start, (const char *)p + start + hlen, &h))
        return sg_diag_set(diag, SG_EPARSE, "%s: malformed .npy header", label);
    char order = h.descr[0];
    const char *code = h.descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return sg_diag_set(diag, SG_EUNSUPPORTED, "%s: unsupported .npy dtype '%s'", label,
                           h.descr);
    int32_t dtype = SG_DTYPE_UNDEFINED;
    for (size_t i = 0; i < sizeof descr_table / sizeof descr_table[0]; i++)
        if (strcmp(code, descr_table[i].code) == 0)
            dtype = descr_table[i].dtype;
    if (dtype == SG_DTYPE_UNDEFINED) {
        sg_status st = ml_dtypes_descr(code, expect, &dtype);
        if (st == SG_ENOTFOUND)
            return sg_diag_set(diag, SG_EUNSUPPORTED, "%s: unsupported .npy dtype '%s'", label,
                               h.descr);
        if (st)
            return sg_diag_set(diag, SG_ETYPE,
                               "%s: .npy dtype '%s' is how the ml_dtypes package saves "
                               "bfloat16 (V2) and float8, 4-bit integer and float4 (V1, one "
                               "element a byte) arrays; the file does not say which%s%s",
                               label, h.descr, expect ? ", and it cannot hold " : "",
                               expect ? sg_dtype_name(expect)
                                      : ": it reads only as an input "
                                        "of such a type");
    }
    struct sg_array a = {.dtype = dtype, .rank = h.rank};
    memcpy(a.dims, h.dims, sizeof a.dims);
    int64_t numel = sg_array_numel(&a);
    size_t es = sg_dtype_size(dtype);
    if (numel < 0 || (uint64_t)numel > SIZE_MAX / es)
        return sg_diag_set(diag, SG_ERANGE, "%s: shape too large", label);
    a.nbytes = (size_t)numel * es;
    size_t data_off = start + hlen;
    if (len - data_off < a.nbytes)
        return sg_diag_set(
            diag, SG_EPARSE, "%s: truncated .npy data: %zu bytes for shape %s of %s, need %zu",
            label, len - data_off, sg__dims_str(a.dims, a.rank), sg_dtype_name(dtype), a.nbytes);
    const uint8_t *src = p + data_off;
    if (h.fortran && a.rank > 1)
        a.data = fortran_to_c(src, &a, es);
    else if ((a.data = sg_malloc(a.nbytes ? a.nbytes : 1)))
        memcpy(a.data, src, a.nbytes);
    if (!a.data)
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", label);
    if (order == '>' && es > 1) {
        size_t width = dtype == SG_DTYPE_COMPLEX64 ? 4 : dtype == SG_DTYPE_COMPLEX128 ? 8 : es;
        byteswap(a.data, a.nbytes / width, width);
    }
    if (sg_dtype_is_4bit(dtype)) /* the element is the low nibble; the rest is ignored */
        for (size_t i = 0; i < a.nbytes; i++)
            ((uint8_t *)a.data)[i] = sg_dtype_nibble(dtype, ((uint8_t *)a.data)[i]);
    *out = a;
    return SG_OK;
}

sg_status sg_npy_read(const char *path, struct sg_array *out, struct sg_diag *diag)
{
    return sg_npy_read_as(path, SG_DTYPE_UNDEFINED, out, diag);
}

sg_status sg_npy_read_as(const char *path, int32_t expect, struct sg_array *out,
                         struct sg_diag *diag)
{
    uint8_t *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    sg_status st = sg_file_read_all(path, SIZE_MAX - 1, &buf, &len, diag);
    if (st)
        return st;
    st = sg_npy_read_buffer_as(buf, len, path, expect, out, diag);
    sg_free(buf);
    return st;
}

/* The .npy header for a (magic through the padded dict) into hdr; returns
 * its length, or 0 when numpy has no such dtype. */
static size_t npy_header(const struct sg_array *a, uint8_t *hdr, size_t cap)
{
    const char *descr = sg_dtype_npy_descr(a->dtype);
    if (!*descr)
        return 0;
    char shape[SG_MAX_RANK * 22 + 4];
    size_t pos = 0;
    shape[pos++] = '(';
    for (uint32_t i = 0; i < a->rank; i++)
        pos += (size_t)snprintf(shape + pos, sizeof shape - pos, "%s%" PRId64, i ? ", " : "",
                                a->dims[i]);
    if (a->rank == 1)
        shape[pos++] = ',';
    shape[pos++] = ')';
    shape[pos] = '\0';
    char dict[sizeof shape + 96];
    int dlen = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                        descr, shape);
    /* magic + version + length field + dict + padding + '\n' is a multiple
     * of 64, as numpy writes it; version 2.0 only past 65535 bytes. */
    size_t prefix = 10;
    size_t padded = (prefix + (size_t)dlen + 1 + 63) / 64 * 64;
    int major = 1;
    if (padded - prefix > 65535) {
        prefix = 12;
        padded = (prefix + (size_t)dlen + 1 + 63) / 64 * 64;
        major = 2;
    }
    if (padded > cap)
        return 0;
    size_t hlen = padded - prefix;
    memcpy(hdr, npy_magic, 6);
    hdr[6] = (uint8_t)major;
    hdr[7] = 0;
    hdr[8] = (uint8_t)(hlen & 0xff);
    hdr[9] = (uint8_t)(hlen >> 8);
    if (major == 2) {
        hdr[10] = (uint8_t)(hlen >> 16);
        hdr[11] = (uint8_t)(hlen >> 24);
    }
    memcpy(hdr + prefix, dict, (size_t)dlen);
    memset(hdr + prefix + dlen, ' ', hlen - (size_t)dlen - 1);
    hdr[padded - 1] = '\n';
    return padded;
}

#define NPY_HEADER_MAX 2048

/* The bytes a's data has in the file: its own, but for int4, which
 * ml_dtypes keeps in the low nibble (upper bits zero) where surgeon holds
 * it sign-extended: a masked copy in *tmp (NULL when not needed or out of
 * memory, then the result is NULL too). */
static const void *file_data(const struct sg_array *a, uint8_t **tmp)
{
    *tmp = NULL;
    if (a->dtype != SG_DTYPE_INT4)
        return a->data;
    if (!(*tmp = sg_malloc(a->nbytes ? a->nbytes : 1)))
        return NULL;
    for (size_t i = 0; i < a->nbytes; i++)
        (*tmp)[i] = ((const uint8_t *)a->data)[i] & 0xf;
    return *tmp;
}

sg_status sg_npy_encode(const struct sg_array *a, uint8_t **buf, size_t *len, struct sg_diag *diag)
{
    *buf = NULL;
    *len = 0;
    uint8_t hdr[NPY_HEADER_MAX];
    size_t hl = npy_header(a, hdr, sizeof hdr);
    if (!hl)
        return sg_diag_set(diag, SG_EUNSUPPORTED, "numpy has no %s dtype", sg_dtype_name(a->dtype));
    uint8_t *out = sg_malloc(hl + a->nbytes), *tmp;
    const void *data = file_data(a, &tmp);
    if (!out || !data) {
        sg_free(out);
        sg_free(tmp);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    memcpy(out, hdr, hl);
    if (a->nbytes)
        memcpy(out + hl, data, a->nbytes);
    sg_free(tmp);
    *buf = out;
    *len = hl + a->nbytes;
    return SG_OK;
}

struct npy_parts {
    const uint8_t *hdr;
    size_t hl;
    const void *data;
    size_t nbytes;
};

static sg_status write_npy(FILE *out, void *ctx)
{
    const struct npy_parts *p = ctx;
    if (fwrite(p->hdr, 1, p->hl, out) != p->hl)
        return SG_EIO;
    if (p->nbytes && fwrite(p->data, 1, p->nbytes, out) != p->nbytes)
        return SG_EIO;
    return SG_OK;
}

/* The header of a in hdr (NPY_HEADER_MAX bytes): its length, or 0 with
 * diag set when numpy has no such dtype. */
static size_t header_for(const char *path, const struct sg_array *a, uint8_t *hdr,
                         struct sg_diag *diag)
{
    size_t hl = npy_header(a, hdr, NPY_HEADER_MAX);
    if (!hl)
        sg_diag_set(diag, SG_EUNSUPPORTED, "%s: numpy has no %s dtype", path,
                    sg_dtype_name(a->dtype));
    return hl;
}

sg_status sg_npy_write(const char *path, const struct sg_array *a, struct sg_diag *diag)
{
    uint8_t hdr[NPY_HEADER_MAX];
    size_t hl = header_for(path, a, hdr, diag);
    if (!hl)
        return SG_EUNSUPPORTED;
    /* Header and data go out in two writes: the data is not copied. */
    uint8_t *tmp;
    struct npy_parts parts = {hdr, hl, file_data(a, &tmp), a->nbytes};
    if (!parts.data)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    sg_status st = sg_file_write_atomic_with(path, write_npy, &parts, diag);
    sg_free(tmp);
    return st;
}

sg_status sg_npy_write_new(const char *path, const struct sg_array *a, struct sg_diag *diag)
{
    uint8_t hdr[NPY_HEADER_MAX];
    size_t hl = header_for(path, a, hdr, diag);
    if (!hl)
        return SG_EUNSUPPORTED;
    uint8_t *tmp;
    const void *data = file_data(a, &tmp);
    if (!data)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        sg_free(tmp);
        return sg_diag_set(diag, SG_EIO, "cannot create '%s': %s", path, strerror(errno));
    }
    struct iovec iov[2] = {{hdr, hl}, {(void *)data, a->nbytes}};
    int n_iov = a->nbytes ? 2 : 1, first = 0;
    int err = 0;
    while (first < n_iov) {
        ssize_t w = writev(fd, iov + first, n_iov - first);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err = w < 0 ? errno : EIO;
            break;
        }
        /* A short write: drop what went out, go on with the rest. */
        size_t k = (size_t)w;
        while (first < n_iov && k >= iov[first].iov_len)
            k -= iov[first++].iov_len;
        if (first < n_iov) {
            iov[first].iov_base = (uint8_t *)iov[first].iov_base + k;
            iov[first].iov_len -= k;
        }
    }
    if (close(fd) != 0 && !err)
        err = errno;
    sg_free(tmp);
    if (!err)
        return SG_OK;
    unlink(path);
    return sg_diag_set(diag, SG_EIO, "writing '%s': %s", path, strerror(err));
}
