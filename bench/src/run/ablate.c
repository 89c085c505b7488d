#define _POSIX_C_SOURCE 200809L
#include "run/ablate.h"
#include "base/json.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The Vulkan shim's capabilities in the order its marker names them
 * (shim/vulkan/src/vkcaps_config.c), with what each implies: the probe's
 * key (vulkan-capabilities), the field of ggml's device line that must
 * then read 0, and the extensions and features the shim's device-creation
 * gate refuses for it.
 */
static const struct vk_cap {
	const char *name, *probe_key, *ggml_field;
	const char *ext[3], *feature;
} vk_caps[] = {
	{ "coopmat", "coopmat", NULL,
	  { "VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix", NULL },
	  "cooperativeMatrix" },
	{ "coopmat2", "coopmat2", NULL,
	  { "VK_NV_cooperative_matrix2",
	    "VK_NV_cooperative_matrix_decode_vector", NULL }, NULL },
	{ "int-dot", "int_dot", "int dot: ",
	  { "VK_KHR_shader_integer_dot_product", NULL },
	  "shaderIntegerDotProduct" },
	{ "fp16", "fp16", "fp16: ", { NULL }, "shaderFloat16" },
	{ "bf16", "bf16", "bf16: ", { "VK_KHR_shader_bfloat16", NULL },
	  "shaderBFloat16Type" },
	{ "subgroup-size-control", "subgroup_size_control", NULL,
	  { "VK_EXT_subgroup_size_control", NULL }, "subgroupSizeControl" },
	{ "dot2", "dot2", NULL,
	  { "VK_VALVE_shader_mixed_float_dot_product", NULL }, NULL },
};
#define NVK (sizeof(vk_caps) / sizeof(vk_caps[0]))

#define VK_TAG "[VulkanCapabilities]"
#define METAL_TAG "[LumeMetalCapabilities]"

/* What one generated variant takes away. */
struct cut {
	unsigned hide;           /* Vulkan: bits of vk_caps */
	long family, tgmem;      /* Metal: 0 = the from variant's */
};

static int
refuse(const char *path, const char *what)
{
	return error("plan: '%s' %s", path, what);
}

/* The variant named name in the "variants" array, or NULL. */
static const struct json *
find_variant(const struct json *variants, const char *name)
{
	const struct json *v;

	JSON_FOR_EACH(v, variants)
		if (json_get_str(v, "name") &&
		    !strcmp(json_get_str(v, "name"), name))
			return v;
	return NULL;
}

/* ---- markers ------------------------------------------------------------ */

/* A copy of arr without the markers that hold any of drop[]. */
static struct json *
markers_without(const struct json *arr, const char *const *drop, size_t n)
{
	struct json *out = json_new_array();
	const struct json *m;
	size_t i;

	JSON_FOR_EACH(m, arr) {
		const char *s = json_str(m);

		for (i = 0; s && i < n && !strstr(s, drop[i]); i++)
			;
		if (s && i == n)
			json_append(out, json_new_str(s));
	}
	return out;
}

/* Whether any marker of arr holds what. */
static int
markers_have(const struct json *arr, const char *what)
{
	const struct json *m;

	JSON_FOR_EACH(m, arr)
		if (json_str(m) && strstr(json_str(m), what))
			return 1;
	return 0;
}

/* The llama.cpp markers of one generated variant, from the from
 * variant's list (arr, NULL for none). */
static struct json *
cut_markers(const struct json *arr, const char *shim, const struct cut *c)
{
	const char *drop[NVK + 4];
	struct json *out;
	size_t nd = 0, i;
	char *s;

	if (!strcmp(shim, "vulkan")) {
		drop[nd++] = VK_TAG;
		for (i = 0; i < NVK; i++)
			if ((c->hide & (1u << i)) && vk_caps[i].ggml_field)
				drop[nd++] = vk_caps[i].ggml_field;
		if (c->hide & 3u)
			drop[nd++] = "matrix cores: ";
		out = markers_without(arr, drop, nd);
		json_append(out, json_new_str(VK_TAG " Enabled for "));
		{
			struct buf b = BUF_INIT;

			buf_adds(&b, "(profile=hide hide=");
			for (i = 0; i < NVK; i++)
				if (c->hide & (1u << i))
					buf_addf(&b, "%s%s", b.buf[b.len - 1] ==
						 '=' ? "" : ",", vk_caps[i].name);
			buf_addch(&b, ')');
			json_append(out, json_new_str(b.buf));
			buf_release(&b);
		}
		for (i = 0; i < NVK; i++)
			if ((c->hide & (1u << i)) && vk_caps[i].ggml_field) {
				s = xstrfmt("%s0 |", vk_caps[i].ggml_field);
				json_append(out, json_new_str(s));
				free(s);
			}
		if ((c->hide & 3u) == 3u)
			json_append(out, json_new_str("matrix cores: none"));
		return out;
	}
	drop[nd++] = METAL_TAG;
	if (c->family)
		drop[nd++] = "GPU family: ";
	if (c->family)
		drop[nd++] = "simdgroup matrix mul.";
	out = markers_without(arr, drop, nd);
	json_append(out, json_new_str(METAL_TAG " Enabled for "));
	if (c->family) {
		s = xstrfmt("appleFamilyMax=%ld", c->family);
		json_append(out, json_new_str(s));
		free(s);
		/* ggml reports the highest family the device answers yes
		 * for (the shim's ceiling on a guest), and simdgroup matrix
		 * multiplication from Apple7 up */
		if (markers_have(arr, "GPU family: ")) {
			s = xstrfmt("GPU family: MTLGPUFamilyApple%ld  (%ld)",
				    c->family - 1000, c->family);
			json_append(out, json_new_str(s));
			free(s);
		}
		if (markers_have(arr, "simdgroup matrix mul."))
			json_append(out, json_new_str(c->family >= 1007 ?
				"simdgroup matrix mul. = true" :
				"simdgroup matrix mul. = false"));
	}
	if (c->tgmem) {
		s = xstrfmt("maxThreadgroupMemory=%ld", c->tgmem);
		json_append(out, json_new_str(s));
		free(s);
	}
	return out;
}

/* "expect" of a generated variant: the same shape as the from
 * variant's (an array, or an object per runtime). */
static struct json *
cut_expect(const struct json *ex, const char *shim, const struct cut *c)
{
	struct json *out;
	const struct json *m;

	if (json_type(ex) != JSON_OBJECT)
		return cut_markers(ex, shim, c);
	out = json_new_object();
	JSON_FOR_EACH(m, ex)
		json_set(out, json_key(m), !strcmp(json_key(m), "llama.cpp") ?
			 cut_markers(m, shim, c) : json_dup(m));
	if (!json_get(ex, "llama.cpp"))
		json_set(out, "llama.cpp", cut_markers(NULL, shim, c));
	return out;
}

/* ---- probes ------------------------------------------------------------- */

/* The value after "--enable" in a probe's argv, or NULL. */
static const char *
probe_enables(const struct json *argv)
{
	const struct json *a;

	JSON_FOR_EACH(a, argv)
		if (json_str(a) && !strcmp(json_str(a), "--enable") &&
		    json_next(a))
			return json_str(json_next(a));
	return NULL;
}

/* The Vulkan probe's expectations for a cut: hidden keys false, the
 * profile "hide", the device-creation gate's answer for what the probe
 * enables; keys of capabilities not hidden are left unasserted (hiding
 * one can change what ggml derives for another: fp16 shapes leave the
 * coopmat lists). */
static void
vk_probe(struct json *probe, const struct cut *c)
{
	struct json *ex = json_get_mut(probe, "expect");
	const char *en = probe_enables(json_get(probe, "argv"));
	const char *gate = NULL;
	size_t i, k;

	for (i = 0; i < NVK; i++) {
		int hidden = (c->hide & (1u << i)) != 0;

		if (hidden)
			json_set_bool(ex, vk_caps[i].probe_key, 0);
		else
			json_remove(ex, vk_caps[i].probe_key);
		for (k = 0; hidden && en && k < 3 && vk_caps[i].ext[k]; k++)
			if (!strcmp(en, vk_caps[i].ext[k]))
				gate = "VK_ERROR_EXTENSION_NOT_PRESENT";
		if (hidden && en && !gate && vk_caps[i].feature &&
		    !strcmp(en, vk_caps[i].feature))
			gate = "VK_ERROR_FEATURE_NOT_PRESENT";
	}
	json_remove(ex, "coopmat_shapes");
	json_set_str(ex, "shim_profile", "hide");
	json_remove(ex, "shim_config");
	if (json_get(ex, "create_device") || gate)
		json_set_str(ex, "create_device", gate ? gate : "VK_SUCCESS");
}

/* The Metal probe's: the family it asks about follows the cut (when the
 * from variant asked about the family it configured), else the family
 * answers are left unasserted; the threadgroup limit it reads. */
static void
metal_probe(struct json *probe, const struct cut *c, long from_family)
{
	struct json *ex = json_get_mut(probe, "expect");
	struct json *argv = json_get_mut(probe, "argv");
	const struct json *a, *m, *next;
	int json_form = 0, moved = 0;
	char num[32];

	JSON_FOR_EACH(a, argv)
		json_form |= json_str(a) && !strcmp(json_str(a), "--json");
	if (c->family) {
		snprintf(num, sizeof(num), "%ld", from_family);
		JSON_FOR_EACH(a, argv)
			if (json_str(a) && !strcmp(json_str(a), num))
				moved = 1;
		if (moved) {
			struct json *nargv = json_new_array();

			snprintf(num, sizeof(num), "%ld", from_family);
			JSON_FOR_EACH(a, argv) {
				char f[32];

				snprintf(f, sizeof(f), "%ld", c->family);
				json_append(nargv, json_new_str(
					json_str(a) && !strcmp(json_str(a), num) ?
					f : json_str(a)));
			}
			json_set(probe, "argv", nargv);
		}
		if (moved && json_get(ex, "family"))
			json_set_num(ex, "family", (double)c->family);
		for (m = json_first(ex); !moved && m; m = next) {
			const char *k = json_key(m);

			next = json_next(m);
			if (!strcmp(k, "family") || !strcmp(k, "supports_family") ||
			    !strncmp(k, "supportsFamily.", 15) ||
			    !strncmp(k, "highest", 7)) {
				char *key = xstrdup(k);

				json_remove(ex, key);   /* m only; next stays */
				free(key);
			}
		}
	}
	if (c->tgmem)
		json_set_num(ex, json_form ? "maxThreadgroupMemoryLimit" :
			     "max_threadgroup_memory_limit", (double)c->tgmem);
}

/* ---- variants ----------------------------------------------------------- */

/* One generated variant: a copy of from with the cut applied. */
static struct json *
cut_variant(const struct json *from, const char *shim, const char *name,
	    const struct cut *c, long from_family)
{
	struct json *v = json_dup(from);
	struct json *env = json_get_mut(json_get_mut(v, "inject"), "env");
	struct json *probe = json_get_mut(v, "probe");
	char num[32];
	size_t i;

	json_set_str(v, "name", name);
	json_set_str(v, "role", ABLATE_ROLE);
	if (!strcmp(shim, "vulkan")) {
		struct buf b = BUF_INIT;

		json_remove(env, "VULKAN_CAPS_PROFILE");
		for (i = 0; i < NVK; i++)
			if (c->hide & (1u << i))
				buf_addf(&b, "%s%s", b.len ? "," : "",
					 vk_caps[i].name);
		json_set_str(env, "VULKAN_CAPS_HIDE", b.buf);
		buf_release(&b);
	} else {
		if (c->family) {
			snprintf(num, sizeof(num), "%ld", c->family);
			json_set_str(env, "LUME_METAL_APPLE_FAMILY_MAX", num);
		}
		if (c->tgmem) {
			snprintf(num, sizeof(num), "%ld", c->tgmem);
			json_set_str(env, "LUME_METAL_MAX_THREADGROUP_MEMORY",
				     num);
		}
	}
	json_set(v, "expect", cut_expect(json_get(from, "expect"), shim, c));
	if (probe && json_type(json_get(probe, "expect")) == JSON_OBJECT) {
		if (!strcmp(shim, "vulkan"))
			vk_probe(probe, c);
		else
			metal_probe(probe, c, from_family);
	}
	return v;
}

/* A whole number in [lo, hi] at path. */
static int
whole(const struct json *v, const char *path, long lo, long hi, long *out)
{
	int64_t x;

	if (json_int64(v, lo, hi, &x) < 0)
		return error("plan: '%s' must be a whole number from %ld to %ld",
			     path, lo, hi);
	*out = (long)x;
	return 0;
}

/* "hide": the Vulkan capabilities, each once; absent: all of them. */
static int
read_hide(const struct json *arr, unsigned *bits, size_t *n)
{
	const struct json *v;
	size_t i, k = 0;
	char path[48];

	*bits = 0;
	*n = 0;
	if (!arr) {
		*bits = (1u << NVK) - 1;
		*n = NVK;
		return 0;
	}
	if (json_type(arr) != JSON_ARRAY || !json_first(arr))
		return refuse("ablate.hide", "must be a non-empty array of "
			      "capability names");
	JSON_FOR_EACH(v, arr) {
		const char *s = json_str(v);

		snprintf(path, sizeof(path), "ablate.hide[%zu]", k++);
		for (i = 0; s && i < NVK && strcmp(s, vk_caps[i].name); i++)
			;
		if (s && !strcmp(s, "16bit-storage"))
			return refuse(path, "is '16bit-storage', which the shim "
				      "never hides (ggml refuses a device "
				      "without it)");
		if (!s || i == NVK)
			return error("plan: '%s' is %s%s%s; expected one of "
				     "coopmat, coopmat2, int-dot, fp16, bf16, "
				     "subgroup-size-control, dot2", path,
				     s ? "'" : "not a string", s ? s : "",
				     s ? "'" : "");
		if (*bits & (1u << i))
			return error("plan: '%s' names '%s' twice", path, s);
		*bits |= 1u << i;
		(*n)++;
	}
	return 0;
}

/* A Metal knob's values: a non-empty array of whole numbers. */
static int
read_values(const struct json *arr, const char *key, long lo, long hi,
	    long **out, size_t *n)
{
	const struct json *v;
	char path[64];
	size_t i;

	*out = NULL;
	*n = 0;
	if (!arr)
		return 0;
	if (json_type(arr) != JSON_ARRAY || !json_first(arr))
		return error("plan: 'ablate.%s' must be a non-empty array of "
			     "whole numbers", key);
	JSON_FOR_EACH(v, arr) {
		snprintf(path, sizeof(path), "ablate.%s[%zu]", key, *n);
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		if (whole(v, path, lo, hi, &(*out)[*n]) < 0)
			return -1;
		for (i = 0; i < *n; i++)
			if ((*out)[i] == (*out)[*n])
				return error("plan: '%s' repeats %ld", path,
					     (*out)[*n]);
		(*n)++;
	}
	return 0;
}

/* Appends v to variants unless its name is taken. */
static int
add_variant(struct json *variants, struct json *v)
{
	const char *name = json_get_str(v, "name");

	if (find_variant(variants, name)) {
		error("plan: 'ablate' would generate variant '%s', which the "
		      "plan already has", name);
		json_free(v);
		return -1;
	}
	json_append(variants, v);
	return 0;
}

/* The from variant: it injects the shim, configured as shim expects. */
static int
check_from(const struct json *from, const char *name, const char *shim,
	   long *family)
{
	const struct json *env = json_get(json_get(from, "inject"), "env");
	const char *p;

	if (!from)
		return error("plan: 'ablate.from' names unknown variant '%s'",
			     name);
	if (json_type(env) != JSON_OBJECT)
		return error("plan: 'ablate.from' variant '%s' injects no "
			     "library with an 'env' (the shim and its "
			     "configuration)", name);
	if (!strcmp(shim, "vulkan")) {
		p = json_get_str(env, "VULKAN_CAPS_PROFILE");
		if (json_get(env, "VULKAN_CAPS_HIDE") ||
		    json_get(env, "VULKAN_CAPS_MAX_SHARED_MEMORY") ||
		    !p || strcmp(p, "shim"))
			return error("plan: 'ablate.from' variant '%s' must "
				     "run the Vulkan shim with "
				     "VULKAN_CAPS_PROFILE=shim and nothing "
				     "hidden (inject.env)", name);
		return 0;
	}
	p = json_get_str(env, "LUME_METAL_APPLE_FAMILY_MAX");
	if (!p || parse_long(p, family) < 0 || *family < 1001 ||
	    *family > 1999)
		return error("plan: 'ablate.from' variant '%s' must run the "
			     "Metal shim with LUME_METAL_APPLE_FAMILY_MAX "
			     "1001-1999 in inject.env", name);
	return 0;
}

static int vk_expand(struct json *variants, const struct json *from,
		     const char *base, const struct json *ab, int all);
static int metal_expand(struct json *variants, const struct json *from,
			const char *base, const struct json *ab, int all,
			long from_family);

int
ablate_expand(struct json *root)
{
	static const char *const keys[] = { "from", "shim", "hide", "family",
					    "threadgroup_memory", "all", NULL };
	const struct json *ab = json_get(root, "ablate"), *m, *allv;
	struct json *variants = json_get_mut(root, "variants");
	const char *from, *shim;
	long family = 0;
	int all, rc;
	size_t i;

	if (!ab)
		return 0;
	if (json_type(ab) != JSON_OBJECT)
		return refuse("ablate", "must be an object");
	if (json_check_unique(ab, "plan: 'ablate'") < 0)
		return -1;
	JSON_FOR_EACH(m, ab) {
		for (i = 0; keys[i] && strcmp(keys[i], json_key(m)); i++)
			;
		if (!keys[i])
			return error("plan: unknown key 'ablate.%s'",
				     json_key(m));
	}
	from = json_get_str(ab, "from");
	shim = json_get_str(ab, "shim");
	if (!from || !*from)
		return refuse("ablate.from", "must name the variant to take "
			      "capabilities from");
	if (!shim || (strcmp(shim, "vulkan") && strcmp(shim, "metal")))
		return refuse("ablate.shim", "must be \"vulkan\" or \"metal\"");
	if (json_type(variants) != JSON_ARRAY)
		return error("plan: 'variants' must be a non-empty array");
	allv = json_get(ab, "all");
	if (allv && !json_is_bool(allv))
		return refuse("ablate.all", "must be true or false");
	all = !allv || json_bool(allv) == 1;
	if (check_from(find_variant(variants, from), from, shim, &family) < 0)
		return -1;
	if (!strcmp(shim, "vulkan"))
		rc = vk_expand(variants, find_variant(variants, from), from, ab,
			       all);
	else
		rc = metal_expand(variants, find_variant(variants, from), from,
				  ab, all, family);
	if (rc < 0)
		return -1;
	json_remove(root, "ablate");
	return 0;
}

static int
vk_expand(struct json *variants, const struct json *from, const char *base,
	  const struct json *ab, int all)
{
	struct json *copy = json_dup(from);
	struct cut c = { 0, 0, 0 };
	unsigned bits;
	size_t n, i;
	char *name;
	int rc = 0;

	if (json_get(ab, "family") || json_get(ab, "threadgroup_memory")) {
		json_free(copy);
		return error("plan: 'ablate.family' and "
			     "'ablate.threadgroup_memory' are the Metal shim's; "
			     "the Vulkan shim takes 'hide'");
	}
	if (read_hide(json_get(ab, "hide"), &bits, &n) < 0) {
		json_free(copy);
		return -1;
	}
	for (i = 0; rc == 0 && i < NVK; i++) {
		if (!(bits & (1u << i)))
			continue;
		c.hide = 1u << i;
		name = xstrfmt("%s-hide-%s", base, vk_caps[i].name);
		rc = add_variant(variants, cut_variant(copy, "vulkan", name,
						       &c, 0));
		free(name);
	}
	if (rc == 0 && all && n > 1) {
		c.hide = bits;
		name = xstrfmt("%s-hide-all", base);
		rc = add_variant(variants, cut_variant(copy, "vulkan", name, &c,
						       0));
		free(name);
	}
	json_free(copy);
	return rc;
}

static int
metal_expand(struct json *variants, const struct json *from, const char *base,
	     const struct json *ab, int all, long from_family)
{
	struct json *copy = json_dup(from);
	long *fam = NULL, *tg = NULL;
	size_t nf = 0, nt = 0, i;
	struct cut c = { 0, 0, 0 };
	char *name;
	int rc = -1;

	if (json_get(ab, "hide")) {
		error("plan: 'ablate.hide' is the Vulkan shim's; the Metal shim "
		      "takes 'family' and 'threadgroup_memory'");
		goto cleanup;
	}
	if (read_values(json_get(ab, "family"), "family", 1001, 1999, &fam,
			&nf) < 0 ||
	    read_values(json_get(ab, "threadgroup_memory"),
			"threadgroup_memory", 1, 4294967295L, &tg, &nt) < 0)
		goto cleanup;
	if (!nf && !nt) {
		error("plan: 'ablate' for the Metal shim needs 'family' or "
		      "'threadgroup_memory' (the values to lower it to)");
		goto cleanup;
	}
	for (i = 0; i < nf; i++)
		if (fam[i] >= from_family) {
			error("plan: 'ablate.family[%zu]' is %ld, not below the "
			      "%ld variant '%s' configures (the ablation "
			      "lowers)", i, fam[i], from_family, base);
			goto cleanup;
		}
	rc = 0;
	for (i = 0; rc == 0 && i < nf; i++) {
		c.family = fam[i];
		name = xstrfmt("%s-family-%ld", base, fam[i]);
		rc = add_variant(variants, cut_variant(copy, "metal", name, &c,
						       from_family));
		free(name);
	}
	c.family = 0;
	for (i = 0; rc == 0 && i < nt; i++) {
		c.tgmem = tg[i];
		name = xstrfmt("%s-tgmem-%ld", base, tg[i]);
		rc = add_variant(variants, cut_variant(copy, "metal", name, &c,
						       from_family));
		free(name);
	}
	if (rc == 0 && all && nf + nt > 1) {
		c.family = c.tgmem = 0;
		for (i = 0; i < nf; i++)
			if (!c.family || fam[i] < c.family)
				c.family = fam[i];
		for (i = 0; i < nt; i++)
			if (!c.tgmem || tg[i] < c.tgmem)
				c.tgmem = tg[i];
		name = xstrfmt("%s-lowest", base);
		rc = add_variant(variants, cut_variant(copy, "metal", name, &c,
						       from_family));
		free(name);
	}
cleanup:
	free(fam);
	free(tg);
	json_free(copy);
	return rc;
}
