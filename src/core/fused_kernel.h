/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fused feature kernel, written once for both precisions: vmath_kernels.h
 * includes it twice, with FT (double or float), FV / FVI (its value and
 * integer vectors), FL (lanes), and the F_* helpers defined; it undefines
 * them at the end.
 *
 * Z[i, j] = s cos(b_j + sum_k X[i, k] WT[k, j]), or the pair s cos(t),
 * s sin(t) into columns j and F + j. The sum runs in one order (k = 0 ..
 * d-1 by fused multiply-adds, then b_j) for every element, whatever
 * the blocking, so a row's features do not depend on the block it came in
 * nor on the rows beside it. Each output is written once, straight from
 * registers: no GEMM output pass, no separate cos pass.
 *
 * Register block: MR rows x NV vectors of frequencies, the row count a
 * compile-time constant (rows_1 .. rows_MR below), so the accumulators stay
 * in registers through the k loop: per k, NV aligned loads of WT, MR
 * broadcasts of X, MR NV FMAs. AVX2 (16 registers): 6 x 2 = 12
 * accumulators, 2 W vectors, 1 broadcast. SSE2: 6 x 2 with a product
 * temporary, the broadcasts made once per block (no FMA, and a broadcast
 * is a load and a shuffle). AVX-512 (32 registers): 4 x 4. The cosines of
 * a block are then evaluated in lockstep (cos_vn, sincos_vn), so their
 * polynomial chains overlap. tests/check_kernel_asm.py checks the k loop of the
 * full block for stack accesses on each path.
 * WT is d x ldw and b has ldw entries, 64-byte aligned, zero-padded past
 * F; ldw is a multiple of NV FL (64 serves every path and precision).
 * Cost per element: d FMAs + one cos (or sincos); memory: one store. For
 * large d (WT rows no longer cached across the block) the GEMM path is
 * faster; the caller decides.
 */

static inline void F_NAME(store_part)(FT *p, FV v, size_t m)
{
    if (m >= FL) F_STOREU(p, v);
    else {
        FT t[FL];
        F_STOREU(t, v);
        memcpy(p, t, m * sizeof *t);
    }
}

/* acc[r][c] = sum_k X[i + r, k] WT[k, j + c FL] + b[j + c FL] for r < nr,
 * c < NV: the one sum of every block size. The phase comes last, so the d
 * roundings of the sum are at the scale of w.x, not of |b| (up to 2 pi):
 * in single precision that is the difference between 5e-8 and 1.5e-7 in
 * features of scale 0.03. */
__attribute__((always_inline)) static inline void F_NAME(sums)(const FT *X, size_t ldx, size_t i,
                                                               int nr, size_t d, const FT *WT,
                                                               size_t ldw, const FT *b, size_t j,
                                                               const FV *xb, FV acc[MR][NV])
{
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < NV; c++) acc[r][c] = (FV){0};
    const FT *x = X + i * ldx;
    for (size_t k = 0; k < d; k++) {
        FV w[NV];
        for (int c = 0; c < NV; c++) w[c] = F_LOADA(WT + k * ldw + j + (size_t)c * FL);
        for (int r = 0; r < nr; r++) {
            FV xv = xb ? xb[k * MR + (size_t)r] : F_BCAST(x[(size_t)r * ldx + k]);
            for (int c = 0; c < NV; c++) acc[r][c] = acc[r][c] + xv * w[c];
        }
    }
    if (b)
        for (int c = 0; c < NV; c++) {
            FV bv = F_LOADA(b + j + (size_t)c * FL);
            for (int r = 0; r < nr; r++) acc[r][c] = acc[r][c] + bv;
        }
}

/* Rows i .. i+nr-1, all frequencies, by the fast cos / sincos; inlined
 * with nr and paired constant. Returns a bit mask of the rows where some
 * |t| reached the fast range's limit: the caller redoes each of those rows
 * alone with F_NAME(rows_exact) (its sums are recomputed identically). */
__attribute__((always_inline)) static inline int F_NAME(rows)(const FT *X, size_t ldx, size_t i,
                                                              int nr, size_t d, const FT *WT,
                                                              size_t ldw, const FT *b, size_t F,
                                                              FT s, int paired, int pre,
                                                              FT *Z, size_t ldz)
{
    /* pre: the rows' inputs broadcast once into xb, for the paths whose
     * broadcast is not a plain load (SSE2: a load and a shuffle) */
    FV xbuf[F_XB_MAX_D * MR + 1];
    const FV *xb = NULL;
    if (pre) {
        for (size_t k = 0; k < d; k++)
            for (int r = 0; r < nr; r++) xbuf[k * MR + (size_t)r] = F_BCAST(X[(i + (size_t)r) * ldx + k]);
        xb = xbuf;
    }
    const FVI absmask = (FVI){0} + F_SIGNMASK;
    const FV lim = F_BCAST(F_LIMIT);
    FVI big[MR] = {{0}};
    for (size_t j = 0; j < F; j += NV * FL) {
        FV acc[MR][NV];
        F_NAME(sums)(X, ldx, i, nr, d, WT, ldw, b, j, xb, acc);
        if (!paired) {
            /* all of the block's cosines in lockstep; lanes past F hold
             * cos(0) of the zero padding, never stored */
#pragma GCC unroll 8
            for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
                for (int c = 0; c < NV; c++)
                    big[r] |= (FVI)((FV)((FVI)acc[r][c] & absmask) >= lim);
            F_COSN(&acc[0][0], nr * NV);
        }
#pragma GCC unroll 8
        for (int r = 0; r < nr; r++) {
            FT *z = Z + (i + (size_t)r) * ldz;
#pragma GCC unroll 4
            for (int c = 0; c < NV; c++) {
                size_t jj = j + (size_t)c * FL;
                if (jj >= F) break;
                if (paired) {
                    FV co, si;
                    big[r] |= (FVI)((FV)((FVI)acc[r][c] & absmask) >= lim);
                    F_SINCOS(acc[r][c], &co, &si);
                    F_NAME(store_part)(z + jj, s * co, F - jj);
                    F_NAME(store_part)(z + F + jj, s * si, F - jj);
                } else {
                    F_NAME(store_part)(z + jj, s * acc[r][c], F - jj);
                }
            }
        }
    }
    int mask = 0;
    for (int r = 0; r < nr; r++) {
        F_IT lanes[FL];
        memcpy(lanes, &big[r], sizeof lanes);
        for (int l = 0; l < FL; l++)
            if (lanes[l]) mask |= 1 << r;
    }
    return mask;
}

#define F_ROWS_N(NR)                                                                             \
    static int F_NAME(rows_##NR)(const FT *X, size_t ldx, size_t i, size_t d, const FT *WT,      \
                                 size_t ldw, const FT *b, size_t F, FT s, int paired, FT *Z,     \
                                 size_t ldz)                                                     \
    {                                                                                            \
        if (F_XB_MAX_D && d <= F_XB_MAX_D)                                                       \
            return paired ? F_NAME(rows)(X, ldx, i, NR, d, WT, ldw, b, F, s, 1, 1, Z, ldz)       \
                          : F_NAME(rows)(X, ldx, i, NR, d, WT, ldw, b, F, s, 0, 1, Z, ldz);      \
        return paired ? F_NAME(rows)(X, ldx, i, NR, d, WT, ldw, b, F, s, 1, 0, Z, ldz)           \
                      : F_NAME(rows)(X, ldx, i, NR, d, WT, ldw, b, F, s, 0, 0, Z, ldz);          \
    }
F_ROWS_N(1)
F_ROWS_N(2)
F_ROWS_N(3)
F_ROWS_N(4)
#if MR > 4
F_ROWS_N(5)
F_ROWS_N(6)
#endif
#undef F_ROWS_N

/* One row through SLEEF's exact sincos (rare: huge arguments). */
__attribute__((noinline)) static void F_NAME(rows_exact)(const FT *X, size_t ldx, size_t i,
                                                         size_t d, const FT *WT, size_t ldw,
                                                         const FT *b, size_t F, FT s, int paired,
                                                         FT *Z, size_t ldz)
{
    FT *z = Z + i * ldz;
    for (size_t j = 0; j < F; j += NV * FL) {
        FV acc[MR][NV];
        F_NAME(sums)(X, ldx, i, 1, d, WT, ldw, b, j, NULL, acc);
        for (int c = 0; c < NV; c++) {
            size_t jj = j + (size_t)c * FL;
            if (jj >= F) break;
            FT t[FL], tc[FL], ts[FL];
            F_STOREU(t, acc[0][c]);
            for (int l = 0; l < FL; l++) {
                F_EXACT(t[l], &tc[l], &ts[l]);
                tc[l] *= s;
                ts[l] *= s;
            }
            F_NAME(store_part)(z + jj, F_LOADU(tc), F - jj);
            if (paired) F_NAME(store_part)(z + F + jj, F_LOADU(ts), F - jj);
        }
    }
}

void F_ENTRY(const FT *X, size_t ldx, size_t rows, size_t d, const FT *WT, size_t ldw,
             const FT *b, size_t F, FT s, int paired, FT *Z, size_t ldz)
{
    static int (*const rows_fn[MR + 1])(const FT *, size_t, size_t, size_t, const FT *, size_t,
                                        const FT *, size_t, FT, int, FT *, size_t) = {
        NULL, F_NAME(rows_1), F_NAME(rows_2), F_NAME(rows_3), F_NAME(rows_4)
#if MR > 4
        , F_NAME(rows_5), F_NAME(rows_6)
#endif
    };
    for (size_t i = 0; i < rows; i += MR) {
        int nr = rows - i < MR ? (int)(rows - i) : MR;
        int redo = rows_fn[nr](X, ldx, i, d, WT, ldw, b, F, s, paired, Z, ldz);
        for (int r = 0; redo; r++, redo >>= 1)
            if (redo & 1) F_NAME(rows_exact)(X, ldx, i + (size_t)r, d, WT, ldw, b, F, s, paired, Z, ldz);
    }
}

#undef FT
#undef FV
#undef FVI
#undef FL
#undef F_LIMIT
#undef F_BCAST
#undef F_LOADA
#undef F_LOADU
#undef F_STOREU
#undef F_COSN
#undef F_SINCOS
#undef F_EXACT
#undef F_SIGNMASK
#undef F_IT
#undef F_NAME
#undef F_ENTRY
