/* What the fuzzed loaders link but never reach: the GPU side of core (device.c needs CUDA). */
#include "core/kg_core.h"

cJSON *kg_device_to_json(const kg_device_info *info)
{
    (void)info;
    return cJSON_CreateNull();
}
