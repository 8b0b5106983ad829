/*
 * DevX RMPs (mlx5dv_devx_obj_create(3), _modify, _query, _destroy) made
 * from the PRM's commands over the program's umem: CREATE_RMP with the
 * rmpc and wq layouts of mlx5_ifc.h, filled by receive WQEs (a next
 * segment, then data segments) and a doorbell record the program writes
 * itself, consumed by DevX RC QPs created with rq_type SRQ on it: SENDs from
 * an ibv_create_qp QP of this process and from a DevX QP of another process
 * land in the WQEs the device takes, in the order of the WQ type (linked
 * list: by next_wqe_index from WQE 0; cyclic: ring order). MODIFY_RMP
 * (RDY, lwm) and QUERY_RMP; refused commands answer the PRM's status in out
 * with EREMOTEIO; an RMP a QP still receives from is not destroyed (EBUSY).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#include "devx_fixture.h"
#include "kid_fixture.h"

#define OP_CREATE_RMP 0x90c
#define OP_MODIFY_RMP 0x90d
#define OP_QUERY_RMP 0x90f
#define OP_2ERR_QP 0x507
#define ST_BAD_RES_STATE 0x9
#define SYND_UMEM 0x5d0c0022u
#define SYND_QP_SRQ 0x5d0c0038u
#define SYND_RMP_TYPE 0x5d0c0081u
#define SYND_RMP_SIZE 0x5d0c0082u
#define SYND_RMP_PD 0x5d0c0083u
#define SYND_RMP_STATE 0x5d0c0084u
#define SYND_RMP_LWM 0x5d0c0085u

#define RMP_IN 0x110
#define RMPC 0x100		/* bits: the RMP context in create_rmp_in, modify_rmp_in, query_rmp_out */
#define WQ (RMPC + 0x180)	/* rmpc.wq */
#define RMP_RDY 1
#define WQ_LL 0
#define WQ_CYCLIC 1
#define LOG_RMP 4		/* 16 WQEs */
#define LOG_STRIDE 6		/* 64 bytes: the next segment and three data segments */
#define RMP_DBR 16		/* the RMP's record: dbr + 16 (the CQ's at 0, the fixture QP's at 8) */
#define QP2_DBR 24
#define SLOT 256		/* each WQE's slice of buf */
#define LEN 200

/* The ring of the RMP, its umem, the object. */
struct rmp {
	uint8_t *mem;
	struct mlx5dv_devx_umem *um;
	struct mlx5dv_devx_obj *obj;
	uint32_t rmpn;
};

static void rmp_free(void *arg)
{
	struct rmp *r = arg;

	if (r->obj != NULL)
		mlx5dv_devx_obj_destroy(r->obj);
	if (r->um != NULL)
		mlx5dv_devx_umem_dereg(r->um);
	free(r->mem);
	free(r);
}

/* CREATE_RMP of 2^LOG_RMP WQEs of 2^LOG_STRIDE bytes in r->mem, its record at dbr + RMP_DBR. */
static void rmp_cmd(struct dx *d, struct rmp *r, uint8_t *in, unsigned int type)
{
	memset(in, 0, RMP_IN);
	prm_set(in, 0, 16, OP_CREATE_RMP);
	prm_set(in, RMPC + 0x8, 4, RMP_RDY);
	prm_set(in, WQ + 0x0, 4, type);
	prm_set(in, WQ + 0x48, 24, d->pdn);
	prm_set(in, WQ + 0x80, 64, RMP_DBR);	/* dbr_addr: the record's offset in its umem */
	prm_set(in, WQ + 0x10c, 4, LOG_STRIDE);
	prm_set(in, WQ + 0x113, 5, 0);		/* log_wq_pg_sz: 4 KiB */
	prm_set(in, WQ + 0x11b, 5, LOG_RMP);
	prm_set(in, WQ + 0x140, 32, d->dbr_um->umem_id);
	prm_set(in, WQ + 0x160, 32, r->um->umem_id);
}

/* *err: 0 or the create's errno. */
static void rmp_create(struct dx *d, struct rmp **rp, unsigned int type, uint8_t *out, int *err)
{
	struct rmp *r = calloc(1, sizeof(*r));
	uint8_t in[RMP_IN];

	CHECK(r != NULL);
	th_defer(rmp_free, r);
	CHECK(posix_memalign((void **)&r->mem, 4096, 4096) == 0);
	memset(r->mem, 0, 4096);
	r->um = mlx5dv_devx_umem_reg(d->c, r->mem, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(r->um != NULL);
	*rp = r;
	rmp_cmd(d, r, in, type);
	memset(out, 0xff, OUT_SZ);
	r->obj = mlx5dv_devx_obj_create(d->c, in, RMP_IN, out, OUT_SZ);
	*err = r->obj == NULL ? errno : 0;
	if (r->obj != NULL)
		r->rmpn = (uint32_t)prm_get(out, 0x48, 24);
}

/* WQE i of the RMP: one data segment of SLOT bytes at buf + i * SLOT, linked to next. */
static void rmp_wqe(struct dx *d, struct rmp *r, unsigned int i, uint16_t next)
{
	struct mlx5_wqe_srq_next_seg *n = (void *)(r->mem + (i << LOG_STRIDE));
	struct mlx5_wqe_data_seg *s = (void *)(n + 1);

	memset(n, 0, 1u << LOG_STRIDE);
	n->next_wqe_index = htobe16(next);
	mlx5dv_set_data_seg(s, SLOT, d->mr->lkey, (uintptr_t)d->buf + i * SLOT);
	mlx5dv_set_data_seg(s + 1, 0, MLX5_INVALID_LKEY, 0); /* ends the list */
}

/* The producer counter to the RMP's record, as a driver posts. */
static void rmp_post(struct dx *d, uint32_t pi)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	((volatile uint32_t *)(void *)(d->dbr + RMP_DBR))[0] = htobe32(pi & 0xffff);
}

/* CREATE_QP: RC on the RMP (rq_type SRQ, no receive ring), its SQ at sq_off in qp_mem, record at dbr + dbr_off. */
static void qp_rmp_cmd(struct dx *d, uint8_t *in, uint32_t rmpn, uint64_t sq_off, uint64_t dbr_off)
{
	qp_cmd(d, in, d->cqn);
	prm_set(in, QPC + 0x49, 4, 0);		/* log_rq_size */
	prm_set(in, QPC + 0x565, 3, 1);		/* rq_type: SRQ */
	prm_set(in, QPC + 0x568, 24, rmpn);	/* srqn_rmpn_xrqn */
	prm_set(in, QPC + 0x500, 64, dbr_off);
	prm_set(in, 0x800, 64, sq_off);		/* wq_umem_offset */
	prm_set(in, 0x860, 1, 0);		/* wq_umem_valid: the kernel's to set */
	prm_set(in, QPC + 0x683, 1, 0);		/* dbr_umem_valid: the same */
}

static struct mlx5dv_devx_obj *qp_rmp_create(struct dx *d, uint32_t rmpn, uint64_t sq_off, uint64_t dbr_off,
					      uint32_t *qpn, uint8_t *out)
{
	uint8_t in[QP_IN];
	struct mlx5dv_devx_obj *o;

	qp_rmp_cmd(d, in, rmpn, sq_off, dbr_off);
	memset(out, 0xff, OUT_SZ);
	o = mlx5dv_devx_obj_create(d->c, in, QP_IN, out, OUT_SZ);
	if (o != NULL)
		*qpn = (uint32_t)prm_get(out, 0x48, 24);
	return o;
}

/* The fixture's CQ alone (its QP is not made). */
static void cq_create(struct dx *d)
{
	uint8_t in[CQ_IN], out[OUT_SZ];
	uint32_t eqn = 0;

	CHECK_OK(mlx5dv_devx_query_eqn(d->c, 0, &eqn));
	cq_cmd(d, in, eqn);
	d->cq = mlx5dv_devx_obj_create(d->c, in, CQ_IN, out, sizeof(out));
	CHECK(d->cq != NULL);
	d->cqn = (uint32_t)prm_get(out, 0x48, 24);
}

/* A state command to the QP o of number qpn (the fixture's dx_modify on another QP). */
static void qp_up(struct dx *d, struct mlx5dv_devx_obj *o, uint32_t qpn, uint32_t dest)
{
	struct mlx5dv_devx_obj *keep_o = d->qp;
	uint32_t keep_n = d->qpn;

	d->qp = o;
	d->qpn = qpn;
	dx_up(d, dest);
	d->qp = keep_o;
	d->qpn = keep_n;
}

/* A receive through the RMP: the CQE names the QP, the WQE taken, the length and immediate; the bytes in its slot. */
static void check_recv(struct dx *d, uint32_t qpn, uint16_t wqe, uint32_t imm, uint8_t seed)
{
	struct mlx5_cqe64 c;

	dx_poll(d, &c);
	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_RESP_SEND_IMM);
	CHECK(be32toh(c.byte_cnt) == LEN);
	CHECK(be32toh(c.imm_inval_pkey) == imm);
	CHECK(be16toh(c.wqe_counter) == wqe);
	CHECK((be32toh(c.sop_drop_qpn) & 0xffffff) == qpn);
	for (uint32_t i = 0; i < LEN; i++)
		CHECK(d->buf[wqe * SLOT + i] == (uint8_t)(seed + i * 7));
	CHECK(d->buf[wqe * SLOT + LEN] == 0); /* nothing past the message */
}

/* An ibv RC QP of c on its own CQ, released when the case ends. */
static void peer_open(struct ibv_context *c, struct dx_peer **pp)
{
	struct dx_peer *p = calloc(1, sizeof(*p));

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	*pp = p;
	CHECK_OK(dx_peer_open(p, c));
}

/* One signalled SEND with immediate of LEN bytes (seeded), and its completion. */
static void peer_send(struct dx_peer *p, uint32_t imm, uint8_t seed)
{
	struct ibv_sge s = {.addr = (uintptr_t)p->buf, .length = LEN, .lkey = p->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(imm)},
			   *bad;
	struct ibv_wc wc;

	dx_fill(p->buf, LEN, seed);
	CHECK_OK(ibv_post_send(p->qp, &wr, &bad));
	CHECK(vq_poll1(p->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
}

/* A DevX QP's SEND with immediate of LEN bytes of buf (seeded), written, recorded and rung by hand. */
static void dx_send(struct dx *d, uint32_t imm, uint8_t seed)
{
	dx_fill(d->buf, LEN, seed);
	dx_send_imm(d, LEN, imm);
}

/* The other process: a DevX QP with its own RQ (the fixture's); sends two SENDs to the QP it is told. */
static int kid_in = -1, kid_out = -1;

static void sender_case(void)
{
	struct dx *d = NULL;
	struct mlx5_cqe64 c;
	uint32_t dest;
	char go;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	CHECK(write(kid_out, &d->qpn, sizeof(d->qpn)) == sizeof(d->qpn));
	CHECK(read(kid_in, &dest, sizeof(dest)) == sizeof(dest));
	dx_up(d, dest);
	CHECK(write(kid_out, "r", 1) == 1);
	for (uint32_t i = 0; i < 2; i++) {
		CHECK(read(kid_in, &go, 1) == 1 && go == 's');
		dx_send(d, IMM + 0x100 + i, (uint8_t)(0x60 + i));
		dx_poll(d, &c);
		CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ);
		CHECK(write(kid_out, "d", 1) == 1);
	}
}

/* The sender process, started; its QP's number in *qpn. */
static void sender_start(int *to, int *from, uint32_t *qpn)
{
	int a[2], b[2];

	kid_fork(a, b);
	if (kid == 0) {
		kid_in = a[0];
		kid_out = b[1];
		kid_case("sender", sender_case);
	}
	*to = a[1];
	*from = b[0];
	CHECK(read(*from, qpn, sizeof(*qpn)) == sizeof(*qpn));
}

/*
 * A linked-list RMP whose program linked its WQEs out of ring order (0 -> 5
 * -> 2 -> 9 -> 1): two DevX QPs receive from it, one connected to an ibv QP
 * of this process, one to a DevX QP of another process. Their SENDs, in
 * turn, take the WQEs in the list's order whichever QP they arrive on.
 */
static void test_linked_list_two_senders(void)
{
	static const uint16_t order[] = {0, 5, 2, 9, 1};
	struct dx *d = NULL;
	struct rmp *r = NULL;
	struct mlx5dv_devx_obj *q1, *q2;
	uint32_t n1 = 0, n2 = 0, kqpn;
	uint8_t out[OUT_SZ];
	struct dx_peer *p;
	int to = -1, from = -1, err;
	char ok;

	dx_open(&d, 2 * SQ_BYTES);
	memset(d->buf, 0, 4096);
	cq_create(d);
	rmp_create(d, &r, WQ_LL, out, &err);
	CHECK(err == 0);
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0 && r->rmpn != 0);
	for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		rmp_wqe(d, r, order[i], i + 1 < sizeof(order) / sizeof(order[0]) ? order[i + 1] : 3);
	rmp_post(d, 4); /* four of the five linked: the fifth stays the list's tail */
	q1 = qp_rmp_create(d, r->rmpn, 0, 8, &n1, out);
	CHECK(q1 != NULL && status_of(out) == 0);
	q2 = qp_rmp_create(d, r->rmpn, SQ_BYTES, QP2_DBR, &n2, out);
	CHECK(q2 != NULL && status_of(out) == 0);
	peer_open(d->c, &p);
	qp_up(d, q1, n1, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, n1, 12, 7));
	sender_start(&to, &from, &kqpn);
	qp_up(d, q2, n2, kqpn);
	CHECK(write(to, &n2, sizeof(n2)) == sizeof(n2));
	CHECK(read(from, &ok, 1) == 1 && ok == 'r');

	peer_send(p, IMM, 0x11);
	check_recv(d, n1, 0, IMM, 0x11);
	CHECK(write(to, "s", 1) == 1);
	CHECK(read(from, &ok, 1) == 1 && ok == 'd');
	check_recv(d, n2, 5, IMM + 0x100, 0x60);
	peer_send(p, IMM + 1, 0x12);
	check_recv(d, n1, 2, IMM + 1, 0x12);
	CHECK(write(to, "s", 1) == 1);
	CHECK(read(from, &ok, 1) == 1 && ok == 'd');
	check_recv(d, n2, 9, IMM + 0x101, 0x61);

	kid_wait_ok();
	CHECK_OK(mlx5dv_devx_obj_destroy(q2));
	CHECK_OK(mlx5dv_devx_obj_destroy(q1));
}

/*
 * A cyclic RMP takes its WQEs in ring order whatever next_wqe_index says
 * (here every WQE links to 7), around the ring's end; QUERY_RMP's counters
 * follow: sw_counter the record, hw_counter the WQEs taken.
 */
static void test_cyclic_ring_order(void)
{
	int err;
	struct dx *d = NULL;
	struct rmp *r = NULL;
	struct mlx5dv_devx_obj *q;
	uint8_t out[OUT_SZ], qin[0x10] = {0}, qout[RMP_IN];
	uint32_t n = 0, pi = 0;
	struct dx_peer *p;

	dx_open(&d, SQ_BYTES);
	cq_create(d);
	rmp_create(d, &r, WQ_CYCLIC, out, &err);
	CHECK(err == 0);
	for (unsigned int i = 0; i < (1u << LOG_RMP); i++)
		rmp_wqe(d, r, i, 7);
	pi = 12;
	rmp_post(d, pi);
	q = qp_rmp_create(d, r->rmpn, 0, 8, &n, out);
	CHECK(q != NULL);
	peer_open(d->c, &p);
	qp_up(d, q, n, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, n, 12, 7));
	for (uint32_t m = 0; m < 20; m++) {
		if (m == 10) { /* the program reposts the WQEs consumed, as a cyclic driver does */
			pi += 10;
			rmp_post(d, pi);
		}
		memset(d->buf + (m % 16) * SLOT, 0, SLOT);
		peer_send(p, IMM + m, (uint8_t)(0x30 + m));
		check_recv(d, n, (uint16_t)(m % 16), IMM + m, (uint8_t)(0x30 + m));
	}
	prm_set(qin, 0, 16, OP_QUERY_RMP);
	prm_set(qin, 0x48, 24, r->rmpn);
	memset(qout, 0xff, sizeof(qout));
	CHECK_OK(mlx5dv_devx_obj_query(r->obj, qin, sizeof(qin), qout, sizeof(qout)));
	CHECK(status_of(qout) == 0);
	CHECK(prm_get(qout, RMPC + 0x8, 4) == RMP_RDY);
	CHECK(prm_get(qout, WQ, 4) == WQ_CYCLIC);
	CHECK(prm_get(qout, WQ + 0x11b, 5) == LOG_RMP && prm_get(qout, WQ + 0x10c, 4) == LOG_STRIDE);
	CHECK(prm_get(qout, WQ + 0x48, 24) == d->pdn);
	CHECK(prm_get(qout, WQ + 0xe0, 32) == 22); /* sw_counter */
	CHECK(prm_get(qout, WQ + 0xc0, 32) == 20); /* hw_counter */
	CHECK_OK(mlx5dv_devx_obj_destroy(q));
}

/* MODIFY_RMP RDY to RDY setting the limit lwm. */
static void rmp_set_lwm(struct rmp *r, uint16_t lwm)
{
	uint8_t in[RMP_IN], out[OUT_SZ];

	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_MODIFY_RMP);
	prm_set(in, 0x40, 4, RMP_RDY);
	prm_set(in, 0x48, 24, r->rmpn);
	prm_set(in, 0xbf, 1, 1); /* bitmask.lwm */
	prm_set(in, RMPC + 0x8, 4, RMP_RDY);
	prm_set(in, WQ + 0x30, 16, lwm);
	CHECK_OK(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)));
}

/*
 * The limit's event (mlx5dv_devx_subscribe_devx_event, SRQ_RQ_LIMIT 0x14):
 * none while the WQEs left stay at or above lwm; once they fall below it,
 * one event with the subscription's cookie, the EQE's type and the rmpn
 * (SRQ kind), and the limit disarmed (QUERY_RMP's lwm 0): no second event.
 * A QP receiving from it, moved to ERR, raises its last-WQE event.
 */
static void test_limit_event(void)
{
	uint16_t limit_ev = 0x14, last_wqe = 0x13;
	struct mlx5dv_devx_event_channel *ch;
	struct {
		struct mlx5_ib_uapi_devx_async_event_hdr h;
		uint8_t eqe[64];
	} ev;
	uint8_t out[OUT_SZ], qin[0x10] = {0}, qout[RMP_IN];
	struct dx *d = NULL;
	struct rmp *r = NULL;
	struct mlx5dv_devx_obj *q;
	struct dx_peer *p;
	uint32_t n = 0;
	int err;

	dx_open(&d, SQ_BYTES);
	memset(d->buf, 0, 4096); /* check_recv reads the byte past each message as 0 */
	cq_create(d);
	rmp_create(d, &r, WQ_CYCLIC, out, &err);
	CHECK(err == 0);
	for (unsigned int i = 0; i < (1u << LOG_RMP); i++)
		rmp_wqe(d, r, i, 0);
	rmp_post(d, 12);
	q = qp_rmp_create(d, r->rmpn, 0, 8, &n, out);
	CHECK(q != NULL);
	peer_open(d->c, &p);
	qp_up(d, q, n, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, n, 12, 7));
	ch = mlx5dv_devx_create_event_channel(d->c, 0);
	CHECK(ch != NULL);
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, r->obj, sizeof(limit_ev), &limit_ev, 0x5157));
	rmp_set_lwm(r, 10);
	for (uint32_t m = 0; m < 2; m++) { /* 12 posted, 10 left: not below */
		peer_send(p, IMM + m, (uint8_t)(0x40 + m));
		check_recv(d, n, (uint16_t)m, IMM + m, (uint8_t)(0x40 + m));
	}
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, &ev.h, sizeof(ev)) == -1 && errno == EAGAIN);
	peer_send(p, IMM + 2, 0x42); /* 9 left */
	check_recv(d, n, 2, IMM + 2, 0x42);
	for (int i = 0; i < 500 && mlx5dv_devx_get_event(ch, &ev.h, sizeof(ev)) != (ssize_t)sizeof(ev); i++)
		usleep(10000);
	CHECK(ev.h.cookie == 0x5157 && ev.eqe[1] == limit_ev);
	CHECK(ev.eqe[0x34] == 1 && be32toh(*(uint32_t *)(void *)(ev.eqe + 0x38)) == r->rmpn);
	prm_set(qin, 0, 16, OP_QUERY_RMP);
	prm_set(qin, 0x48, 24, r->rmpn);
	CHECK_OK(mlx5dv_devx_obj_query(r->obj, qin, sizeof(qin), qout, sizeof(qout)));
	CHECK(prm_get(qout, WQ + 0x30, 16) == 0);
	peer_send(p, IMM + 3, 0x43); /* disarmed: no second event */
	check_recv(d, n, 3, IMM + 3, 0x43);
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, &ev.h, sizeof(ev)) == -1 && errno == EAGAIN);
	/* The QP on the RMP moved to ERR (2ERR_QP): its last-WQE event (0x13), the qpn, QP kind. */
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, q, sizeof(last_wqe), &last_wqe, 0x9a7e));
	memset(qin, 0, sizeof(qin));
	prm_set(qin, 0, 16, OP_2ERR_QP);
	prm_set(qin, 0x48, 24, n);
	CHECK_OK(mlx5dv_devx_obj_modify(q, qin, sizeof(qin), out, sizeof(out)));
	CHECK(mlx5dv_devx_get_event(ch, &ev.h, sizeof(ev)) == (ssize_t)sizeof(ev));
	CHECK(ev.h.cookie == 0x9a7e && ev.eqe[1] == last_wqe && ev.eqe[0x34] == 0);
	CHECK(be32toh(*(uint32_t *)(void *)(ev.eqe + 0x38)) == n);
	CHECK_OK(mlx5dv_devx_obj_destroy(q));
	mlx5dv_devx_destroy_event_channel(ch);
}

/* MODIFY_RMP: RDY to RDY with lwm (QUERY_RMP shows it); a wrong current state, ERR, an lwm above the posted. */
static void test_modify_states(void)
{
	int err;
	struct dx *d = NULL;
	struct rmp *r = NULL;
	uint8_t out[OUT_SZ], in[RMP_IN], qin[0x10] = {0}, qout[RMP_IN];

	dx_open(&d, SQ_BYTES);
	rmp_create(d, &r, WQ_LL, out, &err);
	CHECK(err == 0);
	for (unsigned int i = 0; i < (1u << LOG_RMP); i++)
		rmp_wqe(d, r, i, (uint16_t)((i + 1) % (1u << LOG_RMP)));
	rmp_post(d, 4);
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_MODIFY_RMP);
	prm_set(in, 0x40, 4, RMP_RDY);		/* rmp_state: the current one */
	prm_set(in, 0x48, 24, r->rmpn);
	prm_set(in, 0xbf, 1, 1);		/* bitmask.lwm */
	prm_set(in, RMPC + 0x8, 4, RMP_RDY);
	prm_set(in, WQ + 0x30, 16, 2);		/* lwm */
	memset(out, 0xff, sizeof(out));
	CHECK_OK(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)));
	CHECK(status_of(out) == 0 && syndrome_of(out) == 0);
	prm_set(qin, 0, 16, OP_QUERY_RMP);
	prm_set(qin, 0x48, 24, r->rmpn);
	CHECK_OK(mlx5dv_devx_obj_query(r->obj, qin, sizeof(qin), qout, sizeof(qout)));
	CHECK(prm_get(qout, WQ + 0x30, 16) == 2);
	CHECK(prm_get(qout, WQ + 0xe0, 32) == 4 && prm_get(qout, WQ + 0xc0, 32) == 0);
	/* An lwm above the four posted. */
	prm_set(in, WQ + 0x30, 16, 5);
	CHECK_ERR(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)), EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_RMP_LWM);
	/* rmp_state not the RMP's: BAD_RES_STATE. */
	prm_set(in, WQ + 0x30, 16, 1);
	prm_set(in, 0x40, 4, 3);
	CHECK_ERR(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)), EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_RES_STATE && syndrome_of(out) == SYND_RMP_STATE);
	/* To ERR: refused, the RMP stays RDY with its lwm. */
	prm_set(in, 0x40, 4, RMP_RDY);
	prm_set(in, RMPC + 0x8, 4, 3);
	CHECK_ERR(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)), EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_RMP_STATE);
	CHECK_OK(mlx5dv_devx_obj_query(r->obj, qin, sizeof(qin), qout, sizeof(qout)));
	CHECK(prm_get(qout, RMPC + 0x8, 4) == RMP_RDY && prm_get(qout, WQ + 0x30, 16) == 2);
	/* Another rmpn in the command: the kernel's refusal, out untouched. */
	prm_set(in, RMPC + 0x8, 4, RMP_RDY);
	prm_set(in, 0x48, 24, r->rmpn + 1);
	memset(out, 0xee, sizeof(out));
	CHECK_ERR(mlx5dv_devx_obj_modify(r->obj, in, sizeof(in), out, sizeof(out)), EINVAL);
	CHECK(out[0] == 0xee);
	/* QUERY_QP sent to an RMP: BAD_OP. */
	prm_set(qin, 0, 16, OP_QUERY_QP);
	CHECK_ERR(mlx5dv_devx_obj_query(r->obj, qin, sizeof(qin), qout, sizeof(qout)), EREMOTEIO);
	CHECK(status_of(qout) == ST_BAD_OP && syndrome_of(qout) == SYND_BAD_OP);
}

/* One refused CREATE_RMP: NULL, EREMOTEIO, the status and syndrome. */
static void check_rmp_refused(struct dx *d, const uint8_t *in, uint8_t status, uint32_t synd)
{
	uint8_t out[OUT_SZ];

	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, RMP_IN, out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == status && syndrome_of(out) == synd);
}

/* CREATE_RMP and CREATE_QP on an RMP the device refuses, each for its own reason. */
static void test_bad_commands(void)
{
	int err;
	struct dx *d = NULL, *e = NULL;
	struct rmp *r = NULL, *other = NULL;
	uint8_t in[RMP_IN], out[OUT_SZ];
	uint32_t n;

	dx_open(&d, SQ_BYTES);
	dx_open(&e, SQ_BYTES);
	cq_create(d);
	rmp_create(d, &r, WQ_LL, out, &err);
	CHECK(err == 0);
	rmp_cmd(d, r, in, 2);			/* a striding linked list */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_TYPE);
	rmp_cmd(d, r, in, WQ_CYCLIC);
	prm_set(in, RMPC + 0x20, 1, 1);		/* basic_cyclic_rcv_wqe */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_TYPE);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x10c, 4, 4);		/* 16-byte WQEs: no room for the next segment and data */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_SIZE);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x11b, 5, 16);
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_SIZE);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, RMPC + 0x8, 4, 0);		/* not RDY */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_STATE);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x48, 24, 0xfffff0);	/* no such PD */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_RMP_PD);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x160, 32, 0x7777);	/* no such umem */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_UMEM);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x11b, 5, 7);		/* 128 WQEs of 64 bytes: past the 4 KiB umem */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_UMEM_SHORT);
	rmp_cmd(d, r, in, WQ_LL);
	prm_set(in, WQ + 0x80, 64, 64);		/* the record past its 64-byte umem */
	check_rmp_refused(d, in, ST_BAD_PARAM, SYND_UMEM_SHORT);
	/* Shorter than create_rmp_in: the kernel's EINVAL, out untouched. */
	rmp_cmd(d, r, in, WQ_LL);
	memset(out, 0xee, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, RMP_IN - 1, out, sizeof(out)) == NULL);
	CHECK(errno == EINVAL && out[0] == 0xee);
	/* A QP on an RMP number nobody made, and on an RMP of another context. */
	CHECK(qp_rmp_create(d, r->rmpn + 1000, 0, 8, &n, out) == NULL);
	CHECK(errno == EREMOTEIO && status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_QP_SRQ);
	rmp_create(e, &other, WQ_LL, out, &err);
	CHECK(err == 0);
	CHECK(qp_rmp_create(d, other->rmpn, 0, 8, &n, out) == NULL);
	CHECK(errno == EREMOTEIO && status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_QP_SRQ);
}

/* An RMP a QP receives from is not destroyed (EBUSY, still working); once the QP is gone, it is. */
static void test_destroy_while_attached(void)
{
	int err;
	struct dx *d = NULL;
	struct rmp *r = NULL;
	struct mlx5dv_devx_obj *q;
	uint8_t out[OUT_SZ];
	uint32_t n = 0;
	struct dx_peer *p;

	dx_open(&d, SQ_BYTES);
	memset(d->buf, 0, 4096);
	cq_create(d);
	rmp_create(d, &r, WQ_CYCLIC, out, &err);
	CHECK(err == 0);
	q = qp_rmp_create(d, r->rmpn, 0, 8, &n, out);
	CHECK(q != NULL);
	CHECK_ERR(mlx5dv_devx_obj_destroy(r->obj), EBUSY);
	for (unsigned int i = 0; i < (1u << LOG_RMP); i++)
		rmp_wqe(d, r, i, 0);
	rmp_post(d, 1);
	peer_open(d->c, &p);
	qp_up(d, q, n, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, n, 12, 7));
	peer_send(p, IMM, 0x44);
	check_recv(d, n, 0, IMM, 0x44);
	CHECK_ERR(mlx5dv_devx_obj_destroy(r->obj), EBUSY);
	CHECK_OK(mlx5dv_devx_obj_destroy(q));
	CHECK_OK(mlx5dv_devx_obj_destroy(r->obj));
	r->obj = NULL;
}

/* A DC target (CREATE_DCT) on an RMP, as UCX's dc_mlx5 makes it: made, and it holds the RMP (EBUSY) until destroyed. */
static void test_dct_on_rmp(void)
{
	int err;
	struct dx *d = NULL;
	struct rmp *r = NULL;
	struct mlx5dv_devx_obj *dct;
	uint8_t in[0x90] = {0}, out[OUT_SZ];

	dx_open(&d, SQ_BYTES);
	cq_create(d);
	rmp_create(d, &r, WQ_CYCLIC, out, &err);
	CHECK(err == 0);
	prm_set(in, 0, 16, 0x710);		/* CREATE_DCT */
	prm_set(in, 0x80 + 0x48, 24, d->cqn);
	prm_set(in, 0x80 + 0x6c, 1, 1);		/* rre */
	prm_set(in, 0x80 + 0xa8, 24, r->rmpn);	/* srqn_xrqn: the RMP */
	prm_set(in, 0x80 + 0xc8, 24, d->pdn);
	prm_set(in, 0x80 + 0x100, 64, 0x1234);	/* dc_access_key */
	prm_set(in, 0x80 + 0x145, 3, 3);	/* mtu 1024 */
	prm_set(in, 0x80 + 0x148, 8, 1);	/* port */
	memset(out, 0xff, sizeof(out));
	dct = mlx5dv_devx_obj_create(d->c, in, sizeof(in), out, sizeof(out));
	CHECK(dct != NULL && status_of(out) == 0 && syndrome_of(out) == 0);
	CHECK_ERR(mlx5dv_devx_obj_destroy(r->obj), EBUSY);
	CHECK_OK(mlx5dv_devx_obj_destroy(dct));
	CHECK_OK(mlx5dv_devx_obj_destroy(r->obj));
	r->obj = NULL;
}

/* The general capability page says RMPs are there: log_max_rmp, as log_max_srq. */
static void test_cap_log_max_rmp(void)
{
	struct dx *d = NULL;
	uint8_t in[0x10] = {0}, out[0x1010];

	dx_open(&d, SQ_BYTES);
	prm_set(in, 0, 16, 0x100);	/* QUERY_HCA_CAP */
	prm_set(in, 0x40, 16, 1);	/* op_mod: general, current */
	CHECK_OK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)));
	CHECK(prm_get(out + 0x10, 0x383, 5) > 0);
	CHECK(prm_get(out + 0x10, 0x383, 5) == prm_get(out + 0x10, 0xab, 5));
}

int main(void)
{
	RUN(test_linked_list_two_senders);
	RUN(test_cyclic_ring_order);
	RUN(test_modify_states);
	RUN(test_limit_event);
	RUN(test_bad_commands);
	RUN(test_destroy_while_attached);
	RUN(test_dct_on_rmp);
	RUN(test_cap_log_max_rmp);
	return th_summary("test_verbs_devx_rmp");
}
