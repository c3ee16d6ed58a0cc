/* io: NeRF-synthetic (Blender) scenes: transforms_train.json and transforms_test.json.
 * Each frame gives an image path and a camera-to-world matrix in the OpenGL/Blender camera
 * convention (x right, y up, z back); intrinsics come from camera_angle_x (or fl_x, fl_y, cx,
 * cy with w, h, as instant-ngp writes them), per frame or for the whole file. */
#include "io/io_util.h"

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

static splat_status make_view(const char *path, const char *scene, uint32_t i, const cJSON *frame, const cJSON *root,
                              uint32_t factor, splat_data_view *v, splat_error *err)
{
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
    v->name = image_name(fp->valuestring);
    v->image_path = !v->name ? NULL : v->name[0] == '/' ? splat__strdup(v->name) : splat__path_join(scene, v->name);
    if (!v->image_path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    v->downsample = factor > 1 ? factor : 1;
    uint32_t w0, h0, w, h;
    splat_status st = splat__view_size(v, &w0, &h0, &w, &h, err);
    if (st != SPLAT_OK) return st;

    /* Intrinsics refer to (W, H): the "w"/"h" keys when given, else the image as stored. */
    double W = w0, H = h0, fx = 0, fy = 0, cx = 0, cy = 0, ax = 0, ay = 0;
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
    v->camera = *c; /* no distortion (yet) */
    return st;
}

static splat_status load_split(const splat_dataset_desc *desc, const char *json_name, bool is_test, splat_dataset *ds,
                               splat_error *err)
{
    char *path = splat__path_join(desc->path, json_name);
    if (!path) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", desc->path);
    cJSON *root = NULL;
    splat_status st = SPLAT_OK;
    if (is_test && !splat__is_file(path)) goto done; /* a scene may come without a test split */
    st = splat__json_read(path, &root, err);
    if (st != SPLAT_OK) goto done;
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "frames");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(frames)) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: expected an object with a \"frames\" list", path);
        goto done;
    }
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
    uint32_t i = 0;
    const cJSON *frame;
    cJSON_ArrayForEach(frame, frames)
    {
        splat_data_view *v = &ds->views[ds->n_views++];
        v->is_test = is_test;
        st = make_view(path, desc->path, i++, frame, root, desc->images_factor, v, err);
        if (st != SPLAT_OK) goto done;
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
    splat_status st = load_split(desc, "transforms_train.json", false, ds, err);
    if (st == SPLAT_OK) st = load_split(desc, "transforms_test.json", true, ds, err);
    if (st == SPLAT_OK && ds->n_views == 0)
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: transforms_train.json lists no frames", desc->path);
    return st;
}
