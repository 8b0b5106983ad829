/*
 * What a machine of its own (SOFTDPU_MACHINE=<ip>) leaves in /dev/shm, for
 * the tests that stand one up: its shared tables, files named
 * softdpu-<uid>-m<ip>-*, and the sysfs-shaped directory tree its devices'
 * ibdev_path names, softdpu-<uid>-m<ip>-sysfs/ (src/verbs/vb_sysfs.c).
 */
#ifndef SOFTDPU_TEST_SHM_MACHINE_H_
#define SOFTDPU_TEST_SHM_MACHINE_H_

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes dir's entry name, a directory with everything beneath it; symlinks are removed, never followed. */
static inline void shm_machine_rm_tree(int dir, const char *name)
{
	struct dirent *e;
	DIR *d;
	int fd;

	if (unlinkat(dir, name, 0) == 0)
		return;
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			shm_machine_rm_tree(dirfd(d), e->d_name);
	closedir(d);
	unlinkat(dir, name, AT_REMOVEDIR);
}

/* Removes every /dev/shm entry of this user's machine ip: files and the sysfs tree. */
static inline void shm_machine_remove(const char *ip)
{
	char prefix[96];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");

	if (d == NULL)
		return;
	snprintf(prefix, sizeof(prefix), "softdpu-%u-m%s-", (unsigned)getuid(), ip);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			shm_machine_rm_tree(dirfd(d), e->d_name);
	closedir(d);
}

#endif
