/*
 * vb_export — how the verbs libraries export their API.
 *
 * The project compiles with -fvisibility=hidden, so an exported function says
 * so (VB_EXPORT); the version script (libibverbs.map, libmlx5.map, generated
 * from the .syms lists) then gives it its version node. A name exported under
 * two versions (an old IBVERBS_1.0 entry point and the default IBVERBS_1.1
 * one) is defined twice under local names and bound with .symver, as
 * rdma-core does: VB_SYMVER makes the default name@@NODE and checks the local
 * definition has the public prototype, VB_SYMVER_OLD a non-default name@NODE.
 */
#ifndef VB_EXPORT_H_
#define VB_EXPORT_H_

#include <errno.h>

#define VB_EXPORT __attribute__((visibility("default")))

#define VB_SYMVER(local, name, node)                                                              \
	__asm__(".symver " #local "," #name "@@" node);                                           \
	_Static_assert(__builtin_types_compatible_p(__typeof__(local), __typeof__(name)),         \
		       #local " has the prototype of " #name)

#define VB_SYMVER_OLD(local, name, node) __asm__(".symver " #local "," #name "@" node)

/* Logs "name: not supported" once per call site (the first call only). */
void vb_log_unsupported(const char *name);

#define VB_UNSUPPORTED(name)                                                                      \
	do {                                                                                      \
		static int vb_once_;                                                              \
		if (!__atomic_exchange_n(&vb_once_, 1, __ATOMIC_RELAXED))                         \
			vb_log_unsupported(name);                                                 \
		errno = EOPNOTSUPP;                                                               \
	} while (0)

#endif /* VB_EXPORT_H_ */
