/*
 * What the inline functions of verbs.h and mlx5dv.h do, printed line by
 * line: built once against rdma-core v44's headers and once against ours
 * (tools/check-verbs-abi.py), the two outputs must be equal.
 *
 * Pure helpers run on chosen inputs and their results (or the bytes they
 * write) are printed. Dispatching helpers run against a fake device whose
 * every operation records its name and arguments, and whose extended
 * context is full, empty, truncated (small sz) or absent, so the fallbacks
 * (errno, return codes, calls to the exported functions) show too. The
 * exported functions a fallback calls are defined here as recorders as well:
 * the program links no verbs library.
 */
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void hex(const char *what, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;

	printf("%s ", what);
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	putchar('\n');
}

/* ---- objects every recorder hands out ---- */
static struct ibv_mr fake_mr;
static struct ibv_pd fake_pd;
static struct ibv_cq fake_cq;
static struct ibv_cq_ex fake_cq_ex;
static struct ibv_qp fake_qp;
static struct ibv_srq fake_srq;
static struct ibv_wq fake_wq;
static struct ibv_xrcd fake_xrcd;
static struct ibv_flow fake_flow;
static struct ibv_flow_action fake_action;
static struct ibv_dm fake_dm;
static struct ibv_td fake_td;
static struct ibv_mw fake_mw;
static struct ibv_rwq_ind_table fake_ind;
static struct ibv_counters fake_counters;
static int op_ret = 7; /* what int-returning operations answer */

/* ---- exported functions the inline fallbacks call ---- */
int(ibv_query_port)(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr)
{
	(void)context;
	say("  export ibv_query_port port %u", port_num);
	memset(port_attr, 0x11, 8);
	return 3;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	(void)context;
	say("  export ibv_query_device");
	device_attr->max_qp = 99;
	return 4;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	(void)context;
	(void)entry;
	say("  export _ibv_query_gid_ex %u %u %u size %zu", port_num, gid_index, flags, entry_size);
	return 5;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	(void)context;
	(void)entries;
	say("  export _ibv_query_gid_table %zu %u size %zu", max_entries, flags, entry_size);
	return 6;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	(void)pd;
	(void)addr;
	say("  export ibv_reg_mr len %zu access %x", length, access);
	return &fake_mr;
}

struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	(void)pd;
	(void)addr;
	say("  export ibv_reg_mr_iova len %zu iova %llx access %x", length, (unsigned long long)iova, access);
	return &fake_mr;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	(void)pd;
	say("  export ibv_reg_mr_iova2 len %zu iova-is-addr %d access %x", length,
	    iova == (uintptr_t)addr, access);
	return &fake_mr;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	(void)pd;
	say("  export ibv_create_srq max_wr %u", srq_init_attr->attr.max_wr);
	return &fake_srq;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	(void)pd;
	say("  export ibv_create_qp type %d", qp_init_attr->qp_type);
	return &fake_qp;
}

int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num, struct mlx5dv_port *info, size_t info_len)
{
	(void)context;
	(void)info;
	say("  export _mlx5dv_query_port %u size %zu", port_num, info_len);
	return 8;
}

int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info, size_t err_info_size)
{
	(void)mkey;
	(void)err_info;
	say("  export _mlx5dv_mkey_check size %zu", err_info_size);
	return 9;
}

/* ---- the provider's operations ---- */
#define REC_INT(name, ...)                                                                         \
	static int rec_##name(__VA_ARGS__)                                                         \
	{                                                                                          \
		say("  op " #name);                                                                \
		return op_ret;                                                                     \
	}
#define REC_PTR(name, obj, ...)                                                                    \
	static void *rec_##name(__VA_ARGS__)                                                       \
	{                                                                                          \
		say("  op " #name);                                                                \
		return obj;                                                                        \
	}

#pragma GCC diagnostic ignored "-Wunused-parameter"
REC_INT(poll_cq, struct ibv_cq *cq, int n, struct ibv_wc *wc)
REC_INT(req_notify_cq, struct ibv_cq *cq, int solicited)
REC_INT(post_send, struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
REC_INT(post_recv, struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
REC_INT(post_srq_recv, struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
REC_INT(bind_mw, struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
REC_INT(dealloc_mw, struct ibv_mw *mw)
REC_INT(query_port, struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len)
REC_INT(advise_mr, struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg,
	uint32_t n)
REC_INT(read_counters, struct ibv_counters *c, uint64_t *v, uint32_t n, uint32_t flags)
REC_INT(attach_counters_point_flow, struct ibv_counters *c, struct ibv_counter_attach_attr *a,
	struct ibv_flow *f)
REC_INT(destroy_counters, struct ibv_counters *c)
REC_INT(free_dm, struct ibv_dm *dm)
REC_INT(modify_flow_action_esp, struct ibv_flow_action *a, struct ibv_flow_action_esp_attr *esp)
REC_INT(destroy_flow_action, struct ibv_flow_action *a)
REC_INT(modify_qp_rate_limit, struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *a)
REC_INT(dealloc_td, struct ibv_td *td)
REC_INT(modify_cq, struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
REC_INT(post_srq_ops, struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad)
REC_INT(destroy_rwq_ind_table, struct ibv_rwq_ind_table *t)
REC_INT(destroy_wq, struct ibv_wq *wq)
REC_INT(modify_wq, struct ibv_wq *wq, struct ibv_wq_attr *a)
REC_INT(query_rt_values, struct ibv_context *c, struct ibv_values_ex *v)
REC_INT(query_device_ex, struct ibv_context *c, const struct ibv_query_device_ex_input *in,
	struct ibv_device_attr_ex *a, size_t len)
REC_INT(destroy_flow, struct ibv_flow *f)
REC_INT(get_srq_num, struct ibv_srq *srq, uint32_t *num)
REC_INT(close_xrcd, struct ibv_xrcd *x)
REC_INT(post_wq_recv, struct ibv_wq *wq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
REC_INT(memcpy_to_dm, struct ibv_dm *dm, uint64_t off, const void *src, size_t len)
REC_INT(memcpy_from_dm, void *dst, struct ibv_dm *dm, uint64_t off, size_t len)
REC_PTR(alloc_mw, &fake_mw, struct ibv_pd *pd, enum ibv_mw_type t)
REC_PTR(alloc_null_mr, &fake_mr, struct ibv_pd *pd)
REC_PTR(create_counters, &fake_counters, struct ibv_context *c, struct ibv_counters_init_attr *a)
REC_PTR(reg_dm_mr, &fake_mr, struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off, size_t len, unsigned int acc)
REC_PTR(alloc_dm, &fake_dm, struct ibv_context *c, struct ibv_alloc_dm_attr *a)
REC_PTR(create_flow_action_esp, &fake_action, struct ibv_context *c, struct ibv_flow_action_esp_attr *a)
REC_PTR(alloc_parent_domain, &fake_pd, struct ibv_context *c, struct ibv_parent_domain_init_attr *a)
REC_PTR(alloc_td, &fake_td, struct ibv_context *c, struct ibv_td_init_attr *a)
REC_PTR(create_rwq_ind_table, &fake_ind, struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a)
REC_PTR(create_wq, &fake_wq, struct ibv_context *c, struct ibv_wq_init_attr *a)
REC_PTR(create_cq_ex, &fake_cq_ex, struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
REC_PTR(create_flow, &fake_flow, struct ibv_qp *qp, struct ibv_flow_attr *a)
REC_PTR(open_qp, &fake_qp, struct ibv_context *c, struct ibv_qp_open_attr *a)
REC_PTR(create_qp_ex, &fake_qp, struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
REC_PTR(create_srq_ex, &fake_srq, struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
REC_PTR(open_xrcd, &fake_xrcd, struct ibv_context *c, struct ibv_xrcd_init_attr *a)

/* ibv_qp_ex, ibv_cq_ex and mlx5dv_qp_ex builders: one recorder per member. */
#define QPX(name, ...)                                                                             \
	static void qpx_##name(struct ibv_qp_ex *qp, ##__VA_ARGS__)                                \
	{                                                                                          \
		say("  qp_ex " #name " wr_id %llu", (unsigned long long)qp->wr_id);                \
	}
QPX(atomic_cmp_swp, uint32_t rkey, uint64_t ra, uint64_t c, uint64_t s)
QPX(atomic_fetch_add, uint32_t rkey, uint64_t ra, uint64_t add)
QPX(bind_mw, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *bi)
QPX(local_inv, uint32_t rkey)
QPX(rdma_read, uint32_t rkey, uint64_t ra)
QPX(rdma_write, uint32_t rkey, uint64_t ra)
QPX(rdma_write_imm, uint32_t rkey, uint64_t ra, __be32 imm)
QPX(send)
QPX(send_imm, __be32 imm)
QPX(send_inv, uint32_t rkey)
QPX(send_tso, void *hdr, uint16_t hdr_sz, uint16_t mss)
QPX(set_ud_addr, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
QPX(set_xrc_srqn, uint32_t srqn)
QPX(set_inline_data, void *addr, size_t len)
QPX(set_inline_data_list, size_t n, const struct ibv_data_buf *bufs)
QPX(set_sge, uint32_t lkey, uint64_t addr, uint32_t len)
QPX(set_sge_list, size_t n, const struct ibv_sge *sg)
QPX(start)
QPX(abort)
QPX(atomic_write, uint32_t rkey, uint64_t ra, const void *data)
static int qpx_complete(struct ibv_qp_ex *qp)
{
	say("  qp_ex complete wr_id %llu", (unsigned long long)qp->wr_id);
	return 12;
}

#define CQX(ret, name, val)                                                                        \
	static ret cqx_##name(struct ibv_cq_ex *cq)                                                \
	{                                                                                          \
		say("  cq_ex " #name);                                                             \
		return (ret)(val);                                                                 \
	}
CQX(int, next_poll, 13)
CQX(enum ibv_wc_opcode, read_opcode, IBV_WC_RDMA_READ)
CQX(uint32_t, read_vendor_err, 14)
CQX(uint32_t, read_byte_len, 15)
CQX(__be32, read_imm_data, 16)
CQX(uint32_t, read_qp_num, 17)
CQX(uint32_t, read_src_qp, 18)
CQX(unsigned int, read_wc_flags, 19)
CQX(uint32_t, read_slid, 20)
CQX(uint8_t, read_sl, 21)
CQX(uint8_t, read_dlid_path_bits, 22)
CQX(uint64_t, read_completion_ts, 23)
CQX(uint16_t, read_cvlan, 24)
CQX(uint32_t, read_flow_tag, 25)
CQX(uint64_t, read_completion_wallclock_ns, 26)
static int cqx_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	say("  cq_ex start_poll mask %u", attr->comp_mask);
	return 27;
}
static void cqx_end_poll(struct ibv_cq_ex *cq)
{
	say("  cq_ex end_poll");
}
static void cqx_read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm)
{
	say("  cq_ex read_tm_info");
	tm->tag = 28;
}

#define MQPX(name, ...)                                                                            \
	static void mqpx_##name(struct mlx5dv_qp_ex *mqp, ##__VA_ARGS__)                           \
	{                                                                                          \
		say("  mlx5dv_qp_ex " #name);                                                      \
	}
MQPX(set_dc_addr, struct ibv_ah *ah, uint32_t dctn, uint64_t key)
MQPX(set_dc_addr_stream, struct ibv_ah *ah, uint32_t dctn, uint64_t key, uint16_t stream)
MQPX(mr_interleaved, struct mlx5dv_mkey *mk, uint32_t acc, uint32_t rep, uint16_t n,
     struct mlx5dv_mr_interleaved *d)
MQPX(mr_list, struct mlx5dv_mkey *mk, uint32_t acc, uint16_t n, struct ibv_sge *sge)
MQPX(mkey_configure, struct mlx5dv_mkey *mk, uint8_t n, struct mlx5dv_mkey_conf_attr *a)
MQPX(set_mkey_access_flags, uint32_t acc)
MQPX(set_mkey_layout_list, uint16_t n, const struct ibv_sge *sge)
MQPX(set_mkey_layout_interleaved, uint32_t rep, uint16_t n, const struct mlx5dv_mr_interleaved *d)
MQPX(set_mkey_sig_block, const struct mlx5dv_sig_block_attr *a)
MQPX(set_mkey_crypto, const struct mlx5dv_crypto_attr *a)
MQPX(memcpy, uint32_t dl, uint64_t da, uint32_t sl, uint64_t sa, size_t len)
MQPX(raw_wqe, const void *wqe)
#pragma GCC diagnostic warning "-Wunused-parameter"

/* ---- the fake device ---- */
static struct verbs_context vctx;
static struct ibv_context *ctx = &vctx.context;

enum { MODE_FULL, MODE_NO_OPS, MODE_SHORT, MODE_LEGACY, MODE_COUNT };
static const char *const mode_names[] = { "full", "no-ops", "short-sz", "legacy" };

static void fake_device(int mode)
{
	memset(&vctx, 0, sizeof(vctx));
	ctx->ops.poll_cq = rec_poll_cq;
	ctx->ops.req_notify_cq = rec_req_notify_cq;
	ctx->ops.post_send = rec_post_send;
	ctx->ops.post_recv = rec_post_recv;
	ctx->ops.post_srq_recv = rec_post_srq_recv;
	ctx->ops.bind_mw = rec_bind_mw;
	ctx->ops.dealloc_mw = rec_dealloc_mw;
	if (mode != MODE_NO_OPS)
		ctx->ops.alloc_mw = (struct ibv_mw * (*)(struct ibv_pd *, enum ibv_mw_type)) rec_alloc_mw;
	ctx->abi_compat = mode == MODE_LEGACY ? NULL : __VERBS_ABI_IS_EXTENDED;
	/* short: a provider built when verbs_context ended at query_device_ex */
	vctx.sz = mode == MODE_SHORT ? sizeof(vctx) - offsetof(struct verbs_context, query_device_ex)
				     : sizeof(vctx);
	if (mode == MODE_NO_OPS)
		return;
#define SET(member, fn) vctx.member = (__typeof__(vctx.member))(void *)fn
	SET(query_port, rec_query_port);
	SET(advise_mr, rec_advise_mr);
	SET(alloc_null_mr, rec_alloc_null_mr);
	SET(read_counters, rec_read_counters);
	SET(attach_counters_point_flow, rec_attach_counters_point_flow);
	SET(create_counters, rec_create_counters);
	SET(destroy_counters, rec_destroy_counters);
	SET(reg_dm_mr, rec_reg_dm_mr);
	SET(alloc_dm, rec_alloc_dm);
	SET(free_dm, rec_free_dm);
	SET(modify_flow_action_esp, rec_modify_flow_action_esp);
	SET(destroy_flow_action, rec_destroy_flow_action);
	SET(create_flow_action_esp, rec_create_flow_action_esp);
	SET(modify_qp_rate_limit, rec_modify_qp_rate_limit);
	SET(alloc_parent_domain, rec_alloc_parent_domain);
	SET(dealloc_td, rec_dealloc_td);
	SET(alloc_td, rec_alloc_td);
	SET(modify_cq, rec_modify_cq);
	SET(post_srq_ops, rec_post_srq_ops);
	SET(destroy_rwq_ind_table, rec_destroy_rwq_ind_table);
	SET(create_rwq_ind_table, rec_create_rwq_ind_table);
	SET(destroy_wq, rec_destroy_wq);
	SET(modify_wq, rec_modify_wq);
	SET(create_wq, rec_create_wq);
	SET(query_rt_values, rec_query_rt_values);
	SET(create_cq_ex, rec_create_cq_ex);
	SET(query_device_ex, rec_query_device_ex);
	SET(ibv_destroy_flow, rec_destroy_flow);
	SET(ibv_create_flow, rec_create_flow);
	SET(open_qp, rec_open_qp);
	SET(create_qp_ex, rec_create_qp_ex);
	SET(get_srq_num, rec_get_srq_num);
	SET(create_srq_ex, rec_create_srq_ex);
	SET(open_xrcd, rec_open_xrcd);
	SET(close_xrcd, rec_close_xrcd);
#undef SET
}

static void ptr_result(const char *call, const void *p)
{
	say("%s -> %s errno %d", call, p ? "object" : "NULL", p ? 0 : errno);
}

#define CALL_INT(expr) say(#expr " -> %d", (int)(expr))
#define CALL_PTR(expr)                                                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		ptr_result(#expr, (expr));                                                         \
	} while (0)

static void objects_on_fake_device(void)
{
	fake_mr.context = fake_pd.context = fake_cq.context = fake_qp.context = ctx;
	fake_srq.context = fake_wq.context = fake_xrcd.context = fake_flow.context = ctx;
	fake_action.context = fake_dm.context = fake_td.context = fake_mw.context = ctx;
	fake_ind.context = fake_counters.context = ctx;
	fake_mr.pd = &fake_pd;
	fake_mw.pd = &fake_pd;
	fake_mw.type = IBV_MW_TYPE_1;
	fake_dm.memcpy_to_dm = rec_memcpy_to_dm;
	fake_dm.memcpy_from_dm = rec_memcpy_from_dm;
	fake_wq.post_recv = rec_post_wq_recv;
}

static void verbs_dispatch(int mode)
{
	struct ibv_port_attr port;
	struct ibv_gid_entry gid;
	struct ibv_device_attr_ex dattr;
	struct ibv_query_device_ex_input in;
	struct ibv_srq_init_attr_ex srq_attr;
	struct ibv_qp_init_attr_ex qp_attr;
	struct ibv_wq_init_attr wq_attr;
	struct ibv_mw_bind bind;
	struct ibv_ops_wr op, *bad_op = NULL;
	unsigned int runtime_access = IBV_ACCESS_LOCAL_WRITE;
	char buf[64];
	int errs[] = { 0, EOPNOTSUPP, ENOSYS, EINVAL };

	say("== mode %s", mode_names[mode]);
	fake_device(mode);
	objects_on_fake_device();
	say("verbs_get_ctx -> %s", verbs_get_ctx(ctx) == &vctx ? "vctx" : "NULL");

	memset(&port, 0, sizeof(port));
	CALL_INT(ibv_query_port(ctx, 1, &port));
	hex("port", &port, sizeof(port));
	CALL_INT(ibv_query_gid_ex(ctx, 1, 2, &gid, 0));
	CALL_INT(ibv_query_gid_table(ctx, &gid, 1, 0));
	CALL_PTR(ibv_create_flow(&fake_qp, NULL));
	CALL_INT(ibv_destroy_flow(&fake_flow));
	CALL_PTR(ibv_create_flow_action_esp(ctx, NULL));
	CALL_INT(ibv_modify_flow_action_esp(&fake_action, NULL));
	CALL_INT(ibv_destroy_flow_action(&fake_action));
	CALL_PTR(ibv_open_xrcd(ctx, NULL));
	if (mode == MODE_FULL)
		CALL_INT(ibv_close_xrcd(&fake_xrcd));

	CALL_PTR(ibv_reg_mr(&fake_pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	CALL_PTR(ibv_reg_mr(&fake_pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING));
	CALL_PTR(ibv_reg_mr(&fake_pd, buf, sizeof(buf), runtime_access));
	CALL_PTR(ibv_reg_mr_iova(&fake_pd, buf, sizeof(buf), 0x1000, IBV_ACCESS_REMOTE_READ));
	CALL_PTR(ibv_reg_mr_iova(&fake_pd, buf, sizeof(buf), 0x1000, IBV_ACCESS_RELAXED_ORDERING));
	CALL_PTR(ibv_reg_mr_iova(&fake_pd, buf, sizeof(buf), 0x1000, runtime_access));

	CALL_PTR(ibv_alloc_mw(&fake_pd, IBV_MW_TYPE_1));
	CALL_INT(ibv_dealloc_mw(&fake_mw));
	memset(&bind, 0, sizeof(bind));
	CALL_INT(ibv_bind_mw(&fake_qp, &fake_mw, &bind));
	bind.bind_info.addr = 1;
	CALL_INT(ibv_bind_mw(&fake_qp, &fake_mw, &bind));
	bind.bind_info.mr = &fake_mr;
	CALL_INT(ibv_bind_mw(&fake_qp, &fake_mw, &bind));
	fake_mr.pd = NULL;
	CALL_INT(ibv_bind_mw(&fake_qp, &fake_mw, &bind));
	fake_mr.pd = &fake_pd;
	fake_mw.type = IBV_MW_TYPE_2;
	CALL_INT(ibv_bind_mw(&fake_qp, &fake_mw, &bind));
	fake_mw.type = IBV_MW_TYPE_1;

	CALL_INT(ibv_advise_mr(&fake_pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, NULL, 0));
	CALL_PTR(ibv_alloc_dm(ctx, NULL));
	CALL_INT(ibv_free_dm(&fake_dm));
	CALL_INT(ibv_memcpy_to_dm(&fake_dm, 0, buf, 8));
	CALL_INT(ibv_memcpy_from_dm(buf, &fake_dm, 0, 8));
	CALL_PTR(ibv_alloc_null_mr(&fake_pd));
	CALL_PTR(ibv_reg_dm_mr(&fake_pd, &fake_dm, 0, 8, 0));
	CALL_PTR(ibv_create_cq_ex(ctx, NULL));
	CALL_INT(ibv_poll_cq(&fake_cq, 1, NULL));
	CALL_INT(ibv_req_notify_cq(&fake_cq, 1));
	CALL_INT(ibv_modify_cq(&fake_cq, NULL));

	memset(&srq_attr, 0, sizeof(srq_attr));
	srq_attr.attr.max_wr = 31;
	for (uint32_t mask = 0; mask < 8; mask++) {
		for (int type = IBV_SRQT_BASIC; type <= IBV_SRQT_XRC; type++) {
			srq_attr.comp_mask = mask;
			srq_attr.srq_type = (enum ibv_srq_type)type;
			say("srq mask %u type %d", mask, type);
			CALL_PTR(ibv_create_srq_ex(ctx, &srq_attr));
		}
	}
	CALL_INT(ibv_get_srq_num(&fake_srq, NULL));
	CALL_INT(ibv_post_srq_recv(&fake_srq, NULL, NULL));
	memset(&op, 0, sizeof(op));
	CALL_INT(ibv_post_srq_ops(&fake_srq, &op, &bad_op));
	say("bad_op is op: %d", bad_op == &op);

	memset(&qp_attr, 0, sizeof(qp_attr));
	qp_attr.qp_type = IBV_QPT_UD;
	for (uint32_t mask = 0; mask < 4; mask++) {
		qp_attr.comp_mask = mask;
		say("qp mask %u", mask);
		CALL_PTR(ibv_create_qp_ex(ctx, &qp_attr));
	}
	CALL_PTR(ibv_alloc_td(ctx, NULL));
	CALL_INT(ibv_dealloc_td(&fake_td));
	CALL_PTR(ibv_alloc_parent_domain(ctx, NULL));
	CALL_INT(ibv_query_rt_values_ex(ctx, NULL));

	memset(&in, 0, sizeof(in));
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		op_ret = errs[i];
		memset(&dattr, 0x5a, sizeof(dattr));
		say("query_device_ex op answers %d", op_ret);
		CALL_INT(ibv_query_device_ex(ctx, &in, &dattr));
		CALL_INT(ibv_query_device_ex(ctx, NULL, &dattr));
		hex("attr_ex", &dattr, sizeof(dattr));
	}
	op_ret = 7;
	in.comp_mask = 1;
	CALL_INT(ibv_query_device_ex(ctx, &in, &dattr));

	CALL_PTR(ibv_open_qp(ctx, NULL));
	CALL_INT(ibv_modify_qp_rate_limit(&fake_qp, NULL));
	memset(&wq_attr, 0, sizeof(wq_attr));
	wq_attr.wq_context = &wq_attr;
	fake_wq.events_completed = 5;
	fake_wq.wq_context = NULL;
	CALL_PTR(ibv_create_wq(ctx, &wq_attr));
	say("wq context set %d events %u", fake_wq.wq_context == &wq_attr, fake_wq.events_completed);
	CALL_INT(ibv_modify_wq(&fake_wq, NULL));
	CALL_INT(ibv_destroy_wq(&fake_wq));
	CALL_INT(ibv_post_wq_recv(&fake_wq, NULL, NULL));
	CALL_PTR(ibv_create_rwq_ind_table(ctx, NULL));
	CALL_INT(ibv_destroy_rwq_ind_table(&fake_ind));
	CALL_INT(ibv_post_send(&fake_qp, NULL, NULL));
	CALL_INT(ibv_post_recv(&fake_qp, NULL, NULL));
	CALL_PTR(ibv_create_counters(ctx, NULL));
	CALL_INT(ibv_destroy_counters(&fake_counters));
	CALL_INT(ibv_attach_counters_point_flow(&fake_counters, NULL, &fake_flow));
	CALL_INT(ibv_read_counters(&fake_counters, NULL, 0, 0));
	CALL_INT(mlx5dv_query_port(ctx, 1, NULL));
	CALL_INT(mlx5dv_mkey_check(NULL, NULL));
}

static void extended_objects(void)
{
	struct ibv_qp_ex qpx;
	struct ibv_cq_ex cqx;
	struct mlx5dv_qp_ex mqpx;
	struct ibv_poll_cq_attr pattr;
	struct ibv_wc_tm_info tm;
	char hdr[16];

	memset(&qpx, 0, sizeof(qpx));
	qpx.wr_id = 42;
	qpx.wr_atomic_cmp_swp = qpx_atomic_cmp_swp;
	qpx.wr_atomic_fetch_add = qpx_atomic_fetch_add;
	qpx.wr_bind_mw = qpx_bind_mw;
	qpx.wr_local_inv = qpx_local_inv;
	qpx.wr_rdma_read = qpx_rdma_read;
	qpx.wr_rdma_write = qpx_rdma_write;
	qpx.wr_rdma_write_imm = qpx_rdma_write_imm;
	qpx.wr_send = qpx_send;
	qpx.wr_send_imm = qpx_send_imm;
	qpx.wr_send_inv = qpx_send_inv;
	qpx.wr_send_tso = qpx_send_tso;
	qpx.wr_set_ud_addr = qpx_set_ud_addr;
	qpx.wr_set_xrc_srqn = qpx_set_xrc_srqn;
	qpx.wr_set_inline_data = qpx_set_inline_data;
	qpx.wr_set_inline_data_list = qpx_set_inline_data_list;
	qpx.wr_set_sge = qpx_set_sge;
	qpx.wr_set_sge_list = qpx_set_sge_list;
	qpx.wr_start = qpx_start;
	qpx.wr_complete = qpx_complete;
	qpx.wr_abort = qpx_abort;
	qpx.wr_atomic_write = qpx_atomic_write;
	say("== ibv_qp_ex");
	ibv_wr_start(&qpx);
	ibv_wr_atomic_cmp_swp(&qpx, 1, 2, 3, 4);
	ibv_wr_atomic_fetch_add(&qpx, 1, 2, 3);
	ibv_wr_bind_mw(&qpx, NULL, 1, NULL);
	ibv_wr_local_inv(&qpx, 1);
	ibv_wr_rdma_read(&qpx, 1, 2);
	ibv_wr_rdma_write(&qpx, 1, 2);
	ibv_wr_rdma_write_imm(&qpx, 1, 2, 3);
	ibv_wr_send(&qpx);
	ibv_wr_send_imm(&qpx, 1);
	ibv_wr_send_inv(&qpx, 1);
	ibv_wr_send_tso(&qpx, hdr, 16, 1400);
	ibv_wr_set_ud_addr(&qpx, NULL, 1, 2);
	ibv_wr_set_xrc_srqn(&qpx, 1);
	ibv_wr_set_inline_data(&qpx, hdr, 16);
	ibv_wr_set_inline_data_list(&qpx, 0, NULL);
	ibv_wr_set_sge(&qpx, 1, 2, 3);
	ibv_wr_set_sge_list(&qpx, 0, NULL);
	ibv_wr_atomic_write(&qpx, 1, 2, hdr);
	ibv_wr_abort(&qpx);
	CALL_INT(ibv_wr_complete(&qpx));

	memset(&cqx, 0, sizeof(cqx));
	cqx.start_poll = cqx_start_poll;
	cqx.next_poll = cqx_next_poll;
	cqx.end_poll = cqx_end_poll;
	cqx.read_opcode = cqx_read_opcode;
	cqx.read_vendor_err = cqx_read_vendor_err;
	cqx.read_byte_len = cqx_read_byte_len;
	cqx.read_imm_data = cqx_read_imm_data;
	cqx.read_qp_num = cqx_read_qp_num;
	cqx.read_src_qp = cqx_read_src_qp;
	cqx.read_wc_flags = cqx_read_wc_flags;
	cqx.read_slid = cqx_read_slid;
	cqx.read_sl = cqx_read_sl;
	cqx.read_dlid_path_bits = cqx_read_dlid_path_bits;
	cqx.read_completion_ts = cqx_read_completion_ts;
	cqx.read_cvlan = cqx_read_cvlan;
	cqx.read_flow_tag = cqx_read_flow_tag;
	cqx.read_tm_info = cqx_read_tm_info;
	cqx.read_completion_wallclock_ns = cqx_read_completion_wallclock_ns;
	say("== ibv_cq_ex, as a cq: %d", (void *)ibv_cq_ex_to_cq(&cqx) == (void *)&cqx);
	pattr.comp_mask = 0;
	CALL_INT(ibv_start_poll(&cqx, &pattr));
	CALL_INT(ibv_next_poll(&cqx));
	ibv_end_poll(&cqx);
	CALL_INT(ibv_wc_read_opcode(&cqx));
	CALL_INT(ibv_wc_read_vendor_err(&cqx));
	CALL_INT(ibv_wc_read_byte_len(&cqx));
	CALL_INT(ibv_wc_read_imm_data(&cqx));
	CALL_INT(ibv_wc_read_invalidated_rkey(&cqx));
	CALL_INT(ibv_wc_read_qp_num(&cqx));
	CALL_INT(ibv_wc_read_src_qp(&cqx));
	CALL_INT(ibv_wc_read_wc_flags(&cqx));
	CALL_INT(ibv_wc_read_slid(&cqx));
	CALL_INT(ibv_wc_read_sl(&cqx));
	CALL_INT(ibv_wc_read_dlid_path_bits(&cqx));
	CALL_INT(ibv_wc_read_completion_ts(&cqx));
	CALL_INT(ibv_wc_read_completion_wallclock_ns(&cqx));
	CALL_INT(ibv_wc_read_cvlan(&cqx));
	CALL_INT(ibv_wc_read_flow_tag(&cqx));
	ibv_wc_read_tm_info(&cqx, &tm);
	say("tm tag %llu", (unsigned long long)tm.tag);

	memset(&mqpx, 0, sizeof(mqpx));
	mqpx.wr_set_dc_addr = mqpx_set_dc_addr;
	mqpx.wr_set_dc_addr_stream = mqpx_set_dc_addr_stream;
	mqpx.wr_mr_interleaved = mqpx_mr_interleaved;
	mqpx.wr_mr_list = mqpx_mr_list;
	mqpx.wr_mkey_configure = mqpx_mkey_configure;
	mqpx.wr_set_mkey_access_flags = mqpx_set_mkey_access_flags;
	mqpx.wr_set_mkey_layout_list = mqpx_set_mkey_layout_list;
	mqpx.wr_set_mkey_layout_interleaved = mqpx_set_mkey_layout_interleaved;
	mqpx.wr_set_mkey_sig_block = mqpx_set_mkey_sig_block;
	mqpx.wr_set_mkey_crypto = mqpx_set_mkey_crypto;
	mqpx.wr_memcpy = mqpx_memcpy;
	mqpx.wr_raw_wqe = mqpx_raw_wqe;
	say("== mlx5dv_qp_ex");
	mlx5dv_wr_set_dc_addr(&mqpx, NULL, 1, 2);
	mlx5dv_wr_set_dc_addr_stream(&mqpx, NULL, 1, 2, 3);
	mlx5dv_wr_mr_interleaved(&mqpx, NULL, 1, 2, 0, NULL);
	mlx5dv_wr_mr_list(&mqpx, NULL, 1, 0, NULL);
	mlx5dv_wr_mkey_configure(&mqpx, NULL, 0, NULL);
	mlx5dv_wr_set_mkey_access_flags(&mqpx, 1);
	mlx5dv_wr_set_mkey_layout_list(&mqpx, 0, NULL);
	mlx5dv_wr_set_mkey_layout_interleaved(&mqpx, 1, 0, NULL);
	mlx5dv_wr_set_mkey_sig_block(&mqpx, NULL);
	mlx5dv_wr_set_mkey_crypto(&mqpx, NULL);
	mlx5dv_wr_memcpy(&mqpx, 1, 2, 3, 4, 5);
	mlx5dv_wr_raw_wqe(&mqpx, NULL);
}

struct mlx5_ifc_probe_bits {
	uint8_t a[0x4];
	uint8_t b[0xc];
	uint8_t c[0x10];
	uint8_t d[0x20];
	uint8_t e[0x40];
	uint8_t f[0x1];
	uint8_t g[0x1f];
};

static void pure_helpers(void)
{
	static const uint32_t words[] = { 0, 1, 0xff, 0x100, 0x12345678, 0x3fff, 0x4000, 0xfc000,
					  0xfffff, 0xffffffff };
	struct mlx5_cqe64 cqe;
	struct mlx5_wqe_ctrl_seg ctrl;
	struct mlx5_wqe_datagram_seg dgram;
	struct mlx5_wqe_data_seg data;
	struct mlx5_wqe_eth_seg eth;
	struct mlx5dv_clock_info clk;
	uint8_t rmac[6] = { 1, 2, 3, 4, 5, 6 };
	uint8_t rgid[16] = { 0xfe, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	uint8_t hdr[32];
	uint32_t cmd[DEVX_ST_SZ_DW(probe)];

	say("== pure helpers");
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		say("inc_rkey %x -> %x, sport %x -> %x", words[i], ibv_inc_rkey(words[i]), words[i],
		    ibv_flow_label_to_udp_sport(words[i]));
	for (int t = 0; t < 16; t++)
		say("qpt %d in 0x14: %d", t, ibv_is_qpt_supported(0x14, (enum ibv_qp_type)t));
	say("vext %d %d", (int)vext_field_avail(struct ibv_wc, sl, 44),
	    (int)vext_field_avail(struct ibv_wc, sl, 45));

	for (int v = 0; v < 256; v++) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.op_own = (uint8_t)v;
		printf("%x:%u%u%u%u ", v, mlx5dv_get_cqe_owner(&cqe), mlx5dv_get_cqe_se(&cqe),
		       mlx5dv_get_cqe_format(&cqe), mlx5dv_get_cqe_opcode(&cqe));
		mlx5dv_set_cqe_owner(&cqe, (uint8_t)(v + 1));
		printf("%x\n", cqe.op_own);
	}

	memset(&ctrl, 0xee, sizeof(ctrl));
	mlx5dv_set_ctrl_seg(&ctrl, 0xabcd, MLX5_OPCODE_RDMA_WRITE, 0x5a, 0x123456, MLX5_WQE_CTRL_CQ_UPDATE,
			    3, 0x77, 0xdeadbeef);
	hex("ctrl", &ctrl, sizeof(ctrl));
	memset(&dgram, 0xee, sizeof(dgram));
	mlx5dv_set_dgram_seg(&dgram, 0x1122334455667788ull, 0xabcdef, 1, 0x12, 0x34, 0xbeef, rmac, 0x56,
			     0x40, 0x9abcdef0, rgid);
	hex("dgram", &dgram, sizeof(dgram));
	memset(&data, 0xee, sizeof(data));
	mlx5dv_set_data_seg(&data, 0x1000, 0x4321, (uintptr_t)0x0102030405060708ull);
	hex("data", &data, sizeof(data));
	for (size_t i = 0; i < sizeof(hdr); i++)
		hdr[i] = (uint8_t)i;
	memset(&eth, 0xee, sizeof(eth));
	mlx5dv_set_eth_seg(&eth, 0xc0, 1460, 2, hdr);
	hex("eth", &eth, sizeof(eth));
#if defined(__SSE3__)
	memset(&ctrl, 0xee, sizeof(ctrl));
	mlx5dv_x86_set_ctrl_seg(&ctrl, 0xabcd, MLX5_OPCODE_RDMA_WRITE, 0x5a, 0x123456,
				MLX5_WQE_CTRL_CQ_UPDATE, 3, 0x77, 0xdeadbeef);
	hex("x86 ctrl", &ctrl, sizeof(ctrl));
	memset(&data, 0xee, sizeof(data));
	mlx5dv_x86_set_data_seg(&data, 0x1000, 0x4321, (uintptr_t)0x0102030405060708ull);
	hex("x86 data", &data, sizeof(data));
#endif

	memset(&clk, 0, sizeof(clk));
	clk.nsec = 1000000000ull;
	clk.last_cycles = 5000;
	clk.frac = 3;
	clk.mult = 7;
	clk.shift = 1;
	clk.mask = 0xffffffffffull;
	say("ts %llu %llu %llu", (unsigned long long)mlx5dv_ts_to_ns(&clk, 6000),
	    (unsigned long long)mlx5dv_ts_to_ns(&clk, 4000),
	    (unsigned long long)mlx5dv_ts_to_ns(&clk, 0xfffffffff0ull));

	memset(cmd, 0, sizeof(cmd));
	DEVX_SET(probe, cmd, a, 0xf);
	DEVX_SET(probe, cmd, b, 0x123);
	DEVX_SET(probe, cmd, c, 0xbeef);
	DEVX_SET(probe, cmd, d, 0xcafef00d);
	DEVX_SET64(probe, cmd, e, 0x0123456789abcdefull);
	DEVX_SET(probe, cmd, f, 1);
	DEVX_SET(probe, cmd, g, 0x7fffffff);
	DEVX_SET(probe, cmd, b, 0xfff1); /* wider than the field: cut to 12 bits */
	hex("devx", cmd, sizeof(cmd));
	say("devx get %x %x %x %x %llx %x %x, sizes %zu %zu %zu %zu %zu", DEVX_GET(probe, cmd, a),
	    DEVX_GET(probe, cmd, b), DEVX_GET(probe, cmd, c), DEVX_GET(probe, cmd, d),
	    (unsigned long long)DEVX_GET64(probe, cmd, e), DEVX_GET(probe, cmd, f), DEVX_GET(probe, cmd, g),
	    (size_t)DEVX_ST_SZ_BYTES(probe), (size_t)DEVX_ST_SZ_DW(probe), (size_t)DEVX_ST_SZ_QW(probe),
	    (size_t)DEVX_FLD_SZ_BYTES(probe, e), (size_t)DEVX_BYTE_OFF(probe, d));
	say("devx addr %td", DEVX_ADDR_OF(probe, cmd, e) - (unsigned char *)cmd);
}

int main(void)
{
	pure_helpers();
	extended_objects();
	for (int mode = 0; mode < MODE_COUNT; mode++)
		verbs_dispatch(mode);
	return 0;
}
