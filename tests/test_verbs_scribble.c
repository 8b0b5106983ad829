/*
 * A same-user process that writes over another process's queue memory. A
 * QP's rings, doorbell record and device state are a memfd its peers map
 * (docs/ARCHITECTURE.md, "One device across processes"), so any process of
 * the user can reach it through /proc/<pid>/fd/<n>. Whatever it writes
 * there, the owner's work must end: every SEND completes, successfully or
 * with an error CQE, within a bounded time (a hang guard here), the QP is in
 * ERR once garbage broke it and later work is flushed, and nothing of the
 * owner outside that queue changes (its other QP, its memory).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define VS_LEN 65536
#define VS_ROUNDS 100000 /* at most; garbage over the state word ends it long before */
#define VS_MSG 64
#define VS_LOST_NS (10ull * 1000000000ull) /* a hang guard, never a measurement */
#define VS_MAX_FDS 256

static uint8_t vs_mem[2][VS_LEN] __attribute__((aligned(4096)));
static uint8_t vs_canary[VS_LEN] __attribute__((aligned(4096)));

static uint64_t vs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The descriptors of this process that are queue memfds, as a bitmap over 0..VS_MAX_FDS-1. */
static void vs_queue_fds(bool *set)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	memset(set, 0, VS_MAX_FDS * sizeof(*set));
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[64], target[256];
		int fd = atoi(e->d_name);
		ssize_t n;

		if (e->d_name[0] == '.' || fd < 0 || fd >= VS_MAX_FDS)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "memfd:softdpu-queue") != NULL)
			set[fd] = true;
	}
	closedir(d);
}

struct vs_victim {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2]; /* qp[0] the scribbled one, sending to qp[1] */
	struct ibv_mr *mr[2], *canary;
	int fd;		      /* the process's queue memfd */
	off_t off, len;	      /* qp[0]'s block in it */
};

/*
 * The scribbler: another process of the user maps the victim's queue memfd
 * through /proc and writes random words all over it until it is killed.
 */
static void vs_scribble(pid_t victim, const struct vs_victim *v, uint64_t seed, int ready)
{
	char path[64];
	uint32_t *p;
	size_t words;
	int qfd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)victim, v->fd);
	qfd = open(path, O_RDWR);
	if (qfd < 0)
		_exit(2);
	p = mmap(NULL, (size_t)v->len, PROT_READ | PROT_WRITE, MAP_SHARED, qfd, v->off);
	if (p == MAP_FAILED)
		_exit(3);
	words = (size_t)v->len / sizeof(*p);
	if (write(ready, "r", 1) != 1)
		_exit(4);
	for (;;) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		__atomic_store_n(&p[seed % words], (uint32_t)(seed >> 32), __ATOMIC_RELAXED);
	}
}

static void vs_kill(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	int ws;

	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
}


/* The size of the queue memfd fd, -1 when there is none. */
static off_t vs_size(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? st.st_size : -1;
}

static void vs_setup(struct vs_victim *v)
{
	bool fds[VS_MAX_FDS];

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	v->c = vf_open();
	CHECK(v->c != NULL);
	v->pd = vf_pd(v->c);
	CHECK(v->pd != NULL);
	for (int i = 0; i < 2; i++) {
		v->cq[i] = vq_cq(v->c, 512);
		CHECK(v->cq[i] != NULL);
		memset(vs_mem[i], 0x10 + i, VS_LEN);
		v->mr[i] = vq_mr(v->pd, vs_mem[i], VS_LEN, VQ_ACCESS_ALL);
		CHECK(v->mr[i] != NULL);
	}
	memset(vs_canary, 0x5c, VS_LEN);
	v->canary = vq_mr(v->pd, vs_canary, VS_LEN, VQ_ACCESS_ALL);
	CHECK(v->canary != NULL);
	v->qp[1] = vq_qp(v->pd, IBV_QPT_RC, v->cq[1], v->cq[1], 256);
	CHECK(v->qp[1] != NULL);
	/* The process's queues are blocks of one memfd, each new one at its end: qp[0]'s is what it adds. */
	vs_queue_fds(fds);
	for (int fd = 0; fd < VS_MAX_FDS; fd++)
		if (fds[fd]) {
			CHECK(v->fd < 0);
			v->fd = fd;
		}
	v->off = vs_size(v->fd);
	CHECK(v->off >= 0);
	v->qp[0] = vq_qp(v->pd, IBV_QPT_RC, v->cq[0], v->cq[0], 16);
	CHECK(v->qp[0] != NULL);
	v->len = vs_size(v->fd) - v->off;
	CHECK(v->len > 0);
	CHECK_OK(vq_up(v->qp[0], v->qp[1]->qp_num, 1, 7));
	CHECK_OK(vq_up(v->qp[1], v->qp[0]->qp_num, 1, 7));
}

static int vs_send(struct vs_victim *v, uint64_t id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)vs_mem[0], .length = VS_MSG, .lkey = v->mr[0]->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(v->qp[0], &wr, &bad);
}

static int vs_recv(struct vs_victim *v, uint64_t id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)vs_mem[1] + (id % 256) * VS_MSG, .length = VS_MSG,
			      .lkey = v->mr[1]->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(v->qp[1], &wr, &bad);
}

/* The next completion of cq within the hang guard; false when none came. */
static bool vs_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	uint64_t lost_at = vs_now() + VS_LOST_NS;

	while (vs_now() < lost_at) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return false;
		if (n == 1)
			return true;
	}
	return false;
}

static enum ibv_qp_state vs_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;

	memset(&qa, 0, sizeof(qa));
	if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) != 0)
		return (enum ibv_qp_state)-1;
	return qa.qp_state;
}

static bool vs_all(const uint8_t *p, uint8_t b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != b)
			return false;
	return true;
}

/* One victim, one scribbler (seeded): SENDs until one fails or all are done. */
static void vs_round(uint64_t seed)
{
	struct vs_victim v;
	struct pollfd pf;
	struct ibv_wc wc;
	bool failed = false;
	int r, ready[2];
	char b;
	pid_t pid;

	vs_setup(&v);
	for (int i = 0; i < 256; i++)
		CHECK_OK(vs_recv(&v, (uint64_t)i));
	CHECK_OK(pipe(ready));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		vs_scribble(getppid(), &v, seed, ready[1]);
	th_defer_local(vs_kill, &pid);
	close(ready[1]);
	pf = (struct pollfd){.fd = ready[0], .events = POLLIN};
	CHECK(poll(&pf, 1, 10000) == 1 && read(ready[0], &b, 1) == 1); /* it writes from here on */
	close(ready[0]);
	for (r = 0; r < VS_ROUNDS && !failed; r++) {
		int rc = vs_send(&v, 1000 + (uint64_t)r);

		if (rc != 0) { /* refused at the post: nothing is owed */
			TH_FAIL("round %d: ibv_post_send returned %d", r, rc);
			CHECK(rc == 0);
		}
		memset(&wc, 0, sizeof(wc));
		if (!vs_wait(v.cq[0], &wc))
			TH_FAIL("seed %llu round %d: no completion within the guard, QP state %d",
				(unsigned long long)seed, r, (int)vs_state(v.qp[0]));
		CHECK(wc.wr_id == 1000 + (uint64_t)r);
		failed = wc.status != IBV_WC_SUCCESS;
		if (!failed) { /* the receive it consumed comes back, so the responder never runs out (no RNR) */
			CHECK(vs_wait(v.cq[1], &wc) && wc.status == IBV_WC_SUCCESS);
			CHECK_OK(vs_recv(&v, wc.wr_id));
		}
	}
	th_undefer(vs_kill, &pid);
	vs_kill(&pid);
	/* Garbage over the state word is certain within the rounds; its QP is in ERR and later work is flushed. */
	CHECK(failed);
	CHECK(vs_state(v.qp[0]) == IBV_QPS_ERR);
	CHECK_OK(vs_send(&v, 7));
	CHECK(vs_wait(v.cq[0], &wc));
	CHECK(wc.wr_id == 7 && wc.status == IBV_WC_WR_FLUSH_ERR);
	/* Nothing of the victim outside that queue: its other QP, its memory. */
	CHECK(vs_state(v.qp[1]) == IBV_QPS_RTS);
	CHECK(vs_all(vs_canary, 0x5c, VS_LEN));
	CHECK(vs_all(vs_mem[0], 0x10, VS_LEN));
	for (size_t i = 0; i < VS_LEN; i++) /* untouched, or a SEND's bytes (a scribbled WQE may have carried fewer) */
		CHECK(vs_mem[1][i] == 0x11 || vs_mem[1][i] == 0x10);
}

static void test_scribbled_qp(void)
{
	/* Several seeds: where the garbage lands first differs. */
	for (uint64_t seed = 1; seed <= 9; seed++)
		vs_round(0x9e3779b97f4a7c15ull * seed);
}

int main(void)
{
	RUN(test_scribbled_qp);
	return th_summary("test_verbs_scribble");
}
