// Helpers of the sort and scan shaders. Before including this file the shader declares
//   layout(local_size_x_id = 0) in;
//   layout(constant_id = 3) const uint MAX_SUBGROUPS;  // workgroup size / smallest subgroup size
//
// Ordered work (scans, stable ranking) uses the invocation's *slot*, gl_SubgroupID *
// gl_SubgroupSize + gl_SubgroupInvocationID, rather than gl_LocalInvocationID: subgroup
// operations order lanes by gl_SubgroupInvocationID and Vulkan does not say how local
// invocation ids map to subgroups. The slots cover the workgroup when its subgroups are full,
// which holds for power-of-two workgroup sizes that are a multiple of the subgroup size on every
// driver we know (Vulkan only promises it with VK_EXT_subgroup_size_control's full-subgroups
// flag). Nothing assumes a subgroup size: it is read at run time (4..128 lanes: ballots are
// uvec4).
#ifndef SPLAT_SORT_COMMON_GLSL
#define SPLAT_SORT_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require

#include "common.glsl"
#include "sort/sort_shared.h"

// The workgroup's index in a grid folded into 2D (sort tiles, scan blocks).
#define splat_group_index() (gl_WorkGroupID.y * SPLAT_GRID_X + gl_WorkGroupID.x)
#define splat_slot() (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID)

// [MAX_SUBGROUPS] subgroup partial sums, then the workgroup total.
shared uint wg_sums[MAX_SUBGROUPS + 1u];

// Exclusive prefix sum of x over the workgroup in slot order; *total = the sum of all x.
// Called in uniform control flow by the whole workgroup.
uint wg_exclusive_add(uint x, out uint total)
{
    uint ex = subgroupExclusiveAdd(x);
    uint s = subgroupAdd(x);
    if (subgroupElect()) wg_sums[gl_SubgroupID] = s;
    barrier();
    if (gl_SubgroupID == 0u) {
        // The subgroup totals, scanned a subgroup's width at a time (there may be more
        // subgroups than lanes, e.g. 32 subgroups of 8).
        uint carry = 0u;
        for (uint b = 0u; b < gl_NumSubgroups; b += gl_SubgroupSize) {
            uint i = b + gl_SubgroupInvocationID;
            uint v = i < gl_NumSubgroups ? wg_sums[i] : 0u;
            uint e = subgroupExclusiveAdd(v);
            if (i < gl_NumSubgroups) wg_sums[i] = carry + e;
            carry += subgroupAdd(v);
        }
        if (subgroupElect()) wg_sums[MAX_SUBGROUPS] = carry;
    }
    barrier();
    total = wg_sums[MAX_SUBGROUPS];
    uint r = ex + wg_sums[gl_SubgroupID];
    barrier();
    return r;
}

#endif
