/*
 * softdpu — DOCA RDMA library (DOCA 2.2 work-queue API).
 *
 * A context owns one RC queue pair of the device. After doca_ctx_start its
 * connection descriptor (doca_rdma_export) goes to the peer, which passes it
 * to doca_rdma_connect, and the other way round; the peer may as well be a
 * verbs QP (the descriptor names the QP number and the port's GID). Jobs are
 * submitted to a doca_workq the context was added to; each one's event
 * carries the job's user_data, and the library writes a struct
 * doca_rdma_result through the event's result.ptr when the program set it
 * before doca_workq_progress_retrieve. A failed job's event comes with
 * DOCA_ERROR_IO_FAILED from retrieve and the reason in that result.
 */
#ifndef DOCA_RDMA_H_
#define DOCA_RDMA_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** States of a doca_rdma. */
enum doca_rdma_state {
	DOCA_RDMA_STATE_RESET = 0,
	DOCA_RDMA_STATE_INIT,
	DOCA_RDMA_STATE_CONNECTED,
	DOCA_RDMA_STATE_ERROR,
};

/** Transports. */
enum doca_rdma_transport_type {
	DOCA_RDMA_TRANSPORT_RC, /**< reliable connection */
	DOCA_RDMA_TRANSPORT_DC, /**< dynamically connected: not supported */
};

/** A GID as the port's table holds it. */
struct doca_rdma_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
};

/** Address of a DC or UD peer (those transports are not supported; RC jobs ignore it). */
struct doca_rdma_addr;

/** Job types. */
enum doca_rdma_job_types {
	DOCA_RDMA_JOB_RECV = DOCA_ACTION_RDMA_FIRST + 1,
	DOCA_RDMA_JOB_SEND,
	DOCA_RDMA_JOB_SEND_IMM,
	DOCA_RDMA_JOB_READ,
	DOCA_RDMA_JOB_WRITE,
	DOCA_RDMA_JOB_WRITE_IMM,
	DOCA_RDMA_JOB_ATOMIC_CMP_SWP,
	DOCA_RDMA_JOB_ATOMIC_FETCH_ADD,
};

/*
 * Receive: the peer's next SEND lands at the start of dst_buff's data
 * segment (the room up to the buffer's end; along the list), whose data
 * length becomes what arrived; NULL for a WRITE with immediate only.
 */
struct doca_rdma_job_recv {
	struct doca_job base;	   /**< common job data */
	struct doca_buf *dst_buff; /**< destination; a list of at most recv_buf_chain_len elements */
};

/** Send (with immediate for DOCA_RDMA_JOB_SEND_IMM): the data segment(s) of src_buff. */
struct doca_rdma_job_send {
	struct doca_job base;			     /**< common job data */
	struct doca_buf const *src_buff;	     /**< source */
	doca_be32_t immediate_data;		     /**< immediate data (SEND_IMM) */
	struct doca_rdma_addr const *rdma_peer_addr; /**< UD/DC only: an RC context ignores it */
};

/*
 * Read (remote src_buff's data into local dst_buff, whose data length becomes
 * the bytes read) or write (local src_buff's data to remote dst_buff's data
 * address). A destination is written at the start of its data segment.
 */
struct doca_rdma_job_read_write {
	struct doca_job base;			     /**< common job data */
	struct doca_buf *dst_buff;		     /**< destination */
	struct doca_buf const *src_buff;	     /**< source */
	doca_be32_t immediate_data;		     /**< immediate data (WRITE_IMM) */
	struct doca_rdma_addr const *rdma_peer_addr; /**< DC only: an RC context ignores it */
};

/** 64-bit atomic on the remote cmp_or_add_dest_buff; the original value lands in result_buff. */
struct doca_rdma_job_atomic {
	struct doca_job base;			     /**< common job data */
	struct doca_buf *cmp_or_add_dest_buff;	     /**< remote 8 bytes */
	struct doca_buf *result_buff;		     /**< local: the remote value before the operation (8 bytes) */
	uint64_t swap_or_add_data;		     /**< value to swap in, or to add */
	uint64_t cmp_data;			     /**< value to compare with (compare and swap) */
	struct doca_rdma_addr const *rdma_peer_addr; /**< DC only: an RC context ignores it */
};

/** Opcodes of a receive's completion. */
enum doca_rdma_opcode_t {
	DOCA_RDMA_OPCODE_RECV_SEND = 0,
	DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM,
	DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM,
};

/** Result of a job, written through doca_event::result.ptr when the program set it. */
struct doca_rdma_result {
	doca_error_t result;		       /**< the job's status */
	enum doca_rdma_opcode_t opcode;	       /**< receive: what the peer sent */
	uint32_t length;		       /**< receive: bytes received (0 for other jobs) */
	struct doca_rdma_addr *rdma_peer_addr; /**< UD/DC only: an RC context ignores it */
	doca_be32_t immediate_data;	       /**< receive: immediate data, when the opcode has one */
};

struct doca_rdma;

/* ---- context ---- */

/** DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_NO_MEMORY. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_rdma **rdma);
/** DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_BAD_STATE while its context is started. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma);
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma);

/** DOCA_SUCCESS when the device runs the job type; DOCA_ERROR_NOT_SUPPORTED otherwise. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_job_get_supported(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type);

/*
 * The connection descriptor, after doca_ctx_start (DOCA_ERROR_BAD_STATE
 * before). It lives in the context until it is stopped or destroyed.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_export(const struct doca_rdma *rdma, const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size);
/*
 * Connects to the peer the descriptor names. DOCA_ERROR_BAD_STATE before
 * doca_ctx_start or once connected; DOCA_ERROR_CONNECTION_ABORTED for a
 * descriptor that is not one (truncated, altered, of another link layer) or
 * names no reachable peer.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size);

/* ---- capabilities ---- */

__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_buf_chain_len(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type,
					     enum doca_rdma_transport_type transport_type,
					     uint32_t *max_buf_chain_len);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_table_size(struct doca_devinfo *devinfo, uint32_t *gid_table_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid(struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
			       struct doca_rdma_gid *gid_array);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type_supported(const struct doca_devinfo *devinfo,
						    enum doca_rdma_transport_type transport_type);

/* ---- properties: set before doca_ctx_start (DOCA_ERROR_BAD_STATE after) ---- */

__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu);
/** RDMA access flags (DOCA_ACCESS_LOCAL_READ_WRITE, DOCA_ACCESS_RDMA_*); after doca_ctx_dev_add. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, bool grh_enabled);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_buf_chain_len(struct doca_rdma *rdma, uint32_t recv_buf_chain_len);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl);

/* ---- properties: get (DOCA_ERROR_BAD_STATE before a device was added) ---- */

__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, bool *grh_enabled);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_buf_chain_len(const struct doca_rdma *rdma, uint32_t *recv_buf_chain_len);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl);
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_state(const struct doca_rdma *rdma, enum doca_rdma_state *state);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_RDMA_H_ */
