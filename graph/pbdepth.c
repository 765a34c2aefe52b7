/*
 * pbdepth.c - nesting-depth check run before protobuf-c unpacks a file.
 *
 * protobuf-c unpacks nested messages recursively, so a file nesting
 * messages a million deep would overflow the C stack. This scan walks the
 * wire format with an explicit stack, guided by the generated descriptors,
 * and refuses input nested deeper than any real model. Malformed input is
 * left for protobuf-c to reject with its own checks.
 */
#include "load_impl.h"

#include "onnx.pb-c.h"

#include <stdint.h>

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

struct level {
    const ProtobufCMessageDescriptor *desc;
    size_t end;
};

sg_status sg__check_depth(const void *data, size_t len, struct sg_diag *diag)
{
    struct level local[MAX_MESSAGE_DEPTH + 1];
    const uint8_t *p = data;
    size_t pos = 0;
    int depth = 0;
    local[0].desc = &onnx__model_proto__descriptor;
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
            const ProtobufCFieldDescriptor *f =
                local[depth].desc ? protobuf_c_message_descriptor_get_field(local[depth].desc,
                                                                            (unsigned)(tag >> 3))
                                  : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (depth == MAX_MESSAGE_DEPTH)
                    return sg_diag_set(diag, SG_EPARSE,
                                       "messages nested deeper than %d levels; refusing to unpack",
                                       MAX_MESSAGE_DEPTH);
                depth++;
                local[depth].desc = f->descriptor;
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
