/*
 * sg_dumpname.h - file names of tensor dumps, shared by the writer
 * (runtime/) and the reader (compare/) so both sides agree on them.
 *
 * Reference (ONNX) dumps, as msit writes them:
 *     <node>.<output index>.<timestamp us>.npy
 *     input_<node>.<input index>.<timestamp us>.npy   (node inputs, optional)
 * where every '.' and '/' of the node name becomes '_'. A file name longer
 * than 255 bytes (the Linux limit) is shortened to a prefix plus a hash and
 * the pair is listed in mapping.csv in the dump folder as
 *     <file name>,<node name>
 * (the node name in CSV quoting when it needs it).
 *
 * Device dumps (converted to npy):
 *     <OpType>.<OpName>.<task>.<stream>.<timestamp>.output.<i>.npy
 *     <OpType>.<OpName>.<task>.<stream>.<timestamp>.input.<i>.npy
 * parsed from the right, so an OpName that contains '.' still parses.
 */
#ifndef SG_DUMPNAME_H
#define SG_DUMPNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_DUMP_NAME_MAX 255

/* Replace '.' and '/' by '_' (msit's rule) into buf; returns buf. An empty
 * name stays empty. Truncates to size-1 bytes. */
char *sg_dump_sanitize(const char *node_name, char *buf, size_t size);

/*
 * The reference dump file name for output `index` of `node_name` into buf
 * (at least SG_DUMP_NAME_MAX + 1 bytes). Returns true when the name had to
 * be shortened: the caller must then list (buf, node_name) in mapping.csv.
 * `input` selects the input_<node> form.
 */
bool sg_dump_onnx_name(const char *node_name, bool input, uint32_t index, uint64_t timestamp_us,
                       char *buf, size_t size);

/* A parsed reference dump file name. `node` is the sanitized (or shortened)
 * name as it appears in the file name. */
struct sg_dump_onnx {
    char node[SG_DUMP_NAME_MAX + 1];
    bool input;
    uint32_t index;
    uint64_t timestamp;
};

/* Parse "<node>.<i>.<ts>.npy" (or "input_<node>..."); false if it is not
 * one. Device dump names are rejected (they have more fields). */
bool sg_dump_parse_onnx(const char *file_name, struct sg_dump_onnx *out);

/* A parsed device dump file name. */
struct sg_dump_device {
    char op_type[128];
    char op_name[SG_DUMP_NAME_MAX + 1];
    uint64_t task, stream, timestamp;
    bool input; /* .input.<i> rather than .output.<i> */
    uint32_t index;
};

/* The device dump file name into buf (at least SG_DUMP_NAME_MAX + 1 bytes);
 * '/' in op names becomes '_'. Returns false when it does not fit. */
bool sg_dump_device_name(const char *op_type, const char *op_name, uint64_t task, uint64_t stream,
                         uint64_t timestamp, bool input, uint32_t index, char *buf, size_t size);

/* Parse a device dump file name; false if it is not one. */
bool sg_dump_parse_device(const char *file_name, struct sg_dump_device *out);

#endif
