/*
 * fab_xm — the requester's side of verbs between machines: one connection
 * per machine (found through its rendezvous), and each request as a call to
 * that machine's verbs service (fab_xm.h). Plugged into hw at load
 * (hw_xm_set_ops), so the engine sends what a QP of another machine's peer
 * asks.
 */
#include "fab_xm.h"

#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base_config.h"
#include "base_log.h"
#include "fab_ucx.h"
#include "fab_wire.h"
#include "fab_xm_rdv.h"
#include "hw_machine.h"
#include "hw_prm.h"
#include "hw_xm.h"

#define XM_MACHINES 64
#define XM_ADDR_MAX 1024
/* What one call carries at most: a READ's reply and a WRITE's request both fit one transfer. */
#define XM_CHUNK ((uint64_t)FAB_UCX_MAX_LEN - FAB_XM_REQ_SIZE)

struct xm_conn {
	uint32_t machine;
	struct fab_remote *r;
};

static struct {
	pthread_mutex_t lock; /* the table; one request at a time per process (calls are synchronous) */
	struct xm_conn conn[XM_MACHINES];
	uint32_t n;
} xm = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Under xm.lock: the live connection to machine, made through its rendezvous if needed; NULL when unreachable. */
static struct fab_remote *xm_conn_locked(uint32_t machine)
{
	uint8_t addr[XM_ADDR_MAX];
	struct xm_conn *c = NULL;
	int alen;

	for (uint32_t i = 0; i < xm.n && c == NULL; i++)
		if (xm.conn[i].machine == machine)
			c = &xm.conn[i];
	if (c != NULL && c->r != NULL && !fab_ucx_peer_failed(c->r))
		return c->r;
	if (c != NULL && c->r != NULL) { /* the process that served us is gone: ask the machine again */
		fab_ucx_disconnect(c->r);
		c->r = NULL;
	}
	if (c == NULL && xm.n == XM_MACHINES)
		return NULL;
	alen = fab_xm_rdv_lookup(machine, addr, sizeof(addr), base_config_fabric_timeout_ms());
	if (alen <= 0) {
		BASE_DBG("machine %u.%u.%u.%u does not answer at its rendezvous", machine >> 24, (machine >> 16) & 0xff,
			 (machine >> 8) & 0xff, machine & 0xff);
		return NULL;
	}
	if (c == NULL) {
		c = &xm.conn[xm.n++];
		c->machine = machine;
	}
	if (fab_ucx_connect(addr, (size_t)alen, &c->r) != FAB_OK)
		c->r = NULL;
	return c->r;
}

/* Under xm.lock: the connection to machine failed; the next request asks the rendezvous again. */
static void xm_conn_drop_locked(uint32_t machine)
{
	for (uint32_t i = 0; i < xm.n; i++) {
		if (xm.conn[i].machine == machine && xm.conn[i].r != NULL) {
			fab_ucx_disconnect(xm.conn[i].r);
			xm.conn[i].r = NULL;
		}
	}
}

static void xm_put_req(uint8_t *h, const struct hw_xm_req *q, uint8_t opcode, uint64_t raddr, uint64_t len)
{
	uint32_t me = 0;

	(void)hw_machine_ipv4(&me);
	memset(h, 0, FAB_XM_REQ_SIZE);
	fab_put_le(h + 0, FAB_XM_REQ_MAGIC, 4);
	fab_put_le(h + 4, FAB_XM_VERSION, 2);
	h[6] = q->qp_type;
	h[7] = opcode;
	fab_put_le(h + 8, me, 4);
	fab_put_le(h + 12, q->src_qpn, 4);
	fab_put_le(h + 16, q->dest, 4);
	fab_put_le(h + 20, q->imm, 4);
	fab_put_le(h + 24, raddr, 8);
	fab_put_le(h + 32, q->rkey, 4);
	h[36] = q->fm_ce_se;
	fab_put_le(h + 38, q->src_lid, 2);
	fab_put_le(h + 40, q->swap_add, 8);
	fab_put_le(h + 48, q->compare, 8);
	fab_put_le(h + 56, len, 8);
	memcpy(h + 64, q->av, HW_XM_AV_BYTES);
}

/* One call; false (and res set to the transport failure) when the machine could not be asked. */
static bool xm_call(const struct hw_xm_req *q, const uint8_t *msg, size_t mlen, uint8_t *rep, size_t cap,
		    struct hw_xm_res *res)
{
	struct fab_remote *r;
	enum fab_status st = FAB_ERR_NO_PATH;
	size_t rlen = 0;

	pthread_mutex_lock(&xm.lock);
	/*
	 * A connection to a process of the machine that has gone since: the
	 * request never reached anyone, so it goes once more to whichever
	 * process the machine's rendezvous names now (a restarted server).
	 */
	for (int attempt = 0; attempt < 2; attempt++) {
		r = xm_conn_locked(q->machine);
		st = r != NULL ? fab_ucx_call(r, FAB_UCX_SERVICE_VERBS, msg, mlen, rep, cap, &rlen) : FAB_ERR_NO_PATH;
		if (st != FAB_ERR_PEER_GONE && st != FAB_ERR_TIMEOUT)
			break;
		xm_conn_drop_locked(q->machine);
	}
	pthread_mutex_unlock(&xm.lock);
	if (st != FAB_OK || rlen < FAB_XM_REP_SIZE || fab_get_le(rep, 4) != FAB_XM_REP_MAGIC) {
		if (st != FAB_OK)
			BASE_DBG("request to another machine failed: %s", fab_status_str(st));
		*res = (struct hw_xm_res){ .synd = HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR };
		return false;
	}
	*res = (struct hw_xm_res){ .synd = rep[4], .rnr = rep[5] != 0, .rnr_timer = rep[6],
				   .byte_cnt = (uint32_t)fab_get_le(rep + 8, 4) };
	return true;
}

/*
 * A READ or WRITE longer than one call goes as several, in order, each after
 * the previous answered; a WRITE with immediate carries it on its last part
 * only. A SEND or an atomic is one call.
 */
static void xm_exec(const struct hw_xm_req *q, uint8_t *buf, uint8_t *rdata, struct hw_xm_res *res)
{
	bool read = q->opcode == HW_WQE_RDMA_READ || q->opcode == HW_WQE_ATOMIC_CS || q->opcode == HW_WQE_ATOMIC_FA;
	bool split = q->opcode == HW_WQE_RDMA_READ || q->opcode == HW_WQE_RDMA_WRITE || q->opcode == HW_WQE_RDMA_WRITE_IMM;
	uint8_t rhead[FAB_XM_REP_SIZE], saved[FAB_XM_REP_SIZE];
	uint64_t off = 0;

	if (!split && q->len > XM_CHUNK) {
		*res = (struct hw_xm_res){ .synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR };
		return;
	}
	do {
		uint64_t n = q->len - off < XM_CHUNK ? q->len - off : XM_CHUNK;
		bool last = off + n == q->len;
		uint8_t op = q->opcode == HW_WQE_RDMA_WRITE_IMM && !last ? HW_WQE_RDMA_WRITE : q->opcode;
		/* The header goes just ahead of this part: the bytes there were sent already. */
		uint8_t *msg = read ? buf : buf + off;
		uint8_t *rep = read ? rdata + off : rhead;

		xm_put_req(msg, q, op, q->raddr + off, n);
		if (read && off != 0) /* the reply header lands over the last bytes of the previous part */
			memcpy(saved, rep - FAB_XM_REP_SIZE, FAB_XM_REP_SIZE);
		if (!xm_call(q, msg, FAB_XM_REQ_SIZE + (read ? 0 : n), read ? rep - FAB_XM_REP_SIZE : rep,
			     FAB_XM_REP_SIZE + (read ? n : 0), res))
			return;
		if (read && off != 0)
			memcpy(rep - FAB_XM_REP_SIZE, saved, FAB_XM_REP_SIZE);
		if (res->synd != 0 || res->rnr)
			return;
		off += n;
	} while (off < q->len);
	res->byte_cnt = (uint32_t)q->len;
}

static const struct hw_xm_ops xm_ops = {
	.headroom = FAB_XM_REQ_SIZE,
	.exec = xm_exec,
};

__attribute__((constructor)) static void xm_plug(void)
{
	hw_xm_set_ops(&xm_ops);
}
