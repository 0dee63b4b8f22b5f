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
        fprintf(stderr, "kgate: removed %zu leftover temp file(s) of %s (an interrupted "
                        "write, older than %d s)\n", removed, path, FIO_STALE_S);
}

/* "-" is standard output wherever kgate takes an output path (one rule, here). */
static int fio_write_stdout(const void *data, size_t len)
{
    if (len && fwrite(data, 1, len, stdout) != len)
        return KG_ERR(KG_EIO, "cannot write to standard output: %s", strerror(errno));
    if (fflush(stdout) != 0)
        return KG_ERR(KG_EIO, "cannot write to standard output: %s", strerror(errno));
    return 0;
}

int kg_file_write_atomic(const char *path, const void *data, size_t len)
{
    int rc = 0, fd = -1;
    char tmp[4096];
    tmp[0] = '\0';
    if (strcmp(path, "-") == 0)
        return fio_write_stdout(data, len);
    KG_TRY(temp_path_for(tmp, sizeof tmp, path));
    fio_clean_stale(path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = KG_ERR(KG_EIO, "%s: cannot create a file there: %s", path, strerror(errno));
        tmp[0] = '\0';
        goto cleanup;
    }
    const char *p = data;
    size_t left = len;
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
