/* Unified-memory migrations and page faults during the observed launches, from CUPTI's
 * unified-memory counter activity (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER): managed memory
 * the hot path reaches (through a kernel argument or not: a device-global pointer, a struct in
 * constant memory) migrates over the bus at every launch after the host touched it, and no API
 * call shows it. Enabled only around the observed launches; flushed before deciding. Some
 * systems cannot count (CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED*, MPS): the check is then "not
 * available", said as such, never a pass. */
#ifndef KG_UM_COUNTERS_H
#define KG_UM_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    bool available;          /* counters configured, enabled and every record delivered */
    bool cpu_faults_counted; /* CPU_PAGE_FAULT_COUNT configured too (not on every system) */
    char why[160];           /* not available: why (CUPTI's result, dropped records) */
    unsigned long long htod_bytes, dtoh_bytes;
    unsigned long long gpu_faults; /* page fault groups (the GPU_PAGE_FAULT records' values) */
    unsigned long long cpu_faults; /* CPU page fault records */
    unsigned long records;         /* unified-memory counter records seen */
} kg_um_counts;

/* One record (pure): kind is a CUpti_ActivityUnifiedMemoryCounterKind. Bytes for HTOD/DTOH,
 * fault groups for GPU_PAGE_FAULT; a CPU_PAGE_FAULT_COUNT record is one fault (its value is
 * the faulting PC). Other kinds are counted as records only. */
void kg_um_add(kg_um_counts *c, int kind, uint64_t value);
/* True when the observed launches migrated or faulted (pure); `detail` then says what
 * ("262144 B HtoD, 0 B DtoH, 16 GPU page fault groups", fits a kg_cw_violation detail). */
bool kg_um_migrated(const kg_um_counts *c, char *detail, size_t n);
/* Configure (once per process) and enable the counters; not supported is no error: c->available
 * stays false with the reason in c->why. */
int kg_um_begin(kg_um_counts *c);
/* The kind on for the whole gate (its begin, before any case's setup allocates), best effort:
 * the UVM driver reports no migration of an allocation made before the kind was enabled. */
void kg_um_arm(void);
void kg_um_disarm(void);
/* Flush the activity buffers, disable, and leave the sums in c. Call after begin, also on
 * error paths; after the launches' stream was synchronized. */
int kg_um_end(kg_um_counts *c);

/* Kernel arguments in managed or mapped host memory (cupti_watch.c) and the unified-memory
 * counters (here) are on unless KGATE_HOTPATH_HOST_MEMORY=0 (which also drops their planted
 * cases from the catalogue): measured catching them on the H200, docs/measurements/h200-bench.md. */
bool kg_hp_host_memory_checks(void);

#ifdef __cplusplus
}
#endif
#endif
