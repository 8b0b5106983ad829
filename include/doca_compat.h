/*
 * softdpu — DOCA compatibility attributes.
 *
 * Public functions carry one of the markers below so that the shared
 * libraries export exactly the vendor API (everything else is hidden).
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMPAT_H_ */
