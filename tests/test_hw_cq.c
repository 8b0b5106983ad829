/*
 * The emulated device's completion queue and the PRM formats it writes.
 *
 * The consumer here is written from the mlx5 rule, not with the device's
 * helpers: a CQE at consumer index n is the software's when its opcode is not
 * INVALID and its owner bit equals bit log_size of n; fields are read at their
 * byte offsets in big-endian order, so the layout is checked independently.
 */
#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "hw_bell.h"
#include "hw_cq.h"
#include "hw_prm.h"

/* A consumer as an mlx5 provider keeps it. */
struct tc {
	uint8_t *buf;	  /* the ring, 64 bytes a CQE */
	uint32_t *dbrec;  /* [0] consumer index, [1] arm word, big-endian */
	uint32_t cqe_cnt; /* a power of two */
	uint32_t cons_index;
	uint32_t arm_sn;
};

static void tc_init(struct tc *t, struct hw_cq *cq)
{
	t->buf = (uint8_t *)hw_cq_ring(cq);
	t->dbrec = hw_cq_dbrec(cq);
	t->cqe_cnt = 1u << hw_cq_log_size(cq);
	t->cons_index = 0;
	t->arm_sn = 0;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	return (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
}

static uint16_t rd16(const uint8_t *p, size_t off)
{
	return (uint16_t)(p[off] << 8 | p[off + 1]);
}

/* The CQE at the consumer index if software owns it, else NULL. */
static const uint8_t *tc_sw_cqe(const struct tc *t, uint32_t n)
{
	const uint8_t *cqe = t->buf + (size_t)(n & (t->cqe_cnt - 1)) * 64;
	uint8_t op_own = __atomic_load_n(&cqe[63], __ATOMIC_ACQUIRE);

	if ((op_own >> 4) != 0xf && !((op_own & 1) ^ !!(n & t->cqe_cnt)))
		return cqe;
	return NULL;
}

static const uint8_t *tc_poll(struct tc *t)
{
	const uint8_t *cqe = tc_sw_cqe(t, t->cons_index);

	if (cqe != NULL)
		t->cons_index++;
	return cqe;
}

/* Releases what was polled to the device. */
static void tc_update_ci(struct tc *t)
{
	__atomic_store_n(&t->dbrec[0], htobe32(t->cons_index & 0xffffff), __ATOMIC_RELEASE);
}

/* What an mlx5 provider's arm does: the word to the record, then to the doorbell register. */
static uint32_t tc_arm_word(struct tc *t, int solicited)
{
	uint32_t w = (t->arm_sn & 3) << 28 | (solicited ? 1u << 24 : 0) | (t->cons_index & 0xffffff);

	t->dbrec[1] = htobe32(w);
	return w;
}

static void cq_destroy_cb(void *arg)
{
	hw_cq_destroy(arg);
}

static void close_cb(void *arg)
{
	close((int)(intptr_t)arg);
}

static void waiter_disarm_cb(void *arg)
{
	hw_waiter_disarm(arg);
}

static struct hw_cq *new_cq(uint32_t log_size)
{
	struct hw_cq_attr attr = { .log_size = log_size, .cqn = 7 };
	struct hw_cq *cq = NULL;

	if (hw_cq_create(&attr, &cq) != HW_OK)
		return NULL;
	th_defer(cq_destroy_cb, cq);
	return cq;
}

static uint32_t bell_seq(struct hw_cq *cq)
{
	return hw_bell_seq(hw_cq_event_bell(cq));
}

static void test_layout_and_constants(void)
{
	CHECK(sizeof(struct hw_cqe64) == 64 && sizeof(struct hw_err_cqe) == 64);
	CHECK(offsetof(struct hw_cqe64, imm_inval_pkey) == 36 && offsetof(struct hw_cqe64, byte_cnt) == 44);
	CHECK(offsetof(struct hw_cqe64, sop_drop_qpn) == 56 && offsetof(struct hw_cqe64, wqe_counter) == 60);
	CHECK(offsetof(struct hw_cqe64, op_own) == 63);
	CHECK(offsetof(struct hw_err_cqe, syndrome) == 55 && offsetof(struct hw_err_cqe, vendor_err_synd) == 54);
	CHECK(sizeof(struct hw_wqe_ctrl_seg) == 16 && sizeof(struct hw_wqe_data_seg) == 16);
	CHECK(sizeof(struct hw_wqe_raddr_seg) == 16 && sizeof(struct hw_wqe_atomic_seg) == 16);
	CHECK(sizeof(struct hw_wqe_inl_seg) == 4);
	/* The numbers programs compiled against mlx5dv.h use. */
	CHECK(HW_CQE_REQ == 0 && HW_CQE_RESP_WR_IMM == 1 && HW_CQE_RESP_SEND == 2 && HW_CQE_RESP_SEND_IMM == 3);
	CHECK(HW_CQE_RESP_SEND_INV == 4 && HW_CQE_REQ_ERR == 13 && HW_CQE_RESP_ERR == 14 && HW_CQE_INVALID == 15);
	CHECK(HW_CQE_SYNDROME_LOCAL_PROT_ERR == 0x04 && HW_CQE_SYNDROME_WR_FLUSH_ERR == 0x05);
	CHECK(HW_CQE_SYNDROME_REMOTE_ACCESS_ERR == 0x13 && HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR == 0x16);
	CHECK(HW_WQE_NOP == 0 && HW_WQE_SEND_INVAL == 1 && HW_WQE_RDMA_WRITE == 8 && HW_WQE_RDMA_WRITE_IMM == 9);
	CHECK(HW_WQE_SEND == 0xa && HW_WQE_SEND_IMM == 0xb && HW_WQE_RDMA_READ == 0x10);
	CHECK(HW_WQE_ATOMIC_CS == 0x11 && HW_WQE_ATOMIC_FA == 0x12 && HW_WQE_LOCAL_INVAL == 0x1b && HW_WQE_UMR == 0x25);
	CHECK(HW_WQE_CTRL_CQ_UPDATE == 0x08 && HW_WQE_CTRL_SOLICITED == 0x02 && HW_WQE_CTRL_FENCE == 0x80);
	CHECK(HW_CQ_ARM_CMD_SOLICITED == 0x01000000u && HW_CQ_DOORBELL_OFFSET == 0x20);
}

static void test_segment_bytes(void)
{
	uint8_t w[64];
	struct hw_wqe_ctrl_seg *ctrl = (struct hw_wqe_ctrl_seg *)(void *)w;
	struct hw_wqe_raddr_seg *ra = (struct hw_wqe_raddr_seg *)(void *)(w + 16);
	struct hw_wqe_data_seg *ds = (struct hw_wqe_data_seg *)(void *)(w + 32);
	struct hw_wqe_atomic_seg *at = (struct hw_wqe_atomic_seg *)(void *)(w + 48);
	static const uint8_t want_ctrl[16] = { 0x03, 0x12, 0x34, 0x0a, 0xab, 0xcd, 0xef, 0x04,
					       0x00, 0x00, 0x00, 0x08, 0x11, 0x22, 0x33, 0x44 };
	static const uint8_t want_raddr[16] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
						0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0 };
	static const uint8_t want_data[16] = { 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x12, 0x05,
					       0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x11, 0x22, 0x33 };
	static const uint8_t want_atomic[16] = { 0, 0, 0, 0, 0, 0, 0, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
	uint32_t imm_be = htobe32(0x11223344);
	int is_inline = 0;

	memset(w, 0x5a, sizeof(w));
	hw_ctrl_seg_set(ctrl, 0x1234, HW_WQE_SEND, 3, 0xabcdef, HW_WQE_CTRL_CQ_UPDATE, 4, imm_be);
	hw_raddr_seg_set(ra, 0x0102030405060708ull, 0xdeadbeef);
	hw_data_seg_set(ds, 0x1000, 0x1205, 0xaabbccdd00112233ull);
	hw_atomic_seg_set(at, 5, UINT64_MAX - 1);
	CHECK(memcmp(w, want_ctrl, 16) == 0);
	CHECK(memcmp(w + 16, want_raddr, 16) == 0);
	CHECK(memcmp(w + 32, want_data, 16) == 0);
	CHECK(memcmp(w + 48, want_atomic, 16) == 0);
	CHECK(hw_ctrl_opcode(ctrl) == HW_WQE_SEND && hw_ctrl_opmod(ctrl) == 3 && hw_ctrl_wqe_index(ctrl) == 0x1234);
	CHECK(hw_ctrl_qpn(ctrl) == 0xabcdef && hw_ctrl_ds(ctrl) == 4 && be32toh(ctrl->imm) == 0x11223344);
	CHECK(hw_raddr_seg_addr(ra) == 0x0102030405060708ull && hw_raddr_seg_rkey(ra) == 0xdeadbeef);
	CHECK(hw_data_seg_len(ds) == 0x1000 && hw_data_seg_lkey(ds) == 0x1205);
	CHECK(hw_data_seg_addr(ds) == 0xaabbccdd00112233ull);
	CHECK(hw_atomic_seg_swap_add(at) == 5 && hw_atomic_seg_compare(at) == UINT64_MAX - 1);
	/* An inline header is the data segment's first word with bit 31 set. */
	hw_inl_seg_set((struct hw_wqe_inl_seg *)(void *)(w + 32), 13);
	CHECK(rd32(w, 32) == 0x8000000du);
	CHECK(hw_inl_seg_len((struct hw_wqe_inl_seg *)(void *)(w + 32), &is_inline) == 13 && is_inline);
	hw_data_seg_set(ds, 13, 1, 2);
	CHECK(hw_inl_seg_len((struct hw_wqe_inl_seg *)(void *)(w + 32), &is_inline) == 0 && !is_inline);
}

static struct hw_cqe_fields fields_for(uint32_t i)
{
	struct hw_cqe_fields f = {
		.opcode = (uint8_t)(i % 5), /* REQ .. RESP_SEND_INV */
		.wqe_counter = (uint16_t)(i * 7),
		.qpn = 0x10000u + i,
		.byte_cnt = i * 3 + 1,
		.imm = 0xc0de0000u ^ i,
	};

	return f;
}

/* Polls one CQE and checks it is the i-th pushed (fields_for). */
static int cqe_matches(const uint8_t *c, uint32_t i)
{
	struct hw_cqe_fields f = fields_for(i);

	return c != NULL && c[63] >> 4 == f.opcode && rd16(c, 60) == f.wqe_counter &&
	       (rd32(c, 56) & 0xffffff) == f.qpn && rd32(c, 44) == f.byte_cnt && rd32(c, 36) == f.imm;
}

/* Pushes and polls in bursts of every size up to the ring's, across many wraps. */
static void round_trips(struct hw_cq *cq, struct tc *t, uint32_t total)
{
	uint32_t pushed = 0, polled = 0;

	for (uint32_t burst = 1; pushed < total; burst = burst % t->cqe_cnt + 1) {
		if (burst > total - pushed)
			burst = total - pushed;
		for (uint32_t k = 0; k < burst; k++) {
			struct hw_cqe_fields f = fields_for(pushed);

			CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
			pushed++;
		}
		for (uint32_t k = 0; k < burst; k++) {
			const uint8_t *c = tc_poll(t);

			CHECK(cqe_matches(c, polled));
			CHECK((c[63] & 1) == ((polled / t->cqe_cnt) & 1)); /* owner flips every pass */
			polled++;
		}
		CHECK(tc_poll(t) == NULL); /* the next slot still holds the previous pass */
		tc_update_ci(t);
	}
	CHECK(polled == total && t->cons_index == total);
}

static void test_round_trips_allocated_ring(void)
{
	struct hw_cq *cq = new_cq(3);
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	CHECK((uintptr_t)t.buf % 4096 == 0);
	for (uint32_t i = 0; i < t.cqe_cnt; i++)
		CHECK(t.buf[i * 64 + 63] == 0xf1); /* INVALID, owner 1 */
	CHECK(tc_poll(&t) == NULL);
	round_trips(cq, &t, 5000);
	CHECK(!hw_cq_overrun(cq));
}

static void test_round_trips_given_ring(void)
{
	static _Alignas(64) uint8_t ring[16 * 64];
	static _Alignas(8) uint32_t dbrec[2];
	struct hw_cq_attr attr = { .log_size = 4, .ring = (struct hw_cqe64 *)(void *)ring, .dbrec = dbrec };
	struct hw_cq *cq = NULL;
	struct tc t;

	/* Initialised as rdma-core's mlx5 provider does: INVALID with owner 0. */
	memset(ring, 0, sizeof(ring));
	for (int i = 0; i < 16; i++)
		ring[i * 64 + 63] = 0xf0;
	dbrec[0] = dbrec[1] = 0;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	CHECK((uint8_t *)hw_cq_ring(cq) == ring && hw_cq_dbrec(cq) == dbrec);
	tc_init(&t, cq);
	CHECK(tc_poll(&t) == NULL);
	round_trips(cq, &t, 3000);
	CHECK(be32toh(dbrec[0]) == 3000);
	/* A single-entry queue works by the same rule. */
	struct hw_cq *one = new_cq(0);
	struct tc t1;

	CHECK(one != NULL);
	tc_init(&t1, one);
	round_trips(one, &t1, 100);
}

static void test_create_refusals(void)
{
	static _Alignas(64) uint8_t ring[2 * 64 + 8];
	static _Alignas(8) uint32_t dbrec[4];
	struct hw_cq_attr attr = { .log_size = HW_CQ_LOG_SIZE_MAX + 1 };
	struct hw_cq *cq = NULL;

	CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL);
	CHECK_ERR(hw_cq_create(NULL, &cq), HW_ERR_INVAL);
	attr.log_size = 1;
	CHECK_ERR(hw_cq_create(&attr, NULL), HW_ERR_INVAL);
	attr.ring = (struct hw_cqe64 *)(void *)(ring + 8);
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL);
	attr.ring = (struct hw_cqe64 *)(void *)ring;
	attr.dbrec = (uint32_t *)(void *)((uint8_t *)dbrec + 4);
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL);
	CHECK(cq == NULL);
}

static void test_overrun_refused(void)
{
	struct hw_cq *cq = new_cq(2);
	uint8_t before[4 * 64];
	struct hw_cqe_fields f;
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	for (uint32_t i = 0; i < 4; i++) {
		f = fields_for(i);
		CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	}
	CHECK(!hw_cq_overrun(cq));
	memcpy(before, t.buf, sizeof(before));
	f = fields_for(4);
	CHECK_ERR(hw_cq_push(cq, &f), HW_ERR_FULL);
	CHECK(hw_cq_overrun(cq));
	CHECK(strstr(hw_status_str(HW_ERR_FULL), "full") != NULL);
	CHECK(memcmp(before, t.buf, sizeof(before)) == 0);
	/* Polled but not yet released: still full. */
	CHECK(cqe_matches(tc_poll(&t), 0));
	CHECK_ERR(hw_cq_push(cq, &f), HW_ERR_FULL);
	CHECK(memcmp(before, t.buf, sizeof(before)) == 0);
	tc_update_ci(&t);
	CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	for (uint32_t i = 1; i <= 4; i++)
		CHECK(cqe_matches(tc_poll(&t), i));
	CHECK(tc_poll(&t) == NULL);
	CHECK(hw_cq_overrun(cq)); /* latched */
	/* A consumer index ahead of the producer is not room either. */
	t.cons_index += 3;
	tc_update_ci(&t);
	memcpy(before, t.buf, sizeof(before));
	CHECK_ERR(hw_cq_push(cq, &f), HW_ERR_FULL);
	CHECK(memcmp(before, t.buf, sizeof(before)) == 0);
}

static void test_bad_opcode_writes_nothing(void)
{
	struct hw_cq *cq = new_cq(2);
	struct hw_cqe_fields f = fields_for(0);
	uint8_t before[4 * 64];
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	memcpy(before, t.buf, sizeof(before));
	f.opcode = HW_CQE_INVALID;
	CHECK_ERR(hw_cq_push(cq, &f), HW_ERR_INVAL);
	f.opcode = 5;
	CHECK_ERR(hw_cq_push(cq, &f), HW_ERR_INVAL);
	CHECK(memcmp(before, t.buf, sizeof(before)) == 0);
	CHECK(!hw_cq_overrun(cq));
	f.opcode = HW_CQE_REQ;
	CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	CHECK(cqe_matches(tc_poll(&t), 0)); /* the refused pushes took no index */
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A CQ asked for timestamps stamps each CQE with the device clock (CLOCK_MONOTONIC ns, big-endian at 48). */
static void test_timestamps(void)
{
	struct hw_cq_attr attr = { .log_size = 2, .cqn = 9, .timestamp = true };
	struct hw_cqe_fields f = fields_for(0);
	struct hw_cq *cq = NULL, *plain = new_cq(2);
	const uint8_t *cqe;
	uint64_t t0, t1, ts1, ts2;
	struct tc t, tp;

	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	CHECK(plain != NULL);
	tc_init(&t, cq);
	tc_init(&tp, plain);
	t0 = mono_ns();
	CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	t1 = mono_ns();
	CHECK((cqe = tc_poll(&t)) != NULL);
	memcpy(&ts1, cqe + 48, 8);
	CHECK((cqe = tc_poll(&t)) != NULL);
	memcpy(&ts2, cqe + 48, 8);
	ts1 = be64toh(ts1);
	ts2 = be64toh(ts2);
	CHECK(t0 <= ts1 && ts1 <= ts2 && ts2 <= t1);
	CHECK_ERR(hw_cq_push(plain, &f), HW_OK);
	CHECK((cqe = tc_poll(&tp)) != NULL);
	memcpy(&ts1, cqe + 48, 8);
	CHECK(ts1 == 0);
}

static void test_error_cqe(void)
{
	struct hw_cq *cq = new_cq(1);
	struct hw_cqe_fields f = {
		.opcode = HW_CQE_REQ_ERR,
		.wqe_counter = 0xbeef,
		.qpn = 0x123456,
		.syndrome = HW_CQE_SYNDROME_REMOTE_ACCESS_ERR,
		.vendor_err_synd = 0x88,
		.wqe_opcode = HW_WQE_RDMA_WRITE,
	};
	const uint8_t *c;
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	c = tc_poll(&t);
	CHECK(c != NULL);
	CHECK(c[63] >> 4 == 13 && c[55] == 0x13 && c[54] == 0x88);
	CHECK(rd32(c, 56) == (0x08u << 24 | 0x123456) && rd16(c, 60) == 0xbeef);
	CHECK(hw_err_cqe_syndrome((const struct hw_cqe64 *)(const void *)c) == HW_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	CHECK(hw_err_cqe_vendor_synd((const struct hw_cqe64 *)(const void *)c) == 0x88);
	CHECK(hw_err_cqe_wqe_opcode((const struct hw_cqe64 *)(const void *)c) == HW_WQE_RDMA_WRITE);
	CHECK(hw_cqe_wqe_counter((const struct hw_cqe64 *)(const void *)c) == 0xbeef);
}

static void push_n(struct hw_cq *cq, uint32_t n, int solicited)
{
	for (uint32_t i = 0; i < n; i++) {
		struct hw_cqe_fields f = fields_for(i);

		f.solicited = solicited != 0;
		CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
	}
}

static void drain(struct tc *t)
{
	while (tc_poll(t) != NULL)
		;
	tc_update_ci(t);
}

static void test_arm_next_fires_once_per_arm(void)
{
	struct hw_cq *cq = new_cq(4);
	uint32_t s0;
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	s0 = bell_seq(cq);
	push_n(cq, 2, 0);
	CHECK(bell_seq(cq) == s0); /* never armed: no event */
	drain(&t);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	CHECK(bell_seq(cq) == s0); /* nothing waits past the armed index */
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == s0 + 1);
	push_n(cq, 3, 0);
	CHECK(bell_seq(cq) == s0 + 1); /* one event per arm */
	/* Re-arming with the sequence number of the arm that fired changes nothing. */
	drain(&t);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == s0 + 1);
	/* The event taken, the next arm behind an unpolled CQE fires at once. */
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	CHECK(bell_seq(cq) == s0 + 2);
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == s0 + 2);
	/* Armed at the producer's index: waits for the next CQE. */
	drain(&t);
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK); /* same arm again, not yet fired */
	CHECK(bell_seq(cq) == s0 + 2);
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == s0 + 3);
	/* Sequence numbers wrap at 4. */
	for (int i = 0; i < 6; i++) {
		drain(&t);
		t.arm_sn++;
		CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
		push_n(cq, 2, 0);
		CHECK(bell_seq(cq) == s0 + 4 + (uint32_t)i);
	}
	/* Bits outside sn, command and index are refused and arm nothing. */
	drain(&t);
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0) | 1u << 31), HW_ERR_INVAL);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0) | 1u << 25), HW_ERR_INVAL);
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == s0 + 9);
}

static void test_arm_solicited(void)
{
	struct hw_cq *cq = new_cq(4);
	struct hw_cqe_fields err = { .opcode = HW_CQE_RESP_ERR, .syndrome = HW_CQE_SYNDROME_LOCAL_PROT_ERR };
	const uint8_t *c;
	uint32_t s0;
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	s0 = bell_seq(cq);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 1)), HW_OK);
	push_n(cq, 3, 0);
	CHECK(bell_seq(cq) == s0); /* unsolicited CQEs do not fire it */
	push_n(cq, 1, 1);
	CHECK(bell_seq(cq) == s0 + 1);
	push_n(cq, 1, 1);
	CHECK(bell_seq(cq) == s0 + 1);
	for (int i = 0; i < 3; i++) {
		c = tc_poll(&t);
		CHECK(c != NULL && (c[63] & 2) == 0);
	}
	c = tc_poll(&t);
	CHECK(c != NULL && (c[63] & 2) == 2); /* the SE bit */
	tc_update_ci(&t);
	/* A solicited CQE past the armed index fires at once; unsolicited ones do not. */
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 1)), HW_OK);
	CHECK(bell_seq(cq) == s0 + 2);
	drain(&t);
	push_n(cq, 2, 0);
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 1)), HW_OK);
	CHECK(bell_seq(cq) == s0 + 2);
	/* An error completion counts as solicited. */
	CHECK_ERR(hw_cq_push(cq, &err), HW_OK);
	CHECK(bell_seq(cq) == s0 + 3);
}

struct streamer {
	struct hw_cq *cq;
	_Atomic int stop;
	uint32_t pushed;
	pthread_t th;
};

/* Pushes numbered CQEs as fast as the consumer releases slots, until told to stop. */
static void *stream(void *arg)
{
	struct streamer *s = arg;

	while (!atomic_load(&s->stop)) {
		struct hw_cqe_fields f = fields_for(s->pushed);

		if (hw_cq_push(s->cq, &f) == HW_OK)
			s->pushed++;
		else
			sched_yield();
	}
	return NULL;
}

static void stop_stream_cb(void *arg)
{
	struct streamer *s = arg;

	atomic_store(&s->stop, 1);
	pthread_join(s->th, NULL);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Arming races a producer on another thread: every arm fires, and exactly once. */
static void test_arm_races_producer(void)
{
	struct hw_cq *cq = new_cq(3);
	struct streamer s = { 0 };
	uint32_t polled = 0, seq;
	const uint8_t *c;
	struct tc t;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	s.cq = cq;
	CHECK(pthread_create(&s.th, NULL, stream, &s) == 0);
	th_defer_local(stop_stream_cb, &s);
	seq = bell_seq(cq);
	for (int arm = 0; arm < 2000; arm++) {
		int64_t deadline = now_ns() + 10 * 1000000000ll;

		while ((c = tc_poll(&t)) != NULL) {
			CHECK(cqe_matches(c, polled));
			polled++;
		}
		tc_update_ci(&t);
		CHECK(bell_seq(cq) == seq); /* no event without an arm */
		CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
		while (bell_seq(cq) == seq && now_ns() < deadline)
			sched_yield();
		CHECK(bell_seq(cq) == seq + 1);
		seq++;
		t.arm_sn++;
	}
	th_undefer(stop_stream_cb, &s);
	stop_stream_cb(&s);
	CHECK(bell_seq(cq) == seq);
	while ((c = tc_poll(&t)) != NULL) {
		CHECK(cqe_matches(c, polled));
		polled++;
	}
	CHECK(polled == s.pushed && polled > 0);
}

struct pusher {
	struct hw_cq *cq;
	int ok;
};

static void *push_later(void *arg)
{
	struct pusher *p = arg;
	struct hw_cqe_fields f = fields_for(0);

	usleep(20000); /* lets the main thread sleep in poll first (not asserted) */
	p->ok = hw_cq_push(p->cq, &f) == HW_OK;
	return NULL;
}

static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms);
}

static void test_event_wakes_eventfd(void)
{
	struct hw_cq *cq = new_cq(3);
	struct hw_waiter w;
	struct hw_watch_set set = { 0 };
	struct pusher p = { 0 };
	pthread_t th;
	uint64_t v = 0;
	struct tc t;
	int efd;

	CHECK(cq != NULL);
	tc_init(&t, cq);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(efd >= 0);
	th_defer(close_cb, (void *)(intptr_t)efd);
	hw_waiter_init(&w, efd);
	th_defer_local(waiter_disarm_cb, &w);

	/* A real sleep: the consumer arms the CQ and its watch, another thread completes. */
	CHECK_ERR(hw_watch_set_add(&set, hw_cq_event_bell(cq), bell_seq(cq), NULL, NULL), HW_OK);
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	CHECK_ERR(hw_waiter_arm(&w, &set), HW_OK);
	p.cq = cq;
	CHECK(pthread_create(&th, NULL, push_later, &p) == 0);
	CHECK(wait_readable(efd, 10000) == 1);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK(p.ok);
	CHECK(read(efd, &v, sizeof(v)) == sizeof(v) && v >= 1);
	CHECK(tc_poll(&t) != NULL);

	/* Not armed: a completion rings nothing and the eventfd stays quiet. */
	set.n = 0;
	CHECK_ERR(hw_watch_set_add(&set, hw_cq_event_bell(cq), bell_seq(cq), NULL, NULL), HW_OK);
	CHECK_ERR(hw_waiter_arm(&w, &set), HW_OK);
	uint32_t seq = bell_seq(cq);
	push_n(cq, 1, 0);
	CHECK(bell_seq(cq) == seq);
	CHECK(wait_readable(efd, 0) == 0);

	/* Armed (the event taken) behind that unpolled CQE: the wake-up comes at once. */
	t.arm_sn++;
	CHECK_ERR(hw_cq_arm(cq, tc_arm_word(&t, 0)), HW_OK);
	CHECK(wait_readable(efd, 10000) == 1);
	CHECK(read(efd, &v, sizeof(v)) == sizeof(v) && v >= 1);
	hw_waiter_disarm(&w);
	th_undefer(waiter_disarm_cb, &w);
}

/* A block that outlives fork: the same pages in parent and children, as a memfd shared between processes. */
static void *shared_block(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct blk {
	void *p;
	size_t len;
};

static void unmap_cb(void *arg)
{
	struct blk *b = arg;

	munmap(b->p, b->len);
}

static pid_t kids[4];

static void kill_kids_cb(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
			kids[i] = 0;
		}
}

/* Producers in other processes complete into the owner's CQ through their own views of its block. */
static void test_producers_in_other_processes(void)
{
	enum { PER = 100, KIDS = 3 };
	static struct blk b;
	struct hw_cq_attr attr = { .log_size = 9 };
	struct hw_cq *cq = NULL;
	uint32_t seen[KIDS] = { 0 };
	struct tc t;

	b.len = hw_cq_mem_size(9);
	b.p = shared_block(b.len);
	CHECK(b.p != NULL);
	th_defer(unmap_cb, &b);
	attr.mem = b.p;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	CHECK(hw_cq_mem(cq) == b.p);
	th_defer(kill_kids_cb, NULL);
	for (int k = 0; k < KIDS; k++) {
		kids[k] = fork();
		CHECK(kids[k] >= 0);
		if (kids[k] == 0) {
			struct hw_cq *v = NULL;

			if (hw_cq_attach(b.p, b.len, &v) != HW_OK || hw_cq_cqn(v) != 0 || hw_cq_log_size(v) != 9)
				_exit(2);
			for (uint32_t i = 0; i < PER; i++) {
				struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_SEND, .qpn = 0x100u + (uint32_t)k,
							   .wqe_counter = (uint16_t)i, .byte_cnt = i };

				if (hw_cq_push(v, &f) != HW_OK)
					_exit(3);
			}
			hw_cq_destroy(v);
			_exit(0);
		}
	}
	for (int k = 0; k < KIDS; k++) {
		int ws = -1;

		CHECK(waitpid(kids[k], &ws, 0) == kids[k]);
		kids[k] = 0;
		CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	}
	/* Every CQE once, each producer's in its own order, owner bits as the card's. */
	tc_init(&t, cq);
	for (uint32_t n = 0; n < KIDS * PER; n++) {
		const uint8_t *c = tc_poll(&t);
		uint32_t k;

		CHECK(c != NULL);
		k = (rd32(c, 56) & 0xffffff) - 0x100u;
		CHECK(k < KIDS);
		CHECK(rd16(c, 60) == seen[k] && rd32(c, 44) == seen[k]);
		seen[k]++;
	}
	CHECK(tc_poll(&t) == NULL);
}

/* A producer killed at any instruction, even inside its CQE, leaves a CQ the others keep using. */
static void test_dead_producer_blocks_nobody(void)
{
	static struct blk b;
	struct hw_cq_attr attr = { .log_size = 4 };
	struct hw_cq *cq = NULL;
	struct tc t;

	b.len = hw_cq_mem_size(4);
	b.p = shared_block(b.len);
	CHECK(b.p != NULL);
	th_defer(unmap_cb, &b);
	attr.mem = b.p;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	th_defer(kill_kids_cb, NULL);
	tc_init(&t, cq);
	for (int round = 0; round < 20; round++) {
		struct hw_cqe_fields f = { .opcode = HW_CQE_REQ, .qpn = 0x200 };

		int up[2];
		char c = 0;

		CHECK(pipe(up) == 0);
		kids[0] = fork();
		CHECK(kids[0] >= 0);
		if (kids[0] == 0) {
			struct hw_cq *v = NULL;
			struct hw_cqe_fields g = { .opcode = HW_CQE_REQ, .qpn = 0x300 };

			if (hw_cq_attach(b.p, b.len, &v) != HW_OK)
				_exit(2);
			hw_cq_push(v, &g);
			if (round % 2 == 0) /* dies holding the lock */
				hw_cq_lock(v);
			if (write(up[1], "u", 1) != 1)
				_exit(3);
			for (;;) /* or wherever it is while pushing */
				if (round % 2 != 0)
					hw_cq_push(v, &g);
		}
		close(up[1]);
		CHECK(read(up[0], &c, 1) == 1); /* it is pushing */
		close(up[0]);
		usleep((useconds_t)(20 + round * 13));
		kill(kids[0], SIGKILL);
		waitpid(kids[0], NULL, 0);
		kids[0] = 0;
		/* Consume what it left, then the owner's own CQE gets through. */
		while (tc_poll(&t) != NULL)
			;
		tc_update_ci(&t);
		CHECK_ERR(hw_cq_push(cq, &f), HW_OK);
		CHECK(tc_poll(&t) != NULL);
		tc_update_ci(&t);
	}
}

/*
 * Another process writes a live process's pid (its own, as a scribbler
 * might) over the device state at the end of a CQ's block: the producer
 * lock reads as held by a process that lives. A producer must still finish
 * within a bounded time: the lock is taken over once no producer could have
 * held it that long, and the producer index, beyond the consumer's by more
 * than the ring, refuses the CQE as an overrun (latched), as a full CQ does.
 */
static void test_lock_word_of_live_process(void)
{
	static struct blk b;
	struct hw_cq_attr attr = { .log_size = 0 };
	struct hw_cq *cq = NULL;
	size_t state = 64 + 64; /* past the one-CQE ring and the doorbell record's line */
	int64_t deadline;
	int ws = -1;

	b.len = hw_cq_mem_size(0);
	b.p = shared_block(b.len);
	CHECK(b.p != NULL);
	th_defer(unmap_cb, &b);
	attr.mem = b.p;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	th_defer(kill_kids_cb, NULL);
	kids[0] = fork(); /* the scribbler: writes its pid and stays alive */
	CHECK(kids[0] >= 0);
	if (kids[0] == 0) {
		uint32_t me = (uint32_t)getpid();

		for (size_t o = state; o + 4 <= b.len; o += 4)
			memcpy((uint8_t *)b.p + o, &me, 4);
		for (;;)
			pause();
	}
	while (((uint32_t *)(void *)((uint8_t *)b.p + b.len))[-1] != (uint32_t)kids[0])
		sched_yield();
	kids[1] = fork(); /* the producer, watched with a hang guard */
	CHECK(kids[1] >= 0);
	if (kids[1] == 0) {
		struct hw_cqe_fields f = { .opcode = HW_CQE_REQ, .qpn = 0x200 };

		_exit(hw_cq_push(cq, &f) == HW_ERR_FULL && hw_cq_overrun(cq) ? 0 : 1);
	}
	deadline = now_ns() + 10 * 1000000000ll;
	while (waitpid(kids[1], &ws, WNOHANG) == 0 && now_ns() < deadline)
		usleep(1000);
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0); /* before: spun on the lock for as long as the holder lived */
	kids[1] = 0;
}

static void test_attach_refusals(void)
{
	static struct blk b;
	struct hw_cq *v = NULL;

	b.len = hw_cq_mem_size(3);
	b.p = shared_block(b.len);
	CHECK(b.p != NULL);
	th_defer(unmap_cb, &b);
	CHECK_ERR(hw_cq_attach(b.p, b.len, &v), HW_ERR_LAYOUT); /* zeroes: no CQ there */
	memset(b.p, 0xff, b.len);
	CHECK_ERR(hw_cq_attach(b.p, b.len, &v), HW_ERR_LAYOUT);
	CHECK_ERR(hw_cq_attach(b.p, 10, &v), HW_ERR_INVAL);
	CHECK_ERR(hw_cq_attach(NULL, b.len, &v), HW_ERR_INVAL);
	CHECK_ERR(hw_cq_attach((uint8_t *)b.p + 64, b.len - 64, &v), HW_ERR_INVAL);
	{
		struct hw_cq_attr attr = { .log_size = 3, .mem = b.p };
		struct hw_cq *cq = NULL;

		CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
		th_defer(cq_destroy_cb, cq);
		/* A length that does not match the CQ it holds. */
		CHECK_ERR(hw_cq_attach(b.p, b.len - 64, &v), HW_ERR_LAYOUT);
		CHECK_ERR(hw_cq_attach(b.p, b.len, &v), HW_OK);
		hw_cq_destroy(v); /* only the view */
		CHECK(hw_cq_ring(cq)[0].op_own == (HW_CQE_INVALID << HW_CQE_OPCODE_SHIFT | HW_CQE_OWNER_MASK));
	}
	{
		struct hw_cq_attr attr = { .log_size = 3, .mem = (uint8_t *)b.p + 64 };
		struct hw_cq *cq = NULL;

		CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL); /* a block is page aligned */
	}
}

/*
 * 128-byte CQEs (mlx5dv_create_cq's cqe_size): each 64-byte CQE in its
 * entry's last 64 bytes, the first 64 left zero, the owner bit per pass; a
 * view attached to the block by address writes at the same stride, and a
 * block length of 64-byte CQEs does not attach. Sizes other than 64 and 128
 * are refused.
 */
static void test_cqe_128(void)
{
	static struct blk b;
	struct hw_cq_attr attr = { .log_size = 2, .cqe_size = 128 };
	struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_SEND, .qpn = 0x123, .byte_cnt = 77 };
	struct hw_cq *cq = NULL, *v = NULL;
	uint8_t zero[64] = { 0 };
	uint8_t *ring;

	attr.cqe_size = 100;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL);
	attr.cqe_size = 32;
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_ERR_INVAL);
	CHECK(hw_cq_mem_size_cqe(2, 100) == 0 && hw_cq_mem_size_cqe(2, 128) == hw_cq_mem_size(2) + 4 * 64);
	b.len = hw_cq_mem_size_cqe(2, 128);
	b.p = shared_block(b.len);
	CHECK(b.p != NULL);
	th_defer(unmap_cb, &b);
	attr = (struct hw_cq_attr){ .log_size = 2, .cqe_size = 128, .mem = b.p };
	CHECK_ERR(hw_cq_create(&attr, &cq), HW_OK);
	th_defer(cq_destroy_cb, cq);
	CHECK(hw_cq_cqe_size(cq) == 128);
	CHECK_ERR(hw_cq_attach(b.p, hw_cq_mem_size(2), &v), HW_ERR_LAYOUT);
	CHECK_ERR(hw_cq_attach(b.p, b.len, &v), HW_OK);
	CHECK(hw_cq_cqe_size(v) == 128);
	ring = (uint8_t *)hw_cq_ring(cq);
	for (uint32_t i = 0; i < 6; i++) {
		uint32_t *dbrec = hw_cq_dbrec(cq);
		const uint8_t *e = ring + (size_t)(i & 3) * 128;

		f.wqe_counter = (uint16_t)i;
		CHECK_ERR(hw_cq_push(i % 2 ? v : cq, &f), HW_OK); /* the view and the CQ alike */
		CHECK(memcmp(e, zero, sizeof(zero)) == 0);
		CHECK(e[64 + 63] == (HW_CQE_RESP_SEND << HW_CQE_OPCODE_SHIFT | ((i >> 2) & 1)));
		CHECK(be32toh(*(const uint32_t *)(const void *)(e + 64 + 44)) == 77);
		CHECK(be16toh(*(const uint16_t *)(const void *)(e + 64 + 60)) == i);
		dbrec[HW_CQ_DBR_SET_CI] = htobe32(i + 1);
	}
	hw_cq_destroy(v);
}

/*
 * The single producer's writes (hw_cq_push_sp, the inline hw_cq_sp_push_req)
 * give the same 64 bytes as hw_cq_push, success and error CQEs, across the
 * owner bit's wraps; the inline write fires an armed CQ and refuses a full one.
 */
static void test_single_producer_same_bytes(void)
{
	struct hw_cq *a = new_cq(2), *b = new_cq(2), *c = new_cq(2);
	struct hw_cq_sp sp;
	struct tc ta, tb, tcc;

	CHECK(a != NULL && b != NULL && c != NULL);
	tc_init(&ta, a);
	tc_init(&tb, b);
	tc_init(&tcc, c);
	hw_cq_sp_open(c, &sp);
	for (uint32_t i = 0; i < 11; i++) {
		struct hw_cqe_fields f = { .opcode = HW_CQE_REQ, .wqe_counter = (uint16_t)(i * 300), .qpn = 0x123456,
					   .byte_cnt = 64 + i, .wqe_opcode = HW_WQE_MMO };
		struct hw_cqe_fields e = { .opcode = HW_CQE_REQ_ERR, .wqe_counter = (uint16_t)i, .qpn = 0x123456,
					   .wqe_opcode = HW_WQE_MMO, .syndrome = HW_CQE_SYNDROME_LOCAL_PROT_ERR,
					   .vendor_err_synd = (uint8_t)(i + 1) };
		const struct hw_cqe_fields *p = i % 3 == 2 ? &e : &f;
		const uint8_t *x, *y, *z;

		CHECK_OK(hw_cq_push(a, p));
		CHECK_OK(hw_cq_push_sp(b, p));
		if (p == &f)
			CHECK_OK(hw_cq_sp_push_req(&sp, htobe32((uint32_t)HW_WQE_MMO << 24 | 0x123456), f.wqe_counter,
						   f.byte_cnt, HW_WQE_MMO));
		else
			CHECK_OK(hw_cq_push_sp(c, p));
		x = tc_poll(&ta);
		y = tc_poll(&tb);
		z = tc_poll(&tcc);
		CHECK(x != NULL && y != NULL && z != NULL);
		CHECK(memcmp(x, y, 64) == 0 && memcmp(x, z, 64) == 0);
		tc_update_ci(&ta);
		tc_update_ci(&tb);
		tc_update_ci(&tcc);
	}
	CHECK_ERR(hw_cq_push_sp(b, &(struct hw_cqe_fields){ .opcode = HW_CQE_INVALID }), HW_ERR_INVAL);
	/* Armed: the inline write takes the firing path; one event per arm. */
	uint32_t s0 = bell_seq(c);

	CHECK_OK(hw_cq_arm(c, tc_arm_word(&tcc, 0)));
	CHECK_OK(hw_cq_sp_push_req(&sp, 0, 1, 1, HW_WQE_MMO));
	CHECK(bell_seq(c) == s0 + 1);
	CHECK_OK(hw_cq_sp_push_req(&sp, 0, 2, 1, HW_WQE_MMO));
	CHECK(bell_seq(c) == s0 + 1);
	/* Full (4 CQEs, 2 waiting): two more fit, the next is refused and the overrun latched. */
	CHECK_OK(hw_cq_sp_push_req(&sp, 0, 3, 1, HW_WQE_MMO));
	CHECK_OK(hw_cq_sp_push_req(&sp, 0, 4, 1, HW_WQE_MMO));
	CHECK(!hw_cq_overrun(c));
	CHECK_ERR(hw_cq_sp_push_req(&sp, 0, 5, 1, HW_WQE_MMO), HW_ERR_FULL);
	CHECK(hw_cq_overrun(c));
	CHECK(rd16(tc_sw_cqe(&tcc, tcc.cons_index + 3), 60) == 4);
}

int main(void)
{
	RUN(test_layout_and_constants);
	RUN(test_segment_bytes);
	RUN(test_round_trips_allocated_ring);
	RUN(test_round_trips_given_ring);
	RUN(test_timestamps);
	RUN(test_create_refusals);
	RUN(test_producers_in_other_processes);
	RUN(test_dead_producer_blocks_nobody);
	RUN(test_attach_refusals);
	RUN(test_cqe_128);
	RUN(test_overrun_refused);
	RUN(test_bad_opcode_writes_nothing);
	RUN(test_error_cqe);
	RUN(test_arm_next_fires_once_per_arm);
	RUN(test_arm_solicited);
	RUN(test_single_producer_same_bytes);
	RUN(test_arm_races_producer);
	RUN(test_lock_word_of_live_process);
	RUN(test_event_wakes_eventfd);
	return th_summary("test_hw_cq");
}
