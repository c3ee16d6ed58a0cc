/* Shader statistics benchmark: what the driver made of the library's compute shaders, as it
 * reports it through VK_KHR_pipeline_executable_properties (registers a thread, local memory a
 * thread, shared memory a workgroup, code size). Local memory is where the driver keeps arrays it
 * cannot index in registers: a trip to memory per access (docs/PERFORMANCE.md, "The driver's own
 * statistics"). Prints a table; fails where the driver reports nothing (lavapipe does not).
 * Usage: bench_pipelines [--device N] [NAME[:ID=VALUE,...] ...]
 * Without names, training's shaders with the specialisations training gives them on a device
 * with subgroups of 32 (renderer.c and trainer.c choose them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "core/core.h"
#include "gpu/spirv.h"

static const char *const training[] = {
    "project_fwd:0=1", "isect_fwd", "tile_sort:0=2048,1=1", "rasterize_fwd", "loss_fwd", "loss_bwd",
    "rasterize_bwd:0=2,1=32", "project_bwd:0=1,1=1", "adam:0=1",
};

#define MAX_SPEC 8

static void fail(const char *what, VkResult r)
{
    fprintf(stderr, "bench_pipelines: %s failed (VkResult %d)\n", what, r);
    exit(1);
}

/* A shader and its specialisations, from NAME[:ID=VALUE,...]; exits with a message on a name
 * that is not embedded or a list it cannot read, so that arguments are checked before the device. */
typedef struct spec_arg {
    const splat__spirv *spv;
    VkSpecializationMapEntry map[MAX_SPEC];
    uint32_t values[MAX_SPEC], n;
} spec_arg;

static void parse(const char *arg, spec_arg *a)
{
    char name[64];
    size_t len = strcspn(arg, ":");
    snprintf(name, sizeof name, "%.*s", (int)len, arg);
    a->spv = splat__spirv_find(splat__spirv_table, name);
    if (!a->spv) {
        fprintf(stderr, "bench_pipelines: no embedded shader '%s'\n", name);
        exit(1);
    }
    a->n = 0;
    for (const char *p = arg[len] ? arg + len + 1 : NULL; p && *p;) {
        unsigned id, value;
        if (a->n == MAX_SPEC) {
            fprintf(stderr, "bench_pipelines: '%s': more than %d specialisations\n", arg, MAX_SPEC);
            exit(1);
        }
        if (sscanf(p, "%u=%u", &id, &value) != 2) {
            fprintf(stderr, "bench_pipelines: '%s': specialisations are ID=VALUE,...\n", arg);
            exit(1);
        }
        a->map[a->n] = (VkSpecializationMapEntry){id, 4 * a->n, 4};
        a->values[a->n++] = value;
        p = strchr(p, ',');
        if (p) p++;
    }
}

/* One row of the table: the shader's pipeline created with statistics, then its statistics. */
static void report(VkDevice dev, VkPipelineLayout layout, const char *arg)
{
    spec_arg a;
    parse(arg, &a);
    const splat__spirv *spv = a.spv;
    uint32_t n_spec = a.n;
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = spv->size,
                                    .pCode = spv->code};
    VkShaderModule module;
    VkResult r = vkCreateShaderModule(dev, &smi, NULL, &module);
    if (r != VK_SUCCESS) fail("vkCreateShaderModule", r);
    VkSpecializationInfo spec = {.mapEntryCount = n_spec, .pMapEntries = a.map, .dataSize = 4 * n_spec, .pData = a.values};
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module, .pName = "main", .pSpecializationInfo = n_spec ? &spec : NULL},
        .layout = layout,
    };
    VkPipeline pipe;
    r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &pipe);
    if (r != VK_SUCCESS) fail("vkCreateComputePipelines", r);
    PFN_vkGetPipelineExecutableStatisticsKHR get =
        (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR");
    VkPipelineExecutableInfoKHR info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = SPLAT_COUNTOF(st);
    for (uint32_t i = 0; i < n; i++) st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    r = get(dev, &info, &n, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) fail("vkGetPipelineExecutableStatisticsKHR", r);
    printf("| %s |", arg);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR  ? st[i].value.u64
                     : st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR ? (uint64_t)st[i].value.i64
                     : st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR ? st[i].value.b32
                                                                                           : (uint64_t)st[i].value.f64;
        /* the NVIDIA driver reports local memory as 2^36 plus the bytes */
        if (strstr(st[i].name, "Local Memory") && v >= (1ull << 36)) v -= 1ull << 36;
        printf(" %s %llu |", st[i].name, (unsigned long long)v);
    }
    printf("\n");
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyShaderModule(dev, module, NULL);
}

int main(int argc, char **argv)
{
    uint32_t want = 0;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--device") == 0) want = (uint32_t)atoi(argv[2]), first = 3;
    for (int i = first; i < argc; i++) {
        spec_arg a;
        parse(argv[i], &a);
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    VkResult r = vkCreateInstance(&ici, NULL, &inst);
    if (r != VK_SUCCESS) fail("vkCreateInstance", r);
    VkPhysicalDevice pds[16];
    uint32_t n = SPLAT_COUNTOF(pds);
    vkEnumeratePhysicalDevices(inst, &n, pds);
    if (want >= n) {
        fprintf(stderr, "bench_pipelines: no device %u (%u found)\n", want, n);
        return 1;
    }
    VkPhysicalDevice pd = pds[want];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    /* every feature the device has, so that any shader of the library compiles */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &pe};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    if (!pe.pipelineExecutableInfo) {
        fprintf(stderr, "bench_pipelines: %s does not report pipeline statistics (VK_KHR_pipeline_executable_properties)\n",
                props.deviceName);
        return 1;
    }
    float prio = 1;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1, .pQueuePriorities = &prio};
    const char *ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &q, .enabledExtensionCount = 1, .ppEnabledExtensionNames = &ext};
    VkDevice dev;
    r = vkCreateDevice(pd, &dci, NULL, &dev);
    if (r != VK_SUCCESS) fail("vkCreateDevice", r);
    /* a layout with room for any shader of the library: 32 storage buffers, 128 bytes of push constants */
    VkDescriptorSetLayoutBinding b[32];
    for (uint32_t i = 0; i < 32; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 32,
                                          .pBindings = b};
    VkDescriptorSetLayout set;
    r = vkCreateDescriptorSetLayout(dev, &dl, NULL, &set);
    if (r != VK_SUCCESS) fail("vkCreateDescriptorSetLayout", r);
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 128};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &set, .pushConstantRangeCount = 1, .pPushConstantRanges = &push};
    VkPipelineLayout layout;
    r = vkCreatePipelineLayout(dev, &pli, NULL, &layout);
    if (r != VK_SUCCESS) fail("vkCreatePipelineLayout", r);

    printf("device: %s\n\n| shader:spec | statistics |\n| --- | --- |\n", props.deviceName);
    if (first < argc)
        for (int i = first; i < argc; i++) report(dev, layout, argv[i]);
    else
        for (size_t i = 0; i < SPLAT_COUNTOF(training); i++) report(dev, layout, training[i]);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorSetLayout(dev, set, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    return 0;
}
