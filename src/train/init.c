/* train/init.c: the initial Gaussians (docs/TRAIN.md, "Initialisation"). The scales need the 3
 * nearest other points of every point; a k-d tree (median splits on the widest axis of the cell,
 * points stored in tree order, leaves of up to LEAF points) answers them in O(n log n) and,
 * unlike a uniform grid, stays fast on the clustered clouds SfM produces. (Measured on one core:
 * bottom-up searches with tight node boxes, and one traversal shared by a leaf's points, were
 * both slower than this plain depth-first search.) */
#include <stdlib.h>

#include "train/init.h"

#define K 3      /* neighbours */
#define LEAF 8   /* most points in a leaf (8 to 24 measure the same) */

/* An implicit tree in heap order (children of node v: 2v + 1, 2v + 2); node v over tree positions
 * [lo, hi) is a leaf when hi - lo <= LEAF, else it is split at mid = lo + (hi - lo) / 2 on `axis`:
 * positions before mid hold coordinates <= split, those from mid on >= split. */
typedef struct kdtree {
    uint32_t n;
    float (*pts)[3];         /* [n][3] the points in tree order */
    uint32_t *idx;           /* [n] input index of each tree position */
    float *split;            /* [nodes] split coordinate of each internal node */
    uint8_t *axis;           /* [nodes] its axis */
} kdtree;

static void swap_pts(kdtree *t, int64_t a, int64_t b)
{
    float p[3];
    memcpy(p, t->pts[a], sizeof p);
    memcpy(t->pts[a], t->pts[b], sizeof p);
    memcpy(t->pts[b], p, sizeof p);
    uint32_t i = t->idx[a];
    t->idx[a] = t->idx[b];
    t->idx[b] = i;
}

static float median3(float a, float b, float c)
{
    if (a > b) {
        float s = a;
        a = b, b = s;
    }
    return c < a ? a : c > b ? b : c;
}

/* Reorders tree positions [lo, hi) so that position k holds the value it would hold sorted by
 * `axis`, with no greater value before it and no smaller one after (Hoare partitions with a
 * median-of-three pivot; runs of equal values split evenly). */
static void select_kth(kdtree *t, uint32_t lo, uint32_t hi, uint32_t k, int axis)
{
    int64_t l = lo, r = (int64_t)hi - 1;
    while (l < r) {
        float x = median3(t->pts[l][axis], t->pts[k][axis], t->pts[r][axis]);
        int64_t i = l, j = r;
        do {
            while (t->pts[i][axis] < x) i++;
            while (x < t->pts[j][axis]) j--;
            if (i <= j) swap_pts(t, i++, j--);
        } while (i <= j);
        if (j < (int64_t)k) l = i;
        if ((int64_t)k < i) r = j;
    }
}

/* Splits on the widest axis of the node's cell, box [6] (min xyz, max xyz): the bounds of all
 * points cut at the ancestors' splits, which costs no pass over the points. */
static void build(kdtree *t, uint32_t node, uint32_t lo, uint32_t hi, const float box[6])
{
    if (hi - lo <= LEAF) return;
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if ((double)box[3 + a] - box[a] > (double)box[3 + axis] - box[axis]) axis = a;
    uint32_t mid = lo + (hi - lo) / 2;
    select_kth(t, lo, hi, mid, axis);
    float split = t->pts[mid][axis], sub[6];
    t->split[node] = split;
    t->axis[node] = (uint8_t)axis;
    memcpy(sub, box, sizeof sub);
    sub[3 + axis] = split;
    build(t, 2 * node + 1, lo, mid, sub);
    sub[3 + axis] = box[3 + axis], sub[axis] = split;
    build(t, 2 * node + 2, mid, hi, sub);
}

/* The k (<= K) smallest squared distances from the point at tree position `self` to the others,
 * ascending in best[0..k) (HUGE_VAL where fewer exist); with `positive`, only points at a
 * positive distance count. */
typedef struct query {
    const kdtree *t;
    double q[3];
    uint32_t self, k;
    bool positive;
    double best[K];
} query;

/* Depth first, near child first. off [3]: per axis, the distance from q to the node's cell (0
 * inside); rd: their squared sum, a lower bound on the distance to every point of the node
 * (Arya and Mount's incremental distance, tighter than the last split plane alone). */
static void search(query *s, uint32_t node, uint32_t lo, uint32_t hi, double rd, double off[3])
{
    const kdtree *t = s->t;
    if (hi - lo <= LEAF) {
        for (uint32_t j = lo; j < hi; j++) {
            double dx = t->pts[j][0] - s->q[0], dy = t->pts[j][1] - s->q[1], dz = t->pts[j][2] - s->q[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (!(d2 < s->best[s->k - 1]) || j == s->self || (s->positive && d2 == 0)) continue;
            uint32_t m = s->k - 1;
            while (m > 0 && s->best[m - 1] > d2) {
                s->best[m] = s->best[m - 1];
                m--;
            }
            s->best[m] = d2;
        }
        return;
    }
    uint32_t mid = lo + (hi - lo) / 2;
    int axis = t->axis[node];
    double diff = s->q[axis] - t->split[node];
    /* Left points are <= split and right ones >= split, so the far cell is |diff| away on the
     * axis (at least). */
    if (diff < 0) search(s, 2 * node + 1, lo, mid, rd, off);
    else search(s, 2 * node + 2, mid, hi, rd, off);
    double old = off[axis], far_rd = rd - old * old + diff * diff;
    if (!(far_rd < s->best[s->k - 1])) return;
    off[axis] = diff;
    if (diff < 0) search(s, 2 * node + 2, mid, hi, far_rd, off);
    else search(s, 2 * node + 1, lo, mid, far_rd, off);
    off[axis] = old;
}

static void knn(const kdtree *t, uint32_t self, uint32_t k, bool positive, double best[K])
{
    query s = {.t = t, .self = self, .k = k, .positive = positive};
    for (int a = 0; a < 3; a++) s.q[a] = t->pts[self][a];
    for (int m = 0; m < K; m++) s.best[m] = HUGE_VAL;
    double off[3] = {0, 0, 0};
    search(&s, 0, 0, t->n, 0, off);
    memcpy(best, s.best, sizeof s.best);
}

/* A point whose nearest neighbours all coincide with it, for grouping such points. */
typedef struct dup {
    float p[3];
    uint32_t pos;            /* tree position */
} dup;

static int cmp_dup(const void *a, const void *b)
{
    const float *p = ((const dup *)a)->p, *q = ((const dup *)b)->p;
    for (int k = 0; k < 3; k++)
        if (p[k] != q[k]) return p[k] < q[k] ? -1 : 1;
    return 0;
}

/* log_scales[i*3 + 0..2] for the n points of scene->means (scene->count == n). */
static splat_status knn_log_scales(splat_scene *scene, uint32_t n, splat_error *err)
{
    splat_status st = SPLAT_OK;
    kdtree t = {.n = n};
    double *sum = NULL;      /* [n] by input index: sum of the positive squared distances */
    uint8_t *zeros = NULL;   /* [n] by input index: how many of the k distances are 0 */
    dup *dups = NULL;
    uint32_t k = SPLAT_MIN(n - 1, K), depth = 0;
    for (uint32_t s = n; s > LEAF; s -= s / 2) depth++; /* the largest node halves each level */
    size_t nodes = ((size_t)1 << depth) - 1;           /* internal nodes lie above `depth` */
    t.pts = splat__malloc(sizeof *t.pts * n);
    t.idx = splat__malloc(sizeof *t.idx * n);
    t.split = splat__malloc(sizeof *t.split * (nodes ? nodes : 1));
    t.axis = splat__malloc(nodes ? nodes : 1);
    sum = splat__malloc(sizeof *sum * n);
    zeros = splat__malloc(n);
    if (!t.pts || !t.idx || !t.split || !t.axis || !sum || !zeros) goto oom;

    memcpy(t.pts, scene->means, sizeof *t.pts * n);
    for (uint32_t i = 0; i < n; i++) t.idx[i] = i;
    float box[6];
    for (int a = 0; a < 3; a++) box[a] = box[3 + a] = t.pts[0][a];
    for (uint32_t j = 1; j < n; j++)
        for (int a = 0; a < 3; a++) {
            if (t.pts[j][a] < box[a]) box[a] = t.pts[j][a];
            if (t.pts[j][a] > box[3 + a]) box[3 + a] = t.pts[j][a];
        }
    build(&t, 0, 0, n, box);

    /* Queries in tree order (neighbouring queries touch the same nodes). dmin2: the smallest
     * positive squared distance between two points; a point's smallest positive neighbour
     * distance is the first positive one of its list, unless the list is all zeros. */
    double dmin2 = HUGE_VAL;
    uint32_t n_dups = 0;
    for (uint32_t p = 0; p < n && k > 0; p++) {
        double best[K], s = 0;
        knn(&t, p, k, false, best);
        uint8_t z = 0;
        for (uint32_t m = 0; m < k; m++) {
            if (best[m] == 0) {
                z++;
                continue;
            }
            if (m == z) dmin2 = fmin(dmin2, best[m]); /* the first positive one */
            s += best[m];
        }
        sum[t.idx[p]] = s;
        zeros[t.idx[p]] = z;
        n_dups += z == k;
    }
    /* Points whose k neighbours all coincide with them: one positive-only query per distinct
     * position (a group of m coincident points costs O(m) once, not O(m^2)). */
    if (n_dups > 0) {
        dups = splat__malloc(sizeof *dups * n_dups);
        if (!dups) goto oom;
        uint32_t d = 0;
        for (uint32_t p = 0; p < n; p++)
            if (zeros[t.idx[p]] == k) {
                memcpy(dups[d].p, t.pts[p], sizeof dups[d].p);
                dups[d++].pos = p;
            }
        qsort(dups, n_dups, sizeof *dups, cmp_dup);
        for (uint32_t m = 0; m < n_dups; m++) {
            if (m > 0 && cmp_dup(&dups[m - 1], &dups[m]) == 0) continue;
            double best[K];
            knn(&t, dups[m].pos, 1, true, best);
            dmin2 = fmin(dmin2, best[0]);
        }
    }

    for (uint32_t i = 0; i < n; i++) {
        double ls = log(SPLAT_INIT_DEFAULT_SCALE);
        if (k > 0 && dmin2 < HUGE_VAL) ls = 0.5 * log((sum[i] + zeros[i] * dmin2) / k);
        for (int a = 0; a < 3; a++) scene->log_scales[(size_t)i * 3 + a] = (float)ls;
    }
    goto done;

oom:
    st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "initialisation: out of host memory for the "
                     "nearest neighbours of %u points", n);
done:
    splat__free(t.pts);
    splat__free(t.idx);
    splat__free(t.split);
    splat__free(t.axis);
    splat__free(sum);
    splat__free(zeros);
    splat__free(dups);
    return st;
}

/* Everything but the means, SH DC and the scales. */
static void init_rest(splat_scene *scene, uint32_t n)
{
    const float opacity = (float)log(0.1 / 0.9);
    for (uint32_t i = 0; i < n; i++) {
        float *q = scene->quats + (size_t)i * 4;
        q[0] = 1, q[1] = 0, q[2] = 0, q[3] = 0;
        scene->opacities[i] = opacity;
    }
    scene->count = n;
    scene->sh_degree = 3;
}

void splat__init_quats_random(splat_scene *scene, uint64_t seed)
{
    splat_rng rng;
    splat__rng_seed(&rng, seed);
    for (size_t i = 0; i < 4 * (size_t)scene->count; i++) scene->quats[i] = (float)splat__rng_uniform(&rng);
}

splat_status splat__init_from_points(splat_scene *scene, const float *points, const uint8_t *colors, uint32_t n,
                                     splat_error *err)
{
    SPLAT_ASSERT(scene && (n == 0 || points));
    memset(scene, 0, sizeof *scene);
    if (n == 0) return splat__fail(err, SPLAT_ERR_INVALID_ARG, "initialisation: no points");
    for (size_t k = 0; k < (size_t)n * 3; k++)
        if (!isfinite(points[k]))
            return splat__fail(err, SPLAT_ERR_NONFINITE, "initialisation: point %zu has a non-finite coordinate",
                               k / 3);
    splat_status st = splat__scene_init(scene, n, err);
    if (st != SPLAT_OK) return st;
    memcpy(scene->means, points, sizeof(float) * 3 * n);
    memset(scene->sh, 0, sizeof(float) * SPLAT_SH_COEFFS * 3 * n);
    if (colors)
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++)
                scene->sh[i * SPLAT_SH_COEFFS * 3 + c] = (float)((colors[i * 3 + c] / 255.0 - 0.5) / SPLAT_SH_C0);
    init_rest(scene, n);
    st = knn_log_scales(scene, n, err);
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}

splat_status splat__init_random(splat_scene *scene, uint32_t n, const double centre[3], double half_extent,
                                uint64_t seed, splat_error *err)
{
    SPLAT_ASSERT(scene);
    memset(scene, 0, sizeof *scene);
    if (n == 0) return splat__fail(err, SPLAT_ERR_INVALID_ARG, "random initialisation: no points");
    if (!(isfinite(half_extent) && half_extent > 0))
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "random initialisation: half extent %g is not positive",
                           half_extent);
    splat_status st = splat__scene_init(scene, n, err);
    if (st != SPLAT_OK) return st;
    memset(scene->sh, 0, sizeof(float) * SPLAT_SH_COEFFS * 3 * n);
    splat_rng rng;
    splat__rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++)
            scene->means[i * 3 + a] = (float)((centre ? centre[a] : 0) + half_extent * (2 * splat__rng_uniform(&rng) - 1));
        for (int c = 0; c < 3; c++)
            scene->sh[i * SPLAT_SH_COEFFS * 3 + c] = (float)((splat__rng_uniform(&rng) - 0.5) / SPLAT_SH_C0);
    }
    init_rest(scene, n);
    st = knn_log_scales(scene, n, err);
    if (st != SPLAT_OK) splat__scene_free(scene);
    return st;
}
