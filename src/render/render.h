/* render: the differentiable rasterizer on the GPU (docs/RASTER.md is the function).
 *
 * A stage per file, each with a recording function splat__<stage>_record that records its
 * dispatches into a splat_cmd, a shader of the same name, and binding slots named in
 * shaders/render_types.h. In pipeline order:
 *
 *   project.c     project_fwd: preprocess, one thread per Gaussian (SH colour fused in)
 *   (sort layer)  scan of tiles touched -> each Gaussian's first tile-list entry
 *   isect.c       isect_setup, isect_fwd: the key and value of every tile intersection
 *   (sort layer)  radix sort of the intersections by (tile, depth)
 *   ranges.c      ranges_fwd: each tile's run in the sorted list
 *   rasterize.c   rasterize_fwd; backward: rasterize_bwd
 *   project.c     backward: project_bwd, the chain rule to the parameters
 *
 * The intersections are sorted by tile id alone and then each tile's run by (depth, emission
 * index or Gaussian) in a workgroup (isect.c, tile_sort): the order of the stable sort by the full
 * (tile, depth) key, in training and in forward-only renders alike.
 *
 * render.c strings them together (splat__render_fwd / _bwd), checks a finished render and holds
 * the one overflow-retry path. scene_gpu.c keeps Gaussians on the GPU, a buffer per parameter
 * group of core/params.h; renderer.c the pipelines and per-render buffers; frame.c turns render
 * options and a camera into the frame every stage reads.
 *
 * The host never reads a count in between: the intersection count drives later stages by
 * indirect dispatch, and an overflow of the intersection buffers is flagged in the counters,
 * for the host to see when it retires the submission. Recording only: submitting and waiting
 * belong to the caller's stream, so a whole training iteration can be recorded once and
 * replayed. The backward is deterministic (no atomics): the same inputs give the same bits. */
#ifndef SPLAT_RENDER_H
#define SPLAT_RENDER_H

#include "gpu/gpu.h"
#include "render_types.h"
#include "sort/sort.h"

_Static_assert(sizeof(splat_gpu_camera) == 72, "camera layout");
_Static_assert(sizeof(splat_frame) == 124, "frame layout");
_Static_assert(sizeof(splat_counters) == 32, "counters layout");
_Static_assert(sizeof(splat_render_push) == 16, "push layout");

/* ------------------------------------------------------------------ scenes on the GPU */

/* Gaussians on the GPU: a buffer of `rows` x width floats per parameter group (core/params.h),
 * reachable by index (group[SPLAT_GROUP_MEANS]) or by name (means). The gradients of a scene
 * have the same shape, and Adam's moments a multiple of it (`words`), so they use this type as
 * well. */
#define SPLAT__GROUP_BUF(i, name, N, w, h, a, b, f) splat_buf name;
typedef struct splat_scene_gpu {
    uint32_t count, capacity; /* rows in use, rows held */
    bool sh_half;             /* the SH group stored as half floats (rendering; training keeps float) */
    uint8_t words[SPLAT_GROUP_COUNT]; /* where not 0, the 32-bit words a parameter float of group g
                                         holds (Adam's moments, train_types.h); 0: a float */
    union {
        splat_buf group[SPLAT_GROUP_COUNT];
        struct {
            SPLAT_PARAM_GROUPS(SPLAT__GROUP_BUF)
        };
    };
} splat_scene_gpu;
#undef SPLAT__GROUP_BUF

/* Allocates `rows` rows of every group, labelled "<name>.<group>". sh_half: the SH group as half
 * floats (uploads and downloads convert). */
splat_status splat__scene_gpu_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t rows, bool sh_half,
                                   splat_error *err);
void splat__scene_gpu_free(splat_gpu *g, splat_scene_gpu *s);
/* Bytes a row of group k holds. */
uint64_t splat__scene_gpu_row_bytes(const splat_scene_gpu *s, uint32_t k);
/* Allocates group k's buffer alone, of s->capacity rows (s->sh_half and s->words as set), labelled
 * "<name>.<group>": for code that replaces a scene a group at a time to bound its peak memory. */
splat_status splat__scene_gpu_group_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t k,
                                         splat_error *err);
/* Immediate copies of rows [0, count) (setup and tests; never in the loop). */
splat_status splat__scene_gpu_upload(splat_gpu *g, splat_scene_gpu *dst, const splat_scene *src, splat_error *err);
splat_status splat__scene_gpu_download(splat_gpu *g, const splat_scene_gpu *src, splat_scene *dst, splat_error *err);
/* Records the zeroing of every row of every group. */
void splat__scene_gpu_zero(splat_cmd *c, const splat_scene_gpu *s);

/* ------------------------------------------------------------------ renderer and buffers */

/* Pipelines of every render stage, and the sorter they use. */
typedef struct splat_renderer {
    splat_gpu *gpu;
    splat_sorter sorter;
    splat_pipe project_fwd, isect_setup, isect_fwd, ranges_fwd, rasterize_fwd;
    splat_pipe tile_sort;                      /* each tile's run by depth, after the sort by tile */
    splat_pipe tile_sort_gather;               /* the same, and each entry's Gaussian (training) */
    uint32_t tile_cap;                         /* tile_sort's block in shared memory (entries) */
    uint64_t id;                               /* new at init and whenever a pipeline is rebuilt */
    splat_pipe project_fwd_only, project_fwd_h_only, isect_fwd_only, rasterize_fwd_only;
    splat_pipe rasterize_bwd;
    splat_pipe project_bwd[4];                 /* by the SPLAT_BWD_ flags */
    splat_pipe project_fwd_h, project_bwd_h;   /* half-float SH */
} splat_renderer;

splat_status splat__renderer_init(splat_gpu *g, splat_renderer *r, splat_error *err);
void splat__renderer_free(splat_renderer *r);
/* Rebuilds tile_sort with blocks of `cap` entries (a power of two, 2 up to what the device's
 * shared memory holds, 4,096 on most; 0: the default, 2,048), so that tests take its merge of
 * blocks on short runs and benchmarks can compare block sizes. */
splat_status splat__renderer_set_tile_cap(splat_renderer *r, uint32_t cap, splat_error *err);

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
    splat_buf gauss_sorted;            /* [M] training: the Gaussian of each sorted entry (tile_sort's
                                        * gather, so the rasterizer reads it in place); a stub in
                                        * forward-only renders, whose values are the Gaussians */
    splat_buf partial[4];              /* [M,9] each entry's share of its Gaussian's 2D gradient, by tile quadrant */
    splat_buf quads;                   /* [M] the quadrants that wrote each entry's partial (a bit each): the
                                        * others hold whatever an earlier step left, and count as zero */
    splat_buf sort_scratch, scan_scratch;
    splat_buf ranges;       /* [tiles,2] */
    splat_buf out_rgbt;     /* [H,W,4] rgb + final transmittance */
    splat_buf out_last;     /* [H,W] last blended list position + 1 */
    splat_buf out_depth;    /* [H,W] */
    splat_buf grad_img;     /* [H,W,4] dL/drgb, dL/dalpha (input of the backward) */
    splat_buf stats;        /* [cap,4] densification statistics */
    splat_buf gate;         /* SPLAT_GATE_BYTES: the update gate (nonzero: the backward leaves the statistics
                             * alone), then Adam's word for a parameter it wrote non-finite */
    splat_buf debug;        /* the first non-finite gradient the backward caught (splat__render_debug) */
    splat_buf readback;     /* host-visible copy of the counters (discrete GPUs) */
    bool fwd_only;          /* splat__render_bufs_init_fwd_only */
    /* splat__render_image's work recorded once and replayed for every camera (the camera comes
     * from frame_host), recorded again when what it bound changes (image_key). */
    splat_buf frame_host;   /* host-visible splat_frame */
    splat_rec image_rec;
    struct splat_image_key {
        uint64_t renderer, scene[SPLAT_GROUP_COUNT], isect, copy, copy_bytes;
        uint32_t count, sh_half;
    } image_key;
} splat_render_bufs;

/* isect_capacity 0: a small start (it grows on demand). Allocation only, no GPU work: the backward's
 * gate and debug word are undefined until splat__render_bufs_clear runs. */
splat_status splat__render_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t capacity,
                                     uint32_t isect_capacity, uint32_t max_w, uint32_t max_h, splat_error *err);
/* Records what the backward needs zeroed in fresh buffers (the gate, the debug word), in the
 * caller's command order: before the first backward, with a barrier between. Forward-only
 * renders need none. (Recorded, not an immediate upload: that would wait behind whatever else the
 * queue holds, training's iterations when the viewer grows its buffers.) */
void splat__render_bufs_clear(splat_cmd *c, const splat_render_bufs *b);
void splat__render_bufs_free(splat_gpu *g, splat_render_bufs *b);
/* The bytes of the buffers sized by b->isect_capacity (what grows with the intersections). */
uint64_t splat__render_bufs_isect_bytes(const splat_render_bufs *b);
/* Grows the intersection buffers to hold at least `needed` (with headroom); SPLAT_ERR_LIMIT when
 * that is more than one storage binding holds. Recordings that bound the old buffers must be
 * recorded again. */
splat_status splat__render_bufs_grow_isect(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t needed,
                                           splat_error *err);

/* Buffers that render forward only, the way images are rendered (splat_render, the viewer): the
 * same pixels, bit for bit, for less work. The sorted values are the Gaussians themselves (not
 * emission indices), and nothing the backward reads is written (intersections' Gaussians and
 * partial gradients, each pixel's last position and depth), and those buffers are stubs;
 * splat__render_bwd must not follow. Training never uses these. */
splat_status splat__render_bufs_init_fwd_only(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b,
                                              uint32_t capacity, uint32_t isect_capacity, uint32_t max_w, uint32_t max_h,
                                              splat_error *err);

/* The push constants every stage gets: capacities and the sort's key width. */
splat_render_push splat__render_push(const splat_render_bufs *b);

/* -------------------------------------------------------------------------- frames */

/* The SH degree a render desc asks for. The desc must be resolved (api/options.c): sh_degree is
 * SPLAT_SH_DEGREE_0, 1, 2 or 3. */
uint32_t splat__sh_degree(const splat_render_desc *desc);
/* The frame a render reads, from a camera and resolved render options: the one place where a
 * render option becomes what the shaders see (training writes it into its ring slots, and
 * frame_setup adds the camera on the GPU). */
void splat__frame_make(splat_frame *f, const splat_camera *cam, const splat_render_desc *desc, uint32_t n_gaussians);
/* Records the write of the frame (immediate mode; training writes it on the GPU). */
void splat__render_set_frame(splat_cmd *c, splat_render_bufs *b, const splat_frame *f);

/* ------------------------------------------------------------------------- stages */

/* Every stage reads the frame from b->frame and records no barrier of its own: the pipeline
 * (render.c) puts one between stages. n: Gaussians, rows [0, n) of `scene`. */
void splat__project_fwd_record(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene,
                               splat_render_bufs *b, uint32_t n, uint32_t flags);
/* isect_setup (the count the sort and the indirect dispatches use), then isect_fwd. */
void splat__isect_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b, uint32_t n);
/* After ranges_fwd: each tile's run ordered by (depth bits, value): the value is the emission
 * index (training) or the Gaussian (fwd_only), both rising with the Gaussian. */
void splat__tile_sort_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b);
void splat__ranges_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b);
void splat__rasterize_fwd_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b);
/* Reads b->grad_img; writes each intersection's partial gradient. */
void splat__rasterize_bwd_record(splat_cmd *c, const splat_renderer *r, splat_render_bufs *b);
/* What training's render does otherwise (0: as any render). */
typedef enum splat_render_flags {
    SPLAT_BWD_STATS = 1,     /* accumulate the densification statistics into b->stats, unless b->gate is nonzero */
    SPLAT_BWD_SH_RECORD = 2, /* grads->sh holds each Gaussian's SH record (render_types.h, at least
                              * SPLAT_SH_RECORD_FLOATS a row), not its SH gradients: for Adam's
                              * adam_sh_record pipeline */
    SPLAT_FWD_SH_DRAWN = 4,  /* the forward reads (and checks) the SH of the Gaussians it draws only,
                              * as forward-only renders do: Adam checks every value it writes */
} splat_render_flags;

/* Writes every row [0, n) of `grads`. */
void splat__project_bwd_record(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene,
                               splat_render_bufs *b, uint32_t n, const splat_scene_gpu *grads, uint32_t flags);

/* ---------------------------------------------------------------------- pipeline */

/* Records the forward of `n` Gaussians. The frame must already be in b->frame. The counters
 * land in b->readback too, so the host can check them in place after the submission. With
 * b->fwd_only, the forward-only pipeline (splat__render_bufs_init_fwd_only). flags: splat_render_flags. */
void splat__render_fwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, uint32_t flags);
/* Records the backward of the forward before it (see the stages above); not after a fwd_only
 * forward. */
void splat__render_bwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, const splat_scene_gpu *grads, uint32_t flags);

/* After the submission holding a forward has completed: SPLAT_ERR_NONFINITE for NaN/Inf
 * parameters; *overflow set (and *needed the intersection count) when the intersection
 * buffers were too small, in which case the render must be grown and run again. */
splat_status splat__render_check(splat_gpu *g, splat_render_bufs *b, bool *overflow, uint32_t *needed, splat_error *err);

/* How many Gaussians got a non-finite gradient (withheld from the optimizer) so far, and a
 * description of the first. */
uint32_t splat__render_debug(splat_gpu *g, splat_render_bufs *b, char *msg, size_t size);

/* The overflow-retry path of every render that waits for its result: records the work through
 * `record`, submits and waits (or has `submit` do both, for work it keeps recorded), checks the
 * counters, and after an overflow grows the intersection buffers, calls `regrown` (to re-record
 * whatever else bound them; may be NULL) and runs the work again. Training's ring, which does not
 * wait, grows the same way (splat__render_bufs_grow_isect) when it retires an overflowed
 * iteration. */
typedef struct splat_render_job {
    void (*record)(splat_cmd *c, void *user);
    splat_status (*submit)(splat_stream *s, void *user, splat_error *err); /* instead of record */
    splat_status (*regrown)(void *user, splat_error *err);
    void *user;
} splat_render_job;

splat_status splat__render_run(splat_stream *s, const splat_renderer *r, splat_render_bufs *b,
                               const splat_render_job *job, splat_error *err);

/* Immediate mode: renders one image through the stream (adaptive commits) and waits. The image is
 * in b->out_rgbt etc. when it returns. desc must be resolved. */
splat_status splat__render_image(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                 splat_render_bufs *b, const splat_camera *cam, const splat_render_desc *desc,
                                 splat_error *err);
/* The same, and the image ([H,W,4] rgb + final transmittance) copied into `copy` (at least
 * W * H * 16 bytes; SPLAT_MEM_READBACK for the host to read in place) by the same submission: one
 * host wait per image, none for a download of its own. */
splat_status splat__render_image_copy(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                      splat_render_bufs *b, const splat_camera *cam, const splat_render_desc *desc,
                                      splat_buf *copy, splat_error *err);

#endif
