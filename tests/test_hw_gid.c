/*
 * hw_gid: the ports' GID tables from the topology, where a destination GID
 * leads (a port here, another machine, nowhere) and the local port an IP
 * address names for the RDMA CM (hw_addr_port), as docs/TOPOLOGY.md
 * describes them for the built-in topology: host pf0 mlx5_0
 * (02:53:44:0b:00:00, 192.168.100.1, fd00:100::1), pf1 mlx5_1 (...:01,
 * 192.168.101.1), pf0vf0 mlx5_2 (...:02, 192.168.100.2), pf0vf1 mlx5_3
 * (...:03, 192.168.100.3, fd00:100::3), pf1vf0 mlx5_4 (...:04); DPU p0
 * mlx5_0 (02:53:44:03:00:00, 192.168.100.254).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "th_proc.h"
#include "hw_gid.h"
#include "hw_topology.h"

static int reload(const char *side, const char *topo_path)
{
	if (side != NULL)
		setenv("SOFTDPU_SIDE", side, 1);
	else
		unsetenv("SOFTDPU_SIDE");
	if (topo_path != NULL)
		setenv("SOFTDPU_TOPOLOGY", topo_path, 1);
	else
		unsetenv("SOFTDPU_TOPOLOGY");
	return hw_topology_reload();
}

static void reload_default_cb(void *arg)
{
	(void)arg;
	(void)reload(NULL, NULL);
}

static void gid_of(const char *text, uint8_t g[16])
{
	memset(g, 0, 16);
	CHECK(inet_pton(AF_INET6, text, g) == 1);
}

static int port_of4(const char *ip, struct hw_addr_port *out)
{
	struct sockaddr_in in = {.sin_family = AF_INET};

	if (inet_pton(AF_INET, ip, &in.sin_addr) != 1)
		return -1;
	return hw_addr_port((const struct sockaddr *)&in, out);
}

static int port_of6(const char *ip, struct hw_addr_port *out)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

	if (inet_pton(AF_INET6, ip, &in6.sin6_addr) != 1)
		return -1;
	return hw_addr_port((const struct sockaddr *)&in6, out);
}

/* pf0's table: link-local v1, v2; ::ffff:192.168.100.1 v1, v2; fd00:100::1 v1, v2. */
static void test_table(void)
{
	const struct hw_topology *t = hw_topo_get();
	const struct hw_function *f = t != NULL ? hw_topo_find(t, "pf0") : NULL;
	struct hw_gid_entry e[HW_GID_MAX], one;
	uint8_t g[16];

	CHECK(f != NULL);
	CHECK(f->link == HW_LINK_ETH);
	CHECK(hw_gid_tbl_len(f) == 256);
	CHECK(hw_gid_table(f, e) == 6);
	gid_of("fe80::53:44ff:fe0b:0", g);
	CHECK(memcmp(e[0].gid, g, 16) == 0 && e[0].type == HW_GID_TYPE_ROCE_V1);
	CHECK(memcmp(e[1].gid, g, 16) == 0 && e[1].type == HW_GID_TYPE_ROCE_V2);
	gid_of("::ffff:192.168.100.1", g);
	CHECK(memcmp(e[2].gid, g, 16) == 0 && e[2].type == HW_GID_TYPE_ROCE_V1);
	CHECK(memcmp(e[3].gid, g, 16) == 0 && e[3].type == HW_GID_TYPE_ROCE_V2);
	gid_of("fd00:100::1", g);
	CHECK(memcmp(e[4].gid, g, 16) == 0 && e[4].type == HW_GID_TYPE_ROCE_V1);
	CHECK(memcmp(e[5].gid, g, 16) == 0 && e[5].type == HW_GID_TYPE_ROCE_V2);
	CHECK(hw_gid_get(f, 5, &one) && memcmp(&one, &e[5], sizeof(one)) == 0);
	CHECK(!hw_gid_get(f, 6, &one));
	CHECK(hw_gid_port_lid(f) == 2);
}

static void test_route(void)
{
	static const uint8_t vf0_mac[6] = {0x02, 0x53, 0x44, 0x0b, 0x00, 0x02};
	static const uint8_t far_mac[6] = {0x06, 127, 0, 0, 9, 0}, far_mac3[6] = {0x06, 127, 0, 0, 9, 3};
	struct hw_gid_dest d;
	uint8_t g[16];

	gid_of("::ffff:192.168.100.2", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_HERE && d.func == 2 && d.index == 2 && d.lid == 4);
	CHECK(memcmp(d.mac, vf0_mac, 6) == 0);
	CHECK(hw_gid_port_has(4, g) && !hw_gid_port_has(2, g));
	gid_of("fe80::53:44ff:fe0b:2", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_HERE && d.func == 2 && d.index == 0);
	/* The DPU side's functions are on this machine too (one card). */
	gid_of("::ffff:192.168.100.254", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_HERE && d.func == 5 && d.index == 2);
	/* Another machine's, by the forms of docs/TOPOLOGY.md. */
	gid_of("::ffff:127.0.0.9", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_MACHINE && d.machine == 0x7f000009 && memcmp(d.mac, far_mac, 6) == 0);
	gid_of("fe80::47f:ff:fe00:903", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_MACHINE && d.machine == 0x7f000009 && memcmp(d.mac, far_mac3, 6) == 0);
	gid_of("fd00:5344:7f00:9::4", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_MACHINE && d.machine == 0x7f000009 && memcmp(d.mac, far_mac3, 6) == 0);
	gid_of("fec0:0:7f00:9:53:44ff:fe0b:0", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_MACHINE && d.machine == 0x7f000009);
	/* Nobody's: a link-local of no MAC here, the zero GID. */
	gid_of("fe80::53:44ff:fe0b:ff", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_NOWHERE && d.func == -1);
	memset(g, 0, 16);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_NOWHERE);
}

/* hw_addr_port: the address's RoCE v2 entry on the function of this side that has it. */
static void test_addr_port(void)
{
	struct hw_addr_port p;
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	uint8_t g[16];

	CHECK_OK(port_of4("192.168.100.2", &p));
	gid_of("::ffff:192.168.100.2", g);
	CHECK(p.func == 2 && strcmp(p.ibdev, "mlx5_2") == 0 && p.port == 1 && p.gid_index == 3);
	CHECK(memcmp(p.gid, g, 16) == 0 && p.type == HW_GID_TYPE_ROCE_V2 && !p.loopback);
	CHECK_OK(port_of6("::ffff:192.168.101.1", &p));
	CHECK(p.func == 1 && strcmp(p.ibdev, "mlx5_1") == 0 && p.gid_index == 3);
	CHECK_OK(port_of6("fd00:100::3", &p));
	gid_of("fd00:100::3", g);
	CHECK(p.func == 3 && strcmp(p.ibdev, "mlx5_3") == 0 && p.gid_index == 5 && memcmp(p.gid, g, 16) == 0);
	CHECK_OK(port_of6("fe80::53:44ff:fe0b:4", &p));
	CHECK(p.func == 4 && strcmp(p.ibdev, "mlx5_4") == 0 && p.gid_index == 1);
	/* Loopback and the wildcard: the first port of this side, its link-local v2 entry. */
	gid_of("fe80::53:44ff:fe0b:0", g);
	for (int i = 0; i < 5; i++) {
		static const char *const v4[] = {"127.0.0.1", "127.1.2.3", "0.0.0.0"};
		static const char *const v6[] = {"::1", "::"};

		memset(&p, 0, sizeof(p));
		CHECK_OK(i < 3 ? port_of4(v4[i], &p) : port_of6(v6[i - 3], &p));
		CHECK(p.func == 0 && strcmp(p.ibdev, "mlx5_0") == 0 && p.port == 1 && p.gid_index == 1);
		CHECK(p.loopback && memcmp(p.gid, g, 16) == 0 && p.type == HW_GID_TYPE_ROCE_V2);
	}
	/* Not an address of this side: the DPU's, another host's. */
	CHECK(port_of4("192.168.100.254", &p) == EADDRNOTAVAIL);
	CHECK(port_of4("10.0.0.1", &p) == EADDRNOTAVAIL);
	CHECK(port_of6("fd00:100::fe", &p) == EADDRNOTAVAIL);
	CHECK(hw_addr_port((const struct sockaddr *)&un, &p) == EAFNOSUPPORT);
	CHECK(hw_addr_port(NULL, &p) == EINVAL);
}

static void test_addr_port_dpu(void)
{
	struct hw_addr_port p;

	CHECK_OK(reload("dpu", NULL));
	th_defer(reload_default_cb, NULL);
	CHECK_OK(port_of4("192.168.100.254", &p));
	CHECK(p.func == 5 && strcmp(p.ibdev, "mlx5_0") == 0 && p.gid_index == 3);
	CHECK_OK(port_of4("192.168.101.253", &p));
	CHECK(strcmp(p.ibdev, "mlx5_3") == 0 && p.gid_index == 3);
	CHECK_OK(port_of4("127.0.0.1", &p));
	CHECK(p.func == 5 && strcmp(p.ibdev, "mlx5_0") == 0 && p.gid_index == 1);
	CHECK(port_of4("192.168.100.1", &p) == EADDRNOTAVAIL);
}

static const char *write_topo(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/softdpu-hwgid-%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

/* link=ib: one GID of type IB, a 128-entry table; its IPoIB address names GID 0. link=<other> refuses the file. */
static void test_link_ib(void)
{
	const char *path = write_topo("function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0"
				      " mac=02:53:44:0b:00:00 ipv4=10.1.1.1 link=ib\n"
				      "function name=b side=host type=pf pci=0000:0b:00.1 vuid=B ibdev=mlx5_1"
				      " mac=02:53:44:0b:00:01 ipv4=10.1.1.2 link=eth\n");
	const struct hw_function *f;
	struct hw_gid_entry e[HW_GID_MAX];
	struct hw_addr_port p;
	uint8_t g[16];

	CHECK(path != NULL);
	th_defer(reload_default_cb, NULL);
	CHECK_OK(reload(NULL, path));
	f = hw_topo_find(hw_topo_get(), "a");
	CHECK(f != NULL && f->link == HW_LINK_IB);
	CHECK(hw_gid_tbl_len(f) == 128 && hw_gid_table(f, e) == 1 && e[0].type == HW_GID_TYPE_IB);
	gid_of("fe80::53:44ff:fe0b:0", g);
	CHECK(memcmp(e[0].gid, g, 16) == 0);
	CHECK_OK(port_of4("10.1.1.1", &p));
	CHECK(p.func == 0 && p.gid_index == 0 && p.type == HW_GID_TYPE_IB);
	CHECK_OK(port_of4("10.1.1.2", &p));
	CHECK(p.func == 1 && p.gid_index == 3 && p.type == HW_GID_TYPE_ROCE_V2);
	CHECK_OK(port_of4("127.0.0.1", &p));
	CHECK(p.func == 0 && p.gid_index == 0);
	path = write_topo("function name=a side=host type=pf pci=0000:0b:00.0 vuid=A ibdev=mlx5_0 link=roce\n");
	CHECK(path != NULL);
	CHECK(reload(NULL, path) == -1);
	unlink(path);
}

/*
 * Machine 127.0.0.5 (SOFTDPU_MACHINE, read once: a process of its own) on
 * the built-in topology: pf0's MAC 06:7f:00:00:05:00, its IPv4 the machine's,
 * IPv6 fd00:5344:7f00:5::1; pf1 (index 1) without IPv4; the machine's own
 * address maps to pf0's GID 3 though it is in 127/8, another loopback
 * address to the link-local v2 entry.
 */
static void machine_checks(void)
{
	const struct hw_topology *t = hw_topo_get();
	const struct hw_function *f0 = t != NULL ? hw_topo_find(t, "pf0") : NULL;
	const struct hw_function *f1 = t != NULL ? hw_topo_find(t, "pf1") : NULL;
	struct hw_gid_entry e[HW_GID_MAX];
	struct hw_addr_port p;
	struct hw_gid_dest d;
	uint8_t g[16];

	CHECK(f0 != NULL && f1 != NULL);
	CHECK(hw_gid_table(f0, e) == 6);
	gid_of("fe80::47f:ff:fe00:500", g);
	CHECK(memcmp(e[0].gid, g, 16) == 0 && memcmp(e[1].gid, g, 16) == 0);
	gid_of("::ffff:127.0.0.5", g);
	CHECK(memcmp(e[2].gid, g, 16) == 0 && e[3].type == HW_GID_TYPE_ROCE_V2);
	gid_of("fd00:5344:7f00:5::1", g);
	CHECK(memcmp(e[4].gid, g, 16) == 0);
	CHECK(hw_gid_table(f1, e) == 4); /* link-local and IPv6, no IPv4 */
	gid_of("fd00:5344:7f00:5::2", g);
	CHECK(memcmp(e[2].gid, g, 16) == 0);
	CHECK_OK(port_of4("127.0.0.5", &p));
	CHECK(p.func == 0 && p.gid_index == 3 && !p.loopback);
	CHECK_OK(port_of4("127.0.0.1", &p));
	CHECK(p.func == 0 && p.gid_index == 1 && p.loopback);
	CHECK(port_of4("192.168.100.1", &p) == EADDRNOTAVAIL);
	gid_of("::ffff:127.0.0.5", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_HERE && d.func == 0 && d.index == 2);
	gid_of("fe80::47f:ff:fe00:501", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_HERE && d.func == 1 && d.index == 0);
	gid_of("fe80::47f:ff:fe00:5ff", g); /* this machine's form, no port of it: nobody's */
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_NOWHERE);
	gid_of("::ffff:127.0.0.6", g);
	hw_gid_route(g, &d);
	CHECK(d.where == HW_GID_MACHINE && d.machine == 0x7f000006);
}

static int role_machine(void)
{
	RUN(machine_checks);
	return th_summary("test_hw_gid machine");
}

static void test_named_machine(void)
{
	struct th_proc *p;

	setenv("SOFTDPU_MACHINE", "127.0.0.5", 1);
	p = th_proc_start(NULL, "machine", NULL);
	unsetenv("SOFTDPU_MACHINE");
	CHECK(p != NULL);
	CHECK(th_proc_wait(p) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "machine") == 0)
		return role_machine();
	unsetenv("SOFTDPU_MACHINE");
	if (reload(NULL, NULL) != 0)
		return 1;
	RUN(test_table);
	RUN(test_route);
	RUN(test_addr_port);
	RUN(test_addr_port_dpu);
	RUN(test_link_ib);
	RUN(test_named_machine);
	return th_summary("test_hw_gid");
}
