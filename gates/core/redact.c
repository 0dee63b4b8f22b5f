/* Secrets and raw input at the message boundary: redaction of a secret and its encodings, and
 * control characters written out. Calls nothing that sets an error (kg_error_set uses it). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/kg_core.h"

const char *kg_report_key(void)
{
    const char *k = getenv(KG_REPORT_KEY_ENV);
    return (k && *k) ? k : NULL;
}

void kg_redact(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (!s || n == 0)
        return;
    char *p;
    while ((p = strstr(s, secret)) != NULL) {
        size_t keep = n < 3 ? n : 3; /* never longer than the secret: shrinks in place */
        memset(p, '*', keep);
        memmove(p + keep, p + n, strlen(p + n) + 1);
    }
}

static void ut_pct(char *dst, const char *src, bool all, bool upper)
{
    static const char *hx[2] = { "0123456789abcdef", "0123456789ABCDEF" };
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        bool plain = !all && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                              (*p >= '0' && *p <= '9') || strchr("-._~", *p));
        if (plain) {
            *dst++ = (char)*p;
        } else {
            *dst++ = '%';
            *dst++ = hx[upper][*p >> 4];
            *dst++ = hx[upper][*p & 15];
        }
    }
    *dst = '\0';
}

static void ut_hex(char *dst, const char *src, bool upper)
{
    static const char *hx[2] = { "0123456789abcdef", "0123456789ABCDEF" };
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        *dst++ = hx[upper][*p >> 4];
        *dst++ = hx[upper][*p & 15];
    }
    *dst = '\0';
}

/* The base64 characters that depend only on the secret when it starts `lead` bytes into a
 * 3-byte group: whatever surrounds it, these appear verbatim in the encoding. */
static void ut_b64_core(char *dst, const char *src, int lead, bool url)
{
    const char *al = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                         : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(src), total = (size_t)lead + n, o = 0;
    for (size_t g = 0; g + 3 <= total; g += 3) {
        unsigned char b[3];
        bool known = true;
        for (int k = 0; k < 3; k++) {
            size_t at = g + (size_t)k;
            known = known && at >= (size_t)lead;
            b[k] = at >= (size_t)lead ? (unsigned char)src[at - (size_t)lead] : 0;
        }
        unsigned v = ((unsigned)b[0] << 16) | ((unsigned)b[1] << 8) | b[2];
        /* the first group's leading characters mix in the unknown prefix */
        int skip = known ? 0 : (lead == 1 ? 2 : 3);
        for (int k = skip; k < 4; k++)
            dst[o++] = al[(v >> (18 - 6 * k)) & 63];
    }
    dst[o] = '\0';
}

void kg_redact_all(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (!s || n < 4 || n > 4096)
        return;
    char *enc = malloc(6 * n + 8);
    if (!enc) {
        kg_redact(s, secret);
        return;
    }
    kg_redact(s, secret);
    for (int m = 0; m < 4; m++) {
        ut_pct(enc, secret, m & 1, m & 2);
        kg_redact(s, enc);
    }
    for (int u = 0; u < 2; u++) {
        ut_hex(enc, secret, u);
        kg_redact(s, enc);
    }
    for (int lead = 0; lead < 3; lead++)
        for (int url = 0; url < 2; url++) {
            ut_b64_core(enc, secret, lead, url);
            if (strlen(enc) >= 4)
                kg_redact(s, enc);
        }
    char *e = enc; /* JSON: every character as \u00XX */
    for (const unsigned char *p = (const unsigned char *)secret; *p; p++)
        e += sprintf(e, "\\u%04x", *p);
    kg_redact(s, enc);
    free(enc);
}

const char *kg_str_printable(char *buf, size_t n, const char *s)
{
    size_t o = 0;
    if (!n)
        return buf;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 5 < n; p++) {
        bool c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
        if (*p < 0x20 || *p == 0x7F || c1) {
            o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c1 ? p[1] : *p);
            p += c1;
        } else {
            buf[o++] = (char)*p;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* The secrets kgate reads (grep getenv: the report key, the marks push token, the status and
 * comment tokens) and the CI platforms' own job credentials, plus any *_TOKEN, *_SECRET,
 * *_PASSWORD: case code, setup code and defect code never needs them. */
static const char *const rd_secret_names[] = {
    KG_REPORT_KEY_ENV,
    "KGATE_GIT_TOKEN",
    "KGATE_STATUS_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "CI_JOB_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
};

static bool rd_suffix(const char *name, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(name + n - k, suf, k) == 0;
}

bool kg_env_is_secret(const char *entry)
{
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
    for (size_t i = 0; i < sizeof rd_secret_names / sizeof *rd_secret_names; i++)
        if (strlen(rd_secret_names[i]) == n && memcmp(entry, rd_secret_names[i], n) == 0)
            return true;
    return rd_suffix(entry, n, "_TOKEN") || rd_suffix(entry, n, "_SECRET") ||
           rd_suffix(entry, n, "_PASSWORD") || rd_suffix(entry, n, "_JWT");
}

extern char **environ;

void kg_env_scrub_self(void)
{
    /* The entry is wiped in place after it is unset: unsetenv only drops the pointer, and the
     * bytes stay readable in this (forked) process's memory and in /proc/self/environ. */
    for (bool again = true; again;) {
        again = false;
        for (char **e = environ; e && *e; e++) {
            if (!kg_env_is_secret(*e))
                continue;
            char name[256], *entry = *e, *eq = strchr(entry, '=');
            size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
            snprintf(name, sizeof name, "%.*s", (int)n, entry);
            if (n >= sizeof name || unsetenv(name) != 0 || *e == entry)
                *e = entry + strlen(entry); /* not unset: left as "", nothing reads it */
            memset(entry, 0, strlen(entry));
            again = true;
            break;
        }
    }
}

void kg_env_hide_initial(void)
{
    /* The kernel shows a process's initial environment block (its bytes as they are now) to
     * every process of the same user as /proc/PID/environ: a child's case code could read the
     * parent's secrets there, under /proc/$PPID. Each secret moves to the heap (setenv copies
     * it; getenv still finds it) and its bytes in the block are wiped. Once per process. */
    static bool done;
    if (done)
        return;
    done = true;
    for (char **e = environ; e && *e; e++) {
        char name[256], *entry = *e, *eq = strchr(entry, '=');
        size_t n = eq ? (size_t)(eq - entry) : 0;
        if (!kg_env_is_secret(entry) || n == 0 || n >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)n, entry);
        if (setenv(name, eq + 1, 1) == 0 && *e != entry)
            memset(entry, 0, strlen(entry));
    }
}

int kg_env_scrubbed(char ***out)
{
    size_t n = 0, k = 0;
    kg_env_hide_initial();
    for (char **e = environ; e && *e; e++)
        n++;
    char **v = calloc(n + 1, sizeof *v);
    if (!v) {
        *out = NULL;
        return KG_ENOMEM; /* no message: this file sets none (see the top) */
    }
    for (char **e = environ; e && *e; e++)
        if (!kg_env_is_secret(*e))
            v[k++] = *e;
    *out = v;
    return 0;
}
