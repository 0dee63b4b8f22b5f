/* libgit2 wrapper for the production pipeline: open the repository holding a path, resolve the
 * marks ref, read a file at a commit, detect uncommitted changes, commit one file's new content
 * on a ref with compare-and-swap semantics, fetch/push, and walk a file's history.
 * No git CLI anywhere: everything goes through libgit2. */
#ifndef KG_GIT_H
#define KG_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <git2.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Environment variables (documented in docs/production-ci.md). The token is never printed. */
#define KG_GIT_TOKEN_ENV "KGATE_GIT_TOKEN"
#define KG_GIT_USER_ENV "KGATE_GIT_USER"     /* https user name sent with the token */
#define KG_GIT_USER_DEFAULT "x-access-token" /* GitHub's; any forge but GitLab */
#define KG_GIT_USER_GITLAB "oauth2"          /* when GITLAB_CI is set */
#define KG_GIT_AUTHOR_NAME_ENV "KGATE_GIT_AUTHOR_NAME"
#define KG_GIT_AUTHOR_EMAIL_ENV "KGATE_GIT_AUTHOR_EMAIL"
#define KG_GIT_DEFAULT_NAME "kgate"
#define KG_GIT_DEFAULT_EMAIL "kgate@localhost"

/* Record the failed libgit2 call with git_error_last(), file and line; rc = KG_EGIT (or
 * KG_ECONFLICT for a lost compare-and-swap); goto cleanup. Needs `int rc` and `cleanup:`. */
int kg_git_error(int git_rc, const char *expr, const char *file, int line);
#define KG_GIT_CHECK(expr) KG_GIT_CHECK_AS(#expr, expr)
/* A return code kept in a variable (to test for GIT_ENOTFOUND first): `call` names the
 * libgit2 call that returned it, so the message never reads "libgit2: e failed". */
#define KG_GIT_CHECK_AS(call, v)                                \
    do {                                                        \
        int kg_g_ = (v);                                        \
        if (kg_g_ < 0) {                                        \
            rc = kg_git_error(kg_g_, call, __FILE__, __LINE__); \
            goto cleanup;                                       \
        }                                                       \
    } while (0)

typedef struct {
    git_repository *repo;
    char *workdir; /* absolute, with a trailing '/'; NULL for a bare repository */
    char *gitdir;  /* absolute, with a trailing '/' */
} kg_git;

/* Open the repository that contains `path` (a directory; searched upwards). A path outside
 * any repository is KG_EREFUSED with a message naming it. */
int kg_git_open(kg_git **out, const char *path);
void kg_git_free(kg_git *g);

/* `file` (absolute or relative to the current directory; its directory must exist) as a path
 * relative to the work tree, '/'-separated. KG_EINVAL when it lies outside the work tree. */
int kg_git_relpath(const kg_git *g, const char *file, char **out);

/* The ref marks are committed on: `marks_ref` ("refs/heads/x", "x" = refs/heads/x) or, when
 * NULL, the branch HEAD points at (detached HEAD: KG_EREFUSED). *is_head tells whether it is
 * the checked-out branch (then the work tree copy of the marks file follows it). */
int kg_git_target_ref(kg_git *g, const char *marks_ref, char **refname, bool *is_head);
/* Tip of a ref; *exists false (and tip zeroed) when the ref does not exist yet. */
int kg_git_tip(kg_git *g, const char *refname, git_oid *tip, bool *exists);
/* Commit HEAD points at; *exists false on an unborn branch. */
int kg_git_head_commit(kg_git *g, git_oid *out, bool *exists);
/* *changed: a tracked file differs from HEAD in the index or the work tree (untracked files,
 * a build directory, do not count; nor do submodules). */
int kg_git_worktree_changed(kg_git *g, bool *changed);
/* Resolve a revision ("HEAD~2", a hex id, a branch) to a commit. KG_ENOTFOUND if unknown. */
int kg_git_rev_commit(kg_git *g, const char *rev, git_oid *out);

/* Content of `relpath` at `commit` (NUL-terminated; caller frees). KG_ENOTFOUND (with a
 * message) when the commit has no such file. */
int kg_git_read_file(kg_git *g, const git_oid *commit, const char *relpath, char **data,
                     size_t *len);
/* Blob id of `relpath` at `commit`; *exists false when absent. */
int kg_git_file_blob_id(kg_git *g, const git_oid *commit, const char *relpath, git_oid *blob,
                        bool *exists);

/* KG_EREFUSED when the work tree or index copy of `relpath` differs from HEAD (modified,
 * staged, deleted or untracked): marks are never committed over someone's uncommitted edit. */
int kg_git_check_clean(kg_git *g, const char *relpath);

typedef struct {
    const char *name;
    const char *email;
} kg_git_identity;
/* --author/--email, else KGATE_GIT_AUTHOR_NAME/EMAIL, else "kgate <kgate@localhost>". */
void kg_git_identity_resolve(kg_git_identity *id, const char *name, const char *email);
/* KG_EINVAL naming the flag and variable when the name or email is empty, over 256 characters,
 * or holds a control character or an angle bracket (git would write a corrupt commit). */
int kg_git_identity_check(const kg_git_identity *id);

/* Create a commit whose tree is `parent`'s tree (empty if parent is NULL) with `relpath` set to
 * `data`, built entirely in the object database (nothing in the work tree changes), then move
 * `refname` to it only if it still points at `expected` (NULL: only if it does not exist).
 * A ref that moved meanwhile is KG_ECONFLICT and changes nothing. */
int kg_git_commit_file(kg_git *g, const char *refname, const git_oid *expected,
                       const git_oid *parent, const char *relpath, const char *data, size_t len,
                       const char *message, const kg_git_identity *id, git_oid *out);

/* Called when kg_git_check_clean refused: if HEAD is a kgate commit whose work tree and index
 * copies of `relpath` are each at its parent's or its own content (an update interrupted after
 * the ref moved), finish it (kg_git_sync_worktree, with a line saying so) and return 0;
 * otherwise the refusal stands (KG_EREFUSED, the same message). Call with the lock held. */
int kg_git_finish_interrupted(kg_git *g, const char *relpath);

/* What kg_git_restore_pending found in .git/kgate-pending (the marks file kgate was writing to
 * the work tree when an update failed before its index entry followed, e.g. on index.lock). */
typedef enum {
    KG_GIT_PENDING_NONE,     /* no record */
    KG_GIT_PENDING_STALE,    /* the file is clean: the record is removed */
    KG_GIT_PENDING_RESTORED, /* the file was exactly kgate's bytes: put back as at HEAD */
    KG_GIT_PENDING_EDITED    /* the file changed since kgate wrote it: left as it is */
} kg_git_pending;
/* At the start of an update, with the lock held: clean what an interrupted one of kgate's own
 * left in the work tree (one line saying so), never an edit. `rel` (n bytes) gets the recorded
 * path when there is a record. */
int kg_git_restore_pending(kg_git *g, kg_git_pending *state, char *rel, size_t n);

/* KG_EREFUSED when the directory of `relpath` resolves (symbolic links followed) outside the
 * work tree: kgate writes the marks file only inside the repository. */
int kg_git_inside_worktree(const kg_git *g, const char *relpath);

/* Make the work tree file and its index entry match `relpath` at the tip of the checked-out
 * branch (atomic write: temp, fsync, rename). Call with the lock held. */
int kg_git_sync_worktree(kg_git *g, const char *relpath);

/* Serialize local marks updates of one repository between processes (flock on a file in the
 * git dir), so a CAS + work-tree sync is never observed half-done. The CAS on the ref still
 * guards against writers that do not take this lock. */
int kg_git_lock(kg_git *g, int *fd);
void kg_git_unlock(int fd);

/* Fetch `refname` from `remote` (a configured remote name, a URL or a path); *tip gets the
 * remote's commit for it (*exists false when the remote lacks the ref). */
int kg_git_fetch(kg_git *g, const char *remote, const char *refname, git_oid *tip, bool *exists);
/* Push `refname` to the same name on `remote` without force. A rejected update (not a fast
 * forward, or refused by the server) is KG_ECONFLICT. Credentials: KGATE_GIT_TOKEN (user
 * KGATE_GIT_USER, else "oauth2" when GITLAB_CI is set, else "x-access-token"); when it is set,
 * credentials embedded in an http(s) remote URL are dropped (fetch and push) so that the token
 * is what the server sees. */
int kg_git_push(kg_git *g, const char *remote, const char *refname);
/* `remote` as it may be shown: credentials in a URL (scheme://user:TOKEN@host) become ***. */
const char *kg_git_remote_shown(char *buf, size_t n, const char *remote);

/* `url` without the userinfo of its authority (http/https only): 1 and `buf` set when there
 * was one, else 0 (buf untouched). */
int kg_git_url_strip_userinfo(char *buf, size_t n, const char *url);

/* Commits reachable from `tip` but not from `base` (NULL: all of tip's history): *n counts
 * them, *all_prefixed tells whether every one's message starts with `prefix`. */
int kg_git_ahead(kg_git *g, const git_oid *tip, const git_oid *base, const char *prefix, size_t *n,
                 bool *all_prefixed);

/* 1 when `descendant` has `ancestor` in its history (or equals it), else 0; <0 on error. */
int kg_git_is_descendant(kg_git *g, const git_oid *descendant, const git_oid *ancestor);

/* Walk the first-parent history of `start` oldest first, calling `fn` for each commit where
 * `relpath` changed (added or modified). `data` is the file's content at that commit. */
typedef int (*kg_git_file_version_fn)(const git_oid *commit, const git_signature *author,
                                      const char *summary, const char *data, size_t len, void *ud);
int kg_git_file_history(kg_git *g, const git_oid *start, const char *relpath,
                        kg_git_file_version_fn fn, void *ud);

#ifdef __cplusplus
}
#endif
#endif
