/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_model.c - libFuzzer targets fuzz_model_buffer and, built with
 * FUZZ_MODEL_FROM_FILE, fuzz_model_file: the model loader from memory
 * (rfx_model_load_buffer) or from a file (rfx_model_load; the input in a
 * memfd), on the input as it is and on the input with its header's payload
 * size and CRCs made right (so that mutations reach the record checks). An
 * accepted model is used as a caller would use it (fuzz_exercise_model).
 */
#include "fuzz_util.h"

#include <stdlib.h>

static void load(const uint8_t *data, size_t size)
{
    rfx_model *m = NULL;
#ifdef FUZZ_MODEL_FROM_FILE
    rfx_status st = rfx_model_load(fuzz_file_with(data, size), &m);
#else
    rfx_status st = rfx_model_load_buffer(data, size, &m);
#endif
    if (st != RFX_OK) return;
    fuzz_exercise_model(m);
    rfx_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fixed = NULL;
    load(data, size);
    if (fuzz_model_fix_header(data, size, &fixed)) load(fixed, size);
    free(fixed);
    return 0;
}
