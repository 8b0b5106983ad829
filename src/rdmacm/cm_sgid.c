/*
 * cm_sgid — the source GID entry of an id, as the kernel's RDMA CM picks it
 * on a RoCE port: the RoCE v2 entry of the id's source address (hw_addr_port:
 * an address of this side is its function's entry; loopback and the
 * wildcard the first port's link-local v2 entry). A source that is no
 * address of the id's device (the destination's IP on another machine, the
 * id's source being the destination's IP: cm_id.c) stands for the port's own
 * address of that family, as routing would pick it: the port's first RoCE v2
 * entry of the family. InfiniBand: GID 0.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "cm_int.h"
#include "hw_gid.h"
#include "hw_machine.h"

#define CM_SGID_SCAN 256

static bool cm_gid_v4_mapped(const union ibv_gid *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, mapped, sizeof(mapped)) == 0;
}

/* The port's first RoCE v2 entry for family (IPv6: not link-local), or -1. */
static int cm_sgid_port_entry(struct cm_dev *dev, int family)
{
	struct ibv_gid_entry e;

	for (int i = 0; i < CM_SGID_SCAN; i++) {
		int rc = ibv_query_gid_ex(dev->verbs, dev->port_num, (uint32_t)i, &e, 0);

		if (rc == EINVAL)
			break; /* past the table */
		if (rc != 0 || e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (family == AF_INET && cm_gid_v4_mapped(&e.gid))
			return i;
		if (family == AF_INET6 && !cm_gid_v4_mapped(&e.gid) && e.gid.raw[0] != 0xfe)
			return i;
	}
	return -1;
}

/*
 * A loopback-range source on a named machine (SOFTDPU_MACHINE) may be
 * another machine's address (cm_wire.c tries it as one): the route's source
 * is then this machine's own address, the port's IPv4 entry.
 */
static bool cm_sgid_routed(const struct hw_addr_port *ap)
{
	uint32_t own;

	return ap->loopback && hw_machine_ipv4(&own);
}

static int cm_sgid_index(struct cm_id *id)
{
	const struct sockaddr *src = (const struct sockaddr *)&id->src;
	struct hw_addr_port ap;
	bool local;
	int idx;

	if (src->sa_family != AF_INET && src->sa_family != AF_INET6)
		return 0;
	local = hw_addr_port(src, &ap) == 0 && strcmp(ap.ibdev, ibv_get_device_name(id->dev->ibdev)) == 0;
	if (local && !cm_sgid_routed(&ap))
		return (int)ap.gid_index;
	idx = cm_sgid_port_entry(id->dev, src->sa_family);
	return idx < 0 && local ? (int)ap.gid_index : idx;
}

void cm_sgid_pick(struct cm_id *id)
{
	int idx;

	if (id->dev == NULL)
		return;
	idx = cm_sgid_index(id);
	if (idx < 0 || ibv_query_gid(id->dev->verbs, id->dev->port_num, idx, &id->sgid) != 0) {
		idx = 0;
		id->sgid = id->dev->gid;
	}
	id->sgid_index = (uint8_t)idx;
	id->id.route.addr.addr.ibaddr.sgid = id->sgid;
}
