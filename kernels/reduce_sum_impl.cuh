/* reduce_sum device code (see reduce_sum.cu for the contract): the final pass, shared by
 * reduce_sum_final_kernel and the planted parity defect defect_reduce_sum_final_kernel, so the
 * defect differs from the reference in its policy and nothing else; and the two-pass launch,
 * which both run behind the same pass 1. */
#ifndef KGATE_KERNELS_REDUCE_SUM_IMPL_CUH
#define KGATE_KERNELS_REDUCE_SUM_IMPL_CUH

#include "cases.h"
#include "common.cuh"

/* Policy: how many of the `count` partials, counted from the end, the final pass leaves out.
 * The reference adds them all; the defect's `threadIdx.x + 1 < count` loses the last block's
 * partial (~1/1024 of the sum at G = 1024). */
struct reduce_sum_ref_policy {
    static constexpr unsigned kSkipLast = 0;
};
struct reduce_sum_drop_partial_policy {
    static constexpr unsigned kSkipLast = 1;
};

/* Pass 2, one block of KG_REDUCE_FINAL_BLOCK threads: count <= KG_REDUCE_FINAL_BLOCK, one
 * partial per thread, absent ones add +0, the fixed block tree. */
template <class P>
static __device__ __forceinline__ void reduce_sum_final_body(const float *__restrict__ partials,
                                                             float *__restrict__ out,
                                                             unsigned count)
{
    __shared__ float smem[KG_REDUCE_FINAL_BLOCK / 32];
    float v = threadIdx.x + P::kSkipLast < count ? partials[threadIdx.x] : 0.0f;
    v = kg_block_sum<KG_REDUCE_FINAL_BLOCK>(v, smem);
    if (threadIdx.x == 0)
        out[0] = v;
}

/* Pass 1 (defined in reduce_sum.cu): every final pass runs behind it. */
__global__ void __launch_bounds__(KG_REDUCE_BLOCK)
    reduce_sum_partials_kernel(const float *__restrict__ x, float *__restrict__ partials, size_t n);

/* Pass 1 on kg_reduce_grid(n) blocks, then `final_k` on one block (host). `partials` must hold
 * kg_reduce_grid(n) floats. */
typedef void (*reduce_sum_final_fn)(const float *, float *, unsigned);
static inline int reduce_sum_launch_with(reduce_sum_final_fn final_k, const float *x,
                                         float *partials, float *out, size_t n, cudaStream_t s)
{
    int rc = 0;
    const unsigned g = kg_reduce_grid(n);
    reduce_sum_partials_kernel<<<g, KG_REDUCE_BLOCK, 0, s>>>(x, partials, n);
    KG_LAUNCH_CHECK();
    final_k<<<1, KG_REDUCE_FINAL_BLOCK, 0, s>>>(partials, out, g);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

#endif /* KGATE_KERNELS_REDUCE_SUM_IMPL_CUH */
