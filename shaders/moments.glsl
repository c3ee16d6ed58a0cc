// Adam's moments in one word (train_types.h, SPLAT_MOMENT_WORDS; docs/TRAIN.md, "Adam's moments in
// 16 bits"). Rounding is stochastic so that v's decay by 0.999 a step, smaller than half of its
// 16-bit spacing, still happens in expectation; bf16 rounded to nearest would keep v from ever
// falling. Each half is the float's bits cut below the kept ones after adding `r` there, so it
// rounds away from zero with probability (the cut bits) / (their range). Past the largest float
// it saturates to infinity, and a NaN becomes one (Adam reports the run's non-finite parameters
// anyway).
#ifndef SPLAT_MOMENTS_GLSL
#define SPLAT_MOMENTS_GLSL

// M: m's share of the word (train_types.h); m's float is cut below its top M bits, v's below bit
// M - 1 (its sign bit, always 0, is not kept).
const uint MOMENT_M_CUT = 32u - SPLAT_MOMENT_M_BITS, MOMENT_V_CUT = SPLAT_MOMENT_M_BITS - 1u;

uint moment_pack(float m, float v, uint r)
{
    uint um = floatBitsToUint(m), uv = floatBitsToUint(v);
    uint rm = r & ((1u << MOMENT_M_CUT) - 1u), rv = (r >> MOMENT_M_CUT) & ((1u << MOMENT_V_CUT) - 1u);
    uint hm = min(((um & 0x7fffffffu) + rm) >> MOMENT_M_CUT, 0x7f800000u >> MOMENT_M_CUT) | ((um >> MOMENT_M_CUT) & (0x80000000u >> MOMENT_M_CUT));
    uint hv = min(((uv & 0x7fffffffu) + rv) >> MOMENT_V_CUT, 0x7f800000u >> MOMENT_V_CUT);
    return hm | (hv << SPLAT_MOMENT_M_BITS);
}

float moment_m(uint w) { return uintBitsToFloat(w << MOMENT_M_CUT); }
float moment_v(uint w) { return uintBitsToFloat((w >> SPLAT_MOMENT_M_BITS) << MOMENT_V_CUT); }

#endif
