/*
 * cleanup.c - the registry of temporaries removed on a signal, their names,
 * and the removal of ones a killed process left (see sg_cleanup.h).
 *
 * A slot goes FREE -> BUSY (being filled) -> READY -> FREE (forgotten) or
 * CLAIMED (taken by sg_cleanup_run, which never gives it back: the process
 * is about to die). Only READY slots are acted on, so a handler never reads
 * a path half-written by another thread.
 */
#include "sg_cleanup.h"
#include "sg_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* optimize -j 256 has two temporaries a worker; untouched slots cost no
 * memory (zero pages). */
#define SLOTS 1024
#define PATH_CAP 4096
/* Folders nested deeper than this are left (ours are 3 deep at most). */
#define TREE_DEPTH 12

enum { FREE, BUSY, READY, CLAIMED };

static struct slot {
    _Atomic int state;
    _Atomic int kind;
    char path[PATH_CAP]; /* the path, then (RESTORE) the name to restore it to */
    const char *restore;
} slots[SLOTS];

int sg_cleanup_add(enum sg_cleanup_kind kind, const char *path, const char *restore_to)
{
    size_t n = strlen(path), r = restore_to ? strlen(restore_to) : 0;
    if ((unsigned)kind >= SG_CLEANUP_KIND_COUNT || n + 1 + r >= PATH_CAP ||
        (kind == SG_CLEANUP_RESTORE && !restore_to))
        return -1;
    for (int i = 0; i < SLOTS; i++) {
        int expect = FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expect, BUSY))
            continue;
        memcpy(slots[i].path, path, n + 1);
        slots[i].restore = slots[i].path + n + 1;
        memcpy(slots[i].path + n + 1, restore_to ? restore_to : "", r + 1);
        atomic_store(&slots[i].kind, (int)kind);
        atomic_store(&slots[i].state, READY);
        return i;
    }
    return -1;
}

void sg_cleanup_set_kind(int handle, enum sg_cleanup_kind kind)
{
    if (handle >= 0 && handle < SLOTS && (unsigned)kind < SG_CLEANUP_KIND_COUNT)
        atomic_store(&slots[handle].kind, (int)kind);
}

void sg_cleanup_forget(int handle)
{
    if (handle < 0 || handle >= SLOTS)
        return;
    int expect = READY;
    atomic_compare_exchange_strong(&slots[handle].state, &expect, FREE);
}

/* Empty the folder open at fd, then nothing: the caller removes it. */
static void empty_dir(int fd, int depth)
{
    char buf[4096] __attribute__((aligned(8)));
    /* Entries are removed while the folder is read: read it again from
     * the start until a pass removes nothing. */
    for (int pass = 0; pass < 8; pass++) {
        bool removed = false;
        lseek(fd, 0, SEEK_SET);
        for (;;) {
            long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n <= 0)
                break;
            for (long off = 0; off < n;) {
                struct {
                    uint64_t ino;
                    int64_t off;
                    unsigned short reclen;
                    unsigned char type;
                    char name[];
                } *e = (void *)(buf + off);
                off += e->reclen;
                if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
                    continue;
                if (unlinkat(fd, e->name, 0) == 0) {
                    removed = true;
                    continue;
                }
                if (depth >= TREE_DEPTH)
                    continue;
                int sub = openat(fd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                    continue;
                empty_dir(sub, depth + 1);
                close(sub);
                if (unlinkat(fd, e->name, AT_REMOVEDIR) == 0)
                    removed = true;
            }
        }
        if (!removed)
            break;
    }
}

bool sg_cleanup_remove_tree(const char *path)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return unlink(path) == 0 || errno == ENOENT;
        empty_dir(fd, 0);
        close(fd);
        /* A writer thread may still be adding files: try again. */
        if (rmdir(path) == 0 || errno == ENOENT)
            return true;
    }
    return false;
}

static void act(struct slot *s, bool restores)
{
    int kind = atomic_load(&s->kind);
    if ((kind == SG_CLEANUP_RESTORE) != restores)
        return;
    int expect = READY;
    if (!atomic_compare_exchange_strong(&s->state, &expect, CLAIMED))
        return;
    if (kind == SG_CLEANUP_FILE)
        unlink(s->path);
    else if (kind == SG_CLEANUP_TREE)
        sg_cleanup_remove_tree(s->path);
    else
        rename(s->path, s->restore);
}

void sg_cleanup_run(void)
{
    int saved = errno;
    /* Removals first: a result put in place goes before the earlier one
     * comes back to its name. */
    for (int i = 0; i < SLOTS; i++)
        act(&slots[i], false);
    for (int i = 0; i < SLOTS; i++)
        act(&slots[i], true);
    errno = saved;
}

/* ------------------------------------------------------------- names */

/* The longest name a folder entry may have. */
#define NAME_MAX_BYTES 255

char *sg_cleanup_temp_name(const char *target, const char *prefix, const char *infix)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dir_len = (size_t)(base - target);
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    size_t name_len = strlen(prefix) + strlen(base) + strlen(infix) + strlen(pid) + 7;
    bool fits = name_len <= NAME_MAX_BYTES;
    size_t cap = dir_len + (fits ? name_len : 3 + strlen(infix) + strlen(pid) + 7) + 1;
    char *s = sg_malloc(cap);
    if (!s)
        return NULL;
    if (fits)
        snprintf(s, cap, "%.*s%s%s%s%s.XXXXXX", (int)dir_len, target, prefix, base, infix, pid);
    else
        snprintf(s, cap, "%.*s.sg%s%s.XXXXXX", (int)dir_len, target, infix, pid);
    return s;
}

/* If `name` is "<head><pid>.XXXXXX" (X alphanumeric), *pid receives it. */
static bool temp_suffix(const char *name, const char *head, size_t head_len, long *pid)
{
    if (strncmp(name, head, head_len) != 0)
        return false;
    const char *p = name + head_len;
    long v = 0;
    const char *digits = p;
    while (*p >= '0' && *p <= '9' && p - digits < 10)
        v = v * 10 + (*p++ - '0');
    if (p == digits || *p != '.')
        return false;
    p++;
    for (int i = 0; i < 6; i++, p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return false;
    if (*p)
        return false;
    *pid = v;
    return true;
}

static bool process_gone(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Folders already scanned by this process (a batch writes many outputs
 * into one folder). */
static pthread_mutex_t scanned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    dev_t dev;
    ino_t ino;
} scanned[64];
static size_t n_scanned;

static bool first_scan(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return false;
    bool first = true;
    pthread_mutex_lock(&scanned_lock);
    for (size_t i = 0; i < n_scanned && first; i++)
        first = !(scanned[i].dev == sb.st_dev && scanned[i].ino == sb.st_ino);
    if (first) {
        size_t k = n_scanned < 64 ? n_scanned++ : (size_t)(sb.st_ino % 64);
        scanned[k].dev = sb.st_dev;
        scanned[k].ino = sb.st_ino;
    }
    pthread_mutex_unlock(&scanned_lock);
    return first;
}

/* Whether `name` ends in ".tmp.<pid>.XXXXXX" (any temporary of ours, of
 * whatever target); *pid receives the process id. */
static bool is_temp_name(const char *name, long *pid)
{
    for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp."))
        if (temp_suffix(p, ".tmp.", 5, pid))
            return true;
    return false;
}

/* The folder of `target` into dir ("." when it has none). */
static bool dir_of(const char *target, char *dir, size_t cap, const char **base)
{
    const char *slash = strrchr(target, '/');
    *base = slash ? slash + 1 : target;
    size_t dir_len = slash ? (size_t)(slash - target) : 0;
    if (dir_len >= cap || !**base)
        return false;
    if (slash)
        snprintf(dir, cap, "%.*s", dir_len ? (int)dir_len : 1, dir_len ? target : "/");
    else
        snprintf(dir, cap, ".");
    return true;
}

/* Remove the dead processes' temporaries in dir; with `target`, put back
 * (or remove) the earlier results of target they moved aside. */
static void scan(const char *dir, const char *target, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t bl = base ? strlen(base) : 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        long pid = 0;
        bool tmp = is_temp_name(n, &pid), old = false;
        /* Only the target's own ".old.": another "X.old.<n>.<word>" may be
         * a user's folder, while a ".tmp." with a dead owner is ours. */
        if (!tmp && base && strncmp(n, base, bl) == 0)
            old = temp_suffix(n + bl, ".old.", 5, &pid);
        if ((!tmp && !old) || !process_gone(pid))
            continue;
        char path[PATH_CAP];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, n) >= sizeof path)
            continue;
        struct stat sb, tb;
        if (lstat(path, &sb) != 0)
            continue;
        /* An earlier result moved aside: back to its name if the new one
         * never arrived, else the new one stands. */
        if (old && lstat(target, &tb) != 0 && errno == ENOENT && rename(path, target) == 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            sg_cleanup_remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
}

void sg_cleanup_stale(const char *target)
{
    char dir[PATH_CAP];
    const char *base;
    if (dir_of(target, dir, sizeof dir, &base) && first_scan(dir))
        scan(dir, NULL, NULL);
}

void sg_cleanup_stale_result(const char *target)
{
    char dir[PATH_CAP];
    const char *base;
    if (dir_of(target, dir, sizeof dir, &base))
        scan(dir, target, base);
}
