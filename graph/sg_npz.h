/*
 * sg_npz.h - numpy's .npz archives (np.savez, np.savez_compressed): a zip
 * file of .npy members, read with no more trust than any other input.
 *
 * What is read: the zip's central directory (ZIP64 records and extra fields
 * included, as numpy's zipfile writes them), members stored (method 0) or
 * deflated (method 8, through zlib), each checked against its CRC-32 and
 * its declared size. Refused with a message that names the archive and the
 * member: encryption, other methods, a directory that runs past the file,
 * a member whose data does not fit the file, sizes past SG_NPZ_MAX_MEMBER
 * or past what deflate can make of the stored bytes (1032 to 1),
 * more than SG_NPZ_MAX_MEMBERS members, inflated data longer or shorter
 * than declared (a zip bomb stops at the declared size), a bad CRC.
 * Member names keep what np.savez gave them (a tensor name with '/' in it
 * stays so); the ".npy" suffix is dropped.
 */
#ifndef SG_NPZ_H
#define SG_NPZ_H

#include "sg_status.h"
#include "sg_tensorfile.h"

#include <stdbool.h>
#include <stddef.h>

#define SG_NPZ_MAX_MEMBERS 1000000
#define SG_NPZ_MAX_MEMBER ((uint64_t)16 << 30) /* bytes of one member, inflated */

typedef struct sg_npz sg_npz;

/* Open `path` and read its directory. SG_EIO (cannot open or read),
 * SG_EPARSE (not a zip, or a broken or hostile one), SG_EUNSUPPORTED
 * (encrypted, a compression other than stored or deflate), SG_ENOMEM. */
sg_status sg_npz_open(const char *path, sg_npz **out, struct sg_diag *diag);

/* Free. NULL is a no-op. */
void sg_npz_free(sg_npz *z);

/* Members, in directory order, and the name of member i without ".npy"
 * (valid while z lives). Members not named *.npy are left out. */
size_t sg_npz_count(const sg_npz *z);
const char *sg_npz_name(const sg_npz *z, size_t i);

/* Read member i as an .npy tensor. Statuses as sg_npz_open and
 * sg_npy_read_buffer; messages say "<archive>:<member>". */
sg_status sg_npz_read(const sg_npz *z, size_t i, struct sg_array *out, struct sg_diag *diag);

/* Whether path names a file ending in ".npz". */
bool sg_npz_is_path(const char *path);

#endif
