/*
 * cc_priv — comm channel endpoint and peer layouts, shared by the files of
 * src/doca/comm_channel only.
 */
#ifndef CC_PRIV_H_
#define CC_PRIV_H_

#include <errno.h> /* fab_cc results are negative errnos */
#include <stdbool.h>
#include <stdint.h>

#include "dc_log.h"
#include "doca_comm_channel.h"
#include "fab_cc.h"

#define DCC_MAX_MSG_SIZE FAB_CC_MSG_MAX
#define DCC_MIN_MSG_SIZE 64
#define DCC_MAX_QUEUE_SIZE 8192
#define DCC_MIN_QUEUE_SIZE 8
#define DCC_DEFAULT_QUEUE_SIZE 64
#define DCC_MAX_SERVICE_NAME_LEN FAB_CC_NAME_MAX
#define DCC_MAX_CONNECTIONS 128

#define DCC_CHECK_ARGS(cond)                                                                                           \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			DC_ERR("invalid argument: %s", #cond);                                                         \
			return DOCA_ERROR_INVALID_VALUE;                                                               \
		}                                                                                                      \
	} while (0)

enum dcc_role {
	DCC_ROLE_NONE,	  /* configurable */
	DCC_ROLE_SERVICE, /* listening */
	DCC_ROLE_CLIENT,  /* connected once; may reconnect after a disconnect */
};

enum dcc_peer_state {
	DCC_PEER_HANDSHAKE, /* waiting for the peer's handshake frame */
	DCC_PEER_CONNECTED,
	DCC_PEER_FAILED, /* socket closed; the address lives until disconnect */
};

struct dcc_stats {
	uint64_t send_msgs;
	uint64_t send_bytes;
	uint64_t recv_msgs;
	uint64_t recv_bytes;
};

struct doca_comm_channel_addr_t {
	struct doca_comm_channel_addr_t *next; /* the endpoint's peers */
	struct doca_comm_channel_ep_t *ep;
	int fd;
	enum dcc_peer_state state;
	uint32_t pid; /* from the handshake, for log lines */
	uint64_t user_data;
	struct dcc_stats live; /* counted on every message */
	struct dcc_stats snap; /* what the getters report: live as of update_info */
};

struct doca_comm_channel_ep_t {
	struct doca_dev *dev; /* holds a device reference */
	struct doca_dev_rep *dev_rep;
	uint16_t max_msg_size;
	uint16_t send_queue_size;
	uint16_t recv_queue_size;
	enum dcc_role role;
	char name[DCC_MAX_SERVICE_NAME_LEN];
	int listen_fd;
	int recv_epfd; /* level-triggered: listen socket and every live peer */
	int send_epfd; /* one-shot EPOLLOUT per live peer, set by arm_send */
	int svc_epfd;  /* one-shot: new client or hang-up, set by update_service_state_info */
	struct doca_comm_channel_addr_t *peers;
	uint32_t nlive; /* peers not failed: counted against DCC_MAX_CONNECTIONS */
	struct doca_comm_channel_addr_t **peer_list; /* snapshot of update_service_state_info */
	uint32_t peer_list_len;
	uint32_t pending;
};

/* Peers (cc_peer.c). */
struct doca_comm_channel_addr_t *dcc_peer_new(struct doca_comm_channel_ep_t *ep, int fd);
bool dcc_peer_is_member(const struct doca_comm_channel_ep_t *ep, const struct doca_comm_channel_addr_t *peer);
void dcc_peer_fail(struct doca_comm_channel_addr_t *peer, const char *why);
void dcc_peer_free(struct doca_comm_channel_addr_t *peer);
void dcc_peer_unlink(struct doca_comm_channel_addr_t *peer);

/* Handshakes (cc_handshake.c). accept_all: DOCA_ERROR_DRIVER when the listening socket fails. */
doca_error_t dcc_service_accept_all(struct doca_comm_channel_ep_t *ep);
void dcc_service_handshake(struct doca_comm_channel_addr_t *peer);
void dcc_client_handshake(struct doca_comm_channel_addr_t *peer);

/* Event handles (cc_event.c). */
doca_error_t dcc_events_open(struct doca_comm_channel_ep_t *ep);
void dcc_events_close(struct doca_comm_channel_ep_t *ep);
int dcc_events_add_peer(struct doca_comm_channel_ep_t *ep, struct doca_comm_channel_addr_t *peer);
void dcc_events_del_fd(struct doca_comm_channel_ep_t *ep, int fd);
void dcc_events_drain(int epfd);

#endif /* CC_PRIV_H_ */
