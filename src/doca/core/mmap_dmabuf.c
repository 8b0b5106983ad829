/*
 * doca_mmap_set_dmabuf_memrange — a memory range exported as a dma-buf.
 *
 * The fd must be a dma-buf (its file system says so) and the range must lie
 * inside it. The device then reaches the memory at addr, where the program
 * addresses it: that is the dma-buf's memory for an exporter of host memory
 * mapped there (udmabuf); a GPU's memory is out of reach (there is no GPU).
 */
#include <stdbool.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "dc_log.h"
#include "doca_mmap.h"

/* linux/magic.h: DMA_BUF_MAGIC, the f_type of the dma-buf file system. */
#define DC_DMA_BUF_MAGIC 0x444d4142

static bool dc_fd_is_dmabuf(int fd)
{
	struct statfs st;

	return fd >= 0 && fstatfs(fd, &st) == 0 && (unsigned long)st.f_type == DC_DMA_BUF_MAGIC;
}

/* The dma-buf's size: dma-bufs answer SEEK_END with it. */
static bool dc_dmabuf_holds(int fd, size_t offset, size_t len)
{
	off_t size = lseek(fd, 0, SEEK_END);

	(void)lseek(fd, 0, SEEK_SET);
	return size >= 0 && offset <= (size_t)size && len <= (size_t)size - offset;
}

doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len)
{
	if (mmap == NULL || addr == NULL || len == 0) {
		DC_ERR("invalid dma-buf memrange arguments");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!dc_fd_is_dmabuf(dmabuf_fd)) {
		DC_ERR("fd %d is not a dma-buf", dmabuf_fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!dc_dmabuf_holds(dmabuf_fd, dmabuf_offset, len)) {
		DC_ERR("range of %zu bytes at offset %zu is past the dma-buf's end", len, dmabuf_offset);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return doca_mmap_set_memrange(mmap, addr, len);
}
