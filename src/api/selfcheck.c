/* api: the self-check of `splatc info`: the device renders a fixed random scene and the
 * double-precision CPU reference (src/ref) renders it too. The shipped library calls the test
 * oracle here, and only here (docs/DESIGN.md says why). */
#include "api/api.h"
#include "ref/ref.h"

/* The largest error allowed at a pixel whose reference decisions are not borderline: the test
 * suite's image tolerance (T_TOL_IMAGE, tests/harness.h), which every GPU stage is held to against
 * the reference. Correct renders of this scene measure 6.7e-7 on lavapipe (llvmpipe, Mesa 22.3.6),
 * and the densest scenes of the raster tests up to 9e-6: the limit leaves a factor of 150 for
 * other drivers' exp and fused arithmetic, where the 1e-3 it replaces let through renders off by
 * over 1000 times what a correct one reaches. */
#define SELFCHECK_MAX_ERROR 1e-4

splat_status splat_ctx_selfcheck(splat_ctx *ctx, double *max_error, splat_error *err)
{
    /* A fixed-seed random scene (the same every run, so a failure reproduces), rendered on the
     * device and by the double-precision reference. */
    splat_rng rng;
    splat__rng_seed(&rng, 20261122);
    splat_camera cam = {.fx = 80, .fy = 84, .cx = 47, .cy = 33, .width = 96, .height = 64};
    cam.R[0] = cam.R[4] = cam.R[8] = 1;
    splat_scene s;
    splat_status st = splat_scene_init(&s, 200, err);
    if (st != SPLAT_OK) return st;
    s.count = 200;
    s.sh_degree = 3;
    for (uint32_t i = 0; i < s.count; i++) {
        double z = 2 + 4 * splat__rng_uniform(&rng);
        s.means[3 * i] = (float)((splat__rng_uniform(&rng) * 96 - 47) / 80 * z);
        s.means[3 * i + 1] = (float)((splat__rng_uniform(&rng) * 64 - 33) / 84 * z);
        s.means[3 * i + 2] = (float)z;
        for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)(log(z / 80) + 1.5 * splat__rng_uniform(&rng));
        for (int k = 0; k < 4; k++) s.quats[4 * i + k] = (float)splat__rng_normal(&rng);
        s.opacities[i] = (float)(splat__rng_uniform(&rng) * 4 - 1);
        for (int k = 0; k < 48; k++) s.sh[48 * i + k] = (float)(splat__rng_normal(&rng) * (k < 3 ? 1 : 0.2));
    }
    splat_render_desc desc = {.sh_degree = 3, .background = {0.2f, 0.3f, 0.4f}};
    float *img = NULL;
    st = splat_render(ctx, &s, &cam, 1, &desc, &img, err);
    splat_ref_settings set = {.sh_degree = 3, .background = {0.2f, 0.3f, 0.4f}};
    splat_ref_proj *proj = splat__calloc(s.count, sizeof *proj);
    splat_ref_lists lists = {0};
    splat_ref_image ref = {0};
    if (st == SPLAT_OK && !proj) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "selfcheck: out of host memory");
    if (st == SPLAT_OK) st = splat__ref_render(&s, &cam, &set, proj, &lists, &ref, err);
    if (st == SPLAT_OK) {
        double worst = 0;
        for (uint32_t p = 0; p < cam.width * cam.height; p++)
            if (ref.margin[p] >= 1e-4)
                for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(img[3 * p + c] - ref.rgb[3 * p + c]));
        *max_error = worst;
        if (!(worst < SELFCHECK_MAX_ERROR))
            st = splat__fail(err, SPLAT_ERR_DEVICE, "selfcheck: %s renders differently from the CPU reference (max error %.3g)",
                             ctx->gpu->info.name, worst);
    }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&ref);
    splat__free(proj);
    splat__free(img);
    splat_scene_free(&s);
    return st;
}
