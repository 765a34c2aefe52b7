/*
 * pbdepth.c - nesting-depth check run before protobuf-c unpacks a file.
 *
 * protobuf-c unpacks nested messages recursively, so a file nesting
 * messages a million deep would overflow the C stack. This scan walks the
 * wire format with an explicit stack, guided by the generated descriptors,
 * and refuses input nested deeper than any real model. On the way it also
 * refuses what protobuf-c would accept but not write back the same: field
 * number 0 and strings holding a NUL byte. Other malformed input is left
 * for protobuf-c to reject with its own checks.
 */
#include "load_impl.h"

#include "onnx.pb-c.h"

#include <stdint.h>
#include <string.h>

#define MAX_MESSAGE_DEPTH 512

static int read_varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= end)
            return -1;
        uint8_t b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* The field descriptor of each field number below 64 of one message type,
 * filled as fields are met: a binary search per field would cost more than
 * the rest of the scan. */
struct desc_fields {
    const ProtobufCMessageDescriptor *desc;
    uint64_t known;
    const ProtobufCFieldDescriptor *fd[64];
};

#define MAX_DESCS 32

struct level {
    struct desc_fields *fields;
    size_t end;
};

static struct desc_fields *fields_of(struct desc_fields *all, int *n,
                                     const ProtobufCMessageDescriptor *d)
{
    for (int i = 0; i < *n; i++)
        if (all[i].desc == d)
            return &all[i];
    if (*n == MAX_DESCS)
        return NULL;
    struct desc_fields *f = &all[(*n)++];
    f->desc = d;
    f->known = 0;
    return f;
}

/* The descriptor of field `num` (NULL for unknown fields). */
static const ProtobufCFieldDescriptor *field_of(struct desc_fields *f, uint64_t num)
{
    if (num < 64 && (f->known >> num & 1))
        return f->fd[num];
    const ProtobufCFieldDescriptor *fd =
        num <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(f->desc, (unsigned)num) : NULL;
    if (num < 64) {
        f->fd[num] = fd;
        f->known |= 1ull << num;
    }
    return fd;
}

sg_status sg__check_depth(const void *data, size_t len, struct sg_diag *diag)
{
    struct level local[MAX_MESSAGE_DEPTH + 1];
    struct desc_fields all[MAX_DESCS];
    int n_descs = 0;
    const uint8_t *p = data;
    size_t pos = 0;
    int depth = 0;
    local[0].fields = fields_of(all, &n_descs, &onnx__model_proto__descriptor);
    local[0].end = len;
    while (depth >= 0) {
        if (pos >= local[depth].end) {
            pos = local[depth].end;
            depth--;
            continue;
        }
        uint64_t tag, n;
        if (read_varint(p, local[depth].end, &pos, &tag))
            return SG_OK;
        if ((tag >> 3) == 0)
            return sg_diag_set(diag, SG_EPARSE, "invalid protobuf: field number 0 at byte %zu",
                               pos);
        switch (tag & 7) {
        case 0:
            if (read_varint(p, local[depth].end, &pos, &n))
                return SG_OK;
            break;
        case 1:
            pos += 8;
            break;
        case 5:
            pos += 4;
            break;
        case 2: {
            if (read_varint(p, local[depth].end, &pos, &n) || n > local[depth].end - pos)
                return SG_OK;
            const ProtobufCFieldDescriptor *fd =
                local[depth].fields ? field_of(local[depth].fields, tag >> 3) : NULL;
            /* protobuf-c keeps strings NUL-terminated: one holding a NUL
             * byte would come back cut short, so it is refused here. */
            if (fd && fd->type == PROTOBUF_C_TYPE_STRING && memchr(p + pos, 0, n))
                return sg_diag_set(
                    diag, SG_EPARSE,
                    "string field '%s' holds a NUL byte (at byte %zu); not supported", fd->name,
                    pos);
            const ProtobufCMessageDescriptor *sub =
                fd && fd->type == PROTOBUF_C_TYPE_MESSAGE ? fd->descriptor : NULL;
            if (sub) {
                if (depth == MAX_MESSAGE_DEPTH)
                    return sg_diag_set(diag, SG_EPARSE,
                                       "messages nested deeper than %d levels; refusing to unpack",
                                       MAX_MESSAGE_DEPTH);
                depth++;
                local[depth].fields = fields_of(all, &n_descs, sub);
                local[depth].end = pos + n;
            } else {
                pos += n;
            }
            break;
        }
        default:
            return SG_OK; /* groups or garbage: protobuf-c decides */
        }
    }
    return SG_OK;
}
