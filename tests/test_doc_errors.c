/*
 * test_doc_errors — every documented failure of the public functions returns
 * the code the DOCA 2.2 headers list for it. Organised by header; one case per
 * function or small group. Each refused call must also leave the object usable.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_argp.h"
#include "doca_buf.h"
#include "doca_buf_array.h"
#include "doca_buf_inventory.h"
#include "doca_bufpool.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_dma.h"
#include "doca_error.h"
#include "doca_mmap.h"
#include "doca_sync_event.h"
#include "harness.h"

static uint8_t mem[8192];

static struct doca_devinfo **dev_list;
static uint32_t num_devs;

static struct doca_dev *open_nth(uint32_t i)
{
	struct doca_dev *dev = NULL;

	if (dev_list == NULL && doca_devinfo_list_create(&dev_list, &num_devs) != DOCA_SUCCESS)
		return NULL;
	if (i >= num_devs || doca_dev_open(dev_list[i], &dev) != DOCA_SUCCESS)
		return NULL;
	return dev;
}

static struct doca_dev *open_first(void)
{
	return open_nth(0);
}

static struct doca_mmap *new_mmap(struct doca_dev *dev, uint32_t perm, bool start)
{
	struct doca_mmap *m;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_set_memrange(m, mem, sizeof(mem)) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, perm) != DOCA_SUCCESS || (dev != NULL && doca_mmap_dev_add(m, dev) != DOCA_SUCCESS) ||
	    (start && doca_mmap_start(m) != DOCA_SUCCESS)) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static struct doca_buf_inventory *new_inv(uint32_t n, bool start)
{
	struct doca_buf_inventory *inv;

	if (doca_buf_inventory_create(NULL, n, DOCA_BUF_EXTENSION_LINKED_LIST, &inv) != DOCA_SUCCESS)
		return NULL;
	if (start && doca_buf_inventory_start(inv) != DOCA_SUCCESS) {
		doca_buf_inventory_destroy(inv);
		return NULL;
	}
	return inv;
}

/* ---- doca_error.h ---- */

static void test_error_names(void)
{
	CHECK(strcmp(doca_get_error_name(DOCA_ERROR_NOT_PERMITTED), "DOCA_ERROR_NOT_PERMITTED") == 0);
	CHECK(doca_get_error_string(DOCA_ERROR_NOT_PERMITTED) != NULL);
}

/* ---- doca_mmap.h ---- */

static void test_mmap_create_destroy(void)
{
	struct doca_buf_inventory *inv = new_inv(1, true);
	struct doca_mmap *m;
	struct doca_buf *b;

	CHECK(inv != NULL);
	CHECK_ERR(doca_mmap_create(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK((m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true)) != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	/* a buffer points into the mmap */
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_buf_inventory_destroy(inv));
}

static void test_mmap_start_stop(void)
{
	struct doca_buf_inventory *inv = new_inv(1, true);
	struct doca_dev *dev = open_first();
	const void *desc;
	struct doca_mmap *m;
	struct doca_buf *b;
	size_t len;

	CHECK(inv != NULL && dev != NULL);
	CHECK_ERR(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK((m = new_mmap(dev, DOCA_ACCESS_DPU_READ_WRITE, true)) != NULL);
	/* buffers not yet destroyed */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* an exported mmap cannot be started (again) */
	CHECK_OK(doca_mmap_export_dpu(m, dev, &desc, &len));
	CHECK_ERR(doca_mmap_start(m), DOCA_ERROR_NOT_PERMITTED);
	/* stopping withdraws the export: the mmap starts again */
	CHECK_OK(doca_mmap_stop(m));
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(dev));
}

static void test_mmap_dev_add_rm(void)
{
	struct doca_dev *dev = open_first(), *dev2 = open_nth(1);
	struct doca_mmap *m;
	uint32_t n;

	CHECK(dev != NULL && dev2 != NULL);
	CHECK((m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, false)) != NULL);
	CHECK_ERR(doca_mmap_dev_add(NULL, dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_dev_add(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_dev_rm(m, NULL), DOCA_ERROR_INVALID_VALUE);
	/* a device never added is an invalid input */
	CHECK_ERR(doca_mmap_dev_rm(m, dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_dev_add(m, dev));
	CHECK_ERR(doca_mmap_dev_add(m, dev), DOCA_ERROR_IN_USE);
	/* default maximum: one device */
	CHECK_ERR(doca_mmap_dev_add(m, dev2), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_mmap_start(m));
	/* not permitted on a started mmap */
	CHECK_ERR(doca_mmap_dev_add(m, dev2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_rm(m, dev), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_num_devices(m, &n));
	CHECK(n == 1);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(dev2));
	CHECK_OK(doca_dev_close(dev));
}

static void test_mmap_export(void)
{
	struct doca_dev *dev = open_first(), *other = open_nth(1);
	const void *desc = NULL;
	struct doca_mmap *m;
	size_t len = 0;

	CHECK(dev != NULL && other != NULL);
	CHECK((m = new_mmap(dev, DOCA_ACCESS_LOCAL_READ_WRITE, false)) != NULL);
	CHECK_ERR(doca_mmap_export_dpu(NULL, dev, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_export_dpu(m, dev, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	/* un-started */
	CHECK_ERR(doca_mmap_export_dpu(m, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(m, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_start(m));
	/* device not in the mmap */
	CHECK_ERR(doca_mmap_export_dpu(m, other, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	/* no DPU / RDMA permission set */
	CHECK_ERR(doca_mmap_export_dpu(m, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(m, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	/* stopped */
	CHECK_OK(doca_mmap_stop(m));
	CHECK_ERR(doca_mmap_export_dpu(m, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK(desc == NULL && len == 0);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(other));
	CHECK_OK(doca_dev_close(dev));
}

static void test_mmap_create_from_export(void)
{
	struct doca_dev *dev = open_first();
	struct doca_mmap *imp = NULL;
	uint8_t junk[16] = { 0 };

	CHECK(dev != NULL);
	CHECK_ERR(doca_mmap_create_from_export(NULL, NULL, 0, dev, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_create_from_export(NULL, junk, sizeof(junk), dev, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK(imp == NULL);
	CHECK_OK(doca_dev_close(dev));
}

static void unused_free_cb(void *addr, size_t len, void *opaque)
{
	(void)addr;
	(void)len;
	(void)opaque;
}

static void test_mmap_setters(void)
{
	struct doca_mmap *m;
	void *addr;
	size_t len;
	uint32_t v;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_get_memrange(m, &addr, &len), DOCA_ERROR_BAD_STATE); /* never set */
	CHECK_ERR(doca_mmap_set_memrange(m, NULL, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_memrange(m, (void *)(UINTPTR_MAX - 7), 16), DOCA_ERROR_INVALID_VALUE); /* overflow */
	CHECK_ERR(doca_mmap_set_permissions(m, 1u << 30), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_free_cb(m, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	/* the range is set once */
	CHECK_ERR(doca_mmap_set_memrange(m, mem, 64), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_memrange(m, &addr, &len));
	CHECK(addr == mem && len == sizeof(mem));
	CHECK_OK(doca_mmap_start(m));
	/* started */
	CHECK_ERR(doca_mmap_set_permissions(m, DOCA_ACCESS_RDMA_READ), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_free_cb(m, unused_free_cb, NULL), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_memrange(m, mem, 64), DOCA_ERROR_BAD_STATE);
	/* after the first start */
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 4), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_max_num_devices(m, &v));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_get_permissions(m, &v));
	CHECK(v == DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_mmap_getters(void)
{
	union doca_data ud;
	struct doca_mmap *m;
	uint8_t flag;
	uint32_t v;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_get_user_data(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_max_num_devices(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_num_bufs(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_exported(NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_from_export(NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_permissions(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_destroy(m));
}

/* ---- doca_buf.h ---- */

static void test_buf_list(void)
{
	struct doca_buf_inventory *inv = new_inv(4, true);
	struct doca_mmap *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true);
	struct doca_buf *a, *b, *c;
	uint32_t n;
	uint16_t rc;

	CHECK(inv != NULL && m != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &a));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 64, 64, &b));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 128, 64, &c));
	CHECK_OK(doca_buf_chain_list(a, b));
	/* the number of elements is asked of the head */
	CHECK_ERR(doca_buf_get_list_len(b, &n), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_get_list_len(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_get_list_len(a, &n));
	CHECK(n == 2);
	/* c is not part of a's list */
	CHECK_ERR(doca_buf_unchain_list(a, c), DOCA_ERROR_INVALID_VALUE);
	/* an inner element is released with its list */
	CHECK_ERR(doca_buf_refcount_rm(b, &rc), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(a, NULL));
	CHECK_OK(doca_buf_refcount_rm(c, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

/* ---- doca_buf_inventory.h ---- */

static void test_inventory_life_cycle(void)
{
	struct doca_buf_inventory *inv;
	uint32_t v;

	CHECK_ERR(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_free_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK((inv = new_inv(2, false)) != NULL);
	CHECK_ERR(doca_buf_inventory_get_user_data(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_inventory_destroy(inv));
}

static void test_inventory_destroy_in_use(void)
{
	struct doca_buf_inventory *inv = new_inv(2, true);
	struct doca_mmap *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true);
	struct doca_buf *b;
	uint32_t v;

	CHECK(inv != NULL && m != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv, &v));
	CHECK(v == 1);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_inventory_buf_get(void)
{
	struct doca_buf_inventory *inv = new_inv(1, true);
	struct doca_mmap *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true);
	struct doca_buf *b, *x = NULL;

	CHECK(inv != NULL && m != NULL);
	/* no suitable memory range */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem + sizeof(mem) - 8, 64, &x), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem + sizeof(mem) - 8, 64, &x), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 64, mem + 60, 8, &x), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	/* the inventory is empty */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &x), DOCA_ERROR_NO_MEMORY);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem, 64, &x), DOCA_ERROR_NO_MEMORY);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 64, mem, 8, &x), DOCA_ERROR_NO_MEMORY);
	CHECK(x == NULL);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_inventory_buf_dup(void)
{
	struct doca_buf_inventory *inv = new_inv(2, true), *idle = new_inv(2, false), *small = new_inv(1, true);
	struct doca_mmap *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true);
	struct doca_buf *b, *b2, *x = NULL;

	CHECK(inv != NULL && idle != NULL && small != NULL && m != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	CHECK_ERR(doca_buf_inventory_buf_dup(NULL, b, &x), DOCA_ERROR_INVALID_VALUE);
	/* un-started inventory */
	CHECK_ERR(doca_buf_inventory_buf_dup(idle, b, &x), DOCA_ERROR_NOT_PERMITTED);
	/* no element left for the copy of a two-element list */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 64, 64, &b2));
	CHECK_OK(doca_buf_chain_list(b, b2));
	CHECK_ERR(doca_buf_inventory_buf_dup(small, b, &x), DOCA_ERROR_NO_MEMORY);
	CHECK(x == NULL);
	/* into an inventory with other extensions than the buffer's own (incompatible) */
	{
		struct doca_buf_inventory *flat;
		uint32_t nfree = 0;

		CHECK_OK(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &flat));
		CHECK_OK(doca_buf_inventory_start(flat));
		CHECK_ERR(doca_buf_inventory_buf_dup(flat, b, &x), DOCA_ERROR_NOT_PERMITTED);
		CHECK(x == NULL);
		CHECK_OK(doca_buf_inventory_get_num_free_elements(flat, &nfree));
		CHECK(nfree == 4);
		CHECK_OK(doca_buf_inventory_destroy(flat));
	}
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(small));
	CHECK_OK(doca_buf_inventory_destroy(idle));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

/* ---- doca_bufpool.h ---- */

static void test_bufpool(void)
{
	struct doca_mmap *norange, *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, false);
	struct doca_bufpool *bp = NULL;
	struct doca_buf *b, *x;

	CHECK(m != NULL);
	CHECK_OK(doca_mmap_create(NULL, &norange));
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 0, NULL, &bp), DOCA_ERROR_INVALID_VALUE);
	/* no memory range was set to the mmap */
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 0, norange, &bp), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_bufpool_create(NULL, 1, 0, 64, 0, m, &bp));
	/* its mmap is not started */
	CHECK_ERR(doca_bufpool_start(bp), DOCA_ERROR_BAD_STATE);
	/* un-started bufpool */
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_bufpool_start(bp));
	CHECK_OK(doca_bufpool_buf_alloc(bp, &b));
	/* every doca_buf is out */
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_bufpool_stop(bp));
	CHECK_ERR(doca_bufpool_destroy(bp), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_ERR(doca_bufpool_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_mmap_destroy(norange));
}

/* ---- doca_buf_array.h ---- */

static void test_buf_array(void)
{
	struct doca_mmap *m = new_mmap(NULL, DOCA_ACCESS_LOCAL_READ_WRITE, false);
	struct doca_gpu_buf_arr *h = NULL;
	struct doca_buf_arr *ba;
	int fake_gpu;

	CHECK(m != NULL);
	CHECK_ERR(doca_buf_arr_create(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_create(m, &ba));
	CHECK_ERR(doca_buf_arr_set_params(ba, 0, 4, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_set_params(ba, 64, 4, 0));
	/* not started */
	CHECK_ERR(doca_buf_arr_get_gpu_handle(ba, &h), DOCA_ERROR_BAD_STATE);
	/* the mmap is not started */
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_buf_arr_start(ba));
	/* already started */
	CHECK_ERR(doca_buf_arr_start(ba), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_arr_set_params(ba, 32, 2, 0), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_arr_set_target_gpu(ba, (struct doca_gpu *)&fake_gpu), DOCA_ERROR_BAD_STATE);
	CHECK(h == NULL);
	CHECK_ERR(doca_buf_arr_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_stop(ba));
	CHECK_ERR(doca_buf_arr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_arr_destroy(ba));
	CHECK_OK(doca_mmap_destroy(m));
}

/* ---- doca_ctx.h (contexts; work queues are covered by test_ctx_workq) ---- */

static void test_ctx(void)
{
	struct doca_dev *dev = open_first();
	struct doca_workq *wq, *other;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	uint32_t max;

	CHECK(dev != NULL);
	CHECK_ERR(doca_ctx_get_max_num_ctx(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_ctx_get_max_num_ctx(&max));
	CHECK_OK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK(ctx != NULL);
	/* no devices were added */
	CHECK_ERR(doca_ctx_start(ctx), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, dev), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_ctx_dev_add(ctx, dev));
	CHECK_ERR(doca_ctx_dev_add(ctx, dev), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_workq_create(8, &wq));
	CHECK_OK(doca_workq_create(8, &other));
	/* not started */
	CHECK_ERR(doca_ctx_workq_add(ctx, wq), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_workq_rm(ctx, wq), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_ctx_start(ctx));
	/* started */
	CHECK_ERR(doca_ctx_dev_add(ctx, dev), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_rm(ctx, dev), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_ctx_workq_add(ctx, wq));
	CHECK_ERR(doca_ctx_workq_add(ctx, wq), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_ctx_workq_rm(ctx, other), DOCA_ERROR_NOT_FOUND);
	/* a work queue is still associated */
	CHECK_ERR(doca_ctx_stop(ctx), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_dma_destroy(dma), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_ctx_workq_rm(ctx, wq));
	CHECK_OK(doca_ctx_stop(ctx));
	CHECK_OK(doca_ctx_dev_rm(ctx, dev));
	CHECK_OK(doca_dma_destroy(dma));
	CHECK_OK(doca_workq_destroy(other));
	CHECK_OK(doca_workq_destroy(wq));
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_dma.h ---- */

static void test_dma_caps(void)
{
	uint64_t size;
	uint32_t n;

	CHECK(dev_list != NULL || open_first() != NULL);
	CHECK_ERR(doca_dma_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_job_get_supported(NULL, DOCA_DMA_JOB_MEMCPY), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_job_get_supported(dev_list[0], (enum doca_dma_job_types)0), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_dma_job_get_supported(dev_list[0], DOCA_DMA_JOB_MEMCPY));
	CHECK_ERR(doca_dma_get_max_list_buf_num_elem(dev_list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_buf_size(NULL, &size), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dma_get_max_list_buf_num_elem(dev_list[0], &n));
	CHECK(doca_dma_as_ctx(NULL) == NULL);
}

/* ---- doca_dev.h ---- */

static void test_dev(void)
{
	struct doca_devinfo_rep **reps;
	struct doca_dev *dev = open_first();
	uint32_t n;

	CHECK(dev != NULL);
	CHECK_ERR(doca_devinfo_list_create(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	/* a host-side device exposes no representors */
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_dev_as_devinfo(NULL) == NULL);
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_sync_event.h ---- */

static void test_sync_event_set_addr(void)
{
	static uint64_t word;
	struct doca_dev *dev = open_first();
	struct doca_sync_event *ev;

	CHECK(dev != NULL);
	CHECK_ERR(doca_sync_event_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_create(&ev));
	CHECK_ERR(doca_sync_event_set_addr(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(ev, dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(ev, dev));
	CHECK_OK(doca_sync_event_start(ev));
	/* started */
	CHECK_ERR(doca_sync_event_set_addr(ev, &word), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_stop(ev));
	CHECK_OK(doca_sync_event_destroy(ev));
	CHECK_ERR(doca_sync_event_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dev_close(dev));
}

/* ---- doca_argp.h ---- */

static doca_error_t flag_cb(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_SUCCESS;
}

static doca_error_t register_flag(const char *name, enum doca_argp_type type, callback_func cb)
{
	struct doca_argp_param *p;
	doca_error_t ret = doca_argp_param_create(&p);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (name != NULL)
		doca_argp_param_set_long_name(p, name);
	if (type != DOCA_ARGP_TYPE_UNKNOWN)
		doca_argp_param_set_type(p, type);
	if (cb != NULL)
		doca_argp_param_set_callback(p, cb);
	return doca_argp_register_param(p);
}

static void test_argp_register(void)
{
	int cfg = 0;

	CHECK_OK(doca_argp_init("doc_errors", &cfg));
	CHECK_ERR(doca_argp_register_param(NULL), DOCA_ERROR_INVALID_VALUE);
	/* params missing a mandatory field */
	CHECK_ERR(register_flag(NULL, DOCA_ARGP_TYPE_INT, flag_cb), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(register_flag("count", DOCA_ARGP_TYPE_UNKNOWN, flag_cb), DOCA_ERROR_INITIALIZATION);
	CHECK_ERR(register_flag("count", DOCA_ARGP_TYPE_INT, NULL), DOCA_ERROR_INITIALIZATION);
	CHECK_OK(register_flag("count", DOCA_ARGP_TYPE_INT, flag_cb));
	CHECK_ERR(doca_argp_param_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_argp_destroy());
}

int main(void)
{
	RUN(test_error_names);
	RUN(test_mmap_create_destroy);
	RUN(test_mmap_start_stop);
	RUN(test_mmap_dev_add_rm);
	RUN(test_mmap_export);
	RUN(test_mmap_create_from_export);
	RUN(test_mmap_setters);
	RUN(test_mmap_getters);
	RUN(test_buf_list);
	RUN(test_inventory_life_cycle);
	RUN(test_inventory_destroy_in_use);
	RUN(test_inventory_buf_get);
	RUN(test_inventory_buf_dup);
	RUN(test_bufpool);
	RUN(test_buf_array);
	RUN(test_ctx);
	RUN(test_dma_caps);
	RUN(test_dev);
	RUN(test_sync_event_set_addr);
	RUN(test_argp_register);
	if (dev_list != NULL)
		doca_devinfo_list_destroy(dev_list);
	return th_summary("test_doc_errors");
}
