/* The instruction-set path of the vector kernels: the CPU's best, lowered
 * by the environment variable RFX_ISA or by rfx_isa_set. */
#include "internal.h"

#include <stdatomic.h>
#include <string.h>

static const char *const names[] = {"generic", "avx2", "avx512"};

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

const char *rfx_isa_name(rfx_isa isa)
{
    return (unsigned)isa < sizeof names / sizeof *names ? names[isa] : "unknown";
}

rfx_status rfx_isa_from_name(const char *name, rfx_isa *out)
{
    for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (rfx_isa)i;
            return RFX_OK;
        }
    return rfx__error(RFX_EINVAL, "instruction set '%s' is unknown (generic, avx2, avx512)",
                      name ? name : "(null)");
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
    for (size_t i = 0; env && i < sizeof names / sizeof *names; i++)
        if (strcmp(env, names[i]) == 0) want = (rfx_isa)i;
    a = (int)capped(want);
    atomic_store_explicit(&active, a, memory_order_relaxed);
    return (rfx_isa)a;
}

rfx_status rfx_isa_set(rfx_isa isa)
{
    if ((unsigned)isa >= sizeof names / sizeof *names)
        return rfx__error(RFX_EINVAL, "isa: %d is not an instruction-set path", (int)isa);
    atomic_store_explicit(&active, (int)capped(isa), memory_order_relaxed);
    return RFX_OK;
}
