/*
 * cm_ece — enhanced connection establishment, as rdma-core v44's librdmacm
 * carries it: an application that drives its own QP sets the options it
 * wants (rdma_set_local_ece) and reads the peer's (rdma_get_remote_ece);
 * the REQ carries the requester's vendor and options, the REP the vendor it
 * was offered with the responder's options, and rdma_reject_ece refuses a
 * request with the IB CM's reason for unsupported vendor options. Ids with a
 * QP of the CM's refuse both calls (EINVAL): their ECE is the QP's, and this
 * device's QPs have none (ibv_query_ece EOPNOTSUPP, as on a card without the
 * capability), so rdma_create_qp clears the id's. SIDR (UD) carries no ECE.
 */
#include <errno.h>

#include "cm_int.h"

void cm_ece_req(const struct cm_id *id, struct cm_msg *m)
{
	m->ece_vendor = id->local_ece.vendor_id;
	m->ece_options = id->local_ece.options;
}

/* The answer names the vendor it was offered (rdma-core's ucma_copy_ece_param_to_kern_rep). */
void cm_ece_rep(const struct cm_id *id, struct cm_msg *m)
{
	m->ece_vendor = id->remote_ece.vendor_id;
	m->ece_options = id->local_ece.options;
}

void cm_ece_recv(struct cm_id *id, const struct cm_msg *m)
{
	id->remote_ece.vendor_id = m->ece_vendor;
	id->remote_ece.options = m->ece_options;
}

CM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (id == NULL || id->qp != NULL || ece == NULL || ece->vendor_id == 0 || ece->comp_mask != 0) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	cid->local_ece.vendor_id = ece->vendor_id;
	cid->local_ece.options = ece->options;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (id == NULL || id->qp != NULL || ece == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	ece->vendor_id = cid->remote_ece.vendor_id;
	ece->options = cid->remote_ece.options;
	ece->comp_mask = 0;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

CM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return cm_reject((struct cm_id *)id, private_data, private_data_len, CM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
}
