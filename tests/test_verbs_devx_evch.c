/*
 * test_verbs_devx_evch — DevX event channels as rdma-core v44's
 * mlx5dv_devx_create_event_channel(3), mlx5dv_devx_subscribe_devx_event(3)
 * and mlx5dv_devx_get_event(3) describe them: a DevX CQ's completion event
 * (type 0, MLX5_EVENT_TYPE_COMP) subscribed with a cookie, the CQ armed as
 * on the card (arm word into its doorbell record, then the UAR's CQ
 * doorbell), one event per firing read back with the cookie and the EQE,
 * the channel fd readable exactly while an event waits, EAGAIN when empty
 * and non-blocking, ENOSPC for a buffer the event does not fit, EINVAL for
 * an event number the object does not raise, and an eventfd signalled by
 * mlx5dv_devx_subscribe_devx_event_fd.
 *
 * The DevX CQ and QP helpers follow test_verbs_devx_qp.c.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

/* PRM opcodes and statuses. */
#define OP_CREATE_CQ 0x400
#define OP_CREATE_QP 0x500
#define OP_RST2INIT 0x502
#define OP_INIT2RTR 0x503
#define OP_RTR2RTS 0x504
#define OP_2RST 0x508
#define OP_QUERY_QP 0x50b
#define ST_BAD_OP 0x2
#define ST_BAD_PARAM 0x3
#define ST_BAD_QP_STATE 0x10
/* softdpu's syndromes (docs/STATUS.md, mlx5dv_devx_obj_create). */
#define SYND_BAD_OP 0x5d0c0001u
#define SYND_UMEM_SHORT 0x5d0c0023u
#define SYND_QP_TYPE 0x5d0c0031u
#define SYND_QP_CQ 0x5d0c0033u
#define SYND_QP_STATE 0x5d0c0036u

/* Command sizes (mlx5_ifc.h). */
#define CQ_IN 0x110
#define QP_IN 0x110
#define OUT_SZ 0x10
#define QUERY_OUT 0x110
/* Where the contexts sit in their commands, in bits. */
#define CQC 0x80
#define QPC 0xc0
#define ADS (QPC + 0xc0) /* qpc.primary_address_path */

#define LOG_CQ 6	/* 64 CQEs */
#define LOG_RQ 4	/* 16 receive WQEs of 16 bytes */
#define LOG_SQ 6	/* 64 basic blocks */
#define RQ_BYTES (16u << LOG_RQ)
#define SQ_BYTES (64u << LOG_SQ)
#define MSG 1000
#define IMM 0x03020100u
#define POLL_TRIES 20000000L
#define CQ_SET_CI 0 /* the CQ record's consumer-index word */

/* MLX5_SET: a big-endian field of bits bits at bit offset off (mlx5_ifc.h numbering). */
static void prm_set(uint8_t *b, unsigned int off, unsigned int bits, uint64_t v)
{
	for (unsigned int i = 0; i < bits; i++) {
		unsigned int bit = off + bits - 1 - i;
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));

		if ((v >> i) & 1)
			b[bit / 8] |= m;
		else
			b[bit / 8] &= (uint8_t)~m;
	}
}

static uint64_t prm_get(const uint8_t *b, unsigned int off, unsigned int bits)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bits; i++)
		v = v << 1 | ((b[(off + i) / 8] >> (7 - (off + i) % 8)) & 1);
	return v;
}

static uint8_t status_of(const uint8_t *out)
{
	return out[0];
}

static uint32_t syndrome_of(const uint8_t *out)
{
	return (uint32_t)prm_get(out, 0x20, 32);
}

/* One side's DevX objects: a CQ and an RC QP over umem, the UAR, a buffer registered for the data. */
struct dx {
	struct ibv_context *c;
	struct ibv_pd *pd;
	uint32_t pdn;
	uint8_t *cq_mem, *qp_mem, *dbr;
	struct mlx5dv_devx_umem *cq_um, *qp_um, *dbr_um;
	struct mlx5dv_devx_uar *uar;
	struct mlx5dv_devx_obj *cq, *qp;
	uint32_t cqn, qpn, cq_ci, sq_pi, rq_pi;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void dx_free(void *arg)
{
	struct dx *d = arg;

	if (d->qp != NULL)
		mlx5dv_devx_obj_destroy(d->qp);
	if (d->cq != NULL)
		mlx5dv_devx_obj_destroy(d->cq);
	if (d->uar != NULL)
		mlx5dv_devx_free_uar(d->uar);
	if (d->qp_um != NULL)
		mlx5dv_devx_umem_dereg(d->qp_um);
	if (d->cq_um != NULL)
		mlx5dv_devx_umem_dereg(d->cq_um);
	if (d->dbr_um != NULL)
		mlx5dv_devx_umem_dereg(d->dbr_um);
	if (d->mr != NULL)
		ibv_dereg_mr(d->mr);
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	if (d->c != NULL)
		ibv_close_device(d->c);
	free(d->cq_mem);
	free(d->qp_mem);
	free(d->dbr);
	free(d->buf);
	free(d);
}

static struct ibv_context *open_devx(void)
{
	struct mlx5dv_context_attr a = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? mlx5dv_open_device(l[0], &a) : NULL;

	if (l != NULL)
		ibv_free_device_list(l);
	return c;
}

/* The context, PD, UAR, umems (qp_len bytes for the rings) and data buffer; freed when the case ends. */
static void dx_open(struct dx **dp, size_t qp_len)
{
	struct dx *d = calloc(1, sizeof(*d));
	struct mlx5dv_obj o;
	struct mlx5dv_pd dpd;

	CHECK(d != NULL);
	th_defer(dx_free, d);
	d->c = open_devx();
	CHECK(d->c != NULL);
	d->pd = ibv_alloc_pd(d->c);
	CHECK(d->pd != NULL);
	o.pd.in = d->pd;
	o.pd.out = &dpd;
	CHECK_OK(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD));
	d->pdn = dpd.pdn;
	CHECK(posix_memalign((void **)&d->cq_mem, 4096, 4096) == 0);
	CHECK(posix_memalign((void **)&d->qp_mem, 4096, qp_len) == 0); /* any length: not aligned_alloc's multiple */
	CHECK(posix_memalign((void **)&d->dbr, 64, 64) == 0);
	CHECK(posix_memalign((void **)&d->buf, 64, 4096) == 0);
	memset(d->dbr, 0, 64);
	memset(d->qp_mem, 0, qp_len);
	/* The CQEs start invalid and owned by software's first pass, as a driver initialises them. */
	for (unsigned int i = 0; i < (1u << LOG_CQ); i++)
		((struct mlx5_cqe64 *)(void *)d->cq_mem)[i].op_own = MLX5_CQE_INVALID << 4 | 1;
	d->cq_um = mlx5dv_devx_umem_reg(d->c, d->cq_mem, 4096, IBV_ACCESS_LOCAL_WRITE);
	d->qp_um = mlx5dv_devx_umem_reg(d->c, d->qp_mem, qp_len, IBV_ACCESS_LOCAL_WRITE);
	d->dbr_um = mlx5dv_devx_umem_reg(d->c, d->dbr, 64, IBV_ACCESS_LOCAL_WRITE);
	d->uar = mlx5dv_devx_alloc_uar(d->c, MLX5DV_UAR_ALLOC_TYPE_NC);
	CHECK(d->cq_um != NULL && d->qp_um != NULL && d->dbr_um != NULL && d->uar != NULL);
	d->mr = ibv_reg_mr(d->pd, d->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(d->mr != NULL);
	*dp = d;
}

/* CREATE_CQ of 2^LOG_CQ 64-byte CQEs in cq_mem, its record at dbr + 0. */
static void cq_cmd(struct dx *d, uint8_t *in, uint32_t eqn)
{
	memset(in, 0, CQ_IN);
	prm_set(in, 0, 16, OP_CREATE_CQ);
	prm_set(in, CQC + 6, 1, 1);		/* dbr_umem_valid */
	prm_set(in, CQC + 0x20, 32, d->dbr_um->umem_id);
	prm_set(in, CQC + 0x63, 5, LOG_CQ);
	prm_set(in, CQC + 0x68, 24, d->uar->page_id);
	prm_set(in, CQC + 0xb8, 8, eqn);		/* c_eqn */
	prm_set(in, CQC + 0x1c0, 64, 0);	/* dbr_addr: the record's offset in its umem */
	prm_set(in, 0x280, 64, 0);		/* cq_umem_offset */
	prm_set(in, 0x2c0, 32, d->cq_um->umem_id);
	prm_set(in, 0x2e0, 1, 1);		/* cq_umem_valid */
}

/* CREATE_QP: RC, RQ of 2^LOG_RQ 16-byte WQEs at qp_mem, the SQ after it, the record at dbr + 8. */
static void qp_cmd(struct dx *d, uint8_t *in, uint32_t cqn)
{
	memset(in, 0, QP_IN);
	prm_set(in, 0, 16, OP_CREATE_QP);
	prm_set(in, QPC + 0x8, 8, 0);		/* st: RC */
	prm_set(in, QPC + 0x13, 2, 3);		/* pm_state: migrated */
	prm_set(in, QPC + 0x28, 24, d->pdn);
	prm_set(in, QPC + 0x49, 4, LOG_RQ);
	prm_set(in, QPC + 0x4d, 3, 0);		/* log_rq_stride: 16 << 0 bytes */
	prm_set(in, QPC + 0x51, 4, LOG_SQ);
	prm_set(in, QPC + 0x68, 24, d->uar->page_id);
	prm_set(in, QPC + 0x3e8, 24, cqn);	/* cqn_snd */
	prm_set(in, QPC + 0x4e8, 24, cqn);	/* cqn_rcv */
	prm_set(in, QPC + 0x500, 64, 8);	/* dbr_addr */
	prm_set(in, QPC + 0x683, 1, 1);		/* dbr_umem_valid */
	prm_set(in, QPC + 0x720, 32, d->dbr_um->umem_id);
	prm_set(in, 0x800, 64, 0);		/* wq_umem_offset */
	prm_set(in, 0x840, 32, d->qp_um->umem_id);
	prm_set(in, 0x860, 1, 1);		/* wq_umem_valid */
}

static void dx_create(struct dx *d)
{
	uint8_t in[QP_IN], out[OUT_SZ];
	uint32_t eqn = 99;

	CHECK_OK(mlx5dv_devx_query_eqn(d->c, 0, &eqn));
	CHECK(eqn != 99);
	cq_cmd(d, in, eqn);
	memset(out, 0xff, sizeof(out));
	d->cq = mlx5dv_devx_obj_create(d->c, in, CQ_IN, out, sizeof(out));
	CHECK(d->cq != NULL);
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	d->cqn = (uint32_t)prm_get(out, 0x48, 24);
	qp_cmd(d, in, d->cqn);
	memset(out, 0xff, sizeof(out));
	d->qp = mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out));
	CHECK(d->qp != NULL);
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	d->qpn = (uint32_t)prm_get(out, 0x48, 24);
	CHECK(d->qpn != 0);
}

/* A state command; its status in out, the call's errno value returned. */
static int dx_modify(struct dx *d, uint16_t op, uint32_t dest, uint8_t *out)
{
	uint8_t in[QP_IN] = {0};
	union ibv_gid g;

	prm_set(in, 0, 16, op);
	prm_set(in, 0x48, 24, d->qpn);
	prm_set(in, ADS + 0x128, 8, 1); /* vhca_port_num */
	if (op == OP_RST2INIT) {
		prm_set(in, QPC + 0x490, 1, 1); /* rre */
		prm_set(in, QPC + 0x491, 1, 1); /* rwe */
	}
	if (op == OP_INIT2RTR) {
		prm_set(in, QPC + 0x0, 3, 3);	  /* mtu 1024 */
		prm_set(in, QPC + 0x3, 5, 20);	  /* log_msg_max */
		prm_set(in, QPC + 0xa8, 24, dest); /* remote_qpn */
		prm_set(in, QPC + 0x4a3, 5, 12);  /* min_rnr_nak */
		/* A RoCE port routes by GID: the destination is this machine's port, GID 0. */
		if (ibv_query_gid(d->c, 1, 0, &g) != 0)
			return ENODEV;
		memcpy(in + (ADS + 0x80) / 8, g.raw, 16);
		prm_set(in, ADS + 0x28, 1, 1);	  /* grh */
		prm_set(in, ADS + 0x58, 8, 64);	  /* hop_limit */
	}
	if (op == OP_RTR2RTS) {
		prm_set(in, QPC + 0x38d, 3, 7); /* retry_count */
		prm_set(in, QPC + 0x390, 3, 7); /* rnr_retry: forever */
		prm_set(in, ADS + 0x40, 5, 14);	/* ack_timeout */
	}
	memset(out, 0xff, OUT_SZ);
	return mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, OUT_SZ);
}

static void dx_up(struct dx *d, uint32_t dest)
{
	uint8_t out[OUT_SZ];

	CHECK_OK(dx_modify(d, OP_RST2INIT, 0, out));
	CHECK(status_of(out) == 0);
	CHECK_OK(dx_modify(d, OP_INIT2RTR, dest, out));
	CHECK(status_of(out) == 0);
	CHECK_OK(dx_modify(d, OP_RTR2RTS, 0, out));
	CHECK(status_of(out) == 0);
}

/* One SEND with immediate of len bytes of buf, signalled, then the record and the UAR. */
static void dx_send_imm(struct dx *d, uint32_t len, uint32_t imm)
{
	uint8_t *wqe = d->qp_mem + RQ_BYTES + (d->sq_pi % (1u << LOG_SQ)) * 64;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_data_seg *data = (void *)(wqe + sizeof(*ctrl));
	uint64_t bell;

	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)d->sq_pi, MLX5_OPCODE_SEND_IMM, 0, d->qpn, MLX5_WQE_CTRL_CQ_UPDATE, 2, 0,
			    htobe32(imm));
	mlx5dv_set_data_seg(data, len, d->mr->lkey, (uintptr_t)d->buf);
	d->sq_pi++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	((volatile uint32_t *)(void *)(d->dbr + 8))[MLX5_SND_DBR] = htobe32(d->sq_pi & 0xffff);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&bell, ctrl, sizeof(bell));
	*(volatile uint64_t *)d->uar->reg_addr = bell;
}

/* The next CQE by its owner bit (bounded), consumed in the record. */
static void dx_poll(struct dx *d, struct mlx5_cqe64 *out)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(void *)d->cq_mem + (d->cq_ci % (1u << LOG_CQ));
	uint8_t owner = (d->cq_ci >> LOG_CQ) & 1;
	long i;

	for (i = 0; i < POLL_TRIES; i++) {
		uint8_t op = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		if ((op >> 4) != MLX5_CQE_INVALID && (op & 1) == owner)
			break;
		if (i % 1024 == 1023)
			sched_yield();
	}
	CHECK(i < POLL_TRIES);
	*out = *cqe;
	d->cq_ci++;
	((volatile uint32_t *)(void *)d->dbr)[CQ_SET_CI] = htobe32(d->cq_ci & 0xffffff);
}

/* An ibv RC QP of c on its own CQ, its receive of the whole of buf posted. */
struct peer {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[4096];
};

static int peer_open(struct peer *p, struct ibv_context *c)
{
	struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 8, .max_recv_wr = 8,
								    .max_send_sge = 1, .max_recv_sge = 1}};

	p->pd = ibv_alloc_pd(c);
	p->cq = p->pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	if (p->cq == NULL)
		return ENOMEM;
	a.send_cq = a.recv_cq = p->cq;
	p->qp = ibv_create_qp(p->pd, &a);
	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE);
	return p->qp != NULL && p->mr != NULL ? 0 : ENOMEM;
}

static int peer_recv(struct peer *p)
{
	struct ibv_sge s = {.addr = (uintptr_t)p->buf, .length = sizeof(p->buf), .lkey = p->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &s, .num_sge = 1}, *bad;

	return ibv_post_recv(p->qp, &wr, &bad);
}

static void peer_close(void *arg)
{
	struct peer *p = arg;

	if (p->qp != NULL)
		ibv_destroy_qp(p->qp);
	if (p->mr != NULL)
		ibv_dereg_mr(p->mr);
	if (p->cq != NULL)
		ibv_destroy_cq(p->cq);
	if (p->pd != NULL)
		ibv_dealloc_pd(p->pd);
	free(p);
}

static void fill(uint8_t *b, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* The DevX QP's side of a SEND with immediate: its send CQE, as the PRM lays it out. */
static void check_req_cqe(struct dx *d, uint16_t wqe_counter)
{
	struct mlx5_cqe64 c = {0};

	dx_poll(d, &c);

	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ);
	CHECK(be16toh(c.wqe_counter) == wqe_counter);
	CHECK((be32toh(c.sop_drop_qpn) & 0xffffff) == d->qpn);
	CHECK(be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_SEND_IMM);
}

#define EV_COMP 0x00		/* MLX5_EVENT_TYPE_COMP */
#define EV_PATH_MIG 0x01	/* a QP's event, not a CQ's */
#define EQE_BYTES 64		/* struct mlx5_eqe after the cookie */
#define EQE_CQN 0x38		/* data.comp.cqn */
#define UAR_CQ_DB 0x20		/* MLX5_CQ_DOORBELL in a UAR page */
#define COOKIE 0x1234abcd5678ef01ull
#define WAIT_MS 20000		/* hang guard */

/* The arm as mlx5 writes it: the word (sn, NEXT, ci) into the record, then with the cqn into the UAR. */
static void dx_arm(struct dx *d, uint32_t sn)
{
	uint32_t word = (sn & 3) << 28 | (d->cq_ci & 0xffffff);

	__atomic_store_n(&((uint32_t *)(void *)d->dbr)[1], htobe32(word), __ATOMIC_RELEASE);
	*(volatile uint64_t *)(void *)((uint8_t *)d->uar->base_addr + UAR_CQ_DB) =
		htobe64((uint64_t)word << 32 | d->cqn);
}

static int readable(int fd, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	return poll(&pf, 1, ms) == 1 && (pf.revents & POLLIN);
}

static void ch_free(void *arg)
{
	mlx5dv_devx_destroy_event_channel(arg);
}

static struct mlx5dv_devx_event_channel *ch_open(struct dx *d, int flags)
{
	struct mlx5dv_devx_event_channel *ch = mlx5dv_devx_create_event_channel(d->c, flags);

	if (ch == NULL)
		return NULL;
	th_defer(ch_free, ch);
	if (ch->fd < 0 || fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) != 0)
		return NULL;
	return ch;
}

/* A DevX QP in RTS against an ibv QP of this process, each with a receive posted on the peer. */
static void dx_pair(struct dx **dp, struct peer **pp)
{
	struct peer *p = calloc(1, sizeof(*p));

	CHECK(p != NULL);
	th_defer(peer_close, p);
	*pp = p;
	dx_open(dp, RQ_BYTES + SQ_BYTES);
	CHECK_OK(peer_open(p, (*dp)->c));
	dx_create(*dp);
	dx_up(*dp, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, (*dp)->qpn, 12, 7));
}

/* One SEND from the DevX QP, its CQE polled from the DevX CQ and the peer's. */
static void dx_one_send(struct dx *d, struct peer *p, uint16_t n)
{
	struct ibv_wc wc;

	fill(d->buf, MSG, (uint8_t)n);
	CHECK_OK(peer_recv(p));
	dx_send_imm(d, MSG, IMM + n);
	check_req_cqe(d, n);
	CHECK(vq_poll1(p->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && memcmp(p->buf, d->buf, MSG) == 0);
}

static void test_create_destroy(void)
{
	struct dx *d = NULL;
	struct mlx5dv_devx_event_channel *ch;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	ch = mlx5dv_devx_create_event_channel(d->c, 0);
	CHECK(ch != NULL && ch->fd >= 0);
	CHECK(!readable(ch->fd, 0));
	mlx5dv_devx_destroy_event_channel(ch);
	ch = mlx5dv_devx_create_event_channel(d->c, MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA);
	CHECK(ch != NULL && ch->fd >= 0);
	mlx5dv_devx_destroy_event_channel(ch);
	errno = 0;
	CHECK(mlx5dv_devx_create_event_channel(NULL, 0) == NULL);
	CHECK(errno == EINVAL);
}

/* Armed, a CQE fires one event: the cookie and the EQE naming the CQ; none without the arm. */
static void test_comp_event(void)
{
	uint8_t buf[sizeof(struct mlx5dv_devx_async_event_hdr) + EQE_BYTES];
	struct mlx5dv_devx_async_event_hdr *ev = (void *)buf;
	struct mlx5dv_devx_event_channel *ch;
	uint16_t comp = EV_COMP;
	struct dx *d = NULL;
	struct peer *p = NULL;

	dx_pair(&d, &p);
	ch = ch_open(d, 0);
	CHECK(ch != NULL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, COOKIE));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
	dx_arm(d, 0);
	dx_one_send(d, p, 0);
	CHECK(readable(ch->fd, WAIT_MS));
	/* Too small for cookie and EQE: ENOSPC, the event stays. */
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(ev->cookie)) == -1);
	CHECK(errno == ENOSPC);
	memset(buf, 0xee, sizeof(buf));
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(ev->cookie == COOKIE);
	CHECK(ev->out_data[1] == EV_COMP);
	CHECK(prm_get(ev->out_data, EQE_CQN * 8 + 8, 24) == d->cqn);
	CHECK(!readable(ch->fd, 0));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
	/* Not armed again: this CQE fires nothing; the next arm (sn 1) and CQE fire exactly one. */
	dx_one_send(d, p, 1);
	dx_arm(d, 1);
	dx_one_send(d, p, 2);
	CHECK(readable(ch->fd, WAIT_MS));
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(ev->cookie == COOKIE);
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
}

/* OMIT_EV_DATA: the cookie alone. An fd subscription: the eventfd is signalled. */
static void test_omit_and_fd(void)
{
	struct mlx5dv_devx_async_event_hdr ev;
	struct mlx5dv_devx_event_channel *ch, *ch2;
	uint16_t comp = EV_COMP;
	struct dx *d = NULL;
	struct peer *p = NULL;
	uint64_t v = 0;
	int efd = eventfd(0, EFD_NONBLOCK);

	CHECK(efd >= 0);
	dx_pair(&d, &p);
	ch = ch_open(d, MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA);
	ch2 = ch_open(d, 0);
	CHECK(ch != NULL && ch2 != NULL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, 7));
	CHECK_OK(mlx5dv_devx_subscribe_devx_event_fd(ch2, efd, d->cq, EV_COMP));
	dx_arm(d, 0);
	dx_one_send(d, p, 0);
	CHECK(readable(ch->fd, WAIT_MS));
	CHECK(mlx5dv_devx_get_event(ch, &ev, sizeof(ev)) == (ssize_t)sizeof(ev));
	CHECK(ev.cookie == 7);
	CHECK(readable(efd, WAIT_MS));
	CHECK(read(efd, &v, sizeof(v)) == sizeof(v));
	CHECK(v == 1);
	/* The fd subscription queues nothing on its channel. */
	CHECK(!readable(ch2->fd, 0));
	close(efd);
}

/* What the kernel refuses with EINVAL; a CQ destroyed under a subscription leaves the channel usable. */
static void test_bad_input(void)
{
	struct mlx5dv_devx_async_event_hdr ev;
	struct mlx5dv_devx_event_channel *ch;
	uint16_t comp = EV_COMP, mig = EV_PATH_MIG;
	struct dx *d = NULL;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	ch = ch_open(d, 0);
	CHECK(ch != NULL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(mig), &mig, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->qp, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, NULL, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(NULL, d->cq, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, 0, &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event_fd(ch, -1, d->cq, EV_COMP) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event_fd(ch, 0, d->cq, EV_PATH_MIG) == EINVAL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->qp, sizeof(mig), &mig, 1));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(NULL, &ev, sizeof(ev)) == -1);
	CHECK(errno == EINVAL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, 1));
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, &ev, sizeof(ev) + EQE_BYTES) == -1);
	CHECK(errno == EAGAIN);
}

int main(void)
{
	RUN(test_create_destroy);
	RUN(test_comp_event);
	RUN(test_omit_and_fd);
	RUN(test_bad_input);
	return th_summary("test_verbs_devx_evch");
}
