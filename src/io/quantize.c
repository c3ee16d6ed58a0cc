/* io: the codebooks of the palette formats (SOG): a 1-D quantiser (256 values fitted to the data
 * by weighted Lloyd's k-means) and a palette of vectors (bisecting k-means: the
 * cluster with the largest squared error is split across its principal axis until there are k).
 * Both are deterministic: the same data gives the same codebook, so a conversion is reproducible.
 * The 1-D values are spread over the occupied range rather than by density (see below). */
#include "io/quantize.h"

#include <stdlib.h>

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The index of the entry of codebook [k] (ascending) nearest v. */
static uint32_t nearest(const float *codebook, uint32_t k, float v)
{
    uint32_t lo = 0, hi = k - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (codebook[mid + 1] <= v) lo = mid + 1;
        else hi = mid;
    }
    /* codebook[lo] is the last entry <= v (or the first one); its right neighbour may be nearer */
    if (lo + 1 < k && fabs((double)codebook[lo + 1] - v) < fabs((double)codebook[lo] - v)) lo++;
    else if (lo > 0 && codebook[lo] > v && fabs((double)codebook[lo - 1] - v) <= fabs((double)codebook[lo] - v)) lo--;
    return lo;
}

splat_status splat__quantize_1d(const float *values, size_t n, uint32_t k, float *codebook, uint8_t *labels,
                                splat_error *err)
{
    SPLAT_ASSERT(k >= 1 && k <= 256);
    if (n == 0) {
        for (uint32_t j = 0; j < k; j++) codebook[j] = 0.0f;
        return SPLAT_OK;
    }
    float *sorted = splat__malloc(n * sizeof *sorted);
    double *prefix = splat__malloc((n + 1) * sizeof *prefix), *prefix_w = splat__malloc((n + 1) * sizeof *prefix_w);
    double *c = splat__malloc(k * sizeof *c);
    splat_status st = SPLAT_OK;
    if (!sorted || !prefix || !prefix_w || !c) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "quantiser: out of host memory");
        goto done;
    }
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_float);
    /* few distinct values: they are the codebook, and nothing is lost */
    uint32_t distinct = 0;
    for (size_t i = 0; i < n && distinct <= k; i++)
        if (i == 0 || sorted[i] != sorted[i - 1]) distinct++;
    if (distinct <= k) {
        uint32_t j = 0;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || sorted[i] != sorted[i - 1]) codebook[j++] = sorted[i];
        for (; j < k; j++) codebook[j] = codebook[j - 1];
    } else {
        /* Lloyd's iterations with each value weighted by the spread of its neighbourhood (the
         * inverse of the local density): plain k-means puts its values where the data is dense
         * and leaves the tails (the few huge Gaussians, the saturated colours) far from any value,
         * and on the demo scene that cost 0.75 dB through the log-scales alone; weighted so, the
         * values spread evenly over the range the data occupies (gaps left out), and the same
         * scene loses nothing measurable. */
        const size_t m = SPLAT_MAX((size_t)1, n / 4096);
        const double range = (double)sorted[n - 1] - sorted[0];
        prefix_w[0] = 0, prefix[0] = 0;
        for (size_t i = 0; i < n; i++) {
            double spread = (double)sorted[SPLAT_MIN(i + m, n - 1)] - sorted[i >= m ? i - m : 0];
            double w = spread + 1e-9 * range;
            prefix_w[i + 1] = prefix_w[i] + w;
            prefix[i + 1] = prefix[i] + w * sorted[i];
        }
        /* start at the weighted quantiles */
        for (uint32_t j = 0, i = 0; j < k; j++) {
            double target = (2.0 * j + 1) / (2.0 * k) * prefix_w[n];
            while (i + 1 < n && prefix_w[i + 1] < target) i++;
            c[j] = sorted[i];
        }
        for (int iter = 0; iter < 60; iter++) {
            bool moved = false;
            size_t start = 0;
            for (uint32_t j = 0; j < k; j++) {
                /* the values nearer c[j] than c[j+1]: up to the midpoint */
                size_t end = n;
                if (j + 1 < k) {
                    double mid = 0.5 * (c[j] + c[j + 1]);
                    size_t lo = start, hi = n;
                    while (lo < hi) {
                        size_t q = (lo + hi) / 2;
                        if (sorted[q] < mid) lo = q + 1;
                        else hi = q;
                    }
                    end = lo;
                }
                if (end > start && prefix_w[end] > prefix_w[start]) {
                    double mean = (prefix[end] - prefix[start]) / (prefix_w[end] - prefix_w[start]);
                    moved = moved || mean != c[j];
                    c[j] = mean;
                }
                start = end;
            }
            if (!moved) break;
        }
        for (uint32_t j = 0; j < k; j++) codebook[j] = (float)c[j];
        qsort(codebook, k, sizeof *codebook, cmp_float);
    }
    if (labels)
        for (size_t i = 0; i < n; i++) labels[i] = (uint8_t)nearest(codebook, k, values[i]);
done:
    splat__free(sorted), splat__free(prefix), splat__free(prefix_w), splat__free(c);
    return st;
}

uint8_t splat__quantize_label(const float *codebook, uint32_t k, float v) { return (uint8_t)nearest(codebook, k, v); }

/* ------------------------------------------------------------------ the vector palette */

typedef struct cluster {
    uint32_t start, n;       /* rows order[start, start + n) */
    double sse;
} cluster;

/* The cluster's mean and squared error. */
static double stats(const float *x, uint32_t d, const uint32_t *rows, uint32_t n, double *mean)
{
    for (uint32_t j = 0; j < d; j++) mean[j] = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < d; j++) mean[j] += x[(size_t)rows[i] * d + j];
    for (uint32_t j = 0; j < d; j++) mean[j] /= n;
    double sse = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < d; j++) {
            double t = x[(size_t)rows[i] * d + j] - mean[j];
            sse += t * t;
        }
    return sse;
}

/* Splits rows [n] in place across the principal axis through the mean (power iteration from the
 * axis of largest variance); returns how many went first, 0 when the rows cannot be split. */
static uint32_t split(const float *x, uint32_t d, uint32_t *rows, uint32_t n, const double *mean, double *v, double *w)
{
    uint32_t axis = 0;
    double best = -1;
    for (uint32_t j = 0; j < d; j++) {
        double var = 0;
        for (uint32_t i = 0; i < n; i++) {
            double t = x[(size_t)rows[i] * d + j] - mean[j];
            var += t * t;
        }
        if (var > best) best = var, axis = j;
    }
    for (uint32_t j = 0; j < d; j++) v[j] = j == axis;
    for (int iter = 0; iter < 4; iter++) {
        for (uint32_t j = 0; j < d; j++) w[j] = 0;
        for (uint32_t i = 0; i < n; i++) {
            const float *p = x + (size_t)rows[i] * d;
            double dot = 0;
            for (uint32_t j = 0; j < d; j++) dot += (p[j] - mean[j]) * v[j];
            for (uint32_t j = 0; j < d; j++) w[j] += (p[j] - mean[j]) * dot;
        }
        double norm = 0;
        for (uint32_t j = 0; j < d; j++) norm += w[j] * w[j];
        if (!(norm > 0)) break;
        norm = sqrt(norm);
        for (uint32_t j = 0; j < d; j++) v[j] = w[j] / norm;
    }
    uint32_t a = 0, b = n;
    while (a < b) {
        const float *p = x + (size_t)rows[a] * d;
        double dot = 0;
        for (uint32_t j = 0; j < d; j++) dot += (p[j] - mean[j]) * v[j];
        if (dot < 0) a++;
        else {
            uint32_t t = rows[a];
            rows[a] = rows[--b], rows[b] = t;
        }
    }
    return a == n ? 0 : a;
}

/* A max-heap of clusters by squared error. */
static void heap_push(cluster *h, uint32_t *n, cluster c)
{
    uint32_t i = (*n)++;
    h[i] = c;
    while (i > 0 && h[(i - 1) / 2].sse < h[i].sse) {
        cluster t = h[i];
        h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static cluster heap_pop(cluster *h, uint32_t *n)
{
    cluster top = h[0];
    h[0] = h[--(*n)];
    for (uint32_t i = 0;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l].sse > h[m].sse) m = l;
        if (r < *n && h[r].sse > h[m].sse) m = r;
        if (m == i) break;
        cluster t = h[i];
        h[i] = h[m], h[m] = t;
        i = m;
    }
    return top;
}

splat_status splat__palette(const float *x, uint32_t n, uint32_t d, uint32_t k, float *centroids, uint32_t *labels,
                            uint32_t *k_out, splat_error *err)
{
    SPLAT_ASSERT(k >= 1 && d >= 1);
    uint32_t *rows = splat__malloc(((size_t)n + 1) * sizeof *rows);
    cluster *heap = splat__malloc(((size_t)k + 1) * sizeof *heap), *done = splat__malloc(((size_t)k + 1) * sizeof *done);
    double *mean = splat__malloc(3 * (size_t)d * sizeof *mean);
    if (!rows || !heap || !done || !mean) {
        splat__free(rows), splat__free(heap), splat__free(done), splat__free(mean);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "palette: out of host memory");
    }
    for (uint32_t i = 0; i < n; i++) rows[i] = i;
    uint32_t n_heap = 0, n_done = 0;
    if (n > 0) heap_push(heap, &n_heap, (cluster){0, n, stats(x, d, rows, n, mean)});
    while (n_heap > 0 && n_heap + n_done < k) {
        cluster c = heap_pop(heap, &n_heap);
        uint32_t first = 0;
        if (c.sse > 0 && c.n > 1) {
            stats(x, d, rows + c.start, c.n, mean);
            first = split(x, d, rows + c.start, c.n, mean, mean + d, mean + 2 * (size_t)d);
        }
        if (first == 0) { /* one row, or identical ones */
            done[n_done++] = c;
            continue;
        }
        cluster a = {c.start, first, 0}, b = {c.start + first, c.n - first, 0};
        a.sse = stats(x, d, rows + a.start, a.n, mean);
        b.sse = stats(x, d, rows + b.start, b.n, mean);
        heap_push(heap, &n_heap, a);
        heap_push(heap, &n_heap, b);
    }
    while (n_heap > 0) done[n_done++] = heap_pop(heap, &n_heap);
    for (uint32_t j = 0; j < n_done; j++) {
        const cluster *c = &done[j];
        stats(x, d, rows + c->start, c->n, mean);
        for (uint32_t q = 0; q < d; q++) centroids[(size_t)j * d + q] = (float)mean[q];
        for (uint32_t i = 0; i < c->n; i++) labels[rows[c->start + i]] = j;
    }
    *k_out = n_done;
    splat__free(rows), splat__free(heap), splat__free(done), splat__free(mean);
    return SPLAT_OK;
}
