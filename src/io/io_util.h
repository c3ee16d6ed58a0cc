/* io internals shared by the readers and writers: whole-file reads, bounds-checked binary
 * cursors, little-endian stores, paths and JSON parsing with positioned errors. */
#ifndef SPLAT_IO_UTIL_H
#define SPLAT_IO_UTIL_H

#include <stdio.h>

#include "io/io.h"

typedef struct cJSON cJSON;

/* Reads a whole file (refusing ones larger than `max_size`) into a buffer with one extra NUL
 * byte after the content, so text parsers may treat it as a C string. Free with splat__free. */
splat_status splat__read_file(const char *path, size_t max_size, char **data, size_t *size, splat_error *err);
/* Parses a JSON file; a syntax error names the line and column. Free with cJSON_Delete. */
splat_status splat__json_read(const char *path, cJSON **root, splat_error *err);
/* Size of an open file in bytes, or -1. */
long long splat__file_size(FILE *fp);

/* "a/b", allocated; NULL when out of memory. */
char *splat__path_join(const char *a, const char *b);
bool splat__is_dir(const char *path);
bool splat__is_file(const char *path);

/* A bounds-checked cursor over bytes in memory; every read fails rather than run past the end. */
typedef struct splat_cursor {
    const uint8_t *p;
    size_t size, pos;
} splat_cursor;

static inline size_t splat__cursor_left(const splat_cursor *c) { return c->size - c->pos; }

static inline bool splat__cursor_bytes(splat_cursor *c, void *out, size_t n)
{
    if (splat__cursor_left(c) < n) return false;
    if (out) memcpy(out, c->p + c->pos, n);
    c->pos += n;
    return true;
}

static inline bool splat__cursor_u32(splat_cursor *c, uint32_t *v)
{
    uint8_t b[4];
    if (!splat__cursor_bytes(c, b, 4)) return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static inline bool splat__cursor_u64(splat_cursor *c, uint64_t *v)
{
    uint32_t lo, hi;
    if (!splat__cursor_u32(c, &lo) || !splat__cursor_u32(c, &hi)) return false;
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

static inline bool splat__cursor_f64(splat_cursor *c, double *v)
{
    uint64_t u;
    if (!splat__cursor_u64(c, &u)) return false;
    memcpy(v, &u, sizeof *v);
    return true;
}

static inline void splat__store_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static inline void splat__store_u64(uint8_t *p, uint64_t v)
{
    splat__store_u32(p, (uint32_t)v);
    splat__store_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t splat__load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Dataset loaders behind splat__dataset_load; `ds` is zeroed by the caller and freed by it on
 * failure, so a loader may leave it partly filled. */
splat_status splat__colmap_load(const char *model_dir, const splat_dataset_desc *desc, splat_dataset *ds,
                                splat_error *err);
splat_status splat__nerf_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err);
splat_status splat__transforms_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err);
/* The points of a point-cloud PLY (x y z, optional red green blue; any scalar types, ASCII or
 * binary, other properties and elements skipped), allocated here; a point with no colour is grey. */
splat_status splat__points_ply_read(const char *path, float **xyz, uint8_t **rgb, uint32_t *count, splat_error *err);
/* Reads the size of a view's image from its header: (*w0, *h0) as stored, (*w, *h) after the
 * view's downsampling (floor). A downsampling that leaves fewer than SPLAT_MIN_IMAGE_SIDE pixels a
 * side is SPLAT_ERR_INVALID_ARG naming the image (--images-factor 1000 trained on 1x1 images). */
#define SPLAT_MIN_IMAGE_SIDE 4u
splat_status splat__view_size(const splat_data_view *view, uint32_t *w0, uint32_t *h0, uint32_t *w, uint32_t *h,
                              splat_error *err);
/* A camera splatc can render from, after its intrinsics were scaled to its image: every value a
 * finite float (SPLAT_ERR_NONFINITE), focal lengths between 1e-3 and 1e5 times the image width
 * (fields of view from 180 degrees down to 0.001 of one) and the principal point within ten
 * image sizes of the image (SPLAT_ERR_FORMAT otherwise). `what` names the camera in the message
 * after `path`: "camera 3", "image \"a.jpg\"". */
splat_status splat__camera_check(const char *path, const char *what, const splat_camera *c, splat_error *err);
/* The image (w x h) and the size its intrinsics are given for (W x H) have the same shape, within
 * the rounding of images_N/ and 2 %: an image scaled to its camera anisotropically is a mistake (a
 * 96x128 image for a 128x96 camera). SPLAT_ERR_FORMAT naming `path` and `what` otherwise. */
splat_status splat__view_aspect_check(const char *path, const char *what, uint32_t w, uint32_t h, double W, double H,
                                      splat_error *err);
/* Rotation matrix [3,3] row-major from a unit quaternion (w, x, y, z). */
void splat__quat_to_mat(const double q[4], double R[9]);

/* True when `d` is finite and stays finite as a float (values past FLT_MAX by less than half a
 * float ulp round to FLT_MAX). */
static inline bool splat__finite_float(double d) { return isfinite(d) && fabs(d) < 0x1.ffffffp+127; }

/* Writes `n` bytes to an atomic file; a short write is an error naming the target. */
splat_status splat__atomic_write(splat_atomic_file *f, const void *data, size_t n, splat_error *err);

/* ------------------------------------------------------- what the scene formats share */

/* A lossy writer's check before it writes anything: every value of rows [0, count) the file will
 * hold (SH up to `degree`) finite; SPLAT_ERR_NONFINITE naming `path` and the Gaussian otherwise. */
splat_status splat__scene_finite(const char *path, const splat_scene *s, uint32_t degree, splat_error *err);
/* The highest SH degree (up to s->sh_degree) with a nonzero coefficient in rows [0, count): the
 * lossy writers store no band that is zero throughout (a quantised zero is not always zero: the
 * compressed PLY's 8 bits read as +-1/64, which cost a briefly trained scene 0.6 dB). */
uint32_t splat__scene_sh_used(const splat_scene *s);
double splat__sigmoid(double x);
/* The logit of an opacity a format stored in [0, 1], clamped to [EPS, 1 - EPS] first: a stored 0
 * or 1 (a byte of 0 or 255) has no finite logit, and scenes hold finite values. */
#define SPLAT_OPACITY_EPS 1e-6
float splat__logit_clamped(double p);
/* q [4] (w, x, y, z) normalised in double; a zero or non-finite one becomes the identity. */
void splat__quat_unit(const float *q, double out[4]);
/* The colour a degree-0 coefficient adds: 0.5 + SH_C0 * dc. */
#define SPLAT_SH_C0 0.28209479177387814
/* The rows of `s` in Morton (Z-curve) order of their positions over the scene's bounding box, 21
 * bits an axis, ties in row order: [count] allocated here (free with splat__free), NULL when out
 * of memory. The chunked formats write in this order so that a chunk's Gaussians lie close. */
uint32_t *splat__morton_order(const splat_scene *s);

#endif
