#version 450
// Benchmark shader: does nothing, to measure the cost of a dispatch and its barrier.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint x[]; };

void main()
{
    if (gl_GlobalInvocationID.x == 0xffffffffu) x[0] = 1u;
}
