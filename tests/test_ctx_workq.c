/* Context and work-queue life cycles and state rules. */
#include "dma_fixture.h"
#include "doca_sha.h"
#include "harness.h"

struct env {
	struct doca_devinfo **list;
	uint32_t n;
	struct doca_dev *dev, *dev2;
};

static int env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	if (doca_devinfo_list_create(&e->list, &e->n) != DOCA_SUCCESS || e->n < 2)
		return -1;
	if (doca_dev_open(e->list[0], &e->dev) != DOCA_SUCCESS || doca_dev_open(e->list[1], &e->dev2) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void env_close(struct env *e)
{
	doca_dev_close(e->dev);
	doca_dev_close(e->dev2);
	doca_devinfo_list_destroy(e->list);
}

/*
 * doca_ctx_get_max_num_ctx is a limit, not a hint: with that many contexts alive (of any type) the next
 * create fails with DOCA_ERROR_NO_MEMORY and hands back nothing; destroying one makes room for one.
 */
static struct doca_dma **many;
static uint32_t many_n;

static void many_release(void *arg)
{
	(void)arg;
	while (many_n > 0)
		doca_dma_destroy(many[--many_n]);
	free(many);
	many = NULL;
}

static void test_max_num_ctx_enforced(void)
{
	struct doca_dma *extra = NULL, *sentinel = (struct doca_dma *)&many_n;
	struct doca_sha *sha = (struct doca_sha *)&many_n;
	uint32_t max = 0;

	CHECK_OK(doca_ctx_get_max_num_ctx(&max));
	CHECK(max == 1024);
	many = calloc(max, sizeof(*many));
	CHECK(many != NULL);
	th_defer(many_release, NULL);
	for (; many_n < max; many_n++)
		CHECK_OK(doca_dma_create(&many[many_n]));
	extra = sentinel;
	CHECK_ERR(doca_dma_create(&extra), DOCA_ERROR_NO_MEMORY);
	CHECK(extra == sentinel); /* nothing handed back */
	CHECK_ERR(doca_sha_create(&sha), DOCA_ERROR_NO_MEMORY); /* one budget for every context type */
	CHECK_OK(doca_dma_destroy(many[--many_n]));
	CHECK_OK(doca_dma_create(&extra));
	CHECK_ERR(doca_dma_create(&many[many_n]), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_dma_destroy(extra));
	th_undefer(many_release, NULL);
	many_release(NULL);
}

static void test_workq_create_and_depth(void)
{
	struct doca_workq *wq;
	uint32_t depth = 0;
	uint8_t en = 7;

	CHECK_ERR(doca_workq_create(0, &wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_create(8, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_create(100, &wq));
	CHECK_OK(doca_workq_get_depth(wq, &depth));
	CHECK(depth == 100);
	CHECK_OK(doca_workq_set_depth(wq, 7));
	CHECK_OK(doca_workq_get_depth(wq, &depth));
	CHECK(depth == 7);
	CHECK_ERR(doca_workq_set_depth(wq, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_get_depth(NULL, &depth), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_get_depth(wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_get_event_driven_enable(wq, &en));
	CHECK(en == 0);
	CHECK_ERR(doca_workq_get_event_driven_enable(wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_destroy(wq));
}

static void test_ctx_state_rules(void)
{
	struct env e;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	uint8_t sup = 0;
	uint32_t max = 0;

	CHECK(env_open(&e) == 0);
	CHECK_OK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK_OK(doca_workq_create(4, &wq));
	CHECK_ERR(doca_ctx_start(ctx), DOCA_ERROR_INVALID_VALUE); /* no device */
	CHECK_ERR(doca_ctx_stop(ctx), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_workq_add(ctx, wq), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_workq_rm(ctx, wq), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, e.dev), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_ctx_dev_add(ctx, e.dev));
	CHECK_ERR(doca_ctx_dev_add(ctx, e.dev), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_ctx_dev_add(ctx, e.dev2), DOCA_ERROR_NOT_PERMITTED); /* DMA takes one device */
	CHECK_ERR(doca_dev_close(e.dev), DOCA_ERROR_IN_USE);		     /* the context holds it */
	CHECK_OK(doca_ctx_start(ctx));
	CHECK_ERR(doca_ctx_start(ctx), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_add(ctx, e.dev2), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, e.dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_workq_rm(ctx, wq), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_ctx_workq_add(ctx, wq));
	CHECK_ERR(doca_ctx_workq_add(ctx, wq), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_workq_set_depth(wq, 8), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_set_event_driven_enable(wq, 1), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_destroy(wq), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_ctx_stop(ctx), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_ctx_get_event_driven_supported(ctx, &sup));
	CHECK(sup == 1);
	CHECK_ERR(doca_ctx_get_event_driven_supported(NULL, &sup), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_get_event_driven_supported(ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_ctx_get_max_num_ctx(&max));
	CHECK(max >= 1);
	CHECK_ERR(doca_ctx_get_max_num_ctx(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_ctx_workq_rm(ctx, wq));
	CHECK_OK(doca_ctx_stop(ctx));
	CHECK_OK(doca_ctx_dev_rm(ctx, e.dev));
	CHECK_OK(doca_workq_destroy(wq));
	CHECK_OK(doca_dma_destroy(dma));
	env_close(&e);
}

static void test_null_arguments(void)
{
	struct doca_workq *wq;
	struct doca_dma *dma;
	struct doca_event ev;

	CHECK_OK(doca_workq_create(4, &wq));
	CHECK_OK(doca_dma_create(&dma));
	CHECK_ERR(doca_ctx_dev_add(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_dev_add(doca_dma_as_ctx(dma), NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_dev_rm(doca_dma_as_ctx(dma), NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_add(NULL, wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_add(doca_dma_as_ctx(dma), NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_rm(NULL, wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_progress_retrieve(NULL, &ev, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_progress_retrieve(wq, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_progress_retrieve(wq, &ev, 77), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_progress_retrieve(wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_dma_destroy(dma));
	CHECK_OK(doca_workq_destroy(wq));
}

static void test_workq_rm_refused_with_pending_jobs(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;

	CHECK(fx_setup(&f, 256, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 16, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 256, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx },
					   .dst_buff = d, .src_buff = s };
	CHECK_OK(doca_workq_submit(f.wq, &job.base));
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, f.wq), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

/* One work queue serving two DMA contexts; events come back with each job's own data. */
static void test_one_workq_two_contexts(void)
{
	struct fx f;
	struct doca_dma *dma2;
	struct doca_ctx *ctx2;
	struct doca_buf *s, *d1, *d2;
	struct doca_event ev;
	int seen1 = 0, seen2 = 0;

	CHECK(fx_setup(&f, 1024, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_dma_create(&dma2));
	ctx2 = doca_dma_as_ctx(dma2);
	CHECK_OK(doca_ctx_dev_add(ctx2, f.dev));
	CHECK_OK(doca_ctx_start(ctx2));
	CHECK_OK(doca_ctx_workq_add(ctx2, f.wq));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 100, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 100, &d1));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + 500, 100, &d2));
	struct doca_dma_job_memcpy j1 = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx, .user_data.u64 = 1 },
					  .dst_buff = d1, .src_buff = s };
	struct doca_dma_job_memcpy j2 = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx2, .user_data.u64 = 2 },
					  .dst_buff = d2, .src_buff = s };
	CHECK_OK(doca_workq_submit(f.wq, &j1.base));
	CHECK_OK(doca_workq_submit(f.wq, &j2.base));
	CHECK_ERR(doca_ctx_workq_rm(ctx2, f.wq), DOCA_ERROR_NOT_PERMITTED);
	for (int i = 0; i < 2; i++) {
		CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
		seen1 += ev.user_data.u64 == 1;
		seen2 += ev.user_data.u64 == 2;
	}
	CHECK(seen1 == 1 && seen2 == 1);
	CHECK(memcmp(f.dst, f.src, 100) == 0 && memcmp(f.dst + 500, f.src, 100) == 0);
	CHECK_OK(doca_ctx_workq_rm(ctx2, f.wq));
	CHECK_OK(doca_ctx_stop(ctx2));
	CHECK_OK(doca_ctx_dev_rm(ctx2, f.dev));
	CHECK_OK(doca_dma_destroy(dma2));
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d1, NULL);
	doca_buf_refcount_rm(d2, NULL);
	fx_teardown(&f);
}

/* Several work queues on one context, each progressed on its own. */
static void test_several_workqs_one_context(void)
{
	struct fx f;
	struct doca_workq *wq2;
	struct doca_buf *s, *d1, *d2;
	struct doca_event ev;

	CHECK(fx_setup(&f, 1024, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_workq_create(8, &wq2));
	CHECK_OK(doca_ctx_workq_add(f.ctx, wq2));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 64, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 64, &d1));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + 64, 64, &d2));
	struct doca_dma_job_memcpy j1 = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx, .user_data.u64 = 11 },
					  .dst_buff = d1, .src_buff = s };
	struct doca_dma_job_memcpy j2 = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx, .user_data.u64 = 22 },
					  .dst_buff = d2, .src_buff = s };
	CHECK_OK(doca_workq_submit(f.wq, &j1.base));
	CHECK_OK(doca_workq_submit(wq2, &j2.base));
	CHECK_OK(doca_workq_progress_retrieve(wq2, &ev, 0));
	CHECK(ev.user_data.u64 == 22);
	CHECK_ERR(doca_workq_progress_retrieve(wq2, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK(ev.user_data.u64 == 11);
	CHECK(memcmp(f.dst, f.src, 64) == 0 && memcmp(f.dst + 64, f.src, 64) == 0);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, wq2));
	CHECK_OK(doca_workq_destroy(wq2));
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d1, NULL);
	doca_buf_refcount_rm(d2, NULL);
	fx_teardown(&f);
}

static void test_ring_wraps(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;

	CHECK(fx_setup(&f, 8192, 3, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 1, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 8192, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx },
					   .dst_buff = d, .src_buff = s };
	for (int round = 0; round < 1000; round++) {
		for (int k = 0; k < 3; k++)
			CHECK_OK(doca_workq_submit(f.wq, &job.base));
		CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_NO_MEMORY);
		for (int k = 0; k < 3; k++)
			CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
		CHECK_OK(doca_buf_reset_data_len(d));
	}
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

/* DOCA 2.2's GPU data path: refused, the context left as it was (it still starts and copies). */
static void test_datapath_on_gpu_refused(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;
	struct doca_gpu *gpu = (struct doca_gpu *)&f; /* any non-NULL handle: none can be made here */

	CHECK(fx_setup(&f, 256, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_ctx_set_datapath_on_gpu(f.ctx, gpu), DOCA_ERROR_BAD_STATE); /* started by fx_setup */
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_ctx_stop(f.ctx));
	CHECK_ERR(doca_ctx_set_datapath_on_gpu(NULL, gpu), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_set_datapath_on_gpu(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_set_datapath_on_gpu(f.ctx, gpu), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_ctx_start(f.ctx));
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 256, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 256, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx },
					   .dst_buff = d, .src_buff = s };
	CHECK_OK(doca_workq_submit(f.wq, &job.base));
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK(memcmp(f.dst, f.src, 256) == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

int main(void)
{
	RUN(test_workq_create_and_depth);
	RUN(test_datapath_on_gpu_refused);
	RUN(test_ctx_state_rules);
	RUN(test_null_arguments);
	RUN(test_workq_rm_refused_with_pending_jobs);
	RUN(test_one_workq_two_contexts);
	RUN(test_several_workqs_one_context);
	RUN(test_ring_wraps);
	RUN(test_max_num_ctx_enforced);
	return th_summary("test_ctx_workq");
}
