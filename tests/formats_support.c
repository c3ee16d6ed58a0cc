/* The scene-format tests' shared helpers (formats_support.h). */
#include "formats_support.h"

#include <cjson/cJSON.h>

#include "io/zip.h"
#include "io_fixtures.h"

const char *const tf_attr_name[TF_ATTRS] = {"position", "log-scale", "colour", "opacity", "rotation (rad)", "SH rest"};

void tf_scene(splat_scene *s, uint32_t n, uint32_t degree, double spacing, double centre)
{
    splat_error err = {0};
    if (splat_scene_init(s, n, &err) != SPLAT_OK) abort();
    s->count = n;
    s->sh_degree = degree;
    uint32_t side = 1;
    while (side * side * side < n) side++;
    /* cells in a random order, so the file order is not the grid's */
    uint32_t cells = side * side * side, *cell = malloc(cells * sizeof *cell);
    for (uint32_t c = 0; c < cells; c++) cell[c] = c;
    for (uint32_t c = cells - 1; c > 0; c--) {
        uint32_t j = (uint32_t)(splat__rng_u64(splat_test_rng()) % (c + 1)), t = cell[c];
        cell[c] = cell[j], cell[j] = t;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cell[i], g[3] = {c % side, c / side % side, c / side / side};
        for (int k = 0; k < 3; k++) {
            s->means[i * 3 + k] = (float)(centre + (g[k] - side / 2.0 + t_uniform(-0.3, 0.3)) * spacing);
            s->log_scales[i * 3 + k] = (float)t_uniform(-7, 1);
        }
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)splat__rng_normal(splat_test_rng());
        s->opacities[i] = (float)t_uniform(-6, 6);
        float *sh = s->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
        for (int k = 0; k < 3; k++) sh[k] = (float)((t_uniform(0.03, 0.97) - 0.5) / 0.28209479177387814);
        for (uint32_t k = 3; k < SPLAT_SH_COEFFS * 3; k++)
            sh[k] = k < (degree + 1) * (degree + 1) * 3 ? (float)t_uniform(-0.9, 0.9) : 0.0f;
    }
    free(cell);
}

uint32_t *tf_match(const splat_scene *want, const splat_scene *got)
{
    if (want->count != got->count) {
        splat_test_fail(__FILE__, __LINE__, "counts differ", "%u decoded, %u written", got->count, want->count);
        return NULL;
    }
    uint32_t n = got->count, *of = malloc(((size_t)n + 1) * sizeof *of);
    bool *taken = calloc((size_t)n + 1, 1);
    for (uint32_t i = 0; i < n; i++) {
        double best = INFINITY;
        for (uint32_t j = 0; j < n; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++) {
                double t = (double)got->means[i * 3 + k] - want->means[j * 3 + k];
                d += t * t;
            }
            if (d < best) best = d, of[i] = j;
        }
        if (taken[of[i]]) {
            splat_test_fail(__FILE__, __LINE__, "match", "decoded Gaussians %u and another both lie nearest written %u", i,
                            of[i]);
            free(of), free(taken);
            return NULL;
        }
        taken[of[i]] = true;
    }
    free(taken);
    return of;
}

void tf_add(tf_err *e, double err, uint32_t at)
{
    if (!(err <= e->max)) e->max = err, e->worst = at; /* NaN is the worst */
    e->sum += err;
    e->n++;
}

double tf_angle(const float *a, const float *b)
{
    double na = 0, nb = 0, dot = 0;
    for (int k = 0; k < 4; k++) na += (double)a[k] * a[k], nb += (double)b[k] * b[k], dot += (double)a[k] * b[k];
    double c = fabs(dot) / sqrt(na * nb);
    return 2.0 * acos(fmin(1.0, c));
}

double tf_colour(float dc) { return 0.5 + 0.28209479177387814 * dc; }

double tf_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void tf_print(const char *what, const tf_err *e)
{
    printf("%s:", what);
    for (int a = 0; a < TF_ATTRS; a++)
        if (e[a].n) printf(" %s max %.3g mean %.3g;", tf_attr_name[a], e[a].max, e[a].sum / (double)e[a].n);
    printf("\n");
}

/* ------------------------------------------------------------------ the error bounds */

static int read_codebook(const cJSON *obj, float *cb)
{
    const cJSON *a = cJSON_GetObjectItem(obj, "codebook");
    int n = cJSON_GetArraySize(a);
    for (int k = 0; k < n && k < 256; k++) cb[k] = (float)cJSON_GetArrayItem(a, k)->valuedouble;
    return n;
}

bool tf_sog_meta(const char *path, sog_meta *m)
{
    memset(m, 0, sizeof *m);
    size_t n;
    uint8_t *bytes = t_read(path, &n), *text = NULL;
    if (!bytes) return false;
    if (t_has(path, ".sog")) {
        splat_zip z;
        splat_error err = {0};
        size_t tn = 0;
        const splat_zip_item *it;
        if (splat__zip_open(path, bytes, n, &z, &err) == SPLAT_OK && (it = splat__zip_find(&z, "meta.json")))
            splat__zip_read(&z, it, &text, &tn, &err);
        splat__zip_close(&z);
        free(bytes);
        if (!text) return false;
        bytes = malloc(tn + 1);
        memcpy(bytes, text, tn);
        bytes[tn] = 0;
        splat__free(text);
        n = tn;
    }
    cJSON *j = cJSON_ParseWithLength((const char *)bytes, n);
    free(bytes);
    if (!j) return false;
    m->n_scales = read_codebook(cJSON_GetObjectItem(j, "scales"), m->scales);
    m->n_sh0 = read_codebook(cJSON_GetObjectItem(j, "sh0"), m->sh0);
    const cJSON *shn = cJSON_GetObjectItem(j, "shN"), *means = cJSON_GetObjectItem(j, "means");
    if (shn) {
        m->n_shn = read_codebook(shn, m->shn);
        m->palette = (uint32_t)cJSON_GetObjectItem(shn, "count")->valuedouble;
    }
    for (int k = 0; k < 3; k++) {
        m->lo[k] = cJSON_GetArrayItem(cJSON_GetObjectItem(means, "mins"), k)->valuedouble;
        m->hi[k] = cJSON_GetArrayItem(cJSON_GetObjectItem(means, "maxs"), k)->valuedouble;
    }
    cJSON_Delete(j);
    return true;
}

float tf_nearest_entry(const float *cb, int n, double v)
{
    int best = 0;
    for (int k = 1; k < n; k++)
        if (fabs(cb[k] - v) < fabs(cb[best] - v)) best = k;
    return cb[best];
}

void tf_check(splat_file_format format, tf_encoder enc, const splat_scene *want, const splat_scene *got,
              const sog_meta *meta, tf_err *errors)
{
    uint32_t *of = tf_match(want, got);
    if (!of) return;
    const uint32_t n = got->count, want_deg = format == SPLAT_FILE_SPLAT ? 0 : want->sh_degree;
    T_CHECK(got->sh_degree == want_deg, "SH degree %u read back, %u expected", got->sh_degree, want_deg);
    const double c0 = 0.28209479177387814;
    double sh_sse = 0, sh_var = 0, sh_mean[45] = {0};
    const uint32_t n_rest = 3 * ((want_deg + 1) * (want_deg + 1) - 1);
    for (uint32_t i = 0; i < n && !splat_test_failed(); i++) {
        const uint32_t w = of[i];
        const float *gm = got->means + i * 3, *wm = want->means + w * 3;
        const float *gs = got->log_scales + i * 3, *ws = want->log_scales + w * 3;
        const float *gsh = got->sh + (size_t)i * 48, *wsh = want->sh + (size_t)w * 48;
        double pos_b[3], scale_b[3], col_b[3], op_b, rot_b, sh_b = 0;
        /* per-format bounds (plus float rounding where a value passes through float) */
        if (format == SPLAT_FILE_COMPRESSED_PLY) {
            /* the chunk's ranges, over the originals of its 256 decoded Gaussians */
            uint32_t c0i = i / 256 * 256, c1i = SPLAT_MIN(n, c0i + 256);
            double lo[9], hi[9];
            for (int k = 0; k < 9; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
            for (uint32_t j = c0i; j < c1i; j++)
                for (int k = 0; k < 3; k++) {
                    double v[3] = {want->means[of[j] * 3 + k], fmin(fmax(want->log_scales[of[j] * 3 + k], -20), 20),
                                   tf_colour(want->sh[(size_t)of[j] * 48 + k])};
                    for (int g = 0; g < 3; g++) lo[3 * g + k] = fmin(lo[3 * g + k], v[g]), hi[3 * g + k] = fmax(hi[3 * g + k], v[g]);
                }
            for (int k = 0; k < 3; k++) {
                double steps = k == 1 ? 1023 : 2047;
                pos_b[k] = (hi[k] - lo[k]) / steps / 2 + 2e-7 * fmax(fabs(lo[k]), fabs(hi[k]));
                scale_b[k] = (hi[3 + k] - lo[3 + k]) / steps / 2 + 4e-6;
                col_b[k] = (hi[6 + k] - lo[6 + k]) / 255 / 2 + 1e-6;
            }
            op_b = 0.5 / 255 + 1e-6;
            rot_b = 6.93 * (0.5 / 1023 * M_SQRT2) + 1e-5;
            sh_b = (enc == ENC_SPLATC ? 3.0 / 128 : 1.0 / 32) + 1e-6;
        } else if (format == SPLAT_FILE_SPZ) {
            for (int k = 0; k < 3; k++) pos_b[k] = 1.0 / 8192 + 1e-6, scale_b[k] = 1.0 / 32 + 1e-6, col_b[k] = 0.5 / 38.25 * c0 + 1e-6;
            op_b = 0.5 / 255 + 1e-6;
            rot_b = 6.93 * (0.5 / 511 * M_SQRT1_2) + 1e-5;
            sh_b = enc == ENC_SPLATC ? 1.0 / 256 + 1e-6 : 8.5 / 128 + 1e-6; /* the tool: 4 bits above degree 1 */
        } else if (format == SPLAT_FILE_SOG || format == SPLAT_FILE_SOG_FOLDER) {
            for (int k = 0; k < 3; k++) {
                double step = (meta->hi[k] - meta->lo[k]) / 65535 * (enc == ENC_SPLATC ? 0.5 : 1.0);
                pos_b[k] = (fabs(wm[k]) + 1) * expm1(step) * (1 + step) + 2e-7 * fabs(wm[k]) + 1e-7;
                /* the nearest codebook entry, as the format's encoders choose */
                scale_b[k] = fabs(tf_nearest_entry(meta->scales, meta->n_scales, ws[k]) - ws[k]) + 1e-6 * fmax(1, fabs(ws[k]));
                col_b[k] = c0 * (fabs(tf_nearest_entry(meta->sh0, meta->n_sh0, wsh[k]) - wsh[k]) + 1e-6 * fmax(1, fabs(wsh[k])));
            }
            op_b = (enc == ENC_SPLATC ? 0.5 : 1.0) / 255 + 1e-6;
            rot_b = 6.93 * ((enc == ENC_SPLATC ? 1.0 : 2.0) / (255 * M_SQRT2)) + 1e-5;
        } else { /* .splat */
            for (int k = 0; k < 3; k++) pos_b[k] = 0, scale_b[k] = 1e-6 * fmax(1, fabs(ws[k])), col_b[k] = 0.5 / 255 + 1e-6;
            op_b = 0.5 / 255 + 1e-6;
            rot_b = 4 * sqrt(3 * pow(0.5 / 128, 2) + pow(1.0 / 128, 2)) + 1e-5;
        }
        for (int k = 0; k < 3; k++) {
            double e = fabs((double)gm[k] - wm[k]);
            tf_add(&errors[TF_POS], e, i);
            T_CHECK(e <= pos_b[k], "Gaussian %u (written %u): position %d off by %.3g > %.3g", i, w, k, e, pos_b[k]);
            e = fabs((double)gs[k] - ws[k]);
            tf_add(&errors[TF_SCALE], e, i);
            T_CHECK(e <= scale_b[k], "Gaussian %u: log-scale %d: %.6g for %.6g, off by %.3g > %.3g", i, k, gs[k], ws[k],
                    e, scale_b[k]);
            /* splat-transform's WebP encoding is not exact: where the opacity byte is 0 (an
             * invisible Gaussian) the colour bytes beside it are the encoder's to change */
            bool sog = format == SPLAT_FILE_SOG || format == SPLAT_FILE_SOG_FOLDER;
            if (sog && enc == ENC_TOOL && tf_sigmoid(want->opacities[w]) * 255 < 1) continue;
            e = fabs(tf_colour(gsh[k]) - tf_colour(wsh[k]));
            tf_add(&errors[TF_COLOUR], e, i);
            T_CHECK(e <= col_b[k], "Gaussian %u: colour %d off by %.3g > %.3g", i, k, e, col_b[k]);
        }
        double e = fabs(tf_sigmoid(got->opacities[i]) - tf_sigmoid(want->opacities[w]));
        tf_add(&errors[TF_OPACITY], e, i);
        T_CHECK(e <= op_b, "Gaussian %u: opacity off by %.3g > %.3g", i, e, op_b);
        e = tf_angle(got->quats + i * 4, want->quats + w * 4);
        tf_add(&errors[TF_ROT], e, i);
        T_CHECK(e <= rot_b, "Gaussian %u: rotation off by %.3g rad > %.3g", i, e, rot_b);
        for (uint32_t k = 3; k < 48; k++) {
            if (k >= 3 + n_rest) {
                T_CHECK(gsh[k] == 0.0f, "Gaussian %u: SH coefficient %u above the degree is %g", i, k, gsh[k]);
                continue;
            }
            e = fabs((double)gsh[k] - wsh[k]);
            tf_add(&errors[TF_SH], e, i);
            sh_sse += e * e;
            sh_mean[k - 3] += wsh[k] / n;
            if (format == SPLAT_FILE_SOG || format == SPLAT_FILE_SOG_FOLDER) {
                if (enc == ENC_SPLATC) /* a palette entry per Gaussian: only the codebook rounds */
                    sh_b = fabs(tf_nearest_entry(meta->shn, meta->n_shn, wsh[k]) - wsh[k]) + 1e-6;
                else continue;
            }
            double b = sh_b;
            if (format == SPLAT_FILE_SPZ && enc == ENC_TOOL && k < 12) b = 4.5 / 128 + 1e-6; /* degree 1: 5 bits */
            T_CHECK(e <= b, "Gaussian %u: SH coefficient %u: %.5g for %.5g, off by %.3g > %.3g", i, k, gsh[k], wsh[k], e, b);
        }
    }
    if ((format == SPLAT_FILE_SOG || format == SPLAT_FILE_SOG_FOLDER) && enc == ENC_TOOL && n_rest) {
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t k = 3; k < 3 + n_rest; k++) sh_var += pow(want->sh[(size_t)of[i] * 48 + k] - sh_mean[k - 3], 2);
        T_CHECK(sh_sse < 0.8 * sh_var, "the SH palette explains too little: squared error %.4g, variance %.4g", sh_sse,
                sh_var);
    }
    free(of);
}

