/*
 * libibverbs.so.1 and fork(), as rdma-core v44 documents it
 * (ibv_fork_init(3), ibv_is_fork_initialized(3)).
 *
 * Memory a key covers belongs to the key's owner, as on a card whose MR pins
 * the registering process's pages: a child forked after ibv_reg_mr that
 * writes through the parent's rkey (from its own device context, its QP
 * connected to the parent's) reaches the parent's buffer, and its own copy
 * of that buffer stays as it was at the fork (the pages are copied on fork,
 * IBV_FORK_UNNEEDED). The parent's QP is the parent's too: the child's QP
 * connected to it sees it destroyed, or its owner die, as any other
 * process's. ibv_fork_init is then unneeded: it succeeds, also after
 * registrations, and RDMAV_FORK_SAFE / IBV_FORK_SAFE change nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

#define BUF_LEN (2 * 4096)
#define W_OFF 100
#define W_LEN 4096

/* What the child reports (its exit code). */
enum kid_code {
	KID_OK = 0,
	KID_SETUP = 10,	    /* its device, PD, CQ, QP or MR */
	KID_PIPE = 11,
	KID_NO_WC = 12,	    /* no completion came */
	KID_WC_STATUS = 13, /* the write did not complete with IBV_WC_SUCCESS */
	KID_OWN_COPY = 14,  /* its own copy of the parent's buffer changed */
};

static pid_t kid = -1;

static void kid_reap_cb(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
}

struct target {
	uint8_t *buf; /* the parent's registered buffer, at the same address in the child */
	uint32_t rkey;
	uint32_t qpn;
};

/*
 * The child: its own device context, a QP connected to the parent's, one
 * RDMA WRITE through the parent's rkey. gone: the parent destroys its QP
 * first, and the write must end as toward any destroyed peer.
 */
static int kid_write(const struct target *t, bool gone, int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
				      .qp_type = IBV_QPT_RC};
	uint8_t *src = aligned_alloc(4096, W_LEN);
	struct ibv_mr *mr = pd != NULL && src != NULL ? ibv_reg_mr(pd, src, W_LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_wc wc;
	char go = 0;

	if (mr == NULL || cq == NULL)
		return KID_SETUP;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (qp == NULL)
		return KID_SETUP;
	if (write(out, &qp->qp_num, sizeof(qp->qp_num)) != sizeof(qp->qp_num) || read(in, &go, 1) != 1)
		return KID_PIPE;
	if (vq_up(qp, t->qpn, 12, 7) != 0)
		return KID_SETUP;
	if (gone && (write(out, "u", 1) != 1 || read(in, &go, 1) != 1))
		return KID_PIPE;
	memset(src, 'B', W_LEN);
	sge = (struct ibv_sge){.addr = (uintptr_t)src, .length = W_LEN, .lkey = mr->lkey};
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)t->buf + W_OFF;
	wr.wr.rdma.rkey = t->rkey;
	if (ibv_post_send(qp, &wr, &bad) != 0)
		return KID_SETUP;
	if (vq_poll1(cq, &wc) != 1)
		return KID_NO_WC;
	if (wc.status != (gone ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS))
		return KID_WC_STATUS;
	/* The child's copy is what the parent's memory was at the fork: copied, not shared. */
	for (uint32_t i = 0; i < BUF_LEN; i++)
		if (t->buf[i] != 'A')
			return KID_OWN_COPY;
	return KID_OK;
}

/*
 * The parent registers and holds a QP; the child writes through the rkey.
 * 0 when the bytes landed in the parent's buffer and nowhere else (gone:
 * the parent destroyed its QP first, and nothing landed), or what went
 * wrong (a kid_code, or 100 + what the parent found).
 */
static int write_through_parent_key(bool gone)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	uint8_t *buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct target t;
	int to[2], from[2], ws = 0, code = 0;
	uint32_t kid_qpn = 0;
	bool destroyed = false;

	if (pd == NULL || buf == MAP_FAILED)
		return 101;
	memset(buf, 'A', BUF_LEN);
	mr = vq_mr(pd, buf, BUF_LEN, VQ_ACCESS_ALL);
	cq = vq_cq(c, 8);
	/* Not deferred: the case may destroy it itself. */
	qp = cq != NULL ? ibv_create_qp(pd, &(struct ibv_qp_init_attr){.send_cq = cq, .recv_cq = cq,
									.qp_type = IBV_QPT_RC,
									.cap = {.max_send_wr = 4, .max_recv_wr = 4,
										.max_send_sge = 1, .max_recv_sge = 1}})
			: NULL;
	if (mr == NULL || qp == NULL || pipe(to) != 0 || pipe(from) != 0)
		return 102;
	t = (struct target){.buf = buf, .rkey = mr->rkey, .qpn = qp->qp_num};
	kid = fork();
	if (kid < 0)
		return 103;
	if (kid == 0)
		_exit(kid_write(&t, gone, to[0], from[1]));
	th_defer(kid_reap_cb, NULL);
	if (read(from[0], &kid_qpn, sizeof(kid_qpn)) != sizeof(kid_qpn) || vq_up(qp, kid_qpn, 12, 7) != 0 ||
	    write(to[1], "g", 1) != 1)
		code = 104;
	/* gone: once the child is connected, the parent destroys its QP, then lets it write. */
	if (code == 0 && gone) {
		destroyed = read(from[0], &kid_qpn, 1) == 1 && ibv_destroy_qp(qp) == 0;
		if (!destroyed || write(to[1], "w", 1) != 1)
			code = 108;
	}
	if (waitpid(kid, &ws, 0) != kid)
		code = 105;
	if (!destroyed)
		ibv_destroy_qp(qp);
	kid = -1;
	for (int i = 0; i < 2; i++) {
		close(to[i]);
		close(from[i]);
	}
	if (code != 0)
		return code;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != KID_OK)
		return WIFEXITED(ws) ? WEXITSTATUS(ws) : 106;
	/* Exactly the written bytes changed, in the parent (none when its QP was gone). */
	for (uint32_t i = 0; i < BUF_LEN; i++)
		if (buf[i] != (!gone && i >= W_OFF && i < W_OFF + W_LEN ? 'B' : 'A'))
			return 107;
	return 0;
}

static void test_child_writes_parent_memory(void)
{
	CHECK_ERR(write_through_parent_key(false), 0);
}

/*
 * The parent's QP is the parent's too: the child reaches it as any other
 * process does, so once the parent destroys it the child's write ends in
 * IBV_WC_RETRY_EXC_ERR, as toward any destroyed peer, and nothing lands.
 */
static void test_child_sees_parent_qp_destroyed(void)
{
	CHECK_ERR(write_through_parent_key(true), 0);
}

/*
 * A grandchild of the test, forked by the owner after it made its QP and MR:
 * connects to the owner's QP, says so (its pid) on out, and once told the
 * owner is gone waits for its QP to find the peer gone. Its exit code:
 * KID_OK when the QP went to ERR, KID_NO_WC when it stayed connected.
 */
static int heir_wait(const struct target *t, int from_owner, int to_owner, int in, int out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 4) : NULL;
	pid_t me = getpid();
	char go = 0;

	if (qp == NULL)
		return KID_SETUP;
	if (write(to_owner, &qp->qp_num, sizeof(qp->qp_num)) != sizeof(qp->qp_num) || read(from_owner, &go, 1) != 1)
		return KID_PIPE;
	if (vq_up(qp, t->qpn, 12, 7) != 0)
		return KID_SETUP;
	if (write(out, &me, sizeof(me)) != sizeof(me) || read(in, &go, 1) != 1)
		return KID_PIPE;
	/*
	 * As for a peer of any process that dies, and as on a card: the first
	 * request after it is unanswered (retries exceeded), the QP to ERR.
	 */
	{
		static uint64_t src;
		struct ibv_mr *mr = ibv_reg_mr(pd, &src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
		struct ibv_sge sge = { .addr = (uintptr_t)&src, .length = sizeof(src) };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		struct ibv_wc wc;

		if (mr == NULL)
			return KID_SETUP;
		sge.lkey = mr->lkey;
		wr.wr.rdma.remote_addr = (uintptr_t)t->buf;
		wr.wr.rdma.rkey = t->rkey;
		if (ibv_post_send(qp, &wr, &bad) != 0 || vq_poll1(cq, &wc) != 1)
			return KID_NO_WC;
		if (wc.status != IBV_WC_RETRY_EXC_ERR || ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) != 0 ||
		    qa.qp_state != IBV_QPS_ERR)
			return KID_NO_WC;
	}
	return KID_OK;
}

/*
 * The owner: QP and MR, then the heir forked (heir_in / heir_out are the
 * heir's pipes to the test); exits without cleaning up, as a crash, when
 * the test says 'x' on cmd.
 */
static int owner_run(int cmd, int heir_in, int heir_out)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	uint8_t *buf = aligned_alloc(4096, BUF_LEN);
	struct ibv_mr *mr = pd != NULL && buf != NULL ? ibv_reg_mr(pd, buf, BUF_LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp = cq != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 4) : NULL;
	int down[2], up[2];
	uint32_t heir_qpn = 0;
	struct target t;
	pid_t heir;
	char x = 0;

	if (qp == NULL || mr == NULL || pipe(down) != 0 || pipe(up) != 0)
		return 1;
	t = (struct target){.buf = buf, .rkey = mr->rkey, .qpn = qp->qp_num};
	heir = fork();
	if (heir < 0)
		return 1;
	if (heir == 0)
		_exit(heir_wait(&t, down[0], up[1], heir_in, heir_out));
	if (read(up[0], &heir_qpn, sizeof(heir_qpn)) != sizeof(heir_qpn) || vq_up(qp, heir_qpn, 12, 7) != 0 ||
	    write(down[1], "g", 1) != 1)
		return 1;
	while (read(cmd, &x, 1) == 1 && x != 'x')
		;
	return 0;
}

static pid_t heir_pid = -1;

static void heir_kill_cb(void *arg)
{
	(void)arg;
	if (heir_pid > 0) {
		kill(heir_pid, SIGKILL);
		waitpid(heir_pid, NULL, 0);
	}
	heir_pid = -1;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/*
 * The QP a child inherits in its parent's tables is the parent's: the
 * child reaches it as any other process does, so when the parent dies the
 * child's next request to it fails with retries exceeded and its QP goes to
 * ERR, as with any other process's QP. (The test adopts the orphaned child
 * to learn how it ended.)
 */
static void test_child_sees_parent_die(void)
{
	int cmd[2], hin[2], hout[2], ws = 0;
	pid_t owner;

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	th_defer(heir_kill_cb, NULL);
	CHECK(pipe(cmd) == 0 && pipe(hin) == 0 && pipe(hout) == 0);
	owner = fork();
	CHECK(owner >= 0);
	if (owner == 0)
		_exit(owner_run(cmd[0], hin[0], hout[1]));
	kid = owner;
	th_defer(kid_reap_cb, NULL);
	CHECK(read(hout[0], &heir_pid, sizeof(heir_pid)) == sizeof(heir_pid));
	/* The owner goes; once reaped it is gone for every process. */
	CHECK(write(cmd[1], "x", 1) == 1);
	CHECK(waitpid(owner, &ws, 0) == owner);
	kid = -1;
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	CHECK(write(hin[1], "w", 1) == 1);
	CHECK(waitpid(heir_pid, &ws, 0) == heir_pid);
	heir_pid = -1;
	for (int i = 0; i < 2; i++) {
		close(cmd[i]);
		close(hin[i]);
		close(hout[i]);
	}
	CHECK(WIFEXITED(ws));
	CHECK_ERR(WEXITSTATUS(ws), KID_OK);
}

/*
 * The child's memory is the parent's as it was at the fork, registered pages
 * too (their copy is made in the child): what the parent writes right after
 * fork returns is not in it. 50 rounds, the parent writing at once.
 */
static void test_child_copy_is_of_fork_time(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	volatile uint64_t *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	int late = 0;

	CHECK(pd != NULL && buf != NULL);
	th_defer(free, (void *)buf);
	mr = vq_mr(pd, (void *)buf, 4096, VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	for (int i = 0; i < 50; i++) {
		pid_t pid;
		int ws = 0;

		buf[0] = 1;
		fflush(NULL);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			usleep(2000);
			_exit(buf[0] == 1 ? 0 : 1);
		}
		buf[0] = 2; /* after the fork: never the child's */
		CHECK(waitpid(pid, &ws, 0) == pid && WIFEXITED(ws));
		late += WEXITSTATUS(ws) != 0;
	}
	if (late != 0)
		TH_FAIL("%d of 50 children saw a write their parent made after fork", late);
	CHECK(late == 0);
}

/* The same with rdma-core's fork initialisation asked for first: it changes nothing here. */
static void test_after_fork_init(void)
{
	CHECK_OK(ibv_fork_init());
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CHECK_ERR(write_through_parent_key(false), 0);
}

/*
 * ibv_is_fork_initialized(3): IBV_FORK_UNNEEDED takes precedence, whether
 * ibv_fork_init was called or not. ibv_fork_init(3)'s EINVAL means a
 * registration made fork unsafe; fork is safe here, so it succeeds after
 * registrations too.
 */
static void test_fork_init_rules(void)
{
	struct ibv_context *c = vf_open();
	static uint8_t mem[4096] __attribute__((aligned(4096)));
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CHECK(vq_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE) != NULL);
	CHECK_OK(ibv_fork_init());
	CHECK_OK(ibv_fork_init());
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CHECK_OK(ibv_dontfork_range(mem, sizeof(mem)));
	CHECK_OK(ibv_dofork_range(mem, sizeof(mem)));
}

/* The environment variables have the effect of calling ibv_fork_init (none), in a program started with them. */
static void test_fork_safe_env(void)
{
	static char vars[][24] = {"RDMAV_FORK_SAFE=1", "IBV_FORK_SAFE=1"};

	for (int v = 0; v < 2; v++) {
		int err[2], ws = 0;
		char log[4096];
		ssize_t n, got = 0;

		CHECK(pipe(err) == 0);
		kid = fork();
		CHECK(kid >= 0);
		if (kid == 0) {
			char *argv[] = {"test_verbs_fork", "--env-role", NULL};

			dup2(err[1], 2);
			putenv(vars[v]);
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		th_defer(kid_reap_cb, NULL);
		close(err[1]);
		while ((n = read(err[0], log + got, sizeof(log) - 1 - (size_t)got)) > 0)
			got += n;
		log[got] = '\0';
		close(err[0]);
		CHECK(waitpid(kid, &ws, 0) == kid);
		kid = -1;
		CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
		/* rdma-core prints a warning when the asked-for fork safety fails. */
		CHECK(strstr(log, "fork") == NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--env-role") == 0) {
		if (ibv_is_fork_initialized() != IBV_FORK_UNNEEDED)
			return 1;
		return write_through_parent_key(false) == 0 ? 0 : 2;
	}
	RUN(test_child_writes_parent_memory);
	RUN(test_child_sees_parent_qp_destroyed);
	RUN(test_child_sees_parent_die);
	RUN(test_child_copy_is_of_fork_time);
	RUN(test_after_fork_init);
	RUN(test_fork_init_rules);
	RUN(test_fork_safe_env);
	return th_summary("test_verbs_fork");
}
