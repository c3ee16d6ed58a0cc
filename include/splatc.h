/*
 * splatc: 3D Gaussian Splatting training and rendering, every heavy step a Vulkan compute shader.
 *
 * This header is the manual. Usage in short:
 *
 *     splat_error err = {0};
 *     splat_ctx *ctx;
 *     if (splat_ctx_init(&ctx, &(splat_ctx_desc){0}, &err) != SPLAT_OK) {
 *         fprintf(stderr, "%s\n", err.msg);
 *         return 1;
 *     }
 *     ...
 *     splat_ctx_free(ctx);
 *
 * Conventions:
 * - Functions that can fail for reasons outside the program (Vulkan, memory, files) return a
 *   splat_status and, when `err` is not NULL, fill it with a message that names the object or
 *   file and the problem. Misuse (a NULL where a pointer is required, a size that breaks a
 *   documented precondition) is a programmer error and stops the program through an assert.
 * - Descriptor structs treat all-zero as "the defaults"; fill them with designated initializers.
 * - Whoever creates an object frees it with the matching *_free; *_free(NULL) does nothing.
 * - Arrays are row-major; every array parameter documents its shape, e.g. [N,3].
 */
#ifndef SPLATC_H
#define SPLATC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The functions of this header are the only symbols libsplatc.so exports. */
#if defined(__GNUC__) || defined(__clang__)
#define SPLAT_API __attribute__((visibility("default")))
#else
#define SPLAT_API
#endif

/* ------------------------------------------------------------------- version */

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project's; the pkg-config file and the
 * CMake package carry the same). */
SPLAT_API const char *splat_version(void);

/* ---------------------------------------------------------------- status and errors */

typedef enum splat_status {
    SPLAT_OK = 0,
    SPLAT_ERR_INVALID_ARG,          /* an argument or option has a value that cannot work */
    SPLAT_ERR_IO,                   /* a file could not be opened, read or written */
    SPLAT_ERR_FORMAT,               /* a file's content is malformed or truncated */
    SPLAT_ERR_UNSUPPORTED,          /* valid, but not something splatc handles */
    SPLAT_ERR_OUT_OF_HOST_MEMORY,
    SPLAT_ERR_OUT_OF_DEVICE_MEMORY,
    SPLAT_ERR_NO_DEVICE,            /* no usable Vulkan device, or the requested index is absent */
    SPLAT_ERR_DEVICE,               /* a Vulkan call failed (device lost, driver error) */
    SPLAT_ERR_LIMIT,                /* the request exceeds a limit of the device */
    SPLAT_ERR_NONFINITE,            /* NaN or Inf found in inputs or parameters */
    SPLAT_ERR_SHADER,               /* a shader does not match the interface the code declares */
    SPLAT_STATUS_COUNT
} splat_status;

/* A short, stable name for a status ("SPLAT_ERR_IO"); never NULL. */
SPLAT_API const char *splat_status_str(splat_status status);

/* The message of the first failure a call reports. `status` repeats the return value. */
typedef struct splat_error {
    splat_status status;
    char msg[512];
} splat_error;

/* --------------------------------------------------------------------- allocation */

/* Host allocation hooks. All-zero restores malloc/realloc/free. Tests use this to inject
 * out-of-memory faults; the library never keeps memory from one hook set across a change. */
typedef struct splat_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} splat_allocator;

SPLAT_API void splat_set_allocator(const splat_allocator *allocator);

/* ---------------------------------------------------------------- cameras and scenes */

/* Pinhole camera in the OpenCV/COLMAP convention: x right, y down, z forward.
 * A world point X maps to camera space as Xc = R X + t and to pixel coordinates
 * (fx Xc.x / Xc.z + cx, fy Xc.y / Xc.z + cy), where pixel (i, j) covers [i, i+1) x [j, j+1),
 * so its centre is at (i + 0.5, j + 0.5). */
typedef struct splat_camera {
    float fx, fy, cx, cy;
    float R[9];              /* world-to-camera rotation, row-major [3,3] */
    float t[3];              /* world-to-camera translation [3] */
    uint32_t width, height;  /* pixels, any size >= 1 */
} splat_camera;

/* Spherical-harmonics coefficients stored per Gaussian: degree 3 always (16 per channel). */
#define SPLAT_SH_COEFFS 16

/* How a Gaussian's 2D footprint is filtered to the pixel grid (docs/RASTER.md 1.5). Both add a
 * 0.3 px^2 low-pass to the projected covariance, as the original 3DGS does. */
typedef enum splat_rasterize_mode {
    SPLAT_RASTERIZE_CLASSIC = 0,     /* the low-pass widens small Gaussians and keeps their opacity (gsplat's
                                        "classic") */
    SPLAT_RASTERIZE_ANTIALIASED,     /* the low-pass keeps each Gaussian's integral: its opacity is scaled by
                                        sqrt(det(cov2d) / det(cov2d + 0.3 I)) (gsplat's "antialiased",
                                        Mip-Splatting's 2D filter), so renders at other resolutions alias less.
                                        A scene trained so should be rendered so */
    SPLAT_RASTERIZE_MODE_COUNT
} splat_rasterize_mode;

/* A Gaussian scene in host memory, structure of arrays. Rows [0, count) are valid; the arrays
 * hold `capacity` rows so that growth needs no reallocation until count reaches capacity. */
typedef struct splat_scene {
    uint32_t count;
    uint32_t capacity;
    uint32_t sh_degree;      /* degree the scene was trained to (0..3); decides PLY f_rest count */
    splat_rasterize_mode rasterize_mode; /* the mode it was trained in (a PLY comment records it; 0 where the PLY
                                        says nothing). Rendering does not read it: pass it in splat_render_desc */
    float *means;            /* [capacity,3] world positions */
    float *log_scales;       /* [capacity,3] natural log of the standard deviations */
    float *quats;            /* [capacity,4] rotation w,x,y,z, not necessarily normalised */
    float *opacities;        /* [capacity] logits: opacity = 1 / (1 + exp(-logit)) */
    float *sh;               /* [capacity,16,3] coefficient-major, channel-minor */
} splat_scene;

/* Allocates a scene of `capacity` rows with count 0. Free with splat_scene_free. */
SPLAT_API splat_status splat_scene_init(splat_scene *scene, uint32_t capacity, splat_error *err);
/* Grows the arrays to hold at least `capacity` rows, keeping rows [0, count). */
SPLAT_API splat_status splat_scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err);
SPLAT_API void splat_scene_free(splat_scene *scene);

/* ------------------------------------------------------------------- devices */

typedef struct splat_device_info {
    uint32_t index;                  /* what --device / SPLAT_DEVICE take */
    char name[256];
    char driver[512];
    const char *type;                /* "discrete", "integrated", "virtual", "cpu", "other" */
    uint32_t subgroup_size;
    uint64_t memory_bytes;           /* largest device-local heap */
    uint64_t max_storage_range;      /* largest storage-buffer binding */
    bool unified_memory;
    bool float_atomics;
    bool fp16_storage;
} splat_device_info;

/* Lists the Vulkan devices: infos [max]; *count is how many exist (may exceed max). */
SPLAT_API splat_status splat_devices(splat_device_info *infos, uint32_t max, uint32_t *count, splat_error *err);

/* ------------------------------------------------------------------- context */

/* A device and everything splatc keeps on it (pipelines, the stream). One thread at a time. */
typedef struct splat_ctx splat_ctx;

typedef struct splat_ctx_desc {
    bool choose_device;              /* false: the best device (discrete > integrated > virtual > CPU), or SPLAT_DEVICE */
    uint32_t device_index;
    bool validation;                 /* Vulkan validation layers (also SPLAT_VALIDATE=1) */
} splat_ctx_desc;

SPLAT_API splat_status splat_ctx_init(splat_ctx **ctx, const splat_ctx_desc *desc, splat_error *err);
SPLAT_API void splat_ctx_free(splat_ctx *ctx);
/* The device the context runs on. */
SPLAT_API void splat_ctx_device(const splat_ctx *ctx, splat_device_info *info);
/* Device memory splatc has allocated: now, and the most at any time so far. */
SPLAT_API void splat_ctx_memory(const splat_ctx *ctx, uint64_t *in_use, uint64_t *peak);
/* Renders a small random scene on the GPU and on the CPU reference and compares them;
 * *max_error is the largest difference of a pixel value. */
SPLAT_API splat_status splat_ctx_selfcheck(splat_ctx *ctx, double *max_error, splat_error *err);

/* ----------------------------------------------------------------- rendering */

/* How to render. All-zero: every SH degree the scene has, a black background, no per-tile cap.
 * The same options are how training renders (splat_train_desc.render). */
typedef struct splat_render_desc {
    uint32_t sh_degree;              /* 0: the scene's own degree (at most 3); 1..3; SPLAT_SH_DEGREE_0 for degree 0.
                                        Never more than the scene has. */
    float background[3];             /* RGB in [0, 1] */
    uint32_t max_gaussians_per_tile; /* 0: unlimited; N: each 16x16 tile blends its N nearest Gaussians (the
                                        depth-sorted cap: bounds the time of a workgroup on watchdog GPUs) */
    bool sh_half;                    /* SH coefficients stored as half floats on the GPU: half the memory of the
                                        largest parameter group; all arithmetic and blending stay float.
                                        Rendering only: training refuses it */
    splat_rasterize_mode rasterize_mode; /* 0: classic. Render a scene in the mode it was trained in
                                        (splat_scene.rasterize_mode) */
} splat_render_desc;

#define SPLAT_SH_DEGREE_0 0xffffffffu

/* Renders `scene` from each camera: images [n] of [H,W,3] floats in camera order, each
 * allocated here (free with splat_free). Immediate mode: the stream commits adaptively while it
 * encodes and waits at the end. */
SPLAT_API splat_status splat_render(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cams, uint32_t n,
                          const splat_render_desc *desc, float **images, splat_error *err);
SPLAT_API void splat_free(void *ptr);

/* What splat_render would refuse, found without rendering, so that a caller rendering camera by
 * camera can check them all first: the options, the scene (NULL: not checked) and each of the
 * n cameras (a size in 1..16384 whose image fits one storage binding of this device, finite
 * values, positive focal lengths; "camera K: " leads the message when n > 1). The first problem
 * is in err, worded as splat_render words it. */
SPLAT_API splat_status splat_render_check(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cams, uint32_t n,
                                          const splat_render_desc *desc, splat_error *err);

/* The differentiable rasterizer's backward, immediate mode: renders `scene` from `cam` and
 * returns the gradient of a scalar loss L given dL/d(image) and dL/d(alpha):
 *   d_rgb   [H,W,3]  dL/drgb of the rendered image (the background included)
 *   d_alpha [H,W]    dL/dalpha, alpha = 1 - final transmittance; NULL for zero
 * `grads` is initialised here (free with splat_scene_free): its arrays hold dL/d(means),
 * dL/d(log_scales), dL/d(quats), dL/d(opacity logits) and dL/d(SH), zero above the active
 * degree. `image` [H,W,3] and `alpha` [H,W] receive the forward render when not NULL.
 * Deterministic: the same inputs give the same bits on the same device. */
SPLAT_API splat_status splat_render_backward(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cam,
                                   const splat_render_desc *desc, const float *d_rgb, const float *d_alpha,
                                   splat_scene *grads, float *image, float *alpha, splat_error *err);

/* ------------------------------------------------------------------ training */

typedef struct splat_train_progress {
    uint32_t step, steps;            /* steps done, of the run */
    float loss;                      /* of the latest retired iteration */
    float psnr;                      /* of that iteration's training view */
    uint32_t n_gaussians;
    double iters_per_sec;            /* over the trainer's runs so far; 0 until they are a second
                                        old, except in the report that ends a run */
    double eta_sec;                  /* the run's steps left at that rate; 0 while the rate is */
    uint64_t isect_padded;           /* diagnostics: tile-list entries the two tile tests disagreed on (expected 0) */
    /* Where the device's free memory stopped the model growing (the strategy grows no further than
     * fits; docs/TRAIN.md, "When the GPU is full"): the count it allowed at the latest refine it bound
     * and the step it first did; 0 and 0 when it never bound, or where the device does not report
     * its memory budget (VK_EXT_memory_budget) and no SPLAT_MEM_LIMIT is set. */
    uint32_t memory_cap, memory_cap_step;
    /* The default strategy's refines so far (since this trainer was made: a resumed run counts from
     * its resume), and the Gaussians they cloned, split (each replaced by two) and pruned, summed:
     * n_gaussians = the count before the first + cloned + split - pruned. 0 for MCMC. */
    uint32_t refines, cloned, split, pruned;
    /* Of those refines, the ones that moved the rows in place, in arrays with room (no allocation;
     * docs/TRAIN.md, "Where the rows go on the GPU"). */
    uint32_t refines_in_place;
} splat_train_progress;

/* The background training composites its renders and its images' alpha on. */
typedef enum splat_background {
    SPLAT_BACKGROUND_AUTO = 0,       /* white for a dataset whose images have alpha (NeRF-synthetic), else
                                        render.background */
    SPLAT_BACKGROUND_COLOR,          /* render.background */
    SPLAT_BACKGROUND_RANDOM,         /* a random colour every training step; evaluation as AUTO (white with
                                        alpha, else render.background). On lego 7k it scores 0.15 dB below
                                        white (docs/PERFORMANCE.md), hence not the default */
} splat_background;

/* How Gaussians are added and removed during training. */
typedef enum splat_strategy {
    SPLAT_STRATEGY_DEFAULT = 0,      /* gsplat's default: clone, split and prune on the screen-space gradient,
                                        with opacity resets (docs/TRAIN.md) */
    SPLAT_STRATEGY_MCMC,             /* gsplat's MCMCStrategy: relocate transparent Gaussians onto opaque ones, add
                                        5 % per refine up to max_gaussians, noise on the positions, opacity and
                                        scale regularisers; starts at opacity 0.5 and a tenth of the scale
                                        (not init_ply's or init_scene's Gaussians; docs/TRAIN.md, "MCMC") */
} splat_strategy;

/* The largest splat_train_desc.eval_scale: 8 x the training size (64 x the pixels, and the
 * evaluation's buffers with them). */
#define SPLAT_EVAL_SCALE_MAX 8

/* What to train and how. All-zero fields take the defaults written beside them (gsplat's default
 * recipe, docs/TRAIN.md); only `data` is required. */
typedef struct splat_train_desc {
    const char *data;                /* scene folder: COLMAP or NeRF-synthetic */
    uint32_t images_factor;          /* 0 or 1: images/; N: images_N/ (or images/ downsampled by N) */
    bool eval;                       /* hold out every 8th image (COLMAP; NeRF-synthetic has its own test split) */
    float eval_scale;                /* splat_trainer_eval renders each view at round(eval_scale x its size), at least
                                        1x1, the intrinsics scaled by the new size over the old, against its image
                                        resampled to that size (area averaging to shrink, bicubic to grow, on the
                                        8-bit sRGB values as stored: docs/TRAIN.md, "Evaluation at other scales");
                                        0: 1 (no resampling); else above 0, at most SPLAT_EVAL_SCALE_MAX */
    uint32_t steps;                  /* 0: 30000 */
    splat_render_desc render;        /* how training renders; sh_degree is the largest degree trained (0: 3, or
                                        less when init_ply or init_scene has less), reached one degree per 1000 steps;
                                        rasterize_mode is antialiased also when init_ply's or init_scene's scene or
                                        a resumed checkpoint was trained so (a run keeps its mode) */
    splat_background background;     /* 0: AUTO */
    splat_strategy strategy;         /* 0: SPLAT_STRATEGY_DEFAULT */
    uint64_t seed;                   /* the run's seed (0 is a seed like any other) */
    uint32_t init_points;            /* random initialisation when the scene has no points: 0 = 100000 */
    bool identity_quats;             /* initial rotations the identity (the original 3DGS) instead of gsplat's
                                        random ones (the default; docs/TRAIN.md, "Initialisation") */
    const char *init_ply;            /* start from the Gaussians of this file (any format splat_scene_load reads) instead (evaluation, fine-tuning) */
    const splat_scene *init_scene;   /* start from a copy of these Gaussians instead (wins over init_ply, which then
                                        only names them in messages): a caller that loaded the file itself; read during
                                        splat_trainer_init only */
    /* Called every progress_ms (0: 250) from the training thread. */
    void (*progress)(void *user, const splat_train_progress *p);
    void *progress_user;
    uint32_t progress_ms;
    bool profile;                    /* GPU timestamps per stage (splat_trainer_profile) */
    /* The strategy's schedule, gsplat's when 0: refine every 100 steps after step 500 until 15000
     * (MCMC: 25000), opacity reset every 3000 steps (the default strategy; docs/TRAIN.md). */
    uint32_t refine_start, refine_every, refine_stop, reset_every;
    /* The most Gaussians densification makes (0: no limit; MCMC: 1000000). The default strategy
     * stops growing there: the clones and splits of the highest average gradient, as many as fit
     * (docs/TRAIN.md, "A budget"); MCMC adds up to it. A scene that starts above it is not cut down. */
    uint32_t max_gaussians;
    uint32_t isect_capacity;         /* initial tile-intersection capacity (0: 8 per Gaussian); it grows on demand */
    bool selective_adam;             /* Adam moves only the Gaussians the step rendered; the others keep their
                                        parameters and moments (gsplat's visible_adam; faster, other results:
                                        docs/TRAIN.md, "Adam") */
    bool stream_images;              /* keep training images in host memory even when they fit on the device */
} splat_train_desc;

typedef struct splat_trainer splat_trainer;

/* Loads the dataset, initialises the Gaussians and uploads everything (training images stay on
 * the GPU, or are streamed from host memory when they do not fit). */
SPLAT_API splat_status splat_trainer_init(splat_trainer **trainer, splat_ctx *ctx, const splat_train_desc *desc,
                                 splat_error *err);
/* Runs training steps until `until_step` (0, or past the end: the end of the run), or until
 * splat_trainer_interrupt: then it returns SPLAT_OK early, at the step splat_trainer_step gives. */
SPLAT_API splat_status splat_trainer_run(splat_trainer *t, uint32_t until_step, splat_error *err);
/* Asks splat_trainer_run to return at the next step boundary: the iterations already submitted (at
 * most three) finish, and the trainer is as after a run that ended there (save it, evaluate it, or
 * run on: the results are the same bits as a run that was never interrupted). It only sets a flag
 * the loop reads before each step, so it may be called from any thread or from a signal handler,
 * while `t` is alive. A call while no run is running makes the next one return before its first
 * step; one call interrupts one run. */
SPLAT_API void splat_trainer_interrupt(splat_trainer *t);
/* Steps done so far, and the steps of the whole run. */
SPLAT_API uint32_t splat_trainer_step(const splat_trainer *t);
SPLAT_API uint32_t splat_trainer_steps(const splat_trainer *t);
/* The Gaussians of the model now. */
SPLAT_API uint32_t splat_trainer_count(const splat_trainer *t);
/* The run's seed: desc.seed, or the checkpoint's once splat_trainer_resume has read one (a resume
 * keeps the seed, as it keeps the SH degree). */
SPLAT_API uint64_t splat_trainer_seed(const splat_trainer *t);

/* With desc.profile: the mean GPU time per iteration of each stage, in pipeline order. */
typedef struct splat_stage_time {
    const char *name;
    double ms;
} splat_stage_time;

SPLAT_API uint32_t splat_trainer_profile(const splat_trainer *t, splat_stage_time *stages, uint32_t max);

/* How many times a Gaussian's gradient came out non-finite (it then gets no update that step),
 * with a description of the first in msg. 0 in a healthy run. */
SPLAT_API uint32_t splat_trainer_diagnostics(splat_trainer *t, char *msg, size_t size);

/* One evaluated view's results (splat_eval_result.views). */
typedef struct splat_eval_view {
    const char *name;                /* the image's path below the image folder, as splat_view_info.name: the
                                        trainer's string, valid until splat_trainer_free */
    double psnr, ssim, l1;           /* this view's, over the pixels that count */
    double psnr_full;                /* PSNR over every pixel, mask or not */
} splat_eval_view;

/* What splat_trainer_eval returns. The caller sets views and views_cap (zero-initialise the rest:
 * `splat_eval_result res = {.views = v, .views_cap = n}`); every other field is written. */
typedef struct splat_eval_result {
    uint32_t n_views;
    double psnr, ssim, l1;           /* means over the test views, over the pixels that count (every pixel of a
                                        view without a mask; docs/TRAIN.md, "With a mask") */
    double psnr_full;                /* PSNR over every pixel, mask or not */
    double seconds;
    splat_eval_view *views;          /* the caller's, [views_cap], or NULL: the first min(n_views, views_cap)
                                        evaluated views' results, in the order evaluated (the dataset's order,
                                        as splat_trainer_views lists it); the means above are over every
                                        evaluated view, however many are written. views_cap =
                                        splat_trainer_views(t, NULL, 0), the count of all views, is enough */
    uint32_t views_cap;              /* 0: none written */
} splat_eval_result;

/* A view of the dataset as training sees it. */
typedef struct splat_view_info {
    const char *name;                /* the image's path below the image folder ("DSC_0001.JPG"), the trainer's */
    splat_camera camera;             /* the pinhole camera training renders it with: at the size of the image
                                        training loads (images_factor), undistorted */
    bool is_test;                    /* held out for evaluation */
} splat_view_info;

/* The dataset's views in its order (COLMAP: sorted by name; NeRF-synthetic: train, then test):
 * views [max] (NULL when max is 0). Returns how many there are, which may exceed max. Names live as
 * long as `t`. */
SPLAT_API uint32_t splat_trainer_views(const splat_trainer *t, splat_view_info *views, uint32_t max);

/* Renders every test view (every training view when there are none), computes PSNR and SSIM,
 * and when render_dir is not NULL writes each render as a PNG there, named after its image
 * (its name less the extension, '/' made '_': "DSC_0001.png"). With desc.eval_scale, at that
 * scale: renders of the scaled size, against the images resampled to it. res->views and
 * res->views_cap are read (so initialise res: `= {0}` for the means alone) and each view's results
 * written there; the rest of *res is overwritten. */
SPLAT_API splat_status splat_trainer_eval(splat_trainer *t, const char *render_dir, splat_eval_result *res, splat_error *err);
/* The current Gaussians (a copy the caller frees with splat_scene_free), with the mode they are
 * trained in (scene->rasterize_mode). */
SPLAT_API splat_status splat_trainer_scene(splat_trainer *t, splat_scene *scene, splat_error *err);
/* Checkpoints: parameters, Adam state, statistics, the step and the rasterize mode; resuming on the
 * same device continues bit for bit as if the run had not stopped (a checkpoint trained antialiased
 * resumes antialiased). A resume goes on with the checkpoint's seed, whatever desc.seed was
 * (splat_trainer_seed says which: `splatc train --resume` refuses a --seed that differs), and
 * refuses a desc.render.sh_degree other than the checkpoint's. */
SPLAT_API splat_status splat_trainer_save(splat_trainer *t, const char *path, splat_error *err);
SPLAT_API splat_status splat_trainer_resume(splat_trainer *t, const char *path, splat_error *err);
SPLAT_API void splat_trainer_free(splat_trainer *t);

/* ------------------------------------------------------------------ files */

/* Gaussian scene files. The format follows the path's name (splat_file_format_of); reading a
 * .ply tells the 3DGS layout from the compressed one by its content. Each format stores what it
 * stores: docs/FORMATS.md lists, per format and attribute, what is kept and the largest error a
 * round trip through it adds.
 *
 *     .ply              the 3DGS layout viewers read (x y z, nx ny nz, f_dc_0..2, f_rest_*, opacity,
 *                       scale_0..2, rot_0..3), float: exact. Reading also takes ASCII, double, any
 *                       property order, and other trainers' extra properties (skipped, one warning).
 *                       An antialiased scene's header says so ("comment splatc rasterize_mode
 *                       antialiased"; viewers skip comments and render it classic), and reading
 *                       sets scene->rasterize_mode from it. The other formats do not record the mode
 *     .compressed.ply   PlayCanvas's chunked, quantised PLY (256 Gaussians a chunk)
 *     .splat            antimatter15's 32-byte records: SH degree 0
 *     .spz              Niantic's SPZ (written: version 3, gzip; read: versions 1-4, v4 with zstd)
 *     .sog              PlayCanvas's SOG, a zip of WebP images and meta.json
 *     meta.json         the same SOG as a folder (any name ending in meta.json)
 *
 * Writers are atomic (a temporary file, then a rename); a SOG folder's meta.json is written last,
 * so the folder holds either the old scene or the new one once it is complete. Readers are safe on
 * untrusted input: a malformed, truncated or lying file is an error naming the file and the
 * problem, and nothing is allocated for counts the file's bytes cannot back. */
typedef enum splat_file_format {
    SPLAT_FILE_UNKNOWN = 0,
    SPLAT_FILE_PLY,
    SPLAT_FILE_COMPRESSED_PLY,
    SPLAT_FILE_SPLAT,
    SPLAT_FILE_SPZ,
    SPLAT_FILE_SOG,
    SPLAT_FILE_SOG_FOLDER,
    SPLAT_FILE_FORMAT_COUNT
} splat_file_format;

/* The format a path names by its extension (case-insensitive), or SPLAT_FILE_UNKNOWN. */
SPLAT_API splat_file_format splat_file_format_of(const char *path);
/* A short name ("ply", "compressed.ply", "splat", "spz", "sog", "sog folder"); never NULL. */
SPLAT_API const char *splat_file_format_name(splat_file_format format);
/* The highest SH degree the format stores (0 for .splat, 3 for the others): a scene of a higher
 * degree loses its coefficients above it when saved there. */
SPLAT_API uint32_t splat_file_format_sh_degree(splat_file_format format);

/* What a load found besides the Gaussians. */
typedef struct splat_load_info {
    splat_file_format format;        /* what the file turned out to be */
    char warning[512];               /* "" or one line naming the file and what was skipped (e.g. another
                                        trainer's extra PLY properties) */
} splat_load_info;

/* Reads the Gaussians of `path` in the format its name says. `scene` is initialised here (count =
 * capacity; SH above the file's degree are 0; free with splat_scene_free); on failure it is left
 * empty. `info` may be NULL. */
SPLAT_API splat_status splat_scene_load(const char *path, splat_scene *scene, splat_load_info *info,
                                        splat_error *err);
/* Writes `scene` in the format the path's name says, atomically. A non-finite value is
 * SPLAT_ERR_NONFINITE naming the Gaussian, and leaves an existing file untouched. */
SPLAT_API splat_status splat_scene_save(const char *path, const splat_scene *scene, splat_error *err);

/* The PLY layout alone, whatever the path's name (reading: the 3DGS or the compressed layout). */
SPLAT_API splat_status splat_scene_load_ply(const char *path, splat_scene *scene, splat_error *err);
SPLAT_API splat_status splat_scene_save_ply(const char *path, const splat_scene *scene, splat_error *err);

/* Writes `size` bytes atomically (a temporary file beside `path`, then a rename). */
SPLAT_API splat_status splat_write_file(const char *path, const void *data, size_t size, splat_error *err);
/* Writes an 8-bit PNG of rgb [H,W,3] (clamped to [0, 1]) and, when alpha is not NULL, alpha
 * [H,W]. Atomic. */
SPLAT_API splat_status splat_write_png(const char *path, const float *rgb, const float *alpha, uint32_t width, uint32_t height,
                             splat_error *err);
/* Reads cameras (splatc's cameras.json or the original 3DGS one): *cams [n] freed with splat_free. */
SPLAT_API splat_status splat_read_cameras(const char *path, splat_camera **cams, uint32_t *n, splat_error *err);
/* The same, with each camera's name as the file gives it ("img_name" of the 3DGS form, "name" of
 * splatc's; "" where it has none): *names [n], one allocation freed with splat_free. */
SPLAT_API splat_status splat_read_cameras_named(const char *path, splat_camera **cams, char ***names, uint32_t *n,
                                                splat_error *err);
/* Writes cameras [n] in the form of the original 3DGS code's cameras.json, a list of {id (0..n-1),
 * img_name (names[i], or "" when names is NULL), width, height, position (the camera's centre),
 * rotation (camera-to-world, by rows), fx, fy}, adding "cx", "cy" (the principal point, which the
 * form puts at the centre) and "t" (the world-to-camera translation, which the position gives only
 * to rounding). splat_read_cameras reads back the same cameras bit for bit; 3DGS tools read it.
 * Atomic. */
SPLAT_API splat_status splat_write_cameras(const char *path, const splat_camera *cams, const char *const *names,
                                           uint32_t n, splat_error *err);

/* ------------------------------------------------------------------ viewer */

/* A live viewer in the browser: a small HTTP/WebSocket server (libwebsockets) that serves a page
 * embedded in the library and, for every client, renders frames on the GPU from the camera the
 * page asks for and sends them as JPEG. It shows a fixed scene (splatc view) or a training run
 * while it trains (splatc train --viewer): then the training loop copies the parameters on the
 * GPU between two iterations into the viewer's own buffers, at most one copy in flight and no
 * wait added to training, and the viewer renders them on its own command buffers. A viewer only
 * reads: training gives the same bits with or without one.
 *
 *     splat_viewer *v;
 *     splat_viewer_init(&v, ctx, &(splat_viewer_desc){.port = 8765}, &err);  // listens now
 *     splat_viewer_attach(v, trainer, &err);
 *     while (splat_trainer_step(trainer) < steps) {
 *         splat_trainer_run(trainer, next_stop, &err);          // a second or so of training
 *         splat_viewer_control_state c;
 *         do splat_viewer_control(v, 100, &c);                  // pause / resume / save now
 *         while (c.paused);
 *     }
 *     splat_viewer_attach(v, NULL, &err);                       // before splat_trainer_free
 *     splat_viewer_free(v);
 *
 * The server and the renderer run on threads of their own; the functions below are called from
 * one thread (the one that runs the trainer). The page is for people on this machine unless
 * `host` says otherwise: it has no authentication. */
typedef struct splat_viewer splat_viewer;

#define SPLAT_VIEWER_PORT_ANY 0xffffffffu

typedef struct splat_viewer_desc {
    const char *host;                /* IPv4 address to listen on: NULL: 127.0.0.1 (this machine only);
                                        "0.0.0.0": every interface */
    uint32_t port;                   /* 0: 8765; SPLAT_VIEWER_PORT_ANY: a free port the system picks
                                        (splat_viewer_port) */
    uint32_t max_fps;                /* frames per second per client at most (0: 30) */
    uint32_t max_side;               /* the largest frame width or height a client may ask for (0: 2048) */
    /* Where log lines go (a client's malformed message, a refused connection), without a newline;
     * NULL: stderr, prefixed "splatc: viewer: ". Called from the viewer's threads. */
    void (*log)(void *user, const char *line);
    void *log_user;
} splat_viewer_desc;

/* Binds host:port and starts serving (a port in use is SPLAT_ERR_IO, saying so, before anything
 * else starts). Frames are answered once a scene or a trainer is given. */
SPLAT_API splat_status splat_viewer_init(splat_viewer **v, splat_ctx *ctx, const splat_viewer_desc *desc, splat_error *err);
/* The port listened on. */
SPLAT_API uint32_t splat_viewer_port(const splat_viewer *v);
/* Shows a fixed scene, copied to the GPU here, rendered with `desc` (NULL: the defaults). Once. */
SPLAT_API splat_status splat_viewer_set_scene(splat_viewer *v, const splat_scene *scene, const splat_render_desc *desc,
                                              splat_error *err);
/* Cameras the page lists (to jump to) and draws as frustums: cams [n], names [n] (NULL: "camera k");
 * copied. A trainer brings its dataset's cameras itself. */
SPLAT_API splat_status splat_viewer_set_cameras(splat_viewer *v, const splat_camera *cams, const char *const *names,
                                                uint32_t n, splat_error *err);
/* Shows a training run as it trains (once; from the thread that runs it, between runs). NULL
 * detaches the trainer, which must happen before splat_trainer_free: the page keeps showing the
 * last snapshot. */
SPLAT_API splat_status splat_viewer_attach(splat_viewer *v, splat_trainer *t, splat_error *err);
/* Training's progress, for the page's numbers and chart (from the progress callback). */
SPLAT_API void splat_viewer_progress(splat_viewer *v, const splat_train_progress *p);

/* The control interface, asked between two runs of splat_trainer_run. */
typedef struct splat_viewer_control_state {
    bool paused;                     /* a page paused training: ask again (training stays where it is)
                                        until this is false */
    uint32_t save;                   /* save-now requests since the last call (0 or more) */
} splat_viewer_control_state;

/* What the pages asked for. Waits up to wait_ms for a request when training is paused (0: does
 * not wait), and meanwhile answers the viewer's snapshot requests, so the page still renders the
 * paused scene. The first call that returns paused tells the pages training has stopped. */
SPLAT_API void splat_viewer_control(splat_viewer *v, uint32_t wait_ms, splat_viewer_control_state *out);
/* A line every page shows (for instance where a save-now wrote its file). */
SPLAT_API void splat_viewer_note(splat_viewer *v, const char *text);
/* Stops the server (clients are disconnected) and frees everything. */
SPLAT_API void splat_viewer_free(splat_viewer *v);

/* ------------------------------------------------------------------ demo */

typedef struct splat_demo_desc {
    uint32_t width, height;          /* 0: 128 x 96 */
    uint32_t n_views;                /* 0: 64 (every 8th is held out with --eval) */
} splat_demo_desc;

/* Writes a small COLMAP scene into `dir` (created if missing): a procedural object made of
 * Gaussians, rendered by splatc itself from cameras on a sphere (images/), with the text model
 * in sparse/0 (one PINHOLE camera, the poses, and a sparse point cloud like SfM gives: a
 * jittered subset of the object's centres). The ground truth is written as
 * dir/ground_truth.ply. */
SPLAT_API splat_status splat_make_demo(splat_ctx *ctx, const char *dir, const splat_demo_desc *desc, splat_error *err);

#ifdef __cplusplus
}
#endif
#endif /* SPLATC_H */
