#define _POSIX_C_SOURCE 200809L
#include "models/manifest.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/json.h"
#include "base/util.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
manifest_default_path(void)
{
	static char *found;
	const char *p = getenv("SHIMBENCH_MANIFEST");

	if (p && *p)
		return p;
	/* ./models, beside build/shimbench, or the installed copy */
	if (!found)
		found = tool_data_path("models/manifest.json");
	return found;
}

/* Whole numbers a double holds exactly: sizes, counts, seeds. */
#define WHOLE_MAX 9007199254740992.0

#define MM(member) offsetof(struct manifest_model, member)
/* Keys not listed (comment, synth's quantize, …) are allowed. */
static const struct json_field model_fields[] = {
	{ "name", JK_STR, MM(name), JF_NULLABLE, 0, 0 },
	{ "label", JK_STR, MM(label), JF_NULLABLE, 0, 0 },
	{ "file", JK_STR, MM(file), JF_NULLABLE, 0, 0 },
	{ "path", JK_STR, MM(path), JF_NULLABLE, 0, 0 },
	{ "sha256", JK_STR, MM(sha256), JF_NULLABLE, 0, 0 },
	{ "repository", JK_STR, MM(repository), JF_NULLABLE, 0, 0 },
	{ "revision", JK_STR, MM(revision), JF_NULLABLE, 0, 0 },
	{ "url", JK_STR, MM(url), JF_NULLABLE, 0, 0 },
	{ "size", JK_I64, MM(size), JF_NULLABLE, 0, WHOLE_MAX },
	{ "model_size", JK_I64, MM(model_size), JF_NULLABLE, 0, WHOLE_MAX },
	{ "n_params", JK_I64, MM(n_params), JF_NULLABLE, 0, WHOLE_MAX },
};
static const struct json_field synth_fields[] = {
	{ "shape", JK_STR, MM(synth_shape), JF_REQUIRED, 0, 0 },
	{ "type", JK_STR, MM(synth_type), JF_REQUIRED, 0, 0 },
	{ "seed", JK_I64, MM(synth_seed), JF_REQUIRED, 0, WHOLE_MAX },
};

static int
load_model(const char *path, size_t idx, const struct json *o,
	   struct manifest_model *mm)
{
	const struct json *synth = json_get(o, "synth");
	char where[64], *at, *p;
	int ret;

	memset(mm, 0, sizeof(*mm));
	mm->size = mm->model_size = mm->n_params = -1;
	mm->synth_seed = -1;
	snprintf(where, sizeof(where), "models[%zu]", idx);
	at = xstrfmt("'%s': %s", path, where);
	ret = json_read_object(o, model_fields, ARRAY_SIZE(model_fields), mm,
			       at, 1);
	free(at);
	if (ret < 0)
		return -1;
	if (!mm->name || !*mm->name)
		return error("'%s': models[%zu] has no name", path, idx);
	if (!mm->file && !mm->path)
		return error("'%s': model '%s' has neither file nor path",
			     path, mm->name);
	if (mm->file && strchr(mm->file, '/'))
		return error("'%s': model '%s': file '%s' must be a bare "
			     "file name (use path for a path)", path,
			     mm->name, mm->file);
	if (mm->sha256) {
		if (!hash_is_sha256_hex(mm->sha256))
			return error("'%s': model '%s': sha256 '%s' is not "
				     "64 hex digits", path, mm->name,
				     mm->sha256);
		for (p = mm->sha256; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	}
	if (mm->revision && (strlen(mm->revision) != 40 ||
			     strspn(mm->revision, "0123456789abcdef") != 40))
		return error("'%s': model '%s': revision '%s' is not a pinned "
			     "commit (40 lowercase hex digits)", path, mm->name,
			     mm->revision);
	if (mm->repository && (!strchr(mm->repository, '/') ||
			       strstr(mm->repository, "..") ||
			       strspn(mm->repository, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "abcdefghijklmnopqrstuvwxyz0123456789"
				      "-_./") != strlen(mm->repository)))
		return error("'%s': model '%s': repository '%s' is not "
			     "\"owner/name\"", path, mm->name, mm->repository);
	if (synth) {
		if (json_type(synth) != JSON_OBJECT)
			return error("'%s': model '%s': synth must be an "
				     "object", path, mm->name);
		at = xstrfmt("'%s': model '%s': synth", path, mm->name);
		ret = json_read_object(synth, synth_fields,
				       ARRAY_SIZE(synth_fields), mm, at, 1);
		free(at);
		if (ret < 0)
			return -1;
	}
	return 0;
}

int
manifest_load(const char *path, struct manifest *m)
{
	struct buf text = BUF_INIT;
	struct json *root = NULL;
	const struct json *models, *o;
	size_t i = 0, j;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	if (!path)
		path = manifest_default_path();
	m->path = xstrdup(path);
	if (buf_read_file(&text, path) < 0)
		goto cleanup;
	root = json_parse(text.buf, text.len, path);
	if (!root)
		goto cleanup;
	models = json_get(root, "models");
	if (json_type(models) != JSON_ARRAY) {
		error("'%s' has no \"models\" array", path);
		goto cleanup;
	}
	m->models = xcalloc(json_size(models) + 1, sizeof(*m->models));
	JSON_FOR_EACH(o, models) {
		m->n = i + 1;
		if (load_model(path, i, o, &m->models[i]) < 0)
			goto cleanup;
		for (j = 0; j < i; j++)
			if (!strcmp(m->models[j].name, m->models[i].name)) {
				error("'%s': model name '%s' appears twice",
				      path, m->models[i].name);
				goto cleanup;
			}
		i++;
	}
	ret = 0;
cleanup:
	json_free(root);
	buf_release(&text);
	if (ret < 0)
		manifest_free(m);
	return ret;
}

void
manifest_free(struct manifest *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		struct manifest_model *mm = &m->models[i];
		free(mm->name);
		free(mm->label);
		free(mm->file);
		free(mm->path);
		free(mm->sha256);
		free(mm->repository);
		free(mm->revision);
		free(mm->url);
		free(mm->synth_shape);
		free(mm->synth_type);
	}
	free(m->models);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

const struct manifest_model *
manifest_find(const struct manifest *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->models[i].name, name))
			return &m->models[i];
	return NULL;
}

char *
manifest_model_path(const struct manifest_model *mm, const char *dir)
{
	if (mm->path)
		return xstrdup(mm->path);
	return xstrfmt("%s/%s", dir ? dir : "models", mm->file);
}

char *
manifest_model_url(const struct manifest_model *mm, const char *base)
{
	const char *path;
	size_t n;

	if (mm->url) {
		if (!base || !*base)
			return xstrdup(mm->url);
		/* keep the path: scheme://host/PATH */
		path = strstr(mm->url, "://");
		path = path ? strchr(path + 3, '/') : NULL;
		if (!path)
			path = "";
	} else if (mm->repository && mm->revision && mm->file) {
		path = NULL;
	} else {
		return NULL;
	}
	if (!base || !*base)
		base = MANIFEST_DEFAULT_BASE_URL;
	n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	if (path)
		return xstrfmt("%.*s%s", (int)n, base, path);
	return xstrfmt("%.*s/%s/resolve/%s/%s", (int)n, base, mm->repository,
		       mm->revision, mm->file);
}
