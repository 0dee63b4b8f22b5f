/* kernel_speed: a developer's stopwatch for the reference kernels (not a gate; `kgate bench`
 * is the gate). Times every registered case whose id contains one of the arguments, plus the
 * two ceilings in the same process: a 1 GiB device-to-device copy (bytes read + written) and
 * cuBLAS bf16 GEMM at 8192^3. CUDA events around each launch, 3 warm-ups, median of 30,
 * inputs from each case's own setup (random, seeded). Build: cmake --build <dir> --target kgate_kernel_speed; run <dir>/kernels/kgate_kernel_speed [id substrings].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "cases.h"
#include "cublas_util.h"
#include "softmax_impl.cuh"
#include "rmsnorm_impl.cuh"

extern "C" int kg_reference_cases_register(kg_registry *reg);

#define WARMUP 3
#define SAMPLES 30

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(4);                                                                           \
        }                                                                                      \
    } while (0)

typedef int (*launch_fn)(void *ctx, cudaStream_t s);

struct stat3 {
    double med, lo, hi;
};

static stat3 time_it(launch_fn fn, void *ctx, cudaStream_t s)
{
    std::vector<double> t;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < WARMUP + SAMPLES; i++) {
        CK(cudaEventRecord(a, s));
        if (fn(ctx, s) != 0) {
            fprintf(stderr, "launch failed: %s\n", kg_error_last());
            exit(4);
        }
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= WARMUP)
            t.push_back(ms * 1e3);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return { t[t.size() / 2], t.front(), t.back() };
}

struct copy_ctx {
    void *dst, *src;
    size_t bytes;
};
static int copy_launch(void *c, cudaStream_t s)
{
    copy_ctx *x = (copy_ctx *)c;
    return cudaMemcpyAsync(x->dst, x->src, x->bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess
               ? 0
               : -1;
}
struct case_ctx {
    const kg_case_desc *d;
    void *state;
};
static int case_launch(void *c, cudaStream_t s)
{
    case_ctx *x = (case_ctx *)c;
    return x->d->launch(x->state, s);
}
static int cublas_launch(void *c, cudaStream_t s)
{
    kg_gemm_state *st = (kg_gemm_state *)c;
    (void)s;
    return kg_cublas_gemm_bf16_tn((cublasHandle_t)st->cublas, st->a, st->b, st->c_ref, st->m, st->n,
                                  st->k);
}

/* ---- variants that were tried (docs/measurements/h200-kernels.md): same device code as the library, other
 * knobs; each is timed like a case and compared with the shipped kernel's output. ---------- */

#define SMV(name, T, VEC, R, NR, KEEP)                                                             \
    __global__ void __launch_bounds__(KG_SOFTMAX_BLOCK) name(const T *x, T *y, int rows, int cols) \
    {                                                                                              \
        softmax_rows<T, VEC, R, NR, KEEP>(x, y, rows, cols);                                       \
    }
SMV(sm_bf16_nr1_keep, uint16_t, 8, 2, 1, true)
SMV(sm_bf16_nr2_keep, uint16_t, 8, 2, 2, true)
SMV(sm_bf16_nr2_recompute, uint16_t, 8, 2, 2, false)
SMV(sm_bf16_nr4_recompute, uint16_t, 8, 2, 4, false)
SMV(sm_bf16_nr1_recompute, uint16_t, 8, 2, 1, false)
SMV(sm_f32_nr1_keep, float, 4, 4, 1, true)
SMV(sm_f32_nr1_recompute, float, 4, 4, 1, false)
SMV(sm_f32_nr2_recompute, float, 4, 4, 2, false)

/* The original two-pass rmsnorm (row re-read from L2), one row per block. */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK)
    rms_two_pass(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows, int cols, float eps)
{
    (void)rows;
    rmsnorm_row(x, w, y, blockIdx.x, cols, eps);
}
/* Register path without the min-blocks cap (40 registers, 6 blocks/SM). */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK)
    rms_regs_uncapped(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows, int cols,
                      float eps)
{
    (void)rows;
    rmsnorm_rows<4>(x, w, y, cols, eps);
}
/* Rows of up to KG_RMSNORM_BLOCK * R 16-byte vectors (cols <= 8192 for R = 4, cols % 8 == 0)
 * stay in registers: one DRAM read per element (gamma, 16 KiB at most, is re-read from L2 for
 * each row: caching it in registers too cost 94 registers and 2 blocks/SM instead of 64 and
 * 4, and the spare registers buy more rows in flight). The block loads its next
 * row before reducing the current one (a load always in flight behind the barrier). The two
 * reduction buffers alternate by row: a fast warp writing row r+1's sums cannot clobber the
 * values a slow warp is still reading for row r. */
template <int R>
static __device__ __forceinline__ void var_rmsnorm_persistent(const uint16_t *__restrict__ x,
                                                              const uint16_t *__restrict__ w,
                                                              uint16_t *__restrict__ y, int rows,
                                                              int cols, float eps)
{
    __shared__ float sh[2][KG_RMSNORM_BLOCK / 32];
    const int nvec = cols / 8;
    const uint4 *x8 = reinterpret_cast<const uint4 *>(x);
    const uint4 *w8 = reinterpret_cast<const uint4 *>(w);
    uint4 *y8 = reinterpret_cast<uint4 *>(y);
    uint4 cur[R], nxt[R];
    int row = blockIdx.x;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int i = threadIdx.x + r * KG_RMSNORM_BLOCK;
        if (i < nvec)
            cur[r] = x8[(size_t)row * nvec + i];
    }
    for (int par = 0; row < rows; row += gridDim.x, par ^= 1) {
        const int next = row + gridDim.x;
        if (next < rows) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int i = threadIdx.x + r * KG_RMSNORM_BLOCK;
                if (i < nvec)
                    nxt[r] = x8[(size_t)next * nvec + i];
            }
        }
        /* fp32 sum of squares, per thread in column order, then the fixed block tree. */
        float ss = 0.0f;
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (threadIdx.x + r * KG_RMSNORM_BLOCK < nvec) {
                float f[8];
                kg_unpack8(cur[r], f);
#pragma unroll
                for (int j = 0; j < 8; j++)
                    ss = fmaf(f[j], f[j], ss);
            }
        }
        ss = kg_block_allsum<KG_RMSNORM_BLOCK>(ss, sh[par]);
        const float rstd = rsqrtf(ss / (float)cols + eps);
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = threadIdx.x + r * KG_RMSNORM_BLOCK;
            if (i < nvec) {
                float f[8], gf[8];
                kg_unpack8(cur[r], f);
                kg_unpack8(w8[i], gf);
#pragma unroll
                for (int j = 0; j < 8; j++)
                    f[j] = (f[j] * rstd) * gf[j];
                y8[(size_t)row * nvec + i] = kg_pack8(f);
            }
            cur[r] = nxt[r];
        }
    }
}

/* Persistent: one resident wave looping over rows with a register prefetch of the next row. */
__global__ void __launch_bounds__(KG_RMSNORM_BLOCK, 3)
    rms_persistent(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows, int cols, float eps)
{
    var_rmsnorm_persistent<4>(x, w, y, rows, cols, eps);
}

struct var_ctx {
    const void *fn;
    int grid, rows, cols;
    void *x, *y, *w;
    float eps;
    bool rms;
};
static int var_launch(void *c, cudaStream_t s)
{
    var_ctx *v = (var_ctx *)c;
    void *args_sm[] = { &v->x, &v->y, &v->rows, &v->cols };
    void *args_rms[] = { &v->x, &v->w, &v->y, &v->rows, &v->cols, &v->eps };
    return cudaLaunchKernel(v->fn, dim3(v->grid), dim3(256), v->rms ? args_rms : args_sm, 0, s) ==
                   cudaSuccess
               ? 0
               : -1;
}
static int resident_grid(const void *fn, int rows)
{
    int sms = 0, per = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, 256, 0));
    return sms * per < rows ? sms * per : rows;
}

/* Time variant `fn` on (x -> y) and compare y with `ref` (the shipped kernel's output). */
static void run_variant(const char *label, var_ctx v, const void *ref, size_t out_bytes,
                        double bytes, double copy_bw, cudaStream_t s)
{
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, v.fn));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, v.fn, 256, 0));
    CK(cudaMemsetAsync(v.y, 0xff, out_bytes, s));
    stat3 t = time_it(var_launch, &v, s);
    std::vector<unsigned char> a(out_bytes), b(out_bytes);
    CK(cudaMemcpy(a.data(), v.y, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), ref, out_bytes, cudaMemcpyDeviceToHost));
    const double tbs = bytes / (t.med * 1e-6) / 1e12;
    printf("  %-40s %8.1f us (%7.1f..%7.1f) %6.3f TB/s %5.1f%% of copy  regs %3d  %d blk/SM  %s\n",
           label, t.med, t.lo, t.hi, tbs, 100.0 * tbs / copy_bw, fa.numRegs, per,
           memcmp(a.data(), b.data(), out_bytes) == 0 ? "same bits as shipped" : "BITS DIFFER");
}

static void variants(double copy_bw, cudaStream_t s)
{
    kg_rng rng;
    printf("variants (same timing; output compared with the shipped kernel's):\n");
    { /* softmax bf16 32768 x 4096 */
        const int rows = 32768, cols = 4096;
        const size_t n = (size_t)rows * cols;
        std::vector<uint16_t> h(n);
        kg_rng_seed(&rng, 0x5eed, 7);
        kg_rng_fill_bf16(&rng, h.data(), n, -5.0f, 5.0f);
        uint16_t *x, *y, *ref;
        CK(cudaMalloc(&x, n * 2));
        CK(cudaMalloc(&y, n * 2));
        CK(cudaMalloc(&ref, n * 2));
        CK(cudaMemcpy(x, h.data(), n * 2, cudaMemcpyHostToDevice));
        if (kg_softmax_bf16_launch(x, ref, rows, cols, s) != 0)
            exit(4);
        CK(cudaStreamSynchronize(s));
        const double bytes = 4.0 * n;
        struct {
            const char *l;
            const void *f;
            int nr;
        } vs[] = {
            { "softmax bf16 nr=1 keep-exp", (const void *)sm_bf16_nr1_keep, 1 },
            { "softmax bf16 nr=2 keep-exp", (const void *)sm_bf16_nr2_keep, 2 },
            { "softmax bf16 nr=2 recompute-exp", (const void *)sm_bf16_nr2_recompute, 2 },
            { "softmax bf16 nr=4 recompute-exp", (const void *)sm_bf16_nr4_recompute, 4 },
            { "softmax bf16 nr=1 recompute-exp", (const void *)sm_bf16_nr1_recompute, 1 },
        };
        for (auto &e : vs) {
            var_ctx v = { e.f, (rows + e.nr - 1) / e.nr, rows, cols, x, y, NULL, 0.0f, false };
            run_variant(e.l, v, ref, n * 2, bytes, copy_bw, s);
        }
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(ref));
    }
    { /* softmax f32 16384 x 4096 */
        const int rows = 16384, cols = 4096;
        const size_t n = (size_t)rows * cols;
        std::vector<float> h(n);
        kg_rng_seed(&rng, 0x5eed, 8);
        kg_rng_fill_f32(&rng, h.data(), n, -5.0f, 5.0f);
        float *x, *y, *ref;
        CK(cudaMalloc(&x, n * 4));
        CK(cudaMalloc(&y, n * 4));
        CK(cudaMalloc(&ref, n * 4));
        CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
        if (kg_softmax_f32_launch(x, ref, rows, cols, s) != 0)
            exit(4);
        CK(cudaStreamSynchronize(s));
        struct {
            const char *l;
            const void *f;
            int nr;
        } vs[] = {
            { "softmax f32 nr=1 keep-exp", (const void *)sm_f32_nr1_keep, 1 },
            { "softmax f32 nr=1 recompute-exp", (const void *)sm_f32_nr1_recompute, 1 },
            { "softmax f32 nr=2 recompute-exp", (const void *)sm_f32_nr2_recompute, 2 },
        };
        for (auto &e : vs) {
            var_ctx v = { e.f, (rows + e.nr - 1) / e.nr, rows, cols, x, y, NULL, 0.0f, false };
            run_variant(e.l, v, ref, n * 4, 8.0 * n, copy_bw, s);
        }
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(ref));
    }
    { /* rmsnorm bf16 16384 x 8192 */
        const int rows = 16384, cols = 8192;
        const size_t n = (size_t)rows * cols;
        std::vector<uint16_t> h(n);
        kg_rng_seed(&rng, 0x5eed, 9);
        kg_rng_fill_bf16(&rng, h.data(), n, -2.0f, 2.0f);
        uint16_t *x, *y, *ref, *w;
        CK(cudaMalloc(&x, n * 2));
        CK(cudaMalloc(&y, n * 2));
        CK(cudaMalloc(&ref, n * 2));
        CK(cudaMalloc(&w, cols * 2));
        CK(cudaMemcpy(x, h.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(w, h.data() + 12345, cols * 2, cudaMemcpyHostToDevice));
        const float eps = 1e-6f;
        if (kg_rmsnorm_launch(x, w, ref, rows, cols, eps, s) != 0)
            exit(4);
        CK(cudaStreamSynchronize(s));
        const double bytes = 4.0 * n + 2.0 * cols;
        var_ctx a = { (const void *)rms_two_pass, rows, rows, cols, x, y, w, eps, true };
        run_variant("rmsnorm two-pass (L2 re-read)", a, ref, n * 2, bytes, copy_bw, s);
        var_ctx b = { (const void *)rms_regs_uncapped, rows, rows, cols, x, y, w, eps, true };
        run_variant("rmsnorm registers, uncapped", b, ref, n * 2, bytes, copy_bw, s);
        var_ctx c = { (const void *)rms_persistent,
                      resident_grid((const void *)rms_persistent, rows),
                      rows,
                      cols,
                      x,
                      y,
                      w,
                      eps,
                      true };
        run_variant("rmsnorm persistent + prefetch", c, ref, n * 2, bytes, copy_bw, s);
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(ref));
        CK(cudaFree(w));
    }
}

int main(int argc, char **argv)
{
    kg_registry *reg = NULL;
    cudaStream_t s;
    cudaDeviceProp prop;
    int drv = 0, dev = 0;
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop, dev));
    CK(cudaDriverGetVersion(&drv));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("device: %s, sm_%d%d, %d SMs, driver API %d, L2 %d MiB\n", prop.name, prop.major,
           prop.minor, prop.multiProcessorCount, drv, prop.l2CacheSize >> 20);
    printf("timing: CUDA events per launch, %d warm-up, median of %d (min..max)\n", WARMUP,
           SAMPLES);

    /* Ceiling 1: device-to-device copy of 1 GiB. */
    copy_ctx cc = { NULL, NULL, (size_t)1 << 30 };
    CK(cudaMalloc(&cc.dst, cc.bytes));
    CK(cudaMalloc(&cc.src, cc.bytes));
    CK(cudaMemset(cc.src, 0x3c, cc.bytes));
    stat3 ct = time_it(copy_launch, &cc, s);
    const double copy_bw = 2.0 * cc.bytes / (ct.med * 1e-6) / 1e12;
    printf("%-44s %10.1f us (%8.1f..%8.1f)  %7.3f TB/s  [ceiling]\n", "d2d_copy/1GiB", ct.med,
           ct.lo, ct.hi, copy_bw);
    CK(cudaFree(cc.dst));
    CK(cudaFree(cc.src));

    if (kg_registry_new(&reg) != 0 || kg_reference_cases_register(reg) != 0) {
        fprintf(stderr, "registry: %s\n", kg_error_last());
        return 4;
    }
    printf("gemm_bf16 wgmma path available: %d\n", kg_gemm_bf16_wgmma_available());
    double cublas_tflops = 0;
    for (size_t i = 0; i < kg_registry_count(reg); i++) {
        const kg_case_desc *d = kg_registry_get(reg, i);
        bool want = argc < 2;
        for (int a = 1; a < argc; a++)
            want = want || strstr(d->id, argv[a]) != NULL;
        if (!want)
            continue;
        kg_setup_args sa;
        kg_case_io io;
        memset(&sa, 0, sizeof sa);
        memset(&io, 0, sizeof io);
        sa.seed = 0x5eed0000u + i;
        sa.params = d->params;
        sa.stream = s;
        sa.device = dev;
        case_ctx x = { d, NULL };
        if (d->setup(&sa, &x.state, &io) != 0) {
            fprintf(stderr, "%s: setup: %s\n", d->id, kg_error_last());
            return 4;
        }
        CK(cudaStreamSynchronize(s));
        stat3 t = time_it(case_launch, &x, s);
        const double tbs = d->bytes_moved / (t.med * 1e-6) / 1e12;
        const double tfl = d->flops / (t.med * 1e-6) / 1e12;
        if (d->flops > 0 && strcmp(d->op, "gemm_bf16") == 0) {
            kg_gemm_state *st = (kg_gemm_state *)x.state;
            const char *path = kg_gemm_bf16_wgmma_available() &&
                                       kg_gemm_bf16_wgmma_fits(st->m, st->n, st->k)
                                   ? "wgmma"
                                   : "mma.sync";
            printf("%-44s %10.1f us (%8.1f..%8.1f)  %7.1f TFLOP/s  [%s]\n", d->id, t.med, t.lo,
                   t.hi, tfl, path);
            if (st->m == 8192 && st->n == 8192 && st->k == 8192) {
                if (kg_cublas_bind((cublasHandle_t)st->cublas, s, st->workspace,
                                   st->workspace_bytes) != 0)
                    return 4;
                stat3 ctb = time_it(cublas_launch, st, s);
                cublas_tflops = d->flops / (ctb.med * 1e-6) / 1e12;
                printf("%-44s %10.1f us (%8.1f..%8.1f)  %7.1f TFLOP/s  [ceiling]  ours = %.1f%%\n",
                       "cublas_gemm_bf16/8192^3", ctb.med, ctb.lo, ctb.hi, cublas_tflops,
                       100.0 * tfl / cublas_tflops);
            }
        } else if (d->flops > 0) {
            printf("%-44s %10.1f us (%8.1f..%8.1f)  %7.1f TFLOP/s\n", d->id, t.med, t.lo, t.hi,
                   tfl);
        } else {
            printf("%-44s %10.1f us (%8.1f..%8.1f)  %7.3f TB/s  %5.1f%% of copy\n", d->id, t.med,
                   t.lo, t.hi, tbs, 100.0 * tbs / copy_bw);
        }
        fflush(stdout);
        d->teardown(x.state);
    }
    kg_registry_free(reg);
    if (getenv("KG_SPEED_VARIANTS"))
        variants(copy_bw, s);
    CK(cudaStreamDestroy(s));
    return 0;
}
