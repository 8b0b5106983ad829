/*
 * hw_shm — the device's small shared tables of one user (/dev/shm): created
 * exclusively with mode 0600, and refused unless the caller's user owns them
 * with no access for others and they have the expected size
 * (base_private.h); a refusal names the file.
 */
#ifndef HW_SHM_H_
#define HW_SHM_H_

#include <stddef.h>

/*
 * Maps the table /softdpu-<uid><machine>-<what>-v<version> of size bytes
 * (zero-filled when new). NULL when it cannot be had, with a log line
 * saying why.
 */
void *hw_shm_table(const char *what, unsigned version, size_t size);

#endif /* HW_SHM_H_ */
