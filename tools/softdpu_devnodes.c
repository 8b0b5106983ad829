/*
 * softdpu-devnodes — the /dev/infiniband nodes programs look for.
 *
 * Some programs accept an RDMA device only if its node exists: UCX takes a
 * device when /dev/infiniband/<ibv_device.dev_name> is a character device it
 * may read and write (stat, S_ISCHR, access(R_OK | W_OK)); it never opens
 * it. softdpu needs no kernel driver, so there is no node unless one is made.
 * This command makes /dev/infiniband/uverbs<N> for each device softdpu lists
 * (the devices of both sides, with SOFTDPU_TOPOLOGY if set) and rdma_cm, and
 * removes them with --remove.
 *
 * Every node is character device major 0: no driver can hold that major (a
 * driver asking for major 0 is given a free one), so open() of a node gives
 * ENXIO and reaches nothing, whatever drivers are loaded now or later. The
 * kernel's own numbers (231:192+N, a misc minor for rdma_cm) are avoided on
 * purpose: loading ib_uverbs would make them reach a real device. The minors
 * follow the kernel's (192+N for uverbs<N>), 1 for rdma_cm; minor 0 is never
 * used (0:0 is an overlayfs whiteout). Mode 0666, as the kernel's nodes.
 *
 * Nothing else is touched: only entries of exactly these types and numbers
 * are replaced or removed; anything else at a node's name is left and
 * reported. --root DIR works under DIR instead of / (for tests and images).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define DN_MAJOR 0u
#define DN_UVERBS_MINOR0 192u	/* as the kernel's uverbs minors */
#define DN_RDMA_CM_MINOR 1u
#define DN_MAX_DEVS 64		/* the topology's limit on functions */
#define DN_MODE 0666

/* The number of devices one side lists, counted in a child so each side's
 * library state starts fresh; -1 if the child failed. */
static int dn_count_side(const char *side)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct ibv_device **l;
		int n = 0;

		setenv("SOFTDPU_SIDE", side, 1);
		l = ibv_get_device_list(&n);
		if (l == NULL)
			_exit(255);
		ibv_free_device_list(l);
		_exit(n > DN_MAX_DEVS ? DN_MAX_DEVS : n);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}

/* uverbs<N> names are per process (each side numbers from 0): one node per
 * number either side uses. */
static int dn_count_devices(void)
{
	int h = dn_count_side("host");
	int d = dn_count_side("dpu");

	if (h < 0 || d < 0)
		return -1;
	return h > d ? h : d;
}

static int dn_is_ours(int dir, const char *name, unsigned minor)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == DN_MAJOR && minor(st.st_rdev) == minor;
}

/* Make one node, or leave it as it is when it is already ours (mode set
 * again: a umask may have narrowed it). Something else at the name is left. */
static int dn_make(int dir, const char *name, unsigned minor)
{
	if (dn_is_ours(dir, name, minor))
		goto set_mode;
	if (mknodat(dir, name, S_IFCHR | DN_MODE, makedev(DN_MAJOR, minor)) != 0) {
		if (errno == EEXIST) {
			fprintf(stderr, "softdpu-devnodes: %s exists and is not softdpu's node: left as it is\n",
				name);
			return 0;
		}
		fprintf(stderr, "softdpu-devnodes: mknod %s: %s\n", name, strerror(errno));
		return -1;
	}
set_mode:
	if (fchmodat(dir, name, DN_MODE, 0) != 0) {
		fprintf(stderr, "softdpu-devnodes: chmod %s: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

static int dn_unmake(int dir, const char *name, unsigned minor)
{
	if (!dn_is_ours(dir, name, minor))
		return 0;
	if (unlinkat(dir, name, 0) != 0 && errno != ENOENT) {
		fprintf(stderr, "softdpu-devnodes: remove %s: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

/* Opens <root>/dev/infiniband, making the missing directories when asked;
 * symbolic links are not followed past the root. */
static int dn_open_dir(const char *root, int create)
{
	static const char *const parts[] = { "dev", "infiniband" };
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t i;

	for (i = 0; fd >= 0 && i < sizeof(parts) / sizeof(parts[0]); i++) {
		int next;

		if (create && mkdirat(fd, parts[i], 0755) != 0 && errno != EEXIST)
			goto fail;
		next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			goto fail;
		close(fd);
		fd = next;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* After --remove: /dev/infiniband goes if nothing else is in it. */
static void dn_drop_dir(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dev = fd < 0 ? -1 : openat(fd, "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dev >= 0) {
		(void)unlinkat(dev, "infiniband", AT_REMOVEDIR);	/* ENOTEMPTY: kept */
		close(dev);
	}
	if (fd >= 0)
		close(fd);
}

static int dn_uverbs_name(char *buf, size_t len, int n)
{
	return snprintf(buf, len, "uverbs%d", n) < (int)len ? 0 : -1;
}

/* Makes uverbs0 … uverbs<n-1> and rdma_cm; drops our nodes past n (a
 * topology with fewer devices than the last run). */
static int dn_create(int dir, int n)
{
	char name[32];
	int i, rc = 0;

	for (i = 0; i < DN_MAX_DEVS; i++) {
		dn_uverbs_name(name, sizeof(name), i);
		if (i < n)
			rc |= dn_make(dir, name, DN_UVERBS_MINOR0 + (unsigned)i);
		else
			rc |= dn_unmake(dir, name, DN_UVERBS_MINOR0 + (unsigned)i);
	}
	rc |= dn_make(dir, "rdma_cm", DN_RDMA_CM_MINOR);
	return rc;
}

static int dn_remove(int dir)
{
	char name[32];
	int i, rc = 0;

	for (i = 0; i < DN_MAX_DEVS; i++) {
		dn_uverbs_name(name, sizeof(name), i);
		rc |= dn_unmake(dir, name, DN_UVERBS_MINOR0 + (unsigned)i);
	}
	rc |= dn_unmake(dir, "rdma_cm", DN_RDMA_CM_MINOR);
	return rc;
}

static void dn_usage(FILE *f)
{
	fprintf(f, "usage: softdpu-devnodes [--root DIR] [--remove]\n"
		   "  makes /dev/infiniband/uverbs<N> (one per softdpu device) and rdma_cm as\n"
		   "  character devices 0:192+N and 0:1 (open gives ENXIO), mode 0666;\n"
		   "  --remove removes them (and /dev/infiniband if it is left empty)\n");
}

int main(int argc, char **argv)
{
	const char *root = "/";
	int remove = 0, dir, n = 0, rc, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--remove") == 0) {
			remove = 1;
		} else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
			root = argv[++i];
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			dn_usage(stdout);
			return 0;
		} else {
			dn_usage(stderr);
			return 2;
		}
	}
	if (!remove) {
		n = dn_count_devices();
		if (n < 0) {
			fprintf(stderr, "softdpu-devnodes: softdpu lists no devices (topology refused?)\n");
			return 1;
		}
	}
	dir = dn_open_dir(root, !remove);
	if (dir < 0) {
		if (remove && errno == ENOENT)
			return 0;	/* nothing to remove */
		fprintf(stderr, "softdpu-devnodes: %s/dev/infiniband: %s\n", root, strerror(errno));
		return 1;
	}
	rc = remove ? dn_remove(dir) : dn_create(dir, n);
	close(dir);
	if (remove && rc == 0)
		dn_drop_dir(root);
	return rc ? 1 : 0;
}
