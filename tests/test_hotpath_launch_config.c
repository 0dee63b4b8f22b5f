/* cpu: the hotpath gate's launch-configuration check. The decision (kg_hp_launch_config_decide):
 * a declared kernel launched with a block size or dynamic shared memory that no declaration of
 * it states FAILs with both in the message; any of several declarations of one kernel passes;
 * a launch through any of the kernel's handles (stub, cudaKernel_t, CUfunction) is that
 * kernel's; undeclared kernels (cuBLAS) are counted, not judged; a declared kernel never
 * launched, and one whose handles could not be resolved, are notes. The callback's recording
 * (fed synthetic CUPTI records): threads = x*y*z and the dynamic smem from the runtime's and
 * the driver's launch parameters, a driver launch under a runtime launch counted once. */
#include <string.h>
#include "hotpath/launch_config.h"
#include "kg_test.h"

#define H(n) ((const void *)(uintptr_t)(n))

static kg_hp_lc_decl decl(const char *name, uintptr_t base, unsigned threads, size_t smem)
{
    kg_hp_lc_decl d = { name, { H(base), H(base + 1), H(base + 2) }, threads, smem, true };
    return d;
}

static void check_decide(void)
{
    kg_hp_launch_config o;
    kg_hp_lc_decl d[3] = { decl("axpy_kernel", 0x100, 256, 0), decl("finish", 0x200, 64, 0),
                           decl("axpy_kernel", 0x100, 128, 1024) };
    /* As declared, through each handle of the kernel. */
    for (int h = 0; h < 3; h++) {
        kg_cw_launch l[] = { { H(0x100 + h), 256, 0, 2 }, { H(0x200), 64, 0, 2 } };
        kg_hp_launch_config_decide(d, 2, l, 2, &o);
        CHECK(o.done && o.pass && o.mismatched == 0 && o.n_rows == 2);
        CHECK(o.rows[0].decl == 0 && o.rows[0].match && o.rows[0].count == 2);
        CHECK(o.rows[1].decl == 1 && o.rows[1].threads == 64);
        CHECK(o.fail[0] == '\0' && o.note[0] == '\0');
    }
    /* Half the block: FAIL, the declaration in the message. */
    kg_cw_launch half[] = { { H(0x102), 128, 0, 2 }, { H(0x200), 64, 0, 2 } };
    kg_hp_launch_config_decide(d, 2, half, 2, &o);
    CHECK(!o.pass && o.mismatched == 1 && !o.rows[0].match);
    CHECK_MSG(strcmp(o.fail, "kernel 'axpy_kernel' launched with 128 threads/block, 0 B dynamic "
                             "smem; kernels[] declares 256, 0") == 0,
              "got '%s'", o.fail);
    /* Dynamic smem not declared. */
    kg_cw_launch smem[] = { { H(0x100), 256, 1024, 2 }, { H(0x200), 64, 0, 2 } };
    kg_hp_launch_config_decide(d, 2, smem, 2, &o);
    CHECK(!o.pass);
    CHECK_MSG(strstr(o.fail, "256 threads/block, 1024 B dynamic smem; kernels[] declares 256, 0"),
              "got '%s'", o.fail);
    /* Two declarations of one kernel: either passes; a third configuration lists both. */
    kg_cw_launch both[] = { { H(0x100), 256, 0, 1 },
                            { H(0x101), 128, 1024, 1 },
                            { H(0x200), 64, 0, 1 } };
    kg_hp_launch_config_decide(d, 3, both, 3, &o);
    CHECK(o.pass && o.n_rows == 3);
    kg_cw_launch third[] = { { H(0x100), 512, 0, 1 }, { H(0x200), 64, 0, 1 } };
    kg_hp_launch_config_decide(d, 3, third, 2, &o);
    CHECK(!o.pass);
    CHECK_MSG(strstr(o.fail, "declares 256, 0 or 128, 1024") != NULL, "got '%s'", o.fail);
    /* Undeclared kernels (library internals) are counted; a declared kernel not launched is a
     * note, not a failure. */
    kg_cw_launch lib[] = { { H(0x100), 256, 0, 2 }, { H(0x900), 128, 49152, 3 } };
    kg_hp_launch_config_decide(d, 2, lib, 2, &o);
    CHECK(o.pass && o.n_rows == 1 && o.undeclared == 3);
    CHECK_MSG(strstr(o.note, "kernel 'finish' declared, not launched") != NULL, "got '%s'", o.note);
    /* Unresolved: never matched (not even a NULL handle), said in the note. */
    kg_hp_lc_decl u[1] = { { "lost", { NULL, NULL, NULL }, 256, 0, false } };
    kg_cw_launch nul[] = { { NULL, 256, 0, 1 } };
    kg_hp_launch_config_decide(u, 1, nul, 1, &o);
    CHECK(o.pass && o.n_rows == 0 && o.undeclared == 1);
    CHECK_MSG(strstr(o.note, "kernel 'lost': no launch handle") != NULL, "got '%s'", o.note);
    /* Nothing declared (a cuBLAS case): nothing judged. */
    kg_hp_launch_config_decide(NULL, 0, lib, 2, &o);
    CHECK(o.pass && o.n_rows == 0 && o.undeclared == 5);
}

/* Same layout as the CUDA 13 <<<>>> entry point's (see cupti_watch.c). */
typedef struct {
    void *kernel;
    dim3 gridDim, blockDim;
    void **args;
    size_t sharedMem;
    cudaStream_t stream;
} launch13_params;

static void feed(kg_cupti_watch *w, CUpti_CallbackDomain d, uint32_t cbid,
                 CUpti_ApiCallbackSite site, const void *params)
{
    CUpti_CallbackData cd;
    const char *name = NULL;
    memset(&cd, 0, sizeof cd);
    (void)cuptiGetCallbackName(d, cbid, &name);
    cd.callbackSite = site;
    cd.functionName = name;
    cd.functionParams = params;
    kg_cupti_watch_feed(w, d, cbid, &cd);
}

static void check_recording(void)
{
    kg_cupti_watch *w = NULL;
    const uint32_t rt13 = CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
    const uint32_t drv = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    launch13_params p13 = { (void *)0x100, { 4, 1, 1 }, { 16, 4, 2 },
                            NULL,          512,         (cudaStream_t)(uintptr_t)0x5000 };
    cuLaunchKernel_params pd;
    memset(&pd, 0, sizeof pd);
    pd.f = (CUfunction)(uintptr_t)0x102;
    pd.blockDimX = 128, pd.blockDimY = 1, pd.blockDimZ = 1;
    pd.hStream = (CUstream)(uintptr_t)0x5000;
    CHECK(kg_cupti_watch_new_detached(&w) == 0 && w);
    if (!w)
        return;
    CHECK(kg_cupti_watch_begin(w) == 0);
    for (int i = 0; i < 2; i++) { /* the runtime launch with the driver's underneath */
        feed(w, CUPTI_CB_DOMAIN_RUNTIME_API, rt13, CUPTI_API_ENTER, &p13);
        feed(w, CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_ENTER, &pd);
        feed(w, CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_EXIT, &pd);
        feed(w, CUPTI_CB_DOMAIN_RUNTIME_API, rt13, CUPTI_API_EXIT, &p13);
    }
    feed(w, CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_ENTER, &pd); /* a library's own */
    feed(w, CUPTI_CB_DOMAIN_DRIVER_API, drv, CUPTI_API_EXIT, &pd);
    CHECK(kg_cupti_watch_end(w) == 0);
    size_t n = 0;
    unsigned long dropped = 1;
    const kg_cw_launch *l = kg_cupti_watch_launches(w, &n, &dropped);
    CHECK_MSG(n == 2 && dropped == 0, "n %zu dropped %lu", n, dropped);
    if (n == 2) {
        CHECK(l[0].handle == (const void *)0x100 && l[0].threads == 128 && l[0].smem == 512 &&
              l[0].count == 2);
        CHECK(l[1].handle == (const void *)0x102 && l[1].threads == 128 && l[1].smem == 0 &&
              l[1].count == 1);
    }
    CHECK(kg_cupti_watch_begin(w) == 0); /* begin clears the table */
    CHECK(kg_cupti_watch_end(w) == 0);
    (void)kg_cupti_watch_launches(w, &n, &dropped);
    CHECK(n == 0);
    kg_cupti_watch_free(w);
}

int main(void)
{
    check_decide();
    check_recording();
    return kg_test_done("test_hotpath_launch_config");
}
