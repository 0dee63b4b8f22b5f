/* The growing string buffer every text output is built in (core/sbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/sbuf.h"

static bool sbuf_reserve(kg_sbuf *b, size_t extra)
{
    if (b->err)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->err = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void kg_sbuf_putn(kg_sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void kg_sbuf_puts(kg_sbuf *b, const char *s) { kg_sbuf_putn(b, s ? s : "", strlen(s ? s : "")); }

void kg_sbuf_printf(kg_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* One UTF-8 character at s: its code point and length; an invalid sequence (bad lead or
 * continuation, overlong, surrogate, above U+10FFFF) is U+FFFD of length 1. */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
    unsigned c = s[0], n = c < 0x80         ? 1
                           : (c >> 5) == 6  ? 2
                           : (c >> 4) == 14 ? 3
                           : (c >> 3) == 30 ? 4
                                            : 0;
    unsigned v = n == 1 ? c : n == 2 ? c & 31 : n == 3 ? c & 15 : c & 7;
    for (unsigned k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80) {
            n = 0;
            break;
        }
        v = (v << 6) | (s[k] & 63);
    }
    static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (n == 0 || v < min[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return n;
}

void kg_sbuf_xml(kg_sbuf *b, const char *s)
{
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    while (*c) {
        unsigned cp;
        size_t n = utf8_next(c, &cp);
        switch (cp) {
        case '&': kg_sbuf_puts(b, "&amp;"); break;
        case '<': kg_sbuf_puts(b, "&lt;"); break;
        case '>': kg_sbuf_puts(b, "&gt;"); break;
        case '"': kg_sbuf_puts(b, "&quot;"); break;
        case '\'': kg_sbuf_puts(b, "&#39;"); break;
        case '\n': kg_sbuf_puts(b, "&#10;"); break;
        case '\t': kg_sbuf_puts(b, "&#9;"); break;
        case '\r': break;
        default:
            /* Not allowed anywhere in XML 1.0: C0 controls, U+FFFE, U+FFFF; invalid UTF-8
             * arrives here as U+FFFD. DEL and C1 are allowed but never wanted: replaced too. */
            if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
                kg_sbuf_putn(b, "?", 1);
            else if (cp == 0xFFFE || cp == 0xFFFF || cp == 0xFFFD)
                kg_sbuf_puts(b, "\xEF\xBF\xBD");
            else
                kg_sbuf_putn(b, (const char *)c, n);
        }
        c += n;
    }
}

/* Markdown text: table pipes, inline HTML, and the characters of emphasis, links, images and
 * code are escaped, so a field is shown as text; an @mention is broken (U+200B after the @) and
 * bidi controls are dropped. In a code span (`code`) backslashes are literal: a backtick
 * becomes U+02CB there. */
static void md_put(kg_sbuf *b, const char *s, size_t max, bool code)
{
    size_t n = 0;
    const unsigned char *c = (const unsigned char *)(s ? s : "");
    while (*c) {
        unsigned cp;
        size_t len = utf8_next(c, &cp);
        if (n >= max) {
            kg_sbuf_puts(b, "...");
            break;
        }
        if (cp == '|')
            kg_sbuf_puts(b, "\\|");
        else if (cp == '<')
            kg_sbuf_puts(b, "&lt;"); /* GitHub renders inline HTML: keep text as text */
        else if (cp == '>')
            kg_sbuf_puts(b, "&gt;");
        else if (cp == '&')
            kg_sbuf_puts(b, "&amp;");
        else if (cp == '`')
            kg_sbuf_puts(b, code ? "\xCB\x8B" : "\\`");
        else if (!code && cp < 128 && strchr("\\*[]~", (int)cp))
            kg_sbuf_printf(b, "\\%c", (int)cp);
        else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
            kg_sbuf_putn(b, " ", 1);
        else if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E ||
                 cp == 0x200F || cp == 0x061C)
            ; /* bidi controls: text that reads other than it is (dropped) */
        else if (cp == '@' && !code)
            kg_sbuf_puts(b, "@\xE2\x80\x8B"); /* + U+200B: a case's text mentions no one */
        else if (cp == 0xFFFD || cp == 0xFFFE || cp == 0xFFFF)
            kg_sbuf_puts(b, "\xEF\xBF\xBD");
        else
            kg_sbuf_putn(b, (const char *)c, len);
        c += len;
        n += len;
    }
}

void kg_sbuf_md(kg_sbuf *b, const char *s, size_t max) { md_put(b, s, max, false); }

void kg_sbuf_md_code(kg_sbuf *b, const char *s, size_t max)
{
    kg_sbuf_puts(b, "`");
    md_put(b, s, max, true);
    kg_sbuf_puts(b, "`");
}

void kg_sbuf_free(kg_sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->err = false;
}

int kg_sbuf_write(kg_sbuf *b, const char *path)
{
    if (b->err)
        return KG_ERR(KG_ENOMEM, "out of memory formatting %s", path);
    if (strcmp(path, "-") == 0) {
        if (b->len && fwrite(b->p, 1, b->len, stdout) != b->len)
            return KG_ERR(KG_EIO, "cannot write to standard output");
        fflush(stdout);
        return 0;
    }
    return kg_file_write_atomic(path, b->p ? b->p : "", b->len);
}
