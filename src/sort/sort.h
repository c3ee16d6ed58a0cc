/* sort: device radix sort of key-value pairs and prefix scan of uint32, both recorded into a
 * command the caller gives; submitting and waiting stay with the caller (the stream).
 *
 * Usage:
 *     splat_sorter s;
 *     splat__sorter_init(g, &s, NULL, &err);                      // pipelines, once per device
 *     uint64_t bytes = splat__sort_scratch_bound(&s, max_count, 2);
 *     splat__buf_init(g, &scratch, "sort scratch", bytes, SPLAT_MEM_DEVICE, &err);  // once
 *     ...record the producer of keys, values and the count...
 *     splat__cmd_barrier(c);                                      // the inputs are visible
 *     splat__sort_record(c, &s, &(splat_sort_args){
 *         .key_words = 2, .bits = tile_bits, .max_count = cap,  // by tile; depth carried
 *         .count = SPLAT_VIEW_AT(counts, 0, 4), .keys = SPLAT_VIEW(tile_ids),
 *         .keys_hi = SPLAT_VIEW(depth_bits), .values = SPLAT_VIEW(gaussian_ids),
 *         .scratch = SPLAT_VIEW(scratch)});
 *     ...record consumers: the sorted pairs are in keys/keys_hi/values (render.c then orders
 *     each tile's run by depth in tile_sort; .bits = 32 + tile_bits with the words swapped
 *     would sort by (tile, depth) here, in three times the passes)...
 *
 * Both run entirely on the device: the element count is read from a device buffer by a
 * one-invocation kernel that sizes the later dispatches (indirect), so no host read is ever
 * needed, and the recording can be replayed with different counts. No workgroup waits for
 * another (no decoupled look-back, no spinning), so both are correct on devices that do not
 * run workgroups concurrently (lavapipe, Apple GPUs). Any subgroup size from 4 to 128 works;
 * it is read at run time. Workgroup sizes and tiles fit the device's shared-memory limit.
 *
 * Synchronisation: recording starts with no barrier, so the caller makes the inputs (and the
 * count) visible first with splat__cmd_barrier; recording ends with a barrier, so later
 * commands may read the results directly.
 *
 * Limits: every array (and each array the scratch holds) is bound as one storage-buffer range,
 * so max_count * 4 bytes must not exceed maxStorageBufferRange: 128 MiB on lavapipe and the
 * Vulkan minimum (33.5M elements), 4 GiB on NVIDIA. Views must start at a multiple of
 * minStorageBufferOffsetAlignment, like every binding. Breaking a limit or a precondition is
 * recorded as the command's error (SPLAT_ERR_LIMIT / SPLAT_ERR_INVALID_ARG), and nothing is
 * recorded. */
#ifndef SPLAT_SORT_H
#define SPLAT_SORT_H

#include "gpu/gpu.h"

/* Tuning of the sorter; all-zero picks defaults for the device. */
typedef struct splat_sorter_desc {
    uint32_t sort_group_size;      /* invocations per sort workgroup (0: 256, or less where shared memory is short) */
    uint32_t sort_keys_per_thread; /* keys per invocation (0: up to 16, as shared memory allows) */
    uint32_t scan_group_size;      /* invocations per scan workgroup (0: 256) */
    uint32_t scan_items_per_thread;/* elements per invocation of the scan (0: 16) */
} splat_sorter_desc;

/* The pipelines and tile sizes of the sort and the scan on one device. Owns its pipelines;
 * holds no buffers. Read-only after init: many commands may record with it. */
typedef struct splat_sorter {
    splat_gpu *gpu;
    splat_pipe setup;              /* count -> header and indirect arguments */
    splat_pipe hist;               /* per-tile digit histograms */
    splat_pipe scatter[2];         /* [key_words - 1] */
    splat_pipe rows;               /* row-wise exclusive scan of the sort's histograms */
    splat_pipe scan_rows;          /* the same for the scan's block sums (one long row) */
    splat_pipe reduce;             /* scan: block sums */
    splat_pipe down[2];            /* scan: [inclusive] */
    uint32_t sort_group_size, sort_tile;  /* invocations and keys per sort workgroup */
    uint32_t scan_group_size, scan_block; /* invocations and elements per scan workgroup */
    uint64_t align;                /* alignment of the sub-ranges inside scratch */
} splat_sorter;

/* Builds the pipelines. desc may be NULL. Fails with SPLAT_ERR_LIMIT when the requested sizes
 * do not fit the device, or the gpu layer's errors. */
splat_status splat__sorter_init(splat_gpu *g, splat_sorter *s, const splat_sorter_desc *desc, splat_error *err);
void splat__sorter_free(splat_sorter *s);

/* ------------------------------------------------------------------ radix sort */

/* Sorts pairs by the low `bits` bits of their keys, stably (pairs with equal sorted bits keep
 * their input order), least significant digit first: passes of at most 8 bits, always an even
 * number of them, so the result lands back in the input arrays (keys, keys_hi, values).
 * 64-bit keys are two separate word arrays (a producer writes depth bits and tile id with two
 * coalesced stores, and a pass reads only the word holding its digit); the sorted order is
 * that of (keys_hi << 32 | keys) restricted to bits [0, bits). Bits above `bits` are carried
 * along, not sorted. Elements at count and beyond are not touched. */
typedef struct splat_sort_args {
    uint32_t key_words;   /* 1: 32-bit keys in `keys`; 2: 64-bit keys, low words in `keys`, high in `keys_hi` */
    uint32_t bits;        /* 0..32 * key_words; 0 records nothing (already sorted) */
    uint32_t max_count;   /* capacity: every array holds max_count elements */
    splat_view count;     /* uint32 in device memory: the number of pairs, clamped to max_count;
                             buf NULL: max_count pairs */
    splat_view keys;      /* [max_count] uint32: the keys, or their low words; sorted in place */
    splat_view keys_hi;   /* [max_count] uint32: the high words (key_words 2), else unused */
    splat_view values;    /* [max_count] uint32: moved with their keys */
    splat_view scratch;   /* splat__sort_scratch_bound(s, max_count, key_words) bytes, device memory:
                             histograms and the ping-pong arrays; contents not kept */
} splat_sort_args;

/* Bytes of scratch splat__sort_record needs for up to max_count pairs (enough for every
 * `bits`; at least 3 * 4 * max_count with 32-bit keys, 4 * 4 * max_count with 64-bit keys). */
uint64_t splat__sort_scratch_bound(const splat_sorter *s, uint32_t max_count, uint32_t key_words);
/* Records the sort: 1 + 3 * passes dispatches, passes = ceil(bits / 8) rounded up to even.
 * With a profiler on the command, each step ends with a mark: "sort setup", then per pass
 * "sort hist", "sort rows", "sort scatter". */
void splat__sort_record(splat_cmd *c, const splat_sorter *s, const splat_sort_args *a);

/* ------------------------------------------------------------------ prefix scan */

/* out[i] = in[0] + ... + in[i - 1] (exclusive) or + in[i] (inclusive), for i < count, modulo
 * 2^32; *total = the sum of all count elements. Elements at count and beyond are not touched.
 * A count of 0 writes only the total (0). */
typedef struct splat_scan_args {
    splat_view in;        /* [max_count] uint32 */
    splat_view out;       /* [max_count] uint32; may be the same range as `in` (in place) */
    uint32_t max_count;
    splat_view count;     /* uint32 in device memory: the number of elements, clamped to max_count;
                             buf NULL: max_count elements */
    bool inclusive;
    splat_view total;     /* uint32 in device memory: the sum; buf NULL: not written */
    splat_view scratch;   /* splat__scan_scratch_bound(s, max_count) bytes; contents not kept */
} splat_scan_args;

uint64_t splat__scan_scratch_bound(const splat_sorter *s, uint32_t max_count);
/* Records the scan: 4 dispatches (count -> arguments, block sums, their scan, the blocks). */
void splat__scan_record(splat_cmd *c, const splat_sorter *s, const splat_scan_args *a);

#endif
