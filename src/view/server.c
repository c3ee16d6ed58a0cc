/* view: the HTTP/WebSocket server, on libwebsockets' event loop in a thread of its own.
 *
 * HTTP serves the page's files from the table embedded at build time and nothing else: a path
 * that is not exactly one of its names is a 404, so no request reaches the disk. A WebSocket is a
 * client of the viewer (view.h, protocol.c): its messages are taken whole (at most
 * SPLAT_VIEW_MAX_MESSAGE bytes; larger ones are dropped to their end), and what it is sent goes
 * out a fragment per writable callback, so a slow client only delays itself, and one that
 * vanishes mid-frame just closes. Anything malformed is ignored with a log line.
 *
 * Bound to the loopback address (the default), requests must name a loopback host, so that a web
 * page elsewhere cannot reach the viewer through DNS rebinding; browsers' WebSockets must come
 * from the viewer's own page (their Origin is the Host), so another site the user has open
 * cannot drive it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "view/view.h"

#define FRAGMENT 65536            /* bytes of a WebSocket message sent per writable callback */
#define MAX_LOGGED 20             /* problems logged per client; the rest are ignored quietly */

/* What lws keeps per connection: an HTTP transfer, or the WebSocket's session. */
typedef struct conn {
    const splat_view_file *file;
    size_t sent;
    splat_view_session *s;
    uint8_t *tx;                  /* LWS_PRE + FRAGMENT bytes: what lws_write is given */
} conn;

static splat_viewer *viewer_of(struct lws *wsi) { return lws_context_user(lws_get_context(wsi)); }

/* A problem with a client's input: logged (up to MAX_LOGGED per client), never fatal. */
static void client_problem(splat_viewer *v, splat_view_session *s, const char *what)
{
    if (s && s->logged > MAX_LOGGED) return;
    if (s && s->logged++ == MAX_LOGGED) {
        splat__view_log(v, "client %llu: more problems; no longer logged", (unsigned long long)s->key);
        return;
    }
    if (s) splat__view_log(v, "client %llu: ignored %s", (unsigned long long)s->key, what);
    else splat__view_log(v, "%s", what);
}

/* ------------------------------------------------------------------ who may connect */

static bool loopback_host(const char *host, uint32_t port)
{
    const char *names[] = {"127.0.0.1", "localhost", "[::1]"};
    char want[80];
    for (size_t k = 0; k < SPLAT_COUNTOF(names); k++) {
        snprintf(want, sizeof want, "%s:%u", names[k], port);
        if (strcmp(host, want) == 0 || strcmp(host, names[k]) == 0) return true;
    }
    return false;
}

/* Whether a request may proceed: its Host (on loopback) and, for a WebSocket, its Origin. */
static bool allowed(splat_viewer *v, struct lws *wsi, bool websocket)
{
    char host[256] = "", origin[300] = "";
    if (lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) < 0) host[0] = '\0';
    if (strcmp(v->host, "127.0.0.1") == 0 && !loopback_host(host, v->port)) {
        char what[400];
        snprintf(what, sizeof what, "refused a request for host '%.200s' (the viewer answers to 127.0.0.1:%u and "
                 "localhost:%u)", host, v->port, v->port);
        client_problem(v, NULL, what);
        return false;
    }
    if (websocket && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0) {
        if (lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) < 0) origin[0] = '\0';
        char want[300];
        snprintf(want, sizeof want, "http://%s", host);
        if (strcmp(origin, want) != 0) {
            char what[700];
            snprintf(what, sizeof what, "refused a WebSocket from a page of '%.250s' (only the viewer's own page may "
                     "connect)", origin);
            client_problem(v, NULL, what);
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ HTTP: the embedded files */

static int http_done(struct lws *wsi) { return lws_http_transaction_completed(wsi) ? -1 : 0; }

static int http_status(struct lws *wsi, unsigned code)
{
    if (lws_return_http_status(wsi, code, NULL)) return -1;
    return http_done(wsi);
}

static int http_begin(splat_viewer *v, struct lws *wsi, conn *c, const char *path)
{
    if (!allowed(v, wsi, false)) return http_status(wsi, HTTP_STATUS_FORBIDDEN);
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0) return http_status(wsi, HTTP_STATUS_METHOD_NOT_ALLOWED);
    const splat_view_file *f = splat__view_file(path);
    if (!f) return http_status(wsi, HTTP_STATUS_NOT_FOUND);
    uint8_t buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
    static const char csp[] = "default-src 'self'; img-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'";
    if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, splat__view_mime(f->name), f->size, &p, end) ||
        lws_add_http_header_by_name(wsi, (const uint8_t *)"cache-control:", (const uint8_t *)"no-store", 8, &p, end) ||
        lws_add_http_header_by_name(wsi, (const uint8_t *)"x-content-type-options:", (const uint8_t *)"nosniff", 7, &p,
                                    end) ||
        lws_add_http_header_by_name(wsi, (const uint8_t *)"content-security-policy:", (const uint8_t *)csp,
                                    (int)strlen(csp), &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    c->file = f;
    c->sent = 0;
    lws_callback_on_writable(wsi);
    return 0;
}

static int http_more(struct lws *wsi, conn *c)
{
    if (!c->file) return 0;
    uint8_t buf[LWS_PRE + 16384];
    size_t n = SPLAT_MIN(c->file->size - c->sent, sizeof buf - LWS_PRE);
    bool last = c->sent + n == c->file->size;
    memcpy(buf + LWS_PRE, c->file->data + c->sent, n);
    if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n) return -1;
    c->sent += n;
    if (last) {
        c->file = NULL;
        return http_done(wsi);
    }
    lws_callback_on_writable(wsi);
    return 0;
}

/* ------------------------------------------------------------------ WebSocket sessions */

/* A client's frames leave through a congestion control that does not pace. Under BBR (the system
 * default on some hosts: the H200 machines measured, and this project's build machine) a frame's
 * last ~16 KiB sat unsent for 40-60 ms with the window open and nothing in flight, until the
 * client's delayed ACK came: BBR paces app-limited bursts at a rate measured from those ACKs.
 * That was every frame over 50 ms late in the transfer (docs/PERFORMANCE.md, "The late frames:
 * BBR's pacing"). A server cannot ask a browser to ACK at once; it can choose its own side.
 * Cubic, else Reno (built into every kernel, and allowed to unprivileged programs by default). */
static void unpaced(splat_viewer *v, struct lws *wsi)
{
    int fd = lws_get_socket_fd(wsi);
    static const char *const choices[] = {"cubic", "reno"};
    for (size_t i = 0; fd >= 0 && i < sizeof choices / sizeof *choices; i++)
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, choices[i], (socklen_t)strlen(choices[i])) == 0) return;
    if (fd >= 0) splat__view_log(v, "cannot choose a TCP congestion control for a client (%s): frames may arrive late", strerror(errno));
}

static int ws_open(splat_viewer *v, struct lws *wsi, conn *c)
{
    splat_view_session *s = splat__calloc(1, sizeof *s);
    c->tx = splat__malloc(LWS_PRE + FRAGMENT);
    if (!s || !c->tx) {
        splat__free(s);
        splat__free(c->tx);
        c->tx = NULL;
        client_problem(v, NULL, "refused a client: out of host memory");
        return -1;
    }
    s->wsi = wsi;
    unpaced(v, wsi);
    pthread_mutex_lock(&v->lock);
    bool full = v->n_sessions >= SPLAT_VIEW_MAX_CLIENTS;
    if (!full) {
        s->key = ++v->next_key;
        s->next = v->sessions;
        v->sessions = s;
        v->n_sessions++;
    }
    pthread_mutex_unlock(&v->lock);
    if (full) {
        splat__free(s);
        splat__free(c->tx);
        c->tx = NULL;
        char what[80];
        snprintf(what, sizeof what, "refused a client: %d are connected already", SPLAT_VIEW_MAX_CLIENTS);
        client_problem(v, NULL, what);
        return -1;
    }
    c->s = s;
    lws_callback_on_writable(wsi); /* the hello */
    return 0;
}

static void ws_close(splat_viewer *v, conn *c)
{
    splat_view_session *s = c->s;
    if (s) {
        pthread_mutex_lock(&v->lock);
        for (splat_view_session **p = &v->sessions; *p; p = &(*p)->next)
            if (*p == s) {
                *p = s->next;
                v->n_sessions--;
                break;
            }
        pthread_mutex_unlock(&v->lock);
        /* the renderer finds it gone by its key and drops the frame it may be making */
        splat__free(s->out);
        splat__free(s->frame);
        splat__free(s->error);
        splat__free(s);
    }
    splat__free(c->tx);
    c->s = NULL;
    c->tx = NULL;
}

static void ws_message(splat_viewer *v, splat_view_session *s, const char *text, size_t len)
{
    splat_view_msg m;
    char why[200];
    if (!splat__view_parse(text, len, v->desc.max_side, &m, why, sizeof why)) {
        client_problem(v, s, why);
        return;
    }
    pthread_mutex_lock(&v->lock);
    switch (m.kind) {
    case SPLAT_VIEW_MSG_FRAME:
        s->req = m.frame;
        s->has_request = true;
        s->t_request = splat__now();
        pthread_cond_signal(&v->wake);
        break;
    case SPLAT_VIEW_MSG_PAUSE:
    case SPLAT_VIEW_MSG_RESUME:
    case SPLAT_VIEW_MSG_SAVE:
        if (!v->trainer) {
            pthread_mutex_unlock(&v->lock);
            client_problem(v, s, "a training control with no training running");
            return;
        }
        if (m.kind == SPLAT_VIEW_MSG_SAVE) v->saves++;
        else v->pause = m.kind == SPLAT_VIEW_MSG_PAUSE;
        v->stats.pause_asked = v->pause && !v->stats.paused;
        v->stats_seq++;
        pthread_cond_broadcast(&v->control);
        break;
    }
    pthread_mutex_unlock(&v->lock);
    if (m.kind != SPLAT_VIEW_MSG_FRAME) splat__view_server_kick(v);
}

static void ws_receive(splat_viewer *v, struct lws *wsi, splat_view_session *s, const void *in, size_t len)
{
    if (lws_is_first_fragment(wsi)) {
        s->rx_len = 0;
        s->rx_drop = false;
    }
    if (!s->rx_drop) {
        if (len > sizeof s->rx - s->rx_len) {
            s->rx_drop = true;
            char what[100];
            snprintf(what, sizeof what, "a message of more than %d bytes", SPLAT_VIEW_MAX_MESSAGE);
            client_problem(v, s, what);
        } else {
            memcpy(s->rx + s->rx_len, in, len);
            s->rx_len += len;
        }
    }
    if (!lws_is_final_fragment(wsi) || s->rx_drop) return;
    if (lws_frame_is_binary(wsi)) client_problem(v, s, "a binary message (the viewer takes JSON text)");
    else ws_message(v, s, s->rx, s->rx_len);
    s->rx_len = 0;
}

/* The next message for a client, in order of priority: its hello, a failed frame, the latest
 * note, the latest statistics, its frame. */
static bool next_message(splat_viewer *v, splat_view_session *s)
{
    char *text = NULL;
    pthread_mutex_lock(&v->lock);
    if (!s->hello_sent) {
        text = splat__view_hello_json(&v->stats, &v->history, v->cams, v->cam_names, v->n_cams, &v->ref,
                                      v->desc.max_fps, v->desc.max_side);
        s->hello_sent = true;
        s->stats_sent = v->stats_seq;
        s->note_sent = v->note_seq;
    } else if (s->error) {
        text = s->error;
        s->error = NULL;
    } else if (s->note_sent != v->note_seq) {
        text = splat__view_note_json("note", 0, v->note);
        s->note_sent = v->note_seq;
    } else if (s->stats_sent != v->stats_seq) {
        text = splat__view_stats_json(&v->stats);
        s->stats_sent = v->stats_seq;
    } else if (s->frame) {
        s->out = s->frame;
        s->out_len = s->frame_len;
        s->out_binary = true;
        s->sending = true;
        s->frame = NULL;
    }
    pthread_mutex_unlock(&v->lock);
    if (text) {
        s->out = (uint8_t *)text;
        s->out_len = strlen(text);
        s->out_binary = false;
    }
    s->out_sent = 0;
    return s->out != NULL;
}

static bool has_more(splat_viewer *v, const splat_view_session *s)
{
    pthread_mutex_lock(&v->lock);
    bool more = !s->hello_sent || s->error || s->note_sent != v->note_seq || s->stats_sent != v->stats_seq || s->frame;
    pthread_mutex_unlock(&v->lock);
    return more;
}

static int ws_writable(splat_viewer *v, struct lws *wsi, conn *c)
{
    splat_view_session *s = c->s;
    if (!s) return -1;
    if (!s->out && !next_message(v, s)) return 0;
    size_t n = SPLAT_MIN(s->out_len - s->out_sent, (size_t)FRAGMENT);
    bool first = s->out_sent == 0, last = s->out_sent + n == s->out_len;
    if (first && s->out_binary) splat__view_frame_stamp_written(s->out, s->out_len, splat__now());
    memcpy(c->tx + LWS_PRE, s->out + s->out_sent, n);
    int flags = lws_write_ws_flags(s->out_binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT, first, last);
    if (lws_write(wsi, c->tx + LWS_PRE, n, (enum lws_write_protocol)flags) < (int)n) return -1;
    s->out_sent += n;
    if (last) {
        splat__free(s->out);
        s->out = NULL;
        s->out_len = s->out_sent = 0;
        if (s->out_binary) { /* the client may have its next frame */
            pthread_mutex_lock(&v->lock);
            s->sending = false;
            pthread_cond_signal(&v->wake);
            pthread_mutex_unlock(&v->lock);
        }
    }
    if (s->out || has_more(v, s)) lws_callback_on_writable(wsi);
    return 0;
}

/* Another thread made something ready: every client with something to send gets a writable. */
static void on_kick(splat_viewer *v)
{
    pthread_mutex_lock(&v->lock);
    for (splat_view_session *s = v->sessions; s; s = s->next)
        if (s->out || !s->hello_sent || s->error || s->note_sent != v->note_seq || s->stats_sent != v->stats_seq || s->frame)
            lws_callback_on_writable(s->wsi);
    pthread_mutex_unlock(&v->lock);
}

static int on_event(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    conn *c = user;
    switch (reason) {
    case LWS_CALLBACK_HTTP: return http_begin(viewer_of(wsi), wsi, c, in);
    case LWS_CALLBACK_HTTP_WRITEABLE: return http_more(wsi, c);
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return allowed(viewer_of(wsi), wsi, true) ? 0 : -1;
    case LWS_CALLBACK_ESTABLISHED: return ws_open(viewer_of(wsi), wsi, c);
    case LWS_CALLBACK_CLOSED: ws_close(viewer_of(wsi), c); return 0;
    case LWS_CALLBACK_RECEIVE:
        if (c->s) ws_receive(viewer_of(wsi), wsi, c->s, in, len);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: return ws_writable(viewer_of(wsi), wsi, c);
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
        splat_viewer *v = lws_context_user(lws_get_context(wsi));
        if (v) on_kick(v);
        return 0;
    }
    default: break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols k_protocols[] = {
    {.name = "splatc", .callback = on_event, .per_session_data_size = sizeof(conn), .rx_buffer_size = 4096},
    {0},
};

/* ------------------------------------------------------------------ start and stop */

static splat_viewer *g_log_viewer; /* libwebsockets' log hook has no user pointer: the viewer being started */

static void lws_log_line(int level, const char *line)
{
    (void)level;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    size_t n = strlen(copy);
    while (n && (copy[n - 1] == '\n' || copy[n - 1] == '\r')) copy[--n] = '\0';
    if (g_log_viewer) splat__view_log(g_log_viewer, "libwebsockets: %s", copy);
}

/* Tries host:port with a socket of our own first: libwebsockets' own failure is only a log line,
 * and a port in use deserves a message that says so. Port 0 asks the system for a free port. */
static splat_status probe_port(const char *host, uint32_t port, splat_error *err)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "viewer: '%s' is not an IPv4 address to listen on", host);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return splat__fail(err, SPLAT_ERR_IO, "viewer: cannot create a socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    close(fd);
    if (rc == 0) return SPLAT_OK;
    if (e == EADDRINUSE)
        return splat__fail(err, SPLAT_ERR_IO, "viewer: port %u of %s is in use (another program, or another splatc, "
                           "listens there); choose another port", port, host);
    return splat__fail(err, SPLAT_ERR_IO, "viewer: cannot listen on %s:%u: %s", host, port, strerror(e));
}

static void *serve(void *arg)
{
    splat_viewer *v = arg;
    for (;;) {
        pthread_mutex_lock(&v->lock);
        bool stop = v->stop;
        pthread_mutex_unlock(&v->lock);
        if (stop || lws_service(v->lws, 0) < 0) break;
    }
    return NULL;
}

splat_status splat__view_server_start(splat_viewer *v, splat_error *err)
{
    splat_status st = probe_port(v->host, v->desc.port == SPLAT_VIEWER_PORT_ANY ? 0 : v->desc.port, err);
    if (st != SPLAT_OK) return st;
    g_log_viewer = v;
    lws_set_log_level(LLL_ERR, lws_log_line);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = v->desc.port == SPLAT_VIEWER_PORT_ANY ? 0 : (int)v->desc.port;
    info.iface = v->host;
    info.protocols = k_protocols;
    info.user = v;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
    info.gid = -1;
    info.uid = -1;
    v->lws = lws_create_context(&info);
    if (!v->lws) {
        g_log_viewer = NULL;
        return splat__fail(err, SPLAT_ERR_IO, "viewer: cannot listen on %s:%u (libwebsockets failed)", v->host,
                           v->desc.port == SPLAT_VIEWER_PORT_ANY ? 0 : v->desc.port);
    }
    struct lws_vhost *vh = lws_get_vhost_by_name(v->lws, "default");
    int port = vh ? lws_get_vhost_listen_port(vh) : -1;
    if (port <= 0) {
        lws_context_destroy(v->lws);
        v->lws = NULL;
        return splat__fail(err, SPLAT_ERR_IO, "viewer: listening on %s, but its port is unknown", v->host);
    }
    v->port = (uint32_t)port;
    if (pthread_create(&v->server_thread, NULL, serve, v) != 0) {
        lws_context_destroy(v->lws);
        v->lws = NULL;
        return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "viewer: cannot start the server's thread");
    }
    v->server_started = true;
    return SPLAT_OK;
}

void splat__view_server_kick(splat_viewer *v)
{
    if (v->lws) lws_cancel_service(v->lws);
}

void splat__view_server_stop(splat_viewer *v)
{
    if (v->server_started) {
        pthread_mutex_lock(&v->lock);
        v->stop = true;
        pthread_mutex_unlock(&v->lock);
        lws_cancel_service(v->lws);
        pthread_join(v->server_thread, NULL);
        v->server_started = false;
    }
    /* closes every connection, each through LWS_CALLBACK_CLOSED (which frees its session) */
    if (v->lws) lws_context_destroy(v->lws);
    v->lws = NULL;
    if (g_log_viewer == v) g_log_viewer = NULL;
}
