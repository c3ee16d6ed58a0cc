// Shared by every shader: the 2D grid folding used by splat__cmd_dispatch_1d, and helpers
// for indirect dispatch arguments written on the GPU.
#ifndef SPLAT_COMMON_GLSL
#define SPLAT_COMMON_GLSL

// Workgroup counts beyond this go to the grid's y dimension (the limit every device has).
#define SPLAT_GRID_X 65535u

// A macro, not a function: glslang fixes gl_WorkGroupSize where it is used, and this file is
// included before the shader declares its local size.
#define splat_global_id() \
    ((gl_WorkGroupID.y * SPLAT_GRID_X + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x)

// Group counts for `items` threads in groups of `wg`, folded like splat__cmd_dispatch_1d.
uvec3 splat_grid(uint items, uint wg)
{
    uint groups = (items + wg - 1u) / wg;
    uint gx = min(groups, SPLAT_GRID_X);
    uint gy = gx == 0u ? 1u : (groups + gx - 1u) / gx;
    return uvec3(gx, gy, 1u);
}

#endif
