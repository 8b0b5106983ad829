/*
 * The RDMA CM's multicast (rdma_join_multicast(3), rdma_leave_multicast(3)):
 * a UD id with a resolved (or bound) address joins a group; the
 * MULTICAST_JOIN event carries the context given and the group's address
 * (on RoCE v2 the GID ::ffff:<group>), QPN 0xffffff and the Q_Key
 * RDMA_UDP_QKEY; taking it attaches the id's QP, so a datagram sent through
 * that address reaches every member; leaving detaches it. Refusals as the
 * kernel's CM and rdma-core answer them. On an InfiniBand port a group may
 * be named by its GID (AF_IB, as mckey -M does).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "harness.h"
#include "th_proc.h"

#define WAIT_MS 10000 /* hang guard only */
#define POLL_TRIES 10000000L
#define MSG "to the group"
#define MSG_LEN ((uint32_t)sizeof(MSG) - 1)

static uint8_t mem[2][256] __attribute__((aligned(4096)));

static struct sockaddr_in addr4(const char *ip)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

struct member {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct rdma_cm_event join; /* a copy of the MULTICAST_JOIN */
};

static void member_free(void *arg)
{
	struct member *m = arg;

	if (m->ah != NULL)
		ibv_destroy_ah(m->ah);
	if (m->id != NULL && m->id->qp != NULL)
		rdma_destroy_qp(m->id);
	if (m->mr != NULL)
		ibv_dereg_mr(m->mr);
	if (m->cq != NULL)
		ibv_destroy_cq(m->cq);
	if (m->pd != NULL)
		ibv_dealloc_pd(m->pd);
	if (m->id != NULL)
		rdma_destroy_id(m->id);
	if (m->ch != NULL)
		rdma_destroy_event_channel(m->ch);
	memset(m, 0, sizeof(*m));
}

/* The next event of ch within the hang guard, or NULL. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, WAIT_MS) != 1)
		return NULL;
	return rdma_get_cm_event(ch, &ev) == 0 ? ev : NULL;
}

/* Whether the next event is type with status; its copy in *out. */
static bool expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
			 struct rdma_cm_event *out)
{
	struct rdma_cm_event *ev = next_event(ch);
	bool ok;

	if (ev == NULL)
		return false;
	ok = ev->event == type && ev->status == status;
	if (!ok)
		fprintf(stderr, "event %s status %d, expected %s status %d\n", rdma_event_str(ev->event), ev->status,
			rdma_event_str(type), status);
	if (out != NULL)
		*out = *ev;
	rdma_ack_cm_event(ev);
	return ok;
}

/* No event is queued on ch (events are queued by the call that makes them). */
static bool no_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

/* A UDP id of its own channel with its address resolved to group, and a UD QP (with_qp). */
static void member_open(struct member *m, const char *group, bool with_qp, int slot)
{
	struct sockaddr_in g = addr4(group);
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	};

	memset(m, 0, sizeof(*m));
	th_defer(member_free, m);
	m->ch = rdma_create_event_channel();
	CHECK(m->ch != NULL);
	CHECK_OK(rdma_create_id(m->ch, &m->id, NULL, RDMA_PS_UDP));
	CHECK_OK(rdma_resolve_addr(m->id, NULL, (struct sockaddr *)&g, 2000));
	CHECK(expect_event(m->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL));
	CHECK(m->id->verbs != NULL);
	if (!with_qp)
		return;
	m->pd = ibv_alloc_pd(m->id->verbs);
	CHECK(m->pd != NULL);
	m->cq = ibv_create_cq(m->id->verbs, 8, NULL, NULL, 0);
	CHECK(m->cq != NULL);
	a.send_cq = a.recv_cq = m->cq;
	CHECK_OK(rdma_create_qp(m->id, m->pd, &a));
	m->mr = ibv_reg_mr(m->pd, mem[slot], sizeof(mem[slot]), IBV_ACCESS_LOCAL_WRITE);
	CHECK(m->mr != NULL);
}

static void member_join(struct member *m, const char *group, void *context)
{
	struct sockaddr_in g = addr4(group);

	CHECK_OK(rdma_join_multicast(m->id, (struct sockaddr *)&g, context));
	CHECK(expect_event(m->ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0, &m->join));
}

static void post_recv(struct member *m, int slot)
{
	struct ibv_sge s = {.addr = (uintptr_t)mem[slot], .length = sizeof(mem[slot]), .lkey = m->mr->lkey};
	struct ibv_recv_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1}, *bad;

	memset(mem[slot], 0xee, sizeof(mem[slot]));
	CHECK_OK(ibv_post_recv(m->id->qp, &w, &bad));
}

/* m sends MSG to its group through the address and QPN/Q_Key its join event gave. */
static void send_to_group(struct member *m, int slot)
{
	struct ibv_sge s = {.addr = (uintptr_t)mem[slot], .length = MSG_LEN, .lkey = m->mr->lkey};
	struct ibv_send_wr w = {.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc wc;
	long i;

	if (m->ah == NULL)
		m->ah = ibv_create_ah(m->pd, &m->join.param.ud.ah_attr);
	CHECK(m->ah != NULL);
	w.wr.ud.ah = m->ah;
	w.wr.ud.remote_qpn = m->join.param.ud.qp_num;
	w.wr.ud.remote_qkey = m->join.param.ud.qkey;
	memcpy(mem[slot], MSG, MSG_LEN);
	CHECK_OK(ibv_post_send(m->id->qp, &w, &bad));
	for (i = 0; i < POLL_TRIES && ibv_poll_cq(m->cq, 1, &wc) == 0; i++)
		;
	CHECK(i < POLL_TRIES && wc.status == IBV_WC_SUCCESS && wc.wr_id == 2);
}

static void got_msg(struct member *m, int slot, uint32_t from)
{
	struct ibv_wc wc;
	long i;

	for (i = 0; i < POLL_TRIES && ibv_poll_cq(m->cq, 1, &wc) == 0; i++)
		;
	CHECK(i < POLL_TRIES && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV);
	CHECK(wc.byte_len == 40 + MSG_LEN && wc.src_qp == from && memcmp(mem[slot] + 40, MSG, MSG_LEN) == 0);
}

static void got_nothing(struct member *m, int slot)
{
	struct ibv_wc wc;

	for (int i = 0; i < 1000; i++)
		CHECK(ibv_poll_cq(m->cq, 1, &wc) == 0);
	CHECK(mem[slot][40] == 0xee);
}

/* The join event's fields, as the kernel makes them for an IPv4 group on a RoCE v2 port. */
static void test_join_event(void)
{
	static const uint8_t gid[16] = {[10] = 0xff, [11] = 0xff, [12] = 239, [13] = 7, [14] = 8, [15] = 9};
	struct ibv_ah_attr *ah;
	struct ibv_gid_entry e;
	static struct member m;
	int ctx;

	member_open(&m, "239.7.8.9", true, 0);
	member_join(&m, "239.7.8.9", &ctx);
	ah = &m.join.param.ud.ah_attr;
	CHECK(m.join.id == m.id && m.join.param.ud.private_data == &ctx);
	CHECK(m.join.param.ud.qp_num == 0xffffff && m.join.param.ud.qkey == RDMA_UDP_QKEY);
	CHECK(ah->is_global == 1 && memcmp(ah->grh.dgid.raw, gid, 16) == 0 && ah->grh.hop_limit == 64);
	CHECK(ah->dlid == 0 && ah->sl == 0 && ah->port_num == m.id->port_num);
	CHECK_OK(ibv_query_gid_ex(m.id->verbs, 1, ah->grh.sgid_index, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff);
	/* Taking the event attached the QP: its detach works once, and so does the CM's leave after it. */
	CHECK_OK(ibv_detach_mcast(m.id->qp, &ah->grh.dgid, 0));
	CHECK_ERR(ibv_detach_mcast(m.id->qp, &ah->grh.dgid, 0), EINVAL);
	CHECK_OK(rdma_leave_multicast(m.id, (struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(0xef070809) }));
}

/* Two members of a group: a datagram from one reaches the other; after a leave, nothing does. */
static void test_traffic_and_leave(void)
{
	struct sockaddr_in g = addr4("239.7.8.10");
	static struct member a, b;

	member_open(&a, "239.7.8.10", true, 0);
	member_open(&b, "239.7.8.10", true, 1);
	member_join(&a, "239.7.8.10", NULL);
	member_join(&b, "239.7.8.10", NULL);
	post_recv(&b, 1);
	send_to_group(&a, 0);
	got_msg(&b, 1, a.id->qp->qp_num);
	/* a's own QP is a member too: its receive (none posted) would get it; drop that by leaving first. */
	CHECK_OK(rdma_leave_multicast(b.id, (struct sockaddr *)&g));
	errno = 0;
	CHECK(rdma_leave_multicast(b.id, (struct sockaddr *)&g) == -1 && errno == EADDRNOTAVAIL);
	/* The leave detached b's QP. */
	CHECK_ERR(ibv_detach_mcast(b.id->qp, &b.join.param.ud.ah_attr.grh.dgid, 0), EINVAL);
	post_recv(&b, 1);
	send_to_group(&a, 0);
	got_nothing(&b, 1);
	CHECK_OK(rdma_leave_multicast(a.id, (struct sockaddr *)&g));
}

/* Joined send-only: the event comes, the QP is not attached (rdma-core attaches only full members). */
static void test_send_only(void)
{
	struct sockaddr_in g = addr4("239.7.8.11");
	struct rdma_cm_join_mc_attr_ex x = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		.addr = (struct sockaddr *)&g,
	};
	struct rdma_cm_event ev;
	static struct member m;

	member_open(&m, "239.7.8.11", true, 0);
	CHECK_OK(rdma_join_multicast_ex(m.id, &x, NULL));
	CHECK(expect_event(m.ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0, &ev));
	CHECK_ERR(ibv_detach_mcast(m.id->qp, &ev.param.ud.ah_attr.grh.dgid, 0), EINVAL);
	CHECK_OK(rdma_leave_multicast(m.id, (struct sockaddr *)&g));
}

/* A group left before its event was taken: the event goes with it. */
static void test_leave_drops_event(void)
{
	struct sockaddr_in g = addr4("239.7.8.12");
	static struct member m;

	member_open(&m, "239.7.8.12", true, 0);
	CHECK_OK(rdma_join_multicast(m.id, (struct sockaddr *)&g, NULL));
	CHECK(!no_event(m.ch));
	CHECK_OK(rdma_leave_multicast(m.id, (struct sockaddr *)&g));
	CHECK(no_event(m.ch));
}

/* A synchronous id (no channel) gets the join's outcome from the call, its event in id->event. */
static void test_sync_id(void)
{
	struct sockaddr_in g = addr4("239.7.8.13");
	struct rdma_cm_id *id = NULL;

	CHECK_OK(rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP));
	CHECK_OK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&g, 2000));
	CHECK_OK(rdma_join_multicast(id, (struct sockaddr *)&g, &g));
	CHECK(id->event != NULL && id->event->event == RDMA_CM_EVENT_MULTICAST_JOIN);
	CHECK(id->event->param.ud.private_data == &g && id->event->param.ud.qp_num == 0xffffff);
	CHECK_OK(rdma_leave_multicast(id, (struct sockaddr *)&g));
	CHECK_OK(rdma_destroy_id(id));
}

static void test_refusals(void)
{
	struct sockaddr_in g = addr4("239.7.8.14");
	struct sockaddr_in6 g6 = {.sin6_family = AF_INET6};
	struct rdma_cm_join_mc_attr_ex x = {.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS, .addr = (struct sockaddr *)&g};
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *tcp = NULL, *idle = NULL;
	static struct member m;

	CHECK(ch != NULL);
	CHECK_OK(rdma_create_id(ch, &tcp, NULL, RDMA_PS_TCP));
	CHECK_OK(rdma_create_id(ch, &idle, NULL, RDMA_PS_UDP));
	CHECK_OK(rdma_resolve_addr(tcp, NULL, (struct sockaddr *)&g, 2000));
	CHECK(expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL));
	errno = 0;
	CHECK(rdma_join_multicast(tcp, (struct sockaddr *)&g, NULL) == -1 && errno == EINVAL); /* not UD */
	errno = 0;
	CHECK(rdma_join_multicast(idle, (struct sockaddr *)&g, NULL) == -1 && errno == EINVAL); /* no address */
	errno = 0;
	CHECK(rdma_join_multicast_ex(idle, &x, NULL) == -1 && errno == EINVAL); /* no join flags */
	x.comp_mask = RDMA_CM_JOIN_MC_ATTR_RESERVED;
	errno = 0;
	CHECK(rdma_join_multicast_ex(idle, &x, NULL) == -1 && errno == ENOTSUP);
	errno = 0;
	CHECK(rdma_leave_multicast(idle, (struct sockaddr *)&g) == -1 && errno == EADDRNOTAVAIL);
	CHECK(no_event(ch));
	CHECK_OK(rdma_destroy_id(tcp));
	CHECK_OK(rdma_destroy_id(idle));
	rdma_destroy_event_channel(ch);
	/* An IPv6 group on a RoCE v2 port: the kernel's ENOTSUPP (524). */
	member_open(&m, "239.7.8.14", false, 0);
	inet_pton(AF_INET6, "ff0e::1234", &g6.sin6_addr);
	errno = 0;
	CHECK(rdma_join_multicast(m.id, (struct sockaddr *)&g6, NULL) == -1 && errno == 524);
	CHECK(no_event(m.ch));
}

/* The role on an InfiniBand port: prints the join event's group address, then what a member received. */
static int role_ib(void)
{
	static struct member a, b;
	const struct ibv_ah_attr *ah;
	char hex[40];

	member_open(&a, "239.1.1.1", true, 0);
	member_open(&b, "239.1.1.1", true, 1);
	member_join(&a, "239.1.1.1", NULL);
	member_join(&b, "239.1.1.1", NULL);
	if (th_case_failed != 0)
		return 2;
	ah = &a.join.param.ud.ah_attr;
	th_hex_encode(ah->grh.dgid.raw, 16, hex);
	printf("JOIN %s %#x %u %u %#x\n", hex, ah->dlid, ah->grh.hop_limit, ah->is_global, a.join.param.ud.qp_num);
	post_recv(&b, 1);
	send_to_group(&a, 0);
	got_msg(&b, 1, a.id->qp->qp_num);
	printf("GOT %d\n", th_case_failed);
	/* A group named by its GID (AF_IB, mckey -M): the event's destination is that GID. */
	{
		struct sockaddr_ib sib = {.sib_family = AF_IB};
		struct rdma_cm_event ev;

		inet_pton(AF_INET6, "ff0e::5344:77", &sib.sib_addr);
		memset(&ev, 0, sizeof(ev));
		if (rdma_join_multicast(b.id, (struct sockaddr *)&sib, &sib) != 0 ||
		    !expect_event(b.ch, RDMA_CM_EVENT_MULTICAST_JOIN, 0, &ev) ||
		    rdma_leave_multicast(b.id, (struct sockaddr *)&sib) != 0)
			printf("JOINIB %s\n", strerror(errno));
		ah = &ev.param.ud.ah_attr;
		th_hex_encode(ah->grh.dgid.raw, 16, hex);
		printf("JOINIB %s %#x %u %d\n", hex, ah->dlid, ah->is_global, ev.param.ud.private_data == &sib);
	}
	fflush(stdout);
	/* Left, so that the QPs are free to go (a QP in a group cannot be destroyed). */
	(void)rdma_leave_multicast(a.id, &a.id->route.addr.dst_addr);
	(void)rdma_leave_multicast(b.id, &b.id->route.addr.dst_addr);
	th_unwind(0, 0);
	return 0;
}

/*
 * On an InfiniBand port (a topology's link=ib) the group's GID is the IPoIB
 * mapping of its address with the RDMA CM's signature (ff12:4001:ffff::
 * and the address's low 28 bits), and the event names a multicast LID.
 */
static void test_infiniband_port(void)
{
	static const char topo[] = "function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0"
				   " mac=02:53:44:0b:00:00 ipv4=10.0.0.1 link=ib\n";
	char path[] = "/tmp/softdpu-cm-mcast-topoXXXXXX", hex[40] = "";
	int fd = mkstemp(path), got = -1;
	unsigned int dlid = 0, hop = 0, global = 0, qpn = 0;
	struct th_proc *p;
	const char *l;

	CHECK(fd >= 0 && write(fd, topo, sizeof(topo) - 1) == (ssize_t)(sizeof(topo) - 1));
	close(fd);
	setenv("SOFTDPU_TOPOLOGY", path, 1);
	p = th_proc_start(NULL, "ib", NULL);
	unsetenv("SOFTDPU_TOPOLOGY");
	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "JOIN %32s %x %u %u %x", hex, &dlid, &hop, &global, &qpn) == 5);
	CHECK(strcmp(hex, "ff124001ffff000000000000" "0f010101") == 0);
	CHECK(dlid >= 0xc000 && dlid < 0xffff && global == 1 && qpn == 0xffffff);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "GOT %d", &got) == 1 && got == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "JOINIB %32s %x %u %d", hex, &dlid, &global, &got) == 4);
	CHECK(strcmp(hex, "ff0e0000000000000000000053440077") == 0 && dlid >= 0xc000 && dlid < 0xffff &&
	      global == 1 && got == 1);
	CHECK(th_proc_wait(p) == 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "ib") == 0)
		return role_ib();
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_join_event);
	RUN(test_traffic_and_leave);
	RUN(test_send_only);
	RUN(test_leave_drops_event);
	RUN(test_sync_id);
	RUN(test_refusals);
	RUN(test_infiniband_port);
	return th_summary("test_rdmacm_mcast");
}
