/*
 * dc_dev_priv — layouts shared by dev.c, devinfo.c and dev_rep.c only.
 * Everything else goes through dc_dev.h.
 */
#ifndef DC_DEV_PRIV_H_
#define DC_DEV_PRIV_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "doca_dev.h"
#include "hw_mem.h"
#include "hw_topology.h"

/* A snapshot of one local function, taken when the list was created. */
struct doca_devinfo {
	struct hw_function fn;
};

/* A snapshot of one representor, and the VUID of the DPU PF that manages it. */
struct doca_devinfo_rep {
	struct hw_function fn;
	char parent_vuid[HW_TOPO_VUID_SIZE];
};

struct doca_dev {
	struct doca_dev *next; /* registry link, under dc_dev_lock */
	struct doca_devinfo info;
	struct hw_pd *pd;
	uint32_t opens; /* doca_dev_open() calls not yet closed */
	uint32_t users; /* dc_dev_get() references, and open representors */
	/*
	 * RDMA bridge (dev_bridge.c). from_pd: opened from the program's ibv_pd
	 * (ibpd), whose domain pd references; never found by VUID, so a plain
	 * doca_dev_open keeps its own domain. Otherwise ibpd is the ibv_pd
	 * doca_dev_get_pd made over pd (NULL until asked), freed at close.
	 */
	bool from_pd;
	void *ibpd;
};

struct doca_dev_rep {
	struct doca_dev_rep *next; /* registry link, under dc_dev_lock */
	struct doca_devinfo_rep info;
	struct doca_dev *parent; /* holds one user reference while the rep is open */
	uint32_t opens;
	uint32_t users; /* dc_dev_rep_get() references */
};

/* Guards both registries (open devices and open representors) and the counters. */
extern pthread_mutex_t dc_dev_lock;

struct doca_dev *dc_dev_find_locked(const char *vuid);
bool dc_dev_is_open_locked(const struct doca_dev *dev);
/* The open devices (dev.c's registry), and how one joins it: under dc_dev_lock. */
struct doca_dev *dc_dev_first_locked(void);
void dc_dev_link_locked(struct doca_dev *dev);

/* Compares a user's "DDDD:BB:DD.F" or "BB:DD.F" with an address; false on malformed input. */
bool dc_pci_match(const struct hw_pci_addr *addr, const char *pci_addr_str, uint8_t *is_equal);

#endif /* DC_DEV_PRIV_H_ */
