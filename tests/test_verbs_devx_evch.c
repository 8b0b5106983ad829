/*
 * test_verbs_devx_evch — DevX event channels as rdma-core v44's
 * mlx5dv_devx_create_event_channel(3), mlx5dv_devx_subscribe_devx_event(3)
 * and mlx5dv_devx_get_event(3) describe them: a DevX CQ's completion event
 * (type 0, MLX5_EVENT_TYPE_COMP) subscribed with a cookie, the CQ armed as
 * on the card (arm word into its doorbell record, then the UAR's CQ
 * doorbell), one event per firing read back with the cookie and the EQE,
 * the channel fd readable exactly while an event waits, EAGAIN when empty
 * and non-blocking, ENOSPC for a buffer the event does not fit, EINVAL for
 * an event number the object does not raise, and an eventfd signalled by
 * mlx5dv_devx_subscribe_devx_event_fd.
 *
 * The DevX CQ and QP helpers are tests/devx_fixture.h.
 */
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#include "devx_fixture.h"

#define EV_COMP 0x00		/* MLX5_EVENT_TYPE_COMP */
#define EV_PATH_MIG 0x01	/* a QP's event, not a CQ's */
#define EQE_BYTES 64		/* struct mlx5_eqe after the cookie */
#define EQE_CQN 0x38		/* data.comp.cqn */
#define COOKIE 0x1234abcd5678ef01ull
#define WAIT_MS 20000		/* hang guard */

static int readable(int fd, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	return poll(&pf, 1, ms) == 1 && (pf.revents & POLLIN);
}

static void ch_free(void *arg)
{
	mlx5dv_devx_destroy_event_channel(arg);
}

static struct mlx5dv_devx_event_channel *ch_open(struct dx *d, int flags)
{
	struct mlx5dv_devx_event_channel *ch = mlx5dv_devx_create_event_channel(d->c, flags);

	if (ch == NULL)
		return NULL;
	th_defer(ch_free, ch);
	if (ch->fd < 0 || fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) != 0)
		return NULL;
	return ch;
}

/* A DevX QP in RTS against an ibv QP of this process, each with a receive posted on the peer. */
static void dx_pair(struct dx **dp, struct dx_peer **pp)
{
	struct dx_peer *p = calloc(1, sizeof(*p));

	CHECK(p != NULL);
	th_defer(dx_peer_close, p);
	*pp = p;
	dx_open(dp, RQ_BYTES + SQ_BYTES);
	CHECK_OK(dx_peer_open(p, (*dp)->c));
	dx_create(*dp);
	dx_up(*dp, p->qp->qp_num);
	CHECK_OK(vq_up(p->qp, (*dp)->qpn, 12, 7));
}

/* One SEND from the DevX QP, its CQE polled from the DevX CQ and the peer's. */
static void dx_one_send(struct dx *d, struct dx_peer *p, uint16_t n)
{
	struct ibv_wc wc;

	dx_fill(d->buf, MSG, (uint8_t)n);
	CHECK_OK(dx_peer_recv(p));
	dx_send_imm(d, MSG, IMM + n);
	dx_check_req_cqe(d, n);
	CHECK(vq_poll1(p->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && memcmp(p->buf, d->buf, MSG) == 0);
}

static void test_create_destroy(void)
{
	struct dx *d = NULL;
	struct mlx5dv_devx_event_channel *ch;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	ch = mlx5dv_devx_create_event_channel(d->c, 0);
	CHECK(ch != NULL && ch->fd >= 0);
	CHECK(!readable(ch->fd, 0));
	mlx5dv_devx_destroy_event_channel(ch);
	ch = mlx5dv_devx_create_event_channel(d->c, MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA);
	CHECK(ch != NULL && ch->fd >= 0);
	mlx5dv_devx_destroy_event_channel(ch);
	errno = 0;
	CHECK(mlx5dv_devx_create_event_channel(NULL, 0) == NULL);
	CHECK(errno == EINVAL);
}

/* Armed, a CQE fires one event: the cookie and the EQE naming the CQ; none without the arm. */
static void test_comp_event(void)
{
	uint8_t buf[sizeof(struct mlx5dv_devx_async_event_hdr) + EQE_BYTES];
	struct mlx5dv_devx_async_event_hdr *ev = (void *)buf;
	struct mlx5dv_devx_event_channel *ch;
	uint16_t comp = EV_COMP;
	struct dx *d = NULL;
	struct dx_peer *p = NULL;

	dx_pair(&d, &p);
	ch = ch_open(d, 0);
	CHECK(ch != NULL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, COOKIE));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
	dx_cq_arm(d, 0);
	dx_one_send(d, p, 0);
	CHECK(readable(ch->fd, WAIT_MS));
	/* Too small for cookie and EQE: ENOSPC, the event stays. */
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(ev->cookie)) == -1);
	CHECK(errno == ENOSPC);
	memset(buf, 0xee, sizeof(buf));
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(ev->cookie == COOKIE);
	CHECK(ev->out_data[1] == EV_COMP);
	CHECK(prm_get(ev->out_data, EQE_CQN * 8 + 8, 24) == d->cqn);
	CHECK(!readable(ch->fd, 0));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
	/* Not armed again: this CQE fires nothing; the next arm (sn 1) and CQE fire exactly one. */
	dx_one_send(d, p, 1);
	dx_cq_arm(d, 1);
	dx_one_send(d, p, 2);
	CHECK(readable(ch->fd, WAIT_MS));
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(ev->cookie == COOKIE);
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, ev, sizeof(buf)) == -1);
	CHECK(errno == EAGAIN);
}

/* OMIT_EV_DATA: the cookie alone. An fd subscription: the eventfd is signalled. */
static void test_omit_and_fd(void)
{
	struct mlx5dv_devx_async_event_hdr ev;
	struct mlx5dv_devx_event_channel *ch, *ch2;
	uint16_t comp = EV_COMP;
	struct dx *d = NULL;
	struct dx_peer *p = NULL;
	uint64_t v = 0;
	int efd = eventfd(0, EFD_NONBLOCK);

	CHECK(efd >= 0);
	dx_pair(&d, &p);
	ch = ch_open(d, MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA);
	ch2 = ch_open(d, 0);
	CHECK(ch != NULL && ch2 != NULL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, 7));
	CHECK_OK(mlx5dv_devx_subscribe_devx_event_fd(ch2, efd, d->cq, EV_COMP));
	dx_cq_arm(d, 0);
	dx_one_send(d, p, 0);
	CHECK(readable(ch->fd, WAIT_MS));
	CHECK(mlx5dv_devx_get_event(ch, &ev, sizeof(ev)) == (ssize_t)sizeof(ev));
	CHECK(ev.cookie == 7);
	CHECK(readable(efd, WAIT_MS));
	CHECK(read(efd, &v, sizeof(v)) == sizeof(v));
	CHECK(v == 1);
	/* The fd subscription queues nothing on its channel. */
	CHECK(!readable(ch2->fd, 0));
	close(efd);
}

/* What the kernel refuses with EINVAL; a CQ destroyed under a subscription leaves the channel usable. */
static void test_bad_input(void)
{
	struct mlx5dv_devx_async_event_hdr ev;
	struct mlx5dv_devx_event_channel *ch;
	uint16_t comp = EV_COMP, mig = EV_PATH_MIG;
	struct dx *d = NULL;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	ch = ch_open(d, 0);
	CHECK(ch != NULL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(mig), &mig, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->qp, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, NULL, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(NULL, d->cq, sizeof(comp), &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, 0, &comp, 1) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event_fd(ch, -1, d->cq, EV_COMP) == EINVAL);
	CHECK(mlx5dv_devx_subscribe_devx_event_fd(ch, 0, d->cq, EV_PATH_MIG) == EINVAL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->qp, sizeof(mig), &mig, 1));
	errno = 0;
	CHECK(mlx5dv_devx_get_event(NULL, &ev, sizeof(ev)) == -1);
	CHECK(errno == EINVAL);
	CHECK_OK(mlx5dv_devx_subscribe_devx_event(ch, d->cq, sizeof(comp), &comp, 1));
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	errno = 0;
	CHECK(mlx5dv_devx_get_event(ch, &ev, sizeof(ev) + EQE_BYTES) == -1);
	CHECK(errno == EAGAIN);
}

int main(void)
{
	RUN(test_create_destroy);
	RUN(test_comp_event);
	RUN(test_omit_and_fd);
	RUN(test_bad_input);
	return th_summary("test_verbs_devx_evch");
}
