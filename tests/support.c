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

double t_norm_err(const float *got, const double *want, const double *scale, uint64_t rows, uint32_t width,
                  const bool *skip, double *want_norm)
{
    double num = 0, den = 0, den_scale = 0;
    for (uint64_t i = 0; i < rows; i++) {
        if (skip && skip[i]) continue;
        for (uint32_t k = 0; k < width; k++) {
            double w = want[i * width + k], d = (double)got[i * width + k] - w;
            num += d * d;
            den += w * w;
            if (scale) den_scale += scale[i * width + k] * scale[i * width + k];
        }
    }
    if (want_norm) *want_norm = sqrt(den);
    den = fmax(den, den_scale);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
