/* Viewer benchmark (issue 13): what a browser pulling frames costs a training run, and how soon
 * its frames come. Runs `splatc train DATA` twice with the same options, once alone and once with
 * --viewer and a client (this program, a WebSocket client like the page) that asks for a WIDTHxHEIGHT
 * frame FPS times a second (at most one in flight, as the page does) from the dataset's first
 * camera, for as long as training runs; then prints a table: each run's training time and it/s
 * (from its metrics.json), the slowdown, and the frames' latencies from request to the last byte
 * of the answer. It also checks that both runs wrote the same point_cloud.ply.
 *
 * Usage: bench_viewer DATA [--steps 7000] [--images-factor N] [--fps 30] [--width 1280 --height 720]
 *                          [--quality 90] [--repeat 1] [--out DIR] [--splatc PATH] [-- extra train options]
 *                          [--rcvbuf BYTES] [--quickack] [--probe-ms MS]
 * The last three are the client's socket experiments and a probe of both sockets when the rest of
 * a frame keeps the client waiting MS (see probe()).
 * The acceptance of issue 13 (H100): bonsai 7k, --fps 30 at 1280x720: at most 5 % slower, every
 * frame within 50 ms.
 *
 *        bench_viewer --encode [IMAGE] [--width 1280 --height 720] [--quality 90] [--frames 200]
 * times the viewer's JPEG alone (splat__view_encode, its pool of threads) for each strip count
 * from 1 to SPLAT_VIEW_STRIPS: IMAGE (a PNG or JPEG, e.g. a render or a training image) tiled to
 * WIDTHxHEIGHT, or a synthetic image; mean, p95 and max of the wall time, the slowest strip's own
 * wall and CPU time, and the CPU time of all strips. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/tcp.h>

#include <cjson/cJSON.h>

#include "io/io.h"
#include "view/view.h"
#include "ws_client.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)size + 1);
    if (s && fread(s, 1, (size_t)size, f) != (size_t)size) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) s[size] = '\0';
    if (n) *n = (size_t)size;
    return s;
}

static pid_t spawn(const char *cmd)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

typedef struct run_result {
    double train_s, its;
    char device[256];
} run_result;

static bool read_metrics(const char *dir, run_result *r)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    char *text = slurp(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!j) return false;
    r->train_s = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "train_seconds"));
    r->its = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "iters_per_sec"));
    const char *dev = cJSON_GetStringValue(cJSON_GetObjectItem(j, "device"));
    snprintf(r->device, sizeof r->device, "%s", dev ? dev : "?");
    cJSON_Delete(j);
    return true;
}

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Where a frame's time went: the server's stages (its header, view.h) and the rest. */
enum {
    ST_QUEUED, ST_SNAPSHOT, ST_GPU, ST_GPU_RENDER, ST_GPU_READBACK, ST_ENCODE, ST_ENCODE_STRIP, ST_ALLOC, ST_SERVER, ST_NET,
    ST_UPLINK, ST_WAKE, ST_FIRST, ST_REST, ST_LATENCY, ST_AGE, ST_COUNT
};
static const char *const stage_name[ST_COUNT] = {
    "queued (arrived -> taken)", "waiting for the snapshot", "GPU, host clock (queue + work)", "GPU render + pack",
    "GPU readback copy", "JPEG encode (wall time, the strips in parallel)", "JPEG, the slowest strip's own encode",
    "growing buffers for the frame", "server total (arrived -> handed over)", "network + client (latency - server), of which:",
    "- the request's way in (sent -> arrived)", "- handed over -> first fragment written (the server thread)",
    "- first fragment: written -> whole at the client", "- the rest of the message -> last byte",
    "latency (request -> last byte)", "snapshot age at render",
};
static const int stage_head[ST_COUNT] = {
    SPLAT_VIEW_HEAD_QUEUED_US, SPLAT_VIEW_HEAD_SNAPSHOT_US, SPLAT_VIEW_HEAD_GPU_US, SPLAT_VIEW_HEAD_GPU_RENDER_US,
    SPLAT_VIEW_HEAD_GPU_READBACK_US, SPLAT_VIEW_HEAD_ENCODE_US, SPLAT_VIEW_HEAD_ENCODE_STRIP_US, SPLAT_VIEW_HEAD_ALLOC_US,
    SPLAT_VIEW_HEAD_TOTAL_US, -1,
    -1, -1, -1, -1, -1, SPLAT_VIEW_HEAD_SNAPSHOT_AGE_US,
};

/* The milliseconds from clock word a to clock word b (microseconds modulo 2^32, view.h). */
static double clock_ms(uint32_t a, uint32_t b) { return (int32_t)(b - a) / 1e3; }

#define MAX_FRAMES (1 << 16)

typedef struct client_result {
    uint32_t asked, answered, late, failed;
    uint32_t flags;          /* the last frame's SPLAT_VIEW_FLAG_* */
    uint32_t strips;         /* the last frame's JPEG strips */
    double *lat;             /* [answered] ms */
    double *stage[ST_COUNT]; /* [answered] ms */
    size_t *bytes;           /* [answered] the frame message's size */
    char **probe;            /* [answered] what the stall probe saw mid-message, or NULL */
    double render_ms_sum;    /* the server's time from taking a request to the rendered image (snapshot included) */
} client_result;

/* The stall probe (--probe-ms): when the rest of a frame keeps the client waiting, both ends of
 * the connection as the kernel sees them then, through sock_diag (what `ss -ti` prints): for each,
 * the bytes unacked and not yet sent, the congestion state, losses and retransmissions, the
 * window the peer advertises, the round trip. Whose wait it is: bytes not written yet, the
 * server's; written but held by TCP, the window's, the congestion window's or a lost segment's. */
static struct {
    uint32_t port;
    client_result *res;
} g_probe;

static void probe(t_ws *w, double waited_s)
{
    (void)w;
    char out[1536];
    int k = snprintf(out, sizeof out, "after %.1f ms:", waited_s * 1e3);
    struct tcp_info ti[4];
    bool server[4];
    int n = t_tcp_sockets(g_probe.port, ti, server, NULL, 4);
    for (int i = 0; i < n && k < (int)sizeof out; i++) {
        const struct tcp_info *t = &ti[i];
        k += snprintf(out + k, sizeof out - (size_t)k,
                      " %s: ca_state %u retransmits %u probes %u backoff %u unacked %u lost %u retrans %u total_retrans %u "
                      "notsent %u cwnd %u ssthresh %u snd_wnd %u rcv_ssthresh %u rtt %u/%u us rto %u ato %u last sent %u "
                      "recv %u ack %u ms, rwnd_limited %llu sndbuf_limited %llu us;",
                      server[i] ? "server" : "client", t->tcpi_ca_state, t->tcpi_retransmits, t->tcpi_probes, t->tcpi_backoff,
                      t->tcpi_unacked, t->tcpi_lost, t->tcpi_retrans, t->tcpi_total_retrans, t->tcpi_notsent_bytes,
                      t->tcpi_snd_cwnd, t->tcpi_snd_ssthresh, t->tcpi_snd_wnd, t->tcpi_rcv_ssthresh, t->tcpi_rtt,
                      t->tcpi_rttvar, t->tcpi_rto, t->tcpi_ato, t->tcpi_last_data_sent, t->tcpi_last_data_recv,
                      t->tcpi_last_ack_recv, (unsigned long long)t->tcpi_rwnd_limited,
                      (unsigned long long)t->tcpi_sndbuf_limited);
    }
    client_result *res = g_probe.res;
    if (res && res->probe && res->answered < MAX_FRAMES && !res->probe[res->answered]) res->probe[res->answered] = strdup(out);
}

/* The page's way of pulling: a request every 1/fps s while none is in flight, until the run's
 * statistics say it is done (or the connection ends). */
static bool pull(uint32_t port, uint32_t fps, uint32_t w, uint32_t h, int quality, client_result *res)
{
    t_ws ws;
    char why[600];
    double end = now_s() + 120;
    while (!t_ws_connect(&ws, port, "/ws", NULL, why, sizeof why)) {
        if (now_s() > end) return fprintf(stderr, "bench_viewer: %s\n", why), false;
        nap(0.05);
    }
    /* the first camera of the dataset, from the hello, at w x h with the same field of view */
    const uint8_t *d;
    size_t n;
    int op;
    double cam[17] = {0};
    bool have_cam = false;
    while (!have_cam && t_ws_recv(&ws, 60, &d, &n, &op) == 1) {
        if (op != T_WS_TEXT) continue;
        cJSON *j = cJSON_ParseWithLength((const char *)d, n);
        const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cameras"), 0);
        if (c0) {
            double cw = cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "w")), ch = cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "h"));
            double s = fmin(w / cw, h / ch);
            cam[0] = cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "fx")) * s;
            cam[1] = cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "fy")) * s;
            cam[2] = w / 2.0 + (cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "cx")) - cw / 2) * s;
            cam[3] = h / 2.0 + (cJSON_GetNumberValue(cJSON_GetObjectItem(c0, "cy")) - ch / 2) * s;
            for (int k = 0; k < 9; k++) cam[4 + k] = cJSON_GetArrayItem(cJSON_GetObjectItem(c0, "R"), k)->valuedouble;
            for (int k = 0; k < 3; k++) cam[13 + k] = cJSON_GetArrayItem(cJSON_GetObjectItem(c0, "T"), k)->valuedouble;
            have_cam = true;
        }
        cJSON_Delete(j);
    }
    if (!have_cam) {
        t_ws_close(&ws);
        return fprintf(stderr, "bench_viewer: no camera in the viewer's hello\n"), false;
    }
    size_t cap = MAX_FRAMES;
    res->lat = malloc(cap * sizeof *res->lat);
    for (int k = 0; k < ST_COUNT; k++) res->stage[k] = malloc(cap * sizeof(double));
    res->bytes = malloc(cap * sizeof *res->bytes);
    res->probe = calloc(cap, sizeof *res->probe);
    g_probe.port = port;
    g_probe.res = res;
    double interval = 1.0 / fps, next = now_s(), sent_at = 0;
    uint32_t inflight = 0, id = 0;
    bool done = false;
    while (!done) {
        double t = now_s();
        if (!inflight && t >= next) {
            char m[1024];
            int k = snprintf(m, sizeof m, "{\"t\":\"frame\",\"id\":%u,\"w\":%u,\"h\":%u,\"q\":%d,\"fx\":%.9g,\"fy\":%.9g,"
                             "\"cx\":%.9g,\"cy\":%.9g,\"R\":[", ++id, w, h, quality, cam[0], cam[1], cam[2], cam[3]);
            for (int i = 0; i < 9; i++) k += snprintf(m + k, sizeof m - k, "%s%.9g", i ? "," : "", cam[4 + i]);
            snprintf(m + k, sizeof m - k, "],\"T\":[%.9g,%.9g,%.9g]}", cam[13], cam[14], cam[15]);
            if (!t_ws_send_text(&ws, m)) break;
            inflight = id;
            sent_at = t;
            res->asked++;
            next += interval;
            if (next < t) next = t; /* a late answer does not bunch the next requests */
        }
        double wait = inflight ? 0.2 : fmax(0.0, next - now_s());
        int r = t_ws_recv(&ws, wait, &d, &n, &op);
        if (r < 0) break;
        if (r == 0) continue;
        if (op == T_WS_TEXT) {
            if (strstr((const char *)d, "\"done\":true")) done = true;
            if (strstr((const char *)d, "\"t\":\"error\"")) res->failed++, inflight = 0;
            continue;
        }
        if (op != T_WS_BINARY || n < SPLAT_VIEW_FRAME_HEADER + 4 || le32(d) != inflight) continue;
        double t_end = now_s(), ms = (t_end - sent_at) * 1e3;
        if (res->answered < cap) {
            uint32_t a = res->answered;
            res->lat[a] = ms;
            for (int k = 0; k < ST_COUNT; k++)
                if (stage_head[k] >= 0) res->stage[k][a] = le32(d + 4 * stage_head[k]) / 1e3;
            res->stage[ST_LATENCY][a] = ms;
            res->stage[ST_NET][a] = ms - res->stage[ST_SERVER][a];
            /* the network leg in parts, from the server's clock words and this host's clock */
            uint32_t arrived = le32(d + 4 * SPLAT_VIEW_HEAD_ARRIVED_CLOCK), written = le32(d + 4 * SPLAT_VIEW_HEAD_WRITTEN_US);
            res->stage[ST_UPLINK][a] = clock_ms(splat__view_clock_us(sent_at), arrived);
            res->stage[ST_WAKE][a] = written / 1e3 - res->stage[ST_SERVER][a];
            res->stage[ST_FIRST][a] = clock_ms(arrived + written, splat__view_clock_us(ws.msg_t0));
            res->stage[ST_REST][a] = (t_end - ws.msg_t0) * 1e3;
            res->bytes[a] = n;
            res->flags = le32(d + 4 * SPLAT_VIEW_HEAD_FLAGS);
            res->strips = le32(d + SPLAT_VIEW_FRAME_HEADER);
        }
        res->answered++;
        res->late += ms > 50;
        res->render_ms_sum += le32(d + 4 * SPLAT_VIEW_HEAD_RENDER_US) / 1e3;
        inflight = 0;
    }
    g_probe.res = NULL;
    t_ws_close(&ws);
    return true;
}

/* ------------------------------------------------------------------ --encode: the JPEG alone */

static double percentile(double *v, uint32_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[(size_t)(p * (n - 1))];
}

static int bench_encode(const char *image, uint32_t W, uint32_t H, int quality, uint32_t frames)
{
    uint8_t *px = malloc((size_t)W * H * 4);
    splat_image img = {0};
    splat_error err = {0};
    if (image && splat__image_load(image, &img, &err) != SPLAT_OK) return fprintf(stderr, "bench_viewer: %s\n", err.msg), 1;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            uint8_t *p = px + ((size_t)y * W + x) * 4;
            if (image) { /* tiled, every other tile mirrored so that no seam is sharper than the image's own edges */
                uint32_t tx = x / img.width, ty = y / img.height, ix = x % img.width, iy = y % img.height;
                if (tx & 1) ix = img.width - 1 - ix;
                if (ty & 1) iy = img.height - 1 - iy;
                memcpy(p, img.rgba + ((size_t)iy * img.width + ix) * 4, 4);
            } else { /* smooth shading, edges and a little noise, like a render */
                for (int c = 0; c < 3; c++)
                    p[c] = (uint8_t)fmin(255, fmax(0, 128 + 90 * sin(0.013 * (c + 1) * x + 0.021 * y + c) +
                                                           ((x / 97 + y / 61) % 3) * 20 + (rand() % 9) - 4));
                p[3] = 255;
            }
        }
    splat__image_free(&img);
    splat_view_encoder e;
    if (splat__view_encoder_init(&e, &err) != SPLAT_OK) return fprintf(stderr, "bench_viewer: %s\n", err.msg), 1;
    double *wall = malloc(frames * sizeof *wall), *slowest = malloc(frames * sizeof *slowest);
    double *cpu_max = malloc(frames * sizeof *cpu_max), *cpu_sum = malloc(frames * sizeof *cpu_sum);
    printf("bench_viewer --encode: %ux%u at quality %d, %s, %u frames per strip count, %ld CPUs online\n\n", W, H, quality,
           image ? image : "a synthetic image", frames, sysconf(_SC_NPROCESSORS_ONLN));
    /* the CPU times hold on a busy host too: the slowest strip's is the wall time the encode would
     * take with a core for each strip, their sum the work the strips cost in all */
    printf("| strips | wall mean (ms) | wall p95 | wall max | slowest strip, wall mean | slowest strip, CPU mean / p95 / max | "
           "CPU of all strips, mean | bytes |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (uint32_t strips = 1; strips <= SPLAT_VIEW_STRIPS; strips++) {
        size_t bytes = 0;
        for (uint32_t f = 0; f < frames + 5; f++) { /* 5 to warm up */
            double w;
            if (splat__view_encode(&e, px, W, H, quality, strips, &w, &err) != SPLAT_OK)
                return fprintf(stderr, "bench_viewer: %s\n", err.msg), 1;
            if (f < 5) continue;
            double s = 0, cm = 0, cs = 0;
            bytes = 0;
            for (uint32_t k = 0; k < e.n; k++) {
                const splat_view_strip *st = &e.strips[k];
                s = fmax(s, st->seconds), cm = fmax(cm, st->cpu_seconds), cs += st->cpu_seconds, bytes += st->jpeg.size;
            }
            wall[f - 5] = w * 1e3;
            slowest[f - 5] = s * 1e3;
            cpu_max[f - 5] = cm * 1e3;
            cpu_sum[f - 5] = cs * 1e3;
        }
        double sw = 0, ss = 0, scm = 0, scs = 0;
        for (uint32_t f = 0; f < frames; f++) sw += wall[f], ss += slowest[f], scm += cpu_max[f], scs += cpu_sum[f];
        double p95 = percentile(wall, frames, 0.95), mx = wall[frames - 1];
        double c95 = percentile(cpu_max, frames, 0.95), cmx = cpu_max[frames - 1];
        printf("| %u | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f / %.2f | %.2f | %zu |\n", e.n, sw / frames, p95, mx, ss / frames,
               scm / frames, c95, cmx, scs / frames, bytes);
    }
    splat__view_encoder_free(&e);
    free(wall);
    free(slowest);
    free(cpu_max);
    free(cpu_sum);
    free(px);
    return 0;
}

int main(int argc, char **argv)
{
    const char *data = NULL, *out = "bench-viewer-out", *splatc = SPLAT_CLI_PATH;
    uint32_t steps = 7000, fps = 30, W = 1280, H = 720, repeat = 1, factor = 0;
    int quality = 90;
    char extra[2048] = "";
    uint32_t frames = 200;
    bool encode = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--encode") == 0) {
            encode = true;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            for (int k = i + 1; k < argc; k++) {
                strncat(extra, " '", sizeof extra - strlen(extra) - 1);
                strncat(extra, argv[k], sizeof extra - strlen(extra) - 1);
                strncat(extra, "'", sizeof extra - strlen(extra) - 1);
            }
            break;
        }
        if (!v && a[0] == '-') return fprintf(stderr, "bench_viewer: %s needs a value\n", a), 2;
        if (strcmp(a, "--steps") == 0) steps = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--fps") == 0) fps = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--width") == 0) W = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--height") == 0) H = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--quality") == 0) quality = atoi(v), i++;
        else if (strcmp(a, "--repeat") == 0) repeat = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--images-factor") == 0) factor = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--out") == 0) out = v, i++;
        else if (strcmp(a, "--splatc") == 0) splatc = v, i++;
        else if (strcmp(a, "--frames") == 0) frames = (uint32_t)atoi(v), i++;
        else if (strcmp(a, "--rcvbuf") == 0) t_ws_tune.rcvbuf = atoi(v), i++;
        else if (strcmp(a, "--quickack") == 0) t_ws_tune.quickack = true;
        else if (strcmp(a, "--probe-ms") == 0) t_ws_tune.stall_s = atof(v) * 1e-3, t_ws_tune.on_stall = probe, i++;
        else if (a[0] != '-' && !data) data = a;
        else return fprintf(stderr, "bench_viewer: unknown option %s\n", a), 2;
    }
    if (encode && W && H && W <= 65500 && H <= 65500 && frames && quality >= 1 && quality <= 100)
        return bench_encode(data, W, H, quality, frames);
    if (encode || !data || !fps || !W || !H || !repeat || quality < 1 || quality > 100) {
        fprintf(stderr, "usage: bench_viewer DATA [--steps N] [--images-factor N] [--fps 30] [--width 1280 --height 720] "
                        "[--quality 90] [--repeat N] [--out DIR] [--splatc PATH]\n"
                        "                          [--rcvbuf BYTES] [--quickack] [--probe-ms MS] [-- train options]\n"
                        "       bench_viewer --encode [IMAGE] [--width 1280 --height 720] [--quality 90] [--frames 200]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    mkdir(out, 0755);
    char opts[3000];
    int k = snprintf(opts, sizeof opts, "--steps %u --no-renders -q", steps);
    if (factor) k += snprintf(opts + k, sizeof opts - (size_t)k, " --images-factor %u", factor);
    snprintf(opts + k, sizeof opts - (size_t)k, "%s", extra);
    printf("bench_viewer: %s, %u steps, a client at %u frames/s of %ux%u (JPEG quality %d), %u time(s)\n", data, steps, fps, W, H,
           quality, repeat);
    fflush(stdout);
    run_result plain[8] = {0}, viewed[8] = {0};
    client_result cl[8] = {0};
    bool same = true;
    for (uint32_t r = 0; r < repeat && r < 8; r++) {
        char cmd[8000], dir_a[1100], dir_b[1100], log[1200];
        snprintf(dir_a, sizeof dir_a, "%s/plain-%u", out, r);
        snprintf(dir_b, sizeof dir_b, "%s/viewed-%u", out, r);
        snprintf(cmd, sizeof cmd, "exec '%s' train '%s' -o '%s' %s > '%s/plain-%u.log' 2>&1", splatc, data, dir_a, opts, out, r);
        if (wait_exit(spawn(cmd)) != 0 || !read_metrics(dir_a, &plain[r]))
            return fprintf(stderr, "bench_viewer: the run without a viewer failed (%s/plain-%u.log)\n", out, r), 1;
        snprintf(log, sizeof log, "%s/viewed-%u.log", out, r);
        snprintf(cmd, sizeof cmd, "exec '%s' train '%s' -o '%s' %s --viewer 0 > '%s' 2>&1", splatc, data, dir_b, opts, log);
        unlink(log); /* an earlier run's log (the same --out) names a port nobody listens on now */
        pid_t pid = spawn(cmd);
        uint32_t port = 0;
        for (double end = now_s() + 600; !port && now_s() < end; nap(0.02)) {
            char *l = slurp(log, NULL);
            const char *at = l ? strstr(l, "viewer at http://") : NULL;
            const char *colon = at ? strchr(at + 17, ':') : NULL;
            if (colon) port = (uint32_t)strtoul(colon + 1, NULL, 10);
            free(l);
        }
        if (!port || !pull(port, fps, W, H, quality, &cl[r])) {
            kill(pid, SIGTERM);
            wait_exit(pid);
            return fprintf(stderr, "bench_viewer: no viewer to pull from (%s)\n", log), 1;
        }
        if (wait_exit(pid) != 0 || !read_metrics(dir_b, &viewed[r]))
            return fprintf(stderr, "bench_viewer: the run with a viewer failed (%s)\n", log), 1;
        char pa[1200], pb[1200];
        snprintf(pa, sizeof pa, "%s/point_cloud.ply", dir_a);
        snprintf(pb, sizeof pb, "%s/point_cloud.ply", dir_b);
        size_t na = 0, nb = 0;
        char *a = slurp(pa, &na), *b = slurp(pb, &nb);
        same = same && a && b && na == nb && memcmp(a, b, na) == 0;
        free(a);
        free(b);
    }
    printf("device: %s\n\n", plain[0].device);
    printf("| run | train s | it/s | slowdown | frames asked / answered | latency p50 / p95 / p99 / max (ms) | over 50 ms | "
           "render mean (ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (uint32_t r = 0; r < repeat && r < 8; r++) {
        client_result *c = &cl[r];
        uint32_t n = c->answered < MAX_FRAMES ? c->answered : MAX_FRAMES;
        qsort(c->lat, n, sizeof *c->lat, cmp_double);
        double p50 = n ? c->lat[n / 2] : 0, p95 = n ? c->lat[(size_t)(0.95 * (n - 1))] : 0,
               p99 = n ? c->lat[(size_t)(0.99 * (n - 1))] : 0, mx = n ? c->lat[n - 1] : 0;
        printf("| no viewer | %.2f | %.1f | | | | | |\n", plain[r].train_s, plain[r].its);
        printf("| viewer, %u fps %ux%u | %.2f | %.1f | %+.1f %% | %u / %u | %.1f / %.1f / %.1f / %.1f | %u | %.1f |\n", fps, W, H,
               viewed[r].train_s, viewed[r].its, 100.0 * (viewed[r].train_s / plain[r].train_s - 1.0), c->asked, c->answered,
               p50, p95, p99, mx, c->late, n ? c->render_ms_sum / n : 0);
    }
    /* where the time went: each stage's mean / p95 / max over every frame, and its mean over the
     * frames that came later than 50 ms (the ones to explain) */
    for (uint32_t r = 0; r < repeat && r < 8; r++) {
        client_result *c = &cl[r];
        uint32_t n = c->answered < MAX_FRAMES ? c->answered : MAX_FRAMES;
        if (!n) continue;
        printf("\nrun %u: where a frame's time goes (ms; the viewer %s training's queue; JPEG in %u strips)\n\n", r,
               c->flags & SPLAT_VIEW_FLAG_OWN_QUEUE ? "has a queue beside" : "shares", c->strips);
        printf("| stage | mean | p50 | p95 | max | mean over the %u frames > 50 ms |\n| --- | --- | --- | --- | --- | --- |\n",
               c->late);
        double *sorted = malloc(n * sizeof *sorted);
        for (int st = 0; st < ST_COUNT; st++) {
            double sum = 0, late_sum = 0;
            for (uint32_t i = 0; i < n; i++) {
                sum += c->stage[st][i];
                if (c->stage[ST_LATENCY][i] > 50) late_sum += c->stage[st][i];
            }
            memcpy(sorted, c->stage[st], n * sizeof *sorted);
            qsort(sorted, n, sizeof *sorted, cmp_double);
            char late[32] = "";
            if (c->late) snprintf(late, sizeof late, "%.1f", late_sum / c->late);
            printf("| %s | %.2f | %.2f | %.2f | %.2f | %s |\n", stage_name[st], sum / n, sorted[n / 2],
                   sorted[(size_t)(0.95 * (n - 1))], sorted[n - 1], late);
        }
        free(sorted);
        /* and each late frame on its own: a mean can hide which leg one of them lost its time in */
        if (c->late) {
            printf("\nrun %u: the frames over 50 ms (ms)\n\n| frame | latency | queued | snapshot | GPU | JPEG | growing | server "
                   "total | way in | server thread | first fragment | rest | KiB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | "
                   "--- | --- | --- | --- |\n", r);
            for (uint32_t i = 0; i < n; i++) {
                double *const *st = c->stage;
                if (st[ST_LATENCY][i] <= 50) continue;
                printf("| %u | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %zu |\n", i,
                       st[ST_LATENCY][i], st[ST_QUEUED][i], st[ST_SNAPSHOT][i], st[ST_GPU][i], st[ST_ENCODE][i], st[ST_ALLOC][i],
                       st[ST_SERVER][i], st[ST_UPLINK][i],
                       st[ST_WAKE][i], st[ST_FIRST][i], st[ST_REST][i], c->bytes[i] / 1024);
            }
        }
        /* the probe fires on late frames and on some that still made it */
        for (uint32_t i = 0; i < n; i++)
            if (c->probe[i]) printf("run %u, frame %u (latency %.1f ms), probe %s\n", r, i, c->stage[ST_LATENCY][i], c->probe[i]);
    }
    for (uint32_t r = 0; r < repeat && r < 8; r++) {
        free(cl[r].lat);
        for (int st = 0; st < ST_COUNT; st++) free(cl[r].stage[st]);
        free(cl[r].bytes);
        for (uint32_t i = 0; cl[r].probe && i < MAX_FRAMES; i++) free(cl[r].probe[i]);
        free(cl[r].probe);
    }
    printf("\npoint_cloud.ply with and without the viewer: %s\n", same ? "identical" : "DIFFERENT");
    return same ? 0 : 1;
}
