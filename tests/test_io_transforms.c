/* io: nerfstudio's transforms.json (src/io/nerf.c) and point-cloud PLYs (src/io/points.c). The
 * oracle of the first test is COLMAP: a random COLMAP model is written as it is and converted to
 * transforms.json the way nerfstudio's colmap_to_json does (written again here from its source:
 * c2w = inverse of [R|t], the camera's y and z axes negated, then the world's y and z swapped and
 * the new z negated, recorded as applied_transform; the PLY of points transformed the same way).
 * Both must load to the same views and points. */
#include "io_fixtures.h"
#include "io/io_util.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

/* "<dir>/<fmt...>" (t_path is for names inside the test's folder; these are inside a scene) */
static const char *at(const char *dir, const char *fmt, ...) SPLAT_PRINTF(2, 3);
static const char *at(const char *dir, const char *fmt, ...)
{
    static char ring[16][1024];
    static int next;
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    char *out = ring[next++ % 16];
    snprintf(out, sizeof ring[0], "%s/%s", dir, name);
    return out;
}

static void quat_mat(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double n = w * w + x * x + y * y + z * z;
    w /= sqrt(n), x /= sqrt(n), y /= sqrt(n), z /= sqrt(n);
    /* columns: q e_k q* */
    double e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int k = 0; k < 3; k++) {
        const double *v = e[k];
        double t[3] = {2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])};
        R[0 * 3 + k] = v[0] + w * t[0] + (y * t[2] - z * t[1]);
        R[1 * 3 + k] = v[1] + w * t[1] + (z * t[0] - x * t[2]);
        R[2 * 3 + k] = v[2] + w * t[2] + (x * t[1] - y * t[0]);
    }
}

typedef struct ns_opts {
    bool keep_world;         /* keep_original_world_coordinate: no applied_transform */
    bool rows4;              /* applied_transform as 4 rows */
    bool per_frame;          /* intrinsics in every frame, none in the file */
    bool no_model;           /* no camera_model (a Polycam-style file): perspective */
} ns_opts;

static const char *ns_model(int colmap_model)
{
    return colmap_model == 5 ? "OPENCV_FISHEYE" : colmap_model <= 1 ? "PINHOLE" : "OPENCV";
}

/* The intrinsics of `c` as nerfstudio's parse_colmap_camera_params names them. */
static void ns_intrinsics(tbuf *b, const t_cam *c, bool with_model)
{
    const double *p = c->params;
    double fx = p[0], fy = c->model == 0 || c->model == 2 || c->model == 3 ? p[0] : p[1];
    int o = c->model == 0 || c->model == 2 || c->model == 3 ? 1 : 2;
    tb_printf(b, "\"w\": %u, \"h\": %u, \"fl_x\": %.17g, \"fl_y\": %.17g, \"cx\": %.17g, \"cy\": %.17g", (unsigned)c->width,
              (unsigned)c->height, fx, fy, p[o], p[o + 1]);
    if (c->model == 4) tb_printf(b, ", \"k1\": %.17g, \"k2\": %.17g, \"p1\": %.17g, \"p2\": %.17g", p[4], p[5], p[6], p[7]);
    if (c->model == 5)
        tb_printf(b, ", \"k1\": %.17g, \"k2\": %.17g, \"k3\": %.17g, \"k4\": %.17g", p[4], p[5], p[6], p[7]);
    if (with_model) tb_printf(b, ", \"camera_model\": \"%s\"", ns_model(c->model));
}

static void write_transforms(const t_colmap *m, const char *scene, const ns_opts *o)
{
    /* applied_transform: rows (0, 2, 1) of the identity, the last negated */
    const double A[3][4] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {0, -1, 0, 0}};
    tbuf b = {0};
    tb_printf(&b, "{\n");
    if (!o->per_frame) {
        ns_intrinsics(&b, &m->cams[0], !o->no_model);
        tb_printf(&b, ",\n");
    }
    tb_printf(&b, "\"frames\": [\n");
    for (int i = 0; i < m->n_imgs; i++) {
        const t_img *im = &m->imgs[i];
        double R[9], c2w[3][4];
        quat_mat(im->q, R);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++) c2w[r][c] = R[c * 3 + r];
            c2w[r][3] = -(R[0 * 3 + r] * im->t[0] + R[1 * 3 + r] * im->t[1] + R[2 * 3 + r] * im->t[2]);
        }
        for (int r = 0; r < 3; r++) c2w[r][1] *= -1, c2w[r][2] *= -1;
        if (!o->keep_world) {
            double t[3][4];
            memcpy(t, c2w, sizeof t);
            for (int c = 0; c < 4; c++) c2w[0][c] = t[0][c], c2w[1][c] = t[2][c], c2w[2][c] = -t[1][c];
        }
        tb_printf(&b, "%s{\"file_path\": \"./images/%s\", \"transform_matrix\": [", i ? ",\n" : "", im->name);
        for (int r = 0; r < 3; r++)
            tb_printf(&b, "[%.17g, %.17g, %.17g, %.17g], ", c2w[r][0], c2w[r][1], c2w[r][2], c2w[r][3]);
        tb_printf(&b, "[0, 0, 0, 1]], \"colmap_im_id\": %u", im->id);
        if (o->per_frame)
            for (int c = 0; c < m->n_cams; c++)
                if (m->cams[c].id == im->camera_id) {
                    tb_printf(&b, ", ");
                    ns_intrinsics(&b, &m->cams[c], !o->no_model);
                }
        tb_printf(&b, "}");
    }
    tb_printf(&b, "\n]");
    if (!o->keep_world) {
        tb_printf(&b, ",\n\"applied_transform\": [");
        for (int r = 0; r < 3; r++) tb_printf(&b, "[%g, %g, %g, %g]%s", A[r][0], A[r][1], A[r][2], A[r][3], r < 2 ? ", " : "");
        tb_printf(&b, "%s]", o->rows4 ? ", [0, 0, 0, 1]" : "");
    }
    tb_printf(&b, ",\n\"ply_file_path\": \"sparse_pc.ply\"\n}\n");
    T_REQUIRE(t_write(at(scene, "transforms.json"), b.p, b.n));
    tb_free(&b);
    /* the points, as nerfstudio's create_ply_from_colmap writes them (ASCII, float x y z, uint8 rgb) */
    tb_printf(&b, "ply\nformat ascii 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
              "property uint8 red\nproperty uint8 green\nproperty uint8 blue\nend_header\n", m->n_pts);
    for (int i = 0; i < m->n_pts; i++) {
        const double *p = m->pts[i].xyz;
        double q[3];
        for (int r = 0; r < 3; r++) q[r] = o->keep_world ? p[r] : A[r][0] * p[0] + A[r][1] * p[1] + A[r][2] * p[2] + A[r][3];
        tb_printf(&b, "%.9g %.9g %.9g %u %u %u\n", (double)(float)q[0], (double)(float)q[1], (double)(float)q[2],
                  m->pts[i].rgb[0], m->pts[i].rgb[1], m->pts[i].rgb[2]);
    }
    T_REQUIRE(t_write(at(scene, "sparse_pc.ply"), b.p, b.n));
    tb_free(&b);
}

/* Realistic lenses for the random model's two cameras: OPENCV and, half the time, OPENCV_FISHEYE. */
static void distort_cameras(t_colmap *m)
{
    for (int c = 0; c < m->n_cams; c++) {
        t_cam *cam = &m->cams[c];
        double f = t_uniform(0.8, 1.2) * (double)SPLAT_MAX(cam->width, cam->height);
        double cx = (double)cam->width / 2 + t_uniform(-2, 2), cy = (double)cam->height / 2 + t_uniform(-2, 2);
        cam->model = c == 1 && rnd(2) ? 5 : 4;
        double *p = cam->params;
        p[0] = f, p[1] = f * t_uniform(0.99, 1.01), p[2] = cx, p[3] = cy;
        if (cam->model == 4) p[4] = t_uniform(-0.1, 0.05), p[5] = t_uniform(-0.02, 0.02), p[6] = t_uniform(-1e-3, 1e-3), p[7] = t_uniform(-1e-3, 1e-3);
        else p[4] = t_uniform(-0.03, 0.03), p[5] = t_uniform(-0.01, 0.01), p[6] = t_uniform(-3e-3, 3e-3), p[7] = t_uniform(-1e-3, 1e-3);
    }
}


/* The same capture as COLMAP and as nerfstudio's transforms.json: the same views (cameras, poses
 * back in COLMAP's frame, the held-out ones), the same points. With and without an
 * applied_transform, with intrinsics per file or per frame, pinhole and distorted lenses. */
SPLAT_TEST(io_transforms_vs_colmap)
{
    for (int round = 0; round < 6; round++) {
        t_colmap m;
        t_colmap_random(&m);
        ns_opts o = {.keep_world = round == 1, .rows4 = round == 2, .per_frame = round >= 3, .no_model = round == 3};
        if (!o.per_frame) /* one camera for the file */
            for (int i = 0; i < m.n_imgs; i++) {
                m.imgs[i].camera_id = m.cams[0].id;
                m.imgs[i].w = (uint32_t)m.cams[0].width, m.imgs[i].h = (uint32_t)m.cams[0].height;
            }
        if (round >= 4) distort_cameras(&m);
        const char *cs = t_path("tf_colmap%d", round), *ns = t_path("tf_ns%d", round);
        char dir[700];
        snprintf(dir, sizeof dir, "%s/sparse/0", cs);
        t_colmap_write(&m, dir, false);
        t_colmap_write_images(&m, cs, false);
        t_mkdir(ns);
        t_colmap_write_images(&m, ns, false);
        write_transforms(&m, ns, &o);
        splat_dataset a, b;
        splat_error err = {0};
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = cs, .eval = true}, &a, &err), &err);
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = ns, .eval = true}, &b, &err), &err);
        T_REQUIRE(b.kind == SPLAT_DATASET_TRANSFORMS && a.n_views == b.n_views && a.n_points == b.n_points,
                  "round %d: %u views and %u points from COLMAP, %u and %u from transforms.json", round, a.n_views,
                  a.n_points, b.n_views, b.n_points);
        double worst_pose = 0, worst_k = 0;
        for (uint32_t v = 0; v < a.n_views; v++) {
            const splat_data_view *x = &a.views[v], *y = &b.views[v];
            T_CHECK(strncmp(y->name, "images/", 7) == 0 && strcmp(x->name, y->name + 7) == 0, "view %u: %s and %s", v,
                    x->name, y->name);
            T_CHECK(x->is_test == y->is_test, "view %u (%s): held out in one, not the other", v, x->name);
            const splat_camera *p = &x->camera, *q = &y->camera;
            T_CHECK(p->width == q->width && p->height == q->height, "view %u: %ux%u and %ux%u", v, p->width, p->height,
                    q->width, q->height);
            worst_k = fmax(worst_k, fmax(fmax(fabs(p->fx - q->fx), fabs(p->fy - q->fy)), fmax(fabs(p->cx - q->cx), fabs(p->cy - q->cy))));
            for (int k = 0; k < 9; k++) worst_pose = fmax(worst_pose, fabs(p->R[k] - q->R[k]));
            for (int k = 0; k < 3; k++) worst_pose = fmax(worst_pose, fabs(p->t[k] - q->t[k]) / fmax(1, fabs(p->t[k])));
        }
        double worst_pt = 0;
        for (uint32_t i = 0; i < a.n_points * 3; i++) {
            worst_pt = fmax(worst_pt, fabs(a.points[i] - b.points[i]) / fmax(1, fabs(a.points[i])));
            T_CHECK(a.point_colors[i] == b.point_colors[i], "point %u: colour differs", i / 3);
        }
        printf("  round %d (%s%s%s%s): %u views, %u points; intrinsics within %.2g px, poses %.2g, points %.2g\n", round,
               o.keep_world ? "no applied_transform" : o.rows4 ? "4-row applied_transform" : "applied_transform",
               o.per_frame ? ", per frame" : "", o.no_model ? ", no camera_model" : "", round >= 4 ? ", distorted" : "",
               a.n_views, a.n_points, worst_k, worst_pose, worst_pt);
        T_CHECK(worst_k < 1e-3 && worst_pose < 1e-5 && worst_pt < 1e-6, "round %d: intrinsics %.3g px, poses %.3g, points %.3g",
                round, worst_k, worst_pose, worst_pt);
        splat__dataset_free(&a), splat__dataset_free(&b);
    }
}

/* A small transforms.json scene: n frames of 32x24 images, `intr` in the file, `extra` after the
 * frames, `frame` (a format given the frame's number, twice) inside each frame. */
static void small_scene(const char *scene, int n, const char *intr, const char *extra, const char *frame)
{
    t_mkdir(scene);
    t_mkdir(at(scene, "images"));
    tbuf b = {0};
    tb_printf(&b, "{%s%s\"frames\": [", intr, intr[0] ? ", " : "");
    for (int i = 0; i < n; i++) {
        T_REQUIRE(t_write_random_png(at(scene, "images/f%02d.png", i), 32, 24));
        tb_printf(&b, "%s{\"file_path\": \"images/f%02d.png\", \"transform_matrix\": [[1,0,0,%d],[0,1,0,0],[0,0,1,4],[0,0,0,1]]",
                  i ? ", " : "", i, i);
        if (frame[0]) {
            tb_printf(&b, ", ");
            tb_printf(&b, frame, i, i);
        }
        tb_printf(&b, "}");
    }
    tb_printf(&b, "]%s%s}", extra[0] ? ", " : "", extra);
    T_REQUIRE(t_write(at(scene, "transforms.json"), b.p, b.n));
    tb_free(&b);
}

static void expect_fail(const char *scene, uint32_t factor, splat_status want, const char *a, const char *b, int line)
{
    splat_dataset ds;
    splat_error err = {0};
    splat_status st = splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = factor}, &ds, &err);
    if (st != want || !t_has(err.msg, a) || !t_has(err.msg, b))
        splat_test_fail(__FILE__, line, "expected failure", "got %s: \"%s\"; wanted %s naming \"%s\" and \"%s\"",
                        splat_status_str(st), err.msg, splat_status_str(want), a, b);
    if (st == SPLAT_OK) splat__dataset_free(&ds);
}
#define EXPECT_FAIL(scene, factor, want, a, b) expect_fail(scene, factor, want, a, b, __LINE__)

/* The variants users bring: per-frame intrinsics with no camera_model (Polycam), split lists,
 * images_N/ and masks_N/, and what is refused (an unknown lens, a missing mask or PLY). */
SPLAT_TEST(io_transforms_variants)
{
    splat_dataset ds;
    splat_error err = {0};
    /* per-frame intrinsics for 64x48 on 32x24 images: halved; a frame's own value wins */
    const char *s1 = t_path("tfv_polycam");
    small_scene(s1, 3, "\"fl_x\": 50, \"fl_y\": 52, \"cx\": 31, \"cy\": 25, \"w\": 64, \"h\": 48", "",
                "\"fl_y\": 6%d, \"colmap_im_id\": %d"); /* frame i's own fl_y: 60 + i */
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s1}, &ds, &err), &err);
    T_CHECK(ds.n_views == 3 && ds.n_points == 0 && !ds.has_alpha);
    for (uint32_t v = 0; v < ds.n_views; v++)
        T_CHECK(ds.views[v].camera.fx == 25 && ds.views[v].camera.fy == (60 + v) / 2.0f && ds.views[v].camera.cx == 15.5f &&
                    ds.views[v].camera.cy == 12.5f,
                "view %u: intrinsics %g %g %g %g", v, (double)ds.views[v].camera.fx, (double)ds.views[v].camera.fy,
                (double)ds.views[v].camera.cx, (double)ds.views[v].camera.cy);
    splat__dataset_free(&ds);

    /* split lists: train and test by name, frames in neither left out; val_filenames without test */
    const char *s2 = t_path("tfv_split");
    small_scene(s2, 5, "\"fl_x\": 30", "\"train_filenames\": [\"images/f00.png\", \"./images/f02.png\", \"images/f04.png\"], "
                "\"test_filenames\": [\"images/f03.png\"]", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s2, .eval = true}, &ds, &err), &err);
    T_CHECK(ds.n_views == 4 && !ds.views[0].is_test && !ds.views[1].is_test && ds.views[2].is_test && !ds.views[3].is_test &&
                strcmp(ds.views[2].name, "images/f03.png") == 0,
            "%u views", ds.n_views);
    splat__dataset_free(&ds);
    small_scene(s2, 5, "\"fl_x\": 30", "\"train_filenames\": [\"images/f00.png\"], \"val_filenames\": [\"images/f01.png\"]", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s2}, &ds, &err), &err);
    T_CHECK(ds.n_views == 2 && !ds.views[0].is_test && ds.views[1].is_test);
    splat__dataset_free(&ds);
    /* val_filenames beside test_filenames: the test list holds out, the val frames are left out */
    small_scene(s2, 5, "\"fl_x\": 30", "\"train_filenames\": [\"images/f00.png\", \"images/f02.png\"], \"val_filenames\": "
                "[\"images/f01.png\"], \"test_filenames\": [\"images/f03.png\"]", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s2, .eval = true}, &ds, &err), &err);
    T_CHECK(ds.n_views == 3 && !ds.views[0].is_test && !ds.views[1].is_test && ds.views[2].is_test &&
                strcmp(ds.views[1].name, "images/f02.png") == 0 && strcmp(ds.views[2].name, "images/f03.png") == 0,
            "train, val and test lists: %u views", ds.n_views);
    splat__dataset_free(&ds);
    /* camera_angle_x and camera_angle_y on 32x24 images: fx = 16 / tan(ax / 2), fy = 12 / tan(ay / 2) */
    double ax = t_uniform(0.3, 2.0), ay = t_uniform(0.3, 2.0);
    char angles[96];
    snprintf(angles, sizeof angles, "\"camera_angle_x\": %.17g, \"camera_angle_y\": %.17g", ax, ay);
    small_scene(s2, 2, angles, "", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s2}, &ds, &err), &err);
    double fx = 16 / tan(0.5 * ax), fy = 12 / tan(0.5 * ay);
    T_CHECK(fabs(ds.views[1].camera.fx - fx) <= 1e-6 * fx && fabs(ds.views[1].camera.fy - fy) <= 1e-6 * fy &&
                ds.views[1].camera.cx == 16 && ds.views[1].camera.cy == 12,
            "angles %g, %g: fx %g fy %g cx %g cy %g, expected %g %g 16 12", ax, ay, (double)ds.views[1].camera.fx,
            (double)ds.views[1].camera.fy, (double)ds.views[1].camera.cx, (double)ds.views[1].camera.cy, fx, fy);
    splat__dataset_free(&ds);
    /* no lists: every 8th held out with eval, as COLMAP */
    small_scene(s2, 17, "\"fl_x\": 30", "", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s2, .eval = true}, &ds, &err), &err);
    uint32_t held = 0;
    for (uint32_t v = 0; v < ds.n_views; v++) held += ds.views[v].is_test ? 1u << v : 0;
    T_CHECK(ds.n_views == 17 && held == (1u | 1u << 8 | 1u << 16), "held out %#x", held);
    splat__dataset_free(&ds);

    /* images_2/ and masks: --images-factor 2 reads images_2/<name> and masks_2/<name> */
    const char *s3 = t_path("tfv_masks");
    small_scene(s3, 2, "\"fl_x\": 30", "", "\"mask_path\": \"masks/f%02d.png\", \"colmap_im_id\": %d");
    t_mkdir(at(s3, "masks"));
    for (int i = 0; i < 2; i++) {
        uint8_t px[32 * 24 * 3];
        for (size_t k = 0; k < sizeof px; k++) px[k] = (uint8_t)(k / 3 % 32 < 16 ? 255 : 0); /* left half kept */
        T_REQUIRE(t_write_png(at(s3, "masks/f%02d.png", i), 32, 24, 2, 8, px, 32 * 3, NULL, 0, NULL, 0, false));
    }
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s3}, &ds, &err), &err);
    uint8_t *mask;
    T_OK(splat__view_mask_load(&ds.views[1], &mask, &err), &err);
    T_CHECK(mask[0] == 1 && mask[31] == 0 && mask[23 * 32 + 15] == 1 && mask[23 * 32 + 16] == 0);
    splat__free(mask);
    splat__dataset_free(&ds);
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s3, .images_factor = 2}, &ds, &err), &err);
    T_CHECK(ds.views[0].downsample == 2 && ds.views[0].camera.width == 16, "no images_2/: images/ downsampled");
    splat__dataset_free(&ds);
    t_mkdir(at(s3, "images_2"));
    for (int i = 0; i < 2; i++) T_REQUIRE(t_write_random_png(at(s3, "images_2/f%02d.png", i), 16, 12));
    EXPECT_FAIL(s3, 2, SPLAT_ERR_IO, "images_2/", "masks_2/ has no mask");
    t_mkdir(at(s3, "masks_2"));
    for (int i = 0; i < 2; i++) T_REQUIRE(t_write_random_png(at(s3, "masks_2/f%02d.png", i), 16, 12));
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s3, .images_factor = 2}, &ds, &err), &err);
    T_CHECK(ds.views[0].downsample == 1 && strstr(ds.views[0].image_path, "images_2/f00.png") &&
            strstr(ds.views[0].mask_path, "masks_2/f00.png") && ds.views[0].camera.fx == 15);
    splat__dataset_free(&ds);

    /* refused, naming what and where */
    const char *s4 = t_path("tfv_bad");
    small_scene(s4, 2, "\"fl_x\": 30, \"camera_model\": \"EQUIRECTANGULAR\"", "", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_UNSUPPORTED, "transforms.json", "camera_model \"EQUIRECTANGULAR\" is not supported");
    small_scene(s4, 2, "\"fl_x\": 30, \"camera_model\": \"OPENCV_FISHEYE\", \"k1\": 0.01, \"p1\": 0.001", "", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_UNSUPPORTED, "transforms.json", "OPENCV_FISHEYE has no tangential terms");
    small_scene(s4, 2, "\"fl_x\": 30", "\"ply_file_path\": \"nowhere.ply\"", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_IO, "nowhere.ply", "cannot open");
    small_scene(s4, 2, "\"fl_x\": 30", "\"applied_transform\": [[2,0,0,0],[0,1,0,0],[0,0,1,0]]", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_FORMAT, "transforms.json", "not a rotation with a uniform scale");
    small_scene(s4, 2, "\"fl_x\": 30", "\"applied_transform\": [[1,0,0,0],[0,1,0,0],[0,0,-1,0]]", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_FORMAT, "transforms.json", "not a rotation with a uniform scale");
    small_scene(s4, 2, "\"fl_x\": 30", "\"train_filenames\": [\"images/none.png\"]", "");
    EXPECT_FAIL(s4, 0, SPLAT_ERR_FORMAT, "transforms.json", "lists no frames to train on");
    /* a uniform scale and a shift are undone: the camera at x = 1 sits at (1 - 3) / 2 */
    small_scene(s4, 2, "\"fl_x\": 30", "\"applied_transform\": [[2,0,0,3],[0,2,0,0],[0,0,2,0]]", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s4}, &ds, &err), &err);
    T_CHECK(ds.views[1].camera.t[0] == 1.0f && ds.views[1].camera.t[2] == 2.0f, "t = (%g, %g, %g)",
            (double)ds.views[1].camera.t[0], (double)ds.views[1].camera.t[1], (double)ds.views[1].camera.t[2]);
    splat__dataset_free(&ds);
    /* nerfstudio's perspective lens with k3, k4: undistorted (a barrel lens: to a wider pinhole) */
    small_scene(s4, 2, "\"fl_x\": 30, \"k1\": -0.2, \"k3\": 0.01, \"k4\": -0.004", "", "");
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = s4}, &ds, &err), &err);
    T_CHECK(ds.views[0].distortion.model == SPLAT_DISTORTION_NERFSTUDIO && ds.views[0].distortion.k[3] == -0.004 &&
            ds.views[0].camera.width > 32, "%ux%u", ds.views[0].camera.width, ds.views[0].camera.height);
    splat__dataset_free(&ds);
}

/* A PLY value of `type` (by its PLY name), in either byte order: bytes taken by shifts, most
 * significant first for big-endian. */
static void put_value(tbuf *b, const char *type, double v, bool big)
{
    static const char *const names[] = {"char", "uchar", "short", "ushort", "int", "uint", "float", "double"};
    int t = 0;
    while (strcmp(names[t], type) != 0) t++;
    uint32_t size = t < 6 ? 1u << (t / 2) : t == 6 ? 4 : 8;
    uint64_t bits;
    if (t == 6) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u;
    } else if (t == 7) {
        memcpy(&bits, &v, 8);
    } else {
        bits = (uint64_t)(int64_t)lrint(v);
    }
    for (uint32_t k = 0; k < size; k++) {
        uint8_t byte = (uint8_t)(bits >> (8 * (big ? size - 1 - k : k)));
        tb_bytes(b, &byte, 1);
    }
}

/* Point clouds as other tools write them: ASCII, binary of either byte order, every scalar type
 * for the positions, float colours, extra properties and elements (before the vertices too, in
 * binary); cut or lying files refused. */
SPLAT_TEST(io_points_ply)
{
    static const char *const types[] = {"char", "uchar", "short", "ushort", "int", "uint", "float", "double"};
    static const char *const colour_types[] = {"uchar", "ushort", "short", "int", "uint", "float", "double"};
    for (int round = 0; round < 24; round++) {
        bool ascii = round % 3 == 0, big = round % 3 == 2, before = !ascii && rnd(2);
        const char *xt = types[round / 3], *nt = types[rnd(8)], *ct = colour_types[rnd(7)];
        bool fcolor = ct[0] == 'f' || ct[0] == 'd', x_int = round / 3 < 6, x_unsigned = x_int && round / 3 % 2;
        uint32_t n = rnd(50);
        float want[150];
        uint8_t rgb[150];
        tbuf b = {0};
        tb_printf(&b, "ply\nformat %s 1.0\ncomment from a test\n%selement vertex %u\nproperty %s x\nproperty %s nx\n"
                  "property %s y\nproperty %s z\nproperty %s red\nproperty %s green\nproperty %s blue\nproperty uchar alpha\n"
                  "element face 0\nproperty list uchar int vertex_indices\nend_header\n",
                  ascii ? "ascii" : big ? "binary_big_endian" : "binary_little_endian",
                  before ? "element camera 1\nproperty float view_px\nproperty short k\n" : "", n, xt, nt, xt, xt, ct, ct,
                  ct);
        if (before) put_value(&b, "float", 7.5, big), put_value(&b, "short", -1, big);
        for (uint32_t i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                double x = t_uniform(x_unsigned ? 0 : -100, 100);
                want[i * 3 + k] = x_int ? (float)lrint(x) : (float)x, rgb[i * 3 + k] = (uint8_t)rnd(256);
            }
            double row[8] = {want[i * 3], nt[0] == 'u' ? 3 : -3, want[i * 3 + 1], want[i * 3 + 2]};
            for (int k = 0; k < 3; k++) row[4 + k] = fcolor ? rgb[i * 3 + k] / 255.0 : rgb[i * 3 + k];
            row[7] = 255;
            const char *rt[8] = {xt, nt, xt, xt, ct, ct, ct, "uchar"};
            for (int k = 0; k < 8; k++) {
                if (ascii) tb_printf(&b, "%.17g%s", row[k], k == 7 ? "\n" : " ");
                else put_value(&b, rt[k], row[k], big);
            }
        }
        const char *path = t_path("points%d.ply", round);
        T_REQUIRE(t_write(path, b.p, b.n));
        float *xyz;
        uint8_t *col;
        uint32_t count;
        splat_error err = {0};
        T_OK(splat__points_ply_read(path, &xyz, &col, &count, &err), &err);
        T_CHECK(count == n, "round %d: %u points of %u", round, count, n);
        for (uint32_t i = 0; i < count * 3; i++) {
            T_CHECK(xyz[i] == want[i] && col[i] == rgb[i], "round %d (%s, %s x, %s colour): point %u: %g/%u, wanted %g/%u",
                    round, ascii ? "ascii" : big ? "big-endian" : "little-endian", xt, ct, i / 3, (double)xyz[i], col[i],
                    (double)want[i], rgb[i]);
            if (xyz[i] != want[i] || col[i] != rgb[i]) break;
        }
        splat__free(xyz), splat__free(col);
        /* cut short, and a count the file cannot hold */
        if (n > 0 && !ascii) {
            T_REQUIRE(t_write(path, b.p, b.n - 1));
            T_CHECK(splat__points_ply_read(path, &xyz, &col, &count, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, path) &&
                    t_has(err.msg, "truncated"), "%s", err.msg);
            err = (splat_error){0};
        }
        tb_free(&b);
    }
    const char *path = t_path("points_huge.ply");
    const char *lie = "ply\nformat binary_little_endian 1.0\nelement vertex 200000000\nproperty float x\nproperty float y\n"
                      "property float z\nend_header\n";
    T_REQUIRE(t_write(path, lie, strlen(lie)));
    float *xyz;
    uint8_t *col;
    uint32_t count;
    splat_error err = {0};
    T_CHECK(splat__points_ply_read(path, &xyz, &col, &count, &err) == SPLAT_ERR_FORMAT && t_has(err.msg, "truncated"), "%s",
            err.msg);
    err = (splat_error){0};
    const char *nonfinite = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                            "end_header\n1 nan 2\n";
    T_REQUIRE(t_write(path, nonfinite, strlen(nonfinite)));
    T_CHECK(splat__points_ply_read(path, &xyz, &col, &count, &err) == SPLAT_ERR_NONFINITE && t_has(err.msg, "point 0: y"),
            "%s", err.msg);
    /* headers refused, each with the file and the problem named */
    static const struct {
        const char *header, *problem;
        splat_status status;
    } bad[] = {
        {"format binary_middle_endian 1.0\nelement vertex 0\nproperty float x\n", "binary_middle_endian",
         SPLAT_ERR_UNSUPPORTED},
        {"format ascii 1.0\nelement face 0\nproperty list uchar int vertex_indices\n", "no vertex element",
         SPLAT_ERR_FORMAT},
        {"format ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\n", "lack x, y or z", SPLAT_ERR_FORMAT},
        {"format binary_big_endian 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\n"
         "property list uchar float w\n", "list property", SPLAT_ERR_UNSUPPORTED},
        {"format ascii 1.0\nelement camera 0\nproperty float k\nelement vertex 0\nproperty float x\nproperty float y\n"
         "property float z\n", "element \"camera\" before the vertices", SPLAT_ERR_UNSUPPORTED},
        {"format ascii 1.0\nelement vertex 0\nproperty float x\nproperty half y\n", "unknown type half", SPLAT_ERR_FORMAT},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(bad); k++) {
        tbuf b = {0};
        tb_printf(&b, "ply\n%send_header\n", bad[k].header);
        T_REQUIRE(t_write(path, b.p, b.n));
        tb_free(&b);
        err = (splat_error){0};
        splat_status st = splat__points_ply_read(path, &xyz, &col, &count, &err);
        T_CHECK(st == bad[k].status && t_has(err.msg, path) && t_has(err.msg, bad[k].problem) && !xyz && !col,
                "case %zu: status %d: %s", k, (int)st, err.msg);
    }
}
