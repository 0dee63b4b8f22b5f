/* Counters defects: kernels that compute the same result as their clean twin while
 * a hardware counter says something changed, for the counters gate (gates/counters/) and the
 * selftest. Each "defect/counters/<family>/defect" has a "defect/counters/<family>/clean" twin
 * that must PASS. None needs a mark: each is caught against its own declaration.
 *
 *   strided     the copy of 32 Mi floats read and written with a stride of 8 floats per thread
 *               sweep: every 32-byte sector is fetched 8 times, a full 128 MiB apart (past L2):
 *               ~8x the DRAM read bytes of the declared 8n -> MODEL_WRONG
 *   tensor      a 64^3 fp16 GEMM (fp32 accumulate): wmma (tensor cores) in the twin, the same
 *               products with FMA in the defect; both tagged tensor-core -> no tensor-pipe
 *               instruction: REGRESSED
 *   sysmem      out = 2 in, stored through a mapped pinned host pointer instead of device
 *               memory: system-memory traffic appears -> REGRESSED
 *   spill       a 16-float array summed in a __noinline__ device function, indexed by a
 *               runtime value (local memory) instead of a compile-time one (registers) ->
 *               local-memory requests appear: REGRESSED
 *   model       the twin's copy declaring half its bytes_moved -> MODEL_WRONG
 *   stream0     the copy launched on the legacy stream 0 instead of the stream kgate gives:
 *               nothing of it is on kgate's stream (a capture of the launch is empty) ->
 *               INVALID (ERROR "... on stream 0 or another stream?"), never a PASS
 *   hfma2       a 64^3 bf16 GEMM (fp32 out): wmma in the twin, packed HFMA2 (__hfma2 on
 *               bf16x2) in the defect, both tagged tensor-core; GH100's generic tensor-pipe
 *               counter counts HFMA2, the hmma/gmma counters do not -> REGRESSED
 *   sgemm       a naive SGEMM, 8192x32 = A (8192x4096) B (4096x32), compute-bound (declared
 *               15.8 FLOP/B), its bytes declared binding: row order in the twin (a warp reads
 *               one A row once: ~1x), column order in the defect (each 2-column sweep
 *               re-reads the 128 MiB A from DRAM: ~16x) -> MODEL_WRONG; ".../unbound" is the
 *               defect's kernel without bytes_binding: a WARN (EXCESS) with the ratio */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdlib.h>
#include <string.h>
#include "../cases.h"
#include "../par_rows.h"

#define CD_BLOCK 256

typedef struct {
    int kind; /* CD_COPY, CD_STRIDED, CD_SCALE, CD_SCALE_MAPPED, CD_SPILL_*, CD_GEMM_* */
    size_t n; /* elements of in/out (GEMM: the 64x64 output) */
} cd_params;

enum {
    CD_COPY,
    CD_STRIDED,
    CD_SCALE,
    CD_SCALE_MAPPED,
    CD_SPILL_STATIC,
    CD_SPILL_DYNAMIC,
    CD_GEMM_WMMA,
    CD_GEMM_FMA,
    CD_COPY_STREAM0,
    CD_BF16_WMMA,
    CD_BF16_HFMA2,
    CD_SGEMM_ROW,
    CD_SGEMM_COL
};

/* the naive SGEMM: C (M x N) = A (M x K) B (K x N), A past 2x L2, B and C L2-resident */
#define CD_SG_M 8192
#define CD_SG_N 32
#define CD_SG_K 4096
#define CD_SG_THREADS (2 * CD_SG_M) /* one grid sweep: 2 columns (column order) */

#define CD_G 64 /* GEMM M = N = K */

typedef struct {
    const cd_params *p;
    float *in, *out; /* device (out: the mapped host buffer's device alias for sysmem) */
    float *host_out; /* mapped pinned host memory (sysmem defect) */
    __half *a, *b;   /* GEMM inputs, row-major M x K and K x N (bf16 GEMM: bf16 bits) */
    float *sa, *sb;  /* SGEMM inputs */
    uint64_t seed;
} cd_state;

__global__ void cd_copy_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* Thread t handles element (t % rows) * 8 + t / rows: consecutive threads 8 floats apart, and
 * the 8 elements of one sector in 8 sweeps of the whole buffer. */
__global__ void cd_strided_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n)
{
    const size_t rows = n / 8;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t i = (t % rows) * 8 + t / rows;
        out[i] = in[i];
    }
}

__global__ void cd_scale_kernel(const float *__restrict__ in, float *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = 2.0f * in[i];
}

/* sum_j a[(7 j + k) & 15] of a[j] = x (j + 1): a permutation, so the sum is x * 136 in the
 * order the index visits. k is a template constant (registers) or a runtime value (the array
 * must live in local memory, in the callee's stack frame). */
__device__ __noinline__ float cd_sum_dynamic(float x, int k)
{
    float a[16];
#pragma unroll
    for (int j = 0; j < 16; j++)
        a[j] = x * (float)(j + 1);
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += a[(7 * j + k) & 15];
    return s;
}

__device__ __forceinline__ float cd_sum_static(float x)
{
    float a[16];
#pragma unroll
    for (int j = 0; j < 16; j++)
        a[j] = x * (float)(j + 1);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; j++)
        s += a[(7 * j + 3) & 15];
    return s;
}

template <bool kDynamic>
__global__ void cd_spill_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n,
                                int k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = kDynamic ? cd_sum_dynamic(in[i], k) : cd_sum_static(in[i]);
}

/* One block of 16 warps; warp w computes the 16x16 tile (w / 4, w % 4) of C = A B. */
__global__ void __launch_bounds__(512)
    cd_gemm_wmma_kernel(const __half *a, const __half *b, float *c)
{
    using namespace nvcuda;
    const int w = threadIdx.x / 32, tm = w / 4, tn = w % 4;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < CD_G; k += 16) {
        wmma::load_matrix_sync(fa, a + tm * 16 * CD_G + k, CD_G);
        wmma::load_matrix_sync(fb, b + k * CD_G + tn * 16, CD_G);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tm * 16 * CD_G + tn * 16, acc, CD_G, wmma::mem_row_major);
}

/* The same block, the same products (exact in fp32), summed with FMA: 8 outputs a thread. */
__global__ void __launch_bounds__(512)
    cd_gemm_fma_kernel(const __half *a, const __half *b, float *c)
{
    for (int o = threadIdx.x; o < CD_G * CD_G; o += blockDim.x) {
        const int r = o / CD_G, col = o % CD_G;
        float s = 0.0f;
        for (int k = 0; k < CD_G; k++)
            s = fmaf(__half2float(a[r * CD_G + k]), __half2float(b[k * CD_G + col]), s);
        c[o] = s;
    }
}

/* The bf16 GEMM of the hfma2 family, one block of 16 warps: wmma 16x16x16 tiles (tensor
 * cores), or the same products as bf16x2 HFMA2 over chunks of 4 k (short chains keep the
 * bf16 rounding small), each chunk summed in fp32. kHfma2 is the only difference. */
template <bool kHfma2>
__global__ void __launch_bounds__(512)
    cd_gemm_bf16_kernel(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c)
{
    using namespace nvcuda;
    if (!kHfma2) {
        const int w = threadIdx.x / 32, tm = w / 4, tn = w % 4;
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int k = 0; k < CD_G; k += 16) {
            wmma::load_matrix_sync(fa, a + tm * 16 * CD_G + k, CD_G);
            wmma::load_matrix_sync(fb, b + k * CD_G + tn * 16, CD_G);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        wmma::store_matrix_sync(c + tm * 16 * CD_G + tn * 16, acc, CD_G, wmma::mem_row_major);
        return;
    }
    const __nv_bfloat162 *b2 = reinterpret_cast<const __nv_bfloat162 *>(b);
    for (int o = threadIdx.x; o < CD_G * CD_G / 2; o += blockDim.x) {
        const int r = o / (CD_G / 2), cp = o % (CD_G / 2); /* outputs (r, 2cp), (r, 2cp+1) */
        float s0 = 0.0f, s1 = 0.0f;
        for (int k0 = 0; k0 < CD_G; k0 += 4) {
            __nv_bfloat162 acc = __float2bfloat162_rn(0.0f);
            for (int k = k0; k < k0 + 4; k++)
                acc = __hfma2(__bfloat162bfloat162(a[r * CD_G + k]), b2[k * (CD_G / 2) + cp], acc);
            s0 += __low2float(acc);
            s1 += __high2float(acc);
        }
        c[r * CD_G + 2 * cp] = s0;
        c[r * CD_G + 2 * cp + 1] = s1;
    }
}

/* The naive SGEMM: thread t computes one C element with no tiling. Row order: a warp is one
 * row (A[i][q] broadcast, B coalesced), A streams once. Column order: a warp is 32 rows of
 * one column and a grid sweep covers 2 columns, so A (past 2x L2) is read again from DRAM
 * by every sweep. kColumnOrder is the only difference. */
template <bool kColumnOrder>
__global__ void cd_sgemm_kernel(const float *__restrict__ a, const float *__restrict__ b,
                                float *__restrict__ c)
{
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < (size_t)CD_SG_M * CD_SG_N;
         t += (size_t)gridDim.x * blockDim.x) {
        const size_t i = kColumnOrder ? t % CD_SG_M : t / CD_SG_N;
        const size_t j = kColumnOrder ? t / CD_SG_M : t % CD_SG_N;
        float s = 0.0f;
        for (int q = 0; q < CD_SG_K; q++)
            s = fmaf(a[i * CD_SG_K + q], b[(size_t)q * CD_SG_N + j], s);
        c[i * CD_SG_N + j] = s;
    }
}

static unsigned cd_grid(size_t n)
{
    size_t g = (n + CD_BLOCK - 1) / CD_BLOCK;
    return (unsigned)(g > 8192 ? 8192 : (g ? g : 1));
}

static bool cd_gemm(const cd_params *p)
{
    return p->kind == CD_GEMM_WMMA || p->kind == CD_GEMM_FMA || p->kind == CD_BF16_WMMA ||
           p->kind == CD_BF16_HFMA2;
}
static bool cd_bf16(const cd_params *p)
{
    return p->kind == CD_BF16_WMMA || p->kind == CD_BF16_HFMA2;
}
static bool cd_sgemm(const cd_params *p)
{
    return p->kind == CD_SGEMM_ROW || p->kind == CD_SGEMM_COL;
}

static void cd_teardown(void *state)
{
    cd_state *st = (cd_state *)state;
    if (!st)
        return;
    cudaFree(st->in);
    if (st->host_out)
        cudaFreeHost(st->host_out);
    else
        cudaFree(st->out);
    cudaFree(st->a);
    cudaFree(st->b);
    cudaFree(st->sa);
    cudaFree(st->sb);
    free(st);
}

static int cd_alloc_out(cd_state *st)
{
    int rc = 0;
    if (st->p->kind == CD_SCALE_MAPPED) {
        KG_CUDA_CHECK(
            cudaHostAlloc((void **)&st->host_out, st->p->n * sizeof(float), cudaHostAllocMapped));
        KG_CUDA_CHECK(cudaHostGetDevicePointer((void **)&st->out, st->host_out, 0));
    } else {
        KG_CUDA_CHECK(cudaMalloc((void **)&st->out, st->p->n * sizeof(float)));
    }
cleanup:
    return rc;
}

static int cd_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const cd_params *p = (const cd_params *)args->params;
    cd_state *st = (cd_state *)calloc(1, sizeof(*st));
    if (!st)
        return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "counters defect: out of host memory");
    st->p = p;
    st->seed = args->seed;
    KG_TRY(cd_alloc_out(st));
    if (cd_gemm(p)) {
        kg_dtype t = cd_bf16(p) ? KG_DTYPE_BF16 : KG_DTYPE_F16;
        KG_CUDA_CHECK(cudaMalloc((void **)&st->a, CD_G * CD_G * sizeof(__half)));
        KG_CUDA_CHECK(cudaMalloc((void **)&st->b, CD_G * CD_G * sizeof(__half)));
        KG_TRY(
            kg_fill_device(st->a, t, CD_G * CD_G, st->seed, KG_FILL_UNIFORM, -1, 1, args->stream));
        KG_TRY(kg_fill_device(st->b, t, CD_G * CD_G, st->seed ^ 0x9e3779b97f4a7c15ULL,
                              KG_FILL_UNIFORM, -1, 1, args->stream));
    } else if (cd_sgemm(p)) {
        KG_CUDA_CHECK(cudaMalloc((void **)&st->sa, (size_t)CD_SG_M * CD_SG_K * sizeof(float)));
        KG_CUDA_CHECK(cudaMalloc((void **)&st->sb, (size_t)CD_SG_K * CD_SG_N * sizeof(float)));
        KG_TRY(kg_fill_device(st->sa, KG_DTYPE_F32, (size_t)CD_SG_M * CD_SG_K, st->seed,
                              KG_FILL_UNIFORM, -1, 1, args->stream));
        KG_TRY(kg_fill_device(st->sb, KG_DTYPE_F32, (size_t)CD_SG_K * CD_SG_N,
                              st->seed ^ 0x9e3779b97f4a7c15ULL, KG_FILL_UNIFORM, -1, 1,
                              args->stream));
    } else {
        KG_CUDA_CHECK(cudaMalloc((void **)&st->in, p->n * sizeof(float)));
        KG_TRY(kg_fill_device(st->in, KG_DTYPE_F32, p->n, st->seed, KG_FILL_UNIFORM, -1, 1,
                              args->stream));
    }
    io->out = st->out;
    io->out_count = p->n;
    io->out_dtype = KG_DTYPE_F32;
    *state = st;
    st = NULL;
cleanup:
    cd_teardown(st);
    return rc;
}

static int cd_launch_bf16(cd_state *st, cudaStream_t s)
{
    int rc = 0;
    const __nv_bfloat16 *a = (const __nv_bfloat16 *)st->a, *b = (const __nv_bfloat16 *)st->b;
    if (st->p->kind == CD_BF16_HFMA2)
        cd_gemm_bf16_kernel<true><<<1, 512, 0, s>>>(a, b, st->out);
    else
        cd_gemm_bf16_kernel<false><<<1, 512, 0, s>>>(a, b, st->out);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int cd_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    cd_state *st = (cd_state *)state;
    size_t n = st->p->n;
    switch (st->p->kind) {
    case CD_COPY: cd_copy_kernel<<<cd_grid(n), CD_BLOCK, 0, s>>>(st->in, st->out, n); break;
    case CD_STRIDED: cd_strided_kernel<<<cd_grid(n), CD_BLOCK, 0, s>>>(st->in, st->out, n); break;
    case CD_SCALE:
    case CD_SCALE_MAPPED:
        cd_scale_kernel<<<cd_grid(n), CD_BLOCK, 0, s>>>(st->in, st->out, n);
        break;
    case CD_SPILL_STATIC:
        cd_spill_kernel<false><<<cd_grid(n), CD_BLOCK, 0, s>>>(st->in, st->out, n, 3);
        break;
    case CD_SPILL_DYNAMIC:
        cd_spill_kernel<true><<<cd_grid(n), CD_BLOCK, 0, s>>>(st->in, st->out, n, 3);
        break;
    case CD_GEMM_WMMA: cd_gemm_wmma_kernel<<<1, 512, 0, s>>>(st->a, st->b, st->out); break;
    /* the defect: the legacy default stream, not the one kgate gives (the hot-path rule) */
    case CD_COPY_STREAM0: cd_copy_kernel<<<cd_grid(n), CD_BLOCK, 0, 0>>>(st->in, st->out, n); break;
    case CD_BF16_WMMA:
    case CD_BF16_HFMA2: KG_TRY(cd_launch_bf16(st, s)); break;
    case CD_SGEMM_ROW:
        cd_sgemm_kernel<false>
            <<<CD_SG_THREADS / CD_BLOCK, CD_BLOCK, 0, s>>>(st->sa, st->sb, st->out);
        break;
    case CD_SGEMM_COL:
        cd_sgemm_kernel<true>
            <<<CD_SG_THREADS / CD_BLOCK, CD_BLOCK, 0, s>>>(st->sa, st->sb, st->out);
        break;
    default: cd_gemm_fma_kernel<<<1, 512, 0, s>>>(st->a, st->b, st->out); break;
    }
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static double cd_h2d(uint16_t h) { return (double)__half2float(__ushort_as_half(h)); }
static double cd_b2d(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The 64^3 GEMMs from the same counter-based fills (fp16 or bf16 bits). */
static int cd_ref_gemm(const cd_state *st, double *ref)
{
    int rc = 0;
    kg_dtype t = cd_bf16(st->p) ? KG_DTYPE_BF16 : KG_DTYPE_F16;
    double (*conv)(uint16_t) = cd_bf16(st->p) ? cd_b2d : cd_h2d;
    uint16_t *a = (uint16_t *)malloc(CD_G * CD_G * 2), *b = (uint16_t *)malloc(CD_G * CD_G * 2);
    if (!a || !b) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "counters defect: out of memory");
        goto cleanup;
    }
    KG_TRY(kg_fill_host(a, t, CD_G * CD_G, st->seed, KG_FILL_UNIFORM, -1, 1));
    KG_TRY(
        kg_fill_host(b, t, CD_G * CD_G, st->seed ^ 0x9e3779b97f4a7c15ULL, KG_FILL_UNIFORM, -1, 1));
    for (int o = 0; o < CD_G * CD_G; o++) {
        double acc = 0;
        for (int k = 0; k < CD_G; k++)
            acc += conv(a[(o / CD_G) * CD_G + k]) * conv(b[k * CD_G + o % CD_G]);
        ref[o] = acc;
    }
cleanup:
    free(a);
    free(b);
    return rc;
}

/* The naive SGEMM's product in float64 (1.07e9 multiply-adds: about a second). */
static int cd_ref_sgemm(const cd_state *st, double *ref)
{
    int rc = 0;
    float *a = (float *)malloc((size_t)CD_SG_M * CD_SG_K * sizeof(float));
    float *b = (float *)malloc((size_t)CD_SG_K * CD_SG_N * sizeof(float));
    if (!a || !b) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "counters defect: out of memory");
        goto cleanup;
    }
    KG_TRY(
        kg_fill_host(a, KG_DTYPE_F32, (size_t)CD_SG_M * CD_SG_K, st->seed, KG_FILL_UNIFORM, -1, 1));
    KG_TRY(kg_fill_host(b, KG_DTYPE_F32, (size_t)CD_SG_K * CD_SG_N,
                        st->seed ^ 0x9e3779b97f4a7c15ULL, KG_FILL_UNIFORM, -1, 1));
    /* rows over the host threads (one thread took 1.5-1.7 s of each selftest row, H100 host) */
    kg_par_rows(CD_SG_M, (size_t)CD_SG_M * CD_SG_K, [a, b, ref](int r0, int r1) {
        for (size_t i = (size_t)r0; i < (size_t)r1; i++) {
            double acc[CD_SG_N] = { 0 };
            for (size_t q = 0; q < CD_SG_K; q++)
                for (size_t j = 0; j < CD_SG_N; j++)
                    acc[j] += (double)a[i * CD_SG_K + q] * b[q * CD_SG_N + j];
            for (size_t j = 0; j < CD_SG_N; j++)
                ref[i * CD_SG_N + j] = acc[j];
        }
    });
cleanup:
    free(a);
    free(b);
    return rc;
}

/* CPU float64 from the same counter-based fills (no copy back). */
static int cd_reference(void *state, cudaStream_t s, void *ref_host)
{
    int rc = 0;
    cd_state *st = (cd_state *)state;
    double *ref = (double *)ref_host;
    size_t n = st->p->n;
    (void)s;
    if (cd_gemm(st->p))
        return cd_ref_gemm(st, ref);
    if (cd_sgemm(st->p))
        return cd_ref_sgemm(st, ref);
    float *in = (float *)malloc(n * sizeof(float));
    if (!in)
        return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "counters defect: out of memory");
    KG_TRY(kg_fill_host(in, KG_DTYPE_F32, n, st->seed, KG_FILL_UNIFORM, -1, 1));
    {
        const int k = st->p->kind;
        const double f = k == CD_SCALE || k == CD_SCALE_MAPPED           ? 2.0
                         : k == CD_SPILL_STATIC || k == CD_SPILL_DYNAMIC ? 136.0
                                                                         : 1.0;
        kg_par_range(n, [in, ref, f](size_t i0, size_t i1) {
            for (size_t i = i0; i < i1; i++)
                ref[i] = f * in[i];
        });
    }
cleanup:
    free(in);
    return rc;
}

static const kg_kernel_ref cd_k_copy[] = { KG_KERNEL(cd_copy_kernel, CD_BLOCK, 0) };
static const kg_kernel_ref cd_k_strided[] = { KG_KERNEL(cd_strided_kernel, CD_BLOCK, 0) };
static const kg_kernel_ref cd_k_scale[] = { KG_KERNEL(cd_scale_kernel, CD_BLOCK, 0) };
static const kg_kernel_ref cd_k_spill_s[] = { { (const void *)cd_spill_kernel<false>,
                                                "cd_spill_kernel<false>", CD_BLOCK, 0 } };
static const kg_kernel_ref cd_k_spill_d[] = { { (const void *)cd_spill_kernel<true>,
                                                "cd_spill_kernel<true>", CD_BLOCK, 0 } };
static const kg_kernel_ref cd_k_wmma[] = { KG_KERNEL(cd_gemm_wmma_kernel, 512, 0) };
static const kg_kernel_ref cd_k_fma[] = { KG_KERNEL(cd_gemm_fma_kernel, 512, 0) };
static const kg_kernel_ref cd_k_bf16_wmma[] = { { (const void *)cd_gemm_bf16_kernel<false>,
                                                  "cd_gemm_bf16_kernel<false>", 512, 0 } };
static const kg_kernel_ref cd_k_bf16_hfma2[] = { { (const void *)cd_gemm_bf16_kernel<true>,
                                                   "cd_gemm_bf16_kernel<true>", 512, 0 } };
static const kg_kernel_ref cd_k_sg_row[] = { { (const void *)cd_sgemm_kernel<false>,
                                               "cd_sgemm_kernel<false>", CD_BLOCK, 0 } };
static const kg_kernel_ref cd_k_sg_col[] = { { (const void *)cd_sgemm_kernel<true>,
                                               "cd_sgemm_kernel<true>", CD_BLOCK, 0 } };

#define CD_BIG ((size_t)32 << 20)  /* 128 MiB each way: past the H200's 50 MiB L2 */
#define CD_SMALL ((size_t)4 << 20) /* 16 MiB */
static const cd_params cd_p_copy = { CD_COPY, CD_BIG }, cd_p_strided = { CD_STRIDED, CD_BIG };
static const cd_params cd_p_scale = { CD_SCALE, CD_SMALL };
static const cd_params cd_p_mapped = { CD_SCALE_MAPPED, CD_SMALL };
static const cd_params cd_p_spill_s = { CD_SPILL_STATIC, CD_SMALL };
static const cd_params cd_p_spill_d = { CD_SPILL_DYNAMIC, CD_SMALL };
static const cd_params cd_p_wmma = { CD_GEMM_WMMA, CD_G *CD_G };
static const cd_params cd_p_fma = { CD_GEMM_FMA, CD_G *CD_G };
static const cd_params cd_p_copy0 = { CD_COPY_STREAM0, CD_SMALL };
static const cd_params cd_p_copy_small = { CD_COPY, CD_SMALL };
static const cd_params cd_p_bf16_wmma = { CD_BF16_WMMA, CD_G *CD_G };
static const cd_params cd_p_bf16_hfma2 = { CD_BF16_HFMA2, CD_G *CD_G };
static const cd_params cd_p_sg_row = { CD_SGEMM_ROW, (size_t)CD_SG_M *CD_SG_N };
static const cd_params cd_p_sg_col = { CD_SGEMM_COL, (size_t)CD_SG_M *CD_SG_N };

/* copies and x2: exact; the 16-term sum: 16 roundings of |x| < 136: 1e-4 abs; the GEMM: 64
 * exact products summed in fp32 (|sum| <= 64): 64 x 2^-24 x 64 < 3e-4 */
#define CD_EXACT KG_PARITY_TOLERANCE_INIT(0.0, 0.0, 0.9999999)
#define CD_SUM KG_PARITY_TOLERANCE_INIT(1e-4, 1e-6, 0.9999999)
#define CD_GEMM_TOL KG_PARITY_TOLERANCE_INIT(3e-4, 1e-5, 0.999999)
/* HFMA2: 16 chunks of 4 bf16 fused multiply-adds (8 mantissa bits each) summed in fp32 */
#define CD_HFMA2_TOL KG_PARITY_TOLERANCE_INIT(0.5, 0.02, 0.999)
/* 4096 products summed in fp32, |sum| < ~200: 4096 x 2^-24 x 200 ~ 5e-2 worst, ~1e-4 rms */
#define CD_SGEMM_TOL KG_PARITY_TOLERANCE_INIT(5e-2, 1e-5, 0.99999)

#define CD_CASE(ID, P, PAR, BYTES, FLOPS, K, GATE, WHY, TAGS)                                      \
    {                                                                                              \
        ID, "counters_defect", &(P), cd_setup, cd_launch, cd_reference, cd_teardown, KG_DTYPE_F64, \
            "cpu-f64", PAR, (BYTES), (FLOPS), K, 1, 0, NULL, GATE, WHY, NULL, NULL, 0, 0, 0, TAGS  \
    }
/* ... with kg_case_desc.bytes_binding (after prepare and sweep_point: NULL) */
#define CD_CASE_B(ID, P, PAR, BYTES, FLOPS, K, GATE, WHY, TAGS, BINDING)                           \
    {                                                                                              \
        ID, "counters_defect", &(P), cd_setup, cd_launch, cd_reference, cd_teardown, KG_DTYPE_F64, \
            "cpu-f64", PAR, (BYTES), (FLOPS), K, 1, 0, NULL, GATE, WHY, NULL, NULL, 0, 0, 0, TAGS, \
            NULL, NULL, BINDING                                                                    \
    }
#define CD_B(n) (8.0 * (double)(n)) /* read in, write out */
#define CD_GB (2.0 * 2 * CD_G * CD_G + 4.0 * CD_G * CD_G)
#define CD_GF (2.0 * CD_G * CD_G * CD_G)
/* 16 multiplies + 16 adds per element (the H200 counted 32n FP operations in the twin) */
#define CD_SPILL_F (32.0 * CD_SMALL)
#define CD_SG_B \
    (4.0 * ((double)CD_SG_M * CD_SG_K + (double)CD_SG_K * CD_SG_N + (double)CD_SG_M * CD_SG_N))
#define CD_SG_F (2.0 * CD_SG_M * CD_SG_N * CD_SG_K)

static const kg_case_desc cd_cases[] = {
    CD_CASE("defect/counters/strided/clean", cd_p_copy, CD_EXACT, CD_B(CD_BIG), 0, cd_k_copy, NULL,
            NULL, NULL),
    CD_CASE("defect/counters/strided/defect", cd_p_strided, CD_EXACT, CD_B(CD_BIG), 0, cd_k_strided,
            "counters",
            "the same copy through a stride-8 sweep: each 32-byte sector read 8 times, ~4-8x "
            "the declared DRAM bytes",
            NULL),
    CD_CASE("defect/counters/tensor/clean", cd_p_wmma, CD_GEMM_TOL, CD_GB, CD_GF, cd_k_wmma, NULL,
            NULL, "tensor-core"),
    CD_CASE("defect/counters/tensor/defect", cd_p_fma, CD_GEMM_TOL, CD_GB, CD_GF, cd_k_fma,
            "counters",
            "the same GEMM through FMA: no tensor-pipe instruction in a case tagged "
            "tensor-core",
            "tensor-core"),
    CD_CASE("defect/counters/sysmem/clean", cd_p_scale, CD_EXACT, CD_B(CD_SMALL), CD_SMALL,
            cd_k_scale, NULL, NULL, NULL),
    CD_CASE("defect/counters/sysmem/defect", cd_p_mapped, CD_EXACT, CD_B(CD_SMALL), CD_SMALL,
            cd_k_scale, "counters",
            "stores through a mapped pinned host pointer: system-memory traffic", NULL),
    CD_CASE("defect/counters/spill/clean", cd_p_spill_s, CD_SUM, CD_B(CD_SMALL), CD_SPILL_F,
            cd_k_spill_s, NULL, NULL, NULL),
    CD_CASE("defect/counters/spill/defect", cd_p_spill_d, CD_SUM, CD_B(CD_SMALL), CD_SPILL_F,
            cd_k_spill_d, "counters",
            "a runtime-indexed local array in a __noinline__ callee: local-memory requests", NULL),
    CD_CASE("defect/counters/model/clean", cd_p_copy, CD_EXACT, CD_B(CD_BIG), 0, cd_k_copy, NULL,
            NULL, NULL),
    CD_CASE("defect/counters/model/defect", cd_p_copy, CD_EXACT, CD_B(CD_BIG) / 2, 0, cd_k_copy,
            "counters", "declares half the bytes it moves: the work model is 2x off", NULL),
    CD_CASE("defect/counters/stream0/clean", cd_p_copy_small, CD_EXACT, CD_B(CD_SMALL), 0,
            cd_k_copy, NULL, NULL, NULL),
    CD_CASE("defect/counters/stream0/defect", cd_p_copy0, CD_EXACT, CD_B(CD_SMALL), 0, cd_k_copy,
            "counters", "error:on stream 0 or another stream", NULL),
    CD_CASE("defect/counters/hfma2/clean", cd_p_bf16_wmma, CD_GEMM_TOL, CD_GB, CD_GF,
            cd_k_bf16_wmma, NULL, NULL, "tensor-core"),
    CD_CASE("defect/counters/hfma2/defect", cd_p_bf16_hfma2, CD_HFMA2_TOL, CD_GB, CD_GF,
            cd_k_bf16_hfma2, "counters",
            "the bf16 GEMM through packed HFMA2: no hmma/gmma instruction in a case tagged "
            "tensor-core (GH100's generic tensor pipe counts HFMA2)",
            "tensor-core"),
    CD_CASE_B("defect/counters/sgemm/clean", cd_p_sg_row, CD_SGEMM_TOL, CD_SG_B, CD_SG_F,
              cd_k_sg_row, NULL, NULL, NULL, 1),
    CD_CASE_B("defect/counters/sgemm/defect", cd_p_sg_col, CD_SGEMM_TOL, CD_SG_B, CD_SG_F,
              cd_k_sg_col, "counters",
              "a naive SGEMM in column order re-reads A from DRAM every sweep (~16x the declared "
              "bytes, declared binding) in a compute-bound case",
              NULL, 1),
    /* the defect's kernel without bytes_binding: WARN (EXCESS), not a failure */
    CD_CASE_B("defect/counters/sgemm/unbound", cd_p_sg_col, CD_SGEMM_TOL, CD_SG_B, CD_SG_F,
              cd_k_sg_col, NULL, NULL, NULL, 0),
};

extern "C" int kg_counters_defects_register(kg_registry *reg)
{
    return kg_registry_add_all(reg, cd_cases, sizeof(cd_cases) / sizeof(cd_cases[0]));
}
