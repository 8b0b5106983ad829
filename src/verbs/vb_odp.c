/*
 * vb_odp — on-demand paging: the capabilities and ibv_advise_mr.
 *
 * The device reaches a registration's memory through the process's own
 * mappings (or the memfd they moved onto), never through pinned pages, so
 * an MR registered with IBV_ACCESS_ON_DEMAND is an ordinary one and every
 * page is "present" for it: a prefetch has nothing to fault in, and its
 * only work is the checks the kernel makes. Implicit ODP (one key over the
 * whole address space, ibv_reg_mr(pd, NULL, SIZE_MAX, ON_DEMAND | ...)) is
 * a key whose every access faults its pages in first (hw_odp.c): memory
 * not mapped with the rights asked fails the access as the card's failed
 * page fault does, and a prefetch through it faults the range in (EFAULT
 * when it cannot). Such a key reaches this process's memory only: its
 * pages cannot move onto shareable memory, so another process's access
 * through it fails as through a key it does not know.
 */
#include <errno.h>

#include "vb_int.h"

#define VB_ODP_RC                                                                                             \
	(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |          \
	 IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV)
#define VB_ODP_UD (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV)

void vb_odp_caps(struct ibv_device_attr_ex *a)
{
	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = VB_ODP_RC;
	a->odp_caps.per_transport_caps.uc_odp_caps = 0; /* no UC QPs */
	a->odp_caps.per_transport_caps.ud_odp_caps = VB_ODP_UD;
	a->xrc_odp_caps = VB_ODP_RC; /* XRC takes the RC paths: an ODP MR is an ordinary one */
}

/* DC (mlx5dv_query_device's dc_odp_caps): a DCI's requests take RC's paths, a DCT receives into its SRQ. */
uint32_t vb_odp_dc_caps(void)
{
	return IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
	       IBV_ODP_SUPPORT_SRQ_RECV;
}

/* An entry of the list: an lkey of pd over [addr, addr + length), writable when the advice is to write. */
static int vb_advise_sge(const struct vb_pd *pd, const struct ibv_sge *sg, bool write)
{
	uint8_t *p = NULL;
	uint32_t need = write ? HW_ACCESS_LOCAL_WRITE : HW_ACCESS_LOCAL_READ;

	if (sg->length == 0)
		return 0;
	return hw_mkey_translate(sg->lkey, hw_pd_id(pd->hw), sg->addr, sg->length, need, &p) == HW_OK ? 0 : EFAULT;
}

/*
 * ibv_advise_mr(3): unknown flags EINVAL, an advice other than the three
 * prefetches EOPNOTSUPP (the kernel's), an lkey that is not pd's, a range
 * beyond its MR or a write advice on a read-only key EFAULT.
 */
int vb_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
		 uint32_t num_sge)
{
	bool write = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;

	if (ibpd == NULL || (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) != 0 || (num_sge != 0 && sg_list == NULL) ||
	    num_sge == 0)
		return EINVAL;
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH && advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	for (uint32_t i = 0; i < num_sge; i++) {
		int rc = vb_advise_sge(vb_pd_of(ibpd), &sg_list[i], write);

		if (rc != 0)
			return rc;
	}
	return 0;
}
