/* train: the densification strategy, the one place that adds and removes Gaussians.
 *
 * The loop (ring.c) knows a strategy only through these operations, chosen by
 * splat_train_desc.strategy (splat__strategy_ops). After submitting step s it asks due(s); when
 * due, it retires every iteration in flight (so the parameters are current) and calls run(s).
 * When run reports `resized` (the count, or the arrays, changed), the loop makes room in the
 * per-Gaussian buffers, restarts the statistics and re-records the ring. A strategy that works
 * every step (MCMC) also records into every iteration (record) and fills its fields of each
 * step's ring slot (fill_slot).
 *
 * Another strategy is a new file implementing splat_strategy_ops, a value of splat_strategy in
 * include/splatc.h and a line in splat__strategy_ops (strategy.c); docs/DESIGN.md has the recipe. */
#ifndef SPLAT_TRAIN_STRATEGY_H
#define SPLAT_TRAIN_STRATEGY_H

#include "train/train.h"

/* What a strategy records into each training iteration (splat_strategy_ops.record). */
typedef struct splat_strategy_rec {
    splat_view slots;                /* [ring] splat_train_slot: the step, count and the strategy's fields */
    splat_view gate;                 /* uint: nonzero when the iteration's updates are skipped */
    const splat_model *model;
    uint32_t slot;
    uint32_t seed;                   /* the run's seed */
} splat_strategy_rec;

/* What a strategy may use and change. */
typedef struct splat_strategy_ctx {
    splat_gpu *gpu;
    splat_stream *stream;
    const splat_sorter *sorter;      /* the renderer's scan, for compactions */
    splat_model *model;              /* params and moments may be replaced, count changed */
    splat_render_bufs *rb;           /* stats: what the backward accumulated since the last run (the
                                        default strategy's; MCMC reads none and may run with NULL) */
    const splat_train_desc *desc;    /* resolved: the schedule, the seed */
    double scene_scale;
    double world_unit;               /* gsplat's world unit in this world's units (train.h) */
    uint32_t isect_seen;             /* the most intersections a step needed since the last run (0: unknown) */
} splat_strategy_ctx;

struct splat_strategy_ops {
    const char *name;
    /* The backward accumulates the screen-space statistics (project_bwd's STATS variant). */
    bool stats;
    splat_status (*init)(splat_strategy_state **s, splat_gpu *g, splat_error *err);
    void (*free)(splat_strategy_state *s, splat_gpu *g);
    /* Whether run is due after the optimizer step of 0-based step `step`. */
    bool (*due)(const splat_train_desc *desc, uint32_t step);
    /* The host work after step `step`. Sets *resized when the model's count or arrays changed. */
    splat_status (*run)(splat_strategy_state *s, const splat_strategy_ctx *ctx, uint32_t step, bool *resized,
                        splat_error *err);
    /* Optional (NULL: nothing). The initial Gaussians, before they are uploaded (not those of
     * init_ply or init_scene, which are taken as they are): the strategy's initial opacities and
     * scales. */
    void (*prepare)(splat_scene *scene);
    /* Optional. The strategy's fields of the ring slot of training step `step` (noise_scale). */
    void (*fill_slot)(const splat_train_desc *desc, double scene_scale, double world_unit, uint32_t step,
                      splat_train_slot *slot);
    /* Optional. GPU work of every training iteration, recorded by splat__train_record: before Adam,
     * the gradients complete (a regulariser's), and after it (a noise). */
    void (*record)(splat_strategy_state *s, splat_cmd *c, const splat_strategy_rec *r, bool after_adam);
};

/* gsplat's default strategy (strategy_default.c) and its MCMCStrategy (strategy_mcmc.c). */
extern const splat_strategy_ops splat__strategy_default;
extern const splat_strategy_ops splat__strategy_mcmc;

/* The strategy `kind` names, or NULL for an unknown value. */
const splat_strategy_ops *splat__strategy_ops(splat_strategy kind);

/* The most Gaussians the model can grow to from `count` within the device's free memory
 * (splat__gpu_mem_available), UINT32_MAX when that is not known. A strategy grows by writing the
 * arrays anew a few at a time: `passes` lists which, in order, as densify_apply's bits (group g of
 * the parameters, SPLAT_APPLY_MOMENTS + g of the moments); each pass holds its new buffers beside
 * the old ones, which it frees after. The gradients are freed first and, like the render's
 * per-Gaussian buffers, come back at 1.25 times the count (splat__model_fit). The intersections a
 * step needs (ctx->isect_seen) are expected to grow with the count, and their buffers, once too
 * small, to half as much again. 1/32 of the device's memory (or of
 * SPLAT_MEM_LIMIT) is kept back for what the estimate leaves out: the viewer's snapshots, the
 * evaluation's renders, the strategy's scratch. */
uint32_t splat__strategy_memory_fit(const splat_strategy_ctx *ctx, const uint32_t *passes, size_t n_passes,
                                    uint32_t count);

/* ------------------------------------------------ the default strategy, for its tests */

/* Densification scratch: per-Gaussian decisions and their scans. */
typedef struct splat_densify_bufs {
    uint32_t capacity;
    splat_buf keep, clone, split;             /* [cap] */
    splat_buf off_keep, off_clone, off_split; /* [cap] exclusive scans */
    splat_buf tot_keep, tot_clone, tot_split; /* uint each (separate: views must be aligned) */
    splat_buf totals;                          /* 3 uint for densify_apply */
    splat_buf info;                            /* clone and split decisions before pruning */
    splat_buf scan_scratch;
    splat_buf readback;                        /* totals + info, host-visible */
    /* a budget's ranking (made the first time a budget binds): sort keys, rows, sort scratch */
    splat_buf rank_keys, rank_rows, sort_scratch;
    splat_buf compact;                         /* densify_compact's scratch (made by the first refine in place) */
    uint32_t compact_rows;                     /* the rows it holds */
} splat_densify_bufs;

typedef struct splat_densify_pipes {
    splat_pipe mark, apply, compact, opacity_reset, rank, budget;
} splat_densify_pipes;

/* Rows densify_compact moves at a time in a refine in place (0: the default, 65,536); tests set
 * fewer, to cross chunk boundaries. */
extern uint32_t splat__densify_compact_rows;

splat_status splat__densify_pipes_init(splat_gpu *g, splat_densify_pipes *p, splat_error *err);
void splat__densify_pipes_free(splat_gpu *g, splat_densify_pipes *p);
void splat__densify_bufs_free(splat_gpu *g, splat_densify_bufs *d);

/* One refine on the GPU: decisions, scans, and the moves. Where the arrays have room for the old
 * rows and the new ones (capacity), the refine happens in place: densify_apply writes the new
 * rows after the old ones and densify_compact closes the gaps, with no allocation, no free and one
 * wait; the gradients stay. Otherwise new arrays replace *params and *moments, with room for the
 * next refines where the device reports its free memory and plenty is free (docs/TRAIN.md,
 * "Where the rows go on the GPU"), and the gradients are freed. Waits for
 * the GPU once to learn the new count, and once more when the budget cuts (densify_rank, the
 * sort, densify_budget, and the scans again). */
typedef struct splat_densify_job {
    splat_gpu *gpu;
    splat_stream *stream;
    const splat_sorter *sorter;
    const splat_densify_pipes *pipes;
    splat_densify_bufs *bufs;          /* scratch, grown as needed */
    splat_scene_gpu *params, *moments; /* replaced */
    splat_scene_gpu *grads;            /* freed (unless in place), or NULL; the caller reallocates them for the new count */
    const splat_buf *stats;            /* [count,4] grad2d sum, count, .. */
    uint32_t count;
    uint32_t step, seed;               /* seed: the run's seed ^ step */
    float scene_scale;
    uint32_t prune_large_after;        /* the large-scale prune applies after this step (the reset period) */
    uint32_t max_count;                /* the budget (docs/TRAIN.md, "A budget"); UINT32_MAX: none */
    /* the trainer's, to bound the growth by the device's free memory (splat__strategy_memory_fit);
     * NULL: no such bound */
    const splat_strategy_ctx *memory;
} splat_densify_job;

typedef struct splat_densify_result {
    uint32_t count;                    /* Gaussians after the refine */
    uint32_t clones, splits, pruned;   /* decisions made (pruned counts rows of the grown set) */
    uint32_t clones_cut, splits_cut;   /* surviving clones and splits the budget did not make */
    /* The count the device's memory allowed, where it bound (0: it did not); the refine was
     * skipped, the model left as it was, when not even its survivors fit. */
    uint32_t memory_cap;
    bool skipped;
    bool in_place;                     /* the arrays had room: moved in place (see above) */
} splat_densify_result;

splat_status splat__densify_run(splat_densify_job *job, splat_densify_result *res, splat_error *err);

/* Records the opacity reset of rows [0, n): opacity = min(opacity, 0.01), its moments zeroed. */
void splat__opacity_reset_record(splat_cmd *c, const splat_densify_pipes *p, const splat_scene_gpu *params,
                                 const splat_scene_gpu *moments, uint32_t n);

/* ------------------------------------------------ the MCMC strategy, for its tests */

typedef struct splat_mcmc_pipes {
    splat_pipe weights, sample, relocate, move, noise, reg;
} splat_mcmc_pipes;

/* MCMC scratch: flags, weights, their scans, the samples and their counts. */
typedef struct splat_mcmc_bufs {
    uint32_t capacity;
    splat_buf table;                           /* [SPLAT_MCMC_BINS] floor(65536 sigmoid(bin centre)) */
    splat_buf dead, weights, counts, src;      /* [cap] */
    splat_buf off_dead, off_weights;           /* [cap] exclusive scans */
    splat_buf tot_dead, tot_weights;           /* uint each */
    splat_buf scan_scratch;
    splat_buf readback;                        /* dead, the relocation's total weight */
} splat_mcmc_bufs;

splat_status splat__mcmc_pipes_init(splat_gpu *g, splat_mcmc_pipes *p, splat_error *err);
void splat__mcmc_pipes_free(splat_gpu *g, splat_mcmc_pipes *p);
/* The weight table is uploaded here (a wait); the rest grows with the model. */
splat_status splat__mcmc_bufs_init(splat_gpu *g, splat_mcmc_bufs *b, splat_error *err);
void splat__mcmc_bufs_free(splat_gpu *g, splat_mcmc_bufs *b);

/* One MCMC refine on the GPU (docs/TRAIN.md, "MCMC"): the relocation of the dead, the adding up to
 * the cap (new arrays, which replace *params and *moments), then the step's noise when noise_scale
 * is not 0. Waits for the GPU once. */
typedef struct splat_mcmc_job {
    splat_gpu *gpu;
    splat_stream *stream;
    const splat_sorter *sorter;
    const splat_mcmc_pipes *pipes;
    splat_mcmc_bufs *bufs;             /* scratch, grown as needed */
    splat_scene_gpu *params, *moments; /* their buffers replaced when Gaussians are added */
    splat_scene_gpu *grads;            /* or NULL: freed when Gaussians are added (the trainer
                                          reallocates them; the next backward rewrites every row) */
    uint32_t count, cap;
    uint32_t seed;                     /* the run's seed ^ step */
    float noise_scale;
} splat_mcmc_job;

typedef struct splat_mcmc_result {
    uint32_t count;                    /* Gaussians after the refine */
    uint32_t dead, relocated, added;
    bool skipped;                      /* its scratch did not fit beside the model: nothing done */
} splat_mcmc_result;

splat_status splat__mcmc_refine(splat_mcmc_job *job, splat_mcmc_result *res, splat_error *err);

/* Records eq. 9 of rows [0, n) whose count [n] of samples is not 0 (the relocation's and the
 * adding's kernel), zeroing their moments when `zero_moments`. */
void splat__mcmc_relocate_record(splat_cmd *c, const splat_mcmc_pipes *p, splat_view counts, const splat_scene_gpu *params,
                                 const splat_scene_gpu *moments, uint32_t n, bool zero_moments);
/* Records the noise of step `step` on rows [0, n) (MCMC_MODE_PUSH): the generator's seed is
 * seed ^ step (seed the run's seed, or the run's seed ^ step with step 0). */
void splat__mcmc_noise_record(splat_cmd *c, const splat_mcmc_pipes *p, const splat_scene_gpu *params, uint32_t n,
                              uint32_t seed, uint32_t step, float noise_scale);
/* The noise scale of step `step` (the means' learning rate after it, x 5e5). */
double splat__mcmc_noise_scale(double scene_scale, double world_unit, uint32_t step, uint32_t steps);

#endif
