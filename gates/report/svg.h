/* What the report's and the history's SVG charts share (pure: no files): "nice" axis ticks
 * (1, 2 or 5 x 10^k) with their units, text widths in the charts' monospace font, and the
 * <svg> element that scales to its container (a viewBox, width 100%, the height by aspect,
 * never wider than drawn). tests/test_ticks.c checks the math. */
#ifndef KG_SVG_H
#define KG_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include "core/sbuf.h" /* kg_sbuf */

#ifdef __cplusplus
extern "C" {
#endif

/* The charts' font: monospace, so a label's width is known before it is drawn. */
#define KG_SVG_FONT "DejaVu Sans Mono, Menlo, Consolas, monospace"

typedef struct {
    double lo,
        hi;       /* the first and the last tick: multiples of step, lo <= data lo, hi >= data hi */
    double step;  /* 1, 2 or 5 x 10^k */
    int n;        /* ticks: lo, lo + step, ..., hi (n >= 2) */
    int decimals; /* digits after the point every label of this step needs */
} kg_svg_ticks;

/* The step 1, 2 or 5 x 10^k nearest above raw (raw > 0 and finite, else 1). */
double kg_svg_nice_step(double raw);

/* Ticks covering [lo, hi] with at most max_ticks ticks (at least 2; lo == hi, NaN or an
 * infinity give a range around what is finite). */
void kg_svg_ticks_fit(kg_svg_ticks *t, double lo, double hi, int max_ticks);

/* The i-th tick's value, snapped to the step (no 0.30000000000000004). */
double kg_svg_tick(const kg_svg_ticks *t, int i);

/* A tick label with the step's decimals and its unit: "20.5 us", "+2%", "0%", "1.5 GB/s";
 * sign: a + on positive values (changes); "%" follows the number, any other unit after a space.
 * Never "-0". */
void kg_svg_tick_label(char *buf, size_t n, const kg_svg_ticks *t, double v, const char *unit,
                       bool sign);

/* The width of s drawn at size (user units) in KG_SVG_FONT: an upper bound (0.62 em a code
 * point; DejaVu Sans Mono's advance is 0.602). */
double kg_svg_text_width(const char *s, double size);

/* s cut to at most width at size, on a code point boundary, "..." at the end when cut. */
void kg_svg_fit_text(char *buf, size_t n, const char *s, double size, double width);

/* <svg> of w x h user units that fills its container's width up to w px (height by aspect):
 * id and cls may be NULL; aria (may be NULL) is its aria-label; standalone: an SVG file's
 * (with the SVG namespace; HTML's inline SVG needs none, and names no URL). */
void kg_svg_open(kg_sbuf *b, const char *id, const char *cls, double w, double h, const char *aria,
                 bool standalone);

#ifdef __cplusplus
}
#endif
#endif
