/* SPDX-License-Identifier: BSD-3-Clause */
/* A model's schema: the names of its inputs and target, the range of each
 * input in the training rows, and how the columns of a table are matched
 * to them (by name when both have names,
 * else by position). Model files keep the names (src/model/modelio.c). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 40

/* s quoted for a message into buf (char buf[RFX__QUOTE_SIZE(QUOTE_MAX)]). */
#define QUOTED(s, buf) rfx__quote((s), strlen(s), QUOTE_MAX, (buf), sizeof(buf))

/* A name and where it is: the sort key of the look-ups below. */
typedef struct named {
    const char *name;
    size_t at;
} named;

static int named_cmp(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* names[0..n) sorted by name (ties by position): a look-up table. */
static rfx_status sorted_names(const char *const *names, size_t n, named **out)
{
    named *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) return rfx__error(RFX_ENOMEM, "model names: cannot allocate %zu entries", n);
    for (size_t i = 0; i < n; i++) t[i] = (named){ names[i], i };
    qsort(t, n, sizeof *t, named_cmp);
    *out = t;
    return RFX_OK;
}

/* The first entry of t (n, sorted) named name, or NULL. */
static const named *lookup(const named *t, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(t[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && strcmp(t[lo].name, name) == 0 ? &t[lo] : NULL;
}

static rfx_status check_name(const char *name, const char *what, size_t j)
{
    if (!name) return rfx__error(RFX_EINVAL, "model names: %s %zu is NULL", what, j);
    size_t len = strlen(name);
    if (len == 0) return rfx__error(RFX_EINVAL, "model names: %s %zu is empty", what, j);
    if (len > RFX_MODEL_MAX_NAME)
        return rfx__error(RFX_EINVAL, "model names: %s %zu has %zu bytes, more than %d", what, j,
                          len, RFX_MODEL_MAX_NAME);
    return RFX_OK;
}

rfx_status rfx__model_names_check(const char *const *input, size_t d, const char *target)
{
    named *t = NULL;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    for (size_t j = 0; j < d; j++) RFX__TRY(check_name(input[j], "input name", j));
    if (target) RFX__TRY(check_name(target, "the target name", 0));
    RFX__TRY(sorted_names(input, d, &t));
    rfx_status st = RFX_OK;
    for (size_t i = 1; i < d && !st; i++)
        if (strcmp(t[i - 1].name, t[i].name) == 0)
            st = rfx__error(RFX_EINVAL, "model names: inputs %zu and %zu are both named '%s'",
                            t[i - 1].at, t[i].at, QUOTED(t[i].name, q));
    const named *hit = !st && target ? lookup(t, d, target) : NULL;
    if (hit)
        st = rfx__error(RFX_EINVAL, "model names: the target is named '%s', as input %zu",
                        QUOTED(target, q), hit->at);
    free(t);
    return st;
}

rfx_status rfx__model_names_copy(rfx_model *m, const char *const *input, const char *target)
{
    size_t text = 0, d = m->d;
    char *tname = NULL;
    for (size_t j = 0; j < d; j++) text += strlen(input[j]) + 1;
    char **block = malloc(d * sizeof *block + text);
    if (target) tname = malloc(strlen(target) + 1);
    if (!block || (target && !tname)) {
        free(block);
        free(tname);
        return rfx__error(RFX_ENOMEM, "model names: cannot allocate %zu bytes", text);
    }
    char *p = (char *)(block + d);
    for (size_t j = 0; j < d; j++) {
        size_t len = strlen(input[j]) + 1;
        memcpy(p, input[j], len);
        block[j] = p;
        p += len;
    }
    if (tname) memcpy(tname, target, strlen(target) + 1);
    free(m->input_names);
    free(m->target_name);
    m->input_names = block;
    m->target_name = tname;
    return RFX_OK;
}

rfx_status rfx_model_set_names(rfx_model *m, const char *const *input_names,
                               const char *target_name)
{
    if (!m) return rfx__error(RFX_EINVAL, "model names: model is NULL");
    if (!input_names) {
        free(m->input_names);
        free(m->target_name);
        m->input_names = NULL;
        m->target_name = NULL;
        return RFX_OK;
    }
    RFX__TRY(rfx__model_names_check(input_names, m->d, target_name));
    return rfx__model_names_copy(m, input_names, target_name);
}

const char *rfx_model_input_name(const rfx_model *m, size_t j)
{
    return m && m->input_names && j < m->d ? m->input_names[j] : NULL;
}

const char *rfx_model_target_name(const rfx_model *m) { return m ? m->target_name : NULL; }

rfx_status rfx__model_box_check(const double *lo, const double *hi, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (!isfinite(lo[j]) || !isfinite(hi[j]) || !(lo[j] <= hi[j]))
            return rfx__error(RFX_EINVAL, "model input box: input %zu has [%g, %g], not finite "
                              "lo <= hi", j, lo[j], hi[j]);
    return RFX_OK;
}

rfx_status rfx_model_set_input_box(rfx_model *m, const double *lo, const double *hi)
{
    if (!m) return rfx__error(RFX_EINVAL, "model input box: model is NULL");
    if (!lo && !hi) {
        free(m->input_box);
        m->input_box = NULL;
        return RFX_OK;
    }
    if (!lo || !hi) return rfx__error(RFX_EINVAL, "model input box: lo or hi is NULL");
    RFX__TRY(rfx__model_box_check(lo, hi, m->d));
    double *box = malloc(2 * m->d * sizeof *box);
    if (!box) return rfx__error(RFX_ENOMEM, "model input box: cannot allocate %zu values", 2 * m->d);
    memcpy(box, lo, m->d * sizeof *box);
    memcpy(box + m->d, hi, m->d * sizeof *box);
    free(m->input_box);
    m->input_box = box;
    return RFX_OK;
}

rfx_status rfx_model_set_scaler(rfx_model *m, const double *mean, const double *scale)
{
    if (!m) return rfx__error(RFX_EINVAL, "model scaler: model is NULL");
    if (!m->features)
        return rfx__error(RFX_EINVAL, "model scaler: a %s model has no random feature map; its "
                                      "inputs are read as they are", rfx_method_name(m->method));
    if (!mean && !scale) {
        free(m->x_mean);
        free(m->x_scale);
        m->x_mean = m->x_scale = NULL;
        return RFX_OK;
    }
    if (!mean || !scale) return rfx__error(RFX_EINVAL, "model scaler: mean or scale is NULL");
    for (size_t j = 0; j < m->d; j++) {
        if (!isfinite(mean[j]))
            return rfx__error(RFX_EINVAL, "model scaler: input %zu: the mean %g is not finite", j,
                              mean[j]);
        if (!(isfinite(scale[j]) && scale[j] > 0))
            return rfx__error(RFX_EINVAL, "model scaler: input %zu: the scale must be finite and "
                                          "> 0, got %g", j, scale[j]);
    }
    double *mu = malloc(m->d * sizeof *mu), *sc = malloc(m->d * sizeof *sc);
    if (!mu || !sc) {
        free(mu);
        free(sc);
        return rfx__error(RFX_ENOMEM, "model scaler: cannot allocate %zu values", 2 * m->d);
    }
    memcpy(mu, mean, m->d * sizeof *mu);
    memcpy(sc, scale, m->d * sizeof *sc);
    free(m->x_mean);
    free(m->x_scale);
    m->x_mean = mu;
    m->x_scale = sc;
    return RFX_OK;
}

int rfx_model_input_box(const rfx_model *m, const double **lo, const double **hi)
{
    if (!m || !m->input_box) return 0;
    if (lo) *lo = m->input_box;
    if (hi) *hi = m->input_box + m->d;
    return 1;
}

/* By position: d columns, or d + 1 with the target (given, or the last). */
static rfx_status match_by_position(const rfx_model *m, const char *const *names, size_t n,
                                    const char *target, size_t *cols, size_t *target_col)
{
    const size_t d = m->d;
    size_t tc = SIZE_MAX, other = 0;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    if (n != d && n != d + 1)
        return rfx__error(RFX_EDIM,
                          "the table has %zu column%s; the model takes %zu input%s (and "
                          "optionally the target column)",
                          n, n == 1 ? "" : "s", d, d == 1 ? "" : "s");
    if (n == d + 1) {
        const char *spec = target ? target : "-1";
        switch (rfx__column_find(names, n, spec, &tc, &other)) {
        case RFX__COLUMN_FOUND: break;
        case RFX__COLUMN_AMBIGUOUS:
            return rfx__error(RFX_EPARSE, "target column '%s' is ambiguous (columns %zu and %zu "
                              "have that name)", QUOTED(spec, q), tc, other);
        default:
            return rfx__error(RFX_EPARSE, "target column '%s' is not one of the %zu columns",
                              QUOTED(spec, q), n);
        }
    }
    for (size_t c = 0, j = 0; c < n; c++)
        if (c != tc) cols[j++] = c;
    *target_col = tc;
    return RFX_OK;
}

/* The error for a name two columns share, when the name matters. */
static rfx_status twice(const named *hit, const char *name)
{
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    return rfx__error(RFX_EPARSE, "column name '%s' appears twice (columns %zu and %zu)",
                      QUOTED(name, q), hit[0].at, hit[1].at);
}

/* By name: every input found, the target found or absent, nothing else. */
static rfx_status match_by_name(const rfx_model *m, const char *const *names, size_t n,
                                const char *target, size_t *cols, size_t *target_col,
                                const named *t)
{
    const size_t d = m->d;
    const char *const *in = (const char *const *)m->input_names;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)], list[512];
    size_t tc = SIZE_MAX, other = 0;
    if (target) {
        switch (rfx__column_find(names, n, target, &tc, &other)) {
        case RFX__COLUMN_FOUND: break;
        case RFX__COLUMN_AMBIGUOUS:
            return rfx__error(RFX_EPARSE, "target column '%s' is ambiguous (columns %zu and %zu "
                              "have that name)", QUOTED(target, q), tc, other);
        default:
            rfx__list_names(list, sizeof list, names, n);
            return rfx__error(RFX_EPARSE, "target column '%s' not found (columns: %s)",
                              QUOTED(target, q), list);
        }
    } else if (m->target_name) {
        const named *hit = lookup(t, n, m->target_name);
        if (hit && hit + 1 < t + n && strcmp(hit[1].name, hit->name) == 0)
            return twice(hit, hit->name);
        if (hit) tc = hit->at;
    }
    /* each column is claimed at most once: by an input or by the target */
    unsigned char *used = calloc(n ? n : 1, 1);
    if (!used) return rfx__error(RFX_ENOMEM, "match columns: cannot allocate %zu flags", n);
    rfx_status st = RFX_OK;
    if (tc != SIZE_MAX) used[tc] = 1;
    for (size_t j = 0; j < d && !st; j++) {
        const named *hit = lookup(t, n, in[j]);
        if (!hit) {
            rfx__list_names(list, sizeof list, names, n);
            st = rfx__error(RFX_EDIM, "the model's input '%s' is not a column (columns: %s)",
                            QUOTED(in[j], q), list);
        } else if (hit + 1 < t + n && strcmp(hit[1].name, hit->name) == 0) {
            st = twice(hit, hit->name);
        } else if (hit->at == tc) {
            st = rfx__error(RFX_EPARSE, "target column '%s' is the model's input %zu",
                            QUOTED(in[j], q), j);
        } else {
            cols[j] = hit->at;
            used[hit->at] = 1;
        }
    }
    for (size_t c = 0; c < n && !st; c++) {
        if (used[c]) continue;
        char qt[RFX__QUOTE_SIZE(QUOTE_MAX)];
        rfx__list_names(list, sizeof list, in, d);
        st = rfx__error(RFX_EDIM, "unexpected column '%s' (column %zu): the model's inputs are "
                        "%s%s%s%s", QUOTED(names[c], q), c, list,
                        m->target_name ? " and its target is '" : "",
                        m->target_name ? QUOTED(m->target_name, qt) : "",
                        m->target_name ? "'" : "");
    }
    free(used);
    if (!st) *target_col = tc;
    return st;
}

rfx_status rfx_model_match_columns(const rfx_model *m, const char *const *names, size_t n_cols,
                                   const char *target, size_t *cols, size_t *target_col)
{
    if (!m || !cols || !target_col)
        return rfx__error(RFX_EINVAL, "match columns: NULL argument");
    if (names)
        for (size_t c = 0; c < n_cols; c++)
            if (!names[c]) return rfx__error(RFX_EINVAL, "match columns: name %zu is NULL", c);
    if (!m->input_names || !names)
        return match_by_position(m, names, n_cols, target, cols, target_col);
    named *t = NULL;
    RFX__TRY(sorted_names(names, n_cols, &t));
    rfx_status st = match_by_name(m, names, n_cols, target, cols, target_col, t);
    free(t);
    return st;
}
