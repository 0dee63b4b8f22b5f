/* What a terminal gets and a log does not: verdict words in colour, and one
 * progress line for a long case, rewritten in place.
 *
 * Colour: on when standard output is a terminal (and TERM is not "dumb") and NO_COLOR is unset
 * or empty (https://no-color.org); `--color always|never` overrides both. It is decided once,
 * in the process that owns the terminal, before the isolation worker is forked (the worker
 * inherits the decision; its stdout is a pipe). Children that are exec'd (the selftest's)
 * decide for themselves: their output goes to log files, so they print no colour.
 *
 * Progress: only when standard output is a terminal; the line is erased (kg_progress_clear)
 * before anything else is written, so it never lands in a log or between table rows. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

static int tty_color = -1; /* -1: not decided yet (auto at first use) */

static bool tty_is_terminal(void)
{
    const char *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

int kg_color_set(const char *flag, const char *when)
{
    const char *no = getenv("NO_COLOR");
    if (!when || strcmp(when, "auto") == 0)
        tty_color = tty_is_terminal() && !(no && *no);
    else if (strcmp(when, "always") == 0)
        tty_color = 1;
    else if (strcmp(when, "never") == 0)
        tty_color = 0;
    else
        return KG_ERR(KG_EINVAL, "%s: expected auto, always or never, got '%s'", flag, when);
    return 0;
}

bool kg_color_on(void)
{
    if (tty_color < 0)
        (void)kg_color_set("--color", "auto");
    return tty_color == 1;
}

/* SGR colours of the words a verdict cell holds: red what fails, yellow what warns, magenta
 * what could not be decided, green what passed. */
static const struct {
    const char *word, *sgr;
} tty_words[] = {
    { KG_RV_VERDICT_PASS, "32" },      { KG_RV_DEC_IMPROVED, "32" },
    { KG_RV_AB_B_FASTER, "32" },       { KG_RV_VERDICT_FAIL, "1;31" },
    { KG_RV_DEC_REGRESSED, "1;31" },   { KG_RV_VERDICT_XPASS, "1;31" },
    { KG_RV_AB_B_SLOWER, "1;31" },     { "ESCAPED", "1;31" }, /* the selftest's matrix */
    { KG_RV_VERDICT_WARN, "33" },      { KG_RV_DEC_UNPROVEN, "33" },
    { KG_RV_DEC_STATE_DIFFERS, "33" }, { KG_RV_VERDICT_XFAIL, "33" },
    { KG_RV_VERDICT_ERROR, "35" },     { KG_RV_VERDICT_SKIP, "36" },
    { KG_RV_DEC_NO_MARK, "36" },
};

const char *kg_color_sgr(const char *word, size_t len)
{
    for (size_t i = 0; i < KG_ARRAY_LEN(tty_words); i++)
        if (strlen(tty_words[i].word) == len && strncmp(tty_words[i].word, word, len) == 0)
            return tty_words[i].sgr;
    return NULL;
}

void kg_color_cell(FILE *out, const char *cell)
{
    /* The cell's first verdict word, delimited by spaces: a verdict column ("   PASS"), the
     * selftest's "FAIL*" (the word, then the mark), or a verdict inside a row of figures
     * ("... 100% PASS  warps: ..."). */
    const char *p = cell, *sgr = NULL;
    size_t len = 0;
    while (kg_color_on() && *p && !sgr) {
        p += strspn(p, " ");
        len = strcspn(p, " ");
        size_t w = len && p[len - 1] == '*' ? len - 1 : len;
        if (w && (sgr = kg_color_sgr(p, w)))
            len = w;
        else
            p += len;
    }
    if (!sgr) {
        fputs(cell, out);
        return;
    }
    fprintf(out, "%.*s\033[%sm%.*s\033[0m%s", (int)(p - cell), cell, sgr, (int)len, p, p + len);
}

const char *kg_color_begin(const char *word)
{
    static char buf[16];
    const char *sgr = kg_color_on() ? kg_color_sgr(word, strlen(word)) : NULL;
    if (!sgr)
        return "";
    snprintf(buf, sizeof buf, "\033[%sm", sgr);
    return buf;
}

const char *kg_color_end(const char *word)
{
    return kg_color_on() && kg_color_sgr(word, strlen(word)) ? "\033[0m" : "";
}

/* ---- progress ------------------------------------------------------------------------------ */

#define TTY_PROGRESS_AFTER_S 1.0 /* a case shorter than this never shows a progress line */
#define TTY_PROGRESS_EVERY_S 0.2

/* Its own clock (not kg_now_s): util.c's waiting loops call into this file. */
static double tty_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct {
    char label[200];
    double started, drawn;
    long second; /* the whole seconds last drawn: a redraw only when they change */
    bool active, shown;
    int terminal; /* -1: not decided */
} tty_prog = { .terminal = -1 };

void kg_progress_begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tty_prog.label, sizeof tty_prog.label, fmt, ap);
    va_end(ap);
    tty_prog.started = tty_now();
    tty_prog.drawn = 0;
    tty_prog.active = true;
}

void kg_progress_tick(void)
{
    if (!tty_prog.active)
        return;
    if (tty_prog.terminal < 0)
        tty_prog.terminal = tty_is_terminal();
    double now = tty_now(), t = now - tty_prog.started;
    if (!tty_prog.terminal || t < TTY_PROGRESS_AFTER_S ||
        now - tty_prog.drawn < TTY_PROGRESS_EVERY_S ||
        (tty_prog.shown && (long)t == tty_prog.second))
        return;
    /* \r and erase-line: the one line is rewritten, within 80 columns. */
    printf("\r\033[K  ... %.64s (%ld s)", tty_prog.label, (long)t);
    fflush(stdout);
    tty_prog.drawn = now;
    tty_prog.second = (long)t;
    tty_prog.shown = true;
}

void kg_progress_clear(void)
{
    if (!tty_prog.shown)
        return;
    fputs("\r\033[K", stdout);
    fflush(stdout);
    tty_prog.shown = false;
}

void kg_progress_end(void)
{
    kg_progress_clear();
    tty_prog.active = false;
}
