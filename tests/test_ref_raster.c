/* Tests of the CPU reference rasterizer (src/ref): its backward against central finite
 * differences of its double forward, its forward against closed forms and brute force. */
#include <float.h>

#include "harness.h"
#include "ref/ref.h"
#include "ref/ref_internal.h" /* the SH basis, for its own test */

/* ------------------------------------------------------------------------ helpers */

static uint32_t rand_u32(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(splat__rng_u64(splat_test_rng()) % (hi - lo + 1));
}

static double normal(void) { return splat__rng_normal(splat_test_rng()); }

/* A size in [lo, hi] that is not a multiple of the tile size. */
static uint32_t rand_size(uint32_t lo, uint32_t hi)
{
    uint32_t v;
    do v = rand_u32(lo, hi);
    while (v % SPLAT_REF_TILE == 0);
    return v;
}

static void quat_to_matrix(const double q[4], double R[9])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* A random pinhole camera: off-centre principal point, non-square pixels, random pose. */
static splat_camera random_camera(uint32_t wlo, uint32_t whi)
{
    splat_camera cam = {0};
    cam.width = rand_size(wlo, whi);
    cam.height = rand_size(wlo * 3 / 4, whi * 3 / 4);
    cam.fx = (float)(cam.width * t_uniform(0.7, 1.4));
    cam.fy = (float)(cam.fx * t_uniform(0.8, 1.25));
    cam.cx = (float)(cam.width * t_uniform(0.3, 0.7));
    cam.cy = (float)(cam.height * t_uniform(0.3, 0.7));
    double q[4] = {normal(), normal(), normal(), normal()}, R[9];
    quat_to_matrix(q, R);
    for (int k = 0; k < 9; k++) cam.R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) cam.t[k] = (float)(2 * normal());
    return cam;
}

/* A signed permutation with third row (0, 0, +-1): exact in float, so a point placed on the
 * optical axis stays exactly there. */
static void axis_rotation(splat_camera *cam)
{
    double s0 = rand_u32(0, 1) ? 1 : -1, s1 = rand_u32(0, 1) ? 1 : -1;
    int swap = (int)rand_u32(0, 1);
    float R[9] = {0};
    if (swap) R[1] = (float)s0, R[3] = (float)s1;
    else R[0] = (float)s0, R[4] = (float)s1;
    double det2 = swap ? -s0 * s1 : s0 * s1;
    R[8] = (float)det2; /* makes det(R) = +1 */
    memcpy(cam->R, R, sizeof R);
}

static void guard_limits(const splat_camera *cam, double lim_neg[2], double lim_pos[2])
{
    double W = cam->width, H = cam->height, fx = cam->fx, fy = cam->fy, cx = cam->cx, cy = cam->cy;
    double tan_x = 0.5 * W / fx, tan_y = 0.5 * H / fy;
    lim_pos[0] = (W - cx) / fx + 0.3 * tan_x, lim_neg[0] = cx / fx + 0.3 * tan_x;
    lim_pos[1] = (H - cy) / fy + 0.3 * tan_y, lim_neg[1] = cy / fy + 0.3 * tan_y;
}

/* Writes the world mean of camera-space point p: mu = R^T (p - t). */
static void set_mean_from_camera(splat_scene *s, uint32_t i, const splat_camera *cam, const double p[3])
{
    for (int k = 0; k < 3; k++) {
        double acc = 0;
        for (int r = 0; r < 3; r++) acc += cam->R[r * 3 + k] * (p[r] - cam->t[r]);
        s->means[i * 3 + k] = (float)acc;
    }
}

/* A random Gaussian at camera-space depth z, screen offset (ux, uy) = p.xy / z, with
 * per-axis standard deviations of about sx_px, sy_px, sz_px pixels. */
static void set_gaussian(splat_scene *s, uint32_t i, const splat_camera *cam, double z, double ux, double uy,
                         const double std_px[3], double logit, double sh_scale)
{
    double p[3] = {ux * z, uy * z, z};
    set_mean_from_camera(s, i, cam, p);
    for (int k = 0; k < 3; k++) s->log_scales[i * 3 + k] = (float)log(std_px[k] * z / cam->fx);
    double qs = t_uniform(0.5, 2);
    for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)(qs * normal());
    s->opacities[i] = (float)logit;
    for (int k = 0; k < SPLAT_SH_COEFFS; k++)
        for (int c = 0; c < 3; c++) s->sh[(i * 16 + k) * 3 + c] = (float)(normal() * (k == 0 ? 1.0 : sh_scale));
}

static splat_ref_settings random_settings(uint32_t degree, uint32_t cap)
{
    splat_ref_settings set = {.sh_degree = degree, .cap = cap};
    for (int c = 0; c < 3; c++) set.background[c] = (float)t_uniform(0, 1);
    return set;
}

static bool in_list(const splat_ref_lists *l, uint32_t tile, uint32_t id)
{
    for (uint32_t k = l->offsets[tile]; k < l->offsets[tile + 1]; k++)
        if (l->ids[k] == id) return true;
    return false;
}

static bool lists_equal(const splat_ref_lists *a, const splat_ref_lists *b)
{
    uint32_t tiles = a->tiles_x * a->tiles_y;
    if (a->tiles_x != b->tiles_x || a->tiles_y != b->tiles_y) return false;
    if (memcmp(a->offsets, b->offsets, sizeof(uint32_t) * (tiles + 1)) != 0) return false;
    return memcmp(a->ids, b->ids, sizeof(uint32_t) * a->offsets[tiles]) == 0;
}

static bool all_finite(const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k])) return false;
    return true;
}

static double rel_err(double got, double want, double floor)
{
    return fabs(got - want) / fmax(fabs(want), floor);
}

/* |got - want| <= tol max(|want|, 1) */
static bool near_eq(double got, double want, double tol) { return rel_err(got, want, 1) <= tol; }

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

static double extent(double opacity) { return fmin(log(opacity * 255), 4.5); }

static double sigma_of(const splat_ref_proj *p, double x, double y)
{
    double dx = p->mean2d[0] - x, dy = p->mean2d[1] - y;
    return 0.5 * (p->conic[0] * dx * dx + p->conic[2] * dy * dy) + p->conic[1] * dx * dy;
}

static double *random_upstream(size_t n)
{
    double *v = malloc(sizeof(double) * n);
    if (v)
        for (size_t k = 0; k < n; k++) v[k] = t_uniform(-1, 1);
    return v;
}

/* ------------------------------------------------------------------ finite differences */

/* A decision closer than this (relative) to its threshold makes the function non-smooth within
 * reach of the finite-difference step: such pixels get zero weight, such Gaussians are skipped.
 * (The clamp at ALPHA_MAX can only hold within 1.001e-3 of ALPHA_MAX, so the scene that tests it
 * uses a smaller value, with steps that move alpha far less.) */
#define FD_SMOOTH 1e-3
#define FD_SMOOTH_CLAMP 2e-4
/* Steps of the central differences (the forward is evaluated in double throughout): absolute
 * for the parameters, which are O(1), and in pixels for mean2d. */
#define FD_H 1e-6
#define FD_H_PX 1e-5
/* Relative tolerance, against max(|g|, FD_FLOOR * the group's largest |g|, FD_ABS). The loss
 * sums ~1000 pixels, so the differences' own rounding is ~1e-9 at these steps: a gradient under
 * FD_ABS is checked to FD_TOL * FD_ABS = 1e-9 absolute, which is all the differences can say. */
#define FD_TOL 1e-5
#define FD_FLOOR 1e-3
#define FD_ABS 1e-4

typedef struct fd_case {
    splat_camera cam;
    splat_ref_settings set;
    splat_scene scene;
    splat_ref_params params;
    splat_ref_proj *proj;     /* [n] the unperturbed preprocess */
    splat_ref_proj *work;     /* [n] scratch */
    double *w_rgb, *w_alpha;  /* [H,W,3], [H,W] loss weights */
    splat_ref_grads grads;
    double smooth;            /* FD_SMOOTH or FD_SMOOTH_CLAMP */
} fd_case;

static void fd_case_free(fd_case *fc)
{
    splat_scene_free(&fc->scene);
    splat__ref_params_free(&fc->params);
    free(fc->proj);
    free(fc->work);
    free(fc->w_rgb);
    free(fc->w_alpha);
    splat__ref_grads_free(&fc->grads);
}

/* Renders proj into img and lists (both freed by the caller); false on allocation failure. */
static bool fd_render(const fd_case *fc, const splat_ref_proj *proj, splat_ref_lists *lists, splat_ref_image *img)
{
    splat_error err = {0};
    if (splat__ref_tile_lists(&fc->cam, proj, fc->scene.count, lists, &err) != SPLAT_OK) return false;
    if (splat__ref_image_init(img, fc->cam.width, fc->cam.height, &err) != SPLAT_OK) {
        splat__ref_lists_free(lists);
        return false;
    }
    splat__ref_rasterize(&fc->cam, &fc->set, proj, lists, img);
    return true;
}

/* L(+) - L(-) for L = sum(w_rgb rgb) + sum(w_alpha (1 - T)), summed as per-pixel differences:
 * pixels the perturbation does not reach cancel exactly instead of adding rounding noise. */
static double fd_loss_diff(const fd_case *fc, const splat_ref_image *p, const splat_ref_image *m)
{
    double d = 0;
    size_t npix = (size_t)fc->cam.width * fc->cam.height;
    for (size_t k = 0; k < npix; k++) {
        for (int c = 0; c < 3; c++) d += fc->w_rgb[k * 3 + c] * (p->rgb[k * 3 + c] - m->rgb[k * 3 + c]);
        d += fc->w_alpha[k] * (m->T[k] - p->T[k]);
    }
    return d;
}

typedef enum fd_scene {
    /* n random Gaussians; Gaussian 0 lies beyond the guard band (its tx is clamped) yet is large
     * enough to be seen. */
    FD_RANDOM,
    /* Gaussians 0 and 1 centred near one pixel centre with opacity > ALPHA_MAX, so that alpha is
     * clamped there and the loop stops at Gaussian 1 (next_T <= T_MIN) around it. */
    FD_CLAMP,
    /* Antialiased mode; every fourth Gaussian is 0.1 to 0.7 px wide (the compensation well
     * below 1) and every fourth more 0.002 to 0.02 px and nearly opaque (the compensation at its
     * floor, yet visible). */
    FD_AA,
} fd_scene;

/* A smooth random case in front of a random camera on a small image. Fills the weights (zero
 * where the pixel has a borderline decision) and the analytic gradients. */
static bool fd_case_init(fd_case *fc, fd_scene kind, uint32_t n, uint32_t degree)
{
    memset(fc, 0, sizeof *fc);
    fc->smooth = kind == FD_CLAMP ? FD_SMOOTH_CLAMP : FD_SMOOTH;
    splat_error err = {0};
    fc->cam = random_camera(20, 40);
    fc->set = random_settings(degree, 0);
    if (kind == FD_AA) fc->set.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
    if (splat_scene_init(&fc->scene, n, &err) != SPLAT_OK) return false;
    fc->scene.count = n;
    double lim_neg[2], lim_pos[2];
    guard_limits(&fc->cam, lim_neg, lim_pos);
    for (uint32_t i = 0; i < n; i++) {
        double z = t_uniform(1.5, 4), std_px[3];
        for (int k = 0; k < 3; k++) std_px[k] = t_uniform(1, 6);
        double ux = t_uniform(-lim_neg[0], lim_pos[0]), uy = t_uniform(-lim_neg[1], lim_pos[1]);
        double logit = t_uniform(-3, 8);
        if (kind == FD_RANDOM && i == 0) {
            int side = (int)rand_u32(0, 1);
            ux = side ? lim_pos[0] * t_uniform(1.03, 1.1) : -lim_neg[0] * t_uniform(1.03, 1.1);
            for (int k = 0; k < 3; k++) std_px[k] = t_uniform(6, 9);
        }
        if (kind == FD_CLAMP && i < 2) {
            /* Near (not at) the centre of one pixel, so sigma is tiny but not 0; std >= 3 px keeps
             * the change of sigma under a step well below FD_SMOOTH_CLAMP everywhere. */
            static double px, py;
            if (i == 0) {
                px = rand_u32(2, fc->cam.width - 3) + 0.5 + t_uniform(-1e-3, 1e-3);
                py = rand_u32(2, fc->cam.height - 3) + 0.5 + t_uniform(-1e-3, 1e-3);
            }
            ux = (px - fc->cam.cx) / fc->cam.fx, uy = (py - fc->cam.cy) / fc->cam.fy;
            for (int k = 0; k < 3; k++) std_px[k] = t_uniform(3, 6);
            logit = t_uniform(8, 10);
        }
        /* under half a pixel and nearly opaque: a compensation below 0.5 that still draws (with
         * up to 0.7 px and any opacity, one seed in 200 left a single such Gaussian visible) */
        if (kind == FD_AA && i % 4 == 1) {
            for (int k = 0; k < 3; k++) std_px[k] = t_uniform(0.1, 0.45);
            logit = t_uniform(2, 8);
        }
        if (kind == FD_AA && i % 4 == 2) {
            for (int k = 0; k < 3; k++) std_px[k] = t_uniform(0.002, 0.02);
            logit = t_uniform(4, 8);
        }
        set_gaussian(&fc->scene, i, &fc->cam, z, ux, uy, std_px, logit, 0.4);
    }
    if (splat__ref_params_init(&fc->params, &fc->scene, &err) != SPLAT_OK) return false;
    size_t npix = (size_t)fc->cam.width * fc->cam.height;
    fc->proj = calloc(n, sizeof *fc->proj);
    fc->work = calloc(n, sizeof *fc->work);
    fc->w_rgb = calloc(npix * 3, sizeof(double));
    fc->w_alpha = calloc(npix, sizeof(double));
    if (!fc->proj || !fc->work || !fc->w_rgb || !fc->w_alpha) return false;
    if (splat__ref_grads_init(&fc->grads, n, &err) != SPLAT_OK) return false;

    splat__ref_preprocess_params(&fc->params, &fc->cam, &fc->set, fc->proj);
    splat_ref_lists lists;
    splat_ref_image img;
    if (!fd_render(fc, fc->proj, &lists, &img)) return false;
    for (size_t k = 0; k < npix; k++) {
        bool smooth = img.margin[k] >= fc->smooth;
        for (int c = 0; c < 3; c++) fc->w_rgb[k * 3 + c] = smooth ? t_uniform(-1, 1) : 0;
        fc->w_alpha[k] = smooth ? t_uniform(-1, 1) : 0;
    }
    splat__ref_backward_params(&fc->params, &fc->cam, &fc->set, fc->proj, &lists, &img, fc->w_rgb, fc->w_alpha,
                              &fc->grads);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    return true;
}

typedef enum fd_group { FD_MEANS, FD_LOG_SCALES, FD_QUATS, FD_OPACITIES, FD_SH, FD_MEAN2D } fd_group;

typedef struct fd_stats {
    int checked, skipped, failed;
    double worst;
    char where[96];           /* the worst comparison */
} fd_stats;

/* Compares one parameter group's analytic gradient with central differences. */
static void fd_check(fd_case *fc, fd_group group, fd_stats *st)
{
    static const char *const names[] = {"means", "log_scales", "quats", "opacities", "sh", "mean2d"};
    static const uint32_t per_g[] = {3, 3, 4, 1, 48, 2};
    uint32_t n = fc->scene.count, per = per_g[group];
    double *param = group == FD_MEANS ? fc->params.means
                    : group == FD_LOG_SCALES ? fc->params.log_scales
                    : group == FD_QUATS ? fc->params.quats
                    : group == FD_OPACITIES ? fc->params.opacities
                    : group == FD_SH ? fc->params.sh
                    : NULL;
    const double *grad = group == FD_MEANS ? fc->grads.means
                         : group == FD_LOG_SCALES ? fc->grads.log_scales
                         : group == FD_QUATS ? fc->grads.quats
                         : group == FD_OPACITIES ? fc->grads.opacities
                         : group == FD_SH ? fc->grads.sh
                         : fc->grads.mean2d;
    double *fd = calloc((size_t)n * per, sizeof(double));
    char *ok = calloc((size_t)n * per, 1);
    double gmax = 0;
    for (size_t k = 0; k < (size_t)n * per; k++) gmax = fmax(gmax, fabs(grad[k]));
    T_CHECK(all_finite(grad, (size_t)n * per), "%s gradient has NaN/Inf", names[group]);
    for (uint32_t i = 0; i < n; i++) {
        /* A borderline preprocess decision of Gaussian i may flip under its own perturbation
         * (mean2d is perturbed after the preprocess, so it has none). */
        bool smooth = group == FD_MEAN2D || fc->proj[i].margin >= fc->smooth;
        for (uint32_t j = 0; j < per; j++) {
            size_t k = (size_t)i * per + j;
            if (!smooth) {
                st->skipped++;
                continue;
            }
            splat_ref_lists lp, lm;
            splat_ref_image ip, im;
            double *x;
            const splat_ref_proj *proj = fc->work;
            if (group == FD_MEAN2D) {
                memcpy(fc->work, fc->proj, sizeof *fc->proj * n);
                x = &fc->work[i].mean2d[j];
            } else {
                x = &param[k];
            }
            double x0 = *x, h = group == FD_MEAN2D ? FD_H_PX : FD_H;
            if (group == FD_OPACITIES) {
                /* Step the logit so that alpha_i moves by about FD_H / 4 whatever the logit: at the
                 * clamp scene's logits alpha_i (1 - alpha_i) ~ 1e-4 would otherwise leave the
                 * gradient small against the rounding of the loss. */
                double a = 1 / (1 + exp(-x0));
                h = fmin(1e-3, FD_H / (4 * a * (1 - a)));
            }
            double xp = x0 + h, xm = x0 - h;
            *x = xp;
            if (group != FD_MEAN2D) splat__ref_preprocess_params(&fc->params, &fc->cam, &fc->set, fc->work);
            bool okp = fd_render(fc, proj, &lp, &ip);
            *x = xm;
            if (group != FD_MEAN2D) splat__ref_preprocess_params(&fc->params, &fc->cam, &fc->set, fc->work);
            bool okm = fd_render(fc, proj, &lm, &im);
            *x = x0;
            T_REQUIRE(okp && okm, "out of memory");
            double dL = fd_loss_diff(fc, &ip, &im);
            bool same = lists_equal(&lp, &lm);
            splat__ref_lists_free(&lp);
            splat__ref_lists_free(&lm);
            splat__ref_image_free(&ip);
            splat__ref_image_free(&im);
            if (!same) { /* tile membership (or order) changes between +h and -h */
                st->skipped++;
                continue;
            }
            fd[k] = dL / (xp - xm);
            ok[k] = 1;
        }
    }
    for (size_t k = 0; k < (size_t)n * per; k++) {
        if (!ok[k]) continue;
        st->checked++;
        double e = rel_err(grad[k], fd[k], fmax(FD_FLOOR * gmax, FD_ABS));
        if (!(e <= FD_TOL) || !isfinite(fd[k])) {
            st->failed++;
            T_CHECK(e <= FD_TOL, "%s[%zu][%zu] (degree %u): analytic %.12g, finite difference %.12g, rel err %.3g",
                    names[group], k / per, k % per, fc->set.sh_degree, grad[k], fd[k], e);
        }
        if (e > st->worst) {
            st->worst = e;
            snprintf(st->where, sizeof st->where, "%s[%zu][%zu] %.3g vs %.3g", names[group], k / per, k % per,
                     grad[k], fd[k]);
        }
    }
    free(fd);
    free(ok);
}

/* Runs the check of one group on one random case per SH degree 0..3. */
static void fd_run(fd_group group, uint32_t n)
{
    fd_stats st = {0};
    for (uint32_t degree = 0; degree <= 3; degree++) {
        fd_case fc;
        bool ok = fd_case_init(&fc, FD_RANDOM, n, degree);
        if (ok) fd_check(&fc, group, &st);
        fd_case_free(&fc);
        T_REQUIRE(ok, "out of memory setting up the case");
    }
    printf("  %d checked, %d skipped (borderline), worst rel err %.3g at %s\n", st.checked, st.skipped, st.worst,
           st.where);
    /* Skips must stay rare, or the test would check little. */
    T_CHECK(st.checked > 0 && st.skipped * 4 < st.checked + st.skipped, "%d checked, %d skipped", st.checked,
            st.skipped);
}

SPLAT_TEST(ref_raster_fd_means) { fd_run(FD_MEANS, 8); }
SPLAT_TEST(ref_raster_fd_log_scales) { fd_run(FD_LOG_SCALES, 8); }
SPLAT_TEST(ref_raster_fd_quats) { fd_run(FD_QUATS, 8); }
SPLAT_TEST(ref_raster_fd_opacities) { fd_run(FD_OPACITIES, 8); }
SPLAT_TEST(ref_raster_fd_sh) { fd_run(FD_SH, 8); }
SPLAT_TEST(ref_raster_fd_mean2d) { fd_run(FD_MEAN2D, 8); }

/* The clamp at ALPHA_MAX and the stop at T_MIN: every group on a scene where both happen. */
SPLAT_TEST(ref_raster_fd_alpha_clamp)
{
    fd_stats st = {0};
    int clamped = 0, stopped = 0;
    for (int rep = 0; rep < 4; rep++) {
        fd_case fc;
        bool ok = fd_case_init(&fc, FD_CLAMP, 4, (uint32_t)rep);
        if (ok) {
            /* The scene must do what it is for: at the pixel nearest Gaussians 0 and 1 both
             * alphas are clamped, and since (1 - ALPHA_MAX)^2 < T_MIN they cannot both be
             * blended: the loop stops there. The pixel must also count in the loss. */
            uint32_t px = (uint32_t)fc.proj[0].mean2d[0], py = (uint32_t)fc.proj[0].mean2d[1];
            size_t pix = (size_t)py * fc.cam.width + px;
            int both = 1;
            for (int i = 0; i < 2; i++) {
                const splat_ref_proj *p = &fc.proj[i];
                double dx = p->mean2d[0] - (px + 0.5), dy = p->mean2d[1] - (py + 0.5);
                double sigma = 0.5 * (p->conic[0] * dx * dx + p->conic[2] * dy * dy) + p->conic[1] * dx * dy;
                both &= p->opacity * exp(-sigma) > SPLAT_REF_ALPHA_MAX;
            }
            clamped += both;
            stopped += both && fc.w_alpha[pix] != 0;
            for (fd_group g = FD_MEANS; ok && g <= FD_MEAN2D; g++) fd_check(&fc, g, &st);
        }
        fd_case_free(&fc);
        T_REQUIRE(ok, "out of memory setting up the case");
    }
    printf("  %d checked, %d skipped (borderline), worst rel err %.3g at %s; %d/4 scenes clamped, %d stopped\n",
           st.checked, st.skipped, st.worst, st.where, clamped, stopped);
    T_CHECK(clamped == 4 && stopped >= 3, "the scenes did not exercise the clamp (%d) or the stop (%d)", clamped,
            stopped);
    T_CHECK(st.checked > 0 && st.skipped * 4 < st.checked + st.skipped, "%d checked, %d skipped", st.checked,
            st.skipped);
}

/* Antialiased mode: every group, the compensation's gradient included, on scenes whose
 * compensations span (0.005, 1) and its floor. */
SPLAT_TEST(ref_raster_fd_antialiased)
{
    fd_stats st = {0};
    int low = 0, floor = 0;
    /* rounds of one scene per SH degree, until the scenes have shown both regimes: which
     * Gaussians draw is random, and a round now and then shows too few of one */
    for (uint32_t round = 0, degree = 0; round < 4 && (round == 0 || low < 2 || floor < 1); degree = (degree + 1) % 4,
                  round += degree == 0) {
        fd_case fc;
        bool ok = fd_case_init(&fc, FD_AA, 8, degree);
        for (uint32_t i = 0; ok && i < fc.scene.count; i++) {
            low += fc.proj[i].visible && fc.proj[i].compensation < 0.5 && fc.proj[i].compensation > SPLAT_REF_MIN_COMPENSATION;
            floor += fc.proj[i].visible && fc.proj[i].compensation == SPLAT_REF_MIN_COMPENSATION;
        }
        for (fd_group g = FD_MEANS; ok && g <= FD_MEAN2D; g++) fd_check(&fc, g, &st);
        fd_case_free(&fc);
        T_REQUIRE(ok, "out of memory setting up the case");
    }
    printf("  %d checked, %d skipped (borderline), worst rel err %.3g at %s; visible: %d with compensation below 0.5, "
           "%d at the floor\n", st.checked, st.skipped, st.worst, st.where, low, floor);
    T_CHECK(low >= 2 && floor >= 1, "the scenes miss a regime of the compensation (%d below 0.5, %d at the floor)", low,
            floor);
    T_CHECK(st.checked > 0 && st.skipped * 4 < st.checked + st.skipped, "%d checked, %d skipped", st.checked,
            st.skipped);
}

/* ------------------------------------------------------------------ closed forms */

/* The antialiased compensation sqrt(max(det0 / det, 0.005^2)) for 2D covariances computed by
 * hand: a Gaussian on the optical axis (fx = fy = 32, z = 4, a signed-permutation camera), its
 * standard deviations s (x, y axes, scale s z / fx) rotated in the image plane by a quaternion
 * about the camera's axis, so cov0 = Rot diag(s_x^2, s_y^2) Rot^T exactly:
 *   s = (0.5, 0.5):  det0 = 0.0625, det = 0.55^2,          compensation 0.25 / 0.55 = 5/11
 *   s = (1, 0.5), turned 45 degrees: cov0 = (0.625, 0.375, 0.625), det0 = 0.25, det = 0.925^2 -
 *                   0.375^2 = 0.715,                     compensation sqrt(0.25 / 0.715)
 *   s = (0.001, 0.001): det0 / det ~ 1e-11 < 0.005^2,   compensation 0.005 (the floor)
 * and the opacity the rasterizer blends is sigmoid(logit) times it; classic mode's is 1. */
SPLAT_TEST(ref_raster_aa_compensation_known)
{
    static const struct {
        double sx, sy, turn, cov[3], want;
    } cases[] = {
        {0.5, 0.5, 0, {0.25, 0, 0.25}, 5.0 / 11.0},
        {1, 0.5, 45, {0.625, 0.375, 0.625}, 0.59131239598908}, /* sqrt(0.25 / 0.715) */
        {0.001, 0.001, 30, {1e-6, 0, 1e-6}, 0.005},
    };
    T_CHECK(fabs(cases[1].want - sqrt(0.25 / 0.715)) < 1e-13, "the table's second value");
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
        splat_camera cam = {0};
        cam.width = 40, cam.height = 30, cam.fx = cam.fy = 32, cam.cx = 20, cam.cy = 15;
        axis_rotation(&cam);
        splat_scene s;
        splat_error err = {0};
        T_OK(splat_scene_init(&s, 1, &err), &err);
        s.count = 1;
        set_mean_from_camera(&s, 0, &cam, (double[3]){0, 0, 4});
        /* the camera's x and y are world x and y up to sign and order (R's third row is +-z), so
         * a turn about world z is one about the camera's axis; the cases' covariances have equal
         * diagonals, so sign and order change only the sign of b */
        s.log_scales[0] = (float)log(cases[k].sx * 4 / 32);
        s.log_scales[1] = (float)log(cases[k].sy * 4 / 32);
        s.log_scales[2] = (float)log(0.7);
        double h = cases[k].turn * 3.14159265358979323846 / 360;
        s.quats[0] = (float)cos(h), s.quats[1] = s.quats[2] = 0, s.quats[3] = (float)sin(h);
        s.opacities[0] = (float)t_uniform(3, 6);
        for (int c = 0; c < 48; c++) s.sh[c] = 0;
        for (int mode = 0; mode < 2; mode++) {
            splat_ref_settings set = random_settings(0, 0);
            set.rasterize_mode = mode ? SPLAT_RASTERIZE_ANTIALIASED : SPLAT_RASTERIZE_CLASSIC;
            splat_ref_proj p;
            splat__ref_preprocess(&s, &cam, &set, &p);
            double want = mode ? cases[k].want : 1;
            const double *c0 = cases[k].cov;
            T_CHECK(fabs(p.cov2d[0] - 0.3 - c0[0]) <= 1e-6 * (c0[0] + 0.3) && fabs(fabs(p.cov2d[1]) - c0[1]) <= 1e-6 &&
                        fabs(p.cov2d[2] - 0.3 - c0[2]) <= 1e-6 * (c0[2] + 0.3),
                    "case %zu: cov2d %.9g %.9g %.9g, want %g %g %g (+ 0.3 on the diagonal)", k, p.cov2d[0], p.cov2d[1],
                    p.cov2d[2], c0[0], c0[1], c0[2]);
            /* the scales pass through float: a relative 1e-7 */
            T_CHECK(p.projected && fabs(p.compensation - want) <= 1e-6 * want, "case %zu %s: compensation %.15g, want %.15g",
                    k, mode ? "antialiased" : "classic", p.compensation, want);
            T_CHECK(fabs(p.opacity - sigmoid(s.opacities[0]) * want) <= 1e-6 * p.opacity, "case %zu: opacity %.15g", k,
                    p.opacity);
            if (k == 2 && mode) T_CHECK(p.compensation == 0.005, "the floor is exact: %.17g", p.compensation);
        }
        splat_scene_free(&s);
    }
}

/* One isotropic Gaussian, identity rotation, on the optical axis of a camera whose rotation is a
 * signed permutation (so every input is exact and p = (0, 0, z) exactly): mean2d, the 2D
 * covariance, conic, radius, colour, tiles, every pixel and every margin in closed form. */
SPLAT_TEST(ref_raster_single_gaussian)
{
    splat_camera cam = {0};
    cam.width = rand_size(17, 70), cam.height = rand_size(17, 70);
    cam.fx = (float)t_uniform(20, 80), cam.fy = (float)t_uniform(20, 80);
    cam.cx = (float)(cam.width * t_uniform(0.25, 0.75)), cam.cy = (float)(cam.height * t_uniform(0.25, 0.75));
    axis_rotation(&cam);
    double z = rand_u32(128, 320) / 64.0;
    for (int k = 0; k < 3; k++) cam.t[k] = (float)(((int)rand_u32(0, 256) - 128) / 64.0);
    uint32_t degree = rand_u32(0, 3);
    splat_ref_settings set = random_settings(degree, 0);

    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, 1, &err), &err);
    s.count = 1;
    set_mean_from_camera(&s, 0, &cam, (double[3]){0, 0, z});
    for (int r = 0; r < 3; r++) {
        double p = cam.t[r];
        for (int k = 0; k < 3; k++) p += (double)cam.R[r * 3 + k] * s.means[k];
        T_REQUIRE(p == (r == 2 ? z : 0), "the mean is not exactly on the axis (%d: %g)", r, p);
    }
    float ls = (float)log(t_uniform(0.5, 5) * z / cam.fx);
    for (int k = 0; k < 3; k++) s.log_scales[k] = ls;
    s.quats[0] = (float)t_uniform(0.3, 3), s.quats[1] = s.quats[2] = s.quats[3] = 0;
    s.opacities[0] = (float)t_uniform(-4, 8);
    for (int k = 0; k < 48; k++) s.sh[k] = (float)normal();

    splat_ref_proj proj;
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&s, &cam, &set, &proj, &lists, &img, &err), &err);

    /* Expected values. */
    double sig = exp((double)ls), op = sigmoid(s.opacities[0]), tau = extent(op);
    double fx = cam.fx, fy = cam.fy;
    double a = fx * fx * sig * sig / (z * z) + 0.3, c = fy * fy * sig * sig / (z * z) + 0.3;
    /* View direction (0, 0, sz) in the world: real SH at the pole, from their definitions. */
    double sz = cam.R[8], pi = 3.14159265358979323846;
    double Ypole[4] = {0.5 / sqrt(pi), sqrt(3 / (4 * pi)) * sz, 2 * sqrt(5 / (16 * pi)), 2 * sqrt(7 / (16 * pi)) * sz};
    int kpole[4] = {0, 2, 6, 12};
    double color[3], margin = fmin((z - 0.01) / 0.01, fmin(1, fabs(op - 1 / 255.0) * 255));
    for (int ch = 0; ch < 3; ch++) {
        double raw = 0.5;
        for (uint32_t l = 0; l <= degree; l++) raw += Ypole[l] * s.sh[kpole[l] * 3 + ch];
        color[ch] = fmax(raw, 0);
        margin = fmin(margin, fabs(raw));
    }
    double tol = 1e-12;
    T_CHECK(proj.projected && proj.mean2d[0] == cam.cx && proj.mean2d[1] == cam.cy, "mean2d %g %g", proj.mean2d[0],
            proj.mean2d[1]);
    T_CHECK(near_eq(proj.cov2d[0], a, tol) && proj.cov2d[1] == 0 && near_eq(proj.cov2d[2], c, tol),
            "cov2d %.17g %g %.17g, want %.17g 0 %.17g", proj.cov2d[0], proj.cov2d[1], proj.cov2d[2], a, c);
    T_CHECK(near_eq(proj.conic[0], 1 / a, tol) && proj.conic[1] == 0 && near_eq(proj.conic[2], 1 / c, tol));
    T_CHECK(near_eq(proj.radius[0], sqrt(2 * tau * a), tol) && near_eq(proj.radius[1], sqrt(2 * tau * c), tol),
            "radius %g %g", proj.radius[0], proj.radius[1]);
    T_CHECK(proj.depth == z && near_eq(proj.opacity, op, tol));
    for (int ch = 0; ch < 3; ch++) T_CHECK(near_eq(proj.color[ch], color[ch], tol), "colour %d: %.15g, want %.15g",
                                          ch, proj.color[ch], color[ch]);
    T_CHECK(near_eq(proj.margin, margin, 1e-9), "margin %g, want %g", proj.margin, margin);
    /* On the axis p.x = p.y = 0, so mean2d's rounding bound is 8u (f / z S_r + |c_r|), S_r the sum
     * of the camera-space row's magnitudes (ref.h, SPLAT_REF_POS_ROUNDING). */
    double pos_err[2];
    for (int r = 0; r < 2; r++) {
        double S = fabs(cam.t[r]);
        for (int k = 0; k < 3; k++) S += fabs((double)cam.R[r * 3 + k] * s.means[k]);
        pos_err[r] = 8 * 0x1p-24 * ((r ? fy : fx) / z * S + (r ? cam.cy : cam.cx));
        T_CHECK(near_eq(proj.mean2d_err[r], pos_err[r], 1e-9), "mean2d_err[%d] %g, want %g", r, proj.mean2d_err[r],
                pos_err[r]);
    }

    /* Tiles: with b = 0 the minimum over a rectangle is at the point of it nearest the mean. */
    uint32_t touched = 0;
    for (uint32_t ty = 0; ty < lists.tiles_y; ty++)
        for (uint32_t tx = 0; tx < lists.tiles_x; tx++) {
            double x0 = 16.0 * tx + 0.5, x1 = fmin(16.0 * tx + 16, cam.width) - 0.5;
            double y0 = 16.0 * ty + 0.5, y1 = fmin(16.0 * ty + 16, cam.height) - 0.5;
            double ddx = cam.cx < x0 ? x0 - cam.cx : cam.cx > x1 ? cam.cx - x1 : 0;
            double ddy = cam.cy < y0 ? y0 - cam.cy : cam.cy > y1 ? cam.cy - y1 : 0;
            double m = 0.5 * (ddx * ddx / a + ddy * ddy / c);
            if (fabs(m - tau) < 1e-9) continue;
            bool want = m <= tau;
            touched += want;
            T_CHECK(in_list(&lists, ty * lists.tiles_x + tx, 0) == want, "tile %u,%u: min sigma %g, tau' %g", tx, ty,
                    m, tau);
        }
    T_CHECK(proj.tiles_touched == touched && proj.visible == (touched > 0), "tiles_touched %u, want %u",
            proj.tiles_touched, touched);

    int checked = 0;
    for (uint32_t py = 0; py < cam.height; py++)
        for (uint32_t px = 0; px < cam.width; px++) {
            size_t pix = (size_t)py * cam.width + px;
            uint32_t t = (py / 16) * lists.tiles_x + px / 16;
            bool tile = in_list(&lists, t, 0);
            double dx = cam.cx - (px + 0.5), dy = cam.cy - (py + 0.5);
            double sigma = 0.5 * (dx * dx / a + dy * dy / c), v = op * exp(-sigma), alpha = fmin(v, 0.999);
            if (fabs(alpha * 255 - 1) < 1e-9) continue;
            bool blend = tile && alpha >= 1 / 255.0;
            double want_T = blend ? 1 - alpha : 1, want_m = HUGE_VAL;
            /* the alphas' decisions less what mean2d's rounding can move sigma: |d sigma / d mean2d| pos_err */
            double v_err = fabs(dx / a) * pos_err[0] + fabs(dy / c) * pos_err[1];
            if (tile) {
                want_m = fmin(1, fmin(fabs(v - 0.999) / 0.999, fabs(alpha * 255 - 1)) - v_err);
                if (blend) want_m = fmin(want_m, fabs(want_T - 1e-4) / 1e-4 - alpha / (1 - alpha) * v_err);
            }
            for (int ch = 0; ch < 3; ch++) {
                double want = (blend ? color[ch] * alpha : 0) + want_T * set.background[ch];
                T_CHECK(near_eq(img.rgb[pix * 3 + ch], want, tol), "pixel %u,%u ch %d: %.15g, want %.15g", px, py, ch,
                        img.rgb[pix * 3 + ch], want);
            }
            T_CHECK(near_eq(img.T[pix], want_T, tol) && img.last[pix] == (blend ? 0 : -1),
                    "pixel %u,%u: T %g last %d, want %g", px, py, img.T[pix], img.last[pix], want_T);
            T_CHECK(near_eq(img.depth[pix], blend ? z * alpha : 0, tol));
            T_CHECK(img.margin[pix] == want_m || near_eq(img.margin[pix], want_m, 1e-9), "pixel %u,%u margin %g, want %g",
                    px, py, img.margin[pix], want_m);
            checked += blend;
        }
    printf("  %ux%u, degree %u, %u tiles touched, %d pixels blended\n", cam.width, cam.height, degree, touched,
           checked);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat_scene_free(&s);
}

/* Rotates v by the unit quaternion q (w, x, y, z) as q v q*: independent of the matrix form. */
static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    /* t = q * (0, v) */
    double tw = -x * v[0] - y * v[1] - z * v[2];
    double tx = w * v[0] + y * v[2] - z * v[1];
    double ty = w * v[1] + z * v[0] - x * v[2];
    double tz = w * v[2] + x * v[1] - y * v[0];
    /* out = t * conj(q) */
    out[0] = -tw * x + tx * w - ty * z + tz * y;
    out[1] = -tw * y + ty * w - tz * x + tx * z;
    out[2] = -tw * z + tz * w - tx * y + ty * x;
}

/* Anisotropic, rotated Gaussians anywhere (some beyond the guard band): the 2D covariance
 * against one built from the quaternion rotation of the axes and the numerical Jacobian of the
 * projection at the clamped point; the colour against the SH sum at the view direction. */
SPLAT_TEST(ref_raster_project_cov)
{
    splat_camera cam = random_camera(30, 90);
    uint32_t n = 24, degree = rand_u32(0, 3);
    splat_ref_settings set = random_settings(degree, 0);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    double lim_neg[2], lim_pos[2];
    guard_limits(&cam, lim_neg, lim_pos);
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3];
        for (int k = 0; k < 3; k++) std_px[k] = exp(t_uniform(log(0.3), log(20)));
        double ux = t_uniform(-1.4 * lim_neg[0], 1.4 * lim_pos[0]), uy = t_uniform(-1.4 * lim_neg[1], 1.4 * lim_pos[1]);
        set_gaussian(&s, i, &cam, t_uniform(0.5, 8), ux, uy, std_px, t_uniform(-3, 6), 0.5);
    }
    splat_ref_proj *proj = calloc(n, sizeof *proj);
    T_REQUIRE(proj);
    splat__ref_preprocess(&s, &cam, &set, proj);
    int clamped = 0, checked = 0;
    for (uint32_t i = 0; i < n; i++) {
        double mu[3], R[9], t[3], p[3];
        for (int k = 0; k < 3; k++) mu[k] = s.means[i * 3 + k], t[k] = cam.t[k];
        for (int k = 0; k < 9; k++) R[k] = cam.R[k];
        for (int r = 0; r < 3; r++) p[r] = R[r * 3] * mu[0] + R[r * 3 + 1] * mu[1] + R[r * 3 + 2] * mu[2] + t[r];
        T_CHECK(proj[i].depth == p[2]);
        if (!proj[i].projected) continue;
        checked++;
        /* World covariance sum_k s_k^2 r_k r_k^T with r_k the rotated axes, then camera space. */
        double q[4], qn = 0, Sw[9] = {0}, Sc[9] = {0};
        for (int k = 0; k < 4; k++) q[k] = s.quats[i * 4 + k], qn += q[k] * q[k];
        for (int k = 0; k < 4; k++) q[k] /= sqrt(qn);
        for (int k = 0; k < 3; k++) {
            double e[3] = {k == 0, k == 1, k == 2}, r[3], s2 = exp(2.0 * s.log_scales[i * 3 + k]);
            quat_rotate(q, e, r);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) Sw[a * 3 + b] += s2 * r[a] * r[b];
        }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++) Sc[a * 3 + b] += R[a * 3 + k] * Sw[k * 3 + l] * R[b * 3 + l];
        /* Jacobian of (fx x / z + cx, fy y / z + cy) at (tx, ty, z) by central differences. */
        double u[2] = {p[0] / p[2], p[1] / p[2]}, pc[3] = {0, 0, p[2]}, J[6];
        for (int k = 0; k < 2; k++) {
            double uc = fmin(fmax(u[k], -lim_neg[k]), lim_pos[k]);
            clamped += uc != u[k];
            pc[k] = p[2] * uc;
        }
        for (int k = 0; k < 3; k++) {
            double h = 1e-5 * p[2], pp[3] = {pc[0], pc[1], pc[2]}, pm[3] = {pc[0], pc[1], pc[2]};
            pp[k] += h, pm[k] -= h;
            J[k] = cam.fx * (pp[0] / pp[2] - pm[0] / pm[2]) / (2 * h);
            J[3 + k] = cam.fy * (pp[1] / pp[2] - pm[1] / pm[2]) / (2 * h);
        }
        double cov[4] = {0};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++) cov[a * 2 + b] += J[a * 3 + k] * Sc[k * 3 + l] * J[b * 3 + l];
        cov[0] += 0.3, cov[3] += 0.3;
        double scale = fmax(cov[0], cov[3]);
        const double *got = proj[i].cov2d;
        T_CHECK(fabs(got[0] - cov[0]) <= 1e-7 * scale && fabs(got[1] - cov[1]) <= 1e-7 * scale &&
                    fabs(got[2] - cov[3]) <= 1e-7 * scale,
                "Gaussian %u: cov2d %.10g %.10g %.10g, want %.10g %.10g %.10g", i, got[0], got[1], got[2], cov[0],
                cov[1], cov[3]);
        T_CHECK(near_eq(proj[i].mean2d[0], cam.fx * u[0] + cam.cx, 1e-12) &&
                near_eq(proj[i].mean2d[1], cam.fy * u[1] + cam.cy, 1e-12));
        /* The conic inverts the covariance. */
        const double *A = proj[i].conic;
        double I00 = A[0] * got[0] + A[1] * got[1], I01 = A[0] * got[1] + A[1] * got[2];
        double I11 = A[1] * got[1] + A[2] * got[2];
        T_CHECK(fabs(I00 - 1) < 1e-9 && fabs(I01) < 1e-9 * scale && fabs(I11 - 1) < 1e-9, "conic times cov: %g %g %g",
                I00, I01, I11);
        double tau = extent(sigmoid(s.opacities[i]));
        T_CHECK(near_eq(proj[i].radius[0], sqrt(2 * tau * got[0]), 1e-12) &&
                near_eq(proj[i].radius[1], sqrt(2 * tau * got[2]), 1e-12));
        /* Colour: campos = -R^T t. */
        double v[3], vn = 0, Y[16];
        for (int k = 0; k < 3; k++) {
            v[k] = mu[k] + (R[k] * t[0] + R[3 + k] * t[1] + R[6 + k] * t[2]);
            vn += v[k] * v[k];
        }
        for (int k = 0; k < 3; k++) v[k] /= sqrt(vn);
        splat__ref_sh_basis(v, Y);
        for (int ch = 0; ch < 3; ch++) {
            double raw = 0.5;
            for (uint32_t k = 0; k < (degree + 1) * (degree + 1); k++) raw += Y[k] * s.sh[(i * 16 + k) * 3 + ch];
            T_CHECK(near_eq(proj[i].color[ch], fmax(raw, 0), 1e-12), "Gaussian %u colour %d: %g, want %g", i, ch,
                    proj[i].color[ch], fmax(raw, 0));
        }
    }
    printf("  %d projected of %u, %d clamped coordinates\n", checked, n, clamped);
    T_CHECK(checked > (int)n / 2 && clamped > 0, "the case covers too little: %d projected, %d clamped", checked, clamped);
    free(proj);
    splat_scene_free(&s);
}

/* The SH basis is orthonormal over the sphere (Gauss-Legendre in cos(theta) times a uniform
 * phi grid, exact for these degrees, on a randomly rotated grid), has parity (-1)^l, carries
 * gsplat's signs at the axes, and its gradient matches central differences. */
SPLAT_TEST(ref_raster_sh_basis)
{
    enum { NT = 8, NP = 16 };
    double xs[NT], ws[NT];
    for (int i = 0; i < NT; i++) { /* Newton on the Legendre polynomial P_8 */
        double x = cos(3.14159265358979323846 * (i + 0.75) / (NT + 0.5)), dp = 1;
        for (int it = 0; it < 100; it++) {
            double p0 = 1, p1 = x;
            for (int k = 2; k <= NT; k++) {
                double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
                p0 = p1, p1 = p2;
            }
            dp = NT * (x * p1 - p0) / (x * x - 1);
            x -= p1 / dp;
        }
        xs[i] = x, ws[i] = 2 / ((1 - x * x) * dp * dp);
    }
    double q[4] = {normal(), normal(), normal(), normal()}, Rg[9];
    quat_to_matrix(q, Rg);
    double G[16][16] = {{0}};
    for (int i = 0; i < NT; i++)
        for (int j = 0; j < NP; j++) {
            double ct = xs[i], st = sqrt(1 - ct * ct), phi = 2 * 3.14159265358979323846 * j / NP;
            double d0[3] = {st * cos(phi), st * sin(phi), ct}, d[3], Y[16];
            for (int r = 0; r < 3; r++) d[r] = Rg[r * 3] * d0[0] + Rg[r * 3 + 1] * d0[1] + Rg[r * 3 + 2] * d0[2];
            splat__ref_sh_basis(d, Y);
            double w = ws[i] * 2 * 3.14159265358979323846 / NP;
            for (int k = 0; k < 16; k++)
                for (int l = 0; l < 16; l++) G[k][l] += w * Y[k] * Y[l];
        }
    for (int k = 0; k < 16; k++)
        for (int l = 0; l < 16; l++)
            T_CHECK(fabs(G[k][l] - (k == l)) < 1e-10, "<Y%d, Y%d> = %.12g", k, l, G[k][l]);

    double Y[16];
    splat__ref_sh_basis((double[3]){0, 1, 0}, Y);
    T_CHECK(Y[1] < 0, "Y1 = -C1 y");
    splat__ref_sh_basis((double[3]){1, 0, 0}, Y);
    T_CHECK(Y[3] < 0 && Y[8] > 0 && Y[15] < 0, "Y3 = -C1 x, Y8 > 0 and Y15 < 0 on +x");
    splat__ref_sh_basis((double[3]){0, 0, 1}, Y);
    T_CHECK(Y[2] > 0 && Y[6] > 0 && Y[12] > 0);

    for (int rep = 0; rep < 20; rep++) {
        double d[3] = {normal(), normal(), normal()}, n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++) d[k] /= n;
        double Yp[16], Ym[16], Yn[16], dY[16][3], dm[3] = {-d[0], -d[1], -d[2]};
        splat__ref_sh_basis(d, Y);
        splat__ref_sh_basis(dm, Yn);
        for (int k = 0; k < 16; k++) {
            int l = k == 0 ? 0 : k < 4 ? 1 : k < 9 ? 2 : 3;
            T_CHECK(fabs(Yn[k] - (l % 2 ? -Y[k] : Y[k])) < 1e-14, "parity of Y%d", k);
        }
        splat__ref_sh_basis_grad(d, dY);
        for (int j = 0; j < 3; j++) {
            double h = 1e-6, dp[3] = {d[0], d[1], d[2]}, dmm[3] = {d[0], d[1], d[2]};
            dp[j] += h, dmm[j] -= h;
            splat__ref_sh_basis(dp, Yp);
            splat__ref_sh_basis(dmm, Ym);
            for (int k = 0; k < 16; k++) {
                double fd = (Yp[k] - Ym[k]) / (2 * h);
                T_CHECK(fabs(dY[k][j] - fd) < 1e-8, "dY%d/d%c: %.12g, finite difference %.12g", k, "xyz"[j],
                        dY[k][j], fd);
            }
        }
    }
}

/* Renders and checks that every pixel is exactly the background, no tile has a Gaussian, and
 * the backward gives zeros. */
static void check_background(const splat_scene *s, const splat_camera *cam, const splat_ref_settings *set)
{
    splat_error err = {0};
    splat_ref_proj *proj = calloc(s->count ? s->count : 1, sizeof *proj);
    T_REQUIRE(proj);
    splat_ref_lists lists;
    splat_ref_image img;
    splat_ref_grads g;
    T_OK(splat__ref_render(s, cam, set, proj, &lists, &img, &err), &err);
    T_OK(splat__ref_grads_init(&g, s->count, &err), &err);
    for (uint32_t i = 0; i < s->count; i++) T_CHECK(!proj[i].visible && proj[i].tiles_touched == 0, "Gaussian %u", i);
    T_CHECK(lists.offsets[lists.tiles_x * lists.tiles_y] == 0 && lists.n_border == 0);
    size_t npix = (size_t)cam->width * cam->height;
    for (size_t k = 0; k < npix; k++) {
        for (int ch = 0; ch < 3; ch++)
            T_CHECK(img.rgb[k * 3 + ch] == set->background[ch], "pixel %zu: %g", k, img.rgb[k * 3 + ch]);
        T_CHECK(img.T[k] == 1 && img.last[k] == -1 && img.depth[k] == 0 && img.margin[k] == HUGE_VAL);
    }
    double *up = random_upstream(npix * 4);
    T_REQUIRE(up);
    splat_ref_params params;
    T_OK(splat__ref_params_init(&params, s, &err), &err);
    splat__ref_backward_params(&params, cam, set, proj, &lists, &img, up, up + npix * 3, &g);
    for (size_t k = 0; k < (size_t)s->count * 3; k++) T_CHECK(g.means[k] == 0 && g.log_scales[k] == 0);
    for (size_t k = 0; k < (size_t)s->count * 48; k++) T_CHECK(g.sh[k] == 0);
    for (size_t k = 0; k < s->count; k++) T_CHECK(g.opacities[k] == 0 && g.quats[k * 4] == 0);
    splat__ref_params_free(&params);
    free(up);
    splat__ref_grads_free(&g);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    free(proj);
}

SPLAT_TEST(ref_raster_empty_scene)
{
    splat_camera cam = random_camera(1, 80);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, 4, &err), &err);
    check_background(&s, &cam, &(splat_ref_settings){0});
    check_background(&s, &cam, &(splat_ref_settings){.sh_degree = 3, .background = {0.2f, 0.5f, 1}, .cap = 3});
    splat_scene_free(&s);
}

SPLAT_TEST(ref_raster_behind_camera)
{
    splat_camera cam = random_camera(17, 80);
    uint32_t n = rand_u32(1, 30);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3] = {5, 5, 5};
        /* Depth from -3 to just short of the near plane (0.01), offsets anywhere. */
        set_gaussian(&s, i, &cam, t_uniform(-3, 0.009), t_uniform(-1, 1), t_uniform(-1, 1), std_px, 5, 1);
        for (int k = 0; k < 3; k++) s.log_scales[i * 3 + k] = (float)t_uniform(-3, 0); /* z < 0 gave NaN */
    }
    splat_ref_settings set = random_settings(rand_u32(0, 3), 0);
    check_background(&s, &cam, &set);
    splat_scene_free(&s);
}

SPLAT_TEST(ref_raster_transparent)
{
    splat_camera cam = random_camera(17, 80);
    uint32_t n = rand_u32(1, 30);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3] = {t_uniform(1, 10), t_uniform(1, 10), t_uniform(1, 10)};
        /* alpha_i < ALPHA_MIN: logit below ln((1/255) / (254/255)) = -5.537 */
        double logit = i == 0 ? -20 : t_uniform(-40, -5.6);
        set_gaussian(&s, i, &cam, t_uniform(1, 5), t_uniform(-0.5, 0.5), t_uniform(-0.5, 0.5), std_px, logit, 1);
    }
    splat_ref_settings set = random_settings(rand_u32(0, 3), 0);
    check_background(&s, &cam, &set);
    splat_scene_free(&s);
}

/* ------------------------------------------------------------------ blending and lists */

/* Two opaque Gaussians on one pixel centre: the front one (whichever its index) is blended with
 * alpha clamped to ALPHA_MAX, and the one behind would take T to (1 - ALPHA_MAX)^2 < T_MIN, so
 * the loop stops there and it is hidden. */
SPLAT_TEST(ref_raster_occlusion)
{
    splat_camera cam = random_camera(20, 80);
    splat_ref_settings set = random_settings(0, 0);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, 2, &err), &err);
    s.count = 2;
    uint32_t px = rand_u32(0, cam.width - 1), py = rand_u32(0, cam.height - 1), front = rand_u32(0, 1);
    double zf = t_uniform(1, 4), zb = zf * t_uniform(1.01, 3);
    for (uint32_t i = 0; i < 2; i++) {
        double z = i == front ? zf : zb, std_px[3] = {t_uniform(1, 4), t_uniform(1, 4), t_uniform(1, 4)};
        set_gaussian(&s, i, &cam, z, (px + 0.5 - cam.cx) / cam.fx, (py + 0.5 - cam.cy) / cam.fy, std_px,
                     t_uniform(8, 12), 1);
    }
    splat_ref_proj proj[2];
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
    size_t pix = (size_t)py * cam.width + px;
    uint32_t t = (py / 16) * lists.tiles_x + px / 16;
    T_REQUIRE(lists.offsets[t + 1] - lists.offsets[t] == 2, "tile %u holds %u Gaussians", t,
              lists.offsets[t + 1] - lists.offsets[t]);
    T_CHECK(lists.ids[lists.offsets[t]] == front, "the front Gaussian must come first");
    for (int i = 0; i < 2; i++)
        T_CHECK(proj[i].opacity * exp(-sigma_of(&proj[i], px + 0.5, py + 0.5)) > SPLAT_REF_ALPHA_MAX);
    T_CHECK(img.last[pix] == (int32_t)front, "last %d, front %u", img.last[pix], front);
    T_CHECK(near_eq(img.T[pix], 1 - SPLAT_REF_ALPHA_MAX, 1e-12), "T %.15g", img.T[pix]);
    T_CHECK(near_eq(img.depth[pix], SPLAT_REF_ALPHA_MAX * proj[front].depth, 1e-12), "depth %.15g", img.depth[pix]);
    for (int ch = 0; ch < 3; ch++) {
        double want = SPLAT_REF_ALPHA_MAX * proj[front].color[ch] + (1 - SPLAT_REF_ALPHA_MAX) * set.background[ch];
        T_CHECK(near_eq(img.rgb[pix * 3 + ch], want, 1e-12), "channel %d: %.15g, want %.15g", ch,
                img.rgb[pix * 3 + ch], want);
    }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat_scene_free(&s);
}

/* Four small Gaussians stacked along the ray of a pixel, a fraction of a pixel off its centre,
 * their opacities set so that each blends alpha = 0.89975 there: the transmittance ends at
 * (1 - alpha)^4 = 1.01e-4, 1 % above T_MIN, the pixel's closest decision. Its margin is that 1 %
 * less what mean2d's rounding can move the four alphas (ref.h): sum_k alpha_k / (1 - alpha_k)
 * |d sigma_k / d mean2d| mean2d_err_k, here a few 1e-4. */
SPLAT_TEST(ref_raster_transmittance_rounding)
{
    splat_camera cam = random_camera(20, 80);
    splat_ref_settings set = random_settings(0, 0);
    splat_scene s;
    splat_error err = {0};
    const uint32_t n = 4;
    const double alpha = 1 - pow(1.01e-4, 0.25);
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    uint32_t px = rand_u32(0, cam.width - 1), py = rand_u32(0, cam.height - 1);
    double ox = t_uniform(0.05, 0.2), oy = t_uniform(0.05, 0.2), z = t_uniform(1, 3);
    for (uint32_t i = 0; i < n; i++) {
        double zi = z * (1 + 0.2 * i), std_px[3] = {t_uniform(0.6, 1), t_uniform(0.6, 1), t_uniform(0.6, 1)};
        set_gaussian(&s, i, &cam, zi, (px + 0.5 + ox - cam.cx) / cam.fx, (py + 0.5 + oy - cam.cy) / cam.fy, std_px, 0, 1);
    }
    splat_ref_proj proj[4];
    splat_ref_lists lists;
    splat_ref_image img;
    /* first the shapes, then the logits that give each its alpha at the pixel */
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
    for (uint32_t i = 0; i < n; i++) {
        double o = alpha / exp(-sigma_of(&proj[i], px + 0.5, py + 0.5));
        T_REQUIRE(proj[i].projected && o < 1, "Gaussian %u: opacity %g needed", i, o);
        s.opacities[i] = (float)log(o / (1 - o));
    }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);

    size_t pix = (size_t)py * cam.width + px;
    double T = 1, T_err = 0, want = HUGE_VAL, plain = HUGE_VAL;
    for (uint32_t i = 0; i < n; i++) {
        const splat_ref_proj *p = &proj[i];
        const double *q = p->conic;
        double dx = p->mean2d[0] - (px + 0.5), dy = p->mean2d[1] - (py + 0.5);
        double terms = 0.5 * (fabs(q[0]) * dx * dx + fabs(q[2]) * dy * dy) + fabs(q[1] * dx * dy);
        double sigma = 0.5 * (q[0] * dx * dx + q[2] * dy * dy) + q[1] * dx * dy, a = p->opacity * exp(-sigma);
        double v_err = fabs(q[0] * dx + q[1] * dy) * p->mean2d_err[0] + fabs(q[1] * dx + q[2] * dy) * p->mean2d_err[1];
        T_CHECK(fabs(a - alpha) < 1e-6 && v_err > 0, "Gaussian %u: alpha %.9g, rounding %g", i, a, v_err);
        double next_T = T * (1 - a);
        T_err += a / (1 - a) * v_err;
        double m_T = fabs(next_T - SPLAT_REF_T_MIN) / SPLAT_REF_T_MIN;
        double m = fmin(sigma / terms, fmin(fabs(a - SPLAT_REF_ALPHA_MAX) / SPLAT_REF_ALPHA_MAX,
                                            fabs(a - SPLAT_REF_ALPHA_MIN) / SPLAT_REF_ALPHA_MIN) - v_err);
        want = fmin(want, fmin(m, m_T - T_err));
        plain = fmin(plain, m_T);
        T = next_T;
    }
    printf("  %ux%u, pixel %u,%u: T %.6g, margin %.6g (%.3g less than without the rounding)\n", cam.width, cam.height,
           px, py, T, img.margin[pix], plain - img.margin[pix]);
    T_CHECK(img.last[pix] == (int32_t)(n - 1) && near_eq(img.T[pix], T, 1e-9), "last %d, T %.9g, want %.9g",
            img.last[pix], img.T[pix], T);
    T_CHECK(near_eq(img.margin[pix], want, 1e-9), "margin %.12g, want %.12g", img.margin[pix], want);
    T_CHECK(plain - want > 1e-6, "the rounding took only %g from the margin", plain - want);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat_scene_free(&s);
}

/* Many faint Gaussians, each covering the whole image, so every tile lists all of them in the
 * same order and no pixel's loop stops early: with a cap, each pixel blends exactly the first
 * `cap` (its last contributor is the cap-th, T is their product), and the backward gives
 * exactly zero to the rest. */
SPLAT_TEST(ref_raster_cap)
{
    splat_camera cam = random_camera(20, 60);
    uint32_t n = rand_u32(20, 40), cap = rand_u32(1, n - 1);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    double big = 3.0 * SPLAT_MAX(cam.width, cam.height);
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3] = {big, big, big}, a = t_uniform(0.02, 0.08);
        set_gaussian(&s, i, &cam, t_uniform(1, 5), t_uniform(-0.3, 0.3), t_uniform(-0.3, 0.3), std_px,
                     log(a / (1 - a)), 1);
    }
    splat_ref_settings set = random_settings(rand_u32(0, 3), cap);
    splat_ref_proj *proj = calloc(n, sizeof *proj);
    T_REQUIRE(proj);
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
    uint32_t tiles = lists.tiles_x * lists.tiles_y;
    for (uint32_t t = 0; t < tiles; t++)
        T_REQUIRE(lists.offsets[t + 1] - lists.offsets[t] == n, "tile %u lists %u of %u", t,
                  lists.offsets[t + 1] - lists.offsets[t], n);
    const uint32_t *order = lists.ids; /* tile 0's order, the same in every tile */
    for (uint32_t py = 0; py < cam.height; py++)
        for (uint32_t px = 0; px < cam.width; px++) {
            size_t pix = (size_t)py * cam.width + px;
            double T = 1, C[3] = {0, 0, 0};
            for (uint32_t k = 0; k < cap; k++) {
                const splat_ref_proj *p = &proj[order[k]];
                double alpha = p->opacity * exp(-sigma_of(p, px + 0.5, py + 0.5));
                for (int ch = 0; ch < 3; ch++) C[ch] += p->color[ch] * alpha * T;
                T *= 1 - alpha;
            }
            T_CHECK(img.last[pix] == (int32_t)order[cap - 1], "pixel %u,%u: last %d, want %u", px, py, img.last[pix],
                    order[cap - 1]);
            T_CHECK(near_eq(img.T[pix], T, 1e-12), "pixel %u,%u: T %.15g, want %.15g", px, py, img.T[pix], T);
            for (int ch = 0; ch < 3; ch++)
                T_CHECK(near_eq(img.rgb[pix * 3 + ch], C[ch] + T * set.background[ch], 1e-12));
        }
    splat_ref_grads g;
    T_OK(splat__ref_grads_init(&g, n, &err), &err);
    size_t npix = (size_t)cam.width * cam.height;
    float *up = malloc(sizeof(float) * npix * 4);
    T_REQUIRE(up);
    for (size_t k = 0; k < npix * 4; k++) up[k] = (float)t_uniform(-1, 1);
    splat__ref_backward(&s, &cam, &set, proj, &lists, &img, up, up + npix * 3, &g);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        bool zero = g.alpha[i] == 0 && g.color[i * 3] == 0 && g.mean2d[i * 2] == 0 && g.means[i * 3] == 0 &&
                    g.opacities[i] == 0 && g.sh[i * 48] == 0;
        T_CHECK(zero == (k >= cap), "Gaussian %u at depth rank %u, cap %u: gradient %s", i, k, cap,
                zero ? "zero" : "not zero");
    }
    /* cap = 0 is no cap. */
    set.cap = 0;
    splat__ref_rasterize(&cam, &set, proj, &lists, &img);
    for (size_t pix = 0; pix < npix; pix++) T_CHECK(img.last[pix] == (int32_t)order[n - 1]);
    printf("  %u Gaussians, cap %u, %u tiles\n", n, cap, tiles);
    free(up);
    splat__ref_grads_free(&g);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    free(proj);
    splat_scene_free(&s);
}

/* A small Gaussian centred on an interior tile corner touches exactly the four tiles around it,
 * and the four pixels at the corner blend it. */
SPLAT_TEST(ref_raster_tile_corner)
{
    splat_camera cam = random_camera(40, 100);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, 1, &err), &err);
    s.count = 1;
    uint32_t tiles_x = splat__div_up(cam.width, 16), tiles_y = splat__div_up(cam.height, 16);
    uint32_t kx = rand_u32(1, tiles_x - 1), ky = rand_u32(1, tiles_y - 1);
    double std_px[3] = {t_uniform(0.5, 2), t_uniform(0.5, 2), t_uniform(0.5, 2)};
    set_gaussian(&s, 0, &cam, t_uniform(2, 5), (16.0 * kx - cam.cx) / cam.fx, (16.0 * ky - cam.cy) / cam.fy, std_px,
                 t_uniform(0, 5), 1);
    splat_ref_settings set = random_settings(rand_u32(0, 3), 0);
    splat_ref_proj proj;
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&s, &cam, &set, &proj, &lists, &img, &err), &err);
    T_CHECK(fabs(proj.mean2d[0] - 16.0 * kx) < 1e-3 && fabs(proj.mean2d[1] - 16.0 * ky) < 1e-3);
    T_CHECK(proj.visible && proj.tiles_touched == 4, "tiles_touched %u", proj.tiles_touched);
    for (uint32_t ty = 0; ty < tiles_y; ty++)
        for (uint32_t tx = 0; tx < tiles_x; tx++) {
            bool want = (tx == kx || tx == kx - 1) && (ty == ky || ty == ky - 1);
            T_CHECK(in_list(&lists, ty * tiles_x + tx, 0) == want, "tile %u,%u (corner %u,%u)", tx, ty, kx, ky);
        }
    for (uint32_t dy = 0; dy < 2; dy++)
        for (uint32_t dx = 0; dx < 2; dx++) {
            size_t pix = (size_t)(16 * ky - 1 + dy) * cam.width + 16 * kx - 1 + dx;
            T_CHECK(img.last[pix] == 0 && img.T[pix] < 1, "corner pixel %u,%u", 16 * kx - 1 + dx, 16 * ky - 1 + dy);
        }
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat_scene_free(&s);
}

/* Minimum of sigma over the segment from d0 to d1 by golden-section search (sigma is convex
 * along any line): a way to the tile test's minimum that shares nothing with the clamped
 * closed form. */
static double segment_min(const double q[3], double x0, double y0, double x1, double y1)
{
    double lo = 0, hi = 1, g = 0.6180339887498949;
#define SIG_AT(t) (0.5 * (q[0] * pow(x0 + (t) * (x1 - x0), 2) + q[2] * pow(y0 + (t) * (y1 - y0), 2)) + \
                   q[1] * (x0 + (t) * (x1 - x0)) * (y0 + (t) * (y1 - y0)))
    for (int it = 0; it < 200; it++) {
        double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        if (SIG_AT(a) <= SIG_AT(b)) hi = b;
        else lo = a;
    }
    double m = fmin(SIG_AT(0.0), SIG_AT(1.0));
    return fmin(m, SIG_AT(0.5 * (lo + hi)));
#undef SIG_AT
}

static double brute_min(const splat_ref_proj *p, uint32_t tx, uint32_t ty, uint32_t W, uint32_t H)
{
    double x0 = 16.0 * tx + 0.5, x1 = fmin(16.0 * tx + 16, W) - 0.5, y0 = 16.0 * ty + 0.5, y1 = fmin(16.0 * ty + 16, H) - 0.5;
    double mx = p->mean2d[0], my = p->mean2d[1];
    if (mx >= x0 && mx <= x1 && my >= y0 && my <= y1) return 0;
    double dx0 = mx - x0, dx1 = mx - x1, dy0 = my - y0, dy1 = my - y1;
    double m = segment_min(p->conic, dx0, dy0, dx1, dy0);
    m = fmin(m, segment_min(p->conic, dx0, dy1, dx1, dy1));
    m = fmin(m, segment_min(p->conic, dx0, dy0, dx0, dy1));
    return fmin(m, segment_min(p->conic, dx1, dy0, dx1, dy1));
}

/* The exact tile test against brute force, over every tile of the image (not only the
 * candidate rectangle), for elongated rotated Gaussians, faint and opaque, inside and outside
 * the image: membership, tiles_touched, the borderline pairs, and every pixel that receives
 * alpha >= ALPHA_MIN within sigma <= 4.5 lying in one of its Gaussian's tiles. */
SPLAT_TEST(ref_raster_tile_test_exact)
{
    int pairs = 0, touched = 0, border = 0, pixels = 0;
    for (int rep = 0; rep < 3; rep++) {
        splat_camera cam = random_camera(40, 130);
        uint32_t n = 40;
        splat_scene s;
        splat_error err = {0};
        T_OK(splat_scene_init(&s, n, &err), &err);
        s.count = n;
        double lim_neg[2], lim_pos[2];
        guard_limits(&cam, lim_neg, lim_pos);
        for (uint32_t i = 0; i < n; i++) {
            double std_px[3];
            for (int k = 0; k < 3; k++) std_px[k] = exp(t_uniform(log(0.3), log(25)));
            double ux = t_uniform(-1.3 * lim_neg[0], 1.3 * lim_pos[0]), uy = t_uniform(-1.3 * lim_neg[1], 1.3 * lim_pos[1]);
            set_gaussian(&s, i, &cam, t_uniform(1, 6), ux, uy, std_px, t_uniform(-5.5, 8), 1);
        }
        splat_ref_settings set = random_settings(0, 0);
        splat_ref_proj *proj = calloc(n, sizeof *proj);
        T_REQUIRE(proj);
        /* Make a few pairs borderline: the conic does not depend on the opacity, so set the
         * logit for tau' = m + delta, m a pair's minimum and delta within 1.5 bands of 0. */
        splat__ref_preprocess(&s, &cam, &set, proj);
        uint32_t tiles_x = splat__div_up(cam.width, 16), tiles = tiles_x * splat__div_up(cam.height, 16);
        for (uint32_t i = 0; i < 10; i++) {
            if (!proj[i].projected) continue;
            double m = 0; /* the minimum of a random tile with one in (0.2, 4.4), if any */
            for (uint32_t t = 0, seen = 0; t < tiles; t++) {
                double mt = brute_min(&proj[i], t % tiles_x, t / tiles_x, cam.width, cam.height);
                if (mt > 0.2 && mt < 4.4 && rand_u32(0, seen++) == 0) m = mt;
            }
            if (m == 0) continue;
            /* Pairs within and just beyond the band, on both sides of the threshold. */
            double op = exp(m + t_uniform(-1.5, 1.5) * SPLAT_REF_BORDER * fmax(m, 1)) / 255;
            s.opacities[i] = (float)log(op / (1 - op));
        }
        splat_ref_lists lists;
        splat_ref_image img;
        T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
        char *is_border = calloc((size_t)n * tiles, 1);
        T_REQUIRE(is_border);
        for (uint32_t b = 0; b < lists.n_border; b++) is_border[(size_t)lists.border_id[b] * tiles + lists.border_tile[b]] = 1;
        for (uint32_t i = 0; i < n; i++) {
            if (!proj[i].projected) {
                T_CHECK(!proj[i].visible);
                continue;
            }
            double tau = extent(proj[i].opacity), eps = 1e-9 * fmax(tau, 1), band = SPLAT_REF_BORDER * fmax(tau, 1);
            uint32_t count = 0;
            for (uint32_t t = 0; t < tiles; t++) {
                double m = brute_min(&proj[i], t % lists.tiles_x, t / lists.tiles_x, cam.width, cam.height);
                bool in = in_list(&lists, t, i);
                count += in;
                pairs++;
                if (fabs(m - tau) > eps) {
                    T_CHECK(in == (m <= tau), "Gaussian %u tile %u: brute-force min %.12g, tau' %.12g, listed %d", i,
                            t, m, tau, in);
                    touched += in;
                }
                if (fabs(fabs(m - tau) - band) > eps) {
                    bool want = fabs(m - tau) <= band;
                    T_CHECK(is_border[(size_t)i * tiles + t] == want, "Gaussian %u tile %u: |min - tau'| = %g", i, t,
                            fabs(m - tau));
                    border += want;
                }
            }
            T_CHECK(proj[i].tiles_touched == count && proj[i].visible == (count > 0), "Gaussian %u: %u vs %u", i,
                    proj[i].tiles_touched, count);
            for (uint32_t py = 0; py < cam.height; py++)
                for (uint32_t px = 0; px < cam.width; px++) {
                    double sigma = sigma_of(&proj[i], px + 0.5, py + 0.5);
                    if (proj[i].opacity * exp(-sigma) >= (1 + 1e-9) / 255 && sigma <= 4.5 - 1e-9) {
                        pixels++;
                        T_CHECK(in_list(&lists, (py / 16) * lists.tiles_x + px / 16, i),
                                "pixel %u,%u gets alpha from Gaussian %u but its tile does not list it", px, py, i);
                    }
                }
        }
        free(is_border);
        free(proj);
        splat__ref_lists_free(&lists);
        splat__ref_image_free(&img);
        splat_scene_free(&s);
    }
    printf("  %d pairs tested, %d touched, %d borderline, %d pixels\n", pairs, touched, border, pixels);
    T_CHECK(touched > 0 && border > 0, "the case covers too little");
}

/* Lists are ordered by (float32(depth), index): pairs of Gaussians whose depths differ by less
 * than float32 resolution, the deeper one having the smaller index, must come in index order. */
SPLAT_TEST(ref_raster_list_order)
{
    splat_camera cam = random_camera(40, 100);
    axis_rotation(&cam); /* p.z = +-mu.z + t.z exactly, so depths can differ by one ulp of mu.z */
    cam.t[2] = 3;
    uint32_t n = 30, ties = 5;
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3] = {t_uniform(2, 8), t_uniform(2, 8), t_uniform(2, 8)};
        set_gaussian(&s, i, &cam, t_uniform(2.5, 3.5), t_uniform(-0.4, 0.4), t_uniform(-0.4, 0.4), std_px,
                     t_uniform(-2, 4), 1);
    }
    for (uint32_t k = 0; k < ties; k++) { /* Gaussian n-1-k: a copy of k, nearer by one ulp of mu.z */
        uint32_t j = n - 1 - k;
        memcpy(&s.means[j * 3], &s.means[k * 3], sizeof(float) * 3);
        float mz = s.means[k * 3 + 2];
        s.means[j * 3 + 2] = nextafterf(mz, cam.R[8] > 0 ? -INFINITY : INFINITY);
    }
    splat_ref_settings set = random_settings(0, 0);
    splat_ref_proj *proj = calloc(n, sizeof *proj);
    T_REQUIRE(proj);
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
    int exercised = 0;
    for (uint32_t k = 0; k < ties; k++) {
        uint32_t j = n - 1 - k;
        T_CHECK(proj[j].depth < proj[k].depth);
        if ((float)proj[j].depth == (float)proj[k].depth && proj[k].visible) exercised++;
    }
    for (uint32_t t = 0; t < lists.tiles_x * lists.tiles_y; t++)
        for (uint32_t e = lists.offsets[t]; e + 1 < lists.offsets[t + 1]; e++) {
            uint32_t a = lists.ids[e], b = lists.ids[e + 1];
            float da = (float)proj[a].depth, db = (float)proj[b].depth;
            T_CHECK(da < db || (da == db && a < b), "tile %u: %u (depth %.9g) before %u (depth %.9g)", t, a,
                    proj[a].depth, b, proj[b].depth);
        }
    printf("  %d float32 ties exercised\n", exercised);
    T_CHECK(exercised > 0, "no constructed pair tied in float32");
    free(proj);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat_scene_free(&s);
}

/* The float API and the double-parameter path are one function: identical bits. */
SPLAT_TEST(ref_raster_float_path)
{
    fd_case fc;
    bool ok = fd_case_init(&fc, FD_RANDOM, 12, rand_u32(0, 3));
    if (!ok) fd_case_free(&fc);
    T_REQUIRE(ok);
    uint32_t n = fc.scene.count;
    size_t npix = (size_t)fc.cam.width * fc.cam.height;
    splat__ref_preprocess(&fc.scene, &fc.cam, &fc.set, fc.work);
    T_CHECK(memcmp(fc.work, fc.proj, sizeof *fc.proj * n) == 0, "preprocess differs");
    float *w = malloc(sizeof(float) * npix * 4);
    double *wd = malloc(sizeof(double) * npix * 4);
    splat_ref_grads g1, g2;
    splat_error err = {0};
    T_REQUIRE(w && wd && splat__ref_grads_init(&g1, n, &err) == SPLAT_OK && splat__ref_grads_init(&g2, n, &err) == SPLAT_OK);
    for (size_t k = 0; k < npix * 4; k++) wd[k] = w[k] = (float)t_uniform(-1, 1);
    splat_ref_lists lists;
    splat_ref_image img;
    T_OK(splat__ref_render(&fc.scene, &fc.cam, &fc.set, fc.work, &lists, &img, &err), &err);
    splat__ref_backward(&fc.scene, &fc.cam, &fc.set, fc.work, &lists, &img, w, w + npix * 3, &g1);
    splat__ref_backward_params(&fc.params, &fc.cam, &fc.set, fc.work, &lists, &img, wd, wd + npix * 3, &g2);
    T_CHECK(memcmp(g1.means, g2.means, sizeof(double) * n * 3) == 0 &&
            memcmp(g1.sh, g2.sh, sizeof(double) * n * 48) == 0 &&
            memcmp(g1.quats, g2.quats, sizeof(double) * n * 4) == 0 &&
            memcmp(g1.opacities, g2.opacities, sizeof(double) * n) == 0 &&
            memcmp(g1.log_scales, g2.log_scales, sizeof(double) * n * 3) == 0 &&
            memcmp(g1.mean2d, g2.mean2d, sizeof(double) * n * 2) == 0, "backward differs");
    /* NULL upstream is zero. */
    splat__ref_backward(&fc.scene, &fc.cam, &fc.set, fc.work, &lists, &img, NULL, NULL, &g1);
    for (size_t k = 0; k < (size_t)n * 3; k++) T_CHECK(g1.means[k] == 0);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    splat__ref_grads_free(&g1);
    splat__ref_grads_free(&g2);
    free(w);
    free(wd);
    fd_case_free(&fc);
}

/* ------------------------------------------------------------------ scale and faults */

/* 20000 Gaussians at 256x192, forward and backward: fast enough for an oracle, and every
 * output finite and in range. */
SPLAT_TEST(ref_raster_perf_20k)
{
    splat_camera cam = random_camera(200, 300);
    cam.width = 256, cam.height = 192;
    cam.fx = cam.fy = (float)t_uniform(200, 300);
    cam.cx = (float)t_uniform(100, 156), cam.cy = (float)t_uniform(76, 116);
    uint32_t n = 20000;
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    double lim_neg[2], lim_pos[2];
    guard_limits(&cam, lim_neg, lim_pos);
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3];
        for (int k = 0; k < 3; k++) std_px[k] = exp(t_uniform(log(0.3), log(8)));
        double ux = t_uniform(-1.1 * lim_neg[0], 1.1 * lim_pos[0]), uy = t_uniform(-1.1 * lim_neg[1], 1.1 * lim_pos[1]);
        set_gaussian(&s, i, &cam, t_uniform(1, 20), ux, uy, std_px, t_uniform(-4, 6), 0.3);
    }
    splat_ref_settings set = random_settings(3, 0);
    splat_ref_proj *proj = calloc(n, sizeof *proj);
    size_t npix = (size_t)cam.width * cam.height;
    float *up = malloc(sizeof(float) * npix * 4);
    T_REQUIRE(proj && up);
    for (size_t k = 0; k < npix * 4; k++) up[k] = (float)t_uniform(-1, 1);
    splat_ref_lists lists;
    splat_ref_image img;
    splat_ref_grads g;
    T_OK(splat__ref_grads_init(&g, n, &err), &err);
    double t0 = splat__now();
    T_OK(splat__ref_render(&s, &cam, &set, proj, &lists, &img, &err), &err);
    double t1 = splat__now();
    splat__ref_backward(&s, &cam, &set, proj, &lists, &img, up, up + npix * 3, &g);
    double t2 = splat__now();
    uint64_t touched = 0;
    for (uint32_t i = 0; i < n; i++) touched += proj[i].tiles_touched;
    T_CHECK(touched == lists.offsets[lists.tiles_x * lists.tiles_y], "sum of tiles_touched %llu, pairs %u",
            (unsigned long long)touched, lists.offsets[lists.tiles_x * lists.tiles_y]);
    T_CHECK(all_finite(img.rgb, npix * 3) && all_finite(img.T, npix) && all_finite(img.depth, npix));
    for (size_t k = 0; k < npix; k++) T_CHECK(img.T[k] > SPLAT_REF_T_MIN && img.T[k] <= 1, "T %g", img.T[k]);
    T_CHECK(all_finite(g.means, n * 3) && all_finite(g.log_scales, n * 3) && all_finite(g.quats, n * 4) &&
            all_finite(g.opacities, n) && all_finite(g.sh, (size_t)n * 48) && all_finite(g.mean2d, n * 2));
    printf("  %llu pairs, %u borderline; forward %.3f s, backward %.3f s\n", (unsigned long long)touched,
           lists.n_border, t1 - t0, t2 - t1);
    /* Only a pathology (a quadratic loop, per-pixel allocation) can come near this, even in the
     * sanitizer build. */
    T_CHECK(t2 - t0 < 30, "%.1f s", t2 - t0);
    splat__ref_grads_free(&g);
    splat__ref_lists_free(&lists);
    splat__ref_image_free(&img);
    free(up);
    free(proj);
    splat_scene_free(&s);
}


/* Every allocation of render, params and grads fails in turn: each reports out-of-memory, leaves
 * its outputs safe to free, and leaks nothing (ASan checks the leak part). */
SPLAT_TEST(ref_raster_alloc_faults)
{
    splat_camera cam = random_camera(20, 60);
    uint32_t n = rand_u32(1, 10);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_init(&s, n, &err), &err);
    s.count = n;
    for (uint32_t i = 0; i < n; i++) {
        double std_px[3] = {t_uniform(1, 5), t_uniform(1, 5), t_uniform(1, 5)};
        set_gaussian(&s, i, &cam, t_uniform(1, 5), t_uniform(-0.3, 0.3), t_uniform(-0.3, 0.3), std_px, 2, 1);
    }
    splat_ref_settings set = random_settings(1, 0);
    splat_ref_proj *proj = calloc(n, sizeof *proj);
    T_REQUIRE(proj);
    int faults = 0;
    for (int k = 0;; k++) {
        t_fail_after = k;
        splat_set_allocator(&t_failing_allocator);
        splat_ref_lists lists;
        splat_ref_image img;
        splat_ref_grads g;
        splat_ref_params params;
        splat_error e = {0};
        splat_status st = splat__ref_render(&s, &cam, &set, proj, &lists, &img, &e);
        if (st == SPLAT_OK) st = splat__ref_grads_init(&g, n, &e);
        else memset(&g, 0, sizeof g);
        if (st == SPLAT_OK) st = splat__ref_params_init(&params, &s, &e);
        else memset(&params, 0, sizeof params);
        splat_set_allocator(NULL);
        if (st == SPLAT_OK) {
            splat__ref_params_free(&params);
            splat__ref_grads_free(&g);
            splat__ref_lists_free(&lists);
            splat__ref_image_free(&img);
            break;
        }
        faults++;
        T_CHECK(st == SPLAT_ERR_OUT_OF_HOST_MEMORY && strstr(e.msg, "out of host memory"), "fault %d: %s %s", k,
                splat_status_str(st), e.msg);
        splat__ref_params_free(&params);
        splat__ref_grads_free(&g);
        splat__ref_lists_free(&lists);
        splat__ref_image_free(&img);
        T_REQUIRE(k < 100, "still failing after 100 allocations");
    }
    printf("  %d faults injected\n", faults);
    T_CHECK(faults >= 10);
    free(proj);
    splat_scene_free(&s);
}

/* splat__ref_gsplat_box on values worked by hand: opacity 0.5 gives an extent of
 * sqrt(2 ln 127.5) = 3.114 sigma, so a = 1 makes half-side ceil(3.114) = 4 and a = 4 makes
 * ceil(6.228) = 7; opacity 0.01 gives sqrt(2 ln 2.55) = 1.368, and a = 4 makes ceil(2.736) = 3.
 * The box must overlap the open image (0, 10) x (0, 8) with some area. */
SPLAT_TEST(ref_gsplat_box_known)
{
    static const struct {
        double opacity, a, c, x, y;
        int in;
    } cases[] = {
        {0.5, 1, 1, -3.9, 4, 1},   /* right side at 0.1 */
        {0.5, 1, 1, -4.0, 4, 0},   /* right side at 0: no area */
        {0.5, 1, 1, 13.9, 4, 1},   /* left side at 9.9 */
        {0.5, 1, 1, 14.0, 4, 0},   /* left side at 10 */
        {0.5, 1, 4, 5, -6.9, 1},   /* bottom at 0.1 (half-side 7) */
        {0.5, 1, 4, 5, 15.0, 0},   /* top at 8 */
        {0.01, 4, 1, -2.9, 4, 1},  /* half-side 3 */
        {0.01, 4, 1, -3.0, 4, 0},
        {0.5, 1, 1, 5, 4, 1},      /* inside */
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
        splat_ref_proj p = {.projected = 1, .opacity = cases[k].opacity, .cov2d = {cases[k].a, 0, cases[k].c},
                            .mean2d = {cases[k].x, cases[k].y}};
        double margin;
        int in = splat__ref_gsplat_box(&p, 10, 8, &margin);
        T_CHECK(in == cases[k].in, "case %zu: %d, want %d", k, in, cases[k].in);
        T_CHECK(margin >= -1e-4 && margin <= 0.3, "case %zu: margin %g", k, margin);
    }
    splat_ref_proj culled = {.projected = 0, .opacity = 0.5, .cov2d = {1, 0, 1}, .mean2d = {5, 4}};
    T_CHECK(splat__ref_gsplat_box(&culled, 10, 8, NULL) == 0, "a Gaussian not projected is not seen");
}
