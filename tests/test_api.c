/* The public rendering API (include/splatc.h) against the CPU reference. */
#include "harness.h"
#include "raster_support.h"

/* The pixels not compared: those with a borderline decision, and every pixel of a tile where the
 * tile test was borderline (docs/RASTER.md, last section). */
static bool *unclear_pixels(const splat_ref_image *ref, const splat_ref_lists *lists, uint32_t W, uint32_t H)
{
    uint64_t px = (uint64_t)W * H;
    bool *skip = calloc(px, 1);
    for (uint64_t p = 0; p < px; p++) skip[p] = ref->margin[p] < T_PIXEL_MARGIN;
    for (uint32_t k = 0; k < lists->n_border; k++) {
        uint32_t tx = lists->border_tile[k] % lists->tiles_x, ty = lists->border_tile[k] / lists->tiles_x;
        for (uint32_t y = ty * 16; y < SPLAT_MIN(ty * 16 + 16, H); y++)
            for (uint32_t x = tx * 16; x < SPLAT_MIN(tx * 16 + 16, W); x++) skip[y * W + x] = true;
    }
    return skip;
}

/* splat_render and splat_render_backward on a random scene of n Gaussians: image, alpha and every
 * gradient group. Tiles where the tile test was borderline and pixels with a borderline decision
 * get no upstream gradient and are not compared (docs/RASTER.md, last section). */
static void check_api(bool sh_half, uint32_t n)
{
    splat_ctx *ctx;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    uint32_t W = 40 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 40), H = 30 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 30);
    splat_camera cam = t_random_camera(W, H);
    splat_scene s;
    t_random_scene(&s, n, &cam);
    uint32_t degree = (uint32_t)(splat__rng_u64(splat_test_rng()) % 4);
    splat_render_desc desc = {.sh_degree = degree ? degree : SPLAT_SH_DEGREE_0, .sh_half = sh_half};
    /* with half-float storage the GPU sees the coefficients rounded to half: so does the reference */
    if (sh_half)
        for (uint64_t k = 0; k < s.count * 48ull; k++) s.sh[k] = splat__f16_to_f32(splat__f32_to_f16(s.sh[k]));
    for (int c = 0; c < 3; c++) desc.background[c] = (float)t_uniform(0, 1);
    splat_ref_settings set = {.sh_degree = degree};
    memcpy(set.background, desc.background, sizeof set.background);
    splat_ref_proj *proj = calloc(s.count, sizeof *proj);
    splat_ref_lists lists;
    splat_ref_image ref;
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &ref, &err), &err);
    uint64_t px = (uint64_t)W * H;
    bool *skip = unclear_pixels(&ref, &lists, W, H);
    float *d_rgb = calloc(px * 3, 4), *d_alpha = calloc(px, 4), *img = malloc(px * 12), *alpha = malloc(px * 4);
    for (uint64_t p = 0; p < px; p++)
        if (!skip[p]) {
            for (int c = 0; c < 3; c++) d_rgb[3 * p + c] = (float)t_uniform(-1, 1);
            d_alpha[p] = (float)t_uniform(-1, 1);
        }
    splat_scene grads;
    T_OK(splat_render_backward(ctx, &s, &cam, &desc, d_rgb, d_alpha, &grads, img, alpha, &err), &err);
    float *fwd = NULL;
    T_OK(splat_render(ctx, &s, &cam, 1, &desc, &fwd, &err), &err);
    /* images by the suite's normalised metric, over the pixels compared */
    double *ref_alpha = malloc(px * sizeof(double));
    for (uint64_t p = 0; p < px; p++) {
        ref_alpha[p] = 1 - ref.T[p];
        if (skip[p]) continue;
        for (int c = 0; c < 3; c++)
            T_CHECK(fwd[3 * p + c] == img[3 * p + c], "splat_render and splat_render_backward render differently");
    }
    double e_rgb = t_norm_err(img, ref.rgb, NULL, px, 3, skip, NULL), e_alpha = t_norm_err(alpha, ref_alpha, NULL, px, 1, skip, NULL);
    free(ref_alpha);
    T_CHECK(e_rgb < T_TOL_IMAGE_NORM && e_alpha < T_TOL_IMAGE_NORM, "N=%u: image normalised error %.3g, alpha %.3g", n,
            e_rgb, e_alpha);
    splat_ref_grads rg;
    T_OK(splat__ref_grads_init(&rg, s.count, &err), &err);
    splat__ref_backward(&s, &cam, &set, proj, &lists, &ref, d_rgb, d_alpha, &rg);
    /* the scale of float32 rounding in the sums over pixels (tests/harness.h, t_norm_err) */
    splat_ref_grads rg_abs;
    T_OK(splat__ref_grads_init(&rg_abs, s.count, &err), &err);
    splat__ref_backward_scale(&s, &cam, &set, proj, &lists, &ref, d_rgb, d_alpha, &rg_abs);
    printf("  %s N=%u %ux%u degree %u: image error %.1e, alpha %.1e, gradient errors", sh_half ? "half SH" : "float SH", n, W, H,
           degree, e_rgb, e_alpha);
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        double e = t_norm_err(splat__scene_group_c(&grads, k), t_ref_group(&rg, k), t_ref_group(&rg_abs, k), s.count, splat__groups[k].width, NULL,
                              NULL);
        printf(" %s %.1e", splat__groups[k].name, e);
        T_CHECK(e < T_TOL_GRAD, "gradient of %s: normalised error %.3g", splat__groups[k].name, e);
    }
    printf("\n");
    /* d_alpha NULL is zero: the same bits as a buffer of zeros */
    float *zero = calloc(px, 4);
    splat_scene g_null, g_zero;
    T_OK(splat_render_backward(ctx, &s, &cam, &desc, d_rgb, NULL, &g_null, NULL, NULL, &err), &err);
    T_OK(splat_render_backward(ctx, &s, &cam, &desc, d_rgb, zero, &g_zero, NULL, NULL, &err), &err);
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++)
        T_CHECK(memcmp(splat__scene_group_c(&g_null, k), splat__scene_group_c(&g_zero, k),
                       (size_t)s.count * splat__groups[k].width * sizeof(float)) == 0,
                "gradient of %s: d_alpha NULL is not a zero d_alpha", splat__groups[k].name);
    splat_scene_free(&g_null), splat_scene_free(&g_zero);
    free(zero);
    splat__ref_grads_free(&rg);
    splat__ref_grads_free(&rg_abs);
    splat_free(fwd);
    splat_scene_free(&grads);
    free(d_rgb), free(d_alpha), free(img), free(alpha), free(skip), free(proj);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&ref);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
}

/* A dense scene, and a sparse one where every tile-list entry shows: in the dense one the last
 * (farthest) entry of a tile is hidden behind the others, so a tile range one short (ranges_fwd)
 * changed its image by 1e-6 at most and passed 3 runs in 4; in the sparse one it changes the
 * image by 7e-3 to 0.15 (normalised). */
SPLAT_TEST(api_render_backward_vs_ref)
{
    check_api(false, 200);
    check_api(false, 20);
}
SPLAT_TEST(api_render_sh_half_vs_ref)
{
    check_api(true, 200);
    check_api(true, 20);
}

/* One splat_render call over several cameras: most of one size, so the render recorded for the
 * first is replayed with the others' cameras, one wider and one taller than any is wide (the
 * buffers sized by the largest of each), so it is recorded again; each image against the
 * reference, over the pixels with a clear decision. */
SPLAT_TEST(api_render_cameras_vs_ref)
{
    splat_ctx *ctx;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    enum { K = 6 };
    uint32_t W = 40 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 40), H = 30 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 30);
    splat_camera cams[K];
    cams[0] = t_random_camera(W, H);
    for (uint32_t k = 1; k < K; k++) {
        cams[k] = cams[0];
        for (int c = 0; c < 3; c++) cams[k].t[c] += (float)t_uniform(-0.3, 0.3);
    }
    cams[3].width += 16 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 16);
    cams[5].height = cams[3].width + 8 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 16);
    splat_scene s;
    t_random_scene(&s, 120, &cams[0]);
    splat_render_desc desc = {.sh_degree = 3};
    float *img[K] = {0};
    T_OK(splat_render(ctx, &s, cams, K, &desc, img, &err), &err);
    splat_ref_settings set = {.sh_degree = 3};
    splat_ref_proj *proj = calloc(s.count, sizeof *proj);
    for (uint32_t k = 0; k < K; k++) {
        const splat_camera *cam = &cams[k];
        splat_ref_lists lists;
        splat_ref_image ref;
        T_OK(splat__ref_render(&s, cam, &set, proj, &lists, &ref, &err), &err);
        uint64_t px = (uint64_t)cam->width * cam->height;
        bool *skip = unclear_pixels(&ref, &lists, cam->width, cam->height);
        double e = t_norm_err(img[k], ref.rgb, NULL, px, 3, skip, NULL);
        printf("  camera %u (%ux%u): image error %.1e\n", k, cam->width, cam->height, e);
        T_CHECK(e < T_TOL_IMAGE_NORM, "camera %u of %u: image normalised error %.3g", k, K, e);
        free(skip);
        splat_free(img[k]);
        splat__ref_lists_free(&lists);
        splat__ref_image_free(&ref);
    }
    free(proj);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
}

/* A render never uses more SH than its scene has: a scene of degree D (random, 0 to 2) whose
 * coefficients above D are random, not zero (a library caller's, or a degree-3 array labelled
 * lower), renders with its own degree (sh_degree 0) and with 3 asked for as the same scene with
 * them zeroed does, bit for bit, and as the reference at degree D. */
SPLAT_TEST(api_render_degree_of_scene)
{
    splat_ctx *ctx;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    uint32_t W = 40 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 40), H = 30 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 30);
    uint32_t degree = (uint32_t)(splat__rng_u64(splat_test_rng()) % 3), kept = (degree + 1) * (degree + 1);
    splat_camera cam = t_random_camera(W, H);
    splat_scene s, zeroed;
    t_random_scene(&s, 150, &cam);
    for (uint32_t i = 0; i < s.count; i++)
        for (uint32_t k = kept; k < 16; k++)
            for (int c = 0; c < 3; c++) s.sh[48 * i + 3 * k + c] = (float)t_uniform(-0.5, 0.5);
    T_OK(splat_scene_init(&zeroed, s.count, &err), &err);
    zeroed.count = s.count;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++)
        memcpy(*splat__scene_group(&zeroed, g), splat__scene_group_c(&s, g), (size_t)s.count * splat__groups[g].width * sizeof(float));
    for (uint32_t i = 0; i < s.count; i++) memset(&zeroed.sh[48 * i + 3 * kept], 0, (48 - 3 * kept) * sizeof(float));
    s.sh_degree = zeroed.sh_degree = degree;
    printf("  degree %u, %ux%u\n", degree, W, H);
    const splat_render_desc asks[] = {{.sh_degree = 0}, {.sh_degree = 3}};
    float *want = NULL, *got[2] = {0};
    T_OK(splat_render(ctx, &zeroed, &cam, 1, &(splat_render_desc){.sh_degree = 0}, &want, &err), &err);
    uint64_t px = (uint64_t)W * H;
    for (int a = 0; a < 2; a++) {
        T_OK(splat_render(ctx, &s, &cam, 1, &asks[a], &got[a], &err), &err);
        uint64_t differ = 0;
        for (uint64_t p = 0; p < 3 * px; p++) differ += got[a][p] != want[p];
        T_CHECK(differ == 0, "sh_degree %u asked of a degree-%u scene: %llu of %llu values differ from the scene zeroed above it",
                asks[a].sh_degree, degree, (unsigned long long)differ, (unsigned long long)(3 * px));
    }
    splat_ref_settings set = {.sh_degree = degree};
    splat_ref_proj *proj = calloc(s.count, sizeof *proj);
    splat_ref_lists lists;
    splat_ref_image ref;
    T_OK(splat__ref_render(&zeroed, &cam, &set, proj, &lists, &ref, &err), &err);
    bool *skip = unclear_pixels(&ref, &lists, W, H);
    double e = t_norm_err(got[0], ref.rgb, NULL, px, 3, skip, NULL);
    T_CHECK(e < T_TOL_IMAGE_NORM, "against the reference at degree %u: normalised error %.3g", degree, e);
    free(skip), free(proj);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&ref);
    splat_free(want), splat_free(got[0]), splat_free(got[1]);
    splat_scene_free(&s), splat_scene_free(&zeroed);
    splat_ctx_free(ctx);
}

/* The self-check behind `splatc info`: the device renders its fixed scene like the reference
 * (its limit, src/api/selfcheck.c, is 1e-4; correct renders measure 6.7e-7 on lavapipe). */
SPLAT_TEST(api_selfcheck)
{
    splat_ctx *ctx;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    double max_error = -1;
    splat_status st = splat_ctx_selfcheck(ctx, &max_error, &err);
    printf("  self-check max error %.3g\n", max_error);
    T_CHECK(st == SPLAT_OK && max_error >= 0, "%s", err.msg);
    splat_ctx_free(ctx);
}

/* Half floats: known encodings, round to nearest even, and every half value round-trips. */
SPLAT_TEST(core_half_float)
{
    const struct { float f; uint16_t h; } known[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-2.0f, 0xc000}, {65504.0f, 0x7bff}, {65520.0f, 0x7c00},
        {0.333251953125f, 0x3555}, {5.960464477539063e-08f, 0x0001}, {6.097555160522461e-05f, 0x03ff},
        {1.0009765625f, 0x3c01}, {1.00048828125f, 0x3c00} /* halfway: to even */, {1.00146484375f, 0x3c02} /* halfway: to even */,
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(known); k++)
        T_CHECK(splat__f32_to_f16(known[k].f) == known[k].h, "%.10g -> 0x%04x, expected 0x%04x", known[k].f,
                splat__f32_to_f16(known[k].f), known[k].h);
    T_CHECK(isinf(splat__f16_to_f32(0x7c00)) && isnan(splat__f16_to_f32(splat__f32_to_f16(NAN))));
    uint32_t bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* NaNs */
        bad += splat__f32_to_f16(splat__f16_to_f32((uint16_t)h)) != h;
    }
    T_CHECK(bad == 0, "%u half values do not round-trip", bad);
    /* random floats: the nearest half, checked against its neighbours */
    for (int k = 0; k < 10000; k++) {
        float f = (float)(t_uniform(-1, 1) * pow(2, t_uniform(-20, 15)));
        uint16_t h = splat__f32_to_f16(f);
        double e = fabs(splat__f16_to_f32(h) - (double)f);
        double e1 = fabs(splat__f16_to_f32((uint16_t)(h + 1)) - (double)f), e0 = h & 0x3ff ? fabs(splat__f16_to_f32((uint16_t)(h - 1)) - (double)f) : e;
        T_REQUIRE(e <= e1 && e <= e0, "%.9g -> 0x%04x not the nearest", f, h);
    }
}
