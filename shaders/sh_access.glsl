// A Gaussian's SH row ([16,3] rgb coefficients), stored as float or, with SPLAT_SH_HALF, as half
// floats (read with unpackHalf2x16: no 16-bit storage feature needed). Blending and every
// computation stay in float.
//
// Element by element (sh_half_at), from `uint sh_h[]`; or, with SPLAT_SH_ROWS, whole rows in
// 16-byte loads from `vec4 sh4[]` / `uvec4 sh_h4[]`: a float row is 12 quads, a half row 6 (both
// 16-byte aligned), so a thread issues a quarter of the loads that coefficient-by-coefficient
// reads took for the same bytes. Only the quads holding the first n coefficients are read.
// sh_row_coeff takes a constant k (the callers' loops are unrolled), so the row stays in
// registers.
#ifndef SPLAT_SH_ACCESS_GLSL
#define SPLAT_SH_ACCESS_GLSL
#extension GL_EXT_control_flow_attributes : require

#if defined(SPLAT_SH_HALF) && !defined(SPLAT_SH_ROWS)
float sh_half_at(uint j)
{
    vec2 v = unpackHalf2x16(sh_h[j >> 1u]);
    return (j & 1u) != 0u ? v.y : v.x;
}
#endif

#ifdef SPLAT_SH_ROWS

#define SH_ROW_QUADS 12u

// The quads holding the first n coefficients' 3n floats.
uint sh_row_quads(uint n) { return (3u * n + 3u) / 4u; }

#ifdef SPLAT_SH_HALF
void sh_row_load(uint i, uint n, out vec4 row[SH_ROW_QUADS])
{
    uint quads = sh_row_quads(n);
    [[unroll]] for (uint j = 0u; j < SH_ROW_QUADS / 2u; j++) {
        if (2u * j < quads) {
            uvec4 h = sh_h4[6u * i + j];
            row[2u * j] = vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
            row[2u * j + 1u] = vec4(unpackHalf2x16(h.z), unpackHalf2x16(h.w));
        } else {
            row[2u * j] = vec4(0.0);
            row[2u * j + 1u] = vec4(0.0);
        }
    }
}
#else
void sh_row_load(uint i, uint n, out vec4 row[SH_ROW_QUADS])
{
    uint quads = sh_row_quads(n);
    [[unroll]] for (uint j = 0u; j < SH_ROW_QUADS; j++) {
        if (j < quads) row[j] = sh4[12u * i + j];
        else row[j] = vec4(0.0);
    }
}
#endif

// Coefficient k (rgb) of a loaded row.
vec3 sh_row_coeff(vec4 row[SH_ROW_QUADS], uint k)
{
    uint f = 3u * k;
    return vec3(row[f >> 2u][f & 3u], row[(f + 1u) >> 2u][(f + 1u) & 3u], row[(f + 2u) >> 2u][(f + 2u) & 3u]);
}

// Whether the first n coefficients of a loaded row are all finite.
bool sh_row_finite(vec4 row[SH_ROW_QUADS], uint n)
{
    bool ok = true;
    [[unroll]] for (uint k = 0u; k < 16u; k++)
        if (k < n) ok = ok && all_finite(vec4(sh_row_coeff(row, k), 0.0));
    return ok;
}

#endif
#endif
