/* The replay guard (see advance.h): an old signed report must not undo a lowering,
 * be applied twice, or move a mark set from newer code. What it reads is recorded additively:
 * every advance commit already carries `Run-Id: <run>`, every lowering and removal now carries
 * `Kgate-Lowered: {"device_class","case","metric","at"}`; the marks themselves carry the
 * commit under test that set them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "marks/advance.h"

#define AG_MAX_WALK 1000000 /* commits: a bound, far above any marks branch */

typedef struct {
    const kg_advance_input *in;
    const kg_marks *m;
    char (*lowered)[24]; /* per candidate: the latest lowering seen ("" = none) */
    const char *name;
    bool applied; /* the run id or the report's marks_update commit is in the history */
    git_oid applied_by;
    const char *applied_how;
} ag_ctx;

/* "YYYY-MM-DDTHH:MM:SSZ" exactly: then strcmp orders the times. */
static bool ag_iso(const char *s)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";
    if (!s || strlen(s) != sizeof pat - 1)
        return false;
    for (size_t i = 0; pat[i]; i++)
        if (pat[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pat[i])
            return false;
    return true;
}

static bool ag_run_id_ok(const char *r)
{
    size_t n = r ? strlen(r) : 0;
    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') ||
              (r[i] >= '0' && r[i] <= '9') || strchr("._:+-", r[i])))
            return false;
    return true;
}

static bool ag_full_oid(const char *c, git_oid *id)
{
    size_t n = c ? strlen(c) : 0;
    if (n != GIT_OID_HEXSZ)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((c[i] >= '0' && c[i] <= '9') || (c[i] >= 'a' && c[i] <= 'f')))
            return false;
    return git_oid_fromstr(id, c) == 0;
}

int kg_advance_lowered_trailer(char **out, const char *device_class, const char *case_id,
                               const char *metric, const char *at)
{
    cJSON *o = cJSON_CreateObject();
    *out = NULL;
    if (o && cJSON_AddStringToObject(o, "device_class", device_class) &&
        cJSON_AddStringToObject(o, "case", case_id) &&
        cJSON_AddStringToObject(o, "metric", metric) && cJSON_AddStringToObject(o, "at", at)) {
        char *j = cJSON_PrintUnformatted(o);
        size_t n = j ? strlen(KG_ADVANCE_LOWERED_TRAILER) + strlen(j) + 1 : 0;
        if (j && (*out = malloc(n)))
            snprintf(*out, n, "%s%s", KG_ADVANCE_LOWERED_TRAILER, j);
        free(j);
    }
    cJSON_Delete(o);
    return *out ? 0 : KG_ERR(KG_ENOMEM, "out of memory");
}

/* One `Kgate-Lowered:` line: the latest time per candidate key it names. */
static void ag_lowered_line(ag_ctx *c, const char *json, size_t len)
{
    cJSON *o = cJSON_ParseWithLength(json, len);
    const char *dc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "device_class"));
    const char *cs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "case"));
    const char *mt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "metric"));
    const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "at"));
    for (size_t i = 0; dc && cs && mt && ag_iso(at) && i < c->in->n_cands; i++) {
        const kg_mark *k = &c->in->cands[i].cand;
        if (strcmp(k->device_class, dc) == 0 && strcmp(k->case_id, cs) == 0 &&
            strcmp(k->metric, mt) == 0 && strcmp(at, c->lowered[i]) > 0)
            snprintf(c->lowered[i], sizeof c->lowered[i], "%s", at);
    }
    cJSON_Delete(o);
}

/* One commit of base's history: only kgate's own commits ("kgate: " summary) are read. */
static int ag_commit(ag_ctx *c, const git_oid *id, const git_commit *cm)
{
    const char *msg = git_commit_message(cm), *p = msg;
    const char *rid = c->in->run_id;
    size_t rl = strlen(rid), tl = strlen(KG_ADVANCE_LOWERED_TRAILER);
    if (!c->applied && c->in->applied_commit &&
        strcmp(git_oid_tostr_s(id), c->in->applied_commit) == 0) {
        c->applied = true;
        c->applied_by = *id;
        c->applied_how = "the report's own marks_update names";
    }
    if (!msg || strncmp(msg, "kgate: ", 7) != 0)
        return 0;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!c->applied && n == 8 + rl && strncmp(p, "Run-Id: ", 8) == 0 &&
            strncmp(p + 8, rid, rl) == 0) {
            c->applied = true;
            c->applied_by = *id;
            c->applied_how = "it was already applied by";
        }
        if (n > tl && strncmp(p, KG_ADVANCE_LOWERED_TRAILER, tl) == 0)
            ag_lowered_line(c, p + tl, n - tl);
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int ag_walk(ag_ctx *c, kg_git *g, const git_oid *base)
{
    int rc = 0;
    git_revwalk *w = NULL;
    git_oid id;
    KG_GIT_CHECK(git_revwalk_new(&w, g->repo));
    KG_GIT_CHECK(git_revwalk_push(w, base));
    for (long n = 0; n < AG_MAX_WALK; n++) {
        git_commit *cm = NULL;
        int e = git_revwalk_next(&id, w);
        if (e == GIT_ITEROVER)
            break;
        KG_GIT_CHECK_AS("git_revwalk_next", e);
        KG_GIT_CHECK(git_commit_lookup(&cm, g->repo, &id));
        rc = ag_commit(c, &id, cm);
        git_commit_free(cm);
        KG_TRY(rc);
    }
cleanup:
    git_revwalk_free(w);
    return rc;
}

/* The rules on one candidate that would move its mark. */
static int ag_cand(ag_ctx *c, kg_git *g, size_t i)
{
    const kg_mark *k = &c->in->cands[i].cand;
    const kg_mark *cur = kg_marks_find(c->m, k->device_class, k->case_id, k->metric);
    const char *low = c->lowered[i];
    git_oid mine, theirs;
    git_commit *obj = NULL;
    if (cur && !kg_mark_better(k, cur))
        return 0; /* moves nothing: the ratchet already ignores it */
    /* A repeat that would move a mark is refused; one that moves nothing is harmless (a rerun
     * after a failed push finishes by pushing the stranded commit). */
    if (c->applied)
        return KG_ERR(KG_EREFUSED,
                      "%s: refused by the replay rule: run %s: %s the marks commit "
                      "%.12s, and it would move %s [%s] %s again (a report "
                      "advances the marks once)",
                      c->name, c->in->run_id, c->applied_how, git_oid_tostr_s(&c->applied_by),
                      k->case_id, k->device_class, k->metric);
    if (cur && cur->set_by && strncmp(cur->set_by, "kgate marks lower", 17) == 0 &&
        ag_iso(cur->date) && strcmp(cur->date, low) > 0)
        low = cur->date;
    if (*low && strcmp(c->in->started_at, low) <= 0)
        return KG_ERR(KG_EREFUSED,
                      "%s: refused by the freshness rule: the run started at %s, "
                      "not after the last lowering of %s [%s] %s at %s (`kgate "
                      "marks lower`); only a run started after it may move that "
                      "mark again",
                      c->name, c->in->started_at, k->case_id, k->device_class, k->metric, low);
    if (!cur || !ag_full_oid(cur->commit, &theirs) || !ag_full_oid(c->in->commit, &mine) ||
        git_oid_equal(&mine, &theirs))
        return 0;
    if (git_commit_lookup(&obj, g->repo, &theirs) != 0) {
        git_error_clear();
        return KG_ERR(KG_EREFUSED,
                      "%s: refused by the ancestry rule: the mark %s [%s] %s was "
                      "set from commit %.12s, which this repository lacks, so the "
                      "report's commit cannot be shown to descend from it (fetch "
                      "the full history: `git fetch --unshallow`, or fetch-depth: "
                      "0)",
                      c->name, k->case_id, k->device_class, k->metric, cur->commit);
    }
    git_commit_free(obj);
    int d = git_graph_descendant_of(g->repo, &mine, &theirs);
    if (d == 1)
        return 0;
    git_error_clear();
    return KG_ERR(KG_EREFUSED,
                  "%s: refused by the ancestry rule: the report's commit %.12s does "
                  "not descend from %.12s, the commit that set the mark %s [%s] %s "
                  "(older or side-branch code never moves a mark set from newer "
                  "code)",
                  c->name, c->in->commit, cur->commit, k->case_id, k->device_class, k->metric);
}

int kg_advance_guard(kg_git *g, const git_oid *base, const kg_marks *m, const kg_advance_input *in,
                     const char *name)
{
    int rc = 0;
    char now[32];
    ag_ctx c = { .in = in, .m = m, .name = name };
    time_t t = time(NULL) + KG_ADVANCE_FUTURE_S;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!ag_run_id_ok(in->run_id))
        return KG_ERR(KG_EREFUSED,
                      "%s: refused by the replay rule: run_id '%.140s' is not 1 to "
                      "128 of [A-Za-z0-9._:+-] (kgate's run ids are)",
                      name, in->run_id ? in->run_id : "");
    if (!ag_iso(in->started_at) || strcmp(in->started_at, now) > 0)
        return KG_ERR(KG_EREFUSED,
                      "%s: refused by the freshness rule: started_at '%.40s' is not "
                      "a UTC time YYYY-MM-DDTHH:MM:SSZ up to %d s from now",
                      name, in->started_at ? in->started_at : "(missing)", KG_ADVANCE_FUTURE_S);
    if (in->n_cands && !(c.lowered = calloc(in->n_cands, sizeof *c.lowered)))
        return KG_ERR(KG_ENOMEM, "out of memory");
    if (base)
        KG_TRY(ag_walk(&c, g, base));
    for (size_t i = 0; i < in->n_cands; i++)
        KG_TRY(ag_cand(&c, g, i));
    if (c.applied)
        printf("marks: run %s: %s the marks commit %.12s; it moves nothing now\n", in->run_id,
               c.applied_how, git_oid_tostr_s(&c.applied_by));
cleanup:
    free(c.lowered);
    return rc;
}
