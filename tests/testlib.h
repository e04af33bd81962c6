/* SPDX-License-Identifier: BSD-3-Clause */
/* testlib.h - a minimal test harness: checks count, failures print where. */
#ifndef RFX_TESTLIB_H
#define RFX_TESTLIB_H

#include <stddef.h>
#include <stdio.h>

extern int rfx_test_failures;
extern int rfx_test_checks;

void rfx_test_fail(const char *file, int line, const char *fmt, ...);
/* Print a summary line and return the process exit status. */
int rfx_test_finish(const char *name);
/* Wall-clock seconds (monotonic), for the timing lines tests print. */
double rfx_test_seconds(void);
/* Run a test function and print its name and wall time (information only:
 * tests never assert on time). */
#define RFX_TEST_RUN(test)                                                   \
    do {                                                                     \
        double t0_ = rfx_test_seconds();                                     \
        test();                                                              \
        printf("%-24s %.2f s\n", #test, rfx_test_seconds() - t0_);          \
    } while (0)

/* A scratch file path under the build directory (unique per test + tag). */
const char *rfx_test_tmp(const char *tag);

#define CHECK(cond)                                                          \
    do {                                                                     \
        rfx_test_checks++;                                                   \
        if (!(cond)) rfx_test_fail(__FILE__, __LINE__, "check failed: %s", #cond); \
    } while (0)

#define CHECK_MSG(cond, ...)                                                 \
    do {                                                                     \
        rfx_test_checks++;                                                   \
        if (!(cond)) rfx_test_fail(__FILE__, __LINE__, __VA_ARGS__);         \
    } while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                                \
    do {                                                                     \
        double a_ = (a), b_ = (b), t_ = (tol);                               \
        rfx_test_checks++;                                                   \
        if (!(a_ - b_ <= t_ && b_ - a_ <= t_))                               \
            rfx_test_fail(__FILE__, __LINE__, "%s = %.17g, %s = %.17g, |diff| = %.3g > %.3g", \
                          #a, a_, #b, b_, a_ > b_ ? a_ - b_ : b_ - a_, t_);   \
    } while (0)

/* a call returns the expected status */
#define CHECK_STATUS(call, expected)                                         \
    do {                                                                     \
        rfx_status s_ = (call);                                              \
        rfx_test_checks++;                                                   \
        if (s_ != (expected))                                                \
            rfx_test_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d: %s", #call, \
                          (int)s_, rfx_strerror(s_), (int)(expected), rfx_last_error()); \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, RFX_OK)



/* Deterministic test data: splitmix64 uniforms in [0, 1) and normals. */
typedef struct rfx_test_rng { unsigned long long s; } rfx_test_rng;
double rfx_test_uniform(rfx_test_rng *r);
double rfx_test_normal(rfx_test_rng *r);
/* A malloc'd rows x cols matrix of U(lo, hi) values. */
double *rfx_test_matrix(rfx_test_rng *r, size_t rows, size_t cols, double lo, double hi);
/* max |a_i - b_i| / max |b_i| over n values (the absolute gap when b is 0). */
double rfx_test_max_rel_diff(const double *a, const double *b, size_t n);
/* The relative L2 error |p - y| / |y - mean y| of predictions p of the n
 * targets y. */
double rfx_test_rel_error(const double *p, const double *y, size_t n);
#endif
