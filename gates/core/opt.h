/* Declarative command-line options (the model: libgit2's src/cli/opt.h). A command, and every
 * gate, declares a table of kg_opt; one parser (opt.c) fills the options structs those tables
 * point into, and the usage text is generated from the same tables, so a flag, its value name
 * and its help line exist once.
 *
 *   static const kg_opt parity_opts[] = {
 *       KG_OPT_STRING_("report", "FILE.json", my_opts, report_path, "write the JSON report"),
 *       ...
 *   };
 *
 * Values are checked strictly where they are parsed: a bad value is KG_EINVAL with a message
 * naming the flag ("--budget: expected seconds in (0, 3600], got 'x'"). */
#ifndef KG_OPT_H
#define KG_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KG_OPT_BOOL = 0, /* a switch: sets a bool to true (no value) */
    KG_OPT_STRING,   /* a non-empty string value (borrowed from argv) */
    KG_OPT_INT,      /* an int in [lo, hi], decimal, whole string */
    KG_OPT_U64,      /* an unsigned 64-bit integer, decimal, whole string */
    KG_OPT_DOUBLE,   /* a finite double in (lo, hi] (lo exclusive, hi inclusive) */
    KG_OPT_FN        /* the value (NULL for a switch) goes to fn, which checks and stores it */
} kg_opt_kind;

enum {
    KG_OPT_F_SWITCH = 1u << 0,     /* KG_OPT_FN only: takes no value */
    KG_OPT_F_STANDALONE = 1u << 1, /* a gate option only its own command takes, not `run`
                                      (`bench --save-marks`, `preflight --update-baseline`) */
    KG_OPT_F_HIDDEN = 1u << 2      /* parsed, left out of the usage (internal flags) */
};

typedef struct kg_opt {
    const char *name;       /* long name without "--": "filter" */
    const char *value_name; /* "REGEX"; NULL for switches */
    kg_opt_kind kind;
    size_t offset;                            /* of the target field inside the options struct */
    double lo, hi;                            /* KG_OPT_INT, KG_OPT_DOUBLE: the accepted range */
    int (*fn)(void *opts, const char *value); /* KG_OPT_FN: 0 or a KG_E* code, message set */
    unsigned flags;
    const char *help; /* one line for the usage's option list */
} kg_opt;

#define KG_OPT_BOOL_(n, T, f, h)                                            \
    {                                                                       \
        .name = n, .kind = KG_OPT_BOOL, .offset = offsetof(T, f), .help = h \
    }
#define KG_OPT_STRING_(n, v, T, f, h)                                                          \
    {                                                                                          \
        .name = n, .value_name = v, .kind = KG_OPT_STRING, .offset = offsetof(T, f), .help = h \
    }
#define KG_OPT_INT_(n, v, T, f, l, u, h)                                                   \
    {                                                                                      \
        .name = n, .value_name = v, .kind = KG_OPT_INT, .offset = offsetof(T, f), .lo = l, \
        .hi = u, .help = h                                                                 \
    }
#define KG_OPT_U64_(n, v, T, f, h)                                                          \
    {                                                                                       \
        .name = n, .value_name = v, .kind = KG_OPT_U64, .offset = offsetof(T, f), .help = h \
    }
#define KG_OPT_DOUBLE_(n, v, T, f, l, u, h)                                                   \
    {                                                                                         \
        .name = n, .value_name = v, .kind = KG_OPT_DOUBLE, .offset = offsetof(T, f), .lo = l, \
        .hi = u, .help = h                                                                    \
    }
#define KG_OPT_FN_(n, v, fun, fl, h)                                                     \
    {                                                                                    \
        .name = n, .value_name = v, .kind = KG_OPT_FN, .fn = fun, .flags = fl, .help = h \
    }

/* One table and the struct its offsets point into. */
typedef struct {
    const kg_opt *opts;
    size_t n;
    void *target;
    bool standalone_ok; /* false: options flagged KG_OPT_F_STANDALONE are refused here */
} kg_opt_table;

/* Parse argv[1..argc) (argv[0] is the command name) against the tables, in order; the first
 * table that names a flag takes it. Accepts "--name VALUE" and "--name=VALUE". "--help" sets
 * *help and stops (returns 0). Positional arguments are collected into positional[] (up to
 * max_positional, in order, *n_positional set); more, or any when positional is NULL, is
 * KG_EINVAL "CMD: unexpected argument 'X'". An unknown flag is KG_EINVAL "CMD: unknown flag
 * '--x'", a missing value "CMD: flag '--seed' needs a value", a switch given one "CMD: flag
 * '--json' takes no value, got '--json=1'"; `command` names CMD in messages. */
int kg_opt_parse(const kg_opt_table *tables, size_t n_tables, const char *command, int argc,
                 char **argv, bool *help, const char **positional, size_t max_positional,
                 size_t *n_positional);

/* The usage text: "usage: kgate CMD [--flag VALUE] ...\n" wrapped at 92 columns (required
 * positional words `synopsis_tail` appended, e.g. "A_EXE B_EXE"), then `description` (may be
 * NULL), then "options:\n" with one "  --name VALUE  help" line per visible option of every
 * table, then the exit-code lines every command shares. */
void kg_opt_usage(FILE *out, const char *command, const char *synopsis_tail,
                  const kg_opt_table *tables, size_t n_tables, const char *description);

/* ---- additions (opt.c) ------------------------------------------------------------------
 *
 * Value rules the kinds apply (the messages name the flag, as kg_parse_* do):
 *   KG_OPT_STRING  "" is refused: "CMD: flag '--name' needs a value".
 *   KG_OPT_INT     kg_parse_int over [lo, hi] ("--n: expected an integer in [lo, hi], got 'x'");
 *                  lo == hi == 0 means the whole int range.
 *   KG_OPT_U64     decimal digits only, no sign ("--n: expected a non-negative integer, ...").
 *   KG_OPT_DOUBLE  kg_parse_double ("--n: expected a number, got 'x'"), then (lo, hi]:
 *                  "--n: expected seconds in (0, 3600], got 'x'"; the noun comes from the value
 *                  name: S seconds, MS milliseconds, US microseconds, else "a number".
 *                  lo == hi == 0 means any finite number.
 *   A switch (KG_OPT_BOOL, KG_OPT_FN with KG_OPT_F_SWITCH) given "=VALUE", and an option
 *   flagged KG_OPT_F_STANDALONE in a table that is not standalone_ok, are usage errors like an
 *   unknown flag. "--" ends the options: every later argument is positional. */

/* Display only: the synopsis shows the option without brackets. The command checks that it
 * was given (with its own message: some name several flags at once). */
#define KG_OPT_F_REQUIRED (1u << 3)
#define KG_OPT_STRING_REQUIRED_(n, v, T, f, h)                                       \
    {                                                                                \
        .name = n, .value_name = v, .kind = KG_OPT_STRING, .offset = offsetof(T, f), \
        .flags = KG_OPT_F_REQUIRED, .help = h                                        \
    }

/* The exit-code lines kg_opt_usage ends with: those of the gates and `run` (and `kgate
 * --help`). A command whose codes differ gives its own (kg_opt_cmd.exit_codes). */
extern const char kg_opt_exit_code_lines[];

/* The synopsis alone: `lead` ("usage: ", or "  " in a list of subcommands), then
 * "kgate CMD [--flag VALUE] ... TAIL", wrapped at 92 columns under the first flag. */
void kg_opt_synopsis(FILE *out, const char *lead, const char *command, const char *synopsis_tail,
                     const kg_opt_table *tables, size_t n_tables);

/* A command's whole option surface, for the two calls every command makes. */
typedef struct {
    const char *command;       /* "report", "marks lower": CMD in the usage and the messages */
    const char *synopsis_tail; /* required positional words, or NULL */
    const char *description;   /* the prose of --help (may be NULL) */
    const kg_opt_table *tables;
    size_t n_tables;
    const char *exit_codes; /* the help's footer: this command's own exit codes ("exit
                               codes: 0 written, 2 ..."); NULL: the gates' (and run's)
                               kg_opt_exit_code_lines */
} kg_opt_cmd;

/* kg_opt_parse for a command, printing what a user needs: --help prints the usage to stdout
 * (returns 0 with *help set); an unknown flag, a missing value, an unexpected argument or a
 * standalone option refused here leaves one usage line ("usage: kgate CMD [options]; kgate
 * CMD --help for more") that kg_cli_fail prints under the error (a bad value does not: its
 * message says everything). */
int kg_opt_cmd_parse(const kg_opt_cmd *cmd, int argc, char **argv, bool *help,
                     const char **positional, size_t max_positional, size_t *n_positional);
/* kg_opt_usage of the command. */
void kg_opt_cmd_usage(FILE *out, const kg_opt_cmd *cmd);

#ifdef __cplusplus
}
#endif
#endif
