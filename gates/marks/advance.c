/* The advance logic (see advance.h): report -> candidate marks -> ratchet over current marks.
 *
 * Ratchet guard: a candidate's value is the conservative edge of the run's confidence interval
 * of the median (ci_hi for lower-is-better times), never the median or the best sample. A lucky
 * run therefore cannot set a mark that ordinary later runs of the same code would "regress"
 * from; the mark only moves as far as the evidence of the run supports. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "marks/advance.h"
#include "core/report_keys.h"
#include "driver/driver.h"

static char *xstrdup(const char *s) { return s ? strdup(s) : NULL; }

static const char *jstr(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

void kg_advance_input_free(kg_advance_input *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n_cands; i++)
        kg_mark_clear(&in->cands[i].cand);
    free(in->cands);
    free(in->run_id);
    free(in->device_class);
    free(in->started_at);
    free(in->commit);
    free(in->applied_commit);
    free(in);
}

static void why(kg_advance_input *in, const char *fmt, const char *a, const char *b, const char *c)
{
    size_t n = strlen(in->why_not);
    if (n + 4 >= sizeof in->why_not)
        return;
    if (n)
        snprintf(in->why_not + n, sizeof in->why_not - n, "; ");
    n = strlen(in->why_not);
    snprintf(in->why_not + n, sizeof in->why_not - n, fmt, a, b, c);
    in->all_passed = false;
}

static size_t pair_hash(const char *g, const char *c)
{
    size_t h = 1469598103934665603ULL;
    for (const char *p = g; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (const char *p = c; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

/* Every gate listed in report.gates must have a result for every case seen in the report
 * (selftest rows name defect cases the gates never see). Linear: a hash of (gate, case). */
static int check_coverage(kg_advance_input *in, const cJSON *gates, const cJSON *results)
{
    size_t n = (size_t)cJSON_GetArraySize(results), ns = 16;
    while (ns < 2 * n)
        ns *= 2;
    const cJSON **slot = calloc(ns, sizeof *slot), *g, *r;
    if (!slot)
        return KG_ERR(KG_ENOMEM, "out of memory");
    cJSON_ArrayForEach(r, results) {
        size_t i = pair_hash(jstr(r, "gate"), jstr(r, "case")) & (ns - 1);
        while (slot[i])
            i = (i + 1) & (ns - 1);
        slot[i] = r;
    }
    cJSON_ArrayForEach(g, gates) {
        const char *gn = cJSON_GetStringValue(g);
        cJSON_ArrayForEach(r, results) {
            const char *cs = jstr(r, "case");
            if (!gn || strcmp(jstr(r, "gate"), "selftest") == 0)
                continue;
            size_t i = pair_hash(gn, cs) & (ns - 1);
            while (slot[i] && !(strcmp(jstr(slot[i], "gate"), gn) == 0 &&
                                strcmp(jstr(slot[i], "case"), cs) == 0))
                i = (i + 1) & (ns - 1);
            if (!slot[i]) {
                why(in, "gate %s has no result for case %s%s", gn, cs, "");
                free(slot);
                return 0;
            }
        }
    }
    free(slot);
    return 0;
}

/* One bench result that may move a mark, as the JSON path and the typed path both see it. */
int kg_advance_add(kg_advance_input *in, const kg_advance_obs *o, const char *name)
{
    const char *cs = o->case_id;
    if (strcmp(o->decision, KG_RV_DEC_SAME) == 0)
        in->n_same++;
    if (strcmp(o->decision, KG_RV_DEC_IMPROVED) != 0 && strcmp(o->decision, KG_RV_DEC_NO_MARK) != 0)
        return 0;
    if (o->processes < 2 &&
        !o->exact) { /* unconfirmed: production advances only from separate processes */
        in->n_single++;
        return 0;
    }
    if (!o->metric || !*o->metric)
        return KG_ERR(KG_EPARSE, "%s: bench result for '%s' lacks figures.%s", name, cs,
                      KG_FIG_METRIC);
    if (o->processes > KG_ADVANCE_MAX_PROCESSES ||
        (!o->exact && !(o->env_lo > 0 && o->env_lo <= o->env_hi)) || o->k < 0 ||
        o->k > KG_MARK_MAX_K)
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%s': %d processes need 0 < env_lo <= "
                      "env_hi (got %g, %g), processes <= %d and k in [0, %d] (got %d)",
                      name, cs, o->processes, o->env_lo, o->env_hi, KG_ADVANCE_MAX_PROCESSES,
                      KG_MARK_MAX_K, o->k);
    if (!(o->ci_lo > 0 && o->ci_lo <= o->median && o->median <= o->ci_hi) || o->band < 0 ||
        o->band >= 1 || o->samples < 1 || o->samples != floor(o->samples) || o->samples > 2e9)
        return KG_ERR(KG_EPARSE,
                      "%s: bench result for '%s': need 0 < ci_lo <= median <= ci_hi, "
                      "0 <= band_rel < 1 and an integer samples in [1, 2e9] (got %g <= "
                      "%g <= %g, band %g, samples %g)",
                      name, cs, o->ci_lo, o->median, o->ci_hi, o->band, o->samples);
    kg_advance_cand *nc = realloc(in->cands, (in->n_cands + 1) * sizeof *nc);
    if (!nc)
        return KG_ERR(KG_ENOMEM, "out of memory");
    in->cands = nc;
    kg_advance_cand *c = &in->cands[in->n_cands++];
    memset(c, 0, sizeof *c);
    snprintf(c->decision, sizeof c->decision, "%s", o->decision);
    kg_mark *m = &c->cand;
    m->direction = o->direction;
    /* The ratchet guard: the conservative edge of the interval, not the median. */
    m->value = o->direction == KG_LOWER_IS_BETTER ? o->ci_hi : o->ci_lo;
    /* The spread of the N process medians, widened as kg_marks_merge widens it. */
    double env_half = o->exact ? 0 : (o->env_hi - o->env_lo) / (2.0 * o->median);
    m->band_rel = o->exact ? o->band
                           : fmax(o->band, (double)(o->processes + 1) / (double)(o->processes - 1) *
                                               env_half);
    m->runs = o->exact ? 1 : o->processes; /* band > 0.999: refused by kg_mark_validate */
    m->env_lo = o->env_lo;
    m->env_hi = o->env_hi;
    m->k = o->k;
    m->run_median = o->median;
    m->ci_lo = o->ci_lo;
    m->ci_hi = o->ci_hi;
    m->samples = (int)o->samples;
    m->device_class = xstrdup(in->device_class);
    m->case_id = xstrdup(cs);
    m->metric = xstrdup(o->metric);
    m->commit = xstrdup(o->commit ? o->commit : "unknown");
    m->date = xstrdup(o->date);
    m->run_id = xstrdup(in->run_id);
    m->driver = xstrdup(o->driver ? o->driver : "unknown");
    m->cuda = xstrdup(o->cuda ? o->cuda : "unknown");
    m->set_by = xstrdup(o->set_by);
    /* what users pay: the figures as measured, the spreads of the processes */
    m->measured_median_us = o->measured_median > 0 ? o->measured_median : 0;
    m->measured_spread_rel = m->measured_median_us > 0 ? fmin(0.999, o->measured_spread) : 0;
    m->energy_per_launch_mj = o->energy_mj > 0 ? o->energy_mj : 0;
    m->energy_spread_rel = m->energy_per_launch_mj > 0 ? fmin(0.999, o->energy_spread) : 0;
    m->power_state = o->power_state && *o->power_state && strcmp(o->power_state, "unknown") != 0
                         ? xstrdup(o->power_state)
                         : NULL;
    if ((o->power_state && *o->power_state && strcmp(o->power_state, "unknown") != 0 &&
         !m->power_state) ||
        !m->device_class || !m->case_id || !m->metric || !m->commit || !m->date || !m->run_id ||
        !m->driver || !m->cuda || !m->set_by)
        return KG_ERR(KG_ENOMEM, "out of memory");
    /* What would be committed is checked here, by the loader's rules, so a commit that kgate
     * could not load back is refused before anything is built. */
    return kg_mark_validate(m, name);
}

void kg_advance_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What the replay guard compares (kg_advance_guard): started_at, the commit under test, and
 * the marks commit of the report's own marks_update when that says it committed. */
static int adv_replay_fields(kg_advance_input *in, const cJSON *root)
{
    const char *st = jstr(root, KG_RK_STARTED_AT);
    const char *c = jstr(cJSON_GetObjectItemCaseSensitive(root, KG_RK_PROVENANCE),
                         KG_RK_PROV_COMMIT);
    const cJSON *mu = cJSON_GetObjectItemCaseSensitive(root, KG_RK_MARKS_UPDATE);
    const char *ac = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mu, KG_RK_MU_COMMITTED))
                         ? jstr(mu, KG_RK_MU_COMMIT)
                         : NULL;
    if ((st && !(in->started_at = strdup(st))) || (c && !(in->commit = strdup(c))) ||
        (ac && !(in->applied_commit = strdup(ac))))
        return KG_ERR(KG_ENOMEM, "out of memory");
    return 0;
}

/* Whether some gate's marks own the metric (kg_gate_production.claims_metric). */
static bool adv_claimed(const char *metric)
{
    for (size_t i = 0; metric && i < kg_n_gates; i++) {
        const struct kg_gate_production *p = kg_gates[i]->production;
        if (p && p->claims_metric && p->claims_metric(metric))
            return true;
    }
    return false;
}

/* One result row: its verdict counted (the first few not passing named), the candidates its
 * gate reads from it (kg_gate_production.report_candidates) taken. */
static int adv_take_result(kg_advance_input *in, const cJSON *it, const kg_advance_obs *stamp,
                           const char *name, int *n_bad)
{
    int rc = 0;
    const char *g = jstr(it, KG_RES_GATE), *cs = jstr(it, KG_RES_CASE),
               *vs = jstr(it, KG_RES_VERDICT);
    kg_verdict v, full;
    if (!g || !cs || !vs || kg_verdict_parse(vs, &v) < 0)
        return KG_ERR(KG_EPARSE,
                      "%s: a result lacks gate/case/verdict or has an unknown "
                      "verdict",
                      name);
    in->counts[v]++;
    if (v == KG_VERDICT_FAIL || v == KG_VERDICT_ERROR || v == KG_VERDICT_SKIP) {
        if (++*n_bad <= 3) /* the first few name the problem; the count says the rest */
            why(in, "%s %s: %s", g, cs, vs);
        else
            in->all_passed = false;
    }
    const struct kg_gate *gate = kg_gate_find(g);
    const struct kg_gate_production *p = gate ? gate->production : NULL;
    if (!p)
        return 0;
    in->n_bench += p->counted;
    if (!in->device_class || !p->report_candidates || kg_verdict_parse_full(vs, &full) < 0)
        return 0;
    kg_advance_obs o[KG_GATE_CANDIDATES_MAX];
    int n = p->report_candidates(o, KG_GATE_CANDIDATES_MAX, it, full, stamp, name, adv_claimed);
    for (int k = 0; k < n; k++)
        KG_TRY(kg_advance_add(in, &o[k], name));
    rc = n < 0 ? n : 0;
cleanup:
    return rc;
}

int kg_advance_parse(kg_advance_input **out, const cJSON *root, const char *name,
                     const char *set_by)
{
    int rc = 0;
    kg_advance_input *in = calloc(1, sizeof *in);
    const cJSON *res, *it;
    int n_bad = 0;
    *out = NULL;
    if (!in) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (!cJSON_IsObject(root)) {
        rc = KG_ERR(KG_EPARSE, "%s: not a kgate report (expected a JSON object)", name);
        goto cleanup;
    }
    const char *mode = jstr(root, KG_RK_MODE), *run_id = jstr(root, KG_RK_RUN_ID);
    const cJSON *cert = cJSON_GetObjectItemCaseSensitive(root, KG_RK_CERTIFYING);
    res = cJSON_GetObjectItemCaseSensitive(root, KG_RK_RESULTS);
    if (!mode || !cJSON_IsBool(cert) || !run_id || !cJSON_IsArray(res)) {
        rc = KG_ERR(KG_EPARSE,
                    "%s: not a kgate report (needs mode, certifying, run_id and "
                    "results)",
                    name);
        goto cleanup;
    }
    /* Both stamps must agree: anything but an explicit production stamp is non-certifying. */
    in->certifying = strcmp(mode, "production") == 0 && cJSON_IsTrue(cert);
    in->all_passed = true;
    if (!(in->run_id = strdup(run_id))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    KG_TRY(adv_replay_fields(in, root));
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, KG_RK_DEVICE);
    const char *cls = jstr(dev, KG_RK_DEVICE_CLASS);
    if (cls && *cls) {
        if (!(in->device_class = strdup(cls))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
    } else {
        why(in, "no GPU in the run (report.device.class is missing)%s%s%s", "", "", "");
    }
    /* the report's provenance, which every candidate carries */
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, KG_RK_PROVENANCE);
    char now[32];
    kg_advance_obs stamp = { .commit = jstr(prov, KG_RK_PROV_COMMIT),
                             .date = jstr(root, KG_RK_STARTED_AT),
                             .driver = jstr(dev, KG_RK_DRIVER),
                             .cuda = jstr(dev, KG_RK_RUNTIME),
                             .set_by = set_by };
    if (!stamp.date) {
        kg_advance_now(now, sizeof now);
        stamp.date = now;
    }
    cJSON_ArrayForEach(it, res)
        KG_TRY(adv_take_result(in, it, &stamp, name, &n_bad));
    if (n_bad > 3) {
        char more[32];
        snprintf(more, sizeof more, "%d", n_bad - 3);
        why(in, "and %s more not passing%s%s", more, "", "");
    }
    const cJSON *gates = cJSON_GetObjectItemCaseSensitive(root, KG_RK_GATES);
    if (cJSON_IsArray(gates))
        KG_TRY(check_coverage(in, gates, res));
    *out = in;
    in = NULL;
cleanup:
    kg_advance_input_free(in);
    return rc;
}

void kg_mark_moves_free(kg_mark_moves *mv)
{
    for (size_t i = 0; mv && i < mv->n; i++) {
        free(mv->v[i].device_class);
        free(mv->v[i].case_id);
        free(mv->v[i].metric);
    }
    if (mv) {
        free(mv->v);
        mv->v = NULL;
        mv->n = 0;
    }
}

int kg_advance_apply(kg_marks *m, const kg_advance_input *in, kg_mark_moves *moves)
{
    int rc = 0;
    kg_mark_moves_free(moves);
    for (size_t i = 0; i < in->n_cands; i++) {
        const kg_mark *c = &in->cands[i].cand;
        const kg_mark *cur = kg_marks_find(m, c->device_class, c->case_id, c->metric);
        /* Like with like: a change of direction is a refusal, never a replacement (the metric
         * and with it the unit are part of the key). */
        if (cur && cur->direction != c->direction) {
            rc = KG_ERR(KG_EREFUSED,
                        "mark %s / %s / %s is %s, the run's candidate %s: refused "
                        "(a direction never changes through an advance)",
                        c->device_class, c->case_id, c->metric,
                        cur->direction == KG_LOWER_IS_BETTER ? KG_RV_DIR_LOWER : KG_RV_DIR_HIGHER,
                        c->direction == KG_LOWER_IS_BETTER ? KG_RV_DIR_LOWER : KG_RV_DIR_HIGHER);
            goto cleanup;
        }
        /* Merge rule: a mark moves only if this run still beats it (never down). */
        if (cur && !kg_mark_better(c, cur))
            continue;
        kg_mark_move mv = { 0 };
        mv.had_old = cur != NULL;
        mv.old_value = cur ? cur->value : 0;
        mv.new_value = c->value;
        mv.band_rel = c->band_rel;
        mv.direction = c->direction;
        mv.device_class = strdup(c->device_class);
        mv.case_id = strdup(c->case_id);
        mv.metric = strdup(c->metric);
        kg_mark_move *nv = realloc(moves->v, (moves->n + 1) * sizeof *nv);
        if (!nv || !mv.device_class || !mv.case_id || !mv.metric) {
            free(mv.device_class);
            free(mv.case_id);
            free(mv.metric);
            if (nv)
                moves->v = nv;
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        moves->v = nv;
        moves->v[moves->n++] = mv;
        KG_TRY(kg_marks_put(m, c));
    }
cleanup:
    return rc;
}

int kg_advance_message(char **out, const kg_advance_input *in, const kg_mark_moves *moves)
{
    /* Sized from the strings (ids from a report can be long): a fixed per-line guess let a
     * truncated snprintf push n past cap, and `cap - n` then wrapped around. */
    size_t cap = 512 + 2 * strlen(in->run_id);
    for (size_t i = 0; i < moves->n; i++)
        cap += 160 + strlen(moves->v[i].case_id) + strlen(moves->v[i].device_class) +
               strlen(moves->v[i].metric);
    char *b = malloc(cap);
    size_t n = 0;
    *out = NULL;
    if (!b)
        return KG_ERR(KG_ENOMEM, "out of memory");
    n += (size_t)snprintf(b + n, cap - n, "kgate: advance %zu high-water mark%s (run %s)\n\n",
                          moves->n, moves->n == 1 ? "" : "s", in->run_id);
    for (size_t i = 0; i < moves->n; i++) {
        const kg_mark_move *m = &moves->v[i];
        char old[48];
        if (m->had_old)
            snprintf(old, sizeof old, "%.6g", m->old_value);
        else
            snprintf(old, sizeof old, "(none)");
        n += (size_t)snprintf(b + n, cap - n, "- %s [%s] %s: %s -> %.6g (band +-%.2f%%)\n",
                              m->case_id, m->device_class, m->metric, old, m->new_value,
                              100.0 * m->band_rel);
    }
    snprintf(b + n, cap - n,
             "\nEach new mark is the %s edge of the run's confidence interval "
             "(ratchet guard).\nRun-Id: %s\n",
             "conservative", in->run_id);
    *out = b;
    return 0;
}
