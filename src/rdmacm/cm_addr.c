/* cm_addr — the socket addresses an id carries (AF_INET and AF_INET6). */
#include <netinet/in.h>
#include <string.h>

#include "cm_int.h"

socklen_t cm_addr_len(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (addr->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

uint16_t cm_addr_port(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	if (addr->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	return 0;
}

void cm_addr_set_port(struct sockaddr *addr, uint16_t port)
{
	if (addr->sa_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	else if (addr->sa_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
}

bool cm_addr_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

CM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(cm_addr_port(&id->route.addr.src_addr));
}

CM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(cm_addr_port(&id->route.addr.dst_addr));
}
