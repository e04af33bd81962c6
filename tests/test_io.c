/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the CSV and .npy readers and writers: round trips are bitwise,
 * every error names the file and the place, and no input crashes. .npy
 * inputs are generated here byte by byte rather than stored as binaries. */
#include "internal.h"
#include "helpers.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#define DATA(name) RFX_TEST_DATA "/" name

/* ---- helpers ---------------------------------------------------------------- */

static const char *write_text(const char *tag, const char *text)
{
    const char *path = rfx_test_tmp(tag);
    FILE *fp = fopen(path, "wb");
    if (!fp) return path;
    fwrite(text, 1, strlen(text), fp);
    fclose(fp);
    return path;
}

static void write_bytes(const char *path, const void *bytes, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return;
    fwrite(bytes, 1, len, fp);
    fclose(fp);
}

static int contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

/* Reading path fails with status and a message containing each of the
 * given pieces; *out stays untouched. */
static void expect_error(const char *path, const rfx_read_params *p, rfx_status status,
                         const char *piece1, const char *piece2, int line)
{
    rfx_data *sentinel = (rfx_data *)&rfx_test_checks; /* any non-NULL address */
    rfx_data *out = sentinel;
    rfx_status st = rfx_data_read(path, p, &out);
    const char *msg = rfx_last_error();
    rfx_test_checks++;
    if (st != status)
        rfx_test_fail(__FILE__, line, "reading %s: status %d, expected %d (%s)", path, (int)st,
                      (int)status, msg);
    rfx_test_checks++;
    if (out != sentinel) rfx_test_fail(__FILE__, line, "reading %s: *out written on error", path);
    rfx_test_checks++;
    if (piece1 && !contains(msg, piece1))
        rfx_test_fail(__FILE__, line, "message '%s' lacks '%s'", msg, piece1);
    rfx_test_checks++;
    if (piece2 && !contains(msg, piece2))
        rfx_test_fail(__FILE__, line, "message '%s' lacks '%s'", msg, piece2);
    if (st == RFX_OK && out != sentinel) rfx_data_free(out);
}

#define EXPECT_ERROR(path, p, status, a, b) expect_error(path, p, status, a, b, __LINE__)

/* Read text written to a scratch file with the given target and header mode. */
static rfx_status read_text(const char *tag, const char *text, const char *target, int header,
                            rfx_data **out)
{
    rfx_read_params p = rfx_read_params_default();
    p.target = target;
    p.has_header = header;
    return rfx_data_read(write_text(tag, text), &p, out);
}

/* Build a .npy file: the given version, descr, fortran flag and shape text,
 * then nbytes of data. */
static void write_npy(const char *path, int major, const char *descr, const char *fortran,
                      const char *shape, const void *data, size_t nbytes)
{
    char dict[512];
    unsigned char pre[12];
    size_t prelen = major == 1 ? 10 : 12, len, pad;
    FILE *fp;
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
             fortran, shape);
    len = strlen(dict) + 1;
    pad = (64 - (prelen + len) % 64) % 64;
    memcpy(pre, "\x93NUMPY", 6);
    pre[6] = (unsigned char)major;
    pre[7] = 0;
    if (major == 1) {
        pre[8] = (unsigned char)((len + pad) & 0xff);
        pre[9] = (unsigned char)((len + pad) >> 8);
    } else {
        uint32_t h = (uint32_t)(len + pad);
        for (int k = 0; k < 4; k++) pre[8 + k] = (unsigned char)(h >> (8 * k));
    }
    fp = fopen(path, "wb");
    if (!fp) return;
    fwrite(pre, 1, prelen, fp);
    fwrite(dict, 1, strlen(dict), fp);
    for (size_t k = 0; k < pad; k++) fputc(' ', fp);
    fputc('\n', fp);
    if (nbytes) fwrite(data, 1, nbytes, fp);
    fclose(fp);
}

/* Little-endian bytes of doubles / floats. */
static void le_f8(unsigned char *out, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &v[i], 8);
        for (int k = 0; k < 8; k++) out[8 * i + (size_t)k] = (unsigned char)(b >> (8 * k));
    }
}

static void le_f4(unsigned char *out, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], 4);
        for (int k = 0; k < 4; k++) out[4 * i + (size_t)k] = (unsigned char)(b >> (8 * k));
    }
}

/* A deterministic generator (splitmix64, tests/helpers.h). */
static unsigned long long rnd_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return rfx_helper_bits(&rnd_state); }

/* Values that a careless writer or reader gets wrong. */
static double tricky(size_t i)
{
    static const double v[] = {0.0, -0.0, 1.0 / 3.0, -2.0 / 7.0, 1e-300, 4.9406564584124654e-324,
                               1.7976931348623157e308, -1.7976931348623157e308, 0.1,
                               123456789.123456789, 2.2250738585072014e-308, 1e22, -5e-5};
    size_t nv = sizeof v / sizeof *v;
    if (i < nv) return v[i];
    /* random bit patterns, kept finite */
    for (;;) {
        uint64_t b = rnd();
        double d;
        memcpy(&d, &b, 8);
        if (isfinite(d)) return d;
    }
}

static int same_bits(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof(double)) == 0;
}

/* ---- CSV reading -------------------------------------------------------------- */

static void test_defaults(void)
{
    rfx_read_params p = rfx_read_params_default();
    CHECK(p.target == NULL);
    CHECK(p.delimiter == ',');
    CHECK(p.has_header == -1);
    CHECK(p.comment == '#');
}

static void test_csv_small(void)
{
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    p.target = "y";
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    if (!d) return;
    rfx_cmat X = rfx_data_x(d), Y = rfx_data_y(d);
    CHECK(X.rows == 3 && X.cols == 3 && X.stride == 3);
    CHECK(Y.rows == 3 && Y.cols == 1);
    CHECK(X.data[0] == 1 && X.data[1] == 2 && X.data[2] == 3);
    CHECK(X.data[3] == 4 && X.data[4] == 5.5 && X.data[5] == 6);
    CHECK(X.data[6] == -7 && X.data[7] == 0.8 && X.data[8] == 9);
    CHECK(Y.data[0] == 10 && Y.data[1] == 20 && Y.data[2] == 30);
    CHECK(strcmp(rfx_data_name(d, 0), "a") == 0);
    CHECK(strcmp(rfx_data_name(d, 2), "c") == 0);
    CHECK(strcmp(rfx_data_name(d, SIZE_MAX), "y") == 0);
    CHECK(rfx_data_name(d, 3) == NULL);
    rfx_data_free(d);

    /* the target by index, from the end, and at the front */
    p.target = "3";
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    CHECK(strcmp(rfx_data_name(d, SIZE_MAX), "y") == 0 && rfx_data_y(d).data[2] == 30);
    rfx_data_free(d);
    p.target = "-1";
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    CHECK(strcmp(rfx_data_name(d, SIZE_MAX), "y") == 0 && rfx_data_y(d).data[1] == 20);
    rfx_data_free(d);
    p.target = "0";
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    CHECK(strcmp(rfx_data_name(d, SIZE_MAX), "a") == 0);
    CHECK(strcmp(rfx_data_name(d, 0), "b") == 0 && strcmp(rfx_data_name(d, 2), "y") == 0);
    CHECK(rfx_data_y(d).data[2] == -7 && rfx_data_x(d).data[2 * 3 + 2] == 30);
    rfx_data_free(d);
    p.target = "b";
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    CHECK(rfx_data_y(d).data[1] == 5.5 && rfx_data_x(d).data[3 + 1] == 6);
    rfx_data_free(d);

    /* no target: every column is an input */
    p.target = NULL;
    CHECK_OK(rfx_data_read(DATA("io_small.csv"), &p, &d));
    CHECK(rfx_data_x(d).cols == 4 && rfx_data_y(d).data == NULL && rfx_data_y(d).rows == 0);
    CHECK(rfx_data_name(d, SIZE_MAX) == NULL);
    CHECK(strcmp(rfx_data_name(d, 3), "y") == 0);
    rfx_data_free(d);

    /* a header that is not taken as one: its names are not numbers */
    p.has_header = 0;
    EXPECT_ERROR(DATA("io_small.csv"), &p, RFX_EPARSE, "io_small.csv:2:1: 'a' is not a number",
                 NULL);
}

static void test_csv_noheader(void)
{
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    CHECK_OK(rfx_data_read(DATA("io_noheader.csv"), &p, &d));
    CHECK(rfx_data_x(d).rows == 2 && rfx_data_x(d).cols == 2);
    CHECK(strcmp(rfx_data_name(d, 0), "x0") == 0 && strcmp(rfx_data_name(d, 1), "x1") == 0);
    rfx_data_free(d);
    p.target = "-1";
    CHECK_OK(rfx_data_read(DATA("io_noheader.csv"), &p, &d));
    CHECK(rfx_data_x(d).cols == 1 && rfx_data_x(d).data[1] == 2.5);
    CHECK(rfx_data_y(d).data[0] == 1.5 && rfx_data_y(d).data[1] == 3.5);
    CHECK(strcmp(rfx_data_name(d, 0), "x0") == 0);
    CHECK(strcmp(rfx_data_name(d, SIZE_MAX), "y") == 0);
    rfx_data_free(d);
    /* the target first: inputs are named by their input index */
    p.target = "0";
    CHECK_OK(rfx_data_read(DATA("io_noheader.csv"), &p, &d));
    CHECK(strcmp(rfx_data_name(d, 0), "x0") == 0 && rfx_data_x(d).data[0] == 1.5);
    rfx_data_free(d);
    /* forcing a header: the first row becomes names */
    p.target = NULL;
    p.has_header = 1;
    CHECK_OK(rfx_data_read(DATA("io_noheader.csv"), &p, &d));
    CHECK(rfx_data_x(d).rows == 1 && strcmp(rfx_data_name(d, 1), "1.5") == 0);
    rfx_data_free(d);
    /* a name given for a file without names */
    p.has_header = 0;
    p.target = "y";
    EXPECT_ERROR(DATA("io_noheader.csv"), &p, RFX_EPARSE, "io_noheader.csv: target column 'y'",
                 "no header");
}

static void test_csv_quoted(void)
{
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    p.target = "target";
    CHECK_OK(rfx_data_read(DATA("io_quoted.csv"), &p, &d));
    if (!d) return;
    CHECK(rfx_data_x(d).rows == 2 && rfx_data_x(d).cols == 3);
    CHECK(strcmp(rfx_data_name(d, 0), "x, first") == 0);
    CHECK(strcmp(rfx_data_name(d, 1), "x \"second\"") == 0);
    CHECK(strcmp(rfx_data_name(d, 2), "multi\nline") == 0);
    CHECK(rfx_data_x(d).data[3] == 5 && rfx_data_x(d).data[5] == 7 && rfx_data_y(d).data[1] == 8);
    rfx_data_free(d);
    /* line numbers count the physical lines of a field spanning two */
    EXPECT_ERROR(write_text("quoted_bad", "\"a\nb\",c\n1,2\n3,x\n"), NULL, RFX_EPARSE,
                 ":4:2: 'x' is not a number", NULL);
    /* a blank line and a comment-like line inside quotes are data */
    CHECK_OK(read_text("quoted_blank", "\"a\n\n# not a comment\",b\n1,2\n", NULL, -1, &d));
    if (d) CHECK(strcmp(rfx_data_name(d, 0), "a\n\n# not a comment") == 0);
    rfx_data_free(d);
    d = NULL;
    /* a quoted number is a number */
    CHECK_OK(read_text("quoted_num", "\"1.5\",\" 2 \"\n", NULL, -1, &d));
    if (d) CHECK(rfx_data_x(d).data[0] == 1.5 && rfx_data_x(d).data[1] == 2);
    rfx_data_free(d);
}

static void test_csv_dialects(void)
{
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    /* CRLF line ends and a byte order mark */
    CHECK_OK(read_text("crlf", "\xEF\xBB\xBFu,v\r\n1,2\r\n\r\n3,4\r\n", "v", -1, &d));
    if (d) {
        CHECK(strcmp(rfx_data_name(d, 0), "u") == 0 && rfx_data_x(d).rows == 2);
        CHECK(rfx_data_y(d).data[1] == 4);
    }
    rfx_data_free(d);
    d = NULL;
    /* no final line break */
    CHECK_OK(read_text("nolf", "1,2\n3,4", NULL, -1, &d));
    if (d) CHECK(rfx_data_x(d).rows == 2 && rfx_data_x(d).data[3] == 4);
    rfx_data_free(d);
    d = NULL;
    /* tabs and semicolons */
    p.delimiter = '\t';
    CHECK_OK(rfx_data_read(write_text("tab", "a\tb\n 1 \t 2\n"), &p, &d));
    if (d) CHECK(rfx_data_x(d).cols == 2 && rfx_data_x(d).data[1] == 2);
    rfx_data_free(d);
    d = NULL;
    p.delimiter = ';';
    CHECK_OK(rfx_data_read(write_text("semi", "a;b\n1.5;2\n"), &p, &d));
    if (d) CHECK(rfx_data_x(d).data[0] == 1.5 && strcmp(rfx_data_name(d, 1), "b") == 0);
    rfx_data_free(d);
    d = NULL;
    /* a decimal comma is not a number: the reader assumes the C locale */
    p.has_header = 0;
    EXPECT_ERROR(write_text("semi2", "1,5;2\n"), &p, RFX_EPARSE, ":1:1: '1,5' is not a number",
                 NULL);
    /* another comment character, and none */
    p = rfx_read_params_default();
    p.comment = '%';
    CHECK_OK(rfx_data_read(write_text("pct", "% note\n1,2\n"), &p, &d));
    if (d) CHECK(rfx_data_x(d).rows == 1);
    rfx_data_free(d);
    d = NULL;
    p.comment = 0;
    EXPECT_ERROR(write_text("nocomment", "1,2\n# x,y\n"), &p, RFX_EPARSE, ":2:1:", NULL);
    /* spaces around numbers, exponents, hexadecimal floats, underflow */
    CHECK_OK(read_text("forms", "  -1.5e3 ,\t+2 , 0x1p-2, 1e-400\n", NULL, -1, &d));
    if (d) {
        const double *x = rfx_data_x(d).data;
        CHECK(x[0] == -1500 && x[1] == 2 && x[2] == 0.25 && x[3] == 0);
    }
    rfx_data_free(d);
    d = NULL;
    /* header detection: one text cell is enough; NaN is data, not a name */
    CHECK_OK(read_text("detect1", "1,b\n2,3\n", NULL, -1, &d));
    if (d) CHECK(rfx_data_x(d).rows == 1 && strcmp(rfx_data_name(d, 0), "1") == 0);
    rfx_data_free(d);
    d = NULL;
    EXPECT_ERROR(write_text("detect2", "1,nan\n2,3\n"), NULL, RFX_EPARSE,
                 ":1:2: NaN is not allowed", NULL);
    /* an empty header name gets a made-up one; a name equal to an index wins */
    CHECK_OK(read_text("emptyname", "a,,2\n1,2,3\n", "2", -1, &d));
    if (d) {
        CHECK(strcmp(rfx_data_name(d, 1), "x1") == 0);
        CHECK(rfx_data_y(d).data[0] == 3 && strcmp(rfx_data_name(d, SIZE_MAX), "2") == 0);
    }
    rfx_data_free(d);
    d = NULL;
    CHECK_OK(read_text("nameidx", "a,1,b\n1,2,3\n", "1", -1, &d));
    if (d) CHECK(rfx_data_y(d).data[0] == 2);
    rfx_data_free(d);
    d = NULL;
    CHECK_OK(read_text("nameidx2", "2,a,b\n1,2,3\n", "2", -1, &d));
    if (d) CHECK(rfx_data_y(d).data[0] == 1);
    rfx_data_free(d);
}

static void test_csv_errors(void)
{
    rfx_read_params p = rfx_read_params_default();
    EXPECT_ERROR(DATA("io_badcell.csv"), NULL, RFX_EPARSE,
                 "io_badcell.csv:3:2: 'abc' is not a number", NULL);
    EXPECT_ERROR(DATA("io_ragged.csv"), NULL, RFX_EPARSE,
                 "io_ragged.csv:3: row has 3 fields, expected 4 (as in line 1)", NULL);
    EXPECT_ERROR(write_text("long", "# c\n\n1,2\n3,4,5\n"), NULL, RFX_EPARSE,
                 ":4: row has 3 fields, expected 2 (as in line 3)", NULL);
    EXPECT_ERROR(write_text("nan", "1,2\n3,NaN\n"), NULL, RFX_EPARSE, ":2:2: NaN is not allowed",
                 "tmp_nan");
    EXPECT_ERROR(write_text("inf", "1,2\n3,4\n\n-inf,5\n"), NULL, RFX_EPARSE,
                 ":4:1: Inf is not allowed", NULL);
    EXPECT_ERROR(write_text("infinity", "1,Infinity\n"), NULL, RFX_EPARSE,
                 ":1:2: Inf is not allowed", NULL);
    EXPECT_ERROR(write_text("range", "1,2\n1e999,3\n"), NULL, RFX_EPARSE,
                 ":2:1: '1e999' is out of the range", NULL);
    EXPECT_ERROR(write_text("emptycell", "1,,3\n"), NULL, RFX_EPARSE, ":1:2: empty cell", NULL);
    EXPECT_ERROR(write_text("emptycell2", "1,2,\n"), NULL, RFX_EPARSE, ":1:3: empty cell", NULL);
    EXPECT_ERROR(write_text("trail", "a,b\n1,2x\n"), NULL, RFX_EPARSE, ":2:2: '2x' is not a number",
                 NULL);
    EXPECT_ERROR(write_text("empty", ""), NULL, RFX_EPARSE, "tmp_empty: empty file (no rows)",
                 NULL);
    EXPECT_ERROR(write_text("blank", "\n  \n# only comments\n\r\n"), NULL, RFX_EPARSE,
                 "tmp_blank: empty file (no rows)", NULL);
    EXPECT_ERROR(write_text("headeronly", "a,b\n# nothing else\n"), NULL, RFX_EPARSE,
                 "tmp_headeronly: header only, no data rows", NULL);
    p.has_header = 1;
    EXPECT_ERROR(write_text("headeronly2", "1,2\n"), &p, RFX_EPARSE, "header only", NULL);
    p = rfx_read_params_default();
    p.target = "z";
    EXPECT_ERROR(write_text("notarget", "a,b,c\n1,2,3\n"), &p, RFX_EPARSE,
                 "tmp_notarget: target column 'z' not found (columns: a, b, c)", NULL);
    p.target = "7";
    EXPECT_ERROR(write_text("badindex", "a,b,c,d\n1,2,3,4\n"), &p, RFX_EPARSE,
                 "tmp_badindex: target index 7 out of range (4 columns)", NULL);
    p.target = "-5";
    EXPECT_ERROR(write_text("badindex2", "1,2,3,4\n"), &p, RFX_EPARSE,
                 "target index -5 out of range (4 columns)", NULL);
    p.target = "99999999999999999999999999";
    EXPECT_ERROR(write_text("badindex3", "1,2,3,4\n"), &p, RFX_EPARSE, "out of range", NULL);
    p.target = "a";
    EXPECT_ERROR(write_text("ambiguous", "a,b,a\n1,2,3\n"), &p, RFX_EPARSE,
                 "target column 'a' is ambiguous", NULL);
    p.target = "y";
    EXPECT_ERROR(write_text("onlytarget", "y\n1\n2\n"), &p, RFX_EPARSE, "tmp_onlytarget: no input "
                 "columns", NULL);
    /* quoting errors */
    EXPECT_ERROR(write_text("openquote", "a,b\n1,\"2\n3,4\n"), NULL, RFX_EPARSE,
                 "tmp_openquote:2: quoted field not closed", NULL);
    EXPECT_ERROR(write_text("strayquote", "a,b\n1,2\"3\n"), NULL, RFX_EPARSE,
                 "tmp_strayquote:2:2: misplaced quote", NULL);
    EXPECT_ERROR(write_text("afterquote", "a,b\n\"1\"x,2\n"), NULL, RFX_EPARSE,
                 "tmp_afterquote:2:1: misplaced quote", NULL);
    /* a NUL byte inside a cell */
    {
        const char *path = rfx_test_tmp("nul");
        write_bytes(path, "1,2\n3,4\0" "5\n", 10);
        EXPECT_ERROR(path, NULL, RFX_EPARSE, ":2:2:", "is not a number");
    }
    /* a long bad cell is quoted only in part */
    {
        char text[300];
        memset(text, 'z', sizeof text);
        memcpy(text, "1,", 2);
        text[sizeof text - 2] = '\n';
        text[sizeof text - 1] = '\0';
        rfx_read_params nohead = rfx_read_params_default();
        nohead.has_header = 0;
        EXPECT_ERROR(write_text("longcell", text), &nohead, RFX_EPARSE, ":1:2: 'zzzz",
                     "...' is not a number");
    }
    /* files that cannot be read */
    EXPECT_ERROR(RFX_BINARY_DIR "/no/such/file.csv", NULL, RFX_EIO, "/no/such/file.csv: cannot open",
                 "No such file");
    EXPECT_ERROR(RFX_BINARY_DIR, NULL, RFX_EIO, RFX_BINARY_DIR, NULL);
    /* bad parameters and arguments */
    p = rfx_read_params_default();
    p.has_header = 2;
    EXPECT_ERROR(DATA("io_small.csv"), &p, RFX_EINVAL, "has_header", NULL);
    p = rfx_read_params_default();
    p.delimiter = '"';
    EXPECT_ERROR(DATA("io_small.csv"), &p, RFX_EINVAL, "delimiter", NULL);
    p = rfx_read_params_default();
    p.comment = ',';
    EXPECT_ERROR(DATA("io_small.csv"), &p, RFX_EINVAL, "comment", NULL);
    p = rfx_read_params_default();
    p.target = "";
    EXPECT_ERROR(DATA("io_small.csv"), &p, RFX_EINVAL, "target", NULL);
    CHECK_STATUS(rfx_data_read(NULL, NULL, &(rfx_data *){NULL}), RFX_EINVAL);
    CHECK_STATUS(rfx_data_read(DATA("io_small.csv"), NULL, NULL), RFX_EINVAL);
    /* accessors on NULL */
    rfx_data_free(NULL);
    CHECK(rfx_data_x(NULL).data == NULL && rfx_data_y(NULL).rows == 0);
    CHECK(rfx_data_name(NULL, 0) == NULL);
}

/* A generated 20000 x 10 file reads in well under a second (a generous
 * bound here, for sanitizer builds). */
static void test_csv_large(void)
{
    enum { N = 20000, D = 10 };
    const char *path = rfx_test_tmp("large.csv");
    double *M = malloc(sizeof(double) * N * D);
    rfx_data *d = NULL;
    if (!M) return;
    for (size_t i = 0; i < (size_t)N * D; i++)
        M[i] = ((double)(rnd() >> 11) * 0x1.0p-53 - 0.5) * 1e3;
    CHECK_OK(rfx_csv_write(path, rfx_cmat_of(M, N, D), NULL));
    double t0 = rfx_helper_seconds();
    rfx_read_params p = rfx_read_params_default();
    p.target = "-1";
    CHECK_OK(rfx_data_read(path, &p, &d));
    double secs = rfx_helper_seconds() - t0;
    printf("read a %d x %d CSV in %.3f s\n", N, D, secs); /* information: bench/ times it */
    if (d) {
        rfx_cmat X = rfx_data_x(d), Y = rfx_data_y(d);
        int same = X.rows == N && X.cols == D - 1;
        for (size_t i = 0; same && i < N; i++) {
            same = memcmp(X.data + i * (D - 1), M + i * D, (D - 1) * sizeof(double)) == 0 &&
                   memcmp(&Y.data[i], &M[i * D + D - 1], sizeof(double)) == 0;
        }
        CHECK(same);
    }
    rfx_data_free(d);
    free(M);
    remove(path);
}

/* ---- writers and round trips --------------------------------------------------- */

static void test_round_trips(void)
{
    enum { R = 37, C = 5, S = 7 };
    double M[R * S];
    const char *names[C] = {"a", "b, with comma", "c \"quoted\"", "#hash", " spaced "};
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    for (size_t i = 0; i < R * S; i++) M[i] = tricky(i);
    rfx_cmat V = {M, R, C, S}; /* a strided view: stride 7, 5 columns */

    /* CSV with names */
    const char *path = rfx_test_tmp("rt.csv");
    CHECK_OK(rfx_csv_write(path, V, names));
    p.has_header = 1;
    CHECK_OK(rfx_data_read(path, &p, &d));
    if (d) {
        rfx_cmat X = rfx_data_x(d);
        int same = X.rows == R && X.cols == C;
        for (size_t i = 0; same && i < R; i++) same = same_bits(X.data + i * C, M + i * S, C);
        CHECK(same);
        for (size_t j = 0; j < C; j++) CHECK(strcmp(rfx_data_name(d, j), names[j]) == 0);
    }
    rfx_data_free(d);
    d = NULL;
    /* detection finds that header too */
    CHECK_OK(rfx_data_read(path, NULL, &d));
    if (d) CHECK(rfx_data_x(d).rows == R);
    rfx_data_free(d);
    d = NULL;

    /* CSV without names, rewritten over the same file */
    CHECK_OK(rfx_csv_write(path, V, NULL));
    p.has_header = -1;
    p.target = "2";
    CHECK_OK(rfx_data_read(path, &p, &d));
    if (d) {
        rfx_cmat X = rfx_data_x(d), Y = rfx_data_y(d);
        int same = X.rows == R && X.cols == C - 1;
        for (size_t i = 0; same && i < R; i++) {
            same = same_bits(X.data + i * (C - 1), M + i * S, 2) &&
                   same_bits(X.data + i * (C - 1) + 2, M + i * S + 3, 2) &&
                   same_bits(Y.data + i, M + i * S + 2, 1);
        }
        CHECK(same);
    }
    rfx_data_free(d);
    d = NULL;

    /* .npy */
    path = rfx_test_tmp("rt.npy");
    CHECK_OK(rfx_npy_write(path, V));
    CHECK_OK(rfx_data_read(path, NULL, &d));
    if (d) {
        rfx_cmat X = rfx_data_x(d);
        int same = X.rows == R && X.cols == C;
        for (size_t i = 0; same && i < R; i++) same = same_bits(X.data + i * C, M + i * S, C);
        CHECK(same);
        CHECK(strcmp(rfx_data_name(d, 4), "x4") == 0);
    }
    rfx_data_free(d);
    d = NULL;
    /* the layout numpy expects: version 1.0, data aligned to 64 bytes */
    {
        unsigned char head[16];
        FILE *fp = fopen(path, "rb");
        long size = -1;
        if (fp) {
            CHECK(fread(head, 1, sizeof head, fp) == sizeof head);
            fseek(fp, 0, SEEK_END);
            size = ftell(fp);
            fclose(fp);
        }
        CHECK(memcmp(head, "\x93NUMPY\x01\x00", 8) == 0);
        size_t hlen = (size_t)head[8] | (size_t)head[9] << 8;
        CHECK((10 + hlen) % 64 == 0);
        CHECK(size == (long)(10 + hlen + R * C * 8));
    }
    /* one column, and an empty matrix */
    {
        double col[3] = {1, 2, 3};
        CHECK_OK(rfx_npy_write(path, rfx_cmat_of(col, 3, 1)));
        CHECK_OK(rfx_data_read(path, NULL, &d));
        if (d) CHECK(rfx_data_x(d).cols == 1 && rfx_data_x(d).data[2] == 3);
        rfx_data_free(d);
        d = NULL;
        CHECK_OK(rfx_npy_write(path, rfx_cmat_of(NULL, 0, 3)));
        EXPECT_ERROR(path, NULL, RFX_EPARSE, "no rows", NULL);
    }
}

static void test_write_errors(void)
{
    double M[4] = {1, 2, 3, 4};
    const char *bad = RFX_BINARY_DIR "/no_such_dir/out.csv";
    const char *names[2] = {"a", NULL};
    CHECK_STATUS(rfx_csv_write(bad, rfx_cmat_of(M, 2, 2), NULL), RFX_EIO);
    CHECK(contains(rfx_last_error(), "no_such_dir/out.csv"));
    CHECK(contains(rfx_last_error(), "No such file"));
    CHECK_STATUS(rfx_npy_write(RFX_BINARY_DIR "/no_such_dir/out.npy", rfx_cmat_of(M, 2, 2)),
                 RFX_EIO);
    CHECK(contains(rfx_last_error(), "no_such_dir/out.npy"));
    CHECK_STATUS(rfx_csv_write(rfx_test_tmp("w.csv"), (rfx_cmat){M, 2, 2, 1}, NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_npy_write(rfx_test_tmp("w.npy"), (rfx_cmat){NULL, 2, 2, 2}), RFX_EINVAL);
    CHECK_STATUS(rfx_csv_write(rfx_test_tmp("w.csv"), rfx_cmat_of(M, 2, 2), names), RFX_EINVAL);
    CHECK_STATUS(rfx_csv_write(NULL, rfx_cmat_of(M, 2, 2), NULL), RFX_EINVAL);
    CHECK_STATUS(rfx_npy_write(NULL, rfx_cmat_of(M, 2, 2)), RFX_EINVAL);
    /* a failed rename (a file cannot replace a directory) leaves the
     * directory in place and no temporary file beside it */
    {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", rfx_test_tmp("adir"));
        mkdir(dir, 0755);
        CHECK_STATUS(rfx_npy_write(dir, rfx_cmat_of(M, 2, 2)), RFX_EIO);
        CHECK(contains(rfx_last_error(), "tmp_adir"));
        struct stat sb;
        CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
    }
    /* a successful write replaces the file and keeps its mode */
    {
        const char *path = rfx_test_tmp("mode.csv");
        struct stat sb;
        write_text("mode.csv", "old\n");
        chmod(path, 0640);
        CHECK_OK(rfx_csv_write(path, rfx_cmat_of(M, 2, 2), NULL));
        CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0640);
        rfx_data *d = NULL;
        CHECK_OK(rfx_data_read(path, NULL, &d));
        if (d) CHECK(rfx_data_x(d).rows == 2 && rfx_data_x(d).data[3] == 4);
        rfx_data_free(d);
    }
}

/* ---- .npy reading ------------------------------------------------------------------ */

static void test_npy(void)
{
    char path[4096]; /* rfx_test_tmp reuses its buffer */
    double v[12];
    unsigned char b[12 * 8 + 8];
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    snprintf(path, sizeof path, "%s", rfx_test_tmp("in.npy"));
    for (int i = 0; i < 12; i++) v[i] = 0.5 * i - 1.0 / 3.0;
    memset(b, 0, sizeof b); /* the trailing-bytes case writes 4 past the values */
    le_f8(b, v, 12);

    /* versions 1.0, 2.0 and 3.0 */
    for (int major = 1; major <= 3; major++) {
        write_npy(path, major, "<f8", "False", "(4, 3)", b, 96);
        CHECK_OK(rfx_data_read(path, NULL, &d));
        if (d) CHECK(rfx_data_x(d).rows == 4 && same_bits(rfx_data_x(d).data, v, 12));
        rfx_data_free(d);
        d = NULL;
    }
    /* the target by index; a name is refused */
    write_npy(path, 1, "<f8", "False", "(4, 3)", b, 96);
    p.target = "-1";
    CHECK_OK(rfx_data_read(path, &p, &d));
    if (d) {
        CHECK(rfx_data_x(d).cols == 2 && rfx_data_y(d).data[3] == v[11]);
        CHECK(rfx_data_x(d).data[7] == v[10] && strcmp(rfx_data_name(d, SIZE_MAX), "y") == 0);
        CHECK(strcmp(rfx_data_name(d, 1), "x1") == 0);
    }
    rfx_data_free(d);
    d = NULL;
    p.target = "1";
    CHECK_OK(rfx_data_read(path, &p, &d));
    if (d) CHECK(rfx_data_y(d).data[0] == v[1] && rfx_data_x(d).data[1] == v[2]);
    rfx_data_free(d);
    d = NULL;
    p.target = "y";
    EXPECT_ERROR(path, &p, RFX_EPARSE, "tmp_in.npy: target 'y' is not a column index", NULL);
    p.target = "3";
    EXPECT_ERROR(path, &p, RFX_EPARSE, "target index 3 out of range (3 columns)", NULL);
    p.target = NULL;
    /* chosen by content: a .npy named .csv */
    write_npy(rfx_test_tmp("npy.csv"), 1, "<f8", "False", "(4, 3)", b, 96);
    CHECK_OK(rfx_data_read(rfx_test_tmp("npy.csv"), NULL, &d));
    if (d) CHECK(rfx_data_x(d).cols == 3);
    rfx_data_free(d);
    d = NULL;

    /* float32 converts exactly; big-endian float64 */
    {
        float f[6] = {1.5f, -0.1f, 3e-39f, 1e30f, 0.0f, -2.0f};
        unsigned char fb[24];
        le_f4(fb, f, 6);
        write_npy(path, 1, "<f4", "False", "(2, 3)", fb, 24);
        CHECK_OK(rfx_data_read(path, NULL, &d));
        if (d)
            for (int i = 0; i < 6; i++) CHECK(rfx_data_x(d).data[i] == (double)f[i]);
        rfx_data_free(d);
        d = NULL;
        unsigned char be[16];
        double w[2] = {1.25, -3.5};
        le_f8(be, w, 2);
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++) {
                unsigned char t = be[8 * i + k];
                be[8 * i + k] = be[8 * i + 7 - k];
                be[8 * i + 7 - k] = t;
            }
        write_npy(path, 1, ">f8", "False", "(2,)", be, 16);
        CHECK_OK(rfx_data_read(path, NULL, &d));
        if (d) CHECK(rfx_data_x(d).data[0] == 1.25 && rfx_data_x(d).data[1] == -3.5);
        rfx_data_free(d);
        d = NULL;
    }
    /* 1-D is n x 1; Fortran order is fine when it is the same layout */
    write_npy(path, 1, "<f8", "False", "(5,)", b, 40);
    CHECK_OK(rfx_data_read(path, NULL, &d));
    if (d) CHECK(rfx_data_x(d).rows == 5 && rfx_data_x(d).cols == 1 && rfx_data_x(d).data[4] == v[4]);
    rfx_data_free(d);
    d = NULL;
    write_npy(path, 1, "<f8", "True", "(5,)", b, 40);
    CHECK_OK(rfx_data_read(path, NULL, &d));
    rfx_data_free(d);
    d = NULL;
    p.target = "0";
    write_npy(path, 1, "<f8", "False", "(5,)", b, 40);
    EXPECT_ERROR(path, &p, RFX_EPARSE, "no input columns", NULL);
    p.target = NULL;

    /* errors */
    write_npy(path, 1, "<f8", "True", "(4, 3)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE,
                 "Fortran order not supported, save with np.ascontiguousarray", "tmp_in.npy");
    write_npy(path, 1, "<f8", "False", "(4, 3)", b, 95);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "tmp_in.npy: truncated", NULL);
    write_npy(path, 1, "<f8", "False", "(4, 3)", b, 100);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "tmp_in.npy: 4 trailing bytes", NULL);
    write_npy(path, 1, "<f8", "False", "(4611686018427387904, 4)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "tmp_in.npy: shape", "too large");
    write_npy(path, 2, "<f8", "False", "(1000000000, 1000)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "truncated", NULL);
    write_npy(path, 1, "<f8", "False", "(99999999999999999999999, 4)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "too large", NULL);
    write_npy(path, 1, "<i8", "False", "(4, 3)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "dtype '<i8' is not supported", NULL);
    write_npy(path, 1, "<f8", "False", "(2, 2, 3)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "3-d arrays are not supported", NULL);
    write_npy(path, 1, "<f8", "False", "()", b, 8);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "0-d", NULL);
    write_npy(path, 1, "<f8", "False", "(0, 3)", b, 0);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "no rows", NULL);
    write_npy(path, 1, "<f8", "False", "(3, 0)", b, 0);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "no columns", NULL);
    write_npy(path, 1, "<f8", "Maybe", "(4, 3)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "malformed .npy header", NULL);
    write_npy(path, 1, "<f8", "False", "(4, x)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "malformed .npy header", NULL);
    write_npy(path, 4, "<f8", "False", "(4, 3)", b, 96);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "version 4.0 is not supported", NULL);
    {
        double w[12];
        unsigned char wb[96];
        memcpy(w, v, sizeof w);
        w[3 * 3 + 2] = NAN;
        le_f8(wb, w, 12);
        write_npy(path, 1, "<f8", "False", "(4, 3)", wb, 96);
        EXPECT_ERROR(path, NULL, RFX_EPARSE, "tmp_in.npy: row 3, column 2: NaN is not allowed",
                     NULL);
        w[3 * 3 + 2] = 0;
        w[1 * 3 + 0] = -INFINITY;
        le_f8(wb, w, 12);
        write_npy(path, 1, "<f8", "False", "(4, 3)", wb, 96);
        EXPECT_ERROR(path, NULL, RFX_EPARSE, "row 1, column 0: Inf is not allowed", NULL);
        float f[2] = {1.0f, NAN};
        unsigned char fb[8];
        le_f4(fb, f, 2);
        write_npy(path, 1, "<f4", "False", "(2,)", fb, 8);
        EXPECT_ERROR(path, NULL, RFX_EPARSE, "row 1, column 0: NaN", NULL);
    }
    /* cut inside the preamble and the header */
    write_bytes(path, "\x93NUMPY\x01", 7);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "truncated", NULL);
    write_bytes(path, "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "truncated", NULL);
    write_bytes(path, "\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, "implausibly large", NULL);
    /* 0x93 not followed by NUMPY: read as (bad) text */
    write_bytes(path, "\x93NUMPX,1\n", 9);
    EXPECT_ERROR(path, NULL, RFX_EPARSE, NULL, NULL);
}

/* Messages quote input bytes safely for a terminal: control bytes, DEL, C1
 * controls and bytes that are not well-formed UTF-8 as \xHH (\t \n \r by
 * name); printable ASCII and UTF-8 as they are. */
static void test_quote(void)
{
    static const struct {
        const char *in;
        size_t max;
        const char *out;
    } cases[] = {
        { "plain", 40, "plain" },
        { "\x1b[2J", 40, "\\x1b[2J" },
        { "a\tb\nc\rd", 40, "a\\tb\\nc\\rd" },
        { "\x7f\x01", 40, "\\x7f\\x01" },
        { "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x99\x82", 40,
          "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x99\x82" },
        { "\xc2\x9b" "1m", 40, "\\xc2\\x9b1m" },      /* C1 CSI */
        { "\xc0\xaf", 40, "\\xc0\\xaf" },             /* overlong '/' */
        { "\xed\xa0\x80", 40, "\\xed\\xa0\\x80" },    /* a surrogate */
        { "\xff\xfe", 40, "\\xff\\xfe" },
        { "\xe2\x82", 40, "\\xe2\\x82" },             /* cut short */
        { "abcdef", 3, "abc..." },
        { "", 40, "" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[RFX__QUOTE_SIZE(40)];
        rfx__quote(cases[k].in, strlen(cases[k].in), cases[k].max, buf, sizeof buf);
        CHECK_MSG(strcmp(buf, cases[k].out) == 0, "quote case %zu: got '%s', expected '%s'", k,
                  buf, cases[k].out);
    }
    /* the reader's messages: a cell, the header names and the file name */
    {
        rfx_read_params p = rfx_read_params_default();
        const char *path = write_text("esc.csv", "a,b\x1b[2J,y\n1,2,3\n4,5\x1b[2J,6\n");
        char name[512], want[1024];
        EXPECT_ERROR(path, NULL, RFX_EPARSE, ":3:2: '5\\x1b[2J' is not a number", NULL);
        CHECK(strchr(rfx_last_error(), '\x1b') == NULL);
        p.target = "z";
        EXPECT_ERROR(path, &p, RFX_EPARSE, "target column 'z' not found (columns: a, b\\x1b[2J, y)",
                     NULL);
        CHECK(strchr(rfx_last_error(), '\x1b') == NULL);
        snprintf(name, sizeof name, "%s", rfx_test_tmp("esc\x1b[2J.csv"));
        write_bytes(name, "a,b\n1,x\n", 8);
        snprintf(want, sizeof want, "'x' is not a number");
        EXPECT_ERROR(name, NULL, RFX_EPARSE, "esc\\x1b[2J.csv:2:2: ", want);
        CHECK(strchr(rfx_last_error(), '\x1b') == NULL);
        remove(name);
    }
}

/* Read the bytes of the file src through a pipe, as "/dev/fd/N": a child
 * process writes them. */
static rfx_status read_through_pipe(const char *src, const rfx_read_params *p, rfx_data **out,
                                    char *shown, size_t size)
{
    int fds[2];
    rfx_status st;
    if (pipe(fds) != 0) return RFX_EIO;
    pid_t pid = fork();
    if (pid == 0) {
        FILE *fp = fopen(src, "rb");
        char buf[4096];
        size_t got;
        close(fds[0]);
        while (fp && (got = fread(buf, 1, sizeof buf, fp)) > 0)
            if (write(fds[1], buf, got) != (ssize_t)got) break;
        _exit(0);
    }
    close(fds[1]);
    snprintf(shown, size, "/dev/fd/%d", fds[0]);
    st = rfx_data_read(shown, p, out);
    close(fds[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    return st;
}

/* A .npy from a pipe: its values are read as they come, in blocks, with no
 * allocation of what the header claims; a header that claims more than
 * comes is a data error naming the values claimed and received. */
static void test_npy_pipe(void)
{
    enum { N = 100000, C = 3 };
    char path[512], shown[64], want[256];
    double *v = malloc(N * C * sizeof *v);
    unsigned char *b = malloc(N * C * 8);
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    CHECK(v && b);
    if (!v || !b) goto done;
    snprintf(path, sizeof path, "%s", rfx_test_tmp("pipe.npy"));
    for (size_t i = 0; i < (size_t)N * C; i++) v[i] = tricky(i);
    le_f8(b, v, (size_t)N * C);
    write_npy(path, 1, "<f8", "False", "(100000, 3)", b, (size_t)N * C * 8);
    p.target = "1";
    CHECK_OK(read_through_pipe(path, &p, &d, shown, sizeof shown));
    if (d) {
        rfx_cmat X = rfx_data_x(d), Y = rfx_data_y(d);
        int same = X.rows == N && X.cols == 2 && Y.rows == N;
        for (size_t i = 0; same && i < N; i++)
            same = memcmp(&X.data[2 * i], &v[C * i], 8) == 0 &&
                   memcmp(&X.data[2 * i + 1], &v[C * i + 2], 8) == 0 &&
                   memcmp(&Y.data[i], &v[C * i + 1], 8) == 0;
        CHECK_MSG(same, "a .npy read from a pipe differs from its values");
        rfx_data_free(d);
        d = NULL;
    }
    /* a header claiming 4 * 10^11 values, then 8 values */
    write_npy(path, 1, "<f8", "False", "(100000000000, 4)", b, 64);
    CHECK_STATUS(read_through_pipe(path, NULL, &d, shown, sizeof shown), RFX_EPARSE);
    snprintf(want, sizeof want, "%s: truncated .npy data: shape (100000000000, 4) needs "
             "400000000000 values, the input ended after 8", shown);
    CHECK_MSG(strcmp(rfx_last_error(), want) == 0, "message '%s', expected '%s'",
              rfx_last_error(), want);
    /* cut inside a value, and short by a row */
    write_npy(path, 1, "<f8", "False", "(4, 3)", b, 95);
    CHECK_STATUS(read_through_pipe(path, NULL, &d, shown, sizeof shown), RFX_EPARSE);
    CHECK(contains(rfx_last_error(), "needs 12 values, the input ended after 11"));
    write_npy(path, 1, "<f8", "False", "(100000, 3)", b, (size_t)(N - 1) * C * 8);
    CHECK_STATUS(read_through_pipe(path, NULL, &d, shown, sizeof shown), RFX_EPARSE);
    CHECK(contains(rfx_last_error(), "needs 300000 values, the input ended after 299997"));
    CHECK(d == NULL);
done:
    free(v);
    free(b);
}

/* Mangled inputs: any status is fine, a crash or a leak is not (run under
 * the sanitizers). */
static void test_fuzz(void)
{
    const char *path = rfx_test_tmp("fuzz");
    static const char seed_csv[] = "a,\"b\nc\",y\n1,2,3\n# c\n4,\"5\",6\n";
    unsigned char base[256], buf[256];
    double v[6] = {1, 2, 3, 4, 5, 6};
    size_t nbase;
    int ok = 1;
    {
        unsigned char data[48];
        le_f8(data, v, 6);
        write_npy(path, 1, "<f8", "False", "(3, 2)", data, 48);
        FILE *fp = fopen(path, "rb");
        nbase = fp ? fread(base, 1, sizeof base, fp) : 0;
        if (fp) fclose(fp);
    }
    for (int round = 0; round < 3000; round++) {
        size_t len;
        if (round % 2 == 0) {
            memcpy(buf, base, nbase);
            len = nbase;
        } else {
            len = sizeof seed_csv - 1;
            memcpy(buf, seed_csv, len);
        }
        int edits = 1 + (int)(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)(rnd() % len);
            switch (rnd() % 3) {
            case 0: buf[at] = (unsigned char)rnd(); break;
            case 1: len = at + 1; break; /* truncate */
            default: buf[at] = "\",\n#\r 0.-e\x93"[rnd() % 12]; break;
            }
        }
        write_bytes(path, buf, len);
        rfx_read_params p = rfx_read_params_default();
        p.target = (round % 3 == 0) ? "-1" : NULL;
        rfx_data *d = NULL;
        rfx_status st = rfx_data_read(path, &p, &d);
        if (st == RFX_OK) {
            rfx_cmat X = rfx_data_x(d);
            ok &= X.rows > 0 && X.cols > 0 && rfx__all_finite(X, &(size_t){0}, &(size_t){0});
            for (size_t j = 0; j < X.cols; j++) ok &= rfx_data_name(d, j) != NULL;
            rfx_data_free(d);
        } else {
            ok &= d == NULL && rfx_last_error()[0] != '\0';
        }
    }
    CHECK(ok);
    remove(path);
}

/* The one output path (src/core/output.c), through both writers: a
 * symbolic link stays a link and its target gets the data; a replaced file
 * keeps its mode and a new one gets 0666 less the umask; a device is
 * written in place (it stays a device) and its write errors are reported
 * (ENOSPC from /dev/full); a directory is refused. */
static void test_output_targets(void)
{
    double M[4] = {1, 2, 3, 4};
    char target[4096], link[4096];
    struct stat sb;
    snprintf(target, sizeof target, "%s", rfx_test_tmp("out_target.csv"));
    snprintf(link, sizeof link, "%s", rfx_test_tmp("out_link.csv"));
    remove(target);
    remove(link);
    mode_t mask = umask(022);
    umask(mask);
    CHECK_OK(rfx_csv_write(target, rfx_cmat_of(M, 2, 2), NULL));
    CHECK(stat(target, &sb) == 0 && (sb.st_mode & 0777) == (0666 & ~mask));
    chmod(target, 0640);
    CHECK(symlink(target, link) == 0);
    CHECK_OK(rfx_csv_write(link, rfx_cmat_of(M, 1, 4), NULL));
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(stat(target, &sb) == 0 && (sb.st_mode & 0777) == 0640);
    rfx_data *d = NULL;
    rfx_read_params rp = rfx_read_params_default();
    rp.has_header = 0;
    CHECK_OK(rfx_data_read(target, &rp, &d));
    if (d) CHECK(rfx_data_x(d).rows == 1 && rfx_data_x(d).cols == 4);
    rfx_data_free(d);
    /* a model file over the link: the same */
    rfx_features_params fp = rfx_features_params_default();
    fp.n_features = 8;
    rfx_fit_params pp = rfx_fit_params_default();
    pp.method = RFX_METHOD_RIDGE;
    pp.features = fp;
    pp.lambda = 1e-3;
    pp.features.length_scale = 1.0;
    double X[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    rfx_model *m = NULL;
    CHECK_OK(rfx_model_fit(&pp, rfx_cmat_of(X, 8, 1), rfx_cmat_of(y, 8, 1), &m, NULL));
    if (m) {
        CHECK_OK(rfx_model_save(m, link));
        CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
        CHECK(stat(target, &sb) == 0 && (sb.st_mode & 0777) == 0640);
        rfx_model *back = NULL;
        CHECK_OK(rfx_model_load(target, &back));
        rfx_model_free(back);
        /* devices: written in place, errors reported */
        if (stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode)) {
            CHECK_OK(rfx_model_save(m, "/dev/null"));
            CHECK_OK(rfx_csv_write("/dev/null", rfx_cmat_of(M, 2, 2), NULL));
            CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
        }
        if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode)) {
            CHECK_STATUS(rfx_model_save(m, "/dev/full"), RFX_EIO);
            CHECK_MSG(strstr(rfx_last_error(), "No space left") != NULL, "%s", rfx_last_error());
            CHECK_STATUS(rfx_npy_write("/dev/full", rfx_cmat_of(M, 2, 2)), RFX_EIO);
            CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
        }
        /* a directory is refused, untouched */
        CHECK_STATUS(rfx_model_save(m, RFX_BINARY_DIR), RFX_EIO);
        CHECK(stat(RFX_BINARY_DIR, &sb) == 0 && S_ISDIR(sb.st_mode));
    }
    rfx_model_free(m);
    remove(link);
    remove(target);
}

/* Taking an input column out (a weight column): by name or index, the
 * other columns and names kept in order; the target and the last input
 * refused. */
static void test_take_column(void)
{
    rfx_read_params p = rfx_read_params_default();
    rfx_data *d = NULL;
    double w[3];
    p.target = "y";
    CHECK_OK(rfx_data_read(write_text("take", "a,w,b,y\n1,10,2,3\n4,20,5,6\n7,30,8,9\n"), &p,
                           &d));
    if (!d) return;
    CHECK_OK(rfx_data_take_column(d, "w", w));
    CHECK(w[0] == 10 && w[1] == 20 && w[2] == 30);
    rfx_cmat X = rfx_data_x(d);
    CHECK(X.rows == 3 && X.cols == 2 && X.data[0] == 1 && X.data[1] == 2 && X.data[4] == 7 &&
          X.data[5] == 8);
    CHECK(strcmp(rfx_data_name(d, 0), "a") == 0 && strcmp(rfx_data_name(d, 1), "b") == 0 &&
          rfx_data_name(d, 2) == NULL);
    CHECK(rfx_data_y(d).data[2] == 9);
    CHECK_STATUS(rfx_data_take_column(d, "y", w), RFX_EPARSE);
    CHECK(strstr(rfx_last_error(), "'y' is the target column") != NULL);
    CHECK_STATUS(rfx_data_take_column(d, "z", w), RFX_EPARSE);
    CHECK_OK(rfx_data_take_column(d, "-1", w)); /* the last input, by index */
    CHECK(w[0] == 2 && w[2] == 8 && rfx_data_x(d).cols == 1 && rfx_data_x(d).data[1] == 4);
    CHECK_STATUS(rfx_data_take_column(d, "0", w), RFX_EDIM);
    CHECK(strstr(rfx_last_error(), "the only input column") != NULL);
    rfx_data_free(d);
}

int main(void)
{
    test_take_column();
    test_output_targets();
    test_defaults();
    test_csv_small();
    test_csv_noheader();
    test_csv_quoted();
    test_csv_dialects();
    test_csv_errors();
    test_csv_large();
    test_round_trips();
    test_write_errors();
    test_npy();
    test_npy_pipe();
    test_quote();
    test_fuzz();
    return rfx_test_finish("test_io");
}
