/* train/init: the initial Gaussians of a training run (docs/TRAIN.md, "Initialisation"). */
#ifndef SPLAT_TRAIN_INIT_H
#define SPLAT_TRAIN_INIT_H

#include "core/core.h"

/* SH DC = (rgb - 0.5) / SPLAT_SH_C0 (the degree-0 basis constant). */
#define SPLAT_SH_C0 0.28209479177387814
/* The log-scale of a Gaussian with no other point at a positive distance to measure (a scene of
 * one point, or of points that all coincide): log(0.01). TRAIN.md leaves this case open. */
#define SPLAT_INIT_DEFAULT_SCALE 0.01

/* Initialises `scene` (splat__scene_init; the caller frees it with splat__scene_free) with one
 * Gaussian per point: mean = the point; log-scale (all three axes) = log(sqrt(mean of the squared
 * distances to its 3 nearest other points)), or to its n - 1 others when n < 4, a distance of 0
 * (a duplicate point) counting as the smallest positive distance between two points of the
 * scene; identity rotation (1, 0, 0, 0); opacity logit(0.1); SH DC from the colour, other SH 0;
 * sh_degree 3. The nearest neighbours come from a k-d tree: O(n log n).
 * points: [n,3]; colors: [n,3] 8-bit RGB, or NULL for grey 0.5 (SH DC 0).
 * Fails with SPLAT_ERR_INVALID_ARG when n == 0, SPLAT_ERR_NONFINITE for a NaN or infinite
 * coordinate, SPLAT_ERR_OUT_OF_HOST_MEMORY; on failure `scene` is left freed (all zero). */
splat_status splat__init_from_points(splat_scene *scene, const float *points, const uint8_t *colors, uint32_t n,
                                     splat_error *err);

/* The same from n points uniform in the cube centre + [-half_extent, half_extent]^3 (centre NULL:
 * the origin) with colours uniform in [0, 1] (not quantised to 8 bits), drawn from splat_rng
 * seeded with `seed` (per point: x, y, z, then r, g, b). TRAIN.md, "Initialisation", says which
 * cube a scene without points gets. Fails with SPLAT_ERR_INVALID_ARG when n == 0 or half_extent
 * is not finite and > 0. */
splat_status splat__init_random(splat_scene *scene, uint32_t n, const double centre[3], double half_extent,
                                uint64_t seed, splat_error *err);

/* Replaces every quaternion of `scene` by four numbers uniform in [0, 1), drawn from splat_rng
 * seeded with `seed` (row by row, w x y z): gsplat simple_trainer's torch.rand(N, 4), the
 * default start of a training run (docs/TRAIN.md, "Initialisation"); the renderer normalises. */
void splat__init_quats_random(splat_scene *scene, uint64_t seed);

#endif
