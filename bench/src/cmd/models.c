#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "models/gguf.h"
#include "models/hash.h"
#include "evidence/hashcache.h"
#include "models/manifest.h"
#include "base/proc.h"
#include "evidence/store.h"
#include "models/synth.h"
#include "run/tools.h"
#include "base/util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char usage_models[] =
	"usage: shimbench models info [--json] [--tensors] FILE\n"
	"       shimbench models synth SHAPE -o FILE [--type f32|f16|q8_0]\n"
	"                              [--seed N] [--quantize TYPE]\n"
	"       shimbench models synth --list\n"
	"       shimbench models verify [--dir DIR] [--manifest PATH]\n"
	"                               [--rehash] [NAME...]\n"
	"       shimbench models hash [--rehash] [--no-cache] [--verbose]\n"
	"                             [-j N] FILE...\n"
	"\n"
	"info     GGUF header facts: version, counts, every metadata key,\n"
	"         architecture, file type, and the parameter count and\n"
	"         tensor-data size llama-bench reports (model_n_params,\n"
	"         model_size). Reads only the header and tensor infos.\n"
	"synth    writes a deterministic synthetic model of a known shape\n"
	"         (same bytes on every machine); --quantize runs llama-quantize\n"
	"         on it (Q4_K_M, Q4_0, ...). Shapes: see --list.\n"
	"verify   checks model files against models/manifest.json: size, GGUF\n"
	"         model_size and parameter count, and SHA-256 (through the\n"
	"         hash cache); exit 1 on a mismatch.\n"
	"hash     prints 'sha256  path' lines like sha256sum, through the\n"
	"         store's hash cache: an unchanged file costs one stat.\n"
	"\n"
	"options:\n"
	"  --json         info as one JSON object\n"
	"  --tensors      info also lists every tensor\n"
	"  -o FILE        synth output\n"
	"  --type T       synth tensor type for the weights (default f16)\n"
	"  --seed N       synth PRNG seed (default 0)\n"
	"  --quantize T   synth, then llama-quantize to T (found as\n"
	"                 $LLAMA_QUANTIZE, on PATH, or .llama/bin/llama-quantize\n"
	"                 from 'make llama-bench')\n"
	"  --dir DIR      verify: where model files are (default models)\n"
	"  --manifest P   verify: manifest (default $SHIMBENCH_MANIFEST or\n"
	"                 models/manifest.json)\n"
	"  --rehash       read every file again, ignoring the cache\n"
	"  --no-cache     hash: do not use the store at all\n"
	"  --verbose      hash, verify: say on stderr whether each answer came\n"
	"                 from the cache\n"
	"  -j N           files hashed in parallel (default: online CPUs)\n";

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
		buf_add_json_str(b, kv->str);
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

/* Tensor counts by ggml type, in type order, as "Q4_K 133, F32 45". */
static void
type_histogram(const struct gguf_file *g, struct buf *b, int json)
{
	uint64_t count[64] = { 0 }, i;
	int t, first = 1;

	for (i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].type >= 0 && g->tensors[i].type < 64)
			count[g->tensors[i].type]++;
	for (t = 0; t < 64; t++) {
		if (!count[t])
			continue;
		if (json)
			buf_addf(b, "%s\"%s\": %" PRIu64, first ? "" : ", ",
				 ggml_type_name(t), count[t]);
		else
			buf_addf(b, "%s%s %" PRIu64, first ? "" : ", ",
				 ggml_type_name(t), count[t]);
		first = 0;
	}
}

static int
models_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "tensors", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gguf_file g;
	struct buf b = BUF_INIT;
	const char *arch, *ft;
	int c, json = 0, tensors = 0;
	int64_t qv;
	uint64_t i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'J': json = 1; break;
		case 'T': tensors = 1; break;
		case 'h': return cmd_help(usage_models);
		default:
			return cmd_usage_error_name("models", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return cmd_usage_error_name("models", "info needs exactly one FILE");
	if (gguf_read(argv[optind], &g) < 0)
		return EXIT_USAGE;
	arch = gguf_get_str(&g, "general.architecture");
	ft = ftype_label(&g);
	if (json) {
		buf_adds(&b, "{\"file\": ");
		buf_add_json_str(&b, argv[optind]);
		buf_addf(&b, ", \"version\": %" PRIu32 ", \"tensor_count\": %"
			 PRIu64 ", \"kv_count\": %" PRIu64 ", \"alignment\": %"
			 PRIu32 ", \"data_offset\": %" PRIu64 ", \"file_size\": %"
			 PRIu64 ", \"architecture\": ", g.version, g.n_tensors,
			 g.n_kv, g.alignment, g.data_offset, g.file_size);
		if (arch)
			buf_add_json_str(&b, arch);
		else
			buf_adds(&b, "null");
		buf_adds(&b, ", \"name\": ");
		if (gguf_get_str(&g, "general.name"))
			buf_add_json_str(&b, gguf_get_str(&g, "general.name"));
		else
			buf_adds(&b, "null");
		buf_adds(&b, ", \"file_type\": ");
		if (ft)
			buf_add_json_str(&b, ft);
		else
			buf_adds(&b, "null");
		buf_addf(&b, ", \"model_n_params\": %" PRIu64
			 ", \"model_size\": %" PRIu64 ", \"tensor_types\": {",
			 g.n_params, g.model_size);
		type_histogram(&g, &b, 1);
		buf_adds(&b, "}, \"metadata\": {");
		for (i = 0; i < g.n_kv; i++) {
			const struct gguf_kv *kv = &g.kv[i];
			buf_adds(&b, i ? ", " : "");
			buf_add_json_str(&b, kv->key);
			buf_adds(&b, ": {\"type\": ");
			buf_add_json_str(&b, gguf_vtype_name(kv->type));
			if (kv->type == GGUF_ARRAY) {
				buf_adds(&b, ", \"element_type\": ");
				buf_add_json_str(&b,
						 gguf_vtype_name(kv->arr_type));
				buf_addf(&b, ", \"length\": %" PRIu64 "}",
					 kv->arr_n);
			} else if (kv->type == GGUF_STRING) {
				buf_adds(&b, ", \"value\": ");
				buf_add_json_str(&b, kv->str);
				buf_addf(&b, ", \"length\": %" PRIu64 "}",
					 kv->str_len);
			} else {
				buf_adds(&b, ", \"value\": ");
				if (kv->type == GGUF_F32 ||
				    kv->type == GGUF_F64)
					buf_addf(&b, "%.9g", kv->f);
				else
					print_kv_value(kv, &b);
				buf_adds(&b, "}");
			}
		}
		buf_adds(&b, "}}\n");
		fputs(b.buf, stdout);
		goto done;
	}
	printf("file: %s\n", argv[optind]);
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
	type_histogram(&g, &b, 0);
	printf("tensor types: %s\n", b.buf);
	printf("metadata:\n");
	for (i = 0; i < g.n_kv; i++) {
		buf_reset(&b);
		print_kv_value(&g.kv[i], &b);
		printf("  %-44s %-7s %s\n", g.kv[i].key,
		       gguf_vtype_name(g.kv[i].type), b.buf);
	}
	if (tensors) {
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

static int
run_quantize(const char *in, const char *out, const char *qtype, int quiet)
{
	struct tool t = TOOL_INIT;
	const char *argv[5];
	struct proc p = PROC_INIT;
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
	p.mem_cap = 64 << 10;
	if (!quiet)
		fprintf(stderr, "synth: %s %s %s %s\n", prog, in, out, qtype);
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
	proc_release(&p);
	buf_release(&why);
	tool_release(&t);
	return ret;
}

static int
models_synth(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "quantize", required_argument, NULL, 'q' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct synth_shape *shape;
	const char *out = NULL, *quant = NULL;
	char *tmp = NULL;
	int c, type = GGML_F16, ret = EXIT_OK, list = 0;
	uint64_t seed = 0, n_params, model_size;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't':
			type = ggml_type_from_name(optarg);
			if (!synth_type_ok(type))
				return cmd_usage_error_name("models", "--type '%s': "
					"use f32, f16 or q8_0 (other types "
					"through --quantize)", optarg);
			break;
		case 's': {
			char *end;
			errno = 0;
			seed = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-')
				return cmd_usage_error_name("models", "--seed '%s' "
					"is not a whole number", optarg);
			break;
		}
		case 'q': quant = optarg; break;
		case 'l': list = 1; break;
		case 'h': return cmd_help(usage_models);
		default:
			return cmd_usage_error_name("models", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (list) {
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
	if (optind + 1 != argc)
		return cmd_usage_error_name("models", "synth needs one SHAPE");
	if (!out)
		return cmd_usage_error_name("models", "synth needs -o FILE");
	shape = synth_shape_find(argv[optind]);
	if (!shape)
		return cmd_usage_error_name("models", "unknown shape '%s' (see "
				       "'shimbench models synth --list')",
				       argv[optind]);
	if (quant) {
		const char *q;
		for (q = quant; *q; q++)
			if (!(*q == '_' || (*q >= '0' && *q <= '9') ||
			      (*q >= 'A' && *q <= 'Z') ||
			      (*q >= 'a' && *q <= 'z')))
				return cmd_usage_error_name("models", "--quantize "
					"'%s' is not a type name", quant);
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
parse_jobs(const char *arg, int *out)
{
	long v;

	if (parse_long(arg, &v) < 0 || v < 1 || v > 1024)
		return -1;
	*out = (int)v;
	return 0;
}

static int
models_hash(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "rehash", no_argument, NULL, 'r' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hash_job *jobs;
	struct store *s = NULL;
	int c, rehash = 0, nocache = 0, verbose = 0, threads = 0, ret;
	size_t n, i;

	while ((c = getopt_long(argc, argv, "j:", opts, NULL)) != -1) {
		switch (c) {
		case 'r': rehash = 1; break;
		case 'n': nocache = 1; break;
		case 'v': verbose = 1; break;
		case 'j':
			if (parse_jobs(optarg, &threads) < 0)
				return cmd_usage_error_name("models", "-j '%s' is "
					"not a count from 1 to 1024", optarg);
			break;
		case 'h': return cmd_help(usage_models);
		default:
			return cmd_usage_error_name("models", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmd_usage_error_name("models", "hash needs at least one FILE");
	n = (size_t)(argc - optind);
	jobs = xcalloc(n, sizeof(*jobs));
	for (i = 0; i < n; i++)
		jobs[i].path = argv[optind + (int)i];
	if (!nocache)
		s = open_cache(ctx);
	ret = hash_files_cached(s, jobs, n, rehash, threads, !ctx->quiet);
	for (i = 0; i < n; i++) {
		if (verbose)
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

/*
 * The GGUF header of path against the manifest's llama-bench figures
 * (model_size, n_params); 0, or -1 after error() naming the file.
 */
static int
check_facts(const struct manifest_model *mm, const char *path)
{
	struct gguf_file g;
	int ret = 0;

	if (gguf_read(path, &g) < 0)
		return -1;
	if (mm->model_size >= 0 && g.model_size != (uint64_t)mm->model_size)
		ret = error("'%s' has model_size %" PRIu64 "; the manifest's "
			    "'%s' has %" PRId64, path, g.model_size, mm->name,
			    mm->model_size);
	else if (mm->n_params >= 0 && g.n_params != (uint64_t)mm->n_params)
		ret = error("'%s' has %" PRIu64 " parameters; the manifest's "
			    "'%s' has %" PRId64, path, g.n_params, mm->name,
			    mm->n_params);
	gguf_free(&g);
	return ret;
}

static int
models_verify(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "rehash", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *mpath = NULL;
	struct manifest m;
	struct hash_job *jobs = NULL;
	const struct manifest_model **sel = NULL;
	char **paths = NULL, **line = NULL;
	size_t *ji = NULL;
	struct store *s = NULL;
	size_t n = 0, nj = 0, i;
	int c, rehash = 0, verbose = 0, named, bad = 0;
	int ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'm': mpath = optarg; break;
		case 'r': rehash = 1; break;
		case 'v': verbose = 1; break;
		case 'h': return cmd_help(usage_models);
		default:
			return cmd_usage_error_name("models", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (manifest_load(mpath, &m) < 0)
		return EXIT_USAGE;
	named = optind < argc;
	sel = xcalloc(m.n + (size_t)argc, sizeof(*sel));
	if (named) {
		for (i = (size_t)optind; i < (size_t)argc; i++) {
			sel[n] = manifest_find(&m, argv[i]);
			if (!sel[n]) {
				ret = cmd_usage_error_name("models", "no model "
					"named '%s' in '%s'", argv[i], m.path);
				goto cleanup;
			}
			n++;
		}
	} else {
		for (i = 0; i < m.n; i++)
			sel[n++] = &m.models[i];
	}
	paths = xcalloc(n, sizeof(*paths));
	line = xcalloc(n, sizeof(*line));
	jobs = xcalloc(n, sizeof(*jobs));
	ji = xcalloc(n, sizeof(*ji));
	/* Size first: a wrong size is a mismatch without reading. */
	for (i = 0; i < n; i++) {
		const struct manifest_model *mm = sel[i];
		struct stat st;

		paths[i] = manifest_model_path(mm, dir);
		if (stat(paths[i], &st) < 0 || !S_ISREG(st.st_mode)) {
			if (named) {
				line[i] = xstrfmt("MISSING   %s  %s", mm->name,
						  paths[i]);
				error("model '%s': '%s' not found", mm->name,
				      paths[i]);
				bad++;
			} else {
				line[i] = xstrfmt("absent    %s  %s", mm->name,
						  paths[i]);
			}
			continue;
		}
		if (mm->size >= 0 && (int64_t)st.st_size != mm->size) {
			line[i] = xstrfmt("MISMATCH  %s  %s", mm->name,
					  paths[i]);
			error("'%s' is %jd bytes; the manifest's '%s' is %"
			      PRId64, paths[i], (intmax_t)st.st_size,
			      mm->name, mm->size);
			bad++;
			continue;
		}
		if ((mm->model_size >= 0 || mm->n_params >= 0) &&
		    check_facts(mm, paths[i]) < 0) {
			line[i] = xstrfmt("MISMATCH  %s  %s", mm->name,
					  paths[i]);
			bad++;
			continue;
		}
		if (!mm->sha256) {
			line[i] = xstrfmt("facts ok  %s  %s (no sha256 in "
					  "the manifest)", mm->name, paths[i]);
			continue;
		}
		jobs[nj].path = paths[i];
		ji[nj++] = i;
	}
	if (nj) {
		s = open_cache(ctx);
		if (hash_files_cached(s, jobs, nj, rehash, 0, !ctx->quiet) < 0)
			bad++;
	}
	for (i = 0; i < nj; i++) {
		const struct manifest_model *mm = sel[ji[i]];

		if (verbose)
			say_verbose(&jobs[i]);
		if (!jobs[i].ok) {
			line[ji[i]] = xstrfmt("UNREADABLE %s  %s", mm->name,
					      jobs[i].path);
			continue;
		}
		if (strcmp(jobs[i].hex, mm->sha256)) {
			line[ji[i]] = xstrfmt("MISMATCH  %s  %s", mm->name,
					      jobs[i].path);
			error("'%s' has SHA-256 %s; the manifest's '%s' has %s",
			      jobs[i].path, jobs[i].hex, mm->name, mm->sha256);
			bad++;
		} else {
			line[ji[i]] = xstrfmt("ok        %s  %s", mm->name,
					      jobs[i].path);
		}
	}
	for (i = 0; i < n; i++)
		if (line[i])
			printf("%s\n", line[i]);
	if (bad)
		ret = EXIT_CHECK;
cleanup:
	if (jobs)
		hash_jobs_release(jobs, nj);
	for (i = 0; paths && i < n; i++) {
		free(paths[i]);
		free(line[i]);
	}
	free(paths);
	free(line);
	free(ji);
	free(jobs);
	free(sel);
	if (s)
		store_close(s);
	manifest_free(&m);
	return ret;
}

static int
cmd_models_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *sub;

	if (argc < 2)
		return cmd_usage_error_name("models", "missing subcommand (info, "
				       "synth, verify, hash)");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") ||
	    !strcmp(sub, "help"))
		return cmd_help(usage_models);
	argc--;
	argv++;
	cmd_getopt_reset();
	if (!strcmp(sub, "info"))
		return models_info(argc, argv);
	if (!strcmp(sub, "synth"))
		return models_synth(argc, argv, ctx);
	if (!strcmp(sub, "verify"))
		return models_verify(argc, argv, ctx);
	if (!strcmp(sub, "hash"))
		return models_hash(argc, argv, ctx);
	return cmd_usage_error_name("models", "unknown subcommand '%s'", sub);
}

LEGACY_COMMAND(models, "GGUF facts, synthetic models, manifest verification, hashing", cmd_models_main, usage_models);
