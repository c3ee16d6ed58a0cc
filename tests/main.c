#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TESTS 1024

static struct test_entry {
    const char *name;
    splat_test_fn fn;
} g_tests[MAX_TESTS];
static int g_count;
static int g_failed;
static uint64_t g_seed;
static splat_rng g_rng;
static char g_dir[256];
static char g_path[512];

void splat_test_register(const char *name, splat_test_fn fn)
{
    if (g_count == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    g_tests[g_count].name = name;
    g_tests[g_count].fn = fn;
    g_count++;
}

int t_fail_after = -1;

static void *failing_alloc(void *user, size_t size)
{
    (void)user;
    if (t_fail_after == 0) return NULL;
    if (t_fail_after > 0) t_fail_after--;
    return malloc(size ? size : 1);
}

static void *failing_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (t_fail_after == 0) return NULL;
    if (t_fail_after > 0) t_fail_after--;
    return realloc(p, size ? size : 1);
}

static void plain_free(void *user, void *p)
{
    (void)user;
    free(p);
}

const splat_allocator t_failing_allocator = {failing_alloc, failing_realloc, plain_free, NULL};

const char *splat_test_errmsg(const splat_error *err) { return err ? err->msg : ""; }

void splat_test_fail(const char *file, int line, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: %s ", file, line, what);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (seed %llu)\n", (unsigned long long)g_seed);
    va_end(ap);
    g_failed = 1;
}

int splat_test_failed(void) { return g_failed; }
splat_rng *splat_test_rng(void) { return &g_rng; }
uint64_t splat_test_seed(void) { return g_seed; }
double t_uniform(double lo, double hi) { return lo + (hi - lo) * splat__rng_uniform(&g_rng); }

const char *splat_test_path(const char *name)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/splatc-test-%d", (int)getpid());
        if (mkdir(g_dir, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "cannot create %s: %s\n", g_dir, strerror(errno));
            exit(2);
        }
    }
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    return g_path;
}

int splat_test_cli(const char *env, const char *args, char **out)
{
    char cmd[4096], log[600];
    snprintf(log, sizeof log, "%s", splat_test_path("cli.log"));
    snprintf(cmd, sizeof cmd, "env %s timeout 300 %s %s >'%s' 2>&1", env, SPLAT_CLI_PATH, args, log);
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

static void remove_dir(void)
{
    if (!g_dir[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const struct test_entry *)a)->name, ((const struct test_entry *)b)->name);
}

static uint64_t fresh_seed(void)
{
    const char *env = getenv("SPLAT_SEED");
    if (env && *env) return strtoull(env, NULL, 10);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000003ull) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

/* A test that crashes says where (a test run on another machine leaves no core): the stack as
 * addresses in the binary (`addr2line -f -e splatc_tests +OFFSET` names them), then the signal
 * kills the process as it would have. Not under ASan, which reports crashes itself. */
#if !defined(__SANITIZE_ADDRESS__)
static void on_crash(int sig)
{
    static const char head[] = "\n[CRASH] signal in the test above; stack:\n";
    ssize_t w = write(2, head, sizeof head - 1);
    (void)w;
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif

static void catch_crashes(void)
{
#if !defined(__SANITIZE_ADDRESS__)
    void *warm[1];
    backtrace(warm, 1); /* loads libgcc now, not inside the handler */
    const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) signal(sigs[k], on_crash);
#endif
}

static int run_one(int i)
{
    g_failed = 0;
    g_seed = fresh_seed();
    splat__rng_seed(&g_rng, g_seed);
    printf("[ RUN  ] %s (seed %llu)\n", g_tests[i].name, (unsigned long long)g_seed);
    fflush(stdout);
    double t0 = splat__now();
    g_tests[i].fn();
    extern int splat_test_after_case(void);
    if (splat_test_after_case() != 0) g_failed = 1;
    printf("[ %s ] %s (%.2f s)\n", g_failed ? "FAIL" : " OK ", g_tests[i].name, splat__now() - t0);
    fflush(stdout);
    return g_failed;
}

int main(int argc, char **argv)
{
    qsort(g_tests, (size_t)g_count, sizeof g_tests[0], cmp_names);
    if (argc < 2 || strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < g_count; i++) printf("%s\n", g_tests[i].name);
        return 0;
    }
    catch_crashes();
    int failures = 0, ran = 0;
    for (int a = 1; a < argc; a++) {
        int all = strcmp(argv[a], "--all") == 0;
        size_t plen = strlen(argv[a]);
        int prefix = plen > 0 && argv[a][plen - 1] == '*';
        for (int i = 0; i < g_count; i++) {
            const char *n = g_tests[i].name;
            if (all || strcmp(n, argv[a]) == 0 || (prefix && strncmp(n, argv[a], plen - 1) == 0)) {
                failures += run_one(i);
                ran++;
            }
        }
    }
    if (ran == 0) {
        fprintf(stderr, "no test matches\n");
        return 2;
    }
    if (failures == 0) remove_dir();
    return failures ? 1 : 0;
}
