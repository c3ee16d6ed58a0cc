/* What the scene-format tests share: random scenes whose Gaussians a lossy round trip cannot
 * confuse (positions on a jittered grid, far apart next to any format's position error), matching
 * a decoded scene to its original Gaussian by Gaussian, and each attribute's error measured the
 * way docs/FORMATS.md states the bounds. */
#ifndef SPLAT_TEST_FORMATS_SUPPORT_H
#define SPLAT_TEST_FORMATS_SUPPORT_H

#include "harness.h"

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

#endif
