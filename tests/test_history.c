/* The run history's pure parts: the trend renderer (an SVG from synthetic records: the mark's
 * step path is horizontal-then-vertical, one whisker per point, every text box inside the
 * viewBox, margins that grow with the labels) and the records (JSON Lines round trip, strict
 * parsing of untrusted text, merge without duplicates, the bound per key). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "kg_test.h"
#include "history/run_history.h"
#include "history/trend.h"

static kg_trend_layout lay;

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static bool boxes_inside(const kg_trend_layout *l)
{
    for (size_t i = 0; i < l->nboxes; i++) {
        const kg_trend_box *b = &l->boxes[i];
        if (b->x < 0 || b->y < 0 || b->x + b->w > l->width || b->y + b->h > l->height) {
            fprintf(stderr, "box %zu (%g,%g %gx%g) outside %gx%g\n", i, b->x, b->y, b->w, b->h,
                    l->width, l->height);
            return false;
        }
    }
    return l->nboxes > 0;
}

/* Every mark path: "M x y" then H and V alternating, H first and last; returns the paths. */
static int check_steps(const char *svg, size_t *nh, size_t *nv)
{
    int paths = 0;
    *nh = *nv = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"mark\""));) {
        const char *d = strstr(p, " d=\"");
        CHECK(d != NULL);
        if (!d)
            return -1;
        d += 4;
        CHECK(*d == 'M');
        char want = 'H', last = 0;
        for (const char *q = d + 1; *q && *q != '"'; q++) {
            if (*q != 'H' && *q != 'V' && *q != 'L' && *q != 'M' && *q != 'C')
                continue;
            CHECK_MSG(*q == want, "mark path: '%c' where '%c' was due: %.80s", *q, want, d);
            *nh += *q == 'H';
            *nv += *q == 'V';
            last = *q;
            want = *q == 'H' ? 'V' : 'H';
        }
        CHECK_MSG(last == 'H', "mark path does not end horizontal: %.80s", d);
        paths++;
        p = d;
    }
    return paths;
}

static void test_trend(const char *xlab_fmt, const char *series0)
{
    char labels[6][64], tips[12][32];
    const char *xl[6], *series[2] = { series0, "NVIDIA H100 80GB HBM3/sm_90" };
    double marks[6] = { -1, 10.3, 10.3, 9.7, 9.7, 9.6 };
    kg_trend_point p[12];
    size_t np = 0;
    for (size_t i = 0; i < 6; i++) {
        snprintf(labels[i], sizeof labels[i], xlab_fmt, (unsigned)(0xabc123 + i * 977));
        xl[i] = labels[i];
        for (size_t s = 0; s < 2; s++) {
            double f = s ? 1.3 : 1.0, med = (10.0 - 0.1 * (double)i) * f;
            snprintf(tips[np], sizeof tips[np], "run %zu", np);
            p[np] = (kg_trend_point){ .x = i,
                                      .series = s,
                                      .median = med,
                                      .lo = med - 0.2,
                                      .hi = med + 0.25,
                                      .mark = marks[i] < 0 ? -1 : marks[i] * f,
                                      .tip = tips[np] };
            np++;
        }
    }
    kg_trend_note note = { .x = 3,
                           .series = 0,
                           .text = "lowered to 9.7: driver 580 is slower "
                                   "on every bandwidth-bound case, by design" };
    kg_trend_chart c = { .title = "axpy/n=33554433/f32  time_us_warm",
                         .xlabels = xl,
                         .nx = 6,
                         .series = series,
                         .ns = 2,
                         .p = p,
                         .np = np,
                         .notes = &note,
                         .nn = 1 };
    kg_sbuf b = KG_SBUF_INIT;
    kg_trend_svg(&b, &c, &lay);
    CHECK(!b.err && b.p);
    if (!b.p)
        return;
    size_t nh, nv;
    CHECK(check_steps(b.p, &nh, &nv) == 2);
    /* two series x (one start, 2 changes 10.3 -> 9.7 -> 9.6, one end): 3 H and 2 V each */
    CHECK_MSG(nh == 6 && nv == 4, "steps: %zu H, %zu V", nh, nv);
    CHECK(lay.steps_h == nh && lay.steps_v == nv);
    CHECK_MSG(count(b.p, "class=\"whisker\"") == np, "whiskers: %zu for %zu points",
              count(b.p, "class=\"whisker\""), np);
    CHECK(lay.whiskers == np);
    CHECK(count(b.p, "class=\"xlabel\"") == 6);
    CHECK(count(b.p, "class=\"lowered\"") == 1);
    CHECK(count(b.p, series0) >= 2); /* legend and the path's title */
    CHECK(boxes_inside(&lay));
    char vb[128];
    snprintf(vb, sizeof vb, "viewBox=\"0 0 %.0f %.0f\"", ceil(lay.width), ceil(lay.height));
    CHECK_MSG(strstr(b.p, vb) != NULL, "viewBox: want %s", vb);
    /* the left margin holds the first rotated x label */
    double reach = (kg_trend_text_width(labels[0], 10) + 10) * 0.70710678;
    CHECK_MSG(lay.plot_x + (lay.plot_w / 6) / 2 - reach >= 0,
              "first x label clipped: plot_x %g "
              "reach %g",
              lay.plot_x, reach);
    kg_sbuf_free(&b);
}

/* The check itself fails on a clipped label (the defect it exists for). */
static void test_box_check_fails(void)
{
    kg_trend_layout *l = calloc(1, sizeof *l);
    if (!l)
        return;
    l->width = 100;
    l->height = 50;
    l->boxes[0] = (kg_trend_box){ 90, 10, 20, 10 };
    l->nboxes = 1;
    CHECK(!boxes_inside(l));
    free(l);
}

/* ---- records -------------------------------------------------------------------------------- */

static kg_history_rec rec(const char *cs, const char *run, double med, int sec)
{
    kg_history_rec r;
    memset(&r, 0, sizeof r);
    snprintf(r.case_id, sizeof r.case_id, "%s", cs);
    snprintf(r.device_class, sizeof r.device_class, "NVIDIA H200/sm_90");
    snprintf(r.metric, sizeof r.metric, "time_us_warm");
    snprintf(r.commit, sizeof r.commit, "0123456789abcdef0123456789abcdef01234567");
    snprintf(r.run_id, sizeof r.run_id, "%s", run);
    snprintf(r.date, sizeof r.date, "2026-12-01T%02d:%02d:%02dZ", sec / 3600, sec / 60 % 60,
             sec % 60);
    snprintf(r.mode, sizeof r.mode, "production");
    snprintf(r.decision, sizeof r.decision, "SAME");
    r.median = med;
    r.ci_lo = med * 0.98;
    r.ci_hi = med * 1.02;
    r.mark = -1;
    r.samples = 100;
    return r;
}

static void test_records(void)
{
    kg_history_rec r = rec("axpy/n=1", "run-1", 10, 0), back;
    r.k = 8;
    r.mark = 10.5;
    char *line = NULL;
    CHECK(kg_history_rec_json(&line, &r) == 0 && line);
    CHECK(kg_history_rec_parse(&back, line, strlen(line), "t") == 0);
    CHECK(strcmp(back.case_id, r.case_id) == 0 && back.k == 8 && back.mark == 10.5 &&
          back.median == 10 && strcmp(back.mode, "production") == 0);
    free(line);
    static const char *const bad[] = {
        "{\"case\":\"a\\u0001b\",\"device_class\":\"d\",\"metric\":\"m\",\"median_us\":1,"
        "\"ci_lo_us\":1,\"ci_hi_us\":1,\"commit\":\"unknown\",\"run_id\":\"r\",\"date\":"
        "\"2026-12-01T10:00:00Z\",\"mode\":\"production\"}",
        "{\"case\":\"a\",\"device_class\":\"d\",\"metric\":\"Bad-Metric\",\"median_us\":1,"
        "\"ci_lo_us\":1,\"ci_hi_us\":1,\"commit\":\"unknown\",\"run_id\":\"r\",\"date\":"
        "\"2026-12-01T10:00:00Z\",\"mode\":\"production\"}",
        "{\"case\":\"a\",\"device_class\":\"d\",\"metric\":\"m\",\"median_us\":-1,"
        "\"ci_lo_us\":1,\"ci_hi_us\":1,\"commit\":\"unknown\",\"run_id\":\"r\",\"date\":"
        "\"2026-12-01T10:00:00Z\",\"mode\":\"production\"}",
        "{\"case\":\"a\",\"device_class\":\"d\",\"metric\":\"m\",\"median_us\":1,"
        "\"ci_lo_us\":1,\"ci_hi_us\":1,\"commit\":\"unknown\",\"run_id\":\"r\",\"date\":"
        "\"yesterday\",\"mode\":\"production\"}",
        "{\"case\":\"a\",\"device_class\":\"d\",\"metric\":\"m\",\"median_us\":1,"
        "\"ci_lo_us\":1,\"ci_hi_us\":1,\"commit\":\"unknown\",\"run_id\":\"r\",\"date\":"
        "\"2026-12-01T10:00:00Z\",\"mode\":\"production\",\"case\":\"b\"}",
        "[1,2]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(kg_history_rec_parse(&back, bad[i], strlen(bad[i]), "t") == KG_EPARSE,
                  "bad record %zu accepted", i);
    char f[300];
    kg_history_file_of(f, sizeof f, "NVIDIA H100 80GB HBM3/sm_90");
    CHECK_MSG(strcmp(f, "history/NVIDIA_H100_80GB_HBM3_sm_90.jsonl") == 0, "%s", f);
    kg_history_file_of(f, sizeof f, "../../etc");
    CHECK_MSG(strcmp(f, "history/.._.._etc.jsonl") != 0 && !strstr(f, "/../") &&
                  strncmp(f, "history/", 8) == 0 && !strchr(f + 8, '/'),
              "%s", f);
}

static void test_merge_bound(void)
{
    kg_history_recs add = { 0 };
    char *text = NULL, *text2 = NULL, run[32];
    size_t added = 0;
    for (int i = 0; i < 600; i++) {
        snprintf(run, sizeof run, "run-%d", i);
        kg_history_rec r = rec("a/n=1", run, 10, i); /* dated i seconds in */
        CHECK(kg_history_recs_push(&add, &r) == 0);
        if (i % 60 == 0) {
            r = rec("b/n=2", run, 20, i);
            CHECK(kg_history_recs_push(&add, &r) == 0);
        }
    }
    CHECK(kg_history_merge_text(&text, &added, NULL, &add, 500, "t") == 0);
    CHECK_MSG(added == 510, "added %zu", added); /* 600 + 10, less the 100 oldest of a */
    CHECK_MSG(count(text, "\"a/n=1\"") == 500, "a kept: %zu", count(text, "\"a/n=1\""));
    CHECK(count(text, "\"b/n=2\"") == 10);
    CHECK(!strstr(text, "\"run-99\"") && strstr(text, "\"run-100\"") &&
          strstr(text, "\"run-599\""));
    CHECK(kg_history_merge_text(&text2, &added, text, &add, 500, "t") == 0);
    CHECK_MSG(added == 0, "re-adding: %zu added", added); /* older than every kept one */
    CHECK(strcmp(text, text2) == 0);
    free(text2);
    text2 = NULL;
    kg_history_recs last = { 0 };
    CHECK(kg_history_recs_push(&last, &add.v[add.n - 1]) == 0);
    CHECK(kg_history_merge_text(&text2, &added, text, &last, 500, "t") == 0);
    CHECK(added == 0 && strcmp(text, text2) == 0);
    free(text2);
    text2 = NULL;
    /* one run's record twice in one append: added once (the sorted duplicate pass) */
    CHECK(kg_history_recs_push(&last, &add.v[add.n - 1]) == 0);
    kg_history_rec fresh = rec("c/n=3", "run-new", 30, 9999);
    CHECK(kg_history_recs_push(&last, &fresh) == 0 && kg_history_recs_push(&last, &fresh) == 0);
    CHECK(kg_history_merge_text(&text2, &added, text, &last, 500, "t") == 0);
    CHECK_MSG(added == 1 && count(text2, "\"c/n=3\"") == 1, "duplicates: %zu added", added);
    free(text2);
    text2 = NULL;
    CHECK(kg_history_merge_text(&text2, &added, "{\"case\":1}\n", &last, 500, "f.jsonl") ==
          KG_EPARSE);
    CHECK(strstr(kg_error_last(), "f.jsonl:1") != NULL);
    free(text);
    free(text2);
    kg_history_recs_free(&add);
    kg_history_recs_free(&last);
}

int main(void)
{
    test_trend("%08x", "NVIDIA H200/sm_90");
    double short_plot_x = lay.plot_x;
    /* Labels four times as long and a long class name: the margins grow, nothing clips. */
    test_trend("%08x-refs/heads/release-2026.12",
               "NVIDIA GH200 480GB Grace Hopper Superchip/sm_90");
    CHECK_MSG(lay.plot_x > short_plot_x, "left margin did not grow: %g vs %g", lay.plot_x,
              short_plot_x);
    test_box_check_fails();
    test_records();
    test_merge_bound();
    return kg_test_done("test_history");
}
