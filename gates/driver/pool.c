/* --devices 0,1,...: several GPUs of one host, one isolation worker per GPU (issue #27).
 *
 * The rule:
 * - A gate without KG_GATE_ONE_DEVICE (parity, hotpath, counters: a case's figures are its own
 *   whatever another GPU runs) runs over lanes, one per listed GPU, each a worker of
 *   its own (fork, CUDA context on its GPU, its own phase page). The cases go in selection order
 *   to the lane that is free first. A worker holds one gate session at a time, so a gate is a
 *   barrier: the next gate starts when every lane is done with this one.
 * - A KG_GATE_ONE_DEVICE gate runs as without --devices: its cases one at a time on the first
 *   GPU, while the other lanes' workers wait with nothing to do. Bench sets it (it times), and
 *   so does every gate whose end works on the whole selection (preflight's --update-baseline):
 *   without it, a gate's begin and end run once per lane and its end sees only that lane's
 *   cases. The report extras the lanes' ends set meet in the gate's merge_extra (the counters'
 *   run summary: the lanes' profiling seconds summed).
 * - A GPU listed twice ("--devices 0,0": one GPU, two workers) runs two cases at once in the
 *   gates that see only their own process (parity, hotpath). A KG_GATE_DEVICE_WIDE gate
 *   without KG_GATE_ONE_DEVICE (it counts the whole GPU) runs only on the first lane of each
 *   GPU: a second worker's kernels would be in its counts.
 * - The console and the report read as with one worker: a case's output is held until every
 *   case before it is done, then printed, and rows are recorded in selection order. Every row
 *   says which GPU ran it (results[].device); the report lists the GPUs (devices).
 * - A lane whose worker dies, hangs or loses its context costs that case (its FAULT verdict, as
 *   with one worker) and that worker; the lane's next case starts a fresh one on its GPU.
 * - Interrupted: no case starts; the running ones end as "interrupted" faults, the report is
 *   partial, as with one worker.
 * One GPU class per run: the marks and the counters' expectations are a class's. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "driver/worker_int.h"

#define PL_POLL_MS 50

typedef struct {
    bool done, gone;
    int device;
    kg_case_result res;
    cJSON *fig;
    double phase_s[KG_PHASE_N];
    bool timed;
    kg_sbuf out, err; /* what its worker printed for it (stdout, stderr) */
} pl_case;

typedef struct {
    struct kg_worker **slot;
    bool idle; /* this gate gives it nothing (a device-wide gate, its GPU's second lane) */
    long ci;   /* the case it runs (index into the selection), -1: idle */
    double t0, timeout_s;
    size_t given; /* cases of this gate it was given */
} pl_lane;

static struct kg_worker **pl_slot(kg_run *run, size_t lane)
{
    return lane == 0 ? &run->worker : &run->lanes[lane];
}

/* The first lane of lane l's GPU. */
static size_t pl_first_lane(const kg_run *run, size_t l)
{
    for (size_t i = 0; i < l; i++)
        if (run->opts.devices[i] == run->opts.devices[l])
            return i;
    return l;
}

int kg_pool_gpus(const kg_run *run)
{
    int n = 0;
    for (size_t l = 0; l < run->opts.n_devices; l++)
        n += pl_first_lane(run, l) == l;
    return n;
}

/* The lanes' workers, started once the first worker knows the run's GPU: each on its GPU, of
 * the run's class. Prints a device line per GPU; the report lists them. */
int kg_pool_start(kg_run *run)
{
    int rc = 0;
    char want[160], got[160];
    cJSON *list = cJSON_CreateArray();
    if (!list)
        return KG_ERR(KG_ENOMEM, "out of memory for --devices");
    if (!run->no_gpu) {
        kg_device_class(&run->dev, want, sizeof want);
        cJSON_AddItemToArray(list, kg_device_to_json(&run->dev));
    }
    for (size_t i = 1; i < run->opts.n_devices; i++) {
        int drc = 0, ord = run->opts.devices[i];
        kg_device_info dev;
        KG_TRY(kg_wk_spawn(run, (int)i, &run->lanes[i], &drc, &dev));
        if (run->no_gpu)
            continue; /* every gate that needs one SKIPs; the lanes still run the others */
        if (pl_first_lane(run, i) != i) {
            printf("device %d: a further worker\n", ord);
            continue;
        }
        if (drc < 0) {
            rc = KG_ERR(KG_EINVAL, "--devices: GPU %d: %s", ord, kg_error_last());
            goto cleanup;
        }
        kg_device_class(&dev, got, sizeof got);
        if (strcmp(got, want) != 0) {
            rc = KG_ERR(KG_EINVAL,
                        "--devices: GPU %d is %s, GPU %d is %s: one run is one GPU class (its "
                        "marks are the class's)",
                        ord, got, run->opts.devices[0], want);
            goto cleanup;
        }
        printf("device %d: %s (%s), a worker of its own\n", ord, dev.name, dev.uuid);
        cJSON_AddItemToArray(list, kg_device_to_json(&dev));
    }
    if (!run->no_gpu) {
        if (cJSON_GetArraySize(list) > 1) /* one GPU listed again and again is "device" */
            kg_report_set_extra(run->rep, KG_RK_DEVICES, list);
        else
            cJSON_Delete(list);
        list = NULL;
    }
cleanup:
    cJSON_Delete(list);
    return rc;
}

/* What a case's worker printed, now that every case before it is printed. */
static void pl_print(pl_case *c)
{
    kg_progress_clear();
    if (c->err.len) {
        fflush(stdout);
        fwrite(c->err.p, 1, c->err.len, stderr);
        fflush(stderr);
    }
    if (c->out.len)
        fwrite(c->out.p, 1, c->out.len, stdout);
    kg_sbuf_free(&c->out);
    kg_sbuf_free(&c->err);
}

/* Print and record every finished case whose predecessors are recorded. */
static int pl_flush(kg_run *run, const kg_registry *reg, const struct kg_gate *g, pl_case *pc,
                    size_t *next)
{
    int rc = 0;
    while (*next < run->sel.n && pc[*next].done) {
        pl_case *c = &pc[*next];
        const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[*next]);
        pl_print(c);
        if (c->gone)
            kg_wk_print_lost(run, g, d, c->res.message);
        fflush(stdout);
        rc = kg_run_record_timed(run, g, d, &c->res, c->fig, c->timed ? c->phase_s : NULL,
                                 c->device);
        c->fig = NULL;
        (*next)++;
        KG_TRY(rc);
    }
cleanup:
    return rc;
}

/* The case of lane l is over: its row, or its fault (the lane's worker then goes). */
static void pl_finish(const struct kg_gate *g, const kg_case_desc *d, pl_lane *ln, pl_case *c,
                      kg_wk_fault *f, bool gone)
{
    struct kg_worker *w = *ln->slot;
    kg_phase_slot(w->lane);
    c->timed = kg_phase_times(g->name, d->id, c->phase_s);
    kg_phase_slot(0);
    if (f->retire && !gone) { /* its own error: the row stands, the worker goes */
        kg_wk_stop(ln->slot);
    } else if (gone || f->cls) { /* what it printed last still goes to this case */
        kg_wk_lost(ln->slot, g, f, gone, &c->res, &c->fig);
    } else {
        w->capture = w->capture_err = NULL;
        w->gate_cases++;
    }
    c->gone = gone;
    c->done = true;
    ln->ci = -1;
}

/* Give lane ln case i (a fresh worker on its GPU when it has none). */
static int pl_start(kg_run *run, const struct kg_gate *g, const void *opts, const kg_case_desc *d,
                    pl_lane *ln, size_t lane, pl_case *c, size_t i)
{
    int rc = 0, drc = 0;
    kg_device_info dev;
    if (!*ln->slot)
        KG_TRY(kg_wk_spawn(run, (int)lane, ln->slot, &drc, &dev));
    struct kg_worker *w = *ln->slot;
    if (w->gate != g) {
        w->gate = g;
        w->gate_cases = 0;
    }
    *c = (pl_case){ .res = { .verdict = KG_VERDICT_ERROR }, .device = run->opts.devices[lane] };
    w->capture = &c->out;
    w->capture_err = &c->err;
    ln->ci = (long)i;
    ln->t0 = kg_now_s();
    ln->timeout_s = kg_wk_timeout(run, g, opts, d);
    ln->given++;
    if (kg_wk_send_run(w, g, opts, d, i == 0) < 0) {
        kg_wk_fault f = { .cls = NULL };
        pl_finish(g, d, ln, c, &f, true);
    }
cleanup:
    return rc;
}

/* One lane's worker after poll: its output, its message, its death or its watchdog. */
static int pl_serve(kg_run *run, const kg_registry *reg, const struct kg_gate *g, pl_lane *ln,
                    pl_case *pc, const struct pollfd *p)
{
    struct kg_worker *w = *ln->slot;
    pl_case *c = &pc[ln->ci];
    const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[ln->ci]);
    kg_wk_fault f = { .cls = NULL };
    bool gone = false;
    int rc = 0;
    if (p[1].revents)
        kg_wk_relay(w, w->out_fd);
    if (p[2].revents)
        kg_wk_relay(w, w->err_fd);
    bool ready = p[0].revents & POLLIN;
    /* Ended: what it wrote before it ended is still read (its row, then its exit). */
    bool ended = !ready && ((p[0].revents & (POLLHUP | POLLERR)) || kg_wk_dead(w));
    if (ended)
        ready = kg_wk_res_ready(w);
    if (kg_interrupted()) {
        f = (kg_wk_fault){ .cls = "interrupted", .sig = kg_interrupted() };
        gone = true;
    } else if (ready) {
        rc = kg_wk_take(run, w, g, &c->res, &c->fig, &f, &gone);
        if (rc < 0)
            return rc;
        if (rc == 0 && !gone)
            return 0; /* a report extra; the row is still to come */
    } else if (ended) {
        gone = true;
    } else if (kg_now_s() - ln->t0 > ln->timeout_s) {
        f = (kg_wk_fault){ .cls = "timeout", .timeout_s = ln->timeout_s };
        gone = true;
    } else {
        return 0;
    }
    kg_wk_relay(w, w->out_fd);
    kg_wk_relay(w, w->err_fd);
    pl_finish(g, d, ln, c, &f, gone);
    return 0;
}

/* Wait up to PL_POLL_MS for any busy lane, then serve each. */
static int pl_poll(kg_run *run, const kg_registry *reg, const struct kg_gate *g, pl_lane *ln,
                   size_t n, pl_case *pc)
{
    struct pollfd p[3 * KG_DEVICES_MAX];
    for (size_t l = 0; l < n; l++) {
        struct kg_worker *w = ln[l].ci >= 0 ? *ln[l].slot : NULL;
        p[3 * l] = (struct pollfd){ w ? w->res_fd : -1, POLLIN, 0 };
        p[3 * l + 1] = (struct pollfd){ w ? w->out_fd : -1, POLLIN, 0 };
        p[3 * l + 2] = (struct pollfd){ w ? w->err_fd : -1, POLLIN, 0 };
    }
    if (poll(p, 3 * n, PL_POLL_MS) < 0 && errno != EINTR)
        return KG_ERR(KG_EIO, "--devices: poll: %s", strerror(errno));
    kg_progress_tick();
    for (size_t l = 0; l < n; l++) {
        int rc = ln[l].ci >= 0 ? pl_serve(run, reg, g, &ln[l], pc, &p[3 * l]) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Did lane l's worker run every case the lane was given, in one gate session? */
static bool pl_whole(const pl_lane *l, const struct kg_gate *g)
{
    const struct kg_worker *w = *l->slot;
    return l->given == 0 || (w && w->gate == g && w->gate_cases == l->given);
}

/* The gate's end in every lane that began it; the part gets the slowest lane's seconds. An end
 * is complete only when every lane ran all its cases in one worker (as one worker's end is
 * only when it ran the whole selection): a lane that lost its worker makes every end partial,
 * so no end reports a whole-run figure that misses that lane's part. */
static int pl_end(kg_run *run, const struct kg_gate *g, pl_lane *ln, size_t n)
{
    int rc = 0;
    double bmax = 0, emax = 0;
    bool whole = !kg_interrupted();
    for (size_t l = 0; l < n; l++)
        whole = whole && pl_whole(&ln[l], g);
    cJSON *merged = cJSON_CreateObject(); /* the lanes' extras meet in g->merge_extra */
    for (size_t l = 0; l < n; l++) {
        double b = 0, e = 0;
        int erc = kg_wk_end_gate(run, ln[l].slot, g, whole, merged, &b, &e);
        rc = rc < 0 ? rc : erc;
        bmax = b > bmax ? b : bmax;
        emax = e > emax ? e : emax;
    }
    cJSON_Delete(merged);
    kg_run_part_gate(run, bmax, emax);
    return rc;
}

/* After an error: what the cases not recorded printed is still shown, their results freed. */
static void pl_drop(kg_run *run, pl_case *pc, size_t from, const struct kg_gate *g)
{
    for (size_t i = from; i < run->sel.n; i++) {
        pl_print(&pc[i]);
        cJSON_Delete(pc[i].fig);
        if (pc[i].res.data && g->result_free)
            g->result_free(pc[i].res.data);
    }
}

int kg_pool_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts)
{
    int rc = 0;
    size_t n = run->opts.n_devices, next = 0, rec = 0;
    pl_lane ln[KG_DEVICES_MAX];
    pl_case *pc = calloc(run->sel.n ? run->sel.n : 1, sizeof *pc);
    if (!pc)
        return KG_ERR(KG_ENOMEM, "out of memory for %zu cases", run->sel.n);
    for (size_t l = 0; l < n; l++)
        ln[l] = (pl_lane){ .slot = pl_slot(run, l),
                           .ci = -1,
                           .idle = (g->flags & KG_GATE_DEVICE_WIDE) && pl_first_lane(run, l) != l };
    if (!run->env.quiet) {
        char list[KG_DEVICES_MAX * 6] = "";
        for (size_t l = 0; l < n; l++)
            if (!ln[l].idle)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d",
                         list[0] ? "," : "", run->opts.devices[l]);
        printf("%s: %zu cases over the workers of GPUs %s, at once\n", g->name, run->sel.n, list);
        kg_progress_begin("%s over %zu GPUs, %zu cases", g->name, n, run->sel.n);
    }
    for (;;) {
        size_t busy = 0;
        for (size_t l = 0; l < n; l++) {
            if (ln[l].ci < 0 && !ln[l].idle && next < run->sel.n && !kg_interrupted()) {
                const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[next]);
                KG_TRY(pl_start(run, g, opts, d, &ln[l], l, &pc[next], next));
                next++;
            }
            busy += ln[l].ci >= 0;
        }
        KG_TRY(pl_flush(run, reg, g, pc, &rec));
        if (!busy && (next >= run->sel.n || kg_interrupted()))
            break; /* (a lane whose send failed is idle again: it takes the next case) */
        KG_TRY(pl_poll(run, reg, g, ln, n, pc));
    }
    if (kg_interrupted()) {
        rc = kg_run_stopped(run, "%s over %zu GPUs, %zu of %zu cases done", g->name, n, rec,
                            run->sel.n);
        goto cleanup;
    }
    rc = pl_end(run, g, ln, n);
cleanup:
    kg_progress_end();
    for (size_t l = 0; l < n; l++) /* a lane stopped mid-case by an error: its worker goes */
        if (ln[l].ci >= 0)
            kg_wk_kill(ln[l].slot);
    pl_drop(run, pc, rec, g);
    free(pc);
    return rc;
}
