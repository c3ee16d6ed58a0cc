// The math of docs/RASTER.md shared by the forward and backward render stages. Matrices
// follow GLSL: m[column][row]; the camera's R arrives row-major.
#ifndef SPLAT_RENDER_COMMON_GLSL
#define SPLAT_RENDER_COMMON_GLSL

#define ALPHA_MIN float(SPLAT_ALPHA_MIN)
#define ALPHA_MAX float(SPLAT_ALPHA_MAX)
#define T_MIN float(SPLAT_T_MIN)

mat3 cam_rotation(splat_gpu_camera c)
{
    // mat3() fills columns; feeding row-major values gives R^T, so transpose.
    return transpose(mat3(c.R[0], c.R[1], c.R[2], c.R[3], c.R[4], c.R[5], c.R[6], c.R[7], c.R[8]));
}

vec3 cam_translation(splat_gpu_camera c) { return vec3(c.t[0], c.t[1], c.t[2]); }

// Rotation of a unit quaternion (w, x, y, z), docs/RASTER.md 1.2.
mat3 quat_to_rot(vec4 q)
{
    float w = q.x, x = q.y, y = q.z, z = q.w;
    return transpose(mat3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
                          2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
                          2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)));
}

// The projection Jacobian with gsplat's guard band (docs/RASTER.md 1.4).
struct Proj2 {
    mat3x2 J;            // 3 columns of 2 rows
    vec2 mean2d;
    bvec2 clamped;       // tx / ty hit the guard band
    vec2 t;              // tx, ty
};

Proj2 project_point(vec3 p, splat_gpu_camera c)
{
    float W = float(c.width), H = float(c.height);
    float tan_x = 0.5 * W / c.fx, tan_y = 0.5 * H / c.fy;
    float lim_xp = (W - c.cx) / c.fx + 0.3 * tan_x, lim_xn = c.cx / c.fx + 0.3 * tan_x;
    float lim_yp = (H - c.cy) / c.fy + 0.3 * tan_y, lim_yn = c.cy / c.fy + 0.3 * tan_y;
    float rz = 1.0 / p.z, rz2 = rz * rz;
    float u = p.x * rz, v = p.y * rz;
    Proj2 o;
    o.clamped = bvec2(u < -lim_xn || u > lim_xp, v < -lim_yn || v > lim_yp);
    o.t = vec2(p.z * clamp(u, -lim_xn, lim_xp), p.z * clamp(v, -lim_yn, lim_yp));
    o.J = mat3x2(c.fx * rz, 0.0, 0.0, c.fy * rz, -c.fx * o.t.x * rz2, -c.fy * o.t.y * rz2);
    o.mean2d = vec2(c.fx * p.x * rz + c.cx, c.fy * p.y * rz + c.cy);
    return o;
}

// The blurred 2D covariance (a, b, c) = T T^T + EPS2D I of the 2x3 factor T = J R M, its
// determinant, and det0, the determinant before the blur. a c - b^2 cancels badly in float for
// needle-shaped Gaussians; Lagrange's identity |r0|^2 |r1|^2 - (r0.r1)^2 = |r0 x r1|^2 gives it
// as a sum of positive terms.
void blurred_cov2d(mat3x2 T, out float a, out float b, out float c, out float det, out float det0)
{
    vec3 r0 = vec3(T[0][0], T[1][0], T[2][0]), r1 = vec3(T[0][1], T[1][1], T[2][1]);
    float a0 = dot(r0, r0), c0 = dot(r1, r1);
    vec3 x = cross(r0, r1);
    const float e = float(SPLAT_EPS2D);
    a = a0 + e;
    b = dot(r0, r1);
    c = c0 + e;
    det0 = dot(x, x);
    det = det0 + e * (a0 + c0) + e * e;
}

// Antialiased mode (docs/RASTER.md 1.5): the opacity factor sqrt(max(ratio, MIN^2)), ratio =
// det0 / det, that keeps a Gaussian's integral through the low-pass.
const float MIN_COMP2 = float(SPLAT_MIN_COMPENSATION * SPLAT_MIN_COMPENSATION);

float aa_compensation(float ratio) { return sqrt(max(ratio, MIN_COMP2)); }

// The gradient of the ratio det0 / det with respect to the covariance, as the symmetric G of
// project_bwd (the off-diagonal's share halved in each of its two places). With (a0, b, c0) the
// covariance before the blur, the quotient rule's differences come out as sums of positive terms
// (no cancellation in float):
//   d/da = e (c0 (c0 + e) + b^2) / det^2,  d/dc = e (a0 (a0 + e) + b^2) / det^2,
//   d/db = -2 b e (a0 + c0 + e) / det^2
// `inv_det` is 1 / det.
mat2 aa_ratio_grad(mat3x2 T, float inv_det)
{
    vec3 r0 = vec3(T[0][0], T[1][0], T[2][0]), r1 = vec3(T[0][1], T[1][1], T[2][1]);
    float a0 = dot(r0, r0), c0 = dot(r1, r1), b = dot(r0, r1);
    const float e = float(SPLAT_EPS2D);
    float k = e * inv_det * inv_det;  // not e / det^2, which overflows for image-sized Gaussians
    float gb = -b * (a0 + c0 + e) * k;
    return mat2((c0 * (c0 + e) + b * b) * k, gb, gb, (a0 * (a0 + e) + b * b) * k);
}

// Power of a Gaussian with conic (A, B, C) at offset d = mean2d - pixel.
float gauss_power(vec3 conic, vec2 d)
{
    return 0.5 * (conic.x * d.x * d.x + conic.z * d.y * d.y) + conic.y * d.x * d.y;
}

// The same, with every operation rounded on its own (no fma contraction), so the tile test
// gives identical answers in every shader that evaluates it.
float gauss_power_exact(vec3 conic, vec2 d)
{
    precise float r = 0.5 * (conic.x * d.x * d.x + conic.z * d.y * d.y) + conic.y * d.x * d.y;
    return r;
}

// Minimum of the power over the rectangle of offsets [lo, hi] (docs/RASTER.md 1.8).
float min_power_rect(vec3 conic, vec2 lo, vec2 hi)
{
    if (lo.x <= 0.0 && hi.x >= 0.0 && lo.y <= 0.0 && hi.y >= 0.0) return 0.0;
    float A = conic.x, B = conic.y, C = conic.z;
    float best = 3.0e38;
    for (int e = 0; e < 2; e++) {
        float X = e == 0 ? lo.x : hi.x;  // vertical edges: dx fixed
        precise float dy = clamp(-B * X / C, lo.y, hi.y);
        best = min(best, gauss_power_exact(conic, vec2(X, dy)));
        float Y = e == 0 ? lo.y : hi.y;  // horizontal edges: dy fixed
        precise float dx = clamp(-B * Y / A, lo.x, hi.x);
        best = min(best, gauss_power_exact(conic, vec2(dx, Y)));
    }
    return best;
}

// The candidate tile rectangle of a Gaussian (inclusive bounds); empty when x0 > x1 or y0 > y1.
ivec4 candidate_tiles(vec2 mean2d, vec2 radius, uint tiles_x, uint tiles_y)
{
    // A little generous so that rounding never drops a touched tile: the exact test decides.
    precise vec2 r = radius * 1.0001 + 0.01;
    precise vec2 a = floor((mean2d - r) / float(SPLAT_TILE));
    precise vec2 b = floor((mean2d + r) / float(SPLAT_TILE));
    a = clamp(a, vec2(-1.0), vec2(float(tiles_x), float(tiles_y)));
    b = clamp(b, vec2(-1.0), vec2(float(tiles_x), float(tiles_y)));
    return ivec4(max(int(a.x), 0), max(int(a.y), 0), min(int(b.x), int(tiles_x) - 1), min(int(b.y), int(tiles_y) - 1));
}

// gsplat's visibility: its opacity-aware box (extent at most 3.33 sigma, half-sides rounded up to
// whole pixels) overlaps the image. A superset of what draws a pixel here: gsplat's default
// strategy counts a view for every Gaussian it keeps (docs/TRAIN.md, "Densification").
bool gsplat_box_overlaps(vec2 mean2d, float a, float c, float alpha, uint W, uint H)
{
    float ext = min(3.33, sqrt(2.0 * log(alpha / ALPHA_MIN)));
    vec2 r = ceil(ext * sqrt(vec2(a, c)));
    return mean2d.x + r.x > 0.0 && mean2d.x - r.x < float(W) && mean2d.y + r.y > 0.0 && mean2d.y - r.y < float(H);
}

// Does the Gaussian touch tile (tx, ty)? The rectangle of pixel centres, as offsets from the mean.
bool tile_touched(vec3 conic, vec2 mean2d, float tau, uint tx, uint ty, uint W, uint H)
{
    vec2 p0 = vec2(float(tx * SPLAT_TILE) + 0.5, float(ty * SPLAT_TILE) + 0.5);
    vec2 p1 = vec2(float(min((tx + 1u) * SPLAT_TILE, W)) - 0.5, float(min((ty + 1u) * SPLAT_TILE, H)) - 0.5);
    // offsets d = mean2d - p lie in [mean2d - p1, mean2d - p0]
    precise vec2 lo = mean2d - p1, hi = mean2d - p0;
    return min_power_rect(conic, lo, hi) <= tau;
}

// Can a Gaussian reach alpha 1/255 at a pixel centre of the rectangle of offsets [lo, hi]? The
// pixels blend where opacity * exp(-power) >= 1/255, so one whose least power over the rectangle
// is above log(255 opacity) is skipped by every pixel. The margin covers the rounding of the
// power in either place (a few ulps of its terms, bounded by far's) and of log and exp, so that
// no Gaussian a pixel would blend is dropped.
bool may_blend(vec4 geom, vec3 conic, vec2 lo, vec2 hi)
{
    vec2 far = max(abs(lo), abs(hi));
    float terms = conic.x * far.x * far.x + conic.z * far.y * far.y + 2.0 * abs(conic.y) * far.x * far.y;
    return !(min_power_rect(conic, lo, hi) > log(geom.w / ALPHA_MIN) + 1e-3 + 1.5e-5 * terms);
}

// The first and last pixel centres of quadrant (qx, qy) (SPLAT_QUAD pixels square, 2x2 to a tile).
void quad_centres(uint qx, uint qy, uint W, uint H, out vec2 q0, out vec2 q1)
{
    q0 = vec2(float(qx * SPLAT_QUAD), float(qy * SPLAT_QUAD)) + 0.5;
    q1 = vec2(float(min((qx + 1u) * SPLAT_QUAD, W)), float(min((qy + 1u) * SPLAT_QUAD, H))) - 0.5;
}

// ------------------------------------------------------------------ spherical harmonics

// Basis values Y_0..Y_15 at the unit direction (x, y, z) (docs/RASTER.md 1.9).
void sh_basis(vec3 d, uint degree, out float Y[16])
{
    float x = d.x, y = d.y, z = d.z;
    Y[0] = 0.2820947917738781;
    for (int k = 1; k < 16; k++) Y[k] = 0.0;
    if (degree < 1u) return;
    Y[1] = -0.48860251190292 * y;
    Y[2] = 0.48860251190292 * z;
    Y[3] = -0.48860251190292 * x;
    if (degree < 2u) return;
    float z2 = z * z, fC1 = x * x - y * y, fS1 = 2.0 * x * y, fTmp0B = -1.092548430592079 * z;
    Y[4] = 0.5462742152960395 * fS1;
    Y[5] = fTmp0B * y;
    Y[6] = 0.9461746957575601 * z2 - 0.3153915652525201;
    Y[7] = fTmp0B * x;
    Y[8] = 0.5462742152960395 * fC1;
    if (degree < 3u) return;
    float fTmp0C = -2.285228997322329 * z2 + 0.4570457994644658, fTmp1B = 1.445305721320277 * z;
    float fC2 = x * fC1 - y * fS1, fS2 = x * fS1 + y * fC1;
    Y[9] = -0.5900435899266435 * fS2;
    Y[10] = fTmp1B * fS1;
    Y[11] = fTmp0C * y;
    Y[12] = z * (1.865881662950577 * z2 - 1.119528997770346);
    Y[13] = fTmp0C * x;
    Y[14] = fTmp1B * fC1;
    Y[15] = -0.5900435899266435 * fC2;
}

// Gradient of each basis polynomial with respect to (x, y, z), for the colour's view-direction
// gradient. Radial parts do not matter: the caller projects onto the sphere's tangent plane.
void sh_basis_grad(vec3 d, uint degree, out vec3 dY[16])
{
    float x = d.x, y = d.y, z = d.z;
    for (int k = 0; k < 16; k++) dY[k] = vec3(0.0);
    if (degree < 1u) return;
    const float c1 = 0.48860251190292;
    dY[1] = vec3(0.0, -c1, 0.0);
    dY[2] = vec3(0.0, 0.0, c1);
    dY[3] = vec3(-c1, 0.0, 0.0);
    if (degree < 2u) return;
    const float c4 = 0.5462742152960395, c5 = -1.092548430592079;
    dY[4] = c4 * vec3(2.0 * y, 2.0 * x, 0.0);
    dY[5] = c5 * vec3(0.0, z, y);
    dY[6] = vec3(0.0, 0.0, 2.0 * 0.9461746957575601 * z);
    dY[7] = c5 * vec3(z, 0.0, x);
    dY[8] = c4 * vec3(2.0 * x, -2.0 * y, 0.0);
    if (degree < 3u) return;
    float z2 = z * z, fC1 = x * x - y * y, fS1 = 2.0 * x * y;
    float fTmp0C = -2.285228997322329 * z2 + 0.4570457994644658, fTmp1B = 1.445305721320277 * z;
    vec3 dfC1 = vec3(2.0 * x, -2.0 * y, 0.0), dfS1 = vec3(2.0 * y, 2.0 * x, 0.0);
    vec3 dfC2 = vec3(fC1, -fS1, 0.0) + x * dfC1 - y * dfS1;
    vec3 dfS2 = vec3(fS1, fC1, 0.0) + x * dfS1 + y * dfC1;
    vec3 dT0C = vec3(0.0, 0.0, -2.0 * 2.285228997322329 * z);
    vec3 dT1B = vec3(0.0, 0.0, 1.445305721320277);
    dY[9] = -0.5900435899266435 * dfS2;
    dY[10] = dT1B * fS1 + fTmp1B * dfS1;
    dY[11] = dT0C * y + vec3(0.0, fTmp0C, 0.0);
    dY[12] = vec3(0.0, 0.0, 3.0 * 1.865881662950577 * z2 - 1.119528997770346);
    dY[13] = dT0C * x + vec3(fTmp0C, 0.0, 0.0);
    dY[14] = dT1B * fC1 + fTmp1B * dfC1;
    dY[15] = -0.5900435899266435 * dfC2;
}

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

bool all_finite(vec4 v) { return !any(isnan(v)) && !any(isinf(v)); }

#endif
