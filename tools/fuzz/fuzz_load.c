/*
 * fuzz_load.c - libFuzzer harness for the ONNX loader.
 *
 * Feeds arbitrary bytes to sg_model_load_buffer (no folder: external data is
 * refused), and for every model that loads, runs the full verifier, the
 * element-type inference, fresh names and a node and value made with them
 * (the IR must still verify), and a save to memory followed by a reload:
 * the saved bytes must load again. Any crash, sanitizer report, failed
 * verification or failed re-load is a finding. Build and run with
 * tools/fuzz/run.sh.
 */
#include "sg_alloc.h"
#include "sg_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    if (m->graph && sg_graph_infer_dtypes(m->graph, true, &v) == SG_OK) {
        /* Fresh names never collide, whatever names the file used. */
        const char *base = m->graph->first && m->graph->first->name ? m->graph->first->name : "x";
        sg_node *n = sg_node_create_fresh(m->graph, "Identity", NULL, base, &v);
        sg_value *a = NULL, *b = NULL;
        if (n && sg_graph_add_value_fresh(m->graph, base, NULL, &a, &v) == SG_OK &&
            sg_graph_add_value_fresh(m->graph, base, NULL, &b, &v) == SG_OK) {
            if (a == b || !strcmp(a->name, b->name))
                abort();
            if (sg_graph_add_input(m->graph, a) != SG_OK || sg_node_set_input(n, 0, a) != SG_OK ||
                sg_node_set_output(n, 0, b) != SG_OK)
                abort();
            if (sg_model_verify(m, &v) != SG_OK)
                abort(); /* fresh names or the edits broke an invariant */
        }
    }
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
