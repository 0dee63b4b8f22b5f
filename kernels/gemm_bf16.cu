/* gemm_bf16: C[M,N] = A[M,K] x B[N,K]^T on tensor cores, bf16 inputs, fp32 accumulate and
 * fp32 output, checked against cuBLAS (cublasGemmEx with the same types and compute).
 *
 * Layout (the nn.Linear / "TN" convention, documented here once for the whole suite):
 *   A  bf16, row-major [M][K]  (K contiguous)
 *   B  bf16, row-major [N][K]  (K contiguous; i.e. the column-major K x N matrix)
 *   C  fp32, row-major [M][N]
 * Both operands are K-contiguous, which is what mma.m16n8k16.row.col wants for A (row)
 * and B (col), so ldmatrix loads both without transposition.
 *
 * Constraints: M, N >= 1 (any value; edge tiles are predicated), K >= 8 and K % 8 == 0
 * (16-byte cp.async chunks along K; the K tail below a multiple of 32 is zero-filled).
 * Setup returns KG_EINVAL otherwise. M <= 65535 * 128 (grid.y).
 *
 * The kernel body lives in gemm_bf16_core.cuh (shared with the planted-defect twin).
 *
 * On Hopper, kg_gemm_bf16_launch sends tile-aligned shapes (M % 128, N % 256, K % 64) to
 * gemm_bf16_wgmma_kernel (gemm_bf16_sm90.cu: TMA + wgmma, ~2.3x this kernel at 8192^3);
 * everything else, and every other architecture, runs the mma.sync kernel below.
 */
#include <stdlib.h>
#include <cuda.h>
#include "cases.h"
#include "cublas_util.h"
#include "gemm_bf16_core.cuh"

__global__ void __launch_bounds__(KG_GEMM_THREADS,
                                  2) /* <= 128 regs: 2 blocks (96 KiB smem) per SM */
    gemm_bf16_kernel(const uint16_t *__restrict__ A, const uint16_t *__restrict__ B,
                     float *__restrict__ C, int M, int N, int K)
{
    gemm_bf16_block<gemm_bf16_ref_policy>(A, B, C, M, N, K);
}

/* Defined in gemm_bf16_sm90.cu (its own architecture list); declared here so the case
 * tables can name it. */
__global__ void gemm_bf16_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, float *C, int M,
                                       int N, int K);

/* Hopper with the sm_90a image and a tile-aligned shape: wgmma + TMA; otherwise mma.sync. */
extern "C" int kg_gemm_bf16_launch(const uint16_t *a, const uint16_t *b, float *c, int m, int n,
                                   int k, cudaStream_t s)
{
    if (kg_gemm_bf16_wgmma_fits(m, n, k) && kg_gemm_bf16_wgmma_available())
        return kg_gemm_bf16_wgmma_launch(a, b, c, m, n, k, s);
    return gemm_bf16_mma_launch_with(gemm_bf16_kernel, a, b, c, m, n, k, s);
}

/* ---- case callbacks -------------------------------------------------------------------- */

extern "C" void kg_gemm_teardown(void *state)
{
    kg_gemm_state *st = (kg_gemm_state *)state;
    if (!st)
        return;
    if (st->cublas)
        cublasDestroy((cublasHandle_t)st->cublas);
    cudaFree(st->a);
    cudaFree(st->b);
    cudaFree(st->c);
    cudaFree(st->c_ref);
    cudaFree(st->workspace);
    free(st);
}

extern "C" int kg_gemm_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const kg_gemm_params *p = (const kg_gemm_params *)args->params;
    kg_gemm_state *st = NULL;
    cublasHandle_t h = NULL;
    size_t na, nb, nc;

    if (!p || p->m < 1 || p->n < 1 || p->k < 8 || p->k % 8 != 0 || p->m > 65535 * KG_GEMM_BM) {
        rc = kg_error_set(KG_EINVAL, __FILE__, __LINE__,
                          "gemm_bf16: need M, N >= 1, K >= 8 with K %% 8 == 0 (16-byte cp.async "
                          "rows), M <= %d; got M=%d N=%d K=%d",
                          65535 * KG_GEMM_BM, p ? p->m : 0, p ? p->n : 0, p ? p->k : 0);
        goto cleanup;
    }
    na = (size_t)p->m * p->k;
    nb = (size_t)p->n * p->k;
    nc = (size_t)p->m * p->n;
    st = (kg_gemm_state *)calloc(1, sizeof(*st));
    if (!st) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "gemm_bf16: out of host memory");
        goto cleanup;
    }
    st->m = p->m;
    st->n = p->n;
    st->k = p->k;
    KG_CUDA_CHECK(cudaMalloc((void **)&st->a, na * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->b, nb * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->c, nc * 4));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->c_ref, nc * 4));
    st->workspace_bytes = KG_CUBLAS_WORKSPACE_BYTES;
    KG_CUDA_CHECK(cudaMalloc(&st->workspace, st->workspace_bytes));

    /* The reference runs on the GPU (cuBLAS), so no host copies: filled on the device, one
     * seed per operand. */
    KG_TRY(kg_fill_device(st->a, KG_DTYPE_BF16, na, args->seed ^ 0x9e3779b97f4a7c15ull,
                          KG_FILL_UNIFORM, -1.0, 1.0, args->stream));
    KG_TRY(kg_fill_device(st->b, KG_DTYPE_BF16, nb, args->seed ^ 2 * 0x9e3779b97f4a7c15ull,
                          KG_FILL_UNIFORM, -1.0, 1.0, args->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(args->stream));

    KG_CUBLAS_CHECK(cublasCreate(&h));
    st->cublas = h;
    KG_TRY(kg_cublas_bind(h, args->stream, st->workspace, st->workspace_bytes));
    st->bound = args->stream;
    /* Runs the one-time sm_90a probe (and its shared-memory opt-in) outside the hot path. */
    (void)kg_gemm_bf16_wgmma_available();

    io->out = st->c;
    io->out_count = nc;
    io->out_dtype = KG_DTYPE_F32;
    io->rows = 0;
    *state = st;
    st = NULL;
cleanup:
    kg_gemm_teardown(st);
    return rc;
}

static int gemm_launch(void *state, cudaStream_t stream)
{
    kg_gemm_state *st = (kg_gemm_state *)state;
    return kg_gemm_bf16_launch(st->a, st->b, st->c, st->m, st->n, st->k, stream);
}

/* cuBLAS result into c_ref, then to the host (not the hot path: synchronizing is fine). */
extern "C" int kg_gemm_reference(void *state, cudaStream_t stream, void *ref_host)
{
    int rc = 0;
    kg_gemm_state *st = (kg_gemm_state *)state;
    cublasHandle_t h = (cublasHandle_t)st->cublas;
    if (st->bound != stream) {
        KG_TRY(kg_cublas_bind(h, stream, st->workspace, st->workspace_bytes));
        st->bound = stream;
    }
    KG_TRY(kg_cublas_gemm_bf16_tn(h, st->a, st->b, st->c_ref, st->m, st->n, st->k));
    KG_CUDA_CHECK(cudaMemcpyAsync(ref_host, st->c_ref, (size_t)st->m * st->n * 4,
                                  cudaMemcpyDeviceToHost, stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(stream));
cleanup:
    return rc;
}

/* ---- cases ----------------------------------------------------------------------------- */

static const kg_kernel_ref gemm_kernels[] = {
    KG_KERNEL(gemm_bf16_kernel, KG_GEMM_THREADS, KG_GEMM_SMEM),
};
/* Tile-aligned shapes launch exactly one of these: the wgmma kernel on sm_90 (when the
 * binary carries its sm_90a image), the mma.sync kernel anywhere else. */
static const kg_kernel_ref gemm_kernels_aligned[] = {
    KG_KERNEL(gemm_bf16_wgmma_kernel, KG_GEMM_WG_THREADS, KG_GEMM_WG_SMEM),
    KG_KERNEL(gemm_bf16_kernel, KG_GEMM_THREADS, KG_GEMM_SMEM),
};

static const kg_gemm_params gemm_p1 = { 1, 1, 8 };
static const kg_gemm_params gemm_podd = { 127, 253, 96 };
static const kg_gemm_params gemm_ptail = { 300, 200, 200 };
static const kg_gemm_params gemm_p1000 = { 1000, 1000, 1000 };
/* Smallest shapes on the wgmma path: non-square (catches an M/N mix-up), 5 K steps (wraps
 * the 4-stage ring); 4096^2 has more tiles than SMs (each CTA loops over several tiles). */
static const kg_gemm_params gemm_pwg = { 384, 768, 320 };
static const kg_gemm_params gemm_p4k = { 4096, 4096, 4096 };
static const kg_gemm_params gemm_p8k = { 8192, 8192, 8192 };

/* Parity vs cuBLAS: identical bf16 inputs, products exact in fp32, both sides accumulate
 * in fp32 and differ only in summation order. With A, B in [-1,1), |C| ~ sqrt(K)/3 and the
 * order difference is ~ sqrt(K) * 2^-24 * |C| per element, ~1e-6 relative; rel_l2 1e-5 keeps
 * 10x margin. max_abs scales with K: 2e-7 * K + 1e-5 (1.6e-3 at K = 8192, where |C| <~ 120
 * and one fp32 ulp there is 7.6e-6). A missing or stale element fails all three.
 * -> KG_GEMM_PARITY(k) in cases.h. */
#define GEMM_CASE(ID, P) GEMM_CASE_K(ID, P, gemm_kernels)
#define GEMM_CASE_K(ID, P, KERNELS)                                                             \
    {                                                                                           \
        ID, "gemm_bf16", &(P), kg_gemm_setup, gemm_launch, kg_gemm_reference, kg_gemm_teardown, \
            KG_DTYPE_F32, "cublas",                                                             \
            KG_GEMM_PARITY((P).k), /* bytes: read A and B once, write C (compulsory traffic) */ \
            2.0 * ((double)(P).m * (P).k + (double)(P).n * (P).k) + 4.0 * (double)(P).m *(P).n, \
            2.0 * (double)(P).m *(double)(P).n *(double)(P).k, KERNELS,                         \
            (int)(sizeof(KERNELS) / sizeof(KERNELS[0])), 0, NULL, NULL, NULL, /* xfail */ NULL, \
            NULL, /* settings */ 0, 0, 0, /* .tags */ "compute,tensor-core"                     \
    }

extern "C" const kg_case_desc kg_gemm_bf16_cases[] = {
    GEMM_CASE("gemm_bf16/m=1,n=1,k=8/bf16", gemm_p1),
    GEMM_CASE("gemm_bf16/m=127,n=253,k=96/bf16", gemm_podd),
    GEMM_CASE("gemm_bf16/m=300,n=200,k=200/bf16", gemm_ptail),
    GEMM_CASE("gemm_bf16/m=1000,n=1000,k=1000/bf16", gemm_p1000),
    GEMM_CASE_K("gemm_bf16/m=384,n=768,k=320/bf16", gemm_pwg, gemm_kernels_aligned),
    GEMM_CASE_K("gemm_bf16/m=4096,n=4096,k=4096/bf16", gemm_p4k, gemm_kernels_aligned),
    GEMM_CASE_K("gemm_bf16/m=8192,n=8192,k=8192/bf16", gemm_p8k, gemm_kernels_aligned),
};
extern "C" const size_t kg_gemm_bf16_n_cases = sizeof(kg_gemm_bf16_cases) /
                                               sizeof(kg_gemm_bf16_cases[0]);
