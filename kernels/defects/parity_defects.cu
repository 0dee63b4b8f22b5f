/* Planted parity defects: each case is a real kernel, a copy of (or, for the GEMM, the
 * same template as) a reference kernel with exactly ONE bug, run through the reference
 * case's own setup, reference and parity policy. The parity gate must fail every one of
 * them; the selftest runner checks that it does (expect_gate = "parity").
 *
 * These never enter the reference registry: only defects/register.cu registers them.
 */
#include <math.h>
#include "../cases.h"
#include "../common.cuh"
#include "../gemm_bf16_core.cuh"

/* ---- (1) axpy that never writes its last element ---------------------------------------
 * DEFECT: the scalar tail is bounded by `t + 1 < n` (an off-by-one), so when n % 4 != 0 the
 * last element is never written and keeps whatever the buffer held (kgate poisons it). */
__global__ void __launch_bounds__(KG_AXPY_BLOCK)
defect_axpy_last_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                        float *__restrict__ out, size_t n)
{
    const size_t n4 = n / 4;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    const float4 *y4 = reinterpret_cast<const float4 *>(y);
    float4 *o4 = reinterpret_cast<float4 *>(out);
    for (size_t i = tid; i < n4; i += stride) {
        const float4 xv = x4[i], yv = y4[i];
        o4[i] = make_float4(fmaf(a, xv.x, yv.x), fmaf(a, xv.y, yv.y), fmaf(a, xv.z, yv.z),
                            fmaf(a, xv.w, yv.w));
    }
    const size_t t = n4 * 4 + tid;
    if (t + 1 < n) /* DEFECT: should be t < n */
        out[t] = fmaf(a, x[t], y[t]);
}

static int defect_axpy_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *st = (kg_axpy_state *)state;
    defect_axpy_last_kernel<<<kg_axpy_grid(st->n), KG_AXPY_BLOCK, 0, s>>>(st->a, st->x, st->y,
                                                                        st->out, st->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- (2) gemm_bf16 with a wrong edge predicate ------------------------------------------
 * DEFECT: the epilogue stores column pairs only when both columns are in range, so for an
 * odd N the last column (col == N-1, first of a pair) is never written. Everything else is
 * gemm_bf16_kernel: same template, kEdgeBug = true. */
__global__ void __launch_bounds__(KG_GEMM_THREADS, 2)
defect_gemm_bf16_edge_kernel(const uint16_t *__restrict__ A, const uint16_t *__restrict__ B,
                             float *__restrict__ C, int M, int N, int K)
{
    gemm_bf16_block<true>(A, B, C, M, N, K);
}

static int defect_gemm_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_gemm_state *st = (kg_gemm_state *)state;
    const dim3 grid((unsigned)kg_ceil_div((size_t)st->n, KG_GEMM_BN),
                    (unsigned)kg_ceil_div((size_t)st->m, KG_GEMM_BM));
    defect_gemm_bf16_edge_kernel<<<grid, KG_GEMM_THREADS, KG_GEMM_SMEM, s>>>(
        st->a, st->b, st->c, st->m, st->n, st->k);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- (3) reduce_sum that drops one block's partial --------------------------------------
 * Pass 1 is the reference reduce_sum_partials_kernel (declared here, defined in
 * reduce_sum.cu). DEFECT in pass 2: `threadIdx.x + 1 < count` skips the last partial. */
__global__ void reduce_sum_partials_kernel(const float *__restrict__ x,
                                           float *__restrict__ partials, size_t n);

__global__ void __launch_bounds__(KG_REDUCE_FINAL_BLOCK)
defect_reduce_sum_final_kernel(const float *__restrict__ partials, float *__restrict__ out,
                               unsigned count)
{
    __shared__ float smem[KG_REDUCE_FINAL_BLOCK / 32];
    float v = threadIdx.x + 1 < count ? partials[threadIdx.x] : 0.0f; /* DEFECT: < count */
    v = kg_block_sum<KG_REDUCE_FINAL_BLOCK>(v, smem);
    if (threadIdx.x == 0)
        out[0] = v;
}

static int defect_reduce_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_reduce_state *st = (kg_reduce_state *)state;
    reduce_sum_partials_kernel<<<st->grid, KG_REDUCE_BLOCK, 0, s>>>(st->x, st->partials, st->n);
    KG_LAUNCH_CHECK();
    defect_reduce_sum_final_kernel<<<1, KG_REDUCE_FINAL_BLOCK, 0, s>>>(st->partials, st->out,
                                                                      st->grid);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- (4) softmax that produces NaN for large logits -------------------------------------
 * DEFECT: the textbook exp(x) / sum(exp(x)) without subtracting the row max. Fine for
 * logits below ~88; above, expf overflows to inf and the row becomes inf/inf = NaN (and
 * x/inf = 0 elsewhere). Run on the reference's range=100 shape, which it handles. */
__global__ void __launch_bounds__(KG_SOFTMAX_BLOCK)
defect_softmax_naive_f32_kernel(const float *__restrict__ x, float *__restrict__ y, int cols)
{
    __shared__ float smem[KG_SOFTMAX_BLOCK / 32];
    __shared__ float s_sum;
    const float *xr = x + (size_t)blockIdx.x * cols;
    float *yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += KG_SOFTMAX_BLOCK)
        s += expf(xr[i]); /* DEFECT: expf(xr[i] - row_max) */
    s = kg_block_sum<KG_SOFTMAX_BLOCK>(s, smem);
    if (threadIdx.x == 0)
        s_sum = s;
    __syncthreads();
    for (int i = threadIdx.x; i < cols; i += KG_SOFTMAX_BLOCK)
        yr[i] = expf(xr[i]) / s_sum;
}

static int defect_softmax_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_softmax_state *st = (kg_softmax_state *)state;
    defect_softmax_naive_f32_kernel<<<st->rows, KG_SOFTMAX_BLOCK, 0, s>>>(
        (const float *)st->x, (float *)st->y, st->cols);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- (5) rmsnorm that rounds an intermediate to bf16 ------------------------------------
 * A copy of rmsnorm_bf16_kernel. DEFECT: the normalized value x*rstd is rounded to bf16
 * before the gamma multiply (what `x_norm.to(bf16) * weight` does), a second rounding where
 * fp32 was promised. Worst error doubles (3.9e-3 -> 7.7e-3) and rel_l2 goes 1.68e-3 ->
 * 2.32e-3: both break KG_RMSNORM_PARITY (5.5e-3, 2.0e-3), which the reference passes. */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK)
defect_rmsnorm_bf16_round_kernel(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
                                 uint16_t *__restrict__ y, int cols, float eps)
{
    __shared__ float smem[KG_RMSNORM_BLOCK / 32];
    __shared__ float s_rstd;
    const size_t row = blockIdx.x;
    const uint16_t *xr = x + row * (size_t)cols;
    uint16_t *yr = y + row * (size_t)cols;
    const bool vec = (cols & 7) == 0;
    float ss = 0.0f;
    if (vec) {
        const uint4 *x8 = reinterpret_cast<const uint4 *>(xr);
        for (int i = threadIdx.x; i < cols / 8; i += KG_RMSNORM_BLOCK) {
            float f[8];
            kg_unpack8(x8[i], f);
#pragma unroll
            for (int j = 0; j < 8; j++)
                ss = fmaf(f[j], f[j], ss);
        }
    } else {
        for (int i = threadIdx.x; i < cols; i += KG_RMSNORM_BLOCK) {
            const float f = kg_bf16_to_float(xr[i]);
            ss = fmaf(f, f, ss);
        }
    }
    ss = kg_block_sum<KG_RMSNORM_BLOCK>(ss, smem);
    if (threadIdx.x == 0)
        s_rstd = rsqrtf(ss / (float)cols + eps);
    __syncthreads();
    const float rstd = s_rstd;
    if (vec) {
        const uint4 *x8 = reinterpret_cast<const uint4 *>(xr);
        const uint4 *w8 = reinterpret_cast<const uint4 *>(w);
        uint4 *y8 = reinterpret_cast<uint4 *>(yr);
        for (int i = threadIdx.x; i < cols / 8; i += KG_RMSNORM_BLOCK) {
            float f[8], g[8];
            kg_unpack8(x8[i], f);
            kg_unpack8(w8[i], g);
#pragma unroll
            for (int j = 0; j < 8; j++) /* DEFECT: bf16(x*rstd) instead of fp32 */
                f[j] = kg_bf16_to_float(kg_float_to_bf16(f[j] * rstd)) * g[j];
            y8[i] = kg_pack8(f);
        }
    } else {
        for (int i = threadIdx.x; i < cols; i += KG_RMSNORM_BLOCK) {
            const float nrm = kg_bf16_to_float(kg_float_to_bf16(kg_bf16_to_float(xr[i]) * rstd));
            yr[i] = kg_float_to_bf16(nrm * kg_bf16_to_float(w[i]));
        }
    }
}

static int defect_rmsnorm_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_rmsnorm_state *st = (kg_rmsnorm_state *)state;
    defect_rmsnorm_bf16_round_kernel<<<st->rows, KG_RMSNORM_BLOCK, 0, s>>>(st->x, st->w, st->y,
                                                                          st->cols, st->eps);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* ---- cases ----------------------------------------------------------------------------- */

static const kg_kernel_ref d_axpy_k[] = { KG_KERNEL(defect_axpy_last_kernel, KG_AXPY_BLOCK, 0) };
static const kg_kernel_ref d_gemm_k[] = {
    KG_KERNEL(defect_gemm_bf16_edge_kernel, KG_GEMM_THREADS, KG_GEMM_SMEM),
};
static const kg_kernel_ref d_reduce_k[] = {
    KG_KERNEL(reduce_sum_partials_kernel, KG_REDUCE_BLOCK, 0),
    KG_KERNEL(defect_reduce_sum_final_kernel, KG_REDUCE_FINAL_BLOCK, 0),
};
static const kg_kernel_ref d_softmax_k[] = {
    KG_KERNEL(defect_softmax_naive_f32_kernel, KG_SOFTMAX_BLOCK, 0),
};
static const kg_kernel_ref d_rmsnorm_k[] = {
    KG_KERNEL(defect_rmsnorm_bf16_round_kernel, KG_RMSNORM_BLOCK, 0),
};

static const kg_axpy_params d_axpy_p = { 4097 };           /* n % 4 == 1: one tail element */
static const kg_gemm_params d_gemm_p = { 127, 253, 96 };   /* odd N: partial last N tile */
static const kg_reduce_params d_reduce_p = { (1u << 20) + 7 }; /* G = 1024 partials */
static const kg_softmax_params d_softmax_p = { 512, 4095, KG_DTYPE_F32, -100.0f, 100.0f };
static const kg_rmsnorm_params d_rmsnorm_p = { 1024, 4096 };

extern "C" const kg_case_desc kg_parity_defect_cases[] = {
    { "defect/axpy_last_element/n=4097/f32", "axpy", &d_axpy_p, kg_axpy_setup,
      defect_axpy_launch, kg_axpy_reference, kg_axpy_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_AXPY_PARITY, 12.0 * 4097, 0.0, d_axpy_k, 1, 0, NULL, "parity",
      "scalar tail bound off by one: the last element (index n-1) is never written" },
    { "defect/gemm_bf16_edge_column/m=127,n=253,k=96/bf16", "gemm_bf16", &d_gemm_p,
      kg_gemm_setup, defect_gemm_launch, kg_gemm_reference, kg_gemm_teardown, KG_DTYPE_F32,
      "cublas", KG_GEMM_PARITY(96), 2.0 * (127.0 * 96 + 253.0 * 96) + 4.0 * 127 * 253,
      2.0 * 127 * 253 * 96, d_gemm_k, 1, 0, NULL, "parity",
      "edge-tile epilogue predicate: with odd N the last column (N-1) is never stored" },
    { "defect/reduce_sum_drop_partial/n=1048583/f32", "reduce_sum", &d_reduce_p,
      kg_reduce_setup, defect_reduce_launch, kg_reduce_reference, kg_reduce_teardown,
      KG_DTYPE_F64, "cpu-f64", KG_REDUCE_PARITY((1u << 20) + 7),
      4.0 * ((1u << 20) + 7) + 8.0 * KG_REDUCE_MAX_GRID + 4.0, 0.0, d_reduce_k, 2, 0, NULL,
      "parity", "final pass skips the last block's partial: ~1/1024 of the sum is lost" },
    { "defect/softmax_no_max_nan/rows=512,cols=4095,range=100/f32", "softmax", &d_softmax_p,
      kg_softmax_setup, defect_softmax_launch, kg_softmax_reference, kg_softmax_teardown,
      KG_DTYPE_F64, "cpu-f64", KG_SOFTMAX_F32_PARITY, 8.0 * 512 * 4095, 0.0, d_softmax_k, 1,
      0, NULL, "parity",
      "no max subtraction: expf overflows for logits > ~88, giving inf/inf = NaN outputs" },
    { "defect/rmsnorm_bf16_intermediate/rows=1024,cols=4096/bf16", "rmsnorm", &d_rmsnorm_p,
      kg_rmsnorm_setup, defect_rmsnorm_launch, kg_rmsnorm_reference, kg_rmsnorm_teardown,
      KG_DTYPE_F64, "cpu-f64", KG_RMSNORM_PARITY, 4.0 * 1024 * 4096 + 2.0 * 4096, 0.0,
      d_rmsnorm_k, 1, 0, NULL, "parity",
      "x*rstd rounded to bf16 before the gamma multiply: double rounding breaks the fp32 "
      "tolerance (max_abs ~7.7e-3 > 5.5e-3, rel_l2 ~2.3e-3 > 2.0e-3)" },
};
extern "C" const size_t kg_parity_defect_n_cases =
    sizeof(kg_parity_defect_cases) / sizeof(kg_parity_defect_cases[0]);
