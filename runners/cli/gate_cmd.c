/* `kgate <gate>`, for every gate of the table (kg_gates[]): one command over that gate. The
 * options are the common table and the gate's own; the usage is generated from both.
 * A gate with marks hooks gets its marks loaded before the run and --save-marks after it
 * (gate_marks.c). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "preflight/preflight.h"

/* Parse the common options and the gate's (standalone ones included) into co and opts. */
static int gc_parse(const struct kg_gate *g, kg_common_opts *co, void *opts, int argc, char **argv,
                    bool *help)
{
    const kg_opt_table tables[] = {
        { .opts = kg_common_opt_table, .n = kg_n_common_opts, .target = co },
        { .opts = g->opts, .n = g->n_opts, .target = opts, .standalone_ok = true },
    };
    const kg_opt_cmd cmd = { .command = g->name,
                             .description = g->description,
                             .tables = tables,
                             .n_tables = g->n_opts ? 2 : 1 };
    return kg_opt_cmd_parse(&cmd, argc, argv, help, NULL, 0, NULL);
}

int kg_cmd_gate(kg_registry *reg, const struct kg_gate *g, int argc, char **argv)
{
    int rc = 0, code;
    kg_common_opts co = KG_COMMON_OPTS_INIT;
    kg_run run = { 0 };
    kg_cli_marks marks = { 0 };
    bool help = false;
    void *opts = calloc(1, g->opts_size ? g->opts_size : 1);
    if (!opts) {
        rc = KG_ERR(KG_ENOMEM, "out of memory parsing the %s options", g->name);
        goto cleanup;
    }
    if (g->opts_size)
        memcpy(opts, g->opts_init, g->opts_size);
    KG_TRY(gc_parse(g, &co, opts, argc, argv, &help));
    if (help)
        goto cleanup;
    /* A deviceless pass (preflight --static) reads this executable's cubins: no device, no
     * seed, no worker. */
    co.no_device = g->deviceless && g->deviceless(opts);
    if (g->marks) {
        KG_TRY(kg_cli_marks_prepare(&marks, g, opts));
        kg_cli_shard_weigh(&co, marks.marks); /* --shard: balanced by the marks it decides on */
    }
    KG_TRY(kg_run_begin(&run, g->name, &co, reg, NULL));
    KG_TRY(kg_run_gate(&run, reg, g, opts, false));
    if (g->marks)
        KG_TRY(kg_cli_marks_save(&marks, &run, g, opts));
cleanup:
    code = help && rc == 0 ? KG_EXIT_PASS : kg_run_finish(&run, rc);
    kg_cli_marks_free(&marks);
    kg_run_free(&run);
    free(opts);
    return code;
}
