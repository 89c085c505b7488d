/*
 * Reading a stderr text into struct caps: each line goes to the first row
 * of the table of line readers that takes it. The Metal device lines,
 * the shim's, dyld's, load_backend: and the buffer names are read here;
 * the GPU backends' init blocks (CUDA, ROCm, MUSA, Vulkan, SYCL) in
 * capsgpu.c. A new backend's line is one function and one row.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/capsread.h"
#include "base/util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M(member) offsetof(struct caps_metal, member)

/* ---- Metal --------------------------------------------------------------- */

/* ggml Metal "name = true|false" lines of every generation. */
static const struct {
	const char *label;
	size_t offset;          /* of a signed char in struct caps_metal */
} metal_flags[] = {
	{ "simdgroup reduction", M(simdgroup_reduction) },
	{ "simdgroup matrix mul.", M(simdgroup_matrix_mul) },
	{ "has unified memory", M(has_unified_memory) },
	{ "hasUnifiedMemory", M(has_unified_memory) },
	{ "has bfloat", M(has_bfloat) },
	{ "use bfloat", M(use_bfloat) },
	{ "has tensor", M(has_tensor) },
	{ "has residency sets", M(has_residency_sets) },
	{ "use residency sets", M(use_residency_sets) },
	{ "use shared buffers", M(use_shared_buffers) },
};

/* ggml Metal "name = NUMBER" lines: the number after the text. */
static const struct {
	const char *text;
	size_t offset;          /* of a double in struct caps_metal */
} metal_numbers[] = {
	{ "library_init: loaded in ", M(library_load_s) },
	{ "keep_alive = ", M(residency_keep_alive_s) },
};

/* "GPU family: MTLGPUFamilyApple9  (1009)" and its Common/Metal kin. */
static void
metal_family(struct caps_metal *m, const char *p)
{
	static const struct { const char *kind; size_t offset; } kinds[] = {
		{ "MTLGPUFamilyApple", M(apple_family) },
		{ "MTLGPUFamilyCommon", M(common_family) },
		{ "MTLGPUFamilyMetal", M(metal_family) },
		{ "MTLGPUFamilyMac", M(mac_family) },
	};
	const char *paren = strchr(p, '(');
	long value, *dst;
	size_t i;

	/* a number beyond a billion is no family (and would overflow) */
	if (!paren || sscanf(paren, "(%ld)", &value) != 1 ||
	    value <= -CAPS_FAMILY_LIMIT || value >= CAPS_FAMILY_LIMIT)
		return;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (!caps_starts(p, kinds[i].kind))
			continue;
		dst = (long *)(void *)((char *)m + kinds[i].offset);
		/* ggml prints the highest family; keep the highest seen. */
		if (*dst == CAPS_NONE || *dst < value)
			*dst = value;
		return;
	}
}

/* The device name, "MTL0 (Apple M1 Max)" (2026) or "Apple M2" (older). */
static void
metal_name(struct caps_metal *m, char *name)
{
	char *open = strchr(name, '(');
	size_t n = strlen(name);
	long idx = 0;

	if (caps_starts(name, "MTL") && open && n && name[n - 1] == ')') {
		name[n - 1] = '\0';
		*open = '\0';
		sscanf(name, "MTL%ld", &idx);
		caps_set_str(&m->device, caps_trim(open + 1));
		caps_set_str(&m->gpu_name, caps_trim(name));
	} else {
		caps_set_str(&m->device, name);
		caps_set_str(&m->gpu_name, name);
	}
	m->index = idx;
	m->paravirtual = strstr(m->device, "Paravirtual") != NULL;
}

/* "… = true|false" of a flag line; 1 when line was one. */
static int
metal_flag(struct caps_metal *m, char *line)
{
	size_t i;
	char *p, *eq;

	for (i = 0; i < ARRAY_SIZE(metal_flags); i++) {
		if (!(p = strstr(line, metal_flags[i].label)))
			continue;
		eq = strchr(p, '=');
		if (!eq)
			continue;
		eq = caps_trim(eq + 1);
		if (!strcmp(eq, "true") || !strcmp(eq, "false"))
			*((signed char *)m + metal_flags[i].offset) =
				!strcmp(eq, "true");
		return 1;
	}
	return 0;
}

/* The lines ggml_metal_init and ggml_metal_device_init print. */
static int
metal_line(struct caps_state *st, char *line)
{
	struct caps_metal *m = &st->c->metal;
	char *p, *eq;
	size_t i;
	double v;

	if (!strstr(line, "ggml_metal") &&
	    !strstr(line, "GPU family: MTLGPUFamily"))
		return 0;
	m->present = 1;
	caps_note_backend(st->c, CAPS_METAL);
	if ((p = strstr(line, "GPU name:"))) {
		metal_name(m, caps_trim(p + strlen("GPU name:")));
		return 1;
	}
	if ((p = strstr(line, "GPU family:"))) {
		metal_family(m, caps_trim(p + strlen("GPU family:")));
		return 1;
	}
	/* ggml_metal_init (2023-24): "found device: Apple M2" */
	if ((p = strstr(line, "found device:")) ||
	    (p = strstr(line, "picking default device:"))) {
		p = caps_trim(strchr(p, ':') + 1);
		if (*p && !m->device)
			metal_name(m, p);
		return 1;
	}
	if ((p = strstr(line, "recommendedMaxWorkingSetSize"))) {
		eq = strchr(p, '=');
		if (eq && sscanf(eq + 1, "%lf", &v) == 1 && isfinite(v))
			m->recommended_max_working_set_mb = v;
		return 1;
	}
	if (strstr(line, "tensor API disabled")) {
		m->tensor_api = 0;
		return 1;
	}
	if (strstr(line, "using embedded metal library")) {
		caps_set_str(&m->library, "embedded");
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(metal_numbers); i++)
		if ((p = strstr(line, metal_numbers[i].text)) &&
		    sscanf(p + strlen(metal_numbers[i].text), "%lf", &v) == 1 &&
		    isfinite(v)) {
			double *dst = (double *)(void *)((char *)m +
						metal_numbers[i].offset);
			*dst = v;
			return 1;
		}
	metal_flag(m, line);
	return 1;
}

#undef M

/* ---- the shim ------------------------------------------------------------ */

/*
 * "[LumeMetalCapabilities] Enabled for llama-bench (appleFamilyMax=1009
 * maxThreadgroupMemory=65536)" or the Vulkan shim's "[VulkanCapabilities]
 * Enabled for llama-bench (profile=stock hide=coopmat,...)", possibly after an NSLog prefix
 * ("2026-08-09 18:20:01.123 llama-bench[1234:5678] ") or another prefix
 * a publisher left in its place; anything else the shim says is one of
 * its messages.
 */
static int
shim_line(struct caps_state *st, char *line)
{
	struct caps *c = st->c;
	char *tag = strstr(line, "[LumeMetalCapabilities]");
	char *msg, *open, *close, *kv, *save = NULL;

	if (!tag)
		tag = strstr(line, "[VulkanCapabilities]");
	if (!tag)
		return 0;
	msg = caps_trim(strchr(tag, ']') + 1);
	if (!caps_starts(msg, "Enabled for ")) {
		c->shim_messages = strv_push(c->shim_messages,
					     &c->nshim_messages, xstrdup(msg));
		return 1;
	}
	c->shim.present = 1;
	caps_set_str(&c->shim.line, caps_trim(line));
	msg += strlen("Enabled for ");
	open = strrchr(msg, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!open || !close) {
		caps_set_str(&c->shim.process, caps_trim(msg));
		return 1;
	}
	*open = '\0';
	*close = '\0';
	caps_set_str(&c->shim.process, caps_trim(msg));
	for (kv = strtok_r(open + 1, " ", &save); kv;
	     kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		struct caps_kv *e;
		double v;

		if (!eq)
			continue;
		*eq = '\0';
		/* the line and the process are the shim's own keys */
		if (!strcmp(kv, "line") || !strcmp(kv, "process"))
			continue;
		e = caps_kv_set(&c->shim.params, &c->shim.nparams, kv);
		if (parse_double(eq + 1, &v) == 0)
			caps_kv_num(e, v);
		else
			caps_kv_text(e, eq + 1);
	}
	return 1;
}

/* ---- dyld, loaded backends, buffers -------------------------------------- */

/* "dyld[1]: terminating because inserted dylib 'P' could not be loaded: …" */
static int
dyld_line(struct caps_state *st, char *line)
{
	static const char tag[] = "terminating because inserted dylib '";
	char *p = strstr(line, tag), *path, *end;

	if (!p)
		return 0;
	st->c->dyld.present = 1;
	caps_set_str(&st->c->dyld.line, caps_trim(line));
	path = p + strlen(tag);
	end = strstr(path, "' could not be loaded");
	if (end) {
		*end = '\0';
		caps_set_str(&st->c->dyld.path, path);
		end += strlen("' could not be loaded");
		if (*end == ':')
			end++;
		caps_set_str(&st->c->dyld.reason, caps_trim(end));
	} else {
		caps_set_str(&st->c->dyld.reason, caps_trim(path));
	}
	return 1;
}

/* "load_backend: loaded CUDA backend from /app/libggml-cuda.so" */
static int
loaded_line(struct caps_state *st, char *line)
{
	struct caps *c = st->c;
	char *p = strstr(line, "load_backend: loaded "), *from, *name;
	enum caps_backend b;

	if (!p)
		return 0;
	p += strlen("load_backend: loaded ");
	from = strstr(p, " backend from ");
	c->loaded = xrealloc(c->loaded, (c->nloaded + 1) * sizeof(*c->loaded));
	c->loaded[c->nloaded].path = NULL;
	if (from) {
		*from = '\0';
		c->loaded[c->nloaded].path =
			xstrdup(caps_trim(from + strlen(" backend from ")));
	}
	name = caps_trim(p);
	c->loaded[c->nloaded++].name = xstrdup(name);
	b = caps_backend_of(name, strcspn(name, " "));
	if (b != CAPS_NBACKENDS)
		caps_note_backend(c, b);
	return 1;
}

/*
 * The buffer names of -v runs: "ROCm0 model buffer size", "SYCL0 KV
 * buffer size", "preferred buffer type Vulkan_Host", "MTL0_Mapped model
 * buffer size", "CUDA_Host output buffer size". CPU buffers count as
 * "cpu", which shows only when nothing else does.
 */
static int
buffer_line(struct caps_state *st, char *line)
{
	static const char *const after[] = {
		" model buffer size", " KV buffer size", " compute buffer size",
		" output buffer size", " buffer size",
	};
	const char *p = strstr(line, "preferred buffer type "), *name = NULL;
	size_t len = 0, i;
	enum caps_backend b;

	if (p) {
		name = p + strlen("preferred buffer type ");
		len = strcspn(name, " ,");
	} else {
		for (i = 0; i < ARRAY_SIZE(after) && !p; i++)
			p = strstr(line, after[i]);
		if (!p)
			return 0;
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
	if (i && (b = caps_backend_of(name, i)) != CAPS_NBACKENDS)
		caps_note_backend(st->c, b);
	return 1;
}

/* ---- the table ----------------------------------------------------------- */

/* The line readers, first taker wins. */
static caps_line_fn *const line_readers[] = {
	shim_line,              /* [LumeMetalCapabilities], [VulkanCapabilities] */
	dyld_line,              /* terminating because inserted dylib */
	loaded_line,            /* load_backend: loaded */
	metal_line,             /* ggml_metal_*, GPU family: */
	caps_cuda_found,        /* ggml_cuda_init: found N CUDA devices */
	caps_cuda_failed,       /* ggml_cuda_init: failed to initialize */
	caps_cuda_flag,         /* ggml_cuda_init: GGML_CUDA_FORCE_MMQ: no */
	caps_gpu_device,        /*   Device 0: NAME, compute capability */
	caps_vulkan_line,       /* ggml_vulkan:, VulkanN: */
	caps_list_device,       /*   CUDA0: NAME (N MiB, M MiB free) */
	caps_sycl_line,         /* found N SYCL devices, its table */
	buffer_line,            /* … buffer size, preferred buffer type */
};

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

void
caps_read(const char *text, size_t len, struct caps *c)
{
	struct caps_state st;
	size_t pos = 0, k;

	caps_init(c);
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.gpu_ctx = CAPS_NBACKENDS;
	st.sycl_name = -1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		/* Lines with NUL bytes are cut there; that is fine. */
		char *line = xstrndup(text + pos, end - pos);

		strip_escapes(line);
		for (k = 0; k < ARRAY_SIZE(line_readers) &&
		     !line_readers[k](&st, line); k++)
			;
		free(line);
		pos = end + 1;
	}
	caps_summarise(c);
}
