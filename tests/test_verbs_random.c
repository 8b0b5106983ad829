/*
 * Thousands of random RC work requests between two processes, through the
 * public verbs API only, checked against a reference model of memory.
 *
 * Both processes derive the same sequence of operations from one seed
 * (WRITE, WRITE with immediate, SEND, SEND with immediate, READ,
 * compare-and-swap, fetch-and-add; random sizes, remote offsets, inline or
 * not, signalled or not, posted through ibv_post_send or the ibv_wr_*
 * builders) and each keeps the same model of the responder's region:
 *   - the requester (parent) checks every completion it asked for, the data
 *     each READ returned and the old value each atomic returned, then reads
 *     the whole region back and compares it with the model;
 *   - the responder (child) checks each receive completion (opcode, length,
 *     immediate) and each SEND's payload byte for byte, and at the end its
 *     region against its own copy of the model.
 *
 * A DC mode does the same from one DCI to several DCTs (one process): each
 * operation goes to a DCT picked from the seed, each DCT has its own region
 * and model, receives come from its SRQ; every completion, READ result,
 * atomic old value and SEND payload is checked, then every region against its
 * model byte for byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <sys/mman.h>

#include "harness.h"

#define REGION (1u << 20)    /* the responder's region the model mirrors */
#define MAX_MSG 16384u	     /* largest message */
#define MAX_INLINE 64u
#define RX_DEPTH 64u
#define BATCH_MAX 16u
#define CQ_DEPTH 256
#define OPS_DEFAULT 4000u
#define POLL_LIMIT_S 60	     /* liveness bound: a lost completion fails instead of hanging */

enum op_kind { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_READ, OP_CAS, OP_FA, OP_KINDS };

struct op {
	enum op_kind kind;
	uint32_t len;
	uint64_t roff;	/* offset in the responder's region */
	int inl;
	uint32_t imm;
	uint64_t cmp, val; /* CAS compare / swap; FA add in val */
};

/* What the peers tell each other over the socket. */
struct wire {
	uint32_t qpn;
	uint16_t lid;
	uint32_t rkey;
	uint64_t addr;
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t mem_len;
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t seed, uint64_t i, uint64_t k)
{
	return mix(seed ^ mix((i << 8) ^ k));
}

/* Byte j of operation i's payload. */
static uint8_t payload_byte(uint64_t seed, uint32_t i, uint32_t j)
{
	return (uint8_t)(rnd(seed, i, 1000 + j / 8) >> (8 * (j % 8)));
}

static void payload_fill(uint64_t seed, uint32_t i, uint8_t *p, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		p[j] = payload_byte(seed, i, j);
}

static uint32_t pick_len(uint64_t seed, uint32_t i)
{
	uint64_t r = rnd(seed, i, 1), c = r % 100;

	r >>= 8;
	if (c < 5)
		return 0;
	if (c < 45)
		return 1 + (uint32_t)(r % MAX_INLINE);
	if (c < 80)
		return 1 + (uint32_t)(r % 2048);
	return 1 + (uint32_t)(r % MAX_MSG);
}

/*
 * Operation i, given the model as it stands before it: a compare-and-swap
 * compares with the current value half of the time, so both outcomes occur.
 */
static void gen_op(uint64_t seed, uint32_t i, const uint8_t *model, struct op *o)
{
	memset(o, 0, sizeof(*o));
	o->kind = (enum op_kind)(rnd(seed, i, 0) % OP_KINDS);
	o->imm = (uint32_t)rnd(seed, i, 2);
	if (o->kind == OP_CAS || o->kind == OP_FA) {
		uint64_t cur;

		o->len = 8;
		o->roff = (rnd(seed, i, 3) % (REGION / 8)) * 8;
		memcpy(&cur, model + o->roff, 8);
		o->cmp = (rnd(seed, i, 4) & 1) ? cur : rnd(seed, i, 5);
		o->val = rnd(seed, i, 6);
		return;
	}
	o->len = pick_len(seed, i);
	if (o->kind == OP_READ && o->len == 0)
		o->len = 1;
	o->roff = rnd(seed, i, 3) % (REGION - o->len + 1);
	o->inl = o->kind != OP_READ && o->len <= MAX_INLINE && (rnd(seed, i, 7) & 1);
}

/* Applies operation i to the model; returns the old value of an atomic. */
static uint64_t model_apply(uint64_t seed, uint32_t i, const struct op *o, uint8_t *model)
{
	uint64_t old;

	switch (o->kind) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		payload_fill(seed, i, model + o->roff, o->len);
		return 0;
	case OP_CAS:
		memcpy(&old, model + o->roff, 8);
		if (old == o->cmp)
			memcpy(model + o->roff, &o->val, 8);
		return old;
	case OP_FA: {
		uint64_t nv;

		memcpy(&old, model + o->roff, 8);
		nv = old + o->val;
		memcpy(model + o->roff, &nv, 8);
		return old;
	}
	default:
		return 0;
	}
}

static int consumes_recv(enum op_kind k)
{
	return k == OP_SEND || k == OP_SEND_IMM || k == OP_WRITE_IMM;
}

static void region_init(uint8_t *p)
{
	for (uint32_t k = 0; k < REGION; k++)
		p[k] = (uint8_t)(k * 7 + 3);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One completion, or -1 after POLL_LIMIT_S seconds or on a poll error. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now_s() + POLL_LIMIT_S;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n == 1 ? 0 : -1;
	} while (now_s() < end);
	return -1;
}

static int sock_xfer(int fd, const void *out, void *in, size_t len)
{
	if (out != NULL && write(fd, out, len) != (ssize_t)len)
		return -1;
	if (in != NULL) {
		size_t got = 0;

		while (got < len) {
			ssize_t r = read(fd, (uint8_t *)in + got, len - got);

			if (r <= 0)
				return -1;
			got += (size_t)r;
		}
	}
	return 0;
}

static void side_close(struct side *s)
{
	if (s->qp != NULL)
		ibv_destroy_qp(s->qp);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

static int side_open(struct side *s, size_t mem_len, int ex)
{
	struct ibv_device **l;
	int n = 0;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	memset(s, 0, sizeof(*s));
	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		goto err;
	s->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (s->ctx == NULL)
		goto err;
	s->pd = ibv_alloc_pd(s->ctx);
	s->mem = aligned_alloc(4096, mem_len);
	s->mem_len = mem_len;
	if (s->pd == NULL || s->mem == NULL)
		goto err;
	memset(s->mem, 0, mem_len);
	s->mr = ibv_reg_mr(s->pd, s->mem, mem_len, access);
	s->cq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (s->mr == NULL || s->cq == NULL)
		goto err;
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 2 * BATCH_MAX, .max_recv_wr = RX_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	if (ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	}
	s->qp = ibv_create_qp_ex(s->ctx, &qa);
	if (s->qp == NULL)
		goto err;
	return 0;
err:
	side_close(s);
	return -1;
}

/* RESET -> INIT -> RTR -> RTS towards the peer, with the attributes rdma-core's RC examples use. */
static int side_connect(struct side *s, const struct wire *peer)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	if (ibv_query_port(s->ctx, 1, &pa) != 0)
		return -1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1; /* 10 us: the requester retries soon after a receive is posted */
	a.ah_attr.dlid = peer->lid;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1; /* RoCE: the peer's port, the same device's, by its GID 0 */
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_query_gid(s->ctx, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return -1;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7; /* the responder may lag: retry forever */
	a.sq_psn = 0;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(s->qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct wire side_wire(const struct side *s)
{
	struct ibv_port_attr pa;

	memset(&pa, 0, sizeof(pa));
	ibv_query_port(s->ctx, 1, &pa);
	return (struct wire){ .qpn = s->qp->qp_num, .lid = pa.lid, .rkey = s->mr->rkey,
			      .addr = (uintptr_t)s->mem };
}

/* ------------------------------------------------------------------ responder */

static int post_recv_slot(struct side *s, uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(s->mem + REGION + (size_t)slot * MAX_MSG), .length = MAX_MSG,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* Checks one receive of operation i; returns the number of differences. */
static uint32_t check_recv(struct side *s, uint64_t seed, uint32_t i, const struct op *o, const struct ibv_wc *wc)
{
	uint32_t bad = 0;
	enum ibv_wc_opcode want = o->kind == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	int imm = o->kind != OP_SEND;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != want || wc->byte_len != o->len) {
		fprintf(stderr, "op %u: receive status %d opcode %d len %u, want opcode %d len %u\n", i, wc->status,
			wc->opcode, wc->byte_len, want, o->len);
		return 1;
	}
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm || (imm && wc->imm_data != htobe32(o->imm))) {
		fprintf(stderr, "op %u: immediate flags %#x value %#x, want %#x\n", i, wc->wc_flags,
			be32toh(wc->imm_data), o->imm);
		return 1;
	}
	if (o->kind == OP_WRITE_IMM)
		return 0;
	const uint8_t *p = s->mem + REGION + (size_t)wc->wr_id * MAX_MSG;

	for (uint32_t j = 0; j < o->len; j++)
		bad += p[j] != payload_byte(seed, i, j);
	if (bad != 0)
		fprintf(stderr, "op %u: %u bytes of the SEND payload differ\n", i, bad);
	return bad != 0;
}

static int responder(int fd, uint64_t seed, uint32_t ops)
{
	struct side s;
	struct wire me, peer;
	uint8_t *model = malloc(REGION);
	uint32_t bad = 0, i;
	struct op o;
	struct ibv_wc wc;

	if (model == NULL || side_open(&s, REGION + (size_t)RX_DEPTH * MAX_MSG, 0) != 0)
		return 2;
	region_init(s.mem);
	region_init(model);
	me = side_wire(&s);
	if (sock_xfer(fd, &me, &peer, sizeof(me)) != 0 || side_connect(&s, &peer) != 0)
		return 3;
	for (uint32_t k = 0; k < RX_DEPTH; k++)
		if (post_recv_slot(&s, k) != 0)
			return 4;
	if (sock_xfer(fd, &me, NULL, 1) != 0) /* ready */
		return 5;
	for (i = 0; i < ops; i++) {
		gen_op(seed, i, model, &o);
		model_apply(seed, i, &o, model);
		if (!consumes_recv(o.kind))
			continue;
		if (poll_one(s.cq, &wc) != 0) {
			fprintf(stderr, "op %u: no receive completion\n", i);
			bad++;
			break;
		}
		bad += check_recv(&s, seed, i, &o, &wc);
		if (post_recv_slot(&s, (uint32_t)wc.wr_id) != 0)
			bad++;
	}
	if (i == ops && memcmp(s.mem, model, REGION) != 0) {
		fprintf(stderr, "responder: the region differs from the model\n");
		bad++;
	}
	char bye;

	if (sock_xfer(fd, &bad, NULL, sizeof(bad)) != 0 || read(fd, &bye, 1) != 1)
		bad++;
	side_close(&s);
	free(model);
	return bad == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ requester */

struct pending {
	uint32_t i;
	struct op o;
	uint8_t *local;	   /* source or destination in the requester's memory */
	uint64_t expect;   /* atomics: the old value */
	size_t expect_off; /* READ: where the expected bytes are kept */
	int signaled;
};

struct req {
	struct side s;
	struct wire peer;
	uint64_t seed;
	uint8_t *model;
	uint8_t *expect; /* READ data as the model held it when the READ was generated */
	struct pending b[BATCH_MAX];
	uint32_t n;
};

static enum ibv_wr_opcode wr_opcode(enum op_kind k)
{
	static const enum ibv_wr_opcode map[] = {
		[OP_WRITE] = IBV_WR_RDMA_WRITE, [OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
		[OP_SEND] = IBV_WR_SEND,	[OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
		[OP_READ] = IBV_WR_RDMA_READ,	[OP_CAS] = IBV_WR_ATOMIC_CMP_AND_SWP,
		[OP_FA] = IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	return map[k];
}

static enum ibv_wc_opcode wc_opcode(enum op_kind k)
{
	static const enum ibv_wc_opcode map[] = {
		[OP_WRITE] = IBV_WC_RDMA_WRITE, [OP_WRITE_IMM] = IBV_WC_RDMA_WRITE, [OP_SEND] = IBV_WC_SEND,
		[OP_SEND_IMM] = IBV_WC_SEND,	[OP_READ] = IBV_WC_RDMA_READ,	 [OP_CAS] = IBV_WC_COMP_SWAP,
		[OP_FA] = IBV_WC_FETCH_ADD,
	};
	return map[k];
}

static int post_classic(struct req *r)
{
	struct ibv_send_wr wr[BATCH_MAX], *bad = NULL;
	struct ibv_sge sge[BATCH_MAX];

	memset(wr, 0, sizeof(wr));
	for (uint32_t k = 0; k < r->n; k++) {
		struct pending *p = &r->b[k];

		sge[k] = (struct ibv_sge){ .addr = (uintptr_t)p->local, .length = p->o.len, .lkey = r->s.mr->lkey };
		wr[k].wr_id = p->i;
		wr[k].sg_list = &sge[k];
		wr[k].num_sge = 1;
		wr[k].opcode = wr_opcode(p->o.kind);
		wr[k].send_flags = (p->signaled ? IBV_SEND_SIGNALED : 0) | (p->o.inl ? IBV_SEND_INLINE : 0);
		wr[k].imm_data = htobe32(p->o.imm);
		wr[k].next = k + 1 < r->n ? &wr[k + 1] : NULL;
		if (p->o.kind == OP_CAS || p->o.kind == OP_FA) {
			wr[k].wr.atomic.remote_addr = r->peer.addr + p->o.roff;
			wr[k].wr.atomic.rkey = r->peer.rkey;
			wr[k].wr.atomic.compare_add = p->o.kind == OP_CAS ? p->o.cmp : p->o.val;
			wr[k].wr.atomic.swap = p->o.val;
		} else {
			wr[k].wr.rdma.remote_addr = r->peer.addr + p->o.roff;
			wr[k].wr.rdma.rkey = r->peer.rkey;
		}
	}
	return ibv_post_send(r->s.qp, wr, &bad);
}

static void wr_one(struct ibv_qp_ex *x, struct req *r, struct pending *p)
{
	uint64_t ra = r->peer.addr + p->o.roff;

	x->wr_id = p->i;
	x->wr_flags = p->signaled ? IBV_SEND_SIGNALED : 0;
	switch (p->o.kind) {
	case OP_WRITE: ibv_wr_rdma_write(x, r->peer.rkey, ra); break;
	case OP_WRITE_IMM: ibv_wr_rdma_write_imm(x, r->peer.rkey, ra, htobe32(p->o.imm)); break;
	case OP_SEND: ibv_wr_send(x); break;
	case OP_SEND_IMM: ibv_wr_send_imm(x, htobe32(p->o.imm)); break;
	case OP_READ: ibv_wr_rdma_read(x, r->peer.rkey, ra); break;
	case OP_CAS: ibv_wr_atomic_cmp_swp(x, r->peer.rkey, ra, p->o.cmp, p->o.val); break;
	case OP_FA: ibv_wr_atomic_fetch_add(x, r->peer.rkey, ra, p->o.val); break;
	default: break;
	}
	if (p->o.inl)
		ibv_wr_set_inline_data(x, p->local, p->o.len);
	else
		ibv_wr_set_sge(x, r->s.mr->lkey, (uintptr_t)p->local, p->o.len);
}

static int post_ex(struct req *r)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(r->s.qp);

	if (x == NULL)
		return -1;
	ibv_wr_start(x);
	for (uint32_t k = 0; k < r->n; k++)
		wr_one(x, r, &r->b[k]);
	return ibv_wr_complete(x);
}

/* Builds a batch starting at operation first; returns the count. */
static uint32_t batch_build(struct req *r, uint32_t first, uint32_t ops)
{
	uint32_t n = 1 + (uint32_t)(rnd(r->seed, first, 50) % BATCH_MAX);
	size_t src = 0, dst = 0, exp = 0;

	if (n > ops - first)
		n = ops - first;
	for (uint32_t k = 0; k < n; k++) {
		struct pending *p = &r->b[k];

		p->i = first + k;
		gen_op(r->seed, p->i, r->model, &p->o);
		p->signaled = k + 1 == n || (rnd(r->seed, p->i, 51) & 1);
		if (p->o.kind == OP_READ || p->o.kind == OP_CAS || p->o.kind == OP_FA) {
			p->local = r->s.mem + REGION + dst;
			memset(p->local, 0xee, p->o.len);
			dst += (p->o.len + 63) & ~(size_t)63;
			if (p->o.kind == OP_READ) {
				p->expect_off = exp;
				memcpy(r->expect + exp, r->model + p->o.roff, p->o.len);
				exp += p->o.len;
			}
		} else {
			p->local = r->s.mem + src;
			payload_fill(r->seed, p->i, p->local, p->o.len);
			src += (p->o.len + 63) & ~(size_t)63;
		}
		p->expect = model_apply(r->seed, p->i, &p->o, r->model);
	}
	r->n = n;
	return n;
}

/* Waits for the batch's signalled completions and checks them and the data that came back. */
static uint32_t batch_check(struct req *r)
{
	uint32_t bad = 0;

	for (uint32_t k = 0; k < r->n; k++) {
		struct pending *p = &r->b[k];
		struct ibv_wc wc;

		if (p->signaled) {
			if (poll_one(r->s.cq, &wc) != 0) {
				fprintf(stderr, "op %u: no completion\n", p->i);
				return bad + 1;
			}
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != p->i || wc.opcode != wc_opcode(p->o.kind)) {
				fprintf(stderr, "op %u (kind %d): completion %s wr_id %llu opcode %d\n", p->i, p->o.kind,
					ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, wc.opcode);
				bad++;
			}
			if ((p->o.kind == OP_READ || p->o.kind == OP_CAS || p->o.kind == OP_FA) && wc.byte_len != p->o.len) {
				fprintf(stderr, "op %u: byte_len %u, want %u\n", p->i, wc.byte_len, p->o.len);
				bad++;
			}
		}
	}
	for (uint32_t k = 0; k < r->n; k++) {
		struct pending *p = &r->b[k];

		if (p->o.kind == OP_READ && memcmp(p->local, r->expect + p->expect_off, p->o.len) != 0) {
			fprintf(stderr, "op %u: READ of %u bytes at %#llx returned other data\n", p->i, p->o.len,
				(unsigned long long)p->o.roff);
			bad++;
		}
		if ((p->o.kind == OP_CAS || p->o.kind == OP_FA) && memcmp(p->local, &p->expect, 8) != 0) {
			fprintf(stderr, "op %u: atomic returned another old value\n", p->i);
			bad++;
		}
	}
	return bad;
}

/* Reads the responder's whole region back (1 MiB in one READ) and compares it with the model. */
static uint32_t final_read(struct req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(r->s.mem + REGION), .length = REGION, .lkey = r->s.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0xfeed, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = r->peer.addr;
	wr.wr.rdma.rkey = r->peer.rkey;
	if (ibv_post_send(r->s.qp, &wr, &bad) != 0 || poll_one(r->s.cq, &wc) != 0 || wc.status != IBV_WC_SUCCESS)
		return 1;
	if (memcmp(r->s.mem + REGION, r->model, REGION) != 0) {
		fprintf(stderr, "requester: the region read back differs from the model\n");
		return 1;
	}
	return 0;
}

static pid_t child;

/* A failed case does not leave its responder behind. */
static void child_reap(void *arg)
{
	(void)arg;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = 0;
	}
}

static void run_pair(uint64_t seed, uint32_t ops)
{
	int sv[2];
	pid_t pid;
	struct req *r = calloc(1, sizeof(*r));
	uint32_t bad = 0, peer_bad = 1;
	char ready, bye = 'b';
	int st = 0;

	CHECK(r != NULL);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(responder(sv[1], seed, ops));
	}
	child = pid;
	th_defer(child_reap, NULL);
	close(sv[1]);
	r->seed = seed;
	r->model = malloc(REGION);
	r->expect = malloc((size_t)BATCH_MAX * MAX_MSG);
	CHECK(r->model != NULL && r->expect != NULL);
	region_init(r->model);
	CHECK(side_open(&r->s, 2 * (size_t)REGION, 1) == 0);
	struct wire me = side_wire(&r->s);

	CHECK(sock_xfer(sv[0], &me, &r->peer, sizeof(me)) == 0);
	CHECK(side_connect(&r->s, &r->peer) == 0);
	CHECK(sock_xfer(sv[0], NULL, &ready, 1) == 0);
	for (uint32_t i = 0; i < ops && bad == 0;) {
		uint32_t n = batch_build(r, i, ops);
		int rc = (rnd(seed, i, 52) & 1) ? post_ex(r) : post_classic(r);

		if (rc != 0) {
			fprintf(stderr, "op %u: posting a batch of %u failed: %d\n", i, n, rc);
			bad++;
			break;
		}
		bad += batch_check(r);
		i += n;
	}
	if (bad != 0)
		fprintf(stderr, "%u differences at the requester (seed %#llx)\n", bad, (unsigned long long)seed);
	CHECK(bad == 0);
	CHECK(final_read(r) == 0);
	CHECK(sock_xfer(sv[0], NULL, &peer_bad, sizeof(peer_bad)) == 0);
	if (peer_bad != 0)
		fprintf(stderr, "%u differences at the responder (seed %#llx)\n", peer_bad, (unsigned long long)seed);
	CHECK(peer_bad == 0);
	CHECK(write(sv[0], &bye, 1) == 1);
	CHECK(waitpid(pid, &st, 0) == pid);
	child = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(sv[0]);
	side_close(&r->s);
	free(r->model);
	free(r->expect);
	free(r);
}

static void test_random_two_processes(void)
{
	uint64_t seed = th_seed(); /* printed on stderr, and again on a failure */
	const char *e = getenv("SOFTDPU_TEST_OPS");
	uint32_t ops = e != NULL ? (uint32_t)strtoul(e, NULL, 0) : OPS_DEFAULT;

	printf("test_verbs_random: %u operations\n", ops);
	run_pair(seed, ops);
}

/* ---- DC mode: one DCI, DC_TARGETS DCTs, one process. ---- */

#define DC_TARGETS 3
#define DC_RX 8		/* receives posted on each DCT's SRQ */
#define DC_KEY0 0x0dc0ffee00000000ull
#define DC_OPS_DEFAULT 3000u

struct dc_target {
	struct ibv_srq *srq;
	struct ibv_qp *dct;
	struct ibv_mr *mr;
	uint8_t *mem;	/* REGION of the model, then DC_RX receive slots of MAX_MSG */
	uint8_t *model;
};

struct dc_run {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *dci;
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *mx;
	struct ibv_ah *ah;
	struct ibv_mr *lmr;
	uint8_t *local;	/* payloads out, READ and atomic results in */
	struct dc_target t[DC_TARGETS];
	uint64_t seed;
};

#define DC_TMEM ((size_t)REGION + (size_t)DC_RX * MAX_MSG)
#define DC_LMEM ((size_t)MAX_MSG + 8)

static void *dc_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int dc_post_rx(struct dc_target *t, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)(t->mem + REGION + (size_t)slot * MAX_MSG),
			      .length = MAX_MSG, .lkey = t->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_srq_recv(t->srq, &wr, &bad);
}

static int dc_target_open(struct dc_run *r, int k)
{
	struct dc_target *t = &r->t[k];
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = DC_RX, .max_sge = 1}};
	struct ibv_qp_init_attr_ex a = {.send_cq = r->rcq, .recv_cq = r->rcq, .qp_type = IBV_QPT_DRIVER,
					.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = r->pd};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					 .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = DC_KEY0 + k}};
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC};

	t->mem = dc_map(DC_TMEM);
	t->model = malloc(REGION);
	t->srq = ibv_create_srq(r->pd, &sa);
	if (t->mem == NULL || t->model == NULL || t->srq == NULL)
		return -1;
	region_init(t->mem);
	region_init(t->model);
	t->mr = ibv_reg_mr(r->pd, t->mem, DC_TMEM,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	a.srq = t->srq;
	t->dct = mlx5dv_create_qp(r->ctx, &a, &dv);
	if (t->mr == NULL || t->dct == NULL ||
	    ibv_modify_qp(t->dct, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	m = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .min_rnr_timer = 1,
				 .ah_attr = {.port_num = 1, .is_global = 1, .grh = {.hop_limit = 64}}};
	if (ibv_query_gid(r->ctx, 1, 0, &m.ah_attr.grh.dgid) != 0 ||
	    ibv_modify_qp(t->dct, &m, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU))
		return -1;
	for (uint32_t s = 0; s < DC_RX; s++)
		if (dc_post_rx(t, s) != 0)
			return -1;
	return 0;
}

static int dc_dci_open(struct dc_run *r)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = r->scq, .recv_cq = r->scq,
		.cap = {.max_send_wr = BATCH_MAX, .max_send_sge = 1, .max_inline_data = MAX_INLINE},
		.qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = r->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					 .dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCI}};
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa = {.port_num = 1};

	r->dci = mlx5dv_create_qp(r->ctx, &a, &dv);
	if (r->dci == NULL || ibv_modify_qp(r->dci, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT))
		return -1;
	m = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096};
	if (ibv_modify_qp(r->dci, &m, IBV_QP_STATE | IBV_QP_PATH_MTU))
		return -1;
	m = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	if (ibv_modify_qp(r->dci, &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return -1;
	r->x = ibv_qp_to_qp_ex(r->dci);
	r->mx = r->x != NULL ? mlx5dv_qp_ex_from_ibv_qp_ex(r->x) : NULL;
	if (r->mx == NULL || ibv_query_port(r->ctx, 1, &pa) != 0)
		return -1;
	aa.dlid = pa.lid;
	aa.is_global = 1; /* RoCE: the DCT's port by its GID 0 */
	aa.grh.hop_limit = 64;
	if (ibv_query_gid(r->ctx, 1, 0, &aa.grh.dgid) != 0)
		return -1;
	r->ah = ibv_create_ah(r->pd, &aa);
	return r->ah != NULL ? 0 : -1;
}

static void dc_close(struct dc_run *r)
{
	if (r->ah != NULL)
		ibv_destroy_ah(r->ah);
	if (r->dci != NULL)
		ibv_destroy_qp(r->dci);
	for (int k = 0; k < DC_TARGETS; k++) {
		struct dc_target *t = &r->t[k];

		if (t->dct != NULL)
			ibv_destroy_qp(t->dct);
		if (t->mr != NULL)
			ibv_dereg_mr(t->mr);
		if (t->srq != NULL)
			ibv_destroy_srq(t->srq);
		if (t->mem != NULL)
			munmap(t->mem, DC_TMEM);
		free(t->model);
	}
	if (r->lmr != NULL)
		ibv_dereg_mr(r->lmr);
	if (r->local != NULL)
		munmap(r->local, DC_LMEM);
	if (r->scq != NULL)
		ibv_destroy_cq(r->scq);
	if (r->rcq != NULL)
		ibv_destroy_cq(r->rcq);
	if (r->pd != NULL)
		ibv_dealloc_pd(r->pd);
	if (r->ctx != NULL)
		ibv_close_device(r->ctx);
}

static int dc_open(struct dc_run *r)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (l == NULL || l[0] == NULL)
		return -1;
	r->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (r->ctx == NULL)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->scq = ibv_create_cq(r->ctx, CQ_DEPTH, NULL, NULL, 0);
	r->rcq = ibv_create_cq(r->ctx, CQ_DEPTH, NULL, NULL, 0);
	r->local = dc_map(DC_LMEM);
	if (r->pd == NULL || r->scq == NULL || r->rcq == NULL || r->local == NULL)
		return -1;
	r->lmr = ibv_reg_mr(r->pd, r->local, DC_LMEM, IBV_ACCESS_LOCAL_WRITE);
	if (r->lmr == NULL || dc_dci_open(r) != 0)
		return -1;
	for (int k = 0; k < DC_TARGETS; k++)
		if (dc_target_open(r, k) != 0)
			return -1;
	return 0;
}

/* Builds operation i towards DCT k (one WR) in the open ibv_wr_start session. */
static void dc_build(struct dc_run *r, uint32_t i, int k, const struct op *o)
{
	struct ibv_qp_ex *x = r->x;
	struct dc_target *t = &r->t[k];
	uint64_t raddr = (uint64_t)(uintptr_t)(t->mem + o->roff), laddr = (uint64_t)(uintptr_t)r->local;

	x->wr_id = i;
	x->wr_flags = IBV_SEND_SIGNALED;
	switch (o->kind) {
	case OP_WRITE:
		ibv_wr_rdma_write(x, t->mr->rkey, raddr);
		break;
	case OP_WRITE_IMM:
		ibv_wr_rdma_write_imm(x, t->mr->rkey, raddr, htobe32(o->imm));
		break;
	case OP_SEND:
		ibv_wr_send(x);
		break;
	case OP_SEND_IMM:
		ibv_wr_send_imm(x, htobe32(o->imm));
		break;
	case OP_READ:
		ibv_wr_rdma_read(x, t->mr->rkey, raddr);
		break;
	case OP_CAS:
		ibv_wr_atomic_cmp_swp(x, t->mr->rkey, raddr, o->cmp, o->val);
		break;
	default:
		ibv_wr_atomic_fetch_add(x, t->mr->rkey, raddr, o->val);
		break;
	}
	mlx5dv_wr_set_dc_addr(r->mx, r->ah, t->dct->qp_num, DC_KEY0 + (uint64_t)k);
	if (o->inl)
		ibv_wr_set_inline_data(x, r->local, o->len);
	else
		ibv_wr_set_sge(x, r->lmr->lkey, laddr, o->kind == OP_CAS || o->kind == OP_FA ? 8 : o->len);
}

/* Checks the receive an operation consumed at DCT k: opcode, length, immediate, sender, payload. */
static uint32_t dc_check_recv(struct dc_run *r, uint32_t i, int k, const struct op *o)
{
	struct dc_target *t = &r->t[k];
	enum ibv_wc_opcode want = o->kind == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	struct ibv_wc wc;
	uint32_t bad = 0;

	if (poll_one(r->rcq, &wc) != 0)
		return 1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != want || wc.byte_len != o->len || wc.qp_num != t->dct->qp_num ||
	    wc.src_qp != r->dci->qp_num || (o->kind != OP_SEND && wc.imm_data != htobe32(o->imm))) {
		fprintf(stderr, "op %u: DCT %d receive status %d opcode %d len %u qp %#x src %#x\n", i, k, wc.status,
			wc.opcode, wc.byte_len, wc.qp_num, wc.src_qp);
		return 1;
	}
	if (o->kind != OP_WRITE_IMM) {
		const uint8_t *p = t->mem + REGION + (size_t)wc.wr_id * MAX_MSG;

		for (uint32_t j = 0; j < o->len; j++)
			bad += p[j] != payload_byte(r->seed, i, j);
	}
	return (bad != 0) + (dc_post_rx(t, (uint32_t)wc.wr_id) != 0);
}

/* One operation, run and checked against DCT k's model. */
static uint32_t dc_one(struct dc_run *r, uint32_t i)
{
	int k = (int)(rnd(r->seed, i, 60) % DC_TARGETS);
	struct dc_target *t = &r->t[k];
	struct op o;
	struct ibv_wc wc;
	uint64_t old, got;
	uint32_t bad = 0;

	gen_op(r->seed, i, t->model, &o);
	if (o.kind != OP_READ && o.kind != OP_CAS && o.kind != OP_FA)
		payload_fill(r->seed, i, r->local, o.len);
	ibv_wr_start(r->x);
	dc_build(r, i, k, &o);
	if (ibv_wr_complete(r->x) != 0 || poll_one(r->scq, &wc) != 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != i) {
		fprintf(stderr, "op %u (kind %d, DCT %d): the request failed\n", i, o.kind, k);
		return 1;
	}
	old = model_apply(r->seed, i, &o, t->model);
	if (o.kind == OP_READ)
		bad += memcmp(r->local, t->model + o.roff, o.len) != 0;
	if (o.kind == OP_CAS || o.kind == OP_FA) {
		memcpy(&got, r->local, 8);
		bad += got != old;
	}
	if (consumes_recv(o.kind))
		bad += dc_check_recv(r, i, k, &o);
	if (bad != 0)
		fprintf(stderr, "op %u (kind %d, DCT %d, len %u): result differs\n", i, o.kind, k, o.len);
	return bad;
}

static void test_random_dc(void)
{
	uint64_t seed = th_seed(); /* printed on stderr, and again on a failure */
	const char *e = getenv("SOFTDPU_TEST_OPS");
	uint32_t ops = e != NULL ? (uint32_t)strtoul(e, NULL, 0) : DC_OPS_DEFAULT, bad = 0;
	struct dc_run *r = calloc(1, sizeof(*r));

	CHECK(r != NULL);
	printf("test_verbs_random DC: %u operations over %d DCTs\n", ops, DC_TARGETS);
	r->seed = seed;
	if (dc_open(r) != 0) {
		dc_close(r);
		free(r);
		CHECK(!"DC setup");
	}
	for (uint32_t i = 0; i < ops && bad == 0; i++)
		bad += dc_one(r, i);
	for (int k = 0; k < DC_TARGETS && bad == 0; k++)
		if (memcmp(r->t[k].mem, r->t[k].model, REGION) != 0) {
			fprintf(stderr, "DCT %d: its region differs from the model (seed %#llx)\n", k,
				(unsigned long long)seed);
			bad++;
		}
	dc_close(r);
	free(r);
	CHECK(bad == 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_random_two_processes);
	RUN(test_random_dc);
	return th_summary("test_verbs_random");
}
