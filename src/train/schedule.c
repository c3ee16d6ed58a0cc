/* train: what each step uses (docs/TRAIN.md): its view, the SH degree reached, the background, and
 * the learning rates of the parameter groups of core/params.h. The densification schedule is
 * the strategy's. */
#include "train/strategy.h"

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

uint32_t splat__train_degree(const splat_trainer *t, uint32_t step)
{
    uint32_t d = step / 1000;
    return d < t->sh_max ? d : t->sh_max;
}

void splat__train_fill_slot(const splat_trainer *t, uint32_t slot, uint32_t step, uint32_t view, bool training,
                            splat_train_slot *s)
{
    memset(s, 0, sizeof *s);
    s->view = view;
    s->step = step;
    s->image_offset = splat__images_offset(&t->images, slot, view);
    s->has_mask = t->images.masked && t->ds.views[view].mask_path;
    s->n_pixels = t->images.n_pixels[view];
    s->n_centres = t->images.n_centres[view];

    /* the frame: the run's render options with this step's degree and background */
    splat_render_desc rd = t->desc.render;
    uint32_t degree = splat__train_degree(t, step);
    /* evaluation of Gaussians loaded to be evaluated (init_ply or init_scene, not trained yet): all they have */
    if (!training && (t->desc.init_ply || t->desc.init_scene) && step == 0) degree = t->sh_max;
    rd.sh_degree = degree ? degree : SPLAT_SH_DEGREE_0;
    memcpy(rd.background, t->background, sizeof rd.background);
    if (training && t->desc.background == SPLAT_BACKGROUND_RANDOM) {
        uint32_t h = hash32((uint32_t)t->desc.seed ^ hash32(step));
        for (int c = 0; c < 3; c++) {
            h = hash32(h + (uint32_t)c);
            rd.background[c] = (float)((h >> 8) * (1.0 / 16777216.0));
        }
    }
    splat__frame_make(&s->frame, &t->ds.views[view].camera, &rd, t->model.count);
    s->frame.seen_box = training && t->seen_box && t->strategy->stats;

    /* Adam: the learning rate of each group, its bias corrections */
    double progress = (double)step / (double)t->steps;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        const splat_group_info *gi = &splat__groups[g];
        s->lr_head[g] = gi->flags & SPLAT_GROUP_FLAG_SCENE_LR ? (float)(gi->lr_head * t->scene_scale * pow(0.01, progress))
                                                               : (float)gi->lr_head;
        s->lr_rest[g] = (float)gi->lr_rest;
    }
    double tt = (double)step + 1.0;
    s->bias1 = (float)(1.0 - pow(SPLAT_ADAM_B1, tt));
    s->bias2 = (float)sqrt(1.0 - pow(SPLAT_ADAM_B2, tt));
    if (training && t->strategy->fill_slot) t->strategy->fill_slot(&t->desc, t->scene_scale, t->world_unit, step, s);
}
