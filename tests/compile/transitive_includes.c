/*
 * A program that includes nothing but DOCA headers and uses the standard
 * library the way the vendor's samples do: PRIu64 after doca_dma.h, bool
 * after doca_buf.h / doca_mmap.h / doca_sha.h, strcpy and friends after
 * doca_argp.h / doca_log.h, and so on. The vendor's headers bring those
 * standard headers with them; this file only builds if ours do the same.
 *
 * Each section starts with the one DOCA header that must bring what the
 * section uses. Built without TI_SECTION the file is one program with every
 * section in order; built with -DTI_SECTION=n it holds section n alone, so a
 * header that forgot an include cannot hide behind one included before it.
 */
#ifndef TI_SECTION
#define TI_ALL 1
#define TI_SECTION 0
#else
#define TI_ALL 0
#endif

/* ---- 1: doca_argp.h — <string.h> and <stdint.h> through doca_compat.h ---------------------------------------- */
#if TI_ALL || TI_SECTION == 1
#include <doca_argp.h>

struct ti_argp_cfg {
	char pci_addr[16];
	char text[64];
	uint32_t size;
};

/* An argp parameter callback as the samples write them. */
doca_error_t ti_pci_callback(void *param, void *config)
{
	struct ti_argp_cfg *cfg = config;
	const char *addr = param;
	size_t len = strlen(addr);

	if (len >= sizeof(cfg->pci_addr))
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(cfg->pci_addr, addr);
	memcpy(cfg->text, addr, len + 1);
	cfg->size = (uint32_t)len;
	return DOCA_SUCCESS;
}
#endif

/* ---- 2: doca_log.h — <stdio.h>, <string.h> ------------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 2
#include <doca_log.h>

DOCA_LOG_REGISTER(TRANSITIVE_INCLUDES);

doca_error_t ti_copy_name(char *dst, size_t dst_size, const char *src)
{
	if (strlen(src) >= dst_size) {
		DOCA_LOG_ERR("name too long: %s", src);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(dst, src);
	return DOCA_SUCCESS;
}

int ti_print_name(FILE *out, const char *name)
{
	char line[80];

	snprintf(line, sizeof(line), "name=%s", name);
	return fprintf(out, "%s\n", line);
}
#endif

/* ---- 3: doca_buf.h — <stdbool.h>, <stddef.h>, <stdint.h> --------------------------------------------------- */
#if TI_ALL || TI_SECTION == 3
#include <doca_buf.h>

bool ti_buf_is_empty(const struct doca_buf *buf)
{
	size_t data_len = 0;
	uint16_t refcount = 0;

	if (doca_buf_get_refcount(buf, &refcount) != DOCA_SUCCESS)
		return true;
	return doca_buf_get_data_len(buf, &data_len) != DOCA_SUCCESS || data_len == 0;
}
#endif

/* ---- 4: doca_mmap.h — <stdbool.h> ------------------------------------------------------------------------------ */
#if TI_ALL || TI_SECTION == 4
#include <doca_mmap.h>

struct ti_mmap_cfg {
	bool export_to_dpu;
	size_t len;
	uint32_t access;
};

bool ti_mmap_covers(struct doca_mmap *mmap, const struct ti_mmap_cfg *cfg)
{
	void *addr = NULL;
	size_t len = 0;

	if (doca_mmap_get_memrange(mmap, &addr, &len) != DOCA_SUCCESS)
		return false;
	return addr != NULL && len >= cfg->len;
}
#endif

/* ---- 5: doca_sha.h — <stdbool.h> and <string.h> ------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 5
#include <doca_sha.h>

bool ti_digest_matches(const uint8_t *digest, const uint8_t expected[DOCA_SHA256_BYTE_COUNT])
{
	bool same = memcmp(digest, expected, DOCA_SHA256_BYTE_COUNT) == 0;

	return same;
}
#endif

/* ---- 6: doca_dma.h — <inttypes.h> (PRIu64), logged through doca_log.h ---------------------------------------- */
#if TI_ALL || TI_SECTION == 6
#include <doca_dma.h>
#include <doca_log.h>

#if !TI_ALL
DOCA_LOG_REGISTER(TRANSITIVE_INCLUDES_DMA);
#endif

doca_error_t ti_dma_check_size(struct doca_devinfo *devinfo, uint64_t want)
{
	uint64_t max_size = 0;
	doca_error_t result;

	result = doca_dma_get_max_buf_size(devinfo, &max_size);
	if (result != DOCA_SUCCESS)
		return result;
	if (want > max_size) {
		DOCA_LOG_ERR("copy of %" PRIu64 " bytes is above the limit of %" PRIu64, want, max_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

bool ti_dma_job_has_src(const struct doca_dma_job_memcpy *job)
{
	return job->src_buff != NULL;
}
#endif

/* ---- 7: doca_sync_event.h — <stdint.h> -------------------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 7
#include <doca_sync_event.h>

doca_error_t ti_event_bump(struct doca_sync_event *event, uint64_t *value)
{
	uint64_t fetched = 0;
	doca_error_t result = doca_sync_event_update_add(event, 1, &fetched);

	*value = fetched + 1;
	return result;
}
#endif

/* ---- 8: doca_comm_channel.h — <stddef.h>, <stdint.h>, <string.h> --------------------------------------------- */
#if TI_ALL || TI_SECTION == 8
#include <doca_comm_channel.h>

size_t ti_cc_pack(char *msg, size_t msg_size, const char *text)
{
	size_t len = strlen(text) + 1;
	uint32_t max_name_len = 0;

	if (doca_comm_channel_get_max_service_name_len(&max_name_len) != DOCA_SUCCESS || len > msg_size)
		return 0;
	memcpy(msg, text, len);
	return len;
}
#endif

/* ---- 9: doca_graph.h — <stdbool.h> ----------------------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 9
#include <doca_graph.h>

struct ti_graph_state {
	bool sha_done;
	bool dma_done;
	size_t instances;
};

bool ti_graph_done(const struct ti_graph_state *state)
{
	return state->sha_done && state->dma_done;
}
#endif

/* ---- 10: doca_dev.h — <stdint.h>, <string.h> ------------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 10
#include <doca_dev.h>

int ti_dev_mac_is(const struct doca_devinfo *devinfo, const uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE])
{
	uint8_t got[DOCA_DEVINFO_MAC_ADDR_SIZE];
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	memset(got, 0, sizeof(got));
	if (doca_devinfo_get_mac_addr(devinfo, got, sizeof(got)) != DOCA_SUCCESS)
		return 0;
	if (doca_devinfo_get_pci_addr_str(devinfo, pci) != DOCA_SUCCESS || strncmp(pci, "0000", 4) != 0)
		return 0;
	return memcmp(got, mac, sizeof(got)) == 0;
}
#endif

/* ---- 11: doca_error.h — doca_unlikely (doca_common_defines.h), <string.h> --------------------------------------- */
#if TI_ALL || TI_SECTION == 11
#include <doca_error.h>

int ti_error_is(doca_error_t result, const char *name)
{
	if (doca_unlikely(name == NULL))
		return 0;
	return DOCA_IS_ERROR(result) && strcmp(doca_get_error_name(result), name) == 0;
}
#endif

/* ---- 12: doca_version.h — <stddef.h> --------------------------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 12
#include <doca_version.h>

size_t ti_version_len(void)
{
	const char *v = doca_version();
	size_t n = 0;

	while (v[n] != '\0')
		n++;
	return n;
}
#endif

/* ---- 13: doca_compat.h — its compatibility helpers bring <string.h> and doca_version.h --------------------------- */
#if TI_ALL || TI_SECTION == 13
#include <doca_compat.h>

struct ti_versioned {
	DOCA_STRUCT_START;
	uint32_t value;
};

uint32_t ti_versioned_init(struct ti_versioned *v)
{
	DOCA_STRUCT_PTR_MEMSET_CTOR(v);
	return DOCA_STRUCT_GET_VERSION(v) == (uint32_t)DOCA_CURRENT_VERSION_NUM;
}
#endif

/* ---- 14: doca_ctx.h and doca_types.h — <stdint.h> ------------------------------------------------------------ */
#if TI_ALL || TI_SECTION == 14
#include <doca_ctx.h>

uint64_t ti_event_user_value(const struct doca_event *ev)
{
	union doca_data data = ev->user_data;
	uint32_t type = (uint32_t)ev->type;

	return data.u64 + type;
}
#endif

/* ---- 15: the buffer containers — <stddef.h>, <stdint.h> ------------------------------------------------------- */
#if TI_ALL || TI_SECTION == 15
#include <doca_buf_inventory.h>

size_t ti_inventory_free(struct doca_buf_inventory *inv)
{
	uint32_t num = 0;

	return doca_buf_inventory_get_num_free_elements(inv, &num) == DOCA_SUCCESS ? (size_t)num : 0;
}
#endif
#if TI_ALL || TI_SECTION == 16
#include <doca_bufpool.h>

size_t ti_pool_free(struct doca_bufpool *pool)
{
	uint32_t num = 0;

	return doca_bufpool_get_num_free_elements(pool, &num) == DOCA_SUCCESS ? (size_t)num : 0;
}
#endif
#if TI_ALL || TI_SECTION == 17
#include <doca_buf_array.h>

size_t ti_buf_arr_bytes(uint32_t num_elem, size_t elem_size)
{
	return (size_t)num_elem * elem_size;
}
#endif

/* ---- 18: doca_common_defines.h, which the samples include by name -------------------------------------------- */
#if TI_ALL || TI_SECTION == 18
#include <doca_common_defines.h>

int ti_likely_positive(int x)
{
	return doca_likely(x > 0) ? 1 : 0;
}
#endif

/* ---- 19: doca_config.h — the build configuration and the compatibility helpers switch ------------------------- */
#if TI_ALL || TI_SECTION == 19
#include <doca_config.h>

#if !defined(DOCA_ARCH_HOST) && !defined(DOCA_ARCH_DPU)
#error "doca_config.h must bring the build configuration (DOCA_ARCH_HOST or DOCA_ARCH_DPU)"
#endif
#ifndef DOCA_COMPAT_HELPERS
#error "doca_config.h must enable the compatibility helpers"
#endif

int ti_config_is_host(void)
{
#ifdef DOCA_ARCH_DPU
	return 0;
#else
	return 1;
#endif
}
#endif

/* ---- 20: doca_comm_channel.h — doca_dev.h, as 2.2's: a PCI address buffer sized by its macro -------------------- */
#if TI_ALL || TI_SECTION == 20
#include <doca_comm_channel.h>

size_t ti_cc_pci_addr_size(void)
{
	char addr[DOCA_DEVINFO_PCI_ADDR_SIZE];

	return sizeof(addr);
}
#endif

/* ---- 21: doca_buf_inventory.h — doca_mmap.h, as 2.2's: a buffer taken from an mmap's range ---------------------- */
#if TI_ALL || TI_SECTION == 21
#include <doca_buf_inventory.h>

doca_error_t ti_inventory_mmap_range(struct doca_mmap *mmap, void **addr, size_t *len)
{
	return doca_mmap_get_memrange(mmap, addr, len);
}
#endif

/* ---- 22: doca_buf_array.h — doca_buf.h and doca_mmap.h, as 2.2's ------------------------------------------------- */
#if TI_ALL || TI_SECTION == 22
#include <doca_buf_array.h>

doca_error_t ti_buf_arr_over(struct doca_mmap *mmap, struct doca_buf_arr **arr, struct doca_buf *buf, size_t *len)
{
	doca_error_t result = doca_mmap_start(mmap);

	if (result != DOCA_SUCCESS)
		return result;
	result = doca_buf_get_len(buf, len);
	return result != DOCA_SUCCESS ? result : doca_buf_arr_create(mmap, arr);
}
#endif

/* ---- 23: doca_types.h and doca_compat.h — DOCA_GID_BYTE_LENGTH and DOCA_USED, as 2.2's ---------------------------- */
#if TI_ALL || TI_SECTION == 23
#include <doca_types.h>
#include <doca_compat.h>

static DOCA_USED const unsigned char ti_gid[DOCA_GID_BYTE_LENGTH];

size_t ti_gid_len(void)
{
	return sizeof(ti_gid);
}
#endif

#if TI_ALL
int main(void)
{
	struct ti_argp_cfg cfg;
	char name[32];
	doca_error_t result;

	memset(&cfg, 0, sizeof(cfg));
	result = ti_pci_callback("03:00.0", &cfg);
	if (result != DOCA_SUCCESS || strcmp(cfg.pci_addr, "03:00.0") != 0 || cfg.size != 7)
		return 1;
	if (ti_copy_name(name, sizeof(name), "transitive") != DOCA_SUCCESS)
		return 1;
	if (ti_cc_pack(name, sizeof(name), "ok") != 3)
		return 1;
	printf("transitive includes: %s, version %s, %" PRIu64 " bytes\n", name, doca_version(), (uint64_t)cfg.size);
	return 0;
}
#endif
