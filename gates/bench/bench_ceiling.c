/* Ceilings measured on the device in the same run: a large device-to-device copy (GB/s, bytes
 * read + written) and a large bf16 cuBLAS GEMM (TFLOP/s) on random inputs. The GEMM also
 * records the kernel cuBLAS chose (CUPTI activity) and the SM clock of every sample: when a
 * GEMM's figure moves between processes, these say whether the kernel or the clock moved.
 * Each is warmed back-to-back until the probe clock is steady (the heavy rule: at least 0.3 s,
 * so the GEMM is in its capped state) and records that state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/cublas.h"
#include "bench/bench.h"
#include "core/report_keys.h"

#define CEIL_SAMPLES 15
#define CEIL_WARMUP 3

typedef struct {
    double us[CEIL_SAMPLES];
    double mhz[CEIL_SAMPLES];
    kg_power_state power; /* the state it was timed in (warmed to steady first) */
    int block_timeouts;
} ceil_samples;

static cJSON *samples_json(const ceil_samples *cs, double median_us)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, KG_RK_CEIL_MEDIAN, median_us);
    cJSON_AddItemToObject(o, KG_RK_CEIL_SAMPLES, cJSON_CreateDoubleArray(cs->us, CEIL_SAMPLES));
    cJSON *c = cJSON_AddArrayToObject(o, KG_RK_CEIL_SM_CLOCK);
    for (int i = 0; c && i < CEIL_SAMPLES; i++)
        cJSON_AddItemToArray(c, isfinite(cs->mhz[i]) ? cJSON_CreateNumber(cs->mhz[i])
                                                     : cJSON_CreateNull());
    cJSON_AddItemToObject(o, KG_RK_CEIL_POWER_STATE, kg_power_state_json(&cs->power));
    cJSON_AddNumberToObject(o, KG_RK_CEIL_BLOCK_TIMEOUTS, cs->block_timeouts);
    return o;
}

/* Time one operation CEIL_SAMPLES times with events behind the blocking start, probing the
 * clock after each, once it ran back-to-back to a steady power state: a ceiling is measured in
 * the same state as the cases it divides (the GEMM's in its steady, often power-capped, one). */
typedef kg_bench_op ceil_op;

/* Half the samples' range relative to their median: how far the ceiling itself moved. */
static double ceil_spread(const ceil_samples *cs, double median_us)
{
    double lo = cs->us[0], hi = cs->us[0];
    for (int i = 1; i < CEIL_SAMPLES; i++) {
        lo = fmin(lo, cs->us[i]);
        hi = fmax(hi, cs->us[i]);
    }
    return median_us > 0 ? (hi - lo) / (2.0 * median_us) : 0;
}

static int ceil_one(double *us, double *mhz, bool *timed_out, kg_bench_env *env, ceil_op op,
                    void *arg, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, bool probe,
                    unsigned long long *probe_dev, unsigned long long *probe_host)
{
    int rc = 0;
    float ms = 0;
    KG_TRY(kg_bench_block(env, s));
    KG_CUDA_CHECK(cudaEventRecord(e0, s));
    KG_TRY(op(arg, s));
    KG_CUDA_CHECK(cudaEventRecord(e1, s));
    kg_bench_block_release(env);
    if (probe) {
        KG_TRY(kg_clock_probe_launch(probe_dev, 20000u, s));
        KG_CUDA_CHECK(cudaMemcpyAsync(probe_host, probe_dev, 2 * sizeof *probe_host,
                                      cudaMemcpyDeviceToHost, s));
    }
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    KG_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    *us = ms * 1000.0;
    *mhz = (probe && probe_host[1]) ? probe_host[0] * 1000.0 / (double)probe_host[1] : NAN;
    *timed_out = kg_bench_block_timed_out(env);
cleanup:
    kg_bench_block_release(env);
    return rc;
}

static int time_op(double *median_us, ceil_samples *cs, kg_bench_env *env, ceil_op op, void *arg,
                   cudaStream_t s, unsigned long long *probe_dev, unsigned long long *probe_host,
                   double warmup_min_s)
{
    int rc = 0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms = 0;
    const bool probe = kg_clock_probe_init() == 0;
    kg_power_track *t = calloc(1, sizeof *t);
    if (!t)
        return KG_ERR(KG_ENOMEM, "out of memory");
    cs->block_timeouts = 0;
    KG_CUDA_CHECK(cudaEventCreate(&e0));
    KG_CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < CEIL_WARMUP; i++)
        KG_TRY(op(arg, s));
    KG_CUDA_CHECK(cudaEventRecord(e0, s));
    KG_TRY(op(arg, s));
    KG_CUDA_CHECK(cudaEventRecord(e1, s));
    KG_CUDA_CHECK(cudaEventSynchronize(e1));
    KG_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    /* Both ceilings are power-hungry (a 1 GiB copy, a GEMM at the power cap): the heavy rule. */
    const kg_warm_rule w = kg_warm_rule_for(kg_bench_env_max_clock_mhz(env), ms * 1e3, true,
                                            warmup_min_s);
    KG_TRY(kg_bench_warm_to_steady(&cs->power, t, env, op, arg, s, ms, &w));
    for (int i = 0; i < CEIL_SAMPLES; i++) {
        bool to = false;
        KG_TRY(ceil_one(&cs->us[i], &cs->mhz[i], &to, env, op, arg, s, e0, e1, probe, probe_dev,
                        probe_host));
        cs->block_timeouts += to;
        kg_bench_poll_track(env, t, i == CEIL_SAMPLES - 1);
    }
    kg_power_track_end(t);
    kg_power_finish(&cs->power, cs->mhz, CEIL_SAMPLES);
    *median_us = kg_stats_median(cs->us, CEIL_SAMPLES);
cleanup:
    if (e0)
        (void)cudaEventDestroy(e0);
    if (e1)
        (void)cudaEventDestroy(e1);
    free(t);
    return rc;
}

typedef struct {
    void *src, *dst;
    size_t bytes;
} copy_arg;

static int copy_op(void *a, cudaStream_t s)
{
    int rc = 0;
    copy_arg *c = a;
    KG_CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s));
cleanup:
    return rc;
}

typedef struct {
    cublasHandle_t h;
    uint16_t *a, *b, *c;
    int m, n, k;
} gemm_arg;

static int gemm_op(void *p, cudaStream_t s)
{
    int rc = 0;
    gemm_arg *g = p;
    const float alpha = 1.0f, beta = 0.0f;
    KG_UNUSED(s); /* the handle is bound to s */
    /* Row-major C[M,N] = A[M,K] B[N,K]^T as column-major C^T = B A^T ("TN", cuBLAS's fastest). */
    KG_CUBLAS_CHECK(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, &alpha, g->b,
                                 CUDA_R_16BF, g->k, g->a, CUDA_R_16BF, g->k, &beta, g->c,
                                 CUDA_R_16BF, g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
cleanup:
    return rc;
}

void kg_bench_ceilings_free(kg_bench_ceilings *c)
{
    cJSON_Delete(c->detail);
    memset(c, 0, sizeof *c);
}

/* What both ceilings are timed with: the run's env, one stream, the clock-probe buffers. */
typedef struct {
    kg_bench_env *env;
    cudaStream_t s;
    unsigned long long *probe_dev, *probe_host;
    double warmup_min_s;
    uint64_t seed;
    size_t free_b;
} ceil_ctx;

/* Copy: 1 GiB (less on small GPUs), random bytes (never time on zeros). */
static int ceil_copy(kg_bench_ceilings *c, const ceil_ctx *x)
{
    int rc = 0;
    copy_arg ca = { NULL, NULL, (size_t)1 << 30 };
    ceil_samples cs;
    double med = 0;
    while (ca.bytes > ((size_t)64 << 20) && 3 * ca.bytes > x->free_b)
        ca.bytes /= 2;
    KG_CUDA_CHECK(cudaMalloc(&ca.src, ca.bytes));
    KG_CUDA_CHECK(cudaMalloc(&ca.dst, ca.bytes));
    KG_TRY(kg_bench_fill_bf16(ca.src, ca.bytes / 2, x->seed ^ 0xc0b1, x->s));
    KG_TRY(time_op(&med, &cs, x->env, copy_op, &ca, x->s, x->probe_dev, x->probe_host,
                   x->warmup_min_s));
    c->copy_bytes = 2.0 * (double)ca.bytes;
    c->copy_gbps = c->copy_bytes / (med * 1e-6) / 1e9;
    c->copy_spread_rel = ceil_spread(&cs, med);
    cJSON *cj = samples_json(&cs, med);
    if (cj) {
        cJSON_AddNumberToObject(cj, KG_RK_CEIL_BYTES, (double)ca.bytes);
        cJSON_AddNumberToObject(cj, KG_RK_CEIL_GBPS, c->copy_gbps);
        cJSON_AddItemToObject(c->detail, KG_RK_CEIL_COPY, cj);
    }
cleanup:
    (void)cudaStreamSynchronize(x->s);
    (void)cudaFree(ca.src);
    (void)cudaFree(ca.dst);
    return rc;
}

/* The kernel cuBLAS chose in this process, traced over one more GEMM, into gj. */
static int ceil_gemm_kernels(cJSON *gj, gemm_arg *ga, cudaStream_t s)
{
    int rc = 0;
    if (kg_kernel_trace_begin() != 0)
        return 0;
    int orc = gemm_op(ga, s);
    cudaError_t se = cudaStreamSynchronize(s);
    cJSON *k = kg_kernel_trace_end();
    if (k)
        cJSON_AddItemToObject(gj, KG_RK_CEIL_KERNELS, k);
    KG_TRY(orc);
    KG_CUDA_CHECK(se);
cleanup:
    return rc;
}

/* GEMM: 8192^3 bf16 (4096^3 when memory is short), fp32 accumulation, random inputs. */
static int ceil_gemm(kg_bench_ceilings *c, const ceil_ctx *x)
{
    int rc = 0;
    gemm_arg ga = { NULL, NULL, NULL, NULL, 0, 0, 0 };
    void *ws = NULL;
    const size_t ws_bytes = (size_t)32 << 20;
    ceil_samples cs;
    double med = 0;
    ga.m = ga.n = ga.k = (x->free_b > ((size_t)2 << 30)) ? 8192 : 4096;
    size_t elems = (size_t)ga.m * ga.k;
    KG_CUDA_CHECK(cudaMalloc((void **)&ga.a, elems * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&ga.b, elems * 2));
    KG_CUDA_CHECK(cudaMalloc((void **)&ga.c, elems * 2));
    KG_CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    KG_TRY(kg_bench_fill_bf16(ga.a, elems, x->seed ^ 0xa, x->s));
    KG_TRY(kg_bench_fill_bf16(ga.b, elems, x->seed ^ 0xb, x->s));
    KG_CUBLAS_CHECK(cublasCreate(&ga.h));
    KG_CUBLAS_CHECK(cublasSetStream(ga.h, x->s));
    /* cublasSetStream resets the workspace: set ours after it, so nothing allocates. */
    KG_CUBLAS_CHECK(cublasSetWorkspace(ga.h, ws, ws_bytes));
    KG_TRY(time_op(&med, &cs, x->env, gemm_op, &ga, x->s, x->probe_dev, x->probe_host,
                   x->warmup_min_s));
    c->gemm_m = ga.m;
    c->gemm_n = ga.n;
    c->gemm_k = ga.k;
    c->gemm_tflops = 2.0 * ga.m * (double)ga.n * ga.k / (med * 1e-6) / 1e12;
    c->gemm_spread_rel = ceil_spread(&cs, med);
    c->gemm_clock_scale = cs.power.max_mhz > 0 && cs.power.sm_median > 0
                              ? fmax(1.0, cs.power.max_mhz / cs.power.sm_median)
                              : 1.0;
    cJSON *gj = samples_json(&cs, med);
    if (gj) {
        cJSON_AddNumberToObject(gj, KG_RK_CEIL_M, ga.m);
        cJSON_AddNumberToObject(gj, KG_RK_CEIL_N, ga.n);
        cJSON_AddNumberToObject(gj, KG_RK_CEIL_K, ga.k);
        cJSON_AddNumberToObject(gj, KG_RK_CEIL_TFLOPS, c->gemm_tflops);
        cJSON_AddStringToObject(gj, KG_RK_CEIL_INPUTS, "random bf16 in [-1, 1)");
        cJSON_AddItemToObject(c->detail, KG_RK_CEIL_GEMM, gj);
        KG_TRY(ceil_gemm_kernels(gj, &ga, x->s));
    }
cleanup:
    if (ga.h)
        (void)cublasDestroy(ga.h);
    (void)cudaStreamSynchronize(x->s);
    (void)cudaFree(ga.a);
    (void)cudaFree(ga.b);
    (void)cudaFree(ga.c);
    (void)cudaFree(ws);
    return rc;
}

int kg_bench_measure_ceilings(kg_bench_ceilings *c, kg_bench_env *env, uint64_t seed,
                              const kg_bench_opts *o)
{
    int rc = 0;
    size_t total_b = 0;
    ceil_ctx x = { .env = env, .warmup_min_s = o->warmup_min_s, .seed = seed };
    memset(c, 0, sizeof *c);
    if (!(c->detail = cJSON_CreateObject()))
        return KG_ERR(KG_ENOMEM, "out of memory");
    KG_CUDA_CHECK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
    KG_CUDA_CHECK(cudaMalloc((void **)&x.probe_dev, 2 * sizeof *x.probe_dev));
    KG_CUDA_CHECK(cudaMallocHost((void **)&x.probe_host, 2 * sizeof *x.probe_host));
    KG_CUDA_CHECK(cudaMemGetInfo(&x.free_b, &total_b));
    KG_TRY(ceil_copy(c, &x));
    KG_TRY(ceil_gemm(c, &x));
cleanup:
    (void)cudaFree(x.probe_dev);
    if (x.probe_host)
        (void)cudaFreeHost(x.probe_host);
    if (x.s)
        (void)cudaStreamDestroy(x.s);
    return rc;
}
