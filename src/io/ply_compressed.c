/* io: PlayCanvas's compressed PLY (".compressed.ply"; SuperSplat and splat-transform write it). A PLY
 * of three elements: `chunk` (per 256 Gaussians, float: min_x min_y min_z max_x max_y max_z,
 * min_scale_x..z max_scale_x..z, and optionally min_r min_g min_b max_r max_g max_b), `vertex`
 * (uint: packed_position, packed_rotation, packed_scale, packed_color) and, for SH degree 1..3,
 * `sh` (uchar f_rest_0.. in the 3DGS channel-major order). The writer puts the Gaussians in Morton
 * order of their positions (so a chunk's 256 lie close) and stores, a chunk's range [lo, hi] each:
 *
 *     position     11, 10, 11 bits of (v - lo) / (hi - lo) per axis: within (hi - lo) / 4094 on x and
 *                  z, (hi - lo) / 2046 on y, of the chunk's extent on that axis
 *     log-scale    the same 11/10/11 bits over the chunk's range clamped to [-20, 20]: within
 *                  (hi - lo) / 4094 (x, z) and / 2046 (y); a log-scale outside [-20, 20] is clamped
 *     colour       8 bits of (c - lo) / (hi - lo), c = 0.5 + SH_C0 dc per channel: c within
 *                  (hi - lo) / 510 of the chunk's colour range
 *     opacity      8 bits of sigmoid(opacity): within 0.5/255
 *     rotation     the unit quaternion's largest component's index (2 bits) and the other three, each
 *                  in [-1/sqrt 2, 1/sqrt 2], in 10 bits: each within 0.00035 (about 0.0014 rad)
 *     SH rest      8 bits of x/8 + 1/2, read as (n + 0.5)/256 (0 and 255 as 0 and 1): within 3/128
 *                  for x in [-4, 4], clamped outside
 *
 * SH bands that are zero throughout are not stored. Reading takes this layout with or without the chunk colour range (without it colours are the
 * 8 bits themselves), in any property order, and checks the element counts against each other and
 * the file's size before allocating; a stored opacity of 0 or 255 reads as the logit of 1e-6 or
 * 1 - 1e-6. */
#include "io/ply_util.h"

#define CHUNK 256

static const char *const k_chunk_props[18] = {
    "min_x", "min_y", "min_z", "max_x", "max_y", "max_z", "min_scale_x", "min_scale_y", "min_scale_z",
    "max_scale_x", "max_scale_y", "max_scale_z", "min_r", "min_g", "min_b", "max_r", "max_g", "max_b",
};
static const char *const k_vertex_props[4] = {"packed_position", "packed_rotation", "packed_scale", "packed_color"};
static const uint32_t k_rest[4] = {0, 9, 24, 45};

static uint32_t pack_unorm(double t, uint32_t bits)
{
    double top = (double)((1u << bits) - 1);
    return (uint32_t)fmin(fmax(floor(t * top + 0.5), 0.0), top);
}

static double unpack_unorm(uint32_t v, uint32_t bits) { return (double)(v & ((1u << bits) - 1)) / ((1u << bits) - 1); }

/* (v - lo) / (hi - lo) on [0, 1], as the decoder's lerp inverts it. */
static double unit(double v, float lo, float hi)
{
    if (!(hi > lo)) return 0.0;
    return fmin(fmax((v - lo) / ((double)hi - lo), 0.0), 1.0);
}

static double lerp(float lo, float hi, double t) { return lo * (1.0 - t) + hi * t; }

static uint32_t pack_111011(double x, double y, double z)
{
    return pack_unorm(x, 11) << 21 | pack_unorm(y, 10) << 11 | pack_unorm(z, 11);
}

/* The SH byte whose decoded value (sh_value) lies nearest x. */
static double sh_value(uint32_t n) { return n == 0 ? -4.0 : n == 255 ? 4.0 : ((n + 0.5) / 256.0 - 0.5) * 8.0; }

static uint8_t sh_byte(double x)
{
    int n = (int)fmin(fmax(floor((x / 8.0 + 0.5) * 256.0), 0.0), 255.0), best = n;
    for (int m = n - 1; m <= n + 1; m++)
        if (m >= 0 && m <= 255 && fabs(sh_value((uint32_t)m) - x) < fabs(sh_value((uint32_t)best) - x)) best = m;
    return (uint8_t)best;
}

static uint32_t pack_rotation(const float *quat)
{
    double q[4];
    splat__quat_unit(quat, q);
    int largest = 0;
    for (int k = 1; k < 4; k++)
        if (fabs(q[k]) > fabs(q[largest])) largest = k;
    double sign = q[largest] < 0 ? -1.0 : 1.0;
    uint32_t out = (uint32_t)largest;
    for (int k = 0; k < 4; k++)
        if (k != largest) out = out << 10 | pack_unorm(sign * q[k] * M_SQRT1_2 + 0.5, 10);
    return out;
}

static void unpack_rotation(uint32_t v, float *quat)
{
    double c[3] = {(unpack_unorm(v >> 20, 10) - 0.5) * M_SQRT2, (unpack_unorm(v >> 10, 10) - 0.5) * M_SQRT2,
                   (unpack_unorm(v, 10) - 0.5) * M_SQRT2};
    int largest = (int)(v >> 30);
    double m = sqrt(fmax(0.0, 1.0 - (c[0] * c[0] + c[1] * c[1] + c[2] * c[2])));
    for (int k = 0, j = 0; k < 4; k++) quat[k] = (float)(k == largest ? m : c[j++]);
}

/* ------------------------------------------------------------------------------ write */

splat_status splat__ply_compressed_write(const char *path, const splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene && scene->sh_degree <= 3 && scene->count <= scene->capacity);
    const uint32_t n = scene->count, n_chunks = splat__div_up(n, CHUNK), n_rest = k_rest[splat__scene_sh_used(scene)];
    const uint32_t per_channel = n_rest / 3;
    splat_status st = splat__scene_finite(path, scene, scene->sh_degree, err);
    if (st != SPLAT_OK) return st;
    uint32_t *order = splat__morton_order(scene);
    float *chunks = splat__malloc(((size_t)n_chunks + 1) * 18 * sizeof(float));
    uint8_t *rows = splat__malloc((size_t)CHUNK * (16 + n_rest));
    if (!order || !chunks || !rows) {
        splat__free(order), splat__free(chunks), splat__free(rows);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    /* each chunk's ranges first: the header is followed by every chunk row */
    for (uint32_t c = 0; c < n_chunks; c++) {
        float *ch = chunks + (size_t)c * 18;
        for (int k = 0; k < 18; k++) ch[k] = k % 6 < 3 ? INFINITY : -INFINITY;
        for (uint32_t j = c * CHUNK; j < SPLAT_MIN(n, (c + 1) * CHUNK); j++) {
            uint32_t i = order[j];
            for (int k = 0; k < 3; k++) {
                float v[3] = {scene->means[i * 3 + k], fminf(fmaxf(scene->log_scales[i * 3 + k], -20.0f), 20.0f),
                              (float)(0.5 + SPLAT_SH_C0 * scene->sh[(size_t)i * SPLAT_SH_COEFFS * 3 + k])};
                for (int g = 0; g < 3; g++) ch[6 * g + k] = fminf(ch[6 * g + k], v[g]), ch[6 * g + 3 + k] = fmaxf(ch[6 * g + 3 + k], v[g]);
            }
        }
    }
    char header[4096];
    int len = snprintf(header, sizeof header, "ply\nformat binary_little_endian 1.0\ncomment written by splatc\n"
                       "element chunk %u\n", n_chunks);
    for (int k = 0; k < 18; k++) len += snprintf(header + len, sizeof header - (size_t)len, "property float %s\n", k_chunk_props[k]);
    len += snprintf(header + len, sizeof header - (size_t)len, "element vertex %u\n", n);
    for (int k = 0; k < 4; k++) len += snprintf(header + len, sizeof header - (size_t)len, "property uint %s\n", k_vertex_props[k]);
    if (n_rest) len += snprintf(header + len, sizeof header - (size_t)len, "element sh %u\n", n);
    for (uint32_t k = 0; k < n_rest; k++) len += snprintf(header + len, sizeof header - (size_t)len, "property uchar f_rest_%u\n", k);
    len += snprintf(header + len, sizeof header - (size_t)len, "end_header\n");
    SPLAT_ASSERT(len > 0 && (size_t)len < sizeof header);

    splat_atomic_file f;
    st = splat__atomic_open(&f, path, err);
    if (st == SPLAT_OK) st = splat__atomic_write(&f, header, (size_t)len, err);
    for (uint32_t c = 0; c < n_chunks && st == SPLAT_OK; c++) {
        uint8_t b[18 * 4];
        for (int k = 0; k < 18; k++) {
            uint32_t u;
            memcpy(&u, &chunks[(size_t)c * 18 + k], 4);
            splat__store_u32(b + 4 * k, u);
        }
        st = splat__atomic_write(&f, b, sizeof b, err);
    }
    /* the vertex element, then the sh element: two passes in the same order */
    for (int pass = 0; pass < (n_rest ? 2 : 1) && st == SPLAT_OK; pass++)
        for (uint32_t c = 0; c < n_chunks && st == SPLAT_OK; c++) {
            const float *ch = chunks + (size_t)c * 18;
            uint8_t *p = rows;
            for (uint32_t j = c * CHUNK; j < SPLAT_MIN(n, (c + 1) * CHUNK); j++) {
                uint32_t i = order[j];
                const float *m = scene->means + (size_t)i * 3, *s = scene->log_scales + (size_t)i * 3;
                const float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
                if (pass == 1) {
                    for (uint32_t col = 0; col < 3; col++)
                        for (uint32_t k = 1; k <= per_channel; k++) *p++ = sh_byte(sh[k * 3 + col]);
                    continue;
                }
                double rgb[3];
                for (int k = 0; k < 3; k++) rgb[k] = unit(0.5 + SPLAT_SH_C0 * sh[k], ch[12 + k], ch[15 + k]);
                uint32_t v[4] = {
                    pack_111011(unit(m[0], ch[0], ch[3]), unit(m[1], ch[1], ch[4]), unit(m[2], ch[2], ch[5])),
                    pack_rotation(scene->quats + (size_t)i * 4),
                    pack_111011(unit(s[0], ch[6], ch[9]), unit(s[1], ch[7], ch[10]), unit(s[2], ch[8], ch[11])),
                    pack_unorm(rgb[0], 8) << 24 | pack_unorm(rgb[1], 8) << 16 | pack_unorm(rgb[2], 8) << 8 |
                        pack_unorm(splat__sigmoid(scene->opacities[i]), 8),
                };
                for (int k = 0; k < 4; k++, p += 4) splat__store_u32(p, v[k]);
            }
            st = splat__atomic_write(&f, rows, (size_t)(p - rows), err);
        }
    splat__free(order), splat__free(chunks), splat__free(rows);
    if (st != SPLAT_OK) {
        if (f.fp) splat__atomic_abort(&f);
        return st;
    }
    return splat__atomic_commit(&f, err);
}

/* ------------------------------------------------------------------------------- read */

bool splat__ply_is_compressed(const splat_ply_header *h)
{
    const splat_ply_element *v = splat__ply_element(h, "vertex");
    return splat__ply_element(h, "chunk") && v && splat__ply_prop(v, "packed_position") >= 0;
}

/* Reads element e's rows whole (its size already checked against the file by the seek). */
static splat_status read_element(const char *path, FILE *fp, const splat_ply_header *h, const splat_ply_element *e,
                                 uint8_t **out, splat_error *err)
{
    *out = NULL;
    splat_status st = splat__ply_seek(path, fp, h, e, err);
    if (st != SPLAT_OK) return st;
    size_t n = (size_t)(e->count * e->row_bytes);
    *out = splat__malloc(n + 1);
    if (!*out) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    if (fread(*out, 1, n, fp) != n) return splat__fail(err, SPLAT_ERR_IO, "%s: read failed in element %s", path, e->name);
    return SPLAT_OK;
}

/* The byte offset of each named property in e's rows, checking its type; -1 for an absent
 * optional one. */
static splat_status offsets(const char *path, const splat_ply_element *e, const char *const *names, uint32_t n,
                            uint32_t required, uint8_t type, long *off, splat_error *err)
{
    static const char *const type_names[] = {"", "char", "uchar", "short", "ushort", "int", "uint", "float", "double"};
    for (uint32_t k = 0; k < n; k++) {
        int j = splat__ply_prop(e, names[k]);
        off[k] = -1;
        if (j < 0) {
            if (k < required)
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: compressed PLY: element %s lacks property \"%s\"", path,
                                   e->name, names[k]);
            continue;
        }
        if (e->props[j].type != type || e->props[j].list_count)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: compressed PLY: %s property \"%s\" must be %s", path,
                               e->name, names[k], type_names[type]);
        off[k] = 0;
        for (int q = 0; q < j; q++) off[k] += splat__ply_type_size(e->props[q].type);
    }
    return SPLAT_OK;
}

splat_status splat__ply_compressed_decode(const char *path, FILE *fp, const splat_ply_header *h, splat_scene *scene,
                                          splat_error *err)
{
    const splat_ply_element *ce = splat__ply_element(h, "chunk"), *ve = splat__ply_element(h, "vertex");
    const splat_ply_element *se = splat__ply_element(h, "sh");
    if (h->ascii) return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: an ASCII compressed PLY is not supported", path);
    if (ve->count > UINT32_MAX)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: vertex count %llu is too large", path,
                           (unsigned long long)ve->count);
    const uint32_t n = (uint32_t)ve->count;
    if (ce->count != splat__div_up(n, CHUNK) && !(n == 0 && ce->count == 0))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: compressed PLY: %llu chunks for %u vertices (expected %u, one "
                           "per 256)", path, (unsigned long long)ce->count, n, splat__div_up(n, CHUNK));
    uint32_t degree = 0;
    char rest_names[45][24];
    const char *rest_ptrs[45];
    if (se) {
        for (degree = 1; degree <= 3 && k_rest[degree] != se->n_props; degree++) {}
        if (degree > 3 || se->count != n)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: compressed PLY: element sh has %u properties and %llu rows; "
                               "expected 9, 24 or 45 and one row per vertex", path, se->n_props,
                               (unsigned long long)se->count);
        for (uint32_t k = 0; k < k_rest[degree]; k++) {
            snprintf(rest_names[k], sizeof rest_names[k], "f_rest_%u", k);
            rest_ptrs[k] = rest_names[k];
        }
    }
    long coff[18], voff[4], soff[45];
    splat_status st = offsets(path, ce, k_chunk_props, 18, 12, SPLAT_PLY_F32, coff, err);
    if (st == SPLAT_OK) st = offsets(path, ve, k_vertex_props, 4, 4, SPLAT_PLY_U32, voff, err);
    if (st == SPLAT_OK && se) st = offsets(path, se, rest_ptrs, k_rest[degree], k_rest[degree], SPLAT_PLY_U8, soff, err);
    bool colour_range = coff[12] >= 0;
    for (int k = 13; k < 18 && st == SPLAT_OK; k++)
        if ((coff[k] >= 0) != colour_range)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: compressed PLY: the chunk colour range is incomplete", path);
    uint8_t *cd = NULL, *vd = NULL, *sd = NULL;
    if (st == SPLAT_OK) st = read_element(path, fp, h, ce, &cd, err);
    if (st == SPLAT_OK) st = read_element(path, fp, h, ve, &vd, err);
    if (st == SPLAT_OK && se) st = read_element(path, fp, h, se, &sd, err);
    if (st == SPLAT_OK) st = splat__scene_init(scene, n, err);
    for (uint32_t c = 0; c < ce->count && st == SPLAT_OK; c++) {
        float ch[18];
        for (int k = 0; k < 18; k++) {
            ch[k] = coff[k] >= 0 ? (float)splat__ply_value(cd + c * ce->row_bytes + coff[k], SPLAT_PLY_F32, false) : 0.0f;
            if (!isfinite(ch[k])) {
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: compressed PLY: chunk %u: %s is not finite", path, c,
                                 k_chunk_props[k]);
                break;
            }
        }
        for (uint32_t i = c * CHUNK; i < SPLAT_MIN(n, (c + 1) * CHUNK) && st == SPLAT_OK; i++) {
            const uint8_t *row = vd + (size_t)i * ve->row_bytes;
            uint32_t pos = splat__load_u32(row + voff[0]), rot = splat__load_u32(row + voff[1]);
            uint32_t scl = splat__load_u32(row + voff[2]), col = splat__load_u32(row + voff[3]);
            double pt[3] = {unpack_unorm(pos >> 21, 11), unpack_unorm(pos >> 11, 10), unpack_unorm(pos, 11)};
            double st3[3] = {unpack_unorm(scl >> 21, 11), unpack_unorm(scl >> 11, 10), unpack_unorm(scl, 11)};
            float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
            memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof *sh);
            for (int k = 0; k < 3; k++) {
                double cv = unpack_unorm(col >> (24 - 8 * k), 8);
                if (colour_range) cv = lerp(ch[12 + k], ch[15 + k], cv);
                double v[3] = {lerp(ch[k], ch[3 + k], pt[k]), lerp(ch[6 + k], ch[9 + k], st3[k]), (cv - 0.5) / SPLAT_SH_C0};
                if (!splat__finite_float(v[0]) || !splat__finite_float(v[1]) || !splat__finite_float(v[2])) {
                    st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: compressed PLY: vertex %u is not finite as a float",
                                     path, i);
                    break;
                }
                scene->means[i * 3 + k] = (float)v[0];
                scene->log_scales[i * 3 + k] = (float)v[1];
                sh[k] = (float)v[2];
            }
            scene->opacities[i] = splat__logit_clamped(unpack_unorm(col, 8));
            unpack_rotation(rot, scene->quats + (size_t)i * 4);
            const uint32_t per_channel = k_rest[degree] / 3;
            for (uint32_t j = 0; j < k_rest[degree]; j++)
                sh[(1 + j % per_channel) * 3 + j / per_channel] = (float)sh_value(sd[(size_t)i * se->row_bytes + soff[j]]);
        }
    }
    splat__free(cd), splat__free(vd), splat__free(sd);
    if (st != SPLAT_OK) return st; /* the caller frees the scene */
    scene->count = n;
    scene->sh_degree = degree;
    return SPLAT_OK;
}
