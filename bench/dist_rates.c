/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dist_rates - the measured inputs of docs/SCALING.md, under mpirun:
 *
 *   mpirun -np 2 build/bench/rfx_bench_dist_rates [LABEL]
 *
 *  1. MPI_Allreduce (sum, in place) of the packed statistics of D features
 *     and one target (rfx_stats_packed_size: D (D + 1) / 2 + 2 D + 5
 *     doubles) for D = 256 .. 4096: the best of 10 after a warm-up, as an
 *     algorithm bandwidth (bytes / t) and a bus bandwidth (2 (P - 1) / P
 *     bytes / t, what a ring moves per rank), and the latency of an 8-byte
 *     allreduce (the best of 200);
 *  2. rfx_dist_stats_reduce at the same sizes (pack, check-in, allreduce,
 *     unpack): the library's own overhead on top of (1);
 *  3. on rank 0 alone, the other ranks idle: rfx_stats_add (the transform
 *     and the tiled SYRK) at D = 1024 and 2048 on d = 20 inputs, as rows
 *     per second and as GFLOP/s counting n D^2 flops (the SYRK's), and
 *     rfx_ridge_solve (the O(D^3) solve on one rank), the best of 5;
 *  4. rfx_dist_stats_add_source at D = 1024 over every rank's rows, fast
 *     against deterministic mode (chunk_rows 4096), one thread per rank,
 *     the best of 4.
 * Best-of timings, since the machine may be shared.
 * Prints a markdown report (bench/results/dist_rates.md holds one). LABEL
 * names the transport in the report ("tcp loopback", "shared memory").
 * Not a test: it times, it does not check.
 */
#include <rfx.h>
#include <rfx/dist.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

/* Wait for the other ranks without spinning (MPI_Barrier polls a core). */
static void idle_barrier(void)
{
    MPI_Request rq;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    while (!done) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

static void die(const char *what)
{
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, rfx_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static double *make_rows(size_t n, size_t d, size_t offset, double **Y)
{
    double *X = malloc(n * d * sizeof *X);
    *Y = malloc(n * sizeof **Y);
    if (!X || !*Y) die("malloc");
    for (size_t i = 0; i < n; i++) {
        double y = 0;
        for (size_t j = 0; j < d; j++) {
            X[i * d + j] = 2 * sin(0.37 * (double)((i + offset) * d + j) + (double)j);
            y += sin(X[i * d + j]);
        }
        (*Y)[i] = y;
    }
    return X;
}

static rfx_features *make_features(size_t D, size_t d, int threads)
{
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.gamma = 1.0 / (2.0 * (double)d);
    p.n_threads = threads;
    rfx_features *f = NULL;
    if (rfx_features_create(&p, d, &f)) die("rfx_features_create");
    return f;
}

static void bench_allreduce(void)
{
    /* latency */
    double one = 1, best = 1e30;
    for (int r = 0; r < 200; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (t < best) best = t;
    }
    if (rank == 0) {
        printf("| 8-byte MPI_Allreduce latency | %.1f us |\n\n", best * 1e6);
        printf("| D | doubles | MB | MPI_Allreduce s | algorithm GB/s | bus GB/s | "
               "rfx_dist_stats_reduce s |\n|---|---|---|---|---|---|---|\n");
    }
    rfx_dist *dist = NULL;
    if (rfx_dist_create(MPI_COMM_WORLD, NULL, &dist)) die("rfx_dist_create");
    for (size_t D = 256; D <= 4096; D *= 2) {
        rfx_stats *s = NULL;
        if (rfx_stats_create(D, 1, &s)) die("rfx_stats_create");
        const size_t L = rfx_stats_packed_size(s);
        double *v = calloc(L, sizeof *v);
        if (!v) die("calloc");
        double ta = 1e30, tr = 1e30;
        for (int r = 0; r < 11; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(MPI_IN_PLACE, v, (int)L, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r > 0 && t < ta) ta = t;
        }
        for (int r = 0; r < 11; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rfx_dist_stats_reduce(dist, s, -1)) die("rfx_dist_stats_reduce");
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r > 0 && t < tr) tr = t;
        }
        const double bytes = 8.0 * (double)L;
        if (rank == 0)
            printf("| %zu | %zu | %.1f | %.4f | %.2f | %.2f | %.4f |\n", D, L, bytes / 1e6, ta,
                   bytes / ta / 1e9, 2.0 * (size - 1) / size * bytes / ta / 1e9, tr);
        free(v);
        rfx_stats_free(s);
    }
    rfx_dist_free(dist);
}

static void bench_syrk(int threads)
{
    const size_t d = 20;
    if (rank == 0)
        printf("\n| D | rows | rfx_stats_add s | rows/s | GFLOP/s (n D^2) | rfx_ridge_solve s |\n"
               "|---|---|---|---|---|---|\n");
    for (size_t D = 1024; D <= 2048; D *= 2) {
        const size_t n = D == 1024 ? 40000 : 16000;
        if (rank == 0) {
            double *Y, *X = make_rows(n, d, 0, &Y);
            rfx_features *f = make_features(D, d, threads);
            double best = 1e30, solve = 1e30;
            for (int r = 0; r < 5; r++) {
                rfx_stats *s = NULL;
                if (rfx_stats_create(D, 1, &s)) die("rfx_stats_create");
                double t0 = MPI_Wtime();
                if (rfx_stats_add(s, f, rfx_cmat_of(X, n, d), rfx_cmat_of(Y, n, 1)))
                    die("rfx_stats_add");
                double t = MPI_Wtime() - t0;
                if (t < best) best = t;
                rfx_ridge_params rp = rfx_ridge_params_default();
                rp.lambda = 1e-3;
                rp.n_threads = threads;
                rfx_model *m = NULL;
                t0 = MPI_Wtime();
                if (rfx_ridge_solve(f, s, &rp, &m)) die("rfx_ridge_solve");
                t = MPI_Wtime() - t0;
                if (t < solve) solve = t;
                rfx_model_free(m);
                rfx_stats_free(s);
            }
            printf("| %zu | %zu | %.3f | %.0f | %.1f | %.3f |\n", D, n, best, (double)n / best,
                   (double)n * (double)D * (double)D / best / 1e9, solve);
            fflush(stdout);
            rfx_features_free(f);
            free(X);
            free(Y);
        }
        idle_barrier();
    }
}

/* one thread per rank: the ranks share this machine's cores */
static void bench_modes(void)
{
    const int threads = 1;
    const size_t d = 20, D = 1024, per_rank = 16384;
    double *Y, *X = make_rows(per_rank, d, (size_t)rank * per_rank, &Y);
    rfx_features *f = make_features(D, d, threads);
    if (rank == 0)
        printf("\n| rfx_dist_stats_add_source, D = %zu, %zu rows per rank | s |\n|---|---|\n", D,
               per_rank);
    for (int det = 0; det < 2; det++) {
        rfx_dist_params p = rfx_dist_params_default();
        p.deterministic = det;
        p.chunk_rows = 4096;
        rfx_dist *dist = NULL;
        if (rfx_dist_create(MPI_COMM_WORLD, &p, &dist)) die("rfx_dist_create");
        double best = 1e30;
        for (int r = 0; r < 4; r++) {
            rfx_source *src = NULL;
            rfx_stats *s = NULL;
            if (rfx_source_memory_create(rfx_cmat_of(X, per_rank, d), rfx_cmat_of(Y, per_rank, 1),
                                         1000, &src) ||
                rfx_stats_create(D, 1, &s))
                die("setup");
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rfx_dist_stats_add_source(dist, s, f, src, (uint64_t)rank * per_rank, 0, NULL,
                                          NULL))
                die("rfx_dist_stats_add_source");
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t < best) best = t;
            rfx_stats_free(s);
            rfx_source_free(src);
        }
        if (rank == 0) printf("| %s | %.3f |\n", det ? "deterministic" : "fast", best);
        rfx_dist_free(dist);
    }
    rfx_features_free(f);
    free(X);
    free(Y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *label = argc > 1 ? argv[1] : "as configured";
    const char *env = getenv("OMP_NUM_THREADS");
    const int threads = env ? atoi(env) : 0;
    if (rank == 0) {
        printf("## rfx_bench_dist_rates: %d ranks, transport: %s, OMP_NUM_THREADS=%s, "
               "instruction set %s\n\n| measure | value |\n|---|---|\n",
               size, label, env ? env : "(unset)", rfx_isa_name(rfx_isa_active()));
    }
    bench_allreduce();
    bench_syrk(threads);
    bench_modes();
    MPI_Finalize();
    return 0;
}
