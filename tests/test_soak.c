/*
 * Soak: several processes of the device, two threads each, connect RC and
 * UD queue pairs to one another (in one thread, across threads, across
 * processes), post SENDs, WRITEs, WRITEs with immediate, READs and atomics,
 * and tear down at random: the responder destroys its QP while the
 * requester streams, deregisters the memory the requester writes into, or
 * is SIGKILLed with the rest of its process (the parent kills a random child
 * every few seconds and starts another), for SOFTDPU_SOAK_SECONDS (default
 * 20). SOFTDPU_TEST_SEED replays a run's random choices (the schedule of the
 * threads is the machine's).
 *
 * What is checked, from the documented behaviour of the verbs:
 * - no process crashes but the ones killed (exit statuses);
 * - every SUCCESS holds its data: a message carries its connection's tag,
 *   its sequence and its length, and its body is a function of them; a
 *   completed receive holds exactly one message (its byte count, nothing
 *   written past it), RC receives arrive in order with no gap, a slot written
 *   by a WRITE holds exactly its message or nothing, a successful READ
 *   returns it, the n-th successful atomic returns n;
 * - the statuses are the ones the card gives for each situation: a
 *   requester's first error is RETRY_EXC_ERR (responder gone), REM_ACCESS_ERR
 *   (its memory deregistered, only for operations on it) or RNR_RETRY_EXC_ERR,
 *   and everything after it WR_FLUSH_ERR; completions come in posting order;
 *   UD sends always complete SUCCESS;
 * - destroy and deregistration are fences: no byte lands after
 *   ibv_destroy_qp / ibv_dereg_mr returned, and no write-with-immediate
 *   completes SUCCESS after the key was deregistered;
 * - nothing leaks: after all roles are gone, no device-wide number (QPN,
 *   CQN, SRQN, PD, key) is held by a process that ended cleanly, the ones
 *   held by killed processes read as their dead holder's (reclaimable), this
 *   process holds what it held before, and no /dev/shm file of the device
 *   came or went;
 * - the survivor's queues work afterwards: a QP pair created before the
 *   soak, a fresh pair, and a fresh child exchange data, checked byte for byte.
 *
 * Every wait is bounded (a hang guard); nothing measures time.
 * (Linked statically to read the number table: hw_ids.)
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hw_ids.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define SOAK_PROCS 3		/* children alive at a time */
#define SOAK_THREADS 2		/* worker threads per process, the parent's too */
#define OFFERS 64		/* mailbox slots */
#define W 8			/* requests in flight per connection */
#define NSLOT 64		/* WRITE slots of a responder */
#define SLOT 512
#define RBUF 1088		/* a receive buffer: 40 bytes of GRH + 1024 + spare */
#define RQ 32			/* receives posted per responder */
#define MSG_MAX 1024
#define NBIG 2			/* big WRITE slots of a responder: a copy long enough to race a fence */
#define BIG (256u << 10)
#define BIG_SEQ 0xb16u		/* every big WRITE of a connection carries the same message */
#define HDR 24
#define QKEY 0x11111111u
#define MAGIC 0x50414f53u
#define SENTINEL 0xee
#define SEC_NS 1000000000ull

/* ---- time and randomness ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC_NS + (uint64_t)ts.tv_nsec;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return (uint32_t)(mix64(*s) >> 32);
}

static void pause_us(unsigned us)
{
	nanosleep(&(struct timespec){ .tv_nsec = (long)us * 1000 }, NULL);
}

/* ---- the shared mailbox: offers, counters, failures (a memfd every process maps) ---- */

enum { OF_FREE, OF_WRITING, OF_OFFERED, OF_CLAIMING, OF_CLAIMED, OF_READY, OF_ACKED };
enum { CONN_RC, CONN_RC_SRQ, CONN_UD };

struct offer {
	_Atomic uint32_t state;
	uint32_t type;
	int32_t rpid;		/* responder */
	uint32_t rqpn, rkey;
	uint64_t raddr;		/* NSLOT slots, then the atomic word */
	int32_t qpid;		/* requester */
	uint32_t qqpn;
	uint64_t qtag;
	uint64_t gen;
};

enum {
	C_CONN_SAME_THREAD, C_CONN_SAME_PROC, C_CONN_CROSS, C_CONN_UD, C_CONN_SRQ,
	C_OPS_OK, C_RECV_OK, C_READ_OK, C_ATOMIC_OK, C_UD_OK,
	C_TD_QP_FIRST, C_TD_MR_FIRST, C_TD_REQ_ABRUPT, C_CQ_BUSY,
	C_RETRY_EXC, C_REM_ACCESS, C_RNR_EXC, C_FLUSH, C_GIVEUP, C_DEAD_PEER, C_UNCHECKED,
	C_FAIL, C_COUNTERS,
};

static const char *const counter_name[C_COUNTERS] = {
	"conn same-thread", "conn same-process", "conn cross-process", "conn UD", "conn SRQ",
	"requests SUCCESS", "receives SUCCESS", "READs checked", "atomics checked", "UD datagrams checked",
	"teardown QP first", "teardown MR first", "requester destroyed busy", "CQ/SRQ destroy EBUSY",
	"RETRY_EXC_ERR", "REM_ACCESS_ERR", "RNR_RETRY_EXC_ERR", "WR_FLUSH_ERR", "offers given up",
	"posted to a dead process", "slots of killed requesters",
	"FAILURES",
};

#define MAX_KIDS 256

struct mailbox {
	_Atomic int stop;
	_Atomic int serving[MAX_KIDS + 1]; /* per process index: responders with a requester streaming */
	_Atomic long count[C_COUNTERS];
	struct offer of[OFFERS];
};

static struct mailbox *mb;
static uint64_t soak_seed;
static int proc_index; /* 0: the parent */

/* A failure: counted where every process sees it (a killed process's too), said at once, in one line. */
#define SOAK_FAIL(...) soak_fail(__LINE__, __VA_ARGS__)

static void soak_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void soak_fail(int line, const char *fmt, ...)
{
	char msg[512];
	int n;
	va_list ap;

	atomic_fetch_add(&mb->count[C_FAIL], 1);
	n = snprintf(msg, sizeof(msg), "SOAK FAILURE pid %d (test_soak.c:%d): ", (int)getpid(), line);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(msg, "\n");
	fputs(msg, stderr);
}

static void count(int c)
{
	atomic_fetch_add_explicit(&mb->count[c], 1, memory_order_relaxed);
}

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* Dead, reaped or not (a zombie runs nothing, and the device counts it gone). */
static bool pid_gone(pid_t pid)
{
	char path[64], buf[256], *rp;
	FILE *f;
	size_t n;

	if (!pid_alive(pid))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp == NULL || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X';
}

static bool stopping(void)
{
	return atomic_load_explicit(&mb->stop, memory_order_relaxed) != 0;
}

/* ---- messages: a header (tag, sequence, length) and a body that is a function of them ---- */

struct msg_hdr {
	uint32_t magic;
	uint32_t len;
	uint64_t tag;
	uint32_t seq;
	uint32_t kind;
};

static uint8_t body_byte(uint64_t tag, uint32_t seq, uint32_t i)
{
	return (uint8_t)(mix64(tag ^ ((uint64_t)seq << 32) ^ (i / 8)) >> (8 * (i % 8)));
}

static void msg_fill(uint8_t *p, uint64_t tag, uint32_t seq, uint32_t kind, uint32_t len)
{
	struct msg_hdr h = { .magic = MAGIC, .len = len, .tag = tag, .seq = seq, .kind = kind };

	memcpy(p, &h, HDR);
	for (uint32_t i = HDR; i < len; i++)
		p[i] = body_byte(tag, seq, i);
}

/* 0 when p holds exactly that message; else the offset of the first wrong byte + 1. */
static uint32_t msg_diff(const uint8_t *p, uint64_t tag, uint32_t seq, uint32_t kind, uint32_t len)
{
	struct msg_hdr h = { .magic = MAGIC, .len = len, .tag = tag, .seq = seq, .kind = kind };

	for (uint32_t i = 0; i < HDR; i++)
		if (p[i] != ((const uint8_t *)&h)[i])
			return i + 1;
	for (uint32_t i = HDR; i < len; i++)
		if (p[i] != body_byte(tag, seq, i))
			return i + 1;
	return 0;
}

/* The length of the message of a connection's slot: both sides compute it. */
static uint32_t slot_len(uint64_t tag, uint32_t s)
{
	return HDR + (uint32_t)(mix64(tag * 31 + s) % (SLOT - HDR + 1));
}

enum { K_SEND = 1, K_WRITE, K_WRITE_IMM, K_UD };

/* ---- registered memory: pages of its own (the forks of th_proc must not share heap pages with keys) ---- */

static void *pages(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Slots, a page whose first word is the atomic one, the big slots. */
#define RESP_BIG (NSLOT * SLOT + 4096)
#define RESP_DATA (RESP_BIG + NBIG * BIG)
#define RESP_RECV (((RQ * RBUF) + 4095) & ~4095)
#define REQ_BIG (W * MSG_MAX + W * SLOT + 4096) /* the big message's source */
#define REQ_LOCAL (REQ_BIG + BIG)

/* ---- one worker thread ---- */

/*
 * A thread's buffers are mapped once and registered anew for each
 * connection, as a server reuses its buffers: each range another process
 * maps stays mapped there until it exits (fab_mr.c keeps at most 256), so
 * fresh pages per connection would exhaust a long-lived peer's room.
 */
struct worker {
	int id;
	uint64_t rng;
	uint32_t conns;
	struct ibv_context *c;
	struct ibv_pd *pd;
	uint8_t *rdata, *rrecv, *rlocal;
};

static uint64_t new_tag(struct worker *w)
{
	return (uint64_t)getpid() << 32 | (uint64_t)w->id << 24 | (w->conns++ & 0xffffffu);
}

/* ---- the responder side ---- */

struct resp {
	struct offer mine;	/* what was offered, then who claimed it */
	int type;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint8_t *data, *recv;
	struct ibv_mr *mr_data, *mr_recv;
	uint32_t next_rseq;	/* RC: the sequence the next receive must hold */
	int64_t last_ud_seq;
	bool data_gone;		/* mr_data deregistered and its slots zeroed */
};

static int resp_post_recv(struct resp *r, uint32_t i)
{
	uint8_t *b = r->recv + (size_t)i * RBUF;
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = RBUF, .lkey = r->mr_recv->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(b, SENTINEL, RBUF);
	return r->srq != NULL ? ibv_post_srq_recv(r->srq, &wr, &bad) : ibv_post_recv(r->qp, &wr, &bad);
}

static struct ibv_qp *mk_qp(struct ibv_pd *pd, enum ibv_qp_type t, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = t,
		.cap = {.max_send_wr = W * 2, .max_recv_wr = RQ, .max_send_sge = 1, .max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &a);
}

static void resp_free(struct resp *r)
{
	if (r->qp != NULL && ibv_destroy_qp(r->qp) != 0)
		SOAK_FAIL("ibv_destroy_qp failed");
	if (r->srq != NULL && ibv_destroy_srq(r->srq) != 0)
		SOAK_FAIL("ibv_destroy_srq failed");
	if (r->cq != NULL && ibv_destroy_cq(r->cq) != 0)
		SOAK_FAIL("ibv_destroy_cq failed");
	if (r->mr_data != NULL && ibv_dereg_mr(r->mr_data) != 0)
		SOAK_FAIL("ibv_dereg_mr failed");
	if (r->mr_recv != NULL && ibv_dereg_mr(r->mr_recv) != 0)
		SOAK_FAIL("ibv_dereg_mr failed");
}

static int resp_setup(struct worker *w, struct resp *r)
{
	struct ibv_srq_init_attr sa = { .attr = {.max_wr = RQ, .max_sge = 1} };
	bool ud = r->type == CONN_UD;

	r->data = w->rdata;
	r->recv = w->rrecv;
	memset(r->data, 0, RESP_DATA);
	r->cq = ibv_create_cq(w->c, 2 * RQ + 2 * W, NULL, NULL, 0);
	if (r->cq == NULL)
		return -1;
	r->mr_data = ibv_reg_mr(w->pd, r->data, RESP_DATA, VQ_ACCESS_ALL);
	r->mr_recv = ibv_reg_mr(w->pd, r->recv, RESP_RECV, IBV_ACCESS_LOCAL_WRITE);
	if (r->mr_data == NULL || r->mr_recv == NULL)
		return -1;
	if (r->type == CONN_RC_SRQ && (r->srq = ibv_create_srq(w->pd, &sa)) == NULL)
		return -1;
	r->qp = mk_qp(w->pd, ud ? IBV_QPT_UD : IBV_QPT_RC, r->cq, r->srq);
	if (r->qp == NULL || (ud && vq_up(r->qp, 0, 0, 0) != 0) || (!ud && vq_to_init(r->qp) != 0))
		return -1;
	for (uint32_t i = 0; i < RQ; i++)
		if (resp_post_recv(r, i) != 0)
			return -1;
	r->last_ud_seq = -1;
	return 0;
}

/*
 * Each slot holds exactly its message or nothing; 0, or the number of wrong
 * slots. Not when the requester's process was killed: a WRITE cut short by
 * its requester's death may leave part of its bytes, as on a card.
 */
static int resp_check_slots(struct resp *r)
{
	int bad = 0;

	if (r->mine.qpid != getpid() && pid_gone(r->mine.qpid)) {
		count(C_UNCHECKED);
		return 0;
	}

	for (uint32_t s = 0; s < NSLOT; s++) {
		const uint8_t *p = r->data + (size_t)s * SLOT;
		uint32_t len = slot_len(r->mine.qtag, s), nz = 0, d, kind;

		for (uint32_t i = 0; i < SLOT; i++)
			nz += p[i] != 0;
		if (nz == 0)
			continue;
		memcpy(&kind, p + offsetof(struct msg_hdr, kind), sizeof(kind));
		d = kind == K_WRITE || kind == K_WRITE_IMM ? msg_diff(p, r->mine.qtag, s, kind, len) : 1;
		for (uint32_t i = len; d == 0 && i < SLOT; i++)
			if (p[i] != 0)
				d = i + 1;
		if (d != 0) {
			SOAK_FAIL("slot %u of tag %" PRIx64 ": byte %u wrong (message of %u bytes)", s, r->mine.qtag,
				  d - 1, len);
			bad++;
		}
	}
	for (uint32_t b = 0; b < NBIG; b++) {
		const uint8_t *p = r->data + RESP_BIG + (size_t)b * BIG;
		uint32_t nz = 0;

		for (uint32_t i = 0; i < BIG && nz == 0; i++)
			nz += p[i] != 0;
		if (nz != 0 && msg_diff(p, r->mine.qtag, BIG_SEQ, K_WRITE, BIG) != 0) {
			SOAK_FAIL("big slot %u of tag %" PRIx64 ": not its message", b, r->mine.qtag);
			bad++;
		}
	}
	return bad;
}

static void resp_check_recv(struct resp *r, const struct ibv_wc *wc)
{
	const uint8_t *b = r->recv + (size_t)wc->wr_id * RBUF;
	uint32_t d;

	if (r->type == CONN_UD) {
		const struct msg_hdr *h = (const void *)(b + 40);

		if (wc->byte_len < 40 + HDR || h->len != wc->byte_len - 40 || h->tag != r->mine.qtag ||
		    wc->src_qp != r->mine.qqpn || (int64_t)h->seq <= r->last_ud_seq ||
		    (d = msg_diff(b + 40, h->tag, h->seq, K_UD, h->len)) != 0 || b[wc->byte_len] != SENTINEL) {
			SOAK_FAIL("UD receive of %u bytes from QPN %u: not the datagram of tag %" PRIx64
				  " after seq %" PRId64 " (header len %u tag %" PRIx64 " seq %u)",
				  wc->byte_len, wc->src_qp, r->mine.qtag, r->last_ud_seq, h->len, h->tag, h->seq);
			return;
		}
		r->last_ud_seq = h->seq;
		count(C_UD_OK);
		return;
	}
	if (wc->opcode == IBV_WC_RECV) {
		const struct msg_hdr *h = (const void *)b;

		if (wc->byte_len < HDR || wc->byte_len > MSG_MAX || h->len != wc->byte_len ||
		    (d = msg_diff(b, r->mine.qtag, r->next_rseq, K_SEND, wc->byte_len)) != 0 ||
		    (wc->byte_len < RBUF && b[wc->byte_len] != SENTINEL) || (wc->wc_flags & IBV_WC_WITH_IMM)) {
			SOAK_FAIL("RC receive of %u bytes: not SEND %u of tag %" PRIx64
				  " (header len %u tag %" PRIx64 " seq %u)", wc->byte_len, r->next_rseq,
				  r->mine.qtag, h->len, h->tag, h->seq);
			return;
		}
	} else if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		uint32_t imm = be32toh(wc->imm_data), s = imm >> 16;

		if (!(wc->wc_flags & IBV_WC_WITH_IMM) || (imm & 0xffff) != (r->next_rseq & 0xffff) || s >= NSLOT ||
		    wc->byte_len != slot_len(r->mine.qtag, s) || r->data_gone ||
		    msg_diff(r->data + (size_t)s * SLOT, r->mine.qtag, s, K_WRITE_IMM, wc->byte_len) != 0) {
			SOAK_FAIL("write with immediate 0x%x (%u bytes, expected receive %u, key %s): its slot does "
				  "not hold its message", imm, wc->byte_len, r->next_rseq,
				  r->data_gone ? "deregistered before" : "registered");
			return;
		}
	} else {
		SOAK_FAIL("receive completion with opcode %d", wc->opcode);
		return;
	}
	r->next_rseq++;
	count(C_RECV_OK);
}

/* Polls what the CQ holds, checks it and (repost) gives the buffers back. */
static void resp_poll(struct resp *r, bool repost)
{
	struct ibv_wc wc[8];
	int n;

	while ((n = ibv_poll_cq(r->cq, 8, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				resp_check_recv(r, &wc[i]);
			else if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				SOAK_FAIL("receive completed with status %d (%s)", wc[i].status,
					  ibv_wc_status_str(wc[i].status));
			if (repost && wc[i].status == IBV_WC_SUCCESS && resp_post_recv(r, (uint32_t)wc[i].wr_id) != 0)
				SOAK_FAIL("ibv_post_recv failed");
		}
	}
	if (n < 0)
		SOAK_FAIL("ibv_poll_cq returned %d", n);
}

/* Nothing may land in memory after the fence: p equals ref now and a little later. */
static void no_late_bytes(const uint8_t *p, const uint8_t *ref, size_t n, const char *after)
{
	for (int round = 0; round < 2; round++) {
		if (memcmp(p, ref, n) != 0) {
			size_t i = 0;

			while (p[i] == ref[i])
				i++;
			SOAK_FAIL("byte %zu changed after %s returned", i, after);
			return;
		}
		pause_us(1000);
	}
}

/* Destroying a CQ or an SRQ a QP still uses fails with EBUSY, as the kernel's does, and changes nothing. */
static void try_busy_destroys(struct worker *w, struct resp *r)
{
	int rc;

	if (rnd(&w->rng) % 8 == 0) {
		rc = ibv_destroy_cq(r->cq);
		if (rc != EBUSY)
			SOAK_FAIL("ibv_destroy_cq of a CQ in use returned %d, want EBUSY", rc);
		if (rc == 0)
			r->cq = NULL;
		count(C_CQ_BUSY);
	}
	if (r->srq != NULL && rnd(&w->rng) % 4 == 0) {
		rc = ibv_destroy_srq(r->srq);
		if (rc != EBUSY)
			SOAK_FAIL("ibv_destroy_srq of an SRQ in use returned %d, want EBUSY", rc);
		if (rc == 0)
			r->srq = NULL;
		count(C_CQ_BUSY);
	}
}

/*
 * The responder goes while its requester may still be at work: its memory
 * first or its QP first. Right after the fence returns the memory is copied
 * (a copy still running would tear it) and checked, then watched: no byte
 * may change after.
 */
static void resp_teardown(struct worker *w, struct resp *r)
{
	uint8_t *live = r->data, *snap = malloc(RESP_DATA), *zero = calloc(1, RESP_DATA);
	bool mr_first = r->type != CONN_UD && rnd(&w->rng) % 2 == 0;

	if (snap == NULL || zero == NULL) {
		SOAK_FAIL("no memory");
		goto out;
	}
	try_busy_destroys(w, r);
	if (mr_first) {
		count(C_TD_MR_FIRST);
		if (ibv_dereg_mr(r->mr_data) != 0)
			SOAK_FAIL("ibv_dereg_mr failed");
		r->mr_data = NULL;
		memcpy(snap, live, RESP_DATA);
		memset(live, 0, RESP_DATA);
		r->data = snap; /* what the completions and slots are checked against */
		resp_poll(r, true);
		resp_check_slots(r);
		r->data = live;
		r->data_gone = true;
		no_late_bytes(live, zero, RESP_DATA, "ibv_dereg_mr");
		resp_poll(r, true);
	} else {
		count(C_TD_QP_FIRST);
	}
	if (ibv_destroy_qp(r->qp) != 0)
		SOAK_FAIL("ibv_destroy_qp failed");
	r->qp = NULL;
	if (!r->data_gone) {
		memcpy(snap, live, RESP_DATA);
		r->data = snap;
	}
	resp_poll(r, false);
	if (!r->data_gone) {
		resp_check_slots(r);
		r->data = live;
		no_late_bytes(live, snap, RESP_DATA, "ibv_destroy_qp");
	}
out:
	free(snap);
	free(zero);
	resp_free(r);
}

/* Offers a queue, waits for a requester, serves it for a while, then goes. */
static void run_responder(struct worker *w)
{
	struct resp r = { .type = (int)(rnd(&w->rng) % 4) };
	struct offer *o = NULL;
	uint64_t end;
	uint32_t st;

	if (r.type > CONN_UD)
		r.type = CONN_RC;
	if (resp_setup(w, &r) != 0) {
		SOAK_FAIL("responder setup failed (errno %d)", errno);
		goto out;
	}
	for (int i = 0; i < OFFERS && o == NULL; i++) {
		uint32_t fr = OF_FREE;

		if (atomic_compare_exchange_strong(&mb->of[i].state, &fr, OF_WRITING))
			o = &mb->of[i];
	}
	if (o == NULL)
		goto out;
	o->type = (uint32_t)r.type;
	o->rpid = getpid();
	o->rqpn = r.qp->qp_num;
	o->rkey = r.mr_data->rkey;
	o->raddr = (uintptr_t)r.data;
	o->gen++;
	atomic_store(&o->state, OF_OFFERED);
	end = now_ns() + (20 + rnd(&w->rng) % 80) * 1000000ull;
	for (;;) {
		st = atomic_load(&o->state);
		if (st == OF_CLAIMED)
			break;
		if (st == OF_OFFERED && (now_ns() > end || stopping())) {
			if (atomic_compare_exchange_strong(&o->state, &st, OF_FREE)) {
				resp_free(&r);
				return;
			}
			continue;
		}
		/* A requester that died while claiming leaves the slot to us. */
		if (st == OF_CLAIMING && now_ns() > end + SEC_NS && atomic_compare_exchange_strong(&o->state, &st, OF_FREE)) {
			count(C_GIVEUP);
			resp_free(&r);
			return;
		}
		pause_us(50);
	}
	r.mine = *o;
	if (r.type != CONN_UD && vq_up(r.qp, r.mine.qqpn, 1, 7) != 0)
		SOAK_FAIL("responder QP to RTS failed");
	/* A requester that waited too long has given the slot up: nobody to serve. */
	st = OF_CLAIMED;
	if (!atomic_compare_exchange_strong(&o->state, &st, OF_READY)) {
		count(C_GIVEUP);
		resp_free(&r);
		return;
	}
	/* The requester acknowledges; one that died meanwhile does not. */
	end = now_ns() + 2 * SEC_NS;
	while (atomic_load(&o->state) != OF_ACKED && now_ns() < end && pid_alive(r.mine.qpid))
		pause_us(50);
	atomic_store(&o->state, OF_FREE);
	end = now_ns() + (uint64_t)(uint32_t[]){ 2, 20, 150, 500 }[rnd(&w->rng) % 4] * 1000000ull;
	atomic_fetch_add(&mb->serving[proc_index], 1);
	while (now_ns() < end && !stopping()) {
		resp_poll(&r, true);
		sched_yield();
	}
	atomic_fetch_sub(&mb->serving[proc_index], 1);
	resp_teardown(w, &r);
	return;
out:
	resp_free(&r);
}

/* ---- the requester side ---- */

struct pend {
	int kind;		/* K_* or the READ / atomic codes below */
	uint32_t n;		/* slot, receive sequence or atomic index */
	uint32_t len;
	uint64_t wr_id;
};

enum { K_READ = 10, K_FADD, K_CSWAP, K_BIG };

struct req {
	struct offer peer;
	uint64_t tag;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	uint8_t *local;
	struct ibv_mr *mr;
	struct pend p[W];
	uint64_t posted, done;
	uint32_t rseq, slot, atomics, atomics_ok;
	uint32_t ok_slots[NSLOT], n_ok_slots;
	int first_err;		/* -1: none yet */
	int first_err_kind;
	uint64_t dead_from;	/* requests from this one on were posted when the responder's process was gone */
	bool one_sided;		/* no SENDs: nothing waits for the responder's receives */
	int dead_said;
	bool stream;		/* until the first error, never abrupt */
};

static uint8_t *req_src(struct req *q, uint64_t i)
{
	return q->local + (i % W) * MSG_MAX;
}

static uint8_t *req_dst(struct req *q, uint64_t i)
{
	return q->local + W * MSG_MAX + (i % W) * SLOT;
}

static int req_post(struct worker *w, struct req *q)
{
	struct pend *p = &q->p[q->posted % W];
	uint8_t *src = req_src(q, q->posted), *dst = req_dst(q, q->posted);
	struct ibv_sge sge = { .addr = (uintptr_t)src, .lkey = q->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = q->posted, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint32_t pick = rnd(&w->rng) % 7;

	*p = (struct pend){ .wr_id = q->posted };
	if (q->ah != NULL) {
		p->kind = K_UD;
		p->n = (uint32_t)q->posted;
		p->len = HDR + rnd(&w->rng) % (MSG_MAX - HDR + 1);
		msg_fill(src, q->tag, p->n, K_UD, p->len);
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = q->ah;
		wr.wr.ud.remote_qpn = q->peer.rqpn;
		wr.wr.ud.remote_qkey = QKEY;
		sge.length = p->len;
		return ibv_post_send(q->qp, &wr, &bad);
	}
	if (q->one_sided && (pick == 0 || pick == 2))
		pick = pick == 0 ? 6 : 1;
	if ((pick == 1 || pick == 2) && q->slot >= NSLOT)
		pick = q->one_sided ? 4 : 0;
	if (pick == 3 && q->n_ok_slots == 0)
		pick = q->one_sided ? 5 : 0;
	wr.wr.rdma.rkey = q->peer.rkey;
	switch (pick) {
	case 0: /* SEND */
		p->kind = K_SEND;
		p->n = q->rseq++;
		p->len = HDR + rnd(&w->rng) % (MSG_MAX - HDR + 1);
		msg_fill(src, q->tag, p->n, K_SEND, p->len);
		wr.opcode = IBV_WR_SEND;
		break;
	case 1: /* WRITE */
	case 2: /* WRITE with immediate: the slot and the receive it consumes */
		p->kind = pick == 1 ? K_WRITE : K_WRITE_IMM;
		p->n = q->slot++;
		p->len = slot_len(q->tag, p->n);
		msg_fill(src, q->tag, p->n, (uint32_t)p->kind, p->len);
		wr.opcode = pick == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = q->peer.raddr + (uint64_t)p->n * SLOT;
		if (pick == 2)
			wr.imm_data = htobe32(p->n << 16 | (q->rseq++ & 0xffff));
		break;
	case 6: /* a big WRITE */
		p->kind = K_BIG;
		p->n = rnd(&w->rng) % NBIG;
		p->len = BIG;
		sge.addr = (uintptr_t)q->local + REQ_BIG;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = q->peer.raddr + RESP_BIG + (uint64_t)p->n * BIG;
		break;
	case 3: /* READ of a slot written before */
		p->kind = K_READ;
		p->n = q->ok_slots[rnd(&w->rng) % q->n_ok_slots];
		p->len = slot_len(q->tag, p->n);
		memset(dst, 0, SLOT);
		sge.addr = (uintptr_t)dst;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = q->peer.raddr + (uint64_t)p->n * SLOT;
		break;
	default: /* atomics on the responder's word: the n-th returns n */
		p->kind = pick == 4 ? K_FADD : K_CSWAP;
		p->n = q->atomics++;
		p->len = 8;
		memset(dst, 0xff, 8);
		sge.addr = (uintptr_t)dst;
		wr.opcode = pick == 4 ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = q->peer.raddr + NSLOT * SLOT;
		wr.wr.atomic.rkey = q->peer.rkey;
		wr.wr.atomic.compare_add = pick == 4 ? 1 : p->n;
		wr.wr.atomic.swap = p->n + 1;
		break;
	}
	sge.length = p->len;
	return ibv_post_send(q->qp, &wr, &bad);
}

static bool err_allowed(const struct req *q, int kind, int status)
{
	switch (status) {
	case IBV_WC_RETRY_EXC_ERR: /* the responder's QP destroyed, or its process dead */
		return true;
	case IBV_WC_RNR_RETRY_EXC_ERR: /* it gave no receive in time */
		return kind == K_SEND || kind == K_WRITE_IMM;
	case IBV_WC_REM_ACCESS_ERR: /* its memory deregistered */
		return kind != K_SEND;
	default:
		(void)q;
		return false;
	}
}

static void req_complete(struct req *q, const struct ibv_wc *wc)
{
	struct pend *p = &q->p[q->done % W];
	const uint8_t *dst = req_dst(q, q->done);

	if (wc->wr_id != q->done) {
		SOAK_FAIL("send completion %" PRIu64 " came where %" PRIu64 " was due", (uint64_t)wc->wr_id, q->done);
		q->done = wc->wr_id;
		p = &q->p[q->done % W];
		dst = req_dst(q, q->done);
	}
	q->done++;
	if (q->first_err >= 0) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			SOAK_FAIL("status %d (%s) after the first error %d, want WR_FLUSH_ERR", wc->status,
				  ibv_wc_status_str(wc->status), q->first_err);
		else
			count(C_FLUSH);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		q->first_err = wc->status;
		q->first_err_kind = p->kind;
		if (q->ah != NULL || !err_allowed(q, p->kind, wc->status))
			SOAK_FAIL("request of kind %d (connection to pid %d QPN %u) ended %d (%s)", p->kind,
				  q->peer.rpid, q->peer.rqpn, wc->status, ibv_wc_status_str(wc->status));
		count(wc->status == IBV_WC_RETRY_EXC_ERR ? C_RETRY_EXC :
		      wc->status == IBV_WC_REM_ACCESS_ERR ? C_REM_ACCESS : C_RNR_EXC);
		return;
	}
	if (wc->wr_id >= q->dead_from && q->ah == NULL && !q->dead_said++)
		SOAK_FAIL("request %" PRIu64 " completed SUCCESS although pid %d was gone when it was posted (from %" PRIu64 ")",
			  (uint64_t)wc->wr_id, q->peer.rpid, q->dead_from);
	count(C_OPS_OK);
	switch (p->kind) {
	case K_WRITE:
	case K_WRITE_IMM:
		q->ok_slots[q->n_ok_slots++] = p->n;
		break;
	case K_READ:
		if (msg_diff(dst, q->tag, p->n, K_WRITE, p->len) != 0 && msg_diff(dst, q->tag, p->n, K_WRITE_IMM, p->len) != 0)
			SOAK_FAIL("READ of slot %u (%u bytes) from pid %d returned other bytes", p->n, p->len, q->peer.rpid);
		else
			count(C_READ_OK);
		break;
	case K_FADD:
	case K_CSWAP: {
		uint64_t v;

		memcpy(&v, dst, 8);
		if (v != p->n || q->atomics_ok != p->n)
			SOAK_FAIL("atomic %u (kind %d) returned %" PRIu64 " after %u successful ones", p->n, p->kind, v,
				  q->atomics_ok);
		else
			count(C_ATOMIC_OK);
		q->atomics_ok++;
		break;
	}
	default:
		break;
	}
}

static void req_free(struct req *q)
{
	if (q->qp != NULL && ibv_destroy_qp(q->qp) != 0)
		SOAK_FAIL("ibv_destroy_qp failed");
	if (q->ah != NULL && ibv_destroy_ah(q->ah) != 0)
		SOAK_FAIL("ibv_destroy_ah failed");
	if (q->cq != NULL && ibv_destroy_cq(q->cq) != 0)
		SOAK_FAIL("ibv_destroy_cq failed");
	if (q->mr != NULL && ibv_dereg_mr(q->mr) != 0)
		SOAK_FAIL("ibv_dereg_mr failed");
}

static int req_setup(struct worker *w, struct req *q, bool ud)
{
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };

	q->first_err = -1;
	q->dead_from = UINT64_MAX;
	q->one_sided = rnd(&w->rng) % 3 == 0;
	q->tag = new_tag(w);
	q->local = w->rlocal;
	q->cq = ibv_create_cq(w->c, 4 * W, NULL, NULL, 0);
	if (q->cq == NULL)
		return -1;
	msg_fill(q->local + REQ_BIG, q->tag, BIG_SEQ, K_WRITE, BIG);
	q->mr = ibv_reg_mr(w->pd, q->local, REQ_LOCAL, VQ_ACCESS_ALL);
	q->qp = mk_qp(w->pd, ud ? IBV_QPT_UD : IBV_QPT_RC, q->cq, NULL);
	if (q->mr == NULL || q->qp == NULL)
		return -1;
	if (ud && (vq_grh_self(w->c, &aa) != 0 || (q->ah = ibv_create_ah(w->pd, &aa)) == NULL ||
		   vq_up(q->qp, 0, 0, 0) != 0))
		return -1;
	return ud ? 0 : vq_to_init(q->qp);
}

/* Claims offer o (seen OFFERED at generation gen); true when the responder is ready. */
static bool req_claim(struct worker *w, struct req *q, struct offer *o)
{
	uint32_t st = OF_OFFERED;
	uint64_t end;

	if (!atomic_compare_exchange_strong(&o->state, &st, OF_CLAIMING))
		return false;
	q->peer = *o;
	if (req_setup(w, q, q->peer.type == CONN_UD) != 0) {
		SOAK_FAIL("requester setup failed (errno %d)", errno);
		st = OF_CLAIMING;
		atomic_compare_exchange_strong(&o->state, &st, OF_OFFERED);
		return false;
	}
	o->qpid = getpid();
	o->qqpn = q->qp->qp_num;
	o->qtag = q->tag;
	/* The responder takes the slot back from a claim that lasts too long. */
	st = OF_CLAIMING;
	if (!atomic_compare_exchange_strong(&o->state, &st, OF_CLAIMED)) {
		count(C_GIVEUP);
		return false;
	}
	end = now_ns() + 2 * SEC_NS;
	while ((st = atomic_load(&o->state)) == OF_CLAIMED && now_ns() < end && pid_alive(q->peer.rpid))
		pause_us(50);
	if (st != OF_READY) {
		/* The responder died before it was ready: the slot is nobody's now. */
		if (atomic_compare_exchange_strong(&o->state, &st, OF_FREE))
			count(C_GIVEUP);
		return false;
	}
	if (!atomic_compare_exchange_strong(&o->state, &st, OF_ACKED)) {
		count(C_GIVEUP); /* the responder stopped waiting for us */
		return false;
	}
	if (q->peer.type != CONN_UD && vq_up(q->qp, q->peer.rqpn, 1, (uint8_t)(rnd(&w->rng) % 2 ? 7 : 3)) != 0) {
		SOAK_FAIL("requester QP to RTS failed");
		return false;
	}
	return true;
}

/* Streams requests at the claimed queue until done, the first error, or an abrupt end of our own. */
static void req_run(struct worker *w, struct req *q)
{
	/* RC mostly streams until the responder goes; UD, whose sends never fail, for a while. */
	bool until_err = q->ah == NULL && (q->stream || rnd(&w->rng) % 4 != 0);
	bool abrupt = !q->stream && rnd(&w->rng) % 8 == 0;
	uint64_t budget = until_err ? UINT64_MAX : 10 + rnd(&w->rng) % 400, end = now_ns() + 10 * SEC_NS;

	while (now_ns() < end) {
		struct ibv_wc wc[W];
		int n;

		while (q->first_err < 0 && q->posted < budget && q->posted - q->done < W && !stopping()) {
			/* A responder whose process is gone (reaped) answers nothing. */
			if (q->dead_from == UINT64_MAX && q->peer.rpid != getpid() && !pid_alive(q->peer.rpid)) {
				q->dead_from = q->posted;
				count(C_DEAD_PEER);
			}
			if (req_post(w, q) != 0) {
				SOAK_FAIL("ibv_post_send failed");
				return;
			}
			q->posted++;
		}
		if (abrupt && q->posted > (until_err ? 100 : budget / 2)) {
			count(C_TD_REQ_ABRUPT);
			return; /* the QP goes with requests in flight */
		}
		n = ibv_poll_cq(q->cq, W, wc);
		for (int i = 0; i < n; i++)
			req_complete(q, &wc[i]);
		if (q->done == q->posted && (q->first_err >= 0 || q->posted >= budget || stopping()))
			return;
		if (n == 0)
			sched_yield();
	}
	SOAK_FAIL("%" PRIu64 " requests to pid %d QPN %u (type %u) still not completed after 10 s", q->posted - q->done,
		  q->peer.rpid, q->peer.rqpn, q->peer.type);
}

/* Takes an offer of another thread if there is one; false when there was none. */
static bool try_requester(struct worker *w)
{
	uint32_t from = rnd(&w->rng) % OFFERS;

	for (uint32_t k = 0; k < OFFERS; k++) {
		struct offer *o = &mb->of[(from + k) % OFFERS];
		struct req q = { 0 };
		uint32_t st = atomic_load(&o->state);

		if (st != OF_OFFERED)
			continue;
		if (!pid_alive(o->rpid)) {
			/* Left by a killed process. */
			if (atomic_compare_exchange_strong(&o->state, &st, OF_FREE))
				count(C_GIVEUP);
			continue;
		}
		if (!req_claim(w, &q, o)) {
			req_free(&q);
			continue;
		}
		count(q.peer.rpid != getpid() ? C_CONN_CROSS : C_CONN_SAME_PROC);
		if (q.peer.type != CONN_RC)
			count(q.peer.type == CONN_UD ? C_CONN_UD : C_CONN_SRQ);
		req_run(w, &q);
		req_free(&q);
		return true;
	}
	return false;
}

/* Both ends in this thread: a pair streamed at, then the responder destroyed or deregistered mid-stream. */
static void run_local_pair(struct worker *w)
{
	struct resp r = { .type = rnd(&w->rng) % 2 ? CONN_RC : CONN_RC_SRQ };
	struct req q = { 0 };
	uint64_t end;

	if (resp_setup(w, &r) != 0 || req_setup(w, &q, false) != 0) {
		SOAK_FAIL("local pair setup failed (errno %d)", errno);
		goto out;
	}
	r.mine = (struct offer){ .rpid = getpid(), .rqpn = r.qp->qp_num, .rkey = r.mr_data->rkey,
				 .raddr = (uintptr_t)r.data, .qpid = getpid(), .qqpn = q.qp->qp_num, .qtag = q.tag };
	q.peer = r.mine;
	if (vq_up(r.qp, q.qp->qp_num, 1, 7) != 0 || vq_up(q.qp, r.qp->qp_num, 1, 7) != 0) {
		SOAK_FAIL("local pair to RTS failed");
		goto out;
	}
	count(C_CONN_SAME_THREAD);
	/* Requests and receives interleaved by hand; then the responder goes with requests still posted. */
	end = now_ns() + (1 + rnd(&w->rng) % 10) * 1000000ull;
	while (now_ns() < end && q.first_err < 0) {
		struct ibv_wc wc[W];
		int n;

		while (q.posted - q.done < W && req_post(w, &q) == 0)
			q.posted++;
		resp_poll(&r, true);
		n = ibv_poll_cq(q.cq, W, wc);
		for (int i = 0; i < n; i++)
			req_complete(&q, &wc[i]);
	}
	resp_teardown(w, &r);
	r = (struct resp){ 0 };
	/* What was posted when the responder went ends now: retries exceeded, then flushes. */
	for (uint64_t spins = 0; q.done < q.posted && spins < 50000000; spins++) {
		struct ibv_wc wc[W];
		int n = ibv_poll_cq(q.cq, W, wc);

		for (int i = 0; i < n; i++)
			req_complete(&q, &wc[i]);
	}
	if (q.done < q.posted)
		SOAK_FAIL("%" PRIu64 " requests of a local pair not completed after its responder went", q.posted - q.done);
out:
	req_free(&q);
	resp_free(&r);
}

/* A requester thread of a pair, with its own random stream. */
struct helper {
	struct worker w;
	struct req q;
};

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	req_run(&h->w, &h->q);
	return NULL;
}

/*
 * Both ends in this process, the requester on a thread of its own streaming
 * while this thread's responder goes after 0-5 ms: the fence's race, often.
 */
static void run_thread_pair(struct worker *w)
{
	struct resp r = { .type = rnd(&w->rng) % 2 ? CONN_RC : CONN_RC_SRQ };
	struct helper *h = calloc(1, sizeof(*h));
	uint64_t end;
	pthread_t t;

	if (h == NULL)
		return;
	h->w = *w;
	h->w.id = w->id | 0x80; /* its tags are its own */
	h->w.rng = mix64(w->rng ^ 0x5a5a);
	h->q.stream = true;
	if (resp_setup(w, &r) != 0 || req_setup(&h->w, &h->q, false) != 0) {
		SOAK_FAIL("thread pair setup failed (errno %d)", errno);
		goto out;
	}
	r.mine = (struct offer){ .rpid = getpid(), .rqpn = r.qp->qp_num, .rkey = r.mr_data->rkey,
				 .raddr = (uintptr_t)r.data, .qpid = getpid(), .qqpn = h->q.qp->qp_num,
				 .qtag = h->q.tag };
	h->q.peer = r.mine;
	if (vq_up(r.qp, h->q.qp->qp_num, 1, 7) != 0 || vq_up(h->q.qp, r.qp->qp_num, 1, 7) != 0) {
		SOAK_FAIL("thread pair to RTS failed");
		goto out;
	}
	if (pthread_create(&t, NULL, helper_main, h) != 0)
		goto out;
	count(C_CONN_SAME_PROC);
	end = now_ns() + rnd(&w->rng) % 5000000;
	while (now_ns() < end)
		resp_poll(&r, true);
	resp_teardown(w, &r);
	r = (struct resp){ 0 };
	pthread_join(t, NULL);
	w->conns = h->w.conns;
out:
	req_free(&h->q);
	resp_free(&r);
	free(h);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!stopping()) {
		uint32_t pick = rnd(&w->rng) % 10;

		/* An offer waiting is taken first, so that most time is spent streaming, not waiting. */
		if (pick == 0)
			run_local_pair(w);
		else if (pick <= 2)
			run_thread_pair(w);
		else if (!try_requester(w))
			run_responder(w);
	}
	return NULL;
}

/* Runs SOAK_THREADS workers on one device context until the mailbox says stop. */
static int run_workers(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct worker w[SOAK_THREADS];
	pthread_t t[SOAK_THREADS];
	int started = 0, rc = 0;

	if (pd == NULL) {
		SOAK_FAIL("no device, context or PD");
		rc = 1;
		goto out;
	}
	for (int i = 0; i < SOAK_THREADS; i++) {
		w[i] = (struct worker){ .id = proc_index * SOAK_THREADS + i, .c = c, .pd = pd,
				       .rng = soak_seed ^ mix64((uint64_t)(proc_index * 16 + i + 1)),
				       .rdata = pages(RESP_DATA), .rrecv = pages(RESP_RECV), .rlocal = pages(REQ_LOCAL) };
		if (w[i].rdata == NULL || w[i].rrecv == NULL || w[i].rlocal == NULL ||
		    pthread_create(&t[i], NULL, worker_main, &w[i]) != 0) {
			SOAK_FAIL("pthread_create failed");
			rc = 1;
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < started; i++) {
		munmap(w[i].rdata, RESP_DATA);
		munmap(w[i].rrecv, RESP_RECV);
		munmap(w[i].rlocal, REQ_LOCAL);
	}
out:
	if (pd != NULL && ibv_dealloc_pd(pd) != 0) {
		SOAK_FAIL("ibv_dealloc_pd failed: something of the soak is still allocated");
		rc = 1;
	}
	if (c != NULL)
		ibv_close_device(c);
	if (l != NULL)
		ibv_free_device_list(l);
	return rc;
}

/* ---- the child roles ---- */

static void *watch_stdin(void *arg)
{
	char line[64];

	(void)arg;
	while (fgets(line, sizeof(line), stdin) != NULL)
		;
	atomic_store(&mb->stop, 1);
	return NULL;
}

static int map_mailbox(int fd)
{
	void *p = mmap(NULL, sizeof(struct mailbox), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -1;
	mb = p;
	return 0;
}

/* soak <mailbox fd> <index> <seed>: works until its stdin ends (or the mailbox says stop). */
static int soak_role(char **argv)
{
	pthread_t t;
	int rc;

	if (map_mailbox(atoi(argv[2])) != 0)
		return 2;
	proc_index = atoi(argv[3]);
	soak_seed = strtoull(argv[4], NULL, 0);
	/* The parent's stop reaches us through the mailbox; stdin closing is the other way. */
	if (pthread_create(&t, NULL, watch_stdin, NULL) != 0)
		return 3;
	pthread_detach(t);
	rc = run_workers();
	printf("DONE %d\n", rc);
	fflush(stdout);
	return rc;
}

/* pong: an echo responder of a fresh process; says where its QP and memory are, echoes what it receives. */
static int pong_role(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq != NULL ? mk_qp(pd, IBV_QPT_RC, cq, NULL) : NULL;
	uint8_t *buf = pages(8192);
	struct ibv_mr *mr = buf != NULL && pd != NULL ? ibv_reg_mr(pd, buf, 8192, VQ_ACCESS_ALL) : NULL;
	char line[64];
	unsigned peer;
	int rc = 1;

	if (qp == NULL || mr == NULL)
		goto out;
	printf("QPN %u %llx %x\n", qp->qp_num, (unsigned long long)(uintptr_t)buf, mr->rkey);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "CONNECT %u", &peer) != 1 ||
	    vq_up(qp, peer, 1, 7) != 0)
		goto out;
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = MSG_MAX, .lkey = mr->lkey };
		struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *sbad;
		struct ibv_wc wc;

		if (ibv_post_recv(qp, &rw, &rbad) != 0)
			goto out;
		printf("UP\n");
		fflush(stdout);
		if (vq_poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			goto out;
		sge.length = wc.byte_len;
		if (ibv_post_send(qp, &sw, &sbad) != 0 || vq_poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			goto out;
		printf("ECHOED\n");
		fflush(stdout);
	}
	while (fgets(line, sizeof(line), stdin) != NULL)
		;
	rc = 0;
out:
	if (qp != NULL)
		ibv_destroy_qp(qp);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	if (c != NULL)
		ibv_close_device(c);
	if (l != NULL)
		ibv_free_device_list(l);
	if (buf != NULL)
		munmap(buf, 8192);
	return rc;
}

/* ---- the parent ---- */

struct census {
	long mine;			/* numbers this process holds */
	long of_clean, of_killed;	/* held by children that ended cleanly / were killed */
	long killed_reclaimable;	/* of the latter, reported as a dead holder's */
};

struct kids {
	struct th_proc *p[MAX_KIDS];
	bool killed[MAX_KIDS];
	int idx[MAX_KIDS]; /* its process index */
	int n;
};

static int kid_of(const struct kids *k, pid_t pid)
{
	for (int i = 0; i < k->n; i++)
		if (k->p[i]->pid == pid)
			return i;
	return -1;
}

/* Who holds the device's numbers: this process, and the children of the soak. */
/*
 * Pids wrap: a slot held before the soak by a dead process of another run
 * whose pid a child of the soak got again is not the child's. So the census
 * before the soak notes each slot's holder (held[]), and the one after skips
 * slots held by the same pid before.
 */
static void take_census(const struct kids *k, struct census *c, pid_t *held)
{
	*c = (struct census){ 0 };
	for (int kind = 0; kind < HW_ID_KINDS; kind++) {
		uint32_t base = hw_id_base((enum hw_id_kind)kind);

		for (uint32_t i = 0; i < HW_IDS_DEFAULT_SLOTS; i++) {
			pid_t pid = 0;
			enum hw_status st = hw_id_owner((enum hw_id_kind)kind, base + i, &pid);
			int kid;

			if (st == HW_ERR_KEY)
				continue;
			if (k == NULL)
				held[(size_t)kind * HW_IDS_DEFAULT_SLOTS + i] = pid;
			if (pid == getpid()) {
				c->mine++;
				continue;
			}
			kid = k != NULL ? kid_of(k, pid) : -1;
			if (kid < 0 || held[(size_t)kind * HW_IDS_DEFAULT_SLOTS + i] == pid)
				continue;
			if (!k->killed[kid]) {
				c->of_clean++;
				fprintf(stderr, "number %u of kind %d still held by pid %d, which ended cleanly\n",
					base + i, kind, (int)pid);
				continue;
			}
			c->of_killed++;
			c->killed_reclaimable += st == HW_ERR_PEER_GONE;
		}
	}
}

/* The names of the device's files in /dev/shm (this user's, of the default machine), sorted, joined. */
static void shm_names(char *out, size_t cap)
{
	char prefix[64], *names[64];
	int n = 0;
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	size_t used = 0;

	out[0] = '\0';
	snprintf(prefix, sizeof(prefix), "softdpu-%u-", (unsigned)getuid());
	while (d != NULL && (e = readdir(d)) != NULL && n < 64) {
		const char *rest = e->d_name + strlen(prefix);

		/* Machine-tagged tables are other tests' machines. */
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || (rest[0] == 'm' && rest[1] >= '0' && rest[1] <= '9'))
			continue;
		names[n++] = strdup(e->d_name);
	}
	if (d != NULL)
		closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (names[i] != NULL && names[j] != NULL && strcmp(names[i], names[j]) > 0) {
				char *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	for (int i = 0; i < n; i++) {
		if (names[i] != NULL)
			used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s ", names[i]);
		free(names[i]);
	}
}

/* Two connected RC QPs of this process, with their memory. */
struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	uint8_t *buf[2];
	struct ibv_mr *mr[2];
};

static void pair_free(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->qp[i] != NULL)
			ibv_destroy_qp(p->qp[i]);
		if (p->cq[i] != NULL)
			ibv_destroy_cq(p->cq[i]);
		if (p->mr[i] != NULL)
			ibv_dereg_mr(p->mr[i]);
		if (p->buf[i] != NULL)
			munmap(p->buf[i], 8192);
	}
	free(p);
}

static void pair_free_cb(void *arg)
{
	pair_free(arg);
}

static struct pair *pair_new(struct ibv_context *c, struct ibv_pd *pd)
{
	struct pair *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	th_defer(pair_free_cb, p);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(c, 16, NULL, NULL, 0);
		p->buf[i] = pages(8192);
		p->qp[i] = p->cq[i] != NULL ? mk_qp(pd, IBV_QPT_RC, p->cq[i], NULL) : NULL;
		p->mr[i] = p->buf[i] != NULL ? ibv_reg_mr(pd, p->buf[i], 8192, VQ_ACCESS_ALL) : NULL;
		if (p->qp[i] == NULL || p->mr[i] == NULL)
			return NULL;
	}
	if (vq_up(p->qp[0], p->qp[1]->qp_num, 1, 7) != 0 || vq_up(p->qp[1], p->qp[0]->qp_num, 1, 7) != 0)
		return NULL;
	return p;
}

static int post1(struct ibv_qp *qp, enum ibv_wr_opcode op, void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv1(struct ibv_qp *qp, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static bool ok1(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return vq_poll1(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS;
}

/* A SEND, a WRITE and a READ back between the two QPs of a pair, bytes compared. */
static void pair_pingpong(struct pair *p, uint64_t tag)
{
	uint8_t *a = p->buf[0], *b = p->buf[1];

	memset(b, 0, 8192);
	msg_fill(a, tag, 1, K_SEND, 700);
	CHECK(post_recv1(p->qp[1], b, MSG_MAX, p->mr[1]->lkey) == 0);
	CHECK(post1(p->qp[0], IBV_WR_SEND, a, 700, p->mr[0]->lkey, 0, 0) == 0);
	CHECK(ok1(p->cq[0]) && ok1(p->cq[1]));
	CHECK(msg_diff(b, tag, 1, K_SEND, 700) == 0 && b[700] == 0);
	msg_fill(a + 4096, tag, 2, K_WRITE, 300);
	CHECK(post1(p->qp[0], IBV_WR_RDMA_WRITE, a + 4096, 300, p->mr[0]->lkey, (uintptr_t)b + 4096, p->mr[1]->rkey) == 0);
	CHECK(ok1(p->cq[0]));
	CHECK(msg_diff(b + 4096, tag, 2, K_WRITE, 300) == 0);
	memset(a + 2048, 0, 300);
	CHECK(post1(p->qp[0], IBV_WR_RDMA_READ, a + 2048, 300, p->mr[0]->lkey, (uintptr_t)b + 4096, p->mr[1]->rkey) == 0);
	CHECK(ok1(p->cq[0]));
	CHECK(msg_diff(a + 2048, tag, 2, K_WRITE, 300) == 0);
}

/* A fresh child: a SEND it echoes back, and a WRITE into its memory READ back. */
static void pingpong_child(struct ibv_context *c, struct ibv_pd *pd)
{
	struct th_proc *k = th_proc_start(NULL, "pong", NULL);
	struct pair *p = pair_new(c, pd); /* its first QP talks to the child, the second stays idle */
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	unsigned long long raddr = 0;
	unsigned qpn = 0, rkey = 0;
	uint8_t *a;
	const char *l;

	CHECK(k != NULL && p != NULL);
	a = p->buf[0];
	l = th_proc_line(k);
	CHECK(l != NULL && sscanf(l, "QPN %u %llx %x", &qpn, &raddr, &rkey) == 3);
	CHECK(ibv_modify_qp(p->qp[0], &reset, IBV_QP_STATE) == 0 && vq_up(p->qp[0], qpn, 1, 7) == 0);
	CHECK(th_proc_send(k, "CONNECT %u", p->qp[0]->qp_num) == 0);
	l = th_proc_line(k);
	CHECK(l != NULL && strcmp(l, "UP") == 0);
	memset(a + 4096, 0, 1024);
	CHECK(post_recv1(p->qp[0], a + 4096, MSG_MAX, p->mr[0]->lkey) == 0);
	msg_fill(a, 77, 3, K_SEND, 900);
	CHECK(post1(p->qp[0], IBV_WR_SEND, a, 900, p->mr[0]->lkey, 0, 0) == 0);
	CHECK(ok1(p->cq[0]));
	CHECK(ok1(p->cq[0])); /* the echo */
	CHECK(msg_diff(a + 4096, 77, 3, K_SEND, 900) == 0);
	l = th_proc_line(k);
	CHECK(l != NULL && strcmp(l, "ECHOED") == 0);
	msg_fill(a, 77, 4, K_WRITE, 500);
	CHECK(post1(p->qp[0], IBV_WR_RDMA_WRITE, a, 500, p->mr[0]->lkey, raddr + 4096, rkey) == 0);
	CHECK(ok1(p->cq[0]));
	memset(a + 2048, 0, 500);
	CHECK(post1(p->qp[0], IBV_WR_RDMA_READ, a + 2048, 500, p->mr[0]->lkey, raddr + 4096, rkey) == 0);
	CHECK(ok1(p->cq[0]));
	CHECK(msg_diff(a + 2048, 77, 4, K_WRITE, 500) == 0);
	CHECK(th_proc_wait(k) == 0);
}

static void *parent_workers(void *arg)
{
	(void)arg;
	run_workers();
	return NULL;
}

static void close_cb(void *arg)
{
	close((int)(intptr_t)arg);
}

static void mailbox_unmap_cb(void *arg)
{
	munmap(arg, sizeof(struct mailbox));
}

static struct th_proc *start_kid(int fd, int idx)
{
	char sfd[16], sidx[16], sseed[32];

	snprintf(sfd, sizeof(sfd), "%d", fd);
	snprintf(sidx, sizeof(sidx), "%d", idx);
	snprintf(sseed, sizeof(sseed), "%" PRIu64, soak_seed);
	return th_proc_start(NULL, "soak", sfd, sidx, sseed, NULL);
}

static void report(void)
{
	for (int i = 0; i < C_COUNTERS; i++)
		printf("  %-28s %ld\n", counter_name[i], atomic_load(&mb->count[i]));
}

/* A child serving a requester when there is one (so that a requester sees its responder die), else any. */
static int pick_victim(struct kids *k, const int *live, uint64_t *rng)
{
	uint64_t end = now_ns() + SEC_NS;
	int from = (int)(rnd(rng) % SOAK_PROCS);

	while (now_ns() < end) {
		for (int i = 0; i < SOAK_PROCS; i++) {
			int v = (from + i) % SOAK_PROCS;

			if (atomic_load(&mb->serving[k->idx[live[v]]]) > 0)
				return v;
		}
		pause_us(1000);
	}
	return from;
}

/* Kills a child every few seconds and starts another; false when one ended on its own. */
static bool soak_loop(struct kids *k, int fd, int *live, uint64_t end, uint64_t *rng)
{
	int next_idx = SOAK_PROCS + 1, kills = 0;

	while (now_ns() < end) {
		uint64_t until = now_ns() + (1500 + rnd(rng) % 2000) * 1000000ull;
		int v, st;

		while (now_ns() < until && now_ns() < end) {
			for (int i = 0; i < SOAK_PROCS; i++)
				if (!th_proc_alive(k->p[live[i]])) {
					fprintf(stderr, "child %d ended on its own with status %d\n",
						(int)k->p[live[i]]->pid, k->p[live[i]]->status);
					return false;
				}
			pause_us(20000);
		}
		if (now_ns() >= end)
			break;
		if (k->n == MAX_KIDS || next_idx > MAX_KIDS)
			continue; /* no more killing in a very long soak */
		v = pick_victim(k, live, rng);
		th_proc_kill(k->p[live[v]]);
		k->killed[live[v]] = true;
		st = th_proc_wait(k->p[live[v]]);
		if (st != 128 + SIGKILL) {
			fprintf(stderr, "child %d ended with status %d when killed\n", (int)k->p[live[v]]->pid, st);
			return false;
		}
		kills++;
		k->idx[k->n] = next_idx;
		k->p[k->n] = start_kid(fd, next_idx++);
		if (k->p[k->n] == NULL)
			return false;
		live[v] = k->n++;
	}
	printf("  %-28s %d\n", "children killed", kills);
	return true;
}

static void test_soak(void)
{
	const char *secs_env = getenv("SOFTDPU_SOAK_SECONDS");
	unsigned secs = secs_env != NULL ? (unsigned)strtoul(secs_env, NULL, 0) : 20;
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct kids *k = calloc(1, sizeof(*k));
	pid_t *held = calloc((size_t)HW_ID_KINDS * HW_IDS_DEFAULT_SLOTS, sizeof(*held));
	struct pair *old;
	struct census before, after;
	char shm_before[2048], shm_after[2048];
	int fd = memfd_create("soak-mailbox", 0), live[SOAK_PROCS];
	uint64_t rng = soak_seed;
	pthread_t pw;
	bool clean;

	CHECK(fd >= 0);
	th_defer(close_cb, (void *)(intptr_t)fd);
	CHECK(pd != NULL && k != NULL && held != NULL);
	th_defer(free, k);
	th_defer(free, held);
	CHECK(ftruncate(fd, sizeof(struct mailbox)) == 0 && map_mailbox(fd) == 0);
	th_defer(mailbox_unmap_cb, mb);
	/* Queues of this process made before the soak must work after it. */
	old = pair_new(c, pd);
	CHECK(old != NULL);
	pair_pingpong(old, 1);
	shm_names(shm_before, sizeof(shm_before));
	take_census(NULL, &before, held);
	for (int i = 0; i < SOAK_PROCS; i++) {
		k->idx[k->n] = i + 1;
		k->p[k->n] = start_kid(fd, i + 1);
		CHECK(k->p[k->n] != NULL);
		live[i] = k->n++;
	}
	CHECK(pthread_create(&pw, NULL, parent_workers, NULL) == 0);
	printf("  soak of %u s: %d children of %d threads (one killed every few seconds), this process's %d\n",
	       secs, SOAK_PROCS, SOAK_THREADS, SOAK_THREADS);
	clean = soak_loop(k, fd, live, now_ns() + (uint64_t)secs * SEC_NS, &rng);
	atomic_store(&mb->stop, 1);
	pthread_join(pw, NULL);
	for (int i = 0; i < SOAK_PROCS; i++) {
		struct th_proc *p = k->p[live[i]];
		const char *l = th_proc_line(p);

		if (l == NULL || strcmp(l, "DONE 0") != 0)
			TH_FAIL("child %d said \"%s\"", (int)p->pid, l != NULL ? l : "(nothing)");
		if (th_proc_wait(p) != 0) {
			TH_FAIL("child %d ended with status %d", (int)p->pid, p->status);
			clean = false;
		}
	}
	report();
	CHECK(clean);
	CHECK(atomic_load(&mb->count[C_FAIL]) == 0);
	/* Everything that connected across processes, in one and in one thread, happened. */
	CHECK(atomic_load(&mb->count[C_CONN_CROSS]) > 0 && atomic_load(&mb->count[C_RECV_OK]) > 0);
	/* Leaks: numbers, files. */
	take_census(k, &after, held);
	printf("  numbers held: by this process %ld (before %ld), by clean children %ld, by killed ones %ld "
	       "(%ld of them reclaimable)\n", after.mine, before.mine, after.of_clean, after.of_killed,
	       after.killed_reclaimable);
	CHECK(after.mine == before.mine);
	CHECK(after.of_clean == 0);
	CHECK(after.killed_reclaimable == after.of_killed);
	shm_names(shm_after, sizeof(shm_after));
	if (strcmp(shm_before, shm_after) != 0)
		TH_FAIL("/dev/shm before: %s; after: %s", shm_before, shm_after);
	CHECK(strcmp(shm_before, shm_after) == 0);
	/* The survivor's queues: the old pair, a new pair, a new child. */
	pair_pingpong(old, 2);
	{
		struct pair *p = pair_new(c, pd);

		CHECK(p != NULL);
		pair_pingpong(p, 3);
	}
	pingpong_child(c, pd);
}

int main(int argc, char **argv)
{
	if (argc > 4 && strcmp(argv[1], "soak") == 0)
		return soak_role(argv);
	if (argc > 1 && strcmp(argv[1], "pong") == 0)
		return pong_role();
	soak_seed = th_seed(); /* the children get it from their arguments */
	RUN(test_soak);
	return th_summary("test_soak");
}
