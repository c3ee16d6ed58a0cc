/* Internal to src/ref: the double-precision records both entry points (float scene, double
 * params) load into, and the stage functions the files share. */
#ifndef SPLAT_REF_INTERNAL_H
#define SPLAT_REF_INTERNAL_H

#include "ref/ref.h"

#define SPLAT__REF_SH_FLOATS (SPLAT_SH_COEFFS * 3)

typedef struct splat__ref_cam {
    double fx, fy, cx, cy;
    double R[9];             /* [3,3] row-major world-to-camera */
    double t[3];
    uint32_t width, height;
} splat__ref_cam;

/* One Gaussian's parameters in double. */
typedef struct splat__ref_gauss {
    double mean[3];
    double log_scale[3];
    double quat[4];
    double logit;
    double sh[SPLAT__REF_SH_FLOATS]; /* [16,3] */
} splat__ref_gauss;

/* One Gaussian's gradients, same layout. */
typedef splat__ref_gauss splat__ref_gauss_grad;

void splat__ref_load_cam(const splat_camera *cam, splat__ref_cam *c);
void splat__ref_load_scene(const splat_scene *scene, uint32_t i, splat__ref_gauss *g);
void splat__ref_load_params(const splat_ref_params *params, uint32_t i, splat__ref_gauss *g);

/* sh.c: the real SH basis of docs/RASTER.md 1.9 at a unit direction, Y: [16], and its partial
 * derivatives with respect to (x, y, z) taken as independent variables, dY: [16][3]. */
void splat__ref_sh_basis(const double dir[3], double Y[16]);
void splat__ref_sh_basis_grad(const double dir[3], double dY[16][3]);

/* project.c: docs/RASTER.md section 1 for one Gaussian (tiles_touched and visible included),
 * and its vector-Jacobian product: from dL/d(mean2d, conic, color, alpha_i) to the parameters.
 * The vjp is zero for a Gaussian that is not projected. */
void splat__ref_project(const splat__ref_gauss *g, const splat__ref_cam *c, const splat_ref_settings *set,
                        splat_ref_proj *out);
void splat__ref_project_vjp(const splat__ref_gauss *g, const splat__ref_cam *c, const splat_ref_settings *set,
                            const double d_mean2d[2], const double d_conic[3], const double d_color[3],
                            double d_alpha, splat__ref_gauss_grad *d);

/* tiles.c: the extent threshold tau' of an opacity, the candidate tile rectangle (inclusive
 * bounds x0, x1, y0, y1; returns false when empty) and the minimum of sigma over a tile's
 * rectangle of pixel centres (docs/RASTER.md 1.7 and 1.8). */
double splat__ref_extent(double opacity);
bool splat__ref_tile_range(const splat_ref_proj *p, uint32_t width, uint32_t height, uint32_t range[4]);
double splat__ref_tile_min_sigma(const splat_ref_proj *p, uint32_t tx, uint32_t ty, uint32_t width,
                                 uint32_t height);
uint32_t splat__ref_count_tiles(const splat_ref_proj *p, uint32_t width, uint32_t height);

#endif
