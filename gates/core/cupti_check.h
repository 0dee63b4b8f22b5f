/* KG_CUPTI_CHECK: the one check macro for CUPTI calls (the hot-path watch, the bench's kernel
 * trace and the counters use it). */
#ifndef KG_CUPTI_CHECK_H
#define KG_CUPTI_CHECK_H

#include <cupti.h>
#include "kgate/kgate.h"

/* Check a CUPTI call; on failure record file/line and `goto cleanup` with rc = KG_ECUPTI. */
#define KG_CUPTI_CHECK(expr)                                                                      \
    do {                                                                                          \
        CUptiResult kg_r_ = (expr);                                                               \
        if (kg_r_ != CUPTI_SUCCESS) {                                                             \
            const char *kg_rs_ = NULL;                                                            \
            if (cuptiGetResultString(kg_r_, &kg_rs_) != CUPTI_SUCCESS)                            \
                kg_rs_ = "unknown CUPTI error";                                                   \
            rc = kg_error_set(KG_ECUPTI, __FILE__, __LINE__, "%s failed: %s (%d)", #expr, kg_rs_, \
                              (int)kg_r_);                                                        \
            goto cleanup;                                                                         \
        }                                                                                         \
    } while (0)

#endif
