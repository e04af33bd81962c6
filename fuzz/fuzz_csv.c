/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_csv.c - libFuzzer target: the CSV reader (rfx_data_read), the input
 * as a CSV file, read with several sets of reading parameters (detected or
 * given header, a target by name, by index or none, other delimiters and
 * comment characters). Inputs that start like a .npy file go to fuzz_npy.
 */
#include "fuzz_util.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0) return 0;
    const char *path = fuzz_file_with(data, size);
    static const struct { const char *target; char delimiter; int has_header; char comment; } P[] = {
        { NULL, ',', -1, '#' }, { "-1", ',', -1, '#' }, { "y", ';', 1, 0 }, { "1", '\t', 0, '%' }
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; ++i) {
        rfx_read_params p = rfx_read_params_default();
        p.target = P[i].target;
        p.delimiter = P[i].delimiter;
        p.has_header = P[i].has_header;
        p.comment = P[i].comment;
        fuzz_read_data(path, &p);
    }
    return 0;
}
