/*
 * fab_qmem — memory for the device's queues that other processes map.
 *
 * A shared CQ, QP or SRQ (hw_qshare.h) gets its block from here: a range of
 * the process's one queue memfd, mapped shared, so a queue holds no
 * descriptor of its own. Its record names the owner's pid, start time,
 * descriptor number, the memfd's inode and the block's offset; another
 * process opens /proc/<pid>/fd/<fd> (no ptrace rights needed), checks it is
 * the same process and the same file, and maps the block. Offsets are never
 * reused and a freed block's pages are punched out, so a peer's view of a
 * destroyed queue never faults and never aliases a newer queue: it only
 * goes stale (its record moved), which the engine checks. No memory to be
 * had (no descriptor for the memfd): the queue's creation fails, logged.
 */
#ifndef FAB_QMEM_H_
#define FAB_QMEM_H_

/* Installs the hooks in the device (idempotent; done when the library is loaded). */
void fab_qmem_init(void);

#endif /* FAB_QMEM_H_ */
