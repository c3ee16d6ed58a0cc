#version 450
// Radix sort, step 1 of a pass: the digit histogram of one tile of WG * KPT keys, written
// digit-major (hist[d * tiles + tile]) so that scan_rows.comp turns each digit's row into the
// tile's offset within that digit's bucket. Reads only the key word holding the digit.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KPT = 16u;          // keys per invocation
layout(constant_id = 3) const uint MAX_SUBGROUPS = 32u;
#include "sort_common.glsl"

layout(std430, binding = 0) readonly buffer Header { uint header[]; };
layout(std430, binding = 1) readonly buffer Keys { uint keys[]; };   // [count] the word holding the digit
layout(std430, binding = 2) writeonly buffer Hist { uint hist[]; };  // [RADIX][tiles]
layout(push_constant) uniform Push SPLAT_PASS_PUSH pc;

// Several copies of the histogram (subgroup s adds into copy s % COPIES) cut the contention of
// shared atomics on skewed keys.
#define COPIES 8u
shared uint h[COPIES * SORT_RADIX];

void main()
{
    uint tile = splat_group_index();
    uint tiles = header[SETUP_GROUPS];
    if (tile >= tiles) return;
    const uint WG = gl_WorkGroupSize.x;
    uint tid = gl_LocalInvocationID.x;
    for (uint i = tid; i < COPIES * SORT_RADIX; i += WG) h[i] = 0u;
    barrier();
    uint n = header[SETUP_COUNT];
    uint start = tile * (WG * KPT);
    uint end = min(start + WG * KPT, n);
    uint copy = (gl_SubgroupID % COPIES) * SORT_RADIX;
    for (uint k = 0u; k < KPT; k++) {
        uint i = start + k * WG + tid;
        bool valid = i < end;
        uint d = valid ? bitfieldExtract(keys[i], int(pc.shift), int(pc.width)) : 0u;
        // Equal digits across a full subgroup (sorted runs, unused high bits) take one atomic.
        if (subgroupAll(valid) && subgroupAllEqual(d)) {
            uint lanes = subgroupBallotBitCount(subgroupBallot(true));
            if (subgroupElect()) atomicAdd(h[copy + d], lanes);
        } else if (valid) {
            atomicAdd(h[copy + d], 1u);
        }
    }
    barrier();
    for (uint d = tid; d < SORT_RADIX; d += WG) {
        uint s = 0u;
        for (uint c = 0u; c < COPIES; c++) s += h[c * SORT_RADIX + d];
        hist[d * tiles + tile] = s;
    }
}
