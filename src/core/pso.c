/* SPDX-License-Identifier: BSD-3-Clause */
/* Particle swarm optimisation (include/rfx/projection.h has the update rule
 * and its references). Synchronous gbest / lbest PSO over a box:
 * every particle of an iteration moves against the attractors of the
 * previous one, then all are evaluated (concurrently when the objective is
 * thread-safe), then the personal and neighbourhood bests are updated on
 * the calling thread in particle order. Each particle's random numbers come
 * from its own Philox stream keyed by (seed, particle, iteration), so the
 * order in which threads evaluate particles never changes a bit. */
#include "internal.h"
#include "rfx/projection.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

rfx_pso_params rfx_pso_params_default(void)
{
    rfx_pso_params p;
    memset(&p, 0, sizeof p);
    p.n_particles = 0;
    p.max_iter = 200;
    p.inertia = 0.7298;
    p.c1 = 1.49618;
    p.c2 = 1.49618;
    p.lower = NULL;
    p.upper = NULL;
    p.v_max = 0.5;
    p.x0 = NULL;
    p.seed = 0;
    p.topology = RFX_PSO_TOPOLOGY_GLOBAL;
    p.patience = 0;
    p.tol = 0;
    p.thread_safe = 0;
    p.n_threads = 0;
    p.progress = NULL;
    p.progress_user = NULL;
    return p;
}

static rfx_status check_params(const rfx_pso_params *p, size_t d)
{
    if (!p) return rfx__error(RFX_EINVAL, "pso: params is NULL");
    if (d == 0) return rfx__error(RFX_EINVAL, "pso: d must be >= 1, got 0");
    if (p->max_iter == 0) return rfx__error(RFX_EINVAL, "pso.max_iter: must be >= 1, got 0");
    if (!(p->inertia >= 0 && p->inertia <= 1))
        return rfx__error(RFX_EINVAL, "pso.inertia: must be in [0, 1], got %g", p->inertia);
    if (!(p->c1 >= 0 && isfinite(p->c1)))
        return rfx__error(RFX_EINVAL, "pso.c1: must be >= 0 and finite, got %g", p->c1);
    if (!(p->c2 >= 0 && isfinite(p->c2)))
        return rfx__error(RFX_EINVAL, "pso.c2: must be >= 0 and finite, got %g", p->c2);
    if (!(p->c1 + p->c2 > 0))
        return rfx__error(RFX_EINVAL, "pso.c1, pso.c2: at least one must be > 0");
    if (!p->lower) return rfx__error(RFX_EINVAL, "pso.lower: is NULL (d bounds are required)");
    if (!p->upper) return rfx__error(RFX_EINVAL, "pso.upper: is NULL (d bounds are required)");
    for (size_t j = 0; j < d; j++) {
        if (!isfinite(p->lower[j]))
            return rfx__error(RFX_EINVAL, "pso.lower[%zu]: must be finite, got %g", j,
                              p->lower[j]);
        if (!isfinite(p->upper[j]))
            return rfx__error(RFX_EINVAL, "pso.upper[%zu]: must be finite, got %g", j,
                              p->upper[j]);
        if (!(p->upper[j] > p->lower[j]))
            return rfx__error(RFX_EINVAL, "pso.upper[%zu]: must be > lower[%zu] = %g, got %g", j,
                              j, p->lower[j], p->upper[j]);
        if (!isfinite(p->upper[j] - p->lower[j]))
            return rfx__error(RFX_EINVAL, "pso.upper[%zu] - pso.lower[%zu] overflows", j, j);
    }
    if (!(p->v_max > 0 && p->v_max <= 1))
        return rfx__error(RFX_EINVAL, "pso.v_max: must be in (0, 1], got %g", p->v_max);
    if (p->x0) {
        for (size_t j = 0; j < d; j++)
            if (!(p->x0[j] >= p->lower[j] && p->x0[j] <= p->upper[j]))
                return rfx__error(RFX_EINVAL, "pso.x0[%zu]: must be in [%g, %g], got %g", j,
                                  p->lower[j], p->upper[j], p->x0[j]);
    }
    if (p->topology != RFX_PSO_TOPOLOGY_GLOBAL && p->topology != RFX_PSO_TOPOLOGY_RING)
        return rfx__error(RFX_EINVAL, "pso.topology: %d is not an rfx_pso_topology",
                          (int)p->topology);
    if (!(p->tol >= 0 && isfinite(p->tol)))
        return rfx__error(RFX_EINVAL, "pso.tol: must be >= 0 and finite, got %g", p->tol);
    if (p->thread_safe != 0 && p->thread_safe != 1)
        return rfx__error(RFX_EINVAL, "pso.thread_safe: must be 0 or 1, got %d", p->thread_safe);
    if (p->n_threads < 0)
        return rfx__error(RFX_EINVAL, "pso.n_threads: must be >= 0, got %d", p->n_threads);
    return RFX_OK;
}

/* The swarm: row i of each n x d array is particle i. */
typedef struct swarm {
    size_t n, d;
    double *x, *v;       /* positions, velocities                         */
    double *pb;          /* personal best positions                       */
    double *f;           /* values of the current positions               */
    double *pf;          /* personal best values                          */
    size_t *attr;        /* the neighbourhood best (a particle index)     */
} swarm;

static void swarm_free(swarm *s)
{
    free(s->x);
    free(s->v);
    free(s->pb);
    free(s->f);
    free(s->pf);
    free(s->attr);
}

static rfx_status swarm_alloc(swarm *s, size_t n, size_t d)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->d = d;
    size_t nd;
    RFX__TRY(rfx__mul(n, d, &nd, "pso: swarm (n_particles x d)"));
    rfx_status st = rfx__alloc(nd, sizeof(double), (void **)&s->x, "pso: positions");
    if (!st) st = rfx__alloc(nd, sizeof(double), (void **)&s->v, "pso: velocities");
    if (!st) st = rfx__alloc(nd, sizeof(double), (void **)&s->pb, "pso: best positions");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&s->f, "pso: values");
    if (!st) st = rfx__alloc(n, sizeof(double), (void **)&s->pf, "pso: best values");
    if (!st) st = rfx__alloc(n, sizeof(size_t), (void **)&s->attr, "pso: neighbourhoods");
    if (st) swarm_free(s);
    return st;
}

/* One particle; a failure is kept with its message (rfx__failure: the
 * lowest particle index wins, whatever the schedule). */
static void eval_one(rfx_pso_objective fn, void *user, swarm *s, size_t i, rfx__failure *fail)
{
    double val = 0;
    rfx_clear_error();
    rfx_status st = fn(user, s->x + i * s->d, s->d, &val);
    if (st != RFX_OK) {
        rfx__failure_note(fail, i, st);
        return;
    }
    s->f[i] = isnan(val) ? INFINITY : val;
}

/* Evaluate every particle: concurrently when the objective allows it. Each
 * value lands in its own slot, so the schedule does not matter. */
static rfx_status evaluate(const rfx_pso_params *p, rfx_pso_objective fn, void *user, swarm *s,
                           size_t iter, int nt)
{
    rfx__failure fail;
    rfx__failure_init(&fail);
    if (p->thread_safe && nt > 1 && s->n > 1) {
#pragma omp parallel num_threads(nt)
        {
            RFX__SERIAL_BLAS();
#pragma omp for schedule(dynamic, 1)
            for (size_t i = 0; i < s->n; i++) eval_one(fn, user, s, i, &fail);
        }
    } else {
        for (size_t i = 0; i < s->n && fail.index == SIZE_MAX; i++)
            eval_one(fn, user, s, i, &fail);
    }
    if (fail.index == SIZE_MAX) return RFX_OK;
    if (fail.msg[0])
        return rfx__error(fail.status,
                          "pso: the objective failed at iteration %zu, particle %zu: %s", iter,
                          fail.index, fail.msg);
    return rfx__error(fail.status, "pso: the objective failed at iteration %zu, particle %zu (%s)",
                      iter, fail.index, rfx_strerror(fail.status));
}

/* The neighbourhood bests of the current personal bests (lowest value,
 * ties to the lowest index), fixed for the whole next move. */
static size_t update_attractors(const rfx_pso_params *p, swarm *s)
{
    size_t g = 0;
    for (size_t i = 1; i < s->n; i++)
        if (s->pf[i] < s->pf[g]) g = i;
    for (size_t i = 0; i < s->n; i++) {
        if (p->topology == RFX_PSO_TOPOLOGY_GLOBAL || s->n < 3) {
            s->attr[i] = g;
        } else {
            size_t nb[3] = {i == 0 ? s->n - 1 : i - 1, i, i + 1 == s->n ? 0 : i + 1};
            size_t b = nb[0];
            for (int k = 1; k < 3; k++)
                if (s->pf[nb[k]] < s->pf[b] || (s->pf[nb[k]] == s->pf[b] && nb[k] < b)) b = nb[k];
            s->attr[i] = b;
        }
    }
    return g;
}

static void clamp_velocity(double *v, double vmax)
{
    if (*v > vmax) *v = vmax;
    else if (*v < -vmax) *v = -vmax;
}

/* Move particle i for iteration t (>= 1): the inertia update with its own
 * random numbers, the velocity clamp, and the boundary rule (clamp the
 * position, zero that velocity component). */
static void move(const rfx_pso_params *p, swarm *s, size_t i, size_t t)
{
    const size_t d = s->d;
    double *x = s->x + i * d, *v = s->v + i * d;
    const double *pb = s->pb + i * d, *g = s->pb + s->attr[i] * d;
    rfx__rng r;
    rfx__rng_init(&r, p->seed, (uint64_t)i, (uint64_t)t);
    for (size_t j = 0; j < d; j++) {
        double r1 = rfx__rng_uniform(&r), r2 = rfx__rng_uniform(&r);
        double w = p->upper[j] - p->lower[j];
        double vj = p->inertia * v[j] + p->c1 * r1 * (pb[j] - x[j]) + p->c2 * r2 * (g[j] - x[j]);
        clamp_velocity(&vj, p->v_max * w);
        double xj = x[j] + vj;
        if (xj < p->lower[j]) {
            xj = p->lower[j];
            vj = 0;
        } else if (xj > p->upper[j]) {
            xj = p->upper[j];
            vj = 0;
        }
        x[j] = xj;
        v[j] = vj;
    }
}

/* SPSO 2007's start: x ~ U(box), v = (U(box) - x) / 2, clamped; particle 0
 * at x0 when given. */
static void initialise(const rfx_pso_params *p, swarm *s)
{
    const size_t d = s->d;
    for (size_t i = 0; i < s->n; i++) {
        double *x = s->x + i * d, *v = s->v + i * d;
        rfx__rng r;
        rfx__rng_init(&r, p->seed, (uint64_t)i, 0);
        for (size_t j = 0; j < d; j++) {
            double w = p->upper[j] - p->lower[j];
            double a = p->lower[j] + w * rfx__rng_uniform(&r);
            double b = p->lower[j] + w * rfx__rng_uniform(&r);
            x[j] = (i == 0 && p->x0) ? p->x0[j] : a;
            v[j] = 0.5 * (b - x[j]);
            clamp_velocity(&v[j], p->v_max * w);
        }
    }
}

static rfx_status cancelled(size_t iter)
{
    return rfx__error(RFX_ECANCELLED, "pso: cancelled by the progress callback after iteration %zu",
                      iter);
}

rfx_status rfx_pso_minimize(const rfx_pso_params *params, size_t d, rfx_pso_objective objective,
                            void *user, double *x_best, double *history, rfx_pso_report *report)
{
    RFX__TRY(check_params(params, d));
    if (!objective) return rfx__error(RFX_EINVAL, "pso: objective is NULL");
    if (!x_best) return rfx__error(RFX_EINVAL, "pso: x_best is NULL");
    const rfx_pso_params *p = params;
    size_t n = p->n_particles ? p->n_particles : 10 + (size_t)floor(2.0 * sqrt((double)d));
    size_t n_hist;
    RFX__TRY(rfx__add(p->max_iter, 1, &n_hist, "pso: history"));
    const int nt = rfx__threads(p->n_threads);

    swarm s;
    double *hist = NULL;
    RFX__TRY(swarm_alloc(&s, n, d));
    rfx_status st = rfx__alloc(n_hist, sizeof(double), (void **)&hist, "pso: history");
    if (st) {
        swarm_free(&s);
        return st;
    }

    initialise(p, &s);
    st = evaluate(p, objective, user, &s, 0, nt);
    size_t iter = 0, stall = 0, g = 0;
    rfx_pso_stop stop = RFX_PSO_STOP_MAX_ITER;
    if (!st) {
        memcpy(s.pb, s.x, n * d * sizeof(double));
        memcpy(s.pf, s.f, n * sizeof(double));
        g = update_attractors(p, &s);
        hist[0] = s.pf[g];
        if (p->progress && p->progress(p->progress_user, "pso", 0.0)) st = cancelled(0);
    }
    double ref = st ? 0 : s.pf[g]; /* the best value at the last real improvement */
    while (!st && iter < p->max_iter) {
        iter++;
        for (size_t i = 0; i < n; i++) move(p, &s, i, iter);
        st = evaluate(p, objective, user, &s, iter, nt);
        if (st) break;
        for (size_t i = 0; i < n; i++) {
            if (s.f[i] < s.pf[i]) {
                s.pf[i] = s.f[i];
                memcpy(s.pb + i * d, s.x + i * d, d * sizeof(double));
            }
        }
        g = update_attractors(p, &s);
        hist[iter] = s.pf[g];
        if (p->progress &&
            p->progress(p->progress_user, "pso", (double)iter / (double)p->max_iter)) {
            st = cancelled(iter);
            break;
        }
        if (ref - s.pf[g] > p->tol) {
            ref = s.pf[g];
            stall = 0;
        } else if (p->patience && ++stall >= p->patience) {
            stop = RFX_PSO_STOP_STAGNATION;
            break;
        }
    }
    if (!st && !(s.pf[g] < INFINITY))
        st = rfx__error(RFX_ENUMERIC, "pso: the objective returned no value below +infinity in "
                                      "%zu evaluations", n * (iter + 1));
    if (!st) {
        memcpy(x_best, s.pb + g * d, d * sizeof(double));
        if (history) memcpy(history, hist, (iter + 1) * sizeof(double));
        if (report) {
            report->value = s.pf[g];
            report->iterations = iter;
            report->evaluations = n * (iter + 1);
            report->n_particles = n;
            report->stop = stop;
        }
    }
    free(hist);
    swarm_free(&s);
    return st;
}
