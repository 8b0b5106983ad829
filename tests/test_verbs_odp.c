/*
 * On-demand paging as ibv_query_device_ex(3), ibv_reg_mr(3) and
 * ibv_advise_mr(3) describe it: the capabilities a ConnectX-6 Dx reports
 * (explicit and implicit ODP; no UC here), MRs registered with
 * IBV_ACCESS_ON_DEMAND taking every RC operation, the prefetch advice with
 * the kernel's refusals, and implicit ODP: ibv_reg_mr(pd, NULL, SIZE_MAX,
 * IBV_ACCESS_ON_DEMAND | ...) gives one key over the whole address space,
 * and an access through it to memory not mapped with the rights it needs
 * fails as the card's failed page fault does (the requester's
 * IBV_WC_LOC_PROT_ERR or IBV_WC_REM_ACCESS_ERR, the QP to ERR), never with
 * a fault of the process.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define OD_LEN 8192
#define OD_ACCESS (VQ_ACCESS_ALL | IBV_ACCESS_ON_DEMAND)

static uint8_t od_mem[2][OD_LEN] __attribute__((aligned(4096)));

static void test_odp_caps(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex a;

	CHECK(c != NULL);
	memset(&a, 0xa5, sizeof(a));
	CHECK_OK(ibv_query_device_ex(c, NULL, &a));
	CHECK(a.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT));
	CHECK(a.odp_caps.per_transport_caps.rc_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	       IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV));
	CHECK(a.odp_caps.per_transport_caps.uc_odp_caps == 0);
	CHECK(a.odp_caps.per_transport_caps.ud_odp_caps ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV));
	/* XRC requests take RC's paths. */
	CHECK(a.xrc_odp_caps == a.odp_caps.per_transport_caps.rc_odp_caps);
}

static void od_pair(struct vq_pair *p)
{
	const struct vq_pair_spec s = { .buf = { od_mem[0], od_mem[1] }, .len = OD_LEN, .fill = { 0x21, 0x43 },
					.access = { OD_ACCESS, OD_ACCESS }, .type = IBV_QPT_RC };

	vq_pair_open(p, &s);
	vq_pair_up(p);
}

/* One signalled WR of qp 0 (its local side in buffer 0); the status of its completion. */
static int od_post(struct vq_pair *p, struct ibv_send_wr *wr, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p->buf[0] + off, .length = len, .lkey = p->mr[0]->lkey };
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;

	wr->sg_list = &sg;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p->qp[0], wr, &bad) != 0 || vq_poll1(p->cq[0], &wc) != 1)
		return -1;
	return (int)wc.status;
}

static void test_odp_traffic(void)
{
	struct ibv_send_wr wr;
	struct vq_pair p;
	uint64_t old;

	od_pair(&p);
	/* WRITE then READ back, each through ODP keys on both sides. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 1000;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(od_post(&p, &wr, 0, 3000) == IBV_WC_SUCCESS);
	CHECK(memcmp(p.buf[1] + 1000, p.buf[0], 3000) == 0 && p.buf[1][999] == 0x43 && p.buf[1][4000] == 0x43);
	memset(p.buf[1] + 5000, 0x65, 100);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1] + 5000;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(od_post(&p, &wr, 4096, 100) == IBV_WC_SUCCESS);
	CHECK(p.buf[0][4096] == 0x65 && p.buf[0][4195] == 0x65 && p.buf[0][4196] == 0x21);
	/* A fetch-and-add on an ODP key. */
	memset(p.buf[1] + 64, 0, 8);
	p.buf[1][64] = 5;
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	wr.wr.atomic.remote_addr = (uintptr_t)p.buf[1] + 64;
	wr.wr.atomic.rkey = p.mr[1]->rkey;
	wr.wr.atomic.compare_add = 3;
	CHECK(od_post(&p, &wr, 2048, 8) == IBV_WC_SUCCESS);
	memcpy(&old, p.buf[0] + 2048, 8);
	CHECK(old == 5 && p.buf[1][64] == 8);
}

static void test_advise_mr(void)
{
	struct vq_pair p;
	struct ibv_sge sg[2];
	struct ibv_mr *ro;
	struct ibv_pd *other;

	od_pair(&p);
	sg[0] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[0], .length = OD_LEN, .lkey = p.mr[0]->lkey };
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[1] + 100, .length = 100, .lkey = p.mr[1]->lkey };
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2));
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, sg, 2));
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, sg, 1));
	/* The kernel's refusals. */
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1u << 5, sg, 1) == EINVAL);
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 0) == EINVAL);
	CHECK(ibv_advise_mr(p.pd, (enum ibv_advise_mr_advice)7, 0, sg, 1) == EOPNOTSUPP);
	sg[1].length = OD_LEN; /* beyond its MR */
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2) == EFAULT);
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)p.buf[1], .length = 8, .lkey = p.mr[1]->lkey ^ 0x100 };
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 2) == EFAULT);
	/* A read-only key takes a read advice, not a write one. */
	ro = vq_mr(p.pd, od_mem[1], 64, IBV_ACCESS_ON_DEMAND);
	CHECK(ro != NULL);
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)od_mem[1], .length = 64, .lkey = ro->lkey };
	CHECK_OK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg[1], 1));
	CHECK(ibv_advise_mr(p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sg[1], 1) == EFAULT);
	/* Another domain's key. */
	other = ibv_alloc_pd(p.c);
	CHECK(other != NULL);
	CHECK(ibv_advise_mr(other, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, sg, 1) == EFAULT);
	CHECK_OK(ibv_dealloc_pd(other));
}

/* The implicit key of pd with OD_ACCESS, deregistered when the case ends. */
static void od_dereg_cb(void *mr)
{
	CHECK_OK(ibv_dereg_mr(mr));
}

static struct ibv_mr *od_implicit(struct ibv_pd *pd)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, NULL, SIZE_MAX, OD_ACCESS);

	if (mr != NULL)
		th_defer(od_dereg_cb, mr);
	return mr;
}

static void od_unmap_cb(void *p)
{
	munmap(p, 3 * (size_t)sysconf(_SC_PAGESIZE));
}

/*
 * Three pages of their own, none registered: the first writable, the
 * second inaccessible (PROT_NONE: a guard page, which also keeps later
 * mappings from landing there), the third read-only with 0x5a in it.
 */
static uint8_t *od_pages(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	th_defer(od_unmap_cb, m);
	memset(m, 0x11, pg);
	memset(m + 2 * pg, 0x5a, pg);
	if (mprotect(m + pg, pg, PROT_NONE) != 0 || mprotect(m + 2 * pg, pg, PROT_READ) != 0)
		return NULL;
	return m;
}

static enum ibv_qp_state od_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) != 0)
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* One signalled WR of qp 0 with one local entry (addr, len, lkey); the status of its completion, -1 if none. */
static int od_post_at(struct vq_pair *p, struct ibv_send_wr *wr, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sg = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;

	wr->sg_list = &sg;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(p->qp[0], wr, &bad) != 0 || vq_poll1(p->cq[0], &wc) != 1)
		return -1;
	return (int)wc.status;
}

/* ibv_reg_mr(3): a NULL address over SIZE_MAX with ON_DEMAND is the implicit MR; without it, or at an iova, not. */
static void test_implicit_reg(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_mr *mr;

	CHECK(c != NULL && pd != NULL);
	mr = od_implicit(pd);
	CHECK(mr != NULL);
	CHECK(mr->addr == NULL && mr->length == SIZE_MAX && mr->pd == pd && mr->lkey == mr->rkey);
	errno = 0;
	CHECK(ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(ibv_reg_mr_iova(pd, NULL, SIZE_MAX, 4096, OD_ACCESS) == NULL && errno == EINVAL);
	/* It cannot be re-registered (it has no range to change). */
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, OD_ACCESS & ~IBV_ACCESS_REMOTE_ATOMIC) ==
	      IBV_REREG_MR_ERR_CMD);
	CHECK(errno == EINVAL);
	/* A domain with an MR on it stays. */
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
}

/* SEND, WRITE, READ and both atomics through implicit keys on memory never registered, bytes compared. */
static void test_implicit_traffic(void)
{
	uint8_t *m = od_pages(), *heap = malloc(300);
	struct ibv_sge rs;
	struct ibv_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr;
	struct ibv_mr *im;
	struct vq_pair p;
	struct ibv_wc wc;
	uint64_t v;

	CHECK(m != NULL && heap != NULL);
	th_defer(free, heap);
	od_pair(&p);
	im = od_implicit(p.pd);
	CHECK(im != NULL);
	for (int i = 0; i < 300; i++)
		heap[i] = (uint8_t)(i * 7 + 1);
	/* SEND from the heap into page 0, both by the implicit lkey. */
	rs = (struct ibv_sge){ .addr = (uintptr_t)m + 100, .length = 512, .lkey = im->lkey };
	CHECK_OK(ibv_post_recv(p.qp[1], &rw, &rbad));
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_SEND };
	CHECK(od_post_at(&p, &wr, (uintptr_t)heap, 300, im->lkey) == IBV_WC_SUCCESS);
	CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 && wc.byte_len == 300);
	CHECK(memcmp(m + 100, heap, 300) == 0 && m[99] == 0x11 && m[400] == 0x11);
	/* WRITE from the heap to page 0 by the implicit rkey. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)m + 1000;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)heap + 10, 200, im->lkey) == IBV_WC_SUCCESS);
	CHECK(memcmp(m + 1000, heap + 10, 200) == 0 && m[999] == 0x11 && m[1200] == 0x11);
	/* READ of the read-only page into the heap. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.remote_addr = (uintptr_t)m + 2 * (size_t)sysconf(_SC_PAGESIZE) + 8;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)heap, 64, im->lkey) == IBV_WC_SUCCESS);
	CHECK(heap[0] == 0x5a && heap[63] == 0x5a && heap[64] == (uint8_t)(64 * 7 + 1));
	/* Both atomics on page 0, the original value back into the heap. */
	v = 40;
	memcpy(m + 2048, &v, 8);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	wr.wr.atomic.remote_addr = (uintptr_t)m + 2048;
	wr.wr.atomic.rkey = im->rkey;
	wr.wr.atomic.compare_add = 2;
	CHECK(od_post_at(&p, &wr, (uintptr_t)heap + 128, 8, im->lkey) == IBV_WC_SUCCESS);
	memcpy(&v, heap + 128, 8);
	CHECK(v == 40);
	memcpy(&v, m + 2048, 8);
	CHECK(v == 42);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_CMP_AND_SWP };
	wr.wr.atomic.remote_addr = (uintptr_t)m + 2048;
	wr.wr.atomic.rkey = im->rkey;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 7;
	CHECK(od_post_at(&p, &wr, (uintptr_t)heap + 136, 8, im->lkey) == IBV_WC_SUCCESS);
	memcpy(&v, m + 2048, 8);
	CHECK(v == 7);
	/* An explicit key's memory reached by the implicit key of the same domain too. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1];
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 16, p.mr[0]->lkey) == IBV_WC_SUCCESS);
	CHECK(memcmp(p.buf[1], p.buf[0], 16) == 0 && p.buf[1][16] == 0x43);
}

/*
 * Memory not mapped, or mapped without the right asked (a guard page, a
 * read-only page, address 0, the top of the address space), through an
 * implicit key: the WQE fails as the card's page fault does, the QP goes
 * to ERR and the process lives on; memory is untouched.
 */
static void test_implicit_unmapped(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = od_pages(), *guard = m + pg, *ro = m + 2 * pg, *gone;
	struct ibv_send_wr wr;
	struct ibv_mr *im;
	struct vq_pair p;

	CHECK(m != NULL);
	od_pair(&p);
	im = od_implicit(p.pd);
	CHECK(im != NULL);
	/* A SEND gathering from the guard page: a local protection error. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_SEND };
	CHECK(od_post_at(&p, &wr, (uintptr_t)guard + 16, 32, im->lkey) == IBV_WC_LOC_PROT_ERR);
	CHECK(od_state(p.qp[0]) == IBV_QPS_ERR);
	vq_pair_restate(&p);
	/* A WRITE into the guard page, and one into the read-only page: a remote access error. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)guard;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(od_state(p.qp[0]) == IBV_QPS_ERR);
	vq_pair_restate(&p);
	wr.wr.rdma.remote_addr = (uintptr_t)ro + 64;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(ro[64] == 0x5a && ro[127] == 0x5a);
	vq_pair_restate(&p);
	/* A WRITE running from page 0 into the guard page fails whole: nothing of page 0 written either. */
	wr.wr.rdma.remote_addr = (uintptr_t)guard - 32;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(m[pg - 32] == 0x11 && m[pg - 1] == 0x11);
	vq_pair_restate(&p);
	/* A READ of the guard page. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.remote_addr = (uintptr_t)guard + 8;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(p.buf[0][0] == 0x21);
	vq_pair_restate(&p);
	/* A READ scattering into the read-only page: a local protection error. */
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1];
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)ro, 64, im->lkey) == IBV_WC_LOC_PROT_ERR);
	CHECK(ro[0] == 0x5a && ro[63] == 0x5a);
	CHECK(od_state(p.qp[0]) == IBV_QPS_ERR);
	vq_pair_restate(&p);
	/* An atomic on the guard page and on the read-only page. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	wr.wr.atomic.remote_addr = (uintptr_t)guard;
	wr.wr.atomic.rkey = im->rkey;
	wr.wr.atomic.compare_add = 1;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 8, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	wr.wr.atomic.remote_addr = (uintptr_t)ro;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 8, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	CHECK(ro[0] == 0x5a);
	vq_pair_restate(&p);
	/* Address 0 and the top of the address space. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 8, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	wr.wr.rdma.remote_addr = UINT64_MAX - 3;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 8, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	/* Memory unmapped just now (nothing of this thread maps anything before the WRITE). */
	gone = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED);
	gone[0] = 1;
	CHECK_OK(munmap(gone, pg));
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_WRITE };
	wr.wr.rdma.remote_addr = (uintptr_t)gone;
	wr.wr.rdma.rkey = im->rkey;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_ACCESS_ERR);
	vq_pair_restate(&p);
	/* The pair works on after all that. */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_RDMA_READ };
	wr.wr.rdma.rkey = im->rkey;
	wr.wr.rdma.remote_addr = (uintptr_t)m + 8;
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 8, p.mr[0]->lkey) == IBV_WC_SUCCESS);
	CHECK(p.buf[0][0] == 0x11 && p.buf[0][8] == 0x21);
}

/* A receive scattering into the guard page: the receive completes with LOC_PROT_ERR, the sender with REM_OP_ERR. */
static void test_implicit_recv_unmapped(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = od_pages();
	struct ibv_sge rs;
	struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };
	struct ibv_mr *im;
	struct vq_pair p;
	struct ibv_wc wc;

	CHECK(m != NULL);
	od_pair(&p);
	im = od_implicit(p.pd);
	CHECK(im != NULL);
	rs = (struct ibv_sge){ .addr = (uintptr_t)m + pg, .length = 256, .lkey = im->lkey };
	CHECK_OK(ibv_post_recv(p.qp[1], &rw, &rbad));
	CHECK(od_post_at(&p, &wr, (uintptr_t)p.buf[0], 64, p.mr[0]->lkey) == IBV_WC_REM_OP_ERR);
	CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.wr_id == 9 && wc.status == IBV_WC_LOC_PROT_ERR);
	CHECK(od_state(p.qp[0]) == IBV_QPS_ERR && od_state(p.qp[1]) == IBV_QPS_ERR);
}

/* ibv_advise_mr(3) through an implicit key faults the range in: EFAULT where it cannot. */
static void test_implicit_advise(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m = od_pages();
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_mr *im;
	struct ibv_sge sg;

	CHECK(m != NULL && c != NULL && pd != NULL);
	im = od_implicit(pd);
	CHECK(im != NULL);
	sg = (struct ibv_sge){ .addr = (uintptr_t)m, .length = (uint32_t)pg, .lkey = im->lkey };
	CHECK_OK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1));
	sg.addr = (uintptr_t)m + 2 * pg;
	CHECK_OK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg, 1));
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sg, 1) == EFAULT);
	sg.addr = (uintptr_t)m + pg;
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1) == EFAULT);
	sg = (struct ibv_sge){ .addr = (uintptr_t)m + pg - 8, .length = 16, .lkey = im->lkey };
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg, 1) == EFAULT);
}

/* A QP's access flags may name ODP (and the other MR flags), as the kernel takes them; unknown bits not. */
static void test_qp_access_odp(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = vf_pd(c);
	struct ibv_cq *cq = vq_cq(c, 4);
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = OD_ACCESS };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

	CHECK(c != NULL && pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(qp != NULL);
	a.qp_access_flags = OD_ACCESS | (1u << 12);
	CHECK(ibv_modify_qp(qp, &a, mask) == EINVAL);
	a.qp_access_flags = OD_ACCESS;
	CHECK_OK(ibv_modify_qp(qp, &a, mask));
	CHECK(qp->state == IBV_QPS_INIT);
}

int main(void)
{
	RUN(test_qp_access_odp);
	RUN(test_odp_caps);
	RUN(test_odp_traffic);
	RUN(test_advise_mr);
	RUN(test_implicit_reg);
	RUN(test_implicit_traffic);
	RUN(test_implicit_unmapped);
	RUN(test_implicit_recv_unmapped);
	RUN(test_implicit_advise);
	return th_summary("test_verbs_odp");
}
