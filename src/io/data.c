/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading tables of numbers: CSV (tokenised by libcsv) and .npy files.
 *
 * Both readers end in the same place: X (n x d, contiguous, rfx__alloc) and,
 * when a target column was asked for, Y (n x 1), with one name per column.
 * Errors name the file and, for CSV, the physical line and the 1-based
 * column; for .npy the 0-based row and column of the array. What they quote
 * of the input (the file name, cells, column names, header keys) goes
 * through rfx__quote: control bytes and bad UTF-8 show as \xHH.
 *
 * Numbers are parsed with strtod in the C locale ('.' as the decimal point)
 * whatever the host program's LC_NUMERIC: rfx_data_read switches its own
 * thread to the C locale for the read (rfx__c_numeric), and never calls
 * setlocale.
 */
#include "internal.h"
#include "io/input.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

struct rfx_data {
    size_t n, d;
    double *x;         /* n x d, row-major                                   */
    double *y;         /* n x 1, or NULL without a target                    */
    char **names;      /* d input column names                               */
    char *target_name; /* NULL without a target                              */
    int has_names;     /* the names came from a header                        */
};

/* No target column. */
#define NO_TARGET SIZE_MAX

/* How much of a bad cell or name to quote in a message, and of a path. */
#define QUOTE_MAX 40
#define PATH_MAX_SHOWN 400

/* s quoted for a message into buf (char buf[RFX__QUOTE_SIZE(QUOTE_MAX)]). */
#define QUOTED(s, buf) rfx__quote((s), strlen(s), QUOTE_MAX, (buf), sizeof(buf))

/* ---- small helpers ------------------------------------------------------- */

/* strerror is not thread-safe; the XSI strerror_r is (_POSIX_C_SOURCE). */
static const char *errno_text(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0) snprintf(buf, size, "error %d", err);
    return buf;
}

static char *copy_text(const char *s, size_t len)
{
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

static int is_blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

rfx_read_params rfx_read_params_default(void)
{
    rfx_read_params p;
    memset(&p, 0, sizeof p);
    p.target = NULL;
    p.delimiter = ',';
    p.has_header = -1;
    p.comment = '#';
    return p;
}

static rfx_status check_params(const rfx_read_params *p)
{
    if (p->has_header < -1 || p->has_header > 1)
        return rfx__error(RFX_EINVAL, "params->has_header: %d is not 1, 0 or -1 (detect)",
                          p->has_header);
    if (p->delimiter == '\0' || p->delimiter == '"' || p->delimiter == '\n' ||
        p->delimiter == '\r')
        return rfx__error(RFX_EINVAL,
                          "params->delimiter: must not be NUL, a quote or a line break");
    if (p->comment == '"' || p->comment == '\n' || p->comment == '\r')
        return rfx__error(RFX_EINVAL, "params->comment: must not be a quote or a line break");
    if (p->comment != '\0' && p->comment == p->delimiter) {
        char q[RFX__QUOTE_SIZE(1)];
        return rfx__error(RFX_EINVAL, "params->comment: '%s' is also the delimiter",
                          rfx__quote(&p->comment, 1, 1, q, sizeof q));
    }
    if (p->target && p->target[0] == '\0')
        return rfx__error(RFX_EINVAL, "params->target: empty (use NULL for no target)");
    return RFX_OK;
}

/* ---- the result ---------------------------------------------------------- */

void rfx_data_free(rfx_data *data)
{
    if (!data) return;
    if (data->names) {
        for (size_t j = 0; j < data->d; j++) free(data->names[j]);
        free(data->names);
    }
    free(data->target_name);
    free(data->x);
    free(data->y);
    free(data);
}

rfx_status rfx_data_take_column(rfx_data *data, const char *column, double *values)
{
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    size_t j = 0, other = 0;
    if (!data || !column || !values)
        return rfx__error(RFX_EINVAL, "rfx_data_take_column: NULL argument");
    const char *const *names = data->has_names ? (const char *const *)data->names : NULL;
    switch (rfx__column_find(names, data->d, column, &j, &other)) {
    case RFX__COLUMN_FOUND: break;
    case RFX__COLUMN_AMBIGUOUS:
        return rfx__error(RFX_EPARSE, "column '%s' is ambiguous (input columns %zu and %zu have "
                          "that name; give the index instead)", QUOTED(column, q), j, other);
    default:
        if (data->target_name && data->has_names && strcmp(data->target_name, column) == 0)
            return rfx__error(RFX_EPARSE, "column '%s' is the target column, not an input (name "
                              "the target with --target or rfx_read_params.target)",
                              QUOTED(column, q));
        return rfx__error(RFX_EPARSE, "column '%s' is not one of the %zu input columns",
                          QUOTED(column, q), data->d);
    }
    if (data->d < 2)
        return rfx__error(RFX_EDIM, "column '%s' is the only input column", QUOTED(column, q));
    const size_t n = data->n, d = data->d;
    for (size_t i = 0; i < n; i++) values[i] = data->x[i * d + j];
    /* close the gap in place, row by row: every row moves left */
    for (size_t i = 0; i < n; i++) {
        const double *src = data->x + i * d;
        double *dst = data->x + i * (d - 1);
        memmove(dst, src, j * sizeof *dst);
        memmove(dst + j, src + j + 1, (d - 1 - j) * sizeof *dst);
    }
    free(data->names[j]);
    memmove(data->names + j, data->names + j + 1, (d - 1 - j) * sizeof *data->names);
    data->d = d - 1;
    return RFX_OK;
}

rfx_cmat rfx_data_x(const rfx_data *data)
{
    if (!data) return rfx_cmat_none();
    return rfx_cmat_of(data->x, data->n, data->d);
}

rfx_cmat rfx_data_y(const rfx_data *data)
{
    if (!data || !data->y) return rfx_cmat_none();
    return rfx_cmat_of(data->y, data->n, 1);
}

/* NULL for a column that does not exist (j >= d, or SIZE_MAX without a
 * target), so that a caller's mistake does not read out of bounds. */
const char *rfx_data_name(const rfx_data *data, size_t j)
{
    if (!data) return NULL;
    if (j == SIZE_MAX) return data->target_name;
    if (j >= data->d) return NULL;
    return data->names[j];
}

int rfx_data_has_names(const rfx_data *data) { return data ? data->has_names : 0; }

/* An empty table of n rows and d inputs: X, Y (when has_target) and the
 * name array allocated; names still NULL. */
static rfx_status data_alloc(size_t n, size_t d, int has_target, rfx_data **out)
{
    rfx_data *data;
    size_t cells;
    rfx_status st;
    RFX__TRY(rfx__mul(n, d, &cells, "data X"));
    data = calloc(1, sizeof *data);
    if (!data) return rfx__error(RFX_ENOMEM, "data: cannot allocate");
    data->n = n;
    data->d = d;
    data->names = calloc(d, sizeof *data->names);
    if (!data->names) {
        free(data);
        return rfx__error(RFX_ENOMEM, "data: cannot allocate %zu column names", d);
    }
    st = rfx__alloc(cells, sizeof(double), (void **)&data->x, "data X");
    if (st == RFX_OK && has_target) st = rfx__alloc(n, sizeof(double), (void **)&data->y, "data Y");
    if (st != RFX_OK) {
        rfx_data_free(data);
        return st;
    }
    *out = data;
    return RFX_OK;
}

/* Name the columns: from the file's header (ncols names, or NULL without
 * one; an empty header cell gets a made-up name too) or "x<j>" by input
 * index, and "y" for the target. */
static rfx_status data_name(rfx_data *data, char *const *file_names, size_t ncols, size_t target)
{
    char made[32];
    size_t j = 0;
    data->has_names = file_names != NULL;
    for (size_t c = 0; c < ncols; c++) {
        const char *name = file_names && file_names[c][0] ? file_names[c] : NULL;
        char *copy;
        if (c == target) {
            copy = copy_text(name ? name : "y", strlen(name ? name : "y"));
            if (!copy) return rfx__error(RFX_ENOMEM, "data: cannot allocate column names");
            data->target_name = copy;
            continue;
        }
        if (!name) {
            snprintf(made, sizeof made, "x%zu", j);
            name = made;
        }
        copy = copy_text(name, strlen(name));
        if (!copy) return rfx__error(RFX_ENOMEM, "data: cannot allocate column names");
        data->names[j++] = copy;
    }
    return RFX_OK;
}

/* ---- the target column --------------------------------------------------- */

/* The file column of the target: params->target is a header name (when the
 * file has names and one matches: a column named "3" wins over index 3), or
 * an index as text ("0".."ncols-1", negative counting from the end, "-1" =
 * last). names is NULL when the file has none; npy says which kind of file
 * (its messages differ). *out = NO_TARGET for no target. */
static rfx_status find_target(const char *path, const char *target, char *const *names,
                              size_t ncols, int npy, size_t *out)
{
    size_t other = 0;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    if (!target) {
        *out = NO_TARGET;
        return RFX_OK;
    }
    switch (rfx__column_find((const char *const *)names, ncols, target, out, &other)) {
    case RFX__COLUMN_FOUND: return RFX_OK;
    case RFX__COLUMN_AMBIGUOUS:
        return rfx__error(RFX_EPARSE,
                          "%s: target column '%s' is ambiguous (columns %zu and %zu have that "
                          "name; give the index instead)",
                          path, QUOTED(target, q), *out, other);
    case RFX__COLUMN_RANGE:
        return rfx__error(RFX_EPARSE, "%s: target index %s out of range (%zu column%s)", path,
                          QUOTED(target, q), ncols, ncols == 1 ? "" : "s");
    case RFX__COLUMN_MISSING: break;
    }
    if (npy)
        return rfx__error(RFX_EPARSE,
                          "%s: target '%s' is not a column index (.npy files have no column "
                          "names; give a 0-based index, or -1 for the last column)",
                          path, QUOTED(target, q));
    if (!names)
        return rfx__error(RFX_EPARSE,
                          "%s: target column '%s' not found (the file has no header; give a "
                          "0-based index, or -1 for the last column)",
                          path, QUOTED(target, q));
    {
        char list[512];
        rfx__list_names(list, sizeof list, (const char *const *)names, ncols);
        return rfx__error(RFX_EPARSE, "%s: target column '%s' not found (columns: %s)", path,
                          QUOTED(target, q), list);
    }
}

/* ---- numbers ------------------------------------------------------------- */

typedef enum cell_kind {
    CELL_NUMBER,   /* a finite number                                       */
    CELL_EMPTY,    /* nothing but spaces                                    */
    CELL_NAN,
    CELL_INF,
    CELL_RANGE,    /* a finite-looking number beyond the double range       */
    CELL_TEXT      /* anything else                                         */
} cell_kind;

/* Classify a cell and convert it with strtod. s[len] must be '\0'. Spaces
 * around the number are allowed; hexadecimal floats are accepted, as strtod
 * does. Values that underflow become the nearest double (0 or subnormal). */
static cell_kind parse_cell(const char *s, size_t len, double *out)
{
    const char *b = s, *e = s + len;
    char *end;
    double v;
    while (b < e && is_blank_char(*b)) b++;
    while (e > b && is_blank_char(e[-1])) e--;
    if (b == e) return CELL_EMPTY;
    errno = 0;
    v = strtod(b, &end);
    if (end != e) return CELL_TEXT; /* also catches an embedded NUL */
    if (isnan(v)) return CELL_NAN;
    if (isinf(v)) return errno == ERANGE ? CELL_RANGE : CELL_INF;
    *out = v;
    return CELL_NUMBER;
}

/* The message for a cell that is not a finite number, at line:col. */
static rfx_status cell_error(const char *path, size_t line, size_t col, cell_kind kind,
                             const char *s, size_t len)
{
    const char *b = s, *e = s + len;
    char q[RFX__QUOTE_SIZE(QUOTE_MAX)];
    while (b < e && is_blank_char(*b)) b++;
    while (e > b && is_blank_char(e[-1])) e--;
    rfx__quote(b, (size_t)(e - b), QUOTE_MAX, q, sizeof q);
    switch (kind) {
    case CELL_EMPTY:
        return rfx__error(RFX_EPARSE, "%s:%zu:%zu: empty cell", path, line, col);
    case CELL_NAN:
        return rfx__error(RFX_EPARSE, "%s:%zu:%zu: NaN is not allowed", path, line, col);
    case CELL_INF:
        return rfx__error(RFX_EPARSE, "%s:%zu:%zu: Inf is not allowed", path, line, col);
    case CELL_RANGE:
        return rfx__error(RFX_EPARSE, "%s:%zu:%zu: '%s' is out of the range of a double", path,
                          line, col, q);
    case CELL_NUMBER: /* not an error: never asked */
    case CELL_TEXT:
        break;
    }
    return rfx__error(RFX_EPARSE, "%s:%zu:%zu: '%s' is not a number", path, line, col, q);
}

/* ---- CSV ----------------------------------------------------------------- */

/* A cell of the first record, kept as text until we know whether the record
 * is a header. */
typedef struct csv_cell {
    char *text;
    size_t len;
    size_t line;
} csv_cell;

/* The state shared by the libcsv callbacks. The callbacks cannot return an
 * error, so the first one is kept in status and later callbacks do nothing. */
typedef struct csv_ctx {
    const char *path;
    const rfx_read_params *params;
    rfx_status status;
    size_t line;        /* physical line being parsed, 1-based              */
    size_t record_line; /* line where the current record began              */
    size_t first_line;  /* line of the first record (header or data)        */
    size_t records;     /* records completed, the header included           */
    size_t field;       /* fields seen so far in the current record         */
    csv_cell *first;    /* the first record                                 */
    size_t first_cap;
    int header;         /* the first record was a header                    */
    char **col_names;   /* ncols header names (owned), or NULL              */
    size_t ncols;       /* fields per record, set by the first record       */
    size_t target;      /* file column of the target, or NO_TARGET          */
    size_t d;           /* input columns                                    */
    double *x, *y;      /* cap rows of data (malloc / realloc)              */
    size_t n, cap;
    size_t limit;       /* stop after the line that completes this many rows
                           (a block of a stream); 0: read to the end         */
    char *buf;          /* the line being read (getline), and its size      */
    size_t buf_size;
    int open;           /* the previous line left a record open (in quotes) */
    int eof;            /* the input is all read (or the range ended)         */
    uint64_t offset;    /* the byte offset of the next line                   */
    uint64_t record_at; /* the offset of the line where the record began      */
    uint64_t stop_at;   /* a data record whose line starts here or after ends
                           the reading (a byte range); 0: none              */
    int one_line;       /* a byte range: a record that spans lines is an error */
} csv_ctx;

static void csv_ctx_free(csv_ctx *c)
{
    if (c->first) {
        for (size_t i = 0; i < c->first_cap; i++) free(c->first[i].text);
        free(c->first);
    }
    if (c->col_names) {
        for (size_t i = 0; i < c->ncols; i++) free(c->col_names[i]);
        free(c->col_names);
    }
    free(c->x);
    free(c->y);
    free(c->buf);
}

/* A table larger than rfx_read_params.max_bytes. */
static rfx_status over_limit(const char *path, size_t limit, size_t rows, size_t d)
{
    return rfx__error(RFX_ENOMEM, "%s: the table is over the memory limit of %zu bytes (%zu "
                      "rows of %zu inputs read, and more to come)", path, limit, rows, d);
}

/* Room for one more data row; rows grow geometrically so that n rows cost
 * O(n) copies in all. */
static rfx_status csv_reserve_row(csv_ctx *c)
{
    size_t cap, xbytes;
    double *p;
    if (c->n < c->cap) return RFX_OK;
    if (c->cap > SIZE_MAX / 2)
        return rfx__error(RFX_EOVERFLOW, "%s: too many rows", c->path);
    cap = c->cap ? 2 * c->cap : 256;
    if (c->params->max_bytes && !c->limit) {
        const size_t row_bytes = (c->d + (c->target != NO_TARGET)) * sizeof(double);
        const size_t most = c->params->max_bytes / row_bytes;
        if (c->n + 1 > most) return over_limit(c->path, c->params->max_bytes, c->n, c->d);
        if (cap > most) cap = most;
    }
    RFX__TRY(rfx__mul3(cap, c->d, sizeof(double), &xbytes, c->path));
    p = realloc(c->x, xbytes);
    if (!p) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu bytes for rows", c->path,
                              xbytes);
    c->x = p;
    if (c->target != NO_TARGET) {
        p = realloc(c->y, cap * sizeof(double)); /* cap * d * 8 did not overflow */
        if (!p) return rfx__error(RFX_ENOMEM, "%s: cannot allocate rows", c->path);
        c->y = p;
    }
    c->cap = cap;
    return RFX_OK;
}

/* Store the value of file column col in data row c->n. */
static void csv_store(csv_ctx *c, size_t col, double v)
{
    if (col == c->target)
        c->y[c->n] = v;
    else
        c->x[c->n * c->d + (c->target != NO_TARGET && col > c->target ? col - 1 : col)] = v;
}

/* Parse one cell of data row c->n and store it. */
static rfx_status csv_cell_value(csv_ctx *c, const char *s, size_t len, size_t line, size_t col)
{
    double v = 0.0;
    cell_kind kind = parse_cell(s, len, &v);
    if (kind != CELL_NUMBER) return cell_error(c->path, line, col + 1, kind, s, len);
    csv_store(c, col, v);
    return RFX_OK;
}

static rfx_status csv_keep_first(csv_ctx *c, const char *s, size_t len, size_t col)
{
    if (col >= c->first_cap) {
        size_t cap = c->first_cap ? 2 * c->first_cap : 16;
        csv_cell *p;
        if (c->first_cap > SIZE_MAX / 2 / sizeof *p)
            return rfx__error(RFX_EOVERFLOW, "%s: too many columns", c->path);
        p = realloc(c->first, cap * sizeof *p);
        if (!p) return rfx__error(RFX_ENOMEM, "%s: cannot allocate the first row", c->path);
        memset(p + c->first_cap, 0, (cap - c->first_cap) * sizeof *p);
        c->first = p;
        c->first_cap = cap;
    }
    c->first[col].text = copy_text(s, len);
    if (!c->first[col].text)
        return rfx__error(RFX_ENOMEM, "%s: cannot allocate the first row", c->path);
    c->first[col].len = len;
    c->first[col].line = c->line;
    return RFX_OK;
}

/* The first record fixes the number of columns. It is a header when asked,
 * or (detection) when one of its cells is text: empty, NaN or Inf cells are
 * data errors, not names. Then the target is resolved, before the rest of
 * the file is read, so that a wrong target fails fast. */
static rfx_status csv_first_record(csv_ctx *c, size_t ncols)
{
    int header = c->params->has_header;
    c->ncols = ncols;
    c->first_line = c->record_line;
    if (header < 0) {
        header = 0;
        for (size_t i = 0; i < ncols && !header; i++) {
            double v;
            header = parse_cell(c->first[i].text, c->first[i].len, &v) == CELL_TEXT;
        }
    }
    c->header = header;
    if (header) {
        c->col_names = calloc(ncols, sizeof *c->col_names);
        if (!c->col_names) return rfx__error(RFX_ENOMEM, "%s: cannot allocate names", c->path);
        for (size_t i = 0; i < ncols; i++) {
            c->col_names[i] = c->first[i].text;
            c->first[i].text = NULL;
        }
    }
    RFX__TRY(find_target(c->path, c->params->target, c->col_names, ncols, 0, &c->target));
    c->d = ncols - (c->target != NO_TARGET);
    if (c->d == 0)
        return rfx__error(RFX_EPARSE,
                          "%s: no input columns: the only column is the target (column %zu)",
                          c->path, c->target + 1);
    if (!header) {
        RFX__TRY(csv_reserve_row(c));
        for (size_t i = 0; i < ncols; i++)
            RFX__TRY(csv_cell_value(c, c->first[i].text, c->first[i].len, c->first[i].line, i));
        c->n++;
    }
    return RFX_OK;
}

/* libcsv field callback: s[len] is '\0' (CSV_APPEND_NULL). */
static void csv_on_field(void *s, size_t len, void *user)
{
    csv_ctx *c = user;
    const char *text = s ? s : "";
    size_t col = c->field++;
    if (c->status != RFX_OK) return;
    if (c->records == 0) {
        c->status = csv_keep_first(c, text, s ? len : 0, col);
        return;
    }
    if (col >= c->ncols) return; /* a long row: reported at its end */
    if (col == 0) {
        c->status = csv_reserve_row(c);
        if (c->status != RFX_OK) return;
    }
    c->status = csv_cell_value(c, text, s ? len : 0, c->line, col);
}

/* libcsv record callback. */
static void csv_on_record(int term, void *user)
{
    csv_ctx *c = user;
    size_t fields = c->field;
    (void)term;
    c->field = 0;
    c->records++;
    if (c->status != RFX_OK) return;
    if (c->records == 1)
        c->status = csv_first_record(c, fields);
    else if (fields != c->ncols)
        c->status = rfx__error(RFX_EPARSE, "%s:%zu: row has %zu field%s, expected %zu (as in line %zu)",
                               c->path, c->record_line, fields, fields == 1 ? "" : "s",
                               c->ncols, c->first_line);
    else
        c->n++;
}

/* A line that holds no record: only spaces, or a comment. */
static int csv_skip_line(const char *s, size_t len, char comment)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
    if (comment != '\0' && i < len && s[i] == comment) return 1;
    for (; i < len; i++)
        if (!is_blank_char(s[i])) return 0;
    return 1;
}

/* libcsv stopped: say where and why. */
static rfx_status csv_parser_error(const csv_ctx *c, int err)
{
    if (err == CSV_ENOMEM) return rfx__error(RFX_ENOMEM, "%s:%zu: out of memory", c->path, c->line);
    if (err == CSV_ETOOBIG) return rfx__error(RFX_EOVERFLOW, "%s:%zu: field too large", c->path,
                                              c->line);
    return rfx__error(RFX_EPARSE,
                      "%s:%zu:%zu: misplaced quote (a quoted field must be the whole field, and "
                      "quotes inside it are doubled: \"a\"\"b\")",
                      c->path, c->line, c->field + 1);
}

/* Read the lines of fp ourselves, so that every message can carry the
 * physical line number, and feed the lines that hold records to libcsv,
 * until c->limit rows are complete (a block) or the input ends (c->eof).
 * A record is still open after its line when a quoted field spans lines;
 * blank and comment lines inside it are then data, not skipped. */
static rfx_status csv_pump(csv_ctx *c, FILE *fp, struct csv_parser *p)
{
    ssize_t got;
    rfx_status st = RFX_OK;
    errno = 0;
    while ((got = getline(&c->buf, &c->buf_size, fp)) != -1) {
        const char *s = c->buf;
        size_t len = (size_t)got, before = c->records;
        const uint64_t at = c->offset;
        c->offset += (uint64_t)got;
        c->line++;
        if (c->line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
            s += 3; /* a UTF-8 byte order mark, as spreadsheets write */
            len -= 3;
        }
        if (!c->open) {
            if (csv_skip_line(s, len, c->params->comment)) continue;
            if (c->stop_at && c->records > 0 && at >= c->stop_at) {
                c->eof = 1; /* the range ends before this record */
                return RFX_OK;
            }
            c->record_line = c->line;
            c->record_at = at;
        }
        if (csv_parse(p, s, len, csv_on_field, csv_on_record, c) != len)
            return c->status != RFX_OK ? c->status : csv_parser_error(c, csv_error(p));
        if (c->status != RFX_OK) return c->status;
        c->open = c->records == before && len > 0 && s[len - 1] == '\n';
        if (c->open && c->one_line)
            return rfx__error(RFX_EPARSE, "%s:%zu: a quoted field spans lines; a file read in "
                              "byte ranges needs one record per line", c->path, c->record_line);
        if (c->limit && c->n >= c->limit && !c->open) return RFX_OK;
        errno = 0;
    }
    if (ferror(fp)) {
        char buf[128];
        int err = errno;
        const char *problem = rfx__input_problem();
        if (problem) return rfx__error(RFX_EPARSE, "%s:%zu: %s", c->path, c->line + 1, problem);
        st = rfx__error(err == ENOMEM ? RFX_ENOMEM : RFX_EIO, "%s:%zu: cannot read: %s", c->path,
                        c->line + 1, errno_text(err ? err : EIO, buf, sizeof buf));
    } else if (errno == ENOMEM) {
        st = rfx__error(RFX_ENOMEM, "%s:%zu: line too long for memory", c->path, c->line + 1);
    }
    if (st != RFX_OK) return st;
    c->eof = 1;
    /* The last record may lack its line break; a quote still open is an
     * error (CSV_STRICT_FINI). */
    if (csv_fini(p, csv_on_field, csv_on_record, c) != 0)
        return rfx__error(RFX_EPARSE, "%s:%zu: quoted field not closed before the end of the file",
                          c->path, c->record_line);
    return c->status;
}

/* Move the rows into a fresh table. */
static rfx_status csv_finish(csv_ctx *c, rfx_data **out)
{
    rfx_data *data;
    if (c->records == 0) return rfx__error(RFX_EPARSE, "%s: empty file (no rows)", c->path);
    if (c->n == 0) return rfx__error(RFX_EPARSE, "%s: header only, no data rows", c->path);
    RFX__TRY(data_alloc(c->n, c->d, c->target != NO_TARGET, &data));
    memcpy(data->x, c->x, c->n * c->d * sizeof(double));
    if (data->y) memcpy(data->y, c->y, c->n * sizeof(double));
    {
        rfx_status st = data_name(data, c->col_names, c->ncols, c->target);
        if (st != RFX_OK) {
            rfx_data_free(data);
            return st;
        }
    }
    *out = data;
    return RFX_OK;
}

static rfx_status csv_read(const char *path, FILE *fp, const rfx_read_params *params,
                           rfx_data **out)
{
    struct csv_parser p;
    csv_ctx c;
    rfx_status st;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.params = params;
    c.target = NO_TARGET;
    /* strict: a stray quote is an error rather than a silently odd cell */
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return rfx__error(RFX_ENOMEM, "%s: cannot initialise the CSV parser", path);
    csv_set_delim(&p, (unsigned char)params->delimiter);
    st = csv_pump(&c, fp, &p);
    csv_free(&p);
    if (st == RFX_OK) st = csv_finish(&c, out);
    csv_ctx_free(&c);
    return st;
}

/* ---- .npy ---------------------------------------------------------------- */

/*
 * The .npy format (numpy.lib.format): magic "\x93NUMPY", major and minor
 * version bytes, the header length (u16 little-endian in version 1, u32 in
 * versions 2 and 3), then the header: a Python dict literal such as
 * {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and a newline, then the array data.
 */

#define NPY_MAX_HEADER (1u << 20) /* numpy itself refuses far smaller ones */
#define NPY_MAX_DIMS 32

typedef struct npy_header {
    int have_descr, have_order, have_shape;
    size_t itemsize;   /* 8 or 4                                            */
    int big_endian;
    int fortran;
    size_t ndim;
    size_t shape[NPY_MAX_DIMS];
} npy_header;

static const char *npy_skip(const char *p, const char *end)
{
    while (p < end && is_blank_char(*p)) p++;
    return p;
}

/* A quoted Python string without escapes, copied into buf (size bytes). */
static int npy_string(const char **pp, const char *end, char *buf, size_t size)
{
    const char *p = *pp;
    char q;
    size_t n = 0;
    if (p >= end || (*p != '\'' && *p != '"')) return 0;
    q = *p++;
    while (p < end && *p != q) {
        if (*p == '\\' || n + 1 >= size) return 0;
        buf[n++] = *p++;
    }
    if (p >= end) return 0;
    buf[n] = '\0';
    *pp = p + 1;
    return 1;
}

static int npy_word(const char **pp, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *pp) < n || memcmp(*pp, word, n) != 0) return 0;
    *pp += n;
    return 1;
}

/* A tuple of non-negative integers, "(3, 4)", "(3,)" or "()"; Python 2
 * numpy wrote longs as "3L". Returns 0 on malformed input, -1 on a value
 * beyond size_t. */
static int npy_shape(const char **pp, const char *end, npy_header *h)
{
    const char *p = *pp;
    h->ndim = 0;
    if (p >= end || *p != '(') return 0;
    p = npy_skip(p + 1, end);
    while (p < end && *p != ')') {
        size_t v = 0;
        if (*p < '0' || *p > '9') return 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            unsigned dig = (unsigned)(*p - '0');
            if (v > (SIZE_MAX - dig) / 10) return -1;
            v = v * 10 + dig;
        }
        if (p < end && *p == 'L') p++;
        if (h->ndim == NPY_MAX_DIMS) return 0;
        h->shape[h->ndim++] = v;
        p = npy_skip(p, end);
        if (p < end && *p == ',') p = npy_skip(p + 1, end);
        else if (p < end && *p != ')') return 0;
    }
    if (p >= end) return 0;
    *pp = p + 1;
    return 1;
}

static rfx_status npy_parse_header(const char *path, const char *text, size_t len, npy_header *h)
{
    const char *p = text, *end = text + len;
    memset(h, 0, sizeof *h);
    p = npy_skip(p, end);
    if (p >= end || *p != '{') goto bad;
    p = npy_skip(p + 1, end);
    while (p < end && *p != '}') {
        char key[32], val[32], q[RFX__QUOTE_SIZE(QUOTE_MAX)];
        if (!npy_string(&p, end, key, sizeof key)) goto bad;
        p = npy_skip(p, end);
        if (p >= end || *p != ':') goto bad;
        p = npy_skip(p + 1, end);
        if (strcmp(key, "descr") == 0) {
            if (!npy_string(&p, end, val, sizeof val))
                return rfx__error(RFX_EPARSE, "%s: unsupported dtype (structured or unreadable "
                                  "'descr'); only float64 and float32 are read", path);
            if ((val[0] != '<' && val[0] != '>') || val[1] != 'f' ||
                (strcmp(val + 2, "8") != 0 && strcmp(val + 2, "4") != 0))
                return rfx__error(RFX_EPARSE, "%s: dtype '%s' is not supported; only float64 "
                                  "('<f8') and float32 ('<f4') are read: convert with "
                                  "a.astype(np.float64)", path, QUOTED(val, q));
            h->big_endian = val[0] == '>';
            h->itemsize = val[2] == '8' ? 8 : 4;
            h->have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (npy_word(&p, end, "True")) h->fortran = 1;
            else if (npy_word(&p, end, "False")) h->fortran = 0;
            else goto bad;
            h->have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            int r = npy_shape(&p, end, h);
            if (r < 0) return rfx__error(RFX_EPARSE, "%s: shape value too large", path);
            if (r == 0) goto bad;
            h->have_shape = 1;
        } else {
            return rfx__error(RFX_EPARSE, "%s: unexpected key '%s' in the .npy header", path,
                              QUOTED(key, q));
        }
        p = npy_skip(p, end);
        if (p < end && *p == ',') p = npy_skip(p + 1, end);
        else if (p < end && *p != '}') goto bad;
    }
    if (p >= end) goto bad;
    if (!h->have_descr || !h->have_order || !h->have_shape)
        return rfx__error(RFX_EPARSE, "%s: the .npy header lacks '%s'", path,
                          !h->have_descr ? "descr" : !h->have_order ? "fortran_order" : "shape");
    return RFX_OK;
bad:
    return rfx__error(RFX_EPARSE, "%s: malformed .npy header at byte %zu of the header dict",
                      path, (size_t)(p - text));
}

static uint64_t npy_load(const unsigned char *b, size_t size, int big_endian)
{
    uint64_t v = 0;
    for (size_t k = 0; k < size; k++) {
        size_t i = big_endian ? k : size - 1 - k;
        v = (v << 8) | b[i];
    }
    return v;
}

/* One value, whatever the byte order of the host. */
static double npy_value(const unsigned char *b, const npy_header *h)
{
    uint64_t bits = npy_load(b, h->itemsize, h->big_endian);
    if (h->itemsize == 8) {
        double v;
        memcpy(&v, &bits, sizeof v);
        return v;
    } else {
        uint32_t b32 = (uint32_t)bits;
        float v;
        memcpy(&v, &b32, sizeof v);
        return (double)v;
    }
}

static rfx_status npy_read_error(const char *path, FILE *fp, const char *what)
{
    char buf[128];
    const char *problem = rfx__input_problem();
    if (problem) return rfx__error(RFX_EPARSE, "%s: %s", path, problem);
    if (ferror(fp)) return rfx__error(RFX_EIO, "%s: cannot read %s: %s", path, what,
                                      errno_text(errno ? errno : EIO, buf, sizeof buf));
    return rfx__error(RFX_EPARSE, "%s: truncated .npy file (the %s is cut short)", path, what);
}

/* Where the values of a .npy file go: X (cells of n x d) and Y (n), with
 * room for cap_x and cap_y values. */
typedef struct npy_sink {
    double *x, *y;
    size_t cap_x, cap_y;
} npy_sink;

/* Room for value index need (< total) in *p, of capacity *cap: at least
 * doubled, at most total, so that n values cost O(n) copies in all. */
static rfx_status npy_grow(const char *path, double **p, size_t *cap, size_t need, size_t total)
{
    size_t cap2;
    double *q;
    if (need < *cap) return RFX_OK;
    cap2 = *cap > total / 2 ? total : 2 * *cap;
    if (cap2 < ((size_t)1 << 16)) cap2 = total < ((size_t)1 << 16) ? total : (size_t)1 << 16;
    if (cap2 <= need) cap2 = need + 1;
    q = realloc(*p, cap2 * sizeof *q); /* cap2 <= total, whose bytes were checked */
    if (!q) return rfx__error(RFX_ENOMEM, "%s: cannot allocate %zu values", path, cap2);
    *p = q;
    *cap = cap2;
    return RFX_OK;
}

/* The n x ncols values of rows row0 .. row0 + n - 1 of the n_total rows,
 * read in blocks of bytes and decoded into the sink.
 * With grow, the sink starts empty and grows as values arrive, capped at
 * the shape's size: a pipe's header alone never makes us allocate what its
 * shape claims. A short input is a data error naming the values the shape
 * needs and those that came. */
static rfx_status npy_read_values(const char *path, FILE *fp, const npy_header *h, size_t row0,
                                  size_t n, size_t n_total, size_t ncols, size_t target,
                                  int grow, npy_sink *sk)
{
    enum { BLOCK = 1 << 20 }; /* bytes, a multiple of 8 */
    const size_t total = n * ncols, d = ncols - (target != NO_TARGET);
    const size_t total_x = n * d;
    size_t k = 0, row = 0, col = 0, xi = 0;
    unsigned char *buf = malloc(BLOCK);
    rfx_status st = RFX_OK;
    if (!buf) return rfx__error(RFX_ENOMEM, "%s: cannot allocate a read buffer", path);
    while (k < total && st == RFX_OK) {
        size_t want = (total - k) * h->itemsize, got;
        if (want > BLOCK) want = BLOCK;
        errno = 0;
        got = fread(buf, 1, want, fp);
        for (size_t b = 0; b + h->itemsize <= got && st == RFX_OK; b += h->itemsize, k++) {
            double v = npy_value(buf + b, h);
            if (!isfinite(v)) {
                st = rfx__error(RFX_EPARSE, "%s: row %zu, column %zu: %s is not allowed", path,
                                row0 + row, col, isnan(v) ? "NaN" : "Inf");
                break;
            }
            if (col == target) {
                if (grow) st = npy_grow(path, &sk->y, &sk->cap_y, row, n);
                if (st == RFX_OK) sk->y[row] = v;
            } else {
                if (grow) st = npy_grow(path, &sk->x, &sk->cap_x, xi, total_x);
                if (st == RFX_OK) sk->x[xi++] = v;
            }
            if (++col == ncols) {
                col = 0;
                row++;
            }
        }
        if (st == RFX_OK && got < want) {
            char ebuf[128];
            const char *problem = ferror(fp) ? rfx__input_problem() : NULL;
            if (problem)
                st = rfx__error(RFX_EPARSE, "%s: %s", path, problem);
            else if (ferror(fp))
                st = rfx__error(RFX_EIO, "%s: cannot read the data: %s", path,
                                errno_text(errno ? errno : EIO, ebuf, sizeof ebuf));
            else
                st = rfx__error(RFX_EPARSE,
                                "%s: truncated .npy data: shape (%zu, %zu) needs %zu values, "
                                "the input ended after %zu",
                                path, n_total, ncols, n_total * ncols, row0 * ncols + k);
        }
    }
    free(buf);
    return st;
}

/* The header of a .npy file, fp positioned after its 6 magic bytes: the
 * dtype and shape (n rows of ncols), and *prelen + *hlen, the bytes before
 * the data. */
static rfx_status npy_header_read(const char *path, FILE *fp, npy_header *h, size_t *n,
                                  size_t *ncols, size_t *data_at)
{
    unsigned char pre[6];
    size_t hlen, prelen, cells, bytes;
    char *text;
    rfx_status st;
    errno = 0;
    if (fread(pre, 1, 2, fp) != 2) return npy_read_error(path, fp, "header");
    if (pre[0] == 1) {
        if (fread(pre + 2, 1, 2, fp) != 2) return npy_read_error(path, fp, "header");
        hlen = (size_t)pre[2] | (size_t)pre[3] << 8;
        prelen = 10;
    } else if (pre[0] == 2 || pre[0] == 3) {
        if (fread(pre + 2, 1, 4, fp) != 4) return npy_read_error(path, fp, "header");
        hlen = (size_t)npy_load(pre + 2, 4, 0);
        prelen = 12;
    } else {
        return rfx__error(RFX_EPARSE, "%s: .npy format version %u.%u is not supported (1.0, "
                          "2.0 and 3.0 are)", path, pre[0], pre[1]);
    }
    if (hlen > NPY_MAX_HEADER)
        return rfx__error(RFX_EPARSE, "%s: .npy header of %zu bytes is implausibly large", path,
                          hlen);
    text = malloc(hlen + 1);
    if (!text) return rfx__error(RFX_ENOMEM, "%s: cannot allocate the .npy header", path);
    if (fread(text, 1, hlen, fp) != hlen) {
        free(text);
        return npy_read_error(path, fp, "header");
    }
    text[hlen] = '\0';
    st = npy_parse_header(path, text, hlen, h);
    free(text);
    RFX__TRY(st);

    if (h->ndim == 0)
        return rfx__error(RFX_EPARSE, "%s: a 0-d array (a scalar) is not a table", path);
    if (h->ndim > 2)
        return rfx__error(RFX_EPARSE, "%s: %zu-d arrays are not supported (1-d or 2-d only)",
                          path, h->ndim);
    *n = h->shape[0];
    *ncols = h->ndim == 2 ? h->shape[1] : 1;
    /* Fortran order is the same layout when at most one extent exceeds 1. */
    if (h->fortran && *n > 1 && *ncols > 1)
        return rfx__error(RFX_EPARSE, "%s: Fortran order not supported, save with "
                          "np.ascontiguousarray", path);
    if (rfx__mul(*n, *ncols, &cells, path) != RFX_OK || rfx__mul(cells, h->itemsize, &bytes, path))
        return rfx__error(RFX_EPARSE, "%s: shape (%zu, %zu) is too large", path, *n, *ncols);
    *data_at = prelen + hlen;
    return RFX_OK;
}

/* A regular file's size against the shape, before anything is allocated:
 * a hostile shape must not make us allocate (a pipe's values are counted
 * as they come). */
static rfx_status npy_check_size(const char *path, FILE *fp, const npy_header *h, size_t n,
                                 size_t ncols, size_t data_at, int *regular)
{
    struct stat sb;
    const size_t bytes = n * ncols * h->itemsize; /* checked by npy_header_read */
    *regular = fileno(fp) >= 0 && fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode);
    if (*regular) {
        uint64_t have = sb.st_size > (off_t)data_at ? (uint64_t)sb.st_size - data_at : 0;
        if (have < (uint64_t)bytes)
            return rfx__error(RFX_EPARSE, "%s: truncated .npy file: shape (%zu, %zu) needs %zu "
                              "data bytes, the file has %llu", path, n, ncols, bytes,
                              (unsigned long long)have);
        if (have > (uint64_t)bytes)
            return rfx__error(RFX_EPARSE, "%s: %llu trailing bytes after the .npy data", path,
                              (unsigned long long)(have - bytes));
    }
    if (n == 0) return rfx__error(RFX_EPARSE, "%s: no rows (shape (0, %zu))", path, ncols);
    if (ncols == 0) return rfx__error(RFX_EPARSE, "%s: no columns (shape (%zu, 0))", path, n);
    return RFX_OK;
}

/* fp is positioned after the 6 magic bytes. */
static rfx_status npy_read(const char *path, FILE *fp, const rfx_read_params *params,
                           rfx_data **out)
{
    size_t n = 0, ncols = 0, data_at = 0, target = 0;
    npy_header h;
    rfx_data *data = NULL;
    npy_sink sink = { NULL, NULL, 0, 0 };
    rfx_status st;
    int regular;

    RFX__TRY(npy_header_read(path, fp, &h, &n, &ncols, &data_at));
    RFX__TRY(npy_check_size(path, fp, &h, n, ncols, data_at, &regular));
    RFX__TRY(find_target(path, params->target, NULL, ncols, 1, &target));
    if (ncols - (target != NO_TARGET) == 0)
        return rfx__error(RFX_EPARSE, "%s: no input columns: the only column is the target",
                          path);
    if (params->max_bytes && n > params->max_bytes / sizeof(double) / ncols)
        return rfx__error(RFX_ENOMEM, "%s: the table is over the memory limit of %zu bytes "
                          "(shape (%zu, %zu))", path, params->max_bytes, n, ncols);

    if (regular) {
        /* the file holds what the shape claims: allocate it at once */
        RFX__TRY(data_alloc(n, ncols - (target != NO_TARGET), target != NO_TARGET, &data));
        sink.x = data->x;
        sink.y = data->y;
        st = npy_read_values(path, fp, &h, 0, n, n, ncols, target, 0, &sink);
    } else {
        /* a pipe: the values first, as they come; then the table */
        st = npy_read_values(path, fp, &h, 0, n, n, ncols, target, 1, &sink);
        if (st == RFX_OK)
            st = data_alloc(n, ncols - (target != NO_TARGET), target != NO_TARGET, &data);
        if (st == RFX_OK) {
            memcpy(data->x, sink.x, n * data->d * sizeof(double));
            if (data->y) memcpy(data->y, sink.y, n * sizeof(double));
        }
        free(sink.x);
        free(sink.y);
    }
    if (st == RFX_OK && fgetc(fp) != EOF)
        st = rfx__error(RFX_EPARSE, "%s: trailing bytes after the .npy data", path);
    if (st == RFX_OK) st = data_name(data, NULL, ncols, target);
    if (st != RFX_OK) {
        rfx_data_free(data);
        return st;
    }
    *out = data;
    return RFX_OK;
}

/* ---- entry point ----------------------------------------------------------- */

/* Open the input and tell .npy from text, by content, not by name: the
 * first byte 0x93 cannot begin a UTF-8 text, so only a would-be .npy file
 * needs its bytes put back; a single ungetc is all that works on a pipe.
 * A .npy stream is left after its 6 magic bytes. */
static rfx_status open_table(const char *real, const char *path, int rewindable,
                             rfx__input **in_out, int *npy)
{
    unsigned char magic[6];
    rfx__input *in = NULL;
    RFX__TRY(rfx__input_open(real, path, rewindable, &in));
    FILE *fp = rfx__input_stream(in);
    size_t got = fread(magic, 1, 1, fp);
    *npy = 0;
    if (got == 1 && magic[0] == 0x93) {
        got += fread(magic + 1, 1, 5, fp);
        if (got == 6 && memcmp(magic, "\x93NUMPY", 6) == 0) {
            *npy = 1;
        } else if (fseek(fp, 0, SEEK_SET) != 0) {
            /* a pipe or gzip: put the bytes back (glibc keeps more than the
             * one ungetc that C promises) */
            int back = 1;
            for (size_t k = got; k-- > 0 && back;) back = ungetc(magic[k], fp) != EOF;
            if (!back) {
                rfx__input_close(in);
                return rfx__error(RFX_EPARSE, "%s: neither a .npy file nor text", path);
            }
        }
    } else if (got == 1) {
        ungetc(magic[0], fp);
    }
    *in_out = in;
    return RFX_OK;
}

static rfx_status data_read(const char *path, const rfx_read_params *params, rfx_data **out)
{
    rfx_read_params defaults = rfx_read_params_default();
    char shown[RFX__QUOTE_SIZE(PATH_MAX_SHOWN)];
    const char *real = path;
    rfx__input *in = NULL;
    int npy = 0;
    rfx_status st;

    if (!path || !out) return rfx__error(RFX_EINVAL, "rfx_data_read: path and out must not be NULL");
    if (!params) params = &defaults;
    RFX__TRY(check_params(params));
    path = rfx__quote(path, strlen(path), PATH_MAX_SHOWN, shown, sizeof shown); /* messages */
    RFX__TRY(open_table(real, path, 0, &in, &npy));
    if (npy)
        st = npy_read(path, rfx__input_stream(in), params, out);
    else
        st = csv_read(path, rfx__input_stream(in), params, out);
    rfx__input_close(in);
    return st;
}

rfx_status rfx_data_read(const char *path, const rfx_read_params *params, rfx_data **out)
{
    rfx__c_numeric c;
    rfx__c_numeric_begin(&c);
    rfx_status st = data_read(path, params, out);
    rfx__c_numeric_end(&c);
    return st;
}

/* ---- reading in row blocks ------------------------------------------------ */

struct rfx_reader {
    char shown[RFX__QUOTE_SIZE(PATH_MAX_SHOWN)]; /* the path in messages      */
    char *real;               /* the path to open                               */
    char *target;             /* a copy of read.target                          */
    rfx_read_params read;
    rfx_reader_params params;
    rfx__input *in;
    int npy;
    /* CSV: the parser and its rows (c.x, c.y hold the block) */
    csv_ctx c;
    struct csv_parser parser;
    int parser_init;
    /* .npy: the header, the position and the block */
    npy_header h;
    size_t npy_n, npy_cols, npy_target, npy_row, npy_data_at;
    double *bx, *by;
    rfx_data *meta;           /* the column names (a one-row table)            */
    size_t d;
    int has_target;
    int pending;              /* the first block was read by open or rewind   */
    size_t block_n;           /* the rows in the buffer (c.x or bx)             */
    size_t buf_off;           /* those already given                            */
    uint64_t rows;
    /* a range (rfx_reader_params): rows still to skip and to give */
    int ranged, empty;
    uint64_t skip_left, max_left;
    size_t npy_end;           /* .npy: the row after the range's last           */
};

rfx_reader_params rfx_reader_params_default(void)
{
    rfx_reader_params p;
    memset(&p, 0, sizeof p);
    p.block_rows = 4096;
    p.byte_begin = 0;
    p.byte_end = UINT64_MAX;
    p.skip_rows = 0;
    p.max_rows = UINT64_MAX;
    return p;
}

void rfx_reader_free(rfx_reader *r)
{
    if (!r) return;
    if (r->parser_init) csv_free(&r->parser);
    csv_ctx_free(&r->c);
    rfx__input_close(r->in);
    rfx_data_free(r->meta);
    free(r->bx);
    free(r->by);
    free(r->real);
    free(r->target);
    free(r);
}

/* CSV: the next block into c.x, c.y (c.n rows). */
static rfx_status reader_csv_block(rfx_reader *r)
{
    r->c.n = 0;
    if (r->c.eof) return RFX_OK;
    return csv_pump(&r->c, rfx__input_stream(r->in), &r->parser);
}

/* CSV: the rest of a block begun with the rows already in it. */
static rfx_status reader_csv_more(rfx_reader *r)
{
    if (r->c.eof || r->c.n >= r->c.limit) return RFX_OK;
    return csv_pump(&r->c, rfx__input_stream(r->in), &r->parser);
}

/* .npy: the next block into bx, by. */
static rfx_status reader_npy_block(rfx_reader *r)
{
    size_t rows = r->npy_end - r->npy_row;
    if (rows > r->params.block_rows) rows = r->params.block_rows;
    r->block_n = rows;
    if (rows == 0) return RFX_OK;
    npy_sink sk = { r->bx, r->by, 0, 0 };
    FILE *fp = rfx__input_stream(r->in);
    RFX__TRY(npy_read_values(r->shown, fp, &r->h, r->npy_row, rows, r->npy_n, r->npy_cols,
                             r->npy_target, 0, &sk));
    r->npy_row += rows;
    if (!r->ranged && r->npy_row == r->npy_n && fgetc(fp) != EOF)
        return rfx__error(RFX_EPARSE, "%s: trailing bytes after the .npy data", r->shown);
    return RFX_OK;
}

static rfx_status csv_parser_start(rfx_reader *r)
{
    if (r->parser_init) csv_free(&r->parser);
    r->parser_init = 0;
    if (csv_init(&r->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return rfx__error(RFX_ENOMEM, "%s: cannot initialise the CSV parser", r->shown);
    r->parser_init = 1;
    csv_set_delim(&r->parser, (unsigned char)r->read.delimiter);
    return RFX_OK;
}

/* A byte range of a CSV file, after its header (and at most one data row,
 * c.limit 1) was read: keep that row when its line starts in the range,
 * else go to the first line at or after byte_begin, counting the lines
 * before it for the messages; then read blocks up to byte_end (or past it
 * for max_rows). */
static rfx_status csv_range(rfx_reader *r)
{
    const rfx_reader_params *p = &r->params;
    csv_ctx *c = &r->c;
    FILE *fp = rfx__input_stream(r->in);
    c->limit = p->block_rows;
    c->stop_at = p->max_rows == UINT64_MAX ? p->byte_end : 0;
    c->one_line = 1;
    if (r->empty) {
        c->n = 0;
        c->eof = 1;
        return RFX_OK;
    }
    if (c->n > 0 && c->record_at >= p->byte_begin) {
        if (c->stop_at && c->record_at >= c->stop_at) {
            c->n = 0;
            c->eof = 1;
            return RFX_OK;
        }
        return c->eof ? RFX_OK : reader_csv_more(r);
    }
    c->n = 0;
    if (c->eof && c->offset <= p->byte_begin) return RFX_OK; /* the file ends before */
    /* the first line that starts at or after byte_begin */
    char eb[128];
    uint64_t pos = p->byte_begin;
    if (fseeko(fp, (off_t)(pos - 1), SEEK_SET) != 0)
        return rfx__error(RFX_EIO, "%s: cannot seek: %s", r->shown, errno_text(errno, eb, sizeof eb));
    int ch = getc(fp);
    while (ch != EOF && ch != '\n') {
        ch = getc(fp);
        pos++;
    }
    /* its line number: the line breaks before it */
    uint64_t lines = 0, at = 0;
    char buf[1 << 16];
    if (fseeko(fp, 0, SEEK_SET) != 0)
        return rfx__error(RFX_EIO, "%s: cannot seek: %s", r->shown, errno_text(errno, eb, sizeof eb));
    while (at < pos) {
        size_t want = pos - at < sizeof buf ? (size_t)(pos - at) : sizeof buf;
        size_t got = fread(buf, 1, want, fp);
        if (got == 0) break;
        for (const char *q = buf; (q = memchr(q, '\n', (size_t)(buf + got - q))) != NULL; q++)
            lines++;
        at += got;
    }
    if (fseeko(fp, (off_t)pos, SEEK_SET) != 0)
        return rfx__error(RFX_EIO, "%s: cannot seek: %s", r->shown, errno_text(errno, eb, sizeof eb));
    c->line = (size_t)lines;
    c->offset = pos;
    c->open = 0;
    c->eof = 0;
    RFX__TRY(csv_parser_start(r));
    return reader_csv_block(r);
}

/* .npy: the rows whose data starts in [byte_begin, byte_end), or from there
 * max_rows rows; the stream put at the first. */
static rfx_status npy_range(rfx_reader *r, FILE *fp)
{
    const rfx_reader_params *p = &r->params;
    const uint64_t row_bytes = (uint64_t)r->npy_cols * r->h.itemsize, at = r->npy_data_at;
    uint64_t i0 = p->byte_begin <= at ? 0 : (p->byte_begin - at + row_bytes - 1) / row_bytes;
    uint64_t i1 = p->byte_end == UINT64_MAX ? r->npy_n
                  : p->byte_end <= at     ? 0
                                          : (p->byte_end - at + row_bytes - 1) / row_bytes;
    if (i0 > r->npy_n) i0 = r->npy_n;
    if (p->max_rows != UINT64_MAX) i1 = r->npy_n;
    if (i1 > r->npy_n) i1 = r->npy_n;
    if (i1 < i0 || r->empty) i1 = i0;
    r->npy_row = (size_t)i0;
    r->npy_end = (size_t)i1;
    char eb[128];
    if (fseeko(fp, (off_t)(at + i0 * row_bytes), SEEK_SET) != 0)
        return rfx__error(RFX_EIO, "%s: cannot seek: %s", r->shown, errno_text(errno, eb, sizeof eb));
    return RFX_OK;
}

/* From the first byte of the input: the header, the columns and the first
 * block (pending). */
static rfx_status reader_start(rfx_reader *r)
{
    FILE *fp = rfx__input_stream(r->in);
    r->rows = 0;
    r->pending = 1;
    r->skip_left = r->params.skip_rows;
    r->max_left = r->params.max_rows;
    if (r->npy) {
        int regular = 0;
        RFX__TRY(npy_header_read(r->shown, fp, &r->h, &r->npy_n, &r->npy_cols, &r->npy_data_at));
        RFX__TRY(npy_check_size(r->shown, fp, &r->h, r->npy_n, r->npy_cols, r->npy_data_at,
                                &regular));
        RFX__TRY(find_target(r->shown, r->read.target, NULL, r->npy_cols, 1, &r->npy_target));
        if (r->npy_cols - (r->npy_target != NO_TARGET) == 0)
            return rfx__error(RFX_EPARSE, "%s: no input columns: the only column is the target",
                              r->shown);
        r->npy_row = 0;
        r->npy_end = r->npy_n;
        if (r->ranged) RFX__TRY(npy_range(r, fp));
        r->d = r->npy_cols - (r->npy_target != NO_TARGET);
        r->has_target = r->npy_target != NO_TARGET;
        if (!r->bx) {
            RFX__TRY(rfx__alloc(r->params.block_rows * r->d, sizeof(double), (void **)&r->bx,
                                "reader: block"));
            RFX__TRY(rfx__alloc(r->params.block_rows, sizeof(double), (void **)&r->by,
                                "reader: block"));
        }
        return reader_npy_block(r);
    }
    /* CSV: a fresh parser over the input, stopped after the first block */
    if (r->parser_init) csv_free(&r->parser);
    r->parser_init = 0;
    csv_ctx_free(&r->c);
    memset(&r->c, 0, sizeof r->c);
    r->c.path = r->shown;
    r->c.params = &r->read;
    r->c.target = NO_TARGET;
    r->c.limit = r->ranged ? 1 : r->params.block_rows;
    r->c.one_line = r->ranged; /* a cut inside a record would split it */
    RFX__TRY(csv_parser_start(r));
    RFX__TRY(reader_csv_block(r));
    if (r->c.records == 0) return rfx__error(RFX_EPARSE, "%s: empty file (no rows)", r->shown);
    if (r->c.n == 0 && !r->ranged)
        return rfx__error(RFX_EPARSE, "%s: header only, no data rows", r->shown);
    r->d = r->c.d;
    r->has_target = r->c.target != NO_TARGET;
    if (r->ranged) RFX__TRY(csv_range(r));
    r->block_n = r->c.n;
    return RFX_OK;
}

static rfx_status reader_open(const char *path, const rfx_read_params *read,
                              const rfx_reader_params *params, rfx_reader **out)
{
    rfx_read_params rd = read ? *read : rfx_read_params_default();
    rfx_reader_params rp = params ? *params : rfx_reader_params_default();
    if (!path || !out) return rfx__error(RFX_EINVAL, "rfx_reader_open: path and out must not be NULL");
    RFX__TRY(check_params(&rd));
    if (rp.block_rows == 0)
        return rfx__error(RFX_EINVAL, "reader.block_rows: must be >= 1");
    if (rp.block_rows > ((size_t)1 << 30))
        return rfx__error(RFX_EINVAL, "reader.block_rows: %zu is too large (at most 2^30)",
                          rp.block_rows);
    const int ranged = rp.byte_begin > 0 || rp.byte_end != UINT64_MAX || rp.skip_rows > 0 ||
                       rp.max_rows != UINT64_MAX;
    rfx_reader *r = calloc(1, sizeof *r);
    if (!r) return rfx__error(RFX_ENOMEM, "reader: cannot allocate");
    rfx__quote(path, strlen(path), PATH_MAX_SHOWN, r->shown, sizeof r->shown);
    r->real = copy_text(path, strlen(path));
    r->target = rd.target ? copy_text(rd.target, strlen(rd.target)) : NULL;
    r->read = rd;
    r->read.target = r->target;
    r->params = rp;
    r->ranged = ranged;
    r->empty = ranged && rp.byte_end <= rp.byte_begin;
    rfx_status st = !r->real || (rd.target && !r->target)
                        ? rfx__error(RFX_ENOMEM, "reader: cannot allocate")
                        : open_table(r->real, r->shown, rp.rewindable, &r->in, &r->npy);
    if (!st && ranged && !rfx__input_is_regular(r->in))
        st = rfx__error(RFX_EINVAL, "%s: a range of rows needs a plain regular file (not a pipe, "
                        "not gzip)", r->shown);
    if (!st) st = reader_start(r);
    /* the names, once: a one-row table named as rfx_data_read names it */
    if (!st) st = data_alloc(1, r->d, r->has_target, &r->meta);
    if (!st)
        st = r->npy ? data_name(r->meta, NULL, r->npy_cols, r->npy_target)
                    : data_name(r->meta, r->c.col_names, r->c.ncols, r->c.target);
    if (st) {
        rfx_reader_free(r);
        return st;
    }
    *out = r;
    return RFX_OK;
}

rfx_status rfx_reader_open(const char *path, const rfx_read_params *read,
                           const rfx_reader_params *params, rfx_reader **out)
{
    rfx__c_numeric c;
    rfx__c_numeric_begin(&c);
    rfx_status st = reader_open(path, read, params, out);
    rfx__c_numeric_end(&c);
    return st;
}

static rfx_status reader_next(rfx_reader *r, rfx_cmat *X, rfx_cmat *Y, int *done)
{
    size_t off = 0, rows = 0;
    for (;;) {
        if (r->pending) {
            r->pending = 0;
            r->buf_off = 0;
        } else if (r->buf_off >= r->block_n) {
            r->buf_off = 0;
            r->block_n = 0;
            if (r->max_left > 0) {
                RFX__TRY(r->npy ? reader_npy_block(r) : reader_csv_block(r));
                if (!r->npy) r->block_n = r->c.n;
            }
        }
        if (r->block_n == 0 || r->max_left == 0) break;
        /* the range's first skip_rows rows are left out, rows past max_rows
         * too; and a line of several records (CR line ends) may have filled
         * the buffer past block_rows: the rest waits for the next call */
        size_t avail = r->block_n - r->buf_off;
        const size_t skip = r->skip_left < avail ? (size_t)r->skip_left : avail;
        r->skip_left -= skip;
        r->buf_off += skip;
        avail -= skip;
        if (avail == 0) continue;
        rows = avail < r->params.block_rows ? avail : r->params.block_rows;
        if (rows > r->max_left) rows = (size_t)r->max_left;
        off = r->buf_off;
        r->buf_off += rows;
        break;
    }
    r->max_left -= rows;
    *done = rows == 0;
    const double *x = r->npy ? r->bx : r->c.x, *y = r->npy ? r->by : r->c.y;
    *X = *done ? rfx_cmat_none() : rfx_cmat_of(x + off * r->d, rows, r->d);
    *Y = *done || !r->has_target ? rfx_cmat_none() : rfx_cmat_of(y + off, rows, 1);
    r->rows += rows;
    return RFX_OK;
}

rfx_status rfx_reader_next(rfx_reader *r, rfx_cmat *X, rfx_cmat *Y, int *done)
{
    if (!r || !X || !Y || !done) return rfx__error(RFX_EINVAL, "rfx_reader_next: NULL argument");
    rfx__c_numeric c;
    rfx__c_numeric_begin(&c);
    rfx_status st = reader_next(r, X, Y, done);
    rfx__c_numeric_end(&c);
    return st;
}

rfx_status rfx_reader_rewind(rfx_reader *r)
{
    if (!r) return rfx__error(RFX_EINVAL, "rfx_reader_rewind: NULL reader");
    const size_t d = r->d;
    const int has_target = r->has_target;
    RFX__TRY(rfx__input_rewind(r->in));
    if (r->npy) {
        unsigned char magic[6];
        if (fread(magic, 1, 6, rfx__input_stream(r->in)) != 6)
            return rfx__error(RFX_EIO, "%s: cannot read the input again", r->shown);
    }
    rfx__c_numeric c;
    rfx__c_numeric_begin(&c);
    rfx_status st = reader_start(r);
    rfx__c_numeric_end(&c);
    RFX__TRY(st);
    if (r->d != d || r->has_target != has_target)
        return rfx__error(RFX_EPARSE, "%s: the input changed between two reads (%zu columns, "
                          "then %zu)", r->shown, d + has_target, r->d + r->has_target);
    return RFX_OK;
}

size_t rfx_reader_inputs(const rfx_reader *r) { return r ? r->d : 0; }
int rfx_reader_has_target(const rfx_reader *r) { return r ? r->has_target : 0; }
const char *rfx_reader_name(const rfx_reader *r, size_t j)
{
    return r ? rfx_data_name(r->meta, j) : NULL;
}
int rfx_reader_has_names(const rfx_reader *r) { return r ? rfx_data_has_names(r->meta) : 0; }
uint64_t rfx_reader_rows(const rfx_reader *r) { return r ? r->rows : 0; }
double rfx_reader_fraction(const rfx_reader *r) { return r ? rfx__input_fraction(r->in) : -1.0; }

/* ---- the reader as a row-block source ---------------------------------- */

static rfx_status reader_source_next(rfx_source *src, rfx_block *out, int *done)
{
    rfx_cmat X, Y;
    RFX__TRY(rfx_reader_next(src->state, &X, &Y, done));
    memset(out, 0, sizeof *out);
    if (*done) return RFX_OK;
    out->x = X.data;
    out->rows = X.rows;
    out->cols = X.cols;
    out->stride = X.stride;
    if (Y.data) {
        out->y = Y.data;
        out->ny = 1;
        out->y_stride = Y.stride;
    }
    return RFX_OK;
}

static rfx_status reader_source_rewind(rfx_source *src) { return rfx_reader_rewind(src->state); }

rfx_status rfx_reader_source(rfx_reader *r, rfx_source **out)
{
    if (!r || !out) return rfx__error(RFX_EINVAL, "rfx_reader_source: NULL argument");
    rfx_source *s = calloc(1, sizeof *s);
    if (!s) return rfx__error(RFX_ENOMEM, "reader: cannot allocate a source");
    s->next = reader_source_next;
    s->rewind = reader_source_rewind;
    s->destroy = NULL;
    s->state = r;
    *out = s;
    return RFX_OK;
}
