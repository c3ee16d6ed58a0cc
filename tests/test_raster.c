/* The rasterizer on the GPU against the double-precision CPU reference (src/ref). */
#include "harness.h"
#include "raster_support.h"

typedef struct raster_case {
    uint32_t n, w, h, sh_degree, cap;
} raster_case;

/* Normalised error ||gpu - ref|| / ||ref|| of one parameter group over the rows not excluded. */
static double group_error(const float *gpu, const double *ref, uint32_t n, uint32_t width, const bool *excluded,
                          double *ref_norm)
{
    double num = 0, den = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (excluded[i]) continue;
        for (uint32_t k = 0; k < width; k++) {
            double r = ref[(uint64_t)i * width + k], d = (double)gpu[(uint64_t)i * width + k] - r;
            num += d * d;
            den += r * r;
        }
    }
    *ref_norm = sqrt(den);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Runs the backward on the GPU and in the reference with the same random upstream gradient
 * (zero at borderline pixels) and compares every parameter group. */
static void check_backward(t_render *t, t_ref *ref, const splat_scene *scene, const splat_camera *cam, const char *what)
{
    splat_error err = {0};
    uint32_t n = scene->count;
    uint64_t px = (uint64_t)cam->width * cam->height;
    float *g4 = calloc(px * 4, sizeof(float)), *d_rgb = calloc(px * 3, sizeof(float)), *d_alpha = calloc(px, sizeof(float));
    for (uint64_t p = 0; p < px; p++) {
        if (ref->img.margin[p] < T_PIXEL_MARGIN) continue;
        for (int c = 0; c < 3; c++) g4[4 * p + c] = d_rgb[3 * p + c] = (float)t_uniform(-1, 1);
        g4[4 * p + 3] = d_alpha[p] = (float)t_uniform(-1, 1);
    }
    T_OK(splat__buf_upload(t->g, &t->bufs.grad_img, 0, g4, px * 16, &err), &err);
    splat__render_bwd(splat__stream_cmd(&t->stream), &t->r, &t->scene, &t->bufs, n, &t->grads, false);
    T_OK(splat__stream_sync(&t->stream, SPLAT_SYNC_COMMIT_AND_WAIT, &err), &err);
    splat_scene got;
    T_OK(splat_scene_init(&got, n ? n : 1, &err), &err);
    t->grads.count = n;
    T_OK(splat__scene_gpu_download(t->g, &t->grads, &got, &err), &err);

    splat_ref_grads rg;
    T_OK(splat_ref_grads_init(&rg, n, &err), &err);
    splat_ref_backward(scene, cam, &ref->set, ref->proj, &ref->lists, &ref->img, d_rgb, d_alpha, &rg);

    bool *excluded = calloc(n + 1, sizeof(bool));
    uint32_t n_excluded = 0;
    for (uint32_t i = 0; i < n; i++) n_excluded += excluded[i] = ref->proj[i].margin < 1e-4;
    struct {
        const char *name;
        const float *gpu;
        const double *ref;
        uint32_t width;
    } groups[] = {
        {"means", got.means, rg.means, 3},
        {"log_scales", got.log_scales, rg.log_scales, 3},
        {"quats", got.quats, rg.quats, 4},
        {"opacities", got.opacities, rg.opacities, 1},
        {"sh", got.sh, rg.sh, 48},
    };
    printf("  %s backward:", what);
    for (size_t k = 0; k < SPLAT_COUNTOF(groups); k++) {
        double norm;
        double e = group_error(groups[k].gpu, groups[k].ref, n, groups[k].width, excluded, &norm);
        printf(" %s %.1e", groups[k].name, e);
        T_CHECK(e <= 1e-4 || (norm == 0 && e < 1e-12), "%s: %s gradient normalised error %.3g (|ref| %.3g)", what,
                groups[k].name, e, norm);
        uint64_t nonfinite = 0;
        for (uint64_t i = 0; i < (uint64_t)n * groups[k].width; i++) nonfinite += !isfinite(groups[k].gpu[i]);
        T_CHECK(nonfinite == 0, "%s: %llu non-finite %s gradients", what, (unsigned long long)nonfinite, groups[k].name);
    }
    /* Coefficients above the active degree get exactly zero. */
    uint32_t active = (ref->set.sh_degree + 1) * (ref->set.sh_degree + 1);
    uint64_t stray = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = active; k < 16; k++)
            for (int c = 0; c < 3; c++) stray += got.sh[(i * 16 + k) * 3 + c] != 0.0f;
    T_CHECK(stray == 0, "%s: %llu SH gradients above degree %u", what, (unsigned long long)stray, ref->set.sh_degree);
    printf(" (%u Gaussians excluded as borderline)\n", n_excluded);
    free(excluded);
    splat_ref_grads_free(&rg);
    splat_scene_free(&got);
    free(g4);
    free(d_rgb);
    free(d_alpha);
}

static void run_case(const raster_case *rc, bool backward)
{
    char what[96];
    snprintf(what, sizeof what, "N=%u %ux%u deg %u cap %u", rc->n, rc->w, rc->h, rc->sh_degree, rc->cap);
    splat_camera cam = t_random_camera(rc->w, rc->h);
    splat_scene scene;
    t_random_scene(&scene, rc->n, &cam);
    splat_render_opts opts = {.sh_degree = rc->sh_degree, .max_gaussians_per_tile = rc->cap};
    for (int c = 0; c < 3; c++) opts.background[c] = (float)t_uniform(0, 1);
    t_render t;
    if (!t_render_init(&t, &scene, rc->w, rc->h, 0)) goto done;
    splat_error err = {0};
    splat_status st = splat__render_image(&t.stream, &t.r, &t.scene, &t.bufs, &cam, &opts, &err);
    T_CHECK(st == SPLAT_OK, "%s: %s", what, err.msg);
    if (st != SPLAT_OK) goto done_t;
    t_gpu_image gpu;
    t_ref ref;
    if (t_download_image(&t, &cam, &gpu) && t_ref_render(&ref, &scene, &cam, &opts, &gpu)) {
        t_compare_forward(&ref, &gpu, what);
        if (backward) check_backward(&t, &ref, &scene, &cam, what);
        t_ref_free(&ref);
    }
    t_gpu_image_free(&gpu);
done_t:
    t_render_free(&t);
done:
    splat_scene_free(&scene);
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
