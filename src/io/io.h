/* io: datasets (COLMAP, NeRF-synthetic), images, PLY, camera files and checkpoints.
 * Host only. Every reader is safe on untrusted input: a malformed, truncated or lying file gives
 * SPLAT_ERR_FORMAT (or _IO / _UNSUPPORTED / _NONFINITE) with a message that starts with the
 * file's path and says what is wrong, never a crash. Every writer is atomic: it writes a
 * temporary file beside the target and renames it, so a failure leaves the old file intact. */
#ifndef SPLAT_IO_H
#define SPLAT_IO_H

#include "core/core.h"

/* ------------------------------------------------------------------------- images */

typedef struct splat_image {
    uint32_t width, height;
    uint8_t *rgba;           /* [H,W,4] 8-bit, straight (not premultiplied) alpha */
} splat_image;

/* Decodes PNG or JPEG (chosen by content, not extension). Grey, grey+alpha, RGB, RGBA, palette
 * and 16-bit inputs are converted to RGBA8 (alpha 255 where the file has none). */
splat_status splat__image_load(const char *path, splat_image *img, splat_error *err);
/* Reads only the size from the header. */
splat_status splat__image_probe(const char *path, uint32_t *width, uint32_t *height, splat_error *err);
/* Writes an 8-bit PNG; `channels` 3 (RGB, alpha dropped) or 4. Atomic. */
splat_status splat__image_save_png(const char *path, const splat_image *img, int channels, splat_error *err);
/* Box-filter downsampling by an integer factor; the size is floor(size / factor), at least 1
 * (a box at the right or bottom edge averages the pixels that exist). Colour is averaged
 * weighted by alpha, so transparent pixels do not bleed into edges (with constant alpha this is
 * the plain box average); alpha is averaged. */
splat_status splat__image_downsample(const splat_image *src, uint32_t factor, splat_image *dst, splat_error *err);
void splat__image_free(splat_image *img);

/* Resampling to any size (resample.c; evaluation at other scales, docs/TRAIN.md "Evaluation at
 * other scales"). Each axis on its own, by how its size changes:
 *   shrinks   area averaging: an output pixel is the mean of the input pixels its footprint
 *             [i w / w2, (i + 1) w / w2) covers, each weighted by the length it covers (at half
 *             size on an even size: the mean of 2 pixels, exactly)
 *   grows     Keys' bicubic (a = -0.5) at the output pixel's centre, (i + 0.5) w / w2 - 0.5 in
 *             input pixels; taps past the edge read the edge pixel
 *   keeps     a copy
 * in double precision, the results clamped to [0, 1]. Values are filtered as they are: for an
 * image, its 8-bit sRGB-encoded values / 255, with no conversion to linear light.
 *   src [h,w,channels], dst [h2,w2,channels] (the caller's); every size at least 1. */
splat_status splat__resample(const float *src, uint32_t w, uint32_t h, uint32_t channels, float *dst, uint32_t w2,
                             uint32_t h2, splat_error *err);
/* `src` composited on `background` (colour x alpha + background x (1 - alpha), as training sees
 * its images), resampled as above and rounded to 8 bits, into *dst (opaque, w x h; allocated here:
 * splat__image_free). Compositing first makes the result the resampling of the image as seen,
 * bicubic's overshoot at alpha edges included. */
splat_status splat__image_resample(const splat_image *src, const float background[3], uint32_t w, uint32_t h,
                                   splat_image *dst, splat_error *err);
/* A mask ([h,w] bytes, nonzero counts) resampled as above to *out ([h2,w2] 0/1 bytes, allocated
 * here; splat__free): a pixel counts where the result is at least 0.5. */
splat_status splat__mask_resample(const uint8_t *mask, uint32_t w, uint32_t h, uint32_t w2, uint32_t h2, uint8_t **out,
                                  splat_error *err);

/* A growable memory buffer (what the JPEG encoder writes into): `data` [cap] from splat__realloc,
 * `size` bytes used. Zero-initialised is empty; free `data` with splat__free. */
typedef struct splat_bytes {
    uint8_t *data;
    size_t size, cap;
} splat_bytes;

/* Encodes pixels [H,W,channels] 8-bit (channels 3: RGB; 4: RGBX, the fourth byte ignored) as a
 * baseline JPEG of `quality` (1..100) into out (emptied first, grown as needed). From quality 90
 * on chroma keeps full resolution (4:4:4; below, 4:2:0). */
splat_status splat__jpeg_encode(const uint8_t *pixels, int channels, uint32_t width, uint32_t height, int quality,
                                splat_bytes *out, splat_error *err);

/* -------------------------------------------------------------- lens distortion */

/* The distortion models of COLMAP (camera_models.h), by their parameters after fx fy cx cy, and
 * nerfstudio's perspective camera (camera_utils.py: radial to r^8, tangential; in a
 * transforms.json's k1 k2 k3 k4 p1 p2). */
typedef enum splat_distortion_model {
    SPLAT_DISTORTION_NONE = 0,
    SPLAT_DISTORTION_SIMPLE_RADIAL,  /* k */
    SPLAT_DISTORTION_RADIAL,         /* k1 k2 */
    SPLAT_DISTORTION_OPENCV,         /* k1 k2 p1 p2 */
    SPLAT_DISTORTION_FULL_OPENCV,    /* k1 k2 p1 p2 k3 k4 k5 k6 */
    SPLAT_DISTORTION_OPENCV_FISHEYE, /* k1 k2 k3 k4 */
    SPLAT_DISTORTION_NERFSTUDIO,     /* k1 k2 k3 k4 p1 p2 */
} splat_distortion_model;

typedef struct splat_distortion {
    splat_distortion_model model;
    double k[8];             /* the model's parameters in COLMAP's order (nerfstudio's for NERFSTUDIO) */
} splat_distortion;

/* How many parameters the model has. */
uint32_t splat__distortion_params(splat_distortion_model model);
/* True when every parameter is 0 (such a camera is a pinhole, and is not resampled). */
bool splat__distortion_is_zero(const splat_distortion *d);
/* Normalised undistorted (u, v) -> normalised distorted, COLMAP's formulas. */
void splat__distort(const splat_distortion *d, double u, double v, double *ud, double *vd);
/* The inverse, iteratively; false when it does not converge (to 1e-9 of the point). */
bool splat__undistort(const splat_distortion *d, double ud, double vd, double *u, double *v);
/* The pinhole camera a distorted one (`raw`, at its image's size) is undistorted to: the same
 * focal lengths, the largest axis-aligned box of undistorted points inside the image's border
 * (no pixel without data), at most twice the image on each side of the principal point. A
 * distortion that is all zero gives `raw` itself. Errors name `path` and `what`. */
splat_status splat__undistorted_camera(const char *path, const char *what, const splat_camera *raw,
                                       const splat_distortion *d, splat_camera *out, splat_error *err);
/* Resamples `src` (taken by `raw`, or a scaled copy of it) into `cam`'s image: each pixel centre
 * of `cam`, distorted, sampled bilinearly (colour weighted by alpha). dst is allocated here. */
splat_status splat__image_undistort(const splat_image *src, const splat_camera *raw, const splat_distortion *d,
                                    const splat_camera *cam, splat_image *dst, splat_error *err);

/* ----------------------------------------------------------------------- datasets */

typedef struct splat_data_view {
    char *name;              /* image file name relative to the image folder, e.g. "DSC_0001.JPG" */
    char *image_path;        /* path to open */
    splat_camera camera;     /* the pinhole camera training sees: intrinsics scaled to the image's actual
                                size, and undistorted (see raw) */
    splat_camera raw;        /* the camera as the dataset gives it, at the image's actual size */
    splat_distortion distortion;  /* of raw; NONE (or all zero) when camera is raw */
    char *mask_path;         /* the view's mask, or NULL (the dataset has none) */
    uint32_t downsample;     /* 1, or the factor to apply after loading when no images_N/ existed */
    bool is_test;            /* held out for evaluation */
} splat_data_view;

/* The image of a view as training sees it: loaded, downsampled by view->downsample, undistorted
 * to view->camera, and checked against its size. */
splat_status splat__view_image_load(const splat_data_view *view, splat_image *out, splat_error *err);
/* The view's mask as training sees it, [H,W] bytes of view->camera: 1 where the pixel counts, 0
 * where it is ignored. A mask file's pixel counts where its value (the largest of R, G, B) is at
 * least 128 of 255, so 0 ignores and the noise of a JPEG mask does not matter; it is downsampled
 * and undistorted with its image (at 50 %). A view without a mask gets every pixel. *mask is
 * allocated here (free with splat__free). */
splat_status splat__view_mask_load(const splat_data_view *view, uint8_t **mask, splat_error *err);

typedef struct splat_dataset splat_dataset;
/* Views idx[0..n) of `ds` loaded as above into images[v] (and masks[v] when masks is not NULL),
 * indexed by view, on as many threads as the machine has cores (at most 16): the same pixels
 * as one after the other, and on failure the error of the first failing view in idx order, with
 * everything loaded freed. Allocation hooks (splat_set_allocator) are called from those
 * threads. */
splat_status splat__views_load(const splat_dataset *ds, const uint32_t *idx, uint32_t n, splat_image *images,
                               uint8_t **masks, splat_error *err);

/* The median distance of the cameras from the point they look at (the per-axis median of the
 * points of their viewing axes nearest the origin, after turning the cameras' mean up to -y):
 * the world unit of gsplat's COLMAP loader, which scales captures so that it is 1 (focus.c).
 * 1 for no cameras, a camera that is not finite, or when it is not a positive finite number. */
double splat__focus_distance(const splat_camera *cams, uint32_t n);

typedef enum splat_dataset_kind {
    SPLAT_DATASET_COLMAP = 1,
    SPLAT_DATASET_NERF_SYNTHETIC = 2,
    SPLAT_DATASET_TRANSFORMS = 3,    /* nerfstudio's transforms.json */
} splat_dataset_kind;

typedef struct splat_dataset {
    splat_dataset_kind kind;
    uint32_t n_views;
    splat_data_view *views;       /* [n_views] sorted by name (COLMAP, transforms.json); train then test
                                     (NeRF-synthetic) */
    uint32_t n_points;       /* SfM points (0 for NeRF-synthetic, and transforms.json without a PLY) */
    float *points;           /* [P,3] */
    uint8_t *point_colors;   /* [P,3] */
    bool has_alpha;          /* images carry alpha to composite on the background (NeRF-synthetic) */
} splat_dataset;

typedef struct splat_dataset_desc {
    const char *path;        /* the scene folder */
    uint32_t images_factor;  /* 0 or 1: images/; N: images_N/ (or images/ downsampled by N) */
    bool eval;               /* COLMAP, transforms.json without split lists: hold out every 8th image
                                in sorted name order */
} splat_dataset_desc;

/* Detects the layout, in this order: NeRF-synthetic (transforms_train.json, transforms_test.json),
 * COLMAP (sparse/0/ or sparse/ with cameras, images, points3D as .bin or .txt), nerfstudio
 * (transforms.json). COLMAP cameras may be PINHOLE, SIMPLE_PINHOLE or the distorted SIMPLE_RADIAL,
 * RADIAL, OPENCV, FULL_OPENCV and OPENCV_FISHEYE; transforms files' camera_model may be
 * SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV (nerfstudio's perspective lens, k1..k4,
 * p1, p2) or OPENCV_FISHEYE; distorted views are undistorted (see splat__undistorted_camera);
 * other models are refused naming the model. Masks: a COLMAP scene's masks/ (masks_N/ beside
 * images_N/) holds one per image, named as the image, or the image's name with ".png" appended,
 * or with its extension replaced by ".png"; once the folder exists, an image without a mask is an
 * error; transforms.json gives each frame's "mask_path" (every frame or none). Image sizes are
 * read from the image headers, and a missing image is an error.
 * NeRF-synthetic: transforms_test.json may be absent; its views are always is_test (desc->eval
 * is for COLMAP and transforms.json); images_factor > 1 sets view.downsample.
 * transforms.json (docs/TRAIN.md, "Inputs"): images_N/<name> and masks_N/<name> for
 * images_factor N when they exist; "ply_file_path" the initial points; "applied_transform"
 * undone, so the views and points are in the capture's own frame; "train_filenames" with
 * "test_filenames" (or "val_filenames") split the views, frames in neither are left out.
 * On failure `ds` is left empty. */
splat_status splat__dataset_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err);
void splat__dataset_free(splat_dataset *ds);

/* ------------------------------------------------------------- Gaussian scene files */

/* Every format's reader and writer over a host scene (splat_scene_load / splat_scene_save of
 * include/splatc.h list the formats; docs/FORMATS.md what each stores and its error bounds).
 * Readers: `scene` is initialised by the reader (count = capacity; SH coefficients above the
 * file's degree are 0; every value finite) and left empty on failure; `info` may be NULL, and
 * receives the format read and at most one warning line. Writers: atomic; a non-finite value is
 * SPLAT_ERR_NONFINITE naming the Gaussian and leaves an existing file untouched. Lossy writers
 * say in their file's header comment what they keep and the error they add. */

/* By the path's name (case-insensitive): .compressed.ply before .ply; "meta.json" at the end is
 * a SOG folder. SPLAT_FILE_UNKNOWN otherwise. */
splat_file_format splat__scene_format(const char *path);
const char *splat__scene_format_name(splat_file_format format);
/* Dispatch by splat__scene_format; an unknown name is SPLAT_ERR_UNSUPPORTED naming the path and
 * the extensions known. */
splat_status splat__scene_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err);
splat_status splat__scene_write(const char *path, const splat_scene *scene, splat_error *err);

/* The 3DGS layout standard viewers read: binary little-endian, x y z, nx ny nz (0), f_dc_0..2,
 * f_rest_* channel-major (3*((D+1)^2-1) of them for D = scene->sh_degree), opacity, scale_0..2,
 * rot_0..3. Exact. */
splat_status splat__ply_write(const char *path, const splat_scene *scene, splat_error *err);
/* Reads that layout (binary little-endian or ASCII, f_rest of degree 0..3, in any property order,
 * float or double; nx ny nz optional and ignored; other elements ignored; other vertex properties,
 * of any scalar type, skipped and named in info->warning), and the compressed layout of
 * splat__ply_compressed_write, told apart by the header. An opacity of -inf or +inf (an opacity
 * of exactly 0 or 1, as splat-transform writes it) reads as the logit of 1e-6 or 1 - 1e-6; missing
 * properties, other non-finite values and truncation are errors naming the file. */
splat_status splat__ply_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err);
/* PlayCanvas's compressed PLY (ply_compressed.c); read through splat__ply_read. */
splat_status splat__ply_compressed_write(const char *path, const splat_scene *scene, splat_error *err);
/* antimatter15's .splat (splat.c). */
splat_status splat__splat_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err);
splat_status splat__splat_write(const char *path, const splat_scene *scene, splat_error *err);
/* Niantic's SPZ (spz.c): writes version 3 (gzip), reads 1 to 4. */
splat_status splat__spz_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err);
splat_status splat__spz_write(const char *path, const splat_scene *scene, splat_error *err);
/* PlayCanvas's SOG (sog.c): `path` a .sog zip bundle, or a meta.json whose folder holds the
 * images. */
splat_status splat__sog_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err);
splat_status splat__sog_write(const char *path, const splat_scene *scene, splat_error *err);
/* The same with a palette of at most `max_palette` SH entries (splat__sog_write: 65536), so tests
 * reach the clustering on small scenes. */
splat_status splat__sog_write_palette(const char *path, const splat_scene *scene, uint32_t max_palette,
                                      splat_error *err);

/* ------------------------------------------------------------------------ cameras */

/* Reads cameras for `splatc render`: the cameras.json of the original 3DGS code (a list of
 * {id, img_name, width, height, position, rotation (camera-to-world), fx, fy}, the principal point
 * at the centre; optional "cx", "cy" and "t", as splat__cameras_write_3dgs writes, override it and
 * the translation from the position, which "t" must match to 1e-5 of the camera's distance) and
 * splatc's own form (a list of {name, width, height, fx, fy, cx, cy, R (world-to-camera, 9), t (3)}).
 * names: [n] (may be NULL), freed by the caller with splat__free on each and the array. */
splat_status splat__cameras_read(const char *path, splat_camera **cams, char ***names, uint32_t *n,
                                splat_error *err);
/* Writes splatc's form (floats printed so that they read back exactly). Atomic; a non-finite
 * value is SPLAT_ERR_NONFINITE. */
splat_status splat__cameras_write(const char *path, const splat_camera *cams, const char *const *names,
                                 uint32_t n, splat_error *err);
/* Writes the 3DGS form (ids 0..n-1 in order, names as img_name) with three keys of splatc's: "cx"
 * and "cy" (the principal point, which the form puts at the centre) and "t" (the world-to-camera
 * translation, which "position" gives only to rounding). splat__cameras_read gives back the same
 * cameras bit for bit. Atomic; a non-finite value is SPLAT_ERR_NONFINITE, a singular rotation
 * SPLAT_ERR_INVALID_ARG. */
splat_status splat__cameras_write_3dgs(const char *path, const splat_camera *cams, const char *const *names,
                                      uint32_t n, splat_error *err);

/* -------------------------------------------------------------------- checkpoints */

/* A checkpoint is a list of named binary sections with a checksum each; what the sections
 * mean is the trainer's business. */
typedef struct splat_section {
    char name[32];
    void *data;
    uint64_t size;
} splat_section;

/* Atomic. */
splat_status splat__ckpt_write(const char *path, const splat_section *sections, uint32_t n, splat_error *err);
/* Reads every section (allocated here; free with splat__ckpt_free). A bad magic, version,
 * checksum or truncation is an error naming the file. */
splat_status splat__ckpt_read(const char *path, splat_section **sections, uint32_t *n, splat_error *err);
void splat__ckpt_free(splat_section *sections, uint32_t n);
/* The section called `name`, or NULL. */
const splat_section *splat__ckpt_find(const splat_section *sections, uint32_t n, const char *name);

/* ---------------------------------------------------------------- atomic writing */

/* Opens a temporary file beside `path`; splat__atomic_commit flushes, fsyncs and renames it over
 * `path`; splat__atomic_abort removes it. */
typedef struct splat_atomic_file {
    void *fp;                /* FILE * */
    char tmp_path[1024];
    char path[1024];
} splat_atomic_file;

splat_status splat__atomic_open(splat_atomic_file *f, const char *path, splat_error *err);
splat_status splat__atomic_commit(splat_atomic_file *f, splat_error *err);
void splat__atomic_abort(splat_atomic_file *f);
/* commit in two steps, for outputs of several files: finish (flushed, synced and closed; the
 * target untouched; on failure the temporary is gone) every file first, then publish (the
 * rename) each. A finished file that is not published is removed by splat__atomic_abort. */
splat_status splat__atomic_finish(splat_atomic_file *f, splat_error *err);
splat_status splat__atomic_publish(splat_atomic_file *f, splat_error *err);

#endif
