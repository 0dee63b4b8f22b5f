/* kgate for C++ wrappers (optional): check macros that return instead of `goto cleanup`.
 *
 * KG_CUDA_CHECK, KG_LAUNCH_CHECK and KG_TRY (kgate.h) jump to a `cleanup:` label. In C++ a
 * `goto` may not jump past the initialization of a variable in scope at the label, so a wrapper
 * that declares `auto *p = ...;` or `dim3 grid(...);` after a check does not compile ("jump to
 * label crosses initialization"). These return the kgate error code instead; the message is
 * the same (the call's text, the CUDA error name and string, file and line).
 *
 *   static int my_launch(void *state, cudaStream_t s)
 *   {
 *       auto *st = static_cast<my_state *>(state);
 *       dim3 grid((st->n + 255) / 256);              // declared after nothing that can jump
 *       my_kernel<<<grid, 256, 0, s>>>(st->x, st->n);
 *       KG_LAUNCH_RETURN();
 *       const size_t bytes = st->n * sizeof(float);  // fine: no label to jump past it
 *       KG_CUDA_RETURN(cudaMemsetAsync(st->tmp, 0, bytes, s));
 *       return 0;
 *   }
 *
 * What a returning check leaves behind is the caller's to free, without RAII: split setup in
 * two, a body that returns early and a wrapper that frees the partial state (teardown must
 * accept it: cudaFree(nullptr) and delete of a null pointer are no-ops):
 *
 *   static int my_setup(const kg_setup_args *a, void **state, kg_case_io *io)
 *   {
 *       auto *st = new (std::nothrow) my_state();     // value-initialized: every pointer null
 *       if (!st) return kg_error_set(KG_ENOMEM, __FILE__, __LINE__, "my_state");
 *       int rc = my_setup_body(st, a, io);           // uses KG_CUDA_RETURN / KG_TRY_RETURN
 *       if (rc < 0) { my_teardown(st); return rc; }  // teardown() is not called for a failed setup
 *       *state = st;
 *       return 0;
 *   }
 *
 * C11 and C++17 clean; includes only kgate.h. */
#ifndef KGATE_KGATE_HPP
#define KGATE_KGATE_HPP

#include "kgate/kgate.h"

/* Check a CUDA runtime call; on failure record file/line and return KG_ECUDA. */
#define KG_CUDA_RETURN(expr)                                                               \
    do {                                                                                   \
        cudaError_t kg_e_ = (expr);                                                        \
        if (kg_e_ != cudaSuccess)                                                          \
            return kg_error_set(KG_ECUDA, __FILE__, __LINE__, "%s failed: %s (%s)", #expr, \
                                cudaGetErrorName(kg_e_), cudaGetErrorString(kg_e_));       \
    } while (0)

/* Right after <<<...>>>: return KG_ECUDA when the launch was rejected (legal in launch()). */
#define KG_LAUNCH_RETURN() KG_CUDA_RETURN(cudaGetLastError())

/* Propagate a kgate error code: return it when expr < 0 (the message is already set). */
#define KG_TRY_RETURN(expr) \
    do {                    \
        int kg_r_ = (expr); \
        if (kg_r_ < 0)      \
            return kg_r_;   \
    } while (0)

#endif /* KGATE_KGATE_HPP */
