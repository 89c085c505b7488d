#define _POSIX_C_SOURCE 200809L
#include "analysis/capfacts.h"
#include "evidence/caps.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
sep(struct buf *b, size_t start, const char *s)
{
	if (b->len > start)
		buf_adds(b, s);
}

static void
flag(struct buf *b, size_t start, const char *label, long v)
{
	if (v == CAPS_NONE || v < 0)
		return;
	sep(b, start, ", ");
	buf_addf(b, "%s %ld", label, v);
}

/* ggml's Vulkan device line: the fields that pick kernels. */
static void
vulkan_facts(const struct caps_gpu *g, struct buf *b)
{
	size_t i, start;

	for (i = 0; i < g->ndev; i++) {
		const struct caps_device *d = &g->dev[i];

		sep(b, 0, "; ");
		buf_adds(b, "vulkan");
		if (g->ndev > 1)
			buf_addf(b, " %ld", d->index);
		buf_adds(b, ": ");
		start = b->len;
		flag(b, start, "fp16", d->fp16);
		flag(b, start, "bf16", d->bf16);
		flag(b, start, "int dot", d->int_dot);
		if (d->matrix_cores) {
			sep(b, start, ", ");
			buf_addf(b, "matrix cores %s", d->matrix_cores);
		}
		flag(b, start, "shared memory", d->shared_memory);
		flag(b, start, "warp size", d->warp_size);
	}
}

static void
yes_no(struct buf *b, size_t start, const char *label, int v)
{
	if (v < 0)
		return;
	sep(b, start, ", ");
	buf_addf(b, "%s %s", label, v ? "yes" : "no");
}

char *
capfacts_describe(const struct caps *c)
{
	const struct caps_summary *s = &c->sum;
	struct buf b = BUF_INIT;
	size_t start, i;

	if (c->metal.present || s->gpu_family != CAPS_NONE) {
		buf_adds(&b, "metal: ");
		start = b.len;
		if (s->gpu_family != CAPS_NONE && s->gpu_family > 1000 &&
		    s->gpu_family < 2000)
			buf_addf(&b, "MTLGPUFamilyApple%ld", s->gpu_family - 1000);
		yes_no(&b, start, "simdgroup reduction", s->simdgroup_reduction);
		yes_no(&b, start, "simdgroup matrix mul.",
		       s->simdgroup_matrix_mul);
		yes_no(&b, start, "bfloat", s->bfloat);
		if (c->metal.paravirtual == 1) {
			sep(&b, start, ", ");
			buf_adds(&b, "paravirtual");
		}
		if (b.len == start)     /* a Metal block with none of these */
			buf_reset(&b);
	}
	if (c->vulkan.present)
		vulkan_facts(&c->vulkan, &b);
	if (s->ncc) {
		sep(&b, 0, "; ");
		buf_adds(&b, "cuda: compute capability ");
		for (i = 0; i < s->ncc; i++)
			buf_addf(&b, "%s%s", i ? ", " : "",
				 s->compute_capability[i]);
	}
	if (s->ngfx) {
		sep(&b, 0, "; ");
		buf_adds(&b, "rocm: ");
		for (i = 0; i < s->ngfx; i++)
			buf_addf(&b, "%s%s", i ? ", " : "", s->gfx[i]);
	}
	if (!b.len && s->nbackends)
		buf_adds(&b, caps_backend_name(s->backend[0]));
	if (c->shim.present) {
		char *cfg = capfacts_shim_config(c);

		sep(&b, 0, "; ");
		buf_addf(&b, "shim: %s", *cfg ? cfg : "enabled");
		free(cfg);
	}
	return buf_detach(&b, NULL);
}

char *
capfacts_shim_config(const struct caps *c)
{
	struct buf b = BUF_INIT;
	size_t i;

	if (!c->shim.present)
		return NULL;
	for (i = 0; i < c->shim.nparams; i++) {
		const struct caps_kv *kv = &c->shim.params[i];

		buf_addf(&b, "%s%s=", i ? " " : "", kv->key);
		if (kv->kind == CAPS_KV_NUM)
			buf_addf(&b, "%.17g", kv->num);
		else if (kv->kind == CAPS_KV_BOOL)
			buf_adds(&b, kv->flag ? "true" : "false");
		else
			buf_adds(&b, kv->text ? kv->text : "");
	}
	return buf_detach(&b, NULL);
}
