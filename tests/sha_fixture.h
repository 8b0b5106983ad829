/*
 * A ready SHA setup for tests: the memory of tests/mem_fixture.h (device,
 * source and destination mmaps, inventory), a started SHA context and a work
 * queue added to it. Registered with the harness, so a case that stops on a
 * failed check leaves nothing behind.
 */
#ifndef SOFTDPU_TEST_SHA_FIXTURE_H_
#define SOFTDPU_TEST_SHA_FIXTURE_H_

#include "doca_sha.h"
#include "harness.h"
#include "mem_fixture.h"

struct sfx {
	MEM_FX_EMBED; /* dev, src/dst and their mmaps, inventory */
	struct doca_sha *sha;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static inline void sfx_close(struct sfx *f)
{
	if (f->wq != NULL) {
		doca_ctx_workq_rm(f->ctx, f->wq);
		doca_workq_destroy(f->wq);
	}
	if (f->sha != NULL) {
		doca_ctx_stop(f->ctx);
		doca_ctx_dev_rm(f->ctx, f->dev);
		doca_sha_destroy(f->sha);
	}
	f->wq = NULL;
	f->sha = NULL;
	f->ctx = NULL;
	mem_fx_close(&f->mem);
}

static inline void sfx_cleanup(void *f)
{
	sfx_close(f);
}

/* Released by sfx_teardown, or by the harness if the case stops first. */
static inline int sfx_setup_sized(struct sfx *f, size_t src_len, size_t dst_len, uint32_t depth, uint32_t dst_perm)
{
	struct mem_fx_cfg cfg = { .len = src_len, .dst_len = dst_len, .dst_perm = dst_perm, .inv_num = 256 };

	memset(f, 0, sizeof(*f));
	th_defer_local(sfx_cleanup, f);
	if (mem_fx_open(&f->mem, &cfg) != 0 || doca_sha_create(&f->sha) != DOCA_SUCCESS)
		return -1;
	f->ctx = doca_sha_as_ctx(f->sha);
	if (doca_ctx_dev_add(f->ctx, f->dev) != DOCA_SUCCESS || doca_ctx_start(f->ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(depth, &f->wq) != DOCA_SUCCESS || doca_ctx_workq_add(f->ctx, f->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static inline void sfx_teardown(struct sfx *f)
{
	th_undefer(sfx_cleanup, f);
	sfx_close(f);
}

#endif /* SOFTDPU_TEST_SHA_FIXTURE_H_ */
