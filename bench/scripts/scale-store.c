/*
 * A store of N nightly sessions for bench/scripts/bench-scale.sh, written
 * through the store's own functions (so the schema, its trigger and its
 * indexes are the real ones), 500 sessions per transaction.
 *
 *   scale-store DB N [SEED]
 *
 * Each session: one target whose fingerprint has a new OS build every 100
 * sessions (base identity the same throughout, so `gate --baseline auto`
 * finds the previous build), 6 runs (3 stock, 3 shim, interleaved), each
 * a real llama-bench row shape (the raw JSON of a 2026 build) for pp512
 * and tg128 with 10 samples: 120 samples per session. Throughput: stock
 * 430 / 12.6 t/s, shim 4800 / 206 t/s, a 2 % process effect and 1 %
 * within-process noise; runs dated a day apart per session. Each run
 * stores its raw output (the two rows as jsonl, 2 kB) with its
 * SHA-256, as `run` does, so a full store check hashes 60,000 of them
 * at 10,000 sessions.
 */
#define _POSIX_C_SOURCE 200809L
#include "evidence/llamabench.h"
#include "evidence/runrec.h"
#include "evidence/store.h"
#include "models/hash.h"
#include "base/rng.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 6
#define REPS 10

/* A 2026 llama-bench row (json), its test and samples filled in. */
static char *
raw_row(long n_prompt, long n_gen, const double *ts, const int64_t *ns,
	const char *time)
{
	struct buf b = BUF_INIT;
	int i;

	buf_addf(&b, "{\"build_commit\":\"ee3d1b54c\",\"build_number\":10167,"
		 "\"cpu_info\":\"Apple M1 Ultra (Virtual)\",\"gpu_info\":\"Apple "
		 "Paravirtual device\",\"backends\":\"MTL,BLAS\",\"model_filename\":"
		 "\"tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf\",\"model_type\":\"llama 1B "
		 "Q4_K - Medium\",\"model_size\":667078656,\"model_n_params\":"
		 "1100048384,\"n_batch\":2048,\"n_ubatch\":512,\"n_threads\":8,"
		 "\"cpu_mask\":\"0x0\",\"cpu_strict\":false,\"poll\":50,\"type_k\":"
		 "\"f16\",\"type_v\":\"f16\",\"n_gpu_layers\":-1,\"n_cpu_moe\":0,"
		 "\"split_mode\":\"layer\",\"main_gpu\":0,\"no_kv_offload\":false,"
		 "\"flash_attn\":-1,\"devices\":\"auto\",\"tensor_split\":\"0.00\","
		 "\"tensor_buft_overrides\":\"none\",\"load_mode\":\"mmap\","
		 "\"embeddings\":false,\"no_op_offload\":0,\"no_host\":false,"
		 "\"fit_target\":0,\"fit_min_ctx\":0,\"n_prompt\":%ld,\"n_gen\":%ld,"
		 "\"n_depth\":0,\"test_time\":\"%s\",\"avg_ns\":0,\"stddev_ns\":0,"
		 "\"avg_ts\":0,\"stddev_ts\":0,\"samples_ns\":[", n_prompt, n_gen,
		 time);
	for (i = 0; i < REPS; i++)
		buf_addf(&b, "%s%lld", i ? "," : "", (long long)ns[i]);
	buf_adds(&b, "],\"samples_ts\":[");
	for (i = 0; i < REPS; i++)
		buf_addf(&b, "%s%.3f", i ? "," : "", ts[i]);
	buf_adds(&b, "]}");
	return buf_detach(&b, NULL);
}

/* One result's row (row->raw_json, samples_ts and samples_ns are the
 * caller's: free raw_json, samples in ts[] and ns[]). */
static void
make_row(struct lb_row *row, double *ts, int64_t *ns, long np, long ng,
	 double level, double proc, struct rng *g, const char *time)
{
	struct lb_row r;
	long tokens = np + ng;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < REPS; i++) {
		ts[i] = round(level * proc * exp(0.01 * rng_normal(g)) * 1000) / 1000;
		ns[i] = (int64_t)(tokens / ts[i] * 1e9);
	}
	r.build_commit = "ee3d1b54c";
	r.build_number = 10167;
	r.backends = "MTL,BLAS";
	r.n_batch = 2048;
	r.n_ubatch = 512;
	r.n_threads = 8;
	r.n_gpu_layers = -1;
	r.flash_attn = "auto";
	r.n_prompt = np;
	r.n_gen = ng;
	r.model_type = "llama 1B Q4_K - Medium";
	r.model_size = 667078656;
	r.model_n_params = 1100048384;
	snprintf(r.test, sizeof(r.test), "%s%ld", np ? "pp" : "tg",
		 np ? np : ng);
	r.n_samples = REPS;
	r.samples_ts = ts;
	r.samples_ns = ns;
	r.spread_source = "samples";
	r.stddev_ts = NAN;
	r.raw_json = raw_row(np, ng, ts, ns, time);
	*row = r;
}

int
main(int argc, char **argv)
{
	struct store *s;
	struct buf out = BUF_INIT;
	struct rng g;
	long n, i;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: scale-store DB N [SEED]\n");
		return 2;
	}
	n = atol(argv[2]);
	rng_seed(&g, argc > 3 ? (uint64_t)atoll(argv[3]) : 1);
	if (store_open(&s, argv[1]) < 0)
		return 3;
	for (i = 0; i < n; i++) {
		struct session_rec sr;
		int64_t sid, env;
		char day[48], build[32], fp[256], ident[64];
		long d = i % 28 + 1, m = i / 28 % 12 + 1, y = 2027 + i / 336;

		if (i % 500 == 0 && store_begin(s) < 0)
			return 3;
		memset(&sr, 0, sizeof(sr));
		snprintf(day, sizeof(day), "%04ld-%02ld-%02ldT02:00:00Z", y, m, d);
		sr.kind = "run";
		sr.started_at = day;
		sr.finished_at = day;
		sr.status = "ok";
		sr.label = "nightly";
		if (store_session_add(s, &sr, &sid) < 0)
			return 3;
		snprintf(build, sizeof(build), "26A%03ld", i / 100);
		snprintf(fp, sizeof(fp), "{\"hw_model\":\"VirtualMac2,1\","
			 "\"os_name\":\"macOS\",\"os_version\":\"26.%ld\","
			 "\"os_build\":\"%s\",\"is_vm\":1,\"gpu\":\"Apple Paravirtual "
			 "device\",\"llama_build\":\"b10167\"}", i / 100, build);
		snprintf(ident, sizeof(ident), "ident-%s", build);
		if (store_environment_add(s, sid, "guest", fp, ident, "base-guest",
					  &env) < 0)
			return 3;
		for (r = 0; r < RUNS; r++) {
			struct run_rec rr;
			struct lb_row rows[2];
			double ts[2][REPS];
			int64_t ns[2][REPS], run;
			char sha[65];
			int rc;
			int shim = r % 2;
			double proc = exp(0.02 * rng_normal(&g));
			char when[48];

			snprintf(when, sizeof(when), "%04ld-%02ld-%02ldT02:%02d:00Z",
				 y, m, d, r);
			memset(&rr, 0, sizeof(rr));
			rr.session_id = sid;
			rr.environment_id = env;
			rr.target = "guest";
			rr.variant = shim ? "shim" : "stock";
			rr.role = rr.variant;
			rr.model = "tinyllama-1.1b-q4_k_m";
			rr.model_label = "TinyLlama 1.1B Q4_K_M";
			rr.model_sha256 = "9fecc3b3cd76bba89d504f29b616eedf7da85b96540e490ca5824d3f7d2776a0";
			rr.runtime = "llama.cpp";
			rr.seq = r + 1;
			rr.started_at = when;
			rr.argv_json = "[\"llama-bench\",\"-p\",\"512\",\"-n\",\"128\",\"-r\",\"10\"]";
			rr.env_json = "{}";
			rr.status = "ok";
			rr.verification = shim ? "verified" : "not-required";
			make_row(&rows[0], ts[0], ns[0], 512, 0, shim ? 4800 : 430,
				 proc, &g, when);
			make_row(&rows[1], ts[1], ns[1], 0, 128, shim ? 206 : 12.6,
				 proc, &g, when);
			/* the raw output, as a run stores it (jsonl) */
			buf_reset(&out);
			buf_addf(&out, "%s\n%s\n", rows[0].raw_json,
				 rows[1].raw_json);
			hash_buf_sha256(out.buf, out.len, sha);
			rr.stdout_text.p = out.buf;
			rr.stdout_text.n = out.len;
			rr.stdout_sha256 = sha;
			rc = store_run_add(s, &rr, &run) < 0 ||
			     store_result_add(s, run, 0, &rows[0], NULL) < 0 ||
			     store_result_add(s, run, 1, &rows[1], NULL) < 0;
			free(rows[0].raw_json);
			free(rows[1].raw_json);
			if (rc)
				return 3;
		}
		if ((i % 500 == 499 || i == n - 1) && store_commit(s) < 0)
			return 3;
	}
	store_close(s);
	buf_release(&out);
	return 0;
}
