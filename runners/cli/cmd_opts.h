/* The option prelude of the commands that read reports (report, compare, status, comment):
 * the parse with its --help, the required input, the outputs a converting command writes, and
 * the flags the two posting commands (status, comment) share. Each command keeps its own
 * table, prose and exit codes; what they all did alike is here once. */
#ifndef KG_CLI_CMD_OPTS_H
#define KG_CLI_CMD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include "core/opt.h"
#include "report/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A command's own table: every flag of it is the command's (standalone flags taken). */
#define KG_CMD_OPTS_TABLE(opts_, target_)                                              \
    {                                                                                  \
        .opts = (opts_), .n = sizeof(opts_) / sizeof((opts_)[0]), .target = (target_), \
        .standalone_ok = true                                                          \
    }

/* kg_opt_cmd_parse: 1 when --help was printed (the command exits 0), 0 to go on, <0 a usage
 * error (message set). Without positional (NULL), any positional argument is refused. */
int kg_cmd_opts_parse(const kg_opt_cmd *cmd, int argc, char **argv, const char **positional,
                      size_t max_positional, size_t *n_positional);

/* The input the command needs is missing: its usage on stderr, then KG_EINVAL "CMD: WHAT is
 * required" (WHAT: "--from-report REPORT.json"). */
int kg_cmd_opts_required(const kg_opt_cmd *cmd, const char *what);

/* An output of a converting command: its flag ("--junit") and path (NULL: not asked; "-":
 * standard output). */
typedef struct {
    const char *flag, *path;
} kg_cmd_out;

/* The first output given "-" (its flag), or NULL. */
const char *kg_cmd_opts_stdout(const kg_cmd_out *outs, size_t n);
/* Before anything is read or written: each output file writable, and, with `from`, not the
 * input itself (same device and inode, whatever the path: KG_EINVAL "CMD: FLAG OUT is the
 * input (--from FROM)"). */
int kg_cmd_opts_outputs_check(const char *command, const kg_cmd_out *outs, size_t n,
                              const char *from);
/* After they were written: "wrote PATH" on stderr for each output file. */
void kg_cmd_opts_outputs_wrote(const kg_cmd_out *outs, size_t n);

/* The flags of the posting commands (status, comment), over their options struct T (fields
 * plat, timeout_s, connect_timeout_s, retries, verbose); fn is T's --platform parser, one
 * line over kg_cmd_opts_platform. */
#define KG_CMD_OPT_PLATFORM(fn)                    \
    KG_OPT_FN_("platform", "github|gitlab", fn, 0, \
               "the API (default: detected from GITHUB_ACTIONS / GITLAB_CI)")
#define KG_CMD_OPTS_HTTP(T)                                                   \
    KG_OPT_DOUBLE_("timeout", "S", T, timeout_s, 0, 3600,                     \
                   "total time per request attempt (default 30)"),            \
        KG_OPT_DOUBLE_("connect-timeout", "S", T, connect_timeout_s, 0, 3600, \
                       "time to connect, per attempt (default 10)"),          \
        KG_OPT_INT_("retries", "N", T, retries, 0, 10,                        \
                    "retries on 429, 5xx and network errors, backoff (default 3)")
#define KG_CMD_OPT_VERBOSE(T) \
    KG_OPT_BOOL_("verbose", T, verbose, "each attempt and retry on stderr (status, timing)")

/* --platform github|gitlab into *plat. */
int kg_cmd_opts_platform(kg_status_platform *plat, const char *v);

#ifdef __cplusplus
}
#endif
#endif
