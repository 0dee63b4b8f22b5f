/* Files: whole reads, and atomic writes (temp file beside the target, fsync, rename) so a
 * crash or a failing run never leaves a half-written report or marks file. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mbedtls/sha256.h>
#include "core/kg_core.h"

static int temp_path_for(char *tmp, size_t n, const char *path)
{
    int w = snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    if (w < 0 || (size_t)w >= n)
        return KG_ERR(KG_EINVAL, "%s: path too long", path);
    return 0;
}

/* A temp file of an older, interrupted write (killed between mkstemp and rename) is removed:
 * only names of our own pattern (`NAME.tmp.` + mkstemp's 6 characters), regular files, older
 * than FIO_STALE_S so a concurrent writer's file is left alone. Best effort: one line said. */
#define FIO_STALE_S 10

static bool fio_is_ours(const char *name, const char *base)
{
    size_t b = strlen(base);
    if (strncmp(name, base, b) != 0 || strncmp(name + b, ".tmp.", 5) != 0 ||
        strlen(name + b + 5) != 6)
        return false;
    for (const char *p = name + b + 5; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static void fio_clean_stale(const char *path)
{
    char dcopy[4096], bcopy[4096], full[8192];
    size_t removed = 0;
    snprintf(dcopy, sizeof dcopy, "%s", path);
    snprintf(bcopy, sizeof bcopy, "%s", path);
    const char *dir = dirname(dcopy), *base = basename(bcopy);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (!fio_is_ours(e->d_name, base))
            continue;
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) &&
            time(NULL) - st.st_mtime > FIO_STALE_S && unlink(full) == 0)
            removed++;
    }
    closedir(d);
    if (removed)
        fprintf(stderr,
                "kgate: removed %zu leftover temp file(s) of %s (an interrupted "
                "write, older than %d s)\n",
                removed, path, FIO_STALE_S);
}

/* Standard output kept for "-" data once the console moved to stderr (-1: not moved). */
static int fio_data_fd = -1;

int kg_stdout_for_data(void)
{
    if (fio_data_fd >= 0)
        return 0;
    fflush(stdout);
    int fd = dup(STDOUT_FILENO);
    if (fd < 0)
        return KG_ERR(KG_EIO, "cannot keep standard output for the report: %s", strerror(errno));
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        int e = errno;
        close(fd);
        return KG_ERR(KG_EIO, "cannot move the console to standard error: %s", strerror(e));
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC); /* no child writes into the data */
    fio_data_fd = fd;
    return 0;
}

/* "-" is standard output wherever kgate takes an output path (one rule, here). */
static int fio_write_stdout(const void *data, size_t len)
{
    if (fio_data_fd >= 0) {
        for (const char *p = data; len;) {
            ssize_t w = write(fio_data_fd, p, len);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return KG_ERR(KG_EIO, "cannot write to standard output: %s", strerror(errno));
            p += w;
            len -= (size_t)w;
        }
        return 0;
    }
    if (len && fwrite(data, 1, len, stdout) != len)
        return KG_ERR(KG_EIO, "cannot write to standard output: %s", strerror(errno));
    if (fflush(stdout) != 0)
        return KG_ERR(KG_EIO, "cannot write to standard output: %s", strerror(errno));
    return 0;
}

int kg_file_write_atomic(const char *path, const void *data, size_t len)
{
    if (strcmp(path, "-") == 0)
        return fio_write_stdout(data, len);
    return kg_file_write_atomic_parts(path, &data, &len, 1);
}

int kg_file_write_atomic_parts(const char *path, const void *const *parts, const size_t *lens,
                               int n)
{
    int rc = 0, fd = -1;
    char tmp[4096];
    tmp[0] = '\0';
    KG_TRY(temp_path_for(tmp, sizeof tmp, path));
    fio_clean_stale(path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = KG_ERR(KG_EIO, "%s: cannot create a file there: %s", path, strerror(errno));
        tmp[0] = '\0';
        goto cleanup;
    }
    for (int k = 0; k < n; k++) {
        const char *p = parts[k];
        size_t left = lens[k];
        while (left) {
            ssize_t w = write(fd, p, left);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                rc = KG_ERR(KG_EIO, "%s: write failed: %s", path, strerror(errno));
                goto cleanup;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
        rc = KG_ERR(KG_EIO, "%s: fsync failed: %s", path, strerror(errno));
        goto cleanup;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = KG_ERR(KG_EIO, "%s: close failed: %s", path, strerror(errno));
        goto cleanup;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = KG_ERR(KG_EIO, "%s: rename failed: %s", path, strerror(errno));
        goto cleanup;
    }
    tmp[0] = '\0';
cleanup:
    if (fd >= 0)
        close(fd);
    if (tmp[0])
        unlink(tmp);
    return rc;
}

int kg_path_check_writable(const char *path)
{
    int rc = 0;
    char tmp[4096];
    struct stat st;
    if (strcmp(path, "-") == 0)
        return 0; /* standard output (kg_file_write_atomic) */
    KG_TRY(temp_path_for(tmp, sizeof tmp, path));
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return KG_ERR(KG_EINVAL, "%s: is a directory, not a file", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return KG_ERR(KG_EINVAL, "%s: cannot write there: %s", path, strerror(errno));
    close(fd);
    unlink(tmp);
cleanup:
    return rc;
}

/* $KGATE_CACHE_DIR, else $XDG_CACHE_HOME/kgate, else $HOME/.cache/kgate (not created here). */
int kg_cache_dir(char *buf, size_t n)
{
    const char *d = kg_env("KGATE_CACHE_DIR"), *x = kg_env("XDG_CACHE_HOME"), *h = kg_env("HOME");
    int w;
    if (d)
        w = snprintf(buf, n, "%s", d);
    else if (x)
        w = snprintf(buf, n, "%s/kgate", x);
    else if (h)
        w = snprintf(buf, n, "%s/.cache/kgate", h);
    else
        return KG_ERR(KG_ENOTFOUND, "no cache directory (set KGATE_CACHE_DIR)");
    if (w < 0 || (size_t)w >= n)
        return KG_ERR(KG_EINVAL, "cache directory path too long (KGATE_CACHE_DIR)");
    return 0;
}

/* The SHA-256 of a file's bytes, as 64 hex digits. */
int kg_file_sha256(char hex[65], const char *path)
{
    int rc = 0;
    unsigned char buf[1 << 16], sum[32];
    mbedtls_sha256_context c;
    FILE *f = fopen(path, "rb");
    if (!f)
        return KG_ERR(KG_EIO, "cannot read %s: %s", path, strerror(errno));
    mbedtls_sha256_init(&c);
    if (mbedtls_sha256_starts_ret(&c, 0) != 0) {
        rc = KG_ERR(KG_EINTERNAL, "sha256 failed");
        goto cleanup;
    }
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;)
        if (mbedtls_sha256_update_ret(&c, buf, n) != 0) {
            rc = KG_ERR(KG_EINTERNAL, "sha256 failed");
            goto cleanup;
        }
    if (ferror(f)) {
        rc = KG_ERR(KG_EIO, "cannot read %s", path);
        goto cleanup;
    }
    if (mbedtls_sha256_finish_ret(&c, sum) != 0) {
        rc = KG_ERR(KG_EINTERNAL, "sha256 failed");
        goto cleanup;
    }
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sum[i]);
cleanup:
    mbedtls_sha256_free(&c);
    fclose(f);
    return rc;
}

/* Each missing directory of the path, private to the user (0700): caches hold their runs. */
int kg_mkdir_p(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return KG_ERR(KG_EIO, "cannot create the directory %s: %s", p, strerror(errno));
            *q = '/';
        }
    if (mkdir(p, 0700) != 0 && errno != EEXIST)
        return KG_ERR(KG_EIO, "cannot create the directory %s: %s", p, strerror(errno));
    return 0;
}
