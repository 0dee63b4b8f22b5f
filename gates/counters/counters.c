/* Counters gate: per case, outside any timed region, one launch() under CUPTI's
 * range profiler (counters_cupti.c: one range per kernel, kernel replay for the passes the
 * metrics need), summed per launch; decided (counters_decide.c, pure) against the declared
 * work model (bytes_moved, flops) and the case's counter marks. Without profiling permission,
 * with another profiler holding the device or on an unsupported GPU every case is SKIP with
 * the reason. The CUPTI log of a failing case is printed to stderr (KGATE_COUNTERS_LOG=1: of
 * every call, FILE: appended there). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "counters/counters.h"
#include "core/report_keys.h"

typedef struct {
    kg_ct_session *s;
    kg_ct_decide_opts dopt;
    const kg_counters_gate_opts *g;
    char cls[320];
    char skip[1024]; /* non-empty: every case SKIP with this reason */
    FILE *log;       /* KGATE_COUNTERS_LOG, or NULL */
    bool log_owned;
    double w0, profiled_s;
    size_t cases;
    char excess[1024]; /* the EXCESS / binding-excess cases, for the summary line */
    size_t n_excess;
} ct_state;

static double ct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *ct_avail_word(kg_ct_avail a)
{
    switch (a) {
    case KG_CT_AVAIL_PRIVILEGE:
        return "no profiling permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the driver's "
               "RmProfilingAdminOnly=1; run as root or set NVreg_RestrictProfilingToAdminUsers=0)";
    case KG_CT_AVAIL_BUSY: return "another profiler holds the device";
    case KG_CT_AVAIL_UNSUPPORTED: return "the range profiler does not support this device";
    default: return "the counters could not be set up";
    }
}

/* --devices: each GPU's worker logs to FILE.gpuN (one file, one writer). */
static void ct_open_log(ct_state *st, const kg_gate_env *env)
{
    const char *v = kg_env("KGATE_COUNTERS_LOG");
    char path[4096];
    if (!v)
        return;
    snprintf(path, sizeof path, env->lanes > 1 ? "%s.gpu%d" : "%s", v, env->device);
    if (strcmp(v, "1") == 0) {
        st->log = stderr;
    } else if ((st->log = fopen(path, "a"))) {
        st->log_owned = true;
    } else {
        fprintf(stderr, "counters: KGATE_COUNTERS_LOG: cannot open %s; logging to stderr\n", path);
        st->log = stderr;
    }
}

/* Open the session; the log of a failed open is always printed (the first GPU run's clue). */
static void ct_open_session(ct_state *st, const kg_gate_env *env)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = st->log ? NULL : open_memstream(&buf, &len);
    kg_ct_avail avail = KG_CT_AVAIL_OK;
    int rc = kg_ct_session_open(&st->s, &avail, env->device, st->log ? st->log : mem);
    kg_ct_session_set_log(st->s, st->log); /* never the buffer closed below */
    if (mem)
        fclose(mem);
    if (rc < 0) {
        snprintf(st->skip, sizeof st->skip, "%s: %s", ct_avail_word(avail), kg_error_last());
        if (buf && len)
            fprintf(stderr, "%s", buf);
        if (!env->quiet)
            printf("counters: SKIP every case: %s\n", st->skip);
    }
    free(buf);
}

/* The figures this device has no metric for (their report figures are null). */
static void ct_print_unavailable(const kg_ct_session *s)
{
    int n = 0;
    for (int i = 0; i < KG_CT_N; i++)
        if (!kg_ct_session_metric(s, (kg_ct_metric)i))
            printf("%s%s",
                   n++ ? ", " : "counters: no metric on this device for: ", kg_ct_metrics[i].key);
    if (n)
        printf("\n");
}

/* The DRAM peak (bytes/s) from the memory clock and bus width, 0 when either is unknown:
 * DRAM bytes over a kernel's duration above it cannot be true. */
static double ct_dram_peak(int device)
{
    int khz = 0, bits = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not reported: the rate check is off, nothing else */
        return 0;
    }
    return khz > 0 && bits > 0 ? 2.0 * khz * 1e3 * (bits / 8.0) : 0; /* double data rate */
}

static int ct_begin(void **state, const void *opts, const kg_gate_env *env)
{
    const kg_counters_gate_opts *g = opts;
    ct_state *st;
    *state = NULL;
    if (!env->dev)
        return 0; /* every case is SKIP */
    if (!(st = calloc(1, sizeof *st)))
        return KG_ERR(KG_ENOMEM, "out of memory starting the counters gate");
    st->g = g;
    st->dopt = (kg_ct_decide_opts)KG_CT_DECIDE_OPTS_INIT;
    if (g->tolerance > 0)
        st->dopt.tolerance_rel = g->tolerance;
    if (g->model_factor > 0)
        st->dopt.model_factor = g->model_factor;
    st->dopt.l2_bytes = env->dev->l2_bytes;
    st->dopt.dram_peak_bps = ct_dram_peak(env->device);
    if (g->ridge_ai > 0)
        st->dopt.ridge_ai = g->ridge_ai;
    kg_device_class(env->dev, st->cls, sizeof st->cls);
    st->w0 = ct_now();
    ct_open_log(st, env);
    ct_open_session(st, env);
    if (st->s && !env->quiet) {
        printf("counters: %s (chip %s), %zu replay passes per kernel, tolerance %.2f%%, work "
               "model factor %gx, ridge %g FLOP/B, marks %s, %s replay (L2 flushed before %s), "
               "DRAM peak %.0f GB/s\n",
               st->cls, kg_ct_session_chip(st->s), kg_ct_session_passes(st->s),
               100 * st->dopt.tolerance_rel, st->dopt.model_factor,
               st->dopt.ridge_ai > 0 ? st->dopt.ridge_ai : KG_CT_RIDGE_DEFAULT,
               g->marks_path ? g->marks_path : "(none)", kg_ct_session_replay(st->s),
               strcmp(kg_ct_session_replay(st->s), "user") == 0 ? "every pass" : "the first pass",
               st->dopt.dram_peak_bps / 1e9);
        ct_print_unavailable(st->s);
    }
    *state = st;
    return 0;
}

static int ct_launch(void *arg, cudaStream_t stream)
{
    kg_instance *inst = arg;
    return inst->desc->launch(inst->state, stream);
}

static int ct_prepare(void *arg, cudaStream_t stream)
{
    kg_instance *inst = arg;
    (void)stream;
    return kg_instance_prepare(inst);
}

static const kg_mark *ct_mark(const ct_state *st, const kg_case_desc *d, const char *metric)
{
    return st->g->lookup ? st->g->lookup(st->g->marks, st->cls, d->id, metric) : NULL;
}

/* Achieved figures from the counters pass's own kernel time, and the bound. */
static void ct_derive(kg_counters_row *b)
{
    const kg_ct_counts *c = &b->c;
    b->time_s = c->have[KG_CT_DURATION] ? c->v[KG_CT_DURATION] * 1e-9 : NAN;
    b->ai = c->dram_bytes > 0 ? c->flops / c->dram_bytes : NAN;
    b->tflops = b->time_s > 0 ? c->flops / b->time_s / 1e12 : NAN;
    b->gbps = b->time_s > 0 ? c->dram_bytes / b->time_s / 1e9 : NAN;
    double sm = c->v[KG_CT_SM_PCT], dr = c->v[KG_CT_DRAM_PCT];
    b->bound[0] = '\0';
    if (c->have[KG_CT_SM_PCT] && c->have[KG_CT_DRAM_PCT])
        snprintf(b->bound, sizeof b->bound, "%s",
                 sm < 40 && dr < 40 ? "latency"
                 : dr >= sm         ? "memory"
                                    : "compute");
}

static void ct_verdict(kg_counters_row *b, kg_case_result *res)
{
    switch (b->v.decision) {
    case KG_CT_OK: /* fall through */
    case KG_CT_NO_MARK: res->verdict = KG_VERDICT_PASS; break;
    case KG_CT_NO_DATA: /* fall through */
    case KG_CT_EXCESS: res->verdict = KG_VERDICT_WARN; break;
    case KG_CT_INVALID: res->verdict = KG_VERDICT_ERROR; break;
    default: res->verdict = KG_VERDICT_FAIL; break;
    }
    snprintf(res->message, sizeof res->message,
             "%s: %s; DRAM %.4g B, %.4g FLOP, %.4g inst, %d kernel(s), %zu passes, %.3f s",
             kg_ct_decision_name(b->v.decision), b->v.why, b->c.dram_bytes, b->c.flops,
             b->c.v[KG_CT_INST], b->c.n_kernels, b->passes, b->wall_s);
}

/* Remember an excess-traffic row for the summary line at the end of the gate. */
static void ct_note_excess(ct_state *st, const kg_case_desc *d, const kg_counters_row *b)
{
    size_t used = strlen(st->excess);
    if (!(b->v.dram_ratio > st->dopt.model_factor))
        return;
    st->n_excess++;
    if (used + 80 < sizeof st->excess)
        snprintf(st->excess + used, sizeof st->excess - used, "%s%s %.2fx%s", used ? ", " : "",
                 d->id, b->v.dram_ratio, d->bytes_binding ? " (binding: FAIL)" : "");
}

/* The profiled launch; its CUPTI log goes to KGATE_COUNTERS_LOG, else to a buffer printed to
 * stderr only when the case fails (the first GPU run's clue, quiet otherwise). */
static int ct_profile_logged(ct_state *st, kg_counters_row *b, kg_instance *inst)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = st->log ? NULL : open_memstream(&buf, &len);
    if (mem)
        kg_ct_session_set_log(st->s, mem);
    kg_ct_work w = { .launch = ct_launch, .prepare = ct_prepare, .arg = inst };
    int rc = kg_ct_session_profile(st->s, &b->c, &b->wall_s, &w, inst->stream);
    kg_ct_session_set_log(st->s, st->log);
    if (mem)
        fclose(mem);
    if (rc < 0 && buf && len)
        fprintf(stderr, "counters: %s: the CUPTI calls of the failed case:\n%s", inst->desc->id,
                buf);
    free(buf);
    return rc;
}

/* Does one launch() enqueue anything on kgate's stream? A stream capture of it (relaxed: a
 * launch on the legacy stream 0 runs eagerly instead of failing) holds no node when the work
 * went to stream 0 or another stream. A capture that fails says nothing (false). */
static int ct_capture_empty(bool *empty, kg_instance *inst)
{
    int rc = 0;
    cudaGraph_t g = NULL;
    size_t nodes = 0;
    *empty = false;
    KG_CUDA_CHECK(cudaStreamBeginCapture(inst->stream, cudaStreamCaptureModeRelaxed));
    int lrc = inst->desc->launch(inst->state, inst->stream);
    cudaError_t e = cudaStreamEndCapture(inst->stream, &g);
    if (lrc == 0 && e == cudaSuccess && g && cudaGraphGetNodes(g, NULL, &nodes) == cudaSuccess)
        *empty = nodes == 0;
    (void)cudaGetLastError(); /* a refused capture is no finding; its error must not leak */
    if (g)
        KG_CUDA_CHECK(cudaGraphDestroy(g));
    /* eager work of the launch (stream 0) ends before anything is counted */
    KG_CUDA_CHECK(cudaDeviceSynchronize());
cleanup:
    return rc;
}

static int ct_measure(ct_state *st, kg_counters_row *b, const kg_case_desc *d,
                      const kg_gate_env *env)
{
    int rc = 0;
    kg_instance inst = { 0 };
    KG_TRY(kg_instance_open(&inst, d, env->seed, env->device));
    /* one launch first: module loading and first-touch effects stay out of the counters */
    KG_TRY(kg_instance_prepare(&inst));
    kg_phase_set(NULL, NULL, "launch (warm-up)"); /* a fault's phase names it */
    KG_TRY(d->launch(inst.state, inst.stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst.stream));
    KG_CUDA_CHECK(cudaDeviceSynchronize()); /* also what the launch put on other streams */
    kg_phase_set(NULL, NULL, "capture (does the launch use this stream?)");
    KG_TRY(ct_capture_empty(&b->launch_empty, &inst));
    kg_phase_set(NULL, NULL, "launch (profiled passes)");
    KG_TRY(ct_profile_logged(st, b, &inst)); /* prepare + L2 flush before each pass */
cleanup:
    kg_instance_close(&inst);
    return rc;
}

static int ct_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    ct_state *st = state;
    kg_counters_row *b = NULL;
    if (!st || st->skip[0]) {
        res->verdict = KG_VERDICT_SKIP;
        snprintf(res->message, sizeof res->message, "%s", st ? st->skip : "no CUDA device");
        return 0;
    }
    if (!(b = calloc(1, sizeof *b)))
        return KG_ERR(KG_ENOMEM, "out of memory for the counters of '%s'", d->id);
    b->passes = kg_ct_session_passes(st->s);
    b->declared_bytes = d->bytes_moved;
    b->declared_flops = d->flops;
    snprintf(b->device_class, sizeof b->device_class, "%s", st->cls);
    KG_TRY(ct_measure(st, b, d, env));
    st->profiled_s += b->wall_s;
    st->cases++;
    kg_ct_expect e = { .bytes_moved = d->bytes_moved,
                       .flops = d->flops,
                       .uses_tensor_cores = kg_ct_case_uses_tensor(d),
                       .bytes_binding = d->bytes_binding != 0,
                       .launch_empty = b->launch_empty,
                       .m_dram = ct_mark(st, d, KG_CT_MARK_DRAM),
                       .m_inst = ct_mark(st, d, KG_CT_MARK_INST),
                       .m_spill = ct_mark(st, d, KG_CT_MARK_SPILL),
                       .m_occ = ct_mark(st, d, KG_CT_MARK_OCC),
                       .m_tensor = ct_mark(st, d, KG_CT_MARK_TENSOR),
                       .m_sysmem = ct_mark(st, d, KG_CT_MARK_SYSMEM) };
    KG_TRY(kg_ct_decide(&b->v, &b->c, &e, &st->dopt));
    ct_derive(b);
    ct_verdict(b, res);
    ct_note_excess(st, d, b);
cleanup:
    if (b)
        res->data = b; /* also after a failure: its figures say how far it got */
    return rc;
}

static void ct_row_free(void *data) { free(data); }

/* The run-level record: chip, passes, the resolved metric names, settings, wall time. */
static void ct_record(ct_state *st, const kg_gate_env *env)
{
    cJSON *o = cJSON_CreateObject(), *m;
    if (!o)
        return;
    cJSON_AddStringToObject(o, KG_RK_CT_DEVICE_CLASS, st->cls);
    if (st->skip[0])
        cJSON_AddStringToObject(o, KG_RK_CT_SKIPPED, st->skip);
    if (st->s) {
        cJSON_AddStringToObject(o, KG_RK_CT_CHIP, kg_ct_session_chip(st->s));
        cJSON_AddNumberToObject(o, KG_RK_CT_PASSES, (double)kg_ct_session_passes(st->s));
        m = cJSON_AddObjectToObject(o, KG_RK_CT_METRICS);
        for (int i = 0; m && i < KG_CT_N; i++) {
            const char *nm = kg_ct_session_metric(st->s, (kg_ct_metric)i);
            cJSON_AddItemToObject(m, kg_ct_metrics[i].key,
                                  nm ? cJSON_CreateString(nm) : cJSON_CreateNull());
        }
    }
    if (st->s)
        cJSON_AddStringToObject(o, KG_RK_CT_REPLAY, kg_ct_session_replay(st->s));
    cJSON_AddNumberToObject(o, KG_RK_CT_DRAM_PEAK, st->dopt.dram_peak_bps);
    cJSON_AddNumberToObject(o, KG_RK_CT_TOLERANCE, st->dopt.tolerance_rel);
    cJSON_AddNumberToObject(o, KG_RK_CT_MODEL_FACTOR, st->dopt.model_factor);
    cJSON_AddStringToObject(o, KG_RK_CT_MARKS, st->g->marks_path ? st->g->marks_path : "(none)");
    cJSON_AddNumberToObject(o, KG_RK_CT_PROFILED_S, st->profiled_s);
    cJSON_AddNumberToObject(o, KG_RK_CT_WALL, ct_now() - st->w0);
    kg_report_set_extra(env->rep, KG_RK_COUNTERS, o);
}

/* --devices: the run summaries of the GPUs' workers (ct_record) as one. Their profiling seconds
 * are summed and the longest wall kept; class, passes, metric names and settings are one GPU
 * class's, the same in each. "skipped" means every case was SKIP: it stays only while every
 * worker skipped, and a worker that profiled brings its session's fields. */
static void ct_merge_extra(const char *key, cJSON *into, const cJSON *from)
{
    static const char *const session[] = { KG_RK_CT_CHIP, KG_RK_CT_PASSES, KG_RK_CT_METRICS,
                                           KG_RK_CT_REPLAY };
    if (strcmp(key, KG_RK_COUNTERS) != 0 || !cJSON_IsObject(into) || !cJSON_IsObject(from))
        return;
    cJSON *p = cJSON_GetObjectItemCaseSensitive(into, KG_RK_CT_PROFILED_S);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(from, KG_RK_CT_PROFILED_S);
    if (cJSON_IsNumber(p) && cJSON_IsNumber(q))
        cJSON_SetNumberValue(p, p->valuedouble + q->valuedouble);
    cJSON *w = cJSON_GetObjectItemCaseSensitive(into, KG_RK_CT_WALL);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(from, KG_RK_CT_WALL);
    if (cJSON_IsNumber(w) && cJSON_IsNumber(x) && x->valuedouble > w->valuedouble)
        cJSON_SetNumberValue(w, x->valuedouble);
    if (!cJSON_HasObjectItem(from, KG_RK_CT_SKIPPED) &&
        cJSON_HasObjectItem(into, KG_RK_CT_SKIPPED)) {
        cJSON_DeleteItemFromObjectCaseSensitive(into, KG_RK_CT_SKIPPED);
        for (size_t i = 0; i < KG_ARRAY_LEN(session); i++) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(from, session[i]);
            cJSON_DeleteItemFromObjectCaseSensitive(into, session[i]);
            if (f)
                cJSON_AddItemToObject(into, session[i], cJSON_Duplicate(f, true));
        }
    }
}

static int ct_end(void *state, const kg_gate_env *env, int rc)
{
    ct_state *st = state;
    if (!st)
        return 0;
    if (rc == 0) {
        ct_record(st, env);
        char on[32] = ""; /* --devices: this worker's share, on its GPU */
        if (env->lanes > 1)
            snprintf(on, sizeof on, " on GPU %d", env->device);
        if (!env->quiet && st->s)
            printf("counters: %zu cases profiled%s in %.1f s (%zu passes each), wall %.1f s\n",
                   st->cases, on, st->profiled_s, kg_ct_session_passes(st->s), ct_now() - st->w0);
        if (!env->quiet && st->n_excess)
            printf("counters: DRAM traffic above %gx the declared bytes_moved in %zu case(s)%s: "
                   "%s%s\n",
                   st->dopt.model_factor, st->n_excess, on, st->excess,
                   strlen(st->excess) + 81 >= sizeof st->excess ? ", ..." : "");
    }
    kg_ct_session_close(st->s);
    if (st->log_owned)
        fclose(st->log);
    free(st);
    return 0;
}

static const kg_opt ct_opts[] = {
    { .name = "marks",
      .value_name = "FILE",
      .kind = KG_OPT_STRING,
      .flags = KG_OPT_F_STANDALONE,
      .offset = offsetof(kg_counters_gate_opts, marks_path),
      .help = "marks to decide the counters against (default: $KGATE_MARKS, else none)" },
    { .name = "save-marks",
      .value_name = "FILE",
      .kind = KG_OPT_STRING,
      .flags = KG_OPT_F_STANDALONE,
      .offset = offsetof(kg_counters_gate_opts, save_marks),
      .help = "merge this run's counters into FILE as marks (never the committed marks)" },
    KG_OPT_DOUBLE_("counter-tolerance", "F", kg_counters_gate_opts, tolerance, 0, 0.5,
                   "growth of DRAM bytes / instructions per launch that regresses (default "
                   "0.01)"),
    KG_OPT_DOUBLE_("model-factor", "F", kg_counters_gate_opts, model_factor, 1, 100,
                   "the declared bytes_moved / flops must be within this factor of the "
                   "counters (default 1.5)"),
    KG_OPT_DOUBLE_("ridge", "FLOP/B", kg_counters_gate_opts, ridge_ai, 0.1, 1e5,
                   "a case declared at or above this arithmetic intensity is compute-bound: "
                   "its bytes_moved is not checked (default 10; the device's ridge is "
                   "GEMM FLOP/s / copy B/s)"),
};
static const kg_counters_gate_opts ct_opts_init = KG_COUNTERS_GATE_OPTS_INIT;

static double ct_case_timeout_s(const void *opts)
{
    (void)opts;
    return 120.0; /* setup, a warm launch and the replay passes of one launch */
}

static const char ct_description[] =
    "Profile one launch() of every selected case with CUPTI's range profiler (one range per\n"
    "kernel; kgate replays the passes, each after prepare and an L2 flush that leaves the L2\n"
    "clean and cold, as ncu --cache-control all; outside any timed region): DRAM\n"
    "bytes, system-memory and L2 traffic, FP instructions by type, tensor-pipe instructions,\n"
    "local-memory (spill) requests, instructions, achieved occupancy, SM and DRAM throughput.\n"
    "\n"
    "FAIL when the declared work model (bytes_moved, flops) is off the counters by more than\n"
    "--model-factor (default 1.5x). bytes_moved is checked for streaming cases (declared\n"
    "FLOP/B below --ridge) of >= 1 MiB: against DRAM bytes when >= 2x L2, else against\n"
    "L1<->L2 traffic when FLOP/B < 1; flops (FP + tensor ops) when declared and >= 1e6\n"
    "(1e8 for tensor work: whole mma tiles run). Undeclared (0) figures are only reported.\n"
    "FAIL (REGRESSED) against the case's marks: DRAM bytes or instructions per launch above\n"
    "the mark by more than --counter-tolerance (default 1%), spill requests where the mark had\n"
    "none, no tensor-pipe instruction in a case tagged tensor-core, achieved occupancy 5\n"
    "points below the mark, system-memory traffic above 4 MiB (GH100 shows ~0.8 MB per kernel\n"
    "with no host memory; with a mark: + 25% + 1 MiB). Without marks, spills fail only above\n"
    "10% of bytes_moved (1 MiB at least) and a passing case is PASS (NO_MARK). DRAM traffic\n"
    "above the factor of bytes_moved in a case not checked on the DRAM basis (compute-bound,\n"
    "L2-resident): WARN (EXCESS, with the ratio), FAIL where the case sets bytes_binding.\n"
    "ERROR (INVALID) when the counts time nothing or cannot be true: no kernel profiled, the\n"
    "launch enqueued nothing on kgate's stream (stream 0?), no instruction, DRAM bytes over\n"
    "the duration above the device's peak. SKIP\n"
    "without profiling permission or on an unsupported device. KGATE_COUNTERS_LOG=1 logs\n"
    "every CUPTI call.\n";

/* The marks (gate.h): the slots of the options, and the counter marks one row sets for
 * --save-marks (every count, a diagnostic seed; only a positive, finite count: a count of 0,
 * e.g. no spills, is stored as no mark, which the decision reads as 0). */
static void ct_marks_slots(void *opts, kg_gate_marks_slots *out)
{
    kg_counters_gate_opts *o = opts;
    *out = (kg_gate_marks_slots){ .path = &o->marks_path,
                                  .save = &o->save_marks,
                                  .lookup = &o->lookup,
                                  .marks = &o->marks };
}

static size_t ct_row_marks(kg_mark *out, size_t max, const kg_case_desc *d, const void *data,
                           const kg_mark *stamp)
{
    const kg_counters_row *b = data;
    size_t n = 0;
    for (size_t i = 0; i < KG_CT_N_MARKS && n < max; i++) {
        double v = kg_ct_mark_value(&b->c, i);
        if (!isfinite(v) || !(v > 0))
            continue;
        kg_mark *mk = &out[n++];
        *mk = *stamp;
        mk->device_class = (char *)b->device_class;
        mk->case_id = (char *)d->id;
        mk->band_rel = 0; /* counters: the tolerance is the decision's, not a noise band */
        mk->samples = 1;
        mk->runs = 1;
        mk->metric = (char *)kg_ct_mark_defs[i].metric;
        mk->direction = kg_ct_mark_defs[i].direction;
        mk->value = mk->run_median = mk->ci_lo = mk->ci_hi = v;
    }
    return n;
}

static const struct kg_gate_marks ct_marks = { .slots = ct_marks_slots, .row_marks = ct_row_marks };

const struct kg_gate kg_gate_counters = {
    .name = "counters",
    .summary = "hardware counters: check the declared work model, ratchet DRAM bytes/instructions",
    .description = ct_description,
    .flags = KG_GATE_NEEDS_GPU | KG_GATE_DEVICE_WIDE,
    .selftest_skips = KG_GATE_SELFTEST_TWINS, /* the slow variants move the same bytes */
    .opts = ct_opts,
    .n_opts = KG_ARRAY_LEN(ct_opts),
    .opts_size = sizeof(kg_counters_gate_opts),
    .opts_init = &ct_opts_init,
    .merge_extra = ct_merge_extra,
    .begin = ct_begin,
    .run_case = ct_run_case,
    .figures = kg_counters_figures,
    .result_free = ct_row_free,
    .result_size = sizeof(kg_counters_row),
    .result_flatten = NULL, /* flat: no pointers */
    .case_timeout_s = ct_case_timeout_s,
    .end = ct_end,
    .columns = kg_counters_columns,
    .n_columns = KG_COUNTERS_N_COLUMNS,
    .marks = &ct_marks,
    .production = &kg_counters_production,
};
