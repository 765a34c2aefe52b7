/*
 * sg_cleanup.h - what to remove when the process is killed.
 *
 * Every temporary file and folder surgeon makes (the OUT.tmp.* of an
 * atomic write, a result folder still being filled, an earlier result moved
 * aside while the new one takes its place) is entered here while it exists.
 * A signal handler that calls sg_cleanup_run removes them, so an
 * interrupted command leaves no hundreds-of-megabytes OUT.tmp.* behind.
 * SIGKILL cannot be caught: what it leaves carries the dead process's id in
 * its name (sg_cleanup_temp_name), and sg_cleanup_stale removes it on a later
 * run.
 *
 * The registry is a fixed table, safe to use from any thread and, for
 * sg_cleanup_run, from a signal handler: no allocation, no locks, only
 * system calls that are async-signal-safe.
 */
#ifndef SG_CLEANUP_H
#define SG_CLEANUP_H

#include <stdbool.h>
#include <stddef.h>

enum sg_cleanup_kind {
    SG_CLEANUP_FILE,    /* unlink the path */
    SG_CLEANUP_TREE,    /* remove the folder and everything in it */
    SG_CLEANUP_RESTORE, /* rename the path back to `restore_to` (an earlier result moved
                           aside); if that fails, leave it for sg_cleanup_stale */
    SG_CLEANUP_KIND_COUNT
};

/* Enter `path` (copied; with restore_to, 4094 bytes for both). Returns a handle for
 * sg_cleanup_forget, or -1 when the table is full or a path too long: the
 * entry is then simply not cleaned on a signal (the command still works). */
int sg_cleanup_add(enum sg_cleanup_kind kind, const char *path, const char *restore_to);

/* Change what a handle does (an earlier result that is now to be deleted
 * rather than restored). No-op for -1. */
void sg_cleanup_set_kind(int handle, enum sg_cleanup_kind kind);

/* Drop a handle (the temporary was renamed into place or removed). No-op
 * for -1. */
void sg_cleanup_forget(int handle);

/* Remove or restore everything entered. Async-signal-safe: for signal
 * handlers (errno is preserved). */
void sg_cleanup_run(void);

/* Remove a folder tree without following symlinks (async-signal-safe, no
 * allocation). Returns true when the folder is gone. */
bool sg_cleanup_remove_tree(const char *path);

/*
 * The name of a temporary for `target`: "<dir>/<prefix><base><infix><pid>.XXXXXX"
 * where prefix is "" or "." and infix ".tmp." or ".old." (e.g.
 * "out/m.onnx.tmp.4242.XXXXXX", "out/.run.tmp.4242.XXXXXX"), the X's for
 * mkstemp/mkdtemp. When the base name is too long for that, the name is
 * "<dir>/.sg<infix><pid>.XXXXXX". Returns an sg_malloc'd string or NULL.
 */
char *sg_cleanup_temp_name(const char *target, const char *prefix, const char *infix);

/* Remove, in the folder of `target`, every temporary named as
 * sg_cleanup_temp_name names them ("*.tmp.<pid>.XXXXXX") whose process is
 * no longer running (killed with SIGKILL, or a crash). Each folder is
 * scanned once per process; every atomic write calls it. */
void sg_cleanup_stale(const char *target);

/* The same for a result folder about to be replaced, uncached, and also
 * for "<target>.old.<pid>.XXXXXX", the earlier result a killed process
 * moved aside: renamed back to `target` when nothing took its place,
 * else removed. */
void sg_cleanup_stale_result(const char *target);

#endif
