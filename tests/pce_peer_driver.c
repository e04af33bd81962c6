/* SPDX-License-Identifier: BSD-3-Clause */
/* pce_peer_driver - fit an rfx PCE to a CSV file and print what a peer
 * (tests/peer/pce_openturns.py, OpenTURNS) compares: every term, the
 * predictions at test points, the moments and the Sobol indices.
 *
 *   pce_peer_driver TRAIN.csv TEST.csv DEGREE METHOD Q MARGINAL...
 *
 * TRAIN.csv: rows "x_1,...,x_d,y"; TEST.csv: rows "x_1,...,x_d" (no
 * headers). METHOD is lsq or lars, Q the q-norm, and each of the d
 * MARGINALs "U:a:b" (uniform) or "N:mu:sigma" (normal). Output, one item a
 * line, numbers with 17 significant digits:
 *   term COEF A_1 ... A_d
 *   pred VALUE
 *   mean VALUE / variance VALUE / loo MSE RELATIVE CORRECTED
 *   first S_1 ... S_d / total ST_1 ... ST_d
 * Uses only the public API. */
#include "rfx/pce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a CSV of numbers with cols columns: a malloc'd row-major array. */
static double *read_csv(const char *path, size_t cols, size_t *rows)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "pce_peer_driver: cannot open %s\n", path);
        return NULL;
    }
    size_t cap = 1024, n = 0;
    double *a = malloc(cap * sizeof *a);
    char line[65536];
    while (a && fgets(line, sizeof line, f)) {
        if (line[0] == '\n' || line[0] == '\0') continue;
        char *s = line;
        for (size_t j = 0; j < cols; j++) {
            char *end;
            double v = strtod(s, &end);
            if (end == s) {
                fprintf(stderr, "pce_peer_driver: %s row %zu column %zu: not a number\n", path,
                        n / cols, j);
                free(a);
                fclose(f);
                return NULL;
            }
            if (n == cap) {
                cap *= 2;
                double *b = realloc(a, cap * sizeof *a);
                if (!b) {
                    free(a);
                    fclose(f);
                    return NULL;
                }
                a = b;
            }
            a[n++] = v;
            s = end;
            while (*s == ',' || *s == ' ') s++;
        }
    }
    fclose(f);
    *rows = n / cols;
    return a;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: pce_peer_driver TRAIN.csv TEST.csv DEGREE lsq|lars Q MARGINAL...\n");
        return 2;
    }
    size_t d = (size_t)(argc - 6);
    rfx_marginal *mg = calloc(d, sizeof *mg);
    for (size_t i = 0; i < d; i++) {
        char kind = 0;
        double a = 0, b = 0;
        if (sscanf(argv[6 + i], "%c:%lf:%lf", &kind, &a, &b) != 3 || (kind != 'U' && kind != 'N')) {
            fprintf(stderr, "pce_peer_driver: bad marginal '%s'\n", argv[6 + i]);
            return 2;
        }
        mg[i].kind = kind == 'U' ? RFX_MARGINAL_UNIFORM : RFX_MARGINAL_NORMAL;
        mg[i].a = a;
        mg[i].b = b;
    }
    size_t n = 0, nt = 0;
    double *T = read_csv(argv[1], d + 1, &n), *Xt = read_csv(argv[2], d, &nt);
    if (!T || !Xt) return 1;
    double *X = malloc(n * d * sizeof *X), *y = malloc(n * sizeof *y),
           *yp = malloc((nt ? nt : 1) * sizeof *yp);
    for (size_t i = 0; i < n; i++) {
        memcpy(X + i * d, T + i * (d + 1), d * sizeof *X);
        y[i] = T[i * (d + 1) + d];
    }
    rfx_pce_params p = rfx_pce_params_default();
    p.marginals = mg;
    p.degree = (size_t)strtoul(argv[3], NULL, 10);
    p.method = strcmp(argv[4], "lars") == 0 ? RFX_PCE_METHOD_LARS : RFX_PCE_METHOD_LSQ;
    p.q_norm = strtod(argv[5], NULL);
    rfx_pce *pce = NULL;
    if (rfx_pce_fit(&p, rfx_cmat_of(X, n, d), y, &pce) != RFX_OK ||
        rfx_pce_predict(pce, rfx_cmat_of(Xt, nt, d), yp) != RFX_OK) {
        fprintf(stderr, "pce_peer_driver: %s\n", rfx_last_error());
        return 1;
    }
    unsigned *alpha = malloc(d * sizeof *alpha);
    for (size_t k = 0; k < rfx_pce_n_terms(pce); k++) {
        double c;
        rfx_pce_term(pce, k, &c, alpha);
        printf("term %.17g", c);
        for (size_t i = 0; i < d; i++) printf(" %u", alpha[i]);
        printf("\n");
    }
    for (size_t i = 0; i < nt; i++) printf("pred %.17g\n", yp[i]);
    rfx_pce_info info;
    rfx_pce_get_info(pce, &info);
    printf("mean %.17g\nvariance %.17g\n", info.mean, info.variance);
    printf("loo %.17g %.17g %.17g\n", info.loo_mse, info.loo_relative, info.loo_corrected);
    double *first = malloc(d * sizeof *first), *total = malloc(d * sizeof *total);
    rfx_pce_sobol(pce, first, total);
    printf("first");
    for (size_t i = 0; i < d; i++) printf(" %.17g", first[i]);
    printf("\ntotal");
    for (size_t i = 0; i < d; i++) printf(" %.17g", total[i]);
    printf("\n");
    rfx_pce_free(pce);
    free(first);
    free(total);
    free(alpha);
    free(mg);
    free(T);
    free(Xt);
    free(X);
    free(y);
    free(yp);
    return 0;
}
