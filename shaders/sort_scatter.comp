#version 450
// Radix sort, step 3 of a pass: the stable scatter of one tile of WG * KPT key-value pairs.
//  1. Rank: each subgroup walks its contiguous segment sg_size keys at a time; lanes holding
//     the same digit find each other with one ballot per digit bit (a multisplit), so a key's
//     rank is the count of earlier keys with its digit: first within the subgroup (16-bit
//     counters per subgroup and digit in shared memory), then across subgroups (a scan of the
//     counters in subgroup order).
//  2. Sort the tile locally in shared memory by digit (stable), so that the global writes of
//     each digit's run are contiguous.
//  3. Write each word of the pair (digit word, other key word, value) to
//     bucket start + tile's offset in the bucket + rank, staging one word at a time through
//     the same shared memory.
// The bucket starts are the exclusive scan of the digit totals; the tile's offset within each
// bucket is its scanned histogram row (sort_hist.comp, scan_rows.comp).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KPT = 16u;
layout(constant_id = 2) const uint KEY_WORDS = 1u;       // 2: also move the other key word
layout(constant_id = 3) const uint MAX_SUBGROUPS = 32u;
layout(constant_id = 4) const uint SH_WORDS = 4096u;     // max(MAX_SUBGROUPS * RADIX / 2, WG * KPT)
#include "sort_common.glsl"

layout(std430, binding = 0) readonly buffer Header { uint header[]; };
layout(std430, binding = 1) readonly buffer KeyIn { uint key_in[]; };         // [count] word holding the digit
layout(std430, binding = 2) readonly buffer OtherIn { uint other_in[]; };     // [count] other key word (KEY_WORDS 2)
layout(std430, binding = 3) readonly buffer ValIn { uint val_in[]; };         // [count]
layout(std430, binding = 4) writeonly buffer KeyOut { uint key_out[]; };      // [count]
layout(std430, binding = 5) writeonly buffer OtherOut { uint other_out[]; };  // [count]
layout(std430, binding = 6) writeonly buffer ValOut { uint val_out[]; };      // [count]
layout(std430, binding = 7) readonly buffer Hist { uint hist[]; };            // [RADIX][tiles] scanned rows
layout(std430, binding = 8) readonly buffer Totals { uint totals[]; };        // [RADIX] keys per digit
layout(push_constant) uniform Push SPLAT_PASS_PUSH pc;

// Ranking: [subgroups][RADIX / 2] words of two 16-bit counters. Then the staging area of the
// local sort: [WG * KPT] words.
shared uint sh[SH_WORDS];
shared uint local_off[SORT_RADIX]; // first slot of each digit in the locally sorted tile
shared uint adj[SORT_RADIX];       // global index of a digit's keys minus their local slot

#define HALF_RADIX (SORT_RADIX / 2u)

void main()
{
    uint tile = splat_group_index();
    uint tiles = header[SETUP_GROUPS];
    if (tile >= tiles) return;
    const uint WG = gl_WorkGroupSize.x;
    const uint TILE = WG * KPT;
    uint tid = gl_LocalInvocationID.x;
    uint start = tile * TILE;
    uint n_valid = min(TILE, header[SETUP_COUNT] - start);
    uint lane = gl_SubgroupInvocationID, sg_size = gl_SubgroupSize;
    uint counters = gl_SubgroupID * HALF_RADIX;
    uint seg = gl_SubgroupID * sg_size * KPT;
    for (uint i = tid; i < gl_NumSubgroups * HALF_RADIX; i += WG) sh[i] = 0u;
    barrier();

    // 1. Rank within the subgroup, in element order (segment, then step, then lane).
    uint key[KPT], pos[KPT];
    for (uint k = 0u; k < KPT; k++) {
        uint e = seg + k * sg_size + lane;
        bool valid = e < n_valid;
        uint w = valid ? key_in[start + e] : 0u;
        // Past the end: the largest digit, so those come after every real key of the tile.
        uint d = valid ? bitfieldExtract(w, int(pc.shift), int(pc.width)) : (1u << pc.width) - 1u;
        uvec4 same = subgroupBallot(true);
        for (uint b = 0u; b < pc.width; b++) {
            bool bit = ((d >> b) & 1u) != 0u;
            uvec4 vote = subgroupBallot(bit);
            same &= bit ? vote : ~vote;
        }
        uint rank = subgroupBallotExclusiveBitCount(same);
        uint cnt = subgroupBallotBitCount(same);
        uint word = counters + (d >> 1u), half_shift = (d & 1u) * 16u;
        uint before = (sh[word] >> half_shift) & 0xffffu;
        subgroupBarrier();
        // The last lane of each digit group adds the group; digits 2i and 2i+1 share a word.
        if (rank == cnt - 1u) atomicAdd(sh[word], cnt << half_shift);
        subgroupBarrier();
        key[k] = w;
        pos[k] = (d << 16u) | (before + rank);
    }
    barrier();

    // Across subgroups: each counter becomes the count of its digit in earlier subgroups; the
    // sums are the tile's digit counts.
    for (uint t = tid; t < HALF_RADIX; t += WG) {
        uint sum = 0u;
        for (uint s = 0u; s < gl_NumSubgroups; s++) {
            uint c = sh[s * HALF_RADIX + t];
            sh[s * HALF_RADIX + t] = sum;
            sum += c;
        }
        local_off[2u * t] = sum & 0xffffu;
        local_off[2u * t + 1u] = sum >> 16u;
    }
    barrier();
    uint carry_local = 0u, carry_global = 0u;
    for (uint base = 0u; base < SORT_RADIX; base += WG) {
        uint d = base + splat_slot();
        bool in_range = d < SORT_RADIX;
        uint t_local, t_global;
        uint lo = carry_local + wg_exclusive_add(in_range ? local_off[d] : 0u, t_local);
        uint go = carry_global + wg_exclusive_add(in_range ? totals[d] : 0u, t_global);
        if (in_range) {
            local_off[d] = lo;
            adj[d] = go + hist[d * tiles + tile] - lo;
        }
        carry_local += t_local;
        carry_global += t_global;
    }
    barrier();
    for (uint k = 0u; k < KPT; k++) {
        uint d = pos[k] >> 16u;
        uint earlier = (sh[counters + (d >> 1u)] >> ((d & 1u) * 16u)) & 0xffffu;
        pos[k] = local_off[d] + earlier + (pos[k] & 0xffffu);
    }
    barrier();

    // 2-3. Local sort, then contiguous writes, one word of the pair at a time. Slots past
    // n_valid hold the padding keys and are never written out.
    for (uint k = 0u; k < KPT; k++) sh[pos[k]] = key[k];
    barrier();
    uint dst[KPT];
    for (uint j = 0u; j < KPT; j++) {
        uint slot = j * WG + tid;
        dst[j] = 0u;
        if (slot < n_valid) {
            uint w = sh[slot];
            dst[j] = adj[bitfieldExtract(w, int(pc.shift), int(pc.width))] + slot;
            key_out[dst[j]] = w;
        }
    }
    if (KEY_WORDS == 2u) {
        barrier();
        for (uint k = 0u; k < KPT; k++) {
            uint e = seg + k * sg_size + lane;
            if (e < n_valid) sh[pos[k]] = other_in[start + e];
        }
        barrier();
        for (uint j = 0u; j < KPT; j++) {
            uint slot = j * WG + tid;
            if (slot < n_valid) other_out[dst[j]] = sh[slot];
        }
    }
    barrier();
    for (uint k = 0u; k < KPT; k++) {
        uint e = seg + k * sg_size + lane;
        if (e < n_valid) sh[pos[k]] = val_in[start + e];
    }
    barrier();
    for (uint j = 0u; j < KPT; j++) {
        uint slot = j * WG + tid;
        if (slot < n_valid) val_out[dst[j]] = sh[slot];
    }
}
