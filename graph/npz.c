/*
 * npz.c - numpy .npz archives (see sg_npz.h).
 *
 * The zip layout read (PKWARE APPNOTE): the end of central directory
 * record in the last 64 KiB + 22 bytes of the file, optionally a ZIP64
 * locator and record before it; the central directory, one header a
 * member (sizes, local header offset, ZIP64 extra field for values
 * 0xFFFFFFFF); each member's data after its local header. Everything is
 * little-endian and every offset is checked against the file size before
 * it is used.
 */
#include "sg_alloc.h"
#include "sg_npz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct member {
    char *name; /* without ".npy" */
    uint64_t comp_size, size, local;
    uint32_t crc;
    uint16_t method;
};

struct sg_npz {
    char *path;
    int fd;
    uint64_t file_size;
    struct member *m;
    size_t n;
};

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Read len bytes at off, all of them. */
static bool read_at(const sg_npz *z, uint64_t off, void *buf, size_t len)
{
    if (off > z->file_size || len > z->file_size - off)
        return false;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(z->fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += (size_t)r;
    }
    return true;
}

bool sg_npz_is_path(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    return len > 4 && strcmp(path + len - 4, ".npz") == 0;
}

void sg_npz_free(sg_npz *z)
{
    if (!z)
        return;
    for (size_t i = 0; i < z->n; i++)
        sg_free(z->m[i].name);
    sg_free(z->m);
    if (z->fd >= 0)
        close(z->fd);
    sg_free(z->path);
    sg_free(z);
}

size_t sg_npz_count(const sg_npz *z)
{
    return z->n;
}

const char *sg_npz_name(const sg_npz *z, size_t i)
{
    return i < z->n ? z->m[i].name : NULL;
}

/* The ZIP64 values of a central header's extra field, for the fields that
 * are 0xFFFFFFFF, in the order the format gives them. */
static bool zip64_extra(const uint8_t *x, size_t len, uint64_t *size, uint64_t *comp,
                        uint64_t *local)
{
    while (len >= 4) {
        uint16_t id = le16(x), sz = le16(x + 2);
        if ((size_t)sz > len - 4)
            return false;
        if (id == 0x0001) {
            const uint8_t *p = x + 4;
            size_t left = sz;
            uint64_t *want[3] = {size, comp, local};
            for (int k = 0; k < 3; k++) {
                if (*want[k] != 0xFFFFFFFFu)
                    continue;
                if (left < 8)
                    return false;
                *want[k] = le64(p);
                p += 8;
                left -= 8;
            }
            return true;
        }
        x += 4 + sz;
        len -= 4 + (size_t)sz;
    }
    return true;
}

/* Where the central directory is and how many entries it has. */
static sg_status find_directory(sg_npz *z, uint64_t *dir_off, uint64_t *dir_size, uint64_t *entries,
                                struct sg_diag *diag)
{
    size_t tail = z->file_size < 65557 ? (size_t)z->file_size : 65557;
    if (tail < 22)
        return sg_diag_set(diag, SG_EPARSE, "%s: not a zip file (an .npz is one): too short",
                           z->path);
    uint8_t *buf = sg_malloc(tail);
    if (!buf)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    uint64_t base = z->file_size - tail;
    sg_status st = SG_OK;
    if (!read_at(z, base, buf, tail)) {
        st = sg_diag_set(diag, SG_EIO, "%s: cannot read", z->path);
        goto out;
    }
    ptrdiff_t at = -1;
    for (size_t i = tail - 22 + 1; i-- > 0;)
        if (le32(buf + i) == 0x06054b50u) {
            at = (ptrdiff_t)i;
            break;
        }
    if (at < 0) {
        st = sg_diag_set(diag, SG_EPARSE,
                         "%s: not a zip file (an .npz is one): no end of central directory",
                         z->path);
        goto out;
    }
    const uint8_t *e = buf + at;
    *entries = le16(e + 10);
    *dir_size = le32(e + 12);
    *dir_off = le32(e + 16);
    if (*entries == 0xFFFF || *dir_size == 0xFFFFFFFFu || *dir_off == 0xFFFFFFFFu) {
        /* ZIP64: the locator is the 20 bytes before the record. */
        uint8_t loc[20], rec[56];
        uint64_t eocd = base + (uint64_t)at;
        if (eocd < 20 || !read_at(z, eocd - 20, loc, sizeof loc) || le32(loc) != 0x07064b50u ||
            !read_at(z, le64(loc + 8), rec, sizeof rec) || le32(rec) != 0x06064b50u) {
            st = sg_diag_set(diag, SG_EPARSE, "%s: broken ZIP64 end of central directory", z->path);
            goto out;
        }
        *entries = le64(rec + 32);
        *dir_size = le64(rec + 40);
        *dir_off = le64(rec + 48);
    }
    if (*dir_off > z->file_size || *dir_size > z->file_size - *dir_off)
        st = sg_diag_set(diag, SG_EPARSE, "%s: the central directory runs past the end of the file",
                         z->path);
    else if (*entries > SG_NPZ_MAX_MEMBERS || *entries > *dir_size / 46)
        st = sg_diag_set(diag, SG_EPARSE, "%s: %llu members do not fit a directory of %llu bytes",
                         z->path, (unsigned long long)*entries, (unsigned long long)*dir_size);
out:
    sg_free(buf);
    return st;
}

static sg_status read_directory(sg_npz *z, struct sg_diag *diag)
{
    uint64_t off, size, entries;
    sg_status st = find_directory(z, &off, &size, &entries, diag);
    if (st)
        return st;
    uint8_t *dir = sg_malloc((size_t)size + 1);
    z->m = sg_calloc((size_t)entries + 1, sizeof *z->m);
    if (!dir || !z->m) {
        sg_free(dir);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    if (!read_at(z, off, dir, (size_t)size)) {
        sg_free(dir);
        return sg_diag_set(diag, SG_EIO, "%s: cannot read the central directory", z->path);
    }
    size_t pos = 0;
    for (uint64_t k = 0; k < entries && !st; k++) {
        const uint8_t *h = dir + pos;
        if (size - pos < 46 || le32(h) != 0x02014b50u) {
            st = sg_diag_set(diag, SG_EPARSE, "%s: central directory entry %llu is broken", z->path,
                             (unsigned long long)k);
            break;
        }
        uint16_t flags = le16(h + 8), method = le16(h + 10);
        size_t nl = le16(h + 28), xl = le16(h + 30), cl = le16(h + 32);
        if (nl + xl + cl > size - pos - 46) {
            st = sg_diag_set(diag, SG_EPARSE, "%s: central directory entry %llu runs past it",
                             z->path, (unsigned long long)k);
            break;
        }
        struct member mb = {.crc = le32(h + 16), .method = method};
        mb.comp_size = le32(h + 20);
        mb.size = le32(h + 24);
        mb.local = le32(h + 42);
        const char *name = (const char *)h + 46;
        if (!zip64_extra(h + 46 + nl, xl, &mb.size, &mb.comp_size, &mb.local)) {
            st = sg_diag_set(diag, SG_EPARSE, "%s: member %.*s: broken ZIP64 field", z->path,
                             (int)nl, name);
            break;
        }
        pos += 46 + nl + xl + cl;
        if (nl < 4 || memcmp(name + nl - 4, ".npy", 4) != 0 || memchr(name, '\0', nl))
            continue; /* not a tensor (a folder entry, another file) */
        if (flags & 1u) {
            st = sg_diag_set(diag, SG_EUNSUPPORTED, "%s: member %.*s is encrypted", z->path,
                             (int)nl, name);
            break;
        }
        if (method != 0 && method != 8) {
            st = sg_diag_set(diag, SG_EUNSUPPORTED,
                             "%s: member %.*s uses compression method %u (only stored and "
                             "deflate, as np.savez and np.savez_compressed write, are read)",
                             z->path, (int)nl, name, method);
            break;
        }
        /* Deflate cannot shrink data more than 1032 to 1: a larger claim
         * is a lie, refused before anything is allocated for it. */
        if (mb.size > SG_NPZ_MAX_MEMBER || mb.local > z->file_size ||
            mb.comp_size > z->file_size - mb.local || (method == 0 && mb.size != mb.comp_size) ||
            (method == 8 && mb.size > mb.comp_size * 1032 + 64)) {
            st = sg_diag_set(diag, SG_EPARSE,
                             "%s: member %.*s: sizes that do not fit the file (%llu bytes, %llu "
                             "stored at offset %llu)",
                             z->path, (int)nl, name, (unsigned long long)mb.size,
                             (unsigned long long)mb.comp_size, (unsigned long long)mb.local);
            break;
        }
        if (!(mb.name = sg_malloc(nl - 3))) {
            st = sg_diag_set(diag, SG_ENOMEM, "out of memory");
            break;
        }
        memcpy(mb.name, name, nl - 4);
        mb.name[nl - 4] = '\0';
        z->m[z->n++] = mb;
    }
    sg_free(dir);
    return st;
}

sg_status sg_npz_open(const char *path, sg_npz **out, struct sg_diag *diag)
{
    *out = NULL;
    sg_npz *z = sg_calloc(1, sizeof *z);
    if (!z || !(z->path = sg_strdup(path))) {
        sg_free(z);
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    }
    struct stat sb;
    z->fd = sg_file_open_read(path, &sb, diag);
    if (z->fd < 0) {
        sg_status st = (sg_status)z->fd;
        sg_npz_free(z);
        return st;
    }
    z->file_size = (uint64_t)sb.st_size;
    sg_status st = read_directory(z, diag);
    if (st) {
        sg_npz_free(z);
        return st;
    }
    *out = z;
    return SG_OK;
}

/* Inflate raw deflate data `in` into exactly `size` bytes of out. */
static bool inflate_exact(const uint8_t *in, uint64_t in_len, uint8_t *out, uint64_t size)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -15) != Z_OK)
        return false;
    uint64_t in_done = 0, out_done = 0;
    int r = Z_OK;
    while (r == Z_OK) {
        uInt in_chunk = (uInt)(in_len - in_done > (1u << 30) ? (1u << 30) : in_len - in_done);
        uInt out_chunk = (uInt)(size - out_done > (1u << 30) ? (1u << 30) : size - out_done);
        uint8_t spare; /* one byte past the declared size: data longer than declared */
        s.next_in = (Bytef *)(in + in_done);
        s.avail_in = in_chunk;
        s.next_out = out_chunk ? out + out_done : &spare;
        s.avail_out = out_chunk ? out_chunk : 1;
        r = inflate(&s, Z_NO_FLUSH);
        in_done += in_chunk - s.avail_in;
        if (!out_chunk && s.avail_out == 0)
            r = Z_DATA_ERROR;
        else if (out_chunk)
            out_done += out_chunk - s.avail_out;
        if (r == Z_BUF_ERROR && in_done == in_len)
            break; /* no more input before the end of the stream */
        if (r == Z_BUF_ERROR)
            r = Z_OK;
    }
    inflateEnd(&s);
    return r == Z_STREAM_END && out_done == size;
}

sg_status sg_npz_read(const sg_npz *z, size_t i, struct sg_array *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (i >= z->n)
        return sg_diag_set(diag, SG_EINVAL, "%s: no member %zu", z->path, i);
    const struct member *mb = &z->m[i];
    uint8_t lh[30];
    if (!read_at(z, mb->local, lh, sizeof lh) || le32(lh) != 0x04034b50u)
        return sg_diag_set(diag, SG_EPARSE, "%s:%s.npy: no local header at offset %llu", z->path,
                           mb->name, (unsigned long long)mb->local);
    uint64_t data = mb->local + 30 + le16(lh + 26) + le16(lh + 28);
    if (data > z->file_size || mb->comp_size > z->file_size - data)
        return sg_diag_set(diag, SG_EPARSE, "%s:%s.npy: its data runs past the end of the file",
                           z->path, mb->name);
    uint8_t *comp = sg_malloc((size_t)mb->comp_size + 1);
    uint8_t *raw = mb->method == 0 ? comp : sg_malloc((size_t)mb->size + 1);
    sg_status st = SG_OK;
    if (!comp || !raw) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s:%s.npy: out of memory", z->path, mb->name);
        goto out;
    }
    if (!read_at(z, data, comp, (size_t)mb->comp_size)) {
        st = sg_diag_set(diag, SG_EIO, "%s:%s.npy: cannot read", z->path, mb->name);
        goto out;
    }
    if (mb->method == 8 && !inflate_exact(comp, mb->comp_size, raw, mb->size)) {
        st = sg_diag_set(diag, SG_EPARSE,
                         "%s:%s.npy: the deflated data is broken or does not inflate to the "
                         "%llu bytes the directory says",
                         z->path, mb->name, (unsigned long long)mb->size);
        goto out;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t done = 0; done < mb->size;) {
        uInt chunk = (uInt)(mb->size - done > (1u << 30) ? (1u << 30) : mb->size - done);
        crc = crc32(crc, raw + done, chunk);
        done += chunk;
    }
    if ((uint32_t)crc != mb->crc) {
        st = sg_diag_set(diag, SG_EPARSE, "%s:%s.npy: CRC-32 mismatch (a damaged archive)", z->path,
                         mb->name);
        goto out;
    }
    char label[4096];
    snprintf(label, sizeof label, "%s:%s.npy", z->path, mb->name);
    st = sg_npy_read_buffer(raw, (size_t)mb->size, label, out, diag);
out:
    if (raw != comp)
        sg_free(raw);
    sg_free(comp);
    return st;
}
