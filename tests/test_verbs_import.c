/*
 * Importing a context by its command file, and a domain and a registration
 * by handle (ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3)):
 * the imported objects name the same domain and memory, work flows through
 * them, and what names nothing is refused.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "harness.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define LEN 4096

static uint8_t src[LEN], dst[LEN];

static void close_cb(void *arg)
{
	ibv_close_device(arg);
}

static void test_import_device_and_handles(void)
{
	struct ibv_context *c = vf_open(), *c2;
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL, *pd2, *other = c != NULL ? vf_pd(c) : NULL;
	struct ibv_mr *mr = pd != NULL ? vq_mr(pd, src, LEN, VQ_ACCESS_ALL) : NULL, *mr2;
	int fd;

	CHECK(mr != NULL && other != NULL);
	fd = dup(c->cmd_fd);
	CHECK(fd >= 0);
	c2 = ibv_import_device(fd);
	CHECK(c2 != NULL);
	th_defer(close_cb, c2);
	CHECK(c2->device == c->device && c2->cmd_fd == fd);
	pd2 = ibv_import_pd(c2, pd->handle);
	CHECK(pd2 != NULL && pd2->handle == pd->handle && pd2->context == c2);
	mr2 = ibv_import_mr(pd2, mr->handle);
	CHECK(mr2 != NULL);
	/* As the kernel reports it: no address, the registration's length and keys. */
	CHECK(mr2->addr == NULL && mr2->length == LEN && mr2->lkey == mr->lkey && mr2->rkey == mr->rkey &&
	      mr2->pd == pd2 && mr2->handle == mr->handle);
	/* A registration of another domain, and handles naming nothing. */
	errno = 0;
	CHECK(ibv_import_mr(pd2, 0xfffff0u) == NULL && errno == EINVAL);
	{
		struct ibv_mr *om = vq_mr(other, dst, LEN, VQ_ACCESS_ALL);

		CHECK(om != NULL);
		errno = 0;
		CHECK(ibv_import_mr(pd2, om->handle) == NULL && errno == EINVAL);
	}
	errno = 0;
	CHECK(ibv_import_pd(c2, 0xfffff0u) == NULL && errno == EINVAL);
	/* The allocator's handle stays busy while an import holds the domain. */
	CHECK_ERR(ibv_dealloc_pd(pd), EBUSY);
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
}

static void test_import_refusals(void)
{
	int p[2];

	errno = 0;
	CHECK(ibv_import_device(-1) == NULL && errno == EBADF);
	CHECK(pipe(p) == 0);
	errno = 0;
	CHECK(ibv_import_device(p[0]) == NULL && errno == EINVAL);
	close(p[0]);
	close(p[1]);
}

/* A QP on the imported domain writes from the imported registration's lkey into another domain's memory. */
static void test_traffic_through_imports(void)
{
	struct ibv_context *c = vf_open(), *c2;
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL, *pd2, *pdb = c != NULL ? vf_pd(c) : NULL;
	struct ibv_mr *mr = pd != NULL ? vq_mr(pd, src, LEN, VQ_ACCESS_ALL) : NULL, *mr2;
	struct ibv_mr *mb = pdb != NULL ? vq_mr(pdb, dst, LEN, VQ_ACCESS_ALL) : NULL;
	struct ibv_cq *cq2, *cqb = c != NULL ? vq_cq(c, 8) : NULL;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;

	CHECK(mr != NULL && mb != NULL && cqb != NULL);
	c2 = ibv_import_device(dup(c->cmd_fd));
	CHECK(c2 != NULL);
	th_defer(close_cb, c2);
	pd2 = ibv_import_pd(c2, pd->handle);
	CHECK(pd2 != NULL);
	mr2 = ibv_import_mr(pd2, mr->handle);
	CHECK(mr2 != NULL);
	cq2 = ibv_create_cq(c2, 8, NULL, NULL, 0);
	CHECK(cq2 != NULL);
	{
		/* Destroyed by hand below, before the imported domain is let go. */
		struct ibv_qp_init_attr qa = { .send_cq = cq2, .recv_cq = cq2, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
							.max_recv_sge = 1 } };

		a = ibv_create_qp(pd2, &qa);
	}
	b = vq_qp(pdb, IBV_QPT_RC, cqb, cqb, 4);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	memset(dst, 0, LEN);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)src, .length = LEN, .lkey = mr2->lkey };
		struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = mb->rkey;
		CHECK_OK(ibv_post_send(a, &wr, &bad));
	}
	CHECK(vq_poll1(cq2, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 7);
	CHECK(memcmp(src, dst, LEN) == 0);
	/* The imported domain is busy while a QP uses it; released after. */
	CHECK_ERR(ibv_dealloc_pd(pd2), EBUSY);
	CHECK_OK(ibv_destroy_qp(a));
	CHECK_OK(ibv_destroy_cq(cq2));
	ibv_unimport_mr(mr2);
	/* ibv_dealloc_pd on an imported domain lets go of that handle; the allocator's still frees it. */
	CHECK_OK(ibv_dealloc_pd(pd2));
}

static int send_fd(int sock, int fd)
{
	char byte = 'f', buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte, buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (cm != NULL && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* A context of another process: its command file names nothing here. */
static void test_other_process_refused(void)
{
	int sv[2], fd = -1, status = 0;
	pid_t kid;
	char ok = 0;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		int n = 0;
		struct ibv_device **l = ibv_get_device_list(&n);
		struct ibv_context *c = l != NULL && n > 0 ? ibv_open_device(l[0]) : NULL;

		close(sv[0]);
		if (c == NULL || send_fd(sv[1], c->cmd_fd) != 0 || read(sv[1], &ok, 1) != 1)
			_exit(1);
		ibv_close_device(c);
		ibv_free_device_list(l);
		_exit(0);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	CHECK(fd >= 0);
	errno = 0;
	CHECK(ibv_import_device(fd) == NULL && errno == EOPNOTSUPP);
	close(fd);
	CHECK(write(sv[0], "x", 1) == 1);
	close(sv[0]);
	CHECK(waitpid(kid, &status, 0) == kid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	RUN(test_import_device_and_handles);
	RUN(test_import_refusals);
	RUN(test_traffic_through_imports);
	RUN(test_other_process_refused);
	return th_summary("test_verbs_import");
}
