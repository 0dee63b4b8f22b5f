/* Device probing: the one place that decides "no GPU" and describes the GPU in reports. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "core/kg_core.h"
#include "core/report_keys.h"

/* The board's serial through NVML (every figure knows its GPU; the UUID
 * comes from the runtime, the serial only from NVML, loaded with dlopen as the bench does).
 * Unavailable (no NVML, a board without one, a MIG or virtual GPU): "" and the reason. */
static void dev_serial(kg_device_info *info)
{
    typedef int (*init_fn)(void);
    typedef int (*by_uuid_fn)(const char *, void **);
    typedef int (*serial_fn)(void *, char *, unsigned);
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL), *dev = NULL;
    init_fn init = NULL, shutdown = NULL;
    by_uuid_fn by_uuid = NULL;
    serial_fn serial = NULL;
    int e = -1;
    info->serial[0] = '\0';
    if (!lib) {
        snprintf(info->serial_why, sizeof info->serial_why,
                 "NVML not loadable (libnvidia-ml.so.1)");
        return;
    }
    *(void **)&init = dlsym(lib, "nvmlInit_v2");
    *(void **)&shutdown = dlsym(lib, "nvmlShutdown");
    *(void **)&by_uuid = dlsym(lib, "nvmlDeviceGetHandleByUUID");
    *(void **)&serial = dlsym(lib, "nvmlDeviceGetSerial");
    if (!init || !shutdown || !by_uuid || !serial || init() != 0) {
        snprintf(info->serial_why, sizeof info->serial_why, "NVML did not initialise");
    } else {
        if ((e = by_uuid(info->uuid, &dev)) == 0)
            e = serial(dev, info->serial, sizeof info->serial);
        if (e != 0 || !info->serial[0]) {
            info->serial[0] = '\0';
            snprintf(info->serial_why, sizeof info->serial_why, "NVML: %s (code %d)",
                     e == 3 ? "not supported on this board" : "no serial for this device", e);
        }
        shutdown();
    }
    dlclose(lib);
}

int kg_device_open(kg_device_info *info, int ordinal)
{
    int rc = 0, count = 0;
    struct cudaDeviceProp p;
    memset(info, 0, sizeof *info);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
        e == cudaErrorSystemNotReady || e == cudaErrorNotSupported ||
        e == cudaErrorSystemDriverMismatch || count == 0) {
        (void)cudaGetLastError();
        return KG_ERR(KG_ENODEV, "no CUDA device available (%s)",
                      e == cudaSuccess ? "0 devices" : cudaGetErrorName(e));
    }
    KG_CUDA_CHECK(e);
    if (ordinal < 0 || ordinal >= count)
        return KG_ERR(KG_EINVAL, "--device %d: only %d CUDA device(s) present", ordinal, count);
    KG_CUDA_CHECK(cudaSetDevice(ordinal));
    KG_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
    info->ordinal = ordinal;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(info->uuid, sizeof info->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->global_mem = p.totalGlobalMem;
    info->l2_bytes = p.l2CacheSize;
    info->max_smem_per_sm = (int)p.sharedMemPerMultiprocessor;
    info->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    info->max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
    info->regs_per_sm = p.regsPerMultiprocessor;
    info->warp_size = p.warpSize;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, ordinal) == cudaSuccess)
        info->sm_clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess)
        info->mem_clock_khz = v;
    (void)cudaGetLastError();
    KG_CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
    KG_CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    dev_serial(info);
cleanup:
    return rc;
}

void kg_device_class(const kg_device_info *info, char *buf, size_t n)
{
    snprintf(buf, n, "%s/sm_%d%d", info->name, info->cc_major, info->cc_minor);
}

void kg_device_version_str(char *b, size_t n, int v)
{
    snprintf(b, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

cJSON *kg_device_to_json(const kg_device_info *d)
{
    char buf[64], cls[320];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, KG_RK_DEVICE_NAME, d->name);
    cJSON_AddStringToObject(o, KG_RK_DEVICE_UUID, d->uuid);
    if (d->serial[0]) {
        cJSON_AddStringToObject(o, KG_RK_DEVICE_SERIAL, d->serial);
    } else {
        cJSON_AddNullToObject(o, KG_RK_DEVICE_SERIAL);
        cJSON_AddStringToObject(o, KG_RK_DEVICE_SERIAL_WHY,
                                d->serial_why[0] ? d->serial_why : "not probed");
    }
    kg_device_class(d, cls, sizeof cls);
    cJSON_AddStringToObject(o, KG_RK_DEVICE_CLASS, cls);
    snprintf(buf, sizeof buf, "%d.%d", d->cc_major, d->cc_minor);
    cJSON_AddStringToObject(o, KG_RK_DEVICE_CC, buf);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_ORDINAL, d->ordinal);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_SM_COUNT, d->sm_count);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_GLOBAL_MEM, (double)d->global_mem);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_L2, d->l2_bytes);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_SM_CLOCK_MAX, d->sm_clock_khz / 1000.0);
    cJSON_AddNumberToObject(o, KG_RK_DEVICE_MEM_CLOCK_MAX, d->mem_clock_khz / 1000.0);
    kg_device_version_str(buf, sizeof buf, d->driver_version);
    cJSON_AddStringToObject(o, KG_RK_DRIVER, buf);
    kg_device_version_str(buf, sizeof buf, d->runtime_version);
    cJSON_AddStringToObject(o, KG_RK_RUNTIME, buf);
    return o;
}
