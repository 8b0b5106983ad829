/*
 * test_doc_errors_exec — the execution-side headers (doca_ctx.h with its work
 * queues and event handles, doca_dma.h, doca_sha.h, doca_graph.h,
 * doca_sync_event.h): every documented failure the emulated device can
 * produce returns the code the DOCA 2.2 `@return` list gives for it. One case
 * per function or small group; a refused call must leave the object usable.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dma_fixture.h"
#include "doca_graph.h"
#include "doca_sync_event.h"
#include "harness.h"
#include "sha_fixture.h"

#define LEN 256

static struct doca_buf *buf_at(struct fx *f, bool dst, size_t off, size_t len)
{
	struct doca_buf *b = NULL;

	if (dst)
		doca_buf_inventory_buf_by_addr(f->inv, f->dst_mmap, f->dst + off, len, &b);
	else
		doca_buf_inventory_buf_by_data(f->inv, f->src_mmap, f->src + off, len, &b);
	return b;
}

static void memcpy_job(struct doca_dma_job_memcpy *j, struct doca_ctx *ctx, struct doca_buf *dst,
		       const struct doca_buf *src, uint64_t tag)
{
	memset(j, 0, sizeof(*j));
	j->base.type = DOCA_DMA_JOB_MEMCPY;
	j->base.ctx = ctx;
	j->base.user_data.u64 = tag;
	j->dst_buff = dst;
	j->src_buff = src;
}

static doca_error_t retrieve(struct doca_workq *wq, struct doca_event *ev)
{
	doca_error_t st;

	do
		st = doca_workq_progress_retrieve(wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
	while (st == DOCA_ERROR_AGAIN);
	return st;
}

/* A DMA context holding dev, started when asked. */
static struct doca_dma *new_dma(struct doca_dev *dev, bool start)
{
	struct doca_dma *dma;

	if (doca_dma_create(&dma) != DOCA_SUCCESS)
		return NULL;
	if (doca_ctx_dev_add(doca_dma_as_ctx(dma), dev) != DOCA_SUCCESS ||
	    (start && doca_ctx_start(doca_dma_as_ctx(dma)) != DOCA_SUCCESS)) {
		doca_dma_destroy(dma);
		return NULL;
	}
	return dma;
}

static void free_dma(struct doca_dma *dma, struct doca_dev *dev)
{
	struct doca_ctx *ctx = doca_dma_as_ctx(dma);

	doca_ctx_stop(ctx);
	doca_ctx_dev_rm(ctx, dev);
	doca_dma_destroy(dma);
}

/* ---- doca_ctx.h: work queues ---- */

static void test_workq_create_destroy(void)
{
	struct doca_workq *wq;
	struct fx f;

	CHECK_ERR(doca_workq_create(0, &wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	/* still added to a context */
	CHECK_ERR(doca_workq_destroy(f.wq), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_workq_destroy(f.wq));
	f.wq = NULL;
	fx_teardown(&f);
}

static void test_workq_submit(void)
{
	struct doca_dma_job_memcpy j, held;
	struct doca_buf *src, *dst, *dst2;
	struct doca_dma *never, *stopped;
	struct doca_workq *wq1;
	struct doca_event ev;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (size_t i = 0; i < LEN; i++)
		f.src[i] = (uint8_t)(i * 7 + 1);
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memcpy_job(&j, f.ctx, dst, src, 1);
	CHECK_ERR(doca_workq_submit(NULL, &j.base), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_submit(f.wq, NULL), DOCA_ERROR_INVALID_VALUE);

	/* job->ctx stopped: never started, or started and stopped again */
	never = new_dma(f.dev, false);
	stopped = new_dma(f.dev, true);
	CHECK(never != NULL && stopped != NULL);
	CHECK_OK(doca_ctx_stop(doca_dma_as_ctx(stopped)));
	j.base.ctx = doca_dma_as_ctx(never);
	CHECK_ERR(doca_workq_submit(f.wq, &j.base), DOCA_ERROR_BAD_STATE);
	j.base.ctx = doca_dma_as_ctx(stopped);
	CHECK_ERR(doca_workq_submit(f.wq, &j.base), DOCA_ERROR_BAD_STATE);
	/* started, but not associated with this work queue */
	CHECK_OK(doca_ctx_start(doca_dma_as_ctx(stopped)));
	CHECK_ERR(doca_workq_submit(f.wq, &j.base), DOCA_ERROR_NOT_FOUND);
	free_dma(stopped, f.dev);
	free_dma(never, f.dev);

	/* the work queue is full: depth 1, one job in flight */
	CHECK_OK(doca_workq_create(1, &wq1));
	CHECK_OK(doca_ctx_workq_add(f.ctx, wq1));
	memcpy_job(&held, f.ctx, dst, src, 2);
	CHECK_OK(doca_workq_submit(wq1, &held.base));
	memcpy_job(&j, f.ctx, dst, src, 3);
	CHECK_ERR(doca_workq_submit(wq1, &j.base), DOCA_ERROR_NO_MEMORY);
	/* the refused job left the queued one alone: it completes and copies */
	CHECK_OK(retrieve(wq1, &ev));
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 2);
	CHECK(memcmp(f.dst, f.src, LEN) == 0);
	CHECK_ERR(doca_workq_progress_retrieve(wq1, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	/* the depth is free again (into a fresh, empty destination) */
	j.dst_buff = dst2 = buf_at(&f, true, 0, LEN);
	CHECK(dst2 != NULL);
	CHECK_OK(doca_workq_submit(wq1, &j.base));
	CHECK_OK(retrieve(wq1, &ev));
	CHECK(ev.user_data.u64 == 3);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, wq1));
	CHECK_OK(doca_workq_destroy(wq1));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	doca_buf_refcount_rm(dst2, NULL);
	fx_teardown(&f);
}

static void test_workq_progress_retrieve(void)
{
	struct doca_dma_job_memcpy j;
	struct doca_buf *src, *dst;
	struct doca_event ev = { 0 };
	struct fx f;

	/* a read-only destination: the job is accepted and fails when it runs */
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_ONLY) == 0);
	memset(f.dst, 0x5a, LEN);
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	memcpy_job(&j, f.ctx, dst, src, 9);
	CHECK_OK(doca_workq_submit(f.wq, &j.base));
	CHECK_ERR(retrieve(f.wq, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 9);
	CHECK_ERR(ev.result.u64, DOCA_ERROR_NOT_PERMITTED);
	for (size_t i = 0; i < LEN; i++)
		CHECK(f.dst[i] == 0x5a);
	CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

static void test_workq_properties(void)
{
	struct doca_workq *wq;
	uint32_t depth = 0;
	uint8_t en = 9;

	CHECK_OK(doca_workq_create(8, &wq));
	CHECK_ERR(doca_workq_get_depth(NULL, &depth), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_get_depth(wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_set_depth(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_set_depth(wq, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_get_depth(wq, &depth));
	CHECK(depth == 8);
	CHECK_ERR(doca_workq_get_event_driven_enable(NULL, &en), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_get_event_driven_enable(wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_get_event_driven_enable(wq, &en));
	CHECK(en == 0);
	CHECK_OK(doca_workq_destroy(wq));
}

static void test_workq_event_handle(void)
{
	doca_event_handle_t h = -1;
	uint8_t en = 0;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_workq_get_event_handle(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	/* event-driven mode not enabled */
	CHECK_ERR(doca_workq_get_event_handle(f.wq, &h), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_workq_set_event_driven_enable(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_set_event_driven_enable(f.wq, 2), DOCA_ERROR_INVALID_VALUE);
	/* still added to a context */
	CHECK_ERR(doca_workq_set_event_driven_enable(f.wq, 1), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_workq_get_event_driven_enable(f.wq, &en));
	CHECK(en == 0);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_workq_set_event_driven_enable(f.wq, 1));
	CHECK_OK(doca_workq_set_event_driven_enable(f.wq, 1)); /* same value again */
	CHECK_OK(doca_workq_get_event_handle(f.wq, &h));
	CHECK(h >= 0);
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	CHECK_OK(doca_workq_event_handle_arm(f.wq));
	CHECK_OK(doca_workq_event_handle_clear(f.wq, h));
	fx_teardown(&f);
}

/* ---- doca_ctx.h: contexts ---- */

static void test_ctx_dev_add_rm(void)
{
	struct doca_sync_event *se;
	struct doca_ctx *se_ctx;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK_ERR(doca_ctx_dev_add(NULL, f.dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_dev_add(ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	/* never added */
	CHECK_ERR(doca_ctx_dev_rm(ctx, f.dev), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_ctx_dev_add(ctx, f.dev));
	/* already added */
	CHECK_ERR(doca_ctx_dev_add(ctx, f.dev), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_ctx_start(ctx));
	/* started */
	CHECK_ERR(doca_ctx_dev_add(ctx, f.dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, f.dev), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_ctx_stop(ctx));
	CHECK_OK(doca_ctx_dev_rm(ctx, f.dev));
	/* removed already */
	CHECK_ERR(doca_ctx_dev_rm(ctx, f.dev), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_dma_destroy(dma));

	/* a Sync Event context has no use for any device */
	CHECK_OK(doca_sync_event_create(&se));
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(se, f.dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(se, f.dev));
	se_ctx = doca_sync_event_as_ctx(se);
	CHECK(se_ctx != NULL);
	CHECK_ERR(doca_ctx_dev_add(se_ctx, f.dev), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_ctx_start(se_ctx)); /* and starts without one */
	CHECK_OK(doca_ctx_stop(se_ctx));
	CHECK_OK(doca_sync_event_destroy(se));
	fx_teardown(&f);
}

static void test_ctx_start_stop(void)
{
	struct doca_dma_job_memcpy j;
	struct doca_buf *src, *dst;
	struct doca_event ev;
	struct doca_dma *dma;
	struct fx f;

	CHECK_ERR(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	/* no devices were added */
	CHECK_OK(doca_dma_create(&dma));
	CHECK_ERR(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dma_destroy(dma));

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	/* a work queue is still associated */
	CHECK_ERR(doca_ctx_stop(f.ctx), DOCA_ERROR_NOT_PERMITTED);
	/* and a job is pending on it */
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memcpy_job(&j, f.ctx, dst, src, 4);
	CHECK_OK(doca_workq_submit(f.wq, &j.base));
	CHECK_ERR(doca_ctx_stop(f.ctx), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(retrieve(f.wq, &ev));
	CHECK(ev.user_data.u64 == 4);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_ctx_stop(f.ctx));
	CHECK_OK(doca_ctx_start(f.ctx));
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

static void test_ctx_workq_add_rm(void)
{
	struct doca_dma_job_memcpy j;
	struct doca_buf *src, *dst;
	struct doca_workq *other;
	struct doca_event ev;
	struct doca_dma *dma;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_workq_create(4, &other));
	CHECK_ERR(doca_ctx_workq_add(NULL, other), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_add(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_rm(NULL, other), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	/* same work queue already added */
	CHECK_ERR(doca_ctx_workq_add(f.ctx, f.wq), DOCA_ERROR_IN_USE);
	/* a work queue the context does not hold */
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, other), DOCA_ERROR_NOT_FOUND);
	/* context not started */
	dma = new_dma(f.dev, false);
	CHECK(dma != NULL);
	CHECK_ERR(doca_ctx_workq_add(doca_dma_as_ctx(dma), other), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_workq_rm(doca_dma_as_ctx(dma), other), DOCA_ERROR_BAD_STATE);
	free_dma(dma, f.dev);
	/* a job still pending completion */
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memcpy_job(&j, f.ctx, dst, src, 5);
	CHECK_OK(doca_workq_submit(f.wq, &j.base));
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, f.wq), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(retrieve(f.wq, &ev));
	CHECK(ev.user_data.u64 == 5);
	CHECK(memcmp(f.dst, f.src, LEN) == 0);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	CHECK_OK(doca_workq_destroy(other));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

/* One work queue serves at most 16 contexts: adding one more fails its allocation. */
#define WQ_CTX_LIMIT 16

static void test_ctx_workq_add_no_memory(void)
{
	struct doca_dma *dma[WQ_CTX_LIMIT + 1] = { 0 };
	struct doca_workq *wq;
	struct fx f;
	int i;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_workq_create(4, &wq));
	for (i = 0; i <= WQ_CTX_LIMIT; i++) {
		dma[i] = new_dma(f.dev, true);
		CHECK(dma[i] != NULL);
	}
	for (i = 0; i < WQ_CTX_LIMIT; i++)
		CHECK_OK(doca_ctx_workq_add(doca_dma_as_ctx(dma[i]), wq));
	CHECK_ERR(doca_ctx_workq_add(doca_dma_as_ctx(dma[WQ_CTX_LIMIT]), wq), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_ctx_workq_rm(doca_dma_as_ctx(dma[0]), wq));
	CHECK_OK(doca_ctx_workq_add(doca_dma_as_ctx(dma[WQ_CTX_LIMIT]), wq));
	for (i = 1; i <= WQ_CTX_LIMIT; i++)
		CHECK_OK(doca_ctx_workq_rm(doca_dma_as_ctx(dma[i]), wq));
	for (i = 0; i <= WQ_CTX_LIMIT; i++)
		free_dma(dma[i], f.dev);
	CHECK_OK(doca_workq_destroy(wq));
	fx_teardown(&f);
}

static void test_ctx_queries(void)
{
	uint32_t max = 0;
	uint8_t sup = 9;
	struct fx f;

	CHECK_ERR(doca_ctx_get_max_num_ctx(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_ctx_get_max_num_ctx(&max));
	CHECK(max > 0);
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_ctx_get_event_driven_supported(NULL, &sup), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_get_event_driven_supported(f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_ctx_get_event_driven_supported(f.ctx, &sup));
	CHECK(sup == 1);
	fx_teardown(&f);
}

/* ---- doca_dma.h ---- */

static void test_dma(void)
{
	struct doca_devinfo *di;
	uint64_t size = 0;
	uint32_t n = 0;
	struct fx f;

	CHECK_ERR(doca_dma_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_dma_as_ctx(NULL) == NULL);
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	di = doca_dev_as_devinfo(f.dev);
	CHECK_ERR(doca_dma_job_get_supported(NULL, DOCA_DMA_JOB_MEMCPY), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_job_get_supported(di, (enum doca_dma_job_types)(DOCA_DMA_JOB_MEMCPY + 1)),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_dma_job_get_supported(di, DOCA_DMA_JOB_MEMCPY));
	CHECK_ERR(doca_dma_get_max_list_buf_num_elem(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_list_buf_num_elem(di, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_buf_size(NULL, &size), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_buf_size(di, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dma_get_max_list_buf_num_elem(di, &n));
	CHECK_OK(doca_dma_get_max_buf_size(di, &size));
	CHECK(n >= 1 && size > 0);
	/* work queues are still attached (and the context is started) */
	CHECK_ERR(doca_dma_destroy(f.dma), DOCA_ERROR_IN_USE);
	fx_teardown(&f);
}

/* ---- doca_sha.h ---- */

static void test_sha_caps(void)
{
	const struct doca_devinfo *di;
	uint64_t size = 0;
	uint32_t n = 0;
	struct sfx f;

	CHECK_ERR(doca_sha_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_sha_as_ctx(NULL) == NULL);
	CHECK(sfx_setup_sized(&f, LEN, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	di = doca_dev_as_devinfo(f.dev);
	CHECK_ERR(doca_sha_job_get_supported(NULL, DOCA_SHA_JOB_SHA256), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_job_get_supported(di, (enum doca_sha_job_type)0), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_sha_job_get_supported(di, DOCA_SHA_JOB_SHA256));
	CHECK_ERR(doca_sha_get_max_list_buf_num_elem(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_list_buf_num_elem(di, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_src_buffer_size(NULL, &size), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_max_src_buffer_size(di, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(NULL, DOCA_SHA_JOB_SHA1, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(di, DOCA_SHA_JOB_SHA1, NULL), DOCA_ERROR_INVALID_VALUE);
	/* a job type the device does not run */
	CHECK_ERR(doca_sha_get_min_dst_buffer_size(di, (enum doca_sha_job_type)0, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_sha_get_min_dst_buffer_size(di, DOCA_SHA_JOB_SHA1, &n));
	CHECK(n >= 20);
	CHECK_ERR(doca_sha_get_hardware_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_get_hardware_supported(di));
	/* engine resources held: stop first */
	CHECK_ERR(doca_sha_destroy(f.sha), DOCA_ERROR_IN_USE);
	sfx_teardown(&f);
}

static void test_sha_submit(void)
{
	struct doca_sha_job j = { 0 };
	struct doca_buf *req, *resp;
	struct sfx f;

	CHECK(sfx_setup_sized(&f, LEN, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	memset(f.dst, 0x77, LEN);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 64, &req));
	/* room for 19 bytes: an SHA-1 digest needs 20 */
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 19, &resp));
	j.base.type = DOCA_SHA_JOB_SHA1;
	j.base.ctx = f.ctx;
	j.req_buf = req;
	j.resp_buf = resp;
	CHECK_ERR(doca_workq_submit(f.wq, &j.base), DOCA_ERROR_INVALID_VALUE);
	/* a job type the context does not serve */
	j.base.type = DOCA_SHA_JOB_SHA1 - 1;
	CHECK_ERR(doca_workq_submit(f.wq, &j.base), DOCA_ERROR_INVALID_VALUE);
	for (size_t i = 0; i < LEN; i++)
		CHECK(f.dst[i] == 0x77);
	doca_buf_refcount_rm(req, NULL);
	doca_buf_refcount_rm(resp, NULL);
	sfx_teardown(&f);
}

/* A context holds 256 partial sessions. */
#define SHA_SESSIONS 256

static void test_sha_sessions(void)
{
	struct doca_sha_partial_session **s = calloc(SHA_SESSIONS, sizeof(*s));
	struct doca_sha_partial_session *extra;
	struct sfx f;

	CHECK(s != NULL);
	th_defer(free, s);
	CHECK(sfx_setup_sized(&f, LEN, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_sha_partial_session_create(NULL, f.wq, &extra), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_create(f.sha, NULL, &extra), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_create(f.sha, f.wq, NULL), DOCA_ERROR_INVALID_VALUE);
	for (int i = 0; i < SHA_SESSIONS; i++)
		CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s[i]));
	/* exhausted */
	CHECK_ERR(doca_sha_partial_session_create(f.sha, f.wq, &extra), DOCA_ERROR_NO_MEMORY);
	CHECK_ERR(doca_sha_partial_session_destroy(NULL, f.wq, s[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_destroy(f.sha, f.wq, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, f.wq, NULL, s[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sha_partial_session_copy(f.sha, NULL, s[0], s[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sha_partial_session_copy(f.sha, f.wq, s[0], s[1]));
	CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s[0]));
	CHECK_OK(doca_sha_partial_session_create(f.sha, f.wq, &s[0]));
	for (int i = 0; i < SHA_SESSIONS; i++)
		CHECK_OK(doca_sha_partial_session_destroy(f.sha, f.wq, s[i]));
	sfx_teardown(&f);
}

/* ---- doca_graph.h ---- */

static doca_error_t user_cb(void *cookie, struct doca_event *ev)
{
	(void)ev;
	(*(int *)cookie)++;
	return DOCA_SUCCESS;
}

/* A DMA node followed by a user node. */
struct gr {
	struct doca_graph *g;
	struct doca_graph_node *dma, *user;
};

static int gr_build(struct gr *gr, struct doca_ctx *ctx)
{
	memset(gr, 0, sizeof(*gr));
	if (doca_graph_create(&gr->g) != DOCA_SUCCESS)
		return -1;
	if (doca_graph_ctx_node_create(gr->g, DOCA_DMA_JOB_MEMCPY, ctx, &gr->dma) != DOCA_SUCCESS ||
	    doca_graph_user_node_create(gr->g, user_cb, &gr->user) != DOCA_SUCCESS ||
	    doca_graph_add_dependency(gr->g, gr->dma, gr->user) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void test_graph_create_destroy(void)
{
	struct doca_graph_instance *gi;
	struct fx f;
	struct gr gr;

	CHECK_ERR(doca_graph_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(gr_build(&gr, f.ctx) == 0);
	CHECK_OK(doca_graph_start(gr.g));
	CHECK_OK(doca_graph_instance_create(gr.g, &gi));
	/* an instance is not destroyed */
	CHECK_ERR(doca_graph_destroy(gr.g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_workq_add(gr.g, f.wq));
	/* still added to a work queue */
	CHECK_ERR(doca_graph_destroy(gr.g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_workq_rm(gr.g, f.wq));
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_destroy(gr.g));
	fx_teardown(&f);
}

static void test_graph_nodes(void)
{
	struct doca_graph_node *n, *sub_node;
	struct doca_graph *sub;
	struct fx f;
	struct gr gr;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(gr_build(&gr, f.ctx) == 0);
	CHECK_ERR(doca_graph_ctx_node_create(NULL, DOCA_DMA_JOB_MEMCPY, f.ctx, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_ctx_node_create(gr.g, DOCA_DMA_JOB_MEMCPY, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_user_node_create(gr.g, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_user_node_create(gr.g, user_cb, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_sub_graph_node_create(gr.g, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_add_dependency(gr.g, NULL, gr.user), DOCA_ERROR_INVALID_VALUE);
	/* dependencies forming a circle */
	CHECK_ERR(doca_graph_add_dependency(gr.g, gr.user, gr.dma), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_add_dependency(gr.g, gr.dma, gr.dma), DOCA_ERROR_NOT_PERMITTED);
	/* a sub graph that is the graph itself */
	CHECK_ERR(doca_graph_sub_graph_node_create(gr.g, gr.g, &n), DOCA_ERROR_NOT_PERMITTED);
	/* a sub graph that is not started */
	CHECK_OK(doca_graph_create(&sub));
	CHECK_OK(doca_graph_ctx_node_create(sub, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_ERR(doca_graph_sub_graph_node_create(gr.g, sub, &sub_node), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_start(sub));
	CHECK_OK(doca_graph_start(gr.g));
	/* the graph is started */
	CHECK_ERR(doca_graph_ctx_node_create(gr.g, DOCA_DMA_JOB_MEMCPY, f.ctx, &n), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_user_node_create(gr.g, user_cb, &n), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_sub_graph_node_create(gr.g, sub, &sub_node), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_add_dependency(gr.g, gr.dma, gr.user), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_sub_graph_node_create(gr.g, sub, &sub_node));
	CHECK_OK(doca_graph_destroy(gr.g));
	CHECK_OK(doca_graph_stop(sub));
	CHECK_OK(doca_graph_destroy(sub));
	fx_teardown(&f);
}

static void test_graph_start_stop(void)
{
	struct doca_graph_instance *gi;
	struct doca_graph_node *n;
	struct doca_graph *only_user;
	struct doca_dma *stopped;
	struct doca_graph *g;
	struct fx f;
	struct gr gr;

	CHECK_ERR(doca_graph_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	/* no context node */
	CHECK_OK(doca_graph_create(&only_user));
	CHECK_OK(doca_graph_user_node_create(only_user, user_cb, &n));
	CHECK_ERR(doca_graph_start(only_user), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_destroy(only_user));
	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	/* a context of a node is not started */
	stopped = new_dma(f.dev, false);
	CHECK(stopped != NULL);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, doca_dma_as_ctx(stopped), &n));
	CHECK_ERR(doca_graph_start(g), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_destroy(g));
	free_dma(stopped, f.dev);

	CHECK(gr_build(&gr, f.ctx) == 0);
	/* already stopped */
	CHECK_ERR(doca_graph_stop(gr.g), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_start(gr.g));
	/* already started */
	CHECK_ERR(doca_graph_start(gr.g), DOCA_ERROR_BAD_STATE);
	/* an instance not destroyed, then a work queue not removed */
	CHECK_OK(doca_graph_instance_create(gr.g, &gi));
	CHECK_ERR(doca_graph_stop(gr.g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_workq_add(gr.g, f.wq));
	CHECK_ERR(doca_graph_stop(gr.g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_workq_rm(gr.g, f.wq));
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_destroy(gr.g));
	fx_teardown(&f);
}

static void test_graph_workq(void)
{
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j;
	struct doca_buf *src, *dst;
	struct doca_workq *bare;
	union doca_data ud = { .u64 = 77 };
	struct doca_event ev;
	int runs = 0;
	struct fx f;
	struct gr gr;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(gr_build(&gr, f.ctx) == 0);
	CHECK_ERR(doca_graph_workq_add(NULL, f.wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_add(gr.g, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_rm(NULL, f.wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_rm(gr.g, NULL), DOCA_ERROR_INVALID_VALUE);
	/* graph not started */
	CHECK_ERR(doca_graph_workq_add(gr.g, f.wq), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_start(gr.g));
	/* the work queue lacks the graph's context */
	CHECK_OK(doca_workq_create(4, &bare));
	CHECK_ERR(doca_graph_workq_add(gr.g, bare), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_workq_destroy(bare));
	/* never added */
	CHECK_ERR(doca_graph_workq_rm(gr.g, f.wq), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_workq_add(gr.g, f.wq));

	/* in-flight instance */
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memset(f.src, 0x3c, LEN);
	memcpy_job(&j, f.ctx, dst, src, 0);
	CHECK_OK(doca_graph_instance_create(gr.g, &gi));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, gr.dma, &j.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, gr.user, &runs, NULL));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, ud));
	CHECK_ERR(doca_graph_workq_rm(gr.g, f.wq), DOCA_ERROR_IN_USE);
	CHECK_OK(retrieve(f.wq, &ev));
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 77 && runs == 1);
	CHECK(memcmp(f.dst, f.src, LEN) == 0);
	CHECK_OK(doca_graph_workq_rm(gr.g, f.wq));
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_destroy(gr.g));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

static void test_graph_instance(void)
{
	struct doca_graph_instance *gi, *sub_gi, *other_gi;
	struct doca_graph_node *sub_node, *n;
	struct doca_dma_job_memcpy j, wrong;
	struct doca_graph *top, *sub;
	struct doca_buf *src, *dst;
	union doca_data ud = { .u64 = 5 };
	union doca_data res;
	enum doca_graph_instance_node_state state;
	const struct doca_graph_node *failed[2];
	uint32_t nfailed = 2;
	struct doca_event ev;
	int runs = 0;
	struct fx f;
	struct gr gr;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(gr_build(&gr, f.ctx) == 0);
	CHECK_ERR(doca_graph_instance_create(NULL, &gi), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_create(gr.g, NULL), DOCA_ERROR_INVALID_VALUE);
	/* graph not started */
	CHECK_ERR(doca_graph_instance_create(gr.g, &gi), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_start(gr.g));
	CHECK_OK(doca_graph_workq_add(gr.g, f.wq));
	CHECK_OK(doca_graph_instance_create(gr.g, &gi));
	CHECK_ERR(doca_graph_instance_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memcpy_job(&j, f.ctx, dst, src, 0);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(NULL, gr.dma, &j.base, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, gr.dma, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_user_node_data(NULL, gr.user, &runs, NULL), DOCA_ERROR_INVALID_VALUE);
	/* a job of another type, a node of the other kind */
	wrong = j;
	wrong.base.type = DOCA_DMA_JOB_MEMCPY + 1;
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, gr.dma, &wrong.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, gr.user, &j.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_set_user_node_data(gi, gr.dma, &runs, NULL), DOCA_ERROR_NOT_PERMITTED);

	/* a node of another graph */
	CHECK_OK(doca_graph_create(&sub));
	CHECK_OK(doca_graph_ctx_node_create(sub, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_OK(doca_graph_start(sub));
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, n, &j.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_node_get_state(gi, n, &state), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, n, &res), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_node_get_state(NULL, gr.dma, &state), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, gr.dma, NULL), DOCA_ERROR_INVALID_VALUE);
	/* not completed yet */
	CHECK_ERR(doca_graph_instance_node_get_result(gi, gr.dma, &res), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_instance_get_num_failed_nodes(NULL, &nfailed), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_num_failed_nodes(gi, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_failed_nodes(gi, NULL, &nfailed), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_failed_nodes(NULL, failed, &nfailed), DOCA_ERROR_INVALID_VALUE);

	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, gr.dma, &j.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, gr.user, &runs, NULL));
	CHECK_ERR(doca_workq_graph_submit(NULL, gi, ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_graph_submit(f.wq, NULL, ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, ud));
	/* submitted */
	CHECK_ERR(doca_workq_graph_submit(f.wq, gi, ud), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, gr.dma, &j.base, NULL), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_instance_set_user_node_data(gi, gr.user, &runs, NULL), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_instance_destroy(gi), DOCA_ERROR_NOT_PERMITTED);

	/* a sub graph instance that is submitted */
	CHECK_OK(doca_graph_create(&top));
	CHECK_OK(doca_graph_sub_graph_node_create(top, gr.g, &sub_node));
	CHECK_OK(doca_graph_start(top));
	CHECK_OK(doca_graph_instance_create(top, &other_gi));
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(NULL, sub_node, gi, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(other_gi, sub_node, gi, NULL), DOCA_ERROR_NOT_PERMITTED);
	/* a sub graph instance of another graph */
	CHECK_OK(doca_graph_instance_create(sub, &sub_gi));
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(other_gi, sub_node, sub_gi, NULL),
		  DOCA_ERROR_NOT_PERMITTED);

	CHECK_OK(retrieve(f.wq, &ev));
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 5 && runs == 1);
	CHECK_OK(doca_graph_instance_node_get_state(gi, gr.dma, &state));
	CHECK(state == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	CHECK_OK(doca_graph_instance_node_get_result(gi, gr.dma, &res));
	CHECK_OK(doca_graph_instance_get_num_failed_nodes(gi, &nfailed));
	CHECK(nfailed == 0);

	CHECK_OK(doca_graph_instance_destroy(sub_gi));
	CHECK_OK(doca_graph_instance_destroy(other_gi));
	CHECK_OK(doca_graph_stop(top));
	CHECK_OK(doca_graph_destroy(top));
	CHECK_OK(doca_graph_stop(sub));
	CHECK_OK(doca_graph_destroy(sub));
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_workq_rm(gr.g, f.wq));
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_destroy(gr.g));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

static void test_graph_submit_no_memory(void)
{
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j;
	struct doca_buf *src, *dst;
	union doca_data ud = { .u64 = 6 };
	struct doca_workq *one;
	struct doca_event ev;
	int runs = 0;
	struct fx f;
	struct gr gr;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(gr_build(&gr, f.ctx) == 0);
	CHECK_OK(doca_graph_start(gr.g));
	/* depth 1: the instance needs one unit per context and user node, 2 */
	CHECK_OK(doca_workq_create(1, &one));
	CHECK_OK(doca_ctx_workq_add(f.ctx, one));
	CHECK_OK(doca_graph_workq_add(gr.g, one));
	src = buf_at(&f, false, 0, LEN);
	dst = buf_at(&f, true, 0, LEN);
	CHECK(src != NULL && dst != NULL);
	memcpy_job(&j, f.ctx, dst, src, 0);
	CHECK_OK(doca_graph_instance_create(gr.g, &gi));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, gr.dma, &j.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, gr.user, &runs, NULL));
	CHECK_ERR(doca_workq_graph_submit(one, gi, ud), DOCA_ERROR_NO_MEMORY);
	CHECK_ERR(doca_workq_progress_retrieve(one, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	CHECK(runs == 0);
	/* the refused instance is free to go elsewhere */
	CHECK_OK(doca_graph_workq_add(gr.g, f.wq));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, ud));
	CHECK_OK(retrieve(f.wq, &ev));
	CHECK(ev.type == DOCA_GRAPH_JOB && runs == 1);
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_workq_rm(gr.g, f.wq));
	CHECK_OK(doca_graph_workq_rm(gr.g, one));
	CHECK_OK(doca_ctx_workq_rm(f.ctx, one));
	CHECK_OK(doca_workq_destroy(one));
	CHECK_OK(doca_graph_stop(gr.g));
	CHECK_OK(doca_graph_destroy(gr.g));
	doca_buf_refcount_rm(src, NULL);
	doca_buf_refcount_rm(dst, NULL);
	fx_teardown(&f);
}

/* ---- doca_sync_event.h ---- */

static void test_sync_event_config(void)
{
	static uint64_t word;
	struct doca_sync_event *se;
	int dummy;
	struct doca_dpa *dpa = (struct doca_dpa *)&dummy;
	struct doca_gpu *gpu = (struct doca_gpu *)&dummy;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_sync_event_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_sync_event_as_ctx(NULL) == NULL);
	CHECK_OK(doca_sync_event_create(&se));
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(NULL, f.dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_cpu(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_dpu(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpu(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_dpa(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpa(NULL, dpa), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_gpu(NULL, gpu), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_gpu(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_set_addr(NULL, &word), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_set_addr(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(se, f.dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(se, f.dev));
	CHECK_OK(doca_sync_event_start(se));
	/* started: the address is fixed */
	CHECK_ERR(doca_sync_event_set_addr(se, &word), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_update_set(se, 3));
	CHECK_OK(doca_sync_event_stop(se));
	CHECK_OK(doca_sync_event_destroy(se));
	fx_teardown(&f);
}

static void test_sync_event_export(void)
{
	struct doca_sync_event *se, *imported;
	struct doca_devinfo *di;
	doca_sync_event_remote_t rh;
	const uint8_t *blob;
	uint8_t junk[8] = { 0 };
	size_t sz;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	di = doca_dev_as_devinfo(f.dev);
	CHECK_ERR(doca_sync_event_get_create_from_export_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_export_to_dpu_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_export_to_dpa_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_export_to_gpu_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	/* a host device imports nothing; every device's DPA takes events, no device exports to a GPU */
	CHECK_ERR(doca_sync_event_get_create_from_export_supported(di), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_sync_event_get_export_to_dpa_supported(di));
	CHECK_ERR(doca_sync_event_get_export_to_gpu_supported(di), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_sync_event_get_export_to_dpu_supported(di));
	CHECK_ERR(doca_sync_event_create_from_export(NULL, junk, sizeof(junk), &imported), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_create_from_export(f.dev, NULL, sizeof(junk), &imported), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_create_from_export(f.dev, junk, sizeof(junk), NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_create_from_export(f.dev, junk, sizeof(junk), &imported), DOCA_ERROR_NOT_SUPPORTED);

	CHECK_OK(doca_sync_event_create(&se));
	CHECK_ERR(doca_sync_event_export_to_dpu(NULL, f.dev, &blob, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, NULL, &blob, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, f.dev, NULL, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, f.dev, &blob, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_remote(NULL, &rh), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_remote(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_destroy(se));
	fx_teardown(&f);
}

static void test_sync_event_data_path(void)
{
	struct doca_sync_event *se;
	uint64_t v = 0, fetched = 0;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_sync_event_job_get_supported(NULL, DOCA_SYNC_EVENT_JOB_GET), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_job_get_supported(doca_dev_as_devinfo(f.dev), DOCA_SYNC_EVENT_JOB_GET));
	CHECK_OK(doca_sync_event_create(&se));
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(se, f.dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(se, f.dev));
	CHECK_OK(doca_sync_event_start(se));
	CHECK_ERR(doca_sync_event_get(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_update_add(NULL, 1, &fetched), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_update_set(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_wait_gt(NULL, 0, UINT64_MAX), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_wait_gt_yield(NULL, 0, UINT64_MAX), DOCA_ERROR_INVALID_VALUE);
	/* the refusals changed nothing */
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == 0);
	CHECK_OK(doca_sync_event_update_add(se, 2, &fetched));
	CHECK(fetched == 0);
	CHECK_OK(doca_sync_event_wait_gt(se, 1, UINT64_MAX));
	CHECK_OK(doca_sync_event_stop(se));
	CHECK_OK(doca_sync_event_destroy(se));
	fx_teardown(&f);
}

int main(void)
{
	RUN(test_workq_create_destroy);
	RUN(test_workq_submit);
	RUN(test_workq_progress_retrieve);
	RUN(test_workq_properties);
	RUN(test_workq_event_handle);
	RUN(test_ctx_dev_add_rm);
	RUN(test_ctx_start_stop);
	RUN(test_ctx_workq_add_rm);
	RUN(test_ctx_workq_add_no_memory);
	RUN(test_ctx_queries);
	RUN(test_dma);
	RUN(test_sha_caps);
	RUN(test_sha_submit);
	RUN(test_sha_sessions);
	RUN(test_graph_create_destroy);
	RUN(test_graph_nodes);
	RUN(test_graph_start_stop);
	RUN(test_graph_workq);
	RUN(test_graph_instance);
	RUN(test_graph_submit_no_memory);
	RUN(test_sync_event_config);
	RUN(test_sync_event_export);
	RUN(test_sync_event_data_path);
	return th_summary("test_doc_errors_exec");
}
