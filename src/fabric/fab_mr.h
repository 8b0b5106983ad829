/*
 * fab_mr — making a registered range reachable by the other processes of the
 * device, and reaching theirs.
 *
 * The owner moves the range's pages onto a memfd (fab_share.h; several when
 * the range spans pages moved for other registrations, up to
 * FAB_SHARE_SEGS_MAX) and publishes, with the key's device-wide record
 * (hw_mkey_share), where those memfds are: its pid, start time, their
 * descriptor numbers and inodes (more than the record holds: in a sealed
 * memfd of their own, which the record names).
 * Another process resolving the key (hw_mkey_resolve) opens each
 * /proc/<pid>/fd/<fd> — checked to be the same process and the same file —
 * and maps them once, side by side as in the owner; every later access
 * through any key on that memory is a plain load or store.
 */
#ifndef FAB_MR_H_
#define FAB_MR_H_

#include <stdint.h>

#include "fab_share.h"

/*
 * Shares key's memory [addr, addr + len). 0 and *s filled (release it with
 * fab_mr_unshare after the key is gone); FAB_SHARE_CANNOT when the memory
 * cannot be moved (file mappings, read-only memory) or the key cannot be
 * named elsewhere: other processes then cannot reach it and their accesses
 * fail as with a bad key (FAB_SHARE_OVERLAP: it spans more memory moved for
 * other registrations than a record can name); FAB_SHARE_NO_RESOURCES when the
 * system refused what sharing takes (errno says which; logged).
 */
int fab_mr_share(uint32_t key, void *addr, uint64_t len, struct fab_shared *s);
void fab_mr_unshare(struct fab_shared *s);

/* Installs the resolver's attach function (idempotent; libraries call it at start). */
void fab_mr_init(void);

#endif /* FAB_MR_H_ */
