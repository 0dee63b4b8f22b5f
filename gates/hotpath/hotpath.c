/* Hot-path invariant gate. Per case, on the instance's non-blocking stream:
 *   determinism  N >= 10 eager launches (output poisoned before each) are byte-identical; run 1
 *                is the eager output the other checks compare with (and the warm-up);
 *   calls        two launches observed with the CUPTI callback API (runtime + driver domains):
 *                no allocation/free, sync/poll, host transfer, default-stream work or
 *                stream/event/graph churn (the table in cupti_watch.c);
 *   batch        batch_invariant cases: row r of launch_rows(b) equals row r of the full
 *                launch for b = 1..min(16, rows), byte for byte;
 *   graph        capture in cudaStreamCaptureModeGlobal, instantiate, replay twice: each
 *                replay (poisoned first) equals the eager output byte for byte.
 * One result per case for gate "hotpath" with figures for each check; the message names
 * every failed check. Callbacks are enabled only around the observed launches. */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hotpath/cupti_watch.h"
#include "core/kg_core.h"

#define HP_DEFAULT_RUNS 10
#define HP_MIN_RUNS 10
#define HP_OBSERVED_LAUNCHES 2
#define HP_BATCH_MAX 16
#define HP_REPLAYS 2

typedef struct {
    char msg[1024];   /* failures, "; "-separated */
    bool failed;
} hp_msg;

static void hp_fail(hp_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hp_fail(hp_msg *m, const char *fmt, ...)
{
    size_t len = strlen(m->msg);
    if (len && len + 2 < sizeof m->msg) {
        memcpy(m->msg + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    if (len < sizeof m->msg)
        vsnprintf(m->msg + len, sizeof m->msg - len, fmt, ap);
    va_end(ap);
    m->failed = true;
}

/* First differing byte of two buffers, or SIZE_MAX. */
static size_t first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return i;
    return SIZE_MAX;
}

static size_t count_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += x[i] != y[i];
    return c;
}

/* Poison the output and wait, so no launch can race the poison (a defect on another stream). */
static int hp_poison(kg_instance *inst)
{
    int rc = 0;
    KG_TRY(kg_instance_poison(inst));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
cleanup:
    return rc;
}

static int hp_copy_out(void *host, kg_instance *inst, size_t bytes)
{
    int rc = 0;
    KG_CUDA_CHECK(cudaMemcpyAsync(host, inst->io.out, bytes, cudaMemcpyDeviceToHost, inst->stream));
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));
cleanup:
    return rc;
}

/* ---- determinism -------------------------------------------------------------------- */

static int hp_determinism(kg_instance *inst, int runs, void *eager, void *buf, cJSON *fig,
                          hp_msg *m)
{
    int rc = 0, mismatched = 0, first_run = -1;
    size_t bytes = kg_instance_out_bytes(inst), first_byte = SIZE_MAX;
    for (int r = 0; r < runs; r++) {
        KG_TRY(hp_poison(inst));
        KG_TRY(inst->desc->launch(inst->state, inst->stream));
        KG_TRY(hp_copy_out(r == 0 ? eager : buf, inst, bytes));
        if (r == 0)
            continue;
        size_t d = first_diff(eager, buf, bytes);
        if (d != SIZE_MAX) {
            mismatched++;
            if (first_run < 0) {
                first_run = r + 1;
                first_byte = d;
            }
        }
    }
    cJSON *o = cJSON_AddObjectToObject(fig, "determinism");
    cJSON_AddNumberToObject(o, "runs", runs);
    cJSON_AddNumberToObject(o, "mismatched_runs", mismatched);
    if (first_run > 0) {
        cJSON_AddNumberToObject(o, "first_mismatch_run", first_run);
        cJSON_AddNumberToObject(o, "first_mismatch_byte", (double)first_byte);
        hp_fail(m, "nondeterministic: %d of %d runs differ from run 1 (first: run %d, byte %zu)",
                mismatched, runs - 1, first_run, first_byte);
    }
    cJSON_AddBoolToObject(o, "pass", first_run < 0);
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

static int hp_calls(kg_instance *inst, kg_cupti_watch *w, cJSON *fig, hp_msg *m)
{
    int rc = 0, lrc = 0, erc;
    char frame[256];
    KG_TRY(hp_poison(inst));
    KG_TRY(kg_cupti_watch_begin(w));
    for (int i = 0; i < HP_OBSERVED_LAUNCHES && lrc == 0; i++)
        lrc = inst->desc->launch(inst->state, inst->stream);
    erc = kg_cupti_watch_end(w); /* before anything else: never leave callbacks on */
    KG_TRY(lrc);
    KG_TRY(erc);
    KG_CUDA_CHECK(cudaStreamSynchronize(inst->stream));

    cJSON *o = cJSON_AddObjectToObject(fig, "calls");
    cJSON_AddNumberToObject(o, "observed_launches", HP_OBSERVED_LAUNCHES);
    cJSON_AddNumberToObject(o, "api_calls", (double)kg_cupti_watch_calls(w));
    cJSON *arr = cJSON_AddArrayToObject(o, "forbidden");
    size_t n = kg_cupti_watch_count(w);
    char list[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const kg_cw_violation *v = kg_cupti_watch_get(w, i);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "api", v->api);
        if (v->via[0])
            cJSON_AddStringToObject(e, "via", v->via);
        cJSON_AddStringToObject(e, "category", kg_cw_category_name(v->category));
        if (v->detail[0])
            cJSON_AddStringToObject(e, "detail", v->detail);
        cJSON_AddNumberToObject(e, "count", (double)v->count);
        cJSON_AddItemToObject(e, "backtrace", kg_cw_backtrace_json(v));
        cJSON_AddItemToArray(arr, e);
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s [%s] x%lu%s%s%s%s%s",
                                    i ? ", " : "", v->api, kg_cw_category_name(v->category),
                                    v->count, v->via[0] ? " via " : "", v->via,
                                    v->detail[0] ? " (" : "", v->detail,
                                    v->detail[0] ? ")" : "");
    }
    if (n) {
        hp_first_frame(kg_cupti_watch_get(w, 0), frame, sizeof frame);
        hp_fail(m, "forbidden calls in %d launches: %s (first from %s)", HP_OBSERVED_LAUNCHES,
                list, frame);
    }
    cJSON_AddBoolToObject(o, "pass", n == 0);
cleanup:
    return rc;
}

/* ---- batch invariance ----------------------------------------------------------------- */

static int hp_batch(kg_instance *inst, const void *eager, void *buf, cJSON *fig, hp_msg *m)
{
    int rc = 0, bad_b = 0;
    size_t bytes = kg_instance_out_bytes(inst), rows = inst->io.rows, bad_row = 0;
    cJSON *o = cJSON_AddObjectToObject(fig, "batch_invariance");
    if (!inst->desc->batch_invariant || !inst->desc->launch_rows || rows == 0) {
        cJSON_AddBoolToObject(o, "checked", false);
        return 0;
    }
    if (bytes % rows != 0)
        return KG_ERR(KG_EINVAL, "case '%s': output bytes %zu are not a multiple of io.rows %zu",
                      inst->desc->id, bytes, rows);
    size_t row_bytes = bytes / rows;
    int bmax = rows < HP_BATCH_MAX ? (int)rows : HP_BATCH_MAX;
    for (int b = 1; b <= bmax && !bad_b; b++) {
        KG_TRY(hp_poison(inst));
        KG_TRY(inst->desc->launch_rows(inst->state, b, inst->stream));
        KG_TRY(hp_copy_out(buf, inst, (size_t)b * row_bytes));
        size_t d = first_diff(eager, buf, (size_t)b * row_bytes);
        if (d != SIZE_MAX) {
            bad_b = b;
            bad_row = d / row_bytes;
        }
    }
    cJSON_AddBoolToObject(o, "checked", true);
    cJSON_AddNumberToObject(o, "max_batch", bmax);
    cJSON_AddNumberToObject(o, "row_bytes", (double)row_bytes);
    if (bad_b) {
        cJSON_AddNumberToObject(o, "failed_batch", bad_b);
        cJSON_AddNumberToObject(o, "failed_row", (double)bad_row);
        hp_fail(m, "batch-variant: row %zu computed in a batch of %d differs from the full "
                   "batch of %zu", bad_row, bad_b, rows);
    }
    cJSON_AddBoolToObject(o, "pass", bad_b == 0);
cleanup:
    return rc;
}

/* ---- graph capture ---------------------------------------------------------------------- */

static int hp_graph(kg_instance *inst, const void *eager, void *buf, cJSON *fig, hp_msg *m)
{
    int rc = 0, lrc = 0;
    size_t bytes = kg_instance_out_bytes(inst);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e;
    char why[512] = "", lmsg[256] = "";
    const char *stage = "ok", *err = NULL;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    /* The gate runs with the thread in relaxed interaction mode (see kg_gate_hotpath); the
     * capture window alone runs in global mode, so unsafe calls of the hot path are refused
     * there, as in production. */
    enum cudaStreamCaptureMode tmode = cudaStreamCaptureModeGlobal;
    bool exchanged = false;
    cJSON *o = cJSON_AddObjectToObject(fig, "graph");

    KG_TRY(hp_poison(inst));
    KG_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&tmode));
    exchanged = true;
    KG_CUDA_CHECK(cudaStreamBeginCapture(inst->stream, cudaStreamCaptureModeGlobal));
    lrc = inst->desc->launch(inst->state, inst->stream);
    if (lrc < 0)
        snprintf(lmsg, sizeof lmsg, "%s", kg_error_last());
    /* Always end the capture, even after a failed launch, so the stream is usable again. */
    e = cudaStreamEndCapture(inst->stream, &graph);
    exchanged = false;
    (void)cudaThreadExchangeStreamCaptureMode(&tmode); /* back to relaxed; cannot fail here */
    if (lrc < 0 || e != cudaSuccess) {
        stage = "capture";
        err = e != cudaSuccess ? cudaGetErrorName(e) : NULL;
        if (lrc < 0)
            snprintf(why, sizeof why, "capture failed%s%s: launch: %s", err ? ": " : "",
                     err ? err : "", lmsg);
        else
            snprintf(why, sizeof why, "capture failed: %s", err);
        goto done;
    }
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) {
        stage = "instantiate";
        err = cudaGetErrorName(e);
        snprintf(why, sizeof why, "instantiate failed: %s", err);
        goto done;
    }
    for (int r = 0; r < HP_REPLAYS; r++) {
        KG_TRY(hp_poison(inst));
        e = cudaGraphLaunch(exec, inst->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(buf, inst->io.out, bytes, cudaMemcpyDeviceToHost, inst->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(inst->stream);
        if (e != cudaSuccess) {
            stage = "replay";
            err = cudaGetErrorName(e);
            snprintf(why, sizeof why, "replay %d failed: %s", r + 1, err);
            goto done;
        }
        size_t d = first_diff(eager, buf, bytes);
        if (d != SIZE_MAX) {
            stage = "compare";
            snprintf(why, sizeof why, "replay %d differs from the eager output (%zu bytes, "
                     "first at byte %zu)", r + 1, count_diff(eager, buf, bytes), d);
            goto done;
        }
    }
done:
    /* Clear the (non-sticky) error a failed capture leaves, and make sure capture ended. */
    (void)cudaGetLastError();
    if (cudaStreamIsCapturing(inst->stream, &cs) == cudaSuccess &&
        cs != cudaStreamCaptureStatusNone) {
        cudaGraph_t g2 = NULL;
        (void)cudaStreamEndCapture(inst->stream, &g2);
        if (g2)
            (void)cudaGraphDestroy(g2);
        (void)cudaGetLastError();
    }
    cJSON_AddStringToObject(o, "stage", stage);
    if (err)
        cJSON_AddStringToObject(o, "cuda_error", err);
    if (why[0]) {
        cJSON_AddStringToObject(o, "detail", why);
        hp_fail(m, "graph: %s", why);
    } else {
        cJSON_AddNumberToObject(o, "replays", HP_REPLAYS);
    }
    cJSON_AddBoolToObject(o, "pass", why[0] == '\0');
cleanup:
    if (exchanged)
        (void)cudaThreadExchangeStreamCaptureMode(&tmode);
    if (exec)
        (void)cudaGraphExecDestroy(exec);
    if (graph)
        (void)cudaGraphDestroy(graph);
    return rc;
}

/* ---- one case ---------------------------------------------------------------------------- */

static void hp_print_backtrace(const cJSON *fig)
{
    const cJSON *f = cJSON_GetObjectItem(cJSON_GetObjectItem(fig, "calls"), "forbidden");
    const cJSON *first = cJSON_GetArrayItem(f, 0), *bt = cJSON_GetObjectItem(first, "backtrace");
    int k = 0;
    const cJSON *it;
    if (!first)
        return;
    printf("    first forbidden call %s, host backtrace:\n",
           cJSON_GetStringValue(cJSON_GetObjectItem(first, "api")));
    cJSON_ArrayForEach(it, bt)
    {
        if (k++ == 12)
            break;
        printf("      %s\n", cJSON_GetStringValue(it));
    }
}

static const char *hp_check_word(const cJSON *fig, const char *key)
{
    const cJSON *o = cJSON_GetObjectItem(fig, key);
    if (!o)
        return "-";
    if (cJSON_IsFalse(cJSON_GetObjectItem(o, "checked")))
        return "n/a";
    return cJSON_IsTrue(cJSON_GetObjectItem(o, "pass")) ? "ok" : "FAIL";
}

static int hp_run_case(kg_report *rep, const kg_case_desc *d, const kg_gate_ctx *ctx,
                       kg_cupti_watch *w, int runs)
{
    int rc = 0;
    kg_instance inst;
    bool opened = false;
    void *eager = NULL, *buf = NULL;
    hp_msg m;
    kg_verdict v = KG_VERDICT_ERROR;
    cJSON *fig = cJSON_CreateObject();
    memset(&m, 0, sizeof m);
    if (!fig)
        return KG_ERR(KG_ENOMEM, "out of memory for the hotpath figures of '%s'", d->id);
    if (d->expect_gate && strcmp(d->expect_gate, "hotpath") == 0 && d->expect_reason)
        cJSON_AddStringToObject(fig, "expect_reason", d->expect_reason);

    KG_TRY(kg_instance_open(&inst, d, ctx->seed, ctx->device));
    opened = true;
    size_t bytes = kg_instance_out_bytes(&inst);
    eager = malloc(bytes);
    buf = malloc(bytes);
    if (!eager || !buf) {
        rc = KG_ERR(KG_ENOMEM, "out of memory (%zu bytes) for the outputs of '%s'", bytes, d->id);
        goto cleanup;
    }
    /* Order: determinism first (its run 1 is the warm-up and the eager output), so one-time
     * lazy initialisation is not counted as a hot-path call; graph last, as a failed capture
     * is the most disruptive. */
    KG_TRY(hp_determinism(&inst, runs, eager, buf, fig, &m));
    KG_TRY(hp_calls(&inst, w, fig, &m));
    KG_TRY(hp_batch(&inst, eager, buf, fig, &m));
    KG_TRY(hp_graph(&inst, eager, buf, fig, &m));
    v = m.failed ? KG_VERDICT_FAIL : KG_VERDICT_PASS;
    if (!m.failed)
        snprintf(m.msg, sizeof m.msg, "no forbidden calls, graph replay byte-equal, %d runs "
                 "identical%s", runs,
                 strcmp(hp_check_word(fig, "batch_invariance"), "ok") == 0
                     ? ", batch invariant" : "");
    if (!ctx->quiet) {
        printf("%-46s %-7s %-6s %-6s %-6s %-6s\n", d->id, kg_verdict_name(v),
               hp_check_word(fig, "calls"), hp_check_word(fig, "graph"),
               hp_check_word(fig, "determinism"), hp_check_word(fig, "batch_invariance"));
        if (m.failed) {
            printf("    %s\n", m.msg);
            hp_print_backtrace(fig);
        }
    }
    rc = kg_report_add(rep, "hotpath", d->id, v, m.msg, fig);
    fig = NULL;
cleanup:
    if (rc < 0 && rc != KG_ENOMEM && v == KG_VERDICT_ERROR) {
        /* The case broke (setup, an eager launch, a CUDA error): that is its verdict. */
        if (!ctx->quiet)
            printf("%-46s %-7s %s\n", d->id, "ERROR", kg_error_last());
        rc = kg_report_add(rep, "hotpath", d->id, KG_VERDICT_ERROR, kg_error_last(), fig);
        fig = NULL;
        (void)cudaGetLastError();
    }
    cJSON_Delete(fig);
    if (opened)
        kg_instance_close(&inst);
    free(eager);
    free(buf);
    return rc;
}

int kg_gate_hotpath(kg_report *rep, const kg_registry *reg, const kg_selection *sel,
                    const kg_gate_ctx *ctx)
{
    int rc = 0;
    kg_cupti_watch *w = NULL;
    enum cudaStreamCaptureMode tmode = cudaStreamCaptureModeRelaxed;
    bool relaxed = false;
    int runs = ctx->hotpath_runs > 0 ? ctx->hotpath_runs : HP_DEFAULT_RUNS;
    if (!ctx->dev) {
        for (size_t i = 0; i < sel->n; i++)
            KG_TRY(kg_report_add(rep, "hotpath", kg_registry_get(reg, sel->idx[i])->id,
                                 KG_VERDICT_SKIP, "no CUDA device", NULL));
        return 0;
    }
    if (runs < HP_MIN_RUNS)
        return KG_ERR(KG_EINVAL, "hotpath: at least %d determinism runs are needed, got %d",
                      HP_MIN_RUNS, runs);
    int wrc = kg_cupti_watch_new(&w);
    if (wrc < 0) {
        /* No observation possible (a profiler holds CUPTI): every case is an ERROR. */
        char why[512];
        snprintf(why, sizeof why, "%s", kg_error_last());
        if (!ctx->quiet)
            printf("kgate hotpath: %s\n", why);
        for (size_t i = 0; i < sel->n; i++)
            KG_TRY(kg_report_add(rep, "hotpath", kg_registry_get(reg, sel->idx[i])->id,
                                 KG_VERDICT_ERROR, why, NULL));
        return 0;
    }
    /* Relaxed outside the capture windows: a hot path that leaks a capture (a fork never
     * joined) must not make the next cases' setup and teardown fail; hp_graph switches to
     * global mode for its own capture. */
    KG_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&tmode));
    relaxed = true;
    if (!ctx->quiet)
        printf("%-46s %-7s %-6s %-6s %-6s %-6s\n", "case", "hotpath", "calls", "graph",
               "determ", "batch");
    for (size_t i = 0; i < sel->n; i++)
        KG_TRY(hp_run_case(rep, kg_registry_get(reg, sel->idx[i]), ctx, w, runs));
cleanup:
    if (relaxed)
        (void)cudaThreadExchangeStreamCaptureMode(&tmode);
    kg_cupti_watch_free(w);
    return rc;
}

/* ---- `kgate hotpath` --------------------------------------------------------------------- */

enum { HP_OPT_RUNS = 0x1400 };

static int hp_extra(kg_gate_ctx *ctx, int opt, const char *arg)
{
    if (opt != HP_OPT_RUNS)
        return 0;
    int rc = kg_parse_int("--runs", arg, HP_MIN_RUNS, 100000, &ctx->hotpath_runs);
    return rc < 0 ? rc : 1;
}

static const char hotpath_usage[] =
    "usage: kgate hotpath [--filter REGEX] [--seed N] [--device N] [--report FILE.json]\n"
    "                     [--runs N]\n"
    "\n"
    "Check each case's hot path (its launch function) for production invariants:\n"
    "  calls        no allocation/free, sync/poll, host transfer, default-stream launch or\n"
    "               stream/event/graph creation, observed with the CUPTI callback API\n"
    "               (runtime and driver domains; the table is in docs/production-ci.md);\n"
    "  graph        captures on a non-blocking stream (cudaStreamCaptureModeGlobal),\n"
    "               instantiates, and each replay equals the eager output byte for byte;\n"
    "  determinism  --runs eager launches (default 10, at least 10) are byte-identical;\n"
    "  batch        batch_invariant cases: rows of batches 1..16 equal the full batch.\n"
    "The output is poisoned (0xFF) before every launch. Instrumentation is enabled only\n"
    "around the observed launches; it cannot run under another CUPTI tool (Nsight,\n"
    "compute-sanitizer).\n"
    "\n"
    "exit codes: 0 all pass, 1 a case failed, 2 usage or input error, 3 no GPU,\n"
    "            4 runtime error\n";

int kg_cmd_hotpath(kg_registry *reg, int argc, char **argv)
{
    static const struct option longopts[] = {
        KG_COMMON_LONGOPTS, { "runs", required_argument, NULL, HP_OPT_RUNS }, { 0, 0, 0, 0 }
    };
    static const kg_cmd_spec spec = { "hotpath", hotpath_usage, longopts, hp_extra };
    kg_cmd_state st;
    int rc = kg_cmd_begin(&st, &spec, reg, argc, argv);
    if (rc == 0 && !st.help_shown)
        rc = kg_gate_hotpath(st.rep, reg, &st.sel, &st.ctx);
    return kg_cmd_end(&st, rc);
}
