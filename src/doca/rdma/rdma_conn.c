/*
 * rdma_conn — the connection descriptor of a DOCA RDMA context, and connect.
 *
 * The descriptor is what a peer on this machine or another needs to reach
 * the context's QP: its number, the port's LID and the GID at the chosen
 * index (which tells the machine), the link layer, MTU and SL. 64 bytes,
 * little-endian, versioned, with a CRC-32 over the rest, so a truncated or
 * altered descriptor is refused before anything is connected.
 */
#include <endian.h>
#include <string.h>

#include "dc_dev.h"
#include "dc_log.h"
#include "fab_wire.h"
#include "hw_gid.h"
#include "hw_qp.h"
#include "hw_topology.h"
#include "hw_xm.h"
#include "rdma_priv.h"

#define DESC_MAGIC 0x414d4452u /* "RDMA" */
#define DESC_VERSION 1
#define DESC_F_ROCE 1u
#define DESC_F_GRH 2u

struct rdma_desc {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint32_t qpn;
	uint16_t lid;
	uint8_t mtu;
	uint8_t sl;
	uint8_t gid[16];
	uint8_t rsvd[28];
	uint32_t crc;
};
_Static_assert(sizeof(struct rdma_desc) == RDMA_DESC_LEN, "the descriptor's size");

void rdma_desc_build(struct doca_rdma *r)
{
	const struct hw_function *f = dc_dev_fn(r->ctx.devs[0]);
	struct rdma_desc d = {
		.magic = htole32(DESC_MAGIC),
		.version = htole16(DESC_VERSION),
		.flags = htole16((uint16_t)((f->link == HW_LINK_ETH ? DESC_F_ROCE : 0) | (r->grh ? DESC_F_GRH : 0))),
		.qpn = htole32(r->qpn),
		.lid = htole16(hw_gid_port_lid(f)),
		.mtu = (uint8_t)r->mtu,
		.sl = (uint8_t)r->sl,
	};
	struct hw_gid_entry e;

	if (hw_gid_get(f, r->gid_index, &e))
		memcpy(d.gid, e.gid, sizeof(d.gid));
	d.crc = htole32(fab_crc32((const uint8_t *)&d, offsetof(struct rdma_desc, crc)));
	memcpy(r->desc, &d, sizeof(d));
}

doca_error_t doca_rdma_export(const struct doca_rdma *rdma, const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size)
{
	if (rdma == NULL || local_rdma_conn_details == NULL || local_rdma_conn_details_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!rdma->ctx.started || rdma->qp == NULL)
		return DOCA_ERROR_BAD_STATE;
	*local_rdma_conn_details = rdma->desc;
	*local_rdma_conn_details_size = sizeof(rdma->desc);
	return DOCA_SUCCESS;
}

static bool desc_decode(const void *p, size_t len, struct rdma_desc *d)
{
	if (len != sizeof(*d)) {
		DC_ERR("DOCA RDMA: connection descriptor of %zu bytes (%zu expected)", len, sizeof(*d));
		return false;
	}
	memcpy(d, p, sizeof(*d));
	if (le32toh(d->magic) != DESC_MAGIC || le16toh(d->version) != DESC_VERSION) {
		DC_ERR("DOCA RDMA: not a connection descriptor of this version");
		return false;
	}
	if (le32toh(d->crc) != fab_crc32((const uint8_t *)d, offsetof(struct rdma_desc, crc))) {
		DC_ERR("DOCA RDMA: connection descriptor fails its checksum");
		return false;
	}
	return true;
}

/* Connects the QP to the peer's port, as a verbs QP's modify to RTR does (vb_qp_route). */
static bool desc_route(struct doca_rdma *r, const struct rdma_desc *d, bool roce)
{
	struct hw_gid_dest dest = { .where = HW_GID_HERE, .lid = 0 };
	uint32_t qpn = le32toh(d->qpn) & 0xffffffu;

	if (le16toh(d->flags) & DESC_F_GRH)
		hw_gid_route(d->gid, &dest);
	if (!roce && dest.where == HW_GID_NOWHERE)
		dest.where = HW_GID_HERE; /* InfiniBand within the subnet: by LID */
	if (dest.where == HW_GID_MACHINE)
		return hw_qp_connect_machine(r->qp, dest.machine, qpn, d->gid) == HW_OK;
	if (dest.where != HW_GID_HERE)
		return false;
	return hw_qp_connect_port(r->qp, qpn, roce ? dest.lid : 0) == HW_OK;
}

doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size)
{
	struct rdma_desc d;
	bool roce;

	if (rdma == NULL || remote_rdma_conn_details == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!rdma->ctx.started || rdma->qp == NULL || rdma->state != DOCA_RDMA_STATE_INIT)
		return DOCA_ERROR_BAD_STATE;
	if (!desc_decode(remote_rdma_conn_details, remote_rdma_conn_details_size, &d))
		return DOCA_ERROR_CONNECTION_ABORTED;
	roce = dc_dev_fn(rdma->ctx.devs[0])->link == HW_LINK_ETH;
	if (((le16toh(d.flags) & DESC_F_ROCE) != 0) != roce) {
		DC_ERR("DOCA RDMA: the peer's port is of another link layer");
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (!desc_route(rdma, &d, roce)) {
		DC_ERR("DOCA RDMA: no QP %u reachable at the peer's address", le32toh(d.qpn) & 0xffffffu);
		hw_qp_connect(rdma->qp, NULL);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (hw_qp_modify(rdma->qp, HW_QP_RTR) != HW_OK || hw_qp_modify(rdma->qp, HW_QP_RTS) != HW_OK) {
		hw_qp_connect(rdma->qp, NULL);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	rdma->state = DOCA_RDMA_STATE_CONNECTED;
	return DOCA_SUCCESS;
}
