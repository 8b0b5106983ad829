/*
 * libibverbs.so.1: the limits ibv_query_device reports are reachable by one
 * program, and running out of what the system gives (descriptors) fails the
 * creation that needed it (NULL, errno ENOMEM) instead of making an object
 * that looks created but that the device's other processes cannot reach.
 *
 * Each count runs in a role process (tests/th_proc.h) that lowers its own
 * RLIMIT_NOFILE to 64, so a descriptor per object would show at once. The
 * PD, MR, CQ and SRQ roles stand for a machine of their own
 * (SOFTDPU_MACHINE), so they fill a number table nobody else uses (QPs would
 * start serving other machines there: the QP role gives its numbers back).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"
#include "shm_machine.h"

#define ROLE_NOFILE 64
#define FD_PAGES 200 /* distinct ranges registered: more than ROLE_NOFILE descriptors */

static char machine[32]; /* this run's private machine: its tables are its own */

/* ---- roles --------------------------------------------------------------------------------------------------- */

static struct ibv_context *role_open(struct ibv_device_attr *a)
{
	struct rlimit rl;
	struct ibv_device **l;
	struct ibv_context *c;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return NULL;
	rl.rlim_cur = ROLE_NOFILE;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return NULL;
	l = ibv_get_device_list(NULL);
	c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	if (c == NULL || ibv_query_device(c, a) != 0)
		return NULL;
	return c;
}

/* PDs up to max_pd; prints "pd <max_pd> <made> <errno of the next one>". */
static int role_pd(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	int made = 0, err = 0;

	if (c == NULL)
		return 2;
	while (made <= a.max_pd) {
		errno = 0;
		if (ibv_alloc_pd(c) == NULL) {
			err = errno;
			break;
		}
		made++;
	}
	printf("pd %d %d %d\n", a.max_pd, made, err);
	return 0;
}

/* MRs of one range up to max_mr; prints "mr <max_mr> <made> <errno of the next one>". */
static int role_mr(void)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	int made = 0, err = 0;

	if (pd == NULL)
		return 2;
	while (made <= a.max_mr) {
		errno = 0;
		if (ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) == NULL) {
			err = errno;
			break;
		}
		made++;
	}
	printf("mr %d %d %d\n", a.max_mr, made, err);
	return 0;
}

/*
 * MRs of distinct ranges (each holds a descriptor: the memfd its pages move
 * onto) until one fails; prints "mrfd <made> <errno>", errno 0 when all did.
 */
static int role_mr_fds(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	uint8_t *m = mmap(NULL, FD_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int made = 0, err = 0;

	if (pd == NULL || m == MAP_FAILED)
		return 2;
	for (; made < FD_PAGES; made++) {
		errno = 0;
		if (ibv_reg_mr(pd, m + (size_t)made * 4096, 4096, IBV_ACCESS_LOCAL_WRITE) == NULL) {
			err = errno;
			break;
		}
	}
	printf("mrfd %d %d\n", made, err);
	return 0;
}

/* CQs up to max_cq, every other one on a completion channel; prints "cq <max_cq> <made>". */
static int role_cq(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_comp_channel *ch = c != NULL ? ibv_create_comp_channel(c) : NULL;
	int made = 0;

	if (ch == NULL)
		return 2;
	while (made < a.max_cq && ibv_create_cq(c, 1, NULL, made % 2 ? ch : NULL, 0) != NULL)
		made++;
	printf("cq %d %d\n", a.max_cq, made);
	return 0;
}

/* SRQs up to max_srq; prints "srqs <max_srq> <made>". */
static int role_srqs(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 1, .max_sge = 1}};
	int made = 0;

	if (pd == NULL)
		return 2;
	while (made < a.max_srq && ibv_create_srq(pd, &sa) != NULL)
		made++;
	printf("srqs %d %d\n", a.max_srq, made);
	return 0;
}

/* RC QPs up to max_qp on one CQ; prints "qp <max_qp> <made>". */
static int role_qp(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp **qps = calloc(4096, sizeof(*qps));
	int made = 0;

	if (pd == NULL || cq == NULL || qps == NULL || a.max_qp > 4096)
		return 2;
	while (made < a.max_qp && (qps[made] = ibv_create_qp(pd, &qa)) != NULL)
		made++;
	printf("qp %d %d\n", a.max_qp, made);
	/* The numbers go back to the device's table, which other programs share. */
	while (made > 0)
		ibv_destroy_qp(qps[--made]);
	free(qps);
	return 0;
}

/* Takes every descriptor left; returns the first one taken (release them with put_fds). */
static int take_fds(void)
{
	int first = dup(0), fd = first;

	while (fd >= 0)
		fd = dup(0);
	return first;
}

static void put_fds(int first)
{
	for (int fd = first; first >= 0 && fd < ROLE_NOFILE; fd++)
		close(fd);
}

/*
 * An SRQ (no CQ needed) asked for when no descriptor is left for the queue
 * memory; prints "srq <created> <errno>" for it, then "srq <created>" once
 * descriptors are back.
 */
static int role_srq(void)
{
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq;
	int first, err;

	if (pd == NULL)
		return 2;
	first = take_fds();
	errno = 0;
	srq = ibv_create_srq(pd, &sa);
	err = errno;
	put_fds(first);
	printf("srq %d %d\n", srq != NULL, srq != NULL ? 0 : err);
	printf("srq %d\n", ibv_create_srq(pd, &sa) != NULL);
	return 0;
}

/*
 * A QP created after descriptors ran out, which a peer process connects to
 * and writes into. Prints "qp <qpn> <addr> <rkey>", reads the peer's QPN,
 * says "up", then on "check" prints "bytes <0|1>" (1: the peer's write is there).
 */
static int role_reach(void)
{
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct ibv_device_attr a;
	struct ibv_context *c = role_open(&a);
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = pd != NULL ? ibv_reg_mr(pd, buf, sizeof(buf), VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp;
	char line[64];
	unsigned peer = 0;
	int first, ok = 1;

	if (cq == NULL || mr == NULL)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	first = take_fds();
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	if (qp == NULL)
		return 3;
	put_fds(first); /* connecting maps the peer's queue: that takes a descriptor for a moment */
	printf("qp %u %llu %u\n", qp->qp_num, (unsigned long long)(uintptr_t)buf, mr->rkey);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "%u", &peer) != 1 || vq_up(qp, peer, 12, 7) != 0)
		return 4;
	printf("up\n");
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "check", 5) != 0)
		return 5;
	for (int i = 0; i < 64; i++)
		ok = ok && buf[i] == 0x5a;
	printf("bytes %d\n", ok);
	return 0;
}

/* ---- cases --------------------------------------------------------------------------------------------------- */

/* Removes the shared tables and the sysfs tree of this run's private machine from /dev/shm. */
static void machine_tables_cb(void *arg)
{
	(void)arg;
	shm_machine_remove(machine);
}

/* Starts a role and returns its first line (NULL if none); on a private machine when asked. */
static const char *role_line(const char *role, int private_machine, struct th_proc **out)
{
	struct th_proc *p;

	if (private_machine) {
		setenv("SOFTDPU_MACHINE", machine, 1);
		th_defer(machine_tables_cb, NULL);
	}
	p = th_proc_start(NULL, role, NULL);
	if (private_machine)
		unsetenv("SOFTDPU_MACHINE");
	*out = p;
	return p != NULL ? th_proc_line(p) : NULL;
}

static void test_max_pd_reachable(void)
{
	struct th_proc *p;
	const char *l = role_line("pd", 1, &p);
	int max = 0, made = 0, err = 0;

	CHECK(l != NULL && sscanf(l, "pd %d %d %d", &max, &made, &err) == 3);
	CHECK(max == 16384);
	CHECK(made == max);
	CHECK(err == ENOMEM);
}

static void test_max_mr_reachable(void)
{
	struct th_proc *p;
	const char *l = role_line("mr", 1, &p);
	int max = 0, made = 0, err = 0;

	CHECK(l != NULL && sscanf(l, "mr %d %d %d", &max, &made, &err) == 3);
	CHECK(max == 16384);
	CHECK(made == max);
	CHECK(err == ENOMEM);
}

/* Each distinct range holds a descriptor: past RLIMIT_NOFILE, ibv_reg_mr fails (it used to succeed process-local). */
static void test_mr_without_descriptor_fails(void)
{
	struct th_proc *p;
	const char *l = role_line("mrfd", 1, &p);
	int made = -1, err = 0;

	CHECK(l != NULL && sscanf(l, "mrfd %d %d", &made, &err) == 2);
	CHECK(made > 0 && made < ROLE_NOFILE);
	CHECK(err == ENOMEM);
}

/* max_cq CQs, half of them on a channel, in a process of 64 descriptors (they took two each: 30 or so). */
static void test_max_cq_reachable(void)
{
	struct th_proc *p;
	const char *l = role_line("cq", 1, &p);
	int max = 0, made = 0;

	CHECK(l != NULL && sscanf(l, "cq %d %d", &max, &made) == 2);
	CHECK(max == 4096);
	CHECK(made == max);
}

static void test_max_srq_reachable(void)
{
	struct th_proc *p;
	const char *l = role_line("srqs", 1, &p);
	int max = 0, made = 0;

	CHECK(l != NULL && sscanf(l, "srqs %d %d", &max, &made) == 2);
	CHECK(max == 4096);
	CHECK(made == max);
}

static void test_max_qp_reachable(void)
{
	struct th_proc *p;
	const char *l = role_line("qp", 0, &p);
	int max = 0, made = 0;

	CHECK(l != NULL && sscanf(l, "qp %d %d", &max, &made) == 2);
	CHECK(max == 4096);
	CHECK(made == max);
}

/* No memory for a queue: the creation fails (it used to make a queue of that process only). */
static void test_queue_without_memory_fails(void)
{
	struct th_proc *p;
	const char *l = role_line("srq", 0, &p);
	int made = -1, err = 0;

	CHECK(l != NULL && sscanf(l, "srq %d %d", &made, &err) == 2);
	CHECK(made == 0);
	CHECK(err == ENOMEM);
	CHECK((l = th_proc_line(p)) != NULL && sscanf(l, "srq %d", &made) == 1);
	CHECK(made == 1);
}

/* A QP its process created with no descriptor left is reachable from a peer: an RDMA WRITE lands in it. */
static void test_qp_created_without_descriptor_is_reachable(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	static uint8_t src[64] __attribute__((aligned(64)));
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct th_proc *p;
	const char *l = role_line("reach", 0, &p);
	unsigned qpn = 0, rkey = 0;
	unsigned long long addr = 0;
	int ok = 0;

	CHECK(pd != NULL);
	CHECK(l != NULL && sscanf(l, "qp %u %llu %u", &qpn, &addr, &rkey) == 3);
	memset(src, 0x5a, sizeof(src));
	mr = vq_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	cq = vq_cq(c, 4);
	CHECK(mr != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL);
	CHECK_OK(th_proc_send(p, "%u", qp->qp_num));
	CHECK((l = th_proc_line(p)) != NULL && strcmp(l, "up") == 0);
	CHECK_OK(vq_up(qp, qpn, 12, 7));
	sge = (struct ibv_sge){.addr = (uintptr_t)src, .length = sizeof(src), .lkey = mr->lkey};
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	CHECK_OK(ibv_post_send(qp, &wr, &bad));
	CHECK(vq_poll1(cq, &wc) == 1);
	CHECK_ERR(wc.status, IBV_WC_SUCCESS);
	CHECK_OK(th_proc_send(p, "check"));
	CHECK((l = th_proc_line(p)) != NULL && sscanf(l, "bytes %d", &ok) == 1);
	CHECK(ok == 1);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} roles[] = {{"pd", role_pd}, {"mr", role_mr}, {"mrfd", role_mr_fds}, {"cq", role_cq},
		     {"qp", role_qp}, {"srqs", role_srqs}, {"srq", role_srq},
		     {"reach", role_reach}};

	if (argc > 1) {
		setvbuf(stdout, NULL, _IONBF, 0);
		for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
			if (strcmp(argv[1], roles[i].name) == 0)
				return roles[i].fn();
		return 2;
	}
	snprintf(machine, sizeof(machine), "10.251.%u.%u", ((unsigned)getpid() >> 8) % 250 + 1, (unsigned)getpid() % 250 + 1);
	RUN(test_max_pd_reachable);
	RUN(test_max_mr_reachable);
	RUN(test_mr_without_descriptor_fails);
	RUN(test_max_cq_reachable);
	RUN(test_max_srq_reachable);
	RUN(test_max_qp_reachable);
	RUN(test_queue_without_memory_fails);
	RUN(test_qp_created_without_descriptor_is_reachable);
	return th_summary("test_verbs_limits");
}
