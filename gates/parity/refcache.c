/* The on-disk cache of large CPU references (refcache.h). One file per entry,
 * ref-<key>.bin: a header (magic, key, size, the compute time, the payload's digest) and the
 * reference's bytes. The digest is a SHA-256 over 16 MiB slices' SHA-256s, computed on the
 * host threads (kg_par_for), so checking a 1 GB entry costs a fraction of recomputing it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <mbedtls/sha256.h>
#include "parity/refcache.h"

#define RC_MAGIC "KGREF01"
#define RC_SLICE ((size_t)16 << 20)

typedef struct {
    char magic[8];
    unsigned char key[32];
    uint64_t bytes;
    double compute_s;
    unsigned char digest[32];
} rc_header;

typedef struct {
    const unsigned char *data;
    size_t bytes;
    unsigned char (*sums)[32];
} rc_digest_job;

static void rc_digest_slice(void *ctx, size_t i0, size_t i1, size_t k)
{
    const rc_digest_job *j = ctx;
    i1 = i1 < j->bytes ? i1 : j->bytes; /* the last slice is short */
    mbedtls_sha256_ret(j->data + i0, i1 - i0, j->sums[k], 0);
}

/* SHA-256 over the slices' SHA-256s, in slice order: the same whatever the thread count. */
static int rc_digest(unsigned char out[32], const void *data, size_t bytes)
{
    size_t parts = bytes ? (bytes + RC_SLICE - 1) / RC_SLICE : 0;
    unsigned char(*sums)[32] = calloc(parts ? parts : 1, 32);
    if (!sums)
        return KG_ERR(KG_ENOMEM, "reference cache: out of memory for a digest");
    rc_digest_job job = { .data = data, .bytes = bytes, .sums = sums };
    /* whole slices: part k covers [k RC_SLICE, (k+1) RC_SLICE) as kg_par_for cuts it */
    kg_par_for(parts * RC_SLICE, parts, rc_digest_slice, &job);
    mbedtls_sha256_ret((const unsigned char *)sums, parts * 32, out, 0);
    free(sums);
    return 0;
}

int kg_refcache_init(kg_refcache *c, const char *dir, const char *case_id, uint64_t seed,
                     const char *build, const kg_case_io *io, kg_dtype ref_dtype, size_t bytes)
{
    mbedtls_sha256_context h;
    char hex[65];
    memset(c, 0, sizeof *c);
    c->bytes = bytes;
    if (bytes < KG_REFCACHE_MIN_BYTES)
        return 0;
    const char *mb = kg_env("KGATE_REFCACHE_MAX_MB");
    long long lim = mb ? strtoll(mb, NULL, 10) : KG_REFCACHE_MAX_MB_DEFAULT;
    c->limit = (size_t)(lim > 0 ? lim : 0) << 20;
    if ((size_t)snprintf(c->dir, sizeof c->dir, "%s", dir) >= sizeof c->dir)
        return KG_ERR(KG_EINVAL, "reference cache: directory path too long: %s", dir);
    uint64_t words[3] = { seed, (uint64_t)ref_dtype, (uint64_t)bytes };
    mbedtls_sha256_init(&h);
    mbedtls_sha256_starts_ret(&h, 0);
    mbedtls_sha256_update_ret(&h, (const unsigned char *)"kgate-ref/1", 12);
    mbedtls_sha256_update_ret(&h, (const unsigned char *)case_id, strlen(case_id) + 1);
    mbedtls_sha256_update_ret(&h, (const unsigned char *)build, strlen(build) + 1);
    mbedtls_sha256_update_ret(&h, (const unsigned char *)words, sizeof words);
    for (int i = 0; i < io->n_outputs; i++) {
        const kg_output *o = &io->outputs[i];
        uint64_t ow[4] = { o->count, (uint64_t)o->dtype, (uint64_t)o->has_ref_dtype,
                           (uint64_t)o->ref_dtype };
        mbedtls_sha256_update_ret(&h, (const unsigned char *)ow, sizeof ow);
    }
    mbedtls_sha256_finish_ret(&h, c->key);
    mbedtls_sha256_free(&h);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", c->key[i]);
    if ((size_t)snprintf(c->path, sizeof c->path, "%s/ref-%s.bin", dir, hex) >= sizeof c->path)
        return KG_ERR(KG_EINVAL, "reference cache: path too long under %s", dir);
    c->on = c->limit >= bytes + sizeof(rc_header);
    return 0;
}

int kg_refcache_open(kg_refcache *c, const char *case_id, uint64_t seed, const kg_case_io *io,
                     kg_dtype ref_dtype, size_t bytes)
{
    static char build[65]; /* once a process: the runner's file does not change under it */
    char dir[PATH_MAX], self[PATH_MAX];
    const char *off = kg_env("KGATE_REFCACHE");
    memset(c, 0, sizeof *c);
    if (bytes < KG_REFCACHE_MIN_BYTES || (off && strcmp(off, "0") == 0) ||
        kg_cache_dir(dir, sizeof dir) < 0)
        return 0;
    if (!build[0] && (kg_self_exe(self, sizeof self) < 0 || kg_file_sha256(build, self) < 0)) {
        fprintf(stderr, "kgate: WARN reference cache off: no build id (%s)\n", kg_error_last());
        build[0] = '\0';
        return 0;
    }
    return kg_refcache_init(c, dir, case_id, seed, build, io, ref_dtype, bytes);
}

/* A corrupt entry: said, removed, never used. */
static void rc_refuse(const kg_refcache *c, const char *why)
{
    fprintf(stderr, "kgate: WARN reference cache: %s: %s; removed, recomputing\n", c->path, why);
    unlink(c->path);
}

int kg_refcache_load(const kg_refcache *c, void *ref, bool *hit)
{
    rc_header hd;
    unsigned char sum[32];
    struct stat st;
    *hit = false;
    if (!c->on)
        return 0;
    FILE *f = fopen(c->path, "rb");
    if (!f)
        return 0; /* a miss */
    bool whole = fstat(fileno(f), &st) == 0 && (uint64_t)st.st_size == sizeof hd + c->bytes &&
                 fread(&hd, sizeof hd, 1, f) == 1 && fread(ref, 1, c->bytes, f) == c->bytes;
    fclose(f);
    if (!whole)
        return rc_refuse(c, "truncated or unreadable"), 0;
    if (memcmp(hd.magic, RC_MAGIC, sizeof hd.magic) != 0 || memcmp(hd.key, c->key, 32) != 0 ||
        hd.bytes != c->bytes)
        return rc_refuse(c, "not this reference's entry (header)"), 0;
    int rc = rc_digest(sum, ref, c->bytes);
    if (rc < 0)
        return rc;
    if (memcmp(sum, hd.digest, 32) != 0)
        return rc_refuse(c, "digest mismatch (corrupt)"), 0;
    *hit = true;
    utimensat(AT_FDCWD, c->path, NULL, 0); /* recently used: evicted last */
    return 0;
}

typedef struct {
    char name[80];
    time_t used;
    size_t size;
} rc_file;

static int rc_by_age(const void *a, const void *b)
{
    const rc_file *x = a, *y = b;
    return x->used < y->used ? -1 : x->used > y->used ? 1 : strcmp(x->name, y->name);
}

/* Remove the least recently used entries (mtime: a hit touches it) while the directory's
 * entries are over c->limit. Only files named ref-*.bin are counted or removed. */
static void rc_evict(const kg_refcache *c)
{
    DIR *d = opendir(c->dir);
    rc_file *fs = NULL;
    size_t n = 0, cap = 0, total = 0;
    char p[PATH_MAX + 96];
    struct stat st;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "ref-", 4) != 0 || l < 8 || l >= sizeof fs->name ||
            strcmp(e->d_name + l - 4, ".bin") != 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", c->dir, e->d_name);
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            rc_file *g = realloc(fs, (cap = cap ? 2 * cap : 16) * sizeof *fs);
            if (!g)
                break;
            fs = g;
        }
        snprintf(fs[n].name, sizeof fs[n].name, "%s", e->d_name);
        fs[n].used = st.st_mtime;
        fs[n].size = (size_t)st.st_size;
        total += fs[n++].size;
    }
    if (d)
        closedir(d);
    qsort(fs, n, sizeof *fs, rc_by_age);
    for (size_t i = 0; i < n && total > c->limit; i++) {
        snprintf(p, sizeof p, "%s/%s", c->dir, fs[i].name);
        if (unlink(p) == 0) {
            total -= fs[i].size;
            fprintf(stderr,
                    "kgate: reference cache: evicted %s (%zu MiB; bound %zu MiB, "
                    "KGATE_REFCACHE_MAX_MB)\n",
                    p, fs[i].size >> 20, c->limit >> 20);
        }
    }
    free(fs);
}

int kg_refcache_store(const kg_refcache *c, const void *ref, double compute_s, bool *stored)
{
    rc_header hd;
    *stored = false;
    if (!c->on || compute_s < KG_REFCACHE_MIN_S ||
        compute_s < (double)c->bytes / KG_REFCACHE_READ_BPS)
        return 0;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.magic, RC_MAGIC, sizeof hd.magic);
    memcpy(hd.key, c->key, 32);
    hd.bytes = c->bytes;
    hd.compute_s = compute_s;
    int rc = rc_digest(hd.digest, ref, c->bytes);
    if (rc < 0)
        return rc;
    const void *parts[2] = { &hd, ref };
    size_t lens[2] = { sizeof hd, c->bytes };
    if (kg_mkdir_p(c->dir) < 0 || kg_file_write_atomic_parts(c->path, parts, lens, 2) < 0) {
        fprintf(stderr, "kgate: WARN reference cache: %s\n", kg_error_last());
        return 0;
    }
    *stored = true;
    rc_evict(c);
    return 0;
}
