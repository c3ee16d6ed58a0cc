/* Struct layouts shared by src/train and the training shaders (see render_types.h for the
 * conventions: scalars only, so std430 and C agree). */
#ifndef SPLAT_TRAIN_TYPES_H
#define SPLAT_TRAIN_TYPES_H

#include "render_types.h"

#ifdef VULKAN
#define u32 uint
#define f32 float
#endif

#define SPLAT_LOSS_LAMBDA 0.2
#define SPLAT_SSIM_C1 0.0001
#define SPLAT_SSIM_C2 0.0009
#define SPLAT_ADAM_B1 0.9
#define SPLAT_ADAM_B2 0.999
#define SPLAT_ADAM_EPS 1e-15

/* A training view as the GPU reads it: its camera and where its image starts in the image store
 * (in pixels, one packed RGBA8 uint each). */
SPLAT_STRUCT(splat_train_view)
{
    splat_gpu_camera cam;
    u32 image_offset;
    u32 pad;
};

/* What changes from one iteration to the next, written by the host into a ring slot before the
 * slot's recorded command buffer is submitted. */
SPLAT_STRUCT(splat_train_slot)
{
    u32 view;                /* index into the view table */
    u32 step;                /* 0-based */
    u32 sh_degree;           /* active degree this step */
    u32 n_gaussians;
    f32 background[3];
    u32 cap;                 /* max Gaussians per tile */
    f32 lr[6];               /* means, log-scales, quats, opacities, SH DC, SH rest */
    f32 bias1, bias2;        /* 1 - b1^t and sqrt(1 - b2^t), t = step + 1 */
    u32 image_base;          /* offset added to the view's image offset (0, or the slot's streamed image) */
    u32 pad;
};

/* What an iteration reports back (copied to a host-visible ring when it ends). */
SPLAT_STRUCT(splat_train_report)
{
    splat_counters counters;
    f32 l1_sum;              /* sum |x - y| over pixels and channels */
    f32 sq_sum;              /* sum (clamp(x, 0, 1) - y)^2 */
    f32 ssim_sum;            /* sum of ssim over valid positions and channels */
    u32 n_ssim;              /* number of valid positions * 3 */
    u32 step;
    u32 gate;                /* nonzero: the iteration (or an earlier one) overflowed, updates skipped */
    u32 pad0, pad1;
};

/* Push constants of the training kernels. */
SPLAT_STRUCT(splat_train_push)
{
    u32 slot;                /* ring slot of this iteration */
    u32 n;                   /* Gaussians (rows) the kernel covers */
    u32 width, height;       /* largest image (loss kernels' dispatch grid) */
    u32 seed;                /* densification: run seed ^ step */
    f32 scene_scale;
    u32 step;
    u32 flags;               /* densification: the step after which large Gaussians are pruned */
};

#undef u32
#undef f32
#endif
