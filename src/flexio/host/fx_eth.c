/*
 * fx_eth — FlexIO Ethernet SQs and RQs: work queues of the emulated
 * device's Ethernet port (hw_eth) whose rings lie in DPA memory, where device
 * code builds send WQEs and posts receives as a packet processor does. An
 * SQ's frames go out through the port's transmit steering to its looped
 * wire; an RQ gets the frames the receive steering sends to its TIR, which
 * the RQ makes at create through DevX (CREATE_TIR), as the SDK does, so the
 * program's mlx5dv_dr rules name it (flexio_rq_get_tir).
 *
 * An SQ has no doorbell record of the program's: device code rings it with
 * flexio_dev_qp_sq_ring_db naming the SQ's number (fx_eth_ring); an RQ's
 * record is the program's (wq_dbr_qmem), its first word the receive counter.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "fx_int.h"
#include "fx_isolate.h"
#include "fx_queue.h"
#include "hw_eth.h"
#include "hw_ids.h"

#define FX_SQ_WQEBB 64u
#define FX_RQ_LOG_STRIDE_DEFAULT 4u /* log_wq_stride 0: one 16-byte data segment */
#define FX_PRM_CREATE_TIR 0x900u
#define FX_TIR_IN_BYTES (0x20u + 240u) /* create_tir_in: header, then the 240-byte TIR context */
#define FX_TIR_OUT_BYTES 16u

struct flexio_sq {
	struct flexio_sq *next;
	struct flexio_process *proc;
	struct hw_eth_sq *hw;
	struct hw_pd *pd;
	struct flexio_cq *cq;
	uint32_t sqn;
	uint32_t dbrec[2] __attribute__((aligned(8))); /* the device's own: programs never write it */
	uint32_t ringing; /* doorbells in progress (atomic): destroy waits for them */
};

struct flexio_rq {
	struct flexio_rq *next;
	struct flexio_process *proc;
	struct hw_eth_rq *hw;
	struct hw_pd *pd;
	struct flexio_cq *cq;
	uint32_t rqn;
	struct mlx5dv_devx_obj *tir;
};

/* What both kinds need: the attributes checked, the CQ taken, a PD reference, a number. */
static flexio_status fx_wq_common(struct flexio_process *p, uint32_t cq_num, const struct flexio_wq_attr *a,
				  struct flexio_cq **cq, struct hw_pd **pd, uint32_t *num)
{
	struct ibv_pd *ipd = a->pd != NULL ? a->pd : p->pd;

	if (a->log_wq_depth > HW_ETH_LOG_WQ_MAX || a->wq_ring_qmem.memtype != FLEXIO_MEMTYPE_DPA) {
		BASE_ERR("log_wq_depth above %u, or a ring in host memory (not supported)", HW_ETH_LOG_WQ_MAX);
		return FLEXIO_STATUS_FAILED;
	}
	*cq = fx_cq_take(p, cq_num);
	if (*cq == NULL) {
		BASE_ERR("CQ %#x is not a CQ of this process", cq_num);
		return FLEXIO_STATUS_FAILED;
	}
	*pd = hw_pd_get(ipd->handle);
	if (*pd == NULL || hw_id_alloc(HW_ID_QPN, num) != HW_OK) {
		BASE_ERR("%s", *pd == NULL ? "the PD is not a live PD of the device" : "no queue number left");
		if (*pd != NULL)
			hw_pd_free(*pd);
		fx_cq_drop(*cq);
		return FLEXIO_STATUS_FAILED;
	}
	return FLEXIO_STATUS_SUCCESS;
}

static void fx_wq_common_undo(struct flexio_cq *cq, struct hw_pd *pd, uint32_t num)
{
	hw_id_free(HW_ID_QPN, num);
	hw_pd_free(pd);
	fx_cq_drop(cq);
}

/* ---- SQs ---- */

static flexio_status fx_sq_build(struct flexio_process *p, const struct flexio_wq_attr *a, struct flexio_sq *sq)
{
	struct hw_eth_sq_attr ha = { .log_size = a->log_wq_depth, .ring = (void *)(uintptr_t)a->wq_ring_qmem.daddr };

	if (!fx_dev_span(p, a->wq_ring_qmem.daddr, (uint64_t)FX_SQ_WQEBB << a->log_wq_depth, FX_SQ_WQEBB)) {
		BASE_ERR("the SQ ring (%u bytes, 64-aligned) must lie in DPA memory of this process",
			 FX_SQ_WQEBB << a->log_wq_depth);
		return FLEXIO_STATUS_FAILED;
	}
	ha.sqn = sq->sqn;
	ha.pd = sq->pd;
	ha.cq = fx_cq_hw(sq->cq);
	ha.dbrec = &sq->dbrec[1];
	if (hw_eth_sq_create(&ha, &sq->hw) != HW_OK) {
		BASE_ERR("the device refused the SQ");
		return FLEXIO_STATUS_FAILED;
	}
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_sq_create(struct flexio_process *process, struct ibv_context *ibv_ctx, uint32_t cq_num,
			       const struct flexio_wq_attr *fattr, struct flexio_sq **flexio_sq_ptr)
{
	struct flexio_sq *sq;

	(void)ibv_ctx; /* any context of the one emulated device */
	if (flexio_sq_ptr != NULL)
		*flexio_sq_ptr = NULL;
	if (process == NULL || fattr == NULL || flexio_sq_ptr == NULL) {
		BASE_ERR("invalid argument (process, attributes, SQ pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	sq = calloc(1, sizeof(*sq));
	if (sq == NULL)
		return FLEXIO_STATUS_FAILED;
	sq->proc = process;
	if (fx_wq_common(process, cq_num, fattr, &sq->cq, &sq->pd, &sq->sqn) != FLEXIO_STATUS_SUCCESS)
		goto err;
	if (fx_sq_build(process, fattr, sq) != FLEXIO_STATUS_SUCCESS)
		goto err_common;
	pthread_mutex_lock(&process->lock);
	sq->next = process->sqs;
	process->sqs = sq;
	pthread_mutex_unlock(&process->lock);
	*flexio_sq_ptr = sq;
	return FLEXIO_STATUS_SUCCESS;

err_common:
	fx_wq_common_undo(sq->cq, sq->pd, sq->sqn);
err:
	free(sq);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_sq_destroy(struct flexio_sq *flexio_sq)
{
	struct flexio_sq **pp;
	struct flexio_process *p;

	if (flexio_sq == NULL)
		return FLEXIO_STATUS_FAILED;
	p = flexio_sq->proc;
	pthread_mutex_lock(&p->lock);
	for (pp = &p->sqs; *pp != NULL && *pp != flexio_sq; pp = &(*pp)->next)
		;
	if (*pp == flexio_sq)
		*pp = flexio_sq->next;
	pthread_mutex_unlock(&p->lock);
	fx_ring_wait(&flexio_sq->ringing); /* a doorbell of device code that found the SQ before the unlink */
	hw_eth_sq_destroy(flexio_sq->hw);
	fx_wq_common_undo(flexio_sq->cq, flexio_sq->pd, flexio_sq->sqn);
	free(flexio_sq);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_sq_get_wq_num(struct flexio_sq *sq)
{
	return sq != NULL ? sq->sqn : 0;
}

int fx_eth_ring(struct flexio_process *p, uint32_t qnum, uint32_t pi)
{
	struct flexio_sq *sq;
	enum hw_status st;

	pthread_mutex_lock(&p->lock);
	for (sq = p->sqs; sq != NULL && sq->sqn != qnum; sq = sq->next)
		;
	if (sq != NULL)
		__atomic_add_fetch(&sq->ringing, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&p->lock);
	if (sq == NULL)
		return 1;
	/* The port sends now, as host code: the frame may land in another process's DPA memory. */
	fx_iso_host();
	__atomic_store_n(&sq->dbrec[1], htobe32(pi & 0xffffu), __ATOMIC_RELEASE);
	st = hw_eth_sq_ring(sq->hw, pi & 0xffffu);
	__atomic_sub_fetch(&sq->ringing, 1, __ATOMIC_ACQ_REL);
	fx_iso_device(p);
	if (st != HW_OK) {
		BASE_ERR("SQ doorbell of SQ %#x refused (in error, or a producer index more than a ring ahead)", qnum);
		return -1;
	}
	return 0;
}

/* ---- RQs ---- */

/* The RQ's TIR, made through DevX as a program would (a direct TIR naming rqn). */
static struct mlx5dv_devx_obj *fx_tir_create(struct ibv_context *ctx, uint32_t rqn)
{
	uint8_t in[FX_TIR_IN_BYTES] = { 0 }, out[FX_TIR_OUT_BYTES] = { 0 };
	uint16_t op = htobe16(FX_PRM_CREATE_TIR);
	uint32_t inline_rqn = htobe32(rqn & 0xffffffu);

	memcpy(in, &op, sizeof(op));
	memcpy(in + 0x20 + 0x1c, &inline_rqn, sizeof(inline_rqn)); /* tirc.inline_rqn; disp_type 0: direct */
	return mlx5dv_devx_obj_create(ctx, in, sizeof(in), out, sizeof(out));
}

static flexio_status fx_rq_build(struct flexio_process *p, const struct flexio_wq_attr *a, struct flexio_rq *rq)
{
	uint32_t stride = a->log_wq_stride != 0 ? a->log_wq_stride : FX_RQ_LOG_STRIDE_DEFAULT;
	struct hw_eth_rq_attr ha = { .log_size = a->log_wq_depth, .log_stride = stride,
				     .ring = (void *)(uintptr_t)a->wq_ring_qmem.daddr,
				     .dbrec = (uint32_t *)(uintptr_t)a->wq_dbr_qmem.daddr };

	if (stride < HW_ETH_RQ_LOG_STRIDE_MIN || stride > HW_ETH_RQ_LOG_STRIDE_MAX ||
	    a->wq_dbr_qmem.memtype != FLEXIO_MEMTYPE_DPA ||
	    !fx_dev_span(p, a->wq_ring_qmem.daddr, 1ull << (a->log_wq_depth + stride), 16) ||
	    !fx_dev_span(p, a->wq_dbr_qmem.daddr, 8, 8)) {
		BASE_ERR("the RQ ring (log stride 4..10, 16-aligned) and its doorbell record (8 bytes) must lie in DPA "
			 "memory of this process");
		return FLEXIO_STATUS_FAILED;
	}
	ha.rqn = rq->rqn;
	ha.pd = rq->pd;
	ha.cq = fx_cq_hw(rq->cq);
	if (hw_eth_rq_create(&ha, &rq->hw) != HW_OK) {
		BASE_ERR("the device refused the RQ");
		return FLEXIO_STATUS_FAILED;
	}
	rq->tir = fx_tir_create(p->ibv_ctx, rq->rqn);
	if (rq->tir == NULL) {
		BASE_ERR("the RQ's TIR could not be made (DevX CREATE_TIR: errno %d)", errno);
		hw_eth_rq_destroy(rq->hw);
		return FLEXIO_STATUS_FAILED;
	}
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_rq_create(struct flexio_process *process, struct ibv_context *ibv_ctx, uint32_t cq_num,
			       const struct flexio_wq_attr *fattr, struct flexio_rq **flexio_rq_ptr)
{
	struct flexio_rq *rq;

	(void)ibv_ctx;
	if (flexio_rq_ptr != NULL)
		*flexio_rq_ptr = NULL;
	if (process == NULL || fattr == NULL || flexio_rq_ptr == NULL) {
		BASE_ERR("invalid argument (process, attributes, RQ pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return FLEXIO_STATUS_FAILED;
	rq->proc = process;
	if (fx_wq_common(process, cq_num, fattr, &rq->cq, &rq->pd, &rq->rqn) != FLEXIO_STATUS_SUCCESS)
		goto err;
	if (fx_rq_build(process, fattr, rq) != FLEXIO_STATUS_SUCCESS)
		goto err_common;
	pthread_mutex_lock(&process->lock);
	rq->next = process->rqs;
	process->rqs = rq;
	pthread_mutex_unlock(&process->lock);
	*flexio_rq_ptr = rq;
	return FLEXIO_STATUS_SUCCESS;

err_common:
	fx_wq_common_undo(rq->cq, rq->pd, rq->rqn);
err:
	free(rq);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_rq_destroy(struct flexio_rq *flexio_rq)
{
	struct flexio_rq **pp;
	struct flexio_process *p;

	if (flexio_rq == NULL)
		return FLEXIO_STATUS_FAILED;
	if (mlx5dv_devx_obj_destroy(flexio_rq->tir) != 0) {
		BASE_ERR("RQ %#x: its TIR is still named by a steering rule: destroy the rule first", flexio_rq->rqn);
		return FLEXIO_STATUS_FAILED;
	}
	p = flexio_rq->proc;
	pthread_mutex_lock(&p->lock);
	for (pp = &p->rqs; *pp != NULL && *pp != flexio_rq; pp = &(*pp)->next)
		;
	if (*pp == flexio_rq)
		*pp = flexio_rq->next;
	pthread_mutex_unlock(&p->lock);
	hw_eth_rq_destroy(flexio_rq->hw);
	fx_wq_common_undo(flexio_rq->cq, flexio_rq->pd, flexio_rq->rqn);
	free(flexio_rq);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_rq_get_wq_num(struct flexio_rq *rq)
{
	return rq != NULL ? rq->rqn : 0;
}

struct mlx5dv_devx_obj *flexio_rq_get_tir(struct flexio_rq *rq)
{
	return rq != NULL ? rq->tir : NULL;
}

/* Process destroy: what the program left; an RQ whose TIR a rule still names keeps its TIR. */
void fx_eth_fini(struct flexio_process *p)
{
	while (p->sqs != NULL)
		(void)flexio_sq_destroy(p->sqs);
	while (p->rqs != NULL) {
		struct flexio_rq *rq = p->rqs;

		if (flexio_rq_destroy(rq) == FLEXIO_STATUS_SUCCESS)
			continue;
		p->rqs = rq->next; /* its TIR stays for the rule; the RQ goes (frames to it are dropped) */
		hw_eth_rq_destroy(rq->hw);
		fx_wq_common_undo(rq->cq, rq->pd, rq->rqn);
		free(rq);
	}
}
