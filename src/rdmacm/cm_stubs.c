/*
 * cm_stubs — the exports of rdma-core v44's librdmacm that are not
 * implemented here: ECE, the extended SRQ and rsockets. Each is
 * present in the ABI, logs one line on its first call and fails with ENOSYS
 * (docs/STATUS.md lists them).
 */
#include <errno.h>
#include <rdma/rsocket.h>

#include "base_log.h"
#include "cm_int.h"

void cm_log_unsupported(const char *name)
{
	BASE_WARN("%s: not supported by softdpu's librdmacm", name);
}

#define CM_NOSYS(name, ret)                                                                      \
	do {                                                                                     \
		static int once_;                                                                \
		if (!__atomic_exchange_n(&once_, 1, __ATOMIC_RELAXED))                           \
			cm_log_unsupported(name);                                                \
		errno = ENOSYS;                                                                  \
		return ret;                                                                      \
	} while (0)

CM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	CM_NOSYS(__func__, -1);
}

/* rsockets */
CM_EXPORT int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rclose(int socket)
{
	(void)socket;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
			    socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
			  socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	(void)fds, (void)nfds, (void)timeout;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	(void)nfds, (void)readfds, (void)writefds, (void)exceptfds, (void)timeout;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	CM_NOSYS(__func__, (off_t)-1);
}

CM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	CM_NOSYS(__func__, 0);
}
