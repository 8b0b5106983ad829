/*
 * DevX CQs and RC QPs over the program's umem, built from the PRM's
 * commands (mlx5_ifc.h layouts), driven by WQEs, records and UAR writes of
 * the test's own, and an ibv RC QP as their peer: what the
 * test_verbs_devx_* programs make.
 */
#ifndef SOFTDPU_TEST_DEVX_FIXTURE_H_
#define SOFTDPU_TEST_DEVX_FIXTURE_H_

#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
static inline void prm_set(uint8_t *b, unsigned int off, unsigned int bits, uint64_t v)
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

static inline uint64_t prm_get(const uint8_t *b, unsigned int off, unsigned int bits)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bits; i++)
		v = v << 1 | ((b[(off + i) / 8] >> (7 - (off + i) % 8)) & 1);
	return v;
}

static inline uint8_t status_of(const uint8_t *out)
{
	return out[0];
}

static inline uint32_t syndrome_of(const uint8_t *out)
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

static inline void dx_free(void *arg)
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

static inline struct ibv_context *open_devx(void)
{
	struct mlx5dv_context_attr a = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? mlx5dv_open_device(l[0], &a) : NULL;

	if (l != NULL)
		ibv_free_device_list(l);
	return c;
}

/* The context, PD, UAR, umems (qp_len bytes for the rings) and data buffer; freed when the case ends. */
static inline void dx_open(struct dx **dp, size_t qp_len)
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
static inline void cq_cmd(struct dx *d, uint8_t *in, uint32_t eqn)
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

/* The cs_res the next qp_cmd asks (responder scatter to CQE; 0: off). */
static uint8_t dx_cs_res;

/* CREATE_QP: RC, RQ of 2^LOG_RQ 16-byte WQEs at qp_mem, the SQ after it, the record at dbr + 8. */
static inline void qp_cmd(struct dx *d, uint8_t *in, uint32_t cqn)
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
	prm_set(in, QPC + 0x638, 8, dx_cs_res);	/* cs_res */
	prm_set(in, QPC + 0x500, 64, 8);	/* dbr_addr */
	prm_set(in, QPC + 0x683, 1, 1);		/* dbr_umem_valid */
	prm_set(in, QPC + 0x720, 32, d->dbr_um->umem_id);
	prm_set(in, 0x800, 64, 0);		/* wq_umem_offset */
	prm_set(in, 0x840, 32, d->qp_um->umem_id);
	prm_set(in, 0x860, 1, 1);		/* wq_umem_valid */
}

static inline void dx_create(struct dx *d)
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

/* The GID the next INIT2RTR addresses (NULL: this machine's port, GID 0). */
static const union ibv_gid *dx_dgid;

/* A state command; its status in out, the call's errno value returned. */
static inline int dx_modify(struct dx *d, uint16_t op, uint32_t dest, uint8_t *out)
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
		/* A RoCE port routes by GID: by default the destination is this machine's port, GID 0. */
		if (dx_dgid != NULL)
			g = *dx_dgid;
		else if (ibv_query_gid(d->c, 1, 0, &g) != 0)
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

/* DevX mkeys (mlx5_ifc.h create_mkey_in; bit offsets). */
#define OP_CREATE_MKEY 0x200
#define OP_QUERY_MKEY 0x201
#define OP_DESTROY_MKEY 0x202
#define MKEY_IN 0x110		/* through the context; the translations follow */
#define MKEY_QUERY_OUT 0x50
#define MKC 0x80		/* memory_key_mkey_entry */
#define MK_PA 0
#define MK_MTT 1
#define MK_KLM 2
#define MK_KSM 3
/* The rights of an mkey context (lr, lw, rr, rw, a). */
#define MK_LR 1u
#define MK_LW 2u
#define MK_RR 4u
#define MK_RW 8u
#define MK_A 16u
#define MK_ALL (MK_LR | MK_LW | MK_RR | MK_RW | MK_A)

/* CREATE_MKEY's fixed part: mode, rights, qpn 0xffffff, the tag, pd, start_addr and len. */
static inline void mkey_cmd(uint8_t *in, unsigned int mode, unsigned int acc, uint32_t pdn, uint8_t tag,
			    uint64_t start, uint64_t len)
{
	memset(in, 0, MKEY_IN);
	prm_set(in, 0, 16, OP_CREATE_MKEY);
	prm_set(in, MKC + 0x3, 3, mode >> 2);	/* access_mode_4_2 */
	prm_set(in, MKC + 0x16, 2, mode & 3);	/* access_mode_1_0 */
	prm_set(in, MKC + 0x11, 1, (acc & MK_A) != 0);
	prm_set(in, MKC + 0x12, 1, (acc & MK_RW) != 0);
	prm_set(in, MKC + 0x13, 1, (acc & MK_RR) != 0);
	prm_set(in, MKC + 0x14, 1, (acc & MK_LW) != 0);
	prm_set(in, MKC + 0x15, 1, (acc & MK_LR) != 0);
	prm_set(in, MKC + 0x20, 24, 0xffffff);	/* qpn: no QP's key */
	prm_set(in, MKC + 0x38, 8, tag);	/* mkey_7_0 */
	prm_set(in, MKC + 0x68, 24, pdn);
	prm_set(in, MKC + 0x80, 64, start);
	prm_set(in, MKC + 0xc0, 64, len);
}

/* An MTT key over umem bytes from off. */
static inline void mkey_cmd_umem(uint8_t *in, uint32_t umem_id, uint64_t off)
{
	prm_set(in, 0x61, 1, 1);		/* mkey_umem_valid */
	prm_set(in, 0x320, 32, umem_id);	/* mkey_umem_id */
	prm_set(in, 0x340, 64, off);		/* mkey_umem_offset */
}

/* in (room for MKEY_IN + 16 * n bytes): n KLMs (byte count, key, address), or KSM entries of 2^log_ent bytes. */
static inline void mkey_cmd_list(uint8_t *in, uint32_t n, const uint32_t *cnt, const uint32_t *key,
				 const uint64_t *addr, unsigned int log_ent)
{
	prm_set(in, MKC + 0x1a0, 32, n);	/* translations_octword_size */
	prm_set(in, MKC + 0x1db, 5, log_ent);	/* log_entity_size */
	prm_set(in, 0x300, 32, n);		/* translations_octword_actual_size */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = in + MKEY_IN + 16 * i;

		memset(e, 0, 16);
		prm_set(e, 0, 32, cnt != NULL ? cnt[i] : 0);
		prm_set(e, 0x20, 32, key[i]);
		prm_set(e, 0x40, 64, addr[i]);
	}
}

/* The key CREATE_MKEY made: its mkey_index << 8 | the tag the command named. */
static inline uint32_t mkey_of(const uint8_t *out, uint8_t tag)
{
	return (uint32_t)prm_get(out, 0x48, 24) << 8 | tag;
}

static inline void dx_up(struct dx *d, uint32_t dest)
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
static inline void dx_send_imm(struct dx *d, uint32_t len, uint32_t imm)
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
static inline void dx_poll(struct dx *d, struct mlx5_cqe64 *out)
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
	*out = *cqe; /* before the check: out is written on every path */
	CHECK(i < POLL_TRIES);
	d->cq_ci++;
	((volatile uint32_t *)(void *)d->dbr)[CQ_SET_CI] = htobe32(d->cq_ci & 0xffffff);
}

#define CQ_ARM_WORD 1 /* the CQ record's arm word */
#define UAR_CQ_DB 0x20 /* MLX5_CQ_DOORBELL in a UAR page */

/* The CQ armed as mlx5 arms it: the word (sn, NEXT, ci) into the record, then with the cqn into the UAR. */
static inline void dx_cq_arm(struct dx *d, uint32_t sn)
{
	uint32_t word = (sn & 3) << 28 | (d->cq_ci & 0xffffff);

	__atomic_store_n(&((uint32_t *)(void *)d->dbr)[CQ_ARM_WORD], htobe32(word), __ATOMIC_RELEASE);
	*(volatile uint64_t *)(void *)((uint8_t *)d->uar->base_addr + UAR_CQ_DB) =
		htobe64((uint64_t)word << 32 | d->cqn);
}

/* The DevX QP's side of a SEND with immediate: its send CQE, as the PRM lays it out. */
static inline void dx_check_req_cqe(struct dx *d, uint16_t wqe_counter)
{
	struct mlx5_cqe64 c = {0};

	dx_poll(d, &c);

	CHECK(mlx5dv_get_cqe_opcode(&c) == MLX5_CQE_REQ);
	CHECK(be16toh(c.wqe_counter) == wqe_counter);
	CHECK((be32toh(c.sop_drop_qpn) & 0xffffff) == d->qpn);
	CHECK(be32toh(c.sop_drop_qpn) >> 24 == MLX5_OPCODE_SEND_IMM);
}

/* len bytes of the pattern seed, seed + 7, seed + 14, ... */
static inline void dx_fill(uint8_t *b, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* The DevX QP's peer: an ibv RC QP of the context on its own CQ, and a registered buffer. */
struct dx_peer {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[4096];
};

/* 0, or ENOMEM when an object was not made (dx_peer_close releases what was). */
static inline int dx_peer_open(struct dx_peer *p, struct ibv_context *c)
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

/* A receive of the whole of buf (wr_id 7). */
static inline int dx_peer_recv(struct dx_peer *p)
{
	struct ibv_sge s = {.addr = (uintptr_t)p->buf, .length = sizeof(p->buf), .lkey = p->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &s, .num_sge = 1}, *bad;

	return ibv_post_recv(p->qp, &wr, &bad);
}

/* Releases the peer's objects and frees it (a th_defer cleanup). */
static inline void dx_peer_close(void *arg)
{
	struct dx_peer *p = arg;

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

#endif
