/* SPDX-License-Identifier: BSD-3-Clause */
/* Numbers in CSV files do not depend on the program's locale: after
 * setlocale(LC_ALL, "de_DE.UTF-8") (decimal comma) the reader gives the
 * same bits and the writer the same bytes as in the C locale, and the
 * program's locale is as it was after each call. Skipped (77) when the
 * system lacks that locale (scripts/install-deps.sh generates it). */
#include "internal.h"
#include "testlib.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char CSV[] = "a,b,y\n1.5,-2.25e-3,0.1\n1e300,4.9406564584124654e-324,-7\n"
                          "0x1p-3,  3.25 ,123456789.125\n";

/* The bytes of a file (at most size - 1), NUL-ended; the count. */
static size_t slurp(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, size - 1, fp) : 0;
    if (fp) fclose(fp);
    buf[n] = '\0';
    return n;
}

/* Read CSV, write it back; X and Y into x (9 values), the output's bytes
 * into out. */
static void round_trip(const char *tag, double *x, char *out, size_t size)
{
    const char *in = rfx_test_tmp(tag);
    char out_path[512];
    FILE *fp = fopen(in, "wb");
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    static const char *const names[] = { "a", "b", "y" };
    if (fp) {
        fputs(CSV, fp);
        fclose(fp);
    }
    snprintf(out_path, sizeof out_path, "%s.out.csv", in);
    p.target = "y";
    memset(x, 0, 9 * sizeof *x);
    out[0] = '\0';
    CHECK_OK(rfx_data_read(in, &p, &d));
    if (!d) return;
    rfx_cmat X = rfx_data_x(d), Y = rfx_data_y(d);
    CHECK(X.rows == 3 && X.cols == 2 && Y.rows == 3);
    for (size_t i = 0; i < 3; i++) {
        x[3 * i] = X.data[i * X.stride];
        x[3 * i + 1] = X.data[i * X.stride + 1];
        x[3 * i + 2] = Y.data[i];
    }
    CHECK_OK(rfx_csv_write(out_path, rfx_cmat_of(x, 3, 3), names));
    slurp(out_path, out, size);
    rfx_data_free(d);
    remove(out_path);
}

int main(void)
{
    static const double want[9] = { 1.5, -2.25e-3, 0.1, 1e300, 4.9406564584124654e-324, -7,
                                    0.125, 3.25, 123456789.125 };
    double xc[9], xde[9];
    char outc[1024], outde[1024], buf[32];
    round_trip("c.csv", xc, outc, sizeof outc);
    CHECK(memcmp(xc, want, sizeof want) == 0);
    CHECK(strncmp(outc, "a,b,y\n1.5,-0.0022", 16) == 0);

    if (!setlocale(LC_ALL, "de_DE.UTF-8") || strcmp(localeconv()->decimal_point, ",") != 0) {
        printf("test_locale: de_DE.UTF-8 is not available (skipped)\n");
        return 77;
    }
    round_trip("de.csv", xde, outde, sizeof outde);
    CHECK_MSG(memcmp(xde, want, sizeof want) == 0, "values read under de_DE differ");
    CHECK_MSG(strcmp(outde, outc) == 0, "written under de_DE:\n%s\nunder C:\n%s", outde, outc);
    /* the program's locale is untouched */
    CHECK(strcmp(localeconv()->decimal_point, ",") == 0);
    snprintf(buf, sizeof buf, "%.2f", 1.5);
    CHECK(strcmp(buf, "1,50") == 0);
    /* and its errors too: a decimal comma is text, not a number */
    {
        const char *in = rfx_test_tmp("comma.csv");
        FILE *fp = fopen(in, "wb");
        rfx_data *d = NULL;
        if (fp) {
            fputs("a,y\n1,2\n1,5,3\n", fp);
            fclose(fp);
        }
        CHECK_STATUS(rfx_data_read(in, NULL, &d), RFX_EPARSE);
        CHECK(strstr(rfx_last_error(), ":3: row has 3 fields, expected 2") != NULL);
    }
    return rfx_test_finish("test_locale");
}
