/*
 * fileguard.c - the output guard: the files a command reads, by device and
 * inode, so that none of its outputs replaces one (see sg_file.h).
 *
 * A set under one lock: readers add what they open, writers look their
 * target up; an optimize batch of thousands of models stays O(1) a file.
 */
#include "sg_alloc.h"
#include "sg_file.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

struct entry {
    dev_t dev;
    ino_t ino;
    char *path; /* NULL: empty slot */
};

static atomic_bool enabled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static size_t cap, count;

void sg_file_guard_enable(void)
{
    atomic_store(&enabled, true);
}

bool sg_file_guard_enabled(void)
{
    return atomic_load(&enabled);
}

static size_t slot_of(dev_t dev, ino_t ino, size_t mask)
{
    uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h >> 17) & mask;
}

/* The entry for (dev, ino), or the empty slot where it would go. Locked. */
static struct entry *find(dev_t dev, ino_t ino)
{
    size_t mask = cap - 1;
    for (size_t i = slot_of(dev, ino, mask);; i = (i + 1) & mask)
        if (!table[i].path || (table[i].dev == dev && table[i].ino == ino))
            return &table[i];
}

static bool grow(void)
{
    size_t ncap = cap ? cap * 2 : 64;
    struct entry *old = table, *fresh = sg_calloc(ncap, sizeof *fresh);
    if (!fresh)
        return false;
    size_t ocap = cap;
    table = fresh;
    cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].path)
            *find(old[i].dev, old[i].ino) = old[i];
    sg_free(old);
    return true;
}

void sg_file_guard_note_stat(const char *path, const struct stat *sb)
{
    if (!atomic_load(&enabled))
        return;
    pthread_mutex_lock(&lock);
    /* Out of memory: the file goes unguarded rather than failing a read
     * (the command that hit it is failing anyway). */
    if ((count + 1) * 2 <= cap || grow()) {
        struct entry *e = find(sb->st_dev, sb->st_ino);
        if (!e->path && (e->path = sg_strdup(path))) {
            e->dev = sb->st_dev;
            e->ino = sb->st_ino;
            count++;
        }
    }
    pthread_mutex_unlock(&lock);
}

void sg_file_guard_note(const char *path)
{
    struct stat sb;
    if (atomic_load(&enabled) && stat(path, &sb) == 0)
        sg_file_guard_note_stat(path, &sb);
}

const char *sg_file_guard_input(dev_t dev, ino_t ino)
{
    if (!atomic_load(&enabled))
        return NULL;
    pthread_mutex_lock(&lock);
    const char *path = cap ? find(dev, ino)->path : NULL;
    pthread_mutex_unlock(&lock);
    return path;
}

sg_status sg_file_guard_check(const char *path, struct sg_diag *diag)
{
    struct stat sb;
    if (!atomic_load(&enabled) || stat(path, &sb) != 0)
        return SG_OK;
    const char *input = sg_file_guard_input(sb.st_dev, sb.st_ino);
    if (!input)
        return SG_OK;
    if (strcmp(input, path) == 0)
        return sg_diag_set(diag, SG_EEXISTS,
                           "refusing to write '%s': this command reads it; choose another output",
                           path);
    return sg_diag_set(diag, SG_EEXISTS,
                       "refusing to write '%s': it is '%s', which this command reads; choose "
                       "another output",
                       path, input);
}
