/*
 * bench_rdma_doca — DOCA RDMA job rates and bandwidth between two processes
 * of this machine, to set beside perftest's ib_write_bw / ib_read_bw /
 * ib_send_bw on the same engine (bench/rdma_doca.sh runs both).
 *
 * This process is the requester; it starts itself again as the responder
 * (fork + exec, descriptors as hex lines over pipes), connects, and keeps
 * `depth` jobs in flight on one polled work queue: submit until the queue is
 * full, then retrieve one (its result through event.result.ptr) and submit
 * the next. WRITE and READ name the responder's exported memory; for SEND
 * the responder keeps `depth` receives posted and reposts each one it
 * retrieves. The timed loop is the requester's from its first submit to its
 * last completion. The jobs in flight name `slots` buffers of `size` bytes
 * each side (default 1: every job the same memory, as perftest's do).
 *
 * --local runs the responder on a thread of this process instead (WRITE and
 * READ only: what callgrind can follow, as a re-executed process it cannot).
 *
 * For SEND the responder keeps rx-depth receives posted (default 512, as
 * perftest's ib_send_bw server does), reposting each one it retrieves.
 *
 * Usage: bench_rdma_doca [--op write|read|send] [--size BYTES] [--iters N] [--depth N] [--rx-depth N] [--slots N]
 *                        [--local]
 * Prints: doca_rdma <op> <size> <iters> <MB/s> <M jobs/s>
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

#include "bench_stats.h"

#define MAX_DEPTH 256u
#define MAX_RX 1024u
#define DEF_RX 512u /* perftest's receives posted for ib_send_bw (its DEF_RX_SEND) */
#define RW (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE)

struct side {
	struct doca_dev *dev;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_mmap *mmap, *remote;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t len;
};

struct cfg {
	int op; /* DOCA_RDMA_JOB_WRITE, _READ or _SEND */
	size_t size;
	uint64_t iters;
	uint32_t depth;
	uint32_t rx_depth; /* SEND: receives the responder keeps posted */
	uint32_t slots;
};

static int fail(const char *what, doca_error_t e)
{
	fprintf(stderr, "bench_rdma_doca: %s: %s\n", what, doca_get_error_string(e));
	return 1;
}

/* A side whose context holds sq send and rq receive jobs, on a work queue of as many entries as it has in flight. */
static doca_error_t side_open(struct side *s, size_t len, uint32_t sq, uint32_t rq)
{
	struct doca_devinfo **list;
	uint32_t n;
	doca_error_t e;

	memset(s, 0, sizeof(*s));
	s->len = len;
	s->mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (s->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memset(s->mem, 0x5a, len);
	e = doca_devinfo_list_create(&list, &n);
	if (e != DOCA_SUCCESS)
		return e;
	e = n == 0 ? DOCA_ERROR_NOT_FOUND : doca_dev_open(list[0], &s->dev);
	doca_devinfo_list_destroy(list);
	if (e == DOCA_SUCCESS)
		e = doca_mmap_create(NULL, &s->mmap);
	if (e == DOCA_SUCCESS)
		e = doca_mmap_dev_add(s->mmap, s->dev);
	if (e == DOCA_SUCCESS)
		e = doca_mmap_set_memrange(s->mmap, s->mem, len);
	if (e == DOCA_SUCCESS)
		e = doca_mmap_set_permissions(s->mmap, RW);
	if (e == DOCA_SUCCESS)
		e = doca_mmap_start(s->mmap);
	if (e == DOCA_SUCCESS)
		e = doca_buf_inventory_create(NULL, MAX_DEPTH + MAX_RX + 8, 0, &s->inv);
	if (e == DOCA_SUCCESS)
		e = doca_buf_inventory_start(s->inv);
	if (e == DOCA_SUCCESS)
		e = doca_rdma_create(&s->rdma);
	if (e != DOCA_SUCCESS)
		return e;
	s->ctx = doca_rdma_as_ctx(s->rdma);
	e = doca_ctx_dev_add(s->ctx, s->dev);
	if (e == DOCA_SUCCESS)
		e = doca_rdma_set_permissions(s->rdma, RW);
	if (e == DOCA_SUCCESS)
		e = doca_rdma_set_send_queue_size(s->rdma, sq);
	if (e == DOCA_SUCCESS)
		e = doca_rdma_set_recv_queue_size(s->rdma, rq);
	if (e == DOCA_SUCCESS)
		e = doca_ctx_start(s->ctx);
	if (e == DOCA_SUCCESS)
		e = doca_workq_create(sq > rq ? sq : rq, &s->wq); /* the jobs in flight, as perftest sizes its CQs */
	if (e == DOCA_SUCCESS)
		e = doca_ctx_workq_add(s->ctx, s->wq);
	return e;
}

static void hex_out(FILE *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", ((const uint8_t *)p)[i]);
	fprintf(f, "\n");
	fflush(f);
}

static long hex_in(FILE *f, uint8_t *out, size_t max)
{
	char line[2048];
	size_t n;
	unsigned int b;

	if (fgets(line, sizeof(line), f) == NULL)
		return -1;
	n = strcspn(line, "\r\n") / 2;
	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (sscanf(line + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return (long)n;
}

static doca_error_t retrieve(struct side *s, struct doca_event *ev)
{
	struct doca_rdma_result res;
	doca_error_t e;

	do {
		ev->result.ptr = &res;
		e = doca_workq_progress_retrieve(s->wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
	} while (e == DOCA_ERROR_AGAIN);
	return e == DOCA_SUCCESS ? res.result : e;
}

/* The responder: exports, connects, and for SEND keeps receives posted until iters arrived. */
static int responder(const struct cfg *c, FILE *in, FILE *out)
{
	struct side s;
	struct doca_buf *rb[MAX_RX];
	struct doca_rdma_job_recv jr = { .base = { .type = DOCA_RDMA_JOB_RECV } };
	struct doca_event ev;
	uint8_t peer[256];
	const void *d, *md;
	size_t l, ml;
	long pl;
	/* Never more receives than messages: none is left posted at the end. */
	uint32_t rx = c->iters < c->rx_depth ? (uint32_t)c->iters : c->rx_depth;
	doca_error_t e = side_open(&s, c->size * c->slots, c->depth, c->op == DOCA_RDMA_JOB_SEND ? rx : c->depth);

	if (e != DOCA_SUCCESS)
		return fail("responder setup", e);
	if ((e = doca_rdma_export(s.rdma, &d, &l)) != DOCA_SUCCESS ||
	    (e = doca_mmap_export_rdma(s.mmap, s.dev, &md, &ml)) != DOCA_SUCCESS)
		return fail("responder export", e);
	hex_out(out, d, l);
	hex_out(out, md, ml);
	pl = hex_in(in, peer, sizeof(peer));
	if (pl < 0 || (e = doca_rdma_connect(s.rdma, peer, (size_t)pl)) != DOCA_SUCCESS)
		return fail("responder connect", pl < 0 ? DOCA_ERROR_INVALID_VALUE : e);
	jr.base.ctx = s.ctx;
	for (uint32_t i = 0; c->op == DOCA_RDMA_JOB_SEND && i < rx; i++) {
		e = doca_buf_inventory_buf_by_addr(s.inv, s.mmap, s.mem + (i % c->slots) * c->size, c->size, &rb[i]);
		jr.dst_buff = rb[i];
		jr.base.user_data.u64 = i;
		if (e != DOCA_SUCCESS || (e = doca_workq_submit(s.wq, &jr.base)) != DOCA_SUCCESS)
			return fail("responder receive", e);
	}
	fprintf(out, "ready\n");
	fflush(out);
	for (uint64_t got = 0; c->op == DOCA_RDMA_JOB_SEND && got < c->iters; got++) {
		if ((e = retrieve(&s, &ev)) != DOCA_SUCCESS)
			return fail("responder retrieve", e);
		if (got + rx < c->iters) {
			jr.dst_buff = rb[ev.user_data.u64];
			jr.base.user_data = ev.user_data;
			doca_buf_reset_data_len(jr.dst_buff);
			if ((e = doca_workq_submit(s.wq, &jr.base)) != DOCA_SUCCESS)
				return fail("responder repost", e);
		}
	}
	/* Held until the requester is done with our memory. */
	if (fgets((char *)peer, sizeof(peer), in) == NULL)
		return 0;
	return 0;
}

/* One job of the requester's loop, for slot i. */
static doca_error_t submit(struct side *s, const struct cfg *c, struct doca_buf *loc, struct doca_buf *rem, uint64_t i)
{
	struct doca_rdma_job_read_write rw = { .base = { .type = c->op, .ctx = s->ctx, .user_data.u64 = i } };
	struct doca_rdma_job_send sd = { .base = { .type = c->op, .ctx = s->ctx, .user_data.u64 = i } };

	if (c->op == DOCA_RDMA_JOB_SEND) {
		sd.src_buff = loc;
		return doca_workq_submit(s->wq, &sd.base);
	}
	if (c->op == DOCA_RDMA_JOB_WRITE) {
		rw.src_buff = loc;
		rw.dst_buff = rem;
	} else {
		/* No reset between READs: one lands at the start of the destination's data (doca_rdma.h). */
		rw.src_buff = rem;
		rw.dst_buff = loc;
	}
	return doca_workq_submit(s->wq, &rw.base);
}

static int requester(const struct cfg *c, FILE *to, FILE *from)
{
	struct side s;
	struct doca_buf *loc[MAX_DEPTH], *rem[MAX_DEPTH];
	uint8_t peer[256], mdesc[1024];
	char line[64];
	const void *d;
	size_t l;
	long pl, ml;
	struct doca_event ev;
	void *rbase;
	size_t rlen;
	uint64_t t0, t1, posted = 0;
	doca_error_t e = side_open(&s, c->size * c->slots, c->depth, c->depth);

	if (e != DOCA_SUCCESS)
		return fail("requester setup", e);
	pl = hex_in(from, peer, sizeof(peer));
	ml = hex_in(from, mdesc, sizeof(mdesc));
	if (pl < 0 || ml < 0)
		return fail("responder's descriptors", DOCA_ERROR_INVALID_VALUE);
	if ((e = doca_rdma_connect(s.rdma, peer, (size_t)pl)) != DOCA_SUCCESS ||
	    (e = doca_rdma_export(s.rdma, &d, &l)) != DOCA_SUCCESS)
		return fail("requester connect", e);
	for (size_t i = 0; i < l; i++)
		fprintf(to, "%02x", ((const uint8_t *)d)[i]);
	fprintf(to, "\n");
	fflush(to);
	if ((e = doca_mmap_create_from_export(NULL, mdesc, (size_t)ml, s.dev, &s.remote)) != DOCA_SUCCESS ||
	    (e = doca_mmap_get_memrange(s.remote, &rbase, &rlen)) != DOCA_SUCCESS)
		return fail("import", e);
	for (uint32_t i = 0; i < c->depth; i++) {
		uint8_t *r = (uint8_t *)rbase + (i % c->slots) * c->size;

		if ((e = doca_buf_inventory_buf_by_data(s.inv, s.mmap, s.mem + (i % c->slots) * c->size, c->size,
							&loc[i])) !=
			    DOCA_SUCCESS ||
		    (e = doca_buf_inventory_buf_by_data(s.inv, s.remote, r, c->size, &rem[i])) != DOCA_SUCCESS)
			return fail("buffers", e);
		if (c->op == DOCA_RDMA_JOB_WRITE)
			doca_buf_reset_data_len(rem[i]); /* written after its (empty) data */
	}
	if (fgets(line, sizeof(line), from) == NULL || strncmp(line, "ready", 5) != 0)
		return fail("responder not ready", DOCA_ERROR_NOT_CONNECTED);
	t0 = now_ns();
	for (; posted < c->depth && posted < c->iters; posted++)
		if ((e = submit(&s, c, loc[posted], rem[posted], posted)) != DOCA_SUCCESS)
			return fail("submit", e);
	for (uint64_t done = 0; done < c->iters; done++) {
		uint64_t slot;

		if ((e = retrieve(&s, &ev)) != DOCA_SUCCESS)
			return fail("job", e);
		slot = ev.user_data.u64 % c->depth;
		if (posted < c->iters && (e = submit(&s, c, loc[slot], rem[slot], posted++)) != DOCA_SUCCESS)
			return fail("submit", e);
	}
	t1 = now_ns();
	printf("doca_rdma %s %zu %llu %.1f %.3f\n",
	       c->op == DOCA_RDMA_JOB_WRITE ? "write" : c->op == DOCA_RDMA_JOB_READ ? "read" : "send", c->size,
	       (unsigned long long)c->iters, (double)c->size * (double)c->iters / (double)(t1 - t0) * 1e3,
	       (double)c->iters / (double)(t1 - t0) * 1e3);
	fprintf(to, "bye\n");
	fflush(to);
	return 0;
}

struct local_arg {
	const struct cfg *c;
	FILE *in, *out;
	int rc;
};

static void *local_responder(void *p)
{
	struct local_arg *a = p;

	a->rc = responder(a->c, a->in, a->out);
	fclose(a->out);
	return NULL;
}

/* Both sides in this process, the responder on a thread: what callgrind can follow (WRITE and READ). */
static int run_local(const struct cfg *c)
{
	int to[2], from[2], rc;
	struct local_arg a = { .c = c };
	pthread_t t;
	FILE *tf, *ff;

	if (pipe(to) != 0 || pipe(from) != 0)
		return 1;
	a.in = fdopen(to[0], "r");
	a.out = fdopen(from[1], "w");
	tf = fdopen(to[1], "w");
	ff = fdopen(from[0], "r");
	if (a.in == NULL || a.out == NULL || tf == NULL || ff == NULL ||
	    pthread_create(&t, NULL, local_responder, &a) != 0)
		return 1;
	rc = requester(c, tf, ff);
	fclose(tf);
	pthread_join(t, NULL);
	fclose(a.in);
	fclose(ff);
	return rc != 0 ? rc : a.rc;
}

static int parse(int argc, char **argv, struct cfg *c, bool *role, bool *local)
{
	*c = (struct cfg){ .op = DOCA_RDMA_JOB_WRITE, .size = 64, .iters = 1000000, .depth = 64, .rx_depth = DEF_RX, .slots = 1 };
	*role = false;
	*local = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "responder") == 0)
			*role = true;
		else if (strcmp(argv[i], "--local") == 0)
			*local = true;
		else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
			c->op = strcmp(argv[++i], "read") == 0	 ? DOCA_RDMA_JOB_READ
				: strcmp(argv[i], "send") == 0 ? DOCA_RDMA_JOB_SEND
								 : DOCA_RDMA_JOB_WRITE;
		else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
			c->size = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			c->iters = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
			c->depth = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--rx-depth") == 0 && i + 1 < argc)
			c->rx_depth = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc)
			c->slots = (uint32_t)strtoul(argv[++i], NULL, 0);
		else
			return -1;
	}
	return c->size == 0 || c->iters == 0 || c->depth == 0 || c->depth > MAX_DEPTH || c->slots == 0 ||
			       c->slots > c->depth || c->rx_depth == 0 || c->rx_depth > MAX_RX
		       ? -1
		       : 0;
}

int main(int argc, char **argv)
{
	int to[2], from[2], status, rc;
	struct cfg c;
	bool role, local;
	pid_t pid;
	FILE *tf, *ff;

	if (parse(argc, argv, &c, &role, &local) != 0) {
		fprintf(stderr, "usage: bench_rdma_doca [--op write|read|send] [--size BYTES] [--iters N] [--depth N] "
				"[--rx-depth N] [--slots N] [--local]\n");
		return 2;
	}
	if (role)
		return responder(&c, stdin, stdout);
	if (local)
		return run_local(&c);
	if (pipe(to) != 0 || pipe(from) != 0)
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char *args[argc + 2];

		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		for (int i = 0; i < argc; i++)
			args[i] = argv[i];
		args[argc] = "responder";
		args[argc + 1] = NULL;
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	tf = fdopen(to[1], "w");
	ff = fdopen(from[0], "r");
	rc = tf != NULL && ff != NULL ? requester(&c, tf, ff) : 1;
	if (tf != NULL)
		fclose(tf);
	waitpid(pid, &status, 0);
	return rc != 0 ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
