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
/* Adam's moments (docs/TRAIN.md, "Adam's moments in 16 bits"). A group flagged
 * SPLAT_GROUP_FLAG_FLOAT_MOMENTS (core/params.h: the means and the opacities) keeps float m and v,
 * two words a parameter float, [rows][2][width] (a row's m, then its v): rounding theirs cost beer
 * at 30,000 steps a quarter of a dB (docs/PERFORMANCE.md, "Which group's moments beer feels").
 * Every other group's: one 32-bit word per parameter float, [rows][width] like the parameters. m
 * takes its low SPLAT_MOMENT_M_BITS bits, the top M of its float (sign, 8 exponent bits, M - 9 of
 * mantissa: a bfloat16 at 16); v (never negative) the high 32 - M, its float's bits 30 down to
 * M - 1 (8 exponent bits, 24 - M of mantissa). Each is rounded stochastically by the word
 * rng_word(step, i, SPLAT_MOMENT_RNG_K + 4 group + j) (rng.glsl; step 0-based), i the element's
 * index in its group and j = 0, or in the SH group i the index of its quad (4 i + j the
 * element's, j < 4): its low 32 - M bits decide m's rounding, the M - 1 above them v's. A zero
 * word is zero moments in either layout, so zeroing and moving moments is zeroing and moving
 * words. SPLAT_MOMENT_WORDS(flags): words a parameter float of a group with those flags;
 * SPLAT_MOMENT_ROW_WORDS: a Gaussian's words over all groups (model.c checks it against the
 * table). M is one number so that another split of the word is one change (from 10 to 23). */
#define SPLAT_MOMENT_WORDS(flags) ((((flags) & SPLAT_GROUP_FLAG_FLOAT_MOMENTS) != 0u) ? 2u : 1u)
#define SPLAT_MOMENT_ROW_WORDS 63u
#define SPLAT_MOMENT_M_BITS 16u
#define SPLAT_MOMENT_RNG_K 16u

/* gsplat's MCMCStrategy (docs/TRAIN.md, "MCMC"; src/ref/ref_train.h has the reference's names) */
#define SPLAT_MCMC_MIN_OPACITY 0.005
#define SPLAT_MCMC_DEAD_LOGIT -5.293304824724492 /* logit(MIN_OPACITY): dead at or below it */
#define SPLAT_MCMC_N_MAX 51
#define SPLAT_MCMC_NOISE_T 0.005
#define SPLAT_MCMC_NOISE_K 100.0
#define SPLAT_MCMC_OPACITY_REG 0.01
#define SPLAT_MCMC_SCALE_REG 0.01
#define SPLAT_MCMC_K_RELOCATE 6u     /* the counter k of the samples of the relocation and of the adding */
#define SPLAT_MCMC_K_ADD 7u
#define SPLAT_MCMC_BIN_SCALE 128.0   /* the weight table: logit bins of 1/128 over [-16, 16) */
#define SPLAT_MCMC_BINS 4096

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
    f32 noise_scale;         /* the MCMC strategy's position noise after this step's Adam (0: none here) */
    f32 scale_reg;           /* the MCMC strategy's scale regulariser, 0.01 per gsplat world unit (mcmc_reg) */
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

/* Push constants of the MCMC kernels (each says which fields it reads). */
SPLAT_STRUCT(splat_mcmc_push)
{
    u32 slot;                /* noise, regularisers: the ring slot */
    u32 n;                   /* threads (rows, or samples) */
    u32 rows;                /* Gaussians before the refine adds */
    u32 seed;                /* the run's seed ^ step (samples); the run's seed (noise from a slot) */
    u32 mode;                /* MCMC_MODE_* */
    u32 shift;               /* weights: max(1, table >> shift) */
    u32 step;                /* noise without a slot: the step */
    f32 scale;               /* noise without a slot: its scale */
};

#define MCMC_MODE_RELOCATE 0u    /* weights, sample, relocate, move: the relocation of the dead */
#define MCMC_MODE_ADD 1u         /* ... the adding */
#define MCMC_MODE_SLOT 0u        /* noise: step and scale from the ring slot, skipped behind a closed gate */
#define MCMC_MODE_PUSH 1u        /* noise: from the push constants */

/* Push constants of densify_apply: which outputs a pass writes (bit g: the parameters of group g,
 * bit SPLAT_APPLY_MOMENTS + g: its moments); the others are left alone, so the new arrays can be
 * written, and the old ones freed, a few groups at a time. append_at nonzero: in place (the
 * arrays have room): only the new rows (clones, split children) are written, in their order,
 * from row append_at (the old count) on; densify_compact then closes the gaps. */
#define SPLAT_APPLY_MOMENTS 8
SPLAT_STRUCT(splat_apply_push)
{
    u32 n;
    u32 seed;    /* the run seed ^ step */
    u32 outputs;
    u32 append_at;
};

/* Push constants of densify_compact: rows [first, first + rows) of the n + new rows left by an in
 * place densify_apply, phase 0 (the chunk's survivors into the scratch, in order) or 1 (the
 * scratch to their final rows). Row i < n survives where keep[i] != 0, at off_keep[i]; the new
 * rows i >= n all survive, at total_keep + i - n. */
SPLAT_STRUCT(splat_compact_push)
{
    u32 n;
    u32 first;
    u32 rows;
    u32 phase;
};

/* Push constants of densify_rank and densify_budget: the decisions' inputs as in splat_train_push
 * (densify_budget re-decides a cut split's parent), and how many of the growth candidates, in
 * rank order, are made. */
SPLAT_STRUCT(splat_budget_push)
{
    u32 n;
    f32 scene_scale;
    u32 step;
    u32 flags;
    u32 made;
    u32 pad[3];
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

/* densify_rank.comp */
#define DENSIFY_RANK_STATS 0
#define DENSIFY_RANK_CLONE 1
#define DENSIFY_RANK_SPLIT 2
#define DENSIFY_RANK_KEYS 3
#define DENSIFY_RANK_ROWS 4
#define DENSIFY_RANK_BINDINGS 5

/* densify_budget.comp */
#define DENSIFY_BUDGET_SCALES 0
#define DENSIFY_BUDGET_OPACITIES 1
#define DENSIFY_BUDGET_KEEP 2
#define DENSIFY_BUDGET_CLONE 3
#define DENSIFY_BUDGET_SPLIT 4
#define DENSIFY_BUDGET_KEYS 5
#define DENSIFY_BUDGET_ROWS 6
#define DENSIFY_BUDGET_BINDINGS 7

/* mcmc_weights.comp */
#define MCMC_WEIGHTS_OPACITIES 0
#define MCMC_WEIGHTS_TABLE 1
#define MCMC_WEIGHTS_DEAD 2
#define MCMC_WEIGHTS_WEIGHTS 3
#define MCMC_WEIGHTS_COUNTS 4
#define MCMC_WEIGHTS_BINDINGS 5

/* mcmc_sample.comp */
#define MCMC_SAMPLE_DEAD 0
#define MCMC_SAMPLE_OFF_DEAD 1
#define MCMC_SAMPLE_OFF_WEIGHTS 2
#define MCMC_SAMPLE_TOTAL 3
#define MCMC_SAMPLE_SRC 4
#define MCMC_SAMPLE_COUNTS 5
#define MCMC_SAMPLE_BINDINGS 6

/* mcmc_relocate.comp: the samples' counts, opacities and log-scales, every group's moments */
#define MCMC_RELOCATE_COUNTS 0
#define MCMC_RELOCATE_OPACITIES 1
#define MCMC_RELOCATE_SCALES 2
#define MCMC_RELOCATE_MOMENTS 3
#define MCMC_RELOCATE_BINDINGS (MCMC_RELOCATE_MOMENTS + SPLAT_GROUP_COUNT)

/* mcmc_move.comp: the samples, then every group's parameters and moments */
#define MCMC_MOVE_DEAD 0
#define MCMC_MOVE_SRC 1
#define MCMC_MOVE_TOTAL 2
#define MCMC_MOVE_PARAMS 3
#define MCMC_MOVE_MOMENTS (MCMC_MOVE_PARAMS + SPLAT_GROUP_COUNT)
#define MCMC_MOVE_BINDINGS (MCMC_MOVE_MOMENTS + SPLAT_GROUP_COUNT)

/* mcmc_noise.comp */
#define MCMC_NOISE_SLOTS 0
#define MCMC_NOISE_GATE 1
#define MCMC_NOISE_MEANS 2
#define MCMC_NOISE_SCALES 3
#define MCMC_NOISE_QUATS 4
#define MCMC_NOISE_OPACITIES 5
#define MCMC_NOISE_BINDINGS 6

/* mcmc_reg.comp */
#define MCMC_REG_SLOTS 0
#define MCMC_REG_OPACITIES 1
#define MCMC_REG_SCALES 2
#define MCMC_REG_GRAD_OPACITIES 3
#define MCMC_REG_GRAD_SCALES 4
#define MCMC_REG_BINDINGS 5

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
#define ADAM_VISIBLE (ADAM_MOMENTS + SPLAT_GROUP_COUNT)
#define ADAM_BINDINGS (ADAM_VISIBLE + 1)
/* adam's push flags: only the Gaussians this step rendered (radius not 0) move */
#define SPLAT_ADAM_SELECTIVE 1u
/* Adam's threads per Gaussian: one per element of every group but SH, one per quad of SH's 48 */
#define SPLAT_ADAM_THREADS (SPLAT_PARAM_FLOATS - 48 + 12)

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

/* densify_compact.comp: the survivors' decisions and scan, every group's rows and moments, and a
 * scratch of splat_compact_push.rows rows of SPLAT_PARAM_FLOATS + SPLAT_MOMENT_ROW_WORDS words */
#define DENSIFY_COMPACT_TOTALS 0
#define DENSIFY_COMPACT_OFF_KEEP 1
#define DENSIFY_COMPACT_KEEP 2
#define DENSIFY_COMPACT_SCRATCH 3
#define DENSIFY_COMPACT_PARAMS 4
#define DENSIFY_COMPACT_MOMENTS (DENSIFY_COMPACT_PARAMS + SPLAT_GROUP_COUNT)
#define DENSIFY_COMPACT_BINDINGS (DENSIFY_COMPACT_MOMENTS + SPLAT_GROUP_COUNT)

#undef u32
#undef f32
#endif
