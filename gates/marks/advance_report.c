/* A recorded production report as the input of `marks advance --from-report` (see advance.h):
 * loaded strictly, authenticated (HMAC-SHA256 with KGATE_REPORT_KEY), and checked to be what
 * `kgate run --production` writes: the selftest rows, every gate of the table, and a commit
 * under test that the repository holds. A hand-made "fully passing" report fails one of them. */
#include <stdlib.h>
#include <string.h>
#include "driver/driver.h"
#include "marks/advance.h"

static const char *ar_str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* report.gates is exactly the gate table (kg_gates), each once. */
static int ar_gates(const cJSON *root, const char *name)
{
    const cJSON *gl = cJSON_GetObjectItemCaseSensitive(root, KG_RK_GATES), *g;
    size_t n = 0;
    bool seen[64] = { false };
    if (!cJSON_IsArray(gl))
        return KG_ERR(KG_EREFUSED,
                      "%s: field '" KG_RK_GATES "' is missing: a production report "
                      "lists every gate it ran",
                      name);
    cJSON_ArrayForEach(g, gl) {
        const char *gn = cJSON_GetStringValue(g);
        size_t i = 0;
        while (gn && i < kg_n_gates && strcmp(kg_gates[i]->name, gn) != 0)
            i++;
        if (!gn || i == kg_n_gates || i >= KG_ARRAY_LEN(seen) || seen[i])
            return KG_ERR(KG_EREFUSED,
                          "%s: field '" KG_RK_GATES "': entry %zu is not a gate of "
                          "this kgate or is listed twice",
                          name, n);
        seen[i] = true;
        n++;
    }
    for (size_t i = 0; i < kg_n_gates; i++)
        if (!seen[i])
            return KG_ERR(KG_EREFUSED,
                          "%s: field '" KG_RK_GATES "' lacks the gate '%s': a "
                          "production run runs every gate",
                          name, kg_gates[i]->name);
    return 0;
}

int kg_advance_check_production(const cJSON *root, const char *name)
{
    int rc = 0;
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, KG_RK_RESULTS), *it;
    const char *schema = ar_str(root, KG_RK_SCHEMA), *cmd = ar_str(root, KG_RK_COMMAND);
    size_t selftest = 0;
    if (!schema || strcmp(schema, KG_RV_SCHEMA) != 0 || !cmd || strcmp(cmd, "run") != 0)
        return KG_ERR(KG_EREFUSED,
                      "%s: not a `kgate run` report of schema " KG_RV_SCHEMA
                      " (fields '" KG_RK_SCHEMA "', '" KG_RK_COMMAND "')",
                      name);
    KG_TRY(ar_gates(root, name));
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, KG_RK_SHARD);
    if (sh && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sh, KG_RK_SHARD_MERGED)))
        return KG_ERR(KG_EREFUSED,
                      "%s: a shard report (field '" KG_RK_SHARD "') never advances "
                      "marks alone: merge every shard (kgate report --merge OUT "
                      "SHARD.json...) and advance from the merged report",
                      name);
    cJSON_ArrayForEach(it, res) {
        const char *g = ar_str(it, KG_RES_GATE);
        selftest += g && strcmp(g, KG_RV_GATE_SELFTEST) == 0;
    }
    if (selftest == 0)
        return KG_ERR(KG_EREFUSED,
                      "%s: no '" KG_RV_GATE_SELFTEST "' results: a production run "
                      "runs the selftest first",
                      name);
cleanup:
    return rc;
}

int kg_advance_load(kg_advance_input **out, cJSON **root_out, const char *path, const char *set_by)
{
    int rc = 0;
    cJSON *root = NULL;
    kg_advance_input *in = NULL;
    *out = NULL;
    *root_out = NULL;
    KG_TRY(kg_json_load(&root, path));
    const char *mode = ar_str(root, KG_RK_MODE);
    bool production = cJSON_IsObject(root) && mode && strcmp(mode, KG_RV_MODE_PRODUCTION) == 0 &&
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, KG_RK_CERTIFYING));
    /* Authenticity first: nothing an unsigned or forged report says is read further. */
    if (production)
        KG_TRY(kg_report_json_verify(root, kg_report_key(), path));
    KG_TRY(kg_advance_parse(&in, root, path, set_by));
    if (!production || !in->certifying) {
        rc = KG_ERR(KG_EREFUSED,
                    "%s: a diagnostic (non-certifying) report never advances marks; "
                    "only `kgate run --production` reports do",
                    path);
        goto cleanup;
    }
    KG_TRY(kg_advance_check_production(root, path));
    *out = in;
    *root_out = root;
    in = NULL;
    root = NULL;
cleanup:
    kg_advance_input_free(in);
    cJSON_Delete(root);
    return rc;
}

/* The commit under test: a full hex id the repository holds, in the history of the marks ref
 * or of HEAD (the code those marks belong to). */
int kg_advance_check_commit(const cJSON *root, kg_git *g, const char *refname, const char *name)
{
    int rc = 0;
    const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, KG_RK_PROVENANCE);
    const char *c = ar_str(prov, KG_RK_PROV_COMMIT);
    size_t n = c ? strlen(c) : 0;
    bool hex = n == GIT_OID_HEXSZ;
    git_oid id, tip;
    bool exists = false;
    git_commit *obj = NULL;
    for (size_t i = 0; hex && i < n; i++)
        hex = (c[i] >= '0' && c[i] <= '9') || (c[i] >= 'a' && c[i] <= 'f');
    if (!hex || git_oid_fromstr(&id, c) != 0)
        return KG_ERR(KG_EREFUSED,
                      "%s: field '" KG_RK_PROVENANCE "." KG_RK_PROV_COMMIT "' must "
                      "be the full id of the commit under test (40 hex digits)",
                      name);
    if (git_commit_lookup(&obj, g->repo, &id) != 0) {
        git_error_clear();
        return KG_ERR(KG_EREFUSED, "%s: the commit under test %.40s is not in the repository", name,
                      c);
    }
    git_commit_free(obj);
    KG_TRY(kg_git_tip(g, refname, &tip, &exists));
    if (exists && kg_git_is_descendant(g, &tip, &id) == 1)
        goto cleanup;
    KG_TRY(kg_git_head_commit(g, &tip, &exists));
    if (exists && kg_git_is_descendant(g, &tip, &id) == 1)
        goto cleanup;
    git_error_clear();
    rc = KG_ERR(KG_EREFUSED,
                "%s: the commit under test %.40s is not in the history of %s or "
                "HEAD",
                name, c, refname);
cleanup:
    return rc;
}
