/* Trend charts (SVG), pure: no git, no files. One chart per (case, metric): the runs' medians
 * with their CI as whiskers, the mark each run was decided against drawn as a STEP line (a
 * mark holds until it moves: horizontal, then vertical), lowerings annotated, one colour per
 * device class with a legend, regressed runs ringed, x axis by code commit (short sha labels
 * rotated -45 degrees; a commit's repeated runs side by side, "#2", "#3"), y axis with nice
 * ticks carrying their unit (report/svg.h); the SVG scales to its container (a viewBox). Every margin is computed from the text it must hold, so
 * no label is clipped; the layout (every text's box) comes back for the tests to check. */
#ifndef KG_TREND_H
#define KG_TREND_H

#include <stdbool.h>
#include <stddef.h>
#include "core/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t x;              /* index into the chart's x labels (commit order) */
    size_t series;         /* index into the chart's series (device classes) */
    double median, lo, hi; /* the run: median and CI */
    double mark;           /* the mark it was decided against; < 0: none */
    const char *tip;       /* tooltip (may be NULL) */
    bool regressed;        /* decided REGRESSED: ringed in red */
} kg_trend_point;

typedef struct {
    size_t x; /* before this x index (nx: after the last) */
    size_t series;
    const char *text; /* "lowered to 12.5: new driver" */
} kg_trend_note;

typedef struct {
    const char *title;
    const char *y_label;        /* NULL: "median time" */
    const char *unit;           /* of the y ticks; NULL: "us" */
    bool no_title;              /* the page shows the title: not again in the SVG */
    const char *const *xlabels; /* short shas, in x order */
    size_t nx;
    const char *const *series; /* legend names */
    size_t ns;
    const kg_trend_point *p; /* in time order (the step line follows it per series) */
    size_t np;
    const kg_trend_note *notes;
    size_t nn;
} kg_trend_chart;

typedef struct {
    double x, y, w, h;
} kg_trend_box;

typedef struct {
    double width, height; /* the viewBox */
    double plot_x, plot_y, plot_w, plot_h;
    kg_trend_box boxes[4096]; /* every text element's box, in the viewBox */
    size_t nboxes;
    size_t whiskers, steps_h, steps_v;
} kg_trend_layout;

/* Width of `s` drawn at `size` px in the chart's monospace font (an upper bound). */
double kg_trend_text_width(const char *s, double size);

/* Append one <svg> to `b`; `lay` (may be NULL) receives the layout. */
void kg_trend_svg(kg_sbuf *b, const kg_trend_chart *c, kg_trend_layout *lay);

/* The series colour (a fixed palette, cycled). */
const char *kg_trend_colour(size_t i);

#ifdef __cplusplus
}
#endif
#endif
