/* The fixed evidence directory of the bundle.json and mapping targets. */
#define _GNU_SOURCE
#include "evidence-dir.h"
#include "models/hash.h"
#include "base/files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char row[] =
	"{\"build_commit\": \"80fb11a\", \"build_number\": 10400, \"cpu_info\": "
	"\"Intel(R) Xeon(R) CPU\", \"gpu_info\": \"\", \"backends\": \"CPU\", "
	"\"model_filename\": \"models/tiny.gguf\", \"model_type\": \"llama 1B "
	"Q4_K - Medium\", \"model_size\": 667078656, \"model_n_params\": "
	"1100048384, \"n_batch\": 2048, \"n_ubatch\": 512, \"n_threads\": 8, "
	"\"n_gpu_layers\": -1, \"flash_attn\": 0, \"n_depth\": 0, \"test_time\": "
	"\"2026-08-09T18:16:13Z\", \"n_prompt\": 64, \"n_gen\": 0, \"avg_ns\": "
	"29955640, \"stddev_ns\": 12345, \"avg_ts\": 2136.988, \"stddev_ts\": "
	"1.5, \"samples_ns\": [30571506, 29455899, 30430162], \"samples_ts\": "
	"[2093.45, 2172.74, 2103.18]}\n";
static const char mlx[] =
	"{\"schema_version\": 1, \"configuration\": {\"prompt_tokens\": 512, "
	"\"generation_tokens\": 128, \"repeats\": 2}, \"samples\": ["
	"{\"prompt_tokens\": 512, \"prompt_tps\": 1636.7, \"generation_tokens\": "
	"128, \"generation_tps\": 172.4}, {\"prompt_tokens\": 512, "
	"\"prompt_tps\": 1640.1, \"generation_tokens\": 128, "
	"\"generation_tps\": 171.9}]}\n";
static const char err[] =
	"ggml_metal_init: GPU family: MTLGPUFamilyApple9\n"
	"ggml_metal_init: simdgroup matrix mul. = true\n"
	"[LumeMetalCapabilities] Enabled for pid 42\n";
static const char probe[] =
	"{\"supportsFamily\": {\"1009\": true}, \"shim\": {\"status\": "
	"\"installed\"}}\n";

static const struct {
	const char *name, *text;
} files[] = {
	{ "out.jsonl", row },
	{ "out.stderr", err },
	{ "mlx.json", mlx },
	{ "runs/001-plain-tiny.jsonl", row },
	{ "runs/001-plain-tiny.stderr", err },
	{ "runs/probe-shim.out", probe },
};

static char dir[64];

/* Plain writes: the fuzzer rewrites these files on every input. */
static void
put(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
remove_dir(void)
{
	size_t i;
	char *p;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = xstrfmt("%s/%s", dir, files[i].name);
		unlink(p);
		free(p);
	}
	p = xstrfmt("%s/runs", dir);
	rmdir(p);
	free(p);
	p = xstrfmt("%s/bundle.json", dir);
	unlink(p);
	free(p);
	p = xstrfmt("%s/SHA256SUMS", dir);
	unlink(p);
	free(p);
	p = xstrfmt("%s.mapping.json", dir);
	unlink(p);
	free(p);
	rmdir(dir);
}

const char *
evidence_dir(void)
{
	size_t i;

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "/tmp/shimbench-fuzz-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = xstrfmt("%s/%s", dir, files[i].name);
		char *slash = strrchr(p, '/');

		*slash = '\0';
		if (mkdir_p(p) < 0)
			exit(1);
		*slash = '/';
		put(p, files[i].text, strlen(files[i].text));
		free(p);
	}
	atexit(remove_dir);
	return dir;
}

void
evidence_sums(const char *bundle_json, size_t len)
{
	struct buf b = BUF_INIT;
	char hex[65], *p;
	size_t i;

	evidence_dir();
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		hash_buf_sha256(files[i].text, strlen(files[i].text), hex);
		buf_addf(&b, "%s  %s\n", hex, files[i].name);
	}
	if (bundle_json) {
		p = xstrfmt("%s/bundle.json", dir);
		put(p, bundle_json, len);
		free(p);
		hash_buf_sha256(bundle_json, len, hex);
		buf_addf(&b, "%s  bundle.json\n", hex);
	}
	p = xstrfmt("%s/SHA256SUMS", dir);
	put(p, b.buf, b.len);
	free(p);
	buf_release(&b);
}

const char *
evidence_mapping(void)
{
	static char *mapping;

	if (!mapping)
		mapping = xstrfmt("%s.mapping.json", evidence_dir());
	return mapping;
}

void
evidence_put_mapping(const char *data, size_t len)
{
	put(evidence_mapping(), data, len);
}
