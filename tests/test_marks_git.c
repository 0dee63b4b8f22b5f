/* Compare-and-swap and merge-retry, deterministically: the update function itself lets a
 * "racing runner" commit first, so the first attempt must lose the CAS, reload the new tip and
 * merge. Temporary repositories are made with the git CLI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "marks/advance.h"
#include "kg_test.h"
#include "marks/marks_git.h"

static char dir[256];

static kg_mark mark(const char *id, double v)
{
    kg_mark m;
    memset(&m, 0, sizeof m);
    m.device_class = "G/sm_90";
    m.case_id = (char *)id;
    m.metric = "time_us_warm";
    m.direction = KG_LOWER_IS_BETTER;
    m.value = v;
    m.band_rel = 0.01;
    m.run_median = v;
    m.ci_lo = v;
    m.ci_hi = v;
    m.samples = 10;
    m.commit = "c";
    m.date = "2026-12-01T00:00:00Z";
    m.run_id = "r";
    m.driver = "13.0";
    m.cuda = "13.0";
    m.set_by = "test";
    return m;
}

typedef struct {
    kg_marks_target *t;
    int calls;
} race_ud;

/* Our run improves "a" to 5; on the first call a rival commits "b" = 7 and "a" = 6 first. */
static int racing_update(kg_marks *m, void *ud, char **message)
{
    race_ud *u = ud;
    if (u->calls++ == 0) {
        kg_marks *rival = NULL;
        char *text = NULL;
        git_oid tip, out;
        bool exists;
        kg_git_identity id = { "rival", "rival@example.com" };
        kg_mark a = mark("a", 6), b = mark("b", 7);
        if (kg_marks_new(&rival) < 0 || kg_marks_put(rival, &a) < 0 ||
            kg_marks_put(rival, &b) < 0 || kg_marks_serialize(&text, rival) < 0 ||
            kg_git_tip(u->t->git, u->t->refname, &tip, &exists) < 0 ||
            kg_git_commit_file(u->t->git, u->t->refname, &tip, &tip, u->t->relpath, text,
                               strlen(text), "rival", &id, &out) < 0 ||
            kg_git_sync_worktree(u->t->git, u->t->relpath) < 0) /* as a rival kgate would */
            fprintf(stderr, "rival commit failed: %s\n", kg_error_last());
        free(text);
        kg_marks_free(rival);
    }
    const kg_mark *cur = kg_marks_find(m, "G/sm_90", "a", "time_us_warm");
    kg_mark a = mark("a", 5);
    if (cur && !kg_mark_better(&a, cur))
        return 0;
    if (kg_marks_put(m, &a) < 0)
        return -1;
    *message = strdup("ours: a -> 5");
    return 1;
}

static void sh(const char *cmd)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "cd %s && %s >/dev/null 2>&1", dir, cmd);
    CHECK_MSG(system(buf) == 0, "shell: %s", cmd);
}

int main(void)
{
    kg_marks_git_opts o = KG_MARKS_GIT_OPTS_INIT;
    kg_marks_target *t = NULL;
    kg_marks_commit_result res;
    kg_marks *at = NULL;
    char shown[256];
    /* A --push URL is shown without its credentials; paths and scp-style remotes as given. */
    CHECK(strcmp(kg_git_remote_shown(shown, sizeof shown, "https://x:tok123@h.example/o/r.git"),
                 "https://***@h.example/o/r.git") == 0);
    CHECK(strcmp(kg_git_remote_shown(shown, sizeof shown, "https://h.example/a@b"),
                 "https://h.example/a@b") == 0);
    CHECK(strcmp(kg_git_remote_shown(shown, sizeof shown, "/srv/git/m.git"), "/srv/git/m.git") ==
          0);
    snprintf(dir, sizeof dir, "/tmp/kg-test-marks-git-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    sh("git init -q && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m init");
    CHECK(chdir(dir) == 0);

    CHECK(kg_marks_target_open(&t, &o) == 0 && t && t->is_head);
    /* issue #28: a failed libgit2 call is named, never the variable holding its code. */
    {
        git_oid x;
        bool ex;
        CHECK(kg_git_tip(t->git, "refs/heads/a..b", &x, &ex) < 0);
        const char *em = kg_error_last();
        CHECK_MSG(strstr(em, "libgit2: git_reference_name_to_id failed") &&
                      !strstr(em, ": e failed"),
                  "message: %s", em);
        kg_git_identity bad_id = { "R\xC3\x28sum\xE9", "x@e" };
        CHECK(kg_git_identity_check(&bad_id) == KG_EINVAL && strstr(kg_error_last(), "UTF-8"));
    }
    /* CAS: a stale expected tip is KG_ECONFLICT and leaves the ref alone. */
    git_oid stale, tip, out;
    bool exists;
    kg_git_identity id = { "x", "x@e" };
    CHECK(kg_git_tip(t->git, t->refname, &stale, &exists) == 0 && exists);
    CHECK(kg_git_commit_file(t->git, t->refname, &stale, &stale, "f", "1", 1, "m", &id, &out) == 0);
    CHECK(kg_git_commit_file(t->git, t->refname, &stale, &stale, "f", "2", 1, "m", &id, &out) ==
          KG_ECONFLICT);
    CHECK(kg_git_tip(t->git, t->refname, &tip, &exists) == 0 && !git_oid_equal(&tip, &out));

    /* Lost race -> reload the rival's tip -> merge: a = 5 (ours, still better), b = 7 kept. */
    race_ud u = { t, 0 };
    sh("git reset -q --hard");
    CHECK_MSG(kg_marks_commit_update(t, &o, racing_update, &u, &res) == 0, "%s", kg_error_last());
    CHECK(res.committed && res.attempts == 2 && u.calls == 2);
    CHECK(kg_git_tip(t->git, t->refname, &tip, &exists) == 0 && git_oid_equal(&tip, &res.commit));
    CHECK(kg_marks_at_commit(&at, t->git, &tip, t->relpath) == 0);
    CHECK(at && kg_marks_find(at, "G/sm_90", "a", "time_us_warm")->value == 5);
    CHECK(at && kg_marks_find(at, "G/sm_90", "b", "time_us_warm") &&
          kg_marks_find(at, "G/sm_90", "b", "time_us_warm")->value == 7);
    sh("test -z \"$(git status --porcelain)\" && git fsck --strict --no-progress");
    sh("test \"$(git log -1 --format=%s)\" = 'ours: a -> 5' && test \"$(git log -1 --skip=1 --format=%s)\" = rival");

    kg_marks_free(at);
    kg_marks_target_free(t);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    return kg_test_done("test_marks_git");
}
