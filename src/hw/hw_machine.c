/*
 * hw_machine — the machine identity of SOFTDPU_MACHINE, read once.
 */
#include "hw_machine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base_config.h"

#define HW_SUBNET_LINK_LOCAL 0xfe80000000000000ull
#define HW_MCAST_LID_MIN 0xc000u /* multicast LIDs from here */
#define HW_SUBNET_MACHINE 0xfec0000000000000ull /* | ipv4 << 0: fec0:0000:<a.b>:<c.d> */

static struct {
	pthread_once_t once;
	bool named;
	uint32_t ipv4;
	char tag[24];
	uint32_t others[BASE_MACHINES_MAX];
	unsigned n_others;
} machine = { .once = PTHREAD_ONCE_INIT };

/* The list less this machine and repeats. */
static void machine_others_load(void)
{
	uint32_t all[BASE_MACHINES_MAX];
	unsigned n;

	if (!machine.named)
		return;
	n = base_config_machines(all);
	for (unsigned i = 0; i < n; i++) {
		bool seen = all[i] == machine.ipv4;

		for (unsigned j = 0; j < machine.n_others && !seen; j++)
			seen = machine.others[j] == all[i];
		if (!seen)
			machine.others[machine.n_others++] = all[i];
	}
}

static void machine_load(void)
{
	machine.named = base_config_machine(&machine.ipv4);
	if (machine.named)
		snprintf(machine.tag, sizeof(machine.tag), "-m%u.%u.%u.%u", machine.ipv4 >> 24,
			 (machine.ipv4 >> 16) & 0xff, (machine.ipv4 >> 8) & 0xff, machine.ipv4 & 0xff);
	machine_others_load();
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

unsigned hw_machine_others(const uint32_t **list)
{
	pthread_once(&machine.once, machine_load);
	*list = machine.others;
	return machine.n_others;
}

uint16_t hw_machine_lid_base(void)
{
	pthread_once(&machine.once, machine_load);
	return machine.named ? (uint16_t)((machine.ipv4 & 0xff) * HW_MACHINE_LIDS) : 0;
}

bool hw_machine_of_lid(uint16_t lid, uint32_t *ipv4)
{
	uint32_t d = lid / HW_MACHINE_LIDS;

	pthread_once(&machine.once, machine_load);
	if (!machine.named || lid >= HW_MCAST_LID_MIN || d == 0 || d == (machine.ipv4 & 0xff))
		return false;
	*ipv4 = (machine.ipv4 & 0xffffff00u) | d;
	return true;
}

static uint32_t machine_ip(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void machine_mac(uint32_t ip, uint8_t n, uint8_t mac[6])
{
	mac[0] = 0x06, mac[1] = (uint8_t)(ip >> 24), mac[2] = (uint8_t)(ip >> 16);
	mac[3] = (uint8_t)(ip >> 8), mac[4] = (uint8_t)ip, mac[5] = n;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

bool hw_machine_of_gid(const uint8_t g[16], uint32_t *ipv4, uint8_t mac[6])
{
	static const uint8_t ib[4] = { 0xfe, 0xc0, 0x00, 0x00 }, v4[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t ll[8] = { 0xfe, 0x80 }, v6[4] = { 0xfd, 0x00, 0x53, 0x44 };

	memset(mac, 0, 6);
	if (memcmp(g, ib, sizeof(ib)) == 0) {
		*ipv4 = machine_ip(g + 4);
		return true;
	}
	if (memcmp(g, v4, sizeof(v4)) == 0) {
		*ipv4 = machine_ip(g + 12);
		machine_mac(*ipv4, 0, mac);
		return true;
	}
	if (memcmp(g, ll, sizeof(ll)) == 0 && g[8] == (0x06 ^ 0x02) && g[11] == 0xff && g[12] == 0xfe) {
		uint8_t b[4] = { g[9], g[10], g[13], g[14] };

		*ipv4 = machine_ip(b);
		machine_mac(*ipv4, g[15], mac);
		return true;
	}
	if (memcmp(g, v6, sizeof(v6)) == 0 && all_zero(g + 8, 7) && g[15] != 0) {
		*ipv4 = machine_ip(g + 4);
		machine_mac(*ipv4, (uint8_t)(g[15] - 1), mac);
		return true;
	}
	return false;
}

const char *hw_machine_tag(void)
{
	pthread_once(&machine.once, machine_load);
	return machine.tag;
}
