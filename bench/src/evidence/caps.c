#define _POSIX_C_SOURCE 200809L
#include "evidence/caps.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON helpers ------------------------------------------------------- */

/* The object (or array) parent[key], created when absent. */
static struct json *
child_of(struct json *parent, const char *key, int array)
{
	struct json *o = json_get_mut(parent, key);

	if (!o) {
		o = array ? json_new_array() : json_new_object();
		json_set(parent, key, o);
	}
	return o;
}

static struct json *
child(struct json *parent, const char *key)
{
	return child_of(parent, key, 0);
}

static struct json *
child_array(struct json *parent, const char *key)
{
	return child_of(parent, key, 1);
}

/* A value seen again moves to the end: keys keep the order last seen. */
static void
set_value(struct json *o, const char *key, struct json *v)
{
	json_remove(o, key);
	json_set(o, key, v);
}

static void
set_number(struct json *o, const char *key, double v)
{
	set_value(o, key, json_new_num(v));
}

static void
set_string(struct json *o, const char *key, const char *v)
{
	set_value(o, key, json_new_str(v));
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* ---- the parse state ---------------------------------------------------- */

#define MAX_BACKENDS 16

struct pstate {
	struct json *root;
	/* backends in the order they first show ("metal", "cuda", …) */
	const char *order[MAX_BACKENDS];
	size_t norder;
	/* which backend the next "  Device N:" lines belong to: the kind
	 * named by the last "found N <KIND> devices" line */
	const char *gpu_ctx;
	/* SYCL device table: after "found N SYCL devices", the columns of
	 * the header row that has "ID" and "Name" */
	int sycl_table, sycl_rows;
	int sycl_name, sycl_type, sycl_mem;
	size_t sycl_ncells;
};

static void
note_backend(struct pstate *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->norder; i++)
		if (!strcmp(st->order[i], name))
			return;
	if (st->norder < MAX_BACKENDS)
		st->order[st->norder++] = name;
}

/*
 * A backend's name as ggml spells it (buffer names, load_backend:, the
 * "found N KIND devices" line) to ours; NULL for what is no GPU backend
 * of its own (BLAS, RPC) or unknown. CPU maps to "cpu".
 */
static const char *
backend_of(const char *name, size_t len)
{
	static const struct { const char *ggml, *ours; } names[] = {
		{ "CUDA", "cuda" }, { "ROCm", "rocm" }, { "HIP", "rocm" },
		{ "MUSA", "musa" }, { "Vulkan", "vulkan" }, { "SYCL", "sycl" },
		{ "MTL", "metal" }, { "Metal", "metal" }, { "CPU", "cpu" },
		{ "CANN", "cann" }, { "OpenCL", "opencl" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i].ggml) == len &&
		    !strncmp(names[i].ggml, name, len))
			return names[i].ours;
	return NULL;
}

/*
 * Appends dev (taken over) to arr unless a device with the same index
 * and name is there already (the same init block printed by a later run
 * in the same log): then dev is dropped.
 */
static void
add_device(struct json *arr, struct json *dev)
{
	const struct json *it;
	double idx = json_num(json_get(dev, "index"));
	const char *name = json_get_str(dev, "name");

	JSON_FOR_EACH(it, arr) {
		const char *n = json_get_str(it, "name");

		if (json_num(json_get(it, "index")) == idx && n && name &&
		    !strcmp(n, name)) {
			json_free(dev);
			return;
		}
	}
	json_append(arr, dev);
}

/* ---- Metal ---------------------------------------------------------------- */

/* ggml Metal "name = true|false" lines of every generation, and keys. */
static const struct {
	const char *label, *key;
} metal_flags[] = {
	{ "simdgroup reduction", "simdgroup_reduction" },
	{ "simdgroup matrix mul.", "simdgroup_matrix_mul" },
	{ "has unified memory", "has_unified_memory" },
	{ "hasUnifiedMemory", "has_unified_memory" },
	{ "has bfloat", "has_bfloat" },
	{ "use bfloat", "use_bfloat" },
	{ "has tensor", "has_tensor" },
	{ "use residency sets", "use_residency_sets" },
	{ "use shared buffers", "use_shared_buffers" },
};

/* "GPU family: MTLGPUFamilyApple9  (1009)" and its Common/Metal kin. */
static void
metal_family(struct json *metal, const char *p)
{
	static const struct { const char *kind, *key; } kinds[] = {
		{ "MTLGPUFamilyApple", "apple_family" },
		{ "MTLGPUFamilyCommon", "common_family" },
		{ "MTLGPUFamilyMetal", "metal_family" },
		{ "MTLGPUFamilyMac", "mac_family" },
	};
	const char *paren = strchr(p, '(');
	long value;
	size_t i;

	if (!paren || sscanf(paren, "(%ld)", &value) != 1)
		return;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		const struct json *old;

		if (!starts(p, kinds[i].kind))
			continue;
		old = json_get(metal, kinds[i].key);
		/* ggml prints the highest family; keep the highest seen. */
		if (!old || json_num(old) < (double)value)
			set_number(metal, kinds[i].key, (double)value);
		return;
	}
}

/* The device name, "MTL0 (Apple M1 Max)" (2026) or "Apple M2" (older). */
static void
metal_name(struct json *metal, char *name)
{
	char *open = strchr(name, '(');
	size_t n = strlen(name);
	long idx = 0;

	if (starts(name, "MTL") && open && n && name[n - 1] == ')') {
		name[n - 1] = '\0';
		*open = '\0';
		sscanf(name, "MTL%ld", &idx);
		set_string(metal, "device", trim(open + 1));
		set_string(metal, "gpu_name", trim(name));
	} else {
		set_string(metal, "device", name);
		set_string(metal, "gpu_name", name);
	}
	set_number(metal, "index", (double)idx);
	set_value(metal, "paravirtual",
		  json_new_bool(strstr(json_get_str(metal, "device"),
				       "Paravirtual") != NULL));
}

static void
metal_line(struct pstate *st, char *line)
{
	struct json *metal = child(st->root, "metal");
	char *p, *eq;
	size_t i;
	double v;

	note_backend(st, "metal");
	if ((p = strstr(line, "GPU name:"))) {
		metal_name(metal, trim(p + strlen("GPU name:")));
		return;
	}
	if ((p = strstr(line, "GPU family:"))) {
		metal_family(metal, trim(p + strlen("GPU family:")));
		return;
	}
	/* ggml_metal_init (2023-24): "found device: Apple M2" */
	if ((p = strstr(line, "found device:")) ||
	    (p = strstr(line, "picking default device:"))) {
		p = trim(strchr(p, ':') + 1);
		if (*p && !json_get(metal, "device"))
			metal_name(metal, p);
		return;
	}
	if ((p = strstr(line, "recommendedMaxWorkingSetSize"))) {
		eq = strchr(p, '=');
		if (eq && sscanf(eq + 1, "%lf", &v) == 1)
			set_number(metal, "recommended_max_working_set_mb", v);
		return;
	}
	if (strstr(line, "tensor API disabled")) {
		set_value(metal, "tensor_api", json_new_bool(0));
		return;
	}
	if ((p = strstr(line, "using embedded metal library"))) {
		set_string(metal, "library", "embedded");
		return;
	}
	if ((p = strstr(line, "library_init: loaded in ")) &&
	    sscanf(p + strlen("library_init: loaded in "), "%lf", &v) == 1) {
		set_number(metal, "library_load_s", v);
		return;
	}
	if ((p = strstr(line, "keep_alive = ")) &&
	    sscanf(p + strlen("keep_alive = "), "%lf", &v) == 1) {
		set_number(metal, "residency_keep_alive_s", v);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(metal_flags); i++) {
		if (!(p = strstr(line, metal_flags[i].label)))
			continue;
		eq = strchr(p, '=');
		if (!eq)
			continue;
		eq = trim(eq + 1);
		if (!strcmp(eq, "true") || !strcmp(eq, "false"))
			set_value(metal, metal_flags[i].key,
				  json_new_bool(!strcmp(eq, "true")));
		return;
	}
}

/* ---- the shim ------------------------------------------------------------- */

/*
 * "[LumeMetalCapabilities] Enabled for llama-bench (appleFamilyMax=1009
 * maxThreadgroupMemory=65536)" or "[VulkanCapabilities] Enabled for
 * llama-bench (profile=stock hide=coopmat,...)", possibly after an NSLog prefix
 * ("2026-08-09 18:20:01.123 llama-bench[1234:5678] ") or another prefix
 * a publisher left in its place; anything else the shim says goes to
 * shim_messages.
 */
static void
shim_line(struct json *root, char *line, char *tag)
{
	char *msg = trim(strchr(tag, ']') + 1);
	struct json *shim;
	char *open, *close, *kv, *save = NULL;

	if (!starts(msg, "Enabled for ")) {
		json_append(child_array(root, "shim_messages"),
			    json_new_str(msg));
		return;
	}
	shim = child(root, "shim");
	set_string(shim, "line", trim(line));
	msg += strlen("Enabled for ");
	open = strrchr(msg, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!open || !close) {
		set_string(shim, "process", trim(msg));
		return;
	}
	*open = '\0';
	*close = '\0';
	set_string(shim, "process", trim(msg));
	for (kv = strtok_r(open + 1, " ", &save); kv;
	     kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		double v;
		if (!eq)
			continue;
		*eq = '\0';
		if (parse_double(eq + 1, &v) == 0)
			set_number(shim, kv, v);
		else
			set_string(shim, kv, eq + 1);
	}
}

/* ---- CUDA, ROCm/HIP, MUSA (ggml_cuda_init) -------------------------------- */

/* The backend a "found N KIND devices" or "failed to initialize KIND:" word names. */
static const char *
cuda_kind(const char *word)
{
	size_t n = strcspn(word, " :");

	return backend_of(word, n);
}

/*
 * "ggml_cuda_init: found 1 CUDA devices (Total VRAM: 143771 MiB):",
 * "ggml_cuda_init: found 1 ROCm devices:", 2023's "ggml_init_cublas:
 * found 1 CUDA devices:". Returns 1 when line was one.
 */
static int
cuda_found(struct pstate *st, const char *line)
{
	const char *p = strstr(line, "ggml_cuda_init: found ");
	const char *kind, *q;
	struct json *o;
	char word[16];
	long total;
	int n;

	if (!p)
		p = strstr(line, "ggml_init_cublas: found ");
	if (!p)
		return 0;
	p = strstr(p, "found ");
	if (sscanf(p, "found %d %15s devices", &n, word) != 2 ||
	    !(kind = cuda_kind(word)) || !strcmp(kind, "cpu"))
		return 0;
	o = child(st->root, kind);
	set_number(o, "count", n);
	if ((q = strstr(p, "Total VRAM: ")) &&
	    sscanf(q + strlen("Total VRAM: "), "%ld", &total) == 1)
		set_number(o, "total_vram_mib", (double)total);
	child_array(o, "devices");
	st->gpu_ctx = kind;
	note_backend(st, kind);
	return 1;
}

/* "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device …" */
static int
cuda_failed(struct pstate *st, const char *line)
{
	static const char tag[] = "ggml_cuda_init: failed to initialize ";
	const char *p = strstr(line, tag), *kind, *colon;
	struct json *o;
	char *msg;

	if (!p || !(kind = cuda_kind(p + strlen(tag))) || !strcmp(kind, "cpu"))
		return 0;
	o = child(st->root, kind);
	colon = strchr(p + strlen(tag), ':');
	msg = xstrdup(colon ? colon + 1 : "");
	set_string(o, "error", trim(msg));
	free(msg);
	child_array(o, "devices");
	note_backend(st, kind);
	return 1;
}

/*
 * "  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: N MiB"
 * (CUDA; VRAM since 2025, no VMM in 2023) and "  Device 0: AMD Radeon
 * 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32, VRAM: N MiB"
 * (ROCm). The backend is the one the "found" line above named; without
 * one (a partial paste), a gfx field says ROCm and anything else CUDA.
 * Returns 1 when line was one.
 */
static int
gpu_device(struct pstate *st, char *line)
{
	char *p = strstr(line, "Device "), *name, *rest, *field, *save = NULL;
	struct json *dev;
	const char *kind = st->gpu_ctx;
	int idx, major, minor;
	long v;

	if (!p || sscanf(p, "Device %d", &idx) != 1 ||
	    (!strstr(p, ", compute capability") && !strstr(p, ", gfx")))
		return 0;
	name = p + strlen("Device ") + strspn(p + strlen("Device "),
					      "0123456789");
	if (*name != ':')
		return 0;
	/* the name is everything up to the first comma, never empty */
	rest = strchr(name + 1, ',');
	if (!rest)
		return 0;
	*rest = '\0';
	field = trim(name + 1);
	if (!*field)
		return 0;
	dev = json_new_object();
	json_set_num(dev, "index", idx);
	json_set_str(dev, "name", field);
	for (field = strtok_r(rest + 1, ",", &save); field;
	     field = strtok_r(NULL, ",", &save)) {
		field = trim(field);
		if (sscanf(field, "compute capability %d.%d", &major,
			   &minor) == 2) {
			json_set_num(dev, "compute_capability",
				     major * 10.0 + minor);   /* no int overflow */
		} else if (starts(field, "gfx")) {
			field[strcspn(field, " (")] = '\0';
			json_set_str(dev, "gfx", field);
			if (!kind)
				kind = "rocm";
		} else if (starts(field, "VMM: ")) {
			json_set_bool(dev, "vmm", starts(field + 5, "yes"));
		} else if (sscanf(field, "Wave Size: %ld", &v) == 1) {
			json_set_num(dev, "wave_size", (double)v);
		} else if (sscanf(field, "VRAM: %ld", &v) == 1) {
			json_set_num(dev, "vram_mib", (double)v);
		}
	}
	if (!kind)
		kind = "cuda";
	add_device(child_array(child(st->root, kind), "devices"), dev);
	note_backend(st, kind);
	return 1;
}

/* "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no" (CUDA and ROCm builds alike) */
static int
cuda_flag(struct json *root, char *line)
{
	char *p = strstr(line, "ggml_cuda_init: GGML_"), *colon, *val;

	if (!p)
		return 0;
	p += strlen("ggml_cuda_init: ");
	colon = strchr(p, ':');
	if (!colon)
		return 0;
	*colon = '\0';
	val = trim(colon + 1);
	if (!strcmp(val, "yes") || !strcmp(val, "no"))
		set_value(child(root, "ggml_cuda_flags"), p,
			  json_new_bool(!strcmp(val, "yes")));
	else
		set_string(child(root, "ggml_cuda_flags"), p, val);
	return 1;
}

/* ---- Vulkan --------------------------------------------------------------- */

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
 * Splits "NAME (DRIVER)" in full: sets "device" (and "driver") of dev.
 * always: the format always has the group (ggml_vulkan: N = …).
 */
static void
vulkan_name(struct json *dev, const char *full, int always)
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
		json_set_str(dev, "driver", open + 1);
		*open = '\0';
		json_set_str(dev, "device", trim(copy));
	} else {
		json_set_str(dev, "device", full);
	}
	free(copy);
}

/*
 * "ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | …" (p at
 * the index) and the older "Vulkan0: AMD Radeon RX 7900 XTX (RADV
 * NAVI31) (radv) | uma: 0 | fp16: 1 | warp size: 64" (p at the index,
 * old set). "name" keeps the text as printed.
 */
static void
vulkan_device(struct pstate *st, char *p, int old)
{
	struct json *dev;
	char *start = old ? strchr(p, ':') : strstr(p, " = ");
	char *field, *save = NULL;
	int idx;

	if (!start || sscanf(p, "%d", &idx) != 1)
		return;
	start += old ? 1 : 3;
	dev = json_new_object();
	json_set_num(dev, "index", idx);
	field = strtok_r(start, "|", &save);
	if (field) {
		field = trim(field);
		json_set_str(dev, "name", field);
		vulkan_name(dev, field, !old);
	}
	while ((field = strtok_r(NULL, "|", &save))) {
		char *colon = strchr(field, ':');
		if (!colon)
			continue;
		*colon = '\0';
		json_set_str(dev, trim(field), trim(colon + 1));
	}
	add_device(child_array(child(st->root, "vulkan"), "devices"), dev);
	note_backend(st, "vulkan");
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

static int
vulkan_line(struct pstate *st, char *line)
{
	char *p;
	int n;

	if ((p = strstr(line, "ggml_vulkan: Found ")) &&
	    sscanf(p, "ggml_vulkan: Found %d Vulkan devices", &n) == 1) {
		struct json *v = child(st->root, "vulkan");
		set_number(v, "count", n);
		child_array(v, "devices");
		note_backend(st, "vulkan");
		return 1;
	}
	if (strstr(line, "ggml_vulkan: No devices found")) {
		child_array(child(st->root, "vulkan"), "devices");
		note_backend(st, "vulkan");
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
	return 0;
}

/* ---- SYCL ----------------------------------------------------------------- */

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
		cells[n++] = trim(p);
		p = next + 1;
	}
	return n;
}

/*
 * The device table ggml-sycl prints after "found N SYCL devices:": a
 * header row with "ID" and "Name" (2024: one table "Part1" with the
 * names and "Part2" without; 2025: one table whose header spans three
 * rows), then one row per device. Returns 1 when line belonged to it.
 */
static int
sycl_table_line(struct pstate *st, char *line)
{
	char *cells[32], *copy;
	size_t n, i;
	long idx;
	struct json *dev;

	for (copy = line; *copy == ' ' || *copy == '\t'; copy++)
		;
	if (*copy != '|') {
		/* "Part1:", "Part2:" and blank lines stay in the table; any
		 * other line after its rows ends it */
		if (*copy && !starts(copy, "Part") && st->sycl_rows)
			st->sycl_table = 0;
		return 0;
	}
	st->sycl_rows++;
	n = table_cells(copy, cells, ARRAY_SIZE(cells));
	if (n && !strcmp(cells[0], "ID")) {
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
		return 1;
	}
	if (!n || n != st->sycl_ncells || st->sycl_name < 0 ||
	    (size_t)st->sycl_name >= n || parse_long(cells[0], &idx) < 0)
		return 1;
	dev = json_new_object();
	json_set_num(dev, "index", (double)idx);
	json_set_str(dev, "name", cells[st->sycl_name]);
	if (st->sycl_type >= 0 && (size_t)st->sycl_type < n)
		json_set_str(dev, "type", cells[st->sycl_type]);
	if (st->sycl_mem >= 0 && (size_t)st->sycl_mem < n)
		json_set_str(dev, "global_mem", cells[st->sycl_mem]);
	add_device(child_array(child(st->root, "sycl"), "devices"), dev);
	return 1;
}

static int
sycl_line(struct pstate *st, char *line)
{
	char *p;
	int n;

	if (st->sycl_table && sycl_table_line(st, line))
		return 1;
	if ((p = strstr(line, "found ")) &&
	    sscanf(p, "found %d SYCL devices", &n) == 1) {
		struct json *o = child(st->root, "sycl");
		set_number(o, "count", n);
		child_array(o, "devices");
		st->sycl_table = 1;
		st->sycl_rows = 0;
		st->sycl_name = -1;
		note_backend(st, "sycl");
		return 1;
	}
	/* "ggml_sycl_init: …", "[SYCL] call ggml_init_sycl", and the
	 * oneAPI memory query's warning that only ggml-sycl prints */
	if (strstr(line, "ggml_sycl_init:") || strstr(line, "ggml_check_sycl") ||
	    strstr(line, "[SYCL]") || strstr(line, "ext_intel_free_memory")) {
		note_backend(st, "sycl");
		return 1;
	}
	return 0;
}

/* ---- buffers and loaded backends ------------------------------------------ */

/*
 * The buffer names of -v runs: "ROCm0 model buffer size", "SYCL0 KV
 * buffer size", "preferred buffer type Vulkan_Host", "MTL0_Mapped model
 * buffer size", "CUDA_Host output buffer size". CPU buffers count as
 * "cpu", which shows only when nothing else does.
 */
static void
buffer_line(struct pstate *st, const char *line)
{
	static const char *const after[] = {
		" model buffer size", " KV buffer size", " compute buffer size",
		" output buffer size", " buffer size",
	};
	const char *p = strstr(line, "preferred buffer type "), *name = NULL;
	size_t len = 0, i;

	if (p) {
		name = p + strlen("preferred buffer type ");
		len = strcspn(name, " ,");
	} else {
		for (i = 0; i < ARRAY_SIZE(after) && !p; i++)
			p = strstr(line, after[i]);
		if (!p)
			return;
		while (p > line && p[-1] == ' ')
			p--;
		name = p;
		while (name > line && name[-1] != ' ' && name[-1] != ':')
			name--;
		len = (size_t)(p - name);
	}
	/* the name's letters: "ROCm0" → "ROCm", "MTL0_Mapped" → "MTL" */
	for (i = 0; i < len; i++)
		if ((name[i] >= '0' && name[i] <= '9') || name[i] == '_')
			break;
	if (i && (p = backend_of(name, i)))
		note_backend(st, p);
}

static void
load_backend(struct pstate *st, char *p)
{
	char *from = strstr(p, " backend from ");
	struct json *b = json_new_object();
	const char *ours;
	char *name;

	p += strlen("load_backend: loaded ");
	if (from) {
		*from = '\0';
		name = trim(p);
		json_set_str(b, "name", name);
		json_set_str(b, "path", trim(from + strlen(" backend from ")));
	} else {
		name = trim(p);
		json_set_str(b, "name", name);
	}
	if ((ours = backend_of(name, strcspn(name, " "))))
		note_backend(st, ours);
	json_append(child_array(st->root, "backends_loaded"), b);
}

static void
dyld_line(struct json *root, char *line, char *p)
{
	struct json *d = child(root, "dyld_insert_failure");
	char *path = p + strlen("terminating because inserted dylib '");
	char *end = strstr(path, "' could not be loaded");

	set_string(d, "line", trim(line));
	if (end) {
		*end = '\0';
		set_string(d, "path", path);
		end += strlen("' could not be loaded");
		if (*end == ':')
			end++;
		set_string(d, "reason", trim(end));
	} else {
		set_string(d, "reason", trim(path));
	}
}

/* Removes terminal escapes ("ESC[32m") in place: colour in pasted logs. */
static void
strip_escapes(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\033' && s[1] == '[') {
			s += 2;
			while (*s && !(*s >= 0x40 && *s <= 0x7e))
				s++;
			if (*s)
				s++;
			continue;
		}
		*w++ = *s++;
	}
	*w = '\0';
}

static void
parse_line(struct pstate *st, char *line)
{
	char *p;

	strip_escapes(line);
	/* the Metal shim, and the Vulkan one (shim/vulkan: "Enabled for
	 * llama-bench (profile=stock hide=...)") */
	if ((p = strstr(line, "[LumeMetalCapabilities]")) ||
	    (p = strstr(line, "[VulkanCapabilities]"))) {
		shim_line(st->root, line, p);
	} else if ((p = strstr(line, "terminating because inserted dylib '"))) {
		dyld_line(st->root, line, p);
	} else if ((p = strstr(line, "load_backend: loaded "))) {
		load_backend(st, p);
	} else if (strstr(line, "ggml_metal") ||
		   strstr(line, "GPU family: MTLGPUFamily")) {
		metal_line(st, line);
	} else if (!cuda_found(st, line) && !cuda_failed(st, line) &&
		   !cuda_flag(st->root, line) && !gpu_device(st, line) &&
		   !vulkan_line(st, line) && !sycl_line(st, line)) {
		buffer_line(st, line);
	}
}

/* ---- the summary ---------------------------------------------------------- */

/* One device of the summary: merged over backends by index and name. */
struct sdev {
	const char *name;          /* NULL: attributes only (Metal flags) */
	double index;
	const struct json *cc, *vram, *gfx;
	int uma;                   /* -1 unknown */
};

static struct sdev *
sdev_find(struct sdev *d, size_t *n, const char *name, double index)
{
	size_t i;

	if (name)
		for (i = 0; i < *n; i++)
			if (d[i].name && d[i].index == index &&
			    !strcmp(d[i].name, name))
				return &d[i];
	memset(&d[*n], 0, sizeof(d[*n]));
	d[*n].name = name;
	d[*n].index = index;
	d[*n].uma = -1;
	return &d[(*n)++];
}

/* What a per-device value is: one value when all agree, else a list. */
static struct json *
one_or_list(struct json *vals)
{
	const struct json *first = json_first(vals), *it;
	struct json *one;

	if (!first) {
		json_free(vals);
		return NULL;
	}
	JSON_FOR_EACH(it, vals)
		if (!json_equal(it, first))
			return vals;
	one = json_dup(first);
	json_free(vals);
	return one;
}

static void
set_if(struct json *o, const char *key, struct json *v)
{
	if (v)
		json_set(o, key, v);
}

static char *
family_name(double f)
{
	return xstrfmt("MTLGPUFamilyApple%ld", (long)f - 1000);
}

/* Appends the reasons a profile is beyond any Apple GPU, "; "-separated. */
static void
suspect_reasons(const struct json *root, struct buf *why)
{
	double fam = json_num(json_get(json_get(root, "metal"),
				       "apple_family"));
	const struct json *shim = json_get(root, "shim");
	double amax = json_num(json_get(shim, "appleFamilyMax"));
	double fmax = json_num(json_get(shim, "familyMax"));
	char *hi = family_name(CAPS_APPLE_FAMILY_HIGHEST);

	if (fam > CAPS_APPLE_FAMILY_HIGHEST) {
		char *name = family_name(fam);
		buf_addf(why, "%s%s is beyond any Apple GPU (highest: %s)",
			 why->len ? "; " : "", name, hi + strlen("MTLGPUFamily"));
		free(name);
	}
	if (amax > CAPS_APPLE_FAMILY_HIGHEST)
		buf_addf(why, "%sthe shim claims Apple families up to %.0f "
			 "(appleFamilyMax=%.0f), beyond any Apple GPU "
			 "(highest: %s)", why->len ? "; " : "", amax, amax,
			 hi + strlen("MTLGPUFamily"));
	if (fmax > CAPS_APPLE_FAMILY_HIGHEST)
		buf_addf(why, "%sthe shim claims every family up to %.0f "
			 "(familyMax=%.0f), Apple families beyond any Apple "
			 "GPU among them (highest: %s)", why->len ? "; " : "",
			 fmax, fmax, hi + strlen("MTLGPUFamily"));
	free(hi);
}

static void
summarise(struct pstate *st)
{
	static const char *const listed[] = {
		"cuda", "rocm", "musa", "vulkan", "sycl",
	};
	struct json *root = st->root, *names = NULL, *backends;
	const struct json *metal = json_get(root, "metal"), *it, *devs;
	struct json *cc = json_new_array(), *vram = json_new_array();
	struct json *gfx = json_new_array(), *uma = json_new_array();
	struct sdev *d;
	struct buf why = BUF_INIT;
	size_t nd = 0, i, k, total = 0, gpu = 0;

	for (i = 0; i < st->norder; i++) {
		const struct json *o = json_get(root, st->order[i]);
		total += json_size(json_get(o, "devices")) + 1;
		if (strcmp(st->order[i], "cpu"))
			gpu++;
	}
	d = xcalloc(total + 1, sizeof(*d));
	if (st->norder) {
		backends = json_new_array();
		for (i = 0; i < st->norder; i++)
			if (!gpu || strcmp(st->order[i], "cpu"))
				json_append(backends, json_new_str(st->order[i]));
		set_if(root, "backend", json_size(backends) == 1 ?
		       json_dup(json_first(backends)) : json_dup(backends));
		json_free(backends);
	}
	for (i = 0; i < st->norder; i++) {
		const char *b = st->order[i];
		if (!strcmp(b, "metal") && metal) {
			const char *name = json_get_str(metal, "device");
			struct sdev *s = sdev_find(d, &nd, name,
				json_get(metal, "index") ?
				json_num(json_get(metal, "index")) : 0);
			int u = json_bool(json_get(metal, "has_unified_memory"));
			if (u >= 0)
				s->uma = u;
			if (name && !names)
				names = json_new_array();
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(listed); k++)
			if (!strcmp(b, listed[k]))
				break;
		if (k == ARRAY_SIZE(listed))
			continue;
		devs = json_get(json_get(root, b), "devices");
		if (!devs)
			continue;
		if (!names)
			names = json_new_array();
		JSON_FOR_EACH(it, devs) {
			const char *name = json_get_str(it, "device");
			const char *u = json_get_str(it, "uma");
			struct sdev *s;

			if (!name)
				name = json_get_str(it, "name");
			s = sdev_find(d, &nd, name,
				      json_num(json_get(it, "index")));
			if (json_get(it, "compute_capability"))
				s->cc = json_get(it, "compute_capability");
			if (json_get(it, "vram_mib"))
				s->vram = json_get(it, "vram_mib");
			if (json_get(it, "gfx"))
				s->gfx = json_get(it, "gfx");
			if (u)
				s->uma = strcmp(u, "0") != 0;
		}
	}
	for (i = 0; i < nd; i++) {
		if (d[i].name && names)
			json_append(names, json_new_str(d[i].name));
		if (d[i].cc) {
			long c = (long)json_num(d[i].cc);
			char *text = xstrfmt("%ld.%ld", c / 10, c % 10);
			json_append(cc, json_new_str(text));
			free(text);
		}
		if (d[i].vram)
			json_append(vram, json_dup(d[i].vram));
		if (d[i].gfx)
			json_append(gfx, json_dup(d[i].gfx));
		if (d[i].uma >= 0)
			json_append(uma, json_new_bool(d[i].uma));
	}
	set_if(root, "devices", names);
	if (metal && json_get(metal, "apple_family")) {
		char *fam = family_name(json_num(json_get(metal, "apple_family")));
		json_set_str(root, "gpu_family", fam);
		free(fam);
	}
	if (metal) {
		static const struct { const char *from, *to; } flags[] = {
			{ "simdgroup_reduction", "simdgroup_reduction" },
			{ "simdgroup_matrix_mul", "simdgroup_matrix_mul" },
			{ "has_bfloat", "bfloat" },
		};
		for (k = 0; k < ARRAY_SIZE(flags); k++)
			if (json_is_bool(json_get(metal, flags[k].from)))
				json_set_bool(root, flags[k].to,
					json_bool(json_get(metal, flags[k].from)));
	}
	set_if(root, "unified_memory", one_or_list(uma));
	set_if(root, "compute_capability", one_or_list(cc));
	set_if(root, "vram_mib", one_or_list(vram));
	set_if(root, "gfx", one_or_list(gfx));
	if (metal && json_get(metal, "paravirtual"))
		json_set_bool(root, "paravirtual",
			      json_bool(json_get(metal, "paravirtual")));
	json_set_bool(root, "shim_marker", json_get(root, "shim") != NULL);
	suspect_reasons(root, &why);
	if (why.len)
		json_set_str(root, "suspect_profile", why.buf);
	buf_release(&why);
	free(d);
}

char *
caps_parse(const char *text, size_t len)
{
	struct pstate st;
	size_t pos = 0;
	char *out;

	memset(&st, 0, sizeof(st));
	st.root = json_new_object();
	st.sycl_name = -1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos);

		/* Lines with NUL bytes are cut there; that is fine. */
		parse_line(&st, line);
		free(line);
		pos = end + 1;
	}
	summarise(&st);
	out = json_print(st.root, 0);
	json_free(st.root);
	return out;
}

/* ---- markers and verification --------------------------------------------- */

static int
line_has(const char *text, size_t len, const char *marker)
{
	size_t mlen = strlen(marker), pos = 0;

	if (!mlen)
		return 1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, i;

		for (i = pos; i + mlen <= end; i++)
			if (!memcmp(text + i, marker, mlen))
				return 1;
		pos = end + 1;
	}
	return 0;
}

int
caps_missing_markers(const char *text, size_t len, const char *const *markers,
		     size_t n, struct buf *missing)
{
	size_t i;
	int count = 0;

	for (i = 0; i < n; i++) {
		if (line_has(text, len, markers[i]))
			continue;
		count++;
		if (missing) {
			if (missing->len)
				buf_adds(missing, "; ");
			buf_addf(missing, "'%s'", markers[i]);
		}
	}
	return count;
}

int
caps_verify(const char *text, size_t len, const char *const *markers,
	    size_t n, struct buf *detail)
{
	struct buf missing = BUF_INIT;
	const char *dyld = NULL;
	size_t pos = 0;
	int nmiss;

	nmiss = caps_missing_markers(text, len, markers, n, &missing);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos);

		if (!dyld && strstr(line, "terminating because inserted dylib"))
			dyld = text + pos;
		free(line);
		pos = end + 1;
	}
	if (dyld) {
		const char *nl = memchr(dyld, '\n', len - (size_t)(dyld - text));
		size_t l = nl ? (size_t)(nl - dyld) : len - (size_t)(dyld - text);

		buf_adds(detail, "dyld refused the inserted library: ");
		buf_add(detail, dyld, l);
		if (nmiss)
			buf_adds(detail, "; ");
	}
	/* The likely causes depend on the platform and the backend:
	 * evidence/hints.c, which the caller adds. */
	if (nmiss)
		buf_addf(detail, "missing marker%s %s", nmiss > 1 ? "s" : "",
			 missing.buf);
	buf_release(&missing);
	return nmiss == 0 && !dyld;
}

/* ---- the probe ------------------------------------------------------------ */

/*
 * JSON at the start of text (what follows the value is not looked at),
 * or NULL.
 */
static struct json *
parse_start(const char *text, size_t len)
{
	size_t end;

	return json_parse_prefix(text, len, &end);
}

/* A key=value value as JSON: true/false, a number, else the text. */
static struct json *
typed(const char *v)
{
	double d;

	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return json_new_bool(!strcmp(v, "true"));
	if (*v && *v != ' ' && *v != '+' && parse_double(v, &d) == 0 &&
	    strspn(v, "-0123456789.eE") == strlen(v))
		return json_new_num(d);
	return json_new_str(v);
}

/*
 * "key=value" lines (key: a letter or '_', then letters, digits, '_',
 * '.', '-') as an object; other lines are skipped. NULL when none.
 */
static struct json *
parse_kv(const char *text, size_t len)
{
	struct json *o = NULL;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos), *k = line, *eq;

		pos = end + 1;
		while (*k == ' ' || *k == '\t')
			k++;
		eq = k + strspn(k, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");
		if (*eq != '=' || eq == k || (*k >= '0' && *k <= '9') ||
		    *k == '.' || *k == '-') {
			free(line);
			continue;
		}
		*eq = '\0';
		if (!o)
			o = json_new_object();
		{
			char *v = trim(eq + 1);
			set_value(o, k, typed(v));
		}
		free(line);
	}
	return o;
}

/*
 * The probe's output as an object: JSON (from the first line that
 * starts with '{'), else key=value lines (*kv set). NULL when neither.
 */
static struct json *
probe_parse(const char *text, size_t len, int *kv)
{
	size_t pos = 0;

	*kv = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, i = pos;

		while (i < end && (text[i] == ' ' || text[i] == '\t' ||
				   text[i] == '\r'))
			i++;
		if (i < end && text[i] == '{') {
			struct json *o = parse_start(text + i, len - i);
			if (json_type(o) == JSON_OBJECT)
				return o;
			json_free(o);
			break;
		}
		pos = end + 1;
	}
	*kv = 1;
	return parse_kv(text, len);
}

/* Follows a dotted path ("shim.status") through nested objects. */
static const struct json *
json_path(const struct json *root, const char *path)
{
	char *copy = xstrdup(path), *part, *save = NULL;
	const struct json *cur = root;

	for (part = strtok_r(copy, ".", &save); part && cur;
	     part = strtok_r(NULL, ".", &save))
		cur = json_get(cur, part);
	free(copy);
	return cur;
}

/* got matches want: the same value, or (key=value output) want's text. */
static int
probe_match(const struct json *got, const struct json *want, int kv)
{
	char *text;
	int same;

	if (!got)
		return 0;
	if (json_equal(got, want))
		return 1;
	if (!kv || json_type(want) != JSON_STRING)
		return 0;
	text = json_type(got) == JSON_STRING ? xstrdup(json_str(got)) :
		json_print(got, 0);
	same = !strcmp(text, json_str(want));
	free(text);
	return same;
}

int
caps_check_probe(const char *probe_out, size_t len, const char *expect_json,
		 struct buf *detail)
{
	const char *expect = expect_json ? expect_json : "{}";
	struct json *out, *want = parse_start(expect, strlen(expect));
	const struct json *w;
	int ok = 1, n = 0, kv;

	out = probe_parse(probe_out, len, &kv);
	if (json_type(out) != JSON_OBJECT) {
		buf_adds(detail, "probe output is neither a JSON object nor "
			 "key=value lines");
		json_free(out);
		json_free(want);
		return -1;
	}
	JSON_FOR_EACH(w, want) {
		const struct json *got = json_get(out, json_key(w));
		char *ws = json_print(w, 0), *gs;

		if (!got)
			got = json_path(out, json_key(w));
		gs = got ? json_print(got, 0) : NULL;
		buf_adds(detail, n++ ? ", " : "probe: ");
		if (probe_match(got, w, kv)) {
			buf_addf(detail, "%s = %s", json_key(w), gs);
		} else {
			ok = 0;
			buf_addf(detail, "%s is %s, expected %s", json_key(w),
				 gs ? gs : "missing", ws);
		}
		free(ws);
		free(gs);
	}
	json_free(out);
	json_free(want);
	return ok;
}

/*
 * What the probe claims beyond any Apple GPU: its highest Apple family
 * (ours: highestFamily.apple in JSON, highest_apple_family= in lines)
 * or the asked family answered true (the published probe's lines).
 */
static void
probe_suspect(const struct json *probe, struct buf *why)
{
	double fam = json_num(json_get(json_get(probe, "highestFamily"),
				       "apple"));
	char *hi = family_name(CAPS_APPLE_FAMILY_HIGHEST);
	const char *h = hi + strlen("MTLGPUFamily");

	if (!(fam > CAPS_APPLE_FAMILY_HIGHEST))
		fam = json_num(json_get(probe, "highest_apple_family"));
	if (!(fam > CAPS_APPLE_FAMILY_HIGHEST)) {
		double f = json_num(json_get(probe, "family"));
		if (f > CAPS_APPLE_FAMILY_HIGHEST && f < 2000 &&
		    json_bool(json_get(probe, "supports_family")) == 1)
			fam = f;
	}
	if (fam > CAPS_APPLE_FAMILY_HIGHEST) {
		char *name = family_name(fam);
		buf_addf(why, "%sthe probe reports %s, beyond any Apple GPU "
			 "(highest: %s)", why->len ? "; " : "", name, h);
		free(name);
	}
	free(hi);
}

char *
caps_with_probe(const char *caps_json, const char *probe_out, size_t len)
{
	const char *text = caps_json ? caps_json : "{}";
	struct json *caps = parse_start(text, strlen(text));
	struct json *probe;
	struct buf why = BUF_INIT;
	char *ret;
	int kv;

	if (json_type(caps) != JSON_OBJECT) {
		json_free(caps);
		caps = json_new_object();
	}
	probe = probe_parse(probe_out, len, &kv);
	if (!probe)
		probe = json_new_str("(neither JSON nor key=value lines)");
	else {
		const char *old = json_get_str(caps, "suspect_profile");
		if (old)
			buf_adds(&why, old);
		probe_suspect(probe, &why);
		if (why.len)
			json_set_str(caps, "suspect_profile", why.buf);
	}
	json_set(caps, "probe", probe);
	ret = json_print(caps, 0);
	json_free(caps);
	buf_release(&why);
	return ret;
}

int
caps_suspect(const char *caps_json, struct buf *why)
{
	struct json *caps;
	const char *s;
	int ret = 0;

	if (!caps_json)
		return 0;
	caps = parse_start(caps_json, strlen(caps_json));
	s = json_get_str(caps, "suspect_profile");
	if (s && *s) {
		if (why)
			buf_adds(why, s);
		ret = 1;
	}
	json_free(caps);
	return ret;
}

/* Appends "a, b" for a list, the text of anything else. */
static void
add_text_list(struct buf *out, const struct json *v)
{
	const struct json *it;
	int n = 0;

	if (json_type(v) == JSON_STRING) {
		buf_adds(out, json_str(v));
		return;
	}
	if (json_type(v) != JSON_ARRAY) {
		char *t = json_print(v, 0);
		buf_adds(out, t);
		free(t);
		return;
	}
	JSON_FOR_EACH(it, v) {
		char *t = json_type(it) == JSON_STRING ? xstrdup(json_str(it)) :
			json_print(it, 0);
		buf_addf(out, "%s%s", n++ ? ", " : "", t);
		free(t);
	}
}

void
caps_describe(const char *caps_json, struct buf *out)
{
	static const struct { const char *key, *label; } flags[] = {
		{ "simdgroup_reduction", "simdgroup reduction" },
		{ "simdgroup_matrix_mul", "simdgroup matrix mul." },
		{ "bfloat", "bfloat" },
		{ "unified_memory", "unified memory" },
	};
	struct json *c = caps_json ? parse_start(caps_json, strlen(caps_json)) :
		NULL;
	const struct json *v, *shim;
	size_t start = out->len, i;

#define SEP() buf_adds(out, out->len > start ? "; " : "")
	if (json_type(c) != JSON_OBJECT)
		goto done;
	if ((v = json_get(c, "backend"))) {
		SEP();
		add_text_list(out, v);
	}
	if ((v = json_get(c, "devices")) && json_size(v)) {
		SEP();
		add_text_list(out, v);
		if (json_bool(json_get(c, "paravirtual")) == 1)
			buf_adds(out, " (paravirtual)");
	}
	if ((v = json_get(c, "gpu_family"))) {
		SEP();
		buf_adds(out, json_str(v));
	}
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		int b = json_bool(json_get(c, flags[i].key));
		if (b < 0)
			continue;
		SEP();
		buf_addf(out, "%s %s", flags[i].label, b ? "yes" : "no");
	}
	if ((v = json_get(c, "compute_capability"))) {
		SEP();
		buf_adds(out, "compute capability ");
		add_text_list(out, v);
	}
	if ((v = json_get(c, "gfx"))) {
		SEP();
		add_text_list(out, v);
	}
	if ((v = json_get(c, "vram_mib"))) {
		SEP();
		buf_adds(out, "VRAM MiB ");
		add_text_list(out, v);
	}
	if ((shim = json_get(c, "shim"))) {
		SEP();
		buf_addf(out, "shim enabled for %s",
			 json_get_str(shim, "process") ?
			 json_get_str(shim, "process") : "?");
		if (json_get(shim, "appleFamilyMax"))
			buf_addf(out, " (appleFamilyMax=%.0f)",
				 json_num(json_get(shim, "appleFamilyMax")));
	} else if (json_get(c, "shim_marker")) {
		SEP();
		buf_adds(out, "no shim marker");
	}
	if ((v = json_get(c, "shim_messages")) && json_size(v)) {
		SEP();
		buf_adds(out, "shim said: ");
		add_text_list(out, v);
	}
	if ((v = json_get(c, "dyld_insert_failure"))) {
		SEP();
		buf_addf(out, "dyld refused '%s'", json_get_str(v, "path") ?
			 json_get_str(v, "path") : "?");
	}
	if ((v = json_get(c, "suspect_profile"))) {
		SEP();
		buf_addf(out, "SUSPECT PROFILE: %s", json_str(v));
	}
#undef SEP
done:
	json_free(c);
}
