// Kernels under the names real codebases give them, for test_preflight_names.sh: each line of
// "want" there is a KG_KERNEL spelling (#fn) that static preflight must find in this file's
// cubins. Never linked into a runner.
namespace
{
__global__ void anon_kernel(float *p) { p[threadIdx.x] = 1.0f; }
template <unsigned N> __global__ void anon_tile_kernel(float *p) { p[threadIdx.x] = N; }
} // namespace

namespace ops
{
namespace detail
{
__global__ void nested_kernel(float *p) { p[threadIdx.x] = 2.0f; }
} // namespace detail
template <typename T, int B> __global__ void typed_kernel(T *p) { p[threadIdx.x] = T(B); }
struct policy {
    static constexpr int k = 3;
};
template <class P, size_t N> __global__ void policy_kernel(float *p) { p[threadIdx.x] = P::k + N; }
} // namespace ops

// Instantiate what the cubin holds; keep every entry referenced from host code.
void preflight_names_launch(float *p)
{
    anon_kernel<<<1, 32>>>(p);
    anon_tile_kernel<64u><<<1, 32>>>(p);
    ops::detail::nested_kernel<<<1, 32>>>(p);
    ops::typed_kernel<float, 4><<<1, 32>>>(p);
    ops::policy_kernel<ops::policy, 8><<<1, 32>>>(p);
}
