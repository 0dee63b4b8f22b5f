/* The advance logic without git: report parsing, the ratchet guard (conservative CI edge), the
 * merge rule (only if this run still beats the mark; never down) and the refusal inputs; the
 * counters rows' mark_moves into counter-mark candidates, and their malformed forms. */
#include <string.h>
#include "marks/advance.h"
#include "kg_test.h"

static const char *report_fmt =
    "{\"mode\":\"%s\",\"certifying\":%s,\"run_id\":\"r-1\",\"started_at\":\"2026-12-01T00:00:00Z\","
    "\"device\":{\"class\":\"GPU X/sm_90\",\"driver_cuda_version\":\"13.0\",\"runtime_version\":"
    "\"13.0\"},\"provenance\":{\"commit\":\"abc\"},\"gates\":[\"parity\",\"bench\"],\"results\":["
    "{\"gate\":\"parity\",\"case\":\"a\",\"verdict\":\"%s\",\"figures\":{}},"
    "{\"gate\":\"parity\",\"case\":\"b\",\"verdict\":\"PASS\",\"figures\":{}},"
    "{\"gate\":\"bench\",\"case\":\"a\",\"verdict\":\"PASS\",\"figures\":{\"decision\":\"NO_MARK\","
    "\"metric\":\"time_us_warm\",\"median_us\":10,\"ci_lo_us\":9.5,\"ci_hi_us\":%s,\"band_rel\":0.01,"
    "\"samples\":100,\"processes\":3,\"env_lo_us\":10,\"env_hi_us\":10}},"
    "{\"gate\":\"bench\",\"case\":\"b\",\"verdict\":\"WARN\",\"figures\":{\"decision\":\"IMPROVED\","
    "\"metric\":\"gbps\",\"direction\":\"higher_is_better\",\"median_us\":500,\"ci_lo_us\":480,"
    "\"ci_hi_us\":510,\"band_rel\":0.02,\"samples\":50,\"processes\":3,\"env_lo_us\":500,"
    "\"env_hi_us\":500}}%s]}";

static kg_advance_input *parse(const char *mode, const char *cert, const char *pv,
                               const char *ci_hi, const char *extra, int *rc)
{
    char buf[4096];
    kg_advance_input *in = NULL;
    snprintf(buf, sizeof buf, report_fmt, mode, cert, pv, ci_hi, extra);
    cJSON *j = cJSON_Parse(buf);
    *rc = kg_advance_parse(&in, j, "test.json", "test");
    cJSON_Delete(j);
    return in;
}

/* A counters row as counters_figures.c writes it, with `moves` as its mark_moves. */
static kg_advance_input *parse_ct(const char *dec, const char *moves, const char *dram, int *rc)
{
    char row[1024];
    snprintf(row, sizeof row,
             ",{\"gate\":\"counters\",\"case\":\"a\",\"verdict\":\"PASS\",\"figures\":{"
             "\"decision\":\"%s\",\"dram_bytes\":%s,\"inst\":417809,\"occupancy_pct\":63.4,"
             "\"spill_requests\":0,\"tensor_inst\":null,\"sysmem_bytes\":812320%s%s}}",
             dec, dram, moves ? ",\"mark_moves\":" : "", moves ? moves : "");
    return parse("production", "true", "PASS", "10.4", row, rc);
}

static void test_counters(void)
{
    int rc;
    kg_advance_input *in = parse_ct("NO_MARK",
                                    "[\"dram_bytes_per_launch\",\"achieved_occupancy_pct\"]",
                                    "1.52e6", &rc);
    CHECK(rc == 0 && in && in->n_cands == 4); /* the 2 bench candidates, then the 2 counts */
    if (in && in->n_cands == 4) {
        const kg_mark *d = &in->cands[2].cand, *o = &in->cands[3].cand;
        CHECK(strcmp(d->metric, "dram_bytes_per_launch") == 0 && d->value == 1.52e6 &&
              d->direction == KG_LOWER_IS_BETTER && d->runs == 1 && d->band_rel == 0);
        CHECK(strcmp(o->metric, "achieved_occupancy_pct") == 0 && o->value == 63.4 &&
              o->direction == KG_HIGHER_IS_BETTER);
        kg_marks *m = NULL;
        kg_mark_moves mv = { 0 };
        CHECK(kg_marks_new(&m) == 0 && kg_advance_apply(m, in, &mv) == 0 && mv.n == 4);
        CHECK(kg_marks_find(m, "GPU X/sm_90", "a", "dram_bytes_per_launch") != NULL);
        kg_mark_moves_free(&mv);
        kg_marks_free(m);
    }
    kg_advance_input_free(in);
    /* an empty list, a report from before mark_moves, a REGRESSED row: no counter candidate */
    in = parse_ct("OK", "[]", "1.52e6", &rc);
    CHECK(rc == 0 && in && in->n_cands == 2);
    kg_advance_input_free(in);
    in = parse_ct("OK", NULL, "1.52e6", &rc);
    CHECK(rc == 0 && in && in->n_cands == 2);
    kg_advance_input_free(in);
    in = parse_ct("REGRESSED", "[\"inst_per_launch\"]", "1.52e6", &rc);
    CHECK(rc == 0 && in && in->n_cands == 2);
    kg_advance_input_free(in);
    /* malformed: an unknown metric, a metric twice, a listed count that is not a count > 0, not
     * an array: KG_EPARSE naming the file, the case and the field */
    static const struct {
        const char *moves, *dram, *want;
    } bad[] = {
        { "[\"gbps\"]", "1.52e6", "'gbps' is not a counter mark" },
        { "[\"inst_per_launch\",\"inst_per_launch\"]", "1", "names 'inst_per_launch' twice" },
        { "[\"dram_bytes_per_launch\"]", "0", "figures.dram_bytes must be a finite count in (0," },
        { "[\"dram_bytes_per_launch\"]", "1e300", "figures.dram_bytes must be a finite count in" },
        { "[\"dram_bytes_per_launch\"]", "null", "figures.dram_bytes must be a finite count" },
        { "[\"tensor_inst_per_launch\"]", "1", "figures.tensor_inst must be a finite count" },
        { "[7]", "1", "'(not a string)' is not a counter mark" },
        { "\"dram_bytes_per_launch\"", "1", "mark_moves must be an array" },
    };
    /* occupancy above 100%: a mark no run could meet */
    in = parse_ct("OK", "[\"achieved_occupancy_pct\"]", "1", &rc);
    CHECK(rc == 0 && in && in->n_cands == 3);
    kg_advance_input_free(in);
    {
        char row[600];
        snprintf(row, sizeof row,
                 ",{\"gate\":\"counters\",\"case\":\"a\",\"verdict\":\"PASS\","
                 "\"figures\":{\"decision\":\"OK\",\"occupancy_pct\":1e308,\"mark_moves\":"
                 "[\"achieved_occupancy_pct\"]}}");
        in = parse("production", "true", "PASS", "10.4", row, &rc);
        CHECK(rc == KG_EPARSE && !in && strstr(kg_error_last(), "(0, 100]"));
        /* an XFAIL counters row proposes nothing (production takes PASS rows only) */
        snprintf(
            row, sizeof row,
            ",{\"gate\":\"counters\",\"case\":\"a\",\"verdict\":\"XFAIL\","
            "\"figures\":{\"decision\":\"OK\",\"inst\":5,\"mark_moves\":[\"inst_per_launch\"]}}");
        in = parse("production", "true", "PASS", "10.4", row, &rc);
        CHECK(rc == 0 && in && in->n_cands == 2);
        kg_advance_input_free(in);
        /* a bench row cannot name a counter mark (nor so choose its direction) */
        snprintf(row, sizeof row,
                 ",{\"gate\":\"bench\",\"case\":\"c\",\"verdict\":\"PASS\","
                 "\"figures\":{\"decision\":\"NO_MARK\",\"metric\":\"achieved_occupancy_pct\","
                 "\"direction\":\"lower_is_better\",\"median_us\":1,\"ci_lo_us\":1,\"ci_hi_us\":1,"
                 "\"band_rel\":0,\"samples\":1,\"processes\":3,\"env_lo_us\":1,\"env_hi_us\":1}}");
        in = parse("production", "true", "PASS", "10.4", row, &rc);
        CHECK_MSG(rc == KG_EPARSE && !in && strstr(kg_error_last(), "is a counter mark"), "%s",
                  kg_error_last());
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        in = parse_ct("OK", bad[i].moves, bad[i].dram, &rc);
        CHECK_MSG(rc == KG_EPARSE && !in && strstr(kg_error_last(), "test.json") &&
                      strstr(kg_error_last(), "'a'") && strstr(kg_error_last(), bad[i].want),
                  "case %zu: rc %d, %s", i, rc, kg_error_last());
        kg_advance_input_free(in);
    }
}

int main(void)
{
    int rc;
    kg_marks *m = NULL;
    kg_mark_moves mv = { 0 };
    char *msg = NULL;

    kg_advance_input *in = parse("production", "true", "PASS", "10.4", "", &rc);
    CHECK(rc == 0 && in);
    CHECK(in->certifying && in->all_passed && in->n_cands == 2);
    CHECK(in->cands[0].cand.value == 10.4); /* lower is better: ci_hi, not the median */
    CHECK(in->cands[1].cand.value == 480);  /* higher is better: ci_lo */
    CHECK(strcmp(in->cands[0].cand.device_class, "GPU X/sm_90") == 0);

    CHECK(kg_marks_new(&m) == 0);
    CHECK(kg_advance_apply(m, in, &mv) == 0 && mv.n == 2 && !mv.v[0].had_old);
    CHECK(kg_advance_message(&msg, in, &mv) == 0);
    CHECK(msg && strstr(msg, "a [GPU X/sm_90] time_us_warm: (none) -> 10.4") && strstr(msg, "r-1"));
    free(msg);
    {
        /* Long ids (from a report) fit: the message is sized from its strings. */
        static char longid[3000], dc[] = "GPU X/sm_90", metric[] = "time_us_warm";
        memset(longid, 'x', sizeof longid - 1);
        kg_mark_move lm = { dc, longid, metric, false, 0, 1.5, 0.01, KG_LOWER_IS_BETTER };
        kg_mark_moves lmv = { &lm, 1 };
        CHECK(kg_advance_message(&msg, in, &lmv) == 0);
        CHECK(msg && strstr(msg, longid) && strstr(msg, "Run-Id: r-1\n"));
        free(msg);
    }
    /* The same run again moves nothing (not strictly better). */
    CHECK(kg_advance_apply(m, in, &mv) == 0 && mv.n == 0);
    kg_advance_input_free(in);

    /* Merge rule: a worse run never lowers a mark another runner set meanwhile. */
    in = parse("production", "true", "PASS", "11", "", &rc);
    CHECK(rc == 0 && kg_advance_apply(m, in, &mv) == 0 && mv.n == 0);
    CHECK(kg_marks_find(m, "GPU X/sm_90", "a", "time_us_warm")->value == 10.4);
    kg_advance_input_free(in);
    in = parse("production", "true", "PASS", "10.1", "", &rc);
    CHECK(rc == 0 && kg_advance_apply(m, in, &mv) == 0 && mv.n == 1 && mv.v[0].had_old &&
          mv.v[0].old_value == 10.4 && mv.v[0].new_value == 10.1);
    kg_advance_input_free(in);

    /* Not passing: a FAIL, a diagnostic stamp, a gate missing a case. */
    in = parse("production", "true", "FAIL", "10", "", &rc);
    CHECK(rc == 0 && !in->all_passed && strstr(in->why_not, "parity a: FAIL"));
    kg_advance_input_free(in);
    in = parse("diagnostic", "false", "PASS", "10", "", &rc);
    CHECK(rc == 0 && !in->certifying);
    kg_advance_input_free(in);
    in = parse("production", "false", "PASS", "10", "", &rc);
    CHECK(rc == 0 && !in->certifying);
    kg_advance_input_free(in);
    in = parse("production", "true", "PASS", "10.4",
               ",{\"gate\":\"bench\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":{\"decision\":"
               "\"SAME\"}}",
               &rc);
    CHECK(rc == 0 && !in->all_passed &&
          strstr(in->why_not, "gate parity has no result for case c"));
    kg_advance_input_free(in);

    /* Malformed bench figures are a parse error naming the file and case. */
    in = parse("production", "true", "PASS", "9", "", &rc);
    CHECK(rc == KG_EPARSE && !in && strstr(kg_error_last(), "test.json") &&
          strstr(kg_error_last(), "'a'"));

    test_counters();
    kg_mark_moves_free(&mv);
    kg_marks_free(m);
    return kg_test_done("test_advance");
}
