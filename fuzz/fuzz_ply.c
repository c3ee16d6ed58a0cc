/* libFuzzer: the Gaussian PLY reader (binary little-endian and ASCII), the input as the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("scene.ply"));
    fuzz_write(path, data, size);
    splat_scene s;
    splat_error err = {0};
    splat_status st = splat__ply_read(path, &s, NULL, &err);
    fuzz_check(st, &err, path, "splat__ply_read");
    if (st != SPLAT_OK) {
        FUZZ_ASSERT(!s.means && !s.sh && !s.count, "a failed read left a scene");
        return 0;
    }
    FUZZ_ASSERT(s.count == s.capacity && s.sh_degree <= 3 && (unsigned)s.rasterize_mode < SPLAT_RASTERIZE_MODE_COUNT,
                "count %u, capacity %u, degree %u, mode %d", s.count, s.capacity, s.sh_degree, (int)s.rasterize_mode);
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        const float *a = splat__scene_group_c(&s, g);
        for (uint64_t i = 0; i < (uint64_t)s.count * splat__groups[g].width; i++)
            FUZZ_ASSERT(isfinite(a[i]), "%s[%llu] is not finite", splat__groups[g].name, (unsigned long long)i);
    }
    splat__scene_free(&s);
    return 0;
}
