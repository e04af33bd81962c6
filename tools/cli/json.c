/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - the reports of eval, info, sobol and kernel-approx as JSON
 * (--format json), and where a report goes (-o FILE or stdout): the
 * report is made in memory and written whole, as the library writes its
 * files (rfx_write_file), so a file is never left half-written.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- where a report goes -------------------------------------------------- */

int cli_report_open(cli_report *r, const char *path, int json)
{
    memset(r, 0, sizeof *r);
    r->json = json;
    r->path = path && strcmp(path, "-") != 0 ? path : NULL;
    if (!r->path) {
        r->fp = stdout;
        return RC_OK;
    }
    r->fp = open_memstream(&r->buf, &r->len);
    if (!r->fp) {
        cli_say("out of memory for the report");
        return RC_INTERNAL;
    }
    return RC_OK;
}

int cli_report_close(cli_report *r, int rc)
{
    if (!r->path) {
        if (fflush(stdout) != 0 && rc == RC_OK) {
            cli_say("cannot write to standard output");
            rc = RC_IO;
        }
        return rc;
    }
    int failed = fclose(r->fp) != 0;
    if (rc == RC_OK && failed) {
        cli_say("out of memory for the report");
        rc = RC_INTERNAL;
    }
    if (rc == RC_OK) {
        rfx_status st = rfx_write_file(r->path, r->buf, r->len);
        if (st != RFX_OK) rc = cli_fail(st);
    }
    free(r->buf);
    memset(r, 0, sizeof *r);
    return rc;
}

int cli_parse_format(const opt_iter *it, const char *s, int *json)
{
    if (strcmp(s, "text") == 0) *json = 0;
    else if (strcmp(s, "json") == 0) *json = 1;
    else return cli_value_error(it, "'%s' is not a format (text or json)", s);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

/* Before a value or a key: the comma after the previous member, the
 * indentation, and "key": when there is a key. */
static void lead(json_writer *w, const char *key)
{
    if (w->depth > 0) {
        if (w->count[w->depth - 1]++) fputc(',', w->fp); /* depth <= JSON_MAX_DEPTH */
        fputc('\n', w->fp);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->fp);
    }
    if (key) {
        json_string(w->fp, key);
        fputs(": ", w->fp);
    }
}

void json_string(FILE *fp, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', fp);
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', fp);
            fputc(c, fp);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(fp, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            fputc(c, fp);
            p++;
        } else {
            /* well-formed UTF-8 as is, anything else as U+FFFD */
            char one[8], safe[64];
            size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1, k = 1;
            while (k < n && (p[k] & 0xc0) == 0x80) k++;
            memcpy(one, p, k);
            one[k] = '\0';
            if (k == n && strcmp(cli_escape(one, safe, sizeof safe), one) == 0) fputs(one, fp);
            else fputs("\\ufffd", fp);
            p += k;
        }
    }
    fputc('"', fp);
}

void json_begin(json_writer *w, FILE *fp)
{
    memset(w, 0, sizeof *w);
    w->fp = fp; /* the tool never calls setlocale: numbers print with '.' */
    fputc('{', fp);
    w->depth = 1;
}

void json_end(json_writer *w)
{
    fputs("\n}\n", w->fp);
}

void json_open(json_writer *w, const char *key, char bracket)
{
    lead(w, key);
    fputc(bracket, w->fp);
    w->count[w->depth++] = 0; /* the reports nest less than JSON_MAX_DEPTH deep */
}

void json_close(json_writer *w, char bracket)
{
    w->depth--;
    if (w->count[w->depth]) {
        fputc('\n', w->fp);
        for (int i = 0; i < w->depth; i++) fputs("  ", w->fp);
    }
    fputc(bracket, w->fp);
}

/* Numbers keep every digit ("%.17g" reads back to the same double); NaN and
 * the infinities, which JSON lacks, are null. */
void json_num(json_writer *w, const char *key, double v)
{
    lead(w, key);
    if (isfinite(v)) fprintf(w->fp, "%.17g", v);
    else fputs("null", w->fp);
}

void json_size(json_writer *w, const char *key, size_t v)
{
    lead(w, key);
    fprintf(w->fp, "%zu", v);
}

void json_str(json_writer *w, const char *key, const char *s)
{
    lead(w, key);
    if (s) json_string(w->fp, s);
    else fputs("null", w->fp);
}

void json_bool(json_writer *w, const char *key, int v)
{
    lead(w, key);
    fputs(v ? "true" : "false", w->fp);
}

void json_nums(json_writer *w, const char *key, const double *v, size_t n)
{
    json_open(w, key, '[');
    for (size_t i = 0; i < n; i++) json_num(w, NULL, v[i]);
    json_close(w, ']');
}
