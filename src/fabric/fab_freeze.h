/*
 * fab_freeze — holding off the program's writes to a range of its memory
 * while the fabric moves the range's pages (fab_share.c copies them onto
 * shareable memory and maps that in their place). The range is made
 * read-only for the move; a thread of the program that writes into it
 * meanwhile takes a fault the library's handler recognises, waits for the
 * move to end and returns, so the write is retried on the moved page and
 * nothing written during the move is lost. Other faults go to the handler
 * installed before.
 *
 * Only writes by user code are held; a system call writing into the range
 * during the move (read(2) into a buffer there) fails with EFAULT.
 */
#ifndef FAB_FREEZE_H_
#define FAB_FREEZE_H_

#include <stdint.h>

/* Makes [start, start+len) read-only until fab_freeze_end; -1 (nothing changed) if it cannot. One at a time. */
int fab_freeze_begin(uint64_t start, uint64_t len);
/* The move is over (the range is writable again, by its new mapping or by restore): held writers retry. */
void fab_freeze_end(int restore);

#endif /* FAB_FREEZE_H_ */
