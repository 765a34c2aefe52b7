/*
 * fuzz_npz.c - libFuzzer harness for the .npz reader (graph/npz.c), as
 * `compare -g GOLDEN.npz --model M` reads a golden dump.
 *
 * The input is the archive. Whatever the reader accepts must be
 * self-consistent: a name for every member, and each member read either
 * gives a tensor whose byte count fits its shape or fails with a status
 * and a message (never a crash, a hang or memory past its declared size).
 * Build and run with tools/fuzz/run.sh npz.
 */
#include "fuzz_common.h"
#include "sg_npz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    if (!path)
        return 0;
    sg_npz *z = NULL;
    struct sg_diag d = {0};
    if (sg_npz_open(path, &z, &d) != SG_OK) {
        FUZZ_CHECK(d.status != SG_OK && d.msg[0], "a refused archive without a message");
        return 0;
    }
    for (size_t i = 0; i < sg_npz_count(z) && i < 64; i++) {
        FUZZ_CHECK(sg_npz_name(z, i) != NULL, "a member without a name");
        struct sg_array a;
        struct sg_diag e = {0};
        if (sg_npz_read(z, i, &a, &e) == SG_OK) {
            int64_t n = sg_array_numel(&a);
            FUZZ_CHECK(n >= 0, "a member read with a bad shape");
            if (a.dtype != SG_DTYPE_STRING)
                FUZZ_CHECK((uint64_t)n * sg_dtype_size(a.dtype) == a.nbytes,
                           "byte count does not match the shape");
            sg_array_free(&a);
        } else {
            FUZZ_CHECK(e.msg[0], "a member refused without a message");
        }
    }
    sg_npz_free(z);
    return 0;
}
