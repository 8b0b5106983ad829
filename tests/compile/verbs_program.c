/*
 * A verbs program written the way rc_pingpong and perftest are: it opens the
 * first device, sets up an RC QP pair through INIT/RTR/RTS, posts and polls
 * with both the classic and the extended (ibv_wr_*, ibv_start_poll) API, and
 * builds a WQE by hand through mlx5dv. It only has to compile — as C11 and as
 * C++17, against softdpu's headers alone, with every warning an error — so
 * that a program that builds against rdma-core v44 builds against ours.
 * It is never linked or run.
 */
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#define VP_DEPTH 64
#define VP_BUF_SIZE 4096

struct vp_ctx {
	struct ibv_context *ctx;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	void *buf;
};

struct vp_dest {
	uint16_t lid;
	uint32_t qpn;
	uint32_t psn;
	union ibv_gid gid;
};

/* A DEVX command layout: one byte per bit, as the PRM structures are written. */
struct mlx5_ifc_vp_cmd_bits {
	uint8_t opcode[0x10];
	uint8_t uid[0x10];
	uint8_t reserved_at_20[0x10];
	uint8_t op_mod[0x10];
	uint8_t address[0x40];
};

static struct ibv_context *vp_open_first(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int num = 0;

	list = ibv_get_device_list(&num);
	if (!list)
		return NULL;
	if (num > 0) {
		printf("device %s guid %llx\n", ibv_get_device_name(list[0]),
		       (unsigned long long)be64toh(ibv_get_device_guid(list[0])));
		ctx = ibv_open_device(list[0]);
	}
	ibv_free_device_list(list);
	return ctx;
}

static int vp_query(struct vp_ctx *v)
{
	struct ibv_device_attr_ex attr;
	struct ibv_gid_entry entry;

	if (ibv_query_device_ex(v->ctx, NULL, &attr))
		return -1;
	printf("fw %s, part %u, max_qp_wr %d, ts mask %llx\n", attr.orig_attr.fw_ver,
	       attr.orig_attr.vendor_part_id, attr.orig_attr.max_qp_wr,
	       (unsigned long long)attr.completion_timestamp_mask);
	if (ibv_query_port(v->ctx, 1, &v->port))
		return -1;
	if (v->port.state != IBV_PORT_ACTIVE || v->port.link_layer == IBV_LINK_LAYER_UNSPECIFIED)
		return -1;
	if (ibv_query_gid(v->ctx, 1, 0, &v->gid))
		return -1;
	if (ibv_query_gid_ex(v->ctx, 1, 0, &entry, 0) == 0 && entry.gid_type == IBV_GID_TYPE_ROCE_V2)
		printf("RoCE v2 port, mtu %d\n", 128 << v->port.active_mtu);
	return 0;
}

static int vp_create_cqs(struct vp_ctx *v)
{
	struct ibv_cq_init_attr_ex cq_attr;

	v->channel = ibv_create_comp_channel(v->ctx);
	if (!v->channel)
		return -1;
	v->cq = ibv_create_cq(v->ctx, VP_DEPTH, v, v->channel, 0);
	if (!v->cq)
		return -1;
	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.cqe = VP_DEPTH;
	cq_attr.cq_context = v;
	cq_attr.channel = NULL;
	cq_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq_attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	cq_attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	v->cq_ex = ibv_create_cq_ex(v->ctx, &cq_attr);
	return v->cq_ex ? 0 : -1;
}

static int vp_create_qp(struct vp_ctx *v)
{
	struct ibv_qp_init_attr_ex init;

	memset(&init, 0, sizeof(init));
	init.send_cq = ibv_cq_ex_to_cq(v->cq_ex);
	init.recv_cq = v->cq;
	init.cap.max_send_wr = VP_DEPTH;
	init.cap.max_recv_wr = VP_DEPTH;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = 64;
	init.qp_type = IBV_QPT_RC;
	init.pd = v->pd;
	init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	init.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ;
	v->qp = ibv_create_qp_ex(v->ctx, &init);
	if (!v->qp)
		return -1;
	v->qpx = ibv_qp_to_qp_ex(v->qp);
	return v->qpx ? 0 : -1;
}

static int vp_to_init(struct vp_ctx *v)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(v->qp, &attr,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int vp_to_rtr_rts(struct vp_ctx *v, const struct vp_dest *rem, uint32_t my_psn)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = rem->qpn;
	attr.rq_psn = rem->psn;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.dlid = rem->lid;
	attr.ah_attr.sl = 0;
	attr.ah_attr.port_num = 1;
	if (rem->gid.global.interface_id) {
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.dgid = rem->gid;
		attr.ah_attr.grh.hop_limit = 1;
		attr.ah_attr.grh.sgid_index = 0;
	}
	if (ibv_modify_qp(v->qp, &attr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = my_psn;
	attr.max_rd_atomic = 1;
	return ibv_modify_qp(v->qp, &attr,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int vp_post_classic(struct vp_ctx *v, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_send_wr swr, *bad_swr;

	sge.addr = (uintptr_t)v->buf;
	sge.length = VP_BUF_SIZE;
	sge.lkey = v->mr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (ibv_post_recv(v->qp, &rwr, &bad_rwr))
		return -1;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.imm_data = htobe32(0x1234);
	swr.wr.rdma.remote_addr = raddr;
	swr.wr.rdma.rkey = rkey;
	return ibv_post_send(v->qp, &swr, &bad_swr);
}

static int vp_poll_classic(struct vp_ctx *v)
{
	struct ibv_wc wc[8];
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n, i;

	if (ibv_req_notify_cq(v->cq, 0))
		return -1;
	if (ibv_get_cq_event(v->channel, &ev_cq, &ev_ctx))
		return -1;
	ibv_ack_cq_events(ev_cq, 1);
	do {
		n = ibv_poll_cq(v->cq, 8, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "wr %llu: %s (vendor %u)\n", (unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
				return -1;
			}
			if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc[i].wc_flags & IBV_WC_WITH_IMM))
				printf("imm %x, %u bytes\n", be32toh(wc[i].imm_data), wc[i].byte_len);
		}
	} while (n > 0);
	return n;
}

/* perftest's path on ConnectX/BlueField parts: the extended QP and CQ. */
static int vp_post_extended(struct vp_ctx *v, uint64_t raddr, uint32_t rkey)
{
	struct ibv_data_buf inl;
	struct ibv_sge sges[2];

	ibv_wr_start(v->qpx);
	v->qpx->wr_id = 3;
	v->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(v->qpx, rkey, raddr);
	ibv_wr_set_sge(v->qpx, v->mr->lkey, (uintptr_t)v->buf, 64);
	v->qpx->wr_id = 4;
	v->qpx->wr_flags = IBV_SEND_INLINE;
	ibv_wr_send(v->qpx);
	inl.addr = v->buf;
	inl.length = 16;
	ibv_wr_set_inline_data_list(v->qpx, 1, &inl);
	v->qpx->wr_id = 5;
	v->qpx->wr_flags = 0;
	ibv_wr_rdma_read(v->qpx, rkey, raddr);
	sges[0].addr = (uintptr_t)v->buf;
	sges[0].length = 32;
	sges[0].lkey = v->mr->lkey;
	sges[1] = sges[0];
	sges[1].addr += 32;
	ibv_wr_set_sge_list(v->qpx, 2, sges);
	return ibv_wr_complete(v->qpx);
}

static int vp_poll_extended(struct vp_ctx *v)
{
	struct ibv_poll_cq_attr attr;
	int ret, n = 0;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_start_poll(v->cq_ex, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return -1;
	do {
		if (v->cq_ex->status != IBV_WC_SUCCESS)
			break;
		printf("wr %llu op %d len %u ts %llu\n", (unsigned long long)v->cq_ex->wr_id,
		       (int)ibv_wc_read_opcode(v->cq_ex), ibv_wc_read_byte_len(v->cq_ex),
		       (unsigned long long)ibv_wc_read_completion_ts(v->cq_ex));
		n++;
	} while (ibv_next_poll(v->cq_ex) == 0);
	ibv_end_poll(v->cq_ex);
	return n;
}

/* A WQE built by hand in the SQ that mlx5dv_init_obj exposes. */
static int vp_mlx5_direct(struct vp_ctx *v)
{
	struct mlx5dv_qp dv_qp;
	struct mlx5dv_cq dv_cq;
	struct mlx5dv_obj obj;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_data_seg *data;
	struct mlx5_cqe64 *cqe;
	struct mlx5dv_context dv_attr;
	uint32_t cmd[DEVX_ST_SZ_DW(vp_cmd)];
	uint16_t pi = 0;

	if (!mlx5dv_is_supported(v->ctx->device))
		return -1;
	memset(&dv_attr, 0, sizeof(dv_attr));
	dv_attr.comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION;
	if (mlx5dv_query_device(v->ctx, &dv_attr))
		return -1;
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = v->qp;
	obj.qp.out = &dv_qp;
	obj.cq.in = v->cq;
	obj.cq.out = &dv_cq;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ))
		return -1;
	ctrl = (struct mlx5_wqe_ctrl_seg *)dv_qp.sq.buf;
	mlx5dv_set_ctrl_seg(ctrl, pi, MLX5_OPCODE_SEND, 0, v->qp->qp_num, MLX5_WQE_CTRL_CQ_UPDATE,
			    2, 0, 0);
	data = (struct mlx5_wqe_data_seg *)(ctrl + 1);
	mlx5dv_set_data_seg(data, 64, v->mr->lkey, (uintptr_t)v->buf);
	dv_qp.dbrec[MLX5_SND_DBR] = htobe32(++pi);
	cqe = (struct mlx5_cqe64 *)dv_cq.buf;
	if (mlx5dv_get_cqe_owner(cqe) == 0 && mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ)
		printf("wqe %u done\n", ntohs(cqe->wqe_counter));
	memset(cmd, 0, sizeof(cmd));
	DEVX_SET(vp_cmd, cmd, opcode, 0x100);
	DEVX_SET64(vp_cmd, cmd, address, (uintptr_t)v->buf);
	return DEVX_GET(vp_cmd, cmd, opcode) == 0x100 ? 0 : -1;
}

static void vp_close(struct vp_ctx *v)
{
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->cq_ex)
		ibv_destroy_cq(ibv_cq_ex_to_cq(v->cq_ex));
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->channel)
		ibv_destroy_comp_channel(v->channel);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v->buf);
}

int main(void)
{
	struct vp_ctx v;
	struct vp_dest rem;
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int ret = 1;

	memset(&v, 0, sizeof(v));
	memset(&rem, 0, sizeof(rem));
	v.buf = calloc(1, VP_BUF_SIZE);
	v.ctx = vp_open_first();
	if (!v.buf || !v.ctx || vp_query(&v))
		goto out;
	v.pd = ibv_alloc_pd(v.ctx);
	if (!v.pd)
		goto out;
	/* A constant access mask and one only known at run time (optional bits). */
	v.mr = ibv_reg_mr(v.pd, v.buf, VP_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!v.mr)
		goto out;
	ibv_dereg_mr(v.mr);
	if (getenv("VP_RELAXED"))
		access |= IBV_ACCESS_RELAXED_ORDERING;
	v.mr = ibv_reg_mr(v.pd, v.buf, VP_BUF_SIZE, access);
	if (!v.mr || vp_create_cqs(&v) || vp_create_qp(&v) || vp_to_init(&v))
		goto out;
	rem.lid = v.port.lid;
	rem.qpn = v.qp->qp_num;
	rem.psn = 0x123;
	rem.gid = v.gid;
	if (vp_to_rtr_rts(&v, &rem, rem.psn) || vp_post_classic(&v, (uintptr_t)v.buf, v.mr->rkey))
		goto out;
	if (vp_poll_classic(&v) < 0 || vp_post_extended(&v, (uintptr_t)v.buf, v.mr->rkey))
		goto out;
	if (vp_poll_extended(&v) < 0 || vp_mlx5_direct(&v))
		goto out;
	ret = 0;
out:
	vp_close(&v);
	return ret;
}
