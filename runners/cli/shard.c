/* --shard I/N in the command layer: the weight of a case from the marks a command loaded (the
 * rule is in gates/core/shard.c), and `kgate report --merge` (the merge is gates/report/merge.c). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "report/merge.h"

/* The timed seconds of a case's bench: median x samples x k of its marks, the largest (every
 * device class and metric: the assignment must not depend on the GPU a job landed on). */
double kg_cli_shard_weight(const void *marks, const char *case_id)
{
    double best = 0;
    for (size_t i = 0; marks && i < kg_marks_count(marks); i++) {
        const kg_mark *m = kg_marks_at(marks, i);
        if (strcmp(m->case_id, case_id) != 0)
            continue;
        double us = m->run_median > 0 ? m->run_median : m->value;
        double s = us * 1e-6 * (m->samples > 0 ? m->samples : 1) * (m->k > 0 ? m->k : 1);
        if (strncmp(m->metric, "time_us", 7) == 0 && s > best)
            best = s;
    }
    return best;
}

void kg_cli_shard_weigh(kg_common_opts *co, const kg_marks *marks)
{
    co->shard_weight = kg_cli_shard_weight;
    co->shard_ctx = marks;
}

int kg_cli_report_merge(const char *out, const char *const *shards, size_t n)
{
    int rc = 0, code = KG_EXIT_PASS, counts[KG_VERDICT_N];
    cJSON **in = calloc(n ? n : 1, sizeof *in), *merged = NULL;
    char *text = NULL;
    if (!in)
        return KG_ERR(KG_ENOMEM, "out of memory merging reports");
    if (n < 1) {
        rc = KG_ERR(KG_EINVAL, "report --merge OUT SHARD.json...: no shard report given");
        goto cleanup;
    }
    KG_TRY(kg_path_check_writable(out));
    for (size_t i = 0; i < n; i++)
        KG_TRY(kg_json_load(&in[i], shards[i]));
    KG_TRY(kg_report_merge(&merged, (const cJSON *const *)in, shards, n, kg_report_key(), counts));
    if (!(text = cJSON_Print(merged))) {
        rc = KG_ERR(KG_ENOMEM, "out of memory writing the merged report");
        goto cleanup;
    }
    size_t len = strlen(text);
    text[len] = '\n';
    KG_TRY(kg_file_write_atomic(out, text, len + 1));
    code = kg_exit_code_for_counts(counts);
    printf("report --merge: %zu shard(s): %d passed, %d warnings, %d failed, %d errors, %d "
           "skipped\nreport: %s\n",
           n, counts[KG_VERDICT_PASS], counts[KG_VERDICT_WARN], counts[KG_VERDICT_FAIL],
           counts[KG_VERDICT_ERROR], counts[KG_VERDICT_SKIP], out);
cleanup:
    cJSON_free(text);
    cJSON_Delete(merged);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(in[i]);
    free(in);
    return rc < 0 ? rc : code;
}
