/* SPDX-License-Identifier: BSD-3-Clause */
/* Column look-up by name or index: how a target column given as text
 * ("y", "3", "-1") is found among a table's columns, the one rule of the
 * data readers (src/io/data.c) and of a model's schema
 * (src/solvers/schema.c). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Whether s is an index, optionally negative: *value saturates at SIZE_MAX. */
static int parse_index(const char *s, int *negative, size_t *value)
{
    size_t v = 0;
    *negative = (*s == '-');
    if (*negative) s++;
    if (*s == '\0') return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned dig = (unsigned)(*s - '0');
        v = v > (SIZE_MAX - dig) / 10 ? SIZE_MAX : v * 10 + dig;
    }
    *value = v;
    return 1;
}

void rfx__list_names(char *buf, size_t size, const char *const *names, size_t n)
{
    enum { QUOTE_MAX = 40 };
    size_t used = 0;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    buf[0] = '\0';
    for (size_t c = 0; c < n; c++) {
        const char *sep = c ? ", " : "";
        const char *name = rfx__quote(names[c], strlen(names[c]), QUOTE_MAX, q, sizeof q);
        if (used + strlen(sep) + strlen(name) + 6 >= size) {
            snprintf(buf + used, size - used, "%s...", sep);
            return;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, name);
    }
}

rfx__column_found rfx__column_find(const char *const *names, size_t n, const char *spec,
                                   size_t *col, size_t *other)
{
    size_t value, found = SIZE_MAX;
    int negative;
    if (names) {
        for (size_t c = 0; c < n; c++) {
            if (strcmp(names[c], spec) != 0) continue;
            if (found != SIZE_MAX) {
                *col = found;
                *other = c;
                return RFX__COLUMN_AMBIGUOUS;
            }
            found = c;
        }
        if (found != SIZE_MAX) {
            *col = found;
            return RFX__COLUMN_FOUND;
        }
    }
    if (!parse_index(spec, &negative, &value)) return RFX__COLUMN_MISSING;
    if (!negative && value < n) {
        *col = value;
        return RFX__COLUMN_FOUND;
    }
    if (negative && value >= 1 && value <= n) {
        *col = n - value;
        return RFX__COLUMN_FOUND;
    }
    return RFX__COLUMN_RANGE;
}
