// Adam's moments in one word (train_types.h, SPLAT_MOMENT_WORDS; docs/TRAIN.md, "Adam's moments in
// 16 bits"). Rounding is stochastic so that v's decay by 0.999 a step, smaller than half of its
// 16-bit spacing, still happens in expectation; bf16 rounded to nearest would keep v from ever
// falling. Each half is the float's bits cut below the kept ones after adding `r` there, so it
// rounds away from zero with probability (the cut bits) / (their range). Past the largest float
// it saturates to infinity, and a NaN becomes one (Adam reports the run's non-finite parameters
// anyway).
#ifndef SPLAT_MOMENTS_GLSL
#define SPLAT_MOMENTS_GLSL

uint moment_pack(float m, float v, uint r)
{
    uint um = floatBitsToUint(m), uv = floatBitsToUint(v);
    uint hm = min(((um & 0x7fffffffu) + (r & 0xffffu)) >> 16u, 0x7f80u) | ((um >> 16u) & 0x8000u);
    uint hv = min(((uv & 0x7fffffffu) + ((r >> 16u) & 0x7fffu)) >> 15u, 0xff00u);
    return hm | (hv << 16u);
}

float moment_m(uint w) { return uintBitsToFloat(w << 16u); }
float moment_v(uint w) { return uintBitsToFloat((w >> 16u) << 15u); }

#endif
