/*
 * Raw doorbells served on the writer's thread: a program that writes its
 * WQE, the send doorbell record and the doorbell register (bf.reg of
 * mlx5dv_init_obj, a DevX UAR's reg_addr) itself finds the WQE completed —
 * its CQE in the CQ's memory, its bytes in place — as soon as the store to
 * the register returns, with the engine thread's watch of send records
 * turned off (SOFTDPU_ENGINE_RAW_POLL=0, set before the device opens): the
 * store traps and the fault handler runs the SQ. The store itself lands
 * nowhere (the register is write-only on a card). A BlueFlame copy (64
 * bytes into bf.reg) serves as well as an 8-byte doorbell. A QP's destroy
 * leaves its page a plain one when no other QP is rung through it, and a
 * fork's child writes the page as plain memory. DevX QPs rung through a
 * UAR's page are served the same way.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "rawdb_fixture.h"
#include "verbs_qp_fixture.h"

#include "devx_fixture.h"

#define VRT_ROUNDS 64

static uint8_t vrt[2][8192] __attribute__((aligned(4096)));

static int vrt_open(struct rdb_env *e)
{
	return rdb_open(e, vrt, sizeof(vrt), 63, 16);
}

/* An RDMA WRITE of 64 bytes of val into slot r of vrt[1], written into the SQ and the record; its ctrl segment. */
static struct mlx5_wqe_ctrl_seg *vrt_wqe(struct rdb_env *e, int r, uint8_t val)
{
	uint8_t *wqe = (uint8_t *)e->dq.sq.buf + (size_t)(e->pi & (e->dq.sq.wqe_cnt - 1)) * e->dq.sq.stride;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_raddr_seg *rs = (void *)(ctrl + 1);
	struct mlx5_wqe_data_seg *ds = (void *)(rs + 1);

	memset(vrt[0] + 64 * (r % 64), val, 64);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)e->pi, MLX5_OPCODE_RDMA_WRITE, 0, e->a->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0,
			    0);
	rs->raddr = htobe64((uintptr_t)vrt[1] + 64u * (uint64_t)(r % 64));
	rs->rkey = htobe32(e->mr->rkey);
	rs->reserved = 0;
	mlx5dv_set_data_seg(ds, 64, e->mr->lkey, (uintptr_t)vrt[0] + 64u * (uint64_t)(r % 64));
	e->pi++;
	__atomic_store_n(&e->dq.dbrec[MLX5_SND_DBR], htobe32(e->pi & 0xffff), __ATOMIC_SEQ_CST);
	return ctrl;
}

/* The CQE of the WQE just rung is there now (no waiting): a requester's, of that WQE, and the bytes landed. */
static void vrt_check_done(struct rdb_env *e, int r, uint8_t val)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)e->dcq.buf + (e->ci & (e->dcq.cqe_cnt - 1));
	const volatile uint8_t *dst = vrt[1] + 64 * (r % 64);

	/* Written by the store's fault handler, on this thread: the compiler must read it again. */
	__asm__ volatile("" ::: "memory");
	CHECK(mlx5dv_get_cqe_owner(cqe) == ((e->ci / e->dcq.cqe_cnt) & 1));
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ);
	CHECK(be16toh(cqe->wqe_counter) == (uint16_t)(e->pi - 1));
	CHECK(dst[0] == val && dst[31] == val && dst[63] == val);
	e->ci++;
	e->dcq.dbrec[0] = htobe32(e->ci & 0xffffff);
}

static void test_doorbell_runs_on_store(void)
{
	struct rdb_env e;

	CHECK_OK(vrt_open(&e));
	CHECK(e.dq.bf.size == 0); /* no BlueFlame buffer: programs write one 8-byte doorbell */
	for (int r = 0; r < VRT_ROUNDS; r++) {
		uint8_t val = (uint8_t)(r + 1);
		struct mlx5_wqe_ctrl_seg *ctrl = vrt_wqe(&e, r, val);

		*(volatile uint64_t *)e.dq.bf.reg = *(uint64_t *)(void *)ctrl;
		vrt_check_done(&e, r, val);
	}
	/* The register keeps nothing of what was written to it. */
	CHECK(*(volatile uint64_t *)e.dq.bf.reg == 0);
}

static void test_bf_copy_runs_on_store(void)
{
	struct rdb_env e;

	CHECK_OK(vrt_open(&e));
	for (int r = 0; r < VRT_ROUNDS; r++) {
		uint8_t val = (uint8_t)(0x80 + r);
		struct mlx5_wqe_ctrl_seg *ctrl = vrt_wqe(&e, r, val);

		/* As a BlueFlame post: the whole 64-byte WQE copied to the register. */
		memcpy(e.dq.bf.reg, ctrl, 64);
		__asm__ volatile("" ::: "memory");
		vrt_check_done(&e, r, val);
	}
}

static void test_destroy_leaves_no_trap(void)
{
	struct ibv_qp_init_attr a = {.qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 4, .max_recv_wr = 4,
								  .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_context *c = vf_open();
	struct mlx5dv_qp dq = {0};
	struct mlx5dv_obj obj = {0};
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	volatile uint64_t *reg;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 15);
	CHECK(pd != NULL && cq != NULL);
	a.send_cq = a.recv_cq = cq;
	qp = ibv_create_qp(pd, &a);
	CHECK(qp != NULL);
	obj.qp.in = qp;
	obj.qp.out = &dq;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	reg = dq.bf.reg;
	*reg = 0x1234;
	CHECK(*reg == 0); /* trapped: stepped over */
	CHECK_OK(ibv_destroy_qp(qp));
	*reg = 0x1234;
	CHECK(*reg == 0x1234); /* a plain page: the destroyed QP left no trap */
	*reg = 0;
}

static void test_fork_child(void)
{
	struct rdb_env e;
	int status = -1;
	pid_t pid;

	CHECK_OK(vrt_open(&e));
	pid = fork();
	if (pid == 0) {
		/* The child: the parent's QPs are not run from here; the page is plain memory. */
		*(volatile uint64_t *)e.dq.bf.reg = 0x4321;
		_exit(*(volatile uint64_t *)e.dq.bf.reg == 0x4321 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The parent's traps stand. */
	struct mlx5_wqe_ctrl_seg *ctrl = vrt_wqe(&e, 0, 0x42);

	*(volatile uint64_t *)e.dq.bf.reg = *(uint64_t *)(void *)ctrl;
	vrt_check_done(&e, 0, 0x42);
}

static void test_devx_uar_trapped(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_devx_uar *u;

	CHECK(c != NULL);
	u = mlx5dv_devx_alloc_uar(c, MLX5DV_UAR_ALLOC_TYPE_BF);
	CHECK(u != NULL);
	*(volatile uint64_t *)u->reg_addr = 0x99;
	CHECK(*(volatile uint64_t *)u->reg_addr == 0);
	mlx5dv_devx_free_uar(u);
}

/* The CQE at d's consumer index is there now (no waiting); copied out and consumed. */
static bool dx_take_now(struct dx *d, struct mlx5_cqe64 *out)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(void *)d->cq_mem + (d->cq_ci % (1u << LOG_CQ));
	uint8_t op = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op >> 4) == MLX5_CQE_INVALID || (op & 1) != ((d->cq_ci >> LOG_CQ) & 1))
		return false;
	*out = *cqe;
	d->cq_ci++;
	((volatile uint32_t *)(void *)d->dbr)[CQ_SET_CI] = htobe32(d->cq_ci & 0xffffff);
	return true;
}

/*
 * DevX QPs over umem, rung through their UAR as UCX's DevX transports do (a
 * BlueFlame copy of the 64-byte WQE to reg_addr): the sender's CQE and the
 * receiver's, with the immediate and the bytes, are there when the copy
 * returns.
 */
static void test_devx_qp_runs_on_store(void)
{
	struct dx *a, *b;

	dx_open(&a, RQ_BYTES + (64u << LOG_SQ));
	dx_open(&b, RQ_BYTES + (64u << LOG_SQ));
	dx_create(a);
	dx_create(b);
	dx_up(a, b->qpn);
	dx_up(b, a->qpn);
	for (uint32_t r = 0; r < 8; r++) {
		uint8_t *wqe = a->qp_mem + RQ_BYTES + (a->sq_pi % (1u << LOG_SQ)) * 64;
		struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
		struct mlx5_wqe_data_seg *data = (void *)(wqe + sizeof(*ctrl));
		struct mlx5_wqe_data_seg *rseg = (void *)(b->qp_mem + (b->rq_pi % (1u << LOG_RQ)) * 16);
		struct mlx5_cqe64 c;

		mlx5dv_set_data_seg(rseg, 4096, b->mr->lkey, (uintptr_t)b->buf);
		b->rq_pi++;
		__atomic_store_n(&((uint32_t *)(void *)(b->dbr + 8))[MLX5_RCV_DBR], htobe32(b->rq_pi & 0xffff),
				 __ATOMIC_SEQ_CST);
		memset(a->buf, (int)(0x30 + r), 256);
		mlx5dv_set_ctrl_seg(ctrl, (uint16_t)a->sq_pi, MLX5_OPCODE_SEND_IMM, 0, a->qpn, MLX5_WQE_CTRL_CQ_UPDATE,
				    2, 0, htobe32(0x100 + r));
		mlx5dv_set_data_seg(data, 256, a->mr->lkey, (uintptr_t)a->buf);
		a->sq_pi++;
		__atomic_store_n(&((uint32_t *)(void *)(a->dbr + 8))[MLX5_SND_DBR], htobe32(a->sq_pi & 0xffff),
				 __ATOMIC_SEQ_CST);
		memcpy(a->uar->reg_addr, wqe, 64);
		__asm__ volatile("" ::: "memory");
		CHECK(dx_take_now(a, &c));
		CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ && be16toh(c.wqe_counter) == (uint16_t)r);
		CHECK(dx_take_now(b, &c));
		CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_RESP_SEND_IMM && be32toh(c.byte_cnt) == 256);
		CHECK(be32toh(c.imm_inval_pkey) == 0x100 + r);
		CHECK(((volatile uint8_t *)b->buf)[0] == 0x30 + r && ((volatile uint8_t *)b->buf)[255] == 0x30 + r);
	}
}

int main(void)
{
	if (rdb_traps_off("test_verbs_rawtrap"))
		return 77;
	/* The engine thread does not look at send records: only the trap can run a raw doorbell. */
	setenv("SOFTDPU_ENGINE_RAW_POLL", "0", 1);
	RUN(test_doorbell_runs_on_store);
	RUN(test_bf_copy_runs_on_store);
	RUN(test_destroy_leaves_no_trap);
	RUN(test_fork_child);
	RUN(test_devx_uar_trapped);
	RUN(test_devx_qp_runs_on_store);
	return th_summary("test_verbs_rawtrap");
}
