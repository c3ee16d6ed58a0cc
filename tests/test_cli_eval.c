/* The splatc tool's evaluation output end to end: metrics.json's per-view results ("views"),
 * checked against the dataset's own listing of images and against the renders it writes. */
#include <dirent.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "api/api.h"
#include "io/io.h"
#include "ref/ref_train.h"

static cJSON *read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    cJSON *j = s && n ? cJSON_Parse(s) : NULL;
    free(s);
    return j;
}

static double number_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The held-out images of the COLMAP folder `dir` as the dataset lists them, independently of
 * splatc: the files of images/ sorted by name, every 8th from the first (3DGS's llffhold = 8).
 * Returns their count (names [max], caller frees each) and the folder's count in *total. */
static uint32_t held_out_images(const char *dir, char **names, uint32_t max, uint32_t *total)
{
    char path[700];
    snprintf(path, sizeof path, "%s/images", dir);
    DIR *d = opendir(path);
    char *all[256];
    uint32_t n = 0, held = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;)
        if (e->d_name[0] != '.') all[n++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(all, n, sizeof *all, cmp_name);
    for (uint32_t k = 0; k < n; k++) {
        if (k % 8 == 0 && held < max) names[held++] = all[k];
        else free(all[k]);
    }
    *total = n;
    return held;
}

/* The mean squared error over every value of a render `png` (8-bit, as written) against its image
 * `gt`, as bounds on the one evaluation computed from the render in float, x: each written value
 * p is round(255 clamp(x)), so clamp(x) = p/255 + e with |e| <= 0.5/255, and with q = (p - g)/255
 * the squared error (q + e)^2 lies within q^2 - |q|/255 and q^2 + |q|/255 + 1/(4 255^2). */
static void png_mse_bounds(const splat_image *png, const splat_image *gt, double *lo, double *hi)
{
    uint64_t n = (uint64_t)png->width * png->height * 3;
    double sq = 0, abs_sum = 0;
    for (uint64_t v = 0; v < n; v++) {
        double q = ((int)png->rgba[4 * (v / 3) + v % 3] - (int)gt->rgba[4 * (v / 3) + v % 3]) / 255.0;
        sq += q * q, abs_sum += fabs(q);
    }
    *lo = (sq - abs_sum / 255) / n;
    *hi = (sq + abs_sum / 255) / n + 1 / (4.0 * 255 * 255);
}

/* What the oracle renders with: the trained scene and the held-out views' cameras [n], in the
 * order of the listing. */
typedef struct oracle {
    splat_ctx *ctx;
    const splat_scene *scene;
    const splat_camera *cams;
} oracle;

/* The independent oracle for entry `v` of OUT/metrics.json (view `k`, image `name` of the demo
 * `data`), from the render the tool wrote, OUT/renders/<name less extension>.png, and the image:
 * - its psnr and psnr_full (the same without a mask) within the bounds the PNG's 8-bit values
 *   allow (png_mse_bounds), which is all the file says: a few percent of the mean squared error,
 *   which two views' can be closer than;
 * - so, tighter: the PNG is checked to be the float image splat_render gives for the view's camera
 *   (each value within 1/255 of its rounding), and that image's psnr, ssim, l1 and psnr_full by
 *   the CPU reference of the loss (src/ref, double precision) are the entry's within T_TOL_LOSS
 *   (the GPU's float sums; PSNR through its mean squared error), as train_eval_vs_render checks
 *   the means. */
static void check_render(const oracle *o, const char *out, const char *data, const char *name, uint32_t k, const cJSON *v)
{
    char base[256], render[900], image[900];
    snprintf(base, sizeof base, "%s", name);
    char *dot = strrchr(base, '.');
    if (dot) *dot = '\0';
    snprintf(render, sizeof render, "%s/renders/%s.png", out, base);
    snprintf(image, sizeof image, "%s/images/%s", data, name);
    splat_image png = {0}, gt = {0};
    splat_error err = {0};
    T_OK(splat__image_load(render, &png, &err), &err);
    const splat_camera *cam = &o->cams[k];
    if (splat__image_load(image, &gt, &err) != SPLAT_OK || png.width != gt.width || png.height != gt.height ||
        gt.width != cam->width || gt.height != cam->height) {
        T_CHECK(false, "%s: %ux%u, its image %s %ux%u, the camera %ux%u (%s)", render, png.width, png.height, image,
                gt.width, gt.height, cam->width, cam->height, err.msg);
        splat__image_free(&png);
        splat__image_free(&gt);
        return;
    }
    uint32_t w = gt.width, h = gt.height, n = w * h * 3, differ = 0;
    bool alpha = false; /* none to composite, and no mask: every value counts */
    for (uint32_t p = 0; p < w * h; p++) alpha |= gt.rgba[4 * p + 3] != 255;
    T_CHECK(!alpha, "%s has alpha", image);
    double lo, hi;
    png_mse_bounds(&png, &gt, &lo, &hi);

    float *rgb = NULL, *y = malloc(sizeof *y * n);
    splat_ref_loss_value ref = {0};
    if (y && splat_render(o->ctx, o->scene, cam, 1, NULL, &rgb, &err) == SPLAT_OK) {
        for (uint32_t p = 0; p < n; p++) {
            y[p] = gt.rgba[4 * (p / 3) + p % 3] / 255.0f;
            differ += abs(png.rgba[4 * (p / 3) + p % 3] - (int)lrintf(255.0f * fminf(fmaxf(rgb[p], 0.0f), 1.0f))) > 1;
        }
        splat__ref_loss(rgb, y, w, h, SPLAT_REF_LAMBDA, &ref, NULL);
    } else {
        T_CHECK(false, "splat_render: %s", err.msg);
    }
    splat_free(rgb);
    free(y);
    T_CHECK(differ == 0, "%s: %u of %u values differ by more than 1/255 from splat_render's for the view's camera",
            render, differ, n);

    static const char *keys[4] = {"psnr", "psnr_full", "ssim", "l1"};
    const double want[4] = {ref.mse, ref.mse_full, ref.ssim, ref.l1};
    double got[4];
    for (int q = 0; q < 4; q++) {
        got[q] = number_of(v, keys[q]);
        if (q < 2) { /* PSNR: compared as the mean squared error behind it */
            got[q] = pow(10, -got[q] / 10);
            T_CHECK(got[q] >= lo * (1 - T_TOL_LOSS) && got[q] <= hi * (1 + T_TOL_LOSS),
                    "%s/metrics.json: view %u (%s): %s %.6f, a mean squared error of %.8g; its PNG allows %.8g to %.8g",
                    out, k, name, keys[q], number_of(v, keys[q]), got[q], lo, hi);
        }
        double tol = T_TOL_LOSS * (q < 2 ? want[q] : fmax(1, fabs(want[q])));
        T_CHECK(fabs(got[q] - want[q]) <= tol,
                "%s/metrics.json: view %u (%s): %s %.8g (%.10g); from its render, the reference's %.10g", out, k, name,
                keys[q], number_of(v, keys[q]), got[q], want[q]);
    }
    printf("  %s: %-12s PSNR %.4f: mean squared error %.8f, reference %.8f (PNG %.6f to %.6f); SSIM %.6f, reference %.6f; "
           "L1 %.6f, reference %.6f\n",
           out, name, number_of(v, "psnr"), got[0], want[0], lo, hi, got[2], want[2], got[3], want[3]);
    splat__image_free(&png);
    splat__image_free(&gt);
}

/* Checks OUT/metrics.json's "views" against the held-out images `names` [n] of the demo `data`:
 * one entry per view in the dataset's order, named after its image; their means are the
 * top-level values; each PSNR within what its render allows (check_render). *gap: the smallest
 * difference between two views' PSNRs (how far apart the oracle has to tell them). */
static void check_views(const oracle *o, const char *out, const char *data, char *const *names, uint32_t n, double *gap)
{
    char path[900];
    snprintf(path, sizeof path, "%s/metrics.json", out);
    *gap = INFINITY;
    cJSON *j = read_json(path);
    T_REQUIRE(j, "%s: missing or not JSON", path);
    const cJSON *views = cJSON_GetObjectItemCaseSensitive(j, "views");
    uint32_t listed = cJSON_IsArray(views) ? (uint32_t)cJSON_GetArraySize(views) : 0;
    T_CHECK(cJSON_IsArray(views) && listed == n, "%s: %u views listed, %u held out", path, listed, n);
    T_CHECK(number_of(j, "eval_views") == n, "%s: eval_views %g, %u held out", path, number_of(j, "eval_views"), n);
    static const char *keys[4] = {"psnr", "ssim", "l1", "psnr_full"};
    double sums[4] = {0};
    for (uint32_t k = 0; k < listed && k < n; k++) {
        const cJSON *v = cJSON_GetArrayItem(views, (int)k);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
        T_CHECK(cJSON_IsString(name) && strcmp(name->valuestring, names[k]) == 0, "%s: view %u is named %s, the image is %s",
                path, k, cJSON_IsString(name) ? name->valuestring : "(none)", names[k]);
        for (int q = 0; q < 4; q++) sums[q] += number_of(v, keys[q]);
        for (uint32_t i = 0; i < k; i++)
            *gap = fmin(*gap, fabs(number_of(v, "psnr") - number_of(cJSON_GetArrayItem(views, (int)i), "psnr")));
        check_render(o, out, data, names[k], k, v);
    }
    /* the means over the views are the top-level values (the library sums v/n, here sum/n) */
    for (int q = 0; q < 4 && listed == n && n > 0; q++) {
        double mean = sums[q] / n, top = number_of(j, keys[q]);
        T_CHECK(fabs(mean - top) <= 1e-9 * fabs(top), "%s: the views' mean %s %.17g, the top-level %.17g", path, keys[q],
                mean, top);
    }
    cJSON_Delete(j);
}

/* metrics.json's "views", from `train --eval` and from `eval --eval`, on a demo of a random 17 to
 * 40 views (3 to 5 held out): one entry per held-out view, in the dataset's order, named as the
 * dataset's images/ folder lists them (not as splatc does); the means of their psnr, ssim, l1 and
 * psnr_full are the top-level values (to 1e-9: the library sums v/n, here sum/n); and each view's
 * values are those of its own render, by the oracle of check_render: within the bounds its PNG's
 * 8-bit rounding leaves, and exactly (T_TOL_LOSS) from the CPU reference's loss of the float image
 * the PNG is a rounding of. The smallest gap between two views' PSNRs is printed: that is what a
 * view's numbers written into another's entry would have to hide in. */
SPLAT_TEST(cli_eval_per_view)
{
    uint32_t n_views = 17 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 24);
    char data[600], a[600], b[600], args[2400], *out;
    snprintf(data, sizeof data, "%s", splat_test_path("demo"));
    snprintf(a, sizeof a, "%s", splat_test_path("a"));
    snprintf(b, sizeof b, "%s", splat_test_path("b"));
    printf("  a demo of %u views\n", n_views);
    snprintf(args, sizeof args, "demo '%s' --size 32 --views %u -q", data, n_views);
    T_REQUIRE(splat_test_cli("", args, &out) == 0, "demo: %s", out);
    free(out);
    char *names[8];
    uint32_t total, n = held_out_images(data, names, 8, &total);
    T_REQUIRE(total == n_views && n == (n_views + 7) / 8, "images/ lists %u images, %u of them held out", total, n);

    snprintf(args, sizeof args, "train '%s' -o '%s' --steps 30 --eval -q", data, a);
    int rc = splat_test_cli("", args, &out);
    T_CHECK(rc == 0 && !strstr(out, "vulkan validation"), "train: exit %d: %s", rc, out);
    free(out);

    /* the oracle's scene and cameras: the trained PLY, and each held-out image's camera as the
     * library reads the dataset */
    char ply[700];
    snprintf(ply, sizeof ply, "%s/point_cloud.ply", a);
    splat_error err = {0};
    splat_ctx *ctx = NULL;
    splat_trainer *t = NULL;
    splat_scene scene = {0};
    splat_view_info info[64];
    splat_camera cams[8];
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    T_OK(splat_scene_load_ply(ply, &scene, &err), &err);
    T_OK(splat_trainer_init(&t, ctx, &(splat_train_desc){.data = data, .eval = true, .init_ply = ply}, &err), &err);
    uint32_t listed = splat_trainer_views(t, info, 64), found = 0;
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t i = 0; i < listed && i < 64; i++)
            if (strcmp(info[i].name, names[k]) == 0) cams[k] = info[i].camera, found++;
    splat_trainer_free(t);
    T_REQUIRE(found == n, "the library reads %u of the %u held-out images", found, n);
    const oracle o = {ctx, &scene, cams};

    double gap;
    check_views(&o, a, data, names, n, &gap);
    printf("  train --eval: the views' PSNRs %.3f dB apart at least\n", gap);

    snprintf(args, sizeof args, "eval '%s' '%s' --eval -o '%s'", ply, data, b);
    rc = splat_test_cli("", args, &out);
    T_CHECK(rc == 0 && !strstr(out, "vulkan validation"), "eval: exit %d: %s", rc, out);
    free(out);
    check_views(&o, b, data, names, n, &gap);
    printf("  eval --eval: the views' PSNRs %.3f dB apart at least\n", gap);
    for (uint32_t k = 0; k < n; k++) free(names[k]);
    splat_scene_free(&scene);
    /* the oracle's renders, like the tool's runs, leave the validation layers silent (when on) */
    T_CHECK(ctx->gpu->validation_messages == 0, "%u Vulkan validation messages", ctx->gpu->validation_messages);
    splat_ctx_free(ctx);
}
