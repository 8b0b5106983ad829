/*
 * Raw doorbells: how promptly the device runs WQEs a program writes itself
 * (the WQE in sq.buf, the send doorbell record, the 8-byte doorbell register
 * bf.reg), as UCX's mlx5 transports and DevX programs do, never calling
 * ibv_post_send or ibv_poll_cq (docs/PERFORMANCE.md, bench/rawbell.sh).
 *   pingpong <n>  two processes, each with an RC QP connected to the other's:
 *                 each in turn RDMA-WRITEs 8 bytes (a sequence number) into
 *                 the other's buffer through a raw doorbell, polls its CQE in
 *                 the CQ's memory and spins on its own buffer for the answer;
 *                 the median one-way time (half a round trip), beside the
 *                 median one-way time of a futex wake between two processes
 *                 (each sleeping in FUTEX_WAIT, woken by the other) measured
 *                 in the same run, and the same ping-pong through
 *                 ibv_post_send/ibv_poll_cq (work run by the caller);
 *   stream <n>    n 64-byte RDMA WRITEs through raw doorbells, 32 in flight,
 *                 each CQE polled in memory, then the same through
 *                 ibv_post_send / ibv_poll_cq: both rates;
 *   idle <s>      within one process, 1000 raw WRITEs each waited for
 *                 (doorbell to CQE, median); then the process, holding the
 *                 QP, sleeps s seconds: the CPU it used meanwhile
 *                 (getrusage), as a share of one core.
 *
 * Usage: rawbell pingpong|stream|idle <n>
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <endian.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define RB_DEPTH 64
#define RB_WINDOW 32
#define RB_LOST_NS (10ull * 1000000000ull)

struct rb_side {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct mlx5dv_qp dq;
	struct mlx5dv_cq dcq;
	uint32_t pi, ci;
	uint8_t *buf; /* [0, 4096): the local source; [4096, 8192): what the peer writes */
};

struct rb_peer {
	uint32_t qpn, rkey;
	uint64_t addr;
};

static uint64_t rb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rb_die(const char *what)
{
	fprintf(stderr, "rawbell: %s failed\n", what);
	exit(1);
}

static int rb_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rb_median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), rb_cmp);
	return v[n / 2];
}

static void rb_open(struct rb_side *s)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	s->c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	if (s->c == NULL)
		rb_die("ibv_open_device");
	ibv_free_device_list(l);
	s->pd = ibv_alloc_pd(s->c);
	s->cq = ibv_create_cq(s->c, RB_DEPTH, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, 8192);
	if (s->pd == NULL || s->cq == NULL || s->buf == NULL)
		rb_die("pd/cq");
	memset(s->buf, 0, 8192);
	s->mr = ibv_reg_mr(s->pd, s->buf, 8192,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (s->mr == NULL)
		rb_die("ibv_reg_mr");
}

static struct ibv_qp *rb_qp(struct rb_side *s)
{
	struct ibv_qp_init_attr a = { .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = RB_DEPTH, .max_recv_wr = 1, .max_send_sge = 1,
					       .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(s->pd, &a);

	if (qp == NULL)
		rb_die("ibv_create_qp");
	return qp;
}

static void rb_up(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		rb_die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0 ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		rb_die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		rb_die("RTS");
}

static void rb_dv(struct rb_side *s)
{
	struct mlx5dv_obj o;

	memset(&o, 0, sizeof(o));
	o.qp.in = s->qp;
	o.qp.out = &s->dq;
	o.cq.in = s->cq;
	o.cq.out = &s->dcq;
	if (mlx5dv_init_obj(&o, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ) != 0)
		rb_die("mlx5dv_init_obj");
}

/* One RDMA WRITE of len bytes from src through the raw doorbell, its CQE asked for. */
static void rb_raw_write(struct rb_side *s, const void *src, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	uint8_t *wqe = (uint8_t *)s->dq.sq.buf + (size_t)(s->pi & (s->dq.sq.wqe_cnt - 1)) * s->dq.sq.stride;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_raddr_seg *rs = (void *)(ctrl + 1);
	struct mlx5_wqe_data_seg *ds = (void *)(rs + 1);

	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)s->pi, MLX5_OPCODE_RDMA_WRITE, 0, s->qp->qp_num, MLX5_WQE_CTRL_CQ_UPDATE,
			    3, 0, 0);
	rs->raddr = htobe64(raddr);
	rs->rkey = htobe32(rkey);
	rs->reserved = 0;
	mlx5dv_set_data_seg(ds, len, s->mr->lkey, (uintptr_t)src);
	s->pi++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->dq.dbrec[MLX5_SND_DBR] = htobe32(s->pi & 0xffff);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)s->dq.bf.reg = *(uint64_t *)(void *)ctrl;
}

/* Waits for the next CQE in the CQ's memory; exits on an error CQE or one lost for 10 s. */
static void rb_raw_cqe(struct rb_side *s)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)s->dcq.buf + (s->ci & (s->dcq.cqe_cnt - 1));
	uint64_t lost_at = 0;

	for (unsigned spins = 0;; spins++) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (mlx5dv_get_cqe_opcode(cqe) != MLX5_CQE_INVALID &&
		    mlx5dv_get_cqe_owner(cqe) == ((s->ci / s->dcq.cqe_cnt) & 1))
			break;
		if ((spins & 0xfff) == 0) {
			uint64_t t = rb_now();

			if (lost_at == 0)
				lost_at = t + RB_LOST_NS;
			else if (t > lost_at)
				rb_die("a CQE (lost)");
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (mlx5dv_get_cqe_opcode(cqe) != MLX5_CQE_REQ)
		rb_die("a WQE (error CQE)");
	s->ci++;
	s->dcq.dbrec[0] = htobe32(s->ci & 0xffffff);
}

static void rb_wait_value(volatile uint64_t *p, uint64_t v)
{
	uint64_t lost_at = rb_now() + RB_LOST_NS;

	for (unsigned spins = 0; __atomic_load_n(p, __ATOMIC_ACQUIRE) != v; spins++)
		if ((spins & 0xfff) == 0 && rb_now() > lost_at)
			rb_die("the peer's write (lost)");
}

static void rb_xfer(int wfd, int rfd, const void *out, void *in, size_t len)
{
	if (write(wfd, out, len) != (ssize_t)len || read(rfd, in, len) != (ssize_t)len)
		rb_die("the exchange with the peer");
}

/* One side of the raw ping-pong; side 0 times n round trips and returns the median one-way ns. */
/* One WRITE through the library, its completion taken from ibv_poll_cq. */
static void rb_verbs_write(struct rb_side *s, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = raddr, .rkey = rkey } },
			   *bad;
	struct ibv_wc wc;
	int got;

	if (ibv_post_send(s->qp, &wr, &bad) != 0)
		rb_die("ibv_post_send");
	while ((got = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		;
	if (got < 0 || wc.status != IBV_WC_SUCCESS)
		rb_die("a WRITE (error completion)");
}

static uint64_t rb_pingpong_side(int side, int wfd, int rfd, int n, bool raw)
{
	struct rb_side s = { 0 };
	struct rb_peer me, peer;
	uint64_t *rtt = calloc((size_t)n, sizeof(uint64_t)), med = 0;
	volatile uint64_t *in;
	char go = 'g';

	rb_open(&s);
	s.qp = rb_qp(&s);
	me = (struct rb_peer){ .qpn = s.qp->qp_num, .rkey = s.mr->rkey, .addr = (uintptr_t)s.buf + 4096 };
	rb_xfer(wfd, rfd, &me, &peer, sizeof(me));
	rb_up(s.qp, peer.qpn);
	if (raw)
		rb_dv(&s);
	rb_xfer(wfd, rfd, &go, &go, 1); /* both up before the first write */
	in = (volatile uint64_t *)(void *)(s.buf + 4096);
	for (int i = 1; i <= n + 100; i++) { /* 100 rounds of warm-up */
		uint64_t t0 = rb_now();

		if (side == 1)
			rb_wait_value(in, (uint64_t)i);
		memcpy(s.buf, &(uint64_t){ (uint64_t)i }, 8);
		if (raw) {
			rb_raw_write(&s, s.buf, 8, peer.addr, peer.rkey);
			rb_raw_cqe(&s);
		} else {
			rb_verbs_write(&s, 8, peer.addr, peer.rkey);
		}
		if (side == 0) {
			rb_wait_value(in, (uint64_t)i);
			if (i > 100)
				rtt[i - 101] = rb_now() - t0;
		}
	}
	rb_xfer(wfd, rfd, &go, &go, 1); /* neither destroys its QP while the other still writes */
	if (side == 0)
		med = rb_median(rtt, (size_t)n) / 2;
	free(rtt);
	return med;
}

static void rb_futex(uint32_t *w, int op, uint32_t v)
{
	syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

/* Two processes wake each other through futexes in shared memory: the median one-way ns. */
static uint64_t rb_futex_pingpong(int n)
{
	uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t *rtt = calloc((size_t)n, sizeof(uint64_t)), med;
	pid_t kid;

	if (w == MAP_FAILED || rtt == NULL)
		rb_die("mmap");
	w[0] = w[16] = 0; /* w[0]: the turn of the child; w[16]: the parent's */
	kid = fork();
	if (kid == 0) {
		for (uint32_t i = 1; i <= (uint32_t)n + 100; i++) {
			while (__atomic_load_n(&w[0], __ATOMIC_ACQUIRE) != i)
				rb_futex(&w[0], FUTEX_WAIT, i - 1);
			__atomic_store_n(&w[16], i, __ATOMIC_RELEASE);
			rb_futex(&w[16], FUTEX_WAKE, 1);
		}
		_exit(0);
	}
	for (uint32_t i = 1; i <= (uint32_t)n + 100; i++) {
		uint64_t t0 = rb_now();

		__atomic_store_n(&w[0], i, __ATOMIC_RELEASE);
		rb_futex(&w[0], FUTEX_WAKE, 1);
		while (__atomic_load_n(&w[16], __ATOMIC_ACQUIRE) != i)
			rb_futex(&w[16], FUTEX_WAIT, i - 1);
		if (i > 100)
			rtt[i - 101] = rb_now() - t0;
	}
	waitpid(kid, NULL, 0);
	med = rb_median(rtt, (size_t)n) / 2;
	free(rtt);
	munmap(w, 4096);
	return med;
}

/* Two processes ping-pong through WRITEs (raw doorbells or the library): the median one-way ns. */
static uint64_t rb_pingpong_run(int n, bool raw)
{
	int a[2], b[2], ws;
	uint64_t med;
	pid_t kid;

	if (pipe(a) != 0 || pipe(b) != 0)
		rb_die("pipe");
	kid = fork(); /* before any device is opened: the child starts clean */
	if (kid == 0) {
		rb_pingpong_side(1, b[1], a[0], n, raw);
		_exit(0);
	}
	med = rb_pingpong_side(0, a[1], b[0], n, raw);
	if (waitpid(kid, &ws, 0) != kid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		rb_die("the peer");
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	return med;
}

static int rb_pingpong(int n)
{
	uint64_t fut = rb_futex_pingpong(n), raw = rb_pingpong_run(n, true), lib = rb_pingpong_run(n, false);

	printf("pingpong  raw doorbell one-way %8.2f us   futex wake one-way %8.2f us   ratio %.2f  "
	       "(ibv_post_send one-way %.2f us; median of %d)\n",
	       (double)raw / 1000.0, (double)fut / 1000.0, (double)raw / (double)fut, (double)lib / 1000.0, n);
	return 0;
}

/* Two QPs of one process, a writing to b: n 64-byte WRITEs, RB_WINDOW in flight. */
static double rb_stream_raw(struct rb_side *s, uint64_t raddr, uint32_t rkey, int n)
{
	uint64_t t0 = rb_now();

	for (int i = 0; i < n; i++) {
		if (s->pi - s->ci >= RB_WINDOW)
			rb_raw_cqe(s);
		rb_raw_write(s, s->buf + 64 * (i % 32), 64, raddr + 64u * (uint64_t)(i % 32), rkey);
	}
	while (s->ci != s->pi)
		rb_raw_cqe(s);
	return (double)n / ((double)(rb_now() - t0) * 1e-9);
}

static double rb_stream_verbs(struct rb_side *s, struct ibv_qp *qp, uint64_t raddr, uint32_t rkey, int n)
{
	uint64_t t0 = rb_now();
	uint32_t posted = 0, done = 0;
	struct ibv_wc wc[RB_WINDOW];

	while (done < (uint32_t)n) {
		while (posted < (uint32_t)n && posted - done < RB_WINDOW) {
			struct ibv_sge sge = { .addr = (uintptr_t)s->buf + 64 * (posted % 32), .length = 64,
					       .lkey = s->mr->lkey };
			struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
						  .send_flags = IBV_SEND_SIGNALED,
						  .wr.rdma = { .remote_addr = raddr + 64u * (posted % 32), .rkey = rkey } },
					   *bad;

			if (ibv_post_send(qp, &wr, &bad) != 0)
				rb_die("ibv_post_send");
			posted++;
		}
		int got = ibv_poll_cq(s->cq, RB_WINDOW, wc);

		if (got < 0)
			rb_die("ibv_poll_cq");
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				rb_die("a WRITE (error completion)");
		done += (uint32_t)got;
	}
	return (double)n / ((double)(rb_now() - t0) * 1e-9);
}

/* libsoftdpu's private trap counters (hw_trap.h), when the library has them: traps, stream hand-overs, re-arms. */
struct rb_trap_stats {
	uint64_t served, stepped, opened, streams, closed;
};

static bool rb_trap_stats(struct rb_trap_stats *st)
{
	void (*fn)(struct rb_trap_stats *) = (void (*)(struct rb_trap_stats *))dlsym(RTLD_DEFAULT, "hw_trap_stats");

	memset(st, 0, sizeof(*st));
	if (fn != NULL)
		fn(st);
	return fn != NULL;
}

static int rb_stream(int n)
{
	struct rb_side s = { 0 };
	struct ibv_qp *b, *v, *vb;
	struct ibv_cq *vcq;
	struct rb_trap_stats t0, t1;
	double raw, verbs;
	bool have;

	rb_open(&s);
	s.qp = rb_qp(&s);
	b = rb_qp(&s);
	rb_up(s.qp, b->qp_num);
	rb_up(b, s.qp->qp_num);
	rb_dv(&s);
	have = rb_trap_stats(&t0);
	raw = rb_stream_raw(&s, (uintptr_t)s.buf + 4096, s.mr->rkey, n);
	(void)rb_trap_stats(&t1);
	/* The library's pair: its own QPs and CQ, never given to mlx5dv_init_obj. */
	vcq = s.cq;
	s.cq = ibv_create_cq(s.c, RB_DEPTH, NULL, NULL, 0);
	if (s.cq == NULL)
		rb_die("ibv_create_cq");
	v = rb_qp(&s);
	vb = rb_qp(&s);
	rb_up(v, vb->qp_num);
	rb_up(vb, v->qp_num);
	verbs = rb_stream_verbs(&s, v, (uintptr_t)s.buf + 4096, s.mr->rkey, n);
	printf("stream    raw doorbell %8.3f M/s   ibv_post_send %8.3f M/s   ratio %.2f  (%d x 64 B WRITE)\n",
	       raw / 1e6, verbs / 1e6, raw / verbs, n);
	if (have)
		printf("          raw doorbells trapped %llu, handed to the engine thread %llu times, trapped again %llu times\n",
		       (unsigned long long)(t1.served - t0.served), (unsigned long long)(t1.streams - t0.streams),
		       (unsigned long long)(t1.closed - t0.closed));
	(void)vcq;
	return 0;
}

static double rb_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

static int rb_idle(int secs)
{
	struct rb_side s = { 0 };
	struct ibv_qp *b;
	double c0, c1;
	uint64_t t0, t1;

	rb_open(&s);
	s.qp = rb_qp(&s);
	b = rb_qp(&s);
	rb_up(s.qp, b->qp_num);
	rb_up(b, s.qp->qp_num);
	rb_dv(&s);
	{
		uint64_t lat[1000];

		for (int i = 0; i < 1000; i++) {
			uint64_t t0 = rb_now();

			rb_raw_write(&s, s.buf, 8, (uintptr_t)s.buf + 4096, s.mr->rkey);
			rb_raw_cqe(&s);
			lat[i] = rb_now() - t0;
		}
		printf("one process: doorbell to CQE %.2f us (median of 1000)\n", (double)rb_median(lat, 1000) / 1000.0);
	}
	c0 = rb_cpu_s();
	t0 = rb_now();
	sleep((unsigned)secs);
	c1 = rb_cpu_s();
	t1 = rb_now();
	printf("idle      CPU of a process holding a raw-doorbell QP: %.3f %% of a core over %d s\n",
	       100.0 * (c1 - c0) / ((double)(t1 - t0) * 1e-9), secs);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: rawbell pingpong|stream|idle <n>\n");
		return 2;
	}
	if (strcmp(argv[1], "pingpong") == 0)
		return rb_pingpong(n);
	if (strcmp(argv[1], "stream") == 0)
		return rb_stream(n);
	if (strcmp(argv[1], "idle") == 0)
		return rb_idle(n);
	fprintf(stderr, "usage: rawbell pingpong|stream|idle <n>\n");
	return 2;
}
