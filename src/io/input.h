/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io/input.h - the readers' inputs (src/io/input.c): a path or "-" for
 * standard input, plain or gzip-compressed, rewindable on request.
 */
#ifndef RFX_IO_INPUT_H
#define RFX_IO_INPUT_H

#include <stdio.h>

#include "rfx/core.h"

typedef struct rfx__input rfx__input;

/* Open real ("-": standard input, left open at the end) for reading; shown
 * is the path as messages show it and must outlive the input. With
 * rewindable, an input that cannot seek (a pipe) is copied to an unlinked
 * temporary file as it is read, so that rfx__input_rewind can read it
 * again. */
rfx_status rfx__input_open(const char *real, const char *shown, int rewindable,
                           rfx__input **out);
/* Back to the first byte (the stream of rfx__input_stream changes). */
rfx_status rfx__input_rewind(rfx__input *in);
/* The decoded bytes of the input. */
FILE *rfx__input_stream(const rfx__input *in);
/* The fraction of a regular file read so far (of its stored, maybe
 * compressed, bytes), or -1 when its size is unknown (a pipe). */
double rfx__input_fraction(const rfx__input *in);
/* The stream is a plain regular file's own (fstat and fileno tell its size). */
int rfx__input_is_regular(const rfx__input *in);
void rfx__input_close(rfx__input *in);
/* After a failed read of a stream: the data problem behind it (a gzip
 * stream cut short or corrupt), once, or NULL for an I/O error. */
const char *rfx__input_problem(void);

#endif /* RFX_IO_INPUT_H */
