/*
 * The models verify engine: every outcome of a model against its
 * manifest entry, in the order the checks run, and the hash cache.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "evidence/modelverify.h"
#include "models/gguf.h"
#include "models/hash.h"
#include "models/manifest.h"
#include "models/synth.h"
#include "base/files.h"
#include "base/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char path_buf[4][256];

static const char *
path_of(const char *name)
{
	static int k;

	k = (k + 1) % 4;
	snprintf(path_buf[k], sizeof(path_buf[k]), "%s/%s", dir, name);
	return path_buf[k];
}

static char synth_sha[65];
static uint64_t synth_bytes, synth_np, synth_ms;

/*
 * The directory: good.bin and changed.bin (same size, other bytes),
 * tiny.gguf (a synthetic model, for the GGUF facts), and a manifest of
 * one entry per outcome.
 */
static void
setup(void)
{
	const struct synth_shape *sh = synth_shape_find("tiny");
	char good[65], ff[65];
	struct buf man = BUF_INIT;
	struct stat st;

	CHECK(write_file_atomic(path_of("good.bin"), "hello model\n", 12) == 0);
	CHECK(write_file_atomic(path_of("changed.bin"), "hello MODEL\n", 12) == 0);
	hash_buf_sha256("hello model\n", 12, good);
	memset(ff, 'f', 64);
	ff[64] = '\0';
	CHECK(sh && synth_write(path_of("tiny.gguf"), sh, GGML_F16, 0, 0) == 0);
	CHECK(hash_file_sha256(path_of("tiny.gguf"), synth_sha) == 0);
	CHECK(stat(path_of("tiny.gguf"), &st) == 0);
	synth_bytes = (uint64_t)st.st_size;
	synth_expect(sh, GGML_F16, &synth_np, &synth_ms);
	buf_addf(&man, "{\"version\": 1, \"models\": [\n"
		 "{\"name\": \"good\", \"file\": \"good.bin\", \"size\": 12, "
		 "\"sha256\": \"%s\"},\n"
		 "{\"name\": \"changed\", \"file\": \"changed.bin\", "
		 "\"sha256\": \"%s\"},\n"
		 "{\"name\": \"wrong-size\", \"file\": \"good.bin\", "
		 "\"size\": 13, \"sha256\": \"%s\"},\n"
		 "{\"name\": \"no-hash\", \"file\": \"good.bin\"},\n"
		 "{\"name\": \"gone\", \"file\": \"gone.bin\", "
		 "\"sha256\": \"%s\"},\n"
		 "{\"name\": \"tiny\", \"file\": \"tiny.gguf\", "
		 "\"model_size\": %llu, \"n_params\": %llu, "
		 "\"sha256\": \"%s\"},\n"
		 "{\"name\": \"tiny-facts\", \"file\": \"tiny.gguf\", "
		 "\"n_params\": %llu, \"sha256\": \"%s\"}\n"
		 "]}\n", good, good, good, ff,
		 (unsigned long long)synth_ms, (unsigned long long)synth_np,
		 synth_sha, (unsigned long long)synth_np + 1, synth_sha);
	CHECK(write_file_atomic(path_of("manifest.json"), man.buf,
				man.len) == 0);
	buf_release(&man);
}

static const struct model_check *
find(const struct model_checks *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].model->name, name))
			return &c->v[i];
	return NULL;
}

/* Every model of the manifest: each outcome once. */
static void
test_every_outcome(void)
{
	static const struct {
		const char *name;
		enum model_state state;
		int hashed;
	} want[] = {
		{ "good", MODEL_OK, 1 },
		{ "changed", MODEL_MISMATCH, 1 },       /* SHA-256 */
		{ "wrong-size", MODEL_MISMATCH, 0 },    /* before reading */
		{ "no-hash", MODEL_FACTS_OK, 0 },
		{ "gone", MODEL_ABSENT, 0 },            /* not named */
		{ "tiny", MODEL_OK, 1 },
		{ "tiny-facts", MODEL_MISMATCH, 0 },    /* GGUF facts */
	};
	struct model_verify_opts o = { 0 };
	struct model_checks c;
	struct manifest m;
	size_t i;

	o.dir = dir;
	CHECK(manifest_load(path_of("manifest.json"), &m) == 0);
	error_silent++;
	CHECK(model_verify(&m, NULL, 0, &o, &c) == MODEL_VERIFY_FAILED);
	error_silent--;
	CHECK(c.n == ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want) && i < c.n; i++) {
		const struct model_check *k = &c.v[i];

		CHECK_STR(k->model->name, want[i].name);   /* manifest order */
		if (k->state != want[i].state || k->hashed != want[i].hashed)
			printf("  model '%s': state %d hashed %d\n",
			       want[i].name, (int)k->state, k->hashed);
		CHECK(k->state == want[i].state);
		CHECK(k->hashed == want[i].hashed);
	}
	CHECK(find(&c, "tiny") && find(&c, "tiny")->job.bytes == synth_bytes);
	CHECK(find(&c, "changed") &&
	      !strcmp(find(&c, "changed")->path, path_of("changed.bin")));
	model_checks_release(&c);
	CHECK(c.n == 0 && c.v == NULL);
	manifest_free(&m);
}

/* Named models: in the names' order; a named model not there fails. */
static void
test_named(void)
{
	const char *ok[] = { "tiny", "good", "no-hash" };
	const char *gone[] = { "good", "gone" };
	const char *unknown[] = { "good", "nosuch" };
	struct model_verify_opts o = { 0 };
	struct model_checks c;
	struct manifest m;

	o.dir = dir;
	CHECK(manifest_load(path_of("manifest.json"), &m) == 0);
	CHECK(model_verify(&m, ok, 3, &o, &c) == 0);
	CHECK(c.n == 3);
	CHECK(c.n == 3 && !strcmp(c.v[0].model->name, "tiny") &&
	      !strcmp(c.v[1].model->name, "good") &&
	      c.v[2].state == MODEL_FACTS_OK);
	model_checks_release(&c);

	error_silent++;
	CHECK(model_verify(&m, gone, 2, &o, &c) == MODEL_VERIFY_FAILED);
	CHECK(strstr(error_last(), "gone.bin") != NULL);
	CHECK(c.n == 2 && c.v[0].state == MODEL_OK &&
	      c.v[1].state == MODEL_MISSING);
	model_checks_release(&c);

	CHECK(model_verify(&m, unknown, 2, &o, &c) == MODEL_VERIFY_UNKNOWN);
	CHECK(strstr(error_last(), "no model named 'nosuch'") != NULL);
	CHECK(c.n == 1 && !c.v[0].hashed);   /* nothing was checked */
	model_checks_release(&c);
	error_silent--;
	manifest_free(&m);
}

/*
 * Through the hash cache: the second run answers from it; --rehash
 * reads again; a file edited in place is read again and fails.
 */
static void
test_cache(void)
{
	const char *names[] = { "good" };
	struct model_verify_opts o = { 0 };
	struct model_checks c;
	struct manifest m;
	struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	o.dir = dir;
	o.db_path = path_of("cache.db");
	/* old enough to be cached (hash.h, HASH_RACY_NS) */
	CHECK(utimensat(AT_FDCWD, path_of("good.bin"), t, 0) == 0);
	CHECK(manifest_load(path_of("manifest.json"), &m) == 0);
	CHECK(model_verify(&m, names, 1, &o, &c) == 0);
	CHECK(c.n == 1 && c.v[0].hashed && !c.v[0].job.cached &&
	      c.v[0].job.cacheable);
	model_checks_release(&c);
	CHECK(model_verify(&m, names, 1, &o, &c) == 0);
	CHECK(c.n == 1 && c.v[0].job.cached && c.v[0].state == MODEL_OK);
	model_checks_release(&c);
	o.rehash = 1;
	CHECK(model_verify(&m, names, 1, &o, &c) == 0);
	CHECK(c.n == 1 && !c.v[0].job.cached && c.v[0].job.bytes == 12);
	model_checks_release(&c);
	o.rehash = 0;
	CHECK(write_file_atomic(path_of("good.bin"), "hello MODEL\n", 12) == 0);
	CHECK(utimensat(AT_FDCWD, path_of("good.bin"), t, 0) == 0);
	error_silent++;
	CHECK(model_verify(&m, names, 1, &o, &c) == MODEL_VERIFY_FAILED);
	error_silent--;
	CHECK(c.n == 1 && !c.v[0].job.cached &&
	      c.v[0].state == MODEL_MISMATCH);
	model_checks_release(&c);
	manifest_free(&m);
}

static void
test_zz_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static const struct test_case tests[] = {
	{ "setup: files, a synthetic model, a manifest", setup },
	{ "every model: each outcome in manifest order", test_every_outcome },
	{ "named models: order, missing, unknown name", test_named },
	{ "through the hash cache: hit, rehash, edit", test_cache },
	{ "cleanup", test_zz_cleanup },
};

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/shimbench-modelverify-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	return test_main(tests, ARRAY_SIZE(tests));
}
