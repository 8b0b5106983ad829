/*
 * hw_copy — streaming copies: unaligned loads, aligned non-temporal stores.
 *
 * The destination is aligned to a cache line first, so that every line is
 * written whole by consecutive streaming stores and leaves the write-combining
 * buffer as one full-line write; the source may have any alignment (unaligned
 * loads cost nothing extra when they do not split a line, little when they do).
 * The loop for the widest vectors the CPU has is chosen at run time, so the
 * library needs no -m flags and runs on any x86-64.
 */
#include "hw_copy.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HW_COPY_X86 1
#endif

#define KIB ((size_t)1 << 10)
#define STREAM_MIN_DEFAULT (1024 * KIB)
#define STREAM_MIN_LOW (256 * KIB)
#define STREAM_MIN_HIGH (8192 * KIB)

size_t hw_copy_stream_min = STREAM_MIN_DEFAULT;

/* Runs when the library loads, before any job can copy. */
__attribute__((constructor)) static void hw_copy_init(void)
{
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	size_t min = l2 > 0 ? (size_t)l2 : STREAM_MIN_DEFAULT;

	if (min < STREAM_MIN_LOW)
		min = STREAM_MIN_LOW;
	if (min > STREAM_MIN_HIGH)
		min = STREAM_MIN_HIGH;
	hw_copy_stream_min = min;
}

#define LINE 64
#define STEP 128 /* bytes per loop iteration: two lines, four or eight loads in flight */

#ifdef HW_COPY_X86
/* Bytes up to the next line boundary of d, at most len. */
static size_t head_len(const uint8_t *d, size_t len)
{
	size_t h = (size_t)(-(uintptr_t)d & (LINE - 1));

	return h < len ? h : len;
}

__attribute__((target("avx2"))) static void stream_avx2(uint8_t *d, const uint8_t *s, size_t len)
{
	size_t h = head_len(d, len), n;

	memcpy(d, s, h);
	d += h;
	s += h;
	len -= h;
	for (n = len / STEP; n > 0; n--, d += STEP, s += STEP) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s);
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
		__m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));

		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	/* Order the streaming stores before anything the caller publishes next. */
	_mm_sfence();
	memcpy(d, s, len % STEP);
}

static void stream_sse2(uint8_t *d, const uint8_t *s, size_t len)
{
	size_t h = head_len(d, len), n;

	memcpy(d, s, h);
	d += h;
	s += h;
	len -= h;
	for (n = len / STEP; n > 0; n--, d += STEP, s += STEP) {
		__m128i v[STEP / 16];

		for (int i = 0; i < STEP / 16; i++)
			v[i] = _mm_loadu_si128((const __m128i *)(s + 16 * i));
		for (int i = 0; i < STEP / 16; i++)
			_mm_stream_si128((__m128i *)(d + 16 * i), v[i]);
	}
	_mm_sfence();
	memcpy(d, s, len % STEP);
}

/* libgcc fills its CPU model in a constructor; the init call makes that explicit. */
static int have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

const char *hw_copy_stream_kind(void)
{
	return have_avx2() ? "avx2" : "sse2";
}

void hw_copy_stream(void *dst, const void *src, size_t len)
{
	if (have_avx2())
		stream_avx2(dst, src, len);
	else
		stream_sse2(dst, src, len);
}
#else
/* No streaming stores known for this architecture: the C library's copy. */
const char *hw_copy_stream_kind(void)
{
	return "memcpy";
}

void hw_copy_stream(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}
#endif
