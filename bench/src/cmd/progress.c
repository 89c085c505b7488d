#define _POSIX_C_SOURCE 200809L
#include "cmd/cmd.h"
#include "run/session.h"
#include "base/util.h"

#include <stdio.h>

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

