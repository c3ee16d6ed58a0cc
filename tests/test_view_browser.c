/* The viewer in a real browser (headless Chromium, browser.h), as a user runs it: `splatc view`
 * and `splatc train --viewer` serve the page, the page asks for frames and shows them, and the
 * tests drive it with the mouse and the keyboard and read back what the browser decoded. */
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "browser.h"
#include "io/io.h"
#include "io/io_util.h"
#include "view_support.h"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The page's last frame as the browser decoded it: its header fields, RGBA pixels, and the camera
 * the page asked it for. */
typedef struct page_frame {
    uint32_t id, step, w, h;
    uint8_t *rgba;
    splat_camera cam;
} page_frame;

/* Evaluates `expr`, which must resolve to splatc.waitFrame(...)'s frame; reads its pixels. */
static bool frame_after(t_browser *b, const char *expr, page_frame *f, char *why, size_t n)
{
    memset(f, 0, sizeof *f);
    char js[2048];
    snprintf(js, sizeof js, "(async () => { const f = await (%s); return {f, px: splatc.pixels(), cam: splatc.cameraOf(f.id)}; })()",
             expr);
    char *text = t_browser_eval(b, js, 120);
    if (!text) return snprintf(why, n, "%s", b->error), false;
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *fr = cJSON_GetObjectItem(j, "f");
    const char *px = cJSON_GetStringValue(cJSON_GetObjectItem(j, "px"));
    f->id = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(fr, "id"));
    f->step = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(fr, "step"));
    f->w = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(fr, "w"));
    f->h = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItem(fr, "h"));
    const cJSON *c = cJSON_GetObjectItem(j, "cam");
    f->cam.width = f->w, f->cam.height = f->h;
    f->cam.fx = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "fx"));
    f->cam.fy = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "fy"));
    f->cam.cx = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "cx"));
    f->cam.cy = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "cy"));
    for (int k = 0; k < 9; k++) f->cam.R[k] = (float)cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "R"), k));
    for (int k = 0; k < 3; k++) f->cam.t[k] = (float)cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "T"), k));
    size_t bytes = 0;
    f->rgba = px ? t_base64_decode(px, &bytes) : NULL;
    cJSON_Delete(j);
    if (!f->rgba || bytes != (size_t)f->w * f->h * 4) {
        snprintf(why, n, "no pixels for a %ux%u frame (%zu bytes)", f->w, f->h, bytes);
        free(f->rgba);
        f->rgba = NULL;
        return false;
    }
    return true;
}

/* Waits until `expr` is true in the page (polled every 50 ms). */
static bool page_until(t_browser *b, const char *expr, double timeout_s)
{
    char js[4096];
    snprintf(js, sizeof js,
             "new Promise((ok, no) => { const t0 = performance.now(); const f = () => { try { if (%s) return ok(true); } "
             "catch (e) {} if (performance.now() - t0 > %d) return no(new Error('timed out: ' + %s)); setTimeout(f, 50); }; "
             "f(); })",
             expr, (int)(timeout_s * 1000), "''");
    char *r = t_browser_eval(b, js, timeout_s + 30);
    free(r);
    return r != NULL;
}

/* Clicks the element with id `id` where it is on the screen. */
static bool click(t_browser *b, const char *id)
{
    char js[256];
    snprintf(js, sizeof js, "(() => { const r = document.getElementById('%s').getBoundingClientRect(); "
             "return [r.x + r.width / 2, r.y + r.height / 2]; })()", id);
    char *text = t_browser_eval(b, js, 30);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!cJSON_IsArray(j)) return cJSON_Delete(j), false;
    double x = cJSON_GetArrayItem(j, 0)->valuedouble, y = cJSON_GetArrayItem(j, 1)->valuedouble;
    cJSON_Delete(j);
    return t_browser_drag(b, x, y, x, y, 0);
}

static void no_validation_messages(const char *log)
{
    T_CHECK(!strstr(log, "vulkan validation"), "the tool reported Vulkan validation messages: %s", log);
}

/* The camera centre, -R^T t. */
static void centre(const splat_camera *c, double p[3])
{
    for (int i = 0; i < 3; i++) p[i] = -(c->R[i] * c->t[0] + c->R[3 + i] * c->t[1] + c->R[6 + i] * c->t[2]);
}

/* The angle between two cameras' orientations. */
static double turned(const splat_camera *a, const splat_camera *b)
{
    double tr = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) tr += (double)a->R[3 * i + k] * b->R[3 * i + k];
    return acos(fmax(-1.0, fmin(1.0, (tr - 1) / 2)));
}

/* splat_render of the camera the page asked a frame for, as 8-bit RGB like a PNG of it. */
static uint8_t *reference(splat_ctx *ctx, const splat_scene *s, const splat_camera *cam)
{
    float *img = NULL;
    splat_error err = {0};
    if (splat_render(ctx, s, cam, 1, NULL, &img, &err) != SPLAT_OK) {
        splat_test_fail(__FILE__, __LINE__, "splat_render:", "%s", err.msg);
        return NULL;
    }
    size_t n = (size_t)cam->width * cam->height * 3;
    uint8_t *rgb = malloc(n);
    for (size_t k = 0; rgb && k < n; k++) rgb[k] = (uint8_t)lrintf(255.0f * fminf(fmaxf(img[k], 0.0f), 1.0f));
    splat_free(img);
    return rgb;
}

/* The share of pixels of two RGB images that differ by more than 16 levels somewhere. */
static double changed(const uint8_t *a, const uint8_t *b, uint32_t w, uint32_t h)
{
    uint64_t n = 0;
    for (uint64_t p = 0; p < (uint64_t)w * h; p++)
        n += abs(a[3 * p] - b[3 * p]) > 16 || abs(a[3 * p + 1] - b[3 * p + 1]) > 16 || abs(a[3 * p + 2] - b[3 * p + 2]) > 16;
    return (double)n / ((double)w * h);
}

/* A frame after a move: a new one, of a camera that moved as the move says (`how`: 'o' orbits,
 * 'w' flies forward), which is what splat_render gives for that camera (over 40 dB), and a
 * different picture from the one before. */
static void check_moved(splat_ctx *ctx, const splat_scene *s, const page_frame *before, const page_frame *after, char how)
{
    T_CHECK(after->id > before->id, "no new frame after the move (ids %u, %u)", before->id, after->id);
    double p0[3], p1[3], d[3], dn = 0;
    centre(&before->cam, p0);
    centre(&after->cam, p1);
    for (int i = 0; i < 3; i++) d[i] = p1[i] - p0[i], dn += d[i] * d[i];
    dn = sqrt(dn);
    if (how == 'o') T_CHECK(turned(&before->cam, &after->cam) > 0.2 && dn > 0.1, "the drag did not orbit: turned %.3f rad, moved %.3f",
                            turned(&before->cam, &after->cam), dn);
    else {
        const float *f = before->cam.R + 6; /* the forward axis */
        double along = dn > 0 ? (d[0] * f[0] + d[1] * f[1] + d[2] * f[2]) / dn : 0;
        T_CHECK(memcmp(before->cam.R, after->cam.R, sizeof after->cam.R) == 0 && dn > 0.01 && along > 0.99,
                "W did not fly forward: turned %.2g rad, moved %.3f, %.3f of it forward", turned(&before->cam, &after->cam), dn, along);
    }
    uint8_t *want = reference(ctx, s, &after->cam), *was = reference(ctx, s, &before->cam);
    if (want && was && after->w == before->w && after->h == before->h) {
        double psnr = t_psnr8(after->rgba, 4, want, 3, after->w, after->h);
        T_CHECK(psnr > 40, "the frame after the move is %.2f dB from splat_render of the camera the page asked for", psnr);
        T_CHECK(changed(want, was, after->w, after->h) > 0.01, "the move did not change the picture");
    }
    free(want);
    free(was);
}

/* The page's own reading of a frame message, given a real one of several strips (caught from its
 * WebSocket) cut short or altered in each way the layout forbids: each is refused (counted, the
 * frame on screen kept) and none throws; the real one handed over again is shown; and the next
 * frame from the server still comes and is splat_render of its camera. */
static const char k_malformed_js[] =
    "(async () => {"
    "  const ws = splatc.state.ws, orig = ws.onmessage; let raw = null;"
    "  ws.onmessage = (e) => { if (typeof e.data !== 'string') raw = e.data.slice(0); orig(e); };"
    /* the last message once nothing is asked or in flight (a slow frame is asked again after 5 s) */
    "  splatc.state.dirty = true;"
    "  const last = await splatc.settled(60000);"
    "  ws.onmessage = orig;"
    "  if (!raw || new DataView(raw).getUint32(0, true) !== last.id) return { error: 'no message of the last frame caught' };"
    "  const H = splatc.hello.frame_header, v = new DataView(raw), n = v.getUint32(H, true), T = H + 4, D = T + 12 * n;"
    "  const s = (k, f) => v.getUint32(T + 12 * k + 4 * f, true);"
    "  const at = (k) => { let a = D; for (let i = 0; i < k; i++) a += s(i, 2); return a; };"
    "  const set = (o, x, b = raw.slice(0)) => { new DataView(b).setUint32(o, x, true); return b; };"
    "  const cat = (...parts) => { const b = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0)); let o = 0;"
    "    for (const p of parts) { b.set(new Uint8Array(p), o); o += p.byteLength; } return b.buffer; };"
    "  const L = n - 1, notJpeg = raw.slice(0); new Uint8Array(notJpeg).fill(0, at(1), at(1) + 2);"
    "  const swapped = cat(raw.slice(0, T), raw.slice(T + 12, T + 24), raw.slice(T, T + 12), raw.slice(T + 24, at(0)),"
    "                      raw.slice(at(1), at(2)), raw.slice(at(0), at(1)), raw.slice(at(2)));"
    "  const cases = {"
    "    empty: new ArrayBuffer(0), 'cut in the header': raw.slice(0, H - 2), 'cut in the table': raw.slice(0, T + 6),"
    "    'cut by a byte': raw.slice(0, raw.byteLength - 1), 'a byte more': cat(raw, new ArrayBuffer(1)),"
    "    'no strips': set(H, 0), '2^32-1 strips': set(H, 0xffffffff), 'more strips than rows': set(H, s(0, 1) + 1e4),"
    "    'one strip less': set(H, n - 1), 'a gap': set(T + 12 + 0, s(1, 0) + 1), 'an overlap': set(T + 12, s(1, 0) - 1),"
    "    'out of order': swapped, 'the last strip a row short': set(T + 12 * L + 4, s(L, 1) - 1),"
    "    'the last strip a row long': set(T + 12 * L + 4, s(L, 1) + 1), 'zero rows': set(T + 4, 0),"
    "    'a strip past the end': set(T + 12 * L + 8, s(L, 2) + 1), 'a strip a byte short': set(T + 8, s(0, 2) - 1),"
    "    'zero bytes': set(T + 8, 0), 'a strip that is not a JPEG': notJpeg, 'wider than its strips': set(8, v.getUint32(8, true) + 1),"
    "    'no height': set(12, 0), 'taller than the page allows': set(12, 1e6),"
    "  };"
    "  const r0 = splatc.rejected, f0 = splatc.frames, id0 = splatc.last.id, out = {};"
    "  for (const [name, buf] of Object.entries(cases)) {"
    "    const before = splatc.rejected; const shown = await splatc.receive(buf);"
    "    out[name] = !shown && splatc.rejected === before + 1;"
    "  }"
    "  const kept = splatc.frames === f0 && splatc.last.id === id0;"
    "  return { strips: n, refused: out, kept, rejected: splatc.rejected - r0, again: await splatc.receive(raw),"
    "           note: document.getElementById('note').textContent };"
    "})()";

static void malformed_frames(t_browser *b, splat_ctx *ctx, const splat_scene *s)
{
    char *text = t_browser_eval(b, k_malformed_js, 120);
    T_CHECK(text, "the malformed frames threw in the page: %s", b->error);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    T_CHECK(j && !cJSON_GetObjectItem(j, "error"), "%s", text ? text : "");
    if (j && !cJSON_GetObjectItem(j, "error")) {
        int strips = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(j, "strips"));
        T_CHECK(strips >= 2, "the frame came in %d strips: too few to reorder", strips);
        const cJSON *c;
        int n = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "refused"))
        {
            T_CHECK(cJSON_IsTrue(c), "the page did not refuse a frame message with %s", c->string);
            n++;
        }
        T_CHECK(n >= 20 && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "rejected")) == n, "%d cases, %g refused", n,
                cJSON_GetNumberValue(cJSON_GetObjectItem(j, "rejected")));
        T_CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "kept")), "a refused message changed the frame on screen");
        T_CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "again")), "the real message, handed over again, was not shown");
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(j, "note"));
        T_CHECK(note && strstr(note, "malformed"), "no note of a malformed frame");
    }
    cJSON_Delete(j);
    free(text);
    /* and the next frame from the server is the right picture */
    page_frame f = {0};
    char why[1200] = "";
    bool ok = frame_after(b, "(splatc.state.dirty = true, splatc.waitFrame(splatc.lastSentId + 1, 60000))", &f, why, sizeof why);
    T_CHECK(ok, "no frame after the malformed ones: %s", why);
    uint8_t *want = ok ? reference(ctx, s, &f.cam) : NULL;
    if (want) {
        double psnr = t_psnr8(f.rgba, 4, want, 3, f.w, f.h);
        T_CHECK(psnr > 40, "the frame after the malformed ones is %.2f dB from splat_render of its camera", psnr);
    }
    free(want);
    free(f.rgba);
}

/* `splatc view` of a scene with cameras: the page jumps to camera 0 through its camera list, and
 * the frame the browser decodes is `splatc render` of that camera, less JPEG's loss (more than
 * 40 dB); the other camera's frustum is drawn over it; dragging the mouse orbits and holding W
 * flies forward, each bringing a new frame that is splat_render of the camera the page moved to. */
SPLAT_TEST(view_browser_frame)
{
    T_REQUIRE(t_browser_binary(), "no headless Chromium (scripts/deps.sh --test installs chromium-headless-shell)");
    splat_scene scene;
    splat_camera cams[3];
    uint32_t w = 96 + 16 * (uint32_t)t_uniform(0, 4), h = 72 + 8 * (uint32_t)t_uniform(0, 4);
    t_view_scene(&scene, 1500, cams, 3, w, h);
    char dir[600], ply[700], cjson[700], args[3000], log[700];
    snprintf(dir, sizeof dir, "%s", splat_test_path("v"));
    mkdir(dir, 0755);
    snprintf(ply, sizeof ply, "%s/scene.ply", dir);
    snprintf(cjson, sizeof cjson, "%s/cameras.json", dir);
    splat_error err = {0};
    splat_ctx *ctx = NULL;
    splat_image want = {0};
    t_browser b = {0};
    page_frame f0 = {0}, f1 = {0}, f2 = {0};
    t_proc view = {0};
    T_OK(splat_scene_save_ply(ply, &scene, &err), &err);
    T_OK(splat__cameras_write(cjson, cams, NULL, 3, &err), &err);
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);

    /* the reference: the tool's own render of camera 0 */
    snprintf(args, sizeof args, "render '%s' --cameras '%s' -o '%s/r' -q", ply, cjson, dir);
    snprintf(log, sizeof log, "%s/render.log", dir);
    t_proc render;
    bool ok = t_proc_start(&render, args, log) && t_proc_wait(&render, 300) == 0;
    T_CHECK(ok, "splatc render failed");
    char path[800];
    snprintf(path, sizeof path, "%s/r/render_0000.png", dir);
    if (ok && splat__image_load(path, &want, &err) != SPLAT_OK) ok = false, splat_test_fail(__FILE__, __LINE__, "png:", "%s", err.msg);

    snprintf(args, sizeof args, "view '%s' --cameras '%s' --port 0", ply, cjson);
    snprintf(log, sizeof log, "%s/view.log", dir);
    uint32_t port = ok && t_proc_start(&view, args, log) ? t_proc_viewer_port(&view, 120) : 0;
    char why[1200] = "";
    if (!port) {
        char *l = t_proc_log(&view);
        splat_test_fail(__FILE__, __LINE__, "splatc view:", "no viewer port in its log: %s", l);
        free(l);
        goto done;
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    if (!t_browser_open(&b, url, 800, 600, dir)) {
        splat_test_fail(__FILE__, __LINE__, "browser:", "%s", b.error);
        goto done;
    }
    T_CHECK(page_until(&b, "window.splatc && splatc.hello && splatc.frames > 0", 120), "the page showed no frame: %s", b.error);

    /* camera 0 from the list, at full resolution and JPEG quality 100 */
    ok = frame_after(&b,
                     "(() => { const set = (id, v) => { const e = document.getElementById(id); e.value = v; "
                     "e.dispatchEvent(new Event('change')); }; set('quality', '100'); set('scale', '1'); set('camera', '0'); "
                     "return splatc.waitFrame(splatc.lastSentId + 1, 60000); })()",
                     &f0, why, sizeof why);
    T_CHECK(ok, "%s", why);
    if (!ok) goto done;
    /* as floats (JSON has no -0) */
    bool same = f0.cam.width == cams[0].width && f0.cam.height == cams[0].height && f0.cam.fx == cams[0].fx &&
                f0.cam.fy == cams[0].fy && f0.cam.cx == cams[0].cx && f0.cam.cy == cams[0].cy;
    for (int k = 0; k < 9; k++) same = same && f0.cam.R[k] == cams[0].R[k];
    for (int k = 0; k < 3; k++) same = same && f0.cam.t[k] == cams[0].t[k];
    T_CHECK(same, "the page did not ask for camera 0 exactly");
    T_CHECK(f0.w == want.width && f0.h == want.height, "frame %ux%u, camera %ux%u", f0.w, f0.h, want.width, want.height);
    if (f0.w == want.width && f0.h == want.height) {
        double psnr = t_psnr8(f0.rgba, 4, want.rgba, 4, w, h);
        printf("the browser's frame of camera 0 against splatc render: %.2f dB\n", psnr);
        T_CHECK(psnr > 40, "the browser's frame is %.2f dB from splatc render's (more than 40 wanted)", psnr);
    }
    /* the other cameras' frustums over the frame (camera 1 stands in front of camera 0) */
    char *drawn = t_browser_eval(&b, "(() => { const c = document.getElementById('overlay'); const d = c.getContext('2d')"
                                     ".getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; "
                                     "i += 4) n += d[i] > 0; return n; })()", 30);
    T_CHECK(drawn && atoi(drawn) > 20, "no frustum drawn on the overlay (%s)", drawn ? drawn : b.error);
    free(drawn);

    /* a drag across the view orbits */
    ok = t_browser_drag(&b, 400, 300, 520, 330, 6) && frame_after(&b, "splatc.settled(60000)", &f1, why, sizeof why);
    T_CHECK(ok, "after the drag: %s %s", why, b.error);
    if (ok) check_moved(ctx, &scene, &f0, &f1, 'o');
    /* W flies forward */
    ok = ok && t_browser_key(&b, "w", "KeyW", 87, 0.4) && frame_after(&b, "splatc.settled(60000)", &f2, why, sizeof why);
    T_CHECK(ok, "after W: %s %s", why, b.error);
    if (ok) check_moved(ctx, &scene, &f1, &f2, 'w');
    if (ok) malformed_frames(&b, ctx, &scene);
done:
    t_browser_close(&b);
    free(f0.rgba);
    free(f1.rgba);
    free(f2.rgba);
    splat__image_free(&want);
    splat_scene_free(&scene);
    splat_ctx_free(ctx);
    if (view.pid > 0) {
        kill(view.pid, SIGTERM);
        int rc = t_proc_wait(&view, 60);
        char *l = t_proc_log(&view);
        T_CHECK(rc == 0, "splatc view exited with %d after SIGTERM: %s", rc, l);
        no_validation_messages(l);
        free(l);
    }
}

/* `splatc train --viewer` on the demo with a browser attached: the page shows frames of the run
 * as it trains (snapshots of several steps), pauses it (the step stays, frames still come, of the
 * paused step), saves it (OUT/point_cloud_STEP.ply, a valid scene) and resumes it; and the
 * trained PLY is byte for byte the one of the same run without a viewer.
 *
 * SPLAT_VIEWER_SCREENSHOT=FILE makes it the picture of docs/viewer.png instead: a larger demo,
 * paused after 600 steps, the page's PNG written to FILE. */
SPLAT_TEST(view_browser_train)
{
    const char *shot = getenv("SPLAT_VIEWER_SCREENSHOT");
    T_REQUIRE(t_browser_binary(), "no headless Chromium (scripts/deps.sh --test installs chromium-headless-shell)");
    char dir[600], data[700], a[700], bdir[700], args[3000], log[700], path[800];
    snprintf(dir, sizeof dir, "%s", splat_test_path("t"));
    mkdir(dir, 0755);
    snprintf(data, sizeof data, "%s/demo", dir);
    snprintf(a, sizeof a, "%s/plain", dir);
    snprintf(bdir, sizeof bdir, "%s/viewed", dir);
    const uint32_t steps = shot ? 650 : 240;
    snprintf(args, sizeof args, "demo '%s' --size %u --views %u -q", data, shot ? 160 : 32, shot ? 32 : 8);
    snprintf(log, sizeof log, "%s/demo.log", dir);
    t_proc p;
    T_REQUIRE(t_proc_start(&p, args, log) && t_proc_wait(&p, 300) == 0, "splatc demo failed");

    /* the viewed run first (the plain one runs while the page is looked at would race for the CPU) */
    snprintf(args, sizeof args, "train '%s' -o '%s' --steps %u --viewer 0", data, bdir, steps);
    snprintf(log, sizeof log, "%s/viewed.log", dir);
    t_proc run;
    T_REQUIRE(t_proc_start(&run, args, log));
    uint32_t port = t_proc_viewer_port(&run, 120);
    t_browser b = {0};
    page_frame f = {0};
    char why[1200] = "";
    bool ok = port != 0;
    T_CHECK(ok, "no viewer port in the log of splatc train --viewer");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", port);
    ok = ok && t_browser_open(&b, url, shot ? 1280 : 900, shot ? 760 : 640, dir);
    T_CHECK(ok || !port, "browser: %s", b.error);
    /* frames of three different steps while it trains */
    ok = ok && page_until(&b, "window.splatc && splatc.hello && splatc.hello.mode === 'train' && "
                              "((window.seen = window.seen || new Set()).add(splatc.last ? splatc.last.step : -1), "
                              "[...window.seen].filter((s) => s > 0).length >= 3)", 240);
    if (ok && shot) ok = page_until(&b, "splatc.stats.step >= 600", 3600);
    T_CHECK(ok, "the page did not show frames of three training steps: %s", b.error);
    ok = ok && click(&b, "pause") && page_until(&b, "splatc.stats.paused", 120);
    T_CHECK(ok, "pause: %s", b.error);
    char *text = ok ? t_browser_eval(&b, "splatc.stats.step", 30) : NULL;
    uint32_t paused_at = text ? (uint32_t)atoi(text) : 0;
    free(text);
    T_CHECK(!ok || (paused_at > 0 && paused_at < steps), "paused at step %u of %u", paused_at, steps);
    if (ok) {
        struct timespec ts = {1, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
        /* still paused where it was; a move still brings a frame, of that step */
        text = t_browser_eval(&b, "splatc.stats.step", 30);
        T_CHECK(text && (uint32_t)atoi(text) == paused_at, "the step moved while paused: %s -> %s", "paused", text ? text : "?");
        free(text);
        ok = t_browser_drag(&b, 450, 320, 380, 300, 4) && frame_after(&b, "splatc.settled(60000)", &f, why, sizeof why);
        T_CHECK(ok, "a frame while paused: %s %s", why, b.error);
        T_CHECK(!ok || f.step == paused_at, "the frame while paused shows step %u, not the paused step %u", f.step, paused_at);
    }
    if (ok && shot) {
        /* the scene from a little further than camera 0, the cameras drawn around it */
        free(t_browser_eval(&b, "(() => { const e = document.getElementById('camera'); e.value = '-1'; "
                                "e.dispatchEvent(new Event('change')); })()", 30));
        for (int k = 0; k < 5; k++) {
            char *r = t_browser_eval(&b, "(() => { document.getElementById('overlay').dispatchEvent(new WheelEvent('wheel', "
                                         "{deltaY: 100, cancelable: true})); })()", 30);
            free(r);
        }
        free(f.rgba);
        ok = t_browser_drag(&b, 700, 380, 760, 360, 4) &&
             frame_after(&b, "splatc.waitFrame(splatc.lastSentId + 1, 60000)", &f, why, sizeof why) &&
             page_until(&b, "splatc.frames > 0", 10) && t_browser_screenshot(&b, shot);
        T_CHECK(ok, "screenshot: %s %s", why, b.error);
    }
    char saved[900];
    snprintf(saved, sizeof saved, "%s/point_cloud_%u.ply", bdir, paused_at);
    if (ok) {
        char cond[1200];
        snprintf(cond, sizeof cond, "document.getElementById('note').textContent.includes('point_cloud_%u.ply')", paused_at);
        ok = click(&b, "save") && page_until(&b, cond, 120);
        T_CHECK(ok, "save now: no note of point_cloud_%u.ply: %s", paused_at, b.error);
        splat_scene s;
        splat_error err = {0};
        T_CHECK(exists(saved), "save now wrote no %s", saved);
        if (exists(saved) && splat_scene_load_ply(saved, &s, &err) == SPLAT_OK) {
            T_CHECK(s.count > 0, "the saved scene has no Gaussians");
            splat_scene_free(&s);
        } else T_CHECK(!exists(saved), "%s: %s", saved, err.msg);
        ok = click(&b, "resume") && page_until(&b, "!splatc.stats.paused", 60);
        T_CHECK(ok, "resume: %s", b.error);
    }
    int rc = t_proc_wait(&run, 600);
    t_browser_close(&b);
    free(f.rgba);
    char *l = t_proc_log(&run);
    T_CHECK(rc == 0, "splatc train --viewer exited with %d: %s", rc, l);
    no_validation_messages(l);
    free(l);

    snprintf(args, sizeof args, "train '%s' -o '%s' --steps %u -q", data, a, steps);
    snprintf(log, sizeof log, "%s/plain.log", dir);
    T_REQUIRE(t_proc_start(&p, args, log));
    T_REQUIRE(t_proc_wait(&p, 600) == 0, "the run without a viewer failed");
    size_t na = 0, nb = 0;
    char *pa = NULL, *pb = NULL;
    splat_error err = {0};
    snprintf(path, sizeof path, "%s/point_cloud.ply", a);
    T_OK(splat__read_file(path, 1u << 30, &pa, &na, &err), &err);
    snprintf(path, sizeof path, "%s/point_cloud.ply", bdir);
    if (splat__read_file(path, 1u << 30, &pb, &nb, &err) != SPLAT_OK) splat_test_fail(__FILE__, __LINE__, "viewed:", "%s", err.msg);
    T_CHECK(pb && na == nb && memcmp(pa, pb, na) == 0,
            "the PLY trained with a viewer (%zu bytes) differs from the one trained without (%zu bytes)", nb, na);
    splat__free(pa);
    splat__free(pb);
}
