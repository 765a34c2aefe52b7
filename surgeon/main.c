/*
 * main.c - the surgeon command line: dispatch to one subcommand.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifndef SG_VERSION
#define SG_VERSION "0.0.0"
#endif

static const struct sg_command *const commands[] = {
    &sg_cmd_inspect,
    &sg_cmd_convert,
    &sg_cmd_run,
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *out)
{
    fputs("usage: surgeon COMMAND [ARGS...]\n"
          "       surgeon COMMAND --help\n"
          "       surgeon --version\n\n"
          "Fix ONNX models before compiling them for an accelerator, and prove each fix.\n\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
    fputs("\nexit codes: 0 success, 1 failure on the input, 2 bad usage\n", out);
}

static const struct sg_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return SG_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        print_help(stdout);
        return SG_EXIT_OK;
    }
    if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
        printf("surgeon %s\n", SG_VERSION);
        return SG_EXIT_OK;
    }
    if (strcmp(arg, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return SG_EXIT_OK;
        }
        const struct sg_command *cmd = find_command(argv[2]);
        if (!cmd) {
            cli_error("unknown command '%s'; see 'surgeon --help'", argv[2]);
            return SG_EXIT_USAGE;
        }
        fputs(cmd->usage, stdout);
        return SG_EXIT_OK;
    }
    const struct sg_command *cmd = find_command(arg);
    if (!cmd) {
        cli_error("unknown command '%s'; see 'surgeon --help'", arg);
        return SG_EXIT_USAGE;
    }
    if (cli_help_requested(cmd, argc - 1, argv + 1))
        return SG_EXIT_OK;
    return cmd->run(argc - 1, argv + 1);
}
