/*
 * vb_ops — the operation slots of an open context.
 *
 * Binaries call much of the API through inline functions that jump through
 * ctx->ops and the verbs_context slots; rdma-core's inlines check some slots
 * for NULL but not all, so every slot points at a function here. Those of
 * the objects this device has not (counters, ESP flow actions, ...)
 * fail as an unsupported operation; the queries and the
 * queue objects' (CQ, QP, SRQ, posting and polling) are the real ones.
 */
#include <stddef.h>

#include "vb_export.h"
#include "vb_int.h"

/* A slot's parameters are the public prototype's; an unsupported one reads none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define VB_OP_PTR(name, type, ...)                                                                \
	static type vb_op_##name(__VA_ARGS__)                                                     \
	{                                                                                         \
		VB_UNSUPPORTED("ibv_context op " #name);                                          \
		return NULL;                                                                      \
	}
#define VB_OP_INT(name, fail, ...)                                                                \
	static int vb_op_##name(__VA_ARGS__)                                                      \
	{                                                                                         \
		VB_UNSUPPORTED("ibv_context op " #name);                                          \
		return fail;                                                                      \
	}

/* The entries of programs built against libibverbs 1.0's context layout. */
static void *vb_op_compat(void)
{
	VB_UNSUPPORTED("ibv_context op of the 1.0 ABI");
	return NULL;
}


VB_OP_PTR(alloc_null_mr, struct ibv_mr *, struct ibv_pd *pd)
VB_OP_INT(read_counters, EOPNOTSUPP, struct ibv_counters *counters, uint64_t *counters_value,
	  uint32_t ncounters, uint32_t flags)
VB_OP_INT(attach_counters_point_flow, EOPNOTSUPP, struct ibv_counters *counters,
	  struct ibv_counter_attach_attr *attr, struct ibv_flow *flow)
VB_OP_PTR(create_counters, struct ibv_counters *, struct ibv_context *context,
	  struct ibv_counters_init_attr *init_attr)
VB_OP_INT(destroy_counters, EOPNOTSUPP, struct ibv_counters *counters)
VB_OP_INT(modify_flow_action_esp, EOPNOTSUPP, struct ibv_flow_action *action,
	  struct ibv_flow_action_esp_attr *attr)
VB_OP_PTR(create_flow_action_esp, struct ibv_flow_action *, struct ibv_context *context,
	  struct ibv_flow_action_esp_attr *attr)
VB_OP_INT(modify_cq, EOPNOTSUPP, struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)

static void vb_ops_fill_compat(struct ibv_context_ops *o)
{
	o->_compat_alloc_pd = vb_op_compat;
	o->_compat_dealloc_pd = vb_op_compat;
	o->_compat_reg_mr = vb_op_compat;
	o->_compat_rereg_mr = vb_op_compat;
	o->_compat_dereg_mr = vb_op_compat;
	o->_compat_create_cq = vb_op_compat;
	o->_compat_cq_event = vb_op_compat;
	o->_compat_resize_cq = vb_op_compat;
	o->_compat_destroy_cq = vb_op_compat;
	o->_compat_create_srq = vb_op_compat;
	o->_compat_modify_srq = vb_op_compat;
	o->_compat_query_srq = vb_op_compat;
	o->_compat_destroy_srq = vb_op_compat;
	o->_compat_create_qp = vb_op_compat;
	o->_compat_query_qp = vb_op_compat;
	o->_compat_modify_qp = vb_op_compat;
	o->_compat_destroy_qp = vb_op_compat;
	o->_compat_create_ah = vb_op_compat;
	o->_compat_destroy_ah = vb_op_compat;
	o->_compat_attach_mcast = vb_op_compat;
	o->_compat_detach_mcast = vb_op_compat;
	o->_compat_async_event = vb_op_compat;
}

void vb_ops_fill(struct verbs_context *v)
{
	struct ibv_context_ops *o = &v->context.ops;

	o->_compat_query_device = vb_query_device;
	o->_compat_query_port = vb_query_port_compat;
	vb_ops_fill_compat(o);
	o->alloc_mw = vb_alloc_mw;
	o->bind_mw = vb_bind_mw;
	o->dealloc_mw = vb_dealloc_mw;
	o->poll_cq = vb_poll_cq;
	o->req_notify_cq = vb_req_notify_cq;
	o->post_srq_recv = vb_post_srq_recv;
	o->post_send = vb_post_send;
	o->post_recv = vb_post_recv;

	v->query_port = vb_query_port;
	v->advise_mr = vb_advise_mr;
	v->alloc_null_mr = vb_op_alloc_null_mr;
	v->read_counters = vb_op_read_counters;
	v->attach_counters_point_flow = vb_op_attach_counters_point_flow;
	v->create_counters = vb_op_create_counters;
	v->destroy_counters = vb_op_destroy_counters;
	v->reg_dm_mr = vb_reg_dm_mr;
	v->alloc_dm = vb_alloc_dm;
	v->free_dm = vb_free_dm;
	v->modify_flow_action_esp = vb_op_modify_flow_action_esp;
	v->destroy_flow_action = vb_destroy_flow_action; /* vb_dr_act.c */
	v->create_flow_action_esp = vb_op_create_flow_action_esp;
	v->modify_qp_rate_limit = vb_modify_qp_rate_limit; /* vb_pace.c */
	v->alloc_parent_domain = vb_alloc_parent_domain;
	v->dealloc_td = vb_dealloc_td;
	v->alloc_td = vb_alloc_td;
	v->modify_cq = vb_op_modify_cq;
	v->post_srq_ops = vb_post_srq_ops;
	v->destroy_rwq_ind_table = vb_destroy_rwq_ind_table;
	v->create_rwq_ind_table = vb_create_rwq_ind_table;
	v->destroy_wq = vb_destroy_wq;
	v->modify_wq = vb_modify_wq;
	v->create_wq = vb_create_wq;
	v->query_rt_values = vb_query_rt_values;
	v->create_cq_ex = vb_create_cq_ex;
	v->query_device_ex = vb_query_device_ex;
	v->ibv_destroy_flow = vb_destroy_flow;
	v->ibv_create_flow = vb_create_flow;
	/* Programs built against libibverbs 1.1.8 find the flow entries here (rdma-core does the same). */
	v->ABI_placeholder1 = (void (*)(void))vb_create_flow;
	v->ABI_placeholder2 = (void (*)(void))vb_destroy_flow;
	v->open_qp = vb_open_qp;
	v->create_qp_ex = vb_create_qp_ex;
	v->get_srq_num = vb_get_srq_num;
	v->create_srq_ex = vb_create_srq_ex;
	v->open_xrcd = vb_open_xrcd;
	v->close_xrcd = vb_close_xrcd;
}
