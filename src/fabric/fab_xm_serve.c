/*
 * fab_xm_serve — the target machine's side of verbs between machines: the
 * verbs service (fab_xm.h) and the shadow QPs it runs requests on.
 *
 * A request of another machine runs on a QP of this machine, so that every
 * rule of the same-machine path applies unchanged (the responder's state,
 * its receives and RNR, the rkey's bounds, rights and domain, invalidation,
 * DC keys): a shadow QP per remote requester (RC: connected to the
 * destination QPN; DC: a DCI), with the request's data in a buffer of a
 * key of the shadow's own domain. hw_qp_exec_one runs it at once, without
 * a CQE, and reports the requester's outcome, which goes back. The service
 * runs on the UCX service thread only, so the shadows need no lock.
 */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "fab_ucx.h"
#include "fab_wire.h"
#include "fab_xm.h"
#include "fab_xm_rdv.h"
#include "hw_cq.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_xm.h"

#define SV_SHADOWS 256
#define SV_ADDR_MAX 1024
#define SV_WQE_MAX (8 * HW_WQE_DS_BYTES)

struct sv_shadow {
	uint32_t machine, src_qpn, dest, epoch;
	uint8_t type;
	uint32_t qpn;
	struct hw_qp *qp;
	uint64_t used;	 /* the service's clock at the last request: the oldest goes first when all are taken */
	uint32_t expect; /* the sequence number to run next (0: none seen yet) */
	bool failed;	 /* a request failed: the connection's later requests are discarded */
};

static struct {
	pthread_once_t once;
	int up;
	struct hw_pd *pd;
	struct hw_cq *cq;
	struct sv_shadow sh[SV_SHADOWS];
	uint32_t n;
	uint64_t clock;
} sv = { .once = PTHREAD_ONCE_INIT };

static void sv_shadow_free(struct sv_shadow *s)
{
	if (s->qp != NULL)
		hw_qp_destroy(s->qp);
	if (s->qpn != 0)
		hw_id_free(HW_ID_QPN, s->qpn);
	memset(s, 0, sizeof(*s));
}

static struct hw_qp *sv_shadow_new(uint8_t type, uint32_t dest, uint32_t *qpn_out)
{
	uint64_t prefix = htobe64(hw_machine_subnet_prefix());
	struct hw_qp_attr a = { .type = type, .pd = sv.pd, .send_cq = sv.cq, .recv_cq = sv.cq,
				.log_rq_stride = HW_QP_LOG_RQ_STRIDE_MIN };
	struct hw_qp *qp = NULL;
	uint32_t qpn;

	memcpy(a.gid, &prefix, sizeof(prefix));
	if (hw_id_alloc(HW_ID_QPN, &qpn) != HW_OK)
		return NULL;
	a.qpn = qpn;
	if (hw_qp_create(&a, &qp) != HW_OK)
		goto err_id;
	if (hw_qp_modify(qp, HW_QP_INIT) != HW_OK || hw_qp_modify(qp, HW_QP_RTR) != HW_OK ||
	    hw_qp_modify(qp, HW_QP_RTS) != HW_OK)
		goto err_qp;
	if (type == HW_QPT_RC && hw_qp_connect_qpn(qp, dest) != HW_OK)
		goto err_qp; /* no such QP here: as a request nobody answers */
	*qpn_out = qpn;
	return qp;

err_qp:
	hw_qp_destroy(qp);
err_id:
	hw_id_free(HW_ID_QPN, qpn);
	return NULL;
}

/* The shadow of requester (machine, src_qpn, epoch) towards dest; NULL when the destination cannot be reached. */
static struct sv_shadow *sv_shadow_get(uint32_t machine, uint32_t src_qpn, uint32_t dest, uint32_t epoch,
				       uint8_t type)
{
	struct sv_shadow *s = NULL, *oldest = NULL;

	for (uint32_t i = 0; i < sv.n && s == NULL; i++) {
		struct sv_shadow *c = &sv.sh[i];

		if (c->machine == machine && c->src_qpn == src_qpn && c->dest == dest && c->type == type &&
		    c->epoch == epoch)
			s = c;
		else if (oldest == NULL || c->used < oldest->used)
			oldest = c;
	}
	if (s == NULL) {
		s = sv.n < SV_SHADOWS ? &sv.sh[sv.n++] : oldest;
		if (s->qp != NULL)
			sv_shadow_free(s);
		s->qp = sv_shadow_new(type, dest, &s->qpn);
		if (s->qp == NULL)
			return NULL;
		s->machine = machine;
		s->src_qpn = src_qpn;
		s->dest = dest;
		s->epoch = epoch;
		s->type = type;
	}
	s->used = ++sv.clock;
	return s;
}

/* Go-back-N: true when the request with sequence seq is the one to run now (0: unsequenced, always). */
static bool sv_in_order(struct sv_shadow *s, uint32_t seq)
{
	if (seq == 0)
		return true;
	if (s->expect == 0)
		s->expect = seq; /* the connection's first request here */
	return !s->failed && seq == s->expect;
}

static void sv_ran(struct sv_shadow *s, uint32_t seq, const struct hw_xm_res *res)
{
	if (seq == 0 || res->rnr)
		return; /* an RNR NAK: the same request comes again */
	if (res->synd != 0)
		s->failed = true;
	else
		s->expect = seq + 1;
}

/*
 * A probe (NOP, no data): whether the destination QP exists on this machine
 * and its owner lives, whatever its state — a QP still being set up is not
 * a peer gone.
 */
static bool sv_probe(uint32_t dest)
{
	struct hw_qp *v;

	if (hw_qp_lookup(dest) != NULL)
		return true;
	if (hw_qp_attach_num(dest, &v) != HW_OK)
		return false;
	hw_qp_detach(v);
	return true;
}

static bool sv_op_known(uint8_t op, bool *out, bool *atomic)
{
	*out = op == HW_WQE_SEND || op == HW_WQE_SEND_IMM || op == HW_WQE_SEND_INVAL || op == HW_WQE_RDMA_WRITE ||
	       op == HW_WQE_RDMA_WRITE_IMM;
	*atomic = op == HW_WQE_ATOMIC_CS || op == HW_WQE_ATOMIC_FA;
	return *out || *atomic || op == HW_WQE_RDMA_READ;
}

/* The WQE a requester of this machine would post for the request; its size in bytes. */
static uint32_t sv_wqe(uint8_t *w, const uint8_t *req, uint32_t lkey, const uint8_t *data, uint64_t len)
{
	uint8_t type = req[6], op = req[7];
	uint32_t at = sizeof(struct hw_wqe_ctrl_seg);
	bool out, atomic;

	(void)sv_op_known(op, &out, &atomic);
	memset(w, 0, SV_WQE_MAX);
	if (type == HW_QPT_DCI) {
		memcpy(w + at, req + 64, HW_XM_AV_BYTES);
		at += HW_XM_AV_BYTES;
	}
	if (op != HW_WQE_SEND && op != HW_WQE_SEND_IMM && op != HW_WQE_SEND_INVAL) {
		hw_raddr_seg_set((void *)(w + at), fab_get_le(req + 24, 8), (uint32_t)fab_get_le(req + 32, 4));
		at += HW_WQE_DS_BYTES;
	}
	if (atomic) {
		hw_atomic_seg_set((void *)(w + at), fab_get_le(req + 40, 8), fab_get_le(req + 48, 8));
		at += HW_WQE_DS_BYTES;
	}
	if (len != 0) {
		hw_data_seg_set((void *)(w + at), (uint32_t)len, lkey, (uint64_t)(uintptr_t)data);
		at += HW_WQE_DS_BYTES;
	}
	hw_ctrl_seg_set((void *)w, 0, op, 0, 0, req[36], (uint8_t)(at / HW_WQE_DS_BYTES),
			htobe32((uint32_t)fab_get_le(req + 20, 4)));
	return at;
}

/* A request of the right shape, or false. */
static bool sv_req_valid(const uint8_t *req, uint64_t len, uint64_t cap, bool *out)
{
	uint64_t plen;
	bool atomic;

	if (len < FAB_XM_REQ_SIZE || fab_get_le(req, 4) != FAB_XM_REQ_MAGIC || fab_get_le(req + 4, 2) != FAB_XM_VERSION ||
	    (req[6] != HW_QPT_RC && req[6] != HW_QPT_DCI))
		return false;
	if (req[7] == HW_WQE_NOP) { /* a probe */
		*out = false;
		return len == FAB_XM_REQ_SIZE && fab_get_le(req + 56, 8) == 0 && cap >= FAB_XM_REP_SIZE;
	}
	if (!sv_op_known(req[7], out, &atomic))
		return false;
	plen = fab_get_le(req + 56, 8);
	if (plen > UINT32_MAX || (atomic && plen != 8) || cap < FAB_XM_REP_SIZE)
		return false;
	return *out ? len - FAB_XM_REQ_SIZE == plen : len == FAB_XM_REQ_SIZE && cap - FAB_XM_REP_SIZE >= plen;
}

static void sv_rep(uint8_t *rep, const struct hw_xm_res *res)
{
	memset(rep, 0, FAB_XM_REP_SIZE);
	fab_put_le(rep, FAB_XM_REP_MAGIC, 4);
	rep[4] = res->synd;
	rep[5] = res->rnr;
	rep[6] = res->rnr_timer;
	rep[7] = res->discarded;
	fab_put_le(rep + 8, res->byte_cnt, 4);
}

uint32_t fab_xm_service(const uint8_t *req, uint64_t len, uint8_t *rep, uint64_t cap, uint64_t *rlen)
{
	struct hw_xm_res res = { .synd = HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR };
	uint8_t wqe[SV_WQE_MAX];
	struct sv_shadow *sh;
	struct hw_qp *qp = NULL;
	uint32_t seq;
	uint64_t plen;
	uint32_t key = 0;
	uint8_t *data;
	bool out;

	if (req == NULL || rep == NULL || rlen == NULL || !sv_req_valid(req, len, cap, &out)) {
		BASE_DBG("malformed request from another machine refused");
		return FAB_UCX_ST_MALFORMED;
	}
	plen = fab_get_le(req + 56, 8);
	if (req[7] == HW_WQE_NOP) {
		if (sv.up && req[6] == HW_QPT_RC && sv_probe((uint32_t)fab_get_le(req + 16, 4)))
			res = (struct hw_xm_res){ 0 };
		sv_rep(rep, &res);
		*rlen = FAB_XM_REP_SIZE;
		return FAB_UCX_ST_OK;
	}
	data = out ? (uint8_t *)(uintptr_t)(req + FAB_XM_REQ_SIZE) : rep + FAB_XM_REP_SIZE;
	seq = (uint32_t)fab_get_le(req + 112, 4);
	sh = sv.up ? sv_shadow_get((uint32_t)fab_get_le(req + 8, 4), (uint32_t)fab_get_le(req + 12, 4),
				   req[6] == HW_QPT_RC ? (uint32_t)fab_get_le(req + 16, 4) : 0,
				   (uint32_t)fab_get_le(req + 116, 4), req[6])
		   : NULL;
	if (sh != NULL && !sv_in_order(sh, seq)) {
		res = (struct hw_xm_res){ .discarded = true };
		sv_rep(rep, &res);
		*rlen = FAB_XM_REP_SIZE;
		return FAB_UCX_ST_OK;
	}
	qp = sh != NULL ? sh->qp : NULL;
	if (qp != NULL && plen != 0 &&
	    hw_mkey_reg(sv.pd, data, (uint64_t)(uintptr_t)data, plen, HW_ACCESS_LOCAL_WRITE, &key) != HW_OK)
		qp = NULL;
	if (qp != NULL) {
		uint32_t n = sv_wqe(wqe, req, key, data, plen);

		if (hw_qp_exec_one(qp, wqe, n, (uint32_t)fab_get_le(req + 12, 4), (uint16_t)fab_get_le(req + 38, 2),
				   &res) != HW_OK)
			res = (struct hw_xm_res){ .synd = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR };
		sv_ran(sh, seq, &res);
	}
	if (key != 0)
		hw_mkey_dereg(key);
	sv_rep(rep, &res);
	*rlen = FAB_XM_REP_SIZE + (!out && res.synd == 0 && !res.rnr ? plen : 0);
	return FAB_UCX_ST_OK;
}

static void sv_start(void)
{
	uint8_t addr[SV_ADDR_MAX];
	struct hw_cq_attr ca = { .log_size = 1 };
	uint32_t ip;
	int alen;

	if (!hw_machine_ipv4(&ip))
		return;
	sv.pd = hw_pd_alloc_private(0); /* a key per request: registered without the shared table */
	if (sv.pd == NULL || hw_cq_create(&ca, &sv.cq) != HW_OK)
		goto err;
	sv.up = 1; /* before the address goes out: the service may be called at once */
	alen = fab_ucx_service_start(FAB_UCX_SERVICE_VERBS, fab_xm_service, addr, sizeof(addr));
	if (alen <= 0 || fab_xm_rdv_listen(ip, addr, (size_t)alen) != 0)
		goto err;
	return;
err:
	sv.up = 0; /* no peer has the address: the service, if registered, refuses what reaches it anyway */
	BASE_WARN("this machine cannot take requests of other machines (UCX or the rendezvous port unavailable)");
}

int fab_xm_serve(void)
{
	pthread_once(&sv.once, sv_start);
	return sv.up ? 0 : -1;
}
