/*
 * vb_devx_counter — DevX flow counters: ALLOC_FLOW_COUNTER through
 * mlx5dv_devx_obj_create makes one (a hw_counter, hw_counter.h),
 * mlx5dv_devx_obj_query with QUERY_FLOW_COUNTER reads it, and
 * mlx5dv_dr_action_create_flow_counter names it in steering rules.
 *
 * PRM layouts, big-endian: alloc_flow_counter_in (0x10 bytes: opcode,
 * flow_counter_bulk in byte 15) and alloc_flow_counter_out (the id in bytes
 * 8-11); query_flow_counter_in (0x20 bytes: clear in bit 31 and
 * num_of_counters in the low 16 bits of bytes 24-27, flow_counter_id in
 * bytes 28-31) and query_flow_counter_out (a 0x10-byte header, then
 * packets and octets, 8 bytes each). A bulk of counters, dumping to memory
 * and more than one counter a query are refused with the card's bad
 * parameter status (EINVAL).
 */
#include <stdlib.h>
#include <string.h>

#include "hw_counter.h"
#include "vb_int.h"

#define CTR_OP_QUERY 0x93b
#define CTR_ALLOC_IN_SZ 0x10
#define CTR_ALLOC_OUT_SZ 0x10
#define CTR_QUERY_IN_SZ 0x20
#define CTR_QUERY_OUT_SZ 0x20
#define CTR_HDR 0x10

#define CTR_STAT_BAD_OP 0x2
#define CTR_STAT_BAD_PARAM 0x3
#define CTR_SYND_BULK 0x5d0c0021u
#define CTR_SYND_QUERY 0x5d0c0022u
#define CTR_SYND_ID 0x5d0c0023u
#define CTR_SYND_OP 0x5d0c0024u

static uint32_t ctr_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void ctr_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void ctr_put64(uint8_t *p, uint64_t v)
{
	ctr_put32(p, (uint32_t)(v >> 32));
	ctr_put32(p + 4, (uint32_t)v);
}

/* The card's refusal: status and syndrome in out, as much as fits; errno EINVAL (EOPNOTSUPP for an opcode). */
static int ctr_refuse(uint8_t *out, size_t outlen, uint8_t status, uint32_t synd)
{
	if (out != NULL && outlen >= 8) {
		memset(out, 0, 8);
		out[0] = status;
		ctr_put32(out + 4, synd);
	}
	return status == CTR_STAT_BAD_OP ? EOPNOTSUPP : EINVAL;
}

struct mlx5dv_devx_obj *vb_devx_counter_create(struct vb_context *ctx, const uint8_t *in, size_t inlen,
					       uint8_t *out, size_t outlen)
{
	struct mlx5dv_devx_obj *obj;
	struct hw_counter *c;

	if (inlen < CTR_ALLOC_IN_SZ || out == NULL || outlen < CTR_ALLOC_OUT_SZ) {
		errno = EINVAL;
		return NULL;
	}
	if (in[15] != 0) { /* a bulk: one counter an object here */
		errno = ctr_refuse(out, outlen, CTR_STAT_BAD_PARAM, CTR_SYND_BULK);
		return NULL;
	}
	obj = calloc(1, sizeof(*obj));
	if (obj == NULL || hw_counter_alloc(&c) != HW_OK) {
		free(obj);
		errno = ENOMEM;
		return NULL;
	}
	memset(out, 0, CTR_ALLOC_OUT_SZ);
	ctr_put32(out + 8, hw_counter_id(c));
	obj->dv = ctx->dev->dv;
	obj->magic = VB_MAGIC_DEVX_OBJ;
	obj->kind = VB_DEVX_FLOW_COUNTER;
	obj->ctx = &ctx->vctx.context;
	obj->object_id = hw_counter_id(c);
	obj->hw = c;
	return obj;
}

int vb_devx_counter_destroy(struct mlx5dv_devx_obj *obj)
{
	if (atomic_load(&obj->users) != 0)
		return EBUSY; /* a steering action still counts into it */
	hw_counter_free(obj->hw);
	obj->magic = 0;
	free(obj);
	return 0;
}

int vb_devx_counter_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen)
{
	const uint8_t *i = in;
	uint64_t packets, bytes;
	uint32_t w;

	if (in == NULL || inlen < 2 || out == NULL)
		return EINVAL;
	if (obj->kind != VB_DEVX_FLOW_COUNTER || (uint16_t)(i[0] << 8 | i[1]) != CTR_OP_QUERY)
		return ctr_refuse(out, outlen, CTR_STAT_BAD_OP, CTR_SYND_OP);
	if (inlen < CTR_QUERY_IN_SZ || outlen < CTR_QUERY_OUT_SZ)
		return EINVAL;
	w = ctr_be32(i + 24);
	if ((w & 0x40000000u) || (w & 0xffffu) > 1) /* dump_to_memory, several counters */
		return ctr_refuse(out, outlen, CTR_STAT_BAD_PARAM, CTR_SYND_QUERY);
	if (ctr_be32(i + 28) != obj->object_id)
		return ctr_refuse(out, outlen, CTR_STAT_BAD_PARAM, CTR_SYND_ID);
	hw_counter_read(obj->hw, (w & 0x80000000u) != 0, &packets, &bytes);
	memset(out, 0, CTR_QUERY_OUT_SZ);
	ctr_put64((uint8_t *)out + CTR_HDR, packets);
	ctr_put64((uint8_t *)out + CTR_HDR + 8, bytes);
	return 0;
}
