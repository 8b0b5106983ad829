/*
 * bench_flexio_evh — FlexIO event-handler activation beside what it is
 * made of, in one run. A host ibv QP sends 8-byte messages to a device QP
 * whose receive CQ wakes an event handler (tests/flexio/fx_queue_dev.c in
 * its sink mode: it takes each message, posts the receive again, re-arms
 * and reschedules).
 *
 *   activation, polling   ibv_post_send started -> the handler running
 *                         (the time stamp counter read at both ends, so
 *                         the host seeing it later does not count), the
 *                         handler's thread still polling after the last one
 *   activation, sleeping  the same after 500 us of quiet: the thread sleeps
 *                         (the host yields its core while it waits)
 *   post_send alone       the send's own cost in the above (CQE written)
 *   futex wake            a thread asleep on a futex: wake -> running, after
 *                         the same quiet (the floor of a sleeping thread),
 *                         by the same time stamps, the waker yielding alike
 *   line one-way          a cache line seen by a spinning thread (the floor
 *                         of a polling one), likewise
 *   rate                  messages as fast as 32 outstanding allow, posted
 *                         8 at a time: activations/s and messages/s
 *
 * Usage: bench_flexio_evh [--quick]
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_stats.h"
#include "flexio/fxq_fixture.h"

extern struct flexio_app *bench_queue_dev;
flexio_func_t fxq_handler;

#define QUIET_US 500

/* Both ends of a latency read the same clock: the TSC on x86 (one instruction, no system call). */
#if defined(__x86_64__)
static double tsc_per_ns;

static uint64_t stamp(void)
{
	return __builtin_ia32_rdtsc();
}

static void stamp_calibrate(void)
{
	uint64_t t0 = now_ns(), c0 = stamp();

	usleep(50000);
	tsc_per_ns = (double)(stamp() - c0) / (double)(now_ns() - t0);
}

static uint64_t stamp_ns(uint64_t from, uint64_t to)
{
	return (uint64_t)((double)(to - from) / tsc_per_ns);
}
#else
static uint64_t stamp(void)
{
	return now_ns();
}

static void stamp_calibrate(void)
{
}

static uint64_t stamp_ns(uint64_t from, uint64_t to)
{
	return to - from;
}
#endif

static uint64_t load_acq(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * Bounded wait until *p reaches v; false when it did not within 2 s. With
 * yield, the waiting thread gives its core up between looks: a thread woken
 * from sleep is often placed on its waker's core, and would otherwise wait
 * for the waker's time slice to end (the futex floor is measured the same way).
 */
static bool wait_until(const uint64_t *p, uint64_t v, bool yield)
{
	uint64_t until = now_ns() + 2000000000ull;

	while (load_acq(p) < v) {
		if (yield)
			sched_yield();
		if (now_ns() > until)
			return false;
	}
	return true;
}

static void reap_sends(struct fx *f)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(f->hcq, 16, wc) > 0)
		;
}

/* One activation per message; lat gets post -> running, post gets the send's own time. */
static bool activations(struct fx *f, uint32_t n, bool quiet, uint64_t *lat, uint64_t *post, uint64_t *sent)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t base = load_acq(&f->c->activations), t0, t1;

		/* stamps are read on two cores: equal TSCs, as every x86 of this century keeps */

		if (quiet)
			usleep(QUIET_US);
		t0 = stamp();
		if (host_send(f, (*sent)++) != 0)
			return false;
		t1 = stamp();
		if (!wait_until(&f->c->activations, base + 1, quiet))
			return false;
#if defined(__x86_64__)
		lat[i] = stamp_ns(t0, f->c->t_entry);
#else
		lat[i] = stamp_ns(t0, stamp()); /* seen by the host: an upper bound */
#endif
		post[i] = stamp_ns(t0, t1);
		if (!wait_until(&f->c->done, base + 1, quiet))
			return false;
		reap_sends(f);
	}
	return true;
}

#define RATE_CHAIN 8

/* RATE_CHAIN sends in one post, the last one signaled: the host's cost per message falls below the handler's. */
static int send_chain(struct fx *f, uint64_t *sent)
{
	struct ibv_sge sg[RATE_CHAIN];
	struct ibv_send_wr w[RATE_CHAIN], *bad;

	for (uint32_t i = 0; i < RATE_CHAIN; i++) {
		uint64_t *slot = &f->hbuf[HOST_RX + (*sent + i) % HOST_RX];

		*slot = *sent + i;
		sg[i] = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = 8, .lkey = f->hmr->lkey };
		w[i] = (struct ibv_send_wr){ .wr_id = *sent + i, .sg_list = &sg[i], .num_sge = 1, .opcode = IBV_WR_SEND,
					     .send_flags = i + 1 == RATE_CHAIN ? IBV_SEND_SIGNALED : 0,
					     .next = i + 1 == RATE_CHAIN ? NULL : &w[i + 1] };
	}
	*sent += RATE_CHAIN;
	return ibv_post_send(f->hqp, w, &bad);
}

/* Messages as fast as 32 in flight allow (posted 8 at a time), for ms; activations/s and messages/s. */
static bool rate(struct fx *f, uint32_t ms, uint64_t *sent, double *act_s, double *msg_s)
{
	uint64_t a0 = load_acq(&f->c->activations), m0 = load_acq(&f->c->msgs), t0 = now_ns(), end = t0 + ms * 1000000ull;
	uint64_t s0 = *sent;

	while (now_ns() < end) {
		if (*sent - load_acq(&f->c->msgs) <= 32 - RATE_CHAIN && send_chain(f, sent) != 0)
			return false;
		reap_sends(f);
	}
	if (!wait_until(&f->c->msgs, m0 + (*sent - s0), false))
		return false;
	*act_s = (double)(load_acq(&f->c->activations) - a0) / ((double)(now_ns() - t0) / 1e9);
	*msg_s = (double)(load_acq(&f->c->msgs) - m0) / ((double)(now_ns() - t0) / 1e9);
	return true;
}

/* ---- the floors ---- */

static _Atomic uint32_t fw_word;
static _Atomic uint64_t fw_seen, fw_stamp;
static uint32_t fw_rounds;

static void *fw_sleeper(void *arg)
{
	(void)arg;
	for (uint32_t i = 1; i <= fw_rounds; i++) {
		while (atomic_load(&fw_word) < i)
			syscall(SYS_futex, &fw_word, FUTEX_WAIT_PRIVATE, i - 1, NULL, NULL, 0);
		atomic_store(&fw_stamp, stamp());
		atomic_store(&fw_seen, i);
	}
	return NULL;
}

static struct stats futex_wake_lat(uint32_t n, uint64_t *lat)
{
	pthread_t t;

	fw_rounds = n;
	atomic_store(&fw_word, 0);
	atomic_store(&fw_seen, 0);
	pthread_create(&t, NULL, fw_sleeper, NULL);
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t t0;

		usleep(QUIET_US);
		t0 = stamp();
		atomic_store(&fw_word, i);
		syscall(SYS_futex, &fw_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		while (atomic_load(&fw_seen) < i)
			sched_yield();
		lat[i - 1] = stamp_ns(t0, atomic_load(&fw_stamp));
	}
	pthread_join(t, NULL);
	return summarize(lat, n);
}

static _Atomic uint64_t ln_word, ln_seen, ln_stamp;

static void *ln_spinner(void *arg)
{
	uint64_t n = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 1; i <= n; i++) {
		while (atomic_load(&ln_word) < i)
			;
		atomic_store(&ln_stamp, stamp());
		atomic_store(&ln_seen, i);
	}
	return NULL;
}

static struct stats line_one_way(uint32_t n, uint64_t *lat)
{
	pthread_t t;

	atomic_store(&ln_word, 0);
	atomic_store(&ln_seen, 0);
	pthread_create(&t, NULL, ln_spinner, (void *)(uintptr_t)n);
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t t0 = stamp();

		atomic_store(&ln_word, i);
		while (atomic_load(&ln_seen) < i)
			;
		lat[i - 1] = stamp_ns(t0, atomic_load(&ln_stamp));
	}
	pthread_join(t, NULL);
	return summarize(lat, n);
}

static void print_row(const char *name, struct stats s)
{
	printf("%-22s %10.2f %10.2f\n", name, s.median_us, s.p99_us);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	uint32_t n = quick ? 500 : 20000, nq = quick ? 100 : 2000;
	uint64_t *lat = calloc(n, sizeof(*lat)), *post = calloc(n, sizeof(*post)), sent = 0;
	struct stats poll_s, post_s, sleep_s, fw, ln;
	double act_s = 0, msg_s = 0;
	struct fx *f;

	stamp_calibrate();
	open_dev();
	f = ctx != NULL ? fx_up(bench_queue_dev, fxq_handler, FXQ_SINK) : NULL;
	if (f == NULL || lat == NULL || post == NULL ||
	    flexio_event_handler_run(f->eh, f->ctx_d) != FLEXIO_STATUS_SUCCESS) {
		fprintf(stderr, "bench_flexio_evh: no device, or the device objects cannot be made\n");
		return 1;
	}
	if (!activations(f, n, false, lat, post, &sent)) {
		fprintf(stderr, "bench_flexio_evh: an activation was lost\n");
		return 1;
	}
	poll_s = summarize(lat, n);
	post_s = summarize(post, n);
	if (!activations(f, nq, true, lat, post, &sent)) {
		fprintf(stderr, "bench_flexio_evh: an activation was lost\n");
		return 1;
	}
	sleep_s = summarize(lat, nq);
	if (!rate(f, quick ? 100 : 1000, &sent, &act_s, &msg_s)) {
		fprintf(stderr, "bench_flexio_evh: messages were lost\n");
		return 1;
	}
	fw = futex_wake_lat(nq, lat);
	ln = line_one_way(n, lat);
	printf("FlexIO event-handler activation (us): CQE written -> handler running, against a thread's wake-up\n");
	printf("%-22s %10s %10s\n", "", "median", "p99");
	print_row("activation, polling", poll_s);
	print_row("  of which post_send", post_s);
	print_row("line one-way", ln);
	print_row("activation, sleeping", sleep_s);
	print_row("futex wake", fw);
	printf("activation sleeping / futex wake: %.2fx (median)\n", sleep_s.median_us / fw.median_us);
	printf("rate, 32 in flight, posted 8 at a time: %.0f activations/s, %.0f messages/s\n\n", act_s, msg_s);
	if (f->c->errors != 0 || f->c->arm_failures != 0)
		fprintf(stderr, "bench_flexio_evh: the handler saw %llu errors\n", (unsigned long long)f->c->errors);
	fx_down(f);
	ibv_close_device(ctx);
	free(lat);
	free(post);
	return 0;
}
