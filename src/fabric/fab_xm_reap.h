/*
 * fab_xm_reap — the verbs service's keys deregistered off its thread.
 *
 * A deregistration is a fence: it waits for every execution of the device
 * to end (hw_epoch_sync). A requester of this machine waiting for another
 * machine's answer is such an execution; if that machine's service waits in
 * turn for its own requester, which waits for this machine's service, the
 * two machines wait on each other until the calls time out. So the service
 * never deregisters itself: it hands the key over and goes on. The key is
 * of the service's private domain and no longer used by it, so nothing
 * reaches it meanwhile.
 */
#ifndef FAB_XM_REAP_H_
#define FAB_XM_REAP_H_

#include <stdint.h>

/* Deregisters key later, on a thread of its own (at once when that thread cannot be had). */
void fab_xm_key_drop(uint32_t key);

#endif /* FAB_XM_REAP_H_ */
