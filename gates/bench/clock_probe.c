/* The SM clock probe: a one-thread kernel that reads %clock64 (SM cycles) against %globaltimer
 * (ns). It first waits for the global timer to tick, so both ends of the measured span sit on
 * timer edges and the timer's coarse update period (up to ~1 us on some GPUs) does not bias the
 * estimate; a 20 us span gives the clock to well under 1%. It runs right after a timed sample,
 * outside the timed region, on the same stream: it sees the clock the sample ended at.
 *
 * The same module holds the bench's blocking-start kernel (kg_block_wait, see bench.h) and the
 * window stamp (kg_clock_stamp): many one-thread blocks, each writing its SM's {%clock64,
 * %globaltimer} into the SM's slot. One stamp before ev0 and one after ev1 give each SM's cycles
 * over the whole sample, hence the mean SM clock *during* the replay (kg_clock_window_mhz),
 * where the probe sees only the clock the sample ended at.
 *
 * The kernel is PTX JIT-compiled at run time through the runtime's library API
 * (cudaLibraryLoadData, CUDA >= 12) rather than a .cu in the gate library: that library is
 * compiled with the C warning flags, which nvcc rejects; and the driver API (cuModuleLoadData)
 * would make every runner need libcuda.so.1 at load time, also on machines without a GPU. */
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"

static const char probe_ptx[] =
    ".version 7.0\n"
    ".target sm_60\n"
    ".address_size 64\n"
    ".visible .entry kg_clock_probe(.param .u64 p_out, .param .u32 p_span)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [p_out];\n"
    "  ld.param.u32 %r1, [p_span];\n"
    "  cvt.u64.u32 %rd2, %r1;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u64 %rd3, %globaltimer;\n"
    "$Lwait:\n" /* wait for a timer tick: t0 is on an edge */
    "  mov.u64 %rd4, %globaltimer;\n"
    "  setp.eq.u64 %p1, %rd4, %rd3;\n"
    "  @%p1 bra $Lwait;\n"
    "  mov.u64 %rd5, %clock64;\n"
    "$Lspin:\n" /* spin until span ns have passed: t1 is on an edge */
    "  mov.u64 %rd6, %globaltimer;\n"
    "  sub.u64 %rd7, %rd6, %rd4;\n"
    "  setp.lt.u64 %p2, %rd7, %rd2;\n"
    "  @%p2 bra $Lspin;\n"
    "  mov.u64 %rd8, %clock64;\n"
    "  sub.u64 %rd9, %rd8, %rd5;\n"
    "  st.global.u64 [%rd1], %rd9;\n"
    "  st.global.u64 [%rd1+8], %rd7;\n"
    "  ret;\n"
    "}\n"
    /* The blocking start: spin on a volatile read of the host-mapped flag until the host
     * releases it (flag[0] == want), never longer than p_timeout ns of %globaltimer; a timeout
     * is written to flag[1] (the host was too slow to submit the replay behind it). */
    ".visible .entry kg_block_wait(.param .u64 p_flag, .param .u32 p_want, .param .u64 p_to)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [p_flag];\n"
    "  ld.param.u32 %r1, [p_want];\n"
    "  ld.param.u64 %rd2, [p_to];\n"
    "  mov.u64 %rd3, %globaltimer;\n"
    "$Lpoll:\n"
    "  ld.volatile.u32 %r2, [%rd1];\n"
    "  setp.eq.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra $Lreleased;\n"
    "  mov.u64 %rd4, %globaltimer;\n"
    "  sub.u64 %rd5, %rd4, %rd3;\n"
    "  setp.lt.u64 %p2, %rd5, %rd2;\n"
    "  @%p2 bra $Lpoll;\n"
    "  st.volatile.u32 [%rd1+4], %r1;\n"
    "$Lreleased:\n"
    "  ret;\n"
    "}\n"
    /* The window stamp: slot[smid] = {clock64, globaltimer}, read back to back by one thread and
     * stored as one 16-byte vector, so a slot's two words always come from the same block. */
    ".visible .entry kg_clock_stamp(.param .u64 p_slots, .param .u32 p_n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [p_slots];\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r2, %smid;\n"
    "  setp.ge.u32 %p1, %r2, %r1;\n"
    "  @%p1 bra $Lout;\n"
    "  mov.u64 %rd2, %clock64;\n"
    "  mov.u64 %rd3, %globaltimer;\n"
    "  mul.wide.u32 %rd4, %r2, 16;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  st.global.v2.u64 [%rd5], {%rd2, %rd3};\n"
    "$Lout:\n"
    "  ret;\n"
    "}\n";

/* One library per process: the runtime loads it into the current device's context on first
 * use (the bench runs on one device per process). */
static cudaLibrary_t g_lib;
static cudaKernel_t g_kernel;
static cudaKernel_t g_block;
static cudaKernel_t g_stamp;

int kg_clock_probe_init(void)
{
    int rc = 0;
    if (g_kernel)
        return 0;
    KG_CUDA_CHECK(cudaLibraryLoadData(&g_lib, probe_ptx, NULL, NULL, 0, NULL, NULL, 0));
    KG_CUDA_CHECK(cudaLibraryGetKernel(&g_block, g_lib, "kg_block_wait"));
    KG_CUDA_CHECK(cudaLibraryGetKernel(&g_stamp, g_lib, "kg_clock_stamp"));
    KG_CUDA_CHECK(cudaLibraryGetKernel(&g_kernel, g_lib, "kg_clock_probe"));
cleanup:
    if (rc < 0) {
        g_kernel = g_block = g_stamp = NULL;
        (void)cudaGetLastError();
    }
    return rc;
}

int kg_clock_probe_launch(unsigned long long *dev_out2, unsigned span_ns, cudaStream_t s)
{
    int rc = 0;
    void *args[] = { &dev_out2, &span_ns };
    dim3 one = { 1, 1, 1 };
    if (!g_kernel)
        return KG_ERR(KG_ECUDA, "clock probe: not loaded (kg_clock_probe_init)");
    KG_CUDA_CHECK(cudaLaunchKernel((const void *)g_kernel, one, one, args, 0, s));
cleanup:
    return rc;
}

int kg_block_wait_launch(unsigned *flag_dev, unsigned want, unsigned long long timeout_ns,
                         cudaStream_t s)
{
    int rc = 0;
    void *args[] = { &flag_dev, &want, &timeout_ns };
    dim3 one = { 1, 1, 1 };
    if (!g_block)
        return KG_ERR(KG_ECUDA, "blocking kernel: not loaded (kg_clock_probe_init)");
    KG_CUDA_CHECK(cudaLaunchKernel((const void *)g_block, one, one, args, 0, s));
cleanup:
    return rc;
}

int kg_clock_stamp_launch(unsigned long long *slots_dev, unsigned n_slots, unsigned blocks,
                          cudaStream_t s)
{
    int rc = 0;
    void *args[] = { &slots_dev, &n_slots };
    dim3 grid = { blocks, 1, 1 }, one = { 1, 1, 1 };
    if (!g_stamp)
        return KG_ERR(KG_ECUDA, "clock stamp: not loaded (kg_clock_probe_init)");
    KG_CUDA_CHECK(cudaLaunchKernel((const void *)g_stamp, grid, one, args, 0, s));
cleanup:
    return rc;
}

int kg_bench_fill_bf16(uint16_t *dev, size_t n, uint64_t seed, cudaStream_t s)
{
    int rc = 0;
    const size_t chunk = n < ((size_t)4 << 20) ? n : ((size_t)4 << 20);
    uint16_t *h = NULL;
    kg_rng g;
    if (n == 0)
        return 0;
    h = malloc(chunk * sizeof *h);
    if (!h)
        return KG_ERR(KG_ENOMEM, "out of memory for random inputs");
    /* 8 MiB of random bf16 from the seed, then doubled in place on the device: the data is
     * random at every scale that matters for power and caches, and filling stays fast. */
    kg_rng_seed(&g, seed, 0x66696c6c /* "fill" */);
    kg_rng_fill_bf16(&g, h, chunk, -1.0f, 1.0f);
    KG_CUDA_CHECK(cudaMemcpyAsync(dev, h, chunk * sizeof *h, cudaMemcpyHostToDevice, s));
    for (size_t done = chunk; done < n;) {
        size_t len = done < n - done ? done : n - done;
        KG_CUDA_CHECK(
            cudaMemcpyAsync(dev + done, dev, len * sizeof *dev, cudaMemcpyDeviceToDevice, s));
        done += len;
    }
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
cleanup:
    free(h);
    return rc;
}
