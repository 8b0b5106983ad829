/*
 * Work-queue entries: submit takes the job (the caller's struct is free again
 * when submit returns, for every job type), and an event-driven work queue
 * wakes its waiter only when a job completed or can complete.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "doca_sha.h"
#include "doca_sync_event.h"
#include "harness.h"

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

struct sha_fx {
	struct fx f; /* device, mmaps, inventory (its DMA context is not used) */
	struct doca_sha *sha;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static int sha_setup(struct sha_fx *s)
{
	if (fx_setup(&s->f, NJOBS * CHUNK, 1, DOCA_ACCESS_LOCAL_READ_WRITE) != 0)
		return -1;
	if (doca_sha_create(&s->sha) != DOCA_SUCCESS)
		return -1;
	s->ctx = doca_sha_as_ctx(s->sha);
	if (doca_ctx_dev_add(s->ctx, s->f.dev) != DOCA_SUCCESS || doca_ctx_start(s->ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(NJOBS, &s->wq) != DOCA_SUCCESS || doca_ctx_workq_add(s->ctx, s->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void sha_teardown(struct sha_fx *s)
{
	if (s->wq != NULL) {
		doca_ctx_workq_rm(s->ctx, s->wq);
		doca_workq_destroy(s->wq);
	}
	if (s->sha != NULL) {
		doca_ctx_stop(s->ctx);
		doca_ctx_dev_rm(s->ctx, s->f.dev);
		doca_sha_destroy(s->sha);
	}
	fx_teardown(&s->f);
}

#define SHA256_LEN 32

static void test_sha_struct_reused(void)
{
	struct doca_buf *req[NJOBS], *resp[NJOBS];
	unsigned char want[SHA256_LEN];
	struct doca_sha_job job;
	struct doca_event ev;
	struct sha_fx s = { 0 };

	CHECK(sha_setup(&s) == 0);
	for (int i = 0; i < NJOBS; i++) {
		/* Message i: the first i + 1 bytes of its chunk, so no two digests are equal. */
		CHECK_OK(doca_buf_inventory_buf_by_data(s.f.inv, s.f.src_mmap, s.f.src + i * CHUNK, (size_t)i % CHUNK + 1,
							&req[i]));
		CHECK_OK(doca_buf_inventory_buf_by_addr(s.f.inv, s.f.dst_mmap, s.f.dst + i * CHUNK, CHUNK, &resp[i]));
		job = (struct doca_sha_job){ .base = { .type = DOCA_SHA_JOB_SHA256, .ctx = s.ctx,
						       .user_data.u64 = 7000 + (uint64_t)i },
					     .req_buf = req[i], .resp_buf = resp[i] };
		CHECK_OK(doca_workq_submit(s.wq, &job.base));
		scribble(&job, sizeof(job));
	}
	for (int i = 0; i < NJOBS; i++) {
		CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
		CHECK(ev.type == DOCA_SHA_JOB_SHA256 && ev.user_data.u64 == 7000 + (uint64_t)i);
		CHECK(EVP_Digest(s.f.src + i * CHUNK, (size_t)i % CHUNK + 1, want, NULL, EVP_sha256(), NULL) == 1);
		CHECK(memcmp(s.f.dst + i * CHUNK, want, SHA256_LEN) == 0);
		CHECK_OK(doca_buf_refcount_rm(req[i], NULL));
		CHECK_OK(doca_buf_refcount_rm(resp[i], NULL));
	}
	sha_teardown(&s);
}

/* ----------------------------------------------------------- Sync Event */

struct se_fx {
	struct doca_devinfo **list;
	uint32_t ndev;
	struct doca_dev *dev;
	struct doca_sync_event *se;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static int se_setup(struct se_fx *s, uint32_t depth, int event_driven)
{
	memset(s, 0, sizeof(*s));
	if (doca_devinfo_list_create(&s->list, &s->ndev) != DOCA_SUCCESS || s->ndev == 0 ||
	    doca_dev_open(s->list[0], &s->dev) != DOCA_SUCCESS)
		return -1;
	if (doca_sync_event_create(&s->se) != DOCA_SUCCESS ||
	    doca_sync_event_publisher_add_location_cpu(s->se, s->dev) != DOCA_SUCCESS ||
	    doca_sync_event_subscriber_add_location_cpu(s->se, s->dev) != DOCA_SUCCESS)
		return -1;
	s->ctx = doca_sync_event_as_ctx(s->se);
	if (s->ctx == NULL || doca_ctx_start(s->ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(depth, &s->wq) != DOCA_SUCCESS ||
	    (event_driven && doca_workq_set_event_driven_enable(s->wq, 1) != DOCA_SUCCESS) ||
	    doca_ctx_workq_add(s->ctx, s->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void se_teardown(struct se_fx *s)
{
	if (s->wq != NULL) {
		doca_ctx_workq_rm(s->ctx, s->wq);
		doca_workq_destroy(s->wq);
	}
	if (s->ctx != NULL)
		doca_ctx_stop(s->ctx);
	if (s->se != NULL)
		doca_sync_event_destroy(s->se);
	if (s->dev != NULL)
		doca_dev_close(s->dev);
	if (s->list != NULL)
		doca_devinfo_list_destroy(s->list);
	memset(s, 0, sizeof(*s));
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
	se_teardown(&s);
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
	se_teardown(&s);
}

/* ------------------------------------------------------- event-driven mode */

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct waiter_loop {
	int ep;
	int fd;
	unsigned wakes;
};

static int loop_open(struct waiter_loop *l, struct doca_workq *wq)
{
	struct epoll_event e = { .events = EPOLLIN };
	doca_event_handle_t h;

	l->wakes = 0;
	if (doca_workq_get_event_handle(wq, &h) != DOCA_SUCCESS)
		return -1;
	l->fd = h;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	return l->ep < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->fd, &e) != 0 ? -1 : 0;
}

/*
 * The loop of the DOCA Core guide (§3.4.5): arm, wait, clear, retrieve, until
 * a job completes or the deadline passes. Returns the retrieve status. Waits
 * of at most 10 ms, so an armed watch is re-armed many times over.
 */
static doca_error_t loop_until(struct waiter_loop *l, struct doca_workq *wq, struct doca_event *ev, int64_t deadline)
{
	struct epoll_event out;
	doca_error_t st;
	int64_t left;

	for (;;) {
		if (doca_workq_event_handle_arm(wq) != DOCA_SUCCESS)
			return DOCA_ERROR_UNEXPECTED;
		left = (deadline - now_ns()) / 1000000;
		if (left <= 0)
			return DOCA_ERROR_TIME_OUT;
		if (epoll_wait(l->ep, &out, 1, left < 10 ? (int)left : 10) == 1) {
			l->wakes++;
			if (doca_workq_event_handle_clear(wq, l->fd) != DOCA_SUCCESS)
				return DOCA_ERROR_UNEXPECTED;
		}
		st = doca_workq_progress_retrieve(wq, ev, 0);
		if (st != DOCA_ERROR_AGAIN)
			return st;
	}
}

/* A pending wait with nothing happening costs (almost) no wake-ups. */
static void test_quiet_wait_sleeps(void)
{
	struct doca_sync_event_job_wait w;
	struct waiter_loop l = { .ep = -1 };
	struct doca_event ev;
	struct se_fx s;

	CHECK(se_setup(&s, 4, 1) == 0);
	CHECK(loop_open(&l, s.wq) == 0);
	w = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = s.ctx },
					       .value = 0, .mask = UINT64_MAX };
	CHECK_OK(doca_workq_submit(s.wq, &w.base));
	CHECK_ERR(loop_until(&l, s.wq, &ev, now_ns() + 250 * 1000000LL), DOCA_ERROR_TIME_OUT);
	/* One wake to try the new job; then it is blocked and the handle stays quiet. */
	if (l.wakes > 3)
		TH_FAIL("%u wake-ups in 250 ms with only a blocked wait queued", l.wakes);
	/* The wait completes once the event passes the threshold (it is still pending here). */
	CHECK_OK(doca_sync_event_update_set(s.se, 1));
	CHECK_OK(loop_until(&l, s.wq, &ev, now_ns() + 10 * 1000000000LL));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.result.u64 == DOCA_SUCCESS);
	close(l.ep);
	se_teardown(&s);
}

struct setter {
	struct doca_sync_event *se;
	int delay_ms;
};

static void *set_later(void *arg)
{
	struct setter *st = arg;

	usleep((useconds_t)st->delay_ms * 1000);
	doca_sync_event_update_set(st->se, 42);
	return NULL;
}

/* Another thread's update wakes the sleeping waiter. */
static void test_wake_on_set_from_thread(void)
{
	struct doca_sync_event_job_wait w;
	struct waiter_loop l = { .ep = -1 };
	struct doca_event ev;
	struct setter st;
	pthread_t t;
	struct se_fx s;

	CHECK(se_setup(&s, 4, 1) == 0);
	CHECK(loop_open(&l, s.wq) == 0);
	w = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = s.ctx,
							 .user_data.u64 = 77 },
					       .value = 41, .mask = UINT64_MAX };
	CHECK_OK(doca_workq_submit(s.wq, &w.base));
	st = (struct setter){ .se = s.se, .delay_ms = 100 };
	CHECK(pthread_create(&t, NULL, set_later, &st) == 0);
	/* A bound against a hang, not a timing requirement. */
	CHECK_OK(loop_until(&l, s.wq, &ev, now_ns() + 10 * 1000000000LL));
	pthread_join(t, NULL);
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 77 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(l.wakes <= 4);
	close(l.ep);
	se_teardown(&s);
}

/* A job that can run wakes at once, even while a blocked wait sits in front of it. */
static void test_ready_job_behind_blocked_wait(void)
{
	struct doca_sync_event_job_wait w;
	struct doca_sync_event_job_get g;
	struct waiter_loop l = { .ep = -1 };
	struct epoll_event out;
	struct doca_event ev;
	uint64_t v = 7;
	struct se_fx s;

	CHECK(se_setup(&s, 4, 1) == 0);
	CHECK(loop_open(&l, s.wq) == 0);
	w = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = s.ctx },
					       .value = 5, .mask = UINT64_MAX };
	CHECK_OK(doca_workq_submit(s.wq, &w.base));
	CHECK_ERR(doca_workq_progress_retrieve(s.wq, &ev, 0), DOCA_ERROR_AGAIN); /* now blocked */
	CHECK_OK(doca_workq_event_handle_arm(s.wq));
	CHECK(epoll_wait(l.ep, &out, 1, 0) == 0); /* only a blocked job: quiet */
	g = (struct doca_sync_event_job_get){ .base = { .type = DOCA_SYNC_EVENT_JOB_GET, .ctx = s.ctx,
							.user_data.u64 = 5 },
					      .value = &v };
	CHECK_OK(doca_workq_submit(s.wq, &g.base)); /* armed: the submit signals */
	CHECK(epoll_wait(l.ep, &out, 1, 10000) == 1);
	CHECK_OK(doca_workq_event_handle_clear(s.wq, l.fd));
	CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_GET && v == 0);
	/* Arm again with the wait blocked, then a set from this thread: the watch fires. */
	CHECK_OK(doca_workq_event_handle_arm(s.wq));
	CHECK(epoll_wait(l.ep, &out, 1, 0) == 0);
	CHECK_OK(doca_sync_event_update_set(s.se, 6));
	CHECK(epoll_wait(l.ep, &out, 1, 10000) == 1);
	CHECK_OK(doca_workq_event_handle_clear(s.wq, l.fd));
	CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.result.u64 == DOCA_SUCCESS);
	close(l.ep);
	se_teardown(&s);
}

/* A set between the failed try and the arm is not lost: the arm signals at once. */
static void test_set_before_arm_not_lost(void)
{
	struct doca_sync_event_job_wait w;
	struct waiter_loop l = { .ep = -1 };
	struct epoll_event out;
	struct doca_event ev;
	struct se_fx s;

	CHECK(se_setup(&s, 4, 1) == 0);
	CHECK(loop_open(&l, s.wq) == 0);
	w = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = s.ctx },
					       .value = 0, .mask = UINT64_MAX };
	CHECK_OK(doca_workq_submit(s.wq, &w.base));
	CHECK_ERR(doca_workq_progress_retrieve(s.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_sync_event_update_set(s.se, 1)); /* nobody watches yet */
	CHECK_OK(doca_workq_event_handle_arm(s.wq));
	CHECK(epoll_wait(l.ep, &out, 1, 10000) == 1);
	CHECK_OK(doca_workq_event_handle_clear(s.wq, l.fd));
	CHECK_OK(doca_workq_progress_retrieve(s.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT);
	close(l.ep);
	se_teardown(&s);
}

int main(void)
{
	RUN(test_dma_struct_reused);
	RUN(test_dma_frame_returned);
	RUN(test_sha_struct_reused);
	RUN(test_sync_event_struct_reused);
	RUN(test_wait_struct_reused);
	RUN(test_quiet_wait_sleeps);
	RUN(test_wake_on_set_from_thread);
	RUN(test_ready_job_behind_blocked_wait);
	RUN(test_set_before_arm_not_lost);
	return th_summary("test_workq_entries");
}
