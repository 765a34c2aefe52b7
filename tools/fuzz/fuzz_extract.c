/*
 * fuzz_extract.c - libFuzzer harness for the extract that cuts from the
 * file (sg_extract_file, graph/extract_stream*.c), against the loader and
 * sg_model_extract.
 *
 * The bytes are a model file. When the loader takes them, the cut asks for
 * the model's first graph input up to the first output of its middle node
 * (and, every other input, for the end node by name); else for "x" to "y".
 * Findings, besides crashes and sanitizer reports: the file path makes a
 * cut of a model the loader refuses; it makes one sg_model_extract refuses,
 * or keeps another number of nodes; its output does not load, or holds
 * another number of nodes than it says. Build and run with
 * tools/fuzz/run.sh extract.
 */
#include "fuzz_common.h"
#include "sg_cut.h"
#include "sg_io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the cuts are written, made once. */
static const char *out_path(void)
{
    static char path[64];
    if (!path[0]) {
        char dir[] = "/tmp/sg_fuzz_extract_XXXXXX";
        if (!mkdtemp(dir))
            return NULL;
        snprintf(path, sizeof path, "%s/cut.onnx", dir);
    }
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fuzz_file(data, size), *out = out_path();
    if (!in || !out)
        return 0;
    sg_model *m = NULL;
    struct sg_diag d = {0};
    bool loads = !sg_model_load_buffer(data, size, NULL, "fuzz", NULL, &m, &d);
    const char *ins[1] = {"x"}, *outs[1] = {"y"}, *end[1] = {NULL};
    struct sg_extract_spec spec = {.inputs = ins, .n_inputs = 1, .outputs = outs, .n_outputs = 1};
    if (loads && m->graph && m->graph->n_nodes && m->graph->n_inputs) {
        sg_node *mid = m->graph->first;
        for (uint32_t i = 0; i < m->graph->n_nodes / 2; i++)
            mid = mid->next;
        ins[0] = m->graph->inputs[0]->name;
        if (mid->n_outputs && mid->outputs[0])
            outs[0] = mid->outputs[0]->name;
        if ((size & 1) && mid->name && *mid->name) {
            end[0] = mid->name;
            spec = (struct sg_extract_spec){
                .inputs = ins, .n_inputs = 1, .end_nodes = end, .n_end_nodes = 1};
        }
    }
    struct sg_extract_report rep = {0};
    sg_status st = sg_extract_file(in, out, &spec, NULL, 0, &rep, &d);
    if (st == SG_OK) {
        FUZZ_CHECK(loads, "the file path cut a model the loader refuses");
        struct sg_extract_report ref = {0};
        struct sg_diag d2 = {0};
        sg_status ref_st = sg_model_extract(m, &spec, &ref, &d2);
        if (ref_st)
            fprintf(stderr, "sg_model_extract: %s\n", d2.msg);
        FUZZ_CHECK(!ref_st, "the file path made a cut sg_model_extract refuses");
        FUZZ_CHECK(ref.n_kept == rep.n_kept, "the two cuts keep different node counts");
        sg_model *cut = NULL;
        FUZZ_CHECK(!sg_model_load(out, NULL, &cut, &d2), "the file path's cut does not load");
        FUZZ_CHECK(cut->graph->n_nodes == rep.n_kept, "the cut holds another node count");
        sg_model_free(cut);
        sg_extract_report_free(&ref);
        unlink(out);
    } else {
        FUZZ_CHECK(access(out, F_OK) != 0, "a failed cut left its output");
    }
    sg_extract_report_free(&rep);
    sg_model_free(m);
    return 0;
}
