/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_npy.c - libFuzzer target: the .npy reader (rfx_data_read on a file
 * that starts with the .npy magic; other inputs are skipped), with no
 * target and with the last column as the target.
 */
#include "fuzz_util.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6 || memcmp(data, "\x93NUMPY", 6) != 0) return 0;
    const char *path = fuzz_file_with(data, size);
    rfx_read_params p = rfx_read_params_default();
    fuzz_read_data(path, &p);
    p.target = "-1";
    fuzz_read_data(path, &p);
    return 0;
}
