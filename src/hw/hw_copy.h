/*
 * hw_copy — the DMA engine's copy of large buffers.
 *
 * A job that moves more than the caches hold gains nothing from leaving its
 * destination in them: ordinary stores first read every destination line in
 * (read-for-ownership) and then evict it again, so a copy costs three memory
 * transfers per line instead of two. Above hw_copy_stream_min bytes the engine
 * writes with non-temporal (streaming) stores instead; below it memcpy, which
 * keeps cache-resident copies in the cache.
 */
#ifndef HW_COPY_H_
#define HW_COPY_H_

#include <stddef.h>
#include <string.h>

/*
 * From this many bytes on a copy streams: the per-core L2 size (sysconf; 1 MiB
 * when unknown, kept within 256 KiB .. 8 MiB), set when the library loads.
 * Measured on a 2-vCPU AMD EPYC guest (L2 1 MiB per core): from DRAM,
 * streaming stores copied 1.05-1.55x faster than memcpy at every size from
 * 64 KiB to 64 MiB; with both buffers within 2 MiB memcpy was 1.36-1.71x
 * faster, within 8 MiB (L3) 1.06-1.26x. A job larger than L2 cannot stay in the core's own
 * cache, and jobs that large mostly move data nobody touched just before.
 */
extern size_t hw_copy_stream_min;

/* Which streaming loop this CPU runs: "avx2", "sse2" or "memcpy" (no streaming stores). */
const char *hw_copy_stream_kind(void);

/*
 * Copies len bytes with streaming stores, whatever len and alignments: the
 * destination's unaligned head and tail take ordinary stores. Ends with a
 * store fence, so the bytes are visible to other cores once it returns, as
 * a completion must guarantee. dst and src must not overlap.
 */
void hw_copy_stream(void *dst, const void *src, size_t len);

/* memcpy below hw_copy_stream_min, hw_copy_stream from there on. */
static inline void hw_copy_large(void *dst, const void *src, size_t len)
{
	if (len >= hw_copy_stream_min)
		hw_copy_stream(dst, src, len);
	else
		memcpy(dst, src, len);
}

#endif /* HW_COPY_H_ */
