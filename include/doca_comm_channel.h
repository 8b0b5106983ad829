/*
 * softdpu — DOCA Comm Channel (DOCA 2.2 shape).
 *
 * A reliable, message-based channel between a service on the DPU (listening
 * on a representor) and clients on the host (connecting from the function the
 * representor stands for). All calls are non-blocking: DOCA_ERROR_AGAIN means
 * "try again", and the event channel handles say when to.
 * Endpoints are not thread-safe; use one per thread.
 */
#ifndef DOCA_COMM_CHANNEL_H_
#define DOCA_COMM_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h" /* as 2.2's: DOCA_DEVINFO_PCI_ADDR_SIZE and the device types */
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_dev;
struct doca_dev_rep;

/** Flags of send and receive; none is defined yet. */
enum doca_comm_channel_msg_flags {
	DOCA_CC_MSG_FLAG_NONE = 0,
};

/** A local endpoint: a service (DPU) or a client (host). */
struct doca_comm_channel_ep_t;

/** A connection to one peer ("peer address"); names the source of a received message. */
struct doca_comm_channel_addr_t;

/** A file descriptor to wait on with poll/epoll. */
typedef doca_event_handle_t doca_event_channel_t;

/* ---- capabilities ---- */

/** Longest service name, terminator included. DOCA_ERROR_INVALID_VALUE for NULL. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_service_name_len(uint32_t *max_service_name_len);

/** Largest message (4080 bytes). DOCA_ERROR_INVALID_VALUE for NULL arguments. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_message_size(struct doca_devinfo *devinfo, uint32_t *max_message_size);

/** Largest send queue. DOCA_ERROR_INVALID_VALUE for NULL arguments. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_send_queue_size(struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);

/** Largest receive queue. DOCA_ERROR_INVALID_VALUE for NULL arguments. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_recv_queue_size(struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);

/**
 * Clients one service can hold. Service side only: DOCA_ERROR_NOT_SUPPORTED on
 * the host; DOCA_ERROR_INVALID_VALUE for NULL arguments.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_service_max_num_connections(struct doca_devinfo *devinfo,
							       uint32_t *max_num_connections);

/* ---- endpoint life cycle and properties ---- */

/** Creates an endpoint. DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_NO_MEMORY. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_create(struct doca_comm_channel_ep_t **ep);

/**
 * Closes every connection and the event channels and frees the endpoint.
 * DOCA_ERROR_NOT_CONNECTED for NULL.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_destroy(struct doca_comm_channel_ep_t *local_ep);

/** Device set on the endpoint (NULL if none). DOCA_ERROR_INVALID_VALUE for NULL arguments. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_device(struct doca_comm_channel_ep_t *ep, struct doca_dev **device);

/** Representor set on the endpoint (NULL if none). DOCA_ERROR_INVALID_VALUE for NULL arguments. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_device_rep(struct doca_comm_channel_ep_t *ep, struct doca_dev_rep **device_rep);

/** Largest message this endpoint sends (the value in use). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t *max_msg_size);

/** Send queue size in use (power of two). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *send_queue_size);

/** Receive queue size in use (power of two). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *recv_queue_size);

/**
 * Device of the endpoint: a host function for a client, the DPU PF that
 * manages the representor for a service. The endpoint holds the device until
 * it is destroyed. DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_BAD_STATE once
 * the endpoint listens or connects.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_device(struct doca_comm_channel_ep_t *ep, struct doca_dev *device);

/**
 * Representor of the host function the service serves (read at listen).
 * DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_BAD_STATE once active.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_device_rep(struct doca_comm_channel_ep_t *ep, struct doca_dev_rep *device_rep);

/**
 * Largest message to send. Small values are raised to a minimum;
 * above doca_comm_channel_get_max_message_size(): DOCA_ERROR_INVALID_VALUE.
 * DOCA_ERROR_BAD_STATE once active.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t max_msg_size);

/** Send queue size, raised to a minimum and rounded up to a power of two; same errors as above. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t send_queue_size);

/** Receive queue size, raised to a minimum and rounded up to a power of two; same errors as above. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t recv_queue_size);

/* ---- event channels ---- */

/**
 * The endpoint's send and receive event handles (either output may be NULL,
 * not both). They stay owned by the endpoint. DOCA_ERROR_BAD_STATE before
 * listen/connect.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_event_channel(struct doca_comm_channel_ep_t *local_ep,
						    doca_event_channel_t *send_event_channel,
						    doca_event_channel_t *recv_event_channel);

/**
 * Service handle: readable when a client connects or disconnects; re-armed by
 * doca_comm_channel_ep_update_service_state_info(). Service only
 * (DOCA_ERROR_NOT_SUPPORTED on a client), DOCA_ERROR_BAD_STATE before listen.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_service_event_channel(struct doca_comm_channel_ep_t *local_ep,
							    doca_event_channel_t *service_event_channel);

/** After this, the send handle becomes readable when a message can be sent. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_event_handle_arm_send(struct doca_comm_channel_ep_t *local_ep);

/** After this, the receive handle becomes readable when a message can be received. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_event_handle_arm_recv(struct doca_comm_channel_ep_t *local_ep);

/* ---- connections and messages ---- */

/**
 * Service side: start serving name. Needs a DPU device and a representor
 * (DOCA_ERROR_BAD_STATE without), DOCA_ERROR_NOT_SUPPORTED on the host,
 * DOCA_ERROR_NOT_PERMITTED if already listening, DOCA_ERROR_CONNECTION_ABORTED
 * if the name is already served for that function.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_listen(struct doca_comm_channel_ep_t *local_ep, const char *name);

/**
 * Client side: connect to the service name on this function's representor.
 * The handshake completes in the background: doca_comm_channel_peer_addr_update_info()
 * returns DOCA_ERROR_CONNECTION_INPROGRESS until then (messages may be sent
 * already). DOCA_ERROR_BAD_STATE without a device, DOCA_ERROR_NOT_SUPPORTED on
 * the DPU, DOCA_ERROR_NOT_PERMITTED if connected, DOCA_ERROR_CONNECTION_ABORTED
 * when no service listens on name.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_connect(struct doca_comm_channel_ep_t *local_ep, const char *name,
					  struct doca_comm_channel_addr_t **peer_addr);

/**
 * Sends one message of 1..max_msg_size bytes. DOCA_ERROR_AGAIN when the queue
 * is full, DOCA_ERROR_NOT_CONNECTED for an unknown peer_addr,
 * DOCA_ERROR_CONNECTION_RESET when the peer is gone (disconnect it),
 * DOCA_ERROR_INVALID_VALUE for NULL or a bad length.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_sendto(struct doca_comm_channel_ep_t *local_ep, const void *msg, size_t len,
					 int flags, struct doca_comm_channel_addr_t *peer_addr);

/**
 * Receives one message; *len is the buffer size in and the message size out.
 * On a service, new clients are accepted here and *peer_addr names the
 * sender. DOCA_ERROR_AGAIN when nothing is queued, DOCA_ERROR_NOT_CONNECTED
 * before listen/connect, DOCA_ERROR_CONNECTION_RESET (with *peer_addr set)
 * when that peer is gone, DOCA_ERROR_INVALID_VALUE when the message does not
 * fit: *len is set to its size and it stays queued.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_recvfrom(struct doca_comm_channel_ep_t *local_ep, void *msg, size_t *len, int flags,
					   struct doca_comm_channel_addr_t **peer_addr);

/**
 * Closes the connection and frees peer_addr. Messages already sent stay
 * readable by the peer. DOCA_ERROR_NOT_CONNECTED for an unknown peer_addr.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_disconnect(struct doca_comm_channel_ep_t *local_ep,
					     struct doca_comm_channel_addr_t *peer_addr);

/* ---- peer addresses ---- */

/** User data of a peer (0 for new peers). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_user_data(struct doca_comm_channel_addr_t *peer_addr, uint64_t *user_data);

/** Sets the user data of a peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_set_user_data(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t user_context);

/**
 * Snapshots the peer's statistics and checks the connection:
 * DOCA_ERROR_CONNECTION_INPROGRESS during the handshake,
 * DOCA_ERROR_CONNECTION_ABORTED once it failed (disconnect it).
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_update_info(struct doca_comm_channel_addr_t *peer_addr);

/** Messages sent to the peer, as of the last update_info. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *send_messages);

/** Bytes sent to the peer, as of the last update_info. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *send_bytes);

/** Messages received from the peer, as of the last update_info. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_recv_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *recv_messages);

/** Bytes received from the peer, as of the last update_info. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_recv_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *recv_bytes);

/**
 * Messages sent but not yet handed to the peer. Always 0 here: a successful
 * send places the message in the peer's queue, where it survives the sender.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_in_flight_messages(const struct doca_comm_channel_addr_t *peer_addr,
								     uint64_t *send_in_flight_messages);

/* ---- service state ---- */

/**
 * Service only (DOCA_ERROR_NOT_SUPPORTED on a client): accepts pending
 * clients, snapshots the connected peers and re-arms the service handle.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_update_service_state_info(struct doca_comm_channel_ep_t *local_ep);

/** Connected peers as of the last update_service_state_info; the array lives until the next one. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_peer_addr_list(const struct doca_comm_channel_ep_t *local_ep,
						     struct doca_comm_channel_addr_t ***peer_addr_array,
						     uint32_t *peer_addr_array_len);

/** Clients whose handshake was not complete at the last update_service_state_info. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_pending_connections(const struct doca_comm_channel_ep_t *local_ep,
							  uint32_t *pending_connections);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMM_CHANNEL_H_ */
