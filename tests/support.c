#include "gpu/gpu.h"
#include "gpu_support.h"
#include "harness.h"

static splat_gpu *g_gpu;

static void free_gpu(void)
{
    splat__gpu_free(g_gpu);
    g_gpu = NULL;
}

splat_gpu *t_gpu(void)
{
    if (g_gpu) return g_gpu;
    splat_error err = {0};
    if (splat__gpu_init(&g_gpu, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "no GPU:", "%s", err.msg);
        return NULL;
    }
    static bool printed;
    if (!printed) {
        printf("device: %s (%s), subgroup %u, validation %s\n", g_gpu->info.name, g_gpu->info.driver,
               g_gpu->info.subgroup_size, g_gpu->validation ? "on" : "off");
        printed = true;
    }
    atexit(free_gpu);
    return g_gpu;
}

/* After every case: the validation layers must have stayed silent and every device buffer the
 * case allocated must have been freed. */
int splat_test_after_case(void)
{
    if (!g_gpu) return 0;
    int bad = 0;
    if (g_gpu->validation_messages) {
        fprintf(stderr, "%u Vulkan validation message(s) during the case\n", g_gpu->validation_messages);
        g_gpu->validation_messages = 0;
        bad = 1;
    }
    if (g_gpu->mem_in_use) {
        fprintf(stderr, "%llu bytes of device memory still allocated after the case\n",
                (unsigned long long)g_gpu->mem_in_use);
        bad = 1;
    }
    return bad;
}
