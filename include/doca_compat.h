/*
 * softdpu — DOCA compatibility attributes.
 *
 * Public functions carry one of the markers below so that the shared
 * libraries export exactly the vendor API (everything else is hidden).
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include "doca_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kept in the object even when nothing in it refers to the symbol (as the vendor's). */
#define DOCA_USED __attribute__((used))
#define DOCA_EXPORTED __attribute__((visibility("default")))

#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define __DOCA_EXPERIMENTAL DOCA_EXPORTED
#else
/* As with the vendor SDK, experimental symbols warn unless explicitly allowed. */
#define __DOCA_EXPERIMENTAL __attribute__((deprecated("Symbol is defined as experimental"))) DOCA_EXPORTED
#endif
#define DOCA_EXPERIMENTAL __DOCA_EXPERIMENTAL
#define DOCA_STABLE DOCA_EXPORTED

#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED DOCA_EXPORTED
#else
#define DOCA_DEPRECATED __attribute__((deprecated)) DOCA_EXPORTED
#endif

/*
 * Compatibility helpers (on unless doca_config.h turns them off): a struct
 * that starts with DOCA_STRUCT_START carries the API version it was built
 * against. They come after the markers above because doca_version.h, which
 * they need, uses those markers.
 */
#ifdef DOCA_COMPAT_HELPERS

#include <stdint.h>
#include <string.h>

#include "doca_version.h"

#define DOCA_STRUCT_START uint32_t __doca_api_version
#define DOCA_STRUCT_GET_VERSION(s) (s)->__doca_api_version
#define DOCA_STRUCT_CTOR(s) (s).__doca_api_version = DOCA_CURRENT_VERSION_NUM
#define DOCA_STRUCT_PTR_CTOR(s) DOCA_STRUCT_CTOR(*(s))
#define DOCA_STRUCT_MEMSET_CTOR(s)                                                                                     \
	do {                                                                                                           \
		memset(&(s), 0, sizeof(s));                                                                            \
		(s).__doca_api_version = DOCA_CURRENT_VERSION_NUM;                                                     \
	} while (0)
#define DOCA_STRUCT_PTR_MEMSET_CTOR(s) DOCA_STRUCT_MEMSET_CTOR(*(s))
#define DOCA_STRUCT_CTOR_LIST_START .__doca_api_version = DOCA_CURRENT_VERSION_NUM

#endif /* DOCA_COMPAT_HELPERS */

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMPAT_H_ */
