/*
 * rs_index — from an rsocket's number (its event channel's fd) to the
 * socket. As with close(2), closing an rsocket while another thread still
 * uses it is the application's race; the index only keeps lookups and
 * changes from tearing each other.
 */
#include <errno.h>
#include <stdlib.h>

#include "rs_int.h"

static pthread_mutex_t rs_index_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rs **rs_table;
static int rs_table_len;

int rs_index_add(struct rs *rs)
{
	int ret = 0;

	pthread_mutex_lock(&rs_index_lock);
	if (rs->fd >= rs_table_len) {
		int n = rs_table_len ? rs_table_len : 64;
		struct rs **t;

		while (n <= rs->fd)
			n *= 2;
		t = realloc(rs_table, (size_t)n * sizeof(*t));
		if (t == NULL) {
			errno = ENOMEM;
			ret = -1;
			goto out;
		}
		for (int i = rs_table_len; i < n; i++)
			t[i] = NULL;
		rs_table = t;
		rs_table_len = n;
	}
	rs_table[rs->fd] = rs;
out:
	pthread_mutex_unlock(&rs_index_lock);
	return ret;
}

void rs_index_del(struct rs *rs)
{
	pthread_mutex_lock(&rs_index_lock);
	if (rs->fd >= 0 && rs->fd < rs_table_len && rs_table[rs->fd] == rs)
		rs_table[rs->fd] = NULL;
	pthread_mutex_unlock(&rs_index_lock);
}

struct rs *rs_get(int fd)
{
	struct rs *rs = NULL;

	pthread_mutex_lock(&rs_index_lock);
	if (fd >= 0 && fd < rs_table_len)
		rs = rs_table[fd];
	pthread_mutex_unlock(&rs_index_lock);
	return rs;
}

struct rs *rs_lock(int fd)
{
	struct rs *rs = rs_get(fd);

	if (rs == NULL) {
		errno = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&rs->lock);
	return rs;
}

void rs_unlock(struct rs *rs)
{
	pthread_mutex_unlock(&rs->lock);
}
