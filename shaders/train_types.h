/* Struct layouts shared by src/train and the training shaders (see render_types.h for the
 * conventions: scalars only, so std430 and C agree). */
#ifndef SPLAT_TRAIN_TYPES_H
#define SPLAT_TRAIN_TYPES_H

#include "core/params.h"
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

/* A training view as the GPU reads it: its camera. */
SPLAT_STRUCT(splat_train_view)
{
    splat_gpu_camera cam;
};

/* What changes from one iteration to the next, written by the host into a ring slot before the
 * slot's recorded command buffer is submitted. */
SPLAT_STRUCT(splat_train_slot)
{
    splat_frame frame;       /* the frame of this iteration's render but its camera, which frame_setup
                                takes from the view table (splat__frame_make fills the rest) */
    u32 view;                /* index into the view table */
    u32 step;                /* 0-based */
    u32 image_offset;        /* where the view's ground truth starts in the pixels the slot's recording
                                binds (in pixels, one packed RGBA8 uint each): its place in the resident
                                image store, or 0 in a slot's own image (streamed, evaluation); its mask
                                starts at the same pixel, a byte each */
    u32 has_mask;            /* the view has a mask (else every pixel counts) */
    u32 n_pixels;            /* pixels that count (W H without a mask) */
    u32 n_centres;           /* valid SSIM windows whose centre counts ((W - 10) (H - 10), or 0) */
    u32 pad;
    f32 bias1, bias2;        /* 1 - b1^t and sqrt(1 - b2^t), t = step + 1 */
    f32 lr_head[SPLAT_GROUP_COUNT];   /* learning rate of each group's head, and of the rest (core/params.h) */
    f32 lr_rest[SPLAT_GROUP_COUNT];
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
    f32 sq_full_sum;         /* sq_sum over every pixel, mask or not */
    u32 n_values;            /* pixel values the sums of l1 and sq are over (3 x the pixels that count) */
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

/* Push constants of densify_budget: the decisions' inputs as in splat_train_push, and how many of
 * the surviving clones and splits (in source order) are made. */
SPLAT_STRUCT(splat_budget_push)
{
    u32 n;
    f32 scene_scale;
    u32 step;
    u32 flags;
    u32 clones, splits;
    u32 pad[2];
};


/* Binding slots, one block per stage: the shader declares layout(binding = <STAGE>_<NAME>) and
 * the C side fills views[<STAGE>_<NAME>], so neither lists buffers by position. */

/* frame_setup.comp */
#define FRAME_SETUP_SLOTS 0
#define FRAME_SETUP_VIEWS 1
#define FRAME_SETUP_FRAME 2
#define FRAME_SETUP_BINDINGS 3

/* loss_fwd.comp, loss_bwd.comp */
#define LOSS_FRAME 0
#define LOSS_SLOTS 1
#define LOSS_PIXELS 2
#define LOSS_RENDER 3
#define LOSS_MAPS 4
#define LOSS_OUT 5
#define LOSS_MASKS 6
#define LOSS_BINDINGS 7

/* loss_reduce.comp */
#define LOSS_REDUCE_PARTS 0
#define LOSS_REDUCE_COUNTERS 1
#define LOSS_REDUCE_GATE 2
#define LOSS_REDUCE_REPORT 3
#define LOSS_REDUCE_SLOTS 4
#define LOSS_REDUCE_BINDINGS 5

/* densify_mark.comp */
#define DENSIFY_MARK_SCALES 0
#define DENSIFY_MARK_OPACITIES 1
#define DENSIFY_MARK_STATS 2
#define DENSIFY_MARK_KEEP 3
#define DENSIFY_MARK_CLONE 4
#define DENSIFY_MARK_SPLIT 5
#define DENSIFY_MARK_INFO 6
#define DENSIFY_MARK_BINDINGS 7

/* densify_budget.comp */
#define DENSIFY_BUDGET_SCALES 0
#define DENSIFY_BUDGET_OPACITIES 1
#define DENSIFY_BUDGET_KEEP 2
#define DENSIFY_BUDGET_CLONE 3
#define DENSIFY_BUDGET_SPLIT 4
#define DENSIFY_BUDGET_OFF_CLONE 5
#define DENSIFY_BUDGET_OFF_SPLIT 6
#define DENSIFY_BUDGET_BINDINGS 7

/* opacity_reset.comp */
#define OPACITY_RESET_OPACITIES 0
#define OPACITY_RESET_MOMENTS 1
#define OPACITY_RESET_BINDINGS 2

/* adam.comp: the groups of core/params.h, each as parameters, gradients and moments */
#define ADAM_SLOTS 0
#define ADAM_GATE 1
#define ADAM_PARAMS 2
#define ADAM_GRADS (ADAM_PARAMS + SPLAT_GROUP_COUNT)
#define ADAM_MOMENTS (ADAM_GRADS + SPLAT_GROUP_COUNT)
#define ADAM_BINDINGS (ADAM_MOMENTS + SPLAT_GROUP_COUNT)

/* densify_apply.comp: the decisions and their scans, then every group's rows and moments, from
 * the old arrays to the new ones */
#define DENSIFY_APPLY_TOTALS 0
#define DENSIFY_APPLY_OFF_KEEP 1
#define DENSIFY_APPLY_OFF_CLONE 2
#define DENSIFY_APPLY_OFF_SPLIT 3
#define DENSIFY_APPLY_KEEP 4
#define DENSIFY_APPLY_CLONE 5
#define DENSIFY_APPLY_SPLIT 6
#define DENSIFY_APPLY_SRC_PARAMS 7
#define DENSIFY_APPLY_SRC_MOMENTS (DENSIFY_APPLY_SRC_PARAMS + SPLAT_GROUP_COUNT)
#define DENSIFY_APPLY_DST_PARAMS (DENSIFY_APPLY_SRC_MOMENTS + SPLAT_GROUP_COUNT)
#define DENSIFY_APPLY_DST_MOMENTS (DENSIFY_APPLY_DST_PARAMS + SPLAT_GROUP_COUNT)
#define DENSIFY_APPLY_BINDINGS (DENSIFY_APPLY_DST_MOMENTS + SPLAT_GROUP_COUNT)

#undef u32
#undef f32
#endif
