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

#include "base_clock.h"
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
/*
 * Requests up to this size go without waiting: the engine gathers small ones
 * several to a call, sends a large one alone, and keeps up to 4 calls in
 * flight, so the transfers of a stream of large WQEs follow one another
 * without a round trip between them. Larger ones go one at a time, in parts:
 * 4 calls of 4 MiB in flight (16 MiB staged on each side) were slower than
 * one at a time (docs/PERFORMANCE.md).
 */
#define XM_ASYNC_MAX (1u << 20)

/* A connection to one process of a machine; freed when replaced and no call uses it any more. */
struct xm_link {
	struct fab_remote *r;
	uint32_t users;	 /* calls in flight on it (xm_start .. xm_test) */
	bool retired;	 /* no longer the machine's connection */
};

struct xm_conn {
	uint32_t machine;
	struct xm_link *l;
	/*
	 * Its rendezvous did not answer: until then datagrams for it are lost
	 * at once, as a card's leave without waiting (an unreachable address
	 * holds a lookup for the fabric timeout).
	 */
	uint64_t down_until;
};

static struct {
	pthread_mutex_t lock; /* the table; a synchronous call (xm_call) holds it throughout */
	struct xm_conn conn[XM_MACHINES];
	uint32_t n;
} xm = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void xm_link_put_locked(struct xm_link *l)
{
	if (l == NULL || l->users != 0 || !l->retired)
		return;
	fab_ucx_disconnect(l->r);
	free(l);
}

/* Under xm.lock: the connection stops being the machine's; freed once no call uses it. */
static void xm_conn_retire_locked(struct xm_conn *c)
{
	if (c->l == NULL)
		return;
	c->l->retired = true;
	xm_link_put_locked(c->l);
	c->l = NULL;
}

/* Under xm.lock: the live connection to machine, made through its rendezvous if needed; NULL when unreachable. */
static struct xm_link *xm_conn_locked(uint32_t machine)
{
	uint8_t addr[XM_ADDR_MAX];
	struct xm_conn *c = NULL;
	struct xm_link *l;
	int alen;

	for (uint32_t i = 0; i < xm.n && c == NULL; i++)
		if (xm.conn[i].machine == machine)
			c = &xm.conn[i];
	if (c != NULL && c->l != NULL && !fab_ucx_peer_failed(c->l->r))
		return c->l;
	if (c != NULL) /* the process that served us is gone: ask the machine again */
		xm_conn_retire_locked(c);
	if (c == NULL && xm.n == XM_MACHINES)
		return NULL;
	if (c == NULL) {
		c = &xm.conn[xm.n++];
		c->machine = machine;
	}
	alen = fab_xm_rdv_lookup(machine, addr, sizeof(addr), base_config_fabric_timeout_ms());
	if (alen <= 0) {
		BASE_DBG("machine %u.%u.%u.%u does not answer at its rendezvous", machine >> 24, (machine >> 16) & 0xff,
			 (machine >> 8) & 0xff, machine & 0xff);
		c->down_until = base_deadline_ns((uint64_t)base_config_fabric_timeout_ms() * 1000000u);
		return NULL;
	}
	c->down_until = 0;
	l = calloc(1, sizeof(*l));
	if (l == NULL || fab_ucx_connect(addr, (size_t)alen, &l->r) != FAB_OK) {
		free(l);
		return NULL;
	}
	c->l = l;
	return l;
}

/* Under xm.lock: whether machine's rendezvous failed to answer lately and no connection to it was made since. */
static bool xm_down_locked(uint32_t machine)
{
	for (uint32_t i = 0; i < xm.n; i++)
		if (xm.conn[i].machine == machine)
			return xm.conn[i].l == NULL && xm.conn[i].down_until != 0 &&
			       !base_deadline_passed(xm.conn[i].down_until);
	return false;
}

/* Under xm.lock: the connection to machine failed; the next request asks the rendezvous again. */
static void xm_conn_drop_locked(uint32_t machine)
{
	for (uint32_t i = 0; i < xm.n; i++)
		if (xm.conn[i].machine == machine)
			xm_conn_retire_locked(&xm.conn[i]);
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
	fab_put_le(h + 112, q->seq, 4);
	fab_put_le(h + 116, q->epoch, 4);
	h[37] = q->tm_flags;
	fab_put_le(h + 120, q->tm_rd_len, 4);
}

static void xm_res_of(const uint8_t *rep, struct hw_xm_res *res)
{
	*res = (struct hw_xm_res){ .synd = rep[4], .rnr = rep[5] != 0, .rnr_timer = rep[6], .discarded = rep[7] != 0,
				   .byte_cnt = (uint32_t)fab_get_le(rep + 8, 4), .tm_fin = rep[12] != 0 };
}

/* One call; false (and res set to the transport failure) when the machine could not be asked. */
static bool xm_call(const struct hw_xm_req *q, const uint8_t *msg, size_t mlen, uint8_t *rep, size_t cap,
		    struct hw_xm_res *res)
{
	struct xm_link *l;
	enum fab_status st = FAB_ERR_NO_PATH;
	size_t rlen = 0;

	/*
	 * A probe (the engine thread's, inside an execution) does not wait
	 * behind another call: that call finds out itself whether the machine
	 * is there, and the wait could be for a holder waiting on executions.
	 */
	if (q->opcode == HW_WQE_NOP && pthread_mutex_trylock(&xm.lock) != 0) {
		*res = (struct hw_xm_res){ 0 };
		return true;
	}
	if (q->opcode != HW_WQE_NOP)
		pthread_mutex_lock(&xm.lock);
	/*
	 * A connection to a process of the machine that has gone since: the
	 * request never reached anyone, so it goes once more to whichever
	 * process the machine's rendezvous names now (a restarted server).
	 */
	for (int attempt = 0; attempt < 2 && !(q->qp_type == HW_QPT_UD && xm_down_locked(q->machine)); attempt++) {
		l = xm_conn_locked(q->machine);
		st = l != NULL ? fab_ucx_call(l->r, FAB_UCX_SERVICE_VERBS, msg, mlen, rep, cap, &rlen) : FAB_ERR_NO_PATH;
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
	xm_res_of(rep, res);
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
	uint8_t rhead[FAB_XM_REP_SIZE], saved[FAB_XM_REP_SIZE] = { 0 };
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

/* A call in flight (hw_xm_ops.start): its requests' reply shapes, and where the replies land. */
struct xm_pending {
	struct fab_call *call;
	struct xm_link *l;
	uint32_t machine;
	const uint8_t *msg; /* the requests, kept by the caller until answered: sent again once if its process went */
	size_t mlen, cap;
	bool resent;
	uint8_t *rep;
	uint32_t n;
	uint32_t dlen[HW_XM_BATCH]; /* the data each reply may carry (READ, atomic; 0 for the rest) */
	bool out[HW_XM_BATCH];
};

_Static_assert(HW_XM_BATCH <= FAB_XM_BATCH, "a call carries what the engine gathers");

/* Under xm.lock: sends p's request on the machine's connection (made again when its process went). */
static enum fab_status xm_send_locked(struct xm_pending *p)
{
	enum fab_status st = FAB_ERR_NO_PATH;

	for (int attempt = 0; attempt < 2; attempt++) {
		struct xm_link *l = xm_conn_locked(p->machine);

		st = l != NULL ? fab_ucx_call_start(l->r, FAB_UCX_SERVICE_VERBS, p->msg, p->mlen, p->rep, p->cap, &p->call)
			       : FAB_ERR_NO_PATH;
		if (st == FAB_OK) {
			p->l = l;
			l->users++;
			return FAB_OK;
		}
		if (st != FAB_ERR_PEER_GONE)
			break;
		xm_conn_drop_locked(p->machine);
	}
	return st;
}

static void xm_fail_all(struct hw_xm_res *res, const uint8_t **data, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		res[i] = (struct hw_xm_res){ .synd = HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR };
		if (data != NULL)
			data[i] = NULL;
	}
}

static void *xm_start(const struct hw_xm_req *q, uint32_t n, uint8_t *buf, uint8_t *rbuf, struct hw_xm_res *res)
{
	struct xm_pending *p = n != 0 && n <= HW_XM_BATCH ? calloc(1, sizeof(*p)) : NULL;
	size_t at = 0;

	xm_fail_all(res, NULL, n);
	if (p == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		p->out[i] = hw_xm_op_out(q[i].opcode);
		p->dlen[i] = p->out[i] ? 0 : (uint32_t)q[i].len;
		xm_put_req(buf + at, &q[i], q[i].opcode, q[i].raddr, q[i].len);
		at += FAB_XM_REQ_SIZE + (p->out[i] ? q[i].len : 0);
		p->cap += FAB_XM_REP_SIZE + p->dlen[i];
	}
	p->machine = q[0].machine;
	p->n = n;
	p->rep = rbuf;
	p->msg = buf;
	p->mlen = at;
	pthread_mutex_lock(&xm.lock);
	if (p->mlen > FAB_UCX_MAX_LEN || p->cap > FAB_UCX_MAX_LEN || xm_send_locked(p) != FAB_OK) {
		pthread_mutex_unlock(&xm.lock);
		free(p);
		return NULL;
	}
	pthread_mutex_unlock(&xm.lock);
	return p;
}

/* The replies back to back, each followed by its data when it has some; false when they do not add up. */
static bool xm_replies(const struct xm_pending *p, size_t rlen, struct hw_xm_res *res, const uint8_t **data)
{
	size_t at = 0;

	for (uint32_t i = 0; i < p->n; i++) {
		const uint8_t *rep = p->rep + at;

		if (rlen - at < FAB_XM_REP_SIZE || fab_get_le(rep, 4) != FAB_XM_REP_MAGIC)
			return false;
		xm_res_of(rep, &res[i]);
		at += FAB_XM_REP_SIZE;
		data[i] = NULL;
		if (!fab_xm_rep_has_data(p->out[i], rep))
			continue;
		if (rlen - at < p->dlen[i])
			return false;
		data[i] = p->rep + at;
		at += p->dlen[i];
	}
	return at == rlen;
}

static int xm_test(void *h, struct hw_xm_res *res, const uint8_t **data)
{
	struct xm_pending *p = h;
	enum fab_status st;
	size_t rlen;

	if (!fab_ucx_call_test(p->call, &st, &rlen))
		return 0;
	pthread_mutex_lock(&xm.lock);
	p->l->users--;
	if (st == FAB_ERR_PEER_GONE || st == FAB_ERR_TIMEOUT) {
		for (uint32_t i = 0; i < xm.n; i++)
			if (xm.conn[i].l == p->l)
				xm.conn[i].l = NULL;
		p->l->retired = true;
	}
	xm_link_put_locked(p->l); /* frees it when retired and unused */
	p->l = NULL;
	/* Its process went before answering: no one ran it; once more to whichever process the machine names now. */
	if (st == FAB_ERR_PEER_GONE && !p->resent) {
		p->resent = true;
		if (xm_send_locked(p) == FAB_OK) {
			pthread_mutex_unlock(&xm.lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&xm.lock);
	if (st != FAB_OK || !xm_replies(p, rlen, res, data)) {
		if (st == FAB_OK)
			BASE_WARN("malformed answer from machine %u.%u.%u.%u", p->machine >> 24, (p->machine >> 16) & 0xff,
				  (p->machine >> 8) & 0xff, p->machine & 0xff);
		xm_fail_all(res, data, p->n);
	}
	free(p);
	return 1;
}

static const struct hw_xm_ops xm_ops = {
	.headroom = FAB_XM_REQ_SIZE,
	.rep_headroom = FAB_XM_REP_SIZE,
	.exec = xm_exec,
	.async_max = XM_ASYNC_MAX,
	.call_max = FAB_UCX_EAGER_MAX - (4u << 10),
	.start = xm_start,
	.test = xm_test,
};

__attribute__((constructor)) static void xm_plug(void)
{
	hw_xm_set_ops(&xm_ops);
}
