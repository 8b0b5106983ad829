#include "base_maps.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* A number in base (10 or 16) at *p, moving past it. */
static uint64_t maps_num(const char **p, unsigned base)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char c = **p;
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 99;

		if (d >= base)
			return v;
		v = v * base + d;
	}
}

static const char *maps_next_field(const char *p)
{
	while (*p != ' ' && *p != '\0')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/* "lo-hi perms offset dev inode [path]" into m. */
static void maps_parse(const char *line, struct base_map *m)
{
	m->lo = maps_num(&line, 16);
	if (*line == '-')
		line++;
	m->hi = maps_num(&line, 16);
	while (*line == ' ')
		line++;
	memset(m->perms, 0, sizeof(m->perms));
	for (unsigned i = 0; i < 4 && line[i] != ' ' && line[i] != '\0'; i++)
		m->perms[i] = line[i];
	line = maps_next_field(line); /* past perms */
	m->off = maps_num(&line, 16);
	line = maps_next_field(maps_next_field(line)); /* past offset, device */
	m->ino = (unsigned long)maps_num(&line, 10);
	while (*line == ' ')
		line++;
	m->path = line;
}

int base_maps_scan(int (*fn)(const struct base_map *m, void *arg), void *arg)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -1;
	while (rc == 0) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while (rc == 0 && (nl = strchr(line, '\n')) != NULL) {
			struct base_map m;

			*nl = '\0';
			maps_parse(line, &m);
			rc = fn(&m, arg);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: only a long path does that; dropped */
	}
	close(fd);
	return rc;
}
