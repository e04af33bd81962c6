/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_kernel_sgd.c - rfx kernel-sgd: a two-class classifier trained by SGD
 * with a kernel (rfx/kernel_sgd.h) in each of the four ways of the kernel
 * trick - random features computed on the fly or cached, kernel values on
 * the fly or the Gram matrix cached - with the same index sequence, and a
 * table of what each cost (time, flops, memory) and how well it classifies.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_kernel_sgd(const command *c, int argc, char **argv);

static const opt_spec KSGD_OPTS[] = {
    OPT_TARGET(" of DATA (two distinct values; the larger is the class +1)"),
    { O_TEST_DATA, 0, "test", "DATA2",
      "rows to score each model on (DATA's inputs and its target column)" },
    { O_STRATEGY, 0, "strategy", "S",
      "features-on-the-fly, features-cached, kernel-on-the-fly, gram-cached, or all (default: "
      "all four, one after the other)" },
    { O_LOSS, 0, "loss", "L", "logistic (default), hinge or squared-hinge" },
    { O_STEP, 0, "step", "A", "the step size alpha > 0 (default 0.1)" },
    { O_LAMBDA, 0, "lambda", "L", "the L2 penalty >= 0, alpha lambda < 1 (default 0)" },
    { O_ITERATIONS, 0, "iterations", "T", "SGD steps T >= 1 (default 20 n)" },
    { O_KERNEL, 0, "kernel", "K", "gaussian (default), laplacian, cauchy or matern" },
    { O_NU, 0, "nu", "NU", "Matern smoothness 0.5, 1.5 (default) or 2.5" },
    { O_LENGTH_SCALE, 0, "length-scale", "L",
      "the kernel's length scale > 0, in standardised units (default sqrt(d))" },
    { O_FEATURES, 'D', "features", "D",
      "random features of the weight-space strategies (default 1024)" },
    { O_SEED, 0, "seed", "S", "the seed of the features and of the index sequence (default 0)" },
    { O_NO_STANDARDIZE, 0, "no-standardize", NULL,
      "use the inputs as they are (default: centred and scaled by the training rows)" },
    { O_FORMAT, 0, "format", "F",
      "text (default) or json: a list of {strategy, seconds, flops, cache_bytes, state_bytes, "
      "support, train_accuracy, test_accuracy}" },
    { O_THREADS, 0, "threads", "T",
      "threads for the caches and the scores, 0 to 4096 (default 0: the OpenMP default)" },
    OPT_DELIMITER,
    OPT_NO_HEADER,
    { O_END, 0, NULL, NULL, NULL }
};

const command cli_kernel_sgd_command = {
    "kernel-sgd",
    "rfx kernel-sgd DATA [--target COL] [--test DATA2] [--strategy S|all] [options]",
    "SGD with a kernel in the four ways of the kernel trick, side by side",
    "Train the linear classifier f(x) = w.phi(x), phi(x).phi(y) = k(x, y), by SGD on\n"
    "the mean loss (logistic, hinge or squared hinge) plus lambda/2 |w|^2, labels\n"
    "+-1, no intercept, in four ways (rfx/kernel_sgd.h):\n"
    "  features-on-the-fly  w-space, D random features of each row, every step\n"
    "  features-cached      w-space, the n x D features computed once\n"
    "  kernel-on-the-fly    u-space (w = sum_j u_j phi(x_j)), kernel values every step\n"
    "  gram-cached          u-space, the n x n Gram matrix computed once\n"
    "All visit the same rows in the same order. The two u-space strategies use\n"
    "the exact kernel and give the same model; the w-space ones use random\n"
    "features of it, which approach it as D grows. The table gives each one's\n"
    "time, flops, memory beyond the rows (cache and state), support vectors\n"
    "(u-space) and accuracy on DATA and on --test.\n",
    KSGD_OPTS, cmd_kernel_sgd, NULL
};

typedef struct ksgd_row {
    rfx_sgd_strategy strategy;
    double seconds, flops, train_acc, test_acc;
    size_t cache_bytes, state_bytes, support;
} ksgd_row;

/* The +-1 labels of Y's two values (the larger +1) into s; RC_OK or the
 * exit code after the message. */
static int two_labels(rfx_cmat Y, const char *path, double *lo, double *hi, double *s)
{
    *lo = *hi = Y.data[0];
    for (size_t i = 1; i < Y.rows; i++) {
        double v = Y.data[i * Y.stride];
        if (v != *lo && v != *hi) {
            if (*lo != *hi) {
                char q[1024];
                cli_say("%s: the target has more than two values (%g, %g, %g, ...); kernel-sgd "
                        "classifies two", cli_escape(path, q, sizeof q), *lo, *hi, v);
                return RC_DATA;
            }
            if (v < *lo) *lo = v;
            else *hi = v;
        }
    }
    if (*lo == *hi) {
        char q[1024];
        cli_say("%s: the target has one value (%g); kernel-sgd needs two classes",
                cli_escape(path, q, sizeof q), *lo);
        return RC_DATA;
    }
    for (size_t i = 0; i < Y.rows; i++) s[i] = Y.data[i * Y.stride] == *hi ? 1.0 : -1.0;
    return RC_OK;
}

/* X standardised by (mean, scale) into a new n x d array. */
static double *scaled(rfx_cmat X, const double *mean, const double *scale)
{
    double *Z = malloc((X.rows ? X.rows : 1) * X.cols * sizeof *Z);
    if (!Z) return NULL;
    for (size_t i = 0; i < X.rows; i++)
        for (size_t j = 0; j < X.cols; j++)
            Z[i * X.cols + j] = (X.data[i * X.stride + j] - mean[j]) / scale[j];
    return Z;
}

static double accuracy(const rfx_kernel_sgd *m, rfx_cmat X, const double *s, double *buf)
{
    if (rfx_kernel_sgd_predict(m, X, buf) != RFX_OK) return NAN;
    size_t right = 0;
    for (size_t i = 0; i < X.rows; i++) right += buf[i] == s[i];
    return (double)right / (double)X.rows;
}

static int cmd_kernel_sgd(const command *c, int argc, char **argv)
{
    rfx_read_params rp = rfx_read_params_default();
    rfx_kernel_sgd_params kp = rfx_kernel_sgd_params_default();
    rfx_features_params fp = rfx_features_params_default();
    const char *data_path = NULL, *test_path = NULL;
    int all = 1, json = 0, standardize = 1, have_ls = 0;
    rfx_sgd_strategy only = RFX_SGD_GRAM_CACHED;
    double ls = 0;
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
        case O_TEST_DATA: test_path = v; break;
        case O_STRATEGY:
            if (strcmp(v, "all") == 0) {
                all = 1;
            } else if (rfx_sgd_strategy_from_name(v, &only) == RFX_OK) {
                all = 0;
            } else {
                rfx_clear_error();
                bad = cli_value_error(&it, "unknown strategy '%s' (features-on-the-fly, "
                                      "features-cached, kernel-on-the-fly, gram-cached or all)", v);
            }
            break;
        case O_LOSS:
            if (rfx_loss_from_name(v, &kp.loss) != RFX_OK || kp.loss >= RFX_LOSS_SQUARED) {
                rfx_clear_error();
                bad = cli_value_error(&it, "unknown loss '%s' (logistic, hinge or squared-hinge)",
                                      v);
            }
            break;
        case O_STEP: bad = cli_parse_positive(&it, v, &kp.alpha); break;
        case O_LAMBDA: bad = cli_parse_nonnegative(&it, v, &kp.lambda); break;
        case O_ITERATIONS: bad = cli_parse_size(&it, v, 1, &kp.n_iter); break;
        case O_KERNEL: bad = cli_parse_kernel(&it, v, &fp.kernel); break;
        case O_NU: bad = cli_parse_nu(&it, v, &fp.nu); break;
        case O_LENGTH_SCALE:
            bad = cli_parse_positive(&it, v, &ls);
            have_ls = 1;
            break;
        case O_FEATURES: bad = cli_parse_size(&it, v, 1, &fp.n_features); break;
        case O_SEED: bad = cli_parse_seed(&it, v, &fp.seed); break;
        case O_NO_STANDARDIZE: standardize = 0; break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_THREADS: bad = cli_parse_threads(&it, v, &kp.n_threads); break;
        case O_DELIMITER:
        case O_NO_HEADER: bad = cli_parse_read_option(&it, id, v, &rp); break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (!data_path) return cli_usage_error(c, "missing DATA, the CSV or .npy file to train on");
    kp.seed = fp.seed;
    fp.n_threads = kp.n_threads;

    rfx_data *data = NULL, *test = NULL;
    double *s = NULL, *st = NULL, *Xs = NULL, *Xts = NULL, *mean = NULL, *scale = NULL,
           *buf = NULL;
    rfx_features *f = NULL;
    rfx_kern *k = NULL;
    ksgd_row rows[4];
    size_t n_rows = 0;
    int rc = RC_OK;
    rfx_status status = rfx_data_read(data_path, &rp, &data);
    if (status != RFX_OK) return cli_fail(status);
    rfx_cmat X = rfx_data_x(data), Xt = rfx_cmat_none();
    const size_t n = X.rows, d = X.cols;
    double lo, hi;
    if (!(s = malloc(n * sizeof *s)) || !(mean = calloc(d, sizeof *mean)) ||
        !(scale = malloc(d * sizeof *scale))) {
        cli_say("out of memory for %zu rows", n);
        rc = RC_INTERNAL;
        goto done;
    }
    if ((rc = two_labels(rfx_data_y(data), data_path, &lo, &hi, s)) != RC_OK) goto done;
    for (size_t j = 0; j < d; j++) {
        double m = 0, var = 0;
        for (size_t i = 0; i < n; i++) m += X.data[i * X.stride + j];
        m /= (double)n;
        for (size_t i = 0; i < n; i++) var += pow(X.data[i * X.stride + j] - m, 2);
        double sd = sqrt(var / (double)n);
        mean[j] = standardize ? m : 0.0;
        scale[j] = standardize && sd > 0 && isfinite(sd) ? sd : 1.0;
    }
    if (!(Xs = scaled(X, mean, scale))) {
        cli_say("out of memory for the standardised rows");
        rc = RC_INTERNAL;
        goto done;
    }
    if (test_path) {
        if ((status = rfx_data_read(test_path, &rp, &test)) != RFX_OK) {
            rc = cli_fail(status);
            goto done;
        }
        Xt = rfx_data_x(test);
        if (Xt.cols != d) {
            char q[1024];
            cli_say("%s has %zu inputs, DATA has %zu", cli_escape(test_path, q, sizeof q),
                    Xt.cols, d);
            rc = RC_DATA;
            goto done;
        }
        rfx_cmat Yt = rfx_data_y(test);
        if (!(st = malloc((Xt.rows ? Xt.rows : 1) * sizeof *st)) || !(Xts = scaled(Xt, mean, scale))) {
            cli_say("out of memory for the test rows");
            rc = RC_INTERNAL;
            goto done;
        }
        for (size_t i = 0; i < Xt.rows; i++) {
            double y = Yt.data[i * Yt.stride];
            if (y != lo && y != hi) {
                char q[1024];
                cli_say("%s: row %zu's target %g is neither class of DATA (%g, %g)",
                        cli_escape(test_path, q, sizeof q), i + 1, y, lo, hi);
                rc = RC_DATA;
                goto done;
            }
            st[i] = y == hi ? 1.0 : -1.0;
        }
    }
    fp.length_scale = have_ls ? ls : sqrt((double)d);
    if ((status = rfx_kern_shift(fp.kernel, fp.nu, fp.length_scale, NULL, 0, &k)) != RFX_OK ||
        (status = rfx_features_create(&fp, d, &f)) != RFX_OK) {
        rc = cli_fail(status);
        goto done;
    }
    size_t nb = n > Xt.rows ? n : Xt.rows;
    if (!(buf = malloc((nb ? nb : 1) * sizeof *buf))) {
        cli_say("out of memory for %zu labels", nb);
        rc = RC_INTERNAL;
        goto done;
    }
    for (int strat = 0; strat < 4; strat++) {
        if (!all && (rfx_sgd_strategy)strat != only) continue;
        rfx_kernel_sgd_params p = kp;
        p.strategy = (rfx_sgd_strategy)strat;
        rfx_kernel_sgd *m = NULL;
        const double t0 = cli_now_seconds();
        status = rfx_kernel_sgd_fit(k, f, rfx_cmat_of(Xs, n, d), s, &p, &m);
        const double secs = cli_now_seconds() - t0;
        if (status != RFX_OK) {
            cli_say("%s: %s", rfx_sgd_strategy_name(p.strategy), rfx_last_error());
            rc = cli_exit_code(status);
            goto done;
        }
        rfx_kernel_sgd_info info;
        rfx_kernel_sgd_get_info(m, &info);
        ksgd_row *r = &rows[n_rows++];
        r->strategy = p.strategy;
        r->seconds = secs;
        r->flops = info.flops;
        r->cache_bytes = info.cache_bytes;
        r->state_bytes = info.state_bytes;
        r->support = info.n_support;
        r->train_acc = accuracy(m, rfx_cmat_of(Xs, n, d), s, buf);
        r->test_acc = test ? accuracy(m, rfx_cmat_of(Xts, Xt.rows, d), st, buf) : NAN;
        rfx_kernel_sgd_free(m);
    }
    if (json) {
        json_writer w;
        json_begin(&w, stdout);
        json_size(&w, "rows", n);
        json_size(&w, "steps", kp.n_iter ? kp.n_iter : 20 * n);
        json_num(&w, "length_scale", fp.length_scale);
        json_open(&w, "strategies", '[');
        for (size_t i = 0; i < n_rows; i++) {
            json_open(&w, NULL, '{');
            json_str(&w, "strategy", rfx_sgd_strategy_name(rows[i].strategy));
            json_num(&w, "seconds", rows[i].seconds);
            json_num(&w, "flops", rows[i].flops);
            json_size(&w, "cache_bytes", rows[i].cache_bytes);
            json_size(&w, "state_bytes", rows[i].state_bytes);
            json_size(&w, "support", rows[i].support);
            json_num(&w, "train_accuracy", rows[i].train_acc);
            json_num(&w, "test_accuracy", rows[i].test_acc);
            json_close(&w, '}');
        }
        json_close(&w, ']');
        json_end(&w);
    } else {
        printf("rows %zu, inputs %zu, %zu steps, %s kernel, length scale %g, D = %zu, "
               "%s loss, step %g, lambda %g\n", n, d, kp.n_iter ? kp.n_iter : 20 * n,
               rfx_kernel_name(fp.kernel), fp.length_scale, fp.n_features,
               rfx_loss_name(kp.loss), kp.alpha, kp.lambda);
        printf("%-20s %10s %12s %12s %12s %8s %8s %8s\n", "strategy", "seconds", "flops",
               "cache bytes", "state bytes", "support", "train", "test");
        for (size_t i = 0; i < n_rows; i++) {
            char sup[24] = "-", te[24] = "-";
            if (rows[i].strategy >= RFX_SGD_KERNEL_ON_THE_FLY)
                snprintf(sup, sizeof sup, "%zu", rows[i].support);
            if (test) snprintf(te, sizeof te, "%.4f", rows[i].test_acc);
            printf("%-20s %10.3f %12.4g %12zu %12zu %8s %8.4f %8s\n",
                   rfx_sgd_strategy_name(rows[i].strategy), rows[i].seconds, rows[i].flops,
                   rows[i].cache_bytes, rows[i].state_bytes, sup, rows[i].train_acc, te);
        }
    }
done:
    rfx_data_free(data);
    rfx_data_free(test);
    rfx_features_free(f);
    rfx_kern_free(k);
    free(s);
    free(st);
    free(Xs);
    free(Xts);
    free(mean);
    free(scale);
    free(buf);
    return rc;
}
