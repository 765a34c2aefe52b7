/* suggest.c - the nearest known name (sg_suggest.h). */
#include "sg_suggest.h"

#include <stdint.h>
#include <string.h>

static unsigned char fold(unsigned char c, bool nocase)
{
    return nocase && c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t sg_edit_distance(const char *a, const char *b, bool nocase)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SG_SUGGEST_MAX_LEN || lb > SG_SUGGEST_MAX_LEN)
        return SIZE_MAX;
    /* Three rows of the dynamic programme: row i lives in rows[i % 3], so
     * rows i-1 and i-2 (for a swap of neighbours) are still there. */
    size_t rows[3][SG_SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = i;
        unsigned char ca = fold((unsigned char)a[i - 1], nocase);
        for (size_t j = 1; j <= lb; j++) {
            unsigned char cb = fold((unsigned char)b[j - 1], nocase);
            size_t d = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb));
            if (i > 1 && j > 1 && ca == fold((unsigned char)b[j - 2], nocase) &&
                fold((unsigned char)a[i - 2], nocase) == cb && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
    }
    return rows[la % 3][lb];
}

void sg_suggest_init(struct sg_suggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->dist = SIZE_MAX;
}

void sg_suggest_offer(struct sg_suggest *s, const char *name)
{
    if (!name || !s->word || strcmp(name, s->word) == 0)
        return;
    size_t d = sg_edit_distance(s->word, name, true);
    if (d < s->dist) {
        s->dist = d;
        s->best = name;
    }
}

const char *sg_suggest_best(const struct sg_suggest *s)
{
    if (!s->best)
        return NULL;
    size_t len = strlen(s->word), limit = len / 3;
    if (limit < 1)
        limit = 1;
    return s->dist <= limit ? s->best : NULL;
}
