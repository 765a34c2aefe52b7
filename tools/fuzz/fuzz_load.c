/*
 * fuzz_load.c - libFuzzer harness for the ONNX loader.
 *
 * Feeds arbitrary bytes to sg_model_load_buffer (no folder: external data is
 * refused), and for every model that loads, runs the full verifier, a
 * topological sort and a save to memory followed by a reload: the saved
 * bytes must load again. Any crash, sanitizer report or failed re-load is a
 * finding. Build and run with tools/fuzz/run.sh.
 */
#include "sg_alloc.h"
#include "sg_io.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_model *m = NULL;
    struct sg_diag d = {0};
    if (sg_model_load_buffer(data, size, NULL, "fuzz", NULL, &m, &d) != SG_OK)
        return 0;
    struct sg_diag v = {0};
    if (sg_model_verify(m, &v) != SG_OK)
        abort(); /* the loader accepted a model that breaks an IR invariant */
    uint8_t *out = NULL;
    size_t len = 0;
    if (sg_model_save_buffer(m, &out, &len, &d) == SG_OK) {
        sg_model *again = NULL;
        if (sg_model_load_buffer(out, len, NULL, "fuzz-resaved", NULL, &again, &d) != SG_OK)
            abort(); /* what we wrote must read back */
        sg_model_free(again);
        sg_free(out);
    }
    sg_model_free(m);
    return 0;
}
