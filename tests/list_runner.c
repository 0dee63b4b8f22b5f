/* A runner for test_cli.sh's `list` checks: ids far longer than the default column, a
 * reference kind with spaces and quotes, template kernel names with ", ". Only `list` and
 * `list --json` are run on it (its callbacks are never called). */
#include "kgate/kgate.h"

static int lr_setup(const kg_setup_args *a, void **s, kg_case_io *io)
{
    (void)a, (void)s, (void)io;
    return kg_error_set(KG_EINTERNAL, __FILE__, __LINE__, "list_runner cases do not run");
}
static int lr_launch(void *s, cudaStream_t st)
{
    (void)s, (void)st;
    return 0;
}
static int lr_ref(void *s, cudaStream_t st, void *h)
{
    (void)s, (void)st, (void)h;
    return 0;
}

static const char lr_stub; /* stands in for a kernel's host stub: list never launches it */
static const kg_kernel_ref lr_gemm[] = {
    { &lr_stub, "sgemm<64, 64, 8>", 256, 0 },
    { &lr_stub, "plain_kernel", 128, 0 },
};

#define LR_CASE(id_, ref_, nk_)                                                               \
    {                                                                                         \
        .id = (id_), .op = "lr", .setup = lr_setup, .launch = lr_launch, .reference = lr_ref, \
        .ref_kind = (ref_), .parity = KG_PARITY_TOLERANCE_INIT(1e-5, 1e-6, 0.999),            \
        .bytes_moved = 1234567.0, .flops = 2e12, .kernels = lr_gemm, .n_kernels = (nk_)       \
    }

static const kg_case_desc lr_cases[] = {
    LR_CASE("short/f32", "cpu-f64", 1),
    LR_CASE("a_very_long_case_id/m=4096,n=4096,k=4096,tile=128x256x64,stages=4,split_k=2/bf16",
            "cpu f64 (first 1024 rows)", 2),
    LR_CASE("quoted/f32", "say \"hi\"", 0),
    LR_CASE("unset/f32", NULL, 2),
};

int main(int argc, char **argv)
{
    kg_registry *reg = NULL;
    int rc = kg_registry_new(&reg);
    if (rc == 0)
        rc = kg_registry_add_all(reg, lr_cases, sizeof lr_cases / sizeof lr_cases[0]);
    return kg_cli_main(reg, rc, argc, argv);
}
