/* The hotpath's device-side byte comparison (hotpath_diff.cu): run 1's output stays in a
 * device buffer and every later determinism run is compared with it on the GPU, so only a
 * count and an index cross the bus. The word helpers are pure (host and device: the CPU test
 * test_hotpath_diff checks them against a byte loop). */
#ifndef KG_HOTPATH_DIFF_H
#define KG_HOTPATH_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "kgate/kgate.h"

#ifdef __CUDACC__
#define KG_HP_HD __host__ __device__
#else
#define KG_HP_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Index of the first differing byte of two little-endian 8-byte words (x = a ^ b, nonzero). */
static inline KG_HP_HD unsigned kg_hp_word_first_byte(uint64_t x)
{
    unsigned i = 0;
    while (!(x & 0xffu)) {
        x >>= 8;
        i++;
    }
    return i;
}

/* Number of nonzero bytes of x (the differing bytes of a ^ b). */
static inline KG_HP_HD unsigned kg_hp_word_diff_bytes(uint64_t x)
{
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    x &= 0x0101010101010101ull;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/* Whether one element (its es bytes, little-endian, in the low bits of v) is poison: every
 * byte still 0xFF (the gates' poison), or a NaN of a float dtype. A comparison of such
 * elements cannot fail (NaN bytes equal NaN bytes), so it proves nothing. */
static inline KG_HP_HD bool kg_hp_elem_poison(uint64_t v, unsigned es, kg_dtype dt)
{
    if (v == (es >= 8 ? ~0ull : (1ull << (8 * es)) - 1))
        return true;
    switch (dt) {
    case KG_DTYPE_F32: return (v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu);
    case KG_DTYPE_F64:
        return (v & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (v & 0x000fffffffffffffull);
    case KG_DTYPE_F16: return (v & 0x7c00u) == 0x7c00u && (v & 0x03ffu);
    case KG_DTYPE_BF16: return (v & 0x7f80u) == 0x7f80u && (v & 0x007fu);
    default: return false;
    }
}

/* Poison elements (kg_hp_elem_poison) among the 8 / es elements of one little-endian word. */
static inline KG_HP_HD unsigned kg_hp_word_poison(uint64_t w, unsigned es, kg_dtype dt)
{
    unsigned n = 0;
    const uint64_t m = es >= 8 ? ~0ull : (1ull << (8 * es)) - 1;
    for (unsigned i = 0; i < 8; i += es)
        n += kg_hp_elem_poison((w >> (8 * i)) & m, es, dt);
    return n;
}

/* One comparison of a (the output under check) with b (the output it must equal). */
typedef struct {
    size_t first;  /* first differing byte, SIZE_MAX when equal */
    size_t count;  /* differing bytes */
    size_t poison; /* poison elements of a (kg_hp_elem_poison) */
    size_t elems;  /* elements compared (n / the dtype's size) */
} kg_hp_diff;

/* Enqueue on s the comparison of n bytes (whole elements of dtype dt) at device pointers a
 * and b, and count a's poison elements in the same pass; scratch is a device buffer of 3
 * unsigned long long. Waits for s, then fills *out. No allocation. */
int kg_hp_device_compare(const void *a, const void *b, size_t n, kg_dtype dt,
                         unsigned long long *scratch, cudaStream_t s, kg_hp_diff *out);

/* Enqueue on s the comparison of n bytes at device pointers a and b; scratch is a device
 * buffer of 2 unsigned long long (count, first index). Waits for s, then *first is the first
 * differing byte (SIZE_MAX when equal) and *count the differing bytes. No allocation. */
int kg_hp_device_diff(const void *a, const void *b, size_t n, unsigned long long *scratch,
                      cudaStream_t s, size_t *first, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
