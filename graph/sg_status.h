/*
 * sg_status.h - status codes and diagnostics shared by every surgeon module.
 *
 * Library functions return an sg_status: SG_OK (0) on success, a negative
 * code on failure. Functions that can fail on user input also take a
 * struct sg_diag, which receives one line saying what went wrong and where
 * (file, node, tensor, YAML line:column). The library never prints and never
 * exits; the CLI prints the diagnostic.
 *
 * Codes come from one table (SG_STATUS_MAP) that yields the enum, the
 * symbolic name and the message, so they can never drift apart. Codes are
 * never reused: append new entries at the end.
 */
#ifndef SG_STATUS_H
#define SG_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#define SG_STATUS_MAP(X)                                                                           \
    X(NOMEM, -1, "out of memory")                                                                  \
    X(IO, -2, "input/output error")                                                                \
    X(PARSE, -3, "malformed input")                                                                \
    X(INVAL, -4, "invalid argument")                                                               \
    X(CYCLE, -5, "graph has a cycle")                                                              \
    X(UNDEF, -6, "value used but never defined")                                                   \
    X(DUP, -7, "duplicate definition")                                                             \
    X(ARITY, -8, "wrong number of inputs or outputs")                                              \
    X(RANGE, -9, "value out of range")                                                             \
    X(ESCAPE, -10, "path escapes the model folder")                                                \
    X(NOTFOUND, -11, "not found")                                                                  \
    X(INUSE, -12, "still in use")                                                                  \
    X(TOOBIG, -13, "too large")                                                                    \
    X(UNSUPPORTED, -14, "not supported")                                                           \
    X(EXISTS, -15, "already exists")                                                               \
    X(SHAPE, -16, "shape mismatch")                                                                \
    X(TYPE, -17, "type mismatch")

typedef enum sg_status {
    SG_OK = 0,
#define SG__STATUS_ENUM(name, code, msg) SG_E##name = (code),
    SG_STATUS_MAP(SG__STATUS_ENUM)
#undef SG__STATUS_ENUM
} sg_status;

/* The message for a status, e.g. "graph has a cycle". Never NULL. */
const char *sg_strerror(sg_status status);

/* The symbolic name of a status, e.g. "SG_ECYCLE". Never NULL. */
const char *sg_status_name(sg_status status);

/*
 * A diagnostic: the status of the first failure and one line describing it.
 * Zero-initialise before use. Functions that take a `struct sg_diag *` accept
 * NULL and then only return the status.
 */
#define SG_DIAG_MAX 1024
struct sg_diag {
    sg_status status;
    char msg[SG_DIAG_MAX];
};

/*
 * Record a failure in `diag` (which may be NULL) and return `status`, so that
 * callers can write `return sg_diag_set(d, SG_EPARSE, "...", ...)`. The first
 * failure wins: a diagnostic that already holds an error is left unchanged,
 * because the first message names the root cause.
 */
sg_status sg_diag_set(struct sg_diag *diag, sg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
sg_status sg_diag_setv(struct sg_diag *diag, sg_status status, const char *fmt, va_list ap);

/*
 * Prefix the message already in `diag` with "prefix: " (e.g. a file name),
 * keeping its status. No-op when `diag` is NULL or holds no error.
 */
void sg_diag_prefix(struct sg_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clear a diagnostic for reuse. NULL is allowed. */
void sg_diag_clear(struct sg_diag *diag);

#endif
