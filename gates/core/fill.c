/* kg_fill_host: the host side of the counter-based fills (kgate/fill_element.h; the device side
 * is fill.cu). Compiled with -ffp-contract=off (gates/CMakeLists.txt) so no FMA changes a bit. */
#include <string.h>
#include "core/kg_core.h"
#include "kgate/fill_element.h"

int kg_fill_check(kg_dtype dtype, size_t n, kg_fill_dist dist, double a, double b, bool dev);

int kg_fill_check(kg_dtype dtype, size_t n, kg_fill_dist dist, double a, double b, bool dev)
{
    const char *fn = dev ? "kg_fill_device" : "kg_fill_host";
    if (dtype != KG_DTYPE_F32 && dtype != KG_DTYPE_BF16 && dtype != KG_DTYPE_F16 &&
        dtype != KG_DTYPE_I32)
        return KG_ERR(KG_EINVAL, "%s: dtype %s: f32, bf16, f16 or i32", fn, kg_dtype_name(dtype));
    if (dist != KG_FILL_UNIFORM && dist != KG_FILL_NORMAL)
        return KG_ERR(KG_EINVAL, "%s: unknown distribution %d", fn, (int)dist);
    if (dist == KG_FILL_UNIFORM && !(a < b && b - a < 1e300))
        return KG_ERR(KG_EINVAL, "%s: uniform [a, b) needs finite a < b, got [%g, %g)", fn, a, b);
    if (dist == KG_FILL_UNIFORM && dtype == KG_DTYPE_I32 &&
        !(a >= -2147483648.0 && b <= 2147483648.0))
        return KG_ERR(KG_EINVAL, "%s: i32 uniform [%g, %g) beyond int32", fn, a, b);
    if (dist == KG_FILL_NORMAL && !(b > 0 && b < 1e300 && a > -1e300 && a < 1e300))
        return KG_ERR(KG_EINVAL, "%s: normal needs a finite mean and sd > 0, got (%g, %g)", fn,
                      a, b);
    KG_UNUSED(n);
    return 0;
}

int kg_fill_host_at(void *dst, kg_dtype dtype, size_t offset, size_t n, uint64_t seed,
                    kg_fill_dist dist, double a, double b)
{
    int rc = kg_fill_check(dtype, n, dist, a, b, false);
    if (rc < 0)
        return rc;
    if (n && !dst)
        return KG_ERR(KG_EINVAL, "kg_fill_host: NULL destination");
    if (offset > SIZE_MAX - n)
        return KG_ERR(KG_EINVAL, "kg_fill_host_at: offset %zu + n %zu overflows", offset, n);
    if (kg_dtype_size(dtype) == 4) {
        uint32_t *d = dst;
        for (size_t i = 0; i < n; i++)
            d[i] = kg_fill_element(seed, offset + i, dtype, (int)dist, a, b);
    } else {
        uint16_t *d = dst;
        for (size_t i = 0; i < n; i++)
            d[i] = (uint16_t)kg_fill_element(seed, offset + i, dtype, (int)dist, a, b);
    }
    return 0;
}

int kg_fill_host(void *dst, kg_dtype dtype, size_t n, uint64_t seed, kg_fill_dist dist, double a,
                 double b)
{
    return kg_fill_host_at(dst, dtype, 0, n, seed, dist, a, b);
}
