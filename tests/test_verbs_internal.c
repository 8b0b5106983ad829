/*
 * The verbs layer against the device underneath (linked statically, so the
 * test sees hw_mem and the layer's internal entries): an MR's key translates
 * its iova to the registered memory with exactly its rights, and async
 * events posted by the device side reach ibv_get_async_event in order, with
 * the descriptor readable exactly while events are queued; a RoCE QP's path
 * carries the destination MAC the kernel would resolve at RTR.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "vb_int.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

static uint8_t buf[4096];

static void test_mr_iova_translates(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint8_t *p = NULL;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x7000000, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL);
	th_defer(vf_dereg_cb, mr);
	CHECK(hw_mkey_translate(mr->lkey, pd->handle, 0x7000000 + 100, 16, HW_ACCESS_REMOTE_READ, &p) == HW_OK);
	CHECK(p == buf + 100);
	/* The iova space is the key's: the program's address is not in it. */
	CHECK(hw_mkey_translate(mr->lkey, pd->handle, (uintptr_t)buf, 16, 0, &p) == HW_ERR_BOUNDS);
	CHECK(hw_mkey_translate(mr->lkey, pd->handle, 0x7000000 + 4090, 16, 0, &p) == HW_ERR_BOUNDS);
	CHECK(hw_mkey_translate(mr->lkey, pd->handle, 0x7000000, 16, HW_ACCESS_REMOTE_WRITE, &p) == HW_ERR_ACCESS);
	CHECK(hw_mkey_translate(mr->lkey, pd->handle + 1, 0x7000000, 16, 0, &p) == HW_ERR_PD);
	/* ibv_reg_mr: the iova is the address. */
	{
		struct ibv_mr *m2 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);

		CHECK(m2 != NULL);
		th_defer(vf_dereg_cb, m2);
		CHECK(hw_mkey_translate(m2->rkey, pd->handle, (uintptr_t)buf + 8, 8, HW_ACCESS_LOCAL_WRITE, &p) == HW_OK);
		CHECK(p == buf + 8);
	}
}

static void test_mr_dereg_revokes(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint32_t key;
	uint8_t *p;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	mr = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	key = mr->lkey;
	CHECK_OK(ibv_dereg_mr(mr));
	CHECK(hw_mkey_translate(key, pd->handle, (uintptr_t)buf, 8, 0, &p) == HW_ERR_KEY);
}

static int readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0);
}

static void test_async_queue(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_async_event ev, e1 = {.event_type = IBV_EVENT_PORT_ACTIVE},
				   e2 = {.event_type = IBV_EVENT_LID_CHANGE};

	CHECK(c != NULL);
	e1.element.port_num = 1;
	e2.element.port_num = 1;
	CHECK(readable(c->async_fd) == 0);
	CHECK_OK(vb_async_post(vb_ctx(c), &e1));
	CHECK_OK(vb_async_post(vb_ctx(c), &e2));
	CHECK(readable(c->async_fd) == 1);
	CHECK_OK(ibv_get_async_event(c, &ev));
	CHECK(ev.event_type == IBV_EVENT_PORT_ACTIVE && ev.element.port_num == 1);
	ibv_ack_async_event(&ev);
	CHECK(readable(c->async_fd) == 1);
	CHECK_OK(ibv_get_async_event(c, &ev));
	CHECK(ev.event_type == IBV_EVENT_LID_CHANGE);
	ibv_ack_async_event(&ev);
	CHECK(readable(c->async_fd) == 0);
}

struct waiter {
	struct ibv_context *c;
	struct ibv_async_event ev;
	int rc;
};

static void *wait_event(void *arg)
{
	struct waiter *w = arg;

	w->rc = ibv_get_async_event(w->c, &w->ev);
	return NULL;
}

/* A blocking get (the descriptor is blocking by default) returns when an event is posted. */
static void test_async_blocking(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_async_event e = {.event_type = IBV_EVENT_SM_CHANGE};
	struct waiter w = {.rc = -2};
	pthread_t t;

	CHECK(c != NULL);
	w.c = c;
	CHECK(pthread_create(&t, NULL, wait_event, &w) == 0);
	CHECK_OK(vb_async_post(vb_ctx(c), &e));
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(w.rc == 0 && w.ev.event_type == IBV_EVENT_SM_CHANGE);
	CHECK(readable(c->async_fd) == 0);
}

/*
 * The move to RTR resolves the destination MAC of a RoCE address, as the
 * kernel's ib_resolve_eth_dmac does: a link-local GID's EUI-64 undone, else
 * the MAC of the port that has the GID (pf0vf0: 02:53:44:0b:00:02; machine
 * 127.0.0.9's first function: 06:7f:00:00:09:00), zero when nobody has it
 * (docs/TOPOLOGY.md).
 */
static void test_rtr_dmac(void)
{
	static const struct {
		uint8_t gid[16];
		uint8_t mac[6];
	} cases[] = {
		{{[10] = 0xff, [11] = 0xff, [12] = 192, [13] = 168, [14] = 100, [15] = 2}, {0x02, 0x53, 0x44, 0x0b, 0x00, 0x02}},
		{{0xfe, 0x80, [8] = 0x00, [9] = 0x53, [10] = 0x44, [11] = 0xff, [12] = 0xfe, [13] = 0x0b, [15] = 0x01},
		 {0x02, 0x53, 0x44, 0x0b, 0x00, 0x01}},
		{{[10] = 0xff, [11] = 0xff, [12] = 127, [13] = 0, [14] = 0, [15] = 9}, {0x06, 127, 0, 0, 9, 0}},
		{{0xfd, 0x00, 0x00, 0x01, [15] = 0x05}, {0}}, /* fd00:1::5: no port's, no machine's form */
	};
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 8) : NULL;

	CHECK(pd != NULL && cq != NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_qp *qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
		union ibv_gid g;

		CHECK(qp != NULL);
		memcpy(g.raw, cases[i].gid, 16);
		memset(vb_qp_of(qp)->dmac, 0xee, 6);
		CHECK_OK(vq_up_grh(qp, qp->qp_num, &g, 1));
		CHECK(memcmp(vb_qp_of(qp)->dmac, cases[i].mac, 6) == 0);
	}
}

int main(void)
{
	RUN(test_mr_iova_translates);
	RUN(test_mr_dereg_revokes);
	RUN(test_async_queue);
	RUN(test_async_blocking);
	RUN(test_rtr_dmac);
	return th_summary("test_verbs_internal");
}
