// SH coefficient k (rgb) of Gaussian i, stored as float or, with SPLAT_SH_HALF, as half floats
// (two per uint, read with unpackHalf2x16: no 16-bit storage feature needed). Blending and
// every computation stay in float.
#ifndef SPLAT_SH_ACCESS_GLSL
#define SPLAT_SH_ACCESS_GLSL

#ifdef SPLAT_SH_HALF
float sh_half_at(uint j)
{
    vec2 v = unpackHalf2x16(sh_h[j >> 1u]);
    return (j & 1u) != 0u ? v.y : v.x;
}
vec3 sh_coeff(uint i, uint k)
{
    uint b = (i * 16u + k) * 3u;
    return vec3(sh_half_at(b), sh_half_at(b + 1u), sh_half_at(b + 2u));
}
#else
vec3 sh_coeff(uint i, uint k)
{
    uint b = (i * 16u + k) * 3u;
    return vec3(sh[b], sh[b + 1u], sh[b + 2u]);
}
#endif

#endif
