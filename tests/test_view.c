/* The viewer's server and protocol, in process, through a WebSocket client written by hand
 * (ws_client.h): malformed, oversized and unknown messages, clients that vanish mid-frame, eight
 * clients at once, the rate cap, the files it serves, a port in use; and the snapshot a training
 * run hands it. Frames are checked against splat_render of the same camera. */
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/tcp.h> /* the kernel's struct tcp_info, as t_tcp_sockets fills it */
#include <unistd.h>

#include "view/view.h"
#include "view_support.h"
#include "ws_client.h"

/* ------------------------------------------------------------------ fixture */

/* The viewer's log lines, collected. */
typedef struct sink {
    pthread_mutex_t m;
    char text[1 << 16];
    size_t len;
    uint32_t lines;
} sink;

static void sink_line(void *user, const char *line)
{
    sink *s = user;
    pthread_mutex_lock(&s->m);
    int n = snprintf(s->text + s->len, sizeof s->text - s->len, "%s\n", line);
    if (n > 0 && (size_t)n < sizeof s->text - s->len) s->len += (size_t)n;
    s->lines++;
    pthread_mutex_unlock(&s->m);
}

static uint32_t sink_lines(sink *s)
{
    pthread_mutex_lock(&s->m);
    uint32_t n = s->lines;
    pthread_mutex_unlock(&s->m);
    return n;
}

typedef struct vfix {
    splat_ctx *ctx;
    splat_viewer *v;
    splat_scene scene;
    splat_camera cams[3];
    sink log;
} vfix;

static bool vfix_init(vfix *f, uint32_t max_fps, bool with_scene)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->log.m, NULL);
    splat_error err = {0};
    if (splat_ctx_init(&f->ctx, NULL, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "context:", "%s", err.msg);
        return false;
    }
    t_view_scene(&f->scene, 400, f->cams, 3, 64, 48);
    splat_viewer_desc vd = {.port = SPLAT_VIEWER_PORT_ANY, .max_fps = max_fps, .log = sink_line, .log_user = &f->log};
    splat_status st = splat_viewer_init(&f->v, f->ctx, &vd, &err);
    if (st == SPLAT_OK && with_scene) st = splat_viewer_set_scene(f->v, &f->scene, NULL, &err);
    if (st != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "viewer:", "%s", err.msg);
        return false;
    }
    return true;
}

static void vfix_free(vfix *f)
{
    splat_viewer_free(f->v);
    if (f->ctx) {
        T_CHECK(f->ctx->gpu->validation_messages == 0, "%u Vulkan validation messages", f->ctx->gpu->validation_messages);
        splat_ctx_free(f->ctx);
    }
    splat_scene_free(&f->scene);
    pthread_mutex_destroy(&f->log.m);
}

static bool connect_ws(t_ws *w, vfix *f)
{
    char why[600];
    if (t_ws_connect(w, splat_viewer_port(f->v), "/ws", NULL, why, sizeof why)) return true;
    splat_test_fail(__FILE__, __LINE__, "connect:", "%s", why);
    return false;
}

/* A frame request for `c` at its own size. */
static bool ask(t_ws *w, uint32_t id, const splat_camera *c, int quality)
{
    char m[1024];
    int n = snprintf(m, sizeof m, "{\"t\":\"frame\",\"id\":%u,\"w\":%u,\"h\":%u,\"q\":%d,\"fx\":%.9g,\"fy\":%.9g,\"cx\":%.9g,"
                     "\"cy\":%.9g,\"R\":[", id, c->width, c->height, quality, c->fx, c->fy, c->cx, c->cy);
    for (int k = 0; k < 9; k++) n += snprintf(m + n, sizeof m - n, "%s%.9g", k ? "," : "", c->R[k]);
    n += snprintf(m + n, sizeof m - n, "],\"T\":[%.9g,%.9g,%.9g]}", c->t[0], c->t[1], c->t[2]);
    return t_ws_send_text(w, m);
}

/* A frame as received: its header, its size on the wire, and its strips decoded into one image. */
typedef struct got_frame {
    uint32_t id, step, w, h, us, count, strips;
    uint8_t *rgb;            /* [h, w, 3] */
    size_t size;
} got_frame;

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* Receives until the frame answering `id` (text messages and older frames pass by), and decodes
 * it. False on a timeout, a closed connection, an error message for it, or a frame whose strips do
 * not tile it (t_frame_decode), or that is cut into other strips than the viewer's layout says. */
static bool frame_for(t_ws *w, uint32_t id, double timeout_s, got_frame *g)
{
    double end = splat__now() + timeout_s;
    memset(g, 0, sizeof *g);
    while (splat__now() < end) {
        const uint8_t *d;
        size_t n;
        int op;
        int r = t_ws_recv(w, end - splat__now(), &d, &n, &op);
        if (r <= 0) return false;
        if (op == T_WS_TEXT && strstr((const char *)d, "\"t\":\"error\"")) return false;
        if (op != T_WS_BINARY || n < SPLAT_VIEW_FRAME_HEADER || le32(d) != id) continue;
        g->id = le32(d), g->step = le32(d + 4), g->us = le32(d + 16), g->count = le32(d + 20);
        g->size = n;
        char why[300];
        if (!t_frame_decode(d, n, SPLAT_VIEW_FRAME_HEADER, &g->rgb, &g->w, &g->h, &g->strips, why, sizeof why)) {
            splat_test_fail(__FILE__, __LINE__, "frame:", "%u: %s", id, why);
            return false;
        }
        uint32_t want = SPLAT_MIN((uint32_t)SPLAT_VIEW_STRIPS, (g->h + 15) / 16);
        T_CHECK(g->strips == want, "a frame of %u rows in %u strips, not %u", g->h, g->strips, want);
        return true;
    }
    return false;
}

/* PSNR of a received frame against splat_render of `cam` with `rd`. */
static double frame_psnr(splat_ctx *ctx, const splat_scene *scene, const splat_camera *cam, const splat_render_desc *rd,
                         const got_frame *g)
{
    if (!g->rgb || g->w != cam->width || g->h != cam->height) return -1;
    uint32_t w = g->w, h = g->h;
    float *img = NULL;
    splat_error err = {0};
    double psnr = -2;
    if (splat_render(ctx, scene, cam, 1, rd, &img, &err) == SPLAT_OK) {
        uint8_t *want = malloc((size_t)w * h * 3);
        for (size_t p = 0; want && p < (size_t)w * h * 3; p++) want[p] = (uint8_t)lrintf(255.0f * fminf(fmaxf(img[p], 0.0f), 1.0f));
        psnr = want ? t_psnr8(g->rgb, 3, want, 3, w, h) : -3;
        free(want);
    }
    splat_free(img);
    return psnr;
}

/* ------------------------------------------------------------------ the parser alone */

/* Every kind of malformed message is refused with a reason, a valid one is read exactly, and
 * random mutations of valid ones never crash the parser nor pass a value out of range. */
SPLAT_TEST(view_protocol_parse)
{
    splat_view_msg m;
    char why[200];
    const char *valid = "{\"t\":\"frame\",\"id\":4000000000,\"w\":640,\"h\":480,\"q\":85,\"fx\":500.5,\"fy\":501,\"cx\":320,"
                        "\"cy\":-240.25,\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0.5,-1,3]}";
    T_REQUIRE(splat__view_parse(valid, strlen(valid), 2048, &m, why, sizeof why), "%s", why);
    T_CHECK(m.kind == SPLAT_VIEW_MSG_FRAME && m.frame.id == 4000000000u && m.frame.cam.width == 640 &&
            m.frame.cam.height == 480 && m.frame.quality == 85 && m.frame.cam.fx == 500.5f && m.frame.cam.fy == 501.0f &&
            m.frame.cam.cx == 320.0f && m.frame.cam.cy == -240.25f && m.frame.cam.R[4] == 1.0f && m.frame.cam.t[1] == -1.0f &&
            m.frame.cam.t[2] == 3.0f, "fields read wrong");
    const char *kinds[] = {"{\"t\":\"pause\"}", "{\"t\":\"resume\"}", "{\"t\":\"save\"}"};
    for (int k = 0; k < 3; k++)
        T_CHECK(splat__view_parse(kinds[k], strlen(kinds[k]), 2048, &m, why, sizeof why) && (int)m.kind == SPLAT_VIEW_MSG_PAUSE + k,
                "%s", kinds[k]);
    const char *frame_tail = "\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0,0,3]}";
    const char *bad[] = {
        "", "hello", "[1,2]", "{}", "\"frame\"", "{\"t\":5}", "{\"t\":\"dance\"}", "{\"t\":\"frame\"", "{\"t\":null}",
        "{\"t\":\"frame\",\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",             /* no id */
        "{\"t\":\"frame\",\"id\":-1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1.5,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":4294967296,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":0,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":2049,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":0,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":101,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":0,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":-2,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1e-50,\"fy\":1,\"cx\":0,\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":\"0\",\"cy\":0,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":1e999,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":1e31,%s",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":[1,0,0,0,1,0,0,0],\"T\":[0,0,3]}",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":[1,0,0,0,1,0,0,0,\"1\"],\"T\":[0,0,3]}",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0,0]}",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":{},\"T\":[0,0,3]}",
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(bad); k++) {
        char msg[600];
        snprintf(msg, sizeof msg, bad[k], frame_tail);
        why[0] = '\0';
        bool ok = splat__view_parse(msg, strlen(msg), 2048, &m, why, sizeof why);
        T_CHECK(!ok && why[0] && m.kind == 0, "accepted, or refused without a reason: %s", msg);
    }
    /* the length is the message's, not the string's: a valid message cut short is refused */
    T_CHECK(!splat__view_parse(valid, strlen(valid) - 1, 2048, &m, why, sizeof why), "a message cut by one byte passed");
    /* unknown types are named in the log line, printable only */
    const char *weird = "{\"t\":\"\\u0007\\n<script>\"}";
    T_CHECK(!splat__view_parse(weird, strlen(weird), 2048, &m, why, sizeof why) && !strchr(why, '\n') && !strchr(why, 7),
            "%s", why);
    /* random mutations */
    splat_rng *rng = splat_test_rng();
    char buf[600];
    uint32_t accepted = 0;
    for (int it = 0; it < 4000; it++) {
        size_t n = strlen(valid);
        memcpy(buf, valid, n);
        int edits = 1 + (int)(splat__rng_u64(rng) % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = splat__rng_u64(rng) % n;
            switch (splat__rng_u64(rng) % 4) {
            case 0: buf[at] = (char)(splat__rng_u64(rng) & 0xff); break;
            case 1: n = at; break;
            case 2:
                if (n < sizeof buf - 1) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = "0123456789-.e,:[]{}\""[splat__rng_u64(rng) % 20];
                    n++;
                }
                break;
            case 3: memmove(buf + at, buf + at + 1, n - at - 1), n--; break;
            }
            if (n == 0) break;
        }
        if (!splat__view_parse(buf, n, 2048, &m, why, sizeof why)) {
            T_CHECK(why[0] != '\0', "refused without a reason");
            continue;
        }
        accepted++;
        if (m.kind != SPLAT_VIEW_MSG_FRAME) continue;
        const splat_camera *c = &m.frame.cam;
        bool in_range = c->width >= 1 && c->width <= 2048 && c->height >= 1 && c->height <= 2048 && m.frame.quality >= 1 &&
                        m.frame.quality <= 100 && c->fx > 0 && c->fy > 0 && isfinite(c->cx) && isfinite(c->cy);
        for (int k = 0; k < 9; k++) in_range = in_range && isfinite(c->R[k]);
        for (int k = 0; k < 3; k++) in_range = in_range && isfinite(c->t[k]);
        T_CHECK(in_range, "a mutated message passed with a value out of range: %.*s", (int)n, buf);
    }
    T_CHECK(accepted > 0 && accepted < 4000, "%u of 4000 mutations accepted", accepted);
}

/* ------------------------------------------------------------------ frames in strips */

/* A frame's pixels [h, w] RGBX: smooth colour fields, edges and noise, like a render. */
static uint8_t *strip_image(uint32_t w, uint32_t h)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    double f[3], p[3], edge = t_uniform(0, w);
    for (int c = 0; c < 3; c++) f[c] = t_uniform(0.01, 0.3), p[c] = t_uniform(0, 6.3);
    for (uint32_t y = 0; px && y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < 4; c++) {
                double v = 128 + 90 * sin(f[c % 3] * x + 0.7 * f[(c + 1) % 3] * y + p[c % 3]) + (x > edge + 0.3 * y ? 30 : -30) +
                           t_uniform(-12, 12);
                px[((size_t)y * w + x) * 4 + c] = (uint8_t)fmin(fmax(v, 0), 255);
            }
    return px;
}

/* The loss chart's history over 5,000 reports, far past its 1,024 points: thinned, never over
 * its size, each kept point its own report's (loss = step, PSNR = -step), steps increasing, and
 * nothing written past the struct. */
SPLAT_TEST(view_history_thinned)
{
    struct {
        splat_view_history h;
        uint64_t guard[4];
    } *box = calloc(1, sizeof *box);
    for (int k = 0; k < 4; k++) box->guard[k] = 0x5a5a5a5a5a5a5a5aull;
    const uint32_t reports = 4000 + (uint32_t)t_uniform(0, 2000);
    uint32_t over = 0;
    for (uint32_t k = 1; k <= reports; k++) {
        splat_train_progress p = {.step = k, .steps = reports, .loss = (float)k, .psnr = -(float)k};
        splat__view_history_add(&box->h, &p);
        over += box->h.n > SPLAT_VIEW_HISTORY;
    }
    const splat_view_history *h = &box->h;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < h->n && i < SPLAT_VIEW_HISTORY; i++)
        bad += h->loss[i] != h->step[i] || h->psnr[i] != -h->step[i] || (i && h->step[i] <= h->step[i - 1]) ||
               h->step[i] < 1 || h->step[i] > reports;
    bool guard = true;
    for (int k = 0; k < 4; k++) guard &= box->guard[k] == 0x5a5a5a5a5a5a5a5aull;
    printf("  %u reports: %u points kept, one every %u reports\n", reports, h->n, h->stride);
    T_CHECK(over == 0 && h->n > SPLAT_VIEW_HISTORY / 2 && h->n <= SPLAT_VIEW_HISTORY && bad == 0 && guard,
            "%u reports over the size, %u points, %u wrong, guard %s", over, h->n, bad, guard ? "whole" : "overwritten");
    free(box);
}

/* The viewer's frame of reference from cameras alone (a training run's): the mean of the camera
 * centres and the farthest of them from it, the centres placed here and the poses built from them
 * (t = -R c), against splat__view_frame_of_ref's -R^T t. */
SPLAT_TEST(view_frame_of_ref_cameras)
{
    enum { N = 7 };
    splat_camera cams[N];
    double c[N][3], mean[3] = {0, 0, 0}, far = 0;
    for (int k = 0; k < N; k++) {
        /* a random rotation (orthonormalised rows), a centre anywhere */
        double R[9];
        for (int i = 0; i < 9; i++) R[i] = t_uniform(-1, 1);
        for (int r = 0; r < 3; r++) {
            for (int q = 0; q < r; q++) {
                double d = R[3 * r] * R[3 * q] + R[3 * r + 1] * R[3 * q + 1] + R[3 * r + 2] * R[3 * q + 2];
                for (int i = 0; i < 3; i++) R[3 * r + i] -= d * R[3 * q + i];
            }
            double l = sqrt(R[3 * r] * R[3 * r] + R[3 * r + 1] * R[3 * r + 1] + R[3 * r + 2] * R[3 * r + 2]);
            for (int i = 0; i < 3; i++) R[3 * r + i] /= l;
        }
        cams[k] = (splat_camera){.width = 64, .height = 48, .fx = 50, .fy = 50, .cx = 32, .cy = 24};
        for (int i = 0; i < 3; i++) c[k][i] = t_uniform(-5, 5), mean[i] += c[k][i] / N;
        for (int i = 0; i < 9; i++) cams[k].R[i] = (float)R[i];
        for (int r = 0; r < 3; r++) cams[k].t[r] = (float)-(R[3 * r] * c[k][0] + R[3 * r + 1] * c[k][1] + R[3 * r + 2] * c[k][2]);
    }
    for (int k = 0; k < N; k++)
        far = fmax(far, sqrt(pow(c[k][0] - mean[0], 2) + pow(c[k][1] - mean[1], 2) + pow(c[k][2] - mean[2], 2)));
    splat_view_frame_of_ref ref;
    splat__view_frame_of_ref(NULL, 0, cams, N, &ref);
    double err = fabs(ref.radius - far);
    for (int i = 0; i < 3; i++) err = fmax(err, fabs(ref.center[i] - mean[i]));
    T_CHECK(err < 1e-4, "centre (%g, %g, %g) radius %g; the cameras' (%g, %g, %g) and %g", ref.center[0], ref.center[1],
            ref.center[2], ref.radius, mean[0], mean[1], mean[2], far);
}

/* Frames of random sizes (1 row to 3 strips of a 720p frame, heights at and about the 16-row
 * bands) cut into 1 to 5 strips at most, through the encoder's pool and splat__view_frame_pack:
 * the message keeps the header words, its strips tile the frame exactly once, in order (the
 * tests' own reader, t_frame_decode), as many as the layout says; and the strips decode to the
 * very pixels of one JPEG of the whole frame from quality 90 on (4:4:4: the strips code the same
 * 8x8 blocks), within 1 dB of its PSNR below (4:2:0: the chroma upsampling differs at the seams). */
SPLAT_TEST(view_frame_strips)
{
    splat_view_encoder e;
    splat_error err = {0};
    T_OK(splat__view_encoder_init(&e, &err), &err);
    splat_bytes one = {0};
    const uint32_t fixed[][2] = {{1, 1}, {5, 15}, {33, 16}, {20, 17}, {64, 31}, {50, 32}, {41, 33}, {128, 64}, {17, 65}, {1280, 720}};
    for (int it = 0; it < 60; it++) {
        uint32_t w, h;
        if (it < (int)SPLAT_COUNTOF(fixed)) w = fixed[it][0], h = fixed[it][1];
        else w = 1 + (uint32_t)t_uniform(0, 300), h = 1 + (uint32_t)t_uniform(0, it % 4 ? 200 : 600);
        int q = it % 3 ? 90 + (int)t_uniform(0, 11) : 30 + (int)t_uniform(0, 60);
        uint32_t max = 1 + (uint32_t)t_uniform(0, 5);
        uint8_t *px = strip_image(w, h);
        T_REQUIRE(px);
        double wall = 0;
        T_OK(splat__view_encode(&e, px, w, h, q, max, &wall, &err), &err);
        uint32_t head[SPLAT_VIEW_HEAD_WORDS];
        for (int k = 0; k < SPLAT_VIEW_HEAD_WORDS; k++) head[k] = (uint32_t)splat__rng_u64(splat_test_rng());
        head[SPLAT_VIEW_HEAD_WIDTH] = w, head[SPLAT_VIEW_HEAD_HEIGHT] = h;
        uint8_t *msg = NULL;
        size_t len = 0;
        T_REQUIRE(splat__view_frame_pack(head, e.strips, e.n, &msg, &len));
        bool same = true;
        for (int k = 0; k < SPLAT_VIEW_HEAD_WORDS; k++) same = same && le32(msg + 4 * k) == head[k];
        T_CHECK(same, "%ux%u: the header words did not come through", w, h);
        /* the server's stamp: the time since "arrived", modulo 2^32 like the clock word, and nothing else moved */
        double now = t_uniform(0, 1e7);
        uint32_t since = (uint32_t)t_uniform(0, 4e9);
        uint32_t arrived = (uint32_t)(uint64_t)(now * 1e6) - since;
        msg[4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK] = (uint8_t)arrived, msg[4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK + 1] = (uint8_t)(arrived >> 8);
        msg[4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK + 2] = (uint8_t)(arrived >> 16), msg[4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK + 3] = (uint8_t)(arrived >> 24);
        splat__view_frame_stamp_written(msg, len, now);
        head[SPLAT_VIEW_HEAD_ARRIVED_CLOCK] = arrived, head[SPLAT_VIEW_HEAD_WRITTEN_US] = since;
        same = true;
        for (int k = 0; k < SPLAT_VIEW_HEAD_WORDS; k++) same = same && le32(msg + 4 * k) == head[k];
        T_CHECK(same, "%ux%u: written %u us after arrival (now %.6f s), stamped %u", w, h, since, now,
                le32(msg + 4 * SPLAT_VIEW_HEAD_WRITTEN_US));
        uint8_t *got = NULL, *want = NULL;
        uint32_t gw, gh, strips, ww, wh;
        char why[300];
        bool ok = t_frame_decode(msg, len, SPLAT_VIEW_FRAME_HEADER, &got, &gw, &gh, &strips, why, sizeof why);
        T_CHECK(ok, "%ux%u in at most %u strips: %s", w, h, max, why);
        uint32_t n_want = SPLAT_MIN(SPLAT_MIN(max, (uint32_t)SPLAT_VIEW_STRIPS), (h + 15) / 16);
        T_CHECK(!ok || strips == n_want, "%ux%u in at most %u strips: %u strips, not %u", w, h, max, strips, n_want);
        T_OK(splat__jpeg_encode(px, 4, w, h, q, &one, &err), &err);
        T_REQUIRE(t_jpeg_decode(one.data, one.size, &want, &ww, &wh) && ww == w && wh == h);
        if (ok && q >= 90) {
            T_CHECK(memcmp(got, want, (size_t)w * h * 3) == 0, "%ux%u at quality %d in %u strips: not the pixels of one JPEG",
                    w, h, q, strips);
        } else if (ok) {
            uint8_t *rgb = malloc((size_t)w * h * 3);
            for (size_t p = 0; p < (size_t)w * h; p++) memcpy(rgb + 3 * p, px + 4 * p, 3);
            double ps = t_psnr8(got, 3, rgb, 3, w, h), p1 = t_psnr8(want, 3, rgb, 3, w, h);
            T_CHECK(ps > p1 - 1, "%ux%u at quality %d in %u strips: %.2f dB, one JPEG %.2f dB", w, h, q, strips, ps, p1);
            free(rgb);
        }
        free(got);
        free(want);
        splat__free(msg);
        free(px);
    }
    splat__free(one.data);
    splat__view_encoder_free(&e);
}

/* ------------------------------------------------------------------ over the wire */

/* Waits until the log has `n` lines. */
static bool log_reaches(sink *s, uint32_t n, double timeout_s)
{
    double end = splat__now() + timeout_s;
    while (sink_lines(s) < n && splat__now() < end) usleep(10000);
    return sink_lines(s) >= n;
}

/* Each malformed, oversized or unknown message is ignored with one log line, and the connection
 * goes on: the next valid request is answered. After 20 problems a client's are no longer
 * logged (one line says so). Frames that break the WebSocket protocol itself close only that
 * connection; the other client is served throughout. */
SPLAT_TEST(view_ws_malformed)
{
    vfix f;
    if (!vfix_init(&f, 60, true)) goto done;
    t_ws a = {.fd = -1}, b = {.fd = -1};
    if (!connect_ws(&a, &f)) goto done;
    char *big = malloc(1 << 20);
    memset(big, ' ', 1 << 20);
    big[0] = '{';
    memcpy(big + (1 << 20) - 12, "\"t\":\"save\"}", 11);
    big[(1 << 20) - 1] = '}';
    const char *texts[] = {
        "not json", "[1,2,3]", "{}", "{\"t\":42}", "{\"t\":\"fly-me-to-the-moon\"}", "",
        "{\"t\":\"frame\",\"id\":1,\"w\":0,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0,0,3]}",
        "{\"t\":\"frame\",\"id\":1,\"w\":100000,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":0,\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0,0,3]}",
        "{\"t\":\"frame\",\"id\":1,\"w\":8,\"h\":8,\"q\":9,\"fx\":1,\"fy\":1,\"cx\":0,\"cy\":1e999,\"R\":[1,0,0,0,1,0,0,0,1],\"T\":[0,0,3]}",
        "{\"t\":\"frame\",\"id\":1}", "{\"t\":\"pause\"}", "{\"t\":\"save\"}", "\xff\xfe{\"t\":\"frame\"}",
    };
    uint32_t id = 100, bad = 0, lines = sink_lines(&f.log);
    got_frame g = {0};
    for (size_t k = 0; k < SPLAT_COUNTOF(texts) + 4; k++) {
        bool sent;
        if (k < SPLAT_COUNTOF(texts)) sent = t_ws_send_text(&a, texts[k]);
        else if (k == SPLAT_COUNTOF(texts)) sent = t_ws_send(&a, T_WS_BINARY, "\x01\x02\x03", 3, true);
        else if (k == SPLAT_COUNTOF(texts) + 1) sent = t_ws_send(&a, T_WS_TEXT, big, 1 << 20, true); /* one 1 MiB frame */
        else if (k == SPLAT_COUNTOF(texts) + 2) {
            /* 96 KiB in 24 fragments */
            sent = true;
            for (int p = 0; p < 24 && sent; p++) sent = t_ws_send(&a, p ? 0 : T_WS_TEXT, big + 4096 * p, 4096, p == 23);
        } else sent = t_ws_send(&a, T_WS_TEXT, "{\"t\":\"pa", 8, false) && t_ws_send(&a, 0, "use\"}", 5, true); /* fragmented, fine */
        T_REQUIRE(sent, "message %zu not sent", k);
        bad++; /* the last, a pause, is refused too: nothing is training */
        /* the same connection is still served */
        T_REQUIRE(ask(&a, ++id, &f.cams[k % 3], 80) && frame_for(&a, id, 60, &g), "no frame after message %zu", k);
        free(g.rgb);
        uint32_t want = lines + (bad <= 20 ? bad : 21);
        T_CHECK(log_reaches(&f.log, want, 10) && sink_lines(&f.log) == want, "after message %zu: %u log lines, %u wanted:\n%s", k,
                sink_lines(&f.log), want, f.log.text);
    }
    T_CHECK(strstr(f.log.text, "ignored a message that is not JSON") && strstr(f.log.text, "unknown type") &&
            strstr(f.log.text, "more than 4096 bytes") && strstr(f.log.text, "binary message"),
            "the log does not say what was ignored:\n%s", f.log.text);
    /* more problems: one line says they are no longer logged, then none */
    for (int k = 0; k < 10; k++) T_CHECK(t_ws_send_text(&a, "junk"));
    T_REQUIRE(ask(&a, ++id, &f.cams[0], 80) && frame_for(&a, id, 60, &g));
    free(g.rgb);
    T_CHECK(sink_lines(&f.log) == lines + 21 && strstr(f.log.text, "no longer logged"), "%s", f.log.text);

    /* protocol violations close that connection only */
    const uint8_t violations[][8] = {
        {0x83, 0x80, 1, 2, 3, 4},          /* reserved opcode 3 */
        {0x80, 0x80, 1, 2, 3, 4},          /* a continuation with nothing to continue */
        {0x89, 0xfe, 0, 200, 1, 2, 3, 4},  /* a ping of 200 bytes (control frames carry at most 125) */
        {0xf1, 0x80, 1, 2, 3, 4},          /* reserved bits set */
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(violations); k++) {
        if (!connect_ws(&b, &f)) break;
        T_CHECK(t_ws_send_raw(&b, violations[k], 8));
        const uint8_t *d;
        size_t n;
        int op, r;
        double end = splat__now() + 20;
        do r = t_ws_recv(&b, end - splat__now(), &d, &n, &op);
        while (r == 1 && splat__now() < end);
        T_CHECK(r == -1, "violation %zu: the connection stayed open", k);
        t_ws_close(&b);
        T_REQUIRE(ask(&a, ++id, &f.cams[1], 80) && frame_for(&a, id, 60, &g), "the other client lost its frames");
        free(g.rgb);
    }
    free(big);
done:
    t_ws_close(&a);
    vfix_free(&f);
}

/* Clients that vanish: right after asking (the frame is being rendered), in the middle of
 * receiving their frame, or at a random moment. The server drops them and their frames, and the
 * client that stays is served throughout; in the end it is the only session. */
SPLAT_TEST(view_ws_vanish)
{
    vfix f;
    if (!vfix_init(&f, 60, true)) goto done;
    t_ws keep = {.fd = -1};
    if (!connect_ws(&keep, &f)) goto done;
    splat_camera big = f.cams[0];
    big.width = 640, big.height = 480, big.fx *= 10, big.fy *= 10, big.cx *= 10, big.cy *= 10;
    uint32_t id = 1;
    for (int k = 0; k < 12; k++) {
        t_ws w;
        if (!connect_ws(&w, &f)) break;
        T_CHECK(ask(&w, 7, &big, 100));
        switch (k % 3) {
        case 0: break; /* gone at once */
        case 1: {
            /* gone after the first bytes of the frame (past the hello and the statistics) */
            const uint8_t *d;
            size_t n;
            int op;
            if (t_ws_recv(&w, 30, &d, &n, &op) == 1) t_ws_read_some(&w, 1 + splat__rng_u64(splat_test_rng()) % 2000, 30);
            break;
        }
        case 2: usleep((useconds_t)(splat__rng_u64(splat_test_rng()) % 300000)); break;
        }
        t_ws_close(&w);
        got_frame g;
        T_REQUIRE(ask(&keep, ++id, &f.cams[k % 3], 90) && frame_for(&keep, id, 60, &g), "vanish %d: the other client got no frame", k);
        free(g.rgb);
    }
    /* the server notices each close */
    double end = splat__now() + 20;
    uint32_t sessions = 99;
    while (splat__now() < end) {
        pthread_mutex_lock(&f.v->lock);
        sessions = f.v->n_sessions;
        pthread_mutex_unlock(&f.v->lock);
        if (sessions == 1) break;
        usleep(20000);
    }
    T_CHECK(sessions == 1, "%u sessions left, 1 wanted", sessions);
done:
    t_ws_close(&keep);
    vfix_free(&f);
}

/* Eight clients at once, each asking for its own camera: each gets exactly its frame, which is
 * splat_render of that camera less JPEG's loss (over 40 dB at quality 100); at quality 50 the
 * JPEG is smaller and still close. Then as many clients as the viewer takes, and one more, which
 * it refuses. */
SPLAT_TEST(view_ws_clients8)
{
    vfix f;
    if (!vfix_init(&f, 60, true)) goto done;
    enum { N = 8 };
    t_ws w[N];
    splat_camera cam[N];
    for (int k = 0; k < N; k++) w[k].fd = -1;
    for (int k = 0; k < N; k++) {
        if (!connect_ws(&w[k], &f)) goto out;
        /* a camera of its own: one of the fixture's, moved and resized at random */
        cam[k] = f.cams[k % 3];
        uint32_t s = 1 + (uint32_t)t_uniform(0, 3);
        cam[k].width = 40 * s + (uint32_t)t_uniform(0, 17), cam[k].height = 30 * s + (uint32_t)t_uniform(0, 13);
        cam[k].fx = cam[k].fy = (float)(0.9 * cam[k].width);
        cam[k].cx = 0.5f * cam[k].width, cam[k].cy = 0.5f * cam[k].height;
        cam[k].t[0] += (float)t_uniform(-0.5, 0.5), cam[k].t[1] += (float)t_uniform(-0.5, 0.5);
    }
    for (int round = 0; round < 2; round++) {
        int q = round ? 50 : 100;
        size_t size[N];
        for (int k = 0; k < N; k++) T_CHECK(ask(&w[k], 1000u * (k + 1) + round, &cam[k], q));
        for (int k = 0; k < N; k++) {
            got_frame g;
            bool ok = frame_for(&w[k], 1000u * (k + 1) + round, 120, &g);
            T_CHECK(ok, "client %d got no frame", k);
            if (!ok) continue;
            size[k] = g.size;
            double psnr = frame_psnr(f.ctx, &f.scene, &cam[k], NULL, &g);
            /* quality 50 on frames 40 to 57 pixels wide: as low as 24.5 dB (seed 1778626108901126,
             * about one seed in 30 below 25, which failed CI) */
            T_CHECK(psnr > (round ? 20 : 40), "client %d, quality %d: %.2f dB from splat_render of its camera", k, q, psnr);
            free(g.rgb);
        }
        static size_t size100[N];
        for (int k = 0; k < N && round == 1; k++) T_CHECK(size[k] < size100[k], "client %d: quality 50 is not smaller", k);
        if (round == 0) memcpy(size100, size, sizeof size);
    }
    /* up to SPLAT_VIEW_MAX_CLIENTS at once; one more is refused: closed without a hello (or not
     * let in at all) */
    t_ws more[SPLAT_VIEW_MAX_CLIENTS + 1 - N];
    int opened = 0;
    for (int k = 0; k < SPLAT_VIEW_MAX_CLIENTS - N && connect_ws(&more[k], &f); k++) opened++;
    T_CHECK(opened == SPLAT_VIEW_MAX_CLIENTS - N, "%d clients connected", N + opened);
    char why[600];
    t_ws *last = &more[opened];
    if (opened == SPLAT_VIEW_MAX_CLIENTS - N && t_ws_connect(last, splat_viewer_port(f.v), "/ws", NULL, why, sizeof why)) {
        const uint8_t *d;
        size_t n;
        int op, r = t_ws_recv(last, 5, &d, &n, &op);
        T_CHECK(r == -1 || (r == 1 && op == T_WS_CLOSE), "client %d was let in: %s", SPLAT_VIEW_MAX_CLIENTS + 1,
                r == 1 ? "a message came" : "nothing came in 5 s");
        t_ws_close(last);
    }
    for (int k = 0; k < opened; k++) t_ws_close(&more[k]);
out:
    for (int k = 0; k < N; k++) t_ws_close(&w[k]);
done:
    vfix_free(&f);
}

/* Frames of shapes the viewer's buffers must grow for one side at a time: wide, then tall and
 * narrower, then both; each the render of its camera (the buffers are reallocated only to grow,
 * and a frame taller but no wider than the ones before still needs them to). */
SPLAT_TEST(view_ws_frame_shapes)
{
    vfix f;
    if (!vfix_init(&f, 60, true)) goto done;
    t_ws w = {.fd = -1};
    if (!connect_ws(&w, &f)) goto out;
    const uint32_t sides[3][2] = {{96, 24}, {24 + (uint32_t)t_uniform(0, 40), 112}, {112, 112}};
    for (uint32_t k = 0; k < 3; k++) {
        splat_camera cam = f.cams[k % 3];
        cam.width = sides[k][0], cam.height = sides[k][1];
        cam.fx = cam.fy = (float)(0.9 * cam.width);
        cam.cx = 0.5f * cam.width, cam.cy = 0.5f * cam.height;
        T_CHECK(ask(&w, 500 + k, &cam, 100));
        got_frame g;
        bool ok = frame_for(&w, 500 + k, 60, &g);
        T_CHECK(ok && g.w == cam.width && g.h == cam.height, "no %ux%u frame", cam.width, cam.height);
        if (!ok) continue;
        double psnr = frame_psnr(f.ctx, &f.scene, &cam, NULL, &g);
        T_CHECK(psnr > 40, "the %ux%u frame: %.2f dB from splat_render of its camera", cam.width, cam.height, psnr);
        free(g.rgb);
    }
out:
    t_ws_close(&w);
done:
    vfix_free(&f);
}

/* The server caps each client's frame rate: asked every 20 ms for 2.5 s with a cap of 4 per
 * second, a client gets about 10 frames, not 125. */
SPLAT_TEST(view_ws_rate_cap)
{
    vfix f;
    if (!vfix_init(&f, 4, true)) goto done;
    t_ws w = {.fd = -1};
    if (!connect_ws(&w, &f)) goto done;
    double t0 = splat__now();
    uint32_t id = 0, frames = 0;
    while (splat__now() - t0 < 2.5) {
        T_CHECK(ask(&w, ++id, &f.cams[0], 50));
        const uint8_t *d;
        size_t n;
        int op;
        while (t_ws_recv(&w, 0.02, &d, &n, &op) == 1) frames += op == T_WS_BINARY;
    }
    T_CHECK(frames >= 3 && frames <= 2.5 * 4 / 0.9 + 2, "%u frames in 2.5 s with a cap of 4 a second", frames);
done:
    t_ws_close(&w);
    vfix_free(&f);
}

/* A client's connection leaves the server through a congestion control that does not pace (Cubic
 * or Reno): under BBR, a host default, frames' tails waited 40-60 ms for the client's delayed
 * ACK (server.c, unpaced()). Read from the kernel's own view of the server's socket. */
SPLAT_TEST(view_ws_unpaced)
{
    vfix f;
    if (!vfix_init(&f, 30, false)) goto done;
    t_ws w = {.fd = -1};
    if (!connect_ws(&w, &f)) goto done;
    const uint8_t *d;
    size_t n;
    int op;
    T_CHECK(t_ws_recv(&w, 10, &d, &n, &op) == 1 && op == T_WS_TEXT, "no hello"); /* the session is open */
    struct tcp_info info[4];
    bool server[4];
    char cc[4][16];
    int k = t_tcp_sockets(splat_viewer_port(f.v), info, server, cc, 4), found = 0;
    char system_cc[32] = "?";
    FILE *sys = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r");
    if (sys && fgets(system_cc, sizeof system_cc, sys)) system_cc[strcspn(system_cc, "\n")] = '\0';
    if (sys) fclose(sys);
    for (int i = 0; i < k; i++) {
        if (!server[i]) continue;
        found++;
        T_CHECK(strcmp(cc[i], "cubic") == 0 || strcmp(cc[i], "reno") == 0,
                "the server's socket to a client uses '%s' (the system's default: %s)", cc[i], system_cc);
    }
    T_CHECK(found == 1, "%d server sockets on the viewer's port, not 1", found);
done:
    t_ws_close(&w);
    vfix_free(&f);
}

/* HTTP serves the embedded files and nothing else: no path reaches the disk, whatever it names;
 * other methods and foreign hosts are refused; a WebSocket from another site's page is refused. */
SPLAT_TEST(view_http_files)
{
    vfix f;
    if (!vfix_init(&f, 30, true)) goto done;
    uint32_t port = splat_viewer_port(f.v);
    char req[2048], *body;
    size_t n;
    for (const splat_view_file *e = splat__view_files; e->name; e++) {
        snprintf(req, sizeof req, "GET /%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", e->name, port);
        int code = t_http(port, req, &body, &n);
        T_CHECK(code == 200 && n == e->size && memcmp(body, e->data, n) == 0, "/%s: %d, %zu bytes", e->name, code, n);
        free(body);
    }
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: localhost:%u\r\n\r\n", port);
    T_CHECK(t_http(port, req, &body, &n) == 200 && strstr(body, "viewer.js"), "/ is not index.html");
    free(body);
    /* a file on the disk, in the working folder and by its absolute path */
    char cwd[512], secret[700];
    T_REQUIRE(getcwd(cwd, sizeof cwd));
    snprintf(secret, sizeof secret, "%s", splat_test_path("secret.txt"));
    FILE *s = fopen(secret, "wb");
    T_REQUIRE(s);
    fputs("the-secret-content", s);
    fclose(s);
    FILE *s2 = fopen("viewer-secret.txt", "wb");
    if (s2) fputs("the-secret-content", s2), fclose(s2);
    const char *paths[] = {"/viewer-secret.txt", "/../viewer-secret.txt", "/%2e%2e/viewer-secret.txt", "//viewer-secret.txt",
                           "/index.html/../viewer-secret.txt", "/./viewer-secret.txt", "/etc/passwd", "/../../../../etc/passwd",
                           "/index.htm", "/INDEX.HTML", "/viewer.js%00.txt", secret};
    for (size_t k = 0; k < SPLAT_COUNTOF(paths); k++) {
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", paths[k], port);
        int code = t_http(port, req, &body, &n);
        T_CHECK(code != 200 && (!body || !strstr(body, "the-secret-content")) && (!body || !strstr(body, "root:")),
                "GET %s: %d", paths[k], code);
        free(body);
    }
    unlink("viewer-secret.txt");
    snprintf(req, sizeof req, "POST / HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 2\r\n\r\nhi", port);
    int code = t_http(port, req, &body, &n);
    T_CHECK(code == 405, "POST: %d", code);
    free(body);
    snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: attacker.example:%u\r\n\r\n", port);
    code = t_http(port, req, &body, &n);
    T_CHECK(code == 403, "a foreign Host (DNS rebinding): %d", code);
    free(body);
    t_ws w;
    char why[600], hdr[200];
    snprintf(hdr, sizeof hdr, "Origin: http://evil.example\r\n");
    T_CHECK(!t_ws_connect(&w, port, "/ws", hdr, why, sizeof why), "a WebSocket from another site's page was accepted");
    snprintf(hdr, sizeof hdr, "Origin: http://127.0.0.1:%u\r\n", port);
    bool own = t_ws_connect(&w, port, "/ws", hdr, why, sizeof why);
    T_CHECK(own, "the page's own WebSocket was refused: %s", why);
    if (own) t_ws_close(&w);
done:
    vfix_free(&f);
}

/* A port in use is a clear error before any work: from the library, `splatc view` and
 * `splatc train --viewer` (which creates no output folder). */
SPLAT_TEST(view_port_in_use)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    T_REQUIRE(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 4) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    uint32_t port = ntohs(a.sin_port);
    splat_ctx *ctx = NULL;
    splat_viewer *v = NULL;
    splat_error err = {0};
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    splat_status st = splat_viewer_init(&v, ctx, &(splat_viewer_desc){.port = port}, &err);
    char want[64];
    snprintf(want, sizeof want, "port %u", port);
    T_CHECK(st == SPLAT_ERR_IO && strstr(err.msg, want) && strstr(err.msg, "in use") && !v, "%s: %s", splat_status_str(st), err.msg);
    splat_viewer_free(v);
    memset(&err, 0, sizeof err);
    st = splat_viewer_init(&v, ctx, &(splat_viewer_desc){.port = SPLAT_VIEWER_PORT_ANY, .host = "300.1.2.3"}, &err);
    T_CHECK(st == SPLAT_ERR_INVALID_ARG && strstr(err.msg, "300.1.2.3"), "%s", err.msg);
    splat_ctx_free(ctx);

    char args[1600], log[700], out[700];
    snprintf(out, sizeof out, "%s", splat_test_path("out"));
    const char *forms[] = {"train '%s' -o '%s' --viewer %u", "view '%s' --port %u"};
    for (int k = 0; k < 2; k++) {
        if (k == 0) snprintf(args, sizeof args, forms[0], splat_test_path("no-such-dataset"), out, port);
        else snprintf(args, sizeof args, forms[1], splat_test_path("no-such.ply"), port);
        snprintf(log, sizeof log, "%s", splat_test_path("port.log"));
        t_proc p;
        T_REQUIRE(t_proc_start(&p, args, log));
        int rc = t_proc_wait(&p, 120);
        char *l = t_proc_log(&p);
        T_CHECK(rc == 1 && (k == 1 || strstr(l, "in use")), "%s: exit %d: %s", args, rc, l);
        free(l);
    }
    struct stat sb;
    T_CHECK(stat(out, &sb) != 0, "the failed run left %s behind", out);
    /* view checks its scene first; with a scene it reaches the port */
    splat_scene s;
    splat_camera cams[1];
    t_view_scene(&s, 10, cams, 1, 16, 16);
    char ply[700];
    snprintf(ply, sizeof ply, "%s", splat_test_path("s.ply"));
    T_OK(splat_scene_save_ply(ply, &s, &err), &err);
    splat_scene_free(&s);
    snprintf(args, sizeof args, "view '%s' --port %u", ply, port);
    t_proc p;
    T_REQUIRE(t_proc_start(&p, args, log));
    int rc = t_proc_wait(&p, 120);
    char *l = t_proc_log(&p);
    T_CHECK(rc == 1 && strstr(l, "in use") && strstr(l, want), "view: exit %d: %s", rc, l);
    free(l);
    close(fd);
}

/* ------------------------------------------------------------------ a training run */

typedef struct puller {
    uint32_t port;
    splat_camera cam;
    volatile int stop;
    uint32_t frames, failures;
    uint32_t steps[4096];
    pthread_t thread;
} puller;

/* A client pulling frames of one camera as fast as they come. */
static void *pull(void *arg)
{
    puller *p = arg;
    t_ws w;
    char why[600];
    if (!t_ws_connect(&w, p->port, "/ws", NULL, why, sizeof why)) {
        p->failures++;
        return NULL;
    }
    for (uint32_t id = 1; !p->stop; id++) {
        got_frame g;
        if (!ask(&w, id, &p->cam, 90) || !frame_for(&w, id, 60, &g)) {
            p->failures++;
            continue;
        }
        if (p->frames < 4096) p->steps[p->frames] = g.step;
        __atomic_add_fetch(&p->frames, 1, __ATOMIC_RELEASE);
        free(g.rgb);
    }
    t_ws_close(&w);
    return NULL;
}

/* A frame asked for while the caller answers the viewer between runs (the trainer is not
 * running, so splat_viewer_control serves its snapshot requests). */
static bool frame_between_runs(splat_viewer *v, t_ws *w, uint32_t id, const splat_camera *cam, got_frame *g)
{
    if (!ask(w, id, cam, 100)) return false;
    double end = splat__now() + 120;
    while (splat__now() < end) {
        splat_viewer_control_state c;
        splat_viewer_control(v, 0, &c);
        if (frame_for(w, id, 0.05, g)) return true;
    }
    return false;
}

/* The snapshot tap: a client pulls frames all through a run that densifies (and outgrows the
 * snapshot at once: it starts with room for one Gaussian) but the last few; it sees several steps;
 * a frame asked between runs at the end is splat_render of the trainer's scene at that step (the copy has
 * every group and row), and more frames then take no more copies (the parameters did not change);
 * and the run ends with the same bits as one without a viewer. */
SPLAT_TEST(view_train_tap)
{
    vfix f;
    splat_trainer *t = NULL, *t2 = NULL;
    puller p = {0};
    t_ws w = {.fd = -1};
    splat_scene got = {0}, want = {0};
    if (!vfix_init(&f, 60, false)) goto done;
    char dir[600];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    splat_error err = {0};
    splat_demo_desc dd = {.width = 32, .height = 24, .n_views = 8};
    T_OK(splat_make_demo(f.ctx, dir, &dd, &err), &err);
    splat_train_desc desc = {.data = dir, .steps = 60, .seed = splat__rng_u64(splat_test_rng()), .refine_start = 10,
                             .refine_every = 10, .refine_stop = 50, .background = SPLAT_BACKGROUND_RANDOM};
    T_OK(splat_trainer_init(&t, f.ctx, &desc, &err), &err);
    T_OK(splat_viewer_attach(f.v, t, &err), &err);
    /* a snapshot with room for one Gaussian: the first copy finds it too small */
    splat__scene_gpu_free(f.v->gpu, &f.v->back);
    T_OK(splat__scene_gpu_init(f.v->gpu, &f.v->back, "view.snapshot", 1, false, &err), &err);
    p.port = splat_viewer_port(f.v);
    p.cam = t->ds.views[0].camera;
    T_REQUIRE(pthread_create(&p.thread, NULL, pull, &p) == 0);
    uint32_t counts[2] = {t->model.count, 0};
    bool pulling = true;
    while (splat_trainer_step(t) < desc.steps) {
        /* the last steps with nobody asking: the snapshots are behind when the run stops */
        if (pulling && splat_trainer_step(t) + 6 >= desc.steps) {
            p.stop = 1;
            pthread_join(p.thread, NULL);
            pulling = false;
        }
        uint32_t seen = __atomic_load_n(&p.frames, __ATOMIC_ACQUIRE);
        splat_status st = splat_trainer_run(t, splat_trainer_step(t) + 3, &err);
        if (st != SPLAT_OK) break;
        splat_viewer_control_state c;
        splat_viewer_control(f.v, 0, &c);
        T_CHECK(!c.paused && !c.save);
        /* a GPU that runs 3 steps faster than a frame comes (an H100: 60 steps in a few ms) waits
         * for one, so the client sees several steps whatever the speed */
        for (double end = splat__now() + 10; pulling && __atomic_load_n(&p.frames, __ATOMIC_ACQUIRE) == seen &&
                                              splat__now() < end;)
            splat_viewer_control(f.v, 5, &c);
    }
    counts[1] = t->model.count;
    if (pulling) {
        p.stop = 1;
        pthread_join(p.thread, NULL);
    }
    T_CHECK(p.failures == 0, "%u frames failed", p.failures);
    uint32_t distinct = 0;
    for (uint32_t k = 0; k < p.frames && k < 4096; k++) distinct += k == 0 || p.steps[k] != p.steps[k - 1];
    T_CHECK(distinct >= 3, "%u frames of %u distinct steps during the run", p.frames, distinct);
    T_CHECK(counts[1] != counts[0], "the run did not densify (%u Gaussians throughout)", counts[0]);

    /* between runs: the current scene, exactly (the frame waits for a fresh snapshot: the trainer is
     * not running) */
    T_REQUIRE(connect_ws(&w, &f));
    got_frame g;
    T_REQUIRE(frame_between_runs(f.v, &w, 1, &t->ds.views[1].camera, &g), "no frame between runs");
    T_CHECK(g.step == desc.steps && g.count == t->model.count, "the frame is of step %u with %u Gaussians, not %u with %u",
            g.step, g.count, desc.steps, t->model.count);
    T_OK(splat_trainer_scene(t, &got, &err), &err);
    splat_render_desc rd = {.sh_degree = splat__train_degree(t, desc.steps) ? splat__train_degree(t, desc.steps) : SPLAT_SH_DEGREE_0};
    memcpy(rd.background, t->background, sizeof rd.background);
    double psnr = frame_psnr(f.ctx, &got, &t->ds.views[1].camera, &rd, &g);
    T_CHECK(psnr > 40, "the frame is %.2f dB from splat_render of the trainer's scene", psnr);
    free(g.rgb);
    /* the parameters have not changed since: more frames, and no more copies */
    uint32_t copies = atomic_load(&f.v->snapshots);
    for (uint32_t k = 2; k < 5; k++) {
        T_REQUIRE(frame_between_runs(f.v, &w, k, &t->ds.views[k].camera, &g), "no frame between runs");
        T_CHECK(g.step == desc.steps, "frame %u is of step %u, not %u", k, g.step, desc.steps);
        free(g.rgb);
    }
    T_CHECK(atomic_load(&f.v->snapshots) == copies, "%u more copies of parameters that did not change",
            atomic_load(&f.v->snapshots) - copies);
    T_OK(splat_viewer_attach(f.v, NULL, &err), &err);

    /* the same run without a viewer */
    T_OK(splat_trainer_init(&t2, f.ctx, &desc, &err), &err);
    T_OK(splat_trainer_run(t2, 0, &err), &err);
    T_OK(splat_trainer_scene(t2, &want, &err), &err);
    size_t n = want.count;
    T_CHECK(got.count == want.count && memcmp(got.means, want.means, n * 12) == 0 &&
            memcmp(got.log_scales, want.log_scales, n * 12) == 0 && memcmp(got.quats, want.quats, n * 16) == 0 &&
            memcmp(got.opacities, want.opacities, n * 4) == 0 && memcmp(got.sh, want.sh, n * 192) == 0,
            "the run with a viewer ended with other bits (%u Gaussians, %u without)", got.count, want.count);
done:
    t_ws_close(&w);
    splat_scene_free(&got);
    splat_scene_free(&want);
    splat_viewer_attach(f.v, NULL, NULL);
    splat_trainer_free(t);
    splat_trainer_free(t2);
    vfix_free(&f);
}
