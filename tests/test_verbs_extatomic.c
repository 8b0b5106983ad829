/*
 * Extended atomics (the mlx5 PRM's MASKED_CS and MASKED_FA send WQEs, opmod
 * 8 | (log2(size) - 2)), posted whole with mlx5dv_wr_raw_wqe from this
 * process against memory another process registered. Masked compare-swap
 * writes (old & ~swap_mask) | (swap & swap_mask) when (old ^ compare) &
 * compare_mask is 0; masked fetch-add adds with no carry out of a bit set in
 * the field-boundary mask. The requester gets the old value: 4 bytes
 * big-endian, 8 bytes in host order (the ATOMIC caps page's 8-byte endianness
 * mode 1). An address not aligned to the operand size and a responder QP
 * without remote atomics complete IBV_WC_REM_INV_REQ_ERR, memory untouched,
 * as the standard atomics do; an operand size not advertised is a local QP
 * operation error.
 */
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define XA_QPS 5 /* 0: the operations, 1: unaligned, 2: no atomic rights at the responder, 3: bad size, 4: bad rkey */
#define XA_MEM 64
#define XA_MASKED_CS 0x14
#define XA_MASKED_FA 0x15
#define XA_OPMOD(log) (8u | ((log) - 2u))

struct xa_hello {
	uint32_t qpn[XA_QPS];
	uint32_t rkey;
	uint64_t addr;
};

static uint8_t xa_res[64] __attribute__((aligned(64)));
static pid_t xa_kid = -1;
static int xa_st; /* the last xa_run's completion status */
static uint32_t xa_rkey_xor; /* nonzero: a key the responder does not know */
static int xa_sock = -1;

static int xa_io(int fd, const void *out, size_t olen, void *in, size_t ilen)
{
	size_t done;
	ssize_t n;

	for (done = 0; done < olen; done += (size_t)n)
		if ((n = write(fd, (const uint8_t *)out + done, olen - done)) <= 0)
			return -1;
	for (done = 0; done < ilen; done += (size_t)n)
		if ((n = read(fd, (uint8_t *)in + done, ilen - done)) <= 0)
			return -1;
	return 0;
}

/* The responder: its memory (a page of its own) and QPs; 'w' + bytes sets the memory, 'r' sends it back, 'q' ends. */
static int xa_child(int fd)
{
	uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, mem, XA_MEM, VQ_ACCESS_ALL) : NULL;
	struct ibv_qp *qp[XA_QPS];
	struct xa_hello me = {0}, peer;
	struct ibv_qp_attr na = {.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
	char cmd;

	if (mem == MAP_FAILED || mr == NULL || cq == NULL)
		return 1;
	for (int i = 0; i < XA_QPS; i++) {
		struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					     .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};

		qp[i] = ibv_create_qp(pd, &a);
		if (qp[i] == NULL)
			return 2;
		me.qpn[i] = qp[i]->qp_num;
	}
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)mem;
	if (xa_io(fd, &me, sizeof(me), &peer, sizeof(peer)) != 0)
		return 3;
	for (int i = 0; i < XA_QPS; i++)
		if (vq_up(qp[i], peer.qpn[i], 0, 0) != 0)
			return 4;
	if (ibv_modify_qp(qp[2], &na, IBV_QP_ACCESS_FLAGS) != 0)
		return 5;
	if (xa_io(fd, "k", 1, NULL, 0) != 0)
		return 6;
	while (xa_io(fd, NULL, 0, &cmd, 1) == 0) {
		if (cmd == 'q')
			return 0;
		if (cmd == 'w' && xa_io(fd, NULL, 0, mem, XA_MEM) == 0 && xa_io(fd, "k", 1, NULL, 0) == 0)
			continue;
		if (cmd == 'r' && xa_io(fd, mem, XA_MEM, NULL, 0) == 0)
			continue;
		return 7;
	}
	return 8;
}

static void xa_reap_cb(void *arg)
{
	int st;

	(void)arg;
	if (xa_sock >= 0)
		close(xa_sock);
	xa_sock = -1;
	if (xa_kid > 0) {
		kill(xa_kid, SIGKILL);
		waitpid(xa_kid, &st, 0);
	}
	xa_kid = -1;
}

struct xa {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[XA_QPS];
	struct xa_hello peer;
};

static void xa_open(struct xa *x)
{
	struct xa_hello me = {0};
	int sv[2];
	char ok;

	memset(x, 0, sizeof(*x));
	x->c = vf_open();
	CHECK(x->c != NULL);
	x->pd = vf_pd(x->c);
	x->cq = vq_cq(x->c, 16);
	x->mr = vq_mr(x->pd, xa_res, sizeof(xa_res), VQ_ACCESS_ALL);
	CHECK(x->pd != NULL && x->cq != NULL && x->mr != NULL);
	for (int i = 0; i < XA_QPS; i++) {
		struct ibv_qp_init_attr_ex a = {
			.send_cq = x->cq, .recv_cq = x->cq, .qp_type = IBV_QPT_RC,
			.cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 2, .max_recv_sge = 1},
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = x->pd,
			.send_ops_flags = IBV_QP_EX_WITH_SEND,
		};
		struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
						 .send_ops_flags = MLX5DV_QP_EX_WITH_RAW_WQE};

		x->qp[i] = mlx5dv_create_qp(x->c, &a, &dv);
		CHECK(x->qp[i] != NULL);
		th_defer(vq_destroy_qp_cb, x->qp[i]);
		me.qpn[i] = x->qp[i]->qp_num;
	}
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	xa_kid = fork();
	CHECK(xa_kid >= 0);
	if (xa_kid == 0) {
		close(sv[0]);
		_exit(xa_child(sv[1]));
	}
	close(sv[1]);
	xa_sock = sv[0];
	th_defer(xa_reap_cb, NULL);
	CHECK_OK(xa_io(xa_sock, &me, sizeof(me), &x->peer, sizeof(x->peer)));
	for (int i = 0; i < XA_QPS; i++)
		CHECK_OK(vq_up(x->qp[i], x->peer.qpn[i], 0, 0));
	CHECK_OK(xa_io(xa_sock, NULL, 0, &ok, 1));
	CHECK(ok == 'k');
}

static void xa_set(const void *mem)
{
	char ok = 0;

	CHECK_OK(xa_io(xa_sock, "w", 1, NULL, 0));
	CHECK_OK(xa_io(xa_sock, mem, XA_MEM, &ok, 1));
	CHECK(ok == 'k');
}

static void xa_get(void *mem)
{
	CHECK_OK(xa_io(xa_sock, "r", 1, mem, XA_MEM));
}

/* Posts one masked atomic WQE (segs: its atomic segments, big-endian) at offset off of the peer's memory; its status in xa_st. */
static void xa_run(struct xa *x, int qi, uint8_t opcode, uint8_t opmod, const void *segs, uint32_t seg_len,
		  uint64_t off, uint32_t res_len)
{
	struct {
		struct mlx5_wqe_ctrl_seg ctrl;
		struct mlx5_wqe_raddr_seg raddr;
		uint8_t seg[32 + sizeof(struct mlx5_wqe_data_seg)];
	} wqe;
	struct mlx5_wqe_data_seg d = {.byte_count = htobe32(res_len), .lkey = htobe32(x->mr->lkey),
				      .addr = htobe64((uintptr_t)xa_res)};
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(x->qp[qi]);
	struct ibv_wc wc;

	memset(&wqe, 0, sizeof(wqe));
	wqe.ctrl.opmod_idx_opcode = htobe32((uint32_t)opmod << 24 | opcode);
	wqe.ctrl.qpn_ds = htobe32(x->qp[qi]->qp_num << 8 | (3 + seg_len / 16));
	wqe.ctrl.fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
	wqe.raddr.raddr = htobe64(x->peer.addr + off);
	wqe.raddr.rkey = htobe32(x->peer.rkey ^ xa_rkey_xor);
	memcpy(wqe.seg, segs, seg_len);
	memcpy(wqe.seg + seg_len, &d, sizeof(d));
	memset(xa_res, 0xee, sizeof(xa_res));
	ibv_wr_start(qx);
	qx->wr_id = 0x5a00u + opcode;
	mlx5dv_wr_raw_wqe(mlx5dv_qp_ex_from_ibv_qp_ex(qx), &wqe);
	xa_st = -1;
	CHECK_OK(ibv_wr_complete(qx));
	CHECK(vq_poll1(x->cq, &wc) == 1);
	CHECK(wc.wr_id == 0x5a00u + opcode);
	CHECK(wc.status != IBV_WC_SUCCESS || wc.opcode == IBV_WC_DRIVER2);
	xa_st = (int)wc.status;
}

/* 32-bit segments: CS swap, compare, swap_mask, compare_mask; FA add, field boundary, reserved. */
static void xa_run32(struct xa *x, int qi, uint8_t opcode, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t off)
{
	uint32_t s[4] = {htobe32(a), htobe32(b), htobe32(c), htobe32(d)};

	xa_run(x, qi, opcode, XA_OPMOD(2), s, 16, off, 4);
}

/* 64-bit: CS swap, compare, swap_mask, compare_mask (two segments); FA add, field boundary. */
static void xa_run64(struct xa *x, int qi, uint8_t opcode, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t off)
{
	uint64_t s[4] = {htobe64(a), htobe64(b), htobe64(c), htobe64(d)};

	xa_run(x, qi, opcode, XA_OPMOD(3), s, opcode == XA_MASKED_CS ? 32 : 16, off, 8);
}

static uint32_t xa_old32(void)
{
	uint32_t v;

	memcpy(&v, xa_res, 4);
	return xa_res[4] == 0xee ? be32toh(v) : 0xdeadbeefu; /* exactly 4 bytes came back */
}

static uint64_t xa_old64(void)
{
	uint64_t v;

	memcpy(&v, xa_res, 8);
	return xa_res[8] == 0xee ? v : 0xdeadbeefdeadbeefull;
}

/* The peer's memory: a guard pattern with u32/u64 values at the offsets used. */
static void xa_mem_init(uint8_t *mem)
{
	for (int i = 0; i < XA_MEM; i++)
		mem[i] = (uint8_t)(0xa0 + i);
}

static void xa_expect32(uint64_t off, uint32_t v)
{
	uint8_t want[XA_MEM], got[XA_MEM];

	xa_mem_init(want);
	memcpy(want + off, &v, 4);
	xa_get(got);
	CHECK(memcmp(want, got, XA_MEM) == 0);
}

static void xa_expect64(uint64_t off, uint64_t v)
{
	uint8_t want[XA_MEM], got[XA_MEM];

	xa_mem_init(want);
	memcpy(want + off, &v, 8);
	xa_get(got);
	CHECK(memcmp(want, got, XA_MEM) == 0);
}

static void xa_put32(uint64_t off, uint32_t v)
{
	uint8_t mem[XA_MEM];

	xa_mem_init(mem);
	memcpy(mem + off, &v, 4);
	xa_set(mem);
}

static void xa_put64(uint64_t off, uint64_t v)
{
	uint8_t mem[XA_MEM];

	xa_mem_init(mem);
	memcpy(mem + off, &v, 8);
	xa_set(mem);
}

static void xa_fa32_case(struct xa *x, uint32_t mem, uint32_t add, uint32_t boundary, uint32_t after)
{
	xa_put32(20, mem);
	xa_run32(x, 0, XA_MASKED_FA, add, boundary, 0, 0, 20);
	CHECK(xa_st == IBV_WC_SUCCESS);
	CHECK(xa_old32() == mem);
	xa_expect32(20, after);
}

static void xa_fa64_case(struct xa *x, uint64_t mem, uint64_t add, uint64_t boundary, uint64_t after)
{
	xa_put64(24, mem);
	xa_run64(x, 0, XA_MASKED_FA, add, boundary, 0, 0, 24);
	CHECK(xa_st == IBV_WC_SUCCESS);
	CHECK(xa_old64() == mem);
	xa_expect64(24, after);
}

static void xa_cs32_case(struct xa *x, uint32_t mem, uint32_t swap, uint32_t cmp, uint32_t smask, uint32_t cmask,
			 uint32_t after)
{
	xa_put32(36, mem);
	xa_run32(x, 0, XA_MASKED_CS, swap, cmp, smask, cmask, 36);
	CHECK(xa_st == IBV_WC_SUCCESS);
	CHECK(xa_old32() == mem);
	xa_expect32(36, after);
}

static void xa_cs64_case(struct xa *x, uint64_t mem, uint64_t swap, uint64_t cmp, uint64_t smask, uint64_t cmask,
			 uint64_t after)
{
	xa_put64(40, mem);
	xa_run64(x, 0, XA_MASKED_CS, swap, cmp, smask, cmask, 40);
	CHECK(xa_st == IBV_WC_SUCCESS);
	CHECK(xa_old64() == mem);
	xa_expect64(40, after);
}

static void test_masked_fetch_add(void)
{
	static struct xa x;

	xa_open(&x);
	/* No boundaries: an ordinary add, wrapping at the operand size. */
	xa_fa32_case(&x, 0x7ffffffeu, 3, 0, 0x80000001u);
	xa_fa32_case(&x, 0xffffffffu, 2, 0, 1);
	/* Two 16-bit fields: the low one wraps alone. */
	xa_fa32_case(&x, 0x0001ffffu, 0x00010001u, 0x80008000u, 0x00020000u);
	/* Every bit its own field: XOR. */
	xa_fa32_case(&x, 0x0f0f0f0fu, 0x00ff00ffu, 0xffffffffu, 0x0ff00ff0u);
	/* The top bit a boundary: the carry out of it is dropped, as at the end anyway. */
	xa_fa32_case(&x, 0x80000000u, 0x80000000u, 0x80000000u, 0);
	xa_fa64_case(&x, 0xffffffffull, 1, 0, 0x100000000ull);
	xa_fa64_case(&x, 0x00000001ffffffffull, 0x0000000100000001ull, 0x8000000080000000ull, 0x0000000200000000ull);
	xa_fa64_case(&x, 0xffffffffffffffffull, 1, 0, 0);
	/* Bit 0 a boundary: its carry stays, the rest add. */
	xa_fa64_case(&x, 0x0000000000000003ull, 0x0000000000000003ull, 1, 0x0000000000000004ull);
}

static void test_masked_compare_swap(void)
{
	static struct xa x;

	xa_open(&x);
	/* Equal under the compare mask: the swap mask's bits are written. */
	xa_cs32_case(&x, 0x12345678u, 0xaaaaaaaau, 0x12ff5678u, 0x0000ffffu, 0xff00ffffu, 0x1234aaaau);
	/* Different under the mask: nothing written, the old value returned. */
	xa_cs32_case(&x, 0x12345678u, 0xaaaaaaaau, 0x12345679u, 0xffffffffu, 0x00000001u, 0x12345678u);
	/* An empty compare mask always swaps; full masks are the plain 32-bit swap. */
	xa_cs32_case(&x, 0x12345678u, 0xcafef00du, 0, 0xffffffffu, 0, 0xcafef00du);
	xa_cs32_case(&x, 0x12345678u, 0xcafef00du, 0x12345678u, 0xffffffffu, 0xffffffffu, 0xcafef00du);
	/* An empty swap mask writes nothing even when equal. */
	xa_cs32_case(&x, 0x12345678u, 0xcafef00du, 0x12345678u, 0, 0xffffffffu, 0x12345678u);
	/* 64 bits: the masks reach the high half; a difference in the high bit only fails. */
	xa_cs64_case(&x, 0x0123456789abcdefull, 0xfedcba9876543210ull, 0x01234567ffffffffull, 0xffffffff00000000ull,
		     0xffffffff00000000ull, 0xfedcba9889abcdefull);
	xa_cs64_case(&x, 0x0123456789abcdefull, 0xfedcba9876543210ull, 0x8123456789abcdefull, ~0ull,
		     0x8000000000000000ull, 0x0123456789abcdefull);
	xa_cs64_case(&x, 0x0123456789abcdefull, 0x1111111111111111ull, 0, 0x00000000000000ffull, 0, 0x0123456789abcd11ull);
}

static void test_masked_errors(void)
{
	static struct xa x;

	xa_open(&x);
	/* 32 bits at an address aligned to 2 only, and 64 bits at one aligned to 4: invalid request, nothing written. */
	xa_put32(20, 5);
	xa_run32(&x, 1, XA_MASKED_FA, 1, 0, 0, 0, 18);
	CHECK(xa_st == IBV_WC_REM_INV_REQ_ERR);
	xa_expect32(20, 5);
	/* The responder QP without remote atomics. */
	xa_run32(&x, 2, XA_MASKED_CS, 9, 0, ~0u, 0, 20);
	CHECK(xa_st == IBV_WC_REM_INV_REQ_ERR);
	xa_expect32(20, 5);
	/* 16 bytes (opmod 8 | 2) is no size this device advertises. */
	{
		uint64_t s[2] = {htobe64(1), 0};

		xa_run(&x, 3, XA_MASKED_FA, XA_OPMOD(4), s, 16, 16, 16);
		CHECK(xa_st == IBV_WC_LOC_QP_OP_ERR);
	}
	xa_expect32(20, 5);
	/* A key the responder does not have: remote access error. */
	xa_rkey_xor = 0x100;
	xa_run32(&x, 4, XA_MASKED_FA, 1, 0, 0, 0, 20);
	xa_rkey_xor = 0;
	CHECK(xa_st == IBV_WC_REM_ACCESS_ERR);
	xa_expect32(20, 5);
}

static void test_masked_unaligned64(void)
{
	static struct xa x;

	xa_open(&x);
	xa_put64(24, 7);
	xa_run64(&x, 0, XA_MASKED_CS, 1, 0, ~0ull, 0, 28);
	CHECK(xa_st == IBV_WC_REM_INV_REQ_ERR);
	xa_expect64(24, 7);
	/* A 32-bit operation at that address is aligned. */
	xa_run32(&x, 1, XA_MASKED_FA, 1, 0, 0, 0, 28);
	CHECK(xa_st == IBV_WC_SUCCESS);
	CHECK(xa_old32() == 0);
	xa_expect64(24, 7 + (1ull << 32));
}

int main(void)
{
	RUN(test_masked_fetch_add);
	RUN(test_masked_compare_swap);
	RUN(test_masked_errors);
	RUN(test_masked_unaligned64);
	return th_summary("test_verbs_extatomic");
}
