/*
 * fab_xm_rdv — the rendezvous of a machine (fab_xm_rdv.h).
 */
#include "fab_xm_rdv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base_clock.h"
#include "base_log.h"
#include "fab_wire.h"
#include "fab_xm.h"

#define RDV_ADDR_MAX 1024
#define RDV_IO_MS 1000 /* a peer that does not read its answer in this time is dropped */

static struct {
	int fd;
	uint16_t alen;
	uint8_t addr[RDV_ADDR_MAX];
} rdv = { .fd = -1 };

static struct sockaddr_in rdv_sockaddr(uint32_t ip)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(FAB_XM_PORT);
	sa.sin_addr.s_addr = htonl(ip);
	return sa;
}

/*
 * Waits for fd to be ready for ev, until deadline (monotonic ns): true when
 * it is. A whole exchange shares one deadline, so a peer trickling bytes (or
 * signals interrupting the wait) cannot stretch it.
 */
static bool rdv_wait(int fd, short ev, uint64_t deadline)
{
	struct pollfd pf = { .fd = fd, .events = ev };
	int n;

	do
		n = poll(&pf, 1, base_deadline_ms_left(deadline));
	while (n < 0 && errno == EINTR);
	return n == 1 && (pf.revents & ev) != 0;
}

static uint64_t rdv_deadline(unsigned ms)
{
	return base_deadline_ns((uint64_t)ms * 1000000u);
}

static void rdv_answer(int c)
{
	uint8_t msg[2 + RDV_ADDR_MAX];
	size_t n = 2u + rdv.alen, done = 0;
	uint64_t deadline = rdv_deadline(RDV_IO_MS);

	fab_put_le(msg, rdv.alen, 2);
	memcpy(msg + 2, rdv.addr, rdv.alen);
	while (done < n && rdv_wait(c, POLLOUT, deadline)) {
		ssize_t k = send(c, msg + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k <= 0 && errno != EAGAIN && errno != EINTR)
			break;
		done += k > 0 ? (size_t)k : 0;
	}
	close(c);
}

static void *rdv_thread(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept4(rdv.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (c >= 0)
			rdv_answer(c);
		else if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
			break; /* the socket went with the process */
	}
	return NULL;
}

int fab_xm_rdv_listen(uint32_t ip, const uint8_t *addr, size_t alen)
{
	struct sockaddr_in sa = rdv_sockaddr(ip);
	pthread_t t;
	int one = 1, fd;

	if (alen == 0 || alen > RDV_ADDR_MAX || rdv.fd >= 0)
		return rdv.fd >= 0 ? 0 : -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0)
		goto err_close;
	memcpy(rdv.addr, addr, alen);
	rdv.alen = (uint16_t)alen;
	rdv.fd = fd;
	if (pthread_create(&t, NULL, rdv_thread, NULL) != 0) {
		rdv.fd = -1;
		goto err_close;
	}
	pthread_detach(t);
	return 0;

err_close:
	close(fd);
err:
	BASE_ERR("cannot listen at %s:%u for other machines: %s", inet_ntoa(sa.sin_addr), FAB_XM_PORT, strerror(errno));
	return -1;
}

/* Reads exactly n bytes before deadline. */
static bool rdv_read(int fd, uint8_t *p, size_t n, uint64_t deadline)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k;

		if (!rdv_wait(fd, POLLIN, deadline))
			return false;
		k = recv(fd, p + done, n - done, MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return false;
		done += k > 0 ? (size_t)k : 0;
	}
	return true;
}

int fab_xm_rdv_lookup(uint32_t ip, uint8_t *addr, size_t cap, unsigned timeout_ms)
{
	struct sockaddr_in sa = rdv_sockaddr(ip);
	uint8_t head[2];
	size_t alen;
	int fd, ret = -1, err = 0;
	socklen_t el = sizeof(err);
	uint64_t deadline = rdv_deadline(timeout_ms);

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    (errno != EINPROGRESS || !rdv_wait(fd, POLLOUT, deadline) ||
	     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0))
		goto out;
	if (!rdv_read(fd, head, sizeof(head), deadline))
		goto out;
	alen = fab_get_le(head, 2);
	if (alen == 0 || alen > cap || !rdv_read(fd, addr, alen, deadline))
		goto out;
	ret = (int)alen;
out:
	close(fd);
	return ret;
}
