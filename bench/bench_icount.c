/*
 * bench_icount — the small-message hot paths as loops of a fixed number of
 * operations, for counting their instructions under callgrind
 * (bench/icount.sh). Nothing here is timed: the counted region is the call
 * of icount_region(), which icount.sh names to --toggle-collect, so setup,
 * warm-up and teardown stay out of the count.
 *
 * Paths:
 *   dma_64_d32      DOCA DMA memcpy jobs of 64 B, 32 in flight, as bench_dma
 *                   drives them: doca_workq_submit + doca_workq_progress_retrieve
 *                   + doca_buf_reset_data_len per job
 *   write_post_send 64 B RDMA WRITE, RC, one ibv_post_send per WR, as perftest's
 *                   ib_write_bw: WINDOW outstanding, every SIGNAL_EVERY-th WR
 *                   signalled, ibv_poll_cq to reap
 *   write_wr        the same through ibv_wr_start / ibv_wr_rdma_write /
 *                   ibv_wr_set_sge / ibv_wr_complete, one WR each
 *   write_list32    the same with lists of LIST WRs per ibv_post_send, only the
 *                   last signalled
 *   write_lat       one signalled 64 B WRITE, then ibv_poll_cq until its
 *                   completion, repeated (an operation is the round of both)
 *   write_lat_inl   the same as perftest's ib_write_lat posts it: ibv_wr_*
 *                   with the 64 B as inline data (ibv_wr_set_inline_data)
 *   send_recv       the receiver of 64 B SENDs, as perftest's ib_send_bw
 *                   server: one ibv_post_recv per receive, ibv_poll_cq to
 *                   reap them. Here the child sends: this process posts
 *                   RECV_BATCH receives, lets the child send as many (the
 *                   engine runs in the child's process), waits for its word
 *                   and polls them all; no poll finds the CQ empty, so the
 *                   count does not depend on the two processes' timing.
 * For the verbs paths the responder's QP and MR live in another process, a
 * child forked before this process opens the device; the two exchange QP
 * numbers, LIDs, rkey and address through pipes (and, on send_recv, a byte
 * per batch of SENDs).
 *
 * Usage: bench_icount <path> [--ops N] [--warmup N] [--seconds S]
 * Prints "bench_icount: <path> ops <N> pid <pid>" when the region ran and
 * every operation completed successfully; exit status 0 then, else 1.
 * With --seconds the same loops are timed instead (bench/verbs-put.sh): the
 * path runs in rounds of --ops operations for at least S seconds and prints
 * "bench_icount: <path> rate <operations per second>".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>

#include <infiniband/verbs.h>

#define MSG 64
#define DMA_DEPTH 32u
#define DMA_WQ_DEPTH 256u /* bench_dma's work queue */
#define DMA_REGION (64u * 1024)
#define WINDOW 128u	  /* WRs outstanding (perftest's tx depth) */
#define SIGNAL_EVERY 100u /* perftest's cq_mod */
#define LIST 32u	  /* WRs per ibv_post_send on write_list32 */
#define POLL_BATCH 16	  /* perftest's CTX_POLL_BATCH */
#define RSLOTS 64u	  /* 64 B slots of the responder's page the writes rotate over */
#define PAGE 4096u
#define SPIN_GUARD 100000000ull /* polls without a completion before giving up */
#define RECV_BATCH 100u /* receives posted, then SENT by the child, per round of send_recv */
#define OPS_UNIT 800u /* --ops and --warmup: whole signalling periods (100), lists (32), receive batches (100) */

struct run;
typedef int (*loop_fn)(struct run *r, uint32_t ops);

struct dma_side {
	struct doca_dev *dev;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
	uint8_t *src, *dst;
	struct doca_dma_job_memcpy job[DMA_DEPTH];
	struct doca_buf *sbuf[DMA_DEPTH], *dbuf[DMA_DEPTH];
};

/* What one side of the connection tells the other. */
struct peer_info {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	uint16_t lid;
};

struct verbs_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qx;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct peer_info remote;
	struct ibv_sge sge[LIST];
	struct ibv_send_wr wr[LIST];
	pid_t child;
	int to_child, from_child; /* pipe ends; closing to_child lets the responder go */
};

struct run {
	const char *name;
	loop_fn loop;
	bool verbs;
	struct dma_side d;
	struct verbs_side v;
};

int icount_region(struct run *r, uint32_t ops);

/* The counted region: icount.sh passes this name to --toggle-collect. */
__attribute__((noinline, noclone)) int icount_region(struct run *r, uint32_t ops)
{
	int rc = r->loop(r, ops);

	/* No tail call: the loop runs inside this frame, as callgrind's toggle expects. */
	__asm__ volatile("" ::: "memory");
	return rc;
}

static int fail(const char *what)
{
	fprintf(stderr, "bench_icount: %s failed\n", what);
	return -1;
}

/* ---- DOCA DMA ---- */

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static int dma_jobs(struct dma_side *d)
{
	for (uint32_t k = 0; k < DMA_DEPTH; k++) {
		if (doca_buf_inventory_buf_by_data(d->inv, d->src_mmap, d->src + k * MSG, MSG, &d->sbuf[k]) !=
			    DOCA_SUCCESS ||
		    doca_buf_inventory_buf_by_addr(d->inv, d->dst_mmap, d->dst + k * MSG, MSG, &d->dbuf[k]) !=
			    DOCA_SUCCESS)
			return fail("doca_buf_inventory_buf_by_*");
		d->job[k] = (struct doca_dma_job_memcpy){
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(d->dma), .user_data.u64 = k},
			.dst_buff = d->dbuf[k],
			.src_buff = d->sbuf[k],
		};
	}
	return 0;
}

static int dma_setup(struct dma_side *d)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t r;

	d->src = mmap(NULL, DMA_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	d->dst = mmap(NULL, DMA_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d->src == MAP_FAILED || d->dst == MAP_FAILED)
		return fail("mmap");
	memset(d->src, 0x5a, DMA_REGION);
	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		return fail("finding a DOCA device");
	r = doca_dev_open(list[0], &d->dev);
	doca_devinfo_list_destroy(list);
	if (r != DOCA_SUCCESS)
		return fail("doca_dev_open");
	d->src_mmap = make_mmap(d->dev, d->src, DMA_REGION);
	d->dst_mmap = make_mmap(d->dev, d->dst, DMA_REGION);
	if (d->src_mmap == NULL || d->dst_mmap == NULL)
		return fail("the mmaps");
	r = doca_buf_inventory_create(NULL, 2 * DMA_DEPTH, 0, &d->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(d->inv);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&d->dma);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_dev_add(doca_dma_as_ctx(d->dma), d->dev);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(doca_dma_as_ctx(d->dma));
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(DMA_WQ_DEPTH, &d->wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(doca_dma_as_ctx(d->dma), d->wq);
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "bench_icount: DOCA setup failed: %s\n", doca_get_error_string(r));
		return -1;
	}
	return dma_jobs(d);
}

static void dma_teardown(struct dma_side *d)
{
	for (uint32_t k = 0; k < DMA_DEPTH; k++) {
		if (d->sbuf[k] != NULL)
			doca_buf_refcount_rm(d->sbuf[k], NULL);
		if (d->dbuf[k] != NULL)
			doca_buf_refcount_rm(d->dbuf[k], NULL);
	}
	if (d->wq != NULL) {
		doca_ctx_workq_rm(doca_dma_as_ctx(d->dma), d->wq);
		doca_workq_destroy(d->wq);
	}
	if (d->dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(d->dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(d->dma), d->dev);
		doca_dma_destroy(d->dma);
	}
	if (d->inv != NULL) {
		doca_buf_inventory_stop(d->inv);
		doca_buf_inventory_destroy(d->inv);
	}
	if (d->src_mmap != NULL)
		doca_mmap_destroy(d->src_mmap);
	if (d->dst_mmap != NULL)
		doca_mmap_destroy(d->dst_mmap);
	if (d->dev != NULL)
		doca_dev_close(d->dev);
	if (d->src != NULL && d->src != MAP_FAILED)
		munmap(d->src, DMA_REGION);
	if (d->dst != NULL && d->dst != MAP_FAILED)
		munmap(d->dst, DMA_REGION);
}

/*
 * ops jobs, DMA_DEPTH in flight, the loop of bench_dma's doca_pump without its
 * clock: submit while there is room, then reap up to DMA_DEPTH completions.
 * Exactly ops jobs are submitted and retrieved, so the queue ends empty.
 */
static int loop_dma(struct run *r, uint32_t ops)
{
	struct dma_side *d = &r->d;
	uint32_t sent = 0, done = 0, next = 0, inflight = 0;
	uint64_t idle = 0;

	while (done < ops) {
		struct doca_event ev;
		doca_error_t e;

		while (inflight < DMA_DEPTH && sent < ops) {
			e = doca_workq_submit(d->wq, &d->job[next].base);
			if (e == DOCA_ERROR_NO_MEMORY)
				break;
			if (e != DOCA_SUCCESS)
				return fail("doca_workq_submit");
			sent++;
			inflight++;
			next = next + 1 == DMA_DEPTH ? 0 : next + 1;
		}
		for (uint32_t n = 0; n < DMA_DEPTH; n++) {
			e = doca_workq_progress_retrieve(d->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
			if (e == DOCA_ERROR_AGAIN)
				break;
			if (e != DOCA_SUCCESS)
				return fail("a DMA job");
			doca_buf_reset_data_len(d->dbuf[ev.user_data.u64]);
			inflight--;
			done++;
			idle = 0;
		}
		if (++idle > SPIN_GUARD)
			return fail("waiting for DMA completions");
	}
	return 0;
}

static int dma_verify(struct dma_side *d)
{
	return memcmp(d->dst, d->src, DMA_DEPTH * MSG) == 0 ? 0 : fail("the copied bytes");
}

/* ---- verbs: the responder, in the child ---- */

static struct ibv_context *open_first(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	if (l != NULL && l[0] != NULL)
		c = ibv_open_device(l[0]);
	if (l != NULL)
		ibv_free_device_list(l);
	return c;
}

/* On send_recv the child sends and this process receives (set before the fork). */
static bool child_sends;

static struct ibv_qp *make_rc(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = WINDOW, .max_recv_wr = child_sends ? WINDOW : 1, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = MSG},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
	};

	return ibv_create_qp_ex(ctx, &a);
}

/* RESET -> INIT -> RTR -> RTS towards remote (0 or an errno value). */
static int rc_up(struct ibv_qp *qp, const struct peer_info *remote)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
	int rc;

	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc != 0)
		return rc;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_4096,
				 .dest_qp_num = remote->qpn,
				 .max_dest_rd_atomic = 1,
				 .min_rnr_timer = 12,
				 .ah_attr = {.dlid = remote->lid, .port_num = 1, .is_global = 1, .grh = {.hop_limit = 1}}};
	/* RoCE: the peer opened the same device; its port is addressed by GID 0. */
	rc = ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid);
	if (rc != 0)
		return rc;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int read_full(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t k = read(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_full(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/* Opens one side: device, PD, CQ, a page registered for remote writes, an RC QP. */
static int side_open(struct verbs_side *v)
{
	struct ibv_port_attr pa;

	v->ctx = open_first();
	if (v->ctx == NULL)
		return fail("opening the verbs device");
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = ibv_create_cq(v->ctx, 2 * WINDOW, NULL, NULL, 0);
	v->buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (v->pd == NULL || v->cq == NULL || v->buf == MAP_FAILED)
		return fail("PD, CQ, buffer");
	memset(v->buf, 0x3c, PAGE);
	v->mr = ibv_reg_mr(v->pd, v->buf, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	v->qp = v->mr != NULL ? make_rc(v->ctx, v->pd, v->cq) : NULL;
	if (v->qp == NULL || ibv_query_port(v->ctx, 1, &pa) != 0)
		return fail("MR, QP, port");
	v->qx = ibv_qp_to_qp_ex(v->qp);
	return pa.lid;
}

static void side_close(struct verbs_side *v)
{
	if (v->qp != NULL)
		ibv_destroy_qp(v->qp);
	if (v->mr != NULL)
		ibv_dereg_mr(v->mr);
	if (v->cq != NULL)
		ibv_destroy_cq(v->cq);
	if (v->pd != NULL)
		ibv_dealloc_pd(v->pd);
	if (v->ctx != NULL)
		ibv_close_device(v->ctx);
	if (v->buf != NULL && v->buf != MAP_FAILED)
		munmap(v->buf, PAGE);
}

/* send_recv's sender: per byte from the parent, RECV_BATCH SENDs of 64 B, the last signalled and polled; 0 or -1. */
static int child_send_batch(struct verbs_side *v)
{
	struct ibv_send_wr wr = {.sg_list = &v->sge[0], .num_sge = 1, .opcode = IBV_WR_SEND}, *bad;
	struct ibv_wc wc;
	uint64_t spins = 0;
	int n;

	v->sge[0] = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)v->buf, .length = MSG, .lkey = v->mr->lkey};
	for (uint32_t k = 0; k < RECV_BATCH; k++) {
		wr.wr_id = k;
		wr.send_flags = k + 1 == RECV_BATCH ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(v->qp, &wr, &bad) != 0)
			return -1;
	}
	while ((n = ibv_poll_cq(v->cq, 1, &wc)) == 0 && ++spins < SPIN_GUARD)
		;
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* The child: the responder's side, up until the parent closes its pipe. */
static __attribute__((noreturn)) void responder(int rd, int wr)
{
	struct verbs_side v = {0};
	struct peer_info me, req;
	int lid = side_open(&v), ok = 0;
	char c;

	if (lid >= 0) {
		memset(&me, 0, sizeof(me)); /* the padding goes through the pipe too */
		me.qpn = v.qp->qp_num;
		me.rkey = v.mr->rkey;
		me.addr = (uint64_t)(uintptr_t)v.buf;
		me.lid = (uint16_t)lid;
		ok = write_full(wr, &me, sizeof(me)) == 0 && read_full(rd, &req, sizeof(req)) == 0 &&
		     rc_up(v.qp, &req) == 0 && write_full(wr, "r", 1) == 0;
	}
	while (ok) {
		ssize_t n = read(rd, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
		if (n == 1 && child_sends)
			ok = child_send_batch(&v) == 0 && write_full(wr, "d", 1) == 0;
	}
	side_close(&v);
	_exit(ok ? 0 : 1);
}

/* ---- verbs: the requester ---- */

static void wr_prepare(struct verbs_side *v)
{
	for (uint32_t k = 0; k < LIST; k++) {
		v->sge[k] = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)v->buf, .length = MSG, .lkey = v->mr->lkey};
		v->wr[k] = (struct ibv_send_wr){
			.wr_id = k,
			.next = k + 1 < LIST ? &v->wr[k + 1] : NULL,
			.sg_list = &v->sge[k],
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = k + 1 == LIST ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = {.remote_addr = v->remote.addr + (uint64_t)(k % RSLOTS) * MSG, .rkey = v->remote.rkey},
		};
	}
}

static int verbs_setup(struct verbs_side *v)
{
	struct peer_info me;
	int p2c[2], c2p[2], lid;
	char c;

	/* Forked before this process opens the device: the child starts from nothing of it. */
	if (pipe(p2c) != 0 || pipe(c2p) != 0)
		return fail("pipe");
	fflush(NULL);
	v->child = fork();
	if (v->child < 0)
		return fail("fork");
	if (v->child == 0) {
		close(p2c[1]);
		close(c2p[0]);
		responder(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	v->to_child = p2c[1];
	v->from_child = c2p[0];
	lid = side_open(v);
	if (lid < 0)
		return -1;
	memset(&me, 0, sizeof(me));
	me.qpn = v->qp->qp_num;
	me.lid = (uint16_t)lid;
	if (read_full(v->from_child, &v->remote, sizeof(v->remote)) != 0 || write_full(v->to_child, &me, sizeof(me)) != 0)
		return fail("the exchange with the responder");
	if (rc_up(v->qp, &v->remote) != 0)
		return fail("connecting the QP");
	if (read_full(v->from_child, &c, 1) != 0)
		return fail("the responder");
	wr_prepare(v);
	return 0;
}

static int verbs_teardown(struct verbs_side *v)
{
	int st = 0, ok = 1;

	side_close(v);
	if (v->to_child > 0)
		close(v->to_child);
	if (v->from_child > 0)
		close(v->from_child);
	if (v->child > 0)
		ok = waitpid(v->child, &st, 0) == v->child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	return ok ? 0 : fail("the responder's exit");
}

/* Reaps what ibv_poll_cq hands back; each success accounts for per_cqe WRs. */
static int reap(struct verbs_side *v, uint32_t per_cqe, uint32_t *done, uint64_t *idle)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(v->cq, POLL_BATCH, wc);

	if (n < 0)
		return fail("ibv_poll_cq");
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "bench_icount: completion status %s\n", ibv_wc_status_str(wc[i].status));
			return -1;
		}
	*done += (uint32_t)n * per_cqe;
	*idle = n > 0 ? 0 : *idle + 1;
	return *idle > SPIN_GUARD ? fail("waiting for completions") : 0;
}

/* ib_write_bw with post list 1: WINDOW outstanding, every SIGNAL_EVERY-th WR signalled. */
static int loop_post_send(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_send_wr *wr = &v->wr[0], *bad;
	uint32_t sent = 0, done = 0;
	uint64_t idle = 0;

	wr->next = NULL;
	while (done < ops) {
		while (sent < ops && sent - done < WINDOW) {
			wr->send_flags = (sent + 1) % SIGNAL_EVERY == 0 ? IBV_SEND_SIGNALED : 0;
			wr->wr.rdma.remote_addr = v->remote.addr + (uint64_t)(sent % RSLOTS) * MSG;
			wr->wr_id = sent;
			if (ibv_post_send(v->qp, wr, &bad) != 0)
				return fail("ibv_post_send");
			sent++;
		}
		if (reap(v, SIGNAL_EVERY, &done, &idle) != 0)
			return -1;
	}
	wr->next = &v->wr[1];
	return 0;
}

/* The same through the ibv_wr_* builders, one WR per ibv_wr_start / ibv_wr_complete, as perftest. */
static int loop_wr(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_qp_ex *x = v->qx;
	uint64_t laddr = (uint64_t)(uintptr_t)v->buf, idle = 0;
	uint32_t sent = 0, done = 0;

	while (done < ops) {
		while (sent < ops && sent - done < WINDOW) {
			ibv_wr_start(x);
			x->wr_id = sent;
			x->wr_flags = (sent + 1) % SIGNAL_EVERY == 0 ? IBV_SEND_SIGNALED : 0;
			ibv_wr_rdma_write(x, v->remote.rkey, v->remote.addr + (uint64_t)(sent % RSLOTS) * MSG);
			ibv_wr_set_sge(x, v->mr->lkey, laddr, MSG);
			if (ibv_wr_complete(x) != 0)
				return fail("ibv_wr_complete");
			sent++;
		}
		if (reap(v, SIGNAL_EVERY, &done, &idle) != 0)
			return -1;
	}
	return 0;
}

/* Lists of LIST WRs per ibv_post_send, the last one signalled. */
static int loop_list(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_send_wr *bad;
	uint32_t sent = 0, done = 0;
	uint64_t idle = 0;

	while (done < ops) {
		while (sent < ops && sent - done + LIST <= WINDOW) {
			if (ibv_post_send(v->qp, v->wr, &bad) != 0)
				return fail("ibv_post_send of a list");
			sent += LIST;
		}
		if (reap(v, LIST, &done, &idle) != 0)
			return -1;
	}
	return 0;
}

/* One signalled WRITE, then poll until its completion: ops rounds. */
static int loop_lat(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_send_wr *wr = &v->wr[0], *bad;
	uint64_t idle = 0;
	uint32_t done = 0;

	wr->next = NULL;
	wr->send_flags = IBV_SEND_SIGNALED;
	for (uint32_t i = 0; i < ops; i++) {
		wr->wr_id = i;
		if (ibv_post_send(v->qp, wr, &bad) != 0)
			return fail("ibv_post_send");
		while (done <= i)
			if (reap(v, 1, &done, &idle) != 0)
				return -1;
	}
	wr->next = &v->wr[1];
	wr->send_flags = 0;
	return 0;
}

/* ib_write_lat's way: one signalled WRITE of inline data through ibv_wr_*, then poll until its completion. */
static int loop_lat_inl(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_qp_ex *x = v->qx;
	uint64_t idle = 0;
	uint32_t done = 0;

	for (uint32_t i = 0; i < ops; i++) {
		ibv_wr_start(x);
		x->wr_id = i;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, v->remote.rkey, v->remote.addr + (uint64_t)(i % RSLOTS) * MSG);
		ibv_wr_set_inline_data(x, v->buf, MSG);
		if (ibv_wr_complete(x) != 0)
			return fail("ibv_wr_complete");
		while (done <= i)
			if (reap(v, 1, &done, &idle) != 0)
				return -1;
	}
	return 0;
}

/* ib_send_bw's server: RECV_BATCH receives posted one by one, sent into by the child, then polled. */
static int loop_send_recv(struct run *r, uint32_t ops)
{
	struct verbs_side *v = &r->v;
	struct ibv_recv_wr rwr = {.sg_list = &v->sge[0], .num_sge = 1}, *bad;
	struct ibv_wc wc[POLL_BATCH];
	char c;

	for (uint32_t base = 0; base < ops; base += RECV_BATCH) {
		uint32_t got = 0;

		for (uint32_t k = 0; k < RECV_BATCH; k++) {
			v->sge[0] = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)v->buf + (uint64_t)(k % RSLOTS) * MSG,
						     .length = MSG, .lkey = v->mr->lkey};
			rwr.wr_id = base + k;
			if (ibv_post_recv(v->qp, &rwr, &bad) != 0)
				return fail("ibv_post_recv");
		}
		if (write_full(v->to_child, "s", 1) != 0 || read_full(v->from_child, &c, 1) != 0)
			return fail("the sender");
		/* Every SEND completed in the child: all RECV_BATCH completions are here. */
		while (got < RECV_BATCH) {
			int n = ibv_poll_cq(v->cq, POLL_BATCH, wc);

			if (n <= 0)
				return fail("ibv_poll_cq of the receives");
			for (int i = 0; i < n; i++, got++)
				if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV || wc[i].byte_len != MSG ||
				    wc[i].wr_id != base + got) {
					fprintf(stderr, "bench_icount: receive %u: status %s opcode %d len %u wr_id %llu\n",
						base + got, ibv_wc_status_str(wc[i].status), (int)wc[i].opcode, wc[i].byte_len,
						(unsigned long long)wc[i].wr_id);
					return -1;
				}
		}
	}
	return 0;
}

/* ---- main ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rounds of ops operations for at least seconds; the rate printed, 0 or -1. */
static int timed(struct run *r, uint32_t ops, double seconds)
{
	double t0 = now_s(), t;
	uint64_t n = 0;

	do {
		if (r->loop(r, ops) != 0)
			return -1;
		n += ops;
		t = now_s() - t0;
	} while (t < seconds);
	printf("bench_icount: %s rate %.0f\n", r->name, (double)n / t);
	return 0;
}

static const struct {
	const char *name;
	loop_fn loop;
	bool verbs;
} paths[] = {
	{"dma_64_d32", loop_dma, false},  {"write_post_send", loop_post_send, true}, {"write_wr", loop_wr, true},
	{"write_list32", loop_list, true}, {"write_lat", loop_lat, true},        {"write_lat_inl", loop_lat_inl, true},
	{"send_recv", loop_send_recv, true},
};

static int usage(void)
{
	fprintf(stderr, "usage: bench_icount <path> [--ops N] [--warmup N] [--seconds S]\npaths:");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		fprintf(stderr, " %s", paths[i].name);
	fprintf(stderr, "\n(--ops and --warmup: multiples of %u)\n", OPS_UNIT);
	return 2;
}

int main(int argc, char **argv)
{
	static struct run r;
	uint32_t ops = 20000, warmup = 1600;
	double seconds = 0;
	int rc;

	if (argc < 2)
		return usage();
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strcmp(argv[1], paths[i].name) == 0)
			r = (struct run){.name = paths[i].name, .loop = paths[i].loop, .verbs = paths[i].verbs};
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--ops") == 0)
			ops = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--warmup") == 0)
			warmup = (uint32_t)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = strtod(argv[i + 1], NULL);
		else
			return usage();
	}
	/* Whole signalling periods and lists, so that every WR is accounted for by a completion. */
	if (r.loop == NULL || argc % 2 != 0 || ops == 0 || ops % OPS_UNIT != 0 || warmup % OPS_UNIT != 0)
		return usage();
	child_sends = r.loop == loop_send_recv;
	rc = r.verbs ? verbs_setup(&r.v) : dma_setup(&r.d);
	if (rc == 0 && warmup > 0)
		rc = r.loop(&r, warmup);
	if (rc == 0 && seconds > 0)
		rc = timed(&r, ops, seconds);
	else if (rc == 0)
		rc = icount_region(&r, ops);
	if (rc == 0 && !r.verbs)
		rc = dma_verify(&r.d);
	if (rc == 0 && seconds <= 0)
		printf("bench_icount: %s ops %u pid %d\n", r.name, ops, (int)getpid());
	if (r.verbs) {
		if (verbs_teardown(&r.v) != 0)
			rc = -1;
	} else {
		dma_teardown(&r.d);
	}
	return rc == 0 ? 0 : 1;
}
