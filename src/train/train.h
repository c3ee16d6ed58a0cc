/* train: the training loop on the GPU (docs/TRAIN.md is the step).
 *
 * Each iteration is one pre-recorded command buffer, replayed: frame_setup -> render forward ->
 * loss_fwd -> loss_bwd -> loss_reduce -> render backward -> adam. What changes per iteration
 * (view, step, learning rates, background) is written by the host into a ring slot before the
 * slot's command buffer is submitted; SPLAT_TRAIN_RING iterations are in flight and the host
 * reads an iteration's report only when it retires it, so no iteration waits for the host.
 * The host waits only at densification (to learn the new count), evaluation and checkpoints. */
#ifndef SPLAT_TRAIN_H
#define SPLAT_TRAIN_H

#include "api/ctx.h"
#include "io/io.h"
#include "render/render.h"
#include "train_types.h"

_Static_assert(sizeof(splat_train_view) == 80, "view layout");
_Static_assert(sizeof(splat_train_slot) == 72, "slot layout");
_Static_assert(sizeof(splat_train_report) == 64, "report layout");
_Static_assert(sizeof(splat_train_push) == 32, "push layout");

#define SPLAT_TRAIN_RING 3

/* Pipelines of the training kernels. */
typedef struct splat_train_pipes {
    splat_pipe frame_setup, loss_fwd, loss_bwd, loss_reduce, adam;
    splat_pipe densify_mark, densify_apply, opacity_reset;
} splat_train_pipes;

splat_status splat__train_pipes_init(splat_gpu *g, splat_train_pipes *p, splat_error *err);
void splat__train_pipes_free(splat_gpu *g, splat_train_pipes *p);

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
} splat_densify_bufs;

struct splat_trainer {
    splat_ctx *ctx;
    splat_gpu *g;
    splat_train_desc desc;
    char *data_path;
    splat_dataset ds;
    uint32_t *train_views, n_train;          /* indices into ds.views */
    uint32_t *test_views, n_test;
    double scene_scale;
    uint32_t steps, step, sh_max;
    uint32_t refine_start, refine_every, refine_stop, reset_every;
    float background[3];
    uint32_t max_w, max_h;

    /* images: resident in one device buffer, or streamed through per-slot host-visible buffers */
    bool streamed;
    splat_image *host_images;                 /* [ds.n_views] (streamed mode keeps them; else only test views) */
    splat_buf views;                          /* [ds.n_views] splat_train_view */
    splat_buf images;                         /* resident: packed RGBA8 of the training views */
    splat_buf slot_images[SPLAT_TRAIN_RING + 1]; /* streamed (and evaluation): one view's pixels */
    splat_buf slots;                          /* [RING+1] splat_train_slot, host-written */
    splat_buf reports;                        /* [RING+1] splat_train_report, host-read */
    uint64_t report_stride;

    /* the Gaussians */
    uint32_t count;
    splat_scene_gpu params, grads;
    splat_scene_gpu moments;                  /* Adam m and v: the scene layout with 2 rows per Gaussian */
    splat_render_bufs rb;
    splat_buf maps;                           /* [H,W,3] vec4: SSIM derivative maps */
    splat_buf parts;                          /* [loss groups] vec4 */
    uint32_t loss_groups_x, loss_groups_y;
    splat_densify_bufs dens;

    splat_train_pipes pipes;
    splat_rec rec[SPLAT_TRAIN_RING];
    bool recorded;
    uint64_t inflight[SPLAT_TRAIN_RING];      /* submission value of each slot's iteration, 0 none */
    uint32_t inflight_step[SPLAT_TRAIN_RING];

    /* profiling: per-slot timestamps, summed per stage label */
    splat_prof prof[SPLAT_TRAIN_RING];
    bool profiling;
    const char *stage_name[SPLAT_PROF_MAX];
    double stage_ms[SPLAT_PROF_MAX];
    uint32_t n_stages, n_profiled;

    /* progress */
    splat_train_progress prog;
    double t_start, t_last_progress;
    uint32_t step_start;
    uint32_t n_densify;
};

/* The order of training views is a fresh permutation every epoch, from the run's seed. */
uint32_t splat__train_view_of_step(const splat_trainer *t, uint32_t step);

/* One refine on the GPU (src/train/densify.c): decisions, scans, and the moves into new
 * parameter and moment arrays, which replace *params and *moments. Waits for the GPU once to
 * learn the new count. */
typedef struct splat_densify_job {
    splat_gpu *gpu;
    splat_stream *stream;
    const splat_sorter *sorter;
    const splat_train_pipes *pipes;
    splat_densify_bufs *bufs;         /* scratch, grown as needed */
    splat_scene_gpu *params, *moments; /* replaced */
    const splat_buf *stats;           /* [count,4] grad2d sum, count, .. */
    uint32_t count;
    uint32_t step, seed;              /* seed: the run's seed ^ step */
    float scene_scale;
    uint32_t prune_large_after;       /* the large-scale prune applies after this step (the reset period) */
} splat_densify_job;

typedef struct splat_densify_result {
    uint32_t count;                   /* Gaussians after the refine */
    uint32_t clones, splits, pruned;  /* decisions (pruned counts rows of the grown set) */
} splat_densify_result;

splat_status splat__densify_run(splat_densify_job *job, splat_densify_result *res, splat_error *err);
splat_status splat__densify(splat_trainer *t, uint32_t step, splat_error *err);
splat_status splat__opacity_reset(splat_trainer *t, splat_error *err);
void splat__densify_bufs_free(splat_gpu *g, splat_densify_bufs *d);

/* Records an iteration's kernels into `c` for ring slot `slot`: with backward (training) or
 * without (evaluation: forward and loss sums only). `pixels` is where the loss finds the
 * ground truth. */
void splat__train_record(splat_trainer *t, splat_cmd *c, uint32_t slot, bool backward, const splat_buf *pixels);
/* (Re-)records the ring's command buffers after buffers changed. */
splat_status splat__train_rerecord(splat_trainer *t, splat_error *err);
/* Waits for every iteration in flight and processes its report, then for all other submitted work. */
splat_status splat__train_drain(splat_trainer *t, splat_error *err);

#endif
