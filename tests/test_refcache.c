/* The on-disk reference cache (gates/parity/refcache.c): a hit gives the same reference and so
 * the same parity figures; a corrupt or truncated entry is refused, removed and recomputed; a
 * different seed or build misses; cheap and small references stay out; the bound evicts the
 * least recently used entry. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "parity/parity.h"
#include "parity/refcache.h"
#include "kg_test.h"

enum { N = 8400000 }; /* doubles: just over KG_REFCACHE_MIN_BYTES */

static kg_case_io io_of(size_t count)
{
    kg_case_io io;
    memset(&io, 0, sizeof io);
    io.n_outputs = 1;
    io.outputs[0].count = count;
    io.outputs[0].dtype = KG_DTYPE_F32;
    return io;
}

static kg_refcache entry(const char *dir, uint64_t seed, const char *build)
{
    kg_refcache c;
    kg_case_io io = io_of(N);
    CHECK(kg_refcache_init(&c, dir, "softmax/test/f32", seed, build, &io, KG_DTYPE_F64,
                           (size_t)N * 8) == 0);
    return c;
}

static bool load(const kg_refcache *c, double *buf)
{
    bool hit = true;
    CHECK(kg_refcache_load(c, buf, &hit) == 0);
    return hit;
}

static void store(const kg_refcache *c, const double *ref, double s, bool want)
{
    bool stored = !want;
    CHECK(kg_refcache_store(c, ref, s, &stored) == 0);
    CHECK_MSG(stored == want, "%s: stored %d after %.2f s, expected %d", c->path, stored, s, want);
}

/* Flip one byte of the file at offset `at` from its end (or cut it to `cut` bytes). */
static void damage(const char *path, off_t at, off_t cut)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    if (cut >= 0) {
        CHECK(ftruncate(fd, cut) == 0);
    } else {
        off_t end = lseek(fd, 0, SEEK_END);
        unsigned char b;
        CHECK(pread(fd, &b, 1, end - at) == 1);
        b ^= 0x40;
        CHECK(pwrite(fd, &b, 1, end - at) == 1);
    }
    close(fd);
}

static void age(const char *path, time_t s)
{
    struct timespec t[2] = { { .tv_sec = s }, { .tv_sec = s } };
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

int main(void)
{
    char dir[] = "/tmp/kg_refcache_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    double *ref = malloc((size_t)N * 8), *got = malloc((size_t)N * 8);
    float *out = malloc((size_t)N * 4);
    for (size_t i = 0; i < N; i++) {
        ref[i] = (double)(i % 1000) / 997.0 - 0.5 + 1e-9 * (double)i;
        out[i] = (float)ref[i];
    }
    setenv("KGATE_REFCACHE_MAX_MB", "150", 1);
    kg_refcache c = entry(dir, 1, "build-A");
    CHECK(c.on && strncmp(c.path, dir, strlen(dir)) == 0);
    CHECK(!load(&c, got));       /* nothing stored yet */
    store(&c, ref, 0.05, false); /* cheap to compute: not worth a file */
    CHECK(access(c.path, F_OK) != 0);
    store(&c, ref, 1.5, true);
    CHECK(load(&c, got) && memcmp(got, ref, (size_t)N * 8) == 0);

    /* a hit's parity figures are the computed reference's, bit for bit */
    kg_parity_policy p = KG_PARITY_TOLERANCE_INIT(1e-3, 1e-3, 0.999);
    kg_parity_result a, b;
    CHECK(kg_parity_compare(&a, out, KG_DTYPE_F32, ref, KG_DTYPE_F64, N, &p) == 0);
    CHECK(kg_parity_compare(&b, out, KG_DTYPE_F32, got, KG_DTYPE_F64, N, &p) == 0);
    CHECK(memcmp(&a, &b, sizeof a) == 0 && a.pass);

    /* a different seed or build is another entry: a miss */
    kg_refcache s2 = entry(dir, 2, "build-A"), b2 = entry(dir, 1, "build-B");
    CHECK(strcmp(s2.path, c.path) != 0 && !load(&s2, got));
    CHECK(strcmp(b2.path, c.path) != 0 && !load(&b2, got));

    /* one flipped byte of the payload: refused, removed; recomputed and stored again */
    damage(c.path, 100, -1);
    CHECK(!load(&c, got) && access(c.path, F_OK) != 0);
    store(&c, ref, 1.5, true);
    CHECK(load(&c, got));
    /* a flipped byte of the header (its digest), and a truncated file: refused, removed */
    damage(c.path, (off_t)N * 8 + 1, -1);
    CHECK(!load(&c, got) && access(c.path, F_OK) != 0);
    store(&c, ref, 1.5, true);
    damage(c.path, 0, (off_t)N * 4);
    CHECK(!load(&c, got) && access(c.path, F_OK) != 0);

    /* the bound (150 MiB: two entries of 64 MiB): a third store evicts the oldest */
    store(&c, ref, 1.5, true);
    store(&s2, ref, 1.5, true);
    age(c.path, 1000000000);
    age(s2.path, 1000000100);
    CHECK(load(&c, got)); /* a hit makes it the most recently used */
    kg_refcache s3 = entry(dir, 3, "build-A");
    store(&s3, ref, 1.5, true);
    CHECK(access(s2.path, F_OK) != 0 && access(c.path, F_OK) == 0 && access(s3.path, F_OK) == 0);

    /* off: small references, KGATE_REFCACHE=0, an entry over the bound */
    kg_case_io small = io_of(1000);
    kg_refcache o;
    CHECK(kg_refcache_init(&o, dir, "x", 1, "b", &small, KG_DTYPE_F64, 8000) == 0 && !o.on);
    setenv("KGATE_CACHE_DIR", dir, 1);
    kg_case_io big = io_of(N);
    CHECK(kg_refcache_open(&o, "x", 1, &big, KG_DTYPE_F64, (size_t)N * 8) == 0 && o.on);
    setenv("KGATE_REFCACHE", "0", 1);
    CHECK(kg_refcache_open(&o, "x", 1, &big, KG_DTYPE_F64, (size_t)N * 8) == 0 && !o.on);
    unsetenv("KGATE_REFCACHE");
    setenv("KGATE_REFCACHE_MAX_MB", "10", 1);
    CHECK(kg_refcache_open(&o, "x", 1, &big, KG_DTYPE_F64, (size_t)N * 8) == 0 && !o.on);

    unlink(c.path), unlink(s3.path), rmdir(dir);
    free(ref), free(got), free(out);
    return kg_test_done("test_refcache");
}
