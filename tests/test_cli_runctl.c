/* The splatc tool end to end, as a user runs it: stopping a run with a signal and going on from
 * what it saved, intermediate saves, the log, cameras.json, flythroughs. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "io/io.h"
#include "io/io_util.h"

/* ----------------------------------------------------------------- running the tool */

/* Starts the tool with argv (argv[0] is ignored: the tool's path goes there), stdout and stderr
 * into `out`. */
static pid_t spawn(const char *const *args, const char *out)
{
    const char *argv[40];
    int n = 0;
    argv[n++] = SPLAT_CLI_PATH;
    for (int k = 1; args[k] && n < 39; k++) argv[n++] = args[k];
    argv[n] = NULL;
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        execv(SPLAT_CLI_PATH, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* The exit code; 128 + N when killed by signal N; -1 when it ran past `timeout` seconds (then it
 * is killed). */
static int wait_exit(pid_t pid, double timeout)
{
    double t0 = splat__now();
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0) return -1;
        if (splat__now() - t0 > timeout) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        usleep(2000);
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = s ? fread(s, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    if (s) s[got] = '\0';
    fclose(f);
    if (len) *len = got;
    return s;
}

static bool has_text(const char *path, const char *text)
{
    char *s = slurp(path, NULL);
    bool yes = s && strstr(s, text);
    free(s);
    return yes;
}

static int count_text(const char *path, const char *text)
{
    char *s = slurp(path, NULL);
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, text)); p += strlen(text)) n++;
    free(s);
    return n;
}

/* Waits until `path` holds `text` (true), or the process ended or `timeout` passed (false). */
static bool wait_for_text(const char *path, const char *text, pid_t pid, double timeout)
{
    double t0 = splat__now();
    while (splat__now() - t0 < timeout) {
        if (has_text(path, text)) return true;
        if (waitpid(pid, NULL, WNOHANG) == pid) return false;
        usleep(2000);
    }
    return false;
}

/* Runs the tool to its end; the exit code (-1 past 5 minutes). */
static int run(const char *const *args, const char *out) { return wait_exit(spawn(args, out), 300); }

static bool same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Files in `dir` whose name starts with `prefix`. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* A path in the case's scratch folder that stays valid for the case (splat_test_path's does not). */
static const char *tpath(const char *name)
{
    static char pool[16][1100];
    static int k;
    char *s = pool[k++ % 16];
    snprintf(s, sizeof pool[0], "%s", splat_test_path(name));
    return s;
}

/* Files in `dir` whose name contains `part`. */
static int count_containing(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static const char *demo(const char *name, uint32_t size, uint32_t views)
{
    static char dir[600];
    char sz[16], nv[16];
    snprintf(dir, sizeof dir, "%s", splat_test_path(name));
    snprintf(sz, sizeof sz, "%u", size);
    snprintf(nv, sizeof nv, "%u", views);
    const char *args[] = {"", "demo", dir, "--size", sz, "--views", nv, "-q", NULL};
    int rc = run(args, tpath("demo.out"));
    if (rc != 0) splat_test_fail(__FILE__, __LINE__, "demo:", "exit %d", rc);
    return rc == 0 ? dir : NULL;
}

static char *cat(const char *a, const char *b)
{
    static char buf[8][1100];
    static int k;
    char *s = buf[k++ % 8], tmp[sizeof buf[0]];
    snprintf(tmp, sizeof tmp, "%s/%s", a, b); /* a or b may be an earlier result */
    memcpy(s, tmp, sizeof tmp);
    return s;
}

static bool t_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static bool ply_loads(const char *path)
{
    splat_scene s;
    splat_error err = {0};
    bool ok = splat_scene_load_ply(path, &s, &err) == SPLAT_OK && s.count > 0;
    if (ok) splat_scene_free(&s);
    return ok;
}

static bool ckpt_reads(const char *path)
{
    splat_section *secs;
    uint32_t n;
    splat_error err = {0};
    if (splat__ckpt_read(path, &secs, &n, &err) != SPLAT_OK) return false;
    splat__ckpt_free(secs, n);
    return n > 0;
}

/* ------------------------------------------------------------------ stopping and going on */

/* The log: every line a JSON object (cJSON) with a step, the steps increasing; the fields a plot
 * needs on the progress lines; *last_psnr the held-out PSNR of the last line (NAN without). */
static void check_log(const char *path, uint32_t must_have_step, uint32_t last_step, double *last_psnr)
{
    char *text = slurp(path, NULL);
    T_REQUIRE(text, "no log at %s", path);
    double prev = -1, step = -1;
    int lines = 0;
    bool found = false;
    *last_psnr = NAN;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        cJSON *j = cJSON_Parse(line);
        T_CHECK(cJSON_IsObject(j), "line %d is not a JSON object: %s", lines + 1, line);
        const cJSON *s = cJSON_GetObjectItem(j, "step");
        T_CHECK(cJSON_IsNumber(s), "line %d has no step: %s", lines + 1, line);
        step = cJSON_IsNumber(s) ? s->valuedouble : -1;
        T_CHECK(step > prev, "line %d: step %g after %g", lines + 1, step, prev);
        prev = step;
        found |= step == must_have_step;
        const char *fields[] = {"loss", "train_psnr", "gaussians", "it_per_sec", "gpu_memory_bytes", "seconds"};
        for (size_t k = 0; k < SPLAT_COUNTOF(fields); k++)
            T_CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, fields[k])), "line %d has no %s: %s", lines + 1, fields[k], line);
        const cJSON *psnr = cJSON_GetObjectItem(j, "psnr");
        *last_psnr = cJSON_IsNumber(psnr) ? psnr->valuedouble : NAN;
        T_CHECK(!psnr || step == last_step, "an evaluation before the end, at step %g: %s", step, line);
        cJSON_Delete(j);
    }
    T_CHECK(lines > 1 && found, "%d lines, none at step %u", lines, must_have_step);
    T_CHECK(step == last_step, "the last line is at step %g, not %u", step, last_step);
    free(text);
}

/* How long a run's training loop took, from its log's last line (its step over its rate; the
 * line's "seconds" count the loading too); 0 when there is none. */
static double last_train_seconds(const char *path)
{
    char *text = slurp(path, NULL), *last = NULL;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) last = line;
    cJSON *j = last ? cJSON_Parse(last) : NULL;
    const cJSON *step = j ? cJSON_GetObjectItem(j, "step") : NULL, *rate = j ? cJSON_GetObjectItem(j, "it_per_sec") : NULL;
    double v = cJSON_IsNumber(step) && cJSON_IsNumber(rate) && rate->valuedouble > 0 ? step->valuedouble / rate->valuedouble : 0;
    cJSON_Delete(j);
    free(text);
    return v;
}

/* Ctrl-C in the middle of a run: exit 130, a PLY and a checkpoint that load, and a resume from it
 * ends on the bytes of a run that was never stopped. SIGUSR1 (save now), --save-every,
 * --checkpoint-every and --log leave those bytes alone too; the log reads as JSON lines. */
SPLAT_TEST(cli_interrupt_resume)
{
    const char *dir = demo("demo", 32, 8);
    if (!dir) return;
    uint32_t steps = 100 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 60), every = 7 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 30);
    char s_steps[16], s_every[16], s_ckpt[16];
    snprintf(s_steps, sizeof s_steps, "%u", steps);
    snprintf(s_every, sizeof s_every, "%u", every);
    snprintf(s_ckpt, sizeof s_ckpt, "%u", every + 5);
    const char *a = tpath("a"), *c = tpath("c");
    const char *out = tpath("run.out"), *clog = tpath("c.log");

    const char *alog = tpath("a.log");
    const char *plain[] = {"", "train", dir, "-o", a, "--steps", s_steps, "--log", alog, "-q", "--no-renders", NULL};
    T_REQUIRE(run(plain, out) == 0, "the plain run failed");
    /* The pause before the signal stays within the first half of the plain run's training loop: on
     * an H100 the loop takes about 50 ms, on lavapipe seconds. A signal that still comes after the
     * loop (the process busy elsewhere) quits at once; then again with a shorter pause, the last
     * time none. */
    double train_s = last_train_seconds(alog);
    T_REQUIRE(train_s > 0, "the plain run's log has no training rate");
    uint64_t pause_us = (uint64_t)SPLAT_MIN(500000.0, 0.5e6 * train_s) + 1;

    /* stopped by SIGINT once it logged a step, after a random pause */
    const char *b = NULL, *blog = NULL;
    uint32_t k = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", attempt);
        b = tpath(name);
        snprintf(name, sizeof name, "b%d.log", attempt);
        blog = tpath(name);
        const char *stopped[] = {"", "train", dir, "-o", b, "--steps", s_steps, "--log", blog, "-q", "--no-renders", NULL};
        pid_t pid = spawn(stopped, out);
        T_REQUIRE(wait_for_text(blog, "\"step\"", pid, 120), "the run never logged a step");
        uint64_t bound = attempt == 2 ? 1 : (pause_us >> (2 * attempt)) + 1;
        uint64_t pause = splat__rng_u64(splat_test_rng()) % bound;
        usleep((useconds_t)pause);
        kill(pid, SIGINT);
        int rc = wait_exit(pid, 120);
        char *text = slurp(out, NULL);
        const char *at = text ? strstr(text, "stopped at step ") : NULL;
        k = at ? (uint32_t)strtoul(at + strlen("stopped at step "), NULL, 10) : 0;
        bool late = !at && text && strstr(text, "interrupted: exiting");
        printf("  attempt %d: signal %.1f ms after the first logged step: %s\n", attempt, pause / 1e3,
               at ? "stopped in the loop" : late ? "came after the loop" : "?");
        if (late && attempt < 2) {
            free(text);
            continue;
        }
        T_CHECK(rc == 130, "exit %d: %s", rc, text ? text : "");
        T_REQUIRE(at && k > 0 && k < steps, "not stopped in the middle of the run (at %u of %u): %s", k, steps, text ? text : "");
        free(text);
        break;
    }
    T_CHECK(ply_loads(cat(b, "point_cloud.ply")), "the stopped run's PLY does not load");
    T_CHECK(ckpt_reads(cat(b, "checkpoint.ckpt")), "the stopped run's checkpoint does not read");
    T_CHECK(exists(cat(b, "cameras.json")) && !exists(cat(b, "metrics.json")), "cameras.json, and no evaluation");

    const char *resumed[] = {"", "train", dir, "-o", b, "--steps", s_steps, "--resume", cat(b, "checkpoint.ckpt"),
                             "--log", blog, "-q", "--no-renders", NULL};
    T_CHECK(run(resumed, out) == 0, "the resume failed");
    T_CHECK(same_bytes(cat(a, "point_cloud.ply"), cat(b, "point_cloud.ply")),
            "stopped at %u and resumed, the PLY differs from the run that was not stopped", k);
    double psnr;
    check_log(blog, k, steps, &psnr);
    T_CHECK(psnr > 10 && psnr < 99, "the last line's held-out PSNR: %g", psnr);

    /* every control point at once, and a save requested mid-run */
    const char *flags[] = {"", "train", dir, "-o", c, "--steps", s_steps, "--save-every", s_every, "--checkpoint-every",
                           s_ckpt, "--log", clog, "--no-renders", NULL};
    pid_t pid = spawn(flags, out);
    T_REQUIRE(wait_for_text(clog, "\"step\"", pid, 120), "the run never logged a step");
    kill(pid, SIGUSR1);
    int rc = wait_exit(pid, 300);
    /* one save for one signal, not one at every later stop of the loop */
    int saves = count_text(out, "saved at step");
    T_CHECK(rc == 0 && saves == 1, "exit %d, %d saves for one SIGUSR1", rc, saves);
    T_CHECK(same_bytes(cat(a, "point_cloud.ply"), cat(c, "point_cloud.ply")), "the flags changed the trained PLY");
    for (uint32_t s = every; s <= steps; s += every) {
        char name[64];
        snprintf(name, sizeof name, "point_cloud_%u.ply", s);
        T_CHECK(ply_loads(cat(c, name)), "%s does not load", name);
        if (s == steps) T_CHECK(same_bytes(cat(c, name), cat(c, "point_cloud.ply")), "the last save is not the result");
    }
    T_CHECK(count_prefixed(c, "point_cloud_") == (int)(steps / every), "%d saves, not %u", count_prefixed(c, "point_cloud_"),
            steps / every);
    check_log(clog, steps, steps, &psnr);
}

/* SIGTERM stops and saves as Ctrl-C does, with 143. A second Ctrl-C while the first is being
 * served quits at once, and whatever was being written is the old file or the new one. */
SPLAT_TEST(cli_interrupt_signals)
{
    const char *dir = demo("demo", 32, 8);
    if (!dir) return;
    const char *o = tpath("o"), *out = tpath("run.out"), *log = tpath("run.log");
    const char *args[] = {"", "train", dir, "-o", o, "--steps", "100000", "--log", log, "--no-renders", NULL};
    pid_t pid = spawn(args, out);
    T_REQUIRE(wait_for_text(log, "\"step\"", pid, 120), "the run never logged a step");
    kill(pid, SIGTERM);
    int rc = wait_exit(pid, 120);
    T_CHECK(rc == 143 && has_text(out, "stopped at step"), "SIGTERM: exit %d", rc);
    T_CHECK(ply_loads(cat(o, "point_cloud.ply")) && ckpt_reads(cat(o, "checkpoint.ckpt")), "SIGTERM: the saved files");

    /* The second signal must come while the first is served (the iterations in flight finish,
     * then the files are written): sent as soon as the tool says it is stopping. Should the save
     * win that race (the tool says it stopped), try again. */
    bool seen = false;
    for (int attempt = 0; attempt < 4 && !seen; attempt++) {
        unlink(log);
        pid = spawn(args, out);
        T_REQUIRE(wait_for_text(log, "\"step\"", pid, 120), "the run never logged a step");
        kill(pid, SIGINT);
        T_REQUIRE(wait_for_text(out, "stopping after the current iteration", pid, 60), "no word of stopping");
        kill(pid, SIGINT);
        double t0 = splat__now();
        rc = wait_exit(pid, 120);
        double took = splat__now() - t0;
        char *text = slurp(out, NULL);
        if (text && strstr(text, "stopped at step")) {
            printf("  attempt %d: the save finished before the second Ctrl-C\n", attempt + 1);
        } else {
            seen = true;
            T_CHECK(rc == 130 && text && strstr(text, "interrupted again: exiting now"), "exit %d: %s", rc, text ? text : "");
            T_CHECK(took < 5, "the second Ctrl-C took %.1f s", took);
        }
        free(text);
        /* whatever the moment, the files are whole */
        T_CHECK(ply_loads(cat(o, "point_cloud.ply")) && ckpt_reads(cat(o, "checkpoint.ckpt")), "a torn file");
    }
    T_CHECK(seen, "in 4 attempts the run saved and stopped despite a second Ctrl-C sent while it was stopping");
}

/* Whether every PLY in `dir` loads, the ones in `seen` [*n_seen] (names, whole already and never
 * written again) apart, which the newly checked join; and whether point_cloud.ply does. */
static bool plys_whole(const char *dir, char (*seen)[64], int *n_seen, int max_seen, char *bad, size_t size)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || n >= 64 || strcmp(e->d_name + n - 4, ".ply") != 0) continue;
        bool again = strcmp(e->d_name, "point_cloud.ply") == 0, known = false;
        for (int k = 0; k < *n_seen && !again && !known; k++) known = strcmp(seen[k], e->d_name) == 0;
        if (known) continue;
        ok = ply_loads(cat(dir, e->d_name));
        if (!ok) snprintf(bad, size, "%.63s", e->d_name);
        else if (!again && *n_seen < max_seen) memcpy(seen[(*n_seen)++], e->d_name, n + 1); /* n < 64 */
    }
    closedir(d);
    return ok;
}

/* A kill at any moment leaves every output whole: the old file or the new one. The run rewrites its
 * checkpoint every step, writes a PLY every other step and, asked by SIGUSR1 every tenth look,
 * point_cloud.ply; it is stopped (SIGSTOP) at hundreds of random moments, and each time the files
 * are what a kill at that moment would leave, and are checked; the looks that found a temporary
 * are the moments a write was under way. Then a real SIGKILL, and a resume from the checkpoint,
 * whose writer clears the temporary the kill left. */
SPLAT_TEST(cli_kill_leaves_whole_files)
{
    const char *dir = demo("demo", 32, 8);
    if (!dir) return;
    const char *o = tpath("o"), *out = tpath("run.out"), *log = tpath("run.log");
    const char *args[] = {"", "train", dir, "-o", o, "--steps", "100000", "--checkpoint-every", "1", "--save-every", "2",
                          "--log", log, "-q", "--no-renders", NULL};
    pid_t pid = spawn(args, out);
    /* the log's first line comes before the first checkpoint */
    double t0 = splat__now();
    while (!exists(cat(o, "checkpoint.ckpt")) && waitpid(pid, NULL, WNOHANG) == 0 && splat__now() - t0 < 120) usleep(2000);
    T_REQUIRE(exists(cat(o, "checkpoint.ckpt")), "the run never wrote a checkpoint");
    static char seen[4096][64];
    int n_seen = 0, looks = 300, mid_write = 0, i;
    char bad[64] = "";
    /* On a fast machine a write is over in a sliver of each step: the looks go on, up to ten times
     * as many, until one has come during a write */
    for (i = 0; i < looks || (mid_write == 0 && i < 10 * looks); i++) {
        usleep((useconds_t)(splat__rng_u64(splat_test_rng()) % 20000));
        kill(pid, SIGSTOP);
        int status;
        T_REQUIRE(waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status), "the run ended");
        mid_write += count_containing(o, ".tmp-") > 0;
        T_CHECK(ckpt_reads(cat(o, "checkpoint.ckpt")), "look %d: the checkpoint does not read", i);
        T_CHECK(plys_whole(o, seen, &n_seen, 4096, bad, sizeof bad), "look %d: %s does not load", i, bad);
        kill(pid, SIGCONT);
        if (i % 10 == 9) kill(pid, SIGUSR1);
        if (splat_test_failed()) break;
    }
    printf("  %d of %d looks came while a file was being written\n", mid_write, i);
    T_CHECK(mid_write > 0, "no look came while a file was being written: the test proved nothing");
    kill(pid, SIGKILL);
    T_CHECK(wait_exit(pid, 60) == 128 + SIGKILL);
    T_CHECK(ckpt_reads(cat(o, "checkpoint.ckpt")) && plys_whole(o, seen, &n_seen, 4096, bad, sizeof bad), "after the kill");

    /* a temporary as a kill mid-write leaves it, for the resume's first checkpoint to clear */
    char stale[1200];
    snprintf(stale, sizeof stale, "%s/checkpoint.ckpt.tmp-%d-AbCdEf", o, (int)pid);
    T_REQUIRE(t_write_file(stale, "partial", 7));
    const char *resume[] = {"", "train", dir, "-o", o, "--steps", "100000", "--checkpoint-every", "1", "--resume",
                            cat(o, "checkpoint.ckpt"), "--log", log, "-q", "--no-renders", NULL};
    unlink(log);
    pid = spawn(resume, out);
    T_REQUIRE(wait_for_text(log, "\"step\"", pid, 120), "the resume never logged a step");
    kill(pid, SIGINT);
    T_CHECK(wait_exit(pid, 120) == 130);
    T_CHECK(count_prefixed(o, "checkpoint.ckpt.tmp-") == 0, "the killed run's temporary is still there");
}

/* metrics.json that cannot be written when the run ends fails the run (exit 1, naming it), the
 * trained PLY kept: a script reading the exit status must not take a run without metrics for a
 * whole one. The folder in its place appears after the checks before the work
 * (cli_outputs_checked_first): the run is stopped (SIGSTOP) once cameras.json is written, before
 * its first step, and goes on with the blocker there. A run that ended first (a slow look) is run
 * again with more steps. */
SPLAT_TEST(cli_metrics_write_fails)
{
    const char *dir = demo("demo", 32, 4);
    if (!dir) return;
    const char *out = tpath("run.out");
    for (uint32_t attempt = 0, steps = 50 + (uint32_t)t_uniform(0, 50); attempt < 3; attempt++, steps *= 4) {
        char o[40], st[16];
        snprintf(o, sizeof o, "o%u", attempt);
        const char *od = tpath(o);
        snprintf(st, sizeof st, "%u", steps);
        const char *args[] = {"", "train", dir, "-o", od, "--steps", st, "--no-renders", "-q", NULL};
        pid_t pid = spawn(args, out);
        double t0 = splat__now();
        while (!exists(cat(od, "cameras.json")) && waitpid(pid, NULL, WNOHANG) == 0 && splat__now() - t0 < 120) usleep(500);
        kill(pid, SIGSTOP);
        bool blocked = mkdir(cat(od, "metrics.json"), 0755) == 0;
        kill(pid, SIGCONT);
        int rc = wait_exit(pid, 300);
        if (!blocked) {
            printf("  attempt %u: the run of %u steps wrote metrics.json before the look (exit %d)\n", attempt, steps, rc);
            continue;
        }
        T_CHECK(rc == 1 && has_text(out, "metrics.json") && ply_loads(cat(od, "point_cloud.ply")), "%u steps: exit %d, PLY %s",
                steps, rc, exists(cat(od, "point_cloud.ply")) ? "kept" : "missing");
        return;
    }
    T_CHECK(false, "three runs ended before the test could put a folder in metrics.json's place");
}

/* ------------------------------------------------------------------ cameras.json */

/* A PNG file against a render through the library, byte for byte. */
static uint32_t png_differs(const char *path, const float *img, const splat_camera *c)
{
    splat_image png;
    splat_error err = {0};
    if (splat__image_load(path, &png, &err) != SPLAT_OK) return UINT32_MAX;
    uint32_t differ = png.width == c->width && png.height == c->height ? 0 : UINT32_MAX;
    for (uint32_t p = 0; differ == 0 && p < c->width * c->height; p++)
        for (int ch = 0; ch < 3; ch++)
            differ += png.rgba[4 * p + ch] != (uint8_t)lrintf(255.0f * fminf(fmaxf(img[3 * p + ch], 0.0f), 1.0f));
    splat__image_free(&png);
    return differ;
}

/* `splatc train` leaves OUT/cameras.json, and `splatc render --cameras` of it renders every view
 * of the dataset as the library renders the dataset's own cameras (at the size training loads the
 * images: --images-factor 2 here), bit for bit, each named after its image (as the test renders of
 * training are). */
SPLAT_TEST(cli_cameras_json_renders)
{
    const char *dir = demo("demo", 48 + 8 * (uint32_t)(splat__rng_u64(splat_test_rng()) % 3), 9);
    if (!dir) return;
    const char *o = tpath("o"), *r = tpath("r"), *out = tpath("run.out");
    const char *train[] = {"", "train", dir, "-o", o, "--steps", "20", "--eval", "--images-factor", "2", "-q", NULL};
    T_REQUIRE(run(train, out) == 0, "training failed");
    const char *render[] = {"", "render", cat(o, "point_cloud.ply"), "--cameras", cat(o, "cameras.json"), "-o", r, "-q", NULL};
    T_REQUIRE(run(render, out) == 0, "render --cameras failed");

    splat_dataset ds;
    splat_error err = {0};
    T_OK(splat__dataset_load(&(splat_dataset_desc){.path = dir, .eval = true, .images_factor = 2}, &ds, &err), &err);
    splat_camera *cams;
    char **names;
    uint32_t n;
    T_OK(splat_read_cameras_named(cat(o, "cameras.json"), &cams, &names, &n, &err), &err);
    T_CHECK(n == ds.n_views, "%u cameras, %u views", n, ds.n_views);
    splat_scene s;
    splat_ctx *ctx;
    T_OK(splat_scene_load_ply(cat(o, "point_cloud.ply"), &s, &err), &err);
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);
    for (uint32_t v = 0; v < n && v < ds.n_views; v++) {
        const splat_data_view *dv = &ds.views[v];
        char base[256];
        snprintf(base, sizeof base, "%s", dv->name);
        *strrchr(base, '.') = '\0';
        T_CHECK(memcmp(&cams[v], &dv->camera, sizeof cams[v]) == 0 && strcmp(names[v], base) == 0,
                "camera %u (%s) is not view %s's", v, names[v], dv->name);
        float *img = NULL;
        T_OK(splat_render(ctx, &s, &dv->camera, 1, &(splat_render_desc){0}, &img, &err), &err);
        char png[300];
        snprintf(png, sizeof png, "%s.png", base);
        uint32_t differ = png_differs(cat(r, png), img, &dv->camera);
        T_CHECK(differ == 0, "%s: %u values differ from the library's render of the view", png, differ);
        splat_free(img);
        /* the test renders of training: named after their images too, one per held-out view */
        T_CHECK(exists(cat(cat(o, "renders"), png)) == dv->is_test, "renders/%s", png);
    }
    T_CHECK(count_prefixed(r, "") == (int)ds.n_views + 2, "other files in the render folder");
    /* two cameras whose names come to one file name ("a.png", "a.jpg"): every render numbered,
     * none written over another */
    const uint32_t u = (uint32_t)t_uniform(0, n - 1);
    const char *two[2] = {"a.png", "a.jpg"};
    const char *r2 = tpath("r2");
    T_OK(splat_write_cameras(cat(o, "two.json"), &cams[u], two, 2, &err), &err);
    const char *render2[] = {"", "render", cat(o, "point_cloud.ply"), "--cameras", cat(o, "two.json"), "-o", r2, "-q", NULL};
    T_REQUIRE(run(render2, out) == 0, "render --cameras with one name twice failed");
    T_CHECK(!exists(cat(r2, "a.png")) && count_prefixed(r2, "render_") == 2, "the renders of a.png and a.jpg: %d numbered",
            count_prefixed(r2, "render_"));
    for (uint32_t k = 0; k < 2; k++) {
        float *img = NULL;
        T_OK(splat_render(ctx, &s, &cams[u + k], 1, &(splat_render_desc){0}, &img, &err), &err);
        char png[32];
        snprintf(png, sizeof png, "render_%04u.png", k);
        T_CHECK(png_differs(cat(r2, png), img, &cams[u + k]) == 0, "%s is not camera %u's render", png, u + k);
        splat_free(img);
    }
    splat_free(cams);
    splat_free(names);
    splat_scene_free(&s);
    splat_ctx_free(ctx);
    splat__dataset_free(&ds);
}

/* ------------------------------------------------------------------ flythroughs */

static void centre_of(const splat_camera *c, double out[3])
{
    for (int a = 0; a < 3; a++) out[a] = -(c->R[a] * c->t[0] + c->R[3 + a] * c->t[1] + c->R[6 + a] * c->t[2]);
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The distance of point p from camera c's optical axis. */
static double off_axis(const splat_camera *c, const double p[3])
{
    double e[3], v[3], f[3] = {c->R[6], c->R[7], c->R[8]};
    centre_of(c, e);
    for (int a = 0; a < 3; a++) v[a] = p[a] - e[a];
    double along = dot3(v, f) / sqrt(dot3(f, f)), len2 = dot3(v, v);
    return sqrt(fmax(0, len2 - along * along)) + (along <= 0 ? 1e9 : 0);
}

/* The frames of an orbit as a circle: every camera looks at `p`, stands `height` above it along
 * `up` at `radius` from the axis, the frames 2 pi / n apart in order; frame k's PNG is the
 * library's render of frame k's camera. */
static void check_orbit(const char *dir, const splat_scene *scene, splat_ctx *ctx, uint32_t n, const double p[3],
                        const double up[3], double radius, double height, const double start[3])
{
    splat_camera *cams;
    uint32_t m;
    splat_error err = {0};
    T_OK(splat_read_cameras(cat(dir, "path.json"), &cams, &m, &err), &err);
    T_REQUIRE(m == n, "%u cameras in path.json, not %u", m, n);
    T_CHECK(count_prefixed(dir, "frame_") == (int)n, "%d frames, not %u", count_prefixed(dir, "frame_"), n);
    double tol = 1e-4 * (radius + fabs(height));
    for (uint32_t k = 0; k < n; k++) {
        double e[3], v[3];
        centre_of(&cams[k], e);
        for (int a = 0; a < 3; a++) v[a] = e[a] - p[a];
        double h = dot3(v, up), r[3] = {v[0] - h * up[0], v[1] - h * up[1], v[2] - h * up[2]}, rl = sqrt(dot3(r, r));
        T_CHECK(off_axis(&cams[k], p) < tol, "frame %u looks %g away from the centre", k, off_axis(&cams[k], p));
        T_CHECK(fabs(h - height) < tol && fabs(rl - radius) < tol, "frame %u: height %g radius %g, want %g %g", k, h, rl,
                height, radius);
        /* its angle on the circle, from `start` (a direction across the axis) */
        double b[3] = {up[1] * start[2] - up[2] * start[1], up[2] * start[0] - up[0] * start[2],
                       up[0] * start[1] - up[1] * start[0]};
        double angle = atan2(dot3(r, b), dot3(r, start)), want = 2 * M_PI * k / n;
        double diff = remainder(angle - want, 2 * M_PI);
        T_CHECK(fabs(diff) < 1e-4, "frame %u at %g rad, want %g", k, angle, want);
        float *img = NULL;
        T_OK(splat_render(ctx, scene, &cams[k], 1, &(splat_render_desc){0}, &img, &err), &err);
        char png[32];
        snprintf(png, sizeof png, "frame_%04u.png", k);
        T_CHECK(png_differs(cat(dir, png), img, &cams[k]) == 0, "%s is not the render of its camera", png);
        splat_free(img);
    }
    splat_free(cams);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --orbit N around the cameras of a training run (where their axes meet, their mean up, height and
 * distance) and around a scene's bounds alone (its median, +z up, 3x the 90th percentile of the
 * distances, 25 degrees up); --path renders a path file; a path of two sizes is refused. */
SPLAT_TEST(cli_orbit_and_path)
{
    const char *dir = demo("demo", 32, 8);
    if (!dir) return;
    const char *o = tpath("o"), *out = tpath("run.out");
    const char *train[] = {"", "train", dir, "-o", o, "--steps", "1", "-q", "--no-renders", NULL};
    T_REQUIRE(run(train, out) == 0, "training failed");
    uint32_t n = 3 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 6);
    char sn[16];
    snprintf(sn, sizeof sn, "%u", n);
    char gt[1100];
    snprintf(gt, sizeof gt, "%s/ground_truth.ply", dir);
    const char *orb = tpath("orbit"), *bounds = tpath("bounds");
    const char *around[] = {"", "render", gt, "--orbit", sn, "--cameras", cat(o, "cameras.json"), "--size", "40x36",
                            "--no-video", "-o", orb, "-q", NULL};
    T_REQUIRE(run(around, out) == 0, "--orbit around the cameras failed");
    const char *plain[] = {"", "render", gt, "--orbit", sn, "--size", "40x30", "--no-video", "-o", bounds, "-q", NULL};
    T_REQUIRE(run(plain, out) == 0, "--orbit around the bounds failed");

    splat_error err = {0};
    splat_scene s;
    splat_ctx *ctx;
    T_OK(splat_scene_load_ply(gt, &s, &err), &err);
    T_OK(splat_ctx_init(&ctx, NULL, &err), &err);

    /* the circle the cameras give, computed here from its definition */
    splat_camera *cams;
    uint32_t m;
    T_OK(splat_read_cameras(cat(o, "cameras.json"), &cams, &m, &err), &err);
    double A[9] = {0}, bv[3] = {0}, up[3] = {0};
    for (uint32_t i = 0; i < m; i++) {
        double f[3] = {cams[i].R[6], cams[i].R[7], cams[i].R[8]}, e[3], fl = sqrt(dot3(f, f));
        centre_of(&cams[i], e);
        for (int a = 0; a < 3; a++) {
            up[a] -= cams[i].R[3 + a];
            for (int k = 0; k < 3; k++) {
                double x = (a == k) - f[a] * f[k] / (fl * fl);
                A[a * 3 + k] += x, bv[a] += x * e[k];
            }
        }
    }
    double ul = sqrt(dot3(up, up));
    for (int a = 0; a < 3; a++) up[a] /= ul;
    /* A p = b by Gaussian elimination */
    double M[3][4];
    for (int a = 0; a < 3; a++) {
        for (int k = 0; k < 3; k++) M[a][k] = A[a * 3 + k];
        M[a][3] = bv[a];
    }
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++)
            if (row != col) {
                double f = M[row][col] / M[col][col];
                for (int k = 0; k < 4; k++) M[row][k] -= f * M[col][k];
            }
    double p[3] = {M[0][3] / M[0][0], M[1][3] / M[1][1], M[2][3] / M[2][2]}, radius = 0, height = 0, start[3];
    for (uint32_t i = 0; i < m; i++) {
        double e[3], v[3];
        centre_of(&cams[i], e);
        for (int a = 0; a < 3; a++) v[a] = e[a] - p[a];
        double h = dot3(v, up), r[3] = {v[0] - h * up[0], v[1] - h * up[1], v[2] - h * up[2]};
        radius += sqrt(dot3(r, r)) / m, height += h / m;
        if (i == 0)
            for (int a = 0; a < 3; a++) start[a] = r[a] / sqrt(dot3(r, r));
    }
    /* the demo's cameras look at the origin from 3.2 away */
    T_CHECK(sqrt(dot3(p, p)) < 1e-3 && fabs(sqrt(radius * radius + height * height) - 3.2) < 0.5, "p %g %g %g", p[0], p[1],
            p[2]);
    check_orbit(orb, &s, ctx, n, p, up, radius, height, start);
    /* its intrinsics: the first camera's fields of view at 40x36 (not the cameras' 4:3), centred */
    splat_camera *oc;
    uint32_t on;
    T_OK(splat_read_cameras(cat(orb, "path.json"), &oc, &on, &err), &err);
    for (uint32_t k = 0; k < on; k++) {
        double fx = cams[0].fx * 40.0 / cams[0].width, fy = cams[0].fy * 36.0 / cams[0].height;
        T_CHECK(oc[k].width == 40 && oc[k].height == 36 && fabs(oc[k].fx - fx) < 1e-4 * fx && fabs(oc[k].fy - fy) < 1e-4 * fy &&
                    oc[k].cx == 20 && oc[k].cy == 18,
                "orbit camera %u: %ux%u f %g %g c %g %g, want 40x36 f %g %g c 20 18", k, oc[k].width, oc[k].height, oc[k].fx,
                oc[k].fy, oc[k].cx, oc[k].cy, fx, fy);
    }
    splat_free(cams);

    /* the circle of the bounds */
    double *v = malloc(sizeof *v * s.count), med[3], z[3] = {0, 0, 1};
    for (int a = 0; a < 3; a++) {
        for (uint32_t i = 0; i < s.count; i++) v[i] = s.means[3 * i + a];
        qsort(v, s.count, sizeof *v, cmp_d);
        med[a] = v[s.count / 2];
    }
    for (uint32_t i = 0; i < s.count; i++) {
        double d[3] = {s.means[3 * i] - med[0], s.means[3 * i + 1] - med[1], s.means[3 * i + 2] - med[2]};
        v[i] = sqrt(dot3(d, d));
    }
    qsort(v, s.count, sizeof *v, cmp_d);
    double dist = 3 * v[(uint32_t)(0.9 * (s.count - 1))], el = 25 * M_PI / 180, x[3] = {1, 0, 0};
    free(v);
    check_orbit(bounds, &s, ctx, n, med, z, dist * cos(el), dist * sin(el), x);

    /* a path: the orbit's own cameras give its frames again */
    const char *path_dir = tpath("path");
    const char *path[] = {"", "render", gt, "--path", cat(orb, "path.json"), "--no-video", "-o", path_dir, "-q", NULL};
    T_REQUIRE(run(path, out) == 0, "--path failed");
    for (uint32_t k = 0; k < n; k++) {
        char png[32];
        snprintf(png, sizeof png, "frame_%04u.png", k);
        T_CHECK(same_bytes(cat(orb, png), cat(path_dir, png)), "--path frame %u differs from the orbit's", k);
    }
    T_CHECK(count_prefixed(path_dir, "frame_") == (int)n);
    /* the path at another size and shape: each frame the render of its camera with the intrinsics
     * scaled by the sizes, axis by axis */
    const char *path2_dir = tpath("path2");
    const char *path2[] = {"", "render", gt, "--path", cat(orb, "path.json"), "--size", "20x40", "--no-video", "-o", path2_dir,
                           "-q", NULL};
    T_REQUIRE(run(path2, out) == 0, "--path --size failed");
    for (uint32_t k = 0; k < on; k++) {
        splat_camera c = oc[k];
        c.fx *= 20.0f / 40, c.cx *= 20.0f / 40, c.fy *= 40.0f / 36, c.cy *= 40.0f / 36, c.width = 20, c.height = 40;
        float *img = NULL;
        T_OK(splat_render(ctx, &s, &c, 1, &(splat_render_desc){0}, &img, &err), &err);
        char png[32];
        snprintf(png, sizeof png, "frame_%04u.png", k);
        T_CHECK(png_differs(cat(path2_dir, png), img, &c) == 0, "--path --size 20x40: %s is not the render of its camera", png);
        splat_free(img);
    }
    splat_free(oc);
    const char *mixed[] = {"", "render", gt, "--path", cat(o, "cameras.json"), "-o", path_dir, NULL};
    char *json = slurp(cat(o, "cameras.json"), NULL);
    T_REQUIRE(json);
    char *w = strstr(strstr(json, "\"width\": ") + 1, "\"width\": ");
    T_REQUIRE(w);
    w[9] = '4'; /* the second camera 4x wider, or so */
    FILE *f = fopen(cat(o, "two-sizes.json"), "wb");
    T_REQUIRE(f);
    fputs(json, f);
    fclose(f);
    free(json);
    mixed[4] = cat(o, "two-sizes.json");
    int rc = run(mixed, out);
    T_CHECK(rc == 1 && has_text(out, "two-sizes.json") && has_text(out, "share one size"), "exit %d", rc);

    /* usage errors, before any work */
    const char *bad[][12] = {
        {"", "render", gt, "--orbit", "0", "-o", path_dir, NULL},
        {"", "render", gt, "--orbit", "3", "--size", "0x5", "-o", path_dir, NULL},
        {"", "render", gt, "--orbit", "3", "--up", "0,0,0", "-o", path_dir, NULL},
        {"", "render", gt, "--orbit", "3", "--path", cat(orb, "path.json"), "-o", path_dir, NULL},
        {"", "render", gt, "--orbit", "3", "--camera", "8,8,8,8,4,4,1,0,0,0,0,0,3", "-o", path_dir, NULL},
        {"", "render", gt, "--cameras", cat(o, "cameras.json"), "--size", "8x8", "-o", path_dir, NULL},
        {"", "train", dir, "-o", path_dir, "--save-every", "x", NULL},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(bad); k++) {
        rc = run(bad[k], out);
        T_CHECK(rc == 2, "case %zu: exit %d", k, rc);
    }
    splat_scene_free(&s);
    splat_ctx_free(ctx);
}

/* The video: ffmpeg is run as a child with the frames; its failure is an error that leaves the
 * video that was there; without ffmpeg on the PATH the frames are the result. A stand-in ffmpeg
 * (a script) checks what splatc asks of it; the real one, where installed, makes a video of N
 * frames. */
SPLAT_TEST(cli_orbit_video)
{
    const char *dir = demo("demo", 32, 8);
    if (!dir) return;
    const char *bin = tpath("bin"), *o = tpath("o"), *args_log = tpath("ffmpeg.args");
    mkdir(bin, 0755);
    FILE *f = fopen(cat(bin, "ffmpeg"), "wb");
    T_REQUIRE(f);
    fprintf(f, "#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s'\nfor a; do out=$a; done\necho fake > \"$out\"\nexit ${FAKE_RC:-0}\n",
            args_log);
    fclose(f);
    chmod(cat(bin, "ffmpeg"), 0755);
    uint32_t n = 2 + (uint32_t)(splat__rng_u64(splat_test_rng()) % 4);
    char cmd[4000];
    char gt[1100];
    snprintf(gt, sizeof gt, "%s/ground_truth.ply", dir);
    const char *log = tpath("run.out");
    snprintf(cmd, sizeof cmd, "PATH='%s':\"$PATH\" timeout 300 %s render '%s' --orbit %u --size 32x24 --fps 12 -o '%s' -q >'%s' 2>&1",
             bin, SPLAT_CLI_PATH, gt, n, o, log);
    int rc = system(cmd);
    T_REQUIRE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "with a stand-in ffmpeg: exit %d", WEXITSTATUS(rc));
    char *video = slurp(cat(o, "video.mp4"), NULL), *args = slurp(args_log, NULL), want[1200];
    T_CHECK(video && strcmp(video, "fake\n") == 0, "video.mp4 is not what ffmpeg wrote");
    snprintf(want, sizeof want, "-framerate\n12\n-i\n%s/frame_%%04d.png\n-frames:v\n%u\n", o, n);
    T_CHECK(args && strstr(args, want), "ffmpeg was asked for: %s", args ? args : "");
    T_CHECK(count_prefixed(o, "video.mp4.") == 0, "a temporary was left");
    free(video), free(args);

    /* ffmpeg fails: an error naming it; the old video stays */
    snprintf(cmd, sizeof cmd, "FAKE_RC=3 PATH='%s':\"$PATH\" timeout 300 %s render '%s' --orbit %u --size 32x24 -o '%s' -q >'%s' 2>&1",
             bin, SPLAT_CLI_PATH, gt, n, o, log);
    rc = system(cmd);
    T_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 1 && has_text(log, "ffmpeg failed (exit status 3)"), "exit %d",
            WEXITSTATUS(rc));
    T_CHECK(has_text(cat(o, "video.mp4"), "fake") && count_prefixed(o, "video.mp4.") == 0, "the old video was touched");

    /* no ffmpeg at all */
    const char *none = tpath("none");
    snprintf(cmd, sizeof cmd, "PATH='%s' %s render '%s' --orbit %u --size 32x24 -o '%s' >'%s' 2>&1", bin, SPLAT_CLI_PATH, gt,
             n, none, log);
    unlink(cat(bin, "ffmpeg"));
    rc = system(cmd);
    T_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0 && has_text(log, "ffmpeg is not on the PATH") && !exists(cat(none, "video.mp4")) &&
            count_prefixed(none, "frame_") == (int)n, "without ffmpeg: exit %d", WEXITSTATUS(rc));

    /* the real one */
    if (system("command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1") != 0) {
        printf("  ffmpeg is not installed here: the real video is not checked\n");
        return;
    }
    const char *real = tpath("real");
    snprintf(cmd, sizeof cmd, "timeout 300 %s render '%s' --orbit %u --size 33x25 -o '%s' -q >'%s' 2>&1", SPLAT_CLI_PATH, gt,
             n, real, log);
    rc = system(cmd);
    T_REQUIRE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "with ffmpeg: exit %d", WEXITSTATUS(rc));
    snprintf(cmd, sizeof cmd, "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames "
                              "-of csv=p=0 '%s/video.mp4' > '%s'", real, log);
    T_REQUIRE(system(cmd) == 0, "ffprobe cannot read the video");
    char *frames = slurp(log, NULL);
    T_CHECK(frames && strtoul(frames, NULL, 10) == n, "the video has %s frames, not %u", frames ? frames : "?", n);
    free(frames);
}
