/* view: the renderer's thread. It takes the clients' frame requests one at a time (the oldest
 * first, each client at most max_fps times a second, and none for a client whose last frame is
 * still going out), renders the scene with the renderer's stages on the viewer's own stream,
 * reads the image back, encodes it as JPEG and hands it to the client's connection.
 *
 * With a trainer attached, each render starts from a fresh snapshot (at most one every
 * 1 / max_fps s): the renderer asks through the tap (train.h) and sleeps until the training
 * thread has submitted the copy between two iterations. The copy is on the queue before anything
 * the renderer submits next, so it renders at once; and it asks again only after its render has
 * finished reading the snapshot, so there is never more than one copy in flight. */
#include <stdio.h>
#include <time.h>

#include "view/view.h"

/* ------------------------------------------------------------------ picking a request */

/* The session whose request should be rendered next, or NULL; *wait_s says how long until one is
 * due when none is now (0: none at all). Under the lock. */
static splat_view_session *pick(splat_viewer *v, double now, double *wait_s)
{
    splat_view_session *best = NULL;
    *wait_s = 0;
    if (v->source == SPLAT_VIEW_SOURCE_NONE) return NULL;
    for (splat_view_session *s = v->sessions; s; s = s->next) {
        if (!s->has_request || s->rendering || s->frame || s->sending) continue;
        if (s->next_due > now) {
            double w = s->next_due - now;
            if (*wait_s == 0 || w < *wait_s) *wait_s = w;
            continue;
        }
        if (!best || s->t_request < best->t_request) best = s;
    }
    return best;
}

/* ------------------------------------------------------------------ the scene to render */

/* A fresh snapshot of the attached trainer's parameters in v->scene (the renderer's thread). */
static splat_status snapshot(splat_viewer *v, splat_error *err)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        pthread_mutex_lock(&v->lock);
        if (!v->trainer || v->stop) {
            pthread_mutex_unlock(&v->lock);
            return SPLAT_OK; /* detached: the last snapshot stays */
        }
        atomic_store_explicit(&v->tap.state, SPLAT_TAP_ASKED, memory_order_release);
        pthread_cond_broadcast(&v->control); /* a paused trainer answers from splat_viewer_control */
        while (atomic_load_explicit(&v->tap.state, memory_order_acquire) == SPLAT_TAP_ASKED && v->trainer && !v->stop)
            pthread_cond_wait(&v->wake, &v->lock);
        uint32_t answer = atomic_load_explicit(&v->tap.state, memory_order_acquire);
        if (answer == SPLAT_TAP_ASKED) atomic_store_explicit(&v->tap.state, SPLAT_TAP_IDLE, memory_order_relaxed);
        pthread_mutex_unlock(&v->lock);
        if (answer == SPLAT_TAP_COPIED) {
            v->t_snapshot = splat__now();
            v->snap_step = v->tap.step;
            v->snap_degree = v->tap.sh_degree;
            return SPLAT_OK;
        }
        if (answer != SPLAT_TAP_SMALL) return SPLAT_OK;
        /* densification grew the model past the snapshot: room for it and some growth */
        uint32_t rows = v->tap.count + v->tap.count / 4 + 1;
        splat__scene_gpu_free(v->gpu, &v->scene);
        splat_status st = splat__scene_gpu_init(v->gpu, &v->scene, "view.snapshot", rows, false, err);
        if (st != SPLAT_OK) return st;
    }
    return splat__fail(err, SPLAT_ERR_DEVICE, "viewer: the snapshot kept outgrowing its buffers");
}

/* ------------------------------------------------------------------ rendering one frame */

typedef struct frame_job {
    splat_viewer *v;
    const splat_frame *f;
    uint64_t pixels;         /* of the image */
} frame_job;

static void record_frame(splat_cmd *c, void *user)
{
    frame_job *j = user;
    splat_viewer *v = j->v;
    if (v->has_prof) splat__prof_begin(c, &v->prof);
    splat__render_set_frame(c, &v->rb, j->f);
    splat__cmd_barrier(c);
    splat__render_fwd(c, v->renderer, &v->scene, &v->rb, v->scene.count);
    splat_view views[VIEW_PACK_BINDINGS] = {
        [VIEW_PACK_FRAME] = SPLAT_VIEW(v->rb.frame),
        [VIEW_PACK_RGBT] = SPLAT_VIEW(v->rb.out_rgbt),
        [VIEW_PACK_OUT] = SPLAT_VIEW(v->packed),
    };
    splat__cmd_dispatch_1d(c, &v->pack, views, VIEW_PACK_BINDINGS, NULL, 0, j->pixels);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "render");
    /* only the bytes of this frame cross to the host */
    splat__cmd_copy(c, SPLAT_VIEW_AT(v->packed, 0, j->pixels * 4), SPLAT_VIEW(v->pixels));
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "readback");
}

/* Buffers for `n` Gaussians and a w x h frame, reallocated only to grow. */
static splat_status fit_buffers(splat_viewer *v, uint32_t n, uint32_t w, uint32_t h, splat_error *err)
{
    splat_render_bufs *rb = &v->rb;
    uint32_t cap = SPLAT_MAX(n, 1u);
    if (rb->frame.buffer && rb->capacity >= cap && rb->max_w >= w && rb->max_h >= h) return SPLAT_OK;
    uint32_t isect = rb->isect_capacity ? rb->isect_capacity : cap * 8;
    uint32_t mw = SPLAT_MAX(w, rb->max_w), mh = SPLAT_MAX(h, rb->max_h);
    cap = SPLAT_MAX(cap, rb->capacity);
    splat__render_bufs_free(v->gpu, rb);
    splat__buf_free(v->gpu, &v->packed);
    splat__buf_free(v->gpu, &v->pixels);
    splat_status st = splat__render_bufs_init(v->gpu, v->renderer, rb, cap, isect, mw, mh, err);
    uint64_t bytes = (uint64_t)mw * mh * 4;
    if (st == SPLAT_OK) st = splat__buf_init(v->gpu, &v->packed, "view.packed", bytes, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__buf_init(v->gpu, &v->pixels, "view.pixels", bytes, SPLAT_MEM_READBACK, err);
    return st;
}

static uint32_t micros(double seconds) { return seconds <= 0 ? 0 : (uint32_t)SPLAT_MIN(seconds * 1e6, 4e9); }

/* Renders a request (arrived at `arrived`, taken now) into a frame message (header + JPEG) in *msg. */
static splat_status render(splat_viewer *v, const splat_view_request *req, double arrived, uint8_t **msg, size_t *len,
                           splat_bytes *jpeg, splat_error *err)
{
    uint32_t head[SPLAT_VIEW_HEAD_WORDS] = {0};
    double t0 = splat__now();
    head[SPLAT_VIEW_HEAD_QUEUED_US] = micros(t0 - arrived);
    splat_status st = SPLAT_OK;
    if (v->source == SPLAT_VIEW_SOURCE_TRAINER && (v->t_snapshot == 0 || t0 - v->t_snapshot >= 0.9 / v->desc.max_fps))
        st = snapshot(v, err);
    if (st != SPLAT_OK) return st;
    if (v->source == SPLAT_VIEW_SOURCE_TRAINER && v->t_snapshot == 0)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "training has not started yet");
    const splat_camera *cam = &req->cam;
    st = fit_buffers(v, v->scene.count, cam->width, cam->height, err);
    if (st != SPLAT_OK) return st;
    splat_render_desc rd = v->render;
    if (v->source == SPLAT_VIEW_SOURCE_TRAINER) rd.sh_degree = v->snap_degree ? v->snap_degree : SPLAT_SH_DEGREE_0;
    splat_frame f;
    splat__frame_make(&f, cam, &rd, v->scene.count);
    uint64_t px = (uint64_t)cam->width * cam->height;
    frame_job j = {v, &f, px};
    double t_submit = splat__now();
    head[SPLAT_VIEW_HEAD_SNAPSHOT_US] = micros(t_submit - t0);
    if (v->source == SPLAT_VIEW_SOURCE_TRAINER) head[SPLAT_VIEW_HEAD_SNAPSHOT_AGE_US] = micros(t_submit - v->t_snapshot);
    st = splat__render_run(&v->stream, v->renderer, &v->rb, &(splat_render_job){.record = record_frame, .user = &j}, err);
    if (st != SPLAT_OK) return st;
    double t_rendered = splat__now();
    head[SPLAT_VIEW_HEAD_GPU_US] = micros(t_rendered - t_submit);
    double ms[SPLAT_PROF_MAX];
    if (v->has_prof && splat__prof_read(v->gpu, &v->prof, ms, &(splat_error){0}) == SPLAT_OK) {
        /* the renderer's stages mark their own steps: sum them up to "render" */
        double sum = 0;
        for (uint32_t i = 1; i < v->prof.n; i++) {
            if (strcmp(v->prof.labels[i], "readback") == 0) head[SPLAT_VIEW_HEAD_GPU_READBACK_US] = micros(ms[i - 1] * 1e-3);
            else sum += ms[i - 1];
        }
        head[SPLAT_VIEW_HEAD_GPU_RENDER_US] = micros(sum * 1e-3);
    }
    st = splat__jpeg_encode(v->pixels.map, 4, cam->width, cam->height, (int)req->quality, jpeg, err);
    if (st != SPLAT_OK) return st;
    double t_encoded = splat__now();
    *len = SPLAT_VIEW_FRAME_HEADER + jpeg->size;
    *msg = splat__malloc(*len);
    if (!*msg) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: out of host memory");
    head[SPLAT_VIEW_HEAD_ID] = req->id;
    head[SPLAT_VIEW_HEAD_STEP] = v->source == SPLAT_VIEW_SOURCE_TRAINER ? v->snap_step : 0;
    head[SPLAT_VIEW_HEAD_WIDTH] = cam->width;
    head[SPLAT_VIEW_HEAD_HEIGHT] = cam->height;
    head[SPLAT_VIEW_HEAD_RENDER_US] = micros(t_rendered - t0);
    head[SPLAT_VIEW_HEAD_GAUSSIANS] = v->scene.count;
    head[SPLAT_VIEW_HEAD_ENCODE_US] = micros(t_encoded - t_rendered);
    head[SPLAT_VIEW_HEAD_FLAGS] = v->gpu->queue2 != v->gpu->queue ? SPLAT_VIEW_FLAG_OWN_QUEUE : 0;
    head[SPLAT_VIEW_HEAD_TOTAL_US] = micros(splat__now() - arrived);
    for (int k = 0; k < SPLAT_VIEW_HEAD_WORDS; k++) /* little-endian, whatever the host */
        for (int b = 0; b < 4; b++) (*msg)[4 * k + b] = (uint8_t)(head[k] >> (8 * b));
    memcpy(*msg + SPLAT_VIEW_FRAME_HEADER, jpeg->data, jpeg->size);
    return SPLAT_OK;
}

/* ------------------------------------------------------------------ the thread */

static void wait_for(splat_viewer *v, double seconds)
{
    if (seconds <= 0) {
        pthread_cond_wait(&v->wake, &v->lock);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double end = ts.tv_sec + ts.tv_nsec * 1e-9 + seconds;
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    pthread_cond_timedwait(&v->wake, &v->lock, &ts);
}

static void *run(void *arg)
{
    splat_viewer *v = arg;
    splat_bytes jpeg = {0};
    uint32_t failures = 0;
    pthread_mutex_lock(&v->lock);
    while (!v->stop) {
        double wait_s;
        splat_view_session *s = pick(v, splat__now(), &wait_s);
        if (!s) {
            wait_for(v, wait_s);
            continue;
        }
        splat_view_request req = s->req;
        double arrived = s->t_request;
        uint64_t key = s->key;
        s->has_request = false;
        s->rendering = true;
        s->next_due = splat__now() + 0.9 / v->desc.max_fps; /* a little slack for clients pacing themselves */
        pthread_mutex_unlock(&v->lock);

        uint8_t *msg = NULL;
        size_t len = 0;
        splat_error err = {0};
        splat_status st = render(v, &req, arrived, &msg, &len, &jpeg, &err);
        char *failed = NULL;
        if (st != SPLAT_OK) {
            if (failures++ < 20) splat__view_log(v, "frame %u: %s", req.id, err.msg);
            failed = splat__view_note_json("error", req.id, err.msg);
        }

        pthread_mutex_lock(&v->lock);
        v->frames += st == SPLAT_OK;
        splat_view_session *t = v->sessions;
        while (t && t->key != key) t = t->next;
        if (t) {
            t->rendering = false;
            if (msg) t->frame = msg, t->frame_len = len, msg = NULL;
            if (failed) splat__free(t->error), t->error = failed, failed = NULL;
        }
        splat__free(msg); /* its client left while it was made */
        splat__free(failed);
        pthread_mutex_unlock(&v->lock);
        splat__view_server_kick(v);
        pthread_mutex_lock(&v->lock);
    }
    pthread_mutex_unlock(&v->lock);
    splat__free(jpeg.data);
    return NULL;
}

void splat__view_tap_answered(void *user)
{
    splat_viewer *v = user;
    pthread_mutex_lock(&v->lock);
    pthread_cond_broadcast(&v->wake);
    pthread_mutex_unlock(&v->lock);
}

splat_status splat__view_frames_start(splat_viewer *v, splat_error *err)
{
    splat_status st = splat__pipe_init(v->gpu, &v->pack, &(splat_pipe_desc){.shader = "view_pack", .n_bindings = VIEW_PACK_BINDINGS}, err);
    if (st != SPLAT_OK) return st;
    v->has_pack = true;
    /* the GPU's share of a frame, for its header; a device without timestamps leaves it 0 */
    v->has_prof = v->gpu->info.timestamps && splat__prof_init(v->gpu, &v->prof, NULL) == SPLAT_OK;
    if (pthread_create(&v->render_thread, NULL, run, v) != 0)
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot start the renderer's thread");
    v->render_started = true;
    return SPLAT_OK;
}

void splat__view_frames_stop(splat_viewer *v)
{
    if (!v->render_started) return;
    pthread_mutex_lock(&v->lock);
    v->stop = true;
    pthread_cond_broadcast(&v->wake);
    pthread_mutex_unlock(&v->lock);
    pthread_join(v->render_thread, NULL);
    v->render_started = false;
}
