/* CUPTI callback watch: observe the CUDA runtime and driver API calls a hot path makes and
 * record the forbidden ones (allocation, synchronization, host transfers, default-stream
 * launches, stream/event/graph object churn), and the pointer arguments of every kernel
 * launch that point to managed or (mapped) host memory.
 *
 * CUPTI allows one callback subscriber per process: kg_cupti_watch_new subscribes once,
 * kg_cupti_watch_begin/end enable the runtime and driver domains around the observed calls
 * only (timed runs are never instrumented), kg_cupti_watch_free unsubscribes. */
#ifndef KG_CUPTI_WATCH_H
#define KG_CUPTI_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <cupti.h>
#include <cjson/cJSON.h>
#include "core/cupti_check.h"
#include "kgate/kgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why an API is forbidden on the hot path. */
typedef enum {
    KG_CW_ALLOC = 0,      /* "alloc/free" */
    KG_CW_SYNC,           /* "sync/poll" */
    KG_CW_HOST_COPY,      /* "host-transfer": host<->device copies, synchronous memcpy/memset */
    KG_CW_DEFAULT_STREAM, /* "default-stream": work on stream 0 / legacy / per-thread stream */
    KG_CW_OBJECTS,        /* "object-churn": stream/event/graph creation and destruction */
    KG_CW_HOST_FUNC,      /* "host-callback": host functions enqueued on a stream */
    KG_CW_HOST_MEMORY,    /* "host-memory": a kernel argument pointing to managed or mapped
                             * host memory (every launch then reaches over the bus) */
    KG_CW_UM_MIGRATION,   /* "um-migration": unified-memory bytes migrated or pages faulted
                             * during the observed launches (CUPTI's UM counters, um_counters.h;
                             * recorded by the gate, not by the callback) */
    KG_CW_N_CATEGORIES
} kg_cw_category;

/* When a matching call is a violation. */
typedef enum {
    KG_CW_ALWAYS = 0,        /* every call */
    KG_CW_IF_DEFAULT_STREAM, /* enqueues work: only when its stream is a default stream */
    KG_CW_IF_HOST_OR_DEFAULT /* async copy: host side (kind, pointers) or a default stream */
} kg_cw_when;

/* One row of THE forbidden-API table. `api` is the base name: CUPTI callback names are
 * matched after dropping their version and per-thread suffixes (_v3020, _v2, _ptsz, _ptds). */
typedef struct {
    const char *api;
    kg_cw_category category;
    kg_cw_when when;
} kg_cw_rule;

const kg_cw_rule *kg_cw_rules(size_t *n);
const char *kg_cw_category_name(kg_cw_category c);
const char *kg_cw_when_text(kg_cw_when w);
/* Base name of a CUPTI callback name ("cuMemcpyDtoHAsync_v2_ptsz" -> "cuMemcpyDtoHAsync"). */
void kg_cw_base_name(const char *cb_name, char *buf, size_t n);
/* Index of the rule for a base name, or -1. */
int kg_cw_rule_find(const char *base);
/* How many CUPTI callback ids (runtime + driver) map to rule i (no GPU needed). */
int kg_cw_rule_cbid_count(size_t i, int *count);

/* One distinct violation (API x category) seen while enabled. */
#define KG_CW_MAX_FRAMES 48
typedef struct {
    char api[64]; /* base name of the offending API (the runtime call when nested) */
    char via[64]; /* driver call under a runtime call that made it a violation, or "" */
    kg_cw_category category;
    char detail[96]; /* e.g. "kind DeviceToHost", "stream 0 (legacy default)" */
    unsigned long count;
    unsigned long order; /* sequence number of its first call (0 = first violation) */
    void *frames[KG_CW_MAX_FRAMES];
    int n_frames;
} kg_cw_violation;

typedef struct kg_cupti_watch kg_cupti_watch;

/* Subscribe (callbacks stay disabled). KG_ECUPTI if another CUPTI client (Nsight, sanitizer)
 * holds the subscriber slot. */
int kg_cupti_watch_new(kg_cupti_watch **out);
/* For tests: a watch that is not subscribed to CUPTI; it records only the callbacks handed
 * to kg_cupti_watch_feed (between begin and end), exactly as the CUPTI callback would. */
int kg_cupti_watch_new_detached(kg_cupti_watch **out);
void kg_cupti_watch_feed(kg_cupti_watch *w, CUpti_CallbackDomain dom, uint32_t cbid,
                         const CUpti_CallbackData *cd);
/* Category (kg_cw_category) of the violation a call with these parameters is, or -1 when it
 * is allowed; `detail` says why (e.g. "kind DeviceToHost"). No GPU needed, except that
 * pointer queries (async copies of kind Default) need a watch created with a driver and
 * otherwise count the operand as host memory. */
int kg_cw_classify(CUpti_CallbackDomain dom, uint32_t cbid, const void *params, char *detail,
                   size_t n);
/* Disable and unsubscribe. */
void kg_cupti_watch_free(kg_cupti_watch *w);
/* Clear the records and enable the runtime and driver domains. */
int kg_cupti_watch_begin(kg_cupti_watch *w);
/* Disable both domains (always call after begin, also on error paths). */
int kg_cupti_watch_end(kg_cupti_watch *w);
size_t kg_cupti_watch_count(const kg_cupti_watch *w);
/* Violations sorted by first occurrence. */
const kg_cw_violation *kg_cupti_watch_get(const kg_cupti_watch *w, size_t i);
/* Total API calls observed (all, allowed or not) since begin. */
unsigned long kg_cupti_watch_calls(const kg_cupti_watch *w);
/* One launch configuration seen while enabled: the handle the launch carried (a host stub for
 * cudaLaunchKernel, a cudaKernel_t for CUDA 13's <<<>>>, a CUfunction or CUkernel for the
 * driver's launches), threads per block (x*y*z) and dynamic shared memory, and how many
 * launches had it. A driver launch under a runtime launch is that launch, not another. */
typedef struct {
    const void *handle;
    unsigned threads;
    size_t smem;
    unsigned long count;
} kg_cw_launch;
#define KG_CW_MAX_LAUNCHES 32
/* The distinct launch configurations since begin (in first-seen order); *dropped: launches
 * past the table's KG_CW_MAX_LAUNCHES distinct entries. */
const kg_cw_launch *kg_cupti_watch_launches(const kg_cupti_watch *w, size_t *n,
                                            unsigned long *dropped);
/* Symbolized host backtrace of violation v (frames inside CUPTI/CUDA libraries dropped),
 * as a JSON array of strings. */
cJSON *kg_cw_backtrace_json(const kg_cw_violation *v);

#ifdef __cplusplus
}
#endif
#endif
