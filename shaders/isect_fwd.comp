#version 450
// Intersection emission, one thread per Gaussian (a large one by its whole subgroup, below): one
// (tile, depth) key per touched tile, at the Gaussian's offset from the scan. The sort carries
// the emission index along, so after it every sorted entry knows both its Gaussian
// (gauss_of_emit) and its slot in the Gaussian's contiguous run of entries, where the backward
// leaves that tile's partial gradient; its word of quadrant bits starts at zero here, for the
// backward to set. Keys beyond the capacity are dropped; the setup stage has
// already flagged the overflow, so nothing downstream is used.
//
// The sort orders by tile alone and carries the depth bits along; tile_sort then orders each
// tile's run by (depth bits, value). FWD_ONLY (splat__render_bufs_fwd_only): writes only what the
// forward reads, the Gaussian itself as the value.
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "render_types.h"
#include "render_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = ISECT_FWD_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = ISECT_FWD_PROJ) readonly buffer ProjBuf { vec4 proj[]; };                     // [N,3] vec4
layout(std430, binding = ISECT_FWD_RADII) readonly buffer Radii { vec2 radii[]; };                     // [N]
layout(std430, binding = ISECT_FWD_OFFSETS) readonly buffer Offsets { uint offsets[]; };               // [N] exclusive scan of tiles_touched
layout(std430, binding = ISECT_FWD_TILES) readonly buffer Tiles { uint tiles_touched[]; };             // [N]
layout(std430, binding = ISECT_FWD_KEYS_LO) writeonly buffer KeysLo { uint keys_lo[]; };               // [M] depth bits
layout(std430, binding = ISECT_FWD_KEYS_HI) writeonly buffer KeysHi { uint keys_hi[]; };               // [M] tile id
layout(std430, binding = ISECT_FWD_VALS) writeonly buffer Vals { uint emit_of_isect[]; };              // [M] the emission index itself (sorted along; FWD_ONLY: the Gaussian)
layout(std430, binding = ISECT_FWD_GAUSS_OF_EMIT) writeonly buffer GaussOf { uint gauss_of_emit[]; };  // [M] Gaussian of each emission index
layout(std430, binding = ISECT_FWD_QUADS) writeonly buffer Quads { uint quads[]; };                    // [M] the quadrants that wrote a partial: none yet
layout(std430, binding = ISECT_FWD_COUNTERS) buffer Count { splat_counters counters; };

layout(constant_id = 0) const uint FWD_ONLY = 0u;

layout(push_constant) uniform Push { splat_render_push pc; };

// Candidate rectangles larger than this are walked by the whole subgroup together (below); a
// thread walks a smaller one alone.
const uint ALONE_MAX = 8u;

void emit(uint pos, uint i, uint tile, uint depth_bits)
{
    keys_hi[pos] = tile;
    keys_lo[pos] = depth_bits;
    if (FWD_ONLY != 0u) {
        emit_of_isect[pos] = i;
    } else {
        emit_of_isect[pos] = pos;
        gauss_of_emit[pos] = i;
        quads[pos] = 0u; // this step's backward sets the bits of the quadrants that write it
    }
}

void main()
{
    uint j = splat_global_id();
    bool live = j < frame.n_gaussians && tiles_touched[j] != 0u;
    uint i = 0u, pos = 0u, end = 0u, depth_bits = 0u, area = 0u;
    vec2 mean2d = vec2(0.0);
    vec3 conic = vec3(0.0);
    float tau = 0.0;
    ivec4 tr = ivec4(0);
    if (live) {
        i = j;
        vec4 p0 = proj[3u * i], p1 = proj[3u * i + 1u];
        mean2d = p0.xy;
        depth_bits = floatBitsToUint(p0.z);
        conic = p1.xyz;
        tau = p1.w;
        pos = offsets[j];
        end = min(pos + tiles_touched[j], pc.isect_capacity);
        tr = candidate_tiles(mean2d, radii[i], frame.tiles_x, frame.tiles_y);
        if (tr.z >= tr.x && tr.w >= tr.y) area = uint(tr.z - tr.x + 1) * uint(tr.w - tr.y + 1);
    }
    if (area <= ALONE_MAX) {
        for (int ty = tr.y; ty <= tr.w && pos < end; ty++)
            for (int tx = tr.x; tx <= tr.z && pos < end; tx++)
                if (tile_touched(conic, mean2d, tau, uint(tx), uint(ty), frame.cam.width, frame.cam.height))
                    emit(pos++, i, uint(ty) * frame.tiles_x + uint(tx), depth_bits);
    }
    // A large rectangle, walked alone, would keep its subgroup waiting for one thread storing an
    // entry per step. Instead the subgroup tests a subgroup's worth of its tiles at a time, in
    // the same row-major order, and a ballot gives each touched tile the position the loop above
    // would have: the same entries, with consecutive stores from consecutive threads. A slice
    // is one tile per lane present, by rank, so that a part-filled subgroup still covers all.
    uint lane = gl_SubgroupInvocationID;
    uvec4 present = subgroupBallot(true);
    uint rank = subgroupBallotExclusiveBitCount(present), lanes = subgroupBallotBitCount(present);
    uvec4 wide = subgroupBallot(area > ALONE_MAX);
    while (wide != uvec4(0u)) {
        uint leader = subgroupBallotFindLSB(wide);
        wide[leader >> 5u] &= ~(1u << (leader & 31u));
        uint gi = subgroupShuffle(i, leader), gbits = subgroupShuffle(depth_bits, leader);
        uint gpos = subgroupShuffle(pos, leader), gend = subgroupShuffle(end, leader);
        uint garea = subgroupShuffle(area, leader);
        vec2 gmean = subgroupShuffle(mean2d, leader);
        vec3 gconic = subgroupShuffle(conic, leader);
        float gtau = subgroupShuffle(tau, leader);
        ivec4 gtr = subgroupShuffle(tr, leader);
        uint gw = uint(gtr.z - gtr.x + 1);
        for (uint t0 = 0u; t0 < garea && gpos < gend; t0 += lanes) {
            uint t = t0 + rank;
            uint tx = uint(gtr.x) + t % gw, ty = uint(gtr.y) + t / gw;
            bool hit = t < garea && tile_touched(gconic, gmean, gtau, tx, ty, frame.cam.width, frame.cam.height);
            uvec4 hits = subgroupBallot(hit);
            uint at = gpos + subgroupBallotExclusiveBitCount(hits);
            if (hit && at < gend) emit(at, gi, ty * frame.tiles_x + tx, gbits);
            gpos += subgroupBallotBitCount(hits);
        }
        if (lane == leader) pos = min(gpos, gend);
    }
    if (!live) return;
    // project_fwd counted with the same stored values and the same (precise) arithmetic, so
    // this should never happen; if a compiler ever rounds differently, the leftover slots
    // become sentinels past every tile with no gradient, never stale memory.
    if (pos < end) atomicAdd(counters.isect_padded, end - pos);
    for (; pos < end; pos++) {
        keys_hi[pos] = pc.dummy_tile;
        keys_lo[pos] = 0xffffffffu;
        if (FWD_ONLY != 0u) {
            emit_of_isect[pos] = i;
            continue;
        }
        emit_of_isect[pos] = pos;
        gauss_of_emit[pos] = i;
        quads[pos] = 0u;
    }
}
