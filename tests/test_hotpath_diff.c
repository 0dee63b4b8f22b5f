/* The hotpath's device byte comparison (gates/hotpath/hotpath_diff.{h,cu}, issues #14, #25).
 * cpu: the pure word helpers (first differing byte, differing bytes of a ^ b) against a byte
 * loop; the poison classifier (every byte 0xFF, or a NaN of the float dtypes) on known values
 * and on words against the element loop. gpu (--gpu, exit 77 without a device):
 * kg_hp_device_diff on planted differences (first, last, several, word and byte paths,
 * unaligned pointers, equal buffers) against the host loop; kg_hp_device_compare's poison
 * count per dtype on planted poison, word and byte paths, against the host count. */
#include <stdint.h>
#include <string.h>
#include "core/kg_core.h"
#include "hotpath/hotpath_diff.h"
#include "kg_test.h"

static void host_diff(const unsigned char *a, const unsigned char *b, size_t n, size_t *first,
                      size_t *count)
{
    *first = SIZE_MAX;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (*first == SIZE_MAX)
                *first = i;
            (*count)++;
        }
}

static void check_words(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < 100000; t++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint64_t x = s & (t % 3 ? s >> 11 : 0xff00ull << (8 * (t % 6))); /* sparse bytes too */
        if (!x)
            continue;
        unsigned char b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(x >> (8 * i)); /* little-endian, as the device reads */
        unsigned first = 8, count = 0;
        for (int i = 0; i < 8; i++)
            if (b[i]) {
                first = first == 8 ? (unsigned)i : first;
                count++;
            }
        CHECK_MSG(kg_hp_word_first_byte(x) == first && kg_hp_word_diff_bytes(x) == count,
                  "word %016llx: first %u count %u, want %u %u", (unsigned long long)x,
                  kg_hp_word_first_byte(x), kg_hp_word_diff_bytes(x), first, count);
    }
    CHECK(kg_hp_word_diff_bytes(~0ull) == 8 && kg_hp_word_first_byte(1ull << 63) == 7);
}

/* Known values: 0xFF bytes are poison in every dtype; NaNs only in the float ones; infinities,
 * zeros, ordinary values and int -1 patterns of a different width are not. */
static void check_poison_values(void)
{
    static const struct {
        uint64_t v;
        unsigned es;
        kg_dtype dt;
        bool want;
    } t[] = {
        { 0xffffffffu, 4, KG_DTYPE_F32, true },
        { 0x7fc00000u, 4, KG_DTYPE_F32, true },
        { 0xff800001u, 4, KG_DTYPE_F32, true },
        { 0x7f800000u, 4, KG_DTYPE_F32, false },
        { 0x3f800000u, 4, KG_DTYPE_F32, false },
        { 0x00000000u, 4, KG_DTYPE_F32, false },
        { 0xffffffffu, 4, KG_DTYPE_I32, true },
        { 0x7fc00000u, 4, KG_DTYPE_I32, false },
        { 0xfffffffeu, 4, KG_DTYPE_I32, false },
        { 0xffu, 1, KG_DTYPE_U8, true },
        { 0xfeu, 1, KG_DTYPE_U8, false },
        { 0xffffu, 2, KG_DTYPE_F16, true },
        { 0x7e00u, 2, KG_DTYPE_F16, true },
        { 0x7c00u, 2, KG_DTYPE_F16, false },
        { 0x3c00u, 2, KG_DTYPE_F16, false },
        { 0x7fc0u, 2, KG_DTYPE_BF16, true },
        { 0x7f80u, 2, KG_DTYPE_BF16, false },
        { 0x3f80u, 2, KG_DTYPE_BF16, false },
        { 0xffffu, 2, KG_DTYPE_BF16, true },
        { ~0ull, 8, KG_DTYPE_F64, true },
        { 0x7ff8000000000000ull, 8, KG_DTYPE_F64, true },
        { 0x7ff0000000000000ull, 8, KG_DTYPE_F64, false },
        { 0x3ff0000000000000ull, 8, KG_DTYPE_F64, false },
        { 0x00000000ffffffffull, 8, KG_DTYPE_F64, false },
    };
    for (size_t i = 0; i < KG_ARRAY_LEN(t); i++)
        CHECK_MSG(kg_hp_elem_poison(t[i].v, t[i].es, t[i].dt) == t[i].want,
                  "value %llx (%u bytes, dtype %d): poison %d, want %d", (unsigned long long)t[i].v,
                  t[i].es, (int)t[i].dt, kg_hp_elem_poison(t[i].v, t[i].es, t[i].dt), t[i].want);
}

/* The word count equals the element loop, for every dtype, on words mixing poison lanes. */
static void check_poison_words(void)
{
    static const kg_dtype dts[] = { KG_DTYPE_F32, KG_DTYPE_F64, KG_DTYPE_BF16,
                                    KG_DTYPE_F16, KG_DTYPE_I32, KG_DTYPE_U8 };
    uint64_t s = 0x243f6a8885a308d3ull;
    for (int t = 0; t < 60000; t++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        kg_dtype dt = dts[t % 6];
        unsigned es = (unsigned)kg_dtype_size(dt), want = 0;
        uint64_t w = s, m = es == 8 ? ~0ull : (1ull << (8 * es)) - 1;
        for (unsigned i = 0; i < 8; i += es) /* make some lanes poison: all ones, or a NaN */
            if ((s >> (i + 3)) & 1)
                w |= (t & 1 ? m : (dt == KG_DTYPE_F32 ? 0x7fc00000ull : m)) << (8 * i);
        for (unsigned i = 0; i < 8; i += es)
            want += kg_hp_elem_poison((w >> (8 * i)) & m, es, dt);
        CHECK_MSG(kg_hp_word_poison(w, es, dt) == want, "word %016llx dtype %d: %u, want %u",
                  (unsigned long long)w, (int)dt, kg_hp_word_poison(w, es, dt), want);
    }
    CHECK(kg_hp_word_poison(~0ull, 4, KG_DTYPE_F32) == 2 &&
          kg_hp_word_poison(0, 2, KG_DTYPE_F16) == 0);
}

#define N (1u << 20)
static unsigned char ha[N + 16], hb[N + 16];

static void check_case(unsigned char *da, unsigned char *db, unsigned long long *scratch, size_t oa,
                       size_t ob, size_t n, const size_t *flip, int nflip)
{
    size_t f, c, wf, wc;
    memcpy(hb, ha, sizeof hb);
    for (int i = 0; i < nflip; i++)
        hb[ob + flip[i]] ^= (unsigned char)(1u << (i % 8));
    CHECK(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(kg_hp_device_diff(da + oa, db + ob, n, scratch, 0, &f, &c) == 0);
    host_diff(ha + oa, hb + ob, n, &wf, &wc);
    CHECK_MSG(f == wf && c == wc, "offsets %zu/%zu n %zu: first %zu count %zu, want %zu %zu", oa,
              ob, n, f, c, wf, wc);
}

/* kg_hp_device_compare: a buffer of f32 and u8 elements, poisoned in part (every element at
 * a stride, 0xFF or a NaN), then wholly; word path (aligned) and byte path (offset by one
 * element of the u8 case, or an f32 buffer at 4 mod 8), against the host count. */
static void check_compare(unsigned char *da, unsigned char *db, unsigned long long *scratch)
{
    static const struct {
        kg_dtype dt;
        size_t off, n;
    } t[] = {
        { KG_DTYPE_F32, 0, N },     { KG_DTYPE_F32, 4, N - 8 }, { KG_DTYPE_U8, 1, N - 3 },
        { KG_DTYPE_F16, 0, N - 6 }, { KG_DTYPE_F64, 8, N - 8 },
    };
    printf("  %-6s %-8s %-10s %-10s %-10s %s\n", "dtype", "offset", "bytes", "poison", "want",
           "equal");
    for (size_t k = 0; k < KG_ARRAY_LEN(t); k++)
        for (int whole = 0; whole < 2; whole++) {
            size_t es = kg_dtype_size(t[k].dt), want = 0;
            kg_hp_diff o;
            for (size_t i = 0; i < sizeof ha; i++)
                ha[i] = (unsigned char)(i * 131u + 7u);
            for (size_t e = 0; e < t[k].n / es; e++)
                if (whole || e % 7 == 3) {
                    unsigned char *p = ha + t[k].off + e * es;
                    memset(p, 0xff, es);
                    if (t[k].dt == KG_DTYPE_F32 && e % 2) /* a quiet NaN, not all ones */
                        memcpy(p, &(uint32_t){ 0x7fc00000u }, 4);
                }
            for (size_t e = 0; e < t[k].n / es; e++) {
                uint64_t v = 0;
                memcpy(&v, ha + t[k].off + e * es, es);
                want += kg_hp_elem_poison(v, (unsigned)es, t[k].dt);
            }
            CHECK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(cudaMemcpy(db, ha, sizeof ha, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(kg_hp_device_compare(da + t[k].off, db + t[k].off, t[k].n, t[k].dt, scratch, 0,
                                       &o) == 0);
            printf("  %-6s %-8zu %-10zu %-10zu %-10zu %s\n", kg_dtype_name(t[k].dt), t[k].off,
                   t[k].n, o.poison, want, o.first == SIZE_MAX ? "yes" : "no");
            CHECK_MSG(o.poison == want && o.elems == t[k].n / es && o.first == SIZE_MAX &&
                          o.count == 0 && (!whole || o.poison == o.elems),
                      "dtype %d off %zu n %zu whole %d: poison %zu of %zu, want %zu", (int)t[k].dt,
                      t[k].off, t[k].n, whole, o.poison, o.elems, want);
        }
    for (size_t i = 0; i < sizeof ha; i++)
        ha[i] = (unsigned char)(i * 131u + 7u);
    CHECK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice) == cudaSuccess);
}

static int check_device(void)
{
    int count = 0;
    unsigned char *da = NULL, *db = NULL;
    unsigned long long *scratch = NULL;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_hotpath_diff --gpu: no CUDA device, skipped\n");
        return 77;
    }
    for (size_t i = 0; i < sizeof ha; i++)
        ha[i] = (unsigned char)(i * 131u + 7u);
    CHECK(cudaMalloc((void **)&da, sizeof ha) == cudaSuccess);
    CHECK(cudaMalloc((void **)&db, sizeof hb) == cudaSuccess);
    CHECK(cudaMalloc((void **)&scratch, 3 * sizeof *scratch) == cudaSuccess);
    CHECK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice) == cudaSuccess);
    const size_t none[1] = { 0 }, one[] = { 0 }, last[] = { N - 1 },
                 many[] = { N / 2, 5, N - 3, 77 };
    const size_t tail[] = { N - 6 };
    const size_t offs[][2] = { { 0, 0 }, { 1, 1 }, { 3, 8 }, { 8, 8 }, { 0, 5 } };
    for (size_t o = 0; o < KG_ARRAY_LEN(offs); o++) {
        check_case(da, db, scratch, offs[o][0], offs[o][1], N, none, 0);
        check_case(da, db, scratch, offs[o][0], offs[o][1], N, one, 1);
        check_case(da, db, scratch, offs[o][0], offs[o][1], N, last, 1);
        check_case(da, db, scratch, offs[o][0], offs[o][1], N, many, 4);
        check_case(da, db, scratch, offs[o][0], offs[o][1], N - 3, tail, 1); /* not whole words */
    }
    check_case(da, db, scratch, 0, 0, 0, none, 0);
    check_compare(da, db, scratch);
    cudaFree(da);
    cudaFree(db);
    cudaFree(scratch);
    return kg_test_done("test_hotpath_diff --gpu");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--gpu") == 0)
        return check_device();
    check_words();
    check_poison_values();
    check_poison_words();
    return kg_test_done("test_hotpath_diff");
}
