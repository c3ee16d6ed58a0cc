/* The rasterizer on the GPU against the double-precision CPU reference (src/ref). */
#include "harness.h"
#include "raster_support.h"

typedef struct raster_case {
    uint32_t n, w, h, sh_degree, cap;
} raster_case;

/* Runs the backward on the GPU and in the reference with the same random upstream gradient
 * (zero at borderline pixels) and compares every parameter group. */
/* T_TOL_GRAD for every case but the needles (T_TOL_GRAD_NEEDLES). */
static double g_grad_tol = T_TOL_GRAD;

/* Runs the backward of t's last forward again as training runs it (SPLAT_BWD_SH_RECORD) and
 * checks that it gives `rows`, the gradients of the plain backward: every group but SH bit for
 * bit, and each SH gradient as the product of its record's two factors (the product Adam takes),
 * a zero of either sign where the rows hold zero. */
static void check_sh_record(t_render *t, const splat_scene *rows, const char *what)
{
    splat_error err = {0};
    uint32_t n = rows->count;
    t_poison_partials(t, false);
    splat__render_bwd(splat__stream_cmd(&t->stream), &t->r, &t->scene, &t->bufs, n, &t->grads, SPLAT_BWD_SH_RECORD);
    T_OK(splat__stream_sync(&t->stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    splat_scene rec;
    T_OK(splat_scene_init(&rec, n ? n : 1, &err), &err);
    t->grads.count = n;
    T_OK(splat__scene_gpu_download(t->g, &t->grads, &rec, &err), &err);
    uint64_t other = 0, bad = 0;
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++)
        if (!(splat__groups[k].flags & SPLAT_GROUP_FLAG_SH))
            other += memcmp(splat__scene_group_c(&rec, k), splat__scene_group_c(rows, k),
                            (size_t)n * splat__groups[k].width * sizeof(float)) != 0;
    for (uint32_t i = 0; i < n; i++) {
        const float *r = rec.sh + (uint64_t)i * SPLAT_SH_RECORD_FLOATS;
        bool differs = false;
        for (uint32_t j = 0; j < 48; j++) {
            float g = r[j / 3] * r[SPLAT_SH_RECORD_D_RAW + j % 3], want = rows->sh[(uint64_t)i * 48 + j];
            differs |= !(g == want); /* a NaN differs from everything */
        }
        bad += differs;
    }
    T_CHECK(other == 0, "%s: %llu gradient groups differ with SH records", what, (unsigned long long)other);
    T_CHECK(bad == 0, "%s: %llu Gaussians' SH records give other SH gradients than the rows", what, (unsigned long long)bad);
    splat_scene_free(&rec);
}

static void check_backward(t_render *t, t_ref *ref, const splat_scene *scene, const splat_camera *cam, const char *what)
{
    splat_error err = {0};
    uint32_t n = scene->count;
    uint64_t px = (uint64_t)cam->width * cam->height;
    float *g4 = calloc(px * 4, sizeof(float)), *d_rgb = calloc(px * 3, sizeof(float)), *d_alpha = calloc(px, sizeof(float));
    /* drawn at every pixel, so that a seed gives the same scenes whatever the margins decide */
    for (uint64_t p = 0; p < px; p++) {
        bool border = ref->img.margin[p] < T_PIXEL_MARGIN;
        for (int c = 0; c < 4; c++) {
            float v = (float)t_uniform(-1, 1);
            g4[4 * p + c] = border ? 0 : v;
        }
        for (int c = 0; c < 3; c++) d_rgb[3 * p + c] = g4[4 * p + c];
        d_alpha[p] = g4[4 * p + 3];
    }
    T_OK(splat__buf_upload(t->g, &t->bufs.grad_img, 0, g4, px * 16, &err), &err);
    t_poison_partials(t, false);
    splat__render_bwd(splat__stream_cmd(&t->stream), &t->r, &t->scene, &t->bufs, n, &t->grads, 0);
    T_OK(splat__stream_sync(&t->stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    splat_scene got;
    T_OK(splat_scene_init(&got, n ? n : 1, &err), &err);
    t->grads.count = n;
    T_OK(splat__scene_gpu_download(t->g, &t->grads, &got, &err), &err);

    splat_ref_grads rg;
    T_OK(splat__ref_grads_init(&rg, n, &err), &err);
    splat__ref_backward(scene, cam, &ref->set, ref->proj, &ref->lists, &ref->img, d_rgb, d_alpha, &rg);
    /* the scale of float32 rounding in the sums over pixels (tests/harness.h, t_norm_err) */
    splat_ref_grads rg_abs;
    T_OK(splat__ref_grads_init(&rg_abs, n, &err), &err);
    splat__ref_backward_scale(scene, cam, &ref->set, ref->proj, &ref->lists, &ref->img, d_rgb, d_alpha, &rg_abs);

    bool *excluded = calloc(n + 1, sizeof(bool)), *skip = calloc(n + 1, sizeof(bool));
    uint32_t n_excluded = 0;
    for (uint32_t i = 0; i < n; i++) n_excluded += excluded[i] = ref->proj[i].margin < 1e-4;
    /* Antialiased mode: the Gaussians at the compensation's floor, below 0.5 and above compared on
     * their own, so that the large ones (compensation near 1) do not drown the small ones, whose
     * gradients the compensation changes most. Those at the floor are 100 times smaller than a
     * pixel: their rotation and scale gradients are small differences of the conic's terms, like
     * the needles' (measured up to 1.04e-4 in 8 runs); they take T_TOL_GRAD_NEEDLES. A
     * compensation gradient where the floor holds measured errors of 6e2 there. */
    static const char *const regime_names[3] = {" [comp >= 0.5]", " [floor]", " [comp < 0.5]"};
    bool aa = ref->set.rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED;
    for (int regime = aa ? 0 : -1; regime < (aa ? 3 : 0); regime++) {
        for (uint32_t i = 0; i < n; i++) {
            double c = ref->proj[i].compensation;
            int r = c == SPLAT_REF_MIN_COMPENSATION ? 1 : c < 0.5 ? 2 : 0;
            skip[i] = excluded[i] || (regime >= 0 && r != regime);
        }
        printf("  %s backward%s:", what, regime >= 0 ? regime_names[regime] : "");
        for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
            const char *name = splat__groups[k].name;
            uint32_t width = splat__groups[k].width;
            const float *gpu = splat__scene_group_c(&got, k);
            double norm;
            double e = t_norm_err(gpu, t_ref_group(&rg, k), t_ref_group(&rg_abs, k), n, width, skip, &norm);
            printf(" %s %.1e", name, e);
            double tol = regime == 1 ? T_TOL_GRAD_NEEDLES : g_grad_tol;
            T_CHECK(e <= tol || (norm == 0 && e < 1e-12), "%s%s: %s gradient normalised error %.3g (|ref| %.3g)", what,
                    regime >= 0 ? regime_names[regime] : "", name, e, norm);
        }
        if (regime + 1 < (aa ? 3 : 0)) printf("\n");
    }
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        uint32_t width = splat__groups[k].width;
        const float *gpu = splat__scene_group_c(&got, k);
        uint64_t nonfinite = 0;
        for (uint64_t i = 0; i < (uint64_t)n * width; i++) nonfinite += !isfinite(gpu[i]);
        T_CHECK(nonfinite == 0, "%s: %llu non-finite %s gradients", what, (unsigned long long)nonfinite, splat__groups[k].name);
    }
    /* Coefficients above the active degree get exactly zero. */
    uint32_t active = (ref->set.sh_degree + 1) * (ref->set.sh_degree + 1);
    uint64_t stray = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = active; k < 16; k++)
            for (int c = 0; c < 3; c++) stray += got.sh[(i * 16 + k) * 3 + c] != 0.0f;
    T_CHECK(stray == 0, "%s: %llu SH gradients above degree %u", what, (unsigned long long)stray, ref->set.sh_degree);
    printf(" (%u Gaussians excluded as borderline)\n", n_excluded);
    check_sh_record(t, &got, what);
    free(excluded);
    free(skip);
    splat__ref_grads_free(&rg);
    splat__ref_grads_free(&rg_abs);
    splat_scene_free(&got);
    free(g4);
    free(d_rgb);
    free(d_alpha);
}

/* Renders `scene` on the GPU (intersection buffers starting at isect_capacity, 0 for the
 * default) and compares forward, and optionally backward, with the reference. When `image`
 * is given, the GPU's rgb+T is copied there [H,W,4]. */
static void check_scene(const splat_scene *scene, const splat_camera *cam, const splat_render_desc *opts, bool backward,
                        uint32_t isect_capacity, const char *what, float *image)
{
    t_render t;
    if (!t_render_init(&t, scene, cam->width, cam->height, isect_capacity)) {
        t_render_free(&t);
        return;
    }
    splat_error err = {0};
    splat_status st = splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, cam, opts, &err);
    T_CHECK(st == SPLAT_OK, "%s: %s", what, err.msg);
    if (st == SPLAT_OK) {
        t_gpu_image gpu;
        t_ref ref;
        if (t_download_image(&t, cam, &gpu) && t_ref_render(&ref, scene, cam, opts, &gpu)) {
            t_compare_forward(&ref, &gpu, what);
            if (backward) check_backward(&t, &ref, scene, cam, what);
            t_ref_free(&ref);
        }
        if (image && gpu.rgbt) memcpy(image, gpu.rgbt, (size_t)cam->width * cam->height * 16);
        t_gpu_image_free(&gpu);
    }
    t_render_free(&t);
}

static splat_render_desc random_opts(uint32_t sh_degree, uint32_t cap)
{
    /* resolved, as the render layer takes it: degree 0 is SPLAT_SH_DEGREE_0 */
    splat_render_desc opts = {.sh_degree = sh_degree ? sh_degree : SPLAT_SH_DEGREE_0, .max_gaussians_per_tile = cap};
    for (int c = 0; c < 3; c++) opts.background[c] = (float)t_uniform(0, 1);
    return opts;
}

static void run_case(const raster_case *rc, bool backward)
{
    char what[96];
    snprintf(what, sizeof what, "N=%u %ux%u deg %u cap %u", rc->n, rc->w, rc->h, rc->sh_degree, rc->cap);
    splat_camera cam = t_random_camera(rc->w, rc->h);
    splat_scene scene;
    t_random_scene(&scene, rc->n, &cam);
    splat_render_desc opts = random_opts(rc->sh_degree, rc->cap);
    check_scene(&scene, &cam, &opts, backward, 0, what, NULL);
    splat_scene_free(&scene);
}

/* ------------------------------------------------------------------ antialiased mode */

/* Antialiased mode (docs/RASTER.md 1.5): the opacity compensation and its gradient through the
 * covariance into scales, rotations and means, forward and backward against the reference.
 * The random scenes' Gaussians are shrunk by up to 10x, a third of them by 10x to 300x, so that
 * the compensation spans its whole range, the floor at MIN_COMPENSATION included (where it has
 * no gradient); the cases count the visible Gaussians in each regime, which must all be present,
 * and check_backward compares the gradients of each regime on its own. */
static const raster_case k_aa_cases[] = {
    {1, 17, 13, 0, 0}, {10, 17, 13, 1, 0}, {300, 64, 48, 2, 3}, {1000, 64, 48, 3, 0}, {3000, 96, 72, 1, 0}, {20000, 256, 192, 3, 0},
};

SPLAT_TEST(raster_antialiased)
{
    uint32_t floor = 0, low = 0, high = 0;
    for (size_t k = 0; k < SPLAT_COUNTOF(k_aa_cases); k++) {
        const raster_case *rc = &k_aa_cases[k];
        char what[96];
        snprintf(what, sizeof what, "antialiased N=%u %ux%u deg %u cap %u", rc->n, rc->w, rc->h, rc->sh_degree, rc->cap);
        splat_camera cam = t_random_camera(rc->w, rc->h);
        splat_scene scene;
        t_random_scene(&scene, rc->n, &cam);
        for (uint32_t i = 0; i < scene.count; i++) {
            double shrink = i % 3 ? t_uniform(0, log(10.0)) : t_uniform(log(10.0), log(300.0));
            for (int c = 0; c < 3; c++) scene.log_scales[3 * i + c] -= (float)shrink;
        }
        splat_render_desc opts = random_opts(rc->sh_degree, rc->cap);
        opts.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
        splat_ref_settings set = {.sh_degree = splat__sh_degree(&opts), .rasterize_mode = opts.rasterize_mode};
        splat_ref_proj *proj = calloc(scene.count + 1, sizeof *proj);
        T_REQUIRE(proj);
        splat__ref_preprocess(&scene, &cam, &set, proj);
        for (uint32_t i = 0; i < scene.count; i++) {
            if (!proj[i].visible) continue;
            double c = proj[i].compensation;
            floor += c == SPLAT_REF_MIN_COMPENSATION;
            low += c > SPLAT_REF_MIN_COMPENSATION && c < 0.5;
            high += c >= 0.5 && c < 0.99;
        }
        free(proj);
        check_scene(&scene, &cam, &opts, true, 0, what, NULL);
        splat_scene_free(&scene);
    }
    printf("  visible Gaussians: %u at the floor, %u with compensation in (0.005, 0.5), %u in [0.5, 0.99)\n", floor, low,
           high);
    T_CHECK(floor > 0 && low > 0 && high > 0, "the scenes miss a regime of the compensation");
}

static const uint32_t k_sizes[4][2] = {{1, 1}, {17, 13}, {64, 48}, {256, 192}};

/* Every image size for one scene size; SH degree and cap drawn fresh each run (a small cap
 * that truncates half the time). */
static void random_cases(uint32_t n)
{
    for (int s = 0; s < 4; s++) {
        raster_case rc = {n, k_sizes[s][0], k_sizes[s][1], (uint32_t)(splat__rng_u64(splat_test_rng()) % 4), 0};
        if (splat__rng_u64(splat_test_rng()) % 2) rc.cap = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 8);
        run_case(&rc, true);
    }
}

SPLAT_TEST(raster_random_n1) { random_cases(1); }
SPLAT_TEST(raster_random_n10) { random_cases(10); }
SPLAT_TEST(raster_random_n1000) { random_cases(1000); }
SPLAT_TEST(raster_random_n20000) { random_cases(20000); }

/* Every SH degree with and without a truncating cap, forward and backward. */
SPLAT_TEST(raster_sh_degrees_and_cap)
{
    for (uint32_t d = 0; d < 4; d++)
        for (int capped = 0; capped < 2; capped++) {
            raster_case rc = {300, 64, 48, d, capped ? 2u + (uint32_t)(splat__rng_u64(splat_test_rng()) % 4) : 0u};
            run_case(&rc, true);
        }
}

/* ------------------------------------------------------------------ the alpha clamp */

/* Pixels (not borderline) where the reference blends a Gaussian whose alpha_i exp(-sigma) is
 * above ALPHA_MAX, so that the clamp decides its alpha. */
static uint64_t clamped_pixels(const splat_scene *scene, const splat_camera *cam, const splat_render_desc *opts)
{
    splat_ref_settings set = {.sh_degree = splat__sh_degree(opts), .cap = opts->max_gaussians_per_tile};
    splat_ref_proj *proj = calloc(scene->count + 1, sizeof *proj);
    splat_ref_lists lists;
    splat_ref_image img;
    splat_error err = {0};
    uint64_t clamped = 0;
    if (splat__ref_render(scene, cam, &set, proj, &lists, &img, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "reference:", "%s", err.msg);
        free(proj);
        return 0;
    }
    for (uint32_t py = 0; py < cam->height; py++)
        for (uint32_t px = 0; px < cam->width; px++) {
            size_t p = (size_t)py * cam->width + px;
            if (img.last[p] < 0 || img.margin[p] < T_PIXEL_MARGIN) continue;
            uint32_t t = (py / 16) * lists.tiles_x + px / 16, n = lists.offsets[t + 1] - lists.offsets[t];
            if (set.cap && n > set.cap) n = set.cap;
            const uint32_t *ids = lists.ids + lists.offsets[t];
            bool hit = false;
            /* the blended Gaussians come before the last one, which is blended too */
            for (uint32_t k = 0; k < n; k++) {
                const splat_ref_proj *g = &proj[ids[k]];
                double dx = g->mean2d[0] - (px + 0.5), dy = g->mean2d[1] - (py + 0.5);
                double sigma = 0.5 * (g->conic[0] * dx * dx + g->conic[2] * dy * dy) + g->conic[1] * dx * dy;
                hit |= g->projected && sigma >= 0 && g->opacity * exp(-sigma) > SPLAT_REF_ALPHA_MAX;
                if ((int32_t)ids[k] == img.last[p]) break;
            }
            clamped += hit;
        }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    free(proj);
    return clamped;
}

/* Opacity logits of 7 to 10 (opacity above ALPHA_MAX), half the Gaussians in front of the others,
 * 2 to 6 px wide and centred within 0.02 px of a pixel centre, where alpha_i exp(-sigma) exceeds ALPHA_MAX: the forward must clamp alpha
 * there (and two such Gaussians in a row stop the pixel at T_MIN), and the backward must give
 * those pixels no gradient through alpha_i or sigma. The random scenes never reach the clamp
 * (logits at most 4). Every Gaussian is nearly opaque, so the opacity gradients of the clamped
 * Gaussians, damped by alpha_i (1 - alpha_i), are not drowned by those of faint ones. */
SPLAT_TEST(raster_alpha_clamp)
{
    static const uint32_t sizes[4][2] = {{17, 13}, {40, 33}, {64, 48}, {96, 72}};
    uint64_t total = 0;
    for (int c = 0; c < 4; c++) {
        raster_case rc = {150, sizes[c][0], sizes[c][1], (uint32_t)(splat__rng_u64(splat_test_rng()) % 4), 0};
        if (splat__rng_u64(splat_test_rng()) % 2) rc.cap = 2 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 8);
        char what[96];
        snprintf(what, sizeof what, "clamp N=%u %ux%u deg %u cap %u", rc.n, rc.w, rc.h, rc.sh_degree, rc.cap);
        splat_camera cam = t_random_camera(rc.w, rc.h);
        splat_scene s;
        t_random_scene(&s, rc.n, &cam);
        for (uint32_t i = 0; i < s.count; i++) {
            s.opacities[i] = (float)t_uniform(7, 10);
            if (i % 2) continue;
            /* in front of the others (depth 2 to 8), 2 to 6 px wide: the clamp holds within about
             * 0.04 standard deviations of the centre, and T is still high there */
            double z = t_uniform(1, 2);
            for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)log(t_uniform(2, 6) * z / cam.fx);
            double u = (double)(splat__rng_u64(splat_test_rng()) % rc.w) + 0.5 + t_uniform(-0.02, 0.02);
            double v = (double)(splat__rng_u64(splat_test_rng()) % rc.h) + 0.5 + t_uniform(-0.02, 0.02);
            double pc[3] = {(u - cam.cx) / cam.fx * z, (v - cam.cy) / cam.fy * z, z};
            t_cam_to_world(&cam, pc, &s.means[3 * i]);
        }
        splat_render_desc opts = random_opts(rc.sh_degree, rc.cap);
        uint64_t clamped = clamped_pixels(&s, &cam, &opts);
        printf("  %s: %llu pixels blend a clamped Gaussian\n", what, (unsigned long long)clamped);
        total += clamped;
        check_scene(&s, &cam, &opts, true, 0, what, NULL);
        splat_scene_free(&s);
    }
    /* the scenes do what they are for (38 to over 150 such pixels in 60 runs) */
    T_CHECK(total >= 20, "only %llu pixels reach the clamp", (unsigned long long)total);
}

/* ------------------------------------------------------------------ edge cases */

/* Renders and returns the GPU image [H,W,4] (caller frees), or NULL. */
static float *gpu_image_of(const splat_scene *scene, const splat_camera *cam, const splat_render_desc *opts,
                           bool backward, uint32_t isect_capacity, const char *what)
{
    float *img = calloc((size_t)cam->width * cam->height * 4, sizeof(float));
    check_scene(scene, cam, opts, backward, isect_capacity, what, img);
    return img;
}

static void check_background(const float *img, const splat_camera *cam, const splat_render_desc *opts, const char *what)
{
    uint64_t bad = 0;
    for (uint64_t p = 0; p < (uint64_t)cam->width * cam->height; p++)
        for (int c = 0; c < 4; c++) bad += img[4 * p + c] != (c < 3 ? opts->background[c] : 1.0f);
    T_CHECK(bad == 0, "%s: %llu values differ from the background", what, (unsigned long long)bad);
}

SPLAT_TEST(raster_edge_empty_and_behind)
{
    splat_camera cam = t_random_camera(37, 29);
    splat_render_desc opts = random_opts(3, 0);
    splat_scene empty;
    splat_error err = {0};
    T_OK(splat_scene_init(&empty, 1, &err), &err);
    float *img = gpu_image_of(&empty, &cam, &opts, true, 0, "N=0");
    check_background(img, &cam, &opts, "N=0");
    free(img);
    /* Every Gaussian behind the camera (or closer than the near plane). */
    splat_scene s;
    t_random_scene(&s, 500, &cam);
    for (uint32_t i = 0; i < s.count; i++) {
        double pc[3] = {t_uniform(-3, 3), t_uniform(-3, 3), i % 10 == 0 ? t_uniform(0, 0.0099) : -t_uniform(0.01, 5)};
        t_cam_to_world(&cam, pc, &s.means[3 * i]);
    }
    img = gpu_image_of(&s, &cam, &opts, true, 0, "behind the camera");
    check_background(img, &cam, &opts, "behind the camera");
    free(img);
    /* Zero opacity: a logit so low that no pixel reaches 1/255. */
    splat_scene_free(&s);
    t_random_scene(&s, 300, &cam);
    for (uint32_t i = 0; i < s.count; i++) s.opacities[i] = (float)t_uniform(-40, -6);
    img = gpu_image_of(&s, &cam, &opts, true, 0, "zero opacity");
    check_background(img, &cam, &opts, "zero opacity");
    free(img);
    splat_scene_free(&s);
    splat_scene_free(&empty);
}

SPLAT_TEST(raster_edge_whole_image_gaussian)
{
    /* One Gaussian close to the camera, far larger than the image; and one with its centre far
     * outside the guard band. Both compared with the reference, forward and backward. */
    splat_camera cam = t_random_camera(70, 45);
    splat_render_desc opts = random_opts((uint32_t)(splat__rng_u64(splat_test_rng()) % 4), 0);
    splat_scene s;
    t_random_scene(&s, 2, &cam);
    double pc0[3] = {t_uniform(-0.1, 0.1), t_uniform(-0.1, 0.1), t_uniform(0.5, 1.0)};
    t_cam_to_world(&cam, pc0, &s.means[0]);
    for (int k = 0; k < 3; k++) s.log_scales[k] = (float)log(t_uniform(1.0, 3.0));
    s.opacities[0] = (float)t_uniform(-1, 1);
    double pc1[3] = {t_uniform(3, 6), t_uniform(-1, 1), 1.0};
    t_cam_to_world(&cam, pc1, &s.means[3]);
    for (int k = 0; k < 3; k++) s.log_scales[3 + k] = (float)log(t_uniform(1.0, 2.0));
    check_scene(&s, &cam, &opts, true, 0, "whole image", NULL);
    splat_scene_free(&s);
}

SPLAT_TEST(raster_edge_tile_borders)
{
    /* Means projecting exactly onto tile corners and edges (pixel coordinates multiples of 16),
     * small and large footprints, on an image whose size is not a multiple of 16. */
    splat_camera cam = t_random_camera(83, 61);
    for (int k = 0; k < 9; k++) cam.R[k] = (k % 4 == 0) ? 1.0f : 0.0f;
    cam.t[0] = cam.t[1] = cam.t[2] = 0.0f;
    splat_render_desc opts = random_opts((uint32_t)(splat__rng_u64(splat_test_rng()) % 4), 0);
    splat_scene s;
    t_random_scene(&s, 60, &cam);
    for (uint32_t i = 0; i < s.count; i++) {
        /* z a power of two and fx, cx exact floats: x = (u - cx) z / fx lands u exactly. */
        double z = 4.0;
        double u = 16.0 * (double)(splat__rng_u64(splat_test_rng()) % 7);
        double v = i % 2 ? 16.0 * (double)(splat__rng_u64(splat_test_rng()) % 5) : t_uniform(0, 61);
        double pc[3] = {(u - cam.cx) / cam.fx * z, (v - cam.cy) / cam.fy * z, z + 1e-3 * i};
        t_cam_to_world(&cam, pc, &s.means[3 * i]);
    }
    check_scene(&s, &cam, &opts, true, 0, "tile borders", NULL);
    splat_scene_free(&s);
}

SPLAT_TEST(raster_edge_degenerate_scale)
{
    /* Scales of ~1e-13 on every axis: the covariance is all low-pass filter, yet the gradients
     * still flow. Mixed with ordinary Gaussians. */
    splat_camera cam = t_random_camera(40, 33);
    splat_render_desc opts = random_opts(1, 0);
    splat_scene s;
    t_random_scene(&s, 50, &cam);
    for (uint32_t i = 0; i < s.count; i += 2)
        for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)t_uniform(-32, -28);
    check_scene(&s, &cam, &opts, true, 0, "degenerate scale", NULL);
    /* Needles and discs: one or two axes degenerate, the others ordinary. */
    splat_scene_free(&s);
    t_random_scene(&s, 50, &cam);
    for (uint32_t i = 0; i < s.count; i++)
        for (int k = 0; k < 3; k++)
            if ((i + k) % 2 == 0) s.log_scales[3 * i + k] = (float)t_uniform(-32, -28);
    g_grad_tol = T_TOL_GRAD_NEEDLES;
    check_scene(&s, &cam, &opts, true, 0, "needles", NULL);
    g_grad_tol = T_TOL_GRAD;
    splat_scene_free(&s);
}

SPLAT_TEST(raster_edge_overflow_regrows)
{
    /* A scene that overflows a tiny initial intersection capacity renders exactly like one with
     * ample capacity: the overflow is detected on the GPU, the buffers grow and it renders again. */
    splat_camera cam = t_random_camera(64, 48);
    splat_render_desc opts = random_opts(2, 0);
    splat_scene s;
    t_random_scene(&s, 2000, &cam);
    float *small = gpu_image_of(&s, &cam, &opts, false, 16, "tiny capacity");
    float *ample = gpu_image_of(&s, &cam, &opts, false, 1u << 20, "ample capacity");
    T_CHECK(memcmp(small, ample, (size_t)cam.width * cam.height * 16) == 0, "images differ");
    free(small);
    free(ample);
    splat_scene_free(&s);
}

SPLAT_TEST(raster_edge_nonfinite_reported)
{
    splat_camera cam = t_random_camera(32, 32);
    splat_render_desc opts = random_opts(3, 0);
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    for (int which = 0; which < 5; which++) {
        splat_scene s;
        t_random_scene(&s, 100, &cam);
        uint32_t i = (uint32_t)(splat__rng_u64(splat_test_rng()) % s.count);
        float v = bad_values[splat__rng_u64(splat_test_rng()) % 3];
        switch (which) {
        case 0: s.means[3 * i + 1] = v; break;
        case 1: s.log_scales[3 * i] = v; break;
        case 2: s.quats[4 * i + 2] = v; break;
        case 3: s.opacities[i] = v; break;
        default: s.sh[(i * 16) * 3 + 1] = v; break; /* the DC term is always active */
        }
        t_render t;
        if (t_render_init(&t, &s, cam.width, cam.height, 0)) {
            splat_error err = {0};
            splat_status st = splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, &cam, &opts, &err);
            T_CHECK(st == SPLAT_ERR_NONFINITE, "parameter group %d, Gaussian %u = %g: got %s", which, i, v,
                    splat_status_str(st));
            T_CHECK(strstr(err.msg, "NaN or Inf") != NULL, "message: %s", err.msg);
        }
        t_render_free(&t);
        splat_scene_free(&s);
    }
}

/* A non-finite upstream gradient at a few pixels makes some Gaussians' gradients non-finite:
 * the backward reports them and gives them no gradient, SH included, and so must their SH
 * records, whose colour gradient may be anything then (project_bwd zeroes it). */
SPLAT_TEST(raster_bwd_sh_record_nonfinite)
{
    splat_camera cam = t_random_camera(48, 32);
    splat_render_desc opts = random_opts(3, 0);
    splat_scene s;
    t_random_scene(&s, 300, &cam);
    t_render t;
    splat_error err = {0};
    if (t_render_init(&t, &s, cam.width, cam.height, 0)) {
        T_OK(splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, &cam, &opts, &err), &err);
        uint64_t px = (uint64_t)cam.width * cam.height, bad_px = 0;
        float *g4 = malloc(px * 16);
        T_REQUIRE(g4);
        const float bad_values[] = {NAN, INFINITY, -INFINITY};
        for (uint64_t p = 0; p < 4 * px; p++) {
            bool bad = splat__rng_u64(splat_test_rng()) % 50 == 0;
            g4[p] = bad ? bad_values[splat__rng_u64(splat_test_rng()) % 3] : (float)t_uniform(-1, 1);
            bad_px += bad;
        }
        T_OK(splat__buf_upload(t.g, &t.bufs.grad_img, 0, g4, px * 16, &err), &err);
        splat__render_bwd(splat__stream_cmd(&t.stream), &t.r, &t.scene, &t.bufs, s.count, &t.grads, 0);
        T_OK(splat__stream_sync(&t.stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        char msg[512];
        uint32_t reported = splat__render_debug(t.g, &t.bufs, msg, sizeof msg);
        splat_scene rows;
        T_OK(splat_scene_init(&rows, s.count, &err), &err);
        t.grads.count = s.count;
        T_OK(splat__scene_gpu_download(t.g, &t.grads, &rows, &err), &err);
        printf("  %llu non-finite upstream values, %u Gaussians with a non-finite gradient\n", (unsigned long long)bad_px,
               reported);
        T_CHECK(reported > 0, "no Gaussian's gradient came out non-finite: the case tests nothing");
        check_sh_record(&t, &rows, "non-finite upstream");
        splat_scene_free(&rows);
        free(g4);
    }
    t_render_free(&t);
    splat_scene_free(&s);
}

/* Forward-only renders check the SH of the Gaussians they draw (project_fwd's DRAWN_ONLY): a
 * non-finite coefficient of any active degree in a drawn Gaussian is reported, one in a Gaussian
 * behind the camera is not read; the training forward reports both. */
SPLAT_TEST(raster_fwd_only_nonfinite_drawn)
{
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    for (int rep = 0; rep < 6; rep++) {
        splat_camera cam = t_random_camera(32, 32);
        uint32_t degree = (uint32_t)(splat__rng_u64(splat_test_rng()) % 4);
        splat_render_desc opts = random_opts(degree, 0);
        splat_scene s;
        t_random_scene(&s, 100, &cam);
        uint32_t i = (uint32_t)(splat__rng_u64(splat_test_rng()) % s.count);
        bool behind = rep % 2 == 1;
        double pc[3] = {0, 0, behind ? -4 : 4};
        t_cam_to_world(&cam, pc, &s.means[3 * i]);
        for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)log(0.3);
        s.opacities[i] = 4.0f;
        uint32_t coeffs = (degree + 1) * (degree + 1);
        uint32_t k = (uint32_t)(splat__rng_u64(splat_test_rng()) % coeffs), c = (uint32_t)(splat__rng_u64(splat_test_rng()) % 3);
        s.sh[(i * SPLAT_SH_COEFFS + k) * 3 + c] = bad_values[splat__rng_u64(splat_test_rng()) % 3];
        for (int fwd_only = 0; fwd_only < 2; fwd_only++) {
            t_render t;
            if (t_render_init(&t, &s, cam.width, cam.height, 0)) {
                splat_error err = {0};
                if (fwd_only) { /* (after the fixture's recorded clear of the buffers it made has run) */
                    T_OK(splat__stream_sync(&t.stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
                    splat__render_bufs_free(t.g, &t.bufs);
                    T_OK(splat__render_bufs_init_fwd_only(t.g, &t.r, &t.bufs, s.count, 0, cam.width, cam.height, &err), &err);
                }
                splat_status st = splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, &cam, &opts, &err);
                bool reported = st == SPLAT_ERR_NONFINITE;
                bool want = !(fwd_only && behind);
                T_CHECK(reported == want, "%s, Gaussian %u %s, SH degree %u coefficient %u.%u: got %s",
                        fwd_only ? "forward-only" : "training forward", i, behind ? "behind the camera" : "drawn", degree,
                        k, c, splat_status_str(st));
            }
            t_render_free(&t);
        }
        splat_scene_free(&s);
    }
}

/* The backward has no atomics: the same render and upstream gradient give the same bits. */
SPLAT_TEST(raster_backward_deterministic)
{
    splat_camera cam = t_random_camera(96, 72);
    splat_render_desc opts = random_opts(3, 0);
    splat_scene s;
    t_random_scene(&s, 3000, &cam);
    t_render t;
    if (!t_render_init(&t, &s, cam.width, cam.height, 0)) goto done;
    splat_error err = {0};
    uint64_t px = (uint64_t)cam.width * cam.height;
    float *g4 = malloc(px * 16);
    for (uint64_t p = 0; p < px * 4; p++) g4[p] = (float)t_uniform(-1, 1);
    T_OK(splat__buf_upload(t.g, &t.bufs.grad_img, 0, g4, px * 16, &err), &err);
    splat_scene a, b;
    T_OK(splat_scene_init(&a, s.count, &err), &err);
    T_OK(splat_scene_init(&b, s.count, &err), &err);
    for (int rep = 0; rep < 2; rep++) {
        T_OK(splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, &cam, &opts, &err), &err);
        splat__render_bwd(splat__stream_cmd(&t.stream), &t.r, &t.scene, &t.bufs, s.count, &t.grads, 0);
        T_OK(splat__stream_sync(&t.stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
        t.grads.count = s.count;
        T_OK(splat__scene_gpu_download(t.g, &t.grads, rep ? &b : &a, &err), &err);
    }
    T_CHECK(memcmp(a.means, b.means, s.count * 12) == 0 && memcmp(a.log_scales, b.log_scales, s.count * 12) == 0 &&
                memcmp(a.quats, b.quats, s.count * 16) == 0 && memcmp(a.opacities, b.opacities, s.count * 4) == 0 &&
                memcmp(a.sh, b.sh, (size_t)s.count * 192) == 0,
            "two backward passes differ");
    splat_scene_free(&a);
    splat_scene_free(&b);
    free(g4);
done:
    t_render_free(&t);
    splat_scene_free(&s);
}

/* Every tile's run in the order of docs/RASTER.md section 2, checked from its definition: strictly
 * increasing (depth bits, Gaussian), each entry's key its Gaussian's depth as projected. Both paths
 * order runs with tile_sort, so comparing them alone would miss a fault in it. */
static void check_runs(splat_gpu *g, const splat_render_bufs *b, const splat_camera *cam, uint32_t n_isect,
                       const char *which)
{
    splat_error err = {0};
    uint32_t tiles = ((cam->width + 15) / 16) * ((cam->height + 15) / 16);
    uint32_t *ranges = malloc(8ull * tiles), *keys = malloc(4ull * n_isect + 4), *vals = malloc(4ull * n_isect + 4);
    uint32_t *gauss = b->fwd_only ? NULL : malloc(4ull * n_isect + 4);
    float *proj = malloc((size_t)b->proj.size);
    T_OK(splat__buf_download(g, &b->ranges, 0, ranges, 8ull * tiles, &err), &err);
    T_OK(splat__buf_download(g, &b->keys_lo, 0, keys, 4ull * n_isect, &err), &err);
    T_OK(splat__buf_download(g, &b->vals, 0, vals, 4ull * n_isect, &err), &err);
    if (gauss) T_OK(splat__buf_download(g, &b->gauss_of_emit, 0, gauss, 4ull * n_isect, &err), &err);
    T_OK(splat__buf_download(g, &b->proj, 0, proj, b->proj.size, &err), &err);
    uint32_t bad = 0;
    for (uint32_t t = 0; t < tiles && !bad; t++)
        for (uint32_t k = ranges[2 * t]; k < ranges[2 * t + 1] && !bad; k++) {
            uint32_t gi = gauss ? gauss[vals[k]] : vals[k], depth_bits;
            memcpy(&depth_bits, &proj[12ull * gi + 2], 4);
            uint32_t pgi = k == ranges[2 * t] ? 0 : (gauss ? gauss[vals[k - 1]] : vals[k - 1]);
            bool ordered = k == ranges[2 * t] || keys[k - 1] < keys[k] || (keys[k - 1] == keys[k] && pgi < gi);
            if (keys[k] != depth_bits || !ordered) {
                bad++;
                T_CHECK(false, "%s: tile %u, position %u: Gaussian %u (key 0x%08x, its depth 0x%08x) after Gaussian %u (key 0x%08x)",
                        which, t, k - ranges[2 * t], gi, keys[k], depth_bits, pgi, k > ranges[2 * t] ? keys[k - 1] : 0);
            }
        }
    free(ranges), free(keys), free(vals), free(gauss), free(proj);
}

/* The forward-only render (splat__render_bufs_init_fwd_only: what splat_render uses) gives the bits of
 * the full forward that training records: every pixel's colour and final transmittance. The
 * scenes make the order of equal depths show: groups of Gaussians at one mean (the same depth
 * bits) and clusters a few float steps apart in depth, with large overlapping footprints, a
 * per-tile cap on some runs (it keeps the first entries of each list, so any change of order
 * changes which Gaussians blend), antialiased mode on some, a good part of each scene behind the
 * camera, and GPU scenes holding more rows than are rendered. The forward-only buffers start tiny, so they also overflow and regrow.
 * Two cases sort each tile's run in blocks of 4 and 64 entries, so that runs longer than a block
 * take tile_sort's merge. Both paths' runs are also checked against the order's definition. */
SPLAT_TEST(raster_fwd_only_bits)
{
    /* tile: tile_sort's block (0: the default); small blocks take its merge of blocks */
    static const struct { uint32_t n, w, h, cap; bool aa; uint32_t tile; } cases[] = {
        {1, 16, 16, 0, false, 0}, {3000, 97, 71, 0, false, 0}, {3000, 64, 48, 7, false, 0}, {5000, 130, 90, 0, true, 0},
        {5000, 80, 60, 20, true, 0}, {3000, 97, 71, 0, false, 4}, {5000, 130, 90, 0, true, 64},
    };
    splat_gpu *g = t_gpu();
    if (!g) return;
    splat_error err = {0};
    splat_renderer r;
    splat_stream st;
    T_OK(splat__renderer_init(g, &r, &err), &err);
    T_OK(splat__stream_init(g, &st, &err), &err);
    for (size_t c = 0; c < SPLAT_COUNTOF(cases); c++) {
        T_OK(splat__renderer_set_tile_cap(&r, cases[c].tile, &err), &err);
        splat_camera cam = t_random_camera(cases[c].w, cases[c].h);
        splat_render_desc opts = random_opts((uint32_t)(splat__rng_u64(splat_test_rng()) % 4), cases[c].cap);
        opts.rasterize_mode = cases[c].aa ? SPLAT_RASTERIZE_ANTIALIASED : SPLAT_RASTERIZE_CLASSIC;
        splat_scene s;
        t_random_scene(&s, cases[c].n, &cam);
        for (uint32_t i = 1; i < s.count; i++) {
            double u = t_uniform(0, 1);
            if (u < 0.3) memcpy(&s.means[3 * i], &s.means[3 * (i - 1 - (i % 3 == 0 && i > 1))], 12);
            else if (u < 0.5)
                for (int k = 0; k < 3; k++) s.means[3 * i + k] = nextafterf(s.means[3 * (i - 1) + k], INFINITY);
            if (u < 0.5)
                for (int k = 0; k < 3; k++) s.log_scales[3 * i + k] = (float)t_uniform(-2.5, -1.0);
            /* a view culls much of a scene: the forward-only path sorts only the drawn ones */
            if (u > 0.7) {
                double pc[3] = {t_uniform(-5, 5), t_uniform(-5, 5), t_uniform(-8, -0.5)};
                t_cam_to_world(&cam, pc, &s.means[3 * i]);
            }
        }
        uint32_t rows = s.count + (uint32_t)(splat__rng_u64(splat_test_rng()) % 50);
        splat_scene_gpu sg;
        splat_render_bufs full, fwd;
        memset(&full, 0, sizeof full);
        memset(&fwd, 0, sizeof fwd);
        T_OK(splat__scene_gpu_init(g, &sg, "scene", rows, false, &err), &err);
        T_OK(splat__scene_gpu_upload(g, &sg, &s, &err), &err);
        T_OK(splat__render_bufs_init(g, &r, &full, rows, 1u << 20, cam.width, cam.height, &err), &err);
        T_OK(splat__render_bufs_init_fwd_only(g, &r, &fwd, rows, 16, cam.width, cam.height, &err), &err);
        uint64_t px = (uint64_t)cam.width * cam.height;
        float *a = malloc(px * 16), *b = malloc(px * 16);
        splat_counters ka, kb;
        T_OK(splat__render_image(&st, &r, &sg, &full, &cam, &opts, &err), &err);
        T_OK(splat__render_image(&st, &r, &sg, &fwd, &cam, &opts, &err), &err);
        T_OK(splat__buf_download(g, &full.out_rgbt, 0, a, px * 16, &err), &err);
        T_OK(splat__buf_download(g, &fwd.out_rgbt, 0, b, px * 16, &err), &err);
        T_OK(splat__buf_download(g, &full.counters, 0, &ka, sizeof ka, &err), &err);
        T_OK(splat__buf_download(g, &fwd.counters, 0, &kb, sizeof kb, &err), &err);
        uint64_t differ = 0, first = px;
        for (uint64_t p = 0; p < px; p++)
            if (memcmp(&a[4 * p], &b[4 * p], 16) != 0) differ++, first = first < px ? first : p;
        printf("  N=%u %ux%u cap %u%s, tile_sort blocks of %u: %u intersections, forward-only grew to %u\n", cases[c].n,
               cam.width, cam.height, cases[c].cap, cases[c].aa ? " antialiased" : "", r.tile_cap, ka.n_isect,
               fwd.isect_capacity);
        T_CHECK(ka.n_isect == kb.n_isect && !ka.overflow && !kb.overflow, "intersections %u vs %u", ka.n_isect, kb.n_isect);
        check_runs(g, &full, &cam, ka.n_isect, "training forward");
        check_runs(g, &fwd, &cam, kb.n_isect, "forward-only");
        T_CHECK(differ == 0, "case %zu: %llu of %llu pixels differ, first (%llu, %llu): %.9g %.9g %.9g T %.9g vs %.9g %.9g %.9g T %.9g",
                c, (unsigned long long)differ, (unsigned long long)px, (unsigned long long)(first % cam.width),
                (unsigned long long)(first / cam.width), a[4 * first], a[4 * first + 1], a[4 * first + 2], a[4 * first + 3],
                b[4 * first], b[4 * first + 1], b[4 * first + 2], b[4 * first + 3]);
        free(a), free(b);
        splat__render_bufs_free(g, &full);
        splat__render_bufs_free(g, &fwd);
        splat__scene_gpu_free(g, &sg);
        splat_scene_free(&s);
    }
    splat__stream_free(&st);
    splat__renderer_free(&r);
}

/* Every per-render buffer holds what its shaders index, by the shapes render.h declares (the
 * shaders' element sizes): Gaussians (proj [cap,3] vec4, radii [cap] vec2, tiles and offsets
 * [cap]), tiles (ranges [tiles] uvec2, one per 16x16 tile of the largest image), pixels (out_rgbt
 * [H,W] vec4) and, outside forward-only renders, the backward's (out_last, out_depth [H,W],
 * grad_img [H,W] vec4, stats [cap] vec4, partial [M,9]) and intersections (keys, values [M]).
 * A contract on the sizes themselves, at random sizes, both kinds of buffers: the render tests
 * see a buffer short only where a render reaches its end. Random sizes, a table of needs, one
 * comparison. */
SPLAT_TEST(render_bufs_sizes)
{
    splat_gpu *g = t_gpu();
    if (!g) return;
    splat_error err = {0};
    splat_renderer r;
    T_OK(splat__renderer_init(g, &r, &err), &err);
    for (int round = 0; round < 6; round++) {
        bool fwd_only = round % 2;
        uint32_t cap = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 5000);
        uint32_t w = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 700), h = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 700);
        uint32_t m = 1 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 20000);
        splat_render_bufs b;
        T_OK((fwd_only ? splat__render_bufs_init_fwd_only : splat__render_bufs_init)(g, &r, &b, cap, m, w, h, &err), &err);
        uint64_t tiles = (uint64_t)((w + 15) / 16) * ((h + 15) / 16), px = (uint64_t)w * h, bwd = !fwd_only;
        const struct { const char *name; const splat_buf *buf; uint64_t need; } needs[] = {
            {"proj", &b.proj, cap * 48ull},           {"radii", &b.radii, cap * 8ull},
            {"tiles", &b.tiles, cap * 4ull},          {"offsets", &b.offsets, cap * 4ull},
            {"ranges", &b.ranges, tiles * 8},         {"out_rgbt", &b.out_rgbt, px * 16},
            {"out_last", &b.out_last, bwd * px * 4},  {"out_depth", &b.out_depth, bwd * px * 4},
            {"grad_img", &b.grad_img, bwd * px * 16}, {"stats", &b.stats, bwd * cap * 16ull},
            {"keys_lo", &b.keys_lo, b.isect_capacity * 4ull}, {"keys_hi", &b.keys_hi, b.isect_capacity * 4ull},
            {"vals", &b.vals, b.isect_capacity * 4ull},       {"partial[3]", &b.partial[3], bwd * b.isect_capacity * 36ull},
        };
        T_CHECK(b.isect_capacity >= m, "%u intersections asked, %u held", m, b.isect_capacity);
        for (size_t k = 0; k < SPLAT_COUNTOF(needs); k++)
            T_CHECK(needs[k].buf->size >= needs[k].need, "%s (%s, %u Gaussians, %ux%u, %u intersections): %llu bytes, %llu needed",
                    needs[k].name, fwd_only ? "forward only" : "training", cap, w, h, b.isect_capacity,
                    (unsigned long long)needs[k].buf->size, (unsigned long long)needs[k].need);
        splat__render_bufs_free(g, &b);
    }
    splat__renderer_free(&r);
}
