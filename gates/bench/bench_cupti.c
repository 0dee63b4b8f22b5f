/* Kernel names and GPU durations from CUPTI activity records, around one replay taken after
 * the timed samples (never during them). The activity API needs no subscriber, so it does not
 * take the one callback-subscriber slot that gates/cupti_watch.c holds. */
#include <stdlib.h>
#include <string.h>
#include <cupti.h>
#include "bench/bench.h"
#include "core/cupti_check.h"
#include "core/report_keys.h"

#define TRACE_BUF_BYTES (1u << 20)
#define TRACE_MAX 64

typedef struct {
    char name[256];
    unsigned long long ns;
    unsigned long long graph_node;
    unsigned count;
} trace_rec;

/* Filled by the completion callback (CUPTI calls it from the flushing thread or its own). */
static trace_rec g_recs[TRACE_MAX];
static int g_n;
static int g_total; /* every kernel record, also those past TRACE_MAX names */
static unsigned long g_dropped;
static bool g_registered;

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* CUPTI requires 8-byte alignment. */
    *buffer = aligned_alloc(8, TRACE_BUF_BYTES);
    *size = *buffer ? TRACE_BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                  size_t valid)
{
    CUpti_Activity *rec = NULL;
    KG_UNUSED(ctx);
    KG_UNUSED(stream);
    KG_UNUSED(size);
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        const char *nm = k->name ? k->name : "?";
        int i;
        for (i = 0; i < g_n; i++)
            if (strcmp(g_recs[i].name, nm) == 0)
                break;
        g_total++;
        if (i == g_n) {
            if (g_n == TRACE_MAX)
                continue;
            memset(&g_recs[i], 0, sizeof g_recs[i]); /* not the last trace's sums */
            snprintf(g_recs[i].name, sizeof g_recs[i].name, "%s", nm);
            g_recs[i].graph_node = k->graphNodeId;
            g_n++;
        }
        g_recs[i].ns += k->end - k->start;
        g_recs[i].count++;
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g_dropped += dropped;
    free(buffer);
}

int kg_kernel_trace_begin(void)
{
    int rc = 0;
    g_n = 0;
    g_total = 0;
    g_dropped = 0;
    if (!g_registered) {
        KG_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buf_request, buf_complete));
        g_registered = true;
    }
    KG_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
cleanup:
    return rc;
}

int kg_kernel_trace_count(int *n)
{
    int rc = 0;
    *n = -1;
    KG_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    *n = g_dropped ? -1 : g_total;
cleanup:
    return rc;
}

cJSON *kg_kernel_trace_end(void)
{
    int rc = 0;
    cJSON *arr = NULL;
    KG_CUPTI_CHECK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    KG_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    arr = cJSON_CreateArray();
    if (!arr) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for kernel records");
        goto cleanup;
    }
    for (int i = 0; i < g_n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            continue;
        cJSON_AddStringToObject(o, KG_FIG_KERNEL_NAME, g_recs[i].name);
        cJSON_AddNumberToObject(o, KG_FIG_KERNEL_LAUNCHES, g_recs[i].count);
        cJSON_AddNumberToObject(o, KG_FIG_KERNEL_NS,
                                g_recs[i].count ? (double)g_recs[i].ns / g_recs[i].count : 0);
        cJSON_AddNumberToObject(o, KG_FIG_KERNEL_GRAPH_NODE, (double)g_recs[i].graph_node);
        cJSON_AddItemToArray(arr, o);
    }
cleanup:
    if (rc < 0) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}
