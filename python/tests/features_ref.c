/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * features_ref - the C reference for test_agreement.py: features of X by the
 * public C API alone (no Python), to compare bit for bit with the package.
 *
 *   features_ref MODE IN OUT n d D seed kernel form length_scale
 *
 * MODE f64 or f32; IN holds n x d raw native doubles (or floats), OUT gets
 * n x D of the same type. kernel and form by name. Exit 0 ok, 1 usage or
 * I/O, 2 an rfx error (message on stderr).
 */
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(rfx_status st)
{
    fprintf(stderr, "features_ref: %s\n", rfx_last_error());
    return st ? 2 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 11) {
        fprintf(stderr, "usage: features_ref f64|f32 IN OUT n d D seed kernel form length_scale\n");
        return 1;
    }
    int f32 = strcmp(argv[1], "f32") == 0;
    size_t n = strtoull(argv[4], NULL, 10), d = strtoull(argv[5], NULL, 10),
           D = strtoull(argv[6], NULL, 10);
    rfx_features_params p = rfx_features_params_default();
    p.n_features = D;
    p.seed = strtoull(argv[7], NULL, 10);
    rfx_status st = rfx_kernel_from_name(argv[8], &p.kernel);
    if (!st) st = rfx_form_from_name(argv[9], &p.form);
    if (st) return fail(st);
    p.length_scale = strtod(argv[10], NULL);
    rfx_features *f;
    if ((st = rfx_features_create(&p, d, &f))) return fail(st);

    size_t es = f32 ? sizeof(float) : sizeof(double);
    void *X = malloc(n * d * es), *Z = malloc(n * D * es);
    FILE *in = fopen(argv[2], "rb");
    if (!X || !Z || !in || fread(X, es, n * d, in) != n * d) return 1;
    fclose(in);
    if (f32)
        st = rfx_features_transform_f32(f, rfx_cmatf_of(X, n, d), rfx_matf_of(Z, n, D));
    else
        st = rfx_features_transform(f, rfx_cmat_of(X, n, d), rfx_mat_of(Z, n, D));
    if (st) return fail(st);
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(Z, es, n * D, out) != n * D || fclose(out)) return 1;
    rfx_features_free(f);
    free(X);
    free(Z);
    return 0;
}
