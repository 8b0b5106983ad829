/*
 * DMA copy, host side (run with SOFTDPU_SIDE=host, start dma_copy_dpu first):
 * exports a buffer to the DPU, sends the export descriptor and the buffer's
 * address over the comm channel, and waits while the DPU reads the buffer
 * with a DMA job and writes its answer back with another. Then checks every
 * byte of the answer.
 *
 * Usage: dma_copy_host [size-in-bytes]   (default 1 MiB)
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>

#include "dma_copy_proto.h"
#include "sample_common.h"

DOCA_LOG_REGISTER(DMA_COPY_HOST);

static doca_error_t export_buffer(struct doca_dev *dev, uint8_t *buf, size_t len, struct doca_mmap **mmap,
				  const void **desc, size_t *desc_len)
{
	doca_error_t r = doca_mmap_create(NULL, mmap);

	if (r != DOCA_SUCCESS)
		return r;
	r = doca_mmap_dev_add(*mmap, dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_memrange(*mmap, buf, len);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_permissions(*mmap, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(*mmap);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_export_dpu(*mmap, dev, desc, desc_len);
	return r;
}

/* Sends descriptor and buffer information, then waits for the DPU's report. */
static doca_error_t exchange(struct sample_cc *cc, const void *desc, size_t desc_len, uint8_t *buf, size_t len,
			     struct dma_copy_done *done)
{
	struct dma_copy_info info = { .magic = DMA_COPY_MAGIC, .addr = (uint64_t)(uintptr_t)buf, .len = len };
	size_t n = sizeof(*done);
	doca_error_t r;

	r = sample_cc_send(cc, desc, desc_len);
	if (r == DOCA_SUCCESS)
		r = sample_cc_send(cc, &info, sizeof(info));
	if (r == DOCA_SUCCESS)
		r = sample_cc_recv(cc, done, &n);
	if (r == DOCA_SUCCESS && (n != sizeof(*done) || done->magic != DMA_COPY_MAGIC))
		r = DOCA_ERROR_UNEXPECTED;
	return r;
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);
	struct doca_mmap *mmap = NULL;
	struct dma_copy_done done;
	struct doca_dev *dev = NULL;
	struct sample_cc cc = { 0 };
	const void *desc;
	size_t desc_len, bad = 0;
	uint8_t *buf = malloc(len ? len : 1);
	doca_error_t r;

	if (buf == NULL || len == 0 || len > DMA_COPY_MAX)
		return 1;
	for (size_t i = 0; i < len; i++)
		buf[i] = dma_copy_pattern(i);
	r = sample_open_dev(SAMPLE_HOST_PCI, &dev);
	if (r == DOCA_SUCCESS)
		r = export_buffer(dev, buf, len, &mmap, &desc, &desc_len);
	if (r == DOCA_SUCCESS)
		r = sample_cc_client(&cc, dev, DMA_COPY_SERVICE);
	if (r == DOCA_SUCCESS)
		r = exchange(&cc, desc, desc_len, buf, len, &done);
	if (r == DOCA_SUCCESS && done.status == DOCA_SUCCESS) {
		for (size_t i = 0; i < len; i++)
			bad += buf[i] != dma_copy_answer(i);
		printf("host: the DPU read %zu bytes (checksum %#llx, %s) and wrote its answer back: %s\n", len,
		       (unsigned long long)done.checksum,
		       done.checksum == dma_copy_checksum_expected(len) ? "right" : "WRONG",
		       bad == 0 ? "all bytes right" : "BYTES WRONG");
	} else {
		DOCA_LOG_ERR("DMA copy failed: %s",
			     doca_get_error_string(r != DOCA_SUCCESS ? r : (doca_error_t)done.status));
	}
	sample_cc_close(&cc);
	if (mmap != NULL)
		doca_mmap_destroy(mmap);
	if (dev != NULL)
		doca_dev_close(dev);
	free(buf);
	return r == DOCA_SUCCESS && done.status == DOCA_SUCCESS && bad == 0 &&
			       done.checksum == dma_copy_checksum_expected(len)
		       ? 0
		       : 1;
}
