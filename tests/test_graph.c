/* DOCA Graph: building, life cycle, errors, and instances running DMA and user nodes on a work queue. */
#include <stdbool.h>
#include <stdio.h>

#include "dma_fixture.h"
#include "doca_graph.h"
#include "doca_sync_event.h"
#include "harness.h"

#define LEN 256

/* ---- helpers ---- */

static struct doca_buf *src_buf(struct fx *f, size_t off, size_t len)
{
	struct doca_buf *b = NULL;

	doca_buf_inventory_buf_by_data(f->inv, f->src_mmap, f->src + off, len, &b);
	return b;
}

static struct doca_buf *dst_buf(struct fx *f, size_t off, size_t len)
{
	struct doca_buf *b = NULL;

	doca_buf_inventory_buf_by_addr(f->inv, f->dst_mmap, f->dst + off, len, &b);
	return b;
}

/* The copied bytes of a destination, as a source of another copy. */
static struct doca_buf *dst_as_src(struct fx *f, size_t off, size_t len)
{
	struct doca_buf *b = NULL;

	doca_buf_inventory_buf_by_data(f->inv, f->dst_mmap, f->dst + off, len, &b);
	return b;
}

/* Jobs keep their source as const; the test owns it and gives it back. */
static void buf_put(const struct doca_buf *b)
{
	doca_buf_refcount_rm((struct doca_buf *)b, NULL);
}

static void dma_job(struct doca_dma_job_memcpy *j, struct fx *f, struct doca_buf *dst, struct doca_buf *src,
		    uint64_t ud)
{
	*j = (struct doca_dma_job_memcpy){ .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f->ctx, .user_data.u64 = ud },
					   .dst_buff = dst,
					   .src_buff = src };
}

static doca_error_t wait_event(struct doca_workq *wq, struct doca_event *ev)
{
	doca_error_t r;

	while ((r = doca_workq_progress_retrieve(wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	return r;
}

static bool queue_idle(struct doca_workq *wq)
{
	struct doca_event ev;

	return doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) == DOCA_ERROR_AGAIN;
}

/* User node state: what it saw when it ran. */
struct probe {
	int runs;
	int order;		/* position in the global order log */
	const uint8_t *want;	/* bytes the node expects ... */
	const uint8_t *got;	/* ... to find here */
	size_t len;
	bool data_ok;
	doca_error_t ret;	/* what the callback returns */
	const struct doca_graph_instance *inst;
	const struct doca_graph_node *must_be_done; /* a parent whose state must be COMPLETED */
	bool parent_done;
};

static int order_next;

static doca_error_t probe_cb(void *cookie, struct doca_event *ev)
{
	struct probe *p = cookie;
	enum doca_graph_instance_node_state st = DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED;

	p->runs++;
	p->order = order_next++;
	if (p->want != NULL)
		p->data_ok = memcmp(p->want, p->got, p->len) == 0;
	if (p->must_be_done != NULL)
		p->parent_done = doca_graph_instance_node_get_state(p->inst, p->must_be_done, &st) == DOCA_SUCCESS &&
				 st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED;
	if (ev != NULL)
		ev->result.u64 = 0xc0ffee;
	return p->ret;
}

static doca_error_t noop_cb(void *cookie, struct doca_event *ev)
{
	(void)cookie;
	(void)ev;
	return DOCA_SUCCESS;
}

/* A started graph: one DMA node -> one user node, added to f's work queue. */
struct chain {
	struct doca_graph *g;
	struct doca_graph_node *dma, *user;
};

static int chain_build(struct chain *c, struct fx *f)
{
	if (doca_graph_create(&c->g) != DOCA_SUCCESS ||
	    doca_graph_ctx_node_create(c->g, DOCA_DMA_JOB_MEMCPY, f->ctx, &c->dma) != DOCA_SUCCESS ||
	    doca_graph_user_node_create(c->g, probe_cb, &c->user) != DOCA_SUCCESS ||
	    doca_graph_add_dependency(c->g, c->dma, c->user) != DOCA_SUCCESS || doca_graph_start(c->g) != DOCA_SUCCESS ||
	    doca_graph_workq_add(c->g, f->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void chain_free(struct chain *c, struct fx *f)
{
	doca_graph_workq_rm(c->g, f->wq);
	doca_graph_stop(c->g);
	doca_graph_destroy(c->g);
}

/* Takes a started graph off the work queue, stops and destroys it. */
static void graph_end(struct doca_graph *g, struct doca_workq *wq)
{
	CHECK_OK(doca_graph_workq_rm(g, wq));
	CHECK_OK(doca_graph_stop(g));
	CHECK_OK(doca_graph_destroy(g));
}

/* ---- building ---- */

static void test_create_destroy(void)
{
	struct doca_graph *g;

	CHECK_ERR(doca_graph_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_destroy(g));
	CHECK(DOCA_GRAPH_JOB == DOCA_ACTION_GRAPH_FIRST + 1);
}

static void test_node_create_errors(void)
{
	struct fx f;
	struct doca_graph *g, *sub;
	struct doca_graph_node *n, *c;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_create(&sub));
	CHECK_ERR(doca_graph_ctx_node_create(NULL, DOCA_DMA_JOB_MEMCPY, f.ctx, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_user_node_create(NULL, noop_cb, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_user_node_create(g, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_user_node_create(g, noop_cb, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_sub_graph_node_create(NULL, sub, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_sub_graph_node_create(g, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_sub_graph_node_create(g, sub, NULL), DOCA_ERROR_INVALID_VALUE);
	/* A sub-graph must be started. */
	CHECK_ERR(doca_graph_sub_graph_node_create(g, sub, &n), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_ctx_node_create(sub, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_OK(doca_graph_start(sub));
	CHECK_OK(doca_graph_sub_graph_node_create(g, sub, &n));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &c));
	CHECK_OK(doca_graph_start(g));
	/* Started: frozen. */
	CHECK_ERR(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &n), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_user_node_create(g, noop_cb, &n), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_sub_graph_node_create(g, sub, &n), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_graph_add_dependency(g, c, c), DOCA_ERROR_BAD_STATE);
	/* A graph in use as a sub-graph cannot be destroyed nor stopped while its user is started. */
	CHECK_ERR(doca_graph_destroy(sub), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_stop(sub), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_destroy(g)); /* a started graph without instances or work queues */
	CHECK_OK(doca_graph_stop(sub));
	CHECK_OK(doca_graph_destroy(sub));
	fx_teardown(&f);
}

static void test_cycles_refused(void)
{
	struct doca_graph *g, *other;
	struct doca_graph_node *a, *b, *c, *x;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_create(&other));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &a));
	CHECK_OK(doca_graph_user_node_create(g, noop_cb, &b));
	CHECK_OK(doca_graph_user_node_create(g, noop_cb, &c));
	CHECK_OK(doca_graph_user_node_create(other, noop_cb, &x));
	CHECK_ERR(doca_graph_add_dependency(NULL, a, b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_add_dependency(g, NULL, b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_add_dependency(g, a, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_add_dependency(g, a, x), DOCA_ERROR_INVALID_VALUE); /* node of another graph */
	CHECK_ERR(doca_graph_add_dependency(g, a, a), DOCA_ERROR_NOT_PERMITTED);  /* self edge */
	CHECK_OK(doca_graph_add_dependency(g, a, b));
	CHECK_OK(doca_graph_add_dependency(g, a, b)); /* existing dependency: no change */
	CHECK_ERR(doca_graph_add_dependency(g, b, a), DOCA_ERROR_NOT_PERMITTED); /* 2-node cycle */
	CHECK_OK(doca_graph_add_dependency(g, b, c));
	CHECK_ERR(doca_graph_add_dependency(g, c, a), DOCA_ERROR_NOT_PERMITTED); /* 3-node cycle */
	CHECK_OK(doca_graph_add_dependency(g, a, c)); /* a shortcut is no cycle */
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_destroy(g));
	CHECK_OK(doca_graph_destroy(other));
	fx_teardown(&f);
}

static void test_sub_graph_cycles_refused(void)
{
	struct doca_graph *a, *b, *c;
	struct doca_graph_node *n;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&a));
	CHECK_OK(doca_graph_create(&b));
	CHECK_OK(doca_graph_create(&c));
	CHECK_OK(doca_graph_ctx_node_create(a, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	/* A graph as its own sub-graph, started or not. */
	CHECK_ERR(doca_graph_sub_graph_node_create(a, a, &n), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_start(a));
	CHECK_ERR(doca_graph_sub_graph_node_create(a, a, &n), DOCA_ERROR_NOT_PERMITTED);
	/* c runs b, b runs a. */
	CHECK_OK(doca_graph_sub_graph_node_create(b, a, &n));
	CHECK_OK(doca_graph_start(b));
	CHECK_OK(doca_graph_sub_graph_node_create(c, b, &n));
	/* While b is started, a stays started (frozen). */
	CHECK_ERR(doca_graph_stop(a), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_stop(b));
	CHECK_OK(doca_graph_stop(a));
	/* a running b (which runs a) would be a cycle; so would a running c (c -> b -> a). */
	CHECK_ERR(doca_graph_start(b), DOCA_ERROR_BAD_STATE); /* its sub-graph a is stopped */
	CHECK_ERR(doca_graph_sub_graph_node_create(a, b, &n), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_sub_graph_node_create(a, c, &n), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_destroy(a), DOCA_ERROR_NOT_PERMITTED); /* b refers to it */
	CHECK_OK(doca_graph_destroy(c));
	CHECK_OK(doca_graph_destroy(b));
	CHECK_OK(doca_graph_destroy(a));
	fx_teardown(&f);
}

static void test_start_needs_ctx_node(void)
{
	struct doca_graph *g, *sub, *top;
	struct doca_graph_node *n, *u;
	struct fx f;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_graph_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_create(&g));
	CHECK_ERR(doca_graph_start(g), DOCA_ERROR_BAD_STATE); /* empty */
	CHECK_OK(doca_graph_user_node_create(g, noop_cb, &u));
	CHECK_ERR(doca_graph_start(g), DOCA_ERROR_BAD_STATE); /* user nodes only */
	CHECK_ERR(doca_graph_stop(g), DOCA_ERROR_BAD_STATE);
	/* A context node inside a sub-graph is enough. */
	CHECK_OK(doca_graph_create(&sub));
	CHECK_OK(doca_graph_ctx_node_create(sub, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_OK(doca_graph_start(sub));
	CHECK_OK(doca_graph_sub_graph_node_create(g, sub, &n));
	CHECK_OK(doca_graph_add_dependency(g, u, n));
	CHECK_OK(doca_graph_start(g));
	CHECK_ERR(doca_graph_start(g), DOCA_ERROR_BAD_STATE); /* already started */
	/* Two levels down still counts. */
	CHECK_OK(doca_graph_create(&top));
	CHECK_OK(doca_graph_sub_graph_node_create(top, g, &n));
	CHECK_OK(doca_graph_start(top));
	CHECK_OK(doca_graph_destroy(top));
	CHECK_OK(doca_graph_stop(g));
	CHECK_OK(doca_graph_destroy(g));
	CHECK_OK(doca_graph_stop(sub));
	CHECK_OK(doca_graph_destroy(sub));
	fx_teardown(&f);
}

static void test_start_needs_started_contexts(void)
{
	struct doca_dma *dma;
	struct doca_graph *g;
	struct doca_graph_node *n;

	CHECK_OK(doca_dma_create(&dma));
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, doca_dma_as_ctx(dma), &n));
	CHECK_ERR(doca_graph_start(g), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_destroy(g));
	CHECK_OK(doca_dma_destroy(dma));
}

/* ---- life cycle around work queues and instances ---- */

static void test_workq_add_rm(void)
{
	struct fx f;
	struct chain c;
	struct doca_workq *wq2;
	struct doca_graph *g;
	struct doca_graph_node *n;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_ERR(doca_graph_workq_add(NULL, f.wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_add(g, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_add(g, f.wq), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_workq_create(8, &wq2));
	CHECK_ERR(doca_graph_workq_add(g, wq2), DOCA_ERROR_BAD_STATE); /* the DMA context is not on wq2 */
	CHECK_OK(doca_workq_destroy(wq2));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_ERR(doca_graph_workq_add(g, f.wq), DOCA_ERROR_IN_USE);
	/* Its contexts cannot leave the work queue, the graph can neither stop nor go. */
	CHECK_ERR(doca_ctx_workq_rm(f.ctx, f.wq), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_graph_stop(g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_destroy(g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_workq_rm(NULL, f.wq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_workq_rm(g, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_workq_rm(g, f.wq));
	CHECK_ERR(doca_graph_workq_rm(g, f.wq), DOCA_ERROR_BAD_STATE); /* not added */
	CHECK_OK(doca_graph_stop(g));
	CHECK_OK(doca_graph_destroy(g));

	/* Removing a graph is refused while one of its instances runs there. */
	CHECK(chain_build(&c, &f) == 0);
	{
		struct doca_graph_instance *gi;
		struct doca_dma_job_memcpy j;
		struct probe p = { 0 };
		struct doca_event ev;

		CHECK_OK(doca_graph_instance_create(c.g, &gi));
		dma_job(&j, &f, dst_buf(&f, 0, 16), src_buf(&f, 0, 16), 1);
		CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL));
		CHECK_OK(doca_graph_instance_set_user_node_data(gi, c.user, &p, NULL));
		CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 7 }));
		CHECK_ERR(doca_graph_workq_rm(c.g, f.wq), DOCA_ERROR_IN_USE);
		CHECK_OK(wait_event(f.wq, &ev));
		CHECK_OK(doca_graph_instance_destroy(gi));
		buf_put(j.dst_buff);
		buf_put(j.src_buff);
	}
	chain_free(&c, &f);
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq)); /* free again */
	CHECK_OK(doca_ctx_workq_add(f.ctx, f.wq));
	fx_teardown(&f);
}

static void test_instance_life_cycle(void)
{
	struct fx f;
	struct chain c;
	struct doca_graph_instance *gi;
	struct doca_graph *g;
	struct doca_graph_node *n;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &n));
	CHECK_ERR(doca_graph_instance_create(g, &gi), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK_OK(doca_graph_start(g));
	CHECK_ERR(doca_graph_instance_create(NULL, &gi), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_create(g, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_instance_create(g, &gi));
	CHECK_ERR(doca_graph_stop(g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_destroy(g), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_stop(g));
	CHECK_ERR(doca_graph_instance_create(g, &gi), DOCA_ERROR_BAD_STATE); /* stopped */
	CHECK_OK(doca_graph_destroy(g));

	/* A submitted instance cannot be destroyed, changed, or submitted again. */
	CHECK(chain_build(&c, &f) == 0);
	{
		struct doca_dma_job_memcpy j;
		struct probe p = { 0 };
		struct doca_event ev;

		CHECK_OK(doca_graph_instance_create(c.g, &gi));
		dma_job(&j, &f, dst_buf(&f, 0, 16), src_buf(&f, 0, 16), 1);
		CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL));
		CHECK_OK(doca_graph_instance_set_user_node_data(gi, c.user, &p, NULL));
		CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 7 }));
		CHECK_ERR(doca_graph_instance_destroy(gi), DOCA_ERROR_NOT_PERMITTED);
		CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL), DOCA_ERROR_BAD_STATE);
		CHECK_ERR(doca_graph_instance_set_user_node_data(gi, c.user, &p, NULL), DOCA_ERROR_BAD_STATE);
		CHECK_ERR(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 7 }), DOCA_ERROR_IN_USE);
		CHECK_OK(wait_event(f.wq, &ev));
		CHECK_OK(doca_graph_instance_destroy(gi));
		buf_put(j.dst_buff);
		buf_put(j.src_buff);
	}
	chain_free(&c, &f);
	fx_teardown(&f);
}

static void test_set_data_errors(void)
{
	struct fx f;
	struct chain c, c2;
	struct doca_graph_instance *gi, *gi2;
	struct doca_dma_job_memcpy j, bad;
	struct probe p = { 0 };

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&c, &f) == 0);
	CHECK(chain_build(&c2, &f) == 0);
	CHECK_OK(doca_graph_instance_create(c.g, &gi));
	CHECK_OK(doca_graph_instance_create(c2.g, &gi2));
	dma_job(&j, &f, NULL, NULL, 0);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(NULL, c.dma, &j.base, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, NULL, &j.base, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c.dma, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c2.dma, &j.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c.user, &j.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	bad = j;
	bad.base.type = DOCA_DMA_JOB_MEMCPY + 1;
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c.dma, &bad.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	bad = j;
	bad.base.ctx = NULL;
	CHECK_ERR(doca_graph_instance_set_ctx_node_data(gi, c.dma, &bad.base, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL));
	CHECK_ERR(doca_graph_instance_set_user_node_data(NULL, c.user, &p, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_user_node_data(gi, NULL, &p, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_user_node_data(gi, c.dma, &p, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_set_user_node_data(gi, c2.user, &p, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, c.user, NULL, NULL)); /* a NULL cookie is a cookie */
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(gi, c.user, gi2, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(gi, c.user, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(NULL, c.user, gi2, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(gi, NULL, gi2, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_graph_instance_destroy(gi));
	CHECK_OK(doca_graph_instance_destroy(gi2));
	chain_free(&c, &f);
	chain_free(&c2, &f);
	fx_teardown(&f);
}

static void test_submit_errors(void)
{
	struct fx f;
	struct chain c;
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j, plain[2];
	struct doca_workq *small;
	struct probe p = { 0 };
	struct doca_event ev;
	union doca_data ud = { .u64 = 1 };

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&c, &f) == 0);
	CHECK_OK(doca_graph_instance_create(c.g, &gi));
	CHECK_ERR(doca_workq_graph_submit(NULL, gi, ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_graph_submit(f.wq, NULL, ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_graph_submit(f.wq, gi, ud), DOCA_ERROR_INVALID_VALUE); /* no node data */
	dma_job(&j, &f, NULL, src_buf(&f, 0, 16), 1);
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL));
	CHECK_ERR(doca_workq_graph_submit(f.wq, gi, ud), DOCA_ERROR_INVALID_VALUE); /* user node has no data */
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, c.user, &p, NULL));
	/* The root job is refused by the DMA context (no destination): nothing starts. */
	CHECK_ERR(doca_workq_graph_submit(f.wq, gi, ud), DOCA_ERROR_INVALID_VALUE);
	CHECK(queue_idle(f.wq));
	CHECK(p.runs == 0);
	j.dst_buff = dst_buf(&f, 0, 16);
	/* Not added to this work queue. */
	CHECK_OK(doca_workq_create(2, &small));
	CHECK_ERR(doca_workq_graph_submit(small, gi, ud), DOCA_ERROR_BAD_STATE);
	/* Depth: the instance holds one unit per context and user node (2 here). */
	CHECK_OK(doca_ctx_workq_add(f.ctx, small));
	CHECK_OK(doca_graph_workq_add(c.g, small));
	dma_job(&plain[0], &f, dst_buf(&f, 64, 16), src_buf(&f, 64, 16), 100);
	dma_job(&plain[1], &f, dst_buf(&f, 128, 16), src_buf(&f, 128, 16), 101);
	CHECK_OK(doca_workq_submit(small, &plain[0].base));
	CHECK_ERR(doca_workq_graph_submit(small, gi, ud), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(wait_event(small, &ev));
	CHECK_OK(doca_workq_graph_submit(small, gi, ud));
	CHECK_ERR(doca_workq_submit(small, &plain[1].base), DOCA_ERROR_NO_MEMORY); /* the graph holds the depth */
	CHECK_OK(wait_event(small, &ev));
	CHECK(ev.type == DOCA_GRAPH_JOB);
	CHECK_OK(doca_workq_submit(small, &plain[1].base)); /* depth is back */
	CHECK_OK(wait_event(small, &ev));
	CHECK(ev.user_data.u64 == 101);
	buf_put(j.dst_buff);
	buf_put(j.src_buff);
	for (int i = 0; i < 2; i++) {
		buf_put(plain[i].dst_buff);
		buf_put(plain[i].src_buff);
	}
	CHECK_OK(doca_graph_workq_rm(c.g, small));
	CHECK_OK(doca_ctx_workq_rm(f.ctx, small));
	CHECK_OK(doca_workq_destroy(small));
	CHECK_OK(doca_graph_instance_destroy(gi));
	chain_free(&c, &f);
	fx_teardown(&f);
}

/* ---- running ---- */

/*
 * Diamond: copy1 (src -> dst[0]) feeds a user check and copy2 (dst[0] -> dst[LEN]), both feed a
 * final user check. copy2 reads what copy1 wrote, so a wrong order shows in the bytes.
 */
static void test_diamond_order_and_data(void)
{
	struct fx f;
	struct doca_graph *g;
	struct doca_graph_node *c1, *u1, *c2, *u2;
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j1, j2;
	struct doca_event ev1 = { 0 }, ev2 = { 0 }, evu = { 0 }, ev;
	struct probe p1 = { 0 }, p2 = { 0 };
	enum doca_graph_instance_node_state st;
	union doca_data res;
	uint32_t nfailed = 9;

	CHECK(fx_setup(&f, 2 * LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &c1));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &u1));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &c2));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &u2));
	CHECK_OK(doca_graph_add_dependency(g, c1, u1));
	CHECK_OK(doca_graph_add_dependency(g, c1, c2));
	CHECK_OK(doca_graph_add_dependency(g, u1, u2));
	CHECK_OK(doca_graph_add_dependency(g, c2, u2));
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_OK(doca_graph_instance_create(g, &gi));
	dma_job(&j1, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 11);
	dma_job(&j2, &f, dst_buf(&f, LEN, LEN), dst_as_src(&f, 0, LEN), 22);
	p1 = (struct probe){ .want = f.src, .got = f.dst, .len = LEN, .inst = gi, .must_be_done = c1 };
	p2 = (struct probe){ .want = f.src, .got = f.dst + LEN, .len = LEN, .inst = gi, .must_be_done = c2 };
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c1, &j1.base, &ev1));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c2, &j2.base, &ev2));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, u1, &p1, &evu));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, u2, &p2, NULL));
	CHECK_ERR(doca_graph_instance_node_get_result(gi, c1, &res), DOCA_ERROR_BAD_STATE); /* never ran */
	order_next = 0;
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 0xabcdef }));
	CHECK_OK(doca_graph_instance_node_get_state(gi, c1, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED);
	CHECK_OK(doca_graph_instance_node_get_state(gi, u2, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED);
	CHECK_OK(wait_event(f.wq, &ev));
	/* One event for the instance; the nodes completed silently. */
	CHECK(ev.type == DOCA_GRAPH_JOB);
	CHECK(ev.user_data.u64 == 0xabcdef);
	CHECK(ev.result.u64 == DOCA_SUCCESS);
	CHECK(queue_idle(f.wq));
	/* Order and data. */
	CHECK(p1.runs == 1 && p2.runs == 1);
	CHECK(p1.order < p2.order);
	CHECK(p1.parent_done && p1.data_ok);
	CHECK(p2.parent_done && p2.data_ok);
	CHECK(memcmp(f.dst + LEN, f.src, LEN) == 0);
	/* Node events, states and results. */
	CHECK(ev1.type == DOCA_DMA_JOB_MEMCPY && ev1.user_data.u64 == 11 && ev1.result.u64 == DOCA_SUCCESS);
	CHECK(ev2.type == DOCA_DMA_JOB_MEMCPY && ev2.user_data.u64 == 22);
	CHECK(evu.result.u64 == 0xc0ffee); /* the callback's own event */
	CHECK_OK(doca_graph_instance_node_get_state(gi, u2, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	CHECK_OK(doca_graph_instance_node_get_result(gi, u1, &res));
	CHECK(res.u64 == DOCA_SUCCESS);
	CHECK_OK(doca_graph_instance_get_num_failed_nodes(gi, &nfailed));
	CHECK(nfailed == 0);

	/* Resubmitting runs it again. */
	memset(f.dst, 0, 2 * LEN);
	CHECK_OK(doca_buf_reset_data_len(j1.dst_buff));
	CHECK_OK(doca_buf_reset_data_len(j2.dst_buff));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 2 }));
	CHECK_OK(wait_event(f.wq, &ev));
	CHECK(ev.user_data.u64 == 2 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(p1.runs == 2 && p2.runs == 2 && p2.data_ok);

	CHECK_OK(doca_graph_instance_destroy(gi));
	buf_put(j1.dst_buff);
	buf_put(j1.src_buff);
	buf_put(j2.dst_buff);
	buf_put(j2.src_buff);
	graph_end(g, f.wq);
	fx_teardown(&f);
}

/*
 * bad (DMA into read-only memory) -> after_bad (user); good (DMA) -> after_good (user).
 * The instance fails with the DMA error, after_bad never runs, the read-only memory is untouched.
 */
static void test_failure_propagation(void)
{
	struct fx f;
	struct doca_graph *g;
	struct doca_graph_node *bad, *after_bad, *good, *after_good;
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy jb, jg;
	struct doca_mmap *ro;
	struct doca_buf *ro_buf = NULL;
	uint8_t *ro_mem = calloc(1, LEN);
	struct probe pb = { 0 }, pg = { 0 };
	struct doca_event ev;
	enum doca_graph_instance_node_state st;
	const struct doca_graph_node *failed[4];
	uint32_t nfailed = 4;
	union doca_data res;

	CHECK(ro_mem != NULL);
	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	ro = fx_mmap(f.dev, ro_mem, LEN, DOCA_ACCESS_LOCAL_READ_ONLY);
	CHECK(ro != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, ro, ro_mem, LEN, &ro_buf));
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &bad));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &after_bad));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &good));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &after_good));
	CHECK_OK(doca_graph_add_dependency(g, bad, after_bad));
	CHECK_OK(doca_graph_add_dependency(g, good, after_good));
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_OK(doca_graph_instance_create(g, &gi));
	dma_job(&jb, &f, ro_buf, src_buf(&f, 0, LEN), 1);
	dma_job(&jg, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 2);
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, bad, &jb.base, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, good, &jg.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, after_bad, &pb, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, after_good, &pg, NULL));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 5 }));
	CHECK_ERR(wait_event(f.wq, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 5);
	CHECK(ev.result.u64 == DOCA_ERROR_NOT_PERMITTED);
	CHECK(queue_idle(f.wq));
	CHECK(pb.runs == 0);
	for (size_t i = 0; i < LEN; i++)
		CHECK(ro_mem[i] == 0);
	CHECK_OK(doca_graph_instance_node_get_state(gi, bad, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR);
	CHECK_OK(doca_graph_instance_node_get_result(gi, bad, &res));
	CHECK(res.u64 == DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_node_get_state(gi, after_bad, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED);
	/* The independent branch: its DMA ran (both roots start at submit); its user node may or may not have. */
	CHECK_OK(doca_graph_instance_node_get_state(gi, good, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	CHECK(memcmp(f.dst, f.src, LEN) == 0);
	CHECK(pg.runs <= 1);
	CHECK_OK(doca_graph_instance_get_num_failed_nodes(gi, &nfailed));
	CHECK(nfailed == 1);
	nfailed = 4;
	CHECK_OK(doca_graph_instance_get_failed_nodes(gi, failed, &nfailed));
	CHECK(nfailed == 1 && failed[0] == bad);
	nfailed = 0;
	CHECK_OK(doca_graph_instance_get_failed_nodes(gi, failed, &nfailed));
	CHECK(nfailed == 0);

	CHECK_OK(doca_graph_instance_destroy(gi));
	buf_put(jb.dst_buff);
	buf_put(jb.src_buff);
	buf_put(jg.dst_buff);
	buf_put(jg.src_buff);
	graph_end(g, f.wq);
	doca_mmap_destroy(ro);
	free(ro_mem);
	fx_teardown(&f);
}

/* A user callback's error fails the instance; its dependant (a DMA node) never runs. */
static void test_user_node_failure(void)
{
	struct fx f;
	struct doca_graph *g;
	struct doca_graph_node *u, *d;
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j;
	struct probe p = { .ret = DOCA_ERROR_BAD_STATE };
	struct doca_event ev;
	enum doca_graph_instance_node_state st;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &u));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &d));
	CHECK_OK(doca_graph_add_dependency(g, u, d));
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_OK(doca_graph_instance_create(g, &gi));
	dma_job(&j, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 1);
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, u, &p, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, d, &j.base, NULL));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 3 }));
	CHECK_ERR(wait_event(f.wq, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.result.u64 == DOCA_ERROR_BAD_STATE);
	CHECK(p.runs == 1);
	CHECK_OK(doca_graph_instance_node_get_state(gi, d, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED);
	for (size_t i = 0; i < LEN; i++)
		CHECK(f.dst[i] == 0);
	/* Fixed, the same instance succeeds. */
	p.ret = DOCA_SUCCESS;
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 4 }));
	CHECK_OK(wait_event(f.wq, &ev));
	CHECK(ev.result.u64 == DOCA_SUCCESS && memcmp(f.dst, f.src, LEN) == 0);
	CHECK_OK(doca_graph_instance_destroy(gi));
	buf_put(j.dst_buff);
	buf_put(j.src_buff);
	graph_end(g, f.wq);
	fx_teardown(&f);
}

/*
 * top: first (user) -> sub-graph node [sub: copy (DMA) -> check (user)] -> last (user).
 * Then the same with the sub-graph's copy failing.
 */
/* A sync event of this process as a context on f's work queue, with a wait (value > 0) and a set-to-1 job. */
struct ev_fx {
	struct doca_sync_event *se;
	struct doca_ctx *ctx;
	struct doca_sync_event_job_wait wait;
	struct doca_sync_event_job_update_set set;
};

static void ev_fx_setup(struct fx *f, struct ev_fx *e)
{
	memset(e, 0, sizeof(*e));
	CHECK_OK(doca_sync_event_create(&e->se));
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(e->se, f->dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(e->se, f->dev));
	e->ctx = doca_sync_event_as_ctx(e->se);
	CHECK(e->ctx != NULL);
	CHECK_OK(doca_ctx_start(e->ctx));
	CHECK_OK(doca_ctx_workq_add(e->ctx, f->wq));
	e->wait = (struct doca_sync_event_job_wait){ .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = e->ctx },
						     .value = 0,
						     .mask = UINT64_MAX };
	e->set = (struct doca_sync_event_job_update_set){
		.base = { .type = DOCA_SYNC_EVENT_JOB_UPDATE_SET, .ctx = e->ctx }, .value = 1
	};
}

static void ev_fx_teardown(struct fx *f, struct ev_fx *e)
{
	CHECK_OK(doca_ctx_workq_rm(e->ctx, f->wq));
	CHECK_OK(doca_ctx_stop(e->ctx));
	CHECK_OK(doca_sync_event_destroy(e->se));
}

/*
 * A node whose job cannot complete yet must not hold back the nodes that do not depend on it.
 * c1 -> w (wait for the event to exceed 0) -> u2, and c1 -> u1 -> s (set the event to 1) -> u2:
 * w waits for s, which comes after w in any topological order, so the graph completes only if
 * the waiting node leaves the others free to run. Run twice: the second run starts from the
 * counts the first one left.
 */
static void waiting_graph_run(struct fx *f, struct doca_graph_instance *gi, struct doca_graph_node *const nodes[5],
			      struct probe *p1, struct probe *p2, struct doca_sync_event *se)
{
	enum doca_graph_instance_node_state st;
	struct doca_event ev;
	int polls = 0;
	doca_error_t r;

	CHECK_OK(doca_sync_event_update_set(se, 0));
	memset(f->dst, 0, LEN);
	*p1 = (struct probe){ .want = f->src, .got = f->dst, .len = LEN, .inst = gi, .must_be_done = nodes[0] };
	*p2 = (struct probe){ .inst = gi, .must_be_done = nodes[1] };
	CHECK_OK(doca_workq_graph_submit(f->wq, gi, (union doca_data){ .u64 = 31 }));
	/* First progress: c1 ran, w waits, u1 and s ran meanwhile; the wait completes on a later call. */
	r = doca_workq_progress_retrieve(f->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
	CHECK_ERR(r, DOCA_ERROR_AGAIN);
	CHECK_OK(doca_graph_instance_node_get_state(gi, nodes[1], &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED);
	CHECK_OK(doca_graph_instance_node_get_state(gi, nodes[3], &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	CHECK(p1->runs == 1 && p1->data_ok && p1->parent_done && p2->runs == 0);
	while ((r = doca_workq_progress_retrieve(f->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN &&
	       polls < 1000000)
		polls++;
	CHECK_OK(r);
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 31 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(p2->runs == 1 && p2->parent_done && p1->order < p2->order);
	CHECK(queue_idle(f->wq));
	for (int i = 0; i < 5; i++) {
		CHECK_OK(doca_graph_instance_node_get_state(gi, nodes[i], &st));
		CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	}
}

static void test_waiting_node(void)
{
	struct fx f;
	struct ev_fx e;
	struct doca_graph *g;
	struct doca_graph_node *nodes[5]; /* c1, w, u1, s, u2 */
	struct doca_graph_instance *gi;
	struct doca_dma_job_memcpy j;
	struct probe p1, p2;

	CHECK(fx_setup(&f, LEN, 16, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	ev_fx_setup(&f, &e);

	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_DMA_JOB_MEMCPY, f.ctx, &nodes[0]));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_SYNC_EVENT_JOB_WAIT_GT, e.ctx, &nodes[1]));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &nodes[2]));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_SYNC_EVENT_JOB_UPDATE_SET, e.ctx, &nodes[3]));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &nodes[4]));
	CHECK_OK(doca_graph_add_dependency(g, nodes[0], nodes[1]));
	CHECK_OK(doca_graph_add_dependency(g, nodes[0], nodes[2]));
	CHECK_OK(doca_graph_add_dependency(g, nodes[2], nodes[3]));
	CHECK_OK(doca_graph_add_dependency(g, nodes[1], nodes[4]));
	CHECK_OK(doca_graph_add_dependency(g, nodes[3], nodes[4]));
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_OK(doca_graph_instance_create(g, &gi));
	dma_job(&j, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 1);
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, nodes[0], &j.base, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, nodes[1], &e.wait.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, nodes[2], &p1, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, nodes[3], &e.set.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, nodes[4], &p2, NULL));
	for (int run = 0; run < 2; run++) {
		waiting_graph_run(&f, gi, nodes, &p1, &p2, e.se);
		doca_buf_reset_data_len(j.dst_buff);
	}
	CHECK_OK(doca_graph_instance_destroy(gi));
	buf_put(j.dst_buff);
	buf_put(j.src_buff);
	graph_end(g, f.wq);
	ev_fx_teardown(&f, &e);
	fx_teardown(&f);
}

/*
 * A failure while a node waits: w (wait) -> uw, and s (set the event) -> uf (fails). w hands the run
 * over, s and uf run meanwhile and uf fails the instance; once w completes, uw must not start.
 */
static void test_waiting_node_failure(void)
{
	struct fx f;
	struct ev_fx e;
	struct doca_graph *g;
	struct doca_graph_node *w, *uw, *s, *uf;
	struct doca_graph_instance *gi;
	struct probe pw = { 0 }, pf = { .ret = DOCA_ERROR_BAD_STATE };
	enum doca_graph_instance_node_state st;
	struct doca_event ev;
	uint32_t nfailed = 0;

	CHECK(fx_setup(&f, LEN, 16, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	ev_fx_setup(&f, &e);

	CHECK_OK(doca_graph_create(&g));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_SYNC_EVENT_JOB_WAIT_GT, e.ctx, &w));
	CHECK_OK(doca_graph_ctx_node_create(g, DOCA_SYNC_EVENT_JOB_UPDATE_SET, e.ctx, &s));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &uw));
	CHECK_OK(doca_graph_user_node_create(g, probe_cb, &uf));
	CHECK_OK(doca_graph_add_dependency(g, w, uw));
	CHECK_OK(doca_graph_add_dependency(g, s, uf));
	CHECK_OK(doca_graph_start(g));
	CHECK_OK(doca_graph_workq_add(g, f.wq));
	CHECK_OK(doca_graph_instance_create(g, &gi));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, w, &e.wait.base, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, s, &e.set.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, uw, &pw, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(gi, uf, &pf, NULL));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 41 }));
	CHECK_ERR(wait_event(f.wq, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 41 && ev.result.u64 == DOCA_ERROR_BAD_STATE);
	CHECK(queue_idle(f.wq));
	CHECK(pf.runs == 1 && pw.runs == 0);
	CHECK_OK(doca_graph_instance_node_get_state(gi, w, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);
	CHECK_OK(doca_graph_instance_node_get_state(gi, uf, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR);
	CHECK_OK(doca_graph_instance_node_get_state(gi, uw, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED);
	CHECK_OK(doca_graph_instance_get_num_failed_nodes(gi, &nfailed));
	CHECK(nfailed == 1);
	/* The counts the failed run left are re-armed: fixed, the same instance runs every node. */
	pf.ret = DOCA_SUCCESS;
	CHECK_OK(doca_sync_event_update_set(e.se, 0));
	CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = 42 }));
	CHECK_OK(wait_event(f.wq, &ev));
	CHECK(ev.result.u64 == DOCA_SUCCESS && pw.runs == 1 && pf.runs == 2);
	CHECK_OK(doca_graph_instance_destroy(gi));
	graph_end(g, f.wq);
	ev_fx_teardown(&f, &e);
	fx_teardown(&f);
}

/*
 * A wait inside a sub-graph: the parent runs the signaller in parallel. sub = { w (wait) -> uw };
 * top = { s (set), sn (sub) -> last }. The sub-instance waits on the work queue while s runs.
 */
static void test_waiting_node_in_sub_graph(void)
{
	struct fx f;
	struct ev_fx e;
	struct doca_graph *sub, *top;
	struct doca_graph_node *w, *uw, *sn, *last, *s;
	struct doca_graph_instance *si, *ti;
	struct probe pw = { 0 }, pl = { 0 };
	struct doca_event ev;

	CHECK(fx_setup(&f, LEN, 16, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	ev_fx_setup(&f, &e);

	CHECK_OK(doca_graph_create(&sub));
	CHECK_OK(doca_graph_ctx_node_create(sub, DOCA_SYNC_EVENT_JOB_WAIT_GT, e.ctx, &w));
	CHECK_OK(doca_graph_user_node_create(sub, probe_cb, &uw));
	CHECK_OK(doca_graph_add_dependency(sub, w, uw));
	CHECK_OK(doca_graph_start(sub));
	CHECK_OK(doca_graph_create(&top));
	/* s first: the sub-graph's wait, started after it, is tried before it. */
	CHECK_OK(doca_graph_ctx_node_create(top, DOCA_SYNC_EVENT_JOB_UPDATE_SET, e.ctx, &s));
	CHECK_OK(doca_graph_sub_graph_node_create(top, sub, &sn));
	CHECK_OK(doca_graph_user_node_create(top, probe_cb, &last));
	CHECK_OK(doca_graph_add_dependency(top, sn, last));
	CHECK_OK(doca_graph_start(top));
	CHECK_OK(doca_graph_workq_add(top, f.wq));
	CHECK_OK(doca_graph_instance_create(sub, &si));
	CHECK_OK(doca_graph_instance_create(top, &ti));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(si, w, &e.wait.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(si, uw, &pw, NULL));
	CHECK_OK(doca_graph_instance_set_sub_graph_node_data(ti, sn, si, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(ti, last, &pl, NULL));
	CHECK_OK(doca_graph_instance_set_ctx_node_data(ti, s, &e.set.base, NULL));
	for (uint64_t run = 1; run <= 2; run++) {
		order_next = 0;
		pw = (struct probe){ .inst = si, .must_be_done = w };
		pl = (struct probe){ .inst = ti, .must_be_done = sn };
		CHECK_OK(doca_sync_event_update_set(e.se, 0));
		CHECK_OK(doca_workq_graph_submit(f.wq, ti, (union doca_data){ .u64 = run }));
		/* The wait found the event at 0 and went back to the work queue; s then set it. */
		CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
		CHECK(pw.runs == 0);
		CHECK_OK(wait_event(f.wq, &ev));
		CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == run && ev.result.u64 == DOCA_SUCCESS);
		CHECK(queue_idle(f.wq));
		CHECK(pw.runs == 1 && pw.parent_done && pl.runs == 1 && pl.parent_done && pw.order < pl.order);
	}
	CHECK_OK(doca_graph_instance_destroy(ti));
	CHECK_OK(doca_graph_instance_destroy(si));
	graph_end(top, f.wq);
	CHECK_OK(doca_graph_stop(sub));
	CHECK_OK(doca_graph_destroy(sub));
	ev_fx_teardown(&f, &e);
	fx_teardown(&f);
}

static void test_sub_graph_nodes(void)
{
	struct fx f;
	struct chain sub;
	struct doca_graph *top;
	struct doca_graph_node *first, *sn, *last;
	struct doca_graph_instance *ti, *si, *other;
	struct doca_dma_job_memcpy j;
	struct probe pf = { 0 }, ps = { 0 }, pl = { 0 };
	struct doca_event ev, sev = { 0 };
	enum doca_graph_instance_node_state st;
	union doca_data res;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&sub, &f) == 0);
	CHECK_OK(doca_graph_create(&top));
	CHECK_OK(doca_graph_user_node_create(top, probe_cb, &first));
	CHECK_OK(doca_graph_sub_graph_node_create(top, sub.g, &sn));
	CHECK_OK(doca_graph_user_node_create(top, probe_cb, &last));
	CHECK_OK(doca_graph_add_dependency(top, first, sn));
	CHECK_OK(doca_graph_add_dependency(top, sn, last));
	CHECK_OK(doca_graph_start(top));
	CHECK_OK(doca_graph_workq_add(top, f.wq));
	CHECK_OK(doca_graph_instance_create(top, &ti));
	CHECK_OK(doca_graph_instance_create(sub.g, &si));
	CHECK_OK(doca_graph_instance_create(sub.g, &other));
	dma_job(&j, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 1);
	ps = (struct probe){ .want = f.src, .got = f.dst, .len = LEN };
	pl = (struct probe){ .want = f.src, .got = f.dst, .len = LEN };
	CHECK_OK(doca_graph_instance_set_ctx_node_data(si, sub.dma, &j.base, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(si, sub.user, &ps, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(ti, first, &pf, NULL));
	CHECK_OK(doca_graph_instance_set_user_node_data(ti, last, &pl, NULL));
	CHECK_ERR(doca_graph_instance_set_sub_graph_node_data(ti, sn, ti, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_set_sub_graph_node_data(ti, sn, other, NULL));
	CHECK_OK(doca_graph_instance_set_sub_graph_node_data(ti, sn, si, &sev)); /* replaces other */
	CHECK_OK(doca_graph_instance_destroy(other));
	CHECK_ERR(doca_graph_instance_destroy(si), DOCA_ERROR_NOT_PERMITTED); /* it is ti's node data */
	order_next = 0;
	CHECK_OK(doca_workq_graph_submit(f.wq, ti, (union doca_data){ .u64 = 77 }));
	CHECK_ERR(doca_workq_graph_submit(f.wq, si, (union doca_data){ .u64 = 1 }), DOCA_ERROR_IN_USE);
	CHECK_OK(wait_event(f.wq, &ev));
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 77 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(queue_idle(f.wq));
	CHECK(pf.order == 0 && ps.order == 1 && pl.order == 2);
	CHECK(ps.data_ok && pl.data_ok);
	CHECK(sev.type == DOCA_GRAPH_JOB && sev.result.u64 == DOCA_SUCCESS);
	CHECK_OK(doca_graph_instance_node_get_state(ti, sn, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED);

	/* The sub-graph instance fails: so do its node and the top instance; last never runs. */
	ps.ret = DOCA_ERROR_DRIVER;
	CHECK_OK(doca_buf_reset_data_len(j.dst_buff));
	CHECK_OK(doca_workq_graph_submit(f.wq, ti, (union doca_data){ .u64 = 78 }));
	CHECK_ERR(wait_event(f.wq, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == 78 && ev.result.u64 == DOCA_ERROR_DRIVER);
	CHECK(pl.runs == 1);
	CHECK_OK(doca_graph_instance_node_get_state(ti, sn, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR);
	CHECK_OK(doca_graph_instance_node_get_result(ti, sn, &res));
	CHECK(res.u64 == DOCA_ERROR_DRIVER);
	CHECK(sev.result.u64 == DOCA_ERROR_DRIVER);

	/* Standalone, the sub-graph instance runs on its own graph. */
	ps.ret = DOCA_SUCCESS;
	CHECK_OK(doca_buf_reset_data_len(j.dst_buff));
	CHECK_OK(doca_workq_graph_submit(f.wq, si, (union doca_data){ .u64 = 79 }));
	CHECK_OK(wait_event(f.wq, &ev));
	CHECK(ev.user_data.u64 == 79 && ev.result.u64 == DOCA_SUCCESS);

	CHECK_OK(doca_graph_instance_destroy(ti));
	CHECK_OK(doca_graph_instance_destroy(si)); /* free once its owner is gone */
	buf_put(j.dst_buff);
	buf_put(j.src_buff);
	CHECK_OK(doca_graph_workq_rm(top, f.wq));
	CHECK_OK(doca_graph_stop(top));
	CHECK_OK(doca_graph_destroy(top));
	chain_free(&sub, &f);
	fx_teardown(&f);
}

#define NINST 8

/* 8 instances in flight, mixed with plain DMA jobs on the same work queue. */
static void test_many_in_flight_mixed(void)
{
	struct fx f;
	struct chain c;
	struct doca_graph_instance *gi[NINST];
	struct doca_dma_job_memcpy gj[NINST], pj[NINST];
	struct probe p[NINST];
	struct doca_event ev;
	uint32_t graph_seen = 0, plain_seen = 0;
	const size_t seg = 32;

	CHECK(fx_setup(&f, 2 * NINST * seg, 4 * NINST, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&c, &f) == 0);
	for (int i = 0; i < NINST; i++) {
		size_t off = (size_t)i * seg, poff = (size_t)(NINST + i) * seg;

		CHECK_OK(doca_graph_instance_create(c.g, &gi[i]));
		dma_job(&gj[i], &f, dst_buf(&f, off, seg), src_buf(&f, off, seg), 1000 + i);
		dma_job(&pj[i], &f, dst_buf(&f, poff, seg), src_buf(&f, poff, seg), 2000 + i);
		p[i] = (struct probe){ .want = f.src + off, .got = f.dst + off, .len = seg };
		CHECK_OK(doca_graph_instance_set_ctx_node_data(gi[i], c.dma, &gj[i].base, NULL));
		CHECK_OK(doca_graph_instance_set_user_node_data(gi[i], c.user, &p[i], NULL));
	}
	for (int i = 0; i < NINST; i++) {
		CHECK_OK(doca_workq_graph_submit(f.wq, gi[i], (union doca_data){ .u64 = (uint64_t)i }));
		CHECK_OK(doca_workq_submit(f.wq, &pj[i].base));
	}
	for (int n = 0; n < 2 * NINST; n++) {
		CHECK_OK(wait_event(f.wq, &ev));
		if (ev.type == DOCA_GRAPH_JOB) {
			CHECK(ev.user_data.u64 < NINST && ev.result.u64 == DOCA_SUCCESS);
			CHECK(!(graph_seen & (1u << ev.user_data.u64)));
			graph_seen |= 1u << ev.user_data.u64;
		} else {
			CHECK(ev.type == DOCA_DMA_JOB_MEMCPY);
			CHECK(ev.user_data.u64 >= 2000 && ev.user_data.u64 < 2000 + NINST);
			CHECK(!(plain_seen & (1u << (ev.user_data.u64 - 2000))));
			plain_seen |= 1u << (ev.user_data.u64 - 2000);
		}
	}
	CHECK(graph_seen == (1u << NINST) - 1 && plain_seen == (1u << NINST) - 1);
	CHECK(queue_idle(f.wq));
	for (int i = 0; i < NINST; i++)
		CHECK(p[i].runs == 1 && p[i].data_ok);
	CHECK(memcmp(f.dst, f.src, 2 * NINST * seg) == 0);
	for (int i = 0; i < NINST; i++) {
		CHECK_OK(doca_graph_instance_destroy(gi[i]));
		buf_put(gj[i].dst_buff);
		buf_put(gj[i].src_buff);
		buf_put(pj[i].dst_buff);
		buf_put(pj[i].src_buff);
	}
	chain_free(&c, &f);
	fx_teardown(&f);
}

/* Create, submit, complete and destroy an instance many times (ASan checks the leaks). */
static void test_thousands_of_instances(void)
{
	struct fx f;
	struct chain c;
	struct doca_dma_job_memcpy j;
	struct doca_event ev;
	struct probe p;

	CHECK(fx_setup(&f, LEN, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&c, &f) == 0);
	dma_job(&j, &f, dst_buf(&f, 0, LEN), src_buf(&f, 0, LEN), 1);
	for (int i = 0; i < 5000; i++) {
		struct doca_graph_instance *gi;

		memset(f.dst, 0, LEN);
		CHECK_OK(doca_buf_reset_data_len(j.dst_buff));
		p = (struct probe){ .want = f.src, .got = f.dst, .len = LEN };
		CHECK_OK(doca_graph_instance_create(c.g, &gi));
		CHECK_OK(doca_graph_instance_set_ctx_node_data(gi, c.dma, &j.base, NULL));
		CHECK_OK(doca_graph_instance_set_user_node_data(gi, c.user, &p, NULL));
		CHECK_OK(doca_workq_graph_submit(f.wq, gi, (union doca_data){ .u64 = (uint64_t)i }));
		CHECK_OK(wait_event(f.wq, &ev));
		CHECK(ev.type == DOCA_GRAPH_JOB && ev.user_data.u64 == (uint64_t)i);
		CHECK(p.runs == 1 && p.data_ok);
		CHECK_OK(doca_graph_instance_destroy(gi));
	}
	buf_put(j.dst_buff);
	buf_put(j.src_buff);
	chain_free(&c, &f);
	fx_teardown(&f);
}

static void test_status_getter_errors(void)
{
	struct fx f;
	struct chain c, c2;
	struct doca_graph_instance *gi;
	enum doca_graph_instance_node_state st;
	union doca_data res;
	const struct doca_graph_node *failed[1];
	uint32_t n = 1;

	CHECK(fx_setup(&f, LEN, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK(chain_build(&c, &f) == 0);
	CHECK(chain_build(&c2, &f) == 0);
	CHECK_OK(doca_graph_instance_create(c.g, &gi));
	CHECK_ERR(doca_graph_instance_get_num_failed_nodes(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_num_failed_nodes(gi, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_failed_nodes(NULL, failed, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_failed_nodes(gi, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_get_failed_nodes(gi, failed, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_state(NULL, c.dma, &st), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_state(gi, NULL, &st), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_state(gi, c.dma, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_state(gi, c2.dma, &st), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_graph_instance_node_get_state(gi, c.dma, &st));
	CHECK(st == DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED);
	CHECK_ERR(doca_graph_instance_node_get_result(NULL, c.dma, &res), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, NULL, &res), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, c.dma, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, c2.dma, &res), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_graph_instance_node_get_result(gi, c.dma, &res), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_graph_instance_get_failed_nodes(gi, failed, &n));
	CHECK(n == 0);
	CHECK_OK(doca_graph_instance_destroy(gi));
	chain_free(&c, &f);
	chain_free(&c2, &f);
	fx_teardown(&f);
}

int main(void)
{
	RUN(test_create_destroy);
	RUN(test_node_create_errors);
	RUN(test_cycles_refused);
	RUN(test_sub_graph_cycles_refused);
	RUN(test_start_needs_ctx_node);
	RUN(test_start_needs_started_contexts);
	RUN(test_workq_add_rm);
	RUN(test_instance_life_cycle);
	RUN(test_set_data_errors);
	RUN(test_submit_errors);
	RUN(test_diamond_order_and_data);
	RUN(test_failure_propagation);
	RUN(test_user_node_failure);
	RUN(test_waiting_node);
	RUN(test_waiting_node_failure);
	RUN(test_waiting_node_in_sub_graph);
	RUN(test_sub_graph_nodes);
	RUN(test_many_in_flight_mixed);
	RUN(test_thousands_of_instances);
	RUN(test_status_getter_errors);
	return th_summary("test_graph");
}
