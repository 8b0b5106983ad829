/*
 * cm_wire — how CM messages travel between the processes of one host.
 *
 * A bound port is an abstract unix SOCK_SEQPACKET socket named by the
 * machine, the user, the port space and the port, so a port is taken once
 * (EADDRINUSE) and dies with its process. An IPv4 destination that is
 * another machine's address (SOFTDPU_MACHINE) is that machine's port. A connection is one socket per pair
 * of ids: a REQ is the first message on it, and a peer's death is its EOF.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/un.h>
#include <unistd.h>

#include "cm_int.h"
#include "hw_machine.h"

#define CM_EPHEMERAL_LO 32768
#define CM_EPHEMERAL_N 28232
#define CM_BIND_TRIES 64

static socklen_t cm_wire_name(struct sockaddr_un *sun, const char *machine, enum rdma_port_space ps,
			      uint16_t port)
{
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* sun_path[0] stays 0: an abstract name, gone with the last socket holding it. */
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "softdpu-rdmacm%s-u%u-ps%x-%u", machine,
		     (unsigned)getuid(), (unsigned)ps, (unsigned)port);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/*
 * The machine an IPv4 destination names when it is not this process's:
 * SOFTDPU_MACHINE's address of another machine of the host (hw_machine.h),
 * whose CM is tried first. False for any other destination.
 */
static bool cm_wire_other_machine(const struct sockaddr *dst, char *tag, size_t n)
{
	uint32_t ip, own;

	if (dst->sa_family != AF_INET)
		return false;
	ip = ntohl(((const struct sockaddr_in *)dst)->sin_addr.s_addr);
	if (hw_machine_ipv4(&own) && own == ip)
		return false;
	snprintf(tag, n, "-m%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
	return true;
}

static int cm_wire_try_bind(int fd, enum rdma_port_space ps, uint16_t port)
{
	struct sockaddr_un sun;
	socklen_t len = cm_wire_name(&sun, hw_machine_tag(), ps, port);

	return bind(fd, (struct sockaddr *)&sun, len) == 0 ? 0 : errno;
}

/* Reserves *port (0: an ephemeral one, written back) in the id's port space. */
int cm_wire_bind(struct cm_id *id, uint16_t *port)
{
	int fd, rc = EADDRINUSE, i;
	uint32_t r;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (*port != 0) {
		rc = cm_wire_try_bind(fd, id->id.ps, *port);
	} else {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid();
		for (i = 0; i < CM_BIND_TRIES && rc == EADDRINUSE; i++) {
			uint16_t p = (uint16_t)(CM_EPHEMERAL_LO + (r + (uint32_t)i * 7919u) % CM_EPHEMERAL_N);

			rc = cm_wire_try_bind(fd, id->id.ps, p);
			if (rc == 0)
				*port = p;
		}
	}
	if (rc != 0) {
		close(fd);
		return rc;
	}
	id->psock = fd;
	return 0;
}

int cm_wire_listen(struct cm_id *id)
{
	if (listen(id->psock, SOMAXCONN) != 0)
		return errno;
	return cm_loop_watch(id, id->psock);
}

static int cm_wire_try_connect(int fd, const char *machine, struct cm_id *id)
{
	struct sockaddr_un sun;
	socklen_t len = cm_wire_name(&sun, machine, id->id.ps, cm_addr_port((struct sockaddr *)&id->dst));

	return connect(fd, (struct sockaddr *)&sun, len) == 0 ? 0 : errno;
}

/*
 * Connects to the destination's port, on the destination's machine when it
 * names another one, else on this one; the errno of a refused connect when
 * nobody listens. Never waits (cm_lock is held): a unix connect completes at
 * once into the listener's queue, or fails (ECONNREFUSED: nobody listens;
 * EAGAIN: the queue is full because the listening process is not running).
 */
int cm_wire_connect(struct cm_id *id)
{
	char other[24];
	int fd, rc = ECONNREFUSED;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (cm_wire_other_machine((struct sockaddr *)&id->dst, other, sizeof(other)))
		rc = cm_wire_try_connect(fd, other, id);
	if (rc == ECONNREFUSED)
		rc = cm_wire_try_connect(fd, hw_machine_tag(), id);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	id->sock = fd;
	return 0;
}

void cm_wire_fill(struct cm_id *id, struct cm_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->psn = id->psn;
	m->qkey = RDMA_UDP_QKEY;
	if (id->id.qp != NULL)
		m->qpn = id->id.qp->qp_num;
	if (id->dev != NULL) {
		m->lid = id->dev->lid;
		memcpy(m->gid, id->dev->gid.raw, sizeof(m->gid));
	}
	memcpy(&m->src, &id->src, sizeof(m->src));
	memcpy(&m->dst, &id->dst, sizeof(m->dst));
}

/* Sends m on the id's connection; MSG_NOSIGNAL: a dead peer is an error here, not SIGPIPE. */
int cm_wire_send(struct cm_id *id, struct cm_msg *m)
{
	if (id->sock < 0)
		return ENOTCONN;
	if (send(id->sock, m, sizeof(*m), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(*m))
		return errno;
	return 0;
}
