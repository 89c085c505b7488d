/*
 * Capability facts as a struct: its life, the summary computed from the
 * facts, and the decisions read from it (a suspect profile, one line for
 * people). Reading stderr is capslines.c and capsgpu.c, the JSON the
 * store keeps capsjson.c, markers and probes capsverify.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/capsread.h"
#include "base/json.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void caps_device_release(struct caps_device *d);

/* ---- names --------------------------------------------------------------- */

static const char *const backend_names[CAPS_NBACKENDS] = {
	[CAPS_METAL] = "metal", [CAPS_CUDA] = "cuda", [CAPS_ROCM] = "rocm",
	[CAPS_MUSA] = "musa", [CAPS_VULKAN] = "vulkan", [CAPS_SYCL] = "sycl",
	[CAPS_CANN] = "cann", [CAPS_OPENCL] = "opencl", [CAPS_CPU] = "cpu",
};

const char *
caps_backend_name(enum caps_backend b)
{
	return b < CAPS_NBACKENDS ? backend_names[b] : "?";
}

enum caps_backend
caps_backend_of(const char *name, size_t len)
{
	static const struct { const char *ggml; enum caps_backend ours; }
	names[] = {
		{ "CUDA", CAPS_CUDA }, { "ROCm", CAPS_ROCM },
		{ "HIP", CAPS_ROCM },
		{ "MUSA", CAPS_MUSA }, { "Vulkan", CAPS_VULKAN },
		{ "SYCL", CAPS_SYCL }, { "MTL", CAPS_METAL },
		{ "Metal", CAPS_METAL }, { "CPU", CAPS_CPU },
		{ "CANN", CAPS_CANN }, { "OpenCL", CAPS_OPENCL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i].ggml) == len &&
		    !strncmp(names[i].ggml, name, len))
			return names[i].ours;
	return CAPS_NBACKENDS;
}

struct caps_gpu *
caps_gpu_of(struct caps *c, enum caps_backend b)
{
	switch (b) {
	case CAPS_CUDA: return &c->cuda;
	case CAPS_ROCM: return &c->rocm;
	case CAPS_MUSA: return &c->musa;
	case CAPS_VULKAN: return &c->vulkan;
	case CAPS_SYCL: return &c->sycl;
	default: return NULL;
	}
}

static const struct caps_gpu *
caps_gpu_const(const struct caps *c, enum caps_backend b)
{
	return caps_gpu_of((struct caps *)c, b);
}

/* ---- helpers ------------------------------------------------------------- */

char *
caps_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int
caps_starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

void
caps_set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

void
caps_note_backend(struct caps *c, enum caps_backend b)
{
	size_t i;

	for (i = 0; i < c->norder; i++)
		if (c->order[i] == b)
			return;
	if (c->norder < CAPS_NBACKENDS)
		c->order[c->norder++] = b;
}

struct caps_kv *
caps_kv_set(struct caps_kv **kv, size_t *n, const char *key)
{
	struct caps_kv *e;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*kv)[i].key, key)) {
			free((*kv)[i].text);
			(*kv)[i].text = NULL;
			return &(*kv)[i];
		}
	*kv = xrealloc(*kv, (*n + 1) * sizeof(**kv));
	e = &(*kv)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->key = xstrdup(key);
	return e;
}

void
caps_kv_text(struct caps_kv *kv, const char *text)
{
	kv->kind = CAPS_KV_TEXT;
	caps_set_str(&kv->text, text);
}

void
caps_kv_num(struct caps_kv *kv, double v)
{
	kv->kind = CAPS_KV_NUM;
	kv->num = v;
}

void
caps_kv_bool(struct caps_kv *kv, int v)
{
	kv->kind = CAPS_KV_BOOL;
	kv->flag = v != 0;
}

void
caps_kv_remove(struct caps_kv **kv, size_t *n, const char *key)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*kv)[i].key, key)) {
			free((*kv)[i].key);
			free((*kv)[i].text);
			memmove(&(*kv)[i], &(*kv)[i + 1],
				(*n - i - 1) * sizeof(**kv));
			(*n)--;
			return;
		}
}

/* The entry of key, or NULL. */
static const struct caps_kv *
caps_kv_get(const struct caps_kv *kv, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return &kv[i];
	return NULL;
}

static void
caps_kv_free(struct caps_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].text);
	}
	free(kv);
}

/* ---- devices ------------------------------------------------------------- */

struct caps_device *
caps_device_new(struct caps_gpu *g, long index)
{
	g->dev = xrealloc(g->dev, (g->ndev + 1) * sizeof(*g->dev));
	caps_device_init(&g->dev[g->ndev], index);
	return &g->dev[g->ndev++];
}

void
caps_device_init(struct caps_device *d, long index)
{
	memset(d, 0, sizeof(*d));
	d->index = index;
	d->uma = d->fp16 = d->bf16 = d->int_dot = CAPS_NONE;
	d->vmm = CAPS_UNKNOWN;
	d->warp_size = d->shared_memory = CAPS_NONE;
	d->wave_size = d->vram_mib = CAPS_NONE;
	d->compute_capability = NAN;
}

void
caps_device_settle(struct caps_gpu *g)
{
	struct caps_device *last = &g->dev[g->ndev - 1];
	size_t i;

	for (i = 0; i + 1 < g->ndev; i++)
		if (g->dev[i].index == last->index && g->dev[i].name &&
		    last->name && !strcmp(g->dev[i].name, last->name)) {
			caps_device_release(last);
			g->ndev--;
			return;
		}
}

static void
caps_device_release(struct caps_device *d)
{
	free(d->name);
	free(d->device);
	free(d->driver);
	free(d->matrix_cores);
	free(d->gfx);
	free(d->type);
	free(d->global_mem);
	caps_kv_free(d->extra, d->nextra);
	memset(d, 0, sizeof(*d));
}

/* ---- the struct ---------------------------------------------------------- */

static void
gpu_init(struct caps_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->count = g->total_vram_mib = CAPS_NONE;
}

void
caps_init(struct caps *c)
{
	struct caps_metal *m = &c->metal;

	memset(c, 0, sizeof(*c));
	m->index = CAPS_NONE;
	m->apple_family = m->common_family = CAPS_NONE;
	m->metal_family = m->mac_family = CAPS_NONE;
	m->paravirtual = m->simdgroup_reduction = CAPS_UNKNOWN;
	m->simdgroup_matrix_mul = m->has_unified_memory = CAPS_UNKNOWN;
	m->has_bfloat = m->use_bfloat = m->has_tensor = CAPS_UNKNOWN;
	m->use_residency_sets = m->use_shared_buffers = CAPS_UNKNOWN;
	m->has_residency_sets = CAPS_UNKNOWN;
	m->tensor_api = CAPS_UNKNOWN;
	m->recommended_max_working_set_mb = NAN;
	m->library_load_s = m->residency_keep_alive_s = NAN;
	gpu_init(&c->cuda);
	gpu_init(&c->rocm);
	gpu_init(&c->musa);
	gpu_init(&c->vulkan);
	gpu_init(&c->sycl);
	c->sum.gpu_family = CAPS_NONE;
	c->sum.simdgroup_reduction = c->sum.simdgroup_matrix_mul = CAPS_UNKNOWN;
	c->sum.bfloat = c->sum.paravirtual = c->sum.shim_marker = CAPS_UNKNOWN;
	c->probe.highest_family_apple = c->probe.highest_apple_family = NAN;
	c->probe.family = NAN;
	c->probe.supports_family = CAPS_UNKNOWN;
}

static void
gpu_release(struct caps_gpu *g)
{
	size_t i;

	for (i = 0; i < g->ndev; i++)
		caps_device_release(&g->dev[i]);
	free(g->dev);
	free(g->error);
}

static void
strs_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
caps_release(struct caps *c)
{
	struct caps_summary *s = &c->sum;
	size_t i;

	free(c->metal.device);
	free(c->metal.gpu_name);
	free(c->metal.library);
	free(c->shim.line);
	free(c->shim.process);
	caps_kv_free(c->shim.params, c->shim.nparams);
	strs_free(c->shim_messages, c->nshim_messages);
	gpu_release(&c->cuda);
	gpu_release(&c->rocm);
	gpu_release(&c->musa);
	gpu_release(&c->vulkan);
	gpu_release(&c->sycl);
	caps_kv_free(c->cuda_flags, c->ncuda_flags);
	for (i = 0; i < c->nloaded; i++) {
		free(c->loaded[i].name);
		free(c->loaded[i].path);
	}
	free(c->loaded);
	free(c->dyld.line);
	free(c->dyld.path);
	free(c->dyld.reason);
	strs_free(s->devices, s->ndevices);
	free(s->unified_memory);
	strs_free(s->compute_capability, s->ncc);
	free(s->vram_mib);
	strs_free(s->gfx, s->ngfx);
	free(s->suspect_profile);
	json_free(c->probe.output);
	caps_init(c);
}

/* ---- the summary --------------------------------------------------------- */

/* One device of the summary: merged over backends by index and name. */
struct sdev {
	const char *name;          /* NULL: attributes only (Metal flags) */
	double index;
	double cc, vram;           /* NAN unknown */
	const char *gfx;
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
	d[*n].cc = d[*n].vram = NAN;
	d[*n].uma = -1;
	return &d[(*n)++];
}

char *
caps_family_name(long family)
{
	return xstrfmt("MTLGPUFamilyApple%ld", family - 1000);
}

/* Appends the reasons a profile is beyond any Apple GPU, "; "-separated. */
static void
suspect_reasons(const struct caps *c, struct buf *why)
{
	const struct caps_kv *a = caps_kv_get(c->shim.params, c->shim.nparams,
					      "appleFamilyMax");
	const struct caps_kv *f = caps_kv_get(c->shim.params, c->shim.nparams,
					      "familyMax");
	double amax = a && a->kind == CAPS_KV_NUM ? a->num : NAN;
	double fmax = f && f->kind == CAPS_KV_NUM ? f->num : NAN;
	char *hi = caps_family_name(CAPS_APPLE_FAMILY_HIGHEST);
	const char *h = hi + strlen("MTLGPUFamily");

	if (c->metal.apple_family != CAPS_NONE &&
	    c->metal.apple_family > CAPS_APPLE_FAMILY_HIGHEST) {
		char *name = caps_family_name(c->metal.apple_family);
		buf_addf(why, "%s%s is beyond any Apple GPU (highest: %s)",
			 why->len ? "; " : "", name, h);
		free(name);
	}
	if (amax > CAPS_APPLE_FAMILY_HIGHEST)
		buf_addf(why, "%sthe shim claims Apple families up to %.0f "
			 "(appleFamilyMax=%.0f), beyond any Apple GPU "
			 "(highest: %s)", why->len ? "; " : "", amax, amax, h);
	if (fmax > CAPS_APPLE_FAMILY_HIGHEST)
		buf_addf(why, "%sthe shim claims every family up to %.0f "
			 "(familyMax=%.0f), Apple families beyond any Apple "
			 "GPU among them (highest: %s)", why->len ? "; " : "",
			 fmax, fmax, h);
	free(hi);
}

/* The backends of the summary: every one seen, "cpu" only when alone. */
static void
summary_backends(struct caps *c)
{
	size_t i, gpu = 0;

	for (i = 0; i < c->norder; i++)
		gpu += c->order[i] != CAPS_CPU;
	for (i = 0; i < c->norder; i++)
		if (!gpu || c->order[i] != CAPS_CPU)
			c->sum.backend[c->sum.nbackends++] = c->order[i];
}

/* The devices of every backend, merged by index and name; d has room. */
static size_t
summary_devices(const struct caps *c, struct sdev *d, int *named)
{
	size_t nd = 0, i, k;

	for (i = 0; i < c->norder; i++) {
		const struct caps_gpu *g = caps_gpu_const(c, c->order[i]);

		if (c->order[i] == CAPS_METAL && c->metal.present) {
			const struct caps_metal *m = &c->metal;
			struct sdev *s = sdev_find(d, &nd, m->device,
				m->index != CAPS_NONE ? (double)m->index : 0);

			if (m->has_unified_memory >= 0)
				s->uma = m->has_unified_memory;
			*named |= m->device != NULL;
			continue;
		}
		if (!g || !g->present)
			continue;
		*named = 1;
		for (k = 0; k < g->ndev; k++) {
			const struct caps_device *dv = &g->dev[k];
			struct sdev *s = sdev_find(d, &nd, dv->device ?
						   dv->device : dv->name,
						   (double)dv->index);

			if (!isnan(dv->compute_capability))
				s->cc = dv->compute_capability;
			if (dv->vram_mib != CAPS_NONE)
				s->vram = (double)dv->vram_mib;
			if (dv->gfx)
				s->gfx = dv->gfx;
			if (dv->uma != CAPS_NONE) {
				s->uma = dv->uma != 0;
			} else {
				/* printed, but not as a number: any text
				 * but "0" says unified, as it always has */
				const struct caps_kv *u = caps_kv_get(
					dv->extra, dv->nextra, "uma");
				if (u && u->kind == CAPS_KV_TEXT)
					s->uma = strcmp(u->text, "0") != 0;
			}
		}
	}
	return nd;
}

void
caps_summarise(struct caps *c)
{
	struct caps_summary *s = &c->sum;
	const struct caps_metal *m = &c->metal;
	struct sdev *d;
	struct buf why = BUF_INIT;
	size_t nd, i, total = 0;
	int named = 0;

	for (i = 0; i < c->norder; i++) {
		const struct caps_gpu *g = caps_gpu_const(c, c->order[i]);
		total += (g ? g->ndev : 0) + 1;
	}
	d = xcalloc(total + 1, sizeof(*d));
	summary_backends(c);
	nd = summary_devices(c, d, &named);
	s->has_devices = named;
	s->devices = xcalloc(nd + 1, sizeof(char *));
	s->unified_memory = xcalloc(nd + 1, 1);
	s->compute_capability = xcalloc(nd + 1, sizeof(char *));
	s->vram_mib = xcalloc(nd + 1, sizeof(double));
	s->gfx = xcalloc(nd + 1, sizeof(char *));
	for (i = 0; i < nd; i++) {
		if (d[i].name && named)
			s->devices[s->ndevices++] = xstrdup(d[i].name);
		if (!isnan(d[i].cc)) {
			long cc = (long)d[i].cc;
			s->compute_capability[s->ncc++] =
				xstrfmt("%ld.%ld", cc / 10, cc % 10);
		}
		if (!isnan(d[i].vram))
			s->vram_mib[s->nvram++] = d[i].vram;
		if (d[i].gfx)
			s->gfx[s->ngfx++] = xstrdup(d[i].gfx);
		if (d[i].uma >= 0)
			s->unified_memory[s->nunified++] =
				(signed char)d[i].uma;
	}
	if (m->present) {
		s->gpu_family = m->apple_family;
		s->simdgroup_reduction = m->simdgroup_reduction;
		s->simdgroup_matrix_mul = m->simdgroup_matrix_mul;
		s->bfloat = m->has_bfloat;
		s->paravirtual = m->paravirtual;
	}
	s->shim_marker = c->shim.present;
	suspect_reasons(c, &why);
	if (why.len)
		s->suspect_profile = buf_detach(&why, NULL);
	buf_release(&why);
	free(d);
}

/* ---- decisions ----------------------------------------------------------- */

void
caps_probe_suspect(const struct caps_probe *p, struct buf *why)
{
	double fam = p->highest_family_apple;
	char *hi = caps_family_name(CAPS_APPLE_FAMILY_HIGHEST);
	const char *h = hi + strlen("MTLGPUFamily");

	if (!(fam > CAPS_APPLE_FAMILY_HIGHEST))
		fam = p->highest_apple_family;
	if (!(fam > CAPS_APPLE_FAMILY_HIGHEST) &&
	    p->family > CAPS_APPLE_FAMILY_HIGHEST && p->family < 2000 &&
	    p->supports_family == 1)
		fam = p->family;
	if (fam > CAPS_APPLE_FAMILY_HIGHEST) {
		char *name = caps_family_name((long)fam);
		buf_addf(why, "%sthe probe reports %s, beyond any Apple GPU "
			 "(highest: %s)", why->len ? "; " : "", name, h);
		free(name);
	}
	free(hi);
}

int
caps_suspect(const struct caps *c, struct buf *why)
{
	const char *s = c->sum.suspect_profile;

	if (!s || !*s)
		return 0;
	if (why)
		buf_adds(why, s);
	return 1;
}

/* Appends "a, b" for a list of strings. */
static void
add_list(struct buf *out, char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_addf(out, "%s%s", i ? ", " : "", v[i]);
}

/* A number as JSON writes it (126976, 1.5). */
static void
add_num(struct buf *out, double v)
{
	struct json *n = json_new_num(v);
	char *t = json_print(n, 0);

	buf_adds(out, t);
	free(t);
	json_free(n);
}

/* One flag of a list: its value when every device agrees, else -1. */
static int
one_flag(const signed char *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i] != v[0])
			return -1;
	return n ? v[0] : -1;
}

/* The summary's "one value or a list" of strings, as text. */
static void
add_one_or_list(struct buf *out, char *const *v, size_t n)
{
	size_t i;

	for (i = 1; i < n && !strcmp(v[i], v[0]); i++)
		;
	add_list(out, v, i == n ? 1 : n);
}

#define SEP() buf_adds(out, out->len > start ? "; " : "")

/* Backend, devices, family, flags and GPU facts of the summary. */
static void
describe_devices(const struct caps *c, struct buf *out, size_t start)
{
	const struct caps_summary *s = &c->sum;
	const struct { const char *label; int v; } flags[] = {
		{ "simdgroup reduction", s->simdgroup_reduction },
		{ "simdgroup matrix mul.", s->simdgroup_matrix_mul },
		{ "bfloat", s->bfloat },
		{ "unified memory", one_flag(s->unified_memory, s->nunified) },
	};
	size_t i;

	if (s->nbackends) {
		SEP();
		for (i = 0; i < s->nbackends; i++)
			buf_addf(out, "%s%s", i ? ", " : "",
				 caps_backend_name(s->backend[i]));
	}
	if (s->ndevices) {
		SEP();
		add_list(out, s->devices, s->ndevices);
		if (s->paravirtual == 1)
			buf_adds(out, " (paravirtual)");
	}
	if (s->gpu_family != CAPS_NONE) {
		char *f = caps_family_name(s->gpu_family);
		SEP();
		buf_adds(out, f);
		free(f);
	}
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		if (flags[i].v < 0)
			continue;
		SEP();
		buf_addf(out, "%s %s", flags[i].label,
			 flags[i].v ? "yes" : "no");
	}
	if (s->ncc) {
		SEP();
		buf_adds(out, "compute capability ");
		add_one_or_list(out, s->compute_capability, s->ncc);
	}
	if (s->ngfx) {
		SEP();
		add_one_or_list(out, s->gfx, s->ngfx);
	}
	if (s->nvram) {
		size_t n;

		SEP();
		buf_adds(out, "VRAM MiB ");
		for (n = 1; n < s->nvram && s->vram_mib[n] == s->vram_mib[0];
		     n++)
			;
		n = n == s->nvram ? 1 : s->nvram;
		for (i = 0; i < n; i++) {
			buf_adds(out, i ? ", " : "");
			add_num(out, s->vram_mib[i]);
		}
	}
}

void
caps_describe(const struct caps *c, struct buf *out)
{
	size_t start = out->len;

	describe_devices(c, out, start);
	if (c->shim.present) {
		const struct caps_kv *a = caps_kv_get(c->shim.params,
						      c->shim.nparams,
						      "appleFamilyMax");
		SEP();
		buf_addf(out, "shim enabled for %s",
			 c->shim.process ? c->shim.process : "?");
		if (a)
			buf_addf(out, " (appleFamilyMax=%.0f)",
				 a->kind == CAPS_KV_NUM ? a->num : NAN);
	} else if (c->sum.shim_marker != CAPS_UNKNOWN) {
		SEP();
		buf_adds(out, "no shim marker");
	}
	if (c->nshim_messages) {
		SEP();
		buf_adds(out, "shim said: ");
		add_list(out, c->shim_messages, c->nshim_messages);
	}
	if (c->dyld.present) {
		SEP();
		buf_addf(out, "dyld refused '%s'", c->dyld.path ?
			 c->dyld.path : "?");
	}
	if (c->sum.suspect_profile) {
		SEP();
		buf_addf(out, "SUSPECT PROFILE: %s", c->sum.suspect_profile);
	}
}
#undef SEP
