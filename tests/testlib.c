#include "testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
    snprintf(buf, sizeof buf, "%s/tmp_%s", RFX_BINARY_DIR, tag);
    return buf;
}
