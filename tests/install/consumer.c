/* A program that uses an installed splatc, as a user's would: tests/install/check_install.sh
 * builds it against the installed tree with pkg-config and with CMake, shared and static, and
 * runs it. It checks the version, a PLY round trip, and one tiny frame rendered on the device
 * whose pixels are known. Prints what differs and exits 1 on any difference.
 *
 *   consumer VERSION DIR     (DIR: a folder it may write in) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "splatc.h"

static int failures;

#define CHECK(cond, ...)                                        \
    do {                                                        \
        if (!(cond)) {                                          \
            fprintf(stderr, "consumer: " __VA_ARGS__);          \
            fprintf(stderr, "\n");                              \
            failures++;                                         \
        }                                                       \
    } while (0)

/* One Gaussian far larger than the image (a standard deviation of 400 pixels, 8 pixels wide), fully
 * opaque, of colour `rgb` (SH degree 0: colour = 0.28209479 f_dc + 0.5). docs/RASTER.md: every
 * pixel blends it with alpha min(0.999, 1 * exp(-sigma)) = 0.999 (sigma < 1e-4 here), so a pixel is
 * 0.999 rgb + 0.001 background. */
static splat_status big_gaussian(splat_scene *s, const float rgb[3], splat_error *err)
{
    splat_status st = splat_scene_init(s, 1, err);
    if (st != SPLAT_OK) return st;
    s->count = 1;
    s->sh_degree = 0;
    const float mean[3] = {0, 0, 5}, logs = logf(100.0f), quat[4] = {1, 0, 0, 0};
    memcpy(s->means, mean, sizeof mean);
    for (int k = 0; k < 3; k++) s->log_scales[k] = logs;
    memcpy(s->quats, quat, sizeof quat);
    s->opacities[0] = 30.0f;
    memset(s->sh, 0, sizeof(float) * SPLAT_SH_COEFFS * 3);
    for (int c = 0; c < 3; c++) s->sh[c] = (rgb[c] - 0.5f) / 0.28209479177387814f;
    return SPLAT_OK;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: consumer VERSION DIR\n");
        return 2;
    }
    CHECK(strcmp(splat_version(), argv[1]) == 0, "splat_version() is %s, the package says %s", splat_version(), argv[1]);
    CHECK(strcmp(splat_status_str(SPLAT_ERR_IO), "SPLAT_ERR_IO") == 0, "splat_status_str: %s", splat_status_str(SPLAT_ERR_IO));

    /* files, no device: a scene survives a PLY round trip bit for bit */
    splat_error err = {0};
    const float rgb[3] = {0.2f, 0.6f, 0.9f}, bg[3] = {0.0f, 0.25f, 1.0f};
    splat_scene scene = {0}, back = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/consumer.ply", argv[2]);
    if (big_gaussian(&scene, rgb, &err) != SPLAT_OK || splat_scene_save_ply(path, &scene, &err) != SPLAT_OK ||
        splat_scene_load_ply(path, &back, &err) != SPLAT_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    CHECK(back.count == 1 && back.sh_degree == 0, "%s read back: %u Gaussians of degree %u", path, back.count, back.sh_degree);
    CHECK(memcmp(back.means, scene.means, 12) == 0 && memcmp(back.log_scales, scene.log_scales, 12) == 0 &&
              memcmp(back.quats, scene.quats, 16) == 0 && memcmp(back.opacities, scene.opacities, 4) == 0 &&
              memcmp(back.sh, scene.sh, 12) == 0,
          "%s read back differs from what was written", path);
    splat_scene_free(&back);

    /* the device: the frame of the big Gaussian, and of no Gaussian (the background exactly) */
    splat_ctx *ctx;
    if (splat_ctx_init(&ctx, NULL, &err) != SPLAT_OK) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    splat_camera cam = {.fx = 20, .fy = 20, .cx = 4, .cy = 4, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .width = 8, .height = 8};
    splat_render_desc rd = {.background = {bg[0], bg[1], bg[2]}};
    for (int empty = 0; empty < 2; empty++) {
        scene.count = empty ? 0 : 1;
        float *img = NULL;
        if (splat_render(ctx, &scene, &cam, 1, &rd, &img, &err) != SPLAT_OK) {
            fprintf(stderr, "consumer: render: %s\n", err.msg);
            failures++;
            continue;
        }
        double worst = 0;
        for (int p = 0; p < 64; p++)
            for (int c = 0; c < 3; c++) {
                double want = empty ? bg[c] : 0.999 * rgb[c] + 0.001 * bg[c];
                worst = fmax(worst, fabs(img[3 * p + c] - want));
            }
        CHECK(worst <= (empty ? 0 : 1e-5), "%s frame: a pixel is %.3g off its known value", empty ? "empty" : "one-Gaussian", worst);
        splat_free(img);
    }
    splat_ctx_free(ctx);
    splat_scene_free(&scene);
    if (!failures) printf("consumer: splatc %s: version, PLY round trip and known pixels OK\n", splat_version());
    return failures ? 1 : 0;
}
