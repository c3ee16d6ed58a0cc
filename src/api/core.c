/* The public entry points of the core layer: status names, allocation hooks, host scenes. */
#include "core/core.h"

const char *splat_version(void) { return SPLAT_VERSION; }

const char *splat_status_str(splat_status status) { return splat__status_str(status); }

void splat_set_allocator(const splat_allocator *allocator) { splat__set_allocator(allocator); }

void splat_free(void *ptr) { splat__free(ptr); }

splat_status splat_scene_init(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    return splat__scene_init(scene, capacity, err);
}

splat_status splat_scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err)
{
    return splat__scene_reserve(scene, capacity, err);
}

void splat_scene_free(splat_scene *scene) { splat__scene_free(scene); }
