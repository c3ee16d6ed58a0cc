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
const char *splat_status_str(splat_status status);

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

void splat_set_allocator(const splat_allocator *allocator);

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

/* A Gaussian scene in host memory, structure of arrays. Rows [0, count) are valid; the arrays
 * hold `capacity` rows so that growth needs no reallocation until count reaches capacity. */
typedef struct splat_scene {
    uint32_t count;
    uint32_t capacity;
    uint32_t sh_degree;      /* degree the scene was trained to (0..3); decides PLY f_rest count */
    float *means;            /* [capacity,3] world positions */
    float *log_scales;       /* [capacity,3] natural log of the standard deviations */
    float *quats;            /* [capacity,4] rotation w,x,y,z, not necessarily normalised */
    float *opacities;        /* [capacity] logits: opacity = 1 / (1 + exp(-logit)) */
    float *sh;               /* [capacity,16,3] coefficient-major, channel-minor */
} splat_scene;

/* Allocates a scene of `capacity` rows with count 0. Free with splat_scene_free. */
splat_status splat_scene_init(splat_scene *scene, uint32_t capacity, splat_error *err);
/* Grows the arrays to hold at least `capacity` rows, keeping rows [0, count). */
splat_status splat_scene_reserve(splat_scene *scene, uint32_t capacity, splat_error *err);
void splat_scene_free(splat_scene *scene);

#ifdef __cplusplus
}
#endif
#endif /* SPLATC_H */
