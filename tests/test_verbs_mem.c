/*
 * libibverbs.so.1 and libmlx5.so.1: protection domains, memory regions and
 * their access rules, completion channels, the async event descriptor, and
 * the mlx5dv entries that need no queue (query, PD view, devx UAR and umem).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"

static char buf[8192] __attribute__((aligned(4096)));

static void test_pd(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *a, *b;

	CHECK(c != NULL);
	a = ibv_alloc_pd(c);
	b = ibv_alloc_pd(c);
	CHECK(a != NULL && b != NULL);
	CHECK(a->context == c && b->context == c);
	CHECK(a->handle != b->handle);
	CHECK_OK(ibv_dealloc_pd(a));
	CHECK_OK(ibv_dealloc_pd(b));
	CHECK(ibv_alloc_pd(NULL) == NULL && errno == EINVAL);
	CHECK(ibv_dealloc_pd(NULL) == EINVAL);
}

static void test_mr(void)
{
	struct ibv_context *c = vf_open();
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *mr, *mr2;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), acc);
	CHECK(mr != NULL);
	th_defer(vf_dereg_cb, mr);
	CHECK(mr->lkey == mr->rkey && mr->lkey != 0);
	CHECK(mr->addr == buf && mr->length == sizeof(buf));
	CHECK(mr->pd == pd && mr->context == c);
	/* A second registration of the same memory is another key. */
	mr2 = ibv_reg_mr_iova(pd, buf, 4096, 0x100000, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr2 != NULL);
	CHECK(mr2->lkey != mr->lkey);
	CHECK_OK(ibv_dereg_mr(mr2));
	/* Optional-range bits are hints (they take the reg_mr_iova2 path of the inline). */
	mr2 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	CHECK(mr2 != NULL);
	CHECK_OK(ibv_dereg_mr(mr2));
	mr2 = ibv_reg_mr_iova2(pd, buf, 64, 0, IBV_ACCESS_REMOTE_READ);
	CHECK(mr2 != NULL);
	CHECK_OK(ibv_dereg_mr(mr2));
}

static void check_refused(struct ibv_pd *pd, void *addr, size_t len, unsigned int acc, int err)
{
	errno = 0;
	CHECK(ibv_reg_mr_iova2(pd, addr, len, (uintptr_t)addr, acc) == NULL);
	CHECK(errno == err);
}

static void unmap_page2(void *p)
{
	munmap(p, 2 * 4096);
}

static pid_t fork_kid;

static void kill_kid_cb(void *arg)
{
	(void)arg;
	if (fork_kid > 0) {
		kill(fork_kid, SIGKILL);
		waitpid(fork_kid, NULL, 0);
		fork_kid = 0;
	}
}

/*
 * fork after registration: the child's copy of registered memory is its own,
 * as copy-on-write gives it on a card (rdma-core, IBV_FORK_UNNEEDED): its
 * writes do not reach the parent, nor the parent's later writes the child.
 */
static void test_fork_keeps_memory_private(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int go[2], done[2], st = 0;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	char x = 0;

	CHECK(c != NULL && m != MAP_FAILED);
	th_defer(unmap_page2, m);
	memset(m, 'A', 2 * 4096);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, m, 2 * 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL);
	th_defer(vf_dereg_cb, mr);
	CHECK(pipe(go) == 0 && pipe(done) == 0);
	fork_kid = fork();
	CHECK(fork_kid >= 0);
	if (fork_kid == 0) {
		int ok = m[0] == 'A' && m[2 * 4096 - 1] == 'A';

		memset(m, 'B', 2 * 4096);
		ok = ok && write(done[1], "d", 1) == 1;
		/* The parent writes 'C' now; this copy must not see it. */
		ok = ok && read(go[0], &x, 1) == 1 && m[0] == 'B' && m[4096] == 'B';
		_exit(ok ? 0 : 1);
	}
	th_defer(kill_kid_cb, NULL);
	CHECK(read(done[0], &x, 1) == 1);
	CHECK(m[0] == 'A' && m[2 * 4096 - 1] == 'A');
	memset(m, 'C', 2 * 4096);
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(waitpid(fork_kid, &st, 0) == fork_kid);
	fork_kid = 0;
	for (int i = 0; i < 2; i++) {
		close(go[i]);
		close(done[i]);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(m[0] == 'C' && m[4096] == 'C');
}

/*
 * The same after deregistration when the program has since unmapped part of
 * the range (freed memory, a trimmed heap): the part it still maps is its
 * private memory again as far as a fork is concerned. (It used to stay
 * shared with the child, whose writes then landed in the parent's heap.)
 */
static void test_fork_after_partial_unmap(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int st = 0;

	CHECK(c != NULL && m != MAP_FAILED);
	memset(m, 'A', 4 * 4096);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, m, 4 * 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(munmap(m + 2 * 4096, 2 * 4096) == 0);
	th_defer(unmap_page2, m);
	fork_kid = fork();
	CHECK(fork_kid >= 0);
	if (fork_kid == 0) {
		memset(m, 'B', 2 * 4096);
		_exit(0);
	}
	th_defer(kill_kid_cb, NULL);
	CHECK(waitpid(fork_kid, &st, 0) == fork_kid);
	fork_kid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(m[0] == 'A' && m[2 * 4096 - 1] == 'A');
}

static void test_mr_refused(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	/* Remote write or atomic needs local write, as the kernel requires. */
	check_refused(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE, EINVAL);
	check_refused(pd, buf, 64, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ, EINVAL);
	check_refused(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | (1u << 12), EINVAL);	/* unknown flag */
	check_refused(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED, EINVAL);
	/* The whole address space only with on-demand paging (implicit ODP: test_verbs_odp). */
	check_refused(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	check_refused(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	check_refused(pd, NULL, 64, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	check_refused(NULL, buf, 64, IBV_ACCESS_LOCAL_WRITE, EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
	/* Nothing registered by the refusals: the domain is free to go. */
	CHECK_OK(ibv_dealloc_pd(pd));
	th_undefer(vf_dealloc_pd_cb, pd);
	CHECK(ibv_dereg_mr(NULL) == EINVAL);
}

static void test_pd_busy(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_mr *mr;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = ibv_alloc_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, buf, 128, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	/* Re-registered to local reads only, it still holds the domain (test_verbs_rereg has the rest). */
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0) == 0);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK_OK(ibv_dealloc_pd(pd));
}

static void test_comp_channel(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_comp_channel *ch;
	struct pollfd p;

	CHECK(c != NULL);
	ch = ibv_create_comp_channel(c);
	CHECK(ch != NULL);
	CHECK(ch->context == c && ch->refcnt == 0);
	CHECK(fcntl(ch->fd, F_GETFD) >= 0);
	p = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0);
	/* A CQ on the channel (the CQ code counts them in refcnt) keeps it. */
	ch->refcnt = 1;
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY);
	ch->refcnt = 0;
	CHECK_OK(ibv_destroy_comp_channel(ch));
	CHECK(ibv_create_comp_channel(NULL) == NULL && errno == EINVAL);
	CHECK(ibv_destroy_comp_channel(NULL) == EINVAL);
}

static void test_async_fd(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_async_event ev;
	struct pollfd p;
	int fl;

	CHECK(c != NULL);
	p = (struct pollfd){.fd = c->async_fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0);
	/* Non-blocking as the program asks with fcntl: nothing queued is EAGAIN. */
	fl = fcntl(c->async_fd, F_GETFL);
	CHECK(fl >= 0);
	CHECK(fcntl(c->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_async_event(c, &ev) == -1 && errno == EAGAIN);
	CHECK(ibv_get_async_event(NULL, &ev) == -1 && errno == EINVAL);
}

static void test_dv_query(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context dv;

	CHECK(c != NULL);
	CHECK(mlx5dv_is_supported(c->device));
	memset(&dv, 0xa5, sizeof(dv));
	dv.comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK |
		       MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS;
	CHECK_OK(mlx5dv_query_device(c, &dv));
	CHECK(dv.version == 0);
	/* A BlueField-2's CQE flags: 128-byte CQEs with compression and padding (test_verbs_dvcq). */
	CHECK(dv.flags == (MLX5DV_CONTEXT_FLAGS_CQE_V1 | MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP |
			   MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD));
	/* Only what was asked and can be told is reported back. */
	CHECK(dv.comp_mask == (MLX5DV_CONTEXT_MASK_CQE_COMPRESION | MLX5DV_CONTEXT_MASK_NUM_LAG_PORTS));
	CHECK(dv.cqe_comp_caps.max_num == 64 && dv.num_lag_ports == 1);
	/* Fields not asked for are untouched. */
	CHECK(dv.tunnel_offloads_caps == 0xa5a5a5a5);
	dv.comp_mask = 0;
	CHECK_OK(mlx5dv_query_device(c, &dv));
	CHECK(dv.comp_mask == 0);
	CHECK(mlx5dv_query_device(NULL, &dv) == EOPNOTSUPP);
}

static void test_dv_init_obj(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_obj obj;
	struct mlx5dv_pd dpd = {.pdn = 0xdead};
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	memset(&obj, 0, sizeof(obj));
	obj.pd.in = pd;
	obj.pd.out = &dpd;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD));
	CHECK(dpd.pdn == pd->handle);
	/* Objects it has no view of (WQs): nothing is filled. */
	dpd.pdn = 0xdead;
	CHECK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD | MLX5DV_OBJ_RWQ) == EOPNOTSUPP);
	CHECK(dpd.pdn == 0xdead);
	CHECK(mlx5dv_init_obj(&obj, 1u << 20) == EINVAL);
}

static void test_devx_uar(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_devx_uar *u1, *u2;
	long page = sysconf(_SC_PAGESIZE);

	CHECK(c != NULL);
	u1 = mlx5dv_devx_alloc_uar(c, MLX5DV_UAR_ALLOC_TYPE_BF);
	u2 = mlx5dv_devx_alloc_uar(c, MLX5DV_UAR_ALLOC_TYPE_NC);
	CHECK(u1 != NULL && u2 != NULL);
	CHECK(((uintptr_t)u1->base_addr & (uintptr_t)(page - 1)) == 0);
	CHECK((char *)u1->reg_addr == (char *)u1->base_addr + 0x800);
	CHECK(u2->page_id == u1->page_id + 1);
	CHECK(u2->mmap_off == (off_t)u2->page_id * page);
	/* The program may write the whole page (doorbells). */
	memset(u1->base_addr, 0x11, (size_t)page);
	*(volatile uint64_t *)u1->reg_addr = 0x0123456789abcdefull;
	mlx5dv_devx_free_uar(u1);
	mlx5dv_devx_free_uar(u2);
	errno = 0;
	CHECK(mlx5dv_devx_alloc_uar(c, 7) == NULL && errno == EINVAL);
	CHECK(mlx5dv_devx_alloc_uar(NULL, 0) == NULL && errno == EINVAL);
}

static void test_devx_umem(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_devx_umem *a, *b;
	struct mlx5dv_devx_umem_in in = {.addr = buf, .size = 4096, .access = IBV_ACCESS_LOCAL_WRITE,
					 .pgsz_bitmap = 4096};

	CHECK(c != NULL);
	a = mlx5dv_devx_umem_reg(c, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	b = mlx5dv_devx_umem_reg_ex(c, &in);
	CHECK(a != NULL && b != NULL);
	CHECK(a->umem_id != 0 && b->umem_id != 0 && a->umem_id != b->umem_id);
	CHECK_OK(mlx5dv_devx_umem_dereg(a));
	CHECK_OK(mlx5dv_devx_umem_dereg(b));
	errno = 0;
	CHECK(mlx5dv_devx_umem_reg(c, buf, 0, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_umem_reg(c, NULL, 64, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_umem_reg(c, buf, 64, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_umem_reg(c, buf, 64, 1u << 9) == NULL && errno == EINVAL);
	in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
	errno = 0;
	CHECK(mlx5dv_devx_umem_reg_ex(c, &in) == NULL && errno == EOPNOTSUPP);
	CHECK(mlx5dv_devx_umem_dereg(NULL) == EINVAL);
}

static void test_dv_open_and_unsupported(void)
{
	struct ibv_device **l;
	struct ibv_context *c;
	struct mlx5dv_context_attr attr = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	uint32_t in[4] = {0}, out[4];
	int n;

	l = vf_list(&n);
	CHECK(l != NULL && n > 0);
	c = mlx5dv_open_device(l[0], &attr);
	CHECK(c != NULL);
	th_defer(vf_close_cb, c);
	attr.flags = 1u << 5;
	errno = 0;
	CHECK(mlx5dv_open_device(l[0], &attr) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), out, sizeof(out)) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	/* A domain type past FDB (the card's others) is not supported; NIC_RX/TX and FDB are (test_verbs_dr). */
	CHECK(mlx5dv_dr_domain_create(c, (enum mlx5dv_dr_domain_type)3) == NULL && errno == EOPNOTSUPP);
	/* Opcode 0 is none of the kernel's general commands: refused as the kernel refuses it. */
	CHECK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out)) == EINVAL);
}

int main(void)
{
	RUN(test_pd);
	RUN(test_mr);
	RUN(test_mr_refused);
	RUN(test_fork_keeps_memory_private);
	RUN(test_fork_after_partial_unmap);
	RUN(test_pd_busy);
	RUN(test_comp_channel);
	RUN(test_async_fd);
	RUN(test_dv_query);
	RUN(test_dv_init_obj);
	RUN(test_devx_uar);
	RUN(test_devx_umem);
	RUN(test_dv_open_and_unsupported);
	return th_summary("test_verbs_mem");
}
