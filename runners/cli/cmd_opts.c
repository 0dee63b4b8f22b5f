/* The option prelude of the report commands (cmd_opts.h). */
#include <string.h>
#include <sys/stat.h>
#include "cli/cmd_opts.h"
#include "core/kg_core.h"

int kg_cmd_opts_parse(const kg_opt_cmd *cmd, int argc, char **argv, const char **positional,
                      size_t max_positional, size_t *n_positional)
{
    bool help = false;
    int rc = kg_opt_cmd_parse(cmd, argc, argv, &help, positional, max_positional, n_positional);
    return rc < 0 ? rc : help ? 1 : 0;
}

int kg_cmd_opts_required(const kg_opt_cmd *cmd, const char *what)
{
    kg_opt_cmd_usage(stderr, cmd);
    return KG_ERR(KG_EINVAL, "%s: %s is required", cmd->command, what);
}

static bool co_is_file(const kg_cmd_out *o) { return o->path && strcmp(o->path, "-") != 0; }

const char *kg_cmd_opts_stdout(const kg_cmd_out *outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (outs[i].path && !co_is_file(&outs[i]))
            return outs[i].flag;
    return NULL;
}

/* An output that is the input (same file: same device and inode, whatever the path) would be
 * overwritten by what is made of it. */
static int co_not_input(const char *command, const kg_cmd_out *o, const char *from)
{
    struct stat so, si;
    if (stat(o->path, &so) == 0 && stat(from, &si) == 0 && so.st_dev == si.st_dev &&
        so.st_ino == si.st_ino)
        return KG_ERR(KG_EINVAL,
                      "%s: %s %s is the input (--from %s): refused (it would "
                      "overwrite its own input; nothing was written)",
                      command, o->flag, o->path, from);
    return 0;
}

int kg_cmd_opts_outputs_check(const char *command, const kg_cmd_out *outs, size_t n,
                              const char *from)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (co_is_file(&outs[i])) {
            if (from)
                KG_TRY(co_not_input(command, &outs[i], from));
            KG_TRY(kg_path_check_writable(outs[i].path));
        }
cleanup:
    return rc;
}

void kg_cmd_opts_outputs_wrote(const kg_cmd_out *outs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (co_is_file(&outs[i]))
            fprintf(stderr, "wrote %s\n", outs[i].path);
}

int kg_cmd_opts_platform(kg_status_platform *plat, const char *v)
{
    if (strcmp(v, "github") == 0)
        *plat = KG_STATUS_PLATFORM_GITHUB;
    else if (strcmp(v, "gitlab") == 0)
        *plat = KG_STATUS_PLATFORM_GITLAB;
    else
        return KG_ERR(KG_EINVAL, "--platform: expected github or gitlab, got '%s'", v);
    return 0;
}
