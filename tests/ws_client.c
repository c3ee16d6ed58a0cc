/* The tests' WebSocket client (ws_client.h). */
#include "ws_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MIN_(a, b) ((a) < (b) ? (a) : (b))

/* The first `needle` in hay [n], or NULL (memmem is a GNU extension). */
static const void *find(const void *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t k = 0; k + m <= n; k++)
        if (memcmp((const char *)hay + k, needle, m) == 0) return (const char *)hay + k;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

t_ws_tuning t_ws_tune;

static int dial(uint32_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (t_ws_tune.rcvbuf) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t_ws_tune.rcvbuf, sizeof t_ws_tune.rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static bool write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        b += k;
        n -= (size_t)k;
    }
    return true;
}

/* Reads what is there (waiting up to timeout_s for the first byte): bytes read, 0 on timeout, -1 closed. */
static long fill(t_ws *w, double timeout_s)
{
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    int r = poll(&p, 1, (int)(timeout_s * 1000));
    if (r == 0) return 0;
    if (r < 0) return errno == EINTR ? 0 : -1;
    if (w->cap - w->len < 65536) {
        size_t cap = w->cap ? w->cap * 2 : 1 << 17;
        uint8_t *b = realloc(w->buf, cap);
        if (!b) return -1;
        w->buf = b;
        w->cap = cap;
    }
    ssize_t k = recv(w->fd, w->buf + w->len, w->cap - w->len, 0);
    if (k <= 0) return -1;
    if (t_ws_tune.quickack) {
        int one = 1;
        setsockopt(w->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
    w->len += (size_t)k;
    return k;
}

bool t_ws_connect(t_ws *w, uint32_t port, const char *path, const char *headers, char *why, size_t why_size)
{
    memset(w, 0, sizeof *w);
    w->fd = dial(port);
    if (w->fd < 0) {
        snprintf(why, why_size, "cannot connect to port %u: %s", port, strerror(errno));
        return false;
    }
    char req[2048];
    snprintf(req, sizeof req,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Protocol: splatc\r\n%s\r\n",
             path, port, headers ? headers : "");
    if (!write_all(w->fd, req, strlen(req))) {
        snprintf(why, why_size, "cannot send the upgrade request");
        t_ws_close(w);
        return false;
    }
    double end = now_s() + 10;
    char *head_end = NULL;
    while (!head_end) {
        if (fill(w, end - now_s()) <= 0) {
            snprintf(why, why_size, "no answer to the upgrade request (%zu bytes: %.*s)", w->len, (int)MIN_(w->len, 300), w->buf ? (char *)w->buf : "");
            t_ws_close(w);
            return false;
        }
        for (size_t k = 0; k + 3 < w->len && !head_end; k++)
            if (memcmp(w->buf + k, "\r\n\r\n", 4) == 0) head_end = (char *)w->buf + k + 4;
    }
    size_t head = (size_t)(head_end - (char *)w->buf);
    /* the accept key of RFC 6455's own example key */
    bool ok = strncmp((char *)w->buf, "HTTP/1.1 101", 12) == 0 &&
              find(w->buf, head, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") != NULL;
    if (!ok) {
        snprintf(why, why_size, "the server answered: %.*s", (int)MIN_(head, 400), (char *)w->buf);
        t_ws_close(w);
        return false;
    }
    memmove(w->buf, w->buf + head, w->len - head);
    w->len -= head;
    return true;
}

bool t_ws_send(t_ws *w, int opcode, const void *data, size_t len, bool fin)
{
    uint8_t head[14];
    size_t h = 0;
    head[h++] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 15));
    if (len < 126) head[h++] = (uint8_t)(0x80 | len);
    else if (len < 65536) {
        head[h++] = 0x80 | 126;
        head[h++] = (uint8_t)(len >> 8);
        head[h++] = (uint8_t)len;
    } else {
        head[h++] = 0x80 | 127;
        for (int k = 7; k >= 0; k--) head[h++] = (uint8_t)((uint64_t)len >> (8 * k));
    }
    const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
    memcpy(head + h, mask, 4);
    h += 4;
    uint8_t *frame = malloc(h + len + 1);
    if (!frame) return false;
    memcpy(frame, head, h);
    for (size_t k = 0; k < len; k++) frame[h + k] = ((const uint8_t *)data)[k] ^ mask[k & 3];
    bool ok = write_all(w->fd, frame, h + len);
    free(frame);
    return ok;
}

bool t_ws_send_text(t_ws *w, const char *text) { return t_ws_send(w, T_WS_TEXT, text, strlen(text), true); }

bool t_ws_send_raw(t_ws *w, const void *bytes, size_t len) { return write_all(w->fd, bytes, len); }

/* One frame from the buffer: its header parsed, or false when it is not all there yet. */
static bool take_frame(t_ws *w, bool *fin, int *opcode, const uint8_t **payload, size_t *plen, size_t *used)
{
    if (w->len < 2) return false;
    const uint8_t *b = w->buf;
    size_t h = 2;
    uint64_t n = b[1] & 0x7f;
    bool masked = b[1] & 0x80;
    if (n == 126) {
        if (w->len < 4) return false;
        n = ((uint64_t)b[2] << 8) | b[3];
        h = 4;
    } else if (n == 127) {
        if (w->len < 10) return false;
        n = 0;
        for (int k = 0; k < 8; k++) n = (n << 8) | b[2 + k];
        h = 10;
    }
    if (masked) h += 4; /* servers never mask; skip it if one did */
    if (w->len < h + n) return false;
    *fin = b[0] & 0x80;
    *opcode = b[0] & 15;
    *payload = b + h;
    *plen = (size_t)n;
    *used = h + (size_t)n;
    return true;
}

int t_ws_recv(t_ws *w, double timeout_s, const uint8_t **data, size_t *len, int *opcode)
{
    double end = now_s() + timeout_s, last_bytes = now_s();
    bool probed = false;
    w->msg_len = 0;
    for (;;) {
        bool fin;
        int op;
        const uint8_t *p;
        size_t n, used;
        while (take_frame(w, &fin, &op, &p, &n, &used)) {
            if (op == T_WS_CLOSE) return -1;
            if (op >= 8) { /* ping or pong: nothing to answer for these tests */
                memmove(w->buf, w->buf + used, w->len - used);
                w->len -= used;
                continue;
            }
            if (op != 0) w->msg_opcode = op, w->msg_len = 0, w->msg_t0 = now_s();
            if (w->msg_cap < w->msg_len + n + 1) {
                size_t cap = (w->msg_len + n + 1) * 2;
                uint8_t *m = realloc(w->msg, cap);
                if (!m) return -1;
                w->msg = m;
                w->msg_cap = cap;
            }
            memcpy(w->msg + w->msg_len, p, n);
            w->msg_len += n;
            w->msg[w->msg_len] = 0;
            memmove(w->buf, w->buf + used, w->len - used);
            w->len -= used;
            if (fin) {
                *data = w->msg;
                *len = w->msg_len;
                *opcode = w->msg_opcode;
                return 1;
            }
        }
        double t = now_s(), left = end - t;
        if (left <= 0) return 0;
        bool mid = w->msg_len || w->len; /* a message begun */
        if (!mid) last_bytes = t;
        bool watch = mid && t_ws_tune.on_stall && !probed;
        long k = fill(w, watch && left > 0.002 ? 0.002 : left);
        if (k < 0) return -1;
        if (k > 0) last_bytes = now_s();
        else if (watch && now_s() - last_bytes >= t_ws_tune.stall_s) {
            t_ws_tune.on_stall(w, now_s() - last_bytes);
            probed = true;
        }
    }
}

long t_ws_read_some(t_ws *w, size_t n, double timeout_s)
{
    uint8_t tmp[65536];
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    if (poll(&p, 1, (int)(timeout_s * 1000)) <= 0) return 0;
    ssize_t k = recv(w->fd, tmp, n < sizeof tmp ? n : sizeof tmp, 0);
    return k <= 0 ? -1 : (long)k;
}

int t_tcp_sockets(uint32_t port, void *info_, bool *is_server, char (*cc)[16], int max)
{
    struct tcp_info *info = info_;
    int fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
    if (fd < 0) return 0;
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
    } req = {
        .nh = {.nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP,
              .idiag_ext = 1 << (INET_DIAG_INFO - 1) | 1 << (INET_DIAG_CONG - 1), .idiag_states = 1 << 1 /* established */},
    };
    int n = 0;
    if (send(fd, &req, sizeof req, 0) == (ssize_t)sizeof req) {
        static char buf[1 << 16];
        bool done = false;
        while (!done) {
            ssize_t len = recv(fd, buf, sizeof buf, 0);
            if (len <= 0) break;
            for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    done = true;
                    break;
                }
                struct inet_diag_msg *m = NLMSG_DATA(h);
                uint32_t sp = ntohs(m->id.idiag_sport), dp = ntohs(m->id.idiag_dport);
                if ((sp != port && dp != port) || n >= max) continue;
                memset(&info[n], 0, sizeof info[n]);
                if (cc) cc[n][0] = '\0';
                int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
                for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
                    size_t pl = RTA_PAYLOAD(a);
                    if (a->rta_type == INET_DIAG_INFO) memcpy(&info[n], RTA_DATA(a), pl < sizeof info[n] ? pl : sizeof info[n]);
                    if (a->rta_type == INET_DIAG_CONG && cc) snprintf(cc[n], sizeof cc[n], "%.*s", (int)pl, (const char *)RTA_DATA(a));
                }
                is_server[n++] = sp == port;
            }
        }
    }
    close(fd);
    return n;
}

void t_ws_close(t_ws *w)
{
    if (w->fd >= 0) close(w->fd);
    free(w->buf);
    free(w->msg);
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

int t_http(uint32_t port, const char *request, char **body, size_t *body_len)
{
    *body = NULL;
    *body_len = 0;
    t_ws w = {.fd = dial(port)};
    if (w.fd < 0) return -1;
    if (!write_all(w.fd, request, strlen(request))) {
        t_ws_close(&w);
        return -1;
    }
    /* read until the headers and Content-Length bytes are in, or the server closes */
    double end = now_s() + 10;
    size_t head = 0, want = SIZE_MAX;
    while (now_s() < end) {
        if (!head)
            for (size_t k = 0; k + 3 < w.len && !head; k++)
                if (memcmp(w.buf + k, "\r\n\r\n", 4) == 0) head = k + 4;
        if (head && want == SIZE_MAX) {
            const char *cl = find(w.buf, head, "content-length:");
            if (!cl) cl = find(w.buf, head, "Content-Length:");
            want = cl ? head + strtoul(cl + 15, NULL, 10) : SIZE_MAX - 1;
        }
        if (head && w.len >= want) break;
        if (fill(&w, end - now_s()) < 0) break;
    }
    int code = -1;
    if (w.len > 12 && strncmp((char *)w.buf, "HTTP/1.", 7) == 0) code = atoi((char *)w.buf + 9);
    if (head) {
        size_t n = (want < w.len ? want : w.len) - head;
        *body = malloc(n + 1);
        if (*body) {
            memcpy(*body, w.buf + head, n);
            (*body)[n] = 0;
            *body_len = n;
        }
    }
    t_ws_close(&w);
    return code;
}
