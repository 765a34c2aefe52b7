/*
 * replay.c - run a libFuzzer harness on given files, without libFuzzer:
 *
 *     sg_fuzz_runtime_replay FILE|DIR...
 *
 * Each file (every regular file of a DIR, in name order; subfolders are
 * skipped) goes through LLVMFuzzerTestOneInput once and prints "ok NAME";
 * a crash, a sanitizer report or a broken invariant (abort) ends the
 * process, which is the failure. A missing argument is skipped with a
 * message; no input at all is a failure. The tests build every harness of
 * tools/fuzz with it and replay its seeds and the inputs a fuzzer once
 * failed on, in the project's own sanitized build.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    printf("ok %s\n", path);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    long total = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            /* A harness with no regressions yet has no folder for them. */
            printf("skip %s: not there\n", argv[i]);
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            rc |= replay_file(argv[i]);
            total++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char **grown = realloc(names, (n + 1) * sizeof *names);
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            if (!grown || !(grown[n] = malloc(len))) {
                fprintf(stderr, "replay: out of memory\n");
                return 1;
            }
            names = grown;
            snprintf(names[n], len, "%s/%s", argv[i], e->d_name);
            /* Files only: a subfolder holds another harness's inputs. */
            if (stat(names[n], &st) == 0 && S_ISREG(st.st_mode))
                n++;
            else
                free(names[n]);
        }
        if (d)
            closedir(d);
        qsort(names, n, sizeof *names, cmp);
        for (size_t j = 0; j < n; j++) {
            rc |= replay_file(names[j]);
            free(names[j]);
        }
        free(names);
        total += (long)n;
    }
    printf("replayed %ld inputs\n", total);
    if (!total) {
        fprintf(stderr, "replay: no input to replay\n");
        return 1;
    }
    return rc;
}
