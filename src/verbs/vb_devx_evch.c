/*
 * vb_devx_evch — DevX event channels (mlx5dv_devx_create_event_channel and
 * its subscribe and get_event calls), as the kernel's devx serves them.
 *
 * A channel is an eventfd in semaphore mode, readable while events wait
 * (one count per queued event), so poll() and epoll see it as they see the
 * kernel's channel file. An event is the subscription's cookie and, unless
 * the channel omits it, the 64-byte EQE the card reported.
 *
 * Delivered: the completion event (type 0) of a DevX CQ. The program arms
 * the CQ as on the card, the arm word into the CQ's doorbell record and the
 * UAR; the device takes the arm from the record: a watcher thread, running
 * while completion subscriptions exist, passes the record's arm word to the
 * CQ when it changes and turns each firing (the CQ's event bell moving on)
 * into one event per subscription. It sleeps on the bells (futex_waitv) and
 * on a kick word the UAR's CQ doorbell moves (a trapped store, vb_bell.c),
 * so an arm is taken and an event raised when they happen, and an idle
 * watcher costs nothing; where an arm can come unseen (traps off, a UAR
 * page not trapped, more bells than one wait takes, no futex_waitv) it
 * looks every VB_EVCH_PERIOD_NS instead. Affiliated events of QPs and RMPs
 * are pushed by the objects themselves (vb_devx_evch_obj_event).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "hw_cq.h"
#include "vb_devx_prm.h"

#define VB_EV_COMP 0x00		 /* MLX5_EVENT_TYPE_COMP */
#define VB_EQE_BYTES 64		 /* struct mlx5_eqe */
#define VB_EQE_COMP_CQN 0x38	 /* data.comp.cqn */
#define VB_EQE_QP_SRQ_TYPE 0x34	 /* data.qp_srq.type: 0 QP, 1 SRQ */
#define VB_EQE_QP_SRQ_N 0x38	 /* data.qp_srq.qp_srq_n */
#define VB_EVCH_PERIOD_NS 50000L /* between looks at the records, where an arm can come unseen */
#define VB_EVCH_SAFETY_NS 100000000L /* between looks otherwise: a record armed without its UAR store */
#define VB_EVCH_WAIT_MAX 128	 /* FUTEX_WAITV_MAX: the kick word and 127 bells */

struct vb_evch_event {
	struct vb_evch_event *next;
	uint64_t cookie;
	uint8_t eqe[VB_EQE_BYTES];
};

struct vb_evch {
	struct vb_evch_head h;		      /* first: the program's handle */
	bool omit_data;
	struct vb_evch_event *head, **tail;   /* under vb_evch_lock */
};

struct vb_evch_sub {
	struct vb_evch_sub *next;
	struct vb_evch *ch;
	int fd;			/* >= 0: an eventfd signalled instead of an event */
	uint64_t cookie;
	uint16_t type;
	const struct mlx5dv_devx_obj *obj; /* the object subscribed to */
	struct hw_cq *cq;	/* a completion subscription's CQ, else NULL */
	uint32_t cqn;
	uint32_t last_arm;	/* the record's arm word last passed on */
	uint32_t seen;		/* the event bell's sequence last turned into an event */
};

static pthread_mutex_t vb_evch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_evch_sub *vb_evch_subs;
static bool vb_evch_running;
static uint32_t vb_evch_kick;	/* moved by a CQ doorbell store and a subscription change: the watcher looks */
static bool vb_evch_unseen;	/* an arm can come without a kick: the watcher polls (sticky) */
static bool vb_evch_no_waitv;	/* the kernel has no futex_waitv (Linux < 5.16) */

/* Under the lock: one event, its EQE, to the subscription's channel or fd. */
static void vb_evch_push(struct vb_evch_sub *s, const uint8_t *eqe)
{
	struct vb_evch_event *ev;
	uint64_t one = 1;

	if (s->fd >= 0) {
		(void)!write(s->fd, &one, sizeof(one));
		return;
	}
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return;	/* the kernel drops an event it cannot queue, too */
	ev->cookie = s->cookie;
	memcpy(ev->eqe, eqe, VB_EQE_BYTES);
	*s->ch->tail = ev;
	s->ch->tail = &ev->next;
	(void)!write(s->ch->h.pub.fd, &one, sizeof(one));
}

/* Under the lock: a completion event, the CQ's number in the EQE. */
static void vb_evch_raise(struct vb_evch_sub *s)
{
	uint8_t eqe[VB_EQE_BYTES] = {0};

	eqe[1] = (uint8_t)s->type;
	vb_prm_put32(eqe + VB_EQE_COMP_CQN, s->cqn);
	vb_evch_push(s, eqe);
}

/* Under the lock: the arm the program wrote, and the firing it caused. */
static void vb_evch_look(struct vb_evch_sub *s)
{
	struct hw_bell *bell = hw_cq_event_bell(s->cq);
	uint32_t arm = be32toh(__atomic_load_n(&hw_cq_dbrec(s->cq)[HW_CQ_DBR_ARM], __ATOMIC_ACQUIRE));
	uint32_t seq;

	if (arm != s->last_arm && arm != VB_DEVX_CQ_UNARMED) {
		s->last_arm = arm;
		(void)hw_cq_arm(s->cq, arm);
	}
	seq = hw_bell_seq(bell);
	if (seq != s->seen) {
		s->seen = seq;
		vb_evch_raise(s);
	}
}

void vb_devx_evch_kick(void)
{
	__atomic_fetch_add(&vb_evch_kick, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &vb_evch_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void vb_devx_evch_unseen(void)
{
	__atomic_store_n(&vb_evch_unseen, true, __ATOMIC_RELEASE);
	vb_devx_evch_kick();
}

void vb_devx_uar_store(void *arg, uint32_t off, uint64_t val, bool has_val)
{
	(void)arg, (void)off, (void)val, (void)has_val;
	vb_devx_evch_kick(); /* the arm is in the record, written before the store */
}

/*
 * Sleeps until a bell of v moves past the value given, the kick word moves,
 * or ns pass; without futex_waitv, ns alone. v[0] is the kick word.
 */
static void vb_evch_wait(struct futex_waitv *v, unsigned n, long ns)
{
	struct timespec ts;

	if (__atomic_load_n(&vb_evch_no_waitv, __ATOMIC_RELAXED)) {
		ts = (struct timespec){ .tv_nsec = VB_EVCH_PERIOD_NS };
		nanosleep(&ts, NULL);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += ns;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	if (syscall(SYS_futex_waitv, v, n, 0, &ts, CLOCK_MONOTONIC) < 0 && errno == ENOSYS)
		__atomic_store_n(&vb_evch_no_waitv, true, __ATOMIC_RELAXED);
}

/*
 * One look at every completion subscription, its bell added to v (after
 * the kick word) with the sequence the look saw; false when none is left
 * (the watcher ends). *poll: an arm may come unseen, so the next look comes
 * after VB_EVCH_PERIOD_NS.
 */
static bool vb_evch_look_all(struct futex_waitv *v, unsigned *n, bool *poll)
{
	bool any = false;

	*n = 1;
	*poll = __atomic_load_n(&vb_evch_unseen, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&vb_evch_lock);
	for (struct vb_evch_sub *s = vb_evch_subs; s != NULL; s = s->next) {
		if (s->cq == NULL)
			continue;
		vb_evch_look(s);
		any = true;
		if (*n == VB_EVCH_WAIT_MAX) {
			*poll = true;
			continue;
		}
		/* Shared: the bell is in the CQ's block, rung by any process's QPs. */
		v[(*n)++] = (struct futex_waitv){ .val = s->seen, .uaddr = (uintptr_t)&hw_cq_event_bell(s->cq)->seq,
						  .flags = FUTEX_32 };
	}
	if (!any)
		vb_evch_running = false;
	pthread_mutex_unlock(&vb_evch_lock);
	return any;
}

static void *vb_evch_thread(void *arg)
{
	struct futex_waitv v[VB_EVCH_WAIT_MAX];
	unsigned n;
	bool poll;

	(void)arg;
	for (;;) {
		/* The kick read before the look: a kick after it ends the wait at once. */
		v[0] = (struct futex_waitv){ .val = __atomic_load_n(&vb_evch_kick, __ATOMIC_ACQUIRE),
					     .uaddr = (uintptr_t)&vb_evch_kick,
					     .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
		if (!vb_evch_look_all(v, &n, &poll))
			return NULL;
		vb_evch_wait(v, n, poll ? VB_EVCH_PERIOD_NS : VB_EVCH_SAFETY_NS);
	}
}

/* Under the lock: a completion subscription exists, so the watcher runs. */
static int vb_evch_start(void)
{
	pthread_attr_t a;
	pthread_t t;
	int rc;

	if (vb_evch_running) {
		vb_devx_evch_kick(); /* its bell joins the watcher's wait */
		return 0;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &a, vb_evch_thread, NULL);
	pthread_attr_destroy(&a);
	if (rc == 0)
		vb_evch_running = true;
	return rc;
}

/*
 * A completion subscription's hold on its CQ's event bell: while held, a
 * ring wakes the bell's futex, which the watcher sleeps on (hw_bell.h).
 */
static void vb_evch_watch(struct vb_evch_sub *s)
{
	atomic_fetch_add_explicit(&hw_cq_event_bell(s->cq)->watchers, 1, memory_order_seq_cst);
}

static void vb_evch_unwatch(struct vb_evch_sub *s)
{
	atomic_fetch_sub_explicit(&hw_cq_event_bell(s->cq)->watchers, 1, memory_order_seq_cst);
}

/* Under the lock: drops the subscriptions match() picks. */
static void vb_evch_drop(bool (*match)(const struct vb_evch_sub *, const void *), const void *arg)
{
	struct vb_evch_sub **p = &vb_evch_subs, *s;

	while ((s = *p) != NULL) {
		if (match(s, arg)) {
			*p = s->next;
			if (s->cq != NULL) {
				vb_evch_unwatch(s);
				vb_devx_evch_kick(); /* the watcher leaves the bell before the CQ goes */
			}
			free(s);
		} else {
			p = &s->next;
		}
	}
}

static bool vb_evch_of_obj(const struct vb_evch_sub *s, const void *obj)
{
	return s->obj == obj;
}

void vb_devx_evch_obj_gone(const struct mlx5dv_devx_obj *obj)
{
	pthread_mutex_lock(&vb_evch_lock);
	vb_evch_drop(vb_evch_of_obj, obj);
	pthread_mutex_unlock(&vb_evch_lock);
}

/*
 * An affiliated event of obj (a QP's or an SRQ's, as struct mlx5_eqe_qp_srq:
 * the resource's kind, 0 QP or 1 SRQ, at 0x34 and its number at 0x38), one
 * per subscription to that event number, from whichever thread the device
 * raised it on.
 */
void vb_devx_evch_obj_event(const struct mlx5dv_devx_obj *obj, uint16_t type, uint32_t num, bool srq)
{
	uint8_t eqe[VB_EQE_BYTES] = {0};

	eqe[1] = (uint8_t)type;
	eqe[VB_EQE_QP_SRQ_TYPE] = srq ? 1 : 0;
	vb_prm_put32(eqe + VB_EQE_QP_SRQ_N, num & 0xffffff);
	pthread_mutex_lock(&vb_evch_lock);
	for (struct vb_evch_sub *s = vb_evch_subs; s != NULL; s = s->next)
		if (s->obj == obj && s->type == type)
			vb_evch_push(s, eqe);
	pthread_mutex_unlock(&vb_evch_lock);
}

static bool vb_evch_of_ch(const struct vb_evch_sub *s, const void *ch)
{
	return s->ch == ch;
}

struct mlx5dv_devx_event_channel *vb_evch_create(struct ibv_context *context, uint32_t flags)
{
	struct vb_evch *ch;

	if (vb_ctx_checked(context) == NULL || (flags & ~MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA) != 0) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->h.pub.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->h.pub.fd < 0) {
		free(ch);
		return NULL;
	}
	ch->omit_data = (flags & MLX5_IB_UAPI_DEVX_CR_EV_CH_FLAGS_OMIT_DATA) != 0;
	ch->tail = &ch->head;
	ch->h.dv = &vb_dv_ops_impl;
	return &ch->h.pub;
}

void vb_evch_destroy(struct mlx5dv_devx_event_channel *event_channel)
{
	struct vb_evch *ch = (struct vb_evch *)event_channel;
	struct vb_evch_event *ev;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&vb_evch_lock);
	vb_evch_drop(vb_evch_of_ch, ch);
	pthread_mutex_unlock(&vb_evch_lock);
	while ((ev = ch->head) != NULL) {
		ch->head = ev->next;
		free(ev);
	}
	close(ch->h.pub.fd);
	free(ch);
}

/* The kernel's check: the event numbers an object of that kind raises (EINVAL otherwise). */
static bool vb_evch_valid(const struct mlx5dv_devx_obj *obj, uint16_t type)
{
	if (obj->kind == VB_DEVX_CQ)
		return type == VB_EV_COMP;
	if (obj->kind == VB_DEVX_QP)	/* path migration, comm established, SQ drained, WQ errors, last WQE */
		return (type >= 0x01 && type <= 0x03) || type == 0x07 || (type >= 0x10 && type <= 0x13);
	if (obj->kind == VB_DEVX_RMP)	/* its limit, its catastrophic error */
		return type == VB_EV_SRQ_RQ_LIMIT || type == VB_EV_SRQ_CATAS;
	return false;
}

/* One subscription per event number, all or none. */
int vb_evch_subscribe(struct mlx5dv_devx_event_channel *event_channel, int fd, struct mlx5dv_devx_obj *obj,
		      uint16_t n, const uint16_t *types, uint64_t cookie)
{
	struct vb_evch *ch = (struct vb_evch *)event_channel;
	struct vb_evch_sub *s, *added = NULL, *last = NULL;
	uint16_t i;
	int rc = 0;

	if (ch == NULL || obj == NULL || types == NULL || n == 0)
		return EINVAL;
	for (i = 0; i < n; i++)
		if (!vb_evch_valid(obj, types[i]) || (obj->kind == VB_DEVX_CQ && obj->priv == NULL))
			return EINVAL;
	pthread_mutex_lock(&vb_evch_lock);
	for (i = 0; i < n && rc == 0; i++) {
		s = calloc(1, sizeof(*s));
		if (s == NULL) {
			rc = ENOMEM;
			break;
		}
		*s = (struct vb_evch_sub){.ch = ch, .fd = fd, .cookie = cookie, .type = types[i], .obj = obj};
		if (obj->kind == VB_DEVX_CQ) {
			s->cq = vb_devx_cq_hw(obj);
			s->cqn = obj->object_id;
			s->seen = hw_bell_seq(hw_cq_event_bell(s->cq));
			/* An arm already in the record (written before subscribing) is taken too. */
			s->last_arm = VB_DEVX_CQ_UNARMED;
			vb_evch_watch(s);
			rc = vb_evch_start();
		}
		s->next = added;
		added = s;
	}
	if (rc != 0) {
		while ((s = added) != NULL) {
			added = s->next;
			if (s->cq != NULL)
				vb_evch_unwatch(s);
			free(s);
		}
	} else if (added != NULL) {
		for (last = added; last->next != NULL; last = last->next)
			;
		last->next = vb_evch_subs;
		vb_evch_subs = added;
	}
	pthread_mutex_unlock(&vb_evch_lock);
	return rc;
}

ssize_t vb_evch_get_event(struct mlx5dv_devx_event_channel *event_channel,
			  struct mlx5_ib_uapi_devx_async_event_hdr *event_data, size_t event_resp_len)
{
	struct vb_evch *ch = (struct vb_evch *)event_channel;
	struct vb_evch_event *ev;
	size_t sz;
	uint64_t v;

	if (ch == NULL || event_data == NULL) {
		errno = EINVAL;
		return -1;
	}
	sz = sizeof(event_data->cookie) + (ch->omit_data ? 0 : VB_EQE_BYTES);
	if (event_resp_len < sz) {	/* the kernel's read refuses a buffer the event does not fit */
		errno = ENOSPC;
		return -1;
	}
	/* Blocks, or EAGAIN on a non-blocking channel, as the kernel's read. */
	if (read(ch->h.pub.fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	pthread_mutex_lock(&vb_evch_lock);
	ev = ch->head;
	if (ev != NULL) {
		ch->head = ev->next;
		if (ch->head == NULL)
			ch->tail = &ch->head;
	}
	pthread_mutex_unlock(&vb_evch_lock);
	if (ev == NULL) {
		errno = EAGAIN;
		return -1;
	}
	event_data->cookie = ev->cookie;
	if (!ch->omit_data)
		memcpy(event_data->out_data, ev->eqe, VB_EQE_BYTES);
	free(ev);
	return (ssize_t)sz;
}
