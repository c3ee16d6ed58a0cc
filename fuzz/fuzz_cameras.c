/* libFuzzer: the camera list reader of `splatc render` (both JSON forms), the input as the file;
 * read with names and without. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cameras(const splat_camera *c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        bool ok = isfinite(c[i].fx) && isfinite(c[i].fy) && isfinite(c[i].cx) && isfinite(c[i].cy);
        for (int k = 0; k < 9; k++) ok = ok && isfinite(c[i].R[k]);
        for (int k = 0; k < 3; k++) ok = ok && isfinite(c[i].t[k]);
        FUZZ_ASSERT(ok && c[i].fx > 0 && c[i].fy > 0 && c[i].width >= 1 && c[i].height >= 1,
                    "camera %u: %ux%u f %g %g c %g %g", i, c[i].width, c[i].height, c[i].fx, c[i].fy, c[i].cx,
                    c[i].cy);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[1024];
    if (!path[0]) snprintf(path, sizeof path, "%s", fuzz_path("cameras.json"));
    fuzz_write(path, data, size);
    splat_camera *cams;
    char **names;
    uint32_t n;
    splat_error err = {0};
    splat_status st = splat__cameras_read(path, &cams, &names, &n, &err);
    fuzz_check(st, &err, path, "splat__cameras_read");
    if (st == SPLAT_OK) {
        check_cameras(cams, n);
        for (uint32_t i = 0; i < n; i++) {
            FUZZ_ASSERT(names[i], "camera %u has no name", i);
            splat__free(names[i]);
        }
        splat__free(names);
        splat__free(cams);
    } else {
        FUZZ_ASSERT(!cams && !names && !n, "a failed read left cameras");
    }

    splat_error err2 = {0};
    splat_status st2 = splat__cameras_read(path, &cams, NULL, &n, &err2);
    fuzz_check(st2, &err2, path, "splat__cameras_read without names");
    FUZZ_ASSERT(st2 == st, "read with names: %s, without: %s", splat__status_str(st), splat__status_str(st2));
    if (st2 == SPLAT_OK) {
        check_cameras(cams, n);
        splat__free(cams);
    }
    return 0;
}
