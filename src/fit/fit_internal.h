/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fit_internal.h - what the one-call fit (fit/fit.c) shares with its
 * classifier (fit/fit_classify.c). Hidden like everything rfx__.
 */
#ifndef RFX_FIT_INTERNAL_H
#define RFX_FIT_INTERNAL_H

#include "internal.h"
#include "solvers/classify_internal.h"

/* params->progress at stage and fraction frac (-1: unknown); nonzero to
 * cancel. */
int rfx__fit_progress(const rfx_fit_params *p, const char *stage, double frac);

/* The input scaler: per column mean and standard deviation (1 for a
 * constant column), weighted by w unless NULL, and Xs (n x d) = (X - mean)
 * / scale, each allocated. */
rfx_status rfx__fit_standardize(rfx_cmat X, const double *w, double **mean_out,
                                double **scale_out, double **Xs_out);

/* The classifier's settings as the fit uses them: those of p->classify (or
 * the defaults) with the fit's intercept, threads and (when given) lambda;
 * no progress of its own. */
rfx_classify_params rfx__fit_classify_settings(const rfx_fit_params *p);
/* The classifier's settings as given: *p->classify, or without them
 * rfx_classify_params_default() with the loss RFX_LOSS_AUTO (the default
 * classifier of a fit, rfx/model.h). */
rfx_classify_params rfx__fit_classify_given(const rfx_fit_params *p);

/* 1 when the classifier is the least-squares one in closed form (squared
 * loss, automatic optimizer, no class or row weights): lambda then comes
 * from the exact leave-one-out errors of the scored rows. */
int rfx__fit_classify_closed(const rfx_classify_params *cp, int weighted);

/* 1 when the least-squares classifier is then refined by Newton steps of
 * the squared hinge (RFX_LOSS_AUTO, closed form; rfx__classify_refine);
 * rfx__fit_classify_settings maps RFX_LOSS_AUTO to RFX_LOSS_SQUARED. */
int rfx__fit_classify_refines(const rfx_fit_params *p, int weighted);

/* 1 when the fit uses its selection rows: to choose the length scale, to
 * choose lambda other than in closed form, or for the temperature of a
 * squared loss fitted by an optimizer; else they need not be drawn. */
int rfx__fit_classify_uses_selection(const rfx_fit_params *p, const rfx_classify_params *cp,
                                     int weighted);

/* What the classifier's choice on the selection rows gave. */
typedef struct rfx__cls_choice {
    double length_scale; /* chosen, or the map's own (fp->length_scale)       */
    double lambda;       /* chosen (not in closed form), or the settings'     */
    double score;        /* the best validation score; NaN when nothing chosen */
    size_t evals;        /* candidates scored                                 */
    rfx__refine_report refine; /* the final fit's refinement (skipped: none) */
} rfx__cls_choice;

/* Choose the length scale (when the map leaves it open) and, unless in
 * closed form, lambda (when params->lambda < 0) on the selection rows X
 * (standardised when the fit standardises), their class indices y and
 * weights w (NULL: none). In closed form lambda is left to the final fit,
 * which chooses it by the LOO errors of all (scored) rows. */
rfx_status rfx__fit_classify_choose(const rfx_fit_params *params, rfx_cmat X, const uint32_t *y,
                                    const double *w, const double *classes, size_t C,
                                    rfx__cls_choice *out);

/* The temperature of a squared-loss classifier fitted by an optimizer, on
 * the scores of the selection rows X (in-sample, so somewhat overconfident;
 * the closed form calibrates on leave-one-out scores instead), weighted by
 * w unless NULL: into m->noise_var. */
rfx_status rfx__fit_classify_temperature(rfx_model *m, rfx_cmat X, const uint32_t *y,
                                         const double *w);

/* The report of a classifier's fit: its map's length scale, its lambda,
 * and the choice's score and candidates. */
void rfx__fit_classify_report(rfx_fit_report *report, const rfx_model *m,
                              const rfx__cls_choice *ch);

/* rfx_model_fit with RFX_METHOD_CLASSIFY (fit/fit_classify.c). */
rfx_status rfx__fit_classify(const rfx_fit_params *params, rfx_cmat X, rfx_cmat Y,
                             rfx_model **out, rfx_fit_report *report);

#endif /* RFX_FIT_INTERNAL_H */
