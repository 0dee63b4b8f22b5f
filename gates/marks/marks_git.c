/* The marks file in git (see marks_git.h). Order of operations, so a failure at any point leaves
 * nothing half-done:
 *   1. read the marks at the ref tip T (from the object database, not the work tree);
 *   2. apply the update, serialize, and build blob, tree and commit C (parent T) in the object
 *      database only;
 *   3. under the repository lock: re-check the work tree copy is clean, move the ref T -> C
 *      only if it still points at T (compare-and-swap), then rewrite the work tree file
 *      atomically (temp, fsync, rename) and its index entry to match the new HEAD;
 *   4. lost the race (ref moved): back to 1 on the new tip, a bounded number of times.
 * Unreferenced objects of a lost attempt are harmless (git gc drops them). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "marks/marks_git.h"

int kg_marks_at_commit(kg_marks **out, kg_git *g, const git_oid *commit, const char *relpath)
{
    int rc = 0;
    char *data = NULL, name[1024];
    git_oid blob;
    bool exists;
    *out = NULL;
    KG_TRY(kg_git_file_blob_id(g, commit, relpath, &blob, &exists));
    if (!exists) {
        KG_TRY(kg_marks_new(out));
        goto cleanup;
    }
    KG_TRY(kg_git_read_file(g, commit, relpath, &data, NULL));
    snprintf(name, sizeof name, "%s (commit %.12s)", relpath, git_oid_tostr_s(commit));
    rc = kg_marks_parse(out, data, name);
    if (rc == KG_EPARSE && *kg_error_last() == '\0')
        rc = KG_ERR(KG_EPARSE, "%s: malformed marks file", name);
cleanup:
    free(data);
    return rc;
}

void kg_marks_target_free(kg_marks_target *t)
{
    if (!t)
        return;
    kg_marks_free(t->marks);
    kg_git_free(t->git);
    free(t->relpath);
    free(t->abspath);
    free(t->refname);
    free(t);
}

/* The commit an attempt builds on: the ref tip; for the checked-out branch not created yet,
 * HEAD's commit; for a marks branch not created yet, none (its first commit is an orphan). */
static int base_commit(kg_marks_target *t, git_oid *base, bool *have_base)
{
    int rc = 0;
    KG_TRY(kg_git_tip(t->git, t->refname, &t->tip, &t->tip_exists));
    if (t->tip_exists) {
        *base = t->tip;
        *have_base = true;
    } else if (t->is_head) {
        KG_TRY(kg_git_head_commit(t->git, base, have_base));
    } else {
        *have_base = false;
    }
cleanup:
    return rc;
}

/* The first marks of a new marks branch: the work tree's file if present (the marks a
 * repository kept on its code branch carry over), else HEAD's (a bare repository), else none. */
static int mg_seed_marks(kg_marks_target *t)
{
    int rc = 0;
    git_oid head;
    bool have = false;
    if (t->abspath && access(t->abspath, F_OK) == 0)
        return kg_marks_load(&t->marks, t->abspath);
    if (!t->abspath)
        KG_TRY(kg_git_head_commit(t->git, &head, &have));
    if (have)
        KG_TRY(kg_marks_at_commit(&t->marks, t->git, &head, t->relpath));
    else
        KG_TRY(kg_marks_new(&t->marks));
cleanup:
    return rc;
}

static int load_base(kg_marks_target *t, git_oid *base, bool *have_base)
{
    int rc = 0;
    kg_marks_free(t->marks);
    t->marks = NULL;
    KG_TRY(base_commit(t, base, have_base));
    if (*have_base)
        KG_TRY(kg_marks_at_commit(&t->marks, t->git, base, t->relpath));
    else if (!t->is_head)
        KG_TRY(mg_seed_marks(t));
    else
        KG_TRY(kg_marks_new(&t->marks));
cleanup:
    return rc;
}

/* A marks branch the remote has and this clone lacks (a fresh CI checkout): start the local
 * branch at the remote's tip, so the run decides against, and commits on top of, the marks
 * production already recorded. */
static int mg_track_remote(kg_marks_target *t, const char *remote)
{
    int rc = 0;
    git_oid tip, rtip;
    bool exists, rexists;
    git_reference *ref = NULL;
    char shown[1024];
    if (t->is_head || !remote)
        return 0;
    KG_TRY(kg_git_tip(t->git, t->refname, &tip, &exists));
    if (exists)
        return 0;
    KG_TRY(kg_git_fetch(t->git, remote, t->refname, &rtip, &rexists));
    if (!rexists)
        return 0; /* the first production run creates it */
    KG_GIT_CHECK(git_reference_create(&ref, t->git->repo, t->refname, &rtip, 0,
                                      "kgate: marks branch from the remote"));
    printf("marks: %s starts at %.12s from %s\n", t->refname, git_oid_tostr_s(&rtip),
           kg_git_remote_shown(shown, sizeof shown, remote));
cleanup:
    git_reference_free(ref);
    return rc;
}

/* Under the lock (another kgate may be between its ref update and its work tree sync): first
 * clean what an interrupted update of kgate's left (.git/kgate-pending; also before a marks
 * branch is seeded from the work tree), then, on the checked-out branch, refuse a dirty marks
 * file unless it is an update killed between its ref move and the work tree. */
static int mg_check_worktree(kg_marks_target *t)
{
    int rc = 0, lockfd = -1;
    kg_git_pending st = KG_GIT_PENDING_NONE;
    char rel[4096] = "";
    if (!t->git->workdir)
        return 0;
    KG_TRY(kg_git_lock(t->git, &lockfd));
    KG_TRY(kg_git_restore_pending(t->git, &st, rel, sizeof rel));
    if (!t->is_head)
        goto cleanup;
    rc = kg_git_check_clean(t->git, t->relpath);
    if (rc == KG_EREFUSED)
        rc = kg_git_finish_interrupted(t->git, t->relpath);
    if (rc == KG_EREFUSED && st == KG_GIT_PENDING_EDITED && strcmp(rel, t->relpath) == 0)
        rc = KG_ERR(KG_EREFUSED,
                    "%s (not restored: it changed after an interrupted advance "
                    "wrote it, as %skgate-pending records, and kgate never "
                    "discards an edit)",
                    kg_error_last(), t->git->gitdir);
cleanup:
    kg_git_unlock(lockfd);
    return rc;
}

int kg_marks_target_open(kg_marks_target **out, const kg_marks_git_opts *opts)
{
    int rc = 0;
    kg_marks_git_opts eff = *opts;
    const kg_marks_git_opts *o = &eff;
    eff.marks_path = kg_marks_path_default(opts->marks_path);
    kg_marks_target *t = calloc(1, sizeof *t);
    git_oid base;
    bool have_base;
    char dir[4096];
    kg_git_identity id;
    *out = NULL;
    if (!t) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* Before any work: an author that would corrupt the commit is a usage error. */
    kg_git_identity_resolve(&id, o->author, o->email);
    KG_TRY(kg_git_identity_check(&id));
    if (o->marks_path) {
        snprintf(dir, sizeof dir, "%s", o->marks_path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        if (access(dir, F_OK) != 0) {
            rc = KG_ERR(KG_EINVAL, "--marks %s: directory %s does not exist", o->marks_path, dir);
            goto cleanup;
        }
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    KG_TRY(kg_git_open(&t->git, dir));
    if (o->marks_path && t->git->workdir)
        KG_TRY(kg_git_relpath(t->git, o->marks_path, &t->relpath));
    else if (!(t->relpath = strdup(o->marks_path ? o->marks_path : KG_MARKS_DEFAULT_PATH))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (t->git->workdir) {
        size_t n = strlen(t->git->workdir) + strlen(t->relpath) + 1;
        if (!(t->abspath = malloc(n))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(t->abspath, n, "%s%s", t->git->workdir, t->relpath);
    }
    KG_TRY(kg_git_inside_worktree(t->git, t->relpath));
    KG_TRY(kg_git_target_ref(t->git, o->marks_ref, &t->refname, &t->is_head));
    KG_TRY(mg_check_worktree(t));
    KG_TRY(mg_track_remote(t, o->push_remote));
    KG_TRY(load_base(t, &base, &have_base));
    *out = t;
    t = NULL;
cleanup:
    kg_marks_target_free(t);
    return rc;
}

/* What kgate commits it has proven it can load: the exact bytes go through the loader. */
static int mg_loadable(const char *text, const char *relpath)
{
    kg_marks *check = NULL;
    int rc = kg_marks_parse(&check, text, relpath);
    kg_marks_free(check);
    if (rc < 0)
        return KG_ERR(KG_EREFUSED, "refusing to commit marks kgate could not load back: %s",
                      kg_error_last());
    return 0;
}

/* The ref moved but the work tree and index could not follow: put the ref back where it was
 * (compare-and-swap from our commit), so the repository is as it was; if even that fails, say
 * exactly how to finish by hand. */
static int mg_roll_back(kg_marks_target *t, const git_oid *expected, const git_oid *ours)
{
    char why[1024], id[GIT_OID_HEXSZ + 1];
    git_reference *ref = NULL;
    int e = -1;
    snprintf(why, sizeof why, "%s", kg_error_last());
    git_oid_tostr(id, sizeof id, ours);
    if (expected)
        e = git_reference_create_matching(&ref, t->git->repo, t->refname, expected, 1, ours,
                                          "kgate: roll back a marks update");
    git_reference_free(ref);
    if (e == 0) {
        bool synced = kg_git_sync_worktree(t->git, t->relpath) == 0;
        git_error_clear();
        return KG_ERR(KG_EGIT,
                      "updating the work tree copy of %s failed: %s; %s was rolled "
                      "back to %.12s, nothing changed%s%s%s",
                      t->relpath, why, t->refname, git_oid_tostr_s(expected),
                      synced ? "" : " (kgate's copy of ", synced ? "" : t->relpath,
                      synced ? ""
                             : " stays in the work tree until the next advance restores "
                               "it)");
    }
    git_error_clear();
    return KG_ERR(KG_EGIT,
                  "committed %.12s on %s, but updating the work tree copy of %s failed: "
                  "%s (finish it with `git checkout %s -- %s`, or undo the commit with "
                  "`git update-ref %s %s^ %s`)",
                  id, t->refname, t->relpath, why, id, t->relpath, t->refname, id, id);
}

/* Every compare-and-swap lost: a ref lock file that stays is not a race (a killed git left
 * it), and rerunning never helps; say which file and the command that clears it. */
static int mg_gave_up(const kg_marks_target *t, int attempts)
{
    char lock[4096];
    snprintf(lock, sizeof lock, "%s%s.lock", t->git->gitdir, t->refname);
    if (access(lock, F_OK) == 0)
        return KG_ERR(KG_ECONFLICT,
                      "%s is locked by %s, which stayed through %d attempts: if no "
                      "git or kgate process is running it is stale; clear it with "
                      "`rm -f '%s'` and rerun (nothing was changed)",
                      t->refname, lock, attempts, lock);
    return KG_ERR(KG_ECONFLICT,
                  "%s kept moving: gave up after %d compare-and-swap attempts "
                  "(nothing was lost; rerun to retry)",
                  t->refname, attempts);
}

static void backoff(int attempt)
{
    /* Spread the retries of runners that finished together. */
    struct timespec ts = { 0, (long)(5 + (rand() % 20) * (attempt < 8 ? attempt : 8)) * 1000000L };
    nanosleep(&ts, NULL);
}

/* One local attempt on top of `base`: update, commit, CAS expected -> new, sync the work tree.
 * *changed = 0 when the update moved nothing (nothing committed). */
static int commit_once(kg_marks_target *t, const kg_marks_git_opts *o, kg_marks_update_fn fn,
                       void *ud, const git_oid *expected, const git_oid *parent, git_oid *out,
                       int *changed)
{
    int rc = 0, lockfd = -1;
    char *msg = NULL, *text = NULL;
    kg_git_identity id;
    kg_git_identity_resolve(&id, o->author, o->email);
    t->attempt_has_base = parent != NULL;
    if (parent)
        t->attempt_base = *parent;
    KG_TRY(*changed = fn(t->marks, ud, &msg));
    if (*changed == 0)
        goto cleanup;
    KG_TRY(kg_marks_serialize(&text, t->marks));
    KG_TRY(mg_loadable(text, t->relpath));
    KG_TRY(kg_git_lock(t->git, &lockfd));
    if (t->is_head)
        KG_TRY(kg_git_check_clean(t->git, t->relpath));
    KG_TRY(kg_git_commit_file(t->git, t->refname, expected, parent, t->relpath, text, strlen(text),
                              msg, &id, out));
    if (t->is_head && (rc = kg_git_sync_worktree(t->git, t->relpath)) < 0)
        rc = mg_roll_back(t, expected, out);
cleanup:
    kg_git_unlock(lockfd);
    free(msg);
    free(text);
    return rc;
}

/* Push rejected: fetch the remote tip R, rebuild our update on R's marks, and move the local
 * ref (CAS from our commit) to the new commit. Only when the local branch had nothing but our
 * commit on top of something R already contains; otherwise the histories diverged and a human
 * must merge. */
static int rebase_on_remote(kg_marks_target *t, const kg_marks_git_opts *o, kg_marks_update_fn fn,
                            void *ud, const git_oid *ours, const git_oid *our_parent,
                            bool have_parent, git_oid *out, int *changed)
{
    int rc = 0, lockfd = -1;
    git_oid remote_tip;
    bool rexists;
    char shown[1024];
    kg_git_remote_shown(shown, sizeof shown, o->push_remote);
    KG_TRY(kg_git_fetch(t->git, o->push_remote, t->refname, &remote_tip, &rexists));
    if (!rexists) {
        rc = KG_ERR(KG_EGIT, "push to %s was rejected but the remote has no %s", shown, t->refname);
        goto cleanup;
    }
    if (have_parent) {
        int d = kg_git_is_descendant(t->git, &remote_tip, our_parent);
        KG_TRY(d);
        if (d == 0) {
            rc = KG_ERR(KG_ECONFLICT,
                        "%s on %s and the local branch have diverged beyond the "
                        "marks commit; pull and rerun",
                        t->refname, shown);
            goto cleanup;
        }
    }
    kg_marks_free(t->marks);
    t->marks = NULL;
    KG_TRY(kg_marks_at_commit(&t->marks, t->git, &remote_tip, t->relpath));
    KG_TRY(commit_once(t, o, fn, ud, ours, &remote_tip, out, changed));
    if (*changed == 0) {
        /* The remote already holds marks at least as good: follow it, nothing to push. */
        KG_TRY(kg_git_lock(t->git, &lockfd));
        git_reference *ref = NULL;
        int e = git_reference_create_matching(&ref, t->git->repo, t->refname, &remote_tip, 1, ours,
                                              "kgate: follow remote marks");
        git_reference_free(ref);
        KG_GIT_CHECK_AS("git_reference_create_matching", e);
        if (t->is_head)
            KG_TRY(kg_git_sync_worktree(t->git, t->relpath));
        *out = remote_tip;
    }
cleanup:
    kg_git_unlock(lockfd);
    return rc;
}

/* Before deciding, with --push: a local ref ahead of the remote's by kgate marks commits only
 * (an earlier advance committed, then its push failed) is pushed first, so that a rerun
 * finishes the job even when this run moves nothing. A ref behind or diverged from the
 * remote's, or ahead by commits kgate did not make, is left to the usual commit-push-rebase
 * path. */
static int push_pending(kg_marks_target *t, const kg_marks_git_opts *o, kg_marks_commit_result *res)
{
    int rc = 0;
    git_oid rtip;
    bool rexists;
    size_t n = 0;
    bool ours = false;
    char shown[1024];
    if (!t->tip_exists)
        return 0;
    kg_git_remote_shown(shown, sizeof shown, o->push_remote);
    KG_TRY(kg_git_fetch(t->git, o->push_remote, t->refname, &rtip, &rexists));
    if (rexists && git_oid_equal(&rtip, &t->tip))
        goto cleanup;
    if (rexists) {
        int d = kg_git_is_descendant(t->git, &t->tip, &rtip);
        KG_TRY(d);
        if (d == 0)
            goto cleanup; /* behind or diverged */
    }
    KG_TRY(kg_git_ahead(t->git, &t->tip, rexists ? &rtip : NULL, "kgate: ", &n, &ours));
    if (!ours || n == 0)
        goto cleanup;
    printf("marks: %s is %zu marks commit(s) ahead of %s (an earlier push did not land): pushing "
           "%.12s first\n",
           t->refname, n, shown, git_oid_tostr_s(&t->tip));
    KG_TRY(kg_git_push(t->git, o->push_remote, t->refname));
    res->pushed = true;
    res->pushed_pending = (int)n;
    res->pending = t->tip;
cleanup:
    return rc;
}

int kg_marks_commit_update(kg_marks_target *t, const kg_marks_git_opts *o, kg_marks_update_fn fn,
                           void *ud, kg_marks_commit_result *res)
{
    int rc = 0, changed = 0;
    git_oid base, newc;
    bool have_base = false;
    int max = o->max_attempts > 0 ? o->max_attempts : 16;
    memset(res, 0, sizeof *res);
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    if (o->push_remote)
        KG_TRY(push_pending(t, o, res));
    for (int a = 1;; a++) {
        res->attempts = a;
        /* Always the current tip's marks: after a lost race this is the merge step. */
        KG_TRY(load_base(t, &base, &have_base));
        rc = commit_once(t, o, fn, ud, t->tip_exists ? &t->tip : NULL, have_base ? &base : NULL,
                         &newc, &changed);
        if (rc == KG_ECONFLICT && a < max) {
            backoff(a);
            continue;
        }
        if (rc == KG_ECONFLICT)
            rc = mg_gave_up(t, a);
        KG_TRY(rc);
        break;
    }
    if (changed == 0)
        goto cleanup; /* nothing moved: nothing to commit or push */
    res->committed = true;
    res->commit = newc;
    res->changed = changed;
    if (!o->push_remote)
        goto cleanup;
    for (int p = 1;; p++) {
        res->push_attempts = p;
        rc = kg_git_push(t->git, o->push_remote, t->refname);
        if (rc != KG_ECONFLICT)
            break;
        if (p >= max) {
            rc = KG_ERR(KG_ECONFLICT,
                        "push of %s to %s still rejected after %d attempts (the "
                        "local commit %.12s stands; rerun to retry)",
                        t->refname, o->push_remote, p, git_oid_tostr_s(&res->commit));
            break;
        }
        printf("kgate: push rejected (the remote moved): fetching and merging the marks again\n");
        git_oid ours = res->commit, parent = base;
        KG_TRY(rebase_on_remote(t, o, fn, ud, &ours, &parent, have_base, &newc, &changed));
        res->commit = newc;
        res->changed = changed;
        if (changed == 0) {
            res->committed = false; /* the remote already had it all */
            rc = 0;
            goto cleanup;
        }
        /* The next rejection rebases this commit: its parent is the remote tip we used. */
        git_commit *c = NULL;
        KG_GIT_CHECK(git_commit_lookup(&c, t->git->repo, &newc));
        base = *git_commit_parent_id(c, 0);
        git_commit_free(c);
        have_base = true;
        backoff(p);
    }
    KG_TRY(rc);
    res->pushed = true;
cleanup:
    return rc;
}
