/*
 * librdmacm.so.1's answers to unusual inputs, as rdma-core v44 documents
 * them: rdma_getaddrinfo(3) with hints alone; rdma_connect(3) and
 * rdma_accept(3) with depths beyond the device (EINVAL), with
 * RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH (rdma_cma.h: the device's most)
 * and with retry counts beyond the IB CM's 3 bits (carried as 7).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "rdmacm_fixture.h"

/*
 * rdma_getaddrinfo(3): "Either node, service, or hints must be provided";
 * with hints alone the result is what they say, the source address included
 * (libfabric's verbs provider asks so for a passive endpoint).
 */
static void test_getaddrinfo_hints_only(void)
{
	struct sockaddr_in src = cmf_addr4("127.0.0.1", 7471);
	struct rdma_addrinfo hints, *res = NULL;

	errno = 0;
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &res) == -1 && errno == EINVAL);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_family = AF_INET;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	CHECK_OK(rdma_getaddrinfo(NULL, NULL, &hints, &res));
	th_defer((th_cleanup_fn)rdma_freeaddrinfo, res);
	CHECK(res->ai_flags == RAI_PASSIVE && res->ai_family == AF_INET);
	CHECK(res->ai_qp_type == IBV_QPT_RC && res->ai_port_space == RDMA_PS_TCP);
	CHECK(res->ai_src_len == sizeof(src) && res->ai_src_addr != NULL);
	CHECK(memcmp(res->ai_src_addr, &src, sizeof(src)) == 0);
	CHECK(res->ai_dst_addr == NULL && res->ai_dst_len == 0);
}

/* Depths beyond the device are refused; RDMA_MAX_* ask for its most; retry counts are the CM's 3 bits. */
static void test_depths_and_counts(void)
{
	static struct cmf_side srv, cli, acc;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct ibv_device_attr da;
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	th_defer(cmf_side_free, &acc);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(ibv_query_device(cli.id->verbs, &da));
	if (da.max_qp_rd_atom >= 0xfe || da.max_qp_init_rd_atom >= 0xfe)
		SKIP("the device's depths leave no value beyond them");
	CHECK_OK(cmf_qp(&cli, cli.id));
	p.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = 1;
	p.initiator_depth = (uint8_t)(da.max_qp_init_rd_atom + 1);
	CHECK(rdma_connect(cli.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = RDMA_MAX_RESP_RES;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	p.retry_count = 15;
	p.rnr_retry_count = 15;
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	/* Seen from the listener: the requester's depths swapped. */
	CHECK(ev.param.conn.responder_resources == da.max_qp_init_rd_atom);
	CHECK(ev.param.conn.initiator_depth == da.max_qp_rd_atom);
	CHECK(ev.param.conn.retry_count == 7 && ev.param.conn.rnr_retry_count == 7);
	acc.id = ev.id;
	CHECK_OK(cmf_qp(&acc, acc.id));
	p.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
	CHECK(rdma_accept(acc.id, &p) == -1 && errno == EINVAL);
	p.responder_resources = RDMA_MAX_RESP_RES;
	CHECK_OK(rdma_accept(acc.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, &ev));
	CHECK(ev.param.conn.responder_resources == da.max_qp_init_rd_atom);
	CHECK(ev.param.conn.initiator_depth == da.max_qp_rd_atom);
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
}

int main(void)
{
	RUN(test_getaddrinfo_hints_only);
	RUN(test_depths_and_counts);
	return th_summary("test_rdmacm_inputs");
}
