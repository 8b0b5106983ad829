/*
 * test_buf — every doca_buf_* function: region and data segment, reference
 * counting and return to the inventory, linked lists (chain, unchain and the
 * list queries for lists of 1..8 elements), release of whole lists, keys.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_dev.h"
#include "doca_mmap.h"
#include "harness.h"
#include "mem_fixture.h"

#define MAXN 8

static uint8_t mem[8192];
static uint8_t mem2[1024];

static struct doca_mmap *mmap1, *mmap2;
static struct doca_buf_inventory *inv;

static struct doca_mmap *make_mmap(void *addr, size_t len, struct doca_dev *dev)
{
	return mem_fx_mmap(dev, addr, len, MEM_FX_PERM_DEFAULT);
}

static struct doca_buf_inventory *make_inv(size_t n)
{
	struct doca_buf_inventory *i;

	if (doca_buf_inventory_create(NULL, n, DOCA_BUF_EXTENSION_NONE, &i) != DOCA_SUCCESS)
		return NULL;
	if (doca_buf_inventory_start(i) != DOCA_SUCCESS) {
		doca_buf_inventory_destroy(i);
		return NULL;
	}
	return i;
}

static uint32_t free_count(struct doca_buf_inventory *i)
{
	uint32_t n = UINT32_MAX;

	doca_buf_inventory_get_num_free_elements(i, &n);
	return n;
}

static uint32_t num_bufs(struct doca_mmap *m)
{
	uint32_t n = UINT32_MAX;

	doca_mmap_get_num_bufs(m, &n);
	return n;
}

/* Takes n single buffers of 16 bytes each, at mem + 16*i. */
static bool take(struct doca_buf **b, int n)
{
	for (int i = 0; i < n; i++)
		if (doca_buf_inventory_buf_by_data(inv, mmap1, mem + 16 * i, 16, &b[i]) != DOCA_SUCCESS)
			return false;
	return true;
}

/* Checks that b[0..n) is exactly the list headed by b[0], element by element. */
static bool list_is(struct doca_buf **b, int n)
{
	struct doca_buf *x;
	uint32_t len;
	uint8_t f;

	if (doca_buf_get_list_len(b[0], &len) != DOCA_SUCCESS || len != (uint32_t)n)
		return false;
	for (int i = 0; i < n; i++) {
		if (doca_buf_get_next_in_list(b[i], &x) != DOCA_SUCCESS || x != (i + 1 < n ? b[i + 1] : NULL))
			return false;
		if (doca_buf_get_last_in_list(b[i], &x) != DOCA_SUCCESS || x != b[n - 1])
			return false;
		if (doca_buf_is_first_in_list(b[i], &f) != DOCA_SUCCESS || f != (i == 0))
			return false;
		if (doca_buf_is_last_in_list(b[i], &f) != DOCA_SUCCESS || f != (i == n - 1))
			return false;
		if (doca_buf_is_in_list(b[i], &f) != DOCA_SUCCESS || f != (n > 1))
			return false;
		if (i > 0 && doca_buf_get_list_len(b[i], &len) != DOCA_ERROR_NOT_PERMITTED)
			return false;
	}
	return true;
}

/* ---- region and data segment ---- */

static void test_head_len_data(void)
{
	struct doca_buf *b;
	size_t l;
	void *p;

	CHECK_OK(doca_buf_inventory_buf_by_args(inv, mmap1, mem + 16, 100, mem + 20, 30, &b));
	CHECK_OK(doca_buf_get_head(b, &p));
	CHECK(p == mem + 16);
	CHECK_OK(doca_buf_get_len(b, &l));
	CHECK(l == 100);
	CHECK_OK(doca_buf_get_data(b, &p));
	CHECK(p == mem + 20);
	CHECK_OK(doca_buf_get_data_len(b, &l));
	CHECK(l == 30);
	/* the buffer describes the application's bytes, it does not copy them */
	memset(mem, 0, 256);
	memset(p, 0xab, 30);
	CHECK(mem[19] == 0 && mem[20] == 0xab && mem[49] == 0xab && mem[50] == 0);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));

	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, mmap1, mem + 64, 64, &b));
	CHECK_OK(doca_buf_get_head(b, &p));
	CHECK(p == mem + 64);
	CHECK_OK(doca_buf_get_data(b, &p));
	CHECK(p == mem + 64);
	CHECK_OK(doca_buf_get_data_len(b, &l));
	CHECK(l == 0);
	CHECK_OK(doca_buf_get_len(b, &l));
	CHECK(l == 64);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
}

static void test_set_data(void)
{
	struct doca_buf *b;
	uint8_t *h = mem + 256;
	size_t l;
	void *p;

	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, mmap1, h, 128, &b));
	CHECK_OK(doca_buf_set_data(b, h + 10, 20));
	CHECK_OK(doca_buf_get_data(b, &p));
	CHECK(p == h + 10);
	CHECK_OK(doca_buf_get_data_len(b, &l));
	CHECK(l == 20);
	CHECK_OK(doca_buf_set_data(b, h, 128)); /* the whole region */
	CHECK_OK(doca_buf_set_data(b, h + 127, 1));
	CHECK_OK(doca_buf_set_data(b, h + 128, 0)); /* empty, at the end */
	CHECK_OK(doca_buf_set_data(b, h + 5, 0));
	CHECK_OK(doca_buf_set_data(b, h + 10, 20));

	/* outside the region: refused, segment unchanged */
	CHECK_ERR(doca_buf_set_data(b, h - 1, 10), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, h, 129), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, h + 100, 29), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, h + 128, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, h + 129, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, h + 1, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, mem2, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(b, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_get_data(b, &p));
	CHECK(p == h + 10);
	CHECK_OK(doca_buf_get_data_len(b, &l));
	CHECK(l == 20);
	/* head and len never move */
	CHECK_OK(doca_buf_get_head(b, &p));
	CHECK(p == h);
	CHECK_OK(doca_buf_get_len(b, &l));
	CHECK(l == 128);

	CHECK_OK(doca_buf_reset_data_len(b));
	CHECK_OK(doca_buf_get_data(b, &p));
	CHECK(p == h);
	CHECK_OK(doca_buf_get_data_len(b, &l));
	CHECK(l == 0);
	CHECK_OK(doca_buf_get_len(b, &l));
	CHECK(l == 128);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
}

/* ---- reference counting ---- */

/* A buffer has one reference: refcount_add is documented as not supported, and changes nothing. */
static void test_refcount(void)
{
	uint32_t free0 = free_count(inv);
	struct doca_buf *b;
	uint16_t rc;
	size_t l;

	CHECK_OK(doca_buf_inventory_buf_by_data(inv, mmap1, mem, 32, &b));
	CHECK(free_count(inv) == free0 - 1);
	CHECK(num_bufs(mmap1) == 1);
	CHECK_OK(doca_buf_get_refcount(b, &rc));
	CHECK(rc == 1);
	rc = 7;
	CHECK_ERR(doca_buf_refcount_add(b, &rc), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(rc == 7);
	CHECK_ERR(doca_buf_refcount_add(b, NULL), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_buf_get_refcount(b, &rc));
	CHECK(rc == 1);
	rc = 0;
	CHECK_OK(doca_buf_refcount_rm(b, &rc));
	CHECK(rc == 1);
	CHECK(free_count(inv) == free0);
	CHECK(num_bufs(mmap1) == 0);
	/* a released buffer is refused */
	CHECK_ERR(doca_buf_refcount_rm(b, &rc), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_refcount(b, &rc), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_len(b, &l), DOCA_ERROR_INVALID_VALUE);
	CHECK(free_count(inv) == free0);
}

static void test_single_is_list_of_one(void)
{
	struct doca_buf *b[1];

	CHECK(take(b, 1));
	CHECK(list_is(b, 1));
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
}

/* Lists of 1..8 built one element at a time, then split at every position. */
static void test_chain_unchain_all_sizes(void)
{
	uint32_t free0 = free_count(inv);
	struct doca_buf *b[MAXN];

	for (int n = 1; n <= MAXN; n++) {
		for (int cut = 1; cut < n + 1; cut++) {
			CHECK(take(b, n));
			for (int i = 1; i < n; i++) {
				CHECK_OK(doca_buf_chain_list(b[0], b[i]));
				CHECK(list_is(b, i + 1));
			}
			if (cut < n) {
				CHECK_OK(doca_buf_unchain_list(b[0], b[cut]));
				CHECK(list_is(b, cut));
				CHECK(list_is(b + cut, n - cut));
				/* and back together */
				CHECK_OK(doca_buf_chain_list(b[0], b[cut]));
				CHECK(list_is(b, n));
				CHECK_OK(doca_buf_unchain_list(b[0], b[cut]));
				CHECK_OK(doca_buf_refcount_rm(b[cut], NULL));
			}
			/* the head releases every element that is left */
			CHECK(free_count(inv) == free0 - (uint32_t)cut);
			CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
			CHECK(free_count(inv) == free0);
			CHECK(num_bufs(mmap1) == 0);
		}
	}
}

/* Lists of sizes a and b (a + b <= 8) joined in one call. */
static void test_chain_two_lists(void)
{
	uint32_t free0 = free_count(inv);
	struct doca_buf *b[MAXN];

	for (int n = 2; n <= MAXN; n++) {
		for (int a = 1; a < n; a++) {
			CHECK(take(b, n));
			for (int i = 1; i < a; i++)
				CHECK_OK(doca_buf_chain_list(b[0], b[i]));
			for (int i = a + 1; i < n; i++)
				CHECK_OK(doca_buf_chain_list(b[a], b[i]));
			CHECK(list_is(b, a));
			CHECK(list_is(b + a, n - a));
			CHECK_OK(doca_buf_chain_list(b[0], b[a]));
			CHECK(list_is(b, n));
			/* split in the middle of the second part, then of the first */
			if (n - a > 1) {
				CHECK_OK(doca_buf_unchain_list(b[0], b[a + 1]));
				CHECK(list_is(b, a + 1));
				CHECK(list_is(b + a + 1, n - a - 1));
				CHECK_OK(doca_buf_chain_list(b[0], b[a + 1]));
			}
			CHECK(list_is(b, n));
			CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
			CHECK(free_count(inv) == free0);
		}
	}
}

/* The 2.2 names walk the same lists: each answer checked element by element, and their refusals. */
static bool list22_is(struct doca_buf **b, int n)
{
	struct doca_buf *x;
	uint32_t len;
	bool f;

	if (doca_buf_list_num_elements(b[0], &len) != DOCA_SUCCESS || len != (uint32_t)n)
		return false;
	for (int i = 0; i < n; i++) {
		if (doca_buf_list_next(b[i], &x) != DOCA_SUCCESS || x != (i + 1 < n ? b[i + 1] : NULL))
			return false;
		if (doca_buf_list_last(b[i], &x) != DOCA_SUCCESS || x != b[n - 1])
			return false;
		if (doca_buf_list_is_first(b[i], &f) != DOCA_SUCCESS || f != (i == 0))
			return false;
		if (doca_buf_list_is_last(b[i], &f) != DOCA_SUCCESS || f != (i == n - 1))
			return false;
	}
	return true;
}

static void test_list_22_names(void)
{
	uint32_t free0 = free_count(inv), len = 7;
	struct doca_buf *b[4];
	bool f = true;

	CHECK(take(b, 4));
	CHECK(list22_is(b, 1));
	CHECK_OK(doca_buf_list_chain(b[0], b[1]));
	CHECK_OK(doca_buf_list_chain(b[2], b[3]));
	CHECK(list22_is(b, 2) && list22_is(b + 2, 2));
	CHECK_OK(doca_buf_list_chain(b[0], b[2]));
	CHECK(list22_is(b, 4));
	/* The count is the head's: another element's is refused. */
	CHECK_ERR(doca_buf_list_num_elements(b[1], &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK(len == 7);
	/* Both chained lists must be heads; an element of itself is no second list. */
	CHECK_ERR(doca_buf_list_chain(b[0], b[3]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_list_chain(b[1], b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK(list22_is(b, 4));
	/* Split before the third: two lists of two; an element not in the list is refused. */
	CHECK_OK(doca_buf_list_unchain(b[0], b[2]));
	CHECK(list22_is(b, 2) && list22_is(b + 2, 2));
	CHECK_ERR(doca_buf_list_unchain(b[0], b[3]), DOCA_ERROR_INVALID_VALUE);
	CHECK(list22_is(b, 2) && list22_is(b + 2, 2));
	/* NULL anywhere: refused, nothing written. */
	CHECK_ERR(doca_buf_list_is_last(b[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_list_is_first(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK(f);
	CHECK_ERR(doca_buf_list_next(NULL, &b[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_list_num_elements(b[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_list_chain(NULL, b[2]), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK_OK(doca_buf_refcount_rm(b[2], NULL));
	CHECK(free_count(inv) == free0);
}

static void test_chain_errors(void)
{
	struct doca_buf *b[5], *x;
	uint8_t f;

	CHECK(take(b, 5));
	CHECK_ERR(doca_buf_chain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_chain_list(b[0], b[1]));
	CHECK_OK(doca_buf_chain_list(b[0], b[2]));
	/* to itself, or with an element of itself, either way round */
	CHECK_ERR(doca_buf_chain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[0], b[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[0], b[2]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[2], b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[1], b[0]), DOCA_ERROR_INVALID_VALUE);
	/* both must be heads */
	CHECK_ERR(doca_buf_chain_list(b[1], b[3]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[3], b[2]), DOCA_ERROR_INVALID_VALUE);
	CHECK(list_is(b, 3));
	CHECK_OK(doca_buf_chain_list(b[3], b[4]));
	CHECK_ERR(doca_buf_chain_list(b[0], b[4]), DOCA_ERROR_INVALID_VALUE);
	CHECK(list_is(b, 3));
	CHECK(list_is(b + 3, 2));
	/* NULL */
	CHECK_ERR(doca_buf_chain_list(NULL, b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(b[0], NULL), DOCA_ERROR_INVALID_VALUE);

	/* unchain: element not in the list, head not a head, same buffer */
	CHECK_ERR(doca_buf_unchain_list(b[0], b[3]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(b[0], b[4]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(b[3], b[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(b[1], b[2]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(NULL, b[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(b[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(list_is(b, 3));
	CHECK(list_is(b + 3, 2));

	/* inner elements cannot be released on their own */
	CHECK_ERR(doca_buf_refcount_rm(b[1], NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_refcount_rm(b[2], NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_refcount_rm(b[4], NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK(list_is(b, 3));
	CHECK_OK(doca_buf_get_last_in_list(b[1], &x));
	CHECK(x == b[2]);
	CHECK_OK(doca_buf_is_in_list(b[4], &f));
	CHECK(f == 1);
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK_OK(doca_buf_refcount_rm(b[3], NULL));
	CHECK(num_bufs(mmap1) == 0);
	/* chaining with a released buffer */
	CHECK(take(b, 1));
	CHECK_ERR(doca_buf_chain_list(b[0], b[1]), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK_ERR(doca_buf_chain_list(b[0], b[0]), DOCA_ERROR_INVALID_VALUE);
}

/* Releasing a list head releases every element. */
static void test_release_list(void)
{
	uint32_t free0 = free_count(inv);
	struct doca_buf *b[6], *x;
	uint16_t rc;

	CHECK(take(b, 4));
	for (int i = 1; i < 4; i++)
		CHECK_OK(doca_buf_chain_list(b[0], b[i]));
	CHECK(list_is(b, 4));
	CHECK(free_count(inv) == free0 - 4);
	CHECK_ERR(doca_buf_refcount_rm(b[2], &rc), DOCA_ERROR_NOT_PERMITTED); /* an inner element */
	CHECK_OK(doca_buf_refcount_rm(b[0], &rc));
	CHECK(rc == 1);
	CHECK(free_count(inv) == free0);
	CHECK(num_bufs(mmap1) == 0);
	for (int i = 0; i < 4; i++)
		CHECK_ERR(doca_buf_get_refcount(b[i], &rc), DOCA_ERROR_INVALID_VALUE);

	/* elements from two mmaps and two inventories go back where they came from */
	{
		struct doca_buf_inventory *inv2 = make_inv(3);
		uint32_t free2;

		CHECK(inv2 != NULL);
		CHECK(take(b, 2));
		CHECK_OK(doca_buf_inventory_buf_by_data(inv2, mmap2, mem2, 10, &b[2]));
		CHECK_OK(doca_buf_inventory_buf_by_data(inv2, mmap2, mem2 + 10, 10, &b[3]));
		CHECK_OK(doca_buf_chain_list(b[0], b[2]));
		CHECK_OK(doca_buf_chain_list(b[1], b[3]));
		CHECK_OK(doca_buf_chain_list(b[0], b[1]));
		x = b[1];
		b[1] = b[2];
		b[2] = x;
		CHECK(list_is(b, 4));
		CHECK(num_bufs(mmap1) == 2 && num_bufs(mmap2) == 2);
		CHECK_OK(doca_buf_inventory_get_num_free_elements(inv2, &free2));
		CHECK(free2 == 1);
		CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
		CHECK(num_bufs(mmap1) == 0 && num_bufs(mmap2) == 0);
		CHECK(free_count(inv) == free0);
		CHECK_OK(doca_buf_inventory_get_num_free_elements(inv2, &free2));
		CHECK(free2 == 3);
		CHECK_OK(doca_buf_inventory_destroy(inv2));
	}
}

/* After a split, each part releases only its own elements. */
static void test_unchain_then_release(void)
{
	uint32_t free0 = free_count(inv);
	struct doca_buf *b[6];

	CHECK(take(b, 6));
	for (int i = 1; i < 6; i++)
		CHECK_OK(doca_buf_chain_list(b[0], b[i]));
	CHECK_OK(doca_buf_unchain_list(b[0], b[4]));
	CHECK_OK(doca_buf_unchain_list(b[0], b[2]));
	CHECK(list_is(b, 2));
	CHECK(list_is(b + 2, 2));
	CHECK(list_is(b + 4, 2));
	CHECK_OK(doca_buf_refcount_rm(b[2], NULL));
	CHECK(free_count(inv) == free0 - 4);
	CHECK(list_is(b, 2));
	CHECK(list_is(b + 4, 2));
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK(free_count(inv) == free0 - 2);
	CHECK_OK(doca_buf_refcount_rm(b[4], NULL));
	CHECK(free_count(inv) == free0);
}

/* ---- keys ---- */

static void test_get_mkey(void)
{
	struct doca_devinfo **list;
	struct doca_dev *d0 = NULL, *d1 = NULL;
	struct doca_mmap *m;
	struct doca_buf *b, *b2;
	uint32_t n, k = 0, k2 = 0;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n >= 2);
	CHECK_OK(doca_dev_open(list[0], &d0));
	CHECK_OK(doca_dev_open(list[1], &d1));
	CHECK_OK(doca_devinfo_list_destroy(list));
	CHECK((m = make_mmap(mem, sizeof(mem), d0)) != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 1024, 64, &b2));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k));
	CHECK(k != 0);
	/* one key per (mmap, device): every buffer of the mmap has it */
	CHECK_OK(doca_buf_get_mkey(b2, d0, &k2));
	CHECK(k2 == k);
	k2 = 77;
	CHECK_ERR(doca_buf_get_mkey(b, d1, &k2), DOCA_ERROR_NOT_FOUND);
	CHECK(k2 == 77);
	CHECK_ERR(doca_buf_get_mkey(b, NULL, &k2), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_mkey(b, d0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_mkey(NULL, d0, &k2), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_refcount_rm(b2, NULL));
	/* an mmap without devices has no keys */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, mmap1, mem, 64, &b2));
	CHECK_ERR(doca_buf_get_mkey(b2, d0, &k2), DOCA_ERROR_NOT_FOUND);
	CHECK_OK(doca_buf_refcount_rm(b2, NULL));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_ERR(doca_buf_get_mkey(b, d0, &k2), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/* ---- NULL arguments ---- */

static void test_null_args(void)
{
	struct doca_buf *b, *x;
	uint16_t rc;
	uint32_t n;
	uint8_t f;
	size_t l;
	void *p;

	CHECK_ERR(doca_buf_refcount_add(NULL, &rc), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_buf_refcount_rm(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_refcount(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_len(NULL, &l), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_head(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_data_len(NULL, &l), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_data(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_set_data(NULL, mem, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_reset_data_len(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_next_in_list(NULL, &x), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_last_in_list(NULL, &x), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_first_in_list(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_last_in_list(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_in_list(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_list_len(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_chain_list(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_unchain_list(NULL, NULL), DOCA_ERROR_INVALID_VALUE);

	CHECK_OK(doca_buf_inventory_buf_by_data(inv, mmap1, mem, 8, &b));
	CHECK_ERR(doca_buf_get_refcount(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_len(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_head(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_data_len(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_data(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_next_in_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_last_in_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_first_in_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_last_in_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_is_in_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_get_list_len(b, NULL), DOCA_ERROR_INVALID_VALUE);
	/* optional outputs */
	CHECK_OK(doca_buf_get_refcount(b, &rc));
	CHECK(rc == 1);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK(num_bufs(mmap1) == 0);
}

int main(void)
{
	mmap1 = make_mmap(mem, sizeof(mem), NULL);
	mmap2 = make_mmap(mem2, sizeof(mem2), NULL);
	inv = make_inv(2 * MAXN);
	if (mmap1 == NULL || mmap2 == NULL || inv == NULL) {
		fprintf(stderr, "test_buf: setup failed\n");
		return 1;
	}
	RUN(test_head_len_data);
	RUN(test_set_data);
	RUN(test_refcount);
	RUN(test_single_is_list_of_one);
	RUN(test_chain_unchain_all_sizes);
	RUN(test_chain_two_lists);
	RUN(test_chain_errors);
	RUN(test_list_22_names);
	RUN(test_release_list);
	RUN(test_unchain_then_release);
	RUN(test_get_mkey);
	RUN(test_null_args);
	if (doca_buf_inventory_destroy(inv) != DOCA_SUCCESS || doca_mmap_destroy(mmap1) != DOCA_SUCCESS ||
	    doca_mmap_destroy(mmap2) != DOCA_SUCCESS) {
		fprintf(stderr, "test_buf: teardown failed (buffers left out)\n");
		th_failed++;
	}
	return th_summary("test_buf");
}
