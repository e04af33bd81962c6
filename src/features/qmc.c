/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quasi-Monte Carlo frequencies (RFX_STRUCTURE_HALTON) and the inverse
 * distribution functions they go through.
 *
 * Avron, Sindhwani, Yang & Mahoney, "Quasi-Monte Carlo Feature Maps for
 * Shift-Invariant Kernels", JMLR 17 (2016): replace the i.i.d. draws of the
 * spectral density by a low-discrepancy point set mapped through its
 * inverse CDF. The integrand cos(w.t) is smooth, so the error of the kernel
 * estimate falls faster than the Monte Carlo 1/sqrt(D) for moderate d.
 *
 * The point set is the Halton sequence (Halton 1960): coordinate c of point
 * n is the radical inverse of n in the c-th prime base p, with its digits
 * passed through random permutations (Braaten & Weller 1979; Owen's and
 * Matousek's randomisations of digital sequences): digit position m of
 * coordinate c has its own uniformly random permutation pi_{c,m} of
 * {0 .. p-1}, drawn from the stream (seed, RFX__STREAM_HALTON, 64 c + m).
 * Each scrambled point is then uniformly distributed (on a grid of step
 * p^-M, M digits with p^M >= 2^52), so every estimate stays unbiased, while
 * the set keeps the stratification of the Halton sequence. Point 0 (all
 * digits zero) is skipped: frequency j uses point n = j + 1, so W for F
 * frequencies is the first F rows of W for more.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const double TWO_PI = 6.283185307179586476925;
static const double PI = 3.141592653589793238463;

/* ---- the normal quantile ------------------------------------------------ */

/* Horner evaluation of c[0] + c[1] r + ... + c[7] r^7. */
static double poly7(const double *c, double r)
{
    double s = c[7];
    for (int i = 6; i >= 0; i--) s = s * r + c[i];
    return s;
}

/* Wichura, "Algorithm AS 241: The Percentage Points of the Normal
 * Distribution", Applied Statistics 37 (1988), PPND16: rational minimax
 * approximations of degree 7 in three regions, in q = u - 1/2 near the
 * centre and in r = sqrt(-log(min(u, 1 - u))) in the tails (about 1e-16
 * relative accuracy for u down to 1e-316 before rounding), then one Newton
 * step against erf / erfc. */
double rfx__norm_quantile(double u)
{
    static const double a[8] = {3.3871328727963666080e0, 1.3314166789178437745e+2,
                                1.9715909503065514427e+3, 1.3731693765509461125e+4,
                                4.5921953931549871457e+4, 6.7265770927008700853e+4,
                                3.3430575583588128105e+4, 2.5090809287301226727e+3};
    static const double b[8] = {1.0,
                                4.2313330701600911252e+1, 6.8718700749205790830e+2,
                                5.3941960214247511077e+3, 2.1213794301586595867e+4,
                                3.9307895800092710610e+4, 2.8729085735721942674e+4,
                                5.2264952788528545610e+3};
    static const double c[8] = {1.42343711074968357734e0, 4.63033784615654529590e0,
                                5.76949722146069140550e0, 3.64784832476320460504e0,
                                1.27045825245236838258e0, 2.41780725177450611770e-1,
                                2.27238449892691845833e-2, 7.74545014278341407640e-4};
    static const double d[8] = {1.0,
                                2.05319162663775882187e0, 1.67638483018380384940e0,
                                6.89767334985100004550e-1, 1.48103976427480074590e-1,
                                1.51986665636164571966e-2, 5.47593808499534494600e-4,
                                1.05075007164441684324e-9};
    static const double e[8] = {6.65790464350110377720e0, 5.46378491116411436990e0,
                                1.78482653991729133580e0, 2.96560571828504891230e-1,
                                2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                2.71155556874348757815e-5, 2.01033439929228813265e-7};
    static const double f[8] = {1.0,
                                5.99832206555887937690e-1, 1.36929880922735805310e-1,
                                1.48753612908506148525e-2, 7.86869131145613259100e-4,
                                1.84631831751005468180e-5, 1.42151175831644588870e-7,
                                2.04426310338993978564e-15};
    if (!(u > 0.0 && u < 1.0)) return u == 0.0 ? -INFINITY : u == 1.0 ? INFINITY : NAN;
    const double q = u - 0.5;
    const double rsqrt2 = 0.70710678118654752440;
    double x, res; /* res: Phi(x) - u, divided by u in the lower tail */
    if (fabs(q) <= 0.425) {
        double r = 0.180625 - q * q;
        x = q * poly7(a, r) / poly7(b, r);
        res = 0.5 * erf(x * rsqrt2) - q;
    } else {
        /* 1 - u is exact for u >= 1/2 (Sterbenz) */
        double r = sqrt(-log(q < 0 ? u : 1.0 - u));
        if (r <= 5.0) {
            r -= 1.6;
            x = poly7(c, r) / poly7(d, r);
        } else {
            r -= 5.0;
            x = poly7(e, r) / poly7(f, r);
        }
        if (q < 0) {
            x = -x;
            res = 0.5 * erfc(-x * rsqrt2) / u - 1.0;
        } else {
            res = (1.0 - u) - 0.5 * erfc(x * rsqrt2);
        }
    }
    /* one Newton step on Phi(x) = u, Phi - u from erf near the centre and
     * from erfc in the tails (relative accuracy in both, and relative to u
     * in the lower tail, which may be near the underflow): the rational
     * approximation's few ulp of evaluation error become about one */
    double dens = 0.39894228040143267794 * exp(-0.5 * x * x);
    if (dens > 1e-305) x -= q < -0.425 ? res * (u / dens) : res / dens;
    return x;
}

/* ---- the regularised incomplete gamma function -------------------------- */

/* log Gamma(a) for a > 0 without the global sign of lgamma (thread-safe):
 * log tgamma below 10, Stirling's series with five terms above (error below
 * 1e-16 relative there). */
static double log_gamma(double a)
{
    if (a < 10.0) return log(tgamma(a));
    double r = 1.0 / a, r2 = r * r;
    double s = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 -
                                                                          r2 / 1188))));
    return (a - 0.5) * log(a) - a + 0.91893853320467274178 + s;
}

/* x^a e^-x / Gamma(a), the common factor of the series and the fraction:
 * by pow, exp and tgamma where they stay in range (each within an ulp or
 * so), else through logarithms (whose absolute error |a log x| eps then
 * becomes relative). */
static double gamma_factor(double a, double x, double lga)
{
    if (a < 10.0 && x < 700.0) {
        double pw = pow(x, a);
        if (pw > 1e-300 && pw < 1e300) return pw * exp(-x) / tgamma(a);
    }
    return exp(a * log(x) - x - lga);
}

/* P(a, x) by its power series, for x < a + 1 (Abramowitz & Stegun 6.5.29):
 * P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) .. (a + n)). */
static double gamma_p_series(double a, double x, double lga)
{
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 10000; n++) {
        term *= x / (a + n);
        sum += term;
        if (fabs(term) < fabs(sum) * 1e-17) break;
    }
    return sum * gamma_factor(a, x, lga);
}

/* Q(a, x) by its continued fraction, for x >= a + 1 (A&S 6.5.31),
 * evaluated by the modified Lentz method (Lentz 1976; Thompson & Barnett
 * 1986): Q = x^a e^-x / Gamma(a) 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a -
 * 2 (2 - a) / (x + 5 - a - ...))). */
static double gamma_q_fraction(double a, double x, double lga)
{
    const double tiny = 1e-300;
    double bb = x + 1.0 - a, c = 1.0 / tiny, dd = 1.0 / bb, h = dd;
    for (int i = 1; i < 10000; i++) {
        double an = -(double)i * ((double)i - a);
        bb += 2.0;
        dd = an * dd + bb;
        if (fabs(dd) < tiny) dd = tiny;
        c = bb + an / c;
        if (fabs(c) < tiny) c = tiny;
        dd = 1.0 / dd;
        double delta = dd * c;
        h *= delta;
        if (fabs(delta - 1.0) < 1e-16) break;
    }
    return h * gamma_factor(a, x, lga);
}

double rfx__gamma_p(double a, double x)
{
    if (!(a > 0) || !(x >= 0) || isnan(x)) return NAN;
    if (x == 0) return 0.0;
    if (isinf(x)) return 1.0;
    double lga = log_gamma(a);
    return x < a + 1.0 ? gamma_p_series(a, x, lga) : 1.0 - gamma_q_fraction(a, x, lga);
}

double rfx__gamma_q(double a, double x)
{
    if (!(a > 0) || !(x >= 0) || isnan(x)) return NAN;
    if (x == 0) return 1.0;
    if (isinf(x)) return 0.0;
    double lga = log_gamma(a);
    return x < a + 1.0 ? 1.0 - gamma_p_series(a, x, lga) : gamma_q_fraction(a, x, lga);
}

/* x with P(a, x) = u: Halley's method on P (u <= 1/2) or on Q = 1 - P
 * (u > 1/2, so that 1 - u is exact and the upper tail keeps its relative
 * accuracy), with P' = x^(a-1) e^-x / Gamma(a) and P''/P' = (a - 1)/x - 1,
 * safeguarded by a bracket [lo, hi] that every residual narrows (a step
 * leaving it is replaced by bisection, geometric when the bracket spans
 * decades). The start is Wilson & Hilferty's cube-root normal
 * approximation, or for small x the leading term P ~ x^a / Gamma(a + 1). */
double rfx__gamma_p_inv(double a, double u)
{
    if (!(a > 0) || !(u >= 0 && u <= 1)) return NAN;
    if (u == 0) return 0.0;
    if (u == 1) return INFINITY;
    const int upper = u > 0.5;
    const double target = upper ? 1.0 - u : u;
    const double lga = log_gamma(a);
    /* starting point */
    double z = rfx__norm_quantile(u), s = 1.0 / (9.0 * a);
    double t = 1.0 - s + z * sqrt(s), x = a * t * t * t;
    double x_small = exp((log(u) + log_gamma(a + 1.0)) / a);
    if (!(x > 0) || (!upper && x_small < a && x_small < x)) x = x_small;
    if (!(x > 0)) x = DBL_MIN;
    double lo = 0.0, hi = INFINITY;
    for (int it = 0; it < 200; it++) {
        double pr, r;
        if (x < a + 1.0) {
            pr = gamma_p_series(a, x, lga);
            r = upper ? (1.0 - pr) - target : pr - target;
        } else {
            double q = gamma_q_fraction(a, x, lga);
            r = upper ? q - target : (1.0 - q) - target;
        }
        /* residual of P(a, x) - u, in the sign of P */
        double res = upper ? -r : r;
        if (res > 0) hi = x;
        else if (res < 0) lo = x;
        else return x;
        double dens = exp((a - 1.0) * log(x) - x - lga);
        double xn;
        if (dens > 0 && isfinite(dens)) {
            double step = res / dens;
            double corr = 1.0 - 0.5 * step * ((a - 1.0) / x - 1.0);
            xn = (corr > 0.5 && corr < 2.0) ? x - step / corr : x - step;
        } else {
            xn = NAN;
        }
        if (!(xn > lo && xn < hi)) { /* outside the bracket: bisect */
            if (isinf(hi)) xn = 4.0 * (lo > 0 ? lo : x);
            else if (lo == 0 || hi > 16.0 * lo) xn = lo > 0 ? sqrt(lo * hi) : 0.25 * hi;
            else xn = 0.5 * (lo + hi);
        }
        if (fabs(xn - x) <= 2e-16 * xn) return xn;
        x = xn;
    }
    return x;
}

/* ---- scrambled Halton points -------------------------------------------- */

/* The first n primes (n >= 1) into p, by a sieve of Eratosthenes up to
 * the Rosser-Schoenfeld bound n (ln n + ln ln n) (n >= 6). */
static rfx_status first_primes(size_t n, uint32_t *p)
{
    double dn = (double)n;
    size_t limit = n < 6 ? 15 : (size_t)(dn * (log(dn) + log(log(dn)))) + 3;
    unsigned char *composite;
    RFX__TRY(rfx__calloc(limit + 1, 1, (void **)&composite, "features: halton primes"));
    size_t k = 0;
    for (size_t i = 2; i <= limit && k < n; i++) {
        if (composite[i]) continue;
        p[k++] = (uint32_t)i;
        for (size_t j = i * i; j <= limit; j += i) composite[j] = 1;
    }
    free(composite);
    if (k < n) return rfx__error(RFX_EINTERNAL, "features: prime sieve found %zu of %zu", k, n);
    return RFX_OK;
}

typedef rfx__halton_ws halton_ws;

/* The first K values of a uniformly random permutation of {0 .. p-1}
 * (forward Fisher-Yates, which fixes position i after i draws, so they do
 * not depend on how many more are taken), into out. ws->swap is the
 * identity on entry and on return. */
static void partial_permutation(rfx__rng *r, uint32_t p, size_t K, uint32_t *out,
                                halton_ws *ws)
{
    for (size_t i = 0; i < K; i++) {
        size_t t = i + (size_t)(rfx__rng_uniform(r) * (double)(p - i));
        if (t >= p) t = p - 1;
        uint32_t tmp = ws->swap[i];
        ws->swap[i] = ws->swap[t];
        ws->swap[t] = tmp;
        out[i] = ws->swap[i];
        ws->hit[i] = (uint32_t)t;
    }
    for (size_t i = 0; i < K; i++) {
        ws->swap[i] = (uint32_t)i;
        ws->swap[ws->hit[i]] = ws->hit[i];
    }
}

/* Coordinate c (base p) of the scrambled points n = 1 .. F into u[0 .. F-1],
 * each in (0, 1). Digit m of n for n <= F is at most F / p^m, so only the
 * first K_m = min(p, F / p^m + 1) values of pi_{c,m} are needed. The value
 * is sum_m pi_{c,m}(a_m) p^-(m+1) plus half the last step (the cell's
 * midpoint), summed from the last digit by Horner's rule. */
static void halton_coordinate(uint64_t seed, int scramble, size_t c, uint32_t p, size_t F,
                              double *u, halton_ws *ws)
{
    size_t M = 0, off[64], pm = 1;
    double pw = 1.0;
    size_t used = 0;
    while (pw < 0x1p52 && M < 64) {
        size_t K = pm > F ? 1 : (F / pm + 1 < p ? F / pm + 1 : p);
        rfx__rng r;
        rfx__rng_init(&r, seed, RFX__STREAM_HALTON, (uint64_t)(c * 64 + M));
        off[M] = used;
        if (scramble)
            partial_permutation(&r, p, K, ws->tab + used, ws);
        else
            for (size_t i = 0; i < K; i++) ws->tab[used + i] = (uint32_t)i;
        used += K;
        pm = pm > F / p ? F + 1 : pm * p;
        pw *= (double)p;
        M++;
    }
    for (size_t j = 0; j < F; j++) {
        size_t n = j + 1;
        uint32_t dig[64];
        for (size_t m = 0; m < M; m++) {
            dig[m] = (uint32_t)(n % p);
            n /= p;
        }
        double v = 0.5;
        for (size_t m = M; m-- > 0;) v = ((double)ws->tab[off[m] + dig[m]] + v) / (double)p;
        u[j] = v < 1.0 ? v : 1.0 - 0x1p-53;
    }
}

rfx_status rfx__halton_init(rfx__halton *h, size_t dims, size_t n)
{
    memset(h, 0, sizeof *h);
    h->dims = dims;
    h->n = n;
    halton_ws *ws = &h->ws;
    size_t tab_len = 0;
    rfx_status st = rfx__mul(n, 2, &tab_len, "halton: workspace");
    if (!st) st = rfx__add(tab_len, 64, &tab_len, "halton: workspace");
    if (!st) st = rfx__alloc(dims, sizeof *h->primes, (void **)&h->primes, "halton: primes");
    if (!st) st = first_primes(dims, h->primes);
    if (!st) st = rfx__alloc((size_t)h->primes[dims - 1], sizeof(uint32_t), (void **)&ws->swap,
                             "halton: workspace");
    if (!st) st = rfx__alloc(n + 1, sizeof(uint32_t), (void **)&ws->hit, "halton: workspace");
    if (!st) st = rfx__alloc(tab_len, sizeof(uint32_t), (void **)&ws->tab, "halton: workspace");
    if (st) {
        rfx__halton_free(h);
        return st;
    }
    for (uint32_t i = 0; i < h->primes[dims - 1]; i++) ws->swap[i] = i;
    return RFX_OK;
}

void rfx__halton_coord(rfx__halton *h, uint64_t seed, int scramble, size_t c, double *u)
{
    halton_coordinate(seed, scramble, c, h->primes[c], h->n, u, &h->ws);
}

void rfx__halton_free(rfx__halton *h)
{
    free(h->primes);
    free(h->ws.swap);
    free(h->ws.hit);
    free(h->ws.tab);
    memset(h, 0, sizeof *h);
}

/* The inverse CDF of one coordinate of the spectral density (before the
 * length scale): N(0, 1) for the gaussian kernel and the normal part of the
 * Matern kernel, Cauchy(0, 1) for the laplacian kernel, Laplace(0, 1) for
 * the cauchy kernel. */
static double coordinate_quantile(rfx_kernel kernel, double u)
{
    switch (kernel) {
    case RFX_KERNEL_LAPLACIAN: return tan(PI * (u - 0.5));
    case RFX_KERNEL_CAUCHY: return u < 0.5 ? log(2.0 * u) : -log(2.0 * (1.0 - u));
    default: return rfx__norm_quantile(u);
    }
}

/* Quasi-Monte Carlo frequencies: the scrambled Halton point n = j + 1 in
 * the dimensions, in base order: the phase b_j = 2 pi u (the cos-bias
 * layout; the phase-free form keeps the coordinate, so that its frequencies
 * are the cos-bias map's, and sets b_j = 0), then for MATERN the radial
 * coordinate chi2_{2 nu} = 2 P^-1(nu, u) of the multivariate t, then the d
 * coordinates of w_j, each through the inverse CDF of its marginal; w_j is
 * divided by the length scales (and for MATERN by sqrt(chi2 / (2 nu))). */
rfx_status rfx__halton_sample(rfx_features *f)
{
    const size_t d = f->d, F = f->F;
    const int phase = f->params.form != RFX_FORM_COS_SIN;
    const int keep_phase = f->params.form == RFX_FORM_COS_BIAS;
    const int matern = f->params.kernel == RFX_KERNEL_MATERN;
    const size_t dims = d + (size_t)phase + (size_t)matern;
    const double nu = f->params.nu;
    rfx__halton h;
    double *u = NULL, *tscale = NULL;
    rfx_status st = rfx__halton_init(&h, dims, F);
    if (st) return st;
    st = rfx__alloc(F, sizeof *u, (void **)&u, "features: halton workspace");
    if (!st) st = rfx__alloc(F, sizeof *tscale, (void **)&tscale, "features: halton workspace");
    if (st) goto done;
    for (size_t j = 0; j < F; j++) {
        tscale[j] = 1.0;
        f->b[j] = 0.0;
    }
    for (size_t c = 0; c < dims; c++) {
        rfx__halton_coord(&h, f->params.seed, 1, c, u);
        if (phase && c == 0) {
            for (size_t j = 0; j < F; j++) f->b[j] = keep_phase ? TWO_PI * u[j] : 0.0;
        } else if (matern && c == (size_t)phase) {
            /* w = g / sqrt(chi2 / (2 nu)), chi2 = 2 Gamma(nu, 1) */
            for (size_t j = 0; j < F; j++) tscale[j] = sqrt(nu / rfx__gamma_p_inv(nu, u[j]));
        } else {
            size_t k = c - (size_t)phase - (size_t)matern;
            for (size_t j = 0; j < F; j++)
                f->W[j * d + k] = coordinate_quantile(f->params.kernel, u[j]);
        }
    }
    for (size_t j = 0; j < F; j++)
        for (size_t k = 0; k < d; k++) f->W[j * d + k] = tscale[j] * f->W[j * d + k] / f->ls[k];
done:
    rfx__halton_free(&h);
    free(u);
    free(tscale);
    return st;
}
