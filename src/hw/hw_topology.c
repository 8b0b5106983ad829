/*
 * hw_topology — loading and validating the emulated device's topology.
 *
 * The built-in default is written in the topology file format and goes
 * through the same parser as a user's file, so both follow one set of rules.
 */
#include "hw_topology.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_config.h"
#include "base_log.h"
#include "hw_machine.h"

struct hw_topology {
	uint32_t n;
	struct hw_function fn[HW_TOPO_MAX_FUNCS];
};

/* The example topology of the DOCA Core guide (docs/topology.example). */
static const char default_topology[] =
	"# host side\n"
	"function name=pf0 side=host type=pf pci=0000:0b:00.0 vuid=MT2334XZ0000PF0 ibdev=mlx5_0"
	" iface=ens1f0np0 mac=02:53:44:0b:00:00 ipv4=192.168.100.1 ipv6=fd00:100::1\n"
	"function name=pf1 side=host type=pf pci=0000:0b:00.1 vuid=MT2334XZ0000PF1 ibdev=mlx5_1"
	" iface=ens1f1np1 mac=02:53:44:0b:00:01 ipv4=192.168.101.1 ipv6=fd00:101::1\n"
	"function name=pf0vf0 side=host type=vf parent=pf0 pci=0000:0b:00.2 vuid=MT2334XZ0000PF0VF0"
	" ibdev=mlx5_2 iface=ens1f0v0 mac=02:53:44:0b:00:02 ipv4=192.168.100.2 ipv6=fd00:100::2\n"
	"function name=pf0vf1 side=host type=vf parent=pf0 pci=0000:0b:00.3 vuid=MT2334XZ0000PF0VF1"
	" ibdev=mlx5_3 iface=ens1f0v1 mac=02:53:44:0b:00:03 ipv4=192.168.100.3 ipv6=fd00:100::3\n"
	"function name=pf1vf0 side=host type=vf parent=pf1 pci=0000:0b:00.4 vuid=MT2334XZ0000PF1VF0"
	" ibdev=mlx5_4 iface=ens1f1v0 mac=02:53:44:0b:00:04 ipv4=192.168.101.2 ipv6=fd00:101::2\n"
	"# DPU side\n"
	"function name=p0 side=dpu type=pf pci=0000:03:00.0 vuid=MT2334XZ0000ECPF0 ibdev=mlx5_0"
	" iface=p0 mac=02:53:44:03:00:00 ipv4=192.168.100.254 ipv6=fd00:100::fe\n"
	"function name=p1 side=dpu type=pf pci=0000:03:00.1 vuid=MT2334XZ0000ECPF1 ibdev=mlx5_1"
	" iface=p1 mac=02:53:44:03:00:01 ipv4=192.168.101.254 ipv6=fd00:101::fe\n"
	"function name=p0s0 side=dpu type=sf parent=p0 vuid=MT2334XZ0000ECPF0SF0 ibdev=mlx5_2"
	" iface=en3f0pf0sf0 mac=02:53:44:03:80:00 ipv4=192.168.100.253 ipv6=fd00:100::fd\n"
	"function name=p1s0 side=dpu type=sf parent=p1 vuid=MT2334XZ0000ECPF1SF0 ibdev=mlx5_3"
	" iface=en3f1pf1sf0 mac=02:53:44:03:81:00 ipv4=192.168.101.253 ipv6=fd00:101::fd\n"
	"# representors, on the DPU\n"
	"rep name=hpf0 parent=p0 represents=pf0 iface=pf0hpf\n"
	"rep name=hpf0vf0 parent=p0 represents=pf0vf0 iface=pf0vf0\n"
	"rep name=hpf0vf1 parent=p0 represents=pf0vf1 iface=pf0vf1\n"
	"rep name=hpf1 parent=p1 represents=pf1 iface=pf1hpf\n"
	"rep name=hpf1vf0 parent=p1 represents=pf1vf0 iface=pf1vf0\n"
	"rep name=pf0sf0 parent=p0 represents=p0s0 iface=pf0sf0\n"
	"rep name=pf1sf0 parent=p1 represents=p1s0 iface=pf1sf0\n";

/* ---- keys of a record ---- */

enum topo_key {
	K_NAME,
	K_SIDE,
	K_TYPE,
	K_PARENT,
	K_PCI,
	K_VUID,
	K_IBDEV,
	K_IFACE,
	K_MAC,
	K_IPV4,
	K_IPV6,
	K_CAPS,
	K_REPRESENTS,
	K_EMULATED,
	K_HOTPLUG,
	K_LINK,
	K_COUNT,
};

static const char *const key_names[K_COUNT] = {
	[K_NAME] = "name",   [K_SIDE] = "side",	    [K_TYPE] = "type",		   [K_PARENT] = "parent",
	[K_PCI] = "pci",     [K_VUID] = "vuid",	    [K_IBDEV] = "ibdev",	   [K_IFACE] = "iface",
	[K_MAC] = "mac",     [K_IPV4] = "ipv4",	    [K_IPV6] = "ipv6",		   [K_CAPS] = "caps",
	[K_REPRESENTS] = "represents", [K_EMULATED] = "emulated", [K_HOTPLUG] = "hotplug",
	[K_LINK] = "link",
};

#define KB(k) (1u << (k))
static const uint32_t function_keys = KB(K_NAME) | KB(K_SIDE) | KB(K_TYPE) | KB(K_PARENT) | KB(K_PCI) |
				      KB(K_VUID) | KB(K_IBDEV) | KB(K_IFACE) | KB(K_MAC) | KB(K_IPV4) |
				      KB(K_IPV6) | KB(K_CAPS) | KB(K_LINK);
static const uint32_t rep_keys = KB(K_NAME) | KB(K_PARENT) | KB(K_REPRESENTS) | KB(K_EMULATED) | KB(K_HOTPLUG) |
				 KB(K_PCI) | KB(K_TYPE) | KB(K_VUID) | KB(K_IFACE);

static const char *const cap_names[] = {
	"dma",	   "export_dpu", "from_export_dpu", "export_rdma", "from_export_rdma", "hotplug_manager",
	"rep_all", "rep_net",	 "rep_emulated", "sha",
};

struct record {
	bool is_rep;
	const char *v[K_COUNT]; /* NULL when the key is absent */
};

struct parse_ctx {
	struct hw_topology *t;
	const char *src;
	unsigned int line;
};

static int perr(const struct parse_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(const struct parse_ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	base_log(BASE_LOG_ERROR, "hw_topology", "topology %s:%u: %s; topology refused", c->src, c->line, msg);
	return -1;
}

/* ---- small value parsers ---- */

static bool hex_field(const char *s, size_t width, unsigned int *out)
{
	unsigned int v = 0;

	for (size_t i = 0; i < width; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v * 16 + (unsigned int)(isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*out = v;
	return true;
}

bool hw_pci_parse(const char *s, bool allow_short, struct hw_pci_addr *out)
{
	unsigned int dom = 0, bus, dev, fn;
	size_t len;

	if (s == NULL)
		return false;
	len = strnlen(s, HW_TOPO_PCI_SIZE);
	if (len == 12) {
		if (s[4] != ':' || !hex_field(s, 4, &dom))
			return false;
		s += 5;
	} else if (len != 7 || !allow_short) {
		return false;
	}
	if (s[2] != ':' || s[5] != '.' || !hex_field(s, 2, &bus) || !hex_field(s + 3, 2, &dev) ||
	    !hex_field(s + 6, 1, &fn) || dev > 31 || fn > 7)
		return false;
	out->domain = (uint16_t)dom;
	out->bus = (uint8_t)bus;
	out->device = (uint8_t)dev;
	out->function = (uint8_t)fn;
	return true;
}

bool hw_pci_equal(const struct hw_pci_addr *a, const struct hw_pci_addr *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->device == b->device && a->function == b->function;
}

static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b;

	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		if ((i < 5 && s[i * 3 + 2] != ':') || !hex_field(s + i * 3, 2, &b))
			return false;
		mac[i] = (uint8_t)b;
	}
	return true;
}

static bool parse_caps(const char *s, uint32_t *caps)
{
	const size_t ncaps = sizeof(cap_names) / sizeof(cap_names[0]);

	*caps = 0;
	if (strcmp(s, "none") == 0)
		return true;
	while (*s != '\0') {
		size_t len = strcspn(s, ",");
		size_t i;

		for (i = 0; i < ncaps; i++)
			if (strlen(cap_names[i]) == len && strncmp(s, cap_names[i], len) == 0)
				break;
		if (i == ncaps)
			return false;
		*caps |= 1u << i;
		s += len;
		if (*s == ',' && *++s == '\0')
			return false; /* a trailing comma is a typo, not an empty name */
	}
	return true;
}

static bool valid_name(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len >= HW_TOPO_NAME_SIZE)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

static int copy_str(const struct parse_ctx *c, char *dst, size_t size, const char *val, const char *what)
{
	if (val == NULL)
		return 0;
	if (strlen(val) >= size)
		return perr(c, "%s '%s' longer than %zu characters", what, val, size - 1);
	strcpy(dst, val);
	return 0;
}

static int find_idx(const struct hw_topology *t, const char *name)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (strcmp(t->fn[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* ---- records ---- */

static int split_record(const struct parse_ctx *c, char *line, struct record *r)
{
	char *save = NULL;
	char *tok = strtok_r(line, " \t", &save);
	uint32_t allowed;

	memset(r, 0, sizeof(*r));
	if (strcmp(tok, "function") == 0)
		r->is_rep = false;
	else if (strcmp(tok, "rep") == 0)
		r->is_rep = true;
	else
		return perr(c, "unknown record '%s' (expected 'function' or 'rep')", tok);
	allowed = r->is_rep ? rep_keys : function_keys;
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		char *eq = strchr(tok, '=');
		int k;

		if (eq == NULL || eq == tok || eq[1] == '\0')
			return perr(c, "'%s' is not key=value", tok);
		*eq = '\0';
		for (k = 0; k < K_COUNT; k++)
			if (strcmp(tok, key_names[k]) == 0)
				break;
		if (k == K_COUNT || !(allowed & KB(k)))
			return perr(c, "unknown key '%s' for a %s", tok, r->is_rep ? "rep" : "function");
		if (r->v[k] != NULL)
			return perr(c, "key '%s' given twice", tok);
		r->v[k] = eq + 1;
	}
	if (r->v[K_NAME] == NULL)
		return perr(c, "missing key 'name'");
	return 0;
}

static uint32_t default_caps(const struct hw_function *f)
{
	uint32_t caps = HW_CAP_DMA | HW_CAP_SHA | HW_CAP_MMAP_EXPORT_RDMA | HW_CAP_MMAP_FROM_EXPORT_RDMA;

	if (f->side == HW_SIDE_HOST)
		caps |= HW_CAP_MMAP_EXPORT_DPU;
	else if (f->type == HW_FUNC_PF)
		caps |= HW_CAP_MMAP_FROM_EXPORT_DPU | HW_CAP_HOTPLUG_MANAGER | HW_CAP_REP_FILTER_ALL |
			HW_CAP_REP_FILTER_NET | HW_CAP_REP_FILTER_EMULATED;
	return caps;
}

static int parse_side_type(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	const char *side = r->v[K_SIDE], *type = r->v[K_TYPE];

	if (side == NULL || type == NULL)
		return perr(c, "function '%s' needs side= and type=", f->name);
	if (strcmp(side, "host") == 0)
		f->side = HW_SIDE_HOST;
	else if (strcmp(side, "dpu") == 0)
		f->side = HW_SIDE_DPU;
	else
		return perr(c, "side '%s' is not host or dpu", side);
	if (strcmp(type, "pf") == 0)
		f->type = HW_FUNC_PF;
	else if (strcmp(type, "vf") == 0)
		f->type = HW_FUNC_VF;
	else if (strcmp(type, "sf") == 0)
		f->type = HW_FUNC_SF;
	else
		return perr(c, "type '%s' is not pf, vf or sf", type);
	return 0;
}

/* A VF or SF hangs under an earlier PF of its own side; a PF has no parent. */
static int parse_fn_parent(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	const struct hw_function *p;

	f->parent = -1;
	if (f->type == HW_FUNC_PF) {
		if (r->v[K_PARENT] != NULL)
			return perr(c, "PF '%s' cannot have a parent", f->name);
		return 0;
	}
	if (r->v[K_PARENT] == NULL)
		return perr(c, "%s '%s' needs parent=", f->type == HW_FUNC_VF ? "VF" : "SF", f->name);
	f->parent = find_idx(c->t, r->v[K_PARENT]);
	if (f->parent < 0)
		return perr(c, "parent '%s' of '%s' is not defined (before it)", r->v[K_PARENT], f->name);
	p = &c->t->fn[f->parent];
	if (p->is_rep || p->type != HW_FUNC_PF || p->side != f->side)
		return perr(c, "parent '%s' of '%s' is not a PF on the same side", p->name, f->name);
	return 0;
}

static int parse_pci(const struct parse_ctx *c, const char *val, struct hw_function *f)
{
	if (!hw_pci_parse(val, false, &f->pci))
		return perr(c, "malformed PCI address '%s' (expected DDDD:BB:DD.F)", val);
	snprintf(f->pci_str, sizeof(f->pci_str), "%04x:%02x:%02x.%x", f->pci.domain, f->pci.bus, f->pci.device,
		 f->pci.function & 7u);
	return 0;
}

static int parse_addrs(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	if (r->v[K_MAC] != NULL && !parse_mac(r->v[K_MAC], f->mac))
		return perr(c, "malformed MAC address '%s'", r->v[K_MAC]);
	if (r->v[K_IPV4] != NULL && inet_pton(AF_INET, r->v[K_IPV4], f->ipv4) != 1)
		return perr(c, "malformed IPv4 address '%s'", r->v[K_IPV4]);
	if (r->v[K_IPV6] != NULL && inet_pton(AF_INET6, r->v[K_IPV6], f->ipv6) != 1)
		return perr(c, "malformed IPv6 address '%s'", r->v[K_IPV6]);
	if (r->v[K_LINK] == NULL || strcmp(r->v[K_LINK], "eth") == 0)
		f->link = HW_LINK_ETH;
	else if (strcmp(r->v[K_LINK], "ib") == 0)
		f->link = HW_LINK_IB;
	else
		return perr(c, "link must be eth or ib, not '%s'", r->v[K_LINK]);
	return 0;
}

static int build_function(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	if (parse_side_type(c, r, f) || parse_fn_parent(c, r, f))
		return -1;
	if (r->v[K_PCI] != NULL) {
		if (parse_pci(c, r->v[K_PCI], f))
			return -1;
	} else if (f->type == HW_FUNC_SF) {
		/* An SF is an auxiliary device of its PF and shows the PF's address. */
		f->pci = c->t->fn[f->parent].pci;
		memcpy(f->pci_str, c->t->fn[f->parent].pci_str, sizeof(f->pci_str));
	} else {
		return perr(c, "function '%s' needs pci=", f->name);
	}
	if (r->v[K_VUID] == NULL)
		return perr(c, "function '%s' needs vuid=", f->name);
	if (copy_str(c, f->vuid, sizeof(f->vuid), r->v[K_VUID], "vuid") ||
	    copy_str(c, f->ibdev, sizeof(f->ibdev), r->v[K_IBDEV], "ibdev") ||
	    copy_str(c, f->iface, sizeof(f->iface), r->v[K_IFACE], "iface") || parse_addrs(c, r, f))
		return -1;
	f->caps = default_caps(f);
	if (r->v[K_CAPS] != NULL && !parse_caps(r->v[K_CAPS], &f->caps))
		return perr(c, "unknown capability in '%s'", r->v[K_CAPS]);
	return 0;
}

static int parse_flag(const struct parse_ctx *c, const char *val, const char *what, bool *out)
{
	*out = false;
	if (val == NULL || strcmp(val, "0") == 0)
		return 0;
	if (strcmp(val, "1") != 0)
		return perr(c, "%s '%s' is not 0 or 1", what, val);
	*out = true;
	return 0;
}

/* The rep of a local function takes that function's identity. */
static int rep_of_local(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	const struct hw_function *t;

	if (r->v[K_PCI] || r->v[K_TYPE] || r->v[K_VUID])
		return perr(c, "rep '%s' takes pci, type and vuid from the function it represents", f->name);
	f->represents = find_idx(c->t, r->v[K_REPRESENTS]);
	if (f->represents < 0)
		return perr(c, "rep '%s' represents '%s', which is not defined (before it)", f->name,
			    r->v[K_REPRESENTS]);
	t = &c->t->fn[f->represents];
	if (t->is_rep || (t->side == HW_SIDE_DPU && t->type != HW_FUNC_SF))
		return perr(c, "rep '%s' must represent a host function or a DPU SF", f->name);
	for (uint32_t i = 0; i < c->t->n; i++)
		if (c->t->fn[i].is_rep && c->t->fn[i].represents == f->represents)
			return perr(c, "'%s' already has a representor ('%s')", t->name, c->t->fn[i].name);
	f->type = t->type;
	f->pci = t->pci;
	memcpy(f->pci_str, t->pci_str, sizeof(f->pci_str));
	memcpy(f->vuid, t->vuid, sizeof(f->vuid));
	return 0;
}

/* An emulated function lives only behind its rep, so the rep names its identity. */
static int rep_of_emulated(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	const char *type = r->v[K_TYPE];

	if (r->v[K_PCI] == NULL || type == NULL || r->v[K_VUID] == NULL)
		return perr(c, "emulated rep '%s' needs pci=, type= and vuid=", f->name);
	if (strcmp(type, "pf") == 0)
		f->type = HW_FUNC_PF;
	else if (strcmp(type, "vf") == 0)
		f->type = HW_FUNC_VF;
	else
		return perr(c, "type '%s' of emulated rep '%s' is not pf or vf", type, f->name);
	if (parse_pci(c, r->v[K_PCI], f))
		return -1;
	return copy_str(c, f->vuid, sizeof(f->vuid), r->v[K_VUID], "vuid");
}

static int build_rep(const struct parse_ctx *c, const struct record *r, struct hw_function *f)
{
	const struct hw_function *p;

	f->is_rep = true;
	f->side = HW_SIDE_DPU;
	f->represents = -1;
	if (r->v[K_PARENT] == NULL)
		return perr(c, "rep '%s' needs parent=", f->name);
	f->parent = find_idx(c->t, r->v[K_PARENT]);
	if (f->parent < 0)
		return perr(c, "parent '%s' of rep '%s' is not defined (before it)", r->v[K_PARENT], f->name);
	p = &c->t->fn[f->parent];
	if (p->is_rep || p->side != HW_SIDE_DPU || p->type != HW_FUNC_PF)
		return perr(c, "parent '%s' of rep '%s' is not a DPU PF", p->name, f->name);
	if (parse_flag(c, r->v[K_EMULATED], "emulated", &f->emulated) ||
	    parse_flag(c, r->v[K_HOTPLUG], "hotplug", &f->hotplug))
		return -1;
	if (f->emulated == (r->v[K_REPRESENTS] != NULL))
		return perr(c, "rep '%s' needs exactly one of represents= or emulated=1", f->name);
	if (f->hotplug && !f->emulated)
		return perr(c, "rep '%s': only emulated functions are hot-plugged", f->name);
	if ((f->emulated ? rep_of_emulated(c, r, f) : rep_of_local(c, r, f)) != 0)
		return -1;
	return copy_str(c, f->iface, sizeof(f->iface), r->v[K_IFACE], "iface");
}

/* Identities that must not repeat: PCI (PF/VF per side), VUID, ibdev and iface per side. */
static int check_unique(const struct parse_ctx *c, const struct hw_function *f)
{
	for (uint32_t i = 0; i < c->t->n; i++) {
		const struct hw_function *o = &c->t->fn[i];
		bool same_side = o->side == f->side;

		if (!f->is_rep && !o->is_rep && same_side && f->type != HW_FUNC_SF && o->type != HW_FUNC_SF &&
		    hw_pci_equal(&o->pci, &f->pci))
			return perr(c, "PCI address %s of '%s' already used by '%s'", f->pci_str, f->name, o->name);
		if ((!f->is_rep || f->emulated) && (!o->is_rep || o->emulated) && strcmp(o->vuid, f->vuid) == 0)
			return perr(c, "vuid %s of '%s' already used by '%s'", f->vuid, f->name, o->name);
		if (same_side && f->ibdev[0] != '\0' && strcmp(o->ibdev, f->ibdev) == 0)
			return perr(c, "ibdev %s of '%s' already used by '%s'", f->ibdev, f->name, o->name);
		if (same_side && f->iface[0] != '\0' && strcmp(o->iface, f->iface) == 0)
			return perr(c, "iface %s of '%s' already used by '%s'", f->iface, f->name, o->name);
	}
	return 0;
}

static int parse_record(struct parse_ctx *c, char *line)
{
	struct hw_topology *t = c->t;
	struct hw_function *f;
	struct record r;

	if (split_record(c, line, &r))
		return -1;
	if (!valid_name(r.v[K_NAME]))
		return perr(c, "bad name '%s' (1-%d of [A-Za-z0-9_.-])", r.v[K_NAME], HW_TOPO_NAME_SIZE - 1);
	if (find_idx(t, r.v[K_NAME]) >= 0)
		return perr(c, "duplicate name '%s'", r.v[K_NAME]);
	if (t->n == HW_TOPO_MAX_FUNCS)
		return perr(c, "more than %d functions", HW_TOPO_MAX_FUNCS);
	f = &t->fn[t->n];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, r.v[K_NAME]);
	f->id = t->n + 1;
	if ((r.is_rep ? build_rep(c, &r, f) : build_function(c, &r, f)) != 0 || check_unique(c, f) != 0)
		return -1;
	t->n++;
	return 0;
}

/* Cuts the comment and surrounding blanks; returns NULL for an empty line. */
static char *trim_line(char *line)
{
	char *end;

	line[strcspn(line, "#\r\n")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	end = line + strlen(line);
	while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return *line == '\0' ? NULL : line;
}

static int parse_stream(struct parse_ctx *c, FILE *in)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	while (rc == 0 && (len = getline(&buf, &cap, in)) >= 0) {
		char *line;

		c->line++;
		if ((size_t)len > HW_TOPO_LINE_MAX + 1 || ((size_t)len == HW_TOPO_LINE_MAX + 1 && buf[len - 1] != '\n'))
			rc = perr(c, "line longer than %d characters", HW_TOPO_LINE_MAX);
		else if (strlen(buf) != (size_t)len)
			rc = perr(c, "NUL byte in line");
		else if ((line = trim_line(buf)) != NULL)
			rc = parse_record(c, line);
	}
	if (rc == 0 && ferror(in))
		rc = perr(c, "read error");
	free(buf);
	return rc;
}

static struct hw_topology *topo_parse(FILE *in, const char *src)
{
	struct hw_topology *t = calloc(1, sizeof(*t));
	struct parse_ctx c = { .t = t, .src = src, .line = 0 };

	if (t == NULL) {
		BASE_ERR("topology %s: out of memory", src);
		return NULL;
	}
	if (parse_stream(&c, in) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

/*
 * A named machine on the built-in topology: addresses of its own, derived
 * from its IPv4 a.b.c.d, so no two machines claim the same ones and each
 * GID names its machine (hw_machine_of_gid): the MAC 06:a:b:c:d:<index>,
 * the machine's own IPv4 on the first function (the rendezvous of hw_xm.h
 * is there) and none on the others, the IPv6 fd00:5344:<a.b>:<c.d>::<index + 1>.
 */
static void topo_machine_addrs(struct hw_topology *t)
{
	uint32_t ip, i;
	uint8_t a[4];

	if (!hw_machine_ipv4(&ip))
		return;
	a[0] = (uint8_t)(ip >> 24), a[1] = (uint8_t)(ip >> 16), a[2] = (uint8_t)(ip >> 8), a[3] = (uint8_t)ip;
	for (i = 0; i < t->n; i++) {
		struct hw_function *f = &t->fn[i];

		if (f->is_rep)
			continue;
		f->mac[0] = 0x06;
		memcpy(f->mac + 1, a, 4);
		f->mac[5] = (uint8_t)i;
		memset(f->ipv4, 0, sizeof(f->ipv4));
		if (i == 0)
			memcpy(f->ipv4, a, 4);
		memset(f->ipv6, 0, sizeof(f->ipv6));
		f->ipv6[0] = 0xfd, f->ipv6[2] = 0x53, f->ipv6[3] = 0x44;
		memcpy(f->ipv6 + 4, a, 4);
		f->ipv6[15] = (uint8_t)(i + 1);
	}
}

static struct hw_topology *topo_load(void)
{
	const char *path = base_config_topology();
	struct hw_topology *t;
	FILE *in;

	if (path == NULL) {
		in = fmemopen((void *)default_topology, sizeof(default_topology) - 1, "r");
		path = "<built-in>";
	} else {
		in = fopen(path, "r");
	}
	if (in == NULL) {
		BASE_ERR("topology %s: cannot open (%s); topology refused", path, strerror(errno));
		return NULL;
	}
	t = topo_parse(in, path);
	fclose(in);
	if (t != NULL && base_config_topology() == NULL)
		topo_machine_addrs(t);
	return t;
}

/* ---- the process-wide topology ---- */

static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static struct hw_topology *topo_cur;
static enum hw_side topo_side_cur = HW_SIDE_HOST;

static void topo_init(void)
{
	topo_side_cur = base_config_side_dpu() ? HW_SIDE_DPU : HW_SIDE_HOST;
	topo_cur = topo_load();
}

const struct hw_topology *hw_topo_get(void)
{
	pthread_once(&topo_once, topo_init);
	return topo_cur;
}

enum hw_side hw_topo_side(void)
{
	pthread_once(&topo_once, topo_init);
	return topo_side_cur;
}

int hw_topology_reload(void)
{
	pthread_once(&topo_once, topo_init);
	free(topo_cur);
	topo_init();
	return topo_cur != NULL ? 0 : -1;
}

uint32_t hw_topo_count(const struct hw_topology *topo)
{
	return topo != NULL ? topo->n : 0;
}

const struct hw_function *hw_topo_func(const struct hw_topology *topo, int idx)
{
	if (topo == NULL || idx < 0 || (uint32_t)idx >= topo->n)
		return NULL;
	return &topo->fn[idx];
}

const struct hw_function *hw_topo_find(const struct hw_topology *topo, const char *name)
{
	int idx;

	if (topo == NULL || name == NULL)
		return NULL;
	idx = find_idx(topo, name);
	return idx < 0 ? NULL : &topo->fn[idx];
}

const char *hw_side_name(enum hw_side side)
{
	return side == HW_SIDE_DPU ? "dpu" : "host";
}
