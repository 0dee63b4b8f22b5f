/* cpu: the hotpath gate's call classification and its callback bookkeeping, fed synthetic
 * CUPTI callback records (the same structures CUPTI hands the callback on a GPU):
 * host-side and default-stream detection from the real parameter structs, allowed calls
 * staying allowed, one violation per runtime call even with the driver call underneath,
 * direct driver calls (what cuBLAS does) judged on their own, counts and backtraces, the
 * first violation left in the phase page's evidence slot. */
#include <string.h>
#include "hotpath/cupti_watch.h"
#include "core/kg_core.h"
#include "kg_test.h"

#define S_OK ((cudaStream_t)(uintptr_t)0x5000) /* a non-default stream handle */
#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

/* Same layout as cudaLaunchKernel's (see cupti_watch.c). */
typedef struct {
    void *kernel;
    dim3 gridDim, blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
} launch13_params;

static int cls(CUpti_CallbackDomain d, uint32_t cbid, const void *p, char *detail)
{
    return kg_cw_classify(d, cbid, p, detail, 96);
}

static void check_classify(void)
{
    char det[96];
    cudaMemcpyAsync_v3020_params mc = { (void *)0x1000, (const void *)0x2000, 64,
                                        cudaMemcpyDeviceToHost, S_OK };
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &mc, det) == KG_CW_HOST_COPY);
    CHECK(strstr(det, "DeviceToHost") != NULL);
    mc.kind = cudaMemcpyHostToDevice;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &mc, det) == KG_CW_HOST_COPY);
    mc.kind = cudaMemcpyDeviceToDevice;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &mc, det) == -1);
    mc.stream = NULL;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &mc, det) ==
          KG_CW_DEFAULT_STREAM);
    CHECK(strstr(det, "legacy") != NULL);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, &mc, det) ==
          KG_CW_DEFAULT_STREAM);
    CHECK(strstr(det, "per-thread") != NULL);
    /* Without a driver the watch cannot ask where a Default-kind pointer lives: host. */
    mc.kind = cudaMemcpyDefault;
    mc.stream = S_OK;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &mc, det) == KG_CW_HOST_COPY);

    cudaMemcpy2DAsync_v3020_params m2 = {
        (void *)0x1000, 64, (const void *)0x2000, 64, 64, 4, cudaMemcpyHostToDevice, S_OK
    };
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020, &m2, det) == KG_CW_HOST_COPY);

    launch13_params l13 = { (void *)0x10, { 1, 1, 1 }, { 32, 1, 1 }, NULL, 0, S_OK };
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &l13, det) == -1);
    l13.stream = NULL;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &l13, det) ==
          KG_CW_DEFAULT_STREAM);
    l13.stream = cudaStreamPerThread;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &l13, det) ==
          KG_CW_DEFAULT_STREAM);
    CHECK(strcmp(det, "cudaStreamPerThread") == 0);

    cudaLaunchKernel_v7000_params lk = { (const void *)0x10, { 1, 1, 1 }, { 32, 1, 1 }, NULL, 0,
                                         cudaStreamLegacy };
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &lk, det) ==
          KG_CW_DEFAULT_STREAM);
    lk.stream = S_OK;
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &lk, det) == -1);

    cudaMemsetAsync_v3020_params ms = { (void *)0x1000, 0, 64, S_OK };
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &ms, det) == -1);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, &ms, det) == KG_CW_HOST_COPY);

    cuLaunchKernel_params cl;
    memset(&cl, 0, sizeof cl);
    cl.hStream = CU_STREAM_LEGACY;
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cl, det) == KG_CW_DEFAULT_STREAM);
    cl.hStream = (CUstream)S_OK;
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cl, det) == -1);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, &cl, det) == -1);

    cuMemcpyDtoDAsync_v2_params dd = { 0x1000, 0x2000, 64, (CUstream)S_OK };
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &dd, det) == -1);
    dd.hStream = CU_STREAM_PER_THREAD;
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &dd, det) == KG_CW_DEFAULT_STREAM);

    /* Unconditional rows: params are not even looked at. */
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, NULL, det) == KG_CW_HOST_COPY);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, NULL, det) == KG_CW_SYNC);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, NULL, det) == KG_CW_ALLOC);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, NULL, det) == KG_CW_ALLOC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, NULL, det) == KG_CW_ALLOC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, NULL, det) == KG_CW_SYNC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, NULL, det) == KG_CW_SYNC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, NULL, det) == KG_CW_OBJECTS);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, NULL, det) ==
          KG_CW_OBJECTS);
    /* Host functions: on any stream, by the runtime or the driver. */
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000, NULL, det) ==
          KG_CW_HOST_FUNC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000, NULL, det) ==
          KG_CW_HOST_FUNC);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000, NULL, det) ==
          KG_CW_HOST_FUNC);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, NULL, det) == KG_CW_HOST_FUNC);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback, NULL, det) == KG_CW_HOST_FUNC);
    /* Allowed. */
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, NULL, det) == -1);
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, NULL, det) == -1);
    CHECK(cls(DRV, CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, NULL, det) == -1);
    /* Out of range ids never match. */
    CHECK(cls(RT, CUPTI_RUNTIME_TRACE_CBID_SIZE + 5, NULL, det) == -1);
}

static void feed(kg_cupti_watch *w, CUpti_CallbackDomain d, uint32_t cbid,
                 CUpti_ApiCallbackSite site, const void *params)
{
    CUpti_CallbackData cd;
    const char *name = NULL;
    memset(&cd, 0, sizeof cd);
    (void)cuptiGetCallbackName(d, cbid, &name);
    cd.callbackSite = site;
    cd.functionName = name;
    cd.functionParams = params;
    kg_cupti_watch_feed(w, d, cbid, &cd);
}

static const kg_cw_violation *find(const kg_cupti_watch *w, const char *api)
{
    for (size_t i = 0; i < kg_cupti_watch_count(w); i++)
        if (strcmp(kg_cupti_watch_get(w, i)->api, api) == 0)
            return kg_cupti_watch_get(w, i);
    return NULL;
}

static void check_feed(void)
{
    kg_cupti_watch *w = NULL;
    const uint32_t malloc_id = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    const uint32_t memalloc_id = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2;
    int rc = kg_cupti_watch_new_detached(&w);
    CHECK(rc == 0 && w);
    if (!w)
        return;
    /* Disabled: nothing is recorded. */
    feed(w, RT, malloc_id, CUPTI_API_ENTER, NULL);
    feed(w, RT, malloc_id, CUPTI_API_EXIT, NULL);
    CHECK(kg_cupti_watch_count(w) == 0);

    kg_phase_set("hotpath", "watch/case", "launch under observation (CUPTI)");
    char ev[256];
    CHECK(!kg_phase_evidence_get(ev, sizeof ev));
    CHECK(kg_cupti_watch_begin(w) == 0);
    /* cudaMalloc with cuMemAlloc underneath: one violation, the runtime call's. */
    for (int i = 0; i < 2; i++) {
        feed(w, RT, malloc_id, CUPTI_API_ENTER, NULL);
        feed(w, DRV, memalloc_id, CUPTI_API_ENTER, NULL);
        feed(w, DRV, memalloc_id, CUPTI_API_EXIT, NULL);
        feed(w, RT, malloc_id, CUPTI_API_EXIT, NULL);
    }
    CHECK(kg_cupti_watch_count(w) == 1);
    const kg_cw_violation *v = find(w, "cudaMalloc");
    CHECK(v && v->count == 2 && v->category == KG_CW_ALLOC && v->via[0] == '\0');
    CHECK(v && v->n_frames > 0);
    if (v) {
        cJSON *bt = kg_cw_backtrace_json(v);
        CHECK(cJSON_GetArraySize(bt) > 0);
        cJSON_Delete(bt);
    }
    CHECK(find(w, "cuMemAlloc") == NULL);
    /* The first violation is in the phase page the moment it is seen (it outlives a worker
     * that exits later in the case), with the reason's words the gate's message uses. */
    CHECK_MSG(kg_phase_evidence_get(ev, sizeof ev) &&
                  strncmp(ev, "cudaMalloc [alloc/free] in launch", 33) == 0,
              "evidence after the first cudaMalloc: '%s'", ev);

    /* A library calling the driver directly (cuBLAS): judged on its own. */
    feed(w, DRV, memalloc_id, CUPTI_API_ENTER, NULL);
    feed(w, DRV, memalloc_id, CUPTI_API_EXIT, NULL);
    v = find(w, "cuMemAlloc");
    CHECK(v && v->count == 1 && v->category == KG_CW_ALLOC);
    CHECK(kg_phase_evidence_get(ev, sizeof ev) && strncmp(ev, "cudaMalloc ", 11) == 0);

    /* An allowed runtime launch whose driver launch goes to a default stream: charged to the
     * runtime call, naming the driver call (the fallback when runtime params are unknown). */
    launch13_params l13 = { (void *)0x10, { 1, 1, 1 }, { 32, 1, 1 }, NULL, 0, S_OK };
    cuLaunchKernel_params cl;
    memset(&cl, 0, sizeof cl);
    cl.hStream = NULL;
    feed(w, RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_ENTER, &l13);
    feed(w, DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &cl);
    feed(w, DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &cl);
    feed(w, RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_EXIT, &l13);
    v = find(w, "__cudaLaunchKernel");
    CHECK(v && v->category == KG_CW_DEFAULT_STREAM && strcmp(v->via, "cuLaunchKernel") == 0);

    /* A clean launch on the case stream, nested driver launch on the same stream: nothing. */
    size_t before = kg_cupti_watch_count(w);
    cl.hStream = (CUstream)S_OK;
    feed(w, RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_ENTER, &l13);
    feed(w, DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &cl);
    feed(w, DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &cl);
    feed(w, RT, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_API_EXIT, &l13);
    CHECK(kg_cupti_watch_count(w) == before);
    /* Runtime calls, plus driver calls outside any runtime call, are counted. */
    CHECK(kg_cupti_watch_calls(w) == 5);
    /* First occurrence first. */
    CHECK(strcmp(kg_cupti_watch_get(w, 0)->api, "cudaMalloc") == 0);

    CHECK(kg_cupti_watch_end(w) == 0);
    feed(w, RT, malloc_id, CUPTI_API_ENTER, NULL);
    feed(w, RT, malloc_id, CUPTI_API_EXIT, NULL);
    CHECK(find(w, "cudaMalloc")->count == 2);
    /* begin clears. */
    CHECK(kg_cupti_watch_begin(w) == 0);
    CHECK(kg_cupti_watch_count(w) == 0 && kg_cupti_watch_calls(w) == 0);
    CHECK(kg_cupti_watch_end(w) == 0);
    kg_cupti_watch_free(w);
}

int main(void)
{
    check_classify();
    check_feed();
    return kg_test_done("test_hotpath_watch");
}
