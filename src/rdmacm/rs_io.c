/*
 * rs_io — the read and write calls of rsockets, each a form of the one
 * send and the one receive of rs_data.c (SOCK_STREAM: addresses are the
 * connection's).
 */
#include <errno.h>
#include <string.h>

#include "rs_int.h"

static ssize_t rs_sendv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	struct rs *rs;
	ssize_t ret;

	if (iovcnt < 0 || (iov == NULL && iovcnt > 0)) {
		errno = EINVAL;
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	ret = rs_send_locked(rs, iov, iovcnt, flags);
	rs_unlock(rs);
	return ret;
}

static ssize_t rs_recvv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	struct rs *rs;
	ssize_t ret;

	if (iovcnt < 0 || (iov == NULL && iovcnt > 0)) {
		errno = EINVAL;
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	ret = rs_recv_locked(rs, iov, iovcnt, flags);
	rs_unlock(rs);
	return ret;
}

CM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return rs_sendv(socket, &iov, 1, flags);
}

CM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
			  socklen_t addrlen)
{
	(void)addrlen;
	if (dest_addr != NULL) {
		errno = EISCONN; /* a stream socket sends to its connection only */
		return -1;
	}
	return rsend(socket, buf, len, flags);
}

CM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	if (msg == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (msg->msg_name != NULL) {
		errno = EISCONN;
		return -1;
	}
	return rs_sendv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

CM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

CM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return rs_sendv(socket, iov, iovcnt, 0);
}

CM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return rs_recvv(socket, &iov, 1, flags);
}

CM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
			    socklen_t *addrlen)
{
	ssize_t ret = rrecv(socket, buf, len, flags);

	if (ret >= 0 && src_addr != NULL && addrlen != NULL) {
		int err = errno;

		(void)rgetpeername(socket, src_addr, addrlen);
		errno = err;
	}
	return ret;
}

CM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	ssize_t ret;

	if (msg == NULL) {
		errno = EINVAL;
		return -1;
	}
	ret = rs_recvv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
	if (ret >= 0) {
		msg->msg_flags = 0;
		msg->msg_controllen = 0;
		if (msg->msg_name != NULL) {
			socklen_t len = msg->msg_namelen;

			if (rgetpeername(socket, msg->msg_name, &len) == 0)
				msg->msg_namelen = len;
		}
	}
	return ret;
}

CM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

CM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return rs_recvv(socket, iov, iovcnt, 0);
}
