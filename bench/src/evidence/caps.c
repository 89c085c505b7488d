#define _POSIX_C_SOURCE 200809L
#include "evidence/caps.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ggml Metal "name = true|false" lines and their JSON keys. */
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

		if (strncmp(p, kinds[i].kind, strlen(kinds[i].kind)))
			continue;
		old = json_get(metal, kinds[i].key);
		/* ggml prints the highest family; keep the highest seen. */
		if (!old || json_num(old) < (double)value)
			set_number(metal, kinds[i].key, (double)value);
		return;
	}
}

static void
metal_line(struct json *root, char *line)
{
	char *p;
	size_t i;

	if ((p = strstr(line, "GPU name:"))) {
		struct json *metal = child(root, "metal");
		char *name = trim(p + strlen("GPU name:"));
		char *open = strchr(name, '(');
		size_t n = strlen(name);

		if (open && n && name[n - 1] == ')') {
			name[n - 1] = '\0';
			*open = '\0';
			set_string(metal, "device", trim(open + 1));
			set_string(metal, "gpu_name", trim(name));
		} else {
			set_string(metal, "device", name);
			set_string(metal, "gpu_name", name);
		}
		return;
	}
	if ((p = strstr(line, "GPU family:"))) {
		metal_family(child(root, "metal"), trim(p + strlen("GPU family:")));
		return;
	}
	if ((p = strstr(line, "recommendedMaxWorkingSetSize"))) {
		double mb;
		char *eq = strchr(p, '=');
		if (eq && sscanf(eq + 1, "%lf", &mb) == 1)
			set_number(child(root, "metal"),
				   "recommended_max_working_set_mb", mb);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(metal_flags); i++) {
		char *eq;
		if (!(p = strstr(line, metal_flags[i].label)))
			continue;
		eq = strchr(p, '=');
		if (!eq)
			continue;
		eq = trim(eq + 1);
		if (!strcmp(eq, "true") || !strcmp(eq, "false"))
			set_value(child(root, "metal"), metal_flags[i].key,
				  json_new_bool(!strcmp(eq, "true")));
		return;
	}
}

/*
 * "[LumeMetalCapabilities] Enabled for llama-bench (appleFamilyMax=1009
 * maxThreadgroupMemory=65536)", possibly after an NSLog prefix.
 */
static void
shim_line(struct json *root, char *line, char *tag)
{
	char *msg = trim(tag + strlen("[LumeMetalCapabilities]"));
	struct json *shim;
	char *open, *close, *kv, *save = NULL;

	if (strncmp(msg, "Enabled for ", 12)) {
		json_append(child_array(root, "shim_messages"),
			    json_new_str(msg));
		return;
	}
	shim = child(root, "shim");
	set_string(shim, "line", trim(line));
	msg += 12;
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

/* "  Device 0: NVIDIA H200, compute capability 9.0, VMM: yes, VRAM: N MiB" */
static void
cuda_device(struct json *root, char *line)
{
	struct json *dev, *cuda = child(root, "cuda");
	char *p = strstr(line, "Device "), *name, *comma, *q;
	int idx, major, minor, n = 0;
	long vram;

	/* sscanf counts %d before it checks the ':': check it here (a line
	 * without one made strchr() return NULL, and this crashed) */
	if (!p || sscanf(p, "Device %d%n", &idx, &n) != 1 || p[n] != ':')
		return;
	name = p + n + 1;
	comma = strstr(name, ", compute capability");
	dev = json_new_object();
	json_set_num(dev, "index", idx);
	if (comma) {
		*comma = '\0';
		json_set_str(dev, "name", trim(name));
		if (sscanf(comma + 1, " compute capability %d.%d", &major,
			   &minor) == 2)
			json_set_num(dev, "compute_capability",
				     major * 10.0 + minor);   /* no int overflow */
		if ((q = strstr(comma + 1, "VMM: ")))
			json_set_bool(dev, "vmm", !strncmp(q + 5, "yes", 3));
		if ((q = strstr(comma + 1, "VRAM: ")) &&
		    sscanf(q + 6, "%ld", &vram) == 1)
			json_set_num(dev, "vram_mib", (double)vram);
	} else {
		json_set_str(dev, "name", trim(name));
	}
	json_append(child_array(cuda, "devices"), dev);
}

/* "ggml_vulkan: 0 = NVIDIA H200 (NVIDIA) | uma: 0 | fp16: 1 | …" */
static void
vulkan_device(struct json *root, char *p)
{
	struct json *dev;
	char *eq = strstr(p, " = "), *field, *save = NULL;
	int idx;

	if (!eq || sscanf(p, "%d", &idx) != 1)
		return;
	dev = json_new_object();
	json_set_num(dev, "index", idx);
	field = strtok_r(eq + 3, "|", &save);
	if (field)
		json_set_str(dev, "name", trim(field));
	while ((field = strtok_r(NULL, "|", &save))) {
		char *colon = strchr(field, ':');
		if (!colon)
			continue;
		*colon = '\0';
		json_set_str(dev, trim(field), trim(colon + 1));
	}
	json_append(child_array(child(root, "vulkan"), "devices"), dev);
}

static void
parse_line(struct json *root, char *line)
{
	char *p;
	int n;

	if ((p = strstr(line, "[LumeMetalCapabilities]"))) {
		shim_line(root, line, p);
	} else if (strstr(line, "ggml_metal") || strstr(line, "GPU name:") ||
		   strstr(line, "GPU family:")) {
		metal_line(root, line);
	} else if ((p = strstr(line, "ggml_cuda_init: found ")) &&
		   sscanf(p, "ggml_cuda_init: found %d CUDA devices", &n) == 1) {
		set_number(child(root, "cuda"), "count", n);
	} else if ((p = strstr(line, "ggml_cuda_init: failed to initialize CUDA:"))) {
		set_string(child(root, "cuda"), "error",
			   trim(p + strlen("ggml_cuda_init: failed to initialize CUDA:")));
	} else if (strstr(line, "compute capability") &&
		   strstr(line, "Device ")) {
		cuda_device(root, line);
	} else if ((p = strstr(line, "ggml_vulkan: Found ")) &&
		   sscanf(p, "ggml_vulkan: Found %d Vulkan devices", &n) == 1) {
		set_number(child(root, "vulkan"), "count", n);
	} else if ((p = strstr(line, "ggml_vulkan: ")) &&
		   p[13] >= '0' && p[13] <= '9') {
		vulkan_device(root, p + 13);
	} else if ((p = strstr(line, "load_backend: loaded "))) {
		char *from = strstr(p, " backend from ");
		struct json *b = json_new_object();
		if (from) {
			*from = '\0';
			json_set_str(b, "name",
				     trim(p + strlen("load_backend: loaded ")));
			json_set_str(b, "path",
				     trim(from + strlen(" backend from ")));
		} else {
			json_set_str(b, "name", trim(p + 21));
		}
		json_append(child_array(root, "backends_loaded"), b);
	} else if ((p = strstr(line, "terminating because inserted dylib '"))) {
		struct json *d = child(root, "dyld_insert_failure");
		char *path = p + strlen("terminating because inserted dylib '");
		char *end = strstr(path, "' could not be loaded");
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
		set_string(d, "line", trim(line));
	}
}

char *
caps_parse(const char *text, size_t len)
{
	struct json *root = json_new_object();
	size_t pos = 0;
	char *out;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		char *line = xstrndup(text + pos, end - pos);

		/* Lines with NUL bytes are cut there; that is fine. */
		parse_line(root, line);
		free(line);
		pos = end + 1;
	}
	out = json_print(root, 0);
	json_free(root);
	return out;
}

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
	if (nmiss) {
		buf_addf(detail, "missing marker%s %s; likely causes: "
			 "DYLD_INSERT_LIBRARIES pruned by SIP or the hardened "
			 "runtime, a library without this process's "
			 "architecture slice (arm64 vs arm64e), or a bad shim "
			 "configuration (LUME_METAL_APPLE_FAMILY_MAX)",
			 nmiss > 1 ? "s" : "", missing.buf);
	}
	buf_release(&missing);
	return nmiss == 0 && !dyld;
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

int
caps_check_probe(const char *probe_out, size_t len, const char *expect_json,
		 struct buf *detail)
{
	const char *expect = expect_json ? expect_json : "{}";
	struct json *out = parse_start(probe_out, len);
	struct json *want = parse_start(expect, strlen(expect));
	const struct json *w;
	int ok = 1, n = 0;

	if (json_type(out) != JSON_OBJECT) {
		buf_adds(detail, "probe output is not a JSON object");
		json_free(out);
		json_free(want);
		return -1;
	}
	JSON_FOR_EACH(w, want) {
		const struct json *got = json_path(out, json_key(w));
		char *ws = json_print(w, 0);
		char *gs = got ? json_print(got, 0) : NULL;

		buf_adds(detail, n++ ? ", " : "probe: ");
		if (got && json_equal(got, w)) {
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

char *
caps_with_probe(const char *caps_json, const char *probe_out, size_t len)
{
	const char *text = caps_json ? caps_json : "{}";
	struct json *caps = parse_start(text, strlen(text));
	struct json *probe = parse_start(probe_out, len);
	char *ret;

	if (json_type(caps) != JSON_OBJECT) {
		json_free(caps);
		caps = json_new_object();
	}
	if (!probe)
		probe = json_new_str("(not JSON)");
	json_set(caps, "probe", probe);
	ret = json_print(caps, 0);
	json_free(caps);
	return ret;
}
