/* Counter-based fills. cpu (no argument): kg_fill_host is deterministic, in range, has the
 * right moments (n = 1e6), converts bf16/f16 correctly, holds no exact zero, and equals the
 * shared element function (kgate/fill_element.h, the device kernel's code). gpu (--gpu, exit 77
 * without a GPU): kg_fill_device equals kg_fill_host bit for bit for every dtype, both
 * distributions, seeds 0, 1 and 2^63 + 5. Both: a slice (kg_fill_*_at: offset, n) is exactly
 * that part of the full fill, for every dtype and both distributions. */
#include <math.h>
#include <string.h>
#include "core/kg_core.h"
#include "kgate/fill_element.h"
#include "kg_test.h"

#define N 1000000
static uint32_t buf[N], buf2[N];

static double f16_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return (h & 0x8000) ? -v : v;
}

static double value(const void *p, kg_dtype t, size_t i)
{
    if (t == KG_DTYPE_F32)
        return ((const float *)p)[i];
    if (t == KG_DTYPE_I32)
        return ((const int32_t *)p)[i];
    if (t == KG_DTYPE_BF16)
        return kg_bf16_to_f32(((const uint16_t *)p)[i]);
    return f16_to_double(((const uint16_t *)p)[i]);
}

static const kg_dtype dtypes[] = { KG_DTYPE_F32, KG_DTYPE_BF16, KG_DTYPE_F16, KG_DTYPE_I32 };

static void check_moments(kg_dtype t, kg_fill_dist dist, double a, double b, double mean_want,
                          double sd_want)
{
    double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
    size_t zeros = 0;
    CHECK(kg_fill_host(buf, t, N, 7, dist, a, b) == 0);
    for (size_t i = 0; i < N; i++) {
        double v = value(buf, t, i);
        s += v, s2 += v * v, lo = v < lo ? v : lo, hi = v > hi ? v : hi;
        zeros += v == 0.0;
    }
    double mean = s / N, sd = sqrt(s2 / N - mean * mean);
    CHECK_MSG(fabs(mean - mean_want) < 0.01 * sd_want && fabs(sd - sd_want) < 0.01 * sd_want,
              "%s dist %d: mean %g sd %g, want %g %g", kg_dtype_name(t), (int)dist, mean, sd,
              mean_want, sd_want);
    if (dist == KG_FILL_UNIFORM)
        CHECK_MSG(lo >= a && hi <= b && lo < a + 0.01 && hi > b - (t == KG_DTYPE_I32 ? 1.02 : 0.02),
                  "%s: range [%g, %g]", kg_dtype_name(t), lo, hi);
    if (t != KG_DTYPE_I32)
        CHECK_MSG(zeros == 0, "%s dist %d: %zu zeros", kg_dtype_name(t), (int)dist, zeros);
}

static void check_host(void)
{
    for (size_t d = 0; d < KG_ARRAY_LEN(dtypes); d++) {
        check_moments(dtypes[d], KG_FILL_NORMAL, 0.5, 2.0, 0.5, 2.0);
        if (dtypes[d] == KG_DTYPE_I32)
            check_moments(dtypes[d], KG_FILL_UNIFORM, -3.0, 5.0, 0.5,
                          sqrt(63.0 / 12.0)); /* -3..4 */
        else
            check_moments(dtypes[d], KG_FILL_UNIFORM, -1.0, 3.0, 1.0, 4.0 / sqrt(12.0));
    }
    /* Deterministic, seed-dependent, and equal to the shared element function. */
    CHECK(kg_fill_host(buf, KG_DTYPE_F32, 1000, 3, KG_FILL_NORMAL, 0, 1) == 0);
    CHECK(kg_fill_host(buf2, KG_DTYPE_F32, 1000, 3, KG_FILL_NORMAL, 0, 1) == 0);
    CHECK(memcmp(buf, buf2, 4000) == 0);
    for (size_t i = 0; i < 1000; i++)
        CHECK_MSG(buf[i] == kg_fill_element(3, i, KG_DTYPE_F32, 1, 0, 1), "element %zu", i);
    CHECK(kg_fill_host(buf2, KG_DTYPE_F32, 1000, 4, KG_FILL_NORMAL, 0, 1) == 0);
    CHECK(memcmp(buf, buf2, 4000) != 0);
    /* bf16/f16 are the f32 value rounded to nearest even. */
    uint16_t h[1000];
    CHECK(kg_fill_host(h, KG_DTYPE_BF16, 1000, 3, KG_FILL_NORMAL, 0, 1) == 0);
    for (size_t i = 0; i < 1000; i++)
        CHECK(h[i] == kg_f32_to_bf16(((float *)buf)[i]) || (buf[i] & 0x7fffffff) < 0x800000);
    CHECK(kg_fill_host(h, KG_DTYPE_F16, 1000, 3, KG_FILL_NORMAL, 0, 1) == 0);
    for (size_t i = 0; i < 1000; i++) {
        double f = ((float *)buf)[i], g = f16_to_double(h[i]);
        CHECK_MSG(fabs(f - g) <= ldexp(fabs(f) > ldexp(1, -14) ? fabs(f) : ldexp(1, -14), -11),
                  "f16 %zu: %g vs %g", i, f, g);
    }
    CHECK(kg_fill_f16(0x3f800000u) == 0x3c00 && kg_fill_f16(0x477fe000u) == 0x7bff &&
          kg_fill_f16(0x47800000u) == 0x7c00 && kg_fill_f16(0x33800000u) == 0x0001);
    CHECK(kg_fill_bf16(0x3f808000u) == 0x3f80 && kg_fill_bf16(0x3f818000u) == 0x3f82);
    /* A range that rounds to zero gives the smallest normal, never 0. */
    CHECK(kg_fill_host(h, KG_DTYPE_F16, 10, 1, KG_FILL_UNIFORM, -1e-12, 1e-12) == 0);
    for (int i = 0; i < 10; i++)
        CHECK((h[i] & 0x7fff) == 0x0400);
    CHECK(kg_fill_host(buf, KG_DTYPE_F64, 1, 1, KG_FILL_NORMAL, 0, 1) == KG_EINVAL);
    CHECK(kg_fill_host(buf, KG_DTYPE_F32, 1, 1, KG_FILL_UNIFORM, 1, 1) == KG_EINVAL);
    CHECK(kg_fill_host(buf, KG_DTYPE_F32, 1, 1, KG_FILL_NORMAL, 0, 0) == KG_EINVAL);
}

/* Slices of a fill of N elements that kg_fill_*_at must reproduce: the start, odd offsets and
 * lengths (not a multiple of any block), one element, and the tail. */
static const size_t slices[][2] = { { 0, 1000 },  { 1, 999 },       { 4097, 12345 },
                                    { 65535, 1 }, { N - 777, 777 }, { 123457, 0 } };

static void check_host_slices(void)
{
    for (size_t d = 0; d < KG_ARRAY_LEN(dtypes); d++)
        for (int dist = 0; dist < 2; dist++) {
            size_t es = kg_dtype_size(dtypes[d]);
            double a = dist ? 0.25 : -2.0, b = dist ? 3.0 : 2.0;
            CHECK(kg_fill_host(buf, dtypes[d], N, 11, (kg_fill_dist)dist, a, b) == 0);
            for (size_t k = 0; k < KG_ARRAY_LEN(slices); k++) {
                size_t off = slices[k][0], n = slices[k][1];
                memset(buf2, 0xA5, (n + 1) * es);
                CHECK(kg_fill_host_at(buf2, dtypes[d], off, n, 11, (kg_fill_dist)dist, a, b) == 0);
                CHECK_MSG(memcmp((const char *)buf + off * es, buf2, n * es) == 0,
                          "host slice [%zu, +%zu) of %s dist %d differs from the full fill", off, n,
                          kg_dtype_name(dtypes[d]), dist);
                /* Exactly n elements: the one after the slice is untouched. */
                CHECK_MSG(((const unsigned char *)buf2)[n * es] == 0xA5,
                          "host slice [%zu, +%zu) of %s wrote past its end", off, n,
                          kg_dtype_name(dtypes[d]));
            }
        }
    CHECK(kg_fill_host_at(buf, KG_DTYPE_F32, SIZE_MAX, 2, 1, KG_FILL_NORMAL, 0, 1) == KG_EINVAL);
    CHECK(kg_fill_host_at(buf, KG_DTYPE_F64, 5, 1, 1, KG_FILL_NORMAL, 0, 1) == KG_EINVAL);
}

/* kg_fill_device_at: into the middle of a device buffer (dev + off) and into a buffer of its
 * own, both equal to that part of the host's full fill. */
static void check_device_slices(void *dev)
{
    for (size_t d = 0; d < KG_ARRAY_LEN(dtypes); d++)
        for (int dist = 0; dist < 2; dist++) {
            size_t es = kg_dtype_size(dtypes[d]);
            double a = dist ? 0.25 : -2.0, b = dist ? 3.0 : 2.0;
            CHECK(kg_fill_host(buf, dtypes[d], N, 13, (kg_fill_dist)dist, a, b) == 0);
            for (size_t k = 0; k < KG_ARRAY_LEN(slices); k++) {
                size_t off = slices[k][0], n = slices[k][1];
                CHECK(cudaMemset(dev, 0, N * es) == cudaSuccess);
                CHECK(kg_fill_device_at((char *)dev + off * es, dtypes[d], off, n, 13,
                                        (kg_fill_dist)dist, a, b, 0) == 0);
                CHECK(cudaMemcpy(buf2, (char *)dev + off * es, n * es, cudaMemcpyDeviceToHost) ==
                      cudaSuccess);
                CHECK_MSG(memcmp((const char *)buf + off * es, buf2, n * es) == 0,
                          "device slice [%zu, +%zu) of %s dist %d differs from the host fill", off,
                          n, kg_dtype_name(dtypes[d]), dist);
                CHECK(kg_fill_device_at(dev, dtypes[d], off, n, 13, (kg_fill_dist)dist, a, b, 0) ==
                      0);
                CHECK(cudaMemcpy(buf2, dev, n * es, cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK_MSG(memcmp((const char *)buf + off * es, buf2, n * es) == 0,
                          "device slice [%zu, +%zu) of %s dist %d at the buffer's start differs",
                          off, n, kg_dtype_name(dtypes[d]), dist);
            }
            printf("  slices %-4s %-7s: %zu slices equal the host's full fill\n",
                   kg_dtype_name(dtypes[d]), dist ? "normal" : "uniform", KG_ARRAY_LEN(slices));
        }
}

static int check_device(void)
{
    static const uint64_t seeds[] = { 0, 1, (1ULL << 63) + 5 };
    int count = 0;
    void *dev = NULL;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_fill --gpu: no CUDA device, skipped\n");
        return 77;
    }
    CHECK(cudaMalloc(&dev, sizeof buf) == cudaSuccess);
    for (size_t d = 0; d < KG_ARRAY_LEN(dtypes); d++)
        for (int dist = 0; dist < 2; dist++)
            for (size_t s = 0; s < KG_ARRAY_LEN(seeds); s++) {
                double a = dist ? 0.25 : -2.0, b = dist ? 3.0 : 2.0;
                size_t bytes = N * kg_dtype_size(dtypes[d]);
                CHECK(kg_fill_device(dev, dtypes[d], N, seeds[s], (kg_fill_dist)dist, a, b, 0) ==
                      0);
                CHECK(cudaMemcpy(buf2, dev, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
                CHECK(kg_fill_host(buf, dtypes[d], N, seeds[s], (kg_fill_dist)dist, a, b) == 0);
                CHECK_MSG(memcmp(buf, buf2, bytes) == 0, "device != host: %s dist %d seed %llu",
                          kg_dtype_name(dtypes[d]), dist, (unsigned long long)seeds[s]);
            }
    check_device_slices(dev);
    cudaFree(dev);
    return kg_test_done("test_fill --gpu");
}

/* A fill large enough to be split over host threads writes exactly the bits of the one-element
 * function at every index, for 4-byte and 2-byte dtypes, from 0 and from an offset. */
static void check_host_threads(void)
{
    enum { BIG = (1 << 21) + 4097 };
    static uint32_t w[BIG];
    static uint16_t h[BIG];
    size_t bad = 0;
    CHECK(kg_fill_host(w, KG_DTYPE_F32, BIG, 11, KG_FILL_UNIFORM, -1, 1) == 0);
    for (size_t i = 0; i < BIG; i++)
        bad += w[i] != kg_fill_element(11, i, KG_DTYPE_F32, KG_FILL_UNIFORM, -1, 1);
    CHECK(kg_fill_host_at(h, KG_DTYPE_BF16, 12345, BIG, 12, KG_FILL_NORMAL, 0, 2) == 0);
    for (size_t i = 0; i < BIG; i++)
        bad += h[i] !=
               (uint16_t)kg_fill_element(12, 12345 + i, KG_DTYPE_BF16, KG_FILL_NORMAL, 0, 2);
    CHECK_MSG(bad == 0, "%zu values of a threaded fill differ from the element function", bad);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--gpu") == 0)
        return check_device();
    check_host();
    check_host_slices();
    check_host_threads();
    return kg_test_done("test_fill");
}
