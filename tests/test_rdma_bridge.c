/*
 * DOCA's RDMA bridge (doca_rdma_bridge.h, DOCA Core guide §3.6) in a program
 * that links libdoca_common.so and libibverbs.so.1 together, as a program
 * extending an rdma-core application with DOCA does: a DOCA device opened
 * from an ibv_pd shares that domain, keys of DOCA buffers are lkeys and
 * rkeys of verbs work requests (and only in that domain), verbs memory is
 * reached by DOCA DMA jobs on that device, doca_dev_get_pd gives a domain
 * the DOCA device owns, and an RDMA export yields a key a verbs peer in
 * another process uses. Every refusal with its documented error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_dma.h"
#include "doca_mmap.h"
#include "doca_rdma_bridge.h"
#include "harness.h"
#include "th_proc.h"
#include "verbs_qp_fixture.h"

/* CHECK for helpers that return a value: th_stop leaves the case (it never returns inside one). */
#define BR_REQUIRE(cond)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			TH_FAIL("%s", #cond);                                                                          \
			th_stop();                                                                                     \
			abort();                                                                                       \
		}                                                                                                      \
	} while (0)

#define BR_LEN 8192
#define BR_PERM (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE)

static void br_close_device_cb(void *arg)
{
	ibv_close_device(arg);
}

static void br_dealloc_pd_cb(void *arg)
{
	ibv_dealloc_pd(arg);
}

static void br_dev_close_cb(void *arg)
{
	doca_dev_close(arg);
}

static void br_mmap_destroy_cb(void *arg)
{
	doca_mmap_destroy(arg);
}

static void br_inv_destroy_cb(void *arg)
{
	doca_buf_inventory_destroy(arg);
}

static void br_buf_cb(void *arg)
{
	doca_buf_refcount_rm(arg, NULL);
}

static void br_free_cb(void *arg)
{
	munmap(arg, BR_LEN);
}

static struct ibv_context *br_ctx(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;

	ibv_free_device_list(l);
	BR_REQUIRE(c != NULL);
	th_defer(br_close_device_cb, c);
	return c;
}

static struct ibv_pd *br_pd(struct ibv_context *c)
{
	struct ibv_pd *pd = ibv_alloc_pd(c);

	BR_REQUIRE(pd != NULL);
	th_defer(br_dealloc_pd_cb, pd);
	return pd;
}

static uint8_t *br_mem(void)
{
	uint8_t *p = mmap(NULL, BR_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	BR_REQUIRE(p != MAP_FAILED);
	th_defer(br_free_cb, p);
	return p;
}

static struct doca_dev *br_dev_from_pd(struct ibv_pd *pd)
{
	struct doca_dev *dev = NULL;

	BR_REQUIRE((doca_dev_open_from_pd(pd, &dev)) == DOCA_SUCCESS);
	th_defer(br_dev_close_cb, dev);
	return dev;
}

static struct doca_mmap *br_mmap(struct doca_dev *dev, void *mem, uint32_t perm)
{
	struct doca_mmap *m = NULL;

	BR_REQUIRE((doca_mmap_create(NULL, &m)) == DOCA_SUCCESS);
	th_defer(br_mmap_destroy_cb, m);
	BR_REQUIRE((doca_mmap_set_memrange(m, mem, BR_LEN)) == DOCA_SUCCESS);
	BR_REQUIRE((doca_mmap_set_permissions(m, perm)) == DOCA_SUCCESS);
	BR_REQUIRE((doca_mmap_dev_add(m, dev)) == DOCA_SUCCESS);
	BR_REQUIRE((doca_mmap_start(m)) == DOCA_SUCCESS);
	return m;
}

static struct doca_buf_inventory *inv; /* the program's, destroyed at its end */

static struct doca_buf *br_buf(struct doca_mmap *m, void *addr, size_t len)
{
	struct doca_buf *b = NULL;

	if (inv == NULL) {
		BR_REQUIRE((doca_buf_inventory_create(NULL, 64, DOCA_BUF_EXTENSION_NONE, &inv)) == DOCA_SUCCESS);
		BR_REQUIRE((doca_buf_inventory_start(inv)) == DOCA_SUCCESS);
	}
	BR_REQUIRE((doca_buf_inventory_buf_by_addr(inv, m, addr, len, &b)) == DOCA_SUCCESS);
	th_defer(br_buf_cb, b);
	return b;
}

/* Two RC QPs of one process connected to each other, on domains pd0 and pd1, sharing cq. */
static void br_qps(struct ibv_context *c, struct ibv_pd *pd0, struct ibv_pd *pd1, struct ibv_cq *cq,
		   struct ibv_qp *qp[2])
{
	qp[0] = vq_qp(pd0, IBV_QPT_RC, cq, cq, 16);
	qp[1] = vq_qp(pd1, IBV_QPT_RC, cq, cq, 16);
	(void)c;
	CHECK(qp[0] != NULL && qp[1] != NULL);
	CHECK_OK(vq_up(qp[0], qp[1]->qp_num, 1, 7));
	CHECK_OK(vq_up(qp[1], qp[0]->qp_num, 1, 7));
}

static int br_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t lkey, void *laddr, uint32_t len,
		   uint32_t rkey, void *raddr)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = (uint64_t)(uintptr_t)raddr, .rkey = rkey}};
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(qp, &wr, &bad);
}

static enum ibv_wc_status br_wait(struct ibv_cq *cq)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	BR_REQUIRE(vq_poll1(cq, &wc) == 1);
	return wc.status;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* The device opened from a pd hands that pd back, and its DOCA keys are keys of that domain. */
static void test_open_from_pd_keys_are_verbs_keys(void)
{
	struct ibv_context *c = br_ctx();
	struct ibv_pd *pd = br_pd(c), *other = br_pd(c), *got = NULL;
	struct ibv_cq *cq = vq_cq(c, 64);
	struct doca_dev *dev = br_dev_from_pd(pd);
	uint8_t *doca_mem = br_mem(), *verbs_mem = br_mem();
	struct doca_mmap *m = br_mmap(dev, doca_mem, BR_PERM);
	struct doca_buf *b = br_buf(m, doca_mem, BR_LEN);
	struct ibv_mr *mr = vq_mr(other, verbs_mem, BR_LEN, VQ_ACCESS_ALL);
	struct ibv_qp *qp[2];
	uint32_t key = 0;

	CHECK_ERR(doca_dev_get_pd(dev, &got), DOCA_SUCCESS);
	CHECK(got == pd);
	CHECK_ERR(doca_buf_get_mkey(b, dev, &key), DOCA_SUCCESS);
	CHECK(key != 0);
	br_qps(c, pd, other, cq, qp);
	/* rkey: the peer (other domain) writes into the DOCA buffer through the bridged domain's QP. */
	fill(verbs_mem, BR_LEN, 3);
	CHECK_OK(br_post(qp[1], IBV_WR_RDMA_WRITE, mr->lkey, verbs_mem, 4096, key, doca_mem + 100));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	CHECK(memcmp(doca_mem + 100, verbs_mem, 4096) == 0);
	CHECK(doca_mem[99] == 0 && doca_mem[4196] == 0);
	/* lkey: the bridged QP reads the peer's memory into the DOCA buffer. */
	fill(verbs_mem, BR_LEN, 11);
	CHECK_OK(br_post(qp[0], IBV_WR_RDMA_READ, key, doca_mem + 5000, 1000, mr->rkey, verbs_mem + 7));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	CHECK(memcmp(doca_mem + 5000, verbs_mem + 7, 1000) == 0);
	/* A DOCA key of the bridged domain is no lkey of another domain's QP. */
	CHECK_OK(br_post(qp[1], IBV_WR_RDMA_WRITE, key, doca_mem, 64, mr->rkey, verbs_mem));
	CHECK(br_wait(cq) == IBV_WC_LOC_PROT_ERR);
}

/* Memory registered through verbs, written by a verbs peer, read by a DOCA DMA job on the bridged device. */
static void test_dma_on_bridged_device(void)
{
	struct ibv_context *c = br_ctx();
	struct ibv_pd *pd = br_pd(c);
	struct ibv_cq *cq = vq_cq(c, 64);
	struct doca_dev *dev = br_dev_from_pd(pd);
	uint8_t *src = br_mem(), *dst = br_mem(), *peer = br_mem();
	struct ibv_mr *mr = vq_mr(pd, src, BR_LEN, VQ_ACCESS_ALL), *pmr = vq_mr(pd, peer, BR_LEN, VQ_ACCESS_ALL);
	struct doca_mmap *ms = br_mmap(dev, src, BR_PERM), *md = br_mmap(dev, dst, BR_PERM);
	struct doca_buf *bs = br_buf(ms, src, 3000), *bd = br_buf(md, dst, BR_LEN);
	struct doca_dma *dma = NULL;
	struct doca_workq *wq = NULL;
	struct doca_event ev = {0};
	struct ibv_qp *qp[2];
	doca_error_t r;

	br_qps(c, pd, pd, cq, qp);
	fill(peer, BR_LEN, 5);
	CHECK_OK(br_post(qp[1], IBV_WR_RDMA_WRITE, pmr->lkey, peer, 3000, mr->rkey, src));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	CHECK_ERR(doca_buf_set_data(bs, src, 3000), DOCA_SUCCESS);
	CHECK_ERR(doca_dma_create(&dma), DOCA_SUCCESS);
	CHECK_ERR(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev), DOCA_SUCCESS);
	CHECK_ERR(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	CHECK_ERR(doca_workq_create(4, &wq), DOCA_SUCCESS);
	CHECK_ERR(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq), DOCA_SUCCESS);
	{
		struct doca_dma_job_memcpy job = {.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(dma)},
						  .dst_buff = bd, .src_buff = bs};

		CHECK_ERR(doca_workq_submit(wq, &job.base), DOCA_SUCCESS);
		while ((r = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
			;
	}
	CHECK_ERR(r, DOCA_SUCCESS);
	CHECK(ev.result.u64 == DOCA_SUCCESS);
	CHECK(memcmp(dst, peer, 3000) == 0 && dst[3000] == 0);
	doca_ctx_workq_rm(doca_dma_as_ctx(dma), wq);
	doca_workq_destroy(wq);
	doca_ctx_stop(doca_dma_as_ctx(dma));
	doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev);
	doca_dma_destroy(dma);
}

/* doca_dev_get_pd on a device of doca_dev_open: a domain the device owns, on which verbs objects work. */
static void test_get_pd_of_doca_device(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	struct ibv_pd *pd = NULL, *again = NULL;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[2];
	struct doca_mmap *m;
	struct doca_buf *b;
	uint8_t *mem = br_mem(), *vm = br_mem();
	uint32_t n, key = 0;

	CHECK_ERR(doca_devinfo_list_create(&list, &n), DOCA_SUCCESS);
	CHECK(n > 0);
	CHECK_ERR(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	doca_devinfo_list_destroy(list);
	CHECK_ERR(doca_dev_get_pd(dev, &pd), DOCA_SUCCESS);
	CHECK(pd != NULL && pd->context != NULL);
	CHECK_ERR(doca_dev_get_pd(dev, &again), DOCA_SUCCESS);
	CHECK(again == pd);
	/* Owned by the DOCA device: no program free, and no second bridge over it. */
	CHECK_ERR(ibv_dealloc_pd(pd), EBUSY);
	{
		struct doca_dev *d2 = NULL;

		CHECK_ERR(doca_dev_open_from_pd(pd, &d2), DOCA_ERROR_INVALID_VALUE);
		CHECK(d2 == NULL);
	}
	m = br_mmap(dev, mem, BR_PERM);
	b = br_buf(m, mem, BR_LEN);
	CHECK_ERR(doca_buf_get_mkey(b, dev, &key), DOCA_SUCCESS);
	cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, vm, BR_LEN, VQ_ACCESS_ALL);
	CHECK(cq != NULL && mr != NULL);
	qp[0] = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	qp[1] = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(qp[0] != NULL && qp[1] != NULL);
	CHECK_OK(vq_up(qp[0], qp[1]->qp_num, 1, 7));
	CHECK_OK(vq_up(qp[1], qp[0]->qp_num, 1, 7));
	fill(vm, BR_LEN, 9);
	CHECK_OK(br_post(qp[0], IBV_WR_RDMA_WRITE, mr->lkey, vm, 512, key, mem + 8));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	CHECK(memcmp(mem + 8, vm, 512) == 0);
	/* The device cannot go while verbs objects use its domain. */
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE); /* the mmap, too */
	th_undefer(br_buf_cb, b);
	doca_buf_refcount_rm(b, NULL);
	th_undefer(br_mmap_destroy_cb, m);
	CHECK_ERR(doca_mmap_destroy(m), DOCA_SUCCESS);
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE); /* now the QPs and the MR */
	th_undefer(vq_destroy_qp_cb, qp[0]);
	th_undefer(vq_destroy_qp_cb, qp[1]);
	ibv_destroy_qp(qp[0]);
	ibv_destroy_qp(qp[1]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	CHECK_ERR(doca_dev_close(dev), DOCA_SUCCESS);
}

static void test_refusals(void)
{
	struct ibv_context *c = br_ctx();
	struct ibv_pd *pd = br_pd(c), *got = NULL;
	struct ibv_pd forged = {.context = c, .handle = 0x7fffff00u};
	struct doca_dev *dev = NULL, *dev2 = NULL, *other;
	struct doca_devinfo **list;
	uint8_t *mem = br_mem();
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t key = 0, n;
	char not_a_dev[256] = {0};

	CHECK_ERR(doca_dev_open_from_pd(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_open_from_pd(pd, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_open_from_pd(&forged, &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK(dev == NULL);
	dev = br_dev_from_pd(pd);
	CHECK_ERR(doca_dev_open_from_pd(pd, &dev2), DOCA_ERROR_INVALID_VALUE); /* already bridged */
	CHECK(dev2 == NULL);
	CHECK_ERR(doca_dev_get_pd(NULL, &got), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_get_pd(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_get_pd((struct doca_dev *)not_a_dev, &got), DOCA_ERROR_INVALID_VALUE);
	CHECK(got == NULL);
	/* The bridged device is its own: doca_dev_open of the same function gives another domain. */
	CHECK_ERR(doca_devinfo_list_create(&list, &n), DOCA_SUCCESS);
	CHECK_ERR(doca_dev_open(list[0], &other), DOCA_SUCCESS);
	doca_devinfo_list_destroy(list);
	th_defer(br_dev_close_cb, other);
	CHECK(other != dev);
	CHECK_ERR(doca_dev_get_pd(other, &got), DOCA_SUCCESS);
	CHECK(got != pd && got->handle != pd->handle);
	m = br_mmap(dev, mem, BR_PERM);
	b = br_buf(m, mem, 64);
	CHECK_ERR(doca_buf_get_mkey(b, other, &key), DOCA_ERROR_NOT_FOUND);
	CHECK_ERR(doca_buf_get_mkey(NULL, dev, &key), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_mkey(b, NULL, &key), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_mkey(b, dev, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(key == 0);
	/* A domain a DOCA device was opened from stays while that device is open (its keys live in it). */
	CHECK_ERR(ibv_dealloc_pd(pd), EBUSY);
}

/*
 * The exporter role: a DOCA program on the device's first function. Its
 * device's verbs domain (doca_dev_get_pd) gets an RC QP; an mmap with RDMA
 * rights is exported; it prints the QP number and the descriptor, connects
 * to the peer's QP, and on "check" reports the bytes the peer wrote.
 */
static int role_exporter(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	struct ibv_pd *pd = NULL;
	struct doca_mmap *m = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	const void *desc;
	size_t dlen;
	uint8_t *mem = mmap(NULL, BR_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[8192], hex[2 * 4096 + 1];
	unsigned int peer_qpn;
	int ok = 1;
	uint32_t n;

	if (mem == MAP_FAILED || doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0 ||
	    doca_dev_open(list[0], &dev) != DOCA_SUCCESS || doca_dev_get_pd(dev, &pd) != DOCA_SUCCESS)
		return 2;
	doca_devinfo_list_destroy(list);
	fill(mem, BR_LEN, 1);
	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, BR_LEN) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, BR_PERM) != DOCA_SUCCESS || doca_mmap_dev_add(m, dev) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS || doca_mmap_export_rdma(m, dev, &desc, &dlen) != DOCA_SUCCESS ||
	    dlen > 4096)
		return 3;
	cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	qp = cq != NULL ? vq_qp(pd, IBV_QPT_RC, cq, cq, 8) : NULL;
	if (qp == NULL)
		return 4;
	th_hex_encode(desc, dlen, hex);
	printf("EXPORT %u %s\n", qp->qp_num, hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "PEER %u", &peer_qpn) != 1 ||
	    vq_up(qp, peer_qpn, 1, 7) != 0)
		return 5;
	printf("UP\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 6;
	for (int i = 0; i < 2048; i++)
		ok = ok && mem[1024 + i] == (uint8_t)(i * 3 + 7);
	ok = ok && mem[1023] == (uint8_t)(1023 * 7 + 1) && mem[3072] == (uint8_t)(3072 * 7 + 1);
	printf("RESULT %d\n", ok);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 7;
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	doca_mmap_destroy(m);
	doca_dev_close(dev);
	munmap(mem, BR_LEN);
	return 0;
}

/* The importer: a verbs program whose domain is bridged; the imported buffer's key is the rkey it uses. */
static void test_rdma_export_key_for_verbs_peer(void)
{
	struct th_proc *p = th_proc_start(NULL, "exporter", NULL);
	struct ibv_context *c = br_ctx();
	struct ibv_pd *pd = br_pd(c);
	struct ibv_cq *cq = vq_cq(c, 16);
	struct ibv_qp *qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	struct doca_dev *dev = br_dev_from_pd(pd);
	uint8_t *mem = br_mem();
	struct ibv_mr *mr = vq_mr(pd, mem, BR_LEN, VQ_ACCESS_ALL);
	static uint8_t desc[4096];
	char hex[2 * 4096 + 1];
	struct doca_mmap *imp = NULL;
	struct doca_buf *b;
	unsigned int qpn = 0;
	void *raddr = NULL;
	uint32_t rkey = 0;
	const char *l;
	long dlen;
	int ok = 0;

	CHECK(p != NULL && qp != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "EXPORT %u %8192s", &qpn, hex) == 2);
	dlen = th_hex_decode(hex, desc, sizeof(desc));
	CHECK(dlen > 0);
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, (size_t)dlen, dev, &imp), DOCA_SUCCESS);
	th_defer(br_mmap_destroy_cb, imp);
	{
		size_t ilen = 0;

		CHECK_ERR(doca_mmap_get_memrange(imp, &raddr, &ilen), DOCA_SUCCESS);
		CHECK(ilen == BR_LEN);
	}
	b = br_buf(imp, raddr, BR_LEN);
	CHECK_ERR(doca_buf_get_mkey(b, dev, &rkey), DOCA_SUCCESS);
	CHECK_OK(vq_up(qp, qpn, 1, 7));
	CHECK(th_proc_send(p, "PEER %u", qp->qp_num) == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && strcmp(l, "UP") == 0);
	for (int i = 0; i < 2048; i++)
		mem[i] = (uint8_t)(i * 3 + 7);
	CHECK_OK(br_post(qp, IBV_WR_RDMA_WRITE, mr->lkey, mem, 2048, rkey, (uint8_t *)raddr + 1024));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	CHECK_OK(br_post(qp, IBV_WR_RDMA_READ, mr->lkey, mem + 4096, 512, rkey, (uint8_t *)raddr + 6000));
	CHECK(br_wait(cq) == IBV_WC_SUCCESS);
	for (int i = 0; i < 512; i++)
		CHECK(mem[4096 + i] == (uint8_t)((6000 + i) * 7 + 1));
	CHECK(th_proc_send(p, "check") == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "RESULT %d", &ok) == 1);
	CHECK(ok == 1);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "exporter") == 0)
		return role_exporter();
	RUN(test_open_from_pd_keys_are_verbs_keys);
	RUN(test_dma_on_bridged_device);
	RUN(test_get_pd_of_doca_device);
	RUN(test_refusals);
	RUN(test_rdma_export_key_for_verbs_peer);
	if (inv != NULL)
		br_inv_destroy_cb(inv);
	return th_summary("test_rdma_bridge");
}
