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
#define SPLAT_NEAR 0.01
#define SPLAT_EPS2D 0.3
#define SPLAT_ALPHA_MIN (1.0 / 255.0)
#define SPLAT_ALPHA_MAX 0.999
#define SPLAT_T_MIN 1e-4
#define SPLAT_SIGMA_CAP 3.0

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
};

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
    u32 sort_bits;
    u32 dummy_tile;          /* a tile id past every real one: where padding entries sort */
};

/* Per-Gaussian record the preprocess writes for the rasterizer, as 3 vec4. */
#define SPLAT_PROJ_VEC4 3

#undef u32
#undef f32
#endif
