/* SPDX-License-Identifier: BSD-3-Clause */
/* AVX-512F build of the vector cos / sincos kernels. */
#define VB 64
#define SUFFIX avx512
#include "vmath_isa.h"
#include "vmath_kernels.h"
