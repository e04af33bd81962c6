/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kern_internal.h - the layout of exact kernels (rfx/kernels.h), shared by
 * the files of src/kernels only. Nothing here is exported.
 */
#ifndef RFX_KERN_INTERNAL_H
#define RFX_KERN_INTERNAL_H

#include "internal.h"

#include <stdatomic.h>

/* The node kinds of a kernel expression tree. */
typedef enum rfx__kern_kind {
    /* leaves of the Euclidean distance: k = g(|u_x - u_y|^2)               */
    RFX__KERN_GAUSSIAN,  /* exp(-r2 / 2), u = x / l                         */
    RFX__KERN_MATERN,    /* Matern nu at r = sqrt(r2), u = x / l            */
    RFX__KERN_RBF,       /* exp(-gamma r2), u = x                           */
    /* leaves of the inner product: k = g(x.y)                              */
    RFX__KERN_LINEAR,
    RFX__KERN_POLYNOMIAL,
    RFX__KERN_SIGMOID,
    /* leaves evaluated entry by entry                                       */
    RFX__KERN_LAPLACE_SHIFT, /* exp(-sum |x_i - y_i| / l_i)                  */
    RFX__KERN_LAPLACE_GAMMA, /* exp(-gamma sum |x_i - y_i|)                  */
    RFX__KERN_CAUCHY,
    RFX__KERN_DELTA,
    RFX__KERN_ARCCOS,   /* order degree, sigma^2 gamma, bias^2 coef0        */
    RFX__KERN_BILINEAR, /* x^T A y                                          */
    /* a feature map                                                         */
    RFX__KERN_FEATURES,
    /* algebra                                                               */
    RFX__KERN_SUM,
    RFX__KERN_PRODUCT,
    RFX__KERN_SCALE,
    RFX__KERN_EXP,
    RFX__KERN_WARP
} rfx__kern_kind;

struct rfx_kern {
    atomic_size_t refs;
    rfx__kern_kind kind;
    size_t d;              /* input dimension it is tied to, 0 = any        */
    double nu;             /* MATERN                                        */
    double l;              /* isotropic length scale (ls == NULL)           */
    double *ls;            /* d per-input length scales, or NULL            */
    double gamma, coef0;   /* RBF, LAPLACE_GAMMA, POLYNOMIAL, SIGMOID       */
    unsigned degree;       /* POLYNOMIAL                                    */
    rfx_features *f;       /* FEATURES (owned copy)                         */
    rfx_kern *a, *b;       /* operands (referenced)                         */
    double c;              /* SCALE                                         */
    double *A;             /* BILINEAR: d x d                               */
    rfx_kern_weight_fn w;  /* WARP                                          */
    void *user;
};

/* The Matern correlation of smoothness nu > 0 at scaled distance r >= 0:
 * 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r)^nu K_nu(sqrt(2 nu) r), 1 at r = 0. */
double rfx__matern(double nu, double r);

/* log K_nu(x) for nu >= 0, x > 0 (the modified Bessel function of the
 * second kind), by Temme's series / Steed's continued fraction and upward
 * recurrence. */
double rfx__bessel_k_log(double nu, double x);

/* The value of a distance leaf at squared scaled distance r2 >= 0, and of
 * an inner-product leaf at x.y. */
double rfx__kern_of_r2(const rfx_kern *k, double r2);
double rfx__kern_of_dot(const rfx_kern *k, double dot);

/* The squared scaled distance of a distance leaf from the differences,
 * t_i = (x_i - y_i) / l_i (unscaled for RBF): the point evaluation, and the
 * Gram matrices' fallback where the norms expansion cancels. */
static inline double rfx__kern_r2(const rfx_kern *k, const double *x, const double *y, size_t d)
{
    double r2 = 0;
    for (size_t i = 0; i < d; i++) {
        double t = x[i] - y[i];
        if (k->kind != RFX__KERN_RBF) t /= k->ls ? k->ls[i] : k->l;
        r2 += t * t;
    }
    return r2;
}

/* An entry-by-entry leaf (LAPLACE_*, CAUCHY, DELTA, ARCCOS, BILINEAR) at
 * two points. */
double rfx__kern_elementwise(const rfx_kern *k, const double *x, const double *y, size_t d);

/* Upper bounds of the ridge leverage scores of the n rows of X
 * (nystroem.c; see RFX_LANDMARKS_LEVERAGE), from s uniform rows. */
rfx_status rfx__nystroem_leverage(const rfx_kern *k, rfx_cmat X, double lambda, size_t s,
                                  uint64_t seed, int n_threads, double *scores);

/* Check an n_threads argument (>= 0). */
rfx_status rfx__kern_check_threads(int n_threads, const char *what);

#endif /* RFX_KERN_INTERNAL_H */
