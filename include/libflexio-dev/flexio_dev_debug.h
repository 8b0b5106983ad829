/*
 * softdpu — FlexIO SDK device debug output (libflexio-dev).
 *
 * The SDK's low-level trace calls, which on the vendor's simulator write to
 * its log. They need no thread context or host print setup.
 */
#ifndef SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_DEBUG_H_
#define SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_DEBUG_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes len bytes of str. */
void print_sim_str(const char *str, int len);
/* Writes val in hex, at most len digits (the high ones dropped). */
void print_sim_hex(uint64_t val, int len);
/* Writes val in decimal, at most len digits (the high ones dropped). */
void print_sim_int(int val, int len);
/* Writes val as a character. */
void print_sim_putc(int val);
/* Writes text and val with the calling function and line. */
void sim_trace(const char *text, uint64_t val, const char *func, int line);

#define SIM_TRACE(text, val) sim_trace((text), (uint64_t)(val), __func__, __LINE__)
#define SIM_TRACEVAL(val) SIM_TRACE(#val, (val))

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LIBFLEXIO_DEV_FLEXIO_DEV_DEBUG_H_ */
