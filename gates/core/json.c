/* Strict JSON input, the one loader of every JSON file kgate reads (reports, marks, the resource
 * baseline, the spill allowlist, the defect catalogue's reports): a bounded read (regular
 * files, FIFOs and devices alike never past KG_INPUT_MAX_BYTES), no NUL byte, nothing but
 * white space after the value, and no key twice in one object (cJSON keeps both and returns
 * the first, jq and Python the last: a reviewer and kgate would read different reports). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/kg_core.h"

static int js_open_checked(int *fd, const char *path, size_t limit)
{
    struct stat st;
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (*fd < 0)
        return KG_ERR(errno == ENOENT ? KG_ENOTFOUND : KG_EINVAL, "%s: cannot open: %s", path,
                      strerror(errno));
    if (fstat(*fd, &st) != 0)
        return KG_ERR(KG_EINVAL, "%s: cannot stat: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return KG_ERR(KG_EINVAL, "%s: is a directory, not a file (%s)", path, strerror(EISDIR));
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)limit)
        return KG_ERR(KG_EINVAL, "%s: %lld bytes, over the input size limit of %zu bytes", path,
                      (long long)st.st_size, limit);
    return 0;
}

int kg_file_read_limit(char **out, size_t *len, const char *path, size_t limit)
{
    int rc = 0, fd = -1;
    char *buf = NULL;
    size_t cap = 4096, n = 0;
    *out = NULL;
    KG_TRY(js_open_checked(&fd, path, limit));
    if (!(buf = malloc(cap))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory reading %s", path);
        goto cleanup;
    }
    for (;;) {
        if (n + 1 >= cap) {
            size_t nc = cap * 2;
            char *nb = nc > cap ? realloc(buf, nc) : NULL;
            if (!nb) {
                rc = KG_ERR(KG_ENOMEM, "out of memory reading %s", path);
                goto cleanup;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = KG_ERR(KG_EINVAL, "%s: cannot read: %s", path, strerror(errno));
            goto cleanup;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > limit) { /* a device or a FIFO: stop at the limit, never read to OOM */
            rc = KG_ERR(KG_EINVAL, "%s: over the input size limit of %zu bytes", path, limit);
            goto cleanup;
        }
    }
    buf[n] = '\0';
    *out = buf;
    buf = NULL;
    if (len)
        *len = n;
cleanup:
    free(buf);
    if (fd >= 0)
        close(fd);
    return rc;
}

int kg_file_read(char **out, size_t *len, const char *path)
{
    return kg_file_read_limit(out, len, path, SIZE_MAX / 2);
}

static void js_line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int js_syntax_error(const char *text, size_t len, const char *end, const char *name)
{
    const char *at = end ? end : cJSON_GetErrorPtr();
    int line = 0, col = 0;
    if (at && at >= text && at <= text + len)
        js_line_col(text, at, &line, &col);
    else
        at = text;
    const char *tail = text + len;
    while (tail > text && strchr(" \t\r\n", tail[-1]))
        tail--;
    bool nonfinite = at < tail &&
                     (strncasecmp(at, "nan", 3) == 0 || strncasecmp(at, "inf", 3) == 0 ||
                      strncasecmp(at, "-inf", 4) == 0);
    return KG_ERR(KG_EPARSE,
                  "%s: not valid JSON at line %d, column %d (malformed JSON near "
                  "byte %zu%s; nothing was changed)",
                  name, line, col, (size_t)(at - text),
                  at >= tail  ? ": unexpected end, truncated file?"
                  : nonfinite ? ": NaN and Infinity are not JSON numbers"
                              : "");
}

/* ---- duplicate keys, linear time ---------------------------------------------------------- */

static uint64_t js_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The first key of `obj` that appears twice, or NULL; -1 when out of memory. */
static int js_dup_in(const cJSON *obj, const char **dup)
{
    size_t n = 0, cap = 16;
    const cJSON *it;
    *dup = NULL;
    for (it = obj->child; it; it = it->next)
        n++;
    while (cap < 2 * n)
        cap *= 2;
    const char **slot = calloc(cap, sizeof *slot);
    if (!slot)
        return -1;
    for (it = obj->child; it && !*dup; it = it->next) {
        const char *k = it->string ? it->string : "";
        size_t i = (size_t)js_hash(k) & (cap - 1);
        while (slot[i] && strcmp(slot[i], k) != 0)
            i = (i + 1) & (cap - 1);
        if (slot[i])
            *dup = k;
        slot[i] = k;
    }
    free(slot);
    return 0;
}

static int js_check_dups(const cJSON *v, const char *name, char *path, size_t plen, size_t pcap)
{
    const char *dup = NULL;
    if (cJSON_IsObject(v)) {
        if (js_dup_in(v, &dup) < 0)
            return KG_ERR(KG_ENOMEM, "out of memory checking %s", name);
        if (dup)
            return KG_ERR(KG_EPARSE,
                          "%s: duplicate key: '%.200s' appears twice in %s (JSON readers disagree "
                          "on which one counts: refused; nothing was changed)",
                          name, dup, plen ? path : "the top-level object");
    }
    size_t i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        int w = cJSON_IsObject(v) ? snprintf(path + plen, pcap - plen, "%s%.60s", plen ? "." : "",
                                             c->string ? c->string : "")
                                  : snprintf(path + plen, pcap - plen, "[%zu]", i);
        size_t nl = w < 0 ? plen : plen + (size_t)w;
        if (nl >= pcap)
            nl = pcap - 1;
        int rc = js_check_dups(c, name, path, nl, pcap);
        path[plen] = '\0';
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The offset of a \u0000 escape inside a string, or -1: cJSON cuts the string there, so
 * kgate (and a signature over what it reads) would see less than jq or Python. */
static long js_nul_escape(const char *text, size_t len)
{
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        if (!in_str) {
            in_str = text[i] == '"';
        } else if (text[i] == '"') {
            in_str = false;
        } else if (text[i] == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && strncmp(text + i + 2, "0000", 4) == 0)
                return (long)i;
            i++; /* the escaped character (an escaped quote or backslash) */
        }
    }
    return -1;
}

int kg_json_parse_strict(cJSON **out, const char *text, size_t len, const char *name)
{
    const char *end = NULL;
    char path[512] = "";
    *out = NULL;
    if (strlen(text) != len)
        return KG_ERR(KG_EPARSE,
                      "%s: contains a NUL byte at offset %zu (not a JSON text; "
                      "nothing was changed)",
                      name, strlen(text));
    long nul = js_nul_escape(text, len);
    if (nul >= 0)
        return KG_ERR(KG_EPARSE,
                      "%s: a string holds a NUL escape (\\u0000) at offset %ld: "
                      "refused (kgate would read the string cut there; nothing was "
                      "changed)",
                      name, nul);
    /* The length counts the terminator: cJSON checks it when require_null_terminated, so
     * anything but white space after the value is an error. */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
    if (!root)
        return js_syntax_error(text, len, end, name);
    int rc = js_check_dups(root, name, path, 0, sizeof path);
    if (rc < 0) {
        cJSON_Delete(root);
        return rc;
    }
    *out = root;
    return 0;
}

int kg_json_load(cJSON **out, const char *path)
{
    int rc = 0;
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    KG_TRY(kg_file_read_limit(&text, &len, path, KG_INPUT_MAX_BYTES));
    KG_TRY(kg_json_parse_strict(out, text, len, path));
cleanup:
    free(text);
    return rc;
}
