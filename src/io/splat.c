/* io: antimatter15's .splat, the web viewers' oldest format: a bare array of 32-byte records, no
 * header, in the scene's order:
 *
 *     position   3 x float32     exact
 *     scale      3 x float32     exp(log-scale): the log-scale back to about 1e-7 relative (float
 *                                rounding of exp and log); past float's range clamped to
 *                                [smallest subnormal, FLT_MAX]
 *     colour     4 x uint8       r, g, b = round(255 (0.5 + SH_C0 dc)) clamped to [0, 255]: the colour
 *                                0.5 + SH_C0 dc within 0.5/255 where it is in [0, 1]; clamped outside
 *                                a = round(255 sigmoid(opacity)): opacity within 0.5/255
 *     rotation   4 x uint8       round(128 q + 128) of the unit quaternion (w, x, y, z), clamped to
 *                                [0, 255]; read as (b - 128) / 128, normalised: within 0.011 rad
 *
 * SH above degree 0 is not stored (read back as 0). Reading: the file must be a whole number of
 * records; a non-finite position, or a scale that is not a positive finite number, is an error
 * naming the record; a stored opacity of 0 or 255 reads as the logit of 1e-6 or 1 - 1e-6. */
#include "io/io_util.h"

#include <errno.h>

#define RECORD 32
#define RECORDS_PER_CHUNK 4096

static uint8_t byte_of(double v) { return (uint8_t)fmin(fmax(round(v), 0.0), 255.0); }

splat_status splat__splat_write(const char *path, const splat_scene *scene, splat_error *err)
{
    SPLAT_ASSERT(path && scene && scene->count <= scene->capacity);
    splat_status st = splat__scene_finite(path, scene, 0, err);
    if (st != SPLAT_OK) return st;
    splat_atomic_file f;
    st = splat__atomic_open(&f, path, err);
    if (st != SPLAT_OK) return st;
    uint8_t *chunk = splat__malloc((size_t)RECORDS_PER_CHUNK * RECORD);
    if (!chunk) {
        splat__atomic_abort(&f);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    for (uint32_t i0 = 0; i0 < scene->count && st == SPLAT_OK; i0 += RECORDS_PER_CHUNK) {
        uint32_t rows = (uint32_t)SPLAT_MIN(scene->count - i0, (uint32_t)RECORDS_PER_CHUNK);
        for (uint32_t r = 0; r < rows; r++) {
            uint32_t i = i0 + r;
            uint8_t *p = chunk + (size_t)r * RECORD;
            float v[6];
            for (int k = 0; k < 3; k++) {
                v[k] = scene->means[i * 3 + k];
                double s = exp((double)scene->log_scales[i * 3 + k]);
                v[3 + k] = (float)fmin(fmax(s, 0x1p-149), 0x1.fffffep+127);
            }
            for (int k = 0; k < 6; k++) {
                uint32_t u;
                memcpy(&u, &v[k], 4);
                splat__store_u32(p + 4 * k, u);
            }
            const float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
            for (int c = 0; c < 3; c++) p[24 + c] = byte_of(255.0 * (0.5 + SPLAT_SH_C0 * sh[c]));
            p[27] = byte_of(255.0 * splat__sigmoid(scene->opacities[i]));
            double q[4];
            splat__quat_unit(scene->quats + (size_t)i * 4, q);
            for (int k = 0; k < 4; k++) p[28 + k] = byte_of(128.0 * q[k] + 128.0);
        }
        st = splat__atomic_write(&f, chunk, (size_t)rows * RECORD, err);
    }
    splat__free(chunk);
    if (st != SPLAT_OK) {
        splat__atomic_abort(&f);
        return st;
    }
    return splat__atomic_commit(&f, err);
}

splat_status splat__splat_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    memset(scene, 0, sizeof *scene);
    if (info) memset(info, 0, sizeof *info);
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    splat_status st = SPLAT_OK;
    uint8_t *chunk = NULL;
    long long size = splat__file_size(fp);
    if (size < 0) st = splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
    else if (size % RECORD != 0)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %lld bytes is not a whole number of 32-byte .splat records "
                         "(truncated, or not a .splat file)", path, size);
    else if (size / RECORD > UINT32_MAX)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %lld records are too many", path, size / RECORD);
    if (st == SPLAT_OK) st = splat__scene_init(scene, (uint32_t)(size / RECORD), err);
    if (st == SPLAT_OK && !(chunk = splat__malloc((size_t)RECORDS_PER_CHUNK * RECORD)))
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    uint32_t n = st == SPLAT_OK ? (uint32_t)(size / RECORD) : 0;
    for (uint32_t i0 = 0; i0 < n && st == SPLAT_OK; i0 += RECORDS_PER_CHUNK) {
        uint32_t rows = (uint32_t)SPLAT_MIN(n - i0, (uint32_t)RECORDS_PER_CHUNK);
        if (fread(chunk, RECORD, rows, fp) != rows) {
            st = splat__fail(err, SPLAT_ERR_IO, "%s: read failed at record %u", path, i0);
            break;
        }
        for (uint32_t r = 0; r < rows && st == SPLAT_OK; r++) {
            uint32_t i = i0 + r;
            const uint8_t *p = chunk + (size_t)r * RECORD;
            float v[6];
            for (int k = 0; k < 6; k++) {
                uint32_t u = splat__load_u32(p + 4 * k);
                memcpy(&v[k], &u, 4);
            }
            for (int k = 0; k < 3 && st == SPLAT_OK; k++) {
                if (!isfinite(v[k]))
                    st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: record %u: the position is not finite", path, i);
                else if (!(v[3 + k] > 0) || !isfinite(v[3 + k]))
                    st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: record %u: scale %g is not a positive finite number",
                                     path, i, (double)v[3 + k]);
                scene->means[i * 3 + k] = v[k];
                scene->log_scales[i * 3 + k] = logf(v[3 + k]);
            }
            float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
            memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof *sh);
            for (int c = 0; c < 3; c++) sh[c] = (float)((p[24 + c] / 255.0 - 0.5) / SPLAT_SH_C0);
            scene->opacities[i] = splat__logit_clamped(p[27] / 255.0);
            double q[4], norm = 0;
            for (int k = 0; k < 4; k++) q[k] = (p[28 + k] - 128.0) / 128.0, norm += q[k] * q[k];
            norm = sqrt(norm);
            for (int k = 0; k < 4; k++) scene->quats[i * 4 + k] = norm > 0 ? (float)(q[k] / norm) : k == 0;
        }
    }
    splat__free(chunk);
    fclose(fp);
    if (st != SPLAT_OK) {
        splat__scene_free(scene);
        return st;
    }
    scene->count = n;
    scene->sh_degree = 0;
    if (info) info->format = SPLAT_FILE_SPLAT;
    return SPLAT_OK;
}
