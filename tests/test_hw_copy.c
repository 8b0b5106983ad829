/* The DMA engine's large-copy routine: every byte, every alignment, nothing outside. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hw_copy.h"
#include "hw_dma.h"
#include "hw_mem.h"

#define GUARD 128
#define FILL 0xa5

/* Bytes no copy produces by accident: a position-dependent pseudo-random sequence. */
static void fill_pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed | 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* dst[doff .. doff+len) equals src[soff ..], and every other byte of dst still holds FILL. */
static int copied_exactly(const uint8_t *dst, size_t dcap, size_t doff, const uint8_t *src, size_t soff, size_t len)
{
	if (memcmp(dst + doff, src + soff, len) != 0)
		return 0;
	for (size_t i = 0; i < doff; i++)
		if (dst[i] != FILL)
			return 0;
	for (size_t i = doff + len; i < dcap; i++)
		if (dst[i] != FILL)
			return 0;
	return 1;
}

static void test_kind_and_threshold(void)
{
	const char *k = hw_copy_stream_kind();

#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	CHECK(strcmp(k, __builtin_cpu_supports("avx2") ? "avx2" : "sse2") == 0);
#else
	CHECK(strcmp(k, "memcpy") == 0);
#endif
	CHECK(hw_copy_stream_min >= ((size_t)256 << 10));
	CHECK(hw_copy_stream_min <= ((size_t)8 << 20));
}

/* Lengths 0..640 (heads, tails and loop counts of every kind), all destination alignments. */
static void test_stream_small_lengths_all_alignments(void)
{
	enum { MAXLEN = 640, CAP = MAXLEN + 64 + GUARD };
	static const size_t soffs[] = { 0, 1, 7, 16, 31, 32, 33, 63 };
	uint8_t *src = malloc(CAP), *dst = malloc(CAP);

	CHECK(src != NULL && dst != NULL);
	fill_pattern(src, CAP, 7);
	for (size_t si = 0; si < sizeof(soffs) / sizeof(soffs[0]); si++)
		for (size_t doff = 0; doff < 64; doff++)
			for (size_t len = 0; len <= MAXLEN; len++) {
				memset(dst, FILL, CAP);
				hw_copy_stream(dst + doff, src + soffs[si], len);
				if (!copied_exactly(dst, CAP, doff, src, soffs[si], len)) {
					TH_FAIL("len %zu src offset %zu dst offset %zu", len, soffs[si], doff);
					goto out;
				}
			}
out:
	free(src);
	free(dst);
}

/* Sizes around the threshold and beyond, odd lengths, through both entry points. */
static void test_large_sizes_and_offsets(void)
{
	const size_t m = hw_copy_stream_min;
	const size_t lens[] = { m - 1, m, m + 1, m + 63, m + 127, m + 129, 3 * m + 4093, ((size_t)5 << 20) + 17 };
	static const size_t offs[][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 13, 61 }, { 63, 63 }, { 32, 8 } };
	size_t cap = ((size_t)5 << 20) + 3 * m + 4096 + GUARD;
	uint8_t *src = malloc(cap), *dst = malloc(cap);

	CHECK(src != NULL && dst != NULL);
	fill_pattern(src, cap, 11);
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
		for (size_t oi = 0; oi < sizeof(offs) / sizeof(offs[0]); oi++)
			for (int large = 0; large < 2; large++) {
				size_t len = lens[li], so = offs[oi][0], dof = offs[oi][1];

				memset(dst, FILL, cap);
				if (large)
					hw_copy_large(dst + dof, src + so, len);
				else
					hw_copy_stream(dst + dof, src + so, len);
				if (!copied_exactly(dst, cap, dof, src, so, len)) {
					TH_FAIL("%s len %zu src offset %zu dst offset %zu",
						large ? "hw_copy_large" : "hw_copy_stream", len, so, dof);
					goto out;
				}
			}
out:
	free(src);
	free(dst);
}

static uint32_t reg(struct hw_pd *pd, void *p, size_t len, uint32_t access)
{
	uint32_t k = 0;

	if (hw_mkey_reg(pd, p, (uint64_t)(uintptr_t)p, len, access, &k) != HW_OK)
		return 0;
	return k;
}

/* The engine's two paths (one element, scatter/gather) over unaligned buffers above the threshold. */
static void test_dma_large_jobs(void)
{
	const size_t len = 2 * hw_copy_stream_min + 33, cap = len + 2 * GUARD;
	uint8_t *src = malloc(cap), *dst = malloc(cap);
	struct hw_pd *pd = hw_pd_alloc(5);
	uint32_t ks, kd;
	uint64_t copied = 0;

	CHECK(src != NULL && dst != NULL && pd != NULL);
	ks = reg(pd, src, cap, 0);
	kd = reg(pd, dst, cap, HW_ACCESS_LOCAL_WRITE);
	CHECK(ks != 0 && kd != 0);
	fill_pattern(src, cap, 23);
	memset(dst, FILL, cap);
	CHECK(hw_dma_copy1(hw_pd_id(pd), hw_mkey_lookup(ks), ks, (uint64_t)(uintptr_t)src + 3, len, 0,
			   hw_mkey_lookup(kd), kd, (uint64_t)(uintptr_t)dst + 5, len,
			   HW_ACCESS_LOCAL_WRITE) == HW_OK);
	CHECK(copied_exactly(dst, cap, 5, src, 3, len));

	/* Two source elements into three destination elements, split off the line boundaries. */
	size_t a = hw_copy_stream_min + 7, b = len - a, d0 = 100, d1 = hw_copy_stream_min + 1;
	struct hw_sge s[2] = { { ks, 0, (uint64_t)(uintptr_t)src + 1, a },
			       { ks, 0, (uint64_t)(uintptr_t)src + 1 + a, b } };
	struct hw_sge d[3] = { { kd, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)dst + 9, d0 },
			       { kd, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)dst + 9 + d0, d1 },
			       { kd, HW_ACCESS_LOCAL_WRITE, (uint64_t)(uintptr_t)dst + 9 + d0 + d1, len - d0 - d1 } };

	memset(dst, FILL, cap);
	CHECK(hw_dma_copy(hw_pd_id(pd), s, 2, d, 3, &copied) == HW_OK);
	CHECK(copied == len);
	CHECK(copied_exactly(dst, cap, 9, src, 1, len));
	hw_mkey_dereg(ks);
	hw_mkey_dereg(kd);
	hw_pd_free(pd);
	free(src);
	free(dst);
}

int main(void)
{
	RUN(test_kind_and_threshold);
	RUN(test_stream_small_lengths_all_alignments);
	RUN(test_large_sizes_and_offsets);
	RUN(test_dma_large_jobs);
	return th_summary("test_hw_copy");
}
