/*
 * vb — the verbs layer's objects: what libibverbs.so.1 hands out, wrapped
 * around the public structs so the inline functions compiled into existing
 * binaries (ctx->ops, verbs_context, ibv_qp_ex, ibv_cq_ex) find what rdma-core
 * would put there, and the library finds its own state next to them.
 *
 * libmlx5.so.1 is a separate shared library that must reach these objects
 * without a second copy of the device: it sees this header only and calls
 * back into libibverbs through the vb_dv_ops table every device carries, so
 * no internal symbol is exported from either library.
 */
#ifndef VB_H_
#define VB_H_

#include <pthread.h>
#include <stdio.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "hw_cq.h"
#include "hw_gid.h"
#include "hw_mem.h"
#include "hw_qp.h"
#include "hw_srq.h"

#define VB_MAGIC_DEVICE 0x76624456u /* "VDbv": refuses a foreign ibv_device */
#define VB_MAGIC_CONTEXT 0x76624358u

struct vb_dv_ops;
struct vb_dv_dcs_ops;
struct vb_dv_devx_ops;

/*
 * One emulated function of this side, as ibv_get_device_list returns it.
 * rdma-core's struct verbs_device is private to it (driver.h is not
 * installed); nothing outside the library reads past the ibv_device, so the
 * wrapper keeps only that, under the same member name.
 */
struct vb_device {
	struct {
		struct ibv_device device;
	} vdev;			  /* ibv_device first: the list hands out &vdev.device */
	uint32_t magic;
	uint32_t func_index;	  /* hw_topology function */
	uint64_t node_guid;	  /* big-endian, as ibv_get_device_guid returns it */
	const struct vb_dv_ops *dv;
	uint32_t func_id;	  /* hw_function.id: the PD owner, and the port's LID source */
	uint16_t lid;		  /* the port inside the device; reported on InfiniBand only */
	bool roce;		  /* an Ethernet port (hw_function.link) */
	struct hw_function fn;	  /* the function's snapshot: its addresses fill the GID table (hw_gid.h) */
	uint8_t mac[6];
	_Atomic uint32_t next_uar_page; /* devx UAR page ids, per device */
};

/* An open device: verbs_context with ibv_context as its last member, then ours. */
struct vb_context {
	struct verbs_context vctx;
	uint32_t magic;
	struct vb_device *dev;
	pthread_mutex_t lock;	  /* control path: object lists, async queue */
	int async_efd;		  /* == vctx.context.async_fd; readable while events queue */
	struct vb_async *async;	  /* queued async events (vb_async.c) */
	struct vb_async *async_tail;
	uint32_t next_umem_id;	  /* devx umem ids, unique per context (under lock) */
	struct vb_umem *umems;	  /* registered umems (under lock) */
	struct mlx5dv_devx_obj *devx_queues; /* DevX CQs, QPs and DCTs (under lock) */
	struct vb_cq *named_cqs;  /* verbs CQs and SRQs a DevX command may name (vb_devx_named.c; under lock) */
	struct vb_srq *named_srqs;
	void *uar;		  /* the CQs' doorbell page mlx5dv_init_obj hands out (cq_uar) */
	void *bell;		  /* the QPs' doorbell page (bf.reg), trapped (vb_bell.c) */
	uint32_t *rqpns;	  /* reserved QP numbers held (vb_dvmisc.c; under lock) */
	uint32_t rqpn_cnt, rqpn_cap;
	uint64_t cmd_ino;	  /* cmd_fd's inode: what names the context to ibv_import_device */
	struct vb_context *next_live; /* vb_import.c's list of open contexts */
};

struct vb_pd {
	struct ibv_pd pd;
	struct hw_pd *hw;
	_Atomic uint32_t users;	  /* MRs, QPs, SRQs on it: dealloc is EBUSY while non-zero */
	bool doca_owned;	  /* a DOCA device's domain (doca_dev_get_pd): that device frees it */
	bool imported;		  /* ibv_import_pd: a handle holding a reference to another's domain */
	struct vb_pd *parent_of;  /* a parent domain (vb_parent.c): the PD it wraps (hw is that PD's) */
	struct ibv_td *td;	  /* a parent domain's thread domain, or NULL */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;	  /* the parent domain's, passed to its allocators */
};

/* A queue's buffer and doorbell record from a parent domain's allocators (vb_qmem_get, vb_int.h). */
struct vb_qmem {
	struct vb_pd *pd;
	void *buf;
	uint32_t *dbrec;
	size_t len;
	uint64_t type; /* MLX5DV_RES_TYPE_* of the buffer */
	bool buf_ours;
	bool dbrec_ours;
};

struct vb_mr {
	struct ibv_mr mr;
	uint32_t key;
};

/*
 * A completion channel is the public struct first (struct vb_channel,
 * vb_int.h): fd is an eventfd the CQs on it signal, refcnt counts them
 * (destroy is EBUSY while non-zero; the CQ code keeps it under the context
 * lock).
 */

/* devx objects: the public struct first, then the table they came from. */
struct vb_uar {
	struct mlx5dv_devx_uar uar;
	const struct vb_dv_ops *dv;
	void *page;		  /* the page-aligned page the program writes */
};

struct vb_umem {
	struct mlx5dv_devx_umem umem;
	const struct vb_dv_ops *dv;
	struct ibv_context *ctx;
	void *addr;
	size_t size;
	uint32_t access;
	_Atomic uint32_t users;	  /* DevX queues placed in it: dereg is EBUSY while non-zero */
	struct vb_umem *next;	  /* the context's umems, found by id (under its lock) */
};

struct vb_qp;
struct vb_raw;
struct vb_srq;
struct vb_tm;
struct vb_xrcd;

/*
 * A CQ: the public ibv_cq_ex (also a plain ibv_cq: its first members are
 * ibv_cq's), the hw ring it polls by owner bit, and what the consumer keeps
 * as an mlx5 driver does (consumer index, arm sequence). The QPs completing
 * into it are listed so a CQE's QP number finds the work request's wr_id.
 */
struct vb_cq {
	struct ibv_cq_ex cqx;
	struct vb_context *ctx;
	struct vb_pd *parent;	  /* the parent domain it was created on (IBV_CQ_INIT_ATTR_MASK_PD), held */
	struct hw_cq *hw;
	struct vb_qmem qmem;	  /* a parent domain's allocators' memory it lives in (buf NULL: none) */
	uint8_t *ring;		  /* CQEs of 1 << cqe_log bytes: the 64-byte CQE is each one's last 64 (vb_cq_cqe) */
	uint32_t *dbrec;
	uint32_t cqn;
	uint32_t log_size;
	uint32_t cqe_log;	  /* 6 or 7: 64 or 128-byte CQEs (mlx5dv_create_cq, MLX5_CQE_SIZE) */
	uint32_t cons_index;	  /* the consumer's index, as an mlx5 driver keeps it */
	uint32_t arm_sn;	  /* moves on at every event taken (get_cq_event) */
	pthread_spinlock_t lock;  /* poll and the QP lists */
	struct vb_qp *sqps;	  /* QPs whose send queue completes here */
	struct vb_qp *rqps;	  /* QPs whose receives complete here */
	struct vb_qp *last;	  /* the QP of the previous CQE (lookup cache) */
	struct vb_srq *xsrqs;	  /* XRC SRQs whose receives complete here, whichever QP took them (vb_xrc.c) */
	_Atomic uint32_t users;	  /* QPs (and XRC SRQs) on it: destroy is EBUSY while non-zero */
	_Atomic int overrun_told; /* IBV_EVENT_CQ_ERR posted (once) */
	const _Atomic uint32_t *overrun; /* the device's overrun flag (hw_cq_overrun_flag) */
	struct hw_waiter waiter;  /* the armed watch of the CQ's event bell; signals the channel's fd */
	uint32_t ev_taken;	  /* events get_cq_event took (waiter.fired counts those fired; channel lock) */
	struct vb_cq *ch_next;	  /* the channel's CQs (channel lock) */
	uint64_t wc_flags;	  /* ibv_create_cq_wc_flags of an extended CQ */
	struct ibv_wc cur;	  /* extended poll: the completion being read */
	uint64_t cur_ts;	  /* and its completion timestamp (device clock, ns) */
	uint32_t cur_flow_tag;	  /* and its flow tag (ibv_wc_read_flow_tag) */
	bool ext;		  /* made by ibv_create_cq_ex (a tag matching SRQ needs one) */
	struct vb_cq *named_next; /* the context's CQs (vb_devx_named.c) */
	bool named;		  /* on that list: false once the context closed */
	struct vb_cq_srq *dsrqs;  /* SRQs whose receives DevX DCTs complete into it (lock) */
};

/* An SRQ a DevX DCT completes receives of into a verbs CQ: the CQ's list, for the poll to find its wr_id. */
struct vb_cq_srq {
	struct vb_srq *srq;
	struct vb_cq_srq *next;
};

/* An SRQ: the hw ring and the driver's free list of WQEs (mlx5's head/tail). */
struct vb_srq {
	struct ibv_srq srq;
	struct vb_context *ctx;
	struct hw_srq *hw;
	struct vb_qmem qmem;	  /* a parent domain's allocators' memory it lives in (buf NULL: none) */
	struct vb_pd *pd;
	uint32_t srqn;
	uint8_t *buf;
	uint32_t *dbrec;
	uint32_t wqe_cnt;	  /* ring size; one WQE always stays free */
	uint32_t log_stride;
	uint32_t max_gs;
	uint32_t max_wr;	  /* what the program may post: wqe_cnt - 1 */
	uint32_t head, tail;	  /* free list: post takes head, poll links freed WQEs at tail */
	uint32_t counter;	  /* WQEs posted (the doorbell record's counter) */
	uint32_t limit;
	pthread_spinlock_t lock;
	uint64_t *wrid;
	_Atomic uint32_t users;	  /* QPs on it */
	struct vb_xrcd *xrcd;	  /* an XRC SRQ: its domain (vb_xrc.c), and the CQ its receives complete into */
	struct vb_cq *xcq;
	struct vb_srq *x_next;	  /* xcq's list (a tag matching SRQ's CQ lists it too) */
	struct vb_tm *tm;	  /* a tag matching SRQ: its list's driver side (vb_tm.c); else NULL */
	struct vb_srq *named_next; /* the context's SRQs (vb_devx_named.c) */
	bool named;		  /* on that list: false once the context closed */
};

struct vb_ah {
	struct ibv_ah ah;
	struct hw_wqe_datagram_seg av; /* copied into each UD WQE */
	bool global;		  /* created with is_global (mlx5dv_map_ah_to_qp needs it) */
	_Atomic uint32_t map_qpn; /* mlx5dv_map_ah_to_qp's QP + 1, 0: none (vb_dcs.c) */
};

struct vb_qp {
	struct ibv_qp_ex qpx;	  /* ibv_qp first: ibv_qp_ex begins with it */
	struct mlx5dv_qp_ex dv;
	struct vb_context *ctx;
	struct hw_qp *hw;
	struct vb_qmem qmem;	  /* a parent domain's allocators' memory it lives in (buf NULL: none) */
	struct vb_cq *scq, *rcq;
	struct vb_srq *srq;
	struct vb_pd *pd;
	struct vb_qp *s_next, *r_next; /* the CQs' lists */
	uint32_t *dbrec;
	/* Send queue, in 64-byte basic blocks (BB), as mlx5 sizes it. */
	uint8_t *sq_buf;
	uint32_t sq_wqe_cnt;	  /* BBs in the ring */
	uint32_t sq_max_post;	  /* work requests outstanding at most */
	uint32_t sq_max_gs;
	uint32_t max_inline;
	uint32_t sq_max_wqe;	  /* bytes of the largest WQE the ring was sized for */
	uint32_t sq_cur_post;	  /* BB producer counter */
	uint32_t sq_head;	  /* work requests posted */
	_Atomic uint32_t sq_tail; /* work requests completed (moved by poll) */
	uint64_t *sq_wrid;	  /* per BB index of a WQE's first BB */
	uint32_t *sq_wqe_head;	  /* sq_head of that WQE */
	uint8_t *sq_wc_op;	  /* its ibv_wc_opcode */
	uint8_t sig_bits;	  /* CQ_UPDATE for sq_sig_all */
	uint8_t fm_cache;	  /* fence owed to the next WQE (after LOCAL_INV) */
	_Atomic uint32_t sq_lock;  /* vb_sq_lock: 1 held */
	/* Receive queue. */
	uint8_t *rq_buf;
	uint32_t rq_wqe_cnt;
	uint32_t rq_shift;
	uint32_t rq_max_post;
	uint32_t rq_max_gs;
	uint32_t rq_head;
	_Atomic uint32_t rq_tail;
	uint64_t *rq_wrid;
	pthread_spinlock_t rq_lock;
	/* Attributes as set (query_qp returns them). */
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	uint8_t dmac[6];	  /* RoCE: the primary path's destination MAC, resolved at the move to RTR */
	bool ex;		  /* created with send_ops_flags: ibv_qp_to_qp_ex hands out qpx */
	bool dv_umr;		  /* mlx5dv_create_qp with the MR_INTERLEAVED / MR_LIST builders */
	bool dv_raw;		  /* and with MLX5DV_QP_EX_WITH_RAW_WQE (vb_raw_wqe.c) */
	bool dv_memcpy;		  /* and with MLX5DV_QP_EX_WITH_MEMCPY (vb_memcpy_wr.c) */
	bool sig_pipe;		  /* MLX5DV_QP_CREATE_SIG_PIPELINING (vb_sig_pipe.c) */
	uint8_t dc_type;	  /* 0, or the mlx5dv_dc_type of an IBV_QPT_DRIVER QP (vb_dc.c) */
	bool block_self_mcast;	  /* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB */
	struct vb_xrcd *xrcd;	  /* an XRC receive QP: its domain (vb_xrc.c) */
	struct vb_qp *open_of;	  /* a handle ibv_open_qp gave: the QP it opened (NULL: this one is the QP) */
	struct vb_raw *raw;	  /* a raw packet QP: its Ethernet queues (vb_raw.c); NULL otherwise */
	_Atomic uint32_t opens;	  /* handles open on this QP: destroy is EBUSY while non-zero */
	_Atomic bool bell_armed;  /* its mlx5dv view was taken: the context's bell page is trapped for it (vb_bell.c) */
	_Atomic uint16_t udp_sport; /* mlx5dv_modify_qp_udp_sport's port; 0: the one the path gives */
	/* ibv_wr_* session state (vb_wr.c) */
	uint32_t wr_cur_post_rb;
	uint8_t wr_fm_rb;
	int wr_err;
	uint32_t wr_nreq;
	bool wr_open;		  /* a WQE is staged and waits for its setters */
	uint8_t wr_setters;	  /* setters it still needs (UD: address and data) */
	uint8_t wr_wc_op;
	uint8_t wr_hw_op;
	uint8_t wr_opmod;	  /* the ctrl segment's opmod (an MMO's kind), 0 for the rest */
	uint64_t wr_wrid;
	__be32 wr_imm;		  /* the open WQE's ctrl immediate */
	uint16_t wr_stream;	  /* the open WQE's DCI stream (mlx5dv_wr_set_dc_addr_stream) */
	uint32_t wr_off;	  /* bytes staged so far */
	struct vb_mkey *wr_mkey;  /* the mkey an open mlx5dv_wr_mkey_configure sets (vb_mkey_wr.c) */
	uint8_t wr_mk_left;	  /* the setters it still expects */
	bool wr_mk_layout;	  /* a layout setter ran */
	bool wr_mk_sig;		  /* the configuration carries a signature segment (vb_sig.c): wr_mk_sig_seg */
	bool wr_mk_sig_set;	  /* mlx5dv_wr_set_mkey_sig_block ran in it */
	_Alignas(8) uint8_t wr_mk_sig_seg[64]; /* struct hw_umr_sig_seg */
	uint8_t *wr_p;		  /* where the open WQE is built: its ring slot, or wr_stage when it could wrap */
	_Alignas(16) uint8_t wr_stage[1024]; /* a WQE that could wrap (segments are 16-byte aligned) */
};

/* What libmlx5.so.1 needs from libibverbs.so.1; filled by libibverbs. */
enum vb_dr_dump_kind {
	VB_DR_DUMP_DOMAIN,
	VB_DR_DUMP_TABLE,
	VB_DR_DUMP_MATCHER,
	VB_DR_DUMP_RULE,
};

struct vb_dv_ops {
	int (*query_device)(struct ibv_context *ctx, struct mlx5dv_context *attrs);
	int (*init_obj)(struct mlx5dv_obj *obj, uint64_t obj_type);
	struct mlx5dv_devx_uar *(*devx_alloc_uar)(struct ibv_context *ctx, uint32_t flags);
	void (*devx_free_uar)(struct mlx5dv_devx_uar *uar);
	struct mlx5dv_devx_umem *(*devx_umem_reg)(struct ibv_context *ctx, void *addr, size_t size,
						  uint32_t access);
	int (*devx_umem_dereg)(struct mlx5dv_devx_umem *umem);
	/* Every entry sets errno / returns an errno value as the mlx5dv function it serves. */
	struct mlx5dv_devx_umem *(*devx_umem_reg_ex)(struct ibv_context *ctx, struct mlx5dv_devx_umem_in *in);
	struct mlx5dv_mkey *(*create_mkey)(struct mlx5dv_mkey_init_attr *attr);
	int (*destroy_mkey)(struct mlx5dv_mkey *mkey);
	struct ibv_qp *(*create_qp)(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
				    struct mlx5dv_qp_init_attr *dv_attr);
	struct ibv_cq_ex *(*create_cq)(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr,
				       struct mlx5dv_cq_init_attr *dv_attr);
	/* DevX objects (vb_devx_obj.c) and mlx5dv_dr steering (vb_dr.c). */
	struct mlx5dv_devx_obj *(*devx_obj_create)(struct ibv_context *ctx, const void *in, size_t inlen,
						   void *out, size_t outlen);
	int (*devx_obj_destroy)(struct mlx5dv_devx_obj *obj);
	struct mlx5dv_dr_domain *(*dr_domain_create)(struct ibv_context *ctx, enum mlx5dv_dr_domain_type type);
	int (*dr_domain_destroy)(struct mlx5dv_dr_domain *dmn);
	struct mlx5dv_dr_table *(*dr_table_create)(struct mlx5dv_dr_domain *dmn, uint32_t level);
	int (*dr_table_destroy)(struct mlx5dv_dr_table *tbl);
	struct mlx5dv_dr_matcher *(*dr_matcher_create)(struct mlx5dv_dr_table *tbl, uint16_t priority,
						       uint8_t criteria, struct mlx5dv_flow_match_parameters *mask);
	int (*dr_matcher_destroy)(struct mlx5dv_dr_matcher *m);
	struct mlx5dv_dr_rule *(*dr_rule_create)(struct mlx5dv_dr_matcher *m, struct mlx5dv_flow_match_parameters *value,
						 size_t n, struct mlx5dv_dr_action **acts);
	int (*dr_rule_destroy)(struct mlx5dv_dr_rule *rule);
	/* A raw packet QP as a rule's destination: its TIR, held (destroy EBUSY) until released. */
	int (*dr_qp_dest)(struct ibv_qp *qp, bool hold, uint32_t *tirn);
	void (*dr_allow_duplicates)(struct mlx5dv_dr_domain *d, bool allow);
	/* mlx5dv_dump_dr_*: obj is a domain, table, matcher or rule as kind says (vb_dr_dump.c). */
	int (*dr_dump)(FILE *f, enum vb_dr_dump_kind kind, void *obj);
	/* mlx5dv flow matchers and flows (vb_dv_flow.c). */
	struct mlx5dv_flow_matcher *(*flow_matcher_create)(struct ibv_context *ctx, struct mlx5dv_flow_matcher_attr *attr);
	int (*flow_matcher_destroy)(struct mlx5dv_flow_matcher *m);
	struct ibv_flow *(*flow_create)(struct mlx5dv_flow_matcher *m, struct mlx5dv_flow_match_parameters *value,
					size_t n, struct mlx5dv_flow_action_attr *acts);
	/* DevX general commands (vb_devx_cmd.c). */
	int (*devx_general_cmd)(struct ibv_context *ctx, const void *in, size_t inlen, void *out, size_t outlen);
	/* Port query, reserved QPNs, UDP source port (vb_dvmisc.c). */
	const struct vb_dv_misc_ops *misc;
	/* Device memory (vb_dm.c). */
	struct ibv_dm *(*alloc_dm)(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr,
				   struct mlx5dv_alloc_dm_attr *mattr);
	/* DCI stream reset, AH-to-QP mapping (vb_dcs.c). */
	const struct vb_dv_dcs_ops *dcs;
	/* Steering actions with a device part, flow counters (vb_dr_act.c, vb_devx_counter.c). */
	const struct vb_dv_act_ops *act;
	/* DevX object modify, EQ numbers (vb_devx_obj.c). */
	const struct vb_dv_devx_ops *devx;
	/* Signature mkeys (vb_sig.c, vb_sig_pipe.c). */
	const struct vb_dv_sig_ops *sig;
	/* Packet pacing entries and schedule elements (vb_pace.c, vb_sched.c). */
	const struct vb_dv_pace_ops *pace;
	/* MEMIC operation addresses (vb_memic.c) and VARs (vb_var.c). */
	void *(*dm_map_op_addr)(struct ibv_dm *dm, uint8_t op);
	const struct vb_dv_var_ops *var;
};

struct vb_dv_var_ops {
	struct mlx5dv_var *(*alloc_var)(struct ibv_context *ctx, uint32_t flags);
	void (*free_var)(struct mlx5dv_var *var);
};

struct vb_dv_devx_ops {
	int (*obj_modify)(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen);
	int (*query_eqn)(struct ibv_context *ctx, uint32_t vector, uint32_t *eqn);
	/* Event channels (vb_devx_evch.c), each as the mlx5dv function it serves. */
	struct mlx5dv_devx_event_channel *(*evch_create)(struct ibv_context *ctx, uint32_t flags);
	void (*evch_destroy)(struct mlx5dv_devx_event_channel *ch);
	int (*evch_subscribe)(struct mlx5dv_devx_event_channel *ch, int fd, struct mlx5dv_devx_obj *obj,
			      uint16_t n, const uint16_t *types, uint64_t cookie);
	ssize_t (*evch_get_event)(struct mlx5dv_devx_event_channel *ch, struct mlx5_ib_uapi_devx_async_event_hdr *ev,
				  size_t len);
};

/* The head of an event channel: the program's handle, then the ops that serve it. */
struct vb_evch_head {
	struct mlx5dv_devx_event_channel pub;
	const struct vb_dv_ops *dv;
};

struct vb_dv_sig_ops {
	int (*mkey_check)(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info, size_t err_info_size);
	int (*cancel_posted_send_wrs)(struct mlx5dv_qp_ex *dqp, uint64_t wr_id);
};

struct vb_dv_act_ops {
	/*
	 * The device part of a REFORMAT (data: the header, len its bytes; the
	 * type in a->reformat_type), MODIFY (data: the PRM actions, len their
	 * bytes) or SAMPLER (data: the mlx5dv_dr_flow_sampler_attr) action into
	 * a->hw: 0 or the errno mlx5dv gives.
	 */
	int (*dr_action_init)(struct mlx5dv_dr_action *a, const void *data, size_t len);
	void (*dr_action_fini)(struct mlx5dv_dr_action *a);
	int (*devx_obj_query)(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out, size_t outlen);
	struct ibv_flow_action *(*flow_action_reformat)(struct ibv_context *ctx, size_t data_sz, void *data,
							 int reformat_type, int ft_type);
	struct ibv_flow_action *(*flow_action_modify)(struct ibv_context *ctx, size_t actions_sz, uint64_t *actions,
						       int ft_type);
};

struct vb_dv_pace_ops {
	struct mlx5dv_pp *(*pp_alloc)(struct ibv_context *ctx, size_t sz, const void *pp_ctx, uint32_t flags);
	void (*pp_free)(struct mlx5dv_pp *pp);
	struct mlx5dv_sched_node *(*node_create)(struct ibv_context *ctx, const struct mlx5dv_sched_attr *attr);
	struct mlx5dv_sched_leaf *(*leaf_create)(struct ibv_context *ctx, const struct mlx5dv_sched_attr *attr);
	int (*node_modify)(struct mlx5dv_sched_node *node, const struct mlx5dv_sched_attr *attr);
	int (*leaf_modify)(struct mlx5dv_sched_leaf *leaf, const struct mlx5dv_sched_attr *attr);
	int (*node_destroy)(struct mlx5dv_sched_node *node);
	int (*leaf_destroy)(struct mlx5dv_sched_leaf *leaf);
	int (*modify_qp_sched_elem)(struct ibv_qp *qp, const struct mlx5dv_sched_leaf *req,
				    const struct mlx5dv_sched_leaf *resp);
};

#define VB_MAGIC_PP 0x76625050u
#define VB_MAGIC_SCHED 0x76625345u

/* A packet-pacing entry (vb_pace.c): the public struct first. */
struct vb_pp {
	struct mlx5dv_pp pp;
	const struct vb_dv_ops *dv;
	uint32_t magic;
	struct vb_pp *live_next;  /* the entries not yet freed (vb_pace.c) */
};

struct hw_pace;

/*
 * A schedule element (vb_sched.c): a node (a TSAR) or a leaf (a queue
 * group), with the bucket its max_avg_bw fills (rate 0 without one) under
 * its parent's. The leaf is the node's layout.
 */
struct mlx5dv_sched_node {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	bool leaf;
	struct ibv_context *ctx;
	struct mlx5dv_sched_node *parent;
	struct hw_pace *pace;
	uint32_t bw_share;
	uint32_t max_avg_bw;	  /* Mbit/s, 0: no limit */
	_Atomic uint32_t users;	  /* elements under it: destroy is EBUSY while non-zero */
	struct mlx5dv_sched_node *live_next; /* the elements not yet destroyed (vb_sched.c) */
};

struct mlx5dv_sched_leaf {
	struct mlx5dv_sched_node se;
};

struct vb_dv_dcs_ops {
	int (*dci_stream_id_reset)(struct ibv_qp *qp, uint16_t stream_id);
	int (*map_ah_to_qp)(struct ibv_ah *ah, uint32_t qp_num);
};

struct vb_dv_misc_ops {
	int (*query_port)(struct ibv_context *ctx, uint32_t port_num, struct mlx5dv_port *info, size_t info_len);
	int (*reserved_qpn_alloc)(struct ibv_context *ctx, uint32_t *qpn);
	int (*reserved_qpn_dealloc)(struct ibv_context *ctx, uint32_t qpn);
	int (*modify_qp_udp_sport)(struct ibv_qp *qp, uint16_t udp_sport);
};

#define VB_MAGIC_MKEY 0x76624d4bu

/* An indirect mkey (vb_mkey.c): the public struct first, then the table it came from. */
struct vb_mkey {
	struct mlx5dv_mkey mkey;
	const struct vb_dv_ops *dv;
	uint32_t magic;
	struct vb_pd *pd;
	struct hw_umr *umr;	  /* its pattern (hw_umr.h); umr->sig for a BLOCK_SIGNATURE key */
	uint32_t cap;		  /* translation entries (max_entries rounded up to 4) */
};

#define VB_MAGIC_DEVX_OBJ 0x7662444fu
#define VB_MAGIC_DR_DOMAIN 0x76624444u
#define VB_MAGIC_DR_TABLE 0x76624454u
#define VB_MAGIC_DR_MATCHER 0x7662444du
#define VB_MAGIC_DR_RULE 0x76624452u
#define VB_MAGIC_DR_ACTION 0x76624441u
#define VB_MAGIC_FLOW_MATCHER 0x7662464du

/* An mlx5dv flow matcher: a matcher of the kernel's root table of its direction (vb_flow.c). */
struct mlx5dv_flow_matcher {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	struct ibv_context *ctx;
	bool egress;
	uint8_t criteria;
	uint8_t mask[64];	  /* the outer part */
	struct hw_steer_matcher *hw;
	_Atomic uint32_t users;	  /* flows: destroy is EBUSY while non-zero */
};

/*
 * rdma-core keeps the DevX object and the mlx5dv_dr objects private to
 * libmlx5 (the public header only declares them); these are softdpu's.
 */
enum vb_devx_kind {
	VB_DEVX_TIR = 1,
	VB_DEVX_FLOW_COUNTER,
	VB_DEVX_CQ,		  /* an engine CQ over the program's umem (vb_devx_cq.c) */
	VB_DEVX_QP,		  /* an engine QP over the program's umem (vb_devx_qp.c) */
	VB_DEVX_MKEY,		  /* a key of the device's table (vb_devx_mkey.c) */
	VB_DEVX_DCT,		  /* an engine DCT (vb_devx_dct.c) */
	VB_DEVX_RMP,		  /* an engine SRQ over the program's umem (vb_devx_rmp.c) */
};

struct mlx5dv_devx_obj {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	enum vb_devx_kind kind;
	struct ibv_context *ctx;
	uint32_t object_id;	  /* a TIR's tirn, a flow counter's id, a CQ's cqn, a QP's qpn */
	void *hw;		  /* FLOW_COUNTER: its hw_counter */
	_Atomic uint32_t users;	  /* FLOW_COUNTER: actions naming it (destroy EBUSY) */
	void *priv;		  /* CQ, QP: the kind's state; NULL once its context was closed */
	struct mlx5dv_devx_obj *next; /* the context's DevX queues, found by number (under its lock) */
};

struct hw_steer_domain;
struct hw_steer_table;
struct hw_steer_matcher;
struct hw_steer_rule;

/* The fte_match_param a matcher's mask and a rule's value are laid out in: seven 64-byte parts. */
#define VB_DR_MATCH_PART 64	  /* outer headers first: hw_steer's layout */
#define VB_DR_MATCH_PARTS 7
#define VB_DR_MATCH_SZ (VB_DR_MATCH_PART * VB_DR_MATCH_PARTS)

struct mlx5dv_dr_domain {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	enum mlx5dv_dr_domain_type type;
	struct ibv_context *ctx;
	struct hw_steer_domain *hw;
	_Atomic uint32_t users;	  /* tables: destroy is EBUSY while non-zero */
	/* The objects under it, in creation order, for the dump (vb_dr_dump.c); lock guards every list below. */
	pthread_mutex_t lock;
	struct mlx5dv_dr_table *tables;
	bool no_duplicates;	  /* mlx5dv_dr_domain_allow_duplicate_rules(false) */
};

struct mlx5dv_dr_table {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	uint32_t level;
	struct mlx5dv_dr_domain *dmn;
	struct hw_steer_table *hw;
	_Atomic uint32_t users;	  /* matchers and dest_table actions */
	struct mlx5dv_dr_table *next;
	struct mlx5dv_dr_matcher *matchers;
};

struct mlx5dv_dr_matcher {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	uint8_t criteria;	  /* match_criteria_enable */
	uint16_t priority;
	struct mlx5dv_dr_table *tbl;
	struct mlx5dv_dr_matcher *next;
	struct mlx5dv_dr_rule *rules;
	struct hw_steer_matcher *hw;
	_Atomic uint32_t users;	  /* rules */
	uint8_t mask[VB_DR_MATCH_PART]; /* the outer mask a rule's value must stay within */
};

/*
 * Actions hold no device state (drop and default-miss have no context to
 * reach libibverbs by): libmlx5 makes and frees them, rule creation reads them.
 */
enum vb_dr_action_type {
	VB_DR_ACT_DROP,
	VB_DR_ACT_MISS,		  /* default miss */
	VB_DR_ACT_TIR,
	VB_DR_ACT_TABLE,
	VB_DR_ACT_WIRE,		  /* an FDB's uplink vport */
	VB_DR_ACT_QP,		  /* a raw packet QP's receive queue, through its TIR */
	VB_DR_ACT_PUSH_VLAN,
	VB_DR_ACT_POP_VLAN,
	VB_DR_ACT_TAG,		  /* the receive CQE's flow tag (NIC_RX) */
	VB_DR_ACT_DESTS,	  /* a dest array: a copy of the frame to each of dests */
	VB_DR_ACT_REFORMAT,	  /* packet reformat: hw a hw_reformat */
	VB_DR_ACT_MODIFY,	  /* header modify: hw a hw_modhdr */
	VB_DR_ACT_COUNTER,	  /* a DevX flow counter: devx, held */
	VB_DR_ACT_SAMPLER,	  /* hw a hw_steer_sampler; tbl its table, dests its sample actions, held */
};

#define VB_DR_DESTS_MAX 16 /* hw_steer's HW_STEER_DESTS_MAX */

struct mlx5dv_dr_action {
	uint32_t magic;
	enum vb_dr_action_type type;
	uint32_t tirn;		  /* TIR, QP */
	struct mlx5dv_dr_table *tbl; /* TABLE: counted in its users */
	const struct mlx5dv_dr_domain *dmn; /* WIRE, PUSH_VLAN: compared only, never read */
	struct ibv_qp *qp;	  /* QP: held until the action goes */
	const struct vb_dv_ops *dv; /* QP: the ops that release it */
	uint8_t vlan[4];	  /* PUSH_VLAN: TPID and TCI as the frame has them */
	uint32_t tag;		  /* TAG: 24 bits */
	size_t n_dests;		  /* DESTS: each counts the array in its users */
	struct mlx5dv_dr_action *dests[VB_DR_DESTS_MAX];
	_Atomic uint32_t users;	  /* rules: destroy is EBUSY while non-zero */
	int reformat_type;	  /* REFORMAT: the mlx5dv type */
	void *hw;		  /* REFORMAT, MODIFY, SAMPLER: made by vb_dv_act_ops */
	struct mlx5dv_devx_obj *devx; /* COUNTER */
};

/* What a reformat, modify, counter or sampler action holds, let go at its destroy (libmlx5: vb_mlx5_dr_act.c). */
void vb_mlx5_dr_act_release(struct mlx5dv_dr_action *a);

#define VB_DR_MAX_ACTS 8 /* hw_steer's limit per rule */
#define VB_DR_LOG_RULES_MAX 24 /* log_max_ft_size of the flow-table caps page */

struct mlx5dv_dr_rule {
	const struct vb_dv_ops *dv;
	uint32_t magic;
	struct mlx5dv_dr_rule *next;
	uint8_t value[VB_DR_MATCH_PART]; /* the outer value, as matched (under the mask) */
	struct mlx5dv_dr_matcher *matcher;
	size_t n_acts;
	struct mlx5dv_dr_action *acts[VB_DR_MAX_ACTS]; /* each counts the rule in its users */
	struct hw_steer_rule *hw;
};

/* Posts an async event on the context's queue (vb_async.c); 0 or an errno value. */
int vb_async_post(struct vb_context *ctx, const struct ibv_async_event *event);
/* Its object destroyed: the events naming it not yet taken are dropped (vb_async.c). */
void vb_async_forget(struct vb_context *ctx, const void *obj);

/* Ours, or NULL: the device lists hand out vb_devices only. */
static inline struct vb_device *vb_dev_of(struct ibv_device *d)
{
	struct vb_device *dev = (struct vb_device *)d;

	return d != NULL && dev->magic == VB_MAGIC_DEVICE ? dev : NULL;
}

static inline struct vb_context *vb_ctx(struct ibv_context *c)
{
	return (struct vb_context *)((char *)c - __builtin_offsetof(struct vb_context, vctx.context));
}

/* The context of c, or NULL when c is NULL or not an extended context of ours. */
static inline struct vb_context *vb_ctx_checked(struct ibv_context *c)
{
	struct vb_context *ctx;

	if (c == NULL || c->abi_compat != __VERBS_ABI_IS_EXTENDED)
		return NULL;
	ctx = vb_ctx(c);
	return ctx->magic == VB_MAGIC_CONTEXT ? ctx : NULL;
}

static inline struct vb_pd *vb_pd_of(struct ibv_pd *p)
{
	return (struct vb_pd *)p;
}

static inline struct vb_cq *vb_cq_of(struct ibv_cq *c)
{
	return (struct vb_cq *)c;
}

/* The 64-byte CQE at index i (masked here): a 128-byte CQE's is its last 64 bytes, as mlx5's get_cqe. */
static inline struct hw_cqe64 *vb_cq_cqe(const struct vb_cq *cq, uint32_t i)
{
	size_t at = (size_t)(i & ((1u << cq->log_size) - 1)) << cq->cqe_log;

	return (struct hw_cqe64 *)(void *)(cq->ring + at + ((1u << cq->cqe_log) - sizeof(struct hw_cqe64)));
}

static inline struct vb_qp *vb_qp_of(struct ibv_qp *q)
{
	return (struct vb_qp *)q;
}

static inline struct vb_srq *vb_srq_of(struct ibv_srq *s)
{
	return (struct vb_srq *)s;
}

#endif /* VB_H_ */
