/*
 * se_dpa_handle — what a doca_dpa_dev_sync_event_t names: shared by the
 * Sync Event library (which fills it at doca_sync_event_export_to_dpa) and
 * the DPA device library (which device code reaches it through).
 *
 * DPA threads are host threads of this process, so the handle is the
 * address of this record in the event: the counter's address, and the
 * event's bell with the host function that rings it (an update from device
 * code wakes what waits on the event as a host update does).
 */
#ifndef SE_DPA_HANDLE_H_
#define SE_DPA_HANDLE_H_

#include <stdatomic.h>
#include <stdint.h>

#define SE_DPA_HANDLE_MAGIC 0x53454450414831ull /* "SEDPAH1" */

/*
 * doca_sync_event_remote_t / doca_dpa_dev_sync_event_remote_t (16 bytes):
 * data[0] the counter's address, data[1] SE_REMOTE_MAGIC << 32 | the key
 * whose remote write and atomic rights cover it (doca_sync_event_export_remote).
 */
#define SE_REMOTE_MAGIC 0x53455231u /* "SER1" */

struct se_dpa_handle {
	uint64_t magic;
	_Atomic uint64_t *value;
	void *bell;
	void (*ring)(void *bell);
	/*
	 * Device updates in progress: an update is its store and its ring,
	 * and the host may destroy the event as soon as it sees the store
	 * (a launch's completion), so destroy waits for this to reach 0.
	 */
	_Atomic uint32_t busy;
};

#endif /* SE_DPA_HANDLE_H_ */
