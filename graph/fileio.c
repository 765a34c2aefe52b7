/*
 * fileio.c - whole-file reads, atomic writes, sg_array basics and the
 * .bin / by-extension tensor readers.
 */
#include "load_impl.h"
#include "sg_alloc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_tensorfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The process umask, read once. umask() can only be read by setting it,
 * and a umask of 0 in force even for a moment would give files and folders
 * other threads create meanwhile (optimize -j, the dump writer) the wrong
 * mode; Linux shows it in /proc/self/status, so it is read there, and set
 * back and forth only when that fails (before any other thread exists).
 */
static mode_t process_umask;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned mask;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "Umask: %o", &mask) == 1;
    if (f)
        fclose(f);
    if (found) {
        process_umask = (mode_t)mask;
    } else {
        process_umask = umask(0);
        umask(process_umask);
    }
}

mode_t sg_file_umask(void)
{
    pthread_once(&umask_once, read_umask);
    return process_umask;
}

int sg__open_temp(const char *path, char **tmp, int *handle, struct sg_diag *diag)
{
    /* "<path>.tmp.<pid>.XXXXXX" (or a short hidden name when the file name
     * is too long for the suffix): the process id lets a later run tell a
     * killed writer's leftover from a live writer's file. */
    char *name = sg_cleanup_temp_name(path, "", ".tmp.");
    if (!name)
        return sg_diag_set(diag, SG_ENOMEM, "out of memory");
    /* Created with open(O_EXCL) and mode 0666 less the umask, as the final
     * file will be: mkstemp's 0600 needed an fchmod after it, a second
     * journaled inode update per file on ext4. */
    char *x = name + strlen(name) - 6;
    static _Atomic unsigned long serial;
    unsigned long seed = (unsigned long)getpid() * 2654435761ul;
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        unsigned long r = seed ^ (atomic_fetch_add(&serial, 1) * 0x9e3779b97f4a7c15ul);
        for (int i = 0; i < 6; i++, r /= 36)
            x[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[r % 36];
        /* Entered before it exists, so that no signal finds it unlisted. */
        *handle = sg_cleanup_add(SG_CLEANUP_FILE, name, NULL);
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            sg_cleanup_forget(*handle);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        sg_status st = sg_diag_set(diag, SG_EIO, "cannot create a file beside '%s': %s", path,
                                   strerror(errno));
        sg_free(name);
        *handle = -1;
        return st;
    }
    *tmp = name;
    return fd;
}

sg_status sg__file_temp_open(const char *path, struct sg_file_temp *t, bool guard,
                             struct sg_diag *diag)
{
    memset(t, 0, sizeof *t);
    t->handle = -1;
    sg_status st = guard ? sg_file_guard_check(path, diag) : SG_OK;
    if (st)
        return st;
    sg_cleanup_stale(path); /* what killed writers left beside it */
    int fd = sg__open_temp(path, &t->path, &t->handle, diag);
    if (fd < 0)
        return (sg_status)fd;
    t->fd = fd;
    return SG_OK;
}

sg_status sg_file_temp_open(const char *path, struct sg_file_temp *t, struct sg_diag *diag)
{
    return sg__file_temp_open(path, t, true, diag);
}

sg_status sg__file_temp_commit(struct sg_file_temp *t, const char *path, bool guard,
                               struct sg_diag *diag)
{
    sg_status st = guard ? sg_file_guard_check(path, diag) : SG_OK;
    if (!st && rename(t->path, path) != 0)
        st = sg_diag_set(diag, SG_EIO, "cannot put '%s' in place: %s", path, strerror(errno));
    if (st) {
        sg_file_temp_discard(t);
        return st;
    }
    sg_cleanup_forget(t->handle);
    sg_free(t->path);
    memset(t, 0, sizeof *t);
    t->handle = -1;
    return SG_OK;
}

sg_status sg_file_temp_commit(struct sg_file_temp *t, const char *path, struct sg_diag *diag)
{
    return sg__file_temp_commit(t, path, true, diag);
}

void sg_file_temp_discard(struct sg_file_temp *t)
{
    if (t->path) {
        unlink(t->path);
        sg_cleanup_forget(t->handle);
        sg_free(t->path);
    }
    memset(t, 0, sizeof *t);
    t->handle = -1;
}

sg_status sg__write_fd(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return SG_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return SG_OK;
}

sg_status sg_file_write_atomic_with(const char *path, sg_file_writer fn, void *ctx,
                                    struct sg_diag *diag)
{
    struct sg_file_temp t;
    sg_status st = sg_file_temp_open(path, &t, diag);
    if (st)
        return st;
    FILE *f = fdopen(t.fd, "w");
    if (!f) {
        st = sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
        close(t.fd);
        sg_file_temp_discard(&t);
        return st;
    }
    errno = 0;
    st = fn(f, ctx);
    int err = errno ? errno : EIO;
    if (!st && ferror(f))
        st = SG_EIO;
    if (fclose(f) != 0 && !st) {
        st = SG_EIO;
        err = errno;
    }
    if (st) {
        sg_file_temp_discard(&t);
        if (st == SG_ENOMEM)
            return sg_diag_set(diag, st, "%s: out of memory", path);
        return sg_diag_set(diag, st, "writing '%s': %s", path, strerror(err));
    }
    return sg_file_temp_commit(&t, path, diag);
}

struct bytes {
    const void *data;
    size_t len;
};

static sg_status write_bytes(FILE *out, void *ctx)
{
    const struct bytes *b = ctx;
    return b->len && fwrite(b->data, 1, b->len, out) != b->len ? SG_EIO : SG_OK;
}

sg_status sg_file_write_atomic(const char *path, const void *data, size_t len, struct sg_diag *diag)
{
    struct bytes b = {data, len};
    return sg_file_write_atomic_with(path, write_bytes, &b, diag);
}

int sg__read_fd(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (uint8_t *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO; /* EIO: the file shrank while read */
        got += (size_t)n;
    }
    return 0;
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISDIR(mode)  ? "a folder"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

int sg_file_open_read(const char *path, struct stat *sb, struct sg_diag *diag)
{
    struct stat local;
    if (!sb)
        sb = &local;
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever
     * (and a tty would become ours); only regular files are read, so it is
     * cleared again before the first read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return sg_diag_set(diag, SG_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, sb) != 0) {
        int err = errno;
        close(fd);
        return sg_diag_set(diag, SG_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    if (!S_ISREG(sb->st_mode)) {
        close(fd);
        return sg_diag_set(diag, SG_EIO, "%s: not a regular file (%s)", path,
                           file_kind(sb->st_mode));
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int err = errno;
        close(fd);
        return sg_diag_set(diag, SG_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    sg_file_guard_note_stat(path, sb);
    return fd;
}

sg_status sg_file_read_all(const char *path, size_t max_len, uint8_t **data, size_t *len,
                           struct sg_diag *diag)
{
    *data = NULL;
    *len = 0;
    struct stat sb;
    int fd = sg_file_open_read(path, &sb, diag);
    if (fd < 0)
        return (sg_status)fd;
    if ((uint64_t)sb.st_size > max_len) {
        close(fd);
        return sg_diag_set(diag, SG_ETOOBIG, "%s: %lld bytes, more than the %zu allowed", path,
                           (long long)sb.st_size, max_len);
    }
    size_t size = (size_t)sb.st_size;
    uint8_t *buf = sg_malloc(size + 1);
    if (!buf) {
        close(fd);
        return sg_diag_set(diag, SG_ENOMEM, "%s: out of memory", path);
    }
    int err = sg__read_fd(fd, buf, size);
    close(fd);
    if (err) {
        sg_free(buf);
        return sg_diag_set(diag, SG_EIO, "%s: cannot read: %s", path, strerror(err));
    }
    buf[size] = '\0';
    *data = buf;
    *len = size;
    return SG_OK;
}

void sg_array_free(struct sg_array *a)
{
    if (!a)
        return;
    sg_free(a->data);
    sg_free(a->name);
    sg_free(a->strings);
    memset(a, 0, sizeof *a);
}

int64_t sg_array_numel(const struct sg_array *a)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < a->rank; i++) {
        if (a->dims[i] < 0 || (a->dims[i] && n > INT64_MAX / a->dims[i]))
            return -1;
        n *= a->dims[i];
    }
    return n;
}

void sg_array_count_nonfinite(const struct sg_array *a, uint64_t *nan, uint64_t *inf)
{
    /* Exponent and mantissa masks of each float layout: all-ones exponent
     * is Inf with a zero mantissa, NaN otherwise. */
    static const struct {
        int32_t dtype;
        unsigned bytes;
        uint64_t exp, man;
    } layouts[] = {
        {SG_DTYPE_FLOAT, 4, 0x7f800000u, 0x007fffffu},
        {SG_DTYPE_DOUBLE, 8, 0x7ff0000000000000ull, 0x000fffffffffffffull},
        {SG_DTYPE_FLOAT16, 2, 0x7c00u, 0x03ffu},
        {SG_DTYPE_BFLOAT16, 2, 0x7f80u, 0x007fu},
    };
    uint64_t n_nan = 0, n_inf = 0;
    const unsigned char *p = a->data;
#define SG__COUNT(T)                                                                               \
    for (size_t i = 0; i < n; i++) {                                                               \
        T b;                                                                                       \
        memcpy(&b, p + i * sizeof b, sizeof b);                                                    \
        if ((b & (T)e) == (T)e) {                                                                  \
            n_nan += (b & (T)m) != 0;                                                              \
            n_inf += (b & (T)m) == 0;                                                              \
        }                                                                                          \
    }
    for (size_t k = 0; p && k < sizeof layouts / sizeof layouts[0]; k++) {
        if (layouts[k].dtype != a->dtype)
            continue;
        size_t n = a->nbytes / layouts[k].bytes;
        uint64_t e = layouts[k].exp, m = layouts[k].man;
        if (layouts[k].bytes == 2)
            SG__COUNT(uint16_t)
        else if (layouts[k].bytes == 4)
            SG__COUNT(uint32_t)
        else
            SG__COUNT(uint64_t)
    }
#undef SG__COUNT
    if (nan)
        *nan = n_nan;
    if (inf)
        *inf = n_inf;
}

sg_status sg_array_alloc(struct sg_array *a, int32_t dtype, const int64_t *dims, uint32_t rank)
{
    if (rank > SG_MAX_RANK)
        return SG_ERANGE;
    memset(a, 0, sizeof *a);
    a->dtype = dtype;
    a->rank = rank;
    for (uint32_t i = 0; i < rank; i++)
        a->dims[i] = dims[i];
    int64_t n = sg_array_numel(a);
    size_t es = sg_dtype_size(dtype);
    if (n < 0 || !es || (uint64_t)n > SIZE_MAX / es)
        return SG_ERANGE;
    a->nbytes = (size_t)n * es;
    a->data = sg_calloc(1, a->nbytes ? a->nbytes : 1);
    return a->data ? SG_OK : SG_ENOMEM;
}

sg_status sg_bin_read(const char *path, int32_t dtype, const int64_t *dims, uint32_t rank,
                      struct sg_array *out, struct sg_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!sg_dtype_size(dtype))
        return sg_diag_set(diag, SG_EINVAL, "%s: a .bin file needs the input's dtype and shape",
                           path);
    struct sg_array a;
    if (sg_array_alloc(&a, dtype, dims, rank))
        return sg_diag_set(diag, SG_ERANGE, "%s: bad shape for a .bin input", path);
    uint8_t *buf;
    size_t len;
    sg_status st = sg_file_read_all(path, a.nbytes + 1, &buf, &len, diag);
    if (st == SG_ETOOBIG) {
        sg_array_free(&a);
        sg_diag_clear(diag);
        return sg_diag_set(diag, SG_ESHAPE,
                           "%s: file is larger than the %zu bytes of a %s tensor of this shape",
                           path, a.nbytes, sg_dtype_name(dtype));
    }
    if (st) {
        sg_array_free(&a);
        return st;
    }
    size_t packed;
    if (len == a.nbytes) {
        memcpy(a.data, buf, len);
        if (sg_dtype_is_4bit(dtype)) /* one element a byte: its low nibble */
            for (size_t i = 0; i < len; i++)
                ((uint8_t *)a.data)[i] = sg_dtype_nibble(dtype, buf[i]);
    } else if (sg_dtype_is_4bit(dtype) &&
               sg_dtype_storage_bytes(dtype, (int64_t)a.nbytes, &packed) && len == packed) {
        sg_dtype_unpack4(dtype, buf, a.nbytes, a.data);
    } else if (dtype == SG_DTYPE_FLOAT && len * 2 == a.nbytes) {
        /* msit convention: a float16 file for a float32 input. */
        for (size_t i = 0; i < len / 2; i++) {
            uint16_t h;
            memcpy(&h, buf + 2 * i, 2);
            ((float *)a.data)[i] = sg_half_to_float(h);
        }
    } else {
        st = sg_diag_set(diag, SG_ESHAPE, "%s: %zu bytes, but a %s tensor of this shape has %zu",
                         path, len, sg_dtype_name(dtype), a.nbytes);
    }
    sg_free(buf);
    if (st)
        sg_array_free(&a);
    else
        *out = a;
    return st;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

sg_status sg_tensor_file_read(const char *path, int32_t dtype, const int64_t *dims, uint32_t rank,
                              struct sg_array *out, struct sg_diag *diag)
{
    if (has_suffix(path, ".npy"))
        return sg_npy_read_as(path, dtype, out, diag);
    if (has_suffix(path, ".pb"))
        return sg_pb_read(path, out, diag);
    if (has_suffix(path, ".bin"))
        return sg_bin_read(path, dtype, dims, rank, out, diag);
    memset(out, 0, sizeof *out);
    return sg_diag_set(diag, SG_EINVAL, "%s: unknown tensor file type (use .npy, .pb or .bin)",
                       path);
}

bool sg_value_count_nonfinite(sg_model *m, const sg_value *v, uint64_t *nan, uint64_t *inf)
{
    while (v && !v->init && v->outer)
        v = v->outer;
    if (!v || !v->init)
        return false;
    size_t nbytes = 0;
    const void *data = sg_tensor_data(m, v->init, &nbytes, NULL);
    if (!data && nbytes)
        return false;
    struct sg_array a = {.dtype = v->init->dtype, .data = (void *)data, .nbytes = nbytes};
    sg_array_count_nonfinite(&a, nan, inf);
    return true;
}
