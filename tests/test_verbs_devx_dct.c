/*
 * DevX DC objects (mlx5dv_devx_obj_create(3), _modify, _query, _destroy):
 * CREATE_DCT with the dctc of mlx5_ifc.h on a verbs CQ and SRQ, DRAIN_DCT,
 * QUERY_DCT, and DCIs made by CREATE_QP with st DCI over the program's umem,
 * moved by RST2INIT / INIT2RTR / RTR2RTS, whose WQEs carry the DC address
 * (access key, DCT number, address vector) the program writes itself. A
 * DevX DCI writes and sends to a DevX DCT and to an mlx5dv_create_qp DCT of
 * another process, the bytes compared there; a wrong access key is
 * dropped at the DCT (counted in dc_access_key_violation_count) and the
 * DCI's retries run out (transport retry counter exceeded); a drained DCT
 * answers nothing. Refused commands answer the PRM's status in out with
 * EREMOTEIO, as the kernel answers a DevX command.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#include "devx_fixture.h"
#include "kid_fixture.h"

#define OP_CREATE_DCT 0x710
#define OP_DESTROY_DCT 0x711
#define OP_DRAIN_DCT 0x712
#define OP_QUERY_DCT 0x713
#define OP_INIT2INIT 0x50e
#define ST_BAD_RES_STATE 0x9
#define SYND_DCT_SRQ 0x5d0c0041u
#define SYND_DCT_CQ 0x5d0c0042u
#define SYND_DCT_PD 0x5d0c0043u
#define SYND_DCT_PORT 0x5d0c0044u
#define SYND_DCT_STATE 0x5d0c0045u

#define DCT_IN 0x80	    /* create_dct_in */
#define DCTC 0x80	    /* the dctc in create_dct_in and query_dct_out, in bits */
#define DCT_QUERY_OUT 0x50
#define QPC_ST_DCI 5
#define DCTS_ACTIVE 0
#define DCTS_DRAINED 2
#define KEY 0x1122334455667788ull
#define UIDX 0x00a5b6u	    /* the DCI's user index */
#define WQE_BB 64
#define DC_WQE_DS 5	    /* ctrl, 48-byte address, data: 80 bytes in 16-byte units (a raddr one more) */
#define LEN 700
#define SYND_RETRY_EXC 0x15 /* MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR */
#define POLL_GUARD_S 60.0   /* a CQE that never comes: the case fails instead of hanging */

/* The DCT side: a verbs CQ, SRQ and buffer, as UCX makes them, and their numbers. */
struct tgt {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint32_t pdn, cqn, srqn;
	uint8_t buf[8192];
};

static void tgt_close(struct tgt *t)
{
	if (t->mr != NULL)
		ibv_dereg_mr(t->mr);
	if (t->srq != NULL)
		ibv_destroy_srq(t->srq);
	if (t->cq != NULL)
		ibv_destroy_cq(t->cq);
	if (t->pd != NULL)
		ibv_dealloc_pd(t->pd);
	if (t->c != NULL)
		ibv_close_device(t->c);
}

static int tgt_open(struct tgt *t)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct mlx5dv_pd dpd;
	struct mlx5dv_cq dcq;
	struct mlx5dv_srq dsrq;
	struct mlx5dv_obj o = {.pd = {.in = NULL, .out = &dpd}, .cq = {.in = NULL, .out = &dcq},
			       .srq = {.in = NULL, .out = &dsrq}};

	t->c = open_devx();
	t->pd = t->c != NULL ? ibv_alloc_pd(t->c) : NULL;
	t->cq = t->pd != NULL ? ibv_create_cq(t->c, 32, NULL, NULL, 0) : NULL;
	t->srq = t->cq != NULL ? ibv_create_srq(t->pd, &sa) : NULL;
	t->mr = t->srq != NULL ? ibv_reg_mr(t->pd, t->buf, sizeof(t->buf), VQ_ACCESS_ALL) : NULL;
	if (t->mr == NULL)
		return ENOMEM;
	o.pd.in = t->pd;
	o.cq.in = t->cq;
	o.srq.in = t->srq;
	dsrq.comp_mask = MLX5DV_SRQ_MASK_SRQN; /* asks for the number */
	if (mlx5dv_init_obj(&o, MLX5DV_OBJ_PD | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ) != 0)
		return EINVAL;
	t->pdn = dpd.pdn;
	t->cqn = dcq.cqn;
	t->srqn = dsrq.srqn;
	return 0;
}

static void tgt_close_cb(void *arg)
{
	tgt_close(arg);
	free(arg);
}

/* A receive into buf + off of len bytes on the SRQ. */
static int tgt_recv(struct tgt *t, uint32_t off, uint32_t len, uint64_t id)
{
	struct ibv_sge s = {.addr = (uintptr_t)(t->buf + off), .length = len, .lkey = t->mr->lkey};
	struct ibv_recv_wr w = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;

	return ibv_post_srq_recv(t->srq, &w, &bad);
}

/* CREATE_DCT as UCX fills it: PD, SRQ, CQ, key, rights, port 1, GID index 0, MTU, RNR timer. */
static void dct_cmd(const struct tgt *t, uint8_t *in)
{
	memset(in, 0, DCT_IN);
	prm_set(in, 0, 16, OP_CREATE_DCT);
	prm_set(in, DCTC + 0x48, 24, t->cqn);
	prm_set(in, DCTC + 0x6c, 1, 1); /* rre */
	prm_set(in, DCTC + 0x6d, 1, 1); /* rwe */
	prm_set(in, DCTC + 0x6e, 1, 1); /* rae */
	prm_set(in, DCTC + 0x88, 8, 1); /* cs_res */
	prm_set(in, DCTC + 0x93, 5, 12); /* min_rnr_nak */
	prm_set(in, DCTC + 0xa8, 24, t->srqn);
	prm_set(in, DCTC + 0xc8, 24, t->pdn);
	prm_set(in, DCTC + 0x100, 64, KEY);
	prm_set(in, DCTC + 0x145, 3, 5); /* mtu 4096 */
	prm_set(in, DCTC + 0x148, 8, 1); /* port */
	prm_set(in, DCTC + 0x168, 8, 0); /* my_addr_index */
	prm_set(in, DCTC + 0x178, 8, 64); /* hop_limit */
}

static struct mlx5dv_devx_obj *dct_create(const struct tgt *t, uint32_t *dctn)
{
	uint8_t in[DCT_IN], out[OUT_SZ];
	struct mlx5dv_devx_obj *o;

	dct_cmd(t, in);
	memset(out, 0xff, sizeof(out));
	o = mlx5dv_devx_obj_create(t->c, in, sizeof(in), out, sizeof(out));
	if (o == NULL || status_of(out) != 0 || syndrome_of(out) != 0)
		return NULL;
	*dctn = (uint32_t)prm_get(out, 0x48, 24);
	return o;
}

static void dct_destroy_cb(void *arg)
{
	mlx5dv_devx_obj_destroy(arg);
}

/* QUERY_DCT into out (DCT_QUERY_OUT bytes): the call's errno value. */
static int dct_query(struct mlx5dv_devx_obj *o, uint32_t dctn, uint8_t *out)
{
	uint8_t in[0x10] = {0};

	prm_set(in, 0, 16, OP_QUERY_DCT);
	prm_set(in, 0x48, 24, dctn);
	memset(out, 0xee, DCT_QUERY_OUT);
	return mlx5dv_devx_obj_query(o, in, sizeof(in), out, DCT_QUERY_OUT);
}

static int dct_drain(struct mlx5dv_devx_obj *o, uint32_t dctn, uint8_t *out)
{
	uint8_t in[0x10] = {0};

	prm_set(in, 0, 16, OP_DRAIN_DCT);
	prm_set(in, 0x48, 24, dctn);
	memset(out, 0xff, OUT_SZ);
	return mlx5dv_devx_obj_modify(o, in, sizeof(in), out, OUT_SZ);
}

/* CREATE_QP of a DCI as UCX fills it: SQ of 2^LOG_SQ blocks at qp_mem, record at dbr + 8, a user index. */
static void dci_cmd(struct dx *d, uint8_t *in, uint32_t cqn)
{
	memset(in, 0, QP_IN);
	prm_set(in, 0, 16, OP_CREATE_QP);
	prm_set(in, QPC + 0x8, 8, QPC_ST_DCI);
	prm_set(in, QPC + 0x13, 2, 3);	    /* pm_state: migrated */
	prm_set(in, QPC + 0x28, 24, d->pdn);
	prm_set(in, QPC + 0x51, 4, LOG_SQ);
	prm_set(in, QPC + 0x68, 24, d->uar->page_id);
	prm_set(in, QPC + 0x88, 24, UIDX); /* user_index */
	prm_set(in, QPC + 0x3e8, 24, cqn); /* cqn_snd */
	prm_set(in, QPC + 0x4e8, 24, cqn); /* cqn_rcv */
	prm_set(in, QPC + 0x500, 64, 8);   /* dbr_addr */
	prm_set(in, QPC + 0x565, 3, 3);	   /* rq_type: no RQ */
	prm_set(in, QPC + 0x720, 32, d->dbr_um->umem_id);
	prm_set(in, 0x800, 64, 0); /* wq_umem_offset */
	prm_set(in, 0x840, 32, d->qp_um->umem_id);
}

/* A DevX CQ and a DCI in RST on it; the DCI's number in d->qpn. */
static void dci_create(struct dx *d)
{
	uint8_t in[QP_IN], out[OUT_SZ];
	uint32_t eqn = 99;

	CHECK_OK(mlx5dv_devx_query_eqn(d->c, 0, &eqn));
	cq_cmd(d, in, eqn);
	d->cq = mlx5dv_devx_obj_create(d->c, in, CQ_IN, out, sizeof(out));
	CHECK(d->cq != NULL);
	d->cqn = (uint32_t)prm_get(out, 0x48, 24);
	dci_cmd(d, in, d->cqn);
	memset(out, 0xff, sizeof(out));
	d->qp = mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out));
	CHECK(d->qp != NULL);
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	d->qpn = (uint32_t)prm_get(out, 0x48, 24);
	CHECK(d->qpn != 0);
}

/* UCX's DCI transitions: RST2INIT (port), INIT2RTR (mtu, no destination), RTR2RTS (retries, timeout). */
static int dci_modify(struct dx *d, uint16_t op, uint8_t *out)
{
	uint8_t in[QP_IN] = {0};

	prm_set(in, 0, 16, op);
	prm_set(in, 0x48, 24, d->qpn);
	prm_set(in, QPC + 0x13, 2, 3);
	prm_set(in, ADS + 0x128, 8, 1); /* vhca_port_num */
	if (op == OP_INIT2RTR) {
		prm_set(in, QPC + 0x0, 3, 5); /* mtu 4096 */
		prm_set(in, QPC + 0x3, 5, 30); /* log_msg_max */
		prm_set(in, QPC + 0x492, 1, 1); /* rae */
	}
	if (op == OP_RTR2RTS) {
		prm_set(in, QPC + 0x388, 3, 0); /* log_sra_max */
		prm_set(in, QPC + 0x38d, 3, 7); /* retry_count */
		prm_set(in, QPC + 0x390, 3, 7); /* rnr_retry */
		prm_set(in, ADS + 0x40, 5, 14); /* ack_timeout */
	}
	memset(out, 0xff, OUT_SZ);
	return mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, OUT_SZ);
}

static void dci_up(struct dx *d)
{
	uint8_t out[OUT_SZ];

	CHECK_OK(dci_modify(d, OP_RST2INIT, out));
	CHECK(status_of(out) == 0);
	CHECK_OK(dci_modify(d, OP_INIT2RTR, out));
	CHECK(status_of(out) == 0);
	CHECK_OK(dci_modify(d, OP_RTR2RTS, out));
	CHECK(status_of(out) == 0);
}

/* The address vector of the device's port (its GID 0), as mlx5 builds it for an AH. */
static void port_av(struct dx *d, struct mlx5_wqe_av *av)
{
	struct ibv_ah_attr a = {.port_num = 1};
	struct mlx5dv_ah dah;
	struct mlx5dv_obj o = {.ah = {.out = &dah}};
	struct ibv_ah *ah;

	CHECK_OK(vq_grh_self(d->c, &a));
	ah = ibv_create_ah(d->pd, &a);
	CHECK(ah != NULL);
	o.ah.in = ah;
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_AH));
	*av = *dah.av;
	CHECK_OK(ibv_destroy_ah(ah));
}

/* What one DC WQE does: its opcode, DCT, key, and the remote and local ranges. */
struct dc_op {
	uint8_t opcode;
	uint32_t dctn;
	uint64_t key;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t loff;
	uint32_t len;
};

/* One signalled DC WQE (two basic blocks): ctrl, address, a WRITE's remote address, data; record, UAR. */
static void dci_post(struct dx *d, const struct mlx5_wqe_av *port, const struct dc_op *op)
{
	uint8_t *wqe = d->qp_mem + (d->sq_pi % (1u << LOG_SQ)) * WQE_BB;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_av *av = (void *)(wqe + sizeof(*ctrl));
	struct mlx5_wqe_raddr_seg *ra = (void *)(wqe + sizeof(*ctrl) + sizeof(*av));
	bool write = op->opcode == MLX5_OPCODE_RDMA_WRITE;
	struct mlx5_wqe_data_seg *data = write ? (void *)(ra + 1) : (void *)ra;
	uint64_t bell;

	memset(wqe, 0, 2 * WQE_BB);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)d->sq_pi, op->opcode, 0, d->qpn, MLX5_WQE_CTRL_CQ_UPDATE,
			    (uint8_t)(DC_WQE_DS + (write ? 1 : 0)), 0, 0);
	*av = *port;
	av->key.dc_key = htobe64(op->key);
	av->dqp_dct = htobe32(op->dctn | MLX5_EXTENDED_UD_AV);
	if (write) {
		ra->raddr = htobe64(op->raddr);
		ra->rkey = htobe32(op->rkey);
	}
	mlx5dv_set_data_seg(data, op->len, d->mr->lkey, (uintptr_t)(d->buf + op->loff));
	d->sq_pi += 2;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	((volatile uint32_t *)(void *)(d->dbr + 8))[MLX5_SND_DBR] = htobe32(d->sq_pi & 0xffff);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&bell, ctrl, sizeof(bell));
	*(volatile uint64_t *)d->uar->reg_addr = bell;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The next CQE of the DevX CQ by its owner bit, consumed in the record. The
 * WQE runs when the engine thread sees the record move, which on a loaded
 * machine may take a while: the bound is a hang guard only.
 */
static void dx_poll_timed(struct dx *d, struct mlx5_cqe64 *out)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(void *)d->cq_mem + (d->cq_ci % (1u << LOG_CQ));
	uint8_t owner = (d->cq_ci >> LOG_CQ) & 1;
	double give_up = now_s() + POLL_GUARD_S;
	bool seen = false;

	for (long i = 0; !seen; i++) {
		uint8_t op = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		seen = (op >> 4) != MLX5_CQE_INVALID && (op & 1) == owner;
		if (!seen && i % 1024 == 1023) {
			if (now_s() > give_up)
				break;
			sched_yield();
		}
	}
	CHECK(seen);
	*out = *cqe;
	d->cq_ci++;
	((volatile uint32_t *)(void *)d->dbr)[CQ_SET_CI] = htobe32(d->cq_ci & 0xffffff);
}

/* The DCI's CQE of the WQE at counter: REQ with the WQE's opcode, the DCI's number and its user index. */
static void check_req(struct dx *d, uint16_t counter, uint8_t opcode)
{
	struct mlx5_cqe64 c;

	dx_poll_timed(d, &c);
	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ);
	CHECK(be16toh(c.wqe_counter) == counter);
	CHECK((be32toh(c.sop_drop_qpn) & 0xffffff) == d->qpn);
	CHECK(be32toh(c.sop_drop_qpn) >> 24 == opcode);
	CHECK((be32toh(c.srqn_uidx) & 0xffffff) == UIDX);
}

static void fill(uint8_t *b, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 13);
}

/* The DCI side in this process: DevX CQ, DCI in RTS, the port's address. */
static void dci_env(struct dx **dp, struct mlx5_wqe_av *av)
{
	dx_open(dp, SQ_BYTES);
	dci_create(*dp);
	dci_up(*dp);
	port_av(*dp, av);
}

/* The DCT side in this process, closed when the case ends. */
static void tgt_env(struct tgt **tp)
{
	struct tgt *t = calloc(1, sizeof(*t));

	*tp = t;
	CHECK(t != NULL);
	th_defer(tgt_close_cb, t);
	CHECK_OK(tgt_open(t));
}

/* What the other process tells: its DevX DCT, its mlx5dv DCT, the buffer's key and address. */
struct far {
	uint32_t dctn, dv_dctn, rkey;
	uint64_t addr;
};

/* An mlx5dv_create_qp DCT on the target's CQ and SRQ, in RTR. */
static struct ibv_qp *dv_dct(struct tgt *t)
{
	struct ibv_qp_init_attr_ex a = {.send_cq = t->cq, .recv_cq = t->cq, .srq = t->srq,
					.qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = t->pd};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					 .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = KEY}};
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = VQ_ACCESS_ALL};
	struct ibv_qp *qp = mlx5dv_create_qp(t->c, &a, &dv);

	if (qp == NULL || ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return NULL;
	qa = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .min_rnr_timer = 1,
				  .ah_attr = {.port_num = 1}};
	if (vq_grh_self(t->c, &qa.ah_attr) != 0 ||
	    ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU) != 0)
		return NULL;
	return qp;
}

/* One receive completion of the target's CQ: its wr_id and length. */
static int tgt_poll_recv(struct tgt *t, uint64_t id, uint32_t len)
{
	struct ibv_wc wc;

	return vq_poll1(t->cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	       wc.wr_id == id && wc.byte_len == len;
}

/*
 * The other process: a DevX DCT and an mlx5dv DCT on one verbs CQ and SRQ;
 * it says where they are, then checks the two WRITEs (at 0 and 2048) and
 * the two SENDs (received at 4096 and 6144) bytes against what was sent.
 */
static void child(int in, int out)
{
	struct tgt *t = calloc(1, sizeof(*t)); /* its buffer on the heap, as a program's */
	struct far f;
	uint8_t want[LEN];
	struct ibv_qp *dv;
	struct mlx5dv_devx_obj *dct;
	char ok;

	if (t == NULL || tgt_open(t) != 0)
		_exit(2);
	dct = dct_create(t, &f.dctn);
	dv = dv_dct(t);
	if (dct == NULL || dv == NULL || tgt_recv(t, 4096, 2048, 1) != 0 || tgt_recv(t, 6144, 2048, 2) != 0)
		_exit(3);
	f.dv_dctn = dv->qp_num;
	f.rkey = t->mr->rkey;
	f.addr = (uintptr_t)t->buf;
	if (write(out, &f, sizeof(f)) != sizeof(f) || read(in, &ok, 1) != 1)
		_exit(4);
	if (!tgt_poll_recv(t, 1, LEN) || !tgt_poll_recv(t, 2, LEN))
		_exit(5);
	for (int i = 0; i < 4; i++) {
		static const uint32_t at[4] = {0, 2048, 4096, 6144};

		fill(want, LEN, (uint8_t)(0x30 + i));
		if (memcmp(t->buf + at[i], want, LEN) != 0)
			_exit(6 + i);
	}
	ok = 'y';
	if (write(out, &ok, 1) != 1)
		_exit(11);
	(void)mlx5dv_devx_obj_destroy(dct);
	(void)ibv_destroy_qp(dv);
	tgt_close(t);
	_exit(0);
}

/* A DevX DCI writes and sends to a DevX DCT and to an mlx5dv DCT of another process: the bytes arrive there. */
static void test_dci_to_dcts_other_process(void)
{
	struct mlx5_wqe_av av;
	int a[2], b[2];
	struct far f;
	char ok = 0;
	struct dx *d;

	kid_fork(a, b);
	if (kid == 0)
		child(a[0], b[1]);
	dci_env(&d, &av);
	CHECK(read(b[0], &f, sizeof(f)) == sizeof(f));
	CHECK(f.dctn != 0 && f.dv_dctn != 0 && f.dctn != f.dv_dctn);
	for (int i = 0; i < 4; i++) {
		struct dc_op op = {
			.opcode = i < 2 ? MLX5_OPCODE_RDMA_WRITE : MLX5_OPCODE_SEND,
			.dctn = i % 2 == 0 ? f.dctn : f.dv_dctn,
			.key = KEY,
			.raddr = f.addr + (uint64_t)2048 * (unsigned)i,
			.rkey = f.rkey,
			.loff = 1024u * (unsigned)i,
			.len = LEN,
		};

		fill(d->buf + op.loff, LEN, (uint8_t)(0x30 + i));
		dci_post(d, &av, &op);
		check_req(d, (uint16_t)(2 * i), op.opcode);
	}
	CHECK(write(a[1], "s", 1) == 1);
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'y');
	kid_wait_ok();
}

/* QUERY_DCT gives the context as created, ACTIVE, no violation; QUERY_QP of the DCI its type, state and index. */
static void test_query(void)
{
	struct tgt *t = NULL;
	struct mlx5_wqe_av av;
	struct dx *d = NULL;
	uint8_t out[DCT_QUERY_OUT], in[0x10] = {0}, qout[QUERY_OUT];
	struct mlx5dv_devx_obj *o;
	uint32_t dctn = 0;

	tgt_env(&t);
	dci_env(&d, &av);
	o = dct_create(t, &dctn);
	CHECK(o != NULL);
	th_defer(dct_destroy_cb, o);
	CHECK_OK(dct_query(o, dctn, out));
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	CHECK(prm_get(out, DCTC + 4, 4) == DCTS_ACTIVE);
	CHECK(prm_get(out, DCTC + 0x48, 24) == t->cqn);
	CHECK(prm_get(out, DCTC + 0xa8, 24) == t->srqn);
	CHECK(prm_get(out, DCTC + 0xc8, 24) == t->pdn);
	CHECK(prm_get(out, DCTC + 0x100, 64) == KEY);
	CHECK(prm_get(out, DCTC + 0x6c, 3) == 7); /* rre, rwe, rae */
	CHECK(prm_get(out, DCTC + 0x93, 5) == 12);
	CHECK(prm_get(out, DCTC + 0x145, 3) == 5 && prm_get(out, DCTC + 0x148, 8) == 1);
	CHECK(prm_get(out, DCTC + 0x180, 32) == 0); /* dc_access_key_violation_count */
	prm_set(in, 0, 16, OP_QUERY_QP);
	prm_set(in, 0x48, 24, d->qpn);
	CHECK_OK(mlx5dv_devx_obj_query(d->qp, in, sizeof(in), qout, QUERY_OUT));
	CHECK(prm_get(qout, QPC, 4) == 3); /* RTS */
	CHECK(prm_get(qout, QPC + 8, 8) == QPC_ST_DCI);
	CHECK(prm_get(qout, QPC + 0x88, 24) == UIDX);
}

/* A wrong key: the DCT drops the request and counts it, the DCI gets retries exceeded and goes to ERR. */
static void test_wrong_key(void)
{
	struct tgt *t = NULL;
	struct mlx5_wqe_av av;
	struct dx *d = NULL;
	uint8_t out[DCT_QUERY_OUT], in[0x10] = {0}, qout[QUERY_OUT];
	struct mlx5dv_devx_obj *o;
	struct mlx5_err_cqe e;
	uint32_t dctn = 0;
	struct dc_op op = {.opcode = MLX5_OPCODE_RDMA_WRITE, .key = KEY + 1, .len = 64};

	tgt_env(&t);
	dci_env(&d, &av);
	op.rkey = t->mr->rkey;
	op.raddr = (uintptr_t)t->buf;
	o = dct_create(t, &dctn);
	CHECK(o != NULL);
	th_defer(dct_destroy_cb, o);
	op.dctn = dctn;
	memset(d->buf, 0x5a, 64);
	dci_post(d, &av, &op);
	dx_poll_timed(d, (struct mlx5_cqe64 *)(void *)&e);
	CHECK(mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)(void *)&e) == MLX5_CQE_REQ_ERR);
	CHECK(e.syndrome == SYND_RETRY_EXC);
	CHECK(be16toh(e.wqe_counter) == 0 && (be32toh(e.s_wqe_opcode_qpn) & 0xffffff) == d->qpn);
	CHECK((be32toh(e.srqn) & 0xffffff) == UIDX); /* the DCI's user index, as in its good CQEs */
	for (int k = 0; k < 64; k++)
		CHECK(t->buf[k] == 0);
	CHECK_OK(dct_query(o, dctn, out));
	CHECK(prm_get(out, DCTC + 0x180, 32) == 1);
	CHECK(prm_get(out, DCTC + 4, 4) == DCTS_ACTIVE);
	prm_set(in, 0, 16, OP_QUERY_QP);
	prm_set(in, 0x48, 24, d->qpn);
	CHECK_OK(mlx5dv_devx_obj_query(d->qp, in, sizeof(in), qout, QUERY_OUT));
	CHECK(prm_get(qout, QPC, 4) == 6); /* ERR */
}

/* DRAIN_DCT: DRAINED at once, a second drain refused; requests to it then find nobody. */
static void test_drain(void)
{
	struct tgt *t = NULL;
	struct mlx5_wqe_av av;
	struct dx *d = NULL;
	uint8_t out[DCT_QUERY_OUT];
	struct mlx5dv_devx_obj *o;
	struct mlx5_err_cqe e;
	uint32_t dctn = 0;
	struct dc_op op = {.opcode = MLX5_OPCODE_RDMA_WRITE, .key = KEY, .len = 64};

	tgt_env(&t);
	dci_env(&d, &av);
	op.rkey = t->mr->rkey;
	op.raddr = (uintptr_t)t->buf;
	o = dct_create(t, &dctn);
	CHECK(o != NULL);
	th_defer(dct_destroy_cb, o);
	op.dctn = dctn;
	/* Active: a write lands. */
	memset(d->buf, 0x11, 64);
	dci_post(d, &av, &op);
	check_req(d, 0, MLX5_OPCODE_RDMA_WRITE);
	CHECK(t->buf[0] == 0x11 && t->buf[63] == 0x11);
	CHECK_OK(dct_drain(o, dctn, out));
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	CHECK_OK(dct_query(o, dctn, out));
	CHECK(prm_get(out, DCTC + 4, 4) == DCTS_DRAINED);
	CHECK(dct_drain(o, dctn, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_RES_STATE && syndrome_of(out) == SYND_DCT_STATE);
	/* Drained: nothing lands, the DCI's retries run out. */
	memset(d->buf, 0x22, 64);
	dci_post(d, &av, &op);
	dx_poll_timed(d, (struct mlx5_cqe64 *)(void *)&e);
	CHECK(mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)(void *)&e) == MLX5_CQE_REQ_ERR);
	CHECK(e.syndrome == SYND_RETRY_EXC && be16toh(e.wqe_counter) == 2);
	CHECK(t->buf[0] == 0x11);
}

/* The DCI's state commands start from the state they name, as an RC QP's. */
static void test_dci_states(void)
{
	struct dx *d = NULL;
	uint8_t out[OUT_SZ];

	dx_open(&d, SQ_BYTES);
	dci_create(d);
	CHECK(dci_modify(d, OP_INIT2RTR, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_QP_STATE && syndrome_of(out) == SYND_QP_STATE);
	CHECK_OK(dci_modify(d, OP_RST2INIT, out));
	CHECK(dci_modify(d, OP_RTR2RTS, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_QP_STATE && syndrome_of(out) == SYND_QP_STATE);
	CHECK_OK(dci_modify(d, OP_INIT2INIT, out));
	CHECK_OK(dci_modify(d, OP_INIT2RTR, out));
	CHECK_OK(dci_modify(d, OP_RTR2RTS, out));
	CHECK(status_of(out) == 0);
	CHECK_OK(dci_modify(d, OP_2RST, out));
	CHECK_OK(dci_modify(d, OP_RST2INIT, out));
}

/* One CREATE_DCT changed by one field: refused with status and syndrome, nothing made. */
static void expect_dct_refused(struct tgt *t, unsigned int off, unsigned int bits, uint64_t v, uint32_t synd)
{
	uint8_t in[DCT_IN], out[OUT_SZ];

	dct_cmd(t, in);
	prm_set(in, off, bits, v);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(t->c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == synd);
}

static void test_bad_commands(void)
{
	struct tgt *t = NULL, *other = NULL;
	uint8_t in[DCT_IN], out[DCT_QUERY_OUT], qin[0x10] = {0};
	struct mlx5dv_devx_obj *o;
	uint32_t dctn = 0;

	tgt_env(&t);
	tgt_env(&other);
	expect_dct_refused(t, DCTC + 0xa8, 24, t->srqn + 1000, SYND_DCT_SRQ);
	/* Another context's SRQ and CQ are not this one's, as the kernel checks an object's owner. */
	expect_dct_refused(t, DCTC + 0xa8, 24, other->srqn, SYND_DCT_SRQ);
	expect_dct_refused(t, DCTC + 0x48, 24, other->cqn, SYND_DCT_CQ);
	expect_dct_refused(t, DCTC + 0x48, 24, t->cqn + 1000, SYND_DCT_CQ);
	expect_dct_refused(t, DCTC + 0xc8, 24, 0xfffff, SYND_DCT_PD);
	expect_dct_refused(t, DCTC + 0x148, 8, 2, SYND_DCT_PORT);
	expect_dct_refused(t, DCTC + 0x168, 8, 200, SYND_DCT_PORT);
	/* A command shorter than the context: the kernel's EINVAL, out untouched. */
	dct_cmd(t, in);
	memset(out, 0xab, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(t->c, in, 0x40, out, OUT_SZ) == NULL);
	CHECK(errno == EINVAL && out[0] == 0xab);
	/* A DCT's own command sent to create: BAD_OP. */
	prm_set(in, 0, 16, OP_DESTROY_DCT);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(t->c, in, sizeof(in), out, OUT_SZ) == NULL);
	CHECK(errno == EREMOTEIO && status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	o = dct_create(t, &dctn);
	CHECK(o != NULL);
	/* Another DCT's number: the kernel's EINVAL; QUERY_QP to a DCT: BAD_OP. */
	CHECK(dct_query(o, dctn + 1, out) == EINVAL);
	CHECK(dct_drain(o, dctn + 1, out) == EINVAL);
	prm_set(qin, 0, 16, OP_QUERY_QP);
	prm_set(qin, 0x48, 24, dctn);
	CHECK(mlx5dv_devx_obj_query(o, qin, sizeof(qin), out, sizeof(out)) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	/* The DCT holds its CQ and SRQ: their destroy is EBUSY until it goes. */
	CHECK(ibv_destroy_srq(t->srq) == EBUSY);
	CHECK(ibv_destroy_cq(t->cq) == EBUSY);
	CHECK_OK(mlx5dv_devx_obj_destroy(o));
	CHECK_OK(ibv_destroy_srq(t->srq));
	t->srq = NULL;
}

/* A DCI on a verbs CQ (as UCX makes it): its CQE lands in that CQ's ring; the CQ is held meanwhile. */
static void test_dci_on_verbs_cq(void)
{
	struct tgt *t = NULL;
	struct dx *d = NULL;
	uint8_t in[QP_IN], out[OUT_SZ];

	tgt_env(&t);
	dx_open(&d, SQ_BYTES);
	dci_cmd(d, in, t->cqn);
	prm_set(in, QPC + 0x28, 24, d->pdn);
	/* A CQ of another context is not this one's: refused. */
	memset(out, 0, sizeof(out));
	CHECK(mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO && status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_QP_CQ);
	{
		struct ibv_cq *cq = ibv_create_cq(d->c, 16, NULL, NULL, 0);
		struct mlx5dv_cq dcq;
		struct mlx5dv_obj ob = {.cq = {.in = cq, .out = &dcq}};

		CHECK(cq != NULL);
		CHECK_OK(mlx5dv_init_obj(&ob, MLX5DV_OBJ_CQ));
		dci_cmd(d, in, dcq.cqn);
		d->qp = mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out));
		CHECK(d->qp != NULL);
		CHECK(ibv_destroy_cq(cq) == EBUSY);
		CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
		d->qp = NULL;
		CHECK_OK(ibv_destroy_cq(cq));
	}
}

/* A DCT on a DevX CQ: a SEND's receive CQE lands in that CQ's ring (with the DCI's own CQE), the bytes in the SRQ's buffer. */
static void test_dct_on_devx_cq(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct mlx5_wqe_av av;
	struct dx *d = NULL;
	struct mlx5dv_srq dsrq = {.comp_mask = MLX5DV_SRQ_MASK_SRQN};
	struct mlx5dv_obj ob = {.srq = {.out = &dsrq}};
	struct tgt t = {0};
	struct mlx5_cqe64 c[2];
	struct mlx5dv_devx_obj *o;
	uint32_t dctn = 0;
	int req = 0, resp = 0;

	dci_env(&d, &av);
	/* The DCT side in the DCI's context: the SRQ and buffer there, the DevX CQ the DCI reports to. */
	t.c = d->c;
	t.pd = d->pd;
	t.pdn = d->pdn;
	t.cqn = d->cqn;
	t.srq = ibv_create_srq(d->pd, &sa);
	CHECK(t.srq != NULL);
	th_defer(vq_destroy_srq_cb, t.srq);
	ob.srq.in = t.srq;
	CHECK_OK(mlx5dv_init_obj(&ob, MLX5DV_OBJ_SRQ));
	t.srqn = dsrq.srqn;
	t.mr = ibv_reg_mr(d->pd, t.buf, sizeof(t.buf), VQ_ACCESS_ALL);
	CHECK(t.mr != NULL);
	th_defer(vf_dereg_cb, t.mr);
	CHECK_OK(tgt_recv(&t, 0, 2048, 5));
	o = dct_create(&t, &dctn);
	CHECK(o != NULL);
	th_defer(dct_destroy_cb, o);
	fill(d->buf, LEN, 0x77);
	dci_post(d, &av, &(struct dc_op){.opcode = MLX5_OPCODE_SEND, .dctn = dctn, .key = KEY, .len = LEN});
	dx_poll_timed(d, &c[0]);
	dx_poll_timed(d, &c[1]);
	for (int i = 0; i < 2; i++) {
		if (mlx5dv_get_cqe_opcode(&c[i]) == MLX5_CQE_REQ) {
			req++;
			CHECK((be32toh(c[i].sop_drop_qpn) & 0xffffff) == d->qpn);
		} else {
			resp++;
			CHECK(mlx5dv_get_cqe_opcode(&c[i]) == MLX5_CQE_RESP_SEND);
			CHECK((be32toh(c[i].sop_drop_qpn) & 0xffffff) == dctn);
			CHECK(be32toh(c[i].byte_cnt) == LEN && be16toh(c[i].wqe_counter) == 0);
		}
	}
	CHECK(req == 1 && resp == 1);
	CHECK(memcmp(t.buf, d->buf, LEN) == 0);
}

/*
 * Closing the context with a DevX DCT left destroys it, as the kernel
 * destroys a closed file's objects: its number reaches nobody, and the
 * handles (the DCT's, the verbs CQ and SRQ it held) are freed by their
 * destroy calls after.
 */
static void test_close_with_dct(void)
{
	struct mlx5_wqe_av av;
	struct dx *d = NULL;
	struct tgt *t = calloc(1, sizeof(*t));
	struct mlx5dv_devx_obj *o;
	struct mlx5_err_cqe e;
	uint32_t dctn = 0;

	CHECK(t != NULL);
	th_defer(free, t);
	CHECK_OK(tgt_open(t));
	o = dct_create(t, &dctn);
	CHECK(o != NULL);
	CHECK_OK(ibv_close_device(t->c));
	dci_env(&d, &av);
	dci_post(d, &av, &(struct dc_op){.opcode = MLX5_OPCODE_SEND, .dctn = dctn, .key = KEY, .len = 8});
	dx_poll_timed(d, (struct mlx5_cqe64 *)(void *)&e);
	CHECK(mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)(void *)&e) == MLX5_CQE_REQ_ERR);
	CHECK(e.syndrome == SYND_RETRY_EXC);
	CHECK_OK(mlx5dv_devx_obj_destroy(o));
	CHECK_OK(ibv_dereg_mr(t->mr));
	CHECK_OK(ibv_destroy_srq(t->srq));
	CHECK_OK(ibv_destroy_cq(t->cq));
	CHECK_OK(ibv_dealloc_pd(t->pd));
}

int main(void)
{
	RUN(test_dci_to_dcts_other_process);
	RUN(test_query);
	RUN(test_wrong_key);
	RUN(test_drain);
	RUN(test_dci_states);
	RUN(test_bad_commands);
	RUN(test_dci_on_verbs_cq);
	RUN(test_dct_on_devx_cq);
	RUN(test_close_with_dct);
	return th_summary("test_verbs_devx_dct");
}
