/*
 * DevX bad input in one place: wrong opcodes, buffers too short, object
 * numbers of another context or another process, objects destroyed while
 * others use them, commands on objects whose context is gone. What the
 * kernel refuses itself is EINVAL (or EBUSY) with out untouched; what the
 * card refuses is EREMOTEIO with its status and a syndrome in out; an
 * object or command the device does not emulate is EOPNOTSUPP with BAD_OP
 * (docs/STATUS.md, the mlx5dv_devx_* rows).
 */
#include <unistd.h>

#include "devx_fixture.h"
#include "kid_fixture.h"

#define OP_QUERY_HCA_CAP 0x100
#define OP_NOP 0x80d
#define ST_BAD_PARAM_ 0x3
#define SYND_UMEM 0x5d0c0022u
#define SYND_QP_PD 0x5d0c0032u
#define SYND_MKEY_MODE 0x5d0c0071u
#define SYND_MKEY_LEN 0x5d0c0072u
#define SYND_MKEY_ENTRY 0x5d0c0073u
#define IOVA 0x10000ull

/* out filled with 0xee: nothing written there when it still is. */
static bool untouched(const uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (out[i] != 0xee)
			return false;
	return true;
}

/* obj_create of in, expected to fail with err; out (16 bytes) for the status. */
static void create_fails(struct ibv_context *c, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen, int err)
{
	memset(out, 0xee, outlen);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, inlen, out, outlen) == NULL);
	CHECK(errno == err);
}

/* The card's refusal: EREMOTEIO, status and syndrome. */
static void create_refused(struct ibv_context *c, const uint8_t *in, size_t inlen, uint8_t status, uint32_t synd)
{
	uint8_t out[OUT_SZ];

	create_fails(c, in, inlen, out, sizeof(out), EREMOTEIO);
	CHECK(status_of(out) == status && syndrome_of(out) == synd);
}

/* mlx5dv_devx_general_cmd: the kernel's refusals leave out alone; the card's fill it. */
static void test_general_cmd(void)
{
	struct dx *d = NULL;
	uint8_t in[16] = {0}, out[0x20];

	dx_open(&d, 4096);
	/* An object's command is no general command: the kernel's EINVAL. */
	prm_set(in, 0, 16, OP_CREATE_CQ);
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	prm_set(in, 0, 16, 0);
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	/* In or out shorter than the 16-byte header. */
	prm_set(in, 0, 16, OP_QUERY_HCA_CAP);
	CHECK(mlx5dv_devx_general_cmd(d->c, in, 15, out, sizeof(out)) == EINVAL);
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, 15) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	/* A general command not emulated: BAD_OP. */
	prm_set(in, 0, 16, OP_NOP);
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)) == EOPNOTSUPP);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) != 0);
	/* A capability page the device has not (type 0x7f), another function's: BAD_PARAM. */
	prm_set(in, 0, 16, OP_QUERY_HCA_CAP);
	prm_set(in, 0x30, 16, 0x7f << 1); /* op_mod */
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)) == EOPNOTSUPP);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) != 0);
	prm_set(in, 0x30, 16, 0);
	prm_set(in, 0x40, 1, 1); /* other_function */
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_general_cmd(d->c, in, sizeof(in), out, sizeof(out)) == EOPNOTSUPP);
	CHECK(status_of(out) == ST_BAD_PARAM && syndrome_of(out) != 0);
}

/* obj_create: opcodes of no object, buffers too short, mkey contexts the card refuses. */
static void test_create(void)
{
	struct mlx5dv_devx_umem *um;
	struct dx *d = NULL;
	uint8_t in[MKEY_IN + 32], out[OUT_SZ], *m;
	uint32_t cnt[2] = {4096, 4096}, keys[2];
	uint64_t addr[2];

	dx_open(&d, 4096);
	CHECK(posix_memalign((void **)&m, 4096, 8192) == 0);
	th_defer(free, m);
	um = mlx5dv_devx_umem_reg(d->c, m, 8192, IBV_ACCESS_LOCAL_WRITE);
	CHECK(um != NULL);
	/* No object has opcode 0x7ff: not here. */
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, 0x7ff);
	create_fails(d->c, in, sizeof(in), out, sizeof(out), EOPNOTSUPP);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	/* A key's own commands are no object to create. */
	prm_set(in, 0, 16, OP_QUERY_MKEY);
	create_fails(d->c, in, sizeof(in), out, sizeof(out), EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	prm_set(in, 0, 16, OP_DESTROY_MKEY);
	create_fails(d->c, in, sizeof(in), out, sizeof(out), EREMOTEIO);
	create_fails(d->c, in, 1, out, sizeof(out), EINVAL);
	/* Out shorter than the command's answer, in shorter than the command: the kernel's EINVAL, out untouched. */
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	create_fails(d->c, in, MKEY_IN, out, 8, EINVAL);
	CHECK(untouched(out, 8));
	create_fails(d->c, in, MKEY_IN - 1, out, sizeof(out), EINVAL);
	CHECK(untouched(out, sizeof(out)));
	cq_cmd(d, in, 0);
	create_fails(d->c, in, CQ_IN, out, 8, EINVAL);
	CHECK(untouched(out, 8));
	/* MEMIC access mode (5), a key of a QP, the whole address space (length64): BAD_PARAM. */
	mkey_cmd(in, 5, MK_ALL, d->pdn, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_MKEY_MODE);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	prm_set(in, MKC + 0x20, 24, 5);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_MKEY_MODE);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	prm_set(in, MKC + 0x60, 1, 1);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_MKEY_MODE);
	/* MTT over physical pages (no umem), past the umem's end, of no length; a PD nobody has. */
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 4096);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_UMEM);
	mkey_cmd_umem(in, um->umem_id, 4097);
	prm_set(in, MKC + 0xc0, 64, 4096);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_UMEM_SHORT);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 0);
	mkey_cmd_umem(in, um->umem_id, 0);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_MKEY_LEN);
	mkey_cmd(in, MK_MTT, MK_ALL, 0xfffff0, 1, IOVA, 4096);
	mkey_cmd_umem(in, um->umem_id, 0);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_QP_PD);
	/* KLMs: past the command's end (EINVAL), outside their MR, covering less than len. */
	keys[0] = keys[1] = d->mr->lkey;
	addr[0] = (uintptr_t)d->buf;
	addr[1] = (uintptr_t)d->buf + 16;
	mkey_cmd(in, MK_KLM, MK_ALL, d->pdn, 1, IOVA, 8192);
	mkey_cmd_list(in, 2, cnt, keys, addr, 0);
	create_fails(d->c, in, MKEY_IN + 16, out, sizeof(out), EINVAL);
	create_refused(d->c, in, sizeof(in), ST_BAD_PARAM, SYND_MKEY_ENTRY); /* the first entry ends in its MR, the second not */
	cnt[0] = 100;
	mkey_cmd(in, MK_KLM, MK_ALL, d->pdn, 1, IOVA, 4096);
	mkey_cmd_list(in, 1, cnt, keys, addr, 0);
	create_refused(d->c, in, sizeof(in), ST_BAD_PARAM, SYND_MKEY_LEN);
	CHECK_OK(mlx5dv_devx_umem_dereg(um));
}

/* Numbers of another context of the same process reach nothing: its CQ, its umem, its PD, its MR. */
static void test_other_context(void)
{
	struct dx *a = NULL, *b = NULL;
	uint8_t in[MKEY_IN + 16];
	uint32_t cnt = 64, key;
	uint64_t addr;

	dx_open(&a, RQ_BYTES + SQ_BYTES);
	dx_open(&b, RQ_BYTES + SQ_BYTES);
	dx_create(b);
	/* a's DevX QP on b's CQ. */
	qp_cmd(a, in, b->cqn);
	create_refused(a->c, in, QP_IN, ST_BAD_PARAM, SYND_QP_CQ);
	/* A umem id only b has (its fourth). */
	struct mlx5dv_devx_umem *um = mlx5dv_devx_umem_reg(b->c, b->buf, 4096, IBV_ACCESS_LOCAL_WRITE);

	CHECK(um != NULL);
	CHECK(um->umem_id > a->dbr_um->umem_id);
	mkey_cmd(in, MK_MTT, MK_ALL, a->pdn, 1, IOVA, 64);
	mkey_cmd_umem(in, um->umem_id, 0);
	create_refused(a->c, in, MKEY_IN, ST_BAD_PARAM, SYND_UMEM);
	cq_cmd(a, in, 0);
	prm_set(in, 0x2c0, 32, um->umem_id);
	create_refused(a->c, in, CQ_IN, ST_BAD_PARAM, SYND_UMEM);
	CHECK_OK(mlx5dv_devx_umem_dereg(um));
	/* b's PD in a's key and a's QP. */
	mkey_cmd(in, MK_MTT, MK_ALL, b->pdn, 1, IOVA, 64);
	mkey_cmd_umem(in, a->qp_um->umem_id, 0);
	create_refused(a->c, in, MKEY_IN, ST_BAD_PARAM, SYND_QP_PD);
	qp_cmd(a, in, 0);
	prm_set(in, QPC + 0x28, 24, b->pdn);
	create_refused(a->c, in, QP_IN, ST_BAD_PARAM, SYND_QP_PD);
	/* A KLM of a's naming b's MR (another PD). */
	key = b->mr->lkey;
	addr = (uintptr_t)b->buf;
	mkey_cmd(in, MK_KLM, MK_ALL, a->pdn, 1, IOVA, 64);
	mkey_cmd_list(in, 1, &cnt, &key, &addr, 0);
	create_refused(a->c, in, sizeof(in), ST_BAD_PARAM, SYND_MKEY_ENTRY);
}

/* What the other process tells: its PD's number, its DevX CQ's, an MR's key and address. */
struct theirs {
	uint32_t pdn, cqn, lkey;
	uint64_t addr;
};

static int pipe_in = -1, pipe_out = -1;

static void child_case(void)
{
	struct dx *d = NULL;
	struct theirs t;
	char ok;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	t = (struct theirs){.pdn = d->pdn, .cqn = d->cqn, .lkey = d->mr->lkey, .addr = (uintptr_t)d->buf};
	CHECK(write(pipe_out, &t, sizeof(t)) == sizeof(t));
	CHECK(read(pipe_in, &ok, 1) == 1);
}

/* A case run in a child process (its leftovers go with it): the exit status says whether it passed. */
static void in_child(const char *name, void (*fn)(void), int in, int out)
{
	pipe_in = in;
	pipe_out = out;
	kid_case(name, fn);
}

/* Numbers of another process's context reach nothing: its PD, its CQ, its MR's key. */
static void test_other_process(void)
{
	uint8_t in[MKEY_IN + 16];
	int p[2], q[2];
	struct dx *d = NULL;
	struct theirs t;
	uint32_t cnt = 64;

	kid_fork(p, q);
	if (kid == 0)
		in_child("other_process_child", child_case, p[0], q[1]);
	dx_open(&d, RQ_BYTES + SQ_BYTES);
	CHECK(read(q[0], &t, sizeof(t)) == sizeof(t));
	CHECK(t.pdn != d->pdn);
	dx_create(d);
	mkey_cmd(in, MK_MTT, MK_ALL, t.pdn, 1, IOVA, 64);
	mkey_cmd_umem(in, d->qp_um->umem_id, 0);
	create_refused(d->c, in, MKEY_IN, ST_BAD_PARAM, SYND_QP_PD);
	qp_cmd(d, in, d->cqn);
	prm_set(in, QPC + 0x28, 24, t.pdn);
	create_refused(d->c, in, QP_IN, ST_BAD_PARAM, SYND_QP_PD);
	qp_cmd(d, in, t.cqn);
	create_refused(d->c, in, QP_IN, ST_BAD_PARAM, SYND_QP_CQ);
	mkey_cmd(in, MK_KLM, MK_ALL, d->pdn, 1, IOVA, 64);
	mkey_cmd_list(in, 1, &cnt, &t.lkey, &t.addr, 0);
	create_refused(d->c, in, sizeof(in), ST_BAD_PARAM, SYND_MKEY_ENTRY);
	CHECK(write(p[1], "x", 1) == 1);
	kid_wait_ok();
}

/*
 * Destroying what another object uses: a umem under a key is EBUSY, a PD
 * under a key EBUSY (the kernel's reference counts), a CQ a QP reports to
 * EINVAL (the card's BAD_RES_STATE); each goes once its user went. A key
 * takes no modify command (BAD_OP).
 */
static void test_in_use(void)
{
	struct mlx5dv_devx_obj *mk;
	struct dx *d = NULL;
	uint8_t in[MKEY_IN], out[OUT_SZ];

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 1, IOVA, 64);
	mkey_cmd_umem(in, d->cq_um->umem_id, 0);
	memset(out, 0xee, sizeof(out));
	mk = mlx5dv_devx_obj_create(d->c, in, MKEY_IN, out, sizeof(out));
	CHECK(mk != NULL);
	CHECK(status_of(out) == 0);
	CHECK(mlx5dv_devx_obj_destroy(d->cq) == EINVAL);
	CHECK(mlx5dv_devx_obj_destroy(d->qp) == 0);
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	CHECK(mlx5dv_devx_umem_dereg(d->cq_um) == EBUSY);
	CHECK_OK(ibv_dereg_mr(d->mr));
	d->mr = NULL;
	CHECK(ibv_dealloc_pd(d->pd) == EBUSY);
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_obj_modify(mk, in, MKEY_IN, out, sizeof(out)) == EREMOTEIO);
	CHECK(status_of(out) == ST_BAD_OP && syndrome_of(out) == SYND_BAD_OP);
	CHECK_OK(mlx5dv_devx_obj_destroy(mk));
	CHECK_OK(mlx5dv_devx_umem_dereg(d->cq_um));
	d->cq_um = NULL;
	CHECK_OK(ibv_dealloc_pd(d->pd));
	d->pd = NULL;
}

/*
 * Objects whose context was closed went with it, as the kernel destroys a
 * closed file's objects: a command on one is EINVAL (nothing to run it
 * on), its destroy frees the handle. A command naming another object than
 * its own is EINVAL too.
 */
static void gone_case(void)
{
	struct mlx5dv_devx_obj *mk;
	struct dx *d = NULL;
	uint8_t in[QP_IN], out[QUERY_OUT];
	uint32_t key;

	dx_open(&d, RQ_BYTES + SQ_BYTES);
	dx_create(d);
	mkey_cmd(in, MK_MTT, MK_ALL, d->pdn, 7, IOVA, 64);
	mkey_cmd_umem(in, d->cq_um->umem_id, 0);
	mk = mlx5dv_devx_obj_create(d->c, in, MKEY_IN, out, OUT_SZ);
	CHECK(mk != NULL);
	key = mkey_of(out, 7);
	/* QUERY_QP and a state command naming another QP than the object's. */
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_QUERY_QP);
	prm_set(in, 0x48, 24, d->qpn + 1);
	memset(out, 0xee, sizeof(out));
	CHECK(mlx5dv_devx_obj_query(d->qp, in, sizeof(in), out, sizeof(out)) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	prm_set(in, 0, 16, OP_RST2INIT);
	CHECK(mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, OUT_SZ) == EINVAL);
	CHECK(untouched(out, OUT_SZ));
	/* Close: MR, PD and context go; the DevX handles stay for their destroy. */
	CHECK_OK(ibv_dereg_mr(d->mr));
	d->mr = NULL;
	CHECK_OK(ibv_close_device(d->c));
	d->c = NULL;
	d->pd = NULL; /* went with the context */
	memset(in, 0, sizeof(in));
	prm_set(in, 0, 16, OP_QUERY_MKEY);
	prm_set(in, 0x48, 24, key >> 8);
	CHECK(mlx5dv_devx_obj_query(mk, in, 16, out, sizeof(out)) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	prm_set(in, 0, 16, OP_QUERY_QP);
	prm_set(in, 0x48, 24, d->qpn);
	CHECK(mlx5dv_devx_obj_query(d->qp, in, sizeof(in), out, sizeof(out)) == EINVAL);
	CHECK(mlx5dv_devx_obj_modify(d->qp, in, sizeof(in), out, OUT_SZ) == EINVAL);
	CHECK(untouched(out, sizeof(out)));
	CHECK_OK(mlx5dv_devx_obj_destroy(mk));
	CHECK_OK(mlx5dv_devx_obj_destroy(d->qp));
	d->qp = NULL;
	CHECK_OK(mlx5dv_devx_obj_destroy(d->cq));
	d->cq = NULL;
	CHECK_OK(mlx5dv_devx_umem_dereg(d->qp_um));
	CHECK_OK(mlx5dv_devx_umem_dereg(d->cq_um));
	CHECK_OK(mlx5dv_devx_umem_dereg(d->dbr_um));
	d->qp_um = d->cq_um = d->dbr_um = NULL;
	mlx5dv_devx_free_uar(d->uar);
	d->uar = NULL;
}

static void test_gone_with_context(void)
{
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0)
		in_child("gone_child", gone_case, -1, -1);
	th_defer(kid_reap_cb, NULL);
	kid_wait_ok();
}

int main(void)
{
	RUN(test_general_cmd);
	RUN(test_create);
	RUN(test_other_context);
	RUN(test_other_process);
	RUN(test_in_use);
	RUN(test_gone_with_context);
	return th_summary("test_verbs_devx_bad");
}
