/*
 * softdpu — DOCA version information.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_VER_MAJOR 2
#define DOCA_VER_MINOR 2
#define DOCA_VER_PATCH 0
#define DOCA_VER_STRING "2.2.0"

/** Numeric version: major in bits 24+, minor in 16..23, patch in 0..15. */
#define DOCA_VERSION_NUM(major, minor, patch) (((major) << 24) | ((minor) << 16) | (patch))
#define DOCA_CURRENT_VERSION_NUM DOCA_VERSION_NUM(DOCA_VER_MAJOR, DOCA_VER_MINOR, DOCA_VER_PATCH)

#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) (DOCA_VERSION_NUM(major, minor, patch) == DOCA_CURRENT_VERSION_NUM)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) (DOCA_VERSION_NUM(major, minor, patch) <= DOCA_CURRENT_VERSION_NUM)

/** Version the program was compiled against. */
static inline const char *doca_version(void)
{
	return DOCA_VER_STRING;
}

/** Version of the library the program runs with. */
DOCA_STABLE
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
