/* train: setting a trainer up from a dataset and tearing it down; the parts it wires together
 * are described in train.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/init.h"
#include "train/strategy.h"

splat_status splat__train_pipes_init(splat_gpu *g, splat_train_pipes *p, splat_error *err)
{
    memset(p, 0, sizeof *p);
    const uint32_t push = sizeof(splat_train_push), on = 1;
    struct {
        splat_pipe *pipe;
        splat_pipe_desc desc;
    } all[] = {
        {&p->frame_setup, {.shader = "frame_setup", .n_bindings = FRAME_SETUP_BINDINGS, .push_size = push}},
        {&p->loss_fwd, {.shader = "loss_fwd", .n_bindings = LOSS_BINDINGS, .push_size = push}},
        {&p->loss_bwd, {.shader = "loss_bwd", .n_bindings = LOSS_BINDINGS, .push_size = push}},
        {&p->loss_reduce, {.shader = "loss_reduce", .n_bindings = LOSS_REDUCE_BINDINGS, .push_size = push}},
        {&p->adam, {.shader = "adam", .n_bindings = ADAM_BINDINGS, .push_size = push}},
        {&p->adam_sh_record, {.shader = "adam", .n_bindings = ADAM_BINDINGS, .push_size = push, .spec = &on, .n_spec = 1}},
    };
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < SPLAT_COUNTOF(all) && st == SPLAT_OK; k++) st = splat__pipe_init(g, all[k].pipe, &all[k].desc, err);
    if (st != SPLAT_OK) splat__train_pipes_free(g, p);
    return st;
}

void splat__train_pipes_free(splat_gpu *g, splat_train_pipes *p)
{
    splat_pipe *all[] = {&p->frame_setup, &p->loss_fwd, &p->loss_bwd, &p->loss_reduce, &p->adam, &p->adam_sh_record};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__pipe_free(g, all[k]);
}

static splat_status init_gaussians(splat_trainer *t, splat_scene *scene, splat_error *err)
{
    if (t->desc.init_ply || t->desc.init_scene) {
        const char *what = t->desc.init_ply ? t->desc.init_ply : "init_scene";
        splat_status st = SPLAT_OK;
        if (t->desc.init_scene) {
            const splat_scene *src = t->desc.init_scene;
            SPLAT_ASSERT(src->count <= src->capacity && src->sh_degree <= 3);
            st = splat__scene_init(scene, src->count, err);
            for (uint32_t g = 0; g < SPLAT_GROUP_COUNT && st == SPLAT_OK && src->count; g++)
                memcpy(*splat__scene_group(scene, g), splat__scene_group_c(src, g),
                       (size_t)src->count * splat__groups[g].width * sizeof(float));
            scene->count = src->count;
            scene->sh_degree = src->sh_degree;
            scene->rasterize_mode = src->rasterize_mode;
        } else {
            st = splat__scene_read(t->desc.init_ply, scene, NULL, err);
        }
        if (st == SPLAT_OK && scene->count == 0)
            st = splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: the scene has no Gaussians", what);
        if (st == SPLAT_OK) st = splat__scene_check(scene, what, err);
        if (st == SPLAT_OK && scene->sh_degree < t->sh_max) t->sh_max = scene->sh_degree;
        /* Gaussians trained antialiased are evaluated and trained on so */
        if (st == SPLAT_OK && scene->rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED)
            t->desc.render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
        return st;
    }
    splat_status st;
    if (t->ds.n_points > 0) st = splat__init_from_points(scene, t->ds.points, t->ds.point_colors, t->ds.n_points, err);
    /* NeRF-synthetic: the original 3DGS's cube; a capture without points: gsplat's, 3 scene
     * scales around the cameras' centre */
    else if (t->ds.kind == SPLAT_DATASET_NERF_SYNTHETIC)
        st = splat__init_random(scene, t->desc.init_points, NULL, 1.3, t->desc.seed, err);
    else st = splat__init_random(scene, t->desc.init_points, t->scene_centre, 3 * t->scene_scale, t->desc.seed, err);
    /* a stream of its own, so the points' draws above stay what they were */
    if (st == SPLAT_OK && !t->desc.identity_quats) splat__init_quats_random(scene, t->desc.seed ^ 0x71a7u);
    return st;
}

/* Scene scale: 1.1 x the largest distance of a training camera from their mean centre (*mean). */
static double scene_scale(const splat_trainer *t, double mean[3])
{
    double far = 0;
    mean[0] = mean[1] = mean[2] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < t->n_train; k++) {
            const splat_camera *c = &t->ds.views[t->train_views[k]].camera;
            double ctr[3];
            for (int i = 0; i < 3; i++) ctr[i] = -(c->R[i] * c->t[0] + c->R[3 + i] * c->t[1] + c->R[6 + i] * c->t[2]);
            if (pass == 0)
                for (int i = 0; i < 3; i++) mean[i] += ctr[i] / t->n_train;
            else
                far = fmax(far, sqrt((ctr[0] - mean[0]) * (ctr[0] - mean[0]) + (ctr[1] - mean[1]) * (ctr[1] - mean[1]) +
                                     (ctr[2] - mean[2]) * (ctr[2] - mean[2])));
        }
    return 1.1 * (far > 0 ? far : 1.0);
}

/* gsplat rescales COLMAP captures to its unit (splat__focus_distance; all the views, as its loader
 * does before the split) and keeps NeRF-synthetic scenes as they are. */
static double world_unit(const splat_dataset *ds)
{
    if (ds->kind == SPLAT_DATASET_NERF_SYNTHETIC || ds->n_views == 0) return 1.0;
    splat_camera *cams = splat__calloc(ds->n_views, sizeof *cams);
    if (!cams) return 1.0;
    for (uint32_t v = 0; v < ds->n_views; v++) cams[v] = ds->views[v].camera;
    double d = splat__focus_distance(cams, ds->n_views);
    splat__free(cams);
    return d;
}

/* The views: training and held out, and the largest image. */
static splat_status split_views(splat_trainer *t, splat_error *err)
{
    t->train_views = splat__calloc(t->ds.n_views, sizeof *t->train_views);
    t->test_views = splat__calloc(t->ds.n_views, sizeof *t->test_views);
    if (!t->train_views || !t->test_views) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "trainer: out of host memory");
    for (uint32_t v = 0; v < t->ds.n_views; v++) {
        if (t->ds.views[v].is_test) t->test_views[t->n_test++] = v;
        else t->train_views[t->n_train++] = v;
        t->max_w = SPLAT_MAX(t->max_w, t->ds.views[v].camera.width);
        t->max_h = SPLAT_MAX(t->max_h, t->ds.views[v].camera.height);
    }
    if (t->n_train == 0) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: no training views", t->desc.data);
    return SPLAT_OK;
}

/* The largest image the buffers hold: the largest view, or more for evaluation at a scale above
 * 1, refused here when its SSIM maps (the largest image-sized buffer) would not fit one binding. */
static splat_status eval_room(splat_trainer *t, splat_error *err)
{
    t->room_w = SPLAT_MAX(t->max_w, splat__eval_size(t->max_w, t->desc.eval_scale));
    t->room_h = SPLAT_MAX(t->max_h, splat__eval_size(t->max_h, t->desc.eval_scale));
    uint64_t bytes = (uint64_t)t->room_w * t->room_h * 48, most = t->env.gpu->info.max_storage_range;
    if ((t->room_w > t->max_w || t->room_h > t->max_h) && bytes > most)
        return splat__fail(err, SPLAT_ERR_LIMIT,
                           "evaluation at scale %g: a %ux%u image needs %.0f MiB of SSIM maps in one storage binding, "
                           "%s allows %.0f MiB (maxStorageBufferRange); evaluate at a smaller scale",
                           (double)t->desc.eval_scale, t->room_w, t->room_h, bytes / 1048576.0, t->env.gpu->info.name,
                           most / 1048576.0);
    return SPLAT_OK;
}

/* What counts as a view that saw a Gaussian in the densification statistics: one where gsplat's
 * box overlaps the image (the default, measured better on the H100) or, with
 * SPLAT_DENSIFY_SEEN=pixels, one where it draws a pixel (splatc's measure until 2026-11-24, kept
 * to compare against; docs/TRAIN.md, "Densification"). `asked`: the variable named one. */
static splat_status seen_measure(bool *box, bool *asked, splat_error *err)
{
    const char *v = getenv("SPLAT_DENSIFY_SEEN");
    *asked = v && *v;
    *box = !(*asked && strcmp(v, "pixels") == 0);
    if (*asked && *box && strcmp(v, "box") != 0)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "SPLAT_DENSIFY_SEEN: '%s' is neither 'pixels' nor 'box'", v);
    return SPLAT_OK;
}

splat_status splat__trainer_init(splat_trainer **out, const splat_train_env *env, const splat_train_desc *desc,
                                 splat_error *err)
{
    *out = NULL;
    splat_trainer *t = splat__calloc(1, sizeof *t);
    if (!t) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "trainer: out of host memory");
    t->env = *env;
    t->desc = *desc;
    splat_gpu *g = env->gpu;
    t->steps = desc->steps;
    t->sh_max = splat__sh_degree(&desc->render);
    t->strategy = splat__strategy_ops(desc->strategy);
    splat_scene scene = {0};
    splat_status st = t->strategy ? SPLAT_OK
                                  : splat__fail(err, SPLAT_ERR_INVALID_ARG, "training: unknown strategy %d", (int)desc->strategy);
    if (st == SPLAT_OK) st = seen_measure(&t->seen_box, &t->seen_asked, err);
    if (st == SPLAT_OK) {
        splat_dataset_desc dd = {.path = desc->data, .images_factor = desc->images_factor, .eval = desc->eval};
        st = splat__dataset_load(&dd, &t->ds, err);
    }
    if (st == SPLAT_OK) st = split_views(t, err);
    if (st == SPLAT_OK) st = eval_room(t, err);
    if (st != SPLAT_OK) goto fail;
    t->scene_scale = scene_scale(t, t->scene_centre);
    t->world_unit = world_unit(&t->ds);
    /* the background: white where the images carry alpha to composite (NeRF-synthetic), unless a
     * colour was chosen; a random one (splat__train_fill_slot) is for training steps only, and
     * evaluation is on white there too */
    for (int c = 0; c < 3; c++)
        t->background[c] = desc->background != SPLAT_BACKGROUND_COLOR && t->ds.has_alpha ? 1.0f : desc->render.background[c];

    st = init_gaussians(t, &scene, err);
    if (st == SPLAT_OK && !desc->init_ply && !desc->init_scene && t->strategy->prepare) t->strategy->prepare(&scene);
    if (st == SPLAT_OK)
        st = splat__images_init(g, &t->images, &t->ds, t->train_views, t->n_train, t->max_w, t->max_h, t->room_w,
                                t->room_h, desc->stream_images, err);
    if (st != SPLAT_OK) goto fail;
    splat_ring *ring = &t->ring;
    ring->report_stride = SPLAT_MAX((uint64_t)sizeof(splat_train_report), g->info.storage_align);
    uint64_t px = (uint64_t)t->room_w * t->room_h;
    st = splat__buf_init(g, &ring->slots, "train.slots", (SPLAT_TRAIN_RING + 1) * sizeof(splat_train_slot), SPLAT_MEM_UPLOAD, err);
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &ring->reports, "train.reports", (SPLAT_TRAIN_RING + 1) * ring->report_stride,
                             SPLAT_MEM_READBACK, err);
    if (st == SPLAT_OK) st = splat__buf_init(g, &t->maps, "train.ssim_maps", px * 48, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &t->parts, "train.loss_parts", (uint64_t)splat__loss_groups(t->room_w, t->room_h) * 16,
                             SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) st = splat__train_pipes_init(g, &t->pipes, err);
    if (st == SPLAT_OK) st = t->strategy->init(&t->strategy_state, g, err);
    t->prof.on = desc->profile;
    for (int k = 0; k < SPLAT_TRAIN_RING && st == SPLAT_OK && t->prof.on; k++) st = splat__prof_init(g, &t->prof.prof[k], err);
    if (st == SPLAT_OK) st = splat__model_set(t, &scene, err);
    if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
    if (st != SPLAT_OK) goto fail;
    splat__scene_free(&scene);
    *out = t;
    return SPLAT_OK;
fail:
    splat__scene_free(&scene);
    splat__trainer_free(t);
    return st;
}

void splat__trainer_free(splat_trainer *t)
{
    if (!t) return;
    splat_gpu *g = t->env.gpu;
    splat__stream_sync(t->env.stream, SPLAT_SYNC_COMMIT_AND_WAIT, NULL);
    if (t->ring.recorded)
        for (int k = 0; k < SPLAT_TRAIN_RING; k++) splat__rec_free(g, &t->ring.rec[k]);
    splat__train_pipes_free(g, &t->pipes);
    if (t->strategy && t->strategy_state) t->strategy->free(t->strategy_state, g);
    for (int k = 0; k < SPLAT_TRAIN_RING; k++) splat__prof_free(g, &t->prof.prof[k]);
    splat__model_free(g, &t->model);
    splat__render_bufs_free(g, &t->rb);
    splat_buf *bufs[] = {&t->ring.slots, &t->ring.reports, &t->maps, &t->parts};
    for (size_t k = 0; k < SPLAT_COUNTOF(bufs); k++) splat__buf_free(g, bufs[k]);
    splat__images_free(g, &t->images);
    splat__free(t->train_views);
    splat__free(t->test_views);
    splat__dataset_free(&t->ds);
    splat__free(t);
}

uint32_t splat__trainer_profile(const splat_trainer *t, splat_stage_time *stages, uint32_t max)
{
    const splat_trainer_prof *p = &t->prof;
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_stages && n < max; k++)
        stages[n++] = (splat_stage_time){p->stage_name[k], p->n_profiled ? p->stage_ms[k] / p->n_profiled : 0};
    return n;
}

uint32_t splat__trainer_diagnostics(splat_trainer *t, char *msg, size_t size)
{
    if (size) msg[0] = '\0';
    return splat__render_debug(t->env.gpu, &t->rb, msg, size);
}
