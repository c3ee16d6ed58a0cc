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

/* The stored moments of docs/TRAIN.md ("Adam's moments in 16 bits"), m taking m_bits of the word
 * (M, 10 to 23; 16 there): m on the grid of M - 8 significant bits (a bfloat16 at 16), v >= 0 on
 * the grid of 25 - M, each rounded from the exact value by the 32-bit word r: away from zero when
 * the value's fraction of the grid's spacing beyond the grid point below, plus r's share (m: r
 * mod 2^(32 - M) over 2^(32 - M); v: the next M - 1 bits of r over 2^(M - 1)), reaches 1, towards
 * zero otherwise. *margin: the distance of the nearer of the two sums from 1, in units of the
 * spacing, so that a caller knows when a value computed in float, with its own error, may round
 * the other way. Normal floats' range only (no subnormals, no overflow). */
void splat__ref_moments_round(double m, double v, uint32_t r, int m_bits, double *m16, double *v16, double *margin);

/* The word that rounds element i of parameter group `group` at 0-based step `step`:
 * splat__ref_word(step, i, 16 + 4 group) for the groups stepped an element at a time;
 * for SH (`sh`), element i is element i % 4 of quad i / 4: splat__ref_word(step, i / 4, 16 + 4
 * group + i % 4). */
uint32_t splat__ref_moments_word(uint32_t step, uint64_t i, uint32_t group, bool sh);

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
 * When the unbudgeted refine would make more, the candidates (clones whose source survives the
 * prune, splits whose children survive it) are ranked by the statistic grad2d / max(count, 1)
 * computed in float, largest first, ties by the lower row, and only the first max_count - base
 * are made (none when base >= max_count), base = the surviving unsplit rows + the candidate
 * splits. A split not made leaves its Gaussian unsplit (kept, unless the prune removes it).
 * n_clone and n_split count the decisions made (clones of pruned sources and splits with pruned
 * children included, as without a budget). max_count UINT32_MAX: no budget, splat__ref_refine. */
splat_status splat__ref_refine_budget(const splat_scene *in, const float *grad2d, const float *count, uint32_t step,
                                      double scene_scale, uint32_t run_seed, uint32_t max_count,
                                      splat_ref_refine_out *out, splat_error *err);
void splat__ref_refine_out_free(splat_ref_refine_out *out);

/* Opacity reset, in place: opacity logit = min(logit, (float)logit(0.01)) for rows
 * [0, count). Zeroing the opacity group's Adam moments is the caller's. */
void splat__ref_opacity_reset(splat_scene *s);

/* ------------------------------------------------------------------------ MCMC */

/* gsplat's MCMCStrategy (docs/TRAIN.md, "MCMC"), with the settings of simple_trainer's `mcmc`. */
#define SPLAT_REF_MCMC_REFINE_STOP 25000  /* refine when START < step < STOP, step % EVERY == 0 (as above) */
#define SPLAT_REF_MCMC_CAP 1000000        /* cap_max */
#define SPLAT_REF_MCMC_MIN_OPACITY 0.005  /* dead: opacity <= this; the relocation's lower clamp */
#define SPLAT_REF_MCMC_N_MAX 51           /* the relocation's ratios are clamped to [1, N_MAX] */
#define SPLAT_REF_MCMC_GROWTH 1.05        /* each refine adds min(cap, int(1.05 N)) - N */
#define SPLAT_REF_MCMC_NOISE_LR 5e5       /* the noise's scale: means' learning rate x this */
#define SPLAT_REF_MCMC_NOISE_T 0.005      /* the noise's opacity gate sigmoid(-K (opacity - T)) */
#define SPLAT_REF_MCMC_NOISE_K 100.0
#define SPLAT_REF_MCMC_OPACITY_REG 0.01   /* loss += OPACITY_REG mean(opacity) + SCALE_REG mean(exp(log_scale)) */
#define SPLAT_REF_MCMC_SCALE_REG 0.01
#define SPLAT_REF_MCMC_INIT_OPACITY 0.5   /* initial opacity, and initial scale x INIT_SCALE */
#define SPLAT_REF_MCMC_INIT_SCALE 0.1
#define SPLAT_REF_MCMC_K_RELOCATE 6u      /* the counter k of the relocation's samples, and of the adding's */
#define SPLAT_REF_MCMC_K_ADD 7u

/* Equation 9 of "3D Gaussian Splatting as Markov Chain Monte Carlo" as gsplat evaluates it: a
 * Gaussian of `opacity` (in (0, 1)) and `scale` [3] that becomes `ratio` Gaussians (ratio clamped
 * to [1, N_MAX]) gets new_opacity = clamp(1 - (1 - opacity)^(1 / ratio), MIN_OPACITY, 1 - 2^-23)
 * and new_scale = scale * opacity / sum_{i=1..ratio} sum_{k=0..i-1} C(i-1, k) (-1)^k
 * new_opacity^(k+1) / sqrt(k+1). *cond (may be NULL) receives the sum of the terms' magnitudes
 * over the sum: how much float rounding of the terms the result magnifies. */
void splat__ref_mcmc_relocation(double opacity, const double scale[3], uint32_t ratio, double *new_opacity,
                                double new_scale[3], double *cond);

/* The sampling weight of a Gaussian of opacity logit `logit` (docs/TRAIN.md, "MCMC: sampling"):
 * max(1, floor(65536 sigmoid(c)) >> shift), c the centre of the logit's bin of width 1/128 (bins
 * clamped to [-16, 16)). */
uint32_t splat__ref_mcmc_weight(float logit, uint32_t shift);
/* The shift of a model of n Gaussians: the least with n * max(1, 65535 >> shift) <= 2^32 - 1. */
uint32_t splat__ref_mcmc_shift(uint32_t n);
/* Whether a Gaussian is dead: logit <= (float)logit(MIN_OPACITY). */
bool splat__ref_mcmc_dead(float logit);
/* Gaussians an MCMC refine of n adds under `cap`: max(0, min(cap, int(1.05 n)) - n). */
uint32_t splat__ref_mcmc_added(uint32_t n, uint32_t cap);

typedef struct splat_ref_mcmc_out {
    splat_scene scene;        /* count = N + added; sh_degree of the input */
    uint32_t *src;            /* [scene.count] the input row whose means, rotation and SH row r holds */
    uint8_t *zeroed;          /* [scene.count] 1: row r's Adam moments are zero (sampled by the relocation,
                                 or added); 0: they are input row r's */
    uint32_t n_dead;          /* dead Gaussians of the input */
    uint32_t n_relocated;     /* of them relocated (all, or none when no Gaussian is alive) */
    uint32_t n_added;
} splat_ref_mcmc_out;

/* One MCMC refine at 0-based step `step` (the caller decides whether one is due), its two phases
 * (docs/TRAIN.md, "MCMC"), with the samples' words of seed run_seed ^ step:
 * - relocate: every dead Gaussian, in index order, takes a sample of the live ones by weight (k =
 *   K_RELOCATE, counter its rank); each sampled Gaussian takes eq. 9 with ratio = its samples + 1
 *   and zero moments, and the dead rows become copies of their samples; nothing happens when no
 *   Gaussian is alive;
 * - add: `splat__ref_mcmc_added(N, cap)` samples of every Gaussian by weight (k = K_ADD, counter
 *   j), each sampled Gaussian taking eq. 9 (its moments kept), then appended copies of the samples
 *   (zero moments);
 * - refine: relocate, then add (src and zeroed composed).
 * The shift of the weights is that of in->count. The noise of the step is the caller's
 * (splat__ref_mcmc_noise, after this). out is initialised here; free it with
 * splat__ref_mcmc_out_free (also after a failure). Fails only for lack of host memory or past
 * 2^32 - 1 Gaussians. */
splat_status splat__ref_mcmc_relocate(const splat_scene *in, uint32_t step, uint32_t run_seed, splat_ref_mcmc_out *out,
                                      splat_error *err);
splat_status splat__ref_mcmc_add(const splat_scene *in, uint32_t step, uint32_t run_seed, uint32_t cap,
                                 splat_ref_mcmc_out *out, splat_error *err);
splat_status splat__ref_mcmc_refine(const splat_scene *in, uint32_t step, uint32_t run_seed, uint32_t cap,
                                    splat_ref_mcmc_out *out, splat_error *err);
void splat__ref_mcmc_out_free(splat_ref_mcmc_out *out);

/* The means' learning rate after step `step`'s scheduler step, times NOISE_LR: the scale of step
 * `step`'s noise (gsplat passes get_last_lr() after scheduler.step()), in gsplat's normalised
 * world; divided by world_unit^2 for a world whose unit is 1 / world_unit of gsplat's (the noise
 * is a covariance times a learning rate: it scales as a length cubed). */
double splat__ref_mcmc_noise_scale(double scene_scale, double world_unit, uint32_t step, uint32_t max_steps);
/* The position noise of a step, in place on rows [0, count): mean += Sigma (w z), Sigma = R
 * diag(exp(2 log_scale)) R^T (R of the normalised quaternion), w = sigmoid(-K (opacity - T))
 * noise_scale, z = the first three normals of splat__ref_split_normals(seed, i) (seed = run_seed ^
 * step), rounded once to float. */
void splat__ref_mcmc_noise(splat_scene *s, uint32_t seed, double noise_scale);
/* The regularisers: OPACITY_REG mean(sigmoid(logit)) + SCALE_REG mean(exp(log_scale) / world_unit)
 * over the count rows (and 3 axes), the scales measured in gsplat's world unit as gsplat does; with d_logit [count] and d_log_scale [count,3] not NULL, their
 * gradients are written there. */
double splat__ref_mcmc_reg(const splat_scene *s, double world_unit, double *d_logit, double *d_log_scale);

/* ----------------------------------------------------- counter-based random numbers */

/* The PCG output hash of docs/TRAIN.md ("The random samples of a split"). */
uint32_t splat__ref_hash(uint32_t x);
/* (hash(hash(hash(seed) ^ i) ^ k) >> 8) 2^-24 + 2^-25: in (0, 1), exact in double. */
double splat__ref_uniform(uint32_t seed, uint32_t i, uint32_t k);
/* The six standard normals of the split of row i under seed (= run_seed ^ step): out[2j] and
 * out[2j+1] are the Box-Muller pair j from uniform(seed, i, 2j), uniform(seed, i, 2j+1).
 * Child c uses out[3c .. 3c+2]. out: [6]. */
void splat__ref_split_normals(uint32_t seed, uint32_t i, double out[6]);
/* hash(hash(hash(seed) ^ i) ^ k): the 32-bit word of uniform(seed, i, k) before its scaling. */
uint32_t splat__ref_word(uint32_t seed, uint32_t i, uint32_t k);

/* One Gaussian's parameters as a scene stores them (float): what the refine references move. */
typedef struct splat__ref_row {
    float mean[3], log_scale[3], quat[4], opacity, sh[(SPLAT_SH_COEFFS * 3)];
} splat__ref_row;

static inline void splat__ref_load_row(const splat_scene *s, uint32_t i, splat__ref_row *r)
{
    memcpy(r->mean, s->means + (size_t)i * 3, sizeof r->mean);
    memcpy(r->log_scale, s->log_scales + (size_t)i * 3, sizeof r->log_scale);
    memcpy(r->quat, s->quats + (size_t)i * 4, sizeof r->quat);
    r->opacity = s->opacities[i];
    memcpy(r->sh, s->sh + (size_t)i * (SPLAT_SH_COEFFS * 3), sizeof r->sh);
}

static inline void splat__ref_store_row(splat_scene *s, uint32_t i, const splat__ref_row *r)
{
    memcpy(s->means + (size_t)i * 3, r->mean, sizeof r->mean);
    memcpy(s->log_scales + (size_t)i * 3, r->log_scale, sizeof r->log_scale);
    memcpy(s->quats + (size_t)i * 4, r->quat, sizeof r->quat);
    s->opacities[i] = r->opacity;
    memcpy(s->sh + (size_t)i * (SPLAT_SH_COEFFS * 3), r->sh, sizeof r->sh);
}

#endif
