/*
 * Device memory through the verbs API, as rdma-core v44 documents it
 * (ibv_alloc_dm(3), ibv_reg_dm_mr in verbs.h, mlx5dv_alloc_dm(3)) and its
 * mlx5 provider and the kernel enforce it: a BlueField-2's 256 KiB of MEMIC
 * (ibv_query_device_ex's max_dm_size), allocated in 4 KiB pages shared by
 * every process of the device; ibv_memcpy_to_dm / _from_dm in 4-byte words
 * within the allocation (EINVAL for a misaligned offset or length, EFAULT
 * beyond it); registrations zero-based, reachable by WRITE, READ, SEND,
 * receives and atomics of this and of another process; a free while a
 * registration holds the memory EBUSY; a full device ENOMEM until memory is
 * freed or its owner dies.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"
#include "shm_machine.h"

#define DM_MAX (256u * 1024)
#define DM_PAGE 4096u
#define LEN 8192

static void free_dm_cb(void *arg)
{
	ibv_free_dm(arg);
}

/* A dm of len bytes (log_align_req 0), freed when the case ends; NULL with errno on failure. */
static struct ibv_dm *dm_new(struct ibv_context *c, uint64_t len)
{
	struct ibv_alloc_dm_attr a = {.length = len};
	struct ibv_dm *dm = ibv_alloc_dm(c, &a);

	if (dm != NULL)
		th_defer(free_dm_cb, dm);
	return dm;
}

static void dm_drop(struct ibv_dm *dm)
{
	th_undefer(free_dm_cb, dm);
	CHECK_OK(ibv_free_dm(dm));
}

static struct ibv_mr *dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len)
{
	struct ibv_mr *mr = ibv_reg_dm_mr(pd, dm, off, len, IBV_ACCESS_ZERO_BASED | VQ_ACCESS_ALL);

	if (mr != NULL)
		th_defer(vf_dereg_cb, mr);
	return mr;
}

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Allocation: the size the device reports, the attributes the kernel and mlx5 refuse. */
static void test_alloc_limits(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex ax;
	struct ibv_alloc_dm_attr a;
	struct ibv_dm *dm;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK(ax.max_dm_size == DM_MAX);
	a = (struct ibv_alloc_dm_attr){.length = 64, .comp_mask = 1};
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == EINVAL);
	a = (struct ibv_alloc_dm_attr){.length = 0};
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == EINVAL);
	a = (struct ibv_alloc_dm_attr){.length = DM_MAX + 1};
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == EINVAL);
	/* Alignments up to a page (2^6 units of 64 bytes) are granted, larger ones refused. */
	a = (struct ibv_alloc_dm_attr){.length = 64, .log_align_req = 13};
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == EINVAL);
	a.log_align_req = 12;
	dm = ibv_alloc_dm(c, &a);
	CHECK(dm != NULL);
	th_defer(free_dm_cb, dm);
	CHECK(dm->context == c && dm->comp_mask == 0);
	dm_drop(dm);
	dm = dm_new(c, DM_MAX);
	CHECK(dm != NULL);
	dm_drop(dm);
}

/* mlx5dv_alloc_dm: MEMIC as ibv_alloc_dm; steering ICM the device has not; no MEMIC operation addresses. */
static void test_mlx5dv_alloc_dm(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_alloc_dm_attr a = {.length = 256};
	struct mlx5dv_alloc_dm_attr ma = {.type = MLX5DV_DM_TYPE_MEMIC};
	uint8_t in[16] = {0x5a, 0x5a, 0x5a, 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out[16];
	struct ibv_dm *dm;

	CHECK(c != NULL);
	dm = mlx5dv_alloc_dm(c, &a, &ma);
	CHECK(dm != NULL);
	th_defer(free_dm_cb, dm);
	CHECK_OK(ibv_memcpy_to_dm(dm, 240, in, sizeof(in)));
	CHECK_OK(ibv_memcpy_from_dm(out, dm, 240, sizeof(out)));
	CHECK(memcmp(in, out, sizeof(in)) == 0);
	/* mlx5dv_init_obj's view is the memory: plain stores and loads reach the same bytes. */
	struct mlx5dv_dm view = {.comp_mask = MLX5DV_DM_MASK_REMOTE_VA};
	struct mlx5dv_obj obj = {.dm = {.in = dm, .out = &view}};
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_DM));
	CHECK(view.buf != NULL && view.length == 256 && view.comp_mask == MLX5DV_DM_MASK_REMOTE_VA &&
	      view.remote_va == 0);
	CHECK(memcmp((uint8_t *)view.buf + 240, in, sizeof(in)) == 0);
	((volatile uint8_t *)view.buf)[0] = 0xc3;
	CHECK_OK(ibv_memcpy_from_dm(out, dm, 0, 4));
	CHECK(out[0] == 0xc3);
	/* Ops the device-memory capability page does not advertise (increment and test-and-set are 0 and 1). */
	errno = 0;
	CHECK(mlx5dv_dm_map_op_addr(dm, 2) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dm_map_op_addr(dm, 255) == NULL && errno == EOPNOTSUPP);
	ma.type = MLX5DV_DM_TYPE_STEERING_SW_ICM;
	errno = 0;
	CHECK(mlx5dv_alloc_dm(c, &a, &ma) == NULL && errno == EOPNOTSUPP);
	ma = (struct mlx5dv_alloc_dm_attr){.type = MLX5DV_DM_TYPE_MEMIC, .comp_mask = 1};
	errno = 0;
	CHECK(mlx5dv_alloc_dm(c, &a, &ma) == NULL && errno == EINVAL);
}

/* Copies in and out, byte for byte; misaligned ones EINVAL, ones past the end EFAULT (mlx5_access_dm). */
static void test_memcpy(void)
{
	static uint8_t in[LEN], out[LEN + 8];
	struct ibv_context *c = vf_open();
	struct ibv_dm *dm;

	CHECK(c != NULL);
	dm = dm_new(c, LEN - 12); /* not a whole page: the bounds are the length asked for */
	CHECK(dm != NULL);
	pattern(in, sizeof(in), 3);
	CHECK_OK(ibv_memcpy_to_dm(dm, 0, in, LEN - 12));
	memset(out, 0xee, sizeof(out));
	CHECK_OK(ibv_memcpy_from_dm(out, dm, 0, LEN - 12));
	CHECK(memcmp(in, out, LEN - 12) == 0 && out[LEN - 12] == 0xee);
	/* A window in the middle, from an unaligned host address. */
	CHECK_OK(ibv_memcpy_to_dm(dm, 4092, in + 1, 100));
	memset(out, 0, sizeof(out));
	CHECK_OK(ibv_memcpy_from_dm(out + 3, dm, 4088, 108));
	CHECK(memcmp(out + 3, in + 4088, 4) == 0 && memcmp(out + 7, in + 1, 100) == 0 &&
	      memcmp(out + 107, in + 4192, 4) == 0);
	CHECK(ibv_memcpy_to_dm(dm, 2, in, 8) == EINVAL);
	CHECK(ibv_memcpy_to_dm(dm, 4, in, 6) == EINVAL);
	CHECK(ibv_memcpy_from_dm(out, dm, 1, 4) == EINVAL);
	CHECK(ibv_memcpy_from_dm(out, dm, 0, 3) == EINVAL);
	CHECK(ibv_memcpy_to_dm(dm, LEN - 16, in, 8) == EFAULT);
	CHECK(ibv_memcpy_from_dm(out, dm, LEN - 8, 4) == EFAULT);
	CHECK(ibv_memcpy_from_dm(out, dm, UINT64_MAX - 3, 8) == EFAULT);
	CHECK_OK(ibv_memcpy_to_dm(dm, LEN - 12, in, 0));
	/* Nothing refused wrote anything. */
	CHECK_OK(ibv_memcpy_from_dm(out, dm, 0, LEN - 12));
	CHECK(memcmp(out, in, 4092) == 0 && memcmp(out + 4092, in + 1, 100) == 0 &&
	      memcmp(out + 4192, in + 4192, LEN - 12 - 4192) == 0);
}

/* ibv_reg_dm_mr: zero-based, MEMIC's rights, within the memory; the memory held while registered. */
static void test_reg_dm_mr(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	uint8_t buf[64];
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	CHECK(pd != NULL);
	dm = dm_new(c, LEN);
	CHECK(dm != NULL);
	errno = 0;
	CHECK(ibv_reg_dm_mr(pd, dm, 0, LEN, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_dm_mr(pd, dm, 0, LEN, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) ==
		      NULL &&
	      errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_dm_mr(pd, dm, 0, LEN, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_dm_mr(pd, dm, 0, LEN + 4, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE) == NULL &&
	      errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_dm_mr(pd, dm, 4, LEN, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
	/* No bytes at all is a registration too (the kernel's check is only the bounds). */
	mr = ibv_reg_dm_mr(pd, dm, LEN, 0, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK(mr->length == 0 && mr->addr == NULL);
	CHECK_OK(ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(pd, dm, 64, LEN - 64, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	th_defer(vf_dereg_cb, mr);
	CHECK(mr->addr == NULL && mr->length == LEN - 64 && mr->pd == pd && mr->lkey == mr->rkey);
	/* The kernel keeps memory a registration reaches; re-registering such an MR is refused. */
	CHECK(ibv_free_dm(dm) == EBUSY);
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, sizeof(buf), 0) != 0);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	th_undefer(vf_dereg_cb, mr);
	CHECK_OK(ibv_dereg_mr(mr));
	dm_drop(dm);
}

static int post1(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

/* One signalled work request of qp; its completion's status (-1: none came). */
static int run1(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr)
{
	struct ibv_wc wc;

	if (post1(qp, wr) != 0 || vq_poll1(cq, &wc) != 1)
		return -1;
	return (int)wc.status;
}

/* WRITE, READ, atomics and SEND of another QP into and out of device memory, by offsets into the MR. */
static void test_rdma_into_dm(void)
{
	static uint8_t a[LEN], b[LEN];
	struct vq_pair p;
	struct vq_pair_spec s = {.buf = {a, b}, .len = LEN, .fill = {0, 0}, .access = {VQ_ACCESS_ALL, VQ_ACCESS_ALL}, .type = IBV_QPT_RC};
	static uint8_t want[LEN], got[LEN];
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint64_t v;

	vq_pair_open(&p, &s);
	vq_pair_up(&p);
	dm = dm_new(p.c, LEN);
	CHECK(dm != NULL);
	mr = dm_mr(p.pd, dm, 0, LEN);
	CHECK(mr != NULL);
	memset(want, 0, sizeof(want));
	CHECK_OK(ibv_memcpy_to_dm(dm, 0, want, LEN));
	/* WRITE of a's bytes into the dm at offset 100 (remote addresses are offsets: zero-based). */
	pattern(a, LEN, 9);
	struct ibv_sge sg = {.addr = (uintptr_t)a, .length = 3000, .lkey = p.mr[0]->lkey};
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .wr.rdma = {.remote_addr = 100, .rkey = mr->rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	memcpy(want + 100, a, 3000);
	CHECK_OK(ibv_memcpy_from_dm(got, dm, 0, LEN));
	CHECK(memcmp(got, want, LEN) == 0);
	/* READ of the dm into b. */
	sg = (struct ibv_sge){.addr = (uintptr_t)b, .length = LEN, .lkey = p.mr[0]->lkey};
	sg.lkey = p.mr[1]->lkey;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = 0;
	CHECK(run1(p.qp[1], p.cq[1], &wr) == IBV_WC_SUCCESS);
	CHECK(memcmp(b, want, LEN) == 0);
	/* Atomics on a word of the dm. */
	v = 40;
	CHECK_OK(ibv_memcpy_to_dm(dm, 4096, &v, 8));
	sg = (struct ibv_sge){.addr = (uintptr_t)b, .length = 8, .lkey = p.mr[1]->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .wr.atomic = {.remote_addr = 4096, .compare_add = 2, .rkey = mr->rkey}};
	CHECK(run1(p.qp[1], p.cq[1], &wr) == IBV_WC_SUCCESS);
	memcpy(&v, b, 8);
	CHECK(v == 40);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 0x1122334455667788ull;
	CHECK(run1(p.qp[1], p.cq[1], &wr) == IBV_WC_SUCCESS);
	memcpy(&v, b, 8);
	CHECK(v == 42);
	CHECK_OK(ibv_memcpy_from_dm(&v, dm, 4096, 8));
	CHECK(v == 0x1122334455667788ull);
	/* SEND gathered from the dm (its lkey) into a receive scattered into the dm at 6000. */
	struct ibv_sge rs = {.addr = 6000, .length = 1000, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 7, .sg_list = &rs, .num_sge = 1}, *rbad;
	CHECK_OK(ibv_post_recv(p.qp[1], &rw, &rbad));
	sg = (struct ibv_sge){.addr = 200, .length = 1000, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 8, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 && wc.byte_len == 1000);
	CHECK_OK(ibv_memcpy_from_dm(got, dm, 6000, 1000));
	CHECK(memcmp(got, want + 200, 1000) == 0);
	/* Past the registration: the responder's remote access error, nothing written. */
	sg = (struct ibv_sge){.addr = (uintptr_t)a, .length = 8, .lkey = p.mr[0]->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = {.remote_addr = LEN - 4, .rkey = mr->rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_REM_ACCESS_ERR);
}

/* Deregistered, then freed: the old key reaches nothing (destroy is a fence). */
static void test_free_fence(void)
{
	static uint8_t a[LEN], b[LEN];
	struct vq_pair p;
	struct vq_pair_spec s = {.buf = {a, b}, .len = LEN, .fill = {1, 2}, .access = {VQ_ACCESS_ALL, VQ_ACCESS_ALL}, .type = IBV_QPT_RC};
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	uint32_t rkey;

	vq_pair_open(&p, &s);
	vq_pair_up(&p);
	dm = dm_new(p.c, LEN);
	CHECK(dm != NULL);
	mr = ibv_reg_dm_mr(p.pd, dm, 0, LEN, IBV_ACCESS_ZERO_BASED | VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	rkey = mr->rkey;
	CHECK_OK(ibv_dereg_mr(mr));
	dm_drop(dm);
	struct ibv_sge sg = {.addr = (uintptr_t)a, .length = 64, .lkey = p.mr[0]->lkey};
	struct ibv_send_wr wr = {.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .wr.rdma = {.remote_addr = 0, .rkey = rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_REM_ACCESS_ERR);
}

/* The whole device is one pool of pages: full is ENOMEM until something is freed. */
static void test_exhaustion(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_alloc_dm_attr a = {.length = 4};
	struct ibv_dm *dm[DM_MAX / DM_PAGE], *big;

	CHECK(c != NULL);
	big = dm_new(c, DM_MAX);
	CHECK(big != NULL);
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == ENOMEM);
	dm_drop(big);
	/* Each allocation takes whole pages: 64 of 4 bytes fill it. */
	for (unsigned i = 0; i < DM_MAX / DM_PAGE; i++) {
		dm[i] = dm_new(c, 4);
		CHECK(dm[i] != NULL);
	}
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == ENOMEM);
	dm_drop(dm[17]);
	dm[17] = dm_new(c, DM_PAGE);
	CHECK(dm[17] != NULL);
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == ENOMEM);
	for (unsigned i = 0; i < DM_MAX / DM_PAGE; i++)
		dm_drop(dm[i]);
	big = dm_new(c, DM_MAX);
	CHECK(big != NULL);
}

/* ------------------------------------------------------------------ another process */

static pid_t kid = -1;
static int sock = -1;

static void reap_cb(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
	if (sock >= 0)
		close(sock);
	sock = -1;
}

struct hello {
	uint32_t qpn, rkey;
};

static int xfer(int fd, const void *out, size_t olen, void *in, size_t ilen)
{
	if (olen != 0 && write(fd, out, olen) != (ssize_t)olen)
		return -1;
	return ilen == 0 || read(fd, in, ilen) == (ssize_t)ilen ? 0 : -1;
}

/* The child: a dm of LEN bytes holding pattern 5, registered; then checks what the parent wrote. */
static int owner(int fd)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = pd != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = cq != NULL ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_alloc_dm_attr da = {.length = LEN};
	struct ibv_dm *dm = qp != NULL ? ibv_alloc_dm(c, &da) : NULL;
	static uint8_t want[LEN], got[LEN];
	struct ibv_mr *mr;
	struct hello me, peer;
	uint64_t v;
	char ok;

	if (dm == NULL)
		return 2;
	pattern(want, LEN, 5);
	if (ibv_memcpy_to_dm(dm, 0, want, LEN) != 0)
		return 3;
	mr = ibv_reg_dm_mr(pd, dm, 0, LEN, IBV_ACCESS_ZERO_BASED | VQ_ACCESS_ALL);
	if (mr == NULL)
		return 4;
	me = (struct hello){.qpn = qp->qp_num, .rkey = mr->rkey};
	if (xfer(fd, &me, sizeof(me), &peer, sizeof(peer)) != 0 || vq_up(qp, peer.qpn, 0, 0) != 0)
		return 5;
	if (xfer(fd, "u", 1, &ok, 1) != 0) /* up; the parent has read, written and added */
		return 6;
	pattern(want + 1024, 2048, 77);
	v = 0x0102030405060708ull + 5;
	memcpy(want + 512, &v, 8);
	if (ibv_memcpy_from_dm(got, dm, 0, LEN) != 0)
		return 7;
	ok = memcmp(got, want, LEN) == 0 ? 'y' : 'n';
	if (xfer(fd, &ok, 1, &ok, 1) != 0)
		return 8;
	ibv_dereg_mr(mr);
	ibv_free_dm(dm);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}

/* Another process's dm MR by its rkey: the same bytes, read, written and added to from here. */
static void test_other_process(void)
{
	static uint8_t a[LEN], b[LEN];
	struct vq_pair p;
	struct vq_pair_spec s = {.buf = {a, b}, .len = LEN, .fill = {0, 0}, .access = {VQ_ACCESS_ALL, VQ_ACCESS_ALL}, .type = IBV_QPT_RC};
	static uint8_t want[LEN];
	struct hello me, peer;
	int sv[2], st = 0;
	uint64_t v;
	char ok;

	vq_pair_open(&p, &s);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		close(sv[0]);
		_exit(owner(sv[1]));
	}
	close(sv[1]);
	sock = sv[0];
	th_defer(reap_cb, NULL);
	me = (struct hello){.qpn = p.qp[0]->qp_num};
	CHECK_OK(xfer(sock, &me, sizeof(me), &peer, sizeof(peer)));
	CHECK_OK(vq_up(p.qp[0], peer.qpn, 0, 0));
	CHECK_OK(xfer(sock, NULL, 0, &ok, 1));
	/* READ the whole dm: the child's bytes. */
	struct ibv_sge sg = {.addr = (uintptr_t)a, .length = LEN, .lkey = p.mr[0]->lkey};
	struct ibv_send_wr wr = {.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				 .wr.rdma = {.remote_addr = 0, .rkey = peer.rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	pattern(want, LEN, 5);
	CHECK(memcmp(a, want, LEN) == 0);
	/* WRITE 2 KiB at 1024, set a word at 512 and add to it. */
	pattern(b, 2048, 77);
	sg = (struct ibv_sge){.addr = (uintptr_t)b, .length = 2048, .lkey = p.mr[1]->lkey};
	wr = (struct ibv_send_wr){.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = {.remote_addr = 1024, .rkey = peer.rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	v = 0x0102030405060708ull;
	memcpy(b, &v, 8);
	sg = (struct ibv_sge){.addr = (uintptr_t)b, .length = 8, .lkey = p.mr[1]->lkey};
	wr.wr.rdma.remote_addr = 512;
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	sg.addr = (uintptr_t)a;
	sg.lkey = p.mr[0]->lkey;
	wr = (struct ibv_send_wr){.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .wr.atomic = {.remote_addr = 512, .compare_add = 5, .rkey = peer.rkey}};
	CHECK(run1(p.qp[0], p.cq[0], &wr) == IBV_WC_SUCCESS);
	memcpy(&v, a, 8);
	CHECK(v == 0x0102030405060708ull);
	/* The child reads its dm and compares. */
	CHECK_OK(xfer(sock, "c", 1, &ok, 1));
	CHECK(ok == 'y');
	CHECK_OK(xfer(sock, "q", 1, NULL, 0));
	CHECK(waitpid(kid, &st, 0) == kid);
	kid = -1;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The child holds the whole device, says so, then waits to be killed or told to free. */
static int hog(int fd)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_alloc_dm_attr da = {.length = DM_MAX};
	struct ibv_dm *dm = c != NULL ? ibv_alloc_dm(c, &da) : NULL;
	char cmd;

	if (dm == NULL)
		return 2;
	if (xfer(fd, "h", 1, &cmd, 1) != 0)
		return 3;
	if (ibv_free_dm(dm) != 0)
		return 4;
	return xfer(fd, "f", 1, &cmd, 1) == 0 ? 0 : 5;
}

static void hog_start(void)
{
	int sv[2];
	char ok = 0;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		close(sv[0]);
		_exit(hog(sv[1]));
	}
	close(sv[1]);
	sock = sv[0];
	th_defer(reap_cb, NULL);
	CHECK_OK(xfer(sock, NULL, 0, &ok, 1));
	CHECK(ok == 'h');
}

/* Capacity is the device's: another process's memory counts; its free, and its death, give it back. */
static void test_capacity_device_wide(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_alloc_dm_attr a = {.length = 4};
	struct ibv_dm *dm;
	char ok = 0;
	int st = 0;

	CHECK(c != NULL);
	hog_start();
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == ENOMEM);
	CHECK_OK(xfer(sock, "f", 1, &ok, 1));
	CHECK(ok == 'f');
	dm = dm_new(c, DM_MAX);
	CHECK(dm != NULL);
	dm_drop(dm);
	CHECK_OK(xfer(sock, "q", 1, NULL, 0));
	CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kid = -1;
	th_undefer(reap_cb, NULL);
	reap_cb(NULL);
	/* A holder killed without freeing: its pages come back to the next allocation that finds the device full. */
	hog_start();
	errno = 0;
	CHECK(ibv_alloc_dm(c, &a) == NULL && errno == ENOMEM);
	kill(kid, SIGKILL);
	CHECK(waitpid(kid, &st, 0) == kid && WIFSIGNALED(st));
	kid = -1;
	dm = dm_new(c, DM_MAX);
	CHECK(dm != NULL);
}

static char machine[32];

/* The machine's shared tables and sysfs tree in /dev/shm, named with its tag, go with the program. */
static void machine_tables_cb(void *arg)
{
	(void)arg;
	shm_machine_remove(machine);
}

static void close_cb(void *arg)
{
	ibv_close_device(arg);
}

/* Another context of this process takes the same memory by the dm's handle (ibv_import_dm(3)). */
static void test_import_dm(void)
{
	static uint8_t in[LEN], out[LEN];
	struct ibv_context *c = vf_open(), *c2;
	struct ibv_dm *dm = c != NULL ? dm_new(c, LEN) : NULL, *im;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;

	CHECK(dm != NULL);
	c2 = ibv_import_device(dup(c->cmd_fd));
	CHECK(c2 != NULL);
	th_defer(close_cb, c2);
	errno = 0;
	CHECK(ibv_import_dm(c2, dm->handle + 12345) == NULL && errno == EINVAL);
	im = ibv_import_dm(c2, dm->handle);
	CHECK(im != NULL && im->handle == dm->handle && im->context == c2);
	pattern(in, sizeof(in), 9);
	CHECK_OK(ibv_memcpy_to_dm(dm, 0, in, LEN));
	CHECK_OK(ibv_memcpy_from_dm(out, im, 0, LEN));
	CHECK(memcmp(in, out, LEN) == 0);
	/* And the other way, through a registration of the import. */
	pd2 = ibv_alloc_pd(c2);
	CHECK(pd2 != NULL);
	mr = ibv_reg_dm_mr(pd2, im, 0, LEN, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	/* The import holds the allocation; the import is held by its registration. */
	CHECK_ERR(ibv_free_dm(dm), EBUSY);
	CHECK_ERR(ibv_free_dm(im), EBUSY);
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK_OK(ibv_dealloc_pd(pd2));
	ibv_unimport_dm(im);
	dm_drop(dm);
}

int main(void)
{
	unsigned pid = (unsigned)getpid();

	/*
	 * The device's memory is one pool for all its users: a machine of this
	 * program's own (SOFTDPU_MACHINE, its children inherit it) keeps other
	 * programs using device memory at the same time (rdma-core's suite) out
	 * of the totals these cases count.
	 */
	snprintf(machine, sizeof(machine), "10.%u.%u.%u", 100 + (pid >> 16) % 100, (pid >> 8) & 0xff, pid % 254 + 1);
	setenv("SOFTDPU_MACHINE", machine, 1);
	th_defer(machine_tables_cb, NULL);
	RUN(test_alloc_limits);
	RUN(test_mlx5dv_alloc_dm);
	RUN(test_memcpy);
	RUN(test_reg_dm_mr);
	RUN(test_rdma_into_dm);
	RUN(test_free_fence);
	RUN(test_exhaustion);
	RUN(test_other_process);
	RUN(test_capacity_device_wide);
	RUN(test_import_dm);
	return th_summary("test_verbs_dm");
}
