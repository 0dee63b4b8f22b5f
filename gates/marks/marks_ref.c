/* Marks read from a ref, where a run's marks came from, and the guard against a PR that edits
 * the marks file (marks_ref.h). */
#include <stdlib.h>
#include <string.h>
#include "core/report_keys.h"
#include "marks/marks_ref.h"
#include "marks/marks_git.h"

const char *kg_marks_branch_default(const char *given)
{
    const char *b = given ? given : kg_env(KG_MARKS_BRANCH_ENV);
    if (!b)
        b = KG_MARKS_BRANCH_DEFAULT;
    return strcmp(b, KG_MARKS_BRANCH_HEAD) == 0 ? NULL : b;
}

/* A short name git resolves to another ref before refs/heads/NAME (tags/v1, remotes/o/x,
 * heads/x, FETCH_HEAD and the other pseudo-refs): marks written there are not what a later
 * `--marks-ref NAME` or `git show NAME:` reads. */
static const char *mr_ambiguous(const char *b)
{
    static const char *const pre[] = { "tags/", "remotes/", "heads/" };
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (strncmp(b, pre[i], strlen(pre[i])) == 0)
            return pre[i];
    size_t n = strlen(b);
    if (n > 4 && strcmp(b + n - 4, "HEAD") == 0 && strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == n)
        return "a pseudo-ref";
    return NULL;
}

int kg_marks_branch_check(const char *branch, const char *flag)
{
    char full[1024];
    if (!branch || strcmp(branch, KG_MARKS_BRANCH_HEAD) == 0)
        return 0;
    bool qualified = strncmp(branch, "refs/", 5) == 0;
    if (qualified && (strncmp(branch, "refs/heads/", 11) != 0 || !branch[11]))
        return KG_ERR(KG_EINVAL,
                      "%s '%.200s': marks are committed only on a branch (refs/heads/"
                      "NAME, a short branch name, or HEAD); %s is never moved",
                      flag, branch,
                      strncmp(branch, "refs/tags/", 10) == 0      ? "a tag"
                      : strncmp(branch, "refs/remotes/", 13) == 0 ? "a remote-tracking ref"
                                                                  : "any other ref");
    const char *amb = qualified ? NULL : mr_ambiguous(branch);
    if (amb)
        return KG_ERR(KG_EINVAL,
                      "%s '%.200s': git reads this short name as another ref first "
                      "(%s): name the branch in full, refs/heads/%.200s",
                      flag, branch, amb, branch);
    if (kg_utf8_bad(branch, strlen(branch)) != (size_t)-1)
        return KG_ERR(KG_EINVAL, "%s: not valid UTF-8 (a branch name is text)", flag);
    snprintf(full, sizeof full, "%s%.1000s", qualified ? "" : "refs/heads/", branch);
    git_libgit2_init(); /* called before any repository is opened */
    int valid = git_reference_is_valid_name(full);
    git_libgit2_shutdown();
    if (branch[0] == '-' || strlen(branch) > 255 || !valid || strcmp(full, "refs/heads/HEAD") == 0)
        return KG_ERR(
            KG_EINVAL,
            "%s '%.200s': not a valid reference name for a branch (refs/heads/NAME, a short "
            "branch name, or HEAD)",
            flag, branch);
    return 0;
}

void kg_marks_source_set_file(kg_marks_source *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->kind = path ? "file" : "none";
    if (path)
        snprintf(s->path, sizeof s->path, "%s", path);
}

cJSON *kg_marks_source_json(const kg_marks_source *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, KG_RK_MS_KIND, s->kind ? s->kind : "none");
    if (s->path[0])
        cJSON_AddStringToObject(o, KG_RK_MS_PATH, s->path);
    if (s->kind && strcmp(s->kind, "ref") == 0) {
        cJSON_AddStringToObject(o, KG_RK_MS_REF, s->ref);
        cJSON_AddStringToObject(o, KG_RK_MS_COMMIT, s->commit);
    }
    return o;
}

int kg_marks_load_ref(kg_marks **out, const char *repo_dir, const char *ref, const char *path,
                      kg_marks_source *src)
{
    int rc = 0;
    kg_git *g = NULL;
    git_oid c;
    const char *rel = path ? path : KG_MARKS_DEFAULT_PATH;
    *out = NULL;
    if (!ref || !*ref || strlen(ref) >= sizeof src->ref)
        return KG_ERR(KG_EINVAL,
                      "--marks-ref: expected a ref (e.g. origin/" KG_MARKS_BRANCH_DEFAULT
                      "), at most %zu characters",
                      sizeof src->ref - 1);
    if (strlen(rel) >= sizeof src->path || rel[0] == '/' || strstr(rel, ".."))
        return KG_ERR(KG_EINVAL,
                      "--marks %s: with --marks-ref, a path inside the repository "
                      "(relative, no '..')",
                      rel);
    KG_TRY(kg_git_open(&g, repo_dir ? repo_dir : "."));
    rc = kg_git_rev_commit(g, ref, &c);
    if (rc == KG_ENOTFOUND)
        rc = KG_ERR(KG_ENOTFOUND,
                    "--marks-ref %s: no such ref or commit in %s (fetch it first: "
                    "`git fetch origin " KG_MARKS_BRANCH_DEFAULT ":refs/remotes/"
                    "origin/" KG_MARKS_BRANCH_DEFAULT "`; a repository whose "
                    "production never ran has no marks branch yet)",
                    ref, g->workdir ? g->workdir : g->gitdir);
    KG_TRY(rc);
    KG_TRY(kg_marks_at_commit(out, g, &c, rel));
    if (src) {
        memset(src, 0, sizeof *src);
        src->kind = "ref";
        snprintf(src->path, sizeof src->path, "%s", rel);
        snprintf(src->ref, sizeof src->ref, "%s", ref);
        git_oid_tostr(src->commit, sizeof src->commit, &c);
    }
cleanup:
    kg_git_free(g);
    return rc;
}

/* ---- guard --------------------------------------------------------------------------------- */

/* The file at a commit: *data NULL when absent. */
static int mr_at(kg_git *g, const git_oid *c, const char *rel, char **data, size_t *len)
{
    int rc = 0;
    git_oid blob;
    bool exists;
    *data = NULL;
    *len = 0;
    KG_TRY(kg_git_file_blob_id(g, c, rel, &blob, &exists));
    if (exists)
        KG_TRY(kg_git_read_file(g, c, rel, data, len));
cleanup:
    return rc;
}

static bool mr_same(const char *a, size_t na, const char *b, size_t nb)
{
    if (!a || !b)
        return !a && !b;
    return na == nb && memcmp(a, b, na) == 0;
}

/* Marks of one side; unparseable text is a KG_EPARSE naming it (the guard still flags it). */
static int mr_parse(kg_marks **out, const char *data, const char *name)
{
    if (!data)
        return kg_marks_new(out);
    return kg_marks_parse(out, data, name);
}

static int mr_work(kg_git *g, const char *rel, char **data, size_t *len)
{
    char path[4096];
    *data = NULL;
    *len = 0;
    if (!g->workdir)
        return 0;
    snprintf(path, sizeof path, "%s%s", g->workdir, rel);
    int rc = kg_file_read_limit(data, len, path, KG_INPUT_MAX_BYTES);
    return rc == KG_ENOTFOUND ? 0 : rc;
}

int kg_marks_guard(kg_marks_guard_result *r, kg_git *g, const char *base, const char *relpath)
{
    int rc = 0;
    git_oid bc, hc;
    bool have_head = false;
    char *bd = NULL, *hd = NULL, *wd = NULL, name[1200];
    size_t bn = 0, hn = 0, wn = 0;
    memset(r, 0, sizeof *r);
    rc = kg_git_rev_commit(g, base, &bc);
    if (rc == KG_ENOTFOUND)
        rc = KG_ERR(KG_ENOTFOUND,
                    "--base %s: no such ref or commit (fetch the target branch "
                    "first, e.g. `git fetch origin main`)",
                    base);
    KG_TRY(rc);
    git_oid_tostr(r->base_commit, sizeof r->base_commit, &bc);
    KG_TRY(mr_at(g, &bc, relpath, &bd, &bn));
    KG_TRY(kg_git_head_commit(g, &hc, &have_head));
    if (have_head)
        KG_TRY(mr_at(g, &hc, relpath, &hd, &hn));
    KG_TRY(mr_work(g, relpath, &wd, &wn));
    r->base_present = bd != NULL;
    r->head_present = hd != NULL;
    r->work_present = wd != NULL;
    r->head_differs = !mr_same(bd, bn, hd, hn);
    r->work_differs = g->workdir && !mr_same(bd, bn, wd, wn);
    r->work_is_head = mr_same(hd, hn, wd, wn);
    snprintf(name, sizeof name, "%s at %s", relpath, base);
    KG_TRY(mr_parse(&r->base, bd, name));
    snprintf(name, sizeof name, "%s at HEAD", relpath);
    if (mr_parse(&r->head, hd, name) < 0) { /* flagged all the same; the caller shows why */
        r->head = NULL;
        snprintf(r->head_why, sizeof r->head_why, "%s", kg_error_last());
    }
    snprintf(name, sizeof name, "%s in the work tree", relpath);
    if (g->workdir && mr_parse(&r->work, wd, name) < 0) {
        r->work = NULL;
        snprintf(r->work_why, sizeof r->work_why, "%s", kg_error_last());
    }
cleanup:
    free(bd);
    free(hd);
    free(wd);
    return rc;
}

void kg_marks_guard_result_free(kg_marks_guard_result *r)
{
    kg_marks_free(r->base);
    kg_marks_free(r->head);
    kg_marks_free(r->work);
    memset(r, 0, sizeof *r);
}
