/* Struct layouts shared by the C side (src/render) and the shaders. Included by both: glslc
 * defines VULKAN, a C compiler does not. Members are scalars and scalar arrays only, so std430
 * (storage buffers and push constants) and C lay them out identically; the C side asserts the
 * sizes. */
#ifndef SPLAT_RENDER_TYPES_H
#define SPLAT_RENDER_TYPES_H

#ifdef VULKAN
#define SPLAT_STRUCT(name) struct name
#define u32 uint
#define f32 float
#else
#include <stdint.h>
#define SPLAT_STRUCT(name) typedef struct name name; struct name
typedef uint32_t u32;
typedef float f32;
#endif

#define SPLAT_TILE 16u
#define SPLAT_QUAD 8u /* the rasterizers' workgroups: a quadrant of a tile, each with its own partial gradients */
#define SPLAT_NEAR 0.01
#define SPLAT_EPS2D 0.3
#define SPLAT_ALPHA_MIN (1.0 / 255.0)
#define SPLAT_ALPHA_MAX 0.999
#define SPLAT_T_MIN 1e-4
#define SPLAT_SIGMA_CAP 3.0
#define SPLAT_MIN_COMPENSATION 0.005

/* A camera as the GPU reads it (see splat_camera). */
SPLAT_STRUCT(splat_gpu_camera)
{
    f32 fx, fy, cx, cy;
    f32 R[9];
    f32 t[3];
    u32 width, height;
};

/* What one render needs besides the scene: written by the frame setup kernel (from a ring slot
 * and the camera table) or by the host in immediate mode. Every stage reads it, so a recorded
 * command buffer serves any camera. */
SPLAT_STRUCT(splat_frame)
{
    splat_gpu_camera cam;
    f32 campos[3];           /* camera centre in world space: -R^T t */
    f32 background[3];
    u32 sh_degree;           /* active degree 0..3 */
    u32 tiles_x, tiles_y;    /* of this camera's image */
    u32 cap;                 /* max Gaussians per tile, 0 = unlimited */
    u32 n_gaussians;         /* rows of the scene in use */
    u32 antialiased;         /* 1: opacities scaled by the low-pass's compensation (splat_rasterize_mode) */
    u32 seen_box;            /* 1: project_fwd marks radii (0, 1) on a Gaussian it culls for drawing no pixel
                                while gsplat's box would keep it: the densification statistics count such a
                                view (docs/TRAIN.md, "Densification") */
};

/* The update gate's buffer: the gate (nonzero: no update, no statistics; loss_reduce closes it, the
 * host reopens it), then a word Adam sets when a parameter it wrote came out NaN or Inf, which the
 * next step's loss_reduce reports as non-finite (zero in new buffers; the host leaves it alone). */
#define SPLAT_GATE_BYTES 8u

/* Counters the GPU writes and the host reads when it retires a submission. */
SPLAT_STRUCT(splat_counters)
{
    u32 n_isect;             /* true number of tile intersections (the scan's total) */
    u32 n_valid;             /* min(n_isect, capacity): what the sort and the ranges use */
    u32 overflow;            /* 1 when n_isect > capacity: this render's results are invalid */
    u32 nonfinite;           /* 1 when an input parameter was NaN or Inf */
    u32 isect_groups[3];     /* VkDispatchIndirectCommand for per-intersection kernels */
    u32 isect_padded;        /* entries isect_fwd found fewer than project_fwd counted (should stay 0) */
};

/* Push constants of every render stage. */
SPLAT_STRUCT(splat_render_push)
{
    u32 capacity;            /* rows the per-Gaussian buffers hold */
    u32 isect_capacity;
    u32 tile_bits;           /* bits of a tile id, the dummy included: what the sort by tile sorts */
    u32 dummy_tile;          /* a tile id past every real one: where padding entries sort */
};

/* Per-Gaussian record the preprocess writes for the rasterizer, as 3 vec4: (mean2d, depth,
 * alpha), (conic, tau'), (rgb, det0 / det in antialiased mode for project_bwd, else 0). */
#define SPLAT_PROJ_VEC4 3

/* Binding slots, one block per stage: the shader declares layout(binding = <STAGE>_<NAME>) and
 * the C side fills views[<STAGE>_<NAME>], so neither lists buffers by position. */

/* project_fwd.glsl */
#define PROJECT_FWD_FRAME 0
#define PROJECT_FWD_MEANS 1
#define PROJECT_FWD_SCALES 2
#define PROJECT_FWD_QUATS 3
#define PROJECT_FWD_OPACITIES 4
#define PROJECT_FWD_SH 5
#define PROJECT_FWD_PROJ 6
#define PROJECT_FWD_RADII 7
#define PROJECT_FWD_TILES 8
#define PROJECT_FWD_COUNTERS 9
#define PROJECT_FWD_BINDINGS 10

/* project_bwd.glsl */
#define PROJECT_BWD_FRAME 0
#define PROJECT_BWD_MEANS 1
#define PROJECT_BWD_SCALES 2
#define PROJECT_BWD_QUATS 3
#define PROJECT_BWD_OPACITIES 4
#define PROJECT_BWD_SH 5
#define PROJECT_BWD_RADII 6
#define PROJECT_BWD_PARTIAL 7
#define PROJECT_BWD_GRAD_MEANS 8
#define PROJECT_BWD_GRAD_SCALES 9
#define PROJECT_BWD_GRAD_QUATS 10
#define PROJECT_BWD_GRAD_OPACITIES 11
#define PROJECT_BWD_GRAD_SH 12
#define PROJECT_BWD_STATS 13
#define PROJECT_BWD_OFFSETS 14
#define PROJECT_BWD_TILES 15
#define PROJECT_BWD_GATE 16
#define PROJECT_BWD_DEBUG 17
#define PROJECT_BWD_PROJ 18
#define PROJECT_BWD_PARTIAL_Q1 19 /* quadrants 1-3's partial gradients; PROJECT_BWD_PARTIAL is quadrant 0's */
#define PROJECT_BWD_PARTIAL_Q2 20
#define PROJECT_BWD_PARTIAL_Q3 21
#define PROJECT_BWD_QUADS 22 /* [M] which quadrants wrote each entry's partial gradient, a bit each */
#define PROJECT_BWD_BINDINGS 23
/* project_bwd's SH record (training): in place of a Gaussian's 48 SH gradients, their two
 * factors: the basis values Y[0..15], 0 from the active degree's coefficient count on, and the
 * clamped colour gradient d_raw.xyz, 0 for a Gaussian with no SH gradient (culled, or a
 * non-finite gradient). Adam multiplies Y[k] by d_raw[c], the product project_bwd would have
 * stored, rounded once as there; a zero factor gives the zero it would have stored. */
#define SPLAT_SH_RECORD_FLOATS 19u
#define SPLAT_SH_RECORD_D_RAW 16u

/* isect_setup.comp */
#define ISECT_SETUP_COUNTERS 0
#define ISECT_SETUP_SCAN_TOTAL 1
#define ISECT_SETUP_SORT_COUNT 2
#define ISECT_SETUP_BINDINGS 3

/* isect_fwd.comp */
#define ISECT_FWD_FRAME 0
#define ISECT_FWD_PROJ 1
#define ISECT_FWD_RADII 2
#define ISECT_FWD_OFFSETS 3
#define ISECT_FWD_TILES 4
#define ISECT_FWD_KEYS_LO 5
#define ISECT_FWD_KEYS_HI 6
#define ISECT_FWD_VALS 7
#define ISECT_FWD_GAUSS_OF_EMIT 8
#define ISECT_FWD_QUADS 9
#define ISECT_FWD_COUNTERS 10
#define ISECT_FWD_BINDINGS 11

/* ranges_fwd.comp */
#define RANGES_FWD_COUNTERS 0
#define RANGES_FWD_KEYS_HI 1
#define RANGES_FWD_RANGES 2
#define RANGES_FWD_BINDINGS 3

/* tile_sort.comp */
#define TILE_SORT_FRAME 0
#define TILE_SORT_RANGES 1
#define TILE_SORT_KEYS 2
#define TILE_SORT_VALS 3
#define TILE_SORT_GAUSS_OF_EMIT 4
#define TILE_SORT_GAUSS 5
#define TILE_SORT_BINDINGS 6

/* rasterize_fwd.comp */
#define RASTERIZE_FWD_FRAME 0
#define RASTERIZE_FWD_RANGES 1
#define RASTERIZE_FWD_GAUSS 2
#define RASTERIZE_FWD_PROJ 3
#define RASTERIZE_FWD_OUT_RGBT 4
#define RASTERIZE_FWD_OUT_LAST 5
#define RASTERIZE_FWD_OUT_DEPTH 6
#define RASTERIZE_FWD_BINDINGS 7

/* rasterize_bwd.comp */
#define RASTERIZE_BWD_FRAME 0
#define RASTERIZE_BWD_RANGES 1
#define RASTERIZE_BWD_VALS 2
#define RASTERIZE_BWD_PROJ 3
#define RASTERIZE_BWD_OUT_RGBT 4
#define RASTERIZE_BWD_OUT_LAST 5
#define RASTERIZE_BWD_GRAD_IMG 6
#define RASTERIZE_BWD_GAUSS 7
#define RASTERIZE_BWD_PARTIAL 8
#define RASTERIZE_BWD_PARTIAL_Q1 9
#define RASTERIZE_BWD_PARTIAL_Q2 10
#define RASTERIZE_BWD_PARTIAL_Q3 11
#define RASTERIZE_BWD_QUADS 12
#define RASTERIZE_BWD_BINDINGS 13

#undef u32
#undef f32
#endif
