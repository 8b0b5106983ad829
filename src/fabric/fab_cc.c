/*
 * fab_cc — comm channel transport: abstract-namespace SEQPACKET sockets.
 */
#include "fab_cc.h"
#include "hw_machine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static const uint8_t cc_magic[4] = { 'S', 'D', 'C', 'C' };

/* Handshake frame layout, version 1 (little-endian). */
enum {
	HS_MAGIC = 0,
	HS_VERSION = 4,
	HS_TYPE = 6,
	HS_SIZE = 8,
	HS_STATUS = 10,
	HS_MAX_MSG = 12,
	HS_PID = 16,
	HS_RSVD = 20,
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

/* A dead peer shows up as one of several errnos depending on timing; callers see one. */
static int sock_err(int err)
{
	switch (err) {
	case EAGAIN:
		return -EAGAIN;
	case EPIPE:
	case ECONNRESET:
	case ENOTCONN:
		return -ECONNRESET;
	default:
		return -err;
	}
}

static int cc_sockaddr(struct sockaddr_un *sa, socklen_t *salen, const char *pci, const char *service)
{
	size_t room = sizeof(sa->sun_path) - 1; /* byte 0 is the abstract-namespace NUL */
	int n;

	if (strlen(service) >= FAB_CC_NAME_MAX)
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path + 1, room, "softdpu-cc/%u%s/%s/%s", (unsigned)geteuid(), hw_machine_tag(), pci,
		     service);
	if (n < 0 || (size_t)n >= room)
		return -ENAMETOOLONG;
	/* Abstract names are compared over the given length: no terminator, no padding. */
	*salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	return 0;
}

int fab_cc_name(const char *pci, const char *service, char *out, size_t cap)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int ret = cc_sockaddr(&sa, &salen, pci, service);

	if (ret < 0)
		return ret;
	/* "@" for the leading NUL, as ss(8) and /proc/net/unix show abstract names. */
	ret = snprintf(out, cap, "@%s", sa.sun_path + 1);
	return ret < 0 || (size_t)ret >= cap ? -ENAMETOOLONG : 0;
}

/* The uid of the process at the other end of a connected socket. */
static int peer_uid(int fd, uint32_t *uid)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		return -errno;
	*uid = (uint32_t)cred.uid;
	return 0;
}

int fab_cc_listen(const char *pci, const char *service, int *lfd)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, ret;

	ret = cc_sockaddr(&sa, &salen, pci, service);
	if (ret < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, salen) < 0 || listen(fd, SOMAXCONN) < 0)
		goto err_close;
	*lfd = fd;
	return 0;

err_close:
	ret = -errno;
	close(fd);
	return ret;
}

int fab_cc_accept(int lfd, int *out)
{
	uint32_t uid = 0;
	int fd;

	do
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* The name already carries the uid, but anyone may connect to an abstract name. */
	if (peer_uid(fd, &uid) < 0 || uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	*out = fd;
	return 0;
}

/* Bounds the wait for a full backlog; AF_UNIX connect waits up to the send timeout. */
static int set_connect_timeout(int fd)
{
	struct timeval tv = { .tv_sec = FAB_CC_CONNECT_TIMEOUT_MS / 1000,
			      .tv_usec = (FAB_CC_CONNECT_TIMEOUT_MS % 1000) * 1000 };

	return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int fab_cc_connect(const char *pci, const char *service, int *out, uint32_t *holder)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, ret;

	ret = cc_sockaddr(&sa, &salen, pci, service);
	if (ret < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (set_connect_timeout(fd) < 0)
		goto err_close;
	do
		ret = connect(fd, (struct sockaddr *)&sa, salen);
	while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		if (errno == EAGAIN)
			errno = ETIMEDOUT;
		goto err_close;
	}
	/* Anyone may bind an abstract name first: before a byte goes out, the service must be this user's. */
	ret = peer_uid(fd, holder);
	if (ret == 0 && *holder != geteuid())
		ret = -EPERM;
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		goto err_close;
	*out = fd;
	return 0;

err_close:
	ret = -errno;
	close(fd);
	return ret;
}

int fab_cc_holder(const char *pci, const char *service, uint32_t *uid)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, ret;

	ret = cc_sockaddr(&sa, &salen, pci, service);
	if (ret < 0)
		return ret;
	/* Non-blocking: a full backlog answers EAGAIN at once instead of making us wait. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		ret = connect(fd, (struct sockaddr *)&sa, salen);
	while (ret < 0 && errno == EINTR);
	ret = ret < 0 ? -errno : peer_uid(fd, uid);
	close(fd);
	return ret;
}

int fab_cc_hs_send(int fd, const struct fab_cc_hs *hs)
{
	uint8_t f[FAB_CC_HS_SIZE] = { 0 };

	memcpy(f + HS_MAGIC, cc_magic, sizeof(cc_magic));
	put16(f + HS_VERSION, hs->version);
	put16(f + HS_TYPE, hs->type);
	put16(f + HS_SIZE, FAB_CC_HS_SIZE);
	put16(f + HS_STATUS, hs->status);
	put32(f + HS_MAX_MSG, hs->max_msg_size);
	put32(f + HS_PID, hs->pid);
	return fab_cc_send(fd, f, sizeof(f));
}

/* Every field is checked before the frame is believed. */
static int hs_parse(const uint8_t *f, struct fab_cc_hs *hs)
{
	if (memcmp(f + HS_MAGIC, cc_magic, sizeof(cc_magic)) != 0 || get16(f + HS_SIZE) != FAB_CC_HS_SIZE ||
	    get32(f + HS_RSVD) != 0)
		return -EPROTO;
	hs->version = get16(f + HS_VERSION);
	hs->type = get16(f + HS_TYPE);
	hs->status = get16(f + HS_STATUS);
	hs->max_msg_size = get32(f + HS_MAX_MSG);
	hs->pid = get32(f + HS_PID);
	if (hs->type < FAB_CC_HELLO || hs->type > FAB_CC_REJECT || hs->max_msg_size > FAB_CC_MSG_MAX)
		return -EPROTO;
	return 0;
}

/*
 * A peer that closes while messages of ours are still unread in its own queue
 * leaves a pending ECONNRESET on our socket, and the kernel reports a pending
 * error before any queued datagram. Reporting it clears it, so one more call
 * finds what the peer sent before it closed, then the EOF: the close is read
 * in its place, after the peer's last message.
 */
static ssize_t recv_retry(int fd, void *buf, size_t cap, int flags)
{
	int resets = 0;
	ssize_t n;

	do
		n = recv(fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC | flags);
	while (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ == 0)));
	return n;
}

int fab_cc_hs_recv(int fd, struct fab_cc_hs *hs)
{
	uint8_t f[FAB_CC_HS_SIZE];
	ssize_t n = recv_retry(fd, f, sizeof(f), 0);

	if (n < 0)
		return sock_err(errno);
	if (n == 0)
		return -ECONNRESET;
	if (n != FAB_CC_HS_SIZE)
		return -EPROTO;
	return hs_parse(f, hs);
}

int fab_cc_set_queue(int fd, uint32_t msgs, uint32_t msg_size)
{
	/* The kernel doubles the value for its own bookkeeping and caps it at wmem_max. */
	int bytes = (int)((uint64_t)msgs * msg_size > (uint64_t)(1 << 30) ? 1 << 30 : msgs * msg_size);

	return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) < 0 ? -errno : 0;
}

int fab_cc_send(int fd, const void *msg, size_t len)
{
	ssize_t n;

	do
		n = send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return sock_err(errno);
	return (size_t)n == len ? 0 : -EIO; /* SEQPACKET sends whole datagrams or nothing */
}

int fab_cc_recv(int fd, void *buf, size_t cap, size_t *len)
{
	ssize_t n;

	/*
	 * A buffer of FAB_CC_MSG_MAX bytes holds any valid message, so it is read
	 * in one call; a smaller one is checked first so a message that does not
	 * fit stays queued for a second try.
	 */
	if (cap < FAB_CC_MSG_MAX) {
		n = recv_retry(fd, buf, cap, MSG_PEEK);
		if (n > 0 && (size_t)n > cap) {
			*len = (size_t)n;
			if (n <= FAB_CC_MSG_MAX)
				return -EMSGSIZE;
			recv_retry(fd, buf, 0, 0); /* drop the oversized datagram */
			return -EPROTO;
		}
		if (n <= 0)
			return n == 0 ? -ECONNRESET : sock_err(errno);
	}
	n = recv_retry(fd, buf, cap, 0);
	if (n < 0)
		return sock_err(errno);
	if (n == 0) /* zero-length messages are never sent: this is the peer's close */
		return -ECONNRESET;
	*len = (size_t)n;
	return n > FAB_CC_MSG_MAX ? -EPROTO : 0;
}

int fab_cc_pending(int fd)
{
	int queued = 0;

	return ioctl(fd, FIONREAD, &queued) == 0 && queued > 0;
}

int fab_cc_peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return 0;
	/* Messages sent before the close are still readable and count as a live connection. */
	return !fab_cc_pending(fd);
}
