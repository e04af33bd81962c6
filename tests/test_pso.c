/* SPDX-License-Identifier: BSD-3-Clause */
/* Particle swarm optimisation (rfx/projection.h) on functions with known
 * minima:
 *  - a shifted sphere (minimum 0 at c), gbest and ring topologies;
 *  - Rosenbrock in d = 5 on [-5, 10]^5 (minimum 0 at (1, .., 1)) and
 *    Rastrigin in d = 3 on [-5.12, 5.12]^3 (minimum 0 at 0), fixed seeds;
 *  - 1-D functions whose minimum lies on a bound: found exactly;
 *  - the reported value is the objective at the reported point, the history
 *    is non-increasing and ends at it, evaluations = n (iterations + 1);
 *  - bitwise identical results for 1 and 2 threads and serial evaluation;
 *  - x0 as particle 0, stagnation stop, NaN values, objective failures,
 *    cancellation (nothing written), and every parameter validated. */
#include "internal.h"
#include "rfx/projection.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PI 3.14159265358979323846

/* ---- objectives --------------------------------------------------------- */

static rfx_status sphere(void *user, const double *x, size_t d, double *value)
{
    const double *c = user;
    double s = 0;
    for (size_t i = 0; i < d; i++) s += (x[i] - c[i]) * (x[i] - c[i]);
    *value = s;
    return RFX_OK;
}

static rfx_status rosenbrock(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    double s = 0;
    for (size_t i = 0; i + 1 < d; i++) {
        double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
        s += 100 * a * a + b * b;
    }
    *value = s;
    return RFX_OK;
}

static rfx_status rastrigin(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    double s = 10.0 * (double)d;
    for (size_t i = 0; i < d; i++) s += x[i] * x[i] - 10 * cos(2 * PI * x[i]);
    *value = s;
    return RFX_OK;
}

/* (x - 3)^2 on [-1, 2]: minimum 1 at the upper bound */
static rfx_status parabola_1d(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    (void)d;
    *value = (x[0] - 3) * (x[0] - 3);
    return RFX_OK;
}

/* Counts calls (serial objectives only). */
typedef struct counter {
    size_t calls, fail_at;
    double first[4];
    size_t d;
} counter;

static rfx_status counted_sphere(void *user, const double *x, size_t d, double *value)
{
    counter *c = user;
    if (c->calls == 0) memcpy(c->first, x, d * sizeof(double));
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) return RFX_ENUMERIC;
    double s = 0;
    for (size_t i = 0; i < d; i++) s += x[i] * x[i];
    *value = s;
    return RFX_OK;
}

static rfx_status constant(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    (void)x;
    (void)d;
    *value = 1.0;
    return RFX_OK;
}

static rfx_status always_nan(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    (void)x;
    (void)d;
    *value = NAN;
    return RFX_OK;
}

/* NaN left of 0, x^2 + 1 right of it: NaN must never become the best. */
static rfx_status half_nan(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    (void)d;
    *value = x[0] < 0 ? NAN : x[0] * x[0] + 1;
    return RFX_OK;
}

/* A thread-safe objective that fails with an rfx error for x[0] > 0. */
static rfx_status failing(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    (void)d;
    if (x[0] > 0) return rfx__error(RFX_EDIM, "marker: x[0] = %g too large", x[0]);
    *value = x[0] * x[0];
    return RFX_OK;
}

/* A slower, thread-safe objective that records which threads called it. */
static volatile int g_other_thread;
static rfx_status busy_sphere(void *user, const double *x, size_t d, double *value)
{
    (void)user;
    volatile double sink = 0;
    for (int rep = 0; rep < 2000; rep++) sink = sink + x[rep % d];
    double s = 0;
    for (size_t i = 0; i < d; i++) s += (x[i] - 0.25) * (x[i] - 0.25);
#ifdef _OPENMP
    if (omp_get_thread_num() != 0) g_other_thread = 1;
#endif
    *value = s + 0.1 * sin(5 * x[0]);
    return RFX_OK;
}

static double max_abs_diff(const double *a, const double *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++) w = fmax(w, fabs(a[i] - b[i]));
    return w;
}

/* Report, history and point agree with each other and with the objective. */
static void check_consistent(rfx_pso_objective fn, void *user, const rfx_pso_params *p, size_t d,
                             const double *x, const double *hist, const rfx_pso_report *r)
{
    double v = 0;
    CHECK_OK(fn(user, x, d, &v));
    CHECK(v == r->value);
    CHECK(hist[r->iterations] == r->value);
    for (size_t t = 1; t <= r->iterations; t++) CHECK(hist[t] <= hist[t - 1]);
    CHECK(r->evaluations == r->n_particles * (r->iterations + 1));
    for (size_t j = 0; j < d; j++) CHECK(x[j] >= p->lower[j] && x[j] <= p->upper[j]);
}

/* ---- tests -------------------------------------------------------------- */

static void test_sphere(void)
{
    const double c[4] = {1.0, -2.0, 0.5, 3.0};
    const double lo[4] = {-5, -5, -5, -5}, hi[4] = {5, 5, 5, 5};
    for (int topo = 0; topo < 2; topo++) {
        rfx_pso_params p = rfx_pso_params_default();
        p.lower = lo;
        p.upper = hi;
        p.seed = 3;
        p.topology = (rfx_pso_topology)topo;
        p.max_iter = 400;
        double x[4], hist[401];
        rfx_pso_report r;
        CHECK_OK(rfx_pso_minimize(&p, 4, sphere, (void *)c, x, hist, &r));
        CHECK(r.n_particles == 14); /* 10 + floor(2 sqrt(4)) */
        CHECK(r.iterations == 400 && r.stop == RFX_PSO_STOP_MAX_ITER);
        CHECK_MSG(r.value < 1e-12, "%s: sphere minimum %g", topo ? "ring" : "gbest", r.value);
        CHECK(max_abs_diff(x, c, 4) < 1e-6);
        check_consistent(sphere, (void *)c, &p, 4, x, hist, &r);
        printf("  sphere d=4 %s: f = %.3g after %zu evaluations\n", topo ? "ring " : "gbest",
               r.value, r.evaluations);
    }
}

static void test_rosenbrock(void)
{
    double lo[5], hi[5], x[5], hist[3001];
    for (int j = 0; j < 5; j++) {
        lo[j] = -5;
        hi[j] = 10;
    }
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = lo;
    p.upper = hi;
    p.n_particles = 20;
    p.max_iter = 3000;
    p.seed = 6;
    rfx_pso_report r;
    CHECK_OK(rfx_pso_minimize(&p, 5, rosenbrock, NULL, x, hist, &r));
    CHECK_MSG(r.value < 1e-4, "rosenbrock minimum %g", r.value);
    for (int j = 0; j < 5; j++) CHECK_NEAR(x[j], 1.0, 0.05);
    CHECK(r.evaluations == 20 * 3001);
    check_consistent(rosenbrock, NULL, &p, 5, x, hist, &r);
    printf("  rosenbrock d=5 seed 6: f = %.3g after %zu evaluations\n", r.value, r.evaluations);
}

static void test_rastrigin(void)
{
    double lo[3] = {-5.12, -5.12, -5.12}, hi[3] = {5.12, 5.12, 5.12}, x[3], hist[301];
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = lo;
    p.upper = hi;
    p.n_particles = 40;
    p.max_iter = 300;
    p.seed = 1;
    rfx_pso_report r;
    CHECK_OK(rfx_pso_minimize(&p, 3, rastrigin, NULL, x, hist, &r));
    CHECK_MSG(r.value < 1e-6, "rastrigin minimum %g", r.value);
    for (int j = 0; j < 3; j++) CHECK(fabs(x[j]) < 1e-4);
    check_consistent(rastrigin, NULL, &p, 3, x, hist, &r);
    printf("  rastrigin d=3 seed 1: f = %.3g after %zu evaluations\n", r.value, r.evaluations);
}

static void test_bound_minimum(void)
{
    /* (x - 3)^2 on [-1, 2]: the boundary rule puts particles exactly on 2 */
    double lo = -1, hi = 2, x = 0, hist[101];
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = &lo;
    p.upper = &hi;
    p.max_iter = 100;
    rfx_pso_report r;
    CHECK_OK(rfx_pso_minimize(&p, 1, parabola_1d, NULL, &x, hist, &r));
    CHECK(x == 2.0);
    CHECK(r.value == 1.0);
    CHECK(r.n_particles == 12); /* 10 + floor(2 sqrt(1)) */
    check_consistent(parabola_1d, NULL, &p, 1, &x, hist, &r);
    /* x^2 on [0.5, 4] (the sphere about 0): the lower bound */
    double c0 = 0, lo2 = 0.5, hi2 = 4;
    p.lower = &lo2;
    p.upper = &hi2;
    p.seed = 11;
    CHECK_OK(rfx_pso_minimize(&p, 1, sphere, &c0, &x, hist, &r));
    CHECK(x == 0.5);
    CHECK(r.value == 0.25);
}

static void test_threads(void)
{
    double lo[6], hi[6];
    for (int j = 0; j < 6; j++) {
        lo[j] = -1;
        hi[j] = 1 + j;
    }
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = lo;
    p.upper = hi;
    p.max_iter = 60;
    p.seed = 99;
    p.topology = RFX_PSO_TOPOLOGY_RING;
    double x1[6], x2[6], x0[6], h1[61], h2[61], h0[61];
    rfx_pso_report r1, r2, r0;
    p.thread_safe = 1;
    p.n_threads = 1;
    CHECK_OK(rfx_pso_minimize(&p, 6, busy_sphere, NULL, x1, h1, &r1));
    g_other_thread = 0;
    p.n_threads = 2;
    CHECK_OK(rfx_pso_minimize(&p, 6, busy_sphere, NULL, x2, h2, &r2));
#ifdef _OPENMP
    CHECK_MSG(g_other_thread, "the evaluations never ran on a second thread");
#endif
    p.thread_safe = 0;
    CHECK_OK(rfx_pso_minimize(&p, 6, busy_sphere, NULL, x0, h0, &r0));
    CHECK(memcmp(x1, x2, sizeof x1) == 0 && memcmp(x1, x0, sizeof x1) == 0);
    CHECK(memcmp(h1, h2, sizeof h1) == 0 && memcmp(h1, h0, sizeof h1) == 0);
    CHECK(r1.value == r2.value && r1.value == r0.value);
    CHECK(r1.evaluations == r2.evaluations && r1.iterations == r2.iterations);
    /* another seed gives another search */
    p.seed = 100;
    CHECK_OK(rfx_pso_minimize(&p, 6, busy_sphere, NULL, x0, h0, &r0));
    CHECK(memcmp(h1, h0, sizeof h1) != 0);
}

static void test_x0_and_stagnation(void)
{
    double lo[2] = {-3, -3}, hi[2] = {3, 3}, start[2] = {0.0, 0.0}, x[2], hist[51];
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = lo;
    p.upper = hi;
    p.max_iter = 1;
    /* particle 0 is evaluated first, at x0; the minimum 0 is there */
    counter c;
    memset(&c, 0, sizeof c);
    p.x0 = start;
    rfx_pso_report r;
    CHECK_OK(rfx_pso_minimize(&p, 2, counted_sphere, &c, x, hist, &r));
    CHECK(c.first[0] == 0.0 && c.first[1] == 0.0);
    CHECK(hist[0] == 0.0 && r.value == 0.0 && x[0] == 0.0 && x[1] == 0.0);
    CHECK(c.calls == r.evaluations && r.evaluations == 2 * r.n_particles);
    p.x0 = NULL;
    memset(&c, 0, sizeof c);
    CHECK_OK(rfx_pso_minimize(&p, 2, counted_sphere, &c, x, hist, &r));
    CHECK(c.first[0] != 0.0 && hist[0] > 0.0);

    /* a flat function never improves: patience iterations, then stop */
    p.max_iter = 50;
    p.patience = 5;
    CHECK_OK(rfx_pso_minimize(&p, 2, constant, NULL, x, hist, &r));
    CHECK(r.stop == RFX_PSO_STOP_STAGNATION && r.iterations == 5 && r.value == 1.0);
    /* every improvement of the sphere is below tol = 1e300 */
    p.tol = 1e300;
    p.patience = 3;
    double c0[2] = {0, 0};
    CHECK_OK(rfx_pso_minimize(&p, 2, sphere, c0, x, hist, &r));
    CHECK(r.stop == RFX_PSO_STOP_STAGNATION && r.iterations == 3);
    /* tol 0: the sphere keeps improving for a while */
    p.tol = 0;
    p.patience = 10;
    CHECK_OK(rfx_pso_minimize(&p, 2, sphere, c0, x, hist, &r));
    CHECK(r.iterations > 10);
    check_consistent(sphere, c0, &p, 2, x, hist, &r);
}

static int n_progress;
static double last_fraction;
static int cancel_after(void *user, const char *stage, double fraction)
{
    (void)user;
    CHECK(strcmp(stage, "pso") == 0);
    CHECK(fraction >= last_fraction && fraction <= 1.0);
    last_fraction = fraction;
    return ++n_progress >= 4;
}

static void test_failures(void)
{
    double lo[2] = {-1, -1}, hi[2] = {1, 1};
    const double sentinel = 12345.0;
    double x[2] = {sentinel, sentinel}, hist[21];
    for (int i = 0; i < 21; i++) hist[i] = sentinel;
    rfx_pso_report r;
    memset(&r, 0, sizeof r);
    r.value = sentinel;
    rfx_pso_params p = rfx_pso_params_default();
    p.lower = lo;
    p.upper = hi;
    p.max_iter = 20;

    /* cancellation: stage "pso", fractions 0, 1/20, 2/20, 3/20; nothing written */
    p.progress = cancel_after;
    n_progress = 0;
    last_fraction = 0;
    double c0[2] = {0, 0};
    CHECK_STATUS(rfx_pso_minimize(&p, 2, sphere, c0, x, hist, &r), RFX_ECANCELLED);
    CHECK(strstr(rfx_last_error(), "cancelled") != NULL);
    CHECK(n_progress == 4);
    CHECK_NEAR(last_fraction, 3.0 / 20, 1e-15);
    CHECK(x[0] == sentinel && x[1] == sentinel && hist[0] == sentinel && r.value == sentinel);
    p.progress = NULL;

    /* the objective's status stops the search, serially at the failing call */
    counter c;
    memset(&c, 0, sizeof c);
    c.fail_at = 30;
    CHECK_STATUS(rfx_pso_minimize(&p, 2, counted_sphere, &c, x, hist, &r), RFX_ENUMERIC);
    CHECK(c.calls == 30);
    CHECK(strstr(rfx_last_error(), "iteration 2, particle 5") != NULL); /* 12 calls a round */
    CHECK(x[0] == sentinel && hist[0] == sentinel && r.value == sentinel);

    /* concurrently: the first failing particle's status and message */
    p.thread_safe = 1;
    p.n_threads = 2;
    double lo1[2] = {-1, -1}, hi1[2] = {1, 1};
    p.lower = lo1;
    p.upper = hi1;
    CHECK_STATUS(rfx_pso_minimize(&p, 2, failing, NULL, x, hist, &r), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "marker: x[0] = ") != NULL);
    CHECK(strstr(rfx_last_error(), "pso: the objective failed at iteration") != NULL);
    p.thread_safe = 0;
    p.n_threads = 0;

    /* NaN counts as +infinity */
    CHECK_STATUS(rfx_pso_minimize(&p, 2, always_nan, NULL, x, hist, &r), RFX_ENUMERIC);
    CHECK(strstr(rfx_last_error(), "no value below +infinity") != NULL);
    CHECK(x[0] == sentinel);
    CHECK_OK(rfx_pso_minimize(&p, 2, half_nan, NULL, x, hist, &r));
    CHECK(x[0] >= 0 && r.value >= 1.0 && r.value < 1.01);
}

#define CHECK_ERR(call, status, needle)                                                    \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MSG(strstr(rfx_last_error(), needle) != NULL, "message '%s' lacks '%s'",    \
                  rfx_last_error(), needle);                                               \
    } while (0)

#define PSO_ERR(setup, needle)                                                             \
    do {                                                                                   \
        rfx_pso_params p = base;                                                           \
        setup;                                                                             \
        CHECK_ERR(rfx_pso_minimize(&p, 2, sphere, c0, x, NULL, NULL), RFX_EINVAL, needle); \
    } while (0)

static void test_errors(void)
{
    double lo[2] = {-1, -1}, hi[2] = {1, 1}, c0[2] = {0, 0}, x[2];
    double bad_lo[2] = {-1, NAN}, bad_hi[2] = {1, -1}, inf_hi[2] = {1, INFINITY};
    double huge_lo[2] = {-1, -1.5e308}, huge_hi[2] = {1, 1.5e308};
    double out_x0[2] = {0, 1.5};
    rfx_pso_params base = rfx_pso_params_default();
    base.lower = lo;
    base.upper = hi;
    base.max_iter = 5;
    CHECK_ERR(rfx_pso_minimize(NULL, 2, sphere, c0, x, NULL, NULL), RFX_EINVAL, "params");
    CHECK_ERR(rfx_pso_minimize(&base, 0, sphere, c0, x, NULL, NULL), RFX_EINVAL, "d must be");
    CHECK_ERR(rfx_pso_minimize(&base, 2, NULL, c0, x, NULL, NULL), RFX_EINVAL, "objective");
    CHECK_ERR(rfx_pso_minimize(&base, 2, sphere, c0, NULL, NULL, NULL), RFX_EINVAL, "x_best");
    PSO_ERR(p.max_iter = 0, "pso.max_iter");
    PSO_ERR(p.inertia = -0.1, "pso.inertia");
    PSO_ERR(p.inertia = 1.5, "pso.inertia");
    PSO_ERR(p.inertia = NAN, "pso.inertia");
    PSO_ERR(p.c1 = -1, "pso.c1");
    PSO_ERR(p.c1 = INFINITY, "pso.c1");
    PSO_ERR(p.c2 = NAN, "pso.c2");
    PSO_ERR((p.c1 = 0, p.c2 = 0), "pso.c1, pso.c2");
    PSO_ERR(p.lower = NULL, "pso.lower");
    PSO_ERR(p.upper = NULL, "pso.upper");
    PSO_ERR(p.lower = bad_lo, "pso.lower[1]");
    PSO_ERR(p.upper = bad_hi, "pso.upper[1]: must be > lower[1]");
    PSO_ERR(p.upper = inf_hi, "pso.upper[1]: must be finite");
    PSO_ERR((p.lower = huge_lo, p.upper = huge_hi), "overflows");
    PSO_ERR(p.v_max = 0, "pso.v_max");
    PSO_ERR(p.v_max = 1.5, "pso.v_max");
    PSO_ERR(p.x0 = out_x0, "pso.x0[1]");
    PSO_ERR(p.topology = (rfx_pso_topology)5, "pso.topology");
    PSO_ERR(p.tol = -1, "pso.tol");
    PSO_ERR(p.tol = NAN, "pso.tol");
    PSO_ERR(p.thread_safe = 2, "pso.thread_safe");
    PSO_ERR(p.n_threads = -1, "pso.n_threads");
    /* the defaults need only the bounds; one particle is a valid swarm */
    rfx_pso_params p = base;
    p.n_particles = 1;
    rfx_pso_report r;
    CHECK_OK(rfx_pso_minimize(&p, 2, sphere, c0, x, NULL, &r));
    CHECK(r.n_particles == 1 && r.evaluations == 6);
    rfx_pso_params d = rfx_pso_params_default();
    CHECK(d.n_particles == 0 && d.max_iter == 200 && d.inertia == 0.7298 && d.c1 == 1.49618 &&
          d.c2 == 1.49618 && d.v_max == 0.5 && d.lower == NULL && d.upper == NULL &&
          d.x0 == NULL && d.topology == RFX_PSO_TOPOLOGY_GLOBAL && d.patience == 0 &&
          d.tol == 0 && d.thread_safe == 0 && d.n_threads == 0 && d.progress == NULL);
}

/* rfx__failure, under every parallel loop of the library: the failure of
 * the lowest index wins whatever the schedule, and its message, set on a
 * worker thread, reaches the caller's thread. */
static void test_failure_capture(void)
{
    for (int rep = 0; rep < 20; rep++) {
        rfx__failure fail;
        rfx__failure_init(&fail);
        CHECK(rfx__failure_raise(&fail) == RFX_OK);
        rfx_clear_error();
#pragma omp parallel for num_threads(2) schedule(dynamic, 1)
        for (size_t i = 0; i < 200; i++) {
            rfx_status st = RFX_OK;
            if (i == 37 || i == 150) st = rfx__error(RFX_ENUMERIC, "worker failure %zu", i);
            if (i == 160) st = rfx__error(RFX_EINVAL, "another failure %zu", i);
            rfx__failure_note(&fail, i, st);
        }
        CHECK(fail.index == 37);
        CHECK_STATUS(rfx__failure_raise(&fail), RFX_ENUMERIC);
        CHECK_MSG(strcmp(rfx_last_error(), "worker failure 37") == 0, "%s", rfx_last_error());
    }
}

int main(void)
{
    RFX_TEST_RUN(test_failure_capture);
    RFX_TEST_RUN(test_sphere);
    RFX_TEST_RUN(test_rosenbrock);
    RFX_TEST_RUN(test_rastrigin);
    RFX_TEST_RUN(test_bound_minimum);
    RFX_TEST_RUN(test_threads);
    RFX_TEST_RUN(test_x0_and_stagnation);
    RFX_TEST_RUN(test_failures);
    RFX_TEST_RUN(test_errors);
    return rfx_test_finish("test_pso");
}
