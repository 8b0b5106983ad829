/*
 * A DOCA RDMA context and a verbs RC QP are peers: the verbs side takes the
 * QP number and GID from the context's connection descriptor (its layout is
 * documented in docs/ARCHITECTURE.md, "DOCA RDMA") and writes a descriptor of
 * its own QP for doca_rdma_connect; then data moves both ways: SENDs each
 * way, the verbs QP writing into and reading from the DOCA side's exported
 * memory, the DOCA context writing into memory a DOCA mmap over the verbs
 * program's buffer exports. The same with the verbs QP in another process:
 * it connects by the descriptor, SENDs back and WRITEs into the context's
 * memory.
 */
#include <endian.h>
#include <infiniband/verbs.h>

#include "doca_rdma_bridge.h"
#include "harness.h"
#include "rdma_fixture.h"
#include "th_proc.h"

#define HALF (RX_LEN / 2)
#define RW (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC)

/* The descriptor's layout (docs/ARCHITECTURE.md). */
struct desc {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint32_t qpn;
	uint16_t lid;
	uint8_t mtu;
	uint8_t sl;
	uint8_t gid[16];
	uint8_t rsvd[28];
	uint32_t crc;
};

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

struct vpeer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
};

static void vpeer_close(void *arg)
{
	struct vpeer *v = arg;

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
	free(v->mem);
	memset(v, 0, sizeof(*v));
}

static int vpeer_open(struct vpeer *v)
{
	struct ibv_device **l;
	int n = 0;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 16, .max_recv_wr = 16,
									 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	memset(v, 0, sizeof(*v));
	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return -1;
	v->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	v->mem = calloc(1, RX_LEN);
	if (v->ctx == NULL || v->mem == NULL || (v->pd = ibv_alloc_pd(v->ctx)) == NULL ||
	    (v->cq = ibv_create_cq(v->ctx, 32, NULL, NULL, 0)) == NULL)
		return -2;
	v->mr = ibv_reg_mr(v->pd, v->mem, RX_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						       IBV_ACCESS_REMOTE_READ);
	qa.send_cq = qa.recv_cq = v->cq;
	if (v->mr == NULL || (v->qp = ibv_create_qp(v->pd, &qa)) == NULL)
		return -3;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -4;
	return 0;
}

/* The verbs QP to RTS towards the QP and GID the DOCA descriptor names. */
static int vpeer_connect(struct vpeer *v, const struct desc *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = le32toh(d->qpn),
				 .rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
				 .ah_attr = { .is_global = 1, .port_num = 1, .dlid = le16toh(d->lid),
					      .grh = { .sgid_index = 0, .hop_limit = 1 } } };

	memcpy(a.ah_attr.grh.dgid.raw, d->gid, 16);
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				  .max_rd_atomic = 1 };
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A descriptor of the verbs QP, as a program writes one for doca_rdma_connect. */
static int vpeer_desc(struct vpeer *v, struct desc *d)
{
	struct ibv_port_attr pa;
	union ibv_gid g;

	if (ibv_query_port(v->ctx, 1, &pa) != 0 || ibv_query_gid(v->ctx, 1, 0, &g) != 0)
		return -1;
	memset(d, 0, sizeof(*d));
	d->magic = htole32(0x414d4452u);
	d->version = htole16(1);
	d->flags = htole16((uint16_t)((pa.link_layer == IBV_LINK_LAYER_ETHERNET ? 1 : 0) | 2));
	d->qpn = htole32(v->qp->qp_num);
	d->lid = htole16(pa.lid);
	d->mtu = DOCA_MTU_SIZE_1K_BYTES;
	memcpy(d->gid, g.raw, 16);
	d->crc = htole32(crc32_ieee((const uint8_t *)d, offsetof(struct desc, crc)));
	return 0;
}

static int vpeer_poll(struct vpeer *v, struct ibv_wc *wc)
{
	uint64_t end = rx_now() + RX_HANG_NS;
	int n;

	while ((n = ibv_poll_cq(v->cq, 1, wc)) == 0 && rx_now() < end)
		;
	return n;
}

static void mmap_cleanup(void *m)
{
	doca_mmap_destroy(m);
}

static void dev_cleanup(void *d)
{
	doca_dev_close(d);
}

static void test_verbs_peer(void)
{
	struct rx_side s;
	struct vpeer v;
	const void *dd;
	size_t dl;
	struct desc d, vd;
	struct doca_buf *rb, *sb, *rem, *src;
	struct doca_rdma_result res;
	struct doca_event ev;
	struct doca_mmap *vm = NULL;
	struct doca_dev *bdev = NULL;
	const void *md;
	size_t ml;
	uint32_t dkey;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *brw;
	struct ibv_send_wr swr, *bsw;

	CHECK(rx_open(&s, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &s);
	CHECK(vpeer_open(&v) == 0);
	th_defer_local(vpeer_close, &v);
	CHECK_OK(doca_rdma_export(s.rdma, &dd, &dl));
	CHECK(dl == sizeof(d));
	memcpy(&d, dd, sizeof(d));
	CHECK(vpeer_connect(&v, &d) == 0);
	CHECK(vpeer_desc(&v, &vd) == 0);
	CHECK_OK(doca_rdma_connect(s.rdma, &vd, sizeof(vd)));

	/* verbs SEND -> DOCA RECV */
	rb = rx_buf(&s, 0, 64, 0);
	CHECK(rb != NULL);
	CHECK_OK(rx_submit_recv(&s, rb, 1));
	memcpy(v.mem, "from verbs", 10);
	sge = (struct ibv_sge){ .addr = (uintptr_t)v.mem, .length = 10, .lkey = v.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				    .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(99) };
	CHECK(ibv_post_send(v.qp, &swr, &bsw) == 0);
	CHECK(vpeer_poll(&v, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7);
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_RECV && res.result == DOCA_SUCCESS && res.length == 10);
	CHECK(res.opcode == DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM && res.immediate_data == htobe32(99));
	CHECK(memcmp(s.mem, "from verbs", 10) == 0);

	/* DOCA SEND -> verbs RECV */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(v.mem + 64), .length = 64, .lkey = v.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 8, .sg_list = &sge, .num_sge = 1 };
	CHECK(ibv_post_recv(v.qp, &rwr, &brw) == 0);
	memcpy(s.mem + 128, "from DOCA", 9);
	sb = rx_buf(&s, 128, 9, 9);
	CHECK(sb != NULL);
	CHECK_OK(rx_submit_send(&s, DOCA_RDMA_JOB_SEND, sb, 0, 2));
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK(vpeer_poll(&v, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 8 && wc.byte_len == 9);
	CHECK(wc.opcode == IBV_WC_RECV);
	CHECK(memcmp(v.mem + 64, "from DOCA", 9) == 0);

	/* verbs WRITE and READ on the DOCA side's memory, named by the DOCA mmap's key. */
	CHECK_OK(doca_mmap_export_rdma(s.mmap, s.dev, &md, &ml));
	CHECK_OK(doca_buf_get_mkey(rb, s.dev, &dkey));
	for (int i = 0; i < 200; i++)
		v.mem[256 + i] = (uint8_t)(i ^ 0x5c);
	sge = (struct ibv_sge){ .addr = (uintptr_t)(v.mem + 256), .length = 200, .lkey = v.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				    .send_flags = IBV_SEND_SIGNALED,
				    .wr.rdma = { .remote_addr = (uintptr_t)(s.mem + HALF), .rkey = dkey } };
	CHECK(ibv_post_send(v.qp, &swr, &bsw) == 0);
	CHECK(vpeer_poll(&v, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 9);
	CHECK(memcmp(s.mem + HALF, v.mem + 256, 200) == 0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)(v.mem + 1024), .length = 200, .lkey = v.mr->lkey };
	swr.wr_id = 10;
	swr.opcode = IBV_WR_RDMA_READ;
	CHECK(ibv_post_send(v.qp, &swr, &bsw) == 0);
	CHECK(vpeer_poll(&v, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 10);
	CHECK(memcmp(v.mem + 1024, v.mem + 256, 200) == 0);

	/*
	 * DOCA WRITE into the verbs program's buffer: a DOCA mmap over it on a
	 * device opened from the verbs PD (the RDMA bridge: its keys are of the
	 * verbs QP's domain), exported for RDMA.
	 */
	CHECK_OK(doca_dev_open_from_pd(v.pd, &bdev));
	th_defer(dev_cleanup, bdev);
	CHECK_OK(doca_mmap_create(NULL, &vm));
	th_defer(mmap_cleanup, vm);
	CHECK_OK(doca_mmap_dev_add(vm, bdev));
	CHECK_OK(doca_mmap_set_memrange(vm, v.mem + 2048, 1024));
	CHECK_OK(doca_mmap_set_permissions(vm, RW));
	CHECK_OK(doca_mmap_start(vm));
	CHECK_OK(doca_mmap_export_rdma(vm, bdev, &md, &ml));
	CHECK_OK(rx_import(&s, md, ml));
	rem = rx_rbuf(&s, 0, 100, 0);
	memset(s.mem + 512, 0xa7, 100);
	src = rx_buf(&s, 512, 100, 100);
	CHECK(rem != NULL && src != NULL);
	CHECK_OK(rx_submit_rw(&s, DOCA_RDMA_JOB_WRITE, rem, src, 0, 3));
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK(v.mem[2048] == 0xa7 && v.mem[2147] == 0xa7 && v.mem[2148] == 0);
	doca_buf_refcount_rm(rem, NULL);
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(rb, NULL);
	doca_buf_refcount_rm(sb, NULL);
	CHECK_OK(doca_mmap_destroy(s.remote)); /* the import goes before the mmap it names */
	s.remote = NULL;
	th_undefer(mmap_cleanup, vm);
	CHECK_OK(doca_mmap_destroy(vm));
	th_undefer(dev_cleanup, bdev);
	CHECK_OK(doca_dev_close(bdev));
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
	th_undefer(vpeer_close, &v);
	vpeer_close(&v);
}

/*
 * The verbs peer in another process (the "vpeer" role): it prints its QP's
 * descriptor, connects to the context's, takes a SEND into a posted
 * receive, answers with a SEND and WRITEs into the context's exported memory
 * at the address and key it was given.
 */
static int role_vpeer(void)
{
	char line[512], hex[2 * sizeof(struct desc) + 1];
	struct vpeer v;
	struct desc d, vd;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *brw;
	struct ibv_send_wr swr, *bsw;
	struct ibv_wc wc;
	unsigned long long raddr;
	unsigned int rkey;

	if (vpeer_open(&v) != 0 || vpeer_desc(&v, &vd) != 0)
		return 1;
	th_hex_encode((const uint8_t *)&vd, sizeof(vd), hex);
	printf("%s\n", hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || th_hex_decode(line, (uint8_t *)&d, sizeof(d)) != sizeof(d) ||
	    fgets(line, sizeof(line), stdin) == NULL || sscanf(line, "%llx %x", &raddr, &rkey) != 2)
		return 2;
	if (vpeer_connect(&v, &d) != 0)
		return 3;
	sge = (struct ibv_sge){ .addr = (uintptr_t)v.mem, .length = 64, .lkey = v.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	if (ibv_post_recv(v.qp, &rwr, &brw) != 0)
		return 4;
	printf("ready\n");
	fflush(stdout);
	if (vpeer_poll(&v, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 1 || wc.byte_len != 4 ||
	    memcmp(v.mem, "ping", 4) != 0)
		return 5;
	memcpy(v.mem + 128, "pong from verbs", 15);
	sge = (struct ibv_sge){ .addr = (uintptr_t)(v.mem + 128), .length = 15, .lkey = v.mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				    .send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };
	if (ibv_post_send(v.qp, &swr, &bsw) != 0 || vpeer_poll(&v, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
		return 6;
	swr.wr_id = 3;
	swr.opcode = IBV_WR_SEND;
	if (ibv_post_send(v.qp, &swr, &bsw) != 0 || vpeer_poll(&v, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
		return 7;
	if (fgets(line, sizeof(line), stdin) == NULL) /* the context is done */
		return 8;
	vpeer_close(&v);
	return 0;
}

static void test_verbs_peer_in_another_process(void)
{
	struct th_proc *p = th_proc_start(NULL, "vpeer", NULL);
	struct rx_side s;
	struct desc vd;
	const void *dd;
	size_t dl;
	char hex[2 * sizeof(struct desc) + 1];
	const char *ln;
	const void *md;
	size_t ml;
	uint32_t key;
	struct doca_buf *rb, *sb;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(p != NULL);
	CHECK(rx_open(&s, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &s);
	CHECK((ln = th_proc_line(p)) != NULL && th_hex_decode(ln, (uint8_t *)&vd, sizeof(vd)) == sizeof(vd));
	CHECK_OK(doca_rdma_connect(s.rdma, &vd, sizeof(vd)));
	CHECK_OK(doca_rdma_export(s.rdma, &dd, &dl));
	th_hex_encode(dd, dl, hex);
	CHECK_OK(doca_mmap_export_rdma(s.mmap, s.dev, &md, &ml));
	rb = rx_buf(&s, 0, 64, 0);
	sb = rx_buf(&s, 256, 4, 4);
	CHECK(rb != NULL && sb != NULL);
	CHECK_OK(doca_buf_get_mkey(rb, s.dev, &key));
	CHECK(th_proc_send(p, "%s", hex) == 0);
	CHECK(th_proc_send(p, "%llx %x", (unsigned long long)(uintptr_t)(s.mem + HALF), key) == 0);
	CHECK((ln = th_proc_line(p)) != NULL && strcmp(ln, "ready") == 0);
	CHECK_OK(rx_submit_recv(&s, rb, 1));
	memcpy(s.mem + 256, "ping", 4);
	CHECK_OK(rx_submit_send(&s, DOCA_RDMA_JOB_SEND, sb, 0, 2));
	/* Two events, in the order the work queue finds them done: the SEND's and the receive's. */
	for (int i = 0, seen = 0; i < 2; i++) {
		CHECK_OK(rx_retrieve(&s, &ev, &res));
		CHECK(res.result == DOCA_SUCCESS && (ev.user_data.u64 == 1 || ev.user_data.u64 == 2));
		CHECK(!(seen & (1 << ev.user_data.u64)));
		seen |= 1 << ev.user_data.u64;
		if (ev.user_data.u64 == 1)
			CHECK(res.length == 15 && res.opcode == DOCA_RDMA_OPCODE_RECV_SEND);
	}
	CHECK(memcmp(s.mem, "pong from verbs", 15) == 0);
	CHECK(memcmp(s.mem + HALF, "pong from verbs", 15) == 0); /* its WRITE came before its SEND */
	CHECK(th_proc_send(p, "done") == 0);
	CHECK(th_proc_wait(p) == 0);
	doca_buf_refcount_rm(rb, NULL);
	doca_buf_refcount_rm(sb, NULL);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "vpeer") == 0)
		return role_vpeer();
	signal(SIGPIPE, SIG_IGN);
	RUN(test_verbs_peer);
	RUN(test_verbs_peer_in_another_process);
	return th_summary("test_rdma_verbs");
}
