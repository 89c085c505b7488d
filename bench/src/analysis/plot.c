#define _POSIX_C_SOURCE 200809L
#include "analysis/plot.h"
#include "analysis/changepoint.h"
#include "analysis/compare.h"
#include "analysis/report.h"
#include "analysis/stats.h"
#include "analysis/workload.h"
#include "evidence/store.h"
#include "base/proc.h"
#include "base/files.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const plot_charts[] = { "throughput", "speedup", "percent", NULL };

/* ---- gnuplot in a private directory --------------------------------------- */

/* Longest labels, in characters: gnuplot drops a key it cannot fit. */
#define KEY_MAX 90
#define TIC_MAX 64

/* One character of a data-file string (see add_label_max). */
static void
add_char(struct buf *b, const char *s, size_t len)
{
	unsigned char c = (unsigned char)*s;

	if (c == '"')
		buf_addch(b, '\'');
	else if (c == '\\')
		buf_addch(b, '/');
	else if (c < 0x20 || c == 0x7f)
		buf_addch(b, ' ');
	else
		buf_add(b, s, len);
}

/*
 * The label as valid UTF-8 of characters XML allows (gnuplot copies it
 * into the SVG): a byte that is not UTF-8, U+FFFE or U+FFFF becomes '?'.
 * The caller frees it.
 */
static char *
clean_label(const char *s)
{
	struct buf b = BUF_INIT;
	size_t left = strlen(s), n;

	while (left) {
		unsigned char c = (unsigned char)*s;

		n = c < 0x80 ? 1 : json_utf8_len(s, left);
		if (!n || (n == 3 && !memcmp(s, "\xef\xbf", 2) &&
			   ((unsigned char)s[2] & 0xfe) == 0xbe))
			buf_addch(&b, '?');
		else
			buf_add(&b, s, n);
		n = n ? n : 1;
		s += n;
		left -= n;
	}
	return buf_detach(&b, NULL);
}

/*
 * A label for gnuplot's data file: one double-quoted string. Inside it
 * gnuplot gives '"' and '\' a meaning, so '"' becomes a single quote and
 * '\' a slash (ASCII: a glyph the chart's font lacks can come out huge
 * in PNG); control characters become spaces; only valid UTF-8 of
 * characters XML allows goes through (clean_label()).
 * Longer than max characters, its middle gives way to "…": both ends
 * (model, runtime, test) stay.
 */
static void
add_label_max(struct buf *b, const char *label, size_t max)
{
	char *s = clean_label(label);
	size_t n = 0, i, len, head, tail, k = 0;

	for (i = 0; s[i]; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	head = n > max ? (max - 1) / 2 : n;
	tail = n > max ? max - 1 - head : 0;
	buf_addch(b, '"');
	for (i = 0; s[i]; i += len, k++) {
		for (len = 1; s[i + len] &&
		     ((unsigned char)s[i + len] & 0xc0) == 0x80; len++)
			;
		if (k == head && n > max)
			buf_adds(b, "\xe2\x80\xa6");
		if (k < head || k >= n - tail)
			add_char(b, s + i, len);
	}
	buf_addch(b, '"');
	free(s);
}

/* Characters of a label as a tic shows it (at most TIC_MAX). */
static size_t
label_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n > TIC_MAX ? TIC_MAX : n;
}

static void
add_label(struct buf *b, const char *s)
{
	add_label_max(b, s, TIC_MAX);
}

static int
have_gnuplot(void)
{
	char *p = path_find("gnuplot");
	int found = p != NULL;

	free(p);
	return found;
}

/* The terminal and the settings every chart shares. */
static void
script_head(struct buf *g, const char *term, int height)
{
	if (!strcmp(term, "png"))
		buf_addf(g, "set terminal pngcairo size 1000,%d noenhanced "
			 "font 'sans,11' background '#ffffff'\n", height);
	else
		buf_addf(g, "set terminal svg size 1000,%d dynamic noenhanced "
			 "font 'sans,11' background '#ffffff'\n", height);
	buf_adds(g, "set output 'chart.out'\n"
		 "set datafile missing '?'\n"
		 "set grid ytics\n"
		 "set key outside top center horizontal\n");
}

/*
 * Runs gnuplot on data and script in a new private directory, the only
 * names it sees being data.dat, script.gp and chart.out, and appends the
 * chart to out. 0, or -1 after error().
 */
static int
run_gnuplot(const struct buf *data, const struct buf *script, struct buf *out)
{
	static const char *const names[] = { "data.dat", "script.gp",
					     "chart.out" };
	const char *argv[] = { "gnuplot", "script.gp", NULL };
	struct proc p = PROC_INIT;
	const char *tmp = getenv("TMPDIR");
	char *dir, *f;
	size_t i;
	int ret = -1;

	dir = xstrfmt("%s/shimbench-plot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		error("cannot create a temporary directory '%s': %s", dir,
		      strerror(errno));
		free(dir);
		return -1;
	}
	f = xstrfmt("%s/data.dat", dir);
	ret = write_file_atomic(f, data->buf, data->len);
	free(f);
	f = xstrfmt("%s/script.gp", dir);
	if (ret == 0)
		ret = write_file_atomic(f, script->buf, script->len);
	free(f);
	if (ret < 0)
		goto cleanup;
	ret = -1;
	p.argv = argv;
	p.cwd = dir;
	p.timeout = 60;
	if (proc_run(&p) < 0 || p.status != 0) {
		struct buf d = BUF_INIT;
		proc_describe(&p, &d);
		error("gnuplot failed (%s): %.300s", d.buf, p.err.buf);
		buf_release(&d);
		goto cleanup;
	}
	f = xstrfmt("%s/chart.out", dir);
	ret = buf_read_file(out, f);
	free(f);
cleanup:
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		f = xstrfmt("%s/%s", dir, names[i]);
		unlink(f);
		free(f);
	}
	rmdir(dir);
	free(dir);
	proc_release(&p);
	return ret;
}

/* ---- the report's charts ------------------------------------------------- */

/* "LABEL (RUNTIME)[ [config]][ [tampered]] TEST[ · session N]" (caller
 * frees): the session last, so a label still reads "(llama.cpp) pp512". */
static char *
workload_label(const struct rep_workload *w)
{
	struct rep_workload plain = *w;
	char *name, *s;

	plain.session = 0;
	name = report_workload_name(&plain);
	if (w->session)
		s = xstrfmt("%s %s · session %lld", name, w->test,
			    (long long)w->session);
	else
		s = xstrfmt("%s %s", name, w->test);
	free(name);
	return s;
}

static void
add_cell(struct buf *b, const struct rep_cell *c)
{
	if (!c->sum.n)
		buf_adds(b, " ? ? ?");
	else
		buf_addf(b, " %.17g %.17g %.17g", c->sum.median, c->sum.min,
			 c->sum.max);
}

/*
 * A cell as a side of a comparison: each run one process. The ids only
 * tell processes apart (sign: the side), so two cells are never taken
 * for the same processes.
 */
static void
cell_side(const struct rep_cell *c, int sign, struct cmp_side *s)
{
	size_t off = 0;
	int i = 0;

	memset(s, 0, sizeof(*s));
	if (c->run_n && c->runs > 0) {
		for (i = 0; i < c->runs && off + c->run_n[i] <= c->n; i++) {
			if (c->run_n[i])
				cmp_side_add(s, sign * (i + 1), c->ts + off,
					     c->run_n[i]);
			off += c->run_n[i];
		}
	}
	if (off < c->n)   /* no run boundaries: one process */
		cmp_side_add(s, sign * (i + 1), c->ts + off, c->n - off);
}

int
plot_ratio_ci(const struct rep_cell *num, const struct rep_cell *den,
	      double *ratio, double *lo, double *hi)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_side a, b;
	struct cmp_result r;
	int rc;

	*ratio = *lo = *hi = NAN;
	if (!num->n || !den->n)
		return -1;
	cell_side(den, 1, &a);
	cell_side(num, -1, &b);
	error_silent++;
	rc = cmp_compute(&a, &b, &o, &r);
	error_silent--;
	cmp_side_release(&a);
	cmp_side_release(&b);
	if (rc < 0)
		return -1;
	*ratio = r.ratio;
	*lo = r.ci_lo;
	*hi = r.ci_hi;
	return 0;
}

/* " RATIO LO HI" scaled; "? ? ?" when there is no ratio. */
static double
add_ratio(struct buf *d, const struct rep_cell *num, const struct rep_cell *den,
	  double scale)
{
	double x, lo, hi;

	if (plot_ratio_ci(num, den, &x, &lo, &hi) < 0 || !isfinite(x)) {
		buf_adds(d, " ? ? ?");
		return NAN;
	}
	if (!isfinite(lo) || !isfinite(hi))
		lo = hi = x;   /* no interval: a bar of no width */
	buf_addf(d, " %.17g %.17g %.17g", x * scale, lo * scale, hi * scale);
	return hi * scale;
}

/*
 * The data file of a report chart: one line per workload it draws.
 * Returns the number of lines; *top gets the highest value drawn.
 */
/*
 * The right margin (pixels of the 1000 px chart) that the x labels of a
 * chart of rows bars need: a label rotated by -25 degrees, left-aligned
 * at its tic, runs right by about len x 7.6 px x cos 25; the last bars'
 * labels must end inside the picture, never cut (issue 22). A few rounds,
 * as a wider margin narrows the bars.
 */
static double
label_room(const size_t *len, int rows)
{
	double room = 40, width;
	int k, round;

	for (round = 0; round < 4; round++) {
		double need = 40;

		width = 1000 - 90 - room;   /* the plot: less the y axis */
		for (k = 0; k < rows; k++) {
			double run = len[k] * 7.6 * 0.9063;
			double to_edge = (rows - 0.4 - k) * width / (rows + 0.2);

			if (run - to_edge + 16 > need)
				need = run - to_edge + 16;
		}
		if (need > 520)
			need = 520;
		room = need;
	}
	return room;
}

static int
report_data(const struct report *r, const char *chart, struct buf *d,
	    double *top, double *room)
{
	size_t i, *len = xcalloc(r->n + 1, sizeof(size_t));
	int rows = 0;

	*top = 0;
	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		char *label;
		double h1, h2;

		if (!strcmp(chart, "throughput")) {
			if (!w->host.sum.n && !w->stock.sum.n && !w->shim.sum.n)
				continue;
		} else if (!strcmp(chart, "speedup")) {
			if (!w->stock.sum.n || !w->shim.sum.n)
				continue;
		} else if (!w->host.sum.n || (!w->stock.sum.n && !w->shim.sum.n)) {
			continue;
		}
		label = workload_label(w);
		len[rows] = label_chars(label);
		add_label(d, label);
		free(label);
		if (!strcmp(chart, "throughput")) {
			add_cell(d, &w->host);
			add_cell(d, &w->stock);
			add_cell(d, &w->shim);
		} else if (!strcmp(chart, "speedup")) {
			h1 = add_ratio(d, &w->shim, &w->stock, 1);
			if (h1 > *top)
				*top = h1;
		} else {
			h1 = add_ratio(d, &w->stock, &w->host, 100);
			h2 = add_ratio(d, &w->shim, &w->host, 100);
			if (h1 > *top)
				*top = h1;
			if (h2 > *top)
				*top = h2;
		}
		buf_addch(d, '\n');
		rows++;
	}
	*room = label_room(len, rows);
	free(len);
	return rows;
}

/* The roles' names in the legends: host and guest only where the
 * report says a target is a VM (report.h guest). */
static void
report_script(const char *chart, const char *term, int rows, double top,
	      double room, int guest, struct buf *g)
{
	const char *bare = guest ? "bare-metal host" : "bare";
	const char *stock = guest ? "stock guest" : "stock";
	const char *shim = guest ? "shim guest" : "shim";

	/* room below for rotated labels of up to TIC_MAX characters, and
	 * right of the plot for the last ones */
	script_head(g, term, 640);
	buf_adds(g, "set style data histograms\n"
		 "set style fill solid 0.85 border -1\n"
		 "set xtics rotate by -25 left\n"
		 "set bmargin 13\n");
	buf_addf(g, "set rmargin at screen %.4f\n", 1 - room / 1000);
	buf_addf(g, "set xrange [-0.6:%g]\n", rows - 0.4);
	if (!strcmp(chart, "throughput")) {
		buf_adds(g, "set offsets 0, 0, graph 0.12, 0\n"
			 "set title 'llama-bench throughput: median tokens/s "
			 "per role (bars: min–max)'\n"
			 "set style histogram errorbars gap 2 lw 1\n"
			 "set logscale y\n"
			 "set ylabel 'tokens/s (log scale)'\n");
		buf_addf(g, "plot 'data.dat' using 2:3:4:xtic(1) title '%s' lc "
			 "rgb '#4c72b0', '' using 5:6:7 title '%s' lc rgb "
			 "'#c44e52', '' using 8:9:10 title '%s' lc rgb '#55a868'\n",
			 bare, stock, shim);
	} else if (!strcmp(chart, "speedup")) {
		buf_addf(g, "set title '%sspeedup: shim ÷ stock, median "
			 "tokens/s (error bars: 95 %% bootstrap interval)'\n",
			 guest ? "guest " : "");
		buf_adds(g, "set style histogram errorbars gap 2 lw 1.5\n"
			 "set ylabel 'speedup (×)'\n");
		buf_addf(g, "set yrange [0:%.6g]\n", top > 1 ? top * 1.15 : 1.3);
		buf_adds(g, "set arrow from graph 0, first 1 to graph 1, first 1 "
			 "nohead dt 2 lw 1.5 lc rgb '#333333' front\n"
			 "plot 'data.dat' using 2:3:4:xtic(1) title 'shim ÷ "
			 "stock' lc rgb '#55a868', '' using 0:4:(sprintf('%.2f×', "
			 "$2)) with labels offset 0,0.8 notitle, keyentry with "
			 "lines dt 2 lw 1.5 lc rgb '#333333' title '1× = no "
			 "speedup'\n");
	} else {
		buf_addf(g, "set title 'percent of bare metal: %s median "
			 "tokens/s ÷ %s (error bars: 95 %% bootstrap "
			 "interval)'\n", guest ? "guest" : "stock and shim",
			 bare);
		buf_adds(g, "set style histogram errorbars gap 2 lw 1.5\n"
			 "set ylabel 'percent of bare metal'\n");
		buf_addf(g, "set yrange [0:%.6g]\n", top > 100 ? top * 1.1 : 110);
		buf_adds(g, "set arrow from graph 0, first 100 to graph 1, first "
			 "100 nohead dt 2 lw 1.5 lc rgb '#333333' front\n");
		buf_addf(g, "plot 'data.dat' using 2:3:4:xtic(1) title '%s' "
			 "lc rgb '#c44e52', '' using 5:6:7 title '%s' lc ", stock,
			 shim);
		buf_adds(g, "rgb '#55a868', '' using ($0-0.125):4:"
			 "(sprintf('%.1f %%', $2)) with labels offset 0,0.8 notitle, '' using "
			 "($0+0.125):7:(sprintf('%.1f %%', $5)) with labels "
			 "offset 0,0.8 notitle, keyentry with lines dt 2 lw 1.5 "
			 "lc rgb '#333333' title '100 % = bare metal'\n");
	}
}

int
plot_chart(const struct report *r, const char *chart, const char *term,
	   struct buf *out)
{
	struct buf data = BUF_INIT, script = BUF_INIT;
	double top, room;
	int rows, ret;

	if (!have_gnuplot())
		return PLOT_NO_GNUPLOT;
	rows = report_data(r, chart, &data, &top, &room);
	if (rows == 0) {
		buf_release(&data);
		return 1;
	}
	report_script(chart, term, rows, top, room, r->guest, &script);
	ret = run_gnuplot(&data, &script, out);
	buf_release(&data);
	buf_release(&script);
	return ret;
}

/* ---- history --------------------------------------------------------------- */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The x position of a session among the sorted sessions xs. */
static size_t
xpos(const int64_t *xs, size_t nx, int64_t session)
{
	size_t i;

	for (i = 0; i < nx; i++)
		if (xs[i] == session)
			return i;
	return 0;
}

/* The sessions of the lines, each once (unsorted; caller frees). */
static int64_t *
history_sessions(const struct plot_history_line *lines, size_t n, size_t *nx)
{
	int64_t *xs = NULL;
	size_t i, k, j;

	*nx = 0;
	for (i = 0; i < n; i++)
		for (k = 0; k < lines[i].sr->np; k++) {
			int64_t sid = lines[i].sr->p[k].session;

			for (j = 0; j < *nx && xs[j] != sid; j++)
				;
			if (j == *nx) {
				xs = xrealloc(xs, (*nx + 1) * sizeof(*xs));
				xs[(*nx)++] = sid;
			}
		}
	return xs;
}

int
plot_history(const struct plot_history_line *lines, size_t n,
	     const char *term, struct buf *out)
{
	struct buf d = BUF_INIT, g = BUF_INIT;
	int64_t *xs = NULL;
	size_t nx = 0, i, k, q, block = 0, ncp = 0;
	double lo = INFINITY, hi = 0;
	int ret;

	if (!have_gnuplot())
		return PLOT_NO_GNUPLOT;
	xs = history_sessions(lines, n, &nx);
	if (!nx)
		return 1;
	xqsort(xs, nx, sizeof(*xs), cmp_i64);
	/* block 0: the x tics, "#ID DATE" (the first date known) */
	for (q = 0; q < nx; q++) {
		const char *date = "";
		char *tic;

		for (i = 0; i < n && !*date; i++)
			for (k = 0; lines[i].measured && k < lines[i].sr->np; k++)
				if (lines[i].sr->p[k].session == xs[q] &&
				    lines[i].measured[k] && *lines[i].measured[k]) {
					date = lines[i].measured[k];
					break;
				}
		tic = xstrfmt("#%lld %.10s", (long long)xs[q], date);
		buf_addf(&d, "%zu ", q);
		add_label(&d, tic);
		buf_addch(&d, '\n');
		free(tic);
	}
	/* a block per line: position, median, min, max, OS build where it changes */
	for (i = 0; i < n; i++) {
		const struct workload_series *sr = lines[i].sr;
		char *title;

		if (!sr->np)
			continue;
		title = xstrfmt("%s (%s)", sr->key, lines[i].runtime ?
				report_runtime_display(lines[i].runtime) :
				"runtime not recorded");
		buf_adds(&d, "\n\n\"x\" ");
		add_label_max(&d, title, KEY_MAX);
		buf_adds(&d, " \"lo\" \"hi\" \"os\"\n");
		free(title);
		for (k = 0; k < sr->np; k++) {
			const struct workload_point *pt = &sr->p[k];
			struct summary sum;
			char *os;

			stats_summary(pt->x, pt->n, &sum);
			if (!sum.n)
				continue;
			if (sum.min > 0 && sum.min < lo)
				lo = sum.min;
			if (sum.max > hi)
				hi = sum.max;
			buf_addf(&d, "%zu %.17g %.17g %.17g ",
				 xpos(xs, nx, pt->session), sum.median, sum.min,
				 sum.max);
			os = xstrfmt("OS %s", pt->os_build ? pt->os_build : "");
			add_label(&d, pt->os_build && *pt->os_build &&
				  (k == 0 || !sr->p[k - 1].os_build ||
				   strcmp(sr->p[k - 1].os_build, pt->os_build)) ?
				  os : "");
			free(os);
			buf_addch(&d, '\n');
		}
		block++;
	}
	/* the change points: position, median after, shift */
	for (i = 0; i < n; i++)
		for (q = 0; q < lines[i].ncp; q++) {
			const struct cp_change *c = &lines[i].cp[q];
			const struct workload_series *sr = lines[i].sr;
			char text[96];

			if (c->index == 0 || c->index >= sr->np)
				continue;
			if (!ncp)
				buf_adds(&d, "\n\n");
			snprintf(text, sizeof(text), "%+.1f %% (p %.2g)",
				 (c->after / c->before - 1) * 100, c->p);
			buf_addf(&d, "%zu %.17g ",
				 xpos(xs, nx, sr->p[c->index].session), c->after);
			add_label(&d, text);
			buf_addch(&d, '\n');
			ncp++;
		}

	script_head(&g, term, 560);
	buf_adds(&g, "set title 'history: median tokens/s per session (bars: "
		 "min–max; dashed: change point)'\n"
		 "set xtics rotate by -25 left\n"
		 "set bmargin 8\n");
	buf_addf(&g, "set xrange [-0.5:%g]\n", nx - 0.5);
	if (!(hi > 0) || !(lo < INFINITY))
		lo = hi = 1;
	if (hi / lo > 5) {
		buf_adds(&g, "set logscale y\nset ylabel 'tokens/s (log scale)'\n");
		buf_addf(&g, "set yrange [%.6g:%.6g]\n", lo / 1.6, hi * 1.6);
	} else {
		double span = hi > lo ? hi - lo : hi * 0.1 + 1e-9;
		buf_adds(&g, "set ylabel 'tokens/s'\n");
		buf_addf(&g, "set yrange [%.6g:%.6g]\n",
			 lo - 0.25 * span > 0 ? lo - 0.25 * span : 0,
			 hi + 0.25 * span);
	}
	for (i = 0; i < n; i++)
		for (q = 0; q < lines[i].ncp; q++) {
			const struct cp_change *c = &lines[i].cp[q];
			const struct workload_series *sr = lines[i].sr;
			double x;

			if (c->index == 0 || c->index >= sr->np)
				continue;
			x = (xpos(xs, nx, sr->p[c->index - 1].session) +
			     xpos(xs, nx, sr->p[c->index].session)) / 2.0;
			buf_addf(&g, "set arrow from first %.2f, graph 0 to first "
				 "%.2f, graph 1 nohead dt 2 lw 1.5 lc rgb "
				 "'#c44e52' back\n", x, x);
		}
	buf_adds(&g, "plot 'data.dat' index 0 using 1:(NaN):xtic(2) notitle");
	for (i = 1; i <= block; i++)
		buf_addf(&g, ", '' index %zu using 1:2:3:4 with yerrorlines lw 2 "
			 "pt 7 title columnheader(2), '' index %zu using 1:2:5 "
			 "with labels offset 0,-1.2 notitle", i, i);
	if (ncp)
		buf_addf(&g, ", '' index %zu using 1:2 with points pt 9 ps 2.2 "
			 "lc rgb '#c44e52' title 'change point (shift, p)', '' "
			 "index %zu using 1:2:3 with labels offset 0,1.6 tc rgb "
			 "'#c44e52' notitle", block + 1, block + 1);
	buf_addch(&g, '\n');
	ret = block ? run_gnuplot(&d, &g, out) : 1;
	free(xs);
	buf_release(&d);
	buf_release(&g);
	return ret;
}

/* ---- the history charts of a report --------------------------------------- */

static int
same_workload(const struct store_result *a, const struct store_result *b)
{
	return !strcmp(a->model, b->model) && !strcmp(a->runtime, b->runtime) &&
	       !strcmp(a->test, b->test);
}

/* The measurement date of each session: its earliest run of rows. */
struct session_date {
	int64_t session;
	char *date;
};

static const char *
date_of(const struct session_date *d, size_t n, int64_t session)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (d[i].session == session)
			return d[i].date;
	return "";
}

static int
session_dates(struct store *s, const struct store_result *rows, size_t n,
	      struct session_date **out, size_t *nout)
{
	struct store_run_facts *f = NULL;
	int64_t *ids = NULL;
	size_t nids = 0, i, j;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < n; i++)
		if (!nids || ids[nids - 1] != rows[i].run_id) {
			ids = xrealloc(ids, (nids + 1) * sizeof(*ids));
			ids[nids++] = rows[i].run_id;
		}
	if (store_run_facts(s, ids, nids, &f) < 0) {
		free(ids);
		return -1;
	}
	for (i = 0; i < nids; i++) {
		if (!f[i].id)
			continue;
		for (j = 0; j < *nout && (*out)[j].session != f[i].session_id; j++)
			;
		if (j == *nout) {
			*out = xrealloc(*out, (j + 1) * sizeof(**out));
			(*out)[j].session = f[i].session_id;
			(*out)[j].date = xstrdup("");
			(*nout)++;
		}
		if (*f[i].started_at && (!*(*out)[j].date ||
		    strcmp(f[i].started_at, (*out)[j].date) < 0)) {
			free((*out)[j].date);
			(*out)[j].date = xstrdup(f[i].started_at);
		}
	}
	store_run_facts_free(f, nids);
	free(ids);
	return 0;
}

int
plot_histories_load(struct store *s, const struct selection *sel,
		    struct plot_histories *out)
{
	struct store_result *rows = NULL, *grp;
	struct session_date *dates = NULL;
	size_t n, ndates = 0, i, j, k, ng;
	char *done;

	memset(out, 0, sizeof(*out));
	if (store_query_results(s, sel, &rows, &n) < 0)
		return -1;
	if (session_dates(s, rows, n, &dates, &ndates) < 0) {
		store_results_free(rows, n);
		return -1;
	}
	done = xcalloc(n ? n : 1, 1);
	grp = xcalloc(n ? n : 1, sizeof(*grp));
	for (i = 0; i < n; i++) {
		struct plot_hist_chart c;
		int repeated = 0;

		if (done[i])
			continue;
		/* the workload's rows: shallow copies, read only */
		for (ng = 0, j = i; j < n; j++)
			if (!done[j] && same_workload(&rows[i], &rows[j])) {
				grp[ng++] = rows[j];
				done[j] = 1;
			}
		memset(&c, 0, sizeof(c));
		workload_series(s, grp, ng, &c.sr, &c.ns);
		for (j = 0; j < c.ns; j++)
			repeated |= c.sr[j].np >= 2;
		if (!repeated) {
			workload_series_free(c.sr, c.ns);
			continue;
		}
		c.title = xstrfmt("%s (%s) %s", *rows[i].model_label ?
				  rows[i].model_label : rows[i].model,
				  report_runtime_display(rows[i].runtime),
				  rows[i].test);
		c.runtime = xstrdup(rows[i].runtime);
		c.cp = xcalloc(c.ns, sizeof(*c.cp));
		c.ncp = xcalloc(c.ns, sizeof(*c.ncp));
		c.measured = xcalloc(c.ns, sizeof(*c.measured));
		for (j = 0; j < c.ns; j++) {
			const struct workload_series *sr = &c.sr[j];

			c.measured[j] = xcalloc(sr->np + 1, sizeof(char *));
			for (k = 0; k < sr->np; k++)
				c.measured[j][k] = xstrdup(date_of(dates, ndates,
							   sr->p[k].session));
			workload_changepoints(sr, PLOT_HISTORY_P, &c.cp[j],
					      &c.ncp[j]);
		}
		out->c = xrealloc(out->c, (out->n + 1) * sizeof(*out->c));
		out->c[out->n++] = c;
	}
	free(grp);
	free(done);
	for (i = 0; i < ndates; i++)
		free(dates[i].date);
	free(dates);
	store_results_free(rows, n);
	return 0;
}

int
plot_histories_draw(const struct plot_histories *h, size_t i,
		    const char *term, struct buf *out)
{
	const struct plot_hist_chart *c = &h->c[i];
	struct plot_history_line *l = xcalloc(c->ns ? c->ns : 1, sizeof(*l));
	size_t j;
	int ret;

	for (j = 0; j < c->ns; j++) {
		l[j].sr = &c->sr[j];
		l[j].runtime = c->runtime;
		l[j].cp = c->cp[j];
		l[j].ncp = c->ncp[j];
		l[j].measured = (const char *const *)c->measured[j];
	}
	ret = plot_history(l, c->ns, term, out);
	free(l);
	return ret;
}

void
plot_histories_release(struct plot_histories *h)
{
	size_t i, j;

	for (i = 0; i < h->n; i++) {
		struct plot_hist_chart *c = &h->c[i];
		for (j = 0; j < c->ns; j++) {
			free(c->cp[j]);
			strv_free(c->measured[j]);
		}
		free(c->cp);
		free(c->ncp);
		free(c->measured);
		workload_series_free(c->sr, c->ns);
		free(c->title);
		free(c->runtime);
	}
	free(h->c);
	memset(h, 0, sizeof(*h));
}

/* ---- files ----------------------------------------------------------------- */

static int
write_chart(const char *dir, const char *name, const char *term,
	    const struct buf *img, struct buf *written)
{
	char *f = xstrfmt("%s/%s.%s", dir, name, term);
	int rc = write_file_atomic(f, img->buf, img->len);

	if (rc == 0)
		buf_addf(written, "%s\n", f);
	free(f);
	return rc;
}

int
plot_report(const struct report *r, const struct plot_histories *h,
	    const char *dir, int png, struct buf *written)
{
	size_t i, t;
	int rc;

	if (mkdir_p(dir) < 0)
		return -1;
	for (i = 0; plot_charts[i]; i++) {
		for (t = 0; t < (png ? 2u : 1u); t++) {
			const char *term = t ? "png" : "svg";
			struct buf img = BUF_INIT;

			rc = plot_chart(r, plot_charts[i], term, &img);
			if (rc == 0)
				rc = write_chart(dir, plot_charts[i], term, &img,
						 written);
			buf_release(&img);
			if (rc == 1)
				break;
			if (rc < 0)
				return rc;
		}
	}
	for (i = 0; h && i < h->n; i++) {
		char name[48];

		snprintf(name, sizeof(name), "history-%zu", i + 1);
		for (t = 0; t < (png ? 2u : 1u); t++) {
			const char *term = t ? "png" : "svg";
			struct buf img = BUF_INIT;

			rc = plot_histories_draw(h, i, term, &img);
			if (rc == 0)
				rc = write_chart(dir, name, term, &img, written);
			buf_release(&img);
			if (rc == 1)
				break;
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}
