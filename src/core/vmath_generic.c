/* SPDX-License-Identifier: BSD-3-Clause */
/* The portable build of the vector cos / sincos and fused kernels: 16-byte
 * vectors in the target's baseline instruction set (SSE2 on x86-64). */
#define VB 16
#define SUFFIX generic
#include "vmath_isa.h"
#include "vmath_kernels.h"
