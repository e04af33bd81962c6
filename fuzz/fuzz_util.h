/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_util.h - what the fuzz targets of fuzz/ share: the libFuzzer entry
 * point, a file that holds the current input (for readers that take a path),
 * and the exercise of a model that a loader accepted.
 */
#ifndef RFX_FUZZ_UTIL_H
#define RFX_FUZZ_UTIL_H

#include "rfx.h"

#include <stddef.h>
#include <stdint.h>

/* The entry point each target defines; libFuzzer or fuzz/replay.c calls it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file (a memfd, /proc/self/fd/N) whose contents are now
 * data[0..size); the file is reused from call to call. Aborts when it
 * cannot be written: the harness, not the library, failed. */
const char *fuzz_file_with(const uint8_t *data, size_t size);

/* Read path with p by rfx_data_read and, when it is accepted, touch every
 * value and name it gives. */
void fuzz_read_data(const char *path, const rfx_read_params *p);

/* A copy of a model file's bytes (in *copy, to free) whose header has
 * the payload size and both CRCs that the bytes imply, so that mutated
 * files reach the record checks; 0, and no copy, when data is shorter than
 * a header or lacks the magic. */
int fuzz_model_fix_header(const uint8_t *data, size_t size, uint8_t **copy);

/* Everything a caller may do with a model a loader accepted: its info, a
 * prediction (with std when it has one, probabilities and scores for a
 * classifier) on a small finite matrix of its width, and a save to a buffer
 * that must load again. Aborts on a broken promise (a saved model that does
 * not load, an output outside what the header says). */
void fuzz_exercise_model(const rfx_model *m);

#endif
