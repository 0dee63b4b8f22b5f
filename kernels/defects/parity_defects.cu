/* Planted parity defects: each case is a real kernel, the reference kernel's own device code
 * (kernels/<op>_impl.cuh, gemm_bf16_core.cuh) instantiated with a defect policy instead of the
 * reference policy, so it carries exactly ONE bug and is no copy; it runs through the
 * reference case's own setup, reference and parity policy. The parity gate must fail every
 * one of them; the selftest runner checks that it does (expect_gate = "parity").
 *
 * These never enter the reference registry: only defects/register.cu registers them.
 */
#include "../cases.h"
#include "../common.cuh"
#include "../axpy_impl.cuh"
#include "../reduce_sum_impl.cuh"
#include "../rmsnorm_impl.cuh"
#include "../softmax_impl.cuh"
#include "../gemm_bf16_core.cuh"

/* ---- (1) axpy that never writes its last element ---------------------------------------
 * DEFECT: the scalar tail is bounded by `t + 1 < n` (an off-by-one), so when n % 4 != 0 the
 * last element is never written and keeps whatever the buffer held (kgate poisons it).
 * Everything else is axpy_kernel: the same axpy_body, axpy_drop_last_policy. */
__global__ void __launch_bounds__(KG_AXPY_BLOCK)
    defect_axpy_last_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                            float *__restrict__ out, size_t n)
{
    axpy_body<axpy_drop_last_policy>(a, x, y, out, n);
}

static int defect_axpy_launch(void *state, cudaStream_t s)
{
    kg_axpy_state *st = (kg_axpy_state *)state;
    return axpy_launch_with(defect_axpy_last_kernel, st->a, st->x, st->y, st->out, st->n, s);
}

/* ---- (2) gemm_bf16 with a wrong edge predicate ------------------------------------------
 * DEFECT: the epilogue stores column pairs only when both columns are in range, so for an
 * odd N the last column (col == N-1, first of a pair) is never written. Everything else is
 * gemm_bf16_kernel: the same gemm_bf16_block, gemm_bf16_edge_column_policy. */
__global__ void __launch_bounds__(KG_GEMM_THREADS, 2)
    defect_gemm_bf16_edge_kernel(const uint16_t *__restrict__ A, const uint16_t *__restrict__ B,
                                 float *__restrict__ C, int M, int N, int K)
{
    gemm_bf16_block<gemm_bf16_edge_column_policy>(A, B, C, M, N, K);
}

static int defect_gemm_launch(void *state, cudaStream_t s)
{
    kg_gemm_state *st = (kg_gemm_state *)state;
    return gemm_bf16_mma_launch_with(defect_gemm_bf16_edge_kernel, st->a, st->b, st->c, st->m,
                                     st->n, st->k, s);
}

/* ---- (3) reduce_sum that drops one block's partial --------------------------------------
 * Pass 1 is the reference reduce_sum_partials_kernel. DEFECT in pass 2: `threadIdx.x + 1 <
 * count` skips the last partial; the rest is reduce_sum_final_kernel (reduce_sum_final_body,
 * reduce_sum_drop_partial_policy). */
__global__ void __launch_bounds__(KG_REDUCE_FINAL_BLOCK)
    defect_reduce_sum_final_kernel(const float *__restrict__ partials, float *__restrict__ out,
                                   unsigned count)
{
    reduce_sum_final_body<reduce_sum_drop_partial_policy>(partials, out, count);
}

static int defect_reduce_launch(void *state, cudaStream_t s)
{
    kg_reduce_state *st = (kg_reduce_state *)state;
    return reduce_sum_launch_with(defect_reduce_sum_final_kernel, st->x, st->partials, st->out,
                                  st->n, s);
}

/* ---- (4) softmax that produces NaN for large logits -------------------------------------
 * DEFECT: the textbook exp(x) / sum(exp(x)) without subtracting the row max. Fine for
 * logits below ~88; above, exp overflows to inf and the row becomes inf/inf = NaN (and
 * x/inf = 0 elsewhere). Run on the reference's range=100 shape, which it handles. Everything
 * else is softmax_f32_kernel: softmax_f32_rows with softmax_no_max_policy (cols = 4095 is not
 * vectorizable, so both take the general two-pass row). */
__global__ void __launch_bounds__(KG_SOFTMAX_BLOCK)
    defect_softmax_naive_f32_kernel(const float *__restrict__ x, float *__restrict__ y, int rows,
                                    int cols)
{
    softmax_f32_rows<softmax_no_max_policy>(x, y, rows, cols);
}

static int defect_softmax_launch(void *state, cudaStream_t s)
{
    kg_softmax_state *st = (kg_softmax_state *)state;
    return softmax_f32_launch_with(defect_softmax_naive_f32_kernel, (const float *)st->x,
                                   (float *)st->y, st->rows, st->cols, s);
}

/* ---- (5) rmsnorm that rounds an intermediate to bf16 ------------------------------------
 * rmsnorm_bf16_kernel's general two-pass row (rmsnorm_row, the path its v0 took for every
 * shape) with rmsnorm_bf16_norm_policy. DEFECT: the normalized value x*rstd is rounded to bf16
 * before the gamma multiply (what `x_norm.to(bf16) * weight` does), a second rounding where
 * fp32 was promised. Worst error doubles (3.9e-3 -> 7.7e-3) and rel_l2 goes 1.68e-3 ->
 * 2.32e-3: both break KG_RMSNORM_PARITY (5.5e-3, 2.0e-3), which the reference passes. */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK)
    defect_rmsnorm_bf16_round_kernel(const uint16_t *__restrict__ x, const uint16_t *__restrict__ w,
                                     uint16_t *__restrict__ y, int cols, float eps)
{
    rmsnorm_row<rmsnorm_bf16_norm_policy>(x, w, y, blockIdx.x, cols, eps);
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

static const kg_axpy_params d_axpy_p = { 4097 };               /* n % 4 == 1: one tail element */
static const kg_gemm_params d_gemm_p = { 127, 253, 96 };       /* odd N: partial last N tile */
static const kg_reduce_params d_reduce_p = { (1u << 20) + 7 }; /* G = 1024 partials */
static const kg_softmax_params d_softmax_p = { 512, 4095, KG_DTYPE_F32, -100.0f, 100.0f };
static const kg_rmsnorm_params d_rmsnorm_p = { 1024, 4096 };

extern "C" const kg_case_desc kg_parity_defect_cases[] = {
    { "defect/axpy_last_element/n=4097/f32", "axpy", &d_axpy_p, kg_axpy_setup, defect_axpy_launch,
      kg_axpy_reference, kg_axpy_teardown, KG_DTYPE_F64, "cpu-f64", KG_AXPY_PARITY, 12.0 * 4097,
      0.0, d_axpy_k, 1, 0, NULL, "parity",
      "scalar tail bound off by one: the last element (index n-1) is never written" },
    { "defect/gemm_bf16_edge_column/m=127,n=253,k=96/bf16", "gemm_bf16", &d_gemm_p, kg_gemm_setup,
      defect_gemm_launch, kg_gemm_reference, kg_gemm_teardown, KG_DTYPE_F32, "cublas",
      KG_GEMM_PARITY(96), 2.0 * (127.0 * 96 + 253.0 * 96) + 4.0 * 127 * 253, 2.0 * 127 * 253 * 96,
      d_gemm_k, 1, 0, NULL, "parity",
      "edge-tile epilogue predicate: with odd N the last column (N-1) is never stored" },
    { "defect/reduce_sum_drop_partial/n=1048583/f32", "reduce_sum", &d_reduce_p, kg_reduce_setup,
      defect_reduce_launch, kg_reduce_reference, kg_reduce_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_REDUCE_PARITY((1u << 20) + 7), 4.0 * ((1u << 20) + 7) + 8.0 * KG_REDUCE_MAX_GRID + 4.0,
      0.0, d_reduce_k, 2, 0, NULL, "parity",
      "final pass skips the last block's partial: ~1/1024 of the sum is lost" },
    { "defect/softmax_no_max_nan/rows=512,cols=4095,range=100/f32", "softmax", &d_softmax_p,
      kg_softmax_setup, defect_softmax_launch, kg_softmax_reference, kg_softmax_teardown,
      KG_DTYPE_F64, "cpu-f64", KG_SOFTMAX_F32_PARITY, 8.0 * 512 * 4095, 0.0, d_softmax_k, 1, 0,
      NULL, "parity",
      "no max subtraction: exp overflows for logits > ~88, giving inf/inf = NaN outputs" },
    { "defect/rmsnorm_bf16_intermediate/rows=1024,cols=4096/bf16", "rmsnorm", &d_rmsnorm_p,
      kg_rmsnorm_setup, defect_rmsnorm_launch, kg_rmsnorm_reference, kg_rmsnorm_teardown,
      KG_DTYPE_F64, "cpu-f64", KG_RMSNORM_PARITY, 4.0 * 1024 * 4096 + 2.0 * 4096, 0.0, d_rmsnorm_k,
      1, 0, NULL, "parity",
      "x*rstd rounded to bf16 before the gamma multiply: double rounding breaks the fp32 "
      "tolerance (max_abs ~7.7e-3 > 5.5e-3, rel_l2 ~2.3e-3 > 2.0e-3)" },
};
extern "C" const size_t kg_parity_defect_n_cases = sizeof(kg_parity_defect_cases) /
                                                   sizeof(kg_parity_defect_cases[0]);
