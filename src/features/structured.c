/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Structured frequencies for the dense kernel features: orthogonal random
 * features, structured orthogonal (SORF) and Fastfood maps with their
 * O(D log d) transforms, and the dispatch to the quasi-Monte Carlo points
 * of qmc.c.
 *
 *  ORF       Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, "Orthogonal
 *            Random Features", NIPS 2016: W = S Q / l per block of d rows,
 *            Q Haar-distributed orthogonal, S_ii independent draws of the
 *            radial law |w| of the spectral density. Each row has exactly
 *            the law of an i.i.d. frequency (so the estimate stays
 *            unbiased), and rows of one block are orthogonal, which lowers
 *            the variance (their Theorem 1).
 *  SORF      the same paper, section 4: Q replaced by H D1 H D2 H D3 (H the
 *            normalised d' x d' Walsh-Hadamard matrix, Di independent
 *            random sign diagonals), applied by three fast Walsh-Hadamard
 *            transforms, and S by stratified radial draws (below). Version
 *            1 (rfx 0.2 and earlier) had S = sqrt(d') I: rows of a fixed
 *            norm, whose estimate is biased (the kernel of the sphere).
 *  FASTFOOD  Le, Sarlos & Smola, "Fastfood - Approximating Kernel
 *            Expansions in Loglinear Time", ICML 2013: V = S H G P H B per
 *            block (H unnormalised, B signs, P a permutation, G a Gaussian
 *            diagonal, S_ii = s_i / (sqrt(d') |G|_F) with s_i a draw of the
 *            radial law): given P, B every row is exactly Gaussian, and S
 *            gives it the right norm law.
 *
 * Inputs are zero-padded from d to d' (a power of two) for SORF and
 * FASTFOOD; for the radial kernels the padded coordinates change nothing.
 * Every block depends only on (seed, block index) through its own stream,
 * so W for F frequencies is the first F rows of W for more, and the phases
 * are those of the i.i.d. map (stream 0, first number of frequency j).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static const double TWO_PI = 6.283185307179586476925;

/* SORF version 1 padded to at least this size. Its rows have the fixed
 * norm sqrt(d') / l, so it estimates the kernel of frequencies uniform on
 * that sphere, k (1 - z^4 / (4 (d' + 2)) + ...) with z = |x - y| / l: a
 * bias of 1.5% of k at z = 1 for d' = 16, and more at larger z (the
 * S-curve's kernel error at D = 1000 was 0.156 against i.i.d.'s 0.082). */
#define SORF_V1_MIN_DIM 16

/* SORF version 2: inputs of fewer than SORF_SMALL_D dimensions are padded
 * to SORF_SMALL_PAD, the others to the next power of two. A row of H D1 H
 * D2 H D3 restricted to d of its d' coordinates is close to a uniform
 * direction's only when d' is large or d is most of d': at d = 2..8, D =
 * 1000, z up to 4, the median kernel error over 10 seeds was 1.05-1.4 x
 * i.i.d.'s with d' = 16 and radial scaling, 0.8-0.99 x with d' = 64.
 * Padding every d to 64 instead loses the orthogonality of the d columns
 * within short maps (d = 16, D = 32: 0.88 x i.i.d.'s error against 0.35 x,
 * cos-sin). bench/sorf_small_d.py measures the rule; see rfx_structure in
 * rfx.h. */
#define SORF_SMALL_D 16
#define SORF_SMALL_PAD 64
#define SORF_NEWEST 2

/* From this block size on the fast transform beats the dense one (whose
 * fused kernel is hard to beat for small d: at d' = 16 they are equal). */
#define FAST_MIN_DIM 32

/* The largest input dimension of the Halton points (base ~1.3e6 then). */
#define HALTON_MAX_DIM 100000

/* ---- validation --------------------------------------------------------- */

/* d' for SORF / FASTFOOD: the next power of two >= d (for SORF version 1
 * >= SORF_V1_MIN_DIM; for version 2, SORF_SMALL_PAD below SORF_SMALL_D), 0
 * when it does not fit. */
static size_t padded_dim(rfx_structure s, unsigned version, size_t d)
{
    size_t dp = 1;
    if (s == RFX_STRUCTURE_SORF)
        dp = version == 1 ? SORF_V1_MIN_DIM : d < SORF_SMALL_D ? SORF_SMALL_PAD : 1;
    while (dp < d) {
        if (dp > SIZE_MAX / 4) return 0;
        dp *= 2;
    }
    return dp;
}

unsigned rfx__structure_version(const rfx_features_params *p)
{
    if (p->structure != RFX_STRUCTURE_SORF) return 0; /* one construction */
    return p->structure_version == 0 ? SORF_NEWEST : p->structure_version;
}

rfx_status rfx__structure_check(const rfx_features_params *p, size_t d)
{
    if ((unsigned)p->structure > RFX_STRUCTURE_HALTON)
        return rfx__error(RFX_EINVAL, "features.structure: %d is not an rfx_structure",
                          (int)p->structure);
    if (p->structure == RFX_STRUCTURE_SORF && p->structure_version > SORF_NEWEST)
        return rfx__error(RFX_EINVAL,
                          "features.structure_version: sorf has constructions 1 and 2 (0: the "
                          "newest), got %u", p->structure_version);
    if (p->structure == RFX_STRUCTURE_IID) return RFX_OK;
    const char *name = rfx_structure_name(p->structure);
    if (p->kernel == RFX_KERNEL_CUSTOM)
        return rfx__error(RFX_EINVAL, "features.structure: the custom kernel's sampler draws "
                                      "i.i.d. frequencies (structure iid), got %s", name);
    const unsigned version = rfx__structure_version(p);
    if (p->weights != RFX_WEIGHTS_KERNEL)
        return rfx__error(RFX_EINVAL,
                          "features.weights: the %s structure samples the kernel's spectral "
                          "density (weights 'kernel'), got '%s'",
                          name, rfx_weights_name(p->weights));
    if (p->sparsity != 0 && p->sparsity != d)
        return rfx__error(RFX_EINVAL,
                          "features.sparsity: the %s structure makes dense frequencies "
                          "(sparsity 0), got q = %zu of %zu inputs",
                          name, p->sparsity, d);
    const int radial = p->kernel == RFX_KERNEL_GAUSSIAN || p->kernel == RFX_KERNEL_MATERN;
    switch (p->structure) {
    case RFX_STRUCTURE_ORTHOGONAL: {
        if (!radial) break;
        int n; /* then d^2 < 2^62 and the workspaces fit */
        RFX__TRY(rfx__lapack_int(d, &n, "features: orthogonal block size d"));
        return RFX_OK;
    }
    case RFX_STRUCTURE_FASTFOOD:
        if (!radial) break;
        /* fall through */
    case RFX_STRUCTURE_SORF: {
        if (p->structure == RFX_STRUCTURE_SORF && version == 1 && p->kernel != RFX_KERNEL_GAUSSIAN)
            return rfx__error(RFX_EINVAL,
                              "features.structure: sorf version 1 is defined for the gaussian "
                              "kernel only, not %s (version 2 serves matern)",
                              rfx_kernel_name(p->kernel));
        if (!radial) break;
        size_t dp = padded_dim(p->structure, version, d), cells;
        if (dp == 0)
            return rfx__error(RFX_EOVERFLOW, "features: %s pads d = %zu to a power of two "
                              "beyond size_t", name, d);
        size_t F = p->form == RFX_FORM_COS_SIN ? p->n_features / 2 : p->n_features;
        size_t blocks = F / dp + (F % dp != 0);
        RFX__TRY(rfx__mul3(blocks, dp, RFX__FAST_SLOTS * sizeof(double), &cells,
                           "features: structured blocks"));
        return RFX_OK;
    }
    case RFX_STRUCTURE_HALTON:
        if (d > HALTON_MAX_DIM)
            return rfx__error(RFX_EINVAL,
                              "features.structure: halton points are available up to %d "
                              "inputs, got d = %zu", HALTON_MAX_DIM, d);
        return RFX_OK;
    case RFX_STRUCTURE_IID: return RFX_OK;
    }
    return rfx__error(RFX_EINVAL,
                      "features.structure: %s needs a radially symmetric spectral density "
                      "(the gaussian or matern kernel), not the %s kernel",
                      name, rfx_kernel_name(p->kernel));
}

/* ---- radial laws --------------------------------------------------------- */

/* A draw of |w| for w from the spectral density in m dimensions: chi_m for
 * the gaussian kernel, chi_m sqrt(2 nu / chi2_{2 nu}) for Matern (the norm
 * of a multivariate t with 2 nu degrees of freedom). */
static double radial_draw(const rfx_features *f, size_t m, rfx__rng *r)
{
    double chi = sqrt(2.0 * rfx__rng_gamma(r, 0.5 * (double)m));
    if (f->params.kernel == RFX_KERNEL_MATERN)
        chi *= sqrt(f->params.nu / rfx__rng_gamma(r, f->params.nu));
    return chi;
}

/* ---- orthogonal random features ------------------------------------------ */

/* Block k (rows k d .. k d + d - 1, the last one cut at F): a d x d Gaussian
 * matrix (column-major, stream (seed, RFX__STREAM_ORF, k)), its Householder
 * QR (dgeqrf), Q (dorgqr) times the signs of diag R: Haar-distributed
 * (Mezzadri, "How to generate random matrices from the classical compact
 * groups", Notices AMS 2007). Row i of the block is column i of Q times an
 * independent radial draw, over the length scales. ws: d^2 + 2 d + lwork. */
static int orf_block(rfx_features *f, size_t k, double *ws, int lwork)
{
    const size_t d = f->d;
    const int n = (int)d;
    double *A = ws, *tau = A + d * d, *rad = tau + d, *work = rad + d;
    rfx__rng r;
    rfx__rng_init(&r, f->params.seed, RFX__STREAM_ORF, (uint64_t)k);
    for (size_t i = 0; i < d * d; i++) A[i] = rfx__rng_normal(&r);
    for (size_t i = 0; i < d; i++) rad[i] = radial_draw(f, d, &r);
    int info = 0;
    dgeqrf_(&n, &n, A, &n, tau, work, &lwork, &info);
    if (info) return info;
    for (size_t i = 0; i < d; i++)
        if (A[i + i * d] < 0) rad[i] = -rad[i];
    dorgqr_(&n, &n, &n, A, &n, tau, work, &lwork, &info);
    if (info) return info;
    size_t rows = f->F - k * d < d ? f->F - k * d : d;
    for (size_t i = 0; i < rows; i++) {
        double *w = f->W + (k * d + i) * d;
        for (size_t c = 0; c < d; c++) w[c] = rad[i] * A[c + i * d] / f->ls[c];
    }
    return 0;
}

static rfx_status orf_sample(rfx_features *f)
{
    const size_t d = f->d, nb = (f->F + d - 1) / d;
    int n = (int)d, lwork = -1, info = 0, lw_qr, lw_q;
    double q1 = 0, q2 = 0;
    RFX__SERIAL(dgeqrf_(&n, &n, NULL, &n, NULL, &q1, &lwork, &info))
    RFX__SERIAL(dorgqr_(&n, &n, &n, NULL, &n, NULL, &q2, &lwork, &info))
    lw_qr = (int)q1;
    lw_q = (int)q2;
    lwork = lw_qr > lw_q ? lw_qr : lw_q;
    if (lwork < n) lwork = n;
    int nt = rfx__threads(f->params.n_threads);
    if ((size_t)nt > nb) nt = (int)nb;
    if (d < 64) nt = 1; /* a QR of a few microseconds: not worth a team */
    size_t per, total;
    RFX__TRY(rfx__mul(d, d + 2, &per, "features: orthogonal workspace"));
    RFX__TRY(rfx__add(per, (size_t)lwork, &per, "features: orthogonal workspace"));
    RFX__TRY(rfx__mul(per, (size_t)nt, &total, "features: orthogonal workspace"));
    double *ws;
    RFX__TRY(rfx__alloc(total, sizeof *ws, (void **)&ws, "features: orthogonal workspace"));
    int fail = 0;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : fail)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *mine = ws + (size_t)omp_get_thread_num() * per;
#else
        double *mine = ws;
#endif
#pragma omp for schedule(static)
        for (size_t k = 0; k < nb; k++)
            if (orf_block(f, k, mine, lwork)) fail = 1;
    }
    free(ws);
    if (fail) return rfx__error(RFX_EINTERNAL, "features: the QR of an orthogonal block failed");
    return RFX_OK;
}

/* ---- SORF and Fastfood: the fast transform's diagonals -------------------- */

/* n random signs (+-1) from the stream. */
static void draw_signs(rfx__rng *r, double *s, size_t n)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 64 == 0) bits = rfx__rng_u64(r);
        s[i] = (bits >> (i % 64)) & 1 ? -1.0 : 1.0;
    }
}

/* A uniformly random permutation of 0 .. n-1 (Fisher-Yates). */
static void draw_permutation(rfx__rng *r, uint32_t *perm, size_t n)
{
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t t = (size_t)(rfx__rng_uniform(r) * (double)i);
        if (t >= i) t = i - 1;
        uint32_t tmp = perm[i - 1];
        perm[i - 1] = perm[t];
        perm[t] = tmp;
    }
}

/* A uniform draw from the k-th of n equal strata of (0, 1). */
static double stratum(rfx__rng *r, uint32_t k, size_t n)
{
    double u = ((double)k + rfx__rng_uniform(r)) / (double)n;
    return u < 1.0 ? u : 1.0 - 0x1p-53; /* rounding of (n - 1 + u) / n */
}

/* SORF's S (version 2): d' radial draws stratified over the block. s_i =
 * Q((pi_i + u_i) / d') with Q the quantile of chi_d' (sqrt(2 P^-1(d'/2,
 * .))), pi a random permutation and u_i ~ U(0, 1): (pi_i + u_i) / d' is
 * uniform, so s_i has exactly the law chi_d', and the block's d' norms
 * fall one in each d'-quantile, which removes most of the variance that
 * independent norms add to the estimate (at d = 16..64, D = 2d..8d: 0.30-
 * 0.35 x i.i.d.'s error in the cos-sin form, against 0.30-0.41 x with
 * independent norms). For Matern each is multiplied by sqrt(2 nu /
 * chi2_{2 nu}), chi2_{2 nu} / 2 = Gamma(nu) stratified alike with a second
 * permutation: the norm of a multivariate t, whose factors are independent
 * and each of its exact law.
 * The rows of H D1 H D2 H D3 have norm 1, so row i becomes s_i times a
 * nearly uniform direction, restricted to the d inputs nearly a draw of
 * the spectral density. perm: d' words of workspace. */
static void sorf_radii(const rfx_features *f, rfx__rng *r, double *S, uint32_t *perm)
{
    const size_t dp = f->dp;
    draw_permutation(r, perm, dp);
    for (size_t i = 0; i < dp; i++)
        S[i] = sqrt(2.0 * rfx__gamma_p_inv(0.5 * (double)dp, stratum(r, perm[i], dp)));
    if (f->params.kernel != RFX_KERNEL_MATERN) return;
    draw_permutation(r, perm, dp); /* chi2_{2 nu} / 2 = Gamma(nu), stratified alike */
    for (size_t i = 0; i < dp; i++)
        S[i] *= sqrt(f->params.nu / rfx__gamma_p_inv(f->params.nu, stratum(r, perm[i], dp)));
}

/* The diagonals of block k from the stream (seed, RFX__STREAM_SORF or
 * RFX__STREAM_FASTFOOD, k): g[0 .. 4 d') and for Fastfood perm[0 .. d')
 * (for SORF a workspace). */
static void fast_block(const rfx_features *f, size_t k, double *g, uint32_t *perm)
{
    const size_t dp = f->dp, d = f->d;
    rfx__rng r;
    if (f->params.structure == RFX_STRUCTURE_SORF) {
        /* (1/d') H_u D1 H_u D2 H_u D3 / l = sqrt(d') H D1 H D2 H D3 / l;
         * d' is a power of two, so the 1/d' is exact. Version 2 scales
         * row i by s_i / sqrt(d') (S) */
        rfx__rng_init(&r, f->params.seed, RFX__STREAM_SORF, (uint64_t)k);
        draw_signs(&r, g, dp);          /* D3 */
        draw_signs(&r, g + dp, dp);     /* D2 */
        draw_signs(&r, g + 2 * dp, dp); /* D1 */
        for (size_t i = 0; i < dp; i++) g[i] = i < d ? g[i] / f->ls[i] / (double)dp : 0.0;
        if (f->params.structure_version >= 2) {
            double *S = g + 3 * dp;
            sorf_radii(f, &r, S, perm);
            for (size_t i = 0; i < dp; i++) S[i] /= sqrt((double)dp);
        }
        return;
    }
    rfx__rng_init(&r, f->params.seed, RFX__STREAM_FASTFOOD, (uint64_t)k);
    draw_signs(&r, g, dp); /* B */
    for (size_t i = 0; i < dp; i++) g[i] = i < d ? g[i] / f->ls[i] : 0.0;
    draw_permutation(&r, perm, dp); /* P */
    double *G = g + dp, *S = g + 2 * dp, g2 = 0;
    for (size_t i = 0; i < dp; i++) {
        G[i] = rfx__rng_normal(&r);
        g2 += G[i] * G[i];
    }
    /* rows of H G P H B have norm sqrt(d') |G|; S gives row i the radial law */
    const double norm = sqrt((double)dp * g2);
    for (size_t i = 0; i < dp; i++) S[i] = radial_draw(f, dp, &r) / norm;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define RFX__FWHT_AVX2 1
#endif

typedef double vd __attribute__((vector_size(32)));
typedef int64_t vdi __attribute__((vector_size(32)));

#define FWHT_SFX generic
#include "fwht_kernels.h"
#undef FWHT_SFX

#ifdef RFX__FWHT_AVX2
#pragma GCC push_options
#pragma GCC target("avx2")
#define FWHT_SFX avx2
#include "fwht_kernels.h"
#undef FWHT_SFX
#pragma GCC pop_options
#endif

void rfx__structured_project(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                             double *Z, size_t ldz, double *ws)
{
#ifdef RFX__FWHT_AVX2
    const int avx2 = rfx_isa_active() >= RFX_ISA_AVX2;
#endif
    for (size_t r0 = 0; r0 < rows; r0 += RFX__FAST_ROWS) {
        size_t nr = rows - r0 < RFX__FAST_ROWS ? rows - r0 : RFX__FAST_ROWS;
#ifdef RFX__FWHT_AVX2
        if (avx2) {
            project_group_avx2(f, X + r0 * ldx, ldx, nr, Z + r0 * ldz, ldz, ws);
            continue;
        }
#endif
        project_group_generic(f, X + r0 * ldx, ldx, nr, Z + r0 * ldz, ldz, ws);
    }
}

/* The transform's state for SORF / FASTFOOD from (seed, d, F, l), and W
 * materialised as the fast map applied to the unit vectors (column c of W
 * is the map of e_c), so that the dense and fast transforms agree to
 * rounding and a rebuilt map has bitwise the same W. */
rfx_status rfx__structured_fast_init(rfx_features *f)
{
    const size_t d = f->d, F = f->F;
    f->params.structure_version = rfx__structure_version(&f->params);
    size_t dp = padded_dim(f->params.structure, f->params.structure_version, d), cells;
    f->dp = dp;
    f->dp_log2 = 0;
    while (((size_t)1 << f->dp_log2) < dp) f->dp_log2++;
    f->n_blocks = F / dp + (F % dp != 0);
    f->sorf_radial = f->params.structure == RFX_STRUCTURE_SORF && f->params.structure_version >= 2;
    RFX__TRY(rfx__mul3(f->n_blocks, dp, RFX__FAST_SLOTS, &cells, "features: structured blocks"));
    RFX__TRY(rfx__alloc(cells, sizeof(double), (void **)&f->fdiag, "features: structured blocks"));
    const int ff = f->params.structure == RFX_STRUCTURE_FASTFOOD;
    uint32_t *perm_ws = NULL;
    if (ff)
        RFX__TRY(rfx__alloc(f->n_blocks * dp, sizeof(uint32_t), (void **)&f->fperm,
                            "features: structured blocks"));
    else if (f->sorf_radial)
        RFX__TRY(rfx__alloc(dp, sizeof(uint32_t), (void **)&perm_ws, "features: workspace"));
    for (size_t k = 0; k < f->n_blocks; k++)
        fast_block(f, k, f->fdiag + k * RFX__FAST_SLOTS * dp, ff ? f->fperm + k * dp : perm_ws);
    free(perm_ws);
    /* W: the map of 4 unit vectors at a time, transposed into place */
    double *E, *Zt, *ws;
    size_t ws_len = rfx__structured_ws_len(f);
    RFX__TRY(rfx__calloc(RFX__FAST_ROWS * d, sizeof *E, (void **)&E, "features: workspace"));
    rfx_status st = rfx__alloc(RFX__FAST_ROWS * F, sizeof *Zt, (void **)&Zt,
                               "features: workspace");
    if (st) {
        free(E);
        return st;
    }
    st = rfx__alloc(ws_len, sizeof *ws, (void **)&ws, "features: workspace");
    if (st) {
        free(E);
        free(Zt);
        return st;
    }
    for (size_t c0 = 0; c0 < d; c0 += RFX__FAST_ROWS) {
        size_t nr = d - c0 < RFX__FAST_ROWS ? d - c0 : RFX__FAST_ROWS;
        for (size_t r = 0; r < nr; r++) E[r * d + c0 + r] = 1.0;
        rfx__structured_project(f, E, d, nr, Zt, F, ws);
        for (size_t r = 0; r < nr; r++) E[r * d + c0 + r] = 0.0;
        for (size_t j = 0; j < F; j++)
            for (size_t r = 0; r < nr; r++) f->W[j * d + c0 + r] = Zt[r * F + j];
    }
    free(E);
    free(Zt);
    free(ws);
    /* SORF version 2 pads d < 16 to 64, where the dense product (d
     * multiply-adds per frequency) is cheaper than 3 log2 d' additions;
     * 2 d > d' holds for every other map */
    f->fast = dp >= FAST_MIN_DIM && 2 * d > dp;
    return RFX_OK;
}

size_t rfx__structured_ws_len(const rfx_features *f)
{
    return f->fdiag ? 3 * RFX__FAST_ROWS * f->dp : 0;
}

/* The phases of the i.i.d. map: b_j = 2 pi U, U the first number of the
 * stream (seed, 0, j); zero in the cos-sin and phase-free forms. */
static void iid_phases(rfx_features *f)
{
    for (size_t j = 0; j < f->F; j++) {
        rfx__rng r;
        rfx__rng_init(&r, f->params.seed, 0, (uint64_t)j);
        double u = rfx__rng_uniform(&r);
        f->b[j] = f->params.form == RFX_FORM_COS_BIAS ? TWO_PI * u : 0.0;
    }
}

rfx_status rfx__structured_sample(rfx_features *f)
{
    switch (f->params.structure) {
    case RFX_STRUCTURE_ORTHOGONAL:
        iid_phases(f);
        return orf_sample(f);
    case RFX_STRUCTURE_SORF:
    case RFX_STRUCTURE_FASTFOOD:
        iid_phases(f);
        return rfx__structured_fast_init(f);
    case RFX_STRUCTURE_HALTON: return rfx__halton_sample(f);
    case RFX_STRUCTURE_IID: break;
    }
    return rfx__error(RFX_EINTERNAL, "features: no structured sampler for %s",
                      rfx_structure_name(f->params.structure));
}
