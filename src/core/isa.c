/* SPDX-License-Identifier: BSD-3-Clause */
/* The instruction-set path of the vector kernels: the CPU's best, lowered
 * by the environment variable RFX_ISA or by rfx_isa_set. */
#include "internal.h"

#include <stdatomic.h>
#include <string.h>

/* -1 until the first look-up; then the path in force. */
static atomic_int active = -1;

rfx_isa rfx_isa_native(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return RFX_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return RFX_ISA_AVX2;
#endif
    return RFX_ISA_GENERIC;
}

static rfx_isa capped(rfx_isa want)
{
    rfx_isa cpu = rfx_isa_native();
    return want < cpu ? want : cpu;
}

rfx_isa rfx_isa_active(void)
{
    int a = atomic_load_explicit(&active, memory_order_relaxed);
    if (a >= 0) return (rfx_isa)a;
    /* first use: the environment, else the CPU's best (a race here stores
     * the same value twice) */
    const char *env = getenv("RFX_ISA");
    rfx_isa want = RFX_ISA_AVX512;
    for (int i = RFX_ISA_GENERIC; env && i <= RFX_ISA_AVX512; i++)
        if (strcmp(env, rfx_isa_name((rfx_isa)i)) == 0) want = (rfx_isa)i;
    a = (int)capped(want);
    atomic_store_explicit(&active, a, memory_order_relaxed);
    return (rfx_isa)a;
}

rfx_status rfx_isa_set(rfx_isa isa)
{
    if ((unsigned)isa > RFX_ISA_AVX512)
        return rfx__error(RFX_EINVAL, "isa: %d is not an instruction-set path", (int)isa);
    atomic_store_explicit(&active, (int)capped(isa), memory_order_relaxed);
    return RFX_OK;
}
