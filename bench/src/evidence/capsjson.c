/*
 * struct caps as JSON, both ways: the serialization the store and bundles
 * keep (caps.h lists the keys). Written with base/json's writer, read
 * with its parser; no decision is taken here.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/capsread.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D(member) offsetof(struct caps_device, member)

/* ---- writing ------------------------------------------------------------- */

static void
w_num(struct jw *w, const char *key, double v)
{
	if (!isnan(v))
		jw_knum(w, key, v);
}

static void
w_long(struct jw *w, const char *key, long v)
{
	if (v != CAPS_NONE)
		jw_knum(w, key, (double)v);
}

/* A Vulkan field as ggml printed it: the number's text. */
static void
w_printed(struct jw *w, const char *key, long v)
{
	char text[32];

	if (v == CAPS_NONE)
		return;
	snprintf(text, sizeof(text), "%ld", v);
	jw_kstr(w, key, text);
}

static void
w_flag(struct jw *w, const char *key, int v)
{
	if (v >= 0)
		jw_kbool(w, key, v);
}

static void
w_str(struct jw *w, const char *key, const char *s)
{
	if (s)
		jw_kstr(w, key, s);
}

static void
w_kv(struct jw *w, const struct caps_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		jw_key(w, kv[i].key);
		if (kv[i].kind == CAPS_KV_NUM)
			jw_num(w, kv[i].num);
		else if (kv[i].kind == CAPS_KV_BOOL)
			jw_bool(w, kv[i].flag);
		else
			jw_str(w, kv[i].text);
	}
}

static void
w_metal(struct jw *w, const struct caps_metal *m)
{
	jw_key(w, "metal");
	jw_object(w);
	w_str(w, "device", m->device);
	w_str(w, "gpu_name", m->gpu_name);
	w_long(w, "index", m->index);
	w_flag(w, "paravirtual", m->paravirtual);
	w_long(w, "apple_family", m->apple_family);
	w_long(w, "common_family", m->common_family);
	w_long(w, "metal_family", m->metal_family);
	w_long(w, "mac_family", m->mac_family);
	w_flag(w, "simdgroup_reduction", m->simdgroup_reduction);
	w_flag(w, "simdgroup_matrix_mul", m->simdgroup_matrix_mul);
	w_flag(w, "has_unified_memory", m->has_unified_memory);
	w_flag(w, "has_bfloat", m->has_bfloat);
	w_flag(w, "use_bfloat", m->use_bfloat);
	w_flag(w, "has_tensor", m->has_tensor);
	w_flag(w, "has_residency_sets", m->has_residency_sets);
	w_flag(w, "use_residency_sets", m->use_residency_sets);
	w_flag(w, "use_shared_buffers", m->use_shared_buffers);
	w_flag(w, "tensor_api", m->tensor_api);
	w_num(w, "recommended_max_working_set_mb",
	      m->recommended_max_working_set_mb);
	w_str(w, "library", m->library);
	w_num(w, "library_load_s", m->library_load_s);
	w_num(w, "residency_keep_alive_s", m->residency_keep_alive_s);
	jw_end(w);
}

static void
w_device(struct jw *w, const struct caps_device *d)
{
	jw_object(w);
	jw_knum(w, "index", (double)d->index);
	w_str(w, "name", d->name);
	w_str(w, "device", d->device);
	w_str(w, "driver", d->driver);
	w_printed(w, "uma", d->uma);
	w_printed(w, "fp16", d->fp16);
	w_printed(w, "bf16", d->bf16);
	w_printed(w, "warp size", d->warp_size);
	w_printed(w, "shared memory", d->shared_memory);
	w_printed(w, "int dot", d->int_dot);
	w_str(w, "matrix cores", d->matrix_cores);
	w_num(w, "compute_capability", d->compute_capability);
	w_str(w, "gfx", d->gfx);
	w_flag(w, "vmm", d->vmm);
	w_long(w, "wave_size", d->wave_size);
	w_long(w, "vram_mib", d->vram_mib);
	w_str(w, "type", d->type);
	w_str(w, "global_mem", d->global_mem);
	w_kv(w, d->extra, d->nextra);
	jw_end(w);
}

static void
w_gpu(struct jw *w, const char *key, const struct caps_gpu *g)
{
	size_t i;

	if (!g->present)
		return;
	jw_key(w, key);
	jw_object(w);
	w_long(w, "count", g->count);
	w_long(w, "total_vram_mib", g->total_vram_mib);
	w_str(w, "error", g->error);
	jw_key(w, "devices");
	jw_array(w);
	for (i = 0; i < g->ndev; i++)
		w_device(w, &g->dev[i]);
	jw_end(w);
	jw_end(w);
}

static void
w_strs(struct jw *w, const char *key, char *const *v, size_t n)
{
	size_t i;

	jw_key(w, key);
	jw_array(w);
	for (i = 0; i < n; i++)
		jw_str(w, v[i]);
	jw_end(w);
}

/* The details, per source. */
static void
w_details(struct jw *w, const struct caps *c)
{
	size_t i;

	if (c->metal.present)
		w_metal(w, &c->metal);
	if (c->shim.present) {
		jw_key(w, "shim");
		jw_object(w);
		w_str(w, "line", c->shim.line);
		w_str(w, "process", c->shim.process);
		w_kv(w, c->shim.params, c->shim.nparams);
		jw_end(w);
	}
	if (c->nshim_messages)
		w_strs(w, "shim_messages", c->shim_messages, c->nshim_messages);
	w_gpu(w, "cuda", &c->cuda);
	w_gpu(w, "rocm", &c->rocm);
	w_gpu(w, "musa", &c->musa);
	if (c->ncuda_flags) {
		jw_key(w, "ggml_cuda_flags");
		jw_object(w);
		w_kv(w, c->cuda_flags, c->ncuda_flags);
		jw_end(w);
	}
	w_gpu(w, "vulkan", &c->vulkan);
	w_gpu(w, "sycl", &c->sycl);
	if (c->nloaded) {
		jw_key(w, "backends_loaded");
		jw_array(w);
		for (i = 0; i < c->nloaded; i++) {
			jw_object(w);
			w_str(w, "name", c->loaded[i].name);
			w_str(w, "path", c->loaded[i].path);
			jw_end(w);
		}
		jw_end(w);
	}
	if (c->dyld.present) {
		jw_key(w, "dyld_insert_failure");
		jw_object(w);
		w_str(w, "line", c->dyld.line);
		w_str(w, "path", c->dyld.path);
		w_str(w, "reason", c->dyld.reason);
		jw_end(w);
	}
}

/* Per-device values: one value when every device agrees, else a list. */
static void
w_one_or_list(struct jw *w, const char *key, size_t n,
	      int (*same)(const void *, size_t),
	      void (*one)(struct jw *, const void *, size_t), const void *v)
{
	size_t i;

	if (!n)
		return;
	jw_key(w, key);
	for (i = 1; i < n && same(v, i); i++)
		;
	if (i == n) {
		one(w, v, 0);
		return;
	}
	jw_array(w);
	for (i = 0; i < n; i++)
		one(w, v, i);
	jw_end(w);
}

static int
same_flag(const void *v, size_t i)
{
	return ((const signed char *)v)[i] == ((const signed char *)v)[0];
}

static void
one_flag(struct jw *w, const void *v, size_t i)
{
	jw_bool(w, ((const signed char *)v)[i]);
}

static int
same_str(const void *v, size_t i)
{
	return !strcmp(((char *const *)v)[i], ((char *const *)v)[0]);
}

static void
one_str(struct jw *w, const void *v, size_t i)
{
	jw_str(w, ((char *const *)v)[i]);
}

static int
same_num(const void *v, size_t i)
{
	return ((const double *)v)[i] == ((const double *)v)[0];
}

static void
one_num(struct jw *w, const void *v, size_t i)
{
	jw_num(w, ((const double *)v)[i]);
}

static void
w_summary(struct jw *w, const struct caps_summary *s)
{
	size_t i;

	if (s->nbackends == 1) {
		jw_kstr(w, "backend", caps_backend_name(s->backend[0]));
	} else if (s->nbackends) {
		jw_key(w, "backend");
		jw_array(w);
		for (i = 0; i < s->nbackends; i++)
			jw_str(w, caps_backend_name(s->backend[i]));
		jw_end(w);
	}
	if (s->has_devices)
		w_strs(w, "devices", s->devices, s->ndevices);
	if (s->gpu_family != CAPS_NONE) {
		char *f = caps_family_name(s->gpu_family);
		jw_kstr(w, "gpu_family", f);
		free(f);
	}
	w_flag(w, "simdgroup_reduction", s->simdgroup_reduction);
	w_flag(w, "simdgroup_matrix_mul", s->simdgroup_matrix_mul);
	w_flag(w, "bfloat", s->bfloat);
	w_one_or_list(w, "unified_memory", s->nunified, same_flag, one_flag,
		      s->unified_memory);
	w_one_or_list(w, "compute_capability", s->ncc, same_str, one_str,
		      s->compute_capability);
	w_one_or_list(w, "vram_mib", s->nvram, same_num, one_num, s->vram_mib);
	w_one_or_list(w, "gfx", s->ngfx, same_str, one_str, s->gfx);
	w_flag(w, "paravirtual", s->paravirtual);
	w_flag(w, "shim_marker", s->shim_marker);
	w_str(w, "suspect_profile", s->suspect_profile);
}

char *
caps_to_json(const struct caps *c)
{
	struct buf b = BUF_INIT;
	struct jw w;

	jw_init(&w, &b, 0);
	jw_object(&w);
	w_details(&w, c);
	w_summary(&w, &c->sum);
	if (c->probe.present) {
		jw_key(&w, "probe");
		jw_value(&w, c->probe.output);
	}
	jw_end(&w);
	return buf_detach(&b, NULL);
}

/* ---- reading ------------------------------------------------------------- */

static void
r_str(const struct json *o, const char *key, char **dst)
{
	const char *s = json_get_str(o, key);

	if (s)
		caps_set_str(dst, s);
}

/*
 * A whole number, as written from a long: the ends of the range come
 * back as the ends (LONG_MIN itself means "not printed").
 */
static void
r_long(const struct json *o, const char *key, long *dst)
{
	double v = json_num(json_get(o, key));

	if (!isfinite(v))
		return;
	if (v >= (double)LONG_MAX)
		*dst = LONG_MAX;
	else if (v <= (double)LONG_MIN)
		*dst = LONG_MIN + 1;
	else
		*dst = (long)v;
}

/* A GPU family number, within CAPS_FAMILY_LIMIT. */
static void
r_family(const struct json *o, const char *key, long *dst)
{
	long v = CAPS_NONE;

	r_long(o, key, &v);
	if (v > -CAPS_FAMILY_LIMIT && v < CAPS_FAMILY_LIMIT)
		*dst = v;
}

static void
r_num(const struct json *o, const char *key, double *dst)
{
	double v = json_num(json_get(o, key));

	if (!isnan(v))
		*dst = v;
}

static void
r_flag(const struct json *o, const char *key, signed char *dst)
{
	int b = json_bool(json_get(o, key));

	if (b >= 0)
		*dst = (signed char)b;
}

/* A value of a key=value list, as its JSON type says; others skipped. */
static void
r_kv(struct caps_kv **kv, size_t *n, const char *key, const struct json *v)
{
	if (json_type(v) == JSON_NUMBER)
		caps_kv_num(caps_kv_set(kv, n, key), json_num(v));
	else if (json_is_bool(v))
		caps_kv_bool(caps_kv_set(kv, n, key), json_bool(v));
	else if (json_str(v))
		caps_kv_text(caps_kv_set(kv, n, key), json_str(v));
}

static void
r_metal(struct caps_metal *m, const struct json *o)
{
	m->present = 1;
	r_str(o, "device", &m->device);
	r_str(o, "gpu_name", &m->gpu_name);
	r_long(o, "index", &m->index);
	r_flag(o, "paravirtual", &m->paravirtual);
	r_family(o, "apple_family", &m->apple_family);
	r_family(o, "common_family", &m->common_family);
	r_family(o, "metal_family", &m->metal_family);
	r_family(o, "mac_family", &m->mac_family);
	r_flag(o, "simdgroup_reduction", &m->simdgroup_reduction);
	r_flag(o, "simdgroup_matrix_mul", &m->simdgroup_matrix_mul);
	r_flag(o, "has_unified_memory", &m->has_unified_memory);
	r_flag(o, "has_bfloat", &m->has_bfloat);
	r_flag(o, "use_bfloat", &m->use_bfloat);
	r_flag(o, "has_tensor", &m->has_tensor);
	r_flag(o, "has_residency_sets", &m->has_residency_sets);
	r_flag(o, "use_residency_sets", &m->use_residency_sets);
	r_flag(o, "use_shared_buffers", &m->use_shared_buffers);
	r_flag(o, "tensor_api", &m->tensor_api);
	r_num(o, "recommended_max_working_set_mb",
	      &m->recommended_max_working_set_mb);
	r_str(o, "library", &m->library);
	r_num(o, "library_load_s", &m->library_load_s);
	r_num(o, "residency_keep_alive_s", &m->residency_keep_alive_s);
}

/* A Vulkan field kept as its text: the number when it is one. */
static int
r_printed(const struct json *v, long *dst)
{
	const char *s = json_str(v);
	char text[32];
	long x;

	if (!s || parse_long(s, &x) < 0)
		return 0;
	snprintf(text, sizeof(text), "%ld", x);
	if (strcmp(text, s))
		return 0;   /* not as %d prints it: kept as text */
	*dst = x;
	return 1;
}

/* One member of a device object; 0 when no member names it. */
static int
r_device_member(struct caps_device *d, const char *key, const struct json *v)
{
	static const struct { const char *key; size_t offset; } printed[] = {
		{ "uma", D(uma) },
		{ "fp16", D(fp16) },
		{ "bf16", D(bf16) },
		{ "warp size", D(warp_size) },
		{ "shared memory", D(shared_memory) },
		{ "int dot", D(int_dot) },
	};
	static const struct { const char *key; size_t offset; } texts[] = {
		{ "name", D(name) },
		{ "device", D(device) },
		{ "driver", D(driver) },
		{ "matrix cores", D(matrix_cores) },
		{ "gfx", D(gfx) },
		{ "type", D(type) },
		{ "global_mem", D(global_mem) },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(printed); i++)
		if (!strcmp(key, printed[i].key))
			return r_printed(v, (long *)(void *)
					 ((char *)d + printed[i].offset));
	for (i = 0; i < ARRAY_SIZE(texts); i++)
		if (!strcmp(key, texts[i].key) && json_str(v)) {
			caps_set_str((char **)(void *)((char *)d +
						       texts[i].offset),
				     json_str(v));
			return 1;
		}
	if (!strcmp(key, "index"))
		return 1;   /* read above; a number or nothing */
	if (!strcmp(key, "compute_capability") ||
	    !strcmp(key, "wave_size") || !strcmp(key, "vram_mib"))
		return json_type(v) == JSON_NUMBER;
	if (!strcmp(key, "vmm"))
		return json_is_bool(v);
	return 0;
}

static void
r_device(struct caps_gpu *g, const struct json *o)
{
	struct caps_device *d;
	const struct json *it;
	long index = 0;

	if (json_type(o) != JSON_OBJECT)
		return;
	r_long(o, "index", &index);
	d = caps_device_new(g, index);
	r_num(o, "compute_capability", &d->compute_capability);
	r_flag(o, "vmm", &d->vmm);
	r_long(o, "wave_size", &d->wave_size);
	r_long(o, "vram_mib", &d->vram_mib);
	JSON_FOR_EACH(it, o)
		if (!r_device_member(d, json_key(it), it))
			r_kv(&d->extra, &d->nextra, json_key(it), it);
}

static void
r_gpu(struct caps_gpu *g, const struct json *o)
{
	const struct json *it;

	if (json_type(o) != JSON_OBJECT)
		return;
	g->present = 1;
	r_long(o, "count", &g->count);
	r_long(o, "total_vram_mib", &g->total_vram_mib);
	r_str(o, "error", &g->error);
	JSON_FOR_EACH(it, json_get(o, "devices"))
		r_device(g, it);
}

/* Strings of a value that is one string or a list of them. */
static char **
r_strs(const struct json *v, size_t *n)
{
	char **out = NULL;
	const struct json *it;

	*n = 0;
	if (json_str(v))
		return strv_push(NULL, n, xstrdup(json_str(v)));
	JSON_FOR_EACH(it, json_type(v) == JSON_ARRAY ? v : NULL)
		if (json_str(it))
			out = strv_push(out, n, xstrdup(json_str(it)));
	return out;
}

static void
r_details(struct caps *c, const struct json *root)
{
	const struct json *o, *it;

	if (json_type(o = json_get(root, "metal")) == JSON_OBJECT)
		r_metal(&c->metal, o);
	if (json_type(o = json_get(root, "shim")) == JSON_OBJECT) {
		c->shim.present = 1;
		JSON_FOR_EACH(it, o) {
			if (!strcmp(json_key(it), "line") && json_str(it))
				caps_set_str(&c->shim.line, json_str(it));
			else if (!strcmp(json_key(it), "process") &&
				 json_str(it))
				caps_set_str(&c->shim.process, json_str(it));
			else
				r_kv(&c->shim.params, &c->shim.nparams,
				     json_key(it), it);
		}
	}
	if (json_type(o = json_get(root, "shim_messages")) == JSON_ARRAY)
		c->shim_messages = r_strs(o, &c->nshim_messages);
	r_gpu(&c->cuda, json_get(root, "cuda"));
	r_gpu(&c->rocm, json_get(root, "rocm"));
	r_gpu(&c->musa, json_get(root, "musa"));
	JSON_FOR_EACH(it, json_type(o = json_get(root, "ggml_cuda_flags")) ==
		      JSON_OBJECT ? o : NULL)
		r_kv(&c->cuda_flags, &c->ncuda_flags, json_key(it), it);
	r_gpu(&c->vulkan, json_get(root, "vulkan"));
	r_gpu(&c->sycl, json_get(root, "sycl"));
	JSON_FOR_EACH(it, json_get(root, "backends_loaded")) {
		if (json_type(it) != JSON_OBJECT)
			continue;
		c->loaded = xrealloc(c->loaded,
				     (c->nloaded + 1) * sizeof(*c->loaded));
		c->loaded[c->nloaded].name = NULL;
		c->loaded[c->nloaded].path = NULL;
		r_str(it, "name", &c->loaded[c->nloaded].name);
		r_str(it, "path", &c->loaded[c->nloaded++].path);
	}
	if (json_type(o = json_get(root, "dyld_insert_failure")) ==
	    JSON_OBJECT) {
		c->dyld.present = 1;
		r_str(o, "line", &c->dyld.line);
		r_str(o, "path", &c->dyld.path);
		r_str(o, "reason", &c->dyld.reason);
	}
}

static void
r_backends(struct caps_summary *s, const struct json *v)
{
	char **names;
	size_t n, i;
	int b;

	names = r_strs(v, &n);
	for (i = 0; i < n; i++)
		for (b = 0; b < CAPS_NBACKENDS; b++)
			if (!strcmp(names[i], caps_backend_name(b)) &&
			    s->nbackends < CAPS_NBACKENDS)
				s->backend[s->nbackends++] = b;
	strv_free(names);
}

static void
r_summary(struct caps_summary *s, const struct json *root)
{
	const struct json *v, *it;
	const char *fam = json_get_str(root, "gpu_family");
	size_t n = 0;
	long f;

	r_backends(s, json_get(root, "backend"));
	if (json_type(v = json_get(root, "devices")) == JSON_ARRAY) {
		s->has_devices = 1;
		s->devices = r_strs(v, &s->ndevices);
	}
	if (fam && caps_starts(fam, "MTLGPUFamilyApple") &&
	    parse_long(fam + strlen("MTLGPUFamilyApple"), &f) == 0 &&
	    f > -CAPS_FAMILY_LIMIT && f < CAPS_FAMILY_LIMIT)
		s->gpu_family = 1000 + f;
	r_flag(root, "simdgroup_reduction", &s->simdgroup_reduction);
	r_flag(root, "simdgroup_matrix_mul", &s->simdgroup_matrix_mul);
	r_flag(root, "bfloat", &s->bfloat);
	v = json_get(root, "unified_memory");
	s->unified_memory = xcalloc(json_size(v) + 2, 1);
	if (json_is_bool(v))
		s->unified_memory[s->nunified++] = (signed char)json_bool(v);
	JSON_FOR_EACH(it, json_type(v) == JSON_ARRAY ? v : NULL)
		if (json_is_bool(it))
			s->unified_memory[s->nunified++] =
				(signed char)json_bool(it);
	s->compute_capability = r_strs(json_get(root, "compute_capability"),
				       &s->ncc);
	v = json_get(root, "vram_mib");
	s->vram_mib = xcalloc(json_size(v) + 2, sizeof(double));
	if (json_type(v) == JSON_NUMBER)
		s->vram_mib[n++] = json_num(v);
	JSON_FOR_EACH(it, json_type(v) == JSON_ARRAY ? v : NULL)
		if (json_type(it) == JSON_NUMBER)
			s->vram_mib[n++] = json_num(it);
	s->nvram = n;
	s->gfx = r_strs(json_get(root, "gfx"), &s->ngfx);
	r_flag(root, "paravirtual", &s->paravirtual);
	r_flag(root, "shim_marker", &s->shim_marker);
	r_str(root, "suspect_profile", &s->suspect_profile);
}

/* What the suspect profile reads of a probe's output. */
void
caps_probe_facts(struct caps_probe *p)
{
	const struct json *o = p->output;

	p->highest_family_apple = json_num(json_get(json_get(o,
		"highestFamily"), "apple"));
	p->highest_apple_family = json_num(json_get(o, "highest_apple_family"));
	p->family = json_num(json_get(o, "family"));
	p->supports_family = (signed char)json_bool(json_get(o,
		"supports_family"));
}

int
caps_from_json(const char *json, struct caps *c)
{
	struct json *root;
	const struct json *probe;
	size_t end;

	caps_init(c);
	if (!json)
		return -1;
	root = json_parse_prefix(json, strlen(json), &end);
	if (json_type(root) != JSON_OBJECT) {
		json_free(root);
		return -1;
	}
	r_details(c, root);
	r_summary(&c->sum, root);
	if ((probe = json_get(root, "probe"))) {
		c->probe.present = 1;
		c->probe.understood = json_type(probe) == JSON_OBJECT;
		c->probe.output = json_dup(probe);
		caps_probe_facts(&c->probe);
	}
	json_free(root);
	return 0;
}
