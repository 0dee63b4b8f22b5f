/* cpu: the unified-memory part of the hotpath gate's forbidden-call check (um_counters.c): the
 * records' sums (bytes for HtoD/DtoH, fault groups for GPU faults, one per CPU fault record,
 * whose value is a PC), when the observed launches count as migrated, the detail's text (it
 * fits a violation's detail), and without a driver the counters are "not available" with a
 * reason, never available (so no row can claim "no migration"). */
#include <stdlib.h>
#include <string.h>
#include <cupti.h>
#include "hotpath/um_counters.h"
#include "hotpath/cupti_watch.h"
#include "kg_test.h"

static void check_sums(void)
{
    kg_um_counts c;
    char d[96];
    memset(&c, 0, sizeof c);
    CHECK(!kg_um_migrated(&c, d, sizeof d));
    CHECK(d[0] == '\0');
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 4096);
    CHECK(!kg_um_migrated(&c, d, sizeof d)); /* a record of another kind is no migration */
    CHECK(c.records == 1);
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 65536);
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 196608);
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 3);
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0);
    kg_um_add(&c, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, 0x401000);
    CHECK(c.htod_bytes == 262144 && c.dtoh_bytes == 0);
    CHECK(c.gpu_faults == 4); /* a group of 0 is still one fault */
    CHECK(c.cpu_faults == 1); /* one record, not its PC */
    CHECK(c.records == 6);
    CHECK(kg_um_migrated(&c, d, sizeof d));
    CHECK_MSG(strcmp(d, "262144 B HtoD, 0 B DtoH, 4 GPU page fault groups") == 0, "got '%s'", d);
    c.cpu_faults_counted = true;
    CHECK(kg_um_migrated(&c, d, sizeof d));
    CHECK_MSG(strstr(d, ", 1 CPU page faults") != NULL, "got '%s'", d);
}

static void check_each_kind_alone(void)
{
    static const int kinds[] = { CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
                                 CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
                                 CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
                                 CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        kg_um_counts c;
        char d[96];
        memset(&c, 0, sizeof c);
        kg_um_add(&c, kinds[i], 4096);
        CHECK_MSG(kg_um_migrated(&c, d, sizeof d), "kind %d alone is a migration", kinds[i]);
    }
}

static void check_detail_fits(void)
{
    kg_um_counts c;
    char d[sizeof(((kg_cw_violation *)0)->detail)];
    memset(&c, 0, sizeof c);
    c.htod_bytes = c.dtoh_bytes = 99999999999ull; /* ~100 GB each way */
    c.gpu_faults = c.cpu_faults = 9999999;
    c.cpu_faults_counted = true;
    CHECK(kg_um_migrated(&c, d, sizeof d));
    CHECK_MSG(strlen(d) < sizeof d - 1, "detail truncated: '%s'", d);
}

/* No driver here: configuring fails, so the counters are not available and say why. */
static void check_unavailable(void)
{
    kg_um_counts c;
    setenv("KGATE_HOTPATH_HOST_MEMORY", "0", 1); /* turned off: says so */
    CHECK(kg_um_begin(&c) == 0);
    CHECK_MSG(!c.available && strstr(c.why, "KGATE_HOTPATH_HOST_MEMORY=0"), "off: '%s'", c.why);
    CHECK(kg_um_end(&c) == 0);
    unsetenv("KGATE_HOTPATH_HOST_MEMORY"); /* on by default */
    CHECK(kg_um_begin(&c) == 0);
    if (c.available) { /* a machine with a driver: end it and say nothing about the rest */
        CHECK(kg_um_end(&c) == 0);
        return;
    }
    CHECK_MSG(strstr(c.why, "cuptiActivity") != NULL, "no reason: '%s'", c.why);
    CHECK(kg_um_end(&c) == 0);
    CHECK(!c.available);
}

int main(void)
{
    check_sums();
    check_each_kind_alone();
    check_detail_fits();
    check_unavailable();
    return kg_test_done("test_hotpath_um");
}
