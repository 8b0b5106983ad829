/*
 * rs_opt — rsockets' options, flags and names: rsetsockopt, rgetsockopt,
 * rfcntl, rgetsockname, rgetpeername.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <string.h>

#include "rs_int.h"

static uint32_t rs_clamp(int v, uint32_t lo, uint32_t hi)
{
	if (v < (int)lo)
		return lo;
	return (uint32_t)v > hi ? hi : (uint32_t)v;
}

/* Sizes take effect on a socket without queues yet (before rconnect, or a listener's for its accepts). */
static int rs_set_size(struct rs *rs, int optname, int v)
{
	if (rs->cq != NULL)
		return 0; /* made already: kept, as rsockets do */
	switch (optname) {
	case RDMA_SQSIZE:
		rs->sq_size = rs_clamp(v, 4, 1024);
		return 0;
	case RDMA_RQSIZE:
		rs->rq_size = rs_clamp(v, 4, RS_MAX_QSIZE);
		return 0;
	case RDMA_INLINE:
		rs->inline_size = rs_clamp(v, 0, 256);
		return 0;
	default:
		break;
	}
	errno = ENOPROTOOPT;
	return -1;
}

static int rs_set_rdma(struct rs *rs, int optname, int v)
{
	switch (optname) {
	case RDMA_SQSIZE:
	case RDMA_RQSIZE:
	case RDMA_INLINE:
		return rs_set_size(rs, optname, v);
	case RDMA_ROUTE:
		return 0; /* routes come from the topology */
	case RDMA_IOMAPSIZE:
		/* Kept for rgetsockopt: the peer's mappings are bounded by RS_MAX_IOMAPS. */
		rs->iomap_size = (int)rs_clamp(v, 0, RS_MAX_IOMAPS);
		return 0;
	default:
		errno = ENOPROTOOPT;
		return -1;
	}
}

static int rs_set_socket(struct rs *rs, int optname, int v)
{
	switch (optname) {
	case SO_REUSEADDR:
		rs->reuseaddr = v != 0;
		return 0;
	case SO_KEEPALIVE:
		rs->keepalive = v != 0;
		return 0;
	case SO_SNDBUF:
		if (rs->cq == NULL)
			rs->sbuf_size = rs_clamp(v, RS_MIN_BUF, RS_MAX_BUF);
		return 0;
	case SO_RCVBUF:
		if (rs->cq == NULL)
			rs->rbuf_size = rs_clamp(v, RS_MIN_BUF, RS_MAX_BUF);
		return 0;
	case SO_LINGER:
		return 0;
	default:
		errno = ENOPROTOOPT;
		return -1;
	}
}

CM_EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct rs *rs;
	int v = 0, ret = -1;

	if (optval == NULL && optlen > 0) {
		errno = EFAULT;
		return -1;
	}
	if (level != SOL_RDMA || optname != RDMA_ROUTE) {
		if (optlen < sizeof(int)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(&v, optval, sizeof(v));
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	switch (level) {
	case SOL_SOCKET:
		ret = rs_set_socket(rs, optname, v);
		break;
	case IPPROTO_TCP:
		if (optname == TCP_NODELAY) {
			rs->nodelay = v != 0;
			ret = 0;
		} else if (optname == TCP_KEEPIDLE) {
			rs->keepidle = v;
			ret = 0;
		} else {
			errno = ENOPROTOOPT;
		}
		break;
	case SOL_RDMA:
		ret = rs_set_rdma(rs, optname, v);
		break;
	case IPPROTO_IPV6:
		ret = 0; /* IPV6_V6ONLY: the CM's addresses decide */
		break;
	default:
		errno = ENOPROTOOPT;
		break;
	}
	rs_unlock(rs);
	return ret;
}

static int rs_get_int(const struct rs *rs, int level, int optname, int *v)
{
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_REUSEADDR: *v = rs->reuseaddr; return 0;
		case SO_KEEPALIVE: *v = rs->keepalive; return 0;
		case SO_SNDBUF: *v = (int)rs->sbuf_size; return 0;
		case SO_RCVBUF: *v = (int)rs->rbuf_size; return 0;
		case SO_TYPE: *v = SOCK_STREAM; return 0;
		default: break;
		}
		break;
	case IPPROTO_TCP:
		if (optname == TCP_NODELAY) {
			*v = rs->nodelay;
			return 0;
		}
		if (optname == TCP_KEEPIDLE) {
			*v = rs->keepidle;
			return 0;
		}
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE: *v = (int)rs->sq_size; return 0;
		case RDMA_RQSIZE: *v = (int)rs->rq_size; return 0;
		case RDMA_INLINE: *v = (int)rs->inline_size; return 0;
		case RDMA_IOMAPSIZE: *v = rs->iomap_size; return 0;
		default: break;
		}
		break;
	default:
		break;
	}
	errno = ENOPROTOOPT;
	return -1;
}

CM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rs *rs;
	int v = 0, ret;

	if (optval == NULL || optlen == NULL) {
		errno = EFAULT;
		return -1;
	}
	if (*optlen < sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	if (level == SOL_SOCKET && optname == SO_ERROR) {
		/* Reading the pending error clears it, as for a socket. */
		rs_process(rs);
		v = rs->so_error;
		rs->so_error = 0;
		ret = 0;
	} else {
		ret = rs_get_int(rs, level, optname, &v);
	}
	rs_unlock(rs);
	if (ret == 0) {
		memcpy(optval, &v, sizeof(v));
		*optlen = sizeof(v);
	}
	return ret;
}

CM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	struct rs *rs = rs_lock(socket);
	va_list ap;
	int ret = -1;

	if (rs == NULL)
		return -1;
	switch (cmd) {
	case F_GETFL:
		ret = O_RDWR | (rs->nonblock ? O_NONBLOCK : 0);
		break;
	case F_SETFL:
		va_start(ap, cmd);
		rs->nonblock = (va_arg(ap, int) & O_NONBLOCK) != 0;
		va_end(ap);
		ret = 0;
		break;
	default:
		errno = ENOSYS;
		break;
	}
	rs_unlock(rs);
	return ret;
}

static int rs_name(int socket, struct sockaddr *addr, socklen_t *addrlen, bool peer)
{
	struct rs *rs;
	const struct sockaddr *a;
	socklen_t len;

	if (addr == NULL || addrlen == NULL) {
		errno = EFAULT;
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	if (peer && rs->state != RS_CONNECTED && rs->state != RS_ACCEPTING) {
		rs_unlock(rs);
		errno = ENOTCONN;
		return -1;
	}
	a = peer ? rdma_get_peer_addr(rs->id) : rdma_get_local_addr(rs->id);
	len = a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	memcpy(addr, a, *addrlen < len ? *addrlen : len);
	*addrlen = len;
	rs_unlock(rs);
	return 0;
}

CM_EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return rs_name(socket, addr, addrlen, true);
}

CM_EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	return rs_name(socket, addr, addrlen, false);
}
