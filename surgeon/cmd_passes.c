/*
 * cmd_passes.c - `surgeon passes`: list the passes from the registry, with
 * their summaries and typed options.
 */
#include "cli.h"
#include "sg_pass.h"

#include <string.h>

static int run(int argc, char **argv);

const struct sg_command sg_cmd_passes = {
    "passes",
    "list the rewrite passes and their options",
    "usage: surgeon passes [NAME...]\n\n"
    "List every pass (or the named ones) with its summary and options: name,\n"
    "type, meaning and default.\n"
    "Give options on the command line as --pass NAME:key=value,key=value\n"
    "(lists are comma-separated) or in a YAML pipeline (see README.md).\n",
    run,
};

static int run(int argc, char **argv)
{
    size_t count;
    const struct sg_pass *const *all = sg_pass_list(&count);
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            return cli_usage(&sg_cmd_passes, "unknown option '%s'", argv[i]);
        if (!sg_pass_find(argv[i])) {
            const char *near = sg_pass_suggest(argv[i], strlen(argv[i]));
            if (near)
                return cli_usage(&sg_cmd_passes, "unknown pass '%s' (did you mean '%s'?)", argv[i],
                                 near);
            return cli_usage(&sg_cmd_passes, "unknown pass '%s'", argv[i]);
        }
    }
    bool first = true;
    for (size_t k = 0; k < count; k++) {
        bool wanted = argc < 2;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], all[k]->name) == 0;
        if (!wanted)
            continue;
        if (!first && all[k]->n_options)
            fputc('\n', stdout);
        first = false;
        sg_pass_print_help(all[k], stdout);
    }
    return SG_EXIT_OK;
}
