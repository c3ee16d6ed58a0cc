/* ref: the CPU reference of every render and train kernel. Double precision, single-threaded
 * and simple: it is the oracle the GPU is tested against, not a second fast path. It is
 * written from docs/RASTER.md (and docs/TRAIN.md), never from the shaders. */
#ifndef SPLAT_REF_H
#define SPLAT_REF_H

#include "core/core.h"

/* A decision whose value lies within this relative margin of its threshold is "borderline":
 * float32 and double may legitimately decide it differently (docs/RASTER.md, last section).
 *
 * A decision "v against threshold thr" has the relative margin |v - thr| / max(|thr|, s),
 * where s is a scale that keeps thresholds at 0 meaningful. The decisions and their s:
 * - preprocess (splat_ref_proj.margin, every decision reached before the Gaussian is culled):
 *   p.z > NEAR (s = NEAR); det > 0 as det / (a c) of the blurred covariance; antialiased:
 *   det0 / det against MIN_COMPENSATION^2 (relative to it); opacity >= ALPHA_MIN (s = ALPHA_MIN); p.x/p.z and p.y/p.z against each of the four guard-band
 *   limits (relative to the limit); raw colour >= 0 per channel (s = 1).
 * - raster (splat_ref_image.margin, every Gaussian the pixel evaluates, up to and including
 *   the one that stops its loop): sigma < 0 as |sigma| / terms, terms = 0.5 (|A| dx^2 +
 *   |C| dy^2) + |B dx dy| (1 where terms = 0: sigma >= 0 exactly, so only cancellation among
 *   its terms can give it the wrong sign); alpha_i exp(-sigma) against ALPHA_MAX;
 *   alpha against ALPHA_MIN; next_T against T_MIN (each relative to its threshold, less the
 *   relative change that mean2d's rounding, mean2d_err, can make: |d sigma / d mean2d| times
 *   it for the alphas, summed over the blended Gaussians for the transmittance).
 *   A pixel that decides nothing has margin HUGE_VAL.
 * - tiles (splat_ref_lists border pairs): a candidate pair is borderline when
 *   |min_sigma - tau'| <= SPLAT_REF_BORDER * max(tau', 1), min_sigma being the minimum of
 *   sigma over the tile's rectangle of pixel centres (docs/RASTER.md 1.8).
 * Not covered: the order of two Gaussians whose depths round to float32 differently on the
 * GPU (RASTER.md names no such decision).
 *
 * Where RASTER.md leaves a derivative at a tie, the reference follows gsplat/torch: the
 * guard-band clamp counts as inside at equality (d tx / d p.x = 1), the colour clamp passes the
 * gradient at raw == 0 (torch.clamp_min), so does the compensation's floor at det0 / det ==
 * MIN_COMPENSATION^2 (torch.clamp), and alpha_i exp(-sigma) == ALPHA_MAX counts as
 * unclamped (earlier gsplat releases' `opac * vis <= 0.999f`; 1.6.0 clamps at 0.99). */
#define SPLAT_REF_BORDER 1e-4

/* mean2d in float32 is off by up to gamma_4 of the camera-space sums (2^-24 units times the
 * magnitudes summed), carried to the screen; the reference allows this many units, twice the
 * bound. A steep Gaussian turns that into a change of sigma, and so of alpha, larger than
 * SPLAT_REF_BORDER: the raster's alpha and transmittance margins are net of it. */
#define SPLAT_REF_POS_ROUNDING 8.0

/* The constants of docs/RASTER.md. */
#define SPLAT_REF_NEAR 0.01
#define SPLAT_REF_EPS2D 0.3
#define SPLAT_REF_TILE 16u
#define SPLAT_REF_ALPHA_MIN (1.0 / 255.0)
#define SPLAT_REF_ALPHA_MAX 0.999
#define SPLAT_REF_T_MIN 1e-4
#define SPLAT_REF_SIGMA_CAP 3.0
#define SPLAT_REF_MIN_COMPENSATION 0.005

typedef struct splat_ref_settings {
    uint32_t sh_degree;      /* active degree 0..3 */
    float background[3];
    uint32_t cap;            /* max Gaussians per tile, 0 = unlimited */
    splat_rasterize_mode rasterize_mode;
} splat_ref_settings;

/* Per-Gaussian result of the preprocess (docs/RASTER.md section 1). */
typedef struct splat_ref_proj {
    int visible;             /* 0 when culled (any reason, including tiles_touched == 0) */
    /* 1 when the Gaussian passed the near plane, det and opacity tests (1.1 to 1.6), so that
     * mean2d, conic, opacity, radius and colour are defined. Only such Gaussians can enter a
     * tile list; visible additionally needs tiles_touched > 0. */
    int projected;
    double mean2d[2];
    double cov2d[3];         /* blurred covariance a, b, c */
    double conic[3];         /* A, B, C */
    double depth;
    double color[3];         /* after the clamp at 0 */
    double opacity;          /* sigmoid of the logit, times compensation */
    double compensation;     /* antialiased: sqrt(max(det0 / det, MIN_COMPENSATION^2)); classic: 1 */
    double radius[2];        /* rx, ry */
    /* A bound on float32's rounding of mean2d, per axis, in pixels (SPLAT_REF_POS_ROUNDING):
     * the raster's decisions are borderline within what it moves sigma. */
    double mean2d_err[2];
    uint32_t tiles_touched;
    /* Smallest relative margin over this Gaussian's preprocess decisions: near plane,
     * det > 0, opacity >= ALPHA_MIN, the guard-band clamps, the colour clamps at 0. */
    double margin;
} splat_ref_proj;

/* Tile lists (docs/RASTER.md section 2), uncapped: the cap is applied by rasterize/backward.
 * Rasterize and backward use whatever lists they are given (a test may substitute the GPU's
 * list for a tile); entries whose Gaussian is not `projected` are skipped. */
typedef struct splat_ref_lists {
    uint32_t tiles_x, tiles_y;
    uint32_t *offsets;       /* [tiles_x*tiles_y + 1] list of tile t is ids[offsets[t] .. offsets[t+1]) */
    uint32_t *ids;           /* [offsets[tiles]] Gaussian indices, in blending order */
    /* Candidate (tile, Gaussian) pairs whose tile test was borderline, touched or not, for
     * every projected Gaussian (also those culled for touching no tile). */
    uint32_t n_border;
    uint32_t *border_tile;   /* [n_border] */
    uint32_t *border_id;     /* [n_border] */
} splat_ref_lists;

typedef struct splat_ref_image {
    uint32_t width, height;
    double *rgb;             /* [H,W,3] */
    double *T;               /* [H,W] final transmittance */
    int32_t *last;           /* [H,W] index of the last blended Gaussian, -1 if none */
    double *depth;           /* [H,W] accumulated depth sum(depth alpha T) */
    double *margin;          /* [H,W] smallest relative margin over the pixel's raster decisions */
} splat_ref_image;

typedef struct splat_ref_grads {
    uint32_t count;
    double *means;           /* [N,3] */
    double *log_scales;      /* [N,3] */
    double *quats;           /* [N,4] */
    double *opacities;       /* [N] (with respect to the logit) */
    double *sh;              /* [N,16,3] */
    double *mean2d;          /* [N,2] */
    /* The raster stage's gradients, before the preprocess chain rule (what a separate
     * rasterize-backward kernel would output): */
    double *conic;           /* [N,3] dL/d(A, B, C) */
    double *color;           /* [N,3] dL/dcolor (the clamped colour) */
    double *alpha;           /* [N] dL/dalpha_i (the opacity after the sigmoid) */
} splat_ref_grads;

/* The Gaussian parameters in double, for callers that need the function at inputs float
 * cannot hold (finite differences). Same layout as splat_scene. */
typedef struct splat_ref_params {
    uint32_t count;
    double *means;           /* [N,3] */
    double *log_scales;      /* [N,3] */
    double *quats;           /* [N,4] */
    double *opacities;       /* [N] logits */
    double *sh;              /* [N,16,3] */
} splat_ref_params;

/* proj: [scene->count], filled. */
void splat__ref_preprocess(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                          splat_ref_proj *proj);

/* A double copy of scene rows [0, count). Free with splat__ref_params_free. */
splat_status splat__ref_params_init(splat_ref_params *params, const splat_scene *scene, splat_error *err);
void splat__ref_params_free(splat_ref_params *params);
/* splat__ref_preprocess from double parameters. proj: [params->count]. */
void splat__ref_preprocess_params(const splat_ref_params *params, const splat_camera *cam,
                                 const splat_ref_settings *set, splat_ref_proj *proj);

/* Builds the tile lists of the visible Gaussians. Free with splat__ref_lists_free. */
splat_status splat__ref_tile_lists(const splat_camera *cam, const splat_ref_proj *proj, uint32_t count,
                                  splat_ref_lists *lists, splat_error *err);
void splat__ref_lists_free(splat_ref_lists *lists);

/* gsplat 1.6's visibility of a projected Gaussian (what its default strategy counts as a view
 * that saw it; docs/TRAIN.md, "Densification"): the box of half-sides ceil(e sqrt(a)) and
 * ceil(e sqrt(c)), e = min(3.33, sqrt(2 ln(opacity / ALPHA_MIN))), around mean2d overlaps the
 * image (0, W) x (0, H) with some area. 0 for a Gaussian not `projected`. margin, when not NULL:
 * the smallest distance in pixels of a decision from its flip (an argument of ceil from a whole
 * number, less 1e-5 of it for float32's covariance; a box side from the image's edge). */
int splat__ref_gsplat_box(const splat_ref_proj *p, uint32_t width, uint32_t height, double *margin);

splat_status splat__ref_image_init(splat_ref_image *img, uint32_t width, uint32_t height, splat_error *err);
void splat__ref_image_free(splat_ref_image *img);

/* Forward: fills img (sized to the camera) from proj and lists. */
void splat__ref_rasterize(const splat_camera *cam, const splat_ref_settings *set, const splat_ref_proj *proj,
                         const splat_ref_lists *lists, splat_ref_image *img);

/* Convenience: preprocess, lists and rasterize in one call. proj: [count]; lists and img are
 * initialised here and freed by the caller. */
splat_status splat__ref_render(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                              splat_ref_proj *proj, splat_ref_lists *lists, splat_ref_image *img, splat_error *err);

splat_status splat__ref_grads_init(splat_ref_grads *g, uint32_t count, splat_error *err);
void splat__ref_grads_free(splat_ref_grads *g);

/* Backward: the exact gradient of the forward function. Inputs are the forward's proj, lists
 * and img; d_rgb [H,W,3] and d_alpha [H,W] (alpha = 1 - T) are the upstream gradients (either
 * may be NULL for zero). grads must be initialised for scene->count and is overwritten.
 * Each pixel's list is walked back to front from its last contributor (img->last), with T
 * recovered by division from img->T, as gsplat does; in double that is exact to rounding. */
void splat__ref_backward(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                        const splat_ref_proj *proj, const splat_ref_lists *lists, const splat_ref_image *img,
                        const float *d_rgb, const float *d_alpha, splat_ref_grads *grads);
/* The scale of float rounding in each gradient splat__ref_backward returns: the same walk with
 * every per-pixel term, and every term of a pixel's dL/dalpha_i, taken by absolute value before
 * it is summed, then mapped to the parameters by the same chain rule and taken by absolute
 * value. A gradient that is a sum over many pixels that nearly cancels has a scale much larger
 * than itself, and a float32 sum of it an error relative to the scale, not to the sum. (The
 * chain rule keeps its signs, so this is a scale, not a bound.) */
void splat__ref_backward_scale(const splat_scene *scene, const splat_camera *cam, const splat_ref_settings *set,
                               const splat_ref_proj *proj, const splat_ref_lists *lists, const splat_ref_image *img,
                               const float *d_rgb, const float *d_alpha, splat_ref_grads *scale);
/* splat__ref_backward from double parameters and double upstream gradients. */
void splat__ref_backward_params(const splat_ref_params *params, const splat_camera *cam,
                               const splat_ref_settings *set, const splat_ref_proj *proj,
                               const splat_ref_lists *lists, const splat_ref_image *img,
                               const double *d_rgb, const double *d_alpha, splat_ref_grads *grads);

#endif
