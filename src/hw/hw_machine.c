/*
 * hw_machine — the machine identity of SOFTDPU_MACHINE, read once.
 */
#include "hw_machine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base_config.h"

#define HW_SUBNET_LINK_LOCAL 0xfe80000000000000ull
#define HW_SUBNET_MACHINE 0xfec0000000000000ull /* | ipv4 << 0: fec0:0000:<a.b>:<c.d> */
#define HW_SUBNET_MACHINE_MASK 0xffffffff00000000ull

static struct {
	pthread_once_t once;
	bool named;
	uint32_t ipv4;
	char tag[24];
} machine = { .once = PTHREAD_ONCE_INIT };

static void machine_load(void)
{
	machine.named = base_config_machine(&machine.ipv4);
	if (machine.named)
		snprintf(machine.tag, sizeof(machine.tag), "-m%u.%u.%u.%u", machine.ipv4 >> 24,
			 (machine.ipv4 >> 16) & 0xff, (machine.ipv4 >> 8) & 0xff, machine.ipv4 & 0xff);
}

bool hw_machine_ipv4(uint32_t *ipv4)
{
	pthread_once(&machine.once, machine_load);
	if (machine.named && ipv4 != NULL)
		*ipv4 = machine.ipv4;
	return machine.named;
}

uint64_t hw_machine_subnet_prefix(void)
{
	pthread_once(&machine.once, machine_load);
	return machine.named ? HW_SUBNET_MACHINE | machine.ipv4 : HW_SUBNET_LINK_LOCAL;
}

bool hw_machine_of_prefix(uint64_t prefix, uint32_t *ipv4)
{
	if ((prefix & HW_SUBNET_MACHINE_MASK) != HW_SUBNET_MACHINE)
		return false;
	*ipv4 = (uint32_t)prefix;
	return true;
}

const char *hw_machine_tag(void)
{
	pthread_once(&machine.once, machine_load);
	return machine.tag;
}

bool hw_machine_gid_elsewhere(const uint8_t dgid[16], const uint8_t own_gid[16])
{
	static const uint8_t named[4] = { 0xfe, 0xc0, 0x00, 0x00 };

	return memcmp(dgid, named, sizeof(named)) == 0 && memcmp(dgid, own_gid, 8) != 0;
}
