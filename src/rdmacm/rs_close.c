/*
 * rs_close — the end of an rsocket: rshutdown and rclose. What was written
 * before either reaches the peer: the posted writes complete first, then a
 * FIN tells the peer that EOF follows them.
 */
#include <errno.h>

#include "rs_int.h"

/* Sends the FIN once, after everything written before it. */
static int rs_send_fin(struct rs *rs)
{
	if (rs->fin_sent || rs->state != RS_CONNECTED)
		return 0;
	if (rs_drain(rs) != 0)
		return -1;
	while (!rs->disconnected && rs->err == 0) {
		rs_poll_cq(rs);
		if (rs_post_ctrl(rs, RS_IMM_FIN << 30) == 0) {
			rs->fin_sent = true;
			return rs_drain(rs);
		}
		if (errno != EAGAIN)
			return -1;
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			return -1;
	}
	return 0; /* the connection is gone: nothing more will reach the peer anyway */
}

/*
 * An accepted socket whose RTU is on its way: connected within the CM's
 * bounds (the requester's RTU, or its death), so that the FIN can go.
 */
static void rs_wait_accepted(struct rs *rs)
{
	rs_process(rs);
	while (rs->state == RS_ACCEPTING)
		if (rs_wait(rs, POLLOUT) != 0 && errno != EINTR)
			return;
}

CM_EXPORT int rshutdown(int socket, int how)
{
	struct rs *rs;
	int ret = 0;

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) {
		errno = EINVAL;
		return -1;
	}
	rs = rs_lock(socket);
	if (rs == NULL)
		return -1;
	rs_wait_accepted(rs);
	if (rs->state != RS_CONNECTED) {
		errno = ENOTCONN;
		ret = -1;
		goto out;
	}
	if (how != SHUT_RD) {
		rs->shut_wr = true;
		(void)rs_send_fin(rs);
	}
	if (how != SHUT_WR)
		rs->shut_rd = true;
	if (how == SHUT_RDWR && !rs->disconnected) {
		/* Neither way is used any more: the connection ends, as rsockets do. */
		(void)rdma_disconnect(rs->id);
		rs->disconnected = true;
	}
out:
	rs_unlock(rs);
	return ret;
}

CM_EXPORT int rclose(int socket)
{
	struct rs *rs = rs_lock(socket);

	if (rs == NULL)
		return -1;
	rs_wait_accepted(rs);
	if (rs->state == RS_CONNECTED) {
		(void)rs_send_fin(rs);
		if (!rs->disconnected)
			(void)rdma_disconnect(rs->id);
	}
	rs_unlock(rs);
	rs_free(rs);
	return 0;
}
