/*
 * vb_mcast — ibv_attach_mcast / ibv_detach_mcast over the device's multicast
 * table (hw_mcast.h), with the kernel's checks (ib_attach_mcast and uverbs):
 * only a UD QP joins, only a multicast GID (ff..., or an IPv4-mapped class D
 * address); on an InfiniBand port the LID must be a multicast LID
 * (0xc000..0xfffe), on RoCE it is ignored. Attaching twice is a no-op;
 * detaching what is not attached is EINVAL. A send to the group's address
 * (destination QPN 0xffffff) reaches every attached QP (hw_engine.c).
 */
#include <errno.h>
#include <string.h>

#include "hw_mcast.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_MLID_BASE 0xc000u
#define VB_LID_PERMISSIVE 0xffffu

static int vb_mcast_ok(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid, struct vb_qp **out)
{
	struct vb_qp *qp;

	if (ibqp == NULL || gid == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	qp = vb_qp_of(ibqp);
	if (ibqp->qp_type != IBV_QPT_UD || !hw_mcast_gid(gid->raw))
		return EINVAL;
	if (!qp->ctx->dev->roce && (lid < VB_MLID_BASE || lid == VB_LID_PERMISSIVE))
		return EINVAL;
	*out = qp;
	return 0;
}

/* On RoCE the LID means nothing: groups are told apart by their GID alone. */
static uint16_t vb_mcast_lid(const struct vb_qp *qp, uint16_t lid)
{
	return qp->ctx->dev->roce ? 0 : lid;
}

VB_EXPORT int vb_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
VB_EXPORT int vb_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct vb_qp *qp;
	int rc = vb_mcast_ok(ibqp, gid, lid, &qp);

	if (rc != 0)
		return rc;
	if (hw_mcast_attach(ibqp->qp_num, gid->raw, vb_mcast_lid(qp, lid), qp->block_self_mcast) != HW_OK)
		return ENOMEM;
	return 0;
}
VB_SYMVER(vb_attach_mcast, ibv_attach_mcast, "IBVERBS_1.1");

VB_EXPORT int vb_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
VB_EXPORT int vb_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct vb_qp *qp;
	int rc = vb_mcast_ok(ibqp, gid, lid, &qp);

	if (rc != 0)
		return rc;
	return hw_mcast_detach(ibqp->qp_num, gid->raw, vb_mcast_lid(qp, lid)) == HW_OK ? 0 : EINVAL;
}
VB_SYMVER(vb_detach_mcast, ibv_detach_mcast, "IBVERBS_1.1");

bool vb_mcast_busy(const struct vb_qp *qp)
{
	return qp->init.qp_type == IBV_QPT_UD && hw_mcast_qp_attached(qp->qpx.qp_base.qp_num);
}
