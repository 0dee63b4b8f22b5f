/* The counters gate's CUPTI range-profiler session (CUDA 12.6+ / 13 API: cupti_range_profiler.h,
 * cupti_profiler_host.h, cupti_profiler_target.h), following NVIDIA's `range_profiling` sample:
 *
 *   cuptiProfilerInitialize -> cuptiDeviceGetChipName -> cuptiProfilerGetCounterAvailability
 *   -> cuptiProfilerHostInitialize -> cuptiProfilerHostGetBaseMetrics (what exists here)
 *   -> cuptiProfilerHostConfigAddMetrics -> GetConfigImageSize / GetConfigImage
 *   -> GetNumOfPasses -> cuptiRangeProfilerEnable(ctx)
 *   per profiled launch: GetCounterDataSize -> CounterDataImageInitialize -> SetConfig
 *   (CUPTI_AutoRange: one range per kernel; CUPTI_KernelReplay: CUPTI replays each kernel for
 *   its passes, saving and restoring device memory) -> Start -> launch -> sync -> Stop
 *   -> DecodeData -> GetCounterDataInfo -> per range EvaluateToGpuValues
 *   close: cuptiRangeProfilerDisable -> cuptiProfilerHostDeinitialize -> cuptiProfilerDeInitialize
 *
 * Every call goes through CT_CALL: logged with its name and CUPTI's result string (to the log
 * stream, `--counters-log` / the probe's stdout), and on failure the error names it. */
#include <cuda.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include "core/cupti_check.h"
#include "counters/counters.h"

#define CT_MAX_RANGES 64

struct kg_ct_session {
    FILE *log;
    CUcontext ctx;
    char chip[64];
    uint8_t *avail_img;
    size_t avail_size;
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *rp;
    bool prof_init, enabled;
    int chosen[KG_CT_N];            /* index into kg_ct_metrics[i].names, -1 unavailable */
    const char *names[KG_CT_N];     /* the resolved names, in figure order (NULL: none) */
    const char *cfg_names[KG_CT_N]; /* the names added to the config */
    kg_ct_metric cfg_fig[KG_CT_N];  /* figure of each config name */
    size_t n_cfg;
    uint8_t *config;
    size_t config_size;
    size_t passes;
    kg_ct_avail avail;
    char *related;    /* base metrics naming tensor / ops_path / sysmem, '\n' */
    bool user_replay; /* kgate replays the passes (flush before each), else CUPTI */
    void *scratch;    /* the L2 flush's read buffer (4x L2, zeroed) */
    size_t scratch_bytes;
    unsigned *sink;
};

/* Keep the base names a GPU run must report (which tensor-FLOP and sysmem metrics exist). */
static bool ct_related(const char *name)
{
    return name && (strstr(name, "tensor") || strstr(name, "ops_path") || strstr(name, "sysmem"));
}

static void ct_keep_related(kg_ct_session *s, const char *const *known, size_t n)
{
    size_t size = 1, at = 0;
    for (size_t i = 0; i < n; i++)
        size += ct_related(known[i]) ? strlen(known[i]) + 1 : 0;
    if (!(s->related = calloc(1, size)))
        return; /* a diagnostic only: the probe then prints none */
    for (size_t i = 0; i < n; i++) {
        if (!ct_related(known[i]))
            continue;
        size_t l = strlen(known[i]);
        memcpy(s->related + at, known[i], l);
        s->related[at + l] = '\n';
        at += l + 1;
    }
}

const char *kg_ct_session_related(const kg_ct_session *s)
{
    return s && s->related ? s->related : "";
}

static kg_ct_avail ct_classify(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES: return KG_CT_AVAIL_PRIVILEGE;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED: return KG_CT_AVAIL_BUSY;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED: return KG_CT_AVAIL_UNSUPPORTED;
    default: return KG_CT_AVAIL_OK;
    }
}

static const char *ct_rs(CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    return s;
}

/* Log the call, and on failure set the error (naming the call) and jump to cleanup. */
#define CT_CALL(s, name, expr)                                                                    \
    do {                                                                                          \
        CUptiResult ct_r_ = (expr);                                                               \
        if ((s)->log)                                                                             \
            fprintf((s)->log, "counters: cupti %s -> %s (%d)\n", name, ct_rs(ct_r_), (int)ct_r_); \
        if (ct_r_ != CUPTI_SUCCESS) {                                                             \
            if ((s)->avail == KG_CT_AVAIL_OK)                                                     \
                (s)->avail = ct_classify(ct_r_);                                                  \
            rc = kg_error_set(KG_ECUPTI, __FILE__, __LINE__, "%s failed: %s (%d)", name,          \
                              ct_rs(ct_r_), (int)ct_r_);                                          \
            goto cleanup;                                                                         \
        }                                                                                         \
    } while (0)

/* The current context through the runtime's driver entry point (the runners must start without
 * libcuda.so.1: a machine without a GPU has none, and then every case is SKIP). */
typedef CUresult (*ct_ctx_get_fn)(CUcontext *);
static int ct_context(kg_ct_session *s)
{
    int rc = 0;
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    KG_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn)
        return KG_ERR(KG_ECUDA, "cuCtxGetCurrent: no driver entry point (query result %d)", (int)q);
    CUresult r = ((ct_ctx_get_fn)fn)(&s->ctx);
    if (s->log)
        fprintf(s->log, "counters: cuda cuCtxGetCurrent -> %d, context %p\n", (int)r,
                (void *)s->ctx);
    if (r != CUDA_SUCCESS || !s->ctx)
        return KG_ERR(KG_ECUDA, "cuCtxGetCurrent failed: CUresult %d (context %p)", (int)r,
                      (void *)s->ctx);
cleanup:
    return rc;
}

static double ct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int ct_host_init(kg_ct_session *s)
{
    int rc = 0;
    CUpti_Profiler_Host_Initialize_Params p = { CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = s->chip;
    p.pCounterAvailabilityImage = s->avail_img;
    CT_CALL(s, "cuptiProfilerHostInitialize", cuptiProfilerHostInitialize(&p));
    s->host = p.pHostObject;
cleanup:
    return rc;
}

static void ct_host_deinit(kg_ct_session *s)
{
    if (!s->host)
        return;
    CUpti_Profiler_Host_Deinitialize_Params p = {
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE
    };
    p.pHostObject = s->host;
    CUptiResult r = cuptiProfilerHostDeinitialize(&p);
    if (s->log)
        fprintf(s->log, "counters: cupti cuptiProfilerHostDeinitialize -> %s\n", ct_rs(r));
    s->host = NULL;
}

/* Chip name and counter availability (the image filters what this context can collect). */
static int ct_device(kg_ct_session *s, int device)
{
    int rc = 0;
    CUpti_Profiler_Initialize_Params ip = { CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
    CT_CALL(s, "cuptiProfilerInitialize", cuptiProfilerInitialize(&ip));
    s->prof_init = true;
    CUpti_Device_GetChipName_Params cn = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
    cn.deviceIndex = (size_t)device;
    CT_CALL(s, "cuptiDeviceGetChipName", cuptiDeviceGetChipName(&cn));
    snprintf(s->chip, sizeof s->chip, "%s", cn.pChipName ? cn.pChipName : "?");
    CUpti_Profiler_GetCounterAvailability_Params ca = {
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE
    };
    ca.ctx = s->ctx;
    CT_CALL(s, "cuptiProfilerGetCounterAvailability(size)",
            cuptiProfilerGetCounterAvailability(&ca));
    if (!(s->avail_img = calloc(1, ca.counterAvailabilityImageSize + 1)))
        return KG_ERR(KG_ENOMEM, "out of memory for the counter availability image");
    s->avail_size = ca.counterAvailabilityImageSize;
    ca.pCounterAvailabilityImage = s->avail_img;
    CT_CALL(s, "cuptiProfilerGetCounterAvailability", cuptiProfilerGetCounterAvailability(&ca));
    if (s->log)
        fprintf(s->log, "counters: chip %s, availability image %zu bytes\n", s->chip,
                s->avail_size);
cleanup:
    return rc;
}

/* Which wanted metrics exist here: the base metrics of every type, resolved against the table. */
static int ct_enumerate(kg_ct_session *s)
{
    int rc = 0;
    const char **known = NULL;
    size_t n_known = 0;
    for (int t = CUPTI_METRIC_TYPE_COUNTER; t < CUPTI_METRIC_TYPE__COUNT; t++) {
        CUpti_Profiler_Host_GetBaseMetrics_Params p = {
            CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE
        };
        p.pHostObject = s->host;
        p.metricType = (CUpti_MetricType)t;
        CT_CALL(s, "cuptiProfilerHostGetBaseMetrics", cuptiProfilerHostGetBaseMetrics(&p));
        const char **grown = realloc(known, (n_known + p.numMetrics + 1) * sizeof *known);
        if (!grown)
            KG_TRY(KG_ERR(KG_ENOMEM, "out of memory listing the device's metrics"));
        known = grown;
        for (size_t i = 0; i < p.numMetrics; i++)
            known[n_known++] = p.ppMetricNames[i];
    }
    size_t got = kg_ct_resolve(s->chosen, known, n_known);
    ct_keep_related(s, known, n_known);
    if (s->log)
        fprintf(s->log, "counters: %zu base metrics on %s; %zu of %d wanted figures resolved\n",
                n_known, s->chip, got, (int)KG_CT_N);
    for (int i = 0; i < KG_CT_N; i++) {
        s->names[i] = s->chosen[i] >= 0 ? kg_ct_metrics[i].names[s->chosen[i]] : NULL;
        if (s->log)
            fprintf(s->log, "counters:   %-20s %s\n", kg_ct_metrics[i].key,
                    s->names[i] ? s->names[i] : "(unavailable: no candidate name exists)");
    }
cleanup:
    free(known);
    return rc;
}

/* Add the resolved metrics; a set the host refuses as a whole is retried one by one on a
 * fresh host object, keeping those it accepts (each refusal logged). */
static int ct_add_metrics(kg_ct_session *s)
{
    int rc = 0;
    s->n_cfg = 0;
    for (int i = 0; i < KG_CT_N; i++)
        if (s->names[i]) {
            s->cfg_fig[s->n_cfg] = (kg_ct_metric)i;
            s->cfg_names[s->n_cfg++] = s->names[i];
        }
    CUpti_Profiler_Host_ConfigAddMetrics_Params p = {
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
    };
    p.pHostObject = s->host;
    p.ppMetricNames = s->cfg_names;
    p.numMetrics = s->n_cfg;
    CUptiResult r = cuptiProfilerHostConfigAddMetrics(&p);
    if (s->log)
        fprintf(s->log, "counters: cupti cuptiProfilerHostConfigAddMetrics(%zu) -> %s\n", s->n_cfg,
                ct_rs(r));
    if (r == CUPTI_SUCCESS)
        return 0;
    ct_host_deinit(s);
    KG_TRY(ct_host_init(s));
    size_t kept = 0;
    for (size_t j = 0; j < s->n_cfg; j++) {
        p.pHostObject = s->host;
        p.ppMetricNames = &s->cfg_names[j];
        p.numMetrics = 1;
        r = cuptiProfilerHostConfigAddMetrics(&p);
        if (s->log)
            fprintf(s->log, "counters: cupti cuptiProfilerHostConfigAddMetrics(%s) -> %s\n",
                    s->cfg_names[j], ct_rs(r));
        if (r == CUPTI_SUCCESS) {
            s->cfg_names[kept] = s->cfg_names[j];
            s->cfg_fig[kept++] = s->cfg_fig[j];
        } else {
            s->names[s->cfg_fig[j]] = NULL;
        }
    }
    s->n_cfg = kept;
    if (!kept)
        rc = KG_ERR(KG_ECUPTI, "cuptiProfilerHostConfigAddMetrics accepted none of the metrics");
cleanup:
    return rc;
}

static int ct_config(kg_ct_session *s)
{
    int rc = 0;
    KG_TRY(ct_add_metrics(s));
    CUpti_Profiler_Host_GetConfigImageSize_Params zs = {
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
    };
    zs.pHostObject = s->host;
    CT_CALL(s, "cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&zs));
    if (!(s->config = calloc(1, zs.configImageSize + 1)))
        return KG_ERR(KG_ENOMEM, "out of memory for the profiler config image");
    s->config_size = zs.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params ci = {
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
    };
    ci.pHostObject = s->host;
    ci.pConfigImage = s->config;
    ci.configImageSize = s->config_size;
    CT_CALL(s, "cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&ci));
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE
    };
    np.pConfigImage = s->config;
    np.configImageSize = s->config_size;
    CT_CALL(s, "cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&np));
    s->passes = np.numOfPasses;
    if (s->log)
        fprintf(s->log, "counters: %zu metrics, config %zu bytes, %zu replay passes\n", s->n_cfg,
                s->config_size, s->passes);
cleanup:
    return rc;
}

/* The L2 flush's scratch: 4x the L2 (counters_flush.cu says why), zeroed once. */
static int ct_scratch(kg_ct_session *s, int device)
{
    int rc = 0, l2 = 0;
    KG_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    s->scratch_bytes = 4 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    KG_CUDA_CHECK(cudaMalloc(&s->scratch, s->scratch_bytes));
    KG_CUDA_CHECK(cudaMalloc((void **)&s->sink, sizeof *s->sink));
    KG_CUDA_CHECK(cudaMemset(s->scratch, 0, s->scratch_bytes));
    KG_CUDA_CHECK(cudaDeviceSynchronize());
    const char *r = kg_env("KGATE_COUNTERS_REPLAY");
    s->user_replay = !(r && strcmp(r, "kernel") == 0);
    if (s->log)
        fprintf(s->log, "counters: L2 %d bytes, flush scratch %zu bytes, %s replay\n", l2,
                s->scratch_bytes, s->user_replay ? "user" : "kernel");
cleanup:
    return rc;
}

const char *kg_ct_session_replay(const kg_ct_session *s)
{
    return s && s->user_replay ? "user" : "kernel";
}

/* The warm-up range's work: a 4 KiB read of the scratch (no store, as every flush). */
static int ct_warm_launch(void *arg, cudaStream_t stream)
{
    kg_ct_session *s = arg;
    return kg_ct_l2_flush(s->scratch, 4096, s->sink, stream);
}

/* One range profiled and thrown away. A session's first range counts DRAM write-backs that
 * no later range counts: measured on the H200 (2026-12-04), a 4 MiB copy's first range wrote
 * 3.7 MB (every later range, and ncu: 0), a 64 MiB copy's 74 MB (later: 45 MB), whatever the
 * flush scratch's state and after a memset of 4x the L2 had evicted every line; a tiny range
 * before it absorbs them all and counts 3 KB itself. tests/gpu_counters_probe.c checks it. */
static int ct_warm(kg_ct_session *s)
{
    int rc = 0;
    cudaStream_t st = NULL;
    kg_ct_counts c;
    double wall = 0;
    kg_ct_work w = { .launch = ct_warm_launch, .arg = s };
    KG_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    if (s->log)
        fprintf(s->log, "counters: warm-up range profiled and dropped (%.3g s)\n", wall);
cleanup:
    if (st)
        (void)cudaStreamDestroy(st); /* the range is done: nothing on it to lose */
    return rc;
}

int kg_ct_session_open(kg_ct_session **out, kg_ct_avail *avail, int device, FILE *log)
{
    int rc = 0;
    kg_ct_session *s = calloc(1, sizeof *s);
    *out = NULL;
    *avail = KG_CT_AVAIL_OK;
    if (!s)
        return KG_ERR(KG_ENOMEM, "out of memory opening the counters session");
    s->log = log;
    KG_CUDA_CHECK(cudaSetDevice(device));
    KG_CUDA_CHECK(cudaFree(NULL)); /* the runtime's primary context exists */
    KG_TRY(ct_context(s));
    KG_TRY(ct_device(s, device));
    KG_TRY(ct_host_init(s));
    KG_TRY(ct_enumerate(s));
    KG_TRY(ct_config(s));
    KG_TRY(ct_scratch(s, device));
    CUpti_RangeProfiler_Enable_Params en = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
    en.ctx = s->ctx;
    CT_CALL(s, "cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&en));
    s->rp = en.pRangeProfilerObject;
    s->enabled = true;
    KG_TRY(ct_warm(s));
    *out = s;
    s = NULL;
cleanup:
    if (s)
        *avail = s->avail;
    kg_ct_session_close(s);
    return rc;
}

void kg_ct_session_close(kg_ct_session *s)
{
    if (!s)
        return;
    if (s->enabled) {
        CUpti_RangeProfiler_Disable_Params p = { CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
        p.pRangeProfilerObject = s->rp;
        CUptiResult r = cuptiRangeProfilerDisable(&p);
        if (s->log)
            fprintf(s->log, "counters: cupti cuptiRangeProfilerDisable -> %s\n", ct_rs(r));
    }
    ct_host_deinit(s);
    if (s->prof_init) {
        CUpti_Profiler_DeInitialize_Params p = { CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE };
        CUptiResult r = cuptiProfilerDeInitialize(&p);
        if (s->log)
            fprintf(s->log, "counters: cupti cuptiProfilerDeInitialize -> %s\n", ct_rs(r));
    }
    if (s->scratch)
        (void)cudaFree(s->scratch); /* closing: a failure here has nothing left to undo */
    if (s->sink)
        (void)cudaFree(s->sink);
    free(s->config);
    free(s->avail_img);
    free(s->related);
    free(s);
}

void kg_ct_session_set_log(kg_ct_session *s, FILE *log)
{
    if (s)
        s->log = log;
}

const char *kg_ct_session_chip(const kg_ct_session *s) { return s->chip; }
size_t kg_ct_session_passes(const kg_ct_session *s) { return s->passes; }
const char *kg_ct_session_metric(const kg_ct_session *s, kg_ct_metric i)
{
    return i < KG_CT_N ? s->names[i] : NULL;
}

/* A fresh counter-data image for one profiled launch, and the config set on it. */
static int ct_arm(kg_ct_session *s, uint8_t **img, size_t *size)
{
    int rc = 0;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE
    };
    ds.pRangeProfilerObject = s->rp;
    ds.pMetricNames = s->cfg_names;
    ds.numMetrics = s->n_cfg;
    ds.maxNumOfRanges = CT_MAX_RANGES;
    ds.maxNumRangeTreeNodes = CT_MAX_RANGES;
    CT_CALL(s, "cuptiRangeProfilerGetCounterDataSize", cuptiRangeProfilerGetCounterDataSize(&ds));
    if (!(*img = calloc(1, ds.counterDataSize + 1)))
        return KG_ERR(KG_ENOMEM, "out of memory for the counter data image");
    *size = ds.counterDataSize;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE
    };
    ci.pRangeProfilerObject = s->rp;
    ci.pCounterData = *img;
    ci.counterDataSize = *size;
    CT_CALL(s, "cuptiRangeProfilerCounterDataImageInitialize",
            cuptiRangeProfilerCounterDataImageInitialize(&ci));
    CUpti_RangeProfiler_SetConfig_Params sc = { CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
    sc.pRangeProfilerObject = s->rp;
    sc.pConfig = s->config;
    sc.configSize = s->config_size;
    sc.pCounterDataImage = *img;
    sc.counterDataImageSize = *size;
    sc.range = CUPTI_AutoRange;
    sc.replayMode = s->user_replay ? CUPTI_UserReplay : CUPTI_KernelReplay;
    sc.maxRangesPerPass = CT_MAX_RANGES;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    if (s->user_replay) {
        /* user replay is what lets kgate flush the L2 before every pass; a profiler that
         * refuses it still counts through kernel replay (first pass flushed only) */
        CUptiResult r = cuptiRangeProfilerSetConfig(&sc);
        if (s->log)
            fprintf(s->log, "counters: cupti cuptiRangeProfilerSetConfig(user replay) -> %s\n",
                    ct_rs(r));
        if (r == CUPTI_SUCCESS)
            goto cleanup;
        s->user_replay = false;
        sc.replayMode = CUPTI_KernelReplay;
    }
    CT_CALL(s, "cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig(&sc));
cleanup:
    return rc;
}

/* Before a pass: the case's prepare (in-place inputs), then the L2 flush (clean and cold);
 * with kernel replay CUPTI runs the later passes inside the launch, so only the first. */
static int ct_before_pass(kg_ct_session *s, const kg_ct_work *w, cudaStream_t stream, int round)
{
    int rc = 0;
    if (!s->user_replay && round > 0)
        return 0;
    if (w->prepare)
        KG_TRY(w->prepare(w->arg, stream));
    KG_TRY(kg_ct_l2_flush(s->scratch, s->scratch_bytes, s->sink, stream));
cleanup:
    return rc;
}

/* Per pass (user replay; kernel replay submits every pass in one round, logged if not):
 * prepare + L2 flush, start, the launch, synchronize, stop. Passes still missing after
 * CT_MAX_ROUNDS rounds are an error: the decoded counts would be those of some passes. */
#define CT_MAX_ROUNDS 64
static int ct_collect(kg_ct_session *s, const kg_ct_work *w, cudaStream_t stream)
{
    int rc = 0, lrc = 0;
    bool started = false;
    for (int round = 0;; round++) {
        if (round == CT_MAX_ROUNDS)
            return KG_ERR(KG_ECUPTI,
                          "cuptiRangeProfilerStop: not every replay pass submitted "
                          "after %d launches (%zu passes configured)",
                          CT_MAX_ROUNDS, s->passes);
        KG_TRY(ct_before_pass(s, w, stream, round));
        CUpti_RangeProfiler_Start_Params st = { CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
        st.pRangeProfilerObject = s->rp;
        CT_CALL(s, "cuptiRangeProfilerStart", cuptiRangeProfilerStart(&st));
        started = true;
        lrc = w->launch(w->arg, stream);
        /* the device, not the stream: whatever the launch put anywhere ends inside the range */
        cudaError_t e = cudaDeviceSynchronize();
        CUpti_RangeProfiler_Stop_Params sp = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
        sp.pRangeProfilerObject = s->rp;
        started = false;
        CT_CALL(s, "cuptiRangeProfilerStop", cuptiRangeProfilerStop(&sp));
        if (lrc < 0)
            return lrc; /* the launch's own error */
        if (e != cudaSuccess)
            return KG_ERR(KG_ECUDA, "the profiled launch failed: %s (%s)", cudaGetErrorName(e),
                          cudaGetErrorString(e));
        if (sp.isAllPassSubmitted)
            break;
        if (s->log && !s->user_replay)
            fprintf(s->log, "counters: pass %zu submitted, not all: launching again\n",
                    sp.passIndex);
    }
cleanup:
    if (started) {
        CUpti_RangeProfiler_Stop_Params sp = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
        sp.pRangeProfilerObject = s->rp;
        (void)cuptiRangeProfilerStop(&sp);
    }
    return rc;
}

/* Decode, then one kernel's values per range into c. */
static int ct_evaluate(kg_ct_session *s, kg_ct_counts *c, uint8_t *img, size_t size)
{
    int rc = 0;
    double vals[KG_CT_N], got[KG_CT_N];
    CUpti_RangeProfiler_DecodeData_Params dd = {
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE
    };
    dd.pRangeProfilerObject = s->rp;
    CT_CALL(s, "cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&dd));
    if (dd.numOfRangeDropped && s->log)
        fprintf(s->log, "counters: %zu ranges dropped (more than %d kernels per launch)\n",
                dd.numOfRangeDropped, CT_MAX_RANGES);
    CUpti_RangeProfiler_GetCounterDataInfo_Params di = {
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE
    };
    di.pCounterDataImage = img;
    di.counterDataImageSize = size;
    CT_CALL(s, "cuptiRangeProfilerGetCounterDataInfo", cuptiRangeProfilerGetCounterDataInfo(&di));
    for (size_t r = 0; r < di.numTotalRanges; r++) {
        bool have[KG_CT_N] = { 0 };
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE
        };
        ev.pHostObject = s->host;
        ev.pCounterDataImage = img;
        ev.counterDataImageSize = size;
        ev.rangeIndex = r;
        ev.ppMetricNames = s->cfg_names;
        ev.numMetrics = s->n_cfg;
        ev.pMetricValues = got;
        CT_CALL(s, "cuptiProfilerHostEvaluateToGpuValues",
                cuptiProfilerHostEvaluateToGpuValues(&ev));
        for (int i = 0; i < KG_CT_N; i++)
            vals[i] = NAN;
        for (size_t j = 0; j < s->n_cfg; j++) {
            vals[s->cfg_fig[j]] = got[j];
            have[s->cfg_fig[j]] = true;
        }
        kg_ct_add_kernel(c, vals, have);
    }
    if (s->log)
        fprintf(s->log, "counters: %zu ranges (kernels) decoded\n", di.numTotalRanges);
cleanup:
    return rc;
}

int kg_ct_session_profile(kg_ct_session *s, kg_ct_counts *c, double *wall_s, const kg_ct_work *w,
                          cudaStream_t stream)
{
    int rc = 0;
    uint8_t *img = NULL;
    size_t size = 0;
    double t0 = ct_now();
    memset(c, 0, sizeof *c);
    KG_TRY(ct_arm(s, &img, &size));
    KG_TRY(ct_collect(s, w, stream));
    KG_TRY(ct_evaluate(s, c, img, size));
    kg_ct_derive(c);
    *wall_s = ct_now() - t0;
cleanup:
    free(img);
    return rc;
}
