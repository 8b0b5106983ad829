/*
 * cm_mcast — rdma_join_multicast(3), rdma_join_multicast_ex and
 * rdma_leave_multicast(3) over the device's multicast groups (verbs'
 * ibv_attach_mcast), as the kernel's RDMA CM and rdma-core v44 share the work:
 *
 *   - join (a UD id bound to a device, or with its address resolved): the
 *     group's GID from its IP address (RoCE v2: ::ffff:a.b.c.d; InfiniBand:
 *     the IPoIB mapping with the RDMA CM's signature), a MULTICAST_JOIN
 *     event whose ud parameters hold the group's address (hop limit 64 on
 *     RoCE, the source GID index of the id's address), QPN 0xffffff and the
 *     port space's Q_Key (RDMA_UDP_QKEY). An IPv6 group on a RoCE v2 port
 *     fails as the kernel's does (its ENOTSUPP, 524).
 *   - taking that event (rdma_get_cm_event) attaches the id's QP to the
 *     group unless joined send-only; a refusal turns it into
 *     MULTICAST_ERROR with status -1 and errno set, as rdma-core does.
 *   - leave: detaches the QP, forgets the group and drops its events not
 *     yet taken.
 *
 * An InfiniBand port also joins a group named by its GID (AF_IB, as
 * mckey -M gives it).
 *
 * There is no subnet manager to ask: a join succeeds at once, and the
 * groups are the device's (hw_mcast.h); a datagram to a group also goes
 * to the network's other machines (SOFTDPU_MACHINES), whose members get it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/ib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "cm_int.h"

#define CM_MC_QPN 0xffffffu
#define CM_MC_HOP_LIMIT 64 /* IPV6_DEFAULT_HOPLIMIT: the kernel's for an IPv4 group on RoCE v2 */
#define CM_ENOTSUPP 524	   /* the kernel's ENOTSUPP, which the CM passes to the caller as it is */
#define CM_MLID_BASE 0xc000u

/* One group an id joined. */
struct cm_mc {
	struct cm_mc *next;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	union ibv_gid mgid;
	uint16_t mlid;
	uint16_t join_flags;
	void *context;
};

bool cm_mcast_group(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr));
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

/*
 * A group's address length: an IP address's, or AF_IB's (sockaddr_ib, whose
 * sib_addr is the group's GID itself: mckey -M), which only joins use.
 */
static socklen_t cm_mc_addr_len(const struct sockaddr *addr)
{
	return addr->sa_family == AF_IB ? (socklen_t)sizeof(struct sockaddr_ib) : cm_addr_len(addr);
}

static bool cm_gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, mapped, sizeof(mapped)) == 0;
}

/*
 * The source GID index for a group: the RoCE v2 entry of the id's IPv4
 * address, else the port's first IPv4 RoCE v2 entry (loopback and the
 * wildcard stand for the port); an InfiniBand port's GID 0.
 */
static int cm_mc_sgid(struct cm_id *id, bool roce, uint8_t *idx, union ibv_gid *gid)
{
	const struct sockaddr_in *s = (const struct sockaddr_in *)&id->src;
	struct ibv_gid_entry e = { 0 };
	int first = -1;

	if (!roce) {
		*idx = 0;
		*gid = id->dev->gid;
		return 0;
	}
	for (int i = 0; i < 256; i++) {
		int rc = ibv_query_gid_ex(id->dev->verbs, id->dev->port_num, (uint32_t)i, &e, 0);

		if (rc == EINVAL)
			break; /* past the table */
		if (rc != 0 || e.gid_type != IBV_GID_TYPE_ROCE_V2 || !cm_gid_is_v4(&e.gid))
			continue;
		if (first < 0)
			first = i;
		if (s->sin_family == AF_INET && memcmp(e.gid.raw + 12, &s->sin_addr, 4) == 0) {
			first = i;
			break;
		}
	}
	if (first < 0)
		return EADDRNOTAVAIL;
	(void)ibv_query_gid(id->dev->verbs, id->dev->port_num, first, gid);
	*idx = (uint8_t)first;
	return 0;
}

/* The source address of an id resolving a group: its port's own IPv4 (or IPv6) address, as routing picks it. */
void cm_mcast_pick_src(struct cm_id *id, const struct sockaddr *group)
{
	struct cm_dev *dev = id->dev != NULL ? id->dev : cm_dev_first();
	struct sockaddr_in *s4 = (struct sockaddr_in *)&id->src;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&id->src;
	uint16_t port = cm_addr_port((struct sockaddr *)&id->src);
	struct ibv_gid_entry e = { 0 };

	memset(&id->src, 0, sizeof(id->src));
	id->src.ss_family = group->sa_family;
	for (uint32_t i = 0; dev != NULL && i < 256; i++) {
		int rc = ibv_query_gid_ex(dev->verbs, dev->port_num, i, &e, 0);
		bool v4 = cm_gid_is_v4(&e.gid);

		if (rc == EINVAL)
			break;
		if (rc != 0 || e.gid_type != IBV_GID_TYPE_ROCE_V2 || (group->sa_family == AF_INET) != v4 ||
		    (!v4 && e.gid.raw[0] == 0xfe))
			continue;
		if (v4)
			memcpy(&s4->sin_addr, e.gid.raw + 12, 4);
		else
			memcpy(&s6->sin6_addr, e.gid.raw, 16);
		break;
	}
	cm_addr_set_port((struct sockaddr *)&id->src, port);
}

/* The group's GID and LID on the id's port (cma_iboe_set_mgid, cma_set_mgid); 0 or an errno value. */
static int cm_mc_mgid(bool roce, const struct sockaddr *addr, union ibv_gid *mgid, uint16_t *mlid)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)addr;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)addr;
	uint32_t a;

	memset(mgid, 0, sizeof(*mgid));
	*mlid = 0;
	if (cm_addr_is_any(addr))
		return EINVAL;
	if (addr->sa_family == AF_IB) {
		/* The MGID as given (cma_set_mgid); an InfiniBand port's only, and a multicast one. */
		const struct sockaddr_ib *sib = (const struct sockaddr_ib *)addr;

		if (roce || sib->sib_addr.sib_raw[0] != 0xff)
			return EINVAL;
		memcpy(mgid->raw, sib->sib_addr.sib_raw, 16);
	} else if (addr->sa_family == AF_INET6) {
		if (roce)
			return CM_ENOTSUPP; /* the kernel joins no IPv6 group on a RoCE v2 port */
		memcpy(mgid->raw, &s6->sin6_addr, 16);
	} else if (roce) {
		mgid->raw[10] = 0xff, mgid->raw[11] = 0xff;
		memcpy(mgid->raw + 12, &s4->sin_addr, 4);
		return 0;
	} else {
		/* ip_ib_mc_map on the IPoIB broadcast group ff12:401b:ffff::, the RDMA CM's signature in byte 3. */
		a = ntohl(s4->sin_addr.s_addr) & 0x0fffffffu;
		mgid->raw[0] = 0xff, mgid->raw[1] = 0x12, mgid->raw[2] = 0x40, mgid->raw[3] = 0x01;
		mgid->raw[4] = 0xff, mgid->raw[5] = 0xff;
		mgid->raw[12] = (uint8_t)(a >> 24), mgid->raw[13] = (uint8_t)(a >> 16);
		mgid->raw[14] = (uint8_t)(a >> 8), mgid->raw[15] = (uint8_t)a;
	}
	/* The LID a subnet manager would assign the group: one of the multicast range, fixed by its GID. */
	*mlid = (uint16_t)(CM_MLID_BASE | ((mgid->raw[14] << 8 | mgid->raw[15]) & 0x3ffe));
	return 0;
}

static bool cm_port_roce(struct cm_id *id)
{
	struct ibv_port_attr pa;

	return ibv_query_port(id->dev->verbs, id->dev->port_num, &pa) != 0 ||
	       pa.link_layer != IBV_LINK_LAYER_INFINIBAND;
}

/* The MULTICAST_JOIN event of a group (cma_make_mc_event); NULL without memory. */
static struct cm_event *cm_mc_event(struct cm_id *id, const struct cm_mc *mc, bool roce)
{
	struct cm_event *e = cm_event_new(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	struct ibv_ah_attr *ah;

	if (e == NULL)
		return NULL;
	ah = &e->ev.param.ud.ah_attr;
	e->ev.param.ud.private_data = mc->context;
	if (cm_mc_sgid(id, roce, &ah->grh.sgid_index, &(union ibv_gid){ 0 }) != 0) {
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -EADDRNOTAVAIL;
		return e;
	}
	ah->is_global = 1;
	ah->grh.dgid = mc->mgid;
	ah->grh.hop_limit = roce ? CM_MC_HOP_LIMIT : 1;
	ah->dlid = mc->mlid;
	ah->port_num = id->dev->port_num;
	e->ev.param.ud.qp_num = CM_MC_QPN;
	e->ev.param.ud.qkey = RDMA_UDP_QKEY;
	return e;
}

/* 0 or an errno value (cm_lock held). */
static int cm_join_locked(struct cm_id *id, const struct sockaddr *addr, uint16_t flags, void *context)
{
	bool roce;
	struct cm_mc *mc;
	int rc;

	/* The kernel's rdma_join_multicast: a UD id on a device, its address bound or resolved. */
	if (id->dev == NULL || (id->state != CM_ADDR_RESOLVED && !(id->state == CM_IDLE && id->psock >= 0)))
		return EINVAL;
	if (id->id.qp_type != IBV_QPT_UD)
		return EINVAL;
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return ENOMEM;
	roce = cm_port_roce(id);
	rc = cm_mc_mgid(roce, addr, &mc->mgid, &mc->mlid);
	if (rc != 0) {
		free(mc);
		return rc;
	}
	mc->addrlen = cm_mc_addr_len(addr);
	memcpy(&mc->addr, addr, mc->addrlen);
	mc->join_flags = flags;
	mc->context = context;
	mc->next = id->mc;
	id->mc = mc;
	cm_event_queue(id->ch, cm_mc_event(id, mc, roce));
	return 0;
}

static int cm_join(struct rdma_cm_id *id, struct sockaddr *addr, uint16_t flags, void *context)
{
	int rc;

	if (id == NULL || addr == NULL || cm_mc_addr_len(addr) == 0) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_join_locked((struct cm_id *)id, addr, flags, context);
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return cm_complete((struct cm_id *)id);
}

CM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return cm_join(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

CM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	if (attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) {
		errno = ENOTSUP;
		return -1;
	}
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		errno = EINVAL;
		return -1;
	}
	return cm_join(id, attr->addr, (uint16_t)attr->join_flags, context);
}

/* The group of id a MULTICAST event belongs to, by its GID and context; NULL once left. */
static struct cm_mc *cm_mc_of_event(struct cm_id *id, const struct rdma_cm_event *ev)
{
	for (struct cm_mc *mc = id->mc; mc != NULL; mc = mc->next)
		if (mc->context == ev->param.ud.private_data &&
		    (ev->event == RDMA_CM_EVENT_MULTICAST_ERROR ||
		     memcmp(mc->mgid.raw, ev->param.ud.ah_attr.grh.dgid.raw, 16) == 0))
			return mc;
	return NULL;
}

/* A MULTICAST_JOIN taken by the program: the id's QP joins the group now (ucma_process_join; cm_lock held). */
void cm_mcast_taken(struct cm_event *e)
{
	struct cm_id *id = e->owner;
	struct cm_mc *mc;
	int rc;

	if (e->ev.event != RDMA_CM_EVENT_MULTICAST_JOIN)
		return;
	mc = cm_mc_of_event(id, &e->ev);
	if (mc == NULL || id->id.qp == NULL || mc->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return;
	rc = ibv_attach_mcast(id->id.qp, &mc->mgid, mc->mlid);
	if (rc != 0) {
		BASE_DBG("QP %u cannot join its multicast group: %s", id->id.qp->qp_num, strerror(rc));
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		e->ev.status = -1;
		errno = rc;
	}
}

struct cm_mc_match {
	const struct cm_id *id;
	const struct cm_mc *mc;
};

static bool cm_mc_event_of(const struct cm_event *e, const void *arg)
{
	const struct cm_mc_match *m = arg;

	return e->owner == m->id &&
	       (e->ev.event == RDMA_CM_EVENT_MULTICAST_JOIN || e->ev.event == RDMA_CM_EVENT_MULTICAST_ERROR) &&
	       e->ev.param.ud.private_data == m->mc->context;
}

CM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cm_id *cid = (struct cm_id *)id;
	struct cm_mc **pos, *mc = NULL;
	socklen_t len = addr != NULL ? cm_mc_addr_len(addr) : 0;

	if (id == NULL || len == 0) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	for (pos = &cid->mc; *pos != NULL; pos = &(*pos)->next)
		if (memcmp(&(*pos)->addr, addr, len) == 0) {
			mc = *pos;
			*pos = mc->next;
			break;
		}
	if (mc != NULL)
		cm_channel_drop_matching(cid->ch, cm_mc_event_of, &(struct cm_mc_match){ cid, mc });
	pthread_mutex_unlock(&cm_lock);
	if (mc == NULL) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	if (id->qp != NULL && mc->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		(void)ibv_detach_mcast(id->qp, &mc->mgid, mc->mlid);
	free(mc);
	return 0;
}

/* The groups of an id going away: the device forgets them with it (its QP's attachments are the program's). */
void cm_mcast_free_locked(struct cm_id *id)
{
	while (id->mc != NULL) {
		struct cm_mc *mc = id->mc;

		id->mc = mc->next;
		free(mc);
	}
}
