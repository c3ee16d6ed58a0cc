/* Throughput of the device radix sort (key-value pairs, 32-bit values) and of the prefix scan.
 * Prints one table row per case: 32-bit keys, 48-bit keys (16 tile + 32 depth bits, the 3DGS
 * case) and the exclusive scan, at 1M, 10M and 50M elements by default. Each case is recorded
 * once and replayed; the inputs are restored from pristine copies before every replay (a sort
 * of sorted keys writes perfectly coalesced and would flatter the numbers) and only the sort
 * is timed, with GPU timestamps (wall clock where the device has none). Median of the reps.
 * The results are checked once per case (sorted, stable, a permutation of the input).
 *
 *   bench_sort [--sizes 1,10,50] [--reps 20] [--bits 32,48] [--no-scan] [--breakdown]
 *              [--sort-wg 256] [--sort-kpt 16] [--scan-wg 256] [--scan-kpt 16]
 *
 * --breakdown adds the time of each step of the sort (summed over its passes). --sort-wg,
 * --sort-kpt, --scan-wg and --scan-kpt override the tile shapes (splat_sorter_desc) for tuning.
 *
 * Peer: bench/sort_torch.py times torch.sort (CUB radix sort) on the same sizes. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/gpu.h"
#include "sort/sort.h"

#define MAX_LIST 16

static int parse_list(const char *s, double *out)
{
    int n = 0;
    while (*s && n < MAX_LIST) {
        char *end;
        out[n++] = strtod(s, &end);
        if (end == s) return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench {
    splat_gpu *g;
    splat_sorter s;
    splat_stream st;
    splat_prof prof;
    bool timestamps, breakdown;
    int reps;
} bench;

/* Time per mark label (the sort marks its steps), summed over the reps. */
typedef struct breakdown {
    const char *label[16];
    double ms[16];
    int n;
} breakdown;

static void breakdown_add(breakdown *bd, const char *label, double ms)
{
    int i = 0;
    while (i < bd->n && strcmp(bd->label[i], label) != 0) i++;
    if (i == bd->n) {
        if (bd->n == 16) return;
        bd->label[bd->n++] = label;
        bd->ms[i] = 0;
    }
    bd->ms[i] += ms;
}

/* Replays `rec` (warm-up for at least 2 s and twice, so the GPU is at its working clocks, then
 * reps times) and returns the median milliseconds from the mark "start" (index 1) to the last
 * mark, or of the whole replay by wall clock. */
static splat_status time_rec(bench *b, const splat_rec *rec, double *median_ms, breakdown *bd, splat_error *err)
{
    double t[256];
    memset(bd, 0, sizeof *bd);
    int reps = b->reps < 256 ? b->reps : 256;
    int warm = 0;
    for (double w0 = splat__now(); warm < 2 || splat__now() - w0 < 2.0; warm++) {
        uint64_t v;
        splat_status st = splat__stream_replay(&b->st, rec, &v, err);
        if (st == SPLAT_OK) st = splat__stream_wait(&b->st, v, err);
        if (st != SPLAT_OK) return st;
    }
    for (int i = 0; i < reps; i++) {
        uint64_t v;
        double t0 = splat__now();
        splat_status st = splat__stream_replay(&b->st, rec, &v, err);
        if (st == SPLAT_OK) st = splat__stream_wait(&b->st, v, err);
        if (st != SPLAT_OK) return st;
        double wall = (splat__now() - t0) * 1e3;
        if (b->timestamps) {
            double ms[SPLAT_PROF_MAX];
            st = splat__prof_read(b->g, &b->prof, ms, err);
            if (st != SPLAT_OK) return st;
            t[i] = 0;
            for (uint32_t m = 1; m + 1 < b->prof.n; m++) {
                t[i] += ms[m];
                breakdown_add(bd, b->prof.labels[m + 1], ms[m] / reps);
            }
        } else {
            t[i] = wall;
        }
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    *median_ms = t[reps / 2];
    return SPLAT_OK;
}

static uint64_t masked(const uint32_t *lo, const uint32_t *hi, uint32_t i, uint32_t bits)
{
    uint64_t k = ((uint64_t)(hi ? hi[i] : 0) << 32) | lo[i];
    return bits >= 64 ? k : k & ((1ull << bits) - 1);
}

/* Sorted by the masked key, stable (values are input positions), and each pair is an input pair. */
static bool verify_sort(const uint32_t *lo0, const uint32_t *hi0, const uint32_t *lo, const uint32_t *hi, const uint32_t *val,
                        uint32_t n, uint32_t bits)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = val[i];
        if (j >= n || lo[i] != lo0[j] || (hi && hi[i] != hi0[j])) return false;
        if (i > 0) {
            uint64_t a = masked(lo, hi, i - 1, bits), c = masked(lo, hi, i, bits);
            if (a > c || (a == c && val[i - 1] >= j)) return false;
        }
    }
    return true;
}

static void bench_sort(bench *b, uint32_t n, uint32_t bits)
{
    splat_gpu *g = b->g;
    splat_error err = {0};
    uint32_t kw = bits > 32 ? 2 : 1;
    uint64_t bytes = 4ull * n;
    uint32_t *lo = malloc(bytes), *hi = kw == 2 ? malloc(bytes) : NULL, *val = malloc(bytes);
    uint32_t *got_lo = malloc(bytes), *got_hi = malloc(bytes), *got_val = malloc(bytes);
    splat_rng rng;
    splat__rng_seed(&rng, 42 + n + bits);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = splat__rng_u64(&rng);
        lo[i] = (uint32_t)r;
        if (hi) hi[i] = (uint32_t)(r >> 32) & (uint32_t)((1ull << (bits - 32)) - 1);
        val[i] = i;
    }
    splat_buf src[3], work[3], scratch;
    memset(src, 0, sizeof src);
    memset(work, 0, sizeof work);
    memset(&scratch, 0, sizeof scratch);
    splat_rec rec = {0};
    const uint32_t *host[3] = {lo, hi, val};
    splat_status st = SPLAT_OK;
    for (int i = 0; i < 3 && st == SPLAT_OK; i++) {
        if (!host[i]) continue;
        st = splat__buf_init(g, &src[i], "pristine", bytes, SPLAT_MEM_DEVICE, &err);
        if (st == SPLAT_OK) st = splat__buf_init(g, &work[i], "work", bytes, SPLAT_MEM_DEVICE, &err);
        if (st == SPLAT_OK) st = splat__buf_upload(g, &src[i], 0, host[i], bytes, &err);
    }
    if (st == SPLAT_OK)
        st = splat__buf_init(g, &scratch, "scratch", splat__sort_scratch_bound(&b->s, n, kw), SPLAT_MEM_DEVICE, &err);
    if (st == SPLAT_OK) st = splat__rec_begin(g, &rec, &err);
    if (st == SPLAT_OK) {
        splat_cmd *c = &rec.cmd;
        if (b->timestamps) splat__prof_begin(c, &b->prof);
        for (int i = 0; i < 3; i++)
            if (host[i]) splat__cmd_copy(c, SPLAT_VIEW(src[i]), SPLAT_VIEW(work[i]));
        splat__cmd_barrier(c);
        splat__cmd_mark(c, "start");
        splat__sort_record(c, &b->s,
                           &(splat_sort_args){.key_words = kw, .bits = bits, .max_count = n,
                                              .keys = SPLAT_VIEW(work[0]), .keys_hi = kw == 2 ? SPLAT_VIEW(work[1]) : (splat_view){0},
                                              .values = SPLAT_VIEW(work[2]), .scratch = SPLAT_VIEW(scratch)});
        splat__cmd_mark(c, "end");
        st = splat__rec_end(&rec, &err);
    }
    double ms = 0;
    breakdown bd;
    if (st == SPLAT_OK) st = time_rec(b, &rec, &ms, &bd, &err);
    bool ok = false;
    if (st == SPLAT_OK) {
        st = splat__buf_download(g, &work[0], 0, got_lo, bytes, &err);
        if (st == SPLAT_OK && kw == 2) st = splat__buf_download(g, &work[1], 0, got_hi, bytes, &err);
        if (st == SPLAT_OK) st = splat__buf_download(g, &work[2], 0, got_val, bytes, &err);
        ok = st == SPLAT_OK && verify_sort(lo, hi, got_lo, kw == 2 ? got_hi : NULL, got_val, n, bits);
    }
    if (st != SPLAT_OK)
        printf("sort  %4u  %9u  skipped: %s\n", bits, n, err.msg);
    else
        printf("sort  %4u  %9u  %9.3f  %9.4g  %s\n", bits, n, ms, n / ms * 1e-6, ok ? "ok" : "WRONG");
    if (st == SPLAT_OK && b->breakdown) {
        printf("      ");
        for (int i = 0; i < bd.n; i++) printf("  %s %.3f", bd.label[i], bd.ms[i]);
        printf(" (ms, all passes)\n");
    }
    fflush(stdout);
    splat__rec_free(g, &rec);
    for (int i = 0; i < 3; i++) {
        splat__buf_free(g, &src[i]);
        splat__buf_free(g, &work[i]);
    }
    splat__buf_free(g, &scratch);
    free(lo), free(hi), free(val), free(got_lo), free(got_hi), free(got_val);
}

static void bench_scan(bench *b, uint32_t n)
{
    splat_gpu *g = b->g;
    splat_error err = {0};
    uint64_t bytes = 4ull * n;
    uint32_t *x = malloc(bytes), *y = malloc(bytes);
    for (uint32_t i = 0; i < n; i++) x[i] = i % 7;
    splat_buf in, out, total, scratch;
    memset(&in, 0, sizeof in), memset(&out, 0, sizeof out), memset(&total, 0, sizeof total), memset(&scratch, 0, sizeof scratch);
    splat_rec rec = {0};
    splat_status st = splat__buf_init(g, &in, "in", bytes, SPLAT_MEM_DEVICE, &err);
    if (st == SPLAT_OK) st = splat__buf_init(g, &out, "out", bytes, SPLAT_MEM_DEVICE, &err);
    if (st == SPLAT_OK) st = splat__buf_init(g, &total, "total", 16, SPLAT_MEM_DEVICE, &err);
    if (st == SPLAT_OK) st = splat__buf_init(g, &scratch, "scratch", splat__scan_scratch_bound(&b->s, n), SPLAT_MEM_DEVICE, &err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &in, 0, x, bytes, &err);
    if (st == SPLAT_OK) st = splat__rec_begin(g, &rec, &err);
    if (st == SPLAT_OK) {
        splat_cmd *c = &rec.cmd;
        if (b->timestamps) splat__prof_begin(c, &b->prof);
        splat__cmd_mark(c, "start");
        splat__scan_record(c, &b->s,
                           &(splat_scan_args){.in = SPLAT_VIEW(in), .out = SPLAT_VIEW(out), .max_count = n,
                                              .total = SPLAT_VIEW_AT(total, 0, 4), .scratch = SPLAT_VIEW(scratch)});
        splat__cmd_mark(c, "end");
        st = splat__rec_end(&rec, &err);
    }
    double ms = 0;
    breakdown bd;
    if (st == SPLAT_OK) st = time_rec(b, &rec, &ms, &bd, &err);
    bool ok = false;
    if (st == SPLAT_OK) st = splat__buf_download(g, &out, 0, y, bytes, &err);
    if (st == SPLAT_OK) {
        uint32_t sum = 0;
        ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            ok = y[i] == sum;
            sum += x[i];
        }
    }
    if (st != SPLAT_OK)
        printf("scan  %4s  %9u  skipped: %s\n", "-", n, err.msg);
    else
        printf("scan  %4s  %9u  %9.3f  %9.4g  %s\n", "-", n, ms, n / ms * 1e-6, ok ? "ok" : "WRONG");
    fflush(stdout);
    splat__rec_free(g, &rec);
    splat__buf_free(g, &in);
    splat__buf_free(g, &out);
    splat__buf_free(g, &total);
    splat__buf_free(g, &scratch);
    free(x), free(y);
}

int main(int argc, char **argv)
{
    double sizes[MAX_LIST] = {1, 10, 50}, bits[MAX_LIST] = {32, 48};
    int n_sizes = 3, n_bits = 2;
    bool scan = true;
    bench b = {.reps = 20};
    splat_sorter_desc desc = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) n_sizes = parse_list(argv[++i], sizes);
        else if (strcmp(argv[i], "--bits") == 0 && i + 1 < argc) n_bits = parse_list(argv[++i], bits);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) b.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-scan") == 0) scan = false;
        else if (strcmp(argv[i], "--breakdown") == 0) b.breakdown = true;
        else if (strcmp(argv[i], "--sort-wg") == 0 && i + 1 < argc) desc.sort_group_size = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--sort-kpt") == 0 && i + 1 < argc) desc.sort_keys_per_thread = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--scan-wg") == 0 && i + 1 < argc) desc.scan_group_size = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--scan-kpt") == 0 && i + 1 < argc) desc.scan_items_per_thread = (uint32_t)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--sizes 1,10,50 (millions)] [--bits 32,48] [--reps 20] [--no-scan] [--breakdown]\n"
                            "       [--sort-wg N] [--sort-kpt N] [--scan-wg N] [--scan-kpt N]\n", argv[0]);
            return 2;
        }
    }
    if (n_sizes <= 0 || n_bits <= 0 || b.reps <= 0) {
        fprintf(stderr, "bad --sizes, --bits or --reps\n");
        return 2;
    }
    splat_error err = {0};
    if (splat__gpu_init(&b.g, NULL, &err) || splat__sorter_init(b.g, &b.s, &desc, &err) ||
        splat__stream_init(b.g, &b.st, &err)) {
        fprintf(stderr, "bench_sort: %s\n", err.msg);
        return 1;
    }
    b.timestamps = b.g->info.timestamps && splat__prof_init(b.g, &b.prof, &err) == SPLAT_OK;
    printf("device: %s (%s)\n", b.g->info.name, b.g->info.driver);
    printf("sort tile %u keys (%u invocations), scan block %u, subgroup %u, timing by %s, median of %d\n", b.s.sort_tile,
           b.s.sort_group_size, b.s.scan_block, b.g->info.subgroup_size, b.timestamps ? "GPU timestamps" : "wall clock",
           b.reps);
    printf("%-4s  %4s  %9s  %9s  %9s\n", "op", "bits", "count", "ms", "G/s");
    for (int i = 0; i < n_sizes; i++) {
        uint32_t n = (uint32_t)(sizes[i] * 1e6 + 0.5);
        for (int k = 0; k < n_bits; k++) bench_sort(&b, n, (uint32_t)bits[k]);
        if (scan) bench_scan(&b, n);
    }
    splat__prof_free(b.g, &b.prof);
    splat__stream_free(&b.st);
    splat__sorter_free(&b.s);
    splat__gpu_free(b.g);
    return 0;
}
