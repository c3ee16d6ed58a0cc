/* ref/tiles.c: the exact ellipse/tile test of docs/RASTER.md 1.8 and the per-tile lists of
 * section 2, with the borderline pairs of the test. */
#include <stdlib.h>

#include "ref/ref_internal.h"

double splat__ref_extent(double opacity)
{
    double tau = log(opacity / SPLAT_REF_ALPHA_MIN);
    double cap = 0.5 * SPLAT_REF_SIGMA_CAP * SPLAT_REF_SIGMA_CAP;
    return tau < cap ? tau : cap;
}

bool splat__ref_tile_range(const splat_ref_proj *p, uint32_t width, uint32_t height, uint32_t range[4])
{
    double n[2] = {splat__div_up(width, SPLAT_REF_TILE), splat__div_up(height, SPLAT_REF_TILE)};
    for (int k = 0; k < 2; k++) {
        /* Bounds in double, clamped before the conversion: mean2d may be huge (or NaN, which
         * fails every comparison and so gives an empty range). */
        double lo = floor((p->mean2d[k] - p->radius[k]) / SPLAT_REF_TILE);
        double hi = floor((p->mean2d[k] + p->radius[k]) / SPLAT_REF_TILE);
        if (!(lo <= hi && hi >= 0 && lo <= n[k] - 1)) return false;
        range[2 * k] = lo < 0 ? 0 : (uint32_t)lo;
        range[2 * k + 1] = hi > n[k] - 1 ? (uint32_t)(n[k] - 1) : (uint32_t)hi;
    }
    return true;
}

static double sigma_at(const double conic[3], double dx, double dy)
{
    return 0.5 * (conic[0] * dx * dx + conic[2] * dy * dy) + conic[1] * dx * dy;
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

double splat__ref_tile_min_sigma(const splat_ref_proj *p, uint32_t tx, uint32_t ty, uint32_t width,
                                 uint32_t height)
{
    double x0 = SPLAT_REF_TILE * tx + 0.5, x1 = SPLAT_MIN(SPLAT_REF_TILE * tx + SPLAT_REF_TILE, width) - 0.5;
    double y0 = SPLAT_REF_TILE * ty + 0.5, y1 = SPLAT_MIN(SPLAT_REF_TILE * ty + SPLAT_REF_TILE, height) - 0.5;
    double mx = p->mean2d[0], my = p->mean2d[1];
    if (x0 <= mx && mx <= x1 && y0 <= my && my <= y1) return 0;
    /* The convex quadratic's minimum is on the boundary: the least of its four edge minima,
     * each the unconstrained minimiser along the edge clamped to the edge. */
    const double *q = p->conic;
    double dx[2] = {mx - x1, mx - x0}, dy[2] = {my - y1, my - y0};
    double best = HUGE_VAL;
    for (int k = 0; k < 2; k++) {
        double ey = clampd(-q[1] * dx[k] / q[2], dy[0], dy[1]);
        best = fmin(best, sigma_at(q, dx[k], ey));
        double ex = clampd(-q[1] * dy[k] / q[0], dx[0], dx[1]);
        best = fmin(best, sigma_at(q, ex, dy[k]));
    }
    return best;
}

uint32_t splat__ref_count_tiles(const splat_ref_proj *p, uint32_t width, uint32_t height)
{
    uint32_t r[4], n = 0;
    if (!splat__ref_tile_range(p, width, height, r)) return 0;
    double tau = splat__ref_extent(p->opacity);
    for (uint32_t ty = r[2]; ty <= r[3]; ty++)
        for (uint32_t tx = r[0]; tx <= r[1]; tx++) n += splat__ref_tile_min_sigma(p, tx, ty, width, height) <= tau;
    return n;
}

typedef struct depth_key {
    float depth;
    uint32_t id;
} depth_key;

/* Blending order: depth rounded to float32 first, ties to the smaller index. */
static int cmp_depth_key(const void *pa, const void *pb)
{
    const depth_key *a = pa, *b = pb;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* One pass over every candidate pair of every projected Gaussian, in blending order. Counts
 * (ids == NULL) or fills; cursor: [tiles] next free slot of each tile. */
static void visit_pairs(const splat_camera *cam, const splat_ref_proj *proj, const depth_key *order, uint32_t n,
                        splat_ref_lists *l, uint32_t *cursor, uint32_t *n_border)
{
    *n_border = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = order[k].id;
        const splat_ref_proj *p = &proj[i];
        uint32_t r[4];
        if (!splat__ref_tile_range(p, cam->width, cam->height, r)) continue;
        double tau = splat__ref_extent(p->opacity);
        for (uint32_t ty = r[2]; ty <= r[3]; ty++)
            for (uint32_t tx = r[0]; tx <= r[1]; tx++) {
                uint32_t t = ty * l->tiles_x + tx;
                double m = splat__ref_tile_min_sigma(p, tx, ty, cam->width, cam->height);
                if (m <= tau) {
                    if (l->ids) l->ids[cursor[t]] = i;
                    cursor[t]++;
                }
                if (fabs(m - tau) <= SPLAT_REF_BORDER * fmax(tau, 1)) {
                    if (l->border_tile) l->border_tile[*n_border] = t, l->border_id[*n_border] = i;
                    (*n_border)++;
                }
            }
    }
}

splat_status splat__ref_tile_lists(const splat_camera *cam, const splat_ref_proj *proj, uint32_t count,
                                  splat_ref_lists *lists, splat_error *err)
{
    splat_status st = SPLAT_OK;
    memset(lists, 0, sizeof *lists);
    lists->tiles_x = splat__div_up(cam->width, SPLAT_REF_TILE);
    lists->tiles_y = splat__div_up(cam->height, SPLAT_REF_TILE);
    size_t tiles = (size_t)lists->tiles_x * lists->tiles_y;
    depth_key *order = splat__malloc(sizeof(depth_key) * (count ? count : 1));
    uint32_t *cursor = splat__calloc(tiles, sizeof(uint32_t));
    lists->offsets = splat__calloc(tiles + 1, sizeof(uint32_t));
    if (!order || !cursor || !lists->offsets) goto oom;

    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++)
        if (proj[i].projected) order[n++] = (depth_key){(float)proj[i].depth, i};
    qsort(order, n, sizeof *order, cmp_depth_key);

    /* Count, turn the counts into offsets, then fill. */
    uint32_t n_border;
    visit_pairs(cam, proj, order, n, lists, cursor, &n_border);
    uint64_t total = 0;
    for (size_t t = 0; t < tiles; t++) {
        lists->offsets[t] = (uint32_t)total;
        total += cursor[t];
        cursor[t] = lists->offsets[t];
    }
    if (total > UINT32_MAX) {
        st = splat__fail(err, SPLAT_ERR_LIMIT, "ref tile lists: %llu pairs do not fit 32-bit offsets",
                         (unsigned long long)total);
        goto fail;
    }
    lists->offsets[tiles] = (uint32_t)total;
    lists->ids = splat__malloc(sizeof(uint32_t) * (total ? total : 1));
    lists->border_tile = splat__malloc(sizeof(uint32_t) * (n_border ? n_border : 1));
    lists->border_id = splat__malloc(sizeof(uint32_t) * (n_border ? n_border : 1));
    if (!lists->ids || !lists->border_tile || !lists->border_id) goto oom;
    visit_pairs(cam, proj, order, n, lists, cursor, &lists->n_border);
    SPLAT_ASSERT(lists->n_border == n_border);
    splat__free(order);
    splat__free(cursor);
    return SPLAT_OK;

oom:
    st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "ref tile lists (%zu tiles, %u Gaussians): out of host memory",
                     tiles, count);
fail:
    splat__free(order);
    splat__free(cursor);
    splat__ref_lists_free(lists);
    return st;
}

void splat__ref_lists_free(splat_ref_lists *lists)
{
    if (!lists) return;
    splat__free(lists->offsets);
    splat__free(lists->ids);
    splat__free(lists->border_tile);
    splat__free(lists->border_id);
    memset(lists, 0, sizeof *lists);
}

int splat__ref_gsplat_box(const splat_ref_proj *p, uint32_t width, uint32_t height, double *margin)
{
    if (margin) *margin = INFINITY;
    if (!p->projected) return 0;
    double e = fmin(3.33, sqrt(2 * log(p->opacity / SPLAT_REF_ALPHA_MIN)));
    double half[2], size[2] = {width, height};
    int in = 1;
    for (int k = 0; k < 2; k++) {
        double x = e * sqrt(p->cov2d[2 * k]); /* a for x, c for y */
        half[k] = ceil(x);
        double lo = p->mean2d[k] + half[k], hi = size[k] - (p->mean2d[k] - half[k]);
        in = in && lo > 0 && hi > 0;
        /* the argument of ceil net of 1e-5 of it: float32's covariance may be that far off */
        if (margin) *margin = fmin(*margin, fmin(fabs(x - round(x)) - 1e-5 * x, fmin(fabs(lo), fabs(hi))));
    }
    return in;
}
