/*
 * roundtrip_tool.c - test helper: load each model named on stdin and save it
 * under OUTDIR/<index>.onnx, printing "<index> OK <path>" or
 * "<index> FAIL <path>: <reason>". Used by tests/roundtrip_corpus.py, which
 * then compares the files field by field with python3-onnx. Each loaded model
 * must also pass the full IR verifier.
 */
#include "sg_io.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR < list\n", argv[0]);
        return 2;
    }
    char line[4096];
    int index = 0, failed = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!*line)
            continue;
        struct sg_diag d = {0};
        sg_model *m = NULL;
        char out[4200];
        snprintf(out, sizeof out, "%s/%d.onnx", argv[1], index);
        /* The loader must build a model that passes the full verifier. */
        if (sg_model_load(line, NULL, &m, &d) == SG_OK && sg_model_verify(m, &d) == SG_OK &&
            sg_model_save(m, out, NULL, &d) == SG_OK) {
            printf("%d OK %s\n", index, line);
        } else {
            printf("%d FAIL %s: %s\n", index, line, d.msg);
            failed++;
        }
        sg_model_free(m);
        index++;
    }
    return failed ? 1 : 0;
}
