/*
 * softdpu — DOCA error codes (DOCA 2.2 list).
 */
#ifndef DOCA_ERROR_H_
#define DOCA_ERROR_H_

#include "doca_common_defines.h"
#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum doca_error {
	DOCA_SUCCESS = 0,
	DOCA_ERROR_UNKNOWN = 1,		      /**< Unknown error */
	DOCA_ERROR_NOT_PERMITTED = 2,	      /**< Operation not permitted */
	DOCA_ERROR_IN_USE = 3,		      /**< Resource already in use */
	DOCA_ERROR_NOT_SUPPORTED = 4,	      /**< Operation not supported */
	DOCA_ERROR_AGAIN = 5,		      /**< Resource temporarily unavailable, try again */
	DOCA_ERROR_INVALID_VALUE = 6,	      /**< Invalid input */
	DOCA_ERROR_NO_MEMORY = 7,	      /**< Memory allocation failure */
	DOCA_ERROR_INITIALIZATION = 8,	      /**< Resource initialization failure */
	DOCA_ERROR_TIME_OUT = 9,	      /**< Timer expired waiting for resource */
	DOCA_ERROR_SHUTDOWN = 10,	      /**< Shut down in process or completed */
	DOCA_ERROR_CONNECTION_RESET = 11,     /**< Connection reset by peer */
	DOCA_ERROR_CONNECTION_ABORTED = 12,   /**< Connection aborted */
	DOCA_ERROR_CONNECTION_INPROGRESS = 13, /**< Connection in progress */
	DOCA_ERROR_NOT_CONNECTED = 14,	      /**< Not connected */
	DOCA_ERROR_NO_LOCK = 15,	      /**< Unable to acquire required lock */
	DOCA_ERROR_NOT_FOUND = 16,	      /**< Resource not found */
	DOCA_ERROR_IO_FAILED = 17,	      /**< Input/output operation failed */
	DOCA_ERROR_BAD_STATE = 18,	      /**< Bad state */
	DOCA_ERROR_UNSUPPORTED_VERSION = 19,  /**< Unsupported version */
	DOCA_ERROR_OPERATING_SYSTEM = 20,     /**< Operating system call failure */
	DOCA_ERROR_DRIVER = 21,		      /**< DOCA driver call failure */
	DOCA_ERROR_UNEXPECTED = 22,	      /**< An unexpected scenario was detected */
	DOCA_ERROR_ALREADY_EXIST = 23,	      /**< Resource already exists */
	DOCA_ERROR_FULL = 24,		      /**< No more space in resource */
	DOCA_ERROR_EMPTY = 25,		      /**< No entry is available in resource */
	DOCA_ERROR_IN_PROGRESS = 26,	      /**< Operation is in progress */
	DOCA_ERROR_TOO_BIG = 27,	      /**< Requested operation too big to be contained */
} doca_error_t;

/** Keep the first error: overwrite r with t only while r is still DOCA_SUCCESS. */
#define DOCA_ERROR_PROPAGATE(r, t)                                                                                     \
	do {                                                                                                           \
		if ((r) == DOCA_SUCCESS)                                                                               \
			(r) = (t);                                                                                     \
	} while (0)

/** True when r is an error; hinted as the unlikely branch. */
#define DOCA_IS_ERROR(r) doca_unlikely((r) != DOCA_SUCCESS)

/** Name of the error code, e.g. "DOCA_ERROR_INVALID_VALUE"; "DOCA_ERROR_UNKNOWN" for codes outside the list. */
DOCA_STABLE
const char *doca_get_error_name(doca_error_t error);

/** Human-readable description of the error code. */
DOCA_STABLE
const char *doca_get_error_string(doca_error_t error);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ERROR_H_ */
