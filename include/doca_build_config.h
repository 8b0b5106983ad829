/*
 * softdpu — build configuration seen by programs.
 *
 * One installed library serves the host and the DPU side; the side is picked
 * at run time (SOFTDPU_SIDE). Programs may still compile for one side with
 * -DDOCA_ARCH_DPU or -DDOCA_ARCH_HOST; a default applies only when neither is given.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#if !defined(DOCA_ARCH_DPU) && !defined(DOCA_ARCH_HOST)
#define DOCA_ARCH_HOST
#endif

#define SOFTDPU 1

#endif /* DOCA_BUILD_CONFIG_H_ */
