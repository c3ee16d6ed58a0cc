/* view: the live viewer in the browser, a layer above the public API (docs/DESIGN.md). It may use
 * the train and render internals; nothing below it knows it exists.
 *
 * Three threads meet here:
 *
 *   the caller's      splat_viewer_* (viewer.c): the scene or the trainer to show, training's
 *                     progress, and the control interface the CLI asks between runs of
 *                     splat_trainer_run (pause, resume, save now). When a trainer is attached,
 *                     its loop answers the viewer's snapshot requests (train.h, the tap) between
 *                     two iterations: a copy on the GPU into the viewer's own splat_scene_gpu.
 *   the server        server.c: libwebsockets' event loop. HTTP for the page's files, embedded in
 *                     the binary at build time (nothing a request names touches the disk), and a
 *                     WebSocket per client: its messages in (protocol.c parses them), its frames
 *                     and the training statistics out, a fragment per writable callback so that a
 *                     slow or vanished client holds up nobody.
 *   the renderer      frames.c: takes the clients' frame requests in turn (at most max_fps per
 *                     client), renders each with the renderer's stages on the viewer's own stream
 *                     (on training's queue, or on the device's second one with SPLAT_TWO_QUEUES=1)
 *                     from the latest snapshot, encodes it as JPEG in strips on a pool of threads
 *                     (encode.c) and hands it to its client's connection.
 *
 * `lock` guards everything the threads share (the sessions' requests and frames, the statistics,
 * the control state, the scene source); nobody holds it while waiting on the GPU or the network. */
#ifndef SPLAT_VIEW_H
#define SPLAT_VIEW_H

#include <pthread.h>

#include "api/api.h"
#include "io/io.h"
#include "render/render.h"
#include "train/train.h"
#include "view_types.h"

/* ------------------------------------------------------------------ the page's files */

/* The embedded files of src/view/page (generated at build time by cmake/embed.cmake). */
typedef struct splat_view_file {
    const char *name;                /* "index.html" */
    const unsigned char *data;
    size_t size;
} splat_view_file;

extern const splat_view_file splat__view_files[]; /* ends with a NULL name */

/* The file a request path names ("/" is index.html), or NULL: only exact names of the table. */
const splat_view_file *splat__view_file(const char *path);
/* Its Content-Type, from its extension. */
const char *splat__view_mime(const char *name);

/* ------------------------------------------------------------------ the protocol (protocol.c) */

/* Limits on what a client may send and ask for. */
#define SPLAT_VIEW_MAX_MESSAGE 4096          /* bytes of one message from a client */
#define SPLAT_VIEW_MAX_CLIENTS 32

/* What a client message asks for. Text messages are JSON objects with a string "t":
 *   {"t":"frame","id":N,"w":W,"h":H,"q":Q,"fx":..,"fy":..,"cx":..,"cy":..,"R":[9 numbers],"T":[3]}
 *       a frame from this camera (splat_camera's convention: R and T world-to-camera, R row-major),
 *       W x H pixels, JPEG quality Q (1..100); the answer carries id N. A newer request replaces
 *       one not yet started.
 *   {"t":"pause"}, {"t":"resume"}, {"t":"save"}   training's controls
 * Frames go back as binary messages, every number a little-endian uint32:
 *   SPLAT_VIEW_FRAME_HEADER bytes: the words indexed by splat_view_head;
 *   n, the number of strips (1..height), then n times (y, rows, bytes): the strips' rows y..y+rows-1
 *      and the size of their JPEG, in order: strip k starts where strip k-1 ended, the first at row
 *      0, and together they cover the height exactly;
 *   the n JPEGs, one after the other, each `width` x `rows` pixels; they end the message.
 * Strips are encoded at once on a small pool of threads (splat_view_encoder); a client draws each
 * at its row. After the frame's identity the header says where its time went, so that a client
 * (bench_viewer) can tell waiting from work; times are microseconds, "arrived" is when the server
 * had the whole request. */
typedef enum splat_view_head {
    SPLAT_VIEW_HEAD_ID,              /* the request's id */
    SPLAT_VIEW_HEAD_STEP,            /* training step of the snapshot (0 when showing a fixed scene) */
    SPLAT_VIEW_HEAD_WIDTH,
    SPLAT_VIEW_HEAD_HEIGHT,
    SPLAT_VIEW_HEAD_RENDER_US,       /* the renderer taking it -> the image in host memory (snapshot included) */
    SPLAT_VIEW_HEAD_GAUSSIANS,
    SPLAT_VIEW_HEAD_QUEUED_US,       /* arrived -> the renderer took it (behind other clients, the rate cap) */
    SPLAT_VIEW_HEAD_SNAPSHOT_US,     /* waiting for a snapshot (asking, the training thread answering, the copy) */
    SPLAT_VIEW_HEAD_GPU_US,          /* submitted -> completed, on the host's clock: queue wait + GPU work */
    SPLAT_VIEW_HEAD_GPU_RENDER_US,   /* render + pack on the GPU's clock (0: the device has no timestamps) */
    SPLAT_VIEW_HEAD_GPU_READBACK_US, /* the copy of the pixels to host-visible memory, on the GPU's clock */
    SPLAT_VIEW_HEAD_ENCODE_US,       /* the JPEG: the wall time of the strips' parallel encode */
    SPLAT_VIEW_HEAD_TOTAL_US,        /* arrived -> handed to its connection */
    SPLAT_VIEW_HEAD_SNAPSHOT_AGE_US, /* how old the snapshot was when the render started (since its copy was asked) */
    SPLAT_VIEW_HEAD_FLAGS,           /* SPLAT_VIEW_FLAG_* */
    SPLAT_VIEW_HEAD_ENCODE_STRIP_US, /* the slowest strip's own encode (ENCODE_US less the pool's waits) */
    SPLAT_VIEW_HEAD_ARRIVED_CLOCK,   /* "arrived" on CLOCK_MONOTONIC, in microseconds modulo 2^32: a client on the
                                        same host tells its request's way in from its own clock */
    SPLAT_VIEW_HEAD_WRITTEN_US,      /* arrived -> the message's first fragment given to the socket (the server
                                        thread stamps it as it writes; from TOTAL_US to here the frame waited for it) */
    SPLAT_VIEW_HEAD_ALLOC_US,        /* growing buffers for this frame (the model outgrew them), within TOTAL_US;
                                        not the intersection buffers, which the render grows as it needs */
    SPLAT_VIEW_HEAD_WORDS
} splat_view_head;

#define SPLAT_VIEW_FLAG_OWN_QUEUE 1u /* the viewer submits to a queue of its own, beside training's */
#define SPLAT_VIEW_FRAME_HEADER (4 * SPLAT_VIEW_HEAD_WORDS)
#define SPLAT_VIEW_STRIP_WORDS 3     /* y, rows, bytes */

/* How many strips a frame is cut into at most: the pool's threads and the renderer's own. A
 * 1280x720 frame at quality 90 is about 8 ms of libjpeg-turbo on one core of an H100's host
 * (docs/PERFORMANCE.md). */
#define SPLAT_VIEW_STRIPS 4

typedef enum splat_view_msg_kind {
    SPLAT_VIEW_MSG_FRAME = 1,
    SPLAT_VIEW_MSG_PAUSE,
    SPLAT_VIEW_MSG_RESUME,
    SPLAT_VIEW_MSG_SAVE,
} splat_view_msg_kind;

typedef struct splat_view_request {
    uint32_t id;
    uint32_t quality;
    splat_camera cam;                /* width, height included */
} splat_view_request;

typedef struct splat_view_msg {
    splat_view_msg_kind kind;
    splat_view_request frame;        /* SPLAT_VIEW_MSG_FRAME */
} splat_view_msg;

/* Parses one client text message of `len` bytes (not terminated). max_side bounds W and H.
 * Returns false, with the reason in `why`, for anything else: not JSON, not an object, an unknown
 * "t", a missing, non-numeric, non-finite or out-of-range field. Safe on any input. */
bool splat__view_parse(const char *text, size_t len, uint32_t max_side, splat_view_msg *out, char *why, size_t why_size);

/* Cuts `height` rows into min(max_strips, ceil(height / 16)) strips (at least one) of whole
 * 16-row bands, as even as the bands allow, so that each JPEG codes the same 8x8 and 16x16 blocks
 * as one JPEG of the whole frame would. Writes strip k's first row and row count to y[k] and
 * rows[k] ([SPLAT_VIEW_STRIPS] each when max_strips is at most that); returns the count. */
uint32_t splat__view_strip_layout(uint32_t height, uint32_t max_strips, uint32_t *y, uint32_t *rows);

/* A frame message (the layout above) from its header words and its n strips, into *msg
 * (splat__malloc'd, the caller's; NULL and false when out of memory). */
typedef struct splat_view_strip splat_view_strip;
bool splat__view_frame_pack(const uint32_t head[SPLAT_VIEW_HEAD_WORDS], const splat_view_strip *strips, uint32_t n,
                            uint8_t **msg, size_t *len);
/* A time of splat__now() as the header's clock words carry it: microseconds modulo 2^32. */
uint32_t splat__view_clock_us(double t);
/* Stamps SPLAT_VIEW_HEAD_WRITTEN_US into a packed frame message of `len` bytes: `now` less its
 * ARRIVED_CLOCK. The server calls it as the message's first fragment goes out. */
void splat__view_frame_stamp_written(uint8_t *msg, size_t len, double now);

/* ------------------------------------------------------------------ the JPEG (encode.c) */

/* One strip of a frame: its rows and, once encoded, its JPEG. */
struct splat_view_strip {
    uint32_t y, rows;
    splat_bytes jpeg;                /* grown as needed, kept from frame to frame */
    double seconds;                  /* its own encode, wall time */
    double cpu_seconds;              /* ... and its thread's CPU time: the work, less any wait for a core */
    splat_status status;
    splat_error err;
};

/* The pool that encodes a frame's strips at once: SPLAT_VIEW_STRIPS - 1 threads created with the
 * viewer, and the thread that asks (the renderer), which encodes strips too rather than waiting.
 * One frame at a time: splat__view_encode is called from one thread. */
typedef struct splat_view_encoder {
    pthread_t threads[SPLAT_VIEW_STRIPS - 1];
    uint32_t n_threads;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    bool stop;
    /* the frame being encoded, under the lock */
    const uint8_t *pixels;           /* [H,W] RGBX8 */
    uint32_t width;
    int quality;
    uint32_t n, next, left;          /* strips; the next one to take; those not finished */
    splat_view_strip strips[SPLAT_VIEW_STRIPS];
} splat_view_encoder;

splat_status splat__view_encoder_init(splat_view_encoder *e, splat_error *err);
void splat__view_encoder_free(splat_view_encoder *e);
/* Encodes pixels [height, width] RGBX8 in splat__view_strip_layout(height, max_strips) strips at
 * once, into e->strips[0..e->n). *wall gets the seconds it took. A strip that failed fails it,
 * with that strip's message. */
splat_status splat__view_encode(splat_view_encoder *e, const uint8_t *pixels, uint32_t width, uint32_t height, int quality,
                                uint32_t max_strips, double *wall, splat_error *err);

/* A training run's state as the page shows it. */
typedef struct splat_view_stats {
    bool training;                   /* a trainer is (or was) attached */
    bool done;                       /* ... and has been detached: the run is over */
    bool paused;                     /* the CLI is holding training between two runs */
    bool pause_asked;                /* a page asked for a pause the CLI has not reached yet */
    splat_train_progress prog;
} splat_view_stats;

/* The chart's points: (step, loss, PSNR), thinned to every other point when full. */
#define SPLAT_VIEW_HISTORY 1024

typedef struct splat_view_history {
    float step[SPLAT_VIEW_HISTORY], loss[SPLAT_VIEW_HISTORY], psnr[SPLAT_VIEW_HISTORY];
    uint32_t n, stride;              /* points kept; steps between them once thinned (progress reports) */
    uint32_t skipped;                /* reports since the last point kept */
} splat_view_history;

void splat__view_history_add(splat_view_history *h, const splat_train_progress *p);

/* Where the page starts and how it orbits: the scene's centre and size, and which way is up. */
typedef struct splat_view_frame_of_ref {
    float center[3], radius, up[3];
} splat_view_frame_of_ref;

/* The messages the server sends, as JSON text (splat__free it). NULL when out of memory.
 *   hello: {"t":"hello","mode":"view"|"train","max_fps","max_side","frame_header","center","radius","up","cameras":[
 *           {"name","w","h","fx","fy","cx","cy","R","T"}...],"history":[[step,loss,psnr]...],"stats":{...}}
 *   stats: {"t":"stats", "step","steps","loss","psnr","n","its","eta","paused","pause_asked","done"}
 *   note:  {"t":"note","text":"..."}
 *   error: {"t":"error","id":N,"text":"..."}   a frame that could not be made
 * "frame_header" is SPLAT_VIEW_FRAME_HEADER: where a frame message's strip count is. */
char *splat__view_hello_json(const splat_view_stats *s, const splat_view_history *h, const splat_camera *cams,
                             char *const *names, uint32_t n_cams, const splat_view_frame_of_ref *ref, uint32_t max_fps,
                             uint32_t max_side);
char *splat__view_stats_json(const splat_view_stats *s);
char *splat__view_note_json(const char *type, uint32_t id, const char *text);

/* The centre, size and up direction of a scene: the Gaussians' median and the distance that holds
 * 90 % of them, or the cameras' when there are some; up from the cameras (their -y axes), else -y. */
void splat__view_frame_of_ref(const float *means, uint32_t n, const splat_camera *cams, uint32_t n_cams,
                              splat_view_frame_of_ref *out);

/* ------------------------------------------------------------------ sessions and the viewer */

/* One WebSocket client. Created and destroyed by the server thread; the renderer reaches it only
 * under the lock, by `key`. */
typedef struct splat_view_session {
    struct lws *wsi;
    uint64_t key;                    /* unique over the viewer's life */
    struct splat_view_session *next;
    /* the server thread's own */
    char rx[SPLAT_VIEW_MAX_MESSAGE];
    size_t rx_len;
    bool rx_drop;                    /* the message being received is too large: dropped to its end */
    uint32_t logged;                 /* problems logged for this client */
    bool hello_sent;
    uint32_t stats_sent, note_sent;  /* sequence numbers of what it has */
    uint8_t *out;                    /* the message being sent: LWS_PRE bytes, then the message */
    size_t out_len, out_sent;
    bool out_binary;
    /* shared, under the lock */
    bool has_request, rendering;
    bool sending;                    /* its last frame is going out (no new render until it is sent) */
    splat_view_request req;
    double t_request;                /* when the pending request arrived */
    double next_due;                 /* the earliest start of its next render (the rate cap) */
    uint8_t *frame;                  /* a finished frame message (header, strips), not yet taken */
    size_t frame_len;
    char *error;                     /* a frame that failed: its message (JSON), not yet sent */
} splat_view_session;

/* A snapshot of a training run: what it shows, and when its copy is done on the device. */
typedef struct splat_view_snap {
    uint32_t step, degree, version;  /* the tap's answer */
    VkSemaphore sem;
    uint64_t value;
    double t_asked;
} splat_view_snap;

/* Where frames come from. */
typedef enum splat_view_source {
    SPLAT_VIEW_SOURCE_NONE = 0,      /* nothing yet: requests wait */
    SPLAT_VIEW_SOURCE_SCENE,         /* a fixed scene, uploaded once */
    SPLAT_VIEW_SOURCE_TRAINER,       /* a training run: snapshots through the tap */
} splat_view_source;

struct splat_viewer {
    splat_viewer_desc desc;          /* resolved: host, port, max_fps, max_side */
    char host[64];
    uint32_t port;                   /* the port listened on */
    splat_gpu *gpu;
    const splat_renderer *renderer;

    pthread_mutex_t lock;
    pthread_cond_t wake;             /* the renderer: a request, an answered tap, a stop */
    pthread_cond_t control;          /* the caller: a control request, a stop */
    bool stop;

    /* the server (server.c) */
    struct lws_context *lws;
    pthread_t server_thread;
    bool server_started;
    splat_view_session *sessions;    /* under the lock */
    uint32_t n_sessions;
    uint64_t next_key;

    /* the renderer (frames.c): its thread, stream, buffers and the scene it renders */
    pthread_t render_thread;
    bool render_started;
    splat_stream stream;
    bool has_stream;
    splat_render_bufs rb;
    splat_pipe pack;                 /* view_pack: the render as RGBA8 */
    bool has_pack;
    splat_prof prof;                 /* the GPU's time of a frame: render, readback */
    bool has_prof;
    splat_view_encoder enc;          /* the JPEG's strips */
    bool has_enc;
    splat_buf packed;                /* [H,W] RGBA8 on the device */
    splat_buf pixels;                /* [H,W] RGBA8 read back, host-visible */
    splat_scene_gpu scene;           /* the fixed scene, or the trainer's snapshot frames render (the front) */
    splat_render_desc render;        /* resolved: background, degree (a snapshot's degree overrides it) */
    splat_view_source source;        /* set once, under the lock */
    uint32_t frames;                 /* rendered so far */
    double alloc_s;                  /* the frame being made: seconds spent growing buffers for it */
    bool ahead_failed;               /* provision() could not grow the back buffer ahead: frames ask anyway */

    /* a training run */
    splat_trainer *trainer;          /* attached (the training thread's; the renderer only reads `tap`) */
    splat_train_tap tap;
    /* the renderer's: the snapshots (frames.c, snapshot()) */
    splat_scene_gpu back;            /* what the trainer copies into (tap.dst) */
    splat_view_snap snap;            /* the front's: v->scene */
    splat_view_snap pend;            /* the back's, while its copy is not known to be done */
    bool pending;
    double t_snapshot;               /* when the front's copy was asked (0: no snapshot yet) */
    double t_asked;                  /* when the last copy was asked */
    _Atomic uint32_t snapshots;      /* copies taken so far (tests read it) */

    /* what the page shows, under the lock */
    splat_view_stats stats;
    splat_view_history history;
    uint32_t stats_seq;              /* bumped on every change */
    char note[512];
    uint32_t note_seq;
    splat_camera *cams;              /* [n_cams] the cameras listed and drawn */
    char **cam_names;
    uint32_t n_cams;
    splat_view_frame_of_ref ref;

    /* the control interface (the caller's), under the lock */
    bool pause;                      /* asked by a page; cleared by resume */
    uint32_t saves;                  /* save-now requests not yet handed to the caller */
};

/* A log line (the desc's callback, or stderr). */
void splat__view_log(splat_viewer *v, const char *fmt, ...) SPLAT_PRINTF(2, 3);

/* server.c: binds host:port (a port in use is a clear error here, before anything else starts)
 * and starts the event loop's thread; stops and frees it. */
splat_status splat__view_server_start(splat_viewer *v, splat_error *err);
void splat__view_server_stop(splat_viewer *v);
/* Wakes the event loop so that it sends what became ready (any thread). */
void splat__view_server_kick(splat_viewer *v);

/* frames.c: the renderer's thread. */
splat_status splat__view_frames_start(splat_viewer *v, splat_error *err);
void splat__view_frames_stop(splat_viewer *v);
/* The tap's notify callback (the training thread): wakes the renderer. */
void splat__view_tap_answered(void *user);

#endif
