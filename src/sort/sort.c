/* Radix sort and prefix scan: pipelines, scratch layout and recording. The shaders are
 * sort_setup, sort_hist, sort_scatter, scan_rows, scan_reduce and scan_down (shaders/). */
#include <stdio.h>

#include "sort/sort.h"
#include "sort/sort_shared.h"

typedef struct SPLAT_SETUP_PUSH setup_push;
typedef struct SPLAT_PASS_PUSH pass_push;
_Static_assert(sizeof(setup_push) == 16, "setup push constants");
_Static_assert(sizeof(pass_push) == 8, "pass push constants");

/* Specialization constant ids, as the shaders declare them. */
enum { SPEC_GROUP_SIZE, SPEC_PER_THREAD, SPEC_VARIANT, SPEC_MAX_SUBGROUPS, SPEC_SHARED_WORDS, SPEC_COUNT };

/* Shared memory of sort_scatter.comp, in bytes: the ranking counters (two 16-bit counters per
 * digit and subgroup) or the staged tile, whichever is larger, plus the per-digit offsets and
 * the workgroup scan's subgroup sums. */
static uint32_t scatter_words(uint32_t wg, uint32_t kpt, uint32_t max_subgroups)
{
    return SPLAT_MAX(max_subgroups * (SORT_RADIX / 2), wg * kpt);
}

static uint64_t scatter_shared(uint32_t wg, uint32_t kpt, uint32_t max_subgroups)
{
    return 4ull * (scatter_words(wg, kpt, max_subgroups) + 2 * SORT_RADIX + max_subgroups + 1);
}

/* Shared memory of sort_hist.comp (8 histogram copies) and of the scan shaders. */
static uint64_t hist_shared(uint32_t max_subgroups) { return 4ull * (8 * SORT_RADIX + max_subgroups + 1); }

static splat_status make_pipe(splat_gpu *g, splat_pipe *p, const char *shader, uint32_t n_bindings, uint32_t push_size,
                              const uint32_t *spec, splat_error *err)
{
    return splat__pipe_init(g, p,
                            &(splat_pipe_desc){.shader = shader, .n_bindings = n_bindings, .push_size = push_size,
                                               .spec = spec, .n_spec = spec ? SPEC_COUNT : 0},
                            err);
}

splat_status splat__sorter_init(splat_gpu *g, splat_sorter *s, const splat_sorter_desc *desc, splat_error *err)
{
    static const splat_sorter_desc defaults = {0};
    if (!desc) desc = &defaults;
    memset(s, 0, sizeof *s);
    s->gpu = g;
    const splat_gpu_info *in = &g->info;
    uint32_t min_sg = SPLAT_MAX(in->min_subgroup_size, 4u);
    s->align = SPLAT_MAX(in->storage_align, 16u);

    /* Sort tile: the largest of (256 invocations, 16 keys each) downwards that fits shared
     * memory, unless the caller chose. */
    uint32_t wg = desc->sort_group_size ? desc->sort_group_size : SPLAT_MIN(256u, in->max_group_invocations);
    uint32_t kpt = desc->sort_keys_per_thread ? desc->sort_keys_per_thread : 16;
    for (;;) {
        uint32_t msg = SPLAT_MAX(wg / min_sg, 1u);
        if (scatter_shared(wg, kpt, msg) <= in->max_shared_memory && hist_shared(msg) <= in->max_shared_memory) break;
        if (!desc->sort_keys_per_thread && kpt > 4) kpt -= 4;
        else if (!desc->sort_group_size && wg > 64) wg /= 2;
        else
            return splat__fail(err, SPLAT_ERR_LIMIT,
                               "sort: workgroups of %u invocations x %u keys need %llu bytes of shared memory, %s has %u",
                               wg, kpt, (unsigned long long)scatter_shared(wg, kpt, msg), in->name, in->max_shared_memory);
    }
    if (wg % min_sg || wg > in->max_group_invocations || wg * kpt > 65535 || kpt == 0)
        return splat__fail(err, SPLAT_ERR_LIMIT,
                           "sort: %u invocations x %u keys: the workgroup must be a multiple of the subgroup size %u, at "
                           "most %u invocations, and hold fewer than 65536 keys",
                           wg, kpt, min_sg, in->max_group_invocations);
    s->sort_group_size = wg;
    s->sort_tile = wg * kpt;
    uint32_t msg = wg / min_sg;

    uint32_t swg = desc->scan_group_size ? desc->scan_group_size : SPLAT_MIN(256u, in->max_group_invocations);
    uint32_t skpt = desc->scan_items_per_thread ? desc->scan_items_per_thread : 16;
    uint32_t smsg = SPLAT_MAX(swg / min_sg, 1u);
    if (swg % min_sg || swg > in->max_group_invocations || skpt == 0 || (uint64_t)swg * skpt > (1u << 24) ||
        hist_shared(smsg) > in->max_shared_memory)
        return splat__fail(err, SPLAT_ERR_LIMIT,
                           "scan: %u invocations x %u elements: the workgroup must be a multiple of the subgroup size %u "
                           "and at most %u invocations",
                           swg, skpt, min_sg, in->max_group_invocations);
    s->scan_group_size = swg;
    s->scan_block = swg * skpt;

    /* The sort's 256 histogram rows are short (one entry per tile). On CPU drivers every
     * workgroup barrier switches between all of a workgroup's fibres, so there a workgroup of
     * 4 subgroups scans them (lavapipe, demo scene: 98 ms -> 14 ms per iteration). */
    uint32_t rwg = in->type == VK_PHYSICAL_DEVICE_TYPE_CPU ? SPLAT_MIN(swg, 4 * min_sg) : swg;
    uint32_t rows_spec[SPEC_COUNT] = {rwg, skpt, 0, SPLAT_MAX(rwg / min_sg, 1u), 1};
    uint32_t sort_spec[2][SPEC_COUNT], scan_spec[2][SPEC_COUNT];
    for (uint32_t v = 0; v < 2; v++) {
        uint32_t a[SPEC_COUNT] = {wg, kpt, v + 1, msg, scatter_words(wg, kpt, msg)};
        uint32_t b[SPEC_COUNT] = {swg, skpt, v, smsg, 1};
        memcpy(sort_spec[v], a, sizeof a);
        memcpy(scan_spec[v], b, sizeof b);
    }
    splat_status st;
    if ((st = make_pipe(g, &s->setup, "sort_setup", 2, sizeof(setup_push), NULL, err)) ||
        (st = make_pipe(g, &s->hist, "sort_hist", 3, sizeof(pass_push), sort_spec[0], err)) ||
        (st = make_pipe(g, &s->scatter[0], "sort_scatter", 9, sizeof(pass_push), sort_spec[0], err)) ||
        (st = make_pipe(g, &s->scatter[1], "sort_scatter", 9, sizeof(pass_push), sort_spec[1], err)) ||
        (st = make_pipe(g, &s->rows, "scan_rows", 3, 0, rows_spec, err)) ||
        (st = make_pipe(g, &s->scan_rows, "scan_rows", 3, 0, scan_spec[0], err)) ||
        (st = make_pipe(g, &s->reduce, "scan_reduce", 3, 0, scan_spec[0], err)) ||
        (st = make_pipe(g, &s->down[0], "scan_down", 4, 0, scan_spec[0], err)) ||
        (st = make_pipe(g, &s->down[1], "scan_down", 4, 0, scan_spec[1], err))) {
        splat__sorter_free(s);
        return st;
    }
    return SPLAT_OK;
}

void splat__sorter_free(splat_sorter *s)
{
    if (!s || !s->gpu) return;
    splat_pipe *pipes[] = {&s->setup, &s->hist, &s->scatter[0], &s->scatter[1], &s->rows, &s->scan_rows, &s->reduce, &s->down[0], &s->down[1]};
    for (size_t i = 0; i < SPLAT_COUNTOF(pipes); i++) splat__pipe_free(s->gpu, pipes[i]);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ helpers */

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* The bytes a view spans (size 0: to the end of its buffer). */
static uint64_t view_size(splat_view v)
{
    if (v.size) return v.size;
    return v.offset < v.buf->size ? v.buf->size - v.offset : 0;
}

/* The first `bytes` of a view, or a failure recorded in the command. */
static bool sub_view(splat_cmd *c, const char *what, const char *name, splat_view v, uint64_t bytes, splat_view *out)
{
    if (!v.buf) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "%s: no buffer for %s", what, name);
        return false;
    }
    if (view_size(v) < bytes) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "%s: %s (buffer '%s') spans %llu bytes, %llu needed", what, name,
                        v.buf->name, (unsigned long long)view_size(v), (unsigned long long)bytes);
        return false;
    }
    *out = SPLAT_VIEW_AT(*v.buf, v.offset, bytes ? bytes : 4);
    return true;
}

static bool check_range(splat_cmd *c, const char *what, uint32_t max_count)
{
    uint64_t bytes = 4ull * max_count;
    if (bytes > c->gpu->info.max_storage_range) {
        splat__cmd_fail(c, SPLAT_ERR_LIMIT,
                        "%s: %u elements take %.1f MiB per array, more than %s binds at once (maxStorageBufferRange "
                        "%.1f MiB)",
                        what, max_count, (double)bytes / 1048576.0, c->gpu->info.name,
                        (double)c->gpu->info.max_storage_range / 1048576.0);
        return false;
    }
    return true;
}

/* Records the setup kernel: header[SETUP_*] from the count (or max_count). */
static void record_setup(splat_cmd *c, const splat_sorter *s, splat_view count, splat_view header, uint32_t max_count,
                         uint32_t tile)
{
    setup_push pc = {max_count, tile, count.buf != NULL, 0};
    splat_view views[2] = {count.buf ? SPLAT_VIEW_AT(*count.buf, count.offset, 4) : header, header};
    splat__cmd_dispatch(c, &s->setup, views, 2, &pc, sizeof pc, 1, 1, 1);
    splat__cmd_barrier(c);
}

/* ------------------------------------------------------------------ radix sort */

typedef struct sort_pass {
    uint32_t word, shift, width; /* the digit: bits [shift, shift + width) of key word `word` */
} sort_pass;

/* Digits never straddle the two words; the pass count is made even (by splitting the low
 * word once more) so that the result lands back in the input arrays. */
static uint32_t plan_passes(uint32_t bits, sort_pass *out)
{
    uint32_t word_bits[2] = {SPLAT_MIN(bits, 32u), bits > 32 ? bits - 32 : 0};
    uint32_t passes[2] = {splat__div_up(word_bits[0], SORT_DIGIT_BITS), splat__div_up(word_bits[1], SORT_DIGIT_BITS)};
    if ((passes[0] + passes[1]) % 2) passes[0]++;
    uint32_t n = 0;
    for (uint32_t w = 0; w < 2; w++) {
        uint32_t shift = 0;
        for (uint32_t p = 0; p < passes[w]; p++) {
            uint32_t width = word_bits[w] / passes[w] + (p < word_bits[w] % passes[w]);
            out[n++] = (sort_pass){w, shift, width};
            shift += width;
        }
    }
    return n;
}

typedef struct sort_layout {
    uint64_t header, totals, hist, tmp[3], end; /* tmp: low words, high words, values */
} sort_layout;

static sort_layout sort_layout_of(const splat_sorter *s, uint32_t max_count, uint32_t key_words)
{
    sort_layout l;
    uint64_t a = s->align, tiles = splat__div_up(max_count, s->sort_tile), arr = align_up(4ull * SPLAT_MAX(max_count, 1u), a);
    l.header = 0;
    l.totals = align_up(SETUP_WORDS * 4, a);
    l.hist = l.totals + align_up(SORT_RADIX * 4, a);
    l.tmp[0] = l.hist + align_up(4ull * SORT_RADIX * SPLAT_MAX(tiles, 1u), a);
    l.tmp[1] = l.tmp[0] + arr;
    l.tmp[2] = l.tmp[1] + (key_words == 2 ? arr : 0);
    l.end = l.tmp[2] + arr;
    return l;
}

uint64_t splat__sort_scratch_bound(const splat_sorter *s, uint32_t max_count, uint32_t key_words)
{
    SPLAT_ASSERT(key_words == 1 || key_words == 2);
    return sort_layout_of(s, max_count, key_words).end;
}

void splat__sort_record(splat_cmd *c, const splat_sorter *s, const splat_sort_args *a)
{
    const char *what = "sort";
    if (a->key_words != 1 && a->key_words != 2) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "sort: key_words is %u, not 1 or 2", a->key_words);
        return;
    }
    if (a->bits > 32 * a->key_words) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "sort: %u bits of %u-bit keys", a->bits, 32 * a->key_words);
        return;
    }
    if (a->max_count == 0 || a->bits == 0 || !check_range(c, what, a->max_count)) return;
    uint64_t bytes = 4ull * a->max_count;
    sort_layout l = sort_layout_of(s, a->max_count, a->key_words);
    splat_view keys[2][2], vals[2], scratch;
    if (!sub_view(c, what, "keys", a->keys, bytes, &keys[0][0]) || !sub_view(c, what, "values", a->values, bytes, &vals[0]) ||
        (a->key_words == 2 && !sub_view(c, what, "keys_hi", a->keys_hi, bytes, &keys[0][1])) ||
        !sub_view(c, what, "scratch", a->scratch, l.end, &scratch))
        return;
    if (scratch.offset % s->align) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "sort: scratch offset %llu is not a multiple of %llu",
                        (unsigned long long)scratch.offset, (unsigned long long)s->align);
        return;
    }
    const splat_buf *sb = scratch.buf;
    uint64_t so = scratch.offset, tiles = splat__div_up(a->max_count, s->sort_tile);
    splat_view header = SPLAT_VIEW_AT(*sb, so + l.header, SETUP_WORDS * 4);
    splat_view args = SPLAT_VIEW_AT(*sb, so + l.header + SETUP_ARGS * 4, 12);
    splat_view totals = SPLAT_VIEW_AT(*sb, so + l.totals, SORT_RADIX * 4);
    splat_view hist = SPLAT_VIEW_AT(*sb, so + l.hist, 4ull * SORT_RADIX * tiles);
    keys[1][0] = SPLAT_VIEW_AT(*sb, so + l.tmp[0], bytes);
    keys[1][1] = SPLAT_VIEW_AT(*sb, so + l.tmp[1], bytes);
    vals[1] = SPLAT_VIEW_AT(*sb, so + l.tmp[2], bytes);
    if (a->key_words == 1) keys[0][1] = keys[0][0], keys[1][1] = keys[1][0]; /* bound, never read */

    sort_pass passes[8];
    uint32_t n_passes = plan_passes(a->bits, passes);
    record_setup(c, s, a->count, header, a->max_count, s->sort_tile);
    splat__cmd_mark(c, "sort setup");
    for (uint32_t p = 0; p < n_passes; p++) {
        uint32_t from = p % 2, to = 1 - from, w = passes[p].word;
        pass_push pc = {passes[p].shift, passes[p].width};
        splat_view hv[3] = {header, keys[from][w], hist};
        splat__cmd_dispatch_indirect(c, &s->hist, hv, 3, &pc, sizeof pc, args);
        splat__cmd_barrier(c);
        splat__cmd_mark(c, "sort hist");
        splat_view rv[3] = {header, hist, totals};
        splat__cmd_dispatch(c, &s->rows, rv, 3, NULL, 0, SORT_RADIX, 1, 1);
        splat__cmd_barrier(c);
        splat__cmd_mark(c, "sort rows");
        splat_view sv[9] = {header,         keys[from][w], keys[from][1 - w], vals[from], keys[to][w],
                            keys[to][1 - w], vals[to],      hist,              totals};
        splat__cmd_dispatch_indirect(c, &s->scatter[a->key_words - 1], sv, 9, &pc, sizeof pc, args);
        splat__cmd_barrier(c);
        splat__cmd_mark(c, "sort scatter");
    }
}

/* ------------------------------------------------------------------ prefix scan */

typedef struct scan_layout {
    uint64_t header, dummy_total, sums, end;
} scan_layout;

static scan_layout scan_layout_of(const splat_sorter *s, uint32_t max_count)
{
    uint64_t a = s->align, blocks = splat__div_up(max_count, s->scan_block);
    scan_layout l;
    l.header = 0;
    l.dummy_total = align_up(SETUP_WORDS * 4, a);
    l.sums = l.dummy_total + align_up(16, a);
    l.end = l.sums + align_up(4ull * SPLAT_MAX(blocks, 1u), a);
    return l;
}

uint64_t splat__scan_scratch_bound(const splat_sorter *s, uint32_t max_count) { return scan_layout_of(s, max_count).end; }

void splat__scan_record(splat_cmd *c, const splat_sorter *s, const splat_scan_args *a)
{
    const char *what = "scan";
    splat_view total = {0};
    if (a->total.buf && !sub_view(c, what, "total", a->total, 4, &total)) return;
    if (a->max_count == 0) {
        if (total.buf) {
            splat__cmd_fill(c, total, 0);
            splat__cmd_barrier(c);
        }
        return;
    }
    if (!check_range(c, what, a->max_count)) return;
    uint64_t bytes = 4ull * a->max_count;
    scan_layout l = scan_layout_of(s, a->max_count);
    splat_view in, out, scratch;
    if (!sub_view(c, what, "in", a->in, bytes, &in) || !sub_view(c, what, "out", a->out, bytes, &out) ||
        !sub_view(c, what, "scratch", a->scratch, l.end, &scratch))
        return;
    if (scratch.offset % s->align) {
        splat__cmd_fail(c, SPLAT_ERR_INVALID_ARG, "scan: scratch offset %llu is not a multiple of %llu",
                        (unsigned long long)scratch.offset, (unsigned long long)s->align);
        return;
    }
    const splat_buf *sb = scratch.buf;
    uint64_t so = scratch.offset, blocks = splat__div_up(a->max_count, s->scan_block);
    splat_view header = SPLAT_VIEW_AT(*sb, so + l.header, SETUP_WORDS * 4);
    splat_view args = SPLAT_VIEW_AT(*sb, so + l.header + SETUP_ARGS * 4, 12);
    splat_view sums = SPLAT_VIEW_AT(*sb, so + l.sums, 4 * blocks);
    if (!total.buf) total = SPLAT_VIEW_AT(*sb, so + l.dummy_total, 4);

    record_setup(c, s, a->count, header, a->max_count, s->scan_block);
    splat__cmd_dispatch_indirect(c, &s->reduce, (splat_view[]){header, in, sums}, 3, NULL, 0, args);
    splat__cmd_barrier(c);
    splat__cmd_dispatch(c, &s->scan_rows, (splat_view[]){header, sums, total}, 3, NULL, 0, 1, 1, 1);
    splat__cmd_barrier(c);
    splat__cmd_dispatch_indirect(c, &s->down[a->inclusive], (splat_view[]){header, in, out, sums}, 4, NULL, 0, args);
    splat__cmd_barrier(c);
}
