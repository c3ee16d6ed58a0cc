/* io: every parser on a few thousand random mutations of valid fixtures (bit flips, byte
 * overwrites, interesting integers, truncations, insertions, deletions, duplicated chunks).
 * Each must return without crashing (the CI sanitizer build checks memory errors and leaks):
 * SPLAT_OK, or an error whose message names the file or scene it was given. */
#include <png.h>

#include "io_fixtures.h"

#define ITERATIONS 3000

static uint32_t rnd(uint32_t n) { return n ? (uint32_t)(splat__rng_u64(splat_test_rng()) % n) : 0; }

typedef enum target_kind { DATASET, PLY, CKPT, CAMERAS, IMAGE } target_kind;

typedef struct target {
    target_kind kind;
    char file[512];          /* the file mutated */
    char open[512];          /* what the parser is given (the scene folder for datasets) */
    uint8_t *orig;
    size_t n;
    bool text;               /* text formats also get digit and keyword mutations */
} target;

static void add(target *t, int *n, target_kind kind, const char *file, const char *open, bool text)
{
    target *x = &t[(*n)++];
    x->kind = kind;
    snprintf(x->file, sizeof x->file, "%s", file);
    snprintf(x->open, sizeof x->open, "%s", open);
    x->orig = t_read(file, &x->n);
    x->text = text;
    if (!x->orig) splat_test_fail(__FILE__, __LINE__, "fixture missing", "%s", file);
}

static size_t mutate(const target *t, uint8_t *out)
{
    size_t n = t->n;
    memcpy(out, t->orig, n);
    int ops = 1 + (int)rnd(3);
    for (int o = 0; o < ops; o++) {
        size_t at = rnd((uint32_t)(n ? n : 1));
        switch (rnd(t->text ? 9 : 8)) {
        case 0: /* flip a bit */
            if (n) out[at] ^= (uint8_t)(1u << rnd(8));
            break;
        case 1: { /* an interesting byte */
            static const uint8_t v[] = {0, 0xff, 0x7f, 0x80, 1, '\n', ' ', '-'};
            if (n) out[at] = v[rnd(sizeof v)];
            break;
        }
        case 2: { /* an interesting 32- or 64-bit integer (counts, sizes) */
            static const uint64_t v[] = {0, 1, 0xffffffffull, 0x7fffffffull, 0x80000000ull, 0xffffffffffffffffull,
                                         1ull << 40, 0x00ffffffffffffffull};
            size_t w = rnd(2) ? 4 : 8;
            uint64_t x = v[rnd(SPLAT_COUNTOF(v))];
            if (n >= w) {
                at = rnd((uint32_t)(n - w + 1));
                for (size_t k = 0; k < w; k++) out[at + k] = (uint8_t)(x >> (8 * k));
            }
            break;
        }
        case 3: /* truncate */
            n = at;
            break;
        case 4: { /* insert random bytes */
            size_t k = 1 + rnd(8);
            memmove(out + at + k, out + at, n - at);
            for (size_t j = 0; j < k; j++) out[at + j] = (uint8_t)rnd(256);
            n += k;
            break;
        }
        case 5: { /* delete a range */
            size_t k = 1 + rnd(16); /* (SPLAT_MIN evaluates its arguments twice) */
            k = SPLAT_MIN(k, n - at);
            memmove(out + at, out + at + k, n - at - k);
            n -= k;
            break;
        }
        case 6: { /* duplicate a chunk (repeated records) */
            size_t k = 1 + rnd(32);
            k = SPLAT_MIN(k, n - at);
            memmove(out + at + k, out + at, n - at);
            n += k;
            break;
        }
        case 7: /* random byte */
            if (n) out[at] = (uint8_t)rnd(256);
            break;
        default: { /* text: a token that parsers find awkward */
            static const char *const v[] = {"nan", "-1", "1e999", "99999999999999999999", "0", "\"", "[", "}", ",",
                                            "#", "\r\n", "inf", "-0", "0x10", "  "};
            const char *s = v[rnd(SPLAT_COUNTOF(v))];
            size_t k = strlen(s);
            memmove(out + at + k, out + at, n - at);
            memcpy(out + at, s, k);
            n += k;
            break;
        }
        }
    }
    return n;
}

static splat_status run_parser(const target *t, splat_error *err)
{
    splat_status st = SPLAT_OK;
    switch (t->kind) {
    case DATASET: {
        splat_dataset ds;
        st = splat__dataset_load(&(splat_dataset_desc){.path = t->open, .eval = true}, &ds, err);
        if (st == SPLAT_OK) splat__dataset_free(&ds);
        break;
    }
    case PLY: {
        splat_scene s;
        st = splat__ply_read(t->open, &s, NULL, err);
        if (st == SPLAT_OK) splat_scene_free(&s);
        break;
    }
    case CKPT: {
        splat_section *s;
        uint32_t n;
        st = splat__ckpt_read(t->open, &s, &n, err);
        if (st == SPLAT_OK) splat__ckpt_free(s, n);
        break;
    }
    case CAMERAS: {
        splat_camera *c;
        char **names;
        uint32_t n;
        st = splat__cameras_read(t->open, &c, &names, &n, err);
        if (st == SPLAT_OK) {
            for (uint32_t i = 0; i < n; i++) splat__free(names[i]);
            splat__free(names);
            splat__free(c);
        }
        break;
    }
    case IMAGE: {
        splat_image img;
        uint32_t w, h;
        st = splat__image_probe(t->open, &w, &h, err);
        if (st == SPLAT_OK) st = splat__image_load(t->open, &img, err);
        if (st == SPLAT_OK) splat__image_free(&img);
        break;
    }
    }
    return st;
}

static void make_fixtures(target *t, int *n)
{
    /* COLMAP, binary and text */
    for (int text = 0; text < 2; text++) {
        t_colmap m;
        t_colmap_random(&m);
        m.n_imgs = 9; /* keep each load quick */
        const char *scene = t_path("colmap%d", text);
        char dir[600];
        snprintf(dir, sizeof dir, "%s/sparse/0", scene);
        t_colmap_write(&m, dir, text);
        t_colmap_write_images(&m, scene, false);
        const char *ext = text ? "txt" : "bin";
        add(t, n, DATASET, t_path("colmap%d/sparse/0/cameras.%s", text, ext), scene, text);
        add(t, n, DATASET, t_path("colmap%d/sparse/0/images.%s", text, ext), scene, text);
        add(t, n, DATASET, t_path("colmap%d/sparse/0/points3D.%s", text, ext), scene, text);
        add(t, n, DATASET, t_path("colmap%d/images/%s", text, m.imgs[0].name), scene, false);
    }
    /* NeRF-synthetic */
    const char *nerf = t_path("nerf");
    t_mkdir(nerf);
    const char *json = "{\"camera_angle_x\": 0.69, \"frames\": [\n"
                       " {\"file_path\": \"./r_0\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},\n"
                       " {\"file_path\": \"./r_1\", \"transform_matrix\": [[0,0,1,4],[1,0,0,0],[0,1,0,0],[0,0,0,1]]}]}\n";
    t_write(t_path("nerf/transforms_train.json"), json, strlen(json));
    const char *json_test = "{\"fl_x\": 20, \"fl_y\": 21, \"cx\": 6, \"cy\": 5, \"w\": 12, \"h\": 10, \"frames\": [\n"
                            " {\"file_path\": \"r_0.png\", \"transform_matrix\": [1,0,0,0,0,1,0,0,0,0,1,4,0,0,0,1]}]}";
    t_write(t_path("nerf/transforms_test.json"), json_test, strlen(json_test));
    t_write_random_png(t_path("nerf/r_0.png"), 12, 10);
    t_write_random_png(t_path("nerf/r_1.png"), 12, 10);
    add(t, n, DATASET, t_path("nerf/transforms_train.json"), nerf, true);
    add(t, n, DATASET, t_path("nerf/transforms_test.json"), nerf, true);

    /* PLY, binary (degree 1) and ASCII */
    splat_scene s;
    splat_error err = {0};
    if (splat_scene_init(&s, 6, &err) != SPLAT_OK) abort();
    s.count = 6, s.sh_degree = 1;
    for (uint32_t i = 0; i < 6 * 48; i++) s.sh[i] = (float)t_uniform(-1, 1);
    for (uint32_t i = 0; i < 18; i++) s.means[i] = (float)t_uniform(-1, 1), s.log_scales[i] = (float)t_uniform(-5, 0);
    for (uint32_t i = 0; i < 24; i++) s.quats[i] = (float)t_uniform(-1, 1);
    for (uint32_t i = 0; i < 6; i++) s.opacities[i] = (float)t_uniform(-3, 3);
    const char *ply = t_path("s.ply");
    splat__ply_write(ply, &s, &err);
    splat_scene_free(&s);
    add(t, n, PLY, ply, ply, false);
    const char *ascii = "ply\nformat ascii 1.0\ncomment fuzz\nelement vertex 3\nproperty float x\nproperty float y\n"
                        "property float z\nproperty double f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n"
                        "property float opacity\nproperty float scale_0\nproperty float scale_1\nproperty float scale_2\n"
                        "property float rot_0\nproperty float rot_1\nproperty float rot_2\nproperty float rot_3\n"
                        "element face 0\nproperty list uchar int vertex_indices\nend_header\n"
                        "1 2 3 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n4 5 6 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n"
                        "7 8 9 0.1 0.2 0.3 0.5 -3 -3 -3 1 0 0 0\n";
    const char *ply_a = t_path("a.ply");
    t_write(ply_a, ascii, strlen(ascii));
    add(t, n, PLY, ply_a, ply_a, true);

    /* checkpoint */
    uint8_t data[3][40];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 40; j++) data[k][j] = (uint8_t)rnd(256);
    splat_section secs[3] = {{"means", data[0], 40}, {"empty", data[1], 0}, {"adam", data[2], 33}};
    const char *ck = t_path("f.ckpt");
    splat__ckpt_write(ck, secs, 3, &err);
    add(t, n, CKPT, ck, ck, false);

    /* camera lists, both forms */
    splat_camera cams[2] = {{.fx = 100, .fy = 101, .cx = 50, .cy = 40, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1},
                             .t = {0, 0, 3}, .width = 100, .height = 80},
                            {.fx = 90, .fy = 90, .cx = 30, .cy = 20, .R = {0, 1, 0, -1, 0, 0, 0, 0, 1},
                             .t = {1, 2, 3}, .width = 60, .height = 40}};
    const char *names[2] = {"a.png", "b \"c\".png"};
    const char *cj = t_path("cams.json");
    splat__cameras_write(cj, cams, names, 2, &err);
    add(t, n, CAMERAS, cj, cj, true);
    const char *gs = "[{\"id\": 0, \"img_name\": \"x\", \"width\": 64, \"height\": 48, \"position\": [0, 0, -3], "
                     "\"rotation\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"fy\": 70.5, \"fx\": 70.5}]";
    const char *gj = t_path("gs.json");
    t_write(gj, gs, strlen(gs));
    add(t, n, CAMERAS, gj, gj, true);

    /* images: PNG (RGB, palette with tRNS, 16-bit grey interlaced) and JPEG */
    const char *png = t_path("i.png");
    t_write_random_png(png, 24, 16);
    add(t, n, IMAGE, png, png, false);
    uint8_t idx[16 * 12], pal[4 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, trns[2] = {0, 128};
    for (size_t k = 0; k < sizeof idx; k++) idx[k] = (uint8_t)rnd(4);
    const char *pp = t_path("p.png");
    t_write_png(pp, 16, 12, PNG_COLOR_TYPE_PALETTE, 8, idx, 16, pal, 4, trns, 2, false);
    add(t, n, IMAGE, pp, pp, false);
    uint8_t g16[10 * 9 * 2];
    for (size_t k = 0; k < sizeof g16; k++) g16[k] = (uint8_t)rnd(256);
    const char *gp = t_path("g16.png");
    t_write_png(gp, 10, 9, PNG_COLOR_TYPE_GRAY, 16, g16, 20, NULL, 0, NULL, 0, true);
    add(t, n, IMAGE, gp, gp, false);
    uint8_t px[24 * 16 * 3];
    for (size_t k = 0; k < sizeof px; k++) px[k] = (uint8_t)(k * 7 / 5);
    const char *jp = t_path("j.jpg");
    t_write_jpeg(jp, 24, 16, 3, px, 80);
    add(t, n, IMAGE, jp, jp, false);
}

SPLAT_TEST(io_fuzz_parsers)
{
    target t[32];
    int n = 0;
    make_fixtures(t, &n);
    if (splat_test_failed()) return;
    /* every fixture parses as it is */
    for (int k = 0; k < n; k++) {
        splat_error err = {0};
        T_CHECK(run_parser(&t[k], &err) == SPLAT_OK, "fixture %s: %s", t[k].file, err.msg);
    }
    size_t cap = 0;
    for (int k = 0; k < n; k++) cap = SPLAT_MAX(cap, t[k].n);
    uint8_t *buf = malloc(cap + 3 * 64 + 1);
    int ok = 0, failed = 0;
    double t0 = splat__now();
    for (int it = 0; it < ITERATIONS; it++) {
        const target *x = &t[it % n];
        size_t len = mutate(x, buf);
        t_write(x->file, buf, len);
        splat_error err = {0};
        splat_status st = run_parser(x, &err);
        if (st == SPLAT_OK) {
            ok++;
        } else {
            failed++;
            /* the message starts with a path inside what the parser was given (or, for a
             * NeRF frame whose mutated file_path became absolute, with that path) */
            bool named = strncmp(err.msg, x->open, strlen(x->open)) == 0 ||
                         (x->kind == DATASET && err.msg[0] == '/' && strstr(err.msg, ": "));
            T_CHECK(err.status == st && named,
                    "iteration %d, %s mutated: %s: \"%s\"", it, x->file, splat_status_str(st), err.msg);
        }
        t_write(x->file, x->orig, x->n);
        if (splat_test_failed()) break;
    }
    printf("  %d mutations: %d parsed, %d refused with a message (%.2f s)\n", ITERATIONS, ok, failed,
           splat__now() - t0);
    free(buf);
    for (int k = 0; k < n; k++) free(t[k].orig);
}

/* ------------------------------------------------------------- allocation faults */


typedef enum fault_op { OP_COLMAP_BIN, OP_COLMAP_TXT, OP_NERF, OP_PLY_READ, OP_PLY_WRITE, OP_CKPT_READ, OP_CKPT_WRITE,
                        OP_CAMS_READ, OP_CAMS_WRITE, OP_PNG, OP_JPEG, OP_SAVE_PNG, OP_DOWNSAMPLE, OP_COUNT } fault_op;

/* Runs one operation; on success frees what it made (with the hooks already reset). */
static splat_status run_op(fault_op op, splat_error *err)
{
    splat_status st = SPLAT_OK;
    splat_dataset ds;
    splat_scene s;
    splat_section *secs;
    splat_camera *cams;
    char **names;
    uint32_t n;
    splat_image img, small;
    static const splat_section out_secs[2] = {{"a", "0123456789", 10}, {"b", "xyz", 3}};
    static const splat_camera out_cams[1] = {{.fx = 1, .fy = 1, .R = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .width = 2, .height = 2}};
    static const char *const out_names[1] = {"n"};
    uint8_t px[4 * 6 * 4] = {0};
    splat_image in = {6, 4, px};
    splat_allocator hooks = t_failing_allocator;
    splat_set_allocator(&hooks);
    switch (op) {
    case OP_COLMAP_BIN: st = splat__dataset_load(&(splat_dataset_desc){.path = t_path("colmap0")}, &ds, err); break;
    case OP_COLMAP_TXT: st = splat__dataset_load(&(splat_dataset_desc){.path = t_path("colmap1")}, &ds, err); break;
    case OP_NERF: st = splat__dataset_load(&(splat_dataset_desc){.path = t_path("nerf")}, &ds, err); break;
    case OP_PLY_READ: st = splat__ply_read(t_path(rnd(2) ? "s.ply" : "a.ply"), &s, NULL, err); break;
    case OP_PLY_WRITE:
        st = splat__ply_read(t_path("s.ply"), &s, NULL, err);
        splat_set_allocator(&hooks);
        if (st == SPLAT_OK) {
            st = splat__ply_write(t_path("out/s.ply"), &s, err);
            splat_set_allocator(NULL);
            splat_scene_free(&s);
        }
        break;
    case OP_CKPT_READ: st = splat__ckpt_read(t_path("f.ckpt"), &secs, &n, err); break;
    case OP_CKPT_WRITE: st = splat__ckpt_write(t_path("out/f.ckpt"), out_secs, 2, err); break;
    case OP_CAMS_READ: st = splat__cameras_read(t_path("cams.json"), &cams, &names, &n, err); break;
    case OP_CAMS_WRITE: st = splat__cameras_write(t_path("out/c.json"), out_cams, out_names, 1, err); break;
    case OP_PNG: st = splat__image_load(t_path("p.png"), &img, err); break;
    case OP_JPEG: st = splat__image_load(t_path("j.jpg"), &img, err); break;
    case OP_SAVE_PNG: st = splat__image_save_png(t_path("out/i.png"), &in, 3, err); break;
    case OP_DOWNSAMPLE: st = splat__image_downsample(&in, 2, &small, err); break;
    default: break;
    }
    splat_set_allocator(NULL);
    if (st != SPLAT_OK) return st;
    switch (op) {
    case OP_COLMAP_BIN: case OP_COLMAP_TXT: case OP_NERF: splat__dataset_free(&ds); break;
    case OP_PLY_READ: splat_scene_free(&s); break;
    case OP_CKPT_READ: splat__ckpt_free(secs, n); break;
    case OP_CAMS_READ:
        for (uint32_t i = 0; i < n; i++) splat__free(names[i]);
        splat__free(names);
        splat__free(cams);
        break;
    case OP_PNG: case OP_JPEG: splat__image_free(&img); break;
    case OP_DOWNSAMPLE: splat__image_free(&small); break;
    default: break;
    }
    return st;
}

SPLAT_TEST(io_alloc_faults)
{
    /* Each allocation of each operation fails in turn: every failure is reported as out of
     * memory, leaks nothing (the sanitizer build checks) and leaves no temporary file. */
    target t[32];
    int n = 0;
    make_fixtures(t, &n);
    for (int k = 0; k < n; k++) free(t[k].orig);
    t_mkdir(t_path("out"));
    for (int op = 0; op < OP_COUNT; op++) {
        int k = 0, entries = t_count_entries(t_path("out"));
        for (;; k++) {
            splat_error err = {0};
            t_fail_after = k;
            splat_status st = run_op((fault_op)op, &err);
            t_fail_after = -1;
            if (st == SPLAT_OK) break;
            T_CHECK(st == SPLAT_ERR_OUT_OF_HOST_MEMORY && t_has(err.msg, "out of host memory"),
                    "operation %d, allocation %d: %s: %s", op, k, splat_status_str(st), err.msg);
            T_CHECK(t_count_entries(t_path("out")) == entries, "operation %d left a temporary file", op);
            if (splat_test_failed() || k > 100000) return;
        }
        T_CHECK(k > 0 || op == OP_CKPT_WRITE, "operation %d made no allocation through the hooks", op);
    }
}
