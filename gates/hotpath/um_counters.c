/* CUPTI unified-memory counters around the observed launches (see um_counters.h). The
 * activity API needs no callback subscriber (the watch holds that slot); its buffer callbacks
 * are process-wide, so they are registered at every begin: the bench's kernel trace registers
 * its own at its first trace, after this gate in the gate order. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cupti.h>
#include "hotpath/um_counters.h"
#include "core/cupti_check.h"
#include "core/kg_core.h"

#define UM_BUF_BYTES (256u << 10)

void kg_um_add(kg_um_counts *c, int kind, uint64_t value)
{
    c->records++;
    switch (kind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
        c->htod_bytes += value;
        break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
        c->dtoh_bytes += value;
        break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
        c->gpu_faults += value ? value : 1;
        break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
        c->cpu_faults++;
        break; /* the value is the faulting PC, not a count */
    default: break;
    }
}

bool kg_um_migrated(const kg_um_counts *c, char *detail, size_t n)
{
    bool m = c->htod_bytes || c->dtoh_bytes || c->gpu_faults || c->cpu_faults;
    if (!m) {
        if (n)
            detail[0] = '\0';
        return false;
    }
    int k = snprintf(detail, n, "%llu B HtoD, %llu B DtoH, %llu GPU page fault groups",
                     c->htod_bytes, c->dtoh_bytes, c->gpu_faults);
    if (c->cpu_faults_counted && k >= 0 && (size_t)k < n)
        snprintf(detail + k, n - (size_t)k, ", %llu CPU page faults", c->cpu_faults);
    return true;
}

/* ---- the activity buffers ------------------------------------------------------------------ */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static kg_um_counts g_sum; /* filled by the completion callback (any thread) */
static unsigned long g_dropped;
static bool g_enabled;      /* the activity kind is on (from kg_um_arm to kg_um_disarm) */
static bool g_armed;        /* enabled by kg_um_arm: kg_um_end leaves it on */
static uint64_t g_t0, g_t1; /* the observed window (CUPTI timestamps); t1 0 while open */
static int g_cfg;           /* 0 not tried, 1 with CPU faults, 2 without, -1 unavailable */
static char g_cfg_why[160];

static void CUPTIAPI um_buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, UM_BUF_BYTES); /* CUPTI wants 8-byte alignment */
    *size = *buffer ? UM_BUF_BYTES : 0;
    *max_records = 0;
}

/* Only the records of the observed window count: the activity stays enabled across cases
 * (the UVM driver reports nothing for an allocation made before it was enabled, measured on
 * the H200), so a buffer also holds the setups' and prepares' migrations. */
static bool um_in_window(const CUpti_ActivityUnifiedMemoryCounter3 *u)
{
    uint64_t end = u->end > u->start ? u->end : u->start;
    return g_t0 && end >= g_t0 && (!g_t1 || u->start <= g_t1);
}

static void CUPTIAPI um_buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                     size_t valid)
{
    CUpti_Activity *rec = NULL;
    size_t dropped = 0;
    KG_UNUSED(size);
    pthread_mutex_lock(&g_mu);
    while (valid && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
            continue;
        const CUpti_ActivityUnifiedMemoryCounter3 *u = (const CUpti_ActivityUnifiedMemoryCounter3 *)
            rec;
        if (um_in_window(u))
            kg_um_add(&g_sum, (int)u->counterKind, u->value);
    }
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g_dropped += dropped;
    pthread_mutex_unlock(&g_mu);
    free(buffer);
}

static const char *um_result_name(CUptiResult r)
{
    const char *s = NULL;
    return cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s ? s : "unknown CUPTI error";
}

/* Once per process, after the driver is initialised (the gate's context exists). CPU page
 * faults are not counted on every platform: without them when the full set is refused. */
static void um_configure(void)
{
    static const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
    };
    CUpti_ActivityUnifiedMemoryCounterConfig cfg[KG_ARRAY_LEN(kinds)];
    memset(cfg, 0, sizeof cfg);
    for (size_t i = 0; i < KG_ARRAY_LEN(kinds); i++) {
        cfg[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
        cfg[i].kind = kinds[i];
        cfg[i].enable = 1;
    }
    CUptiResult r = cuptiActivityConfigureUnifiedMemoryCounter(cfg, KG_ARRAY_LEN(kinds));
    if (r == CUPTI_SUCCESS) {
        g_cfg = 1;
        return;
    }
    r = cuptiActivityConfigureUnifiedMemoryCounter(cfg, KG_ARRAY_LEN(kinds) - 1);
    if (r == CUPTI_SUCCESS) {
        g_cfg = 2;
        return;
    }
    g_cfg = -1;
    snprintf(g_cfg_why, sizeof g_cfg_why, "cuptiActivityConfigureUnifiedMemoryCounter: %s (%d)",
             um_result_name(r), (int)r);
}

bool kg_hp_host_memory_checks(void)
{
    const char *e = getenv("KGATE_HOTPATH_HOST_MEMORY");
    return !(e && strcmp(e, "0") == 0);
}

/* Configure once, register the buffers and enable the kind; false with c->why when not. */
static bool um_enable(kg_um_counts *c)
{
    if (g_cfg == 0)
        um_configure();
    if (g_cfg < 0) {
        snprintf(c->why, sizeof c->why, "%s", g_cfg_why);
        return false;
    }
    if (g_enabled)
        return true;
    CUptiResult r = cuptiActivityRegisterCallbacks(um_buf_request, um_buf_complete);
    if (r == CUPTI_SUCCESS)
        r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (r != CUPTI_SUCCESS) {
        snprintf(c->why, sizeof c->why, "cuptiActivityEnable(UNIFIED_MEMORY_COUNTER): %s (%d)",
                 um_result_name(r), (int)r);
        return false;
    }
    g_enabled = true;
    return true;
}

void kg_um_arm(void)
{
    kg_um_counts c;
    memset(&c, 0, sizeof c);
    if (kg_hp_host_memory_checks() && um_enable(&c))
        g_armed = true;
}

void kg_um_disarm(void)
{
    if (!g_enabled)
        return;
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    g_enabled = g_armed = false;
}

int kg_um_begin(kg_um_counts *c)
{
    int rc = 0;
    uint64_t t0 = 0;
    memset(c, 0, sizeof *c);
    if (!kg_hp_host_memory_checks()) {
        snprintf(c->why, sizeof c->why, "off (KGATE_HOTPATH_HOST_MEMORY=0)");
        return 0;
    }
    if (!um_enable(c))
        return 0;
    /* Earlier records out of the buffers first (outside any window: not counted), then open. */
    pthread_mutex_lock(&g_mu);
    g_t0 = g_t1 = 0;
    pthread_mutex_unlock(&g_mu);
    KG_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    KG_CUPTI_CHECK(cuptiGetTimestamp(&t0));
    pthread_mutex_lock(&g_mu);
    memset(&g_sum, 0, sizeof g_sum);
    g_dropped = 0;
    g_t0 = t0;
    pthread_mutex_unlock(&g_mu);
    c->available = true;
    c->cpu_faults_counted = g_cfg == 1;
cleanup:
    return rc;
}

int kg_um_end(kg_um_counts *c)
{
    int rc = 0;
    uint64_t t1 = 0;
    if (!g_enabled || !c->available)
        return 0;
    /* Close the window (the launches' stream was synchronized first), then flush every
     * buffer while the kind is still enabled: disabling first lost the records (H200). */
    KG_CUPTI_CHECK(cuptiGetTimestamp(&t1));
    pthread_mutex_lock(&g_mu);
    g_t1 = t1;
    pthread_mutex_unlock(&g_mu);
    KG_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    if (!g_armed) {
        KG_CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
        g_enabled = false;
    }
    pthread_mutex_lock(&g_mu);
    bool cpu = c->cpu_faults_counted;
    *c = g_sum;
    c->cpu_faults_counted = cpu;
    c->available = g_dropped == 0;
    if (g_dropped)
        snprintf(c->why, sizeof c->why, "%lu unified-memory records dropped by CUPTI", g_dropped);
    g_t0 = g_t1 = 0;
    pthread_mutex_unlock(&g_mu);
cleanup:
    if (rc < 0)
        c->available = false;
    return rc;
}
