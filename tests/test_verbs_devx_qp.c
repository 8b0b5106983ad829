/*
 * DevX RC QPs and CQs (mlx5dv_devx_obj_create(3), mlx5dv_devx_obj_modify,
 * mlx5dv_devx_obj_query, mlx5dv_devx_query_eqn(3)) made from the PRM's
 * commands over the program's umem: CREATE_CQ and CREATE_QP with the cqc and
 * qpc layouts of mlx5_ifc.h, moved by RST2INIT_QP / INIT2RTR_QP /
 * RTR2RTS_QP, driven by WQEs, doorbell records and UAR writes the program
 * makes itself, and talking SEND with immediate to QPs of ibv_create_qp in
 * this process and in another one. Refused commands answer the PRM's status
 * in out with EREMOTEIO, as the kernel answers a DevX command.
 */
#include <endian.h>
#include <errno.h>
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

/* QUERY_QP: the qpc's state field. */
static void dx_state(struct dx *d, uint8_t *qout, uint32_t *state)
{
	uint8_t in[0x10] = {0};

	prm_set(in, 0, 16, OP_QUERY_QP);
	prm_set(in, 0x48, 24, d->qpn);
	memset(qout, 0xff, QUERY_OUT);
	CHECK_OK(mlx5dv_devx_obj_query(d->qp, in, sizeof(in), qout, QUERY_OUT));
	CHECK(status_of(qout) == 0);
	*state = (uint32_t)prm_get(qout, QPC, 4);
}

/* One receive WQE of the whole buffer, then the receive record. */
static void dx_post_recv(struct dx *d)
{
	struct mlx5_wqe_data_seg *seg = (void *)(d->qp_mem + (d->rq_pi % (1u << LOG_RQ)) * 16);

	mlx5dv_set_data_seg(seg, 4096, d->mr->lkey, (uintptr_t)d->buf);
	d->rq_pi++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	((volatile uint32_t *)(void *)(d->dbr + 8))[MLX5_RCV_DBR] = htobe32(d->rq_pi & 0xffff);
}

static int peer_send_imm(struct dx_peer *p, uint32_t len, uint32_t imm)
{
	struct ibv_sge s = {.addr = (uintptr_t)p->buf, .length = len, .lkey = p->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(imm)},
			   *bad;

	return ibv_post_send(p->qp, &wr, &bad);
}

/* A receive of len bytes with immediate in the DevX QP's RQ: its CQE and the bytes. */
static void check_resp_cqe(struct dx *d, uint16_t wqe_counter, uint32_t len, uint32_t imm, const uint8_t *want)
{
	struct mlx5_cqe64 c;

	dx_poll(d, &c);

	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_RESP_SEND_IMM);
	CHECK(be32toh(c.byte_cnt) == len);
	CHECK(be32toh(c.imm_inval_pkey) == imm);
	CHECK(be16toh(c.wqe_counter) == wqe_counter);
	CHECK((be32toh(c.sop_drop_qpn) & 0xffffff) == d->qpn);
	CHECK(memcmp(d->buf, want, len) == 0);
}

/* Both directions between a DevX QP and an ibv_create_qp QP of this process. */
static void test_send_imm_local(void)
{
	struct dx *d = NULL;
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	struct dx_peer *p = calloc(1, sizeof(*p));
	uint8_t want[MSG], qout[QUERY_OUT];
	struct ibv_wc wc;
	uint32_t st;

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	CHECK_OK(dx_peer_open(p, d->c));
	dx_create(d);
	dx_state(d, qout, &st);
	CHECK(st == 0); /* RST */
	dx_up(d, p->qp->qp_num);
	dx_state(d, qout, &st);
	CHECK(st == 3); /* RTS */
	CHECK(prm_get(qout, QPC + 0xa8, 24) == p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	for (int i = 0; i < 3; i++) {
		dx_fill(d->buf, MSG, (uint8_t)(0x10 + i));
		memset(p->buf, 0, sizeof(p->buf));
		CHECK_OK(dx_peer_recv(p));
		dx_send_imm(d, MSG, IMM + (uint32_t)i);
		dx_check_req_cqe(d, (uint16_t)i);
		CHECK(vq_poll1(p->cq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 7);
		CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && be32toh(wc.imm_data) == IMM + (uint32_t)i);
		CHECK(wc.byte_len == MSG && wc.qp_num == p->qp->qp_num);
		CHECK(memcmp(p->buf, d->buf, MSG) == 0);
	}
	/* The other way: the ibv QP's SEND lands in the DevX QP's receive ring. */
	dx_post_recv(d);
	dx_fill(p->buf, MSG, 0x5a);
	memcpy(want, p->buf, MSG);
	memset(d->buf, 0, MSG);
	CHECK_OK(peer_send_imm(p, MSG, 0xabcd1234u));
	check_resp_cqe(d, 0, MSG, 0xabcd1234u, want);
	CHECK(vq_poll1(p->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 9);
}

/*
 * cs_res 1 (scatter up to 32 bytes into the CQE; the CQ's CQEs are 64
 * bytes): a SEND of 20 bytes lands in the CQE's first 32 bytes, op_own
 * carrying MLX5_INLINE_SCATTER_32, and not in the receive buffer; one of 33
 * bytes goes to the buffer, the format bits clear.
 */
static void test_scatter_cs_res(void)
{
	struct dx *d = NULL;
	struct dx_peer *p = calloc(1, sizeof(*p));
	struct mlx5_cqe64 c;
	struct ibv_wc wc;
	const uint8_t *area = (const uint8_t *)&c;

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	CHECK_OK(dx_peer_open(p, d->c));
	dx_cs_res = 1;
	dx_create(d);
	dx_cs_res = 0;
	dx_up(d, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	dx_post_recv(d);
	dx_fill(p->buf, 64, 0x31);
	memset(d->buf, 0xee, 64);
	CHECK_OK(peer_send_imm(p, 20, 0x1234u));
	dx_poll(d, &c);
	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_RESP_SEND_IMM);
	CHECK((c.op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) == MLX5_INLINE_SCATTER_32);
	CHECK(be32toh(c.byte_cnt) == 20 && be32toh(c.imm_inval_pkey) == 0x1234u);
	CHECK(memcmp(area, p->buf, 20) == 0);
	for (int i = 20; i < 32; i++)
		CHECK(area[i] == 0);
	for (int i = 0; i < 64; i++)
		CHECK(d->buf[i] == 0xee);
	CHECK(vq_poll1(p->cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	dx_post_recv(d);
	CHECK_OK(peer_send_imm(p, 33, 0x1235u));
	dx_poll(d, &c);
	CHECK((c.op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64)) == 0);
	CHECK(be32toh(c.byte_cnt) == 33 && memcmp(d->buf, p->buf, 33) == 0);
	CHECK(vq_poll1(p->cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
}

/* The other process: an ibv RC QP; says its number, takes ours, receives one SEND, sends one back. */
static void child(int in, int out)
{
	struct ibv_context *c = open_devx();
	struct dx_peer *p = calloc(1, sizeof(*p));
	uint32_t dest, qpn;
	struct ibv_wc wc;
	char ok;

	if (c == NULL || p == NULL || dx_peer_open(p, c) != 0)
		_exit(2);
	qpn = p->qp->qp_num;
	if (write(out, &qpn, sizeof(qpn)) != sizeof(qpn) || read(in, &dest, sizeof(dest)) != sizeof(dest))
		_exit(3);
	if (vq_up(p->qp, dest, 12, 7) != 0 || dx_peer_recv(p) != 0)
		_exit(4);
	ok = 'r';
	if (write(out, &ok, 1) != 1)
		_exit(5);
	if (vq_poll1(p->cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || be32toh(wc.imm_data) != IMM || wc.byte_len != MSG)
		_exit(6);
	/* Back: the same bytes, each one more, with IMM + 1. */
	for (int i = 0; i < MSG; i++)
		p->buf[i]++;
	if (read(in, &ok, 1) != 1 || peer_send_imm(p, MSG, IMM + 1) != 0)
		_exit(7);
	if (vq_poll1(p->cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND)
		_exit(8);
	ok = 'y';
	if (write(out, &ok, 1) != 1)
		_exit(9);
	_exit(0);
}

/* A DevX QP and an ibv_create_qp QP of another process, both directions, bytes compared there and here. */
static void test_send_imm_other_process(void)
{
	int a[2], b[2];
	uint32_t cqpn;
	uint8_t want[MSG];
	char ok = 0;
	struct dx *d;

	kid_fork(a, b);
	if (kid == 0)
		child(a[0], b[1]);
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	CHECK(read(b[0], &cqpn, sizeof(cqpn)) == sizeof(cqpn));
	dx_up(d, cqpn);
	CHECK(write(a[1], &d->qpn, sizeof(d->qpn)) == sizeof(d->qpn));
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'r');
	dx_fill(d->buf, MSG, 0x21);
	memcpy(want, d->buf, MSG);
	for (int i = 0; i < MSG; i++)
		want[i]++;
	dx_send_imm(d, MSG, IMM);
	dx_check_req_cqe(d, 0);
	dx_post_recv(d);
	memset(d->buf, 0, MSG);
	CHECK(write(a[1], "s", 1) == 1);
	check_resp_cqe(d, 0, MSG, IMM + 1, want);
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'y');
	kid_wait_ok();
}

/*
 * A WQE whose lkey the PD does not know: the error CQE of the PRM (REQ_ERR,
 * local protection), nothing written at the responder, QUERY_QP reports the
 * QP in ERR; 2RST_QP brings it back to RST.
 */
static void test_wqe_error_state(void)
{
	struct dx *d = NULL;
	struct dx_peer *p = calloc(1, sizeof(*p));
	uint8_t out[OUT_SZ], qout[QUERY_OUT];
	struct mlx5_err_cqe e;
	struct mlx5_cqe64 c;
	struct ibv_wc wc;
	uint32_t st;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	CHECK_OK(dx_peer_open(p, d->c));
	dx_create(d);
	dx_up(d, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	CHECK_OK(dx_peer_recv(p));
	memset(p->buf, 0x6b, 64);
	dx_fill(d->buf, 64, 1);
	d->mr->lkey += 0x100; /* a key nobody registered */
	dx_send_imm(d, 64, IMM);
	d->mr->lkey -= 0x100;
	dx_poll(d, &c);
	memcpy(&e, &c, sizeof(e));
	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ_ERR);
	CHECK(e.syndrome == MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	CHECK(be16toh(e.wqe_counter) == 0);
	CHECK((be32toh(e.s_wqe_opcode_qpn) & 0xffffff) == d->qpn);
	CHECK(ibv_poll_cq(p->cq, 1, &wc) == 0);
	CHECK(p->buf[0] == 0x6b && p->buf[63] == 0x6b);
	dx_state(d, qout, &st);
	CHECK(st == 6); /* ERR */
	CHECK_OK(dx_modify(d, OP_2RST, 0, out));
	CHECK(status_of(out) == 0);
	dx_state(d, qout, &st);
	CHECK(st == 0);
}

/*
 * Closing the context with a DevX QP and CQ left destroys them, as the
 * kernel destroys a closed file's objects: the program may free their
 * umem at once, the ibv QP connected to the DevX QP gets the error of
 * a peer gone (transport retries exceeded, not an RNR wait on the unposted
 * RQ), and the handles are freed by their destroy and dereg calls. The
 * DevX side is a child process, which leaves its PD (in use until the
 * close) to its exit.
 */
static int close_in = -1, close_out = -1;

static void close_child_case(void)
{
	struct dx *d = NULL;
	uint32_t dest;
	char ok;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	CHECK(write(close_out, &d->qpn, sizeof(d->qpn)) == sizeof(d->qpn));
	CHECK(read(close_in, &dest, sizeof(dest)) == sizeof(dest));
	dx_up(d, dest);
	CHECK(write(close_out, "r", 1) == 1);
	CHECK(read(close_in, &ok, 1) == 1 && ok == 'u');
	CHECK_OK(ibv_dereg_mr(d->mr));
	d->mr = NULL;
	CHECK(ibv_dealloc_pd(d->pd) == EBUSY); /* the DevX QP is on it */
	CHECK_OK(ibv_close_device(d->c));
	d->c = NULL;
	d->pd = NULL;
	/* Nothing reads the rings or records any more: the memory goes back to the allocator. */
	free(d->qp_mem);
	free(d->cq_mem);
	free(d->dbr);
	d->qp_mem = d->cq_mem = d->dbr = NULL;
	CHECK(write(close_out, "c", 1) == 1);
	CHECK(read(close_in, &ok, 1) == 1 && ok == 'd');
	/* The handles outlive the context until their calls free them. */
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	CHECK_OK(mlx5dv_devx_umem_dereg(d->qp_um));
	d->qp_um = NULL;
	CHECK_OK(mlx5dv_devx_umem_dereg(d->cq_um));
	d->cq_um = NULL;
	CHECK_OK(mlx5dv_devx_umem_dereg(d->dbr_um));
	d->dbr_um = NULL;
}

static void test_close_with_queues(void)
{
	struct ibv_context *c = open_devx();
	struct dx_peer *p = calloc(1, sizeof(*p));
	int a[2], b[2];
	uint32_t cqpn;
	struct ibv_wc wc;
	char ok = 0;

	CHECK(c != NULL && p != NULL);
	th_defer(vf_close_cb, c);
	th_defer(dx_peer_close, p); /* runs before the close */
	kid_fork(a, b);
	if (kid == 0) {
		close_in = a[0];
		close_out = b[1];
		kid_case("close_child", close_child_case);
	}
	CHECK_OK(dx_peer_open(p, c));
	CHECK(read(b[0], &cqpn, sizeof(cqpn)) == sizeof(cqpn));
	CHECK(write(a[1], &p->qp->qp_num, sizeof(uint32_t)) == sizeof(uint32_t));
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'r');
	CHECK_OK(vq_up(p->qp, cqpn, 12, 0));
	CHECK(write(a[1], "u", 1) == 1);
	CHECK(read(b[0], &ok, 1) == 1 && ok == 'c');
	CHECK_OK(peer_send_imm(p, 64, IMM));
	CHECK(vq_poll1(p->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
	CHECK(write(a[1], "d", 1) == 1);
	kid_wait_ok();
}

/* Commands the device refuses: the PRM's status and the syndrome in out, EREMOTEIO, nothing made or moved. */
static void test_bad_commands(void)
{
	struct dx *d = NULL;
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	uint8_t in[QP_IN], out[OUT_SZ], qout[QUERY_OUT];
	uint32_t eqn, st;

	/* A QP state command is no object to create: BAD_OP. */
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_RST2INIT);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	/* No EQ for a vector the context does not have. */
	CHECK(mlx5dv_devx_query_eqn(d->c, (uint32_t)d->c->num_comp_vectors, &eqn) == EINVAL);
	dx_create(d);
	/* A QP of a CQ number nobody has: BAD_PARAM. */
	qp_cmd(d, in, d->cqn + 1000);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_QP_CQ);
	/* A transport service other than RC (st 2: UD): BAD_PARAM. */
	qp_cmd(d, in, d->cqn);
	prm_set(in, QPC + 0x8, 8, 2);
	memset(out, 0, sizeof(out));
	CHECK(mlx5dv_devx_obj_create(d->c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_QP_TYPE);
	/* RTR2RTS and INIT2RTR from RST: BAD_QP_STATE, the QP stays in RST. */
	CHECK(dx_modify(d, OP_RTR2RTS, 0, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_QP_STATE && syndrome_of(out) == SYND_QP_STATE);
	CHECK(dx_modify(d, OP_INIT2RTR, 1, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_QP_STATE);
	dx_state(d, qout, &st);
	CHECK(st == 0);
	/* RST2INIT twice: the second starts from INIT. */
	CHECK_OK(dx_modify(d, OP_RST2INIT, 0, out));
	CHECK(status_of(out) == 0);
	CHECK(dx_modify(d, OP_RST2INIT, 0, out) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_QP_STATE);
	dx_state(d, qout, &st);
	CHECK(st == 1);
	/* CREATE_CQ sent to modify a QP: BAD_OP. */
	cq_cmd(d, in, 0);
	prm_set(in, 0x48, 24, d->qpn);
	CHECK(mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, sizeof(out)) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
}

/*
 * A CQ a QP reports to is not destroyed (the card's BAD_RES_STATE, EINVAL
 * from the kernel): it keeps working, and goes once the QP has gone. A
 * umem under a queue is not deregistered (EBUSY).
 */
static void test_destroy_cq_with_qp(void)
{
	struct dx *d = NULL;
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	struct dx_peer *p = calloc(1, sizeof(*p));
	struct ibv_wc wc;

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	CHECK_OK(dx_peer_open(p, d->c));
	dx_create(d);
	CHECK(mlx5dv_devx_obj_destroy(d->cq) == EINVAL);
	CHECK(mlx5dv_devx_umem_dereg(d->qp_um) == EBUSY);
	CHECK(mlx5dv_devx_umem_dereg(d->cq_um) == EBUSY);
	dx_up(d, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	dx_fill(d->buf, 64, 3);
	CHECK_OK(dx_peer_recv(p));
	dx_send_imm(d, 64, IMM);
	dx_check_req_cqe(d, 0);
	CHECK(vq_poll1(p->cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 64);
	CHECK(memcmp(p->buf, d->buf, 64) == 0);
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	CHECK_OK(mlx5dv_devx_umem_dereg(d->qp_um));
	d->qp_um = NULL;
}

/* Rings that do not fit their umem: BAD_PARAM, no QP or CQ made. */
static void test_umem_too_small(void)
{
	struct dx *d = NULL;
	dx_open(&d, RQ_BYTES + SQ_BYTES - 64); /* one send basic block short */
	uint8_t in[QP_IN], out[OUT_SZ];
	uint32_t eqn;

	CHECK_OK(mlx5dv_devx_query_eqn(d->c, 0, &eqn));
	/* 2^7 CQEs of 64 bytes do not fit the CQ's one page. */
	cq_cmd(d, in, eqn);
	prm_set(in, CQC + 0x63, 5, 7);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, CQ_IN, out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_UMEM_SHORT);
	cq_cmd(d, in, eqn);
	d->cq = mlx5dv_devx_obj_create(d->c, in, CQ_IN, out, sizeof(out));
	CHECK(d->cq != NULL);
	d->cqn = (uint32_t)prm_get(out, 0x48, 24);
	qp_cmd(d, in, d->cqn);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_UMEM_SHORT);
	/* The same rings one basic block smaller fit: the QP is made. */
	prm_set(in, QPC + 0x51, 4, LOG_SQ - 1);
	d->qp = mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out));
	CHECK(d->qp != NULL);
	/* The record past its umem's end. */
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	qp_cmd(d, in, d->cqn);
	prm_set(in, QPC + 0x51, 4, LOG_SQ - 1);
	prm_set(in, QPC + 0x500, 64, 64);
	memset(out, 0, sizeof(out));
	CHECK(mlx5dv_devx_obj_create(d->c, in, QP_IN, out, sizeof(out)) == NULL);
	CHECK(errno == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) == SYND_UMEM_SHORT);
}

/* qpc's remote rights (rre, rwe, rae: byte 0x92's top bits) and the command's opt_param_mask flags for them. */
#define QPC_RRE 0x80u
#define QPC_RWE 0x40u
#define QPC_RAE 0x20u
#define OPTPAR_RRE (1u << 1)
#define OPTPAR_RAE (1u << 2)
#define OPTPAR_RWE (1u << 3)

/* RST2INIT with rwe alone, then INIT2RTR carrying rights and optpar, then RTR2RTS: UCX's rc_mlx5 order. */
static void dx_up_rights(struct dx *d, uint32_t dest, uint8_t rights, uint32_t optpar)
{
	uint8_t in[QP_IN] = {0}, out[OUT_SZ];
	union ibv_gid g;

	prm_set(in, 0, 16, OP_RST2INIT);
	prm_set(in, 0x48, 24, d->qpn);
	prm_set(in, ADS + 0x128, 8, 1);	/* vhca_port_num */
	in[(QPC + 0x490) / 8] = QPC_RWE;
	CHECK_OK(mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, sizeof(out)));
	CHECK(status_of(out) == 0);
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_INIT2RTR);
	prm_set(in, 0x48, 24, d->qpn);
	prm_set(in, 0x80, 32, optpar);		/* opt_param_mask */
	prm_set(in, QPC + 0x0, 3, 3);		/* mtu 1024 */
	prm_set(in, QPC + 0x3, 5, 20);		/* log_msg_max */
	prm_set(in, QPC + 0xa8, 24, dest);	/* remote_qpn */
	prm_set(in, QPC + 0x4a3, 5, 12);	/* min_rnr_nak */
	in[(QPC + 0x490) / 8] = rights;
	CHECK(ibv_query_gid(d->c, 1, 0, &g) == 0);
	memcpy(in + (ADS + 0x80) / 8, g.raw, 16);
	prm_set(in, ADS + 0x28, 1, 1);		/* grh */
	prm_set(in, ADS + 0x58, 8, 64);		/* hop_limit */
	prm_set(in, ADS + 0x128, 8, 1);		/* vhca_port_num */
	CHECK_OK(mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, sizeof(out)));
	CHECK(status_of(out) == 0);
	CHECK_OK(dx_modify(d, OP_RTR2RTS, 0, out));
	CHECK(status_of(out) == 0);
}

/* The peer's one-sided request on the DevX side's memory (8 bytes at raddr), signalled; its completion. */
static void peer_one_sided(struct dx_peer *p, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_sge s = {.addr = (uintptr_t)p->buf, .length = 8, .lkey = p->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 11, .sg_list = &s, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	if (op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	} else {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	}
	CHECK_OK(ibv_post_send(p->qp, &wr, &bad));
	CHECK(vq_poll1(p->cq, wc) == 1);
}

static void dereg_cb(void *mr)
{
	ibv_dereg_mr(mr);
}

/*
 * Remote rights given at INIT2RTR, as UCX's rc_mlx5 gives them (rwe at RST2INIT; rre, rwe and rae at
 * INIT2RTR, flagged in opt_param_mask as the kernel flags IB_QP_ACCESS_FLAGS there): a READ and a
 * fetch-and-add from an ibv QP succeed on the DevX QP's memory and QUERY_QP shows the three. Rights in
 * an INIT2RTR's qpc that the mask does not flag are not taken: the atomic is refused with
 * IBV_WC_REM_INV_REQ_ERR and the memory is untouched.
 */
static void test_rights_at_init2rtr(void)
{
	static const uint64_t before = 0x1122334455667788ull;
	struct dx *d = NULL, *d2 = NULL;
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_open(&d2, RQ_BYTES + SQ_BYTES);
	struct dx_peer *p = calloc(1, sizeof(*p)), *p2 = calloc(1, sizeof(*p2));
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *mr, *mr2;
	uint8_t qout[QUERY_OUT];
	struct ibv_wc wc;
	uint64_t v;
	uint32_t st;

	CHECK(p != NULL && p2 != NULL);
	th_defer(dx_peer_close, p);
	th_defer(dx_peer_close, p2);
	CHECK_OK(dx_peer_open(p, d->c));
	CHECK_OK(dx_peer_open(p2, d2->c));
	mr = ibv_reg_mr(d->pd, d->buf, 4096, remote);
	CHECK(mr != NULL);
	th_defer(dereg_cb, mr);
	mr2 = ibv_reg_mr(d2->pd, d2->buf, 4096, remote);
	CHECK(mr2 != NULL);
	th_defer(dereg_cb, mr2);
	dx_create(d);
	dx_create(d2);

	dx_up_rights(d, p->qp->qp_num, QPC_RRE | QPC_RWE | QPC_RAE, OPTPAR_RRE | OPTPAR_RAE | OPTPAR_RWE);
	CHECK_OK(vq_up(p->qp, d->qpn, 12, 7));
	dx_state(d, qout, &st);
	CHECK(st == 3);
	CHECK((qout[(QPC + 0x490) / 8] & 0xe0) == (QPC_RRE | QPC_RWE | QPC_RAE));
	memcpy(d->buf, &before, 8);
	peer_one_sided(p, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)d->buf, mr->rkey, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD);
	memcpy(&v, p->buf, 8);
	CHECK(v == before);
	memcpy(&v, d->buf, 8);
	CHECK(v == before + 5);
	memset(p->buf, 0, 8);
	peer_one_sided(p, IBV_WR_RDMA_READ, (uintptr_t)d->buf, mr->rkey, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ);
	CHECK(memcmp(p->buf, d->buf, 8) == 0);

	/* The same rights in the qpc, not flagged: RST2INIT's rwe alone stays. */
	dx_up_rights(d2, p2->qp->qp_num, QPC_RRE | QPC_RWE | QPC_RAE, 0);
	CHECK_OK(vq_up(p2->qp, d2->qpn, 12, 7));
	dx_state(d2, qout, &st);
	CHECK((qout[(QPC + 0x490) / 8] & 0xe0) == QPC_RWE);
	memcpy(d2->buf, &before, 8);
	peer_one_sided(p2, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)d2->buf, mr2->rkey, &wc);
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR);
	memcpy(&v, d2->buf, 8);
	CHECK(v == before);
}

int main(void)
{
	RUN(test_send_imm_local);
	RUN(test_scatter_cs_res);
	RUN(test_send_imm_other_process);
	RUN(test_wqe_error_state);
	RUN(test_close_with_queues);
	RUN(test_bad_commands);
	RUN(test_destroy_cq_with_qp);
	RUN(test_umem_too_small);
	RUN(test_rights_at_init2rtr);
	return th_summary("test_verbs_devx_qp");
}
