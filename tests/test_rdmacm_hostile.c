/*
 * The RDMA CM against a hostile peer: any process of the user can reach a
 * listener's socket (and a connecting id's listener may be anybody), so a
 * raw SOCK_SEQPACKET peer here sends what no CM would: messages of the wrong
 * size, private data longer than the IB CM's messages carry, unknown types,
 * messages that do not belong to the id's state, REQs whose addresses are
 * not IP ones or whose kind is not the listener's, floods past the backlog,
 * connections closed at once or held open. After each, the application has
 * seen only what the kernel's RDMA CM gives (a CONNECT_REQUEST only for a
 * well-formed REQ: rdma_get_cm_event(3)), a real client still connects and
 * a SEND crosses (rdma_connect(3), rdma_accept(3)), and the process holds
 * no more descriptors than before.
 *
 * The wire format is the library's own (src/rdmacm/cm_int.h).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cm_int.h"
#include "harness.h"
#include "rdmacm_fixture.h"

#define CM_TIMEOUT_MS "300"
#define GUARD_MS 5000 /* hang guard only */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Whether the process gets back to n descriptors (the CM thread closes its side soon after the peer). */
static bool fds_back_to(int n)
{
	for (int i = 0; i < GUARD_MS / 10; i++) {
		if (count_fds() == n)
			return true;
		usleep(10000);
	}
	fprintf(stderr, "%d descriptors, %d before\n", count_fds(), n);
	return false;
}

static socklen_t port_name(struct sockaddr_un *sun, uint16_t port)
{
	char name[96];
	int n = snprintf(name, sizeof(name), "softdpu-rdmacm-u%u-ps%x-%u", (unsigned)getuid(), (unsigned)RDMA_PS_TCP,
			 (unsigned)port);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + 1, name, (size_t)n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* A raw connection to the wildcard listener of port, -1 on failure. */
static int raw_connect(uint16_t port)
{
	struct sockaddr_un sun;
	socklen_t len = port_name(&sun, port);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, len) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void close_fd(void *arg)
{
	int *fd = arg;

	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A REQ as a client of 127.0.0.1 sends it to port, with one byte of private data naming it. */
static void good_req(struct cm_msg *m, uint16_t port, uint8_t mark)
{
	struct sockaddr_in src = cmf_addr4("127.0.0.1", 40000), dst = cmf_addr4("127.0.0.1", port);

	memset(m, 0, sizeof(*m));
	m->type = CM_MSG_REQ;
	m->qpn = 0x123;
	m->psn = 1;
	m->responder_resources = 1;
	m->initiator_depth = 1;
	m->retry_count = 7;
	memcpy(&m->src, &src, sizeof(src));
	memcpy(&m->dst, &dst, sizeof(dst));
	m->pdata_len = 1;
	m->pdata[0] = mark;
}

static bool raw_send(int fd, const void *m, size_t n)
{
	return send(fd, m, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* The next message on fd within the hang guard: its length, 0 at EOF, -1 for none. */
static ssize_t raw_recv(int fd, struct cm_msg *m)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, GUARD_MS) != 1)
		return -1;
	return recv(fd, m, sizeof(*m), 0);
}

/* The next event of ch is a CONNECT_REQUEST whose private data starts with mark; its id in *id. */
static bool expect_req(struct rdma_event_channel *ch, uint8_t mark, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev = cmf_next_event(ch, GUARD_MS);
	bool ok;

	if (ev == NULL) {
		fprintf(stderr, "no CONNECT_REQUEST (mark %u)\n", mark);
		return false;
	}
	ok = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && ev->status == 0 &&
	     ev->param.conn.private_data_len == CM_REQ_PDATA &&
	     ((const uint8_t *)ev->param.conn.private_data)[0] == mark;
	if (!ok)
		fprintf(stderr, "event %s status %d, mark %u expected\n", rdma_event_str(ev->event), ev->status, mark);
	*id = ev->id;
	rdma_ack_cm_event(ev);
	return ok;
}

/* The next event of ch is ESTABLISHED, the REP's private data starting with mark. */
static bool expect_established(struct rdma_event_channel *ch, uint8_t mark)
{
	struct rdma_cm_event *ev = cmf_next_event(ch, GUARD_MS);
	bool ok;

	if (ev == NULL)
		return false;
	ok = ev->event == RDMA_CM_EVENT_ESTABLISHED && ev->status == 0 &&
	     ev->param.conn.private_data_len == CM_REP_PDATA &&
	     ((const uint8_t *)ev->param.conn.private_data)[0] == mark;
	if (!ok)
		fprintf(stderr, "event %s status %d, ESTABLISHED with mark %u expected\n", rdma_event_str(ev->event),
			ev->status, mark);
	rdma_ack_cm_event(ev);
	return ok;
}

static void side_free(void *arg)
{
	cmf_side_free(arg);
}

/* A real client reaches the listener srv on port, is accepted, and a SEND crosses; all torn down after. */
static bool real_client_works(struct cmf_side *srv, uint16_t port)
{
	struct cmf_side cli = { 0 }, conn = { 0 };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	char sbuf[24] = "through the hostile CM", rbuf[24] = { 0 };
	struct ibv_mr *smr = NULL, *rmr = NULL;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr, *bad_s;
	struct rdma_cm_event ev;
	struct ibv_sge sge;
	struct ibv_wc wc;
	bool ok = false;
	int n = 0;

	if (cmf_open(&cli) != 0 || !cmf_resolve(&cli, "127.0.0.1", port) || cmf_qp(&cli, cli.id) != 0 ||
	    rdma_connect(cli.id, &p) != 0 || !cmf_expect(srv->ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev))
		goto out;
	conn.id = ev.id;
	if (cmf_qp(&conn, conn.id) != 0)
		goto out;
	rmr = ibv_reg_mr(conn.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(cli.pd, sbuf, sizeof(sbuf), 0);
	if (rmr == NULL || smr == NULL)
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)rbuf, .length = sizeof(rbuf), .lkey = rmr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	if (ibv_post_recv(conn.id->qp, &rwr, &bad_r) != 0 || rdma_accept(conn.id, &p) != 0 ||
	    !cmf_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL) ||
	    !cmf_expect(srv->ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL))
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = sizeof(sbuf), .lkey = smr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	if (ibv_post_send(cli.id->qp, &swr, &bad_s) != 0)
		goto out;
	for (int i = 0; i < 10000000 && n == 0; i++)
		n = ibv_poll_cq(conn.cq, 1, &wc);
	ok = n == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == sizeof(sbuf) && memcmp(sbuf, rbuf, sizeof(sbuf)) == 0;
	if (!ok)
		fprintf(stderr, "the SEND did not cross\n");
	ok = ok && rdma_disconnect(cli.id) == 0 && cmf_expect(srv->ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL) &&
	     rdma_disconnect(conn.id) == 0 && cmf_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
out:
	if (smr != NULL)
		ibv_dereg_mr(smr);
	if (rmr != NULL)
		ibv_dereg_mr(rmr);
	cmf_side_free(&conn);
	cmf_side_free(&cli);
	return ok;
}

static struct cmf_side srv;
static uint16_t srv_port;
static int fd_base;

/* A wildcard listener on a free port, with backlog; the process's descriptor count before it. */
static void listen_any(int backlog)
{
	fd_base = count_fds();
	srv_port = 0;
	th_defer(side_free, &srv);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "0.0.0.0", &srv_port, backlog));
}

/* What ends every case: the listener takes a real client, and once it is gone nothing is left. */
static void finish(void)
{
	CHECK(cmf_quiet(srv.ch));
	CHECK(real_client_works(&srv, srv_port));
	CHECK(cmf_quiet(srv.ch));
	cmf_side_free(&srv);
	CHECK(fds_back_to(fd_base));
}

/*
 * What is not a REQ, sent first on a connection, is dropped: the next
 * well-formed REQ on the same connection is the listener's only event.
 */
static void test_garbage_before_req(void)
{
	static int fd = -1;
	struct rdma_cm_id *child;
	struct cm_msg m, r;
	uint8_t big[sizeof(struct cm_msg) + 16];
	static const uint8_t types[] = { 0, CM_MSG_REP, CM_MSG_RTU, CM_MSG_REJ, CM_MSG_DREQ, CM_MSG_DREP,
					 CM_MSG_SIDR_REP, 9, 0x7f, 0xff };

	listen_any(8);
	th_defer(close_fd, &fd);
	fd = raw_connect(srv_port);
	CHECK(fd >= 0);
	good_req(&m, srv_port, 0xee); /* what must never be a request */
	/* Too short: one byte, and all but the last. */
	CHECK(raw_send(fd, &m, 1));
	CHECK(raw_send(fd, &m, sizeof(m) - 1));
	/* Too long: a well-formed REQ with bytes after it. */
	memset(big, 0x5a, sizeof(big));
	memcpy(big, &m, sizeof(m));
	CHECK(raw_send(fd, big, sizeof(big)));
	/* Private data longer than a REQ carries (56), and longer than any message's (220). */
	for (unsigned len = CM_REQ_PDATA + 1; len <= 255; len += 41) {
		good_req(&r, srv_port, 0xee);
		r.pdata_len = (uint8_t)len;
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	/* Every other type, known or not, to an id that waits for its REQ. */
	for (size_t i = 0; i < sizeof(types); i++) {
		r = m;
		r.type = types[i];
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	good_req(&m, srv_port, 0xa1);
	CHECK(raw_send(fd, &m, sizeof(m)));
	CHECK(expect_req(srv.ch, 0xa1, &child));
	CHECK(cmf_quiet(srv.ch));
	/* The child answers as any: rejected, the peer reads the REJ and the connection's end. */
	CHECK_OK(rdma_reject(child, NULL, 0));
	CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REJ && r.status == CM_REJ_CONSUMER_DEFINED);
	CHECK_OK(rdma_destroy_id(child));
	close_fd(&fd);
	finish();
}

/*
 * A REQ the kernel's RDMA CM could not have passed on (addresses that are
 * not one IP family; a SIDR REQ to a connected-mode listener) gives the
 * application nothing: the IB CM rejects it as the consumer's refusal.
 */
static void test_malformed_req_refused(void)
{
	static int fd = -1;
	struct cm_msg m, r;
	struct sockaddr_in6 s6;

	listen_any(8);
	th_defer(close_fd, &fd);
	for (int c = 0; c < 6; c++) {
		fd = raw_connect(srv_port);
		CHECK(fd >= 0);
		good_req(&m, srv_port, (uint8_t)c);
		switch (c) {
		case 0:
			m.dst.ss_family = AF_UNIX;
			break;
		case 1:
			m.src.ss_family = 0;
			break;
		case 2:
			m.src.ss_family = m.dst.ss_family = 0xffff;
			break;
		case 3: /* an IPv6 source to an IPv4 destination */
			memset(&s6, 0, sizeof(s6));
			s6.sin6_family = AF_INET6;
			s6.sin6_addr.s6_addr[15] = 1;
			memcpy(&m.src, &s6, sizeof(s6));
			break;
		case 4:
			m.dst.ss_family = AF_INET6; /* an IPv4 address read as IPv6 */
			break;
		default:
			m.type = CM_MSG_SIDR_REQ;
			break;
		}
		CHECK(raw_send(fd, &m, sizeof(m)));
		if (c == 5)
			CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_SIDR_REP &&
			      r.status == CM_SIDR_REJECT);
		else
			CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REJ &&
			      r.status == CM_REJ_CONSUMER_DEFINED);
		CHECK(raw_recv(fd, &r) == 0);
		CHECK(cmf_quiet(srv.ch));
		close_fd(&fd);
	}
	finish();
}

/*
 * The port of a REQ's destination is the listener's, whatever the REQ says:
 * the kernel takes it from the service ID the REQ reached.
 */
static void test_req_port_is_listeners(void)
{
	static int fd = -1;
	struct rdma_cm_id *child;
	struct cm_msg m, r;

	listen_any(8);
	th_defer(close_fd, &fd);
	fd = raw_connect(srv_port);
	CHECK(fd >= 0);
	good_req(&m, srv_port, 0xb2);
	((struct sockaddr_in *)&m.dst)->sin_port = htons((uint16_t)(srv_port + 1));
	CHECK(raw_send(fd, &m, sizeof(m)));
	CHECK(expect_req(srv.ch, 0xb2, &child));
	CHECK(ntohs(rdma_get_src_port(child)) == srv_port);
	CHECK(ntohs(rdma_get_dst_port(child)) == 40000);
	CHECK_OK(rdma_reject(child, NULL, 0));
	CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REJ);
	CHECK_OK(rdma_destroy_id(child));
	close_fd(&fd);
	finish();
}

/*
 * A passive id's messages out of place: in REQ_RCVD (nothing answered yet)
 * and in the accepted state waiting for the RTU, a REQ, a REP, a DREP or a
 * SIDR REQ or REP change nothing; a peer that then never sends the RTU ends
 * in UNREACHABLE (-ETIMEDOUT), as the IB CM's REP times out.
 */
static void test_passive_out_of_state(void)
{
	static int fd = -1;
	static struct cmf_side conn;
	struct rdma_cm_id *child;
	struct cm_msg m, r;
	/* Those that belong to neither state (the CM thread may read them before or after the accept). */
	static const uint8_t junk[] = { CM_MSG_REQ, CM_MSG_REP, CM_MSG_DREP, CM_MSG_SIDR_REQ, CM_MSG_SIDR_REP };

	listen_any(8);
	th_defer(close_fd, &fd);
	th_defer(side_free, &conn);
	fd = raw_connect(srv_port);
	CHECK(fd >= 0);
	good_req(&m, srv_port, 0xc3);
	CHECK(raw_send(fd, &m, sizeof(m)));
	CHECK(expect_req(srv.ch, 0xc3, &child));
	conn.id = child;
	for (size_t i = 0; i < sizeof(junk); i++) {
		r = m;
		r.type = junk[i];
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	CHECK_OK(cmf_qp(&conn, child));
	CHECK_OK(rdma_accept(child, NULL));
	CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REP && r.qpn == child->qp->qp_num);
	for (size_t i = 0; i < sizeof(junk); i++) {
		r = m;
		r.type = junk[i];
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL));
	CHECK(cmf_quiet(srv.ch));
	close_fd(&fd);
	cmf_side_free(&conn);
	finish();
}

/*
 * A connected passive id: a second REQ, a REP, an RTU or a REJ change
 * nothing; a DREQ is one DISCONNECTED, and a second DREQ nothing more.
 */
static void test_passive_connected(void)
{
	static int fd = -1;
	static struct cmf_side conn;
	struct rdma_cm_id *child;
	struct cm_msg m, r;
	static const uint8_t junk[] = { CM_MSG_REQ, CM_MSG_REP, CM_MSG_RTU, CM_MSG_REJ, CM_MSG_DREP, CM_MSG_SIDR_REQ,
					CM_MSG_SIDR_REP };

	listen_any(8);
	th_defer(close_fd, &fd);
	th_defer(side_free, &conn);
	fd = raw_connect(srv_port);
	CHECK(fd >= 0);
	good_req(&m, srv_port, 0xd4);
	CHECK(raw_send(fd, &m, sizeof(m)));
	CHECK(expect_req(srv.ch, 0xd4, &child));
	conn.id = child;
	CHECK_OK(cmf_qp(&conn, child));
	CHECK_OK(rdma_accept(child, NULL));
	CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REP);
	r = m;
	r.type = CM_MSG_RTU;
	r.pdata_len = 0;
	CHECK(raw_send(fd, &r, sizeof(r)));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
	for (size_t i = 0; i < sizeof(junk); i++) {
		r = m;
		r.type = junk[i];
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	r = m;
	r.type = CM_MSG_DREQ;
	r.pdata_len = 0;
	CHECK(raw_send(fd, &r, sizeof(r)));
	CHECK(raw_send(fd, &r, sizeof(r)));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL));
	CHECK(cmf_quiet(srv.ch));
	close_fd(&fd);
	cmf_side_free(&conn);
	finish();
}

/*
 * REQs past the backlog (2): none is lost nor given twice, each comes as
 * the requests before it are retrieved; and when a flood's connections
 * close with their REQs still waiting, those go unseen or come as requests
 * of peers already gone, and nothing of them stays behind.
 */
static void test_req_flood(void)
{
	static int fds[16] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *child;
	bool seen[16] = { false };
	struct cm_msg m, r;

	listen_any(2);
	for (int i = 0; i < 16; i++)
		th_defer(close_fd, &fds[i]);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 16; i++) {
			fds[i] = raw_connect(srv_port);
			CHECK(fds[i] >= 0);
			good_req(&m, srv_port, (uint8_t)i);
			CHECK(raw_send(fds[i], &m, sizeof(m)));
		}
		if (round == 1)
			break;
		for (int i = 0; i < 16; i++) {
			ev = cmf_next_event(srv.ch, GUARD_MS);
			CHECK(ev != NULL && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST);
			m.pdata[0] = ((const uint8_t *)ev->param.conn.private_data)[0];
			child = ev->id;
			rdma_ack_cm_event(ev);
			CHECK(m.pdata[0] < 16 && !seen[m.pdata[0]]);
			seen[m.pdata[0]] = true;
			CHECK_OK(rdma_reject(child, NULL, 0));
			CHECK(raw_recv(fds[m.pdata[0]], &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_REJ);
			CHECK_OK(rdma_destroy_id(child));
		}
		CHECK(cmf_quiet(srv.ch));
		for (int i = 0; i < 16; i++)
			close_fd(&fds[i]);
	}
	/* The second flood: two retrieved, then every requester gone. */
	CHECK(expect_req(srv.ch, 0, &child));
	CHECK_OK(rdma_destroy_id(child));
	CHECK(expect_req(srv.ch, 1, &child));
	for (int i = 0; i < 16; i++)
		close_fd(&fds[i]);
	CHECK_OK(rdma_destroy_id(child));
	while ((ev = cmf_next_event(srv.ch, 200)) != NULL) {
		CHECK(ev->event == RDMA_CM_EVENT_CONNECT_REQUEST);
		child = ev->id;
		rdma_ack_cm_event(ev);
		CHECK_OK(rdma_destroy_id(child));
	}
	finish();
}

/* Peers that connect and close at once, sending nothing, leave nothing behind. */
static void test_connect_and_close(void)
{
	listen_any(8);
	for (int i = 0; i < 64; i++) {
		int fd = raw_connect(srv_port);

		CHECK(fd >= 0);
		close(fd);
	}
	finish();
}

/*
 * Connections held open without a REQ: the CM closes each once the CM's
 * response timeout (SOFTDPU_CM_TIMEOUT_MS) passes, as the IB CM keeps no
 * state for a requester that sent nothing; meanwhile a real client connects.
 */
static void test_held_open(void)
{
	static int fds[64];
	struct cm_msg r;

	for (int i = 0; i < 64; i++)
		fds[i] = -1;
	listen_any(8);
	for (int i = 0; i < 64; i++)
		th_defer(close_fd, &fds[i]);
	for (int i = 0; i < 64; i++) {
		fds[i] = raw_connect(srv_port);
		CHECK(fds[i] >= 0);
	}
	CHECK(real_client_works(&srv, srv_port));
	for (int i = 0; i < 64; i++)
		CHECK(raw_recv(fds[i], &r) == 0);
	for (int i = 0; i < 64; i++)
		close_fd(&fds[i]);
	finish();
}

/*
 * The other way: a listener the test makes by hand that a real rdma_connect
 * reaches. Before the REP: short, long and unknown messages, an RTU, a DREP,
 * a DREQ and a SIDR REP (the reply of a UD lookup, not of a connection) are
 * dropped; the REP then establishes, and once connected a REP, RTU or REJ
 * changes nothing; the DREQ disconnects.
 */
static void test_hostile_listener(void)
{
	static int lfd = -1, fd = -1;
	static struct cmf_side cli;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	static const uint8_t early[] = { 0, CM_MSG_REQ, CM_MSG_RTU, CM_MSG_DREP, CM_MSG_DREQ, CM_MSG_SIDR_REQ,
					 CM_MSG_SIDR_REP, 9, 0xff };
	static const uint8_t late[] = { CM_MSG_REQ, CM_MSG_REP, CM_MSG_RTU, CM_MSG_REJ, CM_MSG_DREP, CM_MSG_SIDR_REP };
	uint8_t big[sizeof(struct cm_msg) + 8];
	struct sockaddr_un sun;
	struct cm_msg req, r;
	uint16_t port = 0;
	int base = count_fds();

	th_defer(close_fd, &lfd);
	th_defer(close_fd, &fd);
	th_defer(side_free, &cli);
	/* A free port: bound by a real id, then taken over by hand. */
	CHECK_OK(cmf_open(&srv));
	th_defer(side_free, &srv);
	CHECK_OK(cmf_listen(&srv, "0.0.0.0", &port, 1));
	cmf_side_free(&srv);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	CHECK_OK(bind(lfd, (struct sockaddr *)&sun, port_name(&sun, port)));
	CHECK_OK(listen(lfd, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, "127.0.0.1", port));
	CHECK_OK(cmf_qp(&cli, cli.id));
	CHECK_OK(rdma_connect(cli.id, &p));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(raw_recv(fd, &req) == (ssize_t)sizeof(req) && req.type == CM_MSG_REQ && req.qpn == cli.id->qp->qp_num);
	r = req;
	r.pdata_len = 0;
	CHECK(raw_send(fd, &r, 3));
	memset(big, 0, sizeof(big));
	r.type = CM_MSG_REP;
	r.pdata_len = 1;
	r.pdata[0] = 0xee; /* what must never be the answer */
	memcpy(big, &r, sizeof(r));
	CHECK(raw_send(fd, big, sizeof(big))); /* a REP with bytes after it */
	r.pdata_len = CM_REP_PDATA + 1;
	CHECK(raw_send(fd, &r, sizeof(r)));
	for (size_t i = 0; i < sizeof(early); i++) {
		r = req;
		r.type = early[i];
		r.pdata_len = 0;
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	r = req;
	r.type = CM_MSG_REP;
	r.pdata_len = 0;
	r.qpn = cli.id->qp->qp_num; /* its own QP: a loopback connection of one QP is still a QP to move */
	r.pdata_len = 1;
	r.pdata[0] = 0xa5;
	CHECK(raw_send(fd, &r, sizeof(r)));
	CHECK(expect_established(cli.ch, 0xa5));
	CHECK(raw_recv(fd, &r) == (ssize_t)sizeof(r) && r.type == CM_MSG_RTU);
	for (size_t i = 0; i < sizeof(late); i++) {
		r = req;
		r.type = late[i];
		r.pdata_len = 0;
		CHECK(raw_send(fd, &r, sizeof(r)));
	}
	r = req;
	r.type = CM_MSG_DREQ;
	r.pdata_len = 0;
	CHECK(raw_send(fd, &r, sizeof(r)));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL));
	CHECK(cmf_quiet(cli.ch));
	cmf_side_free(&cli);
	close_fd(&fd);
	close_fd(&lfd);
	CHECK(fds_back_to(base));
}

int main(void)
{
	/* The named machine's ports have other names; the timeout short so held connections end soon. */
	unsetenv("SOFTDPU_MACHINE");
	setenv("SOFTDPU_CM_TIMEOUT_MS", CM_TIMEOUT_MS, 1);
	/* The device and the CM thread opened once for the process: the counts of the cases start after. */
	if (cmf_open(&srv) == 0 && cmf_listen(&srv, "0.0.0.0", &srv_port, 1) == 0)
		(void)real_client_works(&srv, srv_port);
	cmf_side_free(&srv);
	RUN(test_garbage_before_req);
	RUN(test_malformed_req_refused);
	RUN(test_req_port_is_listeners);
	RUN(test_passive_out_of_state);
	RUN(test_passive_connected);
	RUN(test_req_flood);
	RUN(test_connect_and_close);
	RUN(test_held_open);
	RUN(test_hostile_listener);
	return th_summary("test_rdmacm_hostile");
}
