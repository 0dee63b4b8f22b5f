/* The bench timing engine: warm-up, a CUDA graph of k launches on the case's non-blocking
 * stream, CUDA-event timing of graph replays, adaptive sampling to a target CI width or a
 * budget, the SM clock after every sample (dropping throttled samples), and kernel names from
 * CUPTI activity over one extra replay after the timed ones.
 *
 * Every sample starts behind the blocking kernel (nvbench's blocking start): the GPU holds at
 * it until the host has submitted ev0, the replay and ev1, so the host's submission latency is
 * not in the timed region (it was divided by k: the per-launch figure depended on k).
 * Before sampling, the case runs back-to-back until the clock probe's SM clock is steady (NVML
 * is polled too, as context); the state's label and "held" come from the probe clock measured
 * after every sample (bench_power.c: the rules, pure).
 *
 * Cold mode flushes L2 before every sample with a memset of 2x the L2 size, outside the timed
 * region, and times one launch per sample (k = 1): a graph of k launches would only be cold for
 * its first launch. Inputs are not rotated: the flush evicts every input line before every
 * timed launch, which is what rotation would achieve, without needing k copies of the inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench/bench.h"

#define KG_PROBE_SPAN_NS 20000u
#define KG_BLOCK_TIMEOUT_NS 50000000ull /* 50 ms: a blocking start can never hang */
#define KG_WARM_CHUNK_MAX 4096

struct kg_bench_env {
    const kg_device_info *dev;
    void *flush;
    size_t flush_bytes;
    unsigned long long *probe_dev;
    unsigned long long *probe_host; /* pinned */
    unsigned long long *stamp_dev;  /* window stamps: [before | after] x n_slots x {cyc, ns} */
    unsigned long long *stamp_host; /* pinned */
    unsigned n_slots, stamp_blocks;
    cudaEvent_t ev0, ev1;
    kg_nvml *nvml;
    unsigned gen;
    bool probe_ok;       /* the clock probe loaded (else clocks are unknown, none dropped) */
    double max_mhz;      /* max SM clock: device attribute, else NVML; 0 = unknown */
    unsigned *flag_host; /* blocking start: host-mapped {release, timed out} */
    unsigned *flag_dev;
    unsigned block_gen;
    bool block_ok;
    double last_poll; /* NVML poll cadence */
};

double kg_bench_env_max_clock_mhz(const kg_bench_env *e) { return e->max_mhz; }

static size_t be_stamp_bytes(const kg_bench_env *e)
{
    return 4 * (size_t)e->n_slots * sizeof(unsigned long long);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int kg_bench_env_new(kg_bench_env **out, const kg_device_info *dev, const kg_bench_opts *o)
{
    int rc = 0;
    kg_bench_env *e = calloc(1, sizeof *e);
    *out = NULL;
    if (!e)
        return KG_ERR(KG_ENOMEM, "out of memory for the bench");
    e->dev = dev;
    KG_CUDA_CHECK(cudaMalloc((void **)&e->probe_dev, 2 * sizeof(unsigned long long)));
    KG_CUDA_CHECK(cudaMallocHost((void **)&e->probe_host, 2 * sizeof(unsigned long long)));
    /* a slot per SM id (ids can exceed the count: twice it); two blocks per SM reach them all
     * on an idle GPU, and an SM that none reached is left out of the window clock */
    e->n_slots = dev->sm_count > 0 && dev->sm_count < 2048 ? 2u * (unsigned)dev->sm_count : 256;
    e->stamp_blocks = e->n_slots;
    KG_CUDA_CHECK(cudaMalloc((void **)&e->stamp_dev, be_stamp_bytes(e)));
    KG_CUDA_CHECK(cudaMallocHost((void **)&e->stamp_host, be_stamp_bytes(e)));
    KG_CUDA_CHECK(cudaEventCreate(&e->ev0));
    KG_CUDA_CHECK(cudaEventCreate(&e->ev1));
    if (o->mode == 1) {
        e->flush_bytes = 2 * (size_t)(dev->l2_bytes > 0 ? dev->l2_bytes : (64 << 20));
        KG_CUDA_CHECK(cudaMalloc(&e->flush, e->flush_bytes));
    }
    e->nvml = kg_nvml_open(dev->uuid);
    e->max_mhz = dev->sm_clock_khz / 1000.0;
    if (!(e->max_mhz > 0)) {
        double m = kg_nvml_sm_max_clock(e->nvml);
        e->max_mhz = isfinite(m) ? m : 0;
    }
    e->probe_ok = kg_clock_probe_init() == 0;
    if (!e->probe_ok)
        fprintf(stderr,
                "kgate bench: SM clock probe unavailable (%s): clocks not recorded, "
                "no blocking start\n",
                kg_error_last());
    KG_CUDA_CHECK(
        cudaHostAlloc((void **)&e->flag_host, 2 * sizeof *e->flag_host, cudaHostAllocMapped));
    e->flag_host[0] = e->flag_host[1] = 0;
    KG_CUDA_CHECK(cudaHostGetDevicePointer((void **)&e->flag_dev, e->flag_host, 0));
    e->block_ok = e->probe_ok;
    *out = e;
    e = NULL;
cleanup:
    kg_bench_env_free(e);
    return rc;
}

void kg_bench_env_free(kg_bench_env *e)
{
    if (!e)
        return;
    if (e->flush)
        (void)cudaFree(e->flush);
    if (e->probe_dev)
        (void)cudaFree(e->probe_dev);
    if (e->probe_host)
        (void)cudaFreeHost(e->probe_host);
    if (e->stamp_dev)
        (void)cudaFree(e->stamp_dev);
    if (e->stamp_host)
        (void)cudaFreeHost(e->stamp_host);
    if (e->ev0)
        (void)cudaEventDestroy(e->ev0);
    if (e->ev1)
        (void)cudaEventDestroy(e->ev1);
    if (e->flag_host)
        (void)cudaFreeHost(e->flag_host);
    kg_nvml_close(e->nvml);
    free(e);
}

cJSON *kg_bench_env_nvml_json(kg_bench_env *e) { return kg_nvml_snapshot(e->nvml); }

int kg_bench_block(kg_bench_env *e, cudaStream_t s)
{
    if (!e->block_ok)
        return 0;
    if (++e->block_gen == 0) /* 0 is the flag's first value: never wait for it */
        e->block_gen = 1;
    return kg_block_wait_launch(e->flag_dev, e->block_gen, KG_BLOCK_TIMEOUT_NS, s);
}

void kg_bench_block_release(kg_bench_env *e)
{
    if (e->block_ok)
        __atomic_store_n(&e->flag_host[0], e->block_gen, __ATOMIC_SEQ_CST);
}

bool kg_bench_block_timed_out(const kg_bench_env *e)
{
    return e->block_ok && __atomic_load_n(&e->flag_host[1], __ATOMIC_SEQ_CST) == e->block_gen;
}

void kg_bench_poll_track(kg_bench_env *e, kg_power_track *t, bool force)
{
    kg_power_poll p;
    double now = now_s();
    if (!e->nvml || (!force && now - e->last_poll < KG_POWER_POLL_S))
        return;
    kg_nvml_poll(e->nvml, &p, now);
    kg_power_track_add(t, &p);
    e->last_poll = now;
}

/* The clock probe and its copy-back, enqueued on s after what is already there. */
static int be_probe_enqueue(kg_bench_env *e, cudaStream_t s)
{
    int rc = 0;
    KG_TRY(kg_clock_probe_launch(e->probe_dev, KG_PROBE_SPAN_NS, s));
    KG_CUDA_CHECK(cudaMemcpyAsync(e->probe_host, e->probe_dev, 2 * sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost, s));
cleanup:
    return rc;
}

/* The probe's SM clock once s synchronized (NaN when it did not run). */
static double be_probe_mhz(const kg_bench_env *e)
{
    return (e->probe_ok && e->probe_host[1])
               ? (double)e->probe_host[0] * 1000.0 / (double)e->probe_host[1]
               : NAN;
}

typedef struct {
    kg_power_poll polls[96]; /* the latest NVML polls (> 1.5 s / 25 ms) */
    size_t np;
    kg_clock_reading rd[KG_PROBE_MAX_READINGS]; /* the latest probe readings */
    size_t nr;
    int readings; /* every reading taken */
    double last_poll;
} be_warm;

/* After one chunk at `at` s: the probe reading (s synchronized) and, on its cadence, a poll. */
static void be_warm_record(be_warm *w, kg_bench_env *e, double at)
{
    if (e->probe_ok) {
        if (w->nr == KG_PROBE_MAX_READINGS) {
            memmove(w->rd, w->rd + 1, (w->nr - 1) * sizeof *w->rd);
            w->nr--;
        }
        w->rd[w->nr].t_s = at;
        w->rd[w->nr++].mhz = be_probe_mhz(e);
        w->readings++;
    }
    if (e->nvml && (w->last_poll < 0 || at - w->last_poll >= KG_POWER_POLL_S)) {
        if (w->np == KG_ARRAY_LEN(w->polls)) {
            memmove(w->polls, w->polls + 1, (w->np - 1) * sizeof *w->polls);
            w->np--;
        }
        kg_nvml_poll(e->nvml, &w->polls[w->np++], at);
        w->last_poll = at;
    }
}

/* Done warming? With the probe: its rule. Without: NVML steady (or one window without NVML)
 * once past the minimum, else the cap; never steady (the state is unknown). */
static bool be_warm_done(const be_warm *w, const kg_bench_env *e, const kg_warm_rule *r, double at,
                         bool *steady, double *ref)
{
    if (e->probe_ok)
        return kg_probe_warm_done(w->rd, w->nr, r, steady, ref);
    *steady = false;
    *ref = NAN;
    if (at >= r->max_s)
        return true;
    if (at < r->min_s)
        return false;
    return e->nvml ? kg_power_steady(w->polls, w->np) : at >= KG_POWER_WINDOW * KG_POWER_POLL_S;
}

int kg_bench_warm_to_steady(kg_power_state *ps, kg_power_track *t, kg_bench_env *e, kg_bench_op op,
                            void *arg, cudaStream_t s, double op_ms, const kg_warm_rule *r)
{
    int rc = 0;
    bool steady = false;
    double ref = NAN;
    be_warm *w = calloc(1, sizeof *w);
    const double t0 = now_s();
    double want = ceil(KG_WARM_CHUNK_S * 1e3 / fmax(op_ms, 1e-4));
    const int chunk = (int)fmin(KG_WARM_CHUNK_MAX, fmax(1, want));
    memset(ps, 0, sizeof *ps);
    if (!w)
        return KG_ERR(KG_ENOMEM, "out of memory for the warm-up");
    w->last_poll = -1;
    for (;;) {
        for (int i = 0; i < chunk; i++) /* back-to-back: no sync between the operations */
            KG_TRY(op(arg, s));
        if (e->probe_ok)
            KG_TRY(be_probe_enqueue(e, s));
        KG_CUDA_CHECK(cudaStreamSynchronize(s));
        double at = now_s() - t0;
        be_warm_record(w, e, at);
        if (be_warm_done(w, e, r, at, &steady, &ref))
            break;
    }
    ps->warmup_s = now_s() - t0;
    ps->steady = steady;
    ps->ref_mhz = ref;
    ps->max_mhz = r->max_mhz;
    ps->heavy = r->heavy;
    ps->warmup_min_s = r->min_s;
    ps->warmup_readings = w->readings;
    kg_power_track_begin(t, ps, w->polls, w->np);
    e->last_poll = now_s();
cleanup:
    free(w);
    return rc;
}

void kg_bench_result_free(kg_bench_result *r)
{
    free(r->all_us);
    free(r->clock_mhz);
    free(r->window_mhz);
    free(r->energy_mj);
    free(r->drop);
    free(r->kept_us);
    cJSON_Delete(r->kernels);
    cJSON_Delete(r->nvml);
    memset(r, 0, sizeof *r);
}

/* Kernel-bearing nodes of g, child graphs included, into *kernels; every node into *nodes.
 * A conditional node counts as one: its bodies may launch kernels (not walked). */
static int be_graph_kernels(cudaGraph_t g, int depth, int *kernels, int *nodes)
{
    int rc = 0;
    size_t n = 0;
    cudaGraphNode_t *v = NULL;
    if (depth > 8)
        return KG_ERR(KG_EINTERNAL, "captured graph: child graphs nested deeper than 8");
    KG_CUDA_CHECK(cudaGraphGetNodes(g, NULL, &n));
    if (n && !(v = calloc(n, sizeof *v)))
        return KG_ERR(KG_ENOMEM, "out of memory for %zu graph nodes", n);
    if (n)
        KG_CUDA_CHECK(cudaGraphGetNodes(g, v, &n));
    for (size_t i = 0; i < n; i++) {
        enum cudaGraphNodeType t;
        KG_CUDA_CHECK(cudaGraphNodeGetType(v[i], &t));
        (*nodes)++;
        if (t == cudaGraphNodeTypeKernel || t == cudaGraphNodeTypeConditional) {
            (*kernels)++;
        } else if (t == cudaGraphNodeTypeGraph) {
            cudaGraph_t child = NULL;
            KG_CUDA_CHECK(cudaGraphChildGraphNodeGetGraph(v[i], &child));
            KG_TRY(be_graph_kernels(child, depth + 1, kernels, nodes));
        }
    }
cleanup:
    free(v);
    return rc;
}

/* An empty replay times nothing (a launcher on the legacy default stream runs its
 * kernels eagerly during the capture of the case's non-blocking stream, and the graph is empty). */
static int be_graph_check(cudaGraph_t g, int k, int *kernels)
{
    int rc = 0, nodes = 0;
    *kernels = 0;
    KG_TRY(be_graph_kernels(g, 0, kernels, &nodes));
    if (*kernels == 0)
        rc = KG_ERR(KG_EINVAL,
                    "the replay launched no kernel: is the work on another stream? "
                    "(the graph captured from %d launch(es) on the case's stream holds %d "
                    "node(s), none a kernel: launch() must enqueue on the stream it is given, "
                    "not on stream 0 or a library handle bound to another stream)",
                    k, nodes);
cleanup:
    return rc;
}

/* Capture k launches into a graph. On a capture failure (the case is not capturable) the
 * capture is discarded, the error cleared, and *exec stays NULL: the engine launches directly.
 * A captured graph without a kernel node is an error (be_graph_check). */
static int capture(cudaGraphExec_t *exec, int *kernels, const kg_case_desc *d, void *state,
                   cudaStream_t s, int k)
{
    int rc = 0, lrc = 0;
    cudaGraph_t g = NULL;
    *exec = NULL;
    *kernels = -1;
    KG_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k && lrc == 0; i++)
        lrc = d->launch(state, s);
    cudaError_t e = cudaStreamEndCapture(s, &g);
    if (lrc < 0 || e != cudaSuccess || !g) {
        (void)cudaGetLastError();
        goto cleanup; /* not capturable: direct launches */
    }
    KG_TRY(be_graph_check(g, k, kernels));
    if (cudaGraphInstantiate(exec, g, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        *exec = NULL;
        goto cleanup;
    }
    KG_CUDA_CHECK(cudaGraphUpload(*exec, s));
cleanup:
    if (g)
        (void)cudaGraphDestroy(g);
    return rc;
}

static int replay(cudaGraphExec_t exec, const kg_case_desc *d, void *state, cudaStream_t s, int k)
{
    int rc = 0;
    if (exec) {
        KG_CUDA_CHECK(cudaGraphLaunch(exec, s));
        return 0;
    }
    for (int i = 0; i < k; i++)
        KG_TRY(d->launch(state, s));
cleanup:
    return rc;
}

/* What one sample measured. */
typedef struct {
    double us, mhz, window; /* per launch; the probe's clock after; the clock during */
    double mj;              /* NVML total energy over the replay (NaN: not read) */
    int energy_rc;          /* 0, or why mj is NaN (kg_nvml_energy_mj's code) */
    bool timed_out;         /* the blocking start timed out */
    double nvml_s;          /* wall seconds inside the energy counter's reads */
} be_sample_out;

/* One read of NVML's energy counter, its wall time added to the sample's nvml_s. */
static int be_energy_read(kg_bench_env *e, be_sample_out *o, unsigned long long *mj)
{
    double t = now_s();
    int rc = kg_nvml_energy_mj(e->nvml, mj);
    o->nvml_s += now_s() - t;
    return rc;
}

/* The energy counter before the replay: with the blocking start, just before the
 * release (everything is enqueued, nothing of the replay ran); without it, before enqueueing. */
static void be_energy_begin(kg_bench_env *e, be_sample_out *o, unsigned long long *e0)
{
    o->energy_rc = be_energy_read(e, o, e0);
}

/* ... and after the stream synchronized: the delta covers the replay and the stamps and probe
 * around it (microseconds against a replay of >= min_replay_ms when warm). */
static void be_energy_end(kg_bench_env *e, be_sample_out *o, unsigned long long e0)
{
    unsigned long long e1 = 0;
    o->mj = NAN;
    if (o->energy_rc != 0)
        return;
    o->energy_rc = be_energy_read(e, o, &e1);
    if (o->energy_rc == 0 && e1 < e0)
        o->energy_rc = KG_NVML_COUNTER_BACK;
    if (o->energy_rc == 0)
        o->mj = (double)(e1 - e0);
}

#define BE_SAMPLE_PHASE(exec) \
    ((exec) ? "replay (timed samples)" : "launch (timed samples, no graph)")

/* One sample: [prepare] [flush] zero-stamps block stamp ev0 replay ev1 stamp (release) probe,
 * then wait. prepare (an in-place case restoring its inputs) is outside the events, before the
 * flush so cold stays cold; the flush and prepare run before the block, so only the replay is
 * behind it. The stamps bracket the events, outside them: o->window is the mean clock over the
 * replay (kg_clock_window_mhz), o->mhz the probe's after it; o->mj the energy counter's delta
 * over it. */
static int sample(kg_bench_env *e, cudaGraphExec_t exec, const kg_case_desc *d, void *state,
                  cudaStream_t s, int k, bool cold, be_sample_out *o)
{
    int rc = 0;
    float ms = 0;
    unsigned long long *after = e->stamp_dev + 2 * e->n_slots, e0 = 0;
    const bool blocking = e->block_ok;
    o->mhz = o->window = o->mj = NAN;
    if (d->prepare) { /* a fault in it is named "prepare" (host work, outside the events) */
        kg_phase_set(NULL, NULL, "prepare");
        KG_TRY(d->prepare(state, s));
        kg_phase_set(NULL, NULL, BE_SAMPLE_PHASE(exec));
    }
    if (cold)
        KG_CUDA_CHECK(cudaMemsetAsync(e->flush, (int)(++e->gen & 0xff), e->flush_bytes, s));
    if (e->probe_ok)
        KG_CUDA_CHECK(cudaMemsetAsync(e->stamp_dev, 0, be_stamp_bytes(e), s));
    if (!blocking)
        be_energy_begin(e, o, &e0);
    KG_TRY(kg_bench_block(e, s));
    if (e->probe_ok)
        KG_TRY(kg_clock_stamp_launch(e->stamp_dev, e->n_slots, e->stamp_blocks, s));
    KG_CUDA_CHECK(cudaEventRecord(e->ev0, s));
    KG_TRY(replay(exec, d, state, s, k));
    KG_CUDA_CHECK(cudaEventRecord(e->ev1, s));
    if (e->probe_ok) {
        KG_TRY(kg_clock_stamp_launch(after, e->n_slots, e->stamp_blocks, s));
        KG_CUDA_CHECK(cudaMemcpyAsync(e->stamp_host, e->stamp_dev, be_stamp_bytes(e),
                                      cudaMemcpyDeviceToHost, s));
    }
    if (blocking)
        be_energy_begin(e, o, &e0);
    kg_bench_block_release(e);
    if (e->probe_ok)
        KG_TRY(be_probe_enqueue(e, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    be_energy_end(e, o, e0);
    KG_CUDA_CHECK(cudaEventElapsedTime(&ms, e->ev0, e->ev1));
    o->us = (double)ms * 1000.0 / k;
    o->mhz = be_probe_mhz(e);
    o->window = e->probe_ok
                    ? kg_clock_window_mhz(e->stamp_host, e->stamp_host + 2 * e->n_slots, e->n_slots)
                    : NAN;
    o->timed_out = kg_bench_block_timed_out(e);
cleanup:
    kg_bench_block_release(e); /* after an error too: never leave the kernel to time out */
    return rc;
}

/* Median time of one direct launch (ms), to choose k. */
static int estimate_ms(kg_bench_env *e, const kg_case_desc *d, void *state, cudaStream_t s,
                       double *ms_out)
{
    int rc = 0;
    float t[3] = { 0 };
    for (int i = 0; i < 3; i++) {
        KG_CUDA_CHECK(cudaEventRecord(e->ev0, s));
        KG_TRY(d->launch(state, s));
        KG_CUDA_CHECK(cudaEventRecord(e->ev1, s));
        KG_CUDA_CHECK(cudaEventSynchronize(e->ev1));
        KG_CUDA_CHECK(cudaEventElapsedTime(&t[i], e->ev0, e->ev1));
    }
    double m[3] = { t[0], t[1], t[2] };
    kg_stats_sort(m, 3);
    *ms_out = fmax(m[1], 1e-6);
cleanup:
    return rc;
}

static int stats_clock(kg_bench_result *r)
{
    double *c = calloc(r->taken ? r->taken : 1, sizeof *c);
    size_t n = 0;
    if (!c)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->taken; i++)
        if (!r->drop[i] && isfinite(r->clock_mhz[i]))
            c[n++] = r->clock_mhz[i];
    kg_power_finish(&r->power, c, n); /* the label and held from the kept samples' clocks */
    kg_stats_sort(c, n);
    r->clock_min = n ? c[0] : NAN;
    r->clock_max = n ? c[n - 1] : NAN;
    r->clock_median = kg_stats_quantile_sorted(c, n, 0.5);
    n = 0;
    for (size_t i = 0; i < r->taken; i++)
        if (!r->drop[i] && isfinite(r->window_mhz[i]))
            c[n++] = r->window_mhz[i];
    kg_stats_sort(c, n);
    r->window_median = kg_stats_quantile_sorted(c, n, 0.5);
    free(c);
    return 0;
}

typedef struct {
    cudaGraphExec_t exec;
    const kg_case_desc *d;
    void *state;
    int k;
} be_replay_arg;

static int be_replay_op(void *a, cudaStream_t s)
{
    be_replay_arg *r = a;
    return replay(r->exec, r->d, r->state, s, r->k);
}

/* One sample into the result; true in *stop when a stopping rule is met. */
static int be_take(kg_bench_result *res, kg_bench_env *env, const be_replay_arg *ra, cudaStream_t s,
                   const kg_bench_opts *o, double t0, size_t base, bool *stop)
{
    int rc = 0;
    be_sample_out so = { 0 };
    const double clock_floor = o->min_clock_frac * env->max_mhz;
    KG_TRY(sample(env, ra->exec, ra->d, ra->state, s, ra->k, o->mode == 1, &so));
    size_t i = res->taken++;
    double us = so.us, mhz = so.mhz;
    res->all_us[i] = us;
    res->clock_mhz[i] = mhz;
    res->window_mhz[i] = so.window;
    res->energy_mj[i] = so.mj;
    res->nvml_s += so.nvml_s;
    if (so.energy_rc != 0 && res->energy_rc == 0)
        res->energy_rc = so.energy_rc;
    res->block_timeouts += so.timed_out;
    /* Throttled (far below the max clock): dropped, and counted in the report. */
    res->drop[i] = isfinite(mhz) && clock_floor > 0 && mhz < clock_floor;
    if (res->drop[i])
        res->dropped++;
    else
        res->kept_us[res->kept++] = us;
    double el = now_s() - t0; /* this placement's loop (the budget is split) */
    size_t mine = res->kept - base;
    *stop = true;
    if (mine >= (size_t)o->min_samples && (mine < 200 || mine % 10 == 0)) {
        kg_summary sm;
        KG_TRY(kg_stats_summarize(&sm, res->kept_us + base, mine, o->ci_level));
        if (sm.ci_coverage >= o->ci_level && sm.ci_rel_width <= o->target_ci_rel) {
            res->stop = "ci_converged";
            goto cleanup;
        }
    }
    if (el >= o->budget_s) {
        res->stop = "budget";
        goto cleanup;
    }
    if (res->taken >= (size_t)(o->max_samples > 0 ? o->max_samples : 1)) {
        res->stop = "max_samples";
        goto cleanup;
    }
    *stop = false;
cleanup:
    return rc;
}

/* One placement p: warm until the probe clock is steady (the first by the case's rule, a later
 * one only back to a steady clock), then sample back-to-back into res (the probe after every
 * sample, NVML polled between samples) until a stopping rule on this placement's samples; its
 * share of the budget counts the loop only. The first chooses the placements; a later one's
 * NVML view is folded into the row's state. be_summarize makes the figures. */
static int be_sample_loop(kg_bench_result *res, kg_bench_env *env, be_replay_arg *ra,
                          cudaStream_t s, const kg_bench_opts *o, double est_ms, int p)
{
    int rc = 0;
    bool stop = false;
    kg_power_state later = { 0 }; /* a later placement's: folded into the first one's */
    kg_power_state *ps = p == 0 ? &res->power : &later;
    kg_power_track *track = calloc(1, sizeof *track);
    if (!track)
        return KG_ERR(KG_ENOMEM, "out of memory");
    kg_warm_rule w = kg_warm_rule_for(env->max_mhz, est_ms * 1e3, o->compute_bound,
                                      o->warmup_min_s);
    if (p > 0)
        w.min_s = 0; /* the GPU ran this case just before: only back to a steady clock */
    if (o->warm_to_steady)
        KG_TRY(kg_bench_warm_to_steady(ps, track, env, be_replay_op, ra, s, est_ms * ra->k, &w));
    else {
        kg_power_track_begin(track, ps, NULL, 0);
        ps->max_mhz = w.max_mhz;
        ps->heavy = w.heavy;
        ps->ref_mhz = NAN;
    }
    if (p == 0) /* a capped heavy compute-bound case: more placements (bench.h) */
        res->placements = kg_bench_placements_for(o, est_ms * 1e3, ps->ref_mhz, env->max_mhz);
    kg_bench_opts po = *o;     /* budget and samples split between the placements */
    if (res->placements > 1) { /* normalised: no floor while sampling (kg_bench_refloor) */
        res->floor_off = true;
        po.min_clock_frac = 0;
    }
    po.budget_s = o->budget_s / res->placements;
    po.max_samples = (p + 1) * (o->max_samples > 0 ? o->max_samples : 1) / res->placements;
    const size_t base = res->kept;
    res->place_start[p] = res->taken;
    double t0 = now_s();
    while (!stop) {
        KG_TRY(be_take(res, env, ra, s, &po, t0, base, &stop));
        double tp = now_s();
        kg_bench_poll_track(env, track, stop); /* the last one always */
        res->nvml_s += now_s() - tp;
    }
    res->sample_s += now_s() - t0;
    kg_power_track_end(track);
    if (p > 0)
        kg_power_state_fold(&res->power, &later);
cleanup:
    free(track);
    return rc;
}

/* kept_us and sum from the clock-normalised samples (bench.h, "Clock normalisation"). */
static int be_normalise(kg_bench_result *res, const kg_bench_env *env, const kg_bench_opts *o)
{
    int rc = 0;
    size_t m = kg_bench_clock_normalise(res->kept_us, res->all_us, res->window_mhz, res->drop,
                                        res->taken, env->max_mhz);
    if (m != res->kept)
        return KG_ERR(KG_EINTERNAL, "clock normalisation kept %zu of %zu samples", m, res->kept);
    KG_TRY(kg_stats_summarize(&res->sum, res->kept_us, res->kept, o->ci_level));
    res->clock_normalised = true;
cleanup:
    return rc;
}

/* A row sampled without the clock floor (chosen for several placements) that is not normalised
 * after all: the floor applied now (bench.h, kg_bench_refloor), the label and summaries again. */
static int be_refloor(kg_bench_result *res, const kg_bench_env *env, const kg_bench_opts *o)
{
    int rc = 0;
    res->clock_floor_mhz = fmax(0, o->min_clock_frac * env->max_mhz);
    res->kept = kg_bench_refloor(res->kept_us, res->drop, res->all_us, res->clock_mhz, res->taken,
                                 res->clock_floor_mhz);
    res->dropped = res->taken - res->kept;
    KG_TRY(stats_clock(res));
    res->have_sum = res->kept > 0;
    if (!res->have_sum)
        return 0;
    KG_TRY(kg_stats_summarize(&res->raw_sum, res->kept_us, res->kept, o->ci_level));
    res->sum = res->raw_sum;
cleanup:
    return rc;
}

/* Each placement's median of its kept samples, and the interval widened to the placement
 * level (kg_bench_placement_half): samples of one placement are not independent of it. */
static int be_placement_interval(kg_bench_result *res)
{
    double pm[KG_BENCH_MAX_PLACEMENTS];
    size_t np = kg_bench_placement_medians(res->place_median, res->kept_us, res->drop, res->taken,
                                           res->place_start, (size_t)res->placements);
    if (np == (size_t)-1)
        return KG_ERR(KG_ENOMEM, "out of memory");
    size_t j = 0;
    for (int p = 0; p < res->placements; p++)
        if (isfinite(res->place_median[p]))
            pm[j++] = res->place_median[p];
    double med = res->sum.median, h = kg_bench_placement_half(pm, j, med) * med;
    res->place_half_rel = h / med;
    if (h > 0) { /* capped at 0.9: a band of 1 or more is no mark kgate could load */
        h = fmin(h, 0.9 * med);
        res->sum.ci_lo = fmin(res->sum.ci_lo, med - h);
        res->sum.ci_hi = fmax(res->sum.ci_hi, med + h);
        res->sum.ci_rel_width = (res->sum.ci_hi - res->sum.ci_lo) / med;
    }
    return 0;
}

/* The measured times' spread: their CI half-width, at least the placement-level one
 * of their own placement medians (a capped row's clock, and with it its measured time, moves
 * with the placement more than its normalised time). */
static int be_measured_spread(kg_bench_result *res)
{
    double pm[KG_BENCH_MAX_PLACEMENTS], got[KG_BENCH_MAX_PLACEMENTS];
    double *raw = malloc((res->taken ? res->taken : 1) * sizeof *raw);
    size_t m = 0, j = 0;
    if (!raw)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (size_t i = 0; i < res->taken; i++)
        if (!res->drop[i])
            raw[m++] = res->all_us[i];
    size_t np = kg_bench_placement_medians(pm, raw, res->drop, res->taken, res->place_start,
                                           (size_t)res->placements);
    free(raw);
    if (np == (size_t)-1)
        return KG_ERR(KG_ENOMEM, "out of memory");
    for (int p = 0; p < res->placements; p++)
        if (isfinite(pm[p]))
            got[j++] = pm[p];
    double med = res->raw_sum.median;
    res->measured_spread_rel = fmin(0.999,
                                    fmax((res->raw_sum.ci_hi - res->raw_sum.ci_lo) / (2 * med),
                                         kg_bench_placement_half(got, j, med)));
    return 0;
}

/* After every placement: the state's label from the kept samples' clocks, the raw summary,
 * and, for a power-capped compute-bound row whose every kept sample has a probe clock, the
 * clock-normalised samples and summary that are decided (bench.h, "Clock normalisation"); the
 * placement-level interval; the decided state. */
static int be_summarize(kg_bench_result *res, const kg_bench_env *env, const kg_bench_opts *o)
{
    int rc = 0;
    KG_TRY(stats_clock(res));
    if (res->kept == 0)
        return 0;
    KG_TRY(kg_stats_summarize(&res->raw_sum, res->kept_us, res->kept, o->ci_level));
    res->sum = res->raw_sum;
    res->have_sum = true;
    /* compute-bound only: a memory-bound case's time is set by the memory clock, not the SM's */
    bool clocks = res->power.probe && env->max_mhz > 0 && o->compute_bound;
    for (size_t i = 0; clocks && i < res->taken; i++)
        clocks = res->drop[i] || (isfinite(res->window_mhz[i]) && res->window_mhz[i] > 0);
    if (clocks && strcmp(res->power.label, "power-capped") == 0)
        KG_TRY(be_normalise(res, env, o));
    else if (res->floor_off)
        KG_TRY(be_refloor(res, env, o));
    if (res->kept == 0)
        return 0;
    KG_TRY(be_placement_interval(res));
    KG_TRY(be_measured_spread(res));
    if (res->energy_window.basis == KG_ENERGY_WINDOW)
        res->energy = res->energy_window;
    else if (res->energy_window.implied_w > 0) { /* the window's periods were refused */
        memset(&res->energy, 0, sizeof res->energy);
        res->energy.implied_w = res->energy_window.implied_w;
        res->energy_rc = KG_NVML_IMPLAUSIBLE;
    } else
        KG_TRY(kg_bench_energy_summarize(&res->energy, res->energy_mj, res->drop, res->taken,
                                         res->place_start, (size_t)res->placements, res->k,
                                         o->ci_level));
    if (res->energy.basis != KG_ENERGY_NONE && res->energy.basis != KG_ENERGY_WINDOW &&
        !kg_bench_energy_plausible(res->energy.per_launch_mj, res->raw_sum.median,
                                   res->power.power_limit_w, &res->energy.implied_w)) {
        double w = res->energy.implied_w;
        memset(&res->energy, 0, sizeof res->energy);
        res->energy.implied_w = w;
        res->energy_rc = KG_NVML_IMPLAUSIBLE;
    }
    /* what the decision compares with the mark's: the basis is part of the state, so a
     * normalised run never meets a measured mark (or process) of the same label */
    snprintf(res->decided_state, sizeof res->decided_state, "%.39s%s", res->power.label,
             res->clock_normalised ? KG_STATE_NORMALISED_SUFFIX : "");
cleanup:
    return rc;
}

/* Names and GPU durations: one replay as timed (graph or direct launches), counted on its own
 * (res->replay_kernels: 0 is an empty replay), then one direct launch. The device
 * is synchronized around the replay so that nothing else lands in its count. */
static int be_trace(kg_bench_result *res, const be_replay_arg *ra, cudaStream_t s)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaDeviceSynchronize());
    if (kg_kernel_trace_begin() != 0)
        return 0;
    KG_TRY(replay(ra->exec, ra->d, ra->state, s, ra->k));
    KG_CUDA_CHECK(cudaDeviceSynchronize());
    if (kg_kernel_trace_count(&res->replay_kernels) < 0)
        res->replay_kernels = -1; /* no count: the graph's node count still stands */
    KG_TRY(ra->d->launch(ra->state, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
cleanup:
    if (rc == 0)
        res->kernels = kg_kernel_trace_end();
    else
        cJSON_Delete(kg_kernel_trace_end());
    return rc;
}

/* The energy window (bench_engine.h, kg_bench_energy_window): R replays back-to-back between
 * two events, the counter polled every KG_ENERGY_POLL_S meanwhile; an edge counts from the
 * first one seen after the start event completed until the end event completes, so every
 * period between two edges had the GPU busy throughout. Host clocks stamp the counter's own
 * updates (an NVML quantity), never the GPU work: its time comes from the events. */
#define BE_MAX_EDGES 64
static int be_energy_window(kg_bench_result *res, kg_bench_env *env, const be_replay_arg *ra,
                            cudaStream_t s)
{
    int rc = 0;
    cudaEvent_t ev[2] = { NULL, NULL };
    double t[BE_MAX_EDGES], mj[BE_MAX_EDGES];
    size_t n = 0;
    unsigned long long last = 0, v = 0;
    float ms = 0;
    double replay_us = res->taken ? kg_stats_median(res->all_us, res->taken) * ra->k : 0;
    if (!(replay_us > 0) || kg_nvml_energy_mj(env->nvml, &last) != 0)
        return 0;
    long reps = (long)ceil(KG_ENERGY_WINDOW_S * 1e6 / replay_us);
    if (reps > 100000)
        return 0; /* a launch too short to keep the GPU busy from the host's queue */
    KG_CUDA_CHECK(cudaEventCreate(&ev[0]));
    KG_CUDA_CHECK(cudaEventCreate(&ev[1]));
    KG_CUDA_CHECK(cudaEventRecord(ev[0], s));
    for (long i = 0; i < reps; i++)
        KG_TRY(replay(ra->exec, ra->d, ra->state, s, ra->k));
    KG_CUDA_CHECK(cudaEventRecord(ev[1], s));
    for (;;) {
        cudaError_t done = cudaEventQuery(ev[1]);
        if (done != cudaErrorNotReady) {
            KG_CUDA_CHECK(done);
            break;
        }
        if (kg_nvml_energy_mj(env->nvml, &v) != 0)
            goto cleanup; /* no figure, the replays still drain below */
        if (v != last && n < BE_MAX_EDGES && cudaEventQuery(ev[0]) == cudaSuccess &&
            cudaEventQuery(ev[1]) == cudaErrorNotReady) {
            t[n] = now_s();
            mj[n++] = (double)v;
        }
        last = v;
        struct timespec ts = { 0, (long)(KG_ENERGY_POLL_S * 1e9) };
        nanosleep(&ts, NULL);
    }
    KG_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    res->window_launch_us = ms * 1e3 / ((double)reps * ra->k);
    kg_bench_energy_window(&res->energy_window, t, mj, n, res->window_launch_us,
                           res->power.power_limit_w);
cleanup:
    (void)cudaStreamSynchronize(s);
    for (int i = 0; i < 2; i++)
        if (ev[i])
            (void)cudaEventDestroy(ev[i]);
    return rc;
}

/* One placement p of np: the case's instance on fresh buffers (behind a held shim of
 * kg_bench_shim_bytes for p >= 1), k and the placements chosen on the first, capture, warm-up
 * and sampling into res with the budget split np ways; the kernel trace on the first. */
static int be_placement(kg_bench_result *res, kg_bench_env *env, const kg_case_desc *d,
                        uint64_t seed, int device, const kg_bench_opts *o, int p)
{
    int rc = 0;
    kg_instance inst;
    bool opened = false;
    void *shim = NULL;
    be_replay_arg ra = { NULL, d, NULL, 1 };
    double est_ms = 0;
    if (p > 0 && cudaMalloc(&shim, kg_bench_shim_bytes(seed, p)) != cudaSuccess) {
        (void)cudaGetLastError(); /* a full GPU: the placements so far are the figure */
        shim = NULL;
        res->placements_short = true;
        return 0;
    }
    double t = now_s();
    KG_TRY(kg_instance_open(&inst, d, seed, device));
    opened = true;
    res->open_s += now_s() - t;
    t = now_s();
    cudaStream_t s = inst.stream;
    ra.state = inst.state;
    kg_phase_set(NULL, NULL, "launch (warm-up, calibration)"); /* a fault's phase names it */
    for (int i = 0; i < 3; i++) /* warm-up: module load, caches, clocks */
        KG_TRY(d->launch(inst.state, s));
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    KG_TRY(estimate_ms(env, d, inst.state, s, &est_ms));
    if (p == 0)
        res->k = kg_bench_choose_k(&res->k_source, o->mark_k, o->flag_k, o->mode == 1, est_ms,
                                   o->min_replay_ms);
    ra.k = res->k;
    res->calibrate_s += now_s() - t;
    t = now_s();
    kg_phase_set(NULL, NULL, "capture (graph of k launches)");
    KG_TRY(capture(&ra.exec, &res->graph_kernels, d, inst.state, s, ra.k));
    res->graph = ra.exec != NULL;
    kg_phase_set(NULL, NULL, BE_SAMPLE_PHASE(ra.exec));
    KG_TRY(replay(ra.exec, d, inst.state, s, ra.k)); /* the first replay is not timed */
    KG_CUDA_CHECK(cudaStreamSynchronize(s));
    res->capture_s += now_s() - t;
    KG_TRY(be_sample_loop(res, env, &ra, s, o, est_ms, p));
    double t0 = now_s();
    if (o->compute_bound && p == 0 && res->energy_rc == 0) /* what users pay: its energy */
        KG_TRY(be_energy_window(res, env, &ra, s));
    double t1 = now_s();
    res->window_s += t1 - t0;
    if (o->kernels && p == 0) /* the first: a later placement may never come (a shim) */
        KG_TRY(be_trace(res, &ra, s));
    res->trace_s += now_s() - t1;
cleanup:
    if (ra.exec)
        (void)cudaGraphExecDestroy(ra.exec);
    if (opened) {
        t = now_s();
        kg_instance_close(&inst);
        res->open_s += now_s() - t;
    }
    if (shim)
        (void)cudaFree(shim);
    return rc;
}

int kg_bench_time_case(kg_bench_result *res, kg_bench_env *env, const kg_case_desc *d,
                       uint64_t seed, int device, const kg_bench_opts *o)
{
    kg_phase_set(NULL, NULL, "timing");
    int rc = 0;
    const size_t cap = (size_t)(o->max_samples > 0 ? o->max_samples : 1);
    memset(res, 0, sizeof *res);
    res->placements = 1;
    res->graph_kernels = res->replay_kernels = -1;
    res->all_us = calloc(cap, sizeof *res->all_us);
    res->clock_mhz = calloc(cap, sizeof *res->clock_mhz);
    res->window_mhz = calloc(cap, sizeof *res->window_mhz);
    res->energy_mj = calloc(cap, sizeof *res->energy_mj);
    res->drop = calloc(cap, 1);
    res->kept_us = calloc(cap, sizeof *res->kept_us);
    if (!res->all_us || !res->clock_mhz || !res->window_mhz || !res->energy_mj || !res->drop ||
        !res->kept_us) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for %zu samples", cap);
        goto cleanup;
    }
    const double t0 = now_s();
    res->blocking = env->block_ok;
    int want = 1, done = 0;
    while (done < want && res->taken < cap && !res->placements_short) {
        KG_TRY(be_placement(res, env, d, seed, device, o, done));
        want = res->placements; /* chosen by the first */
        if (!res->placements_short)
            done++;
    }
    res->placements_short |= done < want;
    res->placements = done; /* place_start[0..done) are set */
    res->clock_floor_mhz = res->floor_off ? 0 : fmax(0, o->min_clock_frac * env->max_mhz);
    res->elapsed_s = now_s() - t0;
    KG_TRY(be_summarize(res, env, o));
    res->nvml = kg_nvml_snapshot(env->nvml);
cleanup:
    return rc;
}
