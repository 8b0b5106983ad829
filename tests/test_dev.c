/*
 * test_dev — device topology, device and representor lists, open/close
 * semantics, capabilities and argument checks of doca_dev.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_dev.h"
#include "dc_dev.h"
#include "harness.h"
#include "hw_topology.h"

static char tmpdir[64];

/* Selects side and topology file (NULL: built-in) and reloads; returns hw_topology_reload(). */
static int use_env(const char *side, const char *topo_path)
{
	if (side != NULL)
		setenv("SOFTDPU_SIDE", side, 1);
	else
		unsetenv("SOFTDPU_SIDE");
	if (topo_path != NULL)
		setenv("SOFTDPU_TOPOLOGY", topo_path, 1);
	else
		unsetenv("SOFTDPU_TOPOLOGY");
	return hw_topology_reload();
}

static const char *write_file(const char *name, const char *text, size_t len)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fwrite(text, 1, len, f);
	fclose(f);
	return path;
}

/* Opens the local device with the given iface name from a fresh list. */
static struct doca_dev *open_by_iface(const char *iface)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, iface) == 0 && doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	doca_devinfo_list_destroy(list);
	return dev;
}

/* ---- default topology, host side ---- */

static void test_host_default_list(void)
{
	static const char *const pci[] = { "0000:0b:00.0", "0000:0b:00.1", "0000:0b:00.2", "0000:0b:00.3",
					   "0000:0b:00.4" };
	static const char *const ifaces[] = { "ens1f0np0", "ens1f1np1", "ens1f0v0", "ens1f0v1", "ens1f1v0" };
	struct doca_devinfo **list;
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n;

	CHECK(use_env(NULL, NULL) == 0);
	CHECK(hw_topo_side() == HW_SIDE_HOST);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 5);
	CHECK(list[5] == NULL);
	for (uint32_t i = 0; i < n; i++) {
		char ib[16];

		CHECK_OK(doca_devinfo_get_pci_addr_str(list[i], buf));
		CHECK(strcmp(buf, pci[i]) == 0);
		CHECK_OK(doca_devinfo_get_iface_name(list[i], buf, sizeof(buf)));
		CHECK(strcmp(buf, ifaces[i]) == 0);
		CHECK_OK(doca_devinfo_get_ibdev_name(list[i], buf, DOCA_DEVINFO_IBDEV_NAME_SIZE));
		snprintf(ib, sizeof(ib), "mlx5_%u", i);
		CHECK(strcmp(buf, ib) == 0);
	}
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_host_identities(void)
{
	struct doca_devinfo **list;
	uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE], v4[DOCA_DEVINFO_IPV4_ADDR_SIZE], v6[DOCA_DEVINFO_IPV6_ADDR_SIZE];
	static const uint8_t mac0[6] = { 0x02, 0x53, 0x44, 0x0b, 0x00, 0x00 };
	static const uint8_t v4_0[4] = { 192, 168, 100, 1 };
	static const uint8_t v6_0[16] = { 0xfd, 0x00, 0x01, 0x00, [15] = 0x01 };
	char vuid[DOCA_DEVINFO_VUID_SIZE];
	struct doca_pci_bdf bdf;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_devinfo_get_mac_addr(list[0], mac, sizeof(mac)));
	CHECK(memcmp(mac, mac0, 6) == 0);
	CHECK_OK(doca_devinfo_get_ipv4_addr(list[0], v4, sizeof(v4)));
	CHECK(memcmp(v4, v4_0, 4) == 0);
	CHECK_OK(doca_devinfo_get_ipv6_addr(list[0], v6, sizeof(v6)));
	CHECK(memcmp(v6, v6_0, 16) == 0);
	CHECK_OK(doca_devinfo_get_vuid(list[0], vuid, sizeof(vuid)));
	CHECK(strcmp(vuid, "MT2334XZ0000PF0") == 0);
	CHECK_OK(doca_devinfo_get_vuid(list[4], vuid, sizeof(vuid)));
	CHECK(strcmp(vuid, "MT2334XZ0000PF1VF0") == 0);
	CHECK_OK(doca_devinfo_get_pci_addr(list[4], &bdf));
	CHECK(bdf.bus == 0x0b && bdf.device == 0 && bdf.function == 4);
	/* every function has its own MAC */
	for (uint32_t i = 1; i < n; i++) {
		uint8_t other[6];

		CHECK_OK(doca_devinfo_get_mac_addr(list[i], other, sizeof(other)));
		CHECK(memcmp(other, mac0, 6) != 0);
	}
	CHECK_ERR(doca_devinfo_get_lid(list[0], &(uint16_t){ 0 }), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_pci_equal(void)
{
	struct doca_devinfo **list;
	uint8_t eq = 9;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0b:00.2", &eq));
	CHECK(eq == 1);
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "0b:00.2", &eq));
	CHECK(eq == 1);
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0B:00.2", &eq));
	CHECK(eq == 1);
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0b:00.3", &eq));
	CHECK(eq == 0);
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "0001:0b:00.2", &eq));
	CHECK(eq == 0);
	CHECK_OK(doca_devinfo_get_is_pci_addr_equal(list[2], "03:00.0", &eq));
	CHECK(eq == 0);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "0b:00", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0b:00.8", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0b:20.0", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "0000-0b:00.0", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "zz:00.0", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[2], "0000:0b:00.2 ", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static uint8_t cap_of(doca_error_t (*get)(const struct doca_devinfo *, uint8_t *), const struct doca_devinfo *d)
{
	uint8_t v = 0xff;

	return get(d, &v) == DOCA_SUCCESS ? v : 0xff;
}

static void test_host_caps(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		CHECK(cap_of(doca_devinfo_get_is_mmap_export_dpu_supported, list[i]) == 1);
		CHECK(cap_of(doca_devinfo_get_is_mmap_from_export_dpu_supported, list[i]) == 0);
		CHECK(cap_of(doca_devinfo_get_is_hotplug_manager_supported, list[i]) == 0);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_all_supported, list[i]) == 0);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_net_supported, list[i]) == 0);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_emulated_supported, list[i]) == 0);
		CHECK(dc_devinfo_cap(list[i], DC_CAP_DMA));
		CHECK(dc_devinfo_cap(list[i], DC_CAP_MMAP_EXPORT_RDMA));
		CHECK(dc_devinfo_cap(list[i], DC_CAP_MMAP_FROM_EXPORT_RDMA));
	}
	CHECK(!dc_devinfo_cap(NULL, DC_CAP_DMA));
	CHECK_OK(doca_dev_open(list[0], &dev));
	CHECK(!dc_dev_on_dpu(dev));
	CHECK(dc_dev_cap(dev, DC_CAP_MMAP_EXPORT_DPU));
	CHECK(!dc_dev_cap(dev, DC_CAP_MMAP_FROM_EXPORT_DPU));
	/* representors are a DPU thing */
	CHECK_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &(struct doca_devinfo_rep **){ NULL },
					       &n),
		  DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_dev_close(dev));
	CHECK_OK(doca_devinfo_list_destroy(list));
}

/* ---- open and close ---- */

static void test_open_same_handle(void)
{
	struct doca_devinfo **list, **list2;
	struct doca_dev *a, *b, *c;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_devinfo_list_create(&list2, &n));
	CHECK_OK(doca_dev_open(list[1], &a));
	CHECK_OK(doca_dev_open(list[1], &b));
	CHECK_OK(doca_dev_open(list2[1], &c)); /* another list, same function */
	CHECK(a == b && b == c);
	CHECK(dc_dev_pd(a) != NULL);
	CHECK_OK(doca_devinfo_list_destroy(list));
	CHECK_OK(doca_devinfo_list_destroy(list2));
	/* the device keeps its own devinfo after the lists are gone */
	CHECK(doca_dev_as_devinfo(a) != NULL);
	CHECK_OK(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(a), pci));
	CHECK(strcmp(pci, "0000:0b:00.1") == 0);
	/* reopening from the device's own devinfo counts too */
	CHECK_OK(doca_dev_open(doca_dev_as_devinfo(a), &b));
	CHECK(a == b);
	for (int i = 0; i < 4; i++)
		CHECK_OK(doca_dev_close(a));
	CHECK_ERR(doca_dev_close(a), DOCA_ERROR_INVALID_VALUE); /* no longer open (detected, not required) */
}

static void test_open_distinct_devices(void)
{
	struct doca_devinfo **list;
	struct doca_dev *a, *b;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_dev_open(list[0], &a));
	CHECK_OK(doca_dev_open(list[2], &b));
	CHECK(a != b);
	CHECK(dc_dev_pd(a) != dc_dev_pd(b));
	CHECK(hw_pd_id(dc_dev_pd(a)) != hw_pd_id(dc_dev_pd(b)));
	/* close in any order */
	CHECK_OK(doca_dev_close(a));
	CHECK_OK(doca_devinfo_list_destroy(list));
	CHECK_OK(doca_dev_close(b));
}

static void test_users_block_close(void)
{
	struct doca_dev *dev = open_by_iface("ens1f0v0"), *again;

	CHECK(dev != NULL);
	dc_dev_get(dev);
	dc_dev_get(dev);
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	CHECK(doca_dev_as_devinfo(dev) != NULL); /* unchanged, still open */
	/* a second open can be dropped while users remain; only the last one is refused */
	CHECK_OK(doca_dev_open(doca_dev_as_devinfo(dev), &again));
	CHECK(again == dev);
	CHECK_OK(doca_dev_close(dev));
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	dc_dev_put(dev);
	CHECK_ERR(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	dc_dev_put(dev);
	CHECK_OK(doca_dev_close(dev));
}

static void *open_close_loop(void *arg)
{
	struct doca_devinfo *info = arg;

	for (int i = 0; i < 500; i++) {
		struct doca_dev *dev;

		if (doca_dev_open(info, &dev) != DOCA_SUCCESS || doca_dev_close(dev) != DOCA_SUCCESS)
			return (void *)1;
	}
	return NULL;
}

static void test_concurrent_open_close(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	pthread_t th[4];
	void *res;
	int bad = 0;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, open_close_loop, list[3]) == 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], &res);
		bad += res != NULL;
	}
	CHECK(bad == 0);
	/* every open was closed: the next open makes a fresh device that one close ends */
	CHECK_OK(doca_dev_open(list[3], &dev));
	CHECK_OK(doca_dev_close(dev));
	CHECK_OK(doca_devinfo_list_destroy(list));
}

/* ---- DPU side ---- */

static void test_dpu_list(void)
{
	static const char *const pci[] = { "0000:03:00.0", "0000:03:00.1", "0000:03:00.0", "0000:03:00.1" };
	static const char *const ifaces[] = { "p0", "p1", "en3f0pf0sf0", "en3f1pf1sf0" };
	struct doca_devinfo **list;
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n;

	CHECK(use_env("dpu", NULL) == 0);
	CHECK(hw_topo_side() == HW_SIDE_DPU);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 4);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t pf = i < 2;

		CHECK_OK(doca_devinfo_get_pci_addr_str(list[i], buf));
		CHECK(strcmp(buf, pci[i]) == 0);
		CHECK_OK(doca_devinfo_get_iface_name(list[i], buf, sizeof(buf)));
		CHECK(strcmp(buf, ifaces[i]) == 0);
		CHECK(cap_of(doca_devinfo_get_is_mmap_export_dpu_supported, list[i]) == 0);
		CHECK(cap_of(doca_devinfo_get_is_mmap_from_export_dpu_supported, list[i]) == pf);
		CHECK(cap_of(doca_devinfo_get_is_hotplug_manager_supported, list[i]) == pf);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_all_supported, list[i]) == pf);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_net_supported, list[i]) == pf);
		CHECK(cap_of(doca_devinfo_rep_get_is_list_emulated_supported, list[i]) == pf);
		CHECK(dc_devinfo_cap(list[i], DC_CAP_DMA));
	}
	CHECK_OK(doca_devinfo_list_destroy(list));
}

struct rep_expect {
	const char *pci;
	enum doca_pci_func_type type;
	const char *vuid;
};

static void test_dpu_rep_lists(void)
{
	static const struct rep_expect p0_reps[] = {
		{ "0000:0b:00.0", DOCA_PCI_FUNC_PF, "MT2334XZ0000PF0" },
		{ "0000:0b:00.2", DOCA_PCI_FUNC_VF, "MT2334XZ0000PF0VF0" },
		{ "0000:0b:00.3", DOCA_PCI_FUNC_VF, "MT2334XZ0000PF0VF1" },
		{ "0000:03:00.0", DOCA_PCI_FUNC_SF, "MT2334XZ0000ECPF0SF0" },
	};
	static const int filters[] = { DOCA_DEV_REP_FILTER_ALL, DOCA_DEV_REP_FILTER_NET,
				       DOCA_DEV_REP_FILTER_NET | DOCA_DEV_REP_FILTER_EMULATED };
	struct doca_dev *p0 = open_by_iface("p0");
	struct doca_devinfo_rep **reps;
	uint32_t n;

	CHECK(p0 != NULL);
	CHECK(dc_dev_on_dpu(p0));
	for (size_t f = 0; f < sizeof(filters) / sizeof(filters[0]); f++) {
		CHECK_OK(doca_devinfo_rep_list_create(p0, filters[f], &reps, &n));
		CHECK(n == 4);
		CHECK(reps[4] == NULL);
		for (uint32_t i = 0; i < n; i++) {
			char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE], vuid[DOCA_DEVINFO_REP_VUID_SIZE];
			enum doca_pci_func_type type;
			uint8_t hp = 9;

			CHECK_OK(doca_devinfo_rep_get_pci_addr_str(reps[i], pci));
			CHECK(strcmp(pci, p0_reps[i].pci) == 0);
			CHECK_OK(doca_devinfo_rep_get_pci_func_type(reps[i], &type));
			CHECK(type == p0_reps[i].type);
			CHECK_OK(doca_devinfo_rep_get_vuid(reps[i], vuid, sizeof(vuid)));
			CHECK(strcmp(vuid, p0_reps[i].vuid) == 0);
			CHECK_OK(doca_devinfo_rep_get_is_hotplug(reps[i], &hp));
			CHECK(hp == 0);
		}
		CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	}
	CHECK_OK(doca_devinfo_rep_list_create(p0, DOCA_DEV_REP_FILTER_EMULATED, &reps, &n));
	CHECK(n == 0 && reps != NULL && reps[0] == NULL); /* no emulated functions by default */
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK_ERR(doca_devinfo_rep_list_create(p0, 1, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(p0, 1 << 3, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(p0, -1, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dev_close(p0));
}

static void test_dpu_rep_p1_and_sf(void)
{
	struct doca_dev *p1 = open_by_iface("p1"), *sf = open_by_iface("en3f0pf0sf0");
	struct doca_devinfo_rep **reps;
	struct doca_pci_bdf bdf;
	uint8_t eq;
	uint32_t n;

	CHECK(p1 != NULL && sf != NULL);
	CHECK_OK(doca_devinfo_rep_list_create(p1, DOCA_DEV_REP_FILTER_ALL, &reps, &n));
	CHECK(n == 3);
	CHECK_OK(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], "0b:00.1", &eq));
	CHECK(eq == 1);
	CHECK_OK(doca_devinfo_rep_get_is_pci_addr_equal(reps[1], "0000:0b:00.4", &eq));
	CHECK(eq == 1);
	CHECK_OK(doca_devinfo_rep_get_is_pci_addr_equal(reps[1], "0000:0b:00.0", &eq));
	CHECK(eq == 0);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[1], "0000:0b:00", &eq), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_rep_get_pci_addr(reps[2], &bdf));
	CHECK(bdf.bus == 3 && bdf.device == 0 && bdf.function == 1);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	/* an SF manages no representors */
	CHECK_ERR(doca_devinfo_rep_list_create(sf, DOCA_DEV_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(!dc_dev_cap(sf, DC_CAP_MMAP_FROM_EXPORT_DPU));
	CHECK(dc_dev_cap(p1, DC_CAP_HOTPLUG_MANAGER));
	CHECK_OK(doca_dev_close(sf));
	CHECK_OK(doca_dev_close(p1));
}

static void test_rep_open_close(void)
{
	struct doca_dev *p0 = open_by_iface("p0");
	struct doca_devinfo_rep **reps, **reps2;
	struct doca_dev_rep *r1, *r2, *r3, *other;
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
	uint32_t n;

	CHECK(p0 != NULL);
	CHECK_OK(doca_devinfo_rep_list_create(p0, DOCA_DEV_REP_FILTER_ALL, &reps, &n));
	CHECK_OK(doca_devinfo_rep_list_create(p0, DOCA_DEV_REP_FILTER_NET, &reps2, &n));
	CHECK_OK(doca_dev_rep_open(reps[1], &r1));
	CHECK_OK(doca_dev_rep_open(reps[1], &r2));
	CHECK_OK(doca_dev_rep_open(reps2[1], &r3));
	CHECK(r1 == r2 && r2 == r3);
	CHECK_OK(doca_dev_rep_open(reps[0], &other));
	CHECK(other != r1);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK_OK(doca_devinfo_rep_list_destroy(reps2));
	CHECK_OK(doca_devinfo_rep_get_pci_addr_str(doca_dev_rep_as_devinfo(r1), pci));
	CHECK(strcmp(pci, "0000:0b:00.2") == 0);
	/* the PF cannot go while its representors are open */
	CHECK_ERR(doca_dev_close(p0), DOCA_ERROR_IN_USE);
	CHECK_OK(doca_dev_rep_close(other));
	for (int i = 0; i < 3; i++)
		CHECK_OK(doca_dev_rep_close(r1));
	CHECK_ERR(doca_dev_rep_close(r1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dev_close(p0));
}

static void test_rep_open_needs_parent(void)
{
	struct doca_dev *p0 = open_by_iface("p0");
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *r;
	uint32_t n;

	CHECK(p0 != NULL);
	CHECK_OK(doca_devinfo_rep_list_create(p0, DOCA_DEV_REP_FILTER_ALL, &reps, &n));
	CHECK_OK(doca_dev_close(p0));
	CHECK_ERR(doca_dev_rep_open(reps[0], &r), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
}

/* ---- argument checks ---- */

static void test_null_and_size_errors(void)
{
	struct doca_devinfo **list;
	struct doca_devinfo_rep **reps;
	struct doca_dev *p0;
	struct doca_dev_rep *rep;
	char big[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t b[16], u8;
	struct doca_pci_bdf bdf;
	enum doca_pci_func_type type;
	uint32_t n;

	CHECK(use_env("dpu", NULL) == 0);
	CHECK_ERR(doca_devinfo_list_create(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_list_create(&list, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_open(NULL, &p0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_dev_as_devinfo(NULL) == NULL);
	CHECK(doca_dev_rep_as_devinfo(NULL) == NULL);
	CHECK_ERR(doca_devinfo_rep_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_rep_open(NULL, &rep), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dev_rep_close(NULL), DOCA_ERROR_INVALID_VALUE);

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_ERR(doca_dev_open(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	/* NULL devinfo or output for every getter */
	CHECK_ERR(doca_devinfo_get_vuid(NULL, big, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_vuid(list[0], NULL, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr(NULL, &bdf), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr_str(NULL, big), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_pci_addr_str(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(NULL, "03:00.0", &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[0], NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_pci_addr_equal(list[0], "03:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(NULL, b, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(list[0], NULL, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(NULL, b, 16), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(list[0], NULL, 16), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_mac_addr(NULL, b, 6), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_mac_addr(list[0], NULL, 6), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(NULL, big, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(list[0], NULL, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(NULL, big, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(list[0], NULL, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_lid(NULL, &(uint16_t){ 0 }), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_lid(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_hotplug_manager_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_hotplug_manager_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_mmap_export_dpu_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_mmap_export_dpu_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_mmap_from_export_dpu_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_is_mmap_from_export_dpu_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_all_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_all_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_net_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_net_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_emulated_supported(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_list_emulated_supported(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	/* buffers smaller than the documented sizes */
	CHECK_ERR(doca_devinfo_get_vuid(list[0], big, DOCA_DEVINFO_VUID_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(list[0], b, DOCA_DEVINFO_IPV4_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv6_addr(list[0], b, DOCA_DEVINFO_IPV6_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_mac_addr(list[0], b, DOCA_DEVINFO_MAC_ADDR_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_iface_name(list[0], big, DOCA_DEVINFO_IFACE_NAME_SIZE - 1),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ibdev_name(list[0], big, DOCA_DEVINFO_IBDEV_NAME_SIZE - 1),
		  DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_get_ipv4_addr(list[0], b, 0), DOCA_ERROR_INVALID_VALUE);

	/* representor side: p0 is list[0] on the DPU */
	CHECK_OK(doca_dev_open(list[0], &p0));
	CHECK_ERR(doca_devinfo_rep_list_create(NULL, 0, &reps, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(p0, 0, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_list_create(p0, 0, &reps, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_rep_list_create(p0, 0, &reps, &n));
	CHECK_ERR(doca_dev_rep_open(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_vuid(NULL, big, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_vuid(reps[0], NULL, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_vuid(reps[0], big, DOCA_DEVINFO_REP_VUID_SIZE - 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr(NULL, &bdf), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr_str(NULL, big), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_addr_str(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(NULL, "0b:00.0", &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], "0b:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_func_type(NULL, &type), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_pci_func_type(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_hotplug(NULL, &u8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_devinfo_rep_get_is_hotplug(reps[0], NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK_OK(doca_dev_close(p0));
	CHECK_OK(doca_devinfo_list_destroy(list));
}

/* ---- side selection and topology files ---- */

static void test_bad_side_falls_back_to_host(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	CHECK(use_env("arm", NULL) == 0);
	CHECK(hw_topo_side() == HW_SIDE_HOST);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 5);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static const char custom_topology[] =
	"# a small card: one host PF, one DPU PF, an emulated hot-plugged function\n"
	"\n"
	"   function name=h0 side=host type=pf pci=0000:5e:00.0 vuid=VUIDH0 ibdev=mlx5_0 iface=eth0 "
	"mac=AA:bb:cc:dd:ee:01 ipv4=10.1.2.3 ipv6=::1   # trailing comment\n"
	"function\tname=d0 side=dpu type=pf pci=0000:03:00.0 vuid=VUIDD0 ibdev=mlx5_0 iface=p0 caps=dma,rep_all,rep_emulated\r\n"
	"function name=d0s1 side=dpu type=sf parent=d0 pci=0000:03:00.0 vuid=VUIDD0S1 ibdev=mlx5_1 caps=none\n"
	"rep name=rh0 parent=d0 represents=h0 iface=pf0hpf\n"
	"rep name=virtio0 parent=d0 emulated=1 hotplug=1 type=pf pci=0000:5e:00.3 vuid=VUIDVIRTIO0\n"
	"rep name=virtio1 parent=d0 emulated=1 type=vf pci=0000:5e:00.4 vuid=VUIDVIRTIO1";

static void test_topology_file_host(void)
{
	const char *path = write_file("good.topo", custom_topology, sizeof(custom_topology) - 1);
	static const uint8_t mac[6] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 };
	static const uint8_t v4[4] = { 10, 1, 2, 3 };
	struct doca_devinfo **list;
	uint8_t got[16];
	char s[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n;

	CHECK(path != NULL);
	CHECK(use_env("host", path) == 0);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 1);
	CHECK_OK(doca_devinfo_get_pci_addr_str(list[0], s));
	CHECK(strcmp(s, "0000:5e:00.0") == 0);
	CHECK_OK(doca_devinfo_get_mac_addr(list[0], got, 6));
	CHECK(memcmp(got, mac, 6) == 0);
	CHECK_OK(doca_devinfo_get_ipv4_addr(list[0], got, 4));
	CHECK(memcmp(got, v4, 4) == 0);
	CHECK_OK(doca_devinfo_get_ipv6_addr(list[0], got, 16));
	CHECK(got[15] == 1 && got[0] == 0);
	CHECK_OK(doca_devinfo_get_vuid(list[0], s, sizeof(s)));
	CHECK(strcmp(s, "VUIDH0") == 0);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_topology_file_dpu(void)
{
	const char *path = write_file("good.topo", custom_topology, sizeof(custom_topology) - 1);
	struct doca_devinfo **list;
	struct doca_devinfo_rep **reps;
	struct doca_dev *d0, *d0s1;
	enum doca_pci_func_type type;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t v;
	uint32_t n;

	CHECK(path != NULL);
	CHECK(use_env("dpu", path) == 0);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 2);
	CHECK_OK(doca_devinfo_get_iface_name(list[1], iface, sizeof(iface)));
	CHECK(iface[0] == '\0'); /* no iface= given */
	CHECK(cap_of(doca_devinfo_rep_get_is_list_net_supported, list[0]) == 0);
	CHECK(cap_of(doca_devinfo_get_is_hotplug_manager_supported, list[0]) == 0);
	CHECK(!dc_devinfo_cap(list[1], DC_CAP_DMA)); /* caps=none */
	CHECK_OK(doca_dev_open(list[0], &d0));
	CHECK_OK(doca_dev_open(list[1], &d0s1));
	CHECK(d0 != d0s1);
	CHECK_OK(doca_devinfo_list_destroy(list));
	CHECK_OK(doca_devinfo_rep_list_create(d0, DOCA_DEV_REP_FILTER_ALL, &reps, &n));
	CHECK(n == 3);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK_ERR(doca_devinfo_rep_list_create(d0, DOCA_DEV_REP_FILTER_NET, &reps, &n), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_devinfo_rep_list_create(d0, DOCA_DEV_REP_FILTER_EMULATED, &reps, &n));
	CHECK(n == 2);
	CHECK_OK(doca_devinfo_rep_get_is_hotplug(reps[0], &v));
	CHECK(v == 1);
	CHECK_OK(doca_devinfo_rep_get_is_hotplug(reps[1], &v));
	CHECK(v == 0);
	CHECK_OK(doca_devinfo_rep_get_pci_func_type(reps[1], &type));
	CHECK(type == DOCA_PCI_FUNC_VF);
	CHECK_OK(doca_devinfo_rep_get_is_pci_addr_equal(reps[0], "0000:5e:00.3", &v));
	CHECK(v == 1);
	CHECK_OK(doca_devinfo_rep_list_destroy(reps));
	CHECK_OK(doca_dev_close(d0s1));
	CHECK_OK(doca_dev_close(d0));
}

#define PF_H "function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0\n"
#define PF_D "function name=d0 side=dpu type=pf pci=0000:03:00.0 vuid=V1\n"

static const char *const bad_topologies[] = {
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 color=red\n", /* unknown key */
	"widget name=x\n",							     /* unknown record */
	"function name=h0 side=host type=pf pci=0b:00.0 vuid=V0\n",		     /* short PCI */
	"function name=h0 side=host type=pf pci=0000:0b:00.9 vuid=V0\n",	     /* function > 7 */
	"function name=h0 side=host type=pf pci=0000:0b:g0.0 vuid=V0\n",	     /* not hex */
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 mac=aa:bb:cc:dd:ee\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 mac=aa-bb-cc-dd-ee-ff\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 ipv4=10.0.0.256\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 ipv4=10.0.0\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 ipv6=fd00::1::2\n",
	PF_H "function name=h0 side=host type=pf pci=0000:0b:00.1 vuid=V9\n",	     /* duplicate name */
	PF_H "function name=h1 side=host type=pf pci=0000:0b:00.0 vuid=V9\n",	     /* duplicate PCI */
	PF_H "function name=h1 side=host type=pf pci=0000:0b:00.1 vuid=V0\n",	     /* duplicate VUID */
	PF_H PF_D "rep name=r0 parent=p9 represents=h0\n",			     /* rep parent missing */
	PF_H PF_D "rep name=r0 parent=h0 represents=h0\n",			     /* rep parent not a DPU PF */
	PF_D "rep name=r0 parent=d0 represents=h0\n" PF_H,			     /* represented defined later */
	PF_H PF_D "rep name=r0 parent=d0 represents=h0\nrep name=r1 parent=d0 represents=h0\n",
	PF_H PF_D "rep name=r0 parent=d0 represents=h0 emulated=1 type=pf pci=0000:0b:00.5 vuid=E\n",
	PF_H PF_D "rep name=r0 parent=d0 represents=h0 hotplug=1\n",		     /* hotplug of a non-emulated */
	PF_H PF_D "rep name=r0 parent=d0 emulated=1 type=pf vuid=E\n",		     /* emulated without pci */
	PF_H PF_D "rep name=r0 parent=d0 represents=h0 vuid=X\n",		     /* rep overriding identity */
	PF_H PF_D "rep name=r0 parent=d0 represents=d0\n",			     /* a DPU PF has no rep */
	"function name=v0 side=host type=vf pci=0000:0b:00.2 vuid=V0\n",	     /* VF without parent */
	PF_D "function name=v0 side=host type=vf parent=d0 pci=0000:0b:00.2 vuid=V2\n", /* parent on other side */
	PF_H "function name=h1 side=host type=pf parent=h0 pci=0000:0b:00.1 vuid=V2\n", /* PF with a parent */
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 caps=dma,warp\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 caps=dma,\n",
	"function name=h0 side=both type=pf pci=0000:0b:00.0 vuid=V0\n",
	"function name=h0 side=host type=xf pci=0000:0b:00.0 vuid=V0\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0\n",			     /* no vuid */
	"function side=host type=pf pci=0000:0b:00.0 vuid=V0\n",			     /* no name */
	"function name=h0 name=h1 side=host type=pf pci=0000:0b:00.0 vuid=V0\n",    /* key twice */
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 iface=\n",    /* empty value */
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 iface=abcdefghijklmnop\n", /* > 15 */
	"function name=h/0 side=host type=pf pci=0000:0b:00.0 vuid=V0\n",	     /* bad name char */
	"function name=abcdefghijklmnopqrstuvwxyz0123456 side=host type=pf pci=0000:0b:00.0 vuid=V0\n",
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 ibdev=mlx5_0\n"
	"function name=h1 side=host type=pf pci=0000:0b:00.1 vuid=V2 ibdev=mlx5_0\n", /* ibdev twice */
	"function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0 iface=eth0\n"
	"function name=h1 side=host type=pf pci=0000:0b:00.1 vuid=V2 iface=eth0\n", /* iface twice */
	PF_H PF_D "rep name=r0 parent=d0 emulated=2 type=pf pci=0000:0b:00.5 vuid=E\n",
};

/* The PF a representor list is asked of is gone from the card's answer: the driver query fails. */
static void test_rep_list_pf_gone(void)
{
	static const char moved[] = PF_H "function name=d0 side=dpu type=pf pci=0000:03:00.0 vuid=V9\n";
	const char *path = write_file("good.topo", custom_topology, sizeof(custom_topology) - 1);
	struct doca_devinfo_rep **reps;
	struct doca_devinfo **list;
	struct doca_dev *d0;
	uint32_t n;

	CHECK(path != NULL && use_env("dpu", path) == 0);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK_OK(doca_dev_open(list[0], &d0));
	CHECK_OK(doca_devinfo_list_destroy(list));
	path = write_file("moved.topo", moved, sizeof(moved) - 1);
	CHECK(path != NULL && use_env("dpu", path) == 0);
	CHECK_ERR(doca_devinfo_rep_list_create(d0, DOCA_DEV_REP_FILTER_ALL, &reps, &n), DOCA_ERROR_DRIVER);
	CHECK_OK(doca_dev_close(d0));
}

static void test_topology_files_refused(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	for (size_t i = 0; i < sizeof(bad_topologies) / sizeof(bad_topologies[0]); i++) {
		const char *path = write_file("bad.topo", bad_topologies[i], strlen(bad_topologies[i]));

		CHECK(path != NULL);
		if (use_env("dpu", path) != -1) {
			TH_FAIL("bad topology %zu accepted: %s", i, bad_topologies[i]);
			return;
		}
		CHECK(hw_topo_get() == NULL);
		CHECK_ERR(doca_devinfo_list_create(&list, &n), DOCA_ERROR_NOT_FOUND);
	}
}

static void test_topology_file_limits(void)
{
	static const char nul_line[] = PF_H "function name=h1\0 side=host type=pf pci=0000:0b:00.1 vuid=V2\n";
	char big[HW_TOPO_LINE_MAX + 64];
	struct doca_devinfo **list;
	const char *path;
	uint32_t n;
	int len;

	/* a line of exactly HW_TOPO_LINE_MAX characters is fine, one more is not */
	len = snprintf(big, sizeof(big), "function name=h0 side=host type=pf pci=0000:0b:00.0 vuid=V0");
	memset(big + len, ' ', HW_TOPO_LINE_MAX - len);
	memcpy(big + HW_TOPO_LINE_MAX, "\n", 2);
	path = write_file("max.topo", big, strlen(big));
	CHECK(path != NULL && use_env("host", path) == 0);
	memcpy(big + HW_TOPO_LINE_MAX, " \n", 3);
	path = write_file("long.topo", big, strlen(big));
	CHECK(path != NULL && use_env("host", path) == -1);
	path = write_file("nul.topo", nul_line, sizeof(nul_line) - 1);
	CHECK(path != NULL && use_env("host", path) == -1);
	CHECK(use_env("host", "/nonexistent/softdpu.topo") == -1);
	CHECK_ERR(doca_devinfo_list_create(&list, &n), DOCA_ERROR_NOT_FOUND);
	/* an empty file is a card without functions */
	path = write_file("empty.topo", "# nothing\n", 10);
	CHECK(path != NULL && use_env("host", path) == 0);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 0 && list[0] == NULL);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void test_example_file_is_default(void)
{
	struct doca_devinfo **list;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE], dir[256];
	uint32_t n;

	/* docs/topology.example describes the built-in topology; run from elsewhere the case cannot find it */
	if (access("docs/topology.example", R_OK) != 0 && access("../docs/topology.example", R_OK) != 0)
		SKIP("docs/topology.example not found from %s", getcwd(dir, sizeof(dir)) != NULL ? dir : "here");
	CHECK(use_env("dpu", access("docs/topology.example", R_OK) == 0 ? "docs/topology.example"
									: "../docs/topology.example") == 0);
	CHECK_OK(doca_devinfo_list_create(&list, &n));
	CHECK(n == 4);
	CHECK_OK(doca_devinfo_get_pci_addr_str(list[1], pci));
	CHECK(strcmp(pci, "0000:03:00.1") == 0);
	CHECK_OK(doca_devinfo_list_destroy(list));
}

static void cleanup_tmpdir(void)
{
	static const char *const names[] = { "good.topo", "bad.topo", "max.topo", "long.topo", "nul.topo",
					     "empty.topo" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_dev.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_host_default_list);
	RUN(test_host_identities);
	RUN(test_pci_equal);
	RUN(test_host_caps);
	RUN(test_open_same_handle);
	RUN(test_open_distinct_devices);
	RUN(test_users_block_close);
	RUN(test_concurrent_open_close);
	RUN(test_dpu_list);
	RUN(test_dpu_rep_lists);
	RUN(test_dpu_rep_p1_and_sf);
	RUN(test_rep_open_close);
	RUN(test_rep_open_needs_parent);
	RUN(test_null_and_size_errors);
	RUN(test_bad_side_falls_back_to_host);
	RUN(test_topology_file_host);
	RUN(test_topology_file_dpu);
	RUN(test_rep_list_pf_gone);
	RUN(test_topology_files_refused);
	RUN(test_topology_file_limits);
	RUN(test_example_file_is_default);
	use_env(NULL, NULL);
	cleanup_tmpdir();
	return th_summary("test_dev");
}
