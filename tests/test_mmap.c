/*
 * test_mmap — every doca_mmap_* function: configuration rules, device
 * registration, life cycle, free callback, exports and imports (RDMA and DPU,
 * within one process) and the refusal of damaged or forged descriptors.
 *
 * An internal test: it switches the process to the DPU side with
 * hw_topology_reload() and looks at the emulated device's key table.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dc_core.h"
#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_dev.h"
#include "doca_mmap.h"
#include "fab_desc.h"
#include "harness.h"
#include "hw_mem.h"
#include "hw_topology.h"

#define HOST_PF0 "0000:0b:00.0"
#define HOST_PF1 "0000:0b:00.1"
#define DPU_P0 "0000:03:00.0"

#define ALL_ACCESS                                                                                                     \
	(DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC |     \
	 DOCA_ACCESS_DPU_READ_ONLY | DOCA_ACCESS_DPU_READ_WRITE)

static uint8_t mem[4096];
static uint8_t mem2[4096];

/* Opens the local device with the given PCI address (this process's side). */
static struct doca_dev *open_pci(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	char s[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_pci_addr_str(list[i], s) == DOCA_SUCCESS && strcmp(s, pci) == 0 &&
		    doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	doca_devinfo_list_destroy(list);
	return dev;
}

static int set_side(const char *side)
{
	setenv("SOFTDPU_SIDE", side, 1);
	return hw_topology_reload();
}

/* A started (or just configured) local mmap over [addr, addr+len) with dev (optional). */
static struct doca_mmap *make_mmap(void *addr, size_t len, struct doca_dev *dev, uint32_t access, bool start)
{
	struct doca_mmap *m;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_set_memrange(m, addr, len) != DOCA_SUCCESS || doca_mmap_set_permissions(m, access) != DOCA_SUCCESS ||
	    (dev != NULL && doca_mmap_dev_add(m, dev) != DOCA_SUCCESS) || (start && doca_mmap_start(m) != DOCA_SUCCESS)) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static struct doca_buf_inventory *make_inv(size_t n)
{
	struct doca_buf_inventory *inv;

	if (doca_buf_inventory_create(NULL, n, DOCA_BUF_EXTENSION_NONE, &inv) != DOCA_SUCCESS)
		return NULL;
	if (doca_buf_inventory_start(inv) != DOCA_SUCCESS) {
		doca_buf_inventory_destroy(inv);
		return NULL;
	}
	return inv;
}

/* ---- creation, getters, configuration ---- */

/* A dma-buf of the kernel's udmabuf driver over a sealed memfd (NULL where the driver is absent). */
static int udmabuf_over(size_t len, int *memfd_out)
{
	struct udmabuf_create_args {
		uint32_t memfd, flags;
		uint64_t offset, size;
	} args = { .size = len };
	int dev, memfd, fd = -1;

	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return -1;
	memfd = memfd_create("dmabuf-test", MFD_ALLOW_SEALING);
	if (memfd >= 0 && ftruncate(memfd, (off_t)len) == 0 && fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0) {
		args.memfd = (uint32_t)memfd;
		fd = ioctl(dev, _IOW('u', 0x42, struct udmabuf_create_args), &args);
	}
	close(dev);
	*memfd_out = memfd;
	return fd;
}

static void test_dmabuf_memrange(void)
{
	struct doca_mmap *m;
	void *addr;
	size_t len;
	int memfd, fds[2], dbuf;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(NULL, 0, mem, 0, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, 0, NULL, 0, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, 0, mem, 0, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, -1, mem, 0, 64), DOCA_ERROR_INVALID_VALUE);
	/* files that are not dma-bufs: a memfd, a pipe */
	memfd = memfd_create("not-a-dmabuf", 0);
	CHECK(memfd >= 0 && ftruncate(memfd, 4096) == 0);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, memfd, mem, 0, 64), DOCA_ERROR_INVALID_VALUE);
	close(memfd);
	CHECK(pipe(fds) == 0);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, fds[0], mem, 0, 64), DOCA_ERROR_INVALID_VALUE);
	close(fds[0]);
	close(fds[1]);
	/* nothing changed: the range is still unset and can be set */
	CHECK_ERR(doca_mmap_get_memrange(m, &addr, &len), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	CHECK_OK(doca_mmap_destroy(m));

	dbuf = udmabuf_over(sizeof(mem2), &memfd);
	if (dbuf < 0) {
		if (memfd >= 0)
			close(memfd);
		SKIP("no dma-buf exporter here (/dev/udmabuf)");
	}
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, dbuf, mem2, 64, sizeof(mem2)), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_set_dmabuf_memrange(m, dbuf, mem2, 64, sizeof(mem2) - 64));
	CHECK_OK(doca_mmap_get_memrange(m, &addr, &len));
	CHECK(addr == mem2 && len == sizeof(mem2) - 64);
	CHECK_ERR(doca_mmap_set_dmabuf_memrange(m, dbuf, mem2, 0, 64), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_destroy(m));
	close(dbuf);
	close(memfd);
}

static void test_create_defaults_and_user_data(void)
{
	union doca_data ud = { .u64 = 0x1122334455667788ull }, got;
	struct doca_mmap *m, *m2;
	uint32_t v;
	uint8_t f;
	void *a;
	size_t l;

	CHECK_OK(doca_mmap_create(&ud, &m));
	CHECK_OK(doca_mmap_get_user_data(m, &got));
	CHECK(got.u64 == 0x1122334455667788ull);
	CHECK_OK(doca_mmap_get_max_num_devices(m, &v));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 0);
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);
	f = 7;
	CHECK_OK(doca_mmap_get_exported(m, &f));
	CHECK(f == 0);
	f = 7;
	CHECK_OK(doca_mmap_get_from_export(m, &f));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_get_permissions(m, &v));
	CHECK(v == DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK_ERR(doca_mmap_get_memrange(m, &a, &l), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_destroy(m));

	/* NULL user data reads back as zero */
	CHECK_OK(doca_mmap_create(NULL, &m2));
	got.u64 = 99;
	CHECK_OK(doca_mmap_get_user_data(m2, &got));
	CHECK(got.u64 == 0);
	ud.ptr = &ud;
	CHECK_OK(doca_mmap_destroy(m2));
	CHECK_OK(doca_mmap_create(&ud, &m2));
	CHECK_OK(doca_mmap_get_user_data(m2, &got));
	CHECK(got.ptr == &ud);
	CHECK_OK(doca_mmap_destroy(m2));
}

static void test_memrange(void)
{
	struct doca_mmap *m;
	void *a = NULL;
	size_t l = 0;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_set_memrange(m, NULL, 16), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_memrange(m, mem, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_memrange(m, (void *)(UINTPTR_MAX - 15), 32), DOCA_ERROR_INVALID_VALUE);
	/* refused calls left no range behind */
	CHECK_ERR(doca_mmap_get_memrange(m, &a, &l), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_set_memrange(m, mem + 16, 1000));
	CHECK_OK(doca_mmap_get_memrange(m, &a, &l));
	CHECK(a == mem + 16 && l == 1000);
	/* set once */
	CHECK_ERR(doca_mmap_set_memrange(m, mem, sizeof(mem)), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_set_memrange(m, mem + 16, 1000), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_memrange(m, &a, &l));
	CHECK(a == mem + 16 && l == 1000);
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_permissions(void)
{
	static const uint32_t ok[] = { DOCA_ACCESS_LOCAL_READ_ONLY,
				       DOCA_ACCESS_LOCAL_READ_WRITE,
				       DOCA_ACCESS_RDMA_READ,
				       DOCA_ACCESS_RDMA_WRITE,
				       DOCA_ACCESS_RDMA_ATOMIC,
				       DOCA_ACCESS_DPU_READ_ONLY,
				       DOCA_ACCESS_DPU_READ_WRITE,
				       DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE,
				       ALL_ACCESS };
	static const uint32_t bad[] = { 1u << 6, 1u << 7, 1u << 31, ALL_ACCESS | (1u << 6), 0xffffffffu };
	struct doca_mmap *m;
	uint32_t v;

	CHECK_OK(doca_mmap_create(NULL, &m));
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_OK(doca_mmap_set_permissions(m, ok[i]));
		CHECK_OK(doca_mmap_get_permissions(m, &v));
		CHECK(v == ok[i]);
	}
	CHECK_OK(doca_mmap_set_permissions(m, DOCA_ACCESS_RDMA_READ));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(doca_mmap_set_permissions(m, bad[i]), DOCA_ERROR_INVALID_VALUE);
		CHECK_OK(doca_mmap_get_permissions(m, &v));
		CHECK(v == DOCA_ACCESS_RDMA_READ);
	}
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_max_devices(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t v, k0, k1;

	CHECK(d0 != NULL && d1 != NULL && d0 != d1);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	CHECK_OK(doca_mmap_dev_add(m, d0));
	CHECK_ERR(doca_mmap_dev_add(m, d0), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_mmap_dev_add(m, d1), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_set_max_num_devices(m, 2));
	CHECK_OK(doca_mmap_get_max_num_devices(m, &v));
	CHECK(v == 2);
	CHECK_OK(doca_mmap_dev_add(m, d1));
	CHECK_ERR(doca_mmap_dev_add(m, d1), DOCA_ERROR_IN_USE);
	CHECK_ERR(doca_mmap_dev_add(m, d0), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 2);
	/* cannot shrink below the devices already added */
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_get_max_num_devices(m, &v));
	CHECK(v == 2);
	CHECK_OK(doca_mmap_set_max_num_devices(m, 4));
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 2);
	CHECK_OK(doca_mmap_start(m));
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 8), DOCA_ERROR_NOT_PERMITTED);

	/* both devices registered, each with its own key covering the range */
	CHECK((inv = make_inv(2)) != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 100, 50, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k0));
	CHECK_OK(doca_buf_get_mkey(b, d1, &k1));
	CHECK(k0 != 0 && k1 != 0 && k0 != k1);
	for (int i = 0; i < 2; i++) {
		const struct hw_mkey *mk = hw_mkey_lookup(i == 0 ? k0 : k1);

		CHECK(mk != NULL);
		CHECK(mk->base == mem && mk->addr == (uint64_t)(uintptr_t)mem && mk->len == sizeof(mem));
		CHECK((mk->access & HW_ACCESS_LOCAL_WRITE) != 0);
	}
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(m));
	/* destroy deregistered both keys and released the devices */
	CHECK(hw_mkey_lookup(k0) == NULL && hw_mkey_lookup(k1) == NULL);
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

static void test_dev_add_rm_before_start(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_mmap *m;
	uint32_t v;

	CHECK(d0 != NULL && d1 != NULL);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_dev_add(m, d0));
	CHECK_ERR(doca_mmap_dev_rm(m, d1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_dev_rm(m, d0));
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 0);
	/* the slot freed by dev_rm is reusable with max 1 */
	CHECK_OK(doca_mmap_dev_add(m, d1));
	CHECK_ERR(doca_mmap_dev_add(m, d0), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 1);
	/* a device held by an mmap cannot be closed for the last time */
	CHECK_ERR(doca_dev_close(d1), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_mmap_dev_rm(m, d1));
	CHECK_OK(doca_mmap_dev_add(m, d1));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

static void test_devices_fixed_after_start(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t k0 = 0, k, v;

	CHECK(d0 != NULL && d1 != NULL);
	CHECK((inv = make_inv(4)) != NULL);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	CHECK_OK(doca_mmap_set_max_num_devices(m, 2));
	CHECK_OK(doca_mmap_dev_add(m, d0));
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 64, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k0));
	CHECK(hw_mkey_lookup(k0) != NULL);
	CHECK_ERR(doca_buf_get_mkey(b, d1, &k), DOCA_ERROR_NOT_FOUND);
	/* a started mmap keeps its devices: neither added nor removed, buffers or not */
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_add(m, d1), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_num_devices(m, &v));
	CHECK(v == 1);
	CHECK(hw_mkey_lookup(k0) != NULL);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK(hw_mkey_lookup(k0) == NULL);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

static void never_cb(void *addr, size_t len, void *opaque)
{
	(void)addr;
	(void)len;
	(void)opaque;
	abort();
}

static void test_start_stop(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0);
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t k1, k2, v;

	CHECK(d0 != NULL);
	CHECK((inv = make_inv(2)) != NULL);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_dev_add(m, d0));
	CHECK_ERR(doca_mmap_start(m), DOCA_ERROR_BAD_STATE); /* no memrange */
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_BAD_STATE);  /* never started */
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_set_memrange(m, mem, sizeof(mem)));
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(m));
	CHECK_ERR(doca_mmap_start(m), DOCA_ERROR_BAD_STATE);
	/* configuration is frozen after start */
	CHECK_ERR(doca_mmap_set_memrange(m, mem2, sizeof(mem2)), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_permissions(m, DOCA_ACCESS_RDMA_READ), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 3), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_set_free_cb(m, never_cb, NULL), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_get_permissions(m, &v));
	CHECK(v == DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k1));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));

	CHECK_OK(doca_mmap_stop(m));
	CHECK(hw_mkey_lookup(k1) == NULL); /* stop deregisters */
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_memrange(m, mem2, sizeof(mem2)), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_permissions(m, DOCA_ACCESS_RDMA_READ), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_max_num_devices(m, 3), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_add(m, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_NOT_PERMITTED);

	/* start again: registered anew */
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 8, 8, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k2));
	CHECK(hw_mkey_lookup(k2) != NULL);
	CHECK(k2 != k1);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_mmap_destroy(m)); /* destroy of a started mmap */
	CHECK(hw_mkey_lookup(k2) == NULL);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(d0));
}

static void test_bufs_block_stop_and_destroy(void)
{
	struct doca_buf_inventory *inv;
	struct doca_buf *b[3], *dup;
	struct doca_mmap *m;
	uint32_t v;

	CHECK((m = make_mmap(mem, sizeof(mem), NULL, DOCA_ACCESS_LOCAL_READ_WRITE, true)) != NULL);
	CHECK((inv = make_inv(8)) != NULL);
	for (int i = 0; i < 3; i++) {
		CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 64 * i, 64, &b[i]));
		CHECK_OK(doca_mmap_get_num_bufs(m, &v));
		CHECK(v == (uint32_t)i + 1);
	}
	CHECK_OK(doca_buf_inventory_buf_dup(inv, b[0], &dup));
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 4);
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(dup, NULL));
	CHECK_OK(doca_buf_refcount_rm(b[0], NULL));
	CHECK_OK(doca_buf_refcount_rm(b[2], NULL));
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 1);
	/* one buffer left is enough to hold the map */
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(b[1], NULL));
	CHECK_OK(doca_mmap_get_num_bufs(m, &v));
	CHECK(v == 0);
	CHECK_OK(doca_mmap_stop(m));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_buf_inventory_destroy(inv));
}

struct free_rec {
	int calls;
	void *addr;
	size_t len;
	void *opaque;
};

static void free_cb(void *addr, size_t len, void *opaque)
{
	struct free_rec *r = opaque;

	r->calls++;
	r->addr = addr;
	r->len = len;
	r->opaque = opaque;
}

static void free_heap_cb(void *addr, size_t len, void *opaque)
{
	int *calls = opaque;

	(void)len;
	(*calls)++;
	free(addr);
}

static void test_free_cb(void)
{
	struct free_rec rec = { 0 }, rec2 = { 0 }, rec3 = { 0 };
	struct doca_buf_inventory *inv;
	struct doca_mmap *m;
	struct doca_buf *b;
	int heap_calls = 0;
	void *heap;

	/* started mmap, a buffer blocks destroy: no call before the real destroy */
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_ERR(doca_mmap_set_free_cb(m, NULL, &rec), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_set_memrange(m, mem + 1, 333));
	CHECK_OK(doca_mmap_set_free_cb(m, free_cb, &rec));
	CHECK_OK(doca_mmap_start(m));
	CHECK((inv = make_inv(1)) != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem + 1, 10, &b));
	CHECK_ERR(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK(rec.calls == 0);
	CHECK_ERR(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	CHECK(rec.calls == 0);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_mmap_stop(m));
	CHECK(rec.calls == 0);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK(rec.calls == 1);
	CHECK(rec.addr == mem + 1 && rec.len == 333 && rec.opaque == &rec);
	CHECK_OK(doca_buf_inventory_destroy(inv));

	/* never started: still called once; the last callback set wins */
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_set_memrange(m, mem2, 17));
	CHECK_OK(doca_mmap_set_free_cb(m, free_cb, &rec3));
	CHECK_OK(doca_mmap_set_free_cb(m, free_cb, &rec2));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK(rec2.calls == 1 && rec2.addr == mem2 && rec2.len == 17 && rec2.opaque == &rec2);
	CHECK(rec3.calls == 0);

	/* the callback really owns the memory (ASan sees a leak or a double free otherwise) */
	heap = malloc(256);
	CHECK(heap != NULL);
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_set_memrange(m, heap, 256));
	CHECK_OK(doca_mmap_set_free_cb(m, free_heap_cb, &heap_calls));
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK(heap_calls == 1);
}

/* ---- export ---- */

static void test_export_rules(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	const void *desc, *desc2;
	size_t len, len2;
	struct doca_mmap *m;
	uint8_t f;

	CHECK(d0 != NULL && d1 != NULL);
	/* local permissions only: both exports refused */
	CHECK((m = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_LOCAL_READ_WRITE, true)) != NULL);
	CHECK_ERR(doca_mmap_export_dpu(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_get_exported(m, &f));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_destroy(m));

	/* DPU permission does not allow an RDMA export, and the reverse */
	CHECK((m = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_DPU_READ_WRITE, true)) != NULL);
	CHECK_ERR(doca_mmap_export_rdma(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK((m = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_RDMA_WRITE, true)) != NULL);
	CHECK_ERR(doca_mmap_export_dpu(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_destroy(m));

	/* before start */
	CHECK((m = make_mmap(mem, sizeof(mem), d0, ALL_ACCESS, false)) != NULL);
	CHECK_ERR(doca_mmap_export_dpu(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(m, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_start(m));
	/* device not added */
	CHECK_ERR(doca_mmap_export_dpu(m, d1, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_export_rdma(m, d1, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_get_exported(m, &f));
	CHECK(f == 0);
	/* exported */
	CHECK_OK(doca_mmap_export_dpu(m, d0, &desc, &len));
	CHECK(desc != NULL && len == FAB_DESC_SIZE);
	CHECK_OK(doca_mmap_get_exported(m, &f));
	CHECK(f == 1);
	CHECK_OK(doca_mmap_get_from_export(m, &f));
	CHECK(f == 0);
	/* a second export for the same device and kind hands out the same descriptor */
	CHECK_OK(doca_mmap_export_dpu(m, d0, &desc2, &len2));
	CHECK(desc2 == desc && len2 == len);
	CHECK_OK(doca_mmap_export_rdma(m, d0, &desc2, &len2));
	CHECK(len2 == FAB_DESC_SIZE && memcmp(desc, desc2, len) != 0);
	/* the descriptor names the range and the exporter's key */
	{
		struct fab_export_desc d;
		struct doca_buf_inventory *inv;
		struct doca_buf *b;
		uint32_t k;

		CHECK(fab_desc_decode(desc, len, &d) == FAB_DESC_OK);
		CHECK(d.kind == FAB_EXPORT_DPU && d.addr == (uint64_t)(uintptr_t)mem && d.len == sizeof(mem));
		CHECK(d.access == HW_ACCESS_ALL_MASK); /* the device's rights, not DOCA flags */
		CHECK((inv = make_inv(1)) != NULL);
		CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, mem, 1, &b));
		CHECK_OK(doca_buf_get_mkey(b, d0, &k));
		CHECK(d.mkey == k);
		CHECK_OK(doca_buf_refcount_rm(b, NULL));
		CHECK_OK(doca_buf_inventory_destroy(inv));
	}
	/* devices are frozen on an exported mmap */
	CHECK_ERR(doca_mmap_dev_add(m, d1), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_rm(m, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/* A descriptor carries the device's rights (enum hw_access), not the exporter's DOCA flags. */
static void test_export_desc_rights(void)
{
	static const struct {
		uint32_t perm;
		uint16_t kind;
		uint32_t rights;
	} cases[] = {
		{ DOCA_ACCESS_DPU_READ_ONLY, FAB_EXPORT_DPU, HW_ACCESS_PEER_READ },
		{ DOCA_ACCESS_DPU_READ_WRITE, FAB_EXPORT_DPU, HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE },
		{ DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE, FAB_EXPORT_DPU,
		  HW_ACCESS_LOCAL_WRITE | HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE },
		{ DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC, FAB_EXPORT_RDMA,
		  HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC },
	};
	static uint8_t w[FAB_DESC_MAX];
	struct doca_dev *d0 = open_pci(HOST_PF0);

	CHECK(d0 != NULL);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fab_export_desc d;
		struct doca_mmap *m;
		const void *desc;
		size_t len;

		CHECK((m = make_mmap(mem, sizeof(mem), d0, cases[c].perm, true)) != NULL);
		if (cases[c].kind == FAB_EXPORT_DPU)
			CHECK_OK(doca_mmap_export_dpu(m, d0, &desc, &len));
		else
			CHECK_OK(doca_mmap_export_rdma(m, d0, &desc, &len));
		CHECK(fab_desc_decode(desc, len, &d) == FAB_DESC_OK);
		if (d.access != cases[c].rights)
			TH_FAIL("case %zu: permissions 0x%x gave rights 0x%x, expected 0x%x", c, cases[c].perm, d.access,
				cases[c].rights);
		/* a rights bit the device does not have makes the descriptor malformed */
		d.access |= 1u << 6;
		len = fab_desc_encode(&d, w);
		CHECK(fab_desc_decode(w, len, &d) == FAB_DESC_BAD_FIELD);
		CHECK_OK(doca_mmap_destroy(m));
	}
	CHECK_OK(doca_dev_close(d0));
}

/* RDMA export imported in the same process on the host side. */
static void test_rdma_import_host(void)
{
	union doca_data ud = { .u64 = 42 }, got;
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_mmap *exp, *imp, *imp2;
	struct doca_buf_inventory *inv;
	const void *desc, *desc2;
	struct doca_buf *b, *eb;
	uint32_t v, kexp = 0, kimp = 0, k;
	size_t len, len2, l;
	uint8_t f;
	void *a;

	CHECK(d0 != NULL && d1 != NULL);
	memset(mem, 0x5a, sizeof(mem));
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE, true)) !=
	      NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK_OK(doca_mmap_create_from_export(&ud, desc, len, d1, &imp));
	CHECK_OK(doca_mmap_get_user_data(imp, &got));
	CHECK(got.u64 == 42);
	CHECK_OK(doca_mmap_get_from_export(imp, &f));
	CHECK(f == 1);
	CHECK_OK(doca_mmap_get_exported(imp, &f));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_get_memrange(imp, &a, &l));
	CHECK(a == mem && l == sizeof(mem));
	CHECK_OK(doca_mmap_get_permissions(imp, &v));
	CHECK(v == (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE));
	CHECK_OK(doca_mmap_get_num_devices(imp, &v));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_get_num_bufs(imp, &v));
	CHECK(v == 0);

	/* the import is frozen */
	CHECK_ERR(doca_mmap_dev_add(imp, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_dev_rm(imp, d1), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(imp, d1, &desc2, &len2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_dpu(imp, d1, &desc2, &len2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_set_memrange(imp, mem2, sizeof(mem2)), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_permissions(imp, ALL_ACCESS), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_mmap_set_max_num_devices(imp, 2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_start(imp), DOCA_ERROR_NOT_PERMITTED); /* imported: never started by the user */

	/* buffers of the import reach the exporter's bytes under the importer's own key */
	CHECK((inv = make_inv(2)) != NULL);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, imp, mem2, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_inventory_buf_by_data(inv, imp, mem + 128, 64, &b));
	CHECK_OK(doca_buf_get_data(b, &a));
	CHECK(a == mem + 128 && ((uint8_t *)a)[0] == 0x5a);
	CHECK_OK(doca_buf_get_mkey(b, d1, &kimp));
	CHECK_ERR(doca_buf_get_mkey(b, d0, &k), DOCA_ERROR_NOT_FOUND);
	/* The key a buffer of an RDMA import names is the exporter's (what an RDMA peer uses as rkey)... */
	CHECK(kimp == dc_mmap_mkey(exp, d0));
	{
		/* ...and the import's own key, which its DMA jobs use, has the importer's rights. */
		const struct hw_mkey *mk = hw_mkey_lookup(dc_mmap_mkey(imp, d1));

		CHECK(mk != NULL && mk->base == mem && mk->addr == (uint64_t)(uintptr_t)mem && mk->len == sizeof(mem));
		CHECK((mk->access & HW_ACCESS_REMOTE_WRITE) != 0);
		CHECK((mk->access & (HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE | HW_ACCESS_REMOTE_ATOMIC |
				     HW_ACCESS_LOCAL_WRITE)) == 0);
	}
	CHECK_OK(doca_mmap_get_num_bufs(imp, &v));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_get_num_bufs(exp, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_mmap_destroy(imp), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_stop(imp), DOCA_ERROR_NOT_PERMITTED); /* a buffer still points into it */
	CHECK_OK(doca_buf_refcount_rm(b, NULL));

	/* a second import of the same descriptor is a separate registration */
	CHECK_OK(doca_mmap_create_from_export(NULL, desc, len, d0, &imp2));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, imp2, mem, 8, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k));
	CHECK(k == kimp); /* both name the exporter's memory by its key */
	k = dc_mmap_mkey(imp2, d0);
	CHECK(k != dc_mmap_mkey(imp, d1));
	/* the exporter's own buffer */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, exp, mem, 8, &eb));
	CHECK_OK(doca_buf_inventory_get_num_free_elements(inv, &v));
	CHECK(v == 0);
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	/* an import stops (as DOCA 2.2's samples do before destroying it): no buffer comes from it after */
	CHECK_OK(doca_mmap_stop(imp2));
	CHECK_ERR(doca_mmap_stop(imp2), DOCA_ERROR_BAD_STATE);
	CHECK(doca_buf_inventory_buf_by_addr(inv, imp2, mem, 8, &b) != DOCA_SUCCESS);
	CHECK_ERR(doca_mmap_start(imp2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_destroy(imp2));
	CHECK(hw_mkey_lookup(k) == NULL);

	/* the import is only an importer: destroying it leaves the exporter alone */
	k = dc_mmap_mkey(imp, d1);
	CHECK_OK(doca_mmap_destroy(imp));
	CHECK(hw_mkey_lookup(k) == NULL);
	CHECK(hw_mkey_lookup(kimp) != NULL);
	CHECK_OK(doca_mmap_get_exported(exp, &f));
	CHECK(f == 1);
	CHECK_OK(doca_buf_get_mkey(eb, d0, &kexp));
	CHECK(hw_mkey_lookup(kexp) != NULL);
	CHECK_OK(doca_mmap_get_num_bufs(exp, &v));
	CHECK(v == 1);
	CHECK_ERR(doca_mmap_destroy(exp), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(eb, NULL));
	CHECK_OK(doca_mmap_get_num_bufs(exp, &v));
	CHECK(v == 0);
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/* An import's key carries the remote rights the exporter granted, and no more. */
static void test_rdma_import_rights(void)
{
	static const struct {
		uint32_t access;
		uint32_t rights;
	} cases[] = {
		{ DOCA_ACCESS_RDMA_READ, HW_ACCESS_REMOTE_READ },
		{ DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_LOCAL_READ_WRITE, HW_ACCESS_REMOTE_READ },
		{ DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_DPU_READ_WRITE, HW_ACCESS_REMOTE_READ },
		{ DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_ATOMIC, HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_ATOMIC },
		{ DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE, HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE },
		{ DOCA_ACCESS_RDMA_ATOMIC, HW_ACCESS_REMOTE_ATOMIC },
		{ DOCA_ACCESS_RDMA_WRITE, HW_ACCESS_REMOTE_WRITE },
	};
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_buf_inventory *inv;

	CHECK(d0 != NULL && d1 != NULL);
	CHECK((inv = make_inv(1)) != NULL);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct doca_mmap *exp, *imp;
		const struct hw_mkey *mk;
		struct doca_buf *b;
		const void *desc;
		uint32_t k = 0;
		size_t len;

		CHECK((exp = make_mmap(mem, sizeof(mem), d0, cases[c].access, true)) != NULL);
		CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
		CHECK_OK(doca_mmap_create_from_export(NULL, desc, len, d1, &imp));
		CHECK_OK(doca_buf_inventory_buf_by_addr(inv, imp, mem, 8, &b));
		CHECK_OK(doca_buf_get_mkey(b, d1, &k));
		CHECK(k == dc_mmap_mkey(exp, d0));
		mk = hw_mkey_lookup(dc_mmap_mkey(imp, d1));
		if (mk == NULL || mk->access != cases[c].rights)
			TH_FAIL("case %zu: exporter access 0x%x gave import rights 0x%x, expected 0x%x", c,
				cases[c].access, mk == NULL ? 0u : mk->access, cases[c].rights);
		CHECK_OK(doca_buf_refcount_rm(b, NULL));
		CHECK_OK(doca_mmap_destroy(imp));
		CHECK_OK(doca_mmap_destroy(exp));
		if (th_case_failed)
			break;
	}
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/* The host can import only RDMA exports. */
static void test_dpu_export_refused_on_host(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_mmap *exp, *imp = NULL;
	const void *desc;
	size_t len;

	CHECK(d0 != NULL && d1 != NULL);
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_DPU_READ_WRITE, true)) != NULL);
	CHECK_OK(doca_mmap_export_dpu(exp, d0, &desc, &len));
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, d1, &imp), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, d0, &imp), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(imp == NULL);
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/*
 * DPU export of a host pf0 mmap, imported by DPU p0 (the process switches
 * sides in between); the exporter's destruction revokes the import's key.
 */
static void test_dpu_import_on_dpu(void)
{
	struct doca_dev *h0 = open_pci(HOST_PF0), *p0 = NULL;
	uint8_t copy[FAB_DESC_SIZE], copy_rdma[FAB_DESC_SIZE], copy_ro[FAB_DESC_SIZE];
	struct doca_mmap *exp, *exp_ro, *imp = NULL, *imp_rdma = NULL, *imp_ro = NULL, *again = NULL;
	struct doca_buf_inventory *inv;
	struct doca_buf *eb, *ib, *rb;
	uint32_t kimp = 0, krdma = 0, k, v;
	const void *desc;
	size_t len, l;
	uint8_t f;
	void *a;

	CHECK(h0 != NULL);
	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)i;
	CHECK((exp = make_mmap(mem, sizeof(mem), h0,
			       DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE | DOCA_ACCESS_RDMA_READ, true)) !=
	      NULL);
	CHECK_OK(doca_mmap_export_dpu(exp, h0, &desc, &len));
	CHECK(len == sizeof(copy));
	memcpy(copy, desc, len);
	CHECK_OK(doca_mmap_export_rdma(exp, h0, &desc, &len));
	memcpy(copy_rdma, desc, len);
	CHECK((exp_ro = make_mmap(mem2, sizeof(mem2), h0, DOCA_ACCESS_DPU_READ_ONLY, true)) != NULL);
	CHECK_OK(doca_mmap_export_dpu(exp_ro, h0, &desc, &len));
	memcpy(copy_ro, desc, len);

	CHECK(set_side("dpu") == 0);
	CHECK(hw_topo_side() == HW_SIDE_DPU);
	p0 = open_pci(DPU_P0);
	if (p0 == NULL) {
		set_side("host");
		CHECK(p0 != NULL);
	}
	CHECK((inv = make_inv(4)) != NULL);
	CHECK_OK(doca_mmap_create_from_export(NULL, copy, sizeof(copy), p0, &imp));
	CHECK_OK(doca_mmap_get_from_export(imp, &f));
	CHECK(f == 1);
	CHECK_OK(doca_mmap_get_memrange(imp, &a, &l));
	CHECK(a == mem && l == sizeof(mem));
	CHECK_ERR(doca_mmap_dev_add(imp, h0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export_rdma(imp, p0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_set_permissions(imp, 0), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_buf_inventory_buf_by_data(inv, imp, mem + 1000, 24, &ib));
	CHECK_OK(doca_buf_get_data(ib, &a));
	CHECK(((uint8_t *)a)[0] == (uint8_t)1000 && ((uint8_t *)a)[23] == (uint8_t)1023);
	CHECK_OK(doca_buf_get_mkey(ib, p0, &kimp));
	{
		const struct hw_mkey *mk = hw_mkey_lookup(kimp);

		CHECK(mk != NULL && mk->base == mem && mk->len == sizeof(mem));
		CHECK(mk->access == (HW_ACCESS_PEER_READ | HW_ACCESS_PEER_WRITE));
	}
	CHECK_ERR(doca_buf_get_mkey(ib, h0, &k), DOCA_ERROR_NOT_FOUND);
	/* the DPU can import RDMA exports too */
	CHECK_OK(doca_mmap_create_from_export(NULL, copy_rdma, sizeof(copy_rdma), p0, &imp_rdma));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, imp_rdma, mem, 16, &rb));
	CHECK_OK(doca_buf_get_mkey(rb, p0, &krdma));
	CHECK(krdma != kimp);
	{
		const struct hw_mkey *mk = hw_mkey_lookup(dc_mmap_mkey(imp_rdma, p0));

		CHECK(mk != NULL && mk->access == HW_ACCESS_REMOTE_READ);
	}

	/* a read-only DPU export gives a read-only peer key */
	CHECK_OK(doca_mmap_create_from_export(NULL, copy_ro, sizeof(copy_ro), p0, &imp_ro));
	{
		struct doca_buf *ob;
		const struct hw_mkey *mk;

		CHECK_OK(doca_buf_inventory_buf_by_addr(inv, imp_ro, mem2, 16, &ob));
		CHECK_OK(doca_buf_get_mkey(ob, p0, &k));
		mk = hw_mkey_lookup(k);
		CHECK(mk != NULL && mk->access == HW_ACCESS_PEER_READ && mk->base == mem2);
		CHECK_OK(doca_buf_refcount_rm(ob, NULL));
	}
	CHECK_OK(doca_mmap_destroy(imp_ro));
	CHECK(hw_mkey_lookup(k) == NULL);
	CHECK_OK(doca_mmap_destroy(exp_ro));

	/* exporter with a buffer: refused; without: destroyed, imports revoked */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, exp, mem, 16, &eb));
	CHECK_ERR(doca_mmap_destroy(exp), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_buf_refcount_rm(eb, NULL));
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_ERR(doca_buf_get_mkey(ib, p0, &k), DOCA_ERROR_NOT_FOUND);
	CHECK_ERR(doca_buf_get_mkey(rb, p0, &k), DOCA_ERROR_NOT_FOUND);
	CHECK(hw_mkey_lookup(kimp) == NULL);
	CHECK(hw_mkey_lookup(krdma) == NULL);
	CHECK_OK(doca_mmap_get_from_export(imp, &f));
	CHECK(f == 1);
	CHECK_OK(doca_mmap_get_num_bufs(imp, &v));
	CHECK(v == 1);
	/* replay of the dead export's descriptors */
	CHECK_ERR(doca_mmap_create_from_export(NULL, copy, sizeof(copy), p0, &again), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_create_from_export(NULL, copy_rdma, sizeof(copy_rdma), p0, &again),
		  DOCA_ERROR_NOT_PERMITTED);
	CHECK(again == NULL);

	CHECK_OK(doca_buf_refcount_rm(ib, NULL));
	CHECK_OK(doca_buf_refcount_rm(rb, NULL));
	CHECK_OK(doca_mmap_destroy(imp));
	CHECK_OK(doca_mmap_destroy(imp_rdma));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(p0));
	CHECK(set_side("host") == 0);
	CHECK_OK(doca_dev_close(h0));
}

/* CRC-32 (IEEE) over the first 88 bytes, as the descriptor layout has it. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Re-seals a hand-edited descriptor (checksum at byte 88). */
static void reseal(uint8_t *d)
{
	put_le32(d + 88, crc32_ieee(d, 88));
}

/* Imports a modified copy of good; returns the result (destroys a success). */
static doca_error_t try_import(const uint8_t *desc, size_t len, struct doca_dev *dev)
{
	struct doca_mmap *m = NULL;
	doca_error_t r = doca_mmap_create_from_export(NULL, desc, len, dev, &m);

	if (r == DOCA_SUCCESS)
		doca_mmap_destroy(m);
	return r;
}

static void test_descriptor_refusals(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0);
	uint8_t good[FAB_DESC_SIZE], bad[FAB_DESC_SIZE + 8];
	struct fab_export_desc fd;
	struct doca_mmap *exp;
	const void *desc;
	size_t len;
	int n_inval = 0;

	CHECK(d0 != NULL);
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE, true)) != NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK(len == FAB_DESC_SIZE);
	memcpy(good, desc, len);
	/* the resealing helper reproduces the library's checksum */
	memcpy(bad, good, len);
	reseal(bad);
	CHECK(memcmp(bad, good, len) == 0);
	CHECK_OK(try_import(good, len, d0));

	/* length */
	CHECK_ERR(try_import(good, len - 1, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(try_import(good, 9, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(try_import(good, 1, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(try_import(good, 0, d0), DOCA_ERROR_INVALID_VALUE);
	memcpy(bad, good, len);
	memset(bad + len, 0, 8);
	CHECK_ERR(try_import(bad, len + 1, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(try_import(bad, len + 8, d0), DOCA_ERROR_INVALID_VALUE);

	/* every single damaged byte is refused */
	for (size_t i = 0; i < len; i++) {
		static const uint8_t masks[] = { 0x01, 0x80, 0xff };

		for (size_t j = 0; j < sizeof(masks); j++) {
			doca_error_t r;

			memcpy(bad, good, len);
			bad[i] ^= masks[j];
			r = try_import(bad, len, d0);
			if (r != DOCA_ERROR_INVALID_VALUE && r != DOCA_ERROR_NOT_PERMITTED) {
				TH_FAIL("byte %zu ^ 0x%02x: import returned %d", i, masks[j], (int)r);
				return;
			}
			n_inval += r == DOCA_ERROR_INVALID_VALUE;
		}
	}
	/* the checksum catches all of them */
	CHECK(n_inval == (int)(3 * len));

	/* wrong version, with and without a valid checksum */
	CHECK(good[8] == FAB_DESC_VERSION && good[9] == 0);
	memcpy(bad, good, len);
	bad[8] = FAB_DESC_VERSION + 1;
	CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
	reseal(bad);
	CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
	/* version 1 carried DOCA access flags in the rights field: refused even when sealed */
	memcpy(bad, good, len);
	bad[8] = 1;
	reseal(bad);
	CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
	memcpy(bad, good, len);
	bad[8] = 0;
	reseal(bad);
	CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);

	/* random bytes, and random bytes behind a valid header */
	srand(1234);
	for (int t = 0; t < 200; t++) {
		for (size_t i = 0; i < len; i++)
			bad[i] = (uint8_t)rand();
		if (t >= 100)
			memcpy(bad, good, 16);
		CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
	}
	memset(bad, 0, len);
	CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);

	/* well-formed forgeries (valid checksum) */
	CHECK(fab_desc_decode(good, len, &fd) == FAB_DESC_OK);
	for (int i = 0; i < FAB_CAP_KEY_LEN; i++) {
		memcpy(bad, good, len);
		bad[56 + i] ^= 0x01; /* one bit of the capability key */
		reseal(bad);
		CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_NOT_PERMITTED);
	}
	{
		struct fab_export_desc f2;
		uint8_t w[FAB_DESC_SIZE];

		/* capability key of a fresh random value */
		f2 = fd;
		CHECK(fab_random_bytes(f2.cap_key, FAB_CAP_KEY_LEN) == 0);
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* another export id */
		f2 = fd;
		f2.export_id++;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* a wider range or another address */
		f2 = fd;
		f2.len = fd.len + 4096;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		f2 = fd;
		f2.addr = fd.addr - 4096;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		f2 = fd;
		f2.len = fd.len - 1;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* more rights */
		f2 = fd;
		f2.access |= HW_ACCESS_REMOTE_ATOMIC | HW_ACCESS_PEER_WRITE;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* another key */
		f2 = fd;
		f2.mkey ^= 0x100;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* turned into a DPU export: the host cannot import those */
		f2 = fd;
		f2.kind = FAB_EXPORT_DPU;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_SUPPORTED);
		/* another process: no such live export in the device-wide table */
		f2 = fd;
		f2.pid ^= 0x40000000u;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_PERMITTED);
		/* another machine, and no UCX section to reach it by */
		f2 = fd;
		f2.host_id[3] ^= 1;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_NOT_SUPPORTED);
		/* out-of-range fields */
		f2 = fd;
		f2.kind = 3;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_INVALID_VALUE);
		f2 = fd;
		f2.mkey = 0;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_INVALID_VALUE);
		f2 = fd;
		f2.len = 0;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_INVALID_VALUE);
		f2 = fd;
		f2.addr = UINT64_MAX - 10;
		fab_desc_encode(&f2, w);
		CHECK_ERR(try_import(w, len, d0), DOCA_ERROR_INVALID_VALUE);
		/* reserved and padding bytes must be zero */
		memcpy(bad, good, len);
		bad[29] = 1;
		reseal(bad);
		CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
		memcpy(bad, good, len);
		bad[95] = 1;
		CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
		/* size field */
		memcpy(bad, good, len);
		bad[12] = 95;
		reseal(bad);
		CHECK_ERR(try_import(bad, len, d0), DOCA_ERROR_INVALID_VALUE);
	}
	/* the genuine descriptor still works after all that */
	CHECK_OK(try_import(good, len, d0));

	/* replay after the exporter is gone */
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_ERR(try_import(good, len, d0), DOCA_ERROR_NOT_PERMITTED);
	/* a new export of the same memory does not revive the old descriptor */
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE, true)) != NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK(memcmp(desc, good, len) != 0);
	CHECK_ERR(try_import(good, len, d0), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(try_import(desc, len, d0));
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_OK(doca_dev_close(d0));
}

/* An exporter restarted after stop hands out a descriptor naming its live key. */
static void test_export_after_restart(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0);
	struct doca_buf_inventory *inv;
	struct fab_export_desc fd;
	struct doca_mmap *exp;
	struct doca_buf *b;
	const void *desc;
	size_t len;
	uint32_t k;

	CHECK(d0 != NULL);
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_RDMA_READ, true)) != NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK_OK(doca_mmap_stop(exp));
	CHECK_ERR(doca_mmap_export_rdma(exp, d0, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_start(exp));
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK(fab_desc_decode(desc, len, &fd) == FAB_DESC_OK);
	CHECK((inv = make_inv(1)) != NULL);
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, exp, mem, 8, &b));
	CHECK_OK(doca_buf_get_mkey(b, d0, &k));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_OK(doca_dev_close(d0));
	/* last, so a failure leaks nothing: the new descriptor names the key of the new start */
	CHECK(fd.mkey == k);
}

/* Stopping the exporter revokes its imports and its descriptors; a new export after restart works. */
static void test_stop_revokes_exports(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0), *d1 = open_pci(HOST_PF1);
	struct doca_buf_inventory *inv;
	struct doca_mmap *exp, *imp, *imp2 = NULL;
	struct doca_buf *b;
	const void *desc, *desc2;
	size_t len, len2;
	uint32_t k;

	CHECK(d0 != NULL && d1 != NULL);
	CHECK((inv = make_inv(1)) != NULL);
	CHECK((exp = make_mmap(mem, sizeof(mem), d0, DOCA_ACCESS_RDMA_READ, true)) != NULL);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc, &len));
	CHECK_OK(doca_mmap_create_from_export(NULL, desc, len, d1, &imp));
	CHECK_OK(doca_mmap_stop(exp));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, imp, mem, 8, &b));
	CHECK_ERR(doca_buf_get_mkey(b, d1, &k), DOCA_ERROR_NOT_FOUND); /* access revoked */
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, d1, &imp2), DOCA_ERROR_NOT_PERMITTED);
	CHECK(imp2 == NULL);
	CHECK_OK(doca_mmap_start(exp));
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, d1, &imp2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_export_rdma(exp, d0, &desc2, &len2));
	CHECK(memcmp(desc, desc2, len) != 0); /* a fresh capability */
	CHECK_OK(doca_mmap_create_from_export(NULL, desc2, len2, d1, &imp2));
	CHECK_OK(doca_mmap_destroy(imp2));
	CHECK_OK(doca_mmap_destroy(imp));
	CHECK_OK(doca_mmap_destroy(exp));
	CHECK_OK(doca_buf_inventory_destroy(inv));
	CHECK_OK(doca_dev_close(d0));
	CHECK_OK(doca_dev_close(d1));
}

/* ---- NULL arguments ---- */

static void test_null_args(void)
{
	struct doca_dev *d0 = open_pci(HOST_PF0);
	struct doca_mmap *m, *imp = (struct doca_mmap *)0x1;
	union doca_data ud;
	const void *desc;
	size_t len;
	uint32_t v;
	uint8_t f;
	void *a;

	CHECK(d0 != NULL);
	CHECK_ERR(doca_mmap_create(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_create(&ud, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_dev_add(NULL, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_dev_rm(NULL, d0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_memrange(NULL, mem, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_free_cb(NULL, free_cb, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_permissions(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_set_max_num_devices(NULL, 2), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_max_num_devices(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_num_bufs(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_exported(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_from_export(NULL, &f), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_memrange(NULL, &a, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_permissions(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_num_devices(NULL, &v), DOCA_ERROR_INVALID_VALUE);

	CHECK((m = make_mmap(mem, sizeof(mem), d0, ALL_ACCESS, true)) != NULL);
	CHECK_ERR(doca_mmap_dev_add(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_dev_rm(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_user_data(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_max_num_devices(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_num_bufs(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_exported(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_from_export(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_memrange(m, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_memrange(m, &a, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_permissions(m, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_get_num_devices(m, NULL), DOCA_ERROR_INVALID_VALUE);
	for (int kind = 0; kind < 2; kind++) {
		doca_error_t (*ex)(struct doca_mmap *, const struct doca_dev *, const void **, size_t *) =
			kind == 0 ? doca_mmap_export_dpu : doca_mmap_export_rdma;

		CHECK_ERR(ex(NULL, d0, &desc, &len), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(ex(m, NULL, &desc, &len), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(ex(m, d0, NULL, &len), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(ex(m, d0, &desc, NULL), DOCA_ERROR_INVALID_VALUE);
	}
	/* refused NULL calls did not export */
	CHECK_OK(doca_mmap_get_exported(m, &f));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_export_rdma(m, d0, &desc, &len));
	CHECK_ERR(doca_mmap_create_from_export(NULL, NULL, len, d0, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, NULL, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_create_from_export(NULL, desc, len, d0, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(imp == (struct doca_mmap *)0x1);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_dev_close(d0));
}

int main(void)
{
	setenv("SOFTDPU_SIDE", "host", 1);
	unsetenv("SOFTDPU_TOPOLOGY");
	hw_topology_reload();
	RUN(test_create_defaults_and_user_data);
	RUN(test_memrange);
	RUN(test_permissions);
	RUN(test_max_devices);
	RUN(test_dev_add_rm_before_start);
	RUN(test_devices_fixed_after_start);
	RUN(test_start_stop);
	RUN(test_bufs_block_stop_and_destroy);
	RUN(test_free_cb);
	RUN(test_export_rules);
	RUN(test_export_desc_rights);
	RUN(test_rdma_import_host);
	RUN(test_rdma_import_rights);
	RUN(test_dpu_export_refused_on_host);
	RUN(test_dpu_import_on_dpu);
	RUN(test_descriptor_refusals);
	RUN(test_export_after_restart);
	RUN(test_stop_revokes_exports);
	RUN(test_null_args);
	RUN(test_dmabuf_memrange);
	return th_summary("test_mmap");
}
