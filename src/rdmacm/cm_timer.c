/*
 * cm_timer — the CM's timers, as the kernel's CM has them: a REQ or REP
 * nobody answers ends in UNREACHABLE (-ETIMEDOUT), a DREQ nobody answers in
 * DISCONNECTED (-ETIMEDOUT), and an address query nobody answers in
 * ADDR_ERROR (-ETIMEDOUT) after the caller's timeout_ms.
 *
 * A peer that dies is seen at once (its socket's EOF); these cover a peer
 * that lives but does not answer (a stopped process, one whose CM thread is
 * stuck). The IB CM waits its response timeout for each of its 15 retries:
 * 16 x (4096 + 2 x 256) ms on a RoCE port (CMA_CM_RESPONSE_TIMEOUT 20,
 * packet lifetime 16), SOFTDPU_CM_TIMEOUT_MS in all. Armed timers are on one
 * list, under cm_lock; the CM thread sleeps until the earliest and fires
 * those due. A timer fires only if its id is still in the state it was
 * armed in, so a transition needs no disarming.
 */
#include <errno.h>

#include "base_clock.h"
#include "base_config.h"
#include "cm_int.h"

static struct cm_list cm_timers = { &cm_timers, &cm_timers };

void cm_timer_disarm(struct cm_id *id)
{
	if (id->timer_at == 0)
		return;
	cm_list_del(&id->timer_link);
	id->timer_at = 0;
}

/* Arms id's timer for ms from now in its present state (cm_lock held). */
void cm_timer_arm(struct cm_id *id, unsigned ms)
{
	cm_timer_disarm(id);
	id->timer_at = base_deadline_ns((uint64_t)ms * 1000000u);
	id->timer_state = id->state;
	cm_list_add_tail(&cm_timers, &id->timer_link);
	cm_loop_kick(); /* the thread may be asleep with a later deadline */
}

/* A REQ, REP or DREQ sent: the peer has the CM's response timeout to answer. */
void cm_timer_arm_response(struct cm_id *id)
{
	cm_timer_arm(id, base_config_cm_timeout_ms());
}

/* Milliseconds until the earliest timer (0: one is due), or -1 with none armed. */
int cm_timer_next_ms(void)
{
	uint64_t first = UINT64_MAX;
	struct cm_list *l;

	for (l = cm_timers.next; l != &cm_timers; l = l->next) {
		struct cm_id *id = cm_container_of(l, struct cm_id, timer_link);

		if (id->timer_at < first)
			first = id->timer_at;
	}
	return first == UINT64_MAX ? -1 : base_deadline_ms_left(first);
}

static void cm_timer_queue(struct cm_id *id, enum rdma_cm_event_type type)
{
	cm_event_queue(id->ch, cm_event_new(id, type, -ETIMEDOUT));
}

/* What the kernel's CM does when the peer never answered (rdma_cm's cma_ib_handler, addr.c). */
static void cm_timer_fire(struct cm_id *id)
{
	switch (id->state) {
	case CM_REQ_WAIT: /* a connection that sent no REQ, or one held past the backlog whose requester gave up */
		cm_id_free_locked(id);
		return;
	case CM_ADDR_QUERY:
		id->state = CM_IDLE;
		cm_timer_queue(id, RDMA_CM_EVENT_ADDR_ERROR);
		return;
	case CM_CONNECT: /* REQ (or SIDR REQ) unanswered */
		cm_loop_unwatch(id);
		id->state = CM_REJECTED;
		cm_timer_queue(id, RDMA_CM_EVENT_UNREACHABLE);
		return;
	case CM_ACCEPT: /* REP without RTU */
		cm_loop_unwatch(id);
		id->state = CM_DISCONNECTED;
		cm_timer_queue(id, RDMA_CM_EVENT_UNREACHABLE);
		return;
	case CM_DREQ_SENT: /* DREQ without DREP */
		cm_loop_unwatch(id);
		id->state = CM_DISCONNECTED;
		cm_timer_queue(id, RDMA_CM_EVENT_DISCONNECTED);
		return;
	default:
		return;
	}
}

/* Fires the timers that are due (the CM thread, cm_lock held). */
void cm_timer_expire(void)
{
	uint64_t now = base_clock_ns();
	struct cm_list *l;

	for (l = cm_timers.next; l != &cm_timers;) {
		struct cm_id *id = cm_container_of(l, struct cm_id, timer_link);

		l = l->next;
		if (id->timer_at > now)
			continue;
		cm_timer_disarm(id);
		if (id->state == id->timer_state)
			cm_timer_fire(id);
	}
}

/* A forked child: the parent's connections are not its own (cm_loop_atfork). */
void cm_timer_forget_all(void)
{
	while (!cm_list_empty(&cm_timers))
		cm_timer_disarm(cm_container_of(cm_timers.next, struct cm_id, timer_link));
}
