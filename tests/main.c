/*
 * main.c - the Check test runner: one suite per module, exit status set by
 * the number of failures. `sg_tests SUITE...` runs only the named suites.
 */
#include "testutil.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    Suite *(*make)(void);
} suites[] = {
#define SG_SUITE(name, fn) {name, fn},
#include "suites.inc"
#undef SG_SUITE
};

int main(int argc, char **argv)
{
    SRunner *sr = NULL;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        bool wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], suites[i].name) == 0)
                wanted = true;
        if (!wanted)
            continue;
        Suite *s = suites[i].make();
        if (!sr)
            sr = srunner_create(s);
        else
            srunner_add_suite(sr, s);
    }
    if (!sr) {
        fprintf(stderr, "no such suite\n");
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
