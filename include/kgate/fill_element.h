/* The element function of kg_fill_host and kg_fill_device: one definition, compiled for the host
 * (C, C++) and for the device (CUDA), so the two cannot drift. Value i of a fill is a pure
 * function of (seed, i, dtype, dist, a, b):
 *   - bits: SplitMix64 over a counter, z_k = mix(mix(seed) + (k + 1) * golden), k = 2i, 2i + 1;
 *   - uniform: x = a + (b - a) * u, u = (z_2i >> 11) * 2^-53 in [0, 1);
 *   - normal: Box-Muller, x = a + b * sqrt(-2 ln u1) * cos(2 pi u2), u1 in (0, 1];
 *   - ln and cos are kgate's own series using only +, -, *, / and sqrt, each correctly rounded
 *     (the device uses the _rn intrinsics, which are never contracted into FMAs; the host file
 *     is compiled with -ffp-contract=off), so every GPU and the host give the same bits;
 *   - f32 = x rounded to nearest; bf16 and f16 = that f32 rounded to nearest even;
 *   - a float result that rounds to +-0 becomes the dtype's smallest normal of the same sign
 *     (f32 2^-126, bf16 2^-126, f16 2^-14), so a fill never holds an exact zero; uniform
 *     values lie in [a, b] once rounded to the dtype (b itself only by rounding); values
 *     beyond the dtype's range become +-inf (f16: keep |a|, |b| < 65504);
 *   - i32 uniform: integers in [ceil(a), ceil(b)) (at most 2^32 of them); normal: x rounded
 *     half up, clamped to int32 (zeros are ordinary values there).
 * Internal to kgate's fill (installed so the sharing is visible); not part of kgate.h. */
#ifndef KGATE_FILL_ELEMENT_H
#define KGATE_FILL_ELEMENT_H
#include <stdint.h>
#include "kgate/kgate.h"

#if defined(__CUDACC__)
#define KG_FILL_HD __host__ __device__ static inline
#else
#define KG_FILL_HD static inline
#endif
#if defined(__CUDA_ARCH__)
#define KG_F_ADD(x, y) __dadd_rn((x), (y))
#define KG_F_SUB(x, y) __dsub_rn((x), (y))
#define KG_F_MUL(x, y) __dmul_rn((x), (y))
#define KG_F_DIV(x, y) __ddiv_rn((x), (y))
#define KG_F_SQRT(x) __dsqrt_rn(x)
#define KG_F_TO_F32(x) __double2float_rn(x)
#else
#include <math.h>
#define KG_F_ADD(x, y) ((x) + (y))
#define KG_F_SUB(x, y) ((x) - (y))
#define KG_F_MUL(x, y) ((x) * (y))
#define KG_F_DIV(x, y) ((x) / (y))
#define KG_F_SQRT(x) sqrt(x)
#define KG_F_TO_F32(x) ((float)(x))
#endif

KG_FILL_HD uint64_t kg_fill_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

KG_FILL_HD uint64_t kg_fill_bits(uint64_t seed, uint64_t k)
{
    return kg_fill_mix(kg_fill_mix(seed) + (k + 1) * 0x9e3779b97f4a7c15ULL);
}

/* ln x for x in [2^-53, 1]: x = m 2^e, m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s). */
KG_FILL_HD double kg_fill_ln(double x)
{
    union {
        double d;
        uint64_t u;
    } v;
    v.d = x;
    int e = (int)((v.u >> 52) & 0x7ff) - 1023;
    v.u = (v.u & 0xfffffffffffffULL) | (1023ULL << 52);
    double m = v.d;
    if (m > 1.4142135623730951) {
        m = KG_F_MUL(m, 0.5);
        e++;
    }
    double s = KG_F_DIV(KG_F_SUB(m, 1.0), KG_F_ADD(m, 1.0)), s2 = KG_F_MUL(s, s), p = 0.0;
    for (int k = 11; k >= 0; k--)
        p = KG_F_ADD(KG_F_DIV(1.0, (double)(2 * k + 1)), KG_F_MUL(s2, p));
    return KG_F_ADD(KG_F_MUL((double)e, 0.6931471805599453), KG_F_MUL(KG_F_MUL(2.0, s), p));
}

/* cos(2 pi u) for u in [0, 1): quadrant from 4u (exact), then Taylor series on [0, pi/2). */
KG_FILL_HD double kg_fill_cos2pi(double u)
{
    double u4 = KG_F_MUL(u, 4.0);
    int q = (int)u4;
    double t = KG_F_MUL(KG_F_SUB(u4, (double)q), 1.5707963267948966), t2 = KG_F_MUL(t, t);
    double c = 1.0, s = 1.0;
    for (int k = 12; k >= 1; k--) {
        c = KG_F_SUB(1.0, KG_F_DIV(KG_F_MUL(t2, c), (double)((2 * k - 1) * (2 * k))));
        s = KG_F_SUB(1.0, KG_F_DIV(KG_F_MUL(t2, s), (double)((2 * k) * (2 * k + 1))));
    }
    s = KG_F_MUL(t, s);
    return q == 0 ? c : q == 1 ? -s : q == 2 ? -c : s;
}

KG_FILL_HD uint32_t kg_fill_f32_bits(float f)
{
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
}

/* f32 bits -> bf16 / f16, round to nearest even (no NaN reaches here). */
KG_FILL_HD uint32_t kg_fill_bf16(uint32_t u) { return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; }

KG_FILL_HD uint32_t kg_fill_f16(uint32_t u)
{
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    int e = (int)(a >> 23) - 127 + 15;
    if (e >= 31)
        return sign | 0x7c00u; /* overflow (or inf): inf */
    if (e <= 0) {              /* subnormal or zero */
        if (e < -10)
            return sign;
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        int shift = 14 - e; /* 14..24 */
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u)))
            h++;
        return sign | h;
    }
    uint32_t h = ((uint32_t)e << 10) | ((a >> 13) & 0x3ffu), rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right rounding (up to inf) */
    return sign | h;
}

/* The value of element i as raw bits: f32 and i32 in 32 bits, bf16 and f16 in the low 16. */
KG_FILL_HD uint32_t kg_fill_element(uint64_t seed, uint64_t i, kg_dtype dtype, int dist, double a,
                                    double b)
{
    uint64_t z0 = kg_fill_bits(seed, 2 * i), z1 = kg_fill_bits(seed, 2 * i + 1);
    double x;
    if (dtype == KG_DTYPE_I32 && dist == 0) {
        double lo = ceil(a), hi = ceil(b);
        uint64_t span = hi > lo ? (uint64_t)(int64_t)(hi - lo) : 1;
        return (uint32_t)(int32_t)((int64_t)lo + (int64_t)(((z0 >> 32) * span) >> 32));
    }
    if (dist == 0) {
        double u = KG_F_MUL((double)(z0 >> 11), 1.1102230246251565e-16); /* 2^-53 */
        x = KG_F_ADD(a, KG_F_MUL(KG_F_SUB(b, a), u));
    } else {
        double u1 = KG_F_MUL((double)((z0 >> 11) + 1), 1.1102230246251565e-16);
        double u2 = KG_F_MUL((double)(z1 >> 11), 1.1102230246251565e-16);
        double r = KG_F_SQRT(KG_F_MUL(-2.0, kg_fill_ln(u1)));
        x = KG_F_ADD(a, KG_F_MUL(b, KG_F_MUL(r, kg_fill_cos2pi(u2))));
    }
    if (dtype == KG_DTYPE_I32) {
        double r = floor(KG_F_ADD(x, 0.5));
        return (uint32_t)(int32_t)(r >= 2147483647.0    ? 2147483647.0
                                   : r <= -2147483648.0 ? -2147483648.0
                                                        : r);
    }
    uint32_t f = kg_fill_f32_bits(KG_F_TO_F32(x)), sign = f & 0x80000000u;
    if (dtype == KG_DTYPE_BF16) {
        uint32_t h = kg_fill_bf16(f);
        return (h & 0x7fffu) ? h : (sign >> 16) | 0x0080u;
    }
    if (dtype == KG_DTYPE_F16) {
        uint32_t h = kg_fill_f16(f);
        return (h & 0x7fffu) ? h : (sign >> 16) | 0x0400u;
    }
    return (f & 0x7fffffffu) ? f : sign | 0x00800000u;
}
#endif /* KGATE_FILL_ELEMENT_H */
