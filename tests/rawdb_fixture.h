/*
 * Raw doorbells: two RC QPs of one context connected to each other over one
 * CQ, the first QP's SQ and the CQ seen through mlx5dv_init_obj, for tests
 * that write WQEs, doorbell records and doorbells themselves. The objects
 * are released when the case ends (verbs_qp_fixture.h).
 */
#ifndef SOFTDPU_TEST_RAWDB_FIXTURE_H_
#define SOFTDPU_TEST_RAWDB_FIXTURE_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

struct rdb_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	struct mlx5dv_qp dq;
	struct mlx5dv_cq dcq;
	uint32_t pi, ci; /* the test's producer count on a's SQ, consumer count on the CQ */
};

/* buf (len bytes) registered with every right, a CQ of cqe entries, QPs of wr WRs each in RTS; 0 or not. */
static inline int rdb_open(struct rdb_env *e, void *buf, size_t len, int cqe, uint32_t wr)
{
	struct mlx5dv_obj obj;

	memset(e, 0, sizeof(*e));
	e->c = vf_open();
	if (e->c == NULL || (e->pd = vf_pd(e->c)) == NULL || (e->cq = vq_cq(e->c, cqe)) == NULL)
		return -1;
	e->mr = vq_mr(e->pd, buf, len, VQ_ACCESS_ALL);
	e->a = vq_qp(e->pd, IBV_QPT_RC, e->cq, e->cq, wr);
	e->b = vq_qp(e->pd, IBV_QPT_RC, e->cq, e->cq, wr);
	if (e->mr == NULL || e->a == NULL || e->b == NULL || vq_up(e->a, e->b->qp_num, 0, 0) != 0 ||
	    vq_up(e->b, e->a->qp_num, 0, 0) != 0)
		return -1;
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = e->a;
	obj.qp.out = &e->dq;
	obj.cq.in = e->cq;
	obj.cq.out = &e->dcq;
	return mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ);
}

/*
 * Whether doorbell traps are off here (SOFTDPU_RAW_TRAP=0, or not x86-64,
 * where the engine thread's polling serves raw doorbells): the test then
 * says so and skips (exit 77).
 */
static inline bool rdb_traps_off(const char *test)
{
	const char *off = getenv("SOFTDPU_RAW_TRAP");

#if !defined(__x86_64__)
	off = "0";
#endif
	if (off == NULL || strcmp(off, "0") != 0)
		return false;
	printf("SKIP %s: doorbell traps off (SOFTDPU_RAW_TRAP=0, or not x86-64)\n", test);
	return true;
}

#endif /* SOFTDPU_TEST_RAWDB_FIXTURE_H_ */
