/* kgate public API, part of kgate/kgate.h (which includes every part): helpers for setup(): random and counter-based fills, bf16 conversion.
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_FILL_H
#define KGATE_FILL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "kgate/case.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- helpers for setup() -------------------------------------------------------------- */

/* Deterministic generator (splitmix64-seeded xoshiro256**); state is 4 words. Not shared
 * between threads; seed one per buffer (stream_id) so buffers are independent of each other
 * and of the shape. */
typedef struct {
    uint64_t s[4];
} kg_rng;
void kg_rng_seed(kg_rng *r, uint64_t seed, uint64_t stream_id);
uint64_t kg_rng_next(kg_rng *r);
/* Uniform in [lo, hi); never produces an all-zero buffer for lo < hi. */
void kg_rng_fill_f32(kg_rng *r, float *dst, size_t n, float lo, float hi);
void kg_rng_fill_bf16(kg_rng *r, uint16_t *dst, size_t n, float lo, float hi);

/* Counter-based fills from the seed, the same bits on every GPU and on the host (value i is a
 * function of seed and i only: kgate/fill_element.h says exactly how, including rounding and
 * zeros). dtype: KG_DTYPE_F32, BF16, F16 or I32 (bf16/f16 as raw uint16_t). Uniform: [a, b)
 * (a < b; floats may reach b by rounding, never produce exact zeros: a value rounding to 0
 * becomes the dtype's smallest normal of that sign; i32: integers in [ceil(a), ceil(b))).
 * Normal: mean a, standard deviation b (b > 0). Seed each buffer differently (e.g.
 * args->seed ^ buffer_index * 0x9e3779b97f4a7c15). */
typedef enum { KG_FILL_UNIFORM = 0, KG_FILL_NORMAL = 1 } kg_fill_dist;
/* Enqueue the fill of n elements at device pointer dev on stream s (no sync, no allocation). */
int kg_fill_device(void *dev, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist, double a,
                   double b, cudaStream_t s);
/* The same n values into host memory dst: a reference needs no copy back. */
int kg_fill_host(void *dst, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist, double a,
                 double b);
/* A slice of the same fill: elements [offset, offset + n) of the fill of that seed into dst[0..n)
 * (a reference over part of an input, a buffer filled in pieces). kg_fill_*(..., n, ...) is
 * kg_fill_*_at(..., 0, n, ...). */
int kg_fill_host_at(void *dst, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                    kg_fill_dist dist, double a, double b);
int kg_fill_device_at(void *dev, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                      kg_fill_dist dist, double a, double b, cudaStream_t s);

/* The host threads kg_fill_host runs on, for a reference's own loop (a parallel-for over rows):
 * [0, n) is cut into `parts` slices, slice k = [n*k/parts, n*(k+1)/parts), and fn(ctx, i0, i1,
 * k) runs once for each, on at most kg_par_threads() threads (a thread that cannot start leaves
 * its slices to the caller's). The slices depend on n and parts only, never on the thread
 * count: a reduction that keeps one partial per slice and adds them in slice order is the same
 * bits on 1 thread or 16. Returns when every slice is done. parts 0 runs nothing. */
typedef void (*kg_par_fn)(void *ctx, size_t i0, size_t i1, size_t part);
void kg_par_for(size_t n, size_t parts, kg_par_fn fn, void *ctx);
/* The bound: $KGATE_THREADS (1..16) where set, else the online CPUs, at most 16. */
int kg_par_threads(void);

uint16_t kg_f32_to_bf16(float f); /* round to nearest even */
float kg_bf16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif /* KGATE_FILL_H */
