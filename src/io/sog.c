/* io: PlayCanvas's SOG, version 2 (what splat-transform 2.x writes and SuperSplat reads): meta.json
 * and lossless WebP images whose texels are the Gaussians, in Morton order of their positions, row
 * by row; as a .sog zip bundle or as a folder holding meta.json and the images. What the writer
 * keeps:
 *
 *     position   means_l/means_u.webp: 16 bits a coordinate of t = sign(v) ln(|v| + 1) over the
 *                scene's range [lo, hi] of t: within (|v| + 1) (hi - lo) / 131070 (half a step in t)
 *     rotation   quats.webp: the unit quaternion's largest component's index (alpha 252 + index) and
 *                the other three times sqrt 2 in 8 bits each: each component within 1/(255 sqrt 2)
 *                = 0.0028 (about 0.011 rad)
 *     log-scale  scales.webp: the index of the nearest of 256 values fitted to the scene's log-scales
 *                (all three axes; quantize.c spreads them over the range the values occupy): within
 *                half the gap between the two codebook values around it, about (hi - lo) / 510 of
 *                the occupied range (exact when the scene has at most 256 distinct values)
 *     colour     sh0.webp: the same for the degree-0 coefficients (all three channels) ...
 *     opacity    ... and 8 bits of sigmoid(opacity) in alpha: within 0.5/255
 *     SH rest    shN_labels.webp: each Gaussian's entry in a palette of at most 65536 coefficient
 *                vectors; shN_centroids.webp: each entry's coefficients as indices into 256 values
 *                fitted to them. Scenes of up to 65536 Gaussians get an entry each, so a coefficient
 *                is only quantised (within half the gap around it, as above); larger ones share
 *                entries found by bisecting k-means, and a Gaussian's coefficients become its
 *                cluster's mean (no per-Gaussian bound; docs/FORMATS.md gives measured errors)
 *
 * SH bands that are zero throughout are not stored. The images are written with libwebp's exact mode, so texels with alpha 0 (opacity 0) keep their
 * colour bytes. Reading checks meta.json's count against the bundle's size and every image's size
 * against the count before decoding it, and every index against its codebook or palette; version
 * 1 files (meta.json without "version") are refused. */
#include "io/zip.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "io/quantize.h"

#define MAX_PALETTE 65536u
#define CODEBOOK 256u

static const char *const k_files[7] = {"means_l.webp", "means_u.webp", "quats.webp", "scales.webp", "sh0.webp",
                                       "shN_centroids.webp", "shN_labels.webp"};
enum { MEANS_L, MEANS_U, QUATS, SCALES, SH0, SHN_CENTROIDS, SHN_LABELS, N_FILES };
static const uint32_t k_coeffs[4] = {0, 3, 8, 15};

static double log_t(double v) { return v < 0 ? -log1p(-v) : log1p(v); }
static double exp_t(double t) { return t < 0 ? -expm1(-t) : expm1(t); }

/* --------------------------------------------------------------------------- write */

/* A lossless WebP of rgba [h, w, 4], exact (colour under alpha 0 kept). *out is libwebp's. */
static splat_status encode(const char *path, const char *name, const uint8_t *rgba, uint32_t w, uint32_t h,
                           uint8_t **out, size_t *n, splat_error *err)
{
    WebPConfig config;
    WebPPicture pic;
    WebPMemoryWriter wr;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&pic))
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: libwebp's version does not match its headers", path);
    /* effort 2 of 9: these images are mostly noise (low bytes, indices), where more effort buys
     * little and costs seconds */
    WebPConfigLosslessPreset(&config, 2);
    config.exact = 1;
    pic.use_argb = 1;
    pic.width = (int)w, pic.height = (int)h;
    WebPMemoryWriterInit(&wr);
    pic.writer = WebPMemoryWrite;
    pic.custom_ptr = &wr;
    bool ok = WebPPictureImportRGBA(&pic, rgba, (int)w * 4) && WebPEncode(&config, &pic);
    WebPPictureFree(&pic);
    if (!ok) {
        WebPMemoryWriterClear(&wr);
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: %s: WebP encoding failed (error %d)", path, name,
                           (int)pic.error_code);
    }
    *out = wr.mem, *n = wr.size;
    return SPLAT_OK;
}

static cJSON *json_floats(const float *v, uint32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(v[k]));
    return a;
}

static cJSON *json_files(const int *which, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateString(k_files[which[k]]));
    return a;
}

/* The images and meta.json of `s` (rows in `order`); images [N_FILES] and meta allocated here. */
typedef struct sog_out {
    uint8_t *webp[N_FILES];
    size_t size[N_FILES];
    char *meta;
} sog_out;

static void out_free(sog_out *o)
{
    for (int k = 0; k < N_FILES; k++) WebPFree(o->webp[k]);
    if (o->meta) cJSON_free(o->meta);
    memset(o, 0, sizeof *o);
}

static splat_status build(const char *path, const splat_scene *s, const uint32_t *order, uint32_t max_palette,
                          sog_out *o, splat_error *err)
{
    const uint32_t n = s->count, degree = splat__scene_sh_used(s), coeffs = k_coeffs[degree];
    uint32_t w = SPLAT_MAX(4u, (uint32_t)ceil(sqrt((double)n) / 4) * 4);
    uint32_t h = SPLAT_MAX(4u, splat__div_up(splat__div_up(n, w), 4) * 4);
    const size_t texels = (size_t)w * h;
    uint8_t *img = splat__calloc(texels * 4, 1);
    float *vals = splat__malloc(((size_t)n * 3 + 1) * sizeof *vals);
    uint8_t *labels = splat__malloc((size_t)n * 3 + 1);
    float *rest = NULL, *centroids = NULL;
    uint32_t *palette_of = NULL;
    uint8_t *centroid_labels = NULL;
    float scales_cb[CODEBOOK], sh0_cb[CODEBOOK], shn_cb[CODEBOOK];
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    uint32_t k_out = 0;
    cJSON *meta = NULL;
    splat_status st = SPLAT_OK;
    if (!img || !vals || !labels) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        goto done;
    }
    /* means: 16 bits of the log-transformed coordinates over their range */
    for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double t = log_t(s->means[i * 3 + k]);
            lo[k] = fmin(lo[k], t), hi[k] = fmax(hi[k], t);
        }
    if (n == 0)
        for (int k = 0; k < 3; k++) lo[k] = hi[k] = 0;
    for (int part = 0; part < 2 && st == SPLAT_OK; part++) {
        memset(img, 0, texels * 4);
        for (uint32_t j = 0; j < n; j++)
            for (int k = 0; k < 3; k++) {
                double t = log_t(s->means[order[j] * 3 + k]);
                uint32_t q = hi[k] > lo[k] ? (uint32_t)fmin(fmax(round(65535.0 * (t - lo[k]) / (hi[k] - lo[k])), 0), 65535) : 0;
                img[(size_t)j * 4 + (size_t)k] = (uint8_t)(part ? q >> 8 : q);
            }
        for (size_t t = 0; t < texels; t++) img[t * 4 + 3] = 255;
        st = encode(path, k_files[part], img, w, h, &o->webp[part], &o->size[part], err);
    }
    /* rotations: the largest component's index, the other three scaled by sqrt 2 */
    memset(img, 0, texels * 4);
    for (uint32_t j = 0; j < n && st == SPLAT_OK; j++) {
        double q[4];
        splat__quat_unit(s->quats + (size_t)order[j] * 4, q);
        int largest = 0;
        for (int k = 1; k < 4; k++)
            if (fabs(q[k]) > fabs(q[largest])) largest = k;
        double sign = q[largest] < 0 ? -1 : 1;
        uint8_t *t = img + (size_t)j * 4;
        for (int k = 0, c = 0; k < 4; k++)
            if (k != largest) t[c++] = (uint8_t)fmin(fmax(round(255.0 * (sign * q[k] * M_SQRT2 * 0.5 + 0.5)), 0), 255);
        t[3] = (uint8_t)(252 + largest);
    }
    if (st == SPLAT_OK) st = encode(path, k_files[QUATS], img, w, h, &o->webp[QUATS], &o->size[QUATS], err);
    /* log-scales and colours: indices into 256 fitted values; opacity in the colours' alpha */
    for (int pass = 0; pass < 2 && st == SPLAT_OK; pass++) {
        float *cb = pass ? sh0_cb : scales_cb;
        for (uint32_t j = 0; j < n; j++)
            for (uint32_t k = 0; k < 3; k++)
                vals[(size_t)j * 3 + k] = pass ? s->sh[(size_t)order[j] * SPLAT_SH_COEFFS * 3 + k] : s->log_scales[order[j] * 3 + k];
        st = splat__quantize_1d(vals, (size_t)n * 3, CODEBOOK, cb, labels, err);
        if (st != SPLAT_OK) break;
        memset(img, 0, texels * 4);
        for (uint32_t j = 0; j < n; j++) {
            for (int k = 0; k < 3; k++) img[(size_t)j * 4 + (size_t)k] = labels[(size_t)j * 3 + (size_t)k];
            img[(size_t)j * 4 + 3] =
                pass ? (uint8_t)fmin(fmax(round(255.0 * splat__sigmoid(s->opacities[order[j]])), 0), 255) : 255;
        }
        for (size_t t = n; t < texels; t++) img[t * 4 + 3] = 255;
        int file = pass ? SH0 : SCALES;
        st = encode(path, k_files[file], img, w, h, &o->webp[file], &o->size[file], err);
    }
    /* SH rest: a palette of coefficient vectors, each coefficient an index into 256 values */
    if (coeffs && st == SPLAT_OK) {
        const uint32_t d = coeffs * 3, k = SPLAT_MIN(max_palette, MAX_PALETTE);
        rest = splat__malloc(((size_t)n * d + 1) * sizeof *rest);
        centroids = splat__malloc(((size_t)k * d + 1) * sizeof *centroids);
        palette_of = splat__malloc(((size_t)n + 1) * sizeof *palette_of);
        centroid_labels = splat__malloc((size_t)k * d + 1);
        if (!rest || !centroids || !palette_of || !centroid_labels)
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        /* a vector per Gaussian: channel-major, as the palette image stores it (r, g, b of coefficient 1, ...) */
        for (uint32_t j = 0; j < n && st == SPLAT_OK; j++)
            for (uint32_t c = 0; c < coeffs; c++)
                for (uint32_t ch = 0; ch < 3; ch++)
                    rest[(size_t)j * d + c * 3 + ch] = s->sh[((size_t)order[j] * SPLAT_SH_COEFFS + 1 + c) * 3 + ch];
        if (st == SPLAT_OK) st = splat__palette(rest, n, d, k, centroids, palette_of, &k_out, err);
        if (st == SPLAT_OK) st = splat__quantize_1d(centroids, (size_t)k_out * d, CODEBOOK, shn_cb, centroid_labels, err);
        if (st == SPLAT_OK) {
            const uint32_t cw = 64 * coeffs, ch = SPLAT_MAX(1u, splat__div_up(k_out, 64));
            uint8_t *cimg = splat__calloc((size_t)cw * ch * 4, 1);
            if (!cimg) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            for (size_t t = 0; cimg && t < (size_t)cw * ch; t++) cimg[t * 4 + 3] = 255;
            for (uint32_t e = 0; cimg && e < k_out; e++)
                for (uint32_t c = 0; c < coeffs; c++) {
                    uint8_t *t = cimg + (((size_t)(e / 64) * cw) + (e % 64) * coeffs + c) * 4;
                    for (int q = 0; q < 3; q++) t[q] = centroid_labels[(size_t)e * d + c * 3 + (size_t)q];
                }
            if (cimg) st = encode(path, k_files[SHN_CENTROIDS], cimg, cw, ch, &o->webp[SHN_CENTROIDS], &o->size[SHN_CENTROIDS], err);
            splat__free(cimg);
        }
        if (st == SPLAT_OK) {
            memset(img, 0, texels * 4);
            for (size_t t = 0; t < texels; t++) img[t * 4 + 3] = 255;
            for (uint32_t j = 0; j < n; j++) img[(size_t)j * 4] = (uint8_t)palette_of[j], img[(size_t)j * 4 + 1] = (uint8_t)(palette_of[j] >> 8);
            st = encode(path, k_files[SHN_LABELS], img, w, h, &o->webp[SHN_LABELS], &o->size[SHN_LABELS], err);
        }
    }
    if (st != SPLAT_OK) goto done;
    meta = cJSON_CreateObject();
    cJSON *asset = cJSON_AddObjectToObject(meta, "asset"), *means = cJSON_AddObjectToObject(meta, "means");
    cJSON_AddNumberToObject(meta, "version", 2);
    cJSON_AddStringToObject(asset, "generator", "splatc");
    cJSON_AddNumberToObject(meta, "count", n);
    cJSON *mins = cJSON_AddArrayToObject(means, "mins"), *maxs = cJSON_AddArrayToObject(means, "maxs");
    for (int k = 0; k < 3; k++) {
        cJSON_AddItemToArray(mins, cJSON_CreateNumber(lo[k]));
        cJSON_AddItemToArray(maxs, cJSON_CreateNumber(hi[k]));
    }
    static const int means_files[2] = {MEANS_L, MEANS_U}, quat_files[1] = {QUATS}, scale_files[1] = {SCALES},
                     sh0_files[1] = {SH0}, shn_files[2] = {SHN_CENTROIDS, SHN_LABELS};
    cJSON_AddItemToObject(means, "files", json_files(means_files, 2));
    cJSON *scales = cJSON_AddObjectToObject(meta, "scales"), *quats = cJSON_AddObjectToObject(meta, "quats");
    cJSON_AddItemToObject(scales, "codebook", json_floats(scales_cb, CODEBOOK));
    cJSON_AddItemToObject(scales, "files", json_files(scale_files, 1));
    cJSON_AddItemToObject(quats, "files", json_files(quat_files, 1));
    cJSON *sh0 = cJSON_AddObjectToObject(meta, "sh0");
    cJSON_AddItemToObject(sh0, "codebook", json_floats(sh0_cb, CODEBOOK));
    cJSON_AddItemToObject(sh0, "files", json_files(sh0_files, 1));
    if (coeffs) {
        cJSON *shn = cJSON_AddObjectToObject(meta, "shN");
        cJSON_AddNumberToObject(shn, "count", k_out);
        cJSON_AddNumberToObject(shn, "bands", degree);
        cJSON_AddItemToObject(shn, "codebook", json_floats(shn_cb, CODEBOOK));
        cJSON_AddItemToObject(shn, "files", json_files(shn_files, 2));
    }
    o->meta = cJSON_PrintUnformatted(meta);
    if (!o->meta) st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
done:
    cJSON_Delete(meta);
    splat__free(img), splat__free(vals), splat__free(labels), splat__free(rest), splat__free(centroids);
    splat__free(palette_of), splat__free(centroid_labels);
    if (st != SPLAT_OK) out_free(o);
    return st;
}

/* The folder of `path` joined with `name`. */
static char *beside(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return splat__strdup(name);
    size_t dir = (size_t)(slash - path);
    char *out = splat__malloc(dir + 2 + strlen(name));
    if (out) {
        memcpy(out, path, dir + 1);
        strcpy(out + dir + 1, name);
    }
    return out;
}

/* A folder of several files cannot be replaced in one rename. Every file is written and synced
 * beside its target before any is renamed, and a target no file can replace (a folder of that
 * name) stops the write before the first rename: a failure up to there leaves the old scene
 * whole. meta.json goes last. Should a rename still fail once some images are new, the old
 * meta.json is removed: the folder then reads as no scene, never as a mix of two. */
static splat_status write_folder(const char *path, const sog_out *o, int n_files, splat_error *err)
{
    splat_atomic_file f[N_FILES + 1];
    char *paths[N_FILES + 1] = {0};
    int opened = 0;
    splat_status st = SPLAT_OK;
    for (int k = 0; k <= n_files && st == SPLAT_OK; k++) {
        bool meta = k == n_files;
        paths[k] = meta ? splat__strdup(path) : beside(path, k_files[k]);
        if (!paths[k]) {
            st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
            break;
        }
        struct stat sb;
        if (stat(paths[k], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            st = splat__fail(err, SPLAT_ERR_IO, "%s: a folder of that name is in the way (nothing was replaced)", paths[k]);
            break;
        }
        st = splat__atomic_open(&f[k], paths[k], err);
        if (st != SPLAT_OK) break;
        opened = k + 1;
        st = splat__atomic_write(&f[k], meta ? (const void *)o->meta : o->webp[k], meta ? strlen(o->meta) : o->size[k], err);
        if (st == SPLAT_OK) st = splat__atomic_finish(&f[k], err);
    }
    for (int k = 0; k < opened && st == SPLAT_OK; k++) {
        splat_error e = {0};
        if (splat__atomic_publish(&f[k], &e) == SPLAT_OK) continue;
        if (k == 0) st = splat__fail(err, e.status, "%s (nothing was replaced)", e.msg);
        else {
            unlink(path);
            st = splat__fail(err, e.status, "%s (%s removed: some of the new images had replaced the old)", e.msg, path);
        }
    }
    for (int k = 0; k < opened; k++) splat__atomic_abort(&f[k]);
    for (int k = 0; k <= n_files; k++) splat__free(paths[k]);
    return st;
}

splat_status splat__sog_write_palette(const char *path, const splat_scene *scene, uint32_t max_palette, splat_error *err)
{
    SPLAT_ASSERT(path && scene && scene->sh_degree <= 3 && scene->count <= scene->capacity && max_palette >= 1);
    splat_status st = splat__scene_finite(path, scene, scene->sh_degree, err);
    if (st != SPLAT_OK) return st;
    bool folder = splat__scene_format(path) == SPLAT_FILE_SOG_FOLDER;
    uint32_t *order = splat__morton_order(scene);
    if (!order) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    sog_out o = {0};
    st = build(path, scene, order, max_palette, &o, err);
    splat__free(order);
    if (st != SPLAT_OK) return st;
    int n_files = splat__scene_sh_used(scene) ? N_FILES : SHN_CENTROIDS;
    if (folder) {
        st = write_folder(path, &o, n_files, err);
    } else {
        splat_zip_entry e[N_FILES + 1];
        for (int k = 0; k < n_files; k++) e[k] = (splat_zip_entry){k_files[k], o.webp[k], o.size[k]};
        e[n_files] = (splat_zip_entry){"meta.json", o.meta, strlen(o.meta)};
        st = splat__zip_write(path, e, (uint32_t)n_files + 1, err);
    }
    out_free(&o);
    return st;
}

splat_status splat__sog_write(const char *path, const splat_scene *scene, splat_error *err)
{
    return splat__sog_write_palette(path, scene, MAX_PALETTE, err);
}

/* ---------------------------------------------------------------------------- read */

typedef struct sog_src {
    const char *path;
    bool folder;
    splat_zip zip;
} sog_src;

/* The bytes of `name` from the bundle or the folder; errors name the SOG and the member. */
static splat_status member(sog_src *src, const char *name, uint8_t **out, size_t *n, splat_error *err)
{
    *out = NULL, *n = 0;
    if (!name[0] || strchr(name, '/') || strchr(name, '\\') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json names \"%s\", which is not a file beside it", src->path,
                           name);
    if (!src->folder) {
        const splat_zip_item *it = splat__zip_find(&src->zip, name);
        if (!it) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: the bundle has no %s", src->path, name);
        return splat__zip_read(&src->zip, it, out, n, err);
    }
    char *p = beside(src->path, name);
    if (!p) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", src->path);
    /* the error names the SOG (its meta.json) first, then the image */
    splat_error inner = {0};
    splat_status st = splat__read_file(p, (size_t)1 << 31, (char **)out, n, &inner);
    splat__free(p);
    if (st != SPLAT_OK) return splat__fail(err, st, "%s: %s", src->path, inner.msg);
    return SPLAT_OK;
}

/* meta.json's "files" list of `obj`: the k-th name. */
static const char *file_name(const cJSON *obj, int k)
{
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(obj, "files");
    const cJSON *f = cJSON_IsArray(files) ? cJSON_GetArrayItem(files, k) : NULL;
    return cJSON_IsString(f) ? f->valuestring : NULL;
}

/* A decoded image: rgba [h, w, 4] (libwebp's). */
typedef struct image {
    uint8_t *rgba;
    uint32_t w, h;
} image;

/* Decodes `name`, after checking its size: at least `min_texels` and at most `max_texels` texels
 * (and exactly `width` wide when not 0), so the decoder allocates nothing the count does not
 * call for. */
static splat_status load_image(sog_src *src, const char *name, size_t min_texels, size_t max_texels, uint32_t width,
                               image *img, splat_error *err)
{
    memset(img, 0, sizeof *img);
    if (!name) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json lacks an image's file name", src->path);
    uint8_t *data;
    size_t n;
    splat_status st = member(src, name, &data, &n, err);
    if (st != SPLAT_OK) return st;
    int w = 0, h = 0;
    if (!WebPGetInfo(data, n, &w, &h) || w <= 0 || h <= 0)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s is not a WebP image", src->path, name);
    else if ((size_t)w * (size_t)h < min_texels || (size_t)w * (size_t)h > max_texels || (width && (uint32_t)w != width))
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s is %dx%d, which does not fit what meta.json describes "
                         "(%zu to %zu texels%s)", src->path, name, w, h, min_texels, max_texels,
                         width ? ", a fixed width" : "");
    else if (!(img->rgba = WebPDecodeRGBA(data, n, &w, &h)))
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %s: the WebP data is corrupt", src->path, name);
    img->w = (uint32_t)w, img->h = (uint32_t)h;
    splat__free(data);
    return st;
}

/* A codebook: an array of 1..256 numbers, each finite as a float. */
static splat_status codebook(const char *path, const cJSON *obj, const char *what, float *cb, uint32_t *n,
                             splat_error *err)
{
    const cJSON *a = obj ? cJSON_GetObjectItemCaseSensitive(obj, "codebook") : NULL;
    int len = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    if (len < 1 || len > (int)CODEBOOK)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json: %s.codebook is not a list of 1 to 256 numbers", path, what);
    for (int k = 0; k < len; k++) {
        const cJSON *v = cJSON_GetArrayItem(a, k);
        if (!cJSON_IsNumber(v) || !splat__finite_float(v->valuedouble))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json: %s.codebook[%d] is not a finite number", path, what, k);
        cb[k] = (float)v->valuedouble;
    }
    *n = (uint32_t)len;
    return SPLAT_OK;
}

static bool number(const cJSON *v, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) return false;
    *out = v->valuedouble;
    return true;
}

static splat_status decode(sog_src *src, const cJSON *meta, uint64_t bytes, splat_scene *scene, splat_error *err)
{
    const char *path = src->path;
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(meta, "version");
    if (!version)
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: SOG version 1 (meta.json without \"version\") is not "
                           "supported; splat-transform converts it to version 2", path);
    double v;
    if (!number(version, 2, 2, &v))
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: SOG meta.json version is not 2", path);
    double count_d;
    if (!number(cJSON_GetObjectItemCaseSensitive(meta, "count"), 0, UINT32_MAX, &count_d) || count_d != floor(count_d))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json: count is not a whole number", path);
    /* a count the bundle's bytes cannot plausibly hold is refused before any image is decoded: a
     * real scene's images take far more than a byte per 256 Gaussians */
    const uint32_t n = (uint32_t)count_d;
    if ((uint64_t)n > SPLAT_MAX((uint64_t)1 << 20, bytes * 256))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json claims %u Gaussians in %llu bytes", path, n,
                           (unsigned long long)bytes);
    const cJSON *means = cJSON_GetObjectItemCaseSensitive(meta, "means");
    const cJSON *scales = cJSON_GetObjectItemCaseSensitive(meta, "scales");
    const cJSON *quats = cJSON_GetObjectItemCaseSensitive(meta, "quats");
    const cJSON *sh0 = cJSON_GetObjectItemCaseSensitive(meta, "sh0");
    const cJSON *shn = cJSON_GetObjectItemCaseSensitive(meta, "shN");
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        const cJSON *mins = cJSON_GetObjectItemCaseSensitive(means, "mins"), *maxs = cJSON_GetObjectItemCaseSensitive(means, "maxs");
        if (!number(cJSON_GetArrayItem(mins, k), -1e300, 1e300, &lo[k]) ||
            !number(cJSON_GetArrayItem(maxs, k), -1e300, 1e300, &hi[k]))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json: means.mins and means.maxs need 3 finite numbers", path);
    }
    float scb[CODEBOOK], ccb[CODEBOOK], ncb[CODEBOOK];
    uint32_t n_scb, n_ccb, n_ncb = 0, degree = 0, palette = 0;
    splat_status st = codebook(path, scales, "scales", scb, &n_scb, err);
    if (st == SPLAT_OK) st = codebook(path, sh0, "sh0", ccb, &n_ccb, err);
    if (st == SPLAT_OK && shn) {
        double bands, count;
        if (!number(cJSON_GetObjectItemCaseSensitive(shn, "bands"), 0, 3, &bands) || bands != floor(bands) ||
            !number(cJSON_GetObjectItemCaseSensitive(shn, "count"), 0, MAX_PALETTE, &count) || count != floor(count))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json: shN needs bands 0..3 and a count 0..65536", path);
        degree = (uint32_t)bands, palette = (uint32_t)count;
        if (degree) st = codebook(path, shn, "shN", ncb, &n_ncb, err);
    }
    if (st != SPLAT_OK) return st;
    const size_t lo_tex = n, hi_tex = 2 * (size_t)n + 4096;
    const uint32_t coeffs = k_coeffs[degree];
    image im[N_FILES] = {{0}};
    const cJSON *owner[N_FILES] = {means, means, quats, scales, sh0, shn, shn};
    const int index[N_FILES] = {0, 1, 0, 0, 0, 0, 1};
    for (int k = 0; k < (degree ? N_FILES : SHN_CENTROIDS) && st == SPLAT_OK; k++) {
        const char *name = owner[k] ? file_name(owner[k], index[k]) : NULL;
        if (k == SHN_CENTROIDS)
            st = load_image(src, name, (size_t)64 * coeffs * splat__div_up(palette, 64),
                            (size_t)64 * coeffs * SPLAT_MAX(1u, splat__div_up(palette, 64)), 64 * coeffs, &im[k], err);
        else st = load_image(src, name, lo_tex, hi_tex, 0, &im[k], err);
    }
    if (st == SPLAT_OK) st = splat__scene_init(scene, n, err);
    for (uint32_t i = 0; i < n && st == SPLAT_OK; i++) {
        const size_t t = (size_t)i * 4;
        float *sh = scene->sh + (size_t)i * SPLAT_SH_COEFFS * 3;
        memset(sh, 0, SPLAT_SH_COEFFS * 3 * sizeof *sh);
        for (int k = 0; k < 3; k++) {
            uint32_t q = im[MEANS_L].rgba[t + (size_t)k] | (uint32_t)im[MEANS_U].rgba[t + (size_t)k] << 8;
            double range = hi[k] - lo[k];
            double x = exp_t(lo[k] + (range != 0 ? range : 1) * (q / 65535.0));
            uint8_t sl = im[SCALES].rgba[t + (size_t)k], cl = im[SH0].rgba[t + (size_t)k];
            if (!splat__finite_float(x)) {
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: Gaussian %u: the position is not finite as a float", path, i);
                break;
            }
            if (sl >= n_scb || cl >= n_ccb) {
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: Gaussian %u: index %u is past its %u-entry codebook", path, i,
                                 sl >= n_scb ? sl : cl, sl >= n_scb ? n_scb : n_ccb);
                break;
            }
            scene->means[i * 3 + (uint32_t)k] = (float)x;
            scene->log_scales[i * 3 + (uint32_t)k] = scb[sl];
            sh[k] = ccb[cl];
        }
        if (st != SPLAT_OK) break;
        scene->opacities[i] = splat__logit_clamped(im[SH0].rgba[t + 3] / 255.0);
        const uint8_t *qp = im[QUATS].rgba + t;
        float *q = scene->quats + (size_t)i * 4;
        if (qp[3] < 252) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: Gaussian %u: rotation tag %u is not 252..255", path, i, qp[3]);
            break;
        }
        uint32_t largest = qp[3] - 252u;
        double sum = 0, c[4];
        for (uint32_t k = 0, j = 0; k < 4; k++) {
            if (k == largest) continue;
            c[k] = (qp[j++] / 255.0 * 2.0 - 1.0) / M_SQRT2;
            sum += c[k] * c[k];
        }
        c[largest] = sqrt(fmax(0.0, 1.0 - sum));
        for (int k = 0; k < 4; k++) q[k] = (float)c[k];
        if (coeffs) {
            const uint8_t *lp = im[SHN_LABELS].rgba + t;
            uint32_t label = lp[0] | (uint32_t)lp[1] << 8;
            if (label >= palette) {
                st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: Gaussian %u: palette entry %u is past the %u in meta.json",
                                 path, i, label, palette);
                break;
            }
            const uint8_t *cp = im[SHN_CENTROIDS].rgba + ((size_t)(label / 64) * im[SHN_CENTROIDS].w + (label % 64) * coeffs) * 4;
            for (uint32_t j = 0; j < coeffs && st == SPLAT_OK; j++)
                for (int ch = 0; ch < 3; ch++) {
                    uint8_t b = cp[j * 4 + (uint32_t)ch];
                    if (b >= n_ncb) {
                        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: palette entry %u: index %u is past the %u-entry "
                                         "shN codebook", path, label, b, n_ncb);
                        break;
                    }
                    sh[(1 + j) * 3 + (uint32_t)ch] = ncb[b];
                }
        }
    }
    for (int k = 0; k < N_FILES; k++) WebPFree(im[k].rgba);
    if (st != SPLAT_OK) return st;
    scene->count = n;
    scene->sh_degree = degree;
    return SPLAT_OK;
}

splat_status splat__sog_read(const char *path, splat_scene *scene, splat_load_info *info, splat_error *err)
{
    SPLAT_ASSERT(path && scene);
    memset(scene, 0, sizeof *scene);
    if (info) memset(info, 0, sizeof *info);
    sog_src src = {.path = path, .folder = splat__scene_format(path) == SPLAT_FILE_SOG_FOLDER};
    char *bundle = NULL;
    uint8_t *meta_text = NULL;
    size_t bundle_size = 0, meta_size = 0;
    uint64_t bytes = 0;
    splat_status st = SPLAT_OK;
    if (src.folder) {
        st = splat__read_file(path, (size_t)1 << 26, (char **)&meta_text, &meta_size, err);
        /* a folder's images count towards the bytes that back its count */
        for (int k = 0; k < N_FILES && st == SPLAT_OK; k++) {
            char *p = beside(path, k_files[k]);
            FILE *fp = p ? fopen(p, "rb") : NULL;
            if (fp) {
                long long sz = splat__file_size(fp);
                bytes += sz > 0 ? (uint64_t)sz : 0;
                fclose(fp);
            }
            splat__free(p);
        }
        bytes += meta_size;
    } else {
        st = splat__read_file(path, SIZE_MAX / 2, &bundle, &bundle_size, err);
        if (st == SPLAT_OK) st = splat__zip_open(path, (const uint8_t *)bundle, bundle_size, &src.zip, err);
        const splat_zip_item *it = st == SPLAT_OK ? splat__zip_find(&src.zip, "meta.json") : NULL;
        if (st == SPLAT_OK && !it) st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: the bundle has no meta.json", path);
        if (st == SPLAT_OK && it->usize > (1u << 26))
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json is %u bytes (more than 64 MiB)", path, it->usize);
        if (st == SPLAT_OK) st = splat__zip_read(&src.zip, it, &meta_text, &meta_size, err);
        bytes = bundle_size;
    }
    cJSON *meta = NULL;
    if (st == SPLAT_OK) {
        meta = cJSON_ParseWithLength((const char *)meta_text, meta_size);
        if (!cJSON_IsObject(meta)) st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: meta.json is not a JSON object", path);
    }
    if (st == SPLAT_OK) st = decode(&src, meta, bytes, scene, err);
    cJSON_Delete(meta);
    splat__free(meta_text);
    splat__zip_close(&src.zip);
    splat__free(bundle);
    if (st != SPLAT_OK) {
        splat__scene_free(scene);
        return st;
    }
    if (info) info->format = src.folder ? SPLAT_FILE_SOG_FOLDER : SPLAT_FILE_SOG;
    return SPLAT_OK;
}
