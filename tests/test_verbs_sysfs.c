/*
 * The sysfs-shaped directory each device's ibdev_path names, read as UCX
 * reads it (uct_ib_device_get_sysfs_path): realpath(ibdev_path) ends in
 * infiniband/<device name>; two components up is the PCI function, whose
 * "vendor" and "device" files give a BlueField-2 (0x15b3, 0xa2d6) and whose
 * name is its PCI address. The directory's root,
 * /dev/shm/softdpu-<uid>-m<machine>-sysfs, must be the user's own: one that
 * another uid made, one anybody may write (0777) or a symlink is refused and
 * left as it is, and the device's ibdev_path falls back to
 * /sys/class/infiniband/<name>, as a device without one.
 *
 * Each case runs its devices in a child standing for a machine of its own
 * (SOFTDPU_MACHINE, a fresh tag) so the root is new, and removes the
 * machine's files afterwards (tests/shm_machine.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "shm_machine.h"

#define OTHER_UID 65534u /* nobody */

static char machine[32];
static char root[128];
static unsigned serial;

/* A machine tag no earlier case used, and its sysfs root's path. */
static void new_machine(void)
{
	unsigned pid = (unsigned)getpid();

	serial++;
	snprintf(machine, sizeof(machine), "127.%u.%u.%u", (pid >> 8) & 255, pid & 255, serial & 255);
	snprintf(root, sizeof(root), "/dev/shm/softdpu-%u-m%s-sysfs", (unsigned)getuid(), machine);
}

static void remove_machine_cb(void *arg)
{
	(void)arg;
	shm_machine_remove(machine);
}

/* Reads a small file whole into buf (NUL-terminated); false if it cannot. */
static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return 1;
}

/* Whether s is a PCI address, dddd:bb:dd.f in lowercase hex. */
static int is_bdf(const char *s)
{
	static const char shape[] = "xxxx:xx:xx.x";

	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'x' ? strchr("0123456789abcdef", s[i]) == NULL : s[i] != shape[i])
			return 0;
	return 1;
}

/*
 * In the child: each device, as UCX reads it. 0 when all hold, else the
 * step that did not (10 * device + step).
 */
static int child_ucx_view(void)
{
	struct ibv_device **l;
	int n;

	setenv("SOFTDPU_MACHINE", machine, 1);
	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return 1;
	for (int i = 0; i < n; i++) {
		char real[PATH_MAX], tail[IBV_SYSFS_NAME_MAX + 16], file[PATH_MAX + 16], text[64], *fn;
		size_t rl, tl;

		if (realpath(l[i]->ibdev_path, real) == NULL)
			return 10 * i + 2;
		/* The root is this machine's, and the path is the device's own. */
		if (strncmp(real, root, strlen(root)) != 0 || strncmp(real + strlen(root), "/devices/", 9) != 0)
			return 10 * i + 3;
		snprintf(tail, sizeof(tail), "/infiniband/%s", ibv_get_device_name(l[i]));
		rl = strlen(real);
		tl = strlen(tail);
		if (rl <= tl || strcmp(real + rl - tl, tail) != 0)
			return 10 * i + 4;
		real[rl - tl] = '\0'; /* two components up: the PCI function */
		fn = strrchr(real, '/');
		if (!is_bdf(fn + 1))
			return 10 * i + 5;
		snprintf(file, sizeof(file), "%s/vendor", real);
		if (!read_text(file, text, sizeof(text)) || strcmp(text, "0x15b3\n") != 0)
			return 10 * i + 6;
		snprintf(file, sizeof(file), "%s/device", real);
		if (!read_text(file, text, sizeof(text)) || strcmp(text, "0xa2d6\n") != 0)
			return 10 * i + 7;
	}
	ibv_free_device_list(l);
	return 0;
}

/* In the child: every device keeps /sys/class/infiniband/<name>. 0, else 10 * device + 2. */
static int child_fallback(void)
{
	struct ibv_device **l;
	int n;

	setenv("SOFTDPU_MACHINE", machine, 1);
	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return 1;
	for (int i = 0; i < n; i++) {
		char want[IBV_SYSFS_PATH_MAX];

		snprintf(want, sizeof(want), "/sys/class/infiniband/%s", ibv_get_device_name(l[i]));
		if (strcmp(l[i]->ibdev_path, want) != 0)
			return 10 * i + 2;
	}
	ibv_free_device_list(l);
	return 0;
}

/* Runs fn in a forked child; its exit code (128 + signal if it died, -1 if no child). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_ucx_reads_pci_identity(void)
{
	struct stat st;
	int rc;

	new_machine();
	th_defer(remove_machine_cb, NULL);
	rc = in_child(child_ucx_view);
	if (rc != 0)
		TH_FAIL("device %d, step %d of the UCX view failed", rc / 10, rc % 10);
	CHECK(rc == 0);
	/* The root: a directory of ours that only we may write. */
	CHECK(lstat(root, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 07777) == 0755);
	/* Gone with the machine's files, the whole tree. */
	shm_machine_remove(machine);
	CHECK(lstat(root, &st) != 0 && errno == ENOENT);
}

/* Whether directory path has no entry (".", ".." aside). */
static int is_empty(const char *path)
{
	struct dirent *e;
	DIR *d = opendir(path);
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n == 0;
}

/* The squatted root is refused (every device falls back) and left exactly as it was: empty, same owner and mode. */
static void check_refused(uid_t uid, mode_t mode)
{
	struct stat st;
	int rc = in_child(child_fallback);

	if (rc != 0)
		TH_FAIL("device %d kept a sysfs path under a squatted root (code %d)", rc / 10, rc);
	CHECK(rc == 0);
	CHECK(lstat(root, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid && (st.st_mode & 07777) == mode);
	CHECK(is_empty(root));
}

static void test_root_of_another_uid_refused(void)
{
	if (geteuid() != 0)
		SKIP("making a directory of another uid needs root");
	new_machine();
	th_defer(remove_machine_cb, NULL);
	CHECK(mkdir(root, 0755) == 0 && chmod(root, 0755) == 0);
	CHECK(chown(root, OTHER_UID, OTHER_UID) == 0);
	check_refused(OTHER_UID, 0755);
}

static void test_root_open_to_all_refused(void)
{
	new_machine();
	th_defer(remove_machine_cb, NULL);
	CHECK(mkdir(root, 0777) == 0 && chmod(root, 0777) == 0);
	check_refused(getuid(), 0777);
}

static char target[64];

static void remove_target_cb(void *arg)
{
	(void)arg;
	rmdir(target);
}

/* A symlink to a directory of ours, mode 0755: refused all the same, and nothing is made in its target. */
static void test_root_symlink_refused(void)
{
	struct stat st;
	int rc;

	new_machine();
	th_defer(remove_machine_cb, NULL);
	snprintf(target, sizeof(target), "/dev/shm/test_verbs_sysfs-XXXXXX");
	CHECK(mkdtemp(target) != NULL);
	th_defer(remove_target_cb, NULL);
	CHECK(chmod(target, 0755) == 0);
	CHECK(symlink(target, root) == 0);
	rc = in_child(child_fallback);
	if (rc != 0)
		TH_FAIL("device %d kept a sysfs path under a symlinked root (code %d)", rc / 10, rc);
	CHECK(rc == 0);
	CHECK(lstat(root, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(is_empty(target));
}

int main(void)
{
	RUN(test_ucx_reads_pci_identity);
	RUN(test_root_of_another_uid_refused);
	RUN(test_root_open_to_all_refused);
	RUN(test_root_symlink_refused);
	return th_summary("test_verbs_sysfs");
}
