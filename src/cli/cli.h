/* splatc: what the tool's files share besides main.c. The tool uses the public API (include/splatc.h)
 * only. */
#ifndef SPLATC_CLI_H
#define SPLATC_CLI_H

#include <pthread.h>

#include "splatc.h"

/* ------------------------------------------------------------ run control (runctl.c) */

/* The control points of `splatc train`'s loop. A request (a signal now; the viewer's buttons
 * later) interrupts the trainer (splat_trainer_interrupt, which only sets a flag its loop reads
 * before each step, so training runs as fast as without it); splat_trainer_run then returns at a
 * step boundary, and the loop takes the request with runctl_take and acts on it between runs.
 *
 * Signals, taken by a thread of runctl's own (sigwait), never by a handler:
 *   SIGINT, SIGTERM   in the loop: stop after the iterations in flight, save, exit 128 + the signal;
 *                     a second one, or one outside the loop (loading, the final evaluation), exits
 *                     at once (every output is written atomically: the old file or the new one).
 *   SIGUSR1           in the loop: save now (the PLY and a checkpoint), and go on. */
typedef struct run_control {
    pthread_mutex_t lock;
    splat_trainer *trainer;  /* in the loop: the one to interrupt; NULL outside it */
    int stop_signal;         /* 0, or the signal that asked the run to stop */
    bool save_now;
} run_control;

/* Blocks those signals in the calling thread, and so in every thread started after it (the Vulkan
 * driver's), and starts the thread that takes them. Call it before anything starts a thread. One
 * per process (signals are). */
bool runctl_start(run_control *rc);
/* Requests now interrupt `t`; runctl_attach(rc, NULL) ends that (a stop then exits at once). */
void runctl_attach(run_control *rc, splat_trainer *t);
/* What was asked since the last call: *stop_signal (0 or the signal; it stays set) and whether to
 * save now (taken). */
void runctl_take(run_control *rc, int *stop_signal, bool *save_now);
/* Whether a stop was asked (nothing taken): what a wait between runs (a paused viewer) polls. */
bool runctl_stopping(run_control *rc);
/* A request from another thread of the tool (the viewer): as the signals. */
void runctl_request_stop(run_control *rc, int signal);
void runctl_request_save(run_control *rc);

/* ------------------------------------------------------------ flythroughs (flythrough.c) */

typedef struct orbit_desc {
    uint32_t frames;
    uint32_t width, height;  /* 0: the first given camera's size, or 800 x 600 without cameras */
    bool have_up;
    double up[3];            /* have_up: the scene's up, else from the cameras, or +z without them */
} orbit_desc;

/* The cameras of an orbit (out [frames]): a circle around the scene looking at its centre, derived
 * from `given` [n_given] (a dataset's cameras) when there are any, else from the scene's bounds
 * (README.md, "Flythroughs", says how). False with a message when neither gives one. */
bool orbit_cameras(const splat_scene *scene, const splat_camera *given, uint32_t n_given, const orbit_desc *d,
                   splat_camera *out, char *msg, size_t size);

/* Whether an executable `ffmpeg` is on the PATH. */
bool ffmpeg_on_path(void);
/* Encodes DIR/frame_%04d.png [frames] (from 0) into DIR/video.mp4 at `fps` frames a second, running ffmpeg
 * as a child process; the video is written under a temporary name and renamed, so a failure leaves
 * no video (nor an old one half replaced). False with a message naming ffmpeg's failure. */
bool video_encode(const char *dir, uint32_t frames, uint32_t fps, char *msg, size_t size);

#endif
