/* What the libFuzzer harnesses of fuzz/ share: a private scratch folder per process, the input
 * written to files in it, the input split into parts, the readers' contract checked on every
 * call, and the small images the dataset scenes refer to. A broken contract aborts, which
 * libFuzzer reports as a crash with the input that caused it. */
#ifndef SPLAT_FUZZ_H
#define SPLAT_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/io.h"

/* The process's scratch folder (mkdtemp under $TMPDIR or /tmp, created on first use, removed at
 * exit), and a path in it for `name`; the returned path lives until the next 32 calls. */
const char *fuzz_dir(void);
const char *fuzz_path(const char *name);
/* Creates a folder (and its parents). */
void fuzz_mkdir(const char *path);
/* Writes `n` bytes to `path`, replacing it; aborts when it cannot (a full /tmp is no finding). */
void fuzz_write(const char *path, const uint8_t *data, size_t n);
/* Removes `path` if it exists. */
void fuzz_remove(const char *path);

/* The inputs of the multi-file harnesses: a little-endian u16 length, then that many bytes
 * (fewer where the input ends first). fuzz_rest takes what is left. */
typedef struct fuzz_input {
    const uint8_t *p;
    size_t n;
} fuzz_input;

uint8_t fuzz_byte(fuzz_input *in);
fuzz_input fuzz_part(fuzz_input *in);
fuzz_input fuzz_rest(fuzz_input *in);

/* The contract of src/io/io.h for a reader's result: SPLAT_OK, or one of the readers' error
 * statuses, repeated in err->status, with a message that starts with `prefix` (the path the
 * reader was given; NULL accepts any absolute path, for datasets whose frames name their own).
 * With SPLAT_FUZZ_VERBOSE set in the environment, prints each result (to replay an input). */
void fuzz_check(splat_status st, const splat_error *err, const char *prefix, const char *what);
/* Aborts with a message when `cond` is false. */
#define FUZZ_ASSERT(cond, ...)                                                              \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

/* Reads the scene file `path` with splat__scene_read (the format by its name) and checks the
 * contract: on failure nothing allocated; on success count = capacity, degree 0..3, every value
 * finite. Frees what it got. */
void fuzz_read_scene(const char *path, const char *what);

/* The images the COLMAP seeds name (images/ and images_2/ of a scene): PNGs of several
 * kinds, a JPEG, a name with a space. */
#define FUZZ_COLMAP_IMAGES 4
extern const char *const fuzz_colmap_images[FUZZ_COLMAP_IMAGES];
/* Writes them into <scene>/images/ and, half size, <scene>/images_2/. */
void fuzz_write_colmap_images(const char *scene);
/* The images the NeRF-synthetic seeds name, relative to the scene folder (the frames name them
 * without ".png", as the Blender scenes do). */
#define FUZZ_NERF_IMAGES 4
extern const char *const fuzz_nerf_images[FUZZ_NERF_IMAGES];
void fuzz_write_nerf_images(const char *scene);

/* Loads the scene folder with splat__dataset_load, checks the contract (on success: views with
 * names, paths, sizes and finite cameras; points where the count says), frees what it got.
 * `flags` is the input's first byte: bit 0 desc.eval, bits 1-2 desc.images_factor (0..3; 2 finds
 * images_2/, 3 downsamples images/). `prefix` as for fuzz_check. */
void fuzz_load_dataset(const char *scene, uint8_t flags, const char *prefix);

#endif
