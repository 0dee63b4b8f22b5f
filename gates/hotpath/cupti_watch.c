/* CUPTI callback watch: the forbidden-API table and the runtime + driver callback that
 * records violations while enabled (see cupti_watch.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "hotpath/cupti_watch.h"
#include "hotpath/um_counters.h"
#include "core/kg_core.h"

/* THE forbidden-API table (docs/production-ci.md shows it; test_hotpath_table keeps the two
 * in sync and checks every row names a real CUPTI callback). Base names: one row covers the
 * _v2/_ptsz/_ptds variants. Allowed on the hot path: kernel launches, async D2D copies and
 * memsets, event record/wait, graph launches, all on the case's (or a forked) stream; no
 * host function on any stream. */
static const kg_cw_rule rules[] = {
    /* alloc/free: runtime */
    { "cudaMalloc", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocPitch", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMalloc3D", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocArray", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMalloc3DArray", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocMipmappedArray", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocHost", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaHostAlloc", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocManaged", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMallocFromPoolAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaFree", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaFreeHost", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaFreeArray", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaFreeMipmappedArray", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaFreeAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaHostRegister", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaHostUnregister", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMemPoolCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMemPoolDestroy", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cudaMemPoolTrimTo", KG_CW_ALLOC, KG_CW_ALWAYS },
    /* alloc/free: driver */
    { "cuMemAlloc", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAllocPitch", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAllocHost", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemHostAlloc", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAllocManaged", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAllocAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAllocFromPoolAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemFree", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemFreeHost", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemFreeAsync", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemHostRegister", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemHostUnregister", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemRelease", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemMap", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemUnmap", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAddressReserve", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemAddressFree", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuArrayCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuArray3DCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuArrayDestroy", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMipmappedArrayCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMipmappedArrayDestroy", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemPoolCreate", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemPoolDestroy", KG_CW_ALLOC, KG_CW_ALWAYS },
    { "cuMemPoolTrimTo", KG_CW_ALLOC, KG_CW_ALWAYS },
    /* sync/poll */
    { "cudaDeviceSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cudaThreadSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cudaStreamSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cudaEventSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cudaStreamQuery", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cudaEventQuery", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cuCtxSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cuStreamSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cuEventSynchronize", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cuStreamQuery", KG_CW_SYNC, KG_CW_ALWAYS },
    { "cuEventQuery", KG_CW_SYNC, KG_CW_ALWAYS },
    /* host transfers and synchronous copies/memsets: runtime */
    { "cudaMemcpy", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpy2D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpy3D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyPeer", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpy3DPeer", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyToSymbol", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyFromSymbol", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyToArray", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyFromArray", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpy2DToArray", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpy2DFromArray", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemset", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemset2D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemset3D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cudaMemcpyAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cudaMemcpy2DAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cudaMemcpy3DAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cudaMemcpyToSymbolAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cudaMemcpyFromSymbolAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cudaMemcpyPeerAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    /* host transfers and synchronous copies/memsets: driver */
    { "cuMemcpy", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyHtoD", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyDtoH", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyDtoD", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyHtoA", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyAtoH", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpy2D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpy2DUnaligned", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpy3D", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyPeer", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpy3DPeer", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyHtoDAsync", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyDtoHAsync", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyHtoAAsync", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyAtoHAsync", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD8", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD16", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD32", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD2D8", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD2D16", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemsetD2D32", KG_CW_HOST_COPY, KG_CW_ALWAYS },
    { "cuMemcpyAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cuMemcpy2DAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cuMemcpy3DAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cuMemcpyDtoDAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    { "cuMemcpyPeerAsync", KG_CW_HOST_COPY, KG_CW_IF_HOST_OR_DEFAULT },
    /* work enqueued on a default stream (legacy, per-thread, or 0) */
    { "__cudaLaunchKernel", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaLaunchKernel", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaLaunchKernelExC", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaLaunchCooperativeKernel", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaGraphLaunch", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaMemsetAsync", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaMemset2DAsync", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaMemset3DAsync", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cudaEventRecord", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuLaunchKernel", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuLaunchKernelEx", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuLaunchCooperativeKernel", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuGraphLaunch", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD8Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD16Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD32Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD2D8Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD2D16Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuMemsetD2D32Async", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuEventRecord", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    { "cuEventRecordWithFlags", KG_CW_DEFAULT_STREAM, KG_CW_IF_DEFAULT_STREAM },
    /* stream/event/graph object churn */
    { "cudaStreamCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaStreamCreateWithFlags", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaStreamCreateWithPriority", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaStreamDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaEventCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaEventCreateWithFlags", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaEventDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphInstantiate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphInstantiateWithFlags", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphInstantiateWithParams", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaGraphExecDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaStreamBeginCapture", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cudaStreamEndCapture", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuStreamCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuStreamCreateWithPriority", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuStreamDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuEventCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuEventDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphCreate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphInstantiate", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphInstantiateWithFlags", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphInstantiateWithParams", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuGraphExecDestroy", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuStreamBeginCapture", KG_CW_OBJECTS, KG_CW_ALWAYS },
    { "cuStreamEndCapture", KG_CW_OBJECTS, KG_CW_ALWAYS },
    /* host functions on the stream: the GPU waits for a host thread at that point (on any
     * stream, in a graph too), so host work sits inside the timed, observed hot path */
    { "cudaLaunchHostFunc", KG_CW_HOST_FUNC, KG_CW_ALWAYS },
    { "cudaStreamAddCallback", KG_CW_HOST_FUNC, KG_CW_ALWAYS },
    { "cuLaunchHostFunc", KG_CW_HOST_FUNC, KG_CW_ALWAYS },
    { "cuStreamAddCallback", KG_CW_HOST_FUNC, KG_CW_ALWAYS },
};

const kg_cw_rule *kg_cw_rules(size_t *n)
{
    *n = KG_ARRAY_LEN(rules);
    return rules;
}

const char *kg_cw_category_name(kg_cw_category c)
{
    switch (c) {
    case KG_CW_ALLOC: return "alloc/free";
    case KG_CW_SYNC: return "sync/poll";
    case KG_CW_HOST_COPY: return "host-transfer";
    case KG_CW_DEFAULT_STREAM: return "default-stream";
    case KG_CW_OBJECTS: return "object-churn";
    case KG_CW_HOST_FUNC: return "host-callback";
    case KG_CW_HOST_MEMORY: return "host-memory";
    case KG_CW_UM_MIGRATION: return "um-migration";
    default: return NULL;
    }
}

const char *kg_cw_when_text(kg_cw_when w)
{
    switch (w) {
    case KG_CW_ALWAYS: return "always";
    case KG_CW_IF_DEFAULT_STREAM: return "on a default stream";
    case KG_CW_IF_HOST_OR_DEFAULT: return "host side, or on a default stream";
    default: return NULL;
    }
}

static bool strip_suffix(char *s)
{
    size_t n = strlen(s);
    if (n > 5 && (strcmp(s + n - 5, "_ptsz") == 0 || strcmp(s + n - 5, "_ptds") == 0)) {
        s[n - 5] = '\0';
        return true;
    }
    /* "_v" followed by digits only */
    char *u = strrchr(s, '_');
    if (u && u[1] == 'v' && u[2]) {
        for (const char *p = u + 2; *p; p++)
            if (*p < '0' || *p > '9')
                return false;
        *u = '\0';
        return true;
    }
    return false;
}

void kg_cw_base_name(const char *cb_name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", cb_name ? cb_name : "");
    while (strip_suffix(buf))
        ;
}

int kg_cw_rule_find(const char *base)
{
    for (size_t i = 0; i < KG_ARRAY_LEN(rules); i++)
        if (strcmp(rules[i].api, base) == 0)
            return (int)i;
    return -1;
}

/* ---- the watch -------------------------------------------------------------------------- */

#define MAX_VIOLATIONS 64
#define MAX_NEST 8
enum { CB_PTSZ = 1 };

struct kg_cupti_watch {
    CUpti_SubscriberHandle sub;
    bool subscribed, enabled;
    bool host_memory; /* the experimental argument check (kg_hp_host_memory_checks) */
    pthread_mutex_t mu;
    kg_cw_violation v[MAX_VIOLATIONS];
    size_t n;
    unsigned long dropped, calls, seq;
    kg_cw_launch lc[KG_CW_MAX_LAUNCHES];
    size_t n_lc;
    unsigned long lc_dropped;
};

/* Callback id -> rule index (-1 = not in the table) and per-thread-stream flag, built once
 * from CUPTI's callback names (works without a GPU). */
static int16_t g_rt_rule[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static int16_t g_drv_rule[CUPTI_DRIVER_TRACE_CBID_SIZE];
static uint8_t g_rt_flags[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t g_drv_flags[CUPTI_DRIVER_TRACE_CBID_SIZE];
static pthread_once_t g_maps_once = PTHREAD_ONCE_INIT;
static void build_maps(void);

/* Per-thread nesting: a driver call inside a runtime call belongs to that runtime call
 * (one cudaMalloc is one violation, not cudaMalloc + cuMemAlloc), while library code that
 * calls the driver directly (cuBLAS) is judged on its own. `guard` mutes the callback while
 * the watch itself queries pointer attributes. */
static _Thread_local int tl_depth;
static _Thread_local uint32_t tl_rt_cbid[MAX_NEST];
static _Thread_local bool tl_flagged[MAX_NEST];
static _Thread_local int tl_guard;
static _Thread_local bool tl_args[MAX_NEST]; /* this runtime launch's arguments were checked */
static _Thread_local bool tl_lc[MAX_NEST];   /* this runtime launch's configuration recorded */

/* cuPointerGetAttribute through the runtime's driver entry point (resolved once, outside
 * callbacks): linking libcuda directly would make every kgate binary need a driver. */
typedef CUresult (*ptr_attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
static ptr_attr_fn g_ptr_attr;
/* Kernel parameter layout and names (CUDA 12.4 / 12.3 drivers), same route; NULL: the
 * argument check is skipped (an older driver). */
typedef CUresult (*func_pinfo_fn)(CUfunction, size_t, size_t *, size_t *);
typedef CUresult (*kernel_pinfo_fn)(CUkernel, size_t, size_t *, size_t *);
typedef CUresult (*func_name_fn)(const char **, CUfunction);
typedef CUresult (*kernel_name_fn)(const char **, CUkernel);
static func_pinfo_fn g_func_pinfo;
static kernel_pinfo_fn g_kernel_pinfo;
static func_name_fn g_func_name;
static kernel_name_fn g_kernel_name;

/* Host memory per the driver: pinned/registered host, or not known to CUDA (pageable). */
static bool ptr_is_host(const void *p, bool *unknown)
{
    CUmemorytype t = (CUmemorytype)0;
    if (!p)
        return false;
    if (!g_ptr_attr) {
        *unknown = true; /* cannot tell: treat as host, the conservative answer */
        return true;
    }
    tl_guard++;
    CUresult r = g_ptr_attr(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p);
    tl_guard--;
    if (r != CUDA_SUCCESS) {
        *unknown = true;
        return true;
    }
    return t == CU_MEMORYTYPE_HOST;
}

typedef struct {
    bool has_stream;
    const void *stream;
    bool host;
    char why[64];
} call_info;

static void kind_info(call_info *ci, int kind, const void *dst, const void *src)
{
    static const char *names[] = { "HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice",
                                   "Default" };
    bool unknown = false;
    if (kind >= 0 && kind <= 2) {
        ci->host = true;
        snprintf(ci->why, sizeof ci->why, "kind %s", names[kind]);
    } else if (kind == 4 && (ptr_is_host(dst, &unknown) || ptr_is_host(src, &unknown))) {
        ci->host = true;
        snprintf(ci->why, sizeof ci->why, "kind Default with a %s host pointer",
                 unknown ? "pageable" : "pinned");
    }
}

static void memtype_info(call_info *ci, CUmemorytype m, CUdeviceptr dev)
{
    bool unknown = false;
    if (m == CU_MEMORYTYPE_HOST ||
        (m == CU_MEMORYTYPE_UNIFIED && ptr_is_host((const void *)(uintptr_t)dev, &unknown))) {
        ci->host = true;
        snprintf(ci->why, sizeof ci->why, "host memory operand");
    }
}

static void stream_of(call_info *ci, const void *s)
{
    ci->has_stream = true;
    ci->stream = s;
}

/* The CUDA 13 <<<>>> entry point has no generated params struct; it mirrors
 * cudaLaunchKernel's (kernel handle instead of the host stub). */
typedef struct {
    void *kernel;
    dim3 gridDim;
    dim3 blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
} kg_cudaLaunchKernel_v13000_params;

#define RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define DRV(x) CUPTI_DRIVER_TRACE_CBID_##x
#define P(T) ((const T *)p)

/* Stream and host-side facts of the conditional calls. Returns false when the watch does
 * not know the call's parameters (the call is then not judged). The _ptsz variants share
 * the layout of the plain ones. */
static bool runtime_info(uint32_t cbid, const void *p, call_info *ci)
{
    switch (cbid) {
    case RT(__cudaLaunchKernel_v13000):
    case RT(__cudaLaunchKernel_ptsz_v13000):
        stream_of(ci, P(kg_cudaLaunchKernel_v13000_params)->stream);
        return true;
    case RT(cudaLaunchKernel_v7000):
    case RT(cudaLaunchKernel_ptsz_v7000):
        stream_of(ci, P(cudaLaunchKernel_v7000_params)->stream);
        return true;
    case RT(cudaLaunchKernelExC_v11060):
    case RT(cudaLaunchKernelExC_ptsz_v11060): {
        const cudaLaunchConfig_t *c = P(cudaLaunchKernelExC_v11060_params)->config;
        if (!c)
            return false;
        stream_of(ci, c->stream);
        return true;
    }
    case RT(cudaLaunchCooperativeKernel_v9000):
    case RT(cudaLaunchCooperativeKernel_ptsz_v9000):
        stream_of(ci, P(cudaLaunchCooperativeKernel_v9000_params)->stream);
        return true;
    case RT(cudaGraphLaunch_v10000):
    case RT(cudaGraphLaunch_ptsz_v10000):
        stream_of(ci, P(cudaGraphLaunch_v10000_params)->stream);
        return true;
    case RT(cudaMemsetAsync_v3020):
    case RT(cudaMemsetAsync_ptsz_v7000):
        stream_of(ci, P(cudaMemsetAsync_v3020_params)->stream);
        return true;
    case RT(cudaMemset2DAsync_v3020):
    case RT(cudaMemset2DAsync_ptsz_v7000):
        stream_of(ci, P(cudaMemset2DAsync_v3020_params)->stream);
        return true;
    case RT(cudaMemset3DAsync_v3020):
    case RT(cudaMemset3DAsync_ptsz_v7000):
        stream_of(ci, P(cudaMemset3DAsync_v3020_params)->stream);
        return true;
    case RT(cudaEventRecord_v3020):
    case RT(cudaEventRecord_ptsz_v7000):
        stream_of(ci, P(cudaEventRecord_v3020_params)->stream);
        return true;
    case RT(cudaMemcpyAsync_v3020):
    case RT(cudaMemcpyAsync_ptsz_v7000): {
        const cudaMemcpyAsync_v3020_params *q = P(cudaMemcpyAsync_v3020_params);
        stream_of(ci, q->stream);
        kind_info(ci, q->kind, q->dst, q->src);
        return true;
    }
    case RT(cudaMemcpy2DAsync_v3020):
    case RT(cudaMemcpy2DAsync_ptsz_v7000): {
        const cudaMemcpy2DAsync_v3020_params *q = P(cudaMemcpy2DAsync_v3020_params);
        stream_of(ci, q->stream);
        kind_info(ci, q->kind, q->dst, q->src);
        return true;
    }
    case RT(cudaMemcpy3DAsync_v3020):
    case RT(cudaMemcpy3DAsync_ptsz_v7000): {
        const cudaMemcpy3DAsync_v3020_params *q = P(cudaMemcpy3DAsync_v3020_params);
        stream_of(ci, q->stream);
        if (q->p)
            kind_info(ci, q->p->kind, q->p->dstPtr.ptr, q->p->srcPtr.ptr);
        return true;
    }
    case RT(cudaMemcpyToSymbolAsync_v3020):
    case RT(cudaMemcpyToSymbolAsync_ptsz_v7000): {
        const cudaMemcpyToSymbolAsync_v3020_params *q = P(cudaMemcpyToSymbolAsync_v3020_params);
        stream_of(ci, q->stream);
        kind_info(ci, q->kind, NULL, q->src);
        return true;
    }
    case RT(cudaMemcpyFromSymbolAsync_v3020):
    case RT(cudaMemcpyFromSymbolAsync_ptsz_v7000): {
        const cudaMemcpyFromSymbolAsync_v3020_params *q = P(cudaMemcpyFromSymbolAsync_v3020_params);
        stream_of(ci, q->stream);
        kind_info(ci, q->kind, q->dst, NULL);
        return true;
    }
    case RT(cudaMemcpyPeerAsync_v4000):
        stream_of(ci, P(cudaMemcpyPeerAsync_v4000_params)->stream);
        return true;
    default: return false;
    }
}

static bool driver_info(uint32_t cbid, const void *p, call_info *ci)
{
    switch (cbid) {
    case DRV(cuLaunchKernel):
    case DRV(cuLaunchKernel_ptsz): stream_of(ci, P(cuLaunchKernel_params)->hStream); return true;
    case DRV(cuLaunchKernelEx):
    case DRV(cuLaunchKernelEx_ptsz): {
        const CUlaunchConfig *c = P(cuLaunchKernelEx_params)->config;
        if (!c)
            return false;
        stream_of(ci, c->hStream);
        return true;
    }
    case DRV(cuLaunchCooperativeKernel):
    case DRV(cuLaunchCooperativeKernel_ptsz):
        stream_of(ci, P(cuLaunchCooperativeKernel_params)->hStream);
        return true;
    case DRV(cuGraphLaunch):
    case DRV(cuGraphLaunch_ptsz): stream_of(ci, P(cuGraphLaunch_params)->hStream); return true;
    case DRV(cuEventRecord):
    case DRV(cuEventRecord_ptsz): stream_of(ci, P(cuEventRecord_params)->hStream); return true;
    case DRV(cuEventRecordWithFlags):
    case DRV(cuEventRecordWithFlags_ptsz):
        stream_of(ci, P(cuEventRecordWithFlags_params)->hStream);
        return true;
    case DRV(cuMemsetD8Async):
    case DRV(cuMemsetD8Async_ptsz): stream_of(ci, P(cuMemsetD8Async_params)->hStream); return true;
    case DRV(cuMemsetD16Async):
    case DRV(cuMemsetD16Async_ptsz):
        stream_of(ci, P(cuMemsetD16Async_params)->hStream);
        return true;
    case DRV(cuMemsetD32Async):
    case DRV(cuMemsetD32Async_ptsz):
        stream_of(ci, P(cuMemsetD32Async_params)->hStream);
        return true;
    case DRV(cuMemsetD2D8Async):
    case DRV(cuMemsetD2D8Async_ptsz):
        stream_of(ci, P(cuMemsetD2D8Async_params)->hStream);
        return true;
    case DRV(cuMemsetD2D16Async):
    case DRV(cuMemsetD2D16Async_ptsz):
        stream_of(ci, P(cuMemsetD2D16Async_params)->hStream);
        return true;
    case DRV(cuMemsetD2D32Async):
    case DRV(cuMemsetD2D32Async_ptsz):
        stream_of(ci, P(cuMemsetD2D32Async_params)->hStream);
        return true;
    case DRV(cuMemcpyDtoDAsync_v2):
    case DRV(cuMemcpyDtoDAsync_v2_ptsz):
    case DRV(cuMemcpyDtoDAsync):
        stream_of(ci, P(cuMemcpyDtoDAsync_v2_params)->hStream);
        return true;
    case DRV(cuMemcpyPeerAsync):
    case DRV(cuMemcpyPeerAsync_ptsz):
        stream_of(ci, P(cuMemcpyPeerAsync_params)->hStream);
        return true;
    case DRV(cuMemcpyAsync):
    case DRV(cuMemcpyAsync_ptsz): {
        const cuMemcpyAsync_params *q = P(cuMemcpyAsync_params);
        bool unknown = false;
        stream_of(ci, q->hStream);
        if (ptr_is_host((const void *)(uintptr_t)q->dst, &unknown) ||
            ptr_is_host((const void *)(uintptr_t)q->src, &unknown)) {
            ci->host = true;
            snprintf(ci->why, sizeof ci->why, "%s host pointer", unknown ? "pageable" : "pinned");
        }
        return true;
    }
    case DRV(cuMemcpy2DAsync_v2):
    case DRV(cuMemcpy2DAsync_v2_ptsz):
    case DRV(cuMemcpy2DAsync): {
        const CUDA_MEMCPY2D *c = P(cuMemcpy2DAsync_v2_params)->pCopy;
        stream_of(ci, P(cuMemcpy2DAsync_v2_params)->hStream);
        if (c) {
            memtype_info(ci, c->srcMemoryType, c->srcDevice);
            memtype_info(ci, c->dstMemoryType, c->dstDevice);
        }
        return true;
    }
    case DRV(cuMemcpy3DAsync_v2):
    case DRV(cuMemcpy3DAsync_v2_ptsz):
    case DRV(cuMemcpy3DAsync): {
        const CUDA_MEMCPY3D *c = P(cuMemcpy3DAsync_v2_params)->pCopy;
        stream_of(ci, P(cuMemcpy3DAsync_v2_params)->hStream);
        if (c) {
            memtype_info(ci, c->srcMemoryType, c->srcDevice);
            memtype_info(ci, c->dstMemoryType, c->dstDevice);
        }
        return true;
    }
    default: return false;
    }
}

static const char *default_stream_name(const void *s, bool ptsz)
{
    if (s == NULL)
        return ptsz ? "stream 0 (per-thread default stream)" : "stream 0 (legacy default stream)";
    if (s == (const void *)cudaStreamLegacy)
        return "cudaStreamLegacy";
    if (s == (const void *)cudaStreamPerThread)
        return "cudaStreamPerThread";
    return NULL;
}

int kg_cw_classify(CUpti_CallbackDomain dom, uint32_t cbid, const void *params, char *detail,
                   size_t dn)
{
    bool rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
    size_t lim = rt ? CUPTI_RUNTIME_TRACE_CBID_SIZE : CUPTI_DRIVER_TRACE_CBID_SIZE;
    pthread_once(&g_maps_once, build_maps);
    detail[0] = '\0';
    if ((!rt && dom != CUPTI_CB_DOMAIN_DRIVER_API) || cbid >= lim)
        return -1;
    int ri = rt ? g_rt_rule[cbid] : g_drv_rule[cbid];
    if (ri < 0)
        return -1;
    const kg_cw_rule *r = &rules[ri];
    if (r->when == KG_CW_ALWAYS)
        return (int)r->category;
    call_info ci;
    memset(&ci, 0, sizeof ci);
    if (!params || !(rt ? runtime_info(cbid, params, &ci) : driver_info(cbid, params, &ci)))
        return -1;
    if (r->when == KG_CW_IF_HOST_OR_DEFAULT && ci.host) {
        snprintf(detail, dn, "%s", ci.why);
        return KG_CW_HOST_COPY;
    }
    bool ptsz = ((rt ? g_rt_flags[cbid] : g_drv_flags[cbid]) & CB_PTSZ) != 0;
    const char *ds = ci.has_stream ? default_stream_name(ci.stream, ptsz) : NULL;
    if (ds) {
        snprintf(detail, dn, "%s", ds);
        return KG_CW_DEFAULT_STREAM;
    }
    return -1;
}

/* The observation into the phase page the moment it is made: a launcher that exits or
 * crashes later in the case (cudaCheck-style exit(1)) takes the watch's records with it, the
 * page outlives the worker (core/phase.c; the first evidence of a case wins). Stack buffers
 * and bounded copies only: this runs inside the CUPTI callback. */
static void record_evidence(const kg_cw_violation *v)
{
    char text[256];
    snprintf(text, sizeof text, "%s [%s]%s%s%s%s%s in launch (hot path, observed by CUPTI)", v->api,
             kg_cw_category_name(v->category), v->via[0] ? " via " : "", v->via,
             v->detail[0] ? " (" : "", v->detail, v->detail[0] ? ")" : "");
    kg_phase_evidence_set(text);
}

static void record(kg_cupti_watch *w, const char *api, const char *via, int cat, const char *detail)
{
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].category == (kg_cw_category)cat && strcmp(w->v[i].api, api) == 0) {
            w->v[i].count++;
            pthread_mutex_unlock(&w->mu);
            return;
        }
    if (w->n == MAX_VIOLATIONS) {
        w->dropped++;
        pthread_mutex_unlock(&w->mu);
        return;
    }
    kg_cw_violation *v = &w->v[w->n++];
    memset(v, 0, sizeof *v);
    snprintf(v->api, sizeof v->api, "%s", api);
    snprintf(v->via, sizeof v->via, "%s", via ? via : "");
    snprintf(v->detail, sizeof v->detail, "%s", detail);
    v->category = (kg_cw_category)cat;
    v->count = 1;
    v->order = w->seq++;
    /* Raw frames only: symbolizing allocates, which is done later, outside the callback. */
    v->n_frames = backtrace(v->frames, KG_CW_MAX_FRAMES);
    pthread_mutex_unlock(&w->mu);
    record_evidence(v);
}

/* Base name of a call: from the callback data, else from CUPTI's name of the id. */
static void call_name(CUpti_CallbackDomain dom, uint32_t cbid, const char *fname, char *buf,
                      size_t n)
{
    if (!fname && cuptiGetCallbackName(dom, cbid, &fname) != CUPTI_SUCCESS)
        fname = NULL;
    kg_cw_base_name(fname ? fname : "unknown", buf, n);
}

/* ---- kernel arguments in managed or mapped host memory ------------------------------------ */

/* A launched kernel: a CUfunction or (CUDA 13's __cudaLaunchKernel, cudaKernel_t is a
 * CUkernel) a CUkernel. */
typedef struct {
    void *h;
    bool is_kernel;
} cw_fn;

/* CUDA 13's runtime hands cudaLaunchKernel and cuLaunchKernel a CUkernel where the
 * signature says host stub / CUfunction (measured on the H200: cuFuncGetParamInfo refuses the
 * handle, cuKernelGetParamInfo takes it), so a function handle that is refused is tried as a
 * kernel handle, once, and the answer kept in f. */
static bool fn_param(cw_fn *f, size_t i, size_t *size)
{
    size_t off;
    if (!f->is_kernel &&
        !(g_func_pinfo && g_func_pinfo((CUfunction)f->h, i, &off, size) == CUDA_SUCCESS)) {
        if (i > 0 || !g_kernel_pinfo)
            return false;
        f->is_kernel = true;
    }
    if (f->is_kernel)
        return g_kernel_pinfo && g_kernel_pinfo((CUkernel)f->h, i, &off, size) == CUDA_SUCCESS;
    return true;
}

static const char *fn_name(const cw_fn *f)
{
    const char *n = NULL;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (f->is_kernel && g_kernel_name)
        r = g_kernel_name(&n, (CUkernel)f->h);
    else if (!f->is_kernel && g_func_name)
        r = g_func_name(&n, (CUfunction)f->h);
    return r == CUDA_SUCCESS && n ? n : "?";
}

/* "managed", "mapped host" or NULL (device memory, or not a pointer: a scalar's bits are
 * unknown to the driver) for a candidate pointer value. */
static const char *arg_memory(uint64_t v)
{
    unsigned managed = 0;
    CUmemorytype t = (CUmemorytype)0;
    if (!v || !g_ptr_attr)
        return NULL;
    CUresult rm = g_ptr_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)v);
    CUresult rt = g_ptr_attr(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)v);
    if (rm == CUDA_SUCCESS && managed)
        return "managed";
    return rt == CUDA_SUCCESS && t == CU_MEMORYTYPE_HOST ? "mapped host" : NULL;
}

/* Every 8-byte aligned slot of every parameter (a pointer, or one inside a struct passed by
 * value) queried as a pointer; a managed or host one is a violation naming the kernel and the
 * argument index. Muted (tl_guard) while it queries. False when the driver told nothing of
 * the parameters (the driver-level launch is then checked instead). */
static bool check_args(kg_cupti_watch *w, const char *api, cw_fn *f, void **args)
{
    char detail[96];
    size_t size, i;
    if (!args || !f->h)
        return false;
    tl_guard++;
    for (i = 0; i < 1024 && fn_param(f, i, &size); i++)
        for (size_t o = 0; args[i] && o + 8 <= size; o += 8) {
            uint64_t v;
            memcpy(&v, (const char *)args[i] + o, sizeof v);
            const char *mem = arg_memory(v);
            if (!mem)
                continue;
            snprintf(detail, sizeof detail, "kernel %.48s arg %zu: %s memory", fn_name(f), i, mem);
            record(w, api, NULL, KG_CW_HOST_MEMORY, detail);
            break;
        }
    tl_guard--;
    return i > 0;
}

typedef cudaError_t (*func_by_symbol_fn)(CUfunction *, const void *);

/* The runtime launches whose kernel and arguments the watch knows; true when checked. */
static bool check_runtime_launch(kg_cupti_watch *w, uint32_t cbid, const void *p, const char *api)
{
    cw_fn f = { NULL, false };
    void **args = NULL;
    switch (cbid) {
    case RT(__cudaLaunchKernel_v13000):
    case RT(__cudaLaunchKernel_ptsz_v13000):
        f = (cw_fn){ P(kg_cudaLaunchKernel_v13000_params)->kernel, true };
        args = P(kg_cudaLaunchKernel_v13000_params)->args;
        break;
    case RT(cudaLaunchKernel_v7000):
    case RT(cudaLaunchKernel_ptsz_v7000): {
        CUfunction cf = NULL;
        tl_guard++;
        cudaError_t e = cudaGetFuncBySymbol(&cf, P(cudaLaunchKernel_v7000_params)->func);
        tl_guard--;
        if (e != cudaSuccess) {
            (void)cudaGetLastError(); /* never leave the query's error to the launcher */
            f = (cw_fn){ (void *)P(cudaLaunchKernel_v7000_params)->func, true }; /* CUDA 13 */
        } else
            f = (cw_fn){ cf, false };
        args = P(cudaLaunchKernel_v7000_params)->args;
        break;
    }
    default: return false;
    }
    return check_args(w, api, &f, args);
}

static bool check_driver_launch(kg_cupti_watch *w, uint32_t cbid, const void *p, const char *api)
{
    switch (cbid) {
    case DRV(cuLaunchKernel):
    case DRV(cuLaunchKernel_ptsz): {
        cw_fn f = { P(cuLaunchKernel_params)->f, false };
        return check_args(w, api, &f, P(cuLaunchKernel_params)->kernelParams);
    }
    default: return false;
    }
}

/* ---- launch configurations ------------------------------------------------------------- */

/* Into the fixed table: no allocation, no CUDA call (this runs inside the callback). */
static void lc_record(kg_cupti_watch *w, const void *h, unsigned threads, size_t smem)
{
    pthread_mutex_lock(&w->mu);
    size_t i;
    for (i = 0; i < w->n_lc; i++)
        if (w->lc[i].handle == h && w->lc[i].threads == threads && w->lc[i].smem == smem)
            break;
    if (i < w->n_lc)
        w->lc[i].count++;
    else if (w->n_lc < KG_CW_MAX_LAUNCHES)
        w->lc[w->n_lc++] = (kg_cw_launch){ h, threads, smem, 1 };
    else
        w->lc_dropped++;
    pthread_mutex_unlock(&w->mu);
}

static unsigned dim_threads(dim3 b) { return b.x * b.y * b.z; }

/* The runtime launches' kernel handle, block and dynamic shared memory; true when recorded. */
static bool lc_runtime(kg_cupti_watch *w, uint32_t cbid, const void *p)
{
    switch (cbid) {
    case RT(__cudaLaunchKernel_v13000):
    case RT(__cudaLaunchKernel_ptsz_v13000): {
        const kg_cudaLaunchKernel_v13000_params *q = P(kg_cudaLaunchKernel_v13000_params);
        lc_record(w, q->kernel, dim_threads(q->blockDim), q->sharedMem);
        return true;
    }
    case RT(cudaLaunchKernel_v7000):
    case RT(cudaLaunchKernel_ptsz_v7000): {
        const cudaLaunchKernel_v7000_params *q = P(cudaLaunchKernel_v7000_params);
        lc_record(w, q->func, dim_threads(q->blockDim), q->sharedMem);
        return true;
    }
    case RT(cudaLaunchKernelExC_v11060):
    case RT(cudaLaunchKernelExC_ptsz_v11060): {
        const cudaLaunchKernelExC_v11060_params *q = P(cudaLaunchKernelExC_v11060_params);
        if (!q->config)
            return false;
        lc_record(w, q->func, dim_threads(q->config->blockDim), q->config->dynamicSmemBytes);
        return true;
    }
    case RT(cudaLaunchCooperativeKernel_v9000):
    case RT(cudaLaunchCooperativeKernel_ptsz_v9000): {
        const cudaLaunchCooperativeKernel_v9000_params *q = P(
            cudaLaunchCooperativeKernel_v9000_params);
        lc_record(w, q->func, dim_threads(q->blockDim), q->sharedMem);
        return true;
    }
    default: return false;
    }
}

static bool lc_driver(kg_cupti_watch *w, uint32_t cbid, const void *p)
{
    switch (cbid) {
    case DRV(cuLaunchKernel):
    case DRV(cuLaunchKernel_ptsz): {
        const cuLaunchKernel_params *q = P(cuLaunchKernel_params);
        lc_record(w, q->f, q->blockDimX * q->blockDimY * q->blockDimZ, q->sharedMemBytes);
        return true;
    }
    case DRV(cuLaunchCooperativeKernel):
    case DRV(cuLaunchCooperativeKernel_ptsz): {
        const cuLaunchCooperativeKernel_params *q = P(cuLaunchCooperativeKernel_params);
        lc_record(w, q->f, q->blockDimX * q->blockDimY * q->blockDimZ, q->sharedMemBytes);
        return true;
    }
    case DRV(cuLaunchKernelEx):
    case DRV(cuLaunchKernelEx_ptsz): {
        const cuLaunchKernelEx_params *q = P(cuLaunchKernelEx_params);
        if (!q->config)
            return false;
        lc_record(w, q->f, q->config->blockDimX * q->config->blockDimY * q->config->blockDimZ,
                  q->config->sharedMemBytes);
        return true;
    }
    default: return false;
    }
}

/* A launch inside a launch already recorded (the driver's under the runtime's, a runtime
 * entry point calling another) is the same launch. */
static bool lc_outer_recorded(int lvl)
{
    for (int i = 0; i < lvl && i < MAX_NEST; i++)
        if (tl_lc[i])
            return true;
    return false;
}

static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                            const void *cbdata)
{
    kg_cupti_watch *w = userdata;
    const CUpti_CallbackData *cd = cbdata;
    char detail[96], base[64], rbase[64];
    if (tl_guard || !w || !cd || !w->enabled)
        return;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cd->callbackSite == CUPTI_API_EXIT) {
            if (tl_depth > 0)
                tl_depth--;
            return;
        }
        int lvl = tl_depth++;
        __atomic_add_fetch(&w->calls, 1, __ATOMIC_RELAXED);
        if (lvl < MAX_NEST) {
            tl_rt_cbid[lvl] = cbid;
            tl_flagged[lvl] = false;
            tl_args[lvl] = false;
            tl_lc[lvl] = false;
        }
        int cat = kg_cw_classify(dom, cbid, cd->functionParams, detail, sizeof detail);
        if (cat >= 0) {
            call_name(dom, cbid, cd->functionName, base, sizeof base);
            record(w, base, NULL, cat, detail);
            if (lvl < MAX_NEST)
                tl_flagged[lvl] = true;
        }
        if (lvl < MAX_NEST && cd->functionParams) {
            call_name(dom, cbid, cd->functionName, base, sizeof base);
            tl_args[lvl] = w->host_memory &&
                           check_runtime_launch(w, cbid, cd->functionParams, base);
            if (!lc_outer_recorded(lvl))
                tl_lc[lvl] = lc_runtime(w, cbid, cd->functionParams);
        }
        return;
    }
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API || cd->callbackSite != CUPTI_API_ENTER)
        return;
    if (tl_depth == 0)
        __atomic_add_fetch(&w->calls, 1, __ATOMIC_RELAXED);
    /* A driver launch's arguments, unless its runtime launch already had them checked; under
     * a runtime call it is charged to that call, as every other violation. */
    int alvl = tl_depth - 1 < MAX_NEST ? tl_depth - 1 : MAX_NEST - 1;
    if (cd->functionParams && (tl_depth == 0 || !tl_args[alvl])) {
        if (tl_depth > 0)
            call_name(CUPTI_CB_DOMAIN_RUNTIME_API, tl_rt_cbid[alvl], NULL, rbase, sizeof rbase);
        else
            call_name(dom, cbid, cd->functionName, rbase, sizeof rbase);
        if (w->host_memory && check_driver_launch(w, cbid, cd->functionParams, rbase) &&
            tl_depth > 0)
            tl_args[alvl] = true;
    }
    if (cd->functionParams && !lc_outer_recorded(tl_depth))
        (void)lc_driver(w, cbid, cd->functionParams);
    int cat = kg_cw_classify(dom, cbid, cd->functionParams, detail, sizeof detail);
    if (cat < 0)
        return;
    call_name(dom, cbid, cd->functionName, base, sizeof base);
    if (tl_depth > 0) {
        int lvl = tl_depth - 1 < MAX_NEST ? tl_depth - 1 : MAX_NEST - 1;
        if (tl_flagged[lvl])
            return; /* the runtime call was already counted */
        tl_flagged[lvl] = true;
        call_name(CUPTI_CB_DOMAIN_RUNTIME_API, tl_rt_cbid[lvl], NULL, rbase, sizeof rbase);
        record(w, rbase, base, cat, detail);
        return;
    }
    record(w, base, NULL, cat, detail);
}

/* Map every callback id of a domain to its table row. */
static void map_domain(CUpti_CallbackDomain dom, size_t size, int16_t *rule, uint8_t *flags)
{
    char base[128];
    for (size_t id = 0; id < size; id++) {
        const char *name = NULL;
        rule[id] = -1;
        flags[id] = 0;
        if (cuptiGetCallbackName(dom, (uint32_t)id, &name) != CUPTI_SUCCESS || !name)
            continue;
        if (strstr(name, "_ptsz"))
            flags[id] |= CB_PTSZ;
        kg_cw_base_name(name, base, sizeof base);
        rule[id] = (int16_t)kg_cw_rule_find(base);
    }
}

static void build_maps(void)
{
    map_domain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, g_rt_rule, g_rt_flags);
    map_domain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, g_drv_rule, g_drv_flags);
}

int kg_cw_rule_cbid_count(size_t i, int *count)
{
    char base[128];
    static const struct {
        CUpti_CallbackDomain d;
        size_t n;
    } doms[] = {
        { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE },
        { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE },
    };
    *count = 0;
    if (i >= KG_ARRAY_LEN(rules))
        return KG_ERR(KG_EINVAL, "forbidden-API rule %zu out of range", i);
    for (size_t d = 0; d < KG_ARRAY_LEN(doms); d++)
        for (size_t id = 0; id < doms[d].n; id++) {
            const char *name = NULL;
            if (cuptiGetCallbackName(doms[d].d, (uint32_t)id, &name) != CUPTI_SUCCESS || !name)
                continue;
            kg_cw_base_name(name, base, sizeof base);
            if (strcmp(base, rules[i].api) == 0)
                (*count)++;
        }
    return 0;
}

/* A driver entry point, or NULL when this driver lacks it (the check that needs it is off). */
static void *cw_entry(const char *name, int version)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, (unsigned)version, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

static int watch_new(kg_cupti_watch **out, bool subscribe)
{
    int rc = 0;
    void *probe[2];
    kg_cupti_watch *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w)
        return KG_ERR(KG_ENOMEM, "out of memory for the CUPTI watch");
    pthread_mutex_init(&w->mu, NULL);
    /* backtrace() loads libgcc on first use: do it here, not inside a callback. */
    (void)backtrace(probe, 2);
    pthread_once(&g_maps_once, build_maps);
    if (!subscribe)
        goto done;
    if (!g_ptr_attr) {
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult q;
        KG_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &fn, 12000,
                                                       cudaEnableDefault, &q));
        if (q != cudaDriverEntryPointSuccess || !fn) {
            rc = KG_ERR(KG_ECUDA, "the driver does not export cuPointerGetAttribute");
            goto cleanup;
        }
        g_ptr_attr = (ptr_attr_fn)fn;
        g_func_pinfo = (func_pinfo_fn)cw_entry("cuFuncGetParamInfo", 12040);
        g_kernel_pinfo = (kernel_pinfo_fn)cw_entry("cuKernelGetParamInfo", 12040);
        g_func_name = (func_name_fn)cw_entry("cuFuncGetName", 12030);
        g_kernel_name = (kernel_name_fn)cw_entry("cuKernelGetName", 12030);
    }
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
    CUpti_SubscriberParams sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    sp.subscriberName = "kgate hotpath";
    sp.oldSubscriberName = holder;
    sp.oldSubscriberSize = sizeof holder - 1;
    CUptiResult r = cuptiSubscribe_v2(&w->sub, on_api, w, &sp);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        rc = KG_ERR(KG_ECUPTI,
                    "CUPTI: the callback subscriber is already held by %s; the "
                    "hotpath gate cannot run under another CUPTI tool (Nsight, "
                    "compute-sanitizer)",
                    holder[0] ? holder : "another tool");
        goto cleanup;
    }
    KG_CUPTI_CHECK(r);
    w->subscribed = true;
done:
    *out = w;
    w = NULL;
cleanup:
    if (w) {
        pthread_mutex_destroy(&w->mu);
        free(w);
    }
    return rc;
}

int kg_cupti_watch_new(kg_cupti_watch **out) { return watch_new(out, true); }
int kg_cupti_watch_new_detached(kg_cupti_watch **out) { return watch_new(out, false); }

void kg_cupti_watch_feed(kg_cupti_watch *w, CUpti_CallbackDomain dom, uint32_t cbid,
                         const CUpti_CallbackData *cd)
{
    on_api(w, dom, (CUpti_CallbackId)cbid, cd);
}

void kg_cupti_watch_free(kg_cupti_watch *w)
{
    if (!w)
        return;
    if (w->enabled)
        (void)kg_cupti_watch_end(w);
    if (w->subscribed)
        (void)cuptiUnsubscribe(w->sub);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

int kg_cupti_watch_begin(kg_cupti_watch *w)
{
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    w->n = 0;
    w->dropped = 0;
    w->calls = 0;
    w->seq = 0;
    w->n_lc = 0;
    w->host_memory = kg_hp_host_memory_checks();
    w->lc_dropped = 0;
    pthread_mutex_unlock(&w->mu);
    tl_depth = 0;
    tl_guard = 0;
    w->enabled = true;
    if (!w->subscribed)
        return 0;
    KG_CUPTI_CHECK(cuptiEnableDomain(1, w->sub, CUPTI_CB_DOMAIN_RUNTIME_API));
    KG_CUPTI_CHECK(cuptiEnableDomain(1, w->sub, CUPTI_CB_DOMAIN_DRIVER_API));
cleanup:
    if (rc < 0)
        (void)kg_cupti_watch_end(w);
    return rc;
}

int kg_cupti_watch_end(kg_cupti_watch *w)
{
    int rc = 0;
    w->enabled = false;
    if (!w->subscribed)
        return 0;
    CUptiResult r1 = cuptiEnableDomain(0, w->sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    KG_CUPTI_CHECK(cuptiEnableDomain(0, w->sub, CUPTI_CB_DOMAIN_DRIVER_API));
    KG_CUPTI_CHECK(r1);
cleanup:
    return rc;
}

size_t kg_cupti_watch_count(const kg_cupti_watch *w) { return w->n; }

const kg_cw_launch *kg_cupti_watch_launches(const kg_cupti_watch *w, size_t *n,
                                            unsigned long *dropped)
{
    *n = w->n_lc;
    *dropped = w->lc_dropped;
    return w->lc;
}
unsigned long kg_cupti_watch_calls(const kg_cupti_watch *w) { return w->calls; }

const kg_cw_violation *kg_cupti_watch_get(const kg_cupti_watch *w, size_t i)
{
    return i < w->n ? &w->v[i] : NULL;
}

static bool in_cuda_lib(void *addr)
{
    Dl_info di;
    if (!dladdr(addr, &di) || !di.dli_fname)
        return false;
    return strstr(di.dli_fname, "libcupti") || strstr(di.dli_fname, "libcuda.so") ||
           strstr(di.dli_fname, "libcudart");
}

cJSON *kg_cw_backtrace_json(const kg_cw_violation *v)
{
    cJSON *arr = cJSON_CreateArray();
    int start = 0;
    if (!arr || v->n_frames <= 0)
        return arr;
    /* Drop our callback and the CUPTI/driver/runtime frames above the caller. */
    for (int i = 0; i < v->n_frames; i++)
        if (in_cuda_lib(v->frames[i]))
            start = i + 1;
    if (start >= v->n_frames)
        start = 0;
    char **sym = backtrace_symbols(v->frames + start, v->n_frames - start);
    if (!sym)
        return arr;
    for (int i = 0; i < v->n_frames - start; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(sym[i]));
    free(sym);
    return arr;
}
