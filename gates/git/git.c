/* libgit2 wrapper (see git.h). Every libgit2 call is checked with KG_GIT_CHECK, which records
 * git_error_last() with file and line; tokens are redacted from any message we keep. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "git/git.h"

static int git_inited;

static int git_init_once(void)
{
    int rc = 0;
    if (!git_inited) {
        KG_GIT_CHECK(git_libgit2_init()); /* process-wide; released at exit */
        git_inited = 1;
    }
cleanup:
    return rc;
}

/* The push token never reaches a message (tokens shorter than 4 characters are not real ones
 * and would blank ordinary text). */
static void redact(char *msg)
{
    const char *tok = getenv(KG_GIT_TOKEN_ENV);
    if (tok && strlen(tok) >= 4)
        kg_redact_all(msg, tok);
}

int kg_git_error(int git_rc, const char *expr, const char *file, int line)
{
    const git_error *e = git_error_last();
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", e && e->message ? e->message : "unknown libgit2 error");
    redact(msg);
    /* A ref that moved under us (CAS lost, or held locked by another writer) is a race to
     * retry, not a failure. */
    int code = (git_rc == GIT_EMODIFIED || git_rc == GIT_ELOCKED || git_rc == GIT_EEXISTS)
                   ? KG_ECONFLICT
                   : KG_EGIT;
    /* A lock file left by a killed git process never goes away by itself: say how to clear it. */
    char hint[1200] = "";
    const char *lk = strstr(msg, ".lock");
    if (lk) {
        const char *q0 = msg;
        for (const char *q = msg; q < lk; q++)
            if (*q == '\'' || *q == ' ')
                q0 = q + 1;
        snprintf(hint, sizeof hint,
                 " (a lock file: if no git or kgate process is running, it "
                 "is stale; clear it with `rm -f '%.*s.lock'`)",
                 (int)(lk - q0), q0);
    }
    /* The call's name, not its arguments: "git_reference_create(&ref, ...)" -> the name. */
    int nlen = (int)strcspn(expr, "( ");
    return kg_error_set(code, file, line, "libgit2: %.*s failed (%d): %s%s", nlen, expr, git_rc,
                        msg, hint);
}

static char *dup_slash(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 2);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    if (n == 0 || s[n - 1] != '/')
        d[n++] = '/';
    d[n] = '\0';
    return d;
}

int kg_git_open(kg_git **out, const char *path)
{
    int rc = 0, e;
    kg_git *g = NULL;
    *out = NULL;
    KG_TRY(git_init_once());
    g = calloc(1, sizeof *g);
    if (!g) {
        rc = KG_ERR(KG_ENOMEM, "out of memory opening a repository");
        goto cleanup;
    }
    e = git_repository_open_ext(&g->repo, path, 0, NULL);
    if (e == GIT_ENOTFOUND) {
        rc = KG_ERR(KG_EREFUSED,
                    "%s: not inside a git repository (marks are versioned in git; "
                    "run from a clone or pass --marks FILE inside one)",
                    path);
        goto cleanup;
    }
    KG_GIT_CHECK_AS("git_repository_open_ext", e);
    const char *wd = git_repository_workdir(g->repo);
    if (wd && !(g->workdir = dup_slash(wd))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory opening a repository");
        goto cleanup;
    }
    if (!(g->gitdir = dup_slash(git_repository_path(g->repo)))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory opening a repository");
        goto cleanup;
    }
    *out = g;
    g = NULL;
cleanup:
    kg_git_free(g);
    return rc;
}

void kg_git_free(kg_git *g)
{
    if (!g)
        return;
    git_repository_free(g->repo);
    free(g->workdir);
    free(g->gitdir);
    free(g);
}

int kg_git_relpath(const kg_git *g, const char *file, char **out)
{
    char dirbuf[PATH_MAX], real[PATH_MAX], wreal[PATH_MAX];
    *out = NULL;
    if (!g->workdir)
        return KG_ERR(KG_EREFUSED, "%s: the repository is bare (no work tree)", file);
    snprintf(dirbuf, sizeof dirbuf, "%s", file);
    char *slash = strrchr(dirbuf, '/');
    const char *base = slash ? slash + 1 : dirbuf;
    const char *dir = slash ? (slash == dirbuf ? "/" : dirbuf) : ".";
    if (slash)
        *slash = '\0';
    if (!*base)
        return KG_ERR(KG_EINVAL, "%s: expected a file path", file);
    if (!realpath(dir, real))
        return KG_ERR(KG_EINVAL, "%s: directory %s: %s", file, dir, strerror(errno));
    if (!realpath(g->workdir, wreal))
        return KG_ERR(KG_EIO, "%s: %s", g->workdir, strerror(errno));
    size_t wl = strlen(wreal);
    const char *rel;
    if (strcmp(real, wreal) == 0)
        rel = "";
    else if (strncmp(real, wreal, wl) == 0 && real[wl] == '/')
        rel = real + wl + 1;
    else
        return KG_ERR(KG_EINVAL, "%s: outside the work tree of the repository at %s", file,
                      g->workdir);
    size_t n = strlen(rel) + strlen(base) + 2;
    char *r = malloc(n);
    if (!r)
        return KG_ERR(KG_ENOMEM, "out of memory");
    snprintf(r, n, "%s%s%s", rel, *rel ? "/" : "", base);
    *out = r;
    return 0;
}

int kg_git_target_ref(kg_git *g, const char *marks_ref, char **refname, bool *is_head)
{
    int rc = 0, e;
    git_reference *head = NULL;
    char *name = NULL;
    const char *head_target = NULL;
    *refname = NULL;
    *is_head = false;
    e = git_reference_lookup(&head, g->repo, "HEAD");
    if (e == 0 && git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
        head_target = git_reference_symbolic_target(head);
    else if (e != 0 && e != GIT_ENOTFOUND)
        KG_GIT_CHECK_AS("git_reference_lookup", e);
    if (marks_ref) {
        size_t n = strlen(marks_ref) + 16;
        if (!(name = malloc(n))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
        snprintf(name, n, "%s%s", strncmp(marks_ref, "refs/", 5) == 0 ? "" : "refs/heads/",
                 marks_ref);
        if (!git_reference_is_valid_name(name)) {
            rc = KG_ERR(KG_EINVAL, "--marks-branch '%s': not a valid reference name", marks_ref);
            goto cleanup;
        }
        /* never a tag or remote-tracking ref, whoever calls (marks_ref.c checks
         * the command lines before any work) */
        if (strncmp(name, "refs/heads/", 11) != 0) {
            rc = KG_ERR(KG_EINVAL,
                        "--marks-branch '%s': marks are committed only on a branch "
                        "(refs/heads/NAME)",
                        marks_ref);
            goto cleanup;
        }
    } else {
        if (!head_target) {
            rc = KG_ERR(KG_EREFUSED,
                        "HEAD is detached in %s: marks are committed on a branch; "
                        "check out a branch or name one with --marks-branch BRANCH",
                        g->workdir ? g->workdir : g->gitdir);
            goto cleanup;
        }
        if (!(name = strdup(head_target))) {
            rc = KG_ERR(KG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    *is_head = g->workdir && head_target && strcmp(head_target, name) == 0;
    *refname = name;
    name = NULL;
cleanup:
    free(name);
    git_reference_free(head);
    return rc;
}

int kg_git_tip(kg_git *g, const char *refname, git_oid *tip, bool *exists)
{
    int rc = 0;
    memset(tip, 0, sizeof *tip);
    int e = git_reference_name_to_id(tip, g->repo, refname);
    *exists = (e == 0);
    if (e == GIT_ENOTFOUND) {
        git_error_clear();
        return 0;
    }
    KG_GIT_CHECK_AS("git_reference_name_to_id", e);
cleanup:
    return rc;
}

int kg_git_head_commit(kg_git *g, git_oid *out, bool *exists)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    int e = git_reference_name_to_id(out, g->repo, "HEAD");
    *exists = (e == 0);
    if (e == GIT_ENOTFOUND || e == GIT_EUNBORNBRANCH) {
        git_error_clear();
        return 0;
    }
    KG_GIT_CHECK_AS("git_reference_name_to_id", e);
cleanup:
    return rc;
}

int kg_git_worktree_changed(kg_git *g, bool *changed)
{
    int rc = 0;
    git_status_list *st = NULL;
    git_status_options o = GIT_STATUS_OPTIONS_INIT;
    o.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    o.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES; /* and no untracked files */
    *changed = false;
    KG_GIT_CHECK(git_status_list_new(&st, g->repo, &o));
    *changed = git_status_list_entrycount(st) > 0;
cleanup:
    git_status_list_free(st);
    return rc;
}

int kg_git_rev_commit(kg_git *g, const char *rev, git_oid *out)
{
    int rc = 0;
    git_object *obj = NULL, *commit = NULL;
    int e = git_revparse_single(&obj, g->repo, rev);
    if (e == GIT_ENOTFOUND || e == GIT_EAMBIGUOUS || e == GIT_EINVALIDSPEC) {
        rc = KG_ERR(KG_ENOTFOUND, "revision '%s': not found in the repository", rev);
        goto cleanup;
    }
    KG_GIT_CHECK_AS("git_revparse_single", e);
    if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
        rc = KG_ERR(KG_EINVAL, "revision '%s' does not name a commit", rev);
        goto cleanup;
    }
    git_oid_cpy(out, git_object_id(commit));
cleanup:
    git_object_free(commit);
    git_object_free(obj);
    return rc;
}

int kg_git_file_blob_id(kg_git *g, const git_oid *commit, const char *relpath, git_oid *blob,
                        bool *exists)
{
    int rc = 0, e;
    git_commit *c = NULL;
    git_tree *t = NULL;
    git_tree_entry *ent = NULL;
    *exists = false;
    KG_GIT_CHECK(git_commit_lookup(&c, g->repo, commit));
    KG_GIT_CHECK(git_commit_tree(&t, c));
    e = git_tree_entry_bypath(&ent, t, relpath);
    if (e == GIT_ENOTFOUND) {
        git_error_clear();
        goto cleanup;
    }
    KG_GIT_CHECK_AS("git_tree_entry_bypath", e);
    if (git_tree_entry_type(ent) != GIT_OBJECT_BLOB) {
        rc = KG_ERR(KG_EPARSE, "%s: not a file in commit %.12s", relpath, git_oid_tostr_s(commit));
        goto cleanup;
    }
    git_oid_cpy(blob, git_tree_entry_id(ent));
    *exists = true;
cleanup:
    git_tree_entry_free(ent);
    git_tree_free(t);
    git_commit_free(c);
    return rc;
}

int kg_git_read_file(kg_git *g, const git_oid *commit, const char *relpath, char **data,
                     size_t *len)
{
    int rc = 0;
    git_blob *b = NULL;
    git_oid id;
    bool exists;
    *data = NULL;
    KG_TRY(kg_git_file_blob_id(g, commit, relpath, &id, &exists));
    if (!exists) {
        rc = KG_ERR(KG_ENOTFOUND, "%s: not in commit %.12s", relpath, git_oid_tostr_s(commit));
        goto cleanup;
    }
    KG_GIT_CHECK(git_blob_lookup(&b, g->repo, &id));
    size_t n = (size_t)git_blob_rawsize(b);
    char *d = malloc(n + 1);
    if (!d) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading %s", relpath);
        goto cleanup;
    }
    memcpy(d, git_blob_rawcontent(b), n);
    d[n] = '\0';
    *data = d;
    if (len)
        *len = n;
cleanup:
    git_blob_free(b);
    return rc;
}

int kg_git_check_clean(kg_git *g, const char *relpath)
{
    int rc = 0;
    unsigned int flags = 0;
    int e = git_status_file(&flags, g->repo, relpath);
    if (e == GIT_ENOTFOUND) { /* neither in HEAD, the index nor the work tree */
        git_error_clear();
        return 0;
    }
    KG_GIT_CHECK_AS("git_status_file", e);
    flags &= ~(unsigned)GIT_STATUS_IGNORED;
    if (flags != GIT_STATUS_CURRENT)
        rc = KG_ERR(KG_EREFUSED,
                    "%s has uncommitted changes (%s%s%s%s): commit or discard them first; marks "
                    "are only ever written on top of a committed marks file",
                    relpath, (flags & GIT_STATUS_WT_NEW) ? "untracked " : "",
                    (flags & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_DELETED)) ? "modified " : "",
                    (flags &
                     (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED))
                        ? "staged "
                        : "",
                    "in the work tree or index");
cleanup:
    return rc;
}

void kg_git_identity_resolve(kg_git_identity *id, const char *name, const char *email)
{
    const char *en = getenv(KG_GIT_AUTHOR_NAME_ENV), *ee = getenv(KG_GIT_AUTHOR_EMAIL_ENV);
    id->name = (name && *name) ? name : (en && *en) ? en : KG_GIT_DEFAULT_NAME;
    id->email = (email && *email) ? email : (ee && *ee) ? ee : KG_GIT_DEFAULT_EMAIL;
}

/* A name or email that git writes verbatim into the commit header: a newline (or any control
 * character) or an angle bracket would make a commit object git fsck refuses. */
static int id_field(const char *v, const char *flag, const char *env)
{
    size_t n = strlen(v);
    if (n == 0 || n > 256)
        return KG_ERR(KG_EINVAL, "%s (or %s): must be 1..256 characters", flag, env);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' ||
            (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)) /* C1 controls too */
            return KG_ERR(KG_EINVAL,
                          "%s (or %s): contains a control character or an angle "
                          "bracket at byte %zu: refused (it would corrupt the commit)",
                          flag, env, (size_t)(p - (const unsigned char *)v));
    size_t bad = kg_utf8_bad(v, n);
    if (bad != (size_t)-1)
        return KG_ERR(KG_EINVAL,
                      "%s (or %s): not valid UTF-8 at byte %zu: refused (git would "
                      "record bytes no tool can show)",
                      flag, env, bad);
    return 0;
}

int kg_git_identity_check(const kg_git_identity *id)
{
    int rc = id_field(id->name, "--author", KG_GIT_AUTHOR_NAME_ENV);
    return rc < 0 ? rc : id_field(id->email, "--email", KG_GIT_AUTHOR_EMAIL_ENV);
}

int kg_git_commit_file(kg_git *g, const char *refname, const git_oid *expected,
                       const git_oid *parent, const char *relpath, const char *data, size_t len,
                       const char *message, const kg_git_identity *id, git_oid *out)
{
    int rc = 0;
    git_oid blob, tree_id, empty_id;
    git_commit *pc = NULL;
    git_tree *base = NULL, *tree = NULL;
    git_treebuilder *tb = NULL;
    git_signature *sig = NULL;
    git_reference *ref = NULL;
    KG_GIT_CHECK(git_blob_create_from_buffer(&blob, g->repo, data, len));
    if (parent) {
        KG_GIT_CHECK(git_commit_lookup(&pc, g->repo, parent));
        KG_GIT_CHECK(git_commit_tree(&base, pc));
    } else {
        KG_GIT_CHECK(git_treebuilder_new(&tb, g->repo, NULL));
        KG_GIT_CHECK(git_treebuilder_write(&empty_id, tb));
        KG_GIT_CHECK(git_tree_lookup(&base, g->repo, &empty_id));
    }
    /* The new tree is built in the object database only: the work tree is untouched until
     * the ref update has succeeded. */
    git_tree_update up = { GIT_TREE_UPDATE_UPSERT, blob, GIT_FILEMODE_BLOB, relpath };
    KG_GIT_CHECK(git_tree_create_updated(&tree_id, g->repo, base, 1, &up));
    KG_GIT_CHECK(git_tree_lookup(&tree, g->repo, &tree_id));
    KG_TRY(kg_git_identity_check(id));
    KG_GIT_CHECK(git_signature_now(&sig, id->name, id->email));
    if (parent)
        KG_GIT_CHECK(git_commit_create_v(out, g->repo, NULL, sig, sig, NULL, message, tree, 1, pc));
    else
        KG_GIT_CHECK(git_commit_create_v(out, g->repo, NULL, sig, sig, NULL, message, tree, 0));
    /* Compare-and-swap: the ref moves only from the tip the marks were read at. */
    if (expected)
        KG_GIT_CHECK(git_reference_create_matching(&ref, g->repo, refname, out, 1, expected,
                                                   "kgate: marks update"));
    else
        KG_GIT_CHECK(git_reference_create(&ref, g->repo, refname, out, 0, "kgate: marks update"));
cleanup:
    git_reference_free(ref);
    git_signature_free(sig);
    git_tree_free(tree);
    git_tree_free(base);
    git_treebuilder_free(tb);
    git_commit_free(pc);
    return rc;
}

int kg_git_inside_worktree(const kg_git *g, const char *relpath)
{
    char path[PATH_MAX], real[PATH_MAX], wreal[PATH_MAX];
    if (!g->workdir)
        return 0;
    snprintf(path, sizeof path, "%s%s", g->workdir, relpath);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (!realpath(path, real)) /* a directory not there yet is created inside (mkdir) */
        return errno == ENOENT ? 0 : KG_ERR(KG_EINVAL, "%s: %s", path, strerror(errno));
    if (!realpath(g->workdir, wreal))
        return KG_ERR(KG_EIO, "%s: %s", g->workdir, strerror(errno));
    size_t wl = strlen(wreal);
    if (strcmp(real, wreal) != 0 && !(strncmp(real, wreal, wl) == 0 && real[wl] == '/'))
        return KG_ERR(KG_EREFUSED,
                      "%s: the directory of %s resolves to %s, outside the work "
                      "tree %s (a symbolic link?): kgate never writes there",
                      path, relpath, real, wreal);
    return 0;
}

/* .git/kgate-pending: "<blob id> <relpath>\n", the work tree file kgate is about to write and
 * exactly what it writes, so that a failure before the index follows (index.lock) leaves a
 * record of what is kgate's to clean and what is not (kg_git_restore_pending). */
static void gt_pending_path(const kg_git *g, char *buf, size_t n)
{
    snprintf(buf, n, "%skgate-pending", g->gitdir);
}

static int gt_pending_write(const kg_git *g, const char *relpath, const char *data, size_t len)
{
    char path[PATH_MAX], line[PATH_MAX + GIT_OID_HEXSZ + 3], hex[GIT_OID_HEXSZ + 1];
    git_oid id;
    if (strchr(relpath, '\n'))
        return KG_ERR(KG_EINVAL, "%s: a newline in the marks path", relpath);
    if (git_odb_hash(&id, data, len, GIT_OBJECT_BLOB) != 0)
        return kg_git_error(-1, "git_odb_hash", __FILE__, __LINE__);
    git_oid_tostr(hex, sizeof hex, &id);
    gt_pending_path(g, path, sizeof path);
    int n = snprintf(line, sizeof line, "%s %s\n", hex, relpath);
    return kg_file_write_atomic(path, line, (size_t)n);
}

static void gt_pending_clear(const kg_git *g)
{
    char path[PATH_MAX];
    gt_pending_path(g, path, sizeof path);
    unlink(path);
}

/* The index entry of `relpath`: staged from the work tree (add), or removed. */
static int gt_index_stage(kg_git *g, const char *relpath, bool add)
{
    int rc = 0;
    git_index *idx = NULL;
    KG_GIT_CHECK(git_repository_index(&idx, g->repo));
    KG_GIT_CHECK(git_index_read(idx, 1));
    if (add)
        KG_GIT_CHECK(git_index_add_bypath(idx, relpath));
    else
        KG_GIT_CHECK(git_index_remove_bypath(idx, relpath));
    KG_GIT_CHECK(git_index_write(idx));
cleanup:
    git_index_free(idx);
    return rc;
}

int kg_git_sync_worktree(kg_git *g, const char *relpath)
{
    int rc = 0;
    char *data = NULL, *path = NULL;
    size_t len = 0;
    git_oid head;
    bool exists;
    if (!g->workdir)
        return 0;
    KG_TRY(kg_git_inside_worktree(g, relpath));
    KG_TRY(kg_git_head_commit(g, &head, &exists));
    if (!exists)
        goto cleanup;
    KG_TRY(kg_git_read_file(g, &head, relpath, &data, &len));
    size_t n = strlen(g->workdir) + strlen(relpath) + 1;
    if (!(path = malloc(n))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory");
        goto cleanup;
    }
    snprintf(path, n, "%s%s", g->workdir, relpath);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (access(path, F_OK) != 0 && mkdir(path, 0755) != 0 && errno != EEXIST) {
        rc = KG_ERR(KG_EIO, "%s: cannot create the directory: %s", path, strerror(errno));
        goto cleanup;
    }
    *slash = '/';
    KG_TRY(gt_pending_write(g, relpath, data, len));
    KG_TRY(kg_file_write_atomic(path, data, len));
    /* Stage the new content so `git status` is clean: the index entry now matches HEAD. */
    KG_TRY(gt_index_stage(g, relpath, true));
    gt_pending_clear(g);
cleanup:
    free(data);
    free(path);
    return rc;
}

/* Blob id of the work tree file or of its index entry; *has false when absent. */
static int wt_blob(kg_git *g, const char *relpath, git_oid *id, bool *has)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s", g->workdir, relpath);
    *has = access(path, F_OK) == 0;
    if (*has && git_odb_hashfile(id, path, GIT_OBJECT_BLOB) != 0)
        return KG_ERR(KG_EIO, "%s: cannot read: %s", path, strerror(errno));
    return 0;
}

static int idx_blob(kg_git *g, const char *relpath, git_oid *id, bool *has)
{
    int rc = 0;
    git_index *idx = NULL;
    KG_GIT_CHECK(git_repository_index(&idx, g->repo));
    KG_GIT_CHECK(git_index_read(idx, 1));
    const git_index_entry *e = git_index_get_bypath(idx, relpath, 0);
    *has = e != NULL;
    if (e)
        git_oid_cpy(id, &e->id);
cleanup:
    git_index_free(idx);
    return rc;
}

static bool one_of(bool has, const git_oid *id, bool hp, const git_oid *p, bool hc,
                   const git_oid *c)
{
    return (has == hp && (!has || git_oid_equal(id, p))) ||
           (has == hc && (!has || git_oid_equal(id, c)));
}

int kg_git_finish_interrupted(kg_git *g, const char *relpath)
{
    int rc = KG_EREFUSED, e;
    char msg[1536];
    git_oid head, pc, bp, bc, w, i;
    bool have, hp = false, hc = false, hw = false, hi = false;
    git_commit *c = NULL;
    snprintf(msg, sizeof msg, "%s", kg_error_last());
    if (!g->workdir || kg_git_head_commit(g, &head, &have) < 0 || !have)
        goto refuse;
    if (git_commit_lookup(&c, g->repo, &head) != 0 || git_commit_parentcount(c) != 1 ||
        strncmp(git_commit_message(c), "kgate: ", 7) != 0)
        goto refuse;
    git_oid_cpy(&pc, git_commit_parent_id(c, 0));
    if (kg_git_file_blob_id(g, &pc, relpath, &bp, &hp) < 0 ||
        kg_git_file_blob_id(g, &head, relpath, &bc, &hc) < 0 || !hc ||
        wt_blob(g, relpath, &w, &hw) < 0 || idx_blob(g, relpath, &i, &hi) < 0)
        goto refuse;
    /* Each of the work tree and the index is at the parent's content or at HEAD's: the state a
     * kill between the ref move and the end of the work tree sync leaves. Finish it. */
    if (!one_of(hw, &w, hp, &bp, hc, &bc) || !one_of(hi, &i, hp, &bp, hc, &bc))
        goto refuse;
    e = kg_git_sync_worktree(g, relpath);
    if (e < 0) {
        rc = e;
        goto cleanup;
    }
    printf("marks: finished an interrupted update: %s now matches HEAD %.12s (work tree and "
           "index)\n",
           relpath, git_oid_tostr_s(&head));
    rc = kg_git_check_clean(g, relpath);
    goto cleanup;
refuse:
    git_error_clear();
    rc = KG_ERR(KG_EREFUSED, "%s", msg);
cleanup:
    git_commit_free(c);
    return rc;
}

/* Read .git/kgate-pending into *rec and rel (rel: PATH_MAX). 0 with *has false when absent. */
static int gt_pending_read(const kg_git *g, git_oid *rec, char *rel, bool *has)
{
    int rc = 0;
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    gt_pending_path(g, path, sizeof path);
    *has = access(path, F_OK) == 0;
    if (!*has)
        return 0;
    KG_TRY(kg_file_read(&text, &len, path));
    if (len < GIT_OID_HEXSZ + 3 || len - GIT_OID_HEXSZ - 2 >= PATH_MAX ||
        text[GIT_OID_HEXSZ] != ' ' || text[len - 1] != '\n' || memchr(text, '\n', len - 1) ||
        git_oid_fromstrn(rec, text, GIT_OID_HEXSZ) != 0) {
        git_error_clear();
        rc = KG_ERR(KG_EREFUSED,
                    "%s: not a record kgate wrote (want '<blob id> <path>'); "
                    "remove it with `rm -f '%s'`",
                    path, path);
        goto cleanup;
    }
    memcpy(rel, text + GIT_OID_HEXSZ + 1, len - GIT_OID_HEXSZ - 2);
    rel[len - GIT_OID_HEXSZ - 2] = '\0';
cleanup:
    free(text);
    return rc;
}

/* Put `rel` back as HEAD has it: rewrite it from HEAD, or, HEAD lacking it, remove the file and
 * the index entry kgate's write may have left. */
static int gt_pending_undo(kg_git *g, const char *rel, const git_oid *rec, bool in_head,
                           bool in_idx, const git_oid *idx_id)
{
    int rc = 0;
    char path[PATH_MAX];
    if (in_head)
        return kg_git_sync_worktree(g, rel);
    snprintf(path, sizeof path, "%s%s", g->workdir, rel);
    if (unlink(path) != 0 && errno != ENOENT) {
        rc = KG_ERR(KG_EIO, "%s: cannot remove: %s", path, strerror(errno));
        goto cleanup;
    }
    if (in_idx && git_oid_equal(idx_id, rec))
        KG_TRY(gt_index_stage(g, rel, false));
    gt_pending_clear(g);
cleanup:
    return rc;
}

int kg_git_restore_pending(kg_git *g, kg_git_pending *state, char *rel, size_t n)
{
    int rc = 0;
    char path[PATH_MAX];
    git_oid rec, w, i, h, head;
    bool has, hw, hi, hh = false, have_head;
    *state = KG_GIT_PENDING_NONE;
    if (!g->workdir)
        return 0;
    KG_TRY(gt_pending_read(g, &rec, path, &has));
    if (!has)
        return 0;
    snprintf(rel, n, "%s", path);
    KG_TRY(kg_git_inside_worktree(g, path));
    if (kg_git_check_clean(g, path) == 0) { /* nothing of kgate's left: the record is stale */
        gt_pending_clear(g);
        *state = KG_GIT_PENDING_STALE;
        goto cleanup;
    }
    KG_TRY(wt_blob(g, path, &w, &hw));
    KG_TRY(idx_blob(g, path, &i, &hi));
    KG_TRY(kg_git_head_commit(g, &head, &have_head));
    if (have_head)
        KG_TRY(kg_git_file_blob_id(g, &head, path, &h, &hh));
    /* Only exactly kgate's bytes, over an index entry that is HEAD's or kgate's: anything else
     * is someone's edit, and stays. */
    if (!hw || !git_oid_equal(&w, &rec) ||
        (hi && !git_oid_equal(&i, &rec) && !(hh && git_oid_equal(&i, &h)))) {
        *state = KG_GIT_PENDING_EDITED;
        goto cleanup;
    }
    KG_TRY(gt_pending_undo(g, path, &rec, hh, hi, &i));
    *state = KG_GIT_PENDING_RESTORED;
    printf("kgate: restored %s left by an interrupted advance\n", path);
cleanup:
    return rc;
}

int kg_git_lock(kg_git *g, int *fd)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%skgate-marks.lock", g->gitdir);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0)
        return KG_ERR(KG_EIO, "%s: cannot open the lock file: %s", path, strerror(errno));
    while (flock(*fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        close(*fd);
        *fd = -1;
        return KG_ERR(KG_EIO, "%s: cannot lock: %s", path, strerror(e));
    }
    return 0;
}

void kg_git_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

/* ---- remotes ----------------------------------------------------------------------------- */

typedef struct {
    int cred_calls;
    char rejected[512]; /* first rejection status from the remote */
} remote_state;

/* The user name sent with KGATE_GIT_TOKEN: KGATE_GIT_USER, else "oauth2" on GitLab CI
 * (GITLAB_CI set: GitLab takes it for OAuth, personal, project and group access tokens), else
 * "x-access-token" (GitHub: GITHUB_TOKEN and app installation tokens need it, personal tokens
 * take any name). The user of a URL is not used: its credentials are the ones being replaced. */
static const char *token_user(void)
{
    const char *user = getenv(KG_GIT_USER_ENV), *gl = getenv("GITLAB_CI");
    if (user && *user)
        return user;
    return gl && *gl ? KG_GIT_USER_GITLAB : KG_GIT_USER_DEFAULT;
}

/* Credentials from the environment: a token for https (user: token_user), the ssh agent for
 * ssh. Never printed. One attempt: a rejected token fails instead of looping. */
static int cred_cb(git_credential **out, const char *url, const char *user_from_url,
                   unsigned int allowed, void *payload)
{
    remote_state *st = payload;
    const char *tok = getenv(KG_GIT_TOKEN_ENV);
    KG_UNUSED(url);
    if (st->cred_calls++ > 0) {
        git_error_set_str(GIT_ERROR_NET, "authentication failed (credentials from " KG_GIT_TOKEN_ENV
                                         " / ssh agent were rejected)");
        return GIT_EAUTH;
    }
    if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && tok && *tok)
        return git_credential_userpass_plaintext_new(out, token_user(), tok);
    if (allowed & GIT_CREDENTIAL_SSH_KEY)
        return git_credential_ssh_key_from_agent(out, user_from_url ? user_from_url : "git");
    git_error_set_str(GIT_ERROR_NET, "the remote needs credentials: set " KG_GIT_TOKEN_ENV);
    return GIT_EAUTH;
}

int kg_git_url_strip_userinfo(char *buf, size_t n, const char *url)
{
    const char *sep = strstr(url, "://");
    if (!sep || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return 0;
    const char *host = sep + 3, *slash = strchr(host, '/');
    const char *at = NULL;
    for (const char *q = host; *q && (!slash || q < slash); q++)
        if (*q == '@')
            at = q; /* the last '@' of the authority ends the userinfo */
    if (!at)
        return 0;
    snprintf(buf, n, "%.*s%s", (int)(host - url), url, at + 1);
    return 1;
}

/* KGATE_GIT_TOKEN takes precedence over credentials embedded in the remote's URL (a GitLab
 * runner's origin is https://gitlab-ci-token:$CI_JOB_TOKEN@host/...; libgit2 would send those
 * first and never ask for the token): talk to the URL without its userinfo, so the server's
 * 401 makes libgit2 ask cred_cb, which answers with the token. Said once per process. */
static int use_token_url(git_remote *r)
{
    static int said;
    int rc = 0;
    const char *tok = getenv(KG_GIT_TOKEN_ENV);
    char buf[4096], shown[4096];
    if (!tok || !*tok)
        return 0;
    /* Shown before the URL is replaced: libgit2 frees the old string. */
    const char *url = git_remote_url(r);
    if (url && kg_git_url_strip_userinfo(buf, sizeof buf, url)) {
        if (!said++)
            printf("marks: %s is set: using it instead of the credentials in the URL %s\n",
                   KG_GIT_TOKEN_ENV, kg_git_remote_shown(shown, sizeof shown, url));
        KG_GIT_CHECK(git_remote_set_instance_url(r, buf));
    }
    const char *push = git_remote_pushurl(r);
    if (push && kg_git_url_strip_userinfo(buf, sizeof buf, push)) {
        if (!said++)
            printf("marks: %s is set: using it instead of the credentials in the URL %s\n",
                   KG_GIT_TOKEN_ENV, kg_git_remote_shown(shown, sizeof shown, push));
        KG_GIT_CHECK(git_remote_set_instance_pushurl(r, buf));
    }
cleanup:
    return rc;
}

static int push_ref_cb(const char *refname, const char *status, void *data)
{
    remote_state *st = data;
    if (status && !st->rejected[0])
        snprintf(st->rejected, sizeof st->rejected, "%s: %s", refname, status);
    return 0;
}

static int open_remote(git_remote **r, kg_git *g, const char *remote)
{
    int rc = 0;
    int e = git_remote_lookup(r, g->repo, remote);
    if (e == GIT_ENOTFOUND || e == GIT_EINVALIDSPEC) {
        git_error_clear();
        /* Not a configured remote: a URL or a path (libgit2's local transport). */
        KG_GIT_CHECK(git_remote_create_anonymous(r, g->repo, remote));
    } else {
        KG_GIT_CHECK_AS("git_remote_lookup", e);
    }
    KG_TRY(use_token_url(*r));
cleanup:
    return rc;
}

/* libgit2's local transport lists every ref of the remote and fails when one vanishes between
 * the listing and its lookup: a racing pusher deleting its private refs/kgate/push/ ref (seen
 * in test_marks_race under load). That is transient: the caller retries a few times, briefly. */
static bool gt_ref_race(int e, int attempt)
{
    const git_error *ge = git_error_last();
    if (e == 0 || attempt >= 7 || !ge || !ge->message || !strstr(ge->message, "refs/kgate/push/") ||
        !strstr(ge->message, "not found"))
        return false;
    git_error_clear();
    usleep(10000u * (unsigned)(attempt + 1));
    return true;
}

static int gt_fetch_retry(git_remote *r, const git_strarray *sa, const git_fetch_options *fo)
{
    int e, attempt = 0;
    do
        e = git_remote_fetch(r, sa, fo, "kgate: fetch marks");
    while (gt_ref_race(e, attempt++));
    return e;
}

int kg_git_fetch(kg_git *g, const char *remote, const char *refname, git_oid *tip, bool *exists)
{
    int rc = 0;
    git_remote *r = NULL;
    remote_state st = { 0 };
    git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
    const git_remote_head **heads = NULL;
    size_t nh = 0;
    char spec[1024];
    *exists = false;
    memset(tip, 0, sizeof *tip);
    KG_TRY(open_remote(&r, g, remote));
    const char *rname = git_remote_name(r);
    if (rname && strncmp(refname, "refs/heads/", 11) == 0)
        snprintf(spec, sizeof spec, "+%s:refs/remotes/%s/%s", refname, rname, refname + 11);
    else
        snprintf(spec, sizeof spec, "%s", refname);
    char *specs[1] = { spec };
    git_strarray sa = { specs, 1 };
    fo.callbacks.credentials = cred_cb;
    fo.callbacks.payload = &st;
    KG_GIT_CHECK_AS("git_remote_fetch", gt_fetch_retry(r, &sa, &fo));
    /* The advertised refs stay readable after the fetch disconnects. */
    KG_GIT_CHECK(git_remote_ls(&heads, &nh, r));
    for (size_t i = 0; i < nh; i++)
        if (strcmp(heads[i]->name, refname) == 0) {
            git_oid_cpy(tip, &heads[i]->oid);
            *exists = true;
        }
cleanup:
    git_remote_free(r);
    return rc;
}

const char *kg_git_remote_shown(char *buf, size_t n, const char *remote)
{
    const char *sep = strstr(remote, "://");
    const char *host = sep ? sep + 3 : remote;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (sep && at && (!slash || at < slash))
        snprintf(buf, n, "%.*s***%s", (int)(host - remote), remote, at);
    else
        snprintf(buf, n, "%s", remote);
    return buf;
}

/* The remote's repository when it is on this machine (a path or file:// URL), else NULL. */
static git_repository *local_remote_repo(git_remote *r)
{
    const char *url = git_remote_url(r);
    git_repository *rr = NULL;
    if (!url)
        return NULL;
    if (strncmp(url, "file://", 7) == 0)
        url += 7;
    else if (strstr(url, "://") ||
             (strchr(url, ':') && (!strchr(url, '/') || strchr(url, ':') < strchr(url, '/'))))
        return NULL; /* another transport, or scp-like host:path */
    if (git_repository_open_ext(&rr, url, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
        git_error_clear();
        return NULL;
    }
    return rr;
}

static int push_spec(git_remote *r, const char *src, const char *dst, remote_state *st)
{
    int rc = 0;
    git_push_options po = GIT_PUSH_OPTIONS_INIT;
    char spec[1200];
    snprintf(spec, sizeof spec, "%s:%s", src, dst); /* no '+': never forced */
    char *specs[1] = { spec };
    git_strarray sa = { specs, 1 };
    po.callbacks.credentials = cred_cb;
    po.callbacks.push_update_reference = push_ref_cb;
    po.callbacks.payload = st;
    int e, attempt = 0;
    do
        e = git_remote_push(r, &sa, &po);
    while (e != GIT_ENONFASTFORWARD && gt_ref_race(e, attempt++));
    if (e == GIT_ENONFASTFORWARD) /* libgit2 checks against the advertised tip first */
        return KG_ECONFLICT;
    KG_GIT_CHECK_AS("git_remote_push", e);
cleanup:
    return rc;
}

/* libgit2's local transport moves the remote ref without checking its old value, so two
 * racing pushers can overwrite each other. On a path remote kgate pushes the objects to a
 * private ref and then moves the branch itself with compare-and-swap from the tip it checked
 * our commit fast-forwards. */
static int push_local_cas(git_remote *r, git_repository *rr, kg_git *g, const char *refname,
                          remote_state *st)
{
    int rc = 0, e;
    char tmp[256];
    git_oid ours, theirs;
    git_reference *ref = NULL, *tref = NULL;
    KG_GIT_CHECK(git_reference_name_to_id(&ours, g->repo, refname));
    snprintf(tmp, sizeof tmp, "refs/kgate/push/%ld-%x", (long)getpid(), (unsigned)rand());
    KG_TRY(push_spec(r, refname, tmp, st));
    e = git_reference_name_to_id(&theirs, rr, refname);
    if (e == 0 && !git_oid_equal(&theirs, &ours)) {
        int d = git_graph_descendant_of(rr, &ours, &theirs);
        KG_GIT_CHECK_AS("git_graph_descendant_of", d);
        if (d == 0) {
            rc = KG_ECONFLICT; /* not a fast forward any more: the remote moved */
            goto cleanup;
        }
    } else if (e != 0 && e != GIT_ENOTFOUND) {
        KG_GIT_CHECK_AS("git_reference_name_to_id", e);
    }
    git_error_clear();
    e = e == 0 ? git_reference_create_matching(&ref, rr, refname, &ours, 1, &theirs,
                                               "kgate: push marks (compare-and-swap)")
               : git_reference_create(&ref, rr, refname, &ours, 0, "kgate: push marks");
    if (e == GIT_EMODIFIED || e == GIT_ELOCKED || e == GIT_EEXISTS) {
        git_error_clear();
        rc = KG_ECONFLICT;
        goto cleanup;
    }
    KG_GIT_CHECK_AS("git_reference_create", e);
cleanup:
    if (git_reference_lookup(&tref, rr, tmp) == 0)
        git_reference_delete(tref);
    git_error_clear();
    git_reference_free(tref);
    git_reference_free(ref);
    return rc;
}

/* After any push: the remote ref holds our commit (or a descendant of it). A server or
 * transport that accepted the update and lost it to a racing pusher is a lost race. */
static int push_verify(kg_git *g, const char *remote, const char *refname, const char *shown)
{
    int rc = 0;
    git_oid ours, tip;
    bool exists = false;
    KG_GIT_CHECK(git_reference_name_to_id(&ours, g->repo, refname));
    KG_TRY(kg_git_fetch(g, remote, refname, &tip, &exists));
    if (exists && (git_oid_equal(&tip, &ours) || kg_git_is_descendant(g, &tip, &ours) == 1))
        goto cleanup;
    git_error_clear();
    rc = KG_ERR(KG_ECONFLICT,
                "push of %s to %s: the remote ref does not hold the pushed commit "
                "%.12s afterwards (a racing push won)",
                refname, shown, git_oid_tostr_s(&ours));
cleanup:
    return rc;
}

int kg_git_push(kg_git *g, const char *remote, const char *refname)
{
    int rc = 0;
    git_remote *r = NULL;
    git_repository *rr = NULL;
    remote_state st = { 0 };
    char shown[1024];
    kg_git_remote_shown(shown, sizeof shown, remote);
    KG_TRY(open_remote(&r, g, remote));
    rr = local_remote_repo(r);
    rc = rr ? push_local_cas(r, rr, g, refname, &st) : push_spec(r, refname, refname, &st);
    if (rc == KG_ECONFLICT) {
        rc = KG_ERR(KG_ECONFLICT,
                    "push of %s to %s rejected: the remote moved (not a fast "
                    "forward)",
                    refname, shown);
        goto cleanup;
    }
    KG_TRY(rc);
    if (st.rejected[0]) {
        kg_redact_all(st.rejected, getenv(KG_GIT_TOKEN_ENV));
        rc = KG_ERR(KG_ECONFLICT, "push to %s rejected by the remote: %s", shown, st.rejected);
        goto cleanup;
    }
    KG_TRY(push_verify(g, remote, refname, shown));
cleanup:
    git_repository_free(rr);
    git_remote_free(r);
    return rc;
}

int kg_git_is_descendant(kg_git *g, const git_oid *descendant, const git_oid *ancestor)
{
    int rc = 0;
    if (git_oid_equal(descendant, ancestor))
        return 1;
    int e = git_graph_descendant_of(g->repo, descendant, ancestor);
    KG_GIT_CHECK_AS("git_graph_descendant_of", e);
    return e;
cleanup:
    return rc;
}

int kg_git_ahead(kg_git *g, const git_oid *tip, const git_oid *base, const char *prefix, size_t *n,
                 bool *all_prefixed)
{
    int rc = 0;
    git_revwalk *w = NULL;
    git_commit *c = NULL;
    git_oid id;
    *n = 0;
    *all_prefixed = true;
    KG_GIT_CHECK(git_revwalk_new(&w, g->repo));
    KG_GIT_CHECK(git_revwalk_push(w, tip));
    if (base)
        KG_GIT_CHECK(git_revwalk_hide(w, base));
    for (;;) {
        int e = git_revwalk_next(&id, w);
        if (e == GIT_ITEROVER)
            break;
        KG_GIT_CHECK_AS("git_revwalk_next", e);
        KG_GIT_CHECK(git_commit_lookup(&c, g->repo, &id));
        if (strncmp(git_commit_message(c), prefix, strlen(prefix)) != 0)
            *all_prefixed = false;
        git_commit_free(c);
        c = NULL;
        (*n)++;
    }
cleanup:
    git_commit_free(c);
    git_revwalk_free(w);
    return rc;
}

int kg_git_file_history(kg_git *g, const git_oid *start, const char *relpath,
                        kg_git_file_version_fn fn, void *ud)
{
    int rc = 0;
    git_revwalk *w = NULL;
    git_commit *c = NULL;
    char *data = NULL;
    git_oid id, prev_blob;
    bool have_prev = false;
    KG_GIT_CHECK(git_revwalk_new(&w, g->repo));
    KG_GIT_CHECK(git_revwalk_sorting(w, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE));
    KG_GIT_CHECK(git_revwalk_push(w, start));
    KG_GIT_CHECK(git_revwalk_simplify_first_parent(w));
    for (;;) {
        int e = git_revwalk_next(&id, w);
        if (e == GIT_ITEROVER)
            break;
        KG_GIT_CHECK_AS("git_revwalk_next", e);
        git_oid blob;
        bool exists;
        KG_TRY(kg_git_file_blob_id(g, &id, relpath, &blob, &exists));
        if (!exists) {
            have_prev = false;
            continue;
        }
        if (have_prev && git_oid_equal(&blob, &prev_blob))
            continue;
        prev_blob = blob;
        have_prev = true;
        size_t len = 0;
        KG_TRY(kg_git_read_file(g, &id, relpath, &data, &len));
        KG_GIT_CHECK(git_commit_lookup(&c, g->repo, &id));
        KG_TRY(fn(&id, git_commit_author(c), git_commit_summary(c), data, len, ud));
        git_commit_free(c);
        c = NULL;
        free(data);
        data = NULL;
    }
cleanup:
    free(data);
    git_commit_free(c);
    git_revwalk_free(w);
    return rc;
}
