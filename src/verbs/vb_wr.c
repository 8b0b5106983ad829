/*
 * vb_wr — the extended QP's work request builders (ibv_wr_start ...
 * ibv_wr_complete) and the mlx5dv_qp_ex slots.
 *
 * As mlx5's: wr_start takes the send queue's lock and remembers where the
 * producer was; each operation opens a WQE (ctrl and the operation's
 * segments) in its ring slot, or in a staging copy when it could wrap; its
 * data setter (set_sge, set_inline_data, and for UD also set_ud_addr)
 * closes it into the ring; wr_complete rings
 * the doorbell for all of them, or rolls everything back and returns the
 * first error (ENOMEM for a full queue or data beyond the limits, EINVAL
 * for an operation the QP's type has not, EOPNOTSUPP for one this device
 * lacks, EINVAL for any session of a QP in RESET); wr_abort rolls back.
 */
#include <stdatomic.h>
#include <string.h>

#include "hw_dct.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_ATOMIC_SIZE 8

static struct vb_qp *vb_wq(struct ibv_qp_ex *x)
{
	return (struct vb_qp *)x;
}

void vb_wr_fail(struct vb_qp *qp, int err)
{
	if (qp->wr_err == 0)
		qp->wr_err = err;
	qp->wr_open = false;
}

static void vb_wr_start(struct ibv_qp_ex *x)
{
	struct vb_qp *qp = vb_wq(x);

	vb_sq_lock(qp);
	qp->wr_cur_post_rb = qp->sq_cur_post;
	qp->wr_fm_rb = qp->fm_cache;
	qp->wr_err = 0;
	qp->wr_nreq = 0;
	qp->wr_open = false;
}

static void vb_wr_rollback(struct vb_qp *qp)
{
	qp->sq_cur_post = qp->wr_cur_post_rb;
	qp->fm_cache = qp->wr_fm_rb;
	qp->wr_open = false;
}

static int vb_wr_complete(struct ibv_qp_ex *x)
{
	struct vb_qp *qp = vb_wq(x);
	int err = qp->wr_err;

	if (err == 0 && qp->wr_open)
		err = EINVAL; /* an operation without its data */
	if (qp->qpx.qp_base.state == IBV_QPS_RESET)
		err = EINVAL; /* as mlx5's wr_complete of a QP in RESET: nothing is posted */
	if (err != 0)
		vb_wr_rollback(qp);
	else if (qp->wr_nreq != 0)
		vb_sq_doorbell(qp, qp->wr_nreq);
	vb_sq_unlock(qp);
	return err;
}

static void vb_wr_abort(struct ibv_qp_ex *x)
{
	struct vb_qp *qp = vb_wq(x);

	vb_wr_rollback(qp);
	vb_sq_unlock(qp);
}

/*
 * Where a WQE is built: straight in its ring slot when the largest WQE
 * could not reach the ring's end from there (the slots past the producer are
 * the program's until the doorbell), else in the staging copy that closing
 * places, wrapped. A rolled-back WQE leaves bytes the device never reads.
 */
static uint8_t *vb_wr_slot(struct vb_qp *qp)
{
	uint32_t idx = qp->sq_cur_post & (qp->sq_wqe_cnt - 1);

	if (vb_sq_room(qp, idx))
		return qp->sq_buf + (size_t)idx * HW_SEND_WQE_BB;
	return qp->wr_stage;
}

/* Opens a WQE: the ctrl segment is finished when it closes. False when the queue cannot take it. */
/* Why an operation cannot open: the first error of the session is the one wr_complete returns. */
static bool vb_wr_refuse(struct vb_qp *qp, bool rc_only)
{
	enum ibv_qp_type ty = qp->qpx.qp_base.qp_type;

	if (qp->wr_err != 0)
		return false;
	if (rc_only && ty != IBV_QPT_RC && ty != IBV_QPT_UC && ty != IBV_QPT_DRIVER && ty != IBV_QPT_XRC_SEND)
		vb_wr_fail(qp, EINVAL);
	else if (qp->wr_open)
		vb_wr_fail(qp, EINVAL); /* the previous operation never got its data */
	else
		vb_wr_fail(qp, ENOMEM);
	return false;
}

bool vb_wr_open(struct vb_qp *qp, uint8_t hw_op, uint8_t wc_op, bool rc_only)
{
	enum ibv_qp_type ty = qp->qpx.qp_base.qp_type;
	/*
	 * UD and a DCI's remote operations carry an address, XRC's the target's
	 * SRQ: a setter of its own (ibv_wr_set_xrc_srqn), a segment after ctrl.
	 */
	bool xrc = ty == IBV_QPT_XRC_SEND && hw_op != HW_WQE_UMR;
	bool addr = ty == IBV_QPT_UD || (ty == IBV_QPT_DRIVER && hw_op != HW_WQE_UMR);

	if (__builtin_expect(qp->wr_err != 0 || qp->wr_open ||
				     (rc_only && ty != IBV_QPT_RC && ty != IBV_QPT_UC && ty != IBV_QPT_DRIVER &&
				      ty != IBV_QPT_XRC_SEND) ||
				     vb_sq_full(qp, qp->wr_nreq),
			     0))
		return vb_wr_refuse(qp, rc_only);
	qp->wr_p = vb_wr_slot(qp);
	qp->wr_imm = 0;
	qp->wr_stream = 0;
	qp->wr_hw_op = hw_op;
	qp->wr_opmod = 0;
	qp->wr_wc_op = wc_op;
	qp->wr_wrid = qp->qpx.wr_id;
	qp->wr_off = sizeof(struct hw_wqe_ctrl_seg) + (addr ? sizeof(struct hw_wqe_datagram_seg) : 0) +
		     (xrc ? sizeof(struct hw_wqe_xrc_seg) : 0);
	qp->wr_open = true;
	qp->wr_setters = addr || xrc ? 2 : 1;
	if (xrc)
		memset(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg), 0, sizeof(struct hw_wqe_xrc_seg));
	return true;
}

/* Closes the staged WQE into the ring once its last setter ran. */
void vb_wr_close(struct vb_qp *qp, __be32 imm)
{
	unsigned int f = qp->qpx.wr_flags;
	uint32_t idx = qp->sq_cur_post & (qp->sq_wqe_cnt - 1);
	uint8_t fence = (f & IBV_SEND_FENCE) ? HW_WQE_CTRL_FENCE : qp->fm_cache;
	struct hw_wqe_ctrl_seg *ctrl = (void *)qp->wr_p;

	if (--qp->wr_setters != 0)
		return;
	hw_ctrl_seg_set(ctrl, (uint16_t)qp->sq_cur_post, qp->wr_hw_op, qp->wr_opmod, qp->qpx.qp_base.qp_num,
			vb_fm_ce_se(qp, f, fence),
			(uint8_t)(qp->wr_off / HW_WQE_DS_BYTES), imm != 0 ? imm : qp->wr_imm);
	ctrl->stream_id[0] = (uint8_t)(qp->wr_stream >> 8);
	ctrl->stream_id[1] = (uint8_t)qp->wr_stream;
	qp->fm_cache = qp->wr_hw_op == HW_WQE_UMR ? HW_WQE_CTRL_SMALL_FENCE : 0;
	if (qp->wr_p == qp->wr_stage)
		vb_sq_place(qp, idx, qp->wr_stage, qp->wr_off);
	vb_sq_commit(qp, idx, qp->wr_wrid, qp->wr_wc_op, qp->wr_nreq, qp->wr_off);
	qp->wr_nreq++;
	qp->wr_open = false;
}

/* The segment after ctrl (and after the datagram segment of UD). */
static uint8_t *vb_wr_seg(struct vb_qp *qp, size_t len)
{
	uint8_t *p = qp->wr_p + qp->wr_off;

	qp->wr_off += (uint32_t)len;
	return p;
}

/* The ctrl segment's immediate, written when the WQE closes (the ctrl segment is written once, then). */
static void vb_wr_imm(struct vb_qp *qp, __be32 imm)
{
	qp->wr_imm = imm;
}

static void vb_wr_rdma(struct ibv_qp_ex *x, uint8_t op, uint8_t wc, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct vb_qp *qp = vb_wq(x);

	if (!vb_wr_open(qp, op, wc, true))
		return;
	vb_wr_imm(qp, imm);
	hw_raddr_seg_set((void *)vb_wr_seg(qp, sizeof(struct hw_wqe_raddr_seg)), raddr, rkey);
}

static void vb_wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	vb_wr_rdma(x, HW_WQE_RDMA_WRITE, IBV_WC_RDMA_WRITE, rkey, raddr, 0);
}

static void vb_wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	vb_wr_rdma(x, HW_WQE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE, rkey, raddr, imm);
}

static void vb_wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	vb_wr_rdma(x, HW_WQE_RDMA_READ, IBV_WC_RDMA_READ, rkey, raddr, 0);
}

static void vb_wr_atomic(struct ibv_qp_ex *x, uint8_t op, uint8_t wc, uint32_t rkey, uint64_t raddr,
			 uint64_t swap_add, uint64_t compare)
{
	struct vb_qp *qp = vb_wq(x);

	if (!vb_wr_open(qp, op, wc, true))
		return;
	hw_raddr_seg_set((void *)vb_wr_seg(qp, sizeof(struct hw_wqe_raddr_seg)), raddr, rkey);
	hw_atomic_seg_set((void *)vb_wr_seg(qp, sizeof(struct hw_wqe_atomic_seg)), swap_add, compare);
}

static void vb_wr_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t compare, uint64_t swap)
{
	vb_wr_atomic(x, HW_WQE_ATOMIC_CS, IBV_WC_COMP_SWAP, rkey, raddr, swap, compare);
}

static void vb_wr_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	vb_wr_atomic(x, HW_WQE_ATOMIC_FA, IBV_WC_FETCH_ADD, rkey, raddr, add, 0);
}

static void vb_wr_send(struct ibv_qp_ex *x)
{
	vb_wr_open(vb_wq(x), HW_WQE_SEND, IBV_WC_SEND, false);
}

static void vb_wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct vb_qp *qp = vb_wq(x);

	if (vb_wr_open(qp, HW_WQE_SEND_IMM, IBV_WC_SEND, false))
		vb_wr_imm(qp, imm);
}

static void vb_wr_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct vb_qp *qp = vb_wq(x);

	if (vb_wr_open(qp, HW_WQE_SEND_INVAL, IBV_WC_SEND, true))
		vb_wr_imm(qp, htobe32(rkey));
}

/* LOCAL_INV needs no data: it closes at once. */
static void vb_wr_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct vb_qp *qp = vb_wq(x);

	if (!vb_wr_open(qp, HW_WQE_UMR, IBV_WC_LOCAL_INV, true))
		return;
	vb_wr_imm(qp, htobe32(rkey));
	qp->wr_off += (uint32_t)vb_local_inv_seg(qp->wr_p + qp->wr_off);
	vb_wr_close(qp, 0);
}

static bool vb_wr_setter_ok(struct vb_qp *qp)
{
	if (qp->wr_err != 0)
		return false;
	/* An open mkey configuration takes only its own setters (vb_mkey_wr.c). */
	if (!qp->wr_open || qp->wr_wc_op == MLX5DV_WC_UMR) {
		vb_wr_fail(qp, EINVAL);
		return false;
	}
	return true;
}

static void vb_wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct vb_qp *qp = vb_wq(x);
	struct hw_wqe_datagram_seg *d = (void *)(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg));

	if (!vb_wr_setter_ok(qp))
		return;
	if (qp->qpx.qp_base.qp_type != IBV_QPT_UD || ah == NULL) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	memcpy(d, &((struct vb_ah *)ah)->av, sizeof(*d));
	d->dqp_dct = htobe32(remote_qpn | 0x80000000u);
	d->qkey = htobe32(remote_qkey);
	vb_wr_close(qp, 0);
}

static void vb_wr_data_seg(struct vb_qp *qp, uint32_t lkey, uint64_t addr, uint32_t len)
{
	bool atomic = qp->wr_hw_op == HW_WQE_ATOMIC_CS || qp->wr_hw_op == HW_WQE_ATOMIC_FA;

	if (len == 0)
		return;
	hw_data_seg_set((void *)vb_wr_seg(qp, sizeof(struct hw_wqe_data_seg)),
			atomic ? VB_ATOMIC_SIZE : hw_data_seg_len_of(len), lkey, addr);
}

static void vb_wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct vb_qp *qp = vb_wq(x);

	if (!vb_wr_setter_ok(qp))
		return;
	vb_wr_data_seg(qp, lkey, addr, length);
	vb_wr_close(qp, 0);
}

static void vb_wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *sg)
{
	struct vb_qp *qp = vb_wq(x);

	if (!vb_wr_setter_ok(qp))
		return;
	if (n > qp->sq_max_gs) {
		vb_wr_fail(qp, ENOMEM);
		return;
	}
	for (size_t i = 0; i < n; i++)
		vb_wr_data_seg(qp, sg[i].lkey, sg[i].addr, sg[i].length);
	vb_wr_close(qp, 0);
}

static void vb_wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *b)
{
	struct vb_qp *qp = vb_wq(x);
	uint8_t *hdr, *d;
	size_t len = 0;

	if (!vb_wr_setter_ok(qp))
		return;
	if (qp->wr_hw_op == HW_WQE_RDMA_READ || qp->wr_hw_op == HW_WQE_ATOMIC_CS || qp->wr_hw_op == HW_WQE_ATOMIC_FA) {
		vb_wr_fail(qp, EINVAL); /* data the device writes cannot be inline */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (b[i].length > qp->max_inline - len) { /* no sum first: lengths near SIZE_MAX would wrap it */
			vb_wr_fail(qp, ENOMEM);
			return;
		}
		len += b[i].length;
	}
	hdr = qp->wr_p + qp->wr_off;
	d = hdr + sizeof(struct hw_wqe_inl_seg);
	for (size_t i = 0; i < n; i++) {
		memcpy(d, b[i].addr, b[i].length);
		d += b[i].length;
	}
	if (len != 0) {
		hw_inl_seg_set((void *)hdr, (uint32_t)len);
		qp->wr_off += (uint32_t)((sizeof(struct hw_wqe_inl_seg) + len + 15) & ~(size_t)15);
	}
	vb_wr_close(qp, 0);
}

static void vb_wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};

	vb_wr_set_inline_data_list(x, 1, &b);
}

/* What this device has not: TSO, atomic write. */
static void vb_wr_unsupported(struct vb_qp *qp, const char *name)
{
	vb_log_unsupported(name);
	vb_wr_fail(qp, EOPNOTSUPP);
}

/* A bind needs no data either: checked as ibv_post_send checks it, then closed at once. */
static void vb_wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *b)
{
	struct vb_qp *qp = vb_wq(x);
	int rc = b != NULL ? vb_bind_mw_check(qp, mw, b) : EINVAL;

	if (rc != 0) {
		if (qp->wr_err == 0)
			vb_wr_fail(qp, rc);
		return;
	}
	if (!vb_wr_open(qp, HW_WQE_UMR, IBV_WC_BIND_MW, true))
		return;
	vb_wr_imm(qp, htobe32(mw->rkey));
	qp->wr_off += (uint32_t)vb_bind_mw_segs(qp, mw, rkey, b, qp->wr_p + qp->wr_off);
	vb_wr_close(qp, 0);
}

static void vb_wr_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	vb_wr_unsupported(vb_wq(x), "ibv_wr_send_tso");
}

/* The XRC segment of the open WQE: the target's SRQ (a setter: the WQE closes once its data is set too). */
static void vb_wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	struct vb_qp *qp = vb_wq(x);
	struct hw_wqe_xrc_seg *xs = (void *)(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg));

	if (!qp->wr_open || qp->qpx.qp_base.qp_type != IBV_QPT_XRC_SEND || qp->wr_hw_op == HW_WQE_UMR) {
		if (qp->wr_err == 0)
			vb_wr_fail(qp, EINVAL);
		return;
	}
	xs->xrc_srqn = htobe32(srqn);
	vb_wr_close(qp, 0);
}

static void vb_wr_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, const void *data)
{
	(void)rkey, (void)raddr, (void)data;
	vb_wr_unsupported(vb_wq(x), "ibv_wr_atomic_write");
}

/* The mlx5dv_qp_ex slots: the DC address; mkey configure and signatures are not on this device (UMR: vb_umr_wr.c; raw WQEs: vb_raw_wqe.c; memcpy: vb_memcpy_wr.c). */
static struct vb_qp *vb_dvq(struct mlx5dv_qp_ex *d)
{
	return (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
}

/* A DCI's WQE: the AH's address vector with the DCT number and its access key (hw_dct.h). */
static void vb_dv_wr_set_dc_addr(struct mlx5dv_qp_ex *d, struct ibv_ah *ah, uint32_t dctn, uint64_t key)
{
	struct vb_qp *qp = vb_dvq(d);
	struct hw_wqe_datagram_seg *av = (void *)(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg));

	if (!vb_wr_setter_ok(qp))
		return;
	if (qp->dc_type != MLX5DV_DCTYPE_DCI || qp->wr_hw_op == HW_WQE_UMR || ah == NULL) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	memcpy(av, &((struct vb_ah *)ah)->av, sizeof(*av));
	hw_av_set_dc(av, dctn, key);
	vb_wr_close(qp, 0);
}

/* The stream goes in the ctrl segment when the WQE closes (dci_stream_channel_id, big-endian), as mlx5 writes it (hw_dcs.h). */
static void vb_dv_wr_set_dc_addr_stream(struct mlx5dv_qp_ex *d, struct ibv_ah *ah, uint32_t dctn, uint64_t key,
					uint16_t stream)
{
	vb_dvq(d)->wr_stream = stream;
	vb_dv_wr_set_dc_addr(d, ah, dctn, key);
}

#define VB_DV_WR(name, ...)                                                                        \
	static void vb_dv_##name(struct mlx5dv_qp_ex *d, __VA_ARGS__)                              \
	{                                                                                          \
		vb_wr_unsupported(vb_dvq(d), "mlx5dv_" #name);                                      \
	}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
VB_DV_WR(wr_set_mkey_crypto, const struct mlx5dv_crypto_attr *a)
#pragma GCC diagnostic pop

static void vb_dv_fill(struct mlx5dv_qp_ex *d)
{
	d->wr_set_dc_addr = vb_dv_wr_set_dc_addr;
	d->wr_mr_interleaved = vb_dv_wr_mr_interleaved;
	d->wr_mr_list = vb_dv_wr_mr_list;
	d->wr_mkey_configure = vb_dv_wr_mkey_configure;
	d->wr_set_mkey_access_flags = vb_dv_wr_set_mkey_access_flags;
	d->wr_set_mkey_layout_list = vb_dv_wr_set_mkey_layout_list;
	d->wr_set_mkey_layout_interleaved = vb_dv_wr_set_mkey_layout_interleaved;
	d->wr_set_mkey_sig_block = vb_dv_wr_set_mkey_sig_block;
	d->wr_raw_wqe = vb_dv_wr_raw_wqe;
	d->wr_set_dc_addr_stream = vb_dv_wr_set_dc_addr_stream;
	d->wr_memcpy = vb_dv_wr_memcpy;
	d->wr_set_mkey_crypto = vb_dv_wr_set_mkey_crypto;
}

void vb_qp_wr_fill(struct vb_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qpx;

	qp->wr_p = qp->wr_stage;
	x->wr_start = vb_wr_start;
	x->wr_complete = vb_wr_complete;
	x->wr_abort = vb_wr_abort;
	x->wr_rdma_write = vb_wr_rdma_write;
	x->wr_rdma_write_imm = vb_wr_rdma_write_imm;
	x->wr_rdma_read = vb_wr_rdma_read;
	x->wr_atomic_cmp_swp = vb_wr_cmp_swp;
	x->wr_atomic_fetch_add = vb_wr_fetch_add;
	x->wr_send = vb_wr_send;
	x->wr_send_imm = vb_wr_send_imm;
	x->wr_send_inv = vb_wr_send_inv;
	x->wr_local_inv = vb_wr_local_inv;
	x->wr_set_ud_addr = vb_wr_set_ud_addr;
	x->wr_set_sge = vb_wr_set_sge;
	x->wr_set_sge_list = vb_wr_set_sge_list;
	x->wr_set_inline_data = vb_wr_set_inline_data;
	x->wr_set_inline_data_list = vb_wr_set_inline_data_list;
	x->wr_bind_mw = vb_wr_bind_mw;
	x->wr_send_tso = vb_wr_send_tso;
	x->wr_set_xrc_srqn = vb_wr_set_xrc_srqn;
	x->wr_atomic_write = vb_wr_atomic_write;
	vb_dv_fill(&qp->dv);
}

/* Only a QP created with send_ops_flags has the builders, as rdma-core's. */
VB_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct vb_qp *qp = vb_qp_of(ibqp);

	if (ibqp == NULL || !qp->ex) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &qp->qpx;
}
