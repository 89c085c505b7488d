#define _POSIX_C_SOURCE 200809L
#include "evidence/derive.h"
#include "evidence/state.h"
#include "evidence/caps.h"
#include "evidence/hints.h"
#include "evidence/llamabench.h"
#include "evidence/mlxlm.h"
#include "evidence/runrec.h"
#include "base/json.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int
derive_results(struct run_data *rd)
{
	struct run_rec *r = &rd->r;
	const char *name = r->stdout_path ? r->stdout_path : "stdout";
	const char *text = r->stdout_text.p ? r->stdout_text.p : "";

	int rc;

	lb_output_release(&rd->lb);
	if (r->runtime && !strcmp(r->runtime, "mlx-lm"))
		rc = mlx_parse(text, r->stdout_text.n, name, &rd->lb);
	else
		rc = lb_parse(text, r->stdout_text.n, name, &rd->lb);
	/* When it was measured: llama-bench stamps every row. */
	if (rc == 0 && !rd->r.started_at && rd->lb.n &&
	    rd->lb.rows[0].test_time && *rd->lb.rows[0].test_time)
		rd->r.started_at = xstrdup(rd->lb.rows[0].test_time);
	return rc;
}

static int
blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
			return 0;
	return 1;
}

/*
 * The markers of expect_json (a JSON array of non-blank strings) into a
 * vector that borrows from *doc; -1 after error() when it is anything else.
 */
static int
markers_of(const struct run_rec *r, struct json **doc, const char ***out,
	   size_t *n)
{
	const struct json *it;
	const char *where = r->stdout_path ? r->stdout_path : "run";

	*doc = NULL;
	*out = NULL;
	*n = 0;
	if (!r->expect_json)
		return 0;
	*doc = json_parse(r->expect_json, strlen(r->expect_json), "expect");
	if (!*doc)
		return -1;
	if (json_type(*doc) == JSON_NULL)
		return 0;
	if (json_type(*doc) != JSON_ARRAY)
		return error("run '%s': 'expect' must be an array of markers",
			     where);
	*out = xcalloc(json_size(*doc) + 1, sizeof(char *));
	JSON_FOR_EACH(it, *doc) {
		const char *m = json_str(it);

		if (!m || blank(m))
			return error("run '%s': expect[%zu] is not a non-empty "
				     "marker: an empty marker would verify any "
				     "run", where, *n);
		(*out)[(*n)++] = m;
	}
	return 0;
}

int
derive_verification(struct run_data *rd)
{
	struct run_rec *r = &rd->r;
	struct buf detail = BUF_INIT, why = BUF_INIT;
	struct json *doc = NULL;
	const char **markers = NULL;
	const char *err = r->stderr_text.p ? r->stderr_text.p : "";
	size_t n = 0, k;
	int ok = 1, probe = 0, ret = -1, suspect;
	struct caps caps;

	caps_init(&caps);
	if (markers_of(r, &doc, &markers, &n) < 0)
		goto cleanup;
	if (r->probe_expect_json && strcmp(r->probe_expect_json, "null")) {
		if (r->probe_expect_json[0] != '{' ||
		    !strcmp(r->probe_expect_json, "{}")) {
			error("run '%s': 'probe_expect' must be a non-empty "
			      "object", r->stdout_path ? r->stdout_path : "");
			goto cleanup;
		}
		probe = 1;
	}
	/* the facts, once; the record keeps their JSON for the store */
	caps_read(err, r->stderr_text.n, &caps);
	if (r->probe_text.p)
		caps_add_probe(&caps, r->probe_text.p, r->probe_text.n);
	free(r->capabilities_json);
	r->capabilities_json = caps_to_json(&caps);
	free(r->verification);
	free(r->verification_detail);
	r->verification_detail = NULL;
	/* Capabilities beyond any Apple GPU are never a verified shim
	 * result, whatever the markers say; a run that expects nothing
	 * keeps "not-required" but says so. */
	suspect = caps_suspect(&caps, &why);
	if (suspect)
		buf_addf(&detail, "suspect profile: %s", why.buf);
	if (!n && !probe) {
		r->verification = xstrdup(verify_state_name(VERIFY_NOT_REQUIRED));
		if (suspect)
			r->verification_detail = buf_detach(&detail, NULL);
		ret = 0;
		goto cleanup;
	}
	if (suspect) {
		ok = 0;
		buf_adds(&detail, "; ");
	}
	if (n) {
		struct buf found = BUF_INIT;
		int markers_ok = caps_verify(err, r->stderr_text.n, markers, n,
					     &found);

		if (markers_ok) {
			buf_adds(&found, "found");
			for (k = 0; k < n; k++)
				buf_addf(&found, "%s'%s'", k ? ", " : " ",
					 markers[k]);
		} else if (caps_missing_markers(err, r->stderr_text.n, markers,
						n, NULL)) {
			hint_unverified(&found, r->env_json, &caps, markers, n,
					err, r->stderr_text.n);
		}
		buf_add(&detail, found.buf, found.len);
		buf_release(&found);
		ok = ok && markers_ok;
	}
	if (probe) {
		if (n)
			buf_adds(&detail, "; ");
		if (!r->probe_text.p) {
			buf_adds(&detail, "probe: no probe output recorded");
			ok = 0;
		} else if (caps_check_probe(r->probe_text.p, r->probe_text.n,
					    r->probe_expect_json, &detail) != 1) {
			ok = 0;
		}
	}
	r->verification = xstrdup(verify_state_name(ok ? VERIFY_VERIFIED :
						     VERIFY_UNVERIFIED));
	r->verification_detail = buf_detach(&detail, NULL);
	ret = 0;
cleanup:
	caps_release(&caps);
	free(markers);
	json_free(doc);
	buf_release(&detail);
	buf_release(&why);
	return ret;
}

void
derive_status(struct run_data *rd)
{
	struct run_rec *r = &rd->r;

	if (r->status && run_state_of(r->status) != RUN_STATE_OK)
		return;
	free(r->status);
	if (rd->lb.n == 0) {
		r->status = xstrdup(run_state_name(RUN_STATE_FAILED));
		if (!r->error)
			r->error = xstrdup("no results in the output");
	} else {
		r->status = xstrdup(run_state_name(rd->lb.incomplete ?
						   RUN_STATE_INCOMPLETE :
						   RUN_STATE_OK));
	}
}
