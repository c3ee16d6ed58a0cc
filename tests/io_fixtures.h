/* Fixture writers for the io tests: byte buffers, files, PNG and JPEG written directly through
 * libpng and libjpeg (not through splatc), and COLMAP / NeRF-synthetic scenes. */
#ifndef SPLAT_TEST_IO_FIXTURES_H
#define SPLAT_TEST_IO_FIXTURES_H

#include "harness.h"
#include "io/io.h"

/* ----------------------------------------------------------------- bytes and files */

typedef struct tbuf {
    uint8_t *p;
    size_t n, cap;
} tbuf;

void tb_bytes(tbuf *b, const void *data, size_t n);
void tb_u8(tbuf *b, uint8_t v);
void tb_u32(tbuf *b, uint32_t v);
void tb_u64(tbuf *b, uint64_t v);
void tb_f32(tbuf *b, float v);
void tb_f64(tbuf *b, double v);
void tb_printf(tbuf *b, const char *fmt, ...) SPLAT_PRINTF(2, 3);
void tb_free(tbuf *b);

/* A path in the case's scratch folder, printf-style; valid until 32 more calls. */
const char *t_path(const char *fmt, ...) SPLAT_PRINTF(1, 2);
void t_mkdir(const char *path);
bool t_write(const char *path, const void *data, size_t n);
/* malloc'd, NULL when the file cannot be read. */
uint8_t *t_read(const char *path, size_t *n);
bool t_exists(const char *path);
/* Entries in a folder, "." and ".." not counted; -1 when it cannot be read. */
int t_count_entries(const char *dir);
/* True when `msg` contains `part`. */
bool t_has(const char *msg, const char *part);

/* ----------------------------------------------------------------------- images */

/* A PNG through libpng: `rows` are `h` rows of `row_bytes` in the file's own sample layout
 * (16-bit samples big-endian). palette/trns may be NULL. */
bool t_write_png(const char *path, uint32_t w, uint32_t h, int color_type, int bit_depth, const uint8_t *rows,
                 size_t row_bytes, const uint8_t *palette_rgb, int n_palette, const uint8_t *trns, int n_trns,
                 bool interlace);
/* A JPEG through libjpeg: 1 (grey) or 3 (RGB) components, quality 0..100. */
bool t_write_jpeg(const char *path, uint32_t w, uint32_t h, int components, const uint8_t *pixels, int quality);
/* The same with arithmetic coding (SOF9) when `arithmetic`, else Huffman. */
bool t_write_jpeg_coded(const char *path, uint32_t w, uint32_t h, int components, const uint8_t *pixels, int quality,
                        bool arithmetic);
/* A small random RGB PNG of the given size. */
bool t_write_random_png(const char *path, uint32_t w, uint32_t h);

/* ---------------------------------------------------------------------------- SPZ */

/* Rewrites a version-3 SPZ (gzip, as splatc writes it) as version 4 (a 32-byte header, a table of
 * contents, one zstd stream per attribute), with extension records ext [ext_n] (may be empty) and
 * flags_extra or'ed into the flags: a writer of the layout independent of src/io/spz.c. */
bool t_spz_v4_from_v3(const char *v3, const char *v4, const uint8_t *ext, size_t ext_n, uint8_t flags_extra);

/* ----------------------------------------------------------------------- COLMAP */

typedef struct t_cam {
    uint32_t id;
    int model;               /* 0 SIMPLE_PINHOLE, 1 PINHOLE, or another COLMAP id */
    uint64_t width, height;
    double params[16];
} t_cam;

typedef struct t_img {
    uint32_t id;
    double q[4], t[3];
    uint32_t camera_id;
    char name[64];
    uint32_t n2d;            /* 2D points written (random), ignored by splatc */
    uint32_t w, h;           /* size of the file in images/ */
    uint32_t w2, h2;         /* size of the file in images_2/ */
} t_img;

typedef struct t_pt {
    double xyz[3];
    uint8_t rgb[3];
    uint32_t track;
} t_pt;

typedef struct t_colmap {
    t_cam cams[4];
    int n_cams;
    t_img imgs[32];
    int n_imgs;
    t_pt pts[64];
    int n_pts;
} t_colmap;

int t_model_params(int model);
/* A random model: 2 cameras (PINHOLE, SIMPLE_PINHOLE), 9 to 20 images in random file order
 * (some the camera's size, some not), up to 40 points. */
void t_colmap_random(t_colmap *m);
/* Writes cameras/images/points3D (.bin or .txt) into `model_dir` (created). */
void t_colmap_write(const t_colmap *m, const char *model_dir, bool text);
/* Writes the images into <scene>/images/ and, when `with_2` is set, <scene>/images_2/. */
void t_colmap_write_images(const t_colmap *m, const char *scene, bool with_2);

#endif
