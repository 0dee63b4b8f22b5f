/* A growing string (kg_sbuf): what the exporters, the history charts and the PR comment are
 * written into before one atomic write. */
#ifndef KG_SBUF_H
#define KG_SBUF_H

#include <stdbool.h>
#include <stddef.h>
#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A growing string; an allocation failure is sticky (err) and reported once at the end. */
typedef struct {
    char *p;
    size_t len, cap;
    bool err;
} kg_sbuf;

#define KG_SBUF_INIT                                \
    {                                               \
        .p = NULL, .len = 0, .cap = 0, .err = false \
    }

void kg_sbuf_puts(kg_sbuf *b, const char *s);
/* n bytes as they are (a NUL among them too: the buffer's length counts them). */
void kg_sbuf_putn(kg_sbuf *b, const char *s, size_t n);
void kg_sbuf_printf(kg_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* XML/HTML text and attribute escaping: markup characters as entities, characters XML 1.0
 * forbids (C0 controls, U+FFFE, U+FFFF) and invalid UTF-8 replaced (?, U+FFFD). */
void kg_sbuf_xml(kg_sbuf *b, const char *s);
/* Markdown table cell text: '|', inline HTML and Markdown punctuation escaped, newlines and
 * controls as spaces, invalid UTF-8 as U+FFFD, at most `max` bytes. */
void kg_sbuf_md(kg_sbuf *b, const char *s, size_t max);
/* The same as a code span `...` (a backtick inside becomes U+02CB: it cannot be escaped). */
void kg_sbuf_md_code(kg_sbuf *b, const char *s, size_t max);
void kg_sbuf_free(kg_sbuf *b);
/* Write the buffer to path ("-" = stdout) atomically; KG_ENOMEM if an append failed. */
int kg_sbuf_write(kg_sbuf *b, const char *path);

#ifdef __cplusplus
}
#endif
#endif
