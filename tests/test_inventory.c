/*
 * test_inventory — doca_buf_inventory_*: creation rules, start/stop, the three
 * ways of taking a buffer and where they put the data segment, range and state
 * checks, duplication of buffers and lists, counts, destroy and user data.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_mmap.h"
#include "harness.h"
#include "mem_fixture.h"

static uint8_t mem[4096];
static uint8_t mem2[512];
static uint8_t outside[64];

static struct doca_mmap *make_mmap(void *addr, size_t len, bool start)
{
	uint32_t perm = MEM_FX_PERM_DEFAULT; /* as created */

	return start ? mem_fx_mmap(NULL, addr, len, perm) : mem_fx_mmap_configured(NULL, addr, len, perm);
}

static uint32_t nfree(const struct doca_buf_inventory *inv)
{
	uint32_t n = UINT32_MAX;

	doca_buf_inventory_get_num_free_elements(inv, &n);
	return n;
}

/* Region and data segment of b are exactly as given. */
static bool buf_is(const struct doca_buf *b, const void *head, size_t len, const void *data, size_t data_len)
{
	void *h, *d;
	size_t l, dl;

	return doca_buf_get_head(b, &h) == DOCA_SUCCESS && doca_buf_get_len(b, &l) == DOCA_SUCCESS &&
	       doca_buf_get_data(b, &d) == DOCA_SUCCESS && doca_buf_get_data_len(b, &dl) == DOCA_SUCCESS && h == head &&
	       l == len && d == data && dl == data_len;
}

static void test_create(void)
{
	struct doca_buf_inventory *inv = NULL;
	union doca_data ud = { .u64 = 0xfeedu }, got;
	uint32_t v;

	CHECK_ERR(doca_buf_inventory_create(NULL, 0, DOCA_BUF_EXTENSION_NONE, &inv), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_create(NULL, 4, 1u << 1, &inv), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_create(NULL, 4, 1u << 31, &inv), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_LINKED_LIST | (1u << 5), &inv),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(inv == NULL);

	CHECK_OK(doca_buf_inventory_create(&ud, 7, DOCA_BUF_EXTENSION_LINKED_LIST, &inv));
	CHECK_OK(doca_buf_inventory_get_num_elements(inv, &v));
	CHECK(v == 7);
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv, &v));
	CHECK(v == 7);
	CHECK_OK(doca_buf_inventory_get_buf_extensions(inv, &v));
	CHECK(v == DOCA_BUF_EXTENSION_LINKED_LIST);
	CHECK_OK(doca_buf_inventory_get_user_data(inv, &got));
	CHECK(got.u64 == 0xfeedu);
	CHECK_OK(doca_buf_inventory_destroy(inv)); /* never started */

	CHECK_OK(doca_buf_inventory_create(NULL, 1, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_get_buf_extensions(inv, &v));
	CHECK(v == DOCA_BUF_EXTENSION_NONE);
	got.u64 = 5;
	CHECK_OK(doca_buf_inventory_get_user_data(inv, &got));
	CHECK(got.u64 == 0);
	CHECK_OK(doca_buf_inventory_get_num_elements(inv, &v));
	CHECK(v == 1);
	CHECK_OK(doca_buf_inventory_destroy(inv));

	ud.ptr = &ud;
	CHECK_OK(doca_buf_inventory_create(&ud, 1000, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_get_user_data(inv, &got));
	CHECK(got.ptr == &ud);
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv, &v));
	CHECK(v == 1000);
	CHECK_OK(doca_buf_inventory_destroy(inv));
}

static void test_start_stop(void)
{
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b, *b2, *d;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_ERR(doca_buf_inventory_stop(inv), DOCA_ERROR_BAD_STATE);
	/* not started yet: nothing is handed out */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 8, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK(nfree(inv) == 4);
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_ERR(doca_buf_inventory_start(inv), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b));
	CHECK_OK(doca_buf_inventory_stop(inv));
	CHECK_ERR(doca_buf_inventory_stop(inv), DOCA_ERROR_BAD_STATE);
	/* stopped: refused regardless of free elements, also dup */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b2), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem, 8, &b2), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 8, mem, 8, &b2), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_dup(inv, b, &d), DOCA_ERROR_NOT_PERMITTED);
	CHECK(nfree(inv) == 3);
	/* buffers already out stay valid and can be returned */
	CHECK(buf_is(b, mem, 8, mem, 0));
	CHECK_OK(doca_buf_set_data(b, mem + 1, 2));
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK(nfree(inv) == 4);
	/* start again */
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_OK(doca_buf_inventory_buf_by_data(inv, m, mem + 8, 8, &b2));
	CHECK(buf_is(b2, mem + 8, 8, mem + 8, 8));
	CHECK_OK(doca_buf_refcount_rm(b2, NULL));
	CHECK_OK(doca_buf_inventory_stop(inv));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_take_semantics(void)
{
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t v;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 8, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_start(inv));

	/* by_addr: region as given, empty data segment at its start */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 100, 200, &b));
	CHECK(buf_is(b, mem + 100, 200, mem + 100, 0));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* by_data: region and data segment both as given */
	CHECK_OK(doca_buf_inventory_buf_by_data(inv, m, mem + 100, 200, &b));
	CHECK(buf_is(b, mem + 100, 200, mem + 100, 200));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* by_args: both given separately */
	CHECK_OK(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 150, 50, &b));
	CHECK(buf_is(b, mem + 100, 200, mem + 150, 50));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 300, 0, &b));
	CHECK(buf_is(b, mem + 100, 200, mem + 300, 0));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_buf_by_args(inv, m, mem, sizeof(mem), mem, sizeof(mem), &b));
	CHECK(buf_is(b, mem, sizeof(mem), mem, sizeof(mem)));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* data segment outside the region */
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 99, 10, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 150, 151, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 301, 0, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 100, 201, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, mem + 101, SIZE_MAX, &b),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem + 100, 200, NULL, 0, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK(nfree(inv) == 8);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);

	/* every element can be out at the same time; the ninth is refused */
	{
		struct doca_buf *bs[8];

		for (int i = 0; i < 8; i++) {
			CHECK_OK(doca_buf_inventory_buf_by_data(inv, m, mem + 10 * i, 10, &bs[i]));
			CHECK(nfree(inv) == 7u - (uint32_t)i);
			for (int j = 0; j < i; j++)
				CHECK(bs[j] != bs[i]);
		}
		CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b), DOCA_ERROR_NO_MEMORY);
		CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem, 8, &b), DOCA_ERROR_NO_MEMORY);
		CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 8, mem, 8, &b), DOCA_ERROR_NO_MEMORY);
		CHECK_ERR(doca_buf_inventory_buf_dup(inv, bs[0], &b), DOCA_ERROR_NO_MEMORY);
		CHECK_OK(doca_buf_inventory_get_num_elements(inv, &v));
		CHECK(v == 8);
		CHECK_OK(doca_mmap_get_num_bufs(m, &v));
		CHECK(v == 8);
		for (int i = 0; i < 8; i++)
			CHECK(buf_is(bs[i], mem + 10 * i, 10, mem + 10 * i, 10));
		CHECK_OK(doca_buf_refcount_rm(bs[3], NULL));
		CHECK(nfree(inv) == 1);
		CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 1000, 1, &b));
		CHECK(buf_is(b, mem + 1000, 1, mem + 1000, 0));
		CHECK(nfree(inv) == 0);
		CHECK_OK(doca_buf_refcount_rm(b, NULL));
		for (int i = 0; i < 8; i++)
			if (i != 3)
				CHECK_OK(doca_buf_refcount_rm(bs[i], NULL));
	}
	CHECK(nfree(inv) == 8);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_ranges_and_mmap_state(void)
{
	uint8_t *base = mem + 64, *end = base + 2048; /* the mmap's range, inside a larger array */
	struct doca_buf_inventory *inv;
	struct doca_mmap *m, *unstarted;
	struct doca_buf *b;

	CHECK((m = make_mmap(base, 2048, true)) != NULL);
	CHECK((unstarted = make_mmap(mem2, sizeof(mem2), false)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_start(inv));

	for (int f = 0; f < 3; f++) {
		/* f: 0 by_addr, 1 by_data, 2 by_args (data = the whole region) */
#define TAKE(a, l)                                                                                                     \
	(f == 0 ? doca_buf_inventory_buf_by_addr(inv, m, (a), (l), &b)                                                 \
		: f == 1 ? doca_buf_inventory_buf_by_data(inv, m, (a), (l), &b)                                        \
			 : doca_buf_inventory_buf_by_args(inv, m, (a), (l), (a), (l), &b))
		CHECK_ERR(TAKE(base - 1, 10), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(mem, 64), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(end - 10, 11), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(end, 1), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(base, 2049), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(base + 2047, 2), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(base + 1, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(outside, sizeof(outside)), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(base, 0), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(TAKE(NULL, 10), DOCA_ERROR_INVALID_VALUE);
		CHECK(nfree(inv) == 2);
		CHECK_OK(TAKE(end - 1, 1));
		CHECK_OK(doca_buf_refcount_rm(b, NULL));
		CHECK_OK(TAKE(base, 2048));
		CHECK_OK(doca_buf_refcount_rm(b, NULL));
#undef TAKE
	}
	/* mmap not started, then stopped */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, unstarted, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, unstarted, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, unstarted, mem2, 8, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(unstarted));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, unstarted, mem2, 8, &b));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_mmap_stop(unstarted));
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, unstarted, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, unstarted, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, unstarted, mem2, 8, mem2, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK(nfree(inv) == 2);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_mmap_destroy(unstarted));
}

static void test_dup_single(void)
{
	struct doca_buf_inventory *inv, *inv2;
	struct doca_buf *b, *d, *d2, *x;
	struct doca_mmap *m;
	uint16_t rc;
	uint32_t v;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv2));
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_OK(doca_buf_inventory_start(inv2));
	CHECK_OK(doca_buf_inventory_buf_by_args(inv, m, mem + 64, 128, mem + 80, 16, &b));
	CHECK_OK(doca_buf_inventory_buf_dup(inv, b, &d));
	CHECK(d != b);
	CHECK(buf_is(d, mem + 64, 128, mem + 80, 16));
	CHECK_OK(doca_buf_get_refcount(d, &rc));
	CHECK(rc == 1); /* a new buffer, not a reference */
	CHECK_OK(doca_buf_get_list_len(d, &v));
	CHECK(v == 1);
	CHECK_OK(doca_buf_get_next_in_list(d, &x));
	CHECK(x == NULL);
	CHECK(nfree(inv) == 2);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 2);
	/* the copy is independent */
	CHECK_OK(doca_buf_set_data(b, mem + 64, 1));
	CHECK(buf_is(d, mem + 64, 128, mem + 80, 16));
	CHECK_OK(doca_buf_reset_data_len(d));
	CHECK(buf_is(b, mem + 64, 128, mem + 64, 1));
	/* into another inventory */
	CHECK_OK(doca_buf_inventory_buf_dup(inv2, b, &d2));
	CHECK(buf_is(d2, mem + 64, 128, mem + 64, 1));
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv2, &v));
	CHECK(v == 1);
	CHECK(nfree(inv) == 2);
	CHECK_OK(doca_buf_refcount_rm(d2, NULL));
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv2, &v));
	CHECK(v == 2);
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* dup of a released buffer */
	CHECK_ERR(doca_buf_inventory_buf_dup(inv, b, &d), DOCA_ERROR_INVALID_VALUE);
	CHECK(nfree(inv) == 4);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_buf_inventory_destroy(inv2));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_dup_list(void)
{
	struct doca_buf_inventory *inv, *inv2, *small;
	struct doca_buf *b[3], *d, *el, *x;
	struct doca_mmap *m, *m2;
	uint32_t v, n2;
	uint8_t f;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK((m2 = make_mmap(mem2, sizeof(mem2), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 3, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_create(NULL, 3, DOCA_BUF_EXTENSION_NONE, &inv2));
	CHECK_OK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &small));
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_OK(doca_buf_inventory_start(inv2));
	CHECK_OK(doca_buf_inventory_start(small));
	CHECK_OK(doca_buf_inventory_buf_by_args(inv, m, mem, 100, mem + 10, 20, &b[0]));
	CHECK_OK(doca_buf_inventory_buf_by_data(inv, m2, mem2 + 5, 50, &b[1]));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 200, 300, &b[2]));
	CHECK_OK(doca_buf_chain_list(b[0], b[1]));
	CHECK_OK(doca_buf_chain_list(b[0], b[2]));

	/* not enough free elements for the whole list: nothing is taken */
	CHECK_ERR(doca_buf_inventory_buf_dup(small, b[0], &d), DOCA_ERROR_NO_MEMORY);
	CHECK(nfree(small) == 2);

	CHECK_OK(doca_buf_inventory_buf_dup(inv2, b[0], &d));
	CHECK(nfree(inv2) == 0);
	CHECK_OK(doca_buf_get_list_len(d, &v));
	CHECK(v == 3);
	CHECK_OK(doca_buf_is_first_in_list(d, &f));
	CHECK(f == 1);
	el = d;
	CHECK(buf_is(el, mem, 100, mem + 10, 20));
	CHECK_OK(doca_buf_get_next_in_list(el, &el));
	CHECK(el != NULL && el != b[1]);
	CHECK(buf_is(el, mem2 + 5, 50, mem2 + 5, 50));
	CHECK_OK(doca_buf_is_first_in_list(el, &f));
	CHECK(f == 0);
	CHECK_OK(doca_buf_get_next_in_list(el, &el));
	CHECK(el != NULL && el != b[2]);
	CHECK(buf_is(el, mem + 200, 300, mem + 200, 0));
	CHECK_OK(doca_buf_get_last_in_list(d, &x));
	CHECK(x == el);
	CHECK_OK(doca_buf_get_next_in_list(el, &x));
	CHECK(x == NULL);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK_OK(doca_mmap_get_num_bufs(m2, &n2));
	CHECK(v == 4 && n2 == 2);
	/* the original list is untouched */
	CHECK_OK(doca_buf_get_list_len(b[0], &v));
	CHECK(v == 3);
	CHECK_OK(doca_buf_get_next_in_list(b[0], &x));
	CHECK(x == b[1]);
	/* releasing the copy's head releases the copy only */
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	CHECK(nfree(inv2) == 3);
	CHECK(nfree(inv) == 0);

	/* dup of an inner element copies the rest of the list from it */
	CHECK_OK(doca_buf_inventory_buf_dup(inv2, b[1], &d));
	CHECK_OK(doca_buf_get_list_len(d, &v));
	CHECK(v == 2);
	CHECK(buf_is(d, mem2 + 5, 50, mem2 + 5, 50));
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	CHECK(nfree(inv2) == 3);
	/* ...and runs out half-way in a one-element inventory: undone */
	CHECK_OK(doca_buf_inventory_buf_by_data(small, m, mem, 1, &x));
	CHECK(nfree(small) == 1);
	CHECK_ERR(doca_buf_inventory_buf_dup(small, b[1], &d), DOCA_ERROR_NO_MEMORY);
	CHECK(nfree(small) == 1);
	CHECK_OK(doca_buf_refcount_rm(x, NULL));

	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK(nfree(inv) == 3);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK_OK(doca_mmap_get_num_bufs(m2, &n2));
	CHECK(v == 0 && n2 == 0);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_buf_inventory_destroy(inv2));
	CHECK_OK(doca_buf_inventory_destroy(small));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_mmap_destroy(m2));
}

static void test_destroy_in_use(void)
{
	struct doca_buf_inventory *inv;
	struct doca_buf *b, *b2;
	struct doca_mmap *m;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b2));
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b2, NULL));
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED); /* b is still out */
	/* a buffer in a list is still out */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b2));
	CHECK_OK(doca_buf_chain_list(b, b2));
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK(nfree(inv) == 2);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_null_args(void)
{
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	union doca_data ud;
	uint32_t v;

	CHECK((m = make_mmap(mem, sizeof(mem), true)) != NULL);
	CHECK_OK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK_ERR(doca_buf_inventory_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_free_elements(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_num_free_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_user_data(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_buf_extensions(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_get_buf_extensions(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_inventory_start(inv));
	CHECK_ERR(doca_buf_inventory_buf_by_addr(NULL, m, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, NULL, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(NULL, m, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, NULL, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_data(inv, m, mem, 8, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(NULL, m, mem, 8, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, NULL, mem, 8, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, NULL, 8, mem, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_args(inv, m, mem, 8, mem, 8, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(nfree(inv) == 2);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b));
	CHECK_ERR(doca_buf_inventory_buf_dup(NULL, b, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_dup(inv, NULL, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_dup(inv, b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(nfree(inv) == 1);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
}

int main(void)
{
	RUN(test_create);
	RUN(test_start_stop);
	RUN(test_take_semantics);
	RUN(test_ranges_and_mmap_state);
	RUN(test_dup_single);
	RUN(test_dup_list);
	RUN(test_destroy_in_use);
	RUN(test_null_args);
	return th_summary("test_inventory");
}
