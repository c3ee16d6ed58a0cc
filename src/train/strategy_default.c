/* train: gsplat's default strategy (docs/TRAIN.md, "Densification"): every refine_every steps
 * between refine_start and refine_stop, clone small and split large Gaussians whose average
 * screen-space gradient is high and prune transparent (and, after the first reset, huge) ones;
 * every reset_every steps, reset opacities. The decisions, scans and moves run on the GPU
 * (densify_mark, the scan, densify_apply); the host waits once per refine, to learn the new
 * count and size the new arrays. */
#include "train/strategy.h"

struct splat_strategy_state {
    splat_densify_pipes pipes;
    splat_densify_bufs bufs;
};

splat_status splat__densify_pipes_init(splat_gpu *g, splat_densify_pipes *p, splat_error *err)
{
    memset(p, 0, sizeof *p);
    const uint32_t push = sizeof(splat_train_push);
    splat_status st = splat__pipe_init(
        g, &p->mark, &(splat_pipe_desc){.shader = "densify_mark", .n_bindings = DENSIFY_MARK_BINDINGS, .push_size = push}, err);
    if (st == SPLAT_OK)
        st = splat__pipe_init(
            g, &p->apply, &(splat_pipe_desc){.shader = "densify_apply", .n_bindings = DENSIFY_APPLY_BINDINGS,
                                              .push_size = sizeof(splat_apply_push)},
            err);
    if (st == SPLAT_OK)
        st = splat__pipe_init(
            g, &p->compact, &(splat_pipe_desc){.shader = "densify_compact", .n_bindings = DENSIFY_COMPACT_BINDINGS,
                                                .push_size = sizeof(splat_compact_push)},
            err);
    if (st == SPLAT_OK)
        st = splat__pipe_init(g, &p->rank,
                              &(splat_pipe_desc){.shader = "densify_rank", .n_bindings = DENSIFY_RANK_BINDINGS,
                                                 .push_size = sizeof(splat_budget_push)},
                              err);
    if (st == SPLAT_OK)
        st = splat__pipe_init(g, &p->budget,
                              &(splat_pipe_desc){.shader = "densify_budget", .n_bindings = DENSIFY_BUDGET_BINDINGS,
                                                 .push_size = sizeof(splat_budget_push)},
                              err);
    if (st == SPLAT_OK)
        st = splat__pipe_init(
            g, &p->opacity_reset,
            &(splat_pipe_desc){.shader = "opacity_reset", .n_bindings = OPACITY_RESET_BINDINGS, .push_size = push}, err);
    if (st != SPLAT_OK) splat__densify_pipes_free(g, p);
    return st;
}

void splat__densify_pipes_free(splat_gpu *g, splat_densify_pipes *p)
{
    splat__pipe_free(g, &p->mark);
    splat__pipe_free(g, &p->apply);
    splat__pipe_free(g, &p->compact);
    splat__pipe_free(g, &p->opacity_reset);
    splat__pipe_free(g, &p->rank);
    splat__pipe_free(g, &p->budget);
}

void splat__densify_bufs_free(splat_gpu *g, splat_densify_bufs *d)
{
    splat_buf *all[] = {&d->keep,      &d->clone,     &d->split,     &d->off_keep, &d->off_clone, &d->off_split,
                        &d->tot_keep,  &d->tot_clone, &d->tot_split, &d->totals,   &d->info,      &d->scan_scratch,
                        &d->readback,  &d->rank_keys, &d->rank_rows, &d->sort_scratch, &d->compact};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    d->capacity = 0;
    d->compact_rows = 0;
}

uint32_t splat__densify_compact_rows;

static splat_status bufs_ensure(splat_gpu *g, const splat_sorter *sorter, splat_densify_bufs *d, uint32_t capacity,
                                splat_error *err)
{
    if (d->capacity >= capacity && d->keep.buffer) return SPLAT_OK;
    splat__densify_bufs_free(g, d);
    uint64_t n = (uint64_t)capacity * 5 / 4 + 1024;
    splat_buf_spec parts[] = {
        {&d->keep, "densify.keep", n * 4, SPLAT_MEM_DEVICE},
        {&d->clone, "densify.clone", n * 4, SPLAT_MEM_DEVICE},
        {&d->split, "densify.split", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_keep, "densify.off_keep", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_clone, "densify.off_clone", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_split, "densify.off_split", n * 4, SPLAT_MEM_DEVICE},
        {&d->tot_keep, "densify.tot_keep", 4, SPLAT_MEM_DEVICE},
        {&d->tot_clone, "densify.tot_clone", 4, SPLAT_MEM_DEVICE},
        {&d->tot_split, "densify.tot_split", 4, SPLAT_MEM_DEVICE},
        {&d->totals, "densify.totals", 12, SPLAT_MEM_DEVICE},
        {&d->info, "densify.info", 8, SPLAT_MEM_DEVICE},
        {&d->scan_scratch, "densify.scan_scratch", splat__scan_scratch_bound(sorter, (uint32_t)n),
         SPLAT_MEM_DEVICE},
        {&d->readback, "densify.readback", 20, SPLAT_MEM_READBACK},
    };
    splat_status st = splat__bufs_init(g, parts, SPLAT_COUNTOF(parts), err);
    if (st == SPLAT_OK) d->capacity = (uint32_t)n;
    return st;
}

/* The ranking's buffers, at the capacity of the others: only runs whose budget binds pay for them. */
static splat_status rank_bufs_ensure(splat_gpu *g, const splat_sorter *sorter, splat_densify_bufs *d, splat_error *err)
{
    if (d->sort_scratch.buffer) return SPLAT_OK; /* the last one made */
    uint64_t n = d->capacity;
    splat_buf_spec parts[] = {
        {&d->rank_keys, "densify.rank_keys", n * 4, SPLAT_MEM_DEVICE},
        {&d->rank_rows, "densify.rank_rows", n * 4, SPLAT_MEM_DEVICE},
        {&d->sort_scratch, "densify.sort_scratch", splat__sort_scratch_bound(sorter, (uint32_t)n, 1), SPLAT_MEM_DEVICE},
    };
    splat_status st = splat__bufs_init(g, parts, SPLAT_COUNTOF(parts), err);
    if (st != SPLAT_OK)
        for (size_t k = 0; k < SPLAT_COUNTOF(parts); k++) splat__buf_free(g, parts[k].buf);
    return st;
}

static void record_scan(splat_cmd *c, const splat_sorter *sorter, splat_densify_bufs *d, uint32_t n, splat_buf *in,
                        splat_buf *out, splat_buf *total)
{
    splat__scan_record(c, sorter, &(splat_scan_args){
        .in = SPLAT_VIEW(*in),
        .out = SPLAT_VIEW(*out),
        .max_count = n,
        .total = SPLAT_VIEW(*total),
        .scratch = SPLAT_VIEW(d->scan_scratch),
    });
}

/* The scans of the decisions, their totals (for densify_apply) and the totals' readback. */
static void record_totals(splat_cmd *c, const splat_sorter *sorter, splat_densify_bufs *d, uint32_t n)
{
    record_scan(c, sorter, d, n, &d->keep, &d->off_keep, &d->tot_keep);
    record_scan(c, sorter, d, n, &d->clone, &d->off_clone, &d->tot_clone);
    record_scan(c, sorter, d, n, &d->split, &d->off_split, &d->tot_split);
    splat__cmd_barrier(c);
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_keep), SPLAT_VIEW_AT(d->totals, 0, 4));
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_clone), SPLAT_VIEW_AT(d->totals, 4, 4));
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_split), SPLAT_VIEW_AT(d->totals, 8, 4));
    splat__cmd_barrier(c);
    splat__cmd_copy(c, SPLAT_VIEW(d->totals), SPLAT_VIEW_AT(d->readback, 0, 12));
}

/* densify_apply's decisions and their scans; the caller binds the groups. */
static void apply_decisions(const splat_densify_bufs *d, splat_view v[DENSIFY_APPLY_BINDINGS])
{
    v[DENSIFY_APPLY_TOTALS] = SPLAT_VIEW(d->totals), v[DENSIFY_APPLY_OFF_KEEP] = SPLAT_VIEW(d->off_keep);
    v[DENSIFY_APPLY_OFF_CLONE] = SPLAT_VIEW(d->off_clone), v[DENSIFY_APPLY_OFF_SPLIT] = SPLAT_VIEW(d->off_split);
    v[DENSIFY_APPLY_KEEP] = SPLAT_VIEW(d->keep), v[DENSIFY_APPLY_CLONE] = SPLAT_VIEW(d->clone);
    v[DENSIFY_APPLY_SPLIT] = SPLAT_VIEW(d->split);
}

/* The new arrays are written a few buffers at a time, in this order (densify_apply's bits). */
static const uint32_t densify_passes[] = {
    1u << SPLAT_GROUP_SH,
    1u << (SPLAT_APPLY_MOMENTS + SPLAT_GROUP_SH),
    ((1u << SPLAT_GROUP_COUNT) - 1) & ~(1u << SPLAT_GROUP_SH),
    (((1u << SPLAT_GROUP_COUNT) - 1) & ~(1u << SPLAT_GROUP_SH)) << SPLAT_APPLY_MOMENTS,
};

splat_status splat__densify_run(splat_densify_job *job, splat_densify_result *res, splat_error *err)
{
    splat_gpu *g = job->gpu;
    splat_stream *s = job->stream;
    splat_densify_bufs *d = job->bufs;
    uint32_t n = job->count;
    memset(res, 0, sizeof *res);
    splat_status st = bufs_ensure(g, job->sorter, d, n, err);
    if (st != SPLAT_OK) return st;
    splat_train_push pc = {.n = n, .scene_scale = job->scene_scale, .step = job->step, .flags = job->prune_large_after};

    /* 1: decisions and their scans; the host learns the new count */
    splat_cmd *c = splat__stream_cmd(s);
    splat__cmd_fill(c, SPLAT_VIEW(d->info), 0);
    splat__cmd_barrier(c);
    splat_scene_gpu *p = job->params, *m = job->moments;
    splat_view mark[DENSIFY_MARK_BINDINGS] = {
        [DENSIFY_MARK_SCALES] = SPLAT_VIEW(p->log_scales), [DENSIFY_MARK_OPACITIES] = SPLAT_VIEW(p->opacities),
        [DENSIFY_MARK_STATS] = SPLAT_VIEW(*job->stats),    [DENSIFY_MARK_KEEP] = SPLAT_VIEW(d->keep),
        [DENSIFY_MARK_CLONE] = SPLAT_VIEW(d->clone),       [DENSIFY_MARK_SPLIT] = SPLAT_VIEW(d->split),
        [DENSIFY_MARK_INFO] = SPLAT_VIEW(d->info),
    };
    splat__cmd_dispatch_1d(c, &job->pipes->mark, mark, DENSIFY_MARK_BINDINGS, &pc, sizeof pc, n);
    splat__cmd_barrier(c);
    record_totals(c, job->sorter, d, n);
    splat__cmd_copy(c, SPLAT_VIEW(d->info), SPLAT_VIEW_AT(d->readback, 12, 8));
    st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st != SPLAT_OK) return st;
    uint32_t r[5];
    memcpy(r, d->readback.map, sizeof r);
    uint64_t new_count = (uint64_t)r[0] + r[1] + r[2], wanted = new_count;
    uint32_t fit = job->memory ? splat__strategy_memory_fit(job->memory, densify_passes, SPLAT_COUNTOF(densify_passes), n)
                               : UINT32_MAX;
    uint32_t cap = SPLAT_MIN(job->max_count, fit);
    if (new_count > cap) {
        /* The budget binds. The base is every unsplit survivor and every split parent; each
         * candidate (a surviving clone, a split whose children survive) adds one Gaussian to it,
         * and the N - base of the highest statistic are made. The ranking's buffers count against
         * the memory too. */
        st = rank_bufs_ensure(g, job->sorter, d, err);
        if (st != SPLAT_OK) return st;
        if (job->memory) fit = splat__strategy_memory_fit(job->memory, densify_passes, SPLAT_COUNTOF(densify_passes), n);
        cap = SPLAT_MIN(job->max_count, fit);
        uint64_t clones = r[1], splits = r[2] / 2, base = (uint64_t)r[0] + splits;
        uint64_t room = cap > base ? cap - base : 0;
        splat_budget_push bp = {.n = n, .scene_scale = job->scene_scale, .step = job->step, .flags = job->prune_large_after,
                                .made = (uint32_t)SPLAT_MIN(room, clones + splits)};
        splat_view rank[DENSIFY_RANK_BINDINGS] = {
            [DENSIFY_RANK_STATS] = SPLAT_VIEW(*job->stats), [DENSIFY_RANK_CLONE] = SPLAT_VIEW(d->clone),
            [DENSIFY_RANK_SPLIT] = SPLAT_VIEW(d->split),    [DENSIFY_RANK_KEYS] = SPLAT_VIEW(d->rank_keys),
            [DENSIFY_RANK_ROWS] = SPLAT_VIEW(d->rank_rows),
        };
        splat_view budget[DENSIFY_BUDGET_BINDINGS] = {
            [DENSIFY_BUDGET_SCALES] = SPLAT_VIEW(p->log_scales), [DENSIFY_BUDGET_OPACITIES] = SPLAT_VIEW(p->opacities),
            [DENSIFY_BUDGET_KEEP] = SPLAT_VIEW(d->keep),         [DENSIFY_BUDGET_CLONE] = SPLAT_VIEW(d->clone),
            [DENSIFY_BUDGET_SPLIT] = SPLAT_VIEW(d->split),       [DENSIFY_BUDGET_KEYS] = SPLAT_VIEW(d->rank_keys),
            [DENSIFY_BUDGET_ROWS] = SPLAT_VIEW(d->rank_rows),
        };
        c = splat__stream_cmd(s);
        splat__cmd_dispatch_1d(c, &job->pipes->rank, rank, DENSIFY_RANK_BINDINGS, &bp, sizeof bp, n);
        splat__cmd_barrier(c);
        splat__sort_record(c, job->sorter, &(splat_sort_args){
            .key_words = 1, .bits = 32, .max_count = n, .keys = SPLAT_VIEW(d->rank_keys),
            .values = SPLAT_VIEW(d->rank_rows), .scratch = SPLAT_VIEW(d->sort_scratch)});
        splat__cmd_dispatch_1d(c, &job->pipes->budget, budget, DENSIFY_BUDGET_BINDINGS, &bp, sizeof bp, n);
        splat__cmd_barrier(c);
        record_totals(c, job->sorter, d, n);
        st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        if (st != SPLAT_OK) return st;
        memcpy(r, d->readback.map, 3 * sizeof *r);
        new_count = (uint64_t)r[0] + r[1] + r[2];
        res->clones_cut = (uint32_t)(clones - r[1]);
        res->splits_cut = (uint32_t)(splits - r[2] / 2);
    }
    if (fit < job->max_count && fit < wanted) res->memory_cap = fit;
    if (new_count > fit) {
        /* not even the survivors and the split parents fit: the model stays as it is */
        res->count = n;
        res->skipped = true;
        return SPLAT_OK;
    }
    if (new_count > UINT32_MAX / 4)
        return splat__fail(err, SPLAT_ERR_LIMIT, "densification at step %u would make %llu Gaussians", job->step,
                           (unsigned long long)new_count);
    res->count = (uint32_t)new_count;
    res->clones = r[3] - res->clones_cut;
    res->splits = r[4] - res->splits_cut;
    res->pruned = (uint32_t)((uint64_t)n + res->clones + res->splits - new_count);

    /* In place, where the arrays hold the old rows and the new ones: no allocation, no free, one
     * wait. The new rows go after the old ones, made from rows nothing has moved yet; then the
     * chunks close the gaps in order (densify_compact). */
    uint64_t grown = (uint64_t)n + r[1] + r[2];
    if (n > 0 && grown <= p->capacity && grown <= m->capacity) {
        /* Chunks of 65,536 rows, fewer for a smaller model (the scratch grows with it), and fewer
         * where the memory is full: the chunk's size sets only how many dispatches it takes. */
        uint32_t rows = splat__densify_compact_rows ? splat__densify_compact_rows
                                                    : (uint32_t)SPLAT_MIN(65536, grown + grown / 4);
        if (d->compact_rows < rows || (splat__densify_compact_rows && d->compact_rows != rows)) {
            splat__buf_free(g, &d->compact);
            d->compact_rows = 0;
            for (;; rows /= 2) {
                splat_error tried = {0}; /* err keeps only the failure that ends the refine */
                st = splat__buf_init(g, &d->compact, "densify.compact", (uint64_t)rows * (SPLAT_PARAM_FLOATS + SPLAT_MOMENT_ROW_WORDS) * 4,
                                     SPLAT_MEM_DEVICE, &tried);
                if (st == SPLAT_OK) break;
                if (st != SPLAT_ERR_OUT_OF_DEVICE_MEMORY || rows <= 256) return splat__fail(err, st, "%s", tried.msg);
            }
            d->compact_rows = rows;
        }
        rows = d->compact_rows;
        c = splat__stream_cmd(s);
        splat_apply_push ap = {.n = n, .seed = job->seed, .outputs = ~0u, .append_at = n};
        splat_view apply[DENSIFY_APPLY_BINDINGS];
        apply_decisions(d, apply);
        splat_view compact[DENSIFY_COMPACT_BINDINGS] = {
            [DENSIFY_COMPACT_TOTALS] = SPLAT_VIEW(d->totals), [DENSIFY_COMPACT_OFF_KEEP] = SPLAT_VIEW(d->off_keep),
            [DENSIFY_COMPACT_KEEP] = SPLAT_VIEW(d->keep),     [DENSIFY_COMPACT_SCRATCH] = SPLAT_VIEW(d->compact),
        };
        for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT; gi++) {
            apply[DENSIFY_APPLY_SRC_PARAMS + gi] = apply[DENSIFY_APPLY_DST_PARAMS + gi] = SPLAT_VIEW(p->group[gi]);
            apply[DENSIFY_APPLY_SRC_MOMENTS + gi] = apply[DENSIFY_APPLY_DST_MOMENTS + gi] = SPLAT_VIEW(m->group[gi]);
            compact[DENSIFY_COMPACT_PARAMS + gi] = SPLAT_VIEW(p->group[gi]);
            compact[DENSIFY_COMPACT_MOMENTS + gi] = SPLAT_VIEW(m->group[gi]);
        }
        splat__cmd_dispatch_1d(c, &job->pipes->apply, apply, DENSIFY_APPLY_BINDINGS, &ap, sizeof ap, n);
        splat__cmd_barrier(c);
        for (uint64_t first = 0; first < grown; first += rows)
            for (uint32_t phase = 0; phase < 2; phase++) {
                splat_compact_push cp = {.n = n, .first = (uint32_t)first, .rows = rows, .phase = phase};
                /* a thread a word of the chunk's rows */
                splat__cmd_dispatch_1d(c, &job->pipes->compact, compact, DENSIFY_COMPACT_BINDINGS, &cp, sizeof cp,
                                       (uint64_t)rows * (SPLAT_PARAM_FLOATS + SPLAT_MOMENT_ROW_WORDS));
                splat__cmd_barrier(c);
            }
        /* waited for, as the passes below are: callers read and free buffers after a refine */
        st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        if (st != SPLAT_OK) return st;
        p->count = res->count;
        res->in_place = true;
        return SPLAT_OK;
    }

    /* 2: the new arrays, written in the order of docs/TRAIN.md, a few buffers at a time: the old
     * gradients go first (the next backward rewrites every row; the trainer reallocates them), and
     * each pass frees the old buffers it replaced, so the peak is the old arrays plus the largest
     * pass, not two whole copies (docs/PERFORMANCE.md, "Memory at the peak"). The last pass
     * writes the means and scales, whose split children read the old means, scales and
     * quaternions. */
    if (job->grads) splat__scene_gpu_free(g, job->grads);
    const uint32_t *passes = densify_passes;
    /* Room for the next refines to happen in place: a quarter more rows, or twice the rows this
     * refine added, early on, when a refine grows the model by more than a quarter; only where the
     * device reports how much memory is free and twice as much room would fit (fit, the growth
     * that fits, is counted in rows of the same arrays), so that the room never takes the margin
     * the estimate leaves for what it cannot see. A device that does not say (fit UINT32_MAX)
     * gets the count alone, as before: there the room could run the memory out where the count
     * would not. */
    uint64_t room = SPLAT_MAX(new_count + new_count / 4, new_count + 2 * (grown - n));
    if (fit == UINT32_MAX || room + (room - new_count) > fit) room = new_count;
    splat_scene_gpu np = {.capacity = room ? (uint32_t)room : 1};
    splat_scene_gpu nm = splat__moments_layout(np.capacity);
    splat_apply_push ap = {.n = n, .seed = job->seed};
    for (size_t k = 0; k < SPLAT_COUNTOF(densify_passes) && st == SPLAT_OK; k++) {
        ap.outputs = passes[k];
        for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT && st == SPLAT_OK; gi++) {
            splat_error tried = {0}; /* err keeps only the failure that ends the refine */
            if (ap.outputs & (1u << gi) && !np.group[gi].buffer) st = splat__scene_gpu_group_init(g, &np, "params", gi, &tried);
            if (st == SPLAT_OK && ap.outputs & (1u << (SPLAT_APPLY_MOMENTS + gi)) && !nm.group[gi].buffer)
                st = splat__scene_gpu_group_init(g, &nm, "adam", gi, &tried);
            if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY && np.capacity > new_count) {
                /* the room is a convenience: without it, from this buffer on (the arrays' capacity
                 * is the smallest of their buffers') */
                np.capacity = new_count ? (uint32_t)new_count : 1;
                nm.capacity = np.capacity;
                st = SPLAT_OK;
                gi--;
            } else if (st != SPLAT_OK) {
                st = splat__fail(err, st, "%s", tried.msg);
            }
        }
        if (st != SPLAT_OK) break;
        c = splat__stream_cmd(s);
        splat_view apply[DENSIFY_APPLY_BINDINGS];
        apply_decisions(d, apply);
        /* a group already replaced binds its new buffer as a placeholder on both sides */
        for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT; gi++) {
            const splat_buf *sp = p->group[gi].buffer ? &p->group[gi] : &np.group[gi];
            const splat_buf *sm = m->group[gi].buffer ? &m->group[gi] : &nm.group[gi];
            apply[DENSIFY_APPLY_SRC_PARAMS + gi] = SPLAT_VIEW(*sp);
            apply[DENSIFY_APPLY_SRC_MOMENTS + gi] = SPLAT_VIEW(*sm);
            const splat_buf *dp = np.group[gi].buffer ? &np.group[gi] : sp;
            const splat_buf *dm = nm.group[gi].buffer ? &nm.group[gi] : sm;
            apply[DENSIFY_APPLY_DST_PARAMS + gi] = SPLAT_VIEW(*dp);
            apply[DENSIFY_APPLY_DST_MOMENTS + gi] = SPLAT_VIEW(*dm);
        }
        splat__cmd_dispatch_1d(c, &job->pipes->apply, apply, DENSIFY_APPLY_BINDINGS, &ap, sizeof ap, n);
        st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT && st == SPLAT_OK; gi++) {
            if (ap.outputs & (1u << gi)) splat__buf_free(g, &p->group[gi]);
            if (ap.outputs & (1u << (SPLAT_APPLY_MOMENTS + gi))) splat__buf_free(g, &m->group[gi]);
        }
    }
    if (st != SPLAT_OK) {
        /* the old arrays may be gone in part: the run cannot go on from here either way */
        splat__scene_gpu_free(g, &np);
        splat__scene_gpu_free(g, &nm);
        return st;
    }
    *p = np;
    *m = nm;
    p->count = res->count;
    return SPLAT_OK;
}

void splat__opacity_reset_record(splat_cmd *c, const splat_densify_pipes *p, const splat_scene_gpu *params,
                                 const splat_scene_gpu *moments, uint32_t n)
{
    splat_train_push pc = {.n = n};
    splat_view v[OPACITY_RESET_BINDINGS] = {
        [OPACITY_RESET_OPACITIES] = SPLAT_VIEW(params->opacities),
        [OPACITY_RESET_MOMENTS] = SPLAT_VIEW(moments->opacities),
    };
    splat__cmd_dispatch_1d(c, &p->opacity_reset, v, OPACITY_RESET_BINDINGS, &pc, sizeof pc, n);
}

/* ------------------------------------------------------------------ the strategy */

static bool refine_due(const splat_train_desc *d, uint32_t s)
{
    return s < d->refine_stop && s > d->refine_start && s % d->refine_every == 0;
}

static bool reset_due(const splat_train_desc *d, uint32_t s) { return s < d->refine_stop && s > 0 && s % d->reset_every == 0; }

static bool due(const splat_train_desc *d, uint32_t s) { return refine_due(d, s) || reset_due(d, s); }

static splat_status init(splat_strategy_state **out, splat_gpu *g, splat_error *err)
{
    splat_strategy_state *s = splat__calloc(1, sizeof *s);
    if (!s) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "densification: out of host memory");
    splat_status st = splat__densify_pipes_init(g, &s->pipes, err);
    if (st != SPLAT_OK) {
        splat__free(s);
        return st;
    }
    *out = s;
    return SPLAT_OK;
}

static void destroy(splat_strategy_state *s, splat_gpu *g)
{
    if (!s) return;
    splat__densify_pipes_free(g, &s->pipes);
    splat__densify_bufs_free(g, &s->bufs);
    splat__free(s);
}

/* At a step where both are due, refine comes first. */
static splat_status run(splat_strategy_state *s, const splat_strategy_ctx *ctx, uint32_t step, bool *resized,
                        splat_error *err)
{
    const splat_train_desc *d = ctx->desc;
    splat_model *m = ctx->model;
    splat_status st = SPLAT_OK;
    if (refine_due(d, step)) {
        splat_densify_job job = {
            .gpu = ctx->gpu, .stream = ctx->stream, .sorter = ctx->sorter, .pipes = &s->pipes, .bufs = &s->bufs,
            .params = &m->params, .moments = &m->moments, .grads = &m->grads, .stats = &ctx->rb->stats,
            .count = m->count, .step = step,
            .seed = (uint32_t)d->seed ^ step, .scene_scale = (float)ctx->scene_scale, .prune_large_after = d->reset_every,
            .max_count = d->max_gaussians, .memory = ctx,
        };
        splat_densify_result res;
        st = splat__densify_run(&job, &res, err);
        if (st != SPLAT_OK) return st;
        if (res.memory_cap || res.skipped) splat__model_memory_bound(m, step, res.skipped ? m->count : res.memory_cap);
        m->count = res.count;
        *resized = !res.skipped;
        m->refines++, m->cloned += res.clones, m->split += res.splits, m->pruned += res.pruned;
        m->refines_in_place += res.in_place;
    }
    if (reset_due(d, step)) {
        splat_cmd *c = splat__stream_cmd(ctx->stream);
        splat__opacity_reset_record(c, &s->pipes, &m->params, &m->moments, m->count);
        splat__cmd_barrier(c);
        st = splat__stream_sync(ctx->stream, SPLAT_SYNC_COMMIT, err);
    }
    return st;
}

const splat_strategy_ops splat__strategy_default = {
    .name = "default",
    .stats = true,
    .init = init,
    .free = destroy,
    .due = due,
    .run = run,
};
