#define _POSIX_C_SOURCE 200809L
#include "models/manifest.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
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

static char *
opt_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring ?
		xstrdup(v->valuestring) : NULL;
}

/* Integer field: -1 when absent or null; -2 when not a whole number. */
static int64_t
opt_int(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double d;

	if (!v || cJSON_IsNull(v))
		return -1;
	if (!cJSON_IsNumber(v))
		return -2;
	d = v->valuedouble;
	if (d < 0 || d > 9007199254740992.0 || d != (double)(int64_t)d)
		return -2;
	return (int64_t)d;
}

static int
load_model(const char *path, size_t idx, const cJSON *o,
	   struct manifest_model *mm)
{
	const cJSON *synth = cJSON_GetObjectItemCaseSensitive(o, "synth");
	char *p;

	memset(mm, 0, sizeof(*mm));
	if (!cJSON_IsObject(o))
		return error("'%s': models[%zu] is not an object", path, idx);
	mm->name = opt_str(o, "name");
	mm->label = opt_str(o, "label");
	mm->file = opt_str(o, "file");
	mm->path = opt_str(o, "path");
	mm->sha256 = opt_str(o, "sha256");
	mm->repository = opt_str(o, "repository");
	mm->revision = opt_str(o, "revision");
	mm->url = opt_str(o, "url");
	mm->size = opt_int(o, "size");
	mm->model_size = opt_int(o, "model_size");
	mm->n_params = opt_int(o, "n_params");
	mm->synth_seed = -1;
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
	if (mm->size == -2 || mm->model_size == -2 || mm->n_params == -2)
		return error("'%s': model '%s': size, model_size and n_params "
			     "must be whole numbers", path, mm->name);
	if (synth) {
		if (!cJSON_IsObject(synth))
			return error("'%s': model '%s': synth must be an "
				     "object", path, mm->name);
		mm->synth_shape = opt_str(synth, "shape");
		mm->synth_type = opt_str(synth, "type");
		mm->synth_seed = opt_int(synth, "seed");
		if (!mm->synth_shape || !mm->synth_type || mm->synth_seed < 0)
			return error("'%s': model '%s': synth needs shape, "
				     "type and seed", path, mm->name);
	}
	return 0;
}

int
manifest_load(const char *path, struct manifest *m)
{
	struct buf text = BUF_INIT;
	cJSON *root = NULL;
	const cJSON *models, *o;
	size_t i = 0, j;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	if (!path)
		path = manifest_default_path();
	m->path = xstrdup(path);
	if (buf_read_file(&text, path) < 0)
		goto cleanup;
	root = cJSON_ParseWithLength(text.buf, text.len);
	if (!root) {
		error("'%s' is not valid JSON", path);
		goto cleanup;
	}
	models = cJSON_GetObjectItemCaseSensitive(root, "models");
	if (!cJSON_IsArray(models)) {
		error("'%s' has no \"models\" array", path);
		goto cleanup;
	}
	m->models = xcalloc((size_t)cJSON_GetArraySize(models) + 1,
			    sizeof(*m->models));
	cJSON_ArrayForEach(o, models) {
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
	cJSON_Delete(root);
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

static int
hex_equal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

const struct manifest_model *
manifest_find_sha256(const struct manifest *m, const char *sha256)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->models[i].sha256 &&
		    hex_equal(m->models[i].sha256, sha256))
			return &m->models[i];
	return NULL;
}

const struct manifest_model *
manifest_find_file(const struct manifest *m, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < m->n; i++)
		if (m->models[i].file && !strcmp(m->models[i].file, base))
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
