/*
 * softdpu — environment configuration seen by every DOCA header.
 *
 * doca_compat.h includes this file, so every public header brings the build
 * configuration (doca_build_config.h) and, through the compatibility
 * helpers switched on here, <string.h>, <stdint.h> and doca_version.h — as
 * the vendor's headers do, which programs rely on without knowing it.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#include "doca_build_config.h"

/** Turns on the compatibility helpers of doca_compat.h. */
#define DOCA_COMPAT_HELPERS

/* Code built for the DPA device is linked statically and goes without them. */
#ifdef DOCA_DPA_DEVICE
#undef DOCA_COMPAT_HELPERS
#endif

#endif /* DOCA_CONFIG_H_ */
