/* The kgate command line: subcommand dispatch (the gates from the one table, then the other
 * commands, each in its own file).
 * Only this layer turns KG_E* codes into process exit codes. */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"

typedef struct {
    const char *name;
    kg_cmd_fn fn;
    const char *summary;
} kg_command;

/* One line per command that is not a gate; `kgate <gate>` is every gate of the one table
 * (gates/driver/gates.c), with its summary from its struct (gate_cmd.c). */
static const kg_command commands[] = {
    { "list", kg_cmd_list, "list the registered cases (no GPU needed)" },
    { "selftest", kg_cmd_selftest, "prove every gate catches its planted defects" },
    { "report", kg_cmd_report, "convert a report: JUnit XML, Markdown summary, HTML (no GPU)" },
    { "compare", kg_cmd_compare,
      "compare two reports by gate and case: verdicts, bench medians vs noise (no GPU)" },
    { "status", kg_cmd_status, "post per-gate commit statuses to GitHub or GitLab" },
    { "comment", kg_cmd_comment,
      "create or update the one PR/MR comment from the matrix's reports" },
    { "ab", kg_cmd_ab, "A/B two runner builds, interleaved processes: paired ratio and CI" },
    { "run", kg_cmd_run,
      "every gate into one report; --production commits advanced marks (libgit2)" },
    { "marks", kg_cmd_marks,
      "high-water marks: show, diff, lower, history, guard, advance --from-report" },
    { "history", kg_cmd_history,
      "every run on record: append a report to the history branch, render trend charts" },
};

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [--verbose] [--color WHEN] <command> [options]   (%s <command> "
            "--help for its options)\n\ncommands:\n",
            prog, prog);
    for (size_t i = 0; i < kg_n_gates; i++)
        fprintf(f, "  %-10s %s\n", kg_gates[i]->name, kg_gates[i]->summary);
    for (size_t i = 0; i < KG_ARRAY_LEN(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n--verbose (or KGATE_DEBUG=1): runtime errors name their source location\n"
               "--color auto|always|never: verdict words in colour (auto: on a terminal, unless "
               "NO_COLOR is set)\n");
    fprintf(f, "\nthe gates and run:\n%s(every command's --help lists its own)\n",
            kg_opt_exit_code_lines);
}

/* The options before the command: --verbose, --color WHEN (or --color=WHEN). */
static int main_globals(int *argc, char ***argv)
{
    for (;;) {
        const char *a = *argc >= 2 ? (*argv)[1] : "";
        int take = 1, rc = 0;
        if (strcmp(a, "--verbose") == 0) {
            setenv("KGATE_DEBUG", "1", 1);
        } else if (strncmp(a, "--color=", 8) == 0) {
            rc = kg_color_set("--color", a + 8);
        } else if (strcmp(a, "--color") == 0) {
            if (*argc < 3)
                return KG_ERR(KG_EINVAL, "kgate: flag '--color' needs a value");
            rc = kg_color_set("--color", (*argv)[2]);
            take = 2;
        } else {
            return 0;
        }
        if (rc < 0)
            return rc;
        *argc -= take;
        *argv += take;
    }
}

int kg_cli_main(kg_registry *reg, int reg_rc, int argc, char **argv)
{
    int code;
    const char *prog = "kgate";
    if (reg_rc >= 0)
        reg_rc = kg_gates_check_cases(reg);
    if (reg_rc < 0) {
        fprintf(stderr, "kgate: case registration failed: %s\n", kg_error_last());
        code = KG_EXIT_USAGE;
        goto done;
    }
    /* `kgate --verbose CMD ...`: messages carry their source location, here and in the
     * workers this process starts (they inherit the environment). `kgate --color WHEN CMD`:
     * colour decided here, before any worker is forked (a command's own --color may still
     * override it). */
    if (kg_color_set("--color", "auto") < 0 || main_globals(&argc, &argv) < 0) {
        code = kg_cli_fail(KG_EINVAL);
        goto done;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout, prog);
        code = argc < 2 ? KG_EXIT_USAGE : KG_EXIT_PASS;
        goto done;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* the build id: the same in every runner of one kgate build (the selftest
         * certificate is bound to it), whatever kernels the runner registers */
        printf("kgate %s (build %s)\n", KG_VERSION_STRING, kg_build_id());
        code = KG_EXIT_PASS;
        goto done;
    }
    const struct kg_gate *g = kg_gate_find(argv[1]);
    if (g) {
        code = kg_cmd_gate(reg, g, argc - 1, argv + 1);
        goto done;
    }
    for (size_t i = 0; i < KG_ARRAY_LEN(commands); i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            code = commands[i].fn(reg, argc - 1, argv + 1);
            goto done;
        }
    fprintf(stderr, "kgate: unknown command '%s'\n", argv[1]);
    usage(stderr, prog);
    code = KG_EXIT_USAGE;
done:
    fflush(stdout);
    kg_registry_free(reg);
    return code;
}
