/*
 * rs_res — a connection's verbs resources: the CQ and its channel, the RC
 * QP on the CM id, the receive ring and its control area (remotely
 * writable) and the send copy buffer; and the hello that tells the peer about the ring.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base_log.h"
#include "rs_int.h"

static int rs_post_recvs(struct rs *rs)
{
	struct ibv_recv_wr wr = { .wr_id = RS_WR_RECV, .num_sge = 0 }, *bad;

	for (uint32_t i = 0; i < rs->rq_size; i++)
		if (ibv_post_recv(rs->id->qp, &wr, &bad) != 0)
			return -1;
	return 0;
}

static int rs_qp_create(struct rs *rs)
{
	struct ibv_qp_init_attr a = {
		.send_cq = rs->cq,
		.recv_cq = rs->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = rs->sq_size,
			.max_recv_wr = rs->rq_size,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = rs->inline_size,
		},
	};

	if (rdma_create_qp(rs->id, NULL, &a) != 0)
		return -1;
	rs->inline_size = a.cap.max_inline_data < rs->inline_size ? a.cap.max_inline_data : rs->inline_size;
	rs->sq_free = rs->sq_size;
	return 0;
}

/*
 * Mappings of their own, unmapped at close: a registration other processes
 * reach moves its pages onto shared memory, and heap memory reused later
 * for a buffer of another size would then overlap it only in part.
 */
static size_t rs_rbuf_len(const struct rs *rs)
{
	return rs->rbuf_size + RS_MAX_QSIZE * RS_CTRL_SLOT;
}

static int rs_page_alloc(uint8_t **p, size_t size)
{
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return -1;
	*p = m;
	return 0;
}

static void rs_page_free(uint8_t *p, size_t size)
{
	if (p != NULL)
		munmap(p, size);
}

static int rs_bufs_create(struct rs *rs)
{
	struct ibv_pd *pd = rs->id->pd;

	if (rs_page_alloc(&rs->rbuf, rs_rbuf_len(rs)) != 0 || rs_page_alloc(&rs->sbuf, rs->sbuf_size) != 0) {
		errno = ENOMEM;
		return -1;
	}
	rs->rmr = ibv_reg_mr(pd, rs->rbuf, rs_rbuf_len(rs), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (rs->rmr == NULL)
		return -1;
	rs->smr = ibv_reg_mr(pd, rs->sbuf, rs->sbuf_size, 0);
	return rs->smr == NULL ? -1 : 0;
}

/* On the id once its device is known (address resolved, or a request's child). */
int rs_res_create(struct rs *rs)
{
	struct ibv_context *verbs = rs->id->verbs;
	int fl;

	rs->cc = ibv_create_comp_channel(verbs);
	if (rs->cc == NULL)
		goto fail;
	fl = fcntl(rs->cc->fd, F_GETFL);
	if (fl < 0 || fcntl(rs->cc->fd, F_SETFL, fl | O_NONBLOCK) != 0)
		goto fail;
	rs->cq = ibv_create_cq(verbs, (int)(rs->sq_size + rs->rq_size), rs, rs->cc, 0);
	if (rs->cq == NULL)
		goto fail;
	if (rs_qp_create(rs) != 0 || rs_bufs_create(rs) != 0 || rs_post_recvs(rs) != 0)
		goto fail;
	return 0;
fail:
	if (errno == 0)
		errno = ENOMEM;
	BASE_ERR("rsocket %d: cannot make its queues and buffers: errno %d", rs->fd, errno);
	return -1;
}

void rs_res_destroy(struct rs *rs)
{
	if (rs->id != NULL && rs->id->qp != NULL)
		rdma_destroy_qp(rs->id);
	if (rs->rmr != NULL)
		ibv_dereg_mr(rs->rmr);
	if (rs->smr != NULL)
		ibv_dereg_mr(rs->smr);
	rs_page_free(rs->rbuf, rs_rbuf_len(rs));
	rs_page_free(rs->sbuf, rs->sbuf_size);
	if (rs->cq != NULL)
		ibv_destroy_cq(rs->cq);
	if (rs->cc != NULL)
		ibv_destroy_comp_channel(rs->cc);
	rs->rmr = rs->smr = NULL;
	rs->rbuf = rs->sbuf = NULL;
	rs->cq = NULL;
	rs->cc = NULL;
}

void rs_hello_fill(const struct rs *rs, struct rs_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->version = RS_VERSION;
	h->rq_size = htobe32(rs->rq_size);
	h->addr = htobe64((uint64_t)(uintptr_t)rs->rbuf);
	h->rkey = htobe32(rs->rmr->rkey);
	h->size = htobe32(rs->rbuf_size);
}
