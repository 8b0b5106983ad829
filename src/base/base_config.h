/*
 * base_config — the one reader of the SOFTDPU_* environment.
 *
 * Every variable of the README's table is read and parsed here, so each has
 * one spelling, one default and one message for a bad value. The functions
 * read the environment on every call and keep nothing: each caller decides
 * when a setting takes effect (the topology and the UCX settings once, the
 * fabric mode at every export and import) and tests may change a variable
 * before a reload.
 */
#ifndef BASE_CONFIG_H_
#define BASE_CONFIG_H_

#include <stdbool.h>
#include <stdint.h>

#define BASE_FABRIC_TIMEOUT_DEFAULT_MS 5000u
#define BASE_FABRIC_TIMEOUT_MAX_MS 3600000u

enum base_fabric_mode {
	BASE_FABRIC_AUTO, /* this machine directly, other machines through UCX */
	BASE_FABRIC_CMA,  /* this machine only */
	BASE_FABRIC_UCX,  /* UCX for everything, and exports carry a UCX address */
};

/* SOFTDPU_SIDE: true for "dpu"; unset, empty or "host" is the host side (anything else too, with an error). */
bool base_config_side_dpu(void);

/* SOFTDPU_TOPOLOGY: the topology file to load, or NULL for the built-in topology. */
const char *base_config_topology(void);

/* SOFTDPU_FABRIC: auto (default), cma or ucx; anything else is auto, with an error. */
enum base_fabric_mode base_config_fabric(void);

/* SOFTDPU_FABRIC_TIMEOUT_MS: deadline of one remote access, 1..BASE_FABRIC_TIMEOUT_MAX_MS. */
unsigned base_config_fabric_timeout_ms(void);

/*
 * SOFTDPU_CM_TIMEOUT_MS: how long the RDMA CM waits for the answer to a REQ,
 * REP or DREQ before it gives up, 1..BASE_CM_TIMEOUT_MAX_MS (default: the
 * kernel CM's 15 retries of its response timeout on a RoCE port).
 */
#define BASE_CM_TIMEOUT_DEFAULT_MS 73728u
#define BASE_CM_TIMEOUT_MAX_MS 3600000u
unsigned base_config_cm_timeout_ms(void);

/*
 * SOFTDPU_MACHINE: the IPv4 address (dotted quad) of the machine this process
 * stands for, so processes of one host can behave as several machines. True
 * and *ipv4 (host byte order) when set and valid; unset, empty or malformed
 * (with an error) is false: the one machine of this host.
 */
bool base_config_machine(uint32_t *ipv4);

/*
 * SOFTDPU_MACHINES: the machines of the network, IPv4 addresses (dotted
 * quads) separated by commas, at most BASE_MACHINES_MAX. Writes them to out
 * (host byte order) and returns how many; unset or empty is 0, and so is a
 * malformed list (with an error: no machine is guessed).
 */
#define BASE_MACHINES_MAX 64u
unsigned base_config_machines(uint32_t out[BASE_MACHINES_MAX]);

/* SOFTDPU_UCX_ERR_MODE: peer (default, true) or none (false): UCX peer failure detection. */
bool base_config_ucx_peer_errors(void);

/*
 * SOFTDPU_LOG_LEVEL / SOFTDPU_SDK_LOG_LEVEL: true and *level when the variable
 * holds a level (base_log_level_parse). A bad value is reported straight on
 * stderr: these are read while the log itself is being set up.
 */
bool base_config_log_level(uint32_t *level);
bool base_config_sdk_log_level(uint32_t *level);

#endif /* BASE_CONFIG_H_ */
