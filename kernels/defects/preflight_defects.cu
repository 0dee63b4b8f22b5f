/* Planted resource defects for the preflight gate (expect_gate = "preflight"). Each is an axpy
 * (out = a*x + y, the reference case's setup, reference and teardown) written with exactly one
 * resource problem; parity is beside the point, the kernels' resources are the defect:
 *   (1) a local array indexed at run time: the array lives in local memory;
 *   (2) a register cap (__launch_bounds__ min blocks) below what the kernel needs: spills;
 *   (3) static shared memory that grew: blocks/SM fall below the baseline entry recorded for it
 *       (tests/data/preflight_defects_baseline.json, not the reference baseline);
 *   (4) an allowlisted spiller whose local memory changed (tests/data/
 *       preflight_defects_allowlist.json records an older byte count);
 *   (5) a kernel declared __launch_bounds__(128) and launched with 256 threads.
 * The defect runner defaults to those two fixtures (kg_preflight_defects_register). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../cases.h"
#include "../axpy_impl.cuh"

#define PF_BLOCK 256
#define PF_LOCAL_N 16
#define PF_LIVE 48           /* values kept live at once: far more than 32 registers hold */
#define PF_SMEM_FLOATS 10240 /* 40 KiB of static shared memory per block */

/* (1) DEFECT: t[] is indexed with a run-time value, so it cannot live in registers. */
__global__ void __launch_bounds__(PF_BLOCK)
    defect_preflight_local_array_kernel(float a, const float *__restrict__ x,
                                        const float *__restrict__ y, float *__restrict__ out,
                                        size_t n, int pick)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float t[PF_LOCAL_N];
#pragma unroll
    for (int j = 0; j < PF_LOCAL_N; j++)
        t[j] = x[(i + (size_t)j) % n];
    out[i] = fmaf(a, t[pick & (PF_LOCAL_N - 1)], y[i]); /* pick is 0: t[0] == x[i] */
}

/* Register pressure shared by (2) and (4): PF_LIVE values stay live across the loop. */
__device__ __forceinline__ float pf_pressure(const float *__restrict__ x, size_t i, size_t n)
{
    float v[PF_LIVE];
#pragma unroll
    for (int j = 0; j < PF_LIVE; j++)
        v[j] = x[(i + (size_t)j * 97) % n];
#pragma unroll
    for (int r = 0; r < 4; r++) {
#pragma unroll
        for (int j = 0; j < PF_LIVE; j++)
            v[j] = fmaf(v[j], v[(j + 1) % PF_LIVE], v[(j + 7) % PF_LIVE]);
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < PF_LIVE; j++)
        s += v[j];
    return s;
}

/* (2) DEFECT: 8 resident blocks of 256 threads demanded, so ptxas caps the kernel at
 * 65536 / 2048 = 32 registers/thread and it spills to local memory. */
__global__ void __launch_bounds__(PF_BLOCK, 8)
    defect_preflight_spill_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                                  float *__restrict__ out, size_t n, int pick)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float s = pf_pressure(x, i, n);
    out[i] = pick ? s : fmaf(a, x[i], y[i]); /* pick is 0: the axpy result */
}

/* (4) The same spiller under a __maxnreg__ cap, on the test allowlist with an older byte
 * count: DEFECT is the change. */
__global__ void __maxnreg__(40)
    defect_preflight_spill_changed_kernel(float a, const float *__restrict__ x,
                                          const float *__restrict__ y, float *__restrict__ out,
                                          size_t n, int pick)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float s = pf_pressure(x, i, n);
    out[i] = pick ? s : fmaf(a, x[i], y[i]);
}

/* (3) DEFECT: a 40 KiB staging tile (it was 4 KiB when the baseline entry was recorded). */
__global__ void __launch_bounds__(PF_BLOCK)
    defect_preflight_smem_grew_kernel(float a, const float *__restrict__ x,
                                      const float *__restrict__ y, float *__restrict__ out,
                                      size_t n, int pick)
{
    __shared__ float tile[PF_SMEM_FLOATS];
    const size_t base = (size_t)blockIdx.x * blockDim.x;
    for (int j = threadIdx.x; j < PF_SMEM_FLOATS; j += blockDim.x)
        tile[j] = x[(base + (size_t)j) % n];
    __syncthreads();
    const size_t i = base + threadIdx.x;
    if (i < n)
        out[i] = fmaf(a, tile[threadIdx.x + (pick & 1) * PF_BLOCK], y[i]); /* pick is 0 */
}

/* (5) The reference axpy body under a __launch_bounds__ policy. DEFECT (pf_bounds_short):
 * declared for 128 threads, launched (axpy_launch_with) with KG_AXPY_BLOCK = 256, so the
 * launch fails; the clean twin (pf_bounds_fit) declares 256. */
struct pf_bounds_fit {
    static constexpr int kMaxThreads = KG_AXPY_BLOCK;
};
struct pf_bounds_short {
    static constexpr int kMaxThreads = KG_AXPY_BLOCK / 2;
};

template <class P>
__global__ void __launch_bounds__(P::kMaxThreads)
    pf_launch_bounds_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                            float *__restrict__ out, size_t n)
{
    axpy_body<axpy_ref_policy>(a, x, y, out, n);
}

template <class P> static int pf_bounds_launch(void *state, cudaStream_t s)
{
    const kg_axpy_state *st = (const kg_axpy_state *)state;
    return axpy_launch_with(pf_launch_bounds_kernel<P>, st->a, st->x, st->y, st->out, st->n, s);
}

typedef void (*pf_kernel)(float, const float *, const float *, float *, size_t, int);

static int pf_launch(pf_kernel k, void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *st = (kg_axpy_state *)state;
    const unsigned grid = (unsigned)kg_ceil_div(st->n, PF_BLOCK);
    k<<<grid, PF_BLOCK, 0, s>>>(st->a, st->x, st->y, st->out, st->n, 0);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int pf_local_launch(void *st, cudaStream_t s)
{
    return pf_launch(defect_preflight_local_array_kernel, st, s);
}
static int pf_spill_launch(void *st, cudaStream_t s)
{
    return pf_launch(defect_preflight_spill_kernel, st, s);
}
static int pf_smem_launch(void *st, cudaStream_t s)
{
    return pf_launch(defect_preflight_smem_grew_kernel, st, s);
}
static int pf_changed_launch(void *st, cudaStream_t s)
{
    return pf_launch(defect_preflight_spill_changed_kernel, st, s);
}

static const kg_kernel_ref pf_local_k[] = { KG_KERNEL(defect_preflight_local_array_kernel, PF_BLOCK,
                                                      0) };
static const kg_kernel_ref pf_spill_k[] = { KG_KERNEL(defect_preflight_spill_kernel, PF_BLOCK, 0) };
static const kg_kernel_ref pf_smem_k[] = { KG_KERNEL(defect_preflight_smem_grew_kernel, PF_BLOCK,
                                                     0) };
static const kg_kernel_ref pf_changed_k[] = { KG_KERNEL(defect_preflight_spill_changed_kernel,
                                                        PF_BLOCK, 0) };

static const kg_kernel_ref pf_bounds_short_k[] = {
    KG_KERNEL(pf_launch_bounds_kernel<pf_bounds_short>, KG_AXPY_BLOCK, 0)
};
static const kg_kernel_ref pf_bounds_fit_k[] = { KG_KERNEL(pf_launch_bounds_kernel<pf_bounds_fit>,
                                                           KG_AXPY_BLOCK, 0) };

static const kg_axpy_params pf_p = { 4097 };

#define PF_CASE(id_, launch_, syms_, reason_)                                                    \
    {                                                                                            \
        id_, "axpy", &pf_p, kg_axpy_setup, launch_, kg_axpy_reference, kg_axpy_teardown,         \
            KG_DTYPE_F64, "cpu-f64", KG_PARITY_TOLERANCE_INIT(1e-5, 1e-6, 0.99999), 12.0 * 4097, \
            2.0 * 4097, syms_, 1, 0, NULL, "preflight", reason_                                  \
    }

static const kg_case_desc pf_cases[] = {
    PF_CASE("defect/preflight/local_array/n=4097/f32", pf_local_launch, pf_local_k,
            "local memory:"),
    PF_CASE("defect/preflight/maxnreg_spill/n=4097/f32", pf_spill_launch, pf_spill_k,
            "local memory:"),
    PF_CASE("defect/preflight/smem_grew/n=4097/f32", pf_smem_launch, pf_smem_k,
            "blocks/SM dropped"),
    PF_CASE("defect/preflight/allowlisted_spill_changed/n=4097/f32", pf_changed_launch,
            pf_changed_k, "local memory changed"),
    PF_CASE("defect/preflight/launch_bounds/n=4097/f32", pf_bounds_launch<pf_bounds_short>,
            pf_bounds_short_k, "launch bounds exceeded"),
    /* The clean twin of (5): every gate passes it (in the test baseline). */
    { "clean/preflight/launch_bounds/n=4097/f32", "axpy", &pf_p, kg_axpy_setup,
      pf_bounds_launch<pf_bounds_fit>, kg_axpy_reference, kg_axpy_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_AXPY_PARITY, 12.0 * 4097, 2.0 * 4097, pf_bounds_fit_k, 1 },
};

/* Defects (3) and (4) are defects only against their fixtures (the baseline entry and the
 * allowlist entry they drifted from), so the defect runner defaults to those files: any
 * `kgate-defects preflight` (the selftest, a GPU session) judges them as intended. A caller's
 * --baseline/--allowlist or environment still wins. Installed runners find the fixtures in
 * <prefix>/share/kgate/defects (cmake/kgateInstall.cmake); in-tree ones in tests/data. */
static void pf_default_fixture(const char *env, const char *file)
{
    static const char self[] = "kernels/defects/preflight_defects.cu";
    char path[4200], exe[4000];
    if (getenv(env))
        return;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/../share/kgate/defects/%s", exe, file);
            if (access(path, R_OK) == 0 && setenv(env, path, 0) == 0)
                return;
        }
    }
    const char *cut = strstr(__FILE__, self);
    if (!cut)
        return;
    snprintf(path, sizeof path, "%.*stests/data/%s", (int)(cut - __FILE__), __FILE__, file);
    if (access(path, R_OK) == 0)
        setenv(env, path, 0);
}

extern "C" int kg_preflight_defects_register(kg_registry *reg)
{
    pf_default_fixture("KGATE_RESOURCE_BASELINE", "preflight_defects_baseline.json");
    pf_default_fixture("KGATE_SPILL_ALLOWLIST", "preflight_defects_allowlist.json");
    return kg_registry_add_all(reg, pf_cases, sizeof pf_cases / sizeof pf_cases[0]);
}
