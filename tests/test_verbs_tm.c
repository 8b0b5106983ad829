/*
 * Tag matching, from ibv_create_srq_ex(3) (IBV_SRQT_TM, tm_cap),
 * ibv_post_srq_ops(3) (IBV_WR_TAG_ADD / DEL / SYNC), ibv_query_device_ex(3)
 * (tm_caps), ibv_create_cq_ex(3) (IBV_WC_EX_WITH_TM_INFO,
 * ibv_wc_read_tm_info) and rdma-core's tm_types.h (struct ibv_tmh, struct
 * ibv_rvh): the caps a ConnectX-6 Dx reports, creation refusals, an EAGER
 * message matching a posted tag (its data after the TMH in the tag's
 * buffer), the oldest match and masks, unexpected and NO_TAG messages in
 * the SRQ's ordinary receives with their TMH, the phase count and sync,
 * tag deletion (and its failure once a message took the tag), rendezvous
 * (the responder reads the RVH's range from the sender, the sender gets a
 * FIN), and bad input and the limits (list full, max_ops outstanding).
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define TM_LEN 4096
#define TM_ORD_WRID 0x0d0d

#define TM_NEED(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			TH_FAIL("%s", #cond);                                                      \
			th_stop();                                                                 \
		}                                                                                  \
	} while (0)

/* [0] the receiver's tagged buffers, [1] its ordinary receives, [2] the sender's message, [3] the sender's FIN receive */
static uint8_t tm_mem[4][TM_LEN] __attribute__((aligned(4096)));

struct tm_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;  /* the TM SRQ's: every completion of the receiver */
	struct ibv_cq *scq;    /* the sender's */
	struct ibv_srq *srq;
	struct ibv_qp *rqp, *sqp;
	struct ibv_mr *mr[4];
};

/* What one completion of the extended CQ said. */
struct tm_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	struct ibv_wc_tm_info ti;
};

static struct ibv_cq_ex *tm_cq_ex(struct ibv_context *c)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(c, &a);

	if (cq != NULL)
		th_defer(vq_destroy_cq_cb, ibv_cq_ex_to_cq(cq));
	return cq;
}

static struct ibv_srq *tm_srq(struct tm_env *e, uint32_t tags, uint32_t ops)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = e->pd,
		.cq = ibv_cq_ex_to_cq(e->cq),
		.tm_cap = { .max_num_tags = tags, .max_ops = ops },
	};
	struct ibv_srq *srq = ibv_create_srq_ex(e->c, &a);

	if (srq != NULL)
		th_defer(vq_destroy_srq_cb, srq);
	return srq;
}

/* A receiver on a TM SRQ of tags entries and ops operations, a sender with its own RQ, connected. */
static void tm_open(struct tm_env *e, uint32_t tags, uint32_t ops)
{
	memset(e, 0, sizeof(*e));
	memset(tm_mem, 0, sizeof(tm_mem));
	e->c = vf_open();
	TM_NEED(e->c != NULL);
	e->pd = vf_pd(e->c);
	TM_NEED(e->pd != NULL);
	e->cq = tm_cq_ex(e->c);
	TM_NEED(e->cq != NULL);
	e->scq = vq_cq(e->c, 64);
	TM_NEED(e->scq != NULL);
	e->srq = tm_srq(e, tags, ops);
	TM_NEED(e->srq != NULL);
	for (int i = 0; i < 4; i++) {
		e->mr[i] = vq_mr(e->pd, tm_mem[i], TM_LEN, VQ_ACCESS_ALL);
		TM_NEED(e->mr[i] != NULL);
	}
	e->rqp = vq_qp_srq(e->pd, IBV_QPT_RC, ibv_cq_ex_to_cq(e->cq), ibv_cq_ex_to_cq(e->cq), e->srq, 16);
	e->sqp = vq_qp(e->pd, IBV_QPT_RC, e->scq, e->scq, 16);
	TM_NEED(e->rqp != NULL && e->sqp != NULL);
	TM_NEED(vq_up(e->rqp, e->sqp->qp_num, 0, 0) == 0);
	TM_NEED(vq_up(e->sqp, e->rqp->qp_num, 0, 0) == 0);
}

/* One completion of the receiver's CQ (bounded wait): true and *w. */
static bool tm_poll(struct tm_env *e, struct tm_wc *w)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int rc = ENOENT;

	for (long i = 0; i < VQ_POLL_TRIES && rc == ENOENT; i++)
		rc = ibv_start_poll(e->cq, &pa);
	if (rc != 0)
		return false;
	w->wr_id = e->cq->wr_id;
	w->status = e->cq->status;
	w->opcode = ibv_wc_read_opcode(e->cq);
	w->flags = ibv_wc_read_wc_flags(e->cq);
	w->byte_len = ibv_wc_read_byte_len(e->cq);
	ibv_wc_read_tm_info(e->cq, &w->ti);
	ibv_end_poll(e->cq);
	return true;
}

static bool tm_cq_empty(struct tm_env *e)
{
	struct ibv_poll_cq_attr pa = { 0 };

	if (ibv_start_poll(e->cq, &pa) == ENOENT)
		return true;
	ibv_end_poll(e->cq);
	return false;
}

static struct ibv_ops_wr tm_add_wr(struct tm_env *e, struct ibv_sge *sge, uint64_t tag, uint64_t mask,
				   uint64_t recv_wr_id)
{
	struct ibv_ops_wr wr = { .wr_id = 0x1000 + recv_wr_id, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED };

	(void)e;
	wr.tm.add.recv_wr_id = recv_wr_id;
	wr.tm.add.sg_list = sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = mask;
	return wr;
}

/* Lists a tag for len bytes at off of the tagged memory; its handle. Its TM_ADD completion is checked. */
static uint32_t tm_add(struct tm_env *e, uint64_t tag, uint64_t mask, uint32_t off, uint32_t len, uint64_t recv_wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[0] + off, .length = len, .lkey = e->mr[0]->lkey };
	struct ibv_ops_wr wr = tm_add_wr(e, &sge, tag, mask, recv_wr_id), *bad = NULL;
	struct tm_wc w;

	TM_NEED(ibv_post_srq_ops(e->srq, &wr, &bad) == 0);
	TM_NEED(tm_poll(e, &w));
	TM_NEED(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_ADD && w.wr_id == 0x1000 + recv_wr_id);
	return wr.tm.handle;
}

static void tm_post_ordinary(struct tm_env *e, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[1], .length = TM_LEN, .lkey = e->mr[1]->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	TM_NEED(ibv_post_srq_recv(e->srq, &wr, &bad) == 0);
}

/* The sender's message: a TMH (opcode, context, tag) then len bytes of fill at tm_mem[2] + 16. */
static uint32_t tm_msg(uint8_t op, uint32_t app_ctx, uint64_t tag, uint32_t len, uint8_t fill)
{
	struct ibv_tmh *h = (struct ibv_tmh *)tm_mem[2];

	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->app_ctx = htobe32(app_ctx);
	h->tag = htobe64(tag);
	for (uint32_t i = 0; i < len; i++)
		tm_mem[2][sizeof(*h) + i] = (uint8_t)(fill + i);
	return (uint32_t)sizeof(*h) + len;
}

/* SENDs len bytes of the sender's message, signaled; the sender's completion status. */
static enum ibv_wc_status tm_send(struct tm_env *e, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[2], .length = len, .lkey = e->mr[2]->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	TM_NEED(ibv_post_send(e->sqp, &wr, &bad) == 0);
	TM_NEED(vq_poll1(e->scq, &wc) == 1);
	TM_NEED(wc.opcode == IBV_WC_SEND && wc.wr_id == 77);
	return wc.status;
}

static void tm_sync(struct tm_env *e, uint32_t unexpected)
{
	struct ibv_ops_wr wr = { .wr_id = 27, .opcode = IBV_WR_TAG_SYNC, .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC },
			  *bad = NULL;
	struct tm_wc w;

	wr.tm.unexpected_cnt = unexpected;
	TM_NEED(ibv_post_srq_ops(e->srq, &wr, &bad) == 0);
	TM_NEED(tm_poll(e, &w));
	TM_NEED(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_SYNC && w.wr_id == 27 && w.ti.tag == 0);
}

static void test_tm_caps(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex a;

	CHECK(c != NULL);
	memset(&a, 0xff, sizeof(a));
	CHECK_OK(ibv_query_device_ex(c, NULL, &a));
	CHECK(a.tm_caps.max_rndv_hdr_size == 64);
	CHECK(a.tm_caps.max_num_tags == 127);
	CHECK(a.tm_caps.flags == IBV_TM_CAP_RC);
	CHECK(a.tm_caps.max_ops == 32768);
	CHECK(a.tm_caps.max_sge == 1);
}

static void test_tm_create_refusals(void)
{
	struct tm_env e = { 0 };
	struct ibv_srq_init_attr_ex a;
	struct ibv_cq *plain;

	e.c = vf_open();
	CHECK(e.c != NULL);
	e.pd = vf_pd(e.c);
	e.cq = tm_cq_ex(e.c);
	plain = vq_cq(e.c, 16);
	CHECK(e.pd != NULL && e.cq != NULL && plain != NULL);
	a = (struct ibv_srq_init_attr_ex){
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_TM, .pd = e.pd, .cq = ibv_cq_ex_to_cq(e.cq),
		.tm_cap = { .max_num_tags = 16, .max_ops = 8 },
	};
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL); /* no IBV_SRQ_INIT_ATTR_TM */
	a.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	a.cq = plain; /* the TM information is read from an extended CQ */
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.cq = ibv_cq_ex_to_cq(e.cq);
	a.tm_cap.max_num_tags = 128;
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.tm_cap.max_num_tags = 0;
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.tm_cap.max_num_tags = 16;
	a.tm_cap.max_ops = 32769;
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.tm_cap.max_ops = 8;
	a.pd = NULL;
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.pd = e.pd;
	a.cq = NULL;
	errno = 0;
	CHECK(ibv_create_srq_ex(e.c, &a) == NULL && errno == EINVAL);
	a.cq = ibv_cq_ex_to_cq(e.cq);
	e.srq = ibv_create_srq_ex(e.c, &a);
	CHECK(e.srq != NULL);
	CHECK(a.attr.max_wr >= 16);
	/* its CQ stays while the SRQ completes into it */
	CHECK_ERR(ibv_destroy_cq(ibv_cq_ex_to_cq(e.cq)), EBUSY);
	CHECK_OK(ibv_destroy_srq(e.srq));
}

/* An EAGER message matching a tag: the data after the TMH in the tag's buffer, one completion. */
static void test_tm_eager(void)
{
	struct tm_env e;
	struct tm_wc w;
	uint32_t len;

	tm_open(&e, 16, 16);
	tm_post_ordinary(&e, TM_ORD_WRID);
	memset(tm_mem[0], 0xee, TM_LEN);
	(void)tm_add(&e, 0x1234, ~0ull, 0, 1000, 501);
	len = tm_msg(IBV_TMH_EAGER, 0xabcdef, 0x1234, 700, 0x40);
	CHECK(tm_send(&e, len) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS);
	CHECK(w.opcode == IBV_WC_TM_RECV);
	CHECK(w.wr_id == 501);
	CHECK(w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
	CHECK(w.byte_len == 700);
	CHECK(w.ti.tag == 0x1234 && w.ti.priv == 0xabcdef);
	CHECK(memcmp(tm_mem[0], tm_mem[2] + sizeof(struct ibv_tmh), 700) == 0);
	CHECK(tm_mem[0][700] == 0xee); /* nothing past the data */
	CHECK(tm_cq_empty(&e));	       /* the ordinary receive untouched */
}

/* Masks compare only their bits; of two matching tags the older one takes the message. */
static void test_tm_mask_and_order(void)
{
	struct tm_env e;
	struct tm_wc w;

	tm_open(&e, 16, 16);
	(void)tm_add(&e, 0x12ff, 0xff00, 0, 100, 1);
	(void)tm_add(&e, 0x12ab, ~0ull, 100, 100, 2);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x12ab, 10, 1)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.wr_id == 1 && w.ti.tag == 0x12ab);
	CHECK(memcmp(tm_mem[0], tm_mem[2] + 16, 10) == 0);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x12ab, 10, 9)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.wr_id == 2);
	CHECK(memcmp(tm_mem[0] + 100, tm_mem[2] + 16, 10) == 0);
}

/*
 * A message no tag matches goes to an ordinary receive with its TMH; until
 * the program reports it handled (sync), tags added meanwhile say
 * SYNC_REQ and match nothing; after the sync they match.
 */
static void test_tm_unexpected_and_sync(void)
{
	struct tm_env e;
	struct tm_wc w;
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[0], .length = 100 };
	struct ibv_ops_wr wr, *bad = NULL;
	uint32_t len;

	tm_open(&e, 16, 16);
	sge.lkey = e.mr[0]->lkey;
	tm_post_ordinary(&e, TM_ORD_WRID);
	tm_post_ordinary(&e, TM_ORD_WRID + 1);
	(void)tm_add(&e, 0x1, ~0ull, 0, 100, 1);
	len = tm_msg(IBV_TMH_EAGER, 5, 0x77, 50, 3);
	CHECK(tm_send(&e, len) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.flags == 0);
	CHECK(w.wr_id == TM_ORD_WRID && w.byte_len == len && w.ti.tag == 0);
	CHECK(memcmp(tm_mem[1], tm_mem[2], len) == 0); /* TMH and all */
	/* not yet synchronized: the new tag's completion asks for it, and a message for it is unexpected */
	wr = tm_add_wr(&e, &sge, 0x2, ~0ull, 2);
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr, &bad));
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_ADD && w.flags == IBV_WC_TM_SYNC_REQ);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x2, 8, 0)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.flags == 0 && w.wr_id == TM_ORD_WRID + 1);
	tm_sync(&e, 2);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x2, 8, 0x55)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.wr_id == 2 && w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
	CHECK(memcmp(tm_mem[0], tm_mem[2] + 16, 8) == 0);
	CHECK(tm_cq_empty(&e));
}

/* IBV_TMH_NO_TAG: an ordinary receive, IBV_WC_TM_NO_TAG, the TMH left in the buffer; tags untouched. */
static void test_tm_no_tag(void)
{
	struct tm_env e;
	struct tm_wc w;
	uint32_t len;

	tm_open(&e, 16, 16);
	tm_post_ordinary(&e, TM_ORD_WRID);
	(void)tm_add(&e, 0x9, ~0ull, 0, 100, 9);
	len = tm_msg(IBV_TMH_NO_TAG, 0, 0x9, 64, 7);
	CHECK(tm_send(&e, len) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_NO_TAG && w.flags == 0);
	CHECK(w.wr_id == TM_ORD_WRID && w.byte_len == len);
	CHECK(memcmp(tm_mem[1], tm_mem[2], len) == 0);
	/* not counted unexpected: the tag still matches */
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x9, 4, 1)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.wr_id == 9);
}

/* IBV_WR_TAG_DEL: a removed tag matches nothing; a remove after a message took it completes IBV_WC_TM_ERR. */
static void test_tm_del(void)
{
	struct tm_env e;
	struct tm_wc w;
	struct ibv_ops_wr wr = { .wr_id = 88, .opcode = IBV_WR_TAG_DEL, .flags = IBV_OPS_SIGNALED }, *bad = NULL;

	tm_open(&e, 16, 16);
	tm_post_ordinary(&e, TM_ORD_WRID);
	wr.tm.handle = tm_add(&e, 0x5, ~0ull, 0, 100, 5);
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr, &bad));
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_DEL && w.wr_id == 88);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x5, 4, 0)) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_RECV && w.flags == 0 && w.wr_id == TM_ORD_WRID);
	tm_sync(&e, 1);
	/* a message takes the tag before the remove reaches it */
	wr.tm.handle = tm_add(&e, 0x6, ~0ull, 0, 100, 6);
	CHECK(tm_send(&e, tm_msg(IBV_TMH_EAGER, 0, 0x6, 4, 0)) == IBV_WC_SUCCESS);
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr, &bad));
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 6);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_TM_ERR && w.opcode == IBV_WC_TM_DEL && w.wr_id == 88);
	/* the tag is back in the free list: not the device's to remove any more */
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
}

/*
 * Rendezvous: the RVH names the sender's memory; the receiver reads it into
 * the tag's buffer: a first completion (MATCH) for the tag, the sender's
 * FIN, a second (DATA_VALID) once the data is there.
 */
static void test_tm_rndv(void)
{
	struct tm_env e;
	struct tm_wc w;
	struct ibv_rvh *rvh = (struct ibv_rvh *)(tm_mem[2] + sizeof(struct ibv_tmh));
	struct ibv_sge fs = { .addr = (uintptr_t)tm_mem[3], .length = 64 };
	struct ibv_recv_wr fr = { .wr_id = 99, .sg_list = &fs, .num_sge = 1 }, *fbad;
	struct ibv_wc wc;
	uint32_t len;

	tm_open(&e, 16, 16);
	fs.lkey = e.mr[3]->lkey;
	CHECK_OK(ibv_post_recv(e.sqp, &fr, &fbad));
	(void)tm_add(&e, 0x42, ~0ull, 0, 3000, 42);
	len = tm_msg(IBV_TMH_RNDV, 0x1111, 0x42, 3000, 0x21); /* the payload itself, after the headers */
	rvh->va = htobe64((uintptr_t)tm_mem[2] + 32);
	rvh->rkey = htobe32(e.mr[2]->rkey);
	rvh->len = htobe32(3000);
	(void)len;
	CHECK(tm_send(&e, 64) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 42);
	CHECK(w.flags == IBV_WC_TM_MATCH && w.ti.tag == 0x42 && w.ti.priv == 0x1111);
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 99 && wc.byte_len == 16);
	CHECK(((struct ibv_tmh *)tm_mem[3])->opcode == IBV_TMH_FIN);
	CHECK(be64toh(((struct ibv_tmh *)tm_mem[3])->tag) == 0x42);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV && w.wr_id == 42);
	CHECK(w.flags == IBV_WC_TM_DATA_VALID && w.byte_len == 3000 && w.ti.tag == 0);
	CHECK(memcmp(tm_mem[0], tm_mem[2] + 32, 3000) == 0);
	/* a tag too small for the rendezvous: its data completion fails with the length error */
	(void)tm_add(&e, 0x43, ~0ull, 0, 100, 43);
	((struct ibv_tmh *)tm_mem[2])->tag = htobe64(0x43);
	CHECK(tm_send(&e, 64) == IBV_WC_SUCCESS);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_SUCCESS && w.wr_id == 43 && w.flags == IBV_WC_TM_MATCH);
	CHECK(tm_poll(&e, &w));
	CHECK(w.status == IBV_WC_LOC_LEN_ERR && w.wr_id == 43);
}

/*
 * A QP moved to RESET and destroyed while the completions of tags it
 * received are still in the SRQ's CQ (RESET drops a QP's completions from
 * its CQs, as mlx5's driver does): those tags go back to the list
 * (ibv_post_srq_ops can list all max_num_tags again).
 */
static void test_tm_reset_qp_releases_tags(void)
{
	struct ibv_qp_attr ra = { .qp_state = IBV_QPS_RESET };
	struct tm_env e;
	struct tm_wc w;
	struct ibv_sge sge;
	struct ibv_ops_wr wr, *bad = NULL;
	uint32_t len;
	int n = 0;

	tm_open(&e, 4, 16);
	(void)tm_add(&e, 0x10, ~0ull, 0, 100, 10);
	(void)tm_add(&e, 0x11, ~0ull, 100, 100, 11);
	len = tm_msg(IBV_TMH_EAGER, 1, 0x10, 50, 0x10);
	CHECK(tm_send(&e, len) == IBV_WC_SUCCESS);
	len = tm_msg(IBV_TMH_EAGER, 1, 0x11, 50, 0x11);
	CHECK(tm_send(&e, len) == IBV_WC_SUCCESS);
	CHECK_OK(ibv_modify_qp(e.rqp, &ra, IBV_QP_STATE));
	th_undefer(vq_destroy_qp_cb, e.rqp);
	CHECK_OK(ibv_destroy_qp(e.rqp));
	while (n < 8 && !tm_cq_empty(&e) && tm_poll(&e, &w))
		n++;
	CHECK(n == 0); /* dropped at RESET */
	/* all four tags can be listed again; a fifth is the full list's ENOMEM */
	sge = (struct ibv_sge){ .addr = (uintptr_t)tm_mem[0], .length = 100, .lkey = e.mr[0]->lkey };
	for (int i = 0; i < 4; i++) {
		wr = tm_add_wr(&e, &sge, 0x20 + i, ~0ull, 20 + i);
		wr.flags = 0;
		CHECK_OK(ibv_post_srq_ops(e.srq, &wr, &bad));
	}
	wr = tm_add_wr(&e, &sge, 0x30, ~0ull, 30);
	wr.flags = 0;
	CHECK(ibv_post_srq_ops(e.srq, &wr, &bad) == ENOMEM && bad == &wr);
}

/*
 * A rendezvous whose sender has no receive posted for the FIN: the FIN is a
 * SEND the responder retries after the sender's RNR NAK, so it arrives once
 * the sender posts a receive, in order when two wait.
 */
static void test_tm_rndv_fin_waits_for_receive(void)
{
	struct tm_env e;
	struct tm_wc w;
	struct ibv_rvh *rvh = (struct ibv_rvh *)(tm_mem[2] + sizeof(struct ibv_tmh));
	struct ibv_sge fs[2];
	struct ibv_recv_wr fr[2], *fbad;
	struct ibv_wc wc;

	tm_open(&e, 16, 16);
	for (int i = 0; i < 2; i++) {
		(void)tm_add(&e, 0x60 + i, ~0ull, 1000 * (uint32_t)i, 1000, 60 + i);
		(void)tm_msg(IBV_TMH_RNDV, 0x100 + i, 0x60 + i, 500, (uint8_t)(0x30 + i));
		rvh->va = htobe64((uintptr_t)tm_mem[2] + 32);
		rvh->rkey = htobe32(e.mr[2]->rkey);
		rvh->len = htobe32(500);
		CHECK(tm_send(&e, 64) == IBV_WC_SUCCESS);
		CHECK(tm_poll(&e, &w));
		CHECK(w.status == IBV_WC_SUCCESS && w.wr_id == 60u + i && w.flags == IBV_WC_TM_MATCH);
		CHECK(tm_poll(&e, &w));
		CHECK(w.status == IBV_WC_SUCCESS && w.wr_id == 60u + i && w.flags == IBV_WC_TM_DATA_VALID);
		CHECK(w.byte_len == 500 && memcmp(tm_mem[0] + 1000 * i, tm_mem[2] + 32, 500) == 0);
	}
	CHECK(vq_poll1(e.scq, &wc) == 0); /* no receive: no FIN yet */
	memset(tm_mem[3], 0xee, 128);
	for (int i = 0; i < 2; i++) {
		fs[i] = (struct ibv_sge){ .addr = (uintptr_t)tm_mem[3] + 64 * i, .length = 64, .lkey = e.mr[3]->lkey };
		fr[i] = (struct ibv_recv_wr){ .wr_id = 90 + i, .sg_list = &fs[i], .num_sge = 1 };
		CHECK_OK(ibv_post_recv(e.sqp, &fr[i], &fbad));
	}
	for (int i = 0; i < 2; i++) {
		struct ibv_tmh *h = (struct ibv_tmh *)(tm_mem[3] + 64 * i);

		CHECK(vq_poll1(e.scq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 90u + i && wc.byte_len == 16);
		CHECK(h->opcode == IBV_TMH_FIN && be64toh(h->tag) == 0x60u + i && be32toh(h->app_ctx) == 0x100u + i);
	}
}

/* Bad input: the documented EINVAL, *bad_op naming the operation; an SRQ without tag matching has no list. */
static void test_tm_bad_input(void)
{
	struct tm_env e;
	struct ibv_srq_init_attr ba = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[0], .length = 10 };
	struct ibv_sge two[2];
	struct ibv_ops_wr wr, *bad;
	struct ibv_srq *basic;

	tm_open(&e, 4, 16);
	sge.lkey = e.mr[0]->lkey;
	basic = ibv_create_srq(e.pd, &ba);
	CHECK(basic != NULL);
	th_defer(vq_destroy_srq_cb, basic);
	wr = tm_add_wr(&e, &sge, 1, ~0ull, 1);
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(basic, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.opcode = (enum ibv_ops_wr_opcode)7;
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr = (struct ibv_ops_wr){ .opcode = IBV_WR_TAG_DEL, .flags = IBV_OPS_SIGNALED };
	wr.tm.handle = 200; /* out of the list */
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.tm.handle = 1; /* never added */
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	two[0] = two[1] = sge;
	wr = tm_add_wr(&e, two, 1, ~0ull, 1);
	wr.tm.add.num_sge = 2; /* tm_caps.max_sge is 1 */
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	CHECK_OK(ibv_post_srq_ops(e.srq, NULL, &bad)); /* an empty list posts nothing */
	CHECK(tm_cq_empty(&e));
}

/* The list takes max_num_tags tags, then ENOMEM; max_ops operations may be outstanding, then ENOMEM. */
static void test_tm_limits(void)
{
	struct tm_env e;
	struct tm_wc w;
	struct ibv_sge sge = { .addr = (uintptr_t)tm_mem[0], .length = 10 };
	struct ibv_ops_wr wr[6], *bad;

	tm_open(&e, 4, 64);
	sge.lkey = e.mr[0]->lkey;
	for (int i = 0; i < 5; i++) {
		wr[i] = tm_add_wr(&e, &sge, (uint64_t)i, ~0ull, (uint64_t)i);
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr[0], &bad), ENOMEM);
	CHECK(bad == &wr[4]);
	for (int i = 0; i < 4; i++) {
		CHECK(tm_poll(&e, &w));
		CHECK(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_ADD && w.wr_id == 0x1000u + (unsigned)i);
	}
	/* one removed (unsignaled): room for one more */
	wr[5] = (struct ibv_ops_wr){ .opcode = IBV_WR_TAG_DEL };
	wr[5].tm.handle = wr[0].tm.handle;
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr[5], &bad));
	wr[4].next = NULL;
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr[4], &bad));
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_ADD && w.wr_id == 0x1004);
	CHECK(tm_cq_empty(&e));

	tm_open(&e, 16, 2);
	sge.lkey = e.mr[0]->lkey;
	for (int i = 0; i < 3; i++) {
		wr[i] = tm_add_wr(&e, &sge, (uint64_t)i, ~0ull, (uint64_t)i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	CHECK_ERR(ibv_post_srq_ops(e.srq, &wr[0], &bad), ENOMEM);
	CHECK(bad == &wr[2]);
	CHECK(tm_poll(&e, &w));
	CHECK(w.opcode == IBV_WC_TM_ADD && w.wr_id == 0x1000);
	wr[2].next = NULL;
	CHECK_OK(ibv_post_srq_ops(e.srq, &wr[2], &bad)); /* the completion polled retired one */
}

int main(void)
{
	RUN(test_tm_caps);
	RUN(test_tm_create_refusals);
	RUN(test_tm_eager);
	RUN(test_tm_mask_and_order);
	RUN(test_tm_unexpected_and_sync);
	RUN(test_tm_no_tag);
	RUN(test_tm_del);
	RUN(test_tm_rndv);
	RUN(test_tm_reset_qp_releases_tags);
	RUN(test_tm_rndv_fin_waits_for_receive);
	RUN(test_tm_bad_input);
	RUN(test_tm_limits);
	return th_summary("test_verbs_tm");
}
