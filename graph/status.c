/* status.c - the status table and diagnostics (see sg_status.h). */
#include "sg_status.h"
#include "utf8.h"

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

/* Messages quote names taken from the model, which may hold any bytes: make
 * the message one line of valid UTF-8 by writing control bytes and bytes
 * outside valid UTF-8 as \xNN (cut to fit). */
static void make_printable(char *msg, size_t size)
{
    const unsigned char *p = (const unsigned char *)msg, *end = p + strlen(msg);
    size_t i = 0;
    for (; p[i]; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f || (p[i] >= 0x80 && !sg__utf8_len(p + i, end)))
            break;
        if (p[i] >= 0x80)
            i += sg__utf8_len(p + i, end) - 1;
    }
    if (!p[i])
        return; /* the usual case: nothing to do */
    char out[SG_DIAG_MAX];
    size_t o = 0, cap = size < sizeof out ? size : sizeof out;
    memcpy(out, msg, i);
    o = i;
    while (p[i]) {
        size_t n = p[i] >= 0x80 ? sg__utf8_len(p + i, end) : 1;
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

/* Where a prefixed message too long for the diagnostic lost its middle. */
#define ELIDED ": ...: "
/* The most of a message's end and start kept when its middle goes: room
 * for the cause and the innermost places, and the outermost ones. */
#define TAIL_KEEP 384
#define HEAD_KEEP 256

void sg_diag_prefix(struct sg_diag *diag, const char *fmt, ...)
{
    if (!diag || diag->status == SG_OK)
        return;
    char old[SG_DIAG_MAX], pre[SG_DIAG_MAX];
    memcpy(old, diag->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    make_printable(pre, sizeof pre);
    size_t pl = strlen(pre), ol = strlen(old), cap = sizeof diag->msg - 1;
    if (pl + 2 + ol <= cap) {
        memcpy(diag->msg, pre, pl);
        memcpy(diag->msg + pl, ": ", 2);
        memcpy(diag->msg + pl + 2, old, ol + 1);
        return;
    }
    /* Too long (a path of nested subgraphs, each level adding its
     * "in subgraph ... of node ..."): keep the new prefix and the old
     * message's start and end, the cause being at the end, and elide the
     * middle. The tail is fixed the first time; later prefixes only eat
     * into the head. */
    const char *mark = strstr(old, ELIDED);
    size_t head, tail_at;
    if (mark) {
        head = (size_t)(mark - old);
        tail_at = head + strlen(ELIDED);
    } else {
        tail_at = ol > TAIL_KEEP ? ol - TAIL_KEEP : 0;
        /* Start the tail at a ": " boundary when there is one. */
        const char *b = strstr(old + tail_at, ": ");
        if (b && (size_t)(b - old) + 2 < ol)
            tail_at = (size_t)(b - old) + 2;
        head = tail_at;
    }
    size_t tl = ol - tail_at, el = strlen(ELIDED);
    if (pl > cap / 4)
        pl = cap / 4; /* a prefix is a place, never most of the message */
    size_t room = cap > pl + 2 + el + tl ? cap - pl - 2 - el - tl : 0;
    if (room > HEAD_KEEP)
        room = HEAD_KEEP;
    if (head > room) {
        /* Cut the head at its last ": " that fits, so no place is cut in two. */
        size_t cut = room;
        while (cut > 0 && !(old[cut - 1] == ' ' && cut >= 2 && old[cut - 2] == ':'))
            cut--;
        head = cut >= 2 ? cut - 2 : 0;
    }
    size_t o = 0;
    memcpy(diag->msg + o, pre, pl);
    o += pl;
    if (head) {
        memcpy(diag->msg + o, ": ", 2);
        o += 2;
        memcpy(diag->msg + o, old, head);
        o += head;
    }
    memcpy(diag->msg + o, ELIDED, el);
    o += el;
    if (o + tl > cap)
        tl = cap - o;
    memcpy(diag->msg + o, old + tail_at, tl);
    o += tl;
    diag->msg[o] = '\0';
}

void sg_diag_clear(struct sg_diag *diag)
{
    if (diag) {
        diag->status = SG_OK;
        diag->msg[0] = '\0';
    }
}
