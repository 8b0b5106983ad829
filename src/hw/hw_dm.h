/*
 * hw_dm — the device's on-chip memory (MEMIC), as ibv_alloc_dm hands it out.
 *
 * A BlueField-2 has HW_DM_SIZE bytes of it for all the users of the device,
 * allocated in pages. The pages are a capacity of the whole device: each one
 * an allocation holds is a slot of the number table's HW_ID_DM kind (hw_ids.h),
 * so every process of the machine counts against the same total, and the
 * pages of a process that dies without freeing them are taken back when
 * another one finds the device full. The bytes are memory of the allocating
 * process; other processes reach them as the card's users do, through a
 * memory key registered on them (ibv_reg_dm_mr), which shares them as any
 * registration is shared (fab_mr.h).
 */
#ifndef HW_DM_H_
#define HW_DM_H_

#include <stddef.h>
#include <stdint.h>

#include "hw_mem.h"

#define HW_DM_SIZE (256u << 10) /* MEMIC of a BlueField-2 (memic_bar_size) */
#define HW_DM_PAGE 4096u	/* the unit the device allocates it in */
#define HW_DM_PAGES (HW_DM_SIZE / HW_DM_PAGE)
/* Alignments the device grants beyond its 64-byte base, as log2 over 64 B: up to a page. */
#define HW_DM_LOG_BASE_ALIGN 6
#define HW_DM_LOG_MAX_ALIGN 6

struct hw_dm {
	uint8_t *base;	 /* the first byte, page aligned */
	uint64_t len;	 /* the length asked for */
	size_t map_len;	 /* whole pages */
	uint32_t npages;
	uint32_t page[]; /* the HW_ID_DM numbers held */
};

/*
 * Allocates len bytes (1 .. HW_DM_SIZE, else HW_ERR_INVAL), zeroed.
 * HW_ERR_NOMEM when the device has not that many pages free; HW_ERR_LAYOUT
 * when the device's number table cannot be used.
 */
enum hw_status hw_dm_alloc(uint64_t len, struct hw_dm **out);
/* Gives the memory and its pages back; no access through it is possible afterwards. */
void hw_dm_free(struct hw_dm *dm);

#endif /* HW_DM_H_ */
