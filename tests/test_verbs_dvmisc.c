/*
 * test_verbs_dvmisc: mlx5dv_query_port, reserved QP numbers, the RoCE v2 UDP
 * source port of an RC QP, and ibv_resize_cq, as rdma-core v44's mlx5
 * provider documents and answers them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define DV_VPORT_UPLINK 0xffffu

static char *self_path;

/* A host function is no eswitch manager: mlx5 fills nothing and says so with flags 0. */
static void test_query_port_host(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_port p;

	CHECK(c != NULL);
	memset(&p, 0xa5, sizeof(p));
	CHECK_OK(mlx5dv_query_port(c, 1, &p));
	CHECK(p.flags == 0 && p.vport == 0 && p.vport_vhca_id == 0 && p.esw_owner_vhca_id == 0);
	CHECK(p.vport_steering_icm_rx == 0 && p.vport_steering_icm_tx == 0);
	CHECK(p.reg_c0.value == 0 && p.reg_c0.mask == 0);
	/* A port the device has not, and a length other than the struct's: EINVAL. */
	CHECK_ERR(mlx5dv_query_port(c, 2, &p), EINVAL);
	CHECK_ERR(mlx5dv_query_port(c, 0, &p), EINVAL);
	CHECK_ERR(_mlx5dv_query_port(c, 1, &p, sizeof(p) - 8), EINVAL);
}

/* Run in a process of the DPU side (re-executed): 0 when p0 reports its uplink vport. */
static int query_port_dpu_child(void)
{
	struct ibv_device **l;
	struct ibv_context *c;
	struct mlx5dv_port p;
	int n = 0, rc = 1;

	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1)
		return 2;
	c = ibv_open_device(l[0]);
	if (c != NULL && mlx5dv_query_port(c, 1, &p) == 0 &&
	    p.flags == (MLX5DV_QUERY_PORT_VPORT | MLX5DV_QUERY_PORT_ESW_OWNER_VHCA_ID | MLX5DV_QUERY_PORT_VPORT_REG_C0) &&
	    p.vport == DV_VPORT_UPLINK && p.esw_owner_vhca_id == 0 && p.reg_c0.value != 0 &&
	    p.reg_c0.mask == 0xffff0000u && (p.reg_c0.value & ~p.reg_c0.mask) == 0)
		rc = 0;
	if (c != NULL)
		ibv_close_device(c);
	ibv_free_device_list(l);
	return rc;
}

/* The DPU's PF (p0, the uplink representor of a BlueField-2 in switchdev mode). */
static void test_query_port_dpu(void)
{
	pid_t pid = fork();
	int status = 0;

	CHECK(pid >= 0);
	if (pid == 0) {
		char *argv[] = { self_path, "query-port-dpu", NULL };

		setenv("SOFTDPU_SIDE", "dpu", 1);
		unsetenv("SOFTDPU_TOPOLOGY");
		execv(self_path, argv);
		_exit(3);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Numbers device-wide and never a QP's; a dealloc of one not held is EINVAL. */
static void test_reserved_qpn(void)
{
	struct ibv_context *c = vf_open(), *c2;
	struct ibv_device **l;
	uint32_t q[64], extra;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int n = 0;

	CHECK(c != NULL);
	for (int i = 0; i < 64; i++) {
		CHECK_OK(mlx5dv_reserved_qpn_alloc(c, &q[i]));
		for (int j = 0; j < i; j++)
			CHECK(q[j] != q[i]);
	}
	/* A QP made while they are held gets none of them. */
	pd = vf_pd(c);
	cq = vq_cq(c, 4);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	CHECK(pd != NULL && cq != NULL && qp != NULL);
	for (int i = 0; i < 64; i++)
		CHECK(qp->qp_num != q[i]);
	/* A QP's number is not a reserved one of this context. */
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, qp->qp_num), EINVAL);
	/* Another context of the device does not hold this one's. */
	l = vf_list(&n);
	CHECK(l != NULL && n >= 1);
	c2 = ibv_open_device(l[0]);
	CHECK(c2 != NULL);
	th_defer(vf_close_cb, c2);
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c2, q[0]), EINVAL);
	CHECK_OK(mlx5dv_reserved_qpn_alloc(c2, &extra));
	for (int i = 0; i < 64; i++)
		CHECK(extra != q[i]);
	for (int i = 0; i < 64; i++)
		CHECK_OK(mlx5dv_reserved_qpn_dealloc(c, q[i]));
	/* Twice: EINVAL. */
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, q[0]), EINVAL);
	CHECK_ERR(mlx5dv_reserved_qpn_dealloc(c, 0xffffff), EINVAL);
	CHECK_OK(mlx5dv_reserved_qpn_dealloc(c2, extra));
	CHECK_ERR(mlx5dv_reserved_qpn_alloc(c, NULL), EINVAL);
}

/* RC or UC in RTS only (mlx5's RTS2RTS); other states and types EOPNOTSUPP. */
static void test_udp_sport(void)
{
	static uint8_t b0[64], b1[64];
	struct vq_pair_spec s = { .buf = { b0, b1 }, .len = sizeof(b0), .type = IBV_QPT_RC,
				  .access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL } };
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_sge sg;
	struct ibv_qp *ud;
	struct ibv_wc wc;
	struct vq_pair p;

	vq_pair_open(&p, &s);
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* RESET */
	CHECK_OK(vq_to_init(p.qp[0]));
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* INIT */
	CHECK_OK(vq_to_rtr(p.qp[0], p.qp[1]->qp_num, 0));
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555), EOPNOTSUPP); /* RTR */
	CHECK_OK(vq_to_rts(p.qp[0], 0));
	CHECK_OK(vq_up(p.qp[1], p.qp[0]->qp_num, 0, 0));
	CHECK_OK(mlx5dv_modify_qp_udp_sport(p.qp[0], 55555));
	CHECK_OK(mlx5dv_modify_qp_udp_sport(p.qp[0], 49152));
	/* The QP goes on working. */
	memset(b0, 0x3c, sizeof(b0));
	sg = (struct ibv_sge){ .addr = (uintptr_t)b0, .length = sizeof(b0), .lkey = p.mr[0]->lkey };
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b1;
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	CHECK_OK(ibv_post_send(p.qp[0], &wr, &bad));
	CHECK(vq_poll1(p.cq[0], &wc) == 1 && wc.wr_id == 7 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(b0, b1, sizeof(b0)) == 0);
	ud = vq_qp(p.pd, IBV_QPT_UD, p.cq[0], p.cq[0], 4);
	CHECK(ud != NULL);
	CHECK_ERR(mlx5dv_modify_qp_udp_sport(ud, 55555), EOPNOTSUPP);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "query-port-dpu") == 0)
		return query_port_dpu_child();
	self_path = argv[0];
	RUN(test_query_port_host);
	RUN(test_query_port_dpu);
	RUN(test_reserved_qpn);
	RUN(test_udp_sport);
	return th_summary("test_verbs_dvmisc");
}
