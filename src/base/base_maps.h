/*
 * base_maps — the process's mappings as /proc/self/maps lists them, read
 * with open(2)/read(2) into the stack and parsed without stdio: a SIGSEGV
 * handler and a fork's child (where nothing may allocate) read them.
 */
#ifndef BASE_MAPS_H_
#define BASE_MAPS_H_

#include <stdint.h>

struct base_map {
	uint64_t lo, hi;   /* [lo, hi) */
	char perms[5];	   /* "rw-s": perms[3] is 's' for a shared mapping */
	uint64_t off;	   /* the file offset mapped at lo */
	unsigned long ino; /* the mapped file's inode; 0 for anonymous memory */
	const char *path;  /* the rest of the line: the file, "[heap]", ... or "" (valid during the call only) */
};

/*
 * Calls fn on each mapping in address order until it returns non-zero.
 * Returns that value, 0 when every mapping was seen, -1 when the file
 * cannot be opened.
 */
int base_maps_scan(int (*fn)(const struct base_map *m, void *arg), void *arg);

#endif /* BASE_MAPS_H_ */
