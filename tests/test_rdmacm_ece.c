/*
 * librdmacm.so.1's ECE calls and extended SRQ, as rdma-core v44 documents
 * them: rdma_set_local_ece(3) and rdma_get_remote_ece(3) on ids without a
 * QP of the CM's (an application's own QP: EINVAL once the id has one),
 * the peer's options carried in the REQ and the REP, rdma_reject_ece(3)
 * seen by the requester as REJECTED with IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED
 * (35); rdma_create_srq_ex(3) on the id's PD, an XRC SRQ with its domain
 * and a receive CQ of the id's when the attributes give none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rdma_verbs.h>

#include "harness.h"
#include "rdmacm_fixture.h"

#define ECE_VENDOR 0x15b3
#define CM_REJ_VENDOR_OPTION_NOT_SUPPORTED 35

static void cq_drop(void *cq)
{
	ibv_destroy_cq(cq);
}

static void id_drop(void *id)
{
	rdma_destroy_id(id);
}

static void ev_ack(void *ev)
{
	rdma_ack_cm_event(ev);
}

static bool ece_is(const struct ibv_ece *e, uint32_t vendor, uint32_t options)
{
	if (e->vendor_id == vendor && e->options == options && e->comp_mask == 0)
		return true;
	fprintf(stderr, "ece %#x/%#x/%#x, expected %#x/%#x/0\n", e->vendor_id, e->options, e->comp_mask, vendor,
		options);
	return false;
}

/* rdma_set_local_ece(3) / rdma_get_remote_ece(3): what they refuse, and zeroes before any peer spoke. */
static void test_ece_inputs(void)
{
	static struct cmf_side srv, cli;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct ibv_ece e = { .vendor_id = ECE_VENDOR, .options = 7 };
	struct rdma_cm_event ev;
	struct ibv_ece got;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&cli));
	errno = 0;
	CHECK(rdma_set_local_ece(cli.id, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_set_local_ece(NULL, &e) == -1 && errno == EINVAL);
	e.vendor_id = 0;
	errno = 0;
	CHECK(rdma_set_local_ece(cli.id, &e) == -1 && errno == EINVAL);
	e.vendor_id = ECE_VENDOR;
	e.comp_mask = 1;
	errno = 0;
	CHECK(rdma_set_local_ece(cli.id, &e) == -1 && errno == EINVAL);
	e.comp_mask = 0;
	CHECK_OK(rdma_set_local_ece(cli.id, &e));
	errno = 0;
	CHECK(rdma_get_remote_ece(cli.id, NULL) == -1 && errno == EINVAL);
	memset(&got, 0xa5, sizeof(got));
	CHECK_OK(rdma_get_remote_ece(cli.id, &got));
	CHECK(ece_is(&got, 0, 0));
	/* Once the CM made the id's QP, ECE is the QP's business: both refuse. */
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(cmf_qp(&cli, cli.id));
	errno = 0;
	CHECK(rdma_set_local_ece(cli.id, &e) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_get_remote_ece(cli.id, &got) == -1 && errno == EINVAL);
	/* rdma_create_qp took the QP's ECE, and this device's QPs have none (ibv_query_ece EOPNOTSUPP). */
	CHECK(ibv_query_ece(cli.id->qp, &got) == EOPNOTSUPP);
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	th_defer(id_drop, ev.id);
	memset(&got, 0xa5, sizeof(got));
	CHECK_OK(rdma_get_remote_ece(ev.id, &got));
	CHECK(ece_is(&got, 0, 0));
}

static struct rdma_conn_param ece_param(uint32_t qpn)
{
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };

	p.qp_num = qpn;
	return p;
}

/* A request with the requester's ECE, as the listener's new id sees it; the id in *child. */
static bool ece_request(struct cmf_side *srv, struct cmf_side *cli, uint16_t port, uint32_t options,
			struct rdma_cm_id **child)
{
	struct ibv_ece e = { .vendor_id = ECE_VENDOR, .options = options }, got;
	struct rdma_conn_param p = ece_param(0x123);
	struct rdma_cm_event ev;

	if (cmf_open(cli) != 0 || !cmf_resolve(cli, "127.0.0.1", port) || rdma_set_local_ece(cli->id, &e) != 0 ||
	    rdma_connect(cli->id, &p) != 0 || !cmf_expect(srv->ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev))
		return false;
	*child = ev.id;
	memset(&got, 0xa5, sizeof(got));
	return rdma_get_remote_ece(ev.id, &got) == 0 && ece_is(&got, ECE_VENDOR, options);
}

/*
 * The ECE handshake of an application's own QPs: the REQ carries the
 * requester's vendor and options, the REP the responder's options under the
 * vendor it was offered.
 */
static void test_ece_exchange(void)
{
	static struct cmf_side srv, cli;
	struct ibv_ece e = { .vendor_id = ECE_VENDOR, .options = 0x21 }, got;
	struct rdma_conn_param p = ece_param(0x456);
	struct rdma_cm_id *child = NULL;
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK(ece_request(&srv, &cli, port, 0xa5a5, &child));
	th_defer(id_drop, child);
	CHECK_OK(rdma_set_local_ece(child, &e));
	CHECK_OK(rdma_accept(child, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &ev));
	CHECK(ev.param.conn.qp_num == 0x456);
	memset(&got, 0xa5, sizeof(got));
	CHECK_OK(rdma_get_remote_ece(cli.id, &got));
	CHECK(ece_is(&got, ECE_VENDOR, 0x21));
	CHECK_OK(rdma_establish(cli.id));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
}

/* Without ECE set, the peer reads zeroes (the REQ and the REP carry none). */
static void test_ece_none(void)
{
	static struct cmf_side srv, cli;
	struct rdma_conn_param p = ece_param(0x123);
	struct ibv_ece got;
	struct rdma_cm_event ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	th_defer(id_drop, ev.id);
	memset(&got, 0xa5, sizeof(got));
	CHECK_OK(rdma_get_remote_ece(ev.id, &got));
	CHECK(ece_is(&got, 0, 0));
	CHECK_OK(rdma_accept(ev.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, NULL));
	memset(&got, 0xa5, sizeof(got));
	CHECK_OK(rdma_get_remote_ece(cli.id, &got));
	CHECK(ece_is(&got, 0, 0));
}

/* rdma_reject_ece(3): the requester's REJECTED has status 35 and the private data. */
static void test_reject_ece(void)
{
	static struct cmf_side srv, cli;
	static const char why[] = "no such option";
	struct rdma_cm_id *child = NULL;
	struct rdma_cm_event *ev;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	errno = 0;
	CHECK(rdma_reject_ece(srv.id, NULL, 0) == -1 && errno == EINVAL); /* a listener has no request */
	CHECK(ece_request(&srv, &cli, port, 0xff, &child));
	th_defer(id_drop, child);
	errno = 0;
	CHECK(rdma_reject_ece(child, NULL, 1) == -1 && errno == EINVAL);
	CHECK_OK(rdma_reject_ece(child, why, sizeof(why)));
	ev = cmf_next_event(cli.ch, CMF_WAIT_MS);
	CHECK(ev != NULL);
	th_defer(ev_ack, ev);
	CHECK(ev->event == RDMA_CM_EVENT_REJECTED && ev->status == CM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
	CHECK(ev->param.conn.private_data_len >= sizeof(why));
	CHECK(memcmp(ev->param.conn.private_data, why, sizeof(why)) == 0);
}

/* The requester, having read the responder's ECE in CONNECT_RESPONSE, rejects it: the responder sees 35. */
static void test_reject_ece_response(void)
{
	static struct cmf_side srv, cli;
	struct rdma_conn_param p = ece_param(0x456);
	struct rdma_cm_id *child = NULL;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK(ece_request(&srv, &cli, port, 0x3, &child));
	th_defer(id_drop, child);
	CHECK_OK(rdma_accept(child, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, NULL));
	CHECK_OK(rdma_reject_ece(cli.id, NULL, 0));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_REJECTED, CM_REJ_VENDOR_OPTION_NOT_SUPPORTED, NULL));
}

static void srq_attr(struct ibv_srq_init_attr_ex *a, enum ibv_srq_type type)
{
	memset(a, 0, sizeof(*a));
	a->comp_mask = IBV_SRQ_INIT_ATTR_TYPE;
	a->srq_type = type;
	a->attr.max_wr = 16;
	a->attr.max_sge = 1;
}

static void srq_drop(void *arg)
{
	struct rdma_cm_id *id = arg;

	if (id->srq != NULL)
		rdma_destroy_srq(id);
}

/* rdma_create_srq_ex(3): a basic SRQ on the id's PD; the type bit is required. */
static void test_create_srq_ex(void)
{
	static struct cmf_side s;
	struct sockaddr_in a = cmf_addr4("127.0.0.1", 0);
	struct ibv_srq_init_attr_ex attr;
	struct ibv_srq_attr q;
	struct ibv_recv_wr wr = { .wr_id = 1 }, *bad;

	th_defer(cmf_side_free, &s);
	CHECK_OK(cmf_open(&s));
	CHECK_OK(rdma_bind_addr(s.id, (struct sockaddr *)&a));
	CHECK(s.id->verbs != NULL && s.id->pd != NULL);
	th_defer(srq_drop, s.id);
	srq_attr(&attr, IBV_SRQT_BASIC);
	attr.comp_mask = 0;
	errno = 0;
	CHECK(rdma_create_srq_ex(s.id, &attr) == -1 && errno == EINVAL && s.id->srq == NULL);
	srq_attr(&attr, IBV_SRQT_BASIC);
	CHECK_OK(rdma_create_srq_ex(s.id, &attr));
	CHECK(s.id->srq != NULL && s.id->srq->pd == s.id->pd);
	CHECK(attr.pd == s.id->pd && (attr.comp_mask & IBV_SRQ_INIT_ATTR_PD));
	CHECK(s.id->recv_cq == NULL); /* a basic SRQ has no CQ of its own */
	CHECK_OK(ibv_query_srq(s.id->srq, &q));
	CHECK(q.max_wr >= 16);
	CHECK_OK(ibv_post_srq_recv(s.id->srq, &wr, &bad));
	rdma_destroy_srq(s.id);
	CHECK(s.id->srq == NULL);
}

/* An XRC SRQ without a domain or CQ: the device's XRC domain and a receive CQ of the id's, gone with the SRQ. */
static void test_create_srq_ex_xrc(void)
{
	static struct cmf_side s;
	struct sockaddr_in a = cmf_addr4("127.0.0.1", 0);
	struct ibv_srq_init_attr_ex attr;
	struct ibv_cq *cq;
	uint32_t num = 0;

	th_defer(cmf_side_free, &s);
	CHECK_OK(cmf_open(&s));
	CHECK_OK(rdma_bind_addr(s.id, (struct sockaddr *)&a));
	th_defer(srq_drop, s.id);
	srq_attr(&attr, IBV_SRQT_XRC);
	CHECK_OK(rdma_create_srq_ex(s.id, &attr));
	CHECK(s.id->srq != NULL && s.id->recv_cq != NULL);
	CHECK(attr.xrcd != NULL && attr.cq == s.id->recv_cq);
	CHECK((attr.comp_mask & (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD)) ==
	      (IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD));
	CHECK_OK(ibv_get_srq_num(s.id->srq, &num));
	rdma_destroy_srq(s.id);
	CHECK(s.id->srq == NULL && s.id->recv_cq == NULL && s.id->recv_cq_channel == NULL);
	/* A CQ given is used, and none made. */
	cq = ibv_create_cq(s.id->verbs, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	th_defer(cq_drop, cq);
	srq_attr(&attr, IBV_SRQT_XRC);
	attr.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	attr.cq = cq;
	CHECK_OK(rdma_create_srq_ex(s.id, &attr));
	CHECK(s.id->recv_cq == NULL && attr.cq == cq);
	rdma_destroy_srq(s.id);
}

int main(void)
{
	RUN(test_ece_inputs);
	RUN(test_ece_exchange);
	RUN(test_ece_none);
	RUN(test_reject_ece);
	RUN(test_reject_ece_response);
	RUN(test_create_srq_ex);
	RUN(test_create_srq_ex_xrc);
	return th_summary("test_rdmacm_ece");
}
