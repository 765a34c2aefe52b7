/* status.c - the status table and diagnostics (see sg_status.h). */
#include "sg_status.h"

#include <stdio.h>
#include <string.h>

struct status_entry {
    sg_status code;
    const char *name;
    const char *msg;
};

static const struct status_entry status_table[] = {
#define SG__STATUS_ROW(name, code, msg) {(sg_status)(code), "SG_E" #name, msg},
    SG_STATUS_MAP(SG__STATUS_ROW)
#undef SG__STATUS_ROW
};

static const struct status_entry *status_find(sg_status status)
{
    for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
        if (status_table[i].code == status)
            return &status_table[i];
    return NULL;
}

const char *sg_strerror(sg_status status)
{
    if (status == SG_OK)
        return "success";
    const struct status_entry *e = status_find(status);
    return e ? e->msg : "unknown error";
}

const char *sg_status_name(sg_status status)
{
    if (status == SG_OK)
        return "SG_OK";
    const struct status_entry *e = status_find(status);
    return e ? e->name : "SG_E?";
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xe0) == 0xc0 ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (n == 2 && s[0] < 0xc2)
        return 0; /* overlong */
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Messages quote names taken from the model, which may hold any bytes: make
 * the message one line of valid UTF-8 by writing control bytes and bytes
 * outside valid UTF-8 as \xNN (cut to fit). */
static void make_printable(char *msg, size_t size)
{
    const unsigned char *p = (const unsigned char *)msg;
    size_t i = 0;
    for (; p[i]; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f || (p[i] >= 0x80 && !utf8_len(p + i)))
            break;
        if (p[i] >= 0x80)
            i += utf8_len(p + i) - 1;
    }
    if (!p[i])
        return; /* the usual case: nothing to do */
    char out[SG_DIAG_MAX];
    size_t o = 0, cap = size < sizeof out ? size : sizeof out;
    memcpy(out, msg, i);
    o = i;
    while (p[i]) {
        size_t n = p[i] >= 0x80 ? utf8_len(p + i) : 1;
        if (n && p[i] >= 0x20 && p[i] != 0x7f) {
            if (o + n >= cap)
                break;
            memcpy(out + o, p + i, n);
            o += n;
            i += n;
        } else {
            if (o + 4 >= cap)
                break;
            snprintf(out + o, 5, "\\x%02x", p[i]);
            o += 4;
            i++;
        }
    }
    out[o] = '\0';
    memcpy(msg, out, o + 1);
}

sg_status sg_diag_setv(struct sg_diag *diag, sg_status status, const char *fmt, va_list ap)
{
    if (!diag || diag->status != SG_OK)
        return status;
    diag->status = status;
    vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
    make_printable(diag->msg, sizeof diag->msg);
    return status;
}

sg_status sg_diag_set(struct sg_diag *diag, sg_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sg_diag_setv(diag, status, fmt, ap);
    va_end(ap);
    return status;
}

void sg_diag_prefix(struct sg_diag *diag, const char *fmt, ...)
{
    if (!diag || diag->status == SG_OK)
        return;
    char old[SG_DIAG_MAX];
    memcpy(old, diag->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
    va_end(ap);
    make_printable(diag->msg, sizeof diag->msg);
    n = (int)strlen(diag->msg);
    size_t pos = n < 0 ? 0 : (size_t)n;
    if (pos > sizeof diag->msg - 1)
        pos = sizeof diag->msg - 1;
    /* Append ": <old message>" as far as it fits. */
    size_t room = sizeof diag->msg - 1 - pos;
    size_t old_len = strlen(old);
    const char *parts[2] = {": ", old};
    size_t lens[2] = {2, old_len};
    for (int i = 0; i < 2; i++) {
        size_t k = lens[i] < room ? lens[i] : room;
        memcpy(diag->msg + pos, parts[i], k);
        pos += k;
        room -= k;
    }
    diag->msg[pos] = '\0';
}

void sg_diag_clear(struct sg_diag *diag)
{
    if (diag) {
        diag->status = SG_OK;
        diag->msg[0] = '\0';
    }
}
