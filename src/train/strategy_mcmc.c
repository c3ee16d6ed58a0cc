/* train: gsplat's MCMCStrategy (docs/TRAIN.md, "MCMC"): every refine_every steps between
 * refine_start and refine_stop, dead Gaussians (opacity <= 0.005) are relocated onto live ones
 * sampled by opacity and 5 % more are added, up to the cap, the samples' sources taking eq. 9's
 * opacity and scale; every step, noise moves the means (more the more transparent) and the loss
 * has an opacity and a scale regulariser. The refine runs on the GPU (mcmc_weights, the scans,
 * mcmc_sample, mcmc_relocate, mcmc_move) with one host wait; the noise and the regularisers are
 * recorded into every iteration (mcmc_noise, mcmc_reg). Samples come from the counter-based
 * generator and integer weights, so the GPU draws the reference's samples exactly. */
#include "train/strategy.h"

struct splat_strategy_state {
    splat_mcmc_pipes pipes;
    splat_mcmc_bufs bufs;
};

splat_status splat__mcmc_pipes_init(splat_gpu *g, splat_mcmc_pipes *p, splat_error *err)
{
    memset(p, 0, sizeof *p);
    const uint32_t push = sizeof(splat_mcmc_push);
    struct {
        splat_pipe *pipe;
        splat_pipe_desc desc;
    } all[] = {
        {&p->weights, {.shader = "mcmc_weights", .n_bindings = MCMC_WEIGHTS_BINDINGS, .push_size = push}},
        {&p->sample, {.shader = "mcmc_sample", .n_bindings = MCMC_SAMPLE_BINDINGS, .push_size = push}},
        {&p->relocate, {.shader = "mcmc_relocate", .n_bindings = MCMC_RELOCATE_BINDINGS, .push_size = push}},
        {&p->move, {.shader = "mcmc_move", .n_bindings = MCMC_MOVE_BINDINGS, .push_size = push}},
        {&p->noise, {.shader = "mcmc_noise", .n_bindings = MCMC_NOISE_BINDINGS, .push_size = push}},
        {&p->reg, {.shader = "mcmc_reg", .n_bindings = MCMC_REG_BINDINGS, .push_size = push}},
    };
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < SPLAT_COUNTOF(all) && st == SPLAT_OK; k++) st = splat__pipe_init(g, all[k].pipe, &all[k].desc, err);
    if (st != SPLAT_OK) splat__mcmc_pipes_free(g, p);
    return st;
}

void splat__mcmc_pipes_free(splat_gpu *g, splat_mcmc_pipes *p)
{
    splat_pipe *all[] = {&p->weights, &p->sample, &p->relocate, &p->move, &p->noise, &p->reg};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__pipe_free(g, all[k]);
}

static void free_scratch(splat_gpu *g, splat_mcmc_bufs *b)
{
    splat_buf *all[] = {&b->dead,     &b->weights,     &b->counts,       &b->src,      &b->off_dead,
                        &b->off_weights, &b->tot_dead, &b->tot_weights, &b->scan_scratch, &b->readback};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    b->capacity = 0;
}

void splat__mcmc_bufs_free(splat_gpu *g, splat_mcmc_bufs *b)
{
    free_scratch(g, b);
    splat__buf_free(g, &b->table);
}

splat_status splat__mcmc_bufs_init(splat_gpu *g, splat_mcmc_bufs *b, splat_error *err)
{
    memset(b, 0, sizeof *b);
    /* the weight of a logit bin of width 1/128: floor(65536 sigmoid(its centre)), in double here
     * as in the reference, so that both weigh every Gaussian alike */
    uint32_t table[SPLAT_MCMC_BINS];
    for (int k = 0; k < SPLAT_MCMC_BINS; k++) {
        double centre = (k - SPLAT_MCMC_BINS / 2 + 0.5) / SPLAT_MCMC_BIN_SCALE;
        table[k] = (uint32_t)floor(65536 / (1 + exp(-centre)));
    }
    splat_status st = splat__buf_init(g, &b->table, "mcmc.table", sizeof table, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &b->table, 0, table, sizeof table, err);
    if (st != SPLAT_OK) splat__mcmc_bufs_free(g, b);
    return st;
}

static splat_status bufs_ensure(splat_gpu *g, const splat_sorter *sorter, splat_mcmc_bufs *b, uint32_t capacity,
                                splat_error *err)
{
    if (b->capacity >= capacity && b->dead.buffer) return SPLAT_OK;
    free_scratch(g, b);
    uint64_t n = (uint64_t)capacity * 5 / 4 + 1024;
    splat_buf_spec parts[] = {
        {&b->dead, "mcmc.dead", n * 4, SPLAT_MEM_DEVICE},
        {&b->weights, "mcmc.weights", n * 4, SPLAT_MEM_DEVICE},
        {&b->counts, "mcmc.counts", n * 4, SPLAT_MEM_DEVICE},
        {&b->src, "mcmc.src", n * 4, SPLAT_MEM_DEVICE},
        {&b->off_dead, "mcmc.off_dead", n * 4, SPLAT_MEM_DEVICE},
        {&b->off_weights, "mcmc.off_weights", n * 4, SPLAT_MEM_DEVICE},
        {&b->tot_dead, "mcmc.tot_dead", 4, SPLAT_MEM_DEVICE},
        {&b->tot_weights, "mcmc.tot_weights", 4, SPLAT_MEM_DEVICE},
        {&b->scan_scratch, "mcmc.scan_scratch", splat__scan_scratch_bound(sorter, (uint32_t)n), SPLAT_MEM_DEVICE},
        {&b->readback, "mcmc.readback", 8, SPLAT_MEM_READBACK},
    };
    splat_status st = splat__bufs_init(g, parts, SPLAT_COUNTOF(parts), err);
    if (st == SPLAT_OK) b->capacity = (uint32_t)n;
    return st;
}

/* The least shift with n * max(1, 65535 >> shift) <= 2^32 - 1: the weights' sum fits the scan. */
static uint32_t weight_shift(uint32_t n)
{
    uint32_t s = 0;
    while ((uint64_t)n * SPLAT_MAX(1u, 65535u >> s) > UINT32_MAX) s++;
    return s;
}

/* gsplat: min(cap, int(1.05 n)) - n, at least 0 */
static uint32_t added_of(uint32_t n, uint32_t cap)
{
    double grown = 1.05 * (double)n;
    uint64_t target = grown >= (double)cap ? cap : (uint64_t)grown;
    return target > n ? (uint32_t)(target - n) : 0;
}

void splat__mcmc_relocate_record(splat_cmd *c, const splat_mcmc_pipes *p, splat_view counts, const splat_scene_gpu *params,
                                 const splat_scene_gpu *moments, uint32_t n, bool zero_moments)
{
    splat_mcmc_push pc = {.n = n, .mode = zero_moments ? MCMC_MODE_RELOCATE : MCMC_MODE_ADD};
    splat_view v[MCMC_RELOCATE_BINDINGS] = {
        [MCMC_RELOCATE_COUNTS] = counts,
        [MCMC_RELOCATE_OPACITIES] = SPLAT_VIEW(params->opacities),
        [MCMC_RELOCATE_SCALES] = SPLAT_VIEW(params->log_scales),
    };
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) v[MCMC_RELOCATE_MOMENTS + k] = SPLAT_VIEW(moments->group[k]);
    splat__cmd_dispatch_1d(c, &p->relocate, v, MCMC_RELOCATE_BINDINGS, &pc, sizeof pc, n);
}

/* The noise kernel's views; slots and gate are read in MCMC_MODE_SLOT only (any buffer otherwise). */
static void noise_views(splat_view v[MCMC_NOISE_BINDINGS], splat_view slots, splat_view gate, const splat_scene_gpu *params)
{
    v[MCMC_NOISE_SLOTS] = slots;
    v[MCMC_NOISE_GATE] = gate;
    v[MCMC_NOISE_MEANS] = SPLAT_VIEW(params->means);
    v[MCMC_NOISE_SCALES] = SPLAT_VIEW(params->log_scales);
    v[MCMC_NOISE_QUATS] = SPLAT_VIEW(params->quats);
    v[MCMC_NOISE_OPACITIES] = SPLAT_VIEW(params->opacities);
}

void splat__mcmc_noise_record(splat_cmd *c, const splat_mcmc_pipes *p, const splat_scene_gpu *params, uint32_t n,
                              uint32_t seed, uint32_t step, float noise_scale)
{
    splat_mcmc_push pc = {.n = n, .seed = seed, .mode = MCMC_MODE_PUSH, .step = step, .scale = noise_scale};
    splat_view v[MCMC_NOISE_BINDINGS];
    noise_views(v, SPLAT_VIEW(params->means), SPLAT_VIEW(params->opacities), params);
    splat__cmd_dispatch_1d(c, &p->noise, v, MCMC_NOISE_BINDINGS, &pc, sizeof pc, n);
}

/* gsplat's noise is a covariance times a learning rate, units cubed where a position needs units:
 * it is gsplat's only in gsplat's world unit, hence the division by that unit squared. */
double splat__mcmc_noise_scale(double scene_scale, double world_unit, uint32_t step, uint32_t steps)
{
    const splat_group_info *means = &splat__groups[SPLAT_GROUP_MEANS];
    return means->lr_head * scene_scale * pow(0.01, (double)(step + 1) / (double)steps) * 5e5 / (world_unit * world_unit);
}

/* The sampling of one phase: weights, their scan (and the dead's, in the relocation), samples. */
static void record_sampling(splat_cmd *c, const splat_mcmc_job *job, const splat_scene_gpu *params, uint32_t mode,
                            uint32_t shift, uint32_t threads)
{
    splat_mcmc_bufs *b = job->bufs;
    uint32_t n = job->count;
    splat_mcmc_push pc = {.n = n, .rows = n, .seed = job->seed, .mode = mode, .shift = shift};
    splat_view w[MCMC_WEIGHTS_BINDINGS] = {
        [MCMC_WEIGHTS_OPACITIES] = SPLAT_VIEW(params->opacities), [MCMC_WEIGHTS_TABLE] = SPLAT_VIEW(b->table),
        [MCMC_WEIGHTS_DEAD] = SPLAT_VIEW(b->dead),                [MCMC_WEIGHTS_WEIGHTS] = SPLAT_VIEW(b->weights),
        [MCMC_WEIGHTS_COUNTS] = SPLAT_VIEW(b->counts),
    };
    splat__cmd_dispatch_1d(c, &job->pipes->weights, w, MCMC_WEIGHTS_BINDINGS, &pc, sizeof pc, n);
    splat__cmd_barrier(c);
    if (mode == MCMC_MODE_RELOCATE)
        splat__scan_record(c, job->sorter, &(splat_scan_args){
            .in = SPLAT_VIEW(b->dead), .out = SPLAT_VIEW(b->off_dead), .max_count = n, .total = SPLAT_VIEW(b->tot_dead),
            .scratch = SPLAT_VIEW(b->scan_scratch)});
    splat__scan_record(c, job->sorter, &(splat_scan_args){
        .in = SPLAT_VIEW(b->weights), .out = SPLAT_VIEW(b->off_weights), .max_count = n,
        .total = SPLAT_VIEW(b->tot_weights), .scratch = SPLAT_VIEW(b->scan_scratch)});
    pc.n = threads;
    splat_view s[MCMC_SAMPLE_BINDINGS] = {
        [MCMC_SAMPLE_DEAD] = SPLAT_VIEW(b->dead),   [MCMC_SAMPLE_OFF_DEAD] = SPLAT_VIEW(b->off_dead),
        [MCMC_SAMPLE_OFF_WEIGHTS] = SPLAT_VIEW(b->off_weights), [MCMC_SAMPLE_TOTAL] = SPLAT_VIEW(b->tot_weights),
        [MCMC_SAMPLE_SRC] = SPLAT_VIEW(b->src),     [MCMC_SAMPLE_COUNTS] = SPLAT_VIEW(b->counts),
    };
    splat__cmd_dispatch_1d(c, &job->pipes->sample, s, MCMC_SAMPLE_BINDINGS, &pc, sizeof pc, threads);
    splat__cmd_barrier(c);
}

/* The rows a phase's samples make (mcmc_move). */
static void record_move(splat_cmd *c, const splat_mcmc_job *job, const splat_scene_gpu *params,
                        const splat_scene_gpu *moments, uint32_t mode, uint32_t threads)
{
    splat_mcmc_bufs *b = job->bufs;
    splat_mcmc_push pc = {.n = threads, .rows = job->count, .mode = mode};
    splat_view v[MCMC_MOVE_BINDINGS] = {
        [MCMC_MOVE_DEAD] = SPLAT_VIEW(b->dead), [MCMC_MOVE_SRC] = SPLAT_VIEW(b->src), [MCMC_MOVE_TOTAL] = SPLAT_VIEW(b->tot_weights),
    };
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) {
        v[MCMC_MOVE_PARAMS + k] = SPLAT_VIEW(params->group[k]);
        v[MCMC_MOVE_MOMENTS + k] = SPLAT_VIEW(moments->group[k]);
    }
    splat__cmd_dispatch_1d(c, &job->pipes->move, v, MCMC_MOVE_BINDINGS, &pc, sizeof pc, threads);
    splat__cmd_barrier(c);
}

splat_status splat__mcmc_refine(splat_mcmc_job *job, splat_mcmc_result *res, splat_error *err)
{
    splat_gpu *g = job->gpu;
    uint32_t n = job->count, added = added_of(n, job->cap);
    memset(res, 0, sizeof *res);
    if ((uint64_t)n + added > UINT32_MAX / 4)
        return splat__fail(err, SPLAT_ERR_LIMIT, "MCMC: %u Gaussians and %u more are too many", n, added);
    /* Where the scratch does not fit beside the model, the refine is skipped and the model left as
     * it was, as where the default strategy's survivors would not fit: a cap could not help, since
     * MCMC never holds fewer Gaussians than it has. A device that reports its free memory seldom
     * gets here (the fit below counts the growth, and 1/32 is kept back for scratch). */
    splat_error tried = {0};
    splat_status st = bufs_ensure(g, job->sorter, job->bufs, SPLAT_MAX(n, added), &tried);
    if (st == SPLAT_ERR_OUT_OF_DEVICE_MEMORY) {
        res->count = n;
        res->skipped = true;
        return SPLAT_OK;
    }
    if (st != SPLAT_OK) return splat__fail(err, st, "%s", tried.msg);
    splat_mcmc_bufs *b = job->bufs;
    uint32_t rows = n + added, shift = weight_shift(n);

    /* Adding needs arrays of the new size: the rows so far are copied there first, one buffer at a
     * time, each old one freed once its copy is done, after the gradients: the peak is the model
     * plus its largest buffer (the SH moments), not two whole models and the gradients
     * (docs/PERFORMANCE.md, "MCMC against gsplat's MCMCStrategy"). Then everything happens in
     * place on the arrays the model keeps. */
    if (added > 0) {
        if (job->grads) splat__scene_gpu_free(g, job->grads);
        splat_scene_gpu *sets[2] = {job->params, job->moments};
        for (uint32_t k = 0; k < 2 * SPLAT_GROUP_COUNT && st == SPLAT_OK; k++) {
            splat_scene_gpu *s = sets[k / SPLAT_GROUP_COUNT];
            uint32_t gi = k % SPLAT_GROUP_COUNT;
            splat_scene_gpu grown = {.capacity = rows};
            memcpy(grown.words, s->words, sizeof grown.words);
            st = splat__scene_gpu_group_init(g, &grown, s == job->moments ? "adam" : "params", gi, err);
            if (st != SPLAT_OK) break;
            uint64_t bytes = n * splat__scene_gpu_row_bytes(s, gi);
            if (bytes) splat__cmd_copy(splat__stream_cmd(job->stream), SPLAT_VIEW_AT(s->group[gi], 0, bytes),
                                       SPLAT_VIEW_AT(grown.group[gi], 0, bytes));
            st = splat__stream_sync(job->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
            if (st != SPLAT_OK) {
                splat__buf_free(g, &grown.group[gi]);
                break;
            }
            splat__buf_free(g, &s->group[gi]);
            s->group[gi] = grown.group[gi];
        }
        if (st != SPLAT_OK) return st; /* the model keeps its rows, in buffers old and new */
        job->params->capacity = rows;
        job->moments->capacity = rows;
    }
    splat_scene_gpu np = *job->params, nm = *job->moments;
    splat_cmd *c = splat__stream_cmd(job->stream);
    if (n > 0) {
        /* the relocation: the dead onto live samples */
        record_sampling(c, job, &np, MCMC_MODE_RELOCATE, shift, n);
        splat__mcmc_relocate_record(c, job->pipes, SPLAT_VIEW(b->counts), &np, &nm, n, true);
        splat__cmd_barrier(c);
        record_move(c, job, &np, &nm, MCMC_MODE_RELOCATE, n);
        splat__cmd_copy(c, SPLAT_VIEW(b->tot_dead), SPLAT_VIEW_AT(b->readback, 0, 4));
        splat__cmd_copy(c, SPLAT_VIEW(b->tot_weights), SPLAT_VIEW_AT(b->readback, 4, 4));
        splat__cmd_barrier(c);
    }
    if (added > 0) {
        /* the adding: samples of all, appended */
        record_sampling(c, job, &np, MCMC_MODE_ADD, shift, added);
        splat__mcmc_relocate_record(c, job->pipes, SPLAT_VIEW(b->counts), &np, &nm, n, false);
        splat__cmd_barrier(c);
        record_move(c, job, &np, &nm, MCMC_MODE_ADD, added);
    }
    if (job->noise_scale != 0) {
        splat__mcmc_noise_record(c, job->pipes, &np, rows, job->seed, 0, job->noise_scale);
        splat__cmd_barrier(c);
    }
    st = splat__stream_sync(job->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st != SPLAT_OK) return st;
    uint32_t r[2] = {0, 0};
    if (n > 0) memcpy(r, b->readback.map, sizeof r);
    job->params->count = rows;
    res->count = rows;
    res->dead = r[0];
    res->relocated = r[1] ? r[0] : 0;
    res->added = added;
    return SPLAT_OK;
}

/* ------------------------------------------------------------------ the strategy */

static bool due(const splat_train_desc *d, uint32_t s)
{
    return s < d->refine_stop && s > d->refine_start && s % d->refine_every == 0;
}

static splat_status init(splat_strategy_state **out, splat_gpu *g, splat_error *err)
{
    splat_strategy_state *s = splat__calloc(1, sizeof *s);
    if (!s) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "MCMC: out of host memory");
    splat_status st = splat__mcmc_pipes_init(g, &s->pipes, err);
    if (st == SPLAT_OK) st = splat__mcmc_bufs_init(g, &s->bufs, err);
    if (st != SPLAT_OK) {
        splat__mcmc_pipes_free(g, &s->pipes);
        splat__free(s);
        return st;
    }
    *out = s;
    return SPLAT_OK;
}

static void destroy(splat_strategy_state *s, splat_gpu *g)
{
    if (!s) return;
    splat__mcmc_pipes_free(g, &s->pipes);
    splat__mcmc_bufs_free(g, &s->bufs);
    splat__free(s);
}

/* A refine step's noise comes after the refine (gsplat's order), so its slot carries none. */
static void fill_slot(const splat_train_desc *d, double scene_scale, double world_unit, uint32_t step,
                      splat_train_slot *slot)
{
    slot->noise_scale = due(d, step) ? 0.0f : (float)splat__mcmc_noise_scale(scene_scale, world_unit, step, d->steps);
    /* gsplat regularises the mean scale in its world unit: a length, u times smaller there */
    slot->scale_reg = (float)(SPLAT_MCMC_SCALE_REG / world_unit);
}

static splat_status run(splat_strategy_state *s, const splat_strategy_ctx *ctx, uint32_t step, bool *resized,
                        splat_error *err)
{
    const splat_train_desc *d = ctx->desc;
    splat_model *m = ctx->model;
    /* the adding grows the buffers one at a time, the parameters' then the moments' (splat__mcmc_refine) */
    uint32_t passes[2 * SPLAT_GROUP_COUNT];
    for (uint32_t k = 0; k < SPLAT_GROUP_COUNT; k++) passes[k] = 1u << k, passes[SPLAT_GROUP_COUNT + k] = 1u << (SPLAT_APPLY_MOMENTS + k);
    uint32_t fit = splat__strategy_memory_fit(ctx, passes, SPLAT_COUNTOF(passes), m->count);
    if ((uint64_t)m->count + added_of(m->count, d->max_gaussians) > fit) splat__model_memory_bound(m, step, SPLAT_MAX(fit, m->count));
    splat_mcmc_job job = {
        .gpu = ctx->gpu, .stream = ctx->stream, .sorter = ctx->sorter, .pipes = &s->pipes, .bufs = &s->bufs,
        .params = &m->params, .moments = &m->moments, .grads = &m->grads, .count = m->count, .cap = SPLAT_MIN(d->max_gaussians, fit),
        .seed = (uint32_t)d->seed ^ step, .noise_scale = (float)splat__mcmc_noise_scale(ctx->scene_scale, ctx->world_unit, step, d->steps),
    };
    splat_mcmc_result res;
    splat_status st = splat__mcmc_refine(&job, &res, err);
    if (st != SPLAT_OK) return st;
    if (res.skipped) splat__model_memory_bound(m, step, m->count);
    *resized = res.count != m->count;
    m->count = res.count;
    return SPLAT_OK;
}

/* gsplat's `mcmc` config: opacity 0.5 and a tenth of the default scale */
static void prepare(splat_scene *scene)
{
    float scale = (float)log(0.1);
    for (uint32_t i = 0; i < scene->count; i++) {
        scene->opacities[i] = 0.0f;
        for (int k = 0; k < 3; k++) scene->log_scales[3 * i + k] += scale;
    }
}

static void record(splat_strategy_state *s, splat_cmd *c, const splat_strategy_rec *r, bool after_adam)
{
    const splat_scene_gpu *p = &r->model->params;
    uint32_t n = r->model->count;
    splat_mcmc_push pc = {.slot = r->slot, .n = n, .seed = r->seed, .mode = MCMC_MODE_SLOT};
    if (!after_adam) {
        splat_view v[MCMC_REG_BINDINGS] = {
            [MCMC_REG_SLOTS] = r->slots,
            [MCMC_REG_OPACITIES] = SPLAT_VIEW(p->opacities),
            [MCMC_REG_SCALES] = SPLAT_VIEW(p->log_scales),
            [MCMC_REG_GRAD_OPACITIES] = SPLAT_VIEW(r->model->grads.opacities),
            [MCMC_REG_GRAD_SCALES] = SPLAT_VIEW(r->model->grads.log_scales),
        };
        splat__cmd_dispatch_1d(c, &s->pipes.reg, v, MCMC_REG_BINDINGS, &pc, sizeof pc, n);
    } else {
        splat_view v[MCMC_NOISE_BINDINGS];
        noise_views(v, r->slots, r->gate, p);
        splat__cmd_dispatch_1d(c, &s->pipes.noise, v, MCMC_NOISE_BINDINGS, &pc, sizeof pc, n);
    }
    splat__cmd_barrier(c);
}

const splat_strategy_ops splat__strategy_mcmc = {
    .name = "mcmc",
    .stats = false,
    .init = init,
    .free = destroy,
    .due = due,
    .run = run,
    .prepare = prepare,
    .fill_slot = fill_slot,
    .record = record,
};
