/*
 * cm_dev — the RDMA devices as the CM sees them, through the public verbs
 * API only: each is opened on first use and kept open for the life of the
 * process (an id's verbs pointer is this shared context, as librdmacm's is),
 * with its port's LID, MTU and GID index 0 read once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "cm_int.h"

#define CM_MAX_DEVS 64

static struct cm_dev cm_devs[CM_MAX_DEVS];
static int cm_ndevs = -1;
static struct ibv_device **cm_ibdevs; /* kept: the devices stay listed for the process */

/* Lists the devices once (cm_lock held). */
static void cm_dev_list(void)
{
	int n = 0, i;

	if (cm_ndevs >= 0)
		return;
	cm_ibdevs = ibv_get_device_list(&n);
	if (cm_ibdevs == NULL)
		n = 0;
	for (i = 0; i < n && i < CM_MAX_DEVS; i++)
		cm_devs[i].ibdev = cm_ibdevs[i];
	cm_ndevs = i;
}

/* Opens dev and reads its port (cm_lock held). NULL when it cannot be opened. */
static struct cm_dev *cm_dev_open(struct cm_dev *dev)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;

	if (dev->verbs != NULL)
		return dev;
	dev->verbs = ibv_open_device(dev->ibdev);
	if (dev->verbs == NULL)
		goto fail;
	dev->port_num = 1;
	if (ibv_query_port(dev->verbs, dev->port_num, &pa) != 0 ||
	    ibv_query_gid(dev->verbs, dev->port_num, 0, &dev->gid) != 0 || ibv_query_device(dev->verbs, &da) != 0)
		goto fail_close;
	dev->max_resp_res = (uint8_t)(da.max_qp_rd_atom < 0xff ? da.max_qp_rd_atom : 0xfe);
	dev->max_init_depth = (uint8_t)(da.max_qp_init_rd_atom < 0xff ? da.max_qp_init_rd_atom : 0xfe);
	dev->lid = pa.lid;
	dev->mtu = pa.active_mtu;
	/* The PD an id gets with its device, as librdmacm's (rdma_reg_msgs() uses id->pd). */
	dev->pd = ibv_alloc_pd(dev->verbs);
	if (dev->pd == NULL)
		goto fail_close;
	return dev;
fail_close:
	ibv_close_device(dev->verbs);
	dev->verbs = NULL;
fail:
	BASE_ERR("cannot open %s", ibv_get_device_name(dev->ibdev));
	return NULL;
}

struct cm_dev *cm_dev_by_name(const char *ibdev)
{
	int i;

	cm_dev_list();
	for (i = 0; i < cm_ndevs; i++)
		if (strcmp(ibv_get_device_name(cm_ibdevs[i]), ibdev) == 0)
			return cm_dev_open(&cm_devs[i]);
	return NULL;
}

struct cm_dev *cm_dev_first(void)
{
	cm_dev_list();
	return cm_ndevs > 0 ? cm_dev_open(&cm_devs[0]) : NULL;
}

struct cm_dev *cm_dev_of_verbs(struct ibv_context *verbs)
{
	int i;

	for (i = 0; i < cm_ndevs; i++)
		if (cm_devs[i].verbs == verbs)
			return &cm_devs[i];
	return NULL;
}

/* rdma_get_devices(3): every device, opened; NULL-terminated. */
CM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int i, n = 0;

	pthread_mutex_lock(&cm_lock);
	cm_dev_list();
	list = calloc((size_t)cm_ndevs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < cm_ndevs; i++)
		if (cm_dev_open(&cm_devs[i]) != NULL)
			list[n++] = cm_devs[i].verbs;
out:
	pthread_mutex_unlock(&cm_lock);
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

CM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
