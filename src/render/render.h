/* render: the differentiable rasterizer on the GPU (docs/RASTER.md is the function).
 *
 * Forward: project -> scan -> isect setup -> isect (keys) -> sort -> ranges -> rasterize.
 * Backward: rasterize_bwd -> project_bwd. Each stage is a shader of the same name
 * (shaders/<stage>_fwd.comp, _bwd.comp); everything is recorded into a splat_cmd, so a whole
 * iteration can be recorded once and replayed. The host never reads a count in between: the
 * intersection count drives later stages by indirect dispatch, and an overflow of the
 * intersection buffers is flagged in the counters for the host to see when it retires the
 * submission (splat__render_check). */
#ifndef SPLAT_RENDER_H
#define SPLAT_RENDER_H

#include "gpu/gpu.h"
#include "render_types.h"
#include "sort/sort.h"

_Static_assert(sizeof(splat_gpu_camera) == 72, "camera layout");
_Static_assert(sizeof(splat_frame) == 116, "frame layout");
_Static_assert(sizeof(splat_counters) == 32, "counters layout");
_Static_assert(sizeof(splat_render_push) == 16, "push layout");

/* Rendering options. All-zero: SH degree 0, black background, no per-tile cap. */
typedef struct splat_render_opts {
    uint32_t sh_degree;                /* active SH degree 0..3 */
    float background[3];
    uint32_t max_gaussians_per_tile;   /* 0 = unlimited */
} splat_render_opts;

/* Gaussian parameters on the GPU, structure of arrays with room for `capacity` rows. The
 * gradients of a scene have the same shape, so they use this type too. */
typedef struct splat_scene_gpu {
    uint32_t count, capacity;
    bool sh_half;           /* SH stored as half floats (rendering; training keeps float) */
    splat_buf means;        /* [cap,3] */
    splat_buf log_scales;   /* [cap,3] */
    splat_buf quats;        /* [cap,4] */
    splat_buf opacities;    /* [cap] */
    splat_buf sh;           /* [cap,16,3] float, or half floats with sh_half */
} splat_scene_gpu;

splat_status splat__scene_gpu_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t capacity,
                                   splat_error *err);
/* The same, choosing the SH storage; uploads and downloads convert. */
splat_status splat__scene_gpu_init_sh(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t capacity, bool sh_half,
                                      splat_error *err);
void splat__scene_gpu_free(splat_gpu *g, splat_scene_gpu *s);
/* Immediate copies of rows [0, count) (setup and tests; never in the loop). */
splat_status splat__scene_gpu_upload(splat_gpu *g, splat_scene_gpu *dst, const splat_scene *src, splat_error *err);
splat_status splat__scene_gpu_download(splat_gpu *g, const splat_scene_gpu *src, splat_scene *dst, splat_error *err);

/* Pipelines of every render stage, and the sorter they use. The backward is deterministic:
 * no atomics anywhere, so the same inputs give the same bits on the same device. */
typedef struct splat_renderer {
    splat_gpu *gpu;
    splat_sorter sorter;
    splat_pipe project_fwd, isect_setup, isect_fwd, ranges_fwd, rasterize_fwd;
    splat_pipe rasterize_bwd, project_bwd, project_bwd_stats;
    splat_pipe project_fwd_h, project_bwd_h;   /* half-float SH */
} splat_renderer;

splat_status splat__renderer_init(splat_gpu *g, splat_renderer *r, splat_error *err);
void splat__renderer_free(splat_renderer *r);

/* Per-render buffers, sized for `capacity` Gaussians, `isect_capacity` tile intersections and
 * images up to max_w x max_h. */
typedef struct splat_render_bufs {
    uint32_t capacity, isect_capacity, max_w, max_h, max_tiles_x, max_tiles_y;
    splat_buf frame;        /* splat_frame */
    splat_buf counters;     /* splat_counters */
    splat_buf scan_total;   /* uint: the intersection count from the scan */
    splat_buf sort_count;   /* uint: what the sort sorts (its own buffer: views must be aligned) */
    splat_buf proj;         /* [cap,3] vec4: mean2d, depth, opacity | conic, tau | rgb */
    splat_buf radii;        /* [cap,2] */
    splat_buf tiles;        /* [cap] tiles touched */
    splat_buf offsets;      /* [cap] exclusive scan of tiles */
    splat_buf keys_lo, keys_hi, vals;  /* [M] depth bits, tile id, emission index; sorted in place */
    splat_buf gauss_of_emit;           /* [M] Gaussian of each emission index */
    splat_buf partial;                 /* [M,9] each entry's share of its Gaussian's 2D gradient */
    splat_buf sort_scratch, scan_scratch;
    splat_buf ranges;       /* [tiles,2] */
    splat_buf out_rgbt;     /* [H,W,4] rgb + final transmittance */
    splat_buf out_last;     /* [H,W] last blended list position + 1 */
    splat_buf out_depth;    /* [H,W] */
    splat_buf grad_img;     /* [H,W,4] dL/drgb, dL/dalpha (input of the backward) */
    splat_buf stats;        /* [cap,4] densification statistics */
    splat_buf gate;         /* uint: nonzero makes the backward leave the statistics alone */
    splat_buf debug;        /* the first non-finite gradient the backward caught (splat__render_debug) */
    splat_buf readback;     /* host-visible copy of the counters (discrete GPUs) */
} splat_render_bufs;

splat_status splat__render_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t capacity,
                                     uint32_t isect_capacity, uint32_t max_w, uint32_t max_h, splat_error *err);
void splat__render_bufs_free(splat_gpu *g, splat_render_bufs *b);

/* The frame a render uses, as the GPU reads it. */
void splat__frame_make(splat_frame *f, const splat_camera *cam, const splat_render_opts *opts, uint32_t n_gaussians);
/* Records the write of the frame (immediate mode; training writes it on the GPU). */
void splat__render_set_frame(splat_cmd *c, splat_render_bufs *b, const splat_frame *f);

/* Records the forward of `n` Gaussians. The frame must already be in b->frame. The counters
 * land in b->readback too, so the host can check them in place after the submission. */
void splat__render_fwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n);
/* Records the backward: reads b->grad_img, writes every row [0, n) of `grads`. With `stats`,
 * also accumulates densification statistics into b->stats, unless b->gate is nonzero. */
void splat__render_bwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, const splat_scene_gpu *grads, bool stats);

/* After the submission holding a forward has completed: SPLAT_ERR_NONFINITE for NaN/Inf
 * parameters; *overflow set (and *needed the intersection count) when the intersection
 * buffers were too small, in which case the render must be grown and run again. */
splat_status splat__render_check(splat_gpu *g, splat_render_bufs *b, bool *overflow, uint32_t *needed, splat_error *err);
/* Grows the intersection buffers to hold at least `needed` (with headroom). */
splat_status splat__render_bufs_grow_isect(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t needed,
                                           splat_error *err);

/* How many Gaussians got a non-finite gradient (withheld from the optimizer) so far, and a
 * description of the first. */
uint32_t splat__render_debug(splat_gpu *g, splat_render_bufs *b, char *msg, size_t size);

/* Immediate mode: renders one image through the stream (adaptive commits) and waits; grows and
 * re-renders on overflow. The image is in b->out_rgbt etc. when it returns. */
splat_status splat__render_image(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                 splat_render_bufs *b, const splat_camera *cam, const splat_render_opts *opts,
                                 splat_error *err);

#endif
