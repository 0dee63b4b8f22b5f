/* The marks file in git: locate it (repository, ref, path), check the refusals, and commit an
 * update of it with compare-and-swap on the ref, reload-merge-retry on a race, and optional push
 * with fetch-merge-retry on rejection. Shared by `run --production`, `marks advance` and
 * `marks lower`. */
#ifndef KG_MARKS_GIT_H
#define KG_MARKS_GIT_H

#include "git/git.h"
#include "marks/marks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KG_MARKS_DEFAULT_PATH "baselines/high_water.json" /* relative to the work tree root */

typedef struct {
    const char *marks_path;  /* NULL: KG_MARKS_DEFAULT_PATH in the repository of the cwd */
    const char *marks_ref;   /* the branch to commit on (the command line passes
                                * kg_marks_branch_default: "kgate-marks"); NULL: the checked-out
                                * branch. A branch other than HEAD's that does not exist yet is
                                * created as an orphan commit holding the work tree's marks file
                                * (when present); with push_remote, one only the remote has is
                                * first started at the remote's tip. */
    const char *push_remote; /* NULL: no push */
    const char *author, *email;
    int max_attempts; /* compare-and-swap / push attempts before failing */
} kg_marks_git_opts;

#define KG_MARKS_GIT_OPTS_INIT                                                                     \
    {                                                                                              \
        .marks_path = NULL, .marks_ref = NULL, .push_remote = NULL, .author = NULL, .email = NULL, \
        .max_attempts = 16                                                                         \
    }

typedef struct {
    kg_git *git;
    char *relpath; /* marks file, relative to the work tree */
    char *abspath; /* its work tree path (NULL for a bare repository) */
    char *refname; /* the ref marks are committed on */
    bool is_head;  /* refname is the checked-out branch */
    git_oid tip;   /* ref tip when opened (zero when the ref does not exist yet) */
    bool tip_exists;
    kg_marks *marks; /* marks at the tip (empty when the file is not there yet) */
    /* the commit the update function's attempt builds on (set before each call of it), so it
     * can read that history (the replay guard) */
    git_oid attempt_base;
    bool attempt_has_base;
} kg_marks_target;

/* Open and check everything before any work is done: not a git repository, detached HEAD
 * without --marks-ref, uncommitted changes to the marks file and a malformed marks file are
 * refused (KG_EREFUSED / KG_EPARSE, exit 2) with a message naming the cause. */
int kg_marks_target_open(kg_marks_target **out, const kg_marks_git_opts *o);
void kg_marks_target_free(kg_marks_target *t);

/* Apply one update to `m` (the marks at the tip this attempt is based on). Returns the number
 * of marks changed (0: nothing to commit) or <0; sets *message (malloc'd) when >0. It is called
 * again on the reloaded marks after every lost race, so it must be a pure function of `m`. */
typedef int (*kg_marks_update_fn)(kg_marks *m, void *ud, char **message);

typedef struct {
    bool committed;
    git_oid commit;
    bool pushed;        /* this call pushed the ref (an earlier commit, or the new one) */
    int pushed_pending; /* earlier marks commits pushed first (their push had failed) */
    git_oid pending;    /* the local tip pushed first */
    int attempts;       /* compare-and-swap attempts used */
    int push_attempts;
    int changed; /* marks changed by the commit that landed */
} kg_marks_commit_result;

int kg_marks_commit_update(kg_marks_target *t, const kg_marks_git_opts *o, kg_marks_update_fn fn,
                           void *ud, kg_marks_commit_result *res);

/* Marks stored at `commit` (empty marks when the file is absent). */
int kg_marks_at_commit(kg_marks **out, kg_git *g, const git_oid *commit, const char *relpath);

#ifdef __cplusplus
}
#endif
#endif
