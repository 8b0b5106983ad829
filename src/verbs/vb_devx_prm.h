/*
 * vb_devx_prm — what the DevX object files share: reading and writing PRM
 * command layouts (big-endian, fields given by byte offset and bit position
 * as mlx5_ifc.h counts them), the command statuses, and the context's
 * registries of umems and DevX queues by number.
 *
 * A command the device refuses gets the card's status and a syndrome in
 * out and fails with EREMOTEIO, as the kernel answers a DevX command whose
 * status is not OK; a call the kernel itself refuses (short buffers, an
 * object of another kind) is EINVAL with out untouched.
 */
#ifndef VB_DEVX_PRM_H
#define VB_DEVX_PRM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vb_int.h"

/* Command statuses (byte 0 of every answer). */
#define VB_STAT_OK 0x0
#define VB_STAT_BAD_OP 0x2
#define VB_STAT_BAD_PARAM 0x3
#define VB_STAT_BAD_RES 0x5
#define VB_STAT_BAD_RES_STATE 0x9
#define VB_STAT_BAD_QP_STATE 0x10

/* Syndromes (bytes 4..7) of softdpu's refusals: each names the check that failed. */
#define VB_SYND_BAD_OP 0x5d0c0001u	  /* an opcode this call does not take */
#define VB_SYND_CQ_SIZE 0x5d0c0021u	  /* log_cq_size or cqe_sz out of range */
#define VB_SYND_UMEM 0x5d0c0022u	  /* no umem of that id, or without valid bit (physical pages) */
#define VB_SYND_UMEM_SHORT 0x5d0c0023u	  /* the umem ends before the queue or record does */
#define VB_SYND_CQ_BUSY 0x5d0c0024u	  /* a QP still reports to the CQ */
#define VB_SYND_QP_TYPE 0x5d0c0031u	  /* st other than RC */
#define VB_SYND_QP_PD 0x5d0c0032u	  /* no PD of that number */
#define VB_SYND_QP_CQ 0x5d0c0033u	  /* no DevX CQ of that number on the context */
#define VB_SYND_QP_SIZE 0x5d0c0034u	  /* log sizes or stride out of range */
#define VB_SYND_QP_RQ_TYPE 0x5d0c0035u	  /* no receive queue, or no send queue: not yet */
#define VB_SYND_QP_STATE 0x5d0c0036u	  /* the transition does not start from the QP's state */
#define VB_SYND_QP_RNR 0x5d0c0037u	  /* RNR values out of range */
#define VB_SYND_QP_SRQ 0x5d0c0038u	  /* rq_type SRQ: no RMP of that number on the context */
#define VB_SYND_RMP_TYPE 0x5d0c0081u	  /* a striding WQ, or WQEs without the next segment */
#define VB_SYND_RMP_SIZE 0x5d0c0082u	  /* log_wq_sz or log_wq_stride out of range */
#define VB_SYND_RMP_PD 0x5d0c0083u	  /* no PD of that number */
#define VB_SYND_RMP_STATE 0x5d0c0084u	  /* a state other than RDY, or not the RMP's */
#define VB_SYND_RMP_LWM 0x5d0c0085u	  /* lwm above the ring or the WQEs posted */
#define VB_SYND_MKEY_MODE 0x5d0c0071u	  /* an access mode, QP binding, free or whole-space key not here */
#define VB_SYND_MKEY_LEN 0x5d0c0072u	  /* no length, or translations that cover less than it */
#define VB_SYND_MKEY_ENTRY 0x5d0c0073u	  /* a translation outside its key, or a key of another domain or process */
#define VB_SYND_DCT_SRQ 0x5d0c0041u	  /* no SRQ of that number on the context */
#define VB_SYND_DCT_CQ 0x5d0c0042u	  /* no CQ of that number on the context */
#define VB_SYND_DCT_PD 0x5d0c0043u	  /* no PD of that number */
#define VB_SYND_DCT_PORT 0x5d0c0044u	  /* a port or GID index the device has not */
#define VB_SYND_DCT_STATE 0x5d0c0045u	  /* DRAIN_DCT of a DCT already draining or drained */

static inline uint32_t vb_prm_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t vb_prm_be64(const uint8_t *p)
{
	return (uint64_t)vb_prm_be32(p) << 32 | vb_prm_be32(p + 4);
}

static inline void vb_prm_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The low 24 bits of the big-endian word at p (QPNs, CQNs, PDs, PSNs). */
static inline uint32_t vb_prm_u24(const uint8_t *p)
{
	return vb_prm_be32(p) & 0xffffffu;
}

static inline uint16_t vb_prm_opcode(const void *in)
{
	const uint8_t *i = in;

	return (uint16_t)(i[0] << 8 | i[1]);
}

/* The answer of a refused command: status and syndrome in out (what fits), EREMOTEIO. */
static inline int vb_devx_refuse(void *out, size_t outlen, uint8_t status, uint32_t syndrome)
{
	uint8_t *o = out;

	if (o != NULL && outlen >= 1)
		o[0] = status;
	if (o != NULL && outlen >= 8)
		vb_prm_put32(o + 4, syndrome);
	return EREMOTEIO;
}

/*
 * The umem id names on ctx, with [off, off + len) inside it: a user taken
 * (vb_devx_umem_put gives it back). 0, or the refusal's errno with out
 * filled.
 */
int vb_devx_umem_take(struct vb_context *ctx, uint32_t id, uint64_t off, uint64_t len, struct vb_umem **um,
		      void *out, size_t outlen);
void vb_devx_umem_put(struct vb_umem *um);

/* The domain pdn names, held (hw_pd_free gives it back), if it is this context's or nobody's; else NULL. */
struct hw_pd *vb_devx_pd_get(struct vb_context *ctx, uint32_t pdn);

/* The context's DevX queues by kind and number (under the context's lock). */
void vb_devx_queue_add(struct vb_context *ctx, struct mlx5dv_devx_obj *obj);
/* EINVAL (nothing changed) for a CQ a QP still reports to: the card answers BAD_RES_STATE, the kernel EINVAL. */
int vb_devx_queue_del(struct vb_context *ctx, struct mlx5dv_devx_obj *obj);
struct mlx5dv_devx_obj *vb_devx_queue_find(struct vb_context *ctx, enum vb_devx_kind kind, uint32_t num);

/*
 * A CQ a DevX command names (vb_devx_named.c): a DevX CQ of the context or
 * a verbs one, held until put. take: 0, or ENOENT when the context has none
 * of that number.
 */
struct vb_devx_cqref {
	struct mlx5dv_devx_obj *devx;
	struct vb_cq *vcq;
	struct hw_cq *hw;
};
int vb_devx_cqref_take(struct vb_context *ctx, uint32_t cqn, struct vb_devx_cqref *r);
void vb_devx_cqref_put(struct vb_devx_cqref *r);
/* A verbs SRQ of the context by number (not XRC, not tag matching), held; NULL when none. */
struct vb_srq *vb_devx_srq_take(struct vb_context *ctx, uint32_t srqn);
void vb_devx_srq_put(struct vb_srq *srq);
/* At the context's close, after its DevX objects: the verbs CQs and SRQs leave its lists. */
void vb_named_close(struct vb_context *ctx);
/* A DCT's SRQ on a verbs CQ's list, so ibv_poll_cq finds the wr_id of its receives. */
void vb_devx_cq_srq_link(struct vb_cq *cq, struct vb_cq_srq *l);
void vb_devx_cq_srq_unlink(struct vb_cq *cq, struct vb_cq_srq *l);

/* The kinds' commands (vb_devx_cq.c, vb_devx_qp.c, vb_devx_dct.c): 0 or an errno value, obj filled on success. */
int vb_devx_cq_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		      struct mlx5dv_devx_obj *obj);
void vb_devx_cq_destroy(struct mlx5dv_devx_obj *obj);
/* A QP reporting to the CQ holds it (under the context's lock): its destroy is refused meanwhile. */
void vb_devx_cq_hold(struct mlx5dv_devx_obj *cq, int delta);
bool vb_devx_cq_busy(struct mlx5dv_devx_obj *cq);
struct hw_cq *vb_devx_cq_hw(struct mlx5dv_devx_obj *cq);
/*
 * The arm word a DevX CQ's record holds until the program arms it: no arm
 * writes it (bits outside sn, command and ci), so the device tells a first
 * arm of word 0 from none (vb_devx_evch.c).
 */
#define VB_DEVX_CQ_UNARMED 0xffffffffu
/* Affiliated event numbers (MLX5_EVENT_TYPE_*) an object's subscribers get. */
#define VB_EV_SRQ_CATAS 0x12	/* SRQ_CATAS_ERROR: accepted for an RMP, never raised */
#define VB_EV_SRQ_LAST_WQE 0x13 /* a QP on an RMP entered ERR */
#define VB_EV_SRQ_RQ_LIMIT 0x14 /* an RMP's limit crossed */
/* An object's affiliated event to its subscribers; the object goes: its subscriptions go (vb_devx_evch.c). */
void vb_devx_evch_obj_event(const struct mlx5dv_devx_obj *obj, uint16_t type, uint32_t num, bool srq);
void vb_devx_evch_obj_gone(const struct mlx5dv_devx_obj *obj);
int vb_devx_qp_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		      struct mlx5dv_devx_obj *obj);
void vb_devx_qp_destroy(struct mlx5dv_devx_obj *obj);
int vb_devx_qp_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
int vb_devx_qp_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
/* CREATE_MKEY, DESTROY_MKEY (a fence) and QUERY_MKEY (vb_devx_mkey.c). */
int vb_devx_mkey_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
			struct mlx5dv_devx_obj *obj);
void vb_devx_mkey_destroy(struct mlx5dv_devx_obj *obj);
int vb_devx_mkey_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
int vb_devx_dct_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		       struct mlx5dv_devx_obj *obj);
void vb_devx_dct_destroy(struct mlx5dv_devx_obj *obj);
/* DRAIN_DCT and ARM_DCT_FOR_KEY_VIOLATION (modify), QUERY_DCT (query). */
int vb_devx_dct_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
int vb_devx_dct_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);

/* RMPs (vb_devx_rmp.c). A QP receiving from one holds it (under the context's lock): its destroy is EBUSY meanwhile. */
struct hw_srq;
int vb_devx_rmp_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		       struct mlx5dv_devx_obj *obj);
void vb_devx_rmp_destroy(struct mlx5dv_devx_obj *obj);
int vb_devx_rmp_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
int vb_devx_rmp_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen);
void vb_devx_rmp_hold(struct mlx5dv_devx_obj *rmp, int delta);
/* The context's RMP of that number, held (vb_devx_rmp_hold(o, -1) lets go); NULL when none. */
struct mlx5dv_devx_obj *vb_devx_rmp_take(struct vb_context *ctx, uint32_t rmpn);
bool vb_devx_rmp_busy(struct mlx5dv_devx_obj *rmp);
struct hw_srq *vb_devx_rmp_hw(struct mlx5dv_devx_obj *rmp);

#endif
