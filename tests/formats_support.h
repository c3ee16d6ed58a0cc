/* What the scene-format tests share: random scenes whose Gaussians a lossy round trip cannot
 * confuse (positions on a jittered grid, far apart next to any format's position error), matching
 * a decoded scene to its original Gaussian by Gaussian, and each attribute's error measured the
 * way docs/FORMATS.md states the bounds. */
#ifndef SPLAT_TEST_FORMATS_SUPPORT_H
#define SPLAT_TEST_FORMATS_SUPPORT_H

#include "harness.h"
#include "io/io.h"

/* n Gaussians of SH degree `degree`: centres on a jittered grid of `spacing` (any two at least
 * 0.4 spacing apart) around `centre`, log-scales in [-7, 1], random rotations (not normalised),
 * opacities over (0, 1), colours 0.5 + SH_C0 dc in [0.03, 0.97], SH rest in [-0.9, 0.9]. */
void tf_scene(splat_scene *s, uint32_t n, uint32_t degree, double spacing, double centre);

/* For each Gaussian of `got`, the index of its original in `want` (nearest centre): [got->count],
 * malloc'd. NULL (and a failed check) when the counts differ or two decoded Gaussians pick the
 * same original. */
uint32_t *tf_match(const splat_scene *want, const splat_scene *got);

/* One attribute's error over a scene. */
typedef struct tf_err {
    double max, sum;
    uint32_t worst;          /* the decoded Gaussian where max was reached */
    uint64_t n;
} tf_err;

typedef enum tf_attr { TF_POS, TF_SCALE, TF_COLOUR, TF_OPACITY, TF_ROT, TF_SH, TF_ATTRS } tf_attr;
extern const char *const tf_attr_name[TF_ATTRS];

void tf_add(tf_err *e, double err, uint32_t at);
/* The rotation angle (radians) between two quaternions (w, x, y, z), neither necessarily unit. */
double tf_angle(const float *a, const float *b);
double tf_colour(float dc);
double tf_sigmoid(double x);
/* Prints the errors as a line ("name: pos max .. mean .., ...") for the report. */
void tf_print(const char *what, const tf_err *e);

/* Which encoder wrote a file: the bounds follow from how it rounds (splat-transform truncates where
 * splatc rounds, and quantises SPZ's SH more coarsely). */
typedef enum tf_encoder { ENC_SPLATC, ENC_TOOL } tf_encoder;

/* SOG's codebooks and means range, from meta.json. */
typedef struct sog_meta {
    float scales[256], sh0[256], shn[256];
    int n_scales, n_sh0, n_shn;
    double lo[3], hi[3];
    uint32_t palette;
} sog_meta;

/* Reads meta.json of a .sog bundle, or of a SOG folder (path of its meta.json). */
bool tf_sog_meta(const char *path, sog_meta *m);
/* The codebook entry nearest v (a plain scan, independent of io/quantize.c). */
float tf_nearest_entry(const float *cb, int n, double v);
/* Checks `got` (decoded from a file of `format`) against `want`, Gaussian by Gaussian within the
 * bounds docs/FORMATS.md derives for that format and encoder; errors [TF_ATTRS] receive what was
 * measured. SOG needs its meta (codebooks). The SH of splat-transform's SOG is a shared palette with
 * no per-Gaussian bound: checked as a whole (it must explain more than 20 % of the variance). */
void tf_check(splat_file_format format, tf_encoder enc, const splat_scene *want, const splat_scene *got,
              const sog_meta *meta, tf_err *errors);

#endif
