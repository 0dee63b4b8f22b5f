/* Small shared helpers: dtypes, random inputs, bf16 conversion, strict number parsing. */
#define _GNU_SOURCE /* execvpe, pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
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
        return KG_ERR(KG_EINVAL,
                      "%s: expected a non-negative integer, got '%s' (decimal digits "
                      "only, at most %llu: no sign, space, prefix or leading zero)",
                      flag, kg_str_printable(shown, sizeof shown, s ? s : ""),
                      (unsigned long long)UINT64_MAX);
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return KG_ERR(KG_EINVAL, "%s: expected a non-negative integer, got '%s' (at most %llu)",
                      flag, kg_str_printable(shown, sizeof shown, s),
                      (unsigned long long)UINT64_MAX);
    *out = (uint64_t)v;
    return 0;
}

/* [+-]digits, nothing before it: strtol would skip leading white space. */
static bool ut_int_text(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    return *p >= '0' && *p <= '9';
}

int kg_parse_int(const char *flag, const char *s, int lo, int hi, int *out)
{
    char *end = NULL, shown[96];
    errno = 0;
    long v = s && ut_int_text(s) ? strtol(s, &end, 10) : 0;
    if (!s || !ut_int_text(s) || errno || *end || v < lo || v > hi)
        return KG_ERR(KG_EINVAL,
                      "%s: expected an integer in [%d, %d], got '%s' (decimal "
                      "digits, no space or prefix)",
                      flag, lo, hi, kg_str_printable(shown, sizeof shown, s ? s : ""));
    *out = (int)v;
    return 0;
}

/* A decimal number: [+-] digits [. digits] [e [+-] digits], at least one digit before the
 * exponent, nothing else. strtod alone also takes white space, hex floats ("0x1p3"), "inf",
 * "infinity" and "nan". */
static bool ut_decimal_text(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        digits++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits++;
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

int kg_parse_double(const char *flag, const char *s, double *out)
{
    char *end = NULL, shown[96];
    errno = 0;
    bool text = s && ut_decimal_text(s);
    double v = text ? strtod(s, &end) : 0;
    if (!text || errno || *end || !isfinite(v))
        return KG_ERR(KG_EINVAL,
                      "%s: expected a number, got '%s' (a finite decimal number: "
                      "no space, hex, inf or nan)",
                      flag, kg_str_printable(shown, sizeof shown, s ? s : ""));
    *out = v;
    return 0;
}

double kg_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double kg_child_limit_s(double work_s)
{
    double v = 0;
    const char *e = kg_env(KG_CHILD_TIMEOUT_ENV);
    if (e && kg_parse_double(KG_CHILD_TIMEOUT_ENV, e, &v) == 0 && v > 0 && v <= 7 * 86400.0)
        return v;
    static bool warned; /* a bad value never lifts the limit: said once, the default applies */
    if (e && *e && !warned) {
        char shown[64];
        warned = true;
        fprintf(stderr,
                "kgate: %s: expected seconds in (0, 604800], got '%s': the default "
                "child time limit applies\n",
                KG_CHILD_TIMEOUT_ENV, kg_str_printable(shown, sizeof shown, e));
    }
    return work_s > 0 ? work_s : KG_CHILD_DEFAULT_LIMIT_S;
}

/* The child's side of kg_child_spawn, between fork and exec (async-signal-safe calls only): its
 * own process group, a subreaper for what it forks (core/reap.c), stdout and stderr into the
 * log. A failure goes back over `report` as {stage, errno}. */
static void ut_spawn_exec(const char *const *argv, char **envp, const char *log, int flags,
                          int report)
{
    int why[2] = { 0, 0 };
    (void)setpgid(0, 0);
    kg_reap_child_setup();
    int fd = open(log, flags | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
        why[1] = errno;
    } else {
        execvpe(argv[0], (char *const *)argv, envp);
        why[0] = 1;
        why[1] = errno;
    }
    if (write(report, why, sizeof why) < 0)
        _exit(127);
    _exit(127);
}

int kg_child_spawn(pid_t *pid, const char *const *argv, const char *log, bool append,
                   const char *who)
{
    int rc = 0, p[2] = { -1, -1 }, why[2];
    char **envp = NULL;
    /* Least privilege: the child (case, setup and defect code) gets no secret. */
    if (kg_env_scrubbed(&envp) < 0)
        return KG_ERR(KG_ENOMEM, "%s: out of memory", who);
    if (pipe2(p, O_CLOEXEC) < 0) {
        rc = KG_ERR(KG_EIO, "%s: cannot create a pipe: %s", who, strerror(errno));
        goto cleanup;
    }
    kg_reap_init();
    int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
    pid_t c = fork();
    if (c < 0) {
        rc = KG_ERR(KG_EIO, "%s: cannot fork to run '%s': %s", who, argv[0], strerror(errno));
        goto cleanup;
    }
    if (c == 0)
        ut_spawn_exec(argv, envp, log, flags, p[1]);
    (void)setpgid(c, c); /* both sides, so no kill of the group can miss it */
    close(p[1]);
    p[1] = -1;
    ssize_t got;
    while ((got = read(p[0], why, sizeof why)) < 0 && errno == EINTR)
        ;
    if (got == (ssize_t)sizeof why) { /* it never ran: reaped here */
        while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
            ;
        rc = why[0] ? KG_ERR(KG_EINVAL, "%s: cannot run '%s': %s", who, argv[0], strerror(why[1]))
                    : KG_ERR(KG_EIO, "%s: cannot open its log %s: %s", who, log, strerror(why[1]));
        goto cleanup;
    }
    kg_reap_track(c);
    *pid = c;
cleanup:
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    free(envp);
    return rc;
}

/* The child is gone (a zombie, not reaped: its pid and group cannot be reused yet). */
static int ut_exited(pid_t pid, bool *gone)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
        if (errno != EINTR)
            return -errno;
    *gone = si.si_pid == pid;
    return 0;
}

int kg_child_wait(kg_child_status *st, pid_t pid, double started, double limit_s, const char *who)
{
    int ws = 0;
    bool gone = false;
    memset(st, 0, sizeof *st);
    for (;;) {
        int e = ut_exited(pid, &gone);
        if (e < 0)
            return KG_ERR(KG_EINTERNAL, "%s: waitid failed: %s", who, strerror(-e));
        if (gone)
            break;
        if (limit_s > 0 && kg_now_s() - started >= limit_s) {
            st->timed_out = true;
            break;
        }
        if (kg_interrupted()) { /* not waited out: killed now, with what it started */
            st->interrupted = true;
            break;
        }
        kg_progress_tick(); /* a long child run's progress line, on a terminal */
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
    }
    (void)kill(-pid, SIGKILL); /* the group: what it left running, or all of it at the limit */
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR)
            return KG_ERR(KG_EINTERNAL, "%s: waitpid failed: %s", who, strerror(errno));
    kg_reap_untrack(pid);
    (void)kg_reap_orphans(who); /* what left the group (setsid): under it, now ours */
    st->sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    st->code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + st->sig;
    if (st->timed_out)
        snprintf(st->why, sizeof st->why,
                 "timed out after %.0f s (killed with its process "
                 "group; limit: %s)",
                 limit_s, KG_CHILD_TIMEOUT_ENV);
    else if (st->sig)
        snprintf(st->why, sizeof st->why, "killed by signal %d (%s)", st->sig, strsignal(st->sig));
    else
        snprintf(st->why, sizeof st->why, "exited %d", st->code);
    if (st->interrupted)
        return KG_ERR(KG_EINTERNAL,
                      "%s: interrupted by %s: its child run was killed with its "
                      "process group",
                      who, kg_interrupt_name());
    return 0;
}

int kg_run_limited(kg_child_status *st, const char *const *argv, const char *log, bool append,
                   double limit_s, const char *who)
{
    pid_t pid;
    double t0 = kg_now_s();
    int rc = kg_child_spawn(&pid, argv, log, append, who);
    return rc < 0 ? rc : kg_child_wait(st, pid, t0, limit_s, who);
}

int kg_run_logged(int *exit_code, const char *const *argv, const char *log, bool append,
                  const char *who)
{
    kg_child_status st;
    int rc = kg_run_limited(&st, argv, log, append, kg_child_limit_s(0), who);
    if (rc < 0)
        return rc;
    if (st.timed_out)
        return KG_ERR(KG_EINTERNAL, "%s: `%s` %s (log: %s)", who, argv[0], st.why, log);
    *exit_code = st.code;
    return 0;
}

const char *kg_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

size_t kg_utf8_bad(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + len > n)
            return i;
        unsigned cp = len == 1 ? c : c & (0xff >> (len + 1));
        for (size_t k = 1; k < len; k++) {
            if ((u[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        static const unsigned min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += len;
    }
    return (size_t)-1;
}
