/* Hot-path invariant gate. Per case, on the instance's non-blocking stream:
 *   determinism  N >= 10 eager launches (before each: outputs poisoned, then prepare(), so an
 *                in-place output starts from its pristine value) are byte-identical; run 1
 *                is the eager output the other checks compare with (and the warm-up), kept in
 *                a device buffer: every comparison below runs on the GPU (hotpath_diff.cu) and
 *                only a count and the first differing byte come back;
 *   calls        two launches observed with the CUPTI callback API (runtime + driver domains):
 *                no allocation/free, sync/poll, host transfer, default-stream work or
 *                stream/event/graph churn (the table in cupti_watch.c), no kernel argument
 *                pointing to managed or mapped host memory, no unified-memory migration (CUPTI
 *                UM counters), and every declared kernel launched with a block size and dynamic
 *                shared memory its kernels[] declaration states (launch_config.c);
 *   batch        batch_invariant cases: row r of launch_rows(b) equals row r of the full
 *                launch for b = 1..min(16, rows), byte for byte;
 *   graph        capture in cudaStreamCaptureModeGlobal, instantiate, replay twice: each
 *                replay (poisoned first) equals the eager output byte for byte.
 * A comparison that came out equal while every compared element was still poison (0xFF, or
 * NaN) could not have failed: that check is vacuous, and the case ERROR unless another check
 * FAILed ("a check that cannot fail is a defect of the gate"); the poison elements are counted
 * on the GPU in the same pass as the comparison.
 * One typed kg_hotpath_result per case (hotpath.h); the message names every failed check.
 * Callbacks are enabled only around the observed launches. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gate.h"
#include "hotpath/cupti_watch.h"
#include "hotpath/hotpath.h"
#include "hotpath/hotpath_diff.h"

#define HP_DEFAULT_RUNS 10
#define HP_MIN_RUNS 10
#define HP_OBSERVED_LAUNCHES 2
#define HP_BATCH_MAX 16
#define HP_REPLAYS 2

typedef struct {
    char msg[1024]; /* failures and vacuous checks, "; "-separated */
    bool failed;    /* a check FAILed */
    bool vacuous;   /* a check could not fail (hp_vacuous): ERROR unless one FAILed */
} hp_msg;

static void hp_vappend(hp_msg *m, const char *fmt, va_list ap)
{
    size_t len = strlen(m->msg);
    if (len && len + 2 < sizeof m->msg) {
        memcpy(m->msg + len, "; ", 3);
        len += 2;
    }
    if (len < sizeof m->msg)
        vsnprintf(m->msg + len, sizeof m->msg - len, fmt, ap);
}

static void hp_fail(hp_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hp_fail(hp_msg *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hp_vappend(m, fmt, ap);
    va_end(ap);
    m->failed = true;
}

static void hp_append(hp_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hp_append(hp_msg *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hp_vappend(m, fmt, ap);
    va_end(ap);
}

static const char hp_vacuous_why[] =
    "every compared element is still poison (0xFF or NaN) after the launch: the launch wrote "
    "nothing, or ran on its own poisoned output (an in-place case without prepare)";

/* A check that could not fail (hp_vacuous): never a PASS; the case is ERROR unless another
 * check FAILed (hp_run_case). The reason's words are the catalogue's expect_reason. */
static void hp_vacuous_note(hp_msg *m, const char *check)
{
    if (m->vacuous)
        hp_append(m, "vacuous %s (as well)", check);
    else
        hp_append(m, "vacuous %s: %s", check, hp_vacuous_why);
    m->vacuous = true;
}

/* Poison the outputs, then restore in-place inputs (prepare: an output that is also an input,
 * an accumulator or C of C = beta*C + A*B, gets its pristine value back over the poison, as in
 * parity), and wait, so no launch can race either (a defect on another stream). Never under
 * observation or inside a capture. */
static int hp_poison(kg_instance *inst)
{
    int rc = 0;
    KG_TRY(kg_instance_poison(inst));
    KG_TRY(kg_instance_prepare(inst));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
cleanup:
    return rc;
}

/* ---- determinism -------------------------------------------------------------------- */

/* Run 1's outputs kept on the device (each output at a 256-byte aligned offset) and the
 * comparison's scratch: later runs are compared there (hotpath_diff.cu), only the count and the
 * first index come back. */
typedef struct {
    unsigned char *ref;          /* device: run 1's outputs */
    unsigned long long *scratch; /* device: 3 words for kg_hp_device_compare */
    size_t off[KG_MAX_OUTPUTS];
} hp_devref;

static size_t hp_align(size_t n) { return (n + 255) & ~(size_t)255; }

static size_t hp_output_bytes(const kg_instance *inst, int i)
{
    return inst->io.outputs[i].count * kg_dtype_size(inst->io.outputs[i].dtype);
}

static int hp_devref_open(hp_devref *d, const kg_instance *inst)
{
    int rc = 0;
    size_t total = 0;
    for (int i = 0; i < inst->io.n_outputs; i++) {
        d->off[i] = total;
        total += hp_align(hp_output_bytes(inst, i));
    }
    KG_CUDA_CHECK(cudaMalloc((void **)&d->ref, total + 3 * sizeof(unsigned long long)));
    d->scratch = (unsigned long long *)(d->ref + total);
cleanup:
    return rc;
}

/* Run 1's outputs into the device reference. */
static int hp_devref_keep(hp_devref *d, kg_instance *inst)
{
    int rc = 0;
    for (int i = 0; i < inst->io.n_outputs; i++)
        KG_CUDA_CHECK(cudaMemcpyAsync(d->ref + d->off[i], inst->io.outputs[i].ptr,
                                      hp_output_bytes(inst, i), cudaMemcpyDeviceToDevice,
                                      inst->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
cleanup:
    return rc;
}

/* True when every compared element was poison (kg_hp_elem_poison: still 0xFF, or NaN): the
 * comparison could not have failed, so the check proved nothing (an in-place kernel run on
 * its own poison, a launch that wrote nothing). */
static bool hp_vacuous(size_t poison, size_t elems) { return elems > 0 && poison == elems; }

/* The first byte where the outputs differ from run 1's, in the back-to-back layout of
 * kg_instance_copy_out (as a host comparison of the copies gives it), or SIZE_MAX; count (may
 * be NULL: then it stops at the first output that differs) the differing bytes of them all;
 * *vacuous (see hp_vacuous) over every output compared. */
static int hp_devref_diff(hp_devref *d, kg_instance *inst, size_t *first, size_t *count,
                          bool *vacuous)
{
    int rc = 0;
    size_t poison = 0, elems = 0;
    kg_hp_diff o;
    *first = SIZE_MAX;
    if (count)
        *count = 0;
    for (int i = 0; i < inst->io.n_outputs && (count || *first == SIZE_MAX); i++) {
        KG_TRY(kg_hp_device_compare(inst->io.outputs[i].ptr, d->ref + d->off[i],
                                    hp_output_bytes(inst, i), inst->io.outputs[i].dtype, d->scratch,
                                    inst->stream, &o));
        if (o.first != SIZE_MAX && *first == SIZE_MAX)
            *first = kg_instance_out_offset(inst, i) + o.first;
        if (count)
            *count += o.count;
        poison += o.poison;
        elems += o.elems;
    }
    *vacuous = hp_vacuous(poison, elems);
cleanup:
    return rc;
}

/* Run 1 is kept on the device (the eager output batch and graph compare with too); runs 2..N
 * are compared with it there. */
static int hp_determinism(kg_instance *inst, int runs, hp_devref *dr, kg_hp_determinism *o,
                          hp_msg *m)
{
    kg_phase_set(NULL, NULL, "launch (determinism runs)");
    int rc = 0;
    *o = (kg_hp_determinism){ .runs = runs, .first_byte = SIZE_MAX };
    for (int r = 0; r < runs; r++) {
        KG_TRY(hp_poison(inst));
        KG_TRY(inst->desc->launch(inst->state, inst->stream));
        if (r == 0) {
            KG_TRY(hp_devref_keep(dr, inst));
            continue;
        }
        size_t d;
        bool vac;
        KG_TRY(hp_devref_diff(dr, inst, &d, NULL, &vac));
        if (d == SIZE_MAX && vac)
            o->vacuous = true;
        if (d != SIZE_MAX) {
            o->mismatched++;
            if (o->first_run == 0) {
                o->first_run = r + 1;
                o->first_byte = d;
            }
        }
    }
    if (o->first_run > 0)
        hp_fail(m, "nondeterministic: %d of %d runs differ from run 1 (first: run %d, byte %zu)",
                o->mismatched, runs - 1, o->first_run, o->first_byte);
    else if (o->vacuous)
        hp_vacuous_note(m, "determinism");
    o->pass = o->first_run == 0 && !o->vacuous;
    o->done = true;
cleanup:
    return rc;
}

/* ---- forbidden calls ---------------------------------------------------------------- */

static void hp_first_frame(const kg_cw_violation *v, char *buf, size_t n)
{
    cJSON *bt = kg_cw_backtrace_json(v);
    const char *s = cJSON_GetStringValue(cJSON_GetArrayItem(bt, 0));
    snprintf(buf, n, "%s", s ? s : "?");
    cJSON_Delete(bt);
}

/* The API violations (the first n records) in one message, with the first one's caller. */
static void hp_calls_message(const kg_hp_calls *o, size_t n, hp_msg *m)
{
    char list[512] = "", frame[256];
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof list; i++) {
        const kg_cw_violation *v = &o->v[i];
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s [%s] x%lu%s%s%s%s%s",
                                i ? ", " : "", v->api, kg_cw_category_name(v->category), v->count,
                                v->via[0] ? " via " : "", v->via, v->detail[0] ? " (" : "",
                                v->detail, v->detail[0] ? ")" : "");
    }
    hp_first_frame(&o->v[0], frame, sizeof frame);
    hp_fail(m, "forbidden calls in %d launches: %s (first from %s)", o->observed_launches, list,
            frame);
}

/* The observed launches under the CUPTI watch and the unified-memory counters; both are
 * turned off however a launch ended, the callbacks first; the stream is synchronized before
 * the counters are flushed, so every migration of the launches is in them. */
static int hp_observe(kg_instance *inst, kg_cupti_watch *w, kg_um_counts *um)
{
    int rc = 0, lrc = 0, erc, urc;
    KG_TRY(kg_um_begin(um));
    erc = kg_cupti_watch_begin(w); /* ends itself when it fails */
    for (int i = 0; i < HP_OBSERVED_LAUNCHES && lrc == 0 && erc == 0; i++)
        lrc = inst->desc->launch(inst->state, inst->stream);
    if (erc == 0)
        erc = kg_cupti_watch_end(w);
    cudaError_t se = cudaStreamSynchronize(inst->stream);
    urc = kg_um_end(um);
    KG_TRY(lrc);
    KG_TRY(erc);
    KG_CUDA_CHECK(se);
    KG_TRY(urc);
cleanup:
    return rc;
}

/* The um-migration row: no API call made it, so no backtrace; written to the phase page too
 * (a launcher that dies later leaves it to the parent). */
static void hp_um_row(kg_cw_violation *v, const kg_um_counts *um, const char *detail)
{
    char text[256];
    memset(v, 0, sizeof *v);
    snprintf(v->api, sizeof v->api, "unified memory");
    snprintf(v->detail, sizeof v->detail, "%s", detail);
    v->category = KG_CW_UM_MIGRATION;
    v->count = um->records ? um->records : 1;
    snprintf(text, sizeof text, "unified memory [um-migration] in launch (%s; CUPTI UM counters)",
             detail);
    kg_phase_evidence_set(text);
}

static int hp_calls(kg_instance *inst, kg_cupti_watch *w, kg_hp_calls *o, hp_msg *m)
{
    kg_phase_set(NULL, NULL, "launch under observation (CUPTI)");
    int rc = 0;
    char um[96];
    KG_TRY(hp_poison(inst));
    KG_TRY(hp_observe(inst, w, &o->um));
    o->observed_launches = HP_OBSERVED_LAUNCHES;
    o->api_calls = kg_cupti_watch_calls(w);
    size_t n_api = kg_cupti_watch_count(w);
    bool migrated = kg_um_migrated(&o->um, um, sizeof um);
    o->n = n_api + (migrated ? 1 : 0);
    if (o->n && !(o->v = calloc(o->n, sizeof *o->v))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory for the forbidden calls of '%s'", inst->desc->id);
        goto cleanup;
    }
    for (size_t i = 0; i < n_api; i++)
        o->v[i] = *kg_cupti_watch_get(w, i);
    if (n_api)
        hp_calls_message(o, n_api, m);
    if (migrated) {
        hp_um_row(&o->v[n_api], &o->um, um);
        hp_fail(m, "unified memory migrated in %d launches: %s [um-migration]",
                o->observed_launches, um);
    }
    o->pass = o->n == 0;
    o->done = true;
cleanup:
    return rc;
}

/* ---- launch configurations ------------------------------------------------------------- */

/* The case's declared kernels resolved to the handles a launch carries: before the observed
 * launches (the lookups are runtime calls). */
static int hp_lc_open(kg_hp_lc_decl **out, const kg_case_desc *d)
{
    *out = NULL;
    if (d->n_kernels <= 0 || !d->kernels)
        return 0;
    if (!(*out = calloc((size_t)d->n_kernels, sizeof **out)))
        return KG_ERR(KG_ENOMEM, "out of memory for the kernels of '%s'", d->id);
    for (int i = 0; i < d->n_kernels; i++)
        kg_hp_lc_resolve(&(*out)[i], &d->kernels[i]);
    return 0;
}

/* What the watch saw in the observed launches against kernels[]. */
static void hp_launch_config(const kg_instance *inst, const kg_cupti_watch *w,
                             const kg_hp_lc_decl *decls, kg_hp_launch_config *o, hp_msg *m)
{
    size_t n;
    unsigned long dropped;
    const kg_cw_launch *l = kg_cupti_watch_launches(w, &n, &dropped);
    kg_hp_launch_config_decide(decls, decls ? (size_t)inst->desc->n_kernels : 0, l, n, o);
    o->dropped = dropped;
    if (!o->pass)
        hp_fail(m, "[launch-config] %s", o->fail);
}

/* ---- batch invariance ----------------------------------------------------------------- */

/* The first differing row of the first b rows of every output with rows (the outputs vs the
 * eager ones kept on the device); false when they agree; *vacuous (hp_vacuous) over the rows
 * compared. */
static int hp_batch_diff(hp_devref *dr, kg_instance *inst, int b, size_t *row, bool *differ,
                         bool *vacuous)
{
    int rc = 0;
    size_t poison = 0, elems = 0;
    kg_hp_diff o;
    *differ = false;
    for (int i = 0; i < inst->io.n_outputs && !*differ; i++) {
        const kg_output *out = &inst->io.outputs[i];
        size_t rb = out->rows ? hp_output_bytes(inst, i) / out->rows : 0;
        if (!rb)
            continue;
        KG_TRY(kg_hp_device_compare(out->ptr, dr->ref + dr->off[i], (size_t)b * rb, out->dtype,
                                    dr->scratch, inst->stream, &o));
        poison += o.poison;
        elems += o.elems;
        if (o.first != SIZE_MAX) {
            *row = o.first / rb;
            *differ = true;
        }
    }
    *vacuous = hp_vacuous(poison, elems);
cleanup:
    return rc;
}

static int hp_batch(kg_instance *inst, hp_devref *dr, kg_hp_batch *o, hp_msg *m)
{
    kg_phase_set(NULL, NULL, "launch_rows (batch invariance)");
    int rc = 0;
    size_t rows = inst->io.rows;
    o->done = true;
    if (!inst->desc->batch_invariant || !inst->desc->launch_rows || rows == 0)
        return 0;
    o->row_bytes = 0; /* of one row, over every output with rows */
    for (int i = 0; i < inst->io.n_outputs; i++) {
        const kg_output *out = &inst->io.outputs[i];
        size_t bytes = out->count * kg_dtype_size(out->dtype);
        if (out->rows && (out->rows != rows || bytes % out->rows != 0))
            return KG_ERR(KG_EINVAL,
                          "case '%s': output %d: %zu bytes in %zu rows (every output "
                          "with rows has the same rows, %zu, and whole rows)",
                          inst->desc->id, i, bytes, out->rows, rows);
        o->row_bytes += out->rows ? bytes / rows : 0;
    }
    o->checked = true;
    o->max_batch = rows < HP_BATCH_MAX ? (int)rows : HP_BATCH_MAX;
    for (int b = 1; b <= o->max_batch && !o->failed_batch; b++) {
        KG_TRY(hp_poison(inst));
        KG_TRY(inst->desc->launch_rows(inst->state, b, inst->stream));
        bool differ, vac;
        KG_TRY(hp_batch_diff(dr, inst, b, &o->failed_row, &differ, &vac));
        if (differ)
            o->failed_batch = b;
        else if (vac)
            o->vacuous = true;
    }
    if (o->failed_batch)
        hp_fail(m,
                "batch-variant: row %zu computed in a batch of %d differs from the full "
                "batch of %zu",
                o->failed_row, o->failed_batch, rows);
    else if (o->vacuous)
        hp_vacuous_note(m, "batch invariance");
    o->pass = o->failed_batch == 0 && !o->vacuous;
cleanup:
    return rc;
}

/* ---- graph capture ---------------------------------------------------------------------- */

/* Capture one launch in global mode (unsafe calls of the hot path are refused there, as in
 * production); always end the capture, even after a failed launch, so the stream is usable. */
static int hp_capture(kg_instance *inst, cudaGraph_t *graph, kg_hp_graph *o)
{
    int rc = 0, lrc;
    char lmsg[256] = "";
    enum cudaStreamCaptureMode tmode = cudaStreamCaptureModeGlobal;
    cudaError_t e;
    KG_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&tmode));
    e = cudaStreamBeginCapture(inst->stream, cudaStreamCaptureModeGlobal);
    if (e != cudaSuccess) {
        (void)cudaThreadExchangeStreamCaptureMode(&tmode);
        KG_CUDA_CHECK(e);
    }
    lrc = inst->desc->launch(inst->state, inst->stream);
    if (lrc < 0)
        snprintf(lmsg, sizeof lmsg, "%s", kg_error_last());
    e = cudaStreamEndCapture(inst->stream, graph);
    (void)cudaThreadExchangeStreamCaptureMode(&tmode); /* back to relaxed; cannot fail here */
    if (lrc < 0 || e != cudaSuccess) {
        o->stage = "capture";
        if (e != cudaSuccess)
            snprintf(o->cuda_error, sizeof o->cuda_error, "%s", cudaGetErrorName(e));
        if (lrc < 0)
            snprintf(o->detail, sizeof o->detail, "capture failed%s%s: launch: %s",
                     o->cuda_error[0] ? ": " : "", o->cuda_error, lmsg);
        else
            snprintf(o->detail, sizeof o->detail, "capture failed: %s", o->cuda_error);
    }
cleanup:
    return rc;
}

static int hp_replays(kg_instance *inst, cudaGraphExec_t exec, hp_devref *dr, kg_hp_graph *o)
{
    int rc = 0;
    for (int r = 0; r < HP_REPLAYS; r++) {
        KG_TRY(hp_poison(inst));
        cudaError_t e = cudaGraphLaunch(exec, inst->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(inst->stream);
        if (e != cudaSuccess) {
            o->stage = "replay";
            snprintf(o->cuda_error, sizeof o->cuda_error, "%s", cudaGetErrorName(e));
            snprintf(o->detail, sizeof o->detail, "replay %d failed: %s", r + 1, o->cuda_error);
            return 0;
        }
        size_t d, count;
        bool vac;
        KG_TRY(hp_devref_diff(dr, inst, &d, &count, &vac));
        if (d == SIZE_MAX && vac)
            o->vacuous = true;
        if (d != SIZE_MAX) {
            o->stage = "compare";
            snprintf(o->detail, sizeof o->detail,
                     "replay %d differs from the eager output (%zu "
                     "bytes, first at byte %zu)",
                     r + 1, count, d);
            return 0;
        }
    }
    o->replays = HP_REPLAYS;
cleanup:
    return rc;
}

/* A capture that failed or never ended must not leave the stream capturing. */
static void hp_capture_reset(kg_instance *inst)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    (void)cudaGetLastError();
    if (cudaStreamIsCapturing(inst->stream, &cs) == cudaSuccess &&
        cs != cudaStreamCaptureStatusNone) {
        cudaGraph_t g2 = NULL;
        (void)cudaStreamEndCapture(inst->stream, &g2);
        if (g2)
            (void)cudaGraphDestroy(g2);
        (void)cudaGetLastError();
    }
}

static int hp_graph(kg_instance *inst, hp_devref *dr, kg_hp_graph *o, hp_msg *m)
{
    kg_phase_set(NULL, NULL, "capture (graph)");
    int rc = 0;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    *o = (kg_hp_graph){ .stage = "ok", .done = true };
    KG_TRY(hp_poison(inst));
    KG_TRY(hp_capture(inst, &graph, o));
    if (!o->detail[0]) {
        cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        if (e != cudaSuccess) {
            o->stage = "instantiate";
            snprintf(o->cuda_error, sizeof o->cuda_error, "%s", cudaGetErrorName(e));
            snprintf(o->detail, sizeof o->detail, "instantiate failed: %s", o->cuda_error);
        }
    }
    kg_phase_set(NULL, NULL, "replay (graph)");
    if (!o->detail[0])
        KG_TRY(hp_replays(inst, exec, dr, o));
    hp_capture_reset(inst);
    if (o->detail[0])
        hp_fail(m, "graph: %s", o->detail);
    else if (o->vacuous)
        hp_vacuous_note(m, "graph replay");
    o->pass = o->detail[0] == '\0' && !o->vacuous;
cleanup:
    if (exec)
        (void)cudaGraphExecDestroy(exec);
    if (graph)
        (void)cudaGraphDestroy(graph);
    return rc;
}

/* ---- the gate ---------------------------------------------------------------------------- */

typedef struct {
    kg_cupti_watch *w;
    int runs;
    enum cudaStreamCaptureMode saved_mode;
    bool relaxed;
} hp_state;

void kg_hotpath_result_free(void *p)
{
    kg_hotpath_result *r = p;
    if (r)
        free(r->calls.v);
    free(r);
}

/* The forbidden-call records were allocated in the worker: their count travels, not them. */
static void hp_result_flatten(void *copy) { ((kg_hotpath_result *)copy)->calls.v = NULL; }

/* Order: determinism first (its run 1 is the warm-up and the eager output), so one-time lazy
 * initialisation is not counted as a hot-path call; graph last, as a failed capture is the most
 * disruptive. */
static int hp_checks(hp_state *st, kg_instance *inst, kg_hotpath_result *r, hp_msg *m)
{
    int rc = 0;
    hp_devref dr = { 0 };
    kg_hp_lc_decl *decls = NULL;
    KG_TRY(hp_devref_open(&dr, inst));
    KG_TRY(hp_determinism(inst, st->runs, &dr, &r->det, m));
    KG_TRY(hp_lc_open(&decls, inst->desc));
    KG_TRY(hp_calls(inst, st->w, &r->calls, m));
    hp_launch_config(inst, st->w, decls, &r->lc, m);
    KG_TRY(hp_batch(inst, &dr, &r->batch, m));
    KG_TRY(hp_graph(inst, &dr, &r->graph, m));
cleanup:
    free(decls);
    if (dr.ref)
        (void)cudaFree(dr.ref);
    return rc;
}

static int hp_run_case(void *state, const kg_case_desc *d, const kg_gate_env *env,
                       kg_case_result *res)
{
    int rc = 0;
    hp_state *st = state;
    kg_instance inst;
    bool opened = false;
    hp_msg m = { .failed = false };
    kg_hotpath_result *r = calloc(1, sizeof *r);
    if (!r)
        return KG_ERR(KG_ENOMEM, "out of memory for the hotpath result of '%s'", d->id);
    res->data = r; /* partial figures stay with an ERROR verdict */
    KG_TRY(kg_instance_open(&inst, d, env->seed, env->device));
    opened = true;
    KG_TRY(hp_checks(st, &inst, r, &m));
    /* A FAIL is certain; a vacuous check alone decided nothing: ERROR, never PASS. */
    res->verdict = m.failed ? KG_VERDICT_FAIL : m.vacuous ? KG_VERDICT_ERROR : KG_VERDICT_PASS;
    if (m.failed || m.vacuous)
        snprintf(res->message, sizeof res->message, "%s", m.msg);
    else
        snprintf(res->message, sizeof res->message,
                 "no forbidden calls, %s%s%slaunch "
                 "configurations as declared, graph replay byte-equal, %d runs identical%s",
                 !kg_hp_host_memory_checks() ? ""
                 : r->calls.um.available     ? "no unified-memory migration, "
                                             : "unified-memory counters NOT available (",
                 r->calls.um.available || !kg_hp_host_memory_checks() ? "" : r->calls.um.why,
                 r->calls.um.available || !kg_hp_host_memory_checks() ? "" : "), ", st->runs,
                 r->batch.checked && r->batch.pass ? ", batch invariant" : "");
cleanup:
    if (opened)
        kg_instance_close(&inst);
    return rc;
}

static int hp_begin(void **state, const void *opts, const kg_gate_env *env)
{
    int rc = 0;
    const kg_hotpath_opts *o = opts;
    hp_state *st = NULL;
    *state = NULL;
    if (o->runs < HP_MIN_RUNS)
        return KG_ERR(KG_EINVAL, "hotpath: at least %d determinism runs are needed, got %d",
                      HP_MIN_RUNS, o->runs);
    if (!env->dev)
        return 0; /* every case is SKIP */
    if (!(st = calloc(1, sizeof *st)))
        return KG_ERR(KG_ENOMEM, "out of memory starting the hotpath gate");
    st->runs = o->runs;
    if (kg_cupti_watch_new(&st->w) < 0) {
        free(st); /* no observation possible (a profiler holds CUPTI): every case is ERROR */
        return KG_EUNAVAILABLE;
    }
    kg_um_arm();
    /* Relaxed outside the capture windows: a hot path that leaks a capture (a fork never
     * joined) must not make the next cases' setup and teardown fail; hp_graph switches to
     * global mode for its own capture. */
    st->saved_mode = cudaStreamCaptureModeRelaxed;
    KG_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&st->saved_mode));
    st->relaxed = true;
    *state = st;
    st = NULL;
cleanup:
    if (st)
        kg_cupti_watch_free(st->w);
    free(st);
    return rc;
}

/* In a worker the unified-memory counters stay on: cuptiActivityDisable of their kind took
 * 2.01 s of every run's 2.1 s of hot path (H100, measured), the worker's exit nothing, and the
 * driver retires the worker after this gate (KG_GATE_RETIRES_WORKER). */
static int hp_end(void *state, const kg_gate_env *env, int rc)
{
    hp_state *st = state;
    KG_UNUSED(rc);
    if (!st)
        return 0;
    if (st->relaxed)
        (void)cudaThreadExchangeStreamCaptureMode(&st->saved_mode);
    if (!env->in_worker)
        kg_um_disarm();
    kg_cupti_watch_free(st->w);
    free(st);
    return 0;
}

static const kg_opt hp_opts[] = {
    KG_OPT_INT_("runs", "N", kg_hotpath_opts, runs, HP_MIN_RUNS, 100000,
                "determinism runs per case (default 10, at least 10)"),
};
static const kg_hotpath_opts hp_opts_init = KG_HOTPATH_OPTS_INIT;

static const char hp_description[] =
    "Check each case's hot path (its launch function) for production invariants:\n"
    "  calls        no allocation/free, sync/poll, host transfer, default-stream launch or\n"
    "               stream/event/graph creation, observed with the CUPTI callback API\n"
    "               (runtime and driver domains; the table is in docs/production-ci.md),\n"
    "               no kernel argument in managed or mapped host memory;\n"
    "  graph        captures on a non-blocking stream (cudaStreamCaptureModeGlobal),\n"
    "               instantiates, and each replay equals the eager output byte for byte;\n"
    "  determinism  --runs eager launches (default 10, at least 10) are byte-identical;\n"
    "  batch        batch_invariant cases: rows of batches 1..16 equal the full batch.\n"
    "The outputs are poisoned (0xFF) before every launch, then prepare() restores in-place\n"
    "inputs; a check whose compared outputs are all still poison (0xFF or NaN) could not\n"
    "fail: the case is ERROR (vacuous). Instrumentation is enabled only\n"
    "around the observed launches; it cannot run under another CUPTI tool (Nsight,\n"
    "compute-sanitizer).\n";

const struct kg_gate kg_gate_hotpath = {
    .name = "hotpath",
    .summary = "no alloc/sync/host copy in the hot path; graph-capturable; deterministic",
    .description = hp_description,
    .flags = KG_GATE_NEEDS_GPU | KG_GATE_RETIRES_WORKER,
    .selftest_skips = KG_GATE_DEVICE_WIDE, /* speed and traffic: not what the hot path sees */
    .opts = hp_opts,
    .n_opts = KG_ARRAY_LEN(hp_opts),
    .opts_size = sizeof(kg_hotpath_opts),
    .opts_init = &hp_opts_init,
    .begin = hp_begin,
    .run_case = hp_run_case,
    .figures = kg_hotpath_figures,
    .result_free = kg_hotpath_result_free,
    .result_size = sizeof(kg_hotpath_result),
    .result_flatten = hp_result_flatten,
    .end = hp_end,
    .columns = kg_hotpath_columns,
    .n_columns = KG_HOTPATH_N_COLUMNS,
    .detail = kg_hotpath_detail,
};
