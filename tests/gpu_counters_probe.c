/* The counters gate's first-GPU-run diagnostic (issue #18): initialise CUPTI's range profiler
 * through the gate's own session (gates/counters/counters_cupti.c, every call logged with its
 * name and result string), list which wanted metrics exist on this device, profile two toy
 * kernels and compare each counter with its value from first principles:
 *   copy of N floats (N * 4 > L2):  DRAM read = write = 4N bytes, FFMA = 0
 *   FMA loop, T threads x K FMAs:   FFMA thread instructions = T * K, FLOP = 2 T K,
 *                                   DRAM write = 4T bytes (4T > L2)
 * Exit 0 only when every checked counter is within 10%; 77 without a GPU or without
 * profiling permission (the reason printed); 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "counters/counters.h"

int kg_probe_copy(const float *in, float *out, size_t n, cudaStream_t s);
int kg_probe_fma(float *out, float a, float b, int k, size_t n, cudaStream_t s);
int kg_probe_wmma(const void *a, const void *b, float *out, int k, size_t warps, cudaStream_t s);
int kg_probe_read(const float *in, float *sink, size_t n, cudaStream_t s);

typedef struct {
    float *in, *out;
    size_t n;
    int k;
} probe;

static int launch_copy(void *arg, cudaStream_t s)
{
    probe *p = arg;
    return kg_probe_copy(p->in, p->out, p->n, s) ? KG_ERR(KG_ECUDA, "copy launch failed") : 0;
}

static int launch_fma(void *arg, cudaStream_t s)
{
    probe *p = arg;
    return kg_probe_fma(p->out, 0.999f, 0.001f, p->k, p->n, s)
               ? KG_ERR(KG_ECUDA, "fma launch failed")
               : 0;
}

static int launch_wmma(void *arg, cudaStream_t s)
{
    probe *p = arg; /* in: the two 16x16 bf16 tiles (zeros), out: one fp32 tile per warp */
    return kg_probe_wmma(p->in, p->in + 128, p->out, p->k, p->n, s)
               ? KG_ERR(KG_ECUDA, "wmma launch failed")
               : 0;
}

static int launch_read(void *arg, cudaStream_t s)
{
    probe *p = arg; /* n floats of in read, nothing stored */
    return kg_probe_read(p->in, p->out, p->n, s) ? KG_ERR(KG_ECUDA, "read launch failed") : 0;
}

static int fails;

static void expect(const char *what, double got, double want)
{
    bool ok = isfinite(got) && fabs(got - want) <= 0.10 * fabs(want) + 0.5;
    printf("  %-28s measured %-14.6g expected %-14.6g %s\n", what, got, want,
           !isfinite(got) ? "UNAVAILABLE"
           : ok           ? "ok"
                          : "OFF BY MORE THAN 10%");
    fails += !ok;
}

/* DRAM writes of a kernel profiled after an L2 flush (counters_flush.cu): up to one L2 of its
 * output may still be dirty in the L2 when the range ends, so they are counted only when
 * evicted later (as by ncu --cache-control all): between 4N - L2 and 4N + 10%. */
static void expect_writes(const char *what, double got, double want, double l2)
{
    bool ok = isfinite(got) && got >= want - l2 - 0.10 * want && got <= 1.10 * want + 0.5;
    printf("  %-28s measured %-14.6g expected %-14.6g %s\n", what, got, want,
           !isfinite(got) ? "UNAVAILABLE"
           : ok           ? "ok (within [4N - L2, 4N] + 10%)"
                          : "OUTSIDE [4N - L2, 4N] + 10%");
    fails += !ok;
}

/* A counter that must stay under a floor (the gate's "appeared" threshold). */
static void below(const char *what, double got, double limit)
{
    bool ok = isfinite(got) && got <= limit;
    printf("  %-28s measured %-14.6g at most %-14.6g %s\n", what, got, limit,
           !isfinite(got) ? "UNAVAILABLE"
           : ok           ? "ok"
                          : "ABOVE THE FLOOR");
    fails += !ok;
}

static void show(const kg_ct_counts *c)
{
    printf("  kernels (ranges) %d\n", c->n_kernels);
    for (int i = 0; i < KG_CT_N; i++)
        printf("    %-22s %.6g%s\n", kg_ct_metrics[i].key, c->v[i], c->have[i] ? "" : " (n/a)");
    printf("    derived: dram_bytes %.6g flops %.6g (tensor %.6g%s) spill %.6g tensor inst %.6g\n",
           c->dram_bytes, c->flops, c->tensor_flops, c->flops_partial ? ", partial" : "", c->spill,
           c->tensor);
    /* no host memory is touched: GH100 showed ~0.8 MB here (docs/counters.md), the gate's
     * floor is 4 MiB; the split says whether the artefact is reads or writes */
    printf("    sysmem bytes %.6g = read %.6g + write %.6g (floor %.6g)\n", c->sysmem_bytes,
           c->sysmem_read_bytes, c->sysmem_write_bytes,
           ((kg_ct_decide_opts)KG_CT_DECIDE_OPTS_INIT).sysmem_floor_bytes);
}

/* What the L2 flush before a range leaves (issue #25 item 6): a buffer of 8 MiB (fits the L2)
 * is written just before the profile, as a case's setup or an earlier pass writes; the
 * profiled kernel then only reads 1 KiB (writes: the L2's own, ~0 after a working flush) and
 * reads the dirty buffer (reads: 8 MiB when the flush evicted it, ~0 when it stayed). */
static int dirty_check(kg_ct_session *s, float *buf, float *in, float *out, cudaStream_t st)
{
    int rc = 0;
    probe p = { .in = in, .out = out, .n = 256 };
    kg_ct_work w = { .arg = &p, .launch = launch_read };
    kg_ct_counts c;
    double wall = 0;
    size_t nd = (size_t)2 << 20;
    void *host = NULL;
    printf("\n8 MiB written before the range (L2 flushed), kernel reads 1 KiB:\n");
    KG_TRY(kg_probe_copy(in, buf, nd, st) ? KG_ERR(KG_ECUDA, "copy failed") : 0);
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    printf("  dram write %.6g read %.6g\n", c.v[KG_CT_DRAM_WRITE], c.v[KG_CT_DRAM_READ]);
    below("dram__bytes_write (dirty lines)", c.v[KG_CT_DRAM_WRITE], 64 * 1024.0);
    printf("8 MiB written before the range (L2 flushed), kernel reads them:\n");
    KG_TRY(kg_probe_copy(in, buf, nd, st) ? KG_ERR(KG_ECUDA, "copy failed") : 0);
    p.in = buf, p.n = nd;
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    printf("  dram write %.6g read %.6g\n", c.v[KG_CT_DRAM_WRITE], c.v[KG_CT_DRAM_READ]);
    below("dram__bytes_write (dirty lines)", c.v[KG_CT_DRAM_WRITE], 64 * 1024.0);
    expect("dram__bytes_read (evicted)", c.v[KG_CT_DRAM_READ], 4.0 * nd);
    /* the copy engines' writes (a prepare() restoring inputs by cudaMemcpyAsync) too */
    for (int k = 0; k < 2; k++) {
        printf("8 MiB written by a %s copy before the range, kernel reads 1 KiB:\n",
               k ? "host-to-device" : "device-to-device");
        if (k) {
            if (!(host = malloc(4 * nd)))
                return KG_ERR(KG_ENOMEM, "out of memory");
            memset(host, 0x3c, 4 * nd);
            KG_CUDA_CHECK(cudaMemcpyAsync(buf, host, 4 * nd, cudaMemcpyHostToDevice, st));
        } else
            KG_CUDA_CHECK(cudaMemcpyAsync(buf, in, 4 * nd, cudaMemcpyDeviceToDevice, st));
        p.in = in, p.n = 256;
        KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
        printf("  dram write %.6g read %.6g\n", c.v[KG_CT_DRAM_WRITE], c.v[KG_CT_DRAM_READ]);
        below("dram__bytes_write (dirty lines)", c.v[KG_CT_DRAM_WRITE], 64 * 1024.0);
    }
cleanup:
    free(host);
    return rc;
}

/* A stream, and n floats in (0x3c bytes, never zeros) and out, for a probe's copy. */
static int probe_alloc(probe *p, cudaStream_t *st)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking));
    KG_CUDA_CHECK(cudaMalloc((void **)&p->in, p->n * 4));
    KG_CUDA_CHECK(cudaMalloc((void **)&p->out, p->n * 4));
    KG_CUDA_CHECK(cudaMemset(p->in, 0x3c, p->n * 4));
cleanup:
    return rc;
}

static void probe_free(probe *p, cudaStream_t st)
{
    cudaFree(p->in); /* a probe's end: nothing left to undo on failure */
    cudaFree(p->out);
    if (st)
        cudaStreamDestroy(st);
}

/* The first range of a fresh session (counters_cupti.c, ct_warm): its DRAM writes are the
 * copy's own, none of what was written before it (measured without the session's warm-up
 * range: 3.7 MB for this 4 MiB copy; every later range, and ncu: 0). */
static int first_range_check(kg_ct_session *s)
{
    int rc = 0;
    probe p = { .n = (size_t)1 << 20 };
    kg_ct_work w = { .arg = &p, .launch = launch_copy };
    kg_ct_counts c;
    double wall = 0;
    cudaStream_t st = NULL;
    KG_TRY(probe_alloc(&p, &st));
    KG_TRY(launch_copy(&p, st)); /* warm: module loading outside the profile */
    KG_CUDA_CHECK(cudaStreamSynchronize(st));
    printf("\nthe session's first range, 4 MiB copied out of place:\n");
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    printf("  dram write %.6g read %.6g\n", c.v[KG_CT_DRAM_WRITE], c.v[KG_CT_DRAM_READ]);
    below("dram__bytes_write (first range)", c.v[KG_CT_DRAM_WRITE], 64 * 1024.0);
    expect("dram__bytes_read", c.v[KG_CT_DRAM_READ], 4.0 * p.n);
cleanup:
    probe_free(&p, st);
    return rc;
}

static int run(kg_ct_session *s, int l2)
{
    int rc = 0;
    probe p = { 0 };
    kg_ct_work w = { .arg = &p };
    kg_ct_counts c;
    double wall = 0;
    cudaStream_t st = NULL;
    /* 4N well above L2 (H200: 50 MiB): 64M floats = 256 MiB each way */
    p.n = (size_t)64 << 20;
    if ((double)p.n * 4 < 4.0 * l2)
        p.n = (size_t)l2; /* keep 4N >= 4 x L2 on larger caches */
    KG_TRY(probe_alloc(&p, &st));
    KG_CUDA_CHECK(cudaDeviceSynchronize());
    KG_TRY(launch_copy(&p, st)); /* warm: module loading outside the profile */
    KG_TRY(kg_probe_read(p.in, p.out, 256, st) ? KG_ERR(KG_ECUDA, "read launch failed") : 0);
    KG_CUDA_CHECK(cudaStreamSynchronize(st));
    KG_TRY(dirty_check(s, p.out + ((size_t)16 << 20), p.in, p.out, st));
    /* The kernel's own writes that fit the L2 stay dirty there when the range ends, as ncu
     * --cache-control all counts them (H200: 4 MiB copied, out of place 256 B, in place 0 B);
     * a range that also counted their later write-back would show ~4 MiB. */
    for (int inplace = 0; inplace < 2; inplace++) {
        probe q = { .in = inplace ? p.out : p.in, .out = p.out, .n = (size_t)1 << 20 };
        w.launch = launch_copy;
        w.arg = &q;
        printf("\n4 MiB copied %s after the flush:\n", inplace ? "in place" : "out of place");
        KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
        printf("  dram write %.6g read %.6g\n", c.v[KG_CT_DRAM_WRITE], c.v[KG_CT_DRAM_READ]);
        below("dram__bytes_write (L2-resident)", c.v[KG_CT_DRAM_WRITE], 64 * 1024.0);
        expect("dram__bytes_read", c.v[KG_CT_DRAM_READ], 4.0 * q.n);
        w.arg = &p;
    }
    printf("\ncopy of N = %zu floats:\n", p.n);
    w.launch = launch_copy;
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    show(&c);
    printf("  profiled in %.3f s (%zu passes, %s replay: L2 flushed before %s)\n", wall,
           kg_ct_session_passes(s), kg_ct_session_replay(s),
           strcmp(kg_ct_session_replay(s), "user") == 0 ? "every pass" : "the first pass");
    expect("dram__bytes_read.sum", c.v[KG_CT_DRAM_READ], 4.0 * p.n);
    expect_writes("dram__bytes_write.sum", c.v[KG_CT_DRAM_WRITE], 4.0 * p.n, l2);
    expect("ffma thread inst", c.v[KG_CT_FFMA], 0);
    below("sysmem bytes (no host memory)", c.sysmem_bytes,
          ((kg_ct_decide_opts)KG_CT_DECIDE_OPTS_INIT).sysmem_floor_bytes);
    p.k = 256;
    printf("\nFMA loop: T = %zu threads x K = %d FMAs:\n", p.n, p.k);
    w.launch = launch_fma;
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    show(&c);
    printf("  profiled in %.3f s\n", wall);
    expect("ffma thread inst", c.v[KG_CT_FFMA], (double)p.n * p.k);
    expect("flops (2 per FMA)", c.flops, 2.0 * p.n * p.k);
    expect_writes("dram__bytes_write.sum", c.v[KG_CT_DRAM_WRITE], 4.0 * p.n, l2);
    expect("local (spill) requests", c.spill, 0);
    p.k = 64, p.n = 4096; /* warps */
    KG_CUDA_CHECK(cudaMemset(p.in, 0, 1024));
    printf("\nwmma loop: W = %zu warps x K = %d bf16 16x16x16 MMAs (8192 FLOP each):\n", p.n, p.k);
    KG_TRY(launch_wmma(&p, st)); /* warm */
    KG_CUDA_CHECK(cudaStreamSynchronize(st));
    w.launch = launch_wmma;
    KG_TRY(kg_ct_session_profile(s, &c, &wall, &w, st));
    show(&c);
    /* mma.sync m16n8k16 per instruction: a 16x16x16 wmma is 2 of them per warp */
    expect("tensor (hmma) warp inst", c.tensor, 2.0 * p.n * p.k);
    expect("tensor FLOPs (ops path)", c.tensor_flops, 8192.0 * p.n * p.k);
    below("sysmem bytes (no host memory)", c.sysmem_bytes,
          ((kg_ct_decide_opts)KG_CT_DECIDE_OPTS_INIT).sysmem_floor_bytes);
cleanup:
    probe_free(&p, st);
    return rc;
}

int main(void)
{
    int n = 0, rc;
    kg_ct_session *s = NULL;
    kg_ct_avail avail = KG_CT_AVAIL_OK;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("gpu_counters_probe: no CUDA device: skipped\n");
        return 77;
    }
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
        return 1;
    printf("gpu_counters_probe: %s, sm_%d%d, L2 %d bytes\n", prop.name, prop.major, prop.minor,
           prop.l2CacheSize);
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = kg_ct_session_open(&s, &avail, 0, stdout);
    if (rc < 0) {
        printf("gpu_counters_probe: session not opened: %s (availability class %d)\n",
               kg_error_last(), (int)avail);
        return avail != KG_CT_AVAIL_OK ? 77 : 1;
    }
    printf("chip %s, %zu replay passes for the whole metric table\n", kg_ct_session_chip(s),
           kg_ct_session_passes(s));
    for (int i = 0; i < KG_CT_N; i++)
        printf("  metric %-20s %s\n", kg_ct_metrics[i].key,
               kg_ct_session_metric(s, (kg_ct_metric)i) ? kg_ct_session_metric(s, (kg_ct_metric)i)
                                                        : "UNAVAILABLE on this device");
    /* what the next GPU run must tell: which tensor-FLOP and sysmem metrics this chip lists */
    printf("base metrics naming tensor / ops_path / sysmem on this device:\n");
    for (const char *r = kg_ct_session_related(s); *r;) {
        size_t l = strcspn(r, "\n");
        printf("  related %.*s\n", (int)l, r);
        r += l + (r[l] == '\n');
    }
    rc = first_range_check(s); /* first: the session's first range after its own */
    if (rc == 0)
        rc = run(s, prop.l2CacheSize);
    if (rc < 0)
        printf("gpu_counters_probe: %s\n", kg_error_last());
    kg_ct_session_close(s);
    printf("\ngpu_counters_probe: %s (%d check(s) off)\n", rc == 0 && fails == 0 ? "PASS" : "FAIL",
           fails);
    return rc == 0 && fails == 0 ? 0 : 1;
}
