#include "raster_support.h"

#include "harness.h"

static void random_rotation(double R[9])
{
    double q[4], n = 0;
    for (int i = 0; i < 4; i++) {
        q[i] = splat__rng_normal(splat_test_rng());
        n += q[i] * q[i];
    }
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(R, m, sizeof m);
}

splat_camera t_random_camera(uint32_t width, uint32_t height)
{
    splat_camera c = {0};
    c.width = width;
    c.height = height;
    double f = (double)SPLAT_MAX(width, height) * t_uniform(0.8, 1.6);
    c.fx = (float)f;
    c.fy = (float)(f * t_uniform(0.9, 1.1));
    c.cx = (float)(width * t_uniform(0.35, 0.65));
    c.cy = (float)(height * t_uniform(0.35, 0.65));
    double R[9];
    random_rotation(R);
    for (int i = 0; i < 9; i++) c.R[i] = (float)R[i];
    for (int i = 0; i < 3; i++) c.t[i] = (float)t_uniform(-2, 2);
    return c;
}

void t_cam_to_world(const splat_camera *cam, const double pc[3], float out[3])
{
    /* X = R^T (pc - t) */
    for (int i = 0; i < 3; i++) {
        double v = 0;
        for (int k = 0; k < 3; k++) v += (double)cam->R[k * 3 + i] * (pc[k] - cam->t[k]);
        out[i] = (float)v;
    }
}

void t_random_scene(splat_scene *s, uint32_t n, const splat_camera *cam)
{
    splat_error err = {0};
    if (splat_scene_init(s, n ? n : 1, &err) != SPLAT_OK) abort();
    s->count = n;
    s->sh_degree = 3;
    splat_rng *r = splat_test_rng();
    for (uint32_t i = 0; i < n; i++) {
        double z = t_uniform(2, 8);
        double u = t_uniform(-0.15, 1.15) * cam->width, v = t_uniform(-0.15, 1.15) * cam->height;
        double pc[3] = {(u - cam->cx) / cam->fx * z, (v - cam->cy) / cam->fy * z, z};
        t_cam_to_world(cam, pc, &s->means[3 * i]);
        /* footprints from well under a pixel to a good part of the image */
        double px_size = z / cam->fx;
        double base = log(px_size * pow(10.0, t_uniform(-0.5, 1.6)));
        for (int k = 0; k < 3; k++) s->log_scales[3 * i + k] = (float)(base + t_uniform(-0.7, 0.7));
        for (int k = 0; k < 4; k++) s->quats[4 * i + k] = (float)splat__rng_normal(r);
        s->opacities[i] = (float)t_uniform(-3, 4);
        for (int k = 0; k < SPLAT_SH_COEFFS; k++)
            for (int c = 0; c < 3; c++)
                s->sh[(i * SPLAT_SH_COEFFS + k) * 3 + c] = (float)(splat__rng_normal(r) * (k == 0 ? 1.0 : 0.3));
    }
}

const double *t_ref_group(const splat_ref_grads *rg, uint32_t g)
{
#define MEMBER(i, name, N, w, h, a, b, f) [i] = offsetof(splat_ref_grads, name),
    static const size_t member[SPLAT_GROUP_COUNT] = {SPLAT_PARAM_GROUPS(MEMBER)};
#undef MEMBER
    return *(double *const *)((const char *)rg + member[g]);
}

bool t_render_init(t_render *t, const splat_scene *scene, uint32_t max_w, uint32_t max_h, uint32_t isect_capacity)
{
    memset(t, 0, sizeof *t);
    t->g = t_gpu();
    if (!t->g) return false;
    splat_error err = {0};
    uint32_t cap = scene->count ? scene->count : 1;
    if (splat__renderer_init(t->g, &t->r, &err) || splat__scene_gpu_init(t->g, &t->scene, "scene", cap, false, &err) ||
        splat__scene_gpu_init(t->g, &t->grads, "grads", cap, false, &err) ||
        splat__scene_gpu_upload(t->g, &t->scene, scene, &err) ||
        splat__render_bufs_init(t->g, &t->r, &t->bufs, cap, isect_capacity, max_w, max_h, &err) ||
        splat__stream_init(t->g, &t->stream, &err)) {
        splat_test_fail(__FILE__, __LINE__, "render fixture:", "%s", err.msg);
        return false;
    }
    splat__render_bufs_clear(splat__stream_cmd(&t->stream), &t->bufs); /* runs with the first render */
    t_poison_partials(t, true);
    return true;
}

void t_poison_partials(t_render *t, bool bits)
{
    splat_cmd *c = splat__stream_cmd(&t->stream);
    for (int q = 0; q < 4; q++) splat__cmd_fill(c, SPLAT_VIEW(t->bufs.partial[q]), 0x7fc00000u);
    if (bits) splat__cmd_fill(c, SPLAT_VIEW(t->bufs.quads), 0xffffffffu);
    splat__cmd_barrier(c);
}

void t_render_free(t_render *t)
{
    if (!t->g) return;
    splat__stream_free(&t->stream);
    splat__render_bufs_free(t->g, &t->bufs);
    splat__scene_gpu_free(t->g, &t->scene);
    splat__scene_gpu_free(t->g, &t->grads);
    splat__renderer_free(&t->r);
}

bool t_download_image(t_render *t, const splat_camera *cam, t_gpu_image *out)
{
    memset(out, 0, sizeof *out);
    splat_error err = {0};
    uint64_t px = (uint64_t)cam->width * cam->height;
    out->w = cam->width;
    out->h = cam->height;
    out->tiles = splat__div_up(cam->width, SPLAT_TILE) * splat__div_up(cam->height, SPLAT_TILE);
    splat_counters k;
    out->rgbt = malloc(px * 16);
    out->last = malloc(px * 4);
    out->depth = malloc(px * 4);
    out->ranges = malloc((uint64_t)out->tiles * 8);
    splat_render_bufs *b = &t->bufs;
    if (splat__buf_download(t->g, &b->counters, 0, &k, sizeof k, &err) ||
        splat__buf_download(t->g, &b->out_rgbt, 0, out->rgbt, px * 16, &err) ||
        splat__buf_download(t->g, &b->out_last, 0, out->last, px * 4, &err) ||
        splat__buf_download(t->g, &b->out_depth, 0, out->depth, px * 4, &err) ||
        splat__buf_download(t->g, &b->ranges, 0, out->ranges, (uint64_t)out->tiles * 8, &err)) {
        splat_test_fail(__FILE__, __LINE__, "download:", "%s", err.msg);
        return false;
    }
    out->n_isect = k.n_valid;
    /* the depth each Gaussian was given: proj [N,3] vec4, depth in the first vec4's z */
    uint32_t n = t->scene.count;
    float *pr = malloc((uint64_t)n * 48 + 48);
    out->gdepth = malloc((uint64_t)n * 4 + 4);
    if (splat__buf_download(t->g, &b->proj, 0, pr, (uint64_t)n * 48, &err)) {
        splat_test_fail(__FILE__, __LINE__, "download:", "%s", err.msg);
        free(pr);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) out->gdepth[i] = pr[12 * i + 2];
    free(pr);
    out->vals = malloc((uint64_t)k.n_valid * 4 + 4);
    out->keys = malloc((uint64_t)k.n_valid * 4 + 4);
    uint32_t *gauss_of_emit = malloc((uint64_t)k.n_valid * 4 + 4);
    if (splat__buf_download(t->g, &b->vals, 0, out->vals, (uint64_t)k.n_valid * 4, &err) ||
        splat__buf_download(t->g, &b->keys_lo, 0, out->keys, (uint64_t)k.n_valid * 4, &err) ||
        splat__buf_download(t->g, &b->gauss_of_emit, 0, gauss_of_emit, (uint64_t)k.n_valid * 4, &err)) {
        splat_test_fail(__FILE__, __LINE__, "download:", "%s", err.msg);
        free(gauss_of_emit);
        return false;
    }
    /* sorted position -> emission index -> Gaussian */
    for (uint32_t p = 0; p < k.n_valid; p++) out->vals[p] = gauss_of_emit[out->vals[p]];
    free(gauss_of_emit);
    /* Every output finite. */
    uint64_t bad = 0;
    for (uint64_t i = 0; i < px * 4; i++) bad += !isfinite(out->rgbt[i]);
    for (uint64_t i = 0; i < px; i++) bad += !isfinite(out->depth[i]);
    if (bad) splat_test_fail(__FILE__, __LINE__, "outputs:", "%llu NaN/Inf values", (unsigned long long)bad);
    return bad == 0;
}

void t_gpu_image_free(t_gpu_image *im)
{
    free(im->rgbt);
    free(im->last);
    free(im->depth);
    free(im->ranges);
    free(im->vals);
    free(im->keys);
    free(im->gdepth);
    memset(im, 0, sizeof *im);
}

/* --------------------------------------------------------------- reconciliation */

static bool is_border(const splat_ref_lists *l, uint32_t tile, uint32_t id)
{
    for (uint32_t k = 0; k < l->n_border; k++)
        if (l->border_tile[k] == tile && l->border_id[k] == id) return true;
    return false;
}

static float f32_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_of_f32(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The GPU's list of tile t against the order of docs/RASTER.md section 2, (float32(depth), index):
 * - every entry's sort key is exactly its Gaussian's float32 depth as the GPU's preprocess wrote
 *   it (the depth it blends), and that depth is the reference's within float32 rounding: the
 *   GPU evaluates p.z = R_z . mu + t_z in float32, whose error is at most gamma_4 =~ 4 u times
 *   S = sum_k |R_zk mu_k| + |t_z| (u = 2^-24); T_DEPTH_ROUNDING u S allows twice that. (The
 *   keys measured 0 to 3 float32 steps from the correctly rounded depth, so the GPU's depths are
 *   not the reference's rounded ones, and two Gaussians a few steps apart may swap.)
 * - the list is in strictly increasing (key, index) order: the GPU's order differs from the
 *   reference's only where the two sides' float32 depths differ by that rounding, and exact ties
 *   are broken by the index.
 * Fails the case and returns false otherwise. */
static bool check_gpu_order(const t_gpu_image *gpu, uint32_t t, const splat_scene *scene, const splat_camera *cam,
                            const splat_ref_proj *proj, double *max_err)
{
    uint32_t gs = gpu->ranges[2 * t], ge = gpu->ranges[2 * t + 1];
    for (uint32_t k = gs; k < ge; k++) {
        uint32_t g = gpu->vals[k], key = gpu->keys[k];
        double S = fabs(cam->t[2]);
        for (int j = 0; j < 3; j++) S += fabs((double)cam->R[6 + j] * scene->means[3 * g + j]);
        double err = fabs(f32_of_bits(key) - proj[g].depth) / (T_DEPTH_ROUNDING * 0x1p-24 * S);
        *max_err = fmax(*max_err, err);
        if (key != bits_of_f32(gpu->gdepth[g]) || !(err <= 1)) {
            splat_test_fail(__FILE__, __LINE__, "tile lists:",
                            "tile %u: Gaussian %u sorted under depth %.9g (key 0x%08x); its GPU depth is %.9g, its depth %.9g",
                            t, g, f32_of_bits(key), key, gpu->gdepth[g], proj[g].depth);
            return false;
        }
        if (k > gs) {
            uint32_t pg = gpu->vals[k - 1], pkey = gpu->keys[k - 1];
            if (!(pkey < key || (pkey == key && pg < g))) {
                splat_test_fail(__FILE__, __LINE__, "tile lists:",
                                "tile %u: Gaussian %u (depth %.9g) before Gaussian %u (depth %.9g) at list positions %u, %u",
                                t, pg, f32_of_bits(pkey), g, f32_of_bits(key), k - 1 - gs, k - gs);
                return false;
            }
        }
    }
    return true;
}

bool t_ref_render(t_ref *ref, const splat_scene *scene, const splat_camera *cam, const splat_render_desc *opts,
                  const t_gpu_image *gpu)
{
    memset(ref, 0, sizeof *ref);
    ref->set.sh_degree = splat__sh_degree(opts);
    memcpy(ref->set.background, opts->background, sizeof ref->set.background);
    ref->set.cap = opts->max_gaussians_per_tile;
    ref->set.rasterize_mode = opts->rasterize_mode;
    splat_error err = {0};
    ref->proj = calloc(scene->count + 1, sizeof *ref->proj);
    splat__ref_preprocess(scene, cam, &ref->set, ref->proj);
    splat_ref_lists own;
    if (splat__ref_tile_lists(cam, ref->proj, scene->count, &own, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "reference lists:", "%s", err.msg);
        return false;
    }
    uint32_t tiles = own.tiles_x * own.tiles_y;
    if (tiles != gpu->tiles) {
        splat_test_fail(__FILE__, __LINE__, "tiles:", "reference %u, GPU %u", tiles, gpu->tiles);
        splat__ref_lists_free(&own);
        return false;
    }
    /* Build the reconciled lists: the reference's own, tile by tile, unless the GPU's differs
     * only in borderline pairs or in its order within exact float32 depth ties (check_gpu_order). */
    uint32_t total = own.offsets[tiles] + gpu->n_isect;
    splat_ref_lists *m = &ref->lists;
    *m = (splat_ref_lists){.tiles_x = own.tiles_x, .tiles_y = own.tiles_y};
    m->offsets = splat__calloc(tiles + 1, sizeof *m->offsets);
    m->ids = splat__calloc(total + 1, sizeof *m->ids);
    bool ok = true;
    for (uint32_t t = 0; t < tiles && ok; t++) {
        const uint32_t *rl = own.ids + own.offsets[t];
        uint32_t rn = own.offsets[t + 1] - own.offsets[t];
        uint32_t gs = gpu->ranges[2 * t], ge = gpu->ranges[2 * t + 1];
        const uint32_t *gl = gpu->vals + gs;
        uint32_t gn = ge - gs;
        const uint32_t *use = rl;
        uint32_t un = rn;
        if (!check_gpu_order(gpu, t, scene, cam, ref->proj, &ref->max_depth_err)) {
            ok = false;
            break;
        }
        if (gn != rn || memcmp(rl, gl, rn * sizeof *rl) != 0) {
            /* every Gaussian in one list and not the other must be borderline for this tile */
            bool same_members = gn == rn;
            for (uint32_t k = 0; k < gn && ok; k++) {
                bool found = false;
                for (uint32_t j = 0; j < rn && !found; j++) found = rl[j] == gl[k];
                same_members &= found;
                if (!found && !is_border(&own, t, gl[k])) {
                    splat_test_fail(__FILE__, __LINE__, "tile lists:", "tile %u: GPU has Gaussian %u, the reference does not", t, gl[k]);
                    ok = false;
                }
            }
            for (uint32_t j = 0; j < rn && ok; j++) {
                bool found = false;
                for (uint32_t k = 0; k < gn && !found; k++) found = rl[j] == gl[k];
                if (!found && !is_border(&own, t, rl[j])) {
                    splat_test_fail(__FILE__, __LINE__, "tile lists:", "tile %u: reference has Gaussian %u, the GPU does not", t, rl[j]);
                    ok = false;
                }
            }
            use = gl;
            un = gn;
            ref->reconciled_tiles++;
            ref->reordered_tiles += same_members;
        }
        m->offsets[t + 1] = m->offsets[t] + un;
        memcpy(m->ids + m->offsets[t], use, un * sizeof *use);
    }
    splat__ref_lists_free(&own);
    if (!ok) return false;
    if (splat__ref_image_init(&ref->img, cam->width, cam->height, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "reference image:", "%s", err.msg);
        return false;
    }
    splat__ref_rasterize(cam, &ref->set, ref->proj, m, &ref->img);
    return true;
}

void t_ref_free(t_ref *ref)
{
    free(ref->proj);
    splat__ref_lists_free(&ref->lists);
    splat__ref_image_free(&ref->img);
    memset(ref, 0, sizeof *ref);
}

double t_compare_forward(const t_ref *ref, const t_gpu_image *gpu, const char *what)
{
    uint64_t px = (uint64_t)gpu->w * gpu->h, skipped = 0, bad_T = 0, bad_last = 0;
    double max_ref = 1.0, max_err = 0, max_T_err = 0;
    for (uint64_t p = 0; p < px * 3; p++) max_ref = fmax(max_ref, fabs(ref->img.rgb[p]));
    for (uint64_t p = 0; p < px; p++) {
        if (ref->img.margin[p] < T_PIXEL_MARGIN) {
            skipped++;
            continue;
        }
        for (int c = 0; c < 3; c++) max_err = fmax(max_err, fabs(gpu->rgbt[4 * p + c] - ref->img.rgb[3 * p + c]));
        double dT = fabs(gpu->rgbt[4 * p + 3] - ref->img.T[p]);
        max_T_err = fmax(max_T_err, dT);
        bad_T += dT > T_TOL_IMAGE;
        uint32_t l = gpu->last[p];
        int32_t gid = l == 0 ? -1 : (int32_t)gpu->vals[l - 1];
        bad_last += gid != ref->img.last[p];
    }
    double rel = max_err / max_ref;
    T_CHECK(rel <= T_TOL_IMAGE, "%s: image max relative error %.3g", what, rel);
    T_CHECK(bad_T == 0, "%s: %llu pixels with transmittance off by more than T_TOL_IMAGE (max %.3g)", what,
            (unsigned long long)bad_T, max_T_err);
    T_CHECK(bad_last == 0, "%s: %llu pixels with a different last contributor", what, (unsigned long long)bad_last);
    T_CHECK(skipped <= px / 50 + 2, "%s: %llu of %llu pixels borderline", what, (unsigned long long)skipped,
            (unsigned long long)px);
    printf("  %s: image rel err %.2e, T err %.2e, %llu borderline pixels, %u tiles reconciled (%u reordered within "
           "depth ties), depth keys at %.2f of their bound, %u intersections\n",
           what, rel, max_T_err, (unsigned long long)skipped, ref->reconciled_tiles, ref->reordered_tiles,
           ref->max_depth_err, gpu->n_isect);
    return rel;
}
