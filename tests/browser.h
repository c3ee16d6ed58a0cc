/* Headless Chromium for the viewer's tests, driven over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: JSON messages ending in a NUL byte, commands on the browser's fd 3,
 * answers and events on its fd 4), so the tests need no WebSocket client or npm package to
 * drive it. Debian's chromium-headless-shell, else chromium (scripts/deps.sh --test installs the
 * first); SPLAT_CHROMIUM names another binary. */
#ifndef SPLAT_TEST_BROWSER_H
#define SPLAT_TEST_BROWSER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct cJSON cJSON;

typedef struct t_browser {
    pid_t pid;
    int to, from;            /* our ends of its fd 3 and fd 4 */
    char *buf;               /* bytes read, not yet a whole message */
    size_t len, cap;
    int next_id;
    char session[128];       /* the page's session */
    char error[1024];        /* the last failure */
} t_browser;

/* The browser's binary, or NULL when none is installed. */
const char *t_browser_binary(void);
/* Starts the browser with a width x height window (its profile and log under `dir`) and opens
 * `url` in a page. False, with b->error, on a failure. */
bool t_browser_open(t_browser *b, const char *url, int width, int height, const char *dir);
/* Calls `method` with `params` (JSON text; NULL: none) on the page, or on the browser itself when
 * `page` is false; the result (cJSON_Delete it), or NULL with b->error. */
cJSON *t_browser_call(t_browser *b, const char *method, const char *params, bool page, double timeout_s);
/* Evaluates `expr` in the page (awaiting a promise): the value as JSON text (free it), or NULL
 * with b->error (a thrown error's text included). */
char *t_browser_eval(t_browser *b, const char *expr, double timeout_s);
/* A left-button drag from (x0, y0) to (x1, y1) in `steps` moves, as a mouse does it. */
bool t_browser_drag(t_browser *b, double x0, double y0, double x1, double y1, int steps);
/* A key held for `hold_s` seconds: key "w", code "KeyW", its Windows key code. */
bool t_browser_key(t_browser *b, const char *key, const char *code, int keycode, double hold_s);
/* A PNG of the page into `path`. */
bool t_browser_screenshot(t_browser *b, const char *path);
void t_browser_close(t_browser *b);

/* Decodes base64 `in` into a malloc'd buffer of *n bytes; NULL on bad input. */
unsigned char *t_base64_decode(const char *in, size_t *n);

#endif
