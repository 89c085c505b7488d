#define _POSIX_C_SOURCE 200809L
/*
 * The base probe of a local Linux target, read in this process: the same
 * files the shell snippet (fingerprint_probe_script) reads, the same
 * source.key=value lines, without a shell. The snippet costs a fork, an
 * exec of sh and a system call per byte of every file it reads (dash's
 * read builtin), several milliseconds of every session's fixed cost;
 * these reads cost a fraction of one. test-fingerprint checks that both
 * print the same lines on the machine that runs the tests.
 *
 * Each line follows the snippet's rules: a value read with `read -r` has
 * its surrounding blanks trimmed; os-release is read as the snippet's
 * `. /etc/os-release` would set NAME, VERSION_ID and PRETTY_NAME.
 */
#include "evidence/fingerprint.h"
#include "base/util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of path (up to n bytes), blanks trimmed; 0 or -1. */
static int
first_line(const char *path, char *line, size_t n)
{
	FILE *fp = fopen(path, "r");
	char *p, *e;

	line[0] = '\0';
	if (!fp)
		return -1;
	if (!fgets(line, (int)n, fp))
		line[0] = '\0';
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';
	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	for (e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	*e = '\0';
	memmove(line, p, (size_t)(e - p) + 1);
	return 0;
}

/*
 * A value of os-release as a shell assignment sets it: double quotes
 * (with \" \\ \$ \` escapes), single quotes, or a bare word.
 */
static void
os_release_value(const char *v, struct buf *out)
{
	char q = 0;

	for (; *v && *v != '\n'; v++) {
		if (!q && (*v == '"' || *v == '\'')) {
			q = *v;
		} else if (q && *v == q) {
			q = 0;
		} else if (q == '"' && *v == '\\' && v[1] &&
			   strchr("\"\\$`", v[1])) {
			buf_addch(out, *++v);
		} else if (!q && *v == '\\' && v[1]) {
			buf_addch(out, *++v);
		} else if (!q && (*v == ' ' || *v == '\t' || *v == '#')) {
			break;
		} else {
			buf_addch(out, *v);
		}
	}
}

static void
os_release(struct buf *out)
{
	static const struct {
		const char *var, *key;
	} keys[] = {
		{ "NAME=", "linux.os_name" },
		{ "VERSION_ID=", "linux.os_version" },
		{ "PRETTY_NAME=", "linux.os_pretty" },
	};
	struct buf vals[3] = { BUF_INIT, BUF_INIT, BUF_INIT };
	char line[1024];
	FILE *fp = fopen("/etc/os-release", "r");
	size_t i;

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp))
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strncmp(line, keys[i].var, strlen(keys[i].var))) {
				/* a later assignment wins, as in the shell */
				buf_reset(&vals[i]);
				os_release_value(line + strlen(keys[i].var),
						 &vals[i]);
			}
	fclose(fp);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		buf_addf(out, "%s=%s\n", keys[i].key, vals[i].buf);
		buf_release(&vals[i]);
	}
}

/* The first processor block of /proc/cpuinfo: its model and the flags. */
static void
cpuinfo(char *model, size_t n, int *hv)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int flags = 0;

	model[0] = '\0';
	*hv = 0;
	if (!fp)
		return;
	while ((len = getline(&line, &cap, fp)) >= 0) {
		char *colon, *v;

		if (len && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (!line[0] || line[0] == ':') {
			if (model[0] || flags)
				break;
			continue;
		}
		colon = strchr(line, ':');
		if (!colon)
			continue;
		v = colon + 1;
		if (!strncmp(line, "model name", 10)) {
			snprintf(model, n, "%s", v[0] == ' ' ? v + 1 : v);
		} else if (!strncmp(line, "flags", 5)) {
			char *pad = xstrfmt(" %s ", v);

			flags = 1;
			*hv = strstr(pad, " hypervisor ") != NULL;
			free(pad);
		}
	}
	free(line);
	fclose(fp);
}

/* The CPUs online: the count of "0-3,8,10-11". */
static long
cpus_online(void)
{
	char line[4096], *p, *tok, *save = NULL;
	long n = 0;

	if (first_line("/sys/devices/system/cpu/online", line, sizeof(line)))
		return 0;
	for (tok = strtok_r(line, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long a, b;

		p = strchr(tok, '-');
		if (p) {
			*p = '\0';
			a = strtol(tok, NULL, 10);
			b = strtol(p + 1, NULL, 10);
			n += b - a + 1;
		} else if (*tok) {
			n++;
		}
	}
	return n;
}

static long
mem_kb(int *found)
{
	FILE *fp = fopen("/proc/meminfo", "r");
	char line[256];
	long kb = 0;

	*found = 0;
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "MemTotal: %ld", &kb) == 1) {
			*found = 1;
			break;
		}
	fclose(fp);
	return kb;
}

/* Processes whose name starts with "llama". */
static long
llama_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], comm[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (first_line(path, comm, sizeof(comm)) == 0 &&
		    !strncmp(comm, "llama", 5))
			n++;
	}
	closedir(d);
	return n;
}

int
fingerprint_probe_here(struct buf *out)
{
	char s[256], r[256], m[256], line[1024];
	char load[3][32];
	int hv, found;
	long kb;

	if (first_line("/proc/sys/kernel/ostype", s, sizeof(s)) < 0 ||
	    first_line("/proc/sys/kernel/arch", m, sizeof(m)) < 0)
		return -1;   /* not Linux: the shell probe answers */
	first_line("/proc/sys/kernel/osrelease", r, sizeof(r));
	if (strcmp(s, "Linux"))
		return -1;
	buf_addf(out, "os.uname_s=%s\nos.uname_r=%s\nos.uname_m=%s\n", s, r, m);
	os_release(out);
	cpuinfo(line, sizeof(line), &hv);
	buf_addf(out, "linux.cpu_model=%s\nlinux.cpu_cores=%ld\n"
		 "linux.hypervisor=%d\n", line, cpus_online(), hv);
	kb = mem_kb(&found);
	if (found)
		buf_addf(out, "linux.mem_kb=%ld\n", kb);
	first_line("/sys/class/dmi/id/product_name", line, sizeof(line));
	buf_addf(out, "linux.hw_model=%s\n", line);
	first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		   line, sizeof(line));
	buf_addf(out, "linux.governor=%s\n", line);
	load[0][0] = load[1][0] = load[2][0] = '\0';
	if (first_line("/proc/loadavg", line, sizeof(line)) == 0)
		sscanf(line, "%31s %31s %31s", load[0], load[1], load[2]);
	buf_addf(out, "load.avg=%s %s %s\n", load[0], load[1], load[2]);
	buf_addf(out, "proc.llama=%ld\n", llama_processes());
	return 0;
}
