/* Planted hot-path defects: each case is a real launcher with exactly ONE production-hot-path
 * bug; the hotpath gate must FAIL it, and its message must contain .expect_reason. Most reuse
 * the axpy case's setup/reference/teardown (so parity still passes) and differ only in what
 * launch() does around the reference axpy kernel's code (hp_axpy_kernel).
 *
 * One case is informational, not a defect: the cuBLAS GEMM of cublas_gemm.cu WITHOUT a
 * preset workspace (.expect_reason = "observe"): the gate reports whatever cuBLAS really
 * does there (allocations, syncs, or nothing).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../cases.h"
#include "../common.cuh"
#include "../axpy_impl.cuh"

extern "C" int kg_hotpath_defects_register(kg_registry *reg);

/* ---- shared: axpy kernel + wrapped axpy state ------------------------------------------- */

#define HP_BLOCK 256

/* The reference axpy (axpy_impl.cuh, reference policy) under its own name, so the gate's
 * reports tell these cases apart: the defects are in what launch() does around it. */
__global__ void __launch_bounds__(KG_AXPY_BLOCK)
    hp_axpy_kernel(float a, const float *__restrict__ x, const float *__restrict__ y,
                   float *__restrict__ out, size_t n)
{
    axpy_body<axpy_ref_policy>(a, x, y, out, n);
}

/* x, y, out 16-byte aligned (the unjoined defect splits at a multiple of 4 elements). */
static int hp_axpy(float a, const float *x, const float *y, float *out, size_t n, cudaStream_t s)
{
    return axpy_launch_with(hp_axpy_kernel, a, x, y, out, n, s);
}

typedef struct {
    kg_axpy_state *ax;
    cudaStream_t s2;     /* unjoined-stream defect */
    cudaEvent_t ev;      /* event-sync and fork events */
    float *pinned;       /* D2H defect target */
    float *pong;         /* writes-nothing defect: the buffer it writes instead of out */
    float4 *mirror_host; /* mapped host mirror (cudaHostAllocMapped) and its device view */
    float4 *mirror_hdev;
    float4 *mirror_dev; /* the clean twin's mirror: device memory */
    float *x_managed;   /* managed copy of x, rewritten by the host in prepare() */
    float *x_keep;      /* the host's copy of x it rewrites it from */
    void **leaked;      /* malloc defect: every per-launch allocation, freed at teardown */
    size_t n_leaked, cap_leaked;
} hp_axpy_state;

static const kg_axpy_params hp_axpy_p = { (size_t)1 << 16 };

static void hp_axpy_teardown(void *state)
{
    hp_axpy_state *st = (hp_axpy_state *)state;
    if (!st)
        return;
    if (st->s2) {
        cudaStreamSynchronize(st->s2);
        cudaStreamDestroy(st->s2);
    }
    if (st->ev)
        cudaEventDestroy(st->ev);
    cudaFreeHost(st->pinned);
    cudaFree(st->pong);
    cudaFreeHost(st->mirror_host);
    cudaFree(st->mirror_dev);
    cudaFree(st->x_managed);
    free(st->x_keep);
    for (size_t i = 0; i < st->n_leaked; i++)
        cudaFree(st->leaked[i]);
    free(st->leaked);
    kg_axpy_teardown(st->ax);
    free(st);
}

static int hp_axpy_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    void *ax = NULL;
    hp_axpy_state *st = (hp_axpy_state *)calloc(1, sizeof(*st));
    if (!st)
        return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath defect: out of memory");
    KG_TRY(kg_axpy_setup(args, &ax, io));
    st->ax = (kg_axpy_state *)ax;
    /* Every defect gets the same extras; each launcher uses at most one of them. */
    KG_CUDA_CHECK(cudaStreamCreateWithFlags(&st->s2, cudaStreamNonBlocking));
    KG_CUDA_CHECK(cudaEventCreateWithFlags(&st->ev, cudaEventDisableTiming));
    KG_CUDA_CHECK(cudaMallocHost((void **)&st->pinned, sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->pong, st->ax->n * sizeof(float)));
    KG_CUDA_CHECK(cudaHostAlloc((void **)&st->mirror_host, sizeof(float4), cudaHostAllocMapped));
    KG_CUDA_CHECK(cudaHostGetDevicePointer((void **)&st->mirror_hdev, st->mirror_host, 0));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->mirror_dev, sizeof(float4)));
    KG_CUDA_CHECK(cudaMallocManaged((void **)&st->x_managed, st->ax->n * sizeof(float)));
    /* axpy keeps no host copy of x until its CPU reference first runs: take one here. */
    if (!(st->x_keep = (float *)malloc(st->ax->n * sizeof(float)))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath defect: out of memory");
        goto cleanup;
    }
    KG_CUDA_CHECK(
        cudaMemcpy(st->x_keep, st->ax->x, st->ax->n * sizeof(float), cudaMemcpyDeviceToHost));
    memcpy(st->x_managed, st->x_keep, st->ax->n * sizeof(float));
    *state = st;
    st = NULL;
cleanup:
    hp_axpy_teardown(st);
    return rc;
}

static int hp_axpy_reference(void *state, cudaStream_t stream, void *ref_host)
{
    return kg_axpy_reference(((hp_axpy_state *)state)->ax, stream, ref_host);
}

#define AX(st) ((st)->ax)

/* DEFECT: a fresh device scratch per call (cached "for later", freed only at teardown). */
static int hp_launch_malloc(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    float *tmp = NULL;
    if (st->n_leaked == st->cap_leaked) {
        size_t cap = st->cap_leaked ? 2 * st->cap_leaked : 64;
        void **nl = (void **)realloc(st->leaked, cap * sizeof(void *));
        if (!nl)
            return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath defect: out of memory");
        st->leaked = nl;
        st->cap_leaked = cap;
    }
    KG_CUDA_CHECK(cudaMalloc((void **)&tmp, a->n * sizeof(float)));
    st->leaked[st->n_leaked++] = tmp;
    KG_TRY(hp_axpy(a->a, a->x, a->y, tmp, a->n, s));
    /* A device-to-device copy on the case stream is allowed: only cudaMalloc is the defect. */
    KG_CUDA_CHECK(cudaMemcpyAsync(a->out, tmp, a->n * sizeof(float), cudaMemcpyDeviceToDevice, s));
cleanup:
    return rc;
}

/* DEFECT: `cudaCheck`-style error handling: a fresh device scratch per call (an allocation in
 * the hot path) and exit(1) when a call fails, as much third-party code does. Eagerly every
 * call succeeds (the hotpath observes the cudaMalloc); inside the graph capture (global mode)
 * cudaMalloc is refused and the process exits: the observation must outlive the worker
 * (the evidence slot of core/phase.c, set by the CUPTI watch). */
#define HP_CUDA_OR_EXIT(expr)                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (expr);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int hp_launch_malloc_exit(void *state, cudaStream_t s)
{
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    float *tmp = NULL;
    HP_CUDA_OR_EXIT(cudaMalloc((void **)&tmp, a->n * sizeof(float)));
    axpy_launch_with(hp_axpy_kernel, a->a, a->x, a->y, tmp, a->n, s);
    HP_CUDA_OR_EXIT(cudaGetLastError());
    HP_CUDA_OR_EXIT(
        cudaMemcpyAsync(a->out, tmp, a->n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    HP_CUDA_OR_EXIT(cudaFree(tmp)); /* implicitly waits for the copy */
    return 0;
}

/* DEFECT: the result goes to the ping-pong buffer and the swap was forgotten: the launch never
 * writes the output, which stays poisoned. Every comparison then compares poison with poison
 * and cannot fail: the hotpath must refuse to pass it (ERROR, vacuous), not call it
 * deterministic. */
static int hp_launch_pong(void *state, cudaStream_t s)
{
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    return hp_axpy(a->a, a->x, a->y, st->pong, a->n, s);
}

/* A "host-visible mirror" of the first four outputs: one 16-byte store by thread 0. */
__global__ void __launch_bounds__(32)
    hp_mirror_kernel(const float *__restrict__ out, float4 *__restrict__ mirror)
{
    if (threadIdx.x == 0)
        *mirror = make_float4(out[0], out[1], out[2], out[3]);
}

static int hp_axpy_mirror(hp_axpy_state *st, float4 *mirror, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX(st);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    hp_mirror_kernel<<<1, 32, 0, s>>>(a->out, mirror);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* DEFECT: the mirror is mapped host memory (cudaHostAllocMapped + cudaHostGetDevicePointer):
 * every launch stores over the bus. No API call shows it; the kernel's argument does. */
static int hp_launch_mapped_mirror(void *state, cudaStream_t s)
{
    hp_axpy_state *st = (hp_axpy_state *)state;
    return hp_axpy_mirror(st, st->mirror_hdev, s);
}

/* The clean twin: the same kernels, the mirror in device memory. */
static int hp_launch_device_mirror(void *state, cudaStream_t s)
{
    hp_axpy_state *st = (hp_axpy_state *)state;
    return hp_axpy_mirror(st, st->mirror_dev, s);
}

/* DEFECT: x lives in managed memory and the host rewrites it before every launch (prepare):
 * each launch then migrates its pages back to the GPU (faults), invisible to the API table. */
static int hp_launch_managed(void *state, cudaStream_t s)
{
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    return hp_axpy(a->a, st->x_managed, a->y, a->out, a->n, s);
}

static int hp_managed_prepare(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_axpy_state *st = (hp_axpy_state *)state;
    KG_CUDA_CHECK(cudaStreamSynchronize(s)); /* no launch may still read x while it changes */
    memcpy(st->x_managed, st->x_keep, AX(st)->n * sizeof(float)); /* the host touch */
cleanup:
    return rc;
}

/* x through a device-global pointer (cudaMemcpyToSymbol in setup), not a kernel argument: the
 * argument check cannot see where it points, only CUPTI's unified-memory counters can. The
 * same kernel for the defect (managed x, rewritten by the host in prepare: every launch
 * migrates it back) and its clean twin (the device x). */
__device__ const float *hp_global_x;

__global__ void __launch_bounds__(KG_AXPY_BLOCK)
    hp_axpy_global_x_kernel(float a, const float *__restrict__ y, float *__restrict__ out, size_t n)
{
    axpy_body<axpy_ref_policy>(a, hp_global_x, y, out, n);
}

static int hp_launch_global_x(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    hp_axpy_global_x_kernel<<<kg_axpy_grid(a->n), KG_AXPY_BLOCK, 0, s>>>(a->a, a->y, a->out, a->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int hp_global_setup(const kg_setup_args *args, void **state, kg_case_io *io, bool managed)
{
    int rc = 0;
    hp_axpy_state *st = NULL;
    const float *x = NULL;
    KG_TRY(hp_axpy_setup(args, (void **)&st, io));
    x = managed ? st->x_managed : st->ax->x;
    KG_CUDA_CHECK(cudaMemcpyToSymbol(hp_global_x, &x, sizeof x));
    *state = st;
    st = NULL;
cleanup:
    hp_axpy_teardown(st);
    return rc;
}

static int hp_global_managed_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    return hp_global_setup(args, state, io, true);
}

static int hp_global_device_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    return hp_global_setup(args, state, io, false);
}

/* The reference axpy kernel at a launch configuration of the launcher's choosing: the two
 * launch-config defects declare KG_AXPY_BLOCK threads and no dynamic smem (hp_axpy_k) and
 * launch something else; the grid-stride loop computes the same output either way, so only the
 * declaration is wrong (the preflight's occupancy and the roofline were computed from it). */
static int hp_axpy_at(void *state, unsigned threads, size_t smem, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    hp_axpy_kernel<<<kg_axpy_grid(a->n), threads, smem, s>>>(a->a, a->x, a->y, a->out, a->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

/* DEFECT: half the declared block (a tuning change that never reached kernels[]). */
static int hp_launch_half_block(void *state, cudaStream_t s)
{
    return hp_axpy_at(state, KG_AXPY_BLOCK / 2, 0, s);
}

/* DEFECT: 1 KiB of dynamic shared memory per block, declared 0. */
static int hp_launch_undeclared_smem(void *state, cudaStream_t s)
{
    return hp_axpy_at(state, KG_AXPY_BLOCK, 1024, s);
}

/* DEFECT: stream-ordered temporary (graph-capturable, still an allocation per call). */
static int hp_launch_malloc_async(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    float *tmp = NULL;
    KG_CUDA_CHECK(cudaMallocAsync((void **)&tmp, a->n * sizeof(float), s));
    KG_TRY(hp_axpy(a->a, a->x, a->y, tmp, a->n, s));
    KG_CUDA_CHECK(cudaMemcpyAsync(a->out, tmp, a->n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    KG_CUDA_CHECK(cudaFreeAsync(tmp, s));
    tmp = NULL;
cleanup:
    if (tmp)
        (void)cudaFreeAsync(tmp, s);
    return rc;
}

/* DEFECT: the cudaFree(0) "make sure a context exists" idiom left in the hot path. */
static int hp_launch_free(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    KG_CUDA_CHECK(cudaFree(NULL));
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
cleanup:
    return rc;
}

/* DEFECT: waits for its own stream before returning. */
static int hp_launch_stream_sync(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
cleanup:
    return rc;
}

/* DEFECT: waits for the whole device. */
static int hp_launch_device_sync(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    KG_CUDA_CHECK(cudaDeviceSynchronize());
cleanup:
    return rc;
}

/* DEFECT: records a completion event and blocks the host on it. */
static int hp_launch_event_sync(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    KG_CUDA_CHECK(cudaEventRecord(st->ev, s));
    KG_CUDA_CHECK(cudaEventSynchronize(st->ev));
cleanup:
    return rc;
}

/* DEFECT: a "debug" copy of the first output element to (pinned) host memory. Async and
 * capturable, but a device->host transfer on every call. */
static int hp_launch_d2h(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    KG_CUDA_CHECK(cudaMemcpyAsync(st->pinned, a->out, sizeof(float), cudaMemcpyDeviceToHost, s));
cleanup:
    return rc;
}

/* DEFECT: the kernel goes to the legacy default stream (stream 0), not the given stream. */
static int hp_launch_stream0(void *state, cudaStream_t s)
{
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    (void)s;
    return hp_axpy(a->a, a->x, a->y, a->out, a->n, 0);
}

/* DEFECT: forks the second half onto a helper stream (event fork: correct) and never joins
 * it back (no event recorded on the helper and waited on by `s`): capture ends unjoined,
 * and eager callers may read the output before the second half is written. */
static int hp_launch_unjoined(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_axpy_state *st = (hp_axpy_state *)state;
    kg_axpy_state *a = AX(st);
    size_t half = (a->n / 2) & ~(size_t)3;
    KG_CUDA_CHECK(cudaEventRecord(st->ev, s));
    KG_CUDA_CHECK(cudaStreamWaitEvent(st->s2, st->ev, 0));
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, half, s));
    KG_TRY(hp_axpy(a->a, a->x + half, a->y + half, a->out + half, a->n - half, st->s2));
cleanup:
    return rc;
}

/* The clean twin of the defects below: the reference axpy launch and nothing else. */
static int hp_launch_clean(void *state, cudaStream_t s)
{
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    return hp_axpy(a->a, a->x, a->y, a->out, a->n, s);
}

static void CUDART_CB hp_host_noop(void *user) { (void)user; }

/* DEFECT: a host function enqueued after the kernel ("notify when done"): the stream waits
 * for a host thread there, capturable and on the right stream, still host work per call. */
static int hp_launch_host_func(void *state, cudaStream_t s)
{
    int rc = 0;
    kg_axpy_state *a = AX((hp_axpy_state *)state);
    KG_TRY(hp_axpy(a->a, a->x, a->y, a->out, a->n, s));
    KG_CUDA_CHECK(cudaLaunchHostFunc(s, hp_host_noop, NULL));
cleanup:
    return rc;
}

static const kg_kernel_ref hp_axpy_k[] = { KG_KERNEL(hp_axpy_kernel, KG_AXPY_BLOCK, 0) };
static const kg_kernel_ref hp_global_k[] = {
    KG_KERNEL(hp_axpy_global_x_kernel, KG_AXPY_BLOCK, 0),
};
static const kg_kernel_ref hp_mirror_k[] = { KG_KERNEL(hp_axpy_kernel, KG_AXPY_BLOCK, 0),
                                             KG_KERNEL(hp_mirror_kernel, 32, 0) };

/* ---- atomicAdd reduction (nondeterministic) ---------------------------------------------
 * out[j] = sum of x[i] over i % HP_BINS == j. Each thread sums 16 of its bin's elements and
 * atomically adds its partial: thousands of float atomics per bin arrive in an order that
 * changes from run to run, and with magnitudes spread over 2^-8..2^8 every order rounds
 * differently. DEFECT: order-dependent float atomics in the result. */
#define HP_BINS 64
#define HP_ATOMIC_PER_THREAD 16

__global__ void __launch_bounds__(HP_BLOCK)
    hp_atomic_sum_kernel(const float *__restrict__ x, float *__restrict__ out, size_t n)
{
    const size_t base = (size_t)blockIdx.x * HP_BLOCK * HP_ATOMIC_PER_THREAD + threadIdx.x;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < HP_ATOMIC_PER_THREAD; k++) {
        const size_t i = base + (size_t)k * HP_BLOCK;
        if (i < n)
            s += x[i];
    }
    atomicAdd(&out[threadIdx.x % HP_BINS], s); /* DEFECT */
}

/* ---- in-place accumulation: out[j] += sum of x[i] over i % HP_BINS == j -----------------
 * An accumulator: out is an input too, restored by prepare() from the pristine out0 before
 * every checked launch (poison first, then prepare: the kernel must start from out0, not from
 * NaN). The same per-thread partials as hp_atomic_sum_kernel; the policy parameter is how they
 * reach out: kOrdered = false, float atomics in arrival order (DEFECT: the accumulated value
 * depends on that order, so runs differ); kOrdered = true, the clean twin: each block reduces
 * its partials per bin in a fixed order into partials[block][bin], and one thread per bin adds
 * the blocks' partials in block order (hp_inplace_finish_kernel). Under the old order
 * (prepare, then poison) the defect ran on NaN and determinism compared NaN with NaN. */
template <bool kOrdered>
__global__ void __launch_bounds__(HP_BLOCK)
    hp_inplace_sum_kernel(const float *__restrict__ x, float *__restrict__ out,
                          float *__restrict__ partials, size_t n)
{
    __shared__ float sm[HP_BLOCK];
    const size_t base = (size_t)blockIdx.x * HP_BLOCK * HP_ATOMIC_PER_THREAD + threadIdx.x;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < HP_ATOMIC_PER_THREAD; k++) {
        const size_t i = base + (size_t)k * HP_BLOCK;
        if (i < n)
            s += x[i];
    }
    if (!kOrdered) {
        atomicAdd(&out[threadIdx.x % HP_BINS], s); /* DEFECT */
        return;
    }
    sm[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x < HP_BINS) {
        float b = 0.0f;
        for (int t = threadIdx.x; t < HP_BLOCK; t += HP_BINS)
            b += sm[t];
        partials[(size_t)blockIdx.x * HP_BINS + threadIdx.x] = b;
    }
}

__global__ void __launch_bounds__(HP_BINS)
    hp_inplace_finish_kernel(const float *__restrict__ partials, float *__restrict__ out,
                             unsigned blocks)
{
    float s = 0.0f;
    for (unsigned b = 0; b < blocks; b++)
        s += partials[(size_t)b * HP_BINS + threadIdx.x];
    out[threadIdx.x] += s;
}

typedef struct {
    size_t n;
    float *x, *out;
    float *x_host;
    float *out0, *partials; /* in-place cases: pristine out (prepare), the ordered partials */
    float *out0_host;
} hp_atomic_state;

static const kg_axpy_params hp_atomic_p = { (size_t)1 << 22 };

static void hp_atomic_teardown(void *state)
{
    hp_atomic_state *st = (hp_atomic_state *)state;
    if (!st)
        return;
    cudaFree(st->x);
    cudaFree(st->out);
    cudaFree(st->out0);
    cudaFree(st->partials);
    free(st->x_host);
    free(st->out0_host);
    free(st);
}

static unsigned hp_atomic_grid(size_t n)
{
    return (unsigned)kg_ceil_div(n, (size_t)HP_BLOCK * HP_ATOMIC_PER_THREAD);
}

static int hp_atomic_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const kg_axpy_params *p = (const kg_axpy_params *)args->params;
    kg_rng rng;
    hp_atomic_state *st = (hp_atomic_state *)calloc(1, sizeof(*st));
    if (!st || !(st->x_host = (float *)malloc(p->n * sizeof(float)))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath atomic: out of memory");
        goto cleanup;
    }
    st->n = p->n;
    /* Mantissa and sign from [-1, 1), exponent spread over 2^-8..2^8. */
    kg_rng_seed(&rng, args->seed, 1);
    kg_rng_fill_f32(&rng, st->x_host, st->n, -1.0f, 1.0f);
    for (size_t i = 0; i < st->n; i++)
        st->x_host[i] = ldexpf(st->x_host[i], (int)(kg_rng_next(&rng) % 17) - 8);
    KG_CUDA_CHECK(cudaMalloc((void **)&st->x, st->n * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->out, HP_BINS * sizeof(float)));
    KG_CUDA_CHECK(cudaMemcpyAsync(st->x, st->x_host, st->n * sizeof(float), cudaMemcpyHostToDevice,
                                  args->stream));
    io->out = st->out;
    io->out_count = HP_BINS;
    io->out_dtype = KG_DTYPE_F32;
    io->rows = 0;
    *state = st;
    st = NULL;
cleanup:
    hp_atomic_teardown(st);
    return rc;
}

static int hp_atomic_launch(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_atomic_state *st = (hp_atomic_state *)state;
    unsigned grid = hp_atomic_grid(st->n);
    KG_CUDA_CHECK(cudaMemsetAsync(st->out, 0, HP_BINS * sizeof(float), s));
    hp_atomic_sum_kernel<<<grid, HP_BLOCK, 0, s>>>(st->x, st->out, st->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int hp_atomic_reference(void *state, cudaStream_t stream, void *ref_host)
{
    hp_atomic_state *st = (hp_atomic_state *)state;
    double *ref = (double *)ref_host;
    (void)stream;
    for (int j = 0; j < HP_BINS; j++)
        ref[j] = 0.0;
    for (size_t i = 0; i < st->n; i++)
        ref[i % HP_BINS] += st->x_host[i];
    return 0;
}

static const kg_kernel_ref hp_atomic_k[] = { KG_KERNEL(hp_atomic_sum_kernel, HP_BLOCK, 0) };

/* The atomic case's inputs, plus the pristine accumulator out0 (from [-1, 1)) and the ordered
 * partials; out itself is left for prepare() to fill. */
static int hp_inplace_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    kg_rng rng;
    hp_atomic_state *st = NULL;
    KG_TRY(hp_atomic_setup(args, (void **)&st, io));
    if (!(st->out0_host = (float *)malloc(HP_BINS * sizeof(float)))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath in-place: out of memory");
        goto cleanup;
    }
    kg_rng_seed(&rng, args->seed, 2);
    kg_rng_fill_f32(&rng, st->out0_host, HP_BINS, -1.0f, 1.0f);
    KG_CUDA_CHECK(cudaMalloc((void **)&st->out0, HP_BINS * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->partials,
                             (size_t)hp_atomic_grid(st->n) * HP_BINS * sizeof(float)));
    KG_CUDA_CHECK(cudaMemcpyAsync(st->out0, st->out0_host, HP_BINS * sizeof(float),
                                  cudaMemcpyHostToDevice, args->stream));
    *state = st;
    st = NULL;
cleanup:
    hp_atomic_teardown(st);
    return rc;
}

/* Restore the accumulator: a stream-ordered device copy, outside the hot path. */
static int hp_inplace_prepare(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_atomic_state *st = (hp_atomic_state *)state;
    KG_CUDA_CHECK(
        cudaMemcpyAsync(st->out, st->out0, HP_BINS * sizeof(float), cudaMemcpyDeviceToDevice, s));
cleanup:
    return rc;
}

static int hp_inplace_launch_atomic(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_atomic_state *st = (hp_atomic_state *)state;
    hp_inplace_sum_kernel<false>
        <<<hp_atomic_grid(st->n), HP_BLOCK, 0, s>>>(st->x, st->out, NULL, st->n);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int hp_inplace_launch_ordered(void *state, cudaStream_t s)
{
    int rc = 0;
    hp_atomic_state *st = (hp_atomic_state *)state;
    unsigned grid = hp_atomic_grid(st->n);
    hp_inplace_sum_kernel<true><<<grid, HP_BLOCK, 0, s>>>(st->x, st->out, st->partials, st->n);
    KG_LAUNCH_CHECK();
    hp_inplace_finish_kernel<<<1, HP_BINS, 0, s>>>(st->partials, st->out, grid);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int hp_inplace_reference(void *state, cudaStream_t stream, void *ref_host)
{
    hp_atomic_state *st = (hp_atomic_state *)state;
    double *ref = (double *)ref_host;
    (void)hp_atomic_reference(state, stream, ref_host);
    for (int j = 0; j < HP_BINS; j++)
        ref[j] += st->out0_host[j];
    return 0;
}

/* x once, out read and written; the ordered twin also writes and reads its partials. */
#define HP_INPLACE_GRID ((1u << 22) / (HP_BLOCK * HP_ATOMIC_PER_THREAD))
#define HP_INPLACE_BYTES(ordered) \
    (4.0 * (double)(1u << 22) + 8.0 * HP_BINS + ((ordered) ? 8.0 * HP_BINS * HP_INPLACE_GRID : 0.0))

static const kg_kernel_ref hp_inplace_atomic_k[] = {
    KG_KERNEL(hp_inplace_sum_kernel<false>, HP_BLOCK, 0),
};
static const kg_kernel_ref hp_inplace_ordered_k[] = {
    KG_KERNEL(hp_inplace_sum_kernel<true>, HP_BLOCK, 0),
    KG_KERNEL(hp_inplace_finish_kernel, HP_BINS, 0),
};

/* ---- batch-variant scaling ----------------------------------------------------------------
 * y[r,c] = x[r,c] / max|x| where the max runs over the rows being computed. DEFECT: a
 * reduction shared by the whole batch, so row r depends on how many rows are launched;
 * declared batch_invariant anyway. Deterministic, capturable, no forbidden calls. */
#define HP_BV_ROWS 64
#define HP_BV_COLS 1024
#define HP_BV_MAX_BLOCK 1024

__global__ void __launch_bounds__(HP_BV_MAX_BLOCK)
    hp_batch_max_kernel(const float *__restrict__ x, float *__restrict__ m, size_t count)
{
    __shared__ float sm[HP_BV_MAX_BLOCK];
    float v = 0.0f;
    for (size_t i = threadIdx.x; i < count; i += HP_BV_MAX_BLOCK)
        v = fmaxf(v, fabsf(x[i]));
    sm[threadIdx.x] = v;
    __syncthreads();
    for (int o = HP_BV_MAX_BLOCK / 2; o > 0; o >>= 1) {
        if ((int)threadIdx.x < o)
            sm[threadIdx.x] = fmaxf(sm[threadIdx.x], sm[threadIdx.x + o]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *m = sm[0];
}

__global__ void __launch_bounds__(HP_BLOCK)
    hp_batch_scale_kernel(const float *__restrict__ x, const float *__restrict__ m,
                          float *__restrict__ y, int cols)
{
    const size_t row = blockIdx.x;
    const float mx = *m;
    for (int c = threadIdx.x; c < cols; c += HP_BLOCK)
        y[row * cols + c] = x[row * cols + c] / mx;
}

typedef struct {
    int rows, cols;
    float *x, *m, *y;
    float *x_host;
} hp_bv_state;

static const kg_rmsnorm_params hp_bv_p = { HP_BV_ROWS, HP_BV_COLS };

static void hp_bv_teardown(void *state)
{
    hp_bv_state *st = (hp_bv_state *)state;
    if (!st)
        return;
    cudaFree(st->x);
    cudaFree(st->m);
    cudaFree(st->y);
    free(st->x_host);
    free(st);
}

static int hp_bv_setup(const kg_setup_args *args, void **state, kg_case_io *io)
{
    int rc = 0;
    const kg_rmsnorm_params *p = (const kg_rmsnorm_params *)args->params;
    size_t n = (size_t)p->rows * p->cols;
    kg_rng rng;
    hp_bv_state *st = (hp_bv_state *)calloc(1, sizeof(*st));
    if (!st || !(st->x_host = (float *)malloc(n * sizeof(float)))) {
        rc = kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "hotpath batch: out of memory");
        goto cleanup;
    }
    st->rows = p->rows;
    st->cols = p->cols;
    kg_rng_seed(&rng, args->seed, 1);
    kg_rng_fill_f32(&rng, st->x_host, n, -1.0f, 1.0f);
    /* Later rows hold larger values, so the batch max grows with the batch. */
    for (int r = 0; r < st->rows; r++)
        for (int c = 0; c < st->cols; c++)
            st->x_host[(size_t)r * st->cols + c] *= (float)(r + 1);
    KG_CUDA_CHECK(cudaMalloc((void **)&st->x, n * sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->m, sizeof(float)));
    KG_CUDA_CHECK(cudaMalloc((void **)&st->y, n * sizeof(float)));
    KG_CUDA_CHECK(cudaMemcpyAsync(st->x, st->x_host, n * sizeof(float), cudaMemcpyHostToDevice,
                                  args->stream));
    io->out = st->y;
    io->out_count = n;
    io->out_dtype = KG_DTYPE_F32;
    io->rows = (size_t)st->rows;
    *state = st;
    st = NULL;
cleanup:
    hp_bv_teardown(st);
    return rc;
}

static int hp_bv_launch_rows(void *state, int rows, cudaStream_t s)
{
    int rc = 0;
    hp_bv_state *st = (hp_bv_state *)state;
    if (rows < 1 || rows > st->rows)
        return kg_error_set(KG_EINVAL, __FILE__, __LINE__,
                            "hotpath batch: rows %d out of "
                            "[1,%d]",
                            rows, st->rows);
    hp_batch_max_kernel<<<1, HP_BV_MAX_BLOCK, 0, s>>>(st->x, st->m, (size_t)rows * st->cols);
    KG_LAUNCH_CHECK();
    hp_batch_scale_kernel<<<rows, HP_BLOCK, 0, s>>>(st->x, st->m, st->y, st->cols);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

static int hp_bv_launch(void *state, cudaStream_t s)
{
    return hp_bv_launch_rows(state, ((hp_bv_state *)state)->rows, s);
}

static int hp_bv_reference(void *state, cudaStream_t stream, void *ref_host)
{
    hp_bv_state *st = (hp_bv_state *)state;
    size_t n = (size_t)st->rows * st->cols;
    double m = 0.0, *ref = (double *)ref_host;
    (void)stream;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)st->x_host[i]));
    for (size_t i = 0; i < n; i++)
        ref[i] = st->x_host[i] / m;
    return 0;
}

static const kg_kernel_ref hp_bv_k[] = {
    KG_KERNEL(hp_batch_max_kernel, HP_BV_MAX_BLOCK, 0),
    KG_KERNEL(hp_batch_scale_kernel, HP_BLOCK, 0),
};

/* ---- cuBLAS GEMM without a preset workspace (informational) ------------------------------
 * The case of cublas_gemm.cu (same shape, types, warm-up in setup, callbacks) with
 * preset_workspace = 0: the handle only gets cublasSetStream and cuBLAS picks its own
 * workspace. Whether that allocates or syncs in the hot path is what the gate observes and
 * reports. */
static const kg_cublas_gemm_params hp_gemm_p = { 256, 384, 512, 0, 0 };

/* ---- the catalogue ------------------------------------------------------------------------- */

#define HP_AXPY_CASE(ID, LAUNCH, REASON)                                                    \
    {                                                                                       \
        ID, "axpy", &hp_axpy_p, hp_axpy_setup, LAUNCH, hp_axpy_reference, hp_axpy_teardown, \
            KG_DTYPE_F64, "cpu-f64", KG_AXPY_PARITY, 12.0 * (double)((size_t)1 << 16), 0.0, \
            hp_axpy_k, 1, 0, NULL, "hotpath", REASON                                        \
    }

static const kg_case_desc hp_cases[] = {
    HP_AXPY_CASE("defect/hotpath/cudaMalloc/axpy/n=65536/f32", hp_launch_malloc,
                 "cudaMalloc [alloc/free]"),
    HP_AXPY_CASE("defect/hotpath/cudaMallocAsync/axpy/n=65536/f32", hp_launch_malloc_async,
                 "cudaMallocAsync [alloc/free]"),
    HP_AXPY_CASE("defect/hotpath/cudaFree/axpy/n=65536/f32", hp_launch_free,
                 "cudaFree [alloc/free]"),
    HP_AXPY_CASE("defect/hotpath/cudaStreamSynchronize/axpy/n=65536/f32", hp_launch_stream_sync,
                 "cudaStreamSynchronize [sync/poll]"),
    HP_AXPY_CASE("defect/hotpath/cudaDeviceSynchronize/axpy/n=65536/f32", hp_launch_device_sync,
                 "cudaDeviceSynchronize [sync/poll]"),
    HP_AXPY_CASE("defect/hotpath/cudaEventSynchronize/axpy/n=65536/f32", hp_launch_event_sync,
                 "cudaEventSynchronize [sync/poll]"),
    HP_AXPY_CASE("defect/hotpath/d2h_memcpy_async/axpy/n=65536/f32", hp_launch_d2h,
                 "cudaMemcpyAsync [host-transfer]"),
    HP_AXPY_CASE("defect/hotpath/stream0_launch/axpy/n=65536/f32", hp_launch_stream0,
                 "[default-stream]"),
    HP_AXPY_CASE("defect/hotpath/unjoined_stream/axpy/n=65536/f32", hp_launch_unjoined,
                 "cudaErrorStreamCaptureUnjoined"),
    HP_AXPY_CASE("defect/hotpath/cudaLaunchHostFunc/axpy/n=65536/f32", hp_launch_host_func,
                 "cudaLaunchHostFunc [host-callback]"),
    /* Dies (exit(1)) in the graph capture after the observed cudaMalloc: ERROR "FAULT exit"
     * until the worker turns the evidence the watch left in the phase page into the FAIL. */
    HP_AXPY_CASE("defect/hotpath/cudaMalloc_then_exit/axpy/n=65536/f32", hp_launch_malloc_exit,
                 "cudaMalloc [alloc/free]"),
    /* Launched otherwise than declared (hp_axpy_k: KG_AXPY_BLOCK, 0); clean twin:
     * clean/hotpath/axpy (the reference launch, as declared). */
    HP_AXPY_CASE("defect/hotpath/launch_config_half_block/axpy/n=65536/f32", hp_launch_half_block,
                 "launch-config"),
    HP_AXPY_CASE("defect/hotpath/launch_config_undeclared_smem/axpy/n=65536/f32",
                 hp_launch_undeclared_smem, "launch-config"),
    /* Writes nothing: every check compares poison, so the case must be ERROR, not PASS. */
    HP_AXPY_CASE("defect/hotpath/writes_nothing/axpy/n=65536/f32", hp_launch_pong,
                 "error:vacuous determinism"),
    { "clean/hotpath/axpy/n=65536/f32", "axpy", &hp_axpy_p, hp_axpy_setup, hp_launch_clean,
      hp_axpy_reference, hp_axpy_teardown, KG_DTYPE_F64, "cpu-f64", KG_AXPY_PARITY,
      12.0 * (double)((size_t)1 << 16), 0.0, hp_axpy_k, 1 },
    { "defect/hotpath/atomic_sum/n=4194304,bins=64/f32", "atomic_sum", &hp_atomic_p,
      hp_atomic_setup, hp_atomic_launch, hp_atomic_reference, hp_atomic_teardown, KG_DTYPE_F64,
      "cpu-f64", KG_PARITY_TOLERANCE_INIT(1.0, 1e-4, 0.99999), 4.0 * (double)(1u << 22),
      (double)(1u << 22), hp_atomic_k, 1, 0, NULL, "hotpath", "nondeterministic" },
    { "defect/hotpath/inplace_atomic_accumulate/n=4194304,bins=64/f32",
      "inplace_sum",
      &hp_atomic_p,
      hp_inplace_setup,
      hp_inplace_launch_atomic,
      hp_inplace_reference,
      hp_atomic_teardown,
      KG_DTYPE_F64,
      "cpu-f64",
      KG_PARITY_TOLERANCE_INIT(1.0, 1e-4, 0.99999),
      HP_INPLACE_BYTES(false),
      (double)(1u << 22),
      hp_inplace_atomic_k,
      1,
      0,
      NULL,
      "hotpath",
      "nondeterministic",
      NULL,
      NULL,
      0.0,
      0.0,
      0.0,
      NULL,
      hp_inplace_prepare },
    { "clean/hotpath/inplace_ordered_accumulate/n=4194304,bins=64/f32",
      "inplace_sum",
      &hp_atomic_p,
      hp_inplace_setup,
      hp_inplace_launch_ordered,
      hp_inplace_reference,
      hp_atomic_teardown,
      KG_DTYPE_F64,
      "cpu-f64",
      KG_PARITY_TOLERANCE_INIT(1.0, 1e-4, 0.99999),
      HP_INPLACE_BYTES(true),
      (double)(1u << 22),
      hp_inplace_ordered_k,
      2,
      0,
      NULL,
      NULL,
      NULL,
      NULL,
      NULL,
      0.0,
      0.0,
      0.0,
      NULL,
      hp_inplace_prepare },
    { "defect/hotpath/batch_variant/rows=64,cols=1024/f32", "batch_scale", &hp_bv_p, hp_bv_setup,
      hp_bv_launch, hp_bv_reference, hp_bv_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_PARITY_TOLERANCE_INIT(1e-6, 1e-6, 0.999999), 12.0 * HP_BV_ROWS *HP_BV_COLS,
      (double)HP_BV_ROWS *HP_BV_COLS, hp_bv_k, 2, 1, hp_bv_launch_rows, "hotpath",
      "batch-variant" },
    { "defect/hotpath/cublas_no_workspace/m=256,n=384,k=512/bf16", "cublas_gemm_bf16", &hp_gemm_p,
      kg_cublas_gemm_setup, kg_cublas_gemm_launch, kg_cublas_gemm_reference,
      kg_cublas_gemm_teardown, KG_DTYPE_F64, "cpu-f64", KG_CUBLAS_GEMM_PARITY,
      2.0 * (256.0 * 512 + 384.0 * 512) + 4.0 * 256 * 384, 2.0 * 256 * 384 * 512, NULL, 0, 0, NULL,
      "hotpath", "observe" },
};

/* The host-memory checks' planted cases (hotpath/um_counters.h): registered unless
 * KGATE_HOTPATH_HOST_MEMORY=0 turns the checks off (a planted case no check looks for would
 * escape). */
static const kg_case_desc hp_host_memory_cases[] = {
    { "defect/hotpath/mapped_host_mirror/axpy/n=65536/f32", "axpy", &hp_axpy_p, hp_axpy_setup,
      hp_launch_mapped_mirror, hp_axpy_reference, hp_axpy_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_AXPY_PARITY, 12.0 * (double)((size_t)1 << 16) + 32.0, 0.0, hp_mirror_k, 2, 0, NULL,
      "hotpath", "arg 1: mapped host memory" },
    { "clean/hotpath/device_mirror/axpy/n=65536/f32", "axpy", &hp_axpy_p, hp_axpy_setup,
      hp_launch_device_mirror, hp_axpy_reference, hp_axpy_teardown, KG_DTYPE_F64, "cpu-f64",
      KG_AXPY_PARITY, 12.0 * (double)((size_t)1 << 16) + 32.0, 0.0, hp_mirror_k, 2 },
    /* Managed x, touched by the host in prepare(); its clean twin is clean/hotpath/axpy (the
     * same kernel on device memory). */
    { "defect/hotpath/managed_host_touched/axpy/n=65536/f32",
      "axpy",
      &hp_axpy_p,
      hp_axpy_setup,
      hp_launch_managed,
      hp_axpy_reference,
      hp_axpy_teardown,
      KG_DTYPE_F64,
      "cpu-f64",
      KG_AXPY_PARITY,
      12.0 * (double)((size_t)1 << 16),
      0.0,
      hp_axpy_k,
      1,
      0,
      NULL,
      "hotpath",
      "arg 1: managed memory",
      NULL,
      NULL,
      0.0,
      0.0,
      0.0,
      NULL,
      hp_managed_prepare },
    /* Managed x reached through a device-global pointer (no argument shows it): only the
     * unified-memory counters see the migration; the clean twin reads device x that way. */
    { "defect/hotpath/managed_via_global/axpy/n=65536/f32",
      "axpy",
      &hp_axpy_p,
      hp_global_managed_setup,
      hp_launch_global_x,
      hp_axpy_reference,
      hp_axpy_teardown,
      KG_DTYPE_F64,
      "cpu-f64",
      KG_AXPY_PARITY,
      12.0 * (double)((size_t)1 << 16),
      0.0,
      hp_global_k,
      1,
      0,
      NULL,
      "hotpath",
      "[um-migration]",
      NULL,
      NULL,
      0.0,
      0.0,
      0.0,
      NULL,
      hp_managed_prepare },
    { "clean/hotpath/device_via_global/axpy/n=65536/f32", "axpy", &hp_axpy_p,
      hp_global_device_setup, hp_launch_global_x, hp_axpy_reference, hp_axpy_teardown, KG_DTYPE_F64,
      "cpu-f64", KG_AXPY_PARITY, 12.0 * (double)((size_t)1 << 16), 0.0, hp_global_k, 1 },
};

extern "C" int kg_hotpath_defects_register(kg_registry *reg)
{
    const char *hm = getenv("KGATE_HOTPATH_HOST_MEMORY");
    int rc = kg_registry_add_all(reg, hp_cases, sizeof(hp_cases) / sizeof(hp_cases[0]));
    if (rc == 0 && !(hm && strcmp(hm, "0") == 0))
        rc = kg_registry_add_all(reg, hp_host_memory_cases,
                                 sizeof(hp_host_memory_cases) / sizeof(hp_host_memory_cases[0]));
    return rc;
}
