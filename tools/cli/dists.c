/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dists.c - input distributions from the command line (rfx sobol, rfx fit
 * --method pce): --uniform [NAME=]A,B, --normal [NAME=]MU,SD and
 * --lognormal [NAME=]MU,SIGMA (log x ~ N(MU, SIGMA^2)), repeated,
 * NAME an input's name or 0-based index; one without NAME= for every input
 * not named.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_parse_dist(const opt_iter *it, const char *v, rfx_marginal_kind kind, cli_dist *out)
{
    const int normal = kind != RFX_MARGINAL_UNIFORM;
    const char *pair_name = kind == RFX_MARGINAL_UNIFORM ? "A,B"
                            : kind == RFX_MARGINAL_NORMAL ? "MU,SD"
                                                          : "MU,SIGMA";
    const char *eq = strrchr(v, '=');
    const char *pair = eq ? eq + 1 : v;
    double a, b;
    out->who[0] = '\0';
    if (eq) {
        size_t len = (size_t)(eq - v);
        if (len == 0 || len >= sizeof out->who)
            return cli_value_error(it, "expected NAME=%s with a name of 1 to %zu bytes, got '%s'",
                                   pair_name, sizeof out->who - 1, v);
        memcpy(out->who, v, len);
        out->who[len] = '\0';
    }
    if (cli_parse_pair(it, pair, &a, &b)) return RC_USAGE;
    if (!normal && !(a < b)) return cli_value_error(it, "expected finite A < B, got '%s'", v);
    if (normal && !(b > 0))
        return cli_value_error(it, "expected %s > 0, got '%s'",
                               kind == RFX_MARGINAL_NORMAL ? "SD" : "SIGMA", v);
    out->marginal = kind == RFX_MARGINAL_UNIFORM  ? rfx_marginal_uniform(a, b)
                    : kind == RFX_MARGINAL_NORMAL ? rfx_marginal_normal(a, b)
                                                  : rfx_marginal_lognormal(a, b);
    return 0;
}

rfx_marginal_kind cli_dist_kind(int option)
{
    return option == O_UNIFORM  ? RFX_MARGINAL_UNIFORM
           : option == O_NORMAL ? RFX_MARGINAL_NORMAL
                                : RFX_MARGINAL_LOGNORMAL;
}

void cli_box_marginals(const double *lo, const double *hi, size_t d, rfx_marginal *out)
{
    for (size_t j = 0; j < d; j++)
        out[j] = lo[j] < hi[j] ? rfx_marginal_uniform(lo[j], hi[j])
                               : rfx_marginal_uniform(lo[j] - 0.5, lo[j] + 0.5);
}

const char *cli_input_label(const char *const *names, size_t j, char *buf, size_t size)
{
    if (names && names[j]) return cli_escape(names[j], buf, size);
    snprintf(buf, size, "x%zu", j);
    return buf;
}

/* The input a spec names: one of names, else a 0-based index; SIZE_MAX
 * when it names none. */
static size_t dist_input(const char *const *names, size_t d, const char *who)
{
    if (names)
        for (size_t j = 0; j < d; j++)
            if (names[j] && strcmp(names[j], who) == 0) return j;
    char *end;
    unsigned long long k = strtoull(who, &end, 10);
    return who[0] >= '0' && who[0] <= '9' && *end == '\0' && k < d ? (size_t)k : SIZE_MAX;
}

int cli_resolve_dists(const command *c, const char *const *names, size_t d,
                      const cli_dist *specs, size_t n, const rfx_marginal *fallback,
                      rfx_marginal *marg)
{
    char q[1024], lab[256];
    unsigned char *set = calloc(d ? d : 1, 1);
    if (!set) {
        cli_say("out of memory");
        return RC_INTERNAL;
    }
    for (size_t pass = 0; pass < 2; pass++) /* the shared default, then each input's own */
        for (size_t k = 0; k < n; k++) {
            if ((specs[k].who[0] == '\0') != (pass == 0)) continue;
            if (pass == 0) {
                for (size_t j = 0; j < d; j++) {
                    marg[j] = specs[k].marginal;
                    set[j] = 1;
                }
                continue;
            }
            size_t j = dist_input(names, d, specs[k].who);
            if (j == SIZE_MAX) {
                free(set);
                return cli_usage_error(c, "'%s' is not an input (%zu inputs%s)",
                                       cli_escape(specs[k].who, q, sizeof q), d,
                                       names ? ", by name or 0-based index"
                                             : ": give 0-based indices");
            }
            marg[j] = specs[k].marginal;
            set[j] = 1;
        }
    for (size_t j = 0; j < d; j++) {
        if (set[j]) continue;
        if (fallback) {
            marg[j] = fallback[j];
            continue;
        }
        free(set);
        cli_input_label(names, j, lab, sizeof lab);
        return cli_usage_error(c, "input %s has no distribution: give --uniform %s=A,B, "
                                  "--normal %s=MU,SD or --lognormal %s=MU,SIGMA, or one for "
                                  "every input",
                               lab, lab, lab, lab);
    }
    free(set);
    return RC_OK;
}
