#include "core/core.h"

static splat_status scene_alloc(splat_scene *s, uint32_t capacity, splat_error *err)
{
    size_t n = capacity ? capacity : 1;
    float *means = splat__realloc(s->means, n * 3 * sizeof(float));
    if (means) s->means = means;
    float *log_scales = splat__realloc(s->log_scales, n * 3 * sizeof(float));
    if (log_scales) s->log_scales = log_scales;
    float *quats = splat__realloc(s->quats, n * 4 * sizeof(float));
    if (quats) s->quats = quats;
    float *opacities = splat__realloc(s->opacities, n * sizeof(float));
    if (opacities) s->opacities = opacities;
    float *sh = splat__realloc(s->sh, n * SPLAT_SH_COEFFS * 3 * sizeof(float));
    if (sh) s->sh = sh;
    if (!means || !log_scales || !quats || !opacities || !sh)
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene: out of host memory for %u Gaussians",
                           capacity);
    s->capacity = capacity;
    return SPLAT_OK;
}

splat_status splat__scene_init(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    SPLAT_ASSERT(scene);
    memset(scene, 0, sizeof *scene);
    splat_status st = scene_alloc(scene, capacity, err);
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}

splat_status splat__scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    SPLAT_ASSERT(scene);
    if (capacity <= scene->capacity) return SPLAT_OK;
    return scene_alloc(scene, capacity, err);
}

void splat__scene_free(splat_scene *scene)
{
    if (!scene) return;
    splat__free(scene->means);
    splat__free(scene->log_scales);
    splat__free(scene->quats);
    splat__free(scene->opacities);
    splat__free(scene->sh);
    memset(scene, 0, sizeof *scene);
}
