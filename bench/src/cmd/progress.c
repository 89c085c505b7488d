#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "run/session.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The run engine's progress on stderr: one live line on a terminal
 * (process i/N, variant, model, round, elapsed, estimated time left,
 * refreshed about once a second), one line per finished process, and
 * the engine's notes. Nothing with --quiet.
 */
static void
fmt_secs(char *out, size_t size, double s)
{
	int t = (int)(s + 0.5);

	snprintf(out, size, "%d:%02d", t / 60, t % 60);
}

void
cmd_run_progress(void *ctx, const struct run_event *e)
{
	const struct cmd_progress *pg = ctx;
	char el[16], left[16];

	if (pg->quiet)
		return;
	switch (e->kind) {
	case RUN_EV_NOTE:
		fprintf(stderr, "%s\n", e->text);
		break;
	case RUN_EV_SESSION:
		fprintf(stderr, "session %lld: %zu processes, %s\n",
			(long long)e->session, e->total, e->text);
		break;
	case RUN_EV_BEGIN:
	case RUN_EV_TICK:
		if (!pg->tty)
			break;
		fmt_secs(el, sizeof(el), e->elapsed);
		fmt_secs(left, sizeof(left), e->eta > 0 ? e->eta : 0);
		fprintf(stderr, "\r\033[K[%zu/%zu] %s · %s · round %d · %s "
			"elapsed%s%s", e->seq, e->total, e->variant, e->model,
			e->round + 1, el, e->eta >= 0 ? " · ~" : "",
			e->eta >= 0 ? left : "");
		if (e->eta >= 0)
			fputs(" left", stderr);
		fflush(stderr);
		break;
	case RUN_EV_END:
		if (pg->tty)
			fputs("\r\033[K", stderr);
		fprintf(stderr, "run %zu/%zu: variant %s, model %s: %s%s%s "
			"(%.1f s)\n", e->seq, e->total, e->variant, e->model,
			e->status, e->verification ? ", " : "",
			e->verification ? e->verification : "", e->wall);
		break;
	}
}


/*
 * A long step on one live line, hyperfine-style: what, how far, the
 * time it took and the time left ("checking 'DIR': 1200/5000 files
 * (24 %) · 0:03 elapsed · ~0:09 left"), at most ten times a second;
 * the line is cleared when the step ends. Only on a terminal: a command
 * installs it (cmd_progress_steps) when stderr is one and not --quiet.
 */
static void
step_line(const char *what, size_t done, size_t total, const char *unit)
{
	static char *current;
	static double started, drawn_at, after = -1;
	static int drawn;
	double now = mono_now(), el;
	char els[16], left[16];

	if (!current || strcmp(current, what)) {
		free(current);
		current = xstrdup(what);
		started = now;
		drawn_at = 0;
	}
	if (done >= total) {
		if (drawn)
			fputs("\r\033[K", stderr);
		drawn = 0;
		free(current);
		current = NULL;
		return;
	}
	/* a step over within half a second never draws, and a line is
	 * redrawn ten times a second at most ($SHIMBENCH_PROGRESS_AFTER:
	 * other seconds, 0 every step, for the tests) */
	if (after < 0) {
		const char *e = getenv("SHIMBENCH_PROGRESS_AFTER");

		after = e && *e ? atof(e) : 0.5;
	}
	if (now - started < after || now - drawn_at < (after < 0.1 ? after : 0.1))
		return;
	drawn_at = now;
	el = now - started;
	fmt_secs(els, sizeof(els), el);
	fprintf(stderr, "\r\033[K%s: %zu/%zu %s (%d %%) · %s elapsed", what,
		done, total, unit, (int)(100.0 * done / total), els);
	if (done > 0) {
		fmt_secs(left, sizeof(left), el * (double)(total - done) / done);
		fprintf(stderr, " · ~%s left", left);
	}
	fflush(stderr);
	drawn = 1;
}

void
cmd_progress_steps(const struct cmd_ctx *ctx)
{
	progress_hook = !ctx->quiet && isatty(2) ? step_line : NULL;
}

void
cmd_progress_fraction(char *out, size_t size, const char *what, size_t done,
		      size_t total, const char *unit, double started)
{
	double el = mono_now() - started;
	char els[16], left[16];
	int n;

	fmt_secs(els, sizeof(els), el);
	n = snprintf(out, size, "%s: %zu/%zu %s (%d %%) · %s elapsed", what,
		     done, total, unit, total ? (int)(100.0 * done / total) : 0,
		     els);
	if (done > 0 && el >= 1 && n > 0 && (size_t)n < size) {
		fmt_secs(left, sizeof(left), el * (double)(total - done) / done);
		snprintf(out + n, size - (size_t)n, " · ~%s left", left);
	}
}
