/*
 * cm_int — librdmacm.so.1's internal objects: event channels, CM ids,
 * devices, the wire messages between processes and the CM thread.
 *
 * One process-wide lock (cm_lock) guards every id, channel and queue: the
 * CM is control path only, and one lock keeps the thread that receives
 * messages and the application's calls from racing on an id's state.
 */
#ifndef CM_INT_H_
#define CM_INT_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define CM_EXPORT __attribute__((visibility("default")))

/* The IB CM's private data sizes less the RDMA CM header (rdma_connect(3)). */
#define CM_REQ_PDATA 56
#define CM_REP_PDATA 196
#define CM_REJ_PDATA 148
#define CM_DREQ_PDATA 220
#define CM_SIDR_REQ_PDATA 180
#define CM_SIDR_REP_PDATA 136
#define CM_PDATA_MAX 220

/* IB CM reject reasons carried as the REJECTED event's status. */
#define CM_REJ_INVALID_SERVICE_ID 8
#define CM_REJ_CONSUMER_DEFINED 28
#define CM_REJ_VENDOR_OPTION_NOT_SUPPORTED 35 /* rdma_reject_ece(3) */
/* SIDR REP status: no QP (no listener) on the service ID. */
#define CM_SIDR_UNSUPPORTED 1
#define CM_SIDR_REJECT 2

struct cm_list {
	struct cm_list *prev, *next;
};

static inline void cm_list_init(struct cm_list *l)
{
	l->prev = l->next = l;
}

static inline bool cm_list_empty(const struct cm_list *l)
{
	return l->next == l;
}

static inline void cm_list_add_tail(struct cm_list *l, struct cm_list *n)
{
	n->prev = l->prev;
	n->next = l;
	l->prev->next = n;
	l->prev = n;
}

static inline void cm_list_del(struct cm_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#define cm_container_of(p, type, member) ((type *)((char *)(p) - __builtin_offsetof(type, member)))

/* One RDMA device as the CM uses it: opened once, kept for the process. */
struct cm_dev {
	struct ibv_device *ibdev;
	struct ibv_context *verbs;
	struct ibv_pd *pd;	/* the default PD of rdma_create_ep/rdma_create_qp without one */
	struct ibv_xrcd *xrcd;	/* the XRC domain of XRC SRQs made without one (opened on first use) */
	uint8_t port_num;
	uint16_t lid;
	enum ibv_mtu mtu;
	union ibv_gid gid;	/* GID index 0 (an InfiniBand port's address) */
	uint8_t max_resp_res;	/* max_qp_rd_atom: what RDMA_MAX_RESP_RES stands for */
	uint8_t max_init_depth;	/* max_qp_init_rd_atom: what RDMA_MAX_INIT_DEPTH stands for */
};

struct cm_channel {
	struct rdma_event_channel ch; /* first: the public handle */
	struct cm_list events;	      /* struct cm_event, queued, not yet retrieved */
	bool sync;		      /* the private channel of a synchronous id */
	uint32_t waiters;	      /* threads waiting in rdma_get_cm_event (cm_lock) */
	bool dead;		      /* destroyed while some waited: the last of them frees it */
	struct cm_list dead_link;     /* while dead: on the list of such channels */
};

enum cm_state {
	CM_IDLE = 0,
	CM_ADDR_QUERY,	 /* a destination on a port's link that no port has: nobody answers */
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_WAIT,	 /* passive: socket accepted, REQ not yet read */
	CM_REQ_RCVD,	 /* passive: CONNECT_REQUEST queued, no answer yet */
	CM_CONNECT,	 /* active: REQ sent, waiting for REP */
	CM_REP_RCVD,	 /* active without a QP: CONNECT_RESPONSE, rdma_establish due */
	CM_ACCEPT,	 /* passive: REP sent, waiting for RTU */
	CM_CONNECTED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_DISCONNECTED,
	CM_REJECTED,
};

/* What the peer said in its REQ / REP / SIDR REP. */
struct cm_remote {
	uint32_t qpn;
	uint32_t psn;
	uint32_t qkey;
	uint16_t lid;
	union ibv_gid gid;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t flow_control;
	uint8_t srq;
};

/* An id's ECE (rdma_set_local_ece(3)): vendor and options; comp_mask is always 0. */
struct cm_ece {
	uint32_t vendor_id;
	uint32_t options;
};

struct cm_msg;
struct cm_mc;

struct cm_id {
	struct rdma_cm_id id;		/* first: the public handle */
	uint64_t serial;		/* names the id to the CM thread (never reused) */
	struct cm_list link;		/* all ids */
	struct cm_channel *ch;
	struct cm_dev *dev;
	enum cm_state state;
	int sock;			/* connection socket, -1 */
	int psock;			/* the bound port's socket (a listener listens on it), -1 */
	struct cm_id *listener;		/* passive: the id it came in on (NULL once gone) */
	int backlog;
	struct sockaddr_storage src, dst;
	struct ibv_sa_path_rec path;
	struct cm_remote remote;
	uint32_t psn;			/* own starting PSN */
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	int unacked;			/* events retrieved and not acked */
	pthread_cond_t acked;
	bool sync;			/* owns a private channel: calls wait for their outcome */
	bool own_send_cq, own_recv_cq;	/* the CM made them (rdma_create_qp, rdma_create_srq_ex) */
	uint8_t sgid_index;		/* the RoCE v2 entry of the source address (cm_sgid.c) */
	union ibv_gid sgid;
	struct cm_ece local_ece, remote_ece; /* sent in the REQ/REP; what the peer's said */
	bool peer_gone;
	struct ibv_qp_init_attr *ep_attr; /* rdma_create_ep's QP attributes, for rdma_get_request */
	struct cm_msg *req;		/* active: a REQ waiting for its listener to appear; passive: one held by the backlog */
	uint64_t req_until;		/* until then (monotonic ns) */
	struct cm_list timer_link;	/* on cm_timer.c's list while timer_at != 0 */
	uint64_t timer_at;		/* monotonic ns; 0: no timer */
	enum cm_state timer_state;	/* the state the timer was armed in */
	struct cm_mc *mc;		/* the multicast groups joined (cm_mcast.c) */
};

struct cm_event {
	struct rdma_cm_event ev;	/* first: the public handle */
	struct cm_list link;
	struct cm_id *owner;		/* the id the event counts against (the child for a request) */
	uint8_t pdata[CM_PDATA_MAX];
};

extern pthread_mutex_t cm_lock;

/* cm_dev.c */
struct cm_dev *cm_dev_by_name(const char *ibdev);
struct cm_dev *cm_dev_first(void);
struct cm_dev *cm_dev_of_verbs(struct ibv_context *verbs);

/* cm_resolve.c: the address resolver over the topology (one file, to be swapped). */
struct cm_dev *cm_resolve_local(const struct sockaddr *addr);
bool cm_addr_is_any(const struct sockaddr *addr);
bool cm_addr_reachable(const struct sockaddr *addr);
bool cm_addr_on_link(const struct sockaddr *addr);

/* cm_addr.c */
socklen_t cm_addr_len(const struct sockaddr *addr);
uint16_t cm_addr_port(const struct sockaddr *addr);
void cm_addr_set_port(struct sockaddr *addr, uint16_t port);
bool cm_addr_same_ip(const struct sockaddr *a, const struct sockaddr *b);

/* cm_channel.c */
void cm_event_queue(struct cm_channel *ch, struct cm_event *e);
struct cm_event *cm_event_new(struct cm_id *id, enum rdma_cm_event_type type, int status);
void cm_event_pdata(struct cm_event *e, const void *data, uint8_t len, uint8_t full);
void cm_channel_drop_events(struct cm_channel *ch, struct cm_id *id);
struct cm_channel *cm_channel_alloc(bool sync);
void cm_event_requeue(struct cm_channel *from, struct cm_channel *to, struct cm_event *e);
void cm_channel_free(struct cm_channel *ch);
/* Drops the queued events match picks (cm_lock held). */
void cm_channel_drop_matching(struct cm_channel *ch, bool (*match)(const struct cm_event *, const void *),
			      const void *arg);
int cm_complete(struct cm_id *id);

/* cm_id.c */
struct cm_id *cm_id_alloc(struct cm_channel *ch, void *context, enum rdma_port_space ps,
			  enum ibv_qp_type qp_type);
struct cm_id *cm_id_alloc_locked(struct cm_channel *ch, void *context, enum rdma_port_space ps,
				 enum ibv_qp_type qp_type);
struct cm_id *cm_id_by_serial(uint64_t serial);
void cm_id_bind_dev(struct cm_id *id, struct cm_dev *dev);
void cm_ids_forget_sockets(void);
int cm_ids_retry(void);
void cm_id_free_locked(struct cm_id *id);
void cm_id_drop_locked(struct cm_id *id);
int cm_ps_qp_type(enum rdma_port_space ps, enum ibv_qp_type *type);
int cm_migrate_locked(struct cm_id *id, struct cm_channel *to);
int cm_bind_locked(struct cm_id *id, const struct sockaddr *addr);

/* cm_qp.c */
int cm_qp_init(struct cm_id *id);
int cm_qp_rtr_rts(struct cm_id *id);
int cm_qp_err(struct cm_id *id);
void cm_ud_ah_attr(struct cm_id *id, struct ibv_ah_attr *ah);

/* cm_wire.c */
enum cm_msg_type {
	CM_MSG_REQ = 1,
	CM_MSG_REP,
	CM_MSG_RTU,
	CM_MSG_REJ,
	CM_MSG_DREQ,
	CM_MSG_DREP,
	CM_MSG_SIDR_REQ,
	CM_MSG_SIDR_REP,
};

struct cm_msg {
	uint8_t type;
	uint8_t pdata_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t flow_control;
	uint8_t srq;
	uint32_t qpn;
	uint32_t psn;
	uint32_t qkey;
	uint32_t status;
	uint16_t lid;
	uint16_t pad;
	uint8_t gid[16];
	uint32_t ece_vendor;	/* REQ: the requester's ECE; REP: the vendor offered, the responder's options */
	uint32_t ece_options;
	struct sockaddr_storage src, dst;
	uint8_t pdata[CM_PDATA_MAX];
};

int cm_wire_bind(struct cm_id *id, uint16_t *port);
int cm_wire_listen(struct cm_id *id);
int cm_wire_connect(struct cm_id *id);
int cm_wire_send(struct cm_id *id, struct cm_msg *m);
void cm_wire_fill(struct cm_id *id, struct cm_msg *m, uint8_t type);

/*
 * cm_check.c: whether n received bytes are a message of a known type whose
 * private data fits it; whether a REQ's addresses are of one IP family.
 */
bool cm_msg_check(const struct cm_msg *m, size_t n);
bool cm_msg_req_addrs(const struct cm_msg *m);

/* cm_conn.c */
bool cm_conn_retry(struct cm_id *id);
int cm_reject(struct cm_id *id, const void *pdata, uint8_t len, uint32_t reason);

/* cm_sgid.c: the source GID entry of an id's address (cm_lock held). */
void cm_sgid_pick(struct cm_id *id);

/* cm_ece.c: ECE in the REQ and REP (cm_lock held). */
void cm_ece_req(const struct cm_id *id, struct cm_msg *m);
void cm_ece_rep(const struct cm_id *id, struct cm_msg *m);
void cm_ece_recv(struct cm_id *id, const struct cm_msg *m);

/* cm_backlog.c: rdma_listen's backlog (cm_lock held). */
bool cm_backlog_full(const struct cm_id *l);
bool cm_backlog_hold(struct cm_id *c, const struct cm_msg *m);
bool cm_backlog_retry(struct cm_id *c);

/* cm_loop.c: the CM thread. */
void cm_loop_atfork(void);
int cm_loop_retry_start(void);
int cm_loop_watch(struct cm_id *id, int fd);
void cm_loop_unwatch(struct cm_id *id);
void cm_loop_kick(void);

/* cm_timer.c: the CM's response timeouts and address queries (cm_lock held). */
void cm_timer_arm(struct cm_id *id, unsigned ms);
void cm_timer_arm_response(struct cm_id *id);
void cm_timer_disarm(struct cm_id *id);
int cm_timer_next_ms(void);
void cm_timer_expire(void);
void cm_timer_forget_all(void);

/* cm_proto.c: what a received message does to an id (cm_lock held). */
void cm_proto_recv(struct cm_id *id, const struct cm_msg *m);
void cm_proto_eof(struct cm_id *id);
void cm_proto_accept_sock(struct cm_id *listener, int fd);
void cm_proto_refuse(struct cm_id *c);

/* cm_mcast.c: multicast groups of UD ids (cm_lock held but for cm_mcast_group). */
bool cm_mcast_group(const struct sockaddr *addr);
void cm_mcast_pick_src(struct cm_id *id, const struct sockaddr *group);
void cm_mcast_taken(struct cm_event *e);
void cm_mcast_free_locked(struct cm_id *id);

#endif /* CM_INT_H_ */
