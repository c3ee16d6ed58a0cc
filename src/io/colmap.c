/* io: COLMAP sparse models (cameras, images, points3D; binary or text) into a dataset.
 *
 * Binary layouts (little-endian), as COLMAP writes them:
 *   cameras.bin  u64 n, then n x { u32 id, i32 model, u64 width, u64 height, f64 params[] }
 *   images.bin   u64 n, then n x { u32 id, f64 qvec[4] (w,x,y,z), f64 tvec[3], u32 camera_id,
 *                                  name (NUL-terminated), u64 n2d, n2d x { f64 x, f64 y, i64 id } }
 *   points3D.bin u64 n, then n x { u64 id, f64 xyz[3], u8 rgb[3], f64 error, u64 track_length,
 *                                  track_length x { u32 image_id, u32 point2d_idx } }
 * Every count is checked against the bytes left in the file before anything is allocated for it,
 * so a file that lies about a count is an error, not a huge allocation. */
#include "io/io_util.h"

#include <stdlib.h>

#define MAX_MODEL_FILE ((size_t)1 << 36)
#define MAX_CAMERA_SIZE (1u << 24)

/* COLMAP's camera models by id: the name, the number of parameters, whether the focal length is
 * one (f) or two (fx, fy), and the distortion (SPLAT_DISTORTION_NONE also for those splatc does
 * not handle: supported says which). */
static const struct {
    const char *name;
    uint32_t params;
    bool one_focal, supported;
    splat_distortion_model distortion;
} models[] = {
    {"SIMPLE_PINHOLE", 3, true, true, SPLAT_DISTORTION_NONE},
    {"PINHOLE", 4, false, true, SPLAT_DISTORTION_NONE},
    {"SIMPLE_RADIAL", 4, true, true, SPLAT_DISTORTION_SIMPLE_RADIAL},
    {"RADIAL", 5, true, true, SPLAT_DISTORTION_RADIAL},
    {"OPENCV", 8, false, true, SPLAT_DISTORTION_OPENCV},
    {"OPENCV_FISHEYE", 8, false, true, SPLAT_DISTORTION_OPENCV_FISHEYE},
    {"FULL_OPENCV", 12, false, true, SPLAT_DISTORTION_FULL_OPENCV},
    {"FOV", 5, false, false, SPLAT_DISTORTION_NONE},
    {"SIMPLE_RADIAL_FISHEYE", 4, true, false, SPLAT_DISTORTION_NONE},
    {"RADIAL_FISHEYE", 5, true, false, SPLAT_DISTORTION_NONE},
    {"THIN_PRISM_FISHEYE", 12, false, false, SPLAT_DISTORTION_NONE},
    {"RAD_TAN_THIN_PRISM_FISHEYE", 16, false, false, SPLAT_DISTORTION_NONE},
};
#define MAX_MODEL_PARAMS 16

typedef struct col_camera {
    uint32_t id;
    uint64_t width, height;
    double fx, fy, cx, cy;
    splat_distortion distortion;
} col_camera;

typedef struct col_image {
    uint32_t camera_id;
    double q[4], t[3];
    char *name;
} col_image;

typedef struct col_model {
    col_camera *cams;
    size_t n_cams, cap_cams;
    col_image *imgs;
    size_t n_imgs, cap_imgs;
    float *points;           /* [P,3] */
    uint8_t *colors;         /* [P,3] */
    size_t n_points, cap_points;
} col_model;

static void model_free(col_model *m)
{
    for (size_t i = 0; i < m->n_imgs; i++) splat__free(m->imgs[i].name);
    splat__free(m->cams);
    splat__free(m->imgs);
    splat__free(m->points);
    splat__free(m->colors);
    memset(m, 0, sizeof *m);
}

static splat_status unsupported_model(const char *path, uint32_t id, const char *model, splat_error *err)
{
    return splat__fail(err, SPLAT_ERR_UNSUPPORTED,
                       "%s: camera %u uses the %s model; splatc handles PINHOLE, SIMPLE_PINHOLE, SIMPLE_RADIAL, RADIAL, "
                       "OPENCV, OPENCV_FISHEYE and FULL_OPENCV cameras: undistort the images first (e.g. with `colmap "
                       "image_undistorter`)",
                       path, id, model);
}

/* The parameters of model `model` (an index of models[], supported): f or fx fy, cx cy, then the
 * distortion's, in COLMAP's order. */
static splat_status set_camera(const char *path, col_camera *c, int model, const double *p, splat_error *err)
{
    bool one = models[model].one_focal;
    c->fx = p[0];
    c->fy = one ? p[0] : p[1];
    c->cx = one ? p[1] : p[2];
    c->cy = one ? p[2] : p[3];
    c->distortion = (splat_distortion){.model = models[model].distortion};
    uint32_t first = one ? 3 : 4, n = models[model].params - first;
    SPLAT_ASSERT(n == splat__distortion_params(c->distortion.model));
    for (uint32_t k = 0; k < n; k++) {
        c->distortion.k[k] = p[first + k];
        if (!splat__finite_float(p[first + k]))
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u has a distortion parameter that is not finite as "
                               "a float (%g)", path, c->id, p[first + k]);
    }
    if (!splat__finite_float(c->fx) || !splat__finite_float(c->fy) || !splat__finite_float(c->cx) ||
        !splat__finite_float(c->cy))
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u has parameters that are not finite as floats (%g %g %g %g)",
                           path, c->id, c->fx, c->fy, c->cx, c->cy);
    if (!(c->fx > 0 && c->fy > 0))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u has a focal length that is not positive", path, c->id);
    if (c->width == 0 || c->height == 0 || c->width > MAX_CAMERA_SIZE || c->height > MAX_CAMERA_SIZE)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u has an invalid size %llux%llu", path, c->id,
                           (unsigned long long)c->width, (unsigned long long)c->height);
    return SPLAT_OK;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = SPLAT_MAX(*cap * 2, (size_t)16), bytes;
    while (n < need) n *= 2;
    if (!splat__mul_size(n, elem, &bytes)) return false;
    void *q = splat__realloc(*p, bytes);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static splat_status oom(const char *path, splat_error *err)
{
    return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
}

/* ------------------------------------------------------------------------- binary */

static splat_status read_count(const char *path, splat_cursor *c, size_t min_record, const char *what, uint64_t *n,
                               splat_error *err)
{
    if (!splat__cursor_u64(c, n))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated: no room for the number of %s", path, what);
    if (*n > splat__cursor_left(c) / min_record)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: says it holds %llu %s, more than its %zu remaining bytes can "
                           "(corrupt or truncated file)", path, (unsigned long long)*n, what, splat__cursor_left(c));
    return SPLAT_OK;
}

static splat_status cameras_bin(const char *path, splat_cursor *c, col_model *m, splat_error *err)
{
    uint64_t n;
    splat_status st = read_count(path, c, 24 + 3 * 8, "cameras", &n, err);
    if (st != SPLAT_OK) return st;
    if (!grow((void **)&m->cams, &m->cap_cams, n, sizeof *m->cams)) return oom(path, err);
    for (uint64_t i = 0; i < n; i++) {
        col_camera *cam = &m->cams[i];
        uint32_t model;
        double p[MAX_MODEL_PARAMS];
        if (!splat__cursor_u32(c, &cam->id) || !splat__cursor_u32(c, &model) || !splat__cursor_u64(c, &cam->width) ||
            !splat__cursor_u64(c, &cam->height))
            goto truncated;
        if (model >= SPLAT_COUNTOF(models))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u has unknown model id %d (corrupt file?)", path,
                               cam->id, (int32_t)model);
        for (uint32_t k = 0; k < models[model].params; k++)
            if (!splat__cursor_f64(c, &p[k])) goto truncated;
        if (!models[model].supported) return unsupported_model(path, cam->id, models[model].name, err);
        if ((st = set_camera(path, cam, (int)model, p, err)) != SPLAT_OK) return st;
        m->n_cams++;
        continue;
    truncated:
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated while reading camera %llu of %llu", path,
                           (unsigned long long)i + 1, (unsigned long long)n);
    }
    return SPLAT_OK;
}

static splat_status images_bin(const char *path, splat_cursor *c, col_model *m, splat_error *err)
{
    uint64_t n;
    splat_status st = read_count(path, c, 4 + 56 + 4 + 1 + 8, "images", &n, err);
    if (st != SPLAT_OK) return st;
    if (!grow((void **)&m->imgs, &m->cap_imgs, n, sizeof *m->imgs)) return oom(path, err);
    for (uint64_t i = 0; i < n; i++) {
        col_image *img = &m->imgs[i];
        uint32_t id = 0;
        uint64_t n2d;
        bool ok = splat__cursor_u32(c, &id);
        for (int k = 0; k < 4; k++) ok = ok && splat__cursor_f64(c, &img->q[k]);
        for (int k = 0; k < 3; k++) ok = ok && splat__cursor_f64(c, &img->t[k]);
        ok = ok && splat__cursor_u32(c, &img->camera_id);
        if (!ok) goto truncated;
        const uint8_t *name = c->p + c->pos, *nul = memchr(name, 0, splat__cursor_left(c));
        if (!nul) goto truncated;
        if (nul == name)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: image %u has an empty name", path, id);
        img->name = splat__strdup((const char *)name);
        if (!img->name) return oom(path, err);
        m->n_imgs++;
        c->pos += (size_t)(nul - name) + 1;
        if (!splat__cursor_u64(c, &n2d)) goto truncated;
        if (n2d > splat__cursor_left(c) / 24)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: image \"%s\" says it has %llu 2D points, more than the "
                               "file holds (corrupt or truncated)", path, img->name, (unsigned long long)n2d);
        c->pos += (size_t)n2d * 24;
        continue;
    truncated:
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated while reading image %llu of %llu", path,
                           (unsigned long long)i + 1, (unsigned long long)n);
    }
    return SPLAT_OK;
}

static splat_status add_point(const char *path, col_model *m, const double xyz[3], const uint8_t rgb[3],
                              splat_error *err)
{
    for (int k = 0; k < 3; k++)
        if (!splat__finite_float(xyz[k]))
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: point %zu has a non-finite position", path, m->n_points);
    if (m->n_points == UINT32_MAX) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: too many points", path);
    size_t cap = m->cap_points;
    if (!grow((void **)&m->points, &cap, m->n_points + 1, 3 * sizeof(float)) ||
        !grow((void **)&m->colors, &m->cap_points, m->n_points + 1, 3))
        return oom(path, err);
    for (int k = 0; k < 3; k++) {
        m->points[m->n_points * 3 + (size_t)k] = (float)xyz[k];
        m->colors[m->n_points * 3 + (size_t)k] = rgb[k];
    }
    m->n_points++;
    return SPLAT_OK;
}

static splat_status points_bin(const char *path, splat_cursor *c, col_model *m, splat_error *err)
{
    uint64_t n;
    splat_status st = read_count(path, c, 8 + 24 + 3 + 8 + 8, "points", &n, err);
    if (st != SPLAT_OK) return st;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = 0, track;
        double xyz[3], error;
        uint8_t rgb[3];
        bool ok = splat__cursor_u64(c, &id);
        for (int k = 0; k < 3; k++) ok = ok && splat__cursor_f64(c, &xyz[k]);
        ok = ok && splat__cursor_bytes(c, rgb, 3) && splat__cursor_f64(c, &error) && splat__cursor_u64(c, &track);
        if (!ok)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: truncated while reading point %llu of %llu", path,
                               (unsigned long long)i + 1, (unsigned long long)n);
        if (track > splat__cursor_left(c) / 8)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: point %llu says its track has %llu entries, more than the "
                               "file holds (corrupt or truncated)", path, (unsigned long long)id,
                               (unsigned long long)track);
        c->pos += (size_t)track * 8;
        if ((st = add_point(path, m, xyz, rgb, err)) != SPLAT_OK) return st;
    }
    return SPLAT_OK;
}

/* --------------------------------------------------------------------------- text */

typedef struct text_reader {
    char *p;
    uint32_t line;
} text_reader;

/* The next line, NUL-terminated in place, or NULL at the end. */
static char *next_line(text_reader *r)
{
    if (!*r->p) return NULL;
    char *line = r->p, *nl = strchr(line, '\n');
    if (nl) {
        *nl = 0;
        r->p = nl + 1;
    } else {
        r->p += strlen(line);
    }
    r->line++;
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) line[--n] = 0;
    while (*line == ' ' || *line == '\t') line++;
    return line;
}

/* A content line: skips blank lines and comments. */
static char *next_record(text_reader *r)
{
    char *line;
    while ((line = next_line(r)) && (!*line || *line == '#')) {
    }
    return line;
}

static char *next_token(char **p)
{
    while (**p == ' ' || **p == '\t') (*p)++;
    if (!**p) return NULL;
    char *t = *p;
    while (**p && **p != ' ' && **p != '\t') (*p)++;
    if (**p) *(*p)++ = 0;
    return t;
}

static bool parse_f64(const char *s, double *v)
{
    char *end;
    if (!s) return false;
    *v = strtod(s, &end);
    return end != s && !*end;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9' || strlen(s) > 19) return false;
    uint64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return true;
}

static bool parse_u32(const char *s, uint32_t *v)
{
    uint64_t x;
    if (!parse_u64(s, &x) || x > UINT32_MAX) return false;
    *v = (uint32_t)x;
    return true;
}

static splat_status cameras_txt(const char *path, text_reader *r, col_model *m, splat_error *err)
{
    char *line;
    while ((line = next_record(r))) {
        col_camera cam = {0};
        char *model = NULL;
        if (!parse_u32(next_token(&line), &cam.id) || !(model = next_token(&line)) ||
            !parse_u64(next_token(&line), &cam.width) || !parse_u64(next_token(&line), &cam.height))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s:%u: expected CAMERA_ID MODEL WIDTH HEIGHT PARAMS...", path,
                               r->line);
        int id = -1;
        for (int k = 0; k < (int)SPLAT_COUNTOF(models) && id < 0; k++)
            if (strcmp(model, models[k].name) == 0) id = k;
        if (id < 0 || !models[id].supported) return unsupported_model(path, cam.id, model, err);
        double p[MAX_MODEL_PARAMS];
        uint32_t np = models[id].params;
        for (uint32_t k = 0; k < np; k++)
            if (!parse_f64(next_token(&line), &p[k]))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s:%u: %s needs %u numeric parameters", path, r->line,
                                   model, np);
        if (next_token(&line))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s:%u: %s has more than %u parameters", path, r->line, model, np);
        splat_status st = set_camera(path, &cam, id, p, err);
        if (st != SPLAT_OK) return st;
        if (!grow((void **)&m->cams, &m->cap_cams, m->n_cams + 1, sizeof *m->cams)) return oom(path, err);
        m->cams[m->n_cams++] = cam;
    }
    return SPLAT_OK;
}

static splat_status images_txt(const char *path, text_reader *r, col_model *m, splat_error *err)
{
    char *line;
    while ((line = next_record(r))) {
        col_image img = {0};
        uint32_t id;
        bool ok = parse_u32(next_token(&line), &id);
        for (int k = 0; k < 4; k++) ok = ok && parse_f64(next_token(&line), &img.q[k]);
        for (int k = 0; k < 3; k++) ok = ok && parse_f64(next_token(&line), &img.t[k]);
        ok = ok && parse_u32(next_token(&line), &img.camera_id);
        while (*line == ' ' || *line == '\t') line++;
        if (!ok || !*line)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s:%u: expected IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME",
                               path, r->line);
        /* the rest of the line is the name (which may hold spaces) */
        if (!grow((void **)&m->imgs, &m->cap_imgs, m->n_imgs + 1, sizeof *m->imgs)) return oom(path, err);
        img.name = splat__strdup(line);
        if (!img.name) return oom(path, err);
        m->imgs[m->n_imgs++] = img;
        next_line(r); /* the image's 2D points (possibly an empty line); unused */
    }
    return SPLAT_OK;
}

static splat_status points_txt(const char *path, text_reader *r, col_model *m, splat_error *err)
{
    char *line;
    while ((line = next_record(r))) {
        uint64_t id;
        double xyz[3], error;
        uint32_t c[3];
        uint8_t rgb[3];
        bool ok = parse_u64(next_token(&line), &id);
        for (int k = 0; k < 3; k++) ok = ok && parse_f64(next_token(&line), &xyz[k]);
        for (int k = 0; k < 3; k++) ok = ok && parse_u32(next_token(&line), &c[k]) && c[k] <= 255;
        ok = ok && parse_f64(next_token(&line), &error);
        if (!ok)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s:%u: expected POINT3D_ID X Y Z R G B ERROR TRACK...", path,
                               r->line);
        for (int k = 0; k < 3; k++) rgb[k] = (uint8_t)c[k];
        splat_status st = add_point(path, m, xyz, rgb, err);
        if (st != SPLAT_OK) return st;
    }
    return SPLAT_OK;
}

/* ------------------------------------------------------------------------ loading */

typedef splat_status (*bin_parser)(const char *, splat_cursor *, col_model *, splat_error *);
typedef splat_status (*txt_parser)(const char *, text_reader *, col_model *, splat_error *);

/* Parses <dir>/<stem>.bin, or <dir>/<stem>.txt when there is no .bin; `*used` is the path read. */
static splat_status parse_file(const char *dir, const char *stem, bin_parser bin, txt_parser txt, col_model *m,
                               char **used, splat_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "%s.bin", stem);
    char *path = splat__path_join(dir, name);
    if (!path) return oom(dir, err);
    bool binary = splat__is_file(path);
    if (!binary) {
        snprintf(name, sizeof name, "%s.txt", stem);
        splat__free(path);
        path = splat__path_join(dir, name);
        if (!path) return oom(dir, err);
        if (!splat__is_file(path)) {
            splat__fail(err, SPLAT_ERR_IO, "%s/%s.bin: not found (nor %s.txt)", dir, stem, stem);
            splat__free(path);
            return SPLAT_ERR_IO;
        }
    }
    *used = path;
    char *data;
    size_t size;
    splat_status st = splat__read_file(path, MAX_MODEL_FILE, &data, &size, err);
    if (st != SPLAT_OK) return st;
    if (binary) {
        splat_cursor c = {(const uint8_t *)data, size, 0};
        st = bin(path, &c, m, err);
        if (st == SPLAT_OK && splat__cursor_left(&c) != 0)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %zu unexpected bytes after the last record (corrupt file?)",
                             path, splat__cursor_left(&c));
    } else if (memchr(data, 0, size)) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: not a text file (it holds NUL bytes)", path);
    } else {
        text_reader r = {data, 0};
        st = txt(path, &r, m, err);
    }
    splat__free(data);
    return st;
}

static int cmp_camera(const void *a, const void *b)
{
    uint32_t x = ((const col_camera *)a)->id, y = ((const col_camera *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_view(const void *a, const void *b)
{
    return strcmp(((const splat_data_view *)a)->name, ((const splat_data_view *)b)->name);
}

/* The image folder for the requested factor: images_N/ when it exists, else images/ with the
 * factor applied after loading. */
static splat_status image_folder(const splat_dataset_desc *desc, char **folder, uint32_t *downsample, splat_error *err)
{
    *downsample = 1;
    uint32_t f = desc->images_factor;
    if (f > 1) {
        char sub[32];
        snprintf(sub, sizeof sub, "images_%u", f);
        *folder = splat__path_join(desc->path, sub);
        if (!*folder) return oom(desc->path, err);
        if (splat__is_dir(*folder)) return SPLAT_OK;
        splat__free(*folder);
        *downsample = f;
    }
    *folder = splat__path_join(desc->path, "images");
    if (!*folder) return oom(desc->path, err);
    if (!splat__is_dir(*folder)) {
        if (f > 1)
            return splat__fail(err, SPLAT_ERR_IO, "%s: neither images_%u/ nor images/ exists", desc->path, f);
        return splat__fail(err, SPLAT_ERR_IO, "%s: no images/ folder%s", desc->path,
                           " (for images_N/, ask for images factor N)");
    }
    return SPLAT_OK;
}

/* The masks folder beside the image folder: masks_N/ beside images_N/, else masks/; NULL (and
 * SPLAT_OK) when there is none. */
static splat_status mask_folder(const splat_dataset_desc *desc, const char *folder, char **masks, splat_error *err)
{
    *masks = NULL;
    const char *base = strrchr(folder, '/');
    base = base ? base + 1 : folder;
    char sub[64];
    if (strncmp(base, "images_", 7) == 0) snprintf(sub, sizeof sub, "masks_%s", base + 7);
    else snprintf(sub, sizeof sub, "masks");
    char *path = splat__path_join(desc->path, sub);
    if (!path) return oom(desc->path, err);
    if (splat__is_dir(path)) *masks = path;
    else splat__free(path);
    return SPLAT_OK;
}

/* A view's mask in `masks`: its image's name, the name with ".png" appended, or the name with its
 * extension replaced by ".png" (the first that exists). */
static splat_status find_mask(const char *masks, splat_data_view *v, splat_error *err)
{
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", v->name);
    char *dot = strrchr(stem, '.'), *slash = strrchr(stem, '/');
    if (dot && (!slash || dot > slash)) snprintf(dot, sizeof stem - (size_t)(dot - stem), ".png");
    else snprintf(stem + strlen(stem), sizeof stem - strlen(stem), ".png");
    char appended[1100];
    snprintf(appended, sizeof appended, "%s.png", v->name);
    const char *names[] = {v->name, appended, stem};
    for (size_t k = 0; k < SPLAT_COUNTOF(names); k++) {
        char *path = splat__path_join(masks, names[k]);
        if (!path) return oom(masks, err);
        if (splat__is_file(path)) {
            v->mask_path = path;
            return SPLAT_OK;
        }
        splat__free(path);
    }
    if (strcmp(stem, v->name) == 0) /* a .png image: its stem form is its own name */
        return splat__fail(err, SPLAT_ERR_IO, "%s: no mask for image \"%s\" (looked for \"%s\" and \"%s\")", masks,
                           v->name, names[0], names[1]);
    return splat__fail(err, SPLAT_ERR_IO, "%s: no mask for image \"%s\" (looked for \"%s\", \"%s\" and \"%s\")", masks,
                       v->name, names[0], names[1], names[2]);
}

static splat_status make_view(const col_model *m, col_image *img, const char *cams_path, const char *images_path,
                              const char *folder, uint32_t downsample, splat_data_view *v, splat_error *err)
{
    col_camera key = {.id = img->camera_id};
    const col_camera *cam = m->n_cams ? bsearch(&key, m->cams, m->n_cams, sizeof *m->cams, cmp_camera) : NULL;
    if (!cam)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: image \"%s\" refers to camera %u, which the model does not "
                           "define", images_path, img->name, img->camera_id);
    double qn = sqrt(img->q[0] * img->q[0] + img->q[1] * img->q[1] + img->q[2] * img->q[2] + img->q[3] * img->q[3]);
    bool finite = isfinite(qn);
    for (int k = 0; k < 3; k++) finite = finite && splat__finite_float(img->t[k]);
    if (!finite)
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: image \"%s\" has a non-finite pose", images_path, img->name);
    if (qn < 1e-9)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: image \"%s\" has a zero rotation quaternion", images_path,
                           img->name);
    /* names are paths inside the image folder: nothing absolute, no way out through ".." */
    const char *nm = img->name;
    bool escapes = nm[0] == '/' || strcmp(nm, "..") == 0 || strncmp(nm, "../", 3) == 0 || strstr(nm, "/../") ||
                   (strlen(nm) >= 3 && strcmp(nm + strlen(nm) - 3, "/..") == 0);
    if (escapes)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: image \"%s\" names a file outside the image folder", images_path,
                           img->name);
    v->name = img->name;
    img->name = NULL;
    v->image_path = splat__path_join(folder, v->name);
    if (!v->image_path) return oom(folder, err);
    v->downsample = downsample;
    uint32_t w0, h0, w, h;
    splat_status st = splat__view_size(v, &w0, &h0, &w, &h, err);
    if (st != SPLAT_OK) return st;
    /* Intrinsics are given for the camera's size; the image may be smaller (images_N/) or
     * differ per image, so scale each axis by actual / stated. */
    char what[300];
    snprintf(what, sizeof what, "image \"%s\" (camera %u)", v->name, cam->id);
    st = splat__view_aspect_check(images_path, what, w, h, (double)cam->width, (double)cam->height, err);
    if (st != SPLAT_OK) return st;
    double sx = (double)w / (double)cam->width, sy = (double)h / (double)cam->height;
    double fx = cam->fx * sx, fy = cam->fy * sy, cx = cam->cx * sx, cy = cam->cy * sy;
    /* Finite doubles may leave a float's range once scaled, and a tiny focal length round to 0. */
    if (!splat__finite_float(fx) || !splat__finite_float(fy) || !splat__finite_float(cx) || !splat__finite_float(cy))
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u's intrinsics, scaled to image \"%s\" (%ux%u), are "
                           "not finite floats", cams_path, cam->id, v->name, w, h);
    if (!((float)fx > 0 && (float)fy > 0))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u's focal length, scaled to image \"%s\" (%ux%u), is "
                           "not a positive float", cams_path, cam->id, v->name, w, h);
    splat_camera *c = &v->raw;
    c->fx = (float)fx, c->cx = (float)cx;
    c->fy = (float)fy, c->cy = (float)cy;
    c->width = w, c->height = h;
    double q[4] = {img->q[0] / qn, img->q[1] / qn, img->q[2] / qn, img->q[3] / qn}, R[9];
    splat__quat_to_mat(q, R);
    for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) c->t[k] = (float)img->t[k];
    st = splat__camera_check(images_path, what, c, err);
    v->distortion = cam->distortion;
    if (st == SPLAT_OK) st = splat__undistorted_camera(images_path, what, c, &v->distortion, &v->camera, err);
    return st;
}

splat_status splat__colmap_load(const char *model_dir, const splat_dataset_desc *desc, splat_dataset *ds,
                                splat_error *err)
{
    col_model m = {0};
    char *cams_path = NULL, *imgs_path = NULL, *pts_path = NULL, *folder = NULL, *masks = NULL;
    uint32_t downsample;
    splat_status st = parse_file(model_dir, "cameras", cameras_bin, cameras_txt, &m, &cams_path, err);
    if (st == SPLAT_OK) st = parse_file(model_dir, "images", images_bin, images_txt, &m, &imgs_path, err);
    if (st == SPLAT_OK) st = parse_file(model_dir, "points3D", points_bin, points_txt, &m, &pts_path, err);
    if (st == SPLAT_OK) st = image_folder(desc, &folder, &downsample, err);
    if (st == SPLAT_OK) st = mask_folder(desc, folder, &masks, err);
    if (st != SPLAT_OK) goto done;
    if (m.n_imgs == 0 || m.n_imgs > UINT32_MAX) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: the model has %zu images", imgs_path, m.n_imgs);
        goto done;
    }
    if (m.n_cams > 1) qsort(m.cams, m.n_cams, sizeof *m.cams, cmp_camera);
    for (size_t i = 1; i < m.n_cams; i++)
        if (m.cams[i].id == m.cams[i - 1].id) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera id %u appears twice", cams_path, m.cams[i].id);
            goto done;
        }
    ds->kind = SPLAT_DATASET_COLMAP;
    ds->views = splat__calloc(m.n_imgs, sizeof *ds->views);
    if (!ds->views) {
        st = oom(imgs_path, err);
        goto done;
    }
    ds->n_views = (uint32_t)m.n_imgs;
    for (size_t i = 0; i < m.n_imgs && st == SPLAT_OK; i++)
        st = make_view(&m, &m.imgs[i], cams_path, imgs_path, folder, downsample, &ds->views[i], err);
    for (size_t i = 0; i < m.n_imgs && st == SPLAT_OK && masks; i++) st = find_mask(masks, &ds->views[i], err);
    if (st != SPLAT_OK) goto done;
    qsort(ds->views, ds->n_views, sizeof *ds->views, cmp_view);
    for (uint32_t i = 0; i < ds->n_views; i++) {
        if (i > 0 && strcmp(ds->views[i].name, ds->views[i - 1].name) == 0) {
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: image name \"%s\" appears twice", imgs_path,
                             ds->views[i].name);
            goto done;
        }
        ds->views[i].is_test = desc->eval && i % 8 == 0;
    }
    ds->n_points = (uint32_t)m.n_points;
    ds->points = m.points, m.points = NULL;
    ds->point_colors = m.colors, m.colors = NULL;
    ds->has_alpha = false;
done:
    model_free(&m);
    splat__free(cams_path);
    splat__free(imgs_path);
    splat__free(pts_path);
    splat__free(folder);
    splat__free(masks);
    return st;
}
