/* train: the training loop on the GPU (docs/TRAIN.md is the step).
 *
 * Each iteration is one pre-recorded command buffer, replayed: frame_setup -> render forward ->
 * loss -> render backward -> adam. What changes per iteration (view, step, learning rates,
 * background) is written by the host into a ring slot before the slot's command buffer is
 * submitted; SPLAT_TRAIN_RING iterations are in flight and the host reads an iteration's report
 * only when it retires it, so no iteration waits for the host. The host waits only when the
 * densification strategy asks for host work, at evaluation and at checkpoints.
 *
 * The trainer is given what it runs on (splat_train_env) and a resolved splat_train_desc (every
 * default filled in by the API layer). Its parts, a file each:
 *
 *   trainer.c           set-up and tear-down, wiring the parts below
 *   images.c            the image store: training images resident in one device buffer, or
 *                       streamed from host memory through the ring slots
 *   model.c             the parameters, gradients and Adam moments (a splat_scene_gpu each, so
 *                       everything loops over the groups of core/params.h): setting a scene,
 *                       making room after the strategy changed the count, the non-finite report
 *   checkpoint.c        the model out (the scene, checkpoints) and back in (resume)
 *   schedule.c          what each step uses: its view, learning rates, SH degree, background
 *   ring.c              the iterations in flight: recording, submitting, retiring, the one
 *                       overflow recovery, the loop and its strategy hook
 *   eval.c              evaluation of held-out views through the render retry path
 *   strategy.h          the densification interface; strategy_default.c is gsplat's default,
 *                       strategy_mcmc.c its MCMCStrategy
 *   init.c              the initial Gaussians
 *   frame_setup.c, loss.c, adam.c   the training stages, with their recording functions
 */
#ifndef SPLAT_TRAIN_H
#define SPLAT_TRAIN_H

#include <stdatomic.h>

#include "io/io.h"
#include "render/render.h"
#include "train_types.h"

_Static_assert(sizeof(splat_train_view) == 72, "view layout");
_Static_assert(sizeof(splat_train_slot) == 164 + 8 * SPLAT_GROUP_COUNT, "slot layout");
_Static_assert(sizeof(splat_train_report) == 64, "report layout");
_Static_assert(sizeof(splat_train_push) == 32, "push layout");
_Static_assert(sizeof(splat_budget_push) == 32, "budget push layout");
_Static_assert(sizeof(splat_apply_push) == 16, "apply push layout");
_Static_assert(sizeof(splat_mcmc_push) == 32, "MCMC push layout");

#define SPLAT_TRAIN_RING 3

/* What the trainer runs on; it owns none of it. */
typedef struct splat_train_env {
    splat_gpu *gpu;
    splat_stream *stream;
    const splat_renderer *renderer;
} splat_train_env;

/* ------------------------------------------------------------------ stages */

/* Pipelines of the training stages (a strategy keeps its own). */
typedef struct splat_train_pipes {
    splat_pipe frame_setup, loss_fwd, loss_bwd, loss_reduce;
    splat_pipe adam;                          /* gradient rows (the public backward's) */
    splat_pipe adam_sh_record;                /* the SH group's gradients as project_bwd's SH records */
} splat_train_pipes;

splat_status splat__train_pipes_init(splat_gpu *g, splat_train_pipes *p, splat_error *err);
void splat__train_pipes_free(splat_gpu *g, splat_train_pipes *p);

/* frame_setup.c: the frame of ring slot `slot` (its template, plus the camera of its view). */
void splat__frame_setup_record(splat_cmd *c, const splat_train_pipes *p, splat_view slots, splat_view views,
                               splat_view frame, uint32_t slot);

/* loss.c: L1 + D-SSIM of a render against its ground truth, its gradient, and the report. */
typedef struct splat_loss_args {
    splat_view frame;        /* splat_frame: the image size and background */
    splat_view slots;        /* [ring] splat_train_slot: the image offset */
    splat_view pixels;       /* packed RGBA8 ground truth */
    splat_view masks;        /* a byte a pixel, at the same offsets (read where the slot says it has one) */
    splat_view render;       /* [H,W,4] the render (out_rgbt) */
    splat_view maps;         /* [H,W,3] vec4 scratch: the SSIM derivative maps */
    splat_view parts;        /* [groups] vec4 scratch: per-workgroup sums */
    splat_view grad;         /* [H,W,4] dL/d(render), written when `backward` */
    splat_view counters;     /* splat_counters of the render (its overflow closes the gate) */
    splat_view gate;         /* uint: set on overflow */
    splat_view report;       /* splat_train_report */
    uint32_t slot;
    uint32_t width, height;  /* the dispatch covers the largest image */
    bool backward;
} splat_loss_args;

void splat__loss_record(splat_cmd *c, const splat_train_pipes *p, const splat_loss_args *a);
/* Workgroups of the loss for an image of width x height (the parts array holds one each). */
uint32_t splat__loss_groups(uint32_t width, uint32_t height);
/* PSNR from a report's squared-error sum over `values` pixel channels (99 for a zero error). */
double splat__psnr(double sq_sum, double values);

/* adam.c: one Adam step of every parameter group, one thread per parameter element. */
typedef struct splat_adam_args {
    splat_view slots;        /* [ring] splat_train_slot: learning rates, bias corrections, degree, count */
    splat_view gate;         /* uint: nonzero leaves everything untouched */
    const splat_scene_gpu *params, *grads, *moments;
    splat_view radii;        /* [n] vec2, the step's render: selective skips rows whose radius is 0 */
    bool selective;
    bool sh_record;          /* grads->sh holds project_bwd's SH records (SPLAT_BWD_SH_RECORD): adam_sh_record */
    uint32_t slot, n;        /* n: the Gaussians of the dispatch (the slot's count, or more) */
} splat_adam_args;

void splat__adam_record(splat_cmd *c, const splat_train_pipes *p, const splat_adam_args *a);

/* ------------------------------------------------------------------ parts */

/* images.c */
typedef struct splat_image_store {
    bool streamed;
    bool masked;                              /* the dataset has masks (docs/TRAIN.md, "With a mask") */
    splat_image *host;                        /* [views] (streamed mode keeps every training image) */
    uint8_t **host_mask;                      /* [views] 0/1 per pixel, as host (masked only) */
    splat_buf views;                          /* [views] splat_train_view */
    splat_buf images;                         /* resident: packed RGBA8 of the training views */
    splat_buf masks;                          /* resident: their masks, a byte a pixel at the images' pixel
                                                 offsets (a word when there are none) */
    splat_buf slot_images[SPLAT_TRAIN_RING + 1]; /* streamed (and evaluation): one view's pixels */
    splat_buf slot_masks[SPLAT_TRAIN_RING + 1];  /* and its mask (masked only) */
    uint32_t *offset;                         /* [views] resident: where each view starts in `images`, in pixels */
    uint32_t *n_pixels, *n_centres;           /* [views] pixels that count, and SSIM windows whose centre does */
    uint32_t n_views;
} splat_image_store;

/* Loads the training views' images and uploads the view table (the dataset's views, then one
 * for evaluation); resident when they fit one binding and a third of the device, or else (or with
 * `stream`) streamed. Streamed slots hold max_w x max_h, the evaluation slot eval_w x eval_h. */
splat_status splat__images_init(splat_gpu *g, splat_image_store *s, const splat_dataset *ds, const uint32_t *train_views,
                                uint32_t n_train, uint32_t max_w, uint32_t max_h, uint32_t eval_w, uint32_t eval_h,
                                bool stream, splat_error *err);
void splat__images_free(splat_gpu *g, splat_image_store *s);
/* A view's image from disk, downsampled as its view says and checked against its camera. */
splat_status splat__images_load(const splat_dataset *ds, uint32_t v, splat_image *out, splat_error *err);
/* Where ring slot `slot` finds its ground truth: the buffers its recording binds (pixels and
 * masks), and where view v starts in them (the slot's image_offset); and (streamed) putting view
 * v's pixels and mask there. */
const splat_buf *splat__images_pixels(const splat_image_store *s, uint32_t slot);
const splat_buf *splat__images_masks(const splat_image_store *s, uint32_t slot);
uint32_t splat__images_offset(const splat_image_store *s, uint32_t slot, uint32_t view);
void splat__images_stage(splat_image_store *s, uint32_t slot, uint32_t view);
/* Evaluation: view v's image and mask at w x h into the evaluation slot (SPLAT_TRAIN_RING); when
 * that is not their size, resampled to it (io/io.h: the image composited on `background` first, as
 * the loss would composite it). *n_pixels and *n_centres receive their counts for the slot. */
splat_status splat__images_stage_eval(splat_image_store *s, const splat_dataset *ds, uint32_t v, uint32_t w, uint32_t h,
                                      const float background[3], uint32_t *n_pixels, uint32_t *n_centres,
                                      splat_error *err);
/* Writes the camera evaluation renders with into the view table's last entry, view s->n_views (the
 * device must not be using the table). */
splat_status splat__images_set_eval_camera(splat_gpu *g, splat_image_store *s, const splat_camera *cam, splat_error *err);

/* model.c: what the optimizer owns. */
typedef struct splat_model {
    uint32_t count;                           /* Gaussians */
    splat_scene_gpu params;
    splat_scene_gpu grads;                    /* SH: project_bwd's SH records (splat__grad_width) */
    splat_scene_gpu moments;                  /* Adam m and v: SPLAT_MOMENT_WORDS words a parameter float
                                                 of each group (train_types.h; splat__moments_layout) */
    /* where the device's free memory stopped the growth: the count it allowed at the latest refine
     * it bound, and the step it first did (0: never) */
    uint32_t memory_cap, memory_cap_step;
    uint32_t refines, cloned, split, pruned;  /* the default strategy's refines and their decisions, summed */
    uint32_t refines_in_place;                /* of them, those in place (splat_densify_result.in_place) */
} splat_model;

/* A strategy's growth was bounded by the device's memory at `step`, to `cap` Gaussians. */
static inline void splat__model_memory_bound(splat_model *m, uint32_t step, uint32_t cap)
{
    if (!m->memory_cap_step) m->memory_cap_step = step;
    m->memory_cap = cap;
}

/* strategy.h */
typedef struct splat_strategy_state splat_strategy_state;
typedef struct splat_strategy_ops splat_strategy_ops;

typedef struct splat_trainer_prof {
    splat_prof prof[SPLAT_TRAIN_RING];
    bool on;
    const char *stage_name[SPLAT_PROF_MAX];
    double stage_ms[SPLAT_PROF_MAX];
    uint32_t n_stages, n_profiled;
} splat_trainer_prof;

/* ring.c: a copy of the parameters for a reader beside the loop (the viewer), taken on the GPU
 * between two iterations, so that the reader never touches what training writes and training
 * never waits for the reader.
 *
 * The reader owns `dst` and asks by storing SPLAT_TAP_ASKED in `state`. Before it submits its next
 * iteration the loop records the copy of rows [0, count) of every parameter group into its stream
 * and submits it without waiting; then it fills the answer below, stores SPLAT_TAP_COPIED (or,
 * when dst has fewer rows than the model, SPLAT_TAP_SMALL with `count`, copying nothing) and calls
 * notify. The copy is done on the device once the training stream's timeline `sem` reaches
 * `value`; the reader's work that reads dst waits for that (splat__stream_after), on whatever
 * queue it runs. The copy itself waits for the reader's timeline `reader_sem` to reach
 * `reader_value`: the reader's last work that read dst. At most one copy is in flight: the reader
 * asks again only once it has taken the answer. `state`, `version` and `running` are the fields
 * both threads use at the same time; the others belong to whoever the state says is next. */
enum { SPLAT_TAP_IDLE, SPLAT_TAP_ASKED, SPLAT_TAP_COPIED, SPLAT_TAP_SMALL };

typedef struct splat_train_tap {
    _Atomic uint32_t state;
    /* the trainer's, published whenever they change (the reader reads them any time) */
    _Atomic uint32_t version;        /* bumped whenever the parameters may have changed: a copy of the same
                                        version would be the same */
    _Atomic uint32_t running;        /* 1 while the loop runs (splat__train_run): asks are answered soon */
    /* the ask, written before state becomes ASKED */
    splat_scene_gpu *dst;            /* the reader's: float SH (like the model), `capacity` rows */
    VkSemaphore reader_sem;          /* the copy waits for reader_sem >= reader_value (0: nothing) */
    uint64_t reader_value;
    void (*notify)(void *user);      /* on the training thread, after each answer */
    void *user;
    /* the answer, written before state becomes COPIED or SMALL */
    uint32_t count;                  /* Gaussians copied (SMALL: the rows dst needs) */
    uint32_t step;                   /* steps submitted when the copy was taken */
    uint32_t sh_degree;              /* the degree training renders with at that step (0..3) */
    uint32_t copied_version;         /* `version` when the copy was taken */
    VkSemaphore sem;                 /* the copy is done once sem >= value */
    uint64_t value;
} splat_train_tap;

/* ring.c: the iterations in flight. */
typedef struct splat_ring {
    splat_rec rec[SPLAT_TRAIN_RING];
    bool recorded;
    uint64_t inflight[SPLAT_TRAIN_RING];      /* submission value of each slot's iteration, 0 none */
    splat_buf slots;                          /* [RING+1] splat_train_slot, host-written (the last: evaluation) */
    splat_buf reports;                        /* [RING+1] splat_train_report, host-read */
    uint64_t report_stride;
} splat_ring;

struct splat_trainer {
    splat_train_env env;
    splat_train_desc desc;                    /* resolved */
    splat_dataset ds;
    uint32_t *train_views, n_train;           /* indices into ds.views */
    uint32_t *test_views, n_test;
    double scene_scale;
    double scene_centre[3];  /* the training cameras' mean centre */
    double world_unit;       /* gsplat's world unit in this world's (splat__focus_distance): captures
                                (COLMAP, transforms.json); 1 for NeRF-synthetic, which gsplat keeps */
    uint32_t steps, step, sh_max;
    uint32_t asked_sh_degree;                 /* the caller's desc.render.sh_degree before defaults (0: not asked) */
    bool seen_box;                            /* the densification statistics (of a strategy that keeps them) count
                                                 gsplat's box-visible views (the default; false with
                                                 SPLAT_DENSIFY_SEEN=pixels; docs/TRAIN.md, "Densification"); a
                                                 resume goes on with its checkpoint's measure */
    bool seen_asked;                          /* SPLAT_DENSIFY_SEEN named the measure */
    float background[3];                      /* the resolved background (AUTO and evaluation) */
    uint32_t max_w, max_h;                    /* the largest training or test image */
    uint32_t room_w, room_h;                  /* the largest image the render buffers, the loss scratch and
                                                 the evaluation slot hold: max_w x max_h, or more for an
                                                 evaluation at a scale above 1 (desc.eval_scale) */

    splat_image_store images;
    splat_model model;
    splat_render_bufs rb;
    splat_buf maps, parts;                    /* loss scratch */
    splat_train_pipes pipes;
    const splat_strategy_ops *strategy;
    splat_strategy_state *strategy_state;
    splat_ring ring;
    splat_trainer_prof prof;

    splat_train_tap *tap;                     /* a reader's snapshot request, or NULL */
    uint32_t params_version;                  /* bumped by every change of the parameters (the tap's version) */

    splat_train_progress prog;
    bool retired_any;                         /* prog holds a retired iteration's loss */
    uint32_t isect_seen;                      /* the most intersections a retired step needed since the strategy last ran */
    bool timing;                              /* the first run has started */
    uint32_t first_step;                      /* where this trainer's first run started */
    double run_start, time_in_runs;           /* the running run's start; seconds of the runs before it */
    double t_last_progress;
    atomic_uint interrupt;                    /* splat_trainer_interrupt: the loop returns at the next step */
};

/* trainer.c */
splat_status splat__trainer_init(splat_trainer **t, const splat_train_env *env, const splat_train_desc *desc,
                                 splat_error *err);
void splat__trainer_free(splat_trainer *t);
uint32_t splat__trainer_profile(const splat_trainer *t, splat_stage_time *stages, uint32_t max);
uint32_t splat__trainer_diagnostics(splat_trainer *t, char *msg, size_t size);

/* model.c */
/* The parameters changed (a step, the strategy, a new model): bumps the tap's version. */
void splat__train_params_changed(splat_trainer *t);
/* Uploads `scene` as the parameters, with zero gradients, moments and statistics; sizes the
 * render buffers for it. */
splat_status splat__model_set(splat_trainer *t, const splat_scene *scene, splat_error *err);
/* Makes room for the model's count in the per-Gaussian buffers that only need room (gradients,
 * render buffers): after a strategy changed the count. */
splat_status splat__model_fit(splat_trainer *t, splat_error *err);
void splat__model_free(splat_gpu *g, splat_model *m);
/* Adam's moments of `rows` Gaussians as train_types.h lays them out (each group's `words`, no
 * buffers yet: for code that allocates them a group at a time), and allocated. */
splat_scene_gpu splat__moments_layout(uint32_t rows);
splat_status splat__moments_init(splat_gpu *g, splat_scene_gpu *m, uint32_t rows, splat_error *err);
/* Element j of row `row`'s m and v from a group's moments as stored, `per` words a float (1: the
 * packed word, 2: float m and v), `width` floats a row. */
void splat__moments_of(const uint32_t *words, uint32_t per, uint64_t row, uint32_t width, uint32_t j, float mv[2]);
/* Floats per Gaussian of group k of the model's gradients: the group's width, but the SH group
 * holds project_bwd's SH records (SPLAT_BWD_SH_RECORD), which Adam turns into the gradients. */
uint32_t splat__grad_width(uint32_t k);
/* Adam's m and v from a word of moments (train_types.h; moments.glsl packs them). */
static inline float splat__moment_m(uint32_t w)
{
    uint32_t u = w << (32 - SPLAT_MOMENT_M_BITS);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline float splat__moment_v(uint32_t w)
{
    uint32_t u = (w >> SPLAT_MOMENT_M_BITS) << (SPLAT_MOMENT_M_BITS - 1);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The first Gaussian whose parameters are not finite, with its moments, in an error for `step`. */
splat_status splat__model_nonfinite(splat_trainer *t, uint32_t step, splat_error *err);

/* checkpoint.c: each drains the ring first. */
splat_status splat__train_scene(splat_trainer *t, splat_scene *scene, splat_error *err);
splat_status splat__train_save(splat_trainer *t, const char *path, splat_error *err);
splat_status splat__train_resume(splat_trainer *t, const char *path, splat_error *err);

/* schedule.c */
/* The view of a step: a fresh permutation of the training views every epoch, from the run's
 * seed, so any step's view can be recomputed (re-runs after an overflow, resumes). */
uint32_t splat__train_view_of_step(const splat_trainer *t, uint32_t step);
/* The SH degree training has reached at `step`. */
uint32_t splat__train_degree(const splat_trainer *t, uint32_t step);
/* Fills *out, the contents of ring slot `slot` (SPLAT_TRAIN_RING: evaluation's; it places the
 * view's image when images are streamed) for `step` rendering `view`: training (random background,
 * learning rates) or evaluation (the resolved background, the degree reached). The ring writes it
 * into the slot's mapped memory; tests read it. */
void splat__train_fill_slot(const splat_trainer *t, uint32_t slot, uint32_t step, uint32_t view, bool training,
                            splat_train_slot *out);

/* ring.c */
/* Records an iteration's kernels into `c` for ring slot `slot`: with backward (training) or
 * without (evaluation: forward and loss sums only). */
void splat__train_record(splat_trainer *t, splat_cmd *c, uint32_t slot, bool backward);
/* (Re-)records the ring's command buffers after buffers changed. */
splat_status splat__train_rerecord(splat_trainer *t, splat_error *err);
/* After the intersection buffers grew (an overflow): re-records the ring, reopens the update gate. */
splat_status splat__train_regrown(splat_trainer *t, splat_error *err);
/* Waits for every iteration in flight and processes its report, then for all other submitted work. */
splat_status splat__train_drain(splat_trainer *t, splat_error *err);
/* Runs to `until_step`, or to the first step boundary after splat__train_interrupt. */
splat_status splat__train_run(splat_trainer *t, uint32_t until_step, splat_error *err);
/* Async-signal-safe and thread-safe: sets the flag the loop reads before each step. */
void splat__train_interrupt(splat_trainer *t);
/* The snapshot tap (above): sets it (NULL removes it), from the training thread between runs. */
void splat__train_set_tap(splat_trainer *t, splat_train_tap *tap);
/* Answers an asked tap now: the loop does between iterations, a caller between runs. */
splat_status splat__train_serve_tap(splat_trainer *t, splat_error *err);

/* eval.c */
/* The side evaluation renders a side of `n` pixels at: round(scale n) (halves up), at least 1. */
uint32_t splat__eval_size(uint32_t n, float scale);
/* Every test view (every training view without any) at desc.eval_scale: the view's camera scaled
 * to its evaluation size, against its image (and mask) resampled to that size. */
splat_status splat__train_eval(splat_trainer *t, const char *render_dir, splat_eval_result *res, splat_error *err);

#endif
