/* The hotpath's device byte comparison (gates/hotpath/hotpath_diff.{h,cu}, issue #14). cpu: the
 * pure word helpers (first differing byte, differing bytes of a ^ b) against a byte loop.
 * gpu (--gpu, exit 77 without a device): kg_hp_device_diff on planted differences (first, last,
 * several, word and byte paths, unaligned pointers, equal buffers) against the host loop. */
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

#define N (1u << 20)
static unsigned char ha[N + 16], hb[N + 16];

static void check_case(unsigned char *da, unsigned char *db, unsigned long long *scratch,
                       size_t oa, size_t ob, size_t n, const size_t *flip, int nflip)
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
    CHECK(cudaMalloc((void **)&scratch, 2 * sizeof *scratch) == cudaSuccess);
    CHECK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice) == cudaSuccess);
    const size_t none[1] = { 0 }, one[] = { 0 }, last[] = { N - 1 }, many[] = { N / 2, 5, N - 3, 77 };
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
    return kg_test_done("test_hotpath_diff");
}
