/* Writes the seed corpus of every harness into OUT/<harness>/ (the build runs it; nothing it
 * writes is committed): valid files made by the io tests' fixture writers (tests/io_fixtures.h)
 * and by splatc's own writers, in the layout each harness reads.
 *
 *     fuzz_seeds OUT */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
/* jpeglib.h needs stdio.h first */
#include <jpeglib.h>

#include "fuzz.h"
#include "io_fixtures.h"

static const char *g_out;
static int g_count;

static void seed(const char *harness, const char *name, const void *data, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_out, harness);
    fuzz_mkdir(path);
    snprintf(path, sizeof path, "%s/%s/%s", g_out, harness, name);
    fuzz_write(path, data, n);
    g_count++;
}

/* A file written by a fixture writer or splatc, as a seed. */
static void seed_file(const char *harness, const char *name, const char *file)
{
    size_t n;
    uint8_t *p = t_read(file, &n);
    if (!p) {
        fprintf(stderr, "fuzz_seeds: %s was not written\n", file);
        exit(1);
    }
    seed(harness, name, p, n);
    free(p);
}

static void part(tbuf *b, const char *file)
{
    size_t n;
    uint8_t *p = t_read(file, &n);
    if (!p || n > 0xffff) {
        fprintf(stderr, "fuzz_seeds: %s is missing or larger than a part can be\n", file);
        exit(1);
    }
    tb_u8(b, (uint8_t)n);
    tb_u8(b, (uint8_t)(n >> 8));
    tb_bytes(b, p, n);
    free(p);
}

static void rest(tbuf *b, const char *file)
{
    size_t n;
    uint8_t *p = t_read(file, &n);
    if (!p) {
        fprintf(stderr, "fuzz_seeds: %s is missing\n", file);
        exit(1);
    }
    tb_bytes(b, p, n);
    free(p);
}

static void ok(splat_status st, const splat_error *err)
{
    if (st != SPLAT_OK) {
        fprintf(stderr, "fuzz_seeds: %s\n", err->msg);
        exit(1);
    }
}

/* -------------------------------------------------------------------------- COLMAP */

static void colmap_seeds(void)
{
    /* flags: plain, eval, images_2/, images/ downsampled by 3 */
    static const uint8_t flags[4] = {0, 1, 2 << 1, 3 << 1 | 1};
    for (int text = 0; text < 2; text++) {
        for (int v = 0; v < 4; v++) {
            t_colmap m;
            t_colmap_random(&m);
            m.n_imgs = FUZZ_COLMAP_IMAGES;
            for (int i = 0; i < m.n_imgs; i++)
                snprintf(m.imgs[i].name, sizeof m.imgs[i].name, "%s", fuzz_colmap_images[i]);
            if (v == 2) m.n_pts = 0;
            if (v == 3) m.n_pts = SPLAT_MIN(m.n_pts, 8);
            const char *dir = fuzz_path(text ? "colmap_txt" : "colmap_bin");
            t_colmap_write(&m, dir, text);
            const char *ext = text ? "txt" : "bin";
            char file[3][1100], name[32];
            snprintf(file[0], sizeof file[0], "%s/cameras.%s", dir, ext);
            snprintf(file[1], sizeof file[1], "%s/images.%s", dir, ext);
            snprintf(file[2], sizeof file[2], "%s/points3D.%s", dir, ext);
            tbuf b = {0};
            tb_u8(&b, flags[v]);
            part(&b, file[0]);
            part(&b, file[1]);
            rest(&b, file[2]);
            snprintf(name, sizeof name, "model_%d", v);
            seed(text ? "colmap_txt" : "colmap_bin", name, b.p, b.n);
            tb_free(&b);
        }
    }
}

/* ------------------------------------------------------------------- NeRF-synthetic */

static void nerf_seed(const char *name, uint8_t flags, const char *train, const char *test)
{
    tbuf b = {0};
    size_t n = strlen(train);
    tb_u8(&b, flags);
    tb_u8(&b, (uint8_t)n);
    tb_u8(&b, (uint8_t)(n >> 8));
    tb_bytes(&b, train, n);
    tb_bytes(&b, test, strlen(test));
    seed("nerf", name, b.p, b.n);
    tb_free(&b);
}

static void nerf_seeds(void)
{
    /* the Blender form: camera_angle_x, 4x4 rows, paths without extension */
    const char *train = "{\"camera_angle_x\": 0.69, \"frames\": [\n"
                        " {\"file_path\": \"./r_0\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},\n"
                        " {\"file_path\": \"./r_1\", \"transform_matrix\": [[0,0,1,4],[1,0,0,0],[0,1,0,0],[0,0,0,1]]},\n"
                        " {\"file_path\": \"./train/r_2\", \"transform_matrix\": "
                        "[[0,1,0,0],[0,0,1,0],[1,0,0,4],[0,0,0,1]]}]}\n";
    /* instant-ngp's form: fl_x, fl_y, cx, cy, w, h; a flat matrix; an extension */
    const char *test = "{\"fl_x\": 20, \"fl_y\": 21, \"cx\": 6, \"cy\": 5, \"w\": 12, \"h\": 10, \"frames\": [\n"
                       " {\"file_path\": \"test/r_3.jpg\", \"transform_matrix\": [1,0,0,0,0,1,0,0,0,0,1,4,0,0,0,1]},\n"
                       " {\"file_path\": \"r_0.png\", \"transform_matrix\": [1,0,0,0,0,0,-1,0,0,1,0,4,0,0,0,1]}]}";
    /* intrinsics per frame, camera_angle_y */
    const char *per_frame = "{\"frames\": [\n"
                            " {\"file_path\": \"./r_1\", \"camera_angle_x\": 0.9, \"camera_angle_y\": 0.7, \"cx\": 3.5,"
                            " \"transform_matrix\": [[1,0,0,1],[0,1,0,2],[0,0,1,3],[0,0,0,1]]},\n"
                            " {\"file_path\": \"test/r_3.jpg\", \"fl_x\": 9, \"w\": 8, \"h\": 8,"
                            " \"transform_matrix\": [[0,-1,0,0],[1,0,0,0],[0,0,1,-4],[0,0,0,1]]}]}";
    nerf_seed("blender", 0, train, test);
    nerf_seed("blender_2", 2 << 1, train, test);
    nerf_seed("train_only", 3 << 1, train, "");
    nerf_seed("per_frame", 0, per_frame, "");
}

/* -------------------------------------------------------------- nerfstudio transforms.json */

static void transforms_seed(const char *name, uint8_t flags, const char *json, const void *ply, size_t ply_n)
{
    tbuf b = {0};
    size_t n = strlen(json);
    tb_u8(&b, flags);
    tb_u8(&b, (uint8_t)n);
    tb_u8(&b, (uint8_t)(n >> 8));
    tb_bytes(&b, json, n);
    tb_bytes(&b, ply, ply_n);
    seed("transforms", name, b.p, b.n);
    tb_free(&b);
}

static void transforms_seeds(void)
{
    /* as nerfstudio's colmap_to_json writes it: one camera, a lens, applied_transform, points */
    const char *colmap = "{\"w\": 12, \"h\": 10, \"fl_x\": 11, \"fl_y\": 11.5, \"cx\": 6, \"cy\": 5, \"k1\": -0.05,"
                         " \"k2\": 0.01, \"p1\": 0.001, \"p2\": -0.001, \"camera_model\": \"OPENCV\", \"frames\": [\n"
                         " {\"file_path\": \"./r_0.png\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]],"
                         " \"colmap_im_id\": 1, \"mask_path\": \"r_1.png\"},\n"
                         " {\"file_path\": \"./r_1.png\", \"transform_matrix\": [[0,0,1,4],[1,0,0,0],[0,1,0,0],[0,0,0,1]],"
                         " \"colmap_im_id\": 2, \"mask_path\": \"r_0.png\"}],\n"
                         " \"applied_transform\": [[1,0,0,0],[0,0,1,0],[0,-1,0,0]], \"ply_file_path\": \"points.ply\"}";
    const char *ascii = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                        "property uint8 red\nproperty uint8 green\nproperty uint8 blue\nend_header\n"
                        "0.5 1 -2 10 20 30\n-1 0.25 3 255 0 128\n2 2 2 1 2 3\n";
    transforms_seed("colmap", 1, colmap, ascii, strlen(ascii));
    transforms_seed("colmap_2", 1 | 2 << 1, colmap, ascii, strlen(ascii));
    /* per frame (Polycam), a fisheye, split lists, a binary big-endian cloud with normals */
    const char *polycam = "{\"camera_model\": \"OPENCV_FISHEYE\", \"frames\": [\n"
                          " {\"file_path\": \"train/r_2.png\", \"fl_x\": 9, \"fl_y\": 9, \"cx\": 4, \"cy\": 4, \"w\": 8,"
                          " \"h\": 8, \"k1\": 0.02, \"k4\": 0.001, \"transform_matrix\": [[1,0,0,1],[0,1,0,2],[0,0,1,3],[0,0,0,1]]},\n"
                          " {\"file_path\": \"test/r_3.jpg\", \"fl_x\": 9, \"fl_y\": 9, \"cx\": 4, \"cy\": 4, \"w\": 8,"
                          " \"h\": 8, \"transform_matrix\": [[0,-1,0,0],[1,0,0,0],[0,0,1,-4],[0,0,0,1]]}],\n"
                          " \"train_filenames\": [\"train/r_2.png\"], \"test_filenames\": [\"test/r_3.jpg\"],"
                          " \"ply_file_path\": \"points.ply\"}";
    tbuf b = {0};
    const char *head = "ply\nformat binary_big_endian 1.0\nelement vertex 2\nproperty double x\nproperty double y\n"
                       "property double z\nproperty float nx\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
                       "element face 0\nproperty list uchar int vertex_indices\nend_header\n";
    tb_bytes(&b, head, strlen(head));
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 3; k++) {
            double v = i + 0.5 * k;
            uint8_t be[8], le[8];
            memcpy(le, &v, 8);
            for (int j = 0; j < 8; j++) be[j] = le[7 - j];
            tb_bytes(&b, be, 8);
        }
        tb_bytes(&b, "\0\0\0\0", 4);
        tb_bytes(&b, "\x10\x20\x30", 3);
    }
    transforms_seed("polycam", 0, polycam, b.p, b.n);
    tb_free(&b);
}

/* ----------------------------------------------------------------------------- PLY */

static void ply_seeds(void)
{
    for (uint32_t degree = 0; degree <= 3; degree++) {
        splat_scene s;
        splat_error err = {0};
        uint32_t n = 1 + degree;
        ok(splat__scene_init(&s, n, &err), &err);
        s.count = n, s.sh_degree = degree;
        s.rasterize_mode = degree % 2 ? SPLAT_RASTERIZE_ANTIALIASED : SPLAT_RASTERIZE_CLASSIC;
        for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
            float *a = *splat__scene_group(&s, g);
            for (uint32_t i = 0; i < n * splat__groups[g].width; i++) a[i] = (float)t_uniform(-2, 2);
        }
        const char *path = fuzz_path("s.ply");
        ok(splat__ply_write(path, &s, &err), &err);
        splat__scene_free(&s);
        char name[32];
        snprintf(name, sizeof name, "binary_degree_%u", degree);
        seed_file("ply", name, path);
    }
    /* ASCII, a double, no normals, an element after the vertices */
    const char *ascii = "ply\nformat ascii 1.0\ncomment fuzz\nelement vertex 3\nproperty float x\nproperty float y\n"
                        "property float z\nproperty double f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n"
                        "property float opacity\nproperty float scale_0\nproperty float scale_1\nproperty float scale_2\n"
                        "property float rot_0\nproperty float rot_1\nproperty float rot_2\nproperty float rot_3\n"
                        "element face 0\nproperty list uchar int vertex_indices\nend_header\n"
                        "1 2 3 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n4 5 6 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n"
                        "7 8 9 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n";
    seed("ply", "ascii", ascii, strlen(ascii));
    /* properties in another order, float64 names, degree 1 in ASCII */
    tbuf b = {0};
    tb_printf(&b, "ply\r\nformat ascii 1.0\r\nelement vertex 2\r\nproperty float64 rot_0\r\nproperty float rot_1\r\n"
                  "property float rot_2\r\nproperty float rot_3\r\nproperty float32 x\r\nproperty float y\r\n"
                  "property float z\r\nproperty float nx\r\nproperty float ny\r\nproperty float nz\r\n");
    for (int k = 8; k >= 0; k--) tb_printf(&b, "property float f_rest_%d\r\n", k);
    tb_printf(&b, "property float f_dc_0\r\nproperty float f_dc_1\r\nproperty float f_dc_2\r\nproperty float opacity\r\n"
                  "property float scale_0\r\nproperty float scale_1\r\nproperty float scale_2\r\nend_header\r\n");
    for (int r = 0; r < 2; r++) {
        for (int k = 0; k < 4 + 3 + 3 + 9 + 3 + 1 + 3; k++) tb_printf(&b, "%s%g", k ? " " : "", 0.25 * k - r);
        tb_printf(&b, "\r\n");
    }
    seed("ply", "ascii_degree_1", b.p, b.n);
    tb_free(&b);
}

/* ------------------------------------------------------------- the other scene formats */

static void random_scene(splat_scene *s, uint32_t n, uint32_t degree)
{
    splat_error err = {0};
    ok(splat__scene_init(s, n, &err), &err);
    s->count = n, s->sh_degree = degree;
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) {
        float *a = *splat__scene_group(s, g);
        for (uint32_t i = 0; i < n * splat__groups[g].width; i++) a[i] = (float)t_uniform(-2, 2);
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = (degree + 1) * (degree + 1) * 3; k < SPLAT_SH_COEFFS * 3; k++) s->sh[(size_t)i * 48 + k] = 0;
}

static void scene_seeds(void)
{
    static const char *const images[7] = {"means_l.webp", "means_u.webp", "quats.webp", "scales.webp", "sh0.webp",
                                          "shN_centroids.webp", "shN_labels.webp"};
    for (uint32_t degree = 0; degree <= 3; degree++) {
        splat_scene s;
        splat_error err = {0};
        random_scene(&s, 3 + 5 * degree, degree);
        char name[32];
        snprintf(name, sizeof name, "degree_%u", degree);
        /* compressed PLY goes through the PLY reader, which tells it by its header */
        const char *cp = fuzz_path("s.compressed.ply");
        ok(splat__ply_compressed_write(cp, &s, &err), &err);
        snprintf(name, sizeof name, "compressed_degree_%u", degree);
        seed_file("ply", name, cp);
        snprintf(name, sizeof name, "degree_%u", degree);
        const char *sp = fuzz_path("s.splat");
        ok(splat__splat_write(sp, &s, &err), &err);
        if (degree == 0) seed_file("splat", "records", sp);
        const char *zp = fuzz_path("s.spz"), *z4 = fuzz_path("s4.spz");
        ok(splat__spz_write(zp, &s, &err), &err);
        seed_file("spz", name, zp);
        static const uint8_t ext[12] = {0x03, 0x00, 0xbe, 0xad, 4, 0, 0, 0, 6, 0, 0, 0};
        if (!t_spz_v4_from_v3(zp, z4, degree == 2 ? ext : NULL, degree == 2 ? sizeof ext : 0, 0)) {
            fprintf(stderr, "fuzz_seeds: cannot write %s\n", z4);
            exit(1);
        }
        snprintf(name, sizeof name, "v4_degree_%u", degree);
        seed_file("spz", name, z4);
        snprintf(name, sizeof name, "degree_%u", degree);
        const char *gp = fuzz_path("s.sog");
        ok(splat__sog_write(gp, &s, &err), &err);
        seed_file("sog", name, gp);
        char dir[600], meta[700];
        snprintf(dir, sizeof dir, "%s", fuzz_path("sogdir"));
        fuzz_mkdir(dir);
        snprintf(meta, sizeof meta, "%s/meta.json", dir);
        for (int k = 0; k < 7; k++) {
            char p[700];
            snprintf(p, sizeof p, "%s/%s", dir, images[k]);
            fuzz_remove(p);
        }
        ok(splat__sog_write(meta, &s, &err), &err);
        tbuf b = {0};
        part(&b, meta);
        for (int k = 0; k < 7; k++) {
            char p[700];
            snprintf(p, sizeof p, "%s/%s", dir, images[k]);
            size_t n;
            uint8_t *x = t_read(p, &n);
            if (x) part(&b, p), free(x);
            else tb_u8(&b, 0), tb_u8(&b, 0);
        }
        seed("sog_folder", name, b.p, b.n);
        tb_free(&b);
        splat__scene_free(&s);
    }
}

/* ---------------------------------------------------------------------- checkpoints */

static void ckpt_seeds(void)
{
    uint8_t data[3][40];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 40; j++) data[k][j] = (uint8_t)(k * 40 + j * 7);
    splat_section secs[3] = {{"means", data[0], 40}, {"empty", data[1], 0}, {"adam.means", data[2], 33}};
    splat_error err = {0};
    const char *path = fuzz_path("f.ckpt");
    ok(splat__ckpt_write(path, secs, 3, &err), &err);
    seed_file("ckpt", "three", path);
    ok(splat__ckpt_write(path, secs, 0, &err), &err);
    seed_file("ckpt", "none", path);
    ok(splat__ckpt_write(path, secs, 1, &err), &err);
    seed_file("ckpt", "one", path);
}

/* -------------------------------------------------------------------------- cameras */

static void camera_seeds(void)
{
    splat_camera cams[2] = {{.fx = 100, .fy = 101, .cx = 50, .cy = 40, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                             .t = {0, 0, 3}, .width = 100, .height = 80},
                            {.fx = 90, .fy = 90, .cx = 30, .cy = 20, .R = {0, 1, 0, -1, 0, 0, 0, 0, 1},
                             .t = {1, 2, 3}, .width = 60, .height = 40}};
    const char *names[2] = {"a.png", "b \"c\".png"};
    splat_error err = {0};
    const char *path = fuzz_path("cams.json");
    ok(splat__cameras_write(path, cams, names, 2, &err), &err);
    seed_file("cameras", "splatc", path);
    /* the 3DGS form as splatc train writes it (cameras.json with cx, cy and t) */
    ok(splat__cameras_write_3dgs(path, cams, names, 2, &err), &err);
    seed_file("cameras", "3dgs_splatc", path);
    /* the original 3DGS form: camera-to-world rows and the position */
    const char *gs = "[{\"id\": 0, \"img_name\": \"x\", \"width\": 64, \"height\": 48, \"position\": [0, 0, -3], "
                     "\"rotation\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"fy\": 70.5, \"fx\": 70.5},\n"
                     " {\"id\": 1, \"img_name\": \"y\", \"width\": 32, \"height\": 24, \"position\": [1, 2, 3], "
                     "\"rotation\": [0, 0, 1, 0, 1, 0, -1, 0, 0], \"fy\": 30, \"fx\": 31}]";
    seed("cameras", "3dgs", gs, strlen(gs));
}

/* --------------------------------------------------------------------------- images */

typedef struct jpeg_fail {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
} jpeg_fail;

static void on_jpeg_error(j_common_ptr c) { longjmp(((jpeg_fail *)c->err)->jb, 1); }

/* A progressive or arithmetic-coded JPEG (which the fixture writer does not make); false when
 * this libjpeg cannot write it. */
static bool write_jpeg_coded(const char *path, uint32_t w, uint32_t h, const uint8_t *rgb, bool progressive,
                             bool arith)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    struct jpeg_compress_struct c;
    jpeg_fail jerr;
    c.err = jpeg_std_error(&jerr.mgr);
    jerr.mgr.error_exit = on_jpeg_error;
    jpeg_create_compress(&c);
    if (setjmp(jerr.jb)) {
        jpeg_destroy_compress(&c);
        fclose(fp);
        return false;
    }
    jpeg_stdio_dest(&c, fp);
    c.image_width = w;
    c.image_height = h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 70, TRUE);
    if (progressive) jpeg_simple_progression(&c);
    c.arith_code = arith;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < h) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return fclose(fp) == 0;
}

static void image_seeds(void)
{
    static uint8_t px[32 * 32 * 8];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 13 + (i >> 5) * 7);
    static const uint8_t pal[4 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, trns[2] = {0, 128};
    uint8_t idx[16 * 12];
    for (size_t k = 0; k < sizeof idx; k++) idx[k] = px[k] & 3;
    const char *path = fuzz_path("i");
    struct {
        const char *name;
        uint32_t w, h;
        int type, depth;
        size_t row_bytes;
        const uint8_t *rows;
        bool palette, interlace;
    } pngs[] = {
        {"rgb.png", 24, 16, PNG_COLOR_TYPE_RGB, 8, 24 * 3, px, false, false},
        {"palette_trns.png", 16, 12, PNG_COLOR_TYPE_PALETTE, 8, 16, idx, true, false},
        {"grey16_interlaced.png", 10, 9, PNG_COLOR_TYPE_GRAY, 16, 20, px, false, true},
        {"grey_alpha.png", 7, 5, PNG_COLOR_TYPE_GRAY_ALPHA, 8, 14, px, false, false},
        {"rgba.png", 9, 9, PNG_COLOR_TYPE_RGBA, 8, 36, px, false, false},
        {"grey1.png", 17, 3, PNG_COLOR_TYPE_GRAY, 1, 3, px, false, false},
        {"rgb16.png", 5, 4, PNG_COLOR_TYPE_RGB, 16, 30, px, false, false},
    };
    for (size_t i = 0; i < SPLAT_COUNTOF(pngs); i++) {
        if (!t_write_png(path, pngs[i].w, pngs[i].h, pngs[i].type, pngs[i].depth, pngs[i].rows, pngs[i].row_bytes,
                         pngs[i].palette ? pal : NULL, pngs[i].palette ? 4 : 0, pngs[i].palette ? trns : NULL,
                         pngs[i].palette ? 2 : 0, pngs[i].interlace)) {
            fprintf(stderr, "fuzz_seeds: cannot write %s\n", pngs[i].name);
            exit(1);
        }
        seed_file("image", pngs[i].name, path);
    }
    if (!t_write_jpeg(path, 24, 16, 3, px, 80)) exit(1);
    seed_file("image", "rgb.jpg", path);
    if (!t_write_jpeg(path, 13, 7, 1, px, 50)) exit(1);
    seed_file("image", "grey.jpg", path);
    if (write_jpeg_coded(path, 20, 12, px, true, false)) seed_file("image", "progressive.jpg", path);
    if (write_jpeg_coded(path, 20, 12, px, false, true)) seed_file("image", "arithmetic.jpg", path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds OUT\n");
        return 2;
    }
    g_out = argv[1];
    fuzz_mkdir(g_out);
    colmap_seeds();
    nerf_seeds();
    transforms_seeds();
    ply_seeds();
    scene_seeds();
    ckpt_seeds();
    camera_seeds();
    image_seeds();
    printf("fuzz_seeds: %d seeds in %s\n", g_count, g_out);
    return 0;
}
