/* testutil.c - helpers shared by the Check suites. */
#include "testutil.h"
#include "sg_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ck_verify(sg_model *m)
{
    struct sg_diag d = {0};
    sg_status st = sg_model_verify(m, &d);
    ck_assert_msg(st == SG_OK, "verify: %s", d.msg);
}

char *test_tmpdir(const char *tag)
{
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/test-tmp", SG_BINARY_DIR);
    mkdir(tmpl, 0755);
    snprintf(tmpl, sizeof tmpl, "%s/test-tmp/%s.XXXXXX", SG_BINARY_DIR, tag);
    char *d = mkdtemp(tmpl);
    ck_assert_ptr_nonnull(d);
    return sg_strdup(d);
}

const char *test_src_path(const char *rel)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", SG_SOURCE_DIR, rel);
    return buf;
}
