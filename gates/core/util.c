/* Small shared helpers: dtypes, random inputs, bf16 conversion, strict number parsing. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/kg_core.h"

size_t kg_dtype_size(kg_dtype t)
{
    switch (t) {
    case KG_DTYPE_F32: return 4;
    case KG_DTYPE_F64: return 8;
    case KG_DTYPE_BF16: return 2;
    case KG_DTYPE_F16: return 2;
    case KG_DTYPE_I32: return 4;
    case KG_DTYPE_U8: return 1;
    }
    return 0;
}

const char *kg_dtype_name(kg_dtype t)
{
    switch (t) {
    case KG_DTYPE_F32: return "f32";
    case KG_DTYPE_F64: return "f64";
    case KG_DTYPE_BF16: return "bf16";
    case KG_DTYPE_F16: return "f16";
    case KG_DTYPE_I32: return "i32";
    case KG_DTYPE_U8: return "u8";
    }
    return "?";
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void kg_rng_seed(kg_rng *r, uint64_t seed, uint64_t stream_id)
{
    uint64_t x = seed ^ (stream_id * 0xd1b54a32d192ed03ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t kg_rng_next(kg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static float uniform01(kg_rng *r) { return (float)(kg_rng_next(r) >> 40) * (1.0f / 16777216.0f); }

void kg_rng_fill_f32(kg_rng *r, float *dst, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        float v = lo + (hi - lo) * uniform01(r);
        /* Exact zeros hide unwritten or skipped work: nudge them off zero. */
        dst[i] = (v == 0.0f) ? (hi - lo) * 0x1p-12f : v;
    }
}

void kg_rng_fill_bf16(kg_rng *r, uint16_t *dst, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        float v = lo + (hi - lo) * uniform01(r);
        uint16_t h = kg_f32_to_bf16(v);
        if ((h & 0x7fff) == 0)
            h = kg_f32_to_bf16((hi - lo) * 0x1p-8f);
        dst[i] = h;
    }
}

uint16_t kg_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a (quiet) NaN */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float kg_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint64_t kg_seed_fresh(void)
{
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &s, sizeof s) != (ssize_t)sizeof s)
            s = 0;
        close(fd);
    }
    if (s == 0)
        s = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
    return s & 0xffffffffffffULL; /* 48 bits: short enough to paste into --seed */
}

int kg_self_exe(char *buf, size_t n)
{
    ssize_t l = n > 1 ? readlink("/proc/self/exe", buf, n - 1) : -1;
    /* readlink does not terminate, and a result filling the buffer may be truncated. */
    if (l <= 0 || (size_t)l >= n - 1)
        return KG_ERR(KG_EINTERNAL, "cannot locate the running executable (/proc/self/exe)");
    buf[l] = '\0';
    return 0;
}

uint64_t kg_case_seed(uint64_t seed, const char *case_id)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the id, mixed with the run seed */
    for (const char *p = case_id; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    uint64_t x = seed ^ h;
    return splitmix64(&x);
}

int kg_parse_u64(const char *flag, const char *s, uint64_t *out)
{
    /* Decimal digits only: no sign, no white space, no 0x/octal prefix (strtoull would wrap
     * " -1" and read "010" as 8), no leading zero. */
    bool digits = s && *s && !(s[0] == '0' && s[1]);
    for (const char *p = s; digits && *p; p++)
        digits = *p >= '0' && *p <= '9';
    char shown[96];
    if (!digits)
        return KG_ERR(KG_EINVAL, "%s: expected a non-negative integer, got '%s' (decimal digits "
                                 "only, at most %llu: no sign, space, prefix or leading zero)",
                      flag, kg_str_printable(shown, sizeof shown, s ? s : ""),
                      (unsigned long long)UINT64_MAX);
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return KG_ERR(KG_EINVAL, "%s: expected a non-negative integer, got '%s' (at most %llu)",
                      flag, kg_str_printable(shown, sizeof shown, s), (unsigned long long)UINT64_MAX);
    *out = (uint64_t)v;
    return 0;
}

int kg_parse_int(const char *flag, const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || v < lo || v > hi)
        return KG_ERR(KG_EINVAL, "%s: expected an integer in [%d, %d], got '%s'", flag, lo, hi,
                      s ? s : "");
    *out = (int)v;
    return 0;
}

int kg_parse_double(const char *flag, const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end || !isfinite(v))
        return KG_ERR(KG_EINVAL, "%s: expected a number, got '%s'", flag, s ? s : "");
    *out = v;
    return 0;
}

extern char **environ;

int kg_run_logged(int *exit_code, const char *const *argv, const char *log, bool append,
                  const char *who)
{
    int rc = 0, ws = 0;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return KG_ERR(KG_ENOMEM, "%s: posix_spawn_file_actions_init failed", who);
    /* Unchecked, a failed action would run the child with its output on our terminal. */
    int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
    if (posix_spawn_file_actions_addopen(&fa, 1, log, flags, 0644) != 0 ||
        posix_spawn_file_actions_adddup2(&fa, 1, 2) != 0) {
        rc = KG_ERR(KG_ENOMEM, "%s: posix_spawn file actions failed", who);
        goto cleanup;
    }
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    if (e != 0) {
        rc = KG_ERR(KG_EINVAL, "%s: cannot run '%s': %s", who, argv[0], strerror(e));
        goto cleanup;
    }
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR) {
            rc = KG_ERR(KG_EINTERNAL, "%s: waitpid failed: %s", who, strerror(errno));
            goto cleanup;
        }
    }
    *exit_code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
cleanup:
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

const char *kg_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}
