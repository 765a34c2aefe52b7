/*
 * sg_outdir.h - result folders written all or nothing.
 *
 * A command that fills a folder (`run -o DIR`, `compare MODEL -o OUT`)
 * writes into a temporary folder beside it and puts that in place at the
 * end, so a failure leaves nothing half-written (the library's workflows,
 * sg_verify.h, and the CLI's `run` use it). The folder may be absent,
 * empty, or an earlier result of the same command (recognised by a marker
 * file in it), which is replaced; anything else is refused, so a typo in -o
 * cannot delete a user's folder.
 */
#ifndef SG_OUTDIR_H
#define SG_OUTDIR_H

#include <stdbool.h>

enum sg_outdir_state {
    SG_OUTDIR_ABSENT,
    SG_OUTDIR_EMPTY,
    SG_OUTDIR_EARLIER, /* a folder holding `marker` */
    SG_OUTDIR_OTHER,   /* a file, another folder, or unreadable: refused */
};

/* How `out` stands; `marker` is a path relative to it. */
enum sg_outdir_state sg_outdir_state(const char *out, const char *marker);

/* A new folder ".<name>.tmp.XXXXXX" beside `out` (same parent, so the final
 * rename is atomic) with the umask's permissions. sg_malloc'd path, or NULL
 * with errno set. */
char *sg_outdir_temp(const char *out);

/*
 * Put folder `tmp` at `out`. An empty `out` is removed first; an earlier
 * result (holding `marker`) is moved aside and *old receives where (NULL
 * when there was none) for sg_outdir_commit or sg_outdir_rollback. False
 * with errno set when `out` is anything else or a rename fails; then `out`
 * is as it was.
 */
bool sg_outdir_swap(const char *tmp, const char *out, const char *marker, char **old);

/* Keep the new result: delete the earlier one moved aside (NULL: none) and
 * free `old`. */
void sg_outdir_commit(char *old);

/* Undo sg_outdir_swap: delete `out` and put the earlier result back; frees
 * `old`. */
void sg_outdir_rollback(const char *out, char *old);

/* Delete a folder and everything in it (symlinks are not followed). */
void sg_outdir_remove_tree(const char *dir);

#endif
