/*
 * fuzz_pipeline.c - libFuzzer harness for the pipeline readers
 * (passes/yaml.c, the -c PIPELINE.yaml reader, and passes/options.c's
 * "NAME:key=value,..." of --pass).
 *
 * The bytes are read as a YAML pipeline; their first line (up to 4 KB) as
 * a --pass spec. Both must accept or refuse cleanly; a step read from YAML
 * must name a pass. Build and run with tools/fuzz/run.sh pipeline.
 */
#include "fuzz_common.h"
#include "sg_alloc.h"
#include "sg_pass.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_pipeline *p = NULL;
    if (sg_pipeline_create(&p) != SG_OK)
        return 0;
    struct sg_diag d = {0};
    if (sg_pipeline_parse_yaml(p, (const char *)data, size, "fuzz.yaml", NULL, &d) == SG_OK)
        for (size_t i = 0; i < p->n_steps; i++)
            FUZZ_CHECK(p->steps[i].pass && p->steps[i].pass->name, "a step without a pass");
    else
        FUZZ_CHECK(d.status != SG_OK && d.msg[0], "a refusal without a message");
    size_t n = 0;
    while (n < size && n < 4096 && data[n] != '\n' && data[n] != '\0')
        n++;
    char spec[4097];
    memcpy(spec, data, n);
    spec[n] = '\0';
    struct sg_diag sd = {0};
    if (sg_pipeline_add_spec(p, spec, &sd) != SG_OK)
        FUZZ_CHECK(sd.status != SG_OK && sd.msg[0], "a refusal without a message");
    sg_pipeline_free(p);
    return 0;
}
