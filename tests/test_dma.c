/* DOCA DMA: capabilities, memcpy jobs, failures that must not touch memory. */
#include <stdio.h>
#include <sys/mman.h>

#include "dma_fixture.h"
#include "harness.h"

static void test_caps(void)
{
	struct doca_devinfo **list;
	uint32_t n, max_elems = 0;
	uint64_t max_size = 0;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_dma_job_get_supported(list[0], DOCA_DMA_JOB_MEMCPY));
	CHECK_ERR(doca_dma_job_get_supported(list[0], (enum doca_dma_job_types)12345), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_dma_job_get_supported(NULL, DOCA_DMA_JOB_MEMCPY), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dma_get_max_list_buf_num_elem(list[0], &max_elems));
	CHECK(max_elems > 1);
	CHECK_OK(doca_dma_get_max_buf_size(list[0], &max_size));
	CHECK(max_size >= (64ull << 20));
	CHECK_ERR(doca_dma_get_max_list_buf_num_elem(NULL, &max_elems), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_list_buf_num_elem(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_buf_size(NULL, &max_size), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_get_max_buf_size(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_create_destroy(void)
{
	struct doca_dma *dma;

	CHECK_ERR(doca_dma_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dma_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_dma_as_ctx(NULL) == NULL);
	CHECK_OK(doca_dma_create(&dma));
	CHECK(doca_dma_as_ctx(dma) != NULL);
	CHECK_OK(doca_dma_destroy(dma));
}

static void test_destroy_refused_while_in_use(void)
{
	struct fx f;

	CHECK(fx_setup(&f, 4096, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_ERR(doca_dma_destroy(f.dma), DOCA_ERROR_IN_USE); /* started, work queue attached */
	CHECK_OK(doca_ctx_workq_rm(f.ctx, f.wq));
	CHECK_ERR(doca_dma_destroy(f.dma), DOCA_ERROR_IN_USE); /* still started */
	CHECK_OK(doca_ctx_stop(f.ctx));
	CHECK_ERR(doca_dma_destroy(f.dma), DOCA_ERROR_IN_USE); /* device still added */
	CHECK_OK(doca_workq_destroy(f.wq));
	f.wq = NULL;
	fx_teardown(&f);
}

static void test_simple_copy(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev = { 0 };
	size_t dlen = 0;

	CHECK(fx_setup(&f, 4096, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 4096, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 4096, &d));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY);
	CHECK(ev.user_data.u64 == 0x5eed);
	CHECK(ev.result.u64 == DOCA_SUCCESS);
	CHECK(memcmp(f.src, f.dst, 4096) == 0);
	CHECK_OK(doca_buf_get_data_len(d, &dlen));
	CHECK(dlen == 4096);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_copy_appends_to_destination_data(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;
	size_t dlen;

	CHECK(fx_setup(&f, 1024, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 100, &s));
	CHECK_OK(doca_buf_inventory_buf_by_args(f.inv, f.dst_mmap, f.dst, 1024, f.dst + 10, 5, &d));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK(memcmp(f.dst + 15, f.src, 100) == 0);
	CHECK(memcmp(f.dst + 115, f.src, 100) == 0);
	CHECK(f.dst[14] == 0 && f.dst[215] == 0);
	CHECK_OK(doca_buf_get_data_len(d, &dlen));
	CHECK(dlen == 205);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

/* Builds a list of n buffers splitting [base, base+len) at random points; data covers each piece if with_data. */
static struct doca_buf *make_list(struct fx *f, struct doca_mmap *m, uint8_t *base, size_t len, int n,
				  int with_data, unsigned *seed)
{
	struct doca_buf *head = NULL, *b;
	size_t off = 0;

	for (int i = 0; i < n; i++) {
		size_t rest = len - off, piece = (i == n - 1) ? rest : (rest / (size_t)(n - i));

		if (i < n - 1 && piece > 1)
			piece = 1 + (size_t)rand_r(seed) % piece;
		if (with_data) {
			if (doca_buf_inventory_buf_by_data(f->inv, m, base + off, piece, &b) != DOCA_SUCCESS)
				return NULL;
		} else if (doca_buf_inventory_buf_by_addr(f->inv, m, base + off, piece, &b) != DOCA_SUCCESS) {
			return NULL;
		}
		if (head == NULL)
			head = b;
		else if (doca_buf_chain_list(head, b) != DOCA_SUCCESS)
			return NULL;
		off += piece;
	}
	return head;
}

static void test_random_copies_and_chains(void)
{
	enum { SZ = 1 << 16 };
	unsigned seed = 12345;
	struct fx f;

	CHECK(fx_setup(&f, SZ, 16, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int it = 0; it < 300; it++) {
		size_t len = 1 + (size_t)rand_r(&seed) % (SZ / 2);
		size_t soff = (size_t)rand_r(&seed) % (SZ - len + 1), doff = (size_t)rand_r(&seed) % (SZ - len + 1);
		int ns = 1 + rand_r(&seed) % 8, nd = 1 + rand_r(&seed) % 8;
		struct doca_buf *s, *d;
		struct doca_event ev;

		if ((size_t)ns > len)
			ns = 1;
		if ((size_t)nd > len)
			nd = 1;
		memset(f.dst, 0, SZ);
		s = make_list(&f, f.src_mmap, f.src + soff, len, ns, 1, &seed);
		d = make_list(&f, f.dst_mmap, f.dst + doff, len, nd, 0, &seed);
		CHECK(s != NULL && d != NULL);
		CHECK_OK(fx_copy(&f, d, s, &ev));
		if (memcmp(f.dst + doff, f.src + soff, len) != 0) {
			TH_FAIL("iteration %d: data differs (len %zu, %d src, %d dst elements)", it, len, ns, nd);
			return;
		}
		for (size_t i = 0; i < doff; i++)
			CHECK(f.dst[i] == 0);
		for (size_t i = doff + len; i < SZ; i++)
			CHECK(f.dst[i] == 0);
		CHECK_OK(doca_buf_refcount_rm(s, NULL));
		CHECK_OK(doca_buf_refcount_rm(d, NULL));
	}
	uint32_t nfree;
	CHECK_OK(doca_buf_inventory_get_num_free_elements(f.inv, &nfree));
	CHECK(nfree == 1024);
	fx_teardown(&f);
}

/* Runs one job expected to fail with reason; the destination must be unchanged. */
static void expect_failure(struct fx *f, struct doca_buf *d, struct doca_buf *s, doca_error_t reason)
{
	struct doca_event ev = { 0 };
	uint8_t *copy = malloc(f->len);

	CHECK(copy != NULL);
	memcpy(copy, f->dst, f->len);
	doca_error_t r = fx_copy(f, d, s, &ev);
	int same = memcmp(copy, f->dst, f->len) == 0;

	free(copy);
	CHECK_ERR(r, DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 0x5eed);
	CHECK_ERR(ev.result.u64, reason);
	CHECK(same);
}

static void test_dst_without_write_access(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	size_t dlen = 1;

	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_ONLY) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 512, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 512, &d));
	expect_failure(&f, d, s, DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_get_data_len(d, &dlen));
	CHECK(dlen == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_dst_too_small(void)
{
	struct fx f;
	struct doca_buf *s, *d;

	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 300, &s));
	CHECK_OK(doca_buf_inventory_buf_by_args(f.inv, f.dst_mmap, f.dst, 400, f.dst, 101, &d));
	expect_failure(&f, d, s, DOCA_ERROR_INVALID_VALUE);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_overlap_refused(void)
{
	struct fx f;
	struct doca_buf *s, *d;

	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	memset(f.dst, 9, 512);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.dst_mmap, f.dst, 200, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + 100, 300, &d));
	expect_failure(&f, d, s, DOCA_ERROR_INVALID_VALUE);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_mmap_without_the_device(void)
{
	struct fx f;
	struct doca_mmap *m;
	struct doca_buf *s, *d;
	uint8_t other[256];

	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_set_memrange(m, other, sizeof(other)));
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, m, other, sizeof(other), &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 512, &d));
	expect_failure(&f, d, s, DOCA_ERROR_NOT_PERMITTED);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	CHECK_OK(doca_mmap_destroy(m));
	fx_teardown(&f);
}

/*
 * A job's source is an in-process import whose exporter stops while the
 * import's buffer is held: stopping revokes the import's access (the DOCA
 * export rules), so a job submitted after it is refused, NOT_PERMITTED,
 * with the destination untouched, although the same buffers copied before
 * the stop. Jobs after it on the same queue still run.
 */
static void test_revoked_import_refused(void)
{
	static uint8_t emem[4096];
	struct doca_mmap *exp, *imp;
	struct doca_buf *ib, *s, *d;
	struct doca_event ev = { 0 };
	const void *desc;
	size_t len, dlen = 1;
	struct fx f;

	for (size_t i = 0; i < sizeof(emem); i++)
		emem[i] = (uint8_t)(i * 13 + 5);
	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK((exp = fx_mmap(f.dev, emem, sizeof(emem), DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ)) != NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, f.dev, &desc, &len));
	CHECK_OK(doca_mmap_create_from_export(NULL, desc, len, f.dev, &imp));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, imp, emem + 64, 64, &ib));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 512, &d));
	CHECK_OK(fx_copy(&f, d, ib, &ev));
	CHECK(memcmp(f.dst, emem + 64, 64) == 0);
	CHECK_OK(doca_buf_reset_data_len(d));
	memset(f.dst, 0, 512);
	CHECK_OK(doca_mmap_stop(exp));
	expect_failure(&f, d, ib, DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_get_data_len(d, &dlen));
	CHECK(dlen == 0);
	/* The queue goes on: a job of live buffers copies. */
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 64, &s));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK(memcmp(f.dst, f.src, 64) == 0);
	CHECK_OK(doca_buf_refcount_rm(s, NULL));
	CHECK_OK(doca_buf_refcount_rm(ib, NULL));
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	CHECK_OK(doca_mmap_destroy(imp));
	CHECK_OK(doca_mmap_destroy(exp));
	fx_teardown(&f);
}

/*
 * An mmap stopped and started again gets a new key: jobs on its new buffers
 * copy (the key the short path carries is the new one), round after round.
 */
static void test_mmap_restarted(void)
{
	struct doca_event ev = { 0 };
	struct doca_buf *s, *d;
	uint32_t k0, k1;
	struct fx f;

	CHECK(fx_setup(&f, 512, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int round = 0; round < 3; round++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + round, 64, &s));
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 512, &d));
		CHECK_OK(doca_buf_get_mkey(s, f.dev, &k0));
		memset(f.dst, 0, 512);
		CHECK_OK(fx_copy(&f, d, s, &ev));
		CHECK(memcmp(f.dst, f.src + round, 64) == 0);
		CHECK_OK(doca_buf_refcount_rm(s, NULL));
		CHECK_OK(doca_buf_refcount_rm(d, NULL));
		CHECK_OK(doca_mmap_stop(f.src_mmap));
		CHECK_OK(doca_mmap_start(f.src_mmap));
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 8, &s));
		CHECK_OK(doca_buf_get_mkey(s, f.dev, &k1));
		CHECK(k1 != k0);
		CHECK_OK(doca_buf_refcount_rm(s, NULL));
	}
	fx_teardown(&f);
}

static void test_list_too_long(void)
{
	struct fx f;
	struct doca_buf *s = NULL, *b, *d;
	uint32_t max;

	CHECK(fx_setup(&f, 4096, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_dma_get_max_list_buf_num_elem(doca_dev_as_devinfo(f.dev), &max));
	for (uint32_t i = 0; i <= max; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + i, 1, &b));
		if (s == NULL)
			s = b;
		else
			CHECK_OK(doca_buf_chain_list(s, b));
	}
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 4096, &d));
	expect_failure(&f, d, s, DOCA_ERROR_INVALID_VALUE);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_submit_errors(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_dma *other;
	struct doca_event ev;

	CHECK(fx_setup(&f, 512, 2, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 10, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 512, &d));
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx },
					   .dst_buff = d, .src_buff = s };

	CHECK_ERR(doca_workq_submit(NULL, &job.base), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_submit(f.wq, NULL), DOCA_ERROR_INVALID_VALUE);
	job.base.type = DOCA_DMA_JOB_MEMCPY + 1;
	CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_INVALID_VALUE);
	job.base.type = DOCA_DMA_JOB_MEMCPY;
	job.dst_buff = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_INVALID_VALUE);
	job.dst_buff = d;
	job.base.ctx = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dma_create(&other));
	job.base.ctx = doca_dma_as_ctx(other);
	CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_BAD_STATE); /* never started */
	CHECK_OK(doca_dma_destroy(other));
	job.base.ctx = f.ctx;
	CHECK_OK(doca_workq_submit(f.wq, &job.base));
	CHECK_OK(doca_workq_submit(f.wq, &job.base));
	CHECK_ERR(doca_workq_submit(f.wq, &job.base), DOCA_ERROR_NO_MEMORY); /* depth 2 */
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK(memcmp(f.dst, f.src, 10) == 0 && memcmp(f.dst + 10, f.src, 10) == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

static void test_deep_queue_many_jobs(void)
{
	enum { N = 256, CHUNK = 64 };
	struct fx f;
	struct doca_buf *s[N], *d[N];
	struct doca_dma_job_memcpy jobs[N];
	uint8_t seen[N] = { 0 };

	CHECK(fx_setup(&f, N * CHUNK, N, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	for (int i = 0; i < N; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src + i * CHUNK, CHUNK, &s[i]));
		CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst + (N - 1 - i) * CHUNK, CHUNK, &d[i]));
		jobs[i] = (struct doca_dma_job_memcpy){
			.base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f.ctx, .user_data.u64 = (uint64_t)i },
			.dst_buff = d[i], .src_buff = s[i] };
		CHECK_OK(doca_workq_submit(f.wq, &jobs[i].base));
	}
	for (int got = 0; got < N;) {
		struct doca_event ev;
		doca_error_t r = doca_workq_progress_retrieve(f.wq, &ev, 0);

		if (r == DOCA_ERROR_AGAIN)
			continue;
		CHECK_OK(r);
		CHECK(ev.user_data.u64 < N && !seen[ev.user_data.u64]);
		seen[ev.user_data.u64] = 1;
		got++;
	}
	for (int i = 0; i < N; i++) {
		CHECK(memcmp(f.dst + (N - 1 - i) * CHUNK, f.src + i * CHUNK, CHUNK) == 0);
		doca_buf_refcount_rm(s[i], NULL);
		doca_buf_refcount_rm(d[i], NULL);
	}
	fx_teardown(&f);
}

static void test_large_copy(void)
{
	enum { SZ = 8 << 20 };
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev;

	CHECK(fx_setup(&f, SZ, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, SZ, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, SZ, &d));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK(memcmp(f.src, f.dst, SZ) == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
}

/*
 * The job size limit doca_dma_get_max_buf_size reports (2 GiB, docs/ARCHITECTURE.md): a job one byte larger
 * fails with DOCA_ERROR_INVALID_VALUE and writes nothing, as one buffer or as a list whose total is too large.
 * The destination is a list with room for more than max, each element under it: only the job size limit
 * stands in the way. The memory is reserved, never touched: a refused job reads and writes none of it.
 */
struct big {
	uint8_t *src, *dst;
	size_t len;
	struct doca_mmap *src_mmap, *dst_mmap;
};

static void big_release(void *arg)
{
	struct big *b = arg;

	if (b->src_mmap != NULL)
		doca_mmap_destroy(b->src_mmap);
	if (b->dst_mmap != NULL)
		doca_mmap_destroy(b->dst_mmap);
	if (b->src != NULL && b->src != MAP_FAILED)
		munmap(b->src, b->len);
	if (b->dst != NULL && b->dst != MAP_FAILED)
		munmap(b->dst, b->len);
}

static void expect_too_large(struct fx *f, struct doca_buf *d, struct doca_buf *d2, struct doca_buf *s)
{
	struct doca_event ev = { 0 };
	size_t dlen = 1, dlen2 = 1;

	CHECK_ERR(fx_copy(f, d, s, &ev), DOCA_ERROR_IO_FAILED);
	CHECK(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 0x5eed);
	CHECK_ERR(ev.result.u64, DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_get_data_len(d, &dlen));
	CHECK_OK(doca_buf_get_data_len(d2, &dlen2));
	CHECK(dlen == 0 && dlen2 == 0);
}

static void test_max_buf_size_enforced(void)
{
	static struct big b;
	struct fx f;
	struct doca_buf *s, *s2, *d, *d2;
	uint64_t max = 0, half;

	CHECK(fx_setup(&f, 4096, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_dma_get_max_buf_size(doca_dev_as_devinfo(f.dev), &max));
	CHECK(max == 1ull << 31);
	memset(&b, 0, sizeof(b));
	b.len = max + 8192;
	half = b.len / 2;
	th_defer(big_release, &b);
	b.src = mmap(NULL, b.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	b.dst = mmap(NULL, b.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(b.src != MAP_FAILED && b.dst != MAP_FAILED);
	b.src_mmap = fx_mmap(f.dev, b.src, b.len, MEM_FX_PERM_DEFAULT);
	b.dst_mmap = fx_mmap(f.dev, b.dst, b.len, DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK(b.src_mmap != NULL && b.dst_mmap != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, b.dst_mmap, b.dst, half, &d));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, b.dst_mmap, b.dst + half, b.len - half, &d2));
	CHECK_OK(doca_buf_chain_list(d, d2));
	/* One buffer of max + 1 bytes. */
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, b.src_mmap, b.src, max + 1, &s));
	expect_too_large(&f, d, d2, s);
	doca_buf_refcount_rm(s, NULL);
	/* Two buffers, each within the limit, max + 1 together. */
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, b.src_mmap, b.src, max / 2, &s));
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, b.src_mmap, b.src + max / 2, max / 2 + 1, &s2));
	CHECK_OK(doca_buf_chain_list(s, s2));
	expect_too_large(&f, d, d2, s);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	th_undefer(big_release, &b);
	big_release(&b);
	fx_teardown(&f);
}

int main(void)
{
	RUN(test_caps);
	RUN(test_create_destroy);
	RUN(test_destroy_refused_while_in_use);
	RUN(test_simple_copy);
	RUN(test_copy_appends_to_destination_data);
	RUN(test_random_copies_and_chains);
	RUN(test_dst_without_write_access);
	RUN(test_dst_too_small);
	RUN(test_overlap_refused);
	RUN(test_mmap_without_the_device);
	RUN(test_revoked_import_refused);
	RUN(test_mmap_restarted);
	RUN(test_list_too_long);
	RUN(test_submit_errors);
	RUN(test_deep_queue_many_jobs);
	RUN(test_large_copy);
	RUN(test_max_buf_size_enforced);
	return th_summary("test_dma");
}
