/*
 * vb_query — what a device says about itself: a BlueField-2 function (its
 * ConnectX-6 Dx part) with one active port, Ethernet (RoCE) unless the
 * topology makes it InfiniBand (link=ib). The limits are the ones the
 * emulated device enforces (vb_int.h; docs/STATUS.md).
 */
#include <endian.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "hw_dm.h"
#include "hw_mcast.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_VENDOR_ID 0x02c9	   /* Mellanox */
#define VB_VENDOR_PART_ID 41686	   /* BlueField-2 (ConnectX-6 Dx) */
#define VB_FW_VER "24.35.1012"

/* The GID table's type of an entry, as rdma-core's driver interface spells it (driver.h). */
enum vb_gid_type_sysfs {
	VB_GID_TYPE_SYSFS_IB_ROCE_V1 = 0,
	VB_GID_TYPE_SYSFS_ROCE_V2 = 1,
};

/* Every function of the card shares its system image GUID: the first function's. */
static uint64_t vb_sys_image_guid(void)
{
	int n;
	struct vb_device *devs = vb_devices(&n);

	return n > 0 ? devs[0].node_guid : 0;
}

void vb_device_attr(const struct vb_device *dev, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	strcpy(a->fw_ver, VB_FW_VER);
	a->node_guid = dev->node_guid;
	a->sys_image_guid = vb_sys_image_guid();
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffffffffffff000ull;
	a->vendor_id = VB_VENDOR_ID;
	a->vendor_part_id = VB_VENDOR_PART_ID;
	a->hw_ver = 0;
	a->max_qp = VB_MAX_QP;
	a->max_qp_wr = VB_MAX_QP_WR;
	/*
	 * Not IBV_DEVICE_PORT_ACTIVE_EVENT, which mlx5 advertises: it promises IBV_EVENT_PORT_ACTIVE when a
	 * link comes up, and the emulated port is active from the start and never goes down.
	 */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC;
	a->max_sge = VB_MAX_SGE;
	a->max_sge_rd = VB_MAX_SGE;
	a->max_cq = VB_MAX_CQ;
	a->max_cqe = VB_MAX_CQE;
	a->max_mr = VB_MAX_MR;
	a->max_mw = VB_MAX_MR; /* windows are keys of the same table */
	a->max_pd = VB_MAX_PD;
	a->max_qp_rd_atom = 16;
	a->max_res_rd_atom = VB_MAX_QP * 16;
	a->max_qp_init_rd_atom = 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = INT32_MAX;
	a->max_mcast_grp = HW_MCAST_ENTRIES; /* hw_mcast: one device-wide table of attachments */
	a->max_mcast_qp_attach = HW_MCAST_GROUP_MAX;
	a->max_total_mcast_qp_attach = HW_MCAST_ENTRIES;
	a->max_srq = VB_MAX_QP;
	a->max_srq_wr = VB_MAX_QP_WR - 1;
	a->max_srq_sge = VB_MAX_SGE + 1;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 16;
	a->phys_port_cnt = 1;
}

/* An InfiniBand port: a LID, a subnet manager (LID 1), 4X HDR. */
static void vb_port_attr_ib(const struct vb_device *dev, struct ibv_port_attr *p)
{
	p->active_mtu = IBV_MTU_4096;
	p->gid_tbl_len = HW_GID_TBL_LEN_IB;
	p->port_cap_flags = IBV_PORT_TRAP_SUP | IBV_PORT_SYS_IMAGE_GUID_SUP;
	p->lid = dev->lid;
	p->sm_lid = 1;
	p->max_vl_num = 4;	    /* VL0-7 */
	p->subnet_timeout = 18;
	p->active_width = 2;	    /* 4X */
	p->active_speed = 64;	    /* HDR: 4X HDR = 200 Gb/s */
	p->link_layer = IBV_LINK_LAYER_INFINIBAND;
}

/*
 * An Ethernet port as mlx5 reports it (mlx5_query_port_roce): no LID, no
 * subnet manager, no VLs; CM and IP-based GIDs; the active MTU the largest
 * IB MTU that fits the netdev's 1500 bytes with RoCE's headers (1024);
 * 100GBASE-CR4, which the driver reports as 4X EDR.
 */
static void vb_port_attr_eth(struct ibv_port_attr *p)
{
	p->active_mtu = IBV_MTU_1024;
	p->gid_tbl_len = HW_GID_TBL_LEN_ETH;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->active_width = 2;	    /* 4X */
	p->active_speed = 32;	    /* EDR: 4 lanes of 25 Gb/s */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

void vb_port_attr(const struct vb_device *dev, struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->max_msg_sz = HW_QP_MAX_MSG;
	p->pkey_tbl_len = 1;
	p->phys_state = 5;	    /* LinkUp */
	if (dev->roce)
		vb_port_attr_eth(p);
	else
		vb_port_attr_ib(dev, p);
}

int vb_query_device(struct ibv_context *c, struct ibv_device_attr *attr)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	if (ctx == NULL || attr == NULL)
		return EINVAL;
	vb_device_attr(ctx->dev, attr);
	return 0;
}

VB_EXPORT int vb_query_device_1_1(struct ibv_context *context, struct ibv_device_attr *device_attr);
VB_EXPORT int vb_query_device_1_1(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	return vb_query_device(context, device_attr);
}
VB_SYMVER(vb_query_device_1_1, ibv_query_device, "IBVERBS_1.1");

int vb_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct ibv_device_attr_ex full;

	if (ctx == NULL || attr == NULL)
		return EINVAL;
	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	vb_device_attr(ctx->dev, &full.orig_attr);
	full.device_cap_flags_ex = full.orig_attr.device_cap_flags;
	full.phys_port_cnt_ex = 1;
	/* CQEs carry the device clock when asked (hw_cq_attr.timestamp): 64-bit ns, a 1 GHz clock in kHz. */
	full.completion_timestamp_mask = UINT64_MAX;
	full.hca_core_clock = 1000000;
	vb_odp_caps(&full);
	vb_tm_caps(&full);
	full.max_dm_size = HW_DM_SIZE; /* the device's MEMIC (vb_dm.c) */
	vb_pace_device_caps(&full);
	/* A caller built against older headers has a smaller struct: write no more than it has. */
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	return 0;
}

int vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t len)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct ibv_port_attr full;

	if (ctx == NULL || attr == NULL)
		return EINVAL;
	if (port != VB_PORT)
		return EINVAL;
	vb_port_attr(ctx->dev, &full);
	memcpy(attr, &full, len < sizeof(full) ? len : sizeof(full));
	return 0;
}

/*
 * Programs built before port_cap_flags2 pass rdma-core's compat layout, which
 * is struct ibv_port_attr up to that field: fill only those bytes.
 */
int vb_query_port_compat(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	return vb_query_port(c, port, (struct ibv_port_attr *)(void *)attr, offsetof(struct ibv_port_attr, port_cap_flags2));
}

#undef ibv_query_port
VB_EXPORT int vb_query_port_1_1(struct ibv_context *context, uint8_t port_num,
				struct _compat_ibv_port_attr *port_attr);
VB_EXPORT int vb_query_port_1_1(struct ibv_context *context, uint8_t port_num,
				struct _compat_ibv_port_attr *port_attr)
{
	return vb_query_port_compat(context, port_num, port_attr);
}
VB_SYMVER(vb_query_port_1_1, ibv_query_port, "IBVERBS_1.1");

/*
 * The entry at index of the port's table (hw_gid.h): 0, ENODATA for an empty
 * entry of the table, EINVAL for another port or an index beyond it.
 */
static int vb_gid(struct vb_context *ctx, uint32_t port, uint32_t index, struct hw_gid_entry *e)
{
	if (port != VB_PORT || index >= hw_gid_tbl_len(&ctx->dev->fn))
		return EINVAL;
	memset(e, 0, sizeof(*e));
	return hw_gid_get(&ctx->dev->fn, index, e) ? 0 : ENODATA;
}

VB_EXPORT int vb_query_gid_1_1(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
VB_EXPORT int vb_query_gid_1_1(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct hw_gid_entry e;

	if (ctx == NULL || gid == NULL || index < 0) {
		errno = EINVAL;
		return -1;
	}
	/* An empty entry of a valid index reads as the zero GID, as rdma-core's ibv_query_gid does. */
	if (vb_gid(ctx, port_num, (uint32_t)index, &e) == EINVAL) {
		errno = EINVAL;
		return -1;
	}
	memcpy(gid->raw, e.gid, sizeof(gid->raw));
	return 0;
}
VB_SYMVER(vb_query_gid_1_1, ibv_query_gid, "IBVERBS_1.1");

static void vb_gid_entry(const struct hw_gid_entry *h, uint32_t port, uint32_t index, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, h->gid, sizeof(e->gid.raw));
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = (uint32_t)h->type; /* hw_gid_type numbers the types as enum ibv_gid_type */
	e->ndev_ifindex = 0;		  /* no netdev of this host stands behind the port */
}

VB_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
				struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct hw_gid_entry h;
	struct ibv_gid_entry e;
	int rc;

	if (ctx == NULL || entry == NULL || flags != 0 || entry_size < sizeof(e))
		return EINVAL;
	rc = vb_gid(ctx, port_num, gid_index, &h);
	if (rc != 0)
		return rc;
	vb_gid_entry(&h, port_num, gid_index, &e);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

/* The valid entries of every port (one here), each entry_size bytes apart: their count, or -errno. */
VB_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
				       size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct hw_gid_entry t[HW_GID_MAX];
	struct ibv_gid_entry e;
	uint32_t n, i;

	if (ctx == NULL || entries == NULL || flags != 0 || entry_size < sizeof(e))
		return -EINVAL;
	n = hw_gid_table(&ctx->dev->fn, t);
	if (max_entries < n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		vb_gid_entry(&t[i], VB_PORT, i, &e);
		memcpy((uint8_t *)entries + i * entry_size, &e, sizeof(e));
	}
	return n;
}

/* PRIVATE_34, not in the public headers; ibv_devinfo calls it for every GID. */
VB_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
				 enum vb_gid_type_sysfs *type);
VB_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
				 enum vb_gid_type_sysfs *type)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	struct hw_gid_entry e;
	int rc;

	if (ctx == NULL || type == NULL || (rc = vb_gid(ctx, port_num, index, &e)) == EINVAL) {
		errno = EINVAL;
		return -1;
	}
	/* An empty entry reads as RoCE v1, as rdma-core answers for one. */
	*type = rc == 0 && e.type == HW_GID_TYPE_ROCE_V2 ? VB_GID_TYPE_SYSFS_ROCE_V2 : VB_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

VB_EXPORT int vb_query_pkey_1_1(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey);
VB_EXPORT int vb_query_pkey_1_1(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (vb_ctx_checked(context) == NULL || pkey == NULL || port_num != VB_PORT || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(VB_PKEY_DEFAULT);
	return 0;
}
VB_SYMVER(vb_query_pkey_1_1, ibv_query_pkey, "IBVERBS_1.1");

VB_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (vb_ctx_checked(context) == NULL || port_num != VB_PORT) {
		errno = EINVAL;
		return -1;
	}
	/* Full and limited membership of the default partition are the one entry. */
	if ((be16toh(pkey) | 0x8000) != VB_PKEY_DEFAULT) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}
