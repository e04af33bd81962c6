/* SPDX-License-Identifier: BSD-3-Clause */
#include "testlib.h"
#include "helpers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int rfx_test_failures = 0;
int rfx_test_checks = 0;

void rfx_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    rfx_test_failures++;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int rfx_test_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, rfx_test_checks - rfx_test_failures,
           rfx_test_failures);
    return rfx_test_failures == 0 ? 0 : 1;
}

const char *rfx_test_tmp(const char *tag)
{
    static char buf[4096];
    /* the instruction-set runs of one test may run at once (ctest -j): each
     * has a folder of its own */
    const char *isa = getenv("RFX_ISA");
    if (isa && isa[0]) {
        snprintf(buf, sizeof buf, "%s/tmp-%s", RFX_BINARY_DIR, isa);
        mkdir(buf, 0755); /* exists after the first call */
        snprintf(buf, sizeof buf, "%s/tmp-%s/tmp_%s", RFX_BINARY_DIR, isa, tag);
    } else {
        snprintf(buf, sizeof buf, "%s/tmp_%s", RFX_BINARY_DIR, tag);
    }
    return buf;
}

#include <math.h>
#include <stdlib.h>

double rfx_test_uniform(rfx_test_rng *r) { return rfx_helper_uniform(&r->s); }

double rfx_test_normal(rfx_test_rng *r)
{
    double u = rfx_test_uniform(r), v = rfx_test_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

double *rfx_test_matrix(rfx_test_rng *r, size_t rows, size_t cols, double lo, double hi)
{
    double *m = malloc(rows * cols * sizeof *m + 1);
    for (size_t i = 0; i < rows * cols; i++) m[i] = lo + (hi - lo) * rfx_test_uniform(r);
    return m;
}

double rfx_test_seconds(void) { return rfx_helper_seconds(); }

#include "rfx.h"

/* make test runs the numerical tests once per instruction-set path, with
 * RFX_ISA set (tests/CMakeLists.txt). A path above this CPU's best is
 * skipped (exit 77, ctest's SKIP_RETURN_CODE) rather than run capped on a
 * lower one, which would test that path twice; an unknown name fails. */
__attribute__((constructor)) static void rfx_test_isa_gate(void)
{
    const char *env = getenv("RFX_ISA");
    if (!env || !env[0]) return;
    rfx_isa want;
    if (rfx_isa_from_name(env, &want) != RFX_OK) {
        fprintf(stderr, "RFX_ISA: %s\n", rfx_last_error());
        exit(1);
    }
    if (want > rfx_isa_native()) {
        printf("RFX_ISA=%s: this CPU's best is %s; skipped\n", env,
               rfx_isa_name(rfx_isa_native()));
        exit(77);
    }
    if (rfx_isa_active() != want) {
        fprintf(stderr, "RFX_ISA=%s, but the kernels run %s\n", env,
                rfx_isa_name(rfx_isa_active()));
        exit(1);
    }
}

double rfx_test_max_rel_diff(const double *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num = fmax(num, fabs(a[i] - b[i]));
        den = fmax(den, fabs(b[i]));
    }
    return den > 0 ? num / den : num;
}

double rfx_test_rel_error(const double *p, const double *y, size_t n)
{
    double num = 0, den = 0, mu = 0;
    for (size_t i = 0; i < n; i++) mu += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        num += (p[i] - y[i]) * (p[i] - y[i]);
        den += (y[i] - mu) * (y[i] - mu);
    }
    return sqrt(num / den);
}
