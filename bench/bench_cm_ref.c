/*
 * bench_cm_ref — the plain TCP exchanges the RDMA CM benchmark (bench/cm.sh)
 * sets its figures beside, between two processes over loopback:
 *   connect N    N connections opened at once and accepted, then closed, as
 *                cmtime opens N RDMA CM connections at once: total ms and
 *                µs per connection.
 *   pingpong N S N iterations of rping's exchange done over TCP: the client
 *                sends its buffer's description (16 bytes), the server reads
 *                S bytes from the client (asks, and they come back) and
 *                writes S bytes back, then tells the client to go on — four
 *                messages and 2 x S bytes an iteration, as rping's SEND,
 *                RDMA READ, RDMA WRITE and SEND: µs per iteration.
 * Needs no softdpu library.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int listener(uint16_t *port, int backlog)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, backlog) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

static int dial(uint16_t port, bool nonblock)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool xfer(int fd, void *p, size_t n, bool out)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t k = out ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, 0);

		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}

/* N connections at once from a child, accepted here. */
static int run_connect(int n)
{
	uint16_t port;
	int lfd = listener(&port, n), st;
	double t0, t1;
	pid_t kid;

	if (lfd < 0)
		return 1;
	t0 = now_us();
	kid = fork();
	if (kid == 0) {
		int *fds = calloc((size_t)n, sizeof(int));
		struct pollfd *pf = calloc((size_t)n, sizeof(*pf));

		for (int i = 0; i < n; i++) {
			fds[i] = dial(port, true);
			pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLOUT };
		}
		for (int left = n; left > 0;) {
			int r = poll(pf, (nfds_t)n, 1000);

			if (r <= 0)
				_exit(2);
			for (int i = 0; i < n; i++)
				if (pf[i].fd >= 0 && (pf[i].revents & POLLOUT)) {
					pf[i].fd = -1;
					left--;
				}
		}
		for (int i = 0; i < n; i++)
			close(fds[i]);
		_exit(0);
	}
	for (int i = 0; i < n; i++) {
		int c = accept(lfd, NULL, NULL);

		if (c < 0)
			return 1;
		close(c);
	}
	waitpid(kid, &st, 0);
	t1 = now_us();
	close(lfd);
	printf("tcp_connect conns %d total_ms %.2f us_per_conn %.2f\n", n, (t1 - t0) / 1e3, (t1 - t0) / n);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* The server's side of rping's exchange, over TCP. */
static void serve_pingpong(int fd, int iters, size_t size, uint8_t *buf)
{
	uint8_t desc[16], go = 1;

	for (int i = 0; i < iters; i++) {
		if (!xfer(fd, desc, sizeof(desc), false) || !xfer(fd, &go, 1, true) || !xfer(fd, buf, size, false) ||
		    !xfer(fd, buf, size, true) || !xfer(fd, &go, 1, true))
			_exit(3);
	}
	_exit(0);
}

static int run_pingpong(int iters, size_t size)
{
	uint16_t port;
	int lfd = listener(&port, 1), fd, st;
	uint8_t *buf = malloc(size), desc[16] = { 0 }, go;
	double t0, t1;
	pid_t kid;

	if (lfd < 0 || buf == NULL)
		return 1;
	memset(buf, 0x5a, size);
	kid = fork();
	if (kid == 0) {
		int c = accept(lfd, NULL, NULL), one = 1;

		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		serve_pingpong(c, iters, size, buf);
	}
	fd = dial(port, false);
	if (fd < 0)
		return 1;
	t0 = now_us();
	for (int i = 0; i < iters; i++) {
		/* The server asks for the bytes (its READ), gets them, writes them back, then says go on. */
		if (!xfer(fd, desc, sizeof(desc), true) || !xfer(fd, &go, 1, false) || !xfer(fd, buf, size, true) ||
		    !xfer(fd, buf, size, false) || !xfer(fd, &go, 1, false))
			return 1;
	}
	t1 = now_us();
	close(fd);
	waitpid(kid, &st, 0);
	printf("tcp_pingpong iters %d size %zu us_per_iter %.2f\n", iters, size, (t1 - t0) / iters);
	free(buf);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "connect") == 0)
		return run_connect(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "pingpong") == 0)
		return run_pingpong(atoi(argv[2]), (size_t)strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: %s connect <n> | pingpong <iterations> <size>\n", argv[0]);
	return 2;
}
