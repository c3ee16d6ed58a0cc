/* io: transforms files. NeRF-synthetic (Blender) scenes: transforms_train.json and
 * transforms_test.json; nerfstudio (and Polycam, Record3D, instant-ngp) captures: one
 * transforms.json. Each frame gives an image path and a camera-to-world matrix in the
 * OpenGL/Blender camera convention (x right, y up, z back); intrinsics come from camera_angle_x or
 * fl_x, fl_y, cx, cy with w, h, and lens distortion from camera_model with k1..k4, p1, p2, each per
 * frame or for the whole file (a frame's own value wins). */
#include "io/io_util.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

static const cJSON *lookup(const cJSON *frame, const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(frame, key);
    return v ? v : cJSON_GetObjectItemCaseSensitive(root, key);
}

/* An optional number from the frame or the file; *present says whether it was there. */
static splat_status opt_number(const char *path, uint32_t i, const cJSON *frame, const cJSON *root, const char *key,
                               double *out, bool *present, splat_error *err)
{
    const cJSON *v = lookup(frame, root, key);
    *present = v != NULL;
    if (!v) return SPLAT_OK;
    if (!cJSON_IsNumber(v))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"%s\" is not a number", path, i, key);
    if (!splat__finite_float(v->valuedouble))
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: frame %u: \"%s\" is not finite", path, i, key);
    *out = v->valuedouble;
    return SPLAT_OK;
}

/* The 16 numbers of a 4x4 matrix, as 4 rows of 4 or flat. */
static bool get_matrix(const cJSON *m, double out[16])
{
    int k = 0;
    const cJSON *row, *x;
    if (!cJSON_IsArray(m)) return false;
    cJSON_ArrayForEach(row, m)
    {
        if (cJSON_IsNumber(row)) {
            if (k == 16) return false;
            out[k++] = row->valuedouble;
            continue;
        }
        if (!cJSON_IsArray(row)) return false;
        cJSON_ArrayForEach(x, row)
        {
            if (!cJSON_IsNumber(x) || k == 16) return false;
            out[k++] = x->valuedouble;
        }
    }
    return k == 16;
}

/* "./train/r_0" -> "train/r_0.png": relative to the json's folder (unless absolute), ".png"
 * when there is no extension (the Blender scenes leave it out). A leading "./" goes with the
 * slashes after it (".//x" is "x", not the absolute "/x"). */
static char *image_name(const char *file_path)
{
    while (file_path[0] == '.' && file_path[1] == '/')
        for (file_path += 2; file_path[0] == '/';) file_path++;
    const char *base = strrchr(file_path, '/');
    base = base ? base + 1 : file_path;
    bool has_ext = strchr(base, '.') != NULL;
    size_t n = strlen(file_path);
    char *s = splat__malloc(n + 5);
    if (!s) return NULL;
    memcpy(s, file_path, n + 1);
    if (!has_ext) memcpy(s + n, ".png", 5);
    return s;
}

static bool invert3(const double M[9], double inv[9])
{
    double c0 = M[4] * M[8] - M[5] * M[7], c1 = M[5] * M[6] - M[3] * M[8], c2 = M[3] * M[7] - M[4] * M[6];
    double det = M[0] * c0 + M[1] * c1 + M[2] * c2;
    if (!isfinite(det) || fabs(det) < 1e-12) return false;
    double d = 1.0 / det;
    inv[0] = c0 * d, inv[1] = (M[2] * M[7] - M[1] * M[8]) * d, inv[2] = (M[1] * M[5] - M[2] * M[4]) * d;
    inv[3] = c1 * d, inv[4] = (M[0] * M[8] - M[2] * M[6]) * d, inv[5] = (M[2] * M[3] - M[0] * M[5]) * d;
    inv[6] = c2 * d, inv[7] = (M[1] * M[6] - M[0] * M[7]) * d, inv[8] = (M[0] * M[4] - M[1] * M[3]) * d;
    return true;
}

/* What a transforms file says for all its frames. */
typedef struct tf_file {
    const char *path;        /* the json */
    const char *scene;       /* its folder, which file paths are relative to */
    const cJSON *root;
    uint32_t factor;         /* --images-factor */
    bool nerfstudio;         /* transforms.json: images_N/, masks, ply_file_path, applied_transform */
    bool applied;            /* applied_transform: saved = s R orig + a, undone at load */
    double rot[9], scale, shift[3];
} tf_file;

/* A point of the file's frame in the capture's own (p_orig = R^T (p - a) / s). */
static void unapply(const tf_file *f, const double p[3], double out[3])
{
    double d[3] = {p[0] - f->shift[0], p[1] - f->shift[1], p[2] - f->shift[2]};
    for (int r = 0; r < 3; r++) out[r] = (f->rot[r] * d[0] + f->rot[3 + r] * d[1] + f->rot[6 + r] * d[2]) / f->scale;
}

/* "applied_transform": 3 rows of 4 (or 4 with 0 0 0 1 last), a rotation with a uniform scale. */
static splat_status read_applied(tf_file *f, splat_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(f->root, "applied_transform");
    if (!a) return SPLAT_OK;
    double m[16] = {0};
    int k = 0, rows = 0;
    const cJSON *row, *x;
    bool ok = cJSON_IsArray(a);
    cJSON_ArrayForEach(row, a)
    {
        ok = ok && cJSON_IsArray(row) && cJSON_GetArraySize(row) == 4 && rows < 4;
        if (!ok) break;
        cJSON_ArrayForEach(x, row)
        {
            ok = ok && cJSON_IsNumber(x) && isfinite(x->valuedouble);
            if (ok) m[k++] = x->valuedouble;
        }
        rows++;
    }
    ok = ok && (rows == 3 || (rows == 4 && m[12] == 0 && m[13] == 0 && m[14] == 0 && m[15] == 1));
    if (!ok) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"applied_transform\" must be 3 rows of 4 numbers", f->path);
    double R[9] = {m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10]};
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    double s = cbrt(det), worst = 0;
    for (int i = 0; i < 3 && det > 0; i++)
        for (int j = 0; j < 3; j++) {
            double dot = 0;
            for (int c = 0; c < 3; c++) dot += R[i * 3 + c] * R[j * 3 + c];
            worst = fmax(worst, fabs(dot / (s * s) - (i == j)));
        }
    if (!(det > 0) || !(worst < 1e-6) || !splat__finite_float(s) || !splat__finite_float(1 / s))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"applied_transform\" is not a rotation with a uniform scale "
                           "(splatc undoes it to train in the capture's own frame)", f->path);
    f->applied = true, f->scale = s;
    for (int i = 0; i < 9; i++) f->rot[i] = R[i] / s;
    f->shift[0] = m[3], f->shift[1] = m[7], f->shift[2] = m[11];
    return SPLAT_OK;
}

/* The lens of a frame: camera_model and k1..k4, p1, p2 (nerfstudio's names; all 0 when absent). */
static splat_status read_lens(const tf_file *f, uint32_t i, const cJSON *frame, splat_distortion *d, splat_error *err)
{
    static const char *const keys[] = {"k1", "k2", "k3", "k4", "p1", "p2"};
    double k[6] = {0};
    for (int j = 0; j < 6; j++) {
        bool present;
        splat_status st = opt_number(f->path, i, frame, f->root, keys[j], &k[j], &present, err);
        if (st != SPLAT_OK) return st;
    }
    const cJSON *model = lookup(frame, f->root, "camera_model");
    if (model && !cJSON_IsString(model))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"camera_model\" is not a string", f->path, i);
    static const char *const perspective[] = {"SIMPLE_PINHOLE", "PINHOLE", "SIMPLE_RADIAL", "RADIAL", "OPENCV"};
    bool persp = !model;
    for (size_t j = 0; model && j < SPLAT_COUNTOF(perspective); j++) persp = persp || strcmp(model->valuestring, perspective[j]) == 0;
    memset(d, 0, sizeof *d);
    if (persp) {
        d->model = SPLAT_DISTORTION_NERFSTUDIO;
        memcpy(d->k, k, sizeof k);
    } else if (strcmp(model->valuestring, "OPENCV_FISHEYE") == 0) {
        if (k[4] != 0 || k[5] != 0)
            return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: frame %u: OPENCV_FISHEYE has no tangential terms, but p1 "
                               "or p2 is not 0", f->path, i);
        d->model = SPLAT_DISTORTION_OPENCV_FISHEYE;
        memcpy(d->k, k, 4 * sizeof *k);
    } else {
        return splat__fail(err, SPLAT_ERR_UNSUPPORTED, "%s: frame %u: camera_model \"%s\" is not supported (splatc reads "
                           "SIMPLE_PINHOLE, PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV and OPENCV_FISHEYE)", f->path, i,
                           model->valuestring);
    }
    if (splat__distortion_is_zero(d)) d->model = SPLAT_DISTORTION_NONE;
    return SPLAT_OK;
}

/* `name` (relative to the scene) in <scene>/<prefix>_N/ by its last component, when --images-factor
 * N > 1 and that file exists (nerfstudio's downscaled copies); NULL otherwise. */
static char *downscaled(const tf_file *f, const char *prefix, const char *name)
{
    if (f->factor <= 1) return NULL;
    const char *base = strrchr(name, '/');
    char sub[1100];
    snprintf(sub, sizeof sub, "%s_%u/%s", prefix, f->factor, base ? base + 1 : name);
    char *path = splat__path_join(f->scene, sub);
    if (path && !splat__is_file(path)) {
        splat__free(path);
        path = NULL;
    }
    return path;
}

static char *in_scene(const tf_file *f, const char *name)
{
    return name[0] == '/' ? splat__strdup(name) : splat__path_join(f->scene, name);
}

/* A frame's mask: "mask_path" (nerfstudio), in masks_N/ when its image came from images_N/. */
static splat_status frame_mask(const tf_file *f, uint32_t i, const cJSON *frame, splat_data_view *v, splat_error *err)
{
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(frame, "mask_path");
    if (!mp) return SPLAT_OK;
    if (!cJSON_IsString(mp) || !mp->valuestring[0])
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"mask_path\" is not a file name", f->path, i);
    char *name = image_name(mp->valuestring);
    if (!name) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", f->path);
    if (v->downsample == 1 && f->factor > 1) { /* the image is a downscaled copy: so must the mask be */
        v->mask_path = downscaled(f, "masks", name);
        if (!v->mask_path) {
            splat__free(name);
            return splat__fail(err, SPLAT_ERR_IO, "%s: frame %u: the image comes from images_%u/, but masks_%u/ has no "
                               "mask for it", f->path, i, f->factor, f->factor);
        }
    } else {
        v->mask_path = in_scene(f, name);
    }
    splat__free(name);
    if (!v->mask_path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", f->path);
    if (!splat__is_file(v->mask_path))
        return splat__fail(err, SPLAT_ERR_IO, "%s: frame %u: mask %s not found", f->path, i, v->mask_path);
    return SPLAT_OK;
}

static splat_status make_view(const tf_file *f, uint32_t i, const cJSON *frame, splat_data_view *v, splat_error *err)
{
    const char *path = f->path;
    const cJSON *root = f->root;
    if (!cJSON_IsObject(frame)) return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u is not an object", path, i);
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(frame, "file_path");
    if (!cJSON_IsString(fp) || !fp->valuestring[0])
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u has no \"file_path\" string", path, i);
    double m[16];
    if (!get_matrix(cJSON_GetObjectItemCaseSensitive(frame, "transform_matrix"), m))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"transform_matrix\" must be 4 rows of 4 numbers",
                           path, i);
    for (int k = 0; k < 12; k++)
        if (!splat__finite_float(m[k]))
            return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: frame %u: \"transform_matrix\" is not finite", path, i);
    /* a camera pose: a rotation and a position. A last row other than (0 0 0 1) or a rotation part
     * with scale or shear would be dropped or misread in silence; float-rounded poses pass easily */
    if (!(fabs(m[12]) < 1e-6 && fabs(m[13]) < 1e-6 && fabs(m[14]) < 1e-6 && fabs(m[15] - 1) < 1e-6))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"transform_matrix\" ends in the row (%g %g %g %g), not "
                           "(0 0 0 1): not a camera pose", path, i, m[12], m[13], m[14], m[15]);
    double off = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            off = fmax(off, fabs(m[a] * m[b] + m[4 + a] * m[4 + b] + m[8 + a] * m[8 + b] - (a == b)));
    if (!(off < 1e-3))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: the rotation part of \"transform_matrix\" is not "
                           "orthonormal (R^T R off the identity by up to %.3g): a pose has no scale or shear", path, i, off);
    v->name = image_name(fp->valuestring);
    if (!v->name) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    v->image_path = f->nerfstudio ? downscaled(f, "images", v->name) : NULL;
    v->downsample = v->image_path ? 1 : SPLAT_MAX(f->factor, 1u);
    if (!v->image_path) v->image_path = in_scene(f, v->name);
    if (!v->image_path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    uint32_t w0, h0, w, h;
    splat_status st = splat__view_size(v, &w0, &h0, &w, &h, err);
    if (st == SPLAT_OK && f->nerfstudio) st = frame_mask(f, i, frame, v, err);
    if (st == SPLAT_OK) st = read_lens(f, i, frame, &v->distortion, err);
    if (st != SPLAT_OK) return st;

    /* Intrinsics refer to (W, H): the "w"/"h" keys when given, else the image as stored (or, for a
     * copy in images_N/, the full-size image it was made from). */
    uint32_t copy = v->downsample == 1 && f->factor > 1 && f->nerfstudio ? f->factor : 1;
    double W = (double)w0 * copy, H = (double)h0 * copy, fx = 0, fy = 0, cx = 0, cy = 0, ax = 0, ay = 0;
    bool has_w, has_h, has_fx, has_fy, has_cx, has_cy, has_ax, has_ay;
    if ((st = opt_number(path, i, frame, root, "w", &W, &has_w, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "h", &H, &has_h, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "fl_x", &fx, &has_fx, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "fl_y", &fy, &has_fy, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "cx", &cx, &has_cx, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "cy", &cy, &has_cy, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "camera_angle_x", &ax, &has_ax, err)) != SPLAT_OK) return st;
    if ((st = opt_number(path, i, frame, root, "camera_angle_y", &ay, &has_ay, err)) != SPLAT_OK) return st;
    if (!(W >= 1 && H >= 1))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"w\" and \"h\" must be at least 1", path, i);
    if (!has_fx) {
        if (!has_ax)
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: neither \"camera_angle_x\" nor \"fl_x\" is given",
                               path, i);
        if (!(ax > 0 && ax < 3.14159))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"camera_angle_x\" %g is not an angle in (0, pi)", path, ax);
        fx = 0.5 * W / tan(0.5 * ax);
    }
    if (!has_fy) {
        if (has_ay && !(ay > 0 && ay < 3.14159))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"camera_angle_y\" %g is not an angle in (0, pi)", path, ay);
        fy = has_ay ? 0.5 * H / tan(0.5 * ay) : fx;
    }
    if (!has_cx) cx = 0.5 * W;
    if (!has_cy) cy = 0.5 * H;
    if (!(fx > 0 && fy > 0))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: focal lengths must be positive", path, i);
    char what[64];
    snprintf(what, sizeof what, "frame %u", i);
    st = splat__view_aspect_check(path, what, w, h, W, H, err);
    if (st != SPLAT_OK) return st;
    double sx = w / W, sy = h / H;
    fx *= sx, cx *= sx, fy *= sy, cy *= sy;
    /* A tiny angle or a small "w" may take a focal length past a float's range, and a tiny focal
     * length round to 0. */
    if (!splat__finite_float(fx) || !splat__finite_float(fy) || !splat__finite_float(cx) || !splat__finite_float(cy))
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: frame %u: the intrinsics, scaled to the image's %ux%u, are "
                           "not finite floats", path, i, w, h);
    if (!((float)fx > 0 && (float)fy > 0))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: a focal length, scaled to the image's %ux%u, is not "
                           "a positive float", path, i, w, h);
    splat_camera *c = &v->raw;
    c->fx = (float)fx, c->cx = (float)cx;
    c->fy = (float)fy, c->cy = (float)cy;
    c->width = w, c->height = h;

    /* OpenGL camera axes to OpenCV: negate the camera's y and z axes (columns 1 and 2 of the
     * camera-to-world rotation); then invert to world-to-camera. */
    double M[9], R[9], pos[3] = {m[3], m[7], m[11]};
    for (int r = 0; r < 3; r++) {
        M[r * 3 + 0] = m[r * 4 + 0];
        M[r * 3 + 1] = -m[r * 4 + 1];
        M[r * 3 + 2] = -m[r * 4 + 2];
    }
    if (f->applied) { /* back to the capture's frame: the axes turned by R^T, the position unapplied */
        double T[9], p[3];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                T[r * 3 + k] = f->rot[0 * 3 + r] * M[0 * 3 + k] + f->rot[1 * 3 + r] * M[1 * 3 + k] + f->rot[2 * 3 + r] * M[2 * 3 + k];
        unapply(f, pos, p);
        memcpy(M, T, sizeof T), memcpy(pos, p, sizeof p);
    }
    if (!invert3(M, R))
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: frame %u: \"transform_matrix\" is singular", path, i);
    double t[3];
    for (int r = 0; r < 3; r++) t[r] = -(R[r * 3] * pos[0] + R[r * 3 + 1] * pos[1] + R[r * 3 + 2] * pos[2]);
    /* Finite entries may still give a world-to-camera transform past a float's range. */
    bool finite = true;
    for (int k = 0; k < 9; k++) finite = finite && splat__finite_float(R[k]);
    for (int r = 0; r < 3; r++) finite = finite && splat__finite_float(t[r]);
    if (!finite)
        return splat__fail(err, SPLAT_ERR_NONFINITE, "%s: frame %u: \"transform_matrix\" inverts to a world-to-camera "
                           "transform that is not finite as floats", path, i);
    for (int k = 0; k < 9; k++) c->R[k] = (float)R[k];
    for (int r = 0; r < 3; r++) c->t[r] = (float)t[r];
    st = splat__camera_check(path, what, c, err);
    if (st == SPLAT_OK) st = splat__undistorted_camera(path, what, c, &v->distortion, &v->camera, err);
    return st;
}

/* Which split a nerfstudio frame is in when the file lists them ("train_filenames",
 * "test_filenames" or else "val_filenames"): 0 train, 1 test, -1 neither (left out). */
static splat_status split_of(const tf_file *f, const char *name, int *split, splat_error *err)
{
    static const char *const lists[] = {"train_filenames", "test_filenames", "val_filenames"};
    bool any = false;
    *split = 0;
    for (int l = 0; l < 3; l++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(f->root, lists[l]), *x;
        if (!list || (l == 2 && cJSON_GetObjectItemCaseSensitive(f->root, "test_filenames"))) continue;
        if (!cJSON_IsArray(list))
            return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"%s\" is not a list of file names", f->path, lists[l]);
        any = true;
        cJSON_ArrayForEach(x, list)
        {
            if (!cJSON_IsString(x))
                return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"%s\" holds something other than a file name", f->path,
                                   lists[l]);
            char *n = image_name(x->valuestring);
            if (!n) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", f->path);
            bool match = strcmp(n, name) == 0;
            splat__free(n);
            if (match) {
                *split = l == 0 ? 0 : 1;
                return SPLAT_OK;
            }
        }
    }
    if (any) *split = -1;
    return SPLAT_OK;
}

static void view_free(splat_data_view *v)
{
    splat__free(v->name), splat__free(v->image_path), splat__free(v->mask_path);
    memset(v, 0, sizeof *v);
}

static int cmp_view(const void *a, const void *b)
{
    return strcmp(((const splat_data_view *)a)->name, ((const splat_data_view *)b)->name);
}

/* The initial points of a nerfstudio scene ("ply_file_path"), in the capture's frame. */
static splat_status load_points(const tf_file *f, splat_dataset *ds, splat_error *err)
{
    const cJSON *ply = cJSON_GetObjectItemCaseSensitive(f->root, "ply_file_path");
    if (!ply) return SPLAT_OK;
    if (!cJSON_IsString(ply) || !ply->valuestring[0])
        return splat__fail(err, SPLAT_ERR_FORMAT, "%s: \"ply_file_path\" is not a file name", f->path);
    char *path = in_scene(f, ply->valuestring);
    if (!path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", f->path);
    splat_status st = splat__points_ply_read(path, &ds->points, &ds->point_colors, &ds->n_points, err);
    for (uint32_t i = 0; st == SPLAT_OK && f->applied && i < ds->n_points; i++) {
        double p[3] = {ds->points[i * 3], ds->points[i * 3 + 1], ds->points[i * 3 + 2]}, q[3];
        unapply(f, p, q);
        for (int c = 0; c < 3; c++) {
            if (!splat__finite_float(q[c]))
                st = splat__fail(err, SPLAT_ERR_NONFINITE, "%s: point %u is not finite once applied_transform is undone",
                                 path, i);
            ds->points[i * 3 + (uint32_t)c] = (float)q[c];
        }
    }
    splat__free(path);
    return st;
}

/* One transforms file: split 0 (train) or 1 (test) for NeRF-synthetic, -1 for nerfstudio's
 * transforms.json (splits from its lists, or every 8th with desc->eval). */
static splat_status load_file(const splat_dataset_desc *desc, const char *json_name, int split, splat_dataset *ds,
                              splat_error *err)
{
    char *path = splat__path_join(desc->path, json_name);
    if (!path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", desc->path);
    cJSON *root = NULL;
    splat_status st = SPLAT_OK;
    if (split == 1 && !splat__is_file(path)) goto done; /* a scene may come without a test split */
    st = splat__json_read(path, &root, err);
    if (st != SPLAT_OK) goto done;
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "frames");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(frames)) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: expected an object with a \"frames\" list", path);
        goto done;
    }
    tf_file f = {.path = path, .scene = desc->path, .root = root, .factor = desc->images_factor, .nerfstudio = split < 0};
    if (f.nerfstudio && (st = read_applied(&f, err)) != SPLAT_OK) goto done;
    size_t n = (size_t)cJSON_GetArraySize(frames), total = (size_t)ds->n_views + n, bytes;
    if (total > UINT32_MAX || !splat__mul_size(total ? total : 1, sizeof *ds->views, &bytes)) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: too many frames", path);
        goto done;
    }
    splat_data_view *views = splat__realloc(ds->views, bytes);
    if (!views) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
        goto done;
    }
    ds->views = views;
    memset(views + ds->n_views, 0, n * sizeof *views);
    uint32_t i = 0, first = ds->n_views, masked = 0;
    const cJSON *frame;
    cJSON_ArrayForEach(frame, frames)
    {
        splat_data_view *v = &ds->views[ds->n_views++];
        v->is_test = split == 1;
        st = make_view(&f, i++, frame, v, err);
        if (st != SPLAT_OK) goto done;
        masked += v->mask_path != NULL;
        int in = 0;
        if (f.nerfstudio && (st = split_of(&f, v->name, &in, err)) != SPLAT_OK) goto done;
        v->is_test = v->is_test || in == 1;
        if (in < 0) view_free(v), ds->n_views--; /* in no list */
    }
    if (masked && masked != i) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: %u of %u frames have a \"mask_path\"; give every frame one or none",
                         path, masked, i);
        goto done;
    }
    if (f.nerfstudio) {
        bool listed = cJSON_GetObjectItemCaseSensitive(root, "train_filenames") != NULL;
        qsort(ds->views + first, ds->n_views - first, sizeof *ds->views, cmp_view);
        for (uint32_t k = first; k < ds->n_views && !listed; k++) ds->views[k].is_test = desc->eval && (k - first) % 8 == 0;
        st = load_points(&f, ds, err);
    }
done:
    cJSON_Delete(root);
    splat__free(path);
    return st;
}

splat_status splat__nerf_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err)
{
    ds->kind = SPLAT_DATASET_NERF_SYNTHETIC;
    ds->has_alpha = true;
    splat_status st = load_file(desc, "transforms_train.json", 0, ds, err);
    if (st == SPLAT_OK) st = load_file(desc, "transforms_test.json", 1, ds, err);
    if (st == SPLAT_OK && ds->n_views == 0)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: transforms_train.json lists no frames", desc->path);
    return st;
}

splat_status splat__transforms_load(const splat_dataset_desc *desc, splat_dataset *ds, splat_error *err)
{
    ds->kind = SPLAT_DATASET_TRANSFORMS;
    splat_status st = load_file(desc, "transforms.json", -1, ds, err);
    if (st == SPLAT_OK && ds->n_views == 0)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: transforms.json lists no frames to train on", desc->path);
    return st;
}
