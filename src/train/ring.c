/* train: the iterations in flight. SPLAT_TRAIN_RING recorded command buffers, one per ring slot,
 * replayed in turn; the host fills a slot, submits its recording, and reads its report only when
 * it comes round again. An overflow found there closed the update gate on the GPU, so nothing was
 * updated from the first overflowed step on: the ring grows the buffers, re-records and re-runs
 * from that step. The densification strategy runs between steps, when it is due. */
#include "train/strategy.h"

/* ------------------------------------------------------------------ recording */

void splat__train_record(splat_trainer *t, splat_cmd *c, uint32_t slot, bool backward)
{
    const splat_renderer *r = t->env.renderer;
    splat_render_bufs *rb = &t->rb;
    splat_model *m = &t->model;
    splat__frame_setup_record(c, &t->pipes, SPLAT_VIEW(t->ring.slots), SPLAT_VIEW(t->images.views), SPLAT_VIEW(rb->frame),
                              slot);
    splat__cmd_barrier(c);

    /* Adam checks every parameter it writes, so the forward need read no culled Gaussian's SH */
    splat__render_fwd(c, r, &m->params, rb, m->count, SPLAT_FWD_SH_DRAWN);

    splat__loss_record(c, &t->pipes, &(splat_loss_args){
        .frame = SPLAT_VIEW(rb->frame),
        .slots = SPLAT_VIEW(t->ring.slots),
        .pixels = SPLAT_VIEW(*splat__images_pixels(&t->images, slot)),
        .masks = SPLAT_VIEW(*splat__images_masks(&t->images, slot)),
        .render = SPLAT_VIEW(rb->out_rgbt),
        .maps = SPLAT_VIEW(t->maps),
        .parts = SPLAT_VIEW(t->parts),
        .grad = SPLAT_VIEW(rb->grad_img),
        .counters = SPLAT_VIEW(rb->counters),
        .gate = SPLAT_VIEW(rb->gate),
        .report = SPLAT_VIEW_AT(t->ring.reports, slot * t->ring.report_stride, sizeof(splat_train_report)),
        .slot = slot,
        .width = slot == SPLAT_TRAIN_RING ? t->room_w : t->max_w,
        .height = slot == SPLAT_TRAIN_RING ? t->room_h : t->max_h,
        .backward = backward,
    });
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "loss");
    if (!backward) return;

    splat__render_bwd(c, r, &m->params, rb, m->count, &m->grads,
                      SPLAT_BWD_SH_RECORD | (t->strategy->stats ? SPLAT_BWD_STATS : 0));
    splat_strategy_rec sr = {.slots = SPLAT_VIEW(t->ring.slots), .gate = SPLAT_VIEW(rb->gate), .model = m, .slot = slot,
                             .seed = (uint32_t)t->desc.seed};
    if (t->strategy->record) t->strategy->record(t->strategy_state, c, &sr, false);
    splat__adam_record(c, &t->pipes, &(splat_adam_args){
        .slots = SPLAT_VIEW(t->ring.slots),
        .gate = SPLAT_VIEW(rb->gate),
        .params = &m->params,
        .grads = &m->grads,
        .moments = &m->moments,
        .radii = SPLAT_VIEW(rb->radii),
        .selective = t->desc.selective_adam,
        .sh_record = true,
        .slot = slot,
        .n = m->count,
    });
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "adam");
    if (t->strategy->record) {
        t->strategy->record(t->strategy_state, c, &sr, true);
        splat__cmd_mark(c, "strategy");
    }
}

splat_status splat__train_rerecord(splat_trainer *t, splat_error *err)
{
    splat_ring *ring = &t->ring;
    for (uint32_t k = 0; k < SPLAT_TRAIN_RING; k++) {
        if (ring->recorded) splat__rec_free(t->env.gpu, &ring->rec[k]);
        splat_status st = splat__rec_begin(t->env.gpu, &ring->rec[k], err);
        if (st != SPLAT_OK) {
            ring->recorded = false;
            return st;
        }
        if (t->prof.on) splat__prof_begin(&ring->rec[k].cmd, &t->prof.prof[k]);
        splat__train_record(t, &ring->rec[k].cmd, k, true);
        st = splat__rec_end(&ring->rec[k], err);
        if (st != SPLAT_OK) return st;
    }
    ring->recorded = true;
    return SPLAT_OK;
}

splat_status splat__train_regrown(splat_trainer *t, splat_error *err)
{
    splat_status st = splat__train_rerecord(t, err);
    if (st != SPLAT_OK) return st;
    splat__cmd_fill(splat__stream_cmd(t->env.stream), SPLAT_VIEW_AT(t->rb.gate, 0, 4), 0); /* the gate word alone */
    return splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
}

/* ------------------------------------------------------------------ retiring */

static const splat_train_report *report_of(const splat_trainer *t, uint32_t slot)
{
    return (const splat_train_report *)((const char *)t->ring.reports.map + slot * t->ring.report_stride);
}

static void note_progress(splat_trainer *t, const splat_train_report *rep)
{
    double px = rep->n_values ? (double)rep->n_values : 1.0; /* the pixel values that count */
    double l1 = rep->l1_sum / px, ssim = rep->n_ssim ? rep->ssim_sum / rep->n_ssim : 1.0;
    t->prog.loss = (float)((1.0 - SPLAT_LOSS_LAMBDA) * l1 + SPLAT_LOSS_LAMBDA * (1.0 - ssim));
    t->prog.psnr = (float)splat__psnr(rep->sq_sum, px);
}

static splat_status note_profile(splat_trainer *t, uint32_t slot, splat_error *err)
{
    splat_trainer_prof *pr = &t->prof;
    double ms[SPLAT_PROF_MAX];
    const splat_prof *p = &pr->prof[slot];
    splat_status st = splat__prof_read(t->env.gpu, p, ms, err);
    for (uint32_t i = 1; i < p->n && st == SPLAT_OK; i++) {
        uint32_t k = 0;
        while (k < pr->n_stages && strcmp(pr->stage_name[k], p->labels[i]) != 0) k++;
        if (k == pr->n_stages && k < SPLAT_PROF_MAX) pr->stage_name[pr->n_stages++] = p->labels[i];
        if (k < SPLAT_PROF_MAX) pr->stage_ms[k] += ms[i - 1];
    }
    pr->n_profiled++;
    return st;
}

/* Retires the iteration in `slot`. *gated_step is set (to its step) when it found the update
 * gate closed: an overflow to recover from; *needed grows to the intersections it needed. Non-finite
 * parameters end the run. */
static splat_status retire(splat_trainer *t, uint32_t slot, uint32_t *gated_step, uint32_t *needed, splat_error *err)
{
    splat_ring *ring = &t->ring;
    if (!ring->inflight[slot]) return SPLAT_OK;
    splat_status st = splat__stream_wait(t->env.stream, ring->inflight[slot], err);
    ring->inflight[slot] = 0;
    if (st != SPLAT_OK) return st;
    const splat_train_report *rep = report_of(t, slot);
    if (rep->counters.nonfinite) return splat__model_nonfinite(t, rep->step, err);
    if (rep->gate) {
        if (rep->step < *gated_step) *gated_step = rep->step;
        *needed = SPLAT_MAX(*needed, rep->counters.n_isect);
        return SPLAT_OK;
    }
    note_progress(t, rep);
    t->retired_any = true;
    t->isect_seen = SPLAT_MAX(t->isect_seen, rep->counters.n_isect);
    t->prog.isect_padded += rep->counters.isect_padded;
    return t->prof.on ? note_profile(t, slot, err) : SPLAT_OK;
}

/* Retires every iteration in flight, oldest first. If any found the gate closed (earlier than
 * `gated`, which a caller may already know of, with the intersections it needed), grows to what
 * the gated iterations needed, rewinds to the first gated step (nothing was updated from it on)
 * and sets *rewound. */
static splat_status settle(splat_trainer *t, uint32_t gated, uint32_t needed, bool *rewound, splat_error *err)
{
    *rewound = false;
    /* Only the reports of iterations retired here count: a slot that has not run since the trainer
     * was made holds whatever its fresh host-visible memory held (junk that once asked for
     * 3.2e9 intersections, after a resume under ASan, whose malloc fills lavapipe's memory). */
    for (uint32_t i = 0; i < SPLAT_TRAIN_RING; i++) {
        uint32_t k = (t->step + i) % SPLAT_TRAIN_RING;
        splat_status st = retire(t, k, &gated, &needed, err);
        if (st != SPLAT_OK) return st;
    }
    if (gated == UINT32_MAX) return SPLAT_OK;
    *rewound = true;
    splat_status st = splat__render_bufs_grow_isect(t->env.gpu, t->env.renderer, &t->rb, needed, err);
    if (st == SPLAT_OK) st = splat__train_regrown(t, err);
    t->step = gated;
    return st;
}

splat_status splat__train_drain(splat_trainer *t, splat_error *err)
{
    /* Outside the loop (evaluation, checkpoints): finish whatever a rewind re-queues too. */
    bool rewound;
    splat_status st = settle(t, UINT32_MAX, 0, &rewound, err);
    if (st == SPLAT_OK && rewound) return splat__fail(err, SPLAT_ERR_DEVICE, "training: drained in the middle of a step");
    /* Work outside the ring (an opacity reset is only committed) may still be running, and on
     * unified-memory devices the callers read the parameters in place, with no copy ordered
     * after it: wait for everything submitted. */
    if (st == SPLAT_OK) st = splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    return st;
}

/* ------------------------------------------------------------------ the loop */

/* Reports progress every progress_ms: only once an iteration has retired (its loss is real), the
 * last step of a run only once (the forced report after the ring drained), and the rate over
 * every run of this trainer so far (not restarted by each call), 0 until it is a second old
 * (the first steps' rate says little), except at the end of a run: a run shorter than a second
 * (80 steps on an H100) still ends with its rate. */
static void maybe_progress(splat_trainer *t, uint32_t until, bool force)
{
    if (!t->desc.progress) return;
    double now = splat__now();
    if (!force && (!t->retired_any || t->step >= until || (now - t->t_last_progress) * 1000.0 < t->desc.progress_ms))
        return;
    t->t_last_progress = now;
    t->prog.step = t->step;
    t->prog.steps = t->steps;
    t->prog.n_gaussians = t->model.count;
    t->prog.memory_cap = t->model.memory_cap;
    t->prog.memory_cap_step = t->model.memory_cap_step;
    t->prog.refines = t->model.refines, t->prog.cloned = t->model.cloned;
    t->prog.split = t->model.split, t->prog.pruned = t->model.pruned;
    t->prog.refines_in_place = t->model.refines_in_place;
    double dt = t->time_in_runs + (now - t->run_start);
    uint32_t done = t->step - t->first_step;
    t->prog.iters_per_sec = dt >= 1.0 || (force && dt > 0) ? done / dt : 0;
    t->prog.eta_sec = t->prog.iters_per_sec > 0 ? (t->steps - t->step) / t->prog.iters_per_sec : 0;
    t->desc.progress(t->desc.progress_user, &t->prog);
}

/* ------------------------------------------------------------------ the snapshot tap */

void splat__train_set_tap(splat_trainer *t, splat_train_tap *tap)
{
    t->tap = tap;
    if (!tap) return;
    atomic_store_explicit(&tap->running, 0u, memory_order_relaxed);
    atomic_store_explicit(&tap->version, t->params_version, memory_order_release);
}

splat_status splat__train_serve_tap(splat_trainer *t, splat_error *err)
{
    splat_train_tap *tap = t->tap;
    if (!tap || atomic_load_explicit(&tap->state, memory_order_acquire) != SPLAT_TAP_ASKED) return SPLAT_OK;
    const splat_model *m = &t->model;
    uint32_t answer = SPLAT_TAP_SMALL;
    if (tap->dst->capacity >= m->count && !tap->dst->sh_half) {
        /* after the reader's last read of dst, maybe on another queue */
        splat__stream_after(t->env.stream, tap->reader_sem, tap->reader_value);
        splat_cmd *c = splat__stream_cmd(t->env.stream);
        for (uint32_t g = 0; g < SPLAT_GROUP_COUNT && m->count; g++) {
            uint64_t bytes = (uint64_t)m->count * splat__groups[g].width * 4;
            splat__cmd_copy(c, SPLAT_VIEW_AT(m->params.group[g], 0, bytes), SPLAT_VIEW(tap->dst->group[g]));
        }
        splat_status st = splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT, err);
        if (st != SPLAT_OK) return st;
        tap->dst->count = m->count;
        tap->sem = t->env.stream->timeline;
        tap->value = t->env.stream->submitted;
        answer = SPLAT_TAP_COPIED;
    }
    tap->copied_version = t->params_version;
    tap->count = m->count;
    tap->step = t->step;
    tap->sh_degree = splat__train_degree(t, t->step);
    atomic_store_explicit(&tap->state, answer, memory_order_release);
    if (tap->notify) tap->notify(tap->user);
    return SPLAT_OK;
}

static splat_status submit_step(splat_trainer *t, uint32_t slot, splat_error *err)
{
    uint32_t step = t->step;
    if (t->tap) {
        splat_status st = splat__train_serve_tap(t, err);
        if (st != SPLAT_OK) return st;
    }
    uint32_t view = splat__train_view_of_step(t, step);
    splat__train_fill_slot(t, slot, step, view, true, (splat_train_slot *)t->ring.slots.map + slot);
    splat__images_stage(&t->images, slot, view);
    uint64_t value;
    splat_status st = splat__stream_replay(t->env.stream, &t->ring.rec[slot], &value, err);
    if (st != SPLAT_OK) return st;
    t->ring.inflight[slot] = value;
    splat__train_params_changed(t);
    return SPLAT_OK;
}

/* The strategy's host work after step s, with every iteration retired first. */
static splat_status run_strategy(splat_trainer *t, uint32_t s, splat_error *err)
{
    splat_strategy_ctx ctx = {
        .gpu = t->env.gpu, .stream = t->env.stream, .sorter = &t->env.renderer->sorter, .model = &t->model,
        .rb = &t->rb, .desc = &t->desc, .scene_scale = t->scene_scale, .world_unit = t->world_unit,
        .isect_seen = t->isect_seen,
    };
    bool resized = false;
    splat_status st = t->strategy->run(t->strategy_state, &ctx, s, &resized, err);
    t->isect_seen = 0;
    splat__train_params_changed(t);
    if (st != SPLAT_OK || !resized) return st;
    st = splat__model_fit(t, err);
    if (st != SPLAT_OK) return st;
    /* the statistics start over; the gate is open (nothing was gated) */
    splat_cmd *c = splat__stream_cmd(t->env.stream);
    splat__cmd_fill(c, SPLAT_VIEW(t->rb.stats), 0);
    splat__cmd_fill(c, SPLAT_VIEW_AT(t->rb.gate, 0, 4), 0); /* the gate word: Adam's word stays for the next report */
    st = splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
    return st;
}

void splat__train_interrupt(splat_trainer *t) { atomic_store(&t->interrupt, 1u); }

/* Whether an interrupt was asked for since the last one was taken. A plain load every step (no
 * wait, no read of the GPU's memory); the exchange only once it is set. */
static bool take_interrupt(splat_trainer *t)
{
    return atomic_load_explicit(&t->interrupt, memory_order_relaxed) && atomic_exchange(&t->interrupt, 0u);
}

static splat_status run_loop(splat_trainer *t, uint32_t until_step, splat_error *err);

splat_status splat__train_run(splat_trainer *t, uint32_t until_step, splat_error *err)
{
    /* a reader may wait for a fresh snapshot when the loop is not running to answer it soon */
    if (t->tap) atomic_store_explicit(&t->tap->running, 1u, memory_order_relaxed);
    splat_status st = run_loop(t, until_step, err);
    if (t->tap) atomic_store_explicit(&t->tap->running, 0u, memory_order_relaxed);
    return st;
}

static splat_status run_loop(splat_trainer *t, uint32_t until_step, splat_error *err)
{
    if (until_step > t->steps || until_step == 0) until_step = t->steps;
    t->run_start = splat__now();
    if (!t->timing) t->first_step = t->step, t->timing = true;
    bool rewound, interrupted = false;
    for (;;) {
        /* An interrupt ends the run at a step boundary: the iterations in flight finish (settle
         * below), and a rewind they cause is not run again. */
        while (!interrupted && t->step < until_step) {
            if (take_interrupt(t)) {
                interrupted = true;
                break;
            }
            uint32_t slot = t->step % SPLAT_TRAIN_RING;
            uint32_t gated = UINT32_MAX, needed = 0;
            splat_status st = retire(t, slot, &gated, &needed, err);
            if (st == SPLAT_OK && gated != UINT32_MAX) {
                /* an overflow: recover and re-run from the first skipped step */
                st = settle(t, gated, needed, &rewound, err);
                if (st != SPLAT_OK) return st;
                continue;
            }
            if (st == SPLAT_OK) st = submit_step(t, slot, err);
            if (st != SPLAT_OK) return st;
            uint32_t s = t->step++;
            if (t->strategy->due(&t->desc, s)) {
                st = settle(t, UINT32_MAX, 0, &rewound, err);
                if (st != SPLAT_OK) return st;
                if (rewound) continue; /* step s comes again, and the strategy with it */
                st = run_strategy(t, s, err);
                if (st != SPLAT_OK) return st;
            }
            maybe_progress(t, until_step, false);
        }
        splat_status st = settle(t, UINT32_MAX, 0, &rewound, err);
        if (st != SPLAT_OK) return st;
        if (!rewound) break;
    }
    t->time_in_runs += splat__now() - t->run_start;
    t->run_start = splat__now();
    maybe_progress(t, until_step, true);
    return SPLAT_OK;
}
