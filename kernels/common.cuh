/* Device helpers shared by the reference kernels (and their planted-defect twins). */
#ifndef KGATE_KERNELS_COMMON_CUH
#define KGATE_KERNELS_COMMON_CUH

#include <stdint.h>
#include <cuda_bf16.h>

/* Fixed-order warp sum: lane 0 ends with the total (shuffle-down tree 16,8,4,2,1). The
 * order never depends on timing, so the same inputs always give the same bits. */
static __device__ __forceinline__ float kg_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/* Fixed-order block sum for blockDim.x == BLOCK (a multiple of 32, <= 1024): thread 0 ends
 * with the total. `smem` holds BLOCK/32 floats; it may be reused after a __syncthreads(). */
template <int BLOCK> static __device__ __forceinline__ float kg_block_sum(float v, float *smem)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = kg_warp_sum(v);
    if (lane == 0)
        smem[warp] = v;
    __syncthreads();
    v = 0.0f;
    if (warp == 0) {
        if (lane < BLOCK / 32)
            v = smem[lane];
        v = kg_warp_sum(v);
    }
    return v;
}

/* Block-wide sum that EVERY thread receives, in a fixed order: xor butterfly inside the
 * warp (partners compute a+b and b+a, so all lanes hold identical bits), then each thread
 * folds the per-warp values 0..BLOCK/32-1 in order. `sh` holds BLOCK/32 floats; a caller that
 * reduces again before another barrier must alternate between two `sh` arrays. */
template <int BLOCK> static __device__ __forceinline__ float kg_block_allsum(float v, float *sh)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
#pragma unroll
    for (int w = 1; w < BLOCK / 32; w++)
        v += sh[w];
    return v;
}

/* bf16 <-> fp32 on raw bits (inputs/outputs are uint16_t so the host side needs no
 * cuda_bf16.h types). bf16 -> fp32 is exact; fp32 -> bf16 rounds to nearest even. */
static __device__ __forceinline__ float kg_bf16_lo(uint32_t pair)
{
    return __uint_as_float(pair << 16);
}
static __device__ __forceinline__ float kg_bf16_hi(uint32_t pair)
{
    return __uint_as_float(pair & 0xffff0000u);
}
static __device__ __forceinline__ float kg_bf16_to_float(uint16_t h)
{
    return __uint_as_float((uint32_t)h << 16);
}
static __device__ __forceinline__ uint16_t kg_float_to_bf16(float f)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
static __device__ __forceinline__ uint32_t kg_pack_bf16(float lo, float hi)
{
    return (uint32_t)kg_float_to_bf16(lo) | ((uint32_t)kg_float_to_bf16(hi) << 16);
}

/* Unpack / pack 8 bf16 values held in one 16-byte uint4. */
static __device__ __forceinline__ void kg_unpack8(uint4 v, float (&f)[8])
{
    f[0] = kg_bf16_lo(v.x);
    f[1] = kg_bf16_hi(v.x);
    f[2] = kg_bf16_lo(v.y);
    f[3] = kg_bf16_hi(v.y);
    f[4] = kg_bf16_lo(v.z);
    f[5] = kg_bf16_hi(v.z);
    f[6] = kg_bf16_lo(v.w);
    f[7] = kg_bf16_hi(v.w);
}
static __device__ __forceinline__ uint4 kg_pack8(const float (&f)[8])
{
    uint4 v;
    v.x = kg_pack_bf16(f[0], f[1]);
    v.y = kg_pack_bf16(f[2], f[3]);
    v.z = kg_pack_bf16(f[4], f[5]);
    v.w = kg_pack_bf16(f[6], f[7]);
    return v;
}

#endif /* KGATE_KERNELS_COMMON_CUH */
