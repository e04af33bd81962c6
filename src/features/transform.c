/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fused transform Z = s cos(X W^T + b), blocked: for a tile of 64 rows
 * and 512 frequencies (256 KiB of doubles, resident in L2) a GEMM writes
 * X W^T straight into the output tile and the vectorised cos runs over it
 * in place, so each output element is written once and re-read from cache,
 * and no temporary bigger than a tile exists. OpenMP runs over row tiles;
 * the BLAS call inside a parallel region is single-threaded (OpenMP
 * OpenBLAS), and each row's result does not depend on the thread count.
 * Cost per row: 2 d F flops (GEMM) + D cosines; memory: D doubles written.
 *
 * SORF and Fastfood maps (src/features/structured.c) with blocks of d' >= 32
 * skip the GEMM: their W x comes from fast Walsh-Hadamard transforms, four
 * rows at a time, in (2 or 3) F log2 d' additions per row, into the rows of
 * Z, and the same activations follow while those rows are in cache. That
 * path needs a workspace of rfx__transform_ws_len(f) doubles per thread.
 */
#include "internal.h"

#include <math.h>

#define COL_TILE 512

/* z = s phi(z + b) for the activations other than cos (the compiler
 * vectorises the simple ones; tanh and exp go through libm). */
static void activate(double *z, const double *b, double s, size_t n, rfx_activation a)
{
    switch (a) {
    case RFX_ACTIVATION_SIN:
        for (size_t i = 0; i < n; i++) z[i] = s * sin(z[i] + b[i]);
        break;
    case RFX_ACTIVATION_TANH:
        for (size_t i = 0; i < n; i++) z[i] = s * tanh(z[i] + b[i]);
        break;
    case RFX_ACTIVATION_SIGMOID:
        for (size_t i = 0; i < n; i++) z[i] = s / (1.0 + exp(-(z[i] + b[i])));
        break;
    case RFX_ACTIVATION_RELU:
        for (size_t i = 0; i < n; i++) {
            double t = z[i] + b[i];
            z[i] = t > 0 ? s * t : 0.0;
        }
        break;
    case RFX_ACTIVATION_SIGN:
        for (size_t i = 0; i < n; i++) {
            double t = z[i] + b[i];
            z[i] = t > 0 ? s : t < 0 ? -s : 0.0;
        }
        break;
    case RFX_ACTIVATION_COS:
        rfx__vcos_bias(z, b, s, n);
        break;
    }
}

static void activate_f32(float *z, const float *b, float s, size_t n, rfx_activation a)
{
    switch (a) {
    case RFX_ACTIVATION_SIN:
        for (size_t i = 0; i < n; i++) z[i] = s * sinf(z[i] + b[i]);
        break;
    case RFX_ACTIVATION_TANH:
        for (size_t i = 0; i < n; i++) z[i] = s * tanhf(z[i] + b[i]);
        break;
    case RFX_ACTIVATION_SIGMOID:
        for (size_t i = 0; i < n; i++) z[i] = s / (1.0f + expf(-(z[i] + b[i])));
        break;
    case RFX_ACTIVATION_RELU:
        for (size_t i = 0; i < n; i++) {
            float t = z[i] + b[i];
            z[i] = t > 0 ? s * t : 0.0f;
        }
        break;
    case RFX_ACTIVATION_SIGN:
        for (size_t i = 0; i < n; i++) {
            float t = z[i] + b[i];
            z[i] = t > 0 ? s : t < 0 ? -s : 0.0f;
        }
        break;
    case RFX_ACTIVATION_COS:
        rfx__vcos_bias_f32(z, b, s, n);
        break;
    }
}

/* Whether the map's features come from the cosine kernels: cos, and sin
 * through cos with the phases in bp shifted by -pi/2. Phase-free sine
 * features take libm's sin instead, which is odd, so that z(-x) = -z(x)
 * holds exactly (cos(t - pi/2) and -cos(-t - pi/2) round differently). */
static int takes_cosine(const rfx_features *f)
{
    const rfx_activation act = f->params.activation;
    return act == RFX_ACTIVATION_COS ||
           (act == RFX_ACTIVATION_SIN && f->params.form == RFX_FORM_COS_BIAS);
}

/* Up to this input dimension the fused kernel beats GEMM + cos: its W^T
 * rows stay in L1/L2 across a register block. */
#define FUSED_MAX_D 64

size_t rfx__transform_ws_len(const rfx_features *f)
{
    return f->fast ? rfx__structured_ws_len(f) : 0;
}

void rfx__transform_tile(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                         double *Z, size_t ldz)
{
    double *ws = NULL;
    size_t len = rfx__transform_ws_len(f);
    if (len && rfx__alloc(len, sizeof *ws, (void **)&ws, "transform: workspace") != RFX_OK)
        ws = NULL; /* the dense product with the same W instead */
    rfx__transform_tile_ws(f, X, ldx, rows, Z, ldz, ws);
    free(ws);
}

void rfx__transform_tile_ws(const rfx_features *f, const double *X, size_t ldx, size_t rows,
                            double *Z, size_t ldz, double *ws)
{
    const size_t F = f->F, d = f->d;
    const int paired = f->params.form == RFX_FORM_COS_SIN;
    const rfx_activation act = f->params.activation;
    const int cosine = takes_cosine(f);
    if (f->fast && ws) {
        /* SORF / Fastfood: W x by fast Walsh-Hadamard transforms, a group
         * of rows at a time, then the activation while the rows are in
         * cache */
        for (size_t r0 = 0; r0 < rows; r0 += RFX__FAST_ROWS) {
            size_t nr = rows - r0 < RFX__FAST_ROWS ? rows - r0 : RFX__FAST_ROWS;
            rfx__structured_project(f, X + r0 * ldx, ldx, nr, Z + r0 * ldz, ldz, ws);
            for (size_t i = r0; i < r0 + nr; i++) {
                double *z = Z + i * ldz;
                if (paired)
                    rfx__vsincos(z, z, z + F, f->scale, F);
                else if (cosine)
                    rfx__vcos_bias(z, f->bp, f->scale, F);
                else
                    activate(z, f->b, f->scale, F, act);
            }
        }
        return;
    }
    if (cosine && d <= FUSED_MAX_D) {
        rfx__fused_features(X, ldx, rows, d, f->WT, f->ldw, paired ? NULL : f->bp, F, f->scale,
                            paired, Z, ldz);
        return;
    }
    for (size_t c0 = 0; c0 < F; c0 += COL_TILE) {
        size_t nc = F - c0 < COL_TILE ? F - c0 : COL_TILE;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)nc, (int)d, 1.0, X,
                    (int)ldx, f->W + c0 * d, (int)d, 0.0, Z + c0, (int)ldz);
        for (size_t i = 0; i < rows; i++) {
            double *z = Z + i * ldz;
            if (paired)
                rfx__vsincos(z + c0, z + c0, z + F + c0, f->scale, nc);
            else if (cosine)
                rfx__vcos_bias(z + c0, f->bp + c0, f->scale, nc);
            else
                activate(z + c0, f->b + c0, f->scale, nc, act);
        }
    }
}

static void transform_tile_f32(const rfx_features *f, const float *X, size_t ldx, size_t rows,
                               float *Z, size_t ldz)
{
    const size_t F = f->F, d = f->d;
    const float s = (float)f->scale;
    const int paired = f->params.form == RFX_FORM_COS_SIN;
    const int cosine = takes_cosine(f);
    if (cosine && d <= FUSED_MAX_D) {
        rfx__fused_features_f32(X, ldx, rows, d, f->WT32, f->ldw, paired ? NULL : f->bp32, F, s,
                                paired, Z, ldz);
        return;
    }
    for (size_t c0 = 0; c0 < F; c0 += 2 * COL_TILE) {
        size_t nc = F - c0 < 2 * COL_TILE ? F - c0 : 2 * COL_TILE;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)nc, (int)d, 1.0f, X,
                    (int)ldx, f->W32 + c0 * d, (int)d, 0.0f, Z + c0, (int)ldz);
        for (size_t i = 0; i < rows; i++) {
            float *z = Z + i * ldz;
            if (f->params.form == RFX_FORM_COS_SIN)
                rfx__vsincos_f32(z + c0, z + c0, z + F + c0, s, nc);
            else
                activate_f32(z + c0, f->b32 + c0, s, nc, f->params.activation);
        }
    }
}

static rfx_status check_shapes(const rfx_features *f, size_t xr, size_t xc, size_t zr, size_t zc,
                               size_t xs, size_t zs)
{
    if (xc != f->d)
        return rfx__error(RFX_EDIM, "transform: X has %zu columns, the features expect %zu", xc,
                          f->d);
    if (zr != xr || zc != f->D)
        return rfx__error(RFX_EDIM, "transform: Z is %zu x %zu, expected %zu x %zu", zr, zc, xr,
                          f->D);
    if (xs > 2147483647u || zs > 2147483647u || f->D > 2147483647u)
        return rfx__error(RFX_EOVERFLOW, "transform: strides exceed the BLAS integer range");
    return RFX_OK;
}

rfx_status rfx_features_transform(const rfx_features *f, rfx_cmat X, rfx_mat Z)
{
    if (!f) return rfx__error(RFX_EINVAL, "transform: features is NULL");
    RFX__TRY(rfx__check_cmat(X, "transform: X"));
    RFX__TRY(rfx__check_mat(Z, "transform: Z"));
    RFX__TRY(check_shapes(f, X.rows, X.cols, Z.rows, Z.cols, X.stride, Z.stride));
    const size_t n = X.rows, tiles = (n + RFX__ROW_TILE - 1) / RFX__ROW_TILE;
    int nt = rfx__threads(f->params.n_threads);
    if ((size_t)nt > tiles) nt = tiles > 0 ? (int)tiles : 1;
    /* one workspace per thread for the fast structured maps */
    const size_t len = rfx__transform_ws_len(f);
    double *ws = NULL;
    if (len) {
        size_t cells;
        RFX__TRY(rfx__mul((size_t)nt, len, &cells, "transform: workspace"));
        RFX__TRY(rfx__alloc(cells, sizeof *ws, (void **)&ws, "transform: workspace"));
    }
#pragma omp parallel num_threads(nt) if (tiles > 1)
    {
        RFX__SERIAL_BLAS();
#ifdef _OPENMP
        double *mine = ws ? ws + (size_t)omp_get_thread_num() * len : NULL;
#else
        double *mine = ws;
#endif
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * RFX__ROW_TILE;
            size_t rows = n - r0 < RFX__ROW_TILE ? n - r0 : RFX__ROW_TILE;
            rfx__transform_tile_ws(f, X.data + r0 * X.stride, X.stride, rows,
                                   Z.data + r0 * Z.stride, Z.stride, mine);
        }
    }
    free(ws);
    return RFX_OK;
}

rfx_status rfx_features_transform_f32(const rfx_features *f, rfx_cmatf X, rfx_matf Z)
{
    if (!f) return rfx__error(RFX_EINVAL, "transform: features is NULL");
    if (X.stride < X.cols || Z.stride < Z.cols || (!X.data && X.rows && X.cols) ||
        (!Z.data && Z.rows && Z.cols))
        return rfx__error(RFX_EINVAL, "transform: invalid X or Z view (NULL data or stride < cols)");
    RFX__TRY(check_shapes(f, X.rows, X.cols, Z.rows, Z.cols, X.stride, Z.stride));
    const size_t n = X.rows, tiles = (n + RFX__ROW_TILE - 1) / RFX__ROW_TILE;
    int nt = rfx__threads(f->params.n_threads);
#pragma omp parallel num_threads(nt) if (tiles > 1)
    {
        RFX__SERIAL_BLAS();
#pragma omp for schedule(static)
        for (size_t t = 0; t < tiles; t++) {
            size_t r0 = t * RFX__ROW_TILE;
            size_t rows = n - r0 < RFX__ROW_TILE ? n - r0 : RFX__ROW_TILE;
            transform_tile_f32(f, X.data + r0 * X.stride, X.stride, rows, Z.data + r0 * Z.stride,
                               Z.stride);
        }
    }
    return RFX_OK;
}
