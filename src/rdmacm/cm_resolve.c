/*
 * cm_resolve — which local device and port owns an IP address.
 *
 * The addresses are the topology's (hw_topology.h: each function's ipv4 and
 * ipv6). A function of this process's side answers with its own device; the
 * loopback range (127.0.0.0/8, ::1) and the wildcard answer with the first
 * local port, as the kernel's RDMA CM binds them. Kept in one file so that a
 * resolver of the device layer (address to device, port and GID index) can
 * replace it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "cm_int.h"
#include "hw_topology.h"

static bool cm_is_loopback(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

bool cm_addr_is_any(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

/* The topology function with this address (either side), or NULL. */
static const struct hw_function *cm_func_of(const struct sockaddr *addr)
{
	const struct hw_topology *topo = hw_topo_get();
	const struct sockaddr_in6 *s6 = (const void *)addr;
	const struct sockaddr_in *s4 = (const void *)addr;
	uint32_t i;

	if (topo == NULL)
		return NULL;
	for (i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (f->is_rep || f->ibdev[0] == '\0')
			continue;
		if (addr->sa_family == AF_INET && memcmp(f->ipv4, &s4->sin_addr, 4) == 0)
			return f;
		if (addr->sa_family == AF_INET6 && memcmp(f->ipv6, &s6->sin6_addr, 16) == 0)
			return f;
	}
	return NULL;
}

/* The device owning a local address; NULL when the address is not this side's. */
struct cm_dev *cm_resolve_local(const struct sockaddr *addr)
{
	const struct hw_function *f;

	if (cm_is_loopback(addr) || cm_addr_is_any(addr))
		return cm_dev_first();
	f = cm_func_of(addr);
	if (f == NULL || f->side != hw_topo_side())
		return NULL;
	return cm_dev_by_name(f->ibdev);
}

/* Whether addr shares a function's link (IPv4 /24, IPv6 /64), where a neighbour query would go. */
bool cm_addr_on_link(const struct sockaddr *addr)
{
	const struct hw_topology *topo = hw_topo_get();
	const struct sockaddr_in6 *s6 = (const void *)addr;
	const struct sockaddr_in *s4 = (const void *)addr;
	static const uint8_t none[4];
	uint32_t i;

	if (topo == NULL)
		return false;
	for (i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (f->is_rep || f->ibdev[0] == '\0')
			continue;
		if (addr->sa_family == AF_INET && memcmp(f->ipv4, none, 4) != 0 &&
		    memcmp(f->ipv4, &s4->sin_addr, 3) == 0)
			return true;
		if (addr->sa_family == AF_INET6 && memcmp(f->ipv6, &s6->sin6_addr, 8) == 0)
			return true;
	}
	return false;
}

/* A destination this machine's CM reaches: its own addresses, either side of the card. */
bool cm_addr_reachable(const struct sockaddr *addr)
{
	return cm_is_loopback(addr) || cm_func_of(addr) != NULL;
}
