/*
 * DOCA RDMA (doca_rdma.h, DOCA 2.2): properties, export and connect, every
 * job type between two contexts, polled and event-driven work queues, and
 * the bad input the library must refuse or report.
 */
#include <endian.h>
#include <poll.h>
#include <sys/mman.h>

#include "harness.h"
#include "rdma_fixture.h"
#include "th_proc.h"

#define HALF (RX_LEN / 2)
#define RW (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC)

static void rm(struct doca_buf *b)
{
	if (b != NULL)
		doca_buf_refcount_rm(b, NULL);
}

static void test_create_and_caps(void)
{
	struct doca_devinfo **list;
	struct doca_rdma_gid gid[2];
	uint32_t n, v = 0;
	struct doca_rdma *r;

	CHECK_ERR(doca_rdma_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_rdma_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_rdma_as_ctx(NULL) == NULL);
	CHECK_OK(doca_rdma_create(&r));
	CHECK(doca_rdma_as_ctx(r) != NULL);
	CHECK_OK(doca_rdma_destroy(r));

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	for (int t = DOCA_RDMA_JOB_RECV; t <= DOCA_RDMA_JOB_ATOMIC_FETCH_ADD; t++)
		CHECK_OK(doca_rdma_job_get_supported(list[0], (enum doca_rdma_job_types)t));
	CHECK_ERR(doca_rdma_job_get_supported(list[0], (enum doca_rdma_job_types)(DOCA_RDMA_JOB_RECV - 1)),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_rdma_job_get_supported(NULL, DOCA_RDMA_JOB_SEND), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_get_transport_type_supported(list[0], DOCA_RDMA_TRANSPORT_RC));
	CHECK_ERR(doca_rdma_get_transport_type_supported(list[0], DOCA_RDMA_TRANSPORT_DC), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_rdma_get_max_send_queue_size(list[0], &v));
	CHECK(v >= 64);
	CHECK_OK(doca_rdma_get_max_recv_queue_size(list[0], &v));
	CHECK(v >= 64);
	CHECK_OK(doca_rdma_get_max_message_size(list[0], &v));
	CHECK(v == 1u << 30);
	CHECK_OK(doca_rdma_get_max_buf_chain_len(list[0], DOCA_RDMA_JOB_SEND, DOCA_RDMA_TRANSPORT_RC, &v));
	CHECK(v == 3);
	CHECK_OK(doca_rdma_get_max_buf_chain_len(list[0], DOCA_RDMA_JOB_WRITE, DOCA_RDMA_TRANSPORT_RC, &v));
	CHECK(v == 2);
	CHECK_OK(doca_rdma_get_max_buf_chain_len(list[0], DOCA_RDMA_JOB_ATOMIC_FETCH_ADD, DOCA_RDMA_TRANSPORT_RC, &v));
	CHECK(v == 1);
	CHECK_OK(doca_rdma_get_max_buf_chain_len(list[0], DOCA_RDMA_JOB_RECV, DOCA_RDMA_TRANSPORT_RC, &v));
	CHECK(v == 16);
	CHECK_ERR(doca_rdma_get_max_buf_chain_len(list[0], DOCA_RDMA_JOB_SEND, DOCA_RDMA_TRANSPORT_DC, &v),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_rdma_get_max_message_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_get_gid_table_size(list[0], &v));
	CHECK(v >= 2);
	CHECK_OK(doca_rdma_get_gid(list[0], 0, 2, gid));
	CHECK_ERR(doca_rdma_get_gid(list[0], v, 1, gid), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_rdma_get_gid(list[0], 0, 0, gid), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_properties(void)
{
	struct rx_side s;
	enum doca_rdma_state st;
	enum doca_mtu_size mtu;
	uint32_t v;
	bool grh;

	CHECK(rx_open(&s, RW, 0, false, false) == 0);
	th_defer_local(rx_cleanup, &s);
	CHECK_OK(doca_rdma_get_permissions(s.rdma, &v));
	CHECK(v == DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK_ERR(doca_rdma_set_permissions(s.rdma, DOCA_ACCESS_DPU_READ_WRITE), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_set_permissions(s.rdma, DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_READ));
	CHECK_OK(doca_rdma_get_permissions(s.rdma, &v));
	CHECK(v == (DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_READ));
	CHECK_OK(doca_rdma_set_send_queue_size(s.rdma, 100));
	CHECK_OK(doca_rdma_get_send_queue_size(s.rdma, &v));
	CHECK(v == 128); /* rounded up to a power of two */
	CHECK_ERR(doca_rdma_set_send_queue_size(s.rdma, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_set_recv_queue_size(s.rdma, 16));
	CHECK_OK(doca_rdma_get_recv_queue_size(s.rdma, &v));
	CHECK(v == 16);
	CHECK_OK(doca_rdma_set_mtu(s.rdma, DOCA_MTU_SIZE_2K_BYTES));
	CHECK_OK(doca_rdma_get_mtu(s.rdma, &mtu));
	CHECK(mtu == DOCA_MTU_SIZE_2K_BYTES);
	CHECK_ERR(doca_rdma_set_mtu(s.rdma, DOCA_MTU_SIZE_RAW_ETHERNET), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_rdma_set_gid_index(s.rdma, 1));
	CHECK_OK(doca_rdma_get_gid_index(s.rdma, &v));
	CHECK(v == 1);
	CHECK_ERR(doca_rdma_set_gid_index(s.rdma, 100000), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_get_grh_enabled(s.rdma, &grh));
	CHECK(grh);
	CHECK_ERR(doca_rdma_set_grh_enabled(s.rdma, false), DOCA_ERROR_NOT_SUPPORTED); /* an Ethernet port */
	CHECK_OK(doca_rdma_set_grh_enabled(s.rdma, true));
	CHECK_OK(doca_rdma_set_transport_type(s.rdma, DOCA_RDMA_TRANSPORT_RC));
	CHECK_OK(doca_rdma_set_sl(s.rdma, 3));
	CHECK_OK(doca_rdma_get_sl(s.rdma, &v));
	CHECK(v == 3);
	CHECK_ERR(doca_rdma_set_sl(s.rdma, 16), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_set_recv_buf_chain_len(s.rdma, 3));
	CHECK_OK(doca_rdma_get_recv_buf_chain_len(s.rdma, &v));
	CHECK(v == 3);
	CHECK_ERR(doca_rdma_set_transport_type(s.rdma, DOCA_RDMA_TRANSPORT_DC), DOCA_ERROR_NOT_SUPPORTED);
	{
		enum doca_rdma_transport_type tt = DOCA_RDMA_TRANSPORT_DC;

		CHECK_OK(doca_rdma_get_transport_type(s.rdma, &tt));
		CHECK(tt == DOCA_RDMA_TRANSPORT_RC); /* the refused DC left RC in place */
		CHECK_ERR(doca_rdma_get_transport_type(NULL, &tt), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(doca_rdma_get_transport_type(s.rdma, NULL), DOCA_ERROR_INVALID_VALUE);
	}
	CHECK_OK(doca_rdma_get_state(s.rdma, &st));
	CHECK(st == DOCA_RDMA_STATE_RESET);
	CHECK_OK(doca_ctx_start(s.ctx));
	CHECK_OK(doca_rdma_get_state(s.rdma, &st));
	CHECK(st == DOCA_RDMA_STATE_INIT);
	CHECK_ERR(doca_rdma_set_sl(s.rdma, 1), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_rdma_set_permissions(s.rdma, DOCA_ACCESS_RDMA_READ), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_rdma_destroy(s.rdma), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_ctx_stop(s.ctx));
	CHECK_OK(doca_rdma_get_state(s.rdma, &st));
	CHECK(st == DOCA_RDMA_STATE_RESET);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

/* A fresh context has no device: getters are BAD_STATE, as documented. */
static void test_getters_need_a_device(void)
{
	struct doca_rdma *r;
	uint32_t v;

	CHECK_OK(doca_rdma_create(&r));
	CHECK_ERR(doca_rdma_get_permissions(r, &v), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_rdma_set_permissions(r, DOCA_ACCESS_RDMA_READ), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_rdma_get_send_queue_size(r, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_rdma_destroy(r));
}

struct rx_pair_fx {
	struct rx_side a, b;
};

static void pair_cleanup(void *p)
{
	struct rx_pair_fx *x = p;

	rx_close(&x->a);
	rx_close(&x->b);
}

/* a and b connected; a imported b's memory. b's context takes remote operations with bperm. */
static int pair_open(struct rx_pair_fx *x, uint32_t bperm, bool evd)
{
	memset(x, 0, sizeof(*x));
	if (rx_open(&x->a, RW, RW, true, evd) != 0 || rx_open(&x->b, RW, bperm, true, evd) != 0)
		return -1;
	if (rx_pair(&x->a, &x->b) != DOCA_SUCCESS || rx_share(&x->a, &x->b) != DOCA_SUCCESS)
		return -2;
	return 0;
}

static void test_export_connect_states(void)
{
	struct rx_side s, t;
	const void *d;
	size_t l;
	struct doca_buf *b;
	enum doca_rdma_state st;

	CHECK(rx_open(&s, RW, RW, false, false) == 0);
	th_defer_local(rx_cleanup, &s);
	CHECK_ERR(doca_rdma_export(s.rdma, &d, &l), DOCA_ERROR_BAD_STATE); /* before start */
	CHECK(rx_open(&t, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &t);
	CHECK_OK(doca_rdma_export(t.rdma, &d, &l));
	CHECK_ERR(doca_rdma_connect(s.rdma, d, l), DOCA_ERROR_BAD_STATE); /* before start */
	CHECK_ERR(doca_rdma_export(t.rdma, NULL, &l), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_rdma_connect(t.rdma, NULL, l), DOCA_ERROR_INVALID_VALUE);
	/* Jobs on a started, unconnected context. */
	b = rx_buf(&t, 0, 64, 64);
	CHECK(b != NULL);
	CHECK_ERR(rx_submit_send(&t, DOCA_RDMA_JOB_SEND, b, 0, 1), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(rx_submit_recv(&t, b, 1), DOCA_ERROR_BAD_STATE);
	rm(b);
	CHECK_OK(doca_ctx_start(s.ctx));
	CHECK_OK(doca_rdma_connect(s.rdma, d, l));
	CHECK_OK(doca_rdma_get_state(s.rdma, &st));
	CHECK(st == DOCA_RDMA_STATE_CONNECTED);
	CHECK_ERR(doca_rdma_connect(s.rdma, d, l), DOCA_ERROR_BAD_STATE); /* already connected */
	th_undefer(rx_cleanup, &t);
	rx_close(&t);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

/* Descriptors that are not a peer's: truncated, altered, an mmap export, a peer that is gone. */
static void test_bad_descriptors(void)
{
	struct rx_side s, t;
	const void *d, *md;
	size_t l, ml;
	uint8_t copy[256];

	CHECK(rx_open(&s, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &s);
	CHECK(rx_open(&t, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &t);
	CHECK_OK(doca_rdma_export(t.rdma, &d, &l));
	CHECK(l <= sizeof(copy));
	memcpy(copy, d, l);
	CHECK_ERR(doca_rdma_connect(s.rdma, copy, l - 1), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK_ERR(doca_rdma_connect(s.rdma, copy, 0), DOCA_ERROR_CONNECTION_ABORTED);
	for (size_t i = 0; i < l; i += 7) {
		copy[i] ^= 0x40;
		CHECK_ERR(doca_rdma_connect(s.rdma, copy, l), DOCA_ERROR_CONNECTION_ABORTED);
		copy[i] ^= 0x40;
	}
	CHECK_OK(doca_mmap_export_rdma(t.mmap, t.dev, &md, &ml));
	CHECK_ERR(doca_rdma_connect(s.rdma, md, ml), DOCA_ERROR_CONNECTION_ABORTED);
	/* The peer stopped: its QP is gone. */
	CHECK_OK(doca_ctx_workq_rm(t.ctx, t.wq));
	CHECK_OK(doca_ctx_stop(t.ctx));
	CHECK_ERR(doca_rdma_connect(s.rdma, copy, l), DOCA_ERROR_CONNECTION_ABORTED);
	th_undefer(rx_cleanup, &t);
	rx_close(&t);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

static void test_write_then_read(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *dst, *rdst, *rsrc;
	struct doca_rdma_result res;
	struct doca_event ev;
	size_t dlen;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	for (size_t i = 0; i < 1000; i++)
		x.a.mem[i] = (uint8_t)(i * 13 + 1);
	src = rx_buf(&x.a, 0, 1000, 1000);
	rdst = rx_rbuf(&x.a, HALF, 1000, 0);
	CHECK(src != NULL && rdst != NULL);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 0x77));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_WRITE);
	CHECK(ev.user_data.u64 == 0x77);
	CHECK(res.result == DOCA_SUCCESS);
	CHECK(res.length == 0);
	CHECK(memcmp(x.b.mem + HALF, x.a.mem, 1000) == 0);
	CHECK(x.b.mem[HALF + 1000] == 0);
	/* Read it back into a's buffer at 1024, over the 4 bytes of data it held: the data becomes what was read. */
	rsrc = rx_rbuf(&x.a, HALF, 1000, 1000);
	dst = rx_buf(&x.a, 1024, 1004, 4);
	CHECK(rsrc != NULL && dst != NULL);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_READ, dst, rsrc, 0, 0x78));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_READ);
	CHECK(ev.user_data.u64 == 0x78);
	CHECK(res.result == DOCA_SUCCESS);
	CHECK(memcmp(x.a.mem + 1024, x.a.mem, 1000) == 0);
	CHECK(x.a.mem[2024] == 0);
	CHECK_OK(doca_buf_get_data_len(dst, &dlen));
	CHECK(dlen == 1000);
	rm(src);
	rm(dst);
	rm(rdst);
	rm(rsrc);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/*
 * Local chains (two elements, doca_rdma_get_max_buf_chain_len): a READ
 * scatters over the chain's room in order, each element's data length
 * becoming what landed in it; a WRITE gathers the chain's data; a READ
 * larger than the chain's room is refused.
 */
static void test_chains_scatter_gather(void)
{
	struct rx_pair_fx x;
	struct doca_buf *d1, *d2, *s1, *s2, *rsrc, *big, *rdst;
	struct doca_rdma_result res;
	struct doca_event ev;
	size_t l1, l2;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	for (size_t i = 0; i < 400; i++)
		x.b.mem[HALF + i] = (uint8_t)(i * 7 + 3);
	d1 = rx_buf(&x.a, 0, 64, 0);
	d2 = rx_buf(&x.a, 512, 266, 10); /* written from its data's start, over the 10 bytes: room 266 */
	rsrc = rx_rbuf(&x.a, HALF, 200, 200);
	big = rx_rbuf(&x.a, HALF, 400, 400);
	CHECK(d1 != NULL && d2 != NULL && rsrc != NULL && big != NULL);
	CHECK_OK(doca_buf_chain_list(d1, d2));
	CHECK_ERR(rx_submit_rw(&x.a, DOCA_RDMA_JOB_READ, d1, big, 0, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_READ, d1, rsrc, 0, 2));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.user_data.u64 == 2 && res.result == DOCA_SUCCESS);
	CHECK(memcmp(x.a.mem, x.b.mem + HALF, 64) == 0);
	CHECK(memcmp(x.a.mem + 512, x.b.mem + HALF + 64, 136) == 0);
	CHECK(x.a.mem[64] == 0 && x.a.mem[512 + 136] == 0);
	CHECK_OK(doca_buf_get_data_len(d1, &l1));
	CHECK_OK(doca_buf_get_data_len(d2, &l2));
	CHECK(l1 == 64 && l2 == 136);
	/* Gather: 30 and 50 bytes of two buffers, written as one run. */
	memset(x.a.mem + 1024, 0xa1, 30);
	memset(x.a.mem + 1100, 0xb2, 50);
	s1 = rx_buf(&x.a, 1024, 30, 30);
	s2 = rx_buf(&x.a, 1100, 50, 50);
	rdst = rx_rbuf(&x.a, HALF + 1024, 100, 0);
	CHECK(s1 != NULL && s2 != NULL && rdst != NULL);
	CHECK_OK(doca_buf_chain_list(s1, s2));
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, s1, 0, 3));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.user_data.u64 == 3 && res.result == DOCA_SUCCESS);
	CHECK(memcmp(x.b.mem + HALF + 1024, x.a.mem + 1024, 30) == 0);
	CHECK(memcmp(x.b.mem + HALF + 1054, x.a.mem + 1100, 50) == 0);
	CHECK(x.b.mem[HALF + 1104] == 0);
	rm(d1); /* a list head: the whole list */
	rm(s1);
	rm(rsrc);
	rm(big);
	rm(rdst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

static void test_send_recv_and_immediates(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *dst, *dst2, *rdst;
	struct doca_rdma_result res;
	struct doca_event ev;
	size_t dlen;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	memcpy(x.a.mem, "Hi DOCA RDMA!", 14);
	src = rx_buf(&x.a, 0, 14, 14);
	dst = rx_buf(&x.b, 0, 64, 0);
	dst2 = rx_buf(&x.b, 64, 64, 64); /* all data, as a buffer taken by data: the receive overwrites it */
	CHECK(src != NULL && dst != NULL && dst2 != NULL);
	CHECK_OK(rx_submit_recv(&x.b, dst, 1));
	CHECK_OK(rx_submit_recv(&x.b, dst2, 2));
	CHECK_OK(rx_submit_recv(&x.b, NULL, 3)); /* no buffer: for the WRITE with immediate */
	CHECK_OK(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, src, 0, 10));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_SEND && ev.user_data.u64 == 10 && res.result == DOCA_SUCCESS);
	CHECK_OK(rx_retrieve(&x.b, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_RECV && ev.user_data.u64 == 1);
	CHECK(res.result == DOCA_SUCCESS);
	CHECK(res.opcode == DOCA_RDMA_OPCODE_RECV_SEND);
	CHECK(res.length == 14);
	CHECK(memcmp(x.b.mem, "Hi DOCA RDMA!", 14) == 0);
	CHECK_OK(doca_buf_get_data_len(dst, &dlen));
	CHECK(dlen == 14);

	CHECK_OK(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND_IMM, src, htobe32(0xabcdef01), 11));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_SEND_IMM && res.result == DOCA_SUCCESS);
	CHECK_OK(rx_retrieve(&x.b, &ev, &res));
	CHECK(ev.user_data.u64 == 2);
	CHECK(res.opcode == DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
	CHECK(res.immediate_data == htobe32(0xabcdef01));
	CHECK(res.length == 14);
	CHECK(memcmp(x.b.mem + 64, "Hi DOCA RDMA!", 14) == 0);
	CHECK_OK(doca_buf_get_data_len(dst2, &dlen));
	CHECK(dlen == 14);

	rdst = rx_rbuf(&x.a, HALF, 64, 0);
	CHECK(rdst != NULL);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE_IMM, rdst, src, htobe32(0x1234), 12));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_WRITE_IMM && res.result == DOCA_SUCCESS);
	CHECK_OK(rx_retrieve(&x.b, &ev, &res));
	CHECK(ev.user_data.u64 == 3);
	CHECK(res.opcode == DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	CHECK(res.immediate_data == htobe32(0x1234));
	CHECK(memcmp(x.b.mem + HALF, "Hi DOCA RDMA!", 14) == 0);
	CHECK(res.result == DOCA_SUCCESS && res.length == 14);
	rm(src);
	rm(dst);
	rm(dst2);
	rm(rdst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* A SEND submitted before the peer's receive completes once the receive is posted (RNR retried). */
/* An RC context ignores a job's rdma_peer_addr and a WRITE's immediate_data (DOCA 2.2's samples leave them unset). */
static void test_unset_fields_ignored(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *rdst;
	struct doca_rdma_job_read_write j;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	memset(x.a.mem, 0x42, 32);
	src = rx_buf(&x.a, 0, 32, 32);
	rdst = rx_rbuf(&x.a, HALF, 32, 0);
	CHECK(src != NULL && rdst != NULL);
	memset(&j, 0xa5, sizeof(j)); /* what a stack struct may hold */
	j.base.ctx = x.a.ctx;
	j.base.type = DOCA_RDMA_JOB_WRITE;
	j.base.flags = DOCA_JOB_FLAGS_NONE;
	j.base.user_data.u64 = 3;
	j.src_buff = src;
	j.dst_buff = rdst;
	CHECK_OK(doca_workq_submit(x.a.wq, &j.base));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.user_data.u64 == 3 && res.result == DOCA_SUCCESS);
	CHECK(x.b.mem[HALF] == 0x42 && x.b.mem[HALF + 31] == 0x42 && x.b.mem[HALF + 32] == 0);
	rm(src);
	rm(rdst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

static void test_send_waits_for_receive(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *dst;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	memset(x.a.mem, 0x5a, 100);
	src = rx_buf(&x.a, 0, 100, 100);
	dst = rx_buf(&x.b, 0, 100, 0);
	CHECK(src != NULL && dst != NULL);
	CHECK_OK(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, src, 0, 1));
	CHECK_ERR(doca_workq_progress_retrieve(x.a.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	CHECK_OK(rx_submit_recv(&x.b, dst, 2));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK_OK(rx_retrieve(&x.b, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS && res.length == 100);
	CHECK(x.b.mem[0] == 0x5a && x.b.mem[99] == 0x5a && x.b.mem[100] == 0);
	rm(src);
	rm(dst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

static void test_atomics(void)
{
	struct rx_pair_fx x;
	struct doca_buf *t, *r1, *r2, *r3;
	struct doca_rdma_result res;
	struct doca_event ev;
	uint64_t v = 40, got;
	size_t dlen;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	memcpy(x.b.mem + HALF, &v, 8);
	t = rx_rbuf(&x.a, HALF, 8, 8);
	r1 = rx_buf(&x.a, 0, 8, 0);
	r2 = rx_buf(&x.a, 8, 8, 0);
	r3 = rx_buf(&x.a, 16, 8, 0);
	CHECK(t != NULL && r1 != NULL && r2 != NULL && r3 != NULL);
	CHECK_OK(rx_submit_atomic(&x.a, DOCA_RDMA_JOB_ATOMIC_FETCH_ADD, t, r1, 2, 0, 1));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_ATOMIC_FETCH_ADD && res.result == DOCA_SUCCESS);
	memcpy(&got, x.a.mem, 8);
	CHECK(got == 40);
	CHECK_OK(doca_buf_get_data_len(r1, &dlen));
	CHECK(dlen == 8);
	memcpy(&got, x.b.mem + HALF, 8);
	CHECK(got == 42);
	/* Compare fails (41 != 42): nothing swapped, the old value returned. */
	CHECK_OK(rx_submit_atomic(&x.a, DOCA_RDMA_JOB_ATOMIC_CMP_SWP, t, r2, 7, 41, 2));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	memcpy(&got, x.a.mem + 8, 8);
	CHECK(got == 42);
	memcpy(&got, x.b.mem + HALF, 8);
	CHECK(got == 42);
	CHECK_OK(rx_submit_atomic(&x.a, DOCA_RDMA_JOB_ATOMIC_CMP_SWP, t, r3, 7, 42, 3));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.type == DOCA_RDMA_JOB_ATOMIC_CMP_SWP && ev.user_data.u64 == 3 && res.result == DOCA_SUCCESS);
	memcpy(&got, x.a.mem + 16, 8);
	CHECK(got == 42);
	memcpy(&got, x.b.mem + HALF, 8);
	CHECK(got == 7);
	rm(t);
	rm(r1);
	rm(r2);
	rm(r3);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/*
 * A write to a context that does not take remote writes: the job fails with
 * the remote access error as DOCA_ERROR_NOT_PERMITTED, nothing is written,
 * and the connection is in error, as RC's is after such an error.
 */
static void test_permission_violated(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *rdst, *src2;
	struct doca_rdma_result res;
	struct doca_event ev;
	enum doca_rdma_state st;

	CHECK(pair_open(&x, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ, false) == 0);
	th_defer_local(pair_cleanup, &x);
	memset(x.a.mem, 0x11, 64);
	src = rx_buf(&x.a, 0, 64, 64);
	src2 = rx_buf(&x.a, 64, 64, 64);
	rdst = rx_rbuf(&x.a, HALF, 64, 0);
	CHECK(src != NULL && rdst != NULL && src2 != NULL);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 5));
	CHECK_ERR(rx_retrieve(&x.a, &ev, &res), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_RDMA_JOB_WRITE && ev.user_data.u64 == 5);
	CHECK(res.result == DOCA_ERROR_NOT_PERMITTED);
	CHECK(x.b.mem[HALF] == 0 && x.b.mem[HALF + 63] == 0);
	CHECK_OK(doca_rdma_get_state(x.a.rdma, &st));
	CHECK(st == DOCA_RDMA_STATE_ERROR);
	/* What is submitted after the error is flushed. */
	CHECK_OK(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, src2, 0, 6));
	CHECK_ERR(rx_retrieve(&x.a, &ev, &res), DOCA_ERROR_IO_FAILED);
	CHECK(ev.user_data.u64 == 6 && res.result == DOCA_ERROR_NOT_CONNECTED);
	rm(src);
	rm(src2);
	rm(rdst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* The memory's own rights: an mmap exported without RDMA write refuses the write the same way. */
static void test_mmap_permission_violated(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *rdst;
	struct doca_rdma_result res;
	struct doca_event ev;

	memset(&x, 0, sizeof(x));
	th_defer_local(pair_cleanup, &x);
	CHECK(rx_open(&x.a, RW, RW, true, false) == 0);
	CHECK(rx_open(&x.b, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ, RW, true, false) == 0);
	CHECK_OK(rx_pair(&x.a, &x.b));
	CHECK_OK(rx_share(&x.a, &x.b));
	src = rx_buf(&x.a, 0, 64, 64);
	rdst = rx_rbuf(&x.a, HALF, 64, 0);
	CHECK(src != NULL && rdst != NULL);
	memset(x.a.mem, 0x22, 64);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 9));
	CHECK_ERR(rx_retrieve(&x.a, &ev, &res), DOCA_ERROR_IO_FAILED);
	CHECK(res.result == DOCA_ERROR_NOT_PERMITTED);
	CHECK(x.b.mem[HALF] == 0);
	rm(src);
	rm(rdst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* Jobs refused at submit: malformed, chains too long, an atomic's result without room. */
static void test_bad_jobs(void)
{
	struct rx_pair_fx x;
	struct doca_buf *b, *c, *d, *e, *r, *small;
	struct doca_rdma_job_recv jr;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	b = rx_buf(&x.a, 0, 16, 16);
	c = rx_buf(&x.a, 16, 16, 16);
	d = rx_buf(&x.a, 32, 16, 16);
	e = rx_buf(&x.a, 48, 16, 16);
	r = rx_rbuf(&x.a, HALF, 8, 8);
	CHECK(b != NULL && c != NULL && d != NULL && e != NULL && r != NULL);
	CHECK_ERR(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, NULL, 0, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(rx_submit_send(&x.a, DOCA_RDMA_JOB_RECV - 1, b, 0, 1), DOCA_ERROR_INVALID_VALUE);
	/* Receive chain longer than recv_buf_chain_len (1). */
	CHECK_OK(doca_buf_chain_list(b, c));
	jr = (struct doca_rdma_job_recv){ .base = { .type = DOCA_RDMA_JOB_RECV, .ctx = x.a.ctx }, .dst_buff = b };
	CHECK_ERR(doca_workq_submit(x.a.wq, &jr.base), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_chain_list(b, d));
	CHECK_OK(doca_buf_chain_list(b, e));
	CHECK_ERR(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, b, 0, 1), DOCA_ERROR_INVALID_VALUE); /* 4 > 3 */
	/* Atomic result buffer without room for 8 bytes. */
	small = rx_buf(&x.a, 100, 4, 0);
	CHECK(small != NULL);
	CHECK_ERR(rx_submit_atomic(&x.a, DOCA_RDMA_JOB_ATOMIC_FETCH_ADD, r, small, 1, 0, 1), DOCA_ERROR_INVALID_VALUE);
	/* Nothing was queued. */
	{
		struct doca_event ev;

		CHECK_ERR(doca_workq_progress_retrieve(x.a.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	}
	rm(b); /* the list head releases the list */
	rm(r);
	rm(small);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/*
 * A refused job takes nothing: after more refusals of every kind than the
 * context has job states and ring slots (a READ whose destination cannot
 * take the source, a buffer already freed, a WRITE whose remote side is a
 * chain), a full queue of WRITEs and a READ still run and land byte for byte.
 */
static void test_refused_jobs_take_nothing(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *rdst, *small, *gone, *rsrc, *dst, *chain2;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(pair_open(&x, RW, false) == 0);
	th_defer_local(pair_cleanup, &x);
	for (size_t i = 0; i < 64; i++)
		x.a.mem[i] = (uint8_t)(i * 7 + 3);
	src = rx_buf(&x.a, 0, 64, 64);
	rdst = rx_rbuf(&x.a, HALF, 64, 0);
	rsrc = rx_rbuf(&x.a, HALF, 64, 64);
	small = rx_buf(&x.a, 256, 16, 0);
	dst = rx_buf(&x.a, 512, 64, 0);
	gone = rx_buf(&x.a, 128, 16, 16);
	chain2 = rx_rbuf(&x.a, HALF + 128, 16, 0);
	CHECK(src != NULL && rdst != NULL && rsrc != NULL && small != NULL && dst != NULL && gone != NULL &&
	      chain2 != NULL);
	rm(gone); /* its refcount is 0: a job naming it is refused */
	CHECK_OK(doca_buf_chain_list(rdst, chain2));
	for (int i = 0; i < 1000; i++) {
		CHECK_ERR(rx_submit_rw(&x.a, DOCA_RDMA_JOB_READ, small, rsrc, 0, 1), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, gone, 0, 2), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 3), DOCA_ERROR_INVALID_VALUE);
	}
	CHECK_ERR(doca_workq_progress_retrieve(x.a.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_buf_unchain_list(rdst, chain2));
	for (uint64_t i = 0; i < 32; i++)
		CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 100 + i));
	for (uint64_t i = 0; i < 32; i++) {
		CHECK_OK(rx_retrieve(&x.a, &ev, &res));
		CHECK(ev.type == DOCA_RDMA_JOB_WRITE && ev.user_data.u64 == 100 + i && res.result == DOCA_SUCCESS);
	}
	CHECK(memcmp(x.b.mem + HALF, x.a.mem, 64) == 0);
	CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_READ, dst, rsrc, 0, 200));
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(ev.user_data.u64 == 200 && res.result == DOCA_SUCCESS);
	CHECK(memcmp(x.a.mem + 512, x.a.mem, 64) == 0);
	rm(src);
	rm(rdst);
	rm(chain2);
	rm(rsrc);
	rm(small);
	rm(dst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* More receives than the receive queue holds: NO_MEMORY until one completes. */
static void test_queue_full(void)
{
	struct rx_side a, b;
	struct doca_buf *bufs[5];
	uint32_t n = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	th_defer_local(rx_cleanup, &a);
	th_defer_local(rx_cleanup, &b);
	CHECK(rx_open(&a, RW, RW, false, false) == 0);
	CHECK_OK(doca_rdma_set_recv_queue_size(a.rdma, 4));
	CHECK_OK(doca_ctx_start(a.ctx));
	CHECK_OK(doca_workq_create(32, &a.wq));
	CHECK_OK(doca_ctx_workq_add(a.ctx, a.wq));
	CHECK(rx_open(&b, RW, RW, true, false) == 0);
	CHECK_OK(rx_pair(&a, &b));
	for (n = 0; n < 5; n++) {
		bufs[n] = rx_buf(&a, n * 16, 16, 0);
		CHECK(bufs[n] != NULL);
	}
	for (n = 0; n < 4; n++)
		CHECK_OK(rx_submit_recv(&a, bufs[n], n));
	CHECK_ERR(rx_submit_recv(&a, bufs[4], 4), DOCA_ERROR_NO_MEMORY);
	/* Stopping with jobs pending is refused; the peer going away flushes them. */
	CHECK_ERR(doca_ctx_workq_rm(a.ctx, a.wq), DOCA_ERROR_NOT_PERMITTED);
	th_undefer(rx_cleanup, &b);
	rx_close(&b);
	th_undefer(rx_cleanup, &a);
	for (n = 0; n < 5; n++)
		rm(bufs[n]);
	/* a's receives are still posted: its context cannot leave the work queue; move it to error first. */
	{
		struct doca_event ev;
		struct doca_rdma_result res;

		/* A send to the stopped peer fails and takes the receives with it. */
		struct doca_buf *s = rx_buf(&a, 256, 16, 16);

		CHECK(s != NULL);
		CHECK_OK(rx_submit_send(&a, DOCA_RDMA_JOB_SEND, s, 0, 9));
		/* The send fails (its peer gone), the QP goes to error and flushes the receives. */
		for (int i = 0, seen = 0; i < 5; i++) {
			CHECK_ERR(rx_retrieve(&a, &ev, &res), DOCA_ERROR_IO_FAILED);
			CHECK(ev.user_data.u64 <= 3 || ev.user_data.u64 == 9);
			CHECK(res.result == (ev.user_data.u64 == 9 ? DOCA_ERROR_CONNECTION_ABORTED : DOCA_ERROR_NOT_CONNECTED));
			CHECK(!(seen & (1 << (ev.user_data.u64 & 15))));
			seen |= 1 << (ev.user_data.u64 & 15);
		}
		rm(s);
	}
	rx_close(&a);
}

/*
 * A receive whose message has come holds no room in the receive queue,
 * retrieved or not: with a queue of one, a second receive is posted while
 * the first waits to be retrieved, and both are retrieved in order.
 */
static void test_completed_jobs_hold_no_slot(void)
{
	struct rx_side a, b;
	struct doca_buf *r1, *r2, *s1, *s2;
	struct doca_rdma_result res;
	struct doca_event ev;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	th_defer_local(rx_cleanup, &a);
	th_defer_local(rx_cleanup, &b);
	CHECK(rx_open(&a, RW, RW, false, false) == 0);
	CHECK_OK(doca_rdma_set_recv_queue_size(a.rdma, 1));
	CHECK_OK(doca_ctx_start(a.ctx));
	CHECK_OK(doca_workq_create(32, &a.wq));
	CHECK_OK(doca_ctx_workq_add(a.ctx, a.wq));
	CHECK(rx_open(&b, RW, RW, true, false) == 0);
	CHECK_OK(rx_pair(&a, &b));
	r1 = rx_buf(&a, 0, 16, 0);
	r2 = rx_buf(&a, 16, 16, 0);
	memcpy(b.mem, "first", 5);
	memcpy(b.mem + 16, "second", 6);
	s1 = rx_buf(&b, 0, 5, 5);
	s2 = rx_buf(&b, 16, 6, 6);
	CHECK(r1 != NULL && r2 != NULL && s1 != NULL && s2 != NULL);
	CHECK_OK(rx_submit_recv(&a, r1, 1));
	CHECK_ERR(rx_submit_recv(&a, r2, 2), DOCA_ERROR_NO_MEMORY); /* the one slot holds r1 */
	CHECK_OK(rx_submit_send(&b, DOCA_RDMA_JOB_SEND, s1, 0, 11));
	CHECK_OK(rx_retrieve(&b, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK_OK(rx_submit_recv(&a, r2, 2)); /* r1 completed, not yet retrieved */
	CHECK_OK(rx_submit_send(&b, DOCA_RDMA_JOB_SEND, s2, 0, 12));
	CHECK_OK(rx_retrieve(&b, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK_OK(rx_retrieve(&a, &ev, &res));
	CHECK(ev.user_data.u64 == 1 && res.result == DOCA_SUCCESS && res.length == 5);
	CHECK_OK(rx_retrieve(&a, &ev, &res));
	CHECK(ev.user_data.u64 == 2 && res.result == DOCA_SUCCESS && res.length == 6);
	CHECK(memcmp(a.mem, "first", 5) == 0 && memcmp(a.mem + 16, "second", 6) == 0);
	rm(r1);
	rm(r2);
	rm(s1);
	rm(s2);
	th_undefer(rx_cleanup, &b);
	rx_close(&b);
	th_undefer(rx_cleanup, &a);
	rx_close(&a);
}

/*
 * A queue full of jobs completes each one in order with its own status: all
 * 28 WRITEs land; then, of a second batch, the jobs before a READ the peer
 * does not permit succeed, the READ fails NOT_PERMITTED and the rest are
 * flushed (NOT_CONNECTED).
 */
static void test_full_queue_in_order(void)
{
	enum { N = 28, BAD = 20 }; /* more than the 16 WQEs a CQE is asked for (a 64-entry send queue) */
	struct rx_pair_fx x;
	struct doca_buf *src[N], *dst[N], *rsrc;
	struct doca_rdma_result res;
	struct doca_event ev;
	doca_error_t want;

	CHECK(pair_open(&x, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE, false) == 0);
	th_defer_local(pair_cleanup, &x);
	for (int i = 0; i < N; i++) {
		memset(x.a.mem + i * 8, 0x40 + i, 8);
		src[i] = rx_buf(&x.a, (size_t)i * 8, 8, 8);
		dst[i] = rx_rbuf(&x.a, HALF + (size_t)i * 8, 8, 0);
		CHECK(src[i] != NULL && dst[i] != NULL);
	}
	for (int i = 0; i < N; i++)
		CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, dst[i], src[i], 0, (uint64_t)i));
	for (int i = 0; i < N; i++) {
		CHECK_OK(rx_retrieve(&x.a, &ev, &res));
		CHECK(ev.user_data.u64 == (uint64_t)i && res.result == DOCA_SUCCESS);
	}
	CHECK(memcmp(x.b.mem + HALF, x.a.mem, N * 8) == 0);
	memset(x.b.mem + HALF, 0, N * 8);
	rsrc = rx_rbuf(&x.a, HALF + N * 8, 8, 8); /* 8 bytes to read: a zero-length READ checks no key */
	CHECK(rsrc != NULL);
	for (int i = 0; i < N; i++) {
		int type = i == BAD ? DOCA_RDMA_JOB_READ : DOCA_RDMA_JOB_WRITE;

		CHECK_OK(i == BAD ? rx_submit_rw(&x.a, type, src[i], rsrc, 0, (uint64_t)i)
				  : rx_submit_rw(&x.a, type, dst[i], src[i], 0, (uint64_t)i));
	}
	for (int i = 0; i < N; i++) {
		want = i < BAD ? DOCA_SUCCESS : i == BAD ? DOCA_ERROR_NOT_PERMITTED : DOCA_ERROR_NOT_CONNECTED;
			CHECK_ERR(rx_retrieve(&x.a, &ev, &res), i < BAD ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED);
		CHECK(ev.user_data.u64 == (uint64_t)i && res.result == want);
	}
	CHECK(memcmp(x.b.mem + HALF, x.a.mem, BAD * 8) == 0 && x.b.mem[HALF + BAD * 8] == 0);
	rm(rsrc);
	for (int i = 0; i < N; i++) {
		rm(src[i]);
		rm(dst[i]);
	}
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* An event-driven queue is woken for each of several WRITEs in flight, the last one's too. */
static void test_event_driven_writes(void)
{
	enum { N = 3 };
	struct rx_pair_fx x;
	struct doca_buf *src, *dst[N];
	struct doca_event ev = { 0 }; /* result.ptr NULL: no doca_rdma_result wanted */
	doca_event_handle_t h;
	struct pollfd p;
	doca_error_t r;

	CHECK(pair_open(&x, RW, true) == 0);
	th_defer_local(pair_cleanup, &x);
	memcpy(x.a.mem, "woken", 5);
	src = rx_buf(&x.a, 0, 5, 5);
	CHECK(src != NULL);
	for (int i = 0; i < N; i++) {
		dst[i] = rx_rbuf(&x.a, HALF + (size_t)i * 8, 8, 0);
		CHECK(dst[i] != NULL);
		CHECK_OK(rx_submit_rw(&x.a, DOCA_RDMA_JOB_WRITE, dst[i], src, 0, (uint64_t)i));
	}
	CHECK_OK(doca_workq_get_event_handle(x.a.wq, &h));
	for (int i = 0; i < N; i++) {
		while ((r = doca_workq_progress_retrieve(x.a.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN) {
			CHECK_OK(doca_workq_event_handle_arm(x.a.wq));
			p = (struct pollfd){ .fd = h, .events = POLLIN };
			if (poll(&p, 1, 10000) != 1)
				break; /* a hang: the check below fails */
			CHECK_OK(doca_workq_event_handle_clear(x.a.wq, h));
		}
		CHECK_OK(r);
		CHECK(ev.user_data.u64 == (uint64_t)i);
		CHECK(memcmp(x.b.mem + HALF + i * 8, "woken", 5) == 0);
	}
	rm(src);
	for (int i = 0; i < N; i++)
		rm(dst[i]);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/* The event handle signals when a job's completion arrives; nothing before. */
static void test_event_driven(void)
{
	struct rx_pair_fx x;
	struct doca_buf *src, *dst;
	struct doca_rdma_result res;
	struct doca_event ev;
	doca_event_handle_t h;
	struct pollfd p;

	CHECK(pair_open(&x, RW, true) == 0);
	th_defer_local(pair_cleanup, &x);
	memcpy(x.a.mem, "event", 5);
	src = rx_buf(&x.a, 0, 5, 5);
	dst = rx_buf(&x.b, 0, 16, 0);
	CHECK(src != NULL && dst != NULL);
	CHECK_OK(doca_workq_get_event_handle(x.b.wq, &h));
	CHECK_OK(rx_submit_recv(&x.b, dst, 1));
	CHECK_ERR(doca_workq_progress_retrieve(x.b.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_workq_event_handle_arm(x.b.wq));
	p = (struct pollfd){ .fd = h, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0); /* nothing has come */
	CHECK_OK(rx_submit_send(&x.a, DOCA_RDMA_JOB_SEND, src, 0, 2));
	CHECK(poll(&p, 1, 10000) == 1);
	CHECK_OK(doca_workq_event_handle_clear(x.b.wq, h));
	CHECK_OK(rx_retrieve(&x.b, &ev, &res));
	CHECK(ev.user_data.u64 == 1 && res.result == DOCA_SUCCESS && res.length == 5);
	CHECK(memcmp(x.b.mem, "event", 5) == 0);
	CHECK_OK(rx_retrieve(&x.a, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	rm(src);
	rm(dst);
	th_undefer(pair_cleanup, &x);
	pair_cleanup(&x);
}

/*
 * Another device: with a topology of an Ethernet and an InfiniBand function
 * (the "devices" role), a descriptor of the InfiniBand port's context is
 * refused by the Ethernet one, and a job naming a buffer whose mmap is on the
 * other device fails with the local protection error.
 */
static int open_on(struct rx_side *s, struct doca_devinfo *info)
{
	memset(s, 0, sizeof(*s));
	s->mem = calloc(1, RX_LEN);
	if (s->mem == NULL || doca_dev_open(info, &s->dev) != DOCA_SUCCESS)
		return -1;
	if (doca_mmap_create(NULL, &s->mmap) != DOCA_SUCCESS || doca_mmap_dev_add(s->mmap, s->dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(s->mmap, s->mem, RX_LEN) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(s->mmap, RW) != DOCA_SUCCESS || doca_mmap_start(s->mmap) != DOCA_SUCCESS ||
	    doca_buf_inventory_create(NULL, 16, 0, &s->inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(s->inv) != DOCA_SUCCESS || doca_rdma_create(&s->rdma) != DOCA_SUCCESS)
		return -2;
	s->ctx = doca_rdma_as_ctx(s->rdma);
	if (doca_ctx_dev_add(s->ctx, s->dev) != DOCA_SUCCESS || doca_rdma_set_permissions(s->rdma, RW) != 0 ||
	    doca_ctx_start(s->ctx) != DOCA_SUCCESS || doca_workq_create(8, &s->wq) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(s->ctx, s->wq) != DOCA_SUCCESS)
		return -3;
	return 0;
}

static int role_devices(void)
{
	struct doca_devinfo **list;
	struct rx_side e, e2, ib;
	struct doca_buf *foreign;
	struct doca_rdma_result res;
	struct doca_event ev;
	const void *d;
	size_t l;
	uint32_t n;
	int rc = 0;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n != 2)
		return 1;
	if (open_on(&e, list[0]) != 0 || open_on(&e2, list[0]) != 0 || open_on(&ib, list[1]) != 0)
		return 2;
	if (doca_rdma_export(ib.rdma, &d, &l) != DOCA_SUCCESS)
		return 3;
	if (doca_rdma_connect(e.rdma, d, l) != DOCA_ERROR_CONNECTION_ABORTED)
		rc = 4;
	else if (rx_pair(&e, &e2) != DOCA_SUCCESS)
		rc = 5;
	memset(ib.mem, 0x66, 64);
	/* A SEND from a buffer of the InfiniBand device's mmap on the Ethernet device's context. */
	if (rc == 0 && (doca_buf_inventory_buf_by_data(ib.inv, ib.mmap, ib.mem, 64, &foreign) != DOCA_SUCCESS ||
			rx_submit_send(&e, DOCA_RDMA_JOB_SEND, foreign, 0, 2) != DOCA_SUCCESS))
		rc = 6;
	if (rc == 0 && (rx_retrieve(&e, &ev, &res) != DOCA_ERROR_IO_FAILED || res.result != DOCA_ERROR_NOT_PERMITTED ||
			ev.user_data.u64 != 2))
		rc = 7;
	if (rc == 0)
		doca_buf_refcount_rm(foreign, NULL);
	rx_close(&e);
	rx_close(&e2);
	rx_close(&ib);
	doca_devinfo_list_destroy(list);
	printf(rc == 0 ? "OK\n" : "FAIL %d\n", rc);
	fflush(stdout);
	return rc;
}

static void test_another_device(void)
{
	static const char topo[] =
		"function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0 mac=02:53:44:0b:00:00 ipv4=10.0.0.1\n"
		"function name=b side=host type=pf pci=0000:0b:00.1 vuid=B ibdev=mlx5_1 mac=02:53:44:0b:00:01 ipv4=10.0.0.2"
		" link=ib\n";
	char path[] = "/tmp/softdpu-rdma-topoXXXXXX";
	int fd = mkstemp(path);
	struct th_proc *p;
	const char *l;

	CHECK(fd >= 0 && write(fd, topo, sizeof(topo) - 1) == (ssize_t)(sizeof(topo) - 1));
	close(fd);
	setenv("SOFTDPU_TOPOLOGY", path, 1);
	p = th_proc_start(NULL, "devices", NULL);
	unsetenv("SOFTDPU_TOPOLOGY");
	CHECK(p != NULL);
	l = th_proc_line(p);
	unlink(path);
	CHECK(l != NULL && strcmp(l, "OK") == 0);
	CHECK(th_proc_wait(p) == 0);
}

/*
 * Two processes: this binary again as the "responder" role (the vendor
 * responder sample's part): it prints its connection descriptor and memory
 * export as hex lines, connects to ours, posts a receive, sleeps on its
 * event-driven work queue's handle until our SEND completes it, and checks
 * what we read, wrote and sent.
 */
/*
 * The next event of an event-driven work queue: while nothing can complete,
 * sleeps on its event handle (armed), bounded by the hang guard.
 */
static doca_error_t wait_event(struct rx_side *s, struct doca_event *ev, struct doca_rdma_result *res)
{
	doca_event_handle_t h;
	struct pollfd p;
	doca_error_t e;

	if (doca_workq_get_event_handle(s->wq, &h) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	for (;;) {
		ev->result.ptr = res;
		e = doca_workq_progress_retrieve(s->wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
		if (e != DOCA_ERROR_AGAIN)
			return e;
		if (doca_workq_event_handle_arm(s->wq) != DOCA_SUCCESS)
			return DOCA_ERROR_BAD_STATE;
		p = (struct pollfd){ .fd = h, .events = POLLIN };
		if (poll(&p, 1, (int)(RX_HANG_NS / 1000000)) != 1)
			return DOCA_ERROR_TIME_OUT;
		if (doca_workq_event_handle_clear(s->wq, h) != DOCA_SUCCESS)
			return DOCA_ERROR_BAD_STATE;
	}
}

static int role_responder(void)
{
	char line[1024], hex[1024];
	struct rx_side s;
	const void *d, *md;
	size_t l, ml;
	uint8_t peer[256];
	long pl;
	struct doca_buf *dst;
	struct doca_mmap *rm;
	struct doca_rdma_result res;
	struct doca_event ev;
	uint8_t *rmem;

	if (rx_open(&s, RW, RW, true, true) != 0) /* event-driven: the peer's SEND wakes us */
		return 1;
	memset(s.mem + HALF, 0x33, 256);
	if (doca_rdma_export(s.rdma, &d, &l) != DOCA_SUCCESS || doca_mmap_export_rdma(s.mmap, s.dev, &md, &ml) != 0 ||
	    2 * ml >= sizeof(hex))
		return 2;
	th_hex_encode(d, l, hex);
	printf("%s\n", hex);
	th_hex_encode(md, ml, hex);
	printf("%s\n", hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || (pl = th_hex_decode(line, peer, sizeof(peer))) < 0)
		return 3;
	if (doca_rdma_connect(s.rdma, peer, (size_t)pl) != DOCA_SUCCESS)
		return 4;
	/* The receive lands in memory of an mmap never exported, as in the vendor's rdma_receive sample. */
	rmem = calloc(1, 64);
	if (rmem == NULL || doca_mmap_create(NULL, &rm) != DOCA_SUCCESS || doca_mmap_dev_add(rm, s.dev) != 0 ||
	    doca_mmap_set_memrange(rm, rmem, 64) != 0 || doca_mmap_set_permissions(rm, DOCA_ACCESS_LOCAL_READ_WRITE) != 0 ||
	    doca_mmap_start(rm) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_addr(s.inv, rm, rmem, 64, &dst) != DOCA_SUCCESS ||
	    rx_submit_recv(&s, dst, 1) != DOCA_SUCCESS)
		return 5;
	printf("ready\n");
	fflush(stdout);
	if (wait_event(&s, &ev, &res) != DOCA_SUCCESS || res.result != DOCA_SUCCESS || res.length != 6 ||
	    memcmp(rmem, "parent", 6) != 0)
		return 6;
	/* The parent's write came before its send. */
	for (int i = 0; i < 100; i++)
		if (s.mem[HALF + 512 + i] != (uint8_t)(i + 1))
			return 7;
	doca_buf_refcount_rm(dst, NULL);
	doca_mmap_destroy(rm);
	free(rmem);
	printf("ok\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL) /* the parent is done with our memory */
		return 8;
	rx_close(&s);
	return 0;
}

/*
 * A responder whose exported memory is a MAP_SHARED anonymous page, which
 * cannot move onto a memfd: its key works in its own process only.
 */
static int role_unshared(void)
{
	char line[1024], hex[1024];
	struct rx_side s;
	struct doca_mmap *um;
	const void *d, *md;
	size_t l, ml;
	uint8_t peer[256];
	long pl;
	uint8_t *page;
	int rc = 0;

	if (rx_open(&s, RW, RW, true, false) != 0)
		return 1;
	page = mmap(NULL, RX_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 2;
	memset(page, 0x77, RX_LEN);
	if (doca_mmap_create(NULL, &um) != DOCA_SUCCESS || doca_mmap_dev_add(um, s.dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(um, page, RX_LEN) != DOCA_SUCCESS || doca_mmap_set_permissions(um, RW) != DOCA_SUCCESS ||
	    doca_mmap_start(um) != DOCA_SUCCESS)
		return 3;
	if (doca_rdma_export(s.rdma, &d, &l) != DOCA_SUCCESS || doca_mmap_export_rdma(um, s.dev, &md, &ml) != DOCA_SUCCESS ||
	    2 * ml >= sizeof(hex))
		return 4;
	th_hex_encode(d, l, hex);
	printf("%s\n", hex);
	th_hex_encode(md, ml, hex);
	printf("%s\n", hex);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || (pl = th_hex_decode(line, peer, sizeof(peer))) < 0 ||
	    doca_rdma_connect(s.rdma, peer, (size_t)pl) != DOCA_SUCCESS)
		return 5;
	printf("ready\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL) /* the peer's write has failed */
		return 6;
	for (int i = 0; i < RX_LEN; i++)
		if (page[i] != 0x77)
			rc = 7;
	printf("%s\n", rc == 0 ? "ok" : "written");
	fflush(stdout);
	doca_mmap_destroy(um);
	munmap(page, RX_LEN);
	rx_close(&s);
	return rc;
}

/* Non-NULL: the responder is this machine (SOFTDPU_MACHINE) and we are 127.0.0.2. */
static const char *peer_machine;

static struct th_proc *start_responder(void)
{
	struct th_proc *c;

	if (peer_machine == NULL)
		return th_proc_start(NULL, "responder", NULL);
	setenv("SOFTDPU_MACHINE", peer_machine, 1);
	c = th_proc_start(NULL, "responder", NULL);
	setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
	return c;
}

/*
 * The requester's side of a responder role: takes its context and memory
 * descriptors, connects, answers with its own and imports the memory, then
 * waits for the responder's "ready".
 */
static void meet_responder(struct th_proc *c, struct rx_side *s)
{
	uint8_t peer[256], mdesc[512];
	const char *ln;
	char hex[1024];
	long pl, ml;
	size_t l;
	const void *d;

	CHECK((ln = th_proc_line(c)) != NULL);
	CHECK((pl = th_hex_decode(ln, peer, sizeof(peer))) > 0);
	CHECK((ln = th_proc_line(c)) != NULL);
	CHECK((ml = th_hex_decode(ln, mdesc, sizeof(mdesc))) > 0);
	CHECK_OK(doca_rdma_connect(s->rdma, peer, (size_t)pl));
	CHECK_OK(doca_rdma_export(s->rdma, &d, &l));
	th_hex_encode(d, l, hex);
	CHECK(th_proc_send(c, "%s", hex) == 0);
	CHECK_OK(rx_import(s, mdesc, (size_t)ml));
	CHECK((ln = th_proc_line(c)) != NULL && strcmp(ln, "ready") == 0);
}

static void test_two_processes(void)
{
	struct th_proc *c = start_responder();
	const char *ln;
	struct rx_side s;
	struct doca_buf *src, *rdst, *rsrc, *dst, *msg;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(c != NULL);
	CHECK(rx_open(&s, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &s);
	meet_responder(c, &s);
	/* Read the responder's pattern, write ours, then send. */
	rsrc = rx_rbuf(&s, HALF, 256, 256);
	dst = rx_buf(&s, 0, 256, 0);
	for (int i = 0; i < 100; i++)
		s.mem[1024 + i] = (uint8_t)(i + 1);
	src = rx_buf(&s, 1024, 100, 100);
	rdst = rx_rbuf(&s, HALF + 512, 100, 0);
	memcpy(s.mem + 1536, "parent", 6);
	msg = rx_buf(&s, 1536, 6, 6);
	CHECK(rsrc != NULL && dst != NULL && src != NULL && rdst != NULL && msg != NULL);
	CHECK_OK(rx_submit_rw(&s, DOCA_RDMA_JOB_READ, dst, rsrc, 0, 1));
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	for (int i = 0; i < 256; i++)
		CHECK(s.mem[i] == 0x33);
	CHECK_OK(rx_submit_rw(&s, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 2));
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(res.result == DOCA_SUCCESS);
	CHECK_OK(rx_submit_send(&s, DOCA_RDMA_JOB_SEND, msg, 0, 3));
	CHECK_OK(rx_retrieve(&s, &ev, &res));
	CHECK(ev.user_data.u64 == 3 && res.result == DOCA_SUCCESS);
	CHECK((ln = th_proc_line(c)) != NULL && strcmp(ln, "ok") == 0);
	/* The responder closes and exits: a job towards it fails as the peer's loss. */
	CHECK(th_proc_send(c, "done") == 0);
	CHECK(th_proc_wait(c) == 0);
	CHECK_OK(rx_submit_rw(&s, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 4));
	CHECK_ERR(rx_retrieve(&s, &ev, &res), DOCA_ERROR_IO_FAILED);
	CHECK(ev.user_data.u64 == 4 && res.result == DOCA_ERROR_CONNECTION_ABORTED);
	rm(rsrc);
	rm(dst);
	rm(src);
	rm(rdst);
	rm(msg);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

/*
 * Memory another process cannot map (MAP_SHARED anonymous) exported for
 * RDMA: a peer's WRITE to it fails with a remote access error, mapped to
 * DOCA_ERROR_NOT_PERMITTED, and leaves it as it was.
 */
static void test_unshareable_memory(void)
{
	struct th_proc *c = th_proc_start(NULL, "unshared", NULL);
	const char *ln;
	struct rx_side s;
	struct doca_buf *src, *rdst;
	struct doca_rdma_result res;
	struct doca_event ev;

	CHECK(c != NULL);
	CHECK(rx_open(&s, RW, RW, true, false) == 0);
	th_defer_local(rx_cleanup, &s);
	meet_responder(c, &s);
	memset(s.mem, 0x11, 256);
	src = rx_buf(&s, 0, 256, 256);
	rdst = rx_rbuf(&s, 0, 256, 0);
	CHECK(src != NULL && rdst != NULL);
	CHECK_OK(rx_submit_rw(&s, DOCA_RDMA_JOB_WRITE, rdst, src, 0, 1));
	CHECK_ERR(rx_retrieve(&s, &ev, &res), DOCA_ERROR_IO_FAILED);
	CHECK(ev.user_data.u64 == 1 && res.result == DOCA_ERROR_NOT_PERMITTED);
	CHECK(th_proc_send(c, "done") == 0);
	CHECK((ln = th_proc_line(c)) != NULL && strcmp(ln, "ok") == 0);
	CHECK(th_proc_wait(c) == 0);
	rm(src);
	rm(rdst);
	th_undefer(rx_cleanup, &s);
	rx_close(&s);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "responder") == 0)
		return role_responder();
	if (argc > 1 && strcmp(argv[1], "devices") == 0)
		return role_devices();
	if (argc > 1 && strcmp(argv[1], "unshared") == 0)
		return role_unshared();
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "machines") == 0) {
		/* Two machines over UCX's TCP transport on loopback, as test_verbs_xm runs them. */
		setenv("UCX_TLS", "tcp", 1);
		setenv("UCX_NET_DEVICES", "lo", 1);
		setenv("UCX_LOG_FILE", "/dev/stderr", 0); /* stdout is the responder's answer channel */
		setenv("SOFTDPU_FABRIC_TIMEOUT_MS", "10000", 1);
		setenv("SOFTDPU_FABRIC", "ucx", 1); /* the memory export carries its UCX address */
		setenv("SOFTDPU_MACHINE", "127.0.0.2", 1);
		peer_machine = "127.0.0.3";
		RUN(test_two_processes);
		return th_summary("test_rdma_xm");
	}
	RUN(test_create_and_caps);
	RUN(test_properties);
	RUN(test_getters_need_a_device);
	RUN(test_export_connect_states);
	RUN(test_bad_descriptors);
	RUN(test_write_then_read);
	RUN(test_chains_scatter_gather);
	RUN(test_send_recv_and_immediates);
	RUN(test_send_waits_for_receive);
	RUN(test_unset_fields_ignored);
	RUN(test_atomics);
	RUN(test_permission_violated);
	RUN(test_mmap_permission_violated);
	RUN(test_bad_jobs);
	RUN(test_refused_jobs_take_nothing);
	RUN(test_queue_full);
	RUN(test_completed_jobs_hold_no_slot);
	RUN(test_event_driven);
	RUN(test_full_queue_in_order);
	RUN(test_event_driven_writes);
	RUN(test_another_device);
	RUN(test_two_processes);
	RUN(test_unshareable_memory);
	return th_summary("test_rdma");
}
