/*
 * fab_qmem — memory for the device's queues that other processes map.
 *
 * A shared CQ, QP or SRQ (hw_qshare.h) gets its block from here: a memfd of
 * its own, mapped shared. Its record names the owner's pid, start time,
 * descriptor number and the memfd's inode; another process opens
 * /proc/<pid>/fd/<fd> (no ptrace rights needed), checks it is the same
 * process and the same file, and maps it. A mapping made here keeps the
 * pages alive after the owner frees its block or dies, so a peer's view
 * never faults: it only goes stale (its record moved), which the engine
 * checks.
 */
#ifndef FAB_QMEM_H_
#define FAB_QMEM_H_

/* Installs the hooks in the device (idempotent; done when the library is loaded). */
void fab_qmem_init(void);

#endif /* FAB_QMEM_H_ */
