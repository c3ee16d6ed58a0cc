/* The tests' headless Chromium (browser.h). */
#include "browser.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool failed(t_browser *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool failed(t_browser *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    return false;
}

const char *t_browser_binary(void)
{
    static char found[512];
    const char *env = getenv("SPLAT_CHROMIUM");
    if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
    const char *names[] = {"/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/lib/chromium/headless_shell"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (access(names[k], X_OK) == 0) {
            snprintf(found, sizeof found, "%s", names[k]);
            return found;
        }
    return NULL;
}

static bool send_msg(t_browser *b, const char *text)
{
    size_t n = strlen(text) + 1; /* with its NUL */
    const char *p = text;
    while (n) {
        ssize_t k = write(b->to, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return failed(b, "the browser's pipe closed: %s", strerror(errno));
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* The next message (NUL-terminated JSON), parsed; NULL on timeout or a closed pipe. */
static cJSON *next_msg(t_browser *b, double end)
{
    for (;;) {
        char *nul = b->len ? memchr(b->buf, 0, b->len) : NULL;
        if (nul) {
            cJSON *j = cJSON_Parse(b->buf);
            size_t used = (size_t)(nul - b->buf) + 1;
            memmove(b->buf, b->buf + used, b->len - used);
            b->len -= used;
            if (j) return j;
            continue;
        }
        double left = end - now_s();
        if (left <= 0) return failed(b, "the browser did not answer in time"), NULL;
        struct pollfd p = {.fd = b->from, .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        if (b->cap - b->len < 65536) {
            size_t cap = b->cap ? b->cap * 2 : 1 << 20;
            char *m = realloc(b->buf, cap);
            if (!m) return failed(b, "out of memory"), NULL;
            b->buf = m;
            b->cap = cap;
        }
        ssize_t k = read(b->from, b->buf + b->len, b->cap - b->len);
        if (k <= 0) return failed(b, "the browser closed its pipe (it exited?)"), NULL;
        b->len += (size_t)k;
    }
}

cJSON *t_browser_call(t_browser *b, const char *method, const char *params, bool page, double timeout_s)
{
    int id = ++b->next_id;
    size_t n = strlen(method) + (params ? strlen(params) : 2) + 256;
    char *msg = malloc(n);
    if (!msg) return failed(b, "out of memory"), NULL;
    if (page)
        snprintf(msg, n, "{\"id\":%d,\"sessionId\":\"%s\",\"method\":\"%s\",\"params\":%s}", id, b->session, method,
                 params ? params : "{}");
    else snprintf(msg, n, "{\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method, params ? params : "{}");
    bool ok = send_msg(b, msg);
    free(msg);
    if (!ok) return NULL;
    double end = now_s() + timeout_s;
    for (;;) {
        cJSON *j = next_msg(b, end);
        if (!j) return NULL;
        const cJSON *jid = cJSON_GetObjectItem(j, "id");
        if (!cJSON_IsNumber(jid) || jid->valueint != id) {
            cJSON_Delete(j); /* an event, or an answer to an earlier call that timed out */
            continue;
        }
        cJSON *res = cJSON_DetachItemFromObject(j, "result");
        const cJSON *e = cJSON_GetObjectItem(j, "error");
        if (e || !res) {
            char *text = cJSON_PrintUnformatted(e ? e : j);
            failed(b, "%s: %s", method, text ? text : "error");
            free(text);
            cJSON_Delete(res);
            res = NULL;
        }
        cJSON_Delete(j);
        return res;
    }
}

bool t_browser_open(t_browser *b, const char *url, int width, int height, const char *dir)
{
    memset(b, 0, sizeof *b);
    b->to = b->from = -1;
    const char *bin = t_browser_binary();
    if (!bin) return failed(b, "no chromium-headless-shell or chromium (scripts/deps.sh --test installs it)");
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return failed(b, "pipe: %s", strerror(errno));
    char profile[700], window[64], log[700];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-profile", dir);
    snprintf(window, sizeof window, "--window-size=%d,%d", width, height);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    b->pid = fork();
    if (b->pid < 0) return failed(b, "fork: %s", strerror(errno));
    if (b->pid == 0) {
        /* the browser reads commands on fd 3 and writes on fd 4 */
        int r = fcntl(in[0], F_DUPFD, 10), w = fcntl(out[1], F_DUPFD, 10); /* out of the way of 3 and 4 */
        dup2(r, 3);
        dup2(w, 4);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        for (int k = 5; k < 1024; k++) close(k);
        /* the sanitizer builds preload their runtime for the tools they test, not for the browser */
        unsetenv("LD_PRELOAD");
        unsetenv("ASAN_OPTIONS");
        unsetenv("LSAN_OPTIONS");
        unsetenv("UBSAN_OPTIONS");
        execl(bin, bin, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
              "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
              "--disable-renderer-backgrounding", "--disable-background-timer-throttling", "--mute-audio",
              "--hide-scrollbars", profile, window, "about:blank", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    b->to = in[1];
    b->from = out[0];
    char params[2048];
    snprintf(params, sizeof params, "{\"url\":\"%s\"}", url);
    cJSON *r = t_browser_call(b, "Target.createTarget", params, false, 60);
    const char *target = r ? cJSON_GetStringValue(cJSON_GetObjectItem(r, "targetId")) : NULL;
    if (!target) {
        cJSON_Delete(r);
        return false;
    }
    snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", target);
    cJSON_Delete(r);
    r = t_browser_call(b, "Target.attachToTarget", params, false, 30);
    const char *session = r ? cJSON_GetStringValue(cJSON_GetObjectItem(r, "sessionId")) : NULL;
    if (session) snprintf(b->session, sizeof b->session, "%s", session);
    cJSON_Delete(r);
    if (!session) return false;
    snprintf(params, sizeof params, "{\"width\":%d,\"height\":%d,\"deviceScaleFactor\":1,\"mobile\":false}", width, height);
    r = t_browser_call(b, "Emulation.setDeviceMetricsOverride", params, true, 30);
    cJSON_Delete(r);
    if (!r) return false;
    /* the page has loaded (an evaluation during the navigation would see its context destroyed) */
    double end = now_s() + 60;
    while (now_s() < end) {
        char *v = t_browser_eval(b, "document.readyState === 'complete' && location.href !== 'about:blank'", 10);
        bool done = v && strcmp(v, "true") == 0;
        free(v);
        if (done) return true;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return failed(b, "%s did not load in a minute", url);
}

char *t_browser_eval(t_browser *b, const char *expr, double timeout_s)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "expression", expr);
    cJSON_AddBoolToObject(p, "awaitPromise", true);
    cJSON_AddBoolToObject(p, "returnByValue", true);
    char *params = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    cJSON *r = params ? t_browser_call(b, "Runtime.evaluate", params, true, timeout_s) : NULL;
    free(params);
    if (!r) return NULL;
    char *out = NULL;
    const cJSON *ex = cJSON_GetObjectItem(r, "exceptionDetails");
    if (ex) {
        char *text = cJSON_PrintUnformatted(ex);
        failed(b, "the page threw: %.900s", text ? text : "?");
        free(text);
    } else {
        const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "value");
        out = v ? cJSON_PrintUnformatted(v) : strdup("null");
    }
    cJSON_Delete(r);
    return out;
}

static bool mouse(t_browser *b, const char *type, double x, double y, int buttons)
{
    char params[256];
    snprintf(params, sizeof params, "{\"type\":\"%s\",\"x\":%g,\"y\":%g,\"button\":\"left\",\"buttons\":%d,\"clickCount\":1}",
             type, x, y, buttons);
    cJSON *r = t_browser_call(b, "Input.dispatchMouseEvent", params, true, 30);
    cJSON_Delete(r);
    return r != NULL;
}

bool t_browser_drag(t_browser *b, double x0, double y0, double x1, double y1, int steps)
{
    bool ok = mouse(b, "mouseMoved", x0, y0, 0) && mouse(b, "mousePressed", x0, y0, 1);
    for (int k = 1; ok && k <= steps; k++)
        ok = mouse(b, "mouseMoved", x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps, 1);
    return ok && mouse(b, "mouseReleased", x1, y1, 0);
}

bool t_browser_key(t_browser *b, const char *key, const char *code, int keycode, double hold_s)
{
    char params[256];
    snprintf(params, sizeof params, "{\"type\":\"keyDown\",\"key\":\"%s\",\"code\":\"%s\",\"windowsVirtualKeyCode\":%d}", key,
             code, keycode);
    cJSON *r = t_browser_call(b, "Input.dispatchKeyEvent", params, true, 30);
    if (!r) return false;
    cJSON_Delete(r);
    struct timespec ts = {(time_t)hold_s, (long)((hold_s - (time_t)hold_s) * 1e9)};
    nanosleep(&ts, NULL);
    snprintf(params, sizeof params, "{\"type\":\"keyUp\",\"key\":\"%s\",\"code\":\"%s\",\"windowsVirtualKeyCode\":%d}", key, code,
             keycode);
    r = t_browser_call(b, "Input.dispatchKeyEvent", params, true, 30);
    cJSON_Delete(r);
    return r != NULL;
}

bool t_browser_screenshot(t_browser *b, const char *path)
{
    cJSON *r = t_browser_call(b, "Page.captureScreenshot", "{\"format\":\"png\"}", true, 60);
    const char *data = r ? cJSON_GetStringValue(cJSON_GetObjectItem(r, "data")) : NULL;
    size_t n = 0;
    unsigned char *png = data ? t_base64_decode(data, &n) : NULL;
    cJSON_Delete(r);
    FILE *f = png ? fopen(path, "wb") : NULL;
    bool ok = f && fwrite(png, 1, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    free(png);
    return ok || (b->error[0] ? false : failed(b, "cannot write %s", path));
}

void t_browser_close(t_browser *b)
{
    if (b->pid > 0) {
        cJSON *r = b->to >= 0 ? t_browser_call(b, "Browser.close", NULL, false, 10) : NULL;
        cJSON_Delete(r);
        double end = now_s() + 10;
        int status;
        while (waitpid(b->pid, &status, WNOHANG) == 0) {
            if (now_s() > end) {
                kill(b->pid, SIGKILL);
                waitpid(b->pid, &status, 0);
                break;
            }
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (b->to >= 0) close(b->to);
    if (b->from >= 0) close(b->from);
    free(b->buf);
    memset(b, 0, sizeof *b);
    b->to = b->from = -1;
}

unsigned char *t_base64_decode(const char *in, size_t *n)
{
    size_t len = strlen(in);
    unsigned char *out = malloc(len / 4 * 3 + 3);
    if (!out) return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (const char *p = in; *p && *p != '='; p++) {
        int v;
        char c = *p;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+') v = 62;
        else if (c == '/') v = 63;
        else {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    *n = k;
    return out;
}
