/*
 * vb_devx_obj — mlx5dv_devx_obj_create/destroy: the PRM commands a program
 * sends the card to make objects of its own. Known here: CREATE_TIR
 * (a direct TIR over an RQ of hw_eth, the destination mlx5dv_dr rules name),
 * and ALLOC_FLOW_COUNTER (vb_devx_counter.c);
 * any other opcode fails as the card answers an opcode it does not know.
 *
 * The command and its answer are PRM layouts, big-endian: create_tir_in
 * (a 0x20-byte header, then the TIR context) and create_tir_out.
 */
#include <stdlib.h>
#include <string.h>

#include "hw_eth.h"
#include "vb_int.h"

#define VB_OP_CREATE_TIR 0x900
#define VB_OP_ALLOC_FLOW_COUNTER 0x939
#define VB_TIR_IN_SZ 0x110	  /* create_tir_in: header 0x20, tirc 0xf0 */
#define VB_TIR_OUT_SZ 0x10	  /* create_tir_out */
#define VB_TIRC 0x20		  /* the TIR context in create_tir_in */
#define VB_TIRC_DISP_TYPE 0x4	  /* top 4 bits of this byte */
#define VB_TIRC_INLINE_RQN 0x1c	  /* low 24 bits of this word */
#define VB_TIR_DISP_DIRECT 0
#define VB_TIR_DISP_INDIRECT 1

/* The command status of an answer (its byte 0), as the card writes it. */
#define VB_STAT_OK 0x0
#define VB_STAT_BAD_OP 0x2
#define VB_STAT_BAD_PARAM 0x3
/* Syndromes (bytes 4..7) of softdpu's refusals: any non-zero value tells the program "see status". */
#define VB_SYND_BAD_OP 0x5d0c0001u
#define VB_SYND_TIR_NO_RQ 0x5d0c0002u
#define VB_SYND_TIR_DISP 0x5d0c0003u

static uint32_t vb_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void vb_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes what of the status and syndrome fits into out (the card writes no more than outlen). */
static void vb_cmd_status(void *out, size_t outlen, uint8_t status, uint32_t syndrome)
{
	uint8_t *o = out;

	if (out == NULL || outlen < 1)
		return;
	o[0] = status;
	if (outlen >= 8)
		vb_put_be32(o + 4, syndrome);
}

/* The command failed: out says why, errno says how mlx5dv reports it. */
static struct mlx5dv_devx_obj *vb_cmd_fail(void *out, size_t outlen, uint8_t status, uint32_t syndrome, int err)
{
	vb_cmd_status(out, outlen, status, syndrome);
	errno = err;
	return NULL;
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
	rqn = vb_get_be32(tirc + VB_TIRC_INLINE_RQN) & 0xffffffu;
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
	vb_put_be32(out + 8, tirn & 0xffffffu);
	obj->dv = ctx->dev->dv;
	obj->magic = VB_MAGIC_DEVX_OBJ;
	obj->kind = VB_DEVX_TIR;
	obj->ctx = &ctx->vctx.context;
	obj->object_id = tirn;
	return obj;
}

struct mlx5dv_devx_obj *vb_dv_devx_obj_create(struct ibv_context *c, const void *in, size_t inlen, void *out,
					      size_t outlen)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	const uint8_t *i = in;
	uint16_t opcode;

	if (ctx == NULL || in == NULL || inlen < 2) {
		errno = EINVAL;
		return NULL;
	}
	opcode = (uint16_t)(i[0] << 8 | i[1]);
	if (opcode == VB_OP_CREATE_TIR)
		return vb_create_tir(ctx, in, inlen, out, outlen);
	if (opcode == VB_OP_ALLOC_FLOW_COUNTER)
		return vb_devx_counter_create(ctx, in, inlen, out, outlen); /* vb_devx_counter.c */
	return vb_cmd_fail(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP, EOPNOTSUPP);
}

int vb_dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	if (obj->kind == VB_DEVX_FLOW_COUNTER)
		return vb_devx_counter_destroy(obj);
	switch (hw_eth_tir_destroy(obj->object_id)) {
	case HW_OK:
		break;
	case HW_ERR_INVAL:	/* a steering rule still sends frames to it */
		return EBUSY;
	default:
		return EINVAL;
	}
	obj->magic = 0;
	free(obj);
	return 0;
}

