/*
 * fab_ucx — reaching exported memory through UCX Active Messages.
 *
 * Exporter: one UCP context and worker per process, created on the first
 * export, and one service thread that progresses the worker and sleeps on its
 * event fd when idle. Each request names an export by id and capability key;
 * the service thread checks it against the table of live exports (key in
 * constant time, bounds, rights) and copies between the range and a staging
 * buffer of its own: UCX never reads or writes the exported range itself.
 * The export is marked busy only for that memcpy; unexport takes the export
 * out of the table and waits until it is idle, so after it returns nothing
 * touches the range, whatever the importers and the network do.
 *
 * Importer: one context and worker per process, shared by all remotes, used
 * under one mutex. read/write split the access into requests of at most
 * FAB_UCX_MAX_LEN, keep FAB_UCX_WINDOW of them in flight and progress the
 * worker from the calling thread until the replies arrived, the endpoint
 * failed or the deadline passed. A READ's data is received straight into the
 * caller's buffer (rendezvous). See docs/fabric_ucx.md.
 *
 * UCX itself is loaded by the first export or open (fab_ucx_load.c); every
 * other entry point runs only after one of them succeeded.
 */
#include "base_config.h"
#include "base_log.h"
#include "fab_ucx.h"
#include "fab_xm.h"
#include "fab_ucx_api.h"
#include "fab_wire.h"
#include "fab_xport.h"
#include "hw_mem.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define FAB_UCX_SLOW_RATE (64ull << 20) /* bytes/s a transfer may take on top of the timeout */
#define FAB_UCX_SPIN_NS 100000ull	/* keep polling this long after the last event before sleeping */
#define FAB_UCX_CLOSE_MAX_MS 2000u	/* longest close() waits for a graceful endpoint flush */
#define EXP_BUCKETS 64
#define EXP_STAGE_CACHE 8	       /* staging buffers kept for reuse */
#define EXP_STAGE_SMALL (64u << 10) /* smaller ones come from malloc directly */

/* A right to write the range lets a peer read it too. */
#define RIGHTS_READ (HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE | HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE)
#define RIGHTS_WRITE (HW_ACCESS_PEER_WRITE | HW_ACCESS_REMOTE_WRITE)

/* ---- helpers ---------------------------------------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };

	return ts;
}



/* Log lines about remote input are rate-limited: a hostile peer must not flood stderr. */
__attribute__((format(printf, 1, 2))) static void ucx_log(const char *fmt, ...)
{
	static _Atomic uint64_t window;
	static atomic_uint count;
	uint64_t sec = now_ns() / 1000000000ull;
	uint64_t w = atomic_load(&window);
	char line[256];
	va_list ap;

	if (w != sec && atomic_compare_exchange_strong(&window, &w, sec))
		atomic_store(&count, 0);
	if (atomic_fetch_add(&count, 1) >= 20)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Through the library's log, so the application's SDK log limit applies. */
	BASE_ERR("UCX fabric: %s", line);
}

static unsigned timeout_ms_val = BASE_FABRIC_TIMEOUT_DEFAULT_MS;
static int peer_errors_val = 1;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_load(void)
{
	peer_errors_val = base_config_ucx_peer_errors();
	timeout_ms_val = base_config_fabric_timeout_ms();
}

/* The bounded time of one remote access, read once from SOFTDPU_FABRIC_TIMEOUT_MS. */
static unsigned fab_ucx_timeout_ms(void)
{
	pthread_once(&config_once, config_load);
	return timeout_ms_val;
}

/*
 * Whether importer endpoints ask UCX for peer failure detection (default).
 * SOFTDPU_UCX_ERR_MODE=none gives it up so that UCX may use transports that
 * cannot detect a dead peer (shared memory in UCX 1.13); a dead exporter is
 * then noticed by the deadline only.
 */
static int fab_ucx_peer_errors(void)
{
	pthread_once(&config_once, config_load);
	return peer_errors_val;
}

/*
 * The transports the fabric's own context may use. Its UCX probe sees none
 * of softdpu's devices (fab_ucx_probing), so it cannot ride on them; but a
 * program's UCX_TLS meant for those (rc_mlx5 under Open MPI) would leave the
 * fabric nothing, so such a list is replaced by UCX's default ("all").
 * SOFTDPU_UCX_TLS chooses for the fabric alone; a UCX_TLS naming no RDMA
 * transport (UCX_TLS=tcp) is kept; NULL: UCX's own choice.
 */
static const char *fab_ucx_tls(void)
{
	static const char *const rdma[] = { "ib", "rc", "ud", "dc", "mlx5", "verbs" };
	const char *own = getenv("SOFTDPU_UCX_TLS");
	const char *tls = getenv("UCX_TLS");

	if (own != NULL && own[0] != '\0')
		return own;
	if (tls == NULL || tls[0] == '\0')
		return NULL;
	for (size_t i = 0; i < sizeof(rdma) / sizeof(rdma[0]); i++)
		if (strstr(tls, rdma[i]) != NULL)
			return "all";
	return tls;
}

/*
 * UCX's configuration (its environment), with one default of ours: messages
 * up to FAB_UCX_EAGER_MAX go eagerly. A call of several requests between
 * machines (fab_xm.c) stays below it, so it arrives in one piece, in the
 * order sent, without rendezvous's extra round trip (docs/PERFORMANCE.md).
 * UCX_RNDV_THRESH set by the user wins. NULL: UCX's defaults alone.
 */
static ucp_config_t *ucx_config(void)
{
	ucp_config_t *cfg = NULL;
	char v[24];

	if (fab_ucx.ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
		return NULL;
	snprintf(v, sizeof(v), "%u", FAB_UCX_EAGER_MAX);
	if (getenv("UCX_RNDV_THRESH") == NULL && fab_ucx.ucp_config_modify(cfg, "RNDV_THRESH", v) != UCS_OK)
		ucx_log("cannot set UCX's RNDV_THRESH; UCX's default stays");
	if (fab_ucx_tls() != NULL && fab_ucx.ucp_config_modify(cfg, "TLS", fab_ucx_tls()) != UCS_OK)
		ucx_log("cannot set UCX's TLS for the fabric; UCX's choice stays");
	/* No RDMA CM for the fabric: it connects by worker address, and the CM would open softdpu's (or a
	 * system librdmacm's /dev/infiniband/rdma_cm) only to fail and say so on the program's stdout. */
	(void)fab_ucx.ucp_config_modify(cfg, "SOCKADDR_TLS_PRIORITY", "tcp,sockcm");
	return cfg;
}

static __thread bool ucx_probing;

bool fab_ucx_probing(void)
{
	return ucx_probing;
}

static int ucx_new_context(ucp_context_h *ctx)
{
	ucp_config_t *cfg = ucx_config();
	ucp_params_t p;
	ucs_status_t st;

	memset(&p, 0, sizeof(p));
	p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
	p.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	p.mt_workers_shared = 0;
	ucx_probing = true; /* UCX's device probe finds none of softdpu's (fab_xm.h) */
	st = fab_ucx.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &p, cfg, ctx);
	ucx_probing = false;
	if (cfg != NULL)
		fab_ucx.ucp_config_release(cfg);
	if (st != UCS_OK) {
		ucx_log("ucp_init: %s", fab_ucx.ucs_status_string(st));
		return -1;
	}
	return 0;
}

static int ucx_new_worker(ucp_context_h ctx, ucp_worker_h *w, int *efd)
{
	ucp_worker_params_t wp;
	ucs_status_t st;

	memset(&wp, 0, sizeof(wp));
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SERIALIZED; /* one thread at a time, by construction */
	st = fab_ucx.ucp_worker_create(ctx, &wp, w);
	if (st != UCS_OK) {
		ucx_log("ucp_worker_create: %s", fab_ucx.ucs_status_string(st));
		return -1;
	}
	st = fab_ucx.ucp_worker_get_efd(*w, efd);
	if (st != UCS_OK) {
		ucx_log("ucp_worker_get_efd: %s", fab_ucx.ucs_status_string(st));
		fab_ucx.ucp_worker_destroy(*w);
		return -1;
	}
	return 0;
}

/* ---- exporter --------------------------------------------------------------------------------------------- */

struct exp_entry {
	struct exp_entry *next; /* hash chain */
	uint64_t id;
	uint8_t cap[FAB_CAP_KEY_LEN];
	uint64_t raddr; /* first byte as named by importers (the descriptor's addr) */
	uint64_t len;
	uint8_t *base; /* local address of raddr */
	uint32_t access;
	unsigned busy; /* copies in flight on the range */
	int live;      /* in the table */
};

/* A reply, or a rendezvous WRITE being received, that outlives the AM callback. */
struct exp_op {
	struct exp_op *next, *prev; /* in ex.ops (service thread only) */
	ucp_ep_h ep;	/* the importer's endpoint */
	uint8_t *stage; /* staging buffer owned by the operation, or NULL */
	uint64_t len;	/* its length */
	uint8_t rep[FAB_UCX_REP_SIZE];
	uint8_t req[FAB_UCX_REQ_SIZE];
};

static struct {
	pthread_mutex_t mu; /* table, entries' busy/live, init */
	pthread_cond_t idle;
	int up;
	pid_t pid;
	ucp_context_h ctx;
	ucp_worker_h worker;
	int efd, stopfd;
	atomic_int stop;
	pthread_t thread;
	uint16_t alen;
	uint8_t addr[FAB_XPORT_INFO_MAX - FAB_UCX_INFO_HEAD];
	struct exp_entry *tab[EXP_BUCKETS];
	void *stage_cache[EXP_STAGE_CACHE]; /* free staging buffers of FAB_UCX_MAX_LEN (service thread only) */
	int nstage;
	struct exp_op ops; /* operations UCX still holds (service thread only); freed at exit */
	fab_ucx_service_fn services[2]; /* CALL handlers by service id (fab_ucx_service_start) */
} ex = { .mu = PTHREAD_MUTEX_INITIALIZER, .efd = -1, .stopfd = -1 };

static unsigned exp_bucket(uint64_t id)
{
	return (unsigned)((id * 0x9e3779b97f4a7c15ull) >> 58) & (EXP_BUCKETS - 1);
}

static int cap_equal(const uint8_t *a, const uint8_t *b)
{
	volatile uint8_t diff = 0;

	for (int i = 0; i < FAB_CAP_KEY_LEN; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

/*
 * Under ex.mu: the live export a request (64-byte header h, operation op)
 * may access, or NULL with the refusal in *status.
 */
static struct exp_entry *exp_check_locked(const uint8_t *h, unsigned op, uint32_t *status)
{
	uint64_t id = fab_get_le(h + 24, 8), raddr = fab_get_le(h + 32, 8), len = fab_get_le(h + 40, 8);
	struct exp_entry *e = NULL;

	for (struct exp_entry *c = ex.tab[exp_bucket(id)]; c != NULL && e == NULL; c = c->next)
		if (c->id == id && cap_equal(c->cap, h + 48))
			e = c;
	if (e == NULL) {
		*status = FAB_UCX_ST_REVOKED; /* an unknown id and a wrong key look the same */
		return NULL;
	}
	if (raddr < e->raddr || len > e->len || raddr - e->raddr > e->len - len)
		*status = FAB_UCX_ST_RANGE;
	else if (!(e->access & (op == FAB_UCX_OP_READ ? RIGHTS_READ : RIGHTS_WRITE)))
		*status = FAB_UCX_ST_RIGHTS;
	else
		return e;
	ucx_log("%s of %llu bytes at 0x%llx refused on export %llu: %s", op == FAB_UCX_OP_READ ? "read" : "write",
		(unsigned long long)len, (unsigned long long)raddr, (unsigned long long)id,
		*status == FAB_UCX_ST_RANGE ? "outside the range" : "not permitted");
	return NULL;
}

/*
 * Performs the copy a well-formed request asks for between the exported range
 * and buf (READ: range -> buf, WRITE: buf -> range). The export is looked up
 * again and marked busy for the duration of the memcpy only, so unexport
 * never waits for the network. Returns the wire status.
 */
static uint32_t exp_copy(const uint8_t *h, unsigned op, void *buf)
{
	uint32_t status = FAB_UCX_ST_OK;
	uint64_t len = fab_get_le(h + 40, 8);
	struct exp_entry *e;
	uint8_t *target;

	pthread_mutex_lock(&ex.mu);
	e = exp_check_locked(h, op, &status);
	if (e == NULL) {
		pthread_mutex_unlock(&ex.mu);
		return status;
	}
	e->busy++;
	target = e->base + (fab_get_le(h + 32, 8) - e->raddr);
	pthread_mutex_unlock(&ex.mu);
	if (len != 0 && op == FAB_UCX_OP_READ)
		memcpy(buf, target, len);
	else if (len != 0)
		memcpy(target, buf, len);
	pthread_mutex_lock(&ex.mu);
	if (--e->busy == 0 && !e->live)
		pthread_cond_broadcast(&ex.idle);
	pthread_mutex_unlock(&ex.mu); /* e may be freed by unexport from here on */
	return status;
}

/*
 * Staging buffers: large ones are recycled, so that a stream of big requests
 * does not map and fault in fresh pages for every chunk. Service thread only.
 */
static uint8_t *exp_stage_get(uint64_t len)
{
	if (len <= EXP_STAGE_SMALL)
		return malloc(len != 0 ? len : 1);
	if (ex.nstage > 0)
		return ex.stage_cache[--ex.nstage];
	return malloc(FAB_UCX_MAX_LEN);
}

static void exp_stage_put(uint8_t *p, uint64_t len)
{
	if (p != NULL && len > EXP_STAGE_SMALL && ex.nstage < EXP_STAGE_CACHE)
		ex.stage_cache[ex.nstage++] = p;
	else
		free(p);
}

static struct exp_op *exp_op_new(ucp_ep_h ep)
{
	struct exp_op *op = malloc(sizeof(*op));

	if (op == NULL)
		return NULL;
	op->ep = ep;
	op->stage = NULL;
	op->len = 0;
	op->next = ex.ops.next;
	op->prev = &ex.ops;
	ex.ops.next->prev = op;
	ex.ops.next = op;
	return op;
}

static void exp_op_free(struct exp_op *op)
{
	op->prev->next = op->next;
	op->next->prev = op->prev;
	exp_stage_put(op->stage, op->len);
	free(op);
}

static void exp_send_done(void *request, ucs_status_t status, void *user_data)
{
	if (status != UCS_OK && status != UCS_ERR_CANCELED)
		ucx_log("reply send failed: %s", fab_ucx.ucs_status_string(status));
	exp_op_free(user_data);
	fab_ucx.ucp_request_free(request);
}

/*
 * Sends a reply to the request header req (64 bytes, magic checked) with the
 * data in stage (taken over; NULL for none).
 */
static void exp_reply(ucp_ep_h ep, const uint8_t *req, uint32_t status, uint8_t *stage, uint64_t len)
{
	struct exp_op *op = exp_op_new(ep);
	ucp_request_param_t p;
	ucs_status_ptr_t sp;

	if (op == NULL) {
		ucx_log("out of memory for a reply");
		exp_stage_put(stage, len);
		return;
	}
	op->stage = stage;
	op->len = stage != NULL ? len : 0;
	fab_put_le(op->rep + 0, FAB_UCX_REP_MAGIC, 4);
	fab_put_le(op->rep + 4, FAB_UCX_WIRE_VERSION, 2);
	fab_put_le(op->rep + 6, fab_get_le(req + 6, 2), 2);
	fab_put_le(op->rep + 8, FAB_UCX_REP_SIZE, 4);
	fab_put_le(op->rep + 12, status, 4);
	memcpy(op->rep + 16, req + 16, 8); /* request id */
	memcpy(op->rep + 24, req + 24, 8); /* export id */
	/* A CALL's reply says how much it answers; a READ's or WRITE's repeats the request's length. */
	fab_put_le(op->rep + 32, fab_get_le(req + 6, 2) == FAB_UCX_OP_CALL ? len : fab_get_le(req + 40, 8), 8);
	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.send = exp_send_done;
	p.user_data = op;
	sp = fab_ucx.ucp_am_send_nbx(ep, FAB_UCX_AM_REP, op->rep, FAB_UCX_REP_SIZE, op->stage, op->len, &p);
	if (UCS_PTR_IS_PTR(sp))
		return; /* exp_send_done finishes */
	if (UCS_PTR_IS_ERR(sp))
		ucx_log("reply send failed: %s", fab_ucx.ucs_status_string(UCS_PTR_STATUS(sp)));
	exp_op_free(op);
}

/* A CALL whose request is in payload: its service answers into a staging buffer of the size the caller accepts. */
static void exp_call_run(ucp_ep_h ep, const uint8_t *h, const uint8_t *payload)
{
	uint64_t id = fab_get_le(h + 24, 8), cap = fab_get_le(h + 32, 8), rlen = 0;
	fab_ucx_service_fn fn = id < sizeof(ex.services) / sizeof(ex.services[0]) ? ex.services[id] : NULL;
	uint8_t *stage = cap != 0 ? exp_stage_get(cap) : NULL;
	uint32_t status;

	if (fn == NULL)
		status = FAB_UCX_ST_MALFORMED;
	else if (cap != 0 && stage == NULL)
		status = FAB_UCX_ST_IO;
	else
		status = fn(payload, fab_get_le(h + 40, 8), stage, cap, &rlen);
	if (status != FAB_UCX_ST_OK || rlen > cap)
		rlen = 0;
	if (rlen == 0) {
		exp_stage_put(stage, cap);
		stage = NULL;
	} else if (cap > EXP_STAGE_SMALL && rlen <= EXP_STAGE_SMALL) {
		/* The reply's length decides how exp_stage_put frees it: keep the two in agreement. */
		uint8_t *small = malloc(rlen);

		if (small != NULL)
			memcpy(small, stage, rlen);
		exp_stage_put(stage, cap);
		stage = small;
		status = small != NULL ? status : FAB_UCX_ST_IO;
		rlen = small != NULL ? rlen : 0;
	}
	exp_reply(ep, h, status, stage, rlen);
}

/* The payload of a rendezvous WRITE or CALL is in the staging buffer (or failed to arrive). */
static void exp_write_received(struct exp_op *op, ucs_status_t status)
{
	if (status == UCS_OK && fab_get_le(op->req + 6, 2) == FAB_UCX_OP_CALL)
		exp_call_run(op->ep, op->req, op->stage);
	else if (status == UCS_OK)
		exp_reply(op->ep, op->req, exp_copy(op->req, FAB_UCX_OP_WRITE, op->stage), NULL, 0);
	else /* the endpoint is broken: the importer sees the failure itself */
		ucx_log("receiving %llu bytes of a write failed: %s", (unsigned long long)op->len,
			fab_ucx.ucs_status_string(status));
	exp_op_free(op);
}

static void exp_write_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
	(void)length;
	fab_ucx.ucp_request_free(request);
	exp_write_received(user_data, status);
}

bool fab_ucx_req_valid(const uint8_t *h, size_t payload, unsigned *op, uint64_t *len)
{
	*op = (unsigned)fab_get_le(h + 6, 2);
	*len = fab_get_le(h + 40, 8);
	return fab_get_le(h, 4) == FAB_UCX_REQ_MAGIC && fab_get_le(h + 4, 2) == FAB_UCX_WIRE_VERSION &&
	       fab_get_le(h + 8, 4) == FAB_UCX_REQ_SIZE && fab_get_le(h + 12, 4) == 0 &&
	       (*op == FAB_UCX_OP_READ || *op == FAB_UCX_OP_WRITE || *op == FAB_UCX_OP_CALL) &&
	       *len <= FAB_UCX_MAX_LEN && (*op == FAB_UCX_OP_READ ? payload == 0 : payload == *len) &&
	       (*op != FAB_UCX_OP_CALL || fab_get_le(h + 32, 8) <= FAB_UCX_MAX_LEN);
}

bool fab_ucx_rep_valid(const uint8_t *h, size_t header_length)
{
	return h != NULL && header_length == FAB_UCX_REP_SIZE && fab_get_le(h, 4) == FAB_UCX_REP_MAGIC &&
	       fab_get_le(h + 4, 2) == FAB_UCX_WIRE_VERSION && fab_get_le(h + 8, 4) == FAB_UCX_REP_SIZE;
}

static ucs_status_t exp_on_req(void *arg, const void *header, size_t header_length, void *data, size_t length,
			       const ucp_am_recv_param_t *param)
{
	const uint8_t *h = header;
	ucp_ep_h ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep : NULL;
	int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	uint32_t status = FAB_UCX_ST_OK;
	uint64_t len;
	unsigned op;

	(void)arg;
	/* Returning UCS_OK without receiving a rendezvous payload drops it. */
	if (header == NULL || header_length != FAB_UCX_REQ_SIZE) {
		ucx_log("malformed request: header of %zu bytes dropped", header_length);
		return UCS_OK;
	}
	if (fab_get_le(h, 4) != FAB_UCX_REQ_MAGIC) {
		ucx_log("malformed request: bad magic, dropped");
		return UCS_OK;
	}
	if (ep == NULL) {
		ucx_log("request without a reply endpoint dropped");
		return UCS_OK;
	}
	if (!fab_ucx_req_valid(h, length, &op, &len)) {
		ucx_log("malformed request (version %u, op %u, length %llu, payload %zu) refused",
			(unsigned)fab_get_le(h + 4, 2), (unsigned)fab_get_le(h + 6, 2), (unsigned long long)fab_get_le(h + 40, 8),
			length);
		exp_reply(ep, h, FAB_UCX_ST_MALFORMED, NULL, 0);
		return UCS_OK;
	}

	if (op == FAB_UCX_OP_CALL && !rndv) {
		exp_call_run(ep, h, data);
		return UCS_OK;
	}
	if (op == FAB_UCX_OP_READ) {
		/* Staged: UCX sends from a buffer of ours, never from the range itself. */
		uint8_t *stage = len != 0 ? exp_stage_get(len) : NULL;

		status = (len != 0 && stage == NULL) ? FAB_UCX_ST_IO : exp_copy(h, op, stage);
		if (status != FAB_UCX_ST_OK) {
			exp_stage_put(stage, len);
			stage = NULL;
		}
		exp_reply(ep, h, status, stage, len);
		return UCS_OK;
	}
	if (!rndv) { /* eager WRITE: the payload is here already */
		exp_reply(ep, h, exp_copy(h, op, data), NULL, 0);
		return UCS_OK;
	}

	/* Rendezvous WRITE: check first so that a refused payload is not even moved. */
	pthread_mutex_lock(&ex.mu);
	if (op == FAB_UCX_OP_WRITE && exp_check_locked(h, op, &status) == NULL) {
		pthread_mutex_unlock(&ex.mu);
		exp_reply(ep, h, status, NULL, 0);
		return UCS_OK;
	}
	pthread_mutex_unlock(&ex.mu);

	struct exp_op *wop = exp_op_new(ep);
	ucp_request_param_t p;
	ucs_status_ptr_t sp;

	if (wop != NULL)
		wop->stage = exp_stage_get(len);
	if (wop == NULL || wop->stage == NULL) {
		if (wop != NULL)
			exp_op_free(wop);
		exp_reply(ep, h, FAB_UCX_ST_IO, NULL, 0);
		return UCS_OK;
	}
	wop->len = len;
	memcpy(wop->req, h, FAB_UCX_REQ_SIZE);
	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv_am = exp_write_done;
	p.user_data = wop;
	sp = fab_ucx.ucp_am_recv_data_nbx(ex.worker, data, wop->stage, len, &p);
	if (UCS_PTR_IS_PTR(sp))
		return UCS_INPROGRESS; /* exp_write_done finishes */
	exp_write_received(wop, UCS_PTR_STATUS(sp));
	return UCS_INPROGRESS;
}

/*
 * How long the service thread keeps polling after its last message before
 * it sleeps on the worker's event fd. Polling saves the wake-up only when a
 * core is free for it: on a machine of two or three cores it takes the core
 * from the very threads that send the next message (measured: one-way
 * latency between machines 150 us with 100 us of polling, 42 us with 1 us;
 * docs/PERFORMANCE.md), so there it sleeps almost at once.
 */
static uint64_t exp_spin_ns(void)
{
	static uint64_t spin;

	if (spin == 0)
		spin = sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? FAB_UCX_SPIN_NS : 1000ull;
	return spin;
}

static void *exp_thread(void *arg)
{
	struct pollfd pf[2] = { { .fd = ex.efd, .events = POLLIN }, { .fd = ex.stopfd, .events = POLLIN } };
	uint64_t last = now_ns();

	(void)arg;
	for (;;) {
		if (fab_ucx.ucp_worker_progress(ex.worker) != 0) {
			last = 0;
			continue;
		}
		if (atomic_load(&ex.stop))
			break;
		if (last == 0)
			last = now_ns();
		if (now_ns() - last < exp_spin_ns())
			continue;
		ucs_status_t st = fab_ucx.ucp_worker_arm(ex.worker);

		if (st == UCS_ERR_BUSY)
			continue;
		if (st != UCS_OK) {
			ucx_log("ucp_worker_arm: %s", fab_ucx.ucs_status_string(st));
			poll(NULL, 0, 1);
			continue;
		}
		if (poll(pf, 2, -1) < 0 && errno != EINTR) {
			ucx_log("poll: %s", strerror(errno));
			poll(NULL, 0, 1);
		}
		if (pf[1].revents & POLLIN) {
			uint64_t v;

			if (read(ex.stopfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				ucx_log("read: %s", strerror(errno));
		}
		last = now_ns();
	}
	return NULL;
}

static void exp_teardown_locked(void)
{
	if (ex.worker != NULL)
		fab_ucx.ucp_worker_destroy(ex.worker);
	if (ex.ctx != NULL)
		fab_ucx.ucp_cleanup(ex.ctx);
	if (ex.stopfd >= 0)
		close(ex.stopfd);
	ex.worker = NULL;
	ex.ctx = NULL;
	ex.stopfd = -1;
	ex.efd = -1;
}

/* Under ex.mu: brings up the exporter side of this process once. */
static int exp_init_locked(void)
{
	ucp_worker_attr_t wa;
	ucp_am_handler_param_t hp;
	pthread_condattr_t ca;
	ucs_status_t st;

	if (ex.up && ex.pid == getpid())
		return 0;
	if (ex.up) /* inherited through fork: the service thread does not exist here */
		return -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ex.idle, &ca);
	pthread_condattr_destroy(&ca);
	if (ucx_new_context(&ex.ctx) != 0)
		return -1;
	if (ucx_new_worker(ex.ctx, &ex.worker, &ex.efd) != 0) {
		fab_ucx.ucp_cleanup(ex.ctx);
		ex.ctx = NULL;
		return -1;
	}
	ex.stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ex.stopfd < 0) {
		ucx_log("eventfd: %s", strerror(errno));
		goto fail;
	}
	/* The whole address first; only network transports if it does not fit. */
	for (int net_only = 0; net_only < 2; net_only++) {
		memset(&wa, 0, sizeof(wa));
		wa.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
		wa.address_flags = net_only ? UCP_WORKER_ADDRESS_FLAG_NET_ONLY : 0;
		st = fab_ucx.ucp_worker_query(ex.worker, &wa);
		if (st != UCS_OK) {
			ucx_log("ucp_worker_query: %s", fab_ucx.ucs_status_string(st));
			goto fail;
		}
		if (wa.address_length <= sizeof(ex.addr)) {
			memcpy(ex.addr, wa.address, wa.address_length);
			ex.alen = (uint16_t)wa.address_length;
		}
		fab_ucx.ucp_worker_release_address(ex.worker, wa.address);
		if (ex.alen != 0)
			break;
		ucx_log("worker address of %zu bytes does not fit in %zu%s", wa.address_length, sizeof(ex.addr),
			net_only ? "" : ", trying network transports only");
	}
	if (ex.alen == 0)
		goto fail;
	memset(&hp, 0, sizeof(hp));
	hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB |
			UCP_AM_HANDLER_PARAM_FIELD_ARG;
	hp.id = FAB_UCX_AM_REQ;
	hp.flags = UCP_AM_FLAG_WHOLE_MSG;
	hp.cb = exp_on_req;
	hp.arg = NULL;
	st = fab_ucx.ucp_worker_set_am_recv_handler(ex.worker, &hp);
	if (st != UCS_OK) {
		ucx_log("ucp_worker_set_am_recv_handler: %s", fab_ucx.ucs_status_string(st));
		goto fail;
	}
	atomic_store(&ex.stop, 0);
	ex.ops.next = ex.ops.prev = &ex.ops;
	if (pthread_create(&ex.thread, NULL, exp_thread, NULL) != 0) {
		ucx_log("cannot start the service thread");
		goto fail;
	}
	ex.pid = getpid();
	ex.up = 1;
	return 0;
fail:
	ex.alen = 0;
	exp_teardown_locked();
	return -1;
}

static int ucx_export_range(const struct fab_export_desc *d, void *addr, struct fab_xinfo *info, void **priv)
{
	struct exp_entry *e;
	unsigned b;

	if (d == NULL || addr == NULL || info == NULL || priv == NULL || d->len == 0 || d->addr + d->len < d->addr)
		return -1;
	if (fab_ucx_load() != 0)
		return -1; /* as in a build without UCX: the export reaches this machine only */
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -1;
	e->id = d->export_id;
	memcpy(e->cap, d->cap_key, FAB_CAP_KEY_LEN);
	e->raddr = d->addr;
	e->len = d->len;
	e->base = addr;
	e->access = d->access;
	pthread_mutex_lock(&ex.mu);
	if (exp_init_locked() != 0) {
		pthread_mutex_unlock(&ex.mu);
		free(e);
		return -1;
	}
	b = exp_bucket(e->id);
	e->next = ex.tab[b];
	ex.tab[b] = e;
	e->live = 1;
	fab_put_le(info->data, FAB_UCX_WIRE_VERSION, 2);
	fab_put_le(info->data + 2, ex.alen, 2);
	memcpy(info->data + FAB_UCX_INFO_HEAD, ex.addr, ex.alen);
	info->len = (uint16_t)(FAB_UCX_INFO_HEAD + ex.alen);
	pthread_mutex_unlock(&ex.mu);
	*priv = e;
	return 0;
}

static void ucx_unexport(void *priv)
{
	struct exp_entry *e = priv;
	uint64_t start = now_ns();
	unsigned tmo = fab_ucx_timeout_ms();

	if (e == NULL)
		return;
	pthread_mutex_lock(&ex.mu);
	for (struct exp_entry **pp = &ex.tab[exp_bucket(e->id)]; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	e->live = 0;
	/* Copies in flight are memcpy calls of the service thread: they end shortly. */
	for (uint64_t next = start + (uint64_t)tmo * 1000000ull; e->busy != 0;) {
		struct timespec ts = ns_to_ts(next);

		if (pthread_cond_timedwait(&ex.idle, &ex.mu, &ts) == ETIMEDOUT && e->busy != 0) {
			ucx_log("unexport of export %llu still waits for %u copies after %llu ms",
				(unsigned long long)e->id, e->busy, (unsigned long long)((now_ns() - start) / 1000000));
			next = now_ns() + (uint64_t)tmo * 1000000ull;
		}
	}
	pthread_mutex_unlock(&ex.mu);
	free(e);
}

static void exp_fini(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&ex.mu);
	if (!ex.up || ex.pid != getpid()) {
		pthread_mutex_unlock(&ex.mu);
		return;
	}
	ex.up = 0;
	pthread_mutex_unlock(&ex.mu);
	atomic_store(&ex.stop, 1);
	if (write(ex.stopfd, &one, sizeof(one)) < 0)
		ucx_log("cannot wake the service thread: %s", strerror(errno));
	pthread_join(ex.thread, NULL);
	/* Without the lock: destroying the worker may complete requests, whose callbacks take it. */
	if (ex.worker != NULL)
		fab_ucx.ucp_worker_destroy(ex.worker);
	ex.worker = NULL;
	pthread_mutex_lock(&ex.mu);
	for (int b = 0; b < EXP_BUCKETS; b++) {
		while (ex.tab[b] != NULL) { /* exports never withdrawn: the process is leaving */
			struct exp_entry *e = ex.tab[b];

			ex.tab[b] = e->next;
			free(e);
		}
	}
	/* Operations of importers that vanished without UCX noticing (no peer error handling). */
	while (ex.ops.next != &ex.ops)
		exp_op_free(ex.ops.next);
	while (ex.nstage > 0)
		free(ex.stage_cache[--ex.nstage]);
	exp_teardown_locked();
	pthread_mutex_unlock(&ex.mu);
}

/* ---- importer --------------------------------------------------------------------------------------------- */

struct fab_remote {
	struct fab_remote *next; /* zombie list */
	ucp_ep_h ep;
	int failed;	  /* the endpoint reported an error: the exporter is gone */
	int close_pending; /* a close of the endpoint did not finish in time: UCX may still call back */
	uint64_t export_id;
	uint8_t cap[FAB_CAP_KEY_LEN];
	uint64_t addr, len;
	uint32_t access;
	uint16_t alen;
	uint8_t waddr[FAB_XPORT_INFO_MAX];
};

/* One read or write in flight; lives on the caller's stack. */
struct imp_op {
	struct imp_op *next, *prev;
	struct fab_remote *r;
	uint64_t req_id;
	unsigned op;
	void *dst;
	uint64_t len;
	uint8_t hdr[FAB_UCX_REQ_SIZE];
	int send_busy, recv_busy, replied;
	enum fab_status st;
	uint64_t tag;  /* what the reply must echo: the export id, or a CALL's service id */
	uint64_t cap;  /* a CALL: the most reply bytes dst takes */
	uint64_t rlen; /* a CALL: the reply bytes received */
};

static struct {
	pthread_mutex_t mu; /* everything below and every use of the worker */
	pthread_cond_t cv;  /* a thread polled the event fd and progressed */
	int up;
	pid_t pid;
	ucp_context_h ctx;
	ucp_worker_h worker;
	int efd;
	int poller; /* a thread is sleeping on efd */
	struct imp_op ops; /* list head of pending operations */
	uint64_t next_id;
	struct fab_remote *zombies; /* remotes whose endpoint close did not finish */
} im = { .mu = PTHREAD_MUTEX_INITIALIZER, .efd = -1 };

static enum fab_status wire_to_fab(uint32_t st)
{
	switch (st) {
	case FAB_UCX_ST_OK:
		return FAB_OK;
	case FAB_UCX_ST_REVOKED:
		return FAB_ERR_REVOKED;
	case FAB_UCX_ST_RANGE:
	case FAB_UCX_ST_RIGHTS:
		return FAB_ERR_INVAL;
	default:
		return FAB_ERR_IO;
	}
}

static void imp_recv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
	struct imp_op *op = user_data;

	if (status == UCS_OK && length == op->len)
		op->st = FAB_OK;
	else
		op->st = op->r->failed ? FAB_ERR_PEER_GONE : FAB_ERR_IO;
	op->recv_busy = 0;
	op->replied = 1;
	fab_ucx.ucp_request_free(request);
}

static void imp_send_done(void *request, ucs_status_t status, void *user_data)
{
	struct imp_op *op = user_data;

	(void)status; /* a failed send means a failed endpoint: the error callback says so */
	op->send_busy = 0;
	fab_ucx.ucp_request_free(request);
}

static struct imp_op *imp_find(uint64_t req_id)
{
	for (struct imp_op *op = im.ops.next; op != &im.ops; op = op->next)
		if (op->req_id == req_id)
			return op;
	return NULL;
}

static void imp_unlink(struct imp_op *op)
{
	if (op->next == NULL)
		return;
	op->prev->next = op->next;
	op->next->prev = op->prev;
	op->next = op->prev = NULL;
}

/* Runs under im.mu (from ucp_worker_progress). */
static ucs_status_t imp_on_rep(void *arg, const void *header, size_t header_length, void *data, size_t length,
			       const ucp_am_recv_param_t *param)
{
	const uint8_t *h = header;
	int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	struct imp_op *op;
	uint32_t status;
	uint64_t rlen;

	(void)arg;
	if (!fab_ucx_rep_valid(h, header_length)) {
		ucx_log("malformed reply (%zu-byte header) dropped", header_length);
		return UCS_OK;
	}
	op = imp_find(fab_get_le(h + 16, 8));
	if (op == NULL)
		return UCS_OK; /* the request timed out: nobody waits for it */
	status = (uint32_t)fab_get_le(h + 12, 4);
	rlen = fab_get_le(h + 32, 8);
	if (op->replied || fab_get_le(h + 24, 8) != op->tag || fab_get_le(h + 6, 2) != op->op) {
		ucx_log("reply does not match request %llu, dropped", (unsigned long long)op->req_id);
		return UCS_OK;
	}
	if (status != FAB_UCX_ST_OK) {
		op->st = wire_to_fab(status);
		op->replied = 1;
		return UCS_OK;
	}
	if (op->op == FAB_UCX_OP_CALL) {
		if (rlen > op->cap || length != rlen) {
			ucx_log("reply of %zu bytes to a call accepting %llu refused", length, (unsigned long long)op->cap);
			op->st = FAB_ERR_IO;
			op->replied = 1;
			return UCS_OK;
		}
		op->rlen = rlen;
		op->len = rlen; /* what imp_recv_done expects to arrive */
	} else if (rlen != op->len || length != (op->op == FAB_UCX_OP_READ ? op->len : 0)) {
		ucx_log("reply of %zu bytes for a %s of %llu bytes refused", length,
			op->op == FAB_UCX_OP_READ ? "read" : "write", (unsigned long long)op->len);
		op->st = FAB_ERR_IO;
		op->replied = 1;
		return UCS_OK;
	}
	if (op->op == FAB_UCX_OP_WRITE || length == 0) {
		op->st = FAB_OK;
		op->replied = 1;
		return UCS_OK;
	}
	if (!rndv) {
		memcpy(op->dst, data, length);
		op->st = FAB_OK;
		op->replied = 1;
		return UCS_OK;
	}
	/* Rendezvous: the data lands in the caller's buffer directly. */
	ucp_request_param_t p;
	ucs_status_ptr_t sp;

	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv_am = imp_recv_done;
	p.user_data = op;
	op->recv_busy = 1;
	sp = fab_ucx.ucp_am_recv_data_nbx(im.worker, data, op->dst, length, &p);
	if (UCS_PTR_IS_PTR(sp))
		return UCS_INPROGRESS;
	op->recv_busy = 0;
	op->replied = 1;
	op->st = UCS_PTR_IS_ERR(sp) ? FAB_ERR_IO : FAB_OK;
	return UCS_INPROGRESS;
}

static void imp_ep_err(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct fab_remote *r = arg;

	(void)ep;
	if (!r->failed && r->export_id != 0)
		ucx_log("exporter of export %llu unreachable: %s", (unsigned long long)r->export_id,
			fab_ucx.ucs_status_string(status));
	else if (!r->failed)
		ucx_log("peer process unreachable: %s", fab_ucx.ucs_status_string(status));
	r->failed = 1;
}

/* Under im.mu. */
static int imp_init_locked(void)
{
	ucp_am_handler_param_t hp;
	pthread_condattr_t ca;
	ucs_status_t st;

	if (im.up && im.pid == getpid())
		return 0;
	if (im.up)
		return -1; /* inherited through fork */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&im.cv, &ca);
	pthread_condattr_destroy(&ca);
	im.ops.next = im.ops.prev = &im.ops;
	if (ucx_new_context(&im.ctx) != 0)
		return -1;
	if (ucx_new_worker(im.ctx, &im.worker, &im.efd) != 0)
		goto fail_ctx;
	memset(&hp, 0, sizeof(hp));
	hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_CB |
			UCP_AM_HANDLER_PARAM_FIELD_ARG;
	hp.id = FAB_UCX_AM_REP;
	hp.flags = UCP_AM_FLAG_WHOLE_MSG;
	hp.cb = imp_on_rep;
	hp.arg = NULL;
	st = fab_ucx.ucp_worker_set_am_recv_handler(im.worker, &hp);
	if (st != UCS_OK) {
		ucx_log("ucp_worker_set_am_recv_handler: %s", fab_ucx.ucs_status_string(st));
		fab_ucx.ucp_worker_destroy(im.worker);
		im.worker = NULL;
		goto fail_ctx;
	}
	im.pid = getpid();
	im.up = 1;
	return 0;
fail_ctx:
	fab_ucx.ucp_cleanup(im.ctx);
	im.ctx = NULL;
	return -1;
}

/* Under im.mu: progresses until the worker is idle; wakes other waiters if anything happened. */
static unsigned imp_progress(void)
{
	unsigned n = 0, k;

	while ((k = fab_ucx.ucp_worker_progress(im.worker)) != 0)
		n += k;
	if (n != 0)
		pthread_cond_broadcast(&im.cv);
	return n;
}

/*
 * Under im.mu: sleeps until the worker has events or until `until`. One thread
 * sleeps on the event fd; the others wait on im.cv, which it signals.
 */
static void imp_wait(uint64_t until)
{
	uint64_t now = now_ns();
	uint64_t slice = now + 100000000ull; /* recheck at least every 100 ms */

	if (until > slice)
		until = slice;
	if (until <= now)
		return;
	if (im.poller) {
		struct timespec ts = ns_to_ts(until);

		pthread_cond_timedwait(&im.cv, &im.mu, &ts);
		return;
	}
	ucs_status_t st = fab_ucx.ucp_worker_arm(im.worker);

	if (st == UCS_ERR_BUSY)
		return;
	struct pollfd pf = { .fd = im.efd, .events = POLLIN };
	int ms = (int)((until - now + 999999) / 1000000);

	if (st != UCS_OK)
		ms = 1; /* cannot arm: poll the worker at a slow pace */
	im.poller = 1;
	pthread_mutex_unlock(&im.mu);
	poll(&pf, 1, ms);
	pthread_mutex_lock(&im.mu);
	im.poller = 0;
	pthread_cond_broadcast(&im.cv);
}

/* Under im.mu: waits for a close request for at most ms. 1 when it finished. */
static int imp_wait_req(ucs_status_ptr_t sp, unsigned ms)
{
	uint64_t until = now_ns() + (uint64_t)ms * 1000000ull;

	if (!UCS_PTR_IS_PTR(sp))
		return 1;
	for (;;) {
		imp_progress();
		if (fab_ucx.ucp_request_check_status(sp) != UCS_INPROGRESS) {
			fab_ucx.ucp_request_free(sp);
			return 1;
		}
		if (now_ns() >= until) {
			fab_ucx.ucp_request_free(sp); /* released by UCX when it completes */
			return 0;
		}
		imp_wait(until);
	}
}

/* Under im.mu: closes r's endpoint; 1 when UCX is done with it (no more callbacks on r). */
static int imp_ep_close(struct fab_remote *r, int force)
{
	ucp_request_param_t p;
	ucs_status_ptr_t sp;
	unsigned ms = fab_ucx_timeout_ms();

	if (r->ep == NULL)
		return 1;
	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
	sp = fab_ucx.ucp_ep_close_nbx(r->ep, &p);
	r->ep = NULL;
	if (imp_wait_req(sp, ms < FAB_UCX_CLOSE_MAX_MS ? ms : FAB_UCX_CLOSE_MAX_MS))
		return 1;
	r->close_pending = 1;
	return 0;
}

/* Under im.mu. */
static enum fab_status imp_connect(struct fab_remote *r)
{
	ucp_ep_params_t ep;
	ucs_status_t st;

	memset(&ep, 0, sizeof(ep));
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)r->waddr;
	ep.err_mode = fab_ucx_peer_errors() ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
	ep.err_handler.cb = imp_ep_err;
	ep.err_handler.arg = r;
	st = fab_ucx.ucp_ep_create(im.worker, &ep, &r->ep);
	if (st != UCS_OK) {
		ucx_log("cannot reach the exporter of export %llu: %s", (unsigned long long)r->export_id,
			fab_ucx.ucs_status_string(st));
		r->ep = NULL;
		return st == UCS_ERR_UNREACHABLE || st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
				       st == UCS_ERR_REJECTED
			       ? FAB_ERR_PEER_GONE
			       : FAB_ERR_IO;
	}
	return FAB_OK;
}

static int ucx_open(const struct fab_export_desc *d, const struct fab_xinfo *info, struct fab_remote **out)
{
	struct fab_remote *r;
	size_t alen;
	enum fab_status st;

	if (out == NULL)
		return FAB_ERR_INVAL;
	*out = NULL;
	if (d == NULL || info == NULL || info->len < FAB_UCX_INFO_HEAD || info->len > FAB_XPORT_INFO_MAX ||
	    fab_get_le(info->data, 2) != FAB_UCX_WIRE_VERSION)
		return FAB_ERR_INVAL;
	alen = fab_get_le(info->data + 2, 2);
	if (alen == 0 || alen != (size_t)info->len - FAB_UCX_INFO_HEAD || d->len == 0 || d->addr + d->len < d->addr)
		return FAB_ERR_INVAL;
	if (fab_ucx_load() != 0)
		return FAB_ERR_NO_PATH; /* as in a build without UCX */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return FAB_ERR_IO;
	r->export_id = d->export_id;
	memcpy(r->cap, d->cap_key, FAB_CAP_KEY_LEN);
	r->addr = d->addr;
	r->len = d->len;
	r->access = d->access;
	r->alen = (uint16_t)alen;
	memcpy(r->waddr, info->data + FAB_UCX_INFO_HEAD, alen);
	pthread_mutex_lock(&im.mu);
	st = imp_init_locked() != 0 ? FAB_ERR_IO : imp_connect(r);
	if (st != FAB_OK) {
		pthread_mutex_unlock(&im.mu);
		free(r);
		return st;
	}
	pthread_mutex_unlock(&im.mu);
	*out = r;
	return FAB_OK;
}

static void ucx_close(struct fab_remote *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&im.mu);
	if (im.up && im.pid == getpid() && (!imp_ep_close(r, r->failed) || r->close_pending)) {
		/* UCX may still call back on r: keep it until the worker goes */
		r->next = im.zombies;
		im.zombies = r;
		r = NULL;
	}
	pthread_mutex_unlock(&im.mu);
	free(r);
}

/* Under im.mu: sends the request of one chunk. FAB_OK when it is in flight. */
static enum fab_status imp_start(struct fab_remote *r, struct imp_op *op, unsigned opcode, uint64_t tag,
				 uint64_t raddr, void *dst, const void *src, uint64_t len)
{
	ucp_request_param_t p;
	ucs_status_ptr_t sp;

	memset(op, 0, sizeof(*op));
	op->r = r;
	op->op = opcode;
	op->dst = dst;
	op->len = len;
	op->st = FAB_ERR_IO;
	op->tag = tag;
	op->req_id = ++im.next_id;
	fab_put_le(op->hdr + 0, FAB_UCX_REQ_MAGIC, 4);
	fab_put_le(op->hdr + 4, FAB_UCX_WIRE_VERSION, 2);
	fab_put_le(op->hdr + 6, opcode, 2);
	fab_put_le(op->hdr + 8, FAB_UCX_REQ_SIZE, 4);
	fab_put_le(op->hdr + 12, 0, 4);
	fab_put_le(op->hdr + 16, op->req_id, 8);
	fab_put_le(op->hdr + 24, tag, 8);
	fab_put_le(op->hdr + 32, raddr, 8);
	fab_put_le(op->hdr + 40, len, 8);
	if (opcode == FAB_UCX_OP_CALL)
		memset(op->hdr + 48, 0, FAB_CAP_KEY_LEN);
	else
		memcpy(op->hdr + 48, r->cap, FAB_CAP_KEY_LEN);
	op->next = im.ops.next;
	op->prev = &im.ops;
	im.ops.next->prev = op;
	im.ops.next = op;

	memset(&p, 0, sizeof(p));
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
	p.cb.send = imp_send_done;
	p.user_data = op;
	p.flags = UCP_AM_SEND_FLAG_REPLY;
	sp = fab_ucx.ucp_am_send_nbx(r->ep, FAB_UCX_AM_REQ, op->hdr, FAB_UCX_REQ_SIZE, src,
				     opcode != FAB_UCX_OP_READ ? len : 0, &p);
	if (UCS_PTR_IS_ERR(sp)) {
		imp_unlink(op);
		return r->failed ? FAB_ERR_PEER_GONE : FAB_ERR_IO;
	}
	op->send_busy = UCS_PTR_IS_PTR(sp);
	return FAB_OK;
}

/*
 * One read or write: split into requests of at most FAB_UCX_MAX_LEN with up
 * to FAB_UCX_WINDOW in flight, progressed from the calling thread. The
 * deadline is the timeout plus the time a chunk takes at FAB_UCX_SLOW_RATE,
 * moved forward whenever a chunk completes.
 */
static enum fab_status imp_run(struct fab_remote *r, unsigned opcode, uint64_t raddr, uint8_t *dst,
			       const uint8_t *src, size_t len)
{
	struct imp_op ops[FAB_UCX_WINDOW];
	int active[FAB_UCX_WINDOW] = { 0 };
	const uint64_t slack = (uint64_t)fab_ucx_timeout_ms() * 1000000ull +
			       (uint64_t)FAB_UCX_MAX_LEN * FAB_UCX_WINDOW * 1000ull / (FAB_UCX_SLOW_RATE / 1000000ull);
	enum fab_status result = FAB_OK;
	uint64_t done = 0, deadline;
	int cancelled = 0, inflight = 0;

	if (r == NULL || (len != 0 && (opcode == FAB_UCX_OP_READ ? dst == NULL : src == NULL)))
		return FAB_ERR_INVAL;
	/* The exporter checks again; this only spares a round trip. */
	if (raddr < r->addr || len > r->len || raddr - r->addr > r->len - len)
		return FAB_ERR_INVAL;
	if (!(r->access & (opcode == FAB_UCX_OP_READ ? RIGHTS_READ : RIGHTS_WRITE)))
		return FAB_ERR_INVAL;
	if (len == 0)
		return FAB_OK;

	pthread_mutex_lock(&im.mu);
	if (r->failed) {
		pthread_mutex_unlock(&im.mu);
		return FAB_ERR_PEER_GONE;
	}
	if (r->ep == NULL && (result = imp_connect(r)) != FAB_OK) { /* after a timed-out request */
		pthread_mutex_unlock(&im.mu);
		return result;
	}
	deadline = now_ns() + slack;
	for (uint64_t idle_since = 0;;) {
		uint64_t now;

		/* Fill the window. */
		for (int i = 0; i < FAB_UCX_WINDOW && result == FAB_OK && !cancelled && done < len && r->ep != NULL;
		     i++) {
			uint64_t n = len - done < FAB_UCX_MAX_LEN ? len - done : FAB_UCX_MAX_LEN;

			if (active[i])
				continue;
			result = imp_start(r, &ops[i], opcode, r->export_id, raddr + done, dst != NULL ? dst + done : NULL,
					   src != NULL ? src + done : NULL, n);
			if (result != FAB_OK)
				break;
			active[i] = 1;
			inflight++;
			done += n;
		}
		if (imp_progress() != 0)
			idle_since = 0;
		/* Reap finished chunks. */
		for (int i = 0; i < FAB_UCX_WINDOW; i++) {
			struct imp_op *op = &ops[i];

			if (!active[i] || op->send_busy || op->recv_busy)
				continue;
			if (op->replied && !cancelled) {
				if (op->st != FAB_OK && result == FAB_OK)
					result = op->st;
				deadline = now_ns() + slack;
			} else if (r->failed) {
				if (result == FAB_OK || result == FAB_ERR_TIMEOUT)
					result = FAB_ERR_PEER_GONE;
			} else if (!cancelled) {
				continue; /* waiting for the reply */
			}
			imp_unlink(op);
			active[i] = 0;
			inflight--;
		}
		if (inflight == 0 && (done == len || result != FAB_OK || cancelled))
			break;
		now = now_ns();
		if (!cancelled && now >= deadline) {
			int busy = 0;

			/* Nobody takes the replies any more; UCX must let go of the caller's buffer first. */
			cancelled = 1;
			if (result == FAB_OK)
				result = FAB_ERR_TIMEOUT;
			for (int i = 0; i < FAB_UCX_WINDOW; i++) {
				if (active[i]) {
					imp_unlink(&ops[i]);
					busy |= ops[i].send_busy | ops[i].recv_busy;
				}
			}
			if (busy && r->ep != NULL) {
				ucx_log("%s of %zu bytes on export %llu timed out; resetting the endpoint",
					opcode == FAB_UCX_OP_READ ? "read" : "write", len,
					(unsigned long long)r->export_id);
				imp_ep_close(r, 1);
			}
			continue;
		}
		if (idle_since == 0)
			idle_since = now;
		if (now - idle_since < FAB_UCX_SPIN_NS)
			continue;
		imp_wait(cancelled ? now + 100000000ull : deadline);
	}
	pthread_mutex_unlock(&im.mu);
	return result;
}

static enum fab_status ucx_read(struct fab_remote *r, uint64_t raddr, void *dst, size_t len)
{
	return imp_run(r, FAB_UCX_OP_READ, raddr, dst, NULL, len);
}

static enum fab_status ucx_write(struct fab_remote *r, uint64_t raddr, const void *src, size_t len)
{
	return imp_run(r, FAB_UCX_OP_WRITE, raddr, NULL, src, len);
}

/* ---- services ----------------------------------------------------------------------------------------- */

int fab_ucx_service_start(uint32_t id, fab_ucx_service_fn fn, uint8_t *addr, size_t cap)
{
	int len = -1;

	if (id >= sizeof(ex.services) / sizeof(ex.services[0]) || fn == NULL || addr == NULL || fab_ucx_load() != 0)
		return -1;
	pthread_mutex_lock(&ex.mu);
	if (exp_init_locked() == 0 && ex.alen <= cap) {
		ex.services[id] = fn; /* read by the service thread: set before any peer has the address */
		memcpy(addr, ex.addr, ex.alen);
		len = ex.alen;
	}
	pthread_mutex_unlock(&ex.mu);
	return len;
}

int fab_ucx_client_start(void)
{
	int rc;

	if (fab_ucx_load() != 0)
		return -1;
	pthread_mutex_lock(&im.mu);
	rc = imp_init_locked();
	pthread_mutex_unlock(&im.mu);
	return rc;
}

int fab_ucx_connect(const uint8_t *addr, size_t alen, struct fab_remote **out)
{
	struct fab_remote *r;
	enum fab_status st;

	if (out == NULL || addr == NULL || alen == 0 || alen > sizeof(r->waddr))
		return FAB_ERR_INVAL;
	*out = NULL;
	if (fab_ucx_load() != 0)
		return FAB_ERR_NO_PATH;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return FAB_ERR_IO;
	r->alen = (uint16_t)alen;
	memcpy(r->waddr, addr, alen);
	pthread_mutex_lock(&im.mu);
	st = imp_init_locked() != 0 ? FAB_ERR_IO : imp_connect(r);
	pthread_mutex_unlock(&im.mu);
	if (st != FAB_OK) {
		free(r);
		return st;
	}
	*out = r;
	return FAB_OK;
}

void fab_ucx_disconnect(struct fab_remote *r)
{
	ucx_close(r);
}

bool fab_ucx_peer_failed(const struct fab_remote *r)
{
	return __atomic_load_n(&r->failed, __ATOMIC_ACQUIRE) != 0;
}

struct fab_call {
	struct imp_op op; /* linked in im.ops while the reply may come */
	struct fab_remote *r;
	uint64_t deadline;
	int cancelled;
};

enum fab_status fab_ucx_call_start(struct fab_remote *r, uint32_t id, const void *req, size_t len, void *rep,
				   size_t cap, struct fab_call **out)
{
	struct fab_call *c;
	enum fab_status st;

	if (r == NULL || out == NULL || len > FAB_UCX_MAX_LEN || cap > FAB_UCX_MAX_LEN || (len != 0 && req == NULL) ||
	    (cap != 0 && rep == NULL))
		return FAB_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return FAB_ERR_IO;
	pthread_mutex_lock(&im.mu);
	if (r->failed || (r->ep == NULL && imp_connect(r) != FAB_OK)) {
		pthread_mutex_unlock(&im.mu);
		free(c);
		return FAB_ERR_PEER_GONE;
	}
	st = imp_start(r, &c->op, FAB_UCX_OP_CALL, id, cap, rep, req, len);
	c->op.cap = cap;
	c->r = r;
	c->deadline = now_ns() + (uint64_t)fab_ucx_timeout_ms() * 1000000ull +
		      (uint64_t)(len + cap) * 1000ull / (FAB_UCX_SLOW_RATE / 1000000ull);
	pthread_mutex_unlock(&im.mu);
	if (st != FAB_OK) {
		free(c);
		return st;
	}
	*out = c;
	return FAB_OK;
}

/*
 * Under im.mu, after a progress: 1 when c is done (*st, *rlen set; c unlinked),
 * 0 while its reply may still come. Past the deadline the call is cancelled:
 * nobody takes the reply any more, and UCX must let go of the caller's
 * buffers first, so a busy endpoint is reset.
 */
static int call_check_locked(struct fab_call *c, enum fab_status *st, size_t *rlen)
{
	struct imp_op *op = &c->op;

	if (!c->cancelled && !op->replied && !c->r->failed && now_ns() >= c->deadline) {
		c->cancelled = 1;
		imp_unlink(op);
		if ((op->send_busy || op->recv_busy) && c->r->ep != NULL) {
			ucx_log("call timed out; resetting the endpoint");
			imp_ep_close(c->r, 1);
		}
	}
	if (op->send_busy || op->recv_busy || !(op->replied || c->r->failed || c->cancelled))
		return 0;
	imp_unlink(op);
	*st = c->cancelled ? FAB_ERR_TIMEOUT : op->replied ? op->st : FAB_ERR_PEER_GONE;
	*rlen = *st == FAB_OK ? op->rlen : 0;
	return 1;
}

int fab_ucx_call_test(struct fab_call *c, enum fab_status *st, size_t *rlen)
{
	unsigned moved;
	int done;

	pthread_mutex_lock(&im.mu);
	moved = imp_progress();
	done = call_check_locked(c, st, rlen);
	pthread_mutex_unlock(&im.mu);
	if (done)
		free(c);
	else if (moved == 0)
		sched_yield(); /* the caller polls again at once: a thread on this core that moves the transfer goes first */
	return done;
}

enum fab_status fab_ucx_call(struct fab_remote *r, uint32_t id, const void *req, size_t len, void *rep, size_t cap,
			     size_t *rlen)
{
	enum fab_status st;
	struct fab_call *c = NULL;
	uint64_t idle_since = 0;

	if (rlen == NULL)
		return FAB_ERR_INVAL;
	*rlen = 0;
	st = fab_ucx_call_start(r, id, req, len, rep, cap, &c);
	if (st != FAB_OK)
		return st;
	/* The calling thread progresses, and sleeps on the worker once nothing happened for a while. */
	pthread_mutex_lock(&im.mu);
	for (;;) {
		uint64_t now;

		if (imp_progress() != 0)
			idle_since = 0;
		if (call_check_locked(c, &st, rlen))
			break;
		now = now_ns();
		if (idle_since == 0)
			idle_since = now;
		if (now - idle_since >= FAB_UCX_SPIN_NS)
			imp_wait(c->cancelled ? now + 100000000ull : c->deadline);
	}
	pthread_mutex_unlock(&im.mu);
	free(c);
	return st;
}

static void imp_fini(void)
{
	pthread_mutex_lock(&im.mu);
	if (!im.up || im.pid != getpid()) {
		pthread_mutex_unlock(&im.mu);
		return;
	}
	im.up = 0;
	/* Calls still in flight (a program leaving without tearing down): their sends are cancelled first. */
	for (struct imp_op *op = im.ops.next; op != &im.ops; op = op->next)
		if (op->r->ep != NULL)
			(void)imp_ep_close(op->r, 1);
	fab_ucx.ucp_worker_destroy(im.worker);
	fab_ucx.ucp_cleanup(im.ctx);
	im.worker = NULL;
	im.ctx = NULL;
	while (im.zombies != NULL) {
		struct fab_remote *r = im.zombies;

		im.zombies = r->next;
		free(r);
	}
	pthread_mutex_unlock(&im.mu);
}

/* At exit: stop the service thread and release both sides; never waits on peers. */
__attribute__((destructor)) static void fab_ucx_fini(void)
{
	imp_fini();
	exp_fini();
}

const struct fab_xport_ops fab_ucx_ops = {
	.name = "ucx",
	.export_range = ucx_export_range,
	.unexport = ucx_unexport,
	.open = ucx_open,
	.close = ucx_close,
	.read = ucx_read,
	.write = ucx_write,
};
