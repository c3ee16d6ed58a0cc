/* What the viewer's tests share: a random scene with cameras around it, the tool run in the
 * background, images compared by PSNR, JPEG frames decoded. */
#ifndef SPLAT_TEST_VIEW_SUPPORT_H
#define SPLAT_TEST_VIEW_SUPPORT_H

#include <sys/types.h>

#include "harness.h"

/* A random scene of n Gaussians (degree 1, in a ball of radius 1 about the origin, from the
 * case's seed) and n_cams cameras of w x h looking at the origin from about 4 units away. */
void t_view_scene(splat_scene *scene, uint32_t n, splat_camera *cams, uint32_t n_cams, uint32_t w, uint32_t h);

/* PSNR in dB between two [H,W,channels] 8-bit images over their RGB values (99 when equal). */
double t_psnr8(const uint8_t *a, int a_channels, const uint8_t *b, int b_channels, uint32_t w, uint32_t h);

/* Decodes a JPEG into rgb [H,W,3] (malloc'd); false on a bad stream. */
bool t_jpeg_decode(const uint8_t *data, size_t n, uint8_t **rgb, uint32_t *w, uint32_t *h);

/* A frame message of the viewer (src/view/view.h; `header` bytes before the strips) decoded to
 * rgb [H,W,3] (malloc'd), its size and strip count out. False, with the reason in `why`, unless its
 * strips start at row 0, each where the one before ended, cover the height exactly, each a JPEG of
 * width x its rows, and their bytes fill the message to its end. */
bool t_frame_decode(const uint8_t *msg, size_t n, size_t header, uint8_t **rgb, uint32_t *w, uint32_t *h, uint32_t *strips,
                    char *why, size_t why_size);

/* The tool in the background: `args` (shell words) with stdout and stderr into `log`. */
typedef struct t_proc {
    pid_t pid;
    char log[700];
} t_proc;

bool t_proc_start(t_proc *p, const char *args, const char *log);
/* Waits up to timeout_s for the port in its "viewer at http://HOST:PORT/" line; 0 when it never
 * came (or the tool exited first). */
uint32_t t_proc_viewer_port(t_proc *p, double timeout_s);
/* Waits up to timeout_s for its exit: the exit code, -2 on a timeout (then it is killed), -1 for
 * a death by signal. */
int t_proc_wait(t_proc *p, double timeout_s);
/* Its log so far (malloc'd, NUL-terminated). */
char *t_proc_log(const t_proc *p);

#endif
