/*
 * regex.c - the matcher of regex.h: a recursive-descent parser to a syntax
 * tree, compiled to a program of CLASS / SPLIT / JMP / BOL / EOL / MATCH
 * instructions and run as a Pike VM (every thread advances one code point
 * at a time; duplicate states are dropped), so matching is
 * O(text * program) whatever the pattern.
 */
#include "regex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RX_MAX_PROG 200000 /* instructions; a {n,m} tower beyond is refused */
#define RX_MAX_REP 1000
#define RX_MAX_DEPTH 200     /* nesting of groups */
#define RX_MAX_PATTERN 16384 /* bytes: bounds the recursion over alternations */

struct range {
    uint32_t lo, hi;
};

struct cls {
    struct range *r;
    size_t n, cap;
    bool neg;
};

enum node_kind { N_EMPTY, N_CLASS, N_CAT, N_ALT, N_REP, N_BOL, N_EOL };

struct node {
    enum node_kind kind;
    int a, b;     /* children (CAT, ALT), a: the repeated node (REP) */
    int cls;      /* N_CLASS */
    int min, max; /* N_REP; max -1: unbounded */
};

enum op { OP_CLASS, OP_SPLIT, OP_JMP, OP_BOL, OP_EOL, OP_MATCH };

struct inst {
    enum op op;
    int x, y; /* SPLIT: both; JMP: x; CLASS: x is the class */
};

struct sg_rx {
    struct cls *cls;
    size_t ncls, capcls;
    struct node *nodes;
    size_t nnodes, capnodes;
    struct inst *prog;
    size_t nprog, capprog;
};

struct parser {
    struct sg_rx *rx;
    const uint8_t *p, *end;
    int depth;
    char *msg;
    size_t size;
    bool failed;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
    if (!ps->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->msg, ps->size, fmt, ap);
        va_end(ap);
    }
    ps->failed = true;
    return -1;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static int new_node(struct parser *ps, enum node_kind kind, int a, int b)
{
    struct sg_rx *rx = ps->rx;
    if (!grow((void **)&rx->nodes, &rx->capnodes, rx->nnodes + 1, sizeof *rx->nodes))
        return fail(ps, "out of memory");
    struct node *n = &rx->nodes[rx->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->a = a, n->b = b;
    return (int)rx->nnodes++;
}

static int new_class(struct parser *ps)
{
    struct sg_rx *rx = ps->rx;
    if (!grow((void **)&rx->cls, &rx->capcls, rx->ncls + 1, sizeof *rx->cls))
        return fail(ps, "out of memory");
    memset(&rx->cls[rx->ncls], 0, sizeof rx->cls[0]);
    return (int)rx->ncls++;
}

static bool add_range(struct parser *ps, int ci, uint32_t lo, uint32_t hi)
{
    struct cls *c = &ps->rx->cls[ci];
    if (!grow((void **)&c->r, &c->cap, c->n + 1, sizeof *c->r)) {
        fail(ps, "out of memory");
        return false;
    }
    c->r[c->n].lo = lo, c->r[c->n].hi = hi;
    c->n++;
    return true;
}

/* One UTF-8 code point from *p (< end); -1 when malformed. */
static int32_t utf8_next(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *s = *p;
    uint32_t c = s[0];
    int n = c < 0x80             ? 0
            : (c & 0xe0) == 0xc0 ? 1
            : (c & 0xf0) == 0xe0 ? 2
            : (c & 0xf8) == 0xf0 ? 3
                                 : -1;
    if (n < 0 || end - s < n + 1)
        return -1;
    if (n)
        c &= 0x3fu >> n;
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        c = (c << 6) | (s[i] & 0x3f);
    }
    static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
    if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return -1;
    *p = s + n + 1;
    return (int32_t)c;
}

/* The ranges of \d \w \s (ASCII, RE2's Perl classes). */
static bool perl_class(struct parser *ps, int ci, char e)
{
    switch (e) {
    case 'd':
        return add_range(ps, ci, '0', '9');
    case 'w':
        return add_range(ps, ci, '0', '9') && add_range(ps, ci, 'A', 'Z') &&
               add_range(ps, ci, '_', '_') && add_range(ps, ci, 'a', 'z');
    case 's':
        return add_range(ps, ci, '\t', '\n') && add_range(ps, ci, '\f', '\r') &&
               add_range(ps, ci, ' ', ' ');
    }
    return false;
}

static int hexval(uint8_t c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* After a backslash: a single code point into *cp (returns 1), a Perl
 * class letter into *perl (returns 2), or -1. */
static int parse_escape(struct parser *ps, int32_t *cp, char *perl)
{
    if (ps->p >= ps->end)
        return fail(ps, "trailing backslash");
    uint8_t c = *ps->p++;
    switch (c) {
    case 'd':
    case 'w':
    case 's':
    case 'D':
    case 'W':
    case 'S':
        *perl = (char)c;
        return 2;
    case 'n':
        *cp = '\n';
        return 1;
    case 't':
        *cp = '\t';
        return 1;
    case 'r':
        *cp = '\r';
        return 1;
    case 'f':
        *cp = '\f';
        return 1;
    case 'v':
        *cp = '\v';
        return 1;
    case 'a':
        *cp = 7;
        return 1;
    case 'x': {
        uint32_t v = 0;
        if (ps->p < ps->end && *ps->p == '{') {
            ps->p++;
            int nd = 0;
            while (ps->p < ps->end && *ps->p != '}') {
                int h = hexval(*ps->p++);
                if (h < 0 || ++nd > 6)
                    return fail(ps, "bad \\x{...} escape");
                v = v * 16 + (uint32_t)h;
            }
            if (ps->p >= ps->end || nd == 0 || v > 0x10ffff)
                return fail(ps, "bad \\x{...} escape");
            ps->p++;
        } else {
            for (int i = 0; i < 2; i++) {
                int h = ps->p < ps->end ? hexval(*ps->p) : -1;
                if (h < 0)
                    return fail(ps, "bad \\x escape (two hex digits)");
                ps->p++;
                v = v * 16 + (uint32_t)h;
            }
        }
        *cp = (int32_t)v;
        return 1;
    }
    default:
        if (c < 0x80 &&
            !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            *cp = c;
            return 1;
        }
        return fail(ps,
                    "escape \\%c is not supported (supported: \\d \\w \\s \\D \\W \\S \\n \\t "
                    "\\r \\f \\v \\a \\xHH and escaped punctuation)",
                    c);
    }
}

/* A class body after '['. */
static int parse_class(struct parser *ps)
{
    int ci = new_class(ps);
    if (ci < 0)
        return -1;
    if (ps->p < ps->end && *ps->p == '^') {
        ps->rx->cls[ci].neg = true;
        ps->p++;
    }
    bool first = true;
    for (;;) {
        if (ps->p >= ps->end)
            return fail(ps, "missing ']'");
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        first = false;
        if (ps->end - ps->p >= 2 && ps->p[0] == '[' && ps->p[1] == ':')
            return fail(ps, "POSIX classes like [:alpha:] are not supported");
        int32_t lo;
        if (*ps->p == '\\') {
            ps->p++;
            char perl = 0;
            int r = parse_escape(ps, &lo, &perl);
            if (r < 0)
                return -1;
            if (r == 2) {
                if (perl >= 'A' && perl <= 'Z')
                    return fail(ps, "\\%c inside a class is not supported", perl);
                if (!perl_class(ps, ci, perl))
                    return -1;
                continue;
            }
        } else if ((lo = utf8_next(&ps->p, ps->end)) < 0) {
            return fail(ps, "pattern is not valid UTF-8");
        }
        int32_t hi = lo;
        if (ps->end - ps->p >= 2 && ps->p[0] == '-' && ps->p[1] != ']') {
            ps->p++;
            if (*ps->p == '\\') {
                ps->p++;
                char perl = 0;
                int r = parse_escape(ps, &hi, &perl);
                if (r < 0)
                    return -1;
                if (r == 2)
                    return fail(ps, "a range cannot end in \\%c", perl);
            } else if ((hi = utf8_next(&ps->p, ps->end)) < 0) {
                return fail(ps, "pattern is not valid UTF-8");
            }
            if (hi < lo)
                return fail(ps, "bad class range");
        }
        if (!add_range(ps, ci, (uint32_t)lo, (uint32_t)hi))
            return -1;
    }
    int n = new_node(ps, N_CLASS, -1, -1);
    if (n >= 0)
        ps->rx->nodes[n].cls = ci;
    return n;
}

static int single(struct parser *ps, uint32_t lo, uint32_t hi, bool neg)
{
    int ci = new_class(ps);
    if (ci < 0 || !add_range(ps, ci, lo, hi))
        return -1;
    ps->rx->cls[ci].neg = neg;
    int n = new_node(ps, N_CLASS, -1, -1);
    if (n >= 0)
        ps->rx->nodes[n].cls = ci;
    return n;
}

static int parse_alt(struct parser *ps);

static int parse_atom(struct parser *ps)
{
    uint8_t c = *ps->p;
    if (c == '(') {
        ps->p++;
        if (ps->p < ps->end && *ps->p == '?') {
            if (ps->end - ps->p >= 2 && ps->p[1] == ':')
                ps->p += 2;
            else
                return fail(ps, "'(?' groups other than (?:...) (flags, named groups) are not "
                                "supported");
        }
        if (++ps->depth > RX_MAX_DEPTH)
            return fail(ps, "groups nested more than %d deep", RX_MAX_DEPTH);
        int n = parse_alt(ps);
        ps->depth--;
        if (n < 0)
            return -1;
        if (ps->p >= ps->end || *ps->p != ')')
            return fail(ps, "missing ')'");
        ps->p++;
        return n;
    }
    if (c == '[') {
        ps->p++;
        return parse_class(ps);
    }
    if (c == '.') {
        ps->p++;
        return single(ps, '\n', '\n', true);
    }
    if (c == '^' || c == '$') {
        ps->p++;
        return new_node(ps, c == '^' ? N_BOL : N_EOL, -1, -1);
    }
    if (c == '*' || c == '+' || c == '?' || c == '{')
        return fail(ps, "'%c' repeats nothing", c);
    if (c == '\\') {
        ps->p++;
        if (ps->p < ps->end && *ps->p && strchr("bBAzpPQCEGZ123456789", *ps->p))
            return fail(ps,
                        "\\%c is not supported (no word boundaries, anchors other than ^ $, "
                        "Unicode classes or back-references)",
                        *ps->p);
        int32_t cp;
        char perl = 0;
        int r = parse_escape(ps, &cp, &perl);
        if (r < 0)
            return -1;
        if (r == 1)
            return single(ps, (uint32_t)cp, (uint32_t)cp, false);
        int ci = new_class(ps);
        if (ci < 0 || !perl_class(ps, ci, (char)(perl | 0x20)))
            return -1;
        ps->rx->cls[ci].neg = perl >= 'A' && perl <= 'Z';
        int n = new_node(ps, N_CLASS, -1, -1);
        if (n >= 0)
            ps->rx->nodes[n].cls = ci;
        return n;
    }
    int32_t cp = utf8_next(&ps->p, ps->end);
    if (cp < 0)
        return fail(ps, "pattern is not valid UTF-8");
    return single(ps, (uint32_t)cp, (uint32_t)cp, false);
}

/* {n}, {n,}, {n,m} after '{'; false (p unchanged) when not a repeat. */
static bool parse_count(struct parser *ps, int *mn, int *mx)
{
    const uint8_t *q = ps->p + 1;
    long a = 0, b = -1;
    int nd = 0;
    while (q < ps->end && *q >= '0' && *q <= '9' && nd < 8)
        a = a * 10 + (*q++ - '0'), nd++;
    if (!nd)
        return false;
    if (q < ps->end && *q == ',') {
        q++;
        int nb = 0;
        long v = 0;
        while (q < ps->end && *q >= '0' && *q <= '9' && nb < 8)
            v = v * 10 + (*q++ - '0'), nb++;
        b = nb ? v : -1;
    } else {
        b = a;
    }
    if (q >= ps->end || *q != '}')
        return false;
    ps->p = q + 1;
    *mn = (int)a;
    *mx = (int)b;
    if (a > RX_MAX_REP || b > RX_MAX_REP || (b >= 0 && b < a)) {
        fail(ps, "bad repeat count {%ld,%ld} (at most %d)", a, b, RX_MAX_REP);
        *mn = -1;
    }
    return true;
}

static int parse_repeat(struct parser *ps)
{
    int n = parse_atom(ps);
    while (n >= 0 && ps->p < ps->end) {
        int mn, mx;
        uint8_t c = *ps->p;
        if (c == '*')
            mn = 0, mx = -1, ps->p++;
        else if (c == '+')
            mn = 1, mx = -1, ps->p++;
        else if (c == '?')
            mn = 0, mx = 1, ps->p++;
        else if (c == '{' && parse_count(ps, &mn, &mx)) {
            if (mn < 0)
                return -1;
        } else
            break;
        if (ps->p < ps->end && *ps->p == '?')
            ps->p++; /* non-greedy: the same set of full matches */
        int r = new_node(ps, N_REP, n, -1);
        if (r < 0)
            return -1;
        ps->rx->nodes[r].min = mn;
        ps->rx->nodes[r].max = mx;
        n = r;
    }
    return n;
}

static int parse_cat(struct parser *ps)
{
    int n = -2;
    while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
        int a = parse_repeat(ps);
        if (a < 0)
            return -1;
        n = n == -2 ? a : new_node(ps, N_CAT, n, a);
        if (n < 0)
            return -1;
    }
    return n == -2 ? new_node(ps, N_EMPTY, -1, -1) : n;
}

static int parse_alt(struct parser *ps)
{
    int n = parse_cat(ps);
    while (n >= 0 && ps->p < ps->end && *ps->p == '|') {
        ps->p++;
        int b = parse_cat(ps);
        if (b < 0)
            return -1;
        n = new_node(ps, N_ALT, n, b);
    }
    return n;
}

/* ------------------------------------------------------------ compile */

static int emit(struct parser *ps, enum op op, int x, int y)
{
    struct sg_rx *rx = ps->rx;
    if (rx->nprog >= RX_MAX_PROG)
        return fail(ps, "pattern too large (more than %d instructions once repeats are expanded)",
                    RX_MAX_PROG);
    if (!grow((void **)&rx->prog, &rx->capprog, rx->nprog + 1, sizeof *rx->prog))
        return fail(ps, "out of memory");
    rx->prog[rx->nprog] = (struct inst){op, x, y};
    return (int)rx->nprog++;
}

/* Recursion follows the tree: concatenations (left-deep, as long as the
 * pattern) are walked in a loop; the rest is bounded by RX_MAX_PATTERN. */
static bool compile(struct parser *ps, int ni, int depth)
{
    struct node n = ps->rx->nodes[ni];
    struct inst *P;
    switch (n.kind) {
    case N_EMPTY:
        return true;
    case N_CLASS:
        return emit(ps, OP_CLASS, n.cls, 0) >= 0;
    case N_BOL:
        return emit(ps, OP_BOL, 0, 0) >= 0;
    case N_EOL:
        return emit(ps, OP_EOL, 0, 0) >= 0;
    case N_CAT: {
        size_t cnt = 0;
        int x = ni;
        for (; ps->rx->nodes[x].kind == N_CAT; x = ps->rx->nodes[x].a)
            cnt++;
        int *right = malloc(cnt * sizeof *right);
        if (!right) {
            fail(ps, "out of memory");
            return false;
        }
        size_t i = cnt;
        for (x = ni; ps->rx->nodes[x].kind == N_CAT; x = ps->rx->nodes[x].a)
            right[--i] = ps->rx->nodes[x].b;
        bool ok = compile(ps, x, depth + 1);
        for (i = 0; ok && i < cnt; i++)
            ok = compile(ps, right[i], depth + 1);
        free(right);
        return ok;
    }
    case N_ALT: {
        int s = emit(ps, OP_SPLIT, 0, 0);
        if (s < 0 || !compile(ps, n.a, depth + 1))
            return false;
        int j = emit(ps, OP_JMP, 0, 0);
        if (j < 0)
            return false;
        int l2 = (int)ps->rx->nprog;
        if (!compile(ps, n.b, depth + 1))
            return false;
        P = ps->rx->prog;
        P[s].x = s + 1, P[s].y = l2;
        P[j].x = (int)ps->rx->nprog;
        return true;
    }
    case N_REP:
        for (int i = 0; i < n.min; i++)
            if (!compile(ps, n.a, depth + 1))
                return false;
        if (n.max < 0) { /* L: SPLIT body, end; body; JMP L */
            int s = emit(ps, OP_SPLIT, 0, 0);
            if (s < 0 || !compile(ps, n.a, depth + 1) || emit(ps, OP_JMP, s, 0) < 0)
                return false;
            P = ps->rx->prog;
            P[s].x = s + 1, P[s].y = (int)ps->rx->nprog;
            return true;
        }
        for (int i = n.min; i < n.max; i++) { /* optional copies */
            int s = emit(ps, OP_SPLIT, 0, 0);
            if (s < 0 || !compile(ps, n.a, depth + 1))
                return false;
            P = ps->rx->prog;
            P[s].x = s + 1, P[s].y = (int)ps->rx->nprog;
        }
        return true;
    }
    return false;
}

bool sg_rx_compile(const uint8_t *pattern, size_t len, struct sg_rx **out, char *msg, size_t size)
{
    struct sg_rx *rx = calloc(1, sizeof *rx);
    *out = NULL;
    if (!rx) {
        snprintf(msg, size, "out of memory");
        return false;
    }
    struct parser ps = {rx, pattern, pattern + len, 0, msg, size, false};
    if (len > RX_MAX_PATTERN) {
        snprintf(msg, size, "pattern of %zu bytes is longer than the %d supported", len,
                 RX_MAX_PATTERN);
        sg_rx_free(rx);
        return false;
    }
    int root = parse_alt(&ps);
    if (root >= 0 && ps.p < ps.end)
        fail(&ps, "unmatched ')'");
    if (root >= 0 && !ps.failed && compile(&ps, root, 0))
        emit(&ps, OP_MATCH, 0, 0);
    if (ps.failed) {
        sg_rx_free(rx);
        return false;
    }
    *out = rx;
    return true;
}

/* ------------------------------------------------------------- match */

struct threads {
    int *pc;
    size_t n;
};

/* Add pc and everything reachable by epsilon moves at text position pos
 * (of len) to t; mark[] holds the generation each pc was added in. */
static void add_thread(const struct sg_rx *rx, struct threads *t, int *mark, int gen, int *stack,
                       int pc0, size_t pos, size_t len)
{
    int sp = 0;
    stack[sp++] = pc0;
    while (sp) {
        int pc = stack[--sp];
        if (mark[pc] == gen)
            continue;
        mark[pc] = gen;
        const struct inst *in = &rx->prog[pc];
        switch (in->op) {
        case OP_JMP:
            stack[sp++] = in->x;
            break;
        case OP_SPLIT:
            stack[sp++] = in->y;
            stack[sp++] = in->x;
            break;
        case OP_BOL:
            if (pos == 0)
                stack[sp++] = pc + 1;
            break;
        case OP_EOL:
            if (pos == len)
                stack[sp++] = pc + 1;
            break;
        default:
            t->pc[t->n++] = pc;
        }
    }
}

static bool in_class(const struct cls *c, uint32_t cp)
{
    bool in = false;
    for (size_t i = 0; i < c->n && !in; i++)
        in = cp >= c->r[i].lo && cp <= c->r[i].hi;
    return in != c->neg;
}

int sg_rx_full_match(const struct sg_rx *rx, const uint8_t *text, size_t len)
{
    size_t np = rx->nprog;
    /* every pc is pushed at most once per generation, twice for SPLIT */
    int *mem = malloc((2 * np + 2 * np + 2 * np + 1) * sizeof *mem);
    if (!mem)
        return -1;
    struct threads cur = {mem, 0}, nxt = {mem + np, 0};
    int *mark = mem + 2 * np, *stack = mem + 3 * np;
    for (size_t i = 0; i < np; i++)
        mark[i] = -1;
    int gen = 0;
    add_thread(rx, &cur, mark, gen++, stack, 0, 0, len);
    const uint8_t *p = text, *end = text + len;
    int result = 0;
    while (p < end && cur.n) {
        int32_t cp = utf8_next(&p, end);
        if (cp < 0) {
            free(mem);
            return -1;
        }
        nxt.n = 0;
        size_t pos = (size_t)(p - text);
        for (size_t i = 0; i < cur.n; i++) {
            const struct inst *in = &rx->prog[cur.pc[i]];
            if (in->op == OP_CLASS && in_class(&rx->cls[in->x], (uint32_t)cp))
                add_thread(rx, &nxt, mark, gen, stack, cur.pc[i] + 1, pos, len);
        }
        gen++;
        struct threads t = cur;
        cur = nxt;
        nxt = t;
    }
    if (p == end)
        for (size_t i = 0; i < cur.n; i++)
            if (rx->prog[cur.pc[i]].op == OP_MATCH)
                result = 1;
    free(mem);
    return result;
}

void sg_rx_free(struct sg_rx *rx)
{
    if (!rx)
        return;
    for (size_t i = 0; i < rx->ncls; i++)
        free(rx->cls[i].r);
    free(rx->cls);
    free(rx->nodes);
    free(rx->prog);
    free(rx);
}
