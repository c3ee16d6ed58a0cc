/* view: the viewer's public functions (include/splatc.h): setting it up, what it shows, training's
 * progress in, and the control interface out. The threads they start are in server.c and
 * frames.c; view.h says how they share the viewer. */
#include <stdio.h>

#include "view/view.h"

splat_status splat_viewer_init(splat_viewer **out, splat_ctx *ctx, const splat_viewer_desc *desc, splat_error *err)
{
    static const splat_viewer_desc defaults = {0};
    *out = NULL;
    if (!desc) desc = &defaults;
    const char *host = desc->host ? desc->host : "127.0.0.1";
    if (strlen(host) >= 64) return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: host '%.80s...' is too long", host);
    if (desc->port > 65535 && desc->port != SPLAT_VIEWER_PORT_ANY)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: port %u (1..65535)", desc->port);
    const splat_renderer *r;
    splat_status st = splat__ctx_renderer(ctx, &r, err);
    if (st != SPLAT_OK) return st;
    splat_viewer *v = splat__calloc(1, sizeof *v);
    if (!v) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: out of host memory");
    v->desc = *desc;
    snprintf(v->host, sizeof v->host, "%s", host);
    v->desc.host = v->host;
    if (!v->desc.port) v->desc.port = 8765;
    if (!v->desc.max_fps) v->desc.max_fps = 30;
    if (!v->desc.max_side) v->desc.max_side = 2048;
    /* a frame's rgb + transmittance must fit one storage binding */
    while (v->desc.max_side > 16 && (uint64_t)v->desc.max_side * v->desc.max_side * 16 > ctx->gpu->info.max_storage_range)
        v->desc.max_side -= 16;
    v->gpu = ctx->gpu;
    v->renderer = r;
    v->ref.radius = 1.0f;
    v->ref.up[1] = -1.0f;
    if (pthread_mutex_init(&v->lock, NULL) != 0 || pthread_cond_init(&v->wake, NULL) != 0 ||
        pthread_cond_init(&v->control, NULL) != 0) {
        splat__free(v);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot create its locks");
    }
    /* beside training's queue when the device has a second one */
    st = splat__stream_init_on(v->gpu, v->gpu->queue2, &v->stream, err);
    v->has_stream = st == SPLAT_OK;
    /* a frame is one submission: on a shared queue, adaptive commits would let training's
     * iterations in between its parts, and each part would wait behind them */
    v->stream.auto_sync = SPLAT_SYNC_NONE;
    if (st == SPLAT_OK) st = splat__view_server_start(v, err);
    if (st == SPLAT_OK) st = splat__view_frames_start(v, err);
    if (st != SPLAT_OK) {
        splat_viewer_free(v);
        return st;
    }
    *out = v;
    return SPLAT_OK;
}

uint32_t splat_viewer_port(const splat_viewer *v) { return v->port; }

/* Every client is sent a new hello (what it shows changed). Under the lock. */
static void hello_again(splat_viewer *v)
{
    for (splat_view_session *s = v->sessions; s; s = s->next) s->hello_sent = false;
}

static splat_status copy_cameras(splat_viewer *v, const splat_camera *cams, const char *const *names, uint32_t n,
                                 splat_error *err)
{
    splat_camera *c = n ? splat__malloc((size_t)n * sizeof *c) : NULL;
    char **nm = n ? splat__calloc(n, sizeof *nm) : NULL;
    bool ok = !n || (c && nm);
    for (uint32_t k = 0; ok && k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "camera %u", k);
        nm[k] = splat__strdup(names && names[k] ? names[k] : name);
        ok = nm[k] != NULL;
    }
    if (!ok) {
        for (uint32_t k = 0; nm && k < n; k++) splat__free(nm[k]);
        splat__free(nm);
        splat__free(c);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: out of host memory");
    }
    if (n) memcpy(c, cams, (size_t)n * sizeof *c);
    pthread_mutex_lock(&v->lock);
    for (uint32_t k = 0; k < v->n_cams; k++) splat__free(v->cam_names[k]);
    splat__free(v->cam_names);
    splat__free(v->cams);
    v->cams = c;
    v->cam_names = nm;
    v->n_cams = n;
    hello_again(v);
    pthread_mutex_unlock(&v->lock);
    return SPLAT_OK;
}

splat_status splat_viewer_set_cameras(splat_viewer *v, const splat_camera *cams, const char *const *names, uint32_t n,
                                      splat_error *err)
{
    for (uint32_t k = 0; k < n; k++) {
        const splat_camera *c = &cams[k];
        bool finite = isfinite(c->fx) && isfinite(c->fy) && isfinite(c->cx) && isfinite(c->cy) && c->fx > 0 && c->fy > 0;
        for (int i = 0; i < 9; i++) finite = finite && isfinite(c->R[i]);
        for (int i = 0; i < 3; i++) finite = finite && isfinite(c->t[i]);
        if (!finite || !c->width || !c->height)
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: camera %u has a non-finite value, a focal length that "
                               "is not positive, or no size", k);
    }
    splat_status st = copy_cameras(v, cams, names, n, err);
    if (st != SPLAT_OK) return st;
    /* up comes from the cameras; the centre and size stay the scene's once there is one */
    splat_view_frame_of_ref ref;
    splat__view_frame_of_ref(NULL, 0, cams, n, &ref);
    pthread_mutex_lock(&v->lock);
    memcpy(v->ref.up, ref.up, sizeof ref.up);
    if (v->source == SPLAT_VIEW_SOURCE_NONE) v->ref = ref;
    pthread_mutex_unlock(&v->lock);
    splat__view_server_kick(v);
    return SPLAT_OK;
}

splat_status splat_viewer_set_scene(splat_viewer *v, const splat_scene *scene, const splat_render_desc *desc,
                                    splat_error *err)
{
    if (v->source != SPLAT_VIEW_SOURCE_NONE)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: it already shows a scene or a training run");
    splat_render_desc rd;
    splat_status st = splat__render_options(desc, scene->sh_degree, &rd, err);
    if (st == SPLAT_OK) st = splat__scene_check(scene, "scene", err);
    if (st == SPLAT_OK) st = splat__scene_gpu_init(v->gpu, &v->scene, "view.scene", SPLAT_MAX(scene->count, 1u), rd.sh_half, err);
    if (st == SPLAT_OK) st = splat__scene_gpu_upload(v->gpu, &v->scene, scene, err);
    if (st != SPLAT_OK) {
        splat__scene_gpu_free(v->gpu, &v->scene);
        return st;
    }
    pthread_mutex_lock(&v->lock);
    splat__view_frame_of_ref(scene->means, scene->count, v->cams, v->n_cams, &v->ref);
    v->render = rd;
    v->source = SPLAT_VIEW_SOURCE_SCENE;
    hello_again(v);
    pthread_cond_broadcast(&v->wake);
    pthread_mutex_unlock(&v->lock);
    splat__view_server_kick(v);
    return SPLAT_OK;
}

static void detach(splat_viewer *v)
{
    pthread_mutex_lock(&v->lock);
    if (v->trainer) {
        splat__train_set_tap(v->trainer, NULL);
        v->trainer = NULL;
        v->stats.done = true;
        v->stats.paused = v->stats.pause_asked = false;
        v->pause = false;
        v->stats_seq++;
        pthread_cond_broadcast(&v->wake);
    }
    pthread_mutex_unlock(&v->lock);
}

splat_status splat_viewer_attach(splat_viewer *v, splat_trainer *t, splat_error *err)
{
    if (!t) {
        detach(v);
        splat__view_server_kick(v);
        return SPLAT_OK;
    }
    if (v->source != SPLAT_VIEW_SOURCE_NONE)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: it already shows a scene or a training run");
    /* the back buffer, which the first copy fills; the front gets its buffers by swapping */
    uint32_t rows = t->model.count + t->model.count / 4 + 1;
    splat_status st = splat__scene_gpu_init(v->gpu, &v->back, "view.snapshot", rows, false, err);
    /* the dataset's cameras, training and held out, named after their images */
    uint32_t n = t->ds.n_views;
    splat_camera *cams = splat__malloc((size_t)SPLAT_MAX(n, 1u) * sizeof *cams);
    const char **names = splat__malloc((size_t)SPLAT_MAX(n, 1u) * sizeof *names);
    if (st == SPLAT_OK && (!cams || !names)) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: out of host memory");
    for (uint32_t k = 0; st == SPLAT_OK && k < n; k++) {
        cams[k] = t->ds.views[k].camera;
        names[k] = t->ds.views[k].name;
    }
    if (st == SPLAT_OK) st = copy_cameras(v, cams, names, n, err);
    splat_view_frame_of_ref ref;
    if (st == SPLAT_OK) splat__view_frame_of_ref(NULL, 0, cams, n, &ref);
    splat__free(cams);
    splat__free(names);
    if (st != SPLAT_OK) {
        splat__scene_gpu_free(v->gpu, &v->back);
        return st;
    }
    atomic_store(&v->tap.state, SPLAT_TAP_IDLE);
    v->tap.dst = &v->back;
    v->tap.notify = splat__view_tap_answered;
    v->tap.user = v;
    splat__train_set_tap(t, &v->tap);
    pthread_mutex_lock(&v->lock);
    v->ref = ref;
    v->render = t->desc.render;
    memcpy(v->render.background, t->background, sizeof v->render.background);
    v->trainer = t;
    v->stats.training = true;
    v->stats.prog.step = t->step;
    v->stats.prog.steps = t->steps;
    v->stats.prog.n_gaussians = t->model.count;
    v->stats_seq++;
    v->source = SPLAT_VIEW_SOURCE_TRAINER;
    hello_again(v);
    pthread_cond_broadcast(&v->wake);
    pthread_mutex_unlock(&v->lock);
    splat__view_server_kick(v);
    return SPLAT_OK;
}

void splat_viewer_progress(splat_viewer *v, const splat_train_progress *p)
{
    pthread_mutex_lock(&v->lock);
    v->stats.prog = *p;
    splat__view_history_add(&v->history, p);
    v->stats_seq++;
    pthread_mutex_unlock(&v->lock);
    splat__view_server_kick(v);
}

void splat_viewer_note(splat_viewer *v, const char *text)
{
    pthread_mutex_lock(&v->lock);
    snprintf(v->note, sizeof v->note, "%s", text);
    v->note_seq++;
    pthread_mutex_unlock(&v->lock);
    splat__view_server_kick(v);
}

void splat_viewer_control(splat_viewer *v, uint32_t wait_ms, splat_viewer_control_state *out)
{
    memset(out, 0, sizeof *out);
    double deadline = splat__now() + wait_ms * 1e-3;
    pthread_mutex_lock(&v->lock);
    for (;;) {
        splat_trainer *t = v->trainer;
        if (!t || v->stop) break;
        if (atomic_load_explicit(&v->tap.state, memory_order_acquire) == SPLAT_TAP_ASKED) {
            /* the renderer wants a snapshot and the loop is not running: answer it here */
            pthread_mutex_unlock(&v->lock);
            splat_error err = {0};
            if (splat__train_serve_tap(t, &err) != SPLAT_OK) splat__view_log(v, "snapshot: %s", err.msg);
            pthread_mutex_lock(&v->lock);
            continue;
        }
        out->save += v->saves;
        v->saves = 0;
        out->paused = v->pause;
        if (v->stats.paused != out->paused || (out->paused && v->stats.pause_asked)) {
            v->stats.paused = out->paused;
            v->stats.pause_asked = false;
            v->stats_seq++;
            pthread_mutex_unlock(&v->lock);
            splat__view_server_kick(v);
            pthread_mutex_lock(&v->lock);
        }
        double now = splat__now();
        if (!out->paused || out->save || now >= deadline) break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double end = ts.tv_sec + ts.tv_nsec * 1e-9 + (deadline - now);
        ts.tv_sec = (time_t)end;
        ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&v->control, &v->lock, &ts);
    }
    pthread_mutex_unlock(&v->lock);
}

void splat_viewer_free(splat_viewer *v)
{
    if (!v) return;
    detach(v);
    splat__view_frames_stop(v);
    splat__view_server_stop(v);
    /* a copy the trainer submitted before it was detached may still be writing the back buffer */
    splat_view_snap *copy = atomic_load(&v->tap.state) == SPLAT_TAP_COPIED ? &(splat_view_snap){.sem = v->tap.sem, .value = v->tap.value}
                            : v->pending ? &v->pend : NULL;
    if (copy)
        vkWaitSemaphores(v->gpu->device, &(VkSemaphoreWaitInfo){.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                         .semaphoreCount = 1, .pSemaphores = &copy->sem, .pValues = &copy->value}, UINT64_MAX);
    if (v->has_stream) splat__stream_free(&v->stream);
    splat__render_bufs_free(v->gpu, &v->rb);
    if (v->has_pack) splat__pipe_free(v->gpu, &v->pack);
    if (v->has_prof) splat__prof_free(v->gpu, &v->prof);
    if (v->has_enc) splat__view_encoder_free(&v->enc);
    splat__buf_free(v->gpu, &v->packed);
    splat__buf_free(v->gpu, &v->pixels);
    splat__scene_gpu_free(v->gpu, &v->scene);
    splat__scene_gpu_free(v->gpu, &v->back);
    for (uint32_t k = 0; k < v->n_cams; k++) splat__free(v->cam_names[k]);
    splat__free(v->cam_names);
    splat__free(v->cams);
    pthread_cond_destroy(&v->control);
    pthread_cond_destroy(&v->wake);
    pthread_mutex_destroy(&v->lock);
    splat__free(v);
}
