/*
 * rs_int — rsockets: stream sockets over an RC QP of this library's own CM
 * ids and verbs (rdma/rsocket.h).
 *
 * The socket's number is the fd of its own event channel. Each side has a
 * receive ring, registered for remote writes; the connection's private data
 * tells the peer where it is (struct rs_hello). Data is an RDMA WRITE WITH
 * IMMEDIATE into the peer's ring at the writer's tail, the immediate giving
 * the length; both sides walk the ring in the same order, so the reader's
 * head always meets the writer's tail. Credits keep the writer inside what
 * the reader has freed: the ring's bytes and the receives posted for the
 * immediates, returned in messages of their own (an immediate with no data).
 * One receive credit is kept back from data so that a credit or FIN
 * message can always go.
 */
#ifndef RS_INT_H_
#define RS_INT_H_

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "cm_int.h"

#define RS_VERSION 1
#define RS_DEF_QSIZE 128
#define RS_MAX_QSIZE 255 /* receive credits travel in 8 bits of an immediate */
#define RS_MIN_BUF 4096
#define RS_DEF_BUF (128u << 10)
#define RS_MAX_BUF (4u << 20)
#define RS_DEF_INLINE 64
#define RS_MAX_XFER (64u << 10) /* one write at most: credits flow back while a large send runs */

/* The immediate: its type in the top 2 bits. */
#define RS_IMM_TYPE(imm) ((imm) >> 30)
#define RS_IMM_DATA 0u	 /* bits 0..29: bytes written at the ring's tail */
#define RS_IMM_CREDIT 1u /* bits 22..29: receives reposted; bits 0..21: ring bytes freed */
#define RS_IMM_FIN 2u	 /* the writer shut down writing: EOF after what came before */
#define RS_IMM_CTRL 3u	 /* bits 0..7: the slot of the control area that holds a struct rs_ctrl */
#define RS_IMM_BYTES_MAX ((1u << 22) - 1)

#define RS_WR_RECV (1ull << 63) /* wr_id of a receive; a send's is its bytes of the send buffer */

/* The private data of REQ and REP: the sender's receive ring and queue. */
struct rs_hello {
	uint8_t version;
	uint8_t pad[3];
	uint32_t rq_size; /* big-endian, as the rest */
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

/*
 * A control message, written into a slot of the control area that follows
 * the receive ring (one slot per receive the reader has posted, so a slot
 * is never reused before the reader took it): an I/O mapping (riomap).
 */
#define RS_CTRL_IOMAP 1
#define RS_CTRL_SLOT 32
#define RS_MAX_IOMAPS 64 /* mappings of the peer kept; the oldest goes */

struct rs_ctrl {
	uint8_t op;
	uint8_t pad[3];
	uint32_t rkey; /* big-endian, as the rest */
	uint64_t offset;
	uint64_t addr;
	uint64_t len;
};

struct rs_iomap {
	struct rs_iomap *next;
	uint64_t offset, len, addr;
	uint32_t rkey;
	struct ibv_mr *mr; /* own mappings: the registration */
};

enum rs_state {
	RS_INIT = 0,
	RS_LISTEN,
	RS_CONNECTING, /* active: REQ sent */
	RS_ACCEPTING,  /* passive: REP sent, waiting for ESTABLISHED */
	RS_CONNECTED,
	RS_CLOSED,     /* the connection ended (disconnect, peer death, failure) */
};

struct rs_req {
	struct rs_req *next;
	struct rdma_cm_event *ev; /* a CONNECT_REQUEST, not acked yet */
};

struct rs {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t progress; /* a thread took completions or events: waiters look again */
	bool polling;		 /* one thread sleeps in poll(2) for the socket; others on progress */
	enum rs_state state;
	int domain;
	bool nonblock;
	int so_error;	       /* SO_ERROR: an asynchronous connect's failure */
	int err;	       /* the error I/O reports once the connection is gone */
	bool fin_rcvd, fin_sent, shut_rd, shut_wr, disconnected;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rs_req *reqs, **reqs_tail; /* a listener's requests, oldest first */

	/* Options (rsetsockopt), fixed once the QP is made. */
	uint32_t sq_size, rq_size, sbuf_size, rbuf_size, inline_size;
	int nodelay, keepalive, keepidle, reuseaddr;

	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool armed;

	/* Receive side: the ring the peer writes into. */
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	uint32_t rhead, rbytes;	     /* where the next unread byte is; how many */
	uint32_t rfreed, rreposted;  /* credits not yet returned */

	/* Send side: the copy buffer for what is not inline, and the peer's ring. */
	uint8_t *sbuf;
	struct ibv_mr *smr;
	uint32_t shead, sused;
	uint32_t sq_free;
	uint32_t credits;	     /* receives the peer has posted for us */
	uint64_t peer_addr;
	uint32_t peer_rkey, peer_size, peer_tail, peer_avail;
	uint32_t peer_rq, ctrl_seq;

	/* I/O mapping: own buffers the peer may write into, and the peer's. */
	int iomap_size;
	struct rs_iomap *iomaps, *peer_iomaps;
};

/* rs_index.c */
int rs_index_add(struct rs *rs);
void rs_index_del(struct rs *rs);
struct rs *rs_get(int fd);
struct rs *rs_lock(int fd); /* rs_get and its lock; EBADF (errno) when fd is no rsocket */
void rs_unlock(struct rs *rs);

/* rs_conn.c */
struct rs *rs_alloc(int domain);
void rs_free(struct rs *rs);

/* rs_wait.c */
int rs_process(struct rs *rs);
int rs_arm(struct rs *rs);
int rs_wait(struct rs *rs, short events);
void rs_woken(struct rs *rs);

/* rs_res.c */
int rs_res_create(struct rs *rs);
void rs_res_destroy(struct rs *rs);
void rs_hello_fill(const struct rs *rs, struct rs_hello *h);

/* rs_proto.c */
int rs_hello_take(struct rs *rs, const void *pdata, uint8_t len);
void rs_proto_imm(struct rs *rs, uint32_t imm);

/* rs_data.c */
void rs_would_block(void);
int rs_poll_cq(struct rs *rs);
void rs_give_credits(struct rs *rs, bool force);
int rs_post_ctrl(struct rs *rs, uint32_t imm);
uint32_t rs_post_write(struct rs *rs, const uint8_t *buf, uint32_t len, uint64_t raddr, uint32_t rkey, int imm_type,
		       uint32_t imm_bits, bool whole);
uint32_t rs_sbuf_contig(const struct rs *rs);
ssize_t rs_send_locked(struct rs *rs, const struct iovec *iov, int iovcnt, int flags);
ssize_t rs_recv_locked(struct rs *rs, const struct iovec *iov, int iovcnt, int flags);
bool rs_can_send(const struct rs *rs);
int rs_drain(struct rs *rs);

/* rs_iomap.c */
void rs_iomap_free(struct rs *rs);

/* rs_poll.c */
short rs_revents(struct rs *rs, short events);

#endif /* RS_INT_H_ */
