/*
 * wire.h - protobuf wire format primitives for the ONNX codec (internal).
 *
 * The model codec (decode.c, encode.c) reads and writes the ONNX messages
 * straight from and to the IR: no intermediate message structs, no
 * per-field allocations, one sizing pass on save. Field numbers and types
 * are those of Debian's onnx.proto, whose generated protobuf-c code the
 * tests use as the reference implementation.
 */
#ifndef SG_WIRE_H
#define SG_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* A read cursor over one message's bytes. */
struct wr {
    const uint8_t *p, *end;
    bool bad; /* malformed: every further read fails */
};

static inline bool wr_more(const struct wr *r)
{
    return !r->bad && r->p < r->end;
}

static inline uint64_t wr_varint(struct wr *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = true;
    return 0;
}

/* The next field's number and wire type; false at the end or when bad. */
static inline bool wr_tag(struct wr *r, uint32_t *field, int *type)
{
    if (!wr_more(r))
        return false;
    uint64_t t = wr_varint(r);
    if (r->bad || (t >> 3) == 0 || (t >> 3) > 0x1fffffff) {
        r->bad = true;
        return false;
    }
    *field = (uint32_t)(t >> 3);
    *type = (int)(t & 7);
    return true;
}

/* A length-delimited payload as a sub-cursor. */
static inline struct wr wr_len(struct wr *r)
{
    struct wr sub = {r->p, r->p, true};
    uint64_t n = wr_varint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return sub;
    }
    sub.p = r->p;
    sub.end = r->p + n;
    sub.bad = false;
    r->p += n;
    return sub;
}

static inline uint32_t wr_fixed32(struct wr *r)
{
    if (r->end - r->p < 4) {
        r->bad = true;
        return 0;
    }
    uint32_t v;
    memcpy(&v, r->p, 4);
    r->p += 4;
    return v;
}

static inline uint64_t wr_fixed64(struct wr *r)
{
    if (r->end - r->p < 8) {
        r->bad = true;
        return 0;
    }
    uint64_t v;
    memcpy(&v, r->p, 8);
    r->p += 8;
    return v;
}

/* Skip a field of wire type `type` (groups are not protobuf 3 / ONNX and are
 * refused as malformed). */
static inline void wr_skip(struct wr *r, int type)
{
    switch (type) {
    case WT_VARINT:
        wr_varint(r);
        break;
    case WT_I64:
        wr_fixed64(r);
        break;
    case WT_I32:
        wr_fixed32(r);
        break;
    case WT_LEN:
        wr_len(r);
        break;
    default:
        r->bad = true;
    }
}

static inline size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *varint_put(uint8_t *out, uint64_t v)
{
    while (v >= 0x80) {
        *out++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *out++ = (uint8_t)v;
    return out;
}

#endif
