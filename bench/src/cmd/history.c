#define _POSIX_C_SOURCE 200809L
#include "analysis/changepoint.h"
#include "cmd/cmd.h"
#include "analysis/compare.h"
#include "analysis/gate.h"
#include "analysis/workload.h"
#include "base/rng.h"
#include "analysis/render.h"
#include "analysis/stats.h"
#include "evidence/store.h"
#include "base/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char usage_history[] =
	"usage: shimbench history [--select SEL] [--format md|csv|json]\n"
	"                         [--p P] [--seed N] [-o FILE]\n"
	"\n"
	"The series of each workload per variant and fingerprint (target,\n"
	"variant, model, test and the fingerprint without OS version and\n"
	"build), one point per session in store order with its OS build,\n"
	"median tokens/s and samples, and the change points found by\n"
	"E-divisive means (Matteson and James 2014) with a permutation test\n"
	"over the session medians; the session that introduced each change\n"
	"is marked with the shift.\n"
	"\n"
	"  --select SEL   key=value[,key=value...] (default: everything)\n"
	"  --p P          significance of a change (default 0.05)\n"
	"  --seed N       permutation seed (default 1)\n"
	"  --format F     md (default), csv or json\n"
	"  -o FILE        write to FILE instead of standard output\n";

struct point {
	int64_t session;
	char *started, *os_build;
	double *x;
	size_t n;
};

struct series {
	char *key, *base;
	struct point *p;
	size_t np;
};

static int
cmd_history_main(int argc, char **argv, struct cmd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "select", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "p", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const cols[] = {
		"series", "session#", "started", "os_build", "median#",
		"samples#", "change",
	};
	const char *select = NULL, *format = "md", *output = NULL;
	double pmax = 0.05;
	long seed = 1;
	struct store *s = NULL;
	struct store_result *rows = NULL;
	struct series *sr = NULL;
	size_t nrows = 0, ns = 0, i, j, k;
	struct table t;
	struct buf out = BUF_INIT;
	int c, ret = EXIT_OK;

	while ((c = getopt_long(argc, argv, "s:f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': select = optarg; break;
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'p':
			if (parse_double(optarg, &pmax) < 0 || pmax <= 0 || pmax >= 1)
				return cmd_usage_error_name("history", "bad --p '%s'", optarg);
			break;
		case 'S':
			if (parse_long(optarg, &seed) < 0 || seed < 0)
				return cmd_usage_error_name("history", "bad --seed '%s'", optarg);
			break;
		case 'h': return cmd_help(usage_history);
		default:
			return cmd_usage_error_name("history", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error_name("history", "unexpected argument '%s'",
				       argv[optind]);
	if (strcmp(format, "md") && strcmp(format, "csv") && strcmp(format, "json"))
		return cmd_usage_error_name("history", "unknown format '%s'", format);
	{
		struct selection p;

		if (selection_parse(select, &p) < 0)
			return EXIT_USAGE;
		selection_free(&p);
	}
	if (cmd_open_existing_store(ctx, &s) < 0 ||
	    workload_load(s, select, &rows, &nrows) < 0) {
		ret = EXIT_ENV;
		goto cleanup;
	}
	for (i = 0; i < nrows; i++) {
		struct store_result *r = &rows[i];
		char *base = NULL, *osb = NULL, *key;
		struct series *x;
		struct point *pt;

		if (strcmp(r->run_status, "ok") || !r->n)
			continue;
		if (r->environment_id)
			store_environment_base(s, r->environment_id, &base, &osb);
		free(osb);
		key = xstrfmt("%s/%s %s %s [%.8s]", r->target, r->variant,
			      r->model, r->test, base && *base ? base : "-");
		for (j = 0; j < ns && strcmp(sr[j].key, key); j++)
			;
		if (j == ns) {
			sr = xrealloc(sr, (ns + 1) * sizeof(*sr));
			memset(&sr[ns], 0, sizeof(*sr));
			sr[ns].key = key;
			sr[ns].base = base;
			ns++;
		} else {
			free(key);
			free(base);
		}
		x = &sr[j];
		if (!x->np || x->p[x->np - 1].session != r->session_id) {
			x->p = xrealloc(x->p, (x->np + 1) * sizeof(*x->p));
			pt = &x->p[x->np++];
			memset(pt, 0, sizeof(*pt));
			pt->session = r->session_id;
			pt->started = xstrdup(r->session_started);
			pt->os_build = xstrdup(r->os_build);
		}
		pt = &x->p[x->np - 1];
		pt->x = xrealloc(pt->x, (pt->n + r->n) * sizeof(double));
		memcpy(pt->x + pt->n, r->ts, r->n * sizeof(double));
		pt->n += r->n;
	}
	table_init(&t, ARRAY_SIZE(cols), cols);
	for (j = 0; j < ns; j++) {
		double *med = xmalloc(sr[j].np * sizeof(double));
		struct cp_change *cp = NULL;
		size_t ncp = 0;

		for (k = 0; k < sr[j].np; k++)
			med[k] = stats_median(sr[j].p[k].x, sr[j].p[k].n);
		cp_edivisive(med, sr[j].np, 1, pmax, 999, (uint64_t)seed, &cp, &ncp);
		for (k = 0; k < sr[j].np; k++) {
			char sess[32], m[32], n[32], change[160] = "";
			const char *row[ARRAY_SIZE(cols)];
			size_t q;

			for (q = 0; q < ncp; q++)
				if (cp[q].index == k)
					snprintf(change, sizeof(change),
						 "change %+.1f%% (p %.3g; median %.4g -> %.4g)",
						 (cp[q].after / cp[q].before - 1) * 100,
						 cp[q].p, cp[q].before, cp[q].after);
			snprintf(sess, sizeof(sess), "%lld", (long long)sr[j].p[k].session);
			fmt_num(m, sizeof(m), med[k], 2);
			snprintf(n, sizeof(n), "%zu", sr[j].p[k].n);
			row[0] = sr[j].key;
			row[1] = sess;
			row[2] = sr[j].p[k].started;
			row[3] = sr[j].p[k].os_build;
			row[4] = m;
			row[5] = n;
			row[6] = change;
			table_add_row(&t, row);
		}
		free(cp);
		free(med);
	}
	if (table_render(&t, format, &out) < 0)
		ret = EXIT_USAGE;
	table_release(&t);
	if (!ret) {
		if (output) {
			if (write_file_atomic(output, out.buf, out.len) < 0)
				ret = EXIT_ENV;
		} else {
			fwrite(out.buf, 1, out.len, stdout);
		}
	}
cleanup:
	for (j = 0; j < ns; j++) {
		for (k = 0; k < sr[j].np; k++) {
			free(sr[j].p[k].started);
			free(sr[j].p[k].os_build);
			free(sr[j].p[k].x);
		}
		free(sr[j].p);
		free(sr[j].key);
		free(sr[j].base);
	}
	free(sr);
	store_results_free(rows, nrows);
	buf_release(&out);
	store_close(s);
	return ret;
}

LEGACY_COMMAND(history, "a workload's series across OS builds with change points", cmd_history_main, usage_history);
