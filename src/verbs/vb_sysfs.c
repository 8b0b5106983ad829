/*
 * vb_sysfs — a sysfs-shaped directory describing each device's PCI function.
 *
 * Programs that identify an mlx5 device by its PCI IDs (UCX: it takes
 * realpath(ibdev_path), strips "infiniband/<name>" and reads "vendor" and
 * "device" there, and offers its mlx5 transports only to a known
 * vendor/device pair) find no kernel device behind softdpu's devices. So
 * each device's ibdev_path names a directory laid out as the kernel's:
 *
 *   /dev/shm/softdpu-<uid>[-m<machine>]-sysfs/devices/<bdf>/{vendor,device,...}
 *   /dev/shm/softdpu-<uid>[-m<machine>]-sysfs/devices/<bdf>/infiniband/<ibdev>/
 *
 * The root is the user's own directory, mode 0755: one another user made
 * first, a symlink, or one others may write is refused (logged) and the
 * device keeps /sys/class/infiniband/<ibdev>, which names nothing. Files are
 * written to a temporary name and renamed, so a reader in another process
 * never sees one half written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_machine.h"
#include "vb_int.h"

#define VB_PCI_VENDOR_MELLANOX "0x15b3"
#define VB_PCI_DEVICE_BF2      "0xa2d6" /* BlueField-2 integrated ConnectX-6 Dx */

/* The function's attribute files, as a BlueField-2 PF shows them (PCIe Gen4 x16). */
static const struct {
	const char *name;
	const char *text;
} vb_sysfs_attrs[] = {
	{ "vendor", VB_PCI_VENDOR_MELLANOX "\n" },
	{ "device", VB_PCI_DEVICE_BF2 "\n" },
	{ "subsystem_vendor", VB_PCI_VENDOR_MELLANOX "\n" },
	{ "subsystem_device", "0x0006\n" },
	{ "class", "0x020000\n" },
	{ "current_link_speed", "16.0 GT/s PCIe\n" },
	{ "current_link_width", "16\n" },
	{ "max_link_speed", "16.0 GT/s PCIe\n" },
	{ "max_link_width", "16\n" },
	{ "numa_node", "-1\n" },
};

/* Creates dir (mode 0755) if absent; true when it is then a directory of ours that only we may write. */
static bool vb_sysfs_own_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return false;
	if (lstat(dir, &st) != 0)
		return false;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		BASE_ERR("%s: not a directory of uid %u that only it may write (owner %u, mode %o): "
			 "device PCI identity not published",
			 dir, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/* Writes text to dir/name unless it exists, through a temporary name and rename(2). */
static bool vb_sysfs_write(const char *dir, const char *name, const char *text)
{
	char path[VB_SYSFS_PATH_MAX + 64], tmp[VB_SYSFS_PATH_MAX + 96];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, R_OK) == 0)
		return true;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(tmp);
		return false;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		unlink(tmp);
		return false;
	}
	return true;
}

static bool vb_sysfs_func_dir(const char *bdf_dir)
{
	for (size_t i = 0; i < sizeof(vb_sysfs_attrs) / sizeof(vb_sysfs_attrs[0]); i++)
		if (!vb_sysfs_write(bdf_dir, vb_sysfs_attrs[i].name, vb_sysfs_attrs[i].text))
			return false;
	return true;
}

bool vb_sysfs_publish(const char *bdf, const char *ibdev, char *path, size_t size)
{
	char root[128], dir[VB_SYSFS_PATH_MAX];
	int n;

	snprintf(root, sizeof(root), "/dev/shm/softdpu-%u%s-sysfs", (unsigned)getuid(), hw_machine_tag());
	if (!vb_sysfs_own_dir(root))
		return false;
	snprintf(dir, sizeof(dir), "%s/devices", root);
	if (!vb_sysfs_own_dir(dir))
		return false;
	n = snprintf(dir, sizeof(dir), "%s/devices/%s", root, bdf);
	if (n < 0 || (size_t)n >= sizeof(dir) || !vb_sysfs_own_dir(dir) || !vb_sysfs_func_dir(dir))
		return false;
	n = snprintf(dir, sizeof(dir), "%s/devices/%s/infiniband", root, bdf);
	if (n < 0 || (size_t)n >= sizeof(dir) || !vb_sysfs_own_dir(dir))
		return false;
	n = snprintf(dir, sizeof(dir), "%s/devices/%s/infiniband/%s", root, bdf, ibdev);
	if (n < 0 || (size_t)n >= sizeof(dir) || (size_t)n >= size || !vb_sysfs_own_dir(dir))
		return false;
	memcpy(path, dir, (size_t)n + 1);
	return true;
}
