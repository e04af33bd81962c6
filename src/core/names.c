/* SPDX-License-Identifier: BSD-3-Clause */
/* The one table of enum names: every rfx_X_name / rfx_X_from_name pair of
 * the API reads its enum's row here, and every unknown name gets the same
 * message, "unknown <what> '<name>' (expected a, b or c)". */
#include "internal.h"

#include <stdio.h>
#include <string.h>

typedef struct names {
    const char *what;           /* in messages: "kernel", "loss", ...        */
    const char *const *names;   /* the enum's values in order                */
    size_t count;
} names;

#define NAMES(what, ...)                                                                     \
    {what, (const char *const[]){__VA_ARGS__},                                               \
     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)}

static const names KERNEL = NAMES("kernel", "gaussian", "laplacian", "cauchy", "matern", "custom");
static const names FORM = NAMES("feature form", "cos-bias", "cos-sin", "phase-free");
static const names ACTIVATION = NAMES("activation", "cos", "sin", "tanh", "sigmoid", "relu",
                                      "sign");
static const names STRUCTURE = NAMES("structure", "iid", "orthogonal", "sorf", "fastfood",
                                     "halton");
static const names WEIGHTS = NAMES("weight distribution", "kernel", "normal", "uniform");
static const names METHOD = NAMES("method", "ridge", "bayes", "srfe", "harfe", "pce", "projected",
                                  "classify", "sinks", "greedy");
static const names LOSS = NAMES("loss", "logistic", "hinge", "squared-hinge", "squared", "auto");
static const names MULTICLASS = NAMES("multi-class scheme", "ovr", "softmax");
static const names OPTIMIZER = NAMES("optimizer", "auto", "lbfgs", "dual-cd", "sgd");
static const names STRATEGY = NAMES("sgd strategy", "features-on-the-fly", "features-cached",
                                    "kernel-on-the-fly", "gram-cached");
static const names ISA = NAMES("instruction set", "generic", "avx2", "avx512");
static const names DESIGN = NAMES("design", "random", "lhs", "sobol", "halton");
static const names SKETCH = NAMES("sketch kind", "tensor", "maclaurin", "additive-chi2",
                                  "skewed-chi2");
static const names TARGET = NAMES("target transform", "none", "log", "boxcox");
static const names DOT_KERNEL = NAMES("dot-product kernel", "polynomial", "exponential");

static const char *name_of(const names *t, int v)
{
    return v >= 0 && (size_t)v < t->count ? t->names[v] : "unknown";
}

static rfx_status value_of(const names *t, const char *name, int *out)
{
    if (!name || !out) return rfx__error(RFX_EINVAL, "%s name: NULL argument", t->what);
    char list[256] = "";
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(name, t->names[i]) == 0) {
            *out = (int)i;
            return RFX_OK;
        }
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s",
                 i ? (i + 1 == t->count ? " or " : ", ") : "", t->names[i]);
    }
    return rfx__error(RFX_EINVAL, "unknown %s '%s' (expected %s)", t->what, name, list);
}

/* name and from_name of one enum over its table */
#define NAME_PAIR(type, prefix, table)                                                       \
    const char *prefix##_name(type v) { return name_of(&table, (int)v); }                    \
    rfx_status prefix##_from_name(const char *name, type *out)                               \
    {                                                                                        \
        int v = 0;                                                                           \
        RFX__TRY(value_of(&table, name, &v));                                                \
        *out = (type)v;                                                                      \
        return RFX_OK;                                                                       \
    }

NAME_PAIR(rfx_form, rfx_form, FORM)
NAME_PAIR(rfx_activation, rfx_activation, ACTIVATION)
NAME_PAIR(rfx_structure, rfx_structure, STRUCTURE)
NAME_PAIR(rfx_weights, rfx_weights, WEIGHTS)
NAME_PAIR(rfx_method, rfx_method, METHOD)
NAME_PAIR(rfx_loss, rfx_loss, LOSS)
NAME_PAIR(rfx_multiclass, rfx_multiclass, MULTICLASS)
NAME_PAIR(rfx_optimizer, rfx_optimizer, OPTIMIZER)
NAME_PAIR(rfx_sgd_strategy, rfx_sgd_strategy, STRATEGY)
NAME_PAIR(rfx_isa, rfx_isa, ISA)
NAME_PAIR(rfx_design_kind, rfx_design, DESIGN)
NAME_PAIR(rfx_sketch_kind, rfx_sketch_kind, SKETCH)
NAME_PAIR(rfx_dot_kernel, rfx_dot_kernel, DOT_KERNEL)

/* target transforms: "box-cox" is also Box-Cox */
const char *rfx_target_transform_name(rfx_target_transform v) { return name_of(&TARGET, (int)v); }

rfx_status rfx_target_transform_from_name(const char *name, rfx_target_transform *out)
{
    if (name && out && strcmp(name, "box-cox") == 0) {
        *out = RFX_TARGET_BOXCOX;
        return RFX_OK;
    }
    int v = 0;
    RFX__TRY(value_of(&TARGET, name, &v));
    *out = (rfx_target_transform)v;
    return RFX_OK;
}

/* kernels: scikit-learn's "rbf" is also the Gaussian */
const char *rfx_kernel_name(rfx_kernel v) { return name_of(&KERNEL, (int)v); }

rfx_status rfx_kernel_from_name(const char *name, rfx_kernel *out)
{
    if (name && out && strcmp(name, "rbf") == 0) {
        *out = RFX_KERNEL_GAUSSIAN;
        return RFX_OK;
    }
    int v = 0;
    RFX__TRY(value_of(&KERNEL, name, &v));
    *out = (rfx_kernel)v;
    return RFX_OK;
}
