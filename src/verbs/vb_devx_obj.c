/*
 * vb_devx_obj — the DevX object calls: mlx5dv_devx_obj_create, _destroy,
 * _modify and _query, the PRM commands a program sends the card to make
 * objects of its own, and mlx5dv_devx_query_eqn. Objects known here:
 * CREATE_TIR (a direct TIR over an RQ of hw_eth, the destination mlx5dv_dr
 * rules name), ALLOC_FLOW_COUNTER (vb_devx_counter.c), CREATE_CQ
 * (vb_devx_cq.c) and CREATE_QP with its state commands (vb_devx_qp.c):
 * engine queues over the program's umem; CREATE_MKEY (vb_devx_mkey.c);
 * CREATE_DCT with DRAIN_DCT and QUERY_DCT (vb_devx_dct.c). This file
 * dispatches by opcode and keeps the context's umems and DevX queues by
 * number, as the card's command interface finds them.
 *
 * An opcode the device knows but that makes no object (a QP state command
 * sent to create, a create sent to modify) is BAD_OP with EREMOTEIO; an
 * opcode of an object not emulated is BAD_OP with EOPNOTSUPP, so a program
 * (and rdma-core's suite) can tell "not here" from "wrong".
 *
 * The TIR command and its answer are PRM layouts, big-endian: create_tir_in
 * (a 0x20-byte header, then the TIR context) and create_tir_out.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw_eth.h"
#include "vb_devx_prm.h"

#define VB_OP_CREATE_TIR 0x900
#define VB_OP_ALLOC_FLOW_COUNTER 0x939
#define VB_OP_CREATE_CQ 0x400
#define VB_OP_CREATE_QP 0x500
#define VB_OP_QP_FIRST 0x501	  /* DESTROY_QP .. QUERY_QP, INIT2INIT: the QP's own commands */
#define VB_OP_QP_LAST 0x50e
#define VB_OP_QUERY_QP 0x50b
#define VB_OP_CREATE_MKEY 0x200
#define VB_OP_QUERY_MKEY 0x201
#define VB_OP_DESTROY_MKEY 0x202
#define VB_OP_CREATE_DCT 0x710
#define VB_OP_DCT_FIRST 0x711	  /* DESTROY_DCT .. ARM_DCT_FOR_KEY_VIOLATION: a DCT's own commands */
#define VB_OP_DCT_LAST 0x714
#define VB_TIR_IN_SZ 0x110	  /* create_tir_in: header 0x20, tirc 0xf0 */
#define VB_TIR_OUT_SZ 0x10	  /* create_tir_out */
#define VB_TIRC 0x20		  /* the TIR context in create_tir_in */
#define VB_TIRC_DISP_TYPE 0x4	  /* top 4 bits of this byte */
#define VB_TIRC_INLINE_RQN 0x1c	  /* low 24 bits of this word */
#define VB_TIR_DISP_DIRECT 0
#define VB_TIR_DISP_INDIRECT 1

#define VB_SYND_TIR_NO_RQ 0x5d0c0002u
#define VB_SYND_TIR_DISP 0x5d0c0003u

/* The command failed: out says why, errno says how mlx5dv reports it. */
static struct mlx5dv_devx_obj *vb_cmd_fail(void *out, size_t outlen, uint8_t status, uint32_t syndrome, int err)
{
	(void)vb_devx_refuse(out, outlen, status, syndrome);
	errno = err;
	return NULL;
}

int vb_devx_umem_take(struct vb_context *ctx, uint32_t id, uint64_t off, uint64_t len, struct vb_umem **um,
		      void *out, size_t outlen)
{
	struct vb_umem *u;

	pthread_mutex_lock(&ctx->lock);
	for (u = ctx->umems; u != NULL && u->umem.umem_id != id; u = u->next)
		;
	if (u != NULL && off <= u->size && len <= u->size - off)
		atomic_fetch_add(&u->users, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (u == NULL)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM);
	if (off > u->size || len > u->size - off)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM_SHORT);
	*um = u;
	return 0;
}

struct hw_pd *vb_devx_pd_get(struct vb_context *ctx, uint32_t pdn)
{
	struct hw_pd *pd = hw_pd_get(pdn); /* this process's domains only */

	if (pd != NULL && hw_pd_owner(pd) != NULL && hw_pd_owner(pd) != ctx) {
		hw_pd_free(pd);
		pd = NULL;
	}
	return pd;
}

void vb_devx_umem_put(struct vb_umem *um)
{
	if (um != NULL)
		atomic_fetch_sub(&um->users, 1);
}

void vb_devx_queue_add(struct vb_context *ctx, struct mlx5dv_devx_obj *obj)
{
	pthread_mutex_lock(&ctx->lock);
	obj->next = ctx->devx_queues;
	ctx->devx_queues = obj;
	pthread_mutex_unlock(&ctx->lock);
}

int vb_devx_queue_del(struct vb_context *ctx, struct mlx5dv_devx_obj *obj)
{
	pthread_mutex_lock(&ctx->lock);
	/* Under the lock a QP being created finds and holds its CQs with. */
	if (obj->kind == VB_DEVX_CQ && vb_devx_cq_busy(obj)) {
		pthread_mutex_unlock(&ctx->lock);
		return EINVAL;
	}
	for (struct mlx5dv_devx_obj **pp = &ctx->devx_queues; *pp != NULL; pp = &(*pp)->next)
		if (*pp == obj) {
			*pp = obj->next;
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* The caller holds the context's lock while it uses what it found. */
struct mlx5dv_devx_obj *vb_devx_queue_find(struct vb_context *ctx, enum vb_devx_kind kind, uint32_t num)
{
	struct mlx5dv_devx_obj *o;

	for (o = ctx->devx_queues; o != NULL; o = o->next)
		if (o->kind == kind && o->object_id == num)
			break;
	return o;
}

static struct mlx5dv_devx_obj *vb_create_tir(struct vb_context *ctx, const uint8_t *in, size_t inlen,
					     uint8_t *out, size_t outlen)
{
	const uint8_t *tirc = in + VB_TIRC;
	struct mlx5dv_devx_obj *obj;
	uint32_t rqn, tirn;
	uint8_t disp;

	if (inlen < VB_TIR_IN_SZ || out == NULL || outlen < VB_TIR_OUT_SZ) {
		errno = EINVAL;
		return NULL;
	}
	disp = tirc[VB_TIRC_DISP_TYPE] >> 4;
	if (disp != VB_TIR_DISP_DIRECT)	/* an indirect TIR spreads over an RQ table: none here */
		return vb_cmd_fail(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_TIR_DISP,
				   disp == VB_TIR_DISP_INDIRECT ? EOPNOTSUPP : EINVAL);
	rqn = vb_prm_u24(tirc + VB_TIRC_INLINE_RQN);
	obj = calloc(1, sizeof(*obj));
	if (obj == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	switch (hw_eth_tir_create(rqn, &tirn)) {
	case HW_OK:
		break;
	case HW_ERR_NOMEM:
		free(obj);
		errno = ENOMEM;
		return NULL;
	default:		/* HW_ERR_KEY: no RQ of that number */
		free(obj);
		return vb_cmd_fail(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_TIR_NO_RQ, EINVAL);
	}
	memset(out, 0, VB_TIR_OUT_SZ);
	vb_prm_put32(out + 8, tirn & 0xffffffu);
	obj->dv = ctx->dev->dv;
	obj->magic = VB_MAGIC_DEVX_OBJ;
	obj->kind = VB_DEVX_TIR;
	obj->ctx = &ctx->vctx.context;
	obj->object_id = tirn;
	return obj;
}

/* The engine part of a queue goes; the handle stays (priv NULL) for the program's destroy. */
static void vb_devx_queue_drop(struct mlx5dv_devx_obj *o)
{
	if (o->kind == VB_DEVX_CQ)
		vb_devx_cq_destroy(o);
	else if (o->kind == VB_DEVX_MKEY)
		vb_devx_mkey_destroy(o);
	else if (o->kind == VB_DEVX_DCT)
		vb_devx_dct_destroy(o);
	else
		vb_devx_qp_destroy(o);
	o->priv = NULL;
	o->ctx = NULL;
}

void vb_devx_close(struct vb_context *ctx)
{
	struct mlx5dv_devx_obj *o;

	/* QPs and DCTs first: a CQ goes once nothing reports to it; keys before the umems they lie in. */
	for (o = ctx->devx_queues; o != NULL; o = o->next)
		if (o->kind == VB_DEVX_QP || o->kind == VB_DEVX_DCT || o->kind == VB_DEVX_MKEY)
			vb_devx_queue_drop(o);
	for (o = ctx->devx_queues; o != NULL; o = o->next)
		if (o->kind == VB_DEVX_CQ)
			vb_devx_queue_drop(o);
	ctx->devx_queues = NULL;
	vb_named_close(ctx); /* after the DCTs and QPs: none holds a verbs CQ or SRQ any more */
	for (struct vb_umem *u = ctx->umems; u != NULL; u = u->next)
		u->ctx = NULL; /* deregistered with its context */
	ctx->umems = NULL;
}

/* A CQ or QP: the kind's file fills the object, which then joins the context's queues. */
static struct mlx5dv_devx_obj *vb_create_queue(struct vb_context *ctx, uint16_t opcode, const uint8_t *in,
					       size_t inlen, uint8_t *out, size_t outlen)
{
	struct mlx5dv_devx_obj *obj = calloc(1, sizeof(*obj));
	int rc;

	if (obj == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	obj->dv = ctx->dev->dv;
	obj->ctx = &ctx->vctx.context;
	if (opcode == VB_OP_CREATE_CQ)
		rc = vb_devx_cq_create(ctx, in, inlen, out, outlen, obj);
	else if (opcode == VB_OP_CREATE_MKEY)
		rc = vb_devx_mkey_create(ctx, in, inlen, out, outlen, obj);
	else if (opcode == VB_OP_CREATE_DCT)
		rc = vb_devx_dct_create(ctx, in, inlen, out, outlen, obj);
	else
		rc = vb_devx_qp_create(ctx, in, inlen, out, outlen, obj);
	if (rc != 0) {
		free(obj);
		errno = rc;
		return NULL;
	}
	obj->magic = VB_MAGIC_DEVX_OBJ;
	vb_devx_queue_add(ctx, obj);
	return obj;
}

struct mlx5dv_devx_obj *vb_dv_devx_obj_create(struct ibv_context *c, const void *in, size_t inlen, void *out,
					      size_t outlen)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	uint16_t opcode;

	if (ctx == NULL || in == NULL || inlen < 2) {
		errno = EINVAL;
		return NULL;
	}
	opcode = vb_prm_opcode(in);
	if (opcode == VB_OP_CREATE_TIR)
		return vb_create_tir(ctx, in, inlen, out, outlen);
	if (opcode == VB_OP_ALLOC_FLOW_COUNTER)
		return vb_devx_counter_create(ctx, in, inlen, out, outlen); /* vb_devx_counter.c */
	if (opcode == VB_OP_CREATE_CQ || opcode == VB_OP_CREATE_QP || opcode == VB_OP_CREATE_MKEY ||
	    opcode == VB_OP_CREATE_DCT)
		return vb_create_queue(ctx, opcode, in, inlen, out, outlen);
	/* A command of an existing QP, DCT or key */
	if ((opcode >= VB_OP_QP_FIRST && opcode <= VB_OP_QP_LAST) ||
	    (opcode >= VB_OP_DCT_FIRST && opcode <= VB_OP_DCT_LAST) || opcode == VB_OP_QUERY_MKEY ||
	    opcode == VB_OP_DESTROY_MKEY)
		return vb_cmd_fail(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP, EREMOTEIO);
	return vb_cmd_fail(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP, EOPNOTSUPP);
}

static int vb_destroy_tir(struct mlx5dv_devx_obj *obj)
{
	switch (hw_eth_tir_destroy(obj->object_id)) {
	case HW_OK:
		return 0;
	case HW_ERR_INVAL:	/* a steering rule still sends frames to it */
		return EBUSY;
	default:
		return EINVAL;
	}
}

static bool vb_devx_is_queue(const struct mlx5dv_devx_obj *obj)
{
	return obj->kind == VB_DEVX_CQ || obj->kind == VB_DEVX_QP || obj->kind == VB_DEVX_MKEY ||
	       obj->kind == VB_DEVX_DCT;
}

int vb_dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	int rc = 0;

	if (obj->kind == VB_DEVX_FLOW_COUNTER)
		return vb_devx_counter_destroy(obj);
	/* A queue leaves the context's numbers first, so no command finds it half gone. */
	if (obj->kind == VB_DEVX_TIR)
		rc = vb_destroy_tir(obj);
	else if (obj->priv != NULL) /* NULL: it went with its context (vb_devx_close) */
		rc = vb_devx_queue_del(vb_ctx(obj->ctx), obj);
	if (rc != 0)
		return rc;
	if (vb_devx_is_queue(obj) && obj->priv != NULL) {
		if (obj->kind == VB_DEVX_CQ)
			vb_devx_cq_destroy(obj);
		else if (obj->kind == VB_DEVX_MKEY)
			vb_devx_mkey_destroy(obj);
		else if (obj->kind == VB_DEVX_DCT)
			vb_devx_dct_destroy(obj);
		else
			vb_devx_qp_destroy(obj);
	}
	obj->magic = 0;
	free(obj);
	return 0;
}

/* mlx5dv_devx_obj_modify: the QP state commands, DRAIN_DCT; any other is BAD_OP (the other kinds take none here). */
static int vb_dv_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
				 size_t outlen)
{
	if (in == NULL || inlen < 2 || out == NULL || (vb_devx_is_queue(obj) && obj->priv == NULL))
		return EINVAL;	/* a queue whose context was closed */
	if (obj->kind == VB_DEVX_DCT)
		return vb_devx_dct_modify(obj, in, inlen, out, outlen);
	if (obj->kind != VB_DEVX_QP)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	return vb_devx_qp_modify(obj, in, inlen, out, outlen);
}

/* mlx5dv_devx_obj_query: QUERY_FLOW_COUNTER of a counter (vb_devx_counter.c), QUERY_QP of a QP, QUERY_DCT of a DCT. */
int vb_dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen)
{
	if (obj->kind == VB_DEVX_FLOW_COUNTER)
		return vb_devx_counter_query(obj, in, inlen, out, outlen);
	if (in == NULL || inlen < 2 || out == NULL || (vb_devx_is_queue(obj) && obj->priv == NULL))
		return EINVAL;	/* a queue whose context was closed */
	if (obj->kind == VB_DEVX_MKEY && vb_prm_opcode(in) == VB_OP_QUERY_MKEY)
		return vb_devx_mkey_query(obj, in, inlen, out, outlen);
	if (obj->kind == VB_DEVX_DCT)
		return vb_devx_dct_query(obj, in, inlen, out, outlen);
	if (obj->kind != VB_DEVX_QP || vb_prm_opcode(in) != VB_OP_QUERY_QP)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	return vb_devx_qp_query(obj, in, inlen, out, outlen);
}

/*
 * The EQ a CQ names for its events: one per completion vector, numbered as
 * the vector (the device's events go to the CQ's own bell; the number is
 * what cqc.c_eqn carries).
 */
static int vb_dv_devx_query_eqn(struct ibv_context *c, uint32_t vector, uint32_t *eqn)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	if (ctx == NULL || eqn == NULL || vector >= (uint32_t)c->num_comp_vectors)
		return EINVAL;
	*eqn = vector;
	return 0;
}

const struct vb_dv_devx_ops vb_dv_devx_ops_impl = {
	.obj_modify = vb_dv_devx_obj_modify,
	.query_eqn = vb_dv_devx_query_eqn,
	.evch_create = vb_evch_create,
	.evch_destroy = vb_evch_destroy,
	.evch_subscribe = vb_evch_subscribe,
	.evch_get_event = vb_evch_get_event,
};
