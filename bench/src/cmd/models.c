#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "models/fetch.h"
#include "models/gguf.h"
#include "models/hash.h"
#include "evidence/hashcache.h"
#include "evidence/modelverify.h"
#include "models/manifest.h"
#include "base/proc.h"
#include "evidence/store.h"
#include "models/synth.h"
#include "run/tools.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Five subcommands, each its own entry with its own option table, so
 * `shimbench models SUB --help` shows exactly the options SUB parses.
 */
static int models_fetch(int argc, char **argv, struct cmd_ctx *ctx);
static int models_info(int argc, char **argv, struct cmd_ctx *ctx);
static int models_synth(int argc, char **argv, struct cmd_ctx *ctx);
static int models_verify(int argc, char **argv, struct cmd_ctx *ctx);
static int models_hash(int argc, char **argv, struct cmd_ctx *ctx);

/* Every whole number up to 2^53 - 1 is exact in the double of a range. */
#define MAX_EXACT 9007199254740991.0

struct info_opts {
	int json, tensors;
};

static const struct opt info_opts[] = {
	OPT_F("json", 0, struct info_opts, json, "one JSON object"),
	OPT_F("tensors", 0, struct info_opts, tensors,
	      "also list every tensor: name, type, shape, bytes (not with "
	      "--json)"),
	OPT_END
};

static const struct command cmd_models_info = {
	.name = "models info",
	.fn = models_info,
	.summary = "GGUF header facts",
	.synopsis = "[--json] [--tensors] FILE",
	.description =
		"GGUF header facts: version, counts, every metadata key,\n"
		"architecture, file type, and the parameter count and\n"
		"tensor-data size llama-bench reports (model_n_params,\n"
		"model_size). Reads only the header and tensor infos.\n",
	.opts = info_opts,
	.epilogue =
		"Exit: 0, or 2 when FILE is not a valid GGUF file (the error\n"
		"names the byte offset).\n",
	.min_args = 1,
	.max_args = 1,
};

struct synth_opts {
	const char *output, *type, *quantize;
	long seed;
	int list;
};

#define SO struct synth_opts
static const struct opt synth_opts[] = {
	OPT_S("output", 'o', SO, output, "FILE", "where to write the model"),
	OPT_C("type", 0, SO, type, "T", "f32|f16|q8_0",
	      "f32, f16 or q8_0: the tensor type of the weights (default "
	      "f16; other types through --quantize)"),
	OPT_I("seed", 0, SO, seed, "N", 0, MAX_EXACT,
	      "PRNG seed (default 0)"),
	OPT_S("quantize", 0, SO, quantize, "TYPE",
	      "then llama-quantize to TYPE (Q4_K_M, Q4_0, ...; found as "
	      "$LLAMA_QUANTIZE, on PATH, or .llama/bin/llama-quantize from "
	      "'make llama-bench')"),
	OPT_F("list", 0, SO, list, "list the shapes"),
	OPT_END
};

static const struct command cmd_models_synth = {
	.name = "models synth",
	.fn = models_synth,
	.summary = "a deterministic synthetic model of a known shape",
	.synopsis = "SHAPE -o FILE [--type f32|f16|q8_0]\n"
		"                              [--seed N] [--quantize TYPE]\n"
		"       shimbench models synth --list",
	.description =
		"Writes a deterministic synthetic model of a known shape\n"
		"(same bytes on every machine); --quantize runs llama-quantize\n"
		"on it (Q4_K_M, Q4_0, ...). Shapes: see --list.\n",
	.opts = synth_opts,
	.max_args = 1,
};

struct verify_opts {
	const char *dir, *manifest;
	int rehash, verbose;
};

#define VO struct verify_opts
static const struct opt verify_opts[] = {
	OPT_S("dir", 0, VO, dir, "DIR",
	      "where model files are (default models)"),
	OPT_S("manifest", 0, VO, manifest, "PATH",
	      "the manifest (default $SHIMBENCH_MANIFEST or "
	      "models/manifest.json)"),
	OPT_F("rehash", 0, VO, rehash,
	      "read every file again, ignoring the cache"),
	OPT_F("verbose", 0, VO, verbose,
	      "say on stderr whether each answer came from the cache"),
	OPT_END
};

static const struct command cmd_models_verify = {
	.name = "models verify",
	.fn = models_verify,
	.summary = "check model files against models/manifest.json",
	.synopsis = "[--dir DIR] [--manifest PATH]\n"
		"                               [--rehash] [--verbose] [NAME...]",
	.description =
		"Checks model files (every model of the manifest, or the NAMEs)\n"
		"against models/manifest.json: size, GGUF model_size and\n"
		"parameter count, and SHA-256 (through the hash cache). Prints\n"
		"one line per model: ok, facts ok (the manifest pins no hash),\n"
		"MISMATCH, absent, or MISSING for a named model without its file.\n",
	.opts = verify_opts,
	.epilogue =
		"Exit: 0 all present files match, 1 a mismatch or a missing named\n"
		"model, 2 an unknown NAME or a bad manifest.\n",
	.max_args = -1,
};

struct hash_opts {
	long jobs;
	int rehash, no_cache, verbose;
};

#define HO struct hash_opts
static const struct opt hash_opts[] = {
	OPT_F("rehash", 0, HO, rehash,
	      "read every file again, ignoring the cache"),
	OPT_F("no-cache", 0, HO, no_cache, "do not use the store at all"),
	OPT_F("verbose", 0, HO, verbose,
	      "say on stderr whether each answer came from the cache"),
	OPT_I("jobs", 'j', HO, jobs, "N", 1, 1024,
	      "files hashed in parallel (default: the CPUs it may use)"),
	OPT_END
};

static const struct command cmd_models_hash = {
	.name = "models hash",
	.fn = models_hash,
	.summary = "sha256sum through the store's hash cache",
	.synopsis = "[--rehash] [--no-cache] [--verbose]\n"
		"                             [-j N] FILE...",
	.description =
		"Prints 'sha256  path' lines like sha256sum, through the\n"
		"store's hash cache (--db): an unchanged file costs one stat.\n",
	.opts = hash_opts,
	.epilogue =
		"Exit: 0, or 2 when a file cannot be read (the others are still\n"
		"printed).\n",
	.min_args = 1,
	.max_args = -1,
};

struct fetch_cli {
	const char *dir, *manifest, *url;
	long retries;
	int print_url;
};

#define FO struct fetch_cli
static const struct opt fetch_opts[] = {
	OPT_S("dir", 0, FO, dir, "DIR",
	      "where model files go (default models)"),
	OPT_S("manifest", 0, FO, manifest, "PATH",
	      "the manifest (default $SHIMBENCH_MANIFEST or "
	      "models/manifest.json)"),
	OPT_S("url", 0, FO, url, "BASE",
	      "download from BASE instead of https://huggingface.co (same "
	      "paths: BASE/REPOSITORY/resolve/REVISION/FILE; default "
	      "$SHIMBENCH_MODELS_URL)"),
	OPT_I("retries", 0, FO, retries, "N", 0, 100,
	      "resume a cut transfer up to N more times (default 3)"),
	OPT_F("print-url", 0, FO, print_url,
	      "print each model's URL and download nothing"),
	OPT_END
};
#undef FO

static const struct command cmd_models_fetch = {
	.name = "models fetch",
	.fn = models_fetch,
	.summary = "download a manifest model, resumable, SHA-256 verified",
	.synopsis = "[--dir DIR] [--manifest PATH] [--url BASE]\n"
		"                              [--retries N] [--print-url] NAME...",
	.description =
		"Downloads each named model of the manifest from its pinned source\n"
		"(Hugging Face: https://huggingface.co/REPOSITORY/resolve/REVISION/FILE)\n"
		"with curl into DIR/FILE.part, resuming what an earlier attempt left\n"
		"there (an HTTP Range request) and a transfer cut short, with a\n"
		"progress line on a terminal. The file's size and SHA-256 are checked\n"
		"against the manifest before it is renamed to DIR/FILE, so DIR/FILE\n"
		"is either absent or verified; a download that does not verify is\n"
		"deleted. A file already in place is hashed, not downloaded again.\n",
	.opts = fetch_opts,
	.epilogue =
		"Exit: 0 every model in place and verified; 1 a size or SHA-256\n"
		"mismatch; 2 an unknown NAME, a model without a source or a pinned\n"
		"SHA-256, a bad manifest; 3 curl missing or failed (the .part is\n"
		"kept for the next attempt).\n",
	.min_args = 1,
	.max_args = -1,
};

static const struct command *const models_subs[] = {
	&cmd_models_fetch,
	&cmd_models_info,
	&cmd_models_synth,
	&cmd_models_verify,
	&cmd_models_hash,
	NULL,
};

const struct command cmd_models = {
	.name = "models",
	.fn = cmd_dispatch,
	.summary = "download, GGUF facts, synthetic models, verification, hashing",
	.description =
		"Model files: the manifest's real models downloaded and verified,\n"
		"facts from their GGUF header, synthetic models of a known shape,\n"
		"verification against models/manifest.json, and SHA-256 through\n"
		"the store's hash cache.\n",
	.max_args = -1,
	.subs = models_subs,
};

static const char *
ftype_label(const struct gguf_file *g)
{
	int64_t ft;
	const char *n;

	if (gguf_get_int(g, "general.file_type", &ft) < 0)
		return NULL;
	n = gguf_file_type_name(ft);
	return n ? n : "unknown";
}

static void
print_kv_value(const struct gguf_kv *kv, struct buf *b)
{
	switch (kv->type) {
	case GGUF_STRING:
		json_quote(b, kv->str);
		if (kv->str_len > strlen(kv->str))
			buf_addf(b, " (%" PRIu64 " bytes, shortened)",
				 kv->str_len);
		break;
	case GGUF_ARRAY:
		buf_addf(b, "[%s x %" PRIu64 "]", gguf_vtype_name(kv->arr_type),
			 kv->arr_n);
		break;
	case GGUF_F32: case GGUF_F64:
		buf_addf(b, "%.9g", kv->f);
		break;
	case GGUF_BOOL:
		buf_adds(b, kv->u ? "true" : "false");
		break;
	case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64:
		buf_addf(b, "%" PRId64, kv->i);
		break;
	default:
		buf_addf(b, "%" PRIu64, kv->u);
	}
}

/* Tensor counts by ggml type (64 of them), in type order. */
static void
type_counts(const struct gguf_file *g, uint64_t count[64])
{
	uint64_t i;

	memset(count, 0, 64 * sizeof(*count));
	for (i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].type >= 0 && g->tensors[i].type < 64)
			count[g->tensors[i].type]++;
}

/* Tensor counts by ggml type, in type order, as "Q4_K 133, F32 45". */
static void
type_histogram(const struct gguf_file *g, struct buf *b)
{
	uint64_t count[64];
	int t, first = 1;

	type_counts(g, count);
	for (t = 0; t < 64; t++) {
		if (!count[t])
			continue;
		buf_addf(b, "%s%s %" PRIu64, first ? "" : ", ",
			 ggml_type_name(t), count[t]);
		first = 0;
	}
}

/*
 * A metadata value as JSON: strings (the kept part) and numbers as such,
 * an F32 at the shortest text that reads back as the same float, a
 * number that is not finite as null.
 */
static void
json_kv_value(struct jw *w, const struct gguf_kv *kv)
{
	char tmp[32];
	int prec;

	switch (kv->type) {
	case GGUF_STRING:
		jw_str(w, kv->str);
		break;
	case GGUF_F32:
		for (prec = 6; prec < 9; prec++) {
			snprintf(tmp, sizeof(tmp), "%.*g", prec, kv->f);
			if ((float)strtod(tmp, NULL) == (float)kv->f)
				break;
		}
		snprintf(tmp, sizeof(tmp), "%.*g", prec, kv->f);
		jw_num(w, isfinite(kv->f) ? strtod(tmp, NULL) : kv->f);
		break;
	case GGUF_F64:
		jw_num(w, kv->f);
		break;
	case GGUF_BOOL:
		jw_bool(w, kv->u != 0);
		break;
	case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64:
		jw_int(w, kv->i);
		break;
	default:
		jw_uint(w, kv->u);
	}
}

/* `models info --json`: the header facts and every metadata key. */
static void
info_json(const char *file, const struct gguf_file *g, const char *arch,
	  const char *ft, struct buf *b)
{
	uint64_t count[64], i;
	struct jw w;
	int t;

	jw_init(&w, b, 1);
	jw_object(&w);
	jw_kstr(&w, "file", file);
	jw_kint(&w, "version", g->version);
	jw_key(&w, "tensor_count");
	jw_uint(&w, g->n_tensors);
	jw_key(&w, "kv_count");
	jw_uint(&w, g->n_kv);
	jw_kint(&w, "alignment", g->alignment);
	jw_key(&w, "data_offset");
	jw_uint(&w, g->data_offset);
	jw_key(&w, "file_size");
	jw_uint(&w, g->file_size);
	jw_kstr(&w, "architecture", arch);
	jw_kstr(&w, "name", gguf_get_str(g, "general.name"));
	jw_kstr(&w, "file_type", ft);
	jw_key(&w, "model_n_params");
	jw_uint(&w, g->n_params);
	jw_key(&w, "model_size");
	jw_uint(&w, g->model_size);
	jw_key(&w, "tensor_types");
	jw_object(&w);
	type_counts(g, count);
	for (t = 0; t < 64; t++)
		if (count[t]) {
			jw_key(&w, ggml_type_name(t));
			jw_uint(&w, count[t]);
		}
	jw_end(&w);
	jw_key(&w, "metadata");
	jw_object(&w);
	for (i = 0; i < g->n_kv; i++) {
		const struct gguf_kv *kv = &g->kv[i];

		jw_key(&w, kv->key);
		jw_object(&w);
		jw_kstr(&w, "type", gguf_vtype_name(kv->type));
		if (kv->type == GGUF_ARRAY) {
			jw_kstr(&w, "element_type",
				gguf_vtype_name(kv->arr_type));
			jw_key(&w, "length");
			jw_uint(&w, kv->arr_n);
		} else {
			jw_key(&w, "value");
			json_kv_value(&w, kv);
			if (kv->type == GGUF_STRING) {
				jw_key(&w, "length");
				jw_uint(&w, kv->str_len);
			}
		}
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
	buf_addch(b, '\n');
}

static int
models_info(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct info_opts o = { 0 };
	const char **args = NULL, *file;
	size_t nargs;
	struct gguf_file g;
	struct buf b = BUF_INIT;
	const char *arch, *ft;
	int rc;
	int64_t qv;
	uint64_t i;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	file = args[0];
	free(args);
	if (gguf_read(file, &g) < 0)
		return EXIT_USAGE;
	arch = gguf_get_str(&g, "general.architecture");
	ft = ftype_label(&g);
	if (o.json) {
		info_json(file, &g, arch, ft, &b);
		fputs(b.buf, stdout);
		goto done;
	}
	printf("file: %s\n", file);
	printf("gguf version: %" PRIu32 "\n", g.version);
	printf("tensors: %" PRIu64 "\n", g.n_tensors);
	printf("metadata keys: %" PRIu64 "\n", g.n_kv);
	printf("alignment: %" PRIu32 "\n", g.alignment);
	printf("data offset: %" PRIu64 "\n", g.data_offset);
	printf("file size: %" PRIu64 "\n", g.file_size);
	printf("architecture: %s\n", arch ? arch : "(none)");
	printf("name: %s\n", gguf_get_str(&g, "general.name") ?
	       gguf_get_str(&g, "general.name") : "(none)");
	if (ft) {
		int64_t v = -1;
		gguf_get_int(&g, "general.file_type", &v);
		printf("file type: %s (%" PRId64 ")\n", ft, v);
	} else {
		printf("file type: (none)\n");
	}
	if (gguf_get_int(&g, "general.quantization_version", &qv) == 0)
		printf("quantization version: %" PRId64 "\n", qv);
	else
		printf("quantization version: (none)\n");
	printf("model_n_params: %" PRIu64 "\n", g.n_params);
	printf("model_size: %" PRIu64 "\n", g.model_size);
	type_histogram(&g, &b);
	printf("tensor types: %s\n", b.buf);
	printf("metadata:\n");
	for (i = 0; i < g.n_kv; i++) {
		buf_reset(&b);
		print_kv_value(&g.kv[i], &b);
		printf("  %-44s %-7s %s\n", g.kv[i].key,
		       gguf_vtype_name(g.kv[i].type), b.buf);
	}
	if (o.tensors) {
		printf("tensors:\n");
		for (i = 0; i < g.n_tensors; i++) {
			const struct gguf_tensor *t = &g.tensors[i];
			uint32_t d;

			buf_reset(&b);
			for (d = 0; d < t->n_dims; d++)
				buf_addf(&b, "%s%" PRId64, d ? " x " : "",
					 t->ne[d]);
			printf("  %-36s %-6s %-20s %" PRIu64 " bytes\n",
			       t->name, ggml_type_name(t->type), b.buf,
			       t->nbytes);
		}
	}
done:
	buf_release(&b);
	gguf_free(&g);
	return EXIT_OK;
}

struct quantize_view {
	const char *out, *type;
	double started;
	int drawn;
	const struct proc *p;
};

/*
 * The last "[ i/ n]" tensor counter llama-quantize logged (stderr, or
 * stdout for builds that log there): 1 with *i and *n, else 0.
 */
static int
quantize_counter(const struct buf *b, size_t *i, size_t *n)
{
	size_t k = b->len;

	while (k-- > 0) {
		unsigned long a, c;

		if (b->buf[k] == '[' && (k == 0 || b->buf[k - 1] == '\n') &&
		    sscanf(b->buf + k, "[ %lu/ %lu]", &a, &c) == 2 && c &&
		    a <= c) {
			*i = a;
			*n = c;
			return 1;
		}
	}
	return 0;
}

/*
 * About once a second on a terminal: what llama-quantize makes, how far
 * it has got (tensor i of n) and the time left, hyperfine-style; before
 * its first tensor, the megabytes written.
 */
static void
quantize_tick(void *ctx)
{
	struct quantize_view *v = ctx;
	struct stat st;
	double mb = stat(v->out, &st) == 0 ? st.st_size / 1e6 : 0;
	char line[256], *what = xstrfmt("synth: quantizing to %s", v->type);
	size_t i, n;

	if (quantize_counter(&v->p->err, &i, &n) ||
	    quantize_counter(&v->p->out, &i, &n)) {
		/* "[ i/ n]" starts tensor i: i - 1 are done */
		cmd_progress_fraction(line, sizeof(line), what, i - 1, n,
				      "tensors", v->started);
		fprintf(stderr, "\r\033[K%s · %.0f MB written", line, mb);
	} else {
		int s = (int)(mono_now() - v->started);

		fprintf(stderr, "\r\033[K%s: %.0f MB written, %d:%02d elapsed",
			what, mb, s / 60, s % 60);
	}
	free(what);
	v->drawn = 1;
}

static int
run_quantize(const char *in, const char *out, const char *qtype, int quiet)
{
	struct proc p = PROC_INIT;
	struct quantize_view view = { out, qtype, mono_now(), 0, &p };
	struct tool t = TOOL_INIT;
	const char *argv[5];
	struct buf why = BUF_INIT;
	const char *prog;
	int ret = EXIT_OK;

	if (tool_find("llama-quantize", NULL, &t) < 0)
		return EXIT_ENV;
	prog = t.path;
	argv[0] = prog;
	argv[1] = in;
	argv[2] = out;
	argv[3] = qtype;
	argv[4] = NULL;
	p.argv = argv;
	p.mem_cap = PROC_DEFAULT_MEM_CAP;   /* its tensor counter, to the end */
	if (!quiet)
		fprintf(stderr, "synth: %s %s %s %s\n", prog, in, out, qtype);
	if (!quiet && isatty(2)) {
		p.tick = quantize_tick;
		p.tick_ctx = &view;
	}
	if (proc_run(&p) < 0 && !p.exec_errno) {
		ret = EXIT_ENV;
	} else if (p.exec_errno) {
		error("cannot run '%s': %s (run 'make llama-bench' or set "
		      "$LLAMA_QUANTIZE)", prog, strerror(p.exec_errno));
		ret = EXIT_ENV;
	} else if (p.status != 0) {
		const char *tail = p.err.buf;
		proc_describe(&p, &why);
		if (p.err.len > 2000)
			tail = p.err.buf + p.err.len - 2000;
		fprintf(stderr, "%s", tail);
		error("'%s' failed: %s", prog, why.buf);
		ret = EXIT_ENV;
	}
	if (view.drawn)
		fputs("\r\033[K", stderr);
	if (!quiet && ret == EXIT_OK)
		fprintf(stderr, "synth: quantized to %s in %.0f s\n", qtype,
			mono_now() - view.started);
	proc_release(&p);
	buf_release(&why);
	tool_release(&t);
	return ret;
}

static int
models_synth(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct synth_opts o = { .type = "f16" };
	const char **args = NULL;
	size_t nargs;
	const struct synth_shape *shape;
	const char *out, *quant, *shape_name;
	char *tmp = NULL;
	int type, ret = EXIT_OK, rc;
	uint64_t seed, n_params, model_size;

	rc = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (rc)
		return rc < 0 ? EXIT_USAGE : EXIT_OK;
	shape_name = nargs ? args[0] : NULL;
	free(args);
	out = o.output;
	quant = o.quantize;
	seed = (uint64_t)o.seed;
	type = ggml_type_from_name(o.type);   /* one of the table's choices */
	if (o.list) {
		size_t n, i;
		const struct synth_shape *all = synth_shapes(&n);

		for (i = 0; i < n; i++) {
			synth_expect(&all[i], GGML_F16, &n_params,
				     &model_size);
			printf("%-16s %-7s %14" PRIu64 " params  %s\n",
			       all[i].name, all[i].arch, n_params,
			       all[i].summary);
		}
		return EXIT_OK;
	}
	if (!shape_name)
		return cmd_usage_error(ctx, "synth needs one SHAPE");
	if (!out)
		return cmd_usage_error(ctx, "synth needs -o FILE");
	shape = synth_shape_find(shape_name);
	if (!shape)
		return cmd_usage_error(ctx, "unknown shape '%s' (see "
				       "'shimbench models synth --list')",
				       shape_name);
	if (quant) {
		const char *q;
		for (q = quant; *q; q++)
			if (!(*q == '_' || (*q >= '0' && *q <= '9') ||
			      (*q >= 'A' && *q <= 'Z') ||
			      (*q >= 'a' && *q <= 'z')))
				return cmd_usage_error(ctx, "--quantize '%s' "
						       "is not a type name", quant);
		tmp = xstrfmt("%s.%s.tmp", out,
			      ggml_type_name(type));
	}
	if (synth_write(tmp ? tmp : out, shape, type, seed,
			!ctx->quiet && isatty(2)) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (quant) {
		/* Into a temporary too, so a failure leaves no partial file. */
		char *qtmp = xstrfmt("%s.tmp.%ld", out, (long)getpid());

		ret = run_quantize(tmp, qtmp, quant, ctx->quiet);
		if (!ret && rename(qtmp, out) < 0) {
			error("cannot rename '%s' to '%s': %s", qtmp, out,
			      strerror(errno));
			ret = EXIT_ENV;
		}
		if (ret)
			unlink(qtmp);
		free(qtmp);
		if (ret)
			goto cleanup;
		printf("wrote %s (shape %s, %s from %s, seed %" PRIu64 ")\n",
		       out, shape->name, quant, ggml_type_name(type), seed);
	} else {
		synth_expect(shape, type, &n_params, &model_size);
		printf("wrote %s (shape %s, %s, seed %" PRIu64 "): "
		       "model_n_params %" PRIu64 ", model_size %" PRIu64 "\n",
		       out, shape->name, ggml_type_name(type), seed, n_params,
		       model_size);
	}
cleanup:
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return ret;
}

static struct store *
open_cache(struct cmd_ctx *ctx)
{
	struct store *s = NULL;

	if (store_open(&s, ctx->db_path) < 0) {
		warning("hash cache unavailable; hashing without it");
		return NULL;
	}
	return s;
}

static void
say_verbose(const struct hash_job *j)
{
	if (j->cached) {
		fprintf(stderr, "cached: %s (stat and lookup: %.3f ms)\n",
			j->path, j->seconds * 1e3);
		return;
	}
	if (!j->ok)
		return;
	fprintf(stderr, "hashed: %s (%" PRIu64 " bytes in %.3f s, %.0f MB/s)"
		"%s\n", j->path, j->bytes, j->seconds,
		j->seconds > 0 ? (double)j->bytes / j->seconds / 1e6 : 0.0,
		j->cacheable ? "" : ", not cached (modified too recently or "
		"no store)");
}

static int
models_hash(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct hash_opts o = { 0 };
	const char **args = NULL;
	struct hash_job *jobs;
	struct store *s = NULL;
	size_t n, i;
	int ret;

	ret = cmd_parse(ctx, argc, argv, &o, &args, &n);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	jobs = xcalloc(n, sizeof(*jobs));
	for (i = 0; i < n; i++)
		jobs[i].path = args[i];
	free(args);
	if (!o.no_cache)
		s = open_cache(ctx);
	ret = hash_files_cached(s, jobs, n, o.rehash, (int)o.jobs, !ctx->quiet);
	for (i = 0; i < n; i++) {
		if (o.verbose)
			say_verbose(&jobs[i]);
		if (jobs[i].ok)
			printf("%s  %s\n", jobs[i].hex, jobs[i].path);
	}
	hash_jobs_release(jobs, n);
	free(jobs);
	if (s)
		store_close(s);
	return ret < 0 ? EXIT_USAGE : EXIT_OK;
}

/* The word a line of `models verify` starts with, padded to align. */
static const char *
state_word(enum model_state st)
{
	switch (st) {
	case MODEL_OK: return "ok        ";
	case MODEL_FACTS_OK: return "facts ok  ";
	case MODEL_ABSENT: return "absent    ";
	case MODEL_MISSING: return "MISSING   ";
	case MODEL_MISMATCH: return "MISMATCH  ";
	case MODEL_UNREADABLE: return "UNREADABLE ";
	}
	return "?         ";
}

static int
models_verify(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct verify_opts o = { 0 };
	struct model_verify_opts vo = { 0 };
	struct model_checks checks;
	const char **args = NULL;
	struct manifest m;
	size_t nargs, i;
	int ret;

	ret = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	if (manifest_load(o.manifest, &m) < 0) {
		free(args);
		return EXIT_USAGE;
	}
	vo.dir = o.dir;
	vo.db_path = ctx->db_path;
	vo.rehash = o.rehash;
	vo.progress = !ctx->quiet;
	ret = model_verify(&m, args, nargs, &vo, &checks);
	if (ret == MODEL_VERIFY_UNKNOWN) {
		fprintf(stderr, "see 'shimbench %s --help'\n", ctx->cmd->name);
		ret = EXIT_USAGE;
		goto cleanup;
	}
	for (i = 0; i < checks.n; i++)
		if (o.verbose && checks.v[i].hashed)
			say_verbose(&checks.v[i].job);
	for (i = 0; i < checks.n; i++) {
		const struct model_check *c = &checks.v[i];

		printf("%s%s  %s%s\n", state_word(c->state), c->model->name,
		       c->path, c->state == MODEL_FACTS_OK ?
		       " (no sha256 in the manifest)" : "");
	}
	ret = ret == MODEL_VERIFY_FAILED ? EXIT_CHECK : EXIT_OK;
cleanup:
	model_checks_release(&checks);
	free(args);
	manifest_free(&m);
	return ret;
}

/* Size with a unit, for progress lines. */
static void
human(char *out, size_t size, double bytes)
{
	if (bytes >= 1e9)
		snprintf(out, size, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(out, size, "%.1f MB", bytes / 1e6);
	else
		snprintf(out, size, "%.0f kB", bytes / 1e3);
}

struct fetch_view {
	int tty, quiet;
	int last_decile;   /* non-TTY: the last tenth reported */
	int drawn;         /* TTY: a progress line is on the screen */
};

static void
fetch_progress_line(void *ctx, const struct fetch_progress *p)
{
	struct fetch_view *v = ctx;
	char have[32], total[32] = "", rate[32];
	int decile;

	if (v->quiet)
		return;
	human(have, sizeof(have), (double)p->have);
	human(rate, sizeof(rate), p->rate);
	if (p->total > 0)
		human(total, sizeof(total), (double)p->total);
	if (v->tty) {
		fprintf(stderr, "\rfetch: %s %s", p->name, have);
		if (p->total > 0)
			fprintf(stderr, " of %s (%.0f %%)", total,
				100.0 * (double)p->have / (double)p->total);
		fprintf(stderr, ", %s/s%s   ", rate, p->attempt > 1 ?
			", resumed" : "");
		v->drawn = 1;
		return;
	}
	if (p->total <= 0)
		return;
	decile = (int)(10 * p->have / (uint64_t)p->total);
	if (decile > v->last_decile && decile < 10) {
		v->last_decile = decile;
		fprintf(stderr, "fetch: %s %s of %s (%d0 %%), %s/s\n", p->name,
			have, total, decile, rate);
	}
}

static int
models_fetch(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct fetch_cli o = { .retries = 3 };
	struct fetch_view view = { 0 };
	struct fetch_opts fo = { 0 };
	struct manifest m;
	const char **args = NULL;
	size_t nargs, i;
	int ret, rc, worst = EXIT_OK;

	ret = cmd_parse(ctx, argc, argv, &o, &args, &nargs);
	if (ret)
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	if (manifest_load(o.manifest, &m) < 0) {
		free(args);
		return EXIT_USAGE;
	}
	for (i = 0; i < nargs; i++)
		if (!manifest_find(&m, args[i])) {
			ret = cmd_usage_error(ctx, "no model named '%s' in '%s'",
					      args[i], m.path);
			goto cleanup;
		}
	fo.dir = o.dir;
	fo.base_url = o.url ? o.url : getenv("SHIMBENCH_MODELS_URL");
	fo.retries = (int)o.retries;
	fo.retry_delay = 1;
	fo.progress = fetch_progress_line;
	fo.progress_ctx = &view;
	view.tty = isatty(2);
	view.quiet = ctx->quiet;
	proc_catch_interrupts();
	for (i = 0; i < nargs && !proc_interrupted(); i++) {
		const struct manifest_model *mm = manifest_find(&m, args[i]);
		struct fetch_result res;
		char size[32];

		if (o.print_url) {
			char *url = manifest_model_url(mm, fo.base_url);

			if (!url) {
				error("model '%s' has no download source in the "
				      "manifest", mm->name);
				worst = EXIT_USAGE;
				continue;
			}
			printf("%s  %s\n", mm->name, url);
			free(url);
			continue;
		}
		view.last_decile = 0;
		view.drawn = 0;
		if (!ctx->quiet)
			fprintf(stderr, "fetch: %s\n", mm->name);
		rc = fetch_model(mm, &fo, &res);
		if (view.drawn)
			fputc('\n', stderr);
		if (rc < 0) {
			rc = rc == FETCH_MISMATCH ? EXIT_CHECK :
				rc == FETCH_NO_SOURCE ? EXIT_USAGE : EXIT_ENV;
			if (worst == EXIT_OK || rc == EXIT_CHECK)
				worst = rc;
			fetch_result_release(&res);
			continue;
		}
		human(size, sizeof(size), (double)res.bytes);
		if (res.present)
			printf("ok        %s  %s (already there, %s, SHA-256 "
			       "verified)\n", mm->name, res.path, size);
		else if (!res.attempts)
			printf("fetched   %s  %s (%s, SHA-256 verified; an earlier "
			       "fetch had downloaded it all)\n", mm->name,
			       res.path, size);
		else if (res.resumed_at || res.attempts > 1)
			printf("fetched   %s  %s (%s, SHA-256 verified; resumed, "
			       "%d attempt%s) from %s\n", mm->name, res.path,
			       size, res.attempts, res.attempts > 1 ? "s" : "",
			       res.url);
		else
			printf("fetched   %s  %s (%s, SHA-256 verified) from %s\n",
			       mm->name, res.path, size, res.url);
		fetch_result_release(&res);
	}
	if (proc_interrupted())
		worst = EXIT_INTERRUPTED;
	ret = worst;
cleanup:
	free(args);
	manifest_free(&m);
	return ret;
}
