/* view: the renderer's thread. It takes the clients' frame requests one at a time (the oldest
 * first, each client at most max_fps times a second, and none for a client whose last frame is
 * still going out), renders the scene with the renderer's stages on the viewer's own stream,
 * reads the image back, encodes it as JPEG in strips on the encoder's pool (encode.c) and hands
 * it to the client's connection.
 *
 * With a trainer attached, frames render the latest snapshot of its parameters (snapshot() says
 * when a frame waits for one): the renderer asks through the tap (train.h) and the training thread
 * copies them into the back buffer between two iterations; the buffers swap once the copy is done
 * on the device. The renderer's stream is on the gpu's second queue when there is one
 * (SPLAT_TWO_QUEUES=1), so that frames do not wait behind training's queued iterations; the
 * timelines order the copy and the renders either way. */
#include <stdio.h>
#include <time.h>

#include "view/view.h"

static void wait_for(splat_viewer *v, double seconds);

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

/* Rows for n Gaussians and their growth: densification adds a few per cent a refine, so buffers
 * grown by a quarter last several refines. */
static uint32_t room(uint32_t n) { return n + n / 4 + 1; }

/* The rows the model will need soon: the latest count known (the front snapshot's, or training's
 * last progress report), and an eighth more (a refine or two). */
static uint32_t soon_rows(splat_viewer *v)
{
    pthread_mutex_lock(&v->lock);
    uint32_t n = SPLAT_MAX(v->scene.count, v->stats.prog.n_gaussians);
    pthread_mutex_unlock(&v->lock);
    return n + n / 8;
}

/* A new back buffer of room(n) rows; only when nothing reads or writes it. */
static splat_status grow_back(splat_viewer *v, uint32_t n, splat_error *err)
{
    double t0 = splat__now();
    splat__scene_gpu_free(v->gpu, &v->back);
    splat_status st = splat__scene_gpu_init(v->gpu, &v->back, "view.snapshot", room(n), false, err);
    v->alloc_s += splat__now() - t0;
    return st;
}

/* Takes the tap's answer, if there is one (the renderer's thread). */
static splat_status take_answer(splat_viewer *v, splat_error *err)
{
    uint32_t answer = atomic_load_explicit(&v->tap.state, memory_order_acquire);
    if (answer == SPLAT_TAP_COPIED) {
        v->pending = true;
        v->pend.step = v->tap.step;
        v->pend.degree = v->tap.sh_degree;
        v->pend.version = v->tap.copied_version;
        v->pend.sem = v->tap.sem;
        v->pend.value = v->tap.value;
        v->pend.t_asked = v->t_asked;
        atomic_fetch_add(&v->snapshots, 1u);
    } else if (answer == SPLAT_TAP_SMALL) {
        /* densification grew the model past the back buffer (provision() had no chance to grow it
         * ahead): room for it and some growth (nothing reads the back buffer: renders read the
         * front one, and no copy is in flight) */
        splat_status st = grow_back(v, v->tap.count, err);
        if (st != SPLAT_OK) return st;
        v->t_asked = 0; /* ask again at once */
    } else {
        return SPLAT_OK;
    }
    atomic_store_explicit(&v->tap.state, SPLAT_TAP_IDLE, memory_order_relaxed);
    return SPLAT_OK;
}

/* Whether the pending copy is done on the device; waits up to `wait` seconds for it. */
static bool copy_done(splat_viewer *v, double wait)
{
    VkSemaphoreWaitInfo wi = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
        .semaphoreCount = 1,
        .pSemaphores = &v->pend.sem,
        .pValues = &v->pend.value,
    };
    return vkWaitSemaphores(v->gpu->device, &wi, (uint64_t)(wait * 1e9)) == VK_SUCCESS;
}

/* The snapshot to render, in v->scene (the front buffer), from an attached trainer (the
 * renderer's thread). Snapshots are double-buffered: the trainer copies into v->back while frames
 * render v->scene, and the two swap once the copy is done on the device. So a frame waits for a
 * snapshot only when there is none yet, or when the trainer is not running (paused, between
 * runs: it answers from splat_viewer_control at once, and the page should show where it
 * stopped); otherwise it renders the latest one done and asks for the next in the background,
 * at most one every 0.9 / max_fps s, and never while the parameters are those of the front one.
 * Sets *waited to the seconds it waited. */
static splat_status snapshot(splat_viewer *v, double *waited, splat_error *err)
{
    double t0 = splat__now();
    for (;;) {
        pthread_mutex_lock(&v->lock);
        bool attached = v->trainer && !v->stop;
        if (!attached && atomic_load_explicit(&v->tap.state, memory_order_acquire) == SPLAT_TAP_ASKED)
            atomic_store_explicit(&v->tap.state, SPLAT_TAP_IDLE, memory_order_relaxed); /* detached: unanswered */
        pthread_mutex_unlock(&v->lock);
        splat_status st = take_answer(v, err);
        if (st != SPLAT_OK) return st;
        if (v->pending && copy_done(v, 0)) {
            splat_scene_gpu front = v->scene;
            v->scene = v->back;
            v->back = front;
            v->snap = v->pend;
            v->t_snapshot = v->pend.t_asked;
            v->pending = false;
        }
        uint32_t version = atomic_load_explicit(&v->tap.version, memory_order_acquire);
        bool current = v->t_snapshot != 0 && v->snap.version == version;
        bool running = atomic_load_explicit(&v->tap.running, memory_order_relaxed) != 0;
        bool fresh_wanted = v->t_snapshot == 0 || !running;
        double now = splat__now();
        bool asked = atomic_load_explicit(&v->tap.state, memory_order_acquire) != SPLAT_TAP_IDLE;
        bool due = v->t_asked == 0 || fresh_wanted || now - v->t_asked >= 0.9 / v->desc.max_fps;
        /* a back buffer the model is about to outgrow takes no copy: provision() grows it after this
         * frame, and the next one asks (this one renders the front snapshot) */
        bool roomy = fresh_wanted || v->ahead_failed || v->back.capacity >= soon_rows(v);
        if (attached && !current && !v->pending && !asked && due && roomy) {
            /* the copy goes after the renders that read the back buffer when it was the front one
             * (done: each render is waited for) */
            v->tap.reader_sem = v->stream.timeline;
            v->tap.reader_value = v->stream.submitted;
            v->t_asked = now;
            pthread_mutex_lock(&v->lock);
            atomic_store_explicit(&v->tap.state, SPLAT_TAP_ASKED, memory_order_release);
            pthread_cond_broadcast(&v->control); /* a paused trainer answers from splat_viewer_control */
            pthread_mutex_unlock(&v->lock);
            asked = true;
        }
        /* a frame does not wait when it has a snapshot and training runs, nor long when the
         * trainer is held somewhere that does not answer (a save between runs) */
        bool waiting = (attached || v->pending) && !current && fresh_wanted && (v->t_snapshot == 0 || now - t0 < 0.25);
        if (!waiting || (!asked && !v->pending)) {
            *waited = splat__now() - t0;
            return SPLAT_OK;
        }
        if (v->pending) {
            copy_done(v, 0.01);
        } else {
            pthread_mutex_lock(&v->lock);
            if (atomic_load_explicit(&v->tap.state, memory_order_acquire) == SPLAT_TAP_ASKED && v->trainer && !v->stop)
                wait_for(v, 0.01);
            pthread_mutex_unlock(&v->lock);
        }
    }
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
    splat__render_fwd(c, v->renderer, &v->scene, &v->rb, v->scene.count, 0);
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
    /* (a growth that failed part way left some of them freed) */
    if (rb->frame.buffer && v->packed.buffer && v->pixels.buffer && rb->capacity >= cap && rb->max_w >= w &&
        rb->max_h >= h)
        return SPLAT_OK;
    double t0 = splat__now();
    /* room to grow, as the snapshots have: not a reallocation at every densification */
    if (rb->capacity < cap) cap = room(cap);
    uint32_t isect = rb->isect_capacity ? rb->isect_capacity : cap * 8;
    uint32_t mw = SPLAT_MAX(w, rb->max_w), mh = SPLAT_MAX(h, rb->max_h);
    cap = SPLAT_MAX(cap, rb->capacity);
    splat__render_bufs_free(v->gpu, rb);
    splat__buf_free(v->gpu, &v->packed);
    splat__buf_free(v->gpu, &v->pixels);
    /* frames are images, never trained on: the cheaper forward-only path, the same pixels */
    splat_status st = splat__render_bufs_init_fwd_only(v->gpu, v->renderer, rb, cap, isect, mw, mh, err);
    uint64_t bytes = (uint64_t)mw * mh * 4;
    if (st == SPLAT_OK) st = splat__buf_init(v->gpu, &v->packed, "view.packed", bytes, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__buf_init(v->gpu, &v->pixels, "view.pixels", bytes, SPLAT_MEM_READBACK, err);
    v->alloc_s += splat__now() - t0;
    return st;
}

/* Grows, between frames, what a training run's model is about to outgrow: the render buffers and
 * the snapshots' back buffer (which snapshot() leaves without a copy until then). Grown when a
 * frame found them too small, that frame waited for the allocations (tens of milliseconds on an
 * H100 beside training: its one frame over 50 ms in four bonsai runs); here they grow once the
 * model comes within an eighth of a capacity, right after a frame is handed over, when its client
 * has most of a frame interval before it asks again (other clients' requests wait meanwhile). */
static void provision(splat_viewer *v)
{
    if (v->source != SPLAT_VIEW_SOURCE_TRAINER) return;
    uint32_t soon = soon_rows(v);
    splat_error err = {0};
    splat_status st = SPLAT_OK;
    if (v->rb.frame.buffer && v->rb.capacity < soon) st = fit_buffers(v, soon, v->rb.max_w, v->rb.max_h, &err);
    /* the back buffer only while no copy into it is asked for or in flight */
    bool idle = !v->pending && atomic_load_explicit(&v->tap.state, memory_order_acquire) == SPLAT_TAP_IDLE;
    if (st == SPLAT_OK && idle && v->back.capacity < soon) {
        st = grow_back(v, soon, &err);
        v->ahead_failed = st != SPLAT_OK;
    }
    /* a frame tries again, for what it needs then */
    if (st != SPLAT_OK) splat__view_log(v, "growing the viewer's buffers ahead: %s", err.msg);
}

static uint32_t micros(double seconds) { return seconds <= 0 ? 0 : (uint32_t)SPLAT_MIN(seconds * 1e6, 4e9); }

/* Renders a request (arrived at `arrived`, taken now) into a frame message (header, strips) in *msg. */
static splat_status render(splat_viewer *v, const splat_view_request *req, double arrived, uint8_t **msg, size_t *len,
                           splat_error *err)
{
    uint32_t head[SPLAT_VIEW_HEAD_WORDS] = {0};
    double t0 = splat__now();
    v->alloc_s = 0;
    head[SPLAT_VIEW_HEAD_QUEUED_US] = micros(t0 - arrived);
    bool training = v->source == SPLAT_VIEW_SOURCE_TRAINER;
    double snap_wait = 0;
    splat_status st = training ? snapshot(v, &snap_wait, err) : SPLAT_OK;
    if (st != SPLAT_OK) return st;
    if (training && v->t_snapshot == 0) return splat__fail(err, SPLAT_ERR_INVALID_ARG, "training has not started yet");
    head[SPLAT_VIEW_HEAD_SNAPSHOT_US] = micros(snap_wait);
    const splat_camera *cam = &req->cam;
    st = fit_buffers(v, v->scene.count, cam->width, cam->height, err);
    if (st != SPLAT_OK) return st;
    splat_render_desc rd = v->render;
    if (training) rd.sh_degree = v->snap.degree ? v->snap.degree : SPLAT_SH_DEGREE_0;
    splat_frame f;
    splat__frame_make(&f, cam, &rd, v->scene.count);
    uint64_t px = (uint64_t)cam->width * cam->height;
    frame_job j = {v, &f, px};
    double t_submit = splat__now();
    if (training) {
        head[SPLAT_VIEW_HEAD_SNAPSHOT_AGE_US] = micros(t_submit - v->t_snapshot);
        /* done already (the buffers swapped only then), but the device hears of it */
        splat__stream_after(&v->stream, v->snap.sem, v->snap.value);
    }
    st = splat__render_run(&v->stream, v->renderer, &v->rb, &(splat_render_job){.record = record_frame, .user = &j}, err);
    if (st != SPLAT_OK) return st;
    double t_rendered = splat__now();
    head[SPLAT_VIEW_HEAD_GPU_US] = micros(t_rendered - t_submit);
    double ms[SPLAT_PROF_MAX];
    if (v->has_prof && splat__prof_peek(v->gpu, &v->prof, ms)) {
        /* the renderer's stages mark their own steps: sum them up to "render" */
        double sum = 0;
        for (uint32_t i = 1; i < v->prof.n; i++) {
            if (strcmp(v->prof.labels[i], "readback") == 0) head[SPLAT_VIEW_HEAD_GPU_READBACK_US] = micros(ms[i - 1] * 1e-3);
            else sum += ms[i - 1];
        }
        head[SPLAT_VIEW_HEAD_GPU_RENDER_US] = micros(sum * 1e-3);
    }
    double wall;
    st = splat__view_encode(&v->enc, v->pixels.map, cam->width, cam->height, (int)req->quality, SPLAT_VIEW_STRIPS, &wall, err);
    if (st != SPLAT_OK) return st;
    double slowest = 0;
    for (uint32_t k = 0; k < v->enc.n; k++) slowest = SPLAT_MAX(slowest, v->enc.strips[k].seconds);
    head[SPLAT_VIEW_HEAD_ID] = req->id;
    head[SPLAT_VIEW_HEAD_STEP] = training ? v->snap.step : 0;
    head[SPLAT_VIEW_HEAD_WIDTH] = cam->width;
    head[SPLAT_VIEW_HEAD_HEIGHT] = cam->height;
    head[SPLAT_VIEW_HEAD_RENDER_US] = micros(t_rendered - t0);
    head[SPLAT_VIEW_HEAD_GAUSSIANS] = v->scene.count;
    head[SPLAT_VIEW_HEAD_ENCODE_US] = micros(wall);
    head[SPLAT_VIEW_HEAD_ENCODE_STRIP_US] = micros(slowest);
    head[SPLAT_VIEW_HEAD_FLAGS] = v->gpu->queue2 != v->gpu->queue ? SPLAT_VIEW_FLAG_OWN_QUEUE : 0;
    head[SPLAT_VIEW_HEAD_ARRIVED_CLOCK] = splat__view_clock_us(arrived);
    head[SPLAT_VIEW_HEAD_ALLOC_US] = micros(v->alloc_s);
    head[SPLAT_VIEW_HEAD_TOTAL_US] = micros(splat__now() - arrived);
    if (!splat__view_frame_pack(head, v->enc.strips, v->enc.n, msg, len))
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: out of host memory");
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
        splat_status st = render(v, &req, arrived, &msg, &len, &err);
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
        provision(v);
        pthread_mutex_lock(&v->lock);
    }
    pthread_mutex_unlock(&v->lock);
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
    /* the GPU's share of a frame, for its header; a device without timestamps leaves it 0, and so
     * does lavapipe, whose vkGetQueryPoolResults waits for the whole device (training's queued
     * iterations: most of a second a frame) */
    v->has_prof = v->gpu->info.timestamps && v->gpu->info.type != VK_PHYSICAL_DEVICE_TYPE_CPU &&
                  splat__prof_init(v->gpu, &v->prof, NULL) == SPLAT_OK;
    st = splat__view_encoder_init(&v->enc, err);
    if (st != SPLAT_OK) return st;
    v->has_enc = true;
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
