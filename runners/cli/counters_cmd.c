/* The marks side of `kgate counters` (and of `run`'s counters gate): the gate decides against
 * counter marks (dram_bytes_per_launch, inst_per_launch, ... keyed like bench marks by device
 * class, case and metric) that it never loads itself; they live a layer above it. */
#include <string.h>
#include "counters/counters.h"
#include "cli/cli.h"

static const kg_mark *cc_lookup(const void *marks, const char *cls, const char *id,
                                const char *metric)
{
    return kg_marks_find(marks, cls, id, metric);
}

int kg_cli_counters_prepare(kg_marks **out, kg_counters_gate_opts *o)
{
    int rc = 0;
    *out = NULL;
    o->marks_path = kg_marks_path_default(o->marks_path);
    if (o->marks_path) {
        KG_TRY(kg_marks_load(out, o->marks_path));
        o->lookup = cc_lookup;
        o->marks = *out;
    }
cleanup:
    return rc;
}

void kg_cli_counters_share(kg_counters_gate_opts *o, const kg_marks *marks, const char *path)
{
    if (!o || !marks)
        return;
    o->marks_path = path;
    o->lookup = cc_lookup;
    o->marks = marks;
}
