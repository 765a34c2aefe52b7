/*
 * sg_outdir.h - result folders, written all or nothing and replaced only
 * when they hold nothing but an earlier result of the same command.
 *
 * A command that fills a folder (`run -o DIR`, `compare MODEL -o OUT`)
 * fills a temporary folder beside it (".DIR.tmp.<pid>.XXXXXX", entered in
 * sg_cleanup.h's registry) and puts it in place at the end, so a failure or
 * a signal leaves nothing half-written. The folder it replaces must be
 * absent, empty, or an earlier result of the same command: the folder
 * records what it holds in a list (SG_OUTDIR_LIST), and every entry found
 * in it must be on that list, so a project folder that merely holds a
 * manifest.json, or an earlier result the user added files to, is refused
 * instead of deleted. (A listed file the new run reads, such as the
 * inputs/x.npy of an earlier run given again with -i, is read before the
 * folder is replaced, and written again into the new one.)
 *
 * The list: a first line "surgeon-outdir 1 <command>", then one line per
 * entry, "d <path>" for a folder, "f <path>" for anything else, paths
 * relative to the folder, with bytes below 0x20 and '\' written as \xNN.
 */
#ifndef SG_OUTDIR_H
#define SG_OUTDIR_H

#include "sg_status.h"

#include <stdbool.h>

#define SG_OUTDIR_LIST ".surgeon-outdir"

struct sg_outdir {
    char *out;       /* the result folder (no trailing slash) */
    char *tmp;       /* the folder being filled, beside out */
    char *old;       /* an earlier result moved aside, until commit or abort */
    const char *tag; /* the command's name: "run", "compare" (not copied) */
    int h_tmp, h_out, h_old;
    bool published;
};

/* SG_OK when `out` may receive a `tag` result: absent, empty, or an earlier
 * one (see above). Else SG_EEXISTS with the reason ("'out' holds 'src',
 * which no earlier surgeon run wrote; remove it or choose another -o"), or
 * SG_EIO when it cannot be read. */
sg_status sg_outdir_check(const char *out, const char *tag, struct sg_diag *diag);

/* Check `out` and make the temporary folder beside it; od->tmp is where to
 * write. On failure od holds nothing to free. */
sg_status sg_outdir_begin(struct sg_outdir *od, const char *out, const char *tag,
                          struct sg_diag *diag);

/* Put the temporary folder at `out`, with its list: an earlier result is
 * checked again and moved aside (kept until commit or abort). On failure
 * `out` is as it was and od still needs commit or abort. */
sg_status sg_outdir_publish(struct sg_outdir *od, struct sg_diag *diag);

/* Keep the result (publishing it first if needed): its list is written
 * again (files may have been added since publish) and the earlier result
 * deleted. Releases od, also on failure (then the result was not kept). */
sg_status sg_outdir_commit(struct sg_outdir *od, struct sg_diag *diag);

/* Drop the result: the temporary folder removed or, once published, `out`
 * removed and the earlier result put back. Releases od; NULL fields are
 * fine (a zeroed od is a no-op). */
void sg_outdir_abort(struct sg_outdir *od);

#endif
