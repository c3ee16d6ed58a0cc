// The gpu layer's copy and fill (splat__cmd_copy, splat__cmd_fill), one WORD per thread: WORD is
// uint (any 4-byte offsets) or uvec4 (16-byte aligned bodies). Dispatched shaders, not
// vkCmdCopyBuffer / vkCmdFillBuffer: on the H100 the transfer commands copy at about a third of
// the memory's bandwidth (docs/PERFORMANCE.md, the GPU layer).
#include "common.glsl"

layout(local_size_x = 256) in;

#ifdef GPU_FILL
layout(std430, binding = 0) writeonly buffer Dst { WORD dst[]; };
layout(push_constant) uniform Push { uint dst_at, n, value; } pc;
#else
layout(std430, binding = 0) readonly buffer Src { WORD src[]; };
layout(std430, binding = 1) writeonly buffer Dst { WORD dst[]; };
layout(push_constant) uniform Push { uint src_at, dst_at, n; } pc;
#endif

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
#ifdef GPU_FILL
    dst[pc.dst_at + i] = WORD(pc.value);
#else
    dst[pc.dst_at + i] = src[pc.src_at + i];
#endif
}
