#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/workload.h"
#include "base/rng.h"
#include "analysis/render.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_compare[] =
	"usage: shimbench compare [--format md|csv|json] [--seed N]\n"
	"                         [--boot N] [--threshold PCT] [-o FILE] A B\n"
	"\n"
	"Per workload (model x test; also variant when both selections hold\n"
	"the same several variants): the ratio B / A of the median tokens/s\n"
	"with a seeded bootstrap 95 % confidence interval (processes are\n"
	"resampled first, then samples within each), the Mann-Whitney U\n"
	"p-value, the Hodges-Lehmann shift, sample and process counts, the\n"
	"minimum detectable effect and a verdict: faster, slower, same or\n"
	"inconclusive. A and B are selections key=value[,key=value...] over\n"
	"session, variant, target, model, role, test, os_build, ...\n"
	"\n"
	"A single process per side cannot show how much the process itself\n"
	"shifts its samples; the noise floor stored by `shimbench calibrate`\n"
	"for the fingerprint is used for that, or, uncalibrated, the\n"
	"within-process CV as a stand-in (column noise says which).\n"
	"\n"
	"  --format F      md (default), csv or json\n"
	"  --seed N        bootstrap seed (default 1): same seed, same output\n"
	"  --boot N        bootstrap iterations (default 2000)\n"
	"  --threshold P   'same' when the CI lies within +-P % (default 5)\n"
	"  -o FILE         write to FILE instead of standard output\n"
	"\n"
	"exit: 0 compared, 2 bad input, 3 no store or nothing comparable\n";

static void
pct(char *out, size_t size, double v)
{
	fmt_num(out, size, v * 100, 2);
}

static int
cmd_compare_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 'S' },
		{ "boot", required_argument, NULL, 'B' },
		{ "threshold", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const cols[] = {
		"workload", "a_median#", "b_median#", "ratio#", "ci95_lo#",
		"ci95_hi#", "p_mwu#", "hl_shift#", "hl_pct#", "a_samples#",
		"a_processes#", "b_samples#", "b_processes#", "noise",
		"between_cv_pct#", "mde_pct#", "verdict",
	};
	const char *format = "md", *output = NULL;
	struct cmp_opts o = CMP_OPTS_INIT;
	struct store_result *ra = NULL, *rb = NULL;
	struct workload *w = NULL;
	size_t na = 0, nb = 0, nw = 0, only_a = 0, only_b = 0, i;
	struct store *s = NULL;
	struct table t;
	struct buf out = BUF_INIT;
	double threshold = 0.05, v;
	long l;
	int c, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'S':
			if (parse_long(optarg, &l) < 0 || l < 0)
				return cmd_usage_error_name("compare", "bad --seed '%s'", optarg);
			o.seed = (uint64_t)l;
			break;
		case 'B':
			if (parse_long(optarg, &l) < 0 || l < 100 || l > 1000000)
				return cmd_usage_error_name("compare", "bad --boot '%s' "
						       "(100 to 1000000)", optarg);
			o.boot = (int)l;
			break;
		case 't':
			if (parse_double(optarg, &v) < 0 || v <= 0 || v >= 100)
				return cmd_usage_error_name("compare", "bad --threshold '%s' "
						       "(a percentage)", optarg);
			threshold = v / 100;
			break;
		case 'h': return cmd_help(usage_compare);
		default:
			return cmd_usage_error_name("compare", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error_name("compare", "need two selections, A and B");
	if (strcmp(format, "md") && strcmp(format, "csv") && strcmp(format, "json"))
		return cmd_usage_error_name("compare", "unknown format '%s' (md, csv "
				       "or json)", format);
	{
		struct selection probe;

		for (i = 0; i < 2; i++) {
			if (selection_parse(argv[optind + i], &probe) < 0)
				return EXIT_USAGE;
			selection_free(&probe);
		}
	}
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    workload_load(s, argv[optind], &ra, &na) < 0 ||
	    workload_load(s, argv[optind + 1], &rb, &nb) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	if (workload_match(ra, na, rb, nb, &w, &nw, &only_a, &only_b) < 0) {
		ret = EXIT_USAGE;
		goto cleanup;
	}
	if (!nw) {
		error("nothing comparable: %zu workloads only in '%s', %zu only "
		      "in '%s'", only_a, argv[optind], only_b, argv[optind + 1]);
		ret = EXIT_ENV;
		goto cleanup;
	}
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (i = 0; i < nw; i++) {
		struct cmp_result r;
		struct gate_decision d;
		char cell[ARRAY_SIZE(cols)][64];
		const char *row[ARRAY_SIZE(cols)];
		size_t k;

		o.between_cv = workload_calibrated(s, &w[i]);
		if (cmp_compute(&w[i].a, &w[i].b, &o, &r) < 0) {
			error("workload '%s' skipped", w[i].name);
			continue;
		}
		gate_decide(&r, threshold, 0.005, GATE_DETECT, &d);
		fmt_num(cell[1], 64, r.med_a, 2);
		fmt_num(cell[2], 64, r.med_b, 2);
		fmt_num(cell[3], 64, r.ratio, 4);
		fmt_num(cell[4], 64, r.ci_lo, 4);
		fmt_num(cell[5], 64, r.ci_hi, 4);
		snprintf(cell[6], 64, "%.3g", r.p_mwu);
		fmt_num(cell[7], 64, r.hl, 2);
		pct(cell[8], 64, r.hl_rel);
		snprintf(cell[9], 64, "%zu", r.na);
		snprintf(cell[10], 64, "%zu", r.ka);
		snprintf(cell[11], 64, "%zu", r.nb);
		snprintf(cell[12], 64, "%zu", r.kb);
		pct(cell[14], 64, r.between_cv);
		pct(cell[15], 64, d.mde);
		for (k = 0; k < ARRAY_SIZE(cols); k++)
			row[k] = cell[k];
		row[0] = w[i].name;
		row[13] = cmp_noise_name(r.noise);
		row[16] = cmp_verdict(&r, threshold);
		table_add_row(&t, row);
	}
	if (table_render(&t, format, &out) < 0)
		ret = EXIT_USAGE;
	table_release(&t);
	if (ret)
		goto cleanup;
	if (output) {
		if (write_file_atomic(output, out.buf, out.len) < 0) {
			ret = EXIT_ENV;
			goto cleanup;
		}
	} else {
		fwrite(out.buf, 1, out.len, stdout);
	}
	if (!ctx->quiet && (only_a || only_b))
		fprintf(stderr, "note: %zu workloads only in A, %zu only in B\n",
			only_a, only_b);
cleanup:
	workloads_free(w, nw);
	store_results_free(ra, na);
	store_results_free(rb, nb);
	buf_release(&out);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(compare, "per-workload ratio with bootstrap CI, p-value and verdict", cmd_compare_main, usage_compare);
