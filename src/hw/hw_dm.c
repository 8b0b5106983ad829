/*
 * hw_dm — device memory: pages counted device-wide, bytes mapped here (hw_dm.h).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "base_log.h"
#include "hw_dm.h"
#include "hw_ids.h"

static void dm_pages_put(struct hw_dm *dm)
{
	while (dm->npages > 0)
		(void)hw_id_free(HW_ID_DM, dm->page[--dm->npages]);
}

/* Claims want pages; on failure those claimed are given back. */
static enum hw_status dm_pages_get(struct hw_dm *dm, uint32_t want)
{
	while (dm->npages < want) {
		enum hw_status st = hw_id_alloc_within(HW_ID_DM, HW_DM_PAGES, &dm->page[dm->npages]);

		if (st != HW_OK) {
			dm_pages_put(dm);
			return st == HW_ERR_LAYOUT ? HW_ERR_LAYOUT : HW_ERR_NOMEM;
		}
		dm->npages++;
	}
	return HW_OK;
}

enum hw_status hw_dm_alloc(uint64_t len, struct hw_dm **out)
{
	uint32_t want = (uint32_t)((len + HW_DM_PAGE - 1) / HW_DM_PAGE);
	struct hw_dm *dm;
	enum hw_status st;
	void *p;

	if (len == 0 || len > HW_DM_SIZE || out == NULL)
		return HW_ERR_INVAL;
	dm = calloc(1, sizeof(*dm) + want * sizeof(dm->page[0]));
	if (dm == NULL)
		return HW_ERR_NOMEM;
	st = dm_pages_get(dm, want);
	if (st != HW_OK)
		goto err_free;
	dm->map_len = (size_t)want * HW_DM_PAGE;
	p = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		BASE_ERR("device memory of %zu bytes: mmap failed", dm->map_len);
		st = HW_ERR_NOMEM;
		goto err_pages;
	}
	dm->base = p;
	dm->len = len;
	*out = dm;
	return HW_OK;
err_pages:
	dm_pages_put(dm);
err_free:
	free(dm);
	return st;
}

void hw_dm_free(struct hw_dm *dm)
{
	if (dm == NULL)
		return;
	munmap(dm->base, dm->map_len);
	dm_pages_put(dm);
	free(dm);
}
