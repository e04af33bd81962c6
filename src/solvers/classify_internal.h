/*
 * classify_internal.h - classifier functions shared by the fit
 * (solvers/classify.c), the one-call fit (model/fit.c) and the tests.
 * Hidden like everything rfx__.
 */
#ifndef RFX_CLASSIFY_INTERNAL_H
#define RFX_CLASSIFY_INTERNAL_H

#include "internal.h"

/* The sorted distinct values of labels[i * stride], i < n: *classes (C
 * values, allocated with rfx__alloc) and *C. RFX_EPARSE names the row of a
 * NaN / Inf label, RFX_EINVAL fewer than 2 or more than
 * RFX_CLASSIFY_MAX_CLASSES classes; what prefixes the messages. */
rfx_status rfx__classify_classes(const double *labels, size_t n, size_t stride, const char *what,
                                 double **classes, size_t *C);

/* idx[i] = the position of labels[i * stride] in the sorted classes (each
 * label must be one of them). */
void rfx__classify_index(const double *labels, size_t n, size_t stride, const double *classes,
                         size_t C, uint32_t *idx);

/* rfx_classify_fit on class indices y[i] in 0..C-1 with the C classes
 * given (copied into the model; a class may have no rows here, as in a
 * cross-validation fold). Checks params, X and y. */
rfx_status rfx__classify_fit_indexed(const rfx_features *f, rfx_cmat X, const uint32_t *y,
                                     const double *classes, size_t C,
                                     const rfx_classify_params *params, rfx_model **out,
                                     rfx_classify_report *report);

#endif /* RFX_CLASSIFY_INTERNAL_H */
