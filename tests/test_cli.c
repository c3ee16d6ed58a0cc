/* The splatc tool: exit codes, messages and outputs, run as a user runs it. */
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

/* Runs the tool with `args` (shell words), capturing stderr+stdout into *out (caller frees).
 * Returns the exit code. */
static int run_cli(const char *args, char **out)
{
    char cmd[4096], log[600];
    snprintf(log, sizeof log, "%s", splat_test_path("cli.log"));
    snprintf(cmd, sizeof cmd, "%s %s >'%s' 2>&1", SPLAT_CLI_PATH, args, log);
    int rc = system(cmd);
    FILE *f = fopen(log, "rb");
    *out = calloc(1, 1 << 20);
    if (f) {
        size_t n = fread(*out, 1, (1 << 20) - 1, f);
        (*out)[n] = '\0';
        fclose(f);
    }
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

SPLAT_TEST(cli_usage_errors)
{
    char *out;
    T_CHECK(run_cli("", &out) == 2);
    free(out);
    T_CHECK(run_cli("frobnicate", &out) == 2 && strstr(out, "unknown command"), "%s", out);
    free(out);
    T_CHECK(run_cli("train --steps -3 x -o y", &out) == 2 && strstr(out, "--steps"), "%s", out);
    free(out);
    T_CHECK(run_cli("train --help", &out) == 0 && strstr(out, "--max-gaussians-per-tile"), "%s", out);
    free(out);
    const char *cmds[] = {"render", "eval", "demo", "info"};
    for (size_t k = 0; k < SPLAT_COUNTOF(cmds); k++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", cmds[k]);
        T_CHECK(run_cli(a, &out) == 0 && strstr(out, "usage"), "%s: %s", cmds[k], out);
        free(out);
    }
}

/* A dataset whose cameras.bin is truncated: a clear message naming the file, a non-zero exit,
 * and no output written. */
SPLAT_TEST(cli_train_bad_dataset)
{
    char dir[600], args[2048], out_dir[600], path[700];
    snprintf(dir, sizeof dir, "%s", splat_test_path("bad"));
    snprintf(out_dir, sizeof out_dir, "%s", splat_test_path("bad-out"));
    char mk[1400];
    snprintf(mk, sizeof mk, "mkdir -p '%s/sparse/0' '%s/images'", dir, dir);
    T_REQUIRE(system(mk) == 0);
    /* cameras.bin claiming 5 cameras, holding part of one */
    snprintf(path, sizeof path, "%s/sparse/0/cameras.bin", dir);
    FILE *f = fopen(path, "wb");
    T_REQUIRE(f);
    uint64_t n = 5;
    uint32_t partial[3] = {1, 1, 640};
    fwrite(&n, 8, 1, f);
    fwrite(partial, 4, 1 + (size_t)(splat__rng_u64(splat_test_rng()) % 3), f);
    fclose(f);
    snprintf(args, sizeof args, "train '%s' -o '%s' --steps 10 -q", dir, out_dir);
    char *out;
    int rc = run_cli(args, &out);
    T_CHECK(rc == 1, "exit code %d", rc);
    T_CHECK(strstr(out, "cameras.bin") != NULL, "message does not name the file: %s", out);
    snprintf(path, sizeof path, "%s/point_cloud.ply", out_dir);
    T_CHECK(!exists(path), "an output was written");
    free(out);
    /* a PLY that is not one */
    snprintf(path, sizeof path, "%s/junk.ply", dir);
    f = fopen(path, "wb");
    T_REQUIRE(f);
    fputs("ply\nformat binary_little_endian 1.0\nelement vertex 10\nproperty float x\nend_header\n", f);
    fclose(f);
    snprintf(args, sizeof args, "render '%s' --camera 8,8,8,8,4,4,1,0,0,0,0,0,3 -o '%s/r'", path, out_dir);
    rc = run_cli(args, &out);
    T_CHECK(rc == 1 && strstr(out, "junk.ply"), "exit %d: %s", rc, out);
    free(out);
}

/* The whole job on a tiny demo: outputs exist, the PLY reads back, metrics are written. */
SPLAT_TEST(cli_demo_train_render)
{
    char dir[600], out_dir[600], args[2048], path[700];
    snprintf(dir, sizeof dir, "%s", splat_test_path("demo"));
    snprintf(out_dir, sizeof out_dir, "%s", splat_test_path("out"));
    char *out;
    snprintf(args, sizeof args, "demo '%s' --size 32 --views 8 -q", dir);
    T_REQUIRE(run_cli(args, &out) == 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "train '%s' -o '%s' --steps 30 --eval", dir, out_dir);
    int rc = run_cli(args, &out);
    T_CHECK(rc == 0 && strstr(out, "PSNR"), "exit %d: %s", rc, out);
    free(out);
    snprintf(path, sizeof path, "%s/point_cloud.ply", out_dir);
    splat_scene s;
    splat_error err = {0};
    T_OK(splat_scene_load_ply(path, &s, &err), &err);
    T_CHECK(s.count > 0 && s.sh_degree == 3, "%u Gaussians, degree %u", s.count, s.sh_degree);
    splat_scene_free(&s);
    snprintf(path, sizeof path, "%s/metrics.json", out_dir);
    T_CHECK(exists(path));
    snprintf(path, sizeof path, "%s/renders/view_000.png", out_dir);
    T_CHECK(exists(path), "the held-out view 0 was not rendered");
    snprintf(args, sizeof args, "render '%s/point_cloud.ply' --camera 32,24,30,30,16,12,1,0,0,0,0,0,3.2 -o '%s/r' -q", out_dir,
             out_dir);
    T_CHECK(run_cli(args, &out) == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/r/render_0000.png", out_dir);
    T_CHECK(exists(path));
}
