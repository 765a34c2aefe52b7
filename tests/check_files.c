/*
 * check_files.c - the shared file machinery of graph/: the opener that
 * never blocks, the output guard, the registry of temporaries cleaned on a
 * signal (and after a kill), result folders replaced only over an earlier
 * result, and long nested diagnostics.
 *
 * The guard and the registry are process-wide: the tests that turn them on
 * or die of a signal run in a child process of their own.
 */
#include "testutil.h"
#include "sg_alloc.h"
#include "sg_cleanup.h"
#include "sg_file.h"
#include "sg_outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Run fn in a child; its exit status (or 128 + the signal that killed it). */
static int in_child(int (*fn)(const char *), const char *dir)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(fn(dir));
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A FIFO, a folder and a device are refused at once, naming what they are. */
START_TEST(test_open_read_refuses)
{
    char *dir = test_tmpdir("open_read");
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/f", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const struct {
        const char *path, *what;
    } cases[] = {{fifo, "not a regular file (a FIFO)"},
                 {dir, "not a regular file (a folder)"},
                 {"/dev/null", "not a regular file (a character device)"},
                 {"/nonexistent/x", "cannot open: No such file or directory"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sg_diag d = {0};
        ck_assert_int_eq(sg_file_open_read(cases[i].path, NULL, &d), SG_EIO);
        ck_assert_msg(strstr(d.msg, cases[i].what) && strstr(d.msg, cases[i].path), "%s", d.msg);
    }
    char reg[512];
    snprintf(reg, sizeof reg, "%s/r.txt", dir);
    write_file(reg, "abc");
    struct sg_diag d = {0};
    struct stat sb;
    int fd = sg_file_open_read(reg, &sb, &d);
    ck_assert_int_ge(fd, 0);
    char buf[4] = {0};
    ck_assert_int_eq(read(fd, buf, 3), 3); /* blocking again, readable */
    ck_assert_str_eq(buf, "abc");
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
    unlink(fifo);
    sg_free(dir);
}
END_TEST

/* With the guard on: a file read is no output, by any name. */
static int guard_child(const char *dir)
{
    char in[512], lnk[512], hard[512], other[512];
    snprintf(in, sizeof in, "%s/in.txt", dir);
    snprintf(lnk, sizeof lnk, "%s/link.txt", dir);
    snprintf(hard, sizeof hard, "%s/hard.txt", dir);
    snprintf(other, sizeof other, "%s/other.txt", dir);
    FILE *f = fopen(in, "w");
    fputs("input", f);
    fclose(f);
    if (symlink("in.txt", lnk) || link(in, hard))
        return 10;
    struct sg_diag d = {0};
    if (sg_file_guard_check(in, &d) != SG_OK)
        return 11; /* off: nothing noted */
    sg_file_guard_enable();
    uint8_t *buf;
    size_t len;
    if (sg_file_read_all(in, 100, &buf, &len, &d))
        return 12;
    sg_free(buf);
    const char *outs[] = {in, lnk, hard};
    for (int i = 0; i < 3; i++) {
        struct sg_diag e = {0};
        if (sg_file_guard_check(outs[i], &e) != SG_EEXISTS || !strstr(e.msg, "this command reads"))
            return 13 + i;
        if (sg_file_write_atomic(outs[i], "x", 1, &e) != SG_EEXISTS)
            return 16 + i;
    }
    f = fopen(in, "r");
    char text[16] = {0};
    if (!f || !fgets(text, sizeof text, f) || strcmp(text, "input"))
        return 19; /* the input is intact */
    fclose(f);
    struct sg_diag e = {0};
    if (sg_file_write_atomic(other, "ok", 2, &e) != SG_OK)
        return 20;
    sg_file_guard_note(other); /* noted before it is read */
    if (sg_file_write_atomic(other, "no", 2, &e) != SG_EEXISTS)
        return 21;
    return 0;
}

START_TEST(test_guard)
{
    char *dir = test_tmpdir("guard");
    ck_assert_int_eq(in_child(guard_child, dir), 0);
    sg_free(dir);
}
END_TEST

static void on_term(int sig)
{
    sg_cleanup_run();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A temporary file, a folder being filled and an earlier result moved
 * aside: a signal removes the first two and puts the third back. */
static int signal_child(const char *dir)
{
    char target[512], tree[512], sub[600], aside[512], out[512];
    snprintf(target, sizeof target, "%s/m.onnx", dir);
    snprintf(tree, sizeof tree, "%s/.res.tmp.x", dir);
    snprintf(sub, sizeof sub, "%s/inputs", tree);
    snprintf(aside, sizeof aside, "%s/res.old.x", dir);
    snprintf(out, sizeof out, "%s/res", dir);
    struct sg_file_temp t;
    struct sg_diag d = {0};
    if (sg_file_temp_open(target, &t, &d))
        return 10;
    if (write(t.fd, "partial", 7) != 7 || mkdir(tree, 0777) || mkdir(sub, 0777) ||
        mkdir(aside, 0777))
        return 11;
    char deep[700];
    snprintf(deep, sizeof deep, "%s/x.npy", sub);
    FILE *f = fopen(deep, "w");
    fputs("data", f);
    fclose(f);
    sg_cleanup_add(SG_CLEANUP_TREE, tree, NULL);
    sg_cleanup_add(SG_CLEANUP_RESTORE, aside, out);
    signal(SIGTERM, on_term);
    raise(SIGTERM);
    return 12; /* not reached */
}

START_TEST(test_cleanup_on_signal)
{
    char *dir = test_tmpdir("cleanup_signal");
    ck_assert_int_eq(in_child(signal_child, dir), 128 + SIGTERM);
    char path[512];
    snprintf(path, sizeof path, "%s/.res.tmp.x", dir);
    ck_assert(!exists(path));
    snprintf(path, sizeof path, "%s/res", dir);
    ck_assert(exists(path)); /* the earlier result is back */
    snprintf(path, sizeof path, "%s/res.old.x", dir);
    ck_assert(!exists(path));
    /* Only what was created remains: the result folder. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A %s)\" = res", dir);
    ck_assert_int_eq(system(cmd), 0);
    sg_free(dir);
}
END_TEST

static int exit_at_once(const char *dir)
{
    (void)dir;
    return 0;
}

/* A killed process's temporaries go on the next write beside them; a live
 * one's, and names merely alike, stay; an earlier result moved aside comes
 * back when its place is empty. */
START_TEST(test_cleanup_stale)
{
    char *dir = test_tmpdir("cleanup_stale");
    pid_t dead = fork();
    if (dead == 0)
        _exit(exit_at_once(dir));
    waitpid(dead, NULL, 0);
    char target[512], p[7][600];
    snprintf(target, sizeof target, "%s/res", dir);
    snprintf(p[0], sizeof p[0], "%s/res.tmp.%d.abc123", dir, (int)dead);     /* removed */
    snprintf(p[1], sizeof p[1], "%s/.res.tmp.%d.abc123", dir, (int)dead);    /* removed (a tree) */
    snprintf(p[2], sizeof p[2], "%s/res.tmp.%d.abc123", dir, (int)getpid()); /* live: kept */
    snprintf(p[3], sizeof p[3], "%s/res.old.%d.xyz789", dir, (int)dead);     /* restored */
    snprintf(p[4], sizeof p[4], "%s/other.tmp.%d.abc123", dir, (int)dead);   /* not res's: kept */
    snprintf(p[5], sizeof p[5], "%s/res.tmp.%d.abc", dir, (int)dead); /* not our name: kept */
    write_file(p[0], "x");
    ck_assert_int_eq(mkdir(p[1], 0777), 0);
    char in[700];
    snprintf(in, sizeof in, "%s/f", p[1]);
    write_file(in, "x");
    write_file(p[2], "x");
    ck_assert_int_eq(mkdir(p[3], 0777), 0);
    write_file(p[4], "x");
    write_file(p[5], "x");
    snprintf(p[6], sizeof p[6], "%s/data.old.%d.backup", dir, (int)dead); /* a user's: kept */
    ck_assert_int_eq(mkdir(p[6], 0777), 0);
    sg_cleanup_stale(target); /* what every write does: temporaries only */
    ck_assert(!exists(p[0]) && !exists(p[1]) && !exists(p[4]));
    ck_assert(exists(p[2]) && exists(p[3]) && exists(p[5]) && exists(p[6]) && !exists(target));
    sg_cleanup_stale_result(target); /* a result folder's: its earlier result back */
    ck_assert(!exists(p[3]) && exists(target) && exists(p[6]));
    sg_free(dir);
}
END_TEST

START_TEST(test_temp_names)
{
    char *n = sg_cleanup_temp_name("out/m.onnx", "", ".tmp.");
    char want[64];
    snprintf(want, sizeof want, "out/m.onnx.tmp.%d.XXXXXX", (int)getpid());
    ck_assert_str_eq(n, want);
    sg_free(n);
    n = sg_cleanup_temp_name("res", ".", ".tmp.");
    snprintf(want, sizeof want, ".res.tmp.%d.XXXXXX", (int)getpid());
    ck_assert_str_eq(n, want);
    sg_free(n);
    char longname[300];
    memset(longname, 'a', 255);
    memcpy(longname, "d/", 2);
    longname[255] = '\0';
    n = sg_cleanup_temp_name(longname, "", ".tmp.");
    snprintf(want, sizeof want, "d/.sg.tmp.%d.XXXXXX", (int)getpid());
    ck_assert_str_eq(n, want);
    sg_free(n);
}
END_TEST

static void fill(const char *dir, const char *rel, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    write_file(path, text);
}

/* A result folder replaces only an earlier result of the same command. */
START_TEST(test_outdir)
{
    char *dir = test_tmpdir("outdir");
    char out[512], path[700];
    snprintf(out, sizeof out, "%s/res", dir);
    struct sg_outdir od;
    struct sg_diag d = {0};
    ck_assert_ok(sg_outdir_begin(&od, out, "run", &d), &d);
    snprintf(path, sizeof path, "%s/inputs", od.tmp);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    fill(od.tmp, "inputs/x.npy", "x");
    fill(od.tmp, "manifest.json", "{}");
    ck_assert_ok(sg_outdir_commit(&od, &d), &d);
    /* Again: replaced, and files added after publish are listed. */
    ck_assert_ok(sg_outdir_begin(&od, out, "run", &d), &d);
    fill(od.tmp, "a.npy", "a");
    ck_assert_ok(sg_outdir_publish(&od, &d), &d);
    fill(out, "report.html", "late");
    ck_assert_ok(sg_outdir_commit(&od, &d), &d);
    snprintf(path, sizeof path, "%s/inputs", out);
    ck_assert(!exists(path)); /* the earlier result is gone */
    ck_assert_ok(sg_outdir_check(out, "run", &d), &d);
    /* Another command's result, a user's file, a symlink: refused. */
    ck_assert_int_eq(sg_outdir_check(out, "compare", &d), SG_EEXISTS);
    ck_assert_msg(strstr(d.msg, "is the result of surgeon run, not of surgeon compare"), "%s",
                  d.msg);
    sg_diag_clear(&d);
    fill(out, "notes.txt", "mine");
    ck_assert_int_eq(sg_outdir_begin(&od, out, "run", &d), SG_EEXISTS);
    ck_assert_msg(strstr(d.msg, "holds 'notes.txt', which no earlier surgeon run wrote"), "%s",
                  d.msg);
    sg_diag_clear(&d);
    snprintf(path, sizeof path, "%s/notes.txt", out);
    unlink(path);
    ck_assert_int_eq(symlink("/etc", path), 0);
    ck_assert_int_eq(sg_outdir_check(out, "run", &d), SG_EEXISTS);
    unlink(path);
    sg_diag_clear(&d);
    /* Abort after publish: the earlier result comes back. */
    ck_assert_ok(sg_outdir_begin(&od, out, "run", &d), &d);
    fill(od.tmp, "b.npy", "b");
    ck_assert_ok(sg_outdir_publish(&od, &d), &d);
    sg_outdir_abort(&od);
    snprintf(path, sizeof path, "%s/a.npy", out);
    ck_assert(exists(path));
    snprintf(path, sizeof path, "%s/b.npy", out);
    ck_assert(!exists(path));
    /* A folder without a list, and a file, are refused; an empty one is fine. */
    char proj[512];
    snprintf(proj, sizeof proj, "%s/proj", dir);
    ck_assert_int_eq(mkdir(proj, 0777), 0);
    ck_assert_ok(sg_outdir_check(proj, "run", &d), &d);
    fill(proj, "manifest.json", "{}");
    ck_assert_int_eq(sg_outdir_check(proj, "run", &d), SG_EEXISTS);
    ck_assert_msg(strstr(d.msg, "is not an earlier surgeon run folder"), "%s", d.msg);
    sg_diag_clear(&d);
    snprintf(path, sizeof path, "%s/manifest.json", proj);
    ck_assert_int_eq(sg_outdir_check(path, "run", &d), SG_EEXISTS);
    /* Nothing of ours is left beside them. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A %s | tr '\\n' ' ')\" = 'proj res '", dir);
    ck_assert_int_eq(system(cmd), 0);
    sg_free(dir);
}
END_TEST

/* 70 nested prefixes: the cause and both ends of the path stay. */
START_TEST(test_diag_prefix_elides)
{
    struct sg_diag d = {0};
    sg_diag_set(&d, SG_EPARSE, "the cause");
    for (int i = 0; i < 70; i++)
        sg_diag_prefix(&d, "in subgraph 'then_branch' of node 'if%d'", i);
    sg_diag_prefix(&d, "m.onnx");
    ck_assert_uint_lt(strlen(d.msg), SG_DIAG_MAX - 1);
    const char *start = "m.onnx: in subgraph 'then_branch' of node 'if69': ";
    ck_assert_msg(strncmp(d.msg, start, strlen(start)) == 0, "%s", d.msg);
    ck_assert_msg(strstr(d.msg, "of node 'if1': in subgraph 'then_branch' of node 'if0': the "
                                "cause"),
                  "%s", d.msg);
    ck_assert_ptr_nonnull(strstr(d.msg, ": ...: "));
    ck_assert_ptr_null(strstr(strstr(d.msg, ": ...: ") + 1, ": ...: ")); /* one elision */
    ck_assert_int_eq(d.status, SG_EPARSE);
    /* Short messages are untouched. */
    struct sg_diag s = {0};
    sg_diag_set(&s, SG_EIO, "why");
    sg_diag_prefix(&s, "f");
    ck_assert_str_eq(s.msg, "f: why");
}
END_TEST

Suite *suite_files(void)
{
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_add_test(tc, test_open_read_refuses);
    tcase_add_test(tc, test_guard);
    tcase_add_test(tc, test_cleanup_on_signal);
    tcase_add_test(tc, test_cleanup_stale);
    tcase_add_test(tc, test_temp_names);
    tcase_add_test(tc, test_outdir);
    tcase_add_test(tc, test_diag_prefix_elides);
    suite_add_tcase(s, tc);
    return s;
}
