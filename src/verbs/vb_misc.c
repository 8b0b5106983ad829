/*
 * vb_misc — fork support, the sysfs helpers, and the entries of rdma-core's
 * provider interface.
 *
 * Fork: rdma-core's ibv_fork_init marks registered memory MADV_DONTFORK so a
 * child's copy-on-write cannot move pages the adapter has pinned. Here, as
 * on a kernel that copies DMA pages on fork, a registration stays its
 * owner's across fork: the device keeps reaching the parent's pages (a key
 * the parent shared resolves to them in the child too, hw_mem drops the
 * inherited entries) and the child gets its own copy of the memory as it
 * was at the fork (fab_share). So ibv_is_fork_initialized reports
 * IBV_FORK_UNNEEDED, which takes precedence whether ibv_fork_init was called
 * or not (ibv_is_fork_initialized(3)), and ibv_fork_init, unneeded, succeeds
 * whenever it is called: its EINVAL says a registration made fork unsafe,
 * which none does here. RDMAV_FORK_SAFE and IBV_FORK_SAFE have the effect of
 * calling it: none. (rdma-core v44's own code still set up DONTFORK
 * tracking on such kernels; rdma-core 52 made ibv_fork_init return 0 there
 * at once, as here.)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vb_export.h"
#include "vb_int.h"

VB_EXPORT int ibv_fork_init(void)
{
	return 0;
}

VB_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

VB_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

VB_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* Not in the public headers (rdma-core's driver.h); exported since IBVERBS_1.0. */
VB_EXPORT const char *ibv_get_sysfs_path(void);
VB_EXPORT const char *ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");

	return env != NULL && env[0] != '\0' ? env : "/sys";
}

/* True for the sysfs directory of one of our devices: it names nothing real. */
static bool vb_own_sysfs_dir(const char *dir)
{
	struct vb_device *devs;
	int n;

	devs = vb_devices(&n);
	for (int i = 0; devs != NULL && i < n; i++)
		if (strcmp(dir, devs[i].vdev.device.ibdev_path) == 0 ||
		    strcmp(dir, devs[i].vdev.device.dev_path) == 0)
			return true;
	return false;
}

/* Reads a sysfs attribute; our devices have none (no kernel device behind them). */
VB_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
VB_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t len;
	int fd;

	if (dir == NULL || file == NULL || buf == NULL || size == 0) {
		errno = EINVAL;
		return -1;
	}
	if (vb_own_sysfs_dir(dir)) {
		errno = ENOENT;
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return -1;
	if ((size_t)len == size)
		len--;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return (int)len;
}

/*
 * Conversions from the kernel's uverbs structures (librdmacm calls them on
 * what the kernel's rdma_cm returns). There is no kernel to return them, so
 * they only log; being void, they cannot report more.
 */
VB_EXPORT void ibv_copy_qp_attr_from_kern(void *dst, const void *src);
VB_EXPORT void ibv_copy_qp_attr_from_kern(void *dst, const void *src)
{
	(void)dst;
	(void)src;
	VB_UNSUPPORTED("ibv_copy_qp_attr_from_kern");
}

VB_EXPORT void ibv_copy_ah_attr_from_kern(void *dst, const void *src);
VB_EXPORT void ibv_copy_ah_attr_from_kern(void *dst, const void *src)
{
	(void)dst;
	(void)src;
	VB_UNSUPPORTED("ibv_copy_ah_attr_from_kern");
}

VB_EXPORT void ibv_copy_path_rec_from_kern(void *dst, const void *src);
VB_EXPORT void ibv_copy_path_rec_from_kern(void *dst, const void *src)
{
	(void)dst;
	(void)src;
	VB_UNSUPPORTED("ibv_copy_path_rec_from_kern");
}

VB_EXPORT void ibv_copy_path_rec_to_kern(void *dst, const void *src);
VB_EXPORT void ibv_copy_path_rec_to_kern(void *dst, const void *src)
{
	(void)dst;
	(void)src;
	VB_UNSUPPORTED("ibv_copy_path_rec_to_kern");
}

/* Loading other providers: the devices here are built in, none can be added. */
VB_EXPORT void vb_register_driver_1_1(const char *name, void *init_func);
VB_EXPORT void vb_register_driver_1_1(const char *name, void *init_func)
{
	(void)init_func;
	VB_UNSUPPORTED("ibv_register_driver");
	(void)name;
}
VB_SYMVER_OLD(vb_register_driver_1_1, ibv_register_driver, "IBVERBS_1.1");

/*
 * IBVERBS_PRIVATE_34: rdma-core's interface to its provider libraries
 * (ibv_cmd_* kernel commands, context set-up, logging). Programs never call
 * it, and no provider can open a device (registrations are dropped, below), so every
 * entry shares one of two failing implementations: those returning a
 * pointer get NULL, the rest EOPNOTSUPP (the int entries return errno
 * values); errno is EOPNOTSUPP for both.
 */
VB_EXPORT void *vb_private_fail_ptr(void);
VB_EXPORT void *vb_private_fail_ptr(void)
{
	VB_UNSUPPORTED("rdma-core provider interface (IBVERBS_PRIVATE_34)");
	return NULL;
}

VB_EXPORT int vb_private_fail_int(void);
VB_EXPORT int vb_private_fail_int(void)
{
	VB_UNSUPPORTED("rdma-core provider interface (IBVERBS_PRIVATE_34)");
	return EOPNOTSUPP;
}

#define VB_PRIVATE_PTR(name) VB_EXPORT void *name(void) __attribute__((alias("vb_private_fail_ptr")));
#define VB_PRIVATE_INT(name) VB_EXPORT int name(void) __attribute__((alias("vb_private_fail_int")));

VB_PRIVATE_PTR(_verbs_init_and_alloc_context)
VB_PRIVATE_PTR(verbs_open_device)
VB_PRIVATE_INT(__ioctl_final_num_attrs)
VB_PRIVATE_INT(__verbs_log)
VB_PRIVATE_INT(execute_ioctl)
VB_PRIVATE_INT(ibv_read_ibdev_sysfs_file)
VB_PRIVATE_INT(verbs_init_cq)
VB_PRIVATE_INT(verbs_set_ops)
VB_PRIVATE_INT(verbs_uninit_context)
VB_PRIVATE_INT(ibv_cmd_advise_mr)
VB_PRIVATE_INT(ibv_cmd_alloc_dm)
VB_PRIVATE_INT(ibv_cmd_alloc_mw)
VB_PRIVATE_INT(ibv_cmd_alloc_pd)
VB_PRIVATE_INT(ibv_cmd_attach_mcast)
VB_PRIVATE_INT(ibv_cmd_close_xrcd)
VB_PRIVATE_INT(ibv_cmd_create_ah)
VB_PRIVATE_INT(ibv_cmd_create_counters)
VB_PRIVATE_INT(ibv_cmd_create_cq)
VB_PRIVATE_INT(ibv_cmd_create_cq_ex)
VB_PRIVATE_INT(ibv_cmd_create_flow)
VB_PRIVATE_INT(ibv_cmd_create_flow_action_esp)
VB_PRIVATE_INT(ibv_cmd_create_qp)
VB_PRIVATE_INT(ibv_cmd_create_qp_ex2)
VB_PRIVATE_INT(ibv_cmd_create_qp_ex)
VB_PRIVATE_INT(ibv_cmd_create_rwq_ind_table)
VB_PRIVATE_INT(ibv_cmd_create_srq)
VB_PRIVATE_INT(ibv_cmd_create_srq_ex)
VB_PRIVATE_INT(ibv_cmd_create_wq)
VB_PRIVATE_INT(ibv_cmd_dealloc_mw)
VB_PRIVATE_INT(ibv_cmd_dealloc_pd)
VB_PRIVATE_INT(ibv_cmd_dereg_mr)
VB_PRIVATE_INT(ibv_cmd_destroy_ah)
VB_PRIVATE_INT(ibv_cmd_destroy_counters)
VB_PRIVATE_INT(ibv_cmd_destroy_cq)
VB_PRIVATE_INT(ibv_cmd_destroy_flow)
VB_PRIVATE_INT(ibv_cmd_destroy_flow_action)
VB_PRIVATE_INT(ibv_cmd_destroy_qp)
VB_PRIVATE_INT(ibv_cmd_destroy_rwq_ind_table)
VB_PRIVATE_INT(ibv_cmd_destroy_srq)
VB_PRIVATE_INT(ibv_cmd_destroy_wq)
VB_PRIVATE_INT(ibv_cmd_detach_mcast)
VB_PRIVATE_INT(ibv_cmd_free_dm)
VB_PRIVATE_INT(ibv_cmd_get_context)
VB_PRIVATE_INT(ibv_cmd_modify_cq)
VB_PRIVATE_INT(ibv_cmd_modify_flow_action_esp)
VB_PRIVATE_INT(ibv_cmd_modify_qp)
VB_PRIVATE_INT(ibv_cmd_modify_qp_ex)
VB_PRIVATE_INT(ibv_cmd_modify_srq)
VB_PRIVATE_INT(ibv_cmd_modify_wq)
VB_PRIVATE_INT(ibv_cmd_open_qp)
VB_PRIVATE_INT(ibv_cmd_open_xrcd)
VB_PRIVATE_INT(ibv_cmd_poll_cq)
VB_PRIVATE_INT(ibv_cmd_post_recv)
VB_PRIVATE_INT(ibv_cmd_post_send)
VB_PRIVATE_INT(ibv_cmd_post_srq_recv)
VB_PRIVATE_INT(ibv_cmd_query_context)
VB_PRIVATE_INT(ibv_cmd_query_device_any)
VB_PRIVATE_INT(ibv_cmd_query_mr)
VB_PRIVATE_INT(ibv_cmd_query_port)
VB_PRIVATE_INT(ibv_cmd_query_qp)
VB_PRIVATE_INT(ibv_cmd_query_srq)
VB_PRIVATE_INT(ibv_cmd_read_counters)
VB_PRIVATE_INT(ibv_cmd_reg_dm_mr)
VB_PRIVATE_INT(ibv_cmd_reg_dmabuf_mr)
VB_PRIVATE_INT(ibv_cmd_reg_mr)
VB_PRIVATE_INT(ibv_cmd_req_notify_cq)
VB_PRIVATE_INT(ibv_cmd_rereg_mr)
VB_PRIVATE_INT(ibv_cmd_resize_cq)

/*
 * Provider libraries register themselves from their constructors (Debian's
 * libefa.so.1 does, and perftest links it): a registration can never match a
 * device here (there is no kernel device to bind to), so it is accepted and
 * dropped without a word, or every such program would start with a warning.
 */
VB_EXPORT void verbs_register_driver_34(const void *ops);
VB_EXPORT void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

/* rdma-core's switch for destroying objects of a disassociated device; nothing reads it here. */
VB_EXPORT bool verbs_allow_disassociate_destroy;
