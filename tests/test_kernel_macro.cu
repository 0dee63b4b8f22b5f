/* cpu (nvcc-compiled, no GPU needed): KG_KERNEL_T registers template kernels of several
 * arguments (issue #25: `KG_KERNEL(sgemm<64, 64, 8>, 256, 0)` is split by its commas), and
 * KG_KERNEL keeps working beside it. For each entry: the recorded name (as written; with the
 * demangler's ", " spacing it is exactly what the demangler prints), the host stub, block and
 * smem; then the static preflight's own lookup (kg_cubin_find_name over this executable's
 * cubins, the way `kgate preflight --static` reads a runner) finds each name on every
 * architecture, to the right symbol, and wrong template arguments stay unfound. */
#include <string.h>
#include "kgate/kgate.h"
#include "preflight/cubin.h"
#include "core/kg_core.h"
#include "kg_test.h"

template <int BM, int BN, int BK> __global__ void sgemm(const float *a, float *c)
{
    c[threadIdx.x] = a[threadIdx.x] * (BM + BN + BK);
}

namespace llm
{
template <typename T, int B, bool Fused> __global__ void layernorm_fwd(T *p)
{
    p[threadIdx.x] = Fused ? T(B) : T(0);
}
} // namespace llm

__global__ void plain_kernel(float *p) { p[threadIdx.x] = 1.0f; }

static const kg_kernel_ref refs[] = {
    KG_KERNEL_T(256, 0, sgemm<64, 64, 8>),
    /* the macro records its argument as written: the formatter must not add the spaces */
    /* clang-format off */
    KG_KERNEL_T(128, 4096, sgemm<128,128,8>), /* written without spaces */
    /* clang-format on */
    KG_KERNEL_T(64, 0, llm::layernorm_fwd<float, 4, true>),
    KG_KERNEL(plain_kernel, 32, 0), /* the old macro, unchanged */
};
/* What each entry must be: name, host stub, block, smem; and whether the demangler prints
 * exactly that name (the other spelling matches after the lookup's normalization). */
static const struct {
    const char *name;
    const void *func;
    int block;
    size_t smem;
    bool demangler_spelling;
} want[] = {
    { "sgemm<64, 64, 8>", (const void *)sgemm<64, 64, 8>, 256, 0, true },
    { "sgemm<128,128,8>", (const void *)sgemm<128, 128, 8>, 128, 4096, false },
    { "llm::layernorm_fwd<float, 4, true>", (const void *)llm::layernorm_fwd<float, 4, true>, 64, 0,
      true },
    { "plain_kernel", (const void *)plain_kernel, 32, 0, true },
};

static void check_entries(void)
{
    CHECK(KG_ARRAY_LEN(refs) == KG_ARRAY_LEN(want));
    for (size_t i = 0; i < KG_ARRAY_LEN(refs); i++)
        CHECK_MSG(strcmp(refs[i].name, want[i].name) == 0 && refs[i].func == want[i].func &&
                      refs[i].block_threads == want[i].block &&
                      refs[i].dynamic_smem == want[i].smem,
                  "entry %zu: '%s' block %d smem %zu", i, refs[i].name, refs[i].block_threads,
                  refs[i].dynamic_smem);
}

static int check_lookup(void)
{
    kg_cubin_set *s = NULL;
    if (kg_cubin_load_exe(&s, "/proc/self/exe") < 0 || s->n_archs == 0) {
        printf("test_kernel_macro: no cubin in this executable (%s), lookup skipped\n",
               kg_error_last());
        kg_cubin_set_free(s);
        return 77;
    }
    printf("%-36s %-6s %-36s %s\n", "KG_KERNEL name", "arch", "demangled", "symbol");
    for (int a = 0; a < s->n_archs; a++) {
        for (size_t i = 0; i < KG_ARRAY_LEN(refs); i++) {
            const kg_cubin_kernel *k = NULL;
            int rc = kg_cubin_find_name(&k, s, refs[i].name, s->archs[a]);
            CHECK_MSG(rc == 0, "'%s' not found on sm_%d: %s", refs[i].name, s->archs[a],
                      kg_error_last());
            if (rc < 0)
                continue;
            printf("%-36s sm_%-3d %-36s %s\n", refs[i].name, k->arch, k->name, k->symbol);
            CHECK(kg_kernel_name_match(k->name, refs[i].name) == 2);
            CHECK_MSG(!want[i].demangler_spelling || strcmp(k->name, refs[i].name) == 0,
                      "demangler prints '%s', KG_KERNEL_T recorded '%s'", k->name, refs[i].name);
        }
        /* Other template arguments are other kernels. */
        static const char *const wrong[] = { "sgemm<64, 64, 16>", "sgemm<64, 64>",
                                             "llm::layernorm_fwd<float, 4, false>" };
        for (size_t w = 0; w < KG_ARRAY_LEN(wrong); w++) {
            const kg_cubin_kernel *k = NULL;
            CHECK_MSG(kg_cubin_find_name(&k, s, wrong[w], s->archs[a]) == KG_ENOTFOUND,
                      "'%s' was found on sm_%d", wrong[w], s->archs[a]);
        }
    }
    kg_cubin_set_free(s);
    return 0;
}

/* Never called: keeps every instantiation's device code referenced from host code. */
void kernel_macro_launch(float *p)
{
    sgemm<64, 64, 8><<<1, 32>>>(p, p);
    sgemm<128, 128, 8><<<1, 32>>>(p, p);
    llm::layernorm_fwd<float, 4, true><<<1, 32>>>(p);
    plain_kernel<<<1, 32>>>(p);
}

int main(void)
{
    check_entries();
    if (check_lookup() == 77 && kg_t_fail == 0)
        return 77;
    return kg_test_done("test_kernel_macro");
}
