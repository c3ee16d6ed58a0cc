/* The device radix sort and prefix scan, against a CPU stable sort and a CPU scan. Values are
 * the input positions, so comparing values checks stability; elements past the count must be
 * left alone. */
#include "gpu_support.h"
#include "harness.h"
#include "sort/sort.h"

enum { PAT_RANDOM, PAT_EQUAL, PAT_SORTED, PAT_REVERSE, PAT_FEW };
static const char *const k_pattern_names[] = {"random", "equal", "sorted", "reverse", "few"};

static uint32_t rnd32(void) { return (uint32_t)splat__rng_u64(splat_test_rng()); }

static uint64_t bits_mask(uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

/* Keys of a pattern over the sorted bits; the bits above `bits` hold junk that must be carried
 * along but not sorted on. */
static void make_keys(int pattern, uint32_t n, uint32_t key_words, uint32_t bits, uint32_t *lo, uint32_t *hi)
{
    uint64_t m = bits_mask(bits), equal = splat__rng_u64(splat_test_rng()) & m;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k;
        switch (pattern) {
        case PAT_EQUAL: k = equal; break;
        case PAT_SORTED: k = (uint64_t)((double)i / n * (double)m); break;
        case PAT_REVERSE: k = (uint64_t)((double)(n - i) / n * (double)m); break;
        case PAT_FEW: k = (rnd32() % 5) * (m / 4); break;
        default: k = splat__rng_u64(splat_test_rng()); break;
        }
        k = (k & m) | (splat__rng_u64(splat_test_rng()) & ~m);
        if (key_words == 1) k &= 0xffffffffu;
        lo[i] = (uint32_t)k;
        if (hi) hi[i] = (uint32_t)(k >> 32);
    }
}

/* CPU reference: qsort of positions by (sorted bits, position): a stable sort by construction. */
static const uint32_t *g_ref_lo, *g_ref_hi;
static uint64_t g_ref_mask;

static uint64_t ref_key(uint32_t i)
{
    return (((uint64_t)(g_ref_hi ? g_ref_hi[i] : 0) << 32) | g_ref_lo[i]) & g_ref_mask;
}

static int cmp_ref(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    uint64_t ka = ref_key(a), kb = ref_key(b);
    if (ka != kb) return ka < kb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static uint32_t *ref_order(const uint32_t *lo, const uint32_t *hi, uint32_t bits, uint32_t n)
{
    uint32_t *idx = malloc(sizeof *idx * (n + 1));
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    g_ref_lo = lo, g_ref_hi = hi, g_ref_mask = bits_mask(bits);
    qsort(idx, n, sizeof *idx, cmp_ref);
    return idx;
}

typedef struct sort_run {
    uint32_t key_words, bits, count, max_count;
    int pattern;
    bool direct;                   /* no count buffer: the count is max_count */
} sort_run;

/* Sorts one input on the device and compares with the reference; false on a mismatch. */
static bool check_sort(const splat_sorter *s, splat_stream *st, const sort_run *r)
{
    splat_gpu *g = s->gpu;
    splat_error err = {0};
    uint32_t cap = r->max_count, n = SPLAT_MIN(r->count, cap), kw = r->key_words;
    uint32_t *lo = malloc(4ull * cap + 4), *hi = kw == 2 ? malloc(4ull * cap + 4) : NULL, *val = malloc(4ull * cap + 4);
    uint32_t *got_lo = malloc(4ull * cap + 4), *got_hi = malloc(4ull * cap + 4), *got_val = malloc(4ull * cap + 4);
    make_keys(r->pattern, cap, kw, r->bits, lo, hi);
    for (uint32_t i = 0; i < cap; i++) val[i] = i < n ? i : rnd32();
    splat_buf keys, keys_hi, vals, count, scratch;
    memset(&keys_hi, 0, sizeof keys_hi);
    bool ok = false;
    uint64_t scratch_bytes = splat__sort_scratch_bound(s, cap, kw);
    if (splat__buf_init(g, &keys, "keys", 4ull * cap, SPLAT_MEM_DEVICE, &err) ||
        (kw == 2 && splat__buf_init(g, &keys_hi, "keys_hi", 4ull * cap, SPLAT_MEM_DEVICE, &err)) ||
        splat__buf_init(g, &vals, "values", 4ull * cap, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_init(g, &count, "count", 16, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_init(g, &scratch, "scratch", scratch_bytes, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_upload(g, &keys, 0, lo, 4ull * cap, &err) ||
        (kw == 2 && splat__buf_upload(g, &keys_hi, 0, hi, 4ull * cap, &err)) ||
        splat__buf_upload(g, &vals, 0, val, 4ull * cap, &err) || splat__buf_upload(g, &count, 0, &r->count, 4, &err)) {
        splat_test_fail(__FILE__, __LINE__, "setup:", "%s", err.msg);
        goto done;
    }
    splat_cmd *c = splat__stream_cmd(st);
    splat__sort_record(c, s,
                       &(splat_sort_args){.key_words = kw, .bits = r->bits, .max_count = cap,
                                          .count = r->direct ? (splat_view){0} : SPLAT_VIEW_AT(count, 0, 4),
                                          .keys = SPLAT_VIEW(keys), .keys_hi = kw == 2 ? SPLAT_VIEW(keys_hi) : (splat_view){0},
                                          .values = SPLAT_VIEW(vals), .scratch = SPLAT_VIEW(scratch)});
    if (splat__stream_sync(st, SPLAT_SYNC_COMMIT_AND_WAIT, &err) || splat__buf_download(g, &keys, 0, got_lo, 4ull * cap, &err) ||
        (kw == 2 && splat__buf_download(g, &keys_hi, 0, got_hi, 4ull * cap, &err)) ||
        splat__buf_download(g, &vals, 0, got_val, 4ull * cap, &err)) {
        splat_test_fail(__FILE__, __LINE__, "sort:", "%s", err.msg);
        goto done;
    }
    uint32_t *idx = ref_order(lo, hi, r->bits, n);
    uint32_t bad = 0, first = UINT32_MAX;
    for (uint32_t i = 0; i < cap; i++) {
        uint32_t j = i < n ? idx[i] : i; /* past the count: unchanged */
        bool same = got_lo[i] == lo[j] && (kw == 1 || got_hi[i] == hi[j]) && got_val[i] == val[j];
        if (!same && bad++ == 0) first = i;
    }
    free(idx);
    ok = bad == 0;
    T_CHECK(ok, "%s keys, %u-bit of %u-bit, count %u of %u%s: %u wrong, first at %u (value %u)",
            k_pattern_names[r->pattern], r->bits, 32 * kw, r->count, cap, r->direct ? " (direct)" : "", bad, first,
            first < cap ? got_val[first] : 0);
done:
    splat__buf_free(g, &keys);
    splat__buf_free(g, &keys_hi);
    splat__buf_free(g, &vals);
    splat__buf_free(g, &count);
    splat__buf_free(g, &scratch);
    free(lo), free(hi), free(val), free(got_lo), free(got_hi), free(got_val);
    return ok;
}

typedef struct fixture {
    splat_gpu *g;
    splat_sorter s;
    splat_stream st;
} fixture;

static bool fixture_init(fixture *f, const splat_sorter_desc *desc)
{
    memset(f, 0, sizeof *f);
    f->g = t_gpu();
    if (!f->g) return false;
    splat_error err = {0};
    if (splat__sorter_init(f->g, &f->s, desc, &err) || splat__stream_init(f->g, &f->st, &err)) {
        splat_test_fail(__FILE__, __LINE__, "fixture:", "%s", err.msg);
        splat__sorter_free(&f->s);
        return false;
    }
    return true;
}

/* Whether this device takes a non-default sorter shape. One whose per-subgroup storage
 * exceeds the device's shared memory (many small subgroups) may be refused, as a limit naming
 * the memory; any other failure is left for fixture_init to report. */
static bool shape_fits(const splat_sorter_desc *desc)
{
    splat_gpu *g = t_gpu();
    if (!g) return true;
    splat_sorter probe;
    splat_error err = {0};
    splat_status st = splat__sorter_init(g, &probe, desc, &err);
    splat__sorter_free(&probe);
    if (st == SPLAT_ERR_LIMIT && strstr(err.msg, "shared memory")) {
        printf("shape refused by this device: %s\n", err.msg);
        return false;
    }
    return true;
}

static void fixture_free(fixture *f)
{
    splat__stream_free(&f->st);
    splat__sorter_free(&f->s);
}

/* Around the tile size (4096 by default) too. 1e6 is sort_large's. */
static const uint32_t k_counts[] = {0, 1, 2, 255, 256, 257, 4095, 4096, 4097, 100000};
/* For the second key width of a pattern (lavapipe takes ~0.1 s per sort whatever the size). */
static const uint32_t k_few_counts[] = {0, 1, 2, 257, 4097, 100000};

static void sort_counts_of(uint32_t key_words, uint32_t bits, int pattern, const uint32_t *counts, size_t n_counts)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    for (size_t i = 0; i < n_counts; i++) {
        uint32_t n = counts[i];
        /* Alternately a count buffer with spare capacity, and the whole capacity directly. */
        sort_run r = {key_words, bits, n, i % 2 ? n : n + (rnd32() % 3000), pattern, i % 2 == 1};
        if (!check_sort(&f.s, &f.st, &r)) break;
    }
    fixture_free(&f);
}

static void sort_counts(uint32_t key_words, uint32_t bits, int pattern)
{
    sort_counts_of(key_words, bits, pattern, k_counts, SPLAT_COUNTOF(k_counts));
}

static void sort_few_counts(uint32_t key_words, uint32_t bits, int pattern)
{
    sort_counts_of(key_words, bits, pattern, k_few_counts, SPLAT_COUNTOF(k_few_counts));
}

SPLAT_TEST(sort_random_32) { sort_counts(1, 32, PAT_RANDOM); }
SPLAT_TEST(sort_random_48) { sort_counts(2, 48, PAT_RANDOM); }
SPLAT_TEST(sort_random_64) { sort_few_counts(2, 64, PAT_RANDOM); }
SPLAT_TEST(sort_equal_keys) { sort_counts(1, 32, PAT_EQUAL); sort_few_counts(2, 48, PAT_EQUAL); }
SPLAT_TEST(sort_already_sorted) { sort_counts(1, 32, PAT_SORTED); sort_few_counts(2, 48, PAT_SORTED); }
SPLAT_TEST(sort_reverse_sorted) { sort_counts(1, 32, PAT_REVERSE); sort_few_counts(2, 48, PAT_REVERSE); }
SPLAT_TEST(sort_few_distinct) { sort_counts(1, 32, PAT_FEW); sort_few_counts(2, 45, PAT_FEW); }

/* Keys using only some bits: widths that split unevenly into digits, odd pass counts made
 * even, digits confined to one word, junk above the sorted bits. */
SPLAT_TEST(sort_some_bits)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    const uint32_t bits[][2] = {{1, 1}, {4, 1}, {8, 1}, {13, 1}, {17, 1}, {24, 1}, {31, 1},
                                {1, 2}, {20, 2}, {32, 2}, {33, 2}, {40, 2}, {45, 2}, {57, 2}};
    for (size_t i = 0; i < SPLAT_COUNTOF(bits); i++) {
        uint32_t n = 1 + rnd32() % 20000;
        sort_run r = {bits[i][1], bits[i][0], n, n + rnd32() % 100, i % 2 ? PAT_RANDOM : PAT_FEW, false};
        if (!check_sort(&f.s, &f.st, &r)) break;
    }
    fixture_free(&f);
}

/* 1e6 pairs; 5e7 as well where the device has the memory for it (a discrete GPU with a large
 * heap and a storage range that binds 200 MB arrays). */
SPLAT_TEST(sort_large)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    const splat_gpu_info *in = &f.g->info;
    bool ample = in->type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU && in->device_local_heap > (16ull << 30) &&
                 in->max_storage_range >= 4ull * 50000000;
    uint32_t counts[] = {1000000, 50000000};
    for (size_t i = 0; i < (ample ? 2u : 1u); i++) {
        sort_run r32 = {1, 32, counts[i], counts[i], PAT_RANDOM, false};
        sort_run r48 = {2, 48, counts[i], counts[i], PAT_RANDOM, true};
        if (!check_sort(&f.s, &f.st, &r32) || !check_sort(&f.s, &f.st, &r48)) break;
    }
    if (!ample) printf("5e7 pairs skipped: %s is not a discrete GPU with > 16 GiB and a 200 MB storage range\n", in->name);
    fixture_free(&f);
}

/* Other workgroup shapes: more or fewer subgroups per workgroup, tiles that are not powers of
 * two. */
SPLAT_TEST(sort_group_sizes)
{
    const splat_sorter_desc descs[] = {
        {.sort_group_size = 64, .sort_keys_per_thread = 3, .scan_group_size = 64, .scan_items_per_thread = 5},
        {.sort_group_size = 128, .sort_keys_per_thread = 7, .scan_group_size = 128, .scan_items_per_thread = 1},
        {.sort_group_size = 256, .sort_keys_per_thread = 4, .scan_group_size = 512, .scan_items_per_thread = 3},
    };
    for (size_t d = 0; d < SPLAT_COUNTOF(descs); d++) {
        if (!shape_fits(&descs[d])) {
            T_CHECK(d > 0, "the smallest shape (64 invocations) was refused");
            continue;
        }
        fixture f;
        if (!fixture_init(&f, &descs[d])) return;
        uint32_t counts[] = {1, 191, 192, 193, 30000 + rnd32() % 1000};
        for (size_t i = 0; i < SPLAT_COUNTOF(counts); i++) {
            sort_run r = {1 + (uint32_t)(i % 2), i % 2 ? 48 : 32, counts[i], counts[i] + 7, PAT_RANDOM, false};
            if (!check_sort(&f.s, &f.st, &r)) break;
        }
        fixture_free(&f);
    }
}

/* One recording replayed with different counts written on the device: nothing about the
 * count is baked in at record time. */
SPLAT_TEST(sort_indirect_replay)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    splat_gpu *g = f.g;
    splat_error err = {0};
    const uint32_t cap = 20000, kw = 2, bits = 40;
    uint32_t *lo = malloc(4 * cap), *hi = malloc(4 * cap), *val = malloc(4 * cap);
    uint32_t *got_lo = malloc(4 * cap), *got_hi = malloc(4 * cap), *got_val = malloc(4 * cap);
    splat_buf keys, keys_hi, vals, count, scratch;
    T_OK(splat__buf_init(g, &keys, "keys", 4 * cap, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_init(g, &keys_hi, "keys_hi", 4 * cap, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_init(g, &vals, "values", 4 * cap, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_init(g, &count, "count", 16, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_init(g, &scratch, "scratch", splat__sort_scratch_bound(&f.s, cap, kw), SPLAT_MEM_DEVICE, &err), &err);
    splat_rec rec;
    T_OK(splat__rec_begin(g, &rec, &err), &err);
    splat__sort_record(&rec.cmd, &f.s,
                       &(splat_sort_args){.key_words = kw, .bits = bits, .max_count = cap, .count = SPLAT_VIEW_AT(count, 0, 4),
                                          .keys = SPLAT_VIEW(keys), .keys_hi = SPLAT_VIEW(keys_hi),
                                          .values = SPLAT_VIEW(vals), .scratch = SPLAT_VIEW(scratch)});
    T_OK(splat__rec_end(&rec, &err), &err);
    const uint32_t counts[] = {cap / 2, 0, 1, 4097, cap, cap + 5000, 12345};
    for (size_t t = 0; t < SPLAT_COUNTOF(counts); t++) {
        uint32_t n = SPLAT_MIN(counts[t], cap);
        make_keys(PAT_RANDOM, cap, kw, bits, lo, hi);
        for (uint32_t i = 0; i < cap; i++) val[i] = i;
        T_OK(splat__buf_upload(g, &keys, 0, lo, 4 * cap, &err), &err);
        T_OK(splat__buf_upload(g, &keys_hi, 0, hi, 4 * cap, &err), &err);
        T_OK(splat__buf_upload(g, &vals, 0, val, 4 * cap, &err), &err);
        T_OK(splat__buf_upload(g, &count, 0, &counts[t], 4, &err), &err);
        uint64_t v;
        T_OK(splat__stream_replay(&f.st, &rec, &v, &err), &err);
        T_OK(splat__stream_wait(&f.st, v, &err), &err);
        T_OK(splat__buf_download(g, &keys, 0, got_lo, 4 * cap, &err), &err);
        T_OK(splat__buf_download(g, &keys_hi, 0, got_hi, 4 * cap, &err), &err);
        T_OK(splat__buf_download(g, &vals, 0, got_val, 4 * cap, &err), &err);
        uint32_t *idx = ref_order(lo, hi, bits, n), bad = 0;
        for (uint32_t i = 0; i < cap; i++) {
            uint32_t j = i < n ? idx[i] : i;
            bad += got_lo[i] != lo[j] || got_hi[i] != hi[j] || got_val[i] != val[j];
        }
        free(idx);
        T_CHECK(bad == 0, "replay with count %u: %u wrong", counts[t], bad);
    }
    splat__rec_free(g, &rec);
    splat__buf_free(g, &keys);
    splat__buf_free(g, &keys_hi);
    splat__buf_free(g, &vals);
    splat__buf_free(g, &count);
    splat__buf_free(g, &scratch);
    free(lo), free(hi), free(val), free(got_lo), free(got_hi), free(got_val);
    fixture_free(&f);
}

/* Broken preconditions are the command's error, with a message naming what is wrong. */
SPLAT_TEST(sort_bad_args)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    splat_gpu *g = f.g;
    splat_error err = {0};
    splat_buf a, small;
    T_OK(splat__buf_init(g, &a, "pairs", 4096, SPLAT_MEM_DEVICE, &err), &err);
    T_OK(splat__buf_init(g, &small, "small", 64, SPLAT_MEM_DEVICE, &err), &err);
    splat_sort_args good = {.key_words = 1, .bits = 32, .max_count = 1024, .keys = SPLAT_VIEW(a), .values = SPLAT_VIEW(a),
                            .scratch = SPLAT_VIEW(small)};
    struct {
        splat_sort_args args;
        const char *says;
    } bad[] = {
        {good, "scratch"},
        {good, "key_words"},
        {good, "bits"},
        {good, "keys"},
    };
    bad[1].args.key_words = 3;
    bad[2].args.bits = 33;
    bad[3].args.max_count = 2000;
    for (size_t i = 0; i < SPLAT_COUNTOF(bad); i++) {
        splat_cmd *c = splat__stream_cmd(&f.st);
        uint64_t before = c->dispatches;
        splat__sort_record(c, &f.s, &bad[i].args);
        T_CHECK(c->dispatches == before, "case %zu recorded dispatches", i);
        splat_status st = splat__stream_sync(&f.st, SPLAT_SYNC_COMMIT_AND_WAIT, &err);
        T_CHECK(st == SPLAT_ERR_INVALID_ARG, "case %zu: %s", i, splat_status_str(st));
        T_CHECK(strstr(err.msg, bad[i].says) != NULL, "case %zu: %s", i, err.msg);
        memset(&err, 0, sizeof err); /* the failed command is dropped; the stream goes on */
    }
    splat__buf_free(g, &a);
    splat__buf_free(g, &small);
    fixture_free(&f);
}

/* ------------------------------------------------------------------ scan */

typedef struct scan_run {
    uint32_t count, max_count;
    bool inclusive, in_place, direct, small_values;
} scan_run;

static bool check_scan(const splat_sorter *s, splat_stream *st, const scan_run *r)
{
    splat_gpu *g = s->gpu;
    splat_error err = {0};
    uint32_t cap = r->max_count, n = SPLAT_MIN(r->count, cap);
    uint32_t *x = malloc(4ull * cap + 4), *y0 = malloc(4ull * cap + 4), *got = malloc(4ull * cap + 4);
    for (uint32_t i = 0; i < cap; i++) {
        x[i] = r->small_values ? rnd32() % 64 : rnd32(); /* full range: the sums wrap */
        y0[i] = rnd32();
    }
    splat_buf in, out, count, total, scratch;
    memset(&out, 0, sizeof out);
    bool ok = false;
    if (splat__buf_init(g, &in, "in", 4ull * cap, SPLAT_MEM_DEVICE, &err) ||
        (!r->in_place && splat__buf_init(g, &out, "out", 4ull * cap, SPLAT_MEM_DEVICE, &err)) ||
        splat__buf_init(g, &count, "count", 16, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_init(g, &total, "total", 16, SPLAT_MEM_DEVICE, &err) ||
        splat__buf_init(g, &scratch, "scratch", splat__scan_scratch_bound(s, cap), SPLAT_MEM_DEVICE, &err) ||
        splat__buf_upload(g, &in, 0, x, 4ull * cap, &err) ||
        (!r->in_place && splat__buf_upload(g, &out, 0, y0, 4ull * cap, &err)) ||
        splat__buf_upload(g, &count, 0, &r->count, 4, &err) ||
        splat__buf_upload(g, &total, 0, (uint32_t[]){0xdeadbeef}, 4, &err)) {
        splat_test_fail(__FILE__, __LINE__, "setup:", "%s", err.msg);
        goto done;
    }
    const splat_buf *ob = r->in_place ? &in : &out;
    splat__scan_record(splat__stream_cmd(st), s,
                       &(splat_scan_args){.in = SPLAT_VIEW(in), .out = SPLAT_VIEW(*ob), .max_count = cap,
                                          .count = r->direct ? (splat_view){0} : SPLAT_VIEW_AT(count, 0, 4),
                                          .inclusive = r->inclusive, .total = SPLAT_VIEW_AT(total, 0, 4),
                                          .scratch = SPLAT_VIEW(scratch)});
    uint32_t got_total = 0;
    if (splat__stream_sync(st, SPLAT_SYNC_COMMIT_AND_WAIT, &err) || splat__buf_download(g, ob, 0, got, 4ull * cap, &err) ||
        splat__buf_download(g, &total, 0, &got_total, 4, &err)) {
        splat_test_fail(__FILE__, __LINE__, "scan:", "%s", err.msg);
        goto done;
    }
    uint32_t sum = 0, bad = 0, first = UINT32_MAX;
    for (uint32_t i = 0; i < cap; i++) {
        uint32_t want;
        if (i < n) {
            want = r->inclusive ? sum + x[i] : sum;
            sum += x[i];
        } else {
            want = r->in_place ? x[i] : y0[i];
        }
        if (got[i] != want && bad++ == 0) first = i;
    }
    ok = bad == 0 && got_total == sum;
    T_CHECK(ok, "%s scan of %u of %u%s%s: %u wrong (first at %u), total %u expected %u",
            r->inclusive ? "inclusive" : "exclusive", r->count, cap, r->in_place ? " in place" : "",
            r->direct ? " (direct)" : "", bad, first, got_total, sum);
done:
    splat__buf_free(g, &in);
    splat__buf_free(g, &out);
    splat__buf_free(g, &count);
    splat__buf_free(g, &total);
    splat__buf_free(g, &scratch);
    free(x), free(y0), free(got);
    return ok;
}

static const uint32_t k_scan_counts[] = {0, 1, 2, 255, 256, 257, 4095, 4096, 4097, 100000, 1000000};

static void scan_counts(bool inclusive, const splat_sorter_desc *desc)
{
    fixture f;
    if (!fixture_init(&f, desc)) return;
    for (size_t i = 0; i < SPLAT_COUNTOF(k_scan_counts); i++) {
        uint32_t n = k_scan_counts[i];
        scan_run r = {n, i % 2 ? n : n + rnd32() % 5000, inclusive, i % 3 == 2, i % 2 == 1, i % 4 == 0};
        if (!check_scan(&f.s, &f.st, &r)) break;
    }
    fixture_free(&f);
}

SPLAT_TEST(scan_exclusive) { scan_counts(false, NULL); }
SPLAT_TEST(scan_inclusive) { scan_counts(true, NULL); }

SPLAT_TEST(scan_group_sizes)
{
    const splat_sorter_desc descs[] = {
        {.scan_group_size = 64, .scan_items_per_thread = 1},
        {.scan_group_size = 128, .scan_items_per_thread = 7},
        {.scan_group_size = 1024, .scan_items_per_thread = 2},
    };
    for (size_t d = 0; d < SPLAT_COUNTOF(descs); d++) {
        if (!shape_fits(&descs[d])) {
            T_CHECK(d > 0, "the smallest shape (64 invocations) was refused");
            continue;
        }
        fixture f;
        if (!fixture_init(&f, &descs[d])) return;
        uint32_t b = f.s.scan_block;
        uint32_t counts[] = {1, b - 1, b, b + 1, b * b + 3, 70000 + rnd32() % 1000};
        for (size_t i = 0; i < SPLAT_COUNTOF(counts); i++) {
            scan_run r = {counts[i], counts[i] + 3, i % 2 == 0, i % 3 == 0, false, false};
            if (!check_scan(&f.s, &f.st, &r)) break;
        }
        fixture_free(&f);
    }
}

/* Counts past the capacity are clamped; a scan of nothing writes a zero total. */
SPLAT_TEST(scan_count_clamped)
{
    fixture f;
    if (!fixture_init(&f, NULL)) return;
    scan_run runs[] = {
        {5000, 3000, false, false, false, false},
        {UINT32_MAX, 10, true, false, false, false},
        {0, 0, false, false, false, false},
        {0, 0, true, false, true, false},
    };
    for (size_t i = 0; i < SPLAT_COUNTOF(runs); i++)
        if (!check_scan(&f.s, &f.st, &runs[i])) break;
    fixture_free(&f);
}
