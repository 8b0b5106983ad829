/*
 * DOCA 1.x mode: the 1.x signatures (DOCA_COMPAT_1X) over the 2.2 library.
 *
 * Runs on the DPU side with a topology whose p1 may also export to the DPU,
 * so remote devices, export and import, and DMA all fit in one process.
 */
#define DOCA_COMPAT_1X

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_dma.h"
#include "doca_mmap.h"
#include "harness.h"

#define NCHUNKS 4096
#define CHUNK 256
#define GAP 64
#define STRIDE (CHUNK + GAP)

static const char topology[] =
	"function name=p0 side=dpu type=pf pci=0000:03:00.0 vuid=MT0000ECPF0 ibdev=mlx5_0 iface=p0"
	" mac=02:53:44:03:00:00 ipv4=192.168.100.254 ipv6=fd00:100::fe\n"
	"function name=p1 side=dpu type=pf pci=0000:03:00.1 vuid=MT0000ECPF1 ibdev=mlx5_1 iface=p1"
	" caps=dma,export_dpu,from_export_dpu\n"
	"function name=p0s0 side=dpu type=sf parent=p0 vuid=MT0000ECPF0SF0 ibdev=mlx5_2\n"
	"function name=pf0 side=host type=pf pci=0000:0b:00.0 vuid=MT0000PF0 ibdev=mlx5_0\n"
	"function name=pf0vf0 side=host type=vf parent=pf0 pci=0000:0b:00.2 vuid=MT0000PF0VF0\n"
	"rep name=hpf0 parent=p0 represents=pf0 iface=pf0hpf\n"
	"rep name=hpf0vf0 parent=p0 represents=pf0vf0 iface=pf0vf0\n"
	"rep name=pf0sf0 parent=p0 represents=p0s0 iface=pf0sf0\n";

static struct doca_devinfo **list;
static struct doca_dev *p0, *p1;
static struct doca_dma *dma;
static struct doca_ctx *ctx;
static struct doca_workq *wq;
static struct doca_buf_inventory *inv;

static int frees; /* chunks handed to count_free */

static void count_free(void *addr, size_t len, void *opaque)
{
	(void)addr;
	(void)len;
	(void)opaque;
	frees++;
}

static doca_error_t copy(struct doca_buf *dst, struct doca_buf *src)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx },
					   .dst_buff = dst, .src_buff = src };
	struct doca_event ev;
	doca_error_t r = doca_workq_submit(wq, &job.base);

	if (r != DOCA_SUCCESS)
		return r;
	while ((r = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	return r;
}

/* Buffer over [a, a + len) whose data is all of it, ready to be a DMA source. */
static doca_error_t src_buf(struct doca_mmap *m, uint8_t *a, size_t len, struct doca_buf **b)
{
	doca_error_t r = doca_buf_inventory_buf_by_addr(inv, m, (char *)a, len, b);

	if (r == DOCA_SUCCESS)
		r = doca_buf_set_data(*b, a, len);
	return r;
}

static doca_error_t dma_pair(struct doca_mmap *sm, uint8_t *s, struct doca_mmap *dm, uint8_t *d, size_t len)
{
	struct doca_buf *sb, *db;
	doca_error_t r = src_buf(sm, s, len, &sb);

	if (r != DOCA_SUCCESS)
		return r;
	r = doca_buf_inventory_buf_by_addr(inv, dm, (char *)d, len, &db);
	if (r == DOCA_SUCCESS) {
		r = copy(db, sb);
		doca_buf_refcount_rm(db, NULL);
	}
	doca_buf_refcount_rm(sb, NULL);
	return r;
}

static struct doca_dev *open_nth(int i)
{
	struct doca_dev *d = NULL;

	return doca_dev_open(list[i], &d) == DOCA_SUCCESS ? d : NULL;
}

/* ---- devices ---- */

static void test_devinfo(void)
{
	struct doca_devinfo *info;
	char vuid[DOCA_DEVINFO_VUID_SIZE], ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE], iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t ip4[4], ip6[16];
	struct doca_pci_bdf bdf;
	int n = 0;

	while (list[n] != NULL)
		n++;
	CHECK(n == 3); /* NULL-terminated: p0, p1, p0s0 */
	CHECK_OK(doca_dev_as_devinfo(p0, &info));
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_VUID, (uint8_t *)vuid, sizeof(vuid)));
	CHECK(strcmp(vuid, "MT0000ECPF0") == 0);
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&bdf, sizeof(bdf)));
	CHECK(bdf.bus == 3 && bdf.device == 0 && bdf.function == 0);
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_IPV4_ADDR, ip4, sizeof(ip4)));
	CHECK(ip4[0] == 192 && ip4[3] == 254);
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_IPV6_ADDR, ip6, sizeof(ip6)));
	CHECK(ip6[0] == 0xfd && ip6[15] == 0xfe);
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_IFACE_NAME, (uint8_t *)iface, sizeof(iface)));
	CHECK(strcmp(iface, "p0") == 0);
	CHECK_OK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_IBDEV_NAME, (uint8_t *)ibdev, sizeof(ibdev)));
	CHECK(strcmp(ibdev, "mlx5_0") == 0);
	/* sizes: strings need room, fixed values their exact size */
	CHECK_ERR(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_VUID, (uint8_t *)vuid, 8),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_IPV4_ADDR, ip6, sizeof(ip6)),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_PCI_ADDR, ip6, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_property_get(info, (enum doca_devinfo_property)99, ip6, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_property_get(NULL, DOCA_DEVINFO_PROPERTY_VUID, (uint8_t *)vuid, sizeof(vuid)),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_as_devinfo(NULL, &info), DOCA_ERROR_INVALID_VALUE);
}

static void test_remote(void)
{
	struct doca_devinfo_remote **rl, *ri, *back;
	struct doca_dev_remote *rd;
	char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
	struct doca_pci_bdf bdf;
	int n = 0;

	CHECK_OK(doca_devinfo_remote_list_create(p0, &rl));
	while (rl[n] != NULL)
		n++;
	CHECK(n == 2); /* the host PF and VF; the SF representor is not a remote device */
	CHECK_OK(doca_devinfo_remote_property_get(rl[0], DOCA_DEVINFO_REMOTE_PROPERTY_VUID, (uint8_t *)vuid,
						  sizeof(vuid)));
	CHECK(strncmp(vuid, "MT0000PF0", 9) == 0);
	CHECK_OK(doca_devinfo_remote_property_get(rl[0], DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR, (uint8_t *)&bdf,
						  sizeof(bdf)));
	CHECK(bdf.bus == 0x0b);
	CHECK_ERR(doca_devinfo_remote_property_get(rl[0], DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR, (uint8_t *)vuid, 7),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_remote_property_get(rl[0], DOCA_DEVINFO_REMOTE_PROPERTY_VUID, (uint8_t *)vuid, 4),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_remote_property_get(rl[0], (enum doca_devinfo_remote_property)7, (uint8_t *)vuid, 4),
		  DOCA_ERROR_INVALID_VALUE);
	ri = rl[1];
	CHECK_OK(doca_dev_remote_open(ri, &rd));
	CHECK_OK(doca_devinfo_remote_list_destroy(rl)); /* open devices survive their list */
	CHECK_OK(doca_dev_remote_as_devinfo(rd, &back));
	CHECK_OK(doca_devinfo_remote_property_get(back, DOCA_DEVINFO_REMOTE_PROPERTY_VUID, (uint8_t *)vuid,
						  sizeof(vuid)));
	CHECK(strcmp(vuid, "MT0000PF0VF0") == 0);
	CHECK_OK(doca_dev_remote_close(rd));
	CHECK_ERR(doca_devinfo_remote_list_create(p0, NULL),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_remote_open(NULL, &rd), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_remote_close(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_remote_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_remote_from_sf(void)
{
	struct doca_devinfo_remote **rl;
	struct doca_dev *sf = open_nth(2);

	CHECK(sf != NULL);
	/* an SF manages no host functions */
	CHECK_ERR(doca_devinfo_remote_list_create(sf, &rl), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_dev_close(sf));
}

/* ---- buffers, inventory, work queue ---- */

static void test_inventory_and_buf(void)
{
	struct doca_buf_inventory *i2;
	struct doca_mmap *m;
	struct doca_buf *b;
	uint8_t mem[128], *head;
	uint32_t v = 0;
	uint16_t rc;
	size_t len;

	CHECK_OK(doca_buf_inventory_create("inv", 4, DOCA_BUF_EXTENSION_NONE, &i2));
	CHECK_OK(doca_buf_inventory_property_get(i2, DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS, (uint8_t *)&v,
						 sizeof(v)));
	CHECK(v == 4);
	CHECK_OK(doca_buf_inventory_property_get(i2, DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS, (uint8_t *)&v,
						 sizeof(v)));
	CHECK(v == DOCA_BUF_EXTENSION_NONE);
	CHECK_ERR(doca_buf_inventory_property_get(i2, DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS, (uint8_t *)&v, 2),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_property_get(i2, (enum doca_buf_inventory_property)9, (uint8_t *)&v, 4),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_property_set(i2, DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS, (uint8_t *)&v,
						  sizeof(v)),
		  DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_buf_inventory_property_set(i2, (enum doca_buf_inventory_property)9, (uint8_t *)&v, 4),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_inventory_start(i2));
	CHECK_OK(doca_mmap_create("m", &m));
	CHECK_OK(doca_mmap_dev_add(m, p0));
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_mmap_populate(m, (char *)mem, sizeof(mem), 64, NULL, NULL));
	CHECK_OK(doca_buf_inventory_buf_by_addr(i2, m, (char *)mem + 16, 32, &b));
	CHECK_OK(doca_buf_inventory_property_get(i2, DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS, (uint8_t *)&v,
						 sizeof(v)));
	CHECK(v == 3);
	CHECK_OK(doca_buf_head_get(b, &head));
	CHECK(head == mem + 16);
	CHECK_OK(doca_buf_len_get(b, &len));
	CHECK(len == 32);
	CHECK_OK(doca_buf_refcount_get(b, &rc));
	CHECK(rc == 1);
	CHECK_OK(doca_buf_refcount_rm(b, &rc));
	CHECK(rc == 1);
	CHECK_ERR(doca_buf_head_get(NULL, &head), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_len_get(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_refcount_get(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_stop(m));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_buf_inventory_stop(i2));
	CHECK_OK(doca_buf_inventory_destroy(i2));
}

static void test_workq_props(void)
{
	struct doca_workq *q;
	uint32_t d = 0, nd = 64;

	CHECK_OK(doca_workq_create(16, &q));
	CHECK_OK(doca_workq_property_get(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&d, sizeof(d)));
	CHECK(d == 16);
	CHECK_OK(doca_workq_property_set(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&nd, sizeof(nd)));
	CHECK_OK(doca_workq_property_get(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&d, sizeof(d)));
	CHECK(d == 64);
	CHECK_ERR(doca_workq_property_get(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&d, 2), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_property_set(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&nd, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_workq_property_set(q, (enum doca_workq_property)3, (uint8_t *)&nd, 4),
		  DOCA_ERROR_INVALID_VALUE);
	/* only while the work queue is in no context */
	CHECK_OK(doca_ctx_workq_add(ctx, q));
	CHECK_ERR(doca_workq_property_set(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&nd, sizeof(nd)),
		  DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_workq_property_get(q, DOCA_WORKQ_PROPERTY_DEPTH, (uint8_t *)&d, sizeof(d)));
	CHECK_OK(doca_ctx_workq_rm(ctx, q));
	CHECK_OK(doca_workq_destroy(q));
}

/* ---- mmap properties and populate ---- */

static void test_mmap_props(void)
{
	struct doca_mmap *m;
	uint32_t v = 0, four = 4;
	uint8_t f = 7;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, sizeof(v)));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES, (uint8_t *)&v, sizeof(v)));
	CHECK(v == 1);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_NUM_BUFS, (uint8_t *)&v, sizeof(v)));
	CHECK(v == 0);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_EXPORTED, &f, sizeof(f)));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_FROM_EXPORT, &f, sizeof(f)));
	CHECK(f == 0);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_ACCESS_FLAGS, (uint8_t *)&v, sizeof(v)));
	CHECK(v == (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE));
	CHECK_OK(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&four, sizeof(four)));
	CHECK_OK(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES, (uint8_t *)&four, sizeof(four)));
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, sizeof(v)));
	CHECK(v == 4);
	/* wrong sizes, unknown properties, read-only ones, zero */
	CHECK_ERR(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, 8),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_EXPORTED, (uint8_t *)&v, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, &f, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_property_get(m, (enum doca_mmap_property)42, (uint8_t *)&v, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_NUM_BUFS, (uint8_t *)&v, 4), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_EXPORTED, &f, 1), DOCA_ERROR_NOT_PERMITTED);
	v = 0;
	CHECK_ERR(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, 4),
		  DOCA_ERROR_INVALID_VALUE);
	/* a 1.x map has no memrange: ranges come from populate */
	CHECK_ERR(doca_mmap_set_memrange(m, &v, sizeof(v)), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(m)); /* empty maps start */
	CHECK_ERR(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&four, sizeof(four)),
		  DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_property_get(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, sizeof(v)));
	CHECK_OK(doca_mmap_destroy(m));
}

static void test_populate_rules(void)
{
	static uint8_t mem[4096];
	struct doca_mmap *m;
	struct doca_buf *b;
	uint32_t three = 3;

	frees = 0;
	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&three, sizeof(three)));
	CHECK_OK(doca_mmap_dev_add(m, p0));
	CHECK_OK(doca_mmap_start(m));
	CHECK_ERR(doca_mmap_populate(m, (char *)mem, 100, 3, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_populate(m, NULL, 100, 64, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_mmap_populate(m, (char *)mem, 0, 64, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_populate(m, (char *)mem + 1000, 1000, 64, count_free, NULL));
	CHECK_OK(doca_mmap_populate(m, (char *)mem, 500, 64, count_free, NULL)); /* before the first: sorted */
	/* overlaps: inside, across the start, across the end, covering */
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 1500, 10, 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 900, 200, 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 1999, 2, 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 400, 2000, 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_mmap_populate(m, (char *)mem + 2000, 1000, 64, count_free, NULL)); /* touching is fine */
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 3500, 10, 64, NULL, NULL), DOCA_ERROR_NO_MEMORY);
	/* buffers: inside one chunk only */
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem + 1000, 1000, &b));
	CHECK_OK(doca_buf_refcount_rm(b, NULL));
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem + 600, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem + 496, 8, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem + 1990, 20, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem + 2990, 20, &b), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_stop(m));
	CHECK_ERR(doca_mmap_populate(m, (char *)mem + 3500, 10, 64, NULL, NULL), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_buf_inventory_buf_by_addr(inv, m, (char *)mem, 8, &b), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_destroy(m));
	CHECK(frees == 3);
}

/* Chunks populated before and after start both reach the device; data stays inside its chunk. */
static void test_chunks_around_start(void)
{
	static uint8_t a[1024], d[1024];
	struct doca_mmap *m, *dm;
	struct doca_buf *sb, *db;
	uint32_t two = 2;

	CHECK_OK(doca_mmap_create(NULL, &m));
	CHECK_OK(doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&two, sizeof(two)));
	CHECK_OK(doca_mmap_dev_add(m, p0));
	CHECK_OK(doca_mmap_populate(m, (char *)a, 256, 64, NULL, NULL)); /* before start: kept for start */
	CHECK_OK(doca_mmap_start(m));
	CHECK_OK(doca_mmap_populate(m, (char *)a + 512, 256, 64, NULL, NULL));
	CHECK_OK(doca_mmap_create(NULL, &dm));
	CHECK_OK(doca_mmap_dev_add(dm, p0));
	CHECK_OK(doca_mmap_start(dm));
	CHECK_OK(doca_mmap_populate(dm, (char *)d, sizeof(d), 64, NULL, NULL));
	CHECK_OK(src_buf(m, a, 256, &sb));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, dm, (char *)d, sizeof(d), &db));
	CHECK_OK(copy(db, sb));
	CHECK(memcmp(a, d, 256) == 0);
	/* data cannot be moved past its buffer, so never across the gap to the next chunk */
	CHECK_ERR(doca_buf_set_data(sb, a + 128, 256), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_buf_refcount_rm(sb, NULL));
	CHECK_OK(doca_buf_refcount_rm(db, NULL));
	CHECK_OK(doca_mmap_destroy(m));
	CHECK_OK(doca_mmap_destroy(dm));
}

/* ---- §6.2: region-based flow, 4096 chunks ---- */

static struct doca_mmap *chunked_map(uint8_t *mem, uint32_t n)
{
	struct doca_mmap *m;

	if (doca_mmap_create("region", &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS)
		goto err;
	for (uint32_t i = 0; i < n; i++)
		if (doca_mmap_populate(m, (char *)mem + (size_t)i * STRIDE, CHUNK, 64, NULL, NULL) != DOCA_SUCCESS)
			goto err;
	if (doca_mmap_dev_add(m, p0) != DOCA_SUCCESS) /* after populate: registers every chunk */
		goto err;
	return m;
err:
	doca_mmap_destroy(m);
	return NULL;
}

static void test_region_flow(void)
{
	uint8_t *s = malloc((size_t)NCHUNKS * STRIDE), *d = calloc(NCHUNKS, STRIDE);
	struct doca_mmap *sm = NULL, *dm = NULL;
	struct doca_buf *b;
	uint32_t v, seed = 12345;

	if (s == NULL || d == NULL)
		goto out;
	for (size_t i = 0; i < (size_t)NCHUNKS * STRIDE; i++)
		s[i] = (uint8_t)(i * 31 + 7);
	sm = chunked_map(s, NCHUNKS);
	dm = chunked_map(d, NCHUNKS);
	if (sm == NULL || dm == NULL) {
		TH_FAIL("chunked maps");
		goto out;
	}
	for (int k = 0; k < 2000; k++) {
		uint32_t sc, dc, so, doff, len;

		seed = seed * 1103515245u + 12345u;
		sc = (seed >> 8) % NCHUNKS;
		dc = (seed >> 4) % NCHUNKS;
		len = 1 + (seed >> 20) % 128;
		so = (seed >> 13) % (CHUNK - len + 1);
		doff = (seed >> 3) % (CHUNK - len + 1);
		if (dma_pair(sm, s + (size_t)sc * STRIDE + so, dm, d + (size_t)dc * STRIDE + doff, len) != DOCA_SUCCESS ||
		    memcmp(s + (size_t)sc * STRIDE + so, d + (size_t)dc * STRIDE + doff, len) != 0) {
			TH_FAIL("copy %d: chunk %u+%u -> chunk %u+%u, %u bytes", k, sc, so, dc, doff, len);
			goto out;
		}
	}
	/* and back out of the destination into the source chunks' neighbours: first and last chunk */
	if (dma_pair(dm, d, sm, s + (size_t)(NCHUNKS - 1) * STRIDE, CHUNK) != DOCA_SUCCESS ||
	    memcmp(d, s + (size_t)(NCHUNKS - 1) * STRIDE, CHUNK) != 0)
		TH_FAIL("copy between the first and the last chunk");
	/* spanning two chunks, or in a gap, is refused */
	if (doca_buf_inventory_buf_by_addr(inv, sm, (char *)s + CHUNK - 8, 16, &b) != DOCA_ERROR_INVALID_VALUE ||
	    doca_buf_inventory_buf_by_addr(inv, sm, (char *)s + CHUNK + 8, 8, &b) != DOCA_ERROR_INVALID_VALUE ||
	    doca_buf_inventory_buf_by_addr(inv, sm, (char *)s + NCHUNKS * (size_t)STRIDE, 8, &b) !=
		    DOCA_ERROR_INVALID_VALUE)
		TH_FAIL("a buffer outside every chunk was accepted");
	if (doca_mmap_property_get(sm, DOCA_MMAP_PROPERTY_NUM_BUFS, (uint8_t *)&v, sizeof(v)) != DOCA_SUCCESS ||
	    v != 0)
		TH_FAIL("buffers left in the map");
out:
	if (sm != NULL)
		doca_mmap_destroy(sm);
	if (dm != NULL)
		doca_mmap_destroy(dm);
	free(s);
	free(d);
}

/* ---- §6.3.1: one map, populate per pair ---- */

static void test_random_access_flow(void)
{
	static uint8_t s[64 * 128], d[64 * 128];
	struct doca_mmap *sm, *dm;
	uint32_t n = 64;

	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = (uint8_t)(i ^ 0xa5);
	memset(d, 0, sizeof(d));
	CHECK_OK(doca_mmap_create(NULL, &sm));
	CHECK_OK(doca_mmap_create(NULL, &dm));
	CHECK_OK(doca_mmap_property_set(sm, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)));
	CHECK_OK(doca_mmap_property_set(dm, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)));
	CHECK_OK(doca_mmap_dev_add(sm, p0));
	CHECK_OK(doca_mmap_dev_add(dm, p0));
	CHECK_OK(doca_mmap_start(sm));
	CHECK_OK(doca_mmap_start(dm));
	for (uint32_t i = 0; i < n; i++) {
		/* pairs arrive out of address order */
		size_t at = (size_t)((i * 37) % n) * 128;

		CHECK_OK(doca_mmap_populate(sm, (char *)s + at, 100, 64, NULL, NULL));
		CHECK_OK(doca_mmap_populate(dm, (char *)d + at, 100, 64, NULL, NULL));
		CHECK_OK(dma_pair(sm, s + at, dm, d + at, 100));
		CHECK(memcmp(s + at, d + at, 100) == 0);
	}
	CHECK(d[100] == 0); /* gaps untouched */
	CHECK_ERR(doca_mmap_populate(sm, (char *)s + 100, 8, 64, NULL, NULL), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_mmap_destroy(sm));
	CHECK_OK(doca_mmap_destroy(dm));
}

/* ---- §6.3.2: one map per set of pairs ---- */

static void test_mmap_per_buffer_flow(void)
{
	static uint8_t s[4][200], d[4][200];
	uint32_t n = 4;

	for (int round = 0; round < 3; round++) {
		struct doca_mmap *sm, *dm;

		memset(s, 0x10 + round, sizeof(s));
		memset(d, 0, sizeof(d));
		CHECK_OK(doca_mmap_create(NULL, &sm));
		CHECK_OK(doca_mmap_create(NULL, &dm));
		CHECK_OK(doca_mmap_dev_add(sm, p0));
		CHECK_OK(doca_mmap_dev_add(dm, p0));
		CHECK_OK(doca_mmap_property_set(sm, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)));
		CHECK_OK(doca_mmap_property_set(dm, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)));
		CHECK_OK(doca_mmap_start(sm));
		CHECK_OK(doca_mmap_start(dm));
		for (uint32_t i = 0; i < n; i++) {
			CHECK_OK(doca_mmap_populate(sm, (char *)s[i], sizeof(s[i]), 64, NULL, NULL));
			CHECK_OK(doca_mmap_populate(dm, (char *)d[i], sizeof(d[i]), 64, NULL, NULL));
			CHECK_OK(dma_pair(sm, s[i], dm, d[i], sizeof(s[i])));
		}
		CHECK(memcmp(s, d, sizeof(s)) == 0);
		CHECK_OK(doca_mmap_dev_rm(sm, p0));
		CHECK_OK(doca_mmap_dev_rm(dm, p0));
		CHECK_OK(doca_mmap_destroy(sm));
		CHECK_OK(doca_mmap_destroy(dm));
	}
}

/* ---- §6.1: export and import ---- */

static void test_export_import(void)
{
	static uint8_t host[512], local[512], two_a[64], two_b[64];
	struct doca_mmap *exp, *imp, *lm, *multi;
	uint8_t *desc, *d2, f = 0;
	struct doca_buf *sb, *db;
	size_t len, l2;
	uint32_t v = 0, two = 2;

	for (size_t i = 0; i < sizeof(host); i++)
		host[i] = (uint8_t)(i * 3);
	memset(local, 0, sizeof(local));
	CHECK_OK(doca_mmap_create("host", &exp));
	CHECK_OK(doca_mmap_start(exp));
	CHECK_OK(doca_mmap_populate(exp, (char *)host, sizeof(host), 4096, NULL, NULL));
	CHECK_OK(doca_mmap_dev_add(exp, p1));
	CHECK_ERR(doca_mmap_export(exp, p1, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_export(exp, p1, &desc, &len));
	CHECK_OK(doca_mmap_property_get(exp, DOCA_MMAP_PROPERTY_EXPORTED, &f, sizeof(f)));
	CHECK(f == 1);
	CHECK_ERR(doca_mmap_export(exp, p1, &d2, &l2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_populate(exp, (char *)two_a, sizeof(two_a), 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_property_set(exp, DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES, (uint8_t *)&two, 4),
		  DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_create_from_export("dpu", desc, len - 1, p0, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_mmap_create_from_export("dpu", desc, len, p0, &imp));
	free(desc);
	CHECK_OK(doca_mmap_property_get(imp, DOCA_MMAP_PROPERTY_FROM_EXPORT, &f, sizeof(f)));
	CHECK(f == 1);
	CHECK_OK(doca_mmap_property_get(imp, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&v, sizeof(v)));
	CHECK(v == 1);
	CHECK_ERR(doca_mmap_populate(imp, (char *)two_a, sizeof(two_a), 64, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_export(imp, p0, &d2, &l2), DOCA_ERROR_NOT_PERMITTED);
	CHECK_ERR(doca_mmap_property_set(imp, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&two, 4),
		  DOCA_ERROR_NOT_PERMITTED);
	/* the DPU reads the host's memory */
	CHECK_OK(doca_mmap_create(NULL, &lm));
	CHECK_OK(doca_mmap_dev_add(lm, p0));
	CHECK_OK(doca_mmap_start(lm));
	CHECK_OK(doca_mmap_populate(lm, (char *)local, sizeof(local), 64, NULL, NULL));
	CHECK_OK(src_buf(imp, host + 64, 256, &sb));
	CHECK_OK(doca_buf_inventory_buf_by_addr(inv, lm, (char *)local, sizeof(local), &db));
	CHECK_OK(copy(db, sb));
	CHECK(memcmp(local, host + 64, 256) == 0);
	CHECK_OK(doca_buf_refcount_rm(sb, NULL));
	CHECK_OK(doca_buf_refcount_rm(db, NULL));
	CHECK_OK(doca_mmap_destroy(imp));
	CHECK_OK(doca_mmap_destroy(lm));
	CHECK_OK(doca_mmap_destroy(exp));
	/* only single-chunk maps, only started ones */
	CHECK_OK(doca_mmap_create(NULL, &multi));
	CHECK_OK(doca_mmap_property_set(multi, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&two, 4));
	CHECK_OK(doca_mmap_dev_add(multi, p1));
	CHECK_ERR(doca_mmap_export(multi, p1, &d2, &l2), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_mmap_start(multi));
	CHECK_OK(doca_mmap_populate(multi, (char *)two_a, sizeof(two_a), 64, NULL, NULL));
	CHECK_OK(doca_mmap_populate(multi, (char *)two_b, sizeof(two_b), 64, NULL, NULL));
	CHECK_ERR(doca_mmap_export(multi, p1, &d2, &l2), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_mmap_export_dpu(multi, p1, (const void **)&d2, &l2), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_mmap_destroy(multi));
}

static int setup(const char *topo_path)
{
	FILE *f = fopen(topo_path, "w");

	if (f == NULL || fputs(topology, f) < 0 || fclose(f) != 0)
		return -1;
	setenv("SOFTDPU_TOPOLOGY", topo_path, 1);
	setenv("SOFTDPU_SIDE", "dpu", 1);
	if (doca_devinfo_list_create(&list) != DOCA_SUCCESS || (p0 = open_nth(0)) == NULL ||
	    (p1 = open_nth(1)) == NULL)
		return -1;
	if (doca_buf_inventory_create(NULL, 64, DOCA_BUF_EXTENSION_NONE, &inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(inv) != DOCA_SUCCESS || doca_dma_create(&dma) != DOCA_SUCCESS)
		return -1;
	ctx = doca_dma_as_ctx(dma);
	if (doca_ctx_dev_add(ctx, p0) != DOCA_SUCCESS || doca_ctx_start(ctx) != DOCA_SUCCESS ||
	    doca_workq_create(32, &wq) != DOCA_SUCCESS || doca_ctx_workq_add(ctx, wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void teardown(void)
{
	doca_ctx_workq_rm(ctx, wq);
	doca_workq_destroy(wq);
	doca_ctx_stop(ctx);
	doca_ctx_dev_rm(ctx, p0);
	doca_dma_destroy(dma);
	doca_buf_inventory_stop(inv);
	doca_buf_inventory_destroy(inv);
	doca_dev_close(p1);
	doca_dev_close(p0);
	doca_devinfo_list_destroy(list);
}

int main(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/softdpu-compat1x-%d.topo", (int)getpid());
	if (setup(path) != 0) {
		fprintf(stderr, "setup failed\n");
		unlink(path);
		return 1;
	}
	RUN(test_devinfo);
	RUN(test_remote);
	RUN(test_remote_from_sf);
	RUN(test_inventory_and_buf);
	RUN(test_workq_props);
	RUN(test_mmap_props);
	RUN(test_populate_rules);
	RUN(test_chunks_around_start);
	RUN(test_region_flow);
	RUN(test_random_access_flow);
	RUN(test_mmap_per_buffer_flow);
	RUN(test_export_import);
	teardown();
	unlink(path);
	return th_summary("test_compat_1x");
}
