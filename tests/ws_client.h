/* A small blocking WebSocket client (RFC 6455) for the viewer's tests and benchmark: it speaks
 * the protocol by hand, so a test can also send what a real client never would (frames that are
 * malformed, oversized, cut short) and vanish at any byte. Loopback only. */
#ifndef SPLAT_TEST_WS_CLIENT_H
#define SPLAT_TEST_WS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct t_ws {
    int fd;
    uint8_t *buf;            /* received bytes not yet parsed */
    size_t len, cap;
    uint8_t *msg;            /* the message being reassembled */
    size_t msg_len, msg_cap;
    int msg_opcode;
    double msg_t0;           /* CLOCK_MONOTONIC seconds when the message's first fragment was whole here */
} t_ws;

/* Socket options and a probe, for the benchmark's experiments (zero: the defaults, no probe). The
 * probe runs once per message, when the rest of a message has kept the reader waiting `stall_s`. */
typedef struct t_ws_tuning {
    int rcvbuf;              /* SO_RCVBUF before connecting, bytes */
    bool quickack;           /* TCP_QUICKACK again after every read (the kernel clears it) */
    double stall_s;
    void (*on_stall)(t_ws *w, double waited_s);
} t_ws_tuning;
extern t_ws_tuning t_ws_tune;

enum { T_WS_TEXT = 1, T_WS_BINARY = 2, T_WS_CLOSE = 8 };

/* Connects to 127.0.0.1:port and upgrades GET `path` (subprotocol "splatc"); `headers` (may be
 * NULL) are extra request lines ending in \r\n. False, with the reason (or the server's answer)
 * in why, when the server does not switch protocols. */
bool t_ws_connect(t_ws *w, uint32_t port, const char *path, const char *headers, char *why, size_t why_size);
/* Sends one frame, masked as a client must. */
bool t_ws_send(t_ws *w, int opcode, const void *data, size_t len, bool fin);
bool t_ws_send_text(t_ws *w, const char *text);
/* Sends bytes as they are (a malformed frame, half a frame). */
bool t_ws_send_raw(t_ws *w, const void *bytes, size_t len);
/* The next whole message (fragments joined): 1 with *data [*len] (valid until the next call) and
 * *opcode; 0 when nothing came within timeout_s; -1 when the connection closed. */
int t_ws_recv(t_ws *w, double timeout_s, const uint8_t **data, size_t *len, int *opcode);
/* Reads at most `n` raw bytes (to stop in the middle of a frame); the count read, -1 when closed. */
long t_ws_read_some(t_ws *w, size_t n, double timeout_s);
/* Closes the socket at once (no close handshake: a client that vanishes). */
void t_ws_close(t_ws *w);

/* The established TCP sockets with `port` at one end, as the kernel reports them (sock_diag, what
 * `ss -ti` prints): their tcp_info (struct tcp_info of <linux/tcp.h>, passed as void *), whether
 * each is the listening side's, and its congestion control (cc[i], may be NULL). At most `max`;
 * the count found. */
int t_tcp_sockets(uint32_t port, void *info, bool *is_server, char (*cc)[16], int max);

/* An HTTP request on a fresh connection: the status code, and the body in *body (malloc'd, may be
 * NULL) of *body_len bytes. `request` is the whole request text. -1 on a connection failure. */
int t_http(uint32_t port, const char *request, char **body, size_t *body_len);

#endif
