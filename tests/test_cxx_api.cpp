/* cpu: the public API from C++17 (issue #25), at run time: kgate.hpp's returning checks
 * (KG_CUDA_RETURN, KG_TRY_RETURN) return the error with its message and stop there, and let a
 * function declare variables after its checks; kg_output_make / kg_output_ref_dtype build
 * outputs without C's compound literals. No GPU needed: the failing CUDA call fails with and
 * without one (an invalid device ordinal). */
#include <cstdlib>
#include <cstring>
#include "kgate/kgate.hpp"
#include "kg_test.h"

namespace
{

int reached; // how far a wrapper got

int step(int x) { return x < 0 ? kg_error_set(KG_EINVAL, __FILE__, __LINE__, "step %d", x) : 0; }

// A wrapper in the shape that does not compile with KG_CUDA_CHECK's goto: initializations
// after the checks.
int wrapper(int x, int device)
{
    reached = 0;
    KG_TRY_RETURN(step(x));
    const int after_try = 1;
    reached = after_try;
    KG_CUDA_RETURN(static_cast<cudaError_t>(cudaSuccess));
    cudaDeviceProp prop;
    std::memset(&prop, 0, sizeof prop);
    KG_CUDA_RETURN(cudaGetDeviceProperties(&prop, device));
    const int after_cuda = 2;
    reached = after_cuda;
    return 0;
}

void check_returns()
{
    CHECK(wrapper(-3, -1) == KG_EINVAL && reached == 0);
    CHECK(std::strstr(kg_error_last(), "step -3") != nullptr);
    /* The source location only for a debugger (KGATE_DEBUG=1), never in a user's message. */
    setenv("KGATE_DEBUG", "1", 1);
    CHECK(wrapper(1, -1) == KG_ECUDA && reached == 1);
    const char *m = kg_error_last();
    CHECK_MSG(std::strstr(m, "cudaGetDeviceProperties(&prop, device) failed: cuda") != nullptr &&
                  std::strstr(m, "test_cxx_api.cpp") != nullptr,
              "message: %s", m);
    unsetenv("KGATE_DEBUG");
    CHECK(wrapper(1, -1) == KG_ECUDA);
    m = kg_error_last();
    CHECK_MSG(std::strstr(m, "failed: cuda") != nullptr &&
                  std::strstr(m, "test_cxx_api.cpp") == nullptr,
              "message: %s", m);
}

void check_outputs()
{
    static const kg_parity_policy bits = KG_PARITY_BITWISE_INIT;
    float stand_in[8];
    kg_case_io io = {};
    io.outputs[0] = kg_output_make("out", stand_in, 8, KG_DTYPE_BF16, 2, nullptr);
    io.outputs[1] = kg_output_ref_dtype(kg_output_make("idx", stand_in, 4, KG_DTYPE_I32, 0, &bits),
                                        KG_DTYPE_I32);
    io.n_outputs = 2;
    const kg_output &o = io.outputs[0], &i = io.outputs[1];
    CHECK(std::strcmp(o.name, "out") == 0 && o.ptr == stand_in && o.count == 8 &&
          o.dtype == KG_DTYPE_BF16 && o.rows == 2 && o.parity == nullptr && !o.has_ref_dtype);
    CHECK(std::strcmp(i.name, "idx") == 0 && i.count == 4 && i.parity == &bits && i.has_ref_dtype &&
          i.ref_dtype == KG_DTYPE_I32);
}

} // namespace

int main()
{
    check_returns();
    check_outputs();
    return kg_test_done("test_cxx_api");
}
