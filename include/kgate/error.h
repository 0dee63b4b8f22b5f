/* kgate public API, part of kgate/kgate.h (which includes every part): errors (KG_E* codes, kg_error_*) and the check macros.
 * Self-contained: includes what it uses (test_header.sh compiles each alone, C and C++). */
#ifndef KGATE_ERROR_H
#define KGATE_ERROR_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------- */

/* Error codes: every kgate function returns 0 or one of these (negative). */
enum {
    KG_OK = 0,
    KG_EINVAL = -1,     /* bad argument, flag or input value */
    KG_ENOMEM = -2,     /* out of host memory */
    KG_EIO = -3,        /* file could not be read or written */
    KG_EPARSE = -4,     /* malformed input file (JSON, allowlist, baseline, marks) */
    KG_ECUDA = -5,      /* a CUDA runtime or driver call failed */
    KG_ENODEV = -6,     /* no CUDA device is present */
    KG_ECUBLAS = -7,    /* a cuBLAS call failed */
    KG_ECUPTI = -8,     /* a CUPTI call failed */
    KG_EGIT = -9,       /* a libgit2 call failed */
    KG_EHTTP = -10,     /* an HTTP request failed (libcurl or status code) */
    KG_EEXISTS = -11,   /* duplicate (case id, mark key) */
    KG_ENOTFOUND = -12, /* no such case, mark, file or ref */
    KG_ECONFLICT = -13, /* concurrent update lost a race; retry */
    KG_EREFUSED = -14,  /* refused by policy (diagnostic report, dirty marks file, ...) */
    KG_EINTERNAL = -15
};

/* Message of the last error set on this thread ("" if none). The buffer is thread-local and
 * owned by kgate: valid until the next kg_error_set on the same thread; copy it to keep it. */
const char *kg_error_last(void);
/* Name of an error code, e.g. "KG_EPARSE" (a static string). */
const char *kg_error_name(int code);
/* Record an error (printf-style) for this thread, with the source position; returns `code` so
 * callers can `return kg_error_set(KG_EINVAL, __FILE__, __LINE__, "n must be >= 1");`.
 * Messages name what was wrong (the case, field, file or flag). */
int kg_error_set(int code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Check a CUDA runtime call; on failure record file/line and `goto cleanup` with rc set.
 * The enclosing function needs `int rc` and a `cleanup:` label. */
#define KG_CUDA_CHECK(expr)                                                              \
    do {                                                                                 \
        cudaError_t kg_e_ = (expr);                                                      \
        if (kg_e_ != cudaSuccess) {                                                      \
            rc = kg_error_set(KG_ECUDA, __FILE__, __LINE__, "%s failed: %s (%s)", #expr, \
                              cudaGetErrorName(kg_e_), cudaGetErrorString(kg_e_));       \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* Check that the last kernel launch was accepted (launchers call it right after <<<>>>).
 * Legal during stream capture, so it is fine in launch(). */
#define KG_LAUNCH_CHECK() KG_CUDA_CHECK(cudaGetLastError())

/* Propagate a kgate error code: `goto cleanup` when expr < 0 (the message is already set). */
#define KG_TRY(expr)           \
    do {                       \
        if ((rc = (expr)) < 0) \
            goto cleanup;      \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* KGATE_ERROR_H */
