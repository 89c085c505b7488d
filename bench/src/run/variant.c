#define _POSIX_C_SOURCE 200809L
#include "run/variant.h"
#include "run/plan.h"
#include "run/target.h"
#include "run/transport.h"
#include "base/proc.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

const char **
variant_env(const struct plan_variant *v, int macos, char **inj)
{
	const char **env;
	size_t i, n = 0;

	for (i = 0; v->env_set[i]; i++)
		;
	env = xcalloc(i + 2, sizeof(char *));
	for (i = 0; v->env_set[i]; i++)
		env[n++] = v->env_set[i];
	*inj = NULL;
	if (v->inject_lib) {
		const char *var = macos ? "DYLD_INSERT_LIBRARIES" :
			"LD_PRELOAD";
		const char *old = getenv(var);
		*inj = v->inject_append && old && *old ?
			xstrfmt("%s=%s:%s", var, old, v->inject_lib) :
			xstrfmt("%s=%s", var, v->inject_lib);
		env[n++] = *inj;
	}
	env[n] = NULL;
	return env;
}

char *
variant_probe(const struct plan_variant *v, const struct plan_target *t,
	      int macos, size_t *len, struct buf *detail)
{
	struct transport_cmd tc = { 0 };
	struct proc pr = PROC_INIT;
	char *inj = NULL, *out = NULL;
	const char **env = variant_env(v, macos, &inj);

	*len = 0;
	if (transport_wrap(t, (const char *const *)v->probe_argv, env,
			   (const char *const *)v->env_unset, &tc) < 0) {
		buf_addf(detail, "probe: %s", error_last());
		goto cleanup;
	}
	pr.argv = (const char *const *)tc.argv;
	pr.env_set = (const char *const *)tc.env_set;
	pr.env_unset = (const char *const *)tc.env_unset;
	pr.hold_stdin = tc.hold_stdin;
	pr.timeout = 120;
	pr.mem_cap = 1u << 20;
	proc_run(&pr);
	target_cut_merged(&tc, &pr.out);
	if (pr.status != 0) {
		buf_addf(detail, "probe '%s' failed: ", v->probe_argv[0]);
		proc_describe(&pr, detail);
		goto cleanup;
	}
	*len = pr.out.len;
	out = xstrndup(pr.out.buf, pr.out.len);
	buf_addf(detail, "probe '%s' answered (%zu bytes)", v->probe_argv[0],
		 pr.out.len);
cleanup:
	proc_release(&pr);
	transport_cmd_free(&tc);
	free(env);
	free(inj);
	return out;
}
