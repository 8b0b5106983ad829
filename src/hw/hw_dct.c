/*
 * hw_dct — finding the DCT a DCI's WQE names and checking that it answers
 * (hw_dct.h). The WQE itself runs in the engine (hw_engine.c).
 */
#include "hw_dct.h"

/* The address names the DCT's port: its GID when a GRH is asked for, else its LID. */
static bool dc_port_ok(const struct hw_qp *t, const struct hw_wqe_datagram_seg *av)
{
	if (be32toh(av->grh_gid_fl) & HW_AV_GRH)
		return memcmp(av->rgid, t->sh->gid, sizeof(av->rgid)) == 0;
	return be16toh(av->rlid) == t->sh->lid;
}

struct hw_qp *hw_dc_target_get(const struct hw_wqe_datagram_seg *av)
{
	struct hw_qp *t = hw_qp_dest_get(be32toh(av->dqp_dct) & 0xffffffu);

	if (t == NULL)
		return NULL;
	/* The key and the port are fixed at the DCT's creation: plain reads of its block. */
	if (t->type != HW_QPT_DCT || !hw_qp_view_live(t) || hw_qp_state_of(t) != HW_QP_RTR || !dc_port_ok(t, av) ||
	    t->sh->dc_key != hw_av_dc_key(av)) {
		hw_qp_dest_put(t);
		return NULL;
	}
	return t;
}
