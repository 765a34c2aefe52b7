/*
 * kernel_table_tool.c - test helper: print every entry of the runtime's
 * kernel tables (every family of runtime/kernels/families.inc), one per line:
 *
 *     family <TAB> domain <TAB> op_type <TAB> since_version <TAB>
 *     type_input <TAB> types (hex mask) <TAB> flags (hex) <TAB> inputs
 *
 * The domain "" prints as "ai.onnx". Read by tests/kernel_inputs_test.py
 * (the `inputs` patterns against ONNX's schemas) and
 * tests/kernel_adversarial.py (a model per entry with each input omitted
 * and with huge dims and attributes), so both cover exactly what is
 * registered.
 */
#include "sg_kernel.h"

#include <stdio.h>

int main(void)
{
    for (size_t f = 0; f < sg_kernel_n_families; f++) {
        const struct sg_kernel_family *fam = sg_kernel_families[f];
        for (size_t i = 0; i < fam->count; i++) {
            const struct sg_kernel *e = &fam->kernels[i];
            printf("%s\t%s\t%s\t%d\t%d\t%x\t%x\t%s\n", fam->name,
                   *e->domain ? e->domain : "ai.onnx", e->op_type, e->since_version, e->type_input,
                   e->types, e->flags, e->inputs ? e->inputs : "(none)");
        }
    }
    return 0;
}
