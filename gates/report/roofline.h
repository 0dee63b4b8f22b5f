/* The roofline of a run: one point per case from the counters gate (measured
 * FLOP per DRAM byte, achieved TFLOP/s), ceilings from the bench gate's measurements in the
 * same run, drawn as a log-log SVG (pure: tests/test_roofline.c draws synthetic rows). */
#ifndef KG_ROOFLINE_H
#define KG_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include "report/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *case_id;
    double ai;               /* FLOP / DRAM byte (NaN: no point is drawn) */
    double tflops;           /* achieved (NaN: no point is drawn) */
    bool hollow;             /* a counter behind it was unavailable (partial FP counts) */
    const char *time_source; /* "bench" (the bench median of the same run) | "counters" */
} kg_roof_point;

/* The chart's log-log axes: decades [x_lo, x_hi] x [y_lo, y_hi] onto the plot rectangle. */
typedef struct {
    double x_lo, x_hi, y_lo, y_hi; /* powers of ten */
    double px0, px1, py0, py1;     /* plot rectangle (py0 is the top) */
} kg_roof_axes;

#define KG_ROOF_W 760.0
#define KG_ROOF_H 420.0

/* Axes that hold every drawable point and the ridge (copy_gbps, peak_tflops may be 0). */
void kg_roof_axes_fit(kg_roof_axes *a, const kg_roof_point *p, size_t n, double copy_gbps,
                      double peak_tflops);
double kg_roof_x(const kg_roof_axes *a, double ai);
double kg_roof_y(const kg_roof_axes *a, double tflops);

/* The SVG (id "chart-roofline"): roofs from the ceilings when measured (> 0), one circle per
 * point with a finite positive ai and tflops (fill "none" when hollow), none for the rest. */
void kg_roofline_svg(kg_sbuf *b, const kg_roof_point *p, size_t n, double copy_gbps,
                     double peak_tflops);

/* The section of the HTML report: the points of the report's counters rows (achieved
 * TFLOP/s from the bench median of the same case when the run has one, else from the
 * counters pass's own kernel time), the ceilings of report.bench; a sentence when there is
 * nothing to draw. */
int kg_roofline_html(kg_sbuf *b, const cJSON *report);

#ifdef __cplusplus
}
#endif
#endif
