/*
 * vb_int — what the files of libibverbs.so.1 share among themselves (never
 * exported, never seen by libmlx5.so.1).
 */
#ifndef VB_INT_H_
#define VB_INT_H_

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#include "hw_ids.h"
#include "vb.h"

/* The devices of this side (vb_device.c): NULL when the topology was refused. */
struct vb_device *vb_devices(int *n);

#define VB_SYSFS_PATH_MAX 256 /* IBV_SYSFS_PATH_MAX */
/*
 * Publishes the PCI identity of function bdf (vb_sysfs.c) and writes the
 * device's sysfs-shaped ibdev directory to path; false (path untouched) when
 * the user's directory cannot be made or is refused.
 */
bool vb_sysfs_publish(const char *bdf, const char *ibdev, char *path, size_t size);

/* The identity and limits every device reports (vb_query.c). */
void vb_device_attr(const struct vb_device *dev, struct ibv_device_attr *attr);
void vb_port_attr(const struct vb_device *dev, struct ibv_port_attr *attr);
int vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr, size_t len);
int vb_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size);
int vb_query_device(struct ibv_context *c, struct ibv_device_attr *attr);
int vb_query_port_compat(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *attr);

/* Every ctx->ops and verbs_context slot points at a function (vb_ops.c). */
void vb_ops_fill(struct verbs_context *vctx);

/* The async event queue of a context (vb_async.c). */
int vb_async_init(struct vb_context *ctx);

/* vb_import.c: a context's command file, and the list of open contexts an import looks through. */
int vb_cmd_fd_open(struct vb_context *ctx);
void vb_ctx_live_add(struct vb_context *ctx);
void vb_ctx_live_del(struct vb_context *ctx);
/* ctx still open (held open until vb_ctx_live_release), or false (closed: nothing held). */
bool vb_ctx_live_hold(const struct vb_context *ctx);
void vb_ctx_live_release(void);
/* Lets go of an imported domain's handle: 0, or EBUSY while objects made on it live. */
int vb_pd_unimport(struct vb_pd *pd);
/* vb_pd.c: an ibv_mr for a registration of this process by its key (ibv_import_mr). */
struct ibv_mr *vb_mr_import(struct ibv_pd *pd, uint32_t key, uint64_t len);
void vb_async_fini(struct vb_context *ctx);

/* A QP still attached to a multicast group (vb_mcast.c): destroying it is refused. */
bool vb_mcast_busy(const struct vb_qp *qp);

/* vb_dvmisc.c: its vb_dv_ops entries; the reserved QPNs a closing context still holds freed. */
extern const struct vb_dv_misc_ops vb_dv_misc_ops_impl;
extern const struct vb_dv_dcs_ops vb_dv_dcs_ops_impl;
extern const struct vb_dv_devx_ops vb_dv_devx_ops_impl;
/* DevX event channels (vb_devx_evch.c), served through vb_dv_devx_ops. */
struct mlx5dv_devx_event_channel *vb_evch_create(struct ibv_context *c, uint32_t flags);
void vb_evch_destroy(struct mlx5dv_devx_event_channel *ch);
int vb_evch_subscribe(struct mlx5dv_devx_event_channel *ch, int fd, struct mlx5dv_devx_obj *obj, uint16_t n,
		      const uint16_t *types, uint64_t cookie);
ssize_t vb_evch_get_event(struct mlx5dv_devx_event_channel *ch, struct mlx5_ib_uapi_devx_async_event_hdr *ev,
			  size_t len);
extern const struct vb_dv_act_ops vb_dv_act_ops_impl;
extern const struct vb_dv_pace_ops vb_dv_pace_ops_impl;
void vb_rqpn_fini(struct vb_context *ctx);

/* The queue objects' slots of ctx->ops and verbs_context (vb_cq.c, vb_poll.c, vb_qp.c, vb_post.c, vb_srq.c). */
int vb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int vb_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *vb_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *attr);
void vb_cq_ex_fill(struct vb_cq *cq);
void vb_cq_tell_overrun(struct vb_cq *cq);
/* ibv_create_cq(_ex) (dv NULL) and mlx5dv_create_cq: NULL and errno as mlx5's create_cq. */
struct vb_cq *vb_cq_create(struct vb_context *ctx, struct ibv_cq_init_attr_ex *a, struct mlx5dv_cq_init_attr *dv);
/*
 * mlx5's checks of the CQE size and the mlx5dv attributes (vb_dvcq.c): 0 and
 * *cqe_log (6 or 7), or the errno mlx5 and the kernel give. dv NULL reads
 * MLX5_CQE_SIZE, as mlx5 does for every CQ.
 */
int vb_dvcq_attr_ok(const struct mlx5dv_cq_init_attr *dv, uint32_t *cqe_log);
/* Responder scatter to CQE (vb_scat.c): on by default (MLX5_SCATTER_TO_CQE not "0"). */
bool vb_scat_default(void);
/* On or off for an RC or UC QP (others: nothing), while it has no traffic. */
void vb_scat_set(struct vb_qp *qp, bool on);
/* A receive CQE with INLINE_SCATTER_32 or _64: its bytes into the receive's entries, wc adjusted. */
void vb_scat_recv(const struct vb_qp *qp, const struct hw_cqe64 *cqe, struct ibv_wc *wc);
/* mlx5dv_query_device's CQE fields: the context flags and compression caps the CQs above honour. */
uint64_t vb_dvcq_ctx_flags(void);
struct mlx5dv_cqe_comp_caps vb_dvcq_comp_caps(void);
struct ibv_cq_ex *vb_dv_create_cq(struct ibv_context *c, struct ibv_cq_init_attr_ex *a, struct mlx5dv_cq_init_attr *dv);


/* A CQE the device refused for lack of room: IBV_EVENT_CQ_ERR, once per CQ (one load when none was). */
static inline void vb_cq_check_overrun(struct vb_cq *cq)
{
	if (__builtin_expect(atomic_load_explicit(cq->overrun, memory_order_relaxed) != 0, 0))
		vb_cq_tell_overrun(cq);
}
void vb_cq_add_qp(struct vb_cq *cq, struct vb_qp *qp, bool send);
/* The context's CQs and SRQs by number, for DevX commands (vb_devx_named.c); del: EBUSY while one is held. */
void vb_named_cq_add(struct vb_cq *cq);
int vb_named_cq_del(struct vb_cq *cq);
void vb_named_srq_add(struct vb_srq *srq);
int vb_named_srq_del(struct vb_srq *srq);
/* The SRQ of srqn a DevX DCT completes receives of into cq (no QP of the CQ's lists took them), or NULL; cq's lock held. */
struct vb_srq *vb_named_cq_srq(struct vb_cq *cq, uint32_t srqn);
void vb_cq_del_qp(struct vb_cq *cq, struct vb_qp *qp, bool send);
/*
 * Drops qpn's completions from cq (a QP moved to RESET, as mlx5 cleans its
 * CQs): the later ones of other QPs move up in order; a receive of srq
 * (non-NULL) gives its WQE back.
 */
void vb_cq_clean(struct vb_cq *cq, uint32_t qpn, struct vb_srq *srq);
/*
 * Memory windows (vb_mw.c): the ops slots, and the UMR segments of a bind
 * WQE mlx5 writes (after ctrl, whose immediate is the window's key now):
 * their size in bytes. vb_bind_mw_check: 0 or the post's errno.
 */
struct ibv_mw *vb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);

/* Device memory (vb_dm.c). */
struct ibv_dm *vb_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr);
int vb_free_dm(struct ibv_dm *dm);
struct ibv_mr *vb_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len, unsigned int access);
int vb_dm_view(struct ibv_dm *dm, struct mlx5dv_dm *out);
struct ibv_dm *vb_dv_alloc_dm(struct ibv_context *c, struct ibv_alloc_dm_attr *attr,
			      struct mlx5dv_alloc_dm_attr *mattr);
/* mlx5dv_dm_map_op_addr: the allocation's MEMIC operation address (vb_memic.c), NULL and errno. */
void *vb_dm_map_op_addr(struct ibv_dm *dm, uint8_t op);

/*
 * MEMIC operations (vb_memic.c): the ops and access sizes the device-memory
 * capability page advertises (memic_operations bits: op n is bit n; sizes:
 * bit 0 is one byte), an op address over len bytes at mem (NULL and errno),
 * and the op addresses of an allocation that goes, dropped (owner names it).
 */
#define VB_MEMIC_OP_INC 0u
#define VB_MEMIC_OP_TAS 1u
#define VB_MEMIC_OPS (1u << VB_MEMIC_OP_INC | 1u << VB_MEMIC_OP_TAS)
#define VB_MEMIC_SIZES 0x1u
void *vb_memic_map(const void *owner, uint8_t *mem, size_t len, uint8_t op);
void vb_memic_drop(const void *owner);
/* Doorbell pages programs write themselves, trapped (vb_bell.c). */
void *vb_bell_ctx_page(struct vb_context *ctx);
void vb_bell_ctx_fini(struct vb_context *ctx);
void vb_bell_qp_arm(struct vb_qp *qp, void *page);
#define VB_CQ_DOORBELL 0x20 /* the CQ doorbell register in a UAR page, as mlx5 (MLX5_CQ_DOORBELL) */
/* The context's cq_uar page (mlx5dv_init_obj's), trapped: stores go to vb_cq_uar_store. */
void *vb_bell_cq_page(struct vb_context *ctx);
void vb_bell_cq_fini(struct vb_context *ctx);
/* A store to the cq_uar page (hw_trap_store_fn): a write of the CQ doorbell arms the CQ it names. */
void vb_cq_uar_store(void *arg, uint32_t off, uint64_t val, bool has_val);
/*
 * DevX CQ arms (vb_devx_evch.c): a store to a DevX UAR's CQ doorbell
 * (trapped, vb_bell.c) or to cq_uar's naming no verbs CQ kicks the event
 * watcher, which takes the arm from the CQ's record; a UAR page that could
 * not be trapped makes the watcher look every period instead.
 */
void vb_devx_uar_store(void *arg, uint32_t off, uint64_t val, bool has_val);
void vb_devx_evch_kick(void);
void vb_devx_evch_unseen(void);
void vb_bell_qp_disarm(struct vb_qp *qp);
void *vb_bell_uar_page(void);
void vb_bell_uar_free(void *page);

/* VARs (vb_var.c): the card's number of them, the table, a closing context's freed. */
#define VB_VAR_MAX 1024u
extern const struct vb_dv_var_ops vb_dv_var_ops_impl;
void vb_var_ctx_fini(struct vb_context *ctx);
/*
 * A zero-based MR over device memory at base (vb_pd.c): access holds no
 * ZERO_BASED; *dm_mrs, which the caller has raised, is lowered by its dereg.
 */
struct ibv_mr *vb_reg_dm_range(struct ibv_pd *pd, void *base, size_t len, unsigned int access,
			       _Atomic uint32_t *dm_mrs);
int vb_dealloc_mw(struct ibv_mw *mw);
int vb_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
int vb_bind_mw_check(const struct vb_qp *qp, const struct ibv_mw *mw, const struct ibv_mw_bind_info *b);
size_t vb_bind_mw_segs(const struct vb_qp *qp, const struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *b, uint8_t *p);

/* Thread and parent domains (vb_parent.c); vb_parent_free: a parent domain's dealloc (EBUSY while used). */
struct ibv_td *vb_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int vb_dealloc_td(struct ibv_td *td);
struct ibv_pd *vb_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *a);
int vb_parent_free(struct vb_pd *pd);

/*
 * A queue's buffer and doorbell record from a parent domain's allocators,
 * asked as mlx5 asks them (vb_parent.c): len bytes aligned to align (a
 * power of two), then 8 bytes at 8. buf NULL: there are none, or both
 * were left to the provider (the device's own blocks). Otherwise both are
 * set and zeroed: the allocator's, or ours where it left one of them. 0 or
 * ENOMEM (an allocator's NULL; nothing kept). vb_qmem_put gives them back
 * (through the allocator's free for its own), once the queue is destroyed.
 */
#define VB_QMEM_ALIGN 4096	 /* a CQ's and an SRQ's buffer, as mlx5 asks: a page */
#define VB_QMEM_DBREC_BYTES 8	 /* and the record's size and alignment */
int vb_qmem_get(struct vb_qmem *m, struct ibv_pd *pd, size_t len, size_t align, uint64_t type);
void vb_qmem_put(struct vb_qmem *m);
/* What a queue's creation in given memory failing with st is to the program: EOPNOTSUPP when it cannot be shared. */
int vb_qmem_errno(enum hw_status st);

/* The device's clocks (vb_clock.c): its free-running ns, their wall-clock value, ibv_query_rt_values_ex. */
uint64_t vb_clock_device_ns(void);
uint64_t vb_clock_wall_of(uint64_t device_ns);
int vb_query_rt_values(struct ibv_context *c, struct ibv_values_ex *values);

/* On-demand paging (vb_odp.c): the device's capabilities and the advise_mr slot. */
void vb_odp_caps(struct ibv_device_attr_ex *a);
uint32_t vb_odp_dc_caps(void);
int vb_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
		 uint32_t num_sge);
/* Parses one CQE into wc (the CQ's lock held); false when the CQE belongs to no QP (skipped). */
bool vb_cqe_parse(struct vb_cq *cq, const struct hw_cqe64 *cqe, struct ibv_wc *wc);
struct ibv_qp *vb_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr);
/* What a QP is beyond its ibv_qp_type: the DC ones are IBV_QPT_DRIVER (vb_dc.c). */
struct vb_qp_kind {
	enum hw_qp_type hw;
	uint8_t dc_type;	  /* 0 or enum mlx5dv_dc_type */
	uint64_t dc_key;	  /* DCT */
	bool raw;		  /* IBV_QPT_RAW_PACKET: queues of the Ethernet port (vb_raw.c), not an hw QP */
};
/* The objects a QP is made of (PD, CQs, SRQ) belong to ctx: 0 or EINVAL. */
int vb_qp_objs_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *attr);
/* Creates a QP of checked attributes (errno set on failure). */
struct ibv_qp *vb_qp_create(struct vb_context *ctx, struct ibv_qp_init_attr_ex *attr, const struct vb_qp_kind *k);
/* mlx5dv_create_qp (vb_dc.c). */
struct ibv_qp *vb_dv_create_qp(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr,
			       struct mlx5dv_qp_init_attr *dv_attr);
/* A DCI's or DCT's modify: the kernel's masks for the transition (vb_dc.c); 0 or EINVAL. */
int vb_dc_mask_ok(uint8_t dc_type, enum ibv_qp_state cur, enum ibv_qp_state to, int mask);
/*
 * Raw packet QPs (vb_raw.c): the Ethernet port's SQ and RQ behind an
 * ibv_qp, and the flows that steer frames to them (vb_flow.c).
 */
int vb_raw_attr_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *attr);
int vb_raw_hw_create(struct vb_context *ctx, struct vb_qp *qp, const struct ibv_qp_init_attr_ex *attr);
void vb_raw_free(struct vb_qp *qp);
bool vb_raw_busy(struct vb_qp *qp);
int vb_raw_modify(struct vb_qp *qp, struct ibv_qp_attr *attr, int mask);
int vb_raw_post_send(struct vb_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int vb_raw_post_recv(struct vb_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
uint32_t vb_raw_tirn(const struct vb_qp *qp);
/* A raw QP's pacing (vb_raw.c): its rate entry (kbit/s, 0: none; an RTS QP), its schedule leaf's bucket. */
struct hw_pace;
struct hw_pace_stats;
int vb_raw_set_rate(struct vb_qp *qp, uint32_t rate_kbps, uint32_t burst, uint16_t typical);
int vb_raw_set_leaf(struct vb_qp *qp, struct hw_pace *leaf);
void vb_raw_pace_stats(struct vb_qp *qp, struct hw_pace_stats *s);

/*
 * Packet pacing as a ConnectX-6 Dx reports it (vb_pace.c): rates in kbit/s
 * from VB_PP_RATE_MIN to VB_PP_RATE_MAX (100 Gbit/s), on raw packet QPs.
 */
#define VB_PP_RATE_MIN 1u
#define VB_PP_RATE_MAX 100000000u
void vb_pace_device_caps(struct ibv_device_attr_ex *a);
/* 0 (no limit) or a rate within the caps: 0; else EINVAL. */
int vb_pace_rate_ok(uint32_t rate_kbps);
int vb_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
/* Schedule elements (vb_sched.c): the vb_dv_pace_ops entries, errno as v44's mlx5. */
struct mlx5dv_sched_node *vb_sched_node_create(struct ibv_context *c, const struct mlx5dv_sched_attr *a);
struct mlx5dv_sched_leaf *vb_sched_leaf_create(struct ibv_context *c, const struct mlx5dv_sched_attr *a);
int vb_sched_node_modify(struct mlx5dv_sched_node *node, const struct mlx5dv_sched_attr *a);
int vb_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf, const struct mlx5dv_sched_attr *a);
int vb_sched_node_destroy(struct mlx5dv_sched_node *node);
int vb_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf);
int vb_sched_modify_qp(struct ibv_qp *qp, const struct mlx5dv_sched_leaf *req, const struct mlx5dv_sched_leaf *resp);
/* The accounting of a QP's bucket (a raw QP's SQ, or the schedule leaf of another QP); all 0 unpaced. */
void vb_pace_qp_stats(struct ibv_qp *qp, struct hw_pace_stats *s);
int vb_raw_rss_new(struct vb_qp *qp, uint32_t tirn, struct ibv_rwq_ind_table *ind);
struct ibv_rwq_ind_table *vb_raw_rss_ind(const struct vb_qp *qp);
struct ibv_qp *vb_rss_create_qp(struct vb_context *ctx, struct ibv_qp_init_attr_ex *attr);
int vb_rss_destroy_qp(struct vb_qp *qp);
/* An indirection table's WQ numbers (its RQs), in order; a QP holding it makes destroy EBUSY. */
void vb_ind_rqns(struct ibv_rwq_ind_table *t, uint32_t *rqns, uint32_t *n);
void vb_ind_hold(struct ibv_rwq_ind_table *t, bool hold);
void vb_raw_flow_hold(struct vb_qp *qp, bool hold);
struct ibv_flow *vb_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
/*
 * The kernel's root tables (receive, or transmit when egress), which the
 * verbs flows and the mlx5dv flow matchers share: a matcher there (0 or
 * ENOMEM), destroyed (EBUSY while it has rules); a dv flow's rule as an
 * ibv_flow, which ibv_destroy_flow removes (releasing qp when not NULL and
 * counting the flow out of *m_users).
 */
struct hw_steer_matcher;
struct hw_steer_rule;
struct hw_reformat;
struct hw_modhdr;
int vb_flow_root_matcher(bool egress, uint16_t priority, const uint8_t *mask, struct hw_steer_matcher **m);
int vb_flow_root_matcher_destroy(bool egress, struct hw_steer_matcher *m);
/* A dv flow holds its flow action (users: its count of flows) until ibv_destroy_flow. */
void vb_flow_hold_action(struct ibv_flow *flow, _Atomic uint32_t *users);

/*
 * A flow action of mlx5dv_create_flow_action_packet_reformat or
 * _modify_header (vb_dr_act.c): its reformat or header modify (the other
 * NULL), for the direction of ft_type; ibv_destroy_flow_action frees it
 * (EBUSY while a flow uses it).
 */
struct vb_flow_action {
	struct ibv_flow_action fa;
	uint32_t magic;
	bool egress;
	_Atomic uint32_t users;
	struct hw_reformat *rf;
	struct hw_modhdr *mh;
};

#define VB_MAGIC_FLOW_ACTION 0x76624641u

int vb_destroy_flow_action(struct ibv_flow_action *action);
/* The counter devx objects (vb_devx_counter.c): ALLOC_FLOW_COUNTER, its destroy. */
struct mlx5dv_devx_obj *vb_devx_counter_create(struct vb_context *ctx, const uint8_t *in, size_t inlen,
					       uint8_t *out, size_t outlen);
int vb_devx_counter_destroy(struct mlx5dv_devx_obj *obj);
/* QUERY_FLOW_COUNTER of a counter object. */
int vb_devx_counter_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen);
/* mlx5dv_devx_obj_query: by the object's kind, counters above, DevX QPs (vb_devx_obj.c). */
int vb_dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen);

struct ibv_flow *vb_flow_wrap(struct ibv_context *c, struct vb_qp *qp, struct hw_steer_rule *r,
			      _Atomic uint32_t *m_users);
/* mlx5dv_create_flow_matcher, mlx5dv_destroy_flow_matcher, mlx5dv_create_flow (vb_dv_flow.c). */
struct mlx5dv_flow_matcher *vb_dv_flow_matcher_create(struct ibv_context *c, struct mlx5dv_flow_matcher_attr *attr);
int vb_dv_flow_matcher_destroy(struct mlx5dv_flow_matcher *m);
struct ibv_flow *vb_dv_flow_create(struct mlx5dv_flow_matcher *m, struct mlx5dv_flow_match_parameters *value,
				   size_t n, struct mlx5dv_flow_action_attr *acts);
/* The outer part of a mask of match criteria (vb_dr.c): 0, EINVAL or EOPNOTSUPP (a mask beyond the outer headers). */
int vb_dr_match_mask(uint8_t criteria, const struct mlx5dv_flow_match_parameters *mask, uint8_t *outer);
/* Receive WQs over raw packet QPs' receive sides, and their indirection tables (vb_wq.c). */
struct ibv_wq *vb_create_wq(struct ibv_context *c, struct ibv_wq_init_attr *attr);
int vb_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int vb_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *vb_create_rwq_ind_table(struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *attr);
int vb_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);
int vb_destroy_flow(struct ibv_flow *flow);
int vb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int vb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* Rings the SQ doorbell up to the producer counter when the QP runs (vb_post.c). */
/*
 * The send queue's lock, taken by every post: inline, one exchange to take
 * and a store to give back (a call into the C library's spin lock costs as
 * much again on a 64 B message). A waiter spins politely, then yields, so a
 * holder that lost its core gets it back.
 */
#if defined(__x86_64__) || defined(__i386__)
#define VB_CPU_RELAX() __builtin_ia32_pause()
#else
#define VB_CPU_RELAX() atomic_signal_fence(memory_order_seq_cst)
#endif

static inline void vb_sq_lock(struct vb_qp *qp)
{
	for (uint32_t spins = 0; atomic_exchange_explicit(&qp->sq_lock, 1, memory_order_acquire) != 0;) {
		while (atomic_load_explicit(&qp->sq_lock, memory_order_relaxed) != 0) {
			if (++spins % 1024 == 0)
				sched_yield();
			else
				VB_CPU_RELAX();
		}
	}
}

static inline void vb_sq_unlock(struct vb_qp *qp)
{
	atomic_store_explicit(&qp->sq_lock, 0, memory_order_release);
}

/* The device's doorbell; before RTS it refuses it and the work waits for the modify to RTS (vb_qp.c). */
static inline void vb_qp_ring(struct vb_qp *qp)
{
	(void)hw_qp_ring_sq(qp->hw, qp->sq_cur_post);
	vb_cq_check_overrun(qp->scq);
}
void vb_qp_wr_fill(struct vb_qp *qp);
/* The send queue's producer steps, shared by post_send and the ibv_wr_* builders (vb_post.c). */
void vb_sq_place(struct vb_qp *qp, uint32_t idx, const uint8_t *w, uint32_t size);
/* No room for nreq more work requests besides the posted ones the poll has not taken back. */
static inline bool vb_sq_full(const struct vb_qp *qp, uint32_t nreq)
{
	return qp->sq_head - atomic_load_explicit(&qp->sq_tail, memory_order_acquire) + nreq >= qp->sq_max_post;
}

/* The ctrl segment's fm_ce_se for a WR's send flags (IBV_SEND_*) and the fence it owes. */
static inline uint8_t vb_fm_ce_se(const struct vb_qp *qp, unsigned int flags, uint8_t fence)
{
	return qp->sig_bits | fence | ((flags & IBV_SEND_SIGNALED) ? HW_WQE_CTRL_CQ_UPDATE : 0) |
	       ((flags & IBV_SEND_SOLICITED) ? HW_WQE_CTRL_SOLICITED : 0);
}

/* Records a placed WQE for the poll side and moves the producer counter (as mlx5's post). */
static inline void vb_sq_commit(struct vb_qp *qp, uint32_t idx, uint64_t wr_id, uint8_t wc_op, uint32_t nreq,
				uint32_t size)
{
	qp->sq_wrid[idx] = wr_id;
	qp->sq_wc_op[idx] = wc_op;
	qp->sq_wqe_head[idx] = qp->sq_head + nreq;
	qp->sq_cur_post += (size + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;
}

/* The doorbell record, then the doorbell, after nreq WQEs. */
static inline void vb_sq_doorbell(struct vb_qp *qp, uint32_t nreq)
{
	qp->sq_head += nreq;
	__atomic_store_n(&qp->dbrec[HW_QP_DBR_SND], htobe32(qp->sq_cur_post & HW_QP_COUNTER_MASK), __ATOMIC_RELEASE);
	vb_qp_ring(qp);
}
size_t vb_local_inv_seg(uint8_t *p);
void vb_recv_wqe(uint8_t *p, uint32_t max_gs, const struct ibv_recv_wr *wr);
struct ibv_srq *vb_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *attr);
int vb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int vb_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* Returns an SRQ WQE to the free list (poll, the CQ's lock held). */
void vb_srq_free_wqe(struct vb_srq *srq, uint16_t idx);

/*
 * XRC (vb_xrc.c): domains, the XRC SRQs on their CQ's list (the poll finds
 * a receive's SRQ by the CQE's srqn), XRC receive QPs and ibv_open_qp.
 */
struct ibv_xrcd *vb_open_xrcd(struct ibv_context *c, struct ibv_xrcd_init_attr *a);
int vb_close_xrcd(struct ibv_xrcd *xrcd);
/* The handle belongs to ctx: 0 and *out, or EINVAL. */
int vb_xrcd_checked(struct vb_context *ctx, struct ibv_xrcd *xrcd, struct vb_xrcd **out);
uint64_t vb_xrcd_id(const struct vb_xrcd *x);
void vb_xrcd_use(struct vb_xrcd *x, int delta);
void vb_xrc_srq_attach(struct vb_srq *srq);
void vb_xrc_srq_detach(struct vb_srq *srq);
/* The XRC SRQ numbered srqn completing into cq (the CQ's lock held), or NULL. */
struct vb_srq *vb_xrc_cq_srq(struct vb_cq *cq, uint32_t srqn);

/* Tag matching (vb_tm.c). */
void vb_tm_caps(struct ibv_device_attr_ex *a);
int vb_tm_attr_ok(struct vb_context *ctx, const struct ibv_srq_init_attr_ex *a);
struct vb_tm *vb_tm_new(const struct ibv_srq_init_attr_ex *a, int *err);
struct hw_tm *vb_tm_hw(const struct vb_tm *tm);
void vb_tm_attach(struct vb_srq *srq, struct vb_tm *tm);
void vb_tm_detach(struct vb_srq *srq);
void vb_tm_free(struct vb_tm *tm);
int vb_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad);
/* A CQE with app TM of srq into wc (the whole ibv_wc); the ibv_wc_read_tm_info of one. */
void vb_tm_cqe(struct vb_srq *srq, const struct hw_cqe64 *cqe, struct ibv_wc *wc);
void vb_tm_info(const struct hw_cqe64 *cqe, struct ibv_wc_tm_info *ti);
/* Whether a CQE of srq took one of its ordinary receives (vb_cq_clean gives those back). */
bool vb_tm_cqe_took_wqe(const struct hw_cqe64 *cqe);
/* A CQE of srq's that RESET drops unpolled (vb_cq_clean): a tag it would have freed is freed. */
void vb_tm_cqe_dropped(struct vb_srq *srq, const struct hw_cqe64 *cqe);
struct ibv_qp *vb_xrc_create_recv_qp(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a);
struct ibv_qp *vb_open_qp(struct ibv_context *c, struct ibv_qp_open_attr *a);
int vb_xrc_destroy_qp(struct vb_qp *qp);

/* mlx5's sizes of descriptors (the card's max_wqe_sz_sq / _rq). */
#define VB_MAX_SQ_DESC 960	  /* 15 basic blocks: the ctrl segment's 6-bit ds */

/* Whether the largest WQE fits between BB index idx and the ring's end (it cannot wrap from there). */
static inline bool vb_sq_room(const struct vb_qp *qp, uint32_t idx)
{
	return (size_t)(qp->sq_wqe_cnt - idx) * HW_SEND_WQE_BB >= VB_MAX_SQ_DESC;
}
#define VB_MAX_RQ_DESC 512

/*
 * Indirect mkeys, and mlx5dv_create_qp's RC and UD path after vb_dc.c's
 * checks: the UMR send ops on RC, none elsewhere (vb_mkey.c).
 */
struct mlx5dv_mkey *vb_dv_create_mkey(struct mlx5dv_mkey_init_attr *attr);
int vb_dv_destroy_mkey(struct mlx5dv_mkey *mkey);
struct ibv_qp *vb_dv_create_qp_umr(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr,
				   const struct mlx5dv_qp_init_attr *dv_attr);

/* The ibv_wr_* session steps the UMR builders share (vb_wr.c) and the builders (vb_umr_wr.c). */
bool vb_wr_open(struct vb_qp *qp, uint8_t hw_op, uint8_t wc_op, bool rc_only);
void vb_wr_close(struct vb_qp *qp, __be32 imm);
void vb_wr_fail(struct vb_qp *qp, int err);
/* mlx5dv_wr_raw_wqe (vb_raw_wqe.c). */
void vb_dv_wr_raw_wqe(struct mlx5dv_qp_ex *d, const void *wqe);
/* mlx5dv_wr_memcpy and its largest length (vb_memcpy_wr.c). */
void vb_dv_wr_memcpy(struct mlx5dv_qp_ex *d, uint32_t dest_lkey, uint64_t dest_addr, uint32_t src_lkey,
		     uint64_t src_addr, size_t length);
uint64_t vb_dv_memcpy_max(void);
uint8_t vb_umr_mkc_access(uint32_t access);
void vb_dv_wr_mkey_configure(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *mkey, uint8_t num_setters,
			     struct mlx5dv_mkey_conf_attr *attr);
void vb_dv_wr_set_mkey_access_flags(struct mlx5dv_qp_ex *d, uint32_t access);
void vb_dv_wr_set_mkey_layout_list(struct mlx5dv_qp_ex *d, uint16_t num_sges, const struct ibv_sge *sge);
void vb_dv_wr_set_mkey_layout_interleaved(struct mlx5dv_qp_ex *d, uint32_t repeat_count, uint16_t num_interleaved,
					  const struct mlx5dv_mr_interleaved *data);
/* Signature mkeys (vb_sig.c) and signature pipelining (vb_sig_pipe.c). */
extern const struct vb_dv_sig_ops vb_dv_sig_ops_impl;
void vb_dv_wr_set_mkey_sig_block(struct mlx5dv_qp_ex *d, const struct mlx5dv_sig_block_attr *attr);
bool vb_mkey_setter_ok(struct vb_qp *qp);
void vb_mkey_setter_done(struct vb_qp *qp);
void vb_sig_conf_open(struct vb_qp *qp, bool reset);
bool vb_sig_conf_close(struct vb_qp *qp);
void vb_sig_caps(struct mlx5dv_sig_caps *caps);
int vb_dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info, size_t err_info_size);
int vb_sig_pipe_enable(struct vb_qp *qp);
int vb_sig_pipe_modify(struct vb_qp *qp, const struct ibv_qp_attr *a, int mask);
bool vb_sig_pipe_held(const struct vb_qp *qp);
int vb_dv_cancel_posted_send_wrs(struct mlx5dv_qp_ex *dqp, uint64_t wr_id);
void vb_dv_wr_mr_interleaved(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *mkey, uint32_t access,
			     uint32_t repeat_count, uint16_t num_interleaved, struct mlx5dv_mr_interleaved *data);
void vb_dv_wr_mr_list(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *mkey, uint32_t access, uint16_t num_sges,
		      struct ibv_sge *sge);
/* An interleaved layout's entries checked (*unit: the block's bytes) and written as the PRM's repeat block (vb_umr_wr.c). */
struct hw_umr_repeat_block_seg;
bool vb_umr_interleaved_ok(uint16_t n, const struct mlx5dv_mr_interleaved *data, uint64_t *unit);
void vb_umr_repeat_fill(struct hw_umr_repeat_block_seg *rb, uint32_t unit, uint32_t repeat_count, uint16_t n,
			const struct mlx5dv_mr_interleaved *data);

/* DevX objects: CREATE_TIR over hw_eth (vb_devx_obj.c). */
struct mlx5dv_devx_obj *vb_dv_devx_obj_create(struct ibv_context *c, const void *in, size_t inlen, void *out,
					      size_t outlen);
int vb_dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj);

/* DevX general commands: QUERY_HCA_CAP of the device-memory page (vb_devx_cmd.c). */
int vb_dv_devx_general_cmd(struct ibv_context *c, const void *in, size_t inlen, void *out, size_t outlen);
/*
 * ibv_close_device with DevX queues left: the device lets go of them and of
 * the program's umem, as the kernel destroys a closed file's objects; the
 * handles stay for mlx5dv_devx_obj_destroy / _umem_dereg to free (vb_devx_obj.c).
 */
void vb_devx_close(struct vb_context *ctx);

/* mlx5dv_dr steering over hw_steer (vb_dr.c). */
struct mlx5dv_dr_domain *vb_dv_dr_domain_create(struct ibv_context *c, enum mlx5dv_dr_domain_type type);
int vb_dv_dr_domain_destroy(struct mlx5dv_dr_domain *dmn);
struct mlx5dv_dr_table *vb_dv_dr_table_create(struct mlx5dv_dr_domain *dmn, uint32_t level);
int vb_dv_dr_table_destroy(struct mlx5dv_dr_table *tbl);
struct mlx5dv_dr_matcher *vb_dv_dr_matcher_create(struct mlx5dv_dr_table *tbl, uint16_t priority, uint8_t criteria,
						  struct mlx5dv_flow_match_parameters *mask);
int vb_dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *m);
struct mlx5dv_dr_rule *vb_dv_dr_rule_create(struct mlx5dv_dr_matcher *m, struct mlx5dv_flow_match_parameters *value,
					    size_t n, struct mlx5dv_dr_action **acts);
int vb_dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule);
int vb_dv_dr_qp_dest(struct ibv_qp *qp, bool hold, uint32_t *tirn);
void vb_dv_dr_allow_duplicates(struct mlx5dv_dr_domain *d, bool allow);
/* QUERY_HCA_CAP page type into page (0x1000 bytes, zeroed): 0, EOPNOTSUPP for a page not answered (vb_devx_caps.c). */
int vb_devx_cap_page(struct ibv_context *c, unsigned type, uint8_t *page);
/* QUERY_NIC_VPORT_CONTEXT, QUERY_HCA_VPORT_CONTEXT, QUERY_LAG (vb_devx_vport.c); in has its 16 bytes. */
int vb_devx_query_nic_vport(struct ibv_context *c, const uint8_t *in, uint8_t *out, size_t outlen);
int vb_devx_query_hca_vport(struct ibv_context *c, const uint8_t *in, uint8_t *out, size_t outlen);
int vb_devx_query_lag(uint8_t *out, size_t outlen);
/* The dump in rdma-core's dr_dbg.c text format (vb_dr_dump.c). */
int vb_dv_dr_dump(FILE *f, enum vb_dr_dump_kind kind, void *obj);

/* A completion channel: one eventfd for all its CQs, which get_cq_event scans for the one that fired. */
struct vb_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct vb_cq *cqs;
};

static inline struct vb_channel *vb_channel_of(struct ibv_comp_channel *ch)
{
	return (struct vb_channel *)ch;
}

/* libmlx5's entries (vb_dv.c). */
extern const struct vb_dv_ops vb_dv_ops_impl;

/*
 * Device limits, consistent with what hw enforces and reachable by one
 * program (see docs/STATUS.md; test_verbs_limits creates them all).
 */
#define VB_MAX_QP 4096		  /* hw_qp: QPs one process's device finds by number (QPNs: 16384 per device) */
#define VB_MAX_CQ 4096		  /* as many CQs (CQNs: 16384 per device) */
#define VB_MAX_QP_WR 32768	  /* 1 << HW_QP_LOG_SQ_MAX basic blocks */
#define VB_MAX_SGE 30
#define VB_MAX_CQE 4194303	  /* (1 << HW_CQ_LOG_SIZE_MAX) - 1 */
#define VB_MAX_MR HW_IDS_DEFAULT_SLOTS /* hw_ids: key numbers per device, as a PD's keys are device-wide */
#define VB_MAX_PD HW_IDS_DEFAULT_SLOTS /* hw_ids: domain numbers per device */
/*
 * errno for a device number (QPN, CQN, SRQN) not taken: EACCES when the
 * device's number table is refused as not this user's (another user created
 * it first, or it is open to others: base_private.h, logged naming the file),
 * ENOMEM when the numbers ran out.
 */
static inline int vb_id_errno(enum hw_status st)
{
	return st == HW_ERR_LAYOUT ? EACCES : ENOMEM;
}

/* 0, or ENOMEM when <component>_ALLOC_TYPE asks a placement the rings cannot have (vb_alloc.c). */
int vb_alloc_type_errno(const char *component);

/* The smallest l with 2^l >= n: ring sizes are powers of two, as mlx5 rounds them. */
static inline uint32_t vb_log2_up(uint32_t n)
{
	uint32_t l = 0;

	while ((1u << l) < n)
		l++;
	return l;
}

#define VB_PORT 1
#define VB_PKEY_DEFAULT 0xffff

/*
 * An address on the device's port (an AH's, a QP's primary path): 0, or
 * EINVAL for another port, and on an Ethernet port for no GRH or a source
 * GID index that is not a valid entry, as the kernel refuses them (vb_ah.c).
 */
int vb_ah_attr_ok(const struct vb_device *dev, const struct ibv_ah_attr *attr);

/* The destination MAC of a RoCE destination GID (zero when no port has it). */
void vb_dmac(const uint8_t dgid[16], uint8_t mac[6]);

#endif /* VB_INT_H_ */
