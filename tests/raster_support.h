/* Shared by the rasterizer tests: random scenes and cameras, the GPU fixture, and the
 * comparison of GPU results with the CPU reference (src/ref). */
#ifndef SPLAT_TEST_RASTER_SUPPORT_H
#define SPLAT_TEST_RASTER_SUPPORT_H

#include "gpu_support.h"
#include "ref/ref.h"
#include "render/render.h"

/* A random camera of the given size: principal point off-centre, fx != fy, random pose. */
splat_camera t_random_camera(uint32_t width, uint32_t height);

/* Places n random Gaussians in front of the camera (depth 2..8, a little beyond the image
 * edges), with log-scales spanning sub-pixel to large footprints, random rotations, opacity
 * logits in [-3, 4] and SH coefficients of every degree. */
void t_random_scene(splat_scene *s, uint32_t n, const splat_camera *cam);

/* Camera-space point -> world point for the camera. */
void t_cam_to_world(const splat_camera *cam, const double pc[3], float out[3]);

/* The reference's gradient of parameter group g (core/params.h): [N, width]. */
const double *t_ref_group(const splat_ref_grads *rg, uint32_t g);

/* The GPU side of one render: renderer, GPU scene, buffers and stream. */
typedef struct t_render {
    splat_gpu *g;
    splat_renderer r;
    splat_scene_gpu scene, grads;
    splat_render_bufs bufs;
    splat_stream stream;
} t_render;

bool t_render_init(t_render *t, const splat_scene *scene, uint32_t max_w, uint32_t max_h, uint32_t isect_capacity);
void t_render_free(t_render *t);
/* Records NaN into the four arrays of partial gradients (and, with `bits`, sets every quadrant bit),
 * so that a backward that reads an entry no quadrant wrote this pass, or that trusts a bit the
 * forward did not clear, gives NaN gradients instead of whatever a fresh buffer happens to hold. */
void t_poison_partials(t_render *t, bool bits);

/* What the GPU produced, downloaded. */
typedef struct t_gpu_image {
    uint32_t w, h, n_isect, tiles;
    float *rgbt;       /* [H,W,4] */
    uint32_t *last;    /* [H,W] list position + 1 */
    float *depth;      /* [H,W] */
    uint32_t *ranges;  /* [tiles,2] */
    uint32_t *vals;    /* [n_isect] Gaussian of each sorted entry */
    uint32_t *keys;    /* [n_isect] the depth key (float bits) each sorted entry was sorted by */
    float *gdepth;     /* [N] the depth the GPU's preprocess gave each Gaussian */
} t_gpu_image;

bool t_download_image(t_render *t, const splat_camera *cam, t_gpu_image *out);
void t_gpu_image_free(t_gpu_image *im);

/* A GPU depth (R_z . mu + t_z in float32) may differ from the reference's by this many units
 * of float32 rounding (2^-24) times sum_k |R_zk mu_k| + |t_z|: twice the dot product's bound. */
#define T_DEPTH_ROUNDING 8.0

/* The reference for the same render, with the GPU's tile lists reconciled: every GPU list must
 * be in (float32 depth, index) order of the GPU's own depths, each within float32 rounding of the
 * reference's (T_DEPTH_ROUNDING); every Gaussian in one list of a tile and not in the other must
 * be a borderline tile test; where the lists differ (members, or order between depths that differ
 * by rounding) the reference uses the GPU's list for that tile. Returns false (and fails the case)
 * otherwise. */
typedef struct t_ref {
    splat_ref_settings set;
    splat_ref_proj *proj;
    splat_ref_lists lists;
    splat_ref_image img;
    uint32_t reconciled_tiles;
    uint32_t reordered_tiles;  /* of those, tiles whose lists differ only in order (depth ties) */
    double max_depth_err;      /* largest error of a GPU sort key, relative to its bound (T_DEPTH_ROUNDING) */
} t_ref;

bool t_ref_render(t_ref *ref, const splat_scene *scene, const splat_camera *cam, const splat_render_desc *opts,
                  const t_gpu_image *gpu);
void t_ref_free(t_ref *ref);

/* Pixels whose reference decisions were borderline (margin below this) are excluded from
 * image comparisons and get no upstream gradient. The GPU's float32 alphas and transmittances
 * measure within a few 1e-6 of the reference, so a 1e-4 margin leaves a wide safety factor
 * while excluding only about 0.2% of pixels in the densest test scenes. */
#define T_PIXEL_MARGIN 1e-4

/* Compares image, transmittance and last contributor; returns the max relative image error. */
double t_compare_forward(const t_ref *ref, const t_gpu_image *gpu, const char *what);

#endif
