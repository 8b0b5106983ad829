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
#include "fab_xm_reap.h"
#include "hw_cq.h"
#include "hw_gid.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_xm.h"

#define SV_SHADOWS 256
#define SV_RETIRED 4096
#define SV_ADDR_MAX 1024
#define SV_WQE_MAX (8 * HW_WQE_DS_BYTES)
/*
 * Keys over large call buffers are kept for reuse: the transport recycles
 * its large staging buffers, so a stream of long requests meets the same
 * few again, and a deregistration waits for every execution of the device
 * (an IPI to every core each time). The service deregisters none itself
 * (fab_xm_reap.h): it would wait for this machine's requesters, which may
 * be waiting for the very machine it serves.
 */
#define SV_KEYS 8
#define SV_KEY_KEEP_MIN (64u << 10)

struct sv_shadow {
	uint32_t machine, src_qpn, dest, epoch;
	uint8_t gid[16]; /* RC: the port the requester addressed */
	uint8_t type;
	uint32_t qpn;
	struct hw_qp *qp;
	uint64_t used;	 /* the service's clock at the last request: the oldest goes first when all are taken */
	uint32_t expect; /* the sequence number to run next (a connection's requests count from 1) */
	bool failed;	 /* a request failed: the connection's later requests are discarded */
};

/* Where a connection's order stands, kept when its shadow is taken for another (restored when it returns). */
struct sv_order {
	uint32_t machine, src_qpn, dest, epoch, expect;
	uint8_t type;
	bool failed;
};

static struct {
	pthread_once_t once;
	int up;
	struct hw_pd *pd;
	struct hw_cq *cq;
	struct sv_shadow sh[SV_SHADOWS];
	uint32_t n;
	struct sv_order retired[SV_RETIRED];
	uint32_t next_retired;
	uint64_t clock;
	struct {
		const void *p;
		uint64_t len, used;
		uint32_t key;
	} keys[SV_KEYS]; /* exactly over [p, p + len), local write only */
} sv = { .once = PTHREAD_ONCE_INIT };

static void sv_shadow_free(struct sv_shadow *s)
{
	if (s->qp != NULL)
		hw_qp_destroy(s->qp);
	if (s->qpn != 0)
		hw_id_free(HW_ID_QPN, s->qpn);
	memset(s, 0, sizeof(*s));
}

/* RC: connects qp to QP dest on the port of this machine that gid names; false when none has it. */
static bool sv_shadow_connect(struct hw_qp *qp, uint32_t dest, const uint8_t gid[16])
{
	struct hw_gid_dest d;

	hw_gid_route(gid, &d);
	return d.where == HW_GID_HERE && hw_qp_connect_port(qp, dest, d.lid) == HW_OK;
}

static struct hw_qp *sv_shadow_new(uint8_t type, uint32_t dest, const uint8_t gid[16], uint32_t *qpn_out)
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
	if (type == HW_QPT_RC && !sv_shadow_connect(qp, dest, gid))
		goto err_qp; /* no such port or QP here: as a request nobody answers */
	*qpn_out = qpn;
	return qp;

err_qp:
	hw_qp_destroy(qp);
err_id:
	hw_id_free(HW_ID_QPN, qpn);
	return NULL;
}

static bool sv_order_is(const struct sv_order *o, const struct sv_shadow *s)
{
	return o->machine == s->machine && o->src_qpn == s->src_qpn && o->dest == s->dest && o->epoch == s->epoch &&
	       o->type == s->type && o->expect != 0;
}

static void sv_order_keep(const struct sv_shadow *s)
{
	sv.retired[sv.next_retired++ % SV_RETIRED] = (struct sv_order){ .machine = s->machine, .src_qpn = s->src_qpn,
		.dest = s->dest, .epoch = s->epoch, .expect = s->expect, .type = s->type, .failed = s->failed };
}

/* A new shadow's order: where its connection stood if it had one before, else at its first request. */
static void sv_order_take(struct sv_shadow *s)
{
	s->expect = 1;
	s->failed = false;
	for (uint32_t i = 0; i < SV_RETIRED; i++) {
		struct sv_order *o = &sv.retired[i];

		if (sv_order_is(o, s)) {
			s->expect = o->expect;
			s->failed = o->failed;
			memset(o, 0, sizeof(*o));
			return;
		}
	}
}

/*
 * The shadow of requester (machine, src_qpn, epoch) towards dest at the port
 * gid names; NULL when the destination cannot be reached.
 */
static struct sv_shadow *sv_shadow_get(uint32_t machine, uint32_t src_qpn, uint32_t dest, const uint8_t gid[16],
				       uint32_t epoch, uint8_t type)
{
	struct sv_shadow *s = NULL, *oldest = NULL;

	for (uint32_t i = 0; i < sv.n && s == NULL; i++) {
		struct sv_shadow *c = &sv.sh[i];

		if (c->machine == machine && c->src_qpn == src_qpn && c->dest == dest && c->type == type &&
		    c->epoch == epoch && memcmp(c->gid, gid, sizeof(c->gid)) == 0)
			s = c;
		else if (oldest == NULL || c->used < oldest->used)
			oldest = c;
	}
	if (s == NULL) {
		s = sv.n < SV_SHADOWS ? &sv.sh[sv.n++] : oldest;
		if (s->qp != NULL) {
			sv_order_keep(s);
			sv_shadow_free(s);
		}
		s->qp = sv_shadow_new(type, dest, gid, &s->qpn);
		if (s->qp == NULL)
			return NULL;
		memcpy(s->gid, gid, sizeof(s->gid));
		s->machine = machine;
		s->src_qpn = src_qpn;
		s->dest = dest;
		s->epoch = epoch;
		s->type = type;
		sv_order_take(s);
	}
	s->used = ++sv.clock;
	return s;
}

/* Go-back-N: true when the request with sequence seq is the one to run now (0: unsequenced, always). */
static bool sv_in_order(struct sv_shadow *s, uint32_t seq)
{
	if (seq == 0)
		return true;
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

/*
 * One record of a call: a request of the right shape whose bytes (header and
 * payload) fit in left; *rec its size, *repmax the most its answer takes.
 */
static bool sv_rec_shape(const uint8_t *req, uint64_t left, uint64_t *rec, uint64_t *repmax, bool *out)
{
	uint64_t plen;
	bool atomic;

	if (left < FAB_XM_REQ_SIZE || fab_get_le(req, 4) != FAB_XM_REQ_MAGIC ||
	    fab_get_le(req + 4, 2) != FAB_XM_VERSION ||
	    (req[6] != HW_QPT_RC && req[6] != HW_QPT_DCI && req[6] != HW_QPT_UD))
		return false;
	plen = fab_get_le(req + 56, 8);
	if (req[6] == HW_QPT_UD) { /* a datagram: its network header, then at most a port MTU of payload */
		*out = true;
		*rec = FAB_XM_REQ_SIZE + plen;
		*repmax = FAB_XM_REP_SIZE;
		return (req[7] == HW_WQE_SEND || req[7] == HW_WQE_SEND_IMM) && plen >= HW_UD_GRH_BYTES &&
		       plen <= HW_UD_GRH_BYTES + HW_UD_MTU && left - FAB_XM_REQ_SIZE >= plen;
	}
	if (req[7] == HW_WQE_NOP) { /* a probe */
		*out = false;
		*rec = FAB_XM_REQ_SIZE;
		*repmax = FAB_XM_REP_SIZE;
		return plen == 0;
	}
	if (!sv_op_known(req[7], out, &atomic) || plen > UINT32_MAX || (atomic && plen != 8))
		return false;
	if (*out && left - FAB_XM_REQ_SIZE < plen)
		return false;
	*rec = FAB_XM_REQ_SIZE + (*out ? plen : 0);
	*repmax = FAB_XM_REP_SIZE + (*out ? 0 : plen);
	return true;
}

/*
 * The framing of a whole call: 1..FAB_XM_BATCH records filling len exactly,
 * a probe only alone, every answer fitting cap. False for anything else:
 * nothing of a malformed call runs.
 */
static bool sv_call_shape(const uint8_t *req, uint64_t len, uint64_t cap, bool *has_out, bool *has_in)
{
	uint64_t at = 0, need = 0, rec, repmax;
	uint32_t n = 0;
	bool out;

	*has_out = *has_in = false;
	while (at < len) {
		if (n == FAB_XM_BATCH || !sv_rec_shape(req + at, len - at, &rec, &repmax, &out))
			return false;
		if (req[at + 7] == HW_WQE_NOP && (n != 0 || rec != len))
			return false;
		*has_out |= out && rec > FAB_XM_REQ_SIZE && req[at + 6] != HW_QPT_UD; /* a datagram needs no key */
		*has_in |= !out && repmax > FAB_XM_REP_SIZE;
		at += rec;
		need += repmax;
		n++;
	}
	return n != 0 && need <= cap;
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
	rep[12] = res->tm_fin;
}

/* The shadow a request runs on (NULL: none can be made, or the service is down). */
static struct sv_shadow *sv_shadow_of(const uint8_t *req)
{
	static const uint8_t none[16];
	bool rc = req[6] == HW_QPT_RC;

	if (!sv.up)
		return NULL;
	/* RC: the GID in the address's place names the port; a DC address goes with each request. */
	return sv_shadow_get((uint32_t)fab_get_le(req + 8, 4), (uint32_t)fab_get_le(req + 12, 4),
			     rc ? (uint32_t)fab_get_le(req + 16, 4) : 0, rc ? req + FAB_XM_AV_GID : none,
			     (uint32_t)fab_get_le(req + 116, 4), req[6]);
}

/* A datagram (the record req, its network header and payload at data): delivered here, or dropped. */
static uint64_t sv_run_ud(const uint8_t *req, const uint8_t *data, uint8_t *rep)
{
	uint64_t plen = fab_get_le(req + 56, 8);
	struct hw_xm_ud d = { .dest = (uint32_t)fab_get_le(req + 16, 4), .src_qpn = (uint32_t)fab_get_le(req + 12, 4),
			      .slid = (uint16_t)fab_get_le(req + 38, 2), .opcode = req[7], .fm_ce_se = req[36], .imm = (uint32_t)fab_get_le(req + 20, 4),
			      .av = req + 64, .grh = data, .data = data + HW_UD_GRH_BYTES,
			      .len = (uint32_t)(plen - HW_UD_GRH_BYTES) };

	if (sv.up)
		hw_xm_ud_deliver(&d);
	sv_rep(rep, &(struct hw_xm_res){ .byte_cnt = d.len }); /* sent: the sender learns nothing more */
	return FAB_XM_REP_SIZE;
}

/*
 * Runs one record whose data is at data (key: the key over it) and answers
 * into rep; the answer's size. A READ's or atomic's data follows the answer
 * when it was done, as the requester expects (fab_xm.h).
 */
static uint64_t sv_run(const uint8_t *req, uint8_t *data, uint32_t key, uint8_t *rep)
{
	struct hw_xm_res res = { .synd = HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR };
	uint64_t plen = fab_get_le(req + 56, 8);
	uint32_t seq = (uint32_t)fab_get_le(req + 112, 4);
	uint8_t wqe[SV_WQE_MAX];
	struct sv_shadow *sh;
	bool out, atomic;

	if (req[6] == HW_QPT_UD)
		return sv_run_ud(req, data, rep);
	(void)sv_op_known(req[7], &out, &atomic);
	if (req[7] == HW_WQE_NOP) {
		if (sv.up && req[6] == HW_QPT_RC && sv_probe((uint32_t)fab_get_le(req + 16, 4)))
			res = (struct hw_xm_res){ 0 };
		sv_rep(rep, &res);
		return FAB_XM_REP_SIZE;
	}
	sh = sv_shadow_of(req);
	if (sh != NULL && !sv_in_order(sh, seq)) {
		res = (struct hw_xm_res){ .discarded = true };
	} else if (sh != NULL) {
		/* A rendezvous SEND's range rides at the payload's end: not the message's, the tag's (hw_xm.h). */
		uint32_t rd = out && !atomic && (req[37] & HW_XM_TM_RD) ? (uint32_t)fab_get_le(req + 120, 4) : 0;
		struct hw_xm_tm tm = { .addr = (uint64_t)(uintptr_t)data + plen - (rd <= plen ? rd : 0), .lkey = key,
				       .len = rd, .flags = (uint8_t)(req[37] & (HW_XM_TM_RD | HW_XM_TM_RD_FAULT)) };
		uint32_t n = sv_wqe(wqe, req, key, data, rd <= plen ? plen - rd : plen);

		/* Without a key over its data (registration failed) it fails, and so do the requests after it. */
		if ((plen != 0 && key == 0) || rd > plen ||
		    hw_qp_exec_one_tm(sh->qp, wqe, n, (uint32_t)fab_get_le(req + 12, 4),
				      (uint16_t)fab_get_le(req + 38, 2), tm.flags != 0 ? &tm : NULL, &res) != HW_OK)
			res = (struct hw_xm_res){ .synd = plen != 0 && key == 0 ? HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR
										 : HW_CQE_SYNDROME_LOCAL_QP_OP_ERR };
		sv_ran(sh, seq, &res);
	}
	sv_rep(rep, &res);
	return FAB_XM_REP_SIZE + (fab_xm_rep_has_data(out, rep) ? plen : 0);
}

/*
 * A key of the service's domain exactly over [p, p + len): one kept from an
 * earlier call over the same bytes, or a new one (kept when large, *fresh
 * set when the caller must drop it). 0 when none can be had.
 */
static uint32_t sv_key(const void *p, uint64_t len, bool *fresh)
{
	uint32_t key = 0, lru = 0;

	*fresh = false;
	for (uint32_t i = 0; i < SV_KEYS; i++) {
		if (sv.keys[i].key != 0 && sv.keys[i].p == p && sv.keys[i].len == len) {
			sv.keys[i].used = ++sv.clock;
			return sv.keys[i].key;
		}
		if (sv.keys[i].used < sv.keys[lru].used)
			lru = i;
	}
	if (hw_mkey_reg(sv.pd, (void *)(uintptr_t)p, (uint64_t)(uintptr_t)p, len, HW_ACCESS_LOCAL_WRITE, &key) != HW_OK)
		return 0;
	if (len < SV_KEY_KEEP_MIN) {
		*fresh = true;
		return key;
	}
	if (sv.keys[lru].key != 0)
		fab_xm_key_drop(sv.keys[lru].key);
	sv.keys[lru].p = p;
	sv.keys[lru].len = len;
	sv.keys[lru].key = key;
	sv.keys[lru].used = ++sv.clock;
	return key;
}

uint32_t fab_xm_service(const uint8_t *req, uint64_t len, uint8_t *rep, uint64_t cap, uint64_t *rlen)
{
	uint32_t kin = 0, kout = 0;
	uint64_t at = 0, rat = 0;
	bool has_out, has_in, fin = false, fout = false;

	if (req == NULL || rep == NULL || rlen == NULL || !sv_call_shape(req, len, cap, &has_out, &has_in)) {
		BASE_DBG("malformed request from another machine refused");
		return FAB_UCX_ST_MALFORMED;
	}
	/* One key over the whole call and one over the whole answer, whatever the number of records. */
	if (sv.up && has_out)
		kin = sv_key(req, len, &fin);
	if (sv.up && has_in)
		kout = sv_key(rep, cap, &fout);
	while (at < len) {
		const uint8_t *r = req + at;
		uint64_t plen = fab_get_le(r + 56, 8);
		bool out, atomic;

		(void)sv_op_known(r[7], &out, &atomic);
		if (out)
			rat += sv_run(r, (uint8_t *)(uintptr_t)(r + FAB_XM_REQ_SIZE), kin, rep + rat);
		else
			rat += sv_run(r, rep + rat + FAB_XM_REP_SIZE, kout, rep + rat);
		at += FAB_XM_REQ_SIZE + (out ? plen : 0);
	}
	if (fin)
		fab_xm_key_drop(kin);
	if (fout)
		fab_xm_key_drop(kout);
	*rlen = rat;
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
	/* This machine's requests need it later; made now, outside any execution (fab_ucx.h). */
	(void)fab_ucx_client_start();
	alen = fab_ucx_service_start(FAB_UCX_SERVICE_VERBS, fab_xm_service, addr, sizeof(addr));
	if (alen <= 0 || fab_xm_rdv_listen(ip, addr, (size_t)alen) != 0)
		goto err;
	return;
err:
	sv.up = 0; /* no peer has the address: the service, if registered, refuses what reaches it anyway */
	BASE_WARN("this machine cannot take requests of other machines (UCX or the rendezvous port unavailable)");
}

/*
 * UCX's context creation probes the RDMA devices it sees; softdpu's are
 * hidden from that probe (fab_ucx_probing), so no probe QP comes back here
 * while the once runs.
 */
int fab_xm_serve(void)
{
	pthread_once(&sv.once, sv_start);
	return sv.up ? 0 : -1;
}
