/* Event-driven work queues: a handle epoll can wait on, arm and clear. */
#include <sys/epoll.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "harness.h"

static int wait_readable(int fd, int timeout_ms)
{
	int ep = epoll_create1(0), n;
	struct epoll_event e = { .events = EPOLLIN }, out;

	if (ep < 0)
		return -1;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	n = epoll_wait(ep, &out, 1, timeout_ms);
	close(ep);
	return n;
}

/* A fixture whose work queue is event-driven (enabled before it joins the context). */
static int setup_event(struct fx *f)
{
	if (fx_setup(f, 4096, 8, DOCA_ACCESS_LOCAL_READ_WRITE) != 0)
		return -1;
	if (doca_ctx_workq_rm(f->ctx, f->wq) != DOCA_SUCCESS ||
	    doca_workq_set_event_driven_enable(f->wq, 1) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(f->ctx, f->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void test_mode_rules(void)
{
	struct doca_workq *wq;
	doca_event_handle_t h;
	uint8_t en;

	CHECK_OK(doca_workq_create(4, &wq));
	CHECK_ERR(doca_workq_get_event_handle(wq, &h), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_event_handle_arm(wq), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_event_handle_clear(wq, 0), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_set_event_driven_enable(wq, 2), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_set_event_driven_enable(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_set_event_driven_enable(wq, 1));
	CHECK_OK(doca_workq_get_event_driven_enable(wq, &en));
	CHECK(en == 1);
	CHECK_OK(doca_workq_get_event_handle(wq, &h));
	CHECK(h >= 0);
	CHECK_ERR(doca_workq_get_event_handle(wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_event_handle_clear(wq, h + 1000), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_event_handle_arm(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_event_handle_clear(wq, h)); /* nothing to clear is fine */
	CHECK_OK(doca_workq_destroy(wq));
}

static void test_arm_submit_wait_clear_retrieve(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;
	doca_event_handle_t h;

	CHECK(setup_event(&f) == 0);
	CHECK_OK(doca_workq_get_event_handle(f.wq, &h));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 512, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 4096, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx, .user_data.u64 = 9 },
					   .dst_buff = d, .src_buff = s };
	for (int round = 0; round < 5; round++) {
		CHECK_OK(doca_workq_event_handle_arm(f.wq));
		CHECK(wait_readable(h, 0) == 0); /* nothing submitted: no signal */
		CHECK_OK(doca_workq_submit(f.wq, &job.base));
		CHECK(wait_readable(h, 5000) == 1);
		CHECK_OK(doca_workq_event_handle_clear(f.wq, h));
		CHECK(wait_readable(h, 0) == 0);
		CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
		CHECK(ev.user_data.u64 == 9);
	}
	CHECK(memcmp(f.dst, f.src, 512) == 0 && memcmp(f.dst + 2048, f.src, 512) == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_no_signal_without_arm_and_arm_with_pending(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;
	doca_event_handle_t h;

	CHECK(setup_event(&f) == 0);
	CHECK_OK(doca_workq_get_event_handle(f.wq, &h));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 8, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 64, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx },
					   .dst_buff = d, .src_buff = s };
	CHECK_OK(doca_workq_submit(f.wq, &job.base));
	CHECK(wait_readable(h, 0) == 0);	/* not armed */
	CHECK_OK(doca_workq_event_handle_arm(f.wq)); /* a job waits: signal at once */
	CHECK(wait_readable(h, 1000) == 1);
	CHECK_OK(doca_workq_event_handle_clear(f.wq, h));
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

int main(void)
{
	RUN(test_mode_rules);
	RUN(test_arm_submit_wait_clear_retrieve);
	RUN(test_no_signal_without_arm_and_arm_with_pending);
	return th_summary("test_event");
}
