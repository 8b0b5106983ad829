/*
 * A Sync Event in its asynchronous mode for tests: an event with CPU
 * publisher and subscriber on dev, turned into a started context, and a work
 * queue (polling or event-driven) added to it. Registered with the harness,
 * so a case that stops on a failed check leaves nothing behind.
 */
#ifndef SOFTDPU_TEST_SE_FIXTURE_H_
#define SOFTDPU_TEST_SE_FIXTURE_H_

#include <string.h>

#include "doca_ctx.h"
#include "doca_sync_event.h"
#include "harness.h"

struct se_fx {
	struct doca_sync_event *se;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

/* Returns the number of calls that failed (0: everything released cleanly). */
static inline int se_fx_close(struct se_fx *f)
{
	int bad = 0;

	if (f->wq != NULL) {
		bad += doca_ctx_workq_rm(f->ctx, f->wq) != DOCA_SUCCESS;
		bad += doca_workq_destroy(f->wq) != DOCA_SUCCESS;
	}
	if (f->ctx != NULL)
		bad += doca_ctx_stop(f->ctx) != DOCA_SUCCESS;
	if (f->se != NULL)
		bad += doca_sync_event_destroy(f->se) != DOCA_SUCCESS;
	memset(f, 0, sizeof(*f));
	return bad;
}

static inline void se_fx_cleanup(void *f)
{
	se_fx_close(f);
}

/* Released by se_fx_teardown, or by the harness if the case stops first. */
static inline int se_fx_setup(struct se_fx *f, struct doca_dev *dev, uint32_t depth, int event_driven)
{
	memset(f, 0, sizeof(*f));
	th_defer_local(se_fx_cleanup, f);
	if (doca_sync_event_create(&f->se) != DOCA_SUCCESS ||
	    doca_sync_event_publisher_add_location_cpu(f->se, dev) != DOCA_SUCCESS ||
	    doca_sync_event_subscriber_add_location_cpu(f->se, dev) != DOCA_SUCCESS)
		return -1;
	f->ctx = doca_sync_event_as_ctx(f->se);
	if (f->ctx == NULL || doca_ctx_start(f->ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(depth, &f->wq) != DOCA_SUCCESS ||
	    (event_driven && doca_workq_set_event_driven_enable(f->wq, 1) != DOCA_SUCCESS) ||
	    doca_ctx_workq_add(f->ctx, f->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static inline int se_fx_teardown(struct se_fx *f)
{
	th_undefer(se_fx_cleanup, f);
	return se_fx_close(f);
}

#endif /* SOFTDPU_TEST_SE_FIXTURE_H_ */
