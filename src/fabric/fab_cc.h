/*
 * fab_cc — the comm channel transport between processes on one machine.
 *
 * A service listens on an AF_UNIX SOCK_SEQPACKET socket in the Linux abstract
 * namespace, named after the user, the PCI address of the host function it
 * serves and the service name:
 *
 *     "\0softdpu-cc/<euid>/<DDDD:BB:DD.F>/<service name>"
 *
 * so a client on host function X reaches the service opened on X's
 * representor (both see the same PCI address). Abstract names carry no
 * permissions and anyone may bind one, so both ends check the other's uid
 * (SO_PEERCRED) before they exchange anything: the service on accept, the
 * client on connect. SEQPACKET keeps message
 * boundaries, is reliable and ordered, and turns a dead peer into EOF /
 * EPIPE, so peer death is noticed without timers.
 *
 * Framing: the first datagram each way is a handshake frame (fixed 24 bytes,
 * versioned, length-checked, little-endian); every later datagram is exactly
 * one application message with no header, so data is sent from and received
 * into the caller's buffers directly.
 *
 * Every function returns 0 or a negative errno; none blocks except
 * fab_cc_connect(), which waits at most FAB_CC_CONNECT_TIMEOUT_MS when the
 * service's backlog is full.
 */
#ifndef FAB_CC_H_
#define FAB_CC_H_

#include <stddef.h>
#include <stdint.h>

#define FAB_CC_VERSION 1
#define FAB_CC_HS_SIZE 24
#define FAB_CC_MSG_MAX 4080 /* largest application message on the wire */
#define FAB_CC_NAME_MAX 64  /* service name, terminator included */
#define FAB_CC_CONNECT_TIMEOUT_MS 1000

enum fab_cc_hs_type {
	FAB_CC_HELLO = 1,   /* client -> service, first frame */
	FAB_CC_WELCOME = 2, /* service -> client: accepted */
	FAB_CC_REJECT = 3,  /* service -> client: refused, status says why */
};

enum fab_cc_reject_reason {
	FAB_CC_REJ_NONE = 0,
	FAB_CC_REJ_FULL = 1,	/* the service has its maximum number of clients */
	FAB_CC_REJ_VERSION = 2, /* unsupported handshake version */
};

/* Decoded handshake frame. */
struct fab_cc_hs {
	uint16_t version;
	uint16_t type;	       /* enum fab_cc_hs_type */
	uint16_t status;       /* enum fab_cc_reject_reason */
	uint32_t max_msg_size; /* sender's largest message */
	uint32_t pid;	       /* sender's process, for log lines */
};

/* The socket name of a service, printable ("@softdpu-cc/..."), for log lines. */
int fab_cc_name(const char *pci, const char *service, char *out, size_t cap);

/* Service side: -EADDRINUSE when a socket (of any user) has the name already. */
int fab_cc_listen(const char *pci, const char *service, int *lfd);
/* One pending connection (-EAGAIN when none); a peer of another user is refused with -EPERM. */
int fab_cc_accept(int lfd, int *fd);

/*
 * Client side: -ECONNREFUSED when nobody listens on the name; -EPERM, with
 * *holder set to its uid, when the socket listening there is another user's
 * (it squats the name: nothing was sent to it).
 */
int fab_cc_connect(const char *pci, const char *service, int *fd, uint32_t *holder);

/* The uid of whoever listens on a service's name (a connection opened and closed at once), or -errno. */
int fab_cc_holder(const char *pci, const char *service, uint32_t *uid);

/* Handshake frames. fab_cc_hs_recv: -EAGAIN, -ECONNRESET, or -EPROTO for a malformed frame. */
int fab_cc_hs_send(int fd, const struct fab_cc_hs *hs);
int fab_cc_hs_recv(int fd, struct fab_cc_hs *hs);

/* Sizes the kernel buffer that holds this connection's unread messages. */
int fab_cc_set_queue(int fd, uint32_t msgs, uint32_t msg_size);

/* One message: 0, -EAGAIN (no room), -ECONNRESET (peer gone) or another -errno. */
int fab_cc_send(int fd, const void *msg, size_t len);

/*
 * One message into buf (cap bytes); *len gets its length.
 * -EAGAIN: nothing queued. -EMSGSIZE: the next message needs *len bytes and
 * stays queued. -ECONNRESET: the peer is gone and everything it sent was read
 * (never earlier, however the peer went: close, exit or kill).
 * -EPROTO: the peer sent more than FAB_CC_MSG_MAX bytes (the message is dropped).
 */
int fab_cc_recv(int fd, void *buf, size_t cap, size_t *len);

/* 1 when messages (or a handshake frame) wait to be read, 0 otherwise. */
int fab_cc_pending(int fd);

/* 1 when the peer has closed and nothing is left to read, 0 otherwise. */
int fab_cc_peer_gone(int fd);

#endif /* FAB_CC_H_ */
