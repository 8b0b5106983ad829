/*
 * cm_stubs — the exports of rdma-core v44's librdmacm that are not
 * implemented here: ECE and the extended SRQ (rsockets are in rs_*.c).
 * Each is
 * present in the ABI, logs one line on its first call and fails with ENOSYS
 * (docs/STATUS.md lists them).
 */
#include <errno.h>

#include "base_log.h"
#include "cm_int.h"

void cm_log_unsupported(const char *name)
{
	BASE_WARN("%s: not supported by softdpu's librdmacm", name);
}

#define CM_NOSYS(name, ret)                                                                      \
	do {                                                                                     \
		static int once_;                                                                \
		if (!__atomic_exchange_n(&once_, 1, __ATOMIC_RELAXED))                           \
			cm_log_unsupported(name);                                                \
		errno = ENOSYS;                                                                  \
		return ret;                                                                      \
	} while (0)

CM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	CM_NOSYS(__func__, -1);
}

CM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id, (void)attr;
	CM_NOSYS(__func__, -1);
}
