/* Charts: the speedup interval is the comparison's, the history chart
 * draws a series with hostile names through gnuplot without letting any
 * of it reach gnuplot's command language. */
#include "test.h"
#include "analysis/changepoint.h"
#include "analysis/compare.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/workload.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cell of k runs of r samples each around `level`. */
static void
make_cell(struct rep_cell *c, double level, int k, size_t r, double spread)
{
	size_t i;
	int j;

	memset(c, 0, sizeof(*c));
	c->ts = xmalloc((size_t)k * r * sizeof(double));
	c->run_n = xmalloc((size_t)k * sizeof(size_t));
	for (j = 0; j < k; j++) {
		for (i = 0; i < r; i++)
			c->ts[c->n++] = level * (1 + spread * ((double)i - r / 2.0) /
						 r + 0.01 * j);
		c->run_n[j] = r;
	}
	c->runs = k;
	c->sum.n = c->n;
}

static void
free_cell(struct rep_cell *c)
{
	free(c->ts);
	free(c->run_n);
}

/* The interval is cmp_compute's with the runs as processes, seed 1. */
static void
test_ratio_ci_is_the_comparison(void)
{
	struct rep_cell stock, shim;
	struct cmp_side a = { 0 }, b = { 0 };
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_result r;
	double x, lo, hi, x2, lo2, hi2;
	int j;

	make_cell(&stock, 430, 3, 10, 0.02);
	make_cell(&shim, 4800, 3, 10, 0.01);
	CHECK(plot_ratio_ci(&shim, &stock, &x, &lo, &hi) == 0);
	for (j = 0; j < 3; j++) {
		cmp_side_add(&a, j + 1, stock.ts + 10 * j, 10);
		cmp_side_add(&b, -(j + 1), shim.ts + 10 * j, 10);
	}
	CHECK(cmp_compute(&a, &b, &o, &r) == 0);
	CHECK_NEAR(x, r.ratio, 1e-12);
	CHECK_NEAR(lo, r.ci_lo, 1e-12);
	CHECK_NEAR(hi, r.ci_hi, 1e-12);
	CHECK(lo < x && x < hi);
	CHECK(r.kb == 3 && r.ka == 3);
	/* seeded: the same interval twice */
	CHECK(plot_ratio_ci(&shim, &stock, &x2, &lo2, &hi2) == 0);
	CHECK(x == x2 && lo == lo2 && hi == hi2);
	/* a side without samples has no ratio */
	stock.n = 0;
	CHECK(plot_ratio_ci(&shim, &stock, &x, &lo, &hi) == -1);
	CHECK(isnan(x));
	stock.n = 30;
	cmp_side_release(&a);
	cmp_side_release(&b);
	free_cell(&stock);
	free_cell(&shim);
}

static int
have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* history: a series with a change, hostile key, OS build and date. */
static void
test_history_chart(void)
{
	char pwned[64], *hostile;
	struct workload_series sr;
	struct workload_point pts[10];
	double x[10][3];
	const char *dates[10];
	size_t three = 3;
	struct cp_change *cp = NULL;
	struct plot_history_line line;
	struct buf svg = BUF_INIT;
	size_t ncp = 0;
	int k, i, rc;

	if (!have_gnuplot()) {
		printf("  SKIP gnuplot is not installed\n");
		return;
	}
	/* what gnuplot would run if a label reached its commands */
	snprintf(pwned, sizeof(pwned), "/tmp/shimbench-pwned-%ld",
		 (long)getpid());
	hostile = xstrfmt("t\"; system('touch %s') #/v\\ `touch %s` "
			  "$(touch %s) @x %%s", pwned, pwned, pwned);
	memset(&sr, 0, sizeof(sr));
	sr.key = hostile;
	sr.p = pts;
	sr.np = 10;
	for (k = 0; k < 10; k++) {
		memset(&pts[k], 0, sizeof(pts[k]));
		pts[k].session = k + 1;
		pts[k].os_build = k < 5 ? "25F84" : "26A\\\"; set output 'x";
		/* a step and a little jitter without a trend (a steady
		 * trend inside a segment is a change of its own) */
		for (i = 0; i < 3; i++)
			x[k][i] = (k < 5 ? 100 : 80) + i * 0.1 +
				((k * 7) % 5) * 0.01;
		pts[k].x = x[k];
		pts[k].n = 3;
		pts[k].plen = &three;
		pts[k].nproc = 1;
		dates[k] = "2026-09-01T10:00:00Z";
	}
	/* history's test (the E-divisive search over medians found a second,
	 * spurious change in the upward drift of the last five points) */
	workload_changepoints(&sr, 0.05, &cp, &ncp);
	CHECK(ncp == 1 && cp && cp[0].index == 5);
	line.sr = &sr;
	line.runtime = "mlx-lm";
	line.cp = cp;
	line.ncp = ncp;
	line.measured = dates;
	rc = plot_history(&line, 1, "svg", &svg);
	CHECK(rc == 0);
	CHECK(strstr(svg.buf, "<svg") != NULL);
	/* the key is text of the chart, quote and backslash replaced */
	CHECK(strstr(svg.buf, "(MLX-LM)") != NULL);
	CHECK(strstr(svg.buf, "t'; system('touch /tmp/shimbench-pwned-") != NULL);
	CHECK(strstr(svg.buf, "-20.0 % (p ") != NULL);
	/* a backslash and a double quote, each replaced */
	CHECK(strstr(svg.buf, "OS 26A/'; set output 'x") != NULL);
	/* a long key keeps both ends */
	CHECK(strstr(svg.buf, "\xe2\x80\xa6") != NULL);
	CHECK(strstr(svg.buf, "#6 2026-09-01") != NULL);
	CHECK(access(pwned, F_OK) != 0);
	buf_reset(&svg);
	/* no points: nothing to draw */
	sr.np = 0;
	CHECK(plot_history(&line, 1, "svg", &svg) == 1);
	buf_release(&svg);
	free(cp);
	free(sr.key);
}

int
main(void)
{
	static const struct test_case tests[] = {
		{ "ratio interval is the comparison's", test_ratio_ci_is_the_comparison },
		{ "history chart with hostile names", test_history_chart },
	};
	return test_main(tests, ARRAY_SIZE(tests));
}
