/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/data.h - data files: CSV and .npy readers with exact error positions,
 * and writers.
 */
#ifndef RFX_DATA_H
#define RFX_DATA_H

#include "rfx/core.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Data input and output                                                     */
/* ------------------------------------------------------------------------ */

/* A table of numbers read from CSV or .npy: inputs X (n x d) and, when a
 * target column was named, Y (n x 1). */
typedef struct rfx_data rfx_data;

typedef struct rfx_read_params {
    const char *target;  /* target column: a header name, or a 0-based index
                            as text ("3"), or "-1" for the last column; NULL
                            for no target (all columns are inputs)          */
    char delimiter;      /* CSV field separator, default ','                */
    int has_header;      /* CSV: 1 = first row names the columns, 0 = none,
                            -1 = detect (default): a first row with a cell
                            that is not a number is a header                 */
    char comment;        /* CSV: lines starting with it are skipped,
                            default '#'; 0 for none                         */
    size_t max_bytes;    /* rfx_data_read: the most the table's numbers may
                            take (8 bytes a cell); a larger table is
                            RFX_ENOMEM ("... over the memory limit of ...")
                            before it is read whole. 0 (default): no limit */
} rfx_read_params;

RFX_API rfx_read_params rfx_read_params_default(void);

/* Read a CSV file or a .npy file (float64 or float32, C order, 1-D or 2-D;
 * chosen by the magic bytes). Errors name the file, line and column: ragged
 * rows, cells that are not numbers, NaN or Inf, an empty file, zero rows or
 * columns, an unknown target column. A .npy header's shape is checked
 * against the file's size before anything is allocated; from a pipe or
 * another non-regular file the values are read as they come, in memory
 * growing with them, and an input shorter than its shape claims is
 * RFX_EPARSE ("truncated .npy data: shape (n, d) needs N values, the input
 * ended after M"). */
RFX_API rfx_status rfx_data_read(const char *path, const rfx_read_params *params,
                                 rfx_data **out);
RFX_API void rfx_data_free(rfx_data *data);

RFX_API rfx_cmat rfx_data_x(const rfx_data *data);
RFX_API rfx_cmat rfx_data_y(const rfx_data *data);  /* rfx_cmat_none() if none */
/* The name of input column j (j < d), or of the target when j == SIZE_MAX;
 * "x<j>" style names when the file had no header. */
RFX_API const char *rfx_data_name(const rfx_data *data, size_t j);
/* 1 when the names came from the file's header line, 0 when they were made
 * up (no header, or a .npy file). */
RFX_API int rfx_data_has_names(const rfx_data *data);

/* Take an input column out of the table (a row-weight column, say):
 * column is its name (with a header) or 0-based index as text ("-1" the
 * last input), as rfx_read_params.target; its n values go to values, and
 * X keeps the other d - 1 columns in order, with their names. RFX_EPARSE
 * for a column that is not an input, RFX_EDIM when it is the only one. */
RFX_API rfx_status rfx_data_take_column(rfx_data *data, const char *column, double *values);

/* ------------------------------------------------------------------------ */
/* Reading in row blocks                                                     */
/* ------------------------------------------------------------------------ */

/* A table read a block of rows at a time, in memory O(block): for files
 * larger than memory and for standard input. Takes what rfx_data_read
 * takes (CSV or .npy, told by content), and also "-" for standard input
 * and gzip-compressed files (by their first bytes, any name; several
 * members one after another are one input). Errors name the file, line
 * and column as rfx_data_read's do; an error in a later block comes when
 * that block is read. */
typedef struct rfx_reader rfx_reader;

typedef struct rfx_reader_params {
    size_t block_rows;   /* rows per block, default 4096                     */
    int rewindable;      /* 1: rfx_reader_rewind will be called, so an input
                            that cannot seek (a pipe, standard input) is
                            copied to an unlinked temporary file in TMPDIR
                            as it is read. Default 0                        */
    /* A part of the rows, for processes that share a file (a plain regular
     * file only). The rows whose line (.npy: whose data) starts at a byte
     * offset in [byte_begin, byte_end), the header aside: consecutive
     * ranges that cover the file give every row once, wherever the cuts
     * fall (a cut inside a line gives it to the range where it starts).
     * Then skip_rows of them are left out, and with max_rows at most that
     * many are given, reading on past byte_end when needed. An empty range
     * gives no rows (not an error: the header is still read). Lines are
     * still numbered from the file's start in messages. A CSV record must
     * not span lines here (a quoted line break). Defaults: 0, UINT64_MAX,
     * 0, UINT64_MAX (every row). */
    uint64_t byte_begin, byte_end;
    uint64_t skip_rows, max_rows;
} rfx_reader_params;

RFX_API rfx_reader_params rfx_reader_params_default(void);

/* Open path and read its first block (the header and the columns are then
 * known; a file with no data row fails here). params may be NULL
 * (defaults); read as for rfx_data_read (NULL: defaults). */
RFX_API rfx_status rfx_reader_open(const char *path, const rfx_read_params *read,
                                   const rfx_reader_params *params, rfx_reader **out);
RFX_API void rfx_reader_free(rfx_reader *r);

/* The next block: X (rows x d) and Y (rows x 1, or rfx_cmat_none() without
 * a target), valid until the next call. *done = 1 (and no rows) at the
 * end. */
RFX_API rfx_status rfx_reader_next(rfx_reader *r, rfx_cmat *X, rfx_cmat *Y, int *done);
/* Back to the first row (RFX_EINVAL for a pipe not opened rewindable). */
RFX_API rfx_status rfx_reader_rewind(rfx_reader *r);

/* The input columns d, and 1 when there is a target column. */
RFX_API size_t rfx_reader_inputs(const rfx_reader *r);
RFX_API int rfx_reader_has_target(const rfx_reader *r);
/* Column names as rfx_data_name and rfx_data_has_names give them. */
RFX_API const char *rfx_reader_name(const rfx_reader *r, size_t j);
RFX_API int rfx_reader_has_names(const rfx_reader *r);
/* Rows given by rfx_reader_next since the start of this pass. */
RFX_API uint64_t rfx_reader_rows(const rfx_reader *r);
/* The fraction of the input's stored bytes read so far, in [0, 1], or -1
 * when its size is unknown (standard input from a pipe): for progress. */
RFX_API double rfx_reader_fraction(const rfx_reader *r);

/* The reader as a row-block source for the streaming fits
 * (rfx_stats_add_source, rfx_ridge_fit_source, rfx_model_fit_source): its
 * blocks carry the target as their one target column (none without one).
 * rfx_source_free releases the source, not the reader, which must outlive
 * it. */
RFX_API rfx_status rfx_reader_source(rfx_reader *r, rfx_source **out);

/* Write M as CSV (with a header line when names is not NULL: M.cols names)
 * with 17 significant digits, or as a float64 .npy file. Both write files
 * as rfx_model_save does: a temporary file and a rename for a regular file
 * (its mode kept, a symbolic link followed), a device or FIFO in place. */
RFX_API rfx_status rfx_csv_write(const char *path, rfx_cmat M, const char *const *names);
RFX_API rfx_status rfx_npy_write(const char *path, rfx_cmat M);

/* A table written a block of rows at a time (predictions of a stream), as
 * the writers above write whole ones: CSV (with a header line when names is
 * not NULL: cols names), or a float64 .npy file when path ends in ".npy"
 * (its header is written again at the end with the row count, so it must
 * be a regular file). Nothing is at path until rfx_writer_close succeeds
 * (a temporary file beside it is renamed over it); rfx_writer_abort, or a
 * failed close, leaves path as it was. Both free the writer. */
typedef struct rfx_writer rfx_writer;
RFX_API rfx_status rfx_writer_open(const char *path, size_t cols, const char *const *names,
                                   rfx_writer **out);
RFX_API rfx_status rfx_writer_write(rfx_writer *w, rfx_cmat M);
RFX_API rfx_status rfx_writer_close(rfx_writer *w);
RFX_API void rfx_writer_abort(rfx_writer *w);

/* Write len bytes to path as the writers above write their files: never a
 * half-written regular file, a device or FIFO in place, every write error
 * reported (RFX_EIO naming the path). */
RFX_API rfx_status rfx_write_file(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* RFX_DATA_H */
