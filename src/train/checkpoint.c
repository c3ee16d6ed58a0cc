/* train: the model in and out of the trainer, at a step boundary (every iteration in flight
 * retired first): the current scene, and checkpoints, whose sections loop over the parameter
 * groups of core/params.h. */
#include <stdio.h>

#include "train/train.h"
#include "train/strategy.h"

splat_status splat__train_scene(splat_trainer *t, splat_scene *scene, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st == SPLAT_OK) st = splat__scene_init(scene, t->model.count ? t->model.count : 1, err);
    if (st != SPLAT_OK) return st;
    t->model.params.count = t->model.count;
    st = splat__scene_gpu_download(t->env.gpu, &t->model.params, scene, err);
    scene->sh_degree = t->sh_max;
    scene->rasterize_mode = t->desc.render.rasterize_mode;
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}

/* ------------------------------------------------------------------ checkpoints */

/* A checkpoint: "meta", then "params.<group>" and "adam.<group>" for every group in the order of
 * core/params.h, then "stats", then "data" (which dataset it trained on), then "strategy" (its
 * name, NUL-terminated; checkpoints before it have none), then "seen" (what counted as a view in
 * the statistics: "box" or "pixels", NUL-terminated; checkpoints before it counted "pixels"). */
typedef struct ckpt_meta {
    uint32_t version, step, steps, count, sh_max;
    uint32_t rasterize_mode;  /* splat_rasterize_mode (checkpoints before it wrote 0 here: classic) */
    double scene_scale;
    uint64_t seed;
} ckpt_meta;

/* 3: Adam's moments as the model holds them (train_types.h): float m and v rows, [n][2][width],
 * for the groups flagged SPLAT_GROUP_FLAG_FLOAT_MOMENTS, a word per parameter float for the
 * others. 2 held every group's as words, 1 every
 * group's as float rows; a resume converts each group whose layout differs (file_words): words
 * unpacked exactly, float rows packed rounded to nearest. */
#define CKPT_VERSION 3

/* Words a parameter float of group g's moments in a checkpoint of `version`. */
static uint32_t file_words(uint32_t version, uint32_t g)
{
    return version == 1 ? 2 : version == 2 ? 1 : SPLAT_MOMENT_WORDS(splat__groups[g].flags);
}

/* The state sections of a model of n Gaussians, in file order: (name, buffer, bytes). */
typedef struct ckpt_part {
    char name[32];
    splat_buf *buf;
    uint64_t bytes;
} ckpt_part;

#define CKPT_PARTS (2 * SPLAT_GROUP_COUNT + 1)

/* The dataset a checkpoint trained on: its views (names and image sizes, in order) and which are
 * held out, hashed (FNV-1a), so a resume on another dataset (or another split) is refused. */
typedef struct ckpt_data {
    uint32_t n_views, n_train;
    uint64_t hash;
} ckpt_data;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t k = 0; k < n; k++) h = (h ^ ((const uint8_t *)p)[k]) * 0x100000001b3ull;
    return h;
}

static ckpt_data data_of(const splat_trainer *t)
{
    ckpt_data d = {t->ds.n_views, t->n_train, 0xcbf29ce484222325ull};
    for (uint32_t v = 0; v < t->ds.n_views; v++) {
        const splat_data_view *w = &t->ds.views[v];
        uint32_t size[3] = {w->camera.width, w->camera.height, w->is_test};
        d.hash = fnv(fnv(d.hash, w->name, strlen(w->name) + 1), size, sizeof size);
    }
    return d;
}

static void ckpt_parts(splat_trainer *t, uint64_t n, ckpt_part parts[CKPT_PARTS], uint32_t version)
{
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        uint64_t row = (uint64_t)splat__groups[g].width * 4;
        ckpt_part *p = &parts[g], *a = &parts[SPLAT_GROUP_COUNT + g];
        *p = (ckpt_part){.buf = &t->model.params.group[g], .bytes = n * row};
        *a = (ckpt_part){.buf = &t->model.moments.group[g], .bytes = n * row * file_words(version, g)};
        snprintf(p->name, sizeof p->name, "params.%s", splat__groups[g].name);
        snprintf(a->name, sizeof a->name, "adam.%s", splat__groups[g].name);
    }
    parts[2 * SPLAT_GROUP_COUNT] = (ckpt_part){"stats", &t->rb.stats, n * 16};
}

/* Float m and v (a version 1 checkpoint's) as a word of moments, each half rounded to nearest
 * (ties to even; moments.glsl's layout, its saturation to infinity). */
static uint32_t half_nearest(uint32_t mag, uint32_t cut)
{
    uint32_t half = 1u << (cut - 1), low = mag & ((1u << cut) - 1), h = mag >> cut;
    if (low > half || (low == half && (h & 1))) h++;
    return h;
}

static uint32_t moment_pack_nearest(float m, float v)
{
    uint32_t um, uv;
    memcpy(&um, &m, 4);
    memcpy(&uv, &v, 4);
    const uint32_t cut_m = 32 - SPLAT_MOMENT_M_BITS, cut_v = SPLAT_MOMENT_M_BITS - 1;
    const uint32_t inf_m = 0x7f800000u >> cut_m, inf_v = 0x7f800000u >> cut_v;
    uint32_t am = um & 0x7fffffffu, av = uv & 0x7fffffffu;
    uint32_t hm = am > 0x7f800000u ? inf_m : SPLAT_MIN(half_nearest(am, cut_m), inf_m);
    uint32_t hv = av > 0x7f800000u ? inf_v : SPLAT_MIN(half_nearest(av, cut_v), inf_v);
    return hm | ((um >> cut_m) & (0x80000000u >> cut_m)) | hv << SPLAT_MOMENT_M_BITS;
}

static const char *seen_name(bool box) { return box ? "box" : "pixels"; }

splat_status splat__train_save(splat_trainer *t, const char *path, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st != SPLAT_OK) return st;
    ckpt_meta meta = {CKPT_VERSION, t->step, t->steps, t->model.count, t->sh_max, (uint32_t)t->desc.render.rasterize_mode,
                      t->scene_scale, t->desc.seed};
    ckpt_data data = data_of(t);
    ckpt_part parts[CKPT_PARTS];
    ckpt_parts(t, t->model.count, parts, CKPT_VERSION);
    splat_section sec[4 + CKPT_PARTS];
    memset(sec, 0, sizeof sec);
    snprintf(sec[0].name, sizeof sec[0].name, "meta");
    sec[0].data = &meta;
    sec[0].size = sizeof meta;
    snprintf(sec[1 + CKPT_PARTS].name, sizeof sec[0].name, "data");
    sec[1 + CKPT_PARTS].data = &data;
    sec[1 + CKPT_PARTS].size = sizeof data;
    snprintf(sec[2 + CKPT_PARTS].name, sizeof sec[0].name, "strategy");
    sec[2 + CKPT_PARTS].data = (void *)t->strategy->name;
    sec[2 + CKPT_PARTS].size = strlen(t->strategy->name) + 1;
    const char *seen = seen_name(t->seen_box);
    snprintf(sec[3 + CKPT_PARTS].name, sizeof sec[0].name, "seen");
    sec[3 + CKPT_PARTS].data = (void *)seen;
    sec[3 + CKPT_PARTS].size = strlen(seen) + 1;
    for (size_t k = 0; k < CKPT_PARTS && st == SPLAT_OK; k++) {
        _Static_assert(sizeof sec[0].name == sizeof parts[0].name, "section names");
        memcpy(sec[k + 1].name, parts[k].name, sizeof sec[k + 1].name);
        sec[k + 1].size = parts[k].bytes;
        sec[k + 1].data = splat__malloc(parts[k].bytes ? parts[k].bytes : 1);
        if (!sec[k + 1].data) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        else st = splat__buf_download(t->env.gpu, parts[k].buf, 0, sec[k + 1].data, parts[k].bytes, err);
    }
    if (st == SPLAT_OK) st = splat__ckpt_write(path, sec, (uint32_t)SPLAT_COUNTOF(sec), err);
    for (size_t k = 1; k <= CKPT_PARTS; k++) splat__free(sec[k].data);
    return st;
}

/* A section holding one NUL-terminated name of at most `max` bytes: the name, or NULL when the
 * section is empty, too long or not terminated. */
static const char *section_text(const splat_section *s, uint64_t max)
{
    return s && s->size > 0 && s->size <= max && ((const char *)s->data)[s->size - 1] == '\0' ? s->data : NULL;
}

static const splat_section *section(const char *path, const splat_section *sec, uint32_t n_sec, const char *name,
                                    uint64_t bytes, splat_status *st, splat_error *err)
{
    const splat_section *s = splat__ckpt_find(sec, n_sec, name);
    if (!s || s->size != bytes) {
        *st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section %s missing or of the wrong size", path, name);
        return NULL;
    }
    return s;
}

splat_status splat__train_resume(splat_trainer *t, const char *path, splat_error *err)
{
    splat_status st = splat__train_drain(t, err);
    if (st != SPLAT_OK) return st;
    splat_section *sec = NULL;
    uint32_t n_sec = 0;
    st = splat__ckpt_read(path, &sec, &n_sec, err);
    if (st != SPLAT_OK) return st;
    const splat_section *m = splat__ckpt_find(sec, n_sec, "meta");
    ckpt_meta meta;
    splat_scene scene = {0};
    if (!m || m->size != sizeof meta) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: no valid meta section", path);
        goto done;
    }
    memcpy(&meta, m->data, sizeof meta);
    if (meta.version < 1 || meta.version > CKPT_VERSION || meta.step > meta.steps) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: checkpoint version %u, step %u of %u", path, meta.version, meta.step, meta.steps);
        goto done;
    }
    if (meta.rasterize_mode >= SPLAT_RASTERIZE_MODE_COUNT) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: unknown rasterize mode %u", path, meta.rasterize_mode);
        goto done;
    }
    /* the run's own length decides where it ends: a resume may go further than the run that
     * wrote the checkpoint (docs/TRAIN.md says what each schedule follows) */
    if (meta.step > t->steps) {
        st = splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: the checkpoint is at step %u, past the end of this run (%u steps)",
                         path, meta.step, t->steps);
        goto done;
    }
    const splat_section *d = splat__ckpt_find(sec, n_sec, "data");
    ckpt_data here = data_of(t), there;
    if (d && d->size == sizeof there) memcpy(&there, d->data, sizeof there);
    if (d && (d->size != sizeof there || there.hash != here.hash || there.n_views != here.n_views)) {
        st = splat__fail(err, SPLAT_ERR_INVALID_ARG,
                         "%s: the checkpoint trained on another dataset or split (%u views, %u for training; here %u and %u)",
                         path, d->size == sizeof there ? there.n_views : 0, d->size == sizeof there ? there.n_train : 0,
                         here.n_views, here.n_train);
        goto done;
    }
    /* a strategy's state (its schedule, its cap, the moments it zeroes) is not another's to go on */
    const splat_section *sg = splat__ckpt_find(sec, n_sec, "strategy");
    const char *strategy = section_text(sg, 64);
    if (sg && (!strategy || strcmp(strategy, t->strategy->name) != 0)) {
        st = splat__fail(err, SPLAT_ERR_INVALID_ARG,
                         "%s: the checkpoint trained with the %s strategy, this run asks for %s (--strategy %s goes on "
                         "with it)",
                         path, strategy ? strategy : "(unreadable)", t->strategy->name, strategy ? strategy : "?");
        goto done;
    }
    /* the statistics go on counting views the checkpoint's way (a run begun before gsplat's measure
     * became the default keeps its own); naming the other one is an error. A checkpoint without the
     * section counted pixels, unless its run named box in SPLAT_DENSIFY_SEEN (the switch came first):
     * then the variable, named again, is taken at its word. */
    const splat_section *sn = splat__ckpt_find(sec, n_sec, "seen");
    const char *seen = section_text(sn, 8);
    if (sn && (!seen || (strcmp(seen, seen_name(true)) != 0 && strcmp(seen, seen_name(false)) != 0))) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: section seen is neither 'box' nor 'pixels'", path);
        goto done;
    }
    bool seen_box = seen ? strcmp(seen, seen_name(true)) == 0 : t->seen_asked && t->seen_box;
    if (t->strategy->stats && t->seen_asked && seen_box != t->seen_box) {
        st = splat__fail(err, SPLAT_ERR_INVALID_ARG,
                         "%s: the checkpoint's statistics count views by %s, SPLAT_DENSIFY_SEEN asks for %s (a resume keeps "
                         "the measure)",
                         path, seen_name(seen_box), seen_name(t->seen_box));
        goto done;
    }
    /* a resume goes on at the checkpoint's degree: asking for another is an error, not an option
     * dropped in silence (the same command line with --resume asks for the same; its --init-ply
     * made the checkpoint's first Gaussians and is not read again) */
    uint32_t asked = t->asked_sh_degree == SPLAT_SH_DEGREE_0 ? 0 : t->asked_sh_degree;
    if (t->asked_sh_degree && asked != meta.sh_max) {
        st = splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: the checkpoint trains SH degree %u, this run asks for %u (a "
                         "resume keeps the degree)", path, meta.sh_max, asked);
        goto done;
    }
    uint64_t n = meta.count;
    st = splat__scene_init(&scene, meta.count ? meta.count : 1, err);
    if (st != SPLAT_OK) goto done;
    scene.count = meta.count;
    scene.sh_degree = meta.sh_max;
    ckpt_part parts[CKPT_PARTS];
    ckpt_parts(t, n, parts, meta.version);
    /* the parameters into a host scene (set as the model), then the state straight into its buffers */
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT && st == SPLAT_OK; g++) {
        const splat_section *s = section(path, sec, n_sec, parts[g].name, parts[g].bytes, &st, err);
        if (s) memcpy(*splat__scene_group(&scene, g), s->data, parts[g].bytes);
    }
    if (st == SPLAT_OK) {
        t->sh_max = meta.sh_max;
        t->scene_scale = meta.scene_scale;
        t->desc.seed = meta.seed;
        t->seen_box = seen_box;
        /* a run keeps its mode; a classic one may go on antialiased when asked to */
        if (meta.rasterize_mode == SPLAT_RASTERIZE_ANTIALIASED) t->desc.render.rasterize_mode = SPLAT_RASTERIZE_ANTIALIASED;
        st = splat__model_set(t, &scene, err);
    }
    ckpt_parts(t, n, parts, meta.version); /* the model's buffers are new */
    for (size_t k = SPLAT_GROUP_COUNT; k < CKPT_PARTS && st == SPLAT_OK; k++) {
        const splat_section *s = section(path, sec, n_sec, parts[k].name, parts[k].bytes, &st, err);
        uint32_t g = (uint32_t)(k - SPLAT_GROUP_COUNT), from = k < 2 * SPLAT_GROUP_COUNT ? file_words(meta.version, g) : 0;
        if (s && from && from != t->model.moments.words[g]) {
            uint32_t w = splat__groups[g].width, to = t->model.moments.words[g];
            uint32_t *out = splat__malloc(n * w * 4 * to + 4);
            if (!out) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            for (uint64_t i = 0; out && i < n; i++)
                for (uint32_t j = 0; j < w; j++) {
                    float mv[2];
                    splat__moments_of(s->data, from, i, w, j, mv);
                    if (to == 1) out[i * w + j] = moment_pack_nearest(mv[0], mv[1]);
                    else memcpy(&out[2 * i * w + j], &mv[0], 4), memcpy(&out[(2 * i + 1) * w + j], &mv[1], 4);
                }
            if (out) st = splat__buf_upload(t->env.gpu, parts[k].buf, 0, out, n * w * 4 * to, err);
            splat__free(out);
        } else if (s) {
            st = splat__buf_upload(t->env.gpu, parts[k].buf, 0, s->data, parts[k].bytes, err);
        }
    }
    if (st == SPLAT_OK) {
        t->step = meta.step;
        st = splat__train_rerecord(t, err);
    }
done:
    splat__scene_free(&scene);
    splat__ckpt_free(sec, n_sec);
    return st;
}
