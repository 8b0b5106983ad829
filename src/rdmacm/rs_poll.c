/*
 * rs_poll — rpoll and rselect over rsockets and ordinary fds together. An
 * rsocket is ready from its own state (data or EOF in the ring, credits to
 * send, a request to accept, a connection made or failed); to sleep, its CQ
 * is armed and poll(2) waits on its CQ channel and event channel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rs_int.h"

short rs_revents(struct rs *rs, short events)
{
	short r = 0;

	switch (rs->state) {
	case RS_LISTEN:
		if (rs->reqs != NULL)
			r |= POLLIN;
		break;
	case RS_CONNECTING:
	case RS_ACCEPTING:
		break;
	case RS_CONNECTED:
		if (rs->rbytes > 0 || rs->fin_rcvd || rs->shut_rd)
			r |= POLLIN;
		if (rs->shut_wr || rs_can_send(rs))
			r |= POLLOUT;
		if (rs->err != 0 || rs->disconnected) {
			r |= POLLIN | POLLOUT;
			/* Hung up once nothing is left to read: data that came first is read as usual. */
			if (rs->rbytes == 0)
				r |= POLLHUP | (rs->err != 0 ? POLLERR : 0);
		}
		break;
	case RS_CLOSED:
		r |= POLLIN | POLLOUT | POLLHUP;
		if (rs->so_error != 0 || rs->err != 0)
			r |= POLLERR;
		break;
	default:
		r |= POLLOUT; /* as a fresh TCP socket */
		break;
	}
	return r & (events | POLLERR | POLLHUP);
}

static int rs_ms_left(const struct timespec *end, int timeout)
{
	struct timespec now;
	long ms;

	if (timeout < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (end->tv_sec - now.tv_sec) * 1000 + (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

/* Each rsocket's state now; 1 for every fd with something to report. */
static int rs_poll_check(struct pollfd *fds, nfds_t nfds, bool arm, int *armed_late)
{
	int n = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rs *rs = rs_get(fds[i].fd);

		if (rs == NULL)
			continue;
		pthread_mutex_lock(&rs->lock);
		rs_process(rs);
		fds[i].revents = rs_revents(rs, fds[i].events);
		if (fds[i].revents == 0 && arm && rs_arm(rs)) {
			*armed_late = 1; /* completions came while arming: look again */
			rs_process(rs);
			fds[i].revents = rs_revents(rs, fds[i].events);
		}
		pthread_mutex_unlock(&rs->lock);
		n += fds[i].revents != 0;
	}
	return n;
}

/* The kernel's part: each rsocket as its two channels, any other fd as itself. */
static int rs_poll_sys(struct pollfd *fds, nfds_t nfds, struct pollfd *sys, int ms)
{
	nfds_t k = 0;
	int n = 0, ret;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rs *rs = rs_get(fds[i].fd);

		if (rs == NULL) {
			sys[k++] = fds[i];
			continue;
		}
		sys[k++] = (struct pollfd){ .fd = rs->ch->fd, .events = POLLIN };
		sys[k++] = (struct pollfd){ .fd = rs->cc != NULL ? rs->cc->fd : -1, .events = POLLIN };
	}
	ret = poll(sys, k, ms);
	if (ret < 0)
		return -1;
	k = 0;
	for (nfds_t i = 0; i < nfds; i++) {
		struct rs *rs = rs_get(fds[i].fd);

		if (rs == NULL) {
			fds[i].revents = sys[k++].revents;
			n += fds[i].revents != 0;
			continue;
		}
		if (sys[k + 1].revents != 0) {
			pthread_mutex_lock(&rs->lock);
			rs_woken(rs);
			pthread_mutex_unlock(&rs->lock);
		}
		k += 2;
	}
	return n;
}

CM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *sys;
	struct timespec end;
	int n, late, ret = -1;

	if (fds == NULL && nfds > 0) {
		errno = EFAULT;
		return -1;
	}
	sys = calloc(nfds * 2 + 1, sizeof(*sys));
	if (sys == NULL) {
		errno = ENOMEM;
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (timeout > 0) {
		end.tv_sec += timeout / 1000;
		end.tv_nsec += (long)(timeout % 1000) * 1000000;
		if (end.tv_nsec >= 1000000000) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000;
		}
	}
	for (nfds_t i = 0; i < nfds; i++)
		fds[i].revents = 0;
	for (;;) {
		int ms, m;

		late = 0;
		n = rs_poll_check(fds, nfds, timeout != 0, &late);
		ms = n > 0 || late ? 0 : rs_ms_left(&end, timeout);
		m = rs_poll_sys(fds, nfds, sys, ms);
		if (m < 0)
			goto out;
		n += m;
		if (n > 0)
			break;
		if (!late && ms == 0)
			break; /* the time is up */
		/* Woken by an rsocket's channel, or completions came while arming: look again. */
	}
	ret = n;
	if (n == 0 && timeout == 0)
		rs_would_block(); /* a program polling in a loop: let the engine threads run */
out:
	free(sys);
	return ret;
}

static int rs_fds_from_sets(int nfds, fd_set *r, fd_set *w, fd_set *e, struct pollfd *p)
{
	int n = 0;

	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (r != NULL && FD_ISSET(fd, r))
			ev |= POLLIN;
		if (w != NULL && FD_ISSET(fd, w))
			ev |= POLLOUT;
		if (e != NULL && FD_ISSET(fd, e))
			ev |= POLLPRI;
		if (ev != 0)
			p[n++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	return n;
}

static int rs_sets_from_fds(const struct pollfd *p, int n, fd_set *r, fd_set *w, fd_set *e)
{
	int cnt = 0;

	if (r != NULL)
		FD_ZERO(r);
	if (w != NULL)
		FD_ZERO(w);
	if (e != NULL)
		FD_ZERO(e);
	for (int i = 0; i < n; i++) {
		if (r != NULL && (p[i].events & POLLIN) && (p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(p[i].fd, r);
			cnt++;
		}
		if (w != NULL && (p[i].events & POLLOUT) && (p[i].revents & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, w);
			cnt++;
		}
		if (e != NULL && (p[i].events & POLLPRI) && (p[i].revents & POLLPRI)) {
			FD_SET(p[i].fd, e);
			cnt++;
		}
	}
	return cnt;
}

CM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	struct pollfd *p;
	int n, ret, ms = -1;

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	p = calloc((size_t)nfds + 1, sizeof(*p));
	if (p == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (timeout != NULL)
		ms = (int)(timeout->tv_sec * 1000 + (timeout->tv_usec + 999) / 1000);
	n = rs_fds_from_sets(nfds, readfds, writefds, exceptfds, p);
	ret = rpoll(p, (nfds_t)n, ms);
	if (ret >= 0)
		ret = rs_sets_from_fds(p, n, readfds, writefds, exceptfds);
	free(p);
	return ret;
}
