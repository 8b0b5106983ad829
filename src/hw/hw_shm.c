/*
 * hw_shm — opening the device's small shared tables (hw_shm.h), through
 * base_private's exclusive, owner-checked open.
 */
#include "hw_shm.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base_log.h"
#include "base_private.h"
#include "hw_machine.h"

void *hw_shm_table(const char *what, unsigned version, size_t size)
{
	char name[96];
	void *p;
	int fd;

	snprintf(name, sizeof(name), "/softdpu-%u%s-%s-v%u", (unsigned)getuid(), hw_machine_tag(), what, version);
	if (base_priv_shm_open(name, size, what, &fd) != BASE_PRIV_OK)
		return NULL; /* logged, naming the file */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		BASE_ERR("cannot map /dev/shm%s", name);
		return NULL;
	}
	return p;
}
