/* kgate: the cuBLAS check macro, for cases (and kgate itself) that call cuBLAS.
 * Separate from kgate.h so the core header needs only the CUDA runtime. */
#ifndef KGATE_CUBLAS_H
#define KGATE_CUBLAS_H

#include <cublas_v2.h>
#include "kgate/kgate.h"

/* Check a cuBLAS call; on failure record file/line and `goto cleanup` with rc set (same
 * contract as KG_CUDA_CHECK: the caller has `int rc` and a `cleanup:` label). */
#define KG_CUBLAS_CHECK(expr)                                                              \
    do {                                                                                   \
        cublasStatus_t kg_s_ = (expr);                                                     \
        if (kg_s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            rc = kg_error_set(KG_ECUBLAS, __FILE__, __LINE__, "%s failed: %s (%d)", #expr, \
                              cublasGetStatusString(kg_s_), (int)kg_s_);                   \
            goto cleanup;                                                                  \
        }                                                                                  \
    } while (0)

#endif
