/*
 * A FlexIO host program written the way the DOCA 2.0-2.2 FlexIO samples are:
 * it loads the device application the device-code compiler embedded, sets up
 * heap memory, a UAR, a window, an outbox, an event handler with its CQs, an
 * SQ, an RQ and an RC QP, prints from the device, calls device functions
 * directly and through a command queue, and watches for fatal device errors.
 * It only has to compile — as C11 and as C++17, against softdpu's headers
 * alone, with every warning an error — so that a program that builds against
 * the vendor's libflexio builds against ours. It is never linked or run.
 */
#include <libflexio/flexio.h>

#include <string.h>

#define HP_LOG_CQ_DEPTH 7
#define HP_LOG_WQ_DEPTH 7
#define HP_LOG_WQ_DATA_BSIZE 11
#define HP_PRINT_BSIZE (4 * 2048)

/* What the device-code compiler generates for the host: the app and one stub per device function. */
extern struct flexio_app *hp_dev_app;
extern flexio_func_t hp_dev_event_handler;
extern flexio_func_t hp_dev_rpc_init;
extern flexio_func_t hp_dev_rpc_task;

/* Queue memory handed to the device (the samples' *_transf structs). */
struct hp_cq_transf {
	uint32_t cq_num;
	uint32_t log_cq_depth;
	flexio_uintptr_t cq_ring_daddr;
	flexio_uintptr_t cq_dbr_daddr;
};

struct hp_wq_transf {
	uint32_t wq_num;
	uint32_t wqd_mkey_id;
	flexio_uintptr_t wq_ring_daddr;
	flexio_uintptr_t wq_dbr_daddr;
	flexio_uintptr_t wqd_daddr;
};

struct hp_host2dev {
	struct hp_cq_transf rq_cq, sq_cq;
	struct hp_wq_transf rq, sq;
	uint32_t window_id;
	uint32_t outbox_id;
	uint32_t host_mkey;
	uint64_t host_buf;
};

struct hp_ctx {
	struct ibv_context *ibv_ctx;
	struct ibv_pd *pd;
	struct ibv_mr *host_mr;
	void *host_buf;
	struct mlx5dv_devx_uar *devx_uar;
	struct flexio_process *process;
	struct flexio_uar *uar;
	struct flexio_window *window;
	struct flexio_outbox *outbox;
	struct flexio_event_handler *eh;
	struct flexio_cq *rq_cq, *sq_cq;
	struct flexio_rq *rq;
	struct flexio_sq *sq;
	struct flexio_qp *qp;
	struct flexio_mkey *rqd_mkey;
	struct flexio_cmdq *cmdq;
	pthread_t print_thread;
	struct hp_host2dev h2d;
	flexio_uintptr_t h2d_daddr;
};

/* The pack callback of a function registered with pack/unpack: two 64-bit arguments. */
static void hp_pack_two(void *argbuf, va_list ap)
{
	uint64_t *args = (uint64_t *)argbuf;

	args[0] = va_arg(ap, uint64_t);
	args[1] = va_arg(ap, uint64_t);
}

static struct ibv_context *hp_open_first(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int num = 0;

	list = ibv_get_device_list(&num);
	if (!list)
		return NULL;
	if (num > 0)
		ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	return ctx;
}

static int hp_alloc_cq_mem(struct hp_ctx *c, struct hp_cq_transf *t)
{
	size_t ring_bsize = (1UL << HP_LOG_CQ_DEPTH) * 64;

	t->log_cq_depth = HP_LOG_CQ_DEPTH;
	if (flexio_buf_dev_alloc(c->process, sizeof(uint32_t) * 2, &t->cq_dbr_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_buf_dev_memset(c->process, 0, sizeof(uint32_t) * 2, t->cq_dbr_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	return flexio_buf_dev_alloc(c->process, ring_bsize, &t->cq_ring_daddr) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

static int hp_create_cq(struct hp_ctx *c, struct hp_cq_transf *t, int to_thread, struct flexio_cq **cq)
{
	struct flexio_cq_attr attr;

	if (hp_alloc_cq_mem(c, t))
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.log_cq_depth = (uint8_t)t->log_cq_depth;
	if (to_thread) {
		attr.element_type = FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD;
		attr.thread = flexio_event_handler_get_thread(c->eh);
	} else {
		attr.element_type = FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	}
	attr.uar_id = flexio_uar_get_id(c->uar);
	attr.uar_base_addr = NULL;
	attr.cqe_comp_type = FLEXIO_CQE_COMP_NONE;
	attr.cq_period_mode = FLEXIO_CQ_PERIOD_MODE_CQE;
	attr.no_arm = false;
	attr.cq_dbr_daddr = t->cq_dbr_daddr;
	attr.cq_ring_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.cq_ring_qmem.daddr = t->cq_ring_daddr;
	if (flexio_cq_create(c->process, NULL, &attr, cq) != FLEXIO_STATUS_SUCCESS)
		return -1;
	t->cq_num = flexio_cq_get_cq_num(*cq);
	return 0;
}

static int hp_create_wqs(struct hp_ctx *c)
{
	struct flexio_mkey_attr mkey_attr;
	struct flexio_wq_attr attr;
	size_t data_bsize = (1UL << (HP_LOG_WQ_DEPTH + HP_LOG_WQ_DATA_BSIZE));
	uint32_t dbr[2] = {0, 0};

	/* The RQ: its ring, its doorbell record and a buffer per WQE, under one MKey. */
	if (flexio_buf_dev_alloc(c->process, data_bsize, &c->h2d.rq.wqd_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	memset(&mkey_attr, 0, sizeof(mkey_attr));
	mkey_attr.pd = c->pd;
	mkey_attr.daddr = c->h2d.rq.wqd_daddr;
	mkey_attr.len = data_bsize;
	mkey_attr.access = IBV_ACCESS_LOCAL_WRITE;
	if (flexio_device_mkey_create(c->process, &mkey_attr, &c->rqd_mkey) != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->h2d.rq.wqd_mkey_id = flexio_mkey_get_id(c->rqd_mkey);
	if (flexio_copy_from_host(c->process, dbr, sizeof(dbr), &c->h2d.rq.wq_dbr_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_buf_dev_alloc(c->process, (1UL << HP_LOG_WQ_DEPTH) * 16, &c->h2d.rq.wq_ring_daddr) !=
	    FLEXIO_STATUS_SUCCESS)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.log_wq_depth = HP_LOG_WQ_DEPTH;
	attr.pd = c->pd;
	attr.wq_dbr_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.wq_dbr_qmem.daddr = c->h2d.rq.wq_dbr_daddr;
	attr.wq_ring_qmem.daddr = c->h2d.rq.wq_ring_daddr;
	if (flexio_rq_create(c->process, NULL, c->h2d.rq_cq.cq_num, &attr, &c->rq) != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->h2d.rq.wq_num = flexio_rq_get_wq_num(c->rq);
	if (flexio_rq_get_tir(c->rq) == NULL)
		return -1;

	/* The SQ: WQEs of four segments, data in the heap. */
	if (flexio_buf_dev_alloc(c->process, data_bsize, &c->h2d.sq.wqd_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_buf_dev_alloc(c->process, (1UL << HP_LOG_WQ_DEPTH) * 64, &c->h2d.sq.wq_ring_daddr) !=
	    FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_copy_from_host(c->process, dbr, sizeof(dbr), &c->h2d.sq.wq_dbr_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.log_wq_depth = HP_LOG_WQ_DEPTH;
	attr.uar_id = flexio_uar_get_id(c->uar);
	attr.pd = c->pd;
	attr.sq.allow_multi_pkt_send_wqe = 0;
	attr.wq_ring_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.wq_ring_qmem.daddr = c->h2d.sq.wq_ring_daddr;
	attr.wq_dbr_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.wq_dbr_qmem.daddr = c->h2d.sq.wq_dbr_daddr;
	if (flexio_sq_create(c->process, NULL, c->h2d.sq_cq.cq_num, &attr, &c->sq) != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->h2d.sq.wq_num = flexio_sq_get_wq_num(c->sq);
	return 0;
}

/* An RC QP in the heap, brought up to RTS against itself. */
static int hp_create_qp(struct hp_ctx *c)
{
	struct flexio_qp_attr_opt_param_mask mask;
	struct flexio_qp_attr attr;
	flexio_uintptr_t buf, dbr;
	uint8_t mac[6] = {0x02, 0, 0, 0, 0, 1};
	static const enum flexio_qp_state steps[] = {FLEXIO_QP_STATE_INIT, FLEXIO_QP_STATE_RTR, FLEXIO_QP_STATE_RTS};
	size_t i;

	if (flexio_buf_dev_alloc(c->process, 2 * (1UL << HP_LOG_WQ_DEPTH) * 64, &buf) != FLEXIO_STATUS_SUCCESS ||
	    flexio_buf_dev_alloc(c->process, 8, &dbr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.transport_type = FLEXIO_QPC_ST_RC;
	attr.uar_id = flexio_uar_get_id(c->uar);
	attr.qp_access_mask = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	attr.ops_flag = FLEXIO_QP_WR_RDMA_WRITE | FLEXIO_QP_WR_RDMA_READ;
	attr.pd = c->pd;
	attr.log_sq_depth = HP_LOG_WQ_DEPTH;
	attr.sq_cqn = c->h2d.sq_cq.cq_num;
	attr.log_rq_depth = HP_LOG_WQ_DEPTH;
	attr.rq_type = FLEXIO_QP_QPC_RQ_TYPE_REGULAR;
	attr.rq_cqn = c->h2d.rq_cq.cq_num;
	attr.qp_wq_buff_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.qp_wq_buff_qmem.daddr = buf;
	attr.qp_wq_dbr_qmem.memtype = FLEXIO_MEMTYPE_DPA;
	attr.qp_wq_dbr_qmem.daddr = dbr;
	if (flexio_qp_create(c->process, NULL, &attr, &c->qp) != FLEXIO_STATUS_SUCCESS)
		return -1;
	memset(&mask, 0, sizeof(mask));
	mask.min_rnr_nak_timer = true;
	attr.remote_qp_num = flexio_qp_get_qp_num(c->qp);
	attr.fl = 1;
	attr.dest_mac = mac;
	attr.min_rnr_nak_timer = 0x12;
	attr.path_mtu = FLEXIO_QP_QPC_MTU_BYTES_1K;
	attr.retry_count = 7;
	attr.vhca_port_num = 1;
	attr.next_rcv_psn = 0;
	attr.next_send_psn = 0;
	attr.gid_table_index = 0;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		attr.next_state = steps[i];
		if (flexio_qp_modify(c->qp, &attr, &mask) != FLEXIO_STATUS_SUCCESS)
			return -1;
	}
	return 0;
}

static int hp_setup(struct hp_ctx *c)
{
	struct flexio_process_attr pattr;
	struct flexio_event_handler_attr eh_attr;

	memset(&pattr, 0, sizeof(pattr));
	pattr.pd = c->pd;
	if (flexio_process_create(c->ibv_ctx, hp_dev_app, &pattr, &c->process) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_process_get_pd(c->process) != c->pd)
		return -1;
	if (flexio_process_error_handler_set(c->process, "hp_dev_error_handler") != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->devx_uar = mlx5dv_devx_alloc_uar(c->ibv_ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (!c->devx_uar)
		return -1;
	if (flexio_uar_create(c->process, c->devx_uar, &c->uar) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_print_init(c->process, c->uar, HP_PRINT_BSIZE, stdout, 0, &c->print_thread) !=
	    FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_window_create(c->process, c->pd, &c->window) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_outbox_create(c->process, NULL, c->uar, &c->outbox) != FLEXIO_STATUS_SUCCESS)
		return -1;
	c->h2d.window_id = flexio_window_get_id(c->window);
	c->h2d.outbox_id = flexio_outbox_get_id(c->outbox);

	memset(&eh_attr, 0, sizeof(eh_attr));
	eh_attr.host_stub_func = hp_dev_event_handler;
	eh_attr.affinity.type = FLEXIO_AFFINITY_NONE;
	if (flexio_event_handler_create(c->process, &eh_attr, c->window, c->outbox, &c->eh) !=
	    FLEXIO_STATUS_SUCCESS)
		return -1;
	printf("event handler thread %u\n", flexio_event_handler_get_id(c->eh));
	if (hp_create_cq(c, &c->h2d.rq_cq, 1, &c->rq_cq) || hp_create_cq(c, &c->h2d.sq_cq, 0, &c->sq_cq))
		return -1;
	if (flexio_cq_modify_moderation(c->rq_cq, 16, 8, FLEXIO_CQ_PERIOD_MODE_CQE) != FLEXIO_STATUS_SUCCESS)
		return -1;
	return hp_create_wqs(c) || hp_create_qp(c) ? -1 : 0;
}

/* Device functions named by string, with and without pack/unpack, and what the runtime knows of them. */
static int hp_functions(struct hp_ctx *c)
{
	char name[FLEXIO_MAX_NAME_LEN + 1];
	char unpack_name[FLEXIO_MAX_NAME_LEN + 1];
	flexio_func_arg_pack_fn_t *pack = NULL;
	flexio_uintptr_t fn_daddr = 0, unpack_daddr = 0;
	flexio_func_t *by_name = NULL;
	size_t argbuf_size = 0;
	uint32_t pup = 0;
	uint64_t ret = 0;
	struct flexio_app **apps = NULL;
	uint32_t napps = 0;

	if (flexio_func_pup_register(hp_dev_app, "hp_dev_add", "hp_dev_add_unpack", hp_dev_rpc_task,
				     2 * sizeof(uint64_t), hp_pack_two) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_func_get_register_info(hp_dev_app, hp_dev_rpc_task, &pup, name, unpack_name, sizeof(name),
					  &argbuf_size, &pack, &fn_daddr, &unpack_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	printf("%s/%s pup %u argbuf %zu\n", name, unpack_name, pup, argbuf_size);
	if (flexio_func_register(hp_dev_app, "hp_dev_plain", &by_name) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_process_call(c->process, by_name, &ret, (uint64_t)7) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_app_get_list(&apps, &napps) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (napps > 0)
		printf("app %s, %zu bytes\n", flexio_app_get_name(apps[0]), flexio_app_get_elf_size(apps[0]));
	return flexio_app_list_free(apps) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

static int hp_run(struct hp_ctx *c)
{
	struct flexio_cmdq_attr cq_attr;
	uint64_t rpc_ret = 0;
	int i;

	c->h2d.host_mkey = c->host_mr->lkey;
	c->h2d.host_buf = (uint64_t)(uintptr_t)c->host_buf;
	if (flexio_copy_from_host(c->process, &c->h2d, sizeof(c->h2d), &c->h2d_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_host2dev_memcpy(c->process, &c->h2d, sizeof(c->h2d), c->h2d_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_process_call(c->process, hp_dev_rpc_init, &rpc_ret, c->h2d_daddr) != FLEXIO_STATUS_SUCCESS ||
	    rpc_ret != 0)
		return -1;
	if (flexio_event_handler_run(c->eh, c->h2d_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;

	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.workers = 2;
	cq_attr.batch_size = 4;
	cq_attr.state = FLEXIO_CMDQ_STATE_PENDING;
	if (flexio_cmdq_create(c->process, &cq_attr, &c->cmdq) != FLEXIO_STATUS_SUCCESS)
		return -1;
	for (i = 0; i < 8; i++)
		if (flexio_cmdq_task_add(c->cmdq, hp_dev_rpc_task, c->h2d_daddr + (uint64_t)i) != FLEXIO_STATUS_SUCCESS)
			return -1;
	if (flexio_cmdq_state_running(c->cmdq) != FLEXIO_STATUS_SUCCESS)
		return -1;
	while (!flexio_cmdq_is_empty(c->cmdq)) {
		if (flexio_err_status(c->process)) {
			flexio_err_display(c->process);
			return -1;
		}
	}
	return flexio_print_flush(c->process) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

/* Emulated devices: doorbells of a function's queue to a CQ, and its MSI-X vectors. */
static int hp_emulation(struct hp_ctx *c, uint32_t vhca_id)
{
	struct flexio_emu_db_to_cq_ctx *db_ctx = NULL;
	struct flexio_emu_device_msix_map *map = NULL;
	struct flexio_msix *msix = NULL;
	uint16_t max_count = 0, period = 0, mode = 0;

	if (flexio_emu_db_to_cq_map(c->ibv_ctx, vhca_id, 0, c->rq_cq, &db_ctx) != FLEXIO_STATUS_SUCCESS)
		return -1;
	printf("doorbell context %u\n", flexio_emu_db_to_cq_ctx_get_id(db_ctx));
	if (flexio_emulated_device_msix_map_create(c->process, vhca_id, FLEXIO_MAX_EQ_TO_MSIX_MAP_PAIRS, &map) !=
	    FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_emulated_device_msix_create(c->process, c->ibv_ctx, 0, flexio_uar_get_id(c->uar), 0, map,
					       &msix) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_cq_query_moderation(c->rq_cq, &max_count, &period, &mode) != FLEXIO_STATUS_SUCCESS)
		return -1;
	flexio_emulated_device_msix_destroy(msix);
	flexio_emulated_device_msix_map_free(map);
	return flexio_emu_db_to_cq_unmap(db_ctx) == FLEXIO_STATUS_SUCCESS ? 0 : -1;
}

static void hp_close(struct hp_ctx *c)
{
	if (c->cmdq)
		flexio_cmdq_destroy(c->cmdq);
	if (c->qp)
		flexio_qp_destroy(c->qp);
	if (c->sq)
		flexio_sq_destroy(c->sq);
	if (c->rq)
		flexio_rq_destroy(c->rq);
	if (c->rqd_mkey)
		flexio_device_mkey_destroy(c->rqd_mkey);
	if (c->sq_cq)
		flexio_cq_destroy(c->sq_cq);
	if (c->rq_cq)
		flexio_cq_destroy(c->rq_cq);
	if (c->eh)
		flexio_event_handler_destroy(c->eh);
	if (c->outbox)
		flexio_outbox_destroy(c->outbox);
	if (c->window)
		flexio_window_destroy(c->window);
	if (c->process) {
		if (c->h2d_daddr)
			flexio_buf_dev_free(c->process, c->h2d_daddr);
		flexio_print_destroy(c->process);
	}
	if (c->uar)
		flexio_uar_destroy(c->uar);
	if (c->process)
		flexio_process_destroy(c->process);
	if (c->devx_uar)
		mlx5dv_devx_free_uar(c->devx_uar);
	if (c->host_mr)
		ibv_dereg_mr(c->host_mr);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ibv_ctx)
		ibv_close_device(c->ibv_ctx);
	free(c->host_buf);
}

int main(void)
{
	struct hp_ctx c;
	uint64_t elf_head[8];
	int ret = 1;

	memset(&c, 0, sizeof(c));
	c.host_buf = calloc(1, 4096);
	c.ibv_ctx = hp_open_first();
	if (!c.host_buf || !c.ibv_ctx)
		goto out;
	c.pd = ibv_alloc_pd(c.ibv_ctx);
	if (!c.pd)
		goto out;
	c.host_mr = ibv_reg_mr(c.pd, c.host_buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!c.host_mr)
		goto out;
	if (flexio_app_get_elf(hp_dev_app, elf_head, sizeof(elf_head)) != FLEXIO_STATUS_SUCCESS)
		printf("image larger than %zu bytes\n", sizeof(elf_head));
	if (hp_setup(&c) || hp_functions(&c) || hp_run(&c) || hp_emulation(&c, 1))
		goto out;
	printf("error fd %d\n", flexio_err_handler_fd(c.process));
	ret = 0;
out:
	hp_close(&c);
	return ret;
}
