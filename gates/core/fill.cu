/* kg_fill_device: the device side of the counter-based fills; the element function is the one
 * kg_fill_host uses (kgate/fill_element.h), so host and device give the same bits. */
#include "kgate/fill_element.h"

extern "C" int kg_fill_check(kg_dtype dtype, size_t n, kg_fill_dist dist, double a, double b,
                             bool dev);

#define KG_FILL_BLOCK 256

template <typename T>
__global__ void __launch_bounds__(KG_FILL_BLOCK)
    kg_fill_kernel(T *dst, size_t offset, size_t n, uint64_t seed, kg_dtype dtype, int dist,
                   double a, double b)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = (T)kg_fill_element(seed, offset + i, dtype, dist, a, b);
}

extern "C" int kg_fill_device_at(void *dev, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                                 kg_fill_dist dist, double a, double b, cudaStream_t s)
{
    int rc = kg_fill_check(dtype, n, dist, a, b, true);
    if (rc < 0 || n == 0)
        return rc;
    if (!dev)
        return kg_error_set(KG_EINVAL, __FILE__, __LINE__, "kg_fill_device: NULL destination");
    if (offset > SIZE_MAX - n)
        return kg_error_set(KG_EINVAL, __FILE__, __LINE__,
                            "kg_fill_device_at: offset %zu + n %zu overflows", offset, n);
    size_t blocks = (n + KG_FILL_BLOCK - 1) / KG_FILL_BLOCK;
    unsigned grid = (unsigned)(blocks < 8192 ? blocks : 8192);
    if (kg_dtype_size(dtype) == 4)
        kg_fill_kernel<uint32_t><<<grid, KG_FILL_BLOCK, 0, s>>>((uint32_t *)dev, offset, n, seed,
                                                                dtype, (int)dist, a, b);
    else
        kg_fill_kernel<uint16_t><<<grid, KG_FILL_BLOCK, 0, s>>>((uint16_t *)dev, offset, n, seed,
                                                                dtype, (int)dist, a, b);
    KG_LAUNCH_CHECK();
cleanup:
    return rc;
}

extern "C" int kg_fill_device(void *dev, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist,
                              double a, double b, cudaStream_t s)
{
    return kg_fill_device_at(dev, dtype, 0, n, seed, dist, a, b, s);
}
