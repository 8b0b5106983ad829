/*
 * DOCA argp usage and version text.
 */
#include "argp_priv.h"
#include "doca_version.h"

#define DARGP_LEVELS "<10=DISABLE, 20=CRITICAL, 30=ERROR, 40=WARNING, 50=INFO, 60=DEBUG, 70=TRACE>"

static void dargp_print_flag(FILE *out, const char *flag, const char *text)
{
	fprintf(out, "  %-36s %s\n", flag, text);
}

static void dargp_print_param(FILE *out, const struct doca_argp_param *p)
{
	char flag[160];
	int n = 0;

	if (p->short_name != NULL)
		n = snprintf(flag, sizeof(flag), "-%s%s", p->short_name, p->long_name ? ", " : "");
	if (p->long_name != NULL && n >= 0 && (size_t)n < sizeof(flag))
		n += snprintf(flag + n, sizeof(flag) - (size_t)n, "--%s", p->long_name);
	if (p->arguments != NULL && n >= 0 && (size_t)n < sizeof(flag))
		snprintf(flag + n, sizeof(flag) - (size_t)n, " %s", p->arguments);
	fprintf(out, "  %-36s %s%s\n", flag, p->description ? p->description : "",
		p->mandatory ? " (required)" : "");
}

void dargp_print_usage(FILE *out)
{
	const struct doca_argp_param *p;
	const char *name = dargp_g.program_name ? dargp_g.program_name : "program";

	fprintf(out, "Usage: %s [DOCA Flags] [Program Flags]%s\n\n", name,
		dargp_g.dpdk_cb ? " -- [DPDK EAL Flags]" : "");
	fprintf(out, "DOCA Flags:\n");
	dargp_print_flag(out, "-h, --help", "Print this help text and exit");
	dargp_print_flag(out, "-v, --version", "Print version information and exit");
	dargp_print_flag(out, "-l, --log-level <level>", "Application log level " DARGP_LEVELS);
	dargp_print_flag(out, "--sdk-log-level <level>", "SDK log level " DARGP_LEVELS);
	dargp_print_flag(out, "-j, --json <path>", "Read the flags from a JSON file (not supported by softdpu)");
	if (dargp_g.params == NULL)
		return;
	fprintf(out, "\nProgram Flags:\n");
	for (p = dargp_g.params; p != NULL; p = p->next)
		dargp_print_param(out, p);
}

void dargp_print_version(FILE *out)
{
	fprintf(out, "%s\n", dargp_g.program_name ? dargp_g.program_name : "program");
	fprintf(out, "DOCA SDK version: %s (softdpu)\n", DOCA_VER_STRING);
}
