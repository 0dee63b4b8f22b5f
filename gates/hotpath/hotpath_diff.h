/* The hotpath's device-side byte comparison (hotpath_diff.cu): run 1's output stays in a
 * device buffer and every later determinism run is compared with it on the GPU, so only a
 * count and an index cross the bus. The word helpers are pure (host and device: the CPU test
 * test_hotpath_diff checks them against a byte loop). */
#ifndef KG_HOTPATH_DIFF_H
#define KG_HOTPATH_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

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

/* Enqueue on s the comparison of n bytes at device pointers a and b; scratch is a device
 * buffer of 2 unsigned long long (count, first index). Waits for s, then *first is the first
 * differing byte (SIZE_MAX when equal) and *count the differing bytes. No allocation. */
int kg_hp_device_diff(const void *a, const void *b, size_t n, unsigned long long *scratch,
                      cudaStream_t s, size_t *first, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
