/*
 * rsockets (rdma/rsocket.h) of softdpu's librdmacm.so.1, as a program uses
 * them: connect and accept, bytes through in both directions at sizes below
 * and above the receive buffer, non-blocking calls and rpoll/rselect
 * readiness, half close and EOF, a closed or killed peer, I/O mapping
 * (riomap, riowrite), and what is refused (SOCK_DGRAM).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/wait.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "harness.h"

#define WAIT_MS 10000

static struct sockaddr_in addr_of(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void rs_close_fd(void *arg)
{
	int *fd = arg;

	if (*fd >= 0)
		rclose(*fd);
	*fd = -1;
}

/* A listener on 127.0.0.1, on a port the CM picks (*port), with the given buffer sizes (0: the defaults). */
static int listener(int *l, uint16_t *port, int bufsize)
{
	struct sockaddr_in a = addr_of(0);
	socklen_t len = sizeof(a);

	*l = rsocket(AF_INET, SOCK_STREAM, 0);
	if (*l < 0)
		return -1;
	if (bufsize > 0 && (rsetsockopt(*l, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize)) != 0 ||
			    rsetsockopt(*l, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize)) != 0))
		return -1;
	if (rbind(*l, (struct sockaddr *)&a, sizeof(a)) != 0 || rgetsockname(*l, (struct sockaddr *)&a, &len) != 0 ||
	    a.sin_port == 0)
		return -1;
	*port = ntohs(a.sin_port);
	return rlisten(*l, 4);
}

/*
 * A connected pair in one thread: a non-blocking rconnect (EINPROGRESS),
 * raccept, then rpoll until the client is writable. Both end blocking.
 */
static void make_pair(int *l, int *c, int *s, int bufsize)
{
	uint16_t port = 0;
	struct sockaddr_in a;
	struct pollfd pf;
	int err = -1;
	socklen_t len = sizeof(err);

	*l = *c = *s = -1;
	th_defer(rs_close_fd, l);
	th_defer(rs_close_fd, c);
	th_defer(rs_close_fd, s);
	CHECK_OK(listener(l, &port, bufsize));
	a = addr_of(port);
	*c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(*c >= 0);
	if (bufsize > 0) {
		CHECK_OK(rsetsockopt(*c, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize)));
		CHECK_OK(rsetsockopt(*c, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize)));
	}
	CHECK_OK(rfcntl(*c, F_SETFL, O_NONBLOCK));
	CHECK_ERR(rconnect(*c, (struct sockaddr *)&a, sizeof(a)), -1);
	CHECK_ERR(errno, EINPROGRESS);
	*s = raccept(*l, NULL, NULL);
	CHECK(*s >= 0);
	pf = (struct pollfd){ .fd = *c, .events = POLLOUT };
	CHECK_ERR(rpoll(&pf, 1, WAIT_MS), 1);
	CHECK(pf.revents == POLLOUT);
	CHECK_OK(rgetsockopt(*c, SOL_SOCKET, SO_ERROR, &err, &len));
	CHECK_ERR(err, 0);
	CHECK_OK(rfcntl(*c, F_SETFL, 0));
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + seed + (i >> 8));
}

struct sender {
	int fd;
	const uint8_t *buf;
	size_t len;
	ssize_t ret;
	int err;
	bool close_after;
};

static void *sender_run(void *arg)
{
	struct sender *s = arg;
	size_t off = 0;

	while (off < s->len) {
		ssize_t n = rsend(s->fd, s->buf + off, s->len - off, 0);

		if (n <= 0) {
			s->err = errno;
			break;
		}
		off += (size_t)n;
	}
	s->ret = (ssize_t)off;
	if (s->close_after) {
		rclose(s->fd);
		s->fd = -1;
	}
	return NULL;
}

/* Reads exactly n bytes (MSG_WAITALL); the count it got. */
static ssize_t recv_all(int fd, uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t r = rrecv(fd, b + off, n - off, MSG_WAITALL);

		if (r <= 0)
			return r < 0 ? r : (ssize_t)off;
		off += (size_t)r;
	}
	return (ssize_t)off;
}

/* Sends len bytes from `from` in a thread and reads them at `to`; compared byte for byte. */
static int transfer(int from, int to, size_t len, unsigned seed)
{
	uint8_t *out = malloc(len), *in = calloc(1, len);
	struct sender snd = { .fd = from, .buf = out, .len = len };
	pthread_t t;
	ssize_t got;
	int ok;

	fill(out, len, seed);
	pthread_create(&t, NULL, sender_run, &snd);
	got = recv_all(to, in, len);
	pthread_join(t, NULL);
	ok = snd.ret == (ssize_t)len && got == (ssize_t)len && memcmp(in, out, len) == 0;
	if (!ok)
		fprintf(stderr, "transfer of %zu: sent %zd (errno %d), received %zd\n", len, snd.ret, snd.err, got);
	free(out);
	free(in);
	return ok ? 0 : -1;
}

/* Connect and accept: addresses of both ends, and the accepted socket's options from the listener. */
static void test_connect_accept(void)
{
	static int l, c, s;
	int v = 0;
	struct sockaddr_in pa, la;
	socklen_t len = sizeof(pa), vlen = sizeof(v);

	make_pair(&l, &c, &s, 8192);
	CHECK_OK(rgetpeername(c, (struct sockaddr *)&pa, &len));
	CHECK(len == sizeof(pa) && pa.sin_family == AF_INET && pa.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	len = sizeof(la);
	CHECK_OK(rgetsockname(s, (struct sockaddr *)&la, &len));
	CHECK(la.sin_port == pa.sin_port);
	CHECK_OK(rgetsockopt(s, SOL_SOCKET, SO_RCVBUF, &v, &vlen));
	CHECK_ERR(v, 8192);
	CHECK_ERR(rgetpeername(l, (struct sockaddr *)&pa, &len), -1);
	CHECK_ERR(errno, ENOTCONN);
	CHECK_ERR(rsend(12345, "x", 1, 0), -1);
	CHECK_ERR(errno, EBADF);
}

/* Bytes arrive as sent, in both directions, below and well above the 16 KiB receive ring. */
static void test_bytes(void)
{
	static const size_t sizes[] = { 1, 64, 4095, 16384, 16385, 65536 + 7, (1u << 20) + 3 };
	static int l, c, s;

	make_pair(&l, &c, &s, 16384);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CHECK_OK(transfer(c, s, sizes[i], (unsigned)i));
		CHECK_OK(transfer(s, c, sizes[i], (unsigned)i + 100));
	}
}

/* The default ring (and the inline path for small writes) with writev / readv. */
static void test_vectors(void)
{
	static int l, c, s;
	char a[] = "hello, ", b[] = "rsockets", out[15] = { 0 };
	struct iovec wv[2] = { { a, 7 }, { b, 8 } };
	struct iovec rv[2] = { { out, 5 }, { out + 5, 10 } };

	make_pair(&l, &c, &s, 0);
	CHECK_ERR(rwritev(c, wv, 2), 15);
	CHECK_ERR(rrecv(s, out, 15, MSG_WAITALL | MSG_PEEK), 15);
	CHECK(memcmp(out, "hello, rsockets", 15) == 0);
	memset(out, 0, sizeof(out));
	CHECK_ERR(rreadv(s, rv, 2), 15);
	CHECK(memcmp(out, "hello, rsockets", 15) == 0);
}

/* Non-blocking: EAGAIN with nothing to read or no room to write, and rpoll / rselect readiness. */
static void test_nonblocking(void)
{
	static int l, c, s;
	size_t big = 1u << 16, sent = 0;
	uint8_t *buf = malloc(big), *in = malloc(big);
	struct pollfd pf;
	fd_set rd;
	struct timeval tv = { 0, 0 };
	ssize_t n;

	th_defer(free, buf);
	th_defer(free, in);
	make_pair(&l, &c, &s, 8192);
	CHECK_OK(rfcntl(s, F_SETFL, O_NONBLOCK));
	CHECK_ERR(rfcntl(s, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	CHECK_ERR(rrecv(s, in, 10, 0), -1);
	CHECK_ERR(errno, EAGAIN);
	CHECK_ERR(rrecv(c, in, 10, MSG_DONTWAIT), -1);
	CHECK_ERR(errno, EAGAIN);
	pf = (struct pollfd){ .fd = s, .events = POLLIN };
	CHECK_ERR(rpoll(&pf, 1, 0), 0);
	CHECK_ERR(rsend(c, "0123456789", 10, 0), 10);
	CHECK_ERR(rpoll(&pf, 1, WAIT_MS), 1);
	CHECK(pf.revents == POLLIN);
	FD_ZERO(&rd);
	FD_SET(s, &rd);
	CHECK_ERR(rselect(s + 1, &rd, NULL, NULL, &tv), 1);
	CHECK(FD_ISSET(s, &rd));
	CHECK_ERR(rrecv(s, in, 100, 0), 10);
	CHECK(memcmp(in, "0123456789", 10) == 0);

	/* The reader does not read: the writer fills what the peer has room for, then EAGAIN. */
	fill(buf, big, 7);
	CHECK_OK(rfcntl(c, F_SETFL, O_NONBLOCK));
	while ((n = rsend(c, buf + sent, big - sent, 0)) > 0)
		sent += (size_t)n;
	CHECK_ERR(n, -1);
	CHECK_ERR(errno, EAGAIN);
	CHECK(sent > 0 && sent < big);
	pf = (struct pollfd){ .fd = c, .events = POLLOUT };
	CHECK_ERR(rpoll(&pf, 1, 0), 0);
	/* Reading it all gives the room back: the writer becomes writable. */
	CHECK_OK(rfcntl(s, F_SETFL, 0));
	CHECK_ERR(recv_all(s, in, sent), (ssize_t)sent);
	CHECK(memcmp(in, buf, sent) == 0);
	CHECK_ERR(rpoll(&pf, 1, WAIT_MS), 1);
	CHECK(pf.revents == POLLOUT);
	/* A listener without a request: EAGAIN when non-blocking, and not readable. */
	CHECK_OK(rfcntl(l, F_SETFL, O_NONBLOCK));
	CHECK_ERR(raccept(l, NULL, NULL), -1);
	CHECK_ERR(errno, EAGAIN);
	pf = (struct pollfd){ .fd = l, .events = POLLIN };
	CHECK_ERR(rpoll(&pf, 1, 0), 0);
}

/* rshutdown(SHUT_WR): the peer reads what came before, then EOF, and can still answer. */
static void test_half_close(void)
{
	static int l, c, s;
	char in[16] = { 0 };

	make_pair(&l, &c, &s, 0);
	CHECK_ERR(rsend(c, "last words", 10, 0), 10);
	CHECK_OK(rshutdown(c, SHUT_WR));
	CHECK_ERR(rsend(c, "x", 1, 0), -1);
	CHECK_ERR(errno, EPIPE);
	CHECK_ERR(recv_all(s, (uint8_t *)in, 10), 10);
	CHECK(memcmp(in, "last words", 10) == 0);
	CHECK_ERR(rrecv(s, in, sizeof(in), 0), 0);
	CHECK_ERR(rrecv(s, in, sizeof(in), 0), 0);
	CHECK_ERR(rsend(s, "reply", 5, 0), 5);
	CHECK_ERR(recv_all(c, (uint8_t *)in, 5), 5);
	CHECK(memcmp(in, "reply", 5) == 0);
}

/*
 * rclose with data still on its way: a writer that closes right after a
 * write larger than the peer's ring; the peer reads every byte, then EOF.
 */
static void test_close_pending_writes(void)
{
	static int l, c, s;
	size_t len = 300000;
	uint8_t *out = malloc(len), *in = calloc(1, len + 1);
	struct sender snd;
	pthread_t t;

	th_defer(free, out);
	th_defer(free, in);
	make_pair(&l, &c, &s, 16384);
	fill(out, len, 3);
	snd = (struct sender){ .fd = c, .buf = out, .len = len, .close_after = true };
	c = -1; /* the sender closes it */
	pthread_create(&t, NULL, sender_run, &snd);
	CHECK_ERR(recv_all(s, in, len + 1), (ssize_t)len);
	pthread_join(t, NULL);
	CHECK(snd.ret == (ssize_t)len);
	CHECK(memcmp(in, out, len) == 0);
	CHECK_ERR(rrecv(s, in, 1, 0), 0);
}

/* rclose with received data unread: returns at once; the peer sees EOF, then its writes fail. */
static void test_close_unread(void)
{
	static int l, c, s;
	char in[4];
	ssize_t r = 0;

	make_pair(&l, &c, &s, 0);
	CHECK_ERR(rsend(c, "unread data", 11, 0), 11);
	CHECK_OK(rclose(s));
	s = -1;
	CHECK_ERR(rrecv(c, in, sizeof(in), 0), 0);
	/* The connection is gone: a write fails (after at most the one the peer's close raced with). */
	for (int i = 0; i < 1000 && (r = rsend(c, "x", 1, 0)) == 1; i++)
		usleep(1000);
	CHECK_ERR(r, -1);
	CHECK_ERR(errno, ECONNRESET);
}

/*
 * Between processes: a child connects and sends, the parent echoes back,
 * through rings of two sizes one after the other (the second connection's
 * buffers come after the first one's are gone).
 */
static void test_processes(void)
{
	static const int bufs[] = { 16384, 65536 };
	static int l, s;
	size_t len = (1u << 20) + 3;
	uint8_t *in = malloc(len);
	pid_t kid;
	int st = -1;

	th_defer(free, in);
	for (int k = 0; k < 2; k++) {
		uint16_t port = 0;
		int fds[2];
		char go;

		l = s = -1;
		th_defer(rs_close_fd, &l);
		th_defer(rs_close_fd, &s);
		CHECK_OK(listener(&l, &port, bufs[k]));
		CHECK_OK(pipe(fds));
		kid = fork();
		CHECK(kid >= 0);
		if (kid == 0) {
			struct sockaddr_in a = addr_of(port);
			uint8_t *out = malloc(len), *back = malloc(len);
			struct sender snd;
			pthread_t t;
			int c;

			close(fds[1]);
			if (read(fds[0], &go, 1) != 1)
				_exit(2);
			c = rsocket(AF_INET, SOCK_STREAM, 0);
			if (c < 0 || rsetsockopt(c, SOL_SOCKET, SO_RCVBUF, &bufs[k], sizeof(int)) != 0 ||
			    rconnect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
				_exit(3);
			fill(out, len, (unsigned)k + 40);
			snd = (struct sender){ .fd = c, .buf = out, .len = len };
			pthread_create(&t, NULL, sender_run, &snd);
			if (recv_all(c, back, len) != (ssize_t)len)
				_exit(4);
			pthread_join(t, NULL);
			_exit(snd.ret == (ssize_t)len && memcmp(out, back, len) == 0 ? 0 : 5);
		}
		close(fds[0]);
		CHECK_ERR(write(fds[1], "g", 1), 1);
		close(fds[1]);
		s = raccept(l, NULL, NULL);
		CHECK(s >= 0);
		CHECK_ERR(recv_all(s, in, len), (ssize_t)len);
		CHECK_ERR(rsend(s, in, len, 0), (ssize_t)len);
		CHECK_ERR(waitpid(kid, &st, 0), kid);
		CHECK(WIFEXITED(st));
		CHECK_ERR(WEXITSTATUS(st), 0);
		rclose(s);
		rclose(l);
		s = l = -1;
	}
}

/* A peer killed mid-connection: the blocked reader gets ECONNRESET (not EOF, not a hang). */
static void test_peer_killed(void)
{
	static int l, s;
	int fds[2];
	uint16_t port = 0;
	char in[8] = { 0 };
	pid_t kid;

	l = s = -1;
	th_defer(rs_close_fd, &l);
	th_defer(rs_close_fd, &s);
	CHECK_OK(listener(&l, &port, 0));
	CHECK_OK(pipe(fds));
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		struct sockaddr_in a = addr_of(port);
		int c;
		char go;

		close(fds[1]);
		if (read(fds[0], &go, 1) != 1)
			_exit(2);
		c = rsocket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || rconnect(c, (struct sockaddr *)&a, sizeof(a)) != 0 || rsend(c, "alive", 5, 0) != 5)
			_exit(3);
		pause();
		_exit(0);
	}
	close(fds[0]);
	CHECK_ERR(write(fds[1], "g", 1), 1);
	close(fds[1]);
	s = raccept(l, NULL, NULL);
	CHECK(s >= 0);
	CHECK_ERR(recv_all(s, (uint8_t *)in, 5), 5);
	CHECK(memcmp(in, "alive", 5) == 0);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	alarm(60); /* a hang guard only */
	CHECK_ERR(rrecv(s, in, sizeof(in), 0), -1);
	CHECK_ERR(errno, ECONNRESET);
	CHECK_ERR(rsend(s, "x", 1, 0), -1);
	CHECK_ERR(errno, ECONNRESET);
	alarm(0);
	struct pollfd pf = { .fd = s, .events = POLLIN };
	CHECK_ERR(rpoll(&pf, 1, WAIT_MS), 1);
	CHECK(pf.revents & POLLHUP);
}

/* A connect to a port nobody listens on: ECONNREFUSED, blocking or through SO_ERROR. */
static void test_refused(void)
{
	struct sockaddr_in a;
	static int c;
	int err = 0;
	uint16_t port = 0;
	socklen_t len = sizeof(err);
	struct pollfd pf;

	c = -1;
	th_defer(rs_close_fd, &c);
	/* A port the CM gave a listener that is gone: nobody listens there. */
	CHECK_OK(listener(&c, &port, 0));
	rclose(c);
	a = addr_of(port);
	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0);
	CHECK_ERR(rconnect(c, (struct sockaddr *)&a, sizeof(a)), -1);
	CHECK_ERR(errno, ECONNREFUSED);
	rclose(c);
	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0);
	CHECK_OK(rfcntl(c, F_SETFL, O_NONBLOCK));
	CHECK_ERR(rconnect(c, (struct sockaddr *)&a, sizeof(a)), -1);
	CHECK_ERR(errno, EINPROGRESS);
	pf = (struct pollfd){ .fd = c, .events = POLLOUT };
	CHECK_ERR(rpoll(&pf, 1, WAIT_MS), 1);
	CHECK(pf.revents & POLLOUT);
	CHECK_OK(rgetsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len));
	CHECK_ERR(err, ECONNREFUSED);
}

/* Waits for the next CM event of ch and gives its type (-1 after WAIT_MS). */
static int next_event(struct rdma_event_channel *ch, int *status)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pf, 1, WAIT_MS) != 1 || rdma_get_cm_event(ch, &ev) != 0)
		return -1;
	type = ev->event;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return type;
}

static void cm_side_free(void *arg)
{
	struct rdma_cm_id **id = arg;

	if (*id != NULL) {
		struct rdma_event_channel *ch = (*id)->channel;

		rdma_destroy_id(*id);
		rdma_destroy_event_channel(ch);
		*id = NULL;
	}
}

/*
 * A requester that is no rsocket (its private data is not an rsocket's
 * hello): raccept refuses it with ECONNABORTED, and the requester sees its
 * connection rejected (status 28, consumer defined); the listener goes on.
 */
static void test_foreign_request(void)
{
	static struct rdma_cm_id *id;
	static int l;
	uint16_t port = 0;
	struct sockaddr_in a;
	struct rdma_event_channel *ch;
	uint8_t junk[40];
	struct rdma_conn_param p = { .private_data = junk, .private_data_len = sizeof(junk) };
	int st = 0;

	l = -1;
	id = NULL;
	th_defer(rs_close_fd, &l);
	th_defer(cm_side_free, &id);
	CHECK_OK(listener(&l, &port, 0));
	a = addr_of(port);
	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0) {
		rdma_destroy_event_channel(ch);
		CHECK(0);
	}
	memset(junk, 0xa5, sizeof(junk));
	CHECK_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000));
	CHECK_ERR(next_event(ch, &st), RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK_OK(rdma_resolve_route(id, 2000));
	CHECK_ERR(next_event(ch, &st), RDMA_CM_EVENT_ROUTE_RESOLVED);
	CHECK_OK(rdma_connect(id, &p));
	CHECK_ERR(raccept(l, NULL, NULL), -1);
	CHECK_ERR(errno, ECONNABORTED);
	CHECK_ERR(next_event(ch, &st), RDMA_CM_EVENT_REJECTED);
	CHECK_ERR(st, 28);
	CHECK_OK(rfcntl(l, F_SETFL, O_NONBLOCK));
	CHECK_ERR(raccept(l, NULL, NULL), -1);
	CHECK_ERR(errno, EAGAIN);
}

/* What is not there: rsockets over UD (SOCK_DGRAM) is refused with EOPNOTSUPP. */
static void test_refusals(void)
{
	CHECK_ERR(rsocket(AF_INET, SOCK_DGRAM, 0), -1);
	CHECK_ERR(errno, EOPNOTSUPP);
	CHECK_ERR(rsocket(AF_UNIX, SOCK_STREAM, 0), -1);
	CHECK_ERR(errno, EAFNOSUPPORT);
}

/*
 * I/O mapping: the peer's riowrite lands in the riomap'ed buffer without a
 * call on this side; the mapping is known to the writer once a message
 * sent after it has arrived.
 */
static void test_iomap(void)
{
	static int l, c, s;
	size_t len = 100000;
	uint8_t *map = calloc(1, len), *data = malloc(len);
	char m;
	int v = 1;
	socklen_t vl = sizeof(v);

	th_defer(free, map);
	th_defer(free, data);
	make_pair(&l, &c, &s, 16384);
	CHECK_OK(rsetsockopt(s, SOL_RDMA, RDMA_IOMAPSIZE, &v, sizeof(v)));
	v = 0;
	CHECK_OK(rgetsockopt(s, SOL_RDMA, RDMA_IOMAPSIZE, &v, &vl));
	CHECK_ERR(v, 1);
	CHECK_ERR(riomap(s, map, len, PROT_READ, 0, 0), -1);
	CHECK_ERR(errno, EINVAL);
	CHECK_ERR(riomap(s, map, len, PROT_WRITE, 0, 4096), 4096);
	CHECK_ERR(rsend(s, "m", 1, 0), 1);
	CHECK_ERR(rrecv(c, &m, 1, 0), 1);
	fill(data, len, 9);
	/* Past the mapping's end: refused; inside it: every byte lands, at its offset. */
	CHECK_ERR((ssize_t)riowrite(c, data, len, 4097, 0), -1);
	CHECK_ERR(errno, EINVAL);
	CHECK_ERR((ssize_t)riowrite(c, data, len - 1000, 4096 + 1000, 0), (ssize_t)(len - 1000));
	CHECK_ERR(rsend(c, "d", 1, 0), 1);
	CHECK_ERR(rrecv(s, &m, 1, 0), 1);
	CHECK(memcmp(map + 1000, data, len - 1000) == 0);
	/* An offset nobody mapped: a non-blocking write waits for a mapping (EAGAIN). */
	CHECK_ERR((ssize_t)riowrite(c, data, 10, 1 << 30, MSG_DONTWAIT), -1);
	CHECK_ERR(errno, EAGAIN);
	CHECK_ERR(riounmap(s, map, len - 1), -1);
	CHECK_ERR(errno, EINVAL);
	CHECK_OK(riounmap(s, map, len));
	CHECK_ERR(riounmap(s, map, len), -1);
	CHECK_ERR(errno, EINVAL);
}

int main(void)
{
	setenv("SOFTDPU_LOG_LEVEL", "error", 0);
	signal(SIGPIPE, SIG_IGN);
	RUN(test_connect_accept);
	RUN(test_bytes);
	RUN(test_vectors);
	RUN(test_nonblocking);
	RUN(test_half_close);
	RUN(test_close_pending_writes);
	RUN(test_close_unread);
	RUN(test_processes);
	RUN(test_peer_killed);
	RUN(test_refused);
	RUN(test_foreign_request);
	RUN(test_refusals);
	RUN(test_iomap);
	return th_summary("test_rsocket");
}
