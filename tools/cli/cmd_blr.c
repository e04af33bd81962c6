/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_blr.c - rfx blr: Bayesian linear regression (rfx/blr.h) on a basis of
 * the inputs - the columns as they are, or their monomials up to a degree -
 * fitted and, with --predict, applied in one run: the posterior's summary
 * and weights on stderr (or --json), the predictive mean and standard
 * deviation of new rows to a CSV or .npy file.
 */
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_blr(const command *c, int argc, char **argv);

static const opt_spec BLR_OPTS[] = {
    OPT_TARGET(" of DATA"),
    { O_BASIS, 0, "basis", "B",
      "columns (default: the inputs themselves are the design, so that any basis you "
      "compute is fitted as it is) or poly:K (every monomial of the inputs of degree 1 to K, "
      "K >= 1, in scikit-learn's PolynomialFeatures order)" },
    { O_NOISE_VAR, 0, "noise-var", "V",
      "noise variance sigma^2 > 0 (default: fitted by maximising the evidence)" },
    { O_PRIOR_VAR, 0, "prior-var", "V",
      "prior variance s^2 > 0 of the weights (default: fitted)" },
    { O_NO_INTERCEPT, 0, "no-intercept", NULL,
      "no intercept (default: an intercept with a flat prior)" },
    { O_PREDICT_DATA, 0, "predict", "DATA2",
      "the rows to predict: DATA2 has DATA's inputs (a target column, if named by --target "
      "there, is left out)" },
    { O_OUTPUT, 'o', "output", "OUT",
      "with --predict: write the columns mean and std to OUT (.csv, or .npy by extension; "
      "'-' or absent: stdout)" },
    { O_LATENT, 0, "latent", NULL,
      "the std of the latent f (default: of a new observation y, the noise included)" },
    { O_FORMAT, 0, "format", "F",
      "the fit's report: text (default, on stderr) or json (on stdout: rows, basis_size, "
      "noise_var, prior_var, log_evidence, effective_params, iterations, intercept and "
      "weights, a list of {term, mean, std})" },
    { O_THREADS, 0, "threads", "T",
      "threads, 0 to 4096 (default 0: the OpenMP default, OMP_NUM_THREADS or all cores)" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    OPT_QUIET,
    { O_END, 0, NULL, NULL, NULL }
};

const command cli_blr_command = {
    "blr", "rfx blr DATA [--target COL] [--basis B] [--predict DATA2 [-o OUT]] [options]",
    "Bayesian linear regression on a basis of the inputs, with predictive std",
    "Fit y = b + phi(x).w + e, e ~ N(0, sigma^2), w ~ N(0, s^2 I), on the rows of\n"
    "DATA (a CSV or .npy file): phi(x) is the row's inputs (--basis columns: the\n"
    "design you computed, any basis) or their monomials (--basis poly:K). The\n"
    "intercept b has a flat prior (--no-intercept: none; put a column of ones in\n"
    "the design to give it a Gaussian prior). The noise and prior variances\n"
    "maximise the evidence p(y) unless given (MacKay's fixed point). The fit\n"
    "takes the singular value decomposition of the design, never phi^T phi, so a\n"
    "polynomial basis keeps its conditioning; a basis wider than the data costs\n"
    "memory n N, not N^2.\n"
    "\n"
    "The report gives the variances, the log evidence, the effective number of\n"
    "parameters (the well-determined weights) and the posterior mean and std of\n"
    "every weight. With --predict the posterior predictive mean and std of the\n"
    "rows of DATA2 are written (the std of y, or of f with --latent). There is\n"
    "no model file: the fit is made again from DATA each run.\n",
    BLR_OPTS, cmd_blr, NULL
};

/* The design of a basis: the inputs X (n x d) or their monomials of degree
 * 1..K (combinations with replacement of the inputs, degree by degree, in
 * lexicographic order). idx (N x K, -1 padded) names the factors of column
 * j; NULL for the columns basis. */
typedef struct basis {
    size_t degree; /* 0: the columns as they are */
    size_t d, N;
    int *idx;
} basis;

static size_t monomials(size_t d, size_t K)
{
    /* C(d + K, K) - 1, or SIZE_MAX when it exceeds 10^7 */
    double c = 1;
    for (size_t i = 1; i <= K; i++) {
        c = c * (double)(d + i) / (double)i;
        if (c > 1e7) return SIZE_MAX;
    }
    return (size_t)(c + 0.5) - 1;
}

static int basis_make(basis *b, size_t d, size_t K)
{
    b->degree = K;
    b->d = d;
    b->idx = NULL;
    if (K == 0) {
        b->N = d;
        return 0;
    }
    b->N = monomials(d, K);
    if (b->N == SIZE_MAX || b->N > SIZE_MAX / K / sizeof(int)) return -1;
    if (!(b->idx = malloc(b->N * K * sizeof *b->idx))) return -1;
    size_t j = 0;
    int t[64];
    for (size_t deg = 1; deg <= K; deg++) {
        for (size_t k = 0; k < deg; k++) t[k] = 0;
        for (;;) {
            for (size_t k = 0; k < K; k++) b->idx[j * K + k] = k < deg ? t[k] : -1;
            j++;
            size_t k = deg; /* the next nondecreasing tuple */
            while (k > 0 && t[k - 1] == (int)d - 1) k--;
            if (k == 0) break;
            t[k - 1]++;
            for (size_t m = k; m < deg; m++) t[m] = t[k - 1];
        }
    }
    return 0;
}

static void basis_name(const basis *b, size_t j, const rfx_data *data, char *buf, size_t size)
{
    char q[256];
    if (b->degree == 0) {
        snprintf(buf, size, "%s", cli_escape(rfx_data_name(data, j), q, sizeof q));
        return;
    }
    size_t len = 0;
    buf[0] = 0;
    for (size_t k = 0; k < b->degree && b->idx[j * b->degree + k] >= 0; k++) {
        int v = b->idx[j * b->degree + k], p = 1;
        while (k + 1 < b->degree && b->idx[j * b->degree + k + 1] == v) {
            p++;
            k++;
        }
        cli_escape(rfx_data_name(data, (size_t)v), q, sizeof q);
        int w = p > 1 ? snprintf(buf + len, size - len, "%s%s^%d", len ? "*" : "", q, p)
                      : snprintf(buf + len, size - len, "%s%s", len ? "*" : "", q);
        if (w < 0 || (size_t)w >= size - len) return;
        len += (size_t)w;
    }
}

/* Phi (n x N, allocated) of the rows X. */
static double *basis_apply(const basis *b, rfx_cmat X)
{
    const size_t n = X.rows, N = b->N, K = b->degree;
    if (n && N > SIZE_MAX / sizeof(double) / n) return NULL;
    double *P = malloc((n ? n : 1) * N * sizeof *P);
    if (!P) return NULL;
    for (size_t i = 0; i < n; i++) {
        const double *x = X.data + i * X.stride;
        for (size_t j = 0; j < N; j++) {
            double v = 1;
            if (K == 0) v = x[j];
            else
                for (size_t k = 0; k < K && b->idx[j * K + k] >= 0; k++) v *= x[b->idx[j * K + k]];
            P[i * N + j] = v;
        }
    }
    return P;
}

static int parse_basis(const opt_iter *it, const char *v, size_t *degree)
{
    if (strcmp(v, "columns") == 0) {
        *degree = 0;
        return 0;
    }
    if (strncmp(v, "poly:", 5) == 0) {
        char *end;
        unsigned long long k = strtoull(v + 5, &end, 10);
        if (v[5] >= '0' && v[5] <= '9' && !*end && k >= 1 && k <= 64) {
            *degree = (size_t)k;
            return 0;
        }
    }
    return cli_value_error(it, "unknown basis '%s' (columns, or poly:K with 1 <= K <= 64)", v);
}

static int cmd_blr(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    rfx_blr_params bp = rfx_blr_params_default();
    const char *data_path = NULL, *pred_path = NULL, *out_path = NULL;
    size_t degree = 0;
    int latent = 0, quiet = 0, json = 0;
    rp.target = "-1";
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id;
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (data_path) return cli_usage_error(c, "unexpected argument '%s' (one DATA file)", v);
            data_path = v;
            break;
        case O_TARGET: rp.target = v; break;
        case O_BASIS: bad = parse_basis(&it, v, &degree); break;
        case O_NOISE_VAR: bad = cli_parse_positive(&it, v, &bp.noise_var); break;
        case O_PRIOR_VAR: bad = cli_parse_positive(&it, v, &bp.prior_var); break;
        case O_NO_INTERCEPT: bp.fit_intercept = 0; break;
        case O_PREDICT_DATA: pred_path = v; break;
        case O_OUTPUT: out_path = v; break;
        case O_LATENT: latent = 1; break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_THREADS: bad = cli_parse_threads(&it, v, &bp.n_threads); break;
        case O_QUIET: quiet = 1; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (!data_path) return cli_usage_error(c, "missing DATA, the CSV or .npy file to fit");
    if (out_path && !pred_path) return cli_usage_error(c, "-o needs --predict DATA2");
    if (latent && !pred_path) return cli_usage_error(c, "--latent goes with --predict");
    if (json && pred_path && (!out_path || strcmp(out_path, "-") == 0))
        return cli_usage_error(c, "--format json and the predictions both go to stdout: give "
                                  "-o OUT");
    if (pred_path) {
        const char *inputs[2] = { data_path, pred_path };
        int checked = cli_check_output(c, out_path, inputs, 2);
        if (checked != RC_OK) return checked;
    }

    rfx_data *data = NULL, *pdata = NULL;
    rfx_blr *m = NULL;
    double *Phi = NULL, *Pp = NULL, *out = NULL, *wstd = NULL, *Eye = NULL;
    basis b;
    memset(&b, 0, sizeof b);
    int rc = RC_OK;
    rfx_status st = rfx_data_read(data_path, &rp, &data);
    if (st != RFX_OK) return cli_fail(st);
    const rfx_cmat X = rfx_data_x(data), Y = rfx_data_y(data);
    const size_t n = X.rows, d = X.cols;
    if (basis_make(&b, d, degree)) {
        cli_say("--basis poly:%zu of %zu inputs has too many monomials", degree, d);
        rc = RC_DATA;
        goto done;
    }
    double *y = malloc((n ? n : 1) * sizeof *y);
    if (!y || !(Phi = basis_apply(&b, X))) {
        free(y);
        cli_say("out of memory for the design (%zu x %zu)", n, b.N);
        rc = RC_INTERNAL;
        goto done;
    }
    for (size_t i = 0; i < n; i++) y[i] = Y.data[i * Y.stride];
    const double t0 = cli_now_seconds();
    st = rfx_blr_fit(&bp, rfx_cmat_of(Phi, n, b.N), y, &m);
    const double seconds = cli_now_seconds() - t0;
    free(y);
    if (st != RFX_OK) {
        char q[1024];
        cli_say("%s: %s", cli_escape(data_path, q, sizeof q), rfx_last_error());
        rc = cli_exit_code(st);
        goto done;
    }
    /* each weight's posterior std: the latent std at the design's mean plus
     * a unit vector (with an intercept the design is centred, and the
     * intercept's variance sigma^2 / n is taken off) */
    rfx_blr_info info;
    rfx_blr_get_info(m, &info);
    if (!(Eye = calloc(b.N * b.N, sizeof *Eye)) || !(wstd = malloc(b.N * sizeof *wstd)) ||
        !(out = calloc(b.N, sizeof *out))) {
        cli_say("out of memory for the weights' std (%zu x %zu)", b.N, b.N);
        rc = RC_INTERNAL;
        goto done;
    }
    if (info.fit_intercept) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < b.N; j++) out[j] += Phi[i * b.N + j];
        for (size_t j = 0; j < b.N; j++) out[j] /= (double)n;
    }
    for (size_t j = 0; j < b.N; j++) {
        memcpy(Eye + j * b.N, out, b.N * sizeof *out);
        Eye[j * b.N + j] += 1.0;
    }
    if ((st = rfx_blr_predict(m, rfx_cmat_of(Eye, b.N, b.N), out, wstd, 0)) != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    const double icpt_var = info.fit_intercept ? info.noise_var / (double)info.n_train : 0.0;
    for (size_t j = 0; j < b.N; j++) wstd[j] = sqrt(fmax(0.0, wstd[j] * wstd[j] - icpt_var));
    const double *coef = rfx_blr_coef(m);
    char name[512];
    if (json) {
        json_writer w;
        json_begin(&w, stdout);
        json_size(&w, "rows", info.n_train);
        json_size(&w, "basis_size", b.N);
        json_num(&w, "noise_var", info.noise_var);
        json_num(&w, "prior_var", info.prior_var);
        json_num(&w, "log_evidence", info.log_evidence);
        json_num(&w, "effective_params", info.effective_params);
        json_size(&w, "iterations", info.iterations);
        json_num(&w, "intercept", info.intercept);
        json_open(&w, "weights", '[');
        for (size_t j = 0; j < b.N; j++) {
            basis_name(&b, j, data, name, sizeof name);
            json_open(&w, NULL, '{');
            json_str(&w, "term", name);
            json_num(&w, "mean", coef[j]);
            json_num(&w, "std", wstd[j]);
            json_close(&w, '}');
        }
        json_close(&w, ']');
        json_end(&w);
    } else if (!quiet) {
        FILE *e = stderr;
        fprintf(e, "method           blr (Bayesian linear regression)\n");
        fprintf(e, "data             %zu rows x %zu inputs\n", n, d);
        if (degree)
            fprintf(e, "basis            %zu monomials of degree 1 to %zu\n", b.N, degree);
        else
            fprintf(e, "basis            the %zu columns as they are\n", b.N);
        fprintf(e, "noise variance   %.6g (%s)\n", info.noise_var,
                bp.noise_var > 0 ? "given" : "fitted");
        fprintf(e, "prior variance   %.6g (%s)\n", info.prior_var,
                bp.prior_var > 0 ? "given" : "fitted");
        fprintf(e, "log evidence     %.6g (%zu fixed-point iterations)\n", info.log_evidence,
                info.iterations);
        fprintf(e, "effective params %.4g of %zu\n", info.effective_params, b.N);
        if (info.fit_intercept) fprintf(e, "intercept        %.6g\n", info.intercept);
        fprintf(e, "weights          %-24s %14s %14s\n", "term", "mean", "std");
        for (size_t j = 0; j < b.N; j++) {
            basis_name(&b, j, data, name, sizeof name);
            fprintf(e, "                 %-24s %14.6g %14.6g\n", name, coef[j], wstd[j]);
        }
        fprintf(e, "time             %.3f s\n", seconds);
    }
    if (pred_path) {
        rfx_read_params pp = rp;
        pp.target = NULL; /* inputs only, unless it has DATA's target column too */
        if ((st = rfx_data_read(pred_path, &pp, &pdata)) != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
        rfx_cmat Xp = rfx_data_x(pdata);
        if (Xp.cols == d + 1) { /* a file like DATA: its target column is left out */
            rfx_data_free(pdata);
            pdata = NULL;
            pp.target = rp.target;
            if ((st = rfx_data_read(pred_path, &pp, &pdata)) != RFX_OK) {
                rc = cli_fail(st);
                goto done;
            }
            Xp = rfx_data_x(pdata);
        }
        if (Xp.cols != d) {
            char q[1024];
            cli_say("%s has %zu input columns, DATA has %zu", cli_escape(pred_path, q, sizeof q),
                    Xp.cols, d);
            rc = RC_DATA;
            goto done;
        }
        const size_t m2 = Xp.rows;
        free(out);
        if (!(Pp = basis_apply(&b, Xp)) || !(out = malloc((m2 ? m2 : 1) * 2 * sizeof *out))) {
            cli_say("out of memory for the design of %zu rows", m2);
            rc = RC_INTERNAL;
            goto done;
        }
        double *mean = out, *sd = out + m2;
        if ((st = rfx_blr_predict(m, rfx_cmat_of(Pp, m2, b.N), mean, sd, !latent)) != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
        double *M = malloc((m2 ? m2 : 1) * 2 * sizeof *M);
        if (!M) {
            cli_say("out of memory for %zu predictions", m2);
            rc = RC_INTERNAL;
            goto done;
        }
        for (size_t i = 0; i < m2; i++) {
            M[2 * i] = mean[i];
            M[2 * i + 1] = sd[i];
        }
        const char *names[2] = { "mean", "std" };
        rc = cli_write_output(out_path, rfx_cmat_of(M, m2, 2), names);
        free(M);
    }
done:
    rfx_blr_free(m);
    rfx_data_free(data);
    rfx_data_free(pdata);
    free(b.idx);
    free(Phi);
    free(Pp);
    free(out);
    free(wstd);
    free(Eye);
    return rc;
}
