/*
 * Memory for tests: an open device, a source and a destination buffer, each
 * under a started mmap with the device and permissions, and a started
 * inventory to take buffers from. mem_fx_setup registers the teardown with
 * the harness, so a case that stops on a failed check releases it too.
 *
 * Fixtures that add an engine (tests/dma_fixture.h, the SHA one) embed the
 * fields with MEM_FX_EMBED and build on mem_fx_open / mem_fx_close.
 */
#ifndef SOFTDPU_TEST_MEM_FIXTURE_H_
#define SOFTDPU_TEST_MEM_FIXTURE_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_dev.h"
#include "doca_mmap.h"
#include "harness.h"

#define MEM_FX_FIELDS                                                                                                  \
	struct doca_devinfo **list;                                                                                    \
	uint32_t ndev;                                                                                                 \
	struct doca_dev *dev;                                                                                          \
	uint8_t *src, *dst;                                                                                            \
	size_t len; /* of src */                                                                                       \
	size_t dst_len;                                                                                                \
	struct doca_mmap *src_mmap, *dst_mmap;                                                                         \
	struct doca_buf_inventory *inv;

struct mem_fx {
	MEM_FX_FIELDS
};

/*
 * A fixture with more than memory starts with MEM_FX_EMBED: the fields are
 * reached by their short names (f->src, f->inv) and as a whole (&f->mem) for
 * mem_fx_open / mem_fx_close; both are members of one union.
 */
#define MEM_FX_EMBED                                                                                                   \
	union {                                                                                                        \
		struct mem_fx mem;                                                                                     \
		struct {                                                                                               \
			MEM_FX_FIELDS                                                                                  \
		};                                                                                                     \
	}

/* The source is always local read-write; DOCA_ACCESS_LOCAL_READ_ONLY is 0, so dst_perm is always given. */
struct mem_fx_cfg {
	const char *pci;	/* device by PCI address; NULL: the first one listed */
	size_t len;		/* source buffer; 0: none */
	size_t dst_len;		/* destination buffer; 0: none */
	uint32_t dst_perm;
	uint32_t inv_num;	/* inventory size; 0: no inventory */
};

/* For mem_fx_mmap*: leave the mmap's permissions as created. */
#define MEM_FX_PERM_DEFAULT UINT32_MAX

/* The source holds this pattern after setup; the destination is zeroed. */
static inline uint8_t mem_fx_pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* An mmap over [mem, mem+len) with dev (NULL: none) and perm (or MEM_FX_PERM_DEFAULT), configured, not started. */
static inline struct doca_mmap *mem_fx_mmap_configured(struct doca_dev *dev, void *mem, size_t len, uint32_t perm)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if ((dev != NULL && doca_mmap_dev_add(m, dev) != DOCA_SUCCESS) ||
	    doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    (perm != MEM_FX_PERM_DEFAULT && doca_mmap_set_permissions(m, perm) != DOCA_SUCCESS)) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

/* The same, started. */
static inline struct doca_mmap *mem_fx_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perm)
{
	struct doca_mmap *m = mem_fx_mmap_configured(dev, mem, len, perm);

	if (m != NULL && doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static inline doca_error_t mem_fx_open_dev(struct mem_fx *m, const char *pci)
{
	char s[DOCA_DEVINFO_PCI_ADDR_SIZE];

	if (doca_devinfo_list_create(&m->list, &m->ndev) != DOCA_SUCCESS || m->ndev == 0)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < m->ndev; i++) {
		if (pci == NULL)
			return doca_dev_open(m->list[i], &m->dev);
		if (doca_devinfo_get_pci_addr_str(m->list[i], s) == DOCA_SUCCESS && strcmp(s, pci) == 0)
			return doca_dev_open(m->list[i], &m->dev);
	}
	return DOCA_ERROR_NOT_FOUND;
}

static inline uint8_t *mem_fx_alloc(size_t len)
{
	return aligned_alloc(64, (len + 63) & ~(size_t)63);
}

/* Builds everything cfg asks for; 0 when all is up. On failure, what was built stays for mem_fx_close. */
static inline int mem_fx_open(struct mem_fx *m, const struct mem_fx_cfg *cfg)
{
	memset(m, 0, sizeof(*m));
	m->len = cfg->len;
	m->dst_len = cfg->dst_len;
	if (mem_fx_open_dev(m, cfg->pci) != DOCA_SUCCESS)
		return -1;
	if (m->len != 0) {
		m->src = mem_fx_alloc(m->len);
		if (m->src == NULL)
			return -1;
		for (size_t i = 0; i < m->len; i++)
			m->src[i] = mem_fx_pattern(i);
		m->src_mmap = mem_fx_mmap(m->dev, m->src, m->len, DOCA_ACCESS_LOCAL_READ_WRITE);
		if (m->src_mmap == NULL)
			return -1;
	}
	if (m->dst_len != 0) {
		m->dst = mem_fx_alloc(m->dst_len);
		if (m->dst == NULL)
			return -1;
		memset(m->dst, 0, m->dst_len);
		m->dst_mmap = mem_fx_mmap(m->dev, m->dst, m->dst_len, cfg->dst_perm);
		if (m->dst_mmap == NULL)
			return -1;
	}
	if (cfg->inv_num != 0 &&
	    (doca_buf_inventory_create(NULL, cfg->inv_num, DOCA_BUF_EXTENSION_LINKED_LIST, &m->inv) != DOCA_SUCCESS ||
	     doca_buf_inventory_start(m->inv) != DOCA_SUCCESS))
		return -1;
	return 0;
}

/* Releases whatever mem_fx_open built; a second call does nothing. */
static inline void mem_fx_close(struct mem_fx *m)
{
	if (m->inv != NULL) {
		doca_buf_inventory_stop(m->inv);
		doca_buf_inventory_destroy(m->inv);
	}
	if (m->src_mmap != NULL)
		doca_mmap_destroy(m->src_mmap);
	if (m->dst_mmap != NULL)
		doca_mmap_destroy(m->dst_mmap);
	if (m->dev != NULL)
		doca_dev_close(m->dev);
	if (m->list != NULL)
		doca_devinfo_list_destroy(m->list);
	free(m->src);
	free(m->dst);
	memset(m, 0, sizeof(*m));
}

static inline void mem_fx_cleanup(void *m)
{
	mem_fx_close(m);
}

/* mem_fx_open, with the teardown registered with the harness (m may live in the case's frame). */
static inline int mem_fx_setup(struct mem_fx *m, const struct mem_fx_cfg *cfg)
{
	th_defer_local(mem_fx_cleanup, m);
	return mem_fx_open(m, cfg);
}

static inline void mem_fx_teardown(struct mem_fx *m)
{
	th_undefer(mem_fx_cleanup, m);
	mem_fx_close(m);
}

/* A buffer over src[off, off+len) holding those bytes as data. */
static inline doca_error_t mem_fx_src_buf(struct mem_fx *m, size_t off, size_t len, struct doca_buf **b)
{
	return doca_buf_inventory_buf_by_data(m->inv, m->src_mmap, m->src + off, len, b);
}

/* A buffer over dst[off, off+len) with no data yet: room for a result. */
static inline doca_error_t mem_fx_dst_buf(struct mem_fx *m, size_t off, size_t len, struct doca_buf **b)
{
	return doca_buf_inventory_buf_by_addr(m->inv, m->dst_mmap, m->dst + off, len, b);
}

#endif /* SOFTDPU_TEST_MEM_FIXTURE_H_ */
