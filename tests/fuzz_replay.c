/*
 * fuzz_replay.c - runs a libFuzzer harness of tools/fuzz on files, without
 * libFuzzer: each argument is a file or a folder whose files (not
 * subfolders) are fed to LLVMFuzzerTestOneInput one by one. The tests build
 * one replayer per harness and give it its seed corpus and the inputs it
 * once crashed on (tests/io/fuzz_regressions/<name>/), so a fixed crash
 * stays fixed; under the sanitized build a crash, a sanitizer report or a
 * broken invariant (abort) fails the test. A missing folder is skipped
 * with a message; no input at all is a failure.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *g = realloc(buf, cap);
            if (!g) {
                fclose(f);
                free(buf);
                return -1;
            }
            buf = g;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (!n)
            break;
    }
    fclose(f);
    /* A copy of exactly len bytes, so that ASan sees a read past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            printf("skip %s: not there\n", argv[i]);
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (replay_file(argv[i]) < 0)
                return 1;
            total++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (e->d_name[0] == '.' || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
                continue;
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(path);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp);
        for (size_t k = 0; k < n; k++) {
            if (replay_file(names[k]) < 0)
                return 1;
            free(names[k]);
        }
        free(names);
        printf("%s: %zu inputs\n", argv[i], n);
        total += (long)n;
    }
    printf("replayed %ld inputs\n", total);
    return total ? 0 : 1;
}
