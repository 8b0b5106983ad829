/*
 * cm_wire — how CM messages travel between the processes of one host.
 *
 * A bound port is an abstract unix SOCK_SEQPACKET socket named by the
 * machine, the user, the port space, the port and, for a specific IP, the
 * IP, so it dies with its process. As the kernel binds, one port takes
 * several specific IPs, or the wildcard alone (EADDRINUSE otherwise): the
 * wildcard's name is the port's own, which a specific bind also holds while
 * it binds, and a wildcard bind then looks for the port's specific names. An IPv4 destination that is
 * another machine's address (SOFTDPU_MACHINE) is that machine's port. A connection is one socket per pair
 * of ids: a REQ is the first message on it, and a peer's death is its EOF.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
#define CM_PORT_LOCK_TRIES 20	/* another process's specific bind holds the port's name for two binds */
#define CM_IP_TAG 48		/* "@" and an IPv6 address's text */
#define CM_NAME_MAX 108

/* The IP part of a port's name: "" for the wildcard, else "@<address>" (IPv4-mapped as IPv4). */
static void cm_wire_ip_tag(const struct sockaddr *ip, char *out, size_t n)
{
	const struct sockaddr_in6 *s6 = (const void *)ip;
	char txt[INET6_ADDRSTRLEN] = "";

	out[0] = '\0';
	if (cm_addr_is_any(ip))
		return;
	if (ip->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ip)->sin_addr, txt, sizeof(txt));
	else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], txt, sizeof(txt));
	else
		inet_ntop(AF_INET6, &s6->sin6_addr, txt, sizeof(txt));
	snprintf(out, n, "@%s", txt);
}

static int cm_wire_port_prefix(char *out, size_t n, const char *machine, enum rdma_port_space ps, uint16_t port)
{
	return snprintf(out, n, "softdpu-rdmacm%s-u%u-ps%x-%u", machine, (unsigned)getuid(), (unsigned)ps,
			(unsigned)port);
}

/* An abstract name (sun_path[0] stays 0: gone with the last socket holding it). */
static socklen_t cm_wire_raw_name(struct sockaddr_un *sun, const char *name)
{
	size_t n = strnlen(name, sizeof(sun->sun_path) - 1);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static socklen_t cm_wire_name(struct sockaddr_un *sun, const char *machine, enum rdma_port_space ps,
			      uint16_t port, const char *iptag)
{
	char name[CM_NAME_MAX];
	int n = cm_wire_port_prefix(name, sizeof(name), machine, ps, port);

	snprintf(name + n, sizeof(name) - (size_t)n, "%s", iptag);
	return cm_wire_raw_name(sun, name);
}

/*
 * Whether a socket is bound (and listening, when asked) to a name that starts
 * with prefix; the first such name in out. /proc/net/unix shows abstract
 * names with '@' for the leading 0 and a listener's flags with 0x10000.
 */
static bool cm_wire_find(const char *prefix, bool listening, char *out, size_t n)
{
	FILE *f = fopen("/proc/net/unix", "re");
	size_t plen = strlen(prefix);
	char line[512];
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *path = strchr(line, '@');
		unsigned long flags = 0;

		if (path == NULL || strncmp(path + 1, prefix, plen) != 0)
			continue;
		if (listening && (sscanf(line, "%*s %*s %*s %lx", &flags) != 1 || !(flags & 0x10000)))
			continue;
		path[strcspn(path, "\n")] = '\0';
		snprintf(out, n, "%s", path + 1);
		found = true;
	}
	fclose(f);
	return found;
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

static int cm_wire_try_bind(int fd, enum rdma_port_space ps, uint16_t port, const char *iptag)
{
	struct sockaddr_un sun;
	socklen_t len = cm_wire_name(&sun, hw_machine_tag(), ps, port, iptag);

	return bind(fd, (struct sockaddr *)&sun, len) == 0 ? 0 : errno;
}

/* The port's own name; another process's specific bind holds it a moment. */
static int cm_wire_bind_port_name(int fd, enum rdma_port_space ps, uint16_t port)
{
	int rc = EADDRINUSE, i;

	for (i = 0; i < CM_PORT_LOCK_TRIES && rc == EADDRINUSE; i++) {
		if (i > 0)
			usleep(200);
		rc = cm_wire_try_bind(fd, ps, port, "");
	}
	return rc;
}

/* A new socket bound to port for the IP of iptag ("" the wildcard), or -errno. */
static int cm_wire_bind_one(enum rdma_port_space ps, uint16_t port, const char *iptag)
{
	char prefix[CM_NAME_MAX], found[CM_NAME_MAX];
	int fd, lock = -1, rc;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (iptag[0] == '\0') {
		/* The wildcard: the port's name, and no specific IP bound on the port. */
		rc = cm_wire_bind_port_name(fd, ps, port);
		cm_wire_port_prefix(prefix, sizeof(prefix) - 1, hw_machine_tag(), ps, port);
		strcat(prefix, "@");
		if (rc == 0 && cm_wire_find(prefix, false, found, sizeof(found)))
			rc = EADDRINUSE;
		goto out;
	}
	/* A specific IP: the port's name held while binding, so no wildcard bind overlaps. */
	lock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	rc = lock < 0 ? errno : cm_wire_bind_port_name(lock, ps, port);
	if (rc == 0)
		rc = cm_wire_try_bind(fd, ps, port, iptag);
	if (lock >= 0)
		close(lock);
out:
	if (rc != 0) {
		close(fd);
		return -rc;
	}
	return fd;
}

/* Reserves *port (0: an ephemeral one, written back) for the id's IP in its port space. */
int cm_wire_bind(struct cm_id *id, uint16_t *port)
{
	char iptag[CM_IP_TAG];
	int fd = -EADDRINUSE, i;
	uint32_t r;

	cm_wire_ip_tag((struct sockaddr *)&id->src, iptag, sizeof(iptag));
	if (*port != 0) {
		fd = cm_wire_bind_one(id->id.ps, *port, iptag);
	} else {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid();
		for (i = 0; i < CM_BIND_TRIES && fd == -EADDRINUSE; i++) {
			uint16_t p = (uint16_t)(CM_EPHEMERAL_LO + (r + (uint32_t)i * 7919u) % CM_EPHEMERAL_N);

			fd = cm_wire_bind_one(id->id.ps, p, iptag);
			if (fd >= 0)
				*port = p;
		}
	}
	if (fd < 0)
		return -fd;
	id->psock = fd;
	return 0;
}

int cm_wire_listen(struct cm_id *id)
{
	if (listen(id->psock, SOMAXCONN) != 0)
		return errno;
	return cm_loop_watch(id, id->psock);
}

static int cm_wire_try_connect(int fd, const char *machine, struct cm_id *id, const char *iptag)
{
	struct sockaddr_un sun;
	socklen_t len = cm_wire_name(&sun, machine, id->id.ps, cm_addr_port((struct sockaddr *)&id->dst), iptag);

	return connect(fd, (struct sockaddr *)&sun, len) == 0 ? 0 : errno;
}

/* The listener on the machine's port for the destination's IP, else its wildcard listener. */
static int cm_wire_connect_on(int fd, const char *machine, struct cm_id *id, const char *iptag)
{
	int rc = iptag[0] != '\0' ? cm_wire_try_connect(fd, machine, id, iptag) : ECONNREFUSED;

	return rc == ECONNREFUSED ? cm_wire_try_connect(fd, machine, id, "") : rc;
}

/*
 * No listener has the destination's IP nor the wildcard: one listening on
 * the port for another IP still gets the REQ, and refuses it as the kernel's
 * RDMA CM does (the IB CM has a listener for the service ID).
 */
static int cm_wire_connect_other_ip(int fd, const char *machine, struct cm_id *id)
{
	char prefix[CM_NAME_MAX], found[CM_NAME_MAX];
	struct sockaddr_un sun;
	socklen_t len;

	cm_wire_port_prefix(prefix, sizeof(prefix) - 1, machine, id->id.ps, cm_addr_port((struct sockaddr *)&id->dst));
	strcat(prefix, "@");
	if (!cm_wire_find(prefix, true, found, sizeof(found)))
		return ECONNREFUSED;
	len = cm_wire_raw_name(&sun, found);
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
	char other[24], iptag[CM_IP_TAG];
	bool remote;
	int fd, rc = ECONNREFUSED;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	cm_wire_ip_tag((struct sockaddr *)&id->dst, iptag, sizeof(iptag));
	remote = cm_wire_other_machine((struct sockaddr *)&id->dst, other, sizeof(other));
	if (remote)
		rc = cm_wire_connect_on(fd, other, id, iptag);
	if (rc == ECONNREFUSED)
		rc = cm_wire_connect_on(fd, hw_machine_tag(), id, iptag);
	if (rc == ECONNREFUSED && remote)
		rc = cm_wire_connect_other_ip(fd, other, id);
	if (rc == ECONNREFUSED)
		rc = cm_wire_connect_other_ip(fd, hw_machine_tag(), id);
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
		memcpy(m->gid, id->sgid.raw, sizeof(m->gid));
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
