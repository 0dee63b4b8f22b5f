/* The production step's fleet inputs: before the ratchet, every
 * candidate mark gets the GPU that measured it and what the class's run history teaches it
 * (gates/history/history_fleet.h). */
#include "cli/cli.h"
#include "core/report_keys.h"
#include "history/history_fleet.h"

int kg_cli_fleet_learn(kg_advance_input *in, kg_git *g, const kg_device_info *dev,
                       const cJSON *report)
{
    int rc = 0;
    kg_history_recs hist = { 0 };
    bool found = false;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(report, KG_RK_DEVICE);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(report, KG_RK_SHARD);
    const cJSON *parts = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sh, KG_RK_SHARD_MERGED))
                             ? cJSON_GetObjectItemCaseSensitive(sh, KG_RK_SHARD_PARTS)
                             : NULL;
    const char *uuid = dev ? dev->uuid
                           : cJSON_GetStringValue(
                                 cJSON_GetObjectItemCaseSensitive(d, KG_RK_DEVICE_UUID));
    const char *serial = dev ? dev->serial
                             : cJSON_GetStringValue(
                                   cJSON_GetObjectItemCaseSensitive(d, KG_RK_DEVICE_SERIAL));
    if (in->n_cands == 0)
        return 0;
    KG_TRY(kg_history_fleet_load(&hist, &found, g));
    KG_TRY(kg_history_fleet_apply(in, &hist, uuid, serial, parts));
cleanup:
    kg_history_recs_free(&hist);
    return rc;
}
