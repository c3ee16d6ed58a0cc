#include <stdio.h>

#include "train/init.h"
#include "train/train.h"

/* ------------------------------------------------------------------ pipelines */

splat_status splat__train_pipes_init(splat_gpu *g, splat_train_pipes *p, splat_error *err)
{
    memset(p, 0, sizeof *p);
    const uint32_t push = sizeof(splat_train_push);
    struct {
        splat_pipe *pipe;
        splat_pipe_desc desc;
    } all[] = {
        {&p->frame_setup, {.shader = "frame_setup", .n_bindings = 3, .push_size = push}},
        {&p->loss_fwd, {.shader = "loss_fwd", .n_bindings = 7, .push_size = push}},
        {&p->loss_bwd, {.shader = "loss_bwd", .n_bindings = 7, .push_size = push}},
        {&p->loss_reduce, {.shader = "loss_reduce", .n_bindings = 6, .push_size = push}},
        {&p->adam, {.shader = "adam", .n_bindings = 17, .push_size = push}},
        {&p->densify_mark, {.shader = "densify_mark", .n_bindings = 7, .push_size = push}},
        {&p->densify_apply, {.shader = "densify_apply", .n_bindings = 27, .push_size = push}},
        {&p->opacity_reset, {.shader = "opacity_reset", .n_bindings = 2, .push_size = push}},
    };
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < SPLAT_COUNTOF(all) && st == SPLAT_OK; k++) st = splat__pipe_init(g, all[k].pipe, &all[k].desc, err);
    if (st != SPLAT_OK) splat__train_pipes_free(g, p);
    return st;
}

void splat__train_pipes_free(splat_gpu *g, splat_train_pipes *p)
{
    splat_pipe *all[] = {&p->frame_setup, &p->loss_fwd, &p->loss_bwd, &p->loss_reduce, &p->adam,
                         &p->densify_mark, &p->densify_apply, &p->opacity_reset};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__pipe_free(g, all[k]);
}

/* ------------------------------------------------------------------- schedule */

static uint32_t hash32(uint32_t x)
{
    uint32_t state = x * 747796405u + 2891336453u;
    uint32_t word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

uint32_t splat__train_view_of_step(const splat_trainer *t, uint32_t step)
{
    /* A permutation per epoch (Fisher-Yates from a generator seeded by the run seed and the
     * epoch), so any step's view can be recomputed: re-running steps after an overflow, or
     * resuming from a checkpoint, sees the same views. */
    static _Thread_local struct {
        const splat_trainer *t;
        uint64_t seed;
        uint32_t epoch, n;
        uint32_t *perm;
    } cache;
    uint32_t n = t->n_train, epoch = step / n;
    if (cache.t != t || cache.seed != t->desc.seed || cache.epoch != epoch || cache.n != n || !cache.perm) {
        uint32_t *perm = splat__realloc(cache.perm, (size_t)n * sizeof *perm);
        if (!perm) return t->train_views[step % n];
        cache.perm = perm;
        splat_rng rng;
        splat__rng_seed(&rng, t->desc.seed * 0x9e3779b97f4a7c15ull + epoch);
        for (uint32_t i = 0; i < n; i++) perm[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)(splat__rng_u64(&rng) % (i + 1));
            uint32_t tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        cache.t = t;
        cache.seed = t->desc.seed;
        cache.epoch = epoch;
        cache.n = n;
    }
    return t->train_views[cache.perm[step % n]];
}

static bool refine_due(const splat_trainer *t, uint32_t s)
{
    return s < t->refine_stop && s > t->refine_start && s % t->refine_every == 0;
}
static bool reset_due(const splat_trainer *t, uint32_t s) { return s < t->refine_stop && s > 0 && s % t->reset_every == 0; }

static uint32_t active_degree(const splat_trainer *t, uint32_t step)
{
    uint32_t d = step / 1000;
    return d < t->sh_max ? d : t->sh_max;
}

/* The ring slot of `step`: everything the recorded iteration needs that changes per step. */
static void fill_slot(const splat_trainer *t, splat_train_slot *s, uint32_t step, uint32_t view, bool training)
{
    memset(s, 0, sizeof *s);
    s->view = view;
    s->step = step;
    s->sh_degree = active_degree(t, step);
    s->n_gaussians = t->count;
    s->cap = t->desc.max_gaussians_per_tile;
    if (training && t->desc.random_background) {
        uint32_t h = hash32((uint32_t)t->desc.seed ^ hash32(step));
        for (int c = 0; c < 3; c++) {
            h = hash32(h + (uint32_t)c);
            s->background[c] = (float)((h >> 8) * (1.0 / 16777216.0));
        }
    } else {
        memcpy(s->background, t->background, sizeof s->background);
    }
    double progress = (double)step / (double)t->steps;
    s->lr[0] = (float)(1.6e-4 * t->scene_scale * pow(0.01, progress));
    s->lr[1] = 5e-3f;
    s->lr[2] = 1e-3f;
    s->lr[3] = 5e-2f;
    s->lr[4] = 2.5e-3f;
    s->lr[5] = 2.5e-3f / 20.0f;
    double tt = (double)step + 1.0;
    s->bias1 = (float)(1.0 - pow(SPLAT_ADAM_B1, tt));
    s->bias2 = (float)sqrt(1.0 - pow(SPLAT_ADAM_B2, tt));
}

/* ------------------------------------------------------------------ recording */

void splat__train_record(splat_trainer *t, splat_cmd *c, uint32_t slot, bool backward, const splat_buf *pixels)
{
    splat_renderer *r = &t->ctx->renderer;
    splat_render_bufs *rb = &t->rb;
    splat_train_push pc = {.slot = slot, .n = t->count, .width = t->max_w, .height = t->max_h};
    splat_view setup[] = {SPLAT_VIEW(t->slots), SPLAT_VIEW(t->views), SPLAT_VIEW(rb->frame)};
    splat__cmd_dispatch(c, &t->pipes.frame_setup, setup, 3, &pc, sizeof pc, 1, 1, 1);
    splat__cmd_barrier(c);

    splat__render_fwd(c, r, &t->params, rb, t->count);

    splat_view loss[] = {SPLAT_VIEW(rb->frame),    SPLAT_VIEW(t->slots), SPLAT_VIEW(t->views), SPLAT_VIEW(*pixels),
                         SPLAT_VIEW(rb->out_rgbt), SPLAT_VIEW(t->maps),  SPLAT_VIEW(t->parts)};
    splat__cmd_dispatch(c, &t->pipes.loss_fwd, loss, 7, &pc, sizeof pc, t->loss_groups_x, t->loss_groups_y, 1);
    splat__cmd_barrier(c);
    if (backward) {
        loss[6] = SPLAT_VIEW(rb->grad_img);
        splat__cmd_dispatch(c, &t->pipes.loss_bwd, loss, 7, &pc, sizeof pc, t->loss_groups_x, t->loss_groups_y, 1);
    }
    splat_train_push rpc = pc;
    rpc.n = t->loss_groups_x * t->loss_groups_y;
    splat_view reduce[] = {SPLAT_VIEW(rb->frame), SPLAT_VIEW(t->parts), SPLAT_VIEW(rb->counters), SPLAT_VIEW(rb->gate),
                           SPLAT_VIEW_AT(t->reports, slot * t->report_stride, sizeof(splat_train_report)),
                           SPLAT_VIEW(t->slots)};
    splat__cmd_dispatch(c, &t->pipes.loss_reduce, reduce, 6, &rpc, sizeof rpc, 1, 1, 1);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "loss");
    if (!backward) return;

    splat__render_bwd(c, r, &t->params, rb, t->count, &t->grads, true);
    splat_scene_gpu *p = &t->params, *g = &t->grads, *m = &t->moments;
    splat_view adam[] = {SPLAT_VIEW(t->slots),      SPLAT_VIEW(rb->gate),       SPLAT_VIEW(p->means),
                         SPLAT_VIEW(p->log_scales), SPLAT_VIEW(p->quats),       SPLAT_VIEW(p->opacities),
                         SPLAT_VIEW(p->sh),         SPLAT_VIEW(g->means),       SPLAT_VIEW(g->log_scales),
                         SPLAT_VIEW(g->quats),      SPLAT_VIEW(g->opacities),   SPLAT_VIEW(g->sh),
                         SPLAT_VIEW(m->means),      SPLAT_VIEW(m->log_scales),  SPLAT_VIEW(m->quats),
                         SPLAT_VIEW(m->opacities),  SPLAT_VIEW(m->sh)};
    /* one thread per parameter element: 3 + 3 + 4 + 1 + 48 floats per Gaussian */
    splat__cmd_dispatch_1d(c, &t->pipes.adam, adam, SPLAT_COUNTOF(adam), &pc, sizeof pc, (uint64_t)t->count * 59);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "adam");
}

splat_status splat__train_rerecord(splat_trainer *t, splat_error *err)
{
    for (int k = 0; k < SPLAT_TRAIN_RING; k++) {
        if (t->recorded) splat__rec_free(t->g, &t->rec[k]);
        splat_status st = splat__rec_begin(t->g, &t->rec[k], err);
        if (st != SPLAT_OK) {
            t->recorded = false;
            return st;
        }
        const splat_buf *pixels = t->streamed ? &t->slot_images[k] : &t->images;
        if (t->profiling) splat__prof_begin(&t->rec[k].cmd, &t->prof[k]);
        splat__train_record(t, &t->rec[k].cmd, (uint32_t)k, true, pixels);
        st = splat__rec_end(&t->rec[k], err);
        if (st != SPLAT_OK) return st;
    }
    t->recorded = true;
    return SPLAT_OK;
}

/* ------------------------------------------------------------------ retiring */

static const splat_train_report *report_of(const splat_trainer *t, uint32_t slot)
{
    return (const splat_train_report *)((const char *)t->reports.map + slot * t->report_stride);
}

static void note_progress(splat_trainer *t, const splat_train_report *rep, uint32_t slot)
{
    const splat_train_slot *s = (const splat_train_slot *)t->slots.map + slot;
    const splat_data_view *v = &t->ds.views[s->view];
    double px = (double)v->camera.width * v->camera.height * 3.0;
    double l1 = rep->l1_sum / px, ssim = rep->n_ssim ? rep->ssim_sum / rep->n_ssim : 1.0;
    t->prog.loss = (float)((1.0 - SPLAT_LOSS_LAMBDA) * l1 + SPLAT_LOSS_LAMBDA * (1.0 - ssim));
    t->prog.psnr = rep->sq_sum > 0 ? (float)(-10.0 * log10(rep->sq_sum / px)) : 99.0f;
}

/* After a non-finite report: the first Gaussian whose parameters or Adam state are not finite,
 * described in the error so a user (or developer) can see what went wrong. */
static splat_status describe_nonfinite(splat_trainer *t, uint32_t step, splat_error *err)
{
    splat_stream *s = &t->ctx->stream;
    splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, NULL);
    uint64_t n = t->count;
    float *p = splat__malloc(n * 4 * 15 + 16), *m = splat__malloc(n * 4 * 30 + 16);
    char what[400] = "";
    if (p && m &&
        splat__buf_download(t->g, &t->params.means, 0, p, n * 12, NULL) == SPLAT_OK &&
        splat__buf_download(t->g, &t->params.log_scales, 0, p + 3 * n, n * 12, NULL) == SPLAT_OK &&
        splat__buf_download(t->g, &t->params.quats, 0, p + 6 * n, n * 16, NULL) == SPLAT_OK &&
        splat__buf_download(t->g, &t->params.opacities, 0, p + 10 * n, n * 4, NULL) == SPLAT_OK &&
        splat__buf_download(t->g, &t->moments.means, 0, m, n * 24, NULL) == SPLAT_OK &&
        splat__buf_download(t->g, &t->moments.log_scales, 0, m + 6 * n, n * 24, NULL) == SPLAT_OK) {
        for (uint64_t i = 0; i < n && !what[0]; i++) {
            const float *mu = p + 3 * i, *ls = p + 3 * n + 3 * i, *q = p + 6 * n + 4 * i, o = p[10 * n + i];
            const float *mm = m + 6 * i, *ms = m + 6 * n + 6 * i;
            bool bad = !isfinite(o);
            for (int k = 0; k < 3; k++) bad |= !isfinite(mu[k]) || !isfinite(ls[k]);
            for (int k = 0; k < 4; k++) bad |= !isfinite(q[k]);
            if (bad)
                snprintf(what, sizeof what,
                         "; Gaussian %llu: mean (%g %g %g), log-scale (%g %g %g), quat (%g %g %g %g), opacity %g, "
                         "Adam m/v of the mean (%g %g %g / %g %g %g), of the scale (%g / %g)",
                         (unsigned long long)i, mu[0], mu[1], mu[2], ls[0], ls[1], ls[2], q[0], q[1], q[2], q[3], o, mm[0],
                         mm[1], mm[2], mm[3], mm[4], mm[5], ms[0], ms[3]);
        }
    }
    splat__free(p);
    splat__free(m);
    return splat__fail(err, SPLAT_ERR_NONFINITE, "training diverged: NaN or Inf parameters at step %u (%u Gaussians)%s", step,
                       t->count, what);
}

/* Retires the iteration in `slot`. *gated_step is set (to its step) when it found the update
 * gate closed: an overflow to recover from. Non-finite parameters end the run. */
static splat_status retire(splat_trainer *t, uint32_t slot, uint32_t *gated_step, splat_error *err)
{
    if (!t->inflight[slot]) return SPLAT_OK;
    splat_status st = splat__stream_wait(&t->ctx->stream, t->inflight[slot], err);
    t->inflight[slot] = 0;
    if (st != SPLAT_OK) return st;
    const splat_train_report *rep = report_of(t, slot);
    if (rep->counters.nonfinite) return describe_nonfinite(t, rep->step, err);
    if (rep->gate) {
        if (rep->step < *gated_step) *gated_step = rep->step;
        return SPLAT_OK;
    }
    note_progress(t, rep, slot);
    t->prog.isect_padded += rep->counters.isect_padded;
    if (t->profiling) {
        double ms[SPLAT_PROF_MAX];
        const splat_prof *p = &t->prof[slot];
        st = splat__prof_read(t->g, p, ms, err);
        for (uint32_t i = 1; i < p->n && st == SPLAT_OK; i++) {
            uint32_t k = 0;
            while (k < t->n_stages && strcmp(t->stage_name[k], p->labels[i]) != 0) k++;
            if (k == t->n_stages && k < SPLAT_PROF_MAX) t->stage_name[t->n_stages++] = p->labels[i];
            if (k < SPLAT_PROF_MAX) t->stage_ms[k] += ms[i - 1];
        }
        t->n_profiled++;
    }
    return st;
}

uint32_t splat_trainer_profile(const splat_trainer *t, splat_stage_time *stages, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->n_stages && n < max; k++)
        stages[n++] = (splat_stage_time){t->stage_name[k], t->n_profiled ? t->stage_ms[k] / t->n_profiled : 0};
    return n;
}

/* Grows the intersection buffers to what the gated iterations needed, reopens the gate and
 * rewinds to the first gated step: nothing was updated from it on. */
static splat_status recover_overflow(splat_trainer *t, uint32_t gated_step, splat_error *err)
{
    uint32_t needed = 0;
    for (uint32_t k = 0; k < SPLAT_TRAIN_RING; k++) needed = SPLAT_MAX(needed, report_of(t, k)->counters.n_isect);
    splat_status st = splat__render_bufs_grow_isect(t->g, &t->ctx->renderer, &t->rb, needed, err);
    if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
    if (st != SPLAT_OK) return st;
    splat__cmd_fill(splat__stream_cmd(&t->ctx->stream), SPLAT_VIEW(t->rb.gate), 0);
    st = splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    t->step = gated_step;
    return st;
}

/* Retires every iteration in flight, oldest first. If any found the gate closed (earlier
 * than `gated`, which a caller may already know of), recovers and sets *rewound. */
static splat_status settle(splat_trainer *t, uint32_t gated, bool *rewound, splat_error *err)
{
    *rewound = false;
    for (uint32_t i = 0; i < SPLAT_TRAIN_RING; i++) {
        uint32_t k = (t->step + i) % SPLAT_TRAIN_RING;
        splat_status st = retire(t, k, &gated, err);
        if (st != SPLAT_OK) return st;
    }
    if (gated == UINT32_MAX) return SPLAT_OK;
    *rewound = true;
    return recover_overflow(t, gated, err);
}

splat_status splat__train_drain(splat_trainer *t, splat_error *err)
{
    /* Outside the loop (evaluation, checkpoints): finish whatever a rewind re-queues too. */
    bool rewound;
    splat_status st = settle(t, UINT32_MAX, &rewound, err);
    if (st == SPLAT_OK && rewound) return splat__fail(err, SPLAT_ERR_DEVICE, "training: drained in the middle of a step");
    /* Work outside the ring (an opacity reset is only committed) may still be running, and on
     * unified-memory devices the callers read the parameters in place, with no copy ordered
     * after it: wait for everything submitted. */
    if (st == SPLAT_OK) st = splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    return st;
}

/* ------------------------------------------------------------------ the loop */

static void maybe_progress(splat_trainer *t, bool force)
{
    if (!t->desc.progress) return;
    double now = splat__now();
    uint32_t every = t->desc.progress_ms ? t->desc.progress_ms : 250;
    if (!force && (now - t->t_last_progress) * 1000.0 < every) return;
    t->t_last_progress = now;
    t->prog.step = t->step;
    t->prog.steps = t->steps;
    t->prog.n_gaussians = t->count;
    double dt = now - t->t_start;
    uint32_t done = t->step - t->step_start;
    t->prog.iters_per_sec = dt > 0 ? done / dt : 0;
    t->prog.eta_sec = t->prog.iters_per_sec > 0 ? (t->steps - t->step) / t->prog.iters_per_sec : 0;
    t->desc.progress(t->desc.progress_user, &t->prog);
}

static splat_status submit_step(splat_trainer *t, uint32_t slot, splat_error *err)
{
    uint32_t step = t->step;
    uint32_t view = splat__train_view_of_step(t, step);
    splat_train_slot *s = (splat_train_slot *)t->slots.map + slot;
    fill_slot(t, s, step, view, true);
    if (t->streamed) {
        const splat_image *im = &t->host_images[view];
        memcpy(t->slot_images[slot].map, im->rgba, (size_t)im->width * im->height * 4);
    }
    uint64_t value;
    splat_status st = splat__stream_replay(&t->ctx->stream, &t->rec[slot], &value, err);
    if (st != SPLAT_OK) return st;
    t->inflight[slot] = value;
    t->inflight_step[slot] = step;
    return SPLAT_OK;
}

splat_status splat_trainer_run(splat_trainer *t, uint32_t until_step, splat_error *err)
{
    if (until_step > t->steps || until_step == 0) until_step = t->steps;
    t->t_start = splat__now();
    t->step_start = t->step;
    bool rewound;
    for (;;) {
        while (t->step < until_step) {
            uint32_t slot = t->step % SPLAT_TRAIN_RING;
            uint32_t gated = UINT32_MAX;
            splat_status st = retire(t, slot, &gated, err);
            if (st == SPLAT_OK && gated != UINT32_MAX) {
                /* an overflow: recover and re-run from the first skipped step */
                st = settle(t, gated, &rewound, err);
                if (st != SPLAT_OK) return st;
                continue;
            }
            if (st == SPLAT_OK) st = submit_step(t, slot, err);
            if (st != SPLAT_OK) return st;
            uint32_t s = t->step++;
            if (refine_due(t, s) || reset_due(t, s)) {
                st = settle(t, UINT32_MAX, &rewound, err);
                if (st != SPLAT_OK) return st;
                if (rewound) continue; /* step s comes again, and its refine with it */
                if (refine_due(t, s)) st = splat__densify(t, s, err);
                if (st == SPLAT_OK && reset_due(t, s)) st = splat__opacity_reset(t, err);
                if (st != SPLAT_OK) return st;
            }
            maybe_progress(t, false);
        }
        splat_status st = settle(t, UINT32_MAX, &rewound, err);
        if (st != SPLAT_OK) return st;
        if (!rewound) break;
    }
    maybe_progress(t, true);
    return SPLAT_OK;
}

uint32_t splat_trainer_step(const splat_trainer *t) { return t->step; }

uint32_t splat_trainer_diagnostics(splat_trainer *t, char *msg, size_t size)
{
    if (size) msg[0] = '\0';
    return splat__render_debug(t->g, &t->rb, msg, size);
}
