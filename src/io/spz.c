/* io: Niantic's SPZ. splatc writes version 3 (a 16-byte header and the attribute arrays, gzipped
 * whole), which every SPZ reader takes, and reads versions 1 to 3 (gzip) and 4 (a 32-byte header,
 * a table of contents and one zstd stream per attribute; splat-transform writes it by default).
 * SPZ's axes are right, up, back; splatc's (the PLY's, COLMAP's) right, down, front: y and z flip
 * on the way in and out, with the quaternion and the SH coefficients that change sign with them.
 * A version-4 file may name other axes (Adobe's coordinate-system extension): the ones that
 * differ from these by axis flips are read; rotated ones are refused. What the writer keeps:
 *
 *     position   24-bit fixed point with 12 fractional bits: within 2^-13 (1.2e-4) for |x| < 2048;
 *                a larger scene gets fewer fractional bits (the header says how many): within
 *                2^-(f+1) for |x| < 2^(23-f); past 2^23 it is refused
 *     log-scale  8 bits of 16 (s + 10): within 1/32 on [-10, 5.9], clamped outside
 *     colour     8 bits of 0.15 * 255 dc + 127.5: dc within 0.5 / 38.25 = 0.0131 on [-3.33, 3.33]
 *     opacity    8 bits of sigmoid(opacity): within 0.5/255
 *     rotation   the unit quaternion's three smallest components, 9 bits and a sign each: each within
 *                0.00069 (about 0.0028 rad)
 *     SH rest    8 bits of 128 x + 128 (splatc keeps all 8; other writers drop low bits): within 1/256
 *                for x in [-1, 127/128], clamped outside
 *
 * SH bands that are zero throughout are not stored. Reading refuses SH degree 4 (splatc stops at 3), checks that the decompressed data holds every
 * array the header's count needs before allocating the scene, and reads a stored opacity of 0 or
 * 255 as the logit of 1e-6 or 1 - 1e-6. Extension records are skipped, named in the warning. */
#include "io/io_util.h"

#include <errno.h>
#include <zlib.h>
#include <zstd.h>

#define SPZ_MAGIC 0x5053474eu
#define LEGACY_HEADER 16
#define NGSP_HEADER 32
#define EXT_COORDINATES 0xADBE0003u

static const uint32_t k_dim[5] = {0, 3, 8, 15, 24};
/* The sign each of the 15 SH coefficients (above degree 0) takes when the axes flip by (x, y, z):
 * the parity of the basis function in each flipped axis. */
static float sh_flip(uint32_t k, const float s[3])
{
    const float x = s[0], y = s[1], z = s[2];
    const float f[15] = {y, z, x, x * y, y * z, 1, x * z, 1, y, x * y * z, y, z, x, z, x};
    return f[k];
}

/* The flips between splatc's axes (right, down, front) and a standard-family SPZ system
 * (1..8: bit 0 right, bit 1 up, bit 2 front, of code - 1). */
static void axis_flips(uint32_t system, float s[3])
{
    uint32_t b = system - 1;
    s[0] = (b & 1) ? 1.0f : -1.0f;
    s[1] = (b & 2) ? -1.0f : 1.0f;
    s[2] = (b & 4) ? 1.0f : -1.0f;
}

static void *z_alloc(void *opaque, uInt items, uInt size)
{
    (void)opaque;
    return splat__calloc(items, size);
}

static void z_free(void *opaque, void *p)
{
    (void)opaque;
    splat__free(p);
}

/* ------------------------------------------------------------------------------ write */

splat_status splat__spz_write(const char *path, const splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene && scene->sh_degree <= 3 && scene->count <= scene->capacity);
    const uint32_t n = scene->count, degree = splat__scene_sh_used(scene), dim = k_dim[degree];
    splat_status st = splat__scene_finite(path, scene, scene->sh_degree, err);
    if (st != SPLAT_OK) return st;
    double far = 0;
    for (size_t i = 0; i < (size_t)n * 3; i++) far = fmax(far, fabs(scene->means[i]));
    int frac = 12;
    while (frac > 0 && far * ldexp(1.0, frac) >= 8388607.0) frac--;
    if (far * ldexp(1.0, frac) >= 8388607.0)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: a position of %g is past SPZ's 24-bit range (8388607)", path,
                           far);

    const size_t per = 9 + 1 + 3 + 3 + 4 + (size_t)dim * 3, size = LEGACY_HEADER + (size_t)n * per;
    uint8_t *raw = splat__malloc(size), *out = splat__malloc(1 << 16);
    if (!raw || !out) {
        splat__free(raw), splat__free(out);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    splat__store_u32(raw, SPZ_MAGIC);
    splat__store_u32(raw + 4, 3);
    splat__store_u32(raw + 8, n);
    raw[12] = (uint8_t)degree, raw[13] = (uint8_t)frac, raw[14] = 0, raw[15] = 0;
    uint8_t *pos = raw + LEGACY_HEADER, *alpha = pos + (size_t)n * 9, *col = alpha + n, *scl = col + (size_t)n * 3;
    uint8_t *rot = scl + (size_t)n * 3, *shp = rot + (size_t)n * 4;
    const float flip[3] = {1, -1, -1}; /* right-down-front to right-up-back */
    for (uint32_t i = 0; i < n; i++) {
        const float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
        for (int k = 0; k < 3; k++) {
            int32_t fixed = (int32_t)lrint(flip[k] * scene->means[i * 3 + k] * ldexp(1.0, frac));
            for (int b = 0; b < 3; b++) pos[(size_t)i * 9 + (size_t)k * 3 + (size_t)b] = (uint8_t)((uint32_t)fixed >> (8 * b));
            scl[(size_t)i * 3 + (size_t)k] = (uint8_t)fmin(fmax(round((scene->log_scales[i * 3 + k] + 10.0) * 16.0), 0), 255);
            col[(size_t)i * 3 + (size_t)k] = (uint8_t)fmin(fmax(round(sh[k] * (0.15 * 255.0) + 127.5), 0), 255);
        }
        alpha[i] = (uint8_t)fmin(fmax(round(splat__sigmoid(scene->opacities[i]) * 255.0), 0), 255);
        /* SPZ's quaternion order is x, y, z, w */
        double w[4], q[4];
        splat__quat_unit(scene->quats + (size_t)i * 4, w);
        q[0] = w[1] * flip[1] * flip[2], q[1] = w[2] * flip[0] * flip[2], q[2] = w[3] * flip[0] * flip[1], q[3] = w[0];
        uint32_t largest = 0;
        for (uint32_t k = 1; k < 4; k++)
            if (fabs(q[k]) > fabs(q[largest])) largest = k;
        uint32_t negate = q[largest] < 0, comp = largest;
        for (uint32_t k = 0; k < 4; k++)
            if (k != largest) {
                uint32_t mag = (uint32_t)fmin(floor(511.0 * fabs(q[k]) / M_SQRT1_2 + 0.5), 511.0);
                comp = comp << 10 | (uint32_t)((q[k] < 0) ^ negate) << 9 | mag;
            }
        splat__store_u32(rot + (size_t)i * 4, comp);
        for (uint32_t k = 0; k < dim; k++)
            for (int c = 0; c < 3; c++) {
                double x = sh[(1 + k) * 3 + (uint32_t)c] * sh_flip(k, flip);
                shp[((size_t)i * dim + k) * 3 + (size_t)c] = (uint8_t)fmin(fmax(round(x * 128.0) + 128.0, 0), 255);
            }
    }

    splat_atomic_file f;
    z_stream z = {.zalloc = z_alloc, .zfree = z_free};
    st = splat__atomic_open(&f, path, err);
    bool zok = st == SPLAT_OK && deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                              Z_DEFAULT_STRATEGY) == Z_OK;
    if (st == SPLAT_OK && !zok) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory (gzip)", path);
    /* zlib's counts are 32-bit: feed the input in pieces */
    size_t fed = 0;
    for (int r = Z_OK; st == SPLAT_OK && r != Z_STREAM_END;) {
        if (z.avail_in == 0 && fed < size) {
            z.next_in = raw + fed;
            z.avail_in = (uInt)SPLAT_MIN(size - fed, (size_t)1 << 30);
            fed += z.avail_in;
        }
        z.next_out = out, z.avail_out = 1 << 16;
        r = deflate(&z, fed == size ? Z_FINISH : Z_NO_FLUSH);
        if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) st = splat__fail(err, SPLAT_ERR_IO, "%s: gzip failed", path);
        else st = splat__atomic_write(&f, out, (size_t)(1 << 16) - z.avail_out, err);
    }
    if (zok) deflateEnd(&z);
    splat__free(raw), splat__free(out);
    if (st != SPLAT_OK) {
        splat__atomic_abort(&f);
        return st;
    }
    return splat__atomic_commit(&f, err);
}

/* ------------------------------------------------------------------------------- read */

/* A growing byte buffer that holds only what decompression really produced. */
typedef struct grow {
    uint8_t *p;
    size_t n, cap;
} grow;

static bool grow_to(grow *g, size_t need)
{
    if (need <= g->cap) return true;
    size_t cap = SPLAT_MAX(g->cap * 2, need);
    cap = SPLAT_MAX(cap, (size_t)1 << 16);
    uint8_t *p = splat__realloc(g->p, cap);
    if (!p) return false;
    g->p = p, g->cap = cap;
    return true;
}

static splat_status gunzip(const char *path, const uint8_t *in, size_t n, grow *out, splat_error *err)
{
    z_stream z = {.zalloc = z_alloc, .zfree = z_free};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory (gunzip)", path);
    splat_status st = SPLAT_OK;
    size_t fed = 0;
    for (int r = Z_OK; r != Z_STREAM_END;) {
        if (z.avail_in == 0) {
            if (fed == n) {
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the gzip stream ends early", path);
                break;
            }
            z.next_in = (Bytef *)(uintptr_t)(in + fed);
            z.avail_in = (uInt)SPLAT_MIN(n - fed, (size_t)1 << 30);
            fed += z.avail_in;
        }
        if (out->cap - out->n < 4096 && !grow_to(out, out->n + 4096)) {
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            break;
        }
        z.next_out = out->p + out->n;
        z.avail_out = (uInt)SPLAT_MIN(out->cap - out->n, (size_t)1 << 30);
        uInt before = z.avail_out;
        r = inflate(&z, Z_NO_FLUSH);
        out->n += before - z.avail_out;
        if (r == Z_MEM_ERROR) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        else if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: corrupt gzip data (%s)", path, z.msg ? z.msg : "inflate failed");
        if (st != SPLAT_OK) break;
    }
    inflateEnd(&z);
    return st;
}

/* One zstd stream of exactly `want` bytes into out (grown as the data arrives). */
static splat_status unzstd(const char *path, uint32_t index, const uint8_t *in, size_t n, size_t want, grow *out,
                           splat_error *err)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    splat_status st = SPLAT_OK;
    ZSTD_inBuffer zin = {in, n, 0};
    size_t start = out->n, r = 1;
    while (st == SPLAT_OK && r != 0) {
        size_t room = SPLAT_MIN((size_t)1 << 20, want - (out->n - start) + 1);
        if (!grow_to(out, out->n + room)) {
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            break;
        }
        ZSTD_outBuffer zout = {out->p + out->n, room, 0};
        r = ZSTD_decompressStream(z, &zout, &zin);
        out->n += zout.pos;
        if (ZSTD_isError(r))
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: stream %u: corrupt zstd data (%s)", path, index,
                             ZSTD_getErrorName(r));
        else if (out->n - start > want)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: stream %u holds more than the %zu bytes the header says", path,
                             index, want);
        else if (r != 0 && zin.pos == zin.size && zout.pos < zout.size)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: stream %u ends early", path, index);
    }
    if (st == SPLAT_OK && (out->n - start != want || zin.pos != zin.size))
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: stream %u holds %zu bytes where the header says %zu", path, index,
                         out->n - start, want);
    ZSTD_freeDStream(z);
    return st;
}

typedef struct spz_info {
    uint32_t version, n, degree, frac, system;
    size_t pos_bytes, rot_bytes;
    const uint8_t *data;     /* the attribute arrays, in order, after the header */
} spz_info;

/* Reads extension records from [p, p + n): the coordinate system, and a note of the others. */
static splat_status extensions(const char *path, const uint8_t *p, size_t n, spz_info *s, splat_load_info *info,
                               splat_error *err)
{
    char note[256] = "";
    size_t len = 0;
    while (n > 0) {
        if (n < 8) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: a truncated extension record", path);
        uint32_t type = splat__load_u32(p), bytes = splat__load_u32(p + 4);
        if (bytes > n - 8) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: extension 0x%08x runs past its block", path, type);
        if (type == EXT_COORDINATES && bytes == 4) {
            s->system = splat__load_u32(p + 8);
            if (s->system > 8)
                return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: coordinate system %u (a rotated one) is not "
                                   "supported", path, s->system);
            if (s->system == 0) s->system = 4; /* unspecified: SPZ's own, right-up-back */
        } else if (len < sizeof note - 16) {
            len += (size_t)snprintf(note + len, sizeof note - len, "%s0x%08x", len ? ", " : "", type);
        }
        p += 8 + (size_t)bytes, n -= 8 + (size_t)bytes;
    }
    if (len && info)
        snprintf(info->warning, sizeof info->warning, "%s: skipped SPZ extensions splatc does not use: %s", path, note);
    return SPLAT_OK;
}

static splat_status header_fields(const char *path, spz_info *s, splat_error *err)
{
    if (s->degree > 4) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: SH degree %u is not SPZ's (0..4)", path, s->degree);
    if (s->degree == 4)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: SH degree 4 is not supported (splatc stops at 3)", path);
    if (s->frac > 24) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %u fractional bits are more than 24", path, s->frac);
    s->pos_bytes = s->version == 1 ? 6 : 9;
    s->rot_bytes = s->version >= 3 ? 4 : 3;
    return SPLAT_OK;
}

static size_t per_point(const spz_info *s) { return s->pos_bytes + 1 + 3 + 3 + s->rot_bytes + (size_t)k_dim[s->degree] * 3; }

static splat_status read_legacy(const char *path, const uint8_t *file, size_t size, grow *raw, spz_info *s,
                                splat_load_info *info, splat_error *err)
{
    splat_status st = gunzip(path, file, size, raw, err);
    if (st != SPLAT_OK) return st;
    if (raw->n < LEGACY_HEADER || splat__load_u32(raw->p) != SPZ_MAGIC)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: not an SPZ file (no NGSP header inside the gzip stream)", path);
    s->version = splat__load_u32(raw->p + 4);
    s->n = splat__load_u32(raw->p + 8);
    s->degree = raw->p[12], s->frac = raw->p[13];
    uint8_t flags = raw->p[14];
    if (s->version < 1 || s->version > 3)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: SPZ version %u in a gzip stream is not supported "
                           "(1 to 3)", path, s->version);
    if ((st = header_fields(path, s, err)) != SPLAT_OK) return st;
    size_t have = raw->n - LEGACY_HEADER;
    if (s->n > have / per_point(s))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: %u Gaussians need %zu bytes, the stream holds %zu",
                           path, s->n, (size_t)s->n * per_point(s), have);
    s->data = raw->p + LEGACY_HEADER;
    if (flags & 2) {
        size_t used = (size_t)s->n * per_point(s);
        return extensions(path, s->data + used, have - used, s, info, err);
    }
    return SPLAT_OK;
}

static splat_status read_ngsp(const char *path, const uint8_t *file, size_t size, grow *raw, spz_info *s,
                              splat_load_info *info, splat_error *err)
{
    if (size < NGSP_HEADER) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: the header needs 32 bytes", path);
    s->version = splat__load_u32(file + 4);
    s->n = splat__load_u32(file + 8);
    s->degree = file[12], s->frac = file[13];
    uint8_t flags = file[14], n_streams = file[15];
    uint32_t toc = splat__load_u32(file + 16);
    if (s->version != 4)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: SPZ version %u is not supported (1 to 4)", path, s->version);
    splat_status st = header_fields(path, s, err);
    if (st != SPLAT_OK) return st;
    if (toc < NGSP_HEADER || toc > size || (size - toc) / 16 < n_streams)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the table of contents (at %u, %u streams) lies outside the "
                           "file", path, toc, n_streams);
    if (flags & 2) st = extensions(path, file + NGSP_HEADER, toc - NGSP_HEADER, s, info, err);
    if (st != SPLAT_OK) return st;
    /* the streams: each attribute that has bytes, in the legacy order */
    const size_t widths[6] = {s->pos_bytes, 1, 3, 3, s->rot_bytes, (size_t)k_dim[s->degree] * 3};
    uint32_t want_streams = 0;
    for (int k = 0; k < 6; k++) want_streams += widths[k] > 0 && s->n > 0;
    if (n_streams != want_streams)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: %u streams where %u Gaussians of SH degree %u need %u", path,
                           n_streams, s->n, s->degree, want_streams);
    size_t at = (size_t)toc + (size_t)n_streams * 16;
    for (uint32_t k = 0, j = 0; k < 6 && st == SPLAT_OK; k++) {
        if (widths[k] == 0 || s->n == 0) continue;
        const uint8_t *e = file + toc + (size_t)j * 16;
        uint64_t csize = splat__load_u32(e) | (uint64_t)splat__load_u32(e + 4) << 32;
        uint64_t usize = splat__load_u32(e + 8) | (uint64_t)splat__load_u32(e + 12) << 32;
        if (usize != (uint64_t)s->n * widths[k])
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: stream %u says %llu bytes; %u Gaussians need %llu", path, j,
                               (unsigned long long)usize, s->n, (unsigned long long)s->n * widths[k]);
        if (csize > size - at)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: stream %u runs past the end of the file", path, j);
        st = unzstd(path, j, file + at, (size_t)csize, (size_t)usize, raw, err);
        at += (size_t)csize, j++;
    }
    if (st == SPLAT_OK && at != size)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %zu bytes after the last stream", path, size - at);
    s->data = raw->p;
    return st;
}

splat_status splat__spz_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    memset(scene, 0, sizeof *scene);
    if (info) memset(info, 0, sizeof *info);
    char *file = NULL;
    size_t size = 0;
    grow raw = {0};
    spz_info s = {.system = 4};
    splat_status st = splat__read_file(path, SIZE_MAX / 2, &file, &size, err);
    if (st != SPLAT_OK) return st;
    const uint8_t *f = (const uint8_t *)file;
    if (size >= 2 && f[0] == 0x1f && f[1] == 0x8b) st = read_legacy(path, f, size, &raw, &s, info, err);
    else if (size >= 4 && splat__load_u32(f) == SPZ_MAGIC) st = read_ngsp(path, f, size, &raw, &s, info, err);
    else st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: not an SPZ file (neither gzip nor an NGSP header)", path);
    if (st == SPLAT_OK) st = splat__scene_init(scene, s.n, err);
    /* an empty version-4 file has no streams, and no data to point into */
    if (st == SPLAT_OK && s.n > 0) {
        const uint32_t n = s.n, dim = k_dim[s.degree];
        const uint8_t *pos = s.data, *alpha = pos + (size_t)n * s.pos_bytes, *col = alpha + n;
        const uint8_t *scl = col + (size_t)n * 3, *rot = scl + (size_t)n * 3, *shp = rot + (size_t)n * s.rot_bytes;
        float flip[3];
        axis_flips(s.system, flip);
        const double unit = ldexp(1.0, -(int)s.frac);
        for (uint32_t i = 0; i < n; i++) {
            float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
            memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof *sh);
            for (int k = 0; k < 3; k++) {
                double v;
                if (s.version == 1) {
                    const uint8_t *h = pos + (size_t)i * 6 + (size_t)k * 2;
                    v = splat__f16_to_f32((uint16_t)(h[0] | h[1] << 8));
                } else {
                    const uint8_t *b = pos + (size_t)i * 9 + (size_t)k * 3;
                    int32_t fixed = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16);
                    if (fixed & 0x800000) fixed -= 0x1000000;
                    v = fixed * unit;
                }
                if (!isfinite(v)) {
                    st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: Gaussian %u: the position is not finite", path, i);
                    break;
                }
                scene->means[i * 3 + k] = (float)(flip[k] * v);
                scene->log_scales[i * 3 + k] = (float)(scl[(size_t)i * 3 + (size_t)k] / 16.0 - 10.0);
                sh[k] = (float)((col[(size_t)i * 3 + (size_t)k] / 255.0 - 0.5) / 0.15);
            }
            if (st != SPLAT_OK) break;
            scene->opacities[i] = splat__logit_clamped(alpha[i] / 255.0);
            double q[4] = {0, 0, 0, 0}; /* x, y, z, w */
            const uint8_t *r = rot + (size_t)i * s.rot_bytes;
            if (s.rot_bytes == 4) {
                uint32_t comp = splat__load_u32(r), largest = comp >> 30;
                double sum = 0;
                for (int k = 3; k >= 0; k--) {
                    if ((uint32_t)k == largest) continue;
                    q[k] = M_SQRT1_2 * (comp & 511) / 511.0 * ((comp >> 9) & 1 ? -1 : 1);
                    sum += q[k] * q[k];
                    comp >>= 10;
                }
                q[largest] = sqrt(fmax(0.0, 1.0 - sum));
            } else {
                for (int k = 0; k < 3; k++) q[k] = r[k] / 127.5 - 1.0;
                q[3] = sqrt(fmax(0.0, 1.0 - (q[0] * q[0] + q[1] * q[1] + q[2] * q[2])));
            }
            float *out = scene->quats + (size_t)i * 4;
            out[0] = (float)q[3];
            out[1] = (float)(q[0] * flip[1] * flip[2]);
            out[2] = (float)(q[1] * flip[0] * flip[2]);
            out[3] = (float)(q[2] * flip[0] * flip[1]);
            for (uint32_t k = 0; k < dim; k++)
                for (int c = 0; c < 3; c++)
                    sh[(1 + k) * 3 + (uint32_t)c] =
                        (float)((shp[((size_t)i * dim + k) * 3 + (size_t)c] - 128.0) / 128.0 * sh_flip(k, flip));
        }
    }
    splat__free(file);
    splat__free(raw.p);
    if (st != SPLAT_OK) {
        splat__scene_free(scene);
        if (info) info->warning[0] = 0;
        return st;
    }
    scene->count = s.n;
    scene->sh_degree = s.degree;
    if (info) info->format = SPLAT_FILE_SPZ;
    return SPLAT_OK;
}
