/*
 * base_status — names of the status codes of the layers.
 *
 * A layer lists the text of each of its codes in an array indexed by the
 * code (designated initializers) and asks base_status_str() for one: a code
 * outside the array, or one the array leaves out, reads "unknown", so a
 * corrupted or future value never reads past the table.
 */
#ifndef BASE_STATUS_H_
#define BASE_STATUS_H_

#include <stddef.h>

#define BASE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline const char *base_status_name(const char *const *names, size_t n, long st)
{
	if (st < 0 || (size_t)st >= n || names[st] == NULL)
		return "unknown";
	return names[st];
}

#define base_status_str(names, st) base_status_name((names), BASE_ARRAY_SIZE(names), (long)(st))

/* Fails the build when a status table does not name every code up to last. */
#define BASE_STATUS_TABLE_COVERS(names, last)                                                                          \
	_Static_assert(BASE_ARRAY_SIZE(names) == (size_t)(last) + 1, #names " must name every code up to " #last)

#endif /* BASE_STATUS_H_ */
