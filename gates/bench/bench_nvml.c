/* Optional NVML (clocks, temperature, power, throttle reasons), loaded with dlopen because
 * nvml.h is not shipped with the toolkit here and the library exists only where a driver is.
 * The few declarations below follow the documented NVML C API (stable since NVML 3). */
#include <dlfcn.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench.h"
#include "core/report_keys.h"

typedef int nvml_ret;      /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef void *nvml_device; /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

struct kg_nvml {
    void *lib;
    nvml_device dev;
    nvml_ret (*shutdown)(void);
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*max_clock)(nvml_device, int, unsigned *);
    nvml_ret (*temp)(nvml_device, int, unsigned *);
    nvml_ret (*power)(nvml_device, unsigned *);
    nvml_ret (*power_limit)(nvml_device, unsigned *);
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
    nvml_ret (*energy)(nvml_device, unsigned long long *); /* mJ since the driver loaded */
};

kg_nvml *kg_nvml_open(const char *uuid)
{
    kg_nvml *n = calloc(1, sizeof *n);
    nvml_ret (*init)(void);
    nvml_ret (*by_uuid)(const char *, nvml_device *);
    if (!n)
        return NULL;
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        goto fail;
    *(void **)&init = dlsym(n->lib, "nvmlInit_v2");
    *(void **)&by_uuid = dlsym(n->lib, "nvmlDeviceGetHandleByUUID");
    *(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
    *(void **)&n->clock = dlsym(n->lib, "nvmlDeviceGetClockInfo");
    *(void **)&n->max_clock = dlsym(n->lib, "nvmlDeviceGetMaxClockInfo");
    *(void **)&n->temp = dlsym(n->lib, "nvmlDeviceGetTemperature");
    *(void **)&n->power = dlsym(n->lib, "nvmlDeviceGetPowerUsage");
    *(void **)&n->power_limit = dlsym(n->lib, "nvmlDeviceGetEnforcedPowerLimit");
    *(void **)&n->reasons = dlsym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    *(void **)&n->energy = dlsym(n->lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!n->reasons) /* the name before NVML 12.2 */
        *(void **)&n->reasons = dlsym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !by_uuid || !n->shutdown || init() != 0)
        goto fail;
    if (by_uuid(uuid, &n->dev) != 0) {
        n->shutdown();
        goto fail;
    }
    return n;
fail:
    if (n->lib)
        dlclose(n->lib);
    free(n);
    return NULL;
}

void kg_nvml_close(kg_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

double kg_nvml_sm_max_clock(kg_nvml *n)
{
    unsigned v = 0;
    if (n && n->max_clock && n->max_clock(n->dev, NVML_CLOCK_SM, &v) == 0 && v > 0)
        return v;
    return NAN;
}

int kg_nvml_energy_mj(kg_nvml *n, unsigned long long *mj)
{
    *mj = 0;
    if (!n || !n->energy)
        return KG_NVML_NO_LIBRARY;
    return n->energy(n->dev, mj);
}

static void add_reasons(cJSON *o, unsigned long long r)
{
    cJSON *a = cJSON_AddArrayToObject(o, KG_FIG_NVML_EVENT_REASONS);
    for (unsigned b = 0; a && kg_power_reason_name(b); b++)
        if (r & (1ULL << b))
            cJSON_AddItemToArray(a, cJSON_CreateString(kg_power_reason_name(b)));
}

void kg_nvml_poll(kg_nvml *n, kg_power_poll *p, double t_s)
{
    unsigned v = 0;
    bool sm = false, rs = false;
    p->t_s = t_s;
    p->sm_mhz = p->mem_mhz = p->power_w = p->temp_c = p->power_limit_w = NAN;
    p->reasons = 0;
    p->ok = false;
    if (!n)
        return;
    if (n->clock && n->clock(n->dev, NVML_CLOCK_SM, &v) == 0) {
        p->sm_mhz = v;
        sm = true;
    }
    if (n->clock && n->clock(n->dev, NVML_CLOCK_MEM, &v) == 0)
        p->mem_mhz = v;
    if (n->power && n->power(n->dev, &v) == 0)
        p->power_w = v / 1000.0;
    if (n->power_limit && n->power_limit(n->dev, &v) == 0)
        p->power_limit_w = v / 1000.0;
    if (n->temp && n->temp(n->dev, NVML_TEMPERATURE_GPU, &v) == 0)
        p->temp_c = v;
    rs = n->reasons && n->reasons(n->dev, &p->reasons) == 0;
    p->ok = sm && rs;
}

cJSON *kg_nvml_snapshot(kg_nvml *n)
{
    unsigned v = 0;
    unsigned long long r = 0;
    if (!n)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (n->clock && n->clock(n->dev, NVML_CLOCK_SM, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_SM_CLOCK, v);
    if (n->max_clock && n->max_clock(n->dev, NVML_CLOCK_SM, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_SM_CLOCK_MAX, v);
    if (n->clock && n->clock(n->dev, NVML_CLOCK_MEM, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_MEM_CLOCK, v);
    if (n->temp && n->temp(n->dev, NVML_TEMPERATURE_GPU, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_TEMPERATURE, v);
    if (n->power && n->power(n->dev, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_POWER, v / 1000.0);
    if (n->power_limit && n->power_limit(n->dev, &v) == 0)
        cJSON_AddNumberToObject(o, KG_FIG_NVML_POWER_LIMIT, v / 1000.0);
    if (n->reasons && n->reasons(n->dev, &r) == 0) {
        cJSON_AddNumberToObject(o, KG_FIG_NVML_EVENT_MASK, (double)r);
        add_reasons(o, r);
    }
    return o;
}
