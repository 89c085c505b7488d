#define _POSIX_C_SOURCE 200809L
#include "analysis/plot.h"
#include "base/proc.h"
#include "analysis/report.h"
#include "base/files.h"
#include "base/json.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const plot_charts[] = { "throughput", "speedup", NULL };

/*
 * A label for gnuplot's data file: no quotes, no control characters, and
 * valid UTF-8 of characters XML allows (gnuplot copies it into the SVG).
 */
static void
add_label(struct buf *b, const char *s)
{
	size_t left = strlen(s), n;

	buf_addch(b, '"');
	while (left) {
		unsigned char c = (unsigned char)*s;

		n = c < 0x80 ? 1 : json_utf8_len(s, left);
		if (c == '"')
			buf_addch(b, '\'');
		else if (c < 0x20 || c == 0x7f)
			buf_addch(b, ' ');
		else if (!n || (n == 3 && !memcmp(s, "\xef\xbf", 2) &&
				((unsigned char)s[2] & 0xfe) == 0xbe))
			buf_addch(b, '?');   /* not UTF-8, or U+FFFE/U+FFFF */
		else
			buf_add(b, s, n);
		n = n ? n : 1;
		s += n;
		left -= n;
	}
	buf_addch(b, '"');
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
 * The data file: one line per workload with the three roles (median,
 * min, max) and the guest speedup. Returns the number of lines that have
 * something to draw for chart.
 */
static int
write_data(const struct report *r, const char *chart, struct buf *d)
{
	size_t i;
	int rows = 0;

	for (i = 0; i < r->n; i++) {
		const struct rep_workload *w = &r->w[i];
		double ratio = report_guest_ratio(w);
		char *label;

		if (!strcmp(chart, "speedup") && isnan(ratio))
			continue;
		if (!w->host.sum.n && !w->stock.sum.n && !w->shim.sum.n)
			continue;
		label = xstrfmt("%s %s", w->label, w->test);
		add_label(d, label);
		free(label);
		add_cell(d, &w->host);
		add_cell(d, &w->stock);
		add_cell(d, &w->shim);
		if (isnan(ratio))
			buf_adds(d, " ?\n");
		else
			buf_addf(d, " %.17g\n", ratio);
		rows++;
	}
	return rows;
}

static void
write_script(const char *chart, const char *term, int rows, struct buf *g)
{
	if (!strcmp(term, "png"))
		buf_adds(g, "set terminal pngcairo size 1000,560 noenhanced "
			 "font 'sans,11' background '#ffffff'\n"
			 "set output 'chart.out'\n");
	else
		buf_adds(g, "set terminal svg size 1000,560 dynamic noenhanced "
			 "font 'sans,11' background '#ffffff'\n"
			 "set output 'chart.out'\n");
	buf_adds(g, "set datafile missing '?'\n"
		 "set style data histograms\n"
		 "set style fill solid 0.85 border -1\n"
		 "set grid ytics\n"
		 "set key outside top center horizontal\n"
		 "set xtics rotate by -25 left\n"
		 "set bmargin 9\n"
		 "set offsets 0, 0, graph 0.12, 0\n");
	buf_addf(g, "set xrange [-0.6:%g]\n", rows - 0.4);
	if (!strcmp(chart, "throughput")) {
		buf_adds(g, "set title 'llama-bench throughput: median tokens/s "
			 "per role (bars: min–max)'\n"
			 "set style histogram errorbars gap 2 lw 1\n"
			 "set logscale y\n"
			 "set ylabel 'tokens/s (log scale)'\n"
			 "plot 'data.dat' using 2:3:4:xtic(1) title 'bare-metal "
			 "host' lc rgb '#4c72b0', '' using 5:6:7 title 'stock "
			 "guest' lc rgb '#c44e52', '' using 8:9:10 title 'shim "
			 "guest' lc rgb '#55a868'\n");
	} else {
		buf_adds(g, "set title 'guest speedup: shim ÷ stock (median "
			 "tokens/s)'\n"
			 "set style histogram clustered gap 2\n"
			 "set yrange [0:*]\n"
			 "set ylabel 'speedup (×)'\n"
			 "plot 'data.dat' using 11:xtic(1) title 'shim ÷ stock' "
			 "lc rgb '#55a868', '' using 0:11:(sprintf('%.2f×', $11)) "
			 "with labels offset 0,1 notitle\n");
	}
}

static int
have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int found = 0;

	if (!path)
		return 0;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *p = xstrfmt("%s/gnuplot", *dir ? dir : ".");
		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

int
plot_chart(const struct report *r, const char *chart, const char *term,
	   struct buf *out)
{
	const char *argv[] = { "gnuplot", "script.gp", NULL };
	struct buf data = BUF_INIT, script = BUF_INIT, path = BUF_INIT;
	struct proc p = PROC_INIT;
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL, *f;
	int ret = -1, rows;

	if (!have_gnuplot())
		return -2;
	rows = write_data(r, chart, &data);
	if (rows == 0) {
		buf_release(&data);
		return 1;
	}
	write_script(chart, term, rows, &script);
	dir = xstrfmt("%s/shimbench-plot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		error("cannot create a temporary directory '%s': %s", dir,
		      strerror(errno));
		goto cleanup;
	}
	f = xstrfmt("%s/data.dat", dir);
	ret = write_file_atomic(f, data.buf, data.len);
	free(f);
	f = xstrfmt("%s/script.gp", dir);
	if (ret == 0)
		ret = write_file_atomic(f, script.buf, script.len);
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
	buf_addf(&path, "%s/chart.out", dir);
	if (buf_read_file(out, path.buf) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (dir) {
		static const char *const names[] = { "data.dat", "script.gp",
						     "chart.out" };
		size_t i;
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			f = xstrfmt("%s/%s", dir, names[i]);
			unlink(f);
			free(f);
		}
		rmdir(dir);
	}
	free(dir);
	proc_release(&p);
	buf_release(&data);
	buf_release(&script);
	buf_release(&path);
	return ret;
}

int
plot_report(const struct report *r, const char *dir, int png,
	    struct buf *written)
{
	size_t i, t;
	int rc;

	if (mkdir_p(dir) < 0)
		return -1;
	for (i = 0; plot_charts[i]; i++) {
		for (t = 0; t < (png ? 2u : 1u); t++) {
			const char *term = t ? "png" : "svg";
			struct buf img = BUF_INIT;
			char *f;

			rc = plot_chart(r, plot_charts[i], term, &img);
			if (rc == 1) {
				buf_release(&img);
				break;
			}
			if (rc < 0) {
				buf_release(&img);
				return rc;
			}
			f = xstrfmt("%s/%s.%s", dir, plot_charts[i], term);
			rc = write_file_atomic(f, img.buf, img.len);
			if (rc == 0)
				buf_addf(written, "%s\n", f);
			free(f);
			buf_release(&img);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}
