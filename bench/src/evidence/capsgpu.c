/*
 * The GPU backends' device lines: ggml_cuda_init for CUDA, ROCm/HIP and
 * MUSA (2023's ggml_init_cublas too), both Vulkan device line forms and
 * the SYCL device tables. Rows of capslines.c's table of line readers.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/capsread.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(member) offsetof(struct caps_device, member)

/* ---- CUDA, ROCm/HIP, MUSA (ggml_cuda_init) ------------------------------- */

/*
 * The backend a "found N KIND devices" or "failed to initialize KIND:"
 * word names: one with a device block of its own; CAPS_NBACKENDS if none.
 */
static enum caps_backend
gpu_kind(struct caps *c, const char *word)
{
	enum caps_backend b = caps_backend_of(word, strcspn(word, " :"));

	return caps_gpu_of(c, b) ? b : CAPS_NBACKENDS;
}

/*
 * "ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143771 MiB):",
 * "ggml_cuda_init: found 1 ROCm devices:", 2023's "ggml_init_cublas:
 * found 1 CUDA devices:".
 */
int
caps_cuda_found(struct caps_state *st, char *line)
{
	const char *p = strstr(line, "ggml_cuda_init: found "), *q;
	enum caps_backend kind;
	struct caps_gpu *g;
	char word[16];
	long total;
	int n;

	if (!p)
		p = strstr(line, "ggml_init_cublas: found ");
	if (!p)
		return 0;
	p = strstr(p, "found ");
	if (sscanf(p, "found %d %15s devices", &n, word) != 2 ||
	    (kind = gpu_kind(st->c, word)) == CAPS_NBACKENDS)
		return 0;
	g = caps_gpu_of(st->c, kind);
	g->present = 1;
	g->count = n;
	if ((q = strstr(p, "Total VRAM: ")) &&
	    sscanf(q + strlen("Total VRAM: "), "%ld", &total) == 1)
		g->total_vram_mib = total;
	st->gpu_ctx = kind;
	caps_note_backend(st->c, kind);
	return 1;
}

/* "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device …" */
int
caps_cuda_failed(struct caps_state *st, char *line)
{
	static const char tag[] = "ggml_cuda_init: failed to initialize ";
	const char *p = strstr(line, tag), *colon;
	enum caps_backend kind;
	struct caps_gpu *g;
	char *msg;

	if (!p || (kind = gpu_kind(st->c, p + strlen(tag))) == CAPS_NBACKENDS)
		return 0;
	g = caps_gpu_of(st->c, kind);
	g->present = 1;
	colon = strchr(p + strlen(tag), ':');
	msg = xstrdup(colon ? colon + 1 : "");
	caps_set_str(&g->error, caps_trim(msg));
	free(msg);
	caps_note_backend(st->c, kind);
	return 1;
}

/* One ", "-separated field of a CUDA or ROCm device line. */
static void
gpu_field(struct caps_device *d, char *field, enum caps_backend *kind)
{
	int major, minor;
	long v;

	if (sscanf(field, "compute capability %d.%d", &major, &minor) == 2) {
		d->compute_capability = major * 10.0 + minor;  /* no overflow */
	} else if (caps_starts(field, "gfx")) {
		field[strcspn(field, " (")] = '\0';
		caps_set_str(&d->gfx, field);
		if (*kind == CAPS_NBACKENDS)
			*kind = CAPS_ROCM;
	} else if (caps_starts(field, "VMM: ")) {
		d->vmm = caps_starts(field + 5, "yes");
	} else if (sscanf(field, "Wave Size: %ld", &v) == 1) {
		d->wave_size = v;
	} else if (sscanf(field, "VRAM: %ld", &v) == 1) {
		d->vram_mib = v;
	}
}

/*
 * "  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: N MiB"
 * (CUDA; VRAM since 2025, no VMM in 2023) and "  Device 0: AMD Radeon
 * 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32, VRAM: N MiB"
 * (ROCm). The backend is the one the "found" line above named; without
 * one (a partial paste), a gfx field says ROCm and anything else CUDA.
 */
int
caps_gpu_device(struct caps_state *st, char *line)
{
	char *p = strstr(line, "Device "), *name, *rest, *field, *save = NULL;
	enum caps_backend kind = st->gpu_ctx;
	struct caps_device d;
	struct caps_gpu *g;
	int idx;

	if (!p || sscanf(p, "Device %d", &idx) != 1 ||
	    (!strstr(p, ", compute capability") && !strstr(p, ", gfx")))
		return 0;
	name = p + strlen("Device ") + strspn(p + strlen("Device "),
					      "0123456789");
	if (*name != ':')
		return 0;
	/* the name is everything up to the first comma; ROCm prints an
	 * empty one for some APUs ("Device 0: , gfx1151 (0x1151), …"):
	 * the device is kept, its name "" */
	rest = strchr(name + 1, ',');
	if (!rest)
		return 0;
	*rest = '\0';
	field = caps_trim(name + 1);
	if (!*field && !strstr(rest + 1, " gfx"))
		return 0;
	caps_device_init(&d, idx);
	d.name = xstrdup(field);
	for (field = strtok_r(rest + 1, ",", &save); field;
	     field = strtok_r(NULL, ",", &save))
		gpu_field(&d, caps_trim(field), &kind);
	if (kind == CAPS_NBACKENDS)
		kind = CAPS_CUDA;
	g = caps_gpu_of(st->c, kind);
	g->present = 1;
	*caps_device_new(g, idx) = d;   /* taken over */
	caps_device_settle(g);
	caps_note_backend(st->c, kind);
	return 1;
}

/* "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no" (CUDA and ROCm builds alike) */
int
caps_cuda_flag(struct caps_state *st, char *line)
{
	char *p = strstr(line, "ggml_cuda_init: GGML_"), *colon, *val;
	struct caps_kv *e;

	if (!p)
		return 0;
	p += strlen("ggml_cuda_init: ");
	colon = strchr(p, ':');
	if (!colon)
		return 0;
	*colon = '\0';
	val = caps_trim(colon + 1);
	e = caps_kv_set(&st->c->cuda_flags, &st->c->ncuda_flags, p);
	if (!strcmp(val, "yes") || !strcmp(val, "no"))
		caps_kv_bool(e, !strcmp(val, "yes"));
	else
		caps_kv_text(e, val);
	return 1;
}

/* ---- Vulkan -------------------------------------------------------------- */

/*
 * Vulkan driver names (VkPhysicalDeviceDriverProperties.driverName) that
 * ggml prints after the device name; the older "VulkanN:" line had none,
 * so there a trailing group is a driver only when it is one of these or
 * the name before it also ends in a group ("… (RADV NAVI31) (radv)").
 */
static const char *const vulkan_drivers[] = {
	"radv", "AMD open-source driver", "AMD proprietary driver", "NVIDIA",
	"Intel open-source Mesa driver", "Intel Corporation", "llvmpipe",
	"venus", "MoltenVK", "turnip Mesa driver", "turnip", "NVK", "nvk",
	"Qualcomm Technologies Inc. Adreno Vulkan Driver", "Dozen", "panvk",
	"v3dv", "Honeykrisp", "Arm Mali driver",
};

/*
 * Splits "NAME (DRIVER)" in full into the device and its driver.
 * always: the format always has the group (ggml_vulkan: N = …).
 */
static void
vulkan_name(struct caps_device *d, const char *full, int always)
{
	char *copy = xstrdup(full), *open = NULL, *p;
	size_t n = strlen(copy), i;
	int driver = 0;

	if (n && copy[n - 1] == ')') {
		int depth = 0;
		for (p = copy + n - 1; p >= copy; p--) {
			if (*p == ')')
				depth++;
			else if (*p == '(' && --depth == 0) {
				open = p;
				break;
			}
		}
	}
	if (open && open > copy) {
		copy[n - 1] = '\0';
		if (always) {
			driver = 1;
		} else {
			char *before = copy;
			size_t m = (size_t)(open - copy);
			for (i = 0; i < ARRAY_SIZE(vulkan_drivers); i++)
				if (!strcmp(open + 1, vulkan_drivers[i]))
					driver = 1;
			while (m && before[m - 1] == ' ')
				m--;
			if (m && before[m - 1] == ')')
				driver = 1;
		}
	}
	if (driver) {
		caps_set_str(&d->driver, open + 1);
		*open = '\0';
		caps_set_str(&d->device, caps_trim(copy));
	} else {
		caps_set_str(&d->device, full);
	}
	free(copy);
}

/* A whole number as ggml's %d prints it (no '+', no leading zero). */
static int
printed_int(const char *v, long *out)
{
	const char *p = v + (*v == '-');

	if (!*p || (p[0] == '0' && (p[1] || p != v)) ||
	    strspn(p, "0123456789") !=
	    strlen(p) || strlen(p) > 18)
		return -1;
	*out = strtol(v, NULL, 10);
	return 0;
}

/*
 * One "key: value" field of a Vulkan device line; the members name the
 * ones ggml prints, any other (or one that is not a whole number where
 * one is expected) is kept as printed.
 */
static void
vulkan_field(struct caps_device *d, const char *key, const char *val)
{
	static const struct { const char *key; size_t offset; } ints[] = {
		{ "uma", D(uma) },
		{ "fp16", D(fp16) },
		{ "bf16", D(bf16) },
		{ "int dot", D(int_dot) },
		{ "warp size", D(warp_size) },
		{ "shared memory", D(shared_memory) },
	};
	static const struct { const char *key; size_t offset; } texts[] = {
		{ "matrix cores", D(matrix_cores) },
		{ "name", D(name) },
		{ "device", D(device) },
		{ "driver", D(driver) },
	};
	size_t i;
	long v;

	for (i = 0; i < ARRAY_SIZE(ints); i++) {
		long *member = (long *)(void *)((char *)d + ints[i].offset);

		if (strcmp(key, ints[i].key))
			continue;
		/* the later of a key printed twice counts, as text or not */
		caps_kv_remove(&d->extra, &d->nextra, key);
		*member = CAPS_NONE;
		if (printed_int(val, &v) == 0) {
			*member = v;
			return;
		}
		break;
	}
	for (i = 0; i < ARRAY_SIZE(texts); i++)
		if (!strcmp(key, texts[i].key)) {
			caps_set_str((char **)(void *)((char *)d +
						       texts[i].offset), val);
			return;
		}
	if (strcmp(key, "index"))
		caps_kv_text(caps_kv_set(&d->extra, &d->nextra, key), val);
}

/*
 * "ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | …" (p at
 * the index) and the older "Vulkan0: AMD Radeon RX 7900 XTX (RADV
 * NAVI31) (radv) | uma: 0 | fp16: 1 | warp size: 64" (p at the index,
 * old set). The name keeps the text as printed.
 */
static void
vulkan_device(struct caps_state *st, char *p, int old)
{
	struct caps_gpu *g = &st->c->vulkan;
	struct caps_device *d;
	char *start = old ? strchr(p, ':') : strstr(p, " = ");
	char *field, *save = NULL;
	int idx;

	if (!start || sscanf(p, "%d", &idx) != 1)
		return;
	start += old ? 1 : 3;
	g->present = 1;
	d = caps_device_new(g, idx);
	field = strtok_r(start, "|", &save);
	if (field) {
		field = caps_trim(field);
		caps_set_str(&d->name, field);
		vulkan_name(d, field, !old);
	}
	while ((field = strtok_r(NULL, "|", &save))) {
		char *colon = strchr(field, ':');
		if (!colon)
			continue;
		*colon = '\0';
		vulkan_field(d, caps_trim(field), caps_trim(colon + 1));
	}
	caps_device_settle(g);
	caps_note_backend(st->c, CAPS_VULKAN);
}

/* "VulkanN: " not preceded by a letter (not "ggml_vulkan: "); the index. */
static char *
old_vulkan(char *line)
{
	char *p = line;

	while ((p = strstr(p, "Vulkan"))) {
		char *q = p + strlen("Vulkan");
		int prev_ok = p == line || p[-1] == ' ' || p[-1] == '>' ||
			p[-1] == '\t';
		if (prev_ok && *q >= '0' && *q <= '9') {
			char *r = q;
			while (*r >= '0' && *r <= '9')
				r++;
			if (r[0] == ':' && r[1] == ' ' && strstr(r, " | uma: "))
				return q;
		}
		p = q;
	}
	return NULL;
}

int
caps_vulkan_line(struct caps_state *st, char *line)
{
	struct caps_gpu *g = &st->c->vulkan;
	char *p;
	int n;

	if ((p = strstr(line, "ggml_vulkan: Found ")) &&
	    sscanf(p, "ggml_vulkan: Found %d Vulkan devices", &n) == 1) {
		g->present = 1;
		g->count = n;
		caps_note_backend(st->c, CAPS_VULKAN);
		return 1;
	}
	if (strstr(line, "ggml_vulkan: No devices found")) {
		g->present = 1;
		caps_note_backend(st->c, CAPS_VULKAN);
		return 1;
	}
	if ((p = strstr(line, "ggml_vulkan: ")) && p[13] >= '0' &&
	    p[13] <= '9') {
		vulkan_device(st, p + 13, 0);
		return 1;
	}
	if ((p = old_vulkan(line))) {
		vulkan_device(st, p, 1);
		return 1;
	}
	/* January 2024: "ggml_vulkan: Using NAME | fp16: 1 | warp size: 32",
	 * one line for the one device it used (device 0) */
	if ((p = strstr(line, "ggml_vulkan: Using ")) && strchr(p, '|')) {
		char *dev = xstrfmt("0: %s", p + strlen("ggml_vulkan: Using "));

		vulkan_device(st, dev, 1);
		free(dev);
		return 1;
	}
	return 0;
}

/*
 * The device list of 2025-26 builds (--list-devices, and the lines
 * llama-bench prints under "Available devices:"): "  CUDA0: NVIDIA
 * GeForce RTX 3060 Ti (7840 MiB, 7668 MiB free)", "  ROCm0: …",
 * "  Vulkan0: …", "  SYCL0: …". The name and its total memory; a device
 * already known from its backend's init block keeps what that said.
 */
int
caps_list_device(struct caps_state *st, char *line)
{
	char *p = caps_trim(line), *name, *open, *end;
	enum caps_backend kind;
	struct caps_device *d;
	struct caps_gpu *g;
	long total, avail;
	size_t k;
	int idx;

	for (k = 0; (p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= 'a' && p[k] <= 'z');
	     k++)
		;
	if (!k || p[k] < '0' || p[k] > '9' ||
	    (kind = caps_backend_of(p, k)) == CAPS_NBACKENDS ||
	    !(g = caps_gpu_of(st->c, kind)) || sscanf(p + k, "%d", &idx) != 1)
		return 0;
	name = p + k + strspn(p + k, "0123456789");
	end = p + strlen(p);
	if (name[0] != ':' || name[1] != ' ' || end - p < 4 || end[-1] != ')')
		return 0;
	open = strrchr(p, '(');
	if (!open || open < name ||
	    sscanf(open, "(%ld MiB, %ld MiB free)", &total, &avail) != 2)
		return 0;
	*open = '\0';
	name = caps_trim(name + 1);
	g->present = 1;
	for (k = 0; k < g->ndev && g->dev[k].index != idx; k++)
		;
	if (k == g->ndev) {
		d = caps_device_new(g, idx);
		caps_set_str(&d->name, name);
		if (kind == CAPS_VULKAN)
			vulkan_name(d, d->name, 0);
	} else {
		d = &g->dev[k];
	}
	if (d->vram_mib < 0)
		d->vram_mib = total;
	caps_note_backend(st->c, kind);
	return 1;
}

/* ---- SYCL ---------------------------------------------------------------- */

/* The cells of a "|a|b|c|" row (trimmed, in place); their count. */
static size_t
table_cells(char *line, char **cells, size_t max)
{
	char *p = strchr(line, '|'), *next;
	size_t n = 0;

	if (!p)
		return 0;
	p++;
	while (n < max && (next = strchr(p, '|'))) {
		*next = '\0';
		cells[n++] = caps_trim(p);
		p = next + 1;
	}
	return n;
}

/* The header row of the device table: which columns say what. */
static void
sycl_header(struct caps_state *st, char **cells, size_t n)
{
	size_t i;

	st->sycl_name = st->sycl_type = st->sycl_mem = -1;
	st->sycl_ncells = n;
	for (i = 0; i < n; i++) {
		if (!strcmp(cells[i], "Name"))
			st->sycl_name = (int)i;
		else if (!strcmp(cells[i], "Device Type"))
			st->sycl_type = (int)i;
		else if (!strcmp(cells[i], "Global mem size") ||
			 !strcmp(cells[i], "size"))
			st->sycl_mem = (int)i;
	}
}

/*
 * The device table ggml-sycl prints after "found N SYCL devices:": a
 * header row with "ID" and "Name" (2024: one table "Part1" with the
 * names and "Part2" without; 2025: one table whose header spans three
 * rows), then one row per device. Returns 1 when line belonged to it.
 */
static int
sycl_table_line(struct caps_state *st, char *line)
{
	struct caps_gpu *g = &st->c->sycl;
	struct caps_device *d;
	char *cells[32], *copy;
	size_t n;
	long idx;

	for (copy = line; *copy == ' ' || *copy == '\t'; copy++)
		;
	if (*copy != '|') {
		/* "Part1:", "Part2:" and blank lines stay in the table; any
		 * other line after its rows ends it */
		if (*copy && !caps_starts(copy, "Part") && st->sycl_rows)
			st->sycl_table = 0;
		return 0;
	}
	st->sycl_rows++;
	n = table_cells(copy, cells, ARRAY_SIZE(cells));
	if (n && !strcmp(cells[0], "ID")) {
		sycl_header(st, cells, n);
		return 1;
	}
	if (!n || n != st->sycl_ncells || st->sycl_name < 0 ||
	    (size_t)st->sycl_name >= n || parse_long(cells[0], &idx) < 0)
		return 1;
	g->present = 1;
	d = caps_device_new(g, idx);
	d->name = xstrdup(cells[st->sycl_name]);
	if (st->sycl_type >= 0 && (size_t)st->sycl_type < n)
		d->type = xstrdup(cells[st->sycl_type]);
	if (st->sycl_mem >= 0 && (size_t)st->sycl_mem < n)
		d->global_mem = xstrdup(cells[st->sycl_mem]);
	caps_device_settle(g);
	return 1;
}

int
caps_sycl_line(struct caps_state *st, char *line)
{
	struct caps_gpu *g = &st->c->sycl;
	char *p;
	int n;

	if (st->sycl_table && sycl_table_line(st, line))
		return 1;
	if ((p = strstr(line, "found ")) &&
	    sscanf(p, "found %d SYCL devices", &n) == 1) {
		g->present = 1;
		g->count = n;
		st->sycl_table = 1;
		st->sycl_rows = 0;
		st->sycl_name = -1;
		caps_note_backend(st->c, CAPS_SYCL);
		return 1;
	}
	/* "ggml_sycl_init: …", "[SYCL] call ggml_init_sycl", and the
	 * oneAPI memory query's warning that only ggml-sycl prints */
	if (strstr(line, "ggml_sycl_init:") ||
	    strstr(line, "ggml_check_sycl") || strstr(line, "[SYCL]") ||
	    strstr(line, "ext_intel_free_memory")) {
		caps_note_backend(st->c, CAPS_SYCL);
		return 1;
	}
	return 0;
}
