/*
 * main.c - the surgeon command line: dispatch to one subcommand.
 */
#include "cli.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_suggest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SG_VERSION
#define SG_VERSION "0.0.0"
#endif

static const struct sg_command *const commands[] = {
    &sg_cmd_inspect,       &sg_cmd_convert,    &sg_cmd_passes, &sg_cmd_optimize, &sg_cmd_run,
    &sg_cmd_fusion_switch, &sg_cmd_keep_dtype, &sg_cmd_atc,    &sg_cmd_compare,  &sg_cmd_extract,
    &sg_cmd_split,         &sg_cmd_concat,     &sg_cmd_bisect,
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
        fprintf(out, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
    fputs("\nexit codes: 0 success, 1 failure on the input, 2 bad usage,\n"
          "            3 checks failed (compare: the network outputs are in error;\n"
          "              optimize: a model was written with warnings)\n",
          out);
}

static const struct sg_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    struct sg_suggest sg;
    sg_suggest_init(&sg, name);
    for (size_t i = 0; i < N_COMMANDS; i++)
        sg_suggest_offer(&sg, commands[i]->name);
    char hint[SG_SUGGEST_MAX_LEN + 32];
    cli_error("unknown command '%s'%s; see 'surgeon --help'", name,
              cli_did_you_mean(&sg, hint, sizeof hint));
    return SG_EXIT_USAGE;
}

/* The BLAS thread count a command wants: `run --threads N` / `compare ...
 * --threads N` ask for N; everything else does at most small products. 0:
 * leave OpenBLAS's own choice. */
static int wanted_blas_threads(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "compare") != 0))
        return 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            return atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 0;
        if (strncmp(argv[i], "--threads=", 10) == 0)
            return atoi(argv[i] + 10) > 0 ? atoi(argv[i] + 10) : 0;
    }
    return 0;
}

/*
 * OpenBLAS reads its settings from the environment when it is loaded and
 * starts its worker threads then; idle workers spin for a while, taking a
 * core from commands that do little linear algebra. The runtime loads it
 * with dlopen when the first session is created (runtime/blas.c), so
 * setting the environment at the top of main is enough: it is the only
 * thread then (setenv is not thread-safe) and OpenBLAS is not loaded yet.
 * Set: the thread count the command wants and, on CPUs with AVX-512 that
 * this OpenBLAS does not recognise, its AVX-512 kernels. A user's own
 * OPENBLAS_* settings always win.
 */
static void blas_environment(int argc, char **argv)
{
    int threads = wanted_blas_threads(argc, argv);
    if (threads > 0 && !getenv("OPENBLAS_NUM_THREADS")) {
        char n[16];
        snprintf(n, sizeof n, "%d", threads);
        setenv("OPENBLAS_NUM_THREADS", n, 1);
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
#endif
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporaries of the work under way
 * (sg_cleanup.h), then die of the signal as if it had not been caught, so
 * the shell sees the usual status. SIGKILL cannot be caught: its
 * leftovers carry our process id and a later run removes them. */
static void on_signal(int sig)
{
    sg_cleanup_run();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    /* A file size limit (ulimit -f) is then a write error naming the file
     * (EFBIG), as a full disk is, instead of a kill that leaves temporaries. */
    signal(SIGXFSZ, SIG_IGN);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa = {.sa_handler = on_signal};
        sigfillset(&sa.sa_mask); /* one cleanup at a time */
        /* An ignored signal (nohup) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int main(int argc, char **argv)
{
    blas_environment(argc, argv);
    (void)sg_file_umask(); /* read while this is the only thread */
    /* One process, one command: no output may replace a file it reads. */
    sg_file_guard_enable();
    catch_signals();
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
        if (!cmd)
            return unknown_command(argv[2]);
        fputs(cmd->usage, stdout);
        return SG_EXIT_OK;
    }
    const struct sg_command *cmd = find_command(arg);
    if (!cmd)
        return unknown_command(arg);
    if (cli_help_requested(cmd, argc - 1, argv + 1))
        return SG_EXIT_OK;
    return cmd->run(argc - 1, argv + 1);
}
