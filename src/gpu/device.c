#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu/gpu.h"

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    splat_gpu *g = user;
    if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)) {
        __atomic_add_fetch(&g->validation_messages, 1, __ATOMIC_RELAXED);
        fprintf(stderr, "splatc: vulkan validation: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

static bool has_layer(const char *name)
{
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, NULL);
    VkLayerProperties *props = splat__calloc(n ? n : 1, sizeof *props);
    if (!props) return false;
    vkEnumerateInstanceLayerProperties(&n, props);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(props[i].layerName, name) == 0;
    splat__free(props);
    return found;
}

static bool has_instance_ext(const char *name)
{
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
    VkExtensionProperties *props = splat__calloc(n ? n : 1, sizeof *props);
    if (!props) return false;
    vkEnumerateInstanceExtensionProperties(NULL, &n, props);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(props[i].extensionName, name) == 0;
    splat__free(props);
    return found;
}

static bool has_device_ext(VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL);
    VkExtensionProperties *props = splat__calloc(n ? n : 1, sizeof *props);
    if (!props) return false;
    vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(props[i].extensionName, name) == 0;
    splat__free(props);
    return found;
}

static splat_status create_instance(VkInstance *out, bool validation, bool *portability, splat_error *err)
{
    const char *exts[4];
    uint32_t n_ext = 0;
    const char *layers[1];
    uint32_t n_layers = 0;
    *portability = has_instance_ext(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    if (*portability) exts[n_ext++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    if (validation) {
        if (!has_layer("VK_LAYER_KHRONOS_validation"))
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED,
                               "validation requested but VK_LAYER_KHRONOS_validation is not installed "
                               "(Debian: vulkan-validationlayers)");
        layers[n_layers++] = "VK_LAYER_KHRONOS_validation";
        exts[n_ext++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "splatc",
        .pEngineName = "splatc",
        .apiVersion = VK_API_VERSION_1_2,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = validation ? &features : NULL,
        .flags = *portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
        .pApplicationInfo = &app,
        .enabledLayerCount = n_layers,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = n_ext,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = vkCreateInstance(&ci, NULL, out);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkCreateInstance (is a Vulkan driver installed?)");
    return SPLAT_OK;
}

static void read_info(VkPhysicalDevice phys, uint32_t index, splat_gpu_info *info)
{
    VkPhysicalDeviceSubgroupSizeControlProperties sgc = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceVulkan12Properties v12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    sg.pNext = &v12;
    bool size_control = has_device_ext(phys, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (size_control) v12.pNext = &sgc;
    vkGetPhysicalDeviceProperties2(phys, &props);
    const VkPhysicalDeviceLimits *lim = &props.properties.limits;

    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", props.properties.deviceName);
    snprintf(info->driver, sizeof info->driver, "%s %s", v12.driverName, v12.driverInfo);
    info->type = props.properties.deviceType;
    info->vendor_id = props.properties.vendorID;
    info->device_id = props.properties.deviceID;
    info->api_version = props.properties.apiVersion;
    info->index = index;
    info->subgroup_size = sg.subgroupSize;
    info->min_subgroup_size = size_control ? sgc.minSubgroupSize : sg.subgroupSize;
    info->max_subgroup_size = size_control ? sgc.maxSubgroupSize : sg.subgroupSize;
    info->max_storage_range = lim->maxStorageBufferRange;
    info->storage_align = lim->minStorageBufferOffsetAlignment;
    info->max_shared_memory = lim->maxComputeSharedMemorySize;
    for (int i = 0; i < 3; i++) info->max_group_count[i] = lim->maxComputeWorkGroupCount[i];
    info->max_group_invocations = lim->maxComputeWorkGroupInvocations;
    info->max_push_constants = lim->maxPushConstantsSize;
    info->timestamp_period_ns = lim->timestampPeriod;

    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
    vkGetPhysicalDeviceProperties2(phys, &p2);
    info->max_alloc = m3.maxMemoryAllocationSize;

    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(phys, &mem);
    bool all_local_visible = true, any_local = false;
    for (uint32_t h = 0; h < mem.memoryHeapCount; h++)
        if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT && mem.memoryHeaps[h].size > info->device_local_heap)
            info->device_local_heap = mem.memoryHeaps[h].size;
    for (uint32_t t = 0; t < mem.memoryTypeCount; t++) {
        VkMemoryPropertyFlags f = mem.memoryTypes[t].propertyFlags;
        if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
        any_local = true;
        if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) all_local_visible = false;
    }
    /* A discrete GPU with resizable BAR also exposes host-visible device memory, but host
     * access to it crosses the bus; only integrated and CPU devices (and Apple's, where every
     * device-local type is host-visible) read in place. */
    info->unified_memory = any_local && (all_local_visible || info->type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                                         info->type == VK_PHYSICAL_DEVICE_TYPE_CPU);

    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f11};
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    bool has_af = has_device_ext(phys, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    if (has_af) f11.pNext = &af;
    vkGetPhysicalDeviceFeatures2(phys, &feats);
    info->float_atomics = has_af && af.shaderBufferFloat32AtomicAdd;
    info->fp16_storage = f11.storageBuffer16BitAccess && f12.shaderFloat16;
    info->timestamps = lim->timestampComputeAndGraphics || lim->timestampPeriod > 0;
}

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

splat_status splat__gpu_list(splat_gpu_info *infos, uint32_t max, uint32_t *count, splat_error *err)
{
    VkInstance inst;
    bool portability;
    splat_status st = create_instance(&inst, false, &portability, err);
    if (st != SPLAT_OK) return st;
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(inst, &n, NULL);
    VkPhysicalDevice *phys = splat__calloc(n ? n : 1, sizeof *phys);
    if (!phys) {
        vkDestroyInstance(inst, NULL);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "listing devices: out of host memory");
    }
    vkEnumeratePhysicalDevices(inst, &n, phys);
    for (uint32_t i = 0; i < n && i < max; i++) read_info(phys[i], i, &infos[i]);
    *count = n;
    splat__free(phys);
    vkDestroyInstance(inst, NULL);
    return SPLAT_OK;
}

/* Why a device cannot run splatc, or NULL when it can. */
static const char *missing_requirement(VkPhysicalDevice phys, const splat_gpu_info *info)
{
    if (VK_API_VERSION_MAJOR(info->api_version) == 1 && VK_API_VERSION_MINOR(info->api_version) < 2)
        return "Vulkan 1.2";
    if (!has_device_ext(phys, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) return "VK_KHR_push_descriptor";
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    vkGetPhysicalDeviceProperties2(phys, &props);
    VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                  VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
                                  VK_SUBGROUP_FEATURE_VOTE_BIT;
    if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || (sg.supportedOperations & need) != need)
        return "subgroup basic, vote, arithmetic, ballot and shuffle operations in compute shaders";
    if (info->min_subgroup_size < 4) return "a subgroup size of at least 4";
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    vkGetPhysicalDeviceFeatures2(phys, &feats);
    if (!f12.timelineSemaphore) return "timeline semaphores";
    if (!f12.hostQueryReset) return "host query reset";
    /* Float atomics are not required: the deterministic backward adds without them. Only the
     * gpu layer's own test and benchmark shaders use them (where info.float_atomics says so). */
    return NULL;
}

static splat_status pick_device(splat_gpu *g, const splat_gpu_desc *desc, splat_error *err)
{
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(g->instance, &n, NULL);
    if (n == 0) return splat__fail(err, SPLAT_ERR_NO_DEVICE, "no Vulkan device found (install a driver, e.g. mesa-vulkan-drivers)");
    VkPhysicalDevice *phys = splat__calloc(n, sizeof *phys);
    if (!phys) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "choosing a device: out of host memory");
    vkEnumeratePhysicalDevices(g->instance, &n, phys);

    bool chosen = desc->choose_device;
    uint32_t want = desc->device_index;
    const char *env = getenv("SPLAT_DEVICE");
    if (!chosen && env && *env) {
        /* digits only: strtoul would read "-1" as the largest index and " 1" as 1 */
        char *end;
        errno = 0;
        unsigned long v = strtoul(env, &end, 10);
        if (*end != '\0' || env[0] < '0' || env[0] > '9' || errno || v > UINT32_MAX) {
            splat__free(phys);
            return splat__fail(err, SPLAT_ERR_INVALID_ARG,
                               "SPLAT_DEVICE=%s is not a device index (a number from 0; `splatc info` lists them)", env);
        }
        chosen = true;
        want = (uint32_t)v;
    }
    splat_status st = SPLAT_OK;
    if (chosen) {
        if (want >= n) {
            st = splat__fail(err, SPLAT_ERR_NO_DEVICE, "device %u requested but only %u Vulkan device%s present (see `splatc info`)",
                             want, n, n == 1 ? " is" : "s are");
        } else {
            read_info(phys[want], want, &g->info);
            const char *miss = missing_requirement(phys[want], &g->info);
            if (miss) st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "device %u (%s) lacks %s", want, g->info.name, miss);
            else g->phys = phys[want];
        }
    } else {
        int best_rank = 99;
        const char *why = NULL;
        splat_gpu_info info;
        for (uint32_t i = 0; i < n; i++) {
            read_info(phys[i], i, &info);
            const char *miss = missing_requirement(phys[i], &info);
            if (miss) {
                why = miss;
                continue;
            }
            if (type_rank(info.type) < best_rank) {
                best_rank = type_rank(info.type);
                g->phys = phys[i];
                g->info = info;
            }
        }
        if (!g->phys) st = splat__fail(err, SPLAT_ERR_UNSUPPORTED, "no Vulkan device has what splatc needs (last one lacked %s)", why);
    }
    splat__free(phys);
    return st;
}

static splat_status create_device(splat_gpu *g, splat_error *err)
{
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(g->phys, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    if (nq > 16) nq = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(g->phys, &nq, qf);
    g->queue_family = UINT32_MAX;
    for (uint32_t i = 0; i < nq; i++) {
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && g->queue_family == UINT32_MAX) g->queue_family = i;
    }
    if (g->queue_family == UINT32_MAX) return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s has no compute queue", g->info.name);
    if (qf[g->queue_family].timestampValidBits == 0) g->info.timestamps = false;

    const char *exts[5];
    uint32_t n_ext = 0;
    exts[n_ext++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (g->info.float_atomics) exts[n_ext++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
    if (has_device_ext(g->phys, "VK_KHR_portability_subset")) exts[n_ext++] = "VK_KHR_portability_subset";
    g->mem_budget = has_device_ext(g->phys, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    if (g->mem_budget) exts[n_ext++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;

    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
        .shaderBufferFloat32AtomicAdd = VK_TRUE,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = g->info.float_atomics ? &af : NULL,
        .storageBuffer16BitAccess = g->info.fp16_storage,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &f11,
        .timelineSemaphore = VK_TRUE,
        .hostQueryReset = VK_TRUE,
        .shaderFloat16 = g->info.fp16_storage,
    };
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    /* a second queue for the viewer only when asked (SPLAT_TWO_QUEUES=1) and the family has one: on
     * the H100 its frames then overlap training's kernels and slowed training more than waiting
     * their turn on one queue did (docs/PERFORMANCE.md, the viewer) */
    const char *two_asked = getenv("SPLAT_TWO_QUEUES");
    bool two = qf[g->queue_family].queueCount >= 2 && two_asked && *two_asked && strcmp(two_asked, "0") != 0;
    float prio[2] = {1.0f, 1.0f};
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = g->queue_family,
        .queueCount = two ? 2 : 1,
        .pQueuePriorities = prio,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &feats,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = n_ext,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = vkCreateDevice(g->phys, &dci, NULL, &g->device);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkCreateDevice on %s", g->info.name);
    vkGetDeviceQueue(g->device, g->queue_family, 0, &g->queue);
    g->queue2 = g->queue;
    if (two) vkGetDeviceQueue(g->device, g->queue_family, 1, &g->queue2);
    g->push_descriptor = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(g->device, "vkCmdPushDescriptorSetKHR");
    if (!g->push_descriptor) return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: vkCmdPushDescriptorSetKHR missing", g->info.name);
    vkGetPhysicalDeviceMemoryProperties(g->phys, &g->mem_props);
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = g->queue_family,
    };
    r = vkCreateCommandPool(g->device, &pci, NULL, &g->imm_pool);
    if (r != VK_SUCCESS) return splat__vk_fail(err, r, "vkCreateCommandPool on %s", g->info.name);
    static const char *const copies[2] = {"gpu_copy", "gpu_copy4"}, *const fills[2] = {"gpu_fill", "gpu_fill4"};
    splat_status st = SPLAT_OK;
    for (int k = 0; k < 2 && st == SPLAT_OK; k++) {
        st = splat__pipe_init(g, &g->copy_pipe[k], &(splat_pipe_desc){.shader = copies[k], .n_bindings = 2, .push_size = 12}, err);
        if (st == SPLAT_OK)
            st = splat__pipe_init(g, &g->fill_pipe[k], &(splat_pipe_desc){.shader = fills[k], .n_bindings = 1, .push_size = 12}, err);
    }
    return st;
}

splat_status splat__gpu_init(splat_gpu **out, const splat_gpu_desc *desc, splat_error *err)
{
    static const splat_gpu_desc defaults = {0};
    if (!desc) desc = &defaults;
    *out = NULL;
    splat_gpu *g = splat__calloc(1, sizeof *g);
    if (!g) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "gpu: out of host memory");
    const char *limit = getenv("SPLAT_MEM_LIMIT");
    if (limit && *limit) {
        char *end = NULL;
        double mib = strtod(limit, &end);
        if (*end || !(mib > 0) || mib > 1e12) {
            splat__free(g);
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "SPLAT_MEM_LIMIT: '%s' is not a size in MiB (a positive number)", limit);
        }
        g->mem_limit = (uint64_t)(mib * 1048576.0);
    }
    const char *hidden = getenv("SPLAT_MEM_BUDGET_UNKNOWN");
    g->mem_budget_hidden = hidden && *hidden && strcmp(hidden, "0") != 0;
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        splat__free(g);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "gpu: cannot create a mutex");
    }
    const char *env = getenv("SPLAT_VALIDATE");
    g->validation = desc->validation || (env && *env && strcmp(env, "0") != 0);

    bool portability;
    splat_status st = create_instance(&g->instance, g->validation, &portability, err);
    if (st != SPLAT_OK) goto fail;
    if (g->validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g->instance, "vkCreateDebugUtilsMessengerEXT");
        VkDebugUtilsMessengerCreateInfoEXT mci = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
            .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
            .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
            .pfnUserCallback = on_validation,
            .pUserData = g,
        };
        VkResult r = create ? create(g->instance, &mci, NULL, &g->messenger) : VK_ERROR_EXTENSION_NOT_PRESENT;
        if (r != VK_SUCCESS) {
            st = splat__vk_fail(err, r, "vkCreateDebugUtilsMessengerEXT");
            goto fail;
        }
    }
    st = pick_device(g, desc, err);
    if (st != SPLAT_OK) goto fail;
    st = create_device(g, err);
    if (st != SPLAT_OK) goto fail;
    *out = g;
    return SPLAT_OK;
fail:
    splat__gpu_free(g);
    return st;
}

void splat__gpu_free(splat_gpu *g)
{
    if (!g) return;
    if (g->device) {
        vkDeviceWaitIdle(g->device);
        for (int k = 0; k < 2; k++) splat__pipe_free(g, &g->copy_pipe[k]), splat__pipe_free(g, &g->fill_pipe[k]);
        if (g->imm_pool) vkDestroyCommandPool(g->device, g->imm_pool, NULL);
        vkDestroyDevice(g->device, NULL);
    }
    if (g->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(g->instance, g->messenger, NULL);
    }
    if (g->instance) vkDestroyInstance(g->instance, NULL);
    pthread_mutex_destroy(&g->lock);
    splat__free(g);
}

uint64_t splat__gpu_mem_available(splat_gpu *g, uint64_t *total)
{
    uint64_t avail = UINT64_MAX, size = UINT64_MAX;
    if (total) *total = size;
    if (g->mem_budget_hidden) return avail;
    pthread_mutex_lock(&g->lock);
    uint64_t in_use = g->mem_in_use;
    pthread_mutex_unlock(&g->lock);
    if (g->mem_limit) avail = g->mem_limit > in_use ? g->mem_limit - in_use : 0, size = g->mem_limit;
    if (g->mem_budget) {
        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, .pNext = &budget};
        vkGetPhysicalDeviceMemoryProperties2(g->phys, &props);
        uint32_t best = UINT32_MAX;
        for (uint32_t h = 0; h < props.memoryProperties.memoryHeapCount; h++)
            if ((props.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
                (best == UINT32_MAX || props.memoryProperties.memoryHeaps[h].size > props.memoryProperties.memoryHeaps[best].size))
                best = h;
        if (best != UINT32_MAX) {
            uint64_t b = budget.heapBudget[best], u = budget.heapUsage[best];
            if ((b > u ? b - u : 0) < avail) avail = b > u ? b - u : 0, size = b;
        }
    }
    if (total) *total = size;
    return avail;
}
