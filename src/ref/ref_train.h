/* ref: the CPU reference of the training step (docs/TRAIN.md): the loss and its gradient, one
 * Adam step, the learning-rate and SH-degree schedules, densification (refine, opacity reset)
 * and the counter-based generator of the split samples. Double precision, single-threaded and
 * simple, like the rest of src/ref: an oracle for the GPU kernels, never a fast path. Written
 * from docs/TRAIN.md, never from the shaders.
 *
 * Where TRAIN.md leaves a detail open, the reference does what gsplat 1.x simple_trainer with
 * DefaultStrategy does; each such place says so. */
#ifndef SPLAT_REF_TRAIN_H
#define SPLAT_REF_TRAIN_H

#include "core/core.h"

/* ------------------------------------------------------------------------------ loss */

#define SPLAT_REF_LAMBDA 0.2          /* default weight of the (1 - SSIM) term */
#define SPLAT_REF_SSIM_WIN 11         /* window size */
#define SPLAT_REF_SSIM_SIGMA 1.5
#define SPLAT_REF_SSIM_C1 (0.01 * 0.01)
#define SPLAT_REF_SSIM_C2 (0.03 * 0.03)

typedef struct splat_ref_loss_value {
    double loss;             /* (1 - lambda) l1 + lambda (1 - ssim) */
    double l1;               /* mean |x - y| over H*W*3 */
    /* Mean of the per-window SSIM over the (H-10)(W-10) valid positions and 3 channels; 1 when
     * the image is smaller than 11 in either dimension (no valid position). */
    double ssim;
    double mse;              /* mean (clamp(x, 0, 1) - y)^2 (over the pixels that count, with a mask) */
    double psnr;             /* -10 log10(mse), +inf when mse == 0 */
    double mse_full, psnr_full; /* the same over every pixel, mask or not */
} splat_ref_loss_value;

/* The loss of docs/TRAIN.md. x (rendered), y (ground truth): [H,W,3]; out: filled; d_x: [H,W,3]
 * or NULL, overwritten with dL/dx (the L1 derivative is 0 where x == y, as torch's sign).
 * No allocation: window sums are evaluated directly (O(H W 121)). w, h >= 1. */
void splat__ref_loss(const float *x, const float *y, uint32_t w, uint32_t h, double lambda,
                    splat_ref_loss_value *out, double *d_x);
/* The loss with a mask (docs/TRAIN.md, "With a mask"): mask [H,W], nonzero where the pixel counts
 * (NULL: every pixel counts, splat__ref_loss). L1, MSE and PSNR over the pixels that count, SSIM
 * on m x and m y over the valid windows whose centre counts; loss 0 when nothing counts. */
void splat__ref_loss_masked(const float *x, const float *y, const uint8_t *mask, uint32_t w, uint32_t h, double lambda,
                            splat_ref_loss_value *out, double *d_x);
/* The same in double, for finite differences at inputs float cannot hold. */
void splat__ref_loss_double(const double *x, const double *y, uint32_t w, uint32_t h, double lambda,
                           splat_ref_loss_value *out, double *d_x);

/* ------------------------------------------------------------------------------ Adam */

#define SPLAT_REF_ADAM_B1 0.9
#define SPLAT_REF_ADAM_B2 0.999
#define SPLAT_REF_ADAM_EPS 1e-15

/* Learning rates of the parameter groups (the means' rate is splat__ref_means_lr). */
#define SPLAT_REF_LR_MEANS 1.6e-4     /* times scene_scale, decayed to 1 % over the run */
#define SPLAT_REF_LR_SCALES 5e-3
#define SPLAT_REF_LR_QUATS 1e-3
#define SPLAT_REF_LR_OPACITIES 5e-2
#define SPLAT_REF_LR_SH0 2.5e-3
#define SPLAT_REF_LR_SHN (2.5e-3 / 20)

/* One Adam step (torch.optim.Adam, no weight decay) of one group of n elements, in place:
 * p, m, v: [n] parameters and first / second moments, updated; g: [n] gradients; t: the global
 * step, 1-based (bias correction 1 - b^t uses it even for moments that were just zeroed by a
 * refine or an opacity reset, as torch does: densification does not reset the step). t >= 1. */
void splat__ref_adam(uint64_t n, double *p, const double *g, double *m, double *v, double lr, uint32_t t);

/* The means' learning rate at 0-based step `step`: 1.6e-4 scene_scale 0.01^(step / max_steps)
 * (gsplat's ExponentialLR with gamma = 0.01^(1 / max_steps), stepped `step` times). */
double splat__ref_means_lr(double scene_scale, uint32_t step, uint32_t max_steps);
/* The active SH degree at 0-based step `step`: min(step / 1000, max_degree). */
uint32_t splat__ref_sh_degree(uint32_t step, uint32_t max_degree);

/* ------------------------------------------------------------------- densification */

#define SPLAT_REF_REFINE_START 500    /* refine when step > START ... */
#define SPLAT_REF_REFINE_STOP 15000   /* ... and step < STOP ... */
#define SPLAT_REF_REFINE_EVERY 100    /* ... and step % EVERY == 0 */
#define SPLAT_REF_RESET_EVERY 3000    /* opacity reset when step % EVERY == 0, 0 < step < STOP */
#define SPLAT_REF_GROW_GRAD2D 0.0002  /* avg grad2d > this: high gradient */
#define SPLAT_REF_GROW_SCALE3D 0.01   /* max scale <= this * scene_scale: small (clone, not split) */
#define SPLAT_REF_PRUNE_OPA 0.005     /* sigmoid(opacity) < this: pruned */
#define SPLAT_REF_PRUNE_SCALE3D 0.1   /* max scale > this * scene_scale: pruned when step > RESET_EVERY */
#define SPLAT_REF_SPLIT_SHRINK 1.6    /* split children's scale = parent's / 1.6 */
#define SPLAT_REF_RESET_OPA 0.01      /* opacity reset: opacity = min(opacity, logit(0.01)) */

/* Whether the densification of docs/TRAIN.md refines / resets opacities after the optimizer
 * step of 0-based step `step`. At a step where both are due, refine comes first. */
bool splat__ref_refine_due(uint32_t step);
bool splat__ref_reset_due(uint32_t step);

/* Where a row of a refined scene comes from. */
typedef enum splat_ref_row_kind {
    SPLAT_REF_ROW_KEPT = 0,   /* an existing Gaussian that was not split (its Adam moments move with it) */
    SPLAT_REF_ROW_CLONE,      /* the copy of a cloned Gaussian (zero moments) */
    SPLAT_REF_ROW_SPLIT0,     /* first child of a split Gaussian (zero moments) */
    SPLAT_REF_ROW_SPLIT1,     /* second child (zero moments) */
} splat_ref_row_kind;

typedef struct splat_ref_refine_out {
    splat_scene scene;        /* the refined scene: count rows, sh_degree of the input */
    uint32_t *src;            /* [scene.count] the input row each output row comes from */
    uint8_t *kind;            /* [scene.count] splat_ref_row_kind */
    uint32_t n_clone;         /* Gaussians cloned (high gradient, small) */
    uint32_t n_split;         /* Gaussians split (high gradient, not small) */
    /* Gaussians pruned among the N + n_clone + n_split of the grown scene (new ones included);
     * scene.count = N + n_clone + n_split - n_prune. */
    uint32_t n_prune;
} splat_ref_refine_out;

/* One refine of docs/TRAIN.md ("Densification", step 1) at 0-based step `step`; the caller
 * decides whether one is due (splat__ref_refine_due). in: the scene after the optimizer step;
 * grad2d, count: [in->count] the accumulated statistics; the random samples of the split of
 * input row i use seed run_seed ^ step (splat__ref_split_normals). Rows of out->scene are in
 * TRAIN.md's order: surviving non-split rows in input order, then the clones in source order,
 * then every first split child, then every second one (pruned rows left out). Clone and kept
 * rows are bit-exact copies; split children are computed in double and rounded once.
 * out is initialised here; free it with splat__ref_refine_out_free (also after a failure).
 * Fails only for lack of host memory. Resetting the statistics and moving the Adam moments
 * (by src and kind) are the caller's. */
splat_status splat__ref_refine(const splat_scene *in, const float *grad2d, const float *count, uint32_t step,
                              double scene_scale, uint32_t run_seed, splat_ref_refine_out *out,
                              splat_error *err);
/* The same under a budget (docs/TRAIN.md, "A budget"): the refine makes at most max_count Gaussians.
 * When the unbudgeted refine would make more, only the first clones in source order (among those
 * whose source survives the prune) and then only the first splits in source order (among those
 * whose children survive it) are made, as many as fit: with base = the surviving unsplit rows +
 * those splits, clones made = min(clones, max_count - base) and splits made = min(splits, what is
 * left), both 0 when base >= max_count. A split not made leaves its Gaussian unsplit (kept, unless
 * the prune removes it). n_clone and n_split count the decisions made (clones of pruned sources
 * and splits with pruned children included, as without a budget). max_count UINT32_MAX: no
 * budget, splat__ref_refine. */
splat_status splat__ref_refine_budget(const splat_scene *in, const float *grad2d, const float *count, uint32_t step,
                                      double scene_scale, uint32_t run_seed, uint32_t max_count,
                                      splat_ref_refine_out *out, splat_error *err);
void splat__ref_refine_out_free(splat_ref_refine_out *out);

/* Opacity reset, in place: opacity logit = min(logit, (float)logit(0.01)) for rows
 * [0, count). Zeroing the opacity group's Adam moments is the caller's. */
void splat__ref_opacity_reset(splat_scene *s);

/* ----------------------------------------------------- counter-based random numbers */

/* The PCG output hash of docs/TRAIN.md ("The random samples of a split"). */
uint32_t splat__ref_hash(uint32_t x);
/* (hash(hash(hash(seed) ^ i) ^ k) >> 8) 2^-24 + 2^-25: in (0, 1), exact in double. */
double splat__ref_uniform(uint32_t seed, uint32_t i, uint32_t k);
/* The six standard normals of the split of row i under seed (= run_seed ^ step): out[2j] and
 * out[2j+1] are the Box-Muller pair j from uniform(seed, i, 2j), uniform(seed, i, 2j+1).
 * Child c uses out[3c .. 3c+2]. out: [6]. */
void splat__ref_split_normals(uint32_t seed, uint32_t i, double out[6]);

#endif
