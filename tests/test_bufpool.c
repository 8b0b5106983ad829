/*
 * test_bufpool — doca_bufpool_*: creation rules, layout of the elements in
 * the mmap (distinct, aligned, inside, not overlapping), allocation until
 * empty, free and reallocation, states, destroy and getters.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_bufpool.h"
#include "doca_mmap.h"
#include "harness.h"
#include "mem_fixture.h"

#define MEM_SIZE 16384
#define MAX_BUFS 2048

static alignas(4096) uint8_t mem[MEM_SIZE];

static struct doca_mmap *make_mmap(void *addr, size_t len, bool start)
{
	uint32_t perm = MEM_FX_PERM_DEFAULT; /* as created */

	return start ? mem_fx_mmap(NULL, addr, len, perm) : mem_fx_mmap_configured(NULL, addr, len, perm);
}

static uint32_t nfree(const struct doca_bufpool *bp)
{
	uint32_t n = UINT32_MAX;

	doca_bufpool_get_num_free_elements(bp, &n);
	return n;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Allocates every element of bp (expects exactly n), checks the layout against
 * [base, base+len), element size and alignment, fills each element with its
 * own pattern and verifies no element overwrote another; releases them all.
 * Returns false (after releasing) on any mismatch.
 */
static bool check_layout(struct doca_bufpool *bp, uint32_t n, uint8_t *base, size_t len, size_t elem, size_t align)
{
	static struct doca_buf *bufs[MAX_BUFS];
	static uintptr_t addrs[MAX_BUFS];
	struct doca_buf *extra;
	uint32_t got = 0;
	bool ok = true;

	while (got < MAX_BUFS && doca_bufpool_buf_alloc(bp, &bufs[got]) == DOCA_SUCCESS)
		got++;
	if (got != n || doca_bufpool_buf_alloc(bp, &extra) != DOCA_ERROR_NO_MEMORY || nfree(bp) != 0)
		ok = false;
	for (uint32_t i = 0; i < got && ok; i++) {
		void *h, *d;
		size_t l, dl;

		if (doca_buf_get_head(bufs[i], &h) != DOCA_SUCCESS || doca_buf_get_len(bufs[i], &l) != DOCA_SUCCESS ||
		    doca_buf_get_data(bufs[i], &d) != DOCA_SUCCESS || doca_buf_get_data_len(bufs[i], &dl) != DOCA_SUCCESS)
			ok = false;
		else if (l != elem || d != h || dl != 0)
			ok = false;
		else if ((uint8_t *)h < base || (uint8_t *)h + l > base + len)
			ok = false;
		else if (align > 1 && ((uintptr_t)h & (align - 1)) != 0)
			ok = false;
		addrs[i] = (uintptr_t)h;
		if (ok)
			memset(h, (int)(i & 0xff), l);
	}
	if (ok) {
		for (uint32_t i = 0; i < got && ok; i++) {
			const uint8_t *p = (const uint8_t *)addrs[i];

			for (size_t j = 0; j < elem; j++)
				if (p[j] != (uint8_t)(i & 0xff))
					ok = false;
		}
		qsort(addrs, got, sizeof(addrs[0]), cmp_ptr);
		for (uint32_t i = 1; i < got && ok; i++)
			if (addrs[i - 1] + elem > addrs[i])
				ok = false; /* equal or overlapping */
	}
	for (uint32_t i = 0; i < got; i++)
		if (doca_buf_refcount_rm(bufs[i], NULL) != DOCA_SUCCESS)
			ok = false;
	return ok && nfree(bp) == n;
}

static void test_create_rules(void)
{
	struct doca_mmap *m, *unstarted;
	struct doca_bufpool *bp = NULL;

	CHECK((m = make_mmap(mem, 4096, true)) != NULL);
	CHECK((unstarted = make_mmap(mem + 4096, 4096, false)) != NULL);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 0, NULL, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 0, m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 0, 0, 64, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 0, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 1u << 3, 64, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	/* alignment must be a power of 2 (or 0) */
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 3, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 6, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, 24, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 4, 0, 64, SIZE_MAX, m, &bp), DOCA_ERROR_INVALID_VALUE);
	/* an unstarted mmap with a range is enough to create; start then needs it started */
	CHECK_OK(doca_bufpool_create(NULL, 4, 0, 64, 0, unstarted, &bp));
	CHECK_ERR(doca_bufpool_start(bp), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(unstarted));
	CHECK_OK(doca_mmap_stop(unstarted));
	CHECK_ERR(doca_bufpool_start(bp), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_bufpool_destroy(bp));
	bp = NULL;
	/* elements must fit */
	CHECK_ERR(doca_bufpool_create(NULL, 65, 0, 64, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 1, 0, 4097, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 257, 0, 10, 16, m, &bp), DOCA_ERROR_INVALID_VALUE); /* stride 16 */
	CHECK_ERR(doca_bufpool_create(NULL, 2, 0, 1, 4096, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 2, 0, SIZE_MAX, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, 2, 0, SIZE_MAX - 2, 8, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_create(NULL, SIZE_MAX, 0, 1, 0, m, &bp), DOCA_ERROR_INVALID_VALUE);
	CHECK(bp == NULL);
	/* exactly full fits */
	CHECK_OK(doca_bufpool_create(NULL, 64, 0, 64, 0, m, &bp));
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_bufpool_create(NULL, 256, DOCA_BUF_EXTENSION_LINKED_LIST, 10, 16, m, &bp));
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_bufpool_create(NULL, 1, 0, 4096, 4096, m, &bp));
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_mmap_destroy(unstarted));
}

static void test_layouts(void)
{
	static const struct {
		size_t off, len, elem, align;
		uint32_t n;
	} cases[] = {
		{ 0, 4096, 64, 0, 64 },	    /* exactly full */
		{ 0, 4096, 64, 64, 64 },
		{ 0, 4096, 7, 0, 585 },	    /* 4096 / 7, packed */
		{ 0, 4096, 10, 16, 256 },   /* stride 16 */
		{ 1, 4095, 64, 64, 63 },    /* first element moves to the next boundary */
		{ 3, 1005, 1, 8, 125 },	    /* first at +8, (1008 - 8) / 8 */
		{ 100, 9000, 256, 256, 34 },
		{ 0, MEM_SIZE, 1, 4096, 4 },
		{ 5, 100, 100, 1, 1 },
		{ 0, MEM_SIZE, 8, 8, MAX_BUFS },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct doca_bufpool *bp;
		struct doca_mmap *m;
		uint32_t v;

		CHECK((m = make_mmap(mem + cases[c].off, cases[c].len, true)) != NULL);
		CHECK_OK(doca_bufpool_create(NULL, cases[c].n, 0, cases[c].elem, cases[c].align, m, &bp));
		CHECK_OK(doca_bufpool_get_num_elements(bp, &v));
		CHECK(v == cases[c].n);
		CHECK_OK(doca_bufpool_start(bp));
		if (!check_layout(bp, cases[c].n, mem + cases[c].off, cases[c].len, cases[c].elem, cases[c].align)) {
			TH_FAIL("layout case %zu (off %zu len %zu elem %zu align %zu n %u)", c, cases[c].off,
				cases[c].len, cases[c].elem, cases[c].align, cases[c].n);
			doca_bufpool_destroy(bp);
			doca_mmap_destroy(m);
			return;
		}
		/* one more element than fits is refused */
		{
			struct doca_bufpool *bp2 = NULL;

			CHECK_ERR(doca_bufpool_create(NULL, cases[c].n + 1u, 0, cases[c].elem, cases[c].align, m, &bp2),
				  DOCA_ERROR_INVALID_VALUE);
			CHECK(bp2 == NULL);
		}
		CHECK_OK(doca_bufpool_stop(bp));
		CHECK_OK(doca_bufpool_destroy(bp));
		CHECK_OK(doca_mmap_destroy(m));
	}
}

static void test_alloc_free_realloc(void)
{
	struct doca_buf *b[8], *x, *y;
	struct doca_bufpool *bp;
	struct doca_mmap *m;
	uint32_t v;
	void *h, *h3;

	CHECK((m = make_mmap(mem, 4096, true)) != NULL);
	CHECK_OK(doca_bufpool_create(NULL, 8, 0, 128, 64, m, &bp));
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK_ERR(doca_bufpool_stop(bp), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_bufpool_start(bp));
	CHECK_ERR(doca_bufpool_start(bp), DOCA_ERROR_BAD_STATE);
	for (int i = 0; i < 8; i++) {
		CHECK_OK(doca_bufpool_buf_alloc(bp, &b[i]));
		CHECK(nfree(bp) == 7u - (uint32_t)i);
		CHECK_OK(doca_mmap_get_num_bufs(m, &v));
		CHECK(v == (uint32_t)i + 1);
	}
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_NO_MEMORY);
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_NO_MEMORY);
	/* the pool's buffers pin the mmap and the pool */
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_bufpool_destroy(bp), DOCA_ERROR_IN_USE);

	/* free one, get one back; its region is a whole free slot */
	CHECK_OK(doca_buf_get_head(b[3], &h3));
	CHECK_OK(doca_buf_set_data(b[3], h3, 100));
	CHECK_OK(doca_buf_refcount_rm(b[3], NULL));
	CHECK(nfree(bp) == 1);
	CHECK_OK(doca_bufpool_buf_alloc(bp, &b[3]));
	CHECK_OK(doca_buf_get_head(b[3], &h));
	CHECK(h == h3);
	{
		size_t dl, l;

		CHECK_OK(doca_buf_get_data_len(b[3], &dl));
		CHECK(dl == 0);
		CHECK_OK(doca_buf_get_len(b[3], &l));
		CHECK(l == 128);
	}
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_NO_MEMORY);

	/* a buffer has one reference: refcount_add is not supported, the release returns it */
	CHECK_ERR(doca_buf_refcount_add(b[0], NULL), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(nfree(bp) == 0);
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK(nfree(bp) == 1);

	/* pool buffers chain into lists and a list goes back as a whole */
	CHECK_OK(doca_buf_chain_list(b[1], b[2]));
	CHECK_OK(doca_buf_chain_list(b[1], b[4]));
	CHECK_OK(doca_buf_refcount_rm(b[1], NULL));
	CHECK(nfree(bp) == 4);

	/* stopped: refused even with free elements; buffers out stay valid */
	CHECK_OK(doca_bufpool_stop(bp));
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_bufpool_stop(bp), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_buf_get_head(b[5], &h));
	CHECK_OK(doca_buf_refcount_rm(b[5], NULL));
	CHECK(nfree(bp) == 5);
	CHECK_OK(doca_bufpool_start(bp));
	CHECK_OK(doca_bufpool_buf_alloc(bp, &x));
	CHECK_OK(doca_bufpool_buf_alloc(bp, &y));
	CHECK(x != y);
	CHECK_OK(doca_buf_refcount_rm(x, NULL));
	CHECK_OK(doca_buf_refcount_rm(y, NULL));
	CHECK_OK(doca_buf_refcount_rm(b[3], NULL));
	CHECK_OK(doca_buf_refcount_rm(b[6], NULL));
	CHECK_ERR(doca_bufpool_destroy(bp), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_buf_refcount_rm(b[7], NULL));
	CHECK(nfree(bp) == 8);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);

	/* an idle pool still holds its mmap */
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);

	/* the mmap stopped under an idle pool: allocation refused until it starts again */
	CHECK_OK(doca_mmap_stop(m));
	CHECK_ERR(doca_bufpool_buf_alloc(bp, &x), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_bufpool_buf_alloc(bp, &x));
	CHECK_OK(doca_buf_refcount_rm(x, NULL));
	CHECK_OK(doca_bufpool_destroy(bp)); /* destroy of a started pool with everything back */
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_getters(void)
{
	union doca_data ud = { .u64 = 0xabcdef }, got;
	struct doca_bufpool *bp;
	struct doca_mmap *m;
	size_t a;
	uint32_t v;

	CHECK((m = make_mmap(mem, 4096, true)) != NULL);
	CHECK_OK(doca_bufpool_create(&ud, 5, 0, 100, 32, m, &bp));
	CHECK_OK(doca_bufpool_get_user_data(bp, &got));
	CHECK(got.u64 == 0xabcdef);
	CHECK_OK(doca_bufpool_get_element_alignment(bp, &a));
	CHECK(a == 32);
	CHECK_OK(doca_bufpool_get_num_elements(bp, &v));
	CHECK(v == 5);
	CHECK_OK(doca_bufpool_get_num_free_elements(bp, &v));
	CHECK(v == 5);
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_bufpool_create(NULL, 3, 0, 100, 0, m, &bp));
	got.u64 = 1;
	CHECK_OK(doca_bufpool_get_user_data(bp, &got));
	CHECK(got.u64 == 0);
	CHECK_OK(doca_bufpool_get_element_alignment(bp, &a));
	CHECK(a == 0);
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_null_args(void)
{
	struct doca_bufpool *bp;
	struct doca_mmap *m;
	struct doca_buf *b;
	union doca_data ud;
	size_t a;
	uint32_t v;

	CHECK((m = make_mmap(mem, 4096, true)) != NULL);
	CHECK_OK(doca_bufpool_create(NULL, 2, 0, 16, 0, m, &bp));
	CHECK_ERR(doca_bufpool_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_num_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_num_elements(bp, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_num_free_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_num_free_elements(bp, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_element_alignment(NULL, &a), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_element_alignment(bp, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_get_user_data(bp, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_bufpool_buf_alloc(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_bufpool_start(bp));
	CHECK_ERR(doca_bufpool_buf_alloc(bp, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(nfree(bp) == 2);
	CHECK_OK(doca_bufpool_destroy(bp));
	CHECK_OK(doca_mmap_destroy(m));
}

int main(void)
{
	RUN(test_create_rules);
	RUN(test_layouts);
	RUN(test_alloc_free_realloc);
	RUN(test_getters);
	RUN(test_null_args);
	return th_summary("test_bufpool");
}
