/* ref/rasterize.c: per-pixel blending (docs/RASTER.md section 3) and its backward (section 4),
 * which then chains each Gaussian's raster gradients through the preprocess (project.c). */
#include "ref/ref_internal.h"

/* ------------------------------------------------------------------------ buffers */

splat_status splat__ref_image_init(splat_ref_image *img, uint32_t width, uint32_t height, splat_error *err)
{
    memset(img, 0, sizeof *img);
    size_t n = (size_t)width * height;
    img->rgb = splat__calloc(n * 3, sizeof(double));
    img->T = splat__calloc(n, sizeof(double));
    img->last = splat__calloc(n, sizeof(int32_t));
    img->depth = splat__calloc(n, sizeof(double));
    img->margin = splat__calloc(n, sizeof(double));
    if (!img->rgb || !img->T || !img->last || !img->depth || !img->margin) {
        splat__ref_image_free(img);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref image %ux%u: out of host memory", width, height);
    }
    img->width = width, img->height = height;
    return SPLAT_OK;
}

void splat__ref_image_free(splat_ref_image *img)
{
    if (!img) return;
    splat__free(img->rgb);
    splat__free(img->T);
    splat__free(img->last);
    splat__free(img->depth);
    splat__free(img->margin);
    memset(img, 0, sizeof *img);
}

splat_status splat__ref_grads_init(splat_ref_grads *g, uint32_t count, splat_error *err)
{
    memset(g, 0, sizeof *g);
    size_t n = count;
    g->means = splat__calloc(n * 3, sizeof(double));
    g->log_scales = splat__calloc(n * 3, sizeof(double));
    g->quats = splat__calloc(n * 4, sizeof(double));
    g->opacities = splat__calloc(n, sizeof(double));
    g->sh = splat__calloc(n * SPLAT__REF_SH_FLOATS, sizeof(double));
    g->mean2d = splat__calloc(n * 2, sizeof(double));
    g->conic = splat__calloc(n * 3, sizeof(double));
    g->color = splat__calloc(n * 3, sizeof(double));
    g->alpha = splat__calloc(n, sizeof(double));
    if (!g->means || !g->log_scales || !g->quats || !g->opacities || !g->sh || !g->mean2d || !g->conic ||
        !g->color || !g->alpha) {
        splat__ref_grads_free(g);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref gradients of %u Gaussians: out of host memory",
                           count);
    }
    g->count = count;
    return SPLAT_OK;
}

void splat__ref_grads_free(splat_ref_grads *g)
{
    if (!g) return;
    splat__free(g->means);
    splat__free(g->log_scales);
    splat__free(g->quats);
    splat__free(g->opacities);
    splat__free(g->sh);
    splat__free(g->mean2d);
    splat__free(g->conic);
    splat__free(g->color);
    splat__free(g->alpha);
    memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------------------ forward */

static void margin_min(double *m, double v)
{
    if (v < *m) *m = v;
}

/* One Gaussian at one pixel centre: sigma, and the margin of the decision sigma < 0. With a
 * positive definite conic sigma >= 0 exactly, so its sign can only come out wrong through
 * cancellation among its terms: the margin is |sigma| relative to their magnitude (1 at d = 0,
 * where every term is 0). */
static double pixel_sigma(const splat_ref_proj *p, double x, double y, double *dx, double *dy, double *margin)
{
    const double *q = p->conic;
    *dx = p->mean2d[0] - x, *dy = p->mean2d[1] - y;
    double sigma = 0.5 * (q[0] * *dx * *dx + q[2] * *dy * *dy) + q[1] * *dx * *dy;
    double terms = 0.5 * (fabs(q[0]) * *dx * *dx + fabs(q[2]) * *dy * *dy) + fabs(q[1] * *dx * *dy);
    if (margin) margin_min(margin, terms > 0 ? fabs(sigma) / terms : 1);
    return sigma;
}

/* How much mean2d's float32 rounding (mean2d_err) may move sigma at (dx, dy): the bound on the
 * relative change of this Gaussian's alpha. */
static double sigma_rounding(const splat_ref_proj *p, double dx, double dy)
{
    const double *q = p->conic;
    return fabs(q[0] * dx + q[1] * dy) * p->mean2d_err[0] + fabs(q[1] * dx + q[2] * dy) * p->mean2d_err[1];
}

static double rel_margin(double v, double thr) { return fabs(v - thr) / thr; }

/* The tile list a pixel blends: [*n] ids, the cap applied. */
static const uint32_t *pixel_list(const splat_ref_lists *l, const splat_ref_settings *set, uint32_t px, uint32_t py,
                                  uint32_t *n)
{
    uint32_t t = (py / SPLAT_REF_TILE) * l->tiles_x + px / SPLAT_REF_TILE;
    *n = l->offsets[t + 1] - l->offsets[t];
    if (set->cap > 0 && *n > set->cap) *n = set->cap;
    return l->ids + l->offsets[t];
}

static void check_sizes(const splat_camera *cam, const splat_ref_lists *lists, const splat_ref_image *img)
{
    SPLAT_ASSERT(img->width == cam->width && img->height == cam->height);
    SPLAT_ASSERT(lists->tiles_x == splat__div_up(cam->width, SPLAT_REF_TILE));
    SPLAT_ASSERT(lists->tiles_y == splat__div_up(cam->height, SPLAT_REF_TILE));
}

void splat__ref_rasterize(const splat_camera *cam, const splat_ref_settings *set, const splat_ref_proj *proj,
                         const splat_ref_lists *lists, splat_ref_image *img)
{
    check_sizes(cam, lists, img);
    for (uint32_t py = 0; py < cam->height; py++)
        for (uint32_t px = 0; px < cam->width; px++) {
            size_t pix = (size_t)py * cam->width + px;
            double x = px + 0.5, y = py + 0.5;
            uint32_t n;
            const uint32_t *ids = pixel_list(lists, set, px, py, &n);
            /* T_err: the relative change of T that the blended alphas' rounding bounds add up to */
            double T = 1, T_err = 0, C[3] = {0, 0, 0}, D = 0, margin = HUGE_VAL;
            int32_t last = -1;
            for (uint32_t k = 0; k < n; k++) {
                const splat_ref_proj *p = &proj[ids[k]];
                if (!p->projected) continue;
                double dx, dy;
                double sigma = pixel_sigma(p, x, y, &dx, &dy, &margin);
                if (sigma < 0) continue;
                double v = p->opacity * exp(-sigma), v_err = sigma_rounding(p, dx, dy);
                margin_min(&margin, rel_margin(v, SPLAT_REF_ALPHA_MAX) - v_err);
                double alpha = v < SPLAT_REF_ALPHA_MAX ? v : SPLAT_REF_ALPHA_MAX;
                margin_min(&margin, rel_margin(alpha, SPLAT_REF_ALPHA_MIN) - v_err);
                if (alpha < SPLAT_REF_ALPHA_MIN) continue;
                double next_T = T * (1 - alpha), next_T_err = T_err + alpha / (1 - alpha) * v_err;
                margin_min(&margin, rel_margin(next_T, SPLAT_REF_T_MIN) - next_T_err);
                if (next_T <= SPLAT_REF_T_MIN) break;
                for (int ch = 0; ch < 3; ch++) C[ch] += p->color[ch] * alpha * T;
                D += p->depth * alpha * T;
                T = next_T, T_err = next_T_err;
                last = (int32_t)ids[k];
            }
            for (int ch = 0; ch < 3; ch++) img->rgb[pix * 3 + ch] = C[ch] + T * set->background[ch];
            img->T[pix] = T;
            img->last[pix] = last;
            img->depth[pix] = D;
            img->margin[pix] = margin;
        }
}

splat_status splat__ref_render(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                              splat_ref_proj *proj, splat_ref_lists *lists, splat_ref_image *img, splat_error *err)
{
    memset(lists, 0, sizeof *lists);
    memset(img, 0, sizeof *img);
    splat__ref_preprocess(scene, cam, set, proj);
    splat_status st = splat__ref_tile_lists(cam, proj, scene->count, lists, err);
    if (st != SPLAT_OK) return st;
    st = splat__ref_image_init(img, cam->width, cam->height, err);
    if (st != SPLAT_OK) {
        splat__ref_lists_free(lists);
        return st;
    }
    splat__ref_rasterize(cam, set, proj, lists, img);
    return SPLAT_OK;
}

/* ------------------------------------------------------------------------ backward */

/* Upstream gradients in float (public API) or double (finite-difference path); NULL is zero. */
typedef struct upstream {
    const float *rgb_f, *alpha_f;
    const double *rgb_d, *alpha_d;
    bool absolute;           /* accumulate |term| for every term (splat__ref_backward_scale) */
} upstream;

static double up_rgb(const upstream *u, size_t k) { return u->rgb_f ? u->rgb_f[k] : u->rgb_d ? u->rgb_d[k] : 0; }
static double up_alpha(const upstream *u, size_t k)
{
    return u->alpha_f ? u->alpha_f[k] : u->alpha_d ? u->alpha_d[k] : 0;
}

/* Fills grads->mean2d, conic, color and alpha from the upstream image gradients. Walks each
 * pixel's list back to front from its last contributor, recovering T_j = T_{j+1} / (1 - a_j)
 * (a_j <= ALPHA_MAX keeps the division well away from 0, and in double it is exact to a few
 * ulp) and accumulating the suffix S_j = sum_{k>j} c_k a_k T_k + T_final bg, so that
 *   d rgb / d a_j = c_j T_j - S_j / (1 - a_j),   d alpha_pixel / d a_j = T_final / (1 - a_j). */
static void raster_backward(const splat_camera *cam, const splat_ref_settings *set, const splat_ref_proj *proj,
                            const splat_ref_lists *lists, const splat_ref_image *img, const upstream *up,
                            splat_ref_grads *g)
{
    check_sizes(cam, lists, img);
    size_t n_g = g->count;
    memset(g->mean2d, 0, sizeof(double) * n_g * 2);
    memset(g->conic, 0, sizeof(double) * n_g * 3);
    memset(g->color, 0, sizeof(double) * n_g * 3);
    memset(g->alpha, 0, sizeof(double) * n_g);
    for (uint32_t py = 0; py < cam->height; py++)
        for (uint32_t px = 0; px < cam->width; px++) {
            size_t pix = (size_t)py * cam->width + px;
            int32_t last = img->last[pix];
            if (last < 0) continue;
            double x = px + 0.5, y = py + 0.5;
            uint32_t n;
            const uint32_t *ids = pixel_list(lists, set, px, py, &n);
            uint32_t end = 0;
            while (end < n && ids[end] != (uint32_t)last) end++;
            SPLAT_ASSERT(end < n);
            double d_rgb[3], d_a = up_alpha(up, pix), T_final = img->T[pix], T = T_final, S[3];
            for (int ch = 0; ch < 3; ch++) {
                d_rgb[ch] = up_rgb(up, pix * 3 + ch);
                S[ch] = T_final * set->background[ch];
            }
            /* |x| when accumulating the scale of the sums rather than the sums */
#define TERM(x) (up->absolute ? fabs(x) : (x))
            for (uint32_t k = end + 1; k-- > 0;) {
                uint32_t i = ids[k];
                const splat_ref_proj *p = &proj[i];
                if (!p->projected) continue;
                /* The same skips as the forward; the break can only come after `last`. */
                double dx, dy;
                double sigma = pixel_sigma(p, x, y, &dx, &dy, NULL);
                if (sigma < 0) continue;
                double e = exp(-sigma), v = p->opacity * e;
                double alpha = v < SPLAT_REF_ALPHA_MAX ? v : SPLAT_REF_ALPHA_MAX;
                if (alpha < SPLAT_REF_ALPHA_MIN) continue;
                double one_minus = 1 - alpha;
                T /= one_minus;
                double d_alpha = TERM(d_a * T_final / one_minus);
                for (int ch = 0; ch < 3; ch++) {
                    g->color[(size_t)i * 3 + ch] += TERM(d_rgb[ch] * alpha * T);
                    d_alpha += up->absolute ? fabs(d_rgb[ch]) * (fabs(p->color[ch] * T) + fabs(S[ch] / one_minus))
                                            : d_rgb[ch] * (p->color[ch] * T - S[ch] / one_minus);
                    S[ch] += p->color[ch] * alpha * T;
                }
                /* Where the clamp at ALPHA_MAX holds, alpha does not depend on opacity or sigma
                 * (at equality it counts as unclamped, like gsplat's `opac * vis <= 0.999f`). */
                if (v > SPLAT_REF_ALPHA_MAX) continue;
                g->alpha[i] += d_alpha * e;
                double d_sigma = -d_alpha * alpha;
                const double *q = p->conic;
                g->conic[(size_t)i * 3 + 0] += TERM(d_sigma * 0.5 * dx * dx);
                g->conic[(size_t)i * 3 + 1] += TERM(d_sigma * dx * dy);
                g->conic[(size_t)i * 3 + 2] += TERM(d_sigma * 0.5 * dy * dy);
                g->mean2d[(size_t)i * 2 + 0] += up->absolute ? fabs(d_sigma) * (fabs(q[0] * dx) + fabs(q[1] * dy))
                                                             : d_sigma * (q[0] * dx + q[1] * dy);
                g->mean2d[(size_t)i * 2 + 1] += up->absolute ? fabs(d_sigma) * (fabs(q[1] * dx) + fabs(q[2] * dy))
                                                             : d_sigma * (q[1] * dx + q[2] * dy);
            }
#undef TERM
            /* Dividing back through every blended step must return to T = 1. */
            SPLAT_ASSERT(fabs(T - 1) < 1e-6);
        }
}

/* Loads Gaussian i from whichever parameter source the caller has. */
typedef struct source {
    const splat_scene *scene;
    const splat_ref_params *params;
} source;

static void backward(const source *src, uint32_t count, const splat_camera *cam, const splat_ref_settings *set,
                     const splat_ref_proj *proj, const splat_ref_lists *lists, const splat_ref_image *img,
                     const upstream *up, splat_ref_grads *g)
{
    SPLAT_ASSERT(g->count == count);
    raster_backward(cam, set, proj, lists, img, up, g);
    splat__ref_cam c;
    splat__ref_load_cam(cam, &c);
    for (uint32_t i = 0; i < count; i++) {
        splat__ref_gauss gs;
        splat__ref_gauss_grad d;
        if (src->scene) splat__ref_load_scene(src->scene, i, &gs);
        else splat__ref_load_params(src->params, i, &gs);
        splat__ref_project_vjp(&gs, &c, set, g->mean2d + (size_t)i * 2, g->conic + (size_t)i * 3,
                               g->color + (size_t)i * 3, g->alpha[i], &d);
        if (up->absolute) {
            double *all = (double *)&d;
            for (size_t k = 0; k < sizeof d / sizeof(double); k++) all[k] = fabs(all[k]);
        }
        memcpy(g->means + (size_t)i * 3, d.mean, sizeof d.mean);
        memcpy(g->log_scales + (size_t)i * 3, d.log_scale, sizeof d.log_scale);
        memcpy(g->quats + (size_t)i * 4, d.quat, sizeof d.quat);
        g->opacities[i] = d.logit;
        memcpy(g->sh + (size_t)i * SPLAT__REF_SH_FLOATS, d.sh, sizeof d.sh);
    }
}

void splat__ref_backward(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                        const splat_ref_proj *proj, const splat_ref_lists *lists, const splat_ref_image *img,
                        const float *d_rgb, const float *d_alpha, splat_ref_grads *grads)
{
    source src = {scene, NULL};
    upstream up = {d_rgb, d_alpha, NULL, NULL, false};
    backward(&src, scene->count, cam, set, proj, lists, img, &up, grads);
}

void splat__ref_backward_scale(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                               const splat_ref_proj *proj, const splat_ref_lists *lists, const splat_ref_image *img,
                               const float *d_rgb, const float *d_alpha, splat_ref_grads *scale)
{
    source src = {scene, NULL};
    upstream up = {d_rgb, d_alpha, NULL, NULL, true};
    backward(&src, scene->count, cam, set, proj, lists, img, &up, scale);
}

void splat__ref_backward_params(const splat_ref_params *params, const splat_camera *cam,
                               const splat_ref_settings *set, const splat_ref_proj *proj,
                               const splat_ref_lists *lists, const splat_ref_image *img,
                               const double *d_rgb, const double *d_alpha, splat_ref_grads *grads)
{
    source src = {NULL, params};
    upstream up = {NULL, NULL, d_rgb, d_alpha, false};
    backward(&src, params->count, cam, set, proj, lists, img, &up, grads);
}
