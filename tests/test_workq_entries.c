/*
 * Work-queue entries: submit takes the job (the caller's struct is free again
 * when submit returns, for every job type), and an event-driven work queue
 * wakes its waiter only when a job completed or can complete.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "doca_sha.h"
#include "doca_sync_event.h"
#include "harness.h"
#include "se_fixture.h"
#include "sha_fixture.h"

#define NJOBS 64
#define CHUNK 64

/* ------------------------------------------------------------------ DMA */

static void scribble(void *p, size_t n)
{
	memset(p, 0xa5, n); /* what a reused or dead stack frame holds */
}

/* Every copy of a batch comes from one struct, overwritten after each submit. */
static void test_dma_struct_reused(void)
{
	struct doca_buf *src[NJOBS], *dst[NJOBS];
	struct doca_dma_job_memcpy job;
	struct doca_event ev;
	struct fx f;

	CHECK(fx_setup(&f, NJOBS * CHUNK, NJOBS, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int i = 0; i < NJOBS; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + i * CHUNK, CHUNK, &src[i]));
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + (NJOBS - 1 - i) * CHUNK, CHUNK,
							&dst[i]));
		job = (struct doca_dma_job_memcpy){ .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx,
							      .user_data.u64 = 1000 + (uint64_t)i },
						    .dst_buff = dst[i], .src_buff = src[i] };
		CHECK_OK(doca_workq_submit(f.wq, &job.base));
		scribble(&job, sizeof(job));
	}
	for (int i = 0; i < NJOBS; i++) {
		CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE));
		CHECK(ev.type == DOCA_DMA_JOB_MEMCPY);
		CHECK(ev.user_data.u64 == 1000 + (uint64_t)i);
		CHECK(ev.result.u64 == DOCA_SUCCESS);
	}
	CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, 0), DOCA_ERROR_AGAIN);
	for (int i = 0; i < NJOBS; i++) {
		size_t len = 0;

		CHECK(memcmp(f.dst + (NJOBS - 1 - i) * CHUNK, f.src + i * CHUNK, CHUNK) == 0);
		CHECK_OK(doca_buf_get_data_len(dst[i], &len));
		CHECK(len == CHUNK);
		CHECK_OK(doca_buf_refcount_rm(src[i], NULL));
		CHECK_OK(doca_buf_refcount_rm(dst[i], NULL));
	}
	fx_teardown(&f);
}

/* The job lives in a frame that is gone (and reused) before anything is retrieved. */
static __attribute__((noinline)) doca_error_t submit_from_frame(struct fx *f, struct doca_buf *d,
								 struct doca_buf *s, uint64_t tag)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f->ctx,
						     .user_data.u64 = tag },
					   .dst_buff = d, .src_buff = s };

	return doca_workq_submit(f->wq, &job.base);
}

static __attribute__((noinline)) void clobber_stack(void)
{
	volatile unsigned char junk[4096];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0x5a;
	(void)junk[17];
}

static void test_dma_frame_returned(void)
{
	struct doca_buf *s, *d;
	struct doca_event ev;
	struct fx f;

	CHECK(fx_setup(&f, 4096, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 4096, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 4096, &d));
	CHECK_OK(submit_from_frame(&f, d, s, 0xfeedULL));
	clobber_stack();
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 0xfeedULL);
	CHECK(memcmp(f.dst, f.src, 4096) == 0);
	CHECK_OK(doca_buf_refcount_rm(s, NULL));
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	fx_teardown(&f);
}

/* ------------------------------------------------------------------ SHA */

#define SHA256_LEN 32

static void test_sha_struct_reused(void)
{
	struct doca_buf *req[NJOBS], *resp[NJOBS];
	unsigned char want[SHA256_LEN];
	struct doca_sha_job job;
	struct doca_event ev;
	struct sfx s;

	CHECK(sfx_setup_sized(&s, NJOBS * CHUNK, NJOBS * CHUNK, NJOBS, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int i = 0; i < NJOBS; i++) {
		/* Message i: the first i + 1 bytes of its chunk, so no two digests are equal. */
		CHECK_OK(doca_buf_inventory_buf_by_data(s.inv, s.src_mmap, s.src + i * CHUNK, (size_t)i % CHUNK + 1,
							&req[i]));
		CHECK_OK(doca_buf_inventory_buf_by_addr(s.inv, s.dst_mmap, s.dst + i * CHUNK, CHUNK, &resp[i]));
		job = (struct doca_sha_job){ .base = { .type = DOCA_SHA_JOB_SHA256, .ctx = s.ctx,
						       .user_data.u64 = 7000 + (uint64_t)i },
					     .req_buf = req[i], .resp_buf = resp[i] };
		CHECK_OK(doca_workq_submit(s.wq, &job.base));
		scribble(&job, sizeof(job));
	}
	for (int i = 0; i < NJOBS; i++) {
		CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
		CHECK(ev.type == DOCA_SHA_JOB_SHA256 && ev.user_data.u64 == 7000 + (uint64_t)i);
		CHECK(EVP_Digest(s.src + i * CHUNK, (size_t)i % CHUNK + 1, want, NULL, EVP_sha256(), NULL) == 1);
		CHECK(memcmp(s.dst + i * CHUNK, want, SHA256_LEN) == 0);
		CHECK_OK(doca_buf_refcount_rm(req[i], NULL));
		CHECK_OK(doca_buf_refcount_rm(resp[i], NULL));
	}
	sfx_teardown(&s);
}

/* ----------------------------------------------------------- Sync Event */

static struct doca_dev *dev; /* opened once by main */

static int se_setup(struct se_fx *s, uint32_t depth, int event_driven)
{
	return se_fx_setup(s, dev, depth, event_driven);
}

/* Add jobs from one struct: each fetched value lands where that submit said. */
static void test_sync_event_struct_reused(void)
{
	struct doca_sync_event_job_update_add add;
	struct doca_sync_event_job_get get;
	uint64_t fetched[NJOBS], final = 0;
	struct doca_event ev;
	struct se_fx s;

	CHECK(se_setup(&s, NJOBS + 1, 0) == 0);
	for (int i = 0; i < NJOBS; i++) {
		fetched[i] = UINT64_MAX;
		add = (struct doca_sync_event_job_update_add){
			.base = { .type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD, .ctx = s.ctx, .user_data.u64 = (uint64_t)i },
			.value = (uint64_t)i + 1,
			.fetched = &fetched[i]
		};
		CHECK_OK(doca_workq_submit(s.wq, &add.base));
		scribble(&add, sizeof(add));
	}
	get = (struct doca_sync_event_job_get){ .base = { .type = DOCA_SYNC_EVENT_JOB_GET, .ctx = s.ctx,
							  .user_data.u64 = 999 },
						.value = &final };
	CHECK_OK(doca_workq_submit(s.wq, &get.base));
	scribble(&get, sizeof(get));
	for (int i = 0; i < NJOBS; i++) {
		CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
		CHECK(ev.type == DOCA_SYNC_EVENT_JOB_UPDATE_ADD && ev.user_data.u64 == (uint64_t)i);
		CHECK(fetched[i] == (uint64_t)i * ((uint64_t)i + 1) / 2); /* 1 + 2 + ... + i before job i */
	}
	CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_GET && ev.user_data.u64 == 999);
	CHECK(final == (uint64_t)NJOBS * (NJOBS + 1) / 2);
	se_fx_teardown(&s);
}

/* A wait requeued many times keeps its own threshold and user_data. */
static void test_wait_struct_reused(void)
{
	struct doca_sync_event_job_wait w;
	struct doca_event ev;
	struct se_fx s;

	CHECK(se_setup(&s, 4, 0) == 0);
	w = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = s.ctx,
							 .user_data.u64 = 31 },
					       .value = 9, .mask = UINT64_MAX };
	CHECK_OK(doca_workq_submit(s.wq, &w.base));
	w.value = 0; /* were the job still read from here, it would complete at once */
	w.base.user_data.u64 = 0;
	for (int i = 0; i < 100; i++)
		CHECK_ERR(doca_workq_progress_retrieve(s.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_sync_event_update_set(s.se, 9));
	CHECK_ERR(doca_workq_progress_retrieve(s.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_sync_event_update_set(s.se, 10));
	CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 31 && ev.result.u64 == DOCA_SUCCESS);
	se_fx_teardown(&s);
}

/* ------------------------------------------------------- event-driven mode */

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A Sync Event context on an event-driven work queue, its handle in an epoll set, and a wake-up count. */
struct evq {
	struct se_fx s;
	int ep;
	int fd;
	unsigned wakes;
};

static void evq_cleanup(void *arg)
{
	struct evq *q = arg;

	if (q->ep >= 0)
		close(q->ep);
	q->ep = -1;
}

/* Released by evq_teardown, or by the harness if the case stops first. */
static int evq_setup(struct evq *q)
{
	struct epoll_event e = { .events = EPOLLIN };
	doca_event_handle_t h;

	q->ep = -1;
	q->wakes = 0;
	if (se_fx_setup(&q->s, dev, 4, 1) != 0 || doca_workq_get_event_handle(q->s.wq, &h) != DOCA_SUCCESS)
		return -1;
	q->fd = h;
	q->ep = epoll_create1(EPOLL_CLOEXEC);
	th_defer_local(evq_cleanup, q);
	return q->ep < 0 || epoll_ctl(q->ep, EPOLL_CTL_ADD, q->fd, &e) != 0 ? -1 : 0;
}

static void evq_teardown(struct evq *q)
{
	th_undefer(evq_cleanup, q);
	evq_cleanup(q);
	se_fx_teardown(&q->s);
}

static doca_error_t evq_submit_wait(struct evq *q, uint64_t above, uint64_t user)
{
	struct doca_sync_event_job_wait w = { .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = q->s.ctx,
							.user_data.u64 = user },
					      .value = above, .mask = UINT64_MAX };

	return doca_workq_submit(q->s.wq, &w.base);
}

/* Whether the handle is readable within timeout_ms; clears it when it is. */
static int evq_readable(struct evq *q, int timeout_ms)
{
	struct epoll_event out;

	if (epoll_wait(q->ep, &out, 1, timeout_ms) != 1)
		return 0;
	return doca_workq_event_handle_clear(q->s.wq, q->fd) == DOCA_SUCCESS;
}

/*
 * The loop of the DOCA Core guide (§3.4.5): arm, wait, clear, retrieve, until
 * a job completes or the deadline passes. Returns the retrieve status. Waits
 * of at most 10 ms, so an armed watch is re-armed many times over.
 */
static doca_error_t evq_loop_until(struct evq *q, struct doca_event *ev, int64_t deadline)
{
	doca_error_t st;
	int64_t left;

	for (;;) {
		if (doca_workq_event_handle_arm(q->s.wq) != DOCA_SUCCESS)
			return DOCA_ERROR_UNEXPECTED;
		left = (deadline - now_ns()) / 1000000;
		if (left <= 0)
			return DOCA_ERROR_TIME_OUT;
		if (evq_readable(q, left < 10 ? (int)left : 10))
			q->wakes++;
		st = doca_workq_progress_retrieve(q->s.wq, ev, 0);
		if (st != DOCA_ERROR_AGAIN)
			return st;
	}
}

#define SECONDS(n) ((int64_t)(n) * 1000000000)

/* A pending wait with nothing happening costs (almost) no wake-ups. */
static void test_quiet_wait_sleeps(void)
{
	struct doca_event ev;
	struct evq q;

	CHECK(evq_setup(&q) == 0);
	CHECK_OK(evq_submit_wait(&q, 0, 0));
	CHECK_ERR(evq_loop_until(&q, &ev, now_ns() + SECONDS(1) / 4), DOCA_ERROR_TIME_OUT);
	/* One wake to try the new job; then it is blocked and the handle stays quiet. */
	if (q.wakes > 3)
		TH_FAIL("%u wake-ups in 250 ms with only a blocked wait queued", q.wakes);
	/* The wait completes once the event passes the threshold (it is still pending here). */
	CHECK_OK(doca_sync_event_update_set(q.s.se, 1));
	CHECK_OK(evq_loop_until(&q, &ev, now_ns() + SECONDS(10)));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.result.u64 == DOCA_SUCCESS);
	evq_teardown(&q);
}

static void *set_later(void *se)
{
	usleep(100 * 1000);
	doca_sync_event_update_set(se, 42);
	return NULL;
}

/* Another thread's update wakes the sleeping waiter. */
static void test_wake_on_set_from_thread(void)
{
	struct doca_event ev;
	struct evq q;
	pthread_t t;

	CHECK(evq_setup(&q) == 0);
	CHECK_OK(evq_submit_wait(&q, 41, 77));
	CHECK(pthread_create(&t, NULL, set_later, q.s.se) == 0);
	/* A bound against a hang, not a timing requirement. */
	ev.type = 0;
	if (evq_loop_until(&q, &ev, now_ns() + SECONDS(10)) != DOCA_SUCCESS)
		TH_FAIL("the wait did not complete after the other thread's update");
	pthread_join(t, NULL);
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 77 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(q.wakes <= 4);
	evq_teardown(&q);
}

/* A job that can run wakes at once, even while a blocked wait sits in front of it. */
static void test_ready_job_behind_blocked_wait(void)
{
	struct doca_sync_event_job_get g;
	struct doca_event ev;
	uint64_t v = 7;
	struct evq q;

	CHECK(evq_setup(&q) == 0);
	CHECK_OK(evq_submit_wait(&q, 5, 0));
	CHECK_ERR(doca_workq_progress_retrieve(q.s.wq, &ev, 0), DOCA_ERROR_AGAIN); /* now blocked */
	CHECK_OK(doca_workq_event_handle_arm(q.s.wq));
	CHECK(!evq_readable(&q, 0)); /* only a blocked job: quiet */
	g = (struct doca_sync_event_job_get){ .base = { .type = DOCA_SYNC_EVENT_JOB_GET, .ctx = q.s.ctx,
							.user_data.u64 = 5 },
					      .value = &v };
	CHECK_OK(doca_workq_submit(q.s.wq, &g.base)); /* armed: the submit signals */
	CHECK(evq_readable(&q, 10000));
	CHECK_OK(doca_workq_progress_retrieve(q.s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_GET && v == 0);
	/* Arm again with the wait blocked, then a set from this thread: the watch fires. */
	CHECK_OK(doca_workq_event_handle_arm(q.s.wq));
	CHECK(!evq_readable(&q, 0));
	CHECK_OK(doca_sync_event_update_set(q.s.se, 6));
	CHECK(evq_readable(&q, 10000));
	CHECK_OK(doca_workq_progress_retrieve(q.s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.result.u64 == DOCA_SUCCESS);
	evq_teardown(&q);
}

/* A set between the failed try and the arm is not lost: the arm signals at once. */
static void test_set_before_arm_not_lost(void)
{
	struct doca_event ev;
	struct evq q;

	CHECK(evq_setup(&q) == 0);
	CHECK_OK(evq_submit_wait(&q, 0, 0));
	CHECK_ERR(doca_workq_progress_retrieve(q.s.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_sync_event_update_set(q.s.se, 1)); /* nobody watches yet */
	CHECK_OK(doca_workq_event_handle_arm(q.s.wq));
	CHECK(evq_readable(&q, 10000));
	CHECK_OK(doca_workq_progress_retrieve(q.s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT);
	evq_teardown(&q);
}

/*
 * A child forked while a watch is armed has no engine thread and none of the
 * parent's watches: it starts its own engine, so its own arm and update wake
 * it, and the parent's watch is left alone.
 */
static int child_wakes(struct evq *q)
{
	if (doca_workq_event_handle_arm(q->s.wq) != DOCA_SUCCESS || doca_sync_event_update_set(q->s.se, 1) != DOCA_SUCCESS)
		return 1;
	return evq_readable(q, 10000) ? 0 : 2; /* the eventfd is shared: reading it clears it for the parent too */
}

static void test_fork_while_armed(void)
{
	struct doca_event ev;
	struct evq q;
	int status = -1;
	pid_t pid;

	CHECK(evq_setup(&q) == 0);
	CHECK_OK(evq_submit_wait(&q, 0, 0));
	CHECK_ERR(doca_workq_progress_retrieve(q.s.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_workq_event_handle_arm(q.s.wq)); /* watched now */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child_wakes(&q));
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(!evq_readable(&q, 0));
	CHECK_OK(doca_sync_event_update_set(q.s.se, 1));
	CHECK(evq_readable(&q, 10000));
	CHECK_OK(doca_workq_progress_retrieve(q.s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT);
	evq_teardown(&q);
}

int main(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0 || doca_dev_open(list[0], &dev) != DOCA_SUCCESS) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	RUN(test_dma_struct_reused);
	RUN(test_dma_frame_returned);
	RUN(test_sha_struct_reused);
	RUN(test_sync_event_struct_reused);
	RUN(test_wait_struct_reused);
	RUN(test_quiet_wait_sleeps);
	RUN(test_wake_on_set_from_thread);
	RUN(test_ready_job_behind_blocked_wait);
	RUN(test_set_before_arm_not_lost);
	RUN(test_fork_while_armed);
	doca_dev_close(dev);
	doca_devinfo_list_destroy(list);
	return th_summary("test_workq_entries");
}
