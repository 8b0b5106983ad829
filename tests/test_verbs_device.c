/*
 * libibverbs.so.1: the device list, opening a device, and every query, with
 * the exact identity a BlueField-2 function reports; the inline paths of
 * verbs.h (verbs_context slots) and the exported symbols both. Runs on the
 * built-in topology (host side: pf0, pf1 and three VFs, mlx5_0..mlx5_4).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "shm_machine.h"

/* rdma-core's driver interface (driver.h is not installed): exported, ibv_devinfo imports it. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, int *type);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* The IBVERBS_1.0 entry points, as a program linked against libibverbs 1.0 binds them. */
struct ibv_device **old_get_device_list(int *num);
__asm__(".symver old_get_device_list, ibv_get_device_list@IBVERBS_1.0");
struct ibv_pd *old_alloc_pd(struct ibv_context *context);
__asm__(".symver old_alloc_pd, ibv_alloc_pd@IBVERBS_1.0");

/* pf0's MAC 02:53:44:0b:00:00 as EUI-64, U/L bit flipped. */
static const uint8_t pf0_guid[8] = {0x00, 0x53, 0x44, 0xff, 0xfe, 0x0b, 0x00, 0x00};

static void test_device_list(void)
{
	static const char *const names[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"};
	struct ibv_device **l;
	int n = -1;

	l = vf_list(&n);
	CHECK(l != NULL);
	CHECK(n == 5);
	CHECK(l[5] == NULL);
	for (int i = 0; i < n; i++) {
		char path[64];
		size_t plen;

		CHECK(strcmp(ibv_get_device_name(l[i]), names[i]) == 0);
		CHECK(strcmp(l[i]->name, names[i]) == 0);
		CHECK(l[i]->node_type == IBV_NODE_CA);
		CHECK(l[i]->transport_type == IBV_TRANSPORT_IB);
		/* the device's sysfs-shaped directory of the user (vb_sysfs): .../devices/<bdf>/infiniband/<name> */
		snprintf(path, sizeof(path), "/infiniband/%s", names[i]);
		plen = strlen(l[i]->ibdev_path);
		CHECK(strncmp(l[i]->ibdev_path, "/dev/shm/softdpu-", 17) == 0);
		CHECK(plen > strlen(path) && strcmp(l[i]->ibdev_path + plen - strlen(path), path) == 0);
		snprintf(path, sizeof(path), "uverbs%d", i);
		CHECK(strcmp(l[i]->dev_name, path) == 0);
		CHECK(ibv_get_device_index(l[i]) == i);
	}
	CHECK(memcmp((uint64_t[]){ibv_get_device_guid(l[0])}, pf0_guid, 8) == 0);
}

/* In a child: the environment decides the topology, read once per process. */
static int child_list(const char *var, const char *value, int expect_n, int expect_errno)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct ibv_device **l;
		int n = -7;

		setenv(var, value, 1);
		errno = 0;
		l = ibv_get_device_list(&n);
		if (n != expect_n)
			_exit(1);
		if (expect_errno != 0)
			_exit(l == NULL && errno == expect_errno ? 0 : 2);
		if (l == NULL || strcmp(l[0]->name, "mlx5_0") != 0 || l[expect_n] != NULL)
			_exit(3);
		ibv_free_device_list(l);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_device_list_sides_and_failure(void)
{
	/* The DPU side: p0, p1 and two SFs; representors are not devices. */
	CHECK(child_list("SOFTDPU_SIDE", "dpu", 4, 0) == 0);
	/* A refused topology: no list, *num still set. */
	CHECK(child_list("SOFTDPU_TOPOLOGY", "/nonexistent/topology", 0, ENODEV) == 0);
}

/*
 * The device's number table (/dev/shm/softdpu-<uid>[-m<machine>]-ids-v6)
 * found open to others (mode 0666) is refused and left as it is: a CQ, which
 * needs a device-wide number, fails with EACCES, not ENOMEM. In a child
 * standing for a machine of its own, so the name is the case's alone.
 */
static int child_cq_errno(const char *machine)
{
	struct ibv_device **l;
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	int n;

	setenv("SOFTDPU_MACHINE", machine, 1);
	l = ibv_get_device_list(&n);
	if (l == NULL || n < 1 || (ctx = ibv_open_device(l[0])) == NULL)
		return 100;
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	return cq == NULL ? errno : 101;
}

/* The case machine's files and sysfs tree (the child's open publishes one). */
static void remove_machine_cb(void *machine)
{
	shm_machine_remove(machine);
}

static void test_number_table_open_to_others(void)
{
	static char name[96], machine[32];
	char path[128];
	struct stat sb;
	unsigned pid = (unsigned)getpid();
	pid_t child;
	int fd, st;

	snprintf(machine, sizeof(machine), "127.%u.%u.%u", (pid >> 16) & 255, (pid >> 8) & 255, pid & 255);
	snprintf(name, sizeof(name), "/softdpu-%u-m%s-ids-v6", (unsigned)getuid(), machine);
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
	CHECK(fd >= 0);
	th_defer(remove_machine_cb, machine);
	CHECK(fchmod(fd, 0666) == 0);
	close(fd);
	child = fork();
	if (child == 0)
		_exit(child_cq_errno(machine));
	CHECK(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st));
	CHECK_ERR(WEXITSTATUS(st), EACCES);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0666 && sb.st_size == 0);
}

static void test_open_context_layout(void)
{
	struct ibv_context *c = vf_open();
	struct verbs_context *v;
	void **slot;

	CHECK(c != NULL);
	CHECK(c->abi_compat == __VERBS_ABI_IS_EXTENDED);
	v = verbs_get_ctx(c);
	CHECK(v != NULL);
	CHECK(v->sz == sizeof(struct verbs_context));
	CHECK(fcntl(c->cmd_fd, F_GETFD) >= 0);
	CHECK(fcntl(c->async_fd, F_GETFD) >= 0);
	CHECK(c->num_comp_vectors == 1);
	CHECK(strcmp(c->device->name, "mlx5_0") == 0);
	/* Every ctx->ops slot points at a function. */
	slot = (void **)&c->ops;
	for (size_t i = 0; i < sizeof(c->ops) / sizeof(void *); i++)
		CHECK(slot[i] != NULL);
	/* And every verbs_context slot, from query_port to close_xrcd, except the private pointer. */
	slot = (void **)v;
	for (size_t off = 0; off < offsetof(struct verbs_context, _ABI_placeholder3); off += sizeof(void *))
		if (off != offsetof(struct verbs_context, priv))
			CHECK(slot[off / sizeof(void *)] != NULL);
	CHECK(ibv_close_device(NULL) == EINVAL);
	CHECK(ibv_open_device(NULL) == NULL && errno == EINVAL);
}

static void check_device_attr(const struct ibv_device_attr *a)
{
	CHECK(strcmp(a->fw_ver, "24.35.1012") == 0);
	CHECK(memcmp(&a->node_guid, pf0_guid, 8) == 0);
	CHECK(a->sys_image_guid == a->node_guid);
	CHECK(a->vendor_id == 0x02c9);
	CHECK(a->vendor_part_id == 41686);
	CHECK(a->max_mr_size == UINT64_MAX);
	CHECK(a->max_qp == 4096);
	CHECK(a->max_qp_wr == 32768);
	CHECK(a->max_sge == 30);
	CHECK(a->max_cq == 4096);
	CHECK(a->max_cqe == 4194303);
	CHECK(a->max_mr == 16384);
	CHECK(a->max_pd == 16384);
	CHECK(a->max_qp_rd_atom == 16);
	CHECK(a->max_qp_init_rd_atom == 16);
	CHECK(a->atomic_cap == IBV_ATOMIC_HCA);
	CHECK(a->max_pkeys == 1);
	CHECK(a->max_mw == 16384); /* windows are keys of the MR table */
	CHECK((a->device_cap_flags & (IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) ==
	      (IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B));
	CHECK(a->phys_port_cnt == 1);
}

static void test_query_device(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr a;
	struct ibv_device_attr_ex ax;
	struct ibv_query_device_ex_input in = {.comp_mask = 1};
	struct {
		struct ibv_device_attr_ex ax;
		uint8_t canary[64];
	} small;

	CHECK(c != NULL);
	memset(&a, 0xa5, sizeof(a));
	CHECK_OK(ibv_query_device(c, &a));
	check_device_attr(&a);
	/* The inline ibv_query_device_ex goes through verbs_context->query_device_ex. */
	memset(&ax, 0xa5, sizeof(ax));
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	check_device_attr(&ax.orig_attr);
	CHECK(ax.phys_port_cnt_ex == 1);
	CHECK(ax.device_cap_flags_ex == ax.orig_attr.device_cap_flags);
	CHECK(ax.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT) && ax.max_dm_size == 256 * 1024); /* test_verbs_odp, test_verbs_dm */
	CHECK(ax.completion_timestamp_mask == UINT64_MAX && ax.hca_core_clock == 1000000); /* ns, 1 GHz */
	CHECK(ibv_query_device_ex(c, &in, &ax) == EINVAL);
	/* A caller with a smaller struct: nothing written past the size it gave. */
	memset(&small, 0x5a, sizeof(small));
	CHECK_OK(verbs_get_ctx(c)->query_device_ex(c, NULL, &small.ax, sizeof(small.ax.orig_attr) + 8));
	check_device_attr(&small.ax.orig_attr);
	for (size_t i = sizeof(small.ax.orig_attr) + 8; i < sizeof(small.ax); i++)
		CHECK(((uint8_t *)&small.ax)[i] == 0x5a);
	CHECK(verbs_get_ctx(c)->query_device_ex(c, NULL, &small.ax, sizeof(small.ax.orig_attr) - 1) == EINVAL);
	CHECK(ibv_query_device(NULL, &a) == EINVAL);
}

/* A RoCE port as mlx5 reports it on a 1500-byte netdev (mlx5_query_port_roce): no LID, no SM, no VLs. */
static void check_port(const struct ibv_port_attr *p)
{
	CHECK(p->state == IBV_PORT_ACTIVE);
	CHECK(p->max_mtu == IBV_MTU_4096);
	CHECK(p->active_mtu == IBV_MTU_1024);
	CHECK(p->link_layer == IBV_LINK_LAYER_ETHERNET);
	CHECK(p->lid == 0 && p->sm_lid == 0 && p->lmc == 0 && p->sm_sl == 0);
	CHECK(p->port_cap_flags == (IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS));
	CHECK(p->port_cap_flags == 0x04010000);
	CHECK(p->max_vl_num == 0 && p->subnet_timeout == 0);
	CHECK(p->gid_tbl_len == 256);
	CHECK(p->pkey_tbl_len == 1);
	CHECK(p->active_width == 2);	/* 4X */
	CHECK(p->active_speed == 32);	/* EDR: 4 x 25 Gb/s, 100GbE */
	CHECK(p->phys_state == 5);
}

static void test_query_port(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_context *c1;
	struct ibv_port_attr p;
	struct ibv_device **l;
	int n;

	CHECK(c != NULL);
	memset(&p, 0xa5, sizeof(p));
	CHECK_OK(ibv_query_port(c, 1, &p));	/* inline: verbs_context->query_port */
	check_port(&p);
	CHECK(p.port_cap_flags2 == 0);
	CHECK(ibv_query_port(c, 0, &p) == EINVAL);
	CHECK(ibv_query_port(c, 2, &p) == EINVAL);
	/* The exported symbol (programs built before the inline) writes the old, shorter layout. */
	memset(&p, 0xa5, sizeof(p));
#undef ibv_query_port
	CHECK_OK(ibv_query_port(c, 1, (struct _compat_ibv_port_attr *)&p));
	check_port(&p);
	CHECK(p.port_cap_flags2 == 0xa5a5);
	CHECK(ibv_query_port(c, 3, (struct _compat_ibv_port_attr *)&p) == EINVAL);
	/* Another function's port: RoCE too, LID 0 as every Ethernet port. */
	l = vf_list(&n);
	CHECK(l != NULL && n == 5);
	c1 = ibv_open_device(l[4]);
	CHECK(c1 != NULL);
	th_defer(vf_close_cb, c1);
	CHECK_OK(verbs_get_ctx(c1)->query_port(c1, 1, &p, sizeof(p)));
	check_port(&p);
}

/*
 * ibv_get_async_event(3): IBV_EVENT_PORT_ACTIVE is raised when a port's link becomes active, on devices
 * with IBV_DEVICE_PORT_ACTIVE_EVENT. The emulated port is active from the device's creation and never goes
 * down, so the event can never come: the flag must not promise it, and none is pending after an open.
 */
static void test_port_active_event_not_promised(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	struct ibv_async_event ev;
	int fl;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_device(c, &a));
	CHECK((a.device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT) == 0);
	CHECK_OK(verbs_get_ctx(c)->query_port(c, 1, &p, sizeof(p))); /* ibv_query_port is #undef'd above */
	CHECK(p.state == IBV_PORT_ACTIVE);
	fl = fcntl(c->async_fd, F_GETFL);
	CHECK(fl >= 0 && fcntl(c->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(ibv_get_async_event(c, &ev) == -1 && errno == EAGAIN);
}

static void test_query_gid_pkey(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_gid_entry e, tbl[6];
	union ibv_gid gid;
	int type = -1;
	__be16 pkey;

	CHECK(c != NULL);
	CHECK_OK(ibv_query_gid(c, 1, 0, &gid));
	CHECK(be64toh(gid.global.subnet_prefix) == 0xfe80000000000000ull);
	CHECK(memcmp(&gid.global.interface_id, pf0_guid, 8) == 0);
	memset(&gid, 0xff, sizeof(gid));
	CHECK_OK(ibv_query_gid(c, 1, 6, &gid));	/* an empty entry reads as zero */
	CHECK(gid.global.subnet_prefix == 0 && gid.global.interface_id == 0);
	CHECK_OK(ibv_query_gid(c, 1, 255, &gid));
	CHECK(ibv_query_gid(c, 1, 256, &gid) == -1 && errno == EINVAL);
	CHECK(ibv_query_gid(c, 2, 0, &gid) == -1 && errno == EINVAL);
	CHECK(ibv_query_gid(c, 1, -1, &gid) == -1 && errno == EINVAL);

	CHECK_OK(ibv_query_gid_ex(c, 1, 0, &e, 0));
	CHECK(e.gid_type == IBV_GID_TYPE_ROCE_V1 && e.gid_index == 0 && e.port_num == 1);
	CHECK(be64toh(e.gid.global.subnet_prefix) == 0xfe80000000000000ull);
	CHECK(ibv_query_gid_ex(c, 1, 6, &e, 0) == ENODATA);
	CHECK(ibv_query_gid_ex(c, 1, 256, &e, 0) == EINVAL);
	CHECK(ibv_query_gid_ex(c, 2, 0, &e, 0) == EINVAL);
	CHECK(ibv_query_gid_ex(c, 1, 0, &e, 1) == EINVAL);
	CHECK(ibv_query_gid_table(c, tbl, 6, 0) == 6);
	CHECK_OK(ibv_query_gid_ex(c, 1, 0, &e, 0));
	CHECK(memcmp(&tbl[0], &e, sizeof(e)) == 0);
	CHECK(ibv_query_gid_table(c, tbl, 5, 0) == -EINVAL); /* fewer places than valid entries */
	CHECK(ibv_query_gid_table(c, tbl, 0, 0) == -EINVAL);

	CHECK_OK(ibv_query_gid_type(c, 1, 0, &type));
	CHECK(type == 0);	/* RoCE v1 */
	CHECK_OK(ibv_query_gid_type(c, 1, 1, &type));
	CHECK(type == 1);	/* RoCE v2 */
	type = -1;
	CHECK_OK(ibv_query_gid_type(c, 1, 6, &type)); /* empty: v1, as rdma-core answers */
	CHECK(type == 0);
	CHECK(ibv_query_gid_type(c, 1, 256, &type) == -1 && errno == EINVAL);
	CHECK(ibv_query_gid_type(c, 2, 0, &type) == -1);

	CHECK_OK(ibv_query_pkey(c, 1, 0, &pkey));
	CHECK(be16toh(pkey) == 0xffff);
	CHECK(ibv_query_pkey(c, 1, 1, &pkey) == -1 && errno == EINVAL);
	CHECK(ibv_query_pkey(c, 2, 0, &pkey) == -1);
	CHECK(ibv_get_pkey_index(c, 1, htobe16(0xffff)) == 0);
	CHECK(ibv_get_pkey_index(c, 1, htobe16(0x7fff)) == 0);
	CHECK(ibv_get_pkey_index(c, 1, htobe16(0x8001)) == -1);
	CHECK(ibv_get_pkey_index(c, 2, htobe16(0xffff)) == -1);
}

static void test_strings(void)
{
	const char *seen[IBV_WC_TM_RNDV_INCOMPLETE + 1];

	CHECK(strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "success") == 0);
	CHECK(strcmp(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error") == 0);
	CHECK(strcmp(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error") == 0);
	for (int s = IBV_WC_SUCCESS; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++) {
		seen[s] = ibv_wc_status_str(s);
		CHECK(strcmp(seen[s], "unknown") != 0);
		for (int t = 0; t < s; t++)
			CHECK(strcmp(seen[s], seen[t]) != 0);
	}
	CHECK(strcmp(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE + 1), "unknown") == 0);
	for (int e = IBV_EVENT_CQ_ERR; e <= IBV_EVENT_WQ_FATAL; e++)
		CHECK(strcmp(ibv_event_type_str(e), "unknown") != 0);
	CHECK(strcmp(ibv_event_type_str(IBV_EVENT_WQ_FATAL + 1), "unknown") == 0);
	CHECK(strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") == 0);
	CHECK(strcmp(ibv_port_state_str(6), "unknown") == 0);
	CHECK(strcmp(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter") == 0);
	CHECK(strcmp(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown") == 0);
}

static void test_rates(void)
{
	CHECK(ibv_rate_to_mult(IBV_RATE_2_5_GBPS) == 1);
	CHECK(ibv_rate_to_mult(IBV_RATE_40_GBPS) == 16);
	CHECK(ibv_rate_to_mult(IBV_RATE_400_GBPS) == 160);
	CHECK(ibv_rate_to_mult(IBV_RATE_56_GBPS) == -1);
	CHECK(ibv_rate_to_mult(IBV_RATE_MAX) == -1);
	CHECK(mult_to_ibv_rate(48) == IBV_RATE_120_GBPS);
	CHECK(mult_to_ibv_rate(3) == IBV_RATE_MAX);
	CHECK(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125);
	CHECK(ibv_rate_to_mbps(IBV_RATE_14_GBPS) == 14062);
	CHECK(ibv_rate_to_mbps(IBV_RATE_MAX) == -1);
	CHECK(mbps_to_ibv_rate(206250) == IBV_RATE_200_GBPS);
	CHECK(mbps_to_ibv_rate(200000) == IBV_RATE_MAX);
	for (int r = IBV_RATE_2_5_GBPS; r <= IBV_RATE_1200_GBPS; r++) {
		CHECK(mbps_to_ibv_rate(ibv_rate_to_mbps(r)) == (enum ibv_rate)r);
		if (ibv_rate_to_mult(r) > 0)
			CHECK(mult_to_ibv_rate(ibv_rate_to_mult(r)) == (enum ibv_rate)r);
	}
}

static void test_fork_and_sysfs(void)
{
	struct ibv_device **l;
	char buf[64];
	int n;

	CHECK_OK(ibv_fork_init());
	CHECK(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CHECK_OK(ibv_dontfork_range(buf, sizeof(buf)));
	CHECK_OK(ibv_dofork_range(buf, sizeof(buf)));
	l = vf_list(&n);
	CHECK(l != NULL);
	/* Our devices have no sysfs directory (ibv_devinfo asks for board_id). */
	CHECK(ibv_read_sysfs_file(l[0]->ibdev_path, "board_id", buf, sizeof(buf)) == -1 && errno == ENOENT);
	unsetenv("SYSFS_PATH");
	CHECK(strcmp(ibv_get_sysfs_path(), "/sys") == 0);
	CHECK(ibv_read_sysfs_file("/proc/self", "comm", buf, sizeof(buf)) > 0);
	CHECK(strchr(buf, '\n') == NULL);
}

/* What is not implemented fails as rdma-core does for an unsupported operation. */
static void test_unsupported(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr_ex qiax;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	CHECK(c != NULL);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	cq = ibv_create_cq(c, 16, NULL, NULL, 0);
	CHECK(cq != NULL);
	/* Ethernet offloads of a raw packet QP the device has not. */
	qiax = (struct ibv_qp_init_attr_ex){.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq, .pd = pd,
					    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
					    .create_flags = IBV_QP_CREATE_SCATTER_FCS};
	errno = 0;
	CHECK(ibv_create_qp_ex(c, &qiax) == NULL && errno == EOPNOTSUPP);
	CHECK_OK(ibv_destroy_cq(cq));
	errno = 0;
	CHECK(ibv_alloc_null_mr(pd) == NULL && errno == EOPNOTSUPP);
}

/* The 1.0 ABI's structs are long gone: its entries fail, the default versions work. */
static void test_old_versions_fail(void)
{
	struct ibv_context *c = vf_open();
	int n = -1;

	CHECK(c != NULL);
	errno = 0;
	CHECK(old_get_device_list(&n) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(old_alloc_pd(c) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	/* The children read the environment before this process loads its devices. */
	RUN(test_device_list_sides_and_failure);
	RUN(test_number_table_open_to_others);
	RUN(test_device_list);
	RUN(test_open_context_layout);
	RUN(test_query_device);
	RUN(test_query_port);
	RUN(test_port_active_event_not_promised);
	RUN(test_query_gid_pkey);
	RUN(test_strings);
	RUN(test_rates);
	RUN(test_fork_and_sysfs);
	RUN(test_unsupported);
	RUN(test_old_versions_fail);
	return th_summary("test_verbs_device");
}
