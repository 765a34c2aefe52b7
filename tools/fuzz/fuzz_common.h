/*
 * fuzz_common.h - what the readers' fuzz harnesses share: a memory file
 * (memfd) that the file readers open by path, as they open any file, and a
 * check that aborts on a broken invariant (a finding, like a crash).
 */
#ifndef SG_FUZZ_COMMON_H
#define SG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Fill the process's memory file with data; its path, "/proc/self/fd/N"
 * (a regular file to every reader). NULL when memfds are not available. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz", MFD_CLOEXEC);
        if (fd < 0)
            return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return NULL;
    return path;
}

/* A broken invariant is a finding: abort with the reason. */
#define FUZZ_CHECK(cond, what)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, __FILE__, __LINE__);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
