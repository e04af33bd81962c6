/* SPDX-License-Identifier: BSD-3-Clause */
/* AVX2 + FMA build of the vector cos / sincos kernels. */
#define VB 32
#define SUFFIX avx2
#include "vmath_isa.h"
#include "vmath_kernels.h"
