/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_kernel_approx.c - rfx kernel-approx: its options and help, the
 * built-in S-curve data set, the Gram matrix Z Z^T of the features, and the
 * relative Frobenius error against the exact kernel matrix for each number
 * of features D, with its log-log slope.
 */
#include "cli.h"
#include "helpers.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

static int cmd_kernel_approx(const command *c, int argc, char **argv);

static const opt_spec KAPPROX_OPTS[] = {
    { O_KERNEL, 0, "kernel", "K", "gaussian (default), laplacian, cauchy or matern" },
    { O_NU, 0, "nu", "NU", "Matern smoothness: 0.5, 1.5 (default) or 2.5" },
    { O_GAMMA, 0, "gamma", "G",
      "scikit-learn's gamma > 0 (gaussian and laplacian; default 0.5, i.e. length scale 1)" },
    { O_LENGTH_SCALE, 0, "length-scale", "L", "kernel length scale > 0 (default 1)" },
    { O_FEATURES, 'D', "features", "LIST",
      "comma-separated numbers of features, each >= 1 (default 10,100,1000,10000)" },
    { O_FORM, 0, "form", "F", "feature form: cos-bias (default) or cos-sin (every D even)" },
    { O_STRUCTURE, 0, "structure", "S",
      "frequencies: iid (default), orthogonal, sorf, fastfood or halton" },
    { O_SEED, 0, "seed", "S", "random seed of the features (default 0)" },
    { O_POINTS, 'n', "points", "N",
      "number of points, >= 1 (default 1000; with DATA, its first N rows)" },
    { O_PLOT, 0, "plot", "OUT.png",
      "also plot the error against D on log-log axes with a 1/sqrt(D) line (needs gnuplot)" },
    { O_THREADS, 0, "threads", "T",
      "threads for the feature transforms, 0 to 4096 (default 0: OpenMP default)" },
    OPT_FORMAT,
    OPT_REPORT_OUTPUT,
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

/* rfx kernel-approx: its synopsis, help text and options (main.c lists it). */
const command cli_kernel_approx_command = {
    "kernel-approx",
    "rfx kernel-approx [DATA] [--kernel K] [--gamma G | --length-scale L]\n"
    "                         [-D 10,100,1000,10000] [--form F] [--seed S] [-n N]\n"
    "                         [--plot OUT.png]",
    "measure how well Z Z^T approximates the kernel matrix",
    "For each number of features D, compute the features Z (n x D) of n points and\n"
    "the relative Frobenius error |K - Z Z^T|_F / |K|_F against the exact kernel\n"
    "matrix K (n x n). It falls like 1/sqrt(D) (Rahimi & Recht 2007). Without\n"
    "DATA the points are scikit-learn's S-curve (make_s_curve: 1000 points in 3-D,\n"
    "from a fixed seed, so that --seed varies only the features).\n"
    "\n"
    "--format json prints one object: \"kernel\", \"length_scale\", \"form\",\n"
    "\"structure\", \"seed\", \"points\", \"data\" (the file, or null for the S-curve),\n"
    "\"results\": [{\"D\", \"rel_error\", \"seconds\"}] and \"slope\" (null with one D).\n",
    KAPPROX_OPTS, cmd_kernel_approx, NULL
};

/* ------------------------------------------------------------------------ */
/* rfx kernel-approx                                                         */
/* ------------------------------------------------------------------------ */

/* scikit-learn's make_s_curve, X (n x 3): t = 3 pi (u - 1/2), u ~ U(0, 1);
 * x = sin t, y = 2 v with v ~ U(0, 1), z = sign(t) (cos t - 1). */
static void s_curve(double *X, size_t n, uint64_t seed)
{
    unsigned long long s = seed; /* splitmix64 (tests/helpers.h), not the library's streams */
    for (size_t i = 0; i < n; ++i) {
        double t = 3.0 * PI * (rfx_helper_uniform(&s) - 0.5);
        double v = rfx_helper_uniform(&s);
        double sign = (double)((t > 0) - (t < 0));
        X[3 * i + 0] = sin(t);
        X[3 * i + 1] = 2.0 * v;
        X[3 * i + 2] = sign * (cos(t) - 1.0);
    }
}

/* C(i..i+mi, j..j+mj) += A-rows(i..) . B-rows(j..) over columns k0..k0+kn:
 * the dot products of up to 4 rows of Z with up to 4 others, 16
 * accumulators held in registers (2 flops per load). */
static void gram_block(const double *Z, size_t ldz, size_t i, size_t mi, size_t j, size_t mj,
                       size_t k0, size_t kn, double *C, size_t ldc)
{
    if (mi == 4 && mj == 4) {
        const double *a0 = Z + i * ldz + k0, *a1 = a0 + ldz, *a2 = a1 + ldz, *a3 = a2 + ldz;
        const double *b0 = Z + j * ldz + k0, *b1 = b0 + ldz, *b2 = b1 + ldz, *b3 = b2 + ldz;
        double s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        double s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        for (size_t k = 0; k < kn; ++k) {
            double x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
            double y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
            s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
            s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
            s20 += x2 * y0; s21 += x2 * y1; s22 += x2 * y2; s23 += x2 * y3;
            s30 += x3 * y0; s31 += x3 * y1; s32 += x3 * y2; s33 += x3 * y3;
        }
        double *c0 = C + i * ldc + j, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
        c0[0] += s00; c0[1] += s01; c0[2] += s02; c0[3] += s03;
        c1[0] += s10; c1[1] += s11; c1[2] += s12; c1[3] += s13;
        c2[0] += s20; c2[1] += s21; c2[2] += s22; c2[3] += s23;
        c3[0] += s30; c3[1] += s31; c3[2] += s32; c3[3] += s33;
        return;
    }
    for (size_t a = 0; a < mi; ++a)
        for (size_t b = 0; b < mj; ++b) {
            const double *x = Z + (i + a) * ldz + k0, *y = Z + (j + b) * ldz + k0;
            double s = 0;
            for (size_t k = 0; k < kn; ++k) s += x[k] * y[k];
            C[(i + a) * ldc + j + b] += s;
        }
}

/* C = Z Z^T for Z (n x D, contiguous rows), C n x n: the upper triangle
 * and the diagonal (and some entries below it) are computed. n^2 D flops,
 * by panels of GRAM_PANEL columns so that the panel (n x GRAM_PANEL) stays
 * in cache while every 4 x 4 block of C is accumulated. */
static void gram_upper(const double *Z, size_t n, size_t D, double *C)
{
    enum { GRAM_PANEL = 256 };
    memset(C, 0, n * n * sizeof *C);
    for (size_t k0 = 0; k0 < D; k0 += GRAM_PANEL) {
        size_t kn = D - k0 < GRAM_PANEL ? D - k0 : GRAM_PANEL;
        for (size_t i = 0; i < n; i += 4) {
            size_t mi = n - i < 4 ? n - i : 4;
            for (size_t j = i; j < n; j += 4)
                gram_block(Z, D, i, mi, j, n - j < 4 ? n - j : 4, k0, kn, C, n);
        }
    }
}

/* |K - C|_F / |K|_F for symmetric n x n K and C, from their upper triangles. */
static double relative_frobenius_error(const double *K, const double *C, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i; j < n; ++j) {
            double w = i == j ? 1.0 : 2.0, k = K[i * n + j], d = k - C[i * n + j];
            num += w * d * d;
            den += w * k * k;
        }
    return den > 0 ? sqrt(num / den) : NAN;
}

/* Least-squares slope of log err against log D (-1/2 for Monte Carlo). */
static double loglog_slope(const size_t *Ds, const double *err, size_t m)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < m; ++i) {
        double x = log((double)Ds[i]), y = log(err[i]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    double den = (double)m * sxx - sx * sx;
    return den > 0 ? ((double)m * sxy - sx * sy) / den : NAN;
}

/* The points of the experiment: the first n rows of DATA, or the S-curve.
 * *owned is what to free; *X views the points. */
static int kernel_approx_points(const char *data_path, const rfx_read_params *rp, size_t n,
                                rfx_data **data, double **owned, rfx_cmat *X)
{
    if (data_path) {
        rfx_status st = rfx_data_read(data_path, rp, data);
        if (st != RFX_OK) return cli_fail(st);
        *X = rfx_data_x(*data);
        if (X->rows > n) X->rows = n;
        return RC_OK;
    }
    if (n > SIZE_MAX / 3 / sizeof(double) || !(*owned = malloc(3 * n * sizeof(double)))) {
        cli_say("out of memory for %zu points", n);
        return RC_INTERNAL;
    }
    s_curve(*owned, n, 0);
    *X = rfx_cmat_of(*owned, n, 3);
    return RC_OK;
}

static int cmd_kernel_approx(const command *c, int argc, char **argv)
{
    enum { MAX_DS = 64 };
    rfx_features_params fp = rfx_features_params_default();
    rfx_read_params rp = rfx_read_params_default();
    kernel_opts ko = { 0, 0, 0, 0.0 };
    size_t Ds[MAX_DS] = { 10, 100, 1000, 10000 }, nD = 4, n = 1000;
    const char *data_path = NULL, *plot_path = NULL, *out_path = NULL;
    opt_iter it = cli_opt_begin(c, argc, argv);
    const char *v;
    int id, json = 0;

    fp.length_scale = 1.0; /* gamma = 1/2 for the gaussian kernel */
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            if (data_path) return cli_usage_error(c, "unexpected argument '%s' (one DATA file)", v);
            data_path = v;
            break;
        case O_KERNEL: bad = cli_parse_kernel(&it, v, &fp.kernel); break;
        case O_NU: bad = cli_parse_nu(&it, v, &fp.nu); ko.have_nu = 1; break;
        case O_GAMMA: bad = cli_parse_positive(&it, v, &ko.gamma); ko.have_gamma = 1; break;
        case O_LENGTH_SCALE:
            bad = cli_parse_positive(&it, v, &fp.length_scale);
            ko.have_length_scale = 1;
            break;
        case O_FEATURES: bad = cli_parse_size_list(&it, v, 1, Ds, MAX_DS, &nD); break;
        case O_FORM: bad = cli_parse_form(&it, v, &fp.form); break;
        case O_STRUCTURE: bad = cli_parse_structure(&it, v, &fp.structure); break;
        case O_SEED: bad = cli_parse_seed(&it, v, &fp.seed); break;
        case O_POINTS: bad = cli_parse_size(&it, v, 1, &n); break;
        case O_PLOT: plot_path = v; break;
        case O_THREADS: bad = cli_parse_threads(&it, v, &fp.n_threads); break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_OUTPUT: out_path = v; break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (cli_kernel_opts_apply(c, &ko, &fp)) return RC_USAGE;
    size_t maxD = 0;
    for (size_t i = 0; i < nD; ++i) {
        if (fp.form == RFX_FORM_COS_SIN && Ds[i] % 2 != 0)
            return cli_usage_error(c, "-D: every value must be even with --form cos-sin, got %zu",
                                   Ds[i]);
        if (Ds[i] > maxD) maxD = Ds[i];
    }
    if (plot_path && !cli_program_in_path("gnuplot")) {
        cli_say("--plot: gnuplot is not installed (not found in PATH); install it or leave out "
                "--plot");
        return RC_IO;
    }
    const char *inputs[1] = { data_path };
    int checked = cli_check_output(c, plot_path, inputs, data_path ? 1 : 0);
    if (checked == RC_OK) checked = cli_check_output(c, out_path, inputs, data_path ? 1 : 0);
    if (checked != RC_OK) return checked;
    cli_report report = { 0 };

    rfx_data *data = NULL;
    rfx_features *f = NULL;
    double *points = NULL, *K = NULL, *C = NULL, *Z = NULL, err[MAX_DS];
    rfx_cmat X;
    rfx_status st = RFX_OK;
    int rc = kernel_approx_points(data_path, &rp, n, &data, &points, &X);
    if (rc != RC_OK) goto done;
    n = X.rows;
    if (n > SIZE_MAX / sizeof(double) / n || maxD > SIZE_MAX / sizeof(double) / n ||
        !(K = malloc(n * n * sizeof *K)) || !(C = malloc(n * n * sizeof *C)) ||
        !(Z = malloc(n * maxD * sizeof *Z))) {
        cli_say("out of memory for %zu points and D = %zu (%zu x %zu kernel matrices)", n, maxD,
                n, n);
        rc = RC_INTERNAL;
        goto done;
    }
    fp.n_features = Ds[0];
    st = rfx_features_create(&fp, X.cols, &f);
    if (st == RFX_OK) st = rfx_features_exact_kernel(f, X, X, rfx_mat_of(K, n, n));
    rfx_features_free(f);
    f = NULL;
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }

    char title[160];
    snprintf(title, sizeof title, "%s kernel, length scale %g, %s features, n = %zu%s",
             rfx_kernel_name(fp.kernel), fp.length_scale, rfx_form_name(fp.form), n,
             data_path ? "" : " (S-curve)");
    double secs[MAX_DS];
    if ((rc = cli_report_open(&report, out_path, json)) != RC_OK) goto done;
    FILE *out = report.fp;
    const int table = !json; /* text: each line as its D is done */
    if (table) {
        fprintf(out, "# %s, seed %llu\n", title, (unsigned long long)fp.seed);
        fprintf(out, "# relative Frobenius error |K - Z Z^T|_F / |K|_F\n");
        fprintf(out, "%10s  %12s  %9s\n", "D", "rel_error", "seconds");
        fflush(out);
    }
    for (size_t i = 0; i < nD; ++i) {
        double t0 = cli_now_seconds();
        fp.n_features = Ds[i];
        st = rfx_features_create(&fp, X.cols, &f);
        if (st == RFX_OK) st = rfx_features_transform(f, X, rfx_mat_of(Z, n, Ds[i]));
        rfx_features_free(f);
        f = NULL;
        if (st != RFX_OK) {
            rc = cli_fail(st);
            goto done;
        }
        gram_upper(Z, n, Ds[i], C);
        err[i] = relative_frobenius_error(K, C, n);
        secs[i] = cli_now_seconds() - t0;
        if (table) {
            fprintf(out, "%10zu  %12.5g  %9.3f\n", Ds[i], err[i], secs[i]);
            fflush(out);
        }
    }
    const double slope = nD >= 2 ? loglog_slope(Ds, err, nD) : NAN;
    if (json) {
        json_writer w;
        char q[1024];
        json_begin(&w, out);
        json_str(&w, "kernel", rfx_kernel_name(fp.kernel));
        json_num(&w, "length_scale", fp.length_scale);
        json_str(&w, "form", rfx_form_name(fp.form));
        json_str(&w, "structure", rfx_structure_name(fp.structure));
        json_size(&w, "seed", (size_t)fp.seed);
        json_size(&w, "points", n);
        json_str(&w, "data", data_path ? cli_escape(data_path, q, sizeof q) : NULL);
        json_open(&w, "results", '[');
        for (size_t i = 0; i < nD; i++) {
            json_open(&w, NULL, '{');
            json_size(&w, "D", Ds[i]);
            json_num(&w, "rel_error", err[i]);
            json_num(&w, "seconds", secs[i]);
            json_close(&w, '}');
        }
        json_close(&w, ']');
        json_num(&w, "slope", slope);
        json_end(&w);
    } else if (nD >= 2) {
        fprintf(out, "# log-log slope %.3f (Monte Carlo rate 1/sqrt(D): -0.5)\n", slope);
    }
    if (plot_path) {
        char q[1024];
        rc = cli_plot_errors(plot_path, Ds, err, nD, title);
        if (rc == RC_OK && !json)
            fprintf(out, "# plot written to %s\n", cli_escape(plot_path, q, sizeof q));
    }
done:
    if (report.fp) rc = cli_report_close(&report, rc);
    free(Z);
    free(C);
    free(K);
    free(points);
    rfx_data_free(data);
    return rc;
}
