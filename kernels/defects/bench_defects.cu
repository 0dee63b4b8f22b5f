/* Bench defects: slow variants of reference kernels, each with a clean twin, for the bench
 * gate's sensitivity proof (scripts/bench-proof.sh) and selftest.
 *
 * Memory-bound copies ("copy_256MiB", ~130 us; "copy_192MiB", ~100 us): the clean twin copies
 * n fp32 (out = in). Each variant runs the SAME kernel with a second input `extra` of p% of
 * those bytes added element-wise into the first elements (out[i] = in[i] + extra[i] for i < m):
 * exactly p% more bytes read, nothing else changed, so a +p% time regression is planted by
 * construction.
 *
 * Compute-bound FMA chains ("fma_chain_1ms", "fma_chain_10us"; bench_defects_impl.cuh): one
 * thread per element runs a chain of dependent FMAs; a variant runs p% more iterations of the
 * same template (one policy parameter), so on this issue-bound kernel it takes p% longer.
 *
 * Sizes for an H200 (132 SMs, ~1.98 GHz boost, ~4.8 TB/s HBM3e of which a copy reaches ~4.0-4.3,
 * 50 MB L2; scripts/bench-proof.sh prints what the GPU at hand measured):
 *   copy of n floats: 8n bytes of DRAM traffic / ~4.2e12 B/s; 256 MiB each way (n = 64 Mi):
 *     537 MB -> ~128 us; 192 MiB each way (n = 48 Mi): 403 MB -> ~96 us (both well past L2).
 *   FMA chain: 1056 blocks x 256 threads = 270336 threads, 2048 resident per SM (one wave);
 *     fp32 FMA issue is 128 lanes/SM/clock, so 132 x 128 x 1.98e9 = 3.35e10 FMA/s and a chain
 *     of I iterations takes 270336 I / 3.35e10 s: I = 123904 -> 1.0 ms, I = 1232 -> 10 us of
 *     FMAs; the loop's counter and branch (3 instructions per 16 FMAs) share the issue slots,
 *     so expect up to ~1.2 ms and ~12 us, plus ~1 us of launch and ramp on the short one: its
 *     variants shift by slightly less than p%, and its 0.4 us absolute floor is ~3.3%.
 *
 * Naming: the clean twin of "defect/bench/<family>/+<p>pct" is "defect/bench/<family>/clean".
 * The twin carries no expect_gate (it is a clean case, it must pass); its mark, re-keyed to a
 * variant's id, is what the variant is compared against. */
#include <stdlib.h>
#include <string.h>
#include "../cases.h"
#include "../par_rows.h"
#include "bench_defects_impl.cuh"

#define BD_BLOCK 256
#define BD_MAX_GRID 8192

typedef struct {
    size_t n; /* elements of in/out */
    size_t m; /* elements of extra (p% of the clean bytes, multiple of 4) */
} bd_params;

typedef struct {
    size_t n, m;
    float *in, *extra, *out; /* device */
} bd_state;

/* Grid-stride float4 copy; the first m/4 vectors also read extra. n and m are multiples of 4. */
__global__ void __launch_bounds__(BD_BLOCK)
    bench_copy_kernel(const float4 *__restrict__ in, const float4 *__restrict__ extra,
                      float4 *__restrict__ out, size_t n4, size_t m4)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = in[i];
        if (i < m4) {
            const float4 e = extra[i];
            v.x += e.x;
            v.y += e.y;
            v.z += e.z;
            v.w += e.w;
        }
        out[i] = v;
    }
}

/* Counter-based random fill in [-1, 1), never zero: element i depends on (seed, i) only. */
__global__ void bench_fill_kernel(float *p, size_t n, unsigned long long seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        float u = (float)(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
        p[i] = u != 0.0f ? u : 0x1p-12f;
    }
}

static unsigned bd_grid(size_t n)
{
    size_t g = (n + BD_BLOCK - 1) / BD_BLOCK;
    return (unsigned)(g > BD_MAX_GRID ? BD_MAX_GRID : (g ? g : 1));
}

/* Fill n floats of p (bench_fill_kernel) on the stream; a launch error names the buffer. */
static int bd_fill(float *p, size_t n, unsigned long long seed, cudaStream_t s)
{
    int rc = 0;
    bench_fill_kernel<<<bd_grid(n), BD_BLOCK, 0, s>>>(p, n, seed);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* Wait for the fills; the case's output: n floats at out, no rows. */
static int bd_io_ready(kg_case_io *io, float *out, size_t n, cudaStream_t s)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    io->out = out;
    io->out_count = n;
    io->out_dtype = KG_DTYPE_F32;
    io->rows = 0;
cleanup:
    return rc;
}

static void bd_teardown(void *state)
{
    bd_state *st = (bd_state *)state;
    if (!st)
        return;
    cudaFree(st->in);
    cudaFree(st->extra);
    cudaFree(st->out);
    free(st);
}

static int bd_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const bd_params *p = (const bd_params *)args->params;
    bd_state *st = (bd_state *)calloc(1, sizeof(*st));
    if (!st) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "bench defect: out of host memory");
        goto cleanup;
    }
    st->n = p->n;
    st->m = p->m;
    KG_CUDA_CHECK(cudaMalloc((void **)&st->in, st->n * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->out, st->n * sizeof(float)));
    /* The clean twin gets a 4-element extra it never reads (m = 0): same allocations. */
    KG_CUDA_CHECK(cudaMalloc((void **)&st->extra, (st->m ? st->m : 4) * sizeof(float)));
    KG_TRY(bd_fill(st->in, st->n, args->seed, args->stream));
    KG_TRY(bd_fill(st->extra, st->m ? st->m : 4, args->seed ^ 0x5eedULL, args->stream));
    KG_TRY(bd_io_ready(io, st->out, st->n, args->stream));
    *state = st;
    st = NULL;
cleanup:
    bd_teardown(st);
    return rc;
}

template <class SP> static int bd_launch_on(void *state, cudaStream_t s)
{
    int rc = 0;
    bd_state *st = (bd_state *)state;
    bench_copy_kernel<<<bd_grid(st->n / 4), BD_BLOCK, 0, SP::pick(s)>>>((const float4 *)st->in,
                                                                        (const float4 *)st->extra,
                                                                        (float4 *)st->out,
                                                                        st->n / 4, st->m / 4);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* CPU float64: in[i] + (i < m ? extra[i] : 0), from the device inputs copied back. */
static int bd_reference(void *state, cudaStream_t s, void *ref_host)
{
    int rc = 0;
    bd_state *st = (bd_state *)state;
    float *in = (float *)malloc(st->n * sizeof(float));
    float *ex = (float *)malloc((st->m ? st->m : 1) * sizeof(float));
    double *ref = (double *)ref_host;
    if (!in || !ex) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "bench defect reference: out of memory");
        goto cleanup;
    }
    KG_CUDA_CHECK(cudaMemcpyAsync(in, st->in, st->n * sizeof(float), cudaMemcpyDeviceToHost, s));
    if (st->m)
        KG_CUDA_CHECK(
            cudaMemcpyAsync(ex, st->extra, st->m * sizeof(float), cudaMemcpyDeviceToHost, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    { /* over the host threads: the first touch of a 512 MiB reference (256 MiB copy) */
        const size_t m = st->m;
        kg_par_range(st->n, [in, ex, ref, m](size_t i0, size_t i1) {
            for (size_t i = i0; i < i1; i++)
                ref[i] = (double)in[i] + (i < m ? (double)ex[i] : 0.0);
        });
    }
cleanup:
    free(in);
    free(ex);
    return rc;
}

/* The clean twins' launcher: the given stream. */
static int bd_launch(void *state, cudaStream_t s)
{
    return bd_launch_on<bd_stream_policy<false>>(state, s);
}
/* The stream-0 defect's (defect/bench/copy_192MiB/stream0). */
static int bd_launch_stream0(void *state, cudaStream_t s)
{
    return bd_launch_on<bd_stream_policy<true>>(state, s);
}

static const kg_kernel_ref bd_kernels[] = { KG_KERNEL(bench_copy_kernel, BD_BLOCK, 0) };

#define BD_N ((size_t)64 << 20)    /* 64 Mi floats = 256 MiB each way */
#define BD_N100 ((size_t)48 << 20) /* 48 Mi floats = 192 MiB each way: ~100 us */
/* p% of the clean copy's 8n bytes: 2n p / 100 extra floats read (a multiple of 4). */
#define BD_EXTRA_N(n, pct) ((size_t)(2 * (n) * (pct) / 100) & ~(size_t)3)
#define BD_EXTRA(pct) BD_EXTRA_N(BD_N, pct)
static const bd_params bd_clean = { BD_N, 0 };
static const bd_params bd_p1 = { BD_N, BD_EXTRA(1) };
static const bd_params bd_p2 = { BD_N, BD_EXTRA(2) };
static const bd_params bd_p5 = { BD_N, BD_EXTRA(5) };
static const bd_params bd_p10 = { BD_N, BD_EXTRA(10) };
static const bd_params bd_100_clean = { BD_N100, 0 };
static const bd_params bd_100_p2 = { BD_N100, BD_EXTRA_N(BD_N100, 2) };

/* Parity: one fp32 add of values in [-1, 1): |error| <= 0.5 ulp(2) ~ 1.2e-7. */
#define BD_PARITY KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.9999999)

#define BD_CASE(ID, P, GATE, WHY) BD_CASE_L(ID, P, bd_launch, GATE, WHY)
#define BD_CASE_L(ID, P, LAUNCH, GATE, WHY)                                                    \
    {                                                                                          \
        ID, "bench_copy", &(P), bd_setup, LAUNCH, bd_reference, bd_teardown, KG_DTYPE_F64,     \
            "cpu-f64", BD_PARITY,                                                              \
            /* read in (+ extra), write out */ 8.0 * (double)(P).n + 4.0 * (double)(P).m, 0.0, \
            bd_kernels, 1, 0, NULL, GATE, WHY                                                  \
    }

/* ---- compute-bound: FMA chains (bench_defects_impl.cuh) ------------------------------------ */

#define BD_FMA_THREADS ((size_t)1056 * BD_FMA_BLOCK) /* 132 SMs x 2048 resident: one wave */
#define BD_FMA_1MS 123904                            /* iterations: ~1.0 ms on an H200 */
#define BD_FMA_10US 1232                             /* iterations: ~10 us */

/* The policies as named structs (a template's name stays readable: "k<bd_fma_1ms_p2>"). */
struct bd_fma_1ms_p0 : bd_fma_policy<BD_FMA_1MS, 0> {
};
struct bd_fma_1ms_p2 : bd_fma_policy<BD_FMA_1MS, 2> {
};
struct bd_fma_1ms_p5 : bd_fma_policy<BD_FMA_1MS, 5> {
};
struct bd_fma_1ms_p10 : bd_fma_policy<BD_FMA_1MS, 10> {
};
struct bd_fma_10us_p0 : bd_fma_policy<BD_FMA_10US, 0> {
};
struct bd_fma_10us_p5 : bd_fma_policy<BD_FMA_10US, 5> {
};
struct bd_fma_10us_p10 : bd_fma_policy<BD_FMA_10US, 10> {
};

typedef struct {
    size_t n;
    float *x0, *c, *a, *out; /* device; a: one float, 0.5 */
} bd_fma_state;

typedef int (*bd_fma_launch_fn)(void *state, cudaStream_t s);

template <class P> static int bd_fma_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    bd_fma_state *st = (bd_fma_state *)state;
    bd_fma_chain_kernel<P>
        <<<(unsigned)((st->n + BD_FMA_BLOCK - 1) / BD_FMA_BLOCK), BD_FMA_BLOCK, 0, s>>>(st->x0,
                                                                                        st->c,
                                                                                        st->a,
                                                                                        st->out,
                                                                                        st->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static void bd_fma_teardown(void *state)
{
    bd_fma_state *st = (bd_fma_state *)state;
    if (!st)
        return;
    cudaFree(st->x0);
    cudaFree(st->c);
    cudaFree(st->a);
    cudaFree(st->out);
    free(st);
}

static int bd_fma_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const float half = 0.5f;
    bd_fma_state *st = (bd_fma_state *)calloc(1, sizeof(*st));
    if (!st) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "bench defect: out of host memory");
        goto cleanup;
    }
    st->n = BD_FMA_THREADS;
    KG_CUDA_CHECK(cudaMalloc((void **)&st->x0, st->n * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->c, st->n * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->a, sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->out, st->n * sizeof(float)));
    KG_TRY(bd_fill(st->x0, st->n, args->seed, args->stream));
    KG_TRY(bd_fill(st->c, st->n, args->seed ^ 0xfaceULL, args->stream));
    KG_CUDA_CHECK(cudaMemcpyAsync(st->a, &half, sizeof half, cudaMemcpyHostToDevice, args->stream));
    KG_TRY(bd_io_ready(io, st->out, st->n, args->stream));
    *state = st;
    st = NULL;
cleanup:
    bd_fma_teardown(st);
    return rc;
}

/* x <- x/2 + c converges to its fixed point 2c (exactly, or within an ulp: halving the
 * distance every step, 47 steps from |x0 - 2c| <= 2 down to ulp(2c) for |c| >= 2^-23), long
 * before the shortest chain (1232) ends. */
static int bd_fma_reference(void *state, cudaStream_t s, void *ref_host)
{
    int rc = 0;
    bd_fma_state *st = (bd_fma_state *)state;
    float *c = (float *)malloc(st->n * sizeof(float));
    double *ref = (double *)ref_host;
    if (!c) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "bench defect reference: out of memory");
        goto cleanup;
    }
    KG_CUDA_CHECK(cudaMemcpyAsync(c, st->c, st->n * sizeof(float), cudaMemcpyDeviceToHost, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < st->n; i++)
        ref[i] = 2.0 * (double)c[i];
cleanup:
    free(c);
    return rc;
}

#define BD_FMA_KERNELS(P) \
    static const kg_kernel_ref bd_k_##P[] = { KG_KERNEL(bd_fma_chain_kernel<P>, BD_FMA_BLOCK, 0) }
BD_FMA_KERNELS(bd_fma_1ms_p0);
BD_FMA_KERNELS(bd_fma_1ms_p2);
BD_FMA_KERNELS(bd_fma_1ms_p5);
BD_FMA_KERNELS(bd_fma_1ms_p10);
BD_FMA_KERNELS(bd_fma_10us_p0);
BD_FMA_KERNELS(bd_fma_10us_p5);
BD_FMA_KERNELS(bd_fma_10us_p10);

/* Work model: 2 flops per FMA; x0 and c read, out written (the scalar a: 4 bytes). */
#define BD_FMA_CASE(ID, P, GATE, WHY)                                                             \
    {                                                                                             \
        ID, "bench_fma_chain", NULL, bd_fma_setup, bd_fma_launch<P>, bd_fma_reference,            \
            bd_fma_teardown, KG_DTYPE_F64, "cpu-f64", BD_PARITY,                                  \
            12.0 * (double)BD_FMA_THREADS + 4.0, 2.0 * (double)BD_FMA_THREADS *(double)P::kIters, \
            bd_k_##P, 1, 0, NULL, GATE, WHY                                                       \
    }

/* What users pay: cuBLAS's bf16 GEMM at 8192^3 (cublas_gemm.cu) on random
 * inputs against its clean twin on all-zero inputs: the same kernel and cycles, but zeros toggle
 * nothing and draw less power, so under the H200's power cap the twin runs at a higher clock.
 * The decided basis (replay-clock-normalised) sees the same cycles; the energy per launch
 * (measured: 1141 vs 570 mJ, +100%) and the measured time (1.624 vs 1.404 ms, +16%) do not. The
 * defect must FAIL on its energy per launch; the policy parameter is zero_inputs. */
static const kg_cublas_gemm_params bd_gemm_zeros = { 8192, 8192, 8192, 1, 1 };
static const kg_cublas_gemm_params bd_gemm_random = { 8192, 8192, 8192, 1, 0 };
#define BD_GEMM_CASE(ID, P, GATE, WHY)                                                  \
    {                                                                                   \
        ID, "cublas_gemm_bf16", &P, kg_cublas_gemm_setup, kg_cublas_gemm_launch,        \
            kg_cublas_gemm_reference, kg_cublas_gemm_teardown, KG_DTYPE_F64, "cpu-f64", \
            KG_CUBLAS_GEMM_PARITY, 2.0 * 2 * 8192.0 * 8192 + 4.0 * 8192 * 8192,         \
            2.0 * 8192.0 * 8192 * 8192, NULL, 0, 0, NULL, GATE, WHY                     \
    }

static const kg_case_desc bd_cases[] = {
    BD_GEMM_CASE("defect/bench/power_gemm_8192/clean", bd_gemm_zeros, NULL,
                 "clean twin (cuBLAS 8192^3 on zeros: less power at the same cycles): the mark "
                 "defect/bench/power_gemm_8192/random is compared against"),
    /* "observe" (reported, not counted): caught on one H200, escaped on another that started
     * cold (2026-12-03, GPU f64319d0): one process's energy window cannot always tell it. */
    BD_GEMM_CASE("defect/bench/power_gemm_8192/random", bd_gemm_random, "bench",
                 "observe: the same GEMM on random inputs: the same cycles, twice the energy per "
                 "launch"),
    BD_CASE("defect/bench/copy_256MiB/clean", bd_clean, NULL,
            "clean twin: the mark every defect/bench/copy_256MiB/+<p>pct variant is compared "
            "against"),
    /* +1% is "observe" (reported, not counted) in the selftest: under the 0.5% floor plus the
     * spread across the processes that set the twin's mark, one process cannot always tell it.
     * +2% is counted: the twin's mark is merged from 3 processes. */
    BD_CASE("defect/bench/copy_256MiB/+1pct", bd_p1, "bench",
            "observe: reads 1% more bytes than its clean twin: 1% slower"),
    BD_CASE("defect/bench/copy_256MiB/+2pct", bd_p2, "bench",
            "reads 2% more bytes than its clean twin: 2% slower"),
    BD_CASE("defect/bench/copy_256MiB/+5pct", bd_p5, "bench",
            "reads 5% more bytes than its clean twin: 5% slower"),
    BD_CASE("defect/bench/copy_256MiB/+10pct", bd_p10, "bench",
            "reads 10% more bytes than its clean twin: 10% slower"),
    BD_CASE("defect/bench/copy_192MiB/clean", bd_100_clean, NULL,
            "clean twin (~100 us): the mark defect/bench/copy_192MiB/+2pct is compared against"),
    BD_CASE("defect/bench/copy_192MiB/+2pct", bd_100_p2, "bench",
            "reads 2% more bytes than its clean twin: 2% slower"),
    /* Issue #25: the same copy launched on the legacy default stream, not the one given; its
     * clean twin is copy_192MiB/clean (the same kernel on the given stream). An impossible
     * timing is ERROR with the reason, which is what the selftest matches ("error:"): the
     * empty graph's, or (were the capture refused) the copy ceiling's, both ask this. */
    BD_CASE_L("defect/bench/copy_192MiB/stream0", bd_100_clean, bd_launch_stream0, "bench",
              "error:is the work on another stream"),
    BD_FMA_CASE("defect/bench/fma_chain_1ms/clean", bd_fma_1ms_p0, NULL,
                "clean twin (~1 ms, compute-bound): the mark every fma_chain_1ms variant is "
                "compared against"),
    BD_FMA_CASE("defect/bench/fma_chain_1ms/+2pct", bd_fma_1ms_p2, "bench",
                "2% more dependent FMA iterations than its clean twin: 2% slower"),
    BD_FMA_CASE("defect/bench/fma_chain_1ms/+5pct", bd_fma_1ms_p5, "bench",
                "5% more dependent FMA iterations than its clean twin: 5% slower"),
    BD_FMA_CASE("defect/bench/fma_chain_1ms/+10pct", bd_fma_1ms_p10, "bench",
                "10% more dependent FMA iterations than its clean twin: 10% slower"),
    BD_FMA_CASE("defect/bench/fma_chain_10us/clean", bd_fma_10us_p0, NULL,
                "clean twin (~10 us, compute-bound): the mark every fma_chain_10us variant is "
                "compared against"),
    BD_FMA_CASE("defect/bench/fma_chain_10us/+5pct", bd_fma_10us_p5, "bench",
                "5% more dependent FMA iterations than its clean twin: ~5% slower"),
    BD_FMA_CASE("defect/bench/fma_chain_10us/+10pct", bd_fma_10us_p10, "bench",
                "10% more dependent FMA iterations than its clean twin: ~10% slower"),
};

extern "C" int kg_bench_defects_register(kg_registry *reg)
{
    return kg_registry_add_all(reg, bd_cases, sizeof(bd_cases) / sizeof(bd_cases[0]));
}

/* ---- the A/B proof's cases (scripts/ab-proof.sh) ------------------------------------------- */

/* One id per kind, KG_AB_SLOWER_PCT percent slower in the build that defines it: kgate-ab-base
 * and kgate-ab-head are this file built with 0 and 2, two builds of one runner whose only
 * difference is a kernel change of known size, as a pull request's base and head are. The same
 * policy parameters as the +<p>pct variants above; the FMA bases are multiples of 800
 * iterations, so that +2% is a whole number of unrolled steps (1232 + 2% is not: 1248, +1.3%). */
#ifndef KG_AB_SLOWER_PCT
#define KG_AB_SLOWER_PCT 0
#endif
#define BD_AB_FMA_1MS 124000 /* ~1.0 ms on an H200 */
#define BD_AB_FMA_13US 1600  /* ~13 us: small, L2-resident (3 MiB) */
#define BD_AB_FMA_6US 800    /* ~6.5 us */
struct bd_fma_ab_1ms : bd_fma_policy<BD_AB_FMA_1MS, KG_AB_SLOWER_PCT> {
};
struct bd_fma_ab_13us : bd_fma_policy<BD_AB_FMA_13US, KG_AB_SLOWER_PCT> {
};
struct bd_fma_ab_6us : bd_fma_policy<BD_AB_FMA_6US, KG_AB_SLOWER_PCT> {
};
BD_FMA_KERNELS(bd_fma_ab_1ms);
BD_FMA_KERNELS(bd_fma_ab_13us);
BD_FMA_KERNELS(bd_fma_ab_6us);
static const bd_params bd_ab_copy = { BD_N, BD_EXTRA(KG_AB_SLOWER_PCT) };

/* +p% exactly: the unrolled loop has no remainder to round away */
static_assert(bd_fma_ab_1ms::kIters * 100LL == BD_AB_FMA_1MS * (100LL + KG_AB_SLOWER_PCT), "1ms");
static_assert(bd_fma_ab_13us::kIters * 100 == BD_AB_FMA_13US * (100 + KG_AB_SLOWER_PCT), "13us");
static_assert(bd_fma_ab_6us::kIters * 100 == BD_AB_FMA_6US * (100 + KG_AB_SLOWER_PCT), "6us");

#define BD_STR2(x) #x
#define BD_STR(x) BD_STR2(x)
#define BD_AB_WHAT(KIND) KIND "; +" BD_STR(KG_AB_SLOWER_PCT) "% in this build"
static const kg_case_desc bd_ab_cases[] = {
    BD_FMA_CASE("ab/fma_chain_1ms", bd_fma_ab_1ms, NULL,
                BD_AB_WHAT("compute-bound, ~1 ms of dependent FMAs")),
    BD_FMA_CASE("ab/fma_chain_13us", bd_fma_ab_13us, NULL,
                BD_AB_WHAT("small and L2-resident, ~13 us of dependent FMAs")),
    BD_FMA_CASE("ab/fma_chain_6us", bd_fma_ab_6us, NULL,
                BD_AB_WHAT("small and L2-resident, ~6.5 us of dependent FMAs")),
    BD_CASE("ab/copy_256MiB", bd_ab_copy, NULL,
            BD_AB_WHAT("memory-bound, ~130 us: a 256 MiB copy, + the extra bytes read")),
};

extern "C" int kg_ab_proof_cases_register(kg_registry *reg)
{
    return kg_registry_add_all(reg, bd_ab_cases, sizeof(bd_ab_cases) / sizeof(bd_ab_cases[0]));
}
