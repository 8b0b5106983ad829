/* dpad_int — the DOCA DPA device library's own declarations. */
#ifndef DPAD_INT_H_
#define DPAD_INT_H_

#include <doca_dpa_dev_sync_event.h>

#endif /* DPAD_INT_H_ */
