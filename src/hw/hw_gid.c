/*
 * hw_gid — GID tables from the topology, and the look-ups through them.
 */
#include "hw_gid.h"

#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "hw_machine.h"

static bool gid_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

void hw_gid_guid(const uint8_t mac[6], uint8_t guid[8])
{
	guid[0] = mac[0] ^ 0x02, guid[1] = mac[1], guid[2] = mac[2], guid[3] = 0xff;
	guid[4] = 0xfe, guid[5] = mac[3], guid[6] = mac[4], guid[7] = mac[5];
}

/* LID 1 is the (absent) subnet manager's; a function's is unique among the machines (hw_machine.h). */
uint16_t hw_gid_port_lid(const struct hw_function *f)
{
	return (uint16_t)(hw_machine_lid_base() + f->id + 1);
}

uint32_t hw_gid_tbl_len(const struct hw_function *f)
{
	return f->link == HW_LINK_IB ? HW_GID_TBL_LEN_IB : HW_GID_TBL_LEN_ETH;
}

/* One address as its RoCE v1 and v2 entries. */
static uint32_t gid_pair(struct hw_gid_entry *out, uint32_t n, const uint8_t gid[16])
{
	memcpy(out[n].gid, gid, 16);
	out[n].type = HW_GID_TYPE_ROCE_V1;
	memcpy(out[n + 1].gid, gid, 16);
	out[n + 1].type = HW_GID_TYPE_ROCE_V2;
	return n + 2;
}

uint32_t hw_gid_table(const struct hw_function *f, struct hw_gid_entry out[HW_GID_MAX])
{
	uint8_t g[16] = { 0 };
	uint32_t n = 0;

	if (f->link == HW_LINK_IB) {
		uint64_t prefix = htobe64(hw_machine_subnet_prefix());

		memcpy(out[0].gid, &prefix, 8);
		hw_gid_guid(f->mac, out[0].gid + 8);
		out[0].type = HW_GID_TYPE_IB;
		return 1;
	}
	g[0] = 0xfe, g[1] = 0x80;
	hw_gid_guid(f->mac, g + 8);
	n = gid_pair(out, n, g);
	if (!gid_zero(f->ipv4, 4)) {
		memset(g, 0, sizeof(g));
		g[10] = 0xff, g[11] = 0xff;
		memcpy(g + 12, f->ipv4, 4);
		n = gid_pair(out, n, g);
	}
	if (!gid_zero(f->ipv6, 16))
		n = gid_pair(out, n, f->ipv6);
	return n;
}

bool hw_gid_get(const struct hw_function *f, uint32_t index, struct hw_gid_entry *e)
{
	struct hw_gid_entry t[HW_GID_MAX];

	if (index >= hw_gid_table(f, t))
		return false;
	*e = t[index];
	return true;
}

/* A function that has a port: not a representor, and a verbs device. */
static bool gid_has_port(const struct hw_function *f)
{
	return !f->is_rep && f->ibdev[0] != '\0';
}

/* The index of gid in f's table, or -1. */
static int gid_find(const struct hw_function *f, const uint8_t gid[16])
{
	struct hw_gid_entry t[HW_GID_MAX];
	uint32_t n = hw_gid_table(f, t);

	for (uint32_t i = 0; i < n; i++)
		if (memcmp(t[i].gid, gid, 16) == 0)
			return (int)i;
	return -1;
}

void hw_gid_route(const uint8_t gid[16], struct hw_gid_dest *d)
{
	const struct hw_topology *topo = hw_topo_get();
	uint32_t own = 0, n = topo != NULL ? hw_topo_count(topo) : 0;
	bool named = hw_machine_ipv4(&own);

	memset(d, 0, sizeof(*d));
	d->func = -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);
		int idx;

		if (!gid_has_port(f) || (idx = gid_find(f, gid)) < 0)
			continue;
		d->where = HW_GID_HERE;
		d->func = (int)i;
		d->index = (uint32_t)idx;
		d->lid = hw_gid_port_lid(f);
		if (f->link == HW_LINK_ETH)
			memcpy(d->mac, f->mac, 6);
		return;
	}
	/* Not here: another machine's when its form names one that is not this one. */
	if (hw_machine_of_gid(gid, &d->machine, d->mac) && (!named || d->machine != own)) {
		d->where = HW_GID_MACHINE;
		return;
	}
	memset(d->mac, 0, sizeof(d->mac));
	d->where = HW_GID_NOWHERE;
}

/* The function whose port lid stands for, or NULL. */
static const struct hw_function *gid_port_func(uint16_t lid)
{
	const struct hw_topology *topo = hw_topo_get();
	uint32_t n = topo != NULL ? hw_topo_count(topo) : 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (gid_has_port(f) && hw_gid_port_lid(f) == lid)
			return f;
	}
	return NULL;
}

bool hw_gid_port_get(uint16_t lid, uint32_t index, struct hw_gid_entry *e)
{
	const struct hw_function *f = gid_port_func(lid);

	return f != NULL && hw_gid_get(f, index, e);
}

bool hw_gid_port_has(uint16_t lid, const uint8_t gid[16])
{
	const struct hw_function *f = gid_port_func(lid);

	return f != NULL && gid_find(f, gid) >= 0;
}

/* ---- IP addresses, for the RDMA CM ---- */

static void addr_fill(const struct hw_function *f, int func, uint32_t index, bool loopback, struct hw_addr_port *out)
{
	struct hw_gid_entry e;

	memset(out, 0, sizeof(*out));
	out->func = func;
	memcpy(out->ibdev, f->ibdev, sizeof(out->ibdev));
	out->port = HW_GID_PORT;
	out->gid_index = index;
	out->loopback = loopback;
	if (hw_gid_get(f, index, &e)) {
		memcpy(out->gid, e.gid, 16);
		out->type = e.type;
	}
}

/* An IPoIB address of an InfiniBand port (the table holds no address). */
static bool addr_ib_has(const struct hw_function *f, const uint8_t gid[16])
{
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!gid_zero(f->ipv4, 4) && memcmp(gid, v4_mapped, 12) == 0 && memcmp(gid + 12, f->ipv4, 4) == 0)
		return true;
	return !gid_zero(f->ipv6, 16) && memcmp(gid, f->ipv6, 16) == 0;
}

/*
 * The entry an address names: on Ethernet its RoCE v2 entry (each address is
 * its v1 entry, then its v2), on InfiniBand GID 0. Its index, or -1.
 */
static int addr_index(const struct hw_function *f, const uint8_t gid[16])
{
	int idx;

	if (f->link == HW_LINK_IB)
		return addr_ib_has(f, gid) ? 0 : -1;
	idx = gid_find(f, gid);
	return idx < 0 ? -1 : idx + 1;
}

/* The first function of this side with a port. */
static int addr_loopback(struct hw_addr_port *out)
{
	const struct hw_topology *topo = hw_topo_get();
	uint32_t n = topo != NULL ? hw_topo_count(topo) : 0;
	enum hw_side side = hw_topo_side();

	for (uint32_t i = 0; i < n; i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (!gid_has_port(f) || f->side != side)
			continue;
		addr_fill(f, (int)i, f->link == HW_LINK_IB ? 0 : 1, true, out);
		return 0;
	}
	return EADDRNOTAVAIL;
}

/* The GID an address is in a table (IPv4 as IPv4-mapped), or loopback/wildcard. */
static int addr_gid(const struct sockaddr *sa, uint8_t gid[16], bool *loopback)
{
	static const uint8_t v6_loop[16] = { [15] = 1 }, v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		uint32_t a = be32toh(in->sin_addr.s_addr);

		*loopback = a == INADDR_ANY || (a >> 24) == 127;
		gid[10] = 0xff, gid[11] = 0xff;
		memcpy(gid + 12, &in->sin_addr.s_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		memcpy(gid, in6->sin6_addr.s6_addr, 16);
		*loopback = gid_zero(gid, 16) || memcmp(gid, v6_loop, 16) == 0 ||
			    (memcmp(gid, v4_mapped, 12) == 0 && (gid[12] == 127 || gid_zero(gid + 12, 4)));
		return 0;
	}
	return EAFNOSUPPORT;
}

int hw_addr_port(const struct sockaddr *sa, struct hw_addr_port *out)
{
	const struct hw_topology *topo = hw_topo_get();
	uint32_t n = topo != NULL ? hw_topo_count(topo) : 0;
	enum hw_side side = hw_topo_side();
	bool loopback = false;
	uint8_t gid[16];
	int rc;

	if (sa == NULL || out == NULL)
		return EINVAL;
	rc = addr_gid(sa, gid, &loopback);
	if (rc != 0)
		return rc;
	/* A function's own address first: a named machine's is its first function's, and may be 127.x.y.z. */
	for (uint32_t i = 0; i < n; i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);
		int idx;

		if (!gid_has_port(f) || f->side != side)
			continue;
		if ((idx = addr_index(f, gid)) >= 0) {
			addr_fill(f, (int)i, (uint32_t)idx, false, out);
			return 0;
		}
	}
	return loopback ? addr_loopback(out) : EADDRNOTAVAIL;
}
