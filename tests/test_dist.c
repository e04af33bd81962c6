/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librfx_dist (rfx/dist.h) under mpirun -np K, K = 1..4 (ctest dist_npK):
 *  - the sum tree (tree.h) on symbols: any split of the chunks among ranks
 *    gives the one-process tree, which is the canonical truncated dyadic
 *    tree;
 *  - fast mode: the reduced statistics equal one process's on all rows to
 *    1e-12 (weighted rows, an empty rank, a source too), and so do the
 *    ridge and Bayesian solutions (1e-10);
 *  - deterministic mode: the statistics are bitwise those of one process
 *    accumulating every row (computed here on each rank over
 *    MPI_COMM_SELF), with other source blocks and another thread count;
 *  - classification: L-BFGS over every rank's rows (a class on one rank
 *    only, an empty rank) gives every rank the same model, the one-process
 *    fit's to the optimizer's tolerance (bitwise on one rank); differing
 *    parameters, a source failing mid-iterations, a cancel: every rank
 *    fails alike;
 *  - preflight and faults: a differing field, field name, feature map,
 *    statistics' shape or parameter, ranks in different calls, a rank whose
 *    source fails or that cancels, rows that do not tile: every rank gets
 *    the same status and message and the handle stays usable; a rank that
 *    comes late trips the watchdog on every rank.
 * With RFX_TEST_DIST_KILL=R in the environment, rank R kills itself with
 * SIGKILL in the middle of a fit instead (tests/test_dist_kill.sh).
 */
#include <rfx.h>
#include <rfx/dist.h>

#include "testlib.h"
#include "tree.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

#define RUN(test)                                                              \
    do {                                                                       \
        MPI_Barrier(MPI_COMM_WORLD);                                           \
        double t0_ = MPI_Wtime();                                              \
        test();                                                                \
        MPI_Barrier(MPI_COMM_WORLD);                                           \
        if (rank == 0) printf("%-28s %.2f s\n", #test, MPI_Wtime() - t0_);     \
    } while (0)

/* y = sin(3 x0) + x1 x2 + offset + noise; ny columns (column k scaled by
 * k + 1). The same rows on every rank. */
static void make_data(size_t n, size_t d, size_t ny, double offset, double **X, double **Y)
{
    rfx_test_rng r = {2024};
    *X = rfx_test_matrix(&r, n, d, -1, 1);
    *Y = malloc((n * ny > 0 ? n * ny : 1) * sizeof **Y);
    for (size_t i = 0; i < n; i++) {
        const double *x = *X + i * d;
        double f = sin(3 * x[0]) + x[1] * x[2];
        for (size_t k = 0; k < ny; k++)
            (*Y)[i * ny + k] = offset + (double)(k + 1) * f + 0.1 * rfx_test_normal(&r);
    }
}

static rfx_features *make_features(size_t D, size_t d, uint64_t seed)
{
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.seed = seed;
    p.length_scale = 0.8;
    rfx_features *f = NULL;
    CHECK_OK(rfx_features_create(&p, d, &f));
    return f;
}

static double max_rel_diff(const double *a, const double *b, size_t n)
{
    double m = 0, scale = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]) / (scale > 0 ? scale : 1));
    return m;
}

/* a and b agree entry by entry to tol relative to each array's largest */
static int stats_close(const rfx_stats *a, const rfx_stats *b, double tol)
{
    const size_t D = rfx_stats_n_features(a), ny = rfx_stats_n_targets(a);
    if (rfx_stats_rows(a) != rfx_stats_rows(b) || D != rfx_stats_n_features(b)) return 0;
    double *g1 = malloc(D * D * sizeof *g1), *g2 = malloc(D * D * sizeof *g2);
    double *t1 = malloc((D * ny + 1) * sizeof *t1), *t2 = malloc((D * ny + 1) * sizeof *t2);
    double *z1 = malloc(D * sizeof *z1), *z2 = malloc(D * sizeof *z2), y1[4], y2[4];
    rfx_stats_get(a, g1, t1, z1, y1);
    rfx_stats_get(b, g2, t2, z2, y2);
    int ok = max_rel_diff(g1, g2, D * D) < tol && max_rel_diff(t1, t2, D * ny) < tol &&
             max_rel_diff(z1, z2, D) < tol && max_rel_diff(y1, y2, ny) < tol;
    if (!ok)
        fprintf(stderr, "rank %d: stats differ: ztz %.3g zty %.3g zsum %.3g ysum %.3g\n", rank,
                max_rel_diff(g1, g2, D * D), max_rel_diff(t1, t2, D * ny),
                max_rel_diff(z1, z2, D), max_rel_diff(y1, y2, ny));
    free(g1);
    free(g2);
    free(t1);
    free(t2);
    free(z1);
    free(z2);
    return ok;
}

static double *packed(const rfx_stats *s, size_t *len)
{
    *len = rfx_stats_packed_size(s);
    double *v = malloc(*len * sizeof *v);
    CHECK_OK(rfx_stats_pack(s, NULL, v));
    return v;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* ---- the sum tree on symbols -------------------------------------------- */

static void sym_merge(void *user, void *left, const void *right)
{
    (void)user;
    char **l = left;
    const char *const *r = right;
    size_t n = strlen(*l) + strlen(*r) + 4;
    char *s = malloc(n);
    snprintf(s, n, "(%s+%s)", *l, *r);
    free(*l);
    *l = s;
}

static void sym_release(void *user, void *v)
{
    (void)user;
    char **p = v;
    free(*p);
    free(p);
}

static void sym_push(rfx__tree *t, uint64_t c, unsigned level, const char *text)
{
    char **p = malloc(sizeof *p);
    *p = malloc(strlen(text) + 1);
    strcpy(*p, text);
    CHECK_OK(rfx__tree_push(t, c, level, p));
}

/* The canonical tree of [a, a + n): a perfect tree when n is a power of
 * two, else the largest power of two below n, then the rest. */
static char *canonical(uint64_t a, uint64_t n)
{
    char *s;
    if (n == 1) {
        s = malloc(24);
        snprintf(s, 24, "%llu", (unsigned long long)a);
        return s;
    }
    uint64_t h = 1;
    while (2 * h < n) h *= 2;
    char *l = canonical(a, h), *r = canonical(a + h, n - h);
    size_t len = strlen(l) + strlen(r) + 4;
    s = malloc(len);
    snprintf(s, len, "(%s+%s)", l, r);
    free(l);
    free(r);
    return s;
}

/* C chunks split among K parts at the cuts given; the parts' stacks passed
 * down a binomial tree as librfx_dist does; the folded expression. */
static char *split_sum(uint64_t C, int K, const uint64_t *cut)
{
    rfx__tree *t = malloc((size_t)K * sizeof *t);
    for (int k = 0; k < K; k++) {
        rfx__tree_init(&t[k], sym_merge, sym_release, NULL);
        for (uint64_t c = cut[k]; c < cut[k + 1]; c++) {
            char num[24];
            snprintf(num, sizeof num, "%llu", (unsigned long long)c);
            sym_push(&t[k], c, 0, num);
        }
    }
    for (int step = 1; step < K; step *= 2)
        for (int k = 0; k + step < K; k += 2 * step) {
            rfx__tree *from = &t[k + step];
            for (size_t i = 0; i < from->n; i++)
                CHECK_OK(rfx__tree_push(&t[k], from->node[i].start, from->node[i].level,
                                        from->node[i].value));
            from->n = 0;
        }
    (void)C;
    char **top = rfx__tree_fold(&t[0]);
    char *s = top ? *top : NULL;
    free(top);
    for (int k = 0; k < K; k++) rfx__tree_free(&t[k]);
    free(t);
    return s;
}

static void test_tree_shapes(void)
{
    if (rank != 0) return;
    rfx_test_rng r = {99};
    for (uint64_t C = 1; C <= 40; C++) {
        char *want = canonical(0, C);
        uint64_t cut[8] = {0, C};
        char *one = split_sum(C, 1, cut);
        CHECK_MSG(one && strcmp(one, want) == 0, "C = %llu: %s, not %s", (unsigned long long)C,
                  one, want);
        free(one);
        for (int trial = 0; trial < 60; trial++) {
            int K = 2 + trial % 6;
            cut[0] = 0;
            cut[K] = C;
            for (int k = 1; k < K; k++) cut[k] = (uint64_t)(rfx_test_uniform(&r) * (double)(C + 1));
            for (int k = 1; k < K; k++) /* sorted: empty parts allowed */
                for (int j = k; j > 1 && cut[j] < cut[j - 1]; j--) {
                    uint64_t tmp = cut[j];
                    cut[j] = cut[j - 1];
                    cut[j - 1] = tmp;
                }
            char *got = split_sum(C, K, cut);
            CHECK_MSG(got && strcmp(got, want) == 0, "C = %llu, K = %d: %s, not %s",
                      (unsigned long long)C, K, got, want);
            free(got);
        }
        free(want);
    }
    /* pushing out of order is refused, and the value released */
    rfx__tree t;
    rfx__tree_init(&t, sym_merge, sym_release, NULL);
    sym_push(&t, 4, 2, "a");
    char **p = malloc(sizeof *p);
    *p = malloc(2);
    strcpy(*p, "b");
    CHECK_STATUS(rfx__tree_push(&t, 2, 0, p), RFX_EINTERNAL);
    p = malloc(sizeof *p);
    *p = malloc(2);
    strcpy(*p, "c");
    CHECK_STATUS(rfx__tree_push(&t, 9, 1, p), RFX_EINTERNAL); /* 9 is not a multiple of 2 */
    rfx__tree_free(&t);
}

/* ---- fast mode ---------------------------------------------------------- */

/* Rank r's share of n rows: proportional to r + 1 (rank `empty` none). */
static void share(size_t n, int empty, size_t *first, size_t *count)
{
    size_t total = 0, before = 0;
    for (int r = 0; r < size; r++) total += r == empty ? 0 : (size_t)r + 1;
    for (int r = 0; r < rank; r++) before += r == empty ? 0 : (size_t)r + 1;
    *first = n * before / total;
    *count = n * (before + (rank == empty ? 0 : (size_t)rank + 1)) / total - *first;
}

static void test_fast(void)
{
    const size_t n = 1000, d = 3, D = 96;
    double *X, *Y;
    make_data(n, d, 1, 1000.0, &X, &Y);
    rfx_features *f = make_features(D, d, 7);
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, NULL, &dist));
    CHECK(rfx_dist_rank(dist) == rank && rfx_dist_size(dist) == size);
    CHECK_OK(rfx_dist_agree_features(dist, f));
    size_t first, count;
    share(n, -1, &first, &count);
    uint64_t first_row = 99, total = 0;
    CHECK_OK(rfx_dist_row_offsets(dist, count, &first_row, &total));
    CHECK(first_row == first && total == n);

    /* the one-process statistics and models, on every rank */
    rfx_stats *all = NULL, *s = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &all));
    CHECK_OK(rfx_stats_add(all, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1)));
    CHECK_OK(rfx_stats_create(D, 1, &s));
    CHECK_OK(rfx_stats_add(s, f, rfx_cmat_of(X + first * d, count, d),
                           rfx_cmat_of(Y + first, count, 1)));
    CHECK_OK(rfx_dist_stats_reduce(dist, s, 0));
    if (rank == 0) {
        CHECK(stats_close(s, all, 1e-12));
        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.lambda = 1e-2;
        rfx_bayes_params bp = rfx_bayes_params_default();
        bp.noise_var = 0.01;
        bp.prior_var = 1.0;
        rfx_model *m1 = NULL, *m2 = NULL, *b1 = NULL, *b2 = NULL, *e1 = NULL, *e2 = NULL;
        CHECK_OK(rfx_ridge_solve(f, all, &rp, &m1));
        CHECK_OK(rfx_ridge_solve(f, s, &rp, &m2));
        CHECK(max_rel_diff(rfx_model_weights(m2).data, rfx_model_weights(m1).data, D) < 1e-10);
        CHECK_NEAR(rfx_model_intercepts(m2)[0], rfx_model_intercepts(m1)[0], 1e-10 * 1000);
        CHECK_OK(rfx_bayes_solve(f, all, &bp, &b1));
        CHECK_OK(rfx_bayes_solve(f, s, &bp, &b2));
        CHECK(max_rel_diff(rfx_model_weights(b2).data, rfx_model_weights(b1).data, D) < 1e-10);
        /* variances fitted by the evidence: the same fixed point */
        rfx_bayes_params ep = rfx_bayes_params_default();
        CHECK_OK(rfx_bayes_solve(f, all, &ep, &e1));
        CHECK_OK(rfx_bayes_solve(f, s, &ep, &e2));
        rfx_model_info i1, i2;
        CHECK_OK(rfx_model_get_info(e1, &i1));
        CHECK_OK(rfx_model_get_info(e2, &i2));
        CHECK_NEAR(i2.log_evidence / i1.log_evidence, 1.0, 1e-10);
        CHECK_NEAR(i2.noise_var / i1.noise_var, 1.0, 1e-6);
        CHECK(max_rel_diff(rfx_model_weights(e2).data, rfx_model_weights(e1).data, D) < 1e-6);
        rfx_model_free(m1);
        rfx_model_free(m2);
        rfx_model_free(b1);
        rfx_model_free(b2);
        rfx_model_free(e1);
        rfx_model_free(e2);
    } else {
        CHECK(rfx_stats_rows(s) == count); /* the others keep their own rows */
    }
    rfx_stats_free(s);

    /* weighted rows, rank 0 (when there are others) without rows: the shift
     * comes from rank 1; every rank gets the sum (root -1); the evidence
     * sees sum w and sum log w */
    double *w = malloc(n * sizeof *w);
    rfx_test_rng r = {5};
    for (size_t i = 0; i < n; i++) w[i] = i % 9 == 4 ? 0.0 : 0.25 + 2 * rfx_test_uniform(&r);
    share(n, size > 1 ? 0 : -1, &first, &count);
    rfx_stats *wall = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &wall));
    CHECK_OK(rfx_stats_add_weighted(wall, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1), w));
    CHECK_OK(rfx_stats_create(D, 1, &s));
    if (count)
        CHECK_OK(rfx_stats_add_weighted(s, f, rfx_cmat_of(X + first * d, count, d),
                                        rfx_cmat_of(Y + first, count, 1), w + first));
    CHECK_OK(rfx_dist_stats_reduce(dist, s, -1));
    CHECK(stats_close(s, wall, 1e-12));
    {
        rfx_bayes_params bp = rfx_bayes_params_default();
        bp.noise_var = 0.02;
        bp.prior_var = 0.5;
        rfx_model *b1 = NULL, *b2 = NULL;
        CHECK_OK(rfx_bayes_solve(f, wall, &bp, &b1));
        CHECK_OK(rfx_bayes_solve(f, s, &bp, &b2));
        rfx_model_info i1, i2;
        CHECK_OK(rfx_model_get_info(b1, &i1));
        CHECK_OK(rfx_model_get_info(b2, &i2));
        CHECK_NEAR(i2.log_evidence / i1.log_evidence, 1.0, 1e-10);
        CHECK(max_rel_diff(rfx_model_weights(b2).data, rfx_model_weights(b1).data, D) < 1e-10);
        rfx_model_free(b1);
        rfx_model_free(b2);
    }
    rfx_stats_free(s);

    /* a source, fast mode: rfx_stats_add_source then the reduction */
    share(n, -1, &first, &count);
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X + first * d, count, d),
                                      rfx_cmat_of(Y + first, count, 1), 64, &src));
    CHECK_OK(rfx_stats_create(D, 1, &s));
    CHECK_OK(rfx_dist_stats_add_source(dist, s, f, src, 0, size - 1, NULL, NULL));
    if (rank == size - 1) CHECK(stats_close(s, all, 1e-12));
    rfx_stats_free(s);
    rfx_source_free(src);
    rfx_stats_free(all);
    rfx_stats_free(wall);
    rfx_dist_free(dist);
    rfx_features_free(f);
    free(w);
    free(X);
    free(Y);
}

/* ---- deterministic mode ------------------------------------------------- */

/* Rank r's chunks of C: uneven, rank 1 without any when there are 3 ranks
 * or more. */
static void chunk_share(uint64_t C, uint64_t *c0, uint64_t *c1)
{
    uint64_t w[8], total = 0, before = 0;
    for (int r = 0; r < size; r++) {
        w[r] = size >= 3 && r == 1 ? 0 : (uint64_t)(2 * r + 1);
        total += w[r];
    }
    for (int r = 0; r < rank; r++) before += w[r];
    *c0 = C * before / total;
    *c1 = C * (before + w[rank]) / total;
}

/* The statistics of rows [0, n) in deterministic mode on one process. */
static rfx_stats *one_process(const rfx_features *f, const double *X, const double *Y, size_t n,
                              size_t d, size_t ny, size_t D, size_t chunk, size_t block)
{
    rfx_dist_params p = rfx_dist_params_default();
    p.deterministic = 1;
    p.chunk_rows = chunk;
    rfx_dist *self = NULL;
    rfx_stats *s = NULL;
    rfx_source *src = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_SELF, &p, &self));
    CHECK_OK(rfx_stats_create(D, ny, &s));
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, n, d),
                                      ny ? rfx_cmat_of(Y, n, ny) : rfx_cmat_none(), block, &src));
    CHECK_OK(rfx_dist_stats_add_source(self, s, f, src, 0, 0, NULL, NULL));
    rfx_source_free(src);
    rfx_dist_free(self);
    return s;
}

static void test_deterministic(void)
{
    const size_t chunk = 128, n = 128 * 13 + 50, d = 3, D = 80, ny = 2;
    const uint64_t C = (n + chunk - 1) / chunk;
    double *X, *Y;
    make_data(n, d, ny, -300.0, &X, &Y);
    rfx_features *f = make_features(D, d, 11);
    rfx_dist_params p = rfx_dist_params_default();
    p.deterministic = 1;
    p.chunk_rows = chunk;
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, &p, &dist));
    uint64_t c0, c1;
    chunk_share(C, &c0, &c1);
    const size_t first = c0 * chunk, last = c1 * chunk < n ? c1 * chunk : n;
    const size_t count = last - first;
    uint64_t first_row = 0, total = 0;
    CHECK_OK(rfx_dist_row_offsets(dist, count, &first_row, &total));
    CHECK(first_row == first && total == n);

    /* one process, every row (source blocks of 500 rows, 2 threads) */
    rfx_features_set_threads(f, 2);
    rfx_stats *ref = one_process(f, X, Y, n, d, ny, D, chunk, 500);
    size_t L;
    double *want = packed(ref, &L);
    /* K ranks, blocks of 37 + 11 rank rows straddling the chunks, 1 thread */
    rfx_features_set_threads(f, 1);
    rfx_source *src = NULL;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X + first * d, count, d),
                                      rfx_cmat_of(Y + first * ny, count, ny),
                                      37 + 11 * (size_t)rank, &src));
    rfx_stats *s = NULL;
    CHECK_OK(rfx_stats_create(D, ny, &s));
    CHECK_OK(rfx_dist_stats_add_source(dist, s, f, src, first, -1, NULL, NULL));
    size_t L2;
    double *got = packed(s, &L2);
    CHECK(L2 == L && memcmp(got, want, L * sizeof *got) == 0);
    if (rank == 0)
        printf("deterministic statistics: %zu doubles, hash %016llx (the same for any -np)\n", L,
               (unsigned long long)fnv(got, L * sizeof *got));
    /* ... and they are the statistics of the rows: against rfx_stats_add */
    rfx_stats *plain = NULL;
    CHECK_OK(rfx_stats_create(D, ny, &plain));
    CHECK_OK(rfx_stats_add(plain, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, ny)));
    CHECK(stats_close(s, plain, 1e-12));
    /* the model: the same bits */
    if (rank == 0) {
        rfx_ridge_params rp = rfx_ridge_params_default();
        rp.lambda = 1e-3;
        rfx_model *m1 = NULL, *m2 = NULL;
        CHECK_OK(rfx_ridge_solve(f, ref, &rp, &m1));
        CHECK_OK(rfx_ridge_solve(f, s, &rp, &m2));
        CHECK(memcmp(rfx_model_weights(m1).data, rfx_model_weights(m2).data,
                     D * ny * sizeof(double)) == 0);
        CHECK(memcmp(rfx_model_intercepts(m1), rfx_model_intercepts(m2), ny * sizeof(double)) ==
              0);
        rfx_model_free(m1);
        rfx_model_free(m2);
    }
    free(got);

    /* again to root size - 1 only, 2 threads, other blocks: the same bits */
    rfx_features_set_threads(f, 2);
    rfx_source_free(src);
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X + first * d, count, d),
                                      rfx_cmat_of(Y + first * ny, count, ny), 1000, &src));
    rfx_stats_free(s);
    CHECK_OK(rfx_stats_create(D, ny, &s));
    CHECK_OK(rfx_dist_stats_add_source(dist, s, f, src, first, size - 1, NULL, NULL));
    if (rank == size - 1) {
        got = packed(s, &L2);
        CHECK(memcmp(got, want, L * sizeof *got) == 0);
        free(got);
    } else {
        CHECK(rfx_stats_rows(s) == 0);
    }

    /* no rows anywhere: empty statistics, no error */
    rfx_source_free(src);
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, 0, d), rfx_cmat_of(Y, 0, ny), 0, &src));
    rfx_stats_free(s);
    CHECK_OK(rfx_stats_create(D, ny, &s));
    CHECK_OK(rfx_dist_stats_add_source(dist, s, f, src, 0, -1, NULL, NULL));
    CHECK(rfx_stats_rows(s) == 0);

    /* fewer rows than a chunk, all on the last rank; no targets */
    rfx_source_free(src);
    const size_t few = rank == size - 1 ? 70 : 0;
    CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, few, d), rfx_cmat_none(), 16, &src));
    rfx_stats *s0 = NULL, *ref0 = one_process(f, X, NULL, 70, d, 0, D, chunk, 70);
    CHECK_OK(rfx_stats_create(D, 0, &s0));
    CHECK_OK(rfx_dist_stats_add_source(dist, s0, f, src, 0, -1, NULL, NULL));
    double *a = packed(s0, &L), *b = packed(ref0, &L2);
    CHECK(L == L2 && memcmp(a, b, L * sizeof *a) == 0);
    free(a);
    free(b);
    rfx_stats_free(s0);
    rfx_stats_free(ref0);

    rfx_source_free(src);
    rfx_stats_free(s);
    rfx_stats_free(ref);
    rfx_stats_free(plain);
    free(want);
    rfx_dist_free(dist);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* Chunks of two sub-blocks (D = 1024: sub-blocks of 1024 rows, chunks of
 * 2048), the last chunk cut inside its second sub-block: the same bits on
 * any number of ranks. */
static void test_deterministic_subblocks(void)
{
    const size_t chunk = 2048, n = 2 * 2048 + 1500, d = 2, D = 1024;
    const uint64_t C = (n + chunk - 1) / chunk;
    double *X, *Y;
    make_data(n, d + 1, 1, 5.0, &X, &Y); /* 3 columns, the first 2 used */
    rfx_features *f = make_features(D, d, 3);
    rfx_dist_params p = rfx_dist_params_default();
    p.deterministic = 1;
    p.chunk_rows = chunk;
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, &p, &dist));
    uint64_t c0, c1;
    chunk_share(C, &c0, &c1);
    const size_t first = c0 * chunk, last = c1 * chunk < n ? c1 * chunk : n;
    rfx_source *src = NULL;
    const rfx_cmat Xv = {X + first * (d + 1), last - first, d, d + 1};
    CHECK_OK(rfx_source_memory_create(Xv, rfx_cmat_of(Y + first, last - first, 1), 700, &src));
    rfx_stats *s = NULL;
    CHECK_OK(rfx_stats_create(D, 1, &s));
    CHECK_OK(rfx_dist_stats_add_source(dist, s, f, src, first, 0, NULL, NULL));
    if (rank == 0) {
        /* one process: blocks of 3000 rows */
        rfx_dist *self = NULL;
        rfx_source *all = NULL;
        rfx_stats *ref = NULL;
        CHECK_OK(rfx_dist_create(MPI_COMM_SELF, &p, &self));
        CHECK_OK(rfx_source_memory_create((rfx_cmat){X, n, d, d + 1}, rfx_cmat_of(Y, n, 1), 3000,
                                          &all));
        CHECK_OK(rfx_stats_create(D, 1, &ref));
        CHECK_OK(rfx_dist_stats_add_source(self, ref, f, all, 0, 0, NULL, NULL));
        size_t L, L2;
        double *a = packed(s, &L), *b = packed(ref, &L2);
        CHECK(L == L2 && memcmp(a, b, L * sizeof *a) == 0);
        printf("deterministic statistics, D = %zu: hash %016llx\n", D,
               (unsigned long long)fnv(a, L * sizeof *a));
        free(a);
        free(b);
        rfx_stats_free(ref);
        rfx_source_free(all);
        rfx_dist_free(self);
    }
    rfx_stats_free(s);
    rfx_source_free(src);
    rfx_dist_free(dist);
    rfx_features_free(f);
    free(X);
    free(Y);
}

/* ---- preflight and faults ----------------------------------------------- */

/* Every rank got status st with the same message, which holds part. */
static void check_everywhere(rfx_status got, rfx_status st, const char *part)
{
    CHECK_MSG(got == st, "rank %d: status %d (%s), expected %d", rank, (int)got,
              rfx_last_error(), (int)st);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", rfx_last_error());
    CHECK_MSG(strstr(msg, part) != NULL, "rank %d: '%s' does not hold '%s'", rank, msg, part);
    char root[1024];
    memcpy(root, msg, sizeof root);
    MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK_MSG(strcmp(root, msg) == 0, "rank %d: '%s', rank 0: '%s'", rank, msg, root);
}

static rfx_status failing_next(rfx_source *src, rfx_block *out, int *done)
{
    (void)src;
    (void)out;
    (void)done;
    return rfx_set_error(RFX_EIO, "the disk failed");
}

static rfx_status ok_rewind(rfx_source *src)
{
    (void)src;
    return RFX_OK;
}

static int cancel_on_rank0(void *user, const char *stage, double fraction)
{
    (void)user;
    (void)stage;
    (void)fraction;
    return rank == 0;
}

static void test_preflight(void)
{
    const int last = size - 1;
    char msg[256];
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, NULL, &dist));
    const char cols[] = "x0,x1,x2,y";
    CHECK_OK(rfx_dist_agree(dist, "columns", cols, sizeof cols));
    CHECK_OK(rfx_dist_agree(dist, "nothing", NULL, 0));
    uint64_t seed = 42;
    CHECK_OK(rfx_dist_agree(dist, "seed", &seed, sizeof seed));
    if (size > 1) {
        /* a value that differs on the last rank */
        const char other[] = "x0,x1,x3,y";
        rfx_status st = rfx_dist_agree(dist, "columns", rank == last ? other : cols, sizeof cols);
        snprintf(msg, sizeof msg, "distributed: rank %d's columns differ from rank 0's", last);
        check_everywhere(st, RFX_EINVAL, msg);
        /* another length */
        st = rfx_dist_agree(dist, "columns", cols, rank == last ? 3 : sizeof cols);
        snprintf(msg, sizeof msg, "rank %d's columns differ from rank 0's (3 bytes against 11)",
                 last);
        check_everywhere(st, RFX_EINVAL, msg);
        seed = rank == last ? 43 : 42;
        st = rfx_dist_agree(dist, "seed", &seed, sizeof seed);
        snprintf(msg, sizeof msg, "rank %d's seed differs from rank 0's", last);
        check_everywhere(st, RFX_EINVAL, msg);
        /* another field */
        st = rfx_dist_agree(dist, rank == last ? "seed" : "columns", cols, sizeof cols);
        snprintf(msg, sizeof msg, "rank %d agrees on 'seed' where rank 0 agrees on 'columns'", last);
        check_everywhere(st, RFX_EINVAL, msg);
        /* another call */
        uint64_t a, b;
        st = rank == last ? rfx_dist_row_offsets(dist, 5, &a, &b)
                          : rfx_dist_agree(dist, "columns", cols, sizeof cols);
        snprintf(msg, sizeof msg, "rank %d is in rfx_dist_row_offsets where rank 0 is in "
                 "rfx_dist_agree", last);
        check_everywhere(st, RFX_EINVAL, msg);
        /* a local failure on one rank */
        st = rfx_dist_agree(dist, rank == last ? NULL : "columns", cols, sizeof cols);
        snprintf(msg, sizeof msg, "distributed: rank %d: distributed: agree: field is NULL", last);
        check_everywhere(st, RFX_EINVAL, msg);
        /* another feature map */
        rfx_features *f = make_features(32, 3, rank == last ? 8 : 7);
        st = rfx_dist_agree_features(dist, f);
        snprintf(msg, sizeof msg, "rank %d's feature map differs from rank 0's", last);
        check_everywhere(st, RFX_EINVAL, msg);
        rfx_features_free(f);
        /* statistics of another shape */
        rfx_stats *s = NULL;
        CHECK_OK(rfx_stats_create(rank == last ? 33 : 32, 1, &s));
        st = rfx_dist_stats_reduce(dist, s, 0);
        snprintf(msg, sizeof msg, "rank %d's statistics are D = 33, ny = 1; rank 0's D = 32", last);
        check_everywhere(st, RFX_EDIM, msg);
        rfx_stats_free(s);
        /* roots that differ, a root that is no rank */
        CHECK_OK(rfx_stats_create(32, 1, &s));
        st = rfx_dist_stats_reduce(dist, s, rank == last ? 0 : -1);
        snprintf(msg, sizeof msg, "rank %d passed root 0, rank 0 root -1", last);
        check_everywhere(st, RFX_EINVAL, msg);
        st = rfx_dist_stats_reduce(dist, s, size);
        snprintf(msg, sizeof msg, "rank 0: distributed: root %d is not a rank", size);
        check_everywhere(st, RFX_EINVAL, msg);
        rfx_stats_free(s);
        /* row counts past 2^64 - 1 */
        uint64_t fr = 0, tot = 0;
        st = rfx_dist_row_offsets(dist, UINT64_MAX / 2 + 1, &fr, &tot);
        check_everywhere(st, RFX_EOVERFLOW, "the ranks' rows pass 2^64 - 1 at rank 1");
        /* other parameters */
        rfx_dist_params p = rfx_dist_params_default();
        p.chunk_rows = rank == last ? 1000 : 65536;
        rfx_dist *other_d = NULL;
        st = rfx_dist_create(MPI_COMM_WORLD, &p, &other_d);
        snprintf(msg, sizeof msg, "rank %d's parameters differ from rank 0's", last);
        check_everywhere(st, RFX_EINVAL, msg);
        CHECK(other_d == NULL);
    }
    /* a bad parameter (every rank hears of rank 0's) */
    rfx_dist_params bad = rfx_dist_params_default();
    bad.deterministic = 2;
    rfx_dist *bad_d = NULL;
    check_everywhere(rfx_dist_create(MPI_COMM_WORLD, &bad, &bad_d), RFX_EINVAL,
                     "rank 0: dist.deterministic: must be 0 or 1, got 2");
    CHECK_STATUS(rfx_dist_create(MPI_COMM_WORLD, NULL, NULL), RFX_EINVAL);

    /* a source that fails on the last rank, both modes; a cancel on rank 0 */
    rfx_features *f = make_features(16, 3, 7);
    rfx_source bad_src = {failing_next, ok_rewind, NULL, NULL};
    const size_t rows = 300;
    double *X, *Y;
    make_data(rows, 3, 1, 0.0, &X, &Y);
    for (int mode = 0; mode < 2; mode++) {
        rfx_dist_params p = rfx_dist_params_default();
        p.deterministic = mode;
        p.chunk_rows = 100;
        rfx_dist *dd = NULL;
        CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, &p, &dd));
        rfx_source *mem = NULL;
        CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, rank == 0 ? rows : 0, 3),
                                          rfx_cmat_of(Y, rank == 0 ? rows : 0, 1), 50, &mem));
        rfx_stats *s = NULL;
        CHECK_OK(rfx_stats_create(16, 1, &s));
        rfx_status st = rfx_dist_stats_add_source(dd, s, f, rank == last ? &bad_src : mem,
                                                  rank == 0 ? 0 : rows, -1, NULL, NULL);
        snprintf(msg, sizeof msg, "distributed: rank %d: ", last);
        check_everywhere(st, RFX_EIO, msg);
        CHECK(strstr(rfx_last_error(), "the disk failed") != NULL);
        rfx_stats_free(s);
        CHECK_OK(rfx_stats_create(16, 1, &s));
        st = rfx_dist_stats_add_source(dd, s, f, mem, rank == 0 ? 0 : rows, -1, cancel_on_rank0,
                                       NULL);
        check_everywhere(st, RFX_ECANCELLED, "rank 0: ");
        /* statistics that are not empty */
        rfx_stats_free(s);
        CHECK_OK(rfx_stats_create(16, 1, &s));
        CHECK_OK(rfx_stats_add(s, f, rfx_cmat_of(X, 3, 3), rfx_cmat_of(Y, 3, 1)));
        st = rfx_dist_stats_add_source(dd, s, f, mem, rank == 0 ? 0 : rows, -1, NULL, NULL);
        check_everywhere(st, RFX_EINVAL, "the statistics must be empty (they hold 3 rows)");
        rfx_stats_free(s);
        if (mode == 1 && size > 1) {
            /* rows that do not tile: a gap, then a start off the chunks */
            rfx_source_free(mem);
            const size_t mine = rank == 0 ? 250 : rank == 1 ? 50 : 0;
            CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, mine, 3), rfx_cmat_of(Y, mine, 1), 0,
                                              &mem));
            CHECK_OK(rfx_stats_create(16, 1, &s));
            st = rfx_dist_stats_add_source(dd, s, f, mem, rank == 0 ? 0 : 260, -1, NULL, NULL);
            check_everywhere(st, RFX_EINVAL,
                             "rank 1's rows start at global row 260, but rank 0's end at 250");
            rfx_stats_free(s);
            CHECK_OK(rfx_stats_create(16, 1, &s));
            st = rfx_dist_stats_add_source(dd, s, f, mem, rank == 0 ? 0 : 250, -1, NULL, NULL);
            check_everywhere(st, RFX_EINVAL, "rank 1's rows start at global row 250, not on a "
                                             "chunk boundary (a multiple of chunk_rows = 100)");
            rfx_stats_free(s);
        }
        /* still in step: a good fit now */
        rfx_source_free(mem);
        CHECK_OK(rfx_source_memory_create(rfx_cmat_of(X, rank == 0 ? rows : 0, 3),
                                          rfx_cmat_of(Y, rank == 0 ? rows : 0, 1), 50, &mem));
        CHECK_OK(rfx_stats_create(16, 1, &s));
        CHECK_OK(rfx_dist_stats_add_source(dd, s, f, mem, rank == 0 ? 0 : rows, -1, NULL, NULL));
        CHECK(rfx_stats_rows(s) == rows);
        rfx_stats_free(s);
        rfx_source_free(mem);
        rfx_dist_free(dd);
    }
    rfx_features_free(f);
    free(X);
    free(Y);
    /* the handle is still good */
    CHECK_OK(rfx_dist_agree(dist, "columns", cols, sizeof cols));
    rfx_dist_free(dist);
    rfx_dist_free(NULL);
    CHECK(rfx_dist_rank(NULL) == -1 && rfx_dist_size(NULL) == 0);
}

/* ---- classification ----------------------------------------------------- */

/* A source over another that fails on its pass `fail_pass` (counted by
 * rewinds). */
typedef struct flaky {
    rfx_source *inner;
    int pass, fail_pass;
} flaky;

static rfx_status flaky_next(rfx_source *src, rfx_block *out, int *done)
{
    flaky *fl = src->state;
    if (fl->pass == fl->fail_pass) return rfx_set_error(RFX_EIO, "the file went away");
    return fl->inner->next(fl->inner, out, done);
}

static rfx_status flaky_rewind(rfx_source *src)
{
    flaky *fl = src->state;
    fl->pass++;
    return fl->inner->rewind(fl->inner);
}

static int cancel_third(void *user, const char *stage, double fraction)
{
    (void)stage;
    (void)fraction;
    return rank == 0 && ++*(int *)user == 3;
}

static void test_classify(void)
{
    const size_t n = 900, d = 2, D = 48;
    double *X, *Y;
    make_data(n, d + 1, 1, 0.0, &X, &Y);
    /* labels 0, 1, 2 by the target, and 7 for the last 120 rows only: the
     * last rank alone has class 7 */
    double *lab = malloc(n * sizeof *lab);
    for (size_t i = 0; i < n; i++) lab[i] = i >= n - 120 ? 7 : Y[i] < -0.3 ? 0 : Y[i] < 0.3 ? 1 : 2;
    rfx_features *f = make_features(D, d, 5);
    rfx_classify_params p = rfx_classify_params_default();
    p.multiclass = RFX_MULTICLASS_SOFTMAX;
    p.lambda = 1e-3;
    p.tol = 1e-10;
    p.max_iter = 5000;
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, NULL, &dist));
    size_t first, count;
    share(n, size >= 3 ? 1 : -1, &first, &count);
    const rfx_cmat Xall = {X, n, d, d + 1};
    rfx_source *src = NULL, *all = NULL;
    CHECK_OK(rfx_source_memory_create((rfx_cmat){X + first * (d + 1), count, d, d + 1},
                                      rfx_cmat_of(lab + first, count, 1), 100, &src));
    CHECK_OK(rfx_source_memory_create(Xall, rfx_cmat_of(lab, n, 1), 100, &all));
    rfx_model *m = NULL, *ref = NULL;
    rfx_classify_report rep, rref;
    CHECK_OK(rfx_dist_classify_fit(dist, f, src, &p, &m, &rep));
    CHECK_OK(rfx_classify_fit_source(f, all, &p, &ref, &rref));
    if (m && ref) {
        rfx_cmat W = rfx_model_weights(m), Wr = rfx_model_weights(ref);
        CHECK(W.rows == D && W.cols == 4 && Wr.cols == 4 && rep.n_classes == 4);
        double dw = 0;
        for (size_t i = 0; i < D * 4; i++) dw = fmax(dw, fabs(W.data[i] - Wr.data[i]));
        CHECK_MSG(dw < 1e-6, "rank %d: |dW| = %.3g", rank, dw);
        CHECK_NEAR(rep.objective / rref.objective, 1.0, 1e-10);
        CHECK(rep.converged);
        if (size == 1) /* one rank: rfx_classify_fit_source, bit for bit */
            CHECK(memcmp(W.data, Wr.data, D * 4 * sizeof *W.data) == 0);
        /* every rank: the same bits */
        double *w0 = malloc(D * 4 * sizeof *w0);
        memcpy(w0, W.data, D * 4 * sizeof *w0);
        MPI_Bcast(w0, (int)(D * 4), MPI_DOUBLE, 0, MPI_COMM_WORLD);
        CHECK(memcmp(w0, W.data, D * 4 * sizeof *w0) == 0);
        free(w0);
        if (rank == 0)
            printf("distributed softmax: %zu iterations, J = %.12g (one process %.12g), |dW| = "
                   "%.2g\n", rep.iterations, rep.objective, rref.objective, dw);
    }
    rfx_model_free(m);
    rfx_model_free(ref);
    m = NULL;
    char msg[256];
    const int last = size - 1;
    /* parameters that differ */
    rfx_classify_params q = p;
    rfx_status st;
    if (size > 1) {
        if (rank == last) q.lambda = 2e-3;
        st = rfx_dist_classify_fit(dist, f, src, &q, &m, NULL);
        snprintf(msg, sizeof msg, "rank %d's classification parameters differ from rank 0's",
                 last);
        check_everywhere(st, RFX_EINVAL, msg);
    }
    /* the last rank's source fails on its third pass, in the iterations */
    q = p;
    q.cache_bytes = 0;
    flaky fl = {src, 0, rank == last ? 3 : -1};
    rfx_source fs = {flaky_next, flaky_rewind, NULL, &fl};
    st = rfx_dist_classify_fit(dist, f, &fs, &q, &m, NULL);
    snprintf(msg, sizeof msg, "distributed: rank %d: classify source: the file went away", last);
    check_everywhere(st, RFX_EIO, msg);
    CHECK(m == NULL);
    /* rank 0 cancels at its third sum */
    int calls = 0;
    q = p;
    q.progress = cancel_third;
    q.progress_user = &calls;
    st = rfx_dist_classify_fit(dist, f, src, &q, &m, NULL);
    check_everywhere(st, RFX_ECANCELLED, "rank 0: cancelled by the progress callback");
    /* a rank with labels of two columns: its error everywhere */
    rfx_source *two = NULL;
    CHECK_OK(rfx_source_memory_create((rfx_cmat){X, 10, d, d + 1},
                                      rfx_cmat_of(X, 10, rank == last ? 2 : 1), 0, &two));
    st = rfx_dist_classify_fit(dist, f, two, &p, &m, NULL);
    snprintf(msg, sizeof msg, "rank %d: classify source: rows 0.. have 2 target columns", last);
    check_everywhere(st, RFX_EDIM, msg);
    rfx_source_free(two);
    /* still in step */
    CHECK_OK(rfx_dist_agree(dist, "done", NULL, 0));
    rfx_source_free(src);
    rfx_source_free(all);
    rfx_dist_free(dist);
    rfx_features_free(f);
    free(lab);
    free(X);
    free(Y);
}

/* The last rank comes 1.5 s late to a watchdog of 0.5 s. */
static void test_timeout(void)
{
    if (size < 2) return;
    const int last = size - 1;
    rfx_dist_params p = rfx_dist_params_default();
    p.timeout_seconds = 0.5;
    rfx_dist *dist = NULL;
    CHECK_OK(rfx_dist_create(MPI_COMM_WORLD, &p, &dist));
    if (rank == last) {
        struct timespec ts = {1, 500000000};
        nanosleep(&ts, NULL);
    }
    const double t0 = MPI_Wtime();
    rfx_status st = rfx_dist_agree(dist, "late", NULL, 0);
    const double waited = MPI_Wtime() - t0;
    char msg[256];
    CHECK_MSG(st == RFX_EIO, "rank %d: %d: %s", rank, (int)st, rfx_last_error());
    if (rank == last)
        snprintf(msg, sizeof msg, "distributed: no answer from rank 0 within 1 s (in "
                 "rfx_dist_agree)");
    else
        snprintf(msg, sizeof msg, "distributed: no answer from rank %d within 0.5 s (in "
                 "rfx_dist_agree)", last);
    CHECK_MSG(strcmp(rfx_last_error(), msg) == 0, "rank %d: '%s', not '%s'", rank,
              rfx_last_error(), msg);
    CHECK_MSG(waited < (rank == last ? 1.0 : 0.5) + 1.0, "rank %d waited %.2f s", rank, waited);
    /* spent: every call fails at once */
    uint64_t a, b;
    CHECK_STATUS(rfx_dist_row_offsets(dist, 1, &a, &b), RFX_EIO);
    CHECK(strstr(rfx_last_error(), "an earlier call failed") != NULL);
    rfx_dist_free(dist);
}

/* ---- a rank killed mid-run (tests/test_dist_kill.sh) -------------------- */

static int killed_run(int victim)
{
    const size_t n = 2000, d = 3, D = 64;
    double *X, *Y;
    make_data(n, d, 1, 0.0, &X, &Y);
    rfx_features *f = make_features(D, d, 7);
    rfx_dist *dist = NULL;
    rfx_stats *s = NULL;
    if (rfx_dist_create(MPI_COMM_WORLD, NULL, &dist) || rfx_stats_create(D, 1, &s)) return 1;
    size_t first, count;
    share(n, -1, &first, &count);
    rfx_stats_add(s, f, rfx_cmat_of(X + first * d, count, d), rfx_cmat_of(Y + first, count, 1));
    if (rank == victim) {
        fprintf(stderr, "rank %d: killing itself\n", rank);
        fflush(stderr);
        raise(SIGKILL);
    }
    rfx_status st = rfx_dist_stats_reduce(dist, s, 0);
    fprintf(stderr, "rank %d: reduce returned %d: %s\n", rank, (int)st, rfx_last_error());
    return 1; /* never reached with a victim: mpirun ends the job */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *kill = getenv("RFX_TEST_DIST_KILL");
    if (kill) {
        int rc = killed_run(atoi(kill));
        MPI_Finalize();
        return rc;
    }
    if (size > 8) {
        if (rank == 0) fprintf(stderr, "test_dist: at most 8 ranks\n");
        MPI_Finalize();
        return 1;
    }
    RUN(test_tree_shapes);
    RUN(test_fast);
    RUN(test_deterministic);
    RUN(test_deterministic_subblocks);
    RUN(test_preflight);
    RUN(test_classify);
    RUN(test_timeout);
    int failures = rfx_test_failures, checks = rfx_test_checks, all_failures = 0, all_checks = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_dist (%d ranks): %d passed, %d failed\n", size, all_checks - all_failures,
               all_failures);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
