/* The emulated device's memory-key table and DMA engine. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "hw_dma.h"
#include "hw_mem.h"

static void test_reg_translate(void)
{
	uint8_t mem[256];
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t key = 0;
	uint8_t *p = NULL;

	CHECK(pd != NULL);
	CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), HW_ACCESS_LOCAL_WRITE, &key) == HW_OK);
	CHECK(key != 0);
	CHECK(hw_mkey_translate(key, hw_pd_id(pd), (uint64_t)(uintptr_t)mem + 10, 20, HW_ACCESS_LOCAL_WRITE, &p) ==
	      HW_OK);
	CHECK(p == mem + 10);
	CHECK(hw_mkey_translate(key, 0, (uint64_t)(uintptr_t)mem + 250, 6, 0, &p) == HW_OK);
	CHECK(hw_mkey_translate(key, 0, (uint64_t)(uintptr_t)mem + 250, 7, 0, &p) == HW_ERR_BOUNDS);
	CHECK(hw_mkey_translate(key, 0, (uint64_t)(uintptr_t)mem - 1, 2, 0, &p) == HW_ERR_BOUNDS);
	CHECK(hw_mkey_translate(key, 0, UINT64_MAX - 2, 8, 0, &p) == HW_ERR_BOUNDS);
	CHECK(hw_mkey_translate(key, 0, (uint64_t)(uintptr_t)mem, 1, HW_ACCESS_PEER_WRITE, &p) == HW_ERR_ACCESS);
	CHECK(hw_mkey_translate(key, hw_pd_id(pd) + 1000, (uint64_t)(uintptr_t)mem, 1, 0, &p) == HW_ERR_PD);
	CHECK(hw_mkey_dereg(key) == HW_OK);
	CHECK(hw_mkey_translate(key, 0, (uint64_t)(uintptr_t)mem, 1, 0, &p) == HW_ERR_KEY);
	CHECK(hw_mkey_dereg(key) == HW_ERR_KEY);
	hw_pd_free(pd);
}

static void test_stale_key_refused_after_reuse(void)
{
	uint8_t mem[64];
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t k1, k2;
	uint8_t *p;

	CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), 0, &k1) == HW_OK);
	CHECK(hw_mkey_dereg(k1) == HW_OK);
	/* Indices are not reused at once (device-wide numbering): go round until k1's comes back. */
	for (int i = 0; i < 1 << 21; i++) {
		CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), 0, &k2) == HW_OK);
		if ((k1 >> 8) == (k2 >> 8))
			break;
		CHECK(hw_mkey_dereg(k2) == HW_OK);
	}
	CHECK((k1 >> 8) == (k2 >> 8)); /* same slot reused ... */
	CHECK(k1 != k2);	       /* ... with a new tag */
	CHECK(hw_mkey_translate(k1, 0, (uint64_t)(uintptr_t)mem, 1, 0, &p) == HW_ERR_KEY);
	CHECK(hw_mkey_dereg(k2) == HW_OK);
	hw_pd_free(pd);
}

static void test_many_keys(void)
{
	enum { N = 10000 };
	static uint32_t keys[N];
	uint8_t mem[16];
	struct hw_pd *pd = hw_pd_alloc(2);
	uint8_t *p;

	for (int i = 0; i < N; i++)
		CHECK(hw_mkey_reg(pd, mem, 1000u * (uint64_t)i, sizeof(mem), 0, &keys[i]) == HW_OK);
	for (int i = 0; i < N; i++) {
		CHECK(hw_mkey_translate(keys[i], 0, 1000u * (uint64_t)i + 3, 4, 0, &p) == HW_OK);
		CHECK(p == mem + 3);
	}
	for (int i = 0; i < N; i++)
		CHECK(hw_mkey_dereg(keys[i]) == HW_OK);
	hw_pd_free(pd);
}

static void test_invalid_args(void)
{
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t key;

	CHECK(hw_mkey_reg(NULL, &key, 0, 1, 0, &key) == HW_ERR_INVAL);
	CHECK(hw_mkey_reg(pd, NULL, 0, 1, 0, &key) == HW_ERR_INVAL);
	CHECK(hw_mkey_reg(pd, &key, 0, 1, 0, NULL) == HW_ERR_INVAL);
	CHECK(hw_mkey_lookup(0) == NULL);
	CHECK(hw_mkey_lookup(0xffffffffu) == NULL);
	hw_pd_free(pd);
}

static uint32_t reg(struct hw_pd *pd, void *m, size_t n, uint32_t acc)
{
	uint32_t k = 0;

	hw_mkey_reg(pd, m, (uint64_t)(uintptr_t)m, n, acc, &k);
	return k;
}

static void test_dma_sg(void)
{
	uint8_t a[100], b[100], out[100];
	struct hw_pd *pd = hw_pd_alloc(3);
	uint32_t ka = reg(pd, a, sizeof(a), 0), kb = reg(pd, b, sizeof(b), 0);
	uint32_t ko = reg(pd, out, sizeof(out), HW_ACCESS_LOCAL_WRITE);
	uint64_t copied = 0;

	for (int i = 0; i < 100; i++) {
		a[i] = (uint8_t)i;
		b[i] = (uint8_t)(200 - i);
	}
	memset(out, 0xee, sizeof(out));
	struct hw_sge src[2] = { { ka, 0, (uint64_t)(uintptr_t)a + 5, 30 }, { kb, 0, (uint64_t)(uintptr_t)b, 20 } };
	struct hw_sge dst[3] = { { ko, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)out, 0 },
				 { ko, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)out, 7 },
				 { ko, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)out + 50, 50 } };

	CHECK(hw_dma_copy(hw_pd_id(pd), src, 2, dst, 3, &copied) == HW_OK);
	CHECK(copied == 50);
	CHECK(memcmp(out, a + 5, 7) == 0);
	CHECK(memcmp(out + 50, a + 12, 23) == 0);
	CHECK(memcmp(out + 73, b, 20) == 0);
	CHECK(out[7] == 0xee && out[49] == 0xee && out[93] == 0xee);
	hw_mkey_dereg(ka);
	hw_mkey_dereg(kb);
	hw_mkey_dereg(ko);
	hw_pd_free(pd);
}

static void test_dma_refusals_touch_nothing(void)
{
	uint8_t a[64], out[64], ro[64];
	struct hw_pd *pd = hw_pd_alloc(4);
	uint32_t ka = reg(pd, a, sizeof(a), HW_ACCESS_LOCAL_WRITE), ko = reg(pd, out, sizeof(out), HW_ACCESS_LOCAL_WRITE);
	uint32_t kr = reg(pd, ro, sizeof(ro), 0);
	uint64_t copied;

	memset(a, 1, sizeof(a));
	memset(out, 2, sizeof(out));
	memset(ro, 3, sizeof(ro));
	struct hw_sge s = { ka, 0, (uint64_t)(uintptr_t)a, 64 };
	struct hw_sge small = { ko, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)out, 63 };
	struct hw_sge rod = { kr, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)ro, 64 };
	struct hw_sge self = { ka, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)a + 8, 56 };
	struct hw_sge s8 = { ka, 0, (uint64_t)(uintptr_t)a, 16 };

	CHECK(hw_dma_copy(hw_pd_id(pd), &s, 1, &small, 1, &copied) == HW_ERR_LENGTH);
	CHECK(hw_dma_copy(hw_pd_id(pd), &s, 1, &rod, 1, &copied) == HW_ERR_ACCESS);
	CHECK(hw_dma_copy(hw_pd_id(pd), &s8, 1, &self, 1, &copied) == HW_ERR_OVERLAP);
	CHECK(hw_dma_copy(hw_pd_id(pd) + 77, &s, 1, &small, 1, &copied) == HW_ERR_PD);
	for (int i = 0; i < 64; i++)
		CHECK(a[i] == 1 && out[i] == 2 && ro[i] == 3);
	hw_mkey_dereg(ka);
	hw_mkey_dereg(ko);
	hw_mkey_dereg(kr);
	hw_pd_free(pd);
}

/* Only keys marked invalidatable may be freed; a free key refuses every access until made valid again. */
static void test_invalidate(void)
{
	uint8_t mem[64];
	struct hw_pd *pd = hw_pd_alloc(1);
	uint32_t plain = 0, inv = 0, reused = 0;
	uint8_t *p = NULL;
	const struct hw_mkey *mk;

	CHECK(pd != NULL);
	CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), HW_ACCESS_REMOTE_WRITE, &plain) == HW_OK);
	CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), HW_ACCESS_REMOTE_WRITE, &inv) == HW_OK);
	CHECK(hw_mkey_invalidate(plain, 0) == HW_ERR_ACCESS);
	CHECK(hw_mkey_set_invalidatable(inv) == HW_OK);
	CHECK(hw_mkey_invalidate(inv, hw_pd_id(pd) + 1000) == HW_ERR_PD);
	CHECK(hw_mkey_translate(inv, 0, (uint64_t)(uintptr_t)mem, 8, 0, &p) == HW_OK);
	CHECK(hw_mkey_invalidate(inv, hw_pd_id(pd)) == HW_OK);
	CHECK(hw_mkey_invalidate(inv, 0) == HW_OK); /* already free: no error */
	CHECK(hw_mkey_translate(inv, 0, (uint64_t)(uintptr_t)mem, 8, 0, &p) == HW_ERR_KEY);
	mk = hw_mkey_lookup(inv); /* still the owner's entry, but a cached view refuses it too */
	CHECK(mk != NULL && hw_mkey_check(mk, 0, (uint64_t)(uintptr_t)mem, 8, 0, &p) == HW_ERR_KEY);
	CHECK(hw_mkey_translate(plain, 0, (uint64_t)(uintptr_t)mem, 8, 0, &p) == HW_OK);
	CHECK(hw_mkey_revalidate(inv) == HW_OK);
	CHECK(hw_mkey_translate(inv, 0, (uint64_t)(uintptr_t)mem, 8, HW_ACCESS_REMOTE_WRITE, &p) == HW_OK);
	CHECK(hw_mkey_dereg(inv) == HW_OK);
	CHECK(hw_mkey_invalidate(inv, 0) == HW_ERR_KEY && hw_mkey_set_invalidatable(inv) == HW_ERR_KEY);
	CHECK(hw_mkey_revalidate(inv) == HW_ERR_KEY);
	/* a slot reused by a plain registration starts not invalidatable and not free */
	CHECK(hw_mkey_reg(pd, mem, (uint64_t)(uintptr_t)mem, sizeof(mem), 0, &reused) == HW_OK);
	CHECK(hw_mkey_invalidate(reused, 0) == HW_ERR_ACCESS);
	CHECK(hw_mkey_dereg(reused) == HW_OK && hw_mkey_dereg(plain) == HW_OK);
	hw_pd_free(pd);
}

int main(void)
{
	RUN(test_reg_translate);
	RUN(test_stale_key_refused_after_reuse);
	RUN(test_many_keys);
	RUN(test_invalid_args);
	RUN(test_dma_sg);
	RUN(test_dma_refusals_touch_nothing);
	RUN(test_invalidate);
	return th_summary("test_hw_mem");
}
