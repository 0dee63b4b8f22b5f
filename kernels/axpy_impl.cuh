/* axpy device code (see axpy.cu for the contract), shared by axpy_kernel, the hot-path defects'
 * hp_axpy_kernel and the planted parity defect defect_axpy_last_kernel: one body, templated
 * on a policy, so a defect differs from the reference in its policy and nothing else. */
#ifndef KGATE_KERNELS_AXPY_IMPL_CUH
#define KGATE_KERNELS_AXPY_IMPL_CUH

#include "cases.h"

/* Policy: how many elements short of n the scalar tail stops. The reference writes them all;
 * the parity defect's off-by-one bound (`t + 1 < n`) never writes element n-1 when n % 4 != 0
 * (the output keeps the poison kgate filled it with). */
struct axpy_ref_policy {
    static constexpr size_t kTailShort = 0;
    /* After the element-wise work: nothing. The fault defects (defects/fault_defects.cu)
     * plant a device fault here instead (an illegal store, a trap, an assert, a spin). */
    static __device__ __forceinline__ void after(float *, size_t) {}
};
struct axpy_drop_last_policy : axpy_ref_policy {
    static constexpr size_t kTailShort = 1;
};

/* Grid-stride loop over float4 chunks, then the scalar tail (at most 3 elements) handled by
 * the first threads of the grid. Grid-stride lets the grid be capped (KG_AXPY_MAX_GRID) so
 * huge n does not need billions of blocks, while small n still launches only what it needs.
 * x, y, out must be 16-byte aligned (cudaMalloc's 256 bytes, or an offset that is a multiple
 * of 4 elements). */
template <class P>
static __device__ __forceinline__ void axpy_body(float a, const float *__restrict__ x,
                                                 const float *__restrict__ y,
                                                 float *__restrict__ out, size_t n)
{
    const size_t n4 = n / 4;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    const float4 *y4 = reinterpret_cast<const float4 *>(y);
    float4 *o4 = reinterpret_cast<float4 *>(out);
    for (size_t i = tid; i < n4; i += stride) {
        const float4 xv = x4[i];
        const float4 yv = y4[i];
        float4 r;
        r.x = fmaf(a, xv.x, yv.x);
        r.y = fmaf(a, xv.y, yv.y);
        r.z = fmaf(a, xv.z, yv.z);
        r.w = fmaf(a, xv.w, yv.w);
        o4[i] = r;
    }
    const size_t t = n4 * 4 + tid;
    if (t + P::kTailShort < n)
        out[t] = fmaf(a, x[t], y[t]);
    P::after(out, n);
}

/* An axpy kernel's launch: kg_axpy_grid(n) blocks of KG_AXPY_BLOCK threads on `s` (host). */
typedef void (*axpy_kernel_fn)(float, const float *, const float *, float *, size_t);
static inline int axpy_launch_with(axpy_kernel_fn k, float a, const float *x, const float *y,
                                   float *out, size_t n, cudaStream_t s)
{
    int rc = 0;
    if (n == 0)
        return 0;
    k<<<kg_axpy_grid(n), KG_AXPY_BLOCK, 0, s>>>(a, x, y, out, n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

#endif /* KGATE_KERNELS_AXPY_IMPL_CUH */
