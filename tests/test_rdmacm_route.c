/*
 * librdmacm.so.1's source GID and ports, as the kernel's RDMA CM picks them
 * on a RoCE port: the route, the path record and the QP's address use the
 * RoCE v2 GID entry of the id's source address (docs/TOPOLOGY.md: pf0's
 * 192.168.100.1 is mlx5_0's GID 3; 127.0.0.1 the first port's link-local
 * v2 entry, GID 1; on machine 127.0.0.2, resolving machine 127.0.0.3, its
 * own address's entry ::ffff:127.0.0.2, GID 3, as routing picks that source);
 * an id that resolves without binding holds an ephemeral
 * port of its own, which a listener cannot take (EADDRINUSE) until the id
 * is gone.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "rdmacm_fixture.h"

#define PF0_IP "192.168.100.1"
#define PF0_V4_GID 3
#define LOOPBACK_GID 1

static bool gid_at(struct rdma_cm_id *id, int index, const union ibv_gid *g)
{
	union ibv_gid want;

	if (ibv_query_gid(id->verbs, id->port_num, index, &want) != 0)
		return false;
	if (memcmp(want.raw, g->raw, 16) == 0)
		return true;
	fprintf(stderr, "GID is not the port's entry %d\n", index);
	return false;
}

/* The QP's RTR address: the source entry index and the peer's GID. */
static bool qp_av(struct rdma_cm_id *id, int sgid_index, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(id->qp, &a, IBV_QP_AV, &ia) != 0)
		return false;
	if (a.ah_attr.is_global && a.ah_attr.grh.sgid_index == sgid_index &&
	    memcmp(a.ah_attr.grh.dgid.raw, dgid->raw, 16) == 0)
		return true;
	fprintf(stderr, "QP %u: sgid_index %u (expected %d)\n", id->qp->qp_num, a.ah_attr.grh.sgid_index,
		sgid_index);
	return false;
}

/* A connection to ip: both sides' route, path record and QP use ip's entry (index). */
static void connect_on(const char *ip, int index)
{
	static struct cmf_side srv, cli, acc;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1, .retry_count = 7 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTR };
	struct rdma_cm_event ev;
	union ibv_gid own;
	int mask = 0;
	uint16_t port = 0;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &cli);
	th_defer(cmf_side_free, &acc);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, ip, &port, 4));
	CHECK_OK(cmf_open(&cli));
	CHECK(cmf_resolve(&cli, ip, port));
	CHECK(cli.id->route.num_paths == 1);
	/* rdma_get_local_addr names the address whose entry the path starts at. */
	CHECK(rdma_get_local_addr(cli.id)->sa_family == AF_INET);
	CHECK(((struct sockaddr_in *)rdma_get_local_addr(cli.id))->sin_addr.s_addr == inet_addr(ip));
	CHECK(gid_at(cli.id, index, &cli.id->route.path_rec->sgid));
	CHECK(gid_at(cli.id, index, &cli.id->route.addr.addr.ibaddr.sgid));
	own = cli.id->route.addr.addr.ibaddr.sgid;
	CHECK_OK(cmf_qp(&cli, cli.id));
	CHECK_OK(rdma_connect(cli.id, &p));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev));
	acc.id = ev.id;
	CHECK(gid_at(acc.id, index, &acc.id->route.addr.addr.ibaddr.sgid));
	CHECK(memcmp(acc.id->route.addr.addr.ibaddr.dgid.raw, own.raw, 16) == 0);
	/* rdma_init_qp_attr's RTR address, as an application with its own QP would use it. */
	CHECK_OK(rdma_init_qp_attr(acc.id, &qa, &mask));
	CHECK((mask & IBV_QP_AV) && qa.ah_attr.grh.sgid_index == index);
	CHECK(memcmp(qa.ah_attr.grh.dgid.raw, own.raw, 16) == 0);
	CHECK_OK(cmf_qp(&acc, acc.id));
	CHECK_OK(rdma_accept(acc.id, &p));
	CHECK(cmf_expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
	CHECK(cmf_expect(srv.ch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL));
	CHECK(qp_av(cli.id, index, &own));
	CHECK(qp_av(acc.id, index, &own)); /* one port: both ends are its entry */
}

static void test_sgid_of_ipv4(void)
{
	connect_on(PF0_IP, PF0_V4_GID);
}

static void test_sgid_of_loopback(void)
{
	connect_on("127.0.0.1", LOOPBACK_GID);
}

#define MACHINE_SELF "127.0.0.2"
#define MACHINE_PEER "127.0.0.3"

/* In a process standing for machine 127.0.0.2: the route to machine 127.0.0.3 starts at GID 3. */
static int machine_child(void)
{
	struct cmf_side c = { 0 };
	struct sockaddr_in a = cmf_addr4(MACHINE_PEER, 7471);
	union ibv_gid want;
	int ok;

	ok = cmf_open(&c) == 0 && rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&a, 2000) == 0 &&
	     cmf_expect(c.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL) && rdma_resolve_route(c.id, 2000) == 0 &&
	     cmf_expect(c.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	ok = ok && ibv_query_gid(c.id->verbs, c.id->port_num, PF0_V4_GID, &want) == 0;
	ok = ok && want.raw[10] == 0xff && want.raw[11] == 0xff && want.raw[12] == 127 && want.raw[15] == 2;
	ok = ok && memcmp(c.id->route.path_rec->sgid.raw, want.raw, 16) == 0 &&
	     memcmp(c.id->route.addr.addr.ibaddr.sgid.raw, want.raw, 16) == 0;
	cmf_side_free(&c);
	return ok ? 0 : 1;
}

static void test_sgid_to_other_machine(void)
{
	char *args[] = { "test_rdmacm_route", "machine", NULL };
	int status = -1;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		setenv("SOFTDPU_MACHINE", MACHINE_SELF, 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool listen_refused(const char *ip, uint16_t port)
{
	struct cmf_side s = { 0 };
	struct sockaddr_in a = cmf_addr4(ip, port);
	bool refused;

	errno = 0;
	refused = cmf_open(&s) == 0 && rdma_bind_addr(s.id, (struct sockaddr *)&a) == -1 && errno == EADDRINUSE;
	cmf_side_free(&s);
	return refused;
}

/* rdma_resolve_addr(3) without a source: the id is bound to an ephemeral port the kernel reserves. */
static void test_active_ports_reserved(void)
{
	static struct cmf_side srv, a, b, later;
	uint16_t port = 0, pa, pb;

	th_defer(cmf_side_free, &srv);
	th_defer(cmf_side_free, &a);
	th_defer(cmf_side_free, &b);
	th_defer(cmf_side_free, &later);
	CHECK_OK(cmf_open(&srv));
	CHECK_OK(cmf_listen(&srv, "127.0.0.1", &port, 4));
	CHECK_OK(cmf_open(&a));
	CHECK(cmf_resolve(&a, "127.0.0.1", port));
	CHECK_OK(cmf_open(&b));
	CHECK(cmf_resolve(&b, "127.0.0.1", port));
	pa = ntohs(rdma_get_src_port(a.id));
	pb = ntohs(rdma_get_src_port(b.id));
	CHECK(pa != 0 && pb != 0 && pa != pb);
	CHECK(listen_refused("127.0.0.1", pa));
	CHECK(listen_refused("0.0.0.0", pa));
	CHECK(listen_refused("127.0.0.1", pb));
	/* Gone with its id. */
	cmf_side_free(&a);
	CHECK_OK(cmf_open(&later));
	CHECK_OK(cmf_listen(&later, "127.0.0.1", &pa, 4));
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "machine") == 0)
		return machine_child();
	RUN(test_sgid_of_ipv4);
	RUN(test_sgid_of_loopback);
	RUN(test_sgid_to_other_machine);
	RUN(test_active_ports_reserved);
	return th_summary("test_rdmacm_route");
}
