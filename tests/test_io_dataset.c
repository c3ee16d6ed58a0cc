/* io: COLMAP and NeRF-synthetic loading on fixtures the tests write byte by byte. */
#include <png.h>

#include "io_fixtures.h"

static uint32_t rnd(uint32_t n) { return (uint32_t)(splat__rng_u64(splat_test_rng()) % n); }

/* v' = q v q* (w, x, y, z), written without a rotation matrix so it checks the loader's. */
static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double t[3] = {2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])};
    out[0] = v[0] + w * t[0] + (y * t[2] - z * t[1]);
    out[1] = v[1] + w * t[1] + (z * t[0] - x * t[2]);
    out[2] = v[2] + w * t[2] + (x * t[1] - y * t[0]);
}

static bool close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1.0, fabs(b)); }

static const t_cam *find_cam(const t_colmap *m, uint32_t id)
{
    for (int i = 0; i < m->n_cams; i++)
        if (m->cams[i].id == id) return &m->cams[i];
    return NULL;
}

static int cmp_img_name(const void *a, const void *b)
{
    return strcmp(((const t_img *)a)->name, ((const t_img *)b)->name);
}

/* Checks a loaded COLMAP dataset against the model it came from. `folder` is the image folder
 * expected, `factor` the downsampling applied after loading (1 when images_N/ was used). */
static void check_colmap(const t_colmap *m, const splat_dataset *ds, const char *folder, uint32_t factor,
                         bool use_2, bool eval)
{
    T_REQUIRE(ds->kind == SPLAT_DATASET_COLMAP && !ds->has_alpha);
    T_REQUIRE(ds->n_views == (uint32_t)m->n_imgs, "%u views", ds->n_views);
    t_img sorted[32];
    memcpy(sorted, m->imgs, sizeof sorted);
    qsort(sorted, (size_t)m->n_imgs, sizeof sorted[0], cmp_img_name);
    for (uint32_t i = 0; i < ds->n_views; i++) {
        const splat_data_view *v = &ds->views[i];
        const t_img *im = &sorted[i];
        const t_cam *c = find_cam(m, im->camera_id);
        T_CHECK(strcmp(v->name, im->name) == 0, "view %u is %s, expected %s", i, v->name, im->name);
        char want_path[700];
        snprintf(want_path, sizeof want_path, "%s/%s", folder, im->name);
        T_CHECK(strcmp(v->image_path, want_path) == 0, "path %s", v->image_path);
        T_CHECK(v->downsample == factor);
        T_CHECK(v->is_test == (eval && i % 8 == 0), "view %u is_test %d", i, v->is_test);
        uint32_t w = use_2 ? im->w2 : im->w, h = use_2 ? im->h2 : im->h;
        w = w / factor ? w / factor : 1, h = h / factor ? h / factor : 1;
        T_CHECK(v->camera.width == w && v->camera.height == h, "size %ux%u, expected %ux%u", v->camera.width,
                v->camera.height, w, h);
        double sx = (double)w / (double)c->width, sy = (double)h / (double)c->height;
        double fx = c->params[0], fy = c->model == 0 ? c->params[0] : c->params[1];
        double cx = c->params[c->model == 0 ? 1 : 2], cy = c->params[c->model == 0 ? 2 : 3];
        T_CHECK(close_rel(v->camera.fx, fx * sx, 1e-6) && close_rel(v->camera.fy, fy * sy, 1e-6),
                "view %u focal %g %g, expected %g %g", i, v->camera.fx, v->camera.fy, fx * sx, fy * sy);
        T_CHECK(close_rel(v->camera.cx, cx * sx, 1e-6) && close_rel(v->camera.cy, cy * sy, 1e-6),
                "view %u centre %g %g, expected %g %g", i, v->camera.cx, v->camera.cy, cx * sx, cy * sy);
        for (int k = 0; k < 3; k++) T_CHECK(v->camera.t[k] == (float)im->t[k]);
        for (int trial = 0; trial < 4; trial++) {
            double p[3] = {t_uniform(-1, 1), t_uniform(-1, 1), t_uniform(-1, 1)}, want[3];
            quat_rotate(im->q, p, want);
            for (int r = 0; r < 3; r++) {
                double got = v->camera.R[r * 3] * p[0] + v->camera.R[r * 3 + 1] * p[1] + v->camera.R[r * 3 + 2] * p[2];
                T_CHECK(fabs(got - want[r]) < 1e-6, "view %u R row %d: %g vs %g", i, r, got, want[r]);
            }
        }
    }
    T_REQUIRE(ds->n_points == (uint32_t)m->n_pts, "%u points", ds->n_points);
    for (int i = 0; i < m->n_pts; i++)
        for (int k = 0; k < 3; k++) {
            T_CHECK(ds->points[i * 3 + k] == (float)m->pts[i].xyz[k]);
            T_CHECK(ds->point_colors[i * 3 + k] == m->pts[i].rgb[k]);
        }
}

static void colmap_round(bool text)
{
    t_colmap m;
    t_colmap_random(&m);
    const char *scene = t_path(text ? "scene_txt" : "scene_bin");
    char model_dir[600], folder[600];
    /* binary under sparse/0/, text under sparse/: both places are looked at */
    snprintf(model_dir, sizeof model_dir, "%s/%s", scene, text ? "sparse" : "sparse/0");
    t_colmap_write(&m, model_dir, text);
    t_colmap_write_images(&m, scene, true);
    splat_error err = {0};
    splat_dataset ds;

    snprintf(folder, sizeof folder, "%s/images", scene);
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .eval = true}, &ds, &err), &err);
    check_colmap(&m, &ds, folder, 1, false, true);
    splat__dataset_free(&ds);

    /* the text files with Windows line ends (CRLF): the same model */
    if (text) {
        const char *names[] = {"cameras.txt", "images.txt", "points3D.txt"};
        for (int k = 0; k < 3; k++) {
            char path[700];
            snprintf(path, sizeof path, "%s/%s", model_dir, names[k]);
            size_t size;
            uint8_t *lf = t_read(path, &size), *crlf = malloc(2 * size + 1);
            T_REQUIRE(lf && crlf);
            size_t n = 0;
            for (size_t i = 0; i < size; i++) {
                if (lf[i] == '\n') crlf[n++] = '\r';
                crlf[n++] = lf[i];
            }
            T_REQUIRE(t_write(path, crlf, n));
            free(lf), free(crlf);
        }
        snprintf(folder, sizeof folder, "%s/images", scene);
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .eval = true}, &ds, &err), &err);
        check_colmap(&m, &ds, folder, 1, false, true);
        splat__dataset_free(&ds);
    }

    /* images_2/ exists: its files, their sizes, no extra downsampling */
    snprintf(folder, sizeof folder, "%s/images_2", scene);
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 2}, &ds, &err), &err);
    check_colmap(&m, &ds, folder, 1, true, false);
    splat__dataset_free(&ds);

    /* images_3/ does not: images/ downsampled by 3 after loading, size floor(size / 3) */
    snprintf(folder, sizeof folder, "%s/images", scene);
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 3, .eval = true}, &ds, &err), &err);
    check_colmap(&m, &ds, folder, 3, false, true);
    splat__dataset_free(&ds);
}

SPLAT_TEST(io_colmap_binary) { colmap_round(false); }
SPLAT_TEST(io_colmap_text) { colmap_round(true); }

/* ------------------------------------------------------------------- bad COLMAP input */

/* Loads `scene` expecting `want`, with a message naming `file` and containing `what`; the
 * dataset must come back empty. */
static void expect_fail(const char *scene, uint32_t factor, splat_status want, const char *file, const char *what,
                        int line)
{
    splat_error err = {0};
    splat_dataset ds;
    memset(&ds, 0xab, sizeof ds);
    splat_status st = splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = factor}, &ds, &err);
    if (st != want || err.status != want || !t_has(err.msg, file) || !t_has(err.msg, what))
        splat_test_fail(__FILE__, line, "expected failure", "got %s: \"%s\"; wanted %s naming %s and \"%s\"",
                        splat_status_str(st), err.msg, splat_status_str(want), file, what);
    if (ds.views || ds.n_views || ds.points || ds.point_colors)
        splat_test_fail(__FILE__, line, "dataset not empty after a failure", " ");
    if (st == SPLAT_OK) splat__dataset_free(&ds);
}
#define EXPECT_FAIL(scene, factor, want, file, what) expect_fail(scene, factor, want, file, what, __LINE__)

static void write_scene(const t_colmap *m, const char *scene)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/sparse/0", scene);
    t_colmap_write(m, dir, false);
    t_colmap_write_images(m, scene, false);
}

SPLAT_TEST(io_colmap_bad_input)
{
    t_colmap m;
    t_colmap_random(&m);
    const char *scene = t_path("bad");
    write_scene(&m, scene);
    const char *cams = t_path("bad/sparse/0/cameras.bin"), *imgs = t_path("bad/sparse/0/images.bin");
    const char *pts = t_path("bad/sparse/0/points3D.bin");
    size_t n_cams, n_imgs, n_pts;
    uint8_t *cams0 = t_read(cams, &n_cams), *imgs0 = t_read(imgs, &n_imgs), *pts0 = t_read(pts, &n_pts);
    T_REQUIRE(cams0 && imgs0 && pts0);

    /* truncated cameras.bin, anywhere inside a record */
    size_t cut = 9 + rnd((uint32_t)n_cams - 9);
    t_write(cams, cams0, cut);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "truncated");
    t_write(cams, cams0, 5);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "truncated");
    /* an unknown model id */
    cams0[8 + 4] = 99;
    t_write(cams, cams0, n_cams);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "unknown model id 99");
    cams0[8 + 4] = 1;
    t_write(cams, cams0, n_cams);

    /* images.bin whose count lies: huge, and one more than there is */
    uint8_t *lie = malloc(n_imgs);
    memcpy(lie, imgs0, n_imgs);
    uint64_t huge = 0x00ffffffffffffffull;
    memcpy(lie, &huge, 8);
    t_write(imgs, lie, n_imgs);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, imgs, "more than its");
    uint64_t one_more = (uint64_t)m.n_imgs + 1;
    memcpy(lie, &one_more, 8);
    t_write(imgs, lie, n_imgs);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, imgs, "truncated");
    /* a 2D point count that lies */
    memcpy(lie, imgs0, n_imgs);
    size_t name_end = 8 + 4 + 56 + 4 + strlen(m.imgs[0].name) + 1;
    memcpy(lie + name_end, &huge, 8);
    t_write(imgs, lie, n_imgs);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, imgs, "2D points");
    /* an image referring to a camera that does not exist */
    memcpy(lie, imgs0, n_imgs);
    uint32_t bad_cam = 12345;
    memcpy(lie + 8 + 4 + 56, &bad_cam, 4);
    t_write(imgs, lie, n_imgs);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, imgs, "camera 12345");
    free(lie);
    t_write(imgs, imgs0, n_imgs);

    /* points3D.bin: truncated, and a count that lies */
    t_write(pts, pts0, n_pts ? n_pts - 1 : 0);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, pts, "truncated");
    uint64_t many = 1ull << 40;
    memcpy(pts0, &many, 8);
    t_write(pts, pts0, n_pts);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, pts, "more than its");
    many = (uint64_t)m.n_pts;
    memcpy(pts0, &many, 8);
    t_write(pts, pts0, n_pts);

    /* trailing garbage after the last record */
    uint8_t *longer = malloc(n_cams + 3);
    memcpy(longer, cams0, n_cams);
    memset(longer + n_cams, 7, 3);
    t_write(cams, longer, n_cams + 3);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "unexpected bytes");
    free(longer);
    t_write(cams, cams0, n_cams);

    /* a missing image: the error names it */
    splat_error err = {0};
    splat_dataset ds;
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene}, &ds, &err), &err);
    splat__dataset_free(&ds);
    const char *gone = t_path("bad/images/%s", m.imgs[rnd((uint32_t)m.n_imgs)].name);
    T_REQUIRE(remove(gone) == 0);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_IO, gone, "cannot open");
    /* a non-image in its place */
    t_write(gone, "hello, not a picture\n", 21);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, gone, "not a PNG or JPEG");
    /* no image folder for the factor */
    const char *imgdir = t_path("bad/images");
    const char *moved = t_path("bad/elsewhere");
    T_REQUIRE(rename(imgdir, moved) == 0);
    EXPECT_FAIL(scene, 4, SPLAT_ERR_IO, scene, "neither images_4/ nor images/");

    free(cams0), free(imgs0), free(pts0);
}

/* Intrinsics that are finite as doubles but not as floats (1e300: training once ran on infinite
 * focal lengths and reported 87.6 dB), and absurd ones, are refused at load, naming the file and
 * the camera: binary and text models alike. */
SPLAT_TEST(io_colmap_absurd_intrinsics)
{
    struct {
        int param;           /* into PINHOLE's fx, fy, cx, cy */
        double value;        /* times the width for scales, absolute for 1e300 */
        bool relative;
        splat_status want;
        const char *file, *what;
    } cases[] = {
        {0, 1e300, false, SPLAT_ERR_NONFINITE, "cameras", "not finite as floats"},
        {2, -1e300, false, SPLAT_ERR_NONFINITE, "cameras", "not finite as floats"},
        {1, 1e-6, true, SPLAT_ERR_FORMAT, "images", "focal lengths"},
        {0, 1e7, true, SPLAT_ERR_FORMAT, "images", "focal lengths"},
        {3, 50, true, SPLAT_ERR_FORMAT, "images", "principal point"},
    };
    for (int text = 0; text < 2; text++)
        for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
            t_colmap m;
            t_colmap_random(&m);
            m.cams[0].model = m.cams[1].model = 1;
            for (int c = 0; c < 2; c++) {
                double w = (double)m.cams[c].width;
                m.cams[c].params[0] = m.cams[c].params[1] = 1.1 * w;
                m.cams[c].params[2] = 0.5 * w, m.cams[c].params[3] = 0.5 * (double)m.cams[c].height;
            }
            t_cam *bad = &m.cams[rnd(2)];
            bad->params[cases[k].param] = cases[k].relative ? cases[k].value * (double)bad->width : cases[k].value;
            for (int i = 0; i < m.n_imgs; i++) { /* every image sees it, at its size */
                m.imgs[i].camera_id = bad->id;
                m.imgs[i].w = (uint32_t)bad->width, m.imgs[i].h = (uint32_t)bad->height;
            }
            const char *scene = t_path("absurd%d_%zu", text, k);
            char dir[600];
            snprintf(dir, sizeof dir, "%s/sparse/0", scene);
            t_colmap_write(&m, dir, text);
            t_colmap_write_images(&m, scene, false);
            char file[700];
            snprintf(file, sizeof file, "%s/%s.%s", dir, cases[k].file, text ? "txt" : "bin");
            EXPECT_FAIL(scene, 0, cases[k].want, file, cases[k].what);
        }
}

SPLAT_TEST(io_colmap_unsupported_model)
{
    /* FOV (id 7), binary and text: refused, naming the file, the model and the remedy */
    for (int text = 0; text < 2; text++) {
        t_colmap m;
        t_colmap_random(&m);
        m.cams[rnd(2)].model = 7;
        for (int k = 0; k < 5; k++) m.cams[0].params[k] = m.cams[1].params[k] = 0.5 + k;
        const char *scene = t_path("opencv%d", text);
        char dir[600];
        snprintf(dir, sizeof dir, "%s/sparse/0", scene);
        t_colmap_write(&m, dir, text);
        t_colmap_write_images(&m, scene, false);
        const char *file = t_path("opencv%d/sparse/0/cameras.%s", text, text ? "txt" : "bin");
        EXPECT_FAIL(scene, 0, SPLAT_ERR_UNSUPPORTED, file, "FOV");
        EXPECT_FAIL(scene, 0, SPLAT_ERR_UNSUPPORTED, file, "undistort");
        EXPECT_FAIL(scene, 0, SPLAT_ERR_UNSUPPORTED, file, "colmap image_undistorter");
    }
}

SPLAT_TEST(io_colmap_intrinsics_range)
{
    /* Intrinsics that are finite doubles but leave a float's range once scaled to the image (a
     * cx of 3e38 for images twice the camera's size), or a focal length that rounds to 0 as a
     * float: refused, naming cameras.bin/.txt, never views with Inf or 0 (found by fuzz_colmap_bin). */
    for (int text = 0; text < 2; text++) {
        for (int tiny = 0; tiny < 2; tiny++) {
            t_colmap m;
            t_colmap_random(&m);
            for (int k = 0; k < m.n_cams; k++) {
                if (tiny) {
                    m.cams[k].params[0] = 1e-300;
                } else {
                    m.cams[k].params[m.cams[k].model == 0 ? 1 : 2] = 3e38; /* cx, a float until doubled */
                }
            }
            if (!tiny) /* images twice their cameras' size */
                for (int i = 0; i < m.n_imgs; i++)
                    for (int k = 0; k < m.n_cams; k++)
                        if (m.cams[k].id == m.imgs[i].camera_id)
                            m.imgs[i].w = 2 * (uint32_t)m.cams[k].width, m.imgs[i].h = 2 * (uint32_t)m.cams[k].height;
            const char *scene = t_path("range%d%d", text, tiny);
            char dir[600];
            snprintf(dir, sizeof dir, "%s/sparse/0", scene);
            t_colmap_write(&m, dir, text);
            t_colmap_write_images(&m, scene, false);
            const char *file = t_path("range%d%d/sparse/0/cameras.%s", text, tiny, text ? "txt" : "bin");
            if (tiny) EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, file, "is not a positive float");
            else EXPECT_FAIL(scene, 0, SPLAT_ERR_NONFINITE, file, "are not finite floats");
        }
    }
}

SPLAT_TEST(io_colmap_text_errors)
{
    t_colmap m;
    t_colmap_random(&m);
    const char *scene = t_path("txt");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/sparse", scene);
    t_colmap_write(&m, dir, true);
    t_colmap_write_images(&m, scene, false);
    const char *cams = t_path("txt/sparse/cameras.txt"), *pts = t_path("txt/sparse/points3D.txt");
    t_write(cams, "1 PINHOLE 10 10 5 5 5\n", 22);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "cameras.txt:1: PINHOLE needs 4");
    t_write(cams, "# c\n1 PINHOLE 10 ten 5 5 5 5\n", 29);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "cameras.txt:2:");
    t_colmap_write(&m, dir, true);
    t_write(pts, "1 0 0 0 300 0 0 0.5\n", 20);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, pts, "points3D.txt:1:");
    t_write(pts, "1 0 nan 0 3 0 0 0.5\n", 20);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_NONFINITE, pts, "non-finite");
    /* a number with more after it (a decimal comma, a unit) is not read as its first part */
    const char *junk_pts = "1 0.5x 0 0 3 0 0 0.5\n", *junk_cams = "1 PINHOLE 10 10 5,5 5 5 5\n";
    t_write(pts, junk_pts, strlen(junk_pts));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, pts, "points3D.txt:1:");
    t_colmap_write(&m, dir, true);
    t_write(cams, junk_cams, strlen(junk_cams));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, cams, "cameras.txt:1:");
    EXPECT_FAIL(t_path("nowhere"), 0, SPLAT_ERR_IO, t_path("nowhere"), "not a folder");
    t_mkdir(t_path("empty"));
    EXPECT_FAIL(t_path("empty"), 0, SPLAT_ERR_FORMAT, t_path("empty"), "no dataset found");
}

/* -------------------------------------------------------------------- NeRF-synthetic */

static void write_rgba_png(const char *path, uint32_t w, uint32_t h)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    for (size_t i = 0; i < (size_t)w * h * 4; i++) px[i] = (uint8_t)rnd(256);
    T_CHECK(t_write_png(path, w, h, PNG_COLOR_TYPE_RGBA, 8, px, (size_t)w * 4, NULL, 0, NULL, 0, false));
    free(px);
}

static void random_rotation(double M[9])
{
    double q[4], n = 0;
    for (int k = 0; k < 4; k++) q[k] = splat__rng_normal(splat_test_rng()), n += q[k] * q[k];
    for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
    for (int c = 0; c < 3; c++) {
        double e[3] = {c == 0, c == 1, c == 2}, col[3];
        quat_rotate(q, e, col);
        for (int r = 0; r < 3; r++) M[r * 3 + c] = col[r];
    }
}

static void put_matrix(tbuf *b, const double M[9], const double pos[3])
{
    tb_printf(b, "\"transform_matrix\": [");
    for (int r = 0; r < 3; r++)
        tb_printf(b, "[%.17g, %.17g, %.17g, %.17g], ", M[r * 3], M[r * 3 + 1], M[r * 3 + 2], pos[r]);
    tb_printf(b, "[0, 0, 0, 1]]");
}

/* Pixel of world point X for a camera-to-world pose in the OpenGL convention (x right, y up,
 * looking down -z): the reference the loader's OpenCV world-to-camera must agree with. */
static void gl_project(const double M[9], const double pos[3], double f, double cx, double cy, const double X[3],
                       double *u, double *v, double *depth)
{
    double d[3] = {X[0] - pos[0], X[1] - pos[1], X[2] - pos[2]}, p[3];
    for (int c = 0; c < 3; c++) p[c] = M[c] * d[0] + M[3 + c] * d[1] + M[6 + c] * d[2]; /* M^T d */
    *depth = -p[2];
    *u = cx + f * p[0] / *depth;
    *v = cy - f * p[1] / *depth;
}

static void cam_project(const splat_camera *c, const double X[3], double *u, double *v, double *depth)
{
    double p[3];
    for (int r = 0; r < 3; r++) p[r] = c->R[r * 3] * X[0] + c->R[r * 3 + 1] * X[1] + c->R[r * 3 + 2] * X[2] + c->t[r];
    *depth = p[2];
    *u = c->fx * p[0] / p[2] + c->cx;
    *v = c->fy * p[1] / p[2] + c->cy;
}

SPLAT_TEST(io_nerf_synthetic)
{
    const char *scene = t_path("lego");
    t_mkdir(t_path("lego/train.v2")); /* a dot in a folder's name is no extension */
    t_mkdir(t_path("lego/test"));
    uint32_t W = 16 + rnd(20), H = 10 + rnd(20);
    double angle = t_uniform(0.4, 1.3), f = 0.5 * W / tan(0.5 * angle);
    int n_train = 3 + (int)rnd(4), n_test = 2;
    double Ms[8][9], pos[8][3];
    for (int split = 0; split < 2; split++) {
        tbuf b = {0};
        tb_printf(&b, "{\n  \"camera_angle_x\": %.17g,\n  \"frames\": [\n", angle);
        int n = split ? n_test : n_train;
        for (int i = 0; i < n; i++) {
            int k = split ? n_train + i : i;
            if (k == 0) {
                /* at (0, 0, 4), looking down -z at the origin, up +y */
                double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 4};
                memcpy(Ms[k], I, sizeof I), memcpy(pos[k], p, sizeof p);
            } else {
                random_rotation(Ms[k]);
                for (int c = 0; c < 3; c++) pos[k][c] = t_uniform(-5, 5);
            }
            /* test frames name the extension, train frames leave it out as Blender does */
            const char *ext = split ? ".png" : "";
            tb_printf(&b, "    {\"file_path\": \"./%s/r_%d%s\", \"rotation\": 0.01, ", split ? "test" : "train.v2", i, ext);
            put_matrix(&b, Ms[k], pos[k]);
            tb_printf(&b, "}%s\n", i + 1 < n ? "," : "");
            write_rgba_png(t_path("lego/%s/r_%d.png", split ? "test" : "train.v2", i), W, H);
        }
        tb_printf(&b, "  ]\n}\n");
        t_write(t_path("lego/transforms_%s.json", split ? "test" : "train"), b.p, b.n);
        tb_free(&b);
    }
    splat_error err = {0};
    splat_dataset ds;
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .eval = true}, &ds, &err), &err);
    T_REQUIRE(ds.kind == SPLAT_DATASET_NERF_SYNTHETIC && ds.has_alpha && ds.n_points == 0 && !ds.points);
    T_REQUIRE(ds.n_views == (uint32_t)(n_train + n_test), "%u views", ds.n_views);
    for (uint32_t k = 0; k < ds.n_views; k++) {
        const splat_data_view *v = &ds.views[k];
        bool test = k >= (uint32_t)n_train;
        int idx = test ? (int)k - n_train : (int)k;
        char name[64];
        snprintf(name, sizeof name, "%s/r_%d.png", test ? "test" : "train.v2", idx);
        T_CHECK(strcmp(v->name, name) == 0, "view %u name %s", k, v->name);
        T_CHECK(strcmp(v->image_path, t_path("lego/%s", name)) == 0, "path %s", v->image_path);
        T_CHECK(v->is_test == test && v->downsample == 1);
        const splat_camera *c = &v->camera;
        T_CHECK(c->width == W && c->height == H);
        T_CHECK(close_rel(c->fx, f, 1e-6) && close_rel(c->fy, f, 1e-6), "fx %g fy %g, expected %g", c->fx, c->fy, f);
        T_CHECK(c->cx == 0.5f * (float)W && c->cy == 0.5f * (float)H);
        for (int trial = 0; trial < 8; trial++) {
            double X[3] = {t_uniform(-3, 3), t_uniform(-3, 3), t_uniform(-3, 3)}, u0, v0, d0, u1, v1, d1;
            gl_project(Ms[k], pos[k], f, 0.5 * W, 0.5 * H, X, &u0, &v0, &d0);
            if (fabs(d0) < 0.3) continue;
            cam_project(c, X, &u1, &v1, &d1);
            T_CHECK(fabs(d0 - d1) < 1e-4 && fabs(u0 - u1) < 1e-3 * fmax(1, fabs(u0)) &&
                    fabs(v0 - v1) < 1e-3 * fmax(1, fabs(v0)), "view %u: (%g, %g, %g) vs (%g, %g, %g)", k, u0, v0, d0,
                    u1, v1, d1);
        }
    }
    /* The camera at (0,0,4): the origin lands on the image centre at depth 4, Blender's up (+y
     * in this pose) on a smaller row, +x on a larger column. */
    double u, v, d;
    cam_project(&ds.views[0].camera, (double[3]){0, 0, 0}, &u, &v, &d);
    T_CHECK(fabs(u - 0.5 * W) < 1e-5 && fabs(v - 0.5 * H) < 1e-5 && fabs(d - 4) < 1e-6, "origin at %g %g depth %g", u, v, d);
    cam_project(&ds.views[0].camera, (double[3]){0, 1, 0}, &u, &v, &d);
    T_CHECK(v < 0.5 * H && fabs(u - 0.5 * W) < 1e-5, "+y at row %g", v);
    cam_project(&ds.views[0].camera, (double[3]){1, 0, 0}, &u, &v, &d);
    T_CHECK(u > 0.5 * W, "+x at column %g", u);
    splat__dataset_free(&ds);

    /* images_factor 2 on NeRF: downsampled after loading, intrinsics follow */
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 2}, &ds, &err), &err);
    T_CHECK(ds.views[0].downsample == 2 && ds.views[0].camera.width == W / 2 && ds.views[0].camera.height == H / 2);
    T_CHECK(close_rel(ds.views[0].camera.fx, f * (W / 2) / W, 1e-6));
    splat__dataset_free(&ds);
}

SPLAT_TEST(io_nerf_explicit_intrinsics)
{
    /* fl_x/fl_y/cx/cy given for a stated w, h twice the image's size: everything scales by 1/2 */
    const char *scene = t_path("ngp");
    t_mkdir(scene);
    uint32_t W = 12 + rnd(10), H = 9 + rnd(10);
    double flx = t_uniform(20, 40), fly = t_uniform(20, 40), cx = t_uniform(10, 14), cy = t_uniform(8, 12);
    tbuf b = {0};
    tb_printf(&b, "{\"fl_x\": %.17g, \"fl_y\": %.17g, \"cx\": %.17g, \"cy\": %.17g, \"w\": %u, \"h\": %u, \"frames\": "
              "[{\"file_path\": \"img.png\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}",
              flx, fly, cx, cy, 2 * W, 2 * H);
    t_write(t_path("ngp/transforms_train.json"), b.p, b.n);
    tb_free(&b);
    write_rgba_png(t_path("ngp/img.png"), W, H);
    splat_error err = {0};
    splat_dataset ds;
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene}, &ds, &err), &err);
    T_REQUIRE(ds.n_views == 1);
    const splat_camera *c = &ds.views[0].camera;
    T_CHECK(close_rel(c->fx, flx / 2, 1e-6) && close_rel(c->fy, fly / 2, 1e-6), "f %g %g", c->fx, c->fy);
    T_CHECK(close_rel(c->cx, cx / 2, 1e-6) && close_rel(c->cy, cy / 2, 1e-6), "c %g %g", c->cx, c->cy);
    splat__dataset_free(&ds);
}

SPLAT_TEST(io_nerf_bad_input)
{
    const char *scene = t_path("nerf");
    t_mkdir(scene);
    const char *json = t_path("nerf/transforms_train.json");
    write_rgba_png(t_path("nerf/a.png"), 8, 8);
    /* a JSON syntax error: named with its line */
    const char *bad = "{\n  \"camera_angle_x\": 0.7,\n  \"frames\": [ {\"file_path\": \"a.png\",, } ]\n}\n";
    t_write(json, bad, strlen(bad));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, json, "JSON syntax error at line 3");
    const char *no_angle = "{\"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": "
                           "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}";
    t_write(json, no_angle, strlen(no_angle));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, json, "camera_angle_x");
    const char *bad_matrix = "{\"camera_angle_x\": 0.7, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": "
                             "[[1,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}";
    t_write(json, bad_matrix, strlen(bad_matrix));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, json, "transform_matrix");
    const char *missing = "{\"camera_angle_x\": 0.7, \"frames\": [{\"file_path\": \"./b\", \"transform_matrix\": "
                          "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}";
    t_write(json, missing, strlen(missing));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_IO, t_path("nerf/b.png"), "cannot open");
    /* ".//b" is "b" beside the json, not the absolute "/b" */
    const char *dotslash = "{\"camera_angle_x\": 0.7, \"frames\": [{\"file_path\": \".//b\", \"transform_matrix\": "
                           "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}";
    t_write(json, dotslash, strlen(dotslash));
    EXPECT_FAIL(scene, 0, SPLAT_ERR_IO, t_path("nerf/b.png"), "cannot open");
}

/* COLMAP image names are paths inside the image folder: an absolute name, or one that climbs
 * out through "..", is refused (they opened files outside images/). */
SPLAT_TEST(io_colmap_names_stay_inside)
{
    const char *names[] = {"../outside.png", "/etc/hostname", "a/../../outside.png", "sub/.."};
    for (int text = 0; text < 2; text++)
        for (size_t k = 0; k < SPLAT_COUNTOF(names); k++) {
            t_colmap m;
            t_colmap_random(&m);
            const char *scene = t_path("names%d_%zu", text, k);
            char dir[600];
            snprintf(dir, sizeof dir, "%s/sparse/0", scene);
            t_colmap_write_images(&m, scene, false); /* the images under their own names */
            snprintf(m.imgs[rnd((uint32_t)m.n_imgs)].name, sizeof m.imgs[0].name, "%s", names[k]);
            t_colmap_write(&m, dir, text);
            char file[700];
            snprintf(file, sizeof file, "%s/images.%s", dir, text ? "txt" : "bin");
            EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, file, "outside the image folder");
        }
}

/* Images the views cannot use as they are: an --images-factor that leaves a few pixels (1000 once
 * trained on 1x1 images without a word), and an image of another shape than its camera (a
 * rotated 96x128 photo for a 128x96 camera was scaled to it anisotropically). */
SPLAT_TEST(io_dataset_image_shapes)
{
    t_colmap m;
    t_colmap_random(&m);
    const char *scene = t_path("shapes");
    write_scene(&m, scene);
    char imgs[700];
    snprintf(imgs, sizeof imgs, "%s/sparse/0/images.bin", scene);
    EXPECT_FAIL(scene, 1000, SPLAT_ERR_INVALID_ARG, "downsampled by 1000", "fewer than 4 pixels a side");
    t_img *im = &m.imgs[rnd((uint32_t)m.n_imgs)];
    const t_cam *cam = m.cams[0].id == im->camera_id ? &m.cams[0] : &m.cams[1];
    im->w = (uint32_t)cam->height, im->h = (uint32_t)cam->width; /* turned on its side */
    /* A camera near square turned on its side keeps nearly its shape, within what the loader
     * allows images_N/'s rounding (2 % and a pixel: 52x51 turned is 4 % off, inside it): stretch
     * that one's image instead, so that it is another shape still. */
    double turned = ((double)cam->height / cam->width) * ((double)cam->height / cam->width);
    if (fabs(turned - 1) < 0.15) im->w = (uint32_t)cam->width * 3 / 2, im->h = (uint32_t)cam->height;
    t_colmap_write_images(&m, scene, false);
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, imgs, "another shape (a rotated image?)");
    EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, im->name, "another shape (a rotated image?)");
}

/* A mask file for `im` in `dir` under one of the three names a mask may have, its pixels kept
 * where want[] is 1. Kept pixels have one channel at 128 or more and the others anything; ignored
 * ones have every channel below 128 (so a loader that reads one channel, or thresholds at another
 * value, gets some wrong). 2x2 blocks share a value when `blocks`, so a mask halved with its image
 * stays exact. */
static void write_mask(const char *dir, const t_img *im, uint32_t w, uint32_t h, bool blocks, int naming, uint8_t *want)
{
    char name[200], path[900];
    snprintf(name, sizeof name, "%s", im->name);
    if (naming == 1) snprintf(name + strlen(name), sizeof name - strlen(name), ".png");
    if (naming == 2) snprintf(strrchr(name, '.'), 5, ".png");
    uint8_t *px = malloc((size_t)w * h * 3);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint32_t src = blocks ? (y & ~1u) * w + (x & ~1u) : y * w + x;
            uint8_t keep = src == y * w + x ? (uint8_t)rnd(2) : want[src];
            want[y * w + x] = keep;
            uint32_t hi = rnd(3);
            for (int c = 0; c < 3; c++)
                px[(y * w + x) * 3 + c] = (uint8_t)(keep && (uint32_t)c == hi ? 128 + rnd(128) : rnd(128));
        }
    if (blocks) /* a block's pixels equal, not only their verdicts */
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                memcpy(px + (y * w + x) * 3, px + ((y & ~1u) * w + (x & ~1u)) * 3, 3);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    T_REQUIRE(t_write_png(path, w, h, 2, 8, px, (size_t)w * 3, NULL, 0, NULL, 0, false));
    free(px);
}

/* Masks: masks/ beside images/ and masks_2/ beside images_2/, under every naming, read as what
 * they say pixel for pixel (halved with --images-factor 2 when there is no masks_2/); a view
 * without a mask once the folder exists, and a mask of another size, are errors naming them. */
SPLAT_TEST(io_colmap_masks)
{
    t_colmap m;
    t_colmap_random(&m);
    const char *scene = t_path("masks");
    char dir[600], masks[700], masks2[700];
    snprintf(dir, sizeof dir, "%s/sparse/0", scene);
    t_colmap_write(&m, dir, false);
    t_colmap_write_images(&m, scene, false);
    snprintf(masks, sizeof masks, "%s/masks", scene), t_mkdir(masks);
    uint8_t *want[32];
    for (int i = 0; i < m.n_imgs; i++) {
        want[i] = malloc((size_t)m.imgs[i].w * m.imgs[i].h);
        write_mask(masks, &m.imgs[i], m.imgs[i].w, m.imgs[i].h, true, (int)rnd(3), want[i]);
    }
    splat_error err = {0};
    splat_dataset ds;
    for (uint32_t factor = 1; factor <= 2; factor++) {
        T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = factor}, &ds, &err), &err);
        for (uint32_t v = 0; v < ds.n_views; v++) {
            const t_img *im = NULL;
            int idx = 0;
            for (int i = 0; i < m.n_imgs; i++)
                if (strcmp(m.imgs[i].name, ds.views[v].name) == 0) im = &m.imgs[i], idx = i;
            T_REQUIRE(im && ds.views[v].mask_path, "view %s: no mask found", ds.views[v].name);
            uint8_t *got;
            T_OK(splat__view_mask_load(&ds.views[v], &got, &err), &err);
            uint32_t w = im->w / factor, h = im->h / factor, wrong = 0;
            T_REQUIRE(ds.views[v].camera.width == w && ds.views[v].camera.height == h);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) wrong += got[y * w + x] != want[idx][(y * factor) * im->w + x * factor];
            T_CHECK(wrong == 0, "factor %u, %s: %u of %u mask pixels wrong", factor, im->name, wrong, w * h);
            splat__free(got);
        }
        splat__dataset_free(&ds);
    }
    /* masks_2/ beside images_2/ is the one --images-factor 2 reads */
    t_colmap_write_images(&m, scene, true);
    snprintf(masks2, sizeof masks2, "%s/masks_2", scene), t_mkdir(masks2);
    for (int i = 0; i < m.n_imgs; i++) write_mask(masks2, &m.imgs[i], m.imgs[i].w2, m.imgs[i].h2, false, 0, want[i]);
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 2}, &ds, &err), &err);
    for (uint32_t v = 0; v < ds.n_views; v++) {
        int idx = 0;
        for (int i = 0; i < m.n_imgs; i++)
            if (strcmp(m.imgs[i].name, ds.views[v].name) == 0) idx = i;
        T_CHECK(ds.views[v].mask_path && strstr(ds.views[v].mask_path, "masks_2/"));
        uint8_t *got;
        T_OK(splat__view_mask_load(&ds.views[v], &got, &err), &err);
        T_CHECK(memcmp(got, want[idx], (size_t)m.imgs[idx].w2 * m.imgs[idx].h2) == 0, "masks_2/%s differs", m.imgs[idx].name);
        splat__free(got);
    }
    splat__dataset_free(&ds);
    /* a mask of another size than its image: refused naming the mask */
    int bad = (int)rnd((uint32_t)m.n_imgs);
    char path[900];
    snprintf(path, sizeof path, "%s/%s", masks2, m.imgs[bad].name);
    T_REQUIRE(t_write_random_png(path, m.imgs[bad].w2 + 2, m.imgs[bad].h2));
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 2}, &ds, &err), &err);
    splat_status st = SPLAT_OK;
    for (uint32_t v = 0; v < ds.n_views && st == SPLAT_OK; v++) {
        uint8_t *got = NULL;
        st = splat__view_mask_load(&ds.views[v], &got, &err);
        splat__free(got);
    }
    T_CHECK(st != SPLAT_OK && t_has(err.msg, m.imgs[bad].name) && t_has(err.msg, "masks_2"), "%s", err.msg);
    splat__dataset_free(&ds);
    /* a view without a mask */
    T_REQUIRE(remove(path) == 0);
    err = (splat_error){0};
    st = splat__dataset_load(&(splat_dataset_desc){.path = scene, .images_factor = 2}, &ds, &err);
    if (st == SPLAT_OK) splat__dataset_free(&ds);
    T_CHECK(st == SPLAT_ERR_IO && t_has(err.msg, "no mask for image") && t_has(err.msg, "masks_2") && t_has(err.msg, m.imgs[bad].name),
            "%s", err.msg);
    for (int i = 0; i < m.n_imgs; i++) free(want[i]);
}

SPLAT_TEST(io_nerf_intrinsics_range)
{
    /* Finite numbers whose focal length leaves a float's range (a tiny camera_angle_y, found by
     * fuzz_nerf; fl_x of 3e38 for a stated "w" half the image's) or rounds to 0 as a float: refused, naming the file,
     * never views with Inf or 0. */
    const char *scene = t_path("nerf_range");
    t_mkdir(scene);
    const char *json = t_path("nerf_range/transforms_train.json");
    write_rgba_png(t_path("nerf_range/a.png"), 8, 8);
    static const char *const intrinsics[] = {
        "\"camera_angle_x\": 1.9, \"camera_angle_y\": 5.71e-45",
        "\"fl_x\": 3e38, \"w\": 4, \"h\": 4",
        "\"fl_x\": 1e-300",
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(intrinsics); k++) {
        tbuf b = {0};
        tb_printf(&b, "{\"frames\": [{\"file_path\": \"a.png\", %s, \"transform_matrix\": "
                  "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}", intrinsics[k]);
        t_write(json, b.p, b.n);
        tb_free(&b);
        if (k < 2) EXPECT_FAIL(scene, 0, SPLAT_ERR_NONFINITE, json, "are not finite floats");
        else EXPECT_FAIL(scene, 0, SPLAT_ERR_FORMAT, json, "is not a positive float");
    }
}

SPLAT_TEST(io_nerf_pose_range)
{
    /* A transform_matrix of finite floats whose world-to-camera transform is not (a rotation by 45
     * degrees of a position of 3e38 on two axes); and matrices that are no camera pose: an entry of
     * 1e38 beside a translation of 4 (found by fuzz_nerf), a scale of 1e-5 on a position of 1e34, a
     * scale of a random 1.01-3, a last row not (0 0 0 1). Refused, naming the file, never views with
     * Inf or a pose read as something else. */
    const char *scene = t_path("nerf_pose");
    t_mkdir(scene);
    const char *json = t_path("nerf_pose/transforms_train.json");
    write_rgba_png(t_path("nerf_pose/a.png"), 8, 8);
    char scaled[200], last_row[200];
    double sc = t_uniform(1.01, 3);
    snprintf(scaled, sizeof scaled, "[[%.17g,0,0,1],[0,%.17g,0,0],[0,0,%.17g,0],[0,0,0,1]]", sc, sc, sc);
    snprintf(last_row, sizeof last_row, "[[1,0,0,1],[0,1,0,0],[0,0,1,0],[%.17g,0,0,1]]", t_uniform(0.01, 5));
    const struct {
        const char *matrix;
        splat_status st;
        const char *says;
    } cases[] = {
        {"[[0.70710678118654757,-0.70710678118654757,0,3e38],[0.70710678118654757,0.70710678118654757,0,3e38],[0,0,1,0],"
         "[0,0,0,1]]", SPLAT_ERR_NONFINITE, "not finite as floats"},
        {"[[0,0,1,4],[1,0,1e38,0],[0,1,0,0],[0,0,0,1]]", SPLAT_ERR_FORMAT, "not orthonormal"},
        {"[[1e-5,0,0,1e34],[0,1e-5,0,0],[0,0,1,0],[0,0,0,1]]", SPLAT_ERR_FORMAT, "not orthonormal"},
        {scaled, SPLAT_ERR_FORMAT, "not orthonormal"},
        {last_row, SPLAT_ERR_FORMAT, "not (0 0 0 1)"},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(cases); k++) {
        tbuf b = {0};
        tb_printf(&b, "{\"camera_angle_x\": 0.7, \"frames\": [{\"file_path\": \"a.png\", \"transform_matrix\": %s}]}",
                  cases[k].matrix);
        t_write(json, b.p, b.n);
        tb_free(&b);
        EXPECT_FAIL(scene, 0, cases[k].st, json, cases[k].says);
    }
}
