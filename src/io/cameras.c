/* io: camera lists for `splatc render`, in the original 3DGS cameras.json form (camera-to-world
 * rotation and position; splatc adds the principal point) or splatc's own form (world-to-camera R
 * and t, full intrinsics). */
#include "io/io_util.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#define MAX_SIZE (1u << 24)

static splat_status get_number(const char *path, uint32_t i, const cJSON *obj, const char *key, double *out,
                               splat_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: \"%s\" is missing or not a number", path, i, key);
    if (!splat__finite_float(v->valuedouble))
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u: \"%s\" is not a finite float", path, i, key);
    *out = v->valuedouble;
    return SPLAT_OK;
}

static splat_status get_size(const char *path, uint32_t i, const cJSON *obj, const char *key, uint32_t *out,
                             splat_error *err)
{
    double v;
    splat_status st = get_number(path, i, obj, key, &v, err);
    if (st != SPLAT_OK) return st;
    if (v < 1 || v > MAX_SIZE || v != floor(v))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: \"%s\" must be a whole number of pixels from 1 to "
                           "%u", path, i, key, MAX_SIZE);
    *out = (uint32_t)v;
    return SPLAT_OK;
}

/* `n` numbers from a flat list, or from a list of rows (3x3 matrices are written both ways). */
static splat_status get_numbers(const char *path, uint32_t i, const cJSON *obj, const char *key, double *out, int n,
                                splat_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    int k = 0;
    bool ok = cJSON_IsArray(a);
    const cJSON *list = ok ? a : NULL, *e;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *x;
        if (cJSON_IsArray(e)) {
            cJSON_ArrayForEach(x, e)
            {
                if (!cJSON_IsNumber(x) || k == n) ok = false;
                else out[k++] = x->valuedouble;
            }
        } else if (!cJSON_IsNumber(e) || k == n) {
            ok = false;
        } else {
            out[k++] = e->valuedouble;
        }
    }
    if (!ok || k != n)
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: \"%s\" must be a list of %d numbers", path, i, key, n);
    for (k = 0; k < n; k++)
        if (!splat__finite_float(out[k]))
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u: \"%s\" holds a non-finite value", path, i, key);
    return SPLAT_OK;
}

static bool is_rotation(const double R[9])
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double d = R[a * 3] * R[b * 3] + R[a * 3 + 1] * R[b * 3 + 1] + R[a * 3 + 2] * R[b * 3 + 2];
            if (fabs(d - (a == b)) > 1e-3) return false;
        }
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    return det > 0;
}

static splat_status read_camera(const char *path, uint32_t i, const cJSON *obj, splat_camera *cam, char **name,
                                splat_error *err)
{
    if (!cJSON_IsObject(obj))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u is not a JSON object", path, i);
    double fx, fy, cx, cy, R[9], t[3];
    const char *name_key;
    splat_status st;
    if ((st = get_size(path, i, obj, "width", &cam->width, err)) != SPLAT_OK) return st;
    if ((st = get_size(path, i, obj, "height", &cam->height, err)) != SPLAT_OK) return st;
    if ((st = get_number(path, i, obj, "fx", &fx, err)) != SPLAT_OK) return st;
    if ((st = get_number(path, i, obj, "fy", &fy, err)) != SPLAT_OK) return st;
    if (cJSON_HasObjectItem(obj, "rotation")) {
        /* 3DGS: camera-to-world rotation (rows) and camera centre; principal point at the centre */
        double rot[9], pos[3];
        if ((st = get_numbers(path, i, obj, "rotation", rot, 9, err)) != SPLAT_OK) return st;
        if ((st = get_numbers(path, i, obj, "position", pos, 3, err)) != SPLAT_OK) return st;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) R[a * 3 + b] = rot[b * 3 + a];
        for (int a = 0; a < 3; a++) t[a] = -(R[a * 3] * pos[0] + R[a * 3 + 1] * pos[1] + R[a * 3 + 2] * pos[2]);
        /* What splatc adds to the form (its readers ignore unknown keys): the principal point,
         * else the centre; and the translation, which the position gives only to rounding (a
         * component that is tiny next to the camera's distance, as when it looks straight at the
         * origin, is lost). It must agree with the position, so that an edit of one is not
         * silently overruled by the other. */
        cx = 0.5 * cam->width;
        cy = 0.5 * cam->height;
        if (cJSON_HasObjectItem(obj, "cx") && (st = get_number(path, i, obj, "cx", &cx, err)) != SPLAT_OK) return st;
        if (cJSON_HasObjectItem(obj, "cy") && (st = get_number(path, i, obj, "cy", &cy, err)) != SPLAT_OK) return st;
        if (cJSON_HasObjectItem(obj, "t")) {
            double given[3];
            if ((st = get_numbers(path, i, obj, "t", given, 3, err)) != SPLAT_OK) return st;
            double scale = 1 + sqrt(pos[0] * pos[0] + pos[1] * pos[1] + pos[2] * pos[2]);
            for (int a = 0; a < 3; a++) {
                if (!(fabs(given[a] - t[a]) <= 1e-5 * scale))
                    return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: \"t\" does not match \"position\" (was one "
                                       "of them edited? remove \"t\" to use the position)", path, i);
                t[a] = given[a];
            }
        }
        name_key = "img_name";
    } else if (cJSON_HasObjectItem(obj, "R")) {
        if ((st = get_number(path, i, obj, "cx", &cx, err)) != SPLAT_OK) return st;
        if ((st = get_number(path, i, obj, "cy", &cy, err)) != SPLAT_OK) return st;
        if ((st = get_numbers(path, i, obj, "R", R, 9, err)) != SPLAT_OK) return st;
        if ((st = get_numbers(path, i, obj, "t", t, 3, err)) != SPLAT_OK) return st;
        name_key = "name";
    } else {
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u has neither \"rotation\" and \"position\" (3DGS) "
                           "nor \"R\" and \"t\" (splatc)", path, i);
    }
    if (!((float)fx > 0 && (float)fy > 0)) /* a tiny positive double rounds to 0 as a float */
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: focal lengths must be positive floats", path, i);
    if (!is_rotation(R))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: camera %u: the rotation is not a rotation matrix", path, i);
    cam->fx = (float)fx, cam->fy = (float)fy, cam->cx = (float)cx, cam->cy = (float)cy;
    for (int k = 0; k < 9; k++) cam->R[k] = (float)R[k];
    for (int k = 0; k < 3; k++) cam->t[k] = (float)t[k];
    char what[32];
    snprintf(what, sizeof what, "camera %u", i);
    if ((st = splat__camera_check(path, what, cam, err)) != SPLAT_OK) return st;
    if (name) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, name_key);
        *name = splat__strdup(cJSON_IsString(s) ? s->valuestring : "");
        if (!*name) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    return SPLAT_OK;
}

splat_status splat__cameras_read(const char *path, splat_camera **cams, char ***names, uint32_t *n, splat_error *err)
{
    SPLAT_ASSERT(path && cams && n);
    *cams = NULL;
    *n = 0;
    if (names) *names = NULL;
    cJSON *root;
    splat_status st = splat__json_read(path, &root, err);
    if (st != SPLAT_OK) return st;
    splat_camera *c = NULL;
    char **nm = NULL;
    uint32_t count = 0;
    if (!cJSON_IsArray(root)) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: expected a JSON list of cameras", path);
        goto fail;
    }
    count = (uint32_t)cJSON_GetArraySize(root);
    if (count == 0) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: the list of cameras is empty", path);
        goto fail;
    }
    c = splat__calloc(count, sizeof *c);
    nm = names ? splat__calloc(count, sizeof *nm) : NULL;
    if (!c || (names && !nm)) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        goto fail;
    }
    uint32_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        st = read_camera(path, i, item, &c[i], nm ? &nm[i] : NULL, err);
        if (st != SPLAT_OK) goto fail;
        i++;
    }
    cJSON_Delete(root);
    *cams = c;
    if (names) *names = nm;
    *n = count;
    return SPLAT_OK;
fail:
    cJSON_Delete(root);
    if (nm)
        for (uint32_t k = 0; k < count; k++) splat__free(nm[k]);
    splat__free(nm);
    splat__free(c);
    return st;
}

/* A growing text buffer for the writer. */
typedef struct text {
    char *p;
    size_t len, cap;
    bool oom;
} text;

static void put(text *t, const char *fmt, ...) SPLAT_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    if (t->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = true;
            return;
        }
        if (t->p && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = SPLAT_MAX(t->cap * 2, t->len + (size_t)n + 256);
        char *q = splat__realloc(t->p, cap);
        if (!q) {
            t->oom = true;
            return;
        }
        t->p = q;
        t->cap = cap;
    }
}

static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') put(t, "\\%c", *c);
        else if (*c < 0x20) put(t, "\\u%04x", *c);
        else put(t, "%c", *c);
    }
    put(t, "\"");
}

static splat_status check_finite(const char *path, const splat_camera *cams, uint32_t n, splat_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        const splat_camera *c = &cams[i];
        bool finite = isfinite(c->fx) && isfinite(c->fy) && isfinite(c->cx) && isfinite(c->cy);
        for (int k = 0; k < 9; k++) finite = finite && isfinite(c->R[k]);
        for (int k = 0; k < 3; k++) finite = finite && isfinite(c->t[k]);
        if (!finite)
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: camera %u has a non-finite value; nothing written", path, i);
    }
    return SPLAT_OK;
}

static splat_status write_text(const char *path, text *t, splat_error *err)
{
    splat_status st;
    if (t->oom) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    } else {
        splat_atomic_file f;
        st = splat__atomic_open(&f, path, err);
        if (st == SPLAT_OK) {
            st = splat__atomic_write(&f, t->p, t->len, err);
            if (st == SPLAT_OK) st = splat__atomic_commit(&f, err);
            else splat__atomic_abort(&f);
        }
    }
    splat__free(t->p);
    return st;
}

splat_status splat__cameras_write(const char *path, const splat_camera *cams, const char *const *names, uint32_t n,
                                 splat_error *err)
{
    SPLAT_ASSERT(path && (cams || n == 0));
    splat_status st = check_finite(path, cams, n, err);
    if (st != SPLAT_OK) return st;
    /* %.9g prints every float so that it reads back to the same float. */
    text t = {0};
    put(&t, "[\n");
    for (uint32_t i = 0; i < n; i++) {
        const splat_camera *c = &cams[i];
        put(&t, "  {\"name\": ");
        put_string(&t, names && names[i] ? names[i] : "");
        put(&t, ", \"width\": %u, \"height\": %u, \"fx\": %.9g, \"fy\": %.9g, \"cx\": %.9g, \"cy\": %.9g,\n   \"R\": [",
            c->width, c->height, c->fx, c->fy, c->cx, c->cy);
        for (int k = 0; k < 9; k++) put(&t, "%s%.9g", k ? ", " : "", c->R[k]);
        put(&t, "], \"t\": [%.9g, %.9g, %.9g]}%s\n", c->t[0], c->t[1], c->t[2], i + 1 < n ? "," : "");
    }
    put(&t, "]\n");
    return write_text(path, &t, err);
}

/* The inverse of a 3x3 matrix [3,3] by its adjugate, in double. */
static bool invert3(const double m[9], double inv[9])
{
    double c[9] = {m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
                   m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                   m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3]};
    double det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6];
    if (!(fabs(det) > 1e-12)) return false;
    for (int k = 0; k < 9; k++) inv[k] = c[k] / det;
    return true;
}

splat_status splat__cameras_write_3dgs(const char *path, const splat_camera *cams, const char *const *names, uint32_t n,
                                      splat_error *err)
{
    SPLAT_ASSERT(path && (cams || n == 0));
    splat_status st = check_finite(path, cams, n, err);
    if (st != SPLAT_OK) return st;
    text t = {0};
    put(&t, "[\n");
    for (uint32_t i = 0; i < n; i++) {
        const splat_camera *c = &cams[i];
        /* The position solves R p = -t with R's inverse (a float R is orthonormal only to about
         * 1e-7), so that -R p gives t back to double rounding; t itself is written too (the reader
         * takes it). The rotation's rows are R's columns, floats printed to read back exactly. */
        double R[9], Ri[9], p[3];
        for (int k = 0; k < 9; k++) R[k] = c->R[k];
        if (!invert3(R, Ri)) {
            splat__free(t.p);
            return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: camera %u: the rotation is singular; nothing written", path,
                               i);
        }
        for (int a = 0; a < 3; a++) p[a] = -(Ri[a * 3] * c->t[0] + Ri[a * 3 + 1] * c->t[1] + Ri[a * 3 + 2] * c->t[2]);
        put(&t, "  {\"id\": %u, \"img_name\": ", i);
        put_string(&t, names && names[i] ? names[i] : "");
        put(&t, ", \"width\": %u, \"height\": %u, \"position\": [%.17g, %.17g, %.17g],\n   \"rotation\": [", c->width,
            c->height, p[0], p[1], p[2]);
        for (int a = 0; a < 3; a++)
            put(&t, "%s[%.9g, %.9g, %.9g]", a ? ", " : "", c->R[a], c->R[3 + a], c->R[6 + a]);
        put(&t, "], \"fy\": %.9g, \"fx\": %.9g,\n   \"cx\": %.9g, \"cy\": %.9g, \"t\": [%.9g, %.9g, %.9g]}%s\n", c->fy, c->fx,
            c->cx, c->cy, c->t[0], c->t[1], c->t[2], i + 1 < n ? "," : "");
    }
    put(&t, "]\n");
    return write_text(path, &t, err);
}
