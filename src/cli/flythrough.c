/* splatc: flythroughs. The cameras of an orbit, and the video of the frames through ffmpeg run as
 * a child process (no library: without ffmpeg the frames are the result). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define PI 3.14159265358979323846

/* ------------------------------------------------------------------ vectors */

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross(const double a[3], const double b[3], double out[3])
{
    double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    memcpy(out, c, sizeof c);
}

static bool normalize(double v[3])
{
    double n = sqrt(dot(v, v));
    if (!(n > 1e-12)) return false;
    for (int k = 0; k < 3; k++) v[k] /= n;
    return true;
}

/* A camera at `eye` looking at `target` (OpenCV: x right, y down, z forward), `up` the world's. */
static void look_at(const double eye[3], const double target[3], const double up[3], uint32_t w, uint32_t h, double fx,
                    double fy, splat_camera *c)
{
    double f[3] = {target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]}, r[3], d[3];
    normalize(f);
    cross(f, up, r);
    normalize(r);
    cross(f, r, d);
    const double *rows[3] = {r, d, f};
    memset(c, 0, sizeof *c);
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) c->R[a * 3 + b] = (float)rows[a][b];
        c->t[a] = (float)-dot(rows[a], eye);
    }
    c->width = w, c->height = h;
    c->fx = (float)fx, c->fy = (float)fy;
    c->cx = 0.5f * (float)w, c->cy = 0.5f * (float)h;
}

/* ------------------------------------------------------------------ the centre */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the Gaussians' centres, axis by axis (floaters do not pull it), and the 90th
 * percentile of their distances from it. */
static bool scene_centre(const splat_scene *s, double centre[3], double *extent)
{
    if (s->count == 0) return false;
    double *v = malloc(sizeof *v * s->count);
    if (!v) return false;
    for (int a = 0; a < 3; a++) {
        for (uint32_t i = 0; i < s->count; i++) v[i] = s->means[3 * i + a];
        qsort(v, s->count, sizeof *v, cmp_double);
        centre[a] = v[s->count / 2];
    }
    for (uint32_t i = 0; i < s->count; i++) {
        double d[3] = {s->means[3 * i] - centre[0], s->means[3 * i + 1] - centre[1], s->means[3 * i + 2] - centre[2]};
        v[i] = sqrt(dot(d, d));
    }
    qsort(v, s->count, sizeof *v, cmp_double);
    *extent = v[(uint32_t)(0.9 * (s->count - 1))];
    free(v);
    if (!(*extent > 0)) *extent = 1;
    return true;
}

/* The point nearest to every camera's optical axis (least squares): where the cameras look. False
 * when the axes are near parallel (a forward-facing capture) and no such point stands out. */
static bool focus_point(const splat_camera *cams, uint32_t n, double p[3])
{
    double A[9] = {0}, b[3] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const float *R = cams[i].R, *t = cams[i].t;
        double f[3] = {R[6], R[7], R[8]}, c[3];
        normalize(f);
        for (int a = 0; a < 3; a++) c[a] = -(R[a] * t[0] + R[3 + a] * t[1] + R[6 + a] * t[2]);
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 3; k++) {
                double m = (a == k) - f[a] * f[k];
                A[a * 3 + k] += m;
                b[a] += m * c[k];
            }
    }
    double C[9] = {A[4] * A[8] - A[5] * A[7], A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                   A[5] * A[6] - A[3] * A[8], A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                   A[3] * A[7] - A[4] * A[6], A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
    double det = A[0] * C[0] + A[1] * C[3] + A[2] * C[6], tr = (A[0] + A[4] + A[8]) / 3;
    /* det over (trace / 3)^3 is the product of the eigenvalues relative to their mean, cubed */
    if (!(tr > 0) || !(det > 1e-3 * tr * tr * tr)) return false;
    for (int a = 0; a < 3; a++) p[a] = (C[a * 3] * b[0] + C[a * 3 + 1] * b[1] + C[a * 3 + 2] * b[2]) / det;
    return true;
}

/* ------------------------------------------------------------------ the orbit */

bool orbit_cameras(const splat_scene *scene, const splat_camera *given, uint32_t n_given, const orbit_desc *d,
                   splat_camera *out, char *msg, size_t size)
{
    double p[3], up[3] = {0, 0, 1}, a[3], b[3], radius, height, extent = 1;
    uint32_t w = d->width, h = d->height;
    double fx, fy;
    bool have_scene = scene_centre(scene, p, &extent);
    if (d->have_up) memcpy(up, d->up, sizeof up);
    if (n_given > 0) {
        /* up: the cameras' mean up (-y of each); the centre: where their axes meet, else the scene's */
        if (!d->have_up) {
            up[0] = up[1] = up[2] = 0;
            for (uint32_t i = 0; i < n_given; i++)
                for (int k = 0; k < 3; k++) up[k] -= given[i].R[3 + k];
            if (!normalize(up)) {
                snprintf(msg, size, "the cameras' up directions cancel out: give --up X,Y,Z");
                return false;
            }
        }
        if (!focus_point(given, n_given, p) && !have_scene) {
            snprintf(msg, size, "the cameras do not look at one point and the scene has no Gaussians: no centre to orbit");
            return false;
        }
        /* the circle: the cameras' mean height above the centre and mean distance from the axis,
         * starting at the first camera's side */
        radius = height = 0;
        for (uint32_t i = 0; i < n_given; i++) {
            const float *R = given[i].R, *t = given[i].t;
            double v[3];
            for (int k = 0; k < 3; k++) v[k] = -(R[k] * t[0] + R[3 + k] * t[1] + R[6 + k] * t[2]) - p[k];
            double hi = dot(v, up), r[3] = {v[0] - hi * up[0], v[1] - hi * up[1], v[2] - hi * up[2]};
            radius += sqrt(dot(r, r)) / n_given;
            height += hi / n_given;
            if (i == 0) memcpy(a, r, sizeof a);
        }
        if (!(radius > 1e-9 * (fabs(height) + 1)) || !normalize(a)) {
            snprintf(msg, size, "the cameras stand on the orbit's axis: no circle around it (give --up X,Y,Z)");
            return false;
        }
        const splat_camera *c0 = &given[0];
        if (!w) w = c0->width, h = c0->height;
        fx = c0->fx * (double)w / c0->width;
        fy = c0->fy * (double)h / c0->height;
    } else {
        /* from the bounds: 3x the 90th percentile of the distances from the median, 25 degrees above
         * the horizon; a 50-degree horizontal field of view */
        if (!have_scene) {
            snprintf(msg, size, "the scene has no Gaussians and no cameras were given: no orbit");
            return false;
        }
        if (!normalize(up)) {
            snprintf(msg, size, "--up must not be zero");
            return false;
        }
        double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        int least = 0;
        for (int k = 1; k < 3; k++)
            if (fabs(dot(axes[k], up)) < fabs(dot(axes[least], up))) least = k;
        double along = dot(axes[least], up);
        for (int k = 0; k < 3; k++) a[k] = axes[least][k] - along * up[k];
        normalize(a);
        double el = 25 * PI / 180, dist = 3 * extent;
        radius = dist * cos(el);
        height = dist * sin(el);
        if (!w) w = 800, h = 600;
        fx = fy = 0.5 * w / tan(25 * PI / 180);
    }
    cross(up, a, b);
    for (uint32_t k = 0; k < d->frames; k++) {
        double th = 2 * PI * k / d->frames, eye[3];
        for (int i = 0; i < 3; i++) eye[i] = p[i] + height * up[i] + radius * (cos(th) * a[i] + sin(th) * b[i]);
        look_at(eye, p, up, w, h, fx, fy, &out[k]);
    }
    return true;
}

/* ------------------------------------------------------------------ the video */

bool ffmpeg_on_path(void)
{
    const char *path = getenv("PATH");
    if (!path) return false;
    char dir[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s/ffmpeg", (int)n, n ? path : ".");
        if (access(dir, X_OK) == 0) return true;
        path += n + (path[n] == ':');
    }
    return false;
}

bool video_encode(const char *dir, uint32_t frames, uint32_t fps, char *msg, size_t size)
{
    char input[1100], tmp[1100], out[1100], rate[16], count[16];
    snprintf(input, sizeof input, "%s/frame_%%04d.png", dir);
    snprintf(out, sizeof out, "%s/video.mp4", dir);
    snprintf(tmp, sizeof tmp, "%s/video.mp4.tmp-%ld.mp4", dir, (long)getpid());
    snprintf(rate, sizeof rate, "%u", fps);
    snprintf(count, sizeof count, "%u", frames);
    /* yuv420p (what players take) needs even sizes: pad by a pixel where odd. -frames:v: frames
     * of an earlier, longer flythrough in the same folder are not this one's. */
    char *argv[] = {"ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-framerate", rate, "-i", input,
                    "-frames:v", count, "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p", "-f", "mp4", tmp, NULL};
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, size, "cannot start ffmpeg: %s", strerror(errno));
        return false;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        execvp("ffmpeg", argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(msg, size, "ffmpeg: %s", strerror(errno));
            unlink(tmp);
            return false;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status)) snprintf(msg, size, "ffmpeg failed (exit status %d) making %s", WEXITSTATUS(status), out);
        else snprintf(msg, size, "ffmpeg was killed by signal %d making %s", WTERMSIG(status), out);
        unlink(tmp);
        return false;
    }
    /* durable before it takes the name, as the library's atomic writes */
    int fd = open(tmp, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    if (fd < 0 || rename(tmp, out) != 0) {
        snprintf(msg, size, "ffmpeg exited without writing %s", out);
        unlink(tmp);
        return false;
    }
    return true;
}
