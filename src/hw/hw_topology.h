/*
 * hw_topology — the functions of the emulated device and their identities.
 *
 * One topology describes both sides of the card: the host functions (PFs and
 * VFs), the DPU functions (PFs and SFs) and the representors the DPU PFs
 * manage. Each process is on one side (SOFTDPU_SIDE). The topology is the
 * built-in example of the DOCA Core guide unless SOFTDPU_TOPOLOGY names a file
 * (format in docs/TOPOLOGY.md). It is loaded once, on first use, and
 * never changes afterwards, so readers need no lock.
 */
#ifndef HW_TOPOLOGY_H_
#define HW_TOPOLOGY_H_

#include <stdbool.h>
#include <stdint.h>

#define HW_TOPO_MAX_FUNCS 64
#define HW_TOPO_NAME_SIZE 32  /* function name, including the terminator */
#define HW_TOPO_PCI_SIZE 13   /* "DDDD:BB:DD.F" (domain:bus:device.function) and the terminator */
#define HW_TOPO_VUID_SIZE 64
#define HW_TOPO_IBDEV_SIZE 64
#define HW_TOPO_IFACE_SIZE 16 /* IFNAMSIZ, as netdev names are on Linux */
#define HW_TOPO_LINE_MAX 512  /* longest accepted topology file line */

enum hw_side {
	HW_SIDE_HOST = 0,
	HW_SIDE_DPU = 1,
};

enum hw_func_type {
	HW_FUNC_PF = 0,
	HW_FUNC_VF = 1,
	HW_FUNC_SF = 2,
};

/* Capability bits of a local function; API layers map their own capability names onto them. */
enum hw_cap {
	HW_CAP_DMA = 1u << 0,
	HW_CAP_MMAP_EXPORT_DPU = 1u << 1,
	HW_CAP_MMAP_FROM_EXPORT_DPU = 1u << 2,
	HW_CAP_MMAP_EXPORT_RDMA = 1u << 3,
	HW_CAP_MMAP_FROM_EXPORT_RDMA = 1u << 4,
	HW_CAP_HOTPLUG_MANAGER = 1u << 5,
	HW_CAP_REP_FILTER_ALL = 1u << 6,
	HW_CAP_REP_FILTER_NET = 1u << 7,
	HW_CAP_REP_FILTER_EMULATED = 1u << 8,
	HW_CAP_SHA = 1u << 9,
};
#define HW_CAP_ALL_MASK ((1u << 10) - 1)

/* The link layer of a function's port: Ethernet (RoCE), as a BlueField-2 ships, or InfiniBand. */
enum hw_link {
	HW_LINK_ETH = 0,
	HW_LINK_IB = 1,
};

struct hw_pci_addr {
	uint16_t domain;
	uint8_t bus;	  /* 0..255 */
	uint8_t device;	  /* 0..31 */
	uint8_t function; /* 0..7 */
};

/*
 * One function or representor. Plain data: API layers copy it into their own
 * snapshots, so they never point into the topology.
 */
struct hw_function {
	uint32_t id;	    /* device-wide function number, >= 1 */
	char name[HW_TOPO_NAME_SIZE];
	enum hw_side side;  /* a representor is always on the DPU */
	bool is_rep;
	bool emulated;	    /* rep of an emulated (hot-pluggable) function */
	bool hotplug;	    /* rep of a hot-plugged function */
	enum hw_func_type type;
	int parent;	    /* index of the parent PF, -1 for a PF */
	int represents;	    /* rep of a local function: its index; else -1 */
	struct hw_pci_addr pci;
	char pci_str[HW_TOPO_PCI_SIZE];
	char vuid[HW_TOPO_VUID_SIZE];
	char ibdev[HW_TOPO_IBDEV_SIZE];	   /* "" for representors */
	char iface[HW_TOPO_IFACE_SIZE];
	uint8_t mac[6];
	uint8_t ipv4[4];    /* network order; all zero: none */
	uint8_t ipv6[16];   /* all zero: none */
	enum hw_link link;
	uint32_t caps;	    /* enum hw_cap bits; 0 for representors */
};

struct hw_topology;

/*
 * The process's topology, loaded on first call. A machine named by
 * SOFTDPU_MACHINE (hw_machine.h) that uses the built-in topology gets
 * addresses of its own (docs/TOPOLOGY.md): MACs 06:a:b:c:d:<index>, the
 * machine's IPv4 on the first function and IPv6 fd00:5344:<a.b>:<c.d>::<index+1>. NULL when SOFTDPU_TOPOLOGY
 * names a file that cannot be read or is malformed (the reason is logged):
 * a refused file never silently becomes the default topology.
 */
const struct hw_topology *hw_topo_get(void);

/* Side of this process (SOFTDPU_SIDE, read when the topology is loaded). */
enum hw_side hw_topo_side(void);

uint32_t hw_topo_count(const struct hw_topology *topo);
const struct hw_function *hw_topo_func(const struct hw_topology *topo, int idx);
const struct hw_function *hw_topo_find(const struct hw_topology *topo, const char *name);

/*
 * Reloads from the environment. Tests only: the caller guarantees no other
 * thread uses the topology. Returns 0, or -1 when the file was refused.
 */
int hw_topology_reload(void);

const char *hw_side_name(enum hw_side side);

/* Parses "DDDD:BB:DD.F", and with allow_short also "BB:DD.F" (domain 0000). */
bool hw_pci_parse(const char *s, bool allow_short, struct hw_pci_addr *out);
bool hw_pci_equal(const struct hw_pci_addr *a, const struct hw_pci_addr *b);

#endif /* HW_TOPOLOGY_H_ */
