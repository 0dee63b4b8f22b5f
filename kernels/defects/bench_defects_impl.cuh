/* Device code of the compute-bound bench defects (bench_defects.cu): one FMA-chain body,
 * templated on a policy that says how many dependent iterations a thread runs. The clean twin
 * and its slow variants are the same template with that one parameter changed (+p% more
 * dependent FMAs = +p% more time on an issue-bound kernel), nothing else. */
#ifndef KGATE_KERNELS_DEFECTS_BENCH_DEFECTS_IMPL_CUH
#define KGATE_KERNELS_DEFECTS_BENCH_DEFECTS_IMPL_CUH

#include <cstddef>

#define BD_FMA_BLOCK 256
#define BD_FMA_UNROLL 16 /* the loop body is 16 FMAs; the iteration counts are multiples of it */

/* kBase dependent iterations, kPct percent more, rounded down to the unroll factor (so the
 * loop has no remainder and its overhead is the same share in every variant). */
template <int kBase, int kPct> struct bd_fma_policy {
    static constexpr int kIters = (int)(((long long)kBase * (100 + kPct) / 100) / BD_FMA_UNROLL *
                                        BD_FMA_UNROLL);
};

/* One thread: x <- fma(x, a, c), kIters times, every step depending on the last (a = 0.5 from
 * memory, so the compiler can neither fold nor shorten the chain; the chain converges to the
 * fixed point 2c, which the CPU reference checks). With 2048 resident threads per SM the
 * 4-cycle FMA latency is hidden and the kernel is bound by FMA issue: 128 lanes per SM per
 * clock. */
template <class P>
__global__ void __launch_bounds__(BD_FMA_BLOCK)
    bd_fma_chain_kernel(const float *__restrict__ x0, const float *__restrict__ c,
                        const float *__restrict__ a, float *__restrict__ out, size_t n)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float ai = a[0], ci = c[i];
    float x = x0[i];
#pragma unroll 16
    for (int k = 0; k < P::kIters; k++)
        x = fmaf(x, ai, ci);
    out[i] = x;
}

/* Where a launcher enqueues: the stream it is given, or the legacy default stream
 * (a launcher that ignores its stream: during the capture of the case's non-blocking stream its
 * kernel runs eagerly and the graph is empty; outside it, events on the given stream time
 * nothing). One policy parameter between the clean twin and the defect. */
template <bool kLegacyStream> struct bd_stream_policy {
    static cudaStream_t pick(cudaStream_t given)
    {
        return kLegacyStream ? cudaStreamLegacy : given;
    }
};

#endif
