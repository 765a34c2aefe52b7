/* precision_modes.c - ATC's precision modes and log levels (see sg_atc.h). */
#include "sg_atc.h"

#include <string.h>

static const struct sg_precision_mode modes[] = {
#define SG__PM_ROW(name, option, kind, summary) {name, option, SG_PRECISION_##kind, summary},
    SG_PRECISION_MODE_MAP(SG__PM_ROW)
#undef SG__PM_ROW
};

#define N_MODES (sizeof modes / sizeof modes[0])

const struct sg_precision_mode *sg_precision_mode_find(const char *name)
{
    for (size_t i = 0; i < N_MODES; i++)
        if (strcmp(modes[i].name, name) == 0)
            return &modes[i];
    return NULL;
}

const struct sg_precision_mode *sg_precision_mode_at(size_t i)
{
    return i < N_MODES ? &modes[i] : NULL;
}

bool sg_atc_log_level_valid(const char *level)
{
    static const char *const levels[] = {"debug", "info", "warning", "error", "null"};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(levels[i], level) == 0)
            return true;
    return false;
}
