/*
 * hw_dct — the Dynamically Connected transport: the DC address a DCI's WQE
 * carries and the DCT it names.
 *
 * A DCT is an hw_qp of type HW_QPT_DCT: a responder only, on an SRQ, whose
 * working state is RTR. Its number comes from the QPN table, so a DCT of any
 * process of the device is found by number as a UD destination is
 * (hw_qp_dest_get: this process's registry, or a view of the shared block of
 * another process). Its block carries what a request is checked against:
 * the port's LID and GID and the DC access key (struct hw_qp_sh).
 *
 * A DCI is an hw_qp of type HW_QPT_DCI with no receive side. Each of its
 * WQEs has, after the ctrl segment, the 48-byte datagram segment of the PRM
 * as mlx5 fills it for DC: the DC access key in the first 8 bytes
 * (big-endian, where UD has the qkey), the DCT number with the extended-AV
 * bit in dqp_dct, and the address vector of the DCT's port. The engine
 * (hw_engine.c) takes the address out and runs the rest as an RC WQE against
 * the DCT.
 */
#ifndef HW_DCT_H_
#define HW_DCT_H_

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hw_prm.h"
#include "hw_gid.h"
#include "hw_qp.h"

#define HW_AV_EXTENDED 0x80000000u /* dqp_dct: the address vector is the 48-byte form */

static inline uint64_t hw_av_dc_key(const struct hw_wqe_datagram_seg *av)
{
	uint64_t k;

	memcpy(&k, av, sizeof(k));
	return be64toh(k);
}

/* The DC part of an address: DCT number and access key (the address vector is the AH's). */
static inline void hw_av_set_dc(struct hw_wqe_datagram_seg *av, uint32_t dctn, uint64_t key)
{
	uint64_t k = htobe64(key);

	memcpy(av, &k, sizeof(k));
	av->dqp_dct = htobe32((dctn & 0xffffffu) | HW_AV_EXTENDED);
}

/*
 * The address names the DCT's port: on Ethernet by any GID of the port's
 * table (GID 0 first, the usual one), else its GID when a GRH is asked for,
 * else its LID.
 */
static inline bool hw_dc_port_ok(const struct hw_qp *t, const struct hw_wqe_datagram_seg *av)
{
	if (t->sh->roce)
		return memcmp(av->rgid, t->sh->gid, sizeof(av->rgid)) == 0 || hw_gid_port_has((uint16_t)t->sh->lid, av->rgid);
	if (be32toh(av->grh_gid_fl) & HW_AV_GRH)
		return memcmp(av->rgid, t->sh->gid, sizeof(av->rgid)) == 0;
	return be16toh(av->rlid) == t->sh->lid;
}

/*
 * The DCT a DC address names, when it would answer: a DCT of this device
 * (this process, or shared by another), in RTR, on the port the address
 * names (its LID, or with a GRH its GID), and whose key the address carries.
 * NULL otherwise: a DCT that is not there answers nothing, and one that gets
 * a wrong key drops the request silently (the card counts a key violation
 * at the DCT, no NAK), so either way the requester's retries run out.
 * Give a result back with hw_qp_dest_put. Inline: every DCI WQE asks.
 */
static inline struct hw_qp *hw_dc_target_get(const struct hw_wqe_datagram_seg *av)
{
	uint32_t dctn = be32toh(av->dqp_dct) & 0xffffffu;
	/* A DCT of this process first: one probe of the registry, no view to count. */
	struct hw_qp *t = hw_qp_lookup(dctn);

	if (t == NULL)
		t = hw_qp_dest_get(dctn);
	if (t == NULL)
		return NULL;
	/* The key and the port are fixed at the DCT's creation: plain reads of its block. */
	if (t->type != HW_QPT_DCT || !hw_qp_view_live(t) || hw_qp_state_of(t) != HW_QP_RTR || !hw_dc_port_ok(t, av) ||
	    t->sh->dc_key != hw_av_dc_key(av)) {
		/* A DCT that would have answered but for the key: the card counts the violation. */
		if (t->type == HW_QPT_DCT && hw_qp_view_live(t) && hw_qp_state_of(t) == HW_QP_RTR && hw_dc_port_ok(t, av))
			__atomic_fetch_add(&t->sh->dc_key_violations, 1, __ATOMIC_RELAXED);
		hw_qp_dest_put(t);
		return NULL;
	}
	return t;
}

#endif /* HW_DCT_H_ */
